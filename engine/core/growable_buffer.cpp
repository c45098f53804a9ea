#include "vtpage/core/growable_buffer.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "vtpage/core/page_pool.hpp"

namespace vtpage {

namespace {

// One physical allocation and where it sits in the buffer. Every allocation is exactly one
// mapping, inside one reservation: so a run of allocations inside one reservation is unmapped
// with one call, and a failed call leaves whole allocations on either side of it.
struct Allocation {
    std::size_t offset = 0;  // from data()
    std::size_t size = 0;
    PhysicalHandle handle;
    std::optional<PooledPage> pooled;  // set when the page came from a pool
};

// A reservation, in buffer offsets: [offset, offset + size) at address.
struct Reservation {
    DeviceAddress address = 0;
    std::size_t offset = 0;
    std::size_t size = 0;
};

std::size_t round_up(std::size_t value, std::size_t multiple) {
    return (value + multiple - 1) / multiple * multiple;
}

}  // namespace

struct GrowableBuffer::State {
    State(Backend& b, GrowableBufferSettings s) : backend(b), settings(std::move(s)) {}

    Backend& backend;
    GrowableBufferSettings settings;
    std::size_t page = 0;
    std::vector<DeviceAccess> access;
    std::vector<Reservation> reservations;  // contiguous: the first at data(), offset 0
    std::vector<Allocation> allocations;    // contiguous from offset 0, in order
    std::size_t size = 0;
    std::size_t capacity = 0;
    // Old reservations a move could not unmap or free; retried by later moves and at the end.
    struct Retired {
        DeviceAddress address = 0;
        std::size_t size = 0;
        std::size_t mapped = 0;  // bytes from address still mapped
    };
    std::vector<Retired> retired;
    GrowableBufferStatistics stats;

    DeviceAddress base() const { return reservations.front().address; }
    std::size_t reserved() const { return reservations.back().offset + reservations.back().size; }
    const Reservation& reservation_at(std::size_t offset) const {
        for (const Reservation& r : reservations) {
            if (offset >= r.offset && offset < r.offset + r.size) return r;
        }
        return reservations.back();  // unreachable for offsets inside the reservations
    }
    DeviceAddress address_of(std::size_t offset) const {
        const Reservation& r = reservation_at(offset);
        return r.address + (offset - r.offset);
    }

    // Calls run(address, bytes) for each part of [from, to) that lies inside one reservation.
    template <typename Run>
    void for_each_run(std::size_t from, std::size_t to, Run run) const {
        for (const Reservation& r : reservations) {
            const std::size_t begin = std::max(from, r.offset);
            const std::size_t end = std::min(to, r.offset + r.size);
            if (begin < end) run(r.address + (begin - r.offset), end - begin);
        }
    }

    void set_access(DeviceAddress address, std::size_t bytes) {
        backend.set_access(address, bytes, access);
        ++stats.set_access_calls;
    }
    void unmap(DeviceAddress address, std::size_t bytes) {
        backend.unmap(address, bytes);
        ++stats.unmaps;
    }

