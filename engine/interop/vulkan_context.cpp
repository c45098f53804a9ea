#include "vtpage/interop/vulkan_context.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <type_traits>

#include "vtpage/backend/backend.hpp"
#include "vtpage/interop/vulkan_error.hpp"
#include "vtpage/interop/vulkan_handle.hpp"

namespace vtpage {

namespace {

constexpr const char* validation_layer = "VK_LAYER_KHRONOS_validation";
constexpr std::uint32_t required_api = VK_API_VERSION_1_3;

std::string version_text(std::uint32_t version) {
    return detail::concat(VK_API_VERSION_MAJOR(version), ".", VK_API_VERSION_MINOR(version), ".",
                          VK_API_VERSION_PATCH(version));
}

bool has_extension(const std::vector<VkExtensionProperties>& extensions, const char* name) {
    return std::any_of(extensions.begin(), extensions.end(), [&](const VkExtensionProperties& e) {
        return std::strcmp(e.extensionName, name) == 0;
    });
}

std::vector<VkExtensionProperties> device_extensions(VkPhysicalDevice device) {
    std::uint32_t count = 0;
    vk_check(vkEnumerateDeviceExtensionProperties(device, nullptr, &count, nullptr),
             "VulkanContext", "vkEnumerateDeviceExtensionProperties");
    std::vector<VkExtensionProperties> extensions(count);
    vk_check(vkEnumerateDeviceExtensionProperties(device, nullptr, &count, extensions.data()),
             "VulkanContext", "vkEnumerateDeviceExtensionProperties");
    extensions.resize(count);
    return extensions;
}

// What one physical device offers, and why it does not fit (empty when it does).
struct Candidate {
    VkPhysicalDevice device = VK_NULL_HANDLE;
    VkPhysicalDeviceProperties properties{};
    VkPhysicalDeviceDriverProperties driver{};
    DeviceUuid uuid{};
    std::uint32_t queue_family = 0;
    bool host_pointer = false;
    bool fd = false;
    bool semaphore_fd = false;
    bool swapchain = false;
    bool sampler_anisotropy = false;            // optional: enabled where offered
    bool texture_compression_bc = false;        // optional: enabled where offered
    bool sampled_image_array_indexing = false;  // optional: arrays of samplers indexed at run time
    std::string rejection;
};

Candidate examine(VkPhysicalDevice device, const VulkanContextSettings& settings,
                  VkSurfaceKHR surface) {
    Candidate candidate;
    candidate.device = device;
    VkPhysicalDeviceIDProperties id{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
    candidate.driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
    candidate.driver.pNext = &id;
    VkPhysicalDeviceProperties2 properties{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                           &candidate.driver};
    vkGetPhysicalDeviceProperties2(device, &properties);
    candidate.properties = properties.properties;
    std::copy(std::begin(id.deviceUUID), std::end(id.deviceUUID), candidate.uuid.begin());

    std::vector<std::string> missing;
    if (candidate.properties.apiVersion < required_api) {
        missing.push_back("Vulkan 1.3 (it has " + version_text(candidate.properties.apiVersion) +
                          ")");
        candidate.rejection = "lacks " + missing.front();
        return candidate;
    }
    VkPhysicalDeviceVulkan13Features features13{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    VkPhysicalDeviceVulkan12Features features12{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &features13};
    VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &features12};
    vkGetPhysicalDeviceFeatures2(device, &features);
    if (!features12.bufferDeviceAddress) missing.push_back("bufferDeviceAddress");
    if (!features12.timelineSemaphore) missing.push_back("timelineSemaphore");
    if (!features.features.shaderInt64) missing.push_back("shaderInt64");
    if (!features13.dynamicRendering) missing.push_back("dynamicRendering");
    if (!features13.synchronization2) missing.push_back("synchronization2");
    candidate.sampler_anisotropy = features.features.samplerAnisotropy;
    candidate.texture_compression_bc = features.features.textureCompressionBC;
    candidate.sampled_image_array_indexing =
        features.features.shaderSampledImageArrayDynamicIndexing;

    const auto extensions = device_extensions(device);
    candidate.host_pointer = has_extension(extensions, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
    candidate.fd = has_extension(extensions, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME);
    candidate.semaphore_fd = has_extension(extensions, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);
    candidate.swapchain = has_extension(extensions, VK_KHR_SWAPCHAIN_EXTENSION_NAME);
    if (settings.require_host_pointer_import && !candidate.host_pointer) {
        missing.push_back(VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
    }
    if (settings.require_fd_import && !candidate.fd) {
        missing.push_back(VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME);
    }
    if (settings.require_semaphore_fd && !candidate.semaphore_fd) {
        missing.push_back(VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);
    }
    if (surface && !candidate.swapchain) missing.push_back(VK_KHR_SWAPCHAIN_EXTENSION_NAME);

    std::uint32_t family_count = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(device, &family_count, nullptr);
    std::vector<VkQueueFamilyProperties> families(family_count);
    vkGetPhysicalDeviceQueueFamilyProperties(device, &family_count, families.data());
    bool found_queue = false;
    const VkQueueFlags wanted = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT;
    for (std::uint32_t family = 0; family < family_count && !found_queue; ++family) {
        if ((families[family].queueFlags & wanted) != wanted) continue;
        if (surface) {
            VkBool32 presents = VK_FALSE;
            vk_check(vkGetPhysicalDeviceSurfaceSupportKHR(device, family, surface, &presents),
                     "VulkanContext", "vkGetPhysicalDeviceSurfaceSupportKHR");
            if (!presents) continue;
        }
        candidate.queue_family = family;
        found_queue = true;
    }
    if (!found_queue) {
        missing.push_back(surface ? "a graphics + compute queue that presents to the surface"
                                  : "a graphics + compute queue");
    }
    if (!missing.empty()) {
        candidate.rejection = "lacks";
        for (std::size_t i = 0; i < missing.size(); ++i) {
            candidate.rejection += (i ? ", " : " ") + missing[i];
        }
    }
    return candidate;
}

int type_rank(VkPhysicalDeviceType type) {
    switch (type) {
        case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
            return 0;
        case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
            return 1;
        case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
            return 2;
        case VK_PHYSICAL_DEVICE_TYPE_CPU:
            return 3;
        default:
            return 4;
    }
}

std::string uuid_text(const DeviceUuid& uuid) {
    static const char digits[] = "0123456789abcdef";
    std::string text;
    for (std::size_t i = 0; i < uuid.size(); ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) text += '-';
        text += digits[uuid[i] >> 4];
        text += digits[uuid[i] & 15];
    }
    return text;
}

}  // namespace

struct VulkanContext::State {
    VulkanContextSettings settings;
    VkInstance instance = VK_NULL_HANDLE;
    VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
    PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger = nullptr;
    VkSurfaceKHR surface = VK_NULL_HANDLE;
    VkDevice device = VK_NULL_HANDLE;
    VkQueue queue = VK_NULL_HANDLE;
    Candidate chosen;
    VkPhysicalDeviceMemoryProperties memory{};
    VkDeviceSize host_pointer_alignment = 0;
    bool validation = false;
    bool debug_utils = false;  // VK_EXT_debug_utils enabled on our instance
    VulkanExtensionFunctions functions;
    std::atomic<std::uint64_t> verbose{0}, info{0}, warnings{0}, errors{0};
    std::mutex queue_mutex;
    std::mutex* queue_lock = &queue_mutex;  // the app's, when it gives one
    bool owns = true;                       // false: an adopted device
    std::vector<std::string> enabled_extensions;
    // wait_for_submitted's timeline, made by the constructors; the value is guarded by the
    // queue lock.
    VkSemaphore submitted_marker = VK_NULL_HANDLE;
    std::uint64_t submitted_value = 0;

    ~State() {
        if (submitted_marker) {  // ours, also on an adopted device: once its last signal is done
            VkSemaphoreWaitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
            wait.semaphoreCount = 1;
            wait.pSemaphores = &submitted_marker;
            wait.pValues = &submitted_value;
            vkWaitSemaphores(device, &wait, 10'000'000'000ull);
            vkDestroySemaphore(device, submitted_marker, nullptr);
        }
        if (!owns) return;
        if (device) {
            vkDeviceWaitIdle(device);
            vkDestroyDevice(device, nullptr);
        }
        if (surface) vkDestroySurfaceKHR(instance, surface, nullptr);
        if (messenger) destroy_messenger(instance, messenger, nullptr);
        if (instance) vkDestroyInstance(instance, nullptr);
    }

    static VKAPI_ATTR VkBool32 VKAPI_CALL
    on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT,
               const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
        auto& state = *static_cast<State*>(user);
        const char* text = data && data->pMessage ? data->pMessage : "(no message)";
        if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
            state.errors.fetch_add(1, std::memory_order_relaxed);
            state.settings.log.error("vulkan: ", text);
        } else if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
            state.warnings.fetch_add(1, std::memory_order_relaxed);
            state.settings.log.warning("vulkan: ", text);
        } else if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT) {
            state.info.fetch_add(1, std::memory_order_relaxed);
            state.settings.log.debug("vulkan: ", text);
        } else {
            state.verbose.fetch_add(1, std::memory_order_relaxed);
            state.settings.log.debug("vulkan: ", text);
        }
        return VK_FALSE;  // never abort the call that produced the message
    }

