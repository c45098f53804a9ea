#include "vtpage/backend/host_backend.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>
#include <unordered_map>

#include "backend/address_ledger.hpp"
#include "vtpage/base/system_error.hpp"

namespace vtpage {

using backend_detail::hex;

namespace {

std::size_t available_memory_bytes() {
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    std::size_t kib = 0;
    std::string unit;
    while (meminfo >> key >> kib >> unit) {
        if (key == "MemAvailable:") return kib * 1024;
    }
    return static_cast<std::size_t>(sysconf(_SC_AVPHYS_PAGES)) *
           static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

std::string cpu_name() {
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line)) {
        if (line.rfind("model name", 0) == 0) {
            auto colon = line.find(':');
            if (colon != std::string::npos) return line.substr(colon + 2);
        }
    }
    return "host CPU";
}

int protection_for(Access access) {
    switch (access) {
        case Access::none:
            return PROT_NONE;
        case Access::read:
            return PROT_READ;
        case Access::read_write:
            return PROT_READ | PROT_WRITE;
    }
    return PROT_NONE;
}

void* to_pointer(DeviceAddress address) { return reinterpret_cast<void*>(address); }

constexpr int reserve_flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010  // Linux 5.1; older C libraries lack the name
#endif
// An exported page can be neither resized (a shrink would SIGBUS every mapping of it) nor
// written through any mapping or descriptor made after the export, by anyone: consumers get
// read-only pages, whatever they do with the fd (ftruncate, a reopen through /proc/self/fd).
constexpr int export_seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL;

void seal_for_export(int fd, std::uint64_t handle) {
    const int seals = fcntl(fd, F_GET_SEALS);
    if (seals >= 0 && (seals & export_seals) == export_seals) return;
    if (seals >= 0 && fcntl(fd, F_ADD_SEALS, export_seals) == 0) return;
    throw_errno(Errc::not_supported, "export_fd",
                "sealing the page read-only for its consumers failed (F_SEAL_FUTURE_WRITE needs "
                "Linux 5.1 or later); not exporting a page that consumers could write or shrink",
                detail::concat("handle=", handle));
}

}  // namespace

struct HostBackend::State {
    struct Page {
        int fd = -1;
        std::size_t size = 0;
        bool counts_against_limit = false;  // created here, not imported
        // Pages created here keep one inaccessible but writable-capable mapping from before any
        // seal: map() duplicates it, since a mapping made after F_SEAL_FUTURE_WRITE can never
        // be made writable, and the producer must keep writing pages it has exported.
        void* master = nullptr;
    };

    explicit State(HostBackendSettings s) : settings(std::move(s)), ledger(settings.page_size) {}

    Page page(const char* operation, PhysicalHandle handle) {
        auto found = pages.find(handle.value);
        if (found == pages.end()) {
            throw Error(Errc::invalid_handle, operation,
                        "the physical page was released or never created",
                        detail::concat("handle=", handle.value));
        }
        return found->second;
    }

    HostBackendSettings settings;
    Capabilities capabilities;
    backend_detail::AddressLedger ledger;
    std::mutex mutex;  // guards pages, next_id and physical_bytes
    std::unordered_map<std::uint64_t, Page> pages;
    std::uint64_t next_id = 1;
    std::size_t physical_bytes = 0;
};

HostBackend::HostBackend(HostBackendSettings settings) {
    const auto os_page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    if (settings.page_size == 0 || settings.page_size % os_page != 0) {
        throw Error(Errc::invalid_argument, "HostBackend",
                    detail::concat("page_size must be a non-zero multiple of the ", os_page,
                                   "-byte OS page"),
                    detail::concat("page_size=", settings.page_size));
    }
    if (settings.physical_limit == 0) settings.physical_limit = available_memory_bytes();
    state_ = std::make_unique<State>(std::move(settings));

    // One descriptor per physical page: take the hard open-file limit, and say so.
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
        rlim_t before = limit.rlim_cur;
        limit.rlim_cur = limit.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &limit) == 0) {
            state_->settings.log.info("host backend: raised the open-file limit from ", before,
                                      " to ", limit.rlim_max, " (one descriptor per page)");
        }
    }

    utsname names{};
    uname(&names);
    Capabilities& caps = state_->capabilities;
    caps.backend = "host";
    caps.device_name = cpu_name();
    caps.device = 0;
    caps.device_count = 1;
    caps.gpu = false;
    caps.virtual_memory = true;
    caps.fd_handles = true;
    caps.compression = false;
    caps.read_only_access = true;
    caps.driver_version = std::string("Linux ") + names.release;
}

HostBackend::~HostBackend() {
    // Pages the application never released are closed here; their mappings (if any) stay
    // valid until unmapped, as with CUDA.
    for (auto& [id, page] : state_->pages) {
        ::close(page.fd);
        if (page.master) ::munmap(page.master, page.size);
    }
}

const Capabilities& HostBackend::capabilities() const noexcept { return state_->capabilities; }

Granularity HostBackend::granularity(const PageOptions&) const {
    return {state_->settings.page_size, state_->settings.page_size};
}

