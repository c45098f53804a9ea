#include "renderer/vulkan_renderer.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "renderer/vulkan_frame_slot.hpp"
#include "renderer/vulkan_ground_plane_pipeline.hpp"
#include "renderer/vulkan_identity_check_pipeline.hpp"
#include "renderer/vulkan_reference_textures.hpp"
#include "renderer/vulkan_scene_geometry.hpp"
#include "renderer/vulkan_scene_pipeline.hpp"
#include "renderer/vulkan_shade_pipeline.hpp"
#include "renderer/vulkan_swapchain.hpp"
#include "vtpage/base/trace.hpp"
#include "vtpage/interop/virtual_texture_streaming.hpp"
#include "vtpage/interop/vulkan_barrier.hpp"
#include "vtpage/interop/vulkan_buffer.hpp"
#include "vtpage/interop/vulkan_command_label.hpp"
#include "vtpage/interop/vulkan_context.hpp"
#include "vtpage/interop/vulkan_error.hpp"
#include "vtpage/interop/vulkan_image.hpp"
#include "vtpage/interop/vulkan_lod_probe.hpp"
#include "vtpage/interop/vulkan_texture_directory.hpp"

namespace vtpage::viewer {

namespace {

using viewer::FrameSlot;
using viewer::GroundPlanePipelines;
using viewer::GroundPlanePushConstants;

constexpr VkFormat colour_format_used = VK_FORMAT_R8G8B8A8_UNORM;
constexpr VkFormat feedback_format_used = VK_FORMAT_R32G32_UINT;
constexpr VkFormat sample_position_format = VK_FORMAT_R32G32B32A32_SFLOAT;
constexpr VkDeviceSize sample_position_bytes = 16;  // a vec4 per pixel
// The shade pass's quality counts go to this many bins of four uints (ground_plane_shade.comp):
// spread over addresses so that its atomics seldom meet.
constexpr std::uint32_t quality_bins = 64;
constexpr VkDeviceSize quality_bin_bytes = 16;

// Where one submitted frame's results go, and what is needed to hand them back.
struct FrameRecord {
    std::uint64_t frame = 0;  // 0: the slot has not been used
    std::uint64_t user_tag = 0;
    std::uint32_t readback = 0;  // index into State::readbacks
    std::uint32_t width = 0, height = 0, feedback_width = 0, feedback_height = 0;
    bool captured = false;
    bool feedback_taken = false;  // take_feedback() handed its feedback back
    bool identity_checked = false;
    bool presented = false;
    bool quality_measured = false;
    IndirectionUpload upload;
};

// Host-visible copies of a frame's feedback, quality bins, (when captured) colour image and
// (when checked) identity check counts.
struct Readback {
    VulkanBuffer feedback;
    VulkanBuffer quality;
    VulkanBuffer colour;
    VulkanBuffer identity_counts;
};

SampleQuality sum_quality_bins(const VulkanBuffer& bins) {
    SampleQuality quality;
    quality.measured = true;
    std::uint32_t words[quality_bins * 4];
    std::memcpy(words, bins.mapped(), sizeof words);
    for (std::uint32_t bin = 0; bin < quality_bins; ++bin) {
        quality.plane_pixels += words[bin * 4 + 0];
        quality.pixels_at_wanted_level += words[bin * 4 + 1];
        quality.missing_levels += words[bin * 4 + 2];
    }
    return quality;
}

// RGBA8 of a colour as the colour attachment stores it, R in the low byte.
std::uint32_t pack_unorm8(const std::array<float, 4>& colour) {
    std::uint32_t packed = 0;
    for (int i = 0; i < 4; ++i) {
        const float c = std::clamp(colour[i], 0.0f, 1.0f);
        packed |= std::uint32_t(std::lround(c * 255.0f)) << (8 * i);
    }
    return packed;
}

// The frame's planes: FrameDesc::planes, or its one plane at the origin.
std::vector<PlaneDraw> planes_of(const FrameDesc& frame) {
    if (!frame.planes.empty()) return frame.planes;
    return {PlaneDraw{.texture_id = frame.texture_id, .extent = frame.plane_extent}};
}

// One draw per plane, each with its own texture, origin and extent in the push constants.
void draw_planes(VkCommandBuffer commands, VkPipelineLayout layout, GroundPlanePushConstants push,
                 const std::vector<PlaneDraw>& planes) {
    for (const PlaneDraw& plane : planes) {
        push.texture_id = plane.texture_id;
        push.plane_origin[0] = plane.origin[0];
        push.plane_origin[1] = plane.origin[1];
        push.plane_extent[0] = plane.extent[0];
        push.plane_extent[1] = plane.extent[1];
        vkCmdPushConstants(commands, layout, GroundPlanePipelines::push_stages, 0, sizeof(push),
                           &push);
        vkCmdDraw(commands, 6, 1, 0, 0);
    }
}

void set_viewport(VkCommandBuffer commands, VkExtent2D extent) {
    VkViewport viewport{0, 0, float(extent.width), float(extent.height), 0, 1};
    VkRect2D scissor{{0, 0}, extent};
    vkCmdSetViewport(commands, 0, 1, &viewport);
    vkCmdSetScissor(commands, 0, 1, &scissor);
}

// `depth`: a depth attachment cleared to the far plane and not kept (scene frames).
void begin_rendering(VkCommandBuffer commands, VkImageView view, VkExtent2D extent,
                     const VkClearValue& clear, VkImageView depth = VK_NULL_HANDLE) {
    VkRenderingAttachmentInfo depth_attachment{VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO};
    depth_attachment.imageView = depth;
    depth_attachment.imageLayout = VK_IMAGE_LAYOUT_DEPTH_ATTACHMENT_OPTIMAL;
    depth_attachment.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
    depth_attachment.storeOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
    depth_attachment.clearValue.depthStencil = {1.0f, 0};
    VkRenderingAttachmentInfo attachment{VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO};
    attachment.imageView = view;
    attachment.imageLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL;
    attachment.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
    attachment.storeOp = VK_ATTACHMENT_STORE_OP_STORE;
    attachment.clearValue = clear;
    VkRenderingInfo rendering{VK_STRUCTURE_TYPE_RENDERING_INFO};
    rendering.renderArea = {{0, 0}, extent};
    rendering.layerCount = 1;
    rendering.colorAttachmentCount = 1;
    rendering.pColorAttachments = &attachment;
    if (depth != VK_NULL_HANDLE) rendering.pDepthAttachment = &depth_attachment;
    vkCmdBeginRendering(commands, &rendering);
}

// The depth target made ready for this frame's pass (its previous contents are not kept): after
// the previous frame's depth tests on it.
void record_depth_barrier(VkCommandBuffer commands, VkImage depth) {
    constexpr VkPipelineStageFlags2 tests =
        VK_PIPELINE_STAGE_2_EARLY_FRAGMENT_TESTS_BIT | VK_PIPELINE_STAGE_2_LATE_FRAGMENT_TESTS_BIT;
    record_image_barrier(commands, depth, VK_IMAGE_LAYOUT_UNDEFINED,
                         VK_IMAGE_LAYOUT_DEPTH_ATTACHMENT_OPTIMAL, tests,
                         VK_ACCESS_2_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT, tests,
                         VK_ACCESS_2_DEPTH_STENCIL_ATTACHMENT_READ_BIT |
                             VK_ACCESS_2_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT,
                         1, VK_IMAGE_ASPECT_DEPTH_BIT);
}

// The scene's draws: opaque and masked ones with `opaque`, then blended ones with `blended`.
void draw_scene(VkCommandBuffer commands, VkPipelineLayout layout, const ScenePushConstants& push,
                const VulkanSceneGeometry& scene, const ScenePipelines::Pass& pass) {
    vkCmdPushConstants(commands, layout, ScenePipelines::push_stages, 0, sizeof(push), &push);
    vkCmdBindIndexBuffer(commands, scene.index_buffer(), 0, VK_INDEX_TYPE_UINT32);
    VkPipeline bound = VK_NULL_HANDLE;
    for (const SceneGpuDraw& draw : scene.draws()) {
        const VkPipeline wanted = pass.for_draw(draw);
        if (wanted != bound) vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_GRAPHICS, wanted);
        bound = wanted;
        vkCmdDrawIndexed(commands, draw.index_count, 1, draw.first_index, draw.vertex_offset,
                         draw.instance);
    }
}

// The depth of the scene's opaque draws (masked ones discard, blended ones write no depth), laid
// down before the colour pass's draws so that each pixel is shaded once, by its nearest surface.
void draw_depth_prepass(VkCommandBuffer commands, VkPipelineLayout layout,
                        const ScenePushConstants& push, const VulkanSceneGeometry& scene,
                        VkPipeline prepass) {
    vkCmdPushConstants(commands, layout, ScenePipelines::push_stages, 0, sizeof(push), &push);
    vkCmdBindIndexBuffer(commands, scene.index_buffer(), 0, VK_INDEX_TYPE_UINT32);
    vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_GRAPHICS, prepass);
    for (const SceneGpuDraw& draw : scene.draws()) {
        if (draw.blended || draw.masked) continue;
        vkCmdDrawIndexed(commands, draw.index_count, 1, draw.first_index, draw.vertex_offset,
                         draw.instance);
    }
}

