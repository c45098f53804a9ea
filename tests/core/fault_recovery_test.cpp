// Faults injected at rates into every kind of backend call the engine makes (create, map, set
// access, unmap, release, export), while random operations run against a page table: after
// every operation the table must be consistent (check_invariants), no resident page may have
// lost its bytes or share its physical page, the callbacks must tell the same story as the
// table, and after teardown nothing may be left: no page, mapping, reservation or descriptor.
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "../support/backend_fixture.hpp"
#include "../support/leak_guard.hpp"
#include "vtpage/backend/fault_injecting_backend.hpp"
#include "vtpage/core/page_table.hpp"

namespace vtpage {
namespace {

struct FaultCase {
    const char* name;
    const char* spec;
};

// Test names and failure messages show the case's name, not its bytes.
void PrintTo(const FaultCase& fault, std::ostream* out) {
    *out << fault.name << " (" << fault.spec << ")";
}

const FaultCase fault_cases[] = {
    {"create_out_of_memory", "create:out_of_memory%0.15"},
    {"map_and_set_access", "map%0.05,set_access:backend_failure%0.08"},
    {"unmap_and_release", "unmap:backend_failure%0.08,release:backend_failure%0.1"},
    {"export", "export%0.2"},
    {"everything",
     "create:out_of_memory%0.05,map%0.03,set_access%0.03,unmap%0.05,release%0.05,export%0.05"},
};

// What an interop layer does: export each physical page once, when the pool creates it, and
// close the descriptor when the pool destroys the page.
class Exporter {
public:
    void attach(PageTableSettings& settings, Backend& backend) {
        settings.pool.on_created = [this, &backend](const PooledPage& page) {
            UniqueFd fd = backend.export_fd(page.handle);
            std::lock_guard lock(mutex_);
            if (!fds_.emplace(page.slot, std::move(fd)).second) {
                problems_.push_back("slot exported twice: " + std::to_string(page.slot));
            }
        };
        settings.pool.on_destroyed = [this](const PooledPage& page) {
            std::lock_guard lock(mutex_);
            if (fds_.erase(page.slot) == 0) {
                problems_.push_back("destroyed twice or never created: slot " +
                                    std::to_string(page.slot));
            }
        };
    }
    std::size_t open_descriptors() const {
        std::lock_guard lock(mutex_);
        return fds_.size();
    }
    std::vector<std::string> problems() const {
        std::lock_guard lock(mutex_);
        return problems_;
    }

private:
    mutable std::mutex mutex_;
    std::map<std::uint32_t, UniqueFd> fds_;
    std::vector<std::string> problems_;
};

// The callbacks' story: every commit of a page not resident, every eviction of a page that
// was, no physical page behind two virtual pages, generations only growing.
class Auditor {
public:
    void attach(PageTableSettings& settings) {
        settings.on_committed = [this](std::span<const PageMapping> mappings) {
            std::lock_guard lock(mutex_);
            for (const PageMapping& m : mappings) {
                if (resident_.count(m.page)) note("committed twice: page ", m.page);
                if (owner_of_slot_.count(m.physical.slot)) {
                    note("slot ", m.physical.slot, " backs pages ", owner_of_slot_[m.physical.slot],
                         " and ", m.page);
                }
                if (m.generation <= last_generation_[m.page])
                    note("generation went back: ", m.page);
                last_generation_[m.page] = m.generation;
                resident_[m.page] = m;
                owner_of_slot_[m.physical.slot] = m.page;
            }
        };
        settings.on_evicted = [this](std::span<const PageMapping> mappings) {
            std::lock_guard lock(mutex_);
            for (const PageMapping& m : mappings) {
                auto found = resident_.find(m.page);
                if (found == resident_.end() || found->second.generation != m.generation ||
                    !(found->second.physical == m.physical)) {
                    note("evicted but not resident as reported: page ", m.page);
                    continue;
                }
                owner_of_slot_.erase(m.physical.slot);
                resident_.erase(found);
            }
        };
    }
    // The table's view of these pages must be the callbacks' view.
    void expect_matches(const PageTable& table, PageIndex pages) const {
        std::lock_guard lock(mutex_);
        for (PageIndex page = 0; page < pages; ++page) {
            auto mapping = table.lookup(page);
            auto found = resident_.find(page);
            if (mapping.has_value() != (found != resident_.end())) {
                ADD_FAILURE() << "page " << page << " is " << (mapping ? "" : "not ")
                              << "resident, the callbacks say otherwise";
            } else if (mapping && (mapping->generation != found->second.generation ||
                                   !(mapping->physical == found->second.physical))) {
                ADD_FAILURE() << "page " << page << " differs from what the callbacks reported";
            }
        }
    }
    std::vector<std::string> problems() const {
        std::lock_guard lock(mutex_);
        return problems_;
    }

private:
    template <typename... Parts>
    void note(const Parts&... parts) {
        problems_.push_back(detail::concat(parts...));
    }
    mutable std::mutex mutex_;
    std::map<PageIndex, PageMapping> resident_;
    std::map<std::uint32_t, PageIndex> owner_of_slot_;
    std::map<PageIndex, std::uint64_t> last_generation_;
    std::vector<std::string> problems_;
};

// Each page carries (page, generation) in its first 16 bytes, written through the backend
// that is not faulty, so that checks never fail by injection.
struct Stamp {
    std::uint64_t page = 0;
    std::uint64_t generation = 0;
    friend bool operator==(const Stamp&, const Stamp&) = default;
};

bool expected_failure(const Error& error) {
    if (error.backend_code_name() == "VTPAGE_INJECTED_FAULT") return true;
    // Consequences of injected faults: a commit that found the device full and nothing more
    // to evict; pins or frames that fill the budget.
    return error.code() == Errc::out_of_memory || error.code() == Errc::budget_exhausted ||
           error.code() == Errc::busy;
}

class FaultRecoveryTest : public testing::TestWithParam<std::tuple<std::string, FaultCase>> {
protected:
    void SetUp() override {
        std::string reason;
        backend_ = test::try_make_backend(std::get<0>(GetParam()), reason);
        if (!backend_)
            GTEST_SKIP() << std::get<0>(GetParam()) << " backend unavailable: " << reason;
    }

