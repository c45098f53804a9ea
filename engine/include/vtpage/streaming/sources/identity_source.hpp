// The identity tile source: every texel holds identity::texel_word of its own (texture, page,
// texel), so that a check can prove which page a read came from (tests of deferred page reuse,
// the viewer's identity check). Not an image: its colours are noise.
#pragma once

#include <cstdint>

#include "vtpage/streaming/sources/tile_source.hpp"

namespace vtpage::vt {

struct IdentitySettings {
    std::uint32_t texture = 1;  // the tag hashed into every texel
    std::uint32_t size_log2 = 16;
};

class IdentitySource final : public TileSource {
public:
    // invalid_argument for size_log2 > max_size_log2.
    explicit IdentitySource(IdentitySettings settings = {});

    TextureShape shape() const noexcept override {
        return TextureShape::square(settings_.size_log2);
    }
    std::uint32_t texture() const noexcept { return settings_.texture; }
    std::string name() const override;
    // out_of_range for a page past the texture.
    void fill_host(std::uint64_t page, std::span<std::byte> destination) const override;

    // Whether `words` (read from the start of a page, word offset `first`) are page `page`'s.
    bool holds(std::uint64_t page, std::uint32_t first, std::span<const std::uint32_t> words) const;

private:
    IdentitySettings settings_;
};

}  // namespace vtpage::vt
