// The CUDA stream-ordered pool: an explicit cudaMemPool_t through the static CUDA runtime, on
// the primary context of the pool's device (the one CudaBackend uses). The runtime finds the
// driver at run time, as CudaBackend does, so this adds no link to libcuda.
#include <cuda_runtime.h>

#include <cstring>
#include <mutex>
#include <unordered_map>

#include "backend/stream_pool_detail.hpp"

namespace vtpage::backend_detail {

namespace {

Errc errc_for(cudaError_t error) noexcept {
    switch (error) {
        case cudaErrorMemoryAllocation:
            return Errc::out_of_memory;
        case cudaErrorInvalidValue:
            return Errc::invalid_argument;
        case cudaErrorNotSupported:
            return Errc::not_supported;
        case cudaErrorInvalidResourceHandle:
            return Errc::invalid_handle;
        case cudaErrorNoDevice:
        case cudaErrorInsufficientDriver:
        case cudaErrorInvalidDevice:
        case cudaErrorDevicesUnavailable:
        case cudaErrorSystemDriverMismatch:
        case cudaErrorCompatNotSupportedOnDevice:
        case cudaErrorInitializationError:
            return Errc::device_unavailable;
        default:
            return Errc::backend_failure;
    }
}

void check(cudaError_t error, const char* operation, const std::string& arguments,
           const char* detail = nullptr) {
    if (error == cudaSuccess) return;
    cudaGetLastError();  // clears the error unless it is sticky
    std::string text = detail ? std::string(detail) + ": " : std::string();
    text += cudaGetErrorString(error);
    throw Error(errc_for(error), operation, std::move(text), arguments,
                static_cast<std::int64_t>(error), cudaGetErrorName(error));
}

cudaStream_t stream_of(StreamHandle stream) { return static_cast<cudaStream_t>(stream); }

class CudaStreamOrderedPool final : public StreamOrderedPool {
public:
    CudaStreamOrderedPool(StreamPoolSettings settings, int import_fd)
        : settings_(std::move(settings)), imported_(import_fd >= 0) {
        const std::string arguments = detail::concat(
            "device=", settings_.device, ", location=", to_string(settings_.location),
            ", ipc=", settings_.ipc, ", import_fd=", import_fd);
        int count = 0;
        check(cudaGetDeviceCount(&count), "make_stream_ordered_pool", arguments);
        if (settings_.device < 0 || settings_.device >= count) {
            throw Error(Errc::invalid_argument, "make_stream_ordered_pool",
                        detail::concat("there are ", count, " CUDA devices"), arguments);
        }
        make_current();
        auto attribute = [&](cudaDeviceAttr which) {
            int value = 0;
            check(cudaDeviceGetAttribute(&value, which, settings_.device),
                  "make_stream_ordered_pool", arguments, "cudaDeviceGetAttribute failed");
            return value;
        };
        if (!attribute(cudaDevAttrMemoryPoolsSupported)) {
            throw Error(Errc::not_supported, "make_stream_ordered_pool",
                        "the device does not support stream-ordered memory pools", arguments);
        }
        if (settings_.ipc) {
            if (settings_.location != StreamPoolLocation::device) {
                throw Error(Errc::not_supported, "make_stream_ordered_pool",
                            "pinned host pools cannot be shared with other processes", arguments);
            }
            if (!(attribute(cudaDevAttrMemoryPoolSupportedHandleTypes) &
                  cudaMemHandleTypePosixFileDescriptor)) {
                throw Error(Errc::not_supported, "make_stream_ordered_pool",
                            "the device's pools do not support the POSIX fd handle type",
                            arguments);
            }
        }
        if (imported_) {
            check(cudaMemPoolImportFromShareableHandle(
                      &pool_, reinterpret_cast<void*>(static_cast<std::intptr_t>(import_fd)),
                      cudaMemHandleTypePosixFileDescriptor, 0),
                  "import_stream_ordered_pool", arguments);
            // An imported pool need not be accessible from this process's device yet.
            cudaMemLocation location{};
            location.type = cudaMemLocationTypeDevice;
            location.id = settings_.device;
            cudaMemAccessFlags flags = cudaMemAccessFlagsProtNone;
            cudaError_t error = cudaMemPoolGetAccess(&flags, pool_, &location);
            if (error != cudaSuccess || flags != cudaMemAccessFlagsProtReadWrite) {
                cudaGetLastError();
                cudaMemAccessDesc access{};
                access.location = location;
                access.flags = cudaMemAccessFlagsProtReadWrite;
                error = cudaMemPoolSetAccess(pool_, &access, 1);
                if (error != cudaSuccess) {
                    cudaMemPoolDestroy(pool_);
                    check(error, "import_stream_ordered_pool", arguments,
                          "cudaMemPoolSetAccess failed");
                }
            }
            return;
        }
        if (settings_.location == StreamPoolLocation::host &&
            !attribute(cudaDevAttrHostMemoryPoolsSupported)) {
            throw Error(Errc::not_supported, "make_stream_ordered_pool",
                        "the device does not support pinned host memory pools", arguments);
        }
        cudaMemPoolProps props{};
        props.allocType = cudaMemAllocationTypePinned;
        props.handleTypes =
            settings_.ipc ? cudaMemHandleTypePosixFileDescriptor : cudaMemHandleTypeNone;
        if (settings_.location == StreamPoolLocation::device) {
            props.location.type = cudaMemLocationTypeDevice;
            props.location.id = settings_.device;
        } else {
            props.location.type = cudaMemLocationTypeHost;
            props.location.id = 0;
        }
        props.maxSize = settings_.max_size;
        check(cudaMemPoolCreate(&pool_, &props), "make_stream_ordered_pool", arguments);
        try {
            set_release_threshold(settings_.release_threshold);
            set_flag(cudaMemPoolReuseFollowEventDependencies,
                     settings_.reuse_follow_event_dependencies);
            set_flag(cudaMemPoolReuseAllowOpportunistic, settings_.reuse_allow_opportunistic);
            set_flag(cudaMemPoolReuseAllowInternalDependencies,
                     settings_.reuse_allow_internal_dependencies);
            if (settings_.location == StreamPoolLocation::host) {
                // Pinned host pools are CPU-only until a device is given access; staging needs
                // the device's copy engines to reach them.
                cudaMemAccessDesc access{};
                access.location.type = cudaMemLocationTypeDevice;
                access.location.id = settings_.device;
                access.flags = cudaMemAccessFlagsProtReadWrite;
                check(cudaMemPoolSetAccess(pool_, &access, 1), "make_stream_ordered_pool",
                      arguments, "cudaMemPoolSetAccess failed");
            }
        } catch (...) {
            cudaMemPoolDestroy(pool_);
            throw;
        }
    }

