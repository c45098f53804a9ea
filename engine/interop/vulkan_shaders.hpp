// The SPIR-V of the shaders in shaders/, compiled by glslc at build time and embedded here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "vtpage/interop/vulkan_handle.hpp"

namespace vtpage {

class VulkanContext;

namespace interop_detail {

std::span<const std::uint32_t> ground_plane_vertex_spirv();
std::span<const std::uint32_t> ground_plane_fragment_spirv();
std::span<const std::uint32_t> ground_plane_feedback_fragment_spirv();
std::span<const std::uint32_t> indirection_scatter_compute_spirv();

UniqueVkShaderModule make_shader_module(VulkanContext& context,
                                        std::span<const std::uint32_t> spirv, const char* name);

}  // namespace interop_detail
}  // namespace vtpage
