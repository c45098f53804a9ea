#include "backend/address_ledger.hpp"

#include <cstdio>

namespace vtpage::backend_detail {

std::string hex(std::uint64_t value) {
    char text[24];
    std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(value));
    return text;
}

namespace {
std::string range_text(DeviceAddress address, std::size_t size) {
    return detail::concat("address=", hex(address), ", size=", size);
}
}  // namespace

std::string AddressLedger::check_reserve(std::size_t size, std::size_t alignment,
                                         DeviceAddress hint) const {
    std::string arguments =
        detail::concat("size=", size, ", alignment=", alignment, ", hint=", hex(hint));
    check_size("reserve", "size", size, arguments);
    check_aligned("reserve", "alignment", alignment, arguments);
    check_aligned("reserve", "hint", hint, arguments);
    return arguments;
}

void AddressLedger::check_size(const char* operation, const char* what, std::size_t value,
                               const std::string& arguments) const {
    if (value == 0 || value % granularity_ != 0) {
        throw Error(Errc::invalid_argument, operation,
                    detail::concat(what, " ", value, " is not a non-zero multiple of the ",
                                   granularity_, "-byte granularity"),
                    arguments);
    }
}

void AddressLedger::check_aligned(const char* operation, const char* what, std::size_t value,
                                  const std::string& arguments) const {
    if (value % granularity_ != 0) {
        throw Error(Errc::invalid_argument, operation,
                    detail::concat(what, " ", hex(value), " is not aligned to the ", granularity_,
                                   "-byte granularity"),
                    arguments);
    }
}

void AddressLedger::add_reservation(DeviceAddress address, std::size_t size) {
    std::lock_guard lock(mutex_);
    reservations_[address] = size;
}

void AddressLedger::remove_reservation(DeviceAddress address, std::size_t size) {
    std::lock_guard lock(mutex_);
    auto found = reservations_.find(address);
    if (found == reservations_.end() || found->second != size) {
        throw Error(Errc::invalid_argument, "free_reservation",
                    "the range is not exactly one earlier reservation", range_text(address, size));
    }
    auto first = mappings_.lower_bound(address);
    if (first != mappings_.end() && first->first < address + size) {
        throw Error(Errc::busy, "free_reservation",
                    detail::concat("the reservation still has a mapping at ", hex(first->first)),
                    range_text(address, size));
    }
    reservations_.erase(found);
}

void AddressLedger::add_handle(PhysicalHandle handle, std::size_t size) {
    std::lock_guard lock(mutex_);
    handles_[handle.value] = size;
}

std::size_t AddressLedger::handle_size(const char* operation, PhysicalHandle handle) const {
    std::lock_guard lock(mutex_);
    auto found = handles_.find(handle.value);
    if (found == handles_.end()) {
        throw Error(Errc::invalid_handle, operation,
                    "the physical page was released or never created",
                    detail::concat("handle=", handle.value));
    }
    return found->second;
}

void AddressLedger::remove_handle(PhysicalHandle handle) {
    std::lock_guard lock(mutex_);
    if (handles_.erase(handle.value) == 0) {
        throw Error(Errc::invalid_handle, "release",
                    "the physical page was released already or never created",
                    detail::concat("handle=", handle.value));
    }
}

bool AddressLedger::inside_reservation_nolock(DeviceAddress address, std::size_t size) const {
    auto after = reservations_.upper_bound(address);
    if (after == reservations_.begin()) return false;
    auto containing = std::prev(after);
    return address + size <= containing->first + containing->second;
}

void AddressLedger::begin_map(DeviceAddress address, std::size_t size, PhysicalHandle handle,
                              std::size_t offset) {
    const std::string arguments =
        detail::concat(range_text(address, size), ", handle=", handle.value, ", offset=", offset);
    check_aligned("map", "address", address, arguments);
    check_size("map", "size", size, arguments);
    check_aligned("map", "offset", offset, arguments);
    std::lock_guard lock(mutex_);
    auto page = handles_.find(handle.value);
    if (page == handles_.end()) {
        throw Error(Errc::invalid_handle, "map", "the physical page was released or never created",
                    arguments);
    }
    if (offset + size > page->second) {
        throw Error(Errc::invalid_argument, "map",
                    detail::concat("offset + size exceeds the page's ", page->second, " bytes"),
                    arguments);
    }
    if (!inside_reservation_nolock(address, size)) {
        throw Error(Errc::out_of_range, "map", "the range is not inside one reservation",
                    arguments);
    }
    auto next = mappings_.lower_bound(address);
    bool overlaps_next = next != mappings_.end() && next->first < address + size;
    bool overlaps_previous = false;
    if (next != mappings_.begin()) {
        auto previous = std::prev(next);
        overlaps_previous = previous->first + previous->second.size > address;
    }
    if (overlaps_next || overlaps_previous) {
        throw Error(Errc::already_mapped, "map", "part of the range is mapped already", arguments);
    }
    mappings_[address] = Mapping{address, size, handle, offset, Access::none};
}

