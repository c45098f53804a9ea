// One worker thread of a stress run: draws pages from its pattern and, batch by batch,
// accesses them (commit and pin, stamp or check, unpin), prefetches them (request, commit from
// the queue) or evicts them, counting and timing everything in RunStats.
#pragma once

#include <memory>
#include <random>
#include <vector>

#include "op_quota.hpp"
#include "page_pattern.hpp"
#include "page_verifier.hpp"
#include "run_stats.hpp"
#include "stamp_book.hpp"
#include "vtpage/core/page_table.hpp"

namespace vtpage::stress {

// Out of 100 operations: the rest are accesses.
struct OperationMix {
    int prefetch = 12;
    int evict = 8;
};

struct WorkerSetup {
    PageTable* table = nullptr;
    PageVerifier* verifier = nullptr;
    StampBook* book = nullptr;
    RunStats* stats = nullptr;
    OpQuota* quota = nullptr;
    std::unique_ptr<PagePattern> pattern;
    std::uint64_t seed = 1;
    std::size_t batch = 4;
    OperationMix mix;
    bool faults_injected = false;     // out of memory is then an expected refusal
    std::uint64_t corrupt_every = 0;  // self-test: spoil a stamp every N accesses
};

class StressWorker {
public:
    explicit StressWorker(WorkerSetup setup);
    void run();

    // Stamps or checks pages that this thread has pinned, as an access does (the final sweep
    // uses it too); corrupt_first spoils the first page's stamp afterwards (self-test).
    static void verify_pinned(PageTable& table, PageVerifier& verifier, StampBook& book,
                              RunStats& stats, std::span<const PageMapping> mappings,
                              bool stamp_fresh_pages, bool corrupt_first = false);
    // Counts a refused operation, or an unexpected error.
    static void classify(RunStats& stats, const Error& error, bool faults_injected,
                         const char* operation);

private:
    std::vector<PageIndex> draw();
    void access();
    void prefetch();
    void evict();

    WorkerSetup setup_;
    std::mt19937_64 random_;
    std::uint64_t accesses_ = 0;
};

}  // namespace vtpage::stress
