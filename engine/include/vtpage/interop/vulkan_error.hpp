// Vulkan results as vtpage errors: every failed call becomes a vtpage::Error carrying the
// result's name (VK_ERROR_OUT_OF_DEVICE_MEMORY...) and the portable code that fits it.
#pragma once

#include <vulkan/vulkan.h>

#include <string>
#include <string_view>

#include "vtpage/base/error.hpp"

namespace vtpage {

// "VK_ERROR_DEVICE_LOST" for a result; "VK_RESULT_<n>" for one this build does not know.
std::string vk_result_name(VkResult result);
// The portable code for a result: out_of_memory, not_supported, invalid_handle...
Errc errc_for(VkResult result) noexcept;

// Throws the Error for a failed call (result < 0); returns the result otherwise, so that
// callers can tell VK_SUCCESS from VK_TIMEOUT, VK_SUBOPTIMAL_KHR...
VkResult vk_check(VkResult result, std::string_view operation, std::string_view call,
                  std::string arguments = {});

}  // namespace vtpage