ScenePushConstants scene_push(const GroundPlanePushConstants& plane,
                              const VulkanSceneGeometry& scene, std::uint64_t frame_number) {
    ScenePushConstants push{};
    std::memcpy(push.view_projection, plane.view_projection, sizeof(push.view_projection));
    push.indirection = plane.indirection;
    push.directory = plane.directory;
    push.vertices = scene.vertices();
    push.instances = scene.instances();
    push.materials = scene.materials();
    push.lod_bias = plane.lod_bias;
    push.mode = plane.mode;
    push.max_anisotropy = plane.max_anisotropy;
    push.frame_number = std::uint32_t(frame_number);
    return push;
}

}  // namespace

struct VulkanRenderer::State {
    VulkanContext& context;
    VulkanIndirectionTable& indirection;
    VulkanTextureDirectory& textures;
    VulkanRendererSettings settings;
    GroundPlanePipelines pipelines;
    ShadePipeline shade;
    VulkanTimeline timeline;           // frame N complete
    VulkanTimeline feedback_timeline;  // frame N's feedback pass and its copy complete
    VulkanImage colour;
    VulkanImage feedback;
    // The deferred textured pass: the raster pass's sample positions, their copy for the
    // compute pass, and the colours it writes before they are copied into `colour`.
    VulkanImage sample_positions;
    VulkanBuffer sample_position_copy;
    VulkanBuffer shaded_colours;
    VulkanBuffer quality_counts;  // the shade pass's bins, copied to the frame's readback
    // The identity check's pipeline and the counts its atomics add to (where asked).
    std::optional<IdentityCheckPipeline> identity_check;
    VulkanBuffer identity_counts;
    std::vector<FrameSlot> slots;
    std::vector<FrameRecord> records;  // per slot
    std::vector<Readback> readbacks;   // frames_in_flight + 1: see render()
    std::uint64_t submitted = 0;
    // Frames begun through the streaming facade, where the renderer was given one.
    VirtualTextureStreaming* streaming = nullptr;
    // Made with the first scene frame: the level-of-detail probe, the mesh pipelines and the
    // depth targets of the colour and feedback passes.
    std::optional<VulkanLodProbe> lod_probe;
    std::optional<ScenePipelines> scene_pipelines;
    VulkanImage depth;
    VulkanImage feedback_depth;

    State(VulkanContext& c, VulkanIndirectionTable& i, VulkanTextureDirectory& t,
          VulkanRendererSettings s)
        : context(c),
          indirection(i),
          textures(t),
          settings(with_frame_timeout(s, c)),
          pipelines(c, colour_format_used, sample_position_format, feedback_format_used),
          shade(c),
          timeline(c, 0, false, "vtpage renderer timeline"),
          feedback_timeline(c, 0, false, "vtpage renderer feedback timeline") {
        if (!settings.identity_check) return;
        identity_check.emplace(c);
        identity_counts = VulkanBuffer(
            c, sizeof(IdentityCheckCounts),
            VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT |
                VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
            BufferMemory::device_local, "vtpage identity check counts");
    }

    // The frame's streaming part, recorded first: through the facade (its frame id, waits and
    // signals, and its submission lock), or the uploads under the table's submission lock.
    struct BegunFrame {
        std::optional<StreamingFrame> streamed;
        std::unique_lock<std::mutex> submission;
        IndirectionUpload upload;
        std::uint64_t user_tag = 0;
    };
    BegunFrame begin_streaming(VkCommandBuffer commands, std::uint32_t slot_index,
                               std::uint64_t user_tag) {
        BegunFrame begun;
        if (streaming) {
            begun.streamed.emplace(streaming->begin_frame(commands, slot_index));
            begun.upload = begun.streamed->upload();
            begun.user_tag = begun.streamed->id();
            return begun;
        }
        begun.submission = indirection.lock_submission();
        textures.record_upload(commands);
        begun.upload = indirection.record_upload(commands, slot_index);
        begun.user_tag = user_tag;
        return begun;
    }

