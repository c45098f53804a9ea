#include "vtpage/backend/cuda_backend.hpp"

#include <fcntl.h>

#include <cerrno>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "backend/address_ledger.hpp"
#include "backend/cuda_driver.hpp"
#include "vtpage/base/system_error.hpp"

namespace vtpage {

using backend_detail::hex;

namespace {

CUmemAccess_flags access_flags(Access access) {
    switch (access) {
        case Access::none:
            return CU_MEM_ACCESS_FLAGS_PROT_NONE;
        case Access::read:
            return CU_MEM_ACCESS_FLAGS_PROT_READ;
        case Access::read_write:
            return CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    }
    return CU_MEM_ACCESS_FLAGS_PROT_NONE;
}

std::string range_text(DeviceAddress address, std::size_t size) {
    return detail::concat("address=", hex(address), ", size=", size);
}

}  // namespace

struct CudaBackend::State {
    State(CudaBackendSettings s, backend_detail::CudaDriver d, std::size_t granularity)
        : settings(std::move(s)), driver(d), ledger(granularity) {}

    CUmemAllocationProp properties(const PageOptions& options) const {
        CUmemAllocationProp prop{};
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = options.device < 0 ? settings.device : options.device;
        if (options.exportable && capabilities.fd_handles) {
            prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        }
        if (options.compressible) prop.allocFlags.compressionType = CU_MEM_ALLOCATION_COMP_GENERIC;
        return prop;
    }

    // The primary context of a device, retained on first use; the backend's own is retained at
    // construction.
    CUcontext context_of(int ordinal) {
        std::lock_guard lock(devices_mutex);
        CUcontext& slot = contexts.at(static_cast<std::size_t>(ordinal));
        if (!slot) {
            CUcontext retained = nullptr;
            driver.check(driver.cuDevicePrimaryCtxRetain(&retained, devices.at(ordinal)),
                         "CudaBackend", detail::concat("device=", ordinal),
                         "cuDevicePrimaryCtxRetain failed");
            slot = retained;
        }
        return slot;
    }
    void remember_device(PhysicalHandle handle, int ordinal) {
        std::lock_guard lock(devices_mutex);
        handle_devices[handle.value] = ordinal;
    }
    void forget_device(PhysicalHandle handle) {
        std::lock_guard lock(devices_mutex);
        handle_devices.erase(handle.value);
    }
    int device_of(PhysicalHandle handle) const {
        std::lock_guard lock(devices_mutex);
        auto found = handle_devices.find(handle.value);
        return found == handle_devices.end() ? settings.device : found->second;
    }

