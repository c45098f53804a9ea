// The interop pieces driven by the streamer, as the viewer drives them: each completed frame's
// feedback goes through the FeedbackProcessor to the streamer, the streamer's ready and evicted
// events keep the indirection table current, and once streaming settles the image is the
// reference with every page the view needs resident. The texture is the procedural one, filled
// on the CPU (host) or by a CUDA kernel whose completion frames wait for through a
// CudaVulkanTimeline (cuda), in RGBA8, BC1 and BC3; the reference evaluates procedural::texel
// texel by texel for RGBA8, and for BC1 and BC3 libsquish's decode of the source's CPU tiles.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <set>

#include "../interop/vulkan_test_support.hpp"
#include "../support/backend_fixture.hpp"
#include "reference_virtual_texture.hpp"
#include "renderer/vulkan_renderer.hpp"
#include "renderer_rig.hpp"
#include "streaming/sources/procedural_pattern.hpp"
#include "vtpage/interop/vulkan_cuda_timeline.hpp"
#include "vtpage/interop/vulkan_indirection_table.hpp"
#include "vtpage/interop/vulkan_page_importer.hpp"
#include "vtpage/interop/vulkan_texture_directory.hpp"
#include "vtpage/streaming/feedback/feedback_processor.hpp"
#include "vtpage/streaming/sources/procedural_source.hpp"
#include "vtpage/streaming/streamer/streamer.hpp"

