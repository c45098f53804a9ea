#include "vtpage/streaming/sources/identity_source.hpp"

#include <cstring>

#include "streaming/sources/identity_pattern.hpp"
#include "vtpage/base/error.hpp"

namespace vtpage::vt {

IdentitySource::IdentitySource(IdentitySettings settings) : settings_(settings) {
    if (settings_.size_log2 > max_size_log2) {
        throw Error(Errc::invalid_argument, "IdentitySource", "the texture is too large",
                    detail::concat("size_log2=", settings_.size_log2));
    }
}

std::string IdentitySource::name() const {
    return detail::concat("identity texture ", settings_.texture);
}

void IdentitySource::fill_host(std::uint64_t page, std::span<std::byte> destination) const {
    if (page >= layout().page_count) {
        throw Error(Errc::out_of_range, "IdentitySource::fill_host", "the page is past the texture",
                    detail::concat("page=", page, " pages=", layout().page_count));
    }
    if (destination.size() < page_bytes) {
        throw Error(Errc::invalid_argument, "IdentitySource::fill_host",
                    "the destination is smaller than a page");
    }
    const std::uint32_t seed = identity::page_seed(settings_.texture, page);
    for (std::uint32_t word = 0; word < identity::words_per_page; ++word) {
        const std::uint32_t value = identity::seeded_word(seed, word);
        std::memcpy(destination.data() + std::size_t(word) * 4, &value, 4);
    }
}

bool IdentitySource::holds(std::uint64_t page, std::uint32_t first,
                           std::span<const std::uint32_t> words) const {
    for (std::size_t i = 0; i < words.size(); ++i) {
        const auto word = first + std::uint32_t(i);
        if (words[i] != identity::texel_word(settings_.texture, page, word)) return false;
    }
    return true;
}

}  // namespace vtpage::vt