    CudaBackendSettings settings;
    backend_detail::CudaDriver driver;
    backend_detail::AddressLedger ledger;
    Capabilities capabilities;
    CUdevice device = 0;
    CUcontext context = nullptr;
    // Per device ordinal: its CUdevice, whether it has VMM, and peer[a][b]: whether device a
    // can access memory on device b (queried once: the answers do not change).
    std::vector<CUdevice> devices;
    std::vector<bool> vmm_supported;
    std::vector<std::vector<bool>> peer;
    mutable std::mutex devices_mutex;  // guards contexts and handle_devices
    std::vector<CUcontext> contexts;
    std::unordered_map<std::uint64_t, int> handle_devices;
};

CudaBackend::CudaBackend(CudaBackendSettings settings) {
    auto driver = backend_detail::CudaDriver::load();
    const std::string arguments = detail::concat("device=", settings.device);
    CUresult result = driver.cuInit(0);
    if (result != CUDA_SUCCESS) driver.fail(result, "CudaBackend", arguments, "cuInit failed");
    int count = 0;
    driver.check(driver.cuDeviceGetCount(&count), "CudaBackend", arguments);
    if (settings.device < 0 || settings.device >= count) {
        throw Error(Errc::device_unavailable, "CudaBackend",
                    detail::concat("there are ", count, " CUDA devices"), arguments);
    }
    CUdevice device = 0;
    driver.check(driver.cuDeviceGet(&device, settings.device), "CudaBackend", arguments);
    auto attribute = [&](CUdevice_attribute which) {
        int value = 0;
        driver.check(driver.cuDeviceGetAttribute(&value, which, device), "CudaBackend", arguments,
                     "cuDeviceGetAttribute failed");
        return value;
    };
    if (!attribute(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)) {
        throw Error(Errc::not_supported, "CudaBackend",
                    "the device does not support virtual memory management", arguments);
    }

    // The granularity with the fd handle type requested; on an H100 it is 2 MiB either
    // way, and the larger of the two keeps every page exportable.
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = settings.device;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    std::size_t granularity = 0;
    result =
        driver.cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    if (result != CUDA_SUCCESS || granularity == 0) {
        prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_NONE;
        driver.check(driver.cuMemGetAllocationGranularity(&granularity, &prop,
                                                          CU_MEM_ALLOC_GRANULARITY_MINIMUM),
                     "CudaBackend", arguments, "cuMemGetAllocationGranularity failed");
    }

    state_ = std::make_unique<State>(std::move(settings), driver, granularity);
    State& s = *state_;
    s.device = device;
    for (int ordinal = 0; ordinal < count; ++ordinal) {
        CUdevice other = 0;
        s.driver.check(s.driver.cuDeviceGet(&other, ordinal), "CudaBackend", arguments);
        int vmm = 0;
        s.driver.check(s.driver.cuDeviceGetAttribute(
                           &vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, other),
                       "CudaBackend", arguments, "cuDeviceGetAttribute failed");
        s.devices.push_back(other);
        s.vmm_supported.push_back(vmm != 0);
    }
    s.peer.assign(static_cast<std::size_t>(count), std::vector<bool>(count, false));
    for (int accessor = 0; accessor < count; ++accessor) {
        for (int owner = 0; owner < count; ++owner) {
            int can = accessor == owner ? 1 : 0;
            if (accessor != owner) {
                s.driver.check(
                    s.driver.cuDeviceCanAccessPeer(&can, s.devices[accessor], s.devices[owner]),
                    "CudaBackend", arguments, "cuDeviceCanAccessPeer failed");
            }
            s.peer[accessor][owner] = can != 0;
        }
    }

    s.driver.check(s.driver.cuDevicePrimaryCtxRetain(&s.context, device), "CudaBackend", arguments,
                   "cuDevicePrimaryCtxRetain failed");
    s.contexts.assign(static_cast<std::size_t>(count), nullptr);
    s.contexts[static_cast<std::size_t>(s.settings.device)] = s.context;
    make_current();
    Capabilities& caps = s.capabilities;
    caps.backend = "cuda";
    char name[256] = {};
    s.driver.cuDeviceGetName(name, sizeof(name), device);
    caps.device_name = name;
    CUuuid uuid{};
    static_assert(sizeof(uuid.bytes) == sizeof(caps.device_uuid));
    if (CUresult uuid_result = s.driver.cuDeviceGetUuid(&uuid, device);
        uuid_result == CUDA_SUCCESS) {
        for (std::size_t i = 0; i < caps.device_uuid.size(); ++i) {
            caps.device_uuid[i] = static_cast<std::uint8_t>(uuid.bytes[i]);
        }
    } else {  // only interop needs it: it then finds no matching Vulkan device and says so
        s.settings.log.warning("cuDeviceGetUuid failed: ", s.driver.error_name(uuid_result));
    }
    caps.device = s.settings.device;
    caps.device_count = count;
    caps.gpu = true;
    caps.virtual_memory = true;
    caps.compute_capability = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 10 +
                              attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    int version = 0;
    s.driver.cuDriverGetVersion(&version);
    caps.driver_version = detail::concat("CUDA ", version / 1000, ".", (version % 1000) / 10);
    caps.fd_handles = attribute(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED);
    caps.compression = attribute(CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED);
    caps.read_only_access = true;

    if (!s.settings.probe) return;
    // The queries can say yes where creation then fails: try each capability once.
    if (caps.fd_handles) {
        try {
            PhysicalHandle page = create(granularity, PageOptions{-1, true, false});
            try {
                export_fd(page);
            } catch (...) {
                release(page);
                throw;
            }
            release(page);
        } catch (const Error& error) {
            caps.fd_handles = false;
            s.settings.log.warning("cuda backend: pages cannot be exported as fds (", error.what(),
                                   "); continuing without the fd handle type");
        }
    }
    if (caps.compression) {
        try {
            PhysicalHandle page = create(granularity, PageOptions{-1, caps.fd_handles, true});
            caps.compression = is_compressed(page);
            release(page);
        } catch (const Error& error) {
            caps.compression = false;
            s.settings.log.info("cuda backend: compressible pages are not available (",
                                error.what(), ")");
        }
    }
    DeviceAddress probe_range = 0;
    PhysicalHandle probe_page;
    try {
        probe_range = reserve(granularity);
        probe_page = create(granularity, PageOptions{-1, false, false});
        map(probe_range, granularity, probe_page);
        set_access(probe_range, granularity, Access::read);
    } catch (const Error& error) {
        caps.read_only_access = false;
        s.settings.log.info("cuda backend: read-only mappings are not available (", error.what(),
                            ")");
    }
    try {
        if (probe_page) {
            if (s.ledger.live_resources().mappings) unmap(probe_range, granularity);
            release(probe_page);
        }
        if (probe_range) free_reservation(probe_range, granularity);
    } catch (const Error& error) {
        s.settings.log.warning("cuda backend: cleaning up the access probe failed: ", error.what());
    }
}

CudaBackend::~CudaBackend() {
    if (!state_) return;
    LiveResources live = state_->ledger.live_resources();
    if (live.mappings || live.pages || live.reservations) {
        state_->settings.log.warning("cuda backend destroyed with ", live.pages, " pages, ",
                                     live.mappings, " mappings and ", live.reservations,
                                     " reservations still live");
    }
    // Leave this thread current on no context that these releases may destroy.
    CUcontext current = nullptr;
    state_->driver.cuCtxGetCurrent(&current);
    for (std::size_t ordinal = 0; ordinal < state_->contexts.size(); ++ordinal) {
        if (!state_->contexts[ordinal]) continue;
        if (current == state_->contexts[ordinal]) state_->driver.cuCtxSetCurrent(nullptr);
        state_->driver.cuDevicePrimaryCtxRelease(state_->devices[ordinal]);
    }
}

void CudaBackend::make_current(int device) const {
    if (device < 0 || device >= state_->capabilities.device_count) {
        throw Error(
            Errc::invalid_argument, "make_current",
            detail::concat("there are ", state_->capabilities.device_count, " CUDA devices"),
            detail::concat("device=", device));
    }
    // Always set, never compare first: when the last holder releases a primary context and a
    // new one is retained later, the driver may hand out the same handle value, so a thread
    // whose current context is the destroyed one would look up to date.
    state_->driver.check(state_->driver.cuCtxSetCurrent(state_->context_of(device)), "make_current",
                         detail::concat("device=", device), "cuCtxSetCurrent failed");
}

MemoryInfo CudaBackend::memory_info(int device) const {
    make_current(device);
    MemoryInfo info;
    CUresult result = state_->driver.cuMemGetInfo(&info.free, &info.total);
    make_current();
    state_->driver.check(result, "memory_info", detail::concat("device=", device));
    return info;
}

bool CudaBackend::can_access_peer(int accessor, int owner) const {
    const int count = state_->capabilities.device_count;
    if (accessor < 0 || accessor >= count || owner < 0 || owner >= count) return false;
    return state_->peer[accessor][owner];
}

bool CudaBackend::supports_virtual_memory(int device) const {
    if (device < 0 || device >= state_->capabilities.device_count) return false;
    return state_->vmm_supported[device];
}

int CudaBackend::device_of(PhysicalHandle handle) const {
    state_->ledger.handle_size("device_of", handle);
    return state_->device_of(handle);
}

void CudaBackend::make_current() const {
    state_->driver.check(state_->driver.cuCtxSetCurrent(state_->context), "make_current", {},
                         "cuCtxSetCurrent failed");  // always set: see make_current(device)
}

const Capabilities& CudaBackend::capabilities() const noexcept { return state_->capabilities; }

Granularity CudaBackend::granularity(const PageOptions& options) const {
    CUmemAllocationProp prop = state_->properties(options);
    Granularity result;
    const auto& driver = state_->driver;
    driver.check(driver.cuMemGetAllocationGranularity(&result.minimum, &prop,
                                                      CU_MEM_ALLOC_GRANULARITY_MINIMUM),
                 "granularity", {});
    driver.check(driver.cuMemGetAllocationGranularity(&result.recommended, &prop,
                                                      CU_MEM_ALLOC_GRANULARITY_RECOMMENDED),
                 "granularity", {});
    return result;
}

MemoryInfo CudaBackend::memory_info() const {
    make_current();
    MemoryInfo info;
    state_->driver.check(state_->driver.cuMemGetInfo(&info.free, &info.total), "memory_info", {});
    return info;
}

LiveResources CudaBackend::live_resources() const { return state_->ledger.live_resources(); }

DeviceAddress CudaBackend::reserve(std::size_t size, std::size_t alignment, DeviceAddress hint) {
    auto& ledger = state_->ledger;
    const std::string arguments = ledger.check_reserve(size, alignment, hint);
    make_current();
    CUdeviceptr address = 0;
    state_->driver.check(state_->driver.cuMemAddressReserve(&address, size, alignment, hint, 0),
                         "reserve", arguments);
    ledger.add_reservation(address, size);
    return address;
}

void CudaBackend::free_reservation(DeviceAddress address, std::size_t size) {
    state_->ledger.remove_reservation(address, size);
    make_current();
    CUresult result = state_->driver.cuMemAddressFree(address, size);
    if (result != CUDA_SUCCESS) {
        state_->ledger.add_reservation(address, size);
        state_->driver.fail(result, "free_reservation", range_text(address, size));
    }
}

PhysicalHandle CudaBackend::create(std::size_t size, const PageOptions& options) {
    const std::string arguments = detail::concat("size=", size, ", device=", options.device,
                                                 ", exportable=", options.exportable,
                                                 ", compressible=", options.compressible);
    state_->ledger.check_size("create", "size", size, arguments);
    if (options.device < -1 || options.device >= state_->capabilities.device_count) {
        throw Error(
            Errc::invalid_argument, "create",
            detail::concat("there are ", state_->capabilities.device_count, " CUDA devices"),
            arguments);
    }
    const int placed_on = options.device < 0 ? state_->settings.device : options.device;
    if (!state_->vmm_supported[placed_on]) {
        throw Error(
            Errc::not_supported, "create",
            detail::concat("device ", placed_on, " does not support virtual memory management"),
            arguments);
    }
    if (placed_on != state_->settings.device) state_->context_of(placed_on);
    make_current();
    CUmemAllocationProp prop = state_->properties(options);
    CUmemGenericAllocationHandle handle = 0;
    state_->driver.check(state_->driver.cuMemCreate(&handle, size, &prop, 0), "create", arguments);
    PhysicalHandle result{handle};
    state_->ledger.add_handle(result, size);
    state_->remember_device(result, placed_on);
    return result;
}

void CudaBackend::release(PhysicalHandle handle) {
    state_->ledger.remove_handle(handle);
    state_->forget_device(handle);
    make_current();
    state_->driver.check(state_->driver.cuMemRelease(handle.value), "release",
                         detail::concat("handle=", handle.value));
}

bool CudaBackend::is_compressed(PhysicalHandle handle) const {
    state_->ledger.handle_size("is_compressed", handle);
    CUmemAllocationProp prop{};
    state_->driver.check(state_->driver.cuMemGetAllocationPropertiesFromHandle(&prop, handle.value),
                         "is_compressed", detail::concat("handle=", handle.value));
    return prop.allocFlags.compressionType == CU_MEM_ALLOCATION_COMP_GENERIC;
}

void CudaBackend::map(DeviceAddress address, std::size_t size, PhysicalHandle handle,
                      std::size_t offset) {
    state_->ledger.begin_map(address, size, handle, offset);
    make_current();
    CUresult result = state_->driver.cuMemMap(address, size, offset, handle.value, 0);
    if (result != CUDA_SUCCESS) {
        state_->ledger.cancel_map(address);
        state_->driver.fail(result, "map",
                            detail::concat(range_text(address, size), ", handle=", handle.value,
                                           ", offset=", offset));
    }
}

void CudaBackend::unmap(DeviceAddress address, std::size_t size) {
    auto removed = state_->ledger.begin_unmap(address, size);
    make_current();
    CUresult result = state_->driver.cuMemUnmap(address, size);
    if (result != CUDA_SUCCESS) {
        state_->ledger.restore(removed);
        state_->driver.fail(result, "unmap", range_text(address, size));
    }
}

void CudaBackend::set_access(DeviceAddress address, std::size_t size,
                             std::span<const DeviceAccess> access) {
    const std::string arguments = range_text(address, size);
    if (access.empty()) {
        throw Error(Errc::invalid_argument, "set_access", "no device access given", arguments);
    }
    std::vector<CUmemAccessDesc> descriptors;
    descriptors.reserve(access.size());
    const Access* own = nullptr;
    std::vector<bool> seen(static_cast<std::size_t>(state_->capabilities.device_count), false);
    for (const DeviceAccess& entry : access) {
        if (entry.device < 0 || entry.device >= state_->capabilities.device_count) {
            throw Error(Errc::invalid_argument, "set_access",
                        detail::concat("device ", entry.device, " does not exist (there are ",
                                       state_->capabilities.device_count, ")"),
                        arguments);
        }
        if (seen[entry.device]) {
            throw Error(Errc::invalid_argument, "set_access",
                        detail::concat("device ", entry.device, " is given twice"), arguments);
        }
        seen[entry.device] = true;
        if (entry.access != Access::none && !state_->vmm_supported[entry.device]) {
            throw Error(Errc::not_supported, "set_access",
                        detail::concat("device ", entry.device,
                                       " does not support virtual memory management"),
                        arguments);
        }
        CUmemAccessDesc descriptor{};
        descriptor.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        descriptor.location.id = entry.device;
        descriptor.flags = access_flags(entry.access);
        descriptors.push_back(descriptor);
        if (entry.device == state_->capabilities.device) own = &entry.access;
    }
    const auto mappings = state_->ledger.whole_mappings("set_access", address, size);
    // Each accessing device must reach the device of every page in the range.
    for (const auto& mapping : mappings) {
        const int owner = state_->device_of(mapping.handle);
        for (const DeviceAccess& entry : access) {
            if (entry.access != Access::none && !state_->peer[entry.device][owner]) {
                throw Error(
                    Errc::not_supported, "set_access",
                    detail::concat("device ", entry.device, " cannot access memory on device ",
                                   owner, " (cuDeviceCanAccessPeer says no)"),
                    arguments);
            }
        }
    }
    for (const DeviceAccess& entry : access) {
        if (entry.access != Access::none && entry.device != state_->settings.device) {
            state_->context_of(entry.device);
        }
    }
    make_current();
    state_->driver.check(
        state_->driver.cuMemSetAccess(address, size, descriptors.data(), descriptors.size()),
        "set_access", arguments);
    if (own) state_->ledger.set_access(address, size, *own);
}

UniqueFd CudaBackend::export_fd(PhysicalHandle handle) {
    const std::string arguments = detail::concat("handle=", handle.value);
    state_->ledger.handle_size("export_fd", handle);
    if (!state_->capabilities.fd_handles) {
        throw Error(Errc::not_supported, "export_fd",
                    "this device cannot export pages as POSIX fds", arguments);
    }
    make_current();
    int fd = -1;
    state_->driver.check(state_->driver.cuMemExportToShareableHandle(
                             &fd, handle.value, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
                         "export_fd", arguments);
    return UniqueFd(fd);
}

PhysicalHandle CudaBackend::import_fd(int fd, std::size_t size) {
    const std::string arguments = detail::concat("fd=", fd, ", size=", size);
    state_->ledger.check_size("import_fd", "size", size, arguments);
    if (fd < 0 || fcntl(fd, F_GETFD) < 0) {
        throw_errno_value(fd < 0 ? EBADF : errno, Errc::invalid_handle, "import_fd",
                          "the descriptor is not open", arguments);
    }
    make_current();
    CUmemGenericAllocationHandle handle = 0;
    void* os_handle = reinterpret_cast<void*>(static_cast<std::intptr_t>(fd));
    state_->driver.check(state_->driver.cuMemImportFromShareableHandle(
                             &handle, os_handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
                         "import_fd", arguments);
    PhysicalHandle result{handle};
    // The exporter chose the device; the importer learns it from the allocation's properties.
    CUmemAllocationProp prop{};
    int placed_on = state_->settings.device;
    if (state_->driver.cuMemGetAllocationPropertiesFromHandle(&prop, handle) == CUDA_SUCCESS &&
        prop.location.type == CU_MEM_LOCATION_TYPE_DEVICE && prop.location.id >= 0 &&
        prop.location.id < state_->capabilities.device_count) {
        placed_on = prop.location.id;
    }
    state_->ledger.add_handle(result, size);
    state_->remember_device(result, placed_on);
    return result;
}

void CudaBackend::write(DeviceAddress destination, const void* source, std::size_t size) {
    state_->ledger.check_access("write", destination, size, Access::read_write);
    if (size == 0) return;
    make_current();
    state_->driver.check(state_->driver.cuMemcpyHtoD(destination, source, size), "write",
                         range_text(destination, size));
    // A small copy from pageable memory returns before its DMA is done; a later set_access or
    // unmap would then fault the copy in flight. Wait, so that write() is truly synchronous.
    state_->driver.check(state_->driver.cuStreamSynchronize(nullptr), "write",
                         range_text(destination, size));
}

void CudaBackend::read(void* destination, DeviceAddress source, std::size_t size) {
    state_->ledger.check_access("read", source, size, Access::read);
    if (size == 0) return;
    make_current();
    state_->driver.check(state_->driver.cuMemcpyDtoH(destination, source, size), "read",
                         range_text(source, size));
}

void CudaBackend::synchronize() {
    make_current();
    state_->driver.check(state_->driver.cuCtxSynchronize(), "synchronize", {});
}

}  // namespace vtpage
