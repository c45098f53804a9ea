#include "vtpage/interop/vulkan_error.hpp"

namespace vtpage {

std::string vk_result_name(VkResult result) {
    switch (result) {
#define VTPAGE_VK_RESULT(name) \
    case name:                 \
        return #name;
        VTPAGE_VK_RESULT(VK_SUCCESS)
        VTPAGE_VK_RESULT(VK_NOT_READY)
        VTPAGE_VK_RESULT(VK_TIMEOUT)
        VTPAGE_VK_RESULT(VK_EVENT_SET)
        VTPAGE_VK_RESULT(VK_EVENT_RESET)
        VTPAGE_VK_RESULT(VK_INCOMPLETE)
        VTPAGE_VK_RESULT(VK_ERROR_OUT_OF_HOST_MEMORY)
        VTPAGE_VK_RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY)
        VTPAGE_VK_RESULT(VK_ERROR_INITIALIZATION_FAILED)
        VTPAGE_VK_RESULT(VK_ERROR_DEVICE_LOST)
        VTPAGE_VK_RESULT(VK_ERROR_MEMORY_MAP_FAILED)
        VTPAGE_VK_RESULT(VK_ERROR_LAYER_NOT_PRESENT)
        VTPAGE_VK_RESULT(VK_ERROR_EXTENSION_NOT_PRESENT)
        VTPAGE_VK_RESULT(VK_ERROR_FEATURE_NOT_PRESENT)
        VTPAGE_VK_RESULT(VK_ERROR_INCOMPATIBLE_DRIVER)
        VTPAGE_VK_RESULT(VK_ERROR_TOO_MANY_OBJECTS)
        VTPAGE_VK_RESULT(VK_ERROR_FORMAT_NOT_SUPPORTED)
        VTPAGE_VK_RESULT(VK_ERROR_FRAGMENTED_POOL)
        VTPAGE_VK_RESULT(VK_ERROR_UNKNOWN)
        VTPAGE_VK_RESULT(VK_ERROR_OUT_OF_POOL_MEMORY)
        VTPAGE_VK_RESULT(VK_ERROR_INVALID_EXTERNAL_HANDLE)
        VTPAGE_VK_RESULT(VK_ERROR_FRAGMENTATION)
        VTPAGE_VK_RESULT(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
        VTPAGE_VK_RESULT(VK_PIPELINE_COMPILE_REQUIRED)
        VTPAGE_VK_RESULT(VK_ERROR_SURFACE_LOST_KHR)
        VTPAGE_VK_RESULT(VK_ERROR_NATIVE_WINDOW_IN_USE_KHR)
        VTPAGE_VK_RESULT(VK_SUBOPTIMAL_KHR)
        VTPAGE_VK_RESULT(VK_ERROR_OUT_OF_DATE_KHR)
        VTPAGE_VK_RESULT(VK_ERROR_INCOMPATIBLE_DISPLAY_KHR)
        VTPAGE_VK_RESULT(VK_ERROR_VALIDATION_FAILED_EXT)
        VTPAGE_VK_RESULT(VK_ERROR_INVALID_SHADER_NV)
        VTPAGE_VK_RESULT(VK_ERROR_NOT_PERMITTED_KHR)
        VTPAGE_VK_RESULT(VK_THREAD_IDLE_KHR)
        VTPAGE_VK_RESULT(VK_THREAD_DONE_KHR)
        VTPAGE_VK_RESULT(VK_OPERATION_DEFERRED_KHR)
        VTPAGE_VK_RESULT(VK_OPERATION_NOT_DEFERRED_KHR)
#undef VTPAGE_VK_RESULT
        default:
            return detail::concat("VK_RESULT_", static_cast<int>(result));
    }
}

Errc errc_for(VkResult result) noexcept {
    switch (result) {
        case VK_ERROR_OUT_OF_HOST_MEMORY:
        case VK_ERROR_OUT_OF_DEVICE_MEMORY:
        case VK_ERROR_OUT_OF_POOL_MEMORY:
        case VK_ERROR_FRAGMENTED_POOL:
        case VK_ERROR_FRAGMENTATION:
        case VK_ERROR_TOO_MANY_OBJECTS:
            return Errc::out_of_memory;
        case VK_ERROR_LAYER_NOT_PRESENT:
        case VK_ERROR_EXTENSION_NOT_PRESENT:
        case VK_ERROR_FEATURE_NOT_PRESENT:
        case VK_ERROR_FORMAT_NOT_SUPPORTED:
            return Errc::not_supported;
        case VK_ERROR_INCOMPATIBLE_DRIVER:
        case VK_ERROR_INITIALIZATION_FAILED:
        case VK_ERROR_DEVICE_LOST:
        case VK_ERROR_SURFACE_LOST_KHR:
            return Errc::device_unavailable;
        case VK_ERROR_INVALID_EXTERNAL_HANDLE:
        case VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS:
            return Errc::invalid_handle;
        case VK_ERROR_MEMORY_MAP_FAILED:
            return Errc::access_denied;
        case VK_ERROR_NATIVE_WINDOW_IN_USE_KHR:
            return Errc::busy;
        default:
            return Errc::backend_failure;
    }
}

VkResult vk_check(VkResult result, std::string_view operation, std::string_view call,
                  std::string arguments) {
    if (result >= 0) return result;
    throw Error(errc_for(result), std::string(operation), detail::concat(call, " failed"),
                std::move(arguments), result, vk_result_name(result));
}

}  // namespace vtpage
