// The backend interface: the only door to a memory API. Everything above it (page pool, page
// table, streaming, interop) is written against this class, so it runs unchanged on GPU memory
// (CudaBackend, the CUDA driver's virtual memory management API) and on host memory
// (HostBackend, Linux virtual memory), and can be wrapped to inject faults.
//
// The contract follows CUDA's VMM API, and both backends enforce the same rules with the same
// typed errors:
//   - a virtual range is reserved, then physical pages are mapped into it, then access is set;
//     a fresh mapping is not accessible until set_access;
//   - sizes, addresses and offsets are multiples of granularity().minimum;
//   - unmap covers one or more whole mappings exactly (never part of one, never a hole);
//   - set_access covers whole mappings with no hole;
//   - releasing a page that is still mapped is legal: its memory lives until the last unmap;
//   - export_fd returns a new descriptor the caller owns; import_fd does not take the caller's.
// All members are thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "vtpage/base/error.hpp"
#include "vtpage/base/unique_fd.hpp"

namespace vtpage {

// A virtual address in the backend's address space (a CUdeviceptr, or a host pointer).
using DeviceAddress = std::uint64_t;

// Byte sizes: 2_MiB, 64_TiB. Code outside namespace vtpage brings in these alone with
// `using namespace vtpage::literals;` (inline: inside vtpage they need nothing).
inline namespace literals {
constexpr std::size_t operator""_KiB(unsigned long long v) { return std::size_t(v) << 10; }
constexpr std::size_t operator""_MiB(unsigned long long v) { return std::size_t(v) << 20; }
constexpr std::size_t operator""_GiB(unsigned long long v) { return std::size_t(v) << 30; }
constexpr std::size_t operator""_TiB(unsigned long long v) { return std::size_t(v) << 40; }
}  // namespace literals

enum class Access : std::uint8_t { none, read, read_write };
std::string_view to_string(Access access) noexcept;

// Access granted to one device; device is a backend device ordinal (the host backend has one
// device, 0, the CPU).
struct DeviceAccess {
    int device = 0;
    Access access = Access::read_write;
};

// An opaque physical page (a CUmemGenericAllocationHandle, or a memfd). 0 is no page.
struct PhysicalHandle {
    std::uint64_t value = 0;
    explicit operator bool() const noexcept { return value != 0; }
    friend bool operator==(PhysicalHandle, PhysicalHandle) = default;
};

struct PageOptions {
    int device = -1;            // where the memory lives; -1: the backend's device
    bool exportable = true;     // allow export_fd (CUDA: the POSIX fd handle type)
    bool compressible = false;  // ask for generic compression; is_compressed() says if granted
};

struct Granularity {
    std::size_t minimum = 0;
    std::size_t recommended = 0;
};

struct MemoryInfo {
    std::size_t total = 0;
    std::size_t free = 0;
};

// What a backend holds right now: for leak checks and invariant checks.
struct LiveResources {
    std::size_t reservations = 0;
    std::size_t reserved_bytes = 0;
    std::size_t mappings = 0;
    std::size_t mapped_bytes = 0;
    std::size_t pages = 0;  // physical pages created or imported and not yet released
    std::size_t page_bytes = 0;
    friend bool operator==(const LiveResources&, const LiveResources&) = default;
};

struct Capabilities {
    std::string backend;  // "cuda" or "host"
    std::string device_name;
    int device = 0;  // the ordinal this backend runs on
    int device_count = 1;
    bool gpu = false;
    bool virtual_memory = false;    // reserve / map / unmap supported
    bool fd_handles = false;        // export_fd / import_fd work (probed, not just queried)
    bool compression = false;       // a compressible page was created and granted compression
    bool read_only_access = false;  // Access::read is accepted by set_access
    int compute_capability = 0;     // major * 10 + minor on CUDA, 0 elsewhere
    std::string driver_version;
    // The device's UUID (cuDeviceGetUuid), which Vulkan reports as deviceUUID: how interop
    // finds the Vulkan device that is this CUDA device. All zeros on the host backend.
    std::array<std::uint8_t, 16> device_uuid{};
};

class Backend {
public:
    virtual ~Backend() = default;
    Backend(const Backend&) = delete;
    Backend& operator=(const Backend&) = delete;

    virtual const Capabilities& capabilities() const noexcept = 0;
    std::string_view name() const noexcept { return capabilities().backend; }
    virtual Granularity granularity(const PageOptions& options = {}) const = 0;
    virtual MemoryInfo memory_info() const = 0;
    virtual LiveResources live_resources() const = 0;

    // Reserves size bytes of address space, aligned to alignment (0: the minimum granularity).
    // A non-zero hint asks for that address; the backend may place the range elsewhere.
    virtual DeviceAddress reserve(std::size_t size, std::size_t alignment = 0,
                                  DeviceAddress hint = 0) = 0;
    // Frees exactly one earlier reservation; busy while anything is mapped inside it.
    virtual void free_reservation(DeviceAddress address, std::size_t size) = 0;

    virtual PhysicalHandle create(std::size_t size, const PageOptions& options = {}) = 0;
    virtual void release(PhysicalHandle handle) = 0;
    // Whether the driver granted compression to this page.
    virtual bool is_compressed(PhysicalHandle handle) const = 0;

    // Maps size bytes of handle, starting at offset, at address (inside a reservation).
    virtual void map(DeviceAddress address, std::size_t size, PhysicalHandle handle,
                     std::size_t offset = 0) = 0;
    virtual void unmap(DeviceAddress address, std::size_t size) = 0;
    virtual void set_access(DeviceAddress address, std::size_t size,
                            std::span<const DeviceAccess> access) = 0;
    // Access for the backend's own device only.
    void set_access(DeviceAddress address, std::size_t size, Access access) {
        DeviceAccess own{capabilities().device, access};
        set_access(address, size, std::span<const DeviceAccess>(&own, 1));
    }

    // A new descriptor for the page; the caller owns it. Whoever holds it gets read access at
    // least: on the host backend the page is sealed first (no resize, no new writable mapping
    // or write through any descriptor, the exporter's own mappings excepted); on CUDA an fd
    // carries no access rights, so a holder can map the page read-write.
    virtual UniqueFd export_fd(PhysicalHandle handle) = 0;
    // A new handle for the page behind fd, which must hold size bytes. fd stays the caller's.
    virtual PhysicalHandle import_fd(int fd, std::size_t size) = 0;

    // Synchronous copies between host memory and mapped, accessible pages.
    virtual void write(DeviceAddress destination, const void* source, std::size_t size) = 0;
    virtual void read(void* destination, DeviceAddress source, std::size_t size) = 0;
    // Waits until all work the backend's device has in flight is done.
    virtual void synchronize() = 0;

protected:
    Backend() = default;
};

}  // namespace vtpage
