// A device buffer that grows and shrinks without ever copying its contents: the classic use of
// the VMM API. The buffer reserves a virtual address range once and maps physical memory at its
// end as it grows (unmaps it as it shrinks), so growing to N bytes costs one physical
// allocation, one map and one set-access per growth step, whatever the buffer already holds.
//
//   GrowableBuffer buffer(backend);          // reserves address space, maps nothing yet
//   buffer.resize(256_MiB);                  // one allocation + map + set access
//   kernel<<<...>>>(buffer.data(), ...);
//   buffer.resize(512_MiB);                  // the first 256 MiB stay where they are, untouched
//
// Where data() points:
//   - data() stays the same while growth fits the reservation (reserved_bytes()). By default the
//     reservation is as large as the device's memory, so growth that physical memory can hold
//     never moves the buffer.
//   - Past the reservation the buffer first reserves the address range right after it (an
//     address hint); data() is then unchanged. Only when the driver places that range elsewhere
//     does the buffer move: it reserves a larger range and maps the same physical memory there
//     (still no copy), and data() changes. That is the only time data() changes; with
//     allow_relocation = false the growth throws out_of_range instead.
//
// What concurrent readers see (threads or kernels reading the buffer's memory while another
// thread grows it):
//   - Growth that does not move the buffer never unmaps, remaps or changes the access of the
//     bytes already mapped: readers of [data(), data() + capacity()) are unaffected, before,
//     during and after the call.
//   - A move maps the memory at the new address completely (same physical pages, so both
//     addresses show the same bytes), calls on_relocate(old, new), and only then unmaps the old
//     address. Readers that still use the old address after on_relocate returns fault (SIGSEGV
//     on the host, an illegal address on a GPU): move them over, and wait for kernels in
//     flight, in on_relocate.
//   - Shrinking unmaps the end: readers of bytes past the new capacity fault.
// The buffer object itself is not synchronised, like std::vector: calls that change it must not
// overlap with any other call on the same object; const calls may run together.
//
// Physical memory comes from the backend, one allocation per growth step (a step that crosses
// the end of a reservation makes one allocation on each side, so that every allocation is one
// mapping inside one reservation), or from a PagePool, one page per mapping. shrink_to_fit()
// releases whole allocations past size(): with allocations from the backend, the allocation
// that holds the last byte stays whole, so capacity() after shrink_to_fit() is the end of that
// allocation. Grow in the steps you will want to shrink in, or use a pool for page-exact
// shrinking.
//
// Errors: sizes above max_size() throw invalid_argument; running out of physical memory throws
// out_of_memory (the backend's error, with its code); any failure leaves the buffer exactly as
// it was (data(), size, capacity and contents), having released what the call took.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "vtpage/backend/backend.hpp"
#include "vtpage/base/log.hpp"

namespace vtpage {

class PagePool;

struct GrowableBufferSettings {
    // Address space reserved at construction, from data(): the buffer grows inside it without
    // moving. 0: the device's total memory (MemoryInfo::total). Address space costs no memory.
    std::size_t address_space = 0;
    // Where to ask for that range (a hint the backend may not follow); 0: anywhere.
    DeviceAddress address_hint = 0;
    // Bytes mapped at construction (rounded up to whole pages).
    std::size_t initial_capacity = 0;
    // When the reservation runs out and the next range is taken: move the buffer (true), or
    // throw out_of_range (false) so that data() never changes.
    bool allow_relocation = true;
    // A new or extended reservation is at least this multiple of the old one (>= 1), so that a
    // buffer grown in small steps past its reservation is extended or moved O(log n) times.
    double address_growth = 2.0;
    // Options of the buffer's physical allocations. Not exportable by default: a growable
    // buffer is not shared, and the fd handle type is not free on every driver.
    PageOptions page_options{.exportable = false};
    // Take physical pages from this pool instead (one page per mapping: page-exact shrinking,
    // recycled pages); they go back to it on shrink and destruction. The pool must work on the
    // same backend and outlive the buffer.
    PagePool* pool = nullptr;
    // Access for mapped memory; empty: read-write for the backend's own device.
    std::vector<DeviceAccess> access;
    // Called when the buffer moves, after its memory is mapped and accessible at `to` and
    // before it is unmapped at `from`. If it throws, the move is undone and the call that grew
    // the buffer throws that exception, leaving the buffer as it was.
    std::function<void(DeviceAddress from, DeviceAddress to)> on_relocate;
    Log log;
};

struct GrowableBufferStatistics {
    std::size_t allocations = 0;   // physical allocations held now (pool pages count one each)
    std::size_t reservations = 0;  // address ranges held now: 1, more after in-place extensions
    std::uint64_t grows = 0;       // calls that mapped more memory
    std::uint64_t shrinks = 0;     // calls that unmapped memory
    std::uint64_t in_place_extensions = 0;  // reservations extended with the adjacent range
    std::uint64_t relocations = 0;          // moves to a new range (data() changed)
    // Backend calls (pool pages count as acquired, not created).
    std::uint64_t creates = 0;
    std::uint64_t releases = 0;
    std::uint64_t maps = 0;
    std::uint64_t unmaps = 0;
    std::uint64_t set_access_calls = 0;
    std::uint64_t reserves = 0;
};

class GrowableBuffer {
public:
    // The largest size a buffer may ask for: 64 TiB (half the 47-bit address space that both
    // CUDA and Linux give a process).
    static constexpr std::size_t max_bytes = std::size_t(64) << 40;

    // Reserves the address space and maps settings.initial_capacity. invalid_argument for bad
    // settings (address space or initial capacity above max_bytes, address_growth below 1, a
    // pool on another backend).
    explicit GrowableBuffer(Backend& backend, GrowableBufferSettings settings = {});
    // Unmaps everything, gives the physical memory back and frees the address space.
    ~GrowableBuffer();
    GrowableBuffer(GrowableBuffer&& other) noexcept;
    GrowableBuffer& operator=(GrowableBuffer&& other) noexcept;
    GrowableBuffer(const GrowableBuffer&) = delete;
    GrowableBuffer& operator=(const GrowableBuffer&) = delete;

    Backend& backend() const noexcept { return *backend_; }
    // The start of the buffer (a device pointer; a host pointer on the host backend). Valid for
    // capacity() bytes; changes only when the buffer moves (see above).
    DeviceAddress data() const noexcept;
    std::size_t size() const noexcept;
    bool empty() const noexcept { return size() == 0; }
    // Bytes mapped from data(): always whole pages.
    std::size_t capacity() const noexcept;
    // Bytes of address space from data() the buffer can grow into without moving.
    std::size_t reserved_bytes() const noexcept;
    std::size_t page_size() const noexcept;
    static constexpr std::size_t max_size() noexcept { return max_bytes; }

    // Makes capacity() at least `bytes` (rounded up to whole pages); never shrinks.
    void reserve(std::size_t bytes);
    // Sets size(), growing capacity as reserve() does; shrinking keeps the capacity. New bytes
    // are not initialised.
    void resize(std::size_t bytes);
    // Unmaps and gives back the allocations that lie wholly past size().
    void shrink_to_fit();
    void clear() noexcept;

    // Synchronous copies between host memory and [offset, offset + bytes) of the buffer, which
    // must lie inside size() (out_of_range otherwise).
    void write(std::size_t offset, const void* source, std::size_t bytes);
    void read(void* destination, std::size_t offset, std::size_t bytes) const;

    GrowableBufferStatistics statistics() const noexcept;

private:
    struct State;
    Backend* backend_;
    std::unique_ptr<State> state_;
};

}  // namespace vtpage