    ~CudaStreamOrderedPool() override {
        if (!pool_) return;
        std::lock_guard lock(mutex_);
        if (!live_.empty()) {
            settings_.log.warning("stream-ordered pool destroyed with ", live_.size(),
                                  " allocations still live; they are freed now");
            for (auto& [address, size] : live_) {
                cudaFreeAsync(reinterpret_cast<void*>(address), nullptr);
            }
            cudaStreamSynchronize(nullptr);
        }
        // An imported pool is destroyed too: its memory lives on in the exporting process.
        cudaError_t error = cudaMemPoolDestroy(pool_);
        if (error != cudaSuccess) {
            cudaGetLastError();
            settings_.log.warning("stream-ordered pool: cudaMemPoolDestroy failed: ",
                                  cudaGetErrorName(error));
        }
    }

    std::string_view backend_name() const noexcept override { return "cuda"; }

    DeviceAddress allocate(std::size_t size, StreamHandle stream) override {
        const std::string arguments = detail::concat("size=", size);
        if (size == 0) {
            throw Error(Errc::invalid_argument, "StreamOrderedPool::allocate",
                        "cannot allocate 0 bytes", arguments);
        }
        if (imported_) {
            throw Error(Errc::not_supported, "StreamOrderedPool::allocate",
                        "an imported pool only maps the exporter's allocations", arguments);
        }
        make_current();
        void* pointer = nullptr;
        check(cudaMallocFromPoolAsync(&pointer, size, pool_, stream_of(stream)),
              "StreamOrderedPool::allocate", arguments);
        std::lock_guard lock(mutex_);
        const auto address = reinterpret_cast<DeviceAddress>(pointer);
        live_[address] = size;
        ++allocations_;
        return address;
    }

    void free(DeviceAddress address, StreamHandle stream) override {
        const std::string arguments = detail::concat("address=", address);
        {
            std::lock_guard lock(mutex_);
            if (!live_.count(address)) {
                throw Error(Errc::invalid_argument, "StreamOrderedPool::free",
                            "the address was not handed out by this pool, or was freed already",
                            arguments);
            }
        }
        make_current();
        check(cudaFreeAsync(reinterpret_cast<void*>(address), stream_of(stream)),
              "StreamOrderedPool::free", arguments);
        std::lock_guard lock(mutex_);
        live_.erase(address);
        ++frees_;
    }

    void synchronize(StreamHandle stream) override {
        make_current();
        check(cudaStreamSynchronize(stream_of(stream)), "StreamOrderedPool::synchronize", {});
    }

    void trim_to(std::size_t bytes) override {
        make_current();
        check(cudaMemPoolTrimTo(pool_, bytes), "StreamOrderedPool::trim_to",
              detail::concat("bytes=", bytes));
    }

    void set_release_threshold(std::size_t bytes) override {
        std::uint64_t value = bytes;
        check(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &value),
              "StreamOrderedPool::set_release_threshold", detail::concat("bytes=", bytes));
        std::lock_guard lock(mutex_);
        settings_.release_threshold = bytes;
    }

