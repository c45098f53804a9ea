#include "vtpage/backend/stream_ordered_pool.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <unordered_map>

#include "backend/stream_pool_detail.hpp"
#include "vtpage/config.hpp"

namespace vtpage {

std::string_view to_string(StreamPoolLocation location) noexcept {
    switch (location) {
        case StreamPoolLocation::device:
            return "device";
        case StreamPoolLocation::host:
            return "host";
    }
    return "unknown";
}

namespace {

// The host backend's pool: blocks from the C heap, kept in a free list after free() and handed
// out again to allocations of up to their size (a block serves requests down to half its size,
// so that one large block is not spent on many small ones). The host has no streams: memory is
// usable as soon as allocate returns, and free() makes it reusable at once.
class HostStreamOrderedPool final : public StreamOrderedPool {
public:
    explicit HostStreamOrderedPool(StreamPoolSettings settings) : settings_(std::move(settings)) {
        const std::string arguments = detail::concat("device=", settings_.device,
                                                     ", location=", to_string(settings_.location));
        if (settings_.device != -1 && settings_.device != 0) {
            throw Error(Errc::invalid_argument, "make_stream_ordered_pool",
                        "the host backend has one device, 0", arguments);
        }
        if (settings_.ipc) {
            throw Error(Errc::not_supported, "make_stream_ordered_pool",
                        "the host pool cannot be shared with other processes (share pages "
                        "through the page-sharing protocol instead)",
                        arguments);
        }
    }

    ~HostStreamOrderedPool() override {
        std::lock_guard lock(mutex_);
        if (!live_.empty()) {
            settings_.log.warning("stream-ordered pool destroyed with ", live_.size(),
                                  " allocations still live; they are freed now");
        }
        for (auto& [address, size] : live_) std::free(reinterpret_cast<void*>(address));
        for (auto& [size, address] : idle_) std::free(reinterpret_cast<void*>(address));
    }

    std::string_view backend_name() const noexcept override { return "host"; }

    DeviceAddress allocate(std::size_t size, StreamHandle) override {
        const std::string arguments = detail::concat("size=", size);
        if (size == 0) {
            throw Error(Errc::invalid_argument, "StreamOrderedPool::allocate",
                        "cannot allocate 0 bytes", arguments);
        }
        if (size > SIZE_MAX - alignment) {
            throw Error(Errc::out_of_memory, "StreamOrderedPool::allocate", "the size overflows",
                        arguments);
        }
        const std::size_t rounded = (size + alignment - 1) / alignment * alignment;
        std::lock_guard lock(mutex_);
        auto reusable = idle_.lower_bound(rounded);
        if (reusable != idle_.end() && reusable->first / 2 <= rounded) {
            const auto [block, address] = *reusable;
            idle_.erase(reusable);
            return hand_out_nolock(address, block);
        }
        if (settings_.max_size != 0 && reserved_ + rounded > settings_.max_size) {
            // Idle blocks too small to serve the request make room first, as CUDA does.
            release_idle_until_nolock(settings_.max_size - std::min(settings_.max_size, rounded));
            if (reserved_ + rounded > settings_.max_size) {
                throw Error(Errc::out_of_memory, "StreamOrderedPool::allocate",
                            detail::concat("the pool's max_size of ", settings_.max_size,
                                           " bytes is reached (", reserved_, " reserved)"),
                            arguments);
            }
        }
        void* memory = std::aligned_alloc(alignment, rounded);
        if (!memory) {
            throw Error(Errc::out_of_memory, "StreamOrderedPool::allocate",
                        "the C heap has no memory left", arguments);
        }
        reserved_ += rounded;
        reserved_high_ = std::max(reserved_high_, reserved_);
        return hand_out_nolock(reinterpret_cast<DeviceAddress>(memory), rounded);
    }

    void free(DeviceAddress address, StreamHandle) override {
        std::lock_guard lock(mutex_);
        auto found = live_.find(address);
        if (found == live_.end()) {
            throw Error(Errc::invalid_argument, "StreamOrderedPool::free",
                        "the address was not handed out by this pool, or was freed already",
                        detail::concat("address=", address));
        }
        used_ -= found->second;
        idle_.emplace(found->second, address);
        live_.erase(found);
        ++frees_;
    }

