// vtpage-embedding: a Vulkan program with its own instance, device, queue and pipeline that adds
// a streamed virtual texture through vtpage's public API. It draws one full-screen triangle that
// shows a 1024 x 1024 procedural texture at mip 2, reads each frame's feedback back, hands it to
// the streaming and draws again until the view asks for nothing more. Headless.
//
//   vtpage-embedding [--backend auto|cuda|host] [--frames N] [--validation] [--check]
//                    [--stack] [--out image.ppm]
//
// --stack draws a material stack instead: a repeating sRGB BC1 colour layer and a BC4 layer of
// the example's own tile source (block_pattern_source.hpp), sampled together at 16x anisotropy
// across the repeat's seam, the BC4 layer in alpha.
// --check compares the settled image with the texels of the same tile source; --validation
// turns the Khronos layer on and fails on any message. Exit 0 done, 1 failed, 2 bad flags.
//
// The lines marked "vtpage" are all the app adds for the virtual texture (docs/vulkan.md).
#include <vulkan/vulkan.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "block_pattern_source.hpp"
#include "reference_check.hpp"
#include "vtpage/backend/backend_factory.hpp"              // vtpage
#include "vtpage/config.hpp"                               // VTPAGE_VERSION
#include "vtpage/interop/virtual_texture_streaming.hpp"    // vtpage
#include "vtpage/interop/vulkan_barrier.hpp"               // vtpage
#include "vtpage/interop/vulkan_buffer.hpp"                // vtpage
#include "vtpage/interop/vulkan_context.hpp"               // vtpage
#include "vtpage/interop/vulkan_image.hpp"                 // vtpage
#include "vtpage/streaming/sources/procedural_source.hpp"  // vtpage
#include "vtpage/streaming/sources/stack_source.hpp"       // vtpage

namespace {

const std::uint32_t vertex_spirv[] = {
#include "quad.vert.spv.inc"
};
const std::uint32_t fragment_spirv[] = {
#include "quad.frag.spv.inc"
};
const std::uint32_t stack_fragment_spirv[] = {
#include "quad_stack.frag.spv.inc"
};

constexpr std::uint32_t image_size = 256;  // pixels per side
constexpr std::size_t image_pixels = std::size_t{image_size} * image_size;
constexpr std::uint32_t texture_log2 = 10;  // 1024 texels per side: 4 per pixel, mip 2
constexpr VkFormat colour_format = VK_FORMAT_R8G8B8A8_UNORM;
constexpr VkFormat feedback_format = VK_FORMAT_R32G32_UINT;  // a vt::FeedbackEntry per pixel

struct Options {
    std::string backend = "auto";
    int frames = 100;
    bool validation = false, check = false, stack = false;
    std::string out;
};

struct PushConstants {  // quad.frag's Frame
    VkDeviceAddress indirection, directory;
    std::uint32_t texture_id;
    float uv_per_pixel;
};

void check(VkResult result, const char* call) {
    if (result < 0)
        throw std::runtime_error(std::string(call) + ": VkResult " + std::to_string(result));
}

std::uint32_t validation_messages = 0;

VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT,
                                          VkDebugUtilsMessageTypeFlagsEXT,
                                          const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
    std::fprintf(stderr, "validation: %s\n", data->pMessage);
    ++validation_messages;
    return VK_FALSE;
}

// The app's instance, device and queue: vtpage only says what to enable.
struct AppDevice {
    VkInstance instance = VK_NULL_HANDLE;
    VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
    VkPhysicalDevice gpu = VK_NULL_HANDLE;
    VkDevice device = VK_NULL_HANDLE;
    VkQueue queue = VK_NULL_HANDLE;
    std::uint32_t family = 0;
    vtpage::VulkanDeviceHandles handles;  // vtpage

