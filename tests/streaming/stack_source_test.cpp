// Material stacks: the page grid a stack's record gives its pages (tile_stack.hpp), the layout of
// a stack's texture, StackSource's pages (every record holds each layer's block of that place,
// byte for byte, tails and partial pages included), what it refuses, the layer pages it reads,
// and a stack streamed by the Streamer (tails and coarse levels packed with the stack's shape).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <set>
#include <vector>

#include "../support/backend_fixture.hpp"
#include "../support/random_blocks_source.hpp"
#include "streaming_test_support.hpp"
#include "vtpage/streaming/layout/texture_sampling.hpp"
#include "vtpage/streaming/layout/tile_stack.hpp"
#include "vtpage/streaming/sources/stack_source.hpp"
#include "vtpage/streaming/streamer/streamer.hpp"

namespace vtpage::vt {
namespace {

using namespace std::chrono_literals;
using test::RandomBlocksSource;

TileStack stack_of(std::initializer_list<TileFormat> formats) {
    const std::vector<TileFormat> list(formats);
    return TileStack::of(list.data(), std::uint32_t(list.size()));
}

TEST(TileStackTest, RecordsAndPageGridsFollowTheLayers) {
    struct Row {
        TileStack stack;
        std::uint32_t record, grid_x, grid_y;
        double fill;
    };
    const Row rows[] = {
        {stack_of({TileFormat::bc1}), 8, 8, 8, 100.0},
        {stack_of({TileFormat::bc1, TileFormat::bc4}), 16, 8, 4, 100.0},
        {stack_of({TileFormat::bc1, TileFormat::bc5, TileFormat::bc1}), 32, 4, 4, 100.0},
        {stack_of({TileFormat::bc1, TileFormat::bc5, TileFormat::bc4}), 32, 4, 4, 100.0},
        {stack_of({TileFormat::bc3, TileFormat::bc5, TileFormat::bc1}), 40, 4, 2, 62.5},
        {stack_of({TileFormat::bc1, TileFormat::bc5, TileFormat::bc1, TileFormat::bc4}), 40, 4, 2,
         62.5},
        {stack_of({TileFormat::bc3, TileFormat::bc5, TileFormat::bc3, TileFormat::bc5}), 64, 4, 2,
         100.0},
    };
    for (const Row& row : rows) {
        EXPECT_TRUE(row.stack.valid());
        EXPECT_EQ(row.stack.record_bytes(), row.record);
        const TileFormatInfo info = stack_tile_format_info(row.stack);
        EXPECT_EQ(info.tile_bytes(), 64u * 64u * row.record);
        EXPECT_EQ(info.page_tiles_x, row.grid_x) << row.record;
        EXPECT_EQ(info.page_tiles_y, row.grid_y) << row.record;
        EXPECT_DOUBLE_EQ(stack_page_fill_percent(row.stack), row.fill);
        EXPECT_EQ(info.tile_payload(), 248u);
    }
    const TileStack four =
        stack_of({TileFormat::bc1, TileFormat::bc5, TileFormat::bc1, TileFormat::bc4});
    EXPECT_EQ(four.count(), 4u);
    EXPECT_EQ(four.layer_offset(0), 0u);
    EXPECT_EQ(four.layer_offset(1), 8u);
    EXPECT_EQ(four.layer_offset(2), 24u);
    EXPECT_EQ(four.layer_offset(3), 32u);
    EXPECT_EQ(four.layer(1), TileFormat::bc5);
}

TEST(TileStackTest, OnlyBlockFormatsOfOneTileStack) {
    EXPECT_FALSE(TileStack{}.valid());
    EXPECT_FALSE(stack_of({TileFormat::rgba8}).valid());
    EXPECT_FALSE(stack_of({TileFormat::bc1, TileFormat::rgba8}).valid());
    EXPECT_FALSE(TileStack{0x0F2u}.valid());  // a layer after the list ended
    EXPECT_FALSE(TileStack{0x6u}.valid());    // format 5 does not exist
    const TileStack stack = stack_of({TileFormat::bc1, TileFormat::bc5});
    EXPECT_TRUE(TextureShape::stacked_shape(300, 200, stack).valid());
    EXPECT_TRUE(TextureShape::stacked_shape(300, 200, stack).stacked());
    TextureShape wrong_first = TextureShape::stacked_shape(300, 200, stack);
    wrong_first.format = TileFormat::bc5;
    EXPECT_FALSE(wrong_first.valid());
    EXPECT_NE(TextureShape::stacked_shape(300, 200, stack),
              (TextureShape{300, 200, TileFormat::bc1}));
}

TEST(TileStackTest, AStacksLayoutUsesItsPageGrid) {
    const TileStack stack = stack_of({TileFormat::bc1, TileFormat::bc5, TileFormat::bc4});
    const TextureLayout layout(TextureShape::stacked_shape(1500, 1000, stack));
    const TextureLayout bc1(1500, 1000, TileFormat::bc1);
    EXPECT_EQ(layout.stack, stack);
    EXPECT_EQ(layout.tile_format().tile_bytes(), 128u * 1024u);
    // Level 0 is 7 x 5 tiles: 2 x 2 pages of 4 x 4 tiles, against BC1's one page of 8 x 8.
    EXPECT_EQ(layout.mips[0].tiles_x, 7u);
    EXPECT_EQ(layout.mips[0].pages_x, 2u);
    EXPECT_EQ(layout.mips[0].pages_y, 2u);
    EXPECT_EQ(bc1.mips[0].pages_x, 1u);
    EXPECT_EQ(layout.tail_first_mip, bc1.tail_first_mip);
    const TileLocation at = layout.locate(0, 5, 4);
    EXPECT_EQ(at.page, 3u);
    EXPECT_EQ(at.tile_in_page, 1u);
    EXPECT_EQ(at.tile_bytes, 128u * 1024u);
    // The tail holds every tail level's record tile within one page.
    EXPECT_LE(
        std::uint64_t(layout.mip_count - layout.tail_first_mip) * layout.tile_format().tile_bytes(),
        page_bytes);
}

TEST(TileStackTest, SamplingOfAStackNamesItsSrgbLayers) {
    const TextureShape shape =
        TextureShape::stacked_shape(64, 64, stack_of({TileFormat::bc1, TileFormat::bc5}));
    TextureSampling sampling{.color_space = ColorSpace::srgb, .srgb_layers = 1};
    EXPECT_TRUE(sampling_valid(sampling, shape));
    sampling.srgb_layers = 3;  // BC5 has no sRGB
    EXPECT_FALSE(sampling_valid(sampling, shape));
    sampling.srgb_layers = 0;  // the first layer's bit is its colour space
    EXPECT_FALSE(sampling_valid(sampling, shape));
    sampling.srgb_layers = 4;  // past the layers
    EXPECT_FALSE(sampling_valid(sampling, shape));
    EXPECT_FALSE(sampling_valid({.srgb_layers = 1}, TextureShape{64, 64, TileFormat::bc1}));
}

std::shared_ptr<const TileSource> layer(std::uint32_t width, std::uint32_t height,
                                        TileFormat format, std::uint64_t seed,
                                        TextureSampling sampling = {}) {
    return std::make_shared<RandomBlocksSource>(TextureShape{width, height, format}, seed,
                                                sampling);
}

std::vector<std::byte> page_of(const TileSource& source, std::uint64_t page) {
    std::vector<std::byte> bytes(page_bytes);
    source.fill_host(page, bytes);
    return bytes;
}

// Every tile slot of every stack page: each record holds each layer's block of that place (the
// layer's own page read independently), and slots past the level are zero.
void expect_records_hold_layer_blocks(const StackSource& stack) {
    const TextureLayout layout = stack.layout();
    const TileFormatInfo info = layout.tile_format();
    const std::uint32_t blocks = info.blocks_per_row() * info.blocks_per_row();
    std::size_t tiles_checked = 0;
    for (std::uint64_t page = 0; page < layout.page_count; ++page) {
        const std::vector<std::byte> bytes = page_of(stack, page);
        const PagePosition position = page_position(layout, page);
        for (std::uint32_t slot = 0; slot < info.tiles_per_page(); ++slot) {
            std::uint32_t mip = position.mip, x = 0, y = 0;
            if (layout.in_tail(position.mip)) {
                mip = layout.tail_first_mip + slot;
            } else {
                x = position.x * info.page_tiles_x + slot % info.page_tiles_x;
                y = position.y * info.page_tiles_y + slot / info.page_tiles_x;
            }
            const std::byte* tile = bytes.data() + std::size_t(slot) * info.tile_bytes();
            if (mip >= layout.mip_count || !layout.has_tile(mip, x, y)) {
                ASSERT_TRUE(std::all_of(tile, tile + info.tile_bytes(),
                                        [](std::byte b) { return b == std::byte{0}; }))
                    << "page " << page << " slot " << slot << " holds no tile but is not zero";
                continue;
            }
            ASSERT_EQ(layout.locate(mip, x, y).page, page);
            for (std::uint32_t l = 0; l < stack.layer_count(); ++l) {
                const TileSource& source = stack.layer(l);
                const TileLocation at = source.layout().locate(mip, x, y);
                const std::vector<std::byte> own = page_of(source, at.page);
                const std::uint32_t block = tile_format_info(layout.stack.layer(l)).block_bytes;
                for (std::uint32_t b = 0; b < blocks; ++b) {
                    const std::byte* want = own.data() + at.byte_offset() + std::size_t(b) * block;
                    const std::byte* got = tile + std::size_t(b) * layout.stack.record_bytes() +
                                           layout.stack.layer_offset(l);
                    ASSERT_EQ(std::memcmp(want, got, block), 0)
                        << "page " << page << " mip " << mip << " tile (" << x << ", " << y
                        << ") layer " << l << " block " << b;
                }
            }
            ++tiles_checked;
        }
    }
    // Every tile of every level was found in some page.
    std::size_t tiles = 0;
    for (std::uint32_t mip = 0; mip < layout.mip_count; ++mip) {
        tiles += std::size_t(layout.mips[mip].tiles_x) * layout.mips[mip].tiles_y;
    }
    EXPECT_EQ(tiles_checked, tiles);
}

TEST(StackSourceTest, EveryRecordHoldsEachLayersBlockOfThatPlace) {
    const TextureSampling srgb{.color_space = ColorSpace::srgb};
    const StackSource three({layer(1500, 1000, TileFormat::bc1, 1, srgb),
                             layer(1500, 1000, TileFormat::bc5, 2),
                             layer(1500, 1000, TileFormat::bc4, 3)});
    EXPECT_EQ(three.shape(),
              TextureShape::stacked_shape(
                  1500, 1000, stack_of({TileFormat::bc1, TileFormat::bc5, TileFormat::bc4})));
    expect_records_hold_layer_blocks(three);
    // Four layers, 16-byte blocks at 16-byte offsets, a 4 x 2 grid and a tall thin shape.
    const StackSource four(
        {layer(700, 2300, TileFormat::bc3, 4, srgb), layer(700, 2300, TileFormat::bc5, 5),
         layer(700, 2300, TileFormat::bc1, 6), layer(700, 2300, TileFormat::bc4, 7)});
    expect_records_hold_layer_blocks(four);
    // One level only: the tail page alone.
    const StackSource tiny({layer(3, 5, TileFormat::bc1, 8), layer(3, 5, TileFormat::bc5, 9)});
    EXPECT_EQ(tiny.layout().page_count, 1u);
    expect_records_hold_layer_blocks(tiny);
}

TEST(StackSourceTest, CarriesTheLayersWrapAndEachLayersColourSpace) {
    const TextureSampling repeat_srgb{AddressMode::repeat, AddressMode::mirrored_repeat,
                                      ColorSpace::srgb};
    const TextureSampling repeat_linear{AddressMode::repeat, AddressMode::mirrored_repeat,
                                        ColorSpace::linear};
    const StackSource stack({layer(256, 256, TileFormat::bc3, 1, repeat_srgb),
                             layer(256, 256, TileFormat::bc5, 2, repeat_linear),
                             layer(256, 256, TileFormat::bc1, 3, repeat_srgb)});
    const TextureSampling sampling = stack.sampling();
    EXPECT_EQ(sampling.address_u, AddressMode::repeat);
    EXPECT_EQ(sampling.address_v, AddressMode::mirrored_repeat);
    EXPECT_EQ(sampling.color_space, ColorSpace::srgb);
    EXPECT_EQ(sampling.srgb_layers, 0b101u);
    EXPECT_TRUE(sampling_valid(sampling, stack.shape()));
    EXPECT_NE(stack.name().find("random blocks 2"), std::string::npos) << stack.name();
}

TEST(StackSourceTest, RefusesLayersThatCannotStackNamingTheLayer) {
    const auto refused = [](std::vector<std::shared_ptr<const TileSource>> layers,
                            const std::string& says) {
        try {
            StackSource stack(std::move(layers));
            ADD_FAILURE() << "stacked; expected a refusal saying " << says;
        } catch (const Error& error) {
            EXPECT_EQ(error.code(), Errc::invalid_argument);
            EXPECT_NE(std::string(error.what()).find(says), std::string::npos) << error.what();
        }
    };
    refused({}, "1 to 4 layers");
    refused({layer(64, 64, TileFormat::bc1, 1), layer(64, 64, TileFormat::bc1, 2),
             layer(64, 64, TileFormat::bc1, 3), layer(64, 64, TileFormat::bc1, 4),
             layer(64, 64, TileFormat::bc1, 5)},
            "1 to 4 layers");
    refused({layer(64, 64, TileFormat::bc1, 1), nullptr}, "layer has no source");
    refused({layer(64, 64, TileFormat::bc1, 1), layer(64, 32, TileFormat::bc5, 2)},
            "layer 1 (random blocks 2) is 64 x 32, the first layer 64 x 64");
    refused({layer(64, 64, TileFormat::rgba8, 1)}, "layer 0 (random blocks 1) is rgba8");
    refused({layer(64, 64, TileFormat::bc1, 1),
             layer(64, 64, TileFormat::bc5, 2, {AddressMode::repeat, AddressMode::repeat})},
            "layer 1 (random blocks 2) wraps differently");
    auto inner = std::make_shared<StackSource>(
        std::vector<std::shared_ptr<const TileSource>>{layer(64, 64, TileFormat::bc1, 1)});
    refused({layer(64, 64, TileFormat::bc1, 1), inner}, "is a stack itself");
    EXPECT_THROW(LayerPageCache(0), Error);
    const StackSource stack({layer(64, 64, TileFormat::bc1, 1)});
    std::vector<std::byte> page(page_bytes);
    EXPECT_THROW(stack.fill_host(stack.layout().page_count, page), Error);
    std::vector<std::byte> short_page(page_bytes - 1);
    EXPECT_THROW(stack.fill_host(0, short_page), Error);
}

// A layer page covers up to four stack pages: filled in order, with room for every layer page,
// each layer page is read once; and a cache shared by two stacks keeps their pages apart.
TEST(StackSourceTest, NeighbouringStackPagesReadEachLayerPageOnce) {
    auto cache = std::make_shared<LayerPageCache>(64);
    const auto base = layer(2000, 2000, TileFormat::bc1, 1);
    const auto normal = layer(2000, 2000, TileFormat::bc5, 2);
    const StackSource stack({base, normal}, {.cache = cache});
    const StackSource other({layer(2000, 2000, TileFormat::bc1, 3), normal}, {.cache = cache});
    std::vector<std::byte> page(page_bytes);
    for (std::uint64_t p = 0; p < stack.layout().page_count; ++p) stack.fill_host(p, page);
    const std::uint64_t layer_pages = base->layout().page_count + normal->layout().page_count;
    EXPECT_EQ(cache->pages_read(), layer_pages);
    EXPECT_LT(layer_pages, 2 * stack.layout().page_count);
    for (std::uint64_t p = 0; p < other.layout().page_count; ++p) other.fill_host(p, page);
    EXPECT_EQ(cache->pages_read(), layer_pages + base->layout().page_count);  // its own base
    expect_records_hold_layer_blocks(other);
}

class StackStreamingTest : public test::BackendTest {};

// A stack through the Streamer: its tail packed beside a plain texture's, its coarse levels in
// the packed-level pool under the stack's shape, every page as StackSource fills it.
TEST_P(StackStreamingTest, AStackStreamsLikeATextureOfItsOwnShape) {
    Streamer streamer(*backend_, test::streamer_test_settings(24));
    const TextureSampling srgb{.color_space = ColorSpace::srgb};
    auto stack = std::make_shared<StackSource>(std::vector<std::shared_ptr<const TileSource>>{
        layer(1500, 1000, TileFormat::bc1, 1, srgb), layer(1500, 1000, TileFormat::bc5, 2),
        layer(1500, 1000, TileFormat::bc4, 3)});
    const TextureId plain = streamer.add_texture(
        std::make_shared<RandomBlocksSource>(TextureShape{600, 600, TileFormat::bc1}, 9));
    const TextureId id = streamer.add_texture(stack);
    const TextureLayout layout = streamer.textures().layout(id);
    EXPECT_EQ(layout.stack, stack->shape().stack);
    std::vector<PageIndex> all;
    for (TextureId t : {plain, id}) {
        const PageIndex base = streamer.textures().base_page(t);
        for (std::uint64_t p = 0; p < streamer.textures().layout(t).page_count; ++p) {
            all.push_back(base + p);
        }
    }
    streamer.request(all);
    ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
    std::size_t checked = 0;
    EXPECT_TRUE(test::ready_pages_hold_their_source(*backend_, streamer, id, checked));
    EXPECT_EQ(checked, layout.page_count);
    std::size_t plain_checked = 0;
    EXPECT_TRUE(test::ready_pages_hold_their_source(*backend_, streamer, plain, plain_checked));
    const StreamerStatistics stats = streamer.statistics();
    EXPECT_EQ(stats.failed_pages, 0u);
    EXPECT_GE(stats.packed_levels, 1u) << "the stack's coarse levels share pages";
    streamer.page_table().check_invariants();
}

INSTANTIATE_TEST_SUITE_P(Backends, StackStreamingTest, testing::ValuesIn(test::all_backend_names()),
                         test::backend_param_name);

}  // namespace
}  // namespace vtpage::vt
