// Every tile format from an image file to the screen: a photo-like image written as PNG, baked to
// a version-2 file by the baker (bake_texture_archive), streamed from a BakedFileSource by
// VirtualTextureStreaming on the host backend as the renderer's feedback asks for pages, and drawn
// by the viewer's renderer. Once a view has settled, every page it needs is resident and each
// pixel is what ReferenceSampler computes from the texels the file stores: its pages read by
// BakedTextureArchive and each tile decoded by libsquish (copied for rgba8), apart from the
// shader's decoder and from the streaming path. The reference reads payload texels only; the
// shader reads the borders too, so a border that is not its neighbour's texels shows at the tile
// edges the views cross.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "../bake/bake_archive_test_support.hpp"
#include "../bake/vips_under_thread_sanitizer.hpp"
#include "../interop/vulkan_test_support.hpp"
#include "../support/backend_fixture.hpp"
#include "../support/temporary_folder.hpp"
#include "block_codec.hpp"
#include "renderer_rig.hpp"
#include "texture_baker.hpp"
#include "vtpage/interop/virtual_texture_streaming.hpp"
#include "vtpage/streaming/sources/baked_texture.hpp"
#include "vtpage/streaming/sources/baked_texture_archive.hpp"

namespace vtpage {
namespace {

using namespace std::chrono_literals;
using vt::TileFormat;

// Not square, not powers of two; level 0 spans 2 x 2 pages of rgba8 (a page holds 8 x 4 tiles of
// 120 texels), one page of the BC formats (8 x 4 or 8 x 8 tiles of 248).
constexpr std::uint32_t image_width = 1000;
constexpr std::uint32_t image_height = 600;
// Frames a view may take to settle: a few per level the feedback walks down.
constexpr int max_frames_to_settle = 40;

// The channels a format keeps (block_codec.hpp), from red on.
unsigned kept_channels(TileFormat format) {
    switch (format) {
        case TileFormat::bc1:
            return 3;
        case TileFormat::bc4:
            return 1;
        case TileFormat::bc5:
            return 2;
        default:
            return 4;
    }
}

// The texels a baked file stores: its pages read and verified by BakedTextureArchive, each tile
// decoded by the reference decoder on first use.
class StoredTexels {
public:
    explicit StoredTexels(const std::string& path) : archive_(path), layout_(archive_.layout()) {}

    vt::TextureShape shape() const { return archive_.shape(); }
    // Texel (x, y) of a level as RGBA8, R in the low byte (a test::TexelFunction).
    std::uint32_t texel(std::uint32_t mip, std::uint32_t x, std::uint32_t y) {
        const vt::TileFormatInfo info = layout_.tile_format();
        const std::uint32_t tile_x = x / info.tile_payload(), tile_y = y / info.tile_payload();
        const std::vector<std::uint8_t>& rgba = tile(mip, tile_x, tile_y);
        const std::uint32_t in_x = x - tile_x * info.tile_payload() + info.tile_border;
        const std::uint32_t in_y = y - tile_y * info.tile_payload() + info.tile_border;
        std::uint32_t texel = 0;
        std::memcpy(&texel, &rgba[(std::size_t(in_y) * info.tile_size + in_x) * 4], 4);
        return texel;
    }

private:
    const std::vector<std::byte>& page(std::uint64_t index) {
        auto [it, fresh] = pages_.try_emplace(index);
        if (fresh) {
            it->second.resize(vt::format_page_bytes);
            archive_.read_page(index, it->second);
        }
        return it->second;
    }
    // The tile's RGBA8 rows, its border included.
    const std::vector<std::uint8_t>& tile(std::uint32_t mip, std::uint32_t x, std::uint32_t y) {
        auto [it, fresh] = tiles_.try_emplace({mip, x, y});
        if (fresh) {
            const vt::TileFormatInfo info = layout_.tile_format();
            const vt::TileLocation where = layout_.locate(mip, x, y);
            it->second.resize(std::size_t(info.tile_size) * info.tile_size * 4);
            bake::decode_tile(
                layout_.format,
                std::span(page(where.page)).subspan(where.byte_offset(), where.tile_bytes),
                it->second);
        }
        return it->second;
    }

