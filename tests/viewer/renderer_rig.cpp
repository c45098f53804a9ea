#include "renderer_rig.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "../interop/vulkan_test_support.hpp"
#include "../support/backend_fixture.hpp"

namespace vtpage::test {

OrthoView OrthoView::at_lod(float lod, float u0, float v0) {
    const float texels_per_pixel = std::exp2(lod) / float(1u << rig_size_log2);
    return {u0, v0, texels_per_pixel * rig_width, texels_per_pixel * rig_height};
}

std::array<float, 16> OrthoView::matrix() const {
    std::array<float, 16> m{};  // column-major
    m[0 * 4 + 0] = 2 / su;
    m[2 * 4 + 1] = 2 / sv;  // world z (= v) goes down the image
    m[3 * 4 + 0] = -1 - 2 * u0 / su;
    m[3 * 4 + 1] = -1 - 2 * v0 / sv;
    m[3 * 4 + 2] = 0.5f;
    m[3 * 4 + 3] = 1;
    return m;
}

Difference compare(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b) {
    Difference d;
    EXPECT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
        const int delta = std::abs(int(a[i]) - int(b[i]));
        d.largest = std::max(d.largest, delta);
        d.differing += delta != 0;
    }
    return d;
}

std::vector<std::uint8_t> reference_image(const ReferenceSampler& sampler, const OrthoView& view) {
    std::vector<std::uint8_t> image(rig_width * rig_height * 4);
    const float dudx = view.su / rig_width, dvdy = view.sv / rig_height;
    for (std::uint32_t y = 0; y < rig_height; ++y) {
        for (std::uint32_t x = 0; x < rig_width; ++x) {
            const Colour c = output_colour(
                sampler.sample(view.u(x, rig_width), view.v(y, rig_height), dudx, 0, 0, dvdy, 0),
                sampler.sampling());
            std::uint8_t* out = &image[(y * rig_width + x) * 4];
            out[0] = to_unorm8(c.r);
            out[1] = to_unorm8(c.g);
            out[2] = to_unorm8(c.b);
            out[3] = to_unorm8(c.a);
        }
    }
    return image;
}

bool RendererRig::set_up(const std::string& backend_name, std::string& reason,
                         vt::TextureShape texture_shape, RigSettings rig) {
    shape = texture_shape;
    layout = vt::TextureLayout(shape);
    content = rig.content;
    texels = decoded_pattern(layout, content);
    backend = try_make_backend(backend_name, reason);
    if (!backend) return false;
    context = try_make_vulkan_context(*backend, reason);
    if (!context) return false;
    importer = std::make_unique<VulkanPageImporter>(*context, *backend);
    indirection = std::make_unique<VulkanIndirectionTable>(
        *context, *importer, VulkanIndirectionTableSettings{.page_count = 64});
    PageTableSettings settings;
    settings.region_size = 64 * 2_MiB;
    settings.budget_bytes = 32 * 2_MiB;
    settings.map_into_region = false;  // pages are reached through windows and Vulkan
    settings.pool.map_windows = true;
    settings.pool.window_pages = 64;
    settings.defer_reuse = rig.defer_reuse;
    importer->attach(settings.pool);
    indirection->connect(settings);
    table = std::make_unique<PageTable>(*backend, settings);
    indirection->check_against(table.get());
    textures = std::make_unique<VulkanTextureDirectory>(*context);
    textures->set(rig_texture_id, rig_base_page, shape, content.sampling);
    renderer = std::make_unique<VulkanRenderer>(
        *context, *indirection, *textures,
        VulkanRendererSettings{.width = rig_width,
                               .height = rig_height,
                               .feedback_divisor = rig_divisor,
                               .identity_check = rig.identity_check,
                               .identity_texture_tag = rig.identity_texture_tag});
    return true;
}

void RendererRig::tear_down() {
    if (!context) return;
    renderer.reset();
    table.reset();
    expect_no_validation_messages(*context);
}

std::vector<PageMapping> RendererRig::commit(const std::vector<std::uint64_t>& pages) {
    std::vector<PageIndex> global;
    for (std::uint64_t page : pages) global.push_back(rig_base_page + page);
    return table->commit(global);
}

std::vector<std::uint8_t> RendererRig::page_bytes(std::uint64_t page) const {
    std::vector<std::uint8_t> bytes(vt::page_bytes);
    fill_page(layout, page, bytes.data(), content);
    return bytes;
}

void RendererRig::make_resident(const std::vector<std::uint64_t>& pages) {
    auto mappings = commit(pages);
    for (const PageMapping& mapping : mappings) {
        const auto bytes = page_bytes(mapping.page - rig_base_page);
        backend->write(table->data_address(mapping.page), bytes.data(), bytes.size());
    }
    indirection->ready(mappings);
}

void RendererRig::make_all_resident() {
    std::vector<std::uint64_t> pages;
    for (std::uint64_t page = 0; page < layout.page_count; ++page) pages.push_back(page);
    make_resident(pages);
}

void RendererRig::evict(const std::vector<std::uint64_t>& pages) {
    std::vector<PageIndex> global;
    for (std::uint64_t page : pages) global.push_back(rig_base_page + page);
    table->evict(global);
}

bool RendererRig::resident(std::uint64_t page) const {
    return table->is_resident(rig_base_page + page);
}

std::vector<std::uint64_t> RendererRig::level_pages(std::uint32_t mip) const {
    std::vector<std::uint64_t> pages;
    const auto& level = layout.mips[mip];
    for (std::uint64_t i = 0; i < std::uint64_t(level.pages_x) * level.pages_y; ++i) {
        pages.push_back(level.first_page + i);
    }
    return pages;
}

FrameDesc RendererRig::frame_for(const OrthoView& view, RenderMode mode) const {
    FrameDesc frame;
    frame.view_projection = view.matrix();
    frame.texture_id = rig_texture_id;
    frame.mode = mode;
    frame.capture = true;
    return frame;
}

Frame RendererRig::copy(const CompletedFrame& done) {
    Frame frame;
    frame.colour.assign(done.colour.begin(), done.colour.end());
    frame.feedback.assign(done.feedback.begin(), done.feedback.end());
    frame.info = done;
    return frame;
}

Frame RendererRig::render(const OrthoView& view, RenderMode mode) {
    renderer->render(frame_for(view, mode));
    auto done = renderer->finish();
    EXPECT_EQ(done.size(), 1u);
    return done.empty() ? Frame{} : copy(done.back());
}

std::vector<std::uint8_t> RendererRig::reference(const OrthoView& view) const {
    const ReferenceSampler sampler(
        shape, [this](std::uint64_t page) { return resident(page); }, texels, content.sampling);
    return reference_image(sampler, view);
}

}  // namespace vtpage::test