    PageTableSettings settings(std::size_t budget_pages) const {
        PageTableSettings s;
        s.region_size = 1_GiB;
        s.budget_bytes = budget_pages * backend_->granularity().minimum;
        s.pool.release_threshold = (budget_pages + 2) * backend_->granularity().minimum;
        s.log = Log(silent_log());
        s.pool.log = s.log;
        return s;
    }

    std::unique_ptr<Backend> backend_;
};

TEST_P(FaultRecoveryTest, RandomOperationsLoseNothingAndLeakNothing) {
    Backend& backend = *backend_;
    const FaultCase fault = std::get<1>(GetParam());
    const bool export_pages = backend.capabilities().fd_handles;
    constexpr PageIndex pages = 24;
    constexpr std::size_t budget = 8;
    const int operations = test::under_thread_sanitizer ? 250 : 600;
    test::LeakGuard leaks(backend);
    Exporter exporter;
    Auditor auditor;
    std::uint64_t injected = 0;
    {
        FaultInjectingBackend faulty(backend, 11);
        auto s = settings(budget);
        if (export_pages) exporter.attach(s, faulty);
        auditor.attach(s);
        const LiveResources baseline = backend.live_resources();
        PageTable table(faulty, s);
        faulty.add_rules(parse_fault_rules(fault.spec));
        std::mt19937 random(5);
        std::map<PageIndex, Stamp> stamps;  // the stamp each page carries, by the last write
        std::multiset<PageIndex> pinned;
        auto some_pages = [&](std::size_t most) {
            std::vector<PageIndex> chosen;
            const std::size_t count = 1 + random() % most;
            for (std::size_t i = 0; i < count; ++i) chosen.push_back(random() % pages);
            return chosen;
        };
        for (int i = 0; i < operations; ++i) {
            const int kind = static_cast<int>(random() % 10);
            try {
                switch (kind) {
                    case 0:
                        table.request(some_pages(4));
                        break;
                    case 1:
                        table.commit_queued(1 + random() % 4);
                        break;
                    case 2:
                    case 3: {  // commit and pin, stamp the fresh ones, unpin
                        auto chosen = some_pages(3);
                        auto mappings = table.commit(chosen, /*pin=*/true);
                        for (const PageMapping& m : mappings) {
                            const Stamp stamp{m.page, m.generation};
                            auto found = stamps.find(m.page);
                            if (found == stamps.end() || !(found->second == stamp)) {
                                backend.write(table.data_address(m.page), &stamp, sizeof(stamp));
                                stamps[m.page] = stamp;
                            }
                        }
                        std::vector<PageIndex> unique;
                        for (const auto& m : mappings) unique.push_back(m.page);
                        table.unpin(unique);
                        break;
                    }
                    case 4: {  // hold a pin for a while (at most three pages)
                        if (pinned.size() >= 3) {
                            auto first = pinned.begin();
                            table.unpin(std::span(&*first, 1));
                            pinned.erase(first);
                        } else {
                            PageIndex page = random() % pages;
                            table.commit(std::span(&page, 1), /*pin=*/true);
                            pinned.insert(page);
                        }
                        break;
                    }
                    case 5: {  // evict resident pages nobody holds
                        std::vector<PageIndex> victims;
                        for (PageIndex page : some_pages(3)) {
                            if (table.is_resident(page) && !pinned.count(page) &&
                                std::find(victims.begin(), victims.end(), page) == victims.end()) {
                                victims.push_back(page);
                            }
                        }
                        table.evict(victims);
                        break;
                    }
                    case 6:
                        table.set_budget((budget / 2 + random() % budget) * table.page_size());
                        break;
                    case 7: {  // a frame: begin, and complete the one before
                        FrameId frame = table.begin_frame();
                        table.complete_frame(frame - 1);
                        break;
                    }
                    case 8:
                        table.cancel(some_pages(4));
                        break;
                    case 9:
                        table.pool().trim_to((random() % budget) * table.page_size());
                        break;
                }
            } catch (const Error& error) {
                if (!expected_failure(error))
                    ADD_FAILURE() << "operation " << kind << ": " << error.what();
            }
            try {
                table.check_invariants();
            } catch (const Error& error) {
                FAIL() << "after operation " << i << " (kind " << kind << "): " << error.what();
            }
            // No resident page lost its bytes, whatever failed.
            for (const auto& [page, stamp] : stamps) {
                auto mapping = table.lookup(page);
                if (!mapping || mapping->generation != stamp.generation) continue;
                Stamp seen;
                backend.read(&seen, table.data_address(page), sizeof(seen));
                ASSERT_EQ(seen, stamp) << "page " << page << " after operation " << i;
            }
            auditor.expect_matches(table, pages);
        }
        injected = faulty.injected_total();
        faulty.clear_rules();
        // Without faults the table works as new.
        table.complete_frame(table.current_frame());
        while (!pinned.empty()) {
            table.unpin(std::span(&*pinned.begin(), 1));
            pinned.erase(pinned.begin());
        }
        table.set_budget(budget * table.page_size());
        std::vector<PageIndex> all(budget);
        std::iota(all.begin(), all.end(), PageIndex(pages));
        EXPECT_EQ(table.commit(all).size(), budget);
        table.check_invariants(baseline);
        table.shutdown();
        table.check_invariants(baseline);
    }
    EXPECT_GT(injected, 0u) << "no fault was injected: the test tests nothing";
    EXPECT_EQ(exporter.open_descriptors(), 0u);
    for (const auto& problem : exporter.problems()) ADD_FAILURE() << problem;
    for (const auto& problem : auditor.problems()) ADD_FAILURE() << problem;
    leaks.expect_clean();
}

// The same under threads (and ThreadSanitizer in CI): each thread stamps only its own pages,
// every thread requests, commits, evicts and trims everywhere.
TEST_P(FaultRecoveryTest, ThreadsUnderFaultsLoseNothingAndLeakNothing) {
    Backend& backend = *backend_;
    const FaultCase fault = std::get<1>(GetParam());
    const bool export_pages = backend.capabilities().fd_handles;
    constexpr int threads = 4;
    constexpr PageIndex pages = 48;
    const int operations = test::under_thread_sanitizer ? 100 : 300;
    test::LeakGuard leaks(backend);
    Exporter exporter;
    Auditor auditor;
    std::atomic<int> integrity_errors{0};
    {
        FaultInjectingBackend faulty(backend, 3);
        auto s = settings(16);
        if (export_pages) exporter.attach(s, faulty);
        auditor.attach(s);
        const LiveResources baseline = backend.live_resources();
        PageTable table(faulty, s);
        faulty.add_rules(parse_fault_rules(fault.spec));
        std::vector<std::thread> workers;
        for (int t = 0; t < threads; ++t) {
            workers.emplace_back([&, t] {
                std::mt19937 random(100 + t);
                std::map<PageIndex, Stamp> stamps;
                for (int i = 0; i < operations; ++i) {
                    const PageIndex page = random() % pages;
                    const PageIndex own = page - page % threads + t;
                    try {
                        switch (random() % 6) {
                            case 0:
                                table.request(std::span(&page, 1));
                                break;
                            case 1:
                                table.commit_queued(1 + random() % 4);
                                break;
                            case 2:
                                if (table.is_resident(page)) table.evict(std::span(&page, 1));
                                break;
                            default: {
                                auto mapping = table.commit(std::span(&own, 1), true).front();
                                const Stamp stamp{own, mapping.generation};
                                const DeviceAddress address = table.data_address(own);
                                auto found = stamps.find(own);
                                if (found != stamps.end() &&
                                    found->second.generation == stamp.generation) {
                                    Stamp seen;
                                    backend.read(&seen, address, sizeof(seen));
                                    if (!(seen == stamp)) ++integrity_errors;
                                } else {
                                    backend.write(address, &stamp, sizeof(stamp));
                                    stamps[own] = stamp;
                                }
                                table.unpin(std::span(&own, 1));
                            }
                        }
                    } catch (const Error& error) {
                        // Another thread holds the page, or it left meanwhile.
                        if (!expected_failure(error) && error.code() != Errc::not_mapped) {
                            ADD_FAILURE() << error.what();
                        }
                    }
                }
            });
        }
        for (auto& worker : workers) worker.join();
        EXPECT_GT(faulty.injected_total(), 0u) << "no fault was injected: the test tests nothing";
        faulty.clear_rules();
        table.check_invariants(baseline);
        auditor.expect_matches(table, pages);
        table.shutdown();
        table.check_invariants(baseline);
    }
    EXPECT_EQ(integrity_errors.load(), 0);
    EXPECT_EQ(exporter.open_descriptors(), 0u);
    for (const auto& problem : exporter.problems()) ADD_FAILURE() << problem;
    for (const auto& problem : auditor.problems()) ADD_FAILURE() << problem;
    leaks.expect_clean();
}

INSTANTIATE_TEST_SUITE_P(Faults, FaultRecoveryTest,
                         testing::Combine(testing::ValuesIn(test::all_backend_names()),
                                          testing::ValuesIn(fault_cases)),
                         [](const auto& param_info) {
                             return std::get<0>(param_info.param) + "_" +
                                    std::get<1>(param_info.param).name;
                         });

}  // namespace
}  // namespace vtpage