    vt::BakedTextureArchive archive_;
    vt::TextureLayout layout_;
    std::map<std::uint64_t, std::vector<std::byte>> pages_;
    std::map<std::array<std::uint32_t, 3>, std::vector<std::uint8_t>> tiles_;
};

// Largest minus least of one channel over an RGBA8 image.
int channel_spread(const std::vector<std::uint8_t>& rgba, unsigned channel) {
    int least = 255, largest = 0;
    for (std::size_t i = channel; i < rgba.size(); i += 4) {
        least = std::min<int>(least, rgba[i]);
        largest = std::max<int>(largest, rgba[i]);
    }
    return largest - least;
}

class BakedTextureRenderTest : public testing::TestWithParam<TileFormat> {
protected:
    void SetUp() override {
        VTPAGE_SKIP_LIBVIPS_UNDER_THREAD_SANITIZER();
        std::string reason;
        backend_ = test::try_make_backend("host", reason);
        if (!backend_) GTEST_SKIP() << "host backend unavailable: " << reason;
        context_ = test::try_make_vulkan_context(*backend_, reason);
        if (!context_) GTEST_SKIP() << "no Vulkan device for the host backend: " << reason;
        bake_image();
        stored_ = std::make_shared<StoredTexels>(path());
        start_streaming();
    }
    void TearDown() override {
        // The renderer reads the indirection table and the directory: it goes first.
        renderer_.reset();
        streaming_.reset();
        if (context_) test::expect_no_validation_messages(*context_);
    }

    std::string path() const { return folder_.file("photo.vtex"); }

    void bake_image() {
        image_ = test::photo_like(image_width, image_height, 4, 29);
        const std::string png = folder_.file("photo.png");
        test::save_image(image_, png, test::save_png);
        bake::VipsImageReader reader(png);
        bake::TextureBakeSettings settings;
        settings.format = GetParam();
        settings.threads = 2;
        bake::bake_texture_archive(reader, path(), settings);
    }

    // The streamer with a budget for every page (nothing is evicted), the texture added.
    void start_streaming() {
        auto source = std::make_shared<vt::BakedFileSource>(path());
        ASSERT_EQ(source->version(), 4);
        ASSERT_EQ(source->shape(), (vt::TextureShape{image_width, image_height, GetParam()}));
        layout_ = vt::TextureLayout(source->shape());
        VirtualTextureStreamingSettings settings;
        settings.page_count = layout_.page_count;
        settings.streamer.table.region_size = layout_.page_count * vt::page_bytes;
        settings.streamer.table.budget_bytes = layout_.page_count * vt::page_bytes;
        settings.streamer.worker_threads = 2;
        settings.streamer.batch_pages = 4;
        streaming_ = std::make_unique<VirtualTextureStreaming>(*context_, *backend_, settings);
        texture_ = streaming_->add_texture(source);
        renderer_ = std::make_unique<viewer::VulkanRenderer>(
            *context_, streaming_->indirection(), streaming_->directory(),
            viewer::VulkanRendererSettings{.width = test::rig_width,
                                           .height = test::rig_height,
                                           .feedback_divisor = test::rig_divisor});
    }

    // A view with 2^lod texels of level 0 per pixel on both axes, placed at (fx, fy) of the room
    // the texture leaves (0: left/top, 1: right/bottom).
    test::OrthoView view_at(float lod, float fx, float fy) const {
        const float texels_per_pixel = std::exp2(lod);
        const float su = std::min(1.0f, texels_per_pixel * test::rig_width / float(image_width));
        const float sv = std::min(1.0f, texels_per_pixel * test::rig_height / float(image_height));
        return {(1 - su) * fx, (1 - sv) * fy, su, sv};
    }

    struct Drawn {
        std::vector<std::uint8_t> colour;
        bool asked_only_resident = false;  // every page its feedback asked for was ready
    };
    // Draws one frame, hands its feedback to the streaming and waits for the fills it asked for.
    Drawn draw(const test::OrthoView& view) {
        viewer::FrameDesc desc;
        desc.view_projection = view.matrix();
        desc.texture_id = texture_;
        desc.capture = true;
        desc.user_tag = streaming_->streamer().begin_frame();
        EXPECT_FALSE(renderer_->render(desc));  // the frame before was finished
        Drawn drawn;
        for (const viewer::CompletedFrame& done : renderer_->finish()) {
            const vt::StreamRequestResult asked =
                streaming_->complete_frame(done.user_tag, done.feedback);
            drawn.colour.assign(done.colour.begin(), done.colour.end());
            drawn.asked_only_resident = asked.queued + asked.already_queued + asked.dropped == 0;
        }
        EXPECT_TRUE(streaming_->wait_idle(30s));
        return drawn;
    }

    // Draws the view until its feedback asks only for resident pages twice in a row: the second
    // frame was drawn after the first one's upload published them. Its image.
    std::vector<std::uint8_t> settle(const test::OrthoView& view) {
        int clean = 0;
        for (int frame = 0; frame < max_frames_to_settle; ++frame) {
            Drawn drawn = draw(view);
            clean = drawn.asked_only_resident ? clean + 1 : 0;
            if (clean == 2) return std::move(drawn.colour);
        }
        ADD_FAILURE() << "the view did not settle in " << max_frames_to_settle << " frames";
        return {};
    }

