// Writes the GLSL header with the constants of texture_layout.hpp and feedback_entry.hpp, so that
// the shaders and the C++ side can never disagree: run at build time, output vtpage/layout.glsl.
#include <bit>
#include <cstdio>
#include <cstdlib>

#include "vtpage/interop/vulkan_texture_info.hpp"
#include "vtpage/streaming/layout/feedback_entry.hpp"
#include "vtpage/streaming/layout/texture_layout.hpp"
#include "vtpage/streaming/layout/texture_sampling.hpp"

namespace vt = vtpage::vt;

namespace {

// The bit position and mask of one field of a packed word, found by packing probe values.
struct Field {
    unsigned shift;
    unsigned mask;
};
Field field_of(std::uint32_t packed_one, std::uint32_t packed_all_ones) {
    const unsigned shift = static_cast<unsigned>(std::countr_zero(packed_one));
    return {shift, packed_all_ones >> shift};
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s <output.glsl>\n", argv[0]);
        return 2;
    }
    const Field texture = field_of(vt::FeedbackEntry::make({1, 0, 0, 0}).texture_mip,
                                   vt::FeedbackEntry::make({0xffffffu, 0, 0, 0}).texture_mip);
    const Field mip = field_of(vt::FeedbackEntry::make({0, 1, 0, 0}).texture_mip,
                               vt::FeedbackEntry::make({0, 0xffu, 0, 0}).texture_mip);
    const Field tile_x = field_of(vt::FeedbackEntry::make({0, 0, 1, 0}).tile_xy,
                                  vt::FeedbackEntry::make({0, 0, 0xffffu, 0}).tile_xy);
    const Field tile_y = field_of(vt::FeedbackEntry::make({0, 0, 0, 1}).tile_xy,
                                  vt::FeedbackEntry::make({0, 0, 0, 0xffffu}).tile_xy);
    // The fields must round-trip, or the probes above measured the wrong thing.
    const vt::TileId probe{0x123456u, 0x9u, 0x1234u, 0x4321u};
    const vt::TileId back = vt::FeedbackEntry::make(probe).tile();
    if (back.texture != probe.texture || back.mip != probe.mip || back.x != probe.x ||
        back.y != probe.y) {
        std::fprintf(stderr, "FeedbackEntry does not round-trip a tile id\n");
        return 1;
    }

    std::FILE* out = std::fopen(argv[1], "w");
    if (!out) {
        std::perror(argv[1]);
        return 1;
    }
    std::fprintf(out,
                 "// Generated at build time from texture_layout.hpp, feedback_entry.hpp,\n"
                 "// texture_sampling.hpp and vulkan_texture_info.hpp by\n"
                 "// shaders/layout_generator.cpp. Do not edit.\n"
                 "#ifndef VTPAGE_LAYOUT_GLSL\n#define VTPAGE_LAYOUT_GLSL\n\n");
    auto define = [&](const char* name, unsigned long long value) {
        std::fprintf(out, "#define %s %lluu\n", name, value);
    };
    define("VT_TILE_SIZE", vt::tile_size);
    define("VT_TILE_BORDER", vt::tile_border);
    define("VT_TILE_PAYLOAD", vt::tile_payload);
    define("VT_TEXEL_BYTES", vt::texel_bytes);
    define("VT_TILE_BYTES", vt::tile_bytes);
    define("VT_PAGE_TILES_X", vt::page_tiles_x);
    define("VT_PAGE_TILES_Y", vt::page_tiles_y);
    define("VT_TILES_PER_PAGE", vt::tiles_per_page);
    define("VT_PAGE_BYTES", vt::page_bytes);
    define("VT_MAX_SIZE_LOG2", vt::max_size_log2);
    define("VT_MAX_SIZE", vt::max_size);
    define("VT_MAX_MIPS", vt::max_mips);
    define("VT_MAX_STACK_LAYERS", vt::max_stack_layers);
    define("VT_FEEDBACK_EMPTY", vt::FeedbackEntry::empty);
    define("VT_FEEDBACK_MAX_TEXTURES", vt::FeedbackEntry::max_textures);
    define("VT_FEEDBACK_TEXTURE_SHIFT", texture.shift);
    define("VT_FEEDBACK_TEXTURE_MASK", texture.mask);
    define("VT_FEEDBACK_MIP_SHIFT", mip.shift);
    define("VT_FEEDBACK_MIP_MASK", mip.mask);
    define("VT_FEEDBACK_TILE_X_SHIFT", tile_x.shift);
    define("VT_FEEDBACK_TILE_X_MASK", tile_x.mask);
    define("VT_FEEDBACK_TILE_Y_SHIFT", tile_y.shift);
    define("VT_FEEDBACK_TILE_Y_MASK", tile_y.mask);
    define("VT_TEXTURE_INFO_BYTES", sizeof(vtpage::VulkanTextureInfo));
    define("VT_FORMAT_RGBA8", std::uint32_t(vt::TileFormat::rgba8));
    define("VT_FORMAT_BC1", std::uint32_t(vt::TileFormat::bc1));
    define("VT_FORMAT_BC3", std::uint32_t(vt::TileFormat::bc3));
    define("VT_FORMAT_BC4", std::uint32_t(vt::TileFormat::bc4));
    define("VT_FORMAT_BC5", std::uint32_t(vt::TileFormat::bc5));
    define("VT_ADDRESS_CLAMP_TO_EDGE", std::uint32_t(vt::AddressMode::clamp_to_edge));
    define("VT_ADDRESS_REPEAT", std::uint32_t(vt::AddressMode::repeat));
    define("VT_ADDRESS_MIRRORED_REPEAT", std::uint32_t(vt::AddressMode::mirrored_repeat));
    define("VT_COLOR_SPACE_LINEAR", std::uint32_t(vt::ColorSpace::linear));
    define("VT_COLOR_SPACE_SRGB", std::uint32_t(vt::ColorSpace::srgb));
    std::fprintf(out, "\n#endif\n");
    if (std::fclose(out) != 0) {
        std::perror(argv[1]);
        return 1;
    }
    return 0;
}
