// What a tile source needs to fill pages on a GPU: a CUDA stream on the device the CUDA backend
// uses (its primary context) and pinned staging memory for host-to-device copies. The streamer
// keeps one per worker thread; tests and tools can make their own.
//
//   DeviceFillContext context(backend.capabilities().device);
//   context.begin_batch();
//   source.fill_device(fills, context);   // enqueued on context.stream()
//   context.end_batch();
//   context.synchronize();                // or wait for an event / semaphore on the stream
//
// Staging memory handed out in a batch stays valid until that batch's work on the stream has
// finished: there are two staging arenas, and begin_batch waits for the older one before it
// reuses it. A context is used by one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "vtpage/backend/backend.hpp"
#include "vtpage/streaming/sources/tile_source.hpp"

namespace vtpage::vt {

class DeviceFillContext {
public:
    // device_unavailable in a build without CUDA or without a usable device.
    explicit DeviceFillContext(int device);
    // Waits for the stream, then frees it and the staging memory.
    ~DeviceFillContext();
    DeviceFillContext(const DeviceFillContext&) = delete;
    DeviceFillContext& operator=(const DeviceFillContext&) = delete;

    int device() const noexcept;
    CudaStream stream() const noexcept;
    // Makes the device current on the calling thread (cudaSetDevice: its primary context).
    void make_current() const;

    // Pins both staging arenas now, each of at least `bytes`, so that the first batches do not
    // wait for pinned memory (cudaHostAlloc takes milliseconds and the driver serialises it).
    // Before the first batch; out_of_memory when the memory cannot be pinned.
    void reserve_staging(std::size_t bytes);
    // Starts a batch: waits until the staging arena it will use is no longer read by the GPU.
    void begin_batch();
    // Pinned host memory of `bytes` for this batch's copies (16-byte aligned).
    std::byte* staging(std::size_t bytes);
    // Enqueues a copy of `bytes` of pinned staging memory (from staging()) to a device address.
    // backend_failure with the CUDA error when it cannot be enqueued.
    void copy_to_device(DeviceAddress destination, const std::byte* staging, std::size_t bytes);
    // Device memory of at least `bytes` on the context's device, 256-byte aligned, for fills
    // that are copied on from there (a page of which only some tiles are wanted). It stays the
    // same memory until a larger one is asked for; the caller waits for the work that reads it
    // before it is written again or grown. out_of_memory when it cannot be allocated.
    DeviceAddress scratch(std::size_t bytes);
    // Enqueues a copy of `bytes` between two device addresses of the context's device.
    void copy_on_device(DeviceAddress destination, DeviceAddress source, std::size_t bytes);
    // Ends the batch: records when its work on the stream is done. Returns the batch's ticket
    // (1, 2, ...) for finished() and wait().
    std::uint64_t end_batch();
    // Whether the work of batch `ticket` (and every batch before it) has finished. Never
    // blocks. backend_failure with the CUDA error if that work failed.
    bool finished(std::uint64_t ticket);
    // Waits until batch `ticket` has finished; backend_failure as above.
    void wait(std::uint64_t ticket);
    // Waits for everything enqueued on the stream; backend_failure with the CUDA error if any
    // of that work failed.
    void synchronize();
    // Whether everything enqueued so far has finished (never blocks).
    bool idle() const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

// Whether this build can fill pages on a GPU (it still needs a device at run time).
bool device_fills_built() noexcept;

}  // namespace vtpage::vt
