#include "vtpage/interop/vulkan_shader_module.hpp"

#include "vtpage/interop/vulkan_context.hpp"
#include "vtpage/interop/vulkan_error.hpp"

namespace vtpage {

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

}  // namespace vtpage
