// Stream-ordered pools for staging and scratch buffers: short-lived allocations that come and go
// with the work on a stream (an upload's pinned staging buffer, a kernel's scratch space), as
// opposed to the 2 MiB pages of the page pool.
//
// On CUDA this is an explicit cudaMemPool_t (cudaMemPoolCreate) used through
// cudaMallocFromPoolAsync / cudaFreeAsync on the device's primary context, with the pool's
// release threshold and reuse policies set from the settings, its statistics read with
// cudaMemPoolGetAttribute, and an IPC option (the POSIX fd handle type). On the host backend a
// caching allocator follows the same contract and reports the same statistics, so code above
// the backend layer reads one vocabulary, the one PagePoolStatistics uses:
//   reserved bytes: memory the pool holds (in use + idle), current and high-water mark;
//   used bytes: memory handed out, current and high-water mark;
//   release threshold: idle memory above it goes back to the driver at the next trim point.
//
//   auto pool = make_stream_ordered_pool(backend, {.release_threshold = 64_MiB});
//   DeviceAddress scratch = pool->allocate(size, stream);   // valid in stream order
//   ... work on `stream` uses scratch ...
//   pool->free(scratch, stream);                            // reusable by later work
//
// Trim points: synchronize() (and, on CUDA, every stream, event or device synchronisation) and
// trim_to(). All members are thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "vtpage/backend/backend.hpp"
#include "vtpage/base/log.hpp"
#include "vtpage/base/unique_fd.hpp"

namespace vtpage {

// A cudaStream_t on CUDA (nullptr: the legacy default stream); ignored by the host pool, whose
// allocations are usable at once.
using StreamHandle = void*;

enum class StreamPoolLocation : std::uint8_t {
    device,  // device memory: scratch buffers for kernels
    host,    // pinned host memory: staging buffers for uploads and read-backs (CPU-accessible)
};
std::string_view to_string(StreamPoolLocation location) noexcept;

struct StreamPoolSettings {
    StreamPoolLocation location = StreamPoolLocation::device;
    int device = -1;  // the device the pool serves; -1: the backend's device
    // As cudaMemPoolAttrReleaseThreshold: bytes the pool keeps at a trim point. SIZE_MAX (the
    // default) keeps everything; 0 returns all idle memory.
    std::size_t release_threshold = SIZE_MAX;
    // Reuse policies (cudaMemPoolReuse*): reuse memory freed on another stream when an event
    // dependency orders the two, opportunistically when the free is already complete, and by
    // inserting dependencies of the pool's own. CUDA enables all three by default.
    bool reuse_follow_event_dependencies = true;
    bool reuse_allow_opportunistic = true;
    bool reuse_allow_internal_dependencies = true;
    // Create the pool with the POSIX fd handle type so that it and its allocations can be
    // shared with another process (export_fd, export_allocation). Device pools on CUDA only.
    bool ipc = false;
    // The most bytes the pool may reserve (cudaMemPoolProps::maxSize); 0: no limit of its own.
    std::size_t max_size = 0;
    Log log;
};

struct StreamPoolStatistics {
    StreamPoolLocation location = StreamPoolLocation::device;
    int device = 0;
    std::size_t release_threshold = 0;
    // As cudaMemPoolAttrReservedMemCurrent / High and UsedMemCurrent / High.
    std::size_t reserved_bytes = 0;
    std::size_t reserved_bytes_high = 0;
    std::size_t used_bytes = 0;
    std::size_t used_bytes_high = 0;
    std::uint64_t allocations = 0;
    std::uint64_t frees = 0;
    std::size_t live_allocations = 0;
    // The reuse policies and the IPC handle type as the pool reports them (read back).
    bool reuse_follow_event_dependencies = false;
    bool reuse_allow_opportunistic = false;
    bool reuse_allow_internal_dependencies = false;
    bool ipc = false;
};

// What another process needs to import one allocation of an IPC pool
// (cudaMemPoolPtrExportData): plain bytes, sent over any channel.
struct StreamPoolShareData {
    std::array<std::uint8_t, 64> bytes{};
};

class StreamOrderedPool {
public:
    virtual ~StreamOrderedPool() = default;
    StreamOrderedPool(const StreamOrderedPool&) = delete;
    StreamOrderedPool& operator=(const StreamOrderedPool&) = delete;

    virtual std::string_view backend_name() const noexcept = 0;

    // size bytes (rounded up by the pool), usable by work on `stream` queued after this call;
    // out_of_memory when the pool or the device is full, invalid_argument for size 0.
    virtual DeviceAddress allocate(std::size_t size, StreamHandle stream = nullptr) = 0;
    // Gives an allocation back once the work queued on `stream` so far is done.
    // invalid_argument for an address this pool did not hand out.
    virtual void free(DeviceAddress address, StreamHandle stream = nullptr) = 0;
    // Waits for the stream's work (a trim point).
    virtual void synchronize(StreamHandle stream = nullptr) = 0;
    // Releases idle memory until at most `bytes` are reserved (cudaMemPoolTrimTo).
    virtual void trim_to(std::size_t bytes) = 0;
    virtual void set_release_threshold(std::size_t bytes) = 0;
    // Resets the high-water marks to the current values.
    virtual void reset_highs() = 0;
    virtual StreamPoolStatistics statistics() const = 0;

    // IPC (settings.ipc): the pool as a descriptor the caller owns, and one allocation as a
    // token; the importing process calls import_stream_ordered_pool, then import_allocation.
    // not_supported on pools without IPC.
    virtual UniqueFd export_fd() = 0;
    virtual StreamPoolShareData export_allocation(DeviceAddress address) = 0;
    // On an imported pool: maps an allocation of the exporting process into this one. Give it
    // back with free() before the exporter frees it.
    virtual DeviceAddress import_allocation(const StreamPoolShareData& data) = 0;

protected:
    StreamOrderedPool() = default;
};

// A pool for the backend's kind of memory: a cudaMemPool_t for "cuda", host memory for "host".
// not_supported for an option the backend or the device cannot give (IPC on the host, a host
// pool on a device without host memory pools); device_unavailable without a CUDA runtime.
std::unique_ptr<StreamOrderedPool> make_stream_ordered_pool(Backend& backend,
                                                            StreamPoolSettings settings = {});

// Opens a pool another process exported (export_fd); fd stays the caller's. Only
// import_allocation, free and statistics work on it.
std::unique_ptr<StreamOrderedPool> import_stream_ordered_pool(Backend& backend, int fd,
                                                              StreamPoolSettings settings = {});

}  // namespace vtpage
