// A leak check around some work: construct a LeakCheck (the baseline), do the work, tear it
// down, then check(). It compares what the process holds from the kernel (descriptors and
// mappings, see process_resources.hpp), what the backend's own books hold (live_resources()),
// and, on a GPU, the device's free memory.
//
//   LeakCheck leaks(backend);
//   { PageTable table(backend, settings); ... }
//   LeakReport report = leaks.check();
//   if (!report.clean()) std::puts(report.describe().c_str());
//
// Take the baseline once the process is warm: the CUDA runtime and driver open descriptors,
// map memory and take device memory the first time a kernel runs or a stream is made.
//
// Not every new mapping is a leak: the C library's per-thread arenas (up to 64 MiB each, mostly
// inaccessible) and cached thread stacks stay after the threads end, and heaps grow. So the
// mappings that count are the ones vtpage makes: the host backend's pages (memfd
// "vtpage-page"), inaccessible anonymous ranges of at least reservation_floor bytes (address
// space reservations), and anything inside a range given to watch() (a page table's region).
// The rest is reported as unattributed growth, for information.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "vtpage/backend/backend.hpp"
#include "vtpage/base/process_resources.hpp"

namespace vtpage {

struct LeakCheckSettings {
    bool descriptors = true;  // /proc/self/fd
    bool mappings = true;     // /proc/self/maps
    // On a GPU the driver keeps the process's view of device address space (it may keep host
    // ranges reserved after cuMemAddressFree), so mappings are compared there only if asked;
    // device memory is the GPU's measure.
    bool mappings_on_gpu = false;
    // Inaccessible anonymous mappings at least this large count as leaked reservations.
    std::size_t reservation_floor = std::size_t(256) << 20;
    // The device's free memory, on GPU backends (a host's free memory moves with the machine).
    bool device_memory = true;
    std::size_t device_memory_tolerance = 0;
    // The driver may return memory a moment after the last release: how long check() waits
    // for free memory to come back to the baseline.
    std::chrono::milliseconds device_settle_time{1000};
};

struct LeakReport {
    // New descriptors and the new mappings that count (see above); empty where not checked.
    ProcessResourceGrowth process;
    std::size_t unattributed_mapped_bytes = 0;  // other growth: heaps, arenas, stacks
    LiveResources live_before;
    LiveResources live_after;
    bool device_checked = false;
    MemoryInfo device_before;
    MemoryInfo device_after;
    std::size_t device_bytes_lost = 0;  // how much less is free than at the baseline

    std::size_t leaked_descriptors() const noexcept { return process.descriptors.size(); }
    // Physical memory (the larger of the backend's books and the device's free memory) plus
    // address space (the larger of the backend's reservations and mappings, and the process's
    // new mappings).
    std::size_t leaked_bytes() const noexcept;
    // Nothing new: no descriptor, no byte, and the backend's counts back to the baseline.
    bool clean() const noexcept;
    std::string describe() const;
};

class LeakCheck {
public:
    // Takes the baseline now.
    explicit LeakCheck(Backend& backend, LeakCheckSettings settings = {});
    void rebaseline();
    // Any new mapping that overlaps [address, address + size) counts, whatever it is: give the
    // ranges the work reserves (PageTable::region().base() and size()).
    void watch(DeviceAddress address, std::size_t size);
    LeakReport check() const;
    // Whether a new mapping counts as a leak (the rules above).
    bool counts(const MappedRange& mapping) const;

private:
    Backend& backend_;
    LeakCheckSettings settings_;
    ProcessResources process_before_;
    LiveResources live_before_;
    MemoryInfo device_before_;
    bool device_ = false;
    bool mappings_ = false;
    std::vector<std::pair<DeviceAddress, std::size_t>> watched_;
};

}  // namespace vtpage
