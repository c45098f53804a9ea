// What an interop layer does with the pool: export every physical page once, when it is
// created, keep the descriptor while the page lives, close it when the pool destroys the page.
// Under injected export faults the pool must undo the creation; at the end no descriptor may
// be left open.
#pragma once

#include <map>
#include <mutex>

#include "run_stats.hpp"
#include "vtpage/core/page_table.hpp"

namespace vtpage::stress {

class PageExporter {
public:
    PageExporter(Backend& backend, RunStats& stats) : backend_(backend), stats_(stats) {}
    void attach(PagePoolSettings& settings);
    std::size_t open_descriptors() const;
    std::uint64_t exports() const;

private:
    Backend& backend_;
    RunStats& stats_;
    mutable std::mutex mutex_;
    std::map<std::uint32_t, UniqueFd> fds_;  // by slot
    std::uint64_t exports_ = 0;
};

}  // namespace vtpage::stress
