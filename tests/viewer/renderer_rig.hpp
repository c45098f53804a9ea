// A renderer over one virtual texture, for the renderer tests on any backend: the page table,
// the pool with its windows, the importer, the indirection table, the texture directory and
// the renderer, wired as an app wires them; pages filled from the reference pattern through the
// backend (CPU copies on host, cudaMemcpy on cuda); reference images from ReferenceSampler; a
// top-down orthographic view in which uv is linear in the pixel.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "reference_virtual_texture.hpp"
#include "renderer/vulkan_renderer.hpp"
#include "vtpage/backend/backend.hpp"
#include "vtpage/core/page_table.hpp"
#include "vtpage/interop/vulkan_context.hpp"
#include "vtpage/interop/vulkan_indirection_table.hpp"
#include "vtpage/interop/vulkan_page_importer.hpp"
#include "vtpage/interop/vulkan_texture_directory.hpp"

namespace vtpage::test {

using namespace vtpage::viewer;  // the renderer under test

inline constexpr std::uint32_t rig_size_log2 = 10;  // 1024 x 1024: 11 pages, several per level
inline constexpr std::uint32_t rig_base_page = 7;   // the texture's first page in the region
inline constexpr std::uint32_t rig_texture_id = 3;
inline constexpr std::uint32_t rig_width = 64;
inline constexpr std::uint32_t rig_height = 48;
inline constexpr std::uint32_t rig_divisor = 4;
inline constexpr std::uint8_t rig_sky[4] = {115, 153, 204, 255};  // the clear colour in UNORM8
// Rounding of the interpolated uv and of log2 differs by a few ulps between device and CPU.
inline constexpr int rig_tolerance = 2;

// A top-down orthographic view of the plane (extent 1 x 1) in which the image covers
// uv [u0, u0 + su] x [v0, v0 + sv]: uv is linear in the pixel, so its derivatives are exact.
struct OrthoView {
    float u0 = 0, v0 = 0, su = 1, sv = 1;

    // The view whose level of detail is `lod` at the rig's size.
    static OrthoView at_lod(float lod, float u0, float v0);
    std::array<float, 16> matrix() const;
    // uv at the centre of pixel x (or y) of an image w (or h) pixels across.
    float u(std::uint32_t x, std::uint32_t w) const {
        return u0 + (float(x) + 0.5f) / float(w) * su;
    }
    float v(std::uint32_t y, std::uint32_t h) const {
        return v0 + (float(y) + 0.5f) / float(h) * sv;
    }
};

// A completed frame, copied out of the renderer's buffers.
struct Frame {
    std::vector<std::uint8_t> colour;  // RGBA8
    std::vector<vt::FeedbackEntry> feedback;
    CompletedFrame info;
};

// Largest per-channel difference, and how many channels differ at all.
struct Difference {
    int largest = 0;
    std::size_t differing = 0;
};
Difference compare(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b);

// The reference image of a view, rig_width x rig_height RGBA8, each pixel sampled at its centre
// with the view's exact derivatives and written as vt_output_colour writes it.
std::vector<std::uint8_t> reference_image(const ReferenceSampler& sampler, const OrthoView& view);

// What a test may change of the rig's page table and renderer.
struct RigSettings {
    bool defer_reuse = true;      // PageTableSettings::defer_reuse
    bool identity_check = false;  // VulkanRendererSettings::identity_check
    std::uint32_t identity_texture_tag = 1;
    TextureContent content;  // the texels and sampling of the texture (the pattern, clamped)
};

class RendererRig {
public:
    // Builds everything on the named backend; false and the reason where this machine has no
    // such backend or no Vulkan device for it.
    bool set_up(const std::string& backend_name, std::string& reason,
                vt::TextureShape shape = vt::TextureShape::square(rig_size_log2),
                RigSettings rig = {});
    // Renderer and page table first (the table's shutdown calls back into the indirection
    // table), then checks that the validation layer said nothing.
    void tear_down();

    // Commits texture pages (relative to the texture) without filling them.
    std::vector<PageMapping> commit(const std::vector<std::uint64_t>& pages);
    // The reference pattern's bytes of a texture page.
    std::vector<std::uint8_t> page_bytes(std::uint64_t page) const;
    // Commits, fills through the backend and publishes.
    void make_resident(const std::vector<std::uint64_t>& pages);
    void make_all_resident();
    void evict(const std::vector<std::uint64_t>& pages);
    bool resident(std::uint64_t page) const;
    // The pages of one mip level (relative).
    std::vector<std::uint64_t> level_pages(std::uint32_t mip) const;

    FrameDesc frame_for(const OrthoView& view, RenderMode mode = RenderMode::textured) const;
    static Frame copy(const CompletedFrame& done);
    // Renders one frame and waits for it.
    Frame render(const OrthoView& view, RenderMode mode = RenderMode::textured);
    // The reference image for a view, with the current residency.
    std::vector<std::uint8_t> reference(const OrthoView& view) const;

    std::unique_ptr<Backend> backend;
    vt::TextureShape shape = vt::TextureShape::square(rig_size_log2);
    vt::TextureLayout layout{shape};
    TexelFunction texels = pattern_texel;  // what the texture shows (decoded_pattern)
    TextureContent content;
    std::unique_ptr<VulkanContext> context;
    std::unique_ptr<VulkanPageImporter> importer;
    std::unique_ptr<VulkanIndirectionTable> indirection;
    std::unique_ptr<PageTable> table;
    std::unique_ptr<VulkanTextureDirectory> textures;
    std::unique_ptr<VulkanRenderer> renderer;
};

}  // namespace vtpage::test
