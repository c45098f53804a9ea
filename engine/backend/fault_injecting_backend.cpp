#include "vtpage/backend/fault_injecting_backend.hpp"

#include <charconv>
#include <string>

namespace vtpage {

namespace {

constexpr std::array<BackendOperation, backend_operation_count> all_operations = {
    BackendOperation::reserve,    BackendOperation::free_reservation,
    BackendOperation::create,     BackendOperation::release,
    BackendOperation::map,        BackendOperation::unmap,
    BackendOperation::set_access, BackendOperation::export_fd,
    BackendOperation::import_fd,  BackendOperation::write,
    BackendOperation::read,
};

constexpr std::array<Errc, 15> all_errors = {
    Errc::invalid_argument, Errc::out_of_range,
    Errc::out_of_memory,    Errc::not_supported,
    Errc::not_mapped,       Errc::already_mapped,
    Errc::partial_unmap,    Errc::invalid_handle,
    Errc::access_denied,    Errc::busy,
    Errc::budget_exhausted, Errc::io_error,
    Errc::corrupt_data,     Errc::device_unavailable,
    Errc::backend_failure,
};

std::size_t index_of(BackendOperation operation) { return static_cast<std::size_t>(operation); }

[[noreturn]] void bad_spec(std::string_view part, const std::string& why) {
    throw Error(Errc::invalid_argument, "parse_fault_rules", why, std::string(part));
}

FaultRule parse_rule(std::string_view part) {
    const auto trigger = part.find_first_of("@%");
    if (trigger == std::string_view::npos) {
        bad_spec(part, "a rule needs @N (the Nth call) or %P (a probability)");
    }
    std::string_view head = part.substr(0, trigger);
    std::string_view amount = part.substr(trigger + 1);
    std::string_view error_name;
    if (auto colon = head.find(':'); colon != std::string_view::npos) {
        error_name = head.substr(colon + 1);
        head = head.substr(0, colon);
    }
    FaultRule rule;
    bool known = false;
    // Short names for the two fd calls, as people say them.
    if (head == "export") head = "export_fd";
    if (head == "import") head = "import_fd";
    for (BackendOperation operation : all_operations) {
        if (to_string(operation) == head) {
            rule.operation = operation;
            known = true;
        }
    }
    if (!known) bad_spec(part, "unknown operation '" + std::string(head) + "'");
    if (!error_name.empty()) {
        known = false;
        for (Errc error : all_errors) {
            if (to_string(error) == error_name) {
                rule.error = error;
                known = true;
            }
        }
        if (!known) bad_spec(part, "unknown error '" + std::string(error_name) + "'");
    }
    if (part[trigger] == '@') {
        auto [end, status] =
            std::from_chars(amount.data(), amount.data() + amount.size(), rule.nth);
        if (status != std::errc() || end != amount.data() + amount.size() || rule.nth == 0) {
            bad_spec(part, "@ needs a call number of 1 or more");
        }
    } else {
        std::string text(amount);
        std::size_t used = 0;
        try {
            rule.probability = std::stod(text, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != text.size() || text.empty() || !(rule.probability >= 0.0) ||
            rule.probability > 1.0) {
            bad_spec(part, "% needs a probability between 0 and 1");
        }
    }
    return rule;
}

}  // namespace

std::string_view to_string(BackendOperation operation) noexcept {
    switch (operation) {
        case BackendOperation::reserve:
            return "reserve";
        case BackendOperation::free_reservation:
            return "free_reservation";
        case BackendOperation::create:
            return "create";
        case BackendOperation::release:
            return "release";
        case BackendOperation::map:
            return "map";
        case BackendOperation::unmap:
            return "unmap";
        case BackendOperation::set_access:
            return "set_access";
        case BackendOperation::export_fd:
            return "export_fd";
        case BackendOperation::import_fd:
            return "import_fd";
        case BackendOperation::write:
            return "write";
        case BackendOperation::read:
            return "read";
    }
    return "?";
}

std::vector<FaultRule> parse_fault_rules(std::string_view spec) {
    std::vector<FaultRule> rules;
    while (!spec.empty()) {
        auto comma = spec.find(',');
        std::string_view part = spec.substr(0, comma);
        if (part.empty()) bad_spec(spec, "empty rule");
        rules.push_back(parse_rule(part));
        if (comma == std::string_view::npos) break;
        spec.remove_prefix(comma + 1);
        if (spec.empty()) bad_spec(part, "a trailing comma");
    }
    return rules;
}

FaultInjectingBackend::FaultInjectingBackend(Backend& inner, std::uint64_t seed)
    : inner_(&inner), random_(seed) {}

FaultInjectingBackend::FaultInjectingBackend(std::unique_ptr<Backend> inner, std::uint64_t seed)
    : owned_(std::move(inner)), inner_(owned_.get()), random_(seed) {
    if (!inner_) {
        throw Error(Errc::invalid_argument, "FaultInjectingBackend", "no backend to wrap");
    }
}

void FaultInjectingBackend::add_rule(const FaultRule& rule) {
    std::lock_guard lock(mutex_);
    rules_.push_back(rule);
}

void FaultInjectingBackend::add_rules(const std::vector<FaultRule>& rules) {
    for (const FaultRule& rule : rules) add_rule(rule);
}

void FaultInjectingBackend::clear_rules() {
    std::lock_guard lock(mutex_);
    rules_.clear();
}

std::uint64_t FaultInjectingBackend::calls(BackendOperation operation) const {
    std::lock_guard lock(mutex_);
    return calls_[index_of(operation)];
}

std::uint64_t FaultInjectingBackend::injected(BackendOperation operation) const {
    std::lock_guard lock(mutex_);
    return injected_[index_of(operation)];
}

std::uint64_t FaultInjectingBackend::injected_total() const {
    std::lock_guard lock(mutex_);
    std::uint64_t total = 0;
    for (auto count : injected_) total += count;
    return total;
}

void FaultInjectingBackend::intercept(BackendOperation operation) {
    std::lock_guard lock(mutex_);
    const std::uint64_t call = ++calls_[index_of(operation)];
    for (const FaultRule& rule : rules_) {
        if (rule.operation != operation) continue;
        bool fail = rule.nth == call;
        if (!fail && rule.probability > 0.0) {
            fail = std::uniform_real_distribution<double>(0.0, 1.0)(random_) < rule.probability;
        }
        if (fail) {
            ++injected_[index_of(operation)];
            throw Error(rule.error, std::string(to_string(operation)),
                        detail::concat("injected fault on call ", call), {}, -1,
                        "VTPAGE_INJECTED_FAULT");
        }
    }
}

const Capabilities& FaultInjectingBackend::capabilities() const noexcept {
    return inner_->capabilities();
}
Granularity FaultInjectingBackend::granularity(const PageOptions& options) const {
    return inner_->granularity(options);
}
MemoryInfo FaultInjectingBackend::memory_info() const { return inner_->memory_info(); }
LiveResources FaultInjectingBackend::live_resources() const { return inner_->live_resources(); }

DeviceAddress FaultInjectingBackend::reserve(std::size_t size, std::size_t alignment,
                                             DeviceAddress hint) {
    intercept(BackendOperation::reserve);
    return inner_->reserve(size, alignment, hint);
}
void FaultInjectingBackend::free_reservation(DeviceAddress address, std::size_t size) {
    intercept(BackendOperation::free_reservation);
    inner_->free_reservation(address, size);
}
PhysicalHandle FaultInjectingBackend::create(std::size_t size, const PageOptions& options) {
    intercept(BackendOperation::create);
    return inner_->create(size, options);
}
void FaultInjectingBackend::release(PhysicalHandle handle) {
    intercept(BackendOperation::release);
    inner_->release(handle);
}
bool FaultInjectingBackend::is_compressed(PhysicalHandle handle) const {
    return inner_->is_compressed(handle);
}
void FaultInjectingBackend::map(DeviceAddress address, std::size_t size, PhysicalHandle handle,
                                std::size_t offset) {
    intercept(BackendOperation::map);
    inner_->map(address, size, handle, offset);
}
void FaultInjectingBackend::unmap(DeviceAddress address, std::size_t size) {
    intercept(BackendOperation::unmap);
    inner_->unmap(address, size);
}
void FaultInjectingBackend::set_access(DeviceAddress address, std::size_t size,
                                       std::span<const DeviceAccess> access) {
    intercept(BackendOperation::set_access);
    inner_->set_access(address, size, access);
}
UniqueFd FaultInjectingBackend::export_fd(PhysicalHandle handle) {
    intercept(BackendOperation::export_fd);
    return inner_->export_fd(handle);
}
PhysicalHandle FaultInjectingBackend::import_fd(int fd, std::size_t size) {
    intercept(BackendOperation::import_fd);
    return inner_->import_fd(fd, size);
}
void FaultInjectingBackend::write(DeviceAddress destination, const void* source, std::size_t size) {
    intercept(BackendOperation::write);
    inner_->write(destination, source, size);
}
void FaultInjectingBackend::read(void* destination, DeviceAddress source, std::size_t size) {
    intercept(BackendOperation::read);
    inner_->read(destination, source, size);
}
void FaultInjectingBackend::synchronize() { inner_->synchronize(); }

}  // namespace vtpage