    AppDevice(bool validation, const vtpage::VulkanDeviceRequirements& needs) {
        create_instance(validation);
        pick(needs);
        VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
        f13.dynamicRendering = VK_TRUE;  // the app's own choice
        VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                             &f13};
        VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f12};
        needs.enable(f2, f12, f13);  // vtpage
        const float priority = 1.0f;
        VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
        queue_info.queueFamilyIndex = family;
        queue_info.queueCount = 1;
        queue_info.pQueuePriorities = &priority;
        VkDeviceCreateInfo create{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &f2};
        create.queueCreateInfoCount = 1;
        create.pQueueCreateInfos = &queue_info;
        create.enabledExtensionCount = std::uint32_t(needs.device_extensions.size());  // vtpage
        create.ppEnabledExtensionNames = needs.device_extensions.data();               // vtpage
        check(vkCreateDevice(gpu, &create, nullptr, &device), "vkCreateDevice");
        vkGetDeviceQueue(device, family, 0, &queue);
        handles = {instance, gpu, device, queue, family};  // vtpage
        handles.describe_creation(create);                 // vtpage
    }
    ~AppDevice() {
        if (device) vkDestroyDevice(device, nullptr);
        if (messenger) {
            auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
                vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
            destroy(instance, messenger, nullptr);
        }
        vkDestroyInstance(instance, nullptr);
    }

    void create_instance(bool validation) {
        VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
        app.pApplicationName = "vtpage-embedding";
        app.apiVersion = VK_API_VERSION_1_3;
        const char* layer = "VK_LAYER_KHRONOS_validation";
        const char* extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME,
                                    VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME};
        const VkValidationFeatureEnableEXT sync =
            VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
        VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
        features.enabledValidationFeatureCount = 1;
        features.pEnabledValidationFeatures = &sync;
        VkInstanceCreateInfo create{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                                    validation ? &features : nullptr};
        create.pApplicationInfo = &app;
        create.enabledLayerCount = validation ? 1 : 0;
        create.ppEnabledLayerNames = &layer;
        create.enabledExtensionCount = validation ? 2 : 0;
        create.ppEnabledExtensionNames = extensions;
        check(vkCreateInstance(&create, nullptr, &instance), "vkCreateInstance");
        if (!validation) return;
        VkDebugUtilsMessengerCreateInfoEXT info{
            VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
        info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
        info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                           VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
        info.pfnUserCallback = on_message;
        auto create_messenger = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
            vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
        check(create_messenger(instance, &info, nullptr, &messenger),
              "vkCreateDebugUtilsMessengerEXT");
    }

    // The first Vulkan 1.3 device with a graphics + compute queue (on cuda: the CUDA device).
    void pick(const vtpage::VulkanDeviceRequirements& needs) {
        std::uint32_t count = 0;
        check(vkEnumeratePhysicalDevices(instance, &count, nullptr), "vkEnumeratePhysicalDevices");
        std::vector<VkPhysicalDevice> devices(count);
        check(vkEnumeratePhysicalDevices(instance, &count, devices.data()),
              "vkEnumeratePhysicalDevices");
        for (VkPhysicalDevice candidate : devices) {
            VkPhysicalDeviceIDProperties id{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
            VkPhysicalDeviceProperties2 properties{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                                   &id};
            vkGetPhysicalDeviceProperties2(candidate, &properties);
            if (properties.properties.apiVersion < VK_API_VERSION_1_3) continue;
            if (needs.device_uuid &&
                std::memcmp(id.deviceUUID, needs.device_uuid->data(), 16) != 0)  // vtpage
                continue;
            std::uint32_t families = 0;
            vkGetPhysicalDeviceQueueFamilyProperties(candidate, &families, nullptr);
            std::vector<VkQueueFamilyProperties> props(families);
            vkGetPhysicalDeviceQueueFamilyProperties(candidate, &families, props.data());
            for (std::uint32_t f = 0; f < families; ++f) {
                const VkQueueFlags wanted = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT;
                if ((props[f].queueFlags & wanted) != wanted) continue;
                gpu = candidate, family = f;
                return;
            }
        }
        throw std::runtime_error("no Vulkan 1.3 device fits");
    }
};