    void reset_highs() override {
        std::uint64_t zero = 0;  // the only value allowed: resets the mark to the current value
        check(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReservedMemHigh, &zero),
              "StreamOrderedPool::reset_highs", {});
        check(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrUsedMemHigh, &zero),
              "StreamOrderedPool::reset_highs", {});
    }

    StreamPoolStatistics statistics() const override {
        StreamPoolStatistics s;
        s.location = settings_.location;
        s.device = settings_.device;
        auto bytes = [&](cudaMemPoolAttr which) {
            std::uint64_t value = 0;
            check(cudaMemPoolGetAttribute(pool_, which, &value), "StreamOrderedPool::statistics",
                  {});
            return static_cast<std::size_t>(value);
        };
        auto flag = [&](cudaMemPoolAttr which) {
            int value = 0;
            check(cudaMemPoolGetAttribute(pool_, which, &value), "StreamOrderedPool::statistics",
                  {});
            return value != 0;
        };
        s.release_threshold = bytes(cudaMemPoolAttrReleaseThreshold);
        s.reserved_bytes = bytes(cudaMemPoolAttrReservedMemCurrent);
        s.reserved_bytes_high = bytes(cudaMemPoolAttrReservedMemHigh);
        s.used_bytes = bytes(cudaMemPoolAttrUsedMemCurrent);
        s.used_bytes_high = bytes(cudaMemPoolAttrUsedMemHigh);
        s.reuse_follow_event_dependencies = flag(cudaMemPoolReuseFollowEventDependencies);
        s.reuse_allow_opportunistic = flag(cudaMemPoolReuseAllowOpportunistic);
        s.reuse_allow_internal_dependencies = flag(cudaMemPoolReuseAllowInternalDependencies);
        s.ipc = settings_.ipc;
        std::lock_guard lock(mutex_);
        s.allocations = allocations_;
        s.frees = frees_;
        s.live_allocations = live_.size();
        return s;
    }

    UniqueFd export_fd() override {
        require_ipc("export_fd");
        int fd = -1;
        check(
            cudaMemPoolExportToShareableHandle(&fd, pool_, cudaMemHandleTypePosixFileDescriptor, 0),
            "StreamOrderedPool::export_fd", {});
        return UniqueFd(fd);
    }

    StreamPoolShareData export_allocation(DeviceAddress address) override {
        require_ipc("export_allocation");
        {
            std::lock_guard lock(mutex_);
            if (!live_.count(address)) {
                throw Error(Errc::invalid_argument, "StreamOrderedPool::export_allocation",
                            "the address was not handed out by this pool",
                            detail::concat("address=", address));
            }
        }
        cudaMemPoolPtrExportData data{};
        check(cudaMemPoolExportPointer(&data, reinterpret_cast<void*>(address)),
              "StreamOrderedPool::export_allocation", detail::concat("address=", address));
        StreamPoolShareData result;
        static_assert(sizeof(data.reserved) == sizeof(result.bytes));
        std::memcpy(result.bytes.data(), data.reserved, sizeof(data.reserved));
        return result;
    }

    DeviceAddress import_allocation(const StreamPoolShareData& share) override {
        if (!imported_) {
            throw Error(Errc::not_supported, "StreamOrderedPool::import_allocation",
                        "only an imported pool (import_stream_ordered_pool) imports allocations");
        }
        make_current();
        cudaMemPoolPtrExportData data{};
        std::memcpy(data.reserved, share.bytes.data(), sizeof(data.reserved));
        void* pointer = nullptr;
        check(cudaMemPoolImportPointer(&pointer, pool_, &data),
              "StreamOrderedPool::import_allocation", {});
        std::lock_guard lock(mutex_);
        const auto address = reinterpret_cast<DeviceAddress>(pointer);
        live_[address] = 0;
        ++allocations_;
        return address;
    }

private:
    void make_current() const {
        int current = -1;
        if (cudaGetDevice(&current) != cudaSuccess || current != settings_.device) {
            check(cudaSetDevice(settings_.device), "StreamOrderedPool",
                  detail::concat("device=", settings_.device), "cudaSetDevice failed");
        }
    }
    void set_flag(cudaMemPoolAttr which, bool on) {
        int value = on ? 1 : 0;
        check(cudaMemPoolSetAttribute(pool_, which, &value), "make_stream_ordered_pool",
              detail::concat("attribute=", static_cast<int>(which), ", value=", value));
    }
    void require_ipc(const char* operation) const {
        if (!settings_.ipc) {
            throw Error(Errc::not_supported, operation,
                        "the pool was made without StreamPoolSettings::ipc");
        }
    }

    StreamPoolSettings settings_;
    bool imported_ = false;
    cudaMemPool_t pool_ = nullptr;
    mutable std::mutex mutex_;
    std::unordered_map<DeviceAddress, std::size_t> live_;
    std::uint64_t allocations_ = 0, frees_ = 0;
};

}  // namespace

std::unique_ptr<StreamOrderedPool> make_cuda_stream_ordered_pool(StreamPoolSettings settings,
                                                                 int import_fd) {
    return std::make_unique<CudaStreamOrderedPool>(std::move(settings), import_fd);
}

}  // namespace vtpage::backend_detail