    VkExtent2D extent() const { return {settings.width, settings.height}; }
    // The deferred pass draws the textured mode, and counts its quality as it samples.
    bool draws_deferred(const FrameDesc& frame) const {
        return settings.deferred_texturing && frame.mode == RenderMode::textured && !frame.scene;
    }
    void make_scene_targets(const VulkanSceneGeometry& scene) {
        if (!scene_pipelines) {
            lod_probe.emplace(context);
            scene_pipelines.emplace(
                context, colour_format_used, feedback_format_used, *lod_probe,
                ScenePipelines::Options{.reference = settings.reference_textures,
                                        .lod_from_device = settings.scene_lod_from_device});
        }
        scene_pipelines->build_for(scene.draws());
        if (depth.get() != VK_NULL_HANDLE && depth.extent().width == settings.width &&
            depth.extent().height == settings.height) {
            return;
        }
        const VkImageUsageFlags usage = VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT;
        depth = VulkanImage(context, extent(), ScenePipelines::depth_format, usage,
                            "vtpage scene depth");
        feedback_depth = VulkanImage(context, feedback_extent(), ScenePipelines::depth_format,
                                     usage, "vtpage scene feedback depth");
    }
    // The scene pipelines' sets: the probe (0) and the reference's textures (1) where drawn.
    void bind_scene_sets(VkCommandBuffer commands) const {
        const VulkanReferenceTextures* reference = settings.reference_textures;
        const VkDescriptorSet sets[2] = {lod_probe->set(),
                                         reference ? reference->set() : VK_NULL_HANDLE};
        vkCmdBindDescriptorSets(commands, VK_PIPELINE_BIND_POINT_GRAPHICS,
                                scene_pipelines->layout(), 0, reference ? 2 : 1, sets, 0, nullptr);
    }
    // One batch: its command buffer, its waits and its signals (kept alive by the caller).
    static VkSubmitInfo2 batch(const VkCommandBufferSubmitInfo& commands,
                               const std::vector<VkSemaphoreSubmitInfo>& waits,
                               const std::vector<VkSemaphoreSubmitInfo>& signals) {
        VkSubmitInfo2 submit{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
        submit.waitSemaphoreInfoCount = static_cast<std::uint32_t>(waits.size());
        submit.pWaitSemaphoreInfos = waits.data();
        submit.commandBufferInfoCount = 1;
        submit.pCommandBufferInfos = &commands;
        submit.signalSemaphoreInfoCount = static_cast<std::uint32_t>(signals.size());
        submit.pSignalSemaphoreInfos = signals.data();
        return submit;
    }
    static VulkanRendererSettings with_frame_timeout(VulkanRendererSettings s,
                                                     const VulkanContext& c) {
        if (s.frame_timeout_ms != 0) return s;
        const bool cpu = c.properties().deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
        s.frame_timeout_ms = cpu ? 300000 : 30000;
        return s;
    }
    // Waits for a frame with the settings' timeout; on timeout, busy with what the frame waits
    // for (a CUDA fill value that never came shows here rather than as a hang).
    void wait_for(std::uint64_t number) const {
        if (number == 0) return;
        const std::uint64_t timeout_ns = std::uint64_t(settings.frame_timeout_ms) * 1000000;
        if (timeline.wait(number, timeout_ns)) return;
        std::string waits_for = "its semaphores and its commands";
        for (const FrameRecord& record : records) {
            if (record.frame != number || !record.upload.wait_semaphore) continue;
            std::uint64_t reached = 0;
            vkGetSemaphoreCounterValue(context.device(), record.upload.wait_semaphore, &reached);
            waits_for = detail::concat("fill value ", record.upload.wait_value,
                                       " on the fill timeline, which stands at ", reached);
        }
        // Where the frame timeline stands tells a lost submission from a slow one.
        std::uint64_t frames_done = 0;
        vkGetSemaphoreCounterValue(context.device(), timeline.get(), &frames_done);
        throw Error(Errc::busy, "VulkanRenderer::wait",
                    detail::concat("the device has not finished frame ", number, " in ",
                                   settings.frame_timeout_ms, " ms (frames finished: ", frames_done,
                                   "); it waits for ", waits_for),
                    detail::concat("frame=", number));
    }
    VkExtent2D feedback_extent() const {
        const std::uint32_t d = settings.feedback_divisor;
        return {(settings.width + d - 1) / d, (settings.height + d - 1) / d};
    }
    void make_targets() {
        const bool deferred = settings.deferred_texturing;
        colour = VulkanImage(context, extent(), colour_format_used,
                             VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
                                 (deferred ? VK_IMAGE_USAGE_TRANSFER_DST_BIT : 0),
                             "vtpage colour");
        feedback =
            VulkanImage(context, feedback_extent(), feedback_format_used,
                        VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT,
                        "vtpage feedback");
        if (!deferred) return;
        sample_positions =
            VulkanImage(context, extent(), sample_position_format,
                        VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT,
                        "vtpage sample positions");
        const VkDeviceSize pixels = VkDeviceSize(settings.width) * settings.height;
        const VkBufferUsageFlags addressed =
            VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
        sample_position_copy = VulkanBuffer(
            context, pixels * sample_position_bytes, addressed | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
            BufferMemory::device_local, "vtpage sample position copy");
        shaded_colours =
            VulkanBuffer(context, pixels * 4, addressed | VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                         BufferMemory::device_local, "vtpage shaded colours");
        make_quality_counts();
    }
    // The bins the deferred pass or the scene's colour pass counts its quality into.
    void make_quality_counts() {
        if (quality_counts) return;
        quality_counts = VulkanBuffer(
            context, quality_bins * quality_bin_bytes,
            VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT |
                VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
            BufferMemory::device_local, "vtpage quality counts");
    }
    // Through vtpage, the scene's textured colour pass counts its quality (the reference samples
    // every level resident: nothing to count).
    bool counts_scene_quality(const FrameDesc& frame) const {
        return frame.scene && frame.mode == RenderMode::textured && !settings.reference_textures;
    }
    // The oldest frame that may still be in flight (frames before it reused their slots).
    std::uint64_t oldest_in_flight() const {
        const std::uint32_t slots = settings.frames_in_flight;
        return submitted >= slots ? submitted - slots + 1 : 1;
    }
    std::uint32_t slot_of(std::uint64_t number) const {
        return std::uint32_t((number - 1) % settings.frames_in_flight);
    }
    std::span<const vt::FeedbackEntry> feedback_of(const FrameRecord& record) {
        Readback& readback = readbacks[record.readback];
        readback.feedback.invalidate();
        return {reinterpret_cast<const vt::FeedbackEntry*>(readback.feedback.mapped()),
                std::size_t(record.feedback_width) * record.feedback_height};
    }
    CompletedFrame collect(std::uint32_t slot_index) {
        const FrameRecord& record = records[slot_index];
        Readback& readback = readbacks[record.readback];
        CompletedFrame done;
        done.frame = record.frame;
        done.user_tag = record.user_tag;
        done.width = record.width;
        done.height = record.height;
        done.feedback_width = record.feedback_width;
        done.feedback_height = record.feedback_height;
        done.feedback_taken = record.feedback_taken;
        if (!record.feedback_taken) done.feedback = feedback_of(record);
        if (record.captured) {
            readback.colour.invalidate();
            done.colour = {reinterpret_cast<const std::uint8_t*>(readback.colour.mapped()),
                           std::size_t(record.width) * record.height * 4};
        }
        const FrameSlot::GpuTimes times = slots[slot_index].gpu_times();
        done.gpu_ms = times.frame_ms;
        done.textured_pass_ms = times.textured_pass_ms;
        done.upload = record.upload;
        done.presented = record.presented;
        if (record.identity_checked) done.identity = identity_result(readback);
        if (record.quality_measured) {
            readback.quality.invalidate();
            done.quality = sum_quality_bins(readback.quality);
        }
        return done;
    }
    static IdentityCheckResult identity_result(const Readback& readback) {
        readback.identity_counts.invalidate();
        IdentityCheckCounts counts{};
        std::memcpy(&counts, readback.identity_counts.mapped(), sizeof(counts));
        return {true, counts.pixels, counts.violations, counts.coarser};
    }
    void begin_colour_pass(VkCommandBuffer commands, VkImageView depth_view = VK_NULL_HANDLE);
    void record_forward_colour_pass(VkCommandBuffer commands, const GroundPlanePushConstants& push,
                                    const std::vector<PlaneDraw>& planes);
    void record_scene_colour_pass(VkCommandBuffer commands, ScenePushConstants push,
                                  const VulkanSceneGeometry& scene, bool count_quality,
                                  Readback& readback);
    void record_quality_clear(VkCommandBuffer commands, VkPipelineStageFlags2 counting_stage);
    void record_quality_copy(VkCommandBuffer commands, VkPipelineStageFlags2 counting_stage,
                             Readback& readback);
    void record_sample_positions(VkCommandBuffer commands, const GroundPlanePushConstants& push,
                                 const std::vector<PlaneDraw>& planes);
    void record_deferred_colour_pass(VkCommandBuffer commands, const FrameDesc& frame,
                                     const GroundPlanePushConstants& push,
                                     const std::vector<PlaneDraw>& planes, Readback& readback);
    void record_identity_check(VkCommandBuffer commands, Readback& readback);
    GroundPlanePushConstants push_for(const FrameDesc& frame) const;
    void record_feedback_pass(VkCommandBuffer commands, const FrameDesc& frame, Readback& readback);
    void record_copies_and_blit(VkCommandBuffer commands, const FrameDesc& frame,
                                Readback& readback, VulkanSwapchain* swapchain,
                                std::optional<std::uint32_t> image_index);
    void record_frame(VkCommandBuffer commands, FrameSlot& slot, const FrameDesc& frame,
                      Readback& readback, VulkanSwapchain* swapchain,
                      std::optional<std::uint32_t> image_index);
};

// The colour image made ready for this frame's pass (after the previous frame's writes and
// reads of it), cleared to the sky, rendering begun on it (with `depth` where given).
void VulkanRenderer::State::begin_colour_pass(VkCommandBuffer commands, VkImageView depth_view) {
    record_image_barrier(
        commands, colour.get(), VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
        VK_PIPELINE_STAGE_2_COLOR_ATTACHMENT_OUTPUT_BIT | VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT,
        VK_ACCESS_2_COLOR_ATTACHMENT_WRITE_BIT, VK_PIPELINE_STAGE_2_COLOR_ATTACHMENT_OUTPUT_BIT,
        VK_ACCESS_2_COLOR_ATTACHMENT_WRITE_BIT | VK_ACCESS_2_COLOR_ATTACHMENT_READ_BIT);
    VkClearValue sky{};
    std::memcpy(sky.color.float32, settings.clear_colour.data(), sizeof(sky.color.float32));
    begin_rendering(commands, colour.view(), extent(), sky, depth_view);
    set_viewport(commands, extent());
}

// The colour pass drawn and sampled by the raster pipeline. The previous frame's writes and
// reads of the image come first.
void VulkanRenderer::State::record_forward_colour_pass(VkCommandBuffer commands,
                                                       const GroundPlanePushConstants& push,
                                                       const std::vector<PlaneDraw>& planes) {
    begin_colour_pass(commands);
    vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_GRAPHICS, pipelines.colour());
    draw_planes(commands, pipelines.layout(), push, planes);
    vkCmdEndRendering(commands);
}