VkShaderModule make_module(VkDevice device, std::span<const std::uint32_t> spirv) {
    VkShaderModuleCreateInfo create{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    create.codeSize = spirv.size_bytes();
    create.pCode = spirv.data();
    VkShaderModule module = VK_NULL_HANDLE;
    check(vkCreateShaderModule(device, &create, nullptr, &module), "vkCreateShaderModule");
    return module;
}

// The app's pipeline: a full-screen triangle into a colour and a feedback attachment.
struct Pipeline {
    VkDevice device;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    VkPipeline pipeline = VK_NULL_HANDLE;

    Pipeline(VkDevice d, std::span<const std::uint32_t> fragment_spirv) : device(d) {
        VkPushConstantRange range{VK_SHADER_STAGE_FRAGMENT_BIT, 0, sizeof(PushConstants)};
        VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
        layout_info.pushConstantRangeCount = 1;
        layout_info.pPushConstantRanges = &range;
        check(vkCreatePipelineLayout(device, &layout_info, nullptr, &layout),
              "vkCreatePipelineLayout");
        VkPipelineShaderStageCreateInfo stages[2]{};
        stages[0] = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                     nullptr,
                     0,
                     VK_SHADER_STAGE_VERTEX_BIT,
                     make_module(device, vertex_spirv),
                     "main"};
        stages[1] = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                     nullptr,
                     0,
                     VK_SHADER_STAGE_FRAGMENT_BIT,
                     make_module(device, fragment_spirv),
                     "main"};
        VkPipelineVertexInputStateCreateInfo vertices{
            VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
        VkPipelineInputAssemblyStateCreateInfo assembly{
            VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO};
        assembly.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST;
        const VkViewport viewport{0, 0, float(image_size), float(image_size), 0, 1};
        const VkRect2D scissor{{0, 0}, {image_size, image_size}};
        VkPipelineViewportStateCreateInfo view{
            VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO};
        view.viewportCount = view.scissorCount = 1;
        view.pViewports = &viewport;
        view.pScissors = &scissor;
        VkPipelineRasterizationStateCreateInfo raster{
            VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO};
        raster.lineWidth = 1.0f;
        VkPipelineMultisampleStateCreateInfo multisample{
            VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO};
        multisample.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT;
        VkPipelineColorBlendAttachmentState blend[2]{};
        blend[0].colorWriteMask = blend[1].colorWriteMask = 0xf;
        VkPipelineColorBlendStateCreateInfo blending{
            VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO};
        blending.attachmentCount = 2;
        blending.pAttachments = blend;
        const VkFormat formats[] = {colour_format, feedback_format};
        VkPipelineRenderingCreateInfo rendering{VK_STRUCTURE_TYPE_PIPELINE_RENDERING_CREATE_INFO};
        rendering.colorAttachmentCount = 2;
        rendering.pColorAttachmentFormats = formats;
        VkGraphicsPipelineCreateInfo create{VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO,
                                            &rendering};
        create.stageCount = 2;
        create.pStages = stages;
        create.pVertexInputState = &vertices;
        create.pInputAssemblyState = &assembly;
        create.pViewportState = &view;
        create.pRasterizationState = &raster;
        create.pMultisampleState = &multisample;
        create.pColorBlendState = &blending;
        create.layout = layout;
        const VkResult result =
            vkCreateGraphicsPipelines(device, VK_NULL_HANDLE, 1, &create, nullptr, &pipeline);
        for (const auto& stage : stages) vkDestroyShaderModule(device, stage.module, nullptr);
        check(result, "vkCreateGraphicsPipelines");
    }
    ~Pipeline() {
        vkDestroyPipeline(device, pipeline, nullptr);
        vkDestroyPipelineLayout(device, layout, nullptr);
    }
};

// Draws into the two images and copies them to the host buffers.
void record_draw(VkCommandBuffer commands, const Pipeline& pipeline, const PushConstants& push,
                 const vtpage::VulkanImage* targets, const vtpage::VulkanBuffer* readbacks) {
    VkRenderingAttachmentInfo attachments[2]{};
    for (int i = 0; i < 2; ++i) {
        vtpage::record_image_barrier(commands, targets[i].get(), VK_IMAGE_LAYOUT_UNDEFINED,
                                     VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
                                     VK_PIPELINE_STAGE_2_COPY_BIT, 0,
                                     VK_PIPELINE_STAGE_2_COLOR_ATTACHMENT_OUTPUT_BIT,
                                     VK_ACCESS_2_COLOR_ATTACHMENT_WRITE_BIT);
        attachments[i] = {VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO};
        attachments[i].imageView = targets[i].view();
        attachments[i].imageLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL;
        attachments[i].loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
        attachments[i].storeOp = VK_ATTACHMENT_STORE_OP_STORE;
    }
    attachments[1].clearValue.color.uint32[0] = 0xffffffffu;  // vt::FeedbackEntry::empty
    VkRenderingInfo rendering{VK_STRUCTURE_TYPE_RENDERING_INFO};
    rendering.renderArea = {{0, 0}, {image_size, image_size}};
    rendering.layerCount = 1;
    rendering.colorAttachmentCount = 2;
    rendering.pColorAttachments = attachments;
    vkCmdBeginRendering(commands, &rendering);
    vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline.pipeline);
    vkCmdPushConstants(commands, pipeline.layout, VK_SHADER_STAGE_FRAGMENT_BIT, 0, sizeof(push),
                       &push);
    vkCmdDraw(commands, 3, 1, 0, 0);
    vkCmdEndRendering(commands);
    for (int i = 0; i < 2; ++i) {
        vtpage::record_image_barrier(
            commands, targets[i].get(), VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
            VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_PIPELINE_STAGE_2_COLOR_ATTACHMENT_OUTPUT_BIT,
            VK_ACCESS_2_COLOR_ATTACHMENT_WRITE_BIT, VK_PIPELINE_STAGE_2_COPY_BIT,
            VK_ACCESS_2_TRANSFER_READ_BIT);
        const VkBufferImageCopy region{
            0, 0, 0, {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1}, {0, 0, 0}, {image_size, image_size, 1}};
        vkCmdCopyImageToBuffer(commands, targets[i].get(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                               readbacks[i].get(), 1, &region);
    }
    vtpage::record_memory_barrier(commands, VK_PIPELINE_STAGE_2_COPY_BIT,
                                  VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_HOST_BIT,
                                  VK_ACCESS_2_HOST_READ_BIT);
}

