// The viewer's renderer: draws ground planes textured with virtual textures for a camera (one
// plane, or a scene of planes each sampling its own texture through the one indirection table),
// into its own offscreen colour image (headless) and, if asked, onto a swapchain image; runs the
// feedback pass at a reduced resolution; hands the feedback of completed frames back to the app
// (for the streamer) and reads the image back for screenshots.
//
//   VulkanRenderer renderer(context, indirection, textures, {.width = 1920, .height = 1080});
//   FrameDesc frame;  frame.view_projection = ...;  frame.user_tag = page_table.begin_frame();
//   if (auto done = renderer.render(frame)) {
//       streamer.request(feedback.process(done->feedback).requests);  // what its pixels wanted
//       page_table.complete_frame(done->user_tag);    // its pages may be evicted now
//   }
//
// Frames in flight: render() records and submits frame N and returns frame N - frames_in_flight,
// which it waited for to reuse its command buffer (and whose results it hands back), unless
// take_completed() handed it back sooner; finish() waits for the rest. Every submission signals the
// renderer's timeline with its frame number.
//
// One frame, in order on the queue, in two submissions. The first: the texture directory's and
// the indirection table's uploads (under the table's submission lock, see
// vulkan_indirection_table.hpp; given the streaming facade, its begin_frame records them and holds
// that lock until the submit), the feedback pass and its copy to the host; it signals a feedback
// timeline of its own, so that take_feedback() reads the feedback while the rest still runs. The
// second: the colour pass, the identity check where asked, the app's overlay hook, the copies to
// the host, the blit to the swapchain image; it signals the frame's timeline. Both submissions
// wait for FrameDesc::waits and for the fill timeline value the indirection upload needs (CUDA
// fills).
#pragma once

#include <vulkan/vulkan.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "renderer/sample_quality.hpp"
#include "vtpage/interop/vulkan_indirection_table.hpp"
#include "vtpage/interop/vulkan_timeline.hpp"
#include "vtpage/streaming/layout/feedback_entry.hpp"

namespace vtpage {
class VirtualTextureStreaming;
class VulkanContext;
class VulkanTextureDirectory;
}  // namespace vtpage