namespace vtpage {
namespace {

using namespace vtpage::viewer;  // the renderer under test

struct StreamingCase {
    std::string backend;
    vt::TileFormat format = vt::TileFormat::rgba8;
    std::uint32_t size_log2 = test::rig_size_log2;  // larger for the formats of larger tiles
};

void PrintTo(const StreamingCase& c, std::ostream* out) {
    *out << c.backend << " " << vt::tile_format_name(c.format) << " 2^" << c.size_log2;
}

std::string case_name(const testing::TestParamInfo<StreamingCase>& param) {
    return param.param.backend + "_" + vt::tile_format_name(param.param.format);
}

// What the renderer must show: the pattern itself in RGBA8, the decoded blocks of the tiles the
// CPU makes in the block-compressed formats (the kernel's are the same bytes).
test::TexelFunction reference_texels(std::shared_ptr<const vt::ProceduralSource> source) {
    if (source->shape().format == vt::TileFormat::rgba8) {
        return [source](std::uint32_t mip, std::uint32_t x, std::uint32_t y) {
            const vt::TextureLayout layout = source->layout();
            return vt::procedural::texel(source->seed(), layout.mip_count - 1, mip, x, y);
        };
    }
    return test::decoded_tiles(
        source->layout(),
        [source](std::uint32_t mip, std::uint32_t x, std::uint32_t y, std::span<std::byte> out) {
            source->fill_tile(mip, x, y, out);
        });
}

// A view at level of detail `lod` of a texture 2^size_log2 texels on a side.
test::OrthoView view_at_lod(float lod, std::uint32_t size_log2, float u0, float v0) {
    const float texels_per_pixel = std::exp2(lod) / float(1u << size_log2);
    return {u0, v0, texels_per_pixel * test::rig_width, texels_per_pixel * test::rig_height};
}

class VulkanStreamingTest : public testing::TestWithParam<StreamingCase> {};

TEST_P(VulkanStreamingTest, StreamedFramesSettleOnTheReference) {
    const StreamingCase c = GetParam();
    VTPAGE_BACKEND_OR_SKIP(backend, c.backend);
    VTPAGE_VULKAN_OR_SKIP(context, *backend);
    const bool gpu = backend->capabilities().gpu;
    {
        std::unique_ptr<CudaVulkanTimeline> fills;  // outlives the streamer: its fills signal it
        if (gpu)
            fills = std::make_unique<CudaVulkanTimeline>(*context, backend->capabilities().device);
        VulkanPageImporter importer(*context, *backend);
        VulkanIndirectionTable indirection(*context, importer, {.page_count = 256});
        VulkanTextureDirectory textures(*context);
        vt::StreamerSettings settings;
        settings.table.region_size = 256 * 2_MiB;
        settings.table.budget_bytes = 64 * 2_MiB;
        settings.worker_threads = 2;
        settings.batch_pages = 4;
        importer.attach(settings.table.pool);
        indirection.connect(settings);
        if (fills) {
            indirection.set_fill_timeline(fills->semaphore());
            settings.on_fills_enqueued = [&fills](vt::CudaStream stream) {
                return fills->signal(static_cast<CUstream_st*>(stream));
            };
        }
        vt::Streamer streamer(*backend, settings);
        indirection.check_against(&streamer.page_table());
        const auto source = std::make_shared<vt::ProceduralSource>(
            vt::ProceduralSettings{.seed = 11, .size_log2 = c.size_log2, .format = c.format});
        const vt::TextureLayout layout = source->layout();
        const vt::TextureId id = streamer.add_texture(source);
        const PageIndex base = streamer.textures().base_page(id);
        textures.set(id, std::uint32_t(base), source->shape());
        vt::FeedbackProcessor feedback(streamer.textures());
        VulkanRenderer renderer(*context, indirection, textures,
                                {.width = test::rig_width, .height = test::rig_height});

        const test::OrthoView view = view_at_lod(0.3f, c.size_log2, 0.9f, 0.44f);
        FrameDesc desc;
        desc.view_projection = view.matrix();
        desc.texture_id = id;
        std::vector<std::uint8_t> first_colour;  // with only the mip tail resident
        std::uint64_t largest_fill = 0;
        auto consume = [&](const CompletedFrame& done) {
            if (done.frame == 1) first_colour.assign(done.colour.begin(), done.colour.end());
            largest_fill = std::max(largest_fill, done.upload.fill_value);
            const auto result = feedback.process(done.feedback);
            streamer.request(result.requests);
            streamer.complete_frame(done.user_tag);
        };
        // Procedural BC pages are encoded on the CPU: under a sanitizer on a busy machine a page
        // takes seconds. Streaming fails only when no page arrives for a whole minute.
        const auto idle_deadline = std::chrono::seconds(60);
        for (int frame = 0; frame < 12; ++frame) {
            desc.user_tag = streamer.begin_frame();
            desc.capture = frame == 0;
            if (auto done = renderer.render(desc)) consume(*done);
            ASSERT_TRUE(streamer.wait_idle_while_progressing(idle_deadline));
        }
        for (const CompletedFrame& done : renderer.finish()) consume(done);
        ASSERT_TRUE(streamer.wait_idle_while_progressing(idle_deadline));
        streamer.rethrow_error();

        desc.user_tag = streamer.begin_frame();
        desc.capture = true;
        renderer.render(desc);
        auto done = renderer.finish();
        ASSERT_EQ(done.size(), 1u);
        streamer.complete_frame(done[0].user_tag);
        std::vector<std::uint8_t> colour(done[0].colour.begin(), done[0].colour.end());

        // Settled: the image is the reference with every page resident, though only the pages
        // the view needs (and their parents) were streamed.
        test::ReferenceSampler all(
            source->shape(), [](std::uint64_t) { return true; }, reference_texels(source));
        std::vector<std::uint8_t> expected(colour.size());
        for (std::uint32_t y = 0; y < test::rig_height; ++y) {
            for (std::uint32_t x = 0; x < test::rig_width; ++x) {
                const test::Colour sampled =
                    all.sample(view.u(x, test::rig_width), view.v(y, test::rig_height),
                               view.su / test::rig_width, 0, 0, view.sv / test::rig_height, 0);
                std::uint8_t* out = &expected[(y * test::rig_width + x) * 4];
                out[0] = test::to_unorm8(sampled.r);
                out[1] = test::to_unorm8(sampled.g);
                out[2] = test::to_unorm8(sampled.b);
                out[3] = test::to_unorm8(sampled.a);
            }
        }
        const test::Difference d = test::compare(colour, expected);
        EXPECT_LE(d.largest, test::rig_tolerance) << d.differing << " channels differ";
        ASSERT_EQ(first_colour.size(), colour.size());
        EXPECT_GT(test::compare(first_colour, expected).largest, 20)
            << "the first frame, before any streaming, shows the tail only";
        std::size_t ready = 0;
        for (std::uint64_t page = 0; page < layout.page_count; ++page) {
            ready += streamer.is_ready(base + page);
        }
        EXPECT_LT(ready, layout.page_count) << "pages the view does not need were not streamed";
        EXPECT_EQ(indirection.published_count(), streamer.statistics().ready_pages);
        EXPECT_GT(indirection.statistics().ready_pages, 1u);
        if (gpu) {
            EXPECT_GT(largest_fill, 0u) << "frames were ordered after CUDA fills on the timeline";
        }
    }
    test::expect_no_validation_messages(*context);
}

// The block-compressed textures are 2^12 texels on a side: at 2^10 their few pages (the tail
// starts at 128 texels) would all be needed by the view.
INSTANTIATE_TEST_SUITE_P(Formats, VulkanStreamingTest,
                         testing::Values(StreamingCase{"host"},
                                         StreamingCase{"host", vt::TileFormat::bc1, 12},
                                         StreamingCase{"host", vt::TileFormat::bc3, 12},
                                         StreamingCase{"cuda"},
                                         StreamingCase{"cuda", vt::TileFormat::bc1, 12},
                                         StreamingCase{"cuda", vt::TileFormat::bc3, 12}),
                         case_name);

}  // namespace
}  // namespace vtpage
