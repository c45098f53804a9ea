// The host backend: CUDA's virtual memory contract on Linux virtual memory. mmap(PROT_NONE)
// reserves, a memfd is a physical page, mmap(MAP_FIXED | MAP_SHARED) maps it, mprotect sets
// access and the memfd is the exported handle. A real backend for CPU renderers, CI and tests.
#pragma once

#include <memory>

#include "vtpage/backend/backend.hpp"
#include "vtpage/base/log.hpp"

namespace vtpage {

struct HostBackendSettings {
    // The granularity, minimum and recommended; a multiple of the OS page size. 2 MiB matches
    // CUDA, so page layouts are the same on both backends.
    std::size_t page_size = 2_MiB;
    // The most bytes of physical pages that may exist at once; create() fails with
    // out_of_memory beyond it, as cuMemCreate does when the GPU is full. 0: the memory
    // available when the backend starts.
    std::size_t physical_limit = 0;
    // Allocate each page's memory at create (fallocate), as cuMemCreate does, so that running
    // out shows at create and not as SIGBUS at first touch.
    bool allocate_on_create = true;
    Log log;
};

class HostBackend final : public Backend {
public:
    explicit HostBackend(HostBackendSettings settings = {});
    ~HostBackend() override;

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
    void synchronize() override {}

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace vtpage