namespace vtpage::viewer {

class VulkanSwapchain;
class VulkanSceneGeometry;
class VulkanReferenceTextures;

enum class RenderMode : std::uint32_t {
    textured = 0,
    residency = 1,   // green where the wanted level was resident, yellow to red as it fell back
    mip_levels = 2,  // a colour per mip level actually sampled; tile edges darkened
};

struct VulkanRendererSettings {
    std::uint32_t width = 1280;
    std::uint32_t height = 720;
    // The feedback pass renders ceil(width / d) x ceil(height / d) pixels.
    std::uint32_t feedback_divisor = 4;
    // Must equal the indirection table's.
    std::uint32_t frames_in_flight = 2;
    std::array<float, 4> clear_colour = {0.45f, 0.6f, 0.8f, 1.0f};  // the sky
    // How long to wait for a frame the device has not finished before giving up with an error
    // (Errc::busy, naming what the frame waits for) instead of hanging; 0: by the device, 30 s on
    // a GPU, 300 s on a CPU device. A software rasterizer compiles a pipeline's shaders at its
    // first draw, inside the frame: lavapipe's first frame of the scene parity test's scene took
    // over 30 s on two idle cores with Mesa's shader cache empty.
    std::uint32_t frame_timeout_ms = 0;
    // The textured view sampled by a compute pass at the uv and level of detail that a raster
    // pass records per pixel (deferred), or by the raster pass itself (forward). Both give the
    // same pixels; deferred runs on every core of GPUs that shade fragments on a few (the H100:
    // docs/gpu.md). The overlay modes always draw forward.
    bool deferred_texturing = true;
    // Anisotropic filtering in the image and the feedback (vt_sample_grad_aniso and
    // vt_feedback_aniso): up to this many probes along a footprint's major axis, 1 to 16; 1 is
    // trilinear. The deferred pass takes a pixel's derivatives from its neighbours' positions.
    float max_anisotropy = 1.0f;
    // Checks every textured frame of the identity texture (vt::IdentitySource tagged
    // identity_texture_tag): a compute pass over the deferred pass's positions reads, unfiltered
    // and through the frame's own indirection table, the nearest texel of each level a pixel
    // samples (the wanted one or the coarser one it falls back to) and counts the pixels whose
    // words are not the (mip, tile, texel) their coordinates map to: what a page refilled under
    // the frame shows (CompletedFrame::identity). Needs deferred_texturing.
    bool identity_check = false;
    std::uint32_t identity_texture_tag = 1;
    // A scene's isotropic samples through vtpage take the device's level of detail (read from a
    // VulkanLodProbe), so that they filter between the levels, with the weights, that an
    // ordinary image would; false: the exact formula's (vt_formula_lod). The planes' passes
    // take the formula's.
    bool scene_lod_from_device = true;
    // The hardware reference (--reference-textures): a scene's colour pass samples these
    // ordinary images, texture id i from element i, instead of the virtual textures (the
    // feedback pass is the same). It must outlive the renderer.
    const VulkanReferenceTextures* reference_textures = nullptr;
};

// A timeline semaphore wait for a frame's submissions (both wait for it).
struct FrameWait {
    VkSemaphore semaphore = VK_NULL_HANDLE;
    std::uint64_t value = 0;
    VkPipelineStageFlags2 stages = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
};

// What the overlay hook draws into: the offscreen colour image, in
// VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL before and after the hook.
struct OverlayTarget {
    VkImage image = VK_NULL_HANDLE;
    VkImageView view = VK_NULL_HANDLE;
    VkFormat format = VK_FORMAT_UNDEFINED;
    VkExtent2D extent{};
};

// One plane of a frame: it covers origin + [0, extent[0]] x [0, extent[1]] in x and z at y = 0,
// uv = ((x, z) - origin) / extent (the texture's width and height give it its aspect), and
// samples texture `texture_id`. Planes of a frame must not overlap (there is no depth test).
struct PlaneDraw {
    std::uint32_t texture_id = 0;
    std::array<float, 2> origin = {0.0f, 0.0f};
    std::array<float, 2> extent = {1.0f, 1.0f};
};

struct FrameDesc {
    // World to clip, column-major (glm's layout), Vulkan clip space (y down, depth 0..1).
    std::array<float, 16> view_projection{};
    // The planes to draw, one draw each in every pass; the feedback names each pixel's texture.
    // Empty: the one plane of texture_id over [0, plane_extent] (origin 0).
    std::vector<PlaneDraw> planes;
    std::uint32_t texture_id = 0;
    std::array<float, 2> plane_extent = {1.0f, 1.0f};
    // A mesh scene drawn instead of the planes: forward, depth tested, blended draws last; the
    // feedback pass asks for one of each pixel's material textures, turning frame by frame. It
    // must outlive the frames that name it. The deferred pass, the identity check and the
    // quality measure are the planes': a scene frame has none of them.
    const VulkanSceneGeometry* scene = nullptr;
    RenderMode mode = RenderMode::textured;
    // Added to every pixel's level of detail (>= 0: coarser), in the image and in the feedback
    // (the streaming governor's lever); the quality measure counts it as levels missing.
    float lod_bias = 0.0f;
    // Handed back with the completed frame (e.g. the page table's frame id).
    std::uint64_t user_tag = 0;
    // Read the colour image back (CompletedFrame::colour).
    bool capture = false;
    std::vector<FrameWait> waits;
    // Records extra drawing (a HUD) into the colour image after the plane, before presenting.
    std::function<void(VkCommandBuffer, const OverlayTarget&)> overlay;
    // Blit the image to the next image of this swapchain and present it.
    VulkanSwapchain* present_to = nullptr;
};

// What the identity check found in one frame (VulkanRendererSettings::identity_check).
struct IdentityCheckResult {
    bool ran = false;              // the check ran on this frame (textured frames only)
    std::uint64_t pixels = 0;      // pixels of the plane checked
    std::uint64_t violations = 0;  // ... whose words were not their own
    std::uint64_t coarser = 0;     // ... that read a coarser level than they wanted
};

// A frame the device has finished. The spans stay valid until the next render() (or finish(),
// or resize()), whichever call handed it back.
struct CompletedFrame {
    std::uint64_t frame = 0;  // 1, 2, ... in submission order
    std::uint64_t user_tag = 0;
    // feedback_width * feedback_height entries, row by row from the top; empty where the plane
    // was not drawn, and where take_feedback() handed it back already (feedback_taken).
    std::span<const vt::FeedbackEntry> feedback;
    bool feedback_taken = false;
    std::uint32_t feedback_width = 0;
    std::uint32_t feedback_height = 0;
    // RGBA8, width * height * 4 bytes, rows from the top; empty unless FrameDesc::capture.
    std::span<const std::uint8_t> colour;
    std::uint32_t width = 0;
    std::uint32_t height = 0;
    double gpu_ms = 0;            // from the first command to the last, by timestamps
    double textured_pass_ms = 0;  // the colour pass that samples the texture, by timestamps
    IndirectionUpload upload;     // what the frame's indirection upload did
    IdentityCheckResult identity;
    // How closely the pixels got the detail they wanted; measured by deferred textured frames.
    SampleQuality quality;
    bool presented = false;
};

// A frame's feedback, read once its feedback pass is done (the rest of the frame may still run).
// The span stays valid until the next render() (or finish(), or resize()).
struct FrameFeedback {
    std::uint64_t frame = 0;
    std::uint64_t user_tag = 0;
    std::span<const vt::FeedbackEntry> feedback;  // as CompletedFrame::feedback
    std::uint32_t feedback_width = 0;
    std::uint32_t feedback_height = 0;
};

class VulkanRenderer {
public:
    VulkanRenderer(VulkanContext& context, VulkanIndirectionTable& indirection,
                   VulkanTextureDirectory& textures, VulkanRendererSettings settings = {});
    // Frames begun through the facade (VirtualTextureStreaming::begin_frame, in each frame's
    // command buffer, its waits and signals in the submission): FrameDesc::user_tag is then
    // ignored and CompletedFrame::user_tag is the streaming's frame id, for complete_frame.
    VulkanRenderer(VulkanContext& context, VirtualTextureStreaming& streaming,
                   VulkanRendererSettings settings = {});
    // Waits for the frames in flight.
    ~VulkanRenderer();
    VulkanRenderer(const VulkanRenderer&) = delete;
    VulkanRenderer& operator=(const VulkanRenderer&) = delete;

