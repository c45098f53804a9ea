// Where the disk benchmark's pages end: an arena of device memory written from pinned host
// memory on a few CUDA streams (the CUDA runtime), or, where there is no CUDA device (built
// without CUDA, none present, or --backend host), ordinary memory written with memcpy.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace vtpage::bench::disk {

using HostBuffer = std::unique_ptr<std::byte, void (*)(std::byte*)>;

struct DeviceCopySettings {
    std::string backend = "auto";  // auto: the CUDA device where there is one; cuda; host
    std::size_t arena_pages = 256;
    std::size_t page_bytes = 2u << 20;
    std::size_t streams = 4;
    std::size_t fences = 1;  // copies the caller waits for one by one (one per staging buffer)
};

class DeviceCopier {
public:
    // device_unavailable for backend "cuda" without a CUDA device; invalid_argument for an
    // unknown backend.
    explicit DeviceCopier(DeviceCopySettings settings);
    ~DeviceCopier();
    DeviceCopier(const DeviceCopier&) = delete;
    DeviceCopier& operator=(const DeviceCopier&) = delete;

    bool on_device() const noexcept;
    // "CUDA device 0 (NVIDIA H100 80GB HBM3)" or "host memory (no CUDA device: ...)".
    const std::string& description() const noexcept;
    // Empty on a device; else why the copies are memcpy.
    const std::string& host_reason() const noexcept;
    std::size_t streams() const noexcept;

    // Memory for the copies to read from: pinned where there is a device, 4 KiB aligned.
    HostBuffer allocate_staging(std::size_t bytes) const;
    // Copies page_bytes from source into the arena's page `arena_page` (modulo its size) on
    // stream `stream` (modulo the count); `fence` is reached when it is done. Thread-safe.
    void copy(std::size_t stream, std::size_t arena_page, const std::byte* source,
              std::size_t fence);
    // Waits until the last copy given `fence` is done.
    void wait(std::size_t fence);
    // Waits for every copy.
    void synchronize();

    struct State;  // defined in the implementation only

private:
    std::unique_ptr<State> state_;
};

}  // namespace vtpage::bench::disk