    void synchronize(StreamHandle) override {
        std::lock_guard lock(mutex_);
        release_idle_until_nolock(settings_.release_threshold);
    }

    void trim_to(std::size_t bytes) override {
        std::lock_guard lock(mutex_);
        release_idle_until_nolock(bytes);
    }

    void set_release_threshold(std::size_t bytes) override {
        std::lock_guard lock(mutex_);
        settings_.release_threshold = bytes;
    }

    void reset_highs() override {
        std::lock_guard lock(mutex_);
        reserved_high_ = reserved_;
        used_high_ = used_;
    }

    StreamPoolStatistics statistics() const override {
        std::lock_guard lock(mutex_);
        StreamPoolStatistics s;
        s.location = settings_.location;
        s.device = 0;
        s.release_threshold = settings_.release_threshold;
        s.reserved_bytes = reserved_;
        s.reserved_bytes_high = reserved_high_;
        s.used_bytes = used_;
        s.used_bytes_high = used_high_;
        s.allocations = allocations_;
        s.frees = frees_;
        s.live_allocations = live_.size();
        s.reuse_follow_event_dependencies = settings_.reuse_follow_event_dependencies;
        s.reuse_allow_opportunistic = settings_.reuse_allow_opportunistic;
        s.reuse_allow_internal_dependencies = settings_.reuse_allow_internal_dependencies;
        s.ipc = false;
        return s;
    }

    UniqueFd export_fd() override { throw no_ipc("export_fd"); }
    StreamPoolShareData export_allocation(DeviceAddress) override {
        throw no_ipc("export_allocation");
    }
    DeviceAddress import_allocation(const StreamPoolShareData&) override {
        throw no_ipc("import_allocation");
    }

private:
    static constexpr std::size_t alignment = 256;  // as cudaMallocAsync's

    static Error no_ipc(const char* operation) {
        return Error(Errc::not_supported, operation, "the host pool has no IPC");
    }
    DeviceAddress hand_out_nolock(DeviceAddress address, std::size_t block) {
        live_[address] = block;
        used_ += block;
        used_high_ = std::max(used_high_, used_);
        ++allocations_;
        return address;
    }
    // Largest idle blocks first: fewest calls to reach the target. Caller holds the lock.
    void release_idle_until_nolock(std::size_t bytes) {
        while (reserved_ > bytes && !idle_.empty()) {
            auto largest = std::prev(idle_.end());
            std::free(reinterpret_cast<void*>(largest->second));
            reserved_ -= largest->first;
            idle_.erase(largest);
        }
    }

    StreamPoolSettings settings_;
    mutable std::mutex mutex_;
    std::unordered_map<DeviceAddress, std::size_t> live_;  // address -> block size
    std::multimap<std::size_t, DeviceAddress> idle_;       // block size -> address
    std::size_t reserved_ = 0, reserved_high_ = 0, used_ = 0, used_high_ = 0;
    std::uint64_t allocations_ = 0, frees_ = 0;
};

}  // namespace

std::unique_ptr<StreamOrderedPool> make_stream_ordered_pool(Backend& backend,
                                                            StreamPoolSettings settings) {
    if (backend.name() == "host") {
        return std::make_unique<HostStreamOrderedPool>(std::move(settings));
    }
    if (backend.name() == "cuda") {
#if VTPAGE_HAS_CUDA
        if (settings.device < 0) settings.device = backend.capabilities().device;
        return backend_detail::make_cuda_stream_ordered_pool(std::move(settings), -1);
#endif
    }
    throw Error(Errc::not_supported, "make_stream_ordered_pool",
                detail::concat("no stream-ordered pool for the ", backend.name(), " backend"));
}

std::unique_ptr<StreamOrderedPool> import_stream_ordered_pool(
    Backend& backend, int fd, [[maybe_unused]] StreamPoolSettings settings) {
#if VTPAGE_HAS_CUDA
    if (backend.name() == "cuda") {
        if (settings.device < 0) settings.device = backend.capabilities().device;
        settings.ipc = true;
        return backend_detail::make_cuda_stream_ordered_pool(std::move(settings), fd);
    }
#endif
    throw Error(Errc::not_supported, "import_stream_ordered_pool",
                detail::concat("the ", backend.name(), " backend has no pool IPC"),
                detail::concat("fd=", fd));
}

}  // namespace vtpage
