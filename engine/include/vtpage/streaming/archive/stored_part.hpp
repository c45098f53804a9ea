// One part of a page's stored bytes that decodes apart from the others: a page stored as several
// zstd frames (page archive format version 4) decodes on several threads at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace vtpage::vt {

struct StoredPart {
    std::span<const std::byte> stored;  // inside the stored bytes the page was split from
    std::uint32_t index = 0;            // 0 .. parts - 1
    std::uint64_t offset = 0;           // where in the page it decodes to
    std::uint64_t bytes = 0;            // how many bytes it decodes to
};

}  // namespace vtpage::vt