MemoryInfo HostBackend::memory_info() const {
    std::lock_guard lock(state_->mutex);
    const std::size_t total = state_->settings.physical_limit;
    const std::size_t used = std::min(total, state_->physical_bytes);
    return {total, std::min(total - used, available_memory_bytes())};
}

LiveResources HostBackend::live_resources() const { return state_->ledger.live_resources(); }

DeviceAddress HostBackend::reserve(std::size_t size, std::size_t alignment, DeviceAddress hint) {
    auto& ledger = state_->ledger;
    const std::string arguments = ledger.check_reserve(size, alignment, hint);
    if (alignment == 0) alignment = ledger.granularity();
    if ((alignment & (alignment - 1)) != 0) {
        throw Error(Errc::invalid_argument, "reserve", "alignment is not a power of two",
                    arguments);
    }

    DeviceAddress address = 0;
    if (hint != 0 && hint % alignment == 0) {
        void* placed =
            mmap(to_pointer(hint), size, PROT_NONE, reserve_flags | MAP_FIXED_NOREPLACE, -1, 0);
        if (placed != MAP_FAILED) address = reinterpret_cast<DeviceAddress>(placed);
    }
    if (address == 0) {
        // Over-reserve, then trim to the alignment.
        if (size > SIZE_MAX - alignment) {
            throw Error(Errc::out_of_memory, "reserve", "the size overflows the address space",
                        arguments);
        }
        const std::size_t padded = size + alignment;
        void* raw = mmap(nullptr, padded, PROT_NONE, reserve_flags, -1, 0);
        if (raw == MAP_FAILED) {
            throw_errno(Errc::out_of_memory, "reserve", "no address range of this size is free",
                        arguments);
        }
        const auto start = reinterpret_cast<DeviceAddress>(raw);
        address = (start + alignment - 1) & ~(static_cast<DeviceAddress>(alignment) - 1);
        if (address > start) munmap(raw, address - start);
        const DeviceAddress tail = address + size;
        if (start + padded > tail) munmap(to_pointer(tail), start + padded - tail);
    }
    ledger.add_reservation(address, size);
    return address;
}

void HostBackend::free_reservation(DeviceAddress address, std::size_t size) {
    state_->ledger.remove_reservation(address, size);
    munmap(to_pointer(address), size);
}