// The scene's colour pass: as the forward pass, with a depth target and the mesh pipelines, the
// opaque draws' depth laid down first (a pre-pass); where count_quality, into the quality bins,
// copied to the frame's readback after it.
void VulkanRenderer::State::record_scene_colour_pass(VkCommandBuffer commands,
                                                     ScenePushConstants push,
                                                     const VulkanSceneGeometry& scene,
                                                     bool count_quality, Readback& readback) {
    if (count_quality) {
        make_quality_counts();
        record_quality_clear(commands, VK_PIPELINE_STAGE_2_FRAGMENT_SHADER_BIT);
        push.quality = quality_counts.device_address();
    }
    record_depth_barrier(commands, depth.get());
    begin_colour_pass(commands, depth.view());
    bind_scene_sets(commands);
    draw_depth_prepass(commands, scene_pipelines->layout(), push, scene,
                       scene_pipelines->depth_prepass());
    draw_scene(commands, scene_pipelines->layout(), push, scene, scene_pipelines->colour());
    vkCmdEndRendering(commands);
    if (count_quality)
        record_quality_copy(commands, VK_PIPELINE_STAGE_2_FRAGMENT_SHADER_BIT, readback);
}

// The quality bins start at zero, once the previous frame's counting and copy are done with
// them, and the clear is done before this frame's counting (in counting_stage).
void VulkanRenderer::State::record_quality_clear(VkCommandBuffer commands,
                                                 VkPipelineStageFlags2 counting_stage) {
    record_memory_barrier(commands, counting_stage | VK_PIPELINE_STAGE_2_COPY_BIT,
                          VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT, VK_PIPELINE_STAGE_2_CLEAR_BIT,
                          VK_ACCESS_2_TRANSFER_WRITE_BIT);
    vkCmdFillBuffer(commands, quality_counts.get(), 0, VK_WHOLE_SIZE, 0);
    // (Some validation layers take vkCmdFillBuffer for a copy: both stages.)
    record_memory_barrier(
        commands, VK_PIPELINE_STAGE_2_CLEAR_BIT | VK_PIPELINE_STAGE_2_COPY_BIT,
        VK_ACCESS_2_TRANSFER_WRITE_BIT, counting_stage,
        VK_ACCESS_2_SHADER_STORAGE_READ_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT);
}

