// A backend that wraps another and can hold its unmaps until the test lets them go: for tests
// of what other threads see while an eviction is in progress. Every other call is forwarded.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "vtpage/backend/backend.hpp"

namespace vtpage::test {

class GatedBackend final : public Backend {
public:
    explicit GatedBackend(Backend& inner) : inner_(inner) {}

    // Unmaps from now on wait until open() (or until the deadline given to close()).
    void close(std::chrono::milliseconds deadline = std::chrono::seconds(20)) {
        std::lock_guard lock(mutex_);
        closed_ = true;
        deadline_ = std::chrono::steady_clock::now() + deadline;
    }
    void open() {
        {
            std::lock_guard lock(mutex_);
            closed_ = false;
        }
        changed_.notify_all();
    }
    // Whether an unmap is held at the gate within `limit`.
    bool wait_until_held(std::chrono::milliseconds limit = std::chrono::seconds(20)) {
        std::unique_lock lock(mutex_);
        return changed_.wait_for(lock, limit, [&] { return held_ > 0; });
    }

    const Capabilities& capabilities() const noexcept override { return inner_.capabilities(); }
    Granularity granularity(const PageOptions& options = {}) const override {
        return inner_.granularity(options);
    }
    MemoryInfo memory_info() const override { return inner_.memory_info(); }
    LiveResources live_resources() const override { return inner_.live_resources(); }
    DeviceAddress reserve(std::size_t size, std::size_t alignment = 0,
                          DeviceAddress hint = 0) override {
        return inner_.reserve(size, alignment, hint);
    }
    void free_reservation(DeviceAddress address, std::size_t size) override {
        inner_.free_reservation(address, size);
    }
    PhysicalHandle create(std::size_t size, const PageOptions& options = {}) override {
        return inner_.create(size, options);
    }
    void release(PhysicalHandle handle) override { inner_.release(handle); }
    bool is_compressed(PhysicalHandle handle) const override {
        return inner_.is_compressed(handle);
    }
    void map(DeviceAddress address, std::size_t size, PhysicalHandle handle,
             std::size_t offset = 0) override {
        inner_.map(address, size, handle, offset);
    }
    void unmap(DeviceAddress address, std::size_t size) override {
        {
            std::unique_lock lock(mutex_);
            ++held_;
            changed_.notify_all();
            // The deadline keeps a failing test from hanging: the unmap then goes on.
            changed_.wait_until(lock, deadline_, [&] { return !closed_; });
            --held_;
        }
        inner_.unmap(address, size);
    }
    using Backend::set_access;
    void set_access(DeviceAddress address, std::size_t size,
                    std::span<const DeviceAccess> access) override {
        inner_.set_access(address, size, access);
    }
    UniqueFd export_fd(PhysicalHandle handle) override { return inner_.export_fd(handle); }
    PhysicalHandle import_fd(int fd, std::size_t size) override {
        return inner_.import_fd(fd, size);
    }
    void write(DeviceAddress destination, const void* source, std::size_t size) override {
        inner_.write(destination, source, size);
    }
    void read(void* destination, DeviceAddress source, std::size_t size) override {
        inner_.read(destination, source, size);
    }
    void synchronize() override { inner_.synchronize(); }

private:
    Backend& inner_;
    std::mutex mutex_;
    std::condition_variable changed_;
    bool closed_ = false;
    std::chrono::steady_clock::time_point deadline_{};
    int held_ = 0;
};

}  // namespace vtpage::test