void AddressLedger::cancel_map(DeviceAddress address) {
    std::lock_guard lock(mutex_);
    mappings_.erase(address);
}

std::vector<AddressLedger::MappingMap::const_iterator> AddressLedger::tiling_nolock(
    const char* operation, DeviceAddress address, std::size_t size, Errc partial_error) const {
    const std::string arguments = range_text(address, size);
    if (size == 0) throw Error(Errc::invalid_argument, operation, "size is 0", arguments);
    std::vector<MappingMap::const_iterator> covering;
    auto it = mappings_.upper_bound(address);
    if (it != mappings_.begin()) {
        auto previous = std::prev(it);
        if (previous->first + previous->second.size > address) it = previous;
    }
    DeviceAddress cursor = address;
    const DeviceAddress end = address + size;
    for (; it != mappings_.end() && it->first < end; ++it) {
        if (it->first != cursor) {
            if (it->first < cursor) {
                throw Error(
                    partial_error, operation,
                    detail::concat("the range starts inside the mapping at ", hex(it->first)),
                    arguments);
            }
            throw Error(Errc::not_mapped, operation,
                        detail::concat("nothing is mapped at ", hex(cursor)), arguments);
        }
        if (it->first + it->second.size > end) {
            throw Error(partial_error, operation,
                        detail::concat("the range ends inside the mapping at ", hex(it->first),
                                       " of ", it->second.size, " bytes"),
                        arguments);
        }
        covering.push_back(it);
        cursor = it->first + it->second.size;
    }
    if (cursor != end) {
        throw Error(Errc::not_mapped, operation,
                    detail::concat("nothing is mapped at ", hex(cursor)), arguments);
    }
    return covering;
}

std::vector<AddressLedger::Mapping> AddressLedger::begin_unmap(DeviceAddress address,
                                                               std::size_t size) {
    std::lock_guard lock(mutex_);
    auto covering = tiling_nolock("unmap", address, size, Errc::partial_unmap);
    std::vector<Mapping> removed;
    removed.reserve(covering.size());
    for (auto it : covering) removed.push_back(it->second);
    for (const Mapping& mapping : removed) mappings_.erase(mapping.address);
    return removed;
}

void AddressLedger::restore(const std::vector<Mapping>& mappings) {
    std::lock_guard lock(mutex_);
    for (const Mapping& mapping : mappings) mappings_[mapping.address] = mapping;
}

std::vector<AddressLedger::Mapping> AddressLedger::whole_mappings(const char* operation,
                                                                  DeviceAddress address,
                                                                  std::size_t size) const {
    std::lock_guard lock(mutex_);
    std::vector<Mapping> result;
    for (auto it : tiling_nolock(operation, address, size, Errc::invalid_argument)) {
        result.push_back(it->second);
    }
    return result;
}

void AddressLedger::set_access(DeviceAddress address, std::size_t size, Access access) {
    std::lock_guard lock(mutex_);
    for (auto it : tiling_nolock("set_access", address, size, Errc::invalid_argument)) {
        mappings_.at(it->first).access = access;
    }
}

void AddressLedger::check_access(const char* operation, DeviceAddress address, std::size_t size,
                                 Access needed) const {
    const std::string arguments = range_text(address, size);
    if (size == 0) return;
    std::lock_guard lock(mutex_);
    auto it = mappings_.upper_bound(address);
    if (it == mappings_.begin()) {
        throw Error(Errc::not_mapped, operation,
                    detail::concat("nothing is mapped at ", hex(address)), arguments);
    }
    --it;
    DeviceAddress cursor = address;
    const DeviceAddress end = address + size;
    while (cursor < end) {
        if (it == mappings_.end() || it->first > cursor || it->first + it->second.size <= cursor) {
            throw Error(Errc::not_mapped, operation,
                        detail::concat("nothing is mapped at ", hex(cursor)), arguments);
        }
        if (static_cast<int>(it->second.access) < static_cast<int>(needed)) {
            throw Error(Errc::access_denied, operation,
                        detail::concat("the mapping at ", hex(it->first), " allows ",
                                       to_string(it->second.access), ", the call needs ",
                                       to_string(needed)),
                        arguments);
        }
        cursor = it->first + it->second.size;
        ++it;
    }
}

LiveResources AddressLedger::live_resources() const {
    std::lock_guard lock(mutex_);
    LiveResources live;
    live.reservations = reservations_.size();
    for (const auto& [address, size] : reservations_) live.reserved_bytes += size;
    live.mappings = mappings_.size();
    for (const auto& [address, mapping] : mappings_) live.mapped_bytes += mapping.size;
    live.pages = handles_.size();
    for (const auto& [handle, size] : handles_) live.page_bytes += size;
    return live;
}

}  // namespace vtpage::backend_detail
