// A backend that wraps another and makes chosen calls fail, for tests and the stress tool: the
// Nth call of a kind, or each call of a kind with a probability. A failed call throws before it
// reaches the wrapped backend, so the wrapped state is exactly as if the driver had refused.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <random>
#include <string_view>
#include <vector>

#include "vtpage/backend/backend.hpp"

namespace vtpage {

enum class BackendOperation {
    reserve,
    free_reservation,
    create,
    release,
    map,
    unmap,
    set_access,
    export_fd,
    import_fd,
    write,
    read,
};
inline constexpr std::size_t backend_operation_count = 11;
std::string_view to_string(BackendOperation operation) noexcept;

struct FaultRule {
    BackendOperation operation = BackendOperation::create;
    Errc error = Errc::out_of_memory;
    std::uint64_t nth = 0;     // fail the nth call (1-based) of this kind; 0: not by count
    double probability = 0.0;  // fail each call of this kind with this probability
};

// Parses a comma-separated list such as "create:out_of_memory@3,map%0.01,set_access:busy%0.5":
// operation (a BackendOperation name; "export" and "import" stand for export_fd and
// import_fd), optional ":error" (an Errc name; out_of_memory by default), then "@N" (the Nth
// call) or "%P" (probability P in [0, 1]). invalid_argument names the bad part.
std::vector<FaultRule> parse_fault_rules(std::string_view spec);

class FaultInjectingBackend final : public Backend {
public:
    // Wraps a backend the caller keeps alive.
    explicit FaultInjectingBackend(Backend& inner, std::uint64_t seed = 1);
    // Wraps and owns a backend.
    explicit FaultInjectingBackend(std::unique_ptr<Backend> inner, std::uint64_t seed = 1);

    void add_rule(const FaultRule& rule);
    void add_rules(const std::vector<FaultRule>& rules);
    void clear_rules();
    // Calls seen and faults injected, per kind and in total.
    std::uint64_t calls(BackendOperation operation) const;
    std::uint64_t injected(BackendOperation operation) const;
    std::uint64_t injected_total() const;
    Backend& inner() noexcept { return *inner_; }

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

private:
    // Counts the call and throws if a rule says this one fails.
    void intercept(BackendOperation operation);

    std::unique_ptr<Backend> owned_;
    Backend* inner_;
    mutable std::mutex mutex_;
    std::vector<FaultRule> rules_;
    std::mt19937_64 random_;
    std::array<std::uint64_t, backend_operation_count> calls_{};
    std::array<std::uint64_t, backend_operation_count> injected_{};
};

}  // namespace vtpage
