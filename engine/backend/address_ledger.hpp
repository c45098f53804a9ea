// The bookkeeping both backends share: which ranges are reserved, which physical pages exist and
// which ranges are mapped with which access. Every backend call is checked here before it
// reaches the driver or the kernel, so that both backends refuse the same bad calls with the
// same typed errors, and so that a bad unmap never reaches the CUDA driver (which aborts on some).
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "vtpage/backend/backend.hpp"

namespace vtpage::backend_detail {

class AddressLedger {
public:
    struct Mapping {
        DeviceAddress address = 0;
        std::size_t size = 0;
        PhysicalHandle handle;
        std::size_t offset = 0;
        Access access = Access::none;  // for the backend's own device
    };

    explicit AddressLedger(std::size_t granularity) : granularity_(granularity) {}

    std::size_t granularity() const noexcept { return granularity_; }
    // invalid_argument unless value is a non-zero multiple of the granularity.
    // Checks reserve()'s arguments, as every backend must; returns them as text for errors.
    std::string check_reserve(std::size_t size, std::size_t alignment, DeviceAddress hint) const;
    void check_size(const char* operation, const char* what, std::size_t value,
                    const std::string& arguments) const;
    void check_aligned(const char* operation, const char* what, std::size_t value,
                       const std::string& arguments) const;

    void add_reservation(DeviceAddress address, std::size_t size);
    // Checks and forgets a reservation: exactly one earlier reservation, nothing mapped in it.
    void remove_reservation(DeviceAddress address, std::size_t size);

    void add_handle(PhysicalHandle handle, std::size_t size);
    // invalid_handle for an unknown or released handle.
    std::size_t handle_size(const char* operation, PhysicalHandle handle) const;
    void remove_handle(PhysicalHandle handle);

    // Checks a map and records it (access none); cancel_map undoes it when the driver fails.
    void begin_map(DeviceAddress address, std::size_t size, PhysicalHandle handle,
                   std::size_t offset);
    void cancel_map(DeviceAddress address);
    // Checks that [address, address + size) is one or more whole mappings with no hole, then
    // forgets and returns them; restore() puts them back when the driver fails.
    std::vector<Mapping> begin_unmap(DeviceAddress address, std::size_t size);
    void restore(const std::vector<Mapping>& mappings);

    // Checks that the range is whole mappings with no hole, and returns them.
    std::vector<Mapping> whole_mappings(const char* operation, DeviceAddress address,
                                        std::size_t size) const;
    void set_access(DeviceAddress address, std::size_t size, Access access);
    // Checks that every byte of the range is mapped with at least the given access.
    void check_access(const char* operation, DeviceAddress address, std::size_t size,
                      Access needed) const;

    LiveResources live_resources() const;

private:
    using MappingMap = std::map<DeviceAddress, Mapping>;
    // Collects the mappings covering [address, end) and throws unless they tile it exactly.
    std::vector<MappingMap::const_iterator> tiling_nolock(const char* operation,
                                                          DeviceAddress address, std::size_t size,
                                                          Errc partial_error) const;
    bool inside_reservation_nolock(DeviceAddress address, std::size_t size) const;

    std::size_t granularity_;
    mutable std::mutex mutex_;
    std::map<DeviceAddress, std::size_t> reservations_;
    std::map<std::uint64_t, std::size_t> handles_;
    MappingMap mappings_;
};

std::string hex(std::uint64_t value);

}  // namespace vtpage::backend_detail
