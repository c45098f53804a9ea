// The CUDA backend: the driver's virtual memory management API (cuMemAddressReserve,
// cuMemCreate, cuMemMap, cuMemSetAccess, cuMemExportToShareableHandle...) on one device's
// primary context. The driver is loaded at run time, so constructing a CudaBackend on a machine
// without a GPU throws device_unavailable instead of failing to start.
//
// Construction probes what the queries only promise: that a page with the POSIX fd handle type
// can be created and exported, that compression is granted, that read-only access is accepted.
// Where a probe fails, the capability is reported false and the backend falls back (pages are
// then created without the fd handle type and export_fd throws not_supported).
//
// Several GPUs: a page is placed on the device PageOptions::device names, and set_access gives
// each device its own descriptor in one cuMemSetAccess call (peer mappings per range, not
// cudaEnablePeerAccess for everything). set_access checks that each accessing device supports
// virtual memory management and can reach the page's device (cuDeviceCanAccessPeer), and says
// which pair cannot, instead of the driver's bare CUDA_ERROR_INVALID_DEVICE. The primary context
// of each device that holds pages or is given access is retained while the backend lives.
#pragma once

#include <memory>

#include "vtpage/backend/backend.hpp"
#include "vtpage/base/log.hpp"

namespace vtpage {

struct CudaBackendSettings {
    int device = 0;     // CUDA device ordinal
    bool probe = true;  // run the capability probes at construction (a few pages, ~1 ms)
    Log log;
};

class CudaBackend final : public Backend {
public:
    explicit CudaBackend(CudaBackendSettings settings = {});
    ~CudaBackend() override;

    const Capabilities& capabilities() const noexcept override;
    Granularity granularity(const PageOptions& options = {}) const override;
    MemoryInfo memory_info() const override;
    LiveResources live_resources() const override;
    DeviceAddress reserve(std::size_t size, std::size_t alignment = 0,
                          DeviceAddress hint = 0) override;
    void free_reservation(DeviceAddress address, std::size_t size) override;
    PhysicalHandle create(std::size_t size, const PageOptions& options = {}) override;
    void release(PhysicalHandle handle) override;
    bool is_compressed(PhysicalHandle handle) const override;
    void map(DeviceAddress address, std::size_t size, PhysicalHandle handle,
             std::size_t offset = 0) override;
    void unmap(DeviceAddress address, std::size_t size) override;
    using Backend::set_access;
    void set_access(DeviceAddress address, std::size_t size,
                    std::span<const DeviceAccess> access) override;
    UniqueFd export_fd(PhysicalHandle handle) override;
    PhysicalHandle import_fd(int fd, std::size_t size) override;
    void write(DeviceAddress destination, const void* source, std::size_t size) override;
    void read(void* destination, DeviceAddress source, std::size_t size) override;
    void synchronize() override;

    // Makes this backend's primary context current on the calling thread (for code that mixes
    // in CUDA runtime or driver calls of its own).
    void make_current() const;
    // Makes the primary context of another device current (retaining it if needed), e.g. to run
    // kernels there on pages this backend placed or mapped for it.
    void make_current(int device) const;

    // Free and total memory of any device (memory_info() is this backend's device).
    MemoryInfo memory_info(int device) const;
    // Whether kernels on `accessor` can reach memory placed on `owner` (true when equal).
    bool can_access_peer(int accessor, int owner) const;
    // Whether the device supports virtual memory management (a device without it cannot be
    // given access to pages).
    bool supports_virtual_memory(int device) const;
    // The device a page (created or imported) lives on.
    int device_of(PhysicalHandle handle) const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace vtpage
