// A mip pyramid built in one pass over level 0's rows, in memory that grows with the image's
// width and not with its height, so that an image larger than memory can be baked.
//
// Level m + 1 is max(1, w / 2) x max(1, h / 2) of level m (Vulkan's mip chain, down to 1 x 1);
// each of its texels is the box mean of level-m texels (2x, 2y), (2x + 1, 2y), (2x, 2y + 1),
// (2x + 1, 2y + 1), coordinates clamped to the level: per channel (a + b + c + d + 2) / 4 of the
// stored values, except the colour channels of an sRGB texture, whose mean is taken in linear
// light (decoded exactly, averaged, encoded back and rounded to nearest; alpha as stored).
// Every level is cut into bands, one per row of tiles: band ty holds the level's rows
// [ty * P - B, ty * P + P + B) (P the tile payload, B its border), rows outside the level
// mapped into it by the address mode along v (vt::address_texel: clamped, wrapped or mirrored).
// The sink gets each band once, as soon as every row it holds exists. One level's bands come in
// order, but for those whose border wraps to rows still to come (with repeat along v, band 0's
// top border is the level's last rows), which come once the level's last row exists; the levels'
// bands interleave.
//
// Each level keeps a ring of its last P + 2B rows (fewer where the level is shorter), so the
// buffers total about 2 x (P + 2B) x width x 4 bytes whatever the height. With repeat along v a
// level taller than its ring also keeps its first P + B rows (B rounded up to whole payloads
// where the border is wider than the payload): the held bands' own rows, and the rows the last
// bands' bottom borders wrap to. That is at most as much again: the buffers still follow the
// width alone.
//
// Errors (vtpage::Error, invalid_argument): a size of 0 or above 2^20, a payload of 0, an address
// mode or colour space that is not one, rows that are not whole rows or more than the image has,
// finish() before the last row, any call after finish() or after the sink threw.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "vtpage/streaming/layout/texture_sampling.hpp"

namespace vtpage::bake {

// One band of one mip level: P + 2B rows of level_width RGBA8 texels each. The rows point into
// the builder's buffers and are valid only during the sink's call.
struct MipBand {
    std::uint32_t mip = 0;
    std::uint32_t tile_row = 0;  // ty: the band starts at level row ty * P - B
    std::uint32_t level_width = 0;
    std::uint32_t level_height = 0;
    std::span<const std::uint8_t* const> rows;

    std::span<const std::uint8_t> row(std::size_t index) const {
        return {rows[index], std::size_t(level_width) * 4};
    }
};

using MipBandSink = std::function<void(const MipBand& band)>;

class MipPyramidBuilder {
public:
    static constexpr std::uint32_t max_side = 1u << 20;

    MipPyramidBuilder(std::uint32_t width, std::uint32_t height, std::uint32_t tile_payload,
                      std::uint32_t tile_border, MipBandSink sink,
                      vt::TextureSampling sampling = {});
    ~MipPyramidBuilder();
    MipPyramidBuilder(const MipPyramidBuilder&) = delete;
    MipPyramidBuilder& operator=(const MipPyramidBuilder&) = delete;

    // The next `count` rows of level 0, top to bottom: count x width x 4 bytes of RGBA8.
    void add_rows(std::uint32_t count, std::span<const std::uint8_t> texels);
    // After the last row: checks that every band of every level went to the sink.
    void finish();

    std::uint32_t mip_count() const noexcept;
    std::uint32_t rows_added() const noexcept { return rows_added_; }
    // The most bytes the row buffers held at once.
    std::uint64_t buffer_bytes_peak() const noexcept { return buffer_bytes_peak_; }

private:
    class Level;

    void check_usable(const char* operation) const;
    void push_row(std::size_t mip);

    std::uint32_t width_;
    std::uint32_t height_;
    vt::TextureSampling sampling_;  // address_v and color_space; address_u is the sink's
    MipBandSink sink_;
    std::vector<std::unique_ptr<Level>> levels_;
    std::uint32_t rows_added_ = 0;
    std::uint64_t buffer_bytes_peak_ = 0;
    bool finished_ = false;
    bool failed_ = false;
};

}  // namespace vtpage::bake
