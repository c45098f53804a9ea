// Writes and checks page stamps (page_stamp.hpp) where the pages are: the CPU for the host
// backend, a kernel for the CUDA backend. One verifier per worker thread. C++17, shared with
// the CUDA code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "page_stamp.hpp"

namespace vtpage::stress {

struct StampLayout {
    std::size_t page_size = 0;
    std::size_t stride = 0;  // a stamp every `stride` bytes, from offset 0
    std::size_t stamps_per_page() const noexcept { return page_size / stride; }
};

class PageVerifier {
public:
    virtual ~PageVerifier() = default;
    // Writes (job.write) or checks the stamps of each job's page. Returns how many checked
    // pages carried a wrong stamp; `first` gets the first wrong one found. Throws
    // vtpage::Error when the device fails.
    virtual std::size_t run(const StampJob* jobs, std::size_t count, StampMismatch& first) = 0;
    // Overwrites the page's first stamp with garbage (the tool's self-test of its checks).
    virtual void corrupt(std::uint64_t address) = 0;
};

std::unique_ptr<PageVerifier> make_host_verifier(const StampLayout& layout);
// On `device` (a CUDA ordinal), with its own stream; at most max_jobs jobs per run. Warms the
// runtime up (a first launch) so that leak baselines taken afterwards are stable.
std::unique_ptr<PageVerifier> make_gpu_verifier(const StampLayout& layout, int device,
                                                std::size_t max_jobs);

}  // namespace vtpage::stress