// One command buffer and fence: the app renders a frame, waits for it, renders the next.
struct FrameLoop {
    VkDevice device;
    VkQueue queue;
    VkCommandPool pool = VK_NULL_HANDLE;
    VkCommandBuffer commands = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;

    FrameLoop(const AppDevice& app) : device(app.device), queue(app.queue) {
        VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
        pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
        pool_info.queueFamilyIndex = app.family;
        check(vkCreateCommandPool(device, &pool_info, nullptr, &pool), "vkCreateCommandPool");
        VkCommandBufferAllocateInfo allocate{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        allocate.commandPool = pool;
        allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        allocate.commandBufferCount = 1;
        check(vkAllocateCommandBuffers(device, &allocate, &commands), "vkAllocateCommandBuffers");
        VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        check(vkCreateFence(device, &fence_info, nullptr, &fence), "vkCreateFence");
    }
    ~FrameLoop() {
        vkDestroyFence(device, fence, nullptr);
        vkDestroyCommandPool(device, pool, nullptr);
    }
    VkCommandBuffer begin() {
        check(vkResetCommandBuffer(commands, 0), "vkResetCommandBuffer");
        VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
        check(vkBeginCommandBuffer(commands, &begin), "vkBeginCommandBuffer");
        return commands;
    }
    // Submits with the waits and signals given, then waits for the frame.
    void submit_and_wait(std::span<const VkSemaphoreSubmitInfo> waits,
                         std::span<const VkSemaphoreSubmitInfo> signals) {
        check(vkEndCommandBuffer(commands), "vkEndCommandBuffer");
        VkCommandBufferSubmitInfo buffer{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
        buffer.commandBuffer = commands;
        VkSubmitInfo2 submit{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
        submit.waitSemaphoreInfoCount = std::uint32_t(waits.size());
        submit.pWaitSemaphoreInfos = waits.data();
        submit.commandBufferInfoCount = 1;
        submit.pCommandBufferInfos = &buffer;
        submit.signalSemaphoreInfoCount = std::uint32_t(signals.size());
        submit.pSignalSemaphoreInfos = signals.data();
        check(vkQueueSubmit2(queue, 1, &submit, fence), "vkQueueSubmit2");
    }
    void wait() {
        check(vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
        check(vkResetFences(device, 1, &fence), "vkResetFences");
    }
};

// Streams and draws until two frames in a row asked only for resident pages; the frame count.
int run(const Options& options, std::vector<std::uint8_t>& image) {
    auto backend = vtpage::make_backend({.name = options.backend});   // vtpage
    const auto needs = vtpage::vulkan_device_requirements(*backend);  // vtpage
    AppDevice app(options.validation, needs);
    vtpage::VulkanContext context(app.handles, needs);  // vtpage
    Pipeline pipeline(app.device, options.stack
                                      ? std::span<const std::uint32_t>(stack_fragment_spirv)
                                      : std::span<const std::uint32_t>(fragment_spirv));
    const VkExtent2D extent{image_size, image_size};
    const VkImageUsageFlags usage =
        VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
    const vtpage::VulkanImage targets[] = {{context, extent, colour_format, usage},
                                           {context, extent, feedback_format, usage}};
    const vtpage::VulkanBuffer readbacks[] = {
        {context, image_pixels * 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
         vtpage::BufferMemory::readback},
        {context, image_pixels * 8, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
         vtpage::BufferMemory::readback}};
    FrameLoop loop(app);

    std::shared_ptr<const vtpage::vt::TileSource> source =                          // vtpage
        std::make_shared<vtpage::vt::ProceduralSource>(                             // vtpage
            vtpage::vt::ProceduralSettings{.seed = 5, .size_log2 = texture_log2});  // vtpage
    std::shared_ptr<const embedding::BlockPatternSource> colour_layer, channel_layer;
    if (options.stack) {
        colour_layer = std::make_shared<embedding::BlockPatternSource>(vtpage::vt::TileFormat::bc1,
                                                                       1u << texture_log2);
        channel_layer = std::make_shared<embedding::BlockPatternSource>(vtpage::vt::TileFormat::bc4,
                                                                        1u << texture_log2);
        source = std::make_shared<vtpage::vt::StackSource>(                              // vtpage
            std::vector<std::shared_ptr<const vtpage::vt::TileSource>>{colour_layer,     // vtpage
                                                                       channel_layer});  // vtpage
    }
    vtpage::VirtualTextureStreamingSettings settings;                        // vtpage
    settings.page_count = source->layout().page_count;                       // vtpage
    settings.frames_in_flight = 1;                                           // vtpage
    settings.streamer.table.budget_bytes = std::size_t(32) << 20;            // vtpage
    vtpage::VirtualTextureStreaming streaming(context, *backend, settings);  // vtpage
    const PushConstants push{streaming.indirection_address(),
                             streaming.directory_address(),                      // vtpage
                             streaming.add_texture(source), 1.0f / image_size};  // vtpage
    int frame = 0;
    for (int clean = 0; clean < 2 && frame < options.frames; ++frame) {
        VkCommandBuffer commands = loop.begin();
        vtpage::StreamingFrame streamed = streaming.begin_frame(commands, 0);  // vtpage
        record_draw(commands, pipeline, push, targets, readbacks);
        loop.submit_and_wait(streamed.waits(), streamed.signals());  // vtpage
        streamed.submitted();                                        // vtpage
        loop.wait();
        readbacks[1].invalidate();
        const auto* entries =
            reinterpret_cast<const vtpage::vt::FeedbackEntry*>(readbacks[1].mapped());  // vtpage
        const auto asked =
            streaming.complete_frame(streamed.id(), {entries, image_pixels});              // vtpage
        clean = asked.queued + asked.already_queued + asked.dropped == 0 ? clean + 1 : 0;  // vtpage
        if (!streaming.wait_idle(std::chrono::seconds(60)))                                // vtpage
            throw std::runtime_error("streaming did not settle");
    }
    readbacks[0].invalidate();
    const auto* pixels = reinterpret_cast<const std::uint8_t*>(readbacks[0].mapped());
    image.assign(pixels, pixels + image_pixels * 4);
    if (options.check) {
        const int difference =
            options.stack ? embedding::largest_stack_difference(*colour_layer, *channel_layer, 2,
                                                                128, image.data(), image_size)
                          : embedding::largest_difference(*source, 2, image.data(), image_size);
        std::printf("embedding: largest difference from the reference: %d of 255\n", difference);
        if (difference > 2) throw std::runtime_error("the image is not the reference");
    }
    std::printf("embedding: %s backend, %s, settled after %d frames, %zu pages resident\n",
                std::string(backend->name()).c_str(), context.device_name().c_str(), frame,
                streaming.streamer().page_table().resident_count());
    return frame;
}

bool parse(int argc, char** argv, Options& options) {
    for (int i = 1; i < argc; ++i) {
        const std::string flag = argv[i];
        const bool has_value = i + 1 < argc;
        if (flag == "--backend" && has_value)
            options.backend = argv[++i];
        else if (flag == "--frames" && has_value)
            options.frames = std::atoi(argv[++i]);
        else if (flag == "--out" && has_value)
            options.out = argv[++i];
        else if (flag == "--validation")
            options.validation = true;
        else if (flag == "--check")
            options.check = true;
        else if (flag == "--stack")
            options.stack = true;
        else
            return false;
    }
    return options.frames > 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 2 && std::strcmp(argv[1], "--version") == 0) {
        std::printf("vtpage-embedding %s\n", VTPAGE_VERSION);
        return 0;
    }
    Options options;
    if (!parse(argc, argv, options)) {
        std::fprintf(stderr,
                     "usage: vtpage-embedding [--backend auto|cuda|host] [--frames N] "
                     "[--validation] [--check] [--stack] [--out image.ppm] | --version\n");
        return 2;
    }
    try {
        std::vector<std::uint8_t> image;
        run(options, image);
        if (!options.out.empty()) embedding::write_ppm(options.out, image.data(), image_size);
    } catch (const std::exception& error) {  // vtpage::Error is one
        std::fprintf(stderr, "vtpage-embedding: %s\n", error.what());
        return 1;
    }
    if (validation_messages) {
        std::fprintf(stderr, "vtpage-embedding: %u validation messages\n", validation_messages);
        return 1;
    }
    return 0;
}
