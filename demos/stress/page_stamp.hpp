// The stamp every page of the stress run carries: at each `stride` bytes of the page, 32 bytes
// that name the virtual page, the generation the table gave it at its commit, the offset, and
// a check word over the three. Written at the first access after a commit, checked at every
// access after that: by the CPU on the host, by a kernel on the GPU (this header is shared with
// the CUDA code, so it stays C++17 and free of engine types).
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define VTPAGE_STRESS_HOST_DEVICE __host__ __device__
#else
#define VTPAGE_STRESS_HOST_DEVICE
#endif

namespace vtpage::stress {

struct PageStamp {
    std::uint64_t page;
    std::uint64_t generation;
    std::uint64_t offset;
    std::uint64_t check;
};
static_assert(sizeof(PageStamp) == 32, "a stamp is 32 bytes");

VTPAGE_STRESS_HOST_DEVICE inline std::uint64_t mix_bits(std::uint64_t value) {
    // splitmix64's finaliser: every input bit moves about half the output bits.
    value ^= value >> 30;
    value *= 0xbf58476d1ce4e5b9ull;
    value ^= value >> 27;
    value *= 0x94d049bb133111ebull;
    value ^= value >> 31;
    return value;
}

VTPAGE_STRESS_HOST_DEVICE inline PageStamp make_stamp(std::uint64_t page, std::uint64_t generation,
                                                      std::uint64_t offset) {
    PageStamp stamp;
    stamp.page = page;
    stamp.generation = generation;
    stamp.offset = offset;
    stamp.check = mix_bits(page ^ mix_bits(generation ^ mix_bits(offset ^ 0x7674706167650000ull)));
    return stamp;
}

VTPAGE_STRESS_HOST_DEVICE inline bool same_stamp(const PageStamp& a, const PageStamp& b) {
    return a.page == b.page && a.generation == b.generation && a.offset == b.offset &&
           a.check == b.check;
}

// One page to stamp or check: where its bytes are, and what it must carry.
struct StampJob {
    std::uint64_t address;
    std::uint64_t page;
    std::uint64_t generation;
    std::uint32_t write;  // 1: write the stamps; 0: check them
    std::uint32_t reserved;
};

// The first stamp found wrong in a batch, for the report.
struct StampMismatch {
    std::uint64_t page;        // the page checked
    std::uint64_t generation;  // the generation it should carry
    PageStamp found;           // what the bytes held
};

}  // namespace vtpage::stress