PhysicalHandle HostBackend::create(std::size_t size, const PageOptions& options) {
    const std::string arguments = detail::concat("size=", size, ", device=", options.device);
    state_->ledger.check_size("create", "size", size, arguments);
    if (options.device != -1 && options.device != 0) {
        throw Error(Errc::invalid_argument, "create", "the host backend has one device, 0",
                    arguments);
    }
    std::lock_guard lock(state_->mutex);
    const std::size_t limit = state_->settings.physical_limit;
    if (state_->physical_bytes + size > limit) {
        throw Error(Errc::out_of_memory, "create",
                    detail::concat("the host backend's physical limit of ", limit,
                                   " bytes is reached (", state_->physical_bytes, " in use)"),
                    arguments);
    }
    UniqueFd fd(memfd_create("vtpage-page", MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (!fd) {
        throw_errno(Errc::out_of_memory, "create",
                    "memfd_create failed (each page holds one descriptor)", arguments);
    }
    if (ftruncate(fd.get(), static_cast<off_t>(size)) != 0) {
        throw_errno(Errc::out_of_memory, "create", "ftruncate failed", arguments);
    }
    if (state_->settings.allocate_on_create) {
        int result = posix_fallocate(fd.get(), 0, static_cast<off_t>(size));
        if (result != 0) {
            throw_errno_value(result, Errc::out_of_memory, "create",
                              "allocating the page's memory failed", arguments);
        }
    }
    void* master = mmap(nullptr, size, PROT_NONE, MAP_SHARED, fd.get(), 0);
    if (master == MAP_FAILED) {
        throw_errno(Errc::out_of_memory, "create", "mapping the page failed", arguments);
    }
    PhysicalHandle handle{state_->next_id++};
    state_->pages[handle.value] = State::Page{fd.release(), size, true, master};
    state_->physical_bytes += size;
    state_->ledger.add_handle(handle, size);
    return handle;
}

void HostBackend::release(PhysicalHandle handle) {
    state_->ledger.remove_handle(handle);
    std::lock_guard lock(state_->mutex);
    auto found = state_->pages.find(handle.value);
    if (found == state_->pages.end()) return;
    if (found->second.counts_against_limit) state_->physical_bytes -= found->second.size;
    ::close(found->second.fd);  // mappings keep the memory alive until they are unmapped
    if (found->second.master) ::munmap(found->second.master, found->second.size);
    state_->pages.erase(found);
}

bool HostBackend::is_compressed(PhysicalHandle handle) const {
    state_->ledger.handle_size("is_compressed", handle);
    return false;
}

void HostBackend::map(DeviceAddress address, std::size_t size, PhysicalHandle handle,
                      std::size_t offset) {
    auto& ledger = state_->ledger;
    ledger.begin_map(address, size, handle, offset);
    std::lock_guard lock(state_->mutex);
    try {
        State::Page page = state_->page("map", handle);
        // old_size 0: a second mapping of the same shared pages, with the master's rights.
        void* placed = page.master
                           ? mremap(static_cast<char*>(page.master) + offset, 0, size,
                                    MREMAP_MAYMOVE | MREMAP_FIXED, to_pointer(address))
                           : mmap(to_pointer(address), size, PROT_NONE, MAP_SHARED | MAP_FIXED,
                                  page.fd, static_cast<off_t>(offset));
        if (placed == MAP_FAILED) {
            throw_errno(Errc::out_of_memory, "map", "mmap failed",
                        detail::concat("address=", hex(address), ", size=", size));
        }
    } catch (...) {
        ledger.cancel_map(address);
        throw;
    }
}

void HostBackend::unmap(DeviceAddress address, std::size_t size) {
    auto removed = state_->ledger.begin_unmap(address, size);
    // Put the reservation back in place of the mappings, in one call.
    void* placed = mmap(to_pointer(address), size, PROT_NONE, reserve_flags | MAP_FIXED, -1, 0);
    if (placed == MAP_FAILED) {
        int error_number = errno;
        state_->ledger.restore(removed);
        throw_errno_value(error_number, Errc::backend_failure, "unmap", "mmap failed",
                          detail::concat("address=", hex(address), ", size=", size));
    }
}

void HostBackend::set_access(DeviceAddress address, std::size_t size,
                             std::span<const DeviceAccess> access) {
    const std::string arguments = detail::concat("address=", hex(address), ", size=", size);
    if (access.empty()) {
        throw Error(Errc::invalid_argument, "set_access", "no device access given", arguments);
    }
    Access own = Access::none;
    for (const DeviceAccess& entry : access) {
        if (entry.device != 0) {
            throw Error(Errc::invalid_argument, "set_access",
                        detail::concat("device ", entry.device,
                                       " does not exist: the host backend has one device, 0"),
                        arguments);
        }
        own = entry.access;
    }
    state_->ledger.whole_mappings("set_access", address, size);
    if (mprotect(to_pointer(address), size, protection_for(own)) != 0) {
        throw_errno(Errc::backend_failure, "set_access", "mprotect failed", arguments);
    }
    state_->ledger.set_access(address, size, own);
}

UniqueFd HostBackend::export_fd(PhysicalHandle handle) {
    std::lock_guard lock(state_->mutex);
    State::Page page = state_->page("export_fd", handle);
    seal_for_export(page.fd, handle.value);
    UniqueFd copy(fcntl(page.fd, F_DUPFD_CLOEXEC, 0));
    if (!copy) {
        throw_errno(Errc::out_of_memory, "export_fd", "no descriptor left",
                    detail::concat("handle=", handle.value));
    }
    return copy;
}

PhysicalHandle HostBackend::import_fd(int fd, std::size_t size) {
    const std::string arguments = detail::concat("fd=", fd, ", size=", size);
    state_->ledger.check_size("import_fd", "size", size, arguments);
    struct stat status {};
    if (fd < 0 || fstat(fd, &status) != 0) {
        throw_errno_value(fd < 0 ? EBADF : errno, Errc::invalid_handle, "import_fd",
                          "the descriptor is not open", arguments);
    }
    if (!S_ISREG(status.st_mode) || static_cast<std::size_t>(status.st_size) != size) {
        throw Error(Errc::invalid_handle, "import_fd",
                    detail::concat("the descriptor is not a page of ", size, " bytes (it holds ",
                                   status.st_size, ")"),
                    arguments);
    }
    // An exporter that could still shrink the file could SIGBUS this process through it.
    const int seals = fcntl(fd, F_GET_SEALS);
    if (seals < 0 || (seals & (F_SEAL_SHRINK | F_SEAL_GROW)) != (F_SEAL_SHRINK | F_SEAL_GROW)) {
        throw Error(Errc::invalid_handle, "import_fd",
                    "the descriptor is not sealed against resizing (export_fd seals it)",
                    arguments);
    }
    UniqueFd copy(fcntl(fd, F_DUPFD_CLOEXEC, 0));
    if (!copy) throw_errno(Errc::out_of_memory, "import_fd", "no descriptor left", arguments);
    std::lock_guard lock(state_->mutex);
    PhysicalHandle handle{state_->next_id++};
    state_->pages[handle.value] = State::Page{copy.release(), size, false};
    state_->ledger.add_handle(handle, size);
    return handle;
}

void HostBackend::write(DeviceAddress destination, const void* source, std::size_t size) {
    state_->ledger.check_access("write", destination, size, Access::read_write);
    std::memcpy(to_pointer(destination), source, size);
}

void HostBackend::read(void* destination, DeviceAddress source, std::size_t size) {
    state_->ledger.check_access("read", source, size, Access::read);
    std::memcpy(destination, to_pointer(source), size);
}

}  // namespace vtpage