// The counts to the host with the frame's other copies (record_frame's barrier before the host
// reads), once the counting (in counting_stage) is done.
void VulkanRenderer::State::record_quality_copy(VkCommandBuffer commands,
                                                VkPipelineStageFlags2 counting_stage,
                                                Readback& readback) {
    // The clear's writes too: a frame that counted nothing copies what the clear wrote.
    record_memory_barrier(
        commands, counting_stage | VK_PIPELINE_STAGE_2_CLEAR_BIT | VK_PIPELINE_STAGE_2_COPY_BIT,
        VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT | VK_ACCESS_2_TRANSFER_WRITE_BIT,
        VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_READ_BIT);
    const VkBufferCopy bins{0, 0, quality_bins * quality_bin_bytes};
    vkCmdCopyBuffer(commands, quality_counts.get(), readback.quality.get(), 1, &bins);
}

// The raster half of the deferred pass: uv and level of detail per pixel, copied to a buffer
// for the compute half (which reads it by device address: no descriptors).
void VulkanRenderer::State::record_sample_positions(VkCommandBuffer commands,
                                                    const GroundPlanePushConstants& push,
                                                    const std::vector<PlaneDraw>& planes) {
    record_image_barrier(commands, sample_positions.get(), VK_IMAGE_LAYOUT_UNDEFINED,
                         VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL, VK_PIPELINE_STAGE_2_COPY_BIT,
                         VK_ACCESS_2_NONE, VK_PIPELINE_STAGE_2_COLOR_ATTACHMENT_OUTPUT_BIT,
                         VK_ACCESS_2_COLOR_ATTACHMENT_WRITE_BIT);
    begin_rendering(commands, sample_positions.view(), extent(), VkClearValue{});
    set_viewport(commands, extent());
    vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_GRAPHICS, pipelines.sample_positions());
    draw_planes(commands, pipelines.layout(), push, planes);
    vkCmdEndRendering(commands);
    record_image_barrier(commands, sample_positions.get(), VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
                         VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                         VK_PIPELINE_STAGE_2_COLOR_ATTACHMENT_OUTPUT_BIT,
                         VK_ACCESS_2_COLOR_ATTACHMENT_WRITE_BIT, VK_PIPELINE_STAGE_2_COPY_BIT,
                         VK_ACCESS_2_TRANSFER_READ_BIT);
    // The previous frame's compute pass has read the copy before it is written again.
    record_memory_barrier(commands, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_NONE,
                          VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_NONE);
    VkBufferImageCopy region{};
    region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.imageExtent = {settings.width, settings.height, 1};
    vkCmdCopyImageToBuffer(commands, sample_positions.get(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                           sample_position_copy.get(), 1, &region);
}

