// A shader module from SPIR-V words, named for validation messages and debuggers.
#pragma once

#include <cstdint>
#include <span>

#include "vtpage/interop/vulkan_handle.hpp"

namespace vtpage {

class VulkanContext;

// Throws vulkan_error (Errc::vulkan) naming `name` when the device refuses the module.
UniqueVkShaderModule make_shader_module(VulkanContext& context,
                                        std::span<const std::uint32_t> spirv, const char* name);

}  // namespace vtpage
