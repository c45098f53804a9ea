#include "mip_pyramid_builder.hpp"

#include <algorithm>
#include <cstring>

#include "srgb_transfer.hpp"
#include "vtpage/base/error.hpp"

namespace vtpage::bake {

// One mip level: a ring of its last rows, its first rows where a band wraps to them, and the
// bands it owes the sink.
class MipPyramidBuilder::Level {
public:
    Level(std::uint32_t mip, std::uint32_t width, std::uint32_t height, std::uint32_t payload,
          std::uint32_t border, vt::AddressMode address_v)
        : mip_(mip),
          width_(width),
          height_(height),
          payload_(payload),
          border_(border),
          address_v_(address_v),
          bands_((height + payload - 1) / payload),
          band_rows_(payload + 2 * border),
          ring_rows_(std::min(payload + 2 * border, height)),
          ring_(std::size_t(ring_rows_) * row_bytes()),
          head_rows_(head_rows(height, payload, border, address_v, ring_rows_)),
          head_(std::size_t(head_rows_) * row_bytes()) {}

    std::uint32_t width() const { return width_; }
    std::uint32_t height() const { return height_; }
    std::uint32_t rows() const { return rows_; }
    bool complete() const { return rows_ == height_ && next_band_ == bands_ && held_.empty(); }
    std::size_t row_bytes() const { return std::size_t(width_) * 4; }
    std::uint64_t buffer_bytes() const { return ring_.size() + head_.size(); }

    // Row y: among the last ring_rows_ rows written, or among the first head_rows_.
    const std::uint8_t* row(std::uint32_t y) const {
        if (y < rows_ && std::uint64_t(y) + ring_rows_ >= rows_) {
            return &ring_[(y % ring_rows_) * row_bytes()];
        }
        if (y < head_rows_ && y < rows_) return &head_[std::size_t(y) * row_bytes()];
        throw Error(Errc::backend_failure, "MipPyramidBuilder",
                    detail::concat("row ", y, " of mip ", mip_, " is no longer held"));
    }
    // Where the next row goes; commit() makes it a row of the level.
    std::uint8_t* next_slot() { return &ring_[(rows_ % ring_rows_) * row_bytes()]; }

    // The bands whose rows all exist go to the sink: in order, but for those that wrap to rows
    // still to come, which are held until those exist.
    void commit(const MipBandSink& sink) {
        if (rows_ < head_rows_) {
            std::memcpy(&head_[std::size_t(rows_) * row_bytes()], next_slot(), row_bytes());
        }
        ++rows_;
        for (; next_band_ < bands_ && last_row_of(next_band_) < rows_; ++next_band_) {
            held_.push_back(next_band_);
        }
        for (std::size_t i = 0; i < held_.size();) {
            if (last_needed_row(held_[i]) < rows_) {
                emit(held_[i], sink);
                held_.erase(held_.begin() + std::ptrdiff_t(i));
            } else {
                ++i;
            }
        }
    }

private:
    // With repeat along v, the bands whose top border wraps past the level's last row are held
    // until that row exists (band 0, and more where the border is wider than the payload), and
    // the last bands' bottom borders wrap to the first rows: the level's first rows are kept
    // for both, where the ring does not hold the whole level. Clamp and mirrored repeat read
    // rows of the band's own neighbourhood, which the ring holds.
    static std::uint32_t head_rows(std::uint32_t height, std::uint32_t payload,
                                   std::uint32_t border, vt::AddressMode address_v,
                                   std::uint32_t ring_rows) {
        if (address_v != vt::AddressMode::repeat || height <= ring_rows || border == 0) return 0;
        const std::uint64_t wrapping_bands = (std::uint64_t(border) + payload - 1) / payload;
        return std::uint32_t(std::min<std::uint64_t>(height, wrapping_bands * payload + border));
    }

    std::uint64_t first_row_of(std::uint32_t band) const { return std::uint64_t(band) * payload_; }
    // The band's last row inside the level: once it exists, the band's own rows are whole.
    std::uint64_t last_row_of(std::uint32_t band) const {
        return std::min<std::uint64_t>(first_row_of(band) + payload_ + border_ - 1, height_ - 1);
    }
    std::uint32_t band_row(std::uint32_t band, std::size_t index) const {
        return vt::address_texel(
            address_v_, std::int64_t(first_row_of(band)) - border_ + std::int64_t(index), height_);
    }
    // The last row of the level that the band reads, its wrapped border rows included.
    std::uint32_t last_needed_row(std::uint32_t band) const {
        std::uint32_t last = 0;
        for (std::size_t i = 0; i < band_rows_.size(); ++i) {
            last = std::max(last, band_row(band, i));
        }
        return last;
    }

    void emit(std::uint32_t band, const MipBandSink& sink) {
        for (std::size_t i = 0; i < band_rows_.size(); ++i) band_rows_[i] = row(band_row(band, i));
        sink(MipBand{mip_, band, width_, height_, band_rows_});
    }

