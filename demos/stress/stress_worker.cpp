#include "stress_worker.hpp"

#include <algorithm>

namespace vtpage::stress {

namespace {

using Clock = std::chrono::steady_clock;

// Unpins on the way out, whatever happens in between: a pinned page can never be evicted.
class PinRelease {
public:
    PinRelease(PageTable& table, std::vector<PageIndex> pages, RunStats& stats)
        : table_(table), pages_(std::move(pages)), stats_(stats) {}
    ~PinRelease() {
        try {
            table_.unpin(pages_);
        } catch (const Error& error) {
            stats_.unexpected_error(error.what());
        }
    }
    PinRelease(const PinRelease&) = delete;
    PinRelease& operator=(const PinRelease&) = delete;

private:
    PageTable& table_;
    std::vector<PageIndex> pages_;
    RunStats& stats_;
};

}  // namespace

StressWorker::StressWorker(WorkerSetup setup) : setup_(std::move(setup)), random_(setup_.seed) {}

void StressWorker::run() {
    while (setup_.quota->running()) {
        const int dice = static_cast<int>(random_() % 100);
        if (dice < setup_.mix.prefetch) {
            prefetch();
        } else if (dice < setup_.mix.prefetch + setup_.mix.evict) {
            evict();
        } else {
            access();
        }
    }
}

std::vector<PageIndex> StressWorker::draw() {
    std::vector<PageIndex> pages;
    pages.reserve(setup_.batch);
    // Distinct pages; a pattern with fewer pages than a batch gives a smaller batch.
    for (std::size_t tries = 0; pages.size() < setup_.batch && tries < 4 * setup_.batch; ++tries) {
        const PageIndex page = setup_.pattern->next(random_);
        if (std::find(pages.begin(), pages.end(), page) == pages.end()) pages.push_back(page);
    }
    return pages;
}

void StressWorker::classify(RunStats& stats, const Error& error, bool faults_injected,
                            const char* operation) {
    if (error.backend_code_name() == "VTPAGE_INJECTED_FAULT") {
        stats.refused(Refusal::injected_fault);
        return;
    }
    switch (error.code()) {
        case Errc::busy:
            stats.refused(Refusal::busy);
            return;
        case Errc::budget_exhausted:
            stats.refused(Refusal::budget);
            return;
        case Errc::not_mapped:
            stats.refused(Refusal::not_resident);
            return;
        case Errc::out_of_memory:
            // With injected create failures, a commit may find "the device full" and nothing
            // more to evict.
            if (faults_injected) {
                stats.refused(Refusal::injected_fault);
                return;
            }
            break;
        default:
            break;
    }
    stats.unexpected_error(std::string(operation) + ": " + error.what());
}

void StressWorker::verify_pinned(PageTable& table, PageVerifier& verifier, StampBook& book,
                                 RunStats& stats, std::span<const PageMapping> mappings,
                                 bool stamp_fresh_pages, bool corrupt_first) {
    std::vector<PageIndex> pages;
    for (const PageMapping& m : mappings) pages.push_back(m.page);
    StampBook::Hold hold(book, pages);
    std::vector<StampJob> jobs;
    jobs.reserve(mappings.size());
    for (const PageMapping& m : mappings) {
        const StampBook::Entry* entry = hold.find(m.page);
        const std::uint64_t address = table.data_address(m.page);
        if (entry && entry->generation == m.generation) {
            if (entry->slot != m.physical.slot) {
                stats.integrity_error(detail::concat("page ", m.page, " generation ", m.generation,
                                                     " moved from physical slot ", entry->slot,
                                                     " to ", m.physical.slot, " while resident"));
            }
            jobs.push_back({address, m.page, m.generation, 0, 0});
        } else if (entry && entry->generation > m.generation) {
            stats.integrity_error(detail::concat("page ", m.page, " is at generation ",
                                                 m.generation, ", stamped at ", entry->generation,
                                                 " before"));
        } else if (stamp_fresh_pages) {
            jobs.push_back({address, m.page, m.generation, 1, 0});
        }
    }
    StampMismatch first{};
    std::size_t wrong = 0;
    {
        LatencyHistogram::Timer timer(stats.latency(OpKind::verify));
        wrong = verifier.run(jobs.data(), jobs.size(), first);
    }
    std::uint64_t checked = 0;
    for (const StampJob& job : jobs) {
        if (job.write) {
            const auto it = std::find_if(mappings.begin(), mappings.end(),
                                         [&](const PageMapping& m) { return m.page == job.page; });
            hold.set(job.page, {job.generation, it->physical.slot});
            ++stats.stamped;
        } else {
            ++checked;
        }
    }
    stats.verified += checked;
    if (wrong > 0) {
        stats.integrity_error(
            detail::concat(wrong, " page(s) lost their stamps; first: page ", first.page,
                           " generation ", first.generation, " holds page ", first.found.page,
                           " generation ", first.found.generation, " offset ", first.found.offset));
        stats.integrity_errors += wrong - 1;
    }
    if (corrupt_first && !mappings.empty()) {
        // Under the book's hold, as any write of the page's bytes. The book still says this
        // generation is stamped: the next check must fail.
        verifier.corrupt(table.data_address(mappings.front().page));
    }
}

void StressWorker::access() {
    std::vector<PageIndex> pages = draw();
    const auto start = Clock::now();
    std::vector<PageMapping> mappings;
    try {
        LatencyHistogram::Timer timer(setup_.stats->latency(OpKind::commit));
        mappings = setup_.table->commit(pages, /*pin=*/true);
    } catch (const Error& error) {
        classify(*setup_.stats, error, setup_.faults_injected, "commit");
        return;
    }
    {
        PinRelease unpin(*setup_.table, pages, *setup_.stats);
        try {
            ++accesses_;
            const bool corrupt = setup_.corrupt_every && accesses_ % setup_.corrupt_every == 0;
            verify_pinned(*setup_.table, *setup_.verifier, *setup_.book, *setup_.stats, mappings,
                          /*stamp_fresh_pages=*/true, corrupt);
        } catch (const Error& error) {
            setup_.stats->unexpected_error(std::string("verify: ") + error.what());
        }
    }
    setup_.stats->latency(OpKind::access).record(Clock::now() - start);
    setup_.stats->accessed += pages.size();
    setup_.stats->ops += pages.size();
    setup_.quota->add(pages.size());
}

void StressWorker::prefetch() {
    std::vector<PageIndex> pages = draw();
    // The pages it did something with: found resident, or committed from the queue (pages
    // only queued, behind a full or fenced budget, do not count).
    std::size_t done = 0;
    try {
        LatencyHistogram::Timer timer(setup_.stats->latency(OpKind::prefetch));
        done = setup_.table->request(pages).resident;
        done += setup_.table->commit_queued(setup_.batch).size();
    } catch (const Error& error) {
        classify(*setup_.stats, error, setup_.faults_injected, "prefetch");
        return;
    }
    setup_.stats->prefetched += done;
    setup_.stats->ops += done;
    setup_.quota->add(done);
}

void StressWorker::evict() {
    std::vector<PageIndex> pages;
    for (PageIndex page : draw()) {
        if (setup_.table->is_resident(page)) pages.push_back(page);
    }
    if (pages.empty()) return;
    try {
        LatencyHistogram::Timer timer(setup_.stats->latency(OpKind::evict));
        setup_.table->evict(pages);
    } catch (const Error& error) {
        // Another thread pinned or evicted one of them meanwhile.
        classify(*setup_.stats, error, setup_.faults_injected, "evict");
        return;
    }
    setup_.stats->evicted += pages.size();
    setup_.stats->ops += pages.size();
    setup_.quota->add(pages.size());
}

}  // namespace vtpage::stress
