// The Vulkan instance, the physical device, the logical device and its one queue, headless by
// default: what every other Vulkan class of vtpage is built on.
//
//   VulkanContext context(VulkanContextSettings::for_backend(backend));
//
// for_backend() asks for what the backend's pages need to enter Vulkan: on the cuda backend the
// device whose UUID is the CUDA device's, with VK_KHR_external_memory_fd (pages come in as
// OPAQUE_FD) and VK_KHR_external_semaphore_fd (CUDA signals a timeline semaphore); on the host
// backend VK_EXT_external_memory_host (a page's window comes in as a host pointer). Every
// device must offer Vulkan 1.3 with buffer device address, shaderInt64, timeline semaphores,
// dynamic rendering and synchronization2 (lavapipe and NVIDIA both do): the shaders reach
// physical pages through 64-bit buffer device addresses.
//
// Debug utils: VK_EXT_debug_utils is enabled where the instance offers it (debug_labels), so that
// vtpage's objects carry names, its command buffers labelled regions and its submissions queue
// labels, for validation messages, RenderDoc and Nsight. Without it (or on an adopted device,
// whose instance is the app's) names and labels are no-ops.
//
// Validation: with the Khronos validation layer on, a debug messenger counts every message by
// severity and routes it to the log (errors as errors, warnings as warnings, the rest as debug).
//
// The queue is shared: submit() and present() lock it, so several threads may submit.
//
// An app with a device of its own adopts it instead (nothing is created, nothing destroyed):
//
//   VulkanContext context(app_handles, vulkan_device_requirements(backend));
//
// and every interop class then works on the app's device and queue (vulkan_device_handles.hpp
// says what the app must enable). handles() gives the struct for either kind of context.
#pragma once

#include <vulkan/vulkan.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vtpage/base/log.hpp"
#include "vtpage/interop/vulkan_device_handles.hpp"

namespace vtpage {

class Backend;

enum class ValidationMode {
    off,
    if_available,  // on where the layer is installed (VK_LAYER_PATH or the system's)
    required,      // not_supported when the layer cannot be found
};

using DeviceUuid = std::array<std::uint8_t, 16>;

struct VulkanContextSettings {
    std::string application_name = "vtpage";
    ValidationMode validation = ValidationMode::off;
    // With validation on: also check synchronization (hazards between commands and submissions).
    bool synchronization_validation = false;
    // Also count and log info and verbose messages (loader and layer chatter); off: only
    // warnings and errors reach the messenger.
    bool report_info_messages = false;
    // Enable VK_EXT_debug_utils where offered: object names and labels (see above).
    bool debug_labels = true;
    // Extra instance extensions, e.g. those glfwGetRequiredInstanceExtensions() names.
    std::vector<std::string> instance_extensions;
    // Makes the window surface once the instance exists (e.g. glfwCreateWindowSurface). With
    // one, the context picks a queue that presents to it, enables VK_KHR_swapchain and destroys
    // the surface when it goes.
    std::function<VkSurfaceKHR(VkInstance)> create_surface;
    // The device with this VkPhysicalDeviceIDProperties::deviceUUID (the CUDA device's);
    // device_unavailable when no device has it.
    std::optional<DeviceUuid> device_uuid;
    // Otherwise the first device whose name contains this; empty: a discrete GPU first, then an
    // integrated one, then any.
    std::string device_name;
    // Device extensions that must be present (device_unavailable otherwise); each is enabled
    // where the device has it even when not required.
    bool require_host_pointer_import = false;  // VK_EXT_external_memory_host
    bool require_fd_import = false;            // VK_KHR_external_memory_fd
    bool require_semaphore_fd = false;         // VK_KHR_external_semaphore_fd
    Log log;

    // Settings asking for what `backend`'s pages need (see above), starting from `base`.
    static VulkanContextSettings for_backend(const Backend& backend, VulkanContextSettings base);
    static VulkanContextSettings for_backend(const Backend& backend);
};

// Messages the debug messenger received, by severity.
struct ValidationMessageCounts {
    std::uint64_t verbose = 0;
    std::uint64_t info = 0;
    std::uint64_t warnings = 0;
    std::uint64_t errors = 0;
    std::uint64_t total() const { return verbose + info + warnings + errors; }
};

// Extension entry points, resolved when the context is made (null where not enabled).
struct VulkanExtensionFunctions {
    PFN_vkGetMemoryFdKHR get_memory_fd = nullptr;
    PFN_vkGetMemoryFdPropertiesKHR get_memory_fd_properties = nullptr;
    PFN_vkGetMemoryHostPointerPropertiesEXT get_memory_host_pointer_properties = nullptr;
    PFN_vkGetSemaphoreFdKHR get_semaphore_fd = nullptr;
    PFN_vkImportSemaphoreFdKHR import_semaphore_fd = nullptr;
    PFN_vkSetDebugUtilsObjectNameEXT set_object_name = nullptr;
    PFN_vkCmdBeginDebugUtilsLabelEXT begin_command_label = nullptr;
    PFN_vkCmdEndDebugUtilsLabelEXT end_command_label = nullptr;
    PFN_vkQueueBeginDebugUtilsLabelEXT begin_queue_label = nullptr;
    PFN_vkQueueEndDebugUtilsLabelEXT end_queue_label = nullptr;
};

class VulkanContext {
public:
    // device_unavailable where there is no Vulkan driver or no device fits (the message says
    // why each device was passed over); not_supported where validation is required and the
    // layer is missing.
    explicit VulkanContext(VulkanContextSettings settings = {});
    // Adopts an app's device: not_supported naming what the device was created without (or
    // when it is not Vulkan 1.3), invalid_argument for a null handle or, on cuda, a device that
    // is not the CUDA device. Validation is the app's: validation_enabled() is false.
    VulkanContext(const VulkanDeviceHandles& app_device,
                  const VulkanDeviceRequirements& requirements, Log log = {});
    // Waits for the device to be idle, then destroys everything in order (an adopted device:
    // nothing, the app destroys it after every vtpage object made on it).
    ~VulkanContext();
    VulkanContext(const VulkanContext&) = delete;
    VulkanContext& operator=(const VulkanContext&) = delete;