    std::uint32_t mip_, width_, height_, payload_, border_;
    vt::AddressMode address_v_;
    std::uint32_t bands_;
    std::vector<const std::uint8_t*> band_rows_;
    std::uint32_t ring_rows_;
    std::vector<std::uint8_t> ring_;
    std::uint32_t head_rows_;
    std::vector<std::uint8_t> head_;
    std::uint32_t rows_ = 0;
    std::uint32_t next_band_ = 0;
    std::vector<std::uint32_t> held_;  // bands whose own rows exist, in order, waiting for others
};

namespace {

[[noreturn]] void refuse(const char* operation, const std::string& detail) {
    throw Error(Errc::invalid_argument, operation, detail);
}

// One row of the next level from two rows of this one (the same row twice at a 1-high level):
// the rounded mean of the stored values, or for sRGB colour, of their linear light.
void downsample_row(const std::uint8_t* top, const std::uint8_t* bottom, std::uint32_t width,
                    std::uint8_t* out, std::uint32_t out_width, vt::ColorSpace color_space) {
    const std::size_t colour_channels = color_space == vt::ColorSpace::srgb ? 3 : 0;
    const SrgbTransfer& srgb = SrgbTransfer::tables();
    for (std::uint32_t x = 0; x < out_width; ++x) {
        const std::size_t left = std::size_t(2 * x) * 4;
        const std::size_t right = std::size_t(std::min(2 * x + 1, width - 1)) * 4;
        std::uint8_t* texel = out + std::size_t(x) * 4;
        for (std::size_t c = 0; c < colour_channels; ++c) {
            const double sum = srgb.to_linear(top[left + c]) + srgb.to_linear(top[right + c]) +
                               srgb.to_linear(bottom[left + c]) + srgb.to_linear(bottom[right + c]);
            texel[c] = srgb.to_srgb(sum / 4);
        }
        for (std::size_t c = colour_channels; c < 4; ++c) {
            const unsigned sum =
                unsigned(top[left + c]) + top[right + c] + bottom[left + c] + bottom[right + c] + 2;
            texel[c] = std::uint8_t(sum / 4);
        }
    }
}

}  // namespace

MipPyramidBuilder::MipPyramidBuilder(std::uint32_t width, std::uint32_t height,
                                     std::uint32_t tile_payload, std::uint32_t tile_border,
                                     MipBandSink sink, vt::TextureSampling sampling)
    : width_(width), height_(height), sampling_(sampling), sink_(std::move(sink)) {
    const char* operation = "MipPyramidBuilder";
    if (width == 0 || height == 0 || width > max_side || height > max_side) {
        refuse(operation, detail::concat("a ", width, " x ", height, " image: each side must be ",
                                         "1 to ", max_side, " texels"));
    }
    if (tile_payload == 0 || tile_border > max_side) {
        refuse(operation, detail::concat("tiles of payload ", tile_payload, " and border ",
                                         tile_border, " cannot cut a level"));
    }
    if (!sink_) refuse(operation, "no sink for the bands");
    if (std::uint32_t(sampling.address_v) >= vt::address_mode_count ||
        std::uint32_t(sampling.color_space) >= vt::color_space_count) {
        refuse(operation, detail::concat("address mode ", std::uint32_t(sampling.address_v),
                                         " or colour space ", std::uint32_t(sampling.color_space),
                                         " is not one"));
    }
    for (std::uint32_t w = width, h = height, mip = 0;;
         w = std::max(1u, w / 2), h = std::max(1u, h / 2), ++mip) {
        levels_.push_back(
            std::make_unique<Level>(mip, w, h, tile_payload, tile_border, sampling.address_v));
        buffer_bytes_peak_ += levels_.back()->buffer_bytes();
        if (w == 1 && h == 1) break;
    }
}

MipPyramidBuilder::~MipPyramidBuilder() = default;

std::uint32_t MipPyramidBuilder::mip_count() const noexcept {
    return std::uint32_t(levels_.size());
}

void MipPyramidBuilder::check_usable(const char* operation) const {
    if (finished_) refuse(operation, "the pyramid is finished");
    if (failed_) refuse(operation, "the sink failed earlier: the pyramid is incomplete");
}

void MipPyramidBuilder::add_rows(std::uint32_t count, std::span<const std::uint8_t> texels) {
    check_usable("MipPyramidBuilder::add_rows");
    const std::size_t row_bytes = std::size_t(width_) * 4;
    if (count > height_ - rows_added_ || texels.size() != count * row_bytes) {
        refuse("MipPyramidBuilder::add_rows",
               detail::concat(count, " rows in ", texels.size(), " bytes: rows of ", row_bytes,
                              " bytes, at most ", height_ - rows_added_, " more of them"));
    }
    failed_ = true;  // until the rows are through: a sink that throws leaves a partial pyramid
    for (std::uint32_t i = 0; i < count; ++i) {
        std::memcpy(levels_[0]->next_slot(), texels.data() + i * row_bytes, row_bytes);
        push_row(0);
        ++rows_added_;
    }
    failed_ = false;
}

// Level `mip` has a new row: its bands, then the next level's row once both its rows exist.
void MipPyramidBuilder::push_row(std::size_t mip) {
    Level& level = *levels_[mip];
    level.commit(sink_);
    if (mip + 1 == levels_.size()) return;
    Level& next = *levels_[mip + 1];
    const std::uint32_t y = next.rows();
    const std::uint32_t bottom = std::min(2 * y + 1, level.height() - 1);
    if (y >= next.height() || bottom != level.rows() - 1) return;
    downsample_row(level.row(2 * y), level.row(bottom), level.width(), next.next_slot(),
                   next.width(), sampling_.color_space);
    push_row(mip + 1);
}

void MipPyramidBuilder::finish() {
    check_usable("MipPyramidBuilder::finish");
    if (rows_added_ != height_) {
        refuse("MipPyramidBuilder::finish",
               detail::concat(rows_added_, " of the image's ", height_, " rows were added"));
    }
    // The last row of level 0 completes every level: the chain below it needs no more input.
    for (const auto& level : levels_) {
        if (!level->complete()) {
            throw Error(Errc::backend_failure, "MipPyramidBuilder::finish",
                        "a level was left incomplete");
        }
    }
    finished_ = true;
}

}  // namespace vtpage::bake
