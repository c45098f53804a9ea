#include "vtpage/backend/leak_check.hpp"

#include <algorithm>
#include <sstream>
#include <thread>

namespace vtpage {

namespace {

std::size_t grown(std::size_t before, std::size_t after) {
    return after > before ? after - before : 0;
}

}  // namespace

std::size_t LeakReport::leaked_bytes() const noexcept {
    const std::size_t physical =
        std::max(grown(live_before.page_bytes, live_after.page_bytes), device_bytes_lost);
    const std::size_t address_space =
        std::max({grown(live_before.reserved_bytes, live_after.reserved_bytes),
                  grown(live_before.mapped_bytes, live_after.mapped_bytes), process.mapped_bytes});
    return physical + address_space;
}

bool LeakReport::clean() const noexcept {
    return process.empty() && leaked_bytes() == 0 && live_after == live_before;
}

std::string LeakReport::describe() const {
    if (clean()) return "no leaks";
    std::ostringstream out;
    out << leaked_bytes() << " bytes";
    if (!(live_after == live_before)) {
        out << "; the backend holds " << live_after.pages << " pages, " << live_after.mappings
            << " mappings, " << live_after.reservations << " reservations (baseline "
            << live_before.pages << ", " << live_before.mappings << ", " << live_before.reservations
            << ")";
    }
    if (device_bytes_lost > 0) {
        out << "; device free memory is " << device_bytes_lost << " bytes below the baseline";
    }
    if (!process.empty()) out << "; " << vtpage::describe(process);
    if (unattributed_mapped_bytes > 0) {
        out << " (and " << unattributed_mapped_bytes
            << " bytes of other new mappings: heaps, arenas, stacks)";
    }
    return out.str();
}

LeakCheck::LeakCheck(Backend& backend, LeakCheckSettings settings)
    : backend_(backend), settings_(settings) {
    rebaseline();
}

void LeakCheck::watch(DeviceAddress address, std::size_t size) {
    watched_.emplace_back(address, size);
}

bool LeakCheck::counts(const MappedRange& mapping) const {
    for (const auto& [address, size] : watched_) {
        if (mapping.start < address + size && address < mapping.end) return true;
    }
    if (mapping.path.find("vtpage") != std::string::npos) return true;
    const bool inaccessible = mapping.permissions.compare(0, 3, "---") == 0;
    return mapping.path.empty() && inaccessible && mapping.size() >= settings_.reservation_floor;
}

void LeakCheck::rebaseline() {
    device_ = settings_.device_memory && backend_.capabilities().gpu;
    mappings_ = settings_.mappings && (settings_.mappings_on_gpu || !backend_.capabilities().gpu);
    if (settings_.descriptors || mappings_) {
        process_before_ = snapshot_process_resources();
    }
    live_before_ = backend_.live_resources();
    if (device_) {
        backend_.synchronize();
        device_before_ = backend_.memory_info();
    }
}

LeakReport LeakCheck::check() const {
    LeakReport report;
    report.live_before = live_before_;
    report.live_after = backend_.live_resources();
    if (device_) {
        report.device_checked = true;
        report.device_before = device_before_;
        backend_.synchronize();
        const auto deadline = std::chrono::steady_clock::now() + settings_.device_settle_time;
        for (;;) {
            report.device_after = backend_.memory_info();
            report.device_bytes_lost = grown(report.device_after.free, device_before_.free);
            if (report.device_bytes_lost <= settings_.device_memory_tolerance ||
                std::chrono::steady_clock::now() >= deadline) {
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        if (report.device_bytes_lost <= settings_.device_memory_tolerance) {
            report.device_bytes_lost = 0;
        }
    }
    if (settings_.descriptors || mappings_) {
        ProcessResources now = snapshot_process_resources();
        ProcessResourceGrowth growth = growth_between(process_before_, now);
        if (settings_.descriptors) report.process.descriptors = std::move(growth.descriptors);
        if (mappings_) {
            for (MappedRange& mapping : growth.mappings) {
                if (counts(mapping)) {
                    report.process.mapped_bytes += mapping.size();
                    report.process.mappings.push_back(std::move(mapping));
                } else {
                    report.unattributed_mapped_bytes += mapping.size();
                }
            }
        }
    }
    return report;
}

}  // namespace vtpage