    VkDebugUtilsMessengerCreateInfoEXT messenger_info() {
        VkDebugUtilsMessengerCreateInfoEXT info_struct{
            VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
        info_struct.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                                      VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
        if (settings.report_info_messages) {
            info_struct.messageSeverity |= VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT |
                                           VK_DEBUG_UTILS_MESSAGE_SEVERITY_VERBOSE_BIT_EXT;
        }
        info_struct.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                                  VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                                  VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
        info_struct.pfnUserCallback = &State::on_message;
        info_struct.pUserData = this;
        return info_struct;
    }

    void create_instance();
    void choose_device();
    void create_device();
    void load_functions();
    void adopt(const VulkanDeviceHandles& app, const VulkanDeviceRequirements& requirements);
};

void VulkanContext::State::create_instance() {
    std::uint32_t loader_version = 0;
    if (vkEnumerateInstanceVersion(&loader_version) != VK_SUCCESS ||
        loader_version < required_api) {
        throw Error(Errc::device_unavailable, "VulkanContext",
                    "the Vulkan loader offers " + version_text(loader_version) + "; 1.3 is needed");
    }
    if (settings.validation != ValidationMode::off) {
        std::uint32_t count = 0;
        vk_check(vkEnumerateInstanceLayerProperties(&count, nullptr), "VulkanContext",
                 "vkEnumerateInstanceLayerProperties");
        std::vector<VkLayerProperties> layers(count);
        vk_check(vkEnumerateInstanceLayerProperties(&count, layers.data()), "VulkanContext",
                 "vkEnumerateInstanceLayerProperties");
        validation = std::any_of(layers.begin(), layers.begin() + count, [](const auto& layer) {
            return std::strcmp(layer.layerName, validation_layer) == 0;
        });
        if (!validation && settings.validation == ValidationMode::required) {
            throw Error(Errc::not_supported, "VulkanContext",
                        std::string(validation_layer) +
                            " is not installed: install the Khronos validation layers or point "
                            "VK_LAYER_PATH at a folder with VkLayer_khronos_validation.json");
        }
        if (!validation) settings.log.warning("vulkan: validation asked for, layer not found");
    }

    std::vector<const char*> extensions;
    for (const std::string& name : settings.instance_extensions) extensions.push_back(name.c_str());
    debug_utils = validation;
    if (!validation && settings.debug_labels) {
        std::uint32_t count = 0;
        vk_check(vkEnumerateInstanceExtensionProperties(nullptr, &count, nullptr), "VulkanContext",
                 "vkEnumerateInstanceExtensionProperties");
        std::vector<VkExtensionProperties> offered(count);
        vk_check(vkEnumerateInstanceExtensionProperties(nullptr, &count, offered.data()),
                 "VulkanContext", "vkEnumerateInstanceExtensionProperties");
        offered.resize(count);
        debug_utils = has_extension(offered, VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    }
    const bool asked = std::any_of(extensions.begin(), extensions.end(), [](const char* name) {
        return std::strcmp(name, VK_EXT_DEBUG_UTILS_EXTENSION_NAME) == 0;
    });
    if (debug_utils && !asked) extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    bool validation_features = false;
    if (validation && settings.synchronization_validation) {
        std::uint32_t count = 0;
        vk_check(vkEnumerateInstanceExtensionProperties(validation_layer, &count, nullptr),
                 "VulkanContext", "vkEnumerateInstanceExtensionProperties");
        std::vector<VkExtensionProperties> offered(count);
        vk_check(vkEnumerateInstanceExtensionProperties(validation_layer, &count, offered.data()),
                 "VulkanContext", "vkEnumerateInstanceExtensionProperties");
        offered.resize(count);
        validation_features = has_extension(offered, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
        if (validation_features) {
            extensions.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
        } else {
            settings.log.warning("vulkan: the validation layer cannot check synchronization");
        }
    }
    std::vector<const char*> layers;
    if (validation) layers.push_back(validation_layer);

    VkApplicationInfo application{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    application.pApplicationName = settings.application_name.c_str();
    application.pEngineName = "vtpage";
    application.apiVersion = required_api;
    VkInstanceCreateInfo create{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    create.pApplicationInfo = &application;
    create.enabledLayerCount = static_cast<std::uint32_t>(layers.size());
    create.ppEnabledLayerNames = layers.data();
    create.enabledExtensionCount = static_cast<std::uint32_t>(extensions.size());
    create.ppEnabledExtensionNames = extensions.data();
    // Messages from vkCreateInstance / vkDestroyInstance themselves.
    VkDebugUtilsMessengerCreateInfoEXT instance_messenger = messenger_info();
    if (validation) create.pNext = &instance_messenger;
    const VkValidationFeatureEnableEXT enabled_features[] = {
        VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
    VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
    features.enabledValidationFeatureCount = 1;
    features.pEnabledValidationFeatures = enabled_features;
    if (validation_features) {
        features.pNext = create.pNext;
        create.pNext = &features;
    }
    const VkResult result = vkCreateInstance(&create, nullptr, &instance);
    if (result == VK_ERROR_INCOMPATIBLE_DRIVER) {
        throw Error(Errc::device_unavailable, "VulkanContext", "no Vulkan driver offers 1.3", {},
                    result, vk_result_name(result));
    }
    vk_check(result, "VulkanContext", "vkCreateInstance");

    if (validation) {
        auto create_messenger = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
            vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
        destroy_messenger = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
            vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
        if (!create_messenger || !destroy_messenger) {
            throw Error(Errc::not_supported, "VulkanContext",
                        "VK_EXT_debug_utils has no entry points");
        }
        VkDebugUtilsMessengerCreateInfoEXT info_struct = messenger_info();
        vk_check(create_messenger(instance, &info_struct, nullptr, &messenger), "VulkanContext",
                 "vkCreateDebugUtilsMessengerEXT");
    }
    if (settings.create_surface) {
        surface = settings.create_surface(instance);
        if (!surface) {
            throw Error(Errc::device_unavailable, "VulkanContext",
                        "create_surface gave no surface");
        }
    }
}

void VulkanContext::State::choose_device() {
    std::uint32_t count = 0;
    vk_check(vkEnumeratePhysicalDevices(instance, &count, nullptr), "VulkanContext",
             "vkEnumeratePhysicalDevices");
    std::vector<VkPhysicalDevice> devices(count);
    vk_check(vkEnumeratePhysicalDevices(instance, &count, devices.data()), "VulkanContext",
             "vkEnumeratePhysicalDevices");
    devices.resize(count);
    if (devices.empty()) {
        throw Error(Errc::device_unavailable, "VulkanContext", "no Vulkan device");
    }
    std::vector<Candidate> fitting;
    std::string passed_over;
    for (VkPhysicalDevice device : devices) {
        Candidate candidate = examine(device, settings, surface);
        const std::string name = candidate.properties.deviceName;
        if (candidate.rejection.empty() && settings.device_uuid &&
            candidate.uuid != *settings.device_uuid) {
            candidate.rejection = "has UUID " + uuid_text(candidate.uuid);
        }
        if (candidate.rejection.empty() && !settings.device_uuid && !settings.device_name.empty() &&
            name.find(settings.device_name) == std::string::npos) {
            candidate.rejection = "is not named like '" + settings.device_name + "'";
        }
        if (candidate.rejection.empty()) {
            fitting.push_back(candidate);
        } else {
            passed_over += "; " + name + " " + candidate.rejection;
        }
    }
    if (fitting.empty()) {
        std::string wanted = settings.device_uuid
                                 ? "the device with UUID " + uuid_text(*settings.device_uuid)
                                 : std::string("a device");
        throw Error(Errc::device_unavailable, "VulkanContext",
                    "no Vulkan device fits: wanted " + wanted + passed_over);
    }
    std::stable_sort(fitting.begin(), fitting.end(), [](const Candidate& a, const Candidate& b) {
        return type_rank(a.properties.deviceType) < type_rank(b.properties.deviceType);
    });
    chosen = fitting.front();
    vkGetPhysicalDeviceMemoryProperties(chosen.device, &memory);
}

void VulkanContext::State::create_device() {
    std::vector<const char*> extensions;
    if (chosen.host_pointer) {
        extensions.push_back(VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
    }
    if (chosen.fd) extensions.push_back(VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME);
    if (chosen.semaphore_fd) extensions.push_back(VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);
    if (surface) extensions.push_back(VK_KHR_SWAPCHAIN_EXTENSION_NAME);

    VkPhysicalDeviceVulkan13Features features13{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    features13.dynamicRendering = VK_TRUE;
    features13.synchronization2 = VK_TRUE;
    VkPhysicalDeviceVulkan12Features features12{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &features13};
    features12.bufferDeviceAddress = VK_TRUE;
    features12.timelineSemaphore = VK_TRUE;
    VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &features12};
    features.features.shaderInt64 = VK_TRUE;
    features.features.samplerAnisotropy = chosen.sampler_anisotropy ? VK_TRUE : VK_FALSE;
    features.features.textureCompressionBC = chosen.texture_compression_bc ? VK_TRUE : VK_FALSE;
    features.features.shaderSampledImageArrayDynamicIndexing =
        chosen.sampled_image_array_indexing ? VK_TRUE : VK_FALSE;

    const float priority = 1.0f;
    VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    queue_info.queueFamilyIndex = chosen.queue_family;
    queue_info.queueCount = 1;
    queue_info.pQueuePriorities = &priority;
    VkDeviceCreateInfo create{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &features};
    create.queueCreateInfoCount = 1;
    create.pQueueCreateInfos = &queue_info;
    create.enabledExtensionCount = static_cast<std::uint32_t>(extensions.size());
    create.ppEnabledExtensionNames = extensions.data();
    vk_check(vkCreateDevice(chosen.device, &create, nullptr, &device), "VulkanContext",
             "vkCreateDevice", chosen.properties.deviceName);
    vkGetDeviceQueue(device, chosen.queue_family, 0, &queue);
    enabled_extensions.assign(extensions.begin(), extensions.end());
    load_functions();
}

void VulkanContext::State::load_functions() {
    auto load = [&](auto& pointer, const char* name) {
        pointer = reinterpret_cast<std::remove_reference_t<decltype(pointer)>>(
            vkGetDeviceProcAddr(device, name));
    };
    if (chosen.fd) {
        load(functions.get_memory_fd, "vkGetMemoryFdKHR");
        load(functions.get_memory_fd_properties, "vkGetMemoryFdPropertiesKHR");
    }
    if (chosen.host_pointer) {
        load(functions.get_memory_host_pointer_properties, "vkGetMemoryHostPointerPropertiesEXT");
        VkPhysicalDeviceExternalMemoryHostPropertiesEXT host{
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT};
        VkPhysicalDeviceProperties2 properties{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                               &host};
        vkGetPhysicalDeviceProperties2(chosen.device, &properties);
        host_pointer_alignment = host.minImportedHostPointerAlignment;
    }
    if (chosen.semaphore_fd) {
        load(functions.get_semaphore_fd, "vkGetSemaphoreFdKHR");
        load(functions.import_semaphore_fd, "vkImportSemaphoreFdKHR");
    }
    if (debug_utils) {
        auto instance_function = [&](auto& function, const char* name) {
            function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(
                vkGetInstanceProcAddr(instance, name));
        };
        instance_function(functions.set_object_name, "vkSetDebugUtilsObjectNameEXT");
        instance_function(functions.begin_command_label, "vkCmdBeginDebugUtilsLabelEXT");
        instance_function(functions.end_command_label, "vkCmdEndDebugUtilsLabelEXT");
        instance_function(functions.begin_queue_label, "vkQueueBeginDebugUtilsLabelEXT");
        instance_function(functions.end_queue_label, "vkQueueEndDebugUtilsLabelEXT");
        // Labels come in pairs: without both ends, none.
        if (!functions.begin_command_label || !functions.end_command_label) {
            functions.begin_command_label = nullptr;
            functions.end_command_label = nullptr;
        }
        if (!functions.begin_queue_label || !functions.end_queue_label) {
            functions.begin_queue_label = nullptr;
            functions.end_queue_label = nullptr;
        }
    }
}

void VulkanContext::State::adopt(const VulkanDeviceHandles& app,
                                 const VulkanDeviceRequirements& requirements) {
    if (!app.instance || !app.physical_device || !app.device || !app.queue) {
        throw Error(Errc::invalid_argument, "VulkanContext",
                    "an adopted device needs its instance, physical device, device and queue");
    }
    const std::string missing = requirements.missing_from(app);
    if (!missing.empty()) {
        throw Error(Errc::not_supported, "VulkanContext",
                    "the app's device was created without " + missing +
                        " (vulkan_device_requirements says what to enable)");
    }
    chosen = examine(app.physical_device, VulkanContextSettings{}, VK_NULL_HANDLE);
    if (chosen.properties.apiVersion < requirements.api_version) {
        throw Error(Errc::not_supported, "VulkanContext",
                    "the app's device offers Vulkan " + version_text(chosen.properties.apiVersion));
    }
    if (requirements.device_uuid && chosen.uuid != *requirements.device_uuid) {
        throw Error(Errc::invalid_argument, "VulkanContext",
                    "the app's device is not the backend's GPU: its UUID is " +
                        uuid_text(chosen.uuid) + ", the GPU's " +
                        uuid_text(*requirements.device_uuid));
    }
    // What the app enabled counts, not what the device offers.
    const auto on = [&](const char* name) {
        return std::find(app.enabled_extensions.begin(), app.enabled_extensions.end(), name) !=
               app.enabled_extensions.end();
    };
    chosen.host_pointer = on(VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
    chosen.fd = on(VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME);
    chosen.semaphore_fd = on(VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);
    chosen.swapchain = on(VK_KHR_SWAPCHAIN_EXTENSION_NAME);
    chosen.sampler_anisotropy = app.enabled_features.sampler_anisotropy;
    chosen.texture_compression_bc = app.enabled_features.texture_compression_bc;
    chosen.queue_family = app.queue_family;
    owns = false;
    instance = app.instance;
    device = app.device;
    queue = app.queue;
    if (app.queue_mutex) queue_lock = app.queue_mutex;
    enabled_extensions = app.enabled_extensions;
    vkGetPhysicalDeviceMemoryProperties(chosen.device, &memory);
    load_functions();
}

VulkanContextSettings VulkanContextSettings::for_backend(const Backend& backend,
                                                         VulkanContextSettings base) {
    const Capabilities& caps = backend.capabilities();
    if (caps.gpu) {
        base.device_uuid = caps.device_uuid;
        base.require_fd_import = true;
        base.require_semaphore_fd = true;
    } else {
        base.require_host_pointer_import = true;
    }
    return base;
}

VulkanContextSettings VulkanContextSettings::for_backend(const Backend& backend) {
    return for_backend(backend, VulkanContextSettings{});
}

VulkanContext::VulkanContext(VulkanContextSettings settings) : state_(std::make_unique<State>()) {
    state_->settings = std::move(settings);
    state_->create_instance();
    state_->choose_device();
    state_->create_device();
    // Made now rather than at first use: a driver may hold a file descriptor for it, and what a
    // context holds should not change under an app that counts them.
    submitted_marker_nolock();
    state_->settings.log.info("vulkan: ", device_name(), " (", driver_info(), "), validation ",
                              state_->validation ? "on" : "off");
}

VulkanContext::VulkanContext(const VulkanDeviceHandles& app_device,
                             const VulkanDeviceRequirements& requirements, Log log)
    : state_(std::make_unique<State>()) {
    state_->settings.log = std::move(log);
    state_->adopt(app_device, requirements);
    submitted_marker_nolock();  // made now, as above
    state_->settings.log.info("vulkan: the app's ", device_name(), " (", driver_info(), ")");
}

VulkanContext::~VulkanContext() = default;

VulkanDeviceHandles VulkanContext::handles() const {
    VulkanDeviceHandles handles{state_->instance, state_->chosen.device, state_->device,
                                state_->queue, state_->chosen.queue_family};
    handles.enabled_extensions = state_->enabled_extensions;
    handles.enabled_features = {true,
                                true,
                                true,
                                true,
                                state_->chosen.sampler_anisotropy,
                                state_->chosen.texture_compression_bc};
    handles.queue_mutex = state_->queue_lock;  // the lock vtpage takes: the app shares it
    return handles;
}

bool VulkanContext::adopted() const noexcept { return !state_->owns; }

VkInstance VulkanContext::instance() const noexcept { return state_->instance; }
VkPhysicalDevice VulkanContext::physical_device() const noexcept { return state_->chosen.device; }
VkDevice VulkanContext::device() const noexcept { return state_->device; }
VkQueue VulkanContext::queue() const noexcept { return state_->queue; }
std::uint32_t VulkanContext::queue_family() const noexcept { return state_->chosen.queue_family; }
VkSurfaceKHR VulkanContext::surface() const noexcept { return state_->surface; }
const VulkanExtensionFunctions& VulkanContext::functions() const noexcept {
    return state_->functions;
}
const Log& VulkanContext::log() const noexcept { return state_->settings.log; }
const VkPhysicalDeviceProperties& VulkanContext::properties() const noexcept {
    return state_->chosen.properties;
}
std::string VulkanContext::device_name() const { return state_->chosen.properties.deviceName; }
std::string VulkanContext::driver_info() const {
    return detail::concat(state_->chosen.driver.driverName, " ", state_->chosen.driver.driverInfo);
}
DeviceUuid VulkanContext::device_uuid() const noexcept { return state_->chosen.uuid; }
bool VulkanContext::is_cpu() const noexcept {
    return state_->chosen.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
}
bool VulkanContext::validation_enabled() const noexcept { return state_->validation; }
ValidationMessageCounts VulkanContext::validation_messages() const noexcept {
    return {state_->verbose.load(), state_->info.load(), state_->warnings.load(),
            state_->errors.load()};
}
std::uint64_t VulkanContext::validation_problems() const noexcept {
    return state_->warnings.load() + state_->errors.load();
}
bool VulkanContext::supports_host_pointer_import() const noexcept {
    return state_->chosen.host_pointer;
}
bool VulkanContext::supports_fd_import() const noexcept { return state_->chosen.fd; }
bool VulkanContext::supports_semaphore_fd() const noexcept { return state_->chosen.semaphore_fd; }
bool VulkanContext::supports_sampler_anisotropy() const noexcept {
    return state_->chosen.sampler_anisotropy;
}

bool VulkanContext::supports_texture_compression_bc() const noexcept {
    return state_->chosen.texture_compression_bc;
}
VkDeviceSize VulkanContext::host_pointer_alignment() const noexcept {
    return state_->host_pointer_alignment;
}

std::uint32_t VulkanContext::memory_type(std::uint32_t type_bits, VkMemoryPropertyFlags required,
                                         VkMemoryPropertyFlags preferred) const {
    const VkPhysicalDeviceMemoryProperties& memory = state_->memory;
    for (VkMemoryPropertyFlags wanted : {required | preferred, required}) {
        for (std::uint32_t type = 0; type < memory.memoryTypeCount; ++type) {
            if ((type_bits & (1u << type)) &&
                (memory.memoryTypes[type].propertyFlags & wanted) == wanted) {
                return type;
            }
        }
    }
    throw Error(Errc::not_supported, "VulkanContext::memory_type",
                "no memory type has the properties asked for",
                detail::concat("type_bits=0x", std::hex, type_bits, " required=0x", required));
}

void VulkanContext::submit(const VkSubmitInfo2& submit, VkFence fence, const char* queue_label) {
    this->submit(std::span<const VkSubmitInfo2>(&submit, 1), fence, queue_label);
}

void VulkanContext::submit(std::span<const VkSubmitInfo2> batches, VkFence fence,
                           const char* queue_label) {
    std::lock_guard lock(*state_->queue_lock);
    const VulkanExtensionFunctions& f = state_->functions;
    const bool labelled = queue_label && f.begin_queue_label;
    if (labelled) {
        VkDebugUtilsLabelEXT label{VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT};
        label.pLabelName = queue_label;
        f.begin_queue_label(state_->queue, &label);
    }
    const VkResult result =
        vkQueueSubmit2(state_->queue, std::uint32_t(batches.size()), batches.data(), fence);
    if (labelled) f.end_queue_label(state_->queue);
    vk_check(result, "VulkanContext::submit", "vkQueueSubmit2");
}

VkResult VulkanContext::present(const VkPresentInfoKHR& present) {
    VkResult result;
    {
        std::lock_guard lock(*state_->queue_lock);
        result = vkQueuePresentKHR(state_->queue, &present);
    }
    if (result == VK_ERROR_OUT_OF_DATE_KHR) return result;
    return vk_check(result, "VulkanContext::present", "vkQueuePresentKHR");
}

void VulkanContext::wait_idle() {
    std::lock_guard lock(*state_->queue_lock);
    vk_check(vkQueueWaitIdle(state_->queue), "VulkanContext::wait_idle", "vkQueueWaitIdle");
}

void VulkanContext::wait_for_submitted(std::chrono::milliseconds timeout) {
    std::uint64_t value = 0;
    VkSemaphore marker = VK_NULL_HANDLE;
    {
        std::lock_guard lock(*state_->queue_lock);
        marker = submitted_marker_nolock();
        value = ++state_->submitted_value;
        // A signal defined by a submission waits for every command earlier in submission order.
        VkSemaphoreSubmitInfo signal{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
        signal.semaphore = marker;
        signal.value = value;
        signal.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        VkSubmitInfo2 submit{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
        submit.signalSemaphoreInfoCount = 1;
        submit.pSignalSemaphoreInfos = &signal;
        vk_check(vkQueueSubmit2(state_->queue, 1, &submit, VK_NULL_HANDLE),
                 "VulkanContext::wait_for_submitted", "vkQueueSubmit2");
    }
    VkSemaphoreWaitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    wait.semaphoreCount = 1;
    wait.pSemaphores = &marker;
    wait.pValues = &value;
    const auto nanoseconds = std::chrono::duration_cast<std::chrono::nanoseconds>(timeout);
    const VkResult result = vkWaitSemaphores(
        state_->device, &wait, std::uint64_t(std::max<std::int64_t>(0, nanoseconds.count())));
    if (result == VK_TIMEOUT) {
        throw Error(Errc::busy, "VulkanContext::wait_for_submitted",
                    "the queue's submitted work did not finish in time",
                    detail::concat("timeout_ms=", timeout.count()));
    }
    vk_check(result, "VulkanContext::wait_for_submitted", "vkWaitSemaphores");
}

VkSemaphore VulkanContext::submitted_marker_nolock() {
    if (state_->submitted_marker) return state_->submitted_marker;
    VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    VkSemaphoreCreateInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    info.pNext = &type;
    vk_check(vkCreateSemaphore(state_->device, &info, nullptr, &state_->submitted_marker),
             "VulkanContext::wait_for_submitted", "vkCreateSemaphore");
    return state_->submitted_marker;
}

void VulkanContext::run_commands(const std::function<void(VkCommandBuffer)>& record) {
    VkDevice device = state_->device;
    VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool_info.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
    pool_info.queueFamilyIndex = state_->chosen.queue_family;
    VkCommandPool raw_pool = VK_NULL_HANDLE;
    vk_check(vkCreateCommandPool(device, &pool_info, nullptr, &raw_pool),
             "VulkanContext::run_commands", "vkCreateCommandPool");
    UniqueVkCommandPool pool(device, raw_pool);
    VkCommandBufferAllocateInfo allocate{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    allocate.commandPool = pool.get();
    allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    allocate.commandBufferCount = 1;
    VkCommandBuffer commands = VK_NULL_HANDLE;
    vk_check(vkAllocateCommandBuffers(device, &allocate, &commands), "VulkanContext::run_commands",
             "vkAllocateCommandBuffers");
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vk_check(vkBeginCommandBuffer(commands, &begin), "VulkanContext::run_commands",
             "vkBeginCommandBuffer");
    record(commands);
    vk_check(vkEndCommandBuffer(commands), "VulkanContext::run_commands", "vkEndCommandBuffer");

    VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence raw_fence = VK_NULL_HANDLE;
    vk_check(vkCreateFence(device, &fence_info, nullptr, &raw_fence), "VulkanContext::run_commands",
             "vkCreateFence");
    UniqueVkFence fence(device, raw_fence);
    VkCommandBufferSubmitInfo buffer_info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
    buffer_info.commandBuffer = commands;
    VkSubmitInfo2 submit_info{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
    submit_info.commandBufferInfoCount = 1;
    submit_info.pCommandBufferInfos = &buffer_info;
    submit(submit_info, fence.get(), "vtpage run_commands");
    vk_check(vkWaitForFences(device, 1, &raw_fence, VK_TRUE, UINT64_MAX),
             "VulkanContext::run_commands", "vkWaitForFences");
}

void VulkanContext::begin_label(VkCommandBuffer commands, const char* name) const {
    if (!state_->functions.begin_command_label) return;
    VkDebugUtilsLabelEXT label{VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT};
    label.pLabelName = name;
    state_->functions.begin_command_label(commands, &label);
}

void VulkanContext::end_label(VkCommandBuffer commands) const {
    if (state_->functions.end_command_label) state_->functions.end_command_label(commands);
}

bool VulkanContext::debug_labels_enabled() const noexcept {
    return state_->functions.begin_command_label != nullptr;
}

void VulkanContext::set_name(VkObjectType type, std::uint64_t handle, const char* name) const {
    if (!state_->functions.set_object_name || !handle) return;
    VkDebugUtilsObjectNameInfoEXT info_struct{VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT};
    info_struct.objectType = type;
    info_struct.objectHandle = handle;
    info_struct.pObjectName = name;
    state_->functions.set_object_name(state_->device, &info_struct);
}

}  // namespace vtpage
