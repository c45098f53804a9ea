// The pinned staging buffers between decoding and the copies to the device: a bounded ring. A
// worker takes a free buffer (when none is free, it waits for the oldest copy in flight to
// finish and takes its buffer), decodes a page into it and starts its copy; the buffer is free
// again once that copy is done. Thread-safe.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>

#include "device_copy.hpp"

namespace vtpage::bench::disk {

class StagingRing {
public:
    // `pages` buffers of page_bytes; the copier's fence i belongs to buffer i.
    StagingRing(DeviceCopier& copier, std::size_t pages, std::size_t page_bytes);

    struct Slot {
        std::size_t index = 0;
        std::byte* memory = nullptr;
    };
    Slot acquire();
    // The slot's page is being copied under fence slot.index.
    void copying(const Slot& slot);

private:
    DeviceCopier& copier_;
    std::size_t page_bytes_;
    HostBuffer memory_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<std::size_t> free_;
    std::deque<std::size_t> copying_;  // oldest first
};

}  // namespace vtpage::bench::disk