    // Physical memory for [from, from + bytes): one allocation per reservation side of `split`
    // (the end of the reservation, which the growth may cross), or pool pages. All or nothing.
    std::vector<Allocation> acquire(std::size_t from, std::size_t bytes, std::size_t split);
    void give_back(std::vector<Allocation>& fresh) noexcept;
    // Maps the allocations where the reservations put them and sets access once per run;
    // on failure unmaps what it mapped and rethrows.
    void map_in_place(const std::vector<Allocation>& fresh);
    // Reserves the range right after the last reservation; false if the driver put it elsewhere.
    bool extend_in_place(std::size_t target);
    // Maps every allocation, old and fresh, into a new reservation of at least `target` bytes,
    // then switches to it and unmaps the old one.
    void relocate(std::size_t target, const std::vector<Allocation>& fresh);
    // The size of a new or extended reservation that must hold `target` bytes.
    std::size_t next_reservation_size(std::size_t target) const;
    // Unmaps and frees old reservations (after a move), keeping what fails for a later try.
    void retire(const std::vector<Reservation>& old, std::size_t mapped_bytes) noexcept;
    void retry_retired() noexcept;
    void teardown() noexcept;
};

std::vector<Allocation> GrowableBuffer::State::acquire(std::size_t from, std::size_t bytes,
                                                       std::size_t split) {
    std::vector<Allocation> fresh;
    if (settings.pool) {
        std::vector<PooledPage> pages = settings.pool->acquire(bytes / page);
        fresh.reserve(pages.size());
        for (std::size_t i = 0; i < pages.size(); ++i) {
            fresh.push_back({from + i * page, page, pages[i].handle, pages[i]});
        }
        return fresh;
    }
    std::vector<std::pair<std::size_t, std::size_t>> parts;  // offset, size
    if (from < split && from + bytes > split) {
        parts = {{from, split - from}, {split, from + bytes - split}};
    } else {
        parts = {{from, bytes}};
    }
    try {
        for (auto [offset, part] : parts) {
            PhysicalHandle handle = backend.create(part, settings.page_options);
            ++stats.creates;
            fresh.push_back({offset, part, handle, std::nullopt});
        }
    } catch (...) {
        give_back(fresh);
        throw;
    }
    return fresh;
}

void GrowableBuffer::State::give_back(std::vector<Allocation>& fresh) noexcept {
    std::vector<PooledPage> pages;
    for (const Allocation& allocation : fresh) {
        if (allocation.pooled) {
            pages.push_back(*allocation.pooled);
            continue;
        }
        try {
            backend.release(allocation.handle);
            ++stats.releases;
        } catch (const Error& error) {
            settings.log.error("growable buffer: releasing an allocation failed: ", error.what());
        }
    }
    if (!pages.empty()) {
        try {
            settings.pool->release(pages);
        } catch (const Error& error) {
            settings.log.error("growable buffer: giving pages back to the pool failed: ",
                               error.what());
        }
    }
    fresh.clear();
}

void GrowableBuffer::State::map_in_place(const std::vector<Allocation>& fresh) {
    if (fresh.empty()) return;
    std::size_t mapped = 0;
    try {
        for (const Allocation& allocation : fresh) {
            backend.map(address_of(allocation.offset), allocation.size, allocation.handle);
            ++stats.maps;
            ++mapped;
        }
        for_each_run(fresh.front().offset, fresh.back().offset + fresh.back().size,
                     [&](DeviceAddress address, std::size_t bytes) { set_access(address, bytes); });
    } catch (...) {
        // Each allocation is one mapping: undo them one by one, never a hole or a foreign page.
        for (std::size_t i = 0; i < mapped; ++i) {
            try {
                unmap(address_of(fresh[i].offset), fresh[i].size);
            } catch (const Error& error) {
                settings.log.error("growable buffer: undoing a map failed: ", error.what());
            }
        }
        throw;
    }
}

std::size_t GrowableBuffer::State::next_reservation_size(std::size_t target) const {
    const double grown = std::ceil(double(reserved()) * settings.address_growth);
    std::size_t wanted = grown >= double(max_bytes) ? max_bytes : std::size_t(grown);
    return round_up(std::max(target, wanted), page);
}

bool GrowableBuffer::State::extend_in_place(std::size_t target) {
    const Reservation& last = reservations.back();
    const DeviceAddress end = last.address + last.size;
    const std::size_t extra = next_reservation_size(target) - reserved();
    DeviceAddress placed = 0;
    try {
        placed = backend.reserve(extra, 0, end);
        ++stats.reserves;
    } catch (const Error& error) {
        // The hint is only a wish: a refusal means "not here", and a move may still work.
        settings.log.debug("growable buffer: reserving the adjacent range failed: ", error.what());
        return false;
    }
    if (placed != end) {
        try {
            backend.free_reservation(placed, extra);
        } catch (const Error& error) {
            settings.log.error("growable buffer: freeing a misplaced reservation failed: ",
                               error.what());
        }
        return false;
    }
    reservations.push_back({placed, reserved(), extra});
    ++stats.in_place_extensions;
    return true;
}

void GrowableBuffer::State::relocate(std::size_t target, const std::vector<Allocation>& fresh) {
    const std::size_t bytes = next_reservation_size(target);
    const DeviceAddress to = backend.reserve(bytes);
    ++stats.reserves;
    std::vector<const Allocation*> mapped;
    try {
        auto map_one = [&](const Allocation& allocation) {
            backend.map(to + allocation.offset, allocation.size, allocation.handle);
            ++stats.maps;
            mapped.push_back(&allocation);
        };
        for (const Allocation& allocation : allocations) map_one(allocation);
        for (const Allocation& allocation : fresh) map_one(allocation);
        set_access(to, target);  // one call over the whole new range
        if (settings.on_relocate) settings.on_relocate(base(), to);
    } catch (...) {
        for (const Allocation* allocation : mapped) {
            try {
                unmap(to + allocation->offset, allocation->size);
            } catch (const Error& error) {
                settings.log.error("growable buffer: undoing a move failed: ", error.what());
            }
        }
        try {
            backend.free_reservation(to, bytes);
        } catch (const Error& error) {
            settings.log.error("growable buffer: freeing the new range failed: ", error.what());
            retired.push_back({to, bytes, 0});
        }
        throw;
    }
    std::vector<Reservation> old = std::move(reservations);
    reservations = {{to, 0, bytes}};
    ++stats.relocations;
    retire(old, capacity);
}

void GrowableBuffer::State::retire(const std::vector<Reservation>& old,
                                   std::size_t mapped_bytes) noexcept {
    for (const Reservation& r : old) {
        const std::size_t mapped =
            mapped_bytes > r.offset ? std::min(mapped_bytes - r.offset, r.size) : 0;
        retired.push_back({r.address, r.size, mapped});
    }
    retry_retired();
}

void GrowableBuffer::State::retry_retired() noexcept {
    std::vector<Retired> left;
    for (Retired& r : retired) {
        try {
            if (r.mapped > 0) {
                unmap(r.address, r.mapped);
                r.mapped = 0;
            }
            backend.free_reservation(r.address, r.size);
        } catch (const Error& error) {
            settings.log.error(
                "growable buffer: freeing an old range failed (tried again "
                "later): ",
                error.what());
            left.push_back(r);
        }
    }
    retired = std::move(left);
}

void GrowableBuffer::State::teardown() noexcept {
    for_each_run(0, capacity, [&](DeviceAddress address, std::size_t bytes) {
        try {
            unmap(address, bytes);
        } catch (const Error& error) {
            settings.log.error("growable buffer: unmapping failed at destruction: ", error.what());
        }
    });
    give_back(allocations);
    capacity = size = 0;
    for (const Reservation& r : reservations) {
        try {
            backend.free_reservation(r.address, r.size);
        } catch (const Error& error) {
            settings.log.error("growable buffer: freeing the address range failed: ", error.what());
        }
    }
    reservations.clear();
    retry_retired();
}

GrowableBuffer::GrowableBuffer(Backend& backend, GrowableBufferSettings settings)
    : backend_(&backend), state_(std::make_unique<State>(backend, std::move(settings))) {
    State& s = *state_;
    const GrowableBufferSettings& set = s.settings;
    const std::string arguments = detail::concat("address_space=", set.address_space,
                                                 ", initial_capacity=", set.initial_capacity,
                                                 ", address_growth=", set.address_growth);
    if (set.address_space > max_bytes || set.initial_capacity > max_bytes) {
        throw Error(Errc::invalid_argument, "GrowableBuffer",
                    detail::concat("sizes are limited to ", max_bytes, " bytes"), arguments);
    }
    if (!(set.address_growth >= 1.0)) {
        throw Error(Errc::invalid_argument, "GrowableBuffer", "address_growth must be 1 or more",
                    arguments);
    }
    if (set.pool) {
        if (&set.pool->backend() != &backend) {
            throw Error(Errc::invalid_argument, "GrowableBuffer",
                        "the pool works on another backend", arguments);
        }
        s.page = set.pool->page_size();
    } else {
        s.page = backend.granularity(set.page_options).minimum;
    }
    s.access = set.access;
    if (s.access.empty()) s.access.push_back({backend.capabilities().device, Access::read_write});

    std::size_t space = set.address_space ? set.address_space : backend.memory_info().total;
    space = round_up(std::max({space, set.initial_capacity, s.page}), s.page);
    const DeviceAddress base = backend.reserve(space, 0, set.address_hint);
    ++s.stats.reserves;
    s.reservations.push_back({base, 0, space});
    try {
        reserve(set.initial_capacity);
    } catch (...) {
        s.teardown();
        throw;
    }
}

GrowableBuffer::~GrowableBuffer() {
    if (state_) state_->teardown();
}

GrowableBuffer::GrowableBuffer(GrowableBuffer&& other) noexcept
    : backend_(other.backend_), state_(std::move(other.state_)) {}

GrowableBuffer& GrowableBuffer::operator=(GrowableBuffer&& other) noexcept {
    if (this != &other) {
        if (state_) state_->teardown();
        backend_ = other.backend_;
        state_ = std::move(other.state_);
    }
    return *this;
}

DeviceAddress GrowableBuffer::data() const noexcept { return state_ ? state_->base() : 0; }
std::size_t GrowableBuffer::size() const noexcept { return state_ ? state_->size : 0; }
std::size_t GrowableBuffer::capacity() const noexcept { return state_ ? state_->capacity : 0; }
std::size_t GrowableBuffer::reserved_bytes() const noexcept {
    return state_ ? state_->reserved() : 0;
}
std::size_t GrowableBuffer::page_size() const noexcept { return state_ ? state_->page : 0; }

void GrowableBuffer::reserve(std::size_t bytes) {
    if (!state_) {
        throw Error(Errc::invalid_argument, "GrowableBuffer::reserve", "the buffer was moved from",
                    detail::concat("bytes=", bytes));
    }
    State& s = *state_;
    if (bytes <= s.capacity) return;
    if (bytes > max_bytes) {
        throw Error(Errc::invalid_argument, "GrowableBuffer::reserve",
                    detail::concat("the size is above max_size() (", max_bytes, " bytes)"),
                    detail::concat("bytes=", bytes));
    }
    const std::size_t target = round_up(bytes, s.page);
    const std::size_t old_reserved = s.reserved();
    // Physical memory first: running out of it is the likely failure, and nothing has changed.
    std::vector<Allocation> fresh = s.acquire(s.capacity, target - s.capacity, old_reserved);
    std::size_t extensions = s.reservations.size();
    try {
        if (target <= old_reserved || s.extend_in_place(target)) {
            s.map_in_place(fresh);
        } else if (s.settings.allow_relocation) {
            s.relocate(target, fresh);
        } else {
            throw Error(Errc::out_of_range, "GrowableBuffer::reserve",
                        detail::concat("the buffer's ", old_reserved,
                                       " bytes of address space cannot be extended in place, "
                                       "and relocation is off"),
                        detail::concat("bytes=", bytes));
        }
    } catch (...) {
        // Drop an in-place extension this call made (nothing is mapped in it any more).
        while (s.reservations.size() > extensions) {
            const Reservation r = s.reservations.back();
            s.reservations.pop_back();
            try {
                s.backend.free_reservation(r.address, r.size);
            } catch (const Error& error) {
                s.settings.log.error("growable buffer: freeing an extension failed: ",
                                     error.what());
                s.retired.push_back({r.address, r.size, 0});
            }
        }
        s.give_back(fresh);
        throw;
    }
    s.allocations.insert(s.allocations.end(), fresh.begin(), fresh.end());
    s.capacity = target;
    ++s.stats.grows;
}

void GrowableBuffer::resize(std::size_t bytes) {
    reserve(bytes);
    state_->size = bytes;
}

void GrowableBuffer::clear() noexcept {
    if (state_) state_->size = 0;
}

void GrowableBuffer::shrink_to_fit() {
    if (!state_) return;
    State& s = *state_;
    const std::size_t keep = round_up(s.size, s.page);
    auto first_doomed = std::find_if(s.allocations.begin(), s.allocations.end(),
                                     [&](const Allocation& a) { return a.offset >= keep; });
    if (first_doomed == s.allocations.end()) return;
    const std::size_t from = first_doomed->offset;
    // Unmap from the end, one call per reservation: if a call fails, everything past it is
    // gone and everything before it is still mapped, so the buffer stays consistent.
    std::vector<std::pair<DeviceAddress, std::size_t>> runs;
    std::vector<std::size_t> run_offsets;
    for (const Reservation& r : s.reservations) {
        const std::size_t begin = std::max(from, r.offset);
        const std::size_t end = std::min(s.capacity, r.offset + r.size);
        if (begin < end) {
            runs.push_back({r.address + (begin - r.offset), end - begin});
            run_offsets.push_back(begin);
        }
    }
    std::size_t unmapped_from = s.capacity;
    auto release_past = [&](std::size_t offset) {
        auto doomed = std::find_if(s.allocations.begin(), s.allocations.end(),
                                   [&](const Allocation& a) { return a.offset >= offset; });
        std::vector<Allocation> gone(doomed, s.allocations.end());
        s.allocations.erase(doomed, s.allocations.end());
        s.give_back(gone);
        s.capacity = offset;
        s.size = std::min(s.size, s.capacity);
    };
    try {
        for (std::size_t i = runs.size(); i-- > 0;) {
            s.unmap(runs[i].first, runs[i].second);
            unmapped_from = run_offsets[i];
        }
    } catch (...) {
        if (unmapped_from < s.capacity) {
            release_past(unmapped_from);
            ++s.stats.shrinks;
        }
        throw;
    }
    release_past(from);
    ++s.stats.shrinks;
}

void GrowableBuffer::write(std::size_t offset, const void* source, std::size_t bytes) {
    const std::string arguments = detail::concat("offset=", offset, ", bytes=", bytes);
    if (!state_) {
        throw Error(Errc::invalid_argument, "GrowableBuffer::write", "the buffer was moved from",
                    arguments);
    }
    if (offset > state_->size || bytes > state_->size - offset) {
        throw Error(Errc::out_of_range, "GrowableBuffer::write",
                    detail::concat("the buffer holds ", state_->size, " bytes"), arguments);
    }
    if (bytes == 0) return;
    if (!source) {
        throw Error(Errc::invalid_argument, "GrowableBuffer::write", "the source is null",
                    arguments);
    }
    // A copy may cross reservations (after in-place extensions): one backend copy per part.
    const auto* from = static_cast<const unsigned char*>(source);
    state_->for_each_run(offset, offset + bytes, [&](DeviceAddress address, std::size_t part) {
        backend_->write(address, from, part);
        from += part;
    });
}

void GrowableBuffer::read(void* destination, std::size_t offset, std::size_t bytes) const {
    const std::string arguments = detail::concat("offset=", offset, ", bytes=", bytes);
    if (!state_) {
        throw Error(Errc::invalid_argument, "GrowableBuffer::read", "the buffer was moved from",
                    arguments);
    }
    if (offset > state_->size || bytes > state_->size - offset) {
        throw Error(Errc::out_of_range, "GrowableBuffer::read",
                    detail::concat("the buffer holds ", state_->size, " bytes"), arguments);
    }
    if (bytes == 0) return;
    if (!destination) {
        throw Error(Errc::invalid_argument, "GrowableBuffer::read", "the destination is null",
                    arguments);
    }
    auto* to = static_cast<unsigned char*>(destination);
    state_->for_each_run(offset, offset + bytes, [&](DeviceAddress address, std::size_t part) {
        backend_->read(to, address, part);
        to += part;
    });
}

GrowableBufferStatistics GrowableBuffer::statistics() const noexcept {
    if (!state_) return {};
    GrowableBufferStatistics stats = state_->stats;
    stats.allocations = state_->allocations.size();
    stats.reservations = state_->reservations.size();
    return stats;
}

}  // namespace vtpage