// Sample positions, then the compute pass that samples the texture there, then its colours
// into the colour image, which is left as the forward pass leaves it (colour attachment).
void VulkanRenderer::State::record_deferred_colour_pass(VkCommandBuffer commands,
                                                        const FrameDesc& frame,
                                                        const GroundPlanePushConstants& push,
                                                        const std::vector<PlaneDraw>& planes,
                                                        Readback& readback) {
    record_sample_positions(commands, push, planes);
    // Its second barrier also orders the sample positions' copy (and the previous frame's reads
    // of the colours) before the shading.
    record_quality_clear(commands, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT);
    ShadePushConstants shading{};
    shading.indirection = push.indirection;
    shading.directory = push.directory;
    shading.positions = sample_position_copy.device_address();
    shading.colours = shaded_colours.device_address();
    shading.quality = quality_counts.device_address();
    shading.width = settings.width;
    shading.height = settings.height;
    shading.sky = pack_unorm8(settings.clear_colour);
    shading.quality_bins = quality_bins;
    shading.lod_bias = frame.lod_bias;
    shading.max_anisotropy = settings.max_anisotropy;
    shade.record(commands, shading);
    // Its barrier also orders the shaded colours' writes before their copy below.
    record_quality_copy(commands, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, readback);
    record_image_barrier(
        commands, colour.get(), VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
        VK_PIPELINE_STAGE_2_COLOR_ATTACHMENT_OUTPUT_BIT | VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT,
        VK_ACCESS_2_COLOR_ATTACHMENT_WRITE_BIT, VK_PIPELINE_STAGE_2_COPY_BIT,
        VK_ACCESS_2_TRANSFER_WRITE_BIT);
    VkBufferImageCopy region{};
    region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.imageExtent = {settings.width, settings.height, 1};
    vkCmdCopyBufferToImage(commands, shaded_colours.get(), colour.get(),
                           VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
    record_image_barrier(commands, colour.get(), VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                         VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL, VK_PIPELINE_STAGE_2_COPY_BIT,
                         VK_ACCESS_2_TRANSFER_WRITE_BIT,
                         VK_PIPELINE_STAGE_2_COLOR_ATTACHMENT_OUTPUT_BIT |
                             VK_PIPELINE_STAGE_2_COPY_BIT | VK_PIPELINE_STAGE_2_BLIT_BIT,
                         VK_ACCESS_2_COLOR_ATTACHMENT_WRITE_BIT |
                             VK_ACCESS_2_COLOR_ATTACHMENT_READ_BIT | VK_ACCESS_2_TRANSFER_READ_BIT);
}

// The identity check over the positions the deferred pass recorded (still in their buffer, which
// the next frame rewrites only after every compute pass before it): its counts zeroed, added to
// by the check's atomics, copied to the frame's readback (made visible to the host with the
// other copies).
void VulkanRenderer::State::record_identity_check(VkCommandBuffer commands, Readback& readback) {
    // The previous frame's atomics and its copy of the counts before they are zeroed.
    record_memory_barrier(commands,
                          VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_2_COPY_BIT,
                          VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT,
                          VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
    vkCmdFillBuffer(commands, identity_counts.get(), 0, VK_WHOLE_SIZE, 0);
    record_memory_barrier(
        commands, VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
        VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
        VK_ACCESS_2_SHADER_STORAGE_READ_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT);
    IdentityCheckPushConstants check{};
    check.indirection = indirection.device_address();
    check.directory = textures.device_address();
    check.positions = sample_position_copy.device_address();
    check.counts = identity_counts.device_address();
    check.width = settings.width;
    check.height = settings.height;
    check.identity_tag = settings.identity_texture_tag;
    identity_check->record(commands, check);
    record_memory_barrier(commands, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                          VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT, VK_PIPELINE_STAGE_2_COPY_BIT,
                          VK_ACCESS_2_TRANSFER_READ_BIT);
    const VkBufferCopy region{0, 0, sizeof(IdentityCheckCounts)};
    vkCmdCopyBuffer(commands, identity_counts.get(), readback.identity_counts.get(), 1, &region);
}

GroundPlanePushConstants VulkanRenderer::State::push_for(const FrameDesc& frame) const {
    GroundPlanePushConstants push{};
    std::memcpy(push.view_projection, frame.view_projection.data(), sizeof(push.view_projection));
    push.indirection = indirection.device_address();
    push.directory = textures.device_address();
    push.mode = static_cast<std::uint32_t>(frame.mode);
    push.max_anisotropy = settings.max_anisotropy;
    return push;
}

// The rest of a frame, after its feedback pass: the colour pass, the identity check, the
// overlay, the copies to the host and the blit.
void VulkanRenderer::State::record_frame(VkCommandBuffer commands, FrameSlot& slot,
                                         const FrameDesc& frame, Readback& readback,
                                         VulkanSwapchain* swapchain,
                                         std::optional<std::uint32_t> image_index) {
    GroundPlanePushConstants push = push_for(frame);
    const std::vector<PlaneDraw> planes = planes_of(frame);

    slot.write_textured_pass_start(commands);
    const bool deferred = draws_deferred(frame);
    // Deferred: the positions keep the unbiased level, the shading pass adds the bias.
    push.lod_bias = deferred ? 0.0f : frame.lod_bias;
    if (frame.scene) {
        const VulkanCommandLabel label(context, commands, "viewer scene colour pass");
        make_scene_targets(*frame.scene);
        record_scene_colour_pass(commands, scene_push(push, *frame.scene, submitted + 1),
                                 *frame.scene, counts_scene_quality(frame), readback);
    } else if (deferred) {
        const VulkanCommandLabel label(context, commands, "viewer deferred colour pass");
        record_deferred_colour_pass(commands, frame, push, planes, readback);
    } else {
        const VulkanCommandLabel label(context, commands, "viewer forward colour pass");
        record_forward_colour_pass(commands, push, planes);
    }
    slot.write_textured_pass_end(commands);
    if (deferred && identity_check && !frame.scene) {
        const VulkanCommandLabel label(context, commands, "viewer identity check");
        record_identity_check(commands, readback);
    }
    if (frame.overlay) {
        const VulkanCommandLabel label(context, commands, "viewer overlay");
        frame.overlay(commands,
                      OverlayTarget{colour.get(), colour.view(), colour_format_used, extent()});
    }
    record_copies_and_blit(commands, frame, readback, swapchain, image_index);
}

// The feedback pass, at its reduced size, and its copy to the host: the first part of a frame,
// signalled apart so that the feedback is read without waiting for the colour pass.
void VulkanRenderer::State::record_feedback_pass(VkCommandBuffer commands, const FrameDesc& frame,
                                                 Readback& readback) {
    GroundPlanePushConstants push = push_for(frame);
    const std::vector<PlaneDraw> planes = planes_of(frame);
    if (frame.scene) make_scene_targets(*frame.scene);
    std::optional<VulkanCommandLabel> label;
    label.emplace(context, commands, "viewer feedback pass");
    record_image_barrier(
        commands, feedback.get(), VK_IMAGE_LAYOUT_UNDEFINED,
        VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
        VK_PIPELINE_STAGE_2_COLOR_ATTACHMENT_OUTPUT_BIT | VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT,
        VK_ACCESS_2_COLOR_ATTACHMENT_WRITE_BIT, VK_PIPELINE_STAGE_2_COLOR_ATTACHMENT_OUTPUT_BIT,
        VK_ACCESS_2_COLOR_ATTACHMENT_WRITE_BIT | VK_ACCESS_2_COLOR_ATTACHMENT_READ_BIT);
    VkClearValue nothing{};
    nothing.color.uint32[0] = vt::FeedbackEntry::empty;
    push.lod_bias = -std::log2(float(settings.feedback_divisor)) + frame.lod_bias;
    if (frame.scene) {
        record_depth_barrier(commands, feedback_depth.get());
        begin_rendering(commands, feedback.view(), feedback_extent(), nothing,
                        feedback_depth.view());
        set_viewport(commands, feedback_extent());
        bind_scene_sets(commands);
        draw_scene(commands, scene_pipelines->layout(),
                   scene_push(push, *frame.scene, submitted + 1), *frame.scene,
                   scene_pipelines->feedback());
    } else {
        begin_rendering(commands, feedback.view(), feedback_extent(), nothing);
        set_viewport(commands, feedback_extent());
        vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_GRAPHICS, pipelines.feedback());
        draw_planes(commands, pipelines.layout(), push, planes);
    }
    vkCmdEndRendering(commands);

    label.emplace(context, commands, "viewer feedback copy");
    record_image_barrier(commands, feedback.get(), VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
                         VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                         VK_PIPELINE_STAGE_2_COLOR_ATTACHMENT_OUTPUT_BIT,
                         VK_ACCESS_2_COLOR_ATTACHMENT_WRITE_BIT, VK_PIPELINE_STAGE_2_COPY_BIT,
                         VK_ACCESS_2_TRANSFER_READ_BIT);
    VkBufferImageCopy region{};
    region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.imageExtent = {feedback_extent().width, feedback_extent().height, 1};
    vkCmdCopyImageToBuffer(commands, feedback.get(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                           readback.feedback.get(), 1, &region);
    record_memory_barrier(commands, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                          VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT);
}

void VulkanRenderer::State::record_copies_and_blit(VkCommandBuffer commands, const FrameDesc& frame,
                                                   Readback& readback, VulkanSwapchain* swapchain,
                                                   std::optional<std::uint32_t> image_index) {
    std::optional<VulkanCommandLabel> label;
    label.emplace(context, commands, "viewer readback copies");
    const bool present = swapchain && image_index;
    if (frame.capture || present) {
        record_image_barrier(commands, colour.get(), VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
                             VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                             VK_PIPELINE_STAGE_2_COLOR_ATTACHMENT_OUTPUT_BIT,
                             VK_ACCESS_2_COLOR_ATTACHMENT_WRITE_BIT,
                             VK_PIPELINE_STAGE_2_COPY_BIT | VK_PIPELINE_STAGE_2_BLIT_BIT,
                             VK_ACCESS_2_TRANSFER_READ_BIT);
    }
    if (frame.capture) {
        VkBufferImageCopy region{};
        region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
        region.imageExtent = {settings.width, settings.height, 1};
        vkCmdCopyImageToBuffer(commands, colour.get(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                               readback.colour.get(), 1, &region);
    }
    record_memory_barrier(commands, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                          VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT);
    label.reset();
    if (present) {
        const VulkanCommandLabel present_label(context, commands, "viewer present blit");
        VkImage target = swapchain->image(*image_index);
        // After the acquire semaphore, which the submission waits for at the blit stage.
        record_image_barrier(commands, target, VK_IMAGE_LAYOUT_UNDEFINED,
                             VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_2_BLIT_BIT, 0,
                             VK_PIPELINE_STAGE_2_BLIT_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
        const VkExtent2D to = swapchain->extent();
        VkImageBlit2 blit{VK_STRUCTURE_TYPE_IMAGE_BLIT_2};
        blit.srcSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
        blit.srcOffsets[1] = {int(settings.width), int(settings.height), 1};
        blit.dstSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
        blit.dstOffsets[1] = {int(to.width), int(to.height), 1};
        VkBlitImageInfo2 blit_info{VK_STRUCTURE_TYPE_BLIT_IMAGE_INFO_2};
        blit_info.srcImage = colour.get();
        blit_info.srcImageLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
        blit_info.dstImage = target;
        blit_info.dstImageLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
        blit_info.regionCount = 1;
        blit_info.pRegions = &blit;
        const bool same_size = to.width == settings.width && to.height == settings.height;
        blit_info.filter = same_size ? VK_FILTER_NEAREST : VK_FILTER_LINEAR;
        vkCmdBlitImage2(commands, &blit_info);
        record_image_barrier(commands, target, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                             VK_IMAGE_LAYOUT_PRESENT_SRC_KHR, VK_PIPELINE_STAGE_2_BLIT_BIT,
                             VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_NONE, 0);
    }
}

VulkanRenderer::VulkanRenderer(VulkanContext& context, VulkanIndirectionTable& indirection,
                               VulkanTextureDirectory& textures, VulkanRendererSettings settings) {
    if (settings.width == 0 || settings.height == 0 || settings.feedback_divisor == 0 ||
        settings.frames_in_flight == 0) {
        throw Error(Errc::invalid_argument, "VulkanRenderer",
                    "width, height, feedback_divisor and frames_in_flight must be positive",
                    detail::concat(settings.width, "x", settings.height,
                                   " feedback_divisor=", settings.feedback_divisor));
    }
    if (!(settings.max_anisotropy >= 1.0f && settings.max_anisotropy <= 16.0f)) {
        throw Error(Errc::invalid_argument, "VulkanRenderer", "max_anisotropy must be 1 to 16",
                    detail::concat("max_anisotropy=", settings.max_anisotropy));
    }
    if (settings.identity_check && !settings.deferred_texturing) {
        throw Error(Errc::invalid_argument, "VulkanRenderer",
                    "identity_check reads the positions of deferred texturing: it needs "
                    "deferred_texturing");
    }
    if (settings.frames_in_flight != indirection.frames_in_flight()) {
        throw Error(Errc::invalid_argument, "VulkanRenderer",
                    "frames_in_flight must equal the indirection table's",
                    detail::concat("renderer=", settings.frames_in_flight,
                                   " table=", indirection.frames_in_flight()));
    }
    state_ = std::make_unique<State>(context, indirection, textures, settings);
    State& s = *state_;
    s.make_targets();
    for (std::uint32_t i = 0; i < settings.frames_in_flight; ++i) s.slots.emplace_back(context);
    s.records.resize(settings.frames_in_flight);
    s.readbacks.resize(settings.frames_in_flight + 1);
}

VulkanRenderer::VulkanRenderer(VulkanContext& context, VirtualTextureStreaming& streaming,
                               VulkanRendererSettings settings)
    : VulkanRenderer(context, streaming.indirection(), streaming.directory(), settings) {
    state_->streaming = &streaming;
}

// Nothing the device may still use is destroyed under it: a frame past its deadline (a slow
// device, a machine under load) is given a longer one, and a device that has not finished even
// then keeps the renderer's objects (they are left allocated, reported) rather than reading freed
// memory.
VulkanRenderer::~VulkanRenderer() {
    try {
        state_->wait_for(state_->submitted);
        return;
    } catch (const Error& error) {
        state_->context.log().error("vulkan renderer: waiting for frames in flight: ",
                                    error.what());
    }
    constexpr std::uint64_t teardown_ns = 120ull * 1000 * 1000 * 1000;
    if (state_->timeline.wait(state_->submitted, teardown_ns)) return;
    state_->context.log().error("vulkan renderer: the device has not finished frame ",
                                state_->submitted,
                                " in 120 s more: its objects are left allocated, not freed "
                                "while it may still use them");
    static_cast<void>(state_.release());
}

std::optional<CompletedFrame> VulkanRenderer::render(const FrameDesc& frame) {
    trace::Scope trace_scope("viewer", "render", {.frame = frame.user_tag});
    State& s = *state_;
    const std::uint64_t number = s.submitted + 1;
    const std::uint32_t slot_index = s.slot_of(number);
    FrameSlot& slot = s.slots[slot_index];
    FrameRecord& record = s.records[slot_index];

    std::optional<CompletedFrame> done;
    if (record.frame != 0) {
        s.wait_for(record.frame);
        done = s.collect(slot_index);
    }
    // A ring one longer than the slots: the buffers of the frame handed back above are not
    // rewritten until the next render() call.
    const std::uint32_t readback_index = std::uint32_t((number - 1) % s.readbacks.size());
    Readback& readback = s.readbacks[readback_index];
    const VkExtent2D feedback_extent = s.feedback_extent();
    const VkDeviceSize feedback_bytes =
        VkDeviceSize(feedback_extent.width) * feedback_extent.height * sizeof(vt::FeedbackEntry);
    if (!readback.feedback || readback.feedback.size() != feedback_bytes) {
        readback.feedback =
            VulkanBuffer(s.context, feedback_bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                         BufferMemory::readback, "vtpage feedback readback");
    }
    if (!readback.quality) {
        readback.quality = VulkanBuffer(s.context, quality_bins * quality_bin_bytes,
                                        VK_BUFFER_USAGE_TRANSFER_DST_BIT, BufferMemory::readback,
                                        "vtpage quality readback");
    }
    const VkDeviceSize colour_bytes = VkDeviceSize(s.settings.width) * s.settings.height * 4;
    if (frame.capture && (!readback.colour || readback.colour.size() != colour_bytes)) {
        readback.colour = VulkanBuffer(s.context, colour_bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                       BufferMemory::readback, "vtpage colour readback");
    }
    const bool identity_checked =
        s.identity_check && frame.mode == RenderMode::textured && !frame.scene;
    if (identity_checked && !readback.identity_counts) {
        readback.identity_counts =
            VulkanBuffer(s.context, sizeof(IdentityCheckCounts), VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                         BufferMemory::readback, "vtpage identity check readback");
    }

    std::optional<std::uint32_t> image_index;
    if (frame.present_to) image_index = frame.present_to->acquire(slot.image_acquired());

    const FrameSlot::Commands commands = slot.begin();
    slot.write_start_timestamp(commands.first);
    IndirectionUpload upload;
    std::uint64_t user_tag = 0;
    {
        State::BegunFrame begun = s.begin_streaming(commands.first, slot_index, frame.user_tag);
        upload = begun.upload;
        user_tag = begun.user_tag;
        trace_scope.set_frame(user_tag);
        s.record_feedback_pass(commands.first, frame, readback);
        vk_check(vkEndCommandBuffer(commands.first), "VulkanRenderer::render",
                 "vkEndCommandBuffer");
        s.record_frame(commands.rest, slot, frame, readback, frame.present_to, image_index);
        slot.write_end_timestamp(commands.rest);
        vk_check(vkEndCommandBuffer(commands.rest), "VulkanRenderer::render", "vkEndCommandBuffer");

        // Timeline waits, for both submissions: each waits for what the frame waits for.
        std::vector<VkSemaphoreSubmitInfo> waits;
        for (const FrameWait& wait : frame.waits) {
            VkSemaphoreSubmitInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
            info.semaphore = wait.semaphore;
            info.value = wait.value;
            info.stageMask = wait.stages;
            waits.push_back(info);
        }
        if (begun.streamed) {
            const auto theirs = begun.streamed->waits();
            waits.insert(waits.end(), theirs.begin(), theirs.end());
        } else if (upload.wait_semaphore) {  // CUDA fills of the pages this frame may now reach
            VkSemaphoreSubmitInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
            info.semaphore = upload.wait_semaphore;
            info.value = upload.wait_value;
            info.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
            waits.push_back(info);
        }
        std::vector<VkSemaphoreSubmitInfo> first_signals(1,
                                                         {VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO});
        first_signals[0].semaphore = s.feedback_timeline.get();
        first_signals[0].value = number;
        first_signals[0].stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        std::vector<VkSemaphoreSubmitInfo> rest_waits = waits;
        if (image_index) {
            VkSemaphoreSubmitInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
            info.semaphore = slot.image_acquired();
            info.stageMask = VK_PIPELINE_STAGE_2_BLIT_BIT;
            rest_waits.push_back(info);
        }
        std::vector<VkSemaphoreSubmitInfo> signals(1, {VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO});
        signals[0].semaphore = s.timeline.get();
        signals[0].value = number;
        signals[0].stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        if (image_index) {
            VkSemaphoreSubmitInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
            info.semaphore = frame.present_to->render_finished(*image_index);
            info.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
            signals.push_back(info);
        }
        if (begun.streamed) {  // the streaming's frame timeline, which its shutdown waits for
            const auto theirs = begun.streamed->signals();
            signals.insert(signals.end(), theirs.begin(), theirs.end());
        }
        // Two batches in one call: the feedback pass's, signalled apart, then the rest.
        VkCommandBufferSubmitInfo first{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
        first.commandBuffer = commands.first;
        VkCommandBufferSubmitInfo rest{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
        rest.commandBuffer = commands.rest;
        const VkSubmitInfo2 batches[2] = {State::batch(first, waits, first_signals),
                                          State::batch(rest, rest_waits, signals)};
        s.context.submit(batches, VK_NULL_HANDLE, "viewer frame");
        if (begun.streamed) begun.streamed->submitted();  // else the lock ends with the scope
    }
    s.submitted = number;
    record.frame = number;
    record.user_tag = user_tag;
    record.readback = readback_index;
    record.width = s.settings.width;
    record.height = s.settings.height;
    record.feedback_width = feedback_extent.width;
    record.feedback_height = feedback_extent.height;
    record.captured = frame.capture;
    record.feedback_taken = false;
    record.identity_checked = identity_checked;
    record.quality_measured = s.draws_deferred(frame) || s.counts_scene_quality(frame);
    record.upload = upload;
    record.presented = image_index && frame.present_to->present(*image_index);
    return done;
}

// Frames are handed back in order: the oldest in flight first, and only once (a frame handed
// back has record.frame 0). The readback ring is one longer than the slots, so a frame handed
// back here keeps its buffers until the next render() as well.
std::optional<CompletedFrame> VulkanRenderer::take_completed() {
    State& s = *state_;
    const std::uint64_t finished = s.timeline.value();
    for (std::uint64_t number = s.oldest_in_flight(); number <= std::min(s.submitted, finished);
         ++number) {
        FrameRecord& record = s.records[s.slot_of(number)];
        if (record.frame != number) continue;  // handed back already
        CompletedFrame done = s.collect(s.slot_of(number));
        record.frame = 0;
        return done;
    }
    return std::nullopt;
}

// The feedback pass is submitted and signalled apart from the rest of its frame, so its feedback
// is there before the frame's colour pass has run: in a frame loop bound by the device, a frame's
// feedback is read one to two frames sooner than take_completed() would give it.
std::optional<FrameFeedback> VulkanRenderer::take_feedback() {
    State& s = *state_;
    const std::uint64_t finished = s.feedback_timeline.value();
    for (std::uint64_t number = s.oldest_in_flight(); number <= std::min(s.submitted, finished);
         ++number) {
        FrameRecord& record = s.records[s.slot_of(number)];
        if (record.frame != number || record.feedback_taken) continue;  // handed back already
        record.feedback_taken = true;
        return FrameFeedback{.frame = number,
                             .user_tag = record.user_tag,
                             .feedback = s.feedback_of(record),
                             .feedback_width = record.feedback_width,
                             .feedback_height = record.feedback_height};
    }
    return std::nullopt;
}

std::vector<CompletedFrame> VulkanRenderer::finish() {
    State& s = *state_;
    std::vector<CompletedFrame> done;
    for (std::uint64_t number = s.oldest_in_flight(); number <= s.submitted; ++number) {
        FrameRecord& record = s.records[s.slot_of(number)];
        if (record.frame != number) continue;  // handed back already
        s.wait_for(number);
        done.push_back(s.collect(s.slot_of(number)));
        record.frame = 0;
    }
    return done;
}

void VulkanRenderer::resize(std::uint32_t width, std::uint32_t height) {
    State& s = *state_;
    if (width == 0 || height == 0) {
        throw Error(Errc::invalid_argument, "VulkanRenderer::resize", "an empty size",
                    detail::concat(width, "x", height));
    }
    s.wait_for(s.submitted);
    for (FrameRecord& record : s.records) record.frame = 0;
    s.settings.width = width;
    s.settings.height = height;
    s.make_targets();
}

std::uint32_t VulkanRenderer::width() const noexcept { return state_->settings.width; }
std::uint32_t VulkanRenderer::height() const noexcept { return state_->settings.height; }
std::uint32_t VulkanRenderer::feedback_width() const noexcept {
    return state_->feedback_extent().width;
}
std::uint32_t VulkanRenderer::feedback_height() const noexcept {
    return state_->feedback_extent().height;
}
float VulkanRenderer::feedback_lod_bias() const noexcept {
    return -std::log2(float(state_->settings.feedback_divisor));
}
VkFormat VulkanRenderer::colour_format() const noexcept { return colour_format_used; }
std::uint64_t VulkanRenderer::frames_submitted() const noexcept { return state_->submitted; }
const VulkanTimeline& VulkanRenderer::timeline() const noexcept { return state_->timeline; }

}  // namespace vtpage::viewer
