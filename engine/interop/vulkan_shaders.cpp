#include "vulkan_shaders.hpp"

#include "vtpage/interop/vulkan_context.hpp"
#include "vtpage/interop/vulkan_error.hpp"

namespace vtpage::interop_detail {

namespace {
// glslc -mfmt=num writes the words as a comma-separated list.
constexpr std::uint32_t ground_plane_vert[] = {
#include "ground_plane.vert.spv.inc"
};
constexpr std::uint32_t ground_plane_frag[] = {
#include "ground_plane.frag.spv.inc"
};
constexpr std::uint32_t ground_plane_feedback_frag[] = {
#include "ground_plane_feedback.frag.spv.inc"
};
constexpr std::uint32_t indirection_scatter_comp[] = {
#include "indirection_scatter.comp.spv.inc"
};
}  // namespace

std::span<const std::uint32_t> ground_plane_vertex_spirv() {
    return ground_plane_vert;
}
std::span<const std::uint32_t> ground_plane_fragment_spirv() {
    return ground_plane_frag;
}
std::span<const std::uint32_t> ground_plane_feedback_fragment_spirv() {
    return ground_plane_feedback_frag;
}
std::span<const std::uint32_t> indirection_scatter_compute_spirv() {
    return indirection_scatter_comp;
}

UniqueVkShaderModule make_shader_module(VulkanContext& context,
                                        std::span<const std::uint32_t> spirv, const char* name) {
    VkShaderModuleCreateInfo create{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    create.codeSize = spirv.size_bytes();
    create.pCode = spirv.data();
    VkShaderModule module = VK_NULL_HANDLE;
    vk_check(vkCreateShaderModule(context.device(), &create, nullptr, &module),
             "make_shader_module", "vkCreateShaderModule", name);
    context.set_name(VK_OBJECT_TYPE_SHADER_MODULE, reinterpret_cast<std::uint64_t>(module), name);
    return UniqueVkShaderModule(context.device(), module);
}

}  // namespace vtpage::interop_detail