    bool resident(std::uint64_t page) const {
        return streaming_->streamer().is_ready(
            streaming_->streamer().textures().base_page(texture_) + page);
    }
    std::vector<std::uint8_t> reference(const test::OrthoView& view,
                                        std::function<bool(std::uint64_t)> is_resident) const {
        const test::ReferenceSampler sampler(
            layout_.shape(), std::move(is_resident),
            [stored = stored_](std::uint32_t mip, std::uint32_t x, std::uint32_t y) {
                return stored->texel(mip, x, y);
            });
        return test::reference_image(sampler, view);
    }

    void expect_stored_level0_is_the_image() const;
    void expect_view_matches_reference(const test::OrthoView& view);

    test::TemporaryFolder folder_;
    test::SampleImage image_;
    std::shared_ptr<StoredTexels> stored_;
    vt::TextureLayout layout_{vt::TextureShape{}};
    std::unique_ptr<Backend> backend_;
    std::unique_ptr<VulkanContext> context_;
    std::unique_ptr<VirtualTextureStreaming> streaming_;
    std::unique_ptr<viewer::VulkanRenderer> renderer_;
    vt::TextureId texture_ = 0;
};

// PSNR of level 0 as stored against the image, over the channels the format keeps.
double stored_level0_psnr(StoredTexels& stored, const test::SampleImage& image) {
    const unsigned channels = kept_channels(stored.shape().format);
    double error = 0;
    for (std::uint32_t y = 0; y < image.height; ++y) {
        for (std::uint32_t x = 0; x < image.width; ++x) {
            const std::uint32_t texel = stored.texel(0, x, y);
            const std::uint8_t* want = &image.bytes[(std::size_t(y) * image.width + x) * 4];
            for (unsigned c = 0; c < channels; ++c) {
                const double d = double(want[c]) - double((texel >> (8 * c)) & 255);
                error += d * d;
            }
        }
    }
    const double mean = error / (double(image.width) * image.height * channels);
    return mean == 0 ? INFINITY : 10 * std::log10(255.0 * 255.0 / mean);
}

// The reference decodes the image that was baked: rgba8 keeps it exactly, the block formats
// close to it (the fine levels of this kind of image keep 30 dB and more through libsquish).
void BakedTextureRenderTest::expect_stored_level0_is_the_image() const {
    const double psnr = stored_level0_psnr(*stored_, image_);
    std::printf("%s: level 0 as stored, %.2f dB\n", vt::tile_format_name(GetParam()), psnr);
    if (GetParam() == TileFormat::rgba8) {
        EXPECT_EQ(psnr, INFINITY);
    } else {
        EXPECT_GE(psnr, 28.0);
    }
}

void BakedTextureRenderTest::expect_view_matches_reference(const test::OrthoView& view) {
    const std::vector<std::uint8_t> shown = settle(view);
    const auto now = reference(view, [this](std::uint64_t page) { return resident(page); });
    const auto all = reference(view, [](std::uint64_t) { return true; });
    const test::Difference d = test::compare(shown, now);
    EXPECT_LE(d.largest, test::rig_tolerance) << d.differing << " channels differ; view " << view.u0
                                              << "," << view.v0 << " " << view.su << "x" << view.sv;
    const test::Difference missing = test::compare(now, all);
    EXPECT_EQ(missing.differing, 0u) << "pages the view needs are not resident; view " << view.u0
                                     << "," << view.v0 << " " << view.su << "x" << view.sv;
    // The comparison says something: the view is not one colour.
    for (unsigned c = 0; c < kept_channels(GetParam()); ++c) {
        EXPECT_GE(channel_spread(all, c), 8) << "channel " << c << "; view " << view.u0 << ","
                                             << view.v0 << " " << view.su << "x" << view.sv;
    }
}

TEST_P(BakedTextureRenderTest, StreamedViewsMatchTheStoredTexels) {
    expect_stored_level0_is_the_image();
    EXPECT_FALSE(resident(0)) << "level 0 streams as views ask for it";
    // The whole texture (anisotropic), two corners magnified (the real edges clamp), and views
    // between levels.
    expect_view_matches_reference({0, 0, 1, 1});
    expect_view_matches_reference(view_at(-1.3f, 1, 1));
    expect_view_matches_reference(view_at(-0.4f, 0, 1));
    for (float lod = 0.3f; lod < 4; lod += 1.1f) {
        expect_view_matches_reference(view_at(lod, 0.37f, 0.61f));
    }
    const vt::StreamerStatistics statistics = streaming_->streamer().statistics();
    EXPECT_GT(statistics.pages_filled, 1u) << "pages beyond the tail were streamed";
}

INSTANTIATE_TEST_SUITE_P(Formats, BakedTextureRenderTest,
                         testing::Values(TileFormat::rgba8, TileFormat::bc1, TileFormat::bc3,
                                         TileFormat::bc4, TileFormat::bc5),
                         [](const testing::TestParamInfo<TileFormat>& param) {
                             return std::string(vt::tile_format_name(param.param));
                         });

}  // namespace
}  // namespace vtpage