    // Records and submits a frame; returns the frame that last used its slot, now complete,
    // unless take_completed() handed it back already.
    std::optional<CompletedFrame> render(const FrameDesc& frame);
    // The oldest frame not handed back yet, if the device has finished it; nullopt otherwise
    // (it does not wait). Called after render(), it hands a frame's feedback back as soon as
    // the device is done with it, typically a frame sooner than render() would.
    std::optional<CompletedFrame> take_completed();
    // The feedback of the oldest frame whose feedback pass the device has finished and whose
    // feedback was not handed back yet (by this, or with the frame); nullopt otherwise (it does
    // not wait). Each frame's feedback is handed back once, in frame order: a frame is then
    // handed back with feedback_taken and no feedback.
    std::optional<FrameFeedback> take_feedback();
    // Waits for every frame in flight; returns them, oldest first.
    std::vector<CompletedFrame> finish();
    // New offscreen size (waits for the frames in flight, dropping their results).
    void resize(std::uint32_t width, std::uint32_t height);

    std::uint32_t width() const noexcept;
    std::uint32_t height() const noexcept;
    std::uint32_t feedback_width() const noexcept;
    std::uint32_t feedback_height() const noexcept;
    float feedback_lod_bias() const noexcept;  // -log2(feedback_divisor)
    VkFormat colour_format() const noexcept;   // VK_FORMAT_R8G8B8A8_UNORM
    std::uint64_t frames_submitted() const noexcept;
    // Signalled with each frame's number when the device finishes it.
    const VulkanTimeline& timeline() const noexcept;

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace vtpage::viewer
