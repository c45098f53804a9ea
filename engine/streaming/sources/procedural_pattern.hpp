// The procedural texture: a deterministic function of (seed, texture size, mip, texel) shared by
// the CPU code and the CUDA kernel. Integer arithmetic only, so both give identical bytes (no
// floating point, hence no FMA contraction or rounding-mode differences).
//
// The model is midpoint displacement on dyadic lattices. Level j is a lattice of points every
// 2^j texels of mip 0, for j = 0 .. size_log2. The height S_j at a point of level j is a random
// displacement (amplitude 128 * 2^j) plus the height of level j + 1 interpolated there (the
// point itself, the mean of two, or of four neighbours). Mip m shows texel (x, y) from the four
// level-m points at its corners: their mean gives the height (coloured by a terrain palette:
// water, sand, grass, forest, rock, snow) and their differences the slope (hill shading).
//
// Why this shape:
//   - Consistent across mips: mip m + 1 and the box filter of mip m share every level above m;
//     they differ only by the zero-mean displacements of level m.
//   - Detail at every mip: the displacement amplitude doubles per level, so every level adds the
//     same slope per texel; the hill shading of mip m always has texel-scale detail.
//   - Fast: a point costs two hashes and an average, about one point per texel, so a tile's
//     lattice window is computed once (in shared memory on the GPU) and each texel reads four.
//   - A pure function of the lattice point: tiles evaluated apart agree, so a tile's border
//     equals its neighbours' texels.
#pragma once

#include <cstddef>
#include <cstdint>

#include "streaming/sources/mix32.hpp"
#include "vtpage/streaming/layout/texture_layout.hpp"

#if defined(__CUDA_ARCH__)
#define VTPAGE_UNROLL _Pragma("unroll")
#else
#define VTPAGE_UNROLL
#endif