    VkInstance instance() const noexcept;
    VkPhysicalDevice physical_device() const noexcept;
    VkDevice device() const noexcept;
    VkQueue queue() const noexcept;
    std::uint32_t queue_family() const noexcept;
    VkSurfaceKHR surface() const noexcept;  // VK_NULL_HANDLE when headless
    // The handles, the queue family, what the device was created with, the queue lock.
    VulkanDeviceHandles handles() const;
    bool adopted() const noexcept;  // made from an app's handles
    const VulkanExtensionFunctions& functions() const noexcept;
    const Log& log() const noexcept;

    const VkPhysicalDeviceProperties& properties() const noexcept;
    std::string device_name() const;
    std::string driver_info() const;  // VkPhysicalDeviceDriverProperties::driverInfo
    DeviceUuid device_uuid() const noexcept;
    bool is_cpu() const noexcept;  // a software device (lavapipe)

    bool validation_enabled() const noexcept;
    ValidationMessageCounts validation_messages() const noexcept;
    // Warnings and errors since the context was made: what tests expect to stay 0.
    std::uint64_t validation_problems() const noexcept;

    bool supports_host_pointer_import() const noexcept;
    bool supports_fd_import() const noexcept;
    bool supports_semaphore_fd() const noexcept;
    // samplerAnisotropy, enabled on vtpage's own device where offered (the app's: as it was
    // created): VkSamplers with anisotropyEnable may be made.
    bool supports_sampler_anisotropy() const noexcept;
    // textureCompressionBC, enabled on vtpage's own device where offered (the app's: as it was
    // created): images in the BC formats may be sampled.
    bool supports_texture_compression_bc() const noexcept;
    // VkPhysicalDeviceExternalMemoryHostPropertiesEXT::minImportedHostPointerAlignment (0 when
    // host pointer import is not enabled).
    VkDeviceSize host_pointer_alignment() const noexcept;

    // A memory type in type_bits with `required` properties, `preferred` ones where possible;
    // not_supported when there is none.
    std::uint32_t memory_type(std::uint32_t type_bits, VkMemoryPropertyFlags required,
                              VkMemoryPropertyFlags preferred = 0) const;

    // Thread-safe queue access. A queue label, where given, surrounds the submission.
    void submit(const VkSubmitInfo2& submit, VkFence fence = VK_NULL_HANDLE,
                const char* queue_label = nullptr);
    // Several batches in one vkQueueSubmit2, in order (one call instead of one a batch).
    void submit(std::span<const VkSubmitInfo2> batches, VkFence fence = VK_NULL_HANDLE,
                const char* queue_label = nullptr);
    VkResult present(const VkPresentInfoKHR& present);  // OUT_OF_DATE and SUBOPTIMAL returned
    void wait_idle();
    // Waits until everything submitted to the queue so far has finished, holding the queue lock
    // only to submit a marker (an empty batch signalling a timeline of the context's): other
    // threads go on submitting meanwhile, unlike wait_idle. busy when that takes longer than
    // `timeout`.
    void wait_for_submitted(std::chrono::milliseconds timeout = std::chrono::seconds(10));
    // Records commands, submits them and waits for them: for set-up and tests, not per frame.
    void run_commands(const std::function<void(VkCommandBuffer)>& record);

    // Names an object for validation messages and debuggers (no-op without debug utils).
    void set_name(VkObjectType type, std::uint64_t handle, const char* name) const;
    // A labelled region of a command buffer (no-ops without debug utils); VulkanCommandLabel
    // pairs them.
    void begin_label(VkCommandBuffer commands, const char* name) const;
    void end_label(VkCommandBuffer commands) const;
    bool debug_labels_enabled() const noexcept;

private:
    // wait_for_submitted's timeline semaphore (made by the constructors; later calls hold the
    // queue lock).
    VkSemaphore submitted_marker_nolock();
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace vtpage