namespace vtpage::vt::procedural {

// The hash key of one level of one texture.
VTPAGE_HOST_DEVICE constexpr std::uint32_t level_key(std::uint32_t seed, std::uint32_t level) {
    return mix32(seed ^ mix32(level * 0x9e3779b9u + 0x632be5abu));
}

// The random displacement of point (ix, iy) of a level: -128 .. 127 times 2^level.
VTPAGE_HOST_DEVICE constexpr std::int32_t displacement(std::uint32_t key, std::uint32_t level,
                                                       std::int32_t ix, std::int32_t iy) {
    const std::uint32_t h =
        mix32(std::uint32_t(ix) * 0x8da6b343u ^ mix32(std::uint32_t(iy) * 0xd8163841u ^ key));
    return (std::int32_t(h >> 24) - 128) * (std::int32_t(1) << level);
}

// A rectangle of lattice points of one level: [x0, x1] x [y0, y1], inclusive.
struct Window {
    std::int32_t x0 = 0, y0 = 0, x1 = 0, y1 = 0;
    VTPAGE_HOST_DEVICE constexpr std::int32_t width() const { return x1 - x0 + 1; }
    VTPAGE_HOST_DEVICE constexpr std::int32_t height() const { return y1 - y0 + 1; }
    // The window of the level `steps` coarser that covers what this one needs to interpolate.
    VTPAGE_HOST_DEVICE constexpr Window coarser(std::int32_t steps) const {
        const std::int32_t round = (1 << steps) - 1;
        return {x0 >> steps, y0 >> steps, (x1 + round) >> steps, (y1 + round) >> steps};
    }
};

// The height of point (ix, iy) of a level below the top: its displacement plus the level above
// interpolated there. `parent` holds the level above over window `pw`, row by row.
VTPAGE_HOST_DEVICE constexpr std::int32_t interpolate_parent(const std::int32_t* parent,
                                                             const Window& pw, std::int32_t ix,
                                                             std::int32_t iy) {
    const std::int32_t stride = pw.width();
    const std::int32_t* p =
        parent + std::ptrdiff_t((iy >> 1) - pw.y0) * stride + ((ix >> 1) - pw.x0);
    const bool odd_x = (ix & 1) != 0, odd_y = (iy & 1) != 0;
    if (!odd_x && !odd_y) return p[0];
    if (odd_x && !odd_y) return (p[0] + p[1]) >> 1;
    if (!odd_x) return (p[0] + p[stride]) >> 1;
    return (p[0] + p[1] + p[stride] + p[stride + 1]) >> 2;
}

// Palette stops: height (about -256 .. 256, water below 0) -> colour.
struct PaletteStop {
    std::int32_t height;
    std::int32_t r, g, b;
};
inline constexpr int palette_stops = 11;
VTPAGE_HOST_DEVICE constexpr PaletteStop palette_stop(int i) {
    constexpr PaletteStop stops[palette_stops] = {
        {-1024, 8, 24, 72},   {-60, 20, 60, 140},   {-10, 50, 120, 180},  {0, 194, 178, 128},
        {12, 120, 160, 70},   {60, 60, 120, 50},    {110, 40, 85, 40},    {150, 110, 100, 90},
        {190, 150, 140, 130}, {215, 245, 245, 250}, {1024, 255, 255, 255}};
    return stops[i];
}

VTPAGE_HOST_DEVICE constexpr std::int32_t clamp_int(std::int32_t v, std::int32_t lo,
                                                    std::int32_t hi) {
    return v < lo ? lo : (v > hi ? hi : v);
}

// The RGBA8 texel (R in the low byte) of mip `mip` from the level-`mip` heights at its corners.
VTPAGE_HOST_DEVICE constexpr std::uint32_t texel_colour(std::int32_t c00, std::int32_t c10,
                                                        std::int32_t c01, std::int32_t c11,
                                                        std::uint32_t mip,
                                                        std::uint32_t size_log2) {
    // Heights are below 2^28 in magnitude, so these sums fit 32 bits.
    const std::int32_t height = clamp_int(((c00 + c10 + c01 + c11) >> 2) >> size_log2, -1023, 1023);
    // The last stop at or below the height and the next one (unrolled: constant indices).
    PaletteStop a = palette_stop(0), b = palette_stop(1);
    VTPAGE_UNROLL
    for (int i = 1; i < palette_stops - 1; ++i) {
        if (palette_stop(i).height <= height) {
            a = palette_stop(i);
            b = palette_stop(i + 1);
        }
    }
    const std::int32_t t = ((height - a.height) << 8) / (b.height - a.height);  // 0 .. 256
    std::int32_t r = a.r + (((b.r - a.r) * t) >> 8);
    std::int32_t g = a.g + (((b.g - a.g) * t) >> 8);
    std::int32_t bl = a.b + (((b.b - a.b) * t) >> 8);
    // Slope per mip-0 texel, lit from the upper left; water is shaded less (waves, not hills).
    const std::int32_t gx = (c10 + c11 - c00 - c01) >> (mip + 1);
    const std::int32_t gy = (c01 + c11 - c00 - c10) >> (mip + 1);
    std::int32_t light = -(gx + gy) >> 2;
    if (height < 0) light >>= 2;
    const std::int32_t shade = clamp_int(256 + light, 64, 448);
    r = clamp_int((r * shade) >> 8, 0, 255);
    g = clamp_int((g * shade) >> 8, 0, 255);
    bl = clamp_int((bl * shade) >> 8, 0, 255);
    return std::uint32_t(r) | std::uint32_t(g) << 8 | std::uint32_t(bl) << 16 | 0xff000000u;
}

// One texel, evaluated alone through 2 x 2 windows from the top level down: the reference that
// the tile fills (CPU and CUDA) must match. x, y < the mip's size.
VTPAGE_HOST_DEVICE constexpr std::uint32_t texel(std::uint32_t seed, std::uint32_t size_log2,
                                                 std::uint32_t mip, std::uint32_t x,
                                                 std::uint32_t y) {
    const Window base{std::int32_t(x), std::int32_t(y), std::int32_t(x) + 1, std::int32_t(y) + 1};
    std::int32_t parent[4] = {}, current[4] = {};
    Window parent_window{};
    for (std::int32_t level = std::int32_t(size_log2); level >= std::int32_t(mip); --level) {
        const Window w = base.coarser(level - std::int32_t(mip));
        const std::uint32_t key = level_key(seed, std::uint32_t(level));
        for (std::int32_t iy = w.y0; iy <= w.y1; ++iy) {
            for (std::int32_t ix = w.x0; ix <= w.x1; ++ix) {
                std::int32_t v = displacement(key, std::uint32_t(level), ix, iy);
                if (level < std::int32_t(size_log2)) {
                    v += interpolate_parent(parent, parent_window, ix, iy);
                }
                current[(iy - w.y0) * w.width() + (ix - w.x0)] = v;
            }
        }
        for (int i = 0; i < 4; ++i) parent[i] = current[i];
        parent_window = w;
    }
    const std::int32_t stride = parent_window.width();
    return texel_colour(parent[0], parent[1], parent[stride], parent[stride + 1], mip, size_log2);
}

}  // namespace vtpage::vt::procedural
