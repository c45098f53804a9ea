// Explores schedules of the streamer on the host backend: for each seed a SchedulePerturber
// yields and sleeps the library's threads at its test points (every ranked mutex, event
// delivery, callbacks, frames, the page loader) while a workload drives every route (packed
// tails, packed coarse levels of two shapes, tiles of textures streamed by tile in mip 0 taking
// turns in shared places, pages read from baked files of both versions
// through the fault-injecting file layer (a page of version 4 decoded in parts by several decode
// threads at once; with io_uring, cached reads copied by its page cache copiers), fills that fail,
// evicting ahead, a lowered budget, requests held for a view over budget that asks again for what
// it gave up (refault holds), requests from three threads, frames completed late, twice or not at
// all, slow callbacks, destruction mid-stream). The events and the frame calls go to one log, and
// the reuse rule is checked from the log alone with the library's frame model (frame N is complete
// once complete_frame(M >= N) returned):
//   (a) no physical range is handed to another page while a frame begun when the old page was
//       visible (between its ready and its evicted) is incomplete;
//   (b) each page's events alternate: committed or ready, then evicted; no double ready, no
//       evicted of a page neither committed nor ready, no ready of a page without its commit;
//   (c) no two ready pages share bytes;
//   (d) at quiescence the view built from the callbacks is ready_page() for every page.
//
// Seeds: tests/streaming/schedule_seeds.txt is replayed first, then fresh seeds for
// VTPAGE_EXPLORER_SECONDS (default 20, a quarter under sanitizers); VTPAGE_EXPLORER_SEED=N runs
// only seed N. The defect switches (VTPAGE_TEST_SWITCH in the library) bring back known defects;
// each must be caught within the listed seeds and twelve more (twenty under sanitizers), or
// else further fresh seeds for up to 150 s (300 s under sanitizers). What the explorer cannot
// reach:
// - the frame check of the page table's out-of-memory retry (run_batch evicting more pages when
//   the device is full below the budget must not reuse them once a frame has begun since the
//   batch was planned): one seed in four runs on a device smaller than the budget, so the retry
//   runs, but a frame must begin in the microseconds between a batch's plan (no frame in flight)
//   and its failed allocation; with that check turned off the explorer caught it in about one
//   limited-memory seed in ten, too rarely to assert;
// - fences of device fills (on_fills_enqueued, a ready page's fence): the host backend waits
//   for its fills, so every fence is 0;
// - a frame that reads an evicted page through an indirection table the app uploaded before
//   begin_frame returned: the log knows a frame from the moment begin_frame returned, so a
//   frame is taken to see a page only if it began after the page's ready was delivered (checks
//   that err towards missing a violation, never towards a false one; completions are logged
//   before complete_frame is called for the same reason).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "../bake/under_sanitizer.hpp"
#include "../support/backend_fixture.hpp"
#include "../support/schedule_perturber.hpp"
#include "../support/test_point_handler.hpp"
#include "streaming/io/fault_injecting_file_layer.hpp"
#include "streaming_test_support.hpp"
#include "vtpage/streaming/sources/baked_texture.hpp"
#include "vtpage/streaming/sources/tile_level_source.hpp"
#include "vtpage/streaming/streamer/streamer.hpp"

namespace vtpage::vt {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

using test::under_sanitizer;

// ---- the log ----

enum class EntryKind { committed, ready, evicted, begun, completing };

struct Entry {
    EntryKind kind;
    StreamedPage page;  // committed, ready, evicted
    FrameId frame = 0;  // begun: the frame begin_frame returned; completing: the argument
};

class EventLog {
public:
    void pages(EntryKind kind, std::span<const StreamedPage> pages) {
        {
            std::lock_guard lock(mutex_);
            for (const StreamedPage& page : pages) entries_.push_back({kind, page, 0});
            page_events_ += pages.size();
        }
        grew_.notify_all();
    }
    // Waits until `count` more page events came, or `limit` passed: the workload's phases
    // move on with the streamer's progress, as fast or slow as the build runs it.
    void wait_for_events(std::size_t count, std::chrono::milliseconds limit) {
        std::unique_lock lock(mutex_);
        const std::size_t target = page_events_ + count;
        grew_.wait_for(lock, limit, [&] { return page_events_ >= target; });
    }
    void frame(EntryKind kind, FrameId frame) {
        std::lock_guard lock(mutex_);
        entries_.push_back({kind, {}, frame});
    }
    std::vector<Entry> take() {
        std::lock_guard lock(mutex_);
        return std::move(entries_);
    }

private:
    std::mutex mutex_;
    std::condition_variable grew_;
    std::vector<Entry> entries_;
    std::size_t page_events_ = 0;
};

// ---- the checks ----

// The bytes a page holds in its physical page: one span, or a packed level's rows (the tiles
// between them belong to other levels).
struct Range {
    std::uint32_t slot = 0;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> spans;  // [begin, end)
    bool overlaps(const Range& other) const {
        if (slot != other.slot) return false;
        for (const auto& [b, e] : spans) {
            for (const auto& [ob, oe] : other.spans) {
                if (b < oe && ob < e) return true;
            }
        }
        return false;
    }
    std::string text() const {
        std::string t = "slot " + std::to_string(slot);
        for (const auto& [b, e] : spans)
            t += " [" + std::to_string(b) + ", " + std::to_string(e) + ")";
        return t;
    }
};

// What the checks need of the workload: the bytes an own tail page holds (other textures'
// tails may follow them in that page) and the rows of the packable levels.
struct PageFacts {
    std::map<PageIndex, std::uint64_t> own_tail_bytes;  // tail page -> its tiles' bytes
    struct Rows {
        std::uint64_t row = 0, pitch = 0, rows = 0;
    };
    std::map<PageIndex, Rows> level_rows;
};

Range range_of(const StreamedPage& page, const PageFacts& facts) {
    Range range{page.physical.slot, {}};
    if (page.packed()) {
        if (auto level = facts.level_rows.find(page.page); level != facts.level_rows.end()) {
            const PageFacts::Rows& r = level->second;
            for (std::uint64_t y = 0; y < r.rows; ++y) {
                range.spans.push_back(
                    {page.offset + y * r.pitch, page.offset + y * r.pitch + r.row});
            }
            return range;
        }
    } else if (auto tail = facts.own_tail_bytes.find(page.page);
               tail != facts.own_tail_bytes.end()) {
        range.spans.push_back({0, tail->second});
        return range;
    }
    range.spans.push_back({page.offset, page.offset + page.bytes});
    return range;
}

struct Violations {
    std::vector<std::string> found;
    void add(std::string text) {
        if (found.size() < 8) found.push_back(std::move(text));
        ++count;
    }
    std::size_t count = 0;
};

struct PageView {
    bool committed = false;
    std::uint64_t committed_generation = 0;
    bool ready = false;
    StreamedPage shown;
    FrameId current_at_ready = 0;  // frames begun after it was shown may read it
};

// Replays the log; `view` is left as the app's view of the ready pages.
Violations check_log(const std::vector<Entry>& log, const PageFacts& facts,
                     std::map<PageIndex, PageView>& view) {
    Violations v;
    FrameId current = 0, completed = 0;
    struct Freed {
        Range range;
        FrameId fence;
        PageIndex page;
    };
    std::vector<Freed> freed;  // ranges that frames in flight may still read
    const auto check_reuse = [&](const StreamedPage& page, const char* what) {
        const Range range = range_of(page, facts);
        std::erase_if(freed, [&](const Freed& f) { return f.fence <= completed; });
        for (const Freed& f : freed) {
            if (f.range.overlaps(range)) {
                std::ostringstream text;
                text << "(a) page " << page.page << " " << what << " in " << range.text()
                     << " that page " << f.page << " left while frame " << f.fence
                     << " (which may read it) is incomplete"
                     << " (completed " << completed << ")";
                v.add(text.str());
                return;
            }
        }
    };
    for (const Entry& e : log) {
        const StreamedPage& page = e.page;
        switch (e.kind) {
            case EntryKind::begun:
                current = std::max(current, e.frame);
                break;
            case EntryKind::completing:
                completed = std::max(completed, e.frame);
                break;
            case EntryKind::committed: {
                PageView& pv = view[page.page];
                if (pv.committed || pv.ready) {
                    v.add("(b) page " + std::to_string(page.page) + " committed twice");
                }
                pv.committed = true;
                pv.committed_generation = page.generation;
                check_reuse(page, "committed");
                break;
            }
            case EntryKind::ready: {
                PageView& pv = view[page.page];
                if (pv.ready) v.add("(b) page " + std::to_string(page.page) + " ready twice");
                if (!page.packed() && (!pv.committed || pv.committed_generation != page.generation))
                    v.add("(b) page " + std::to_string(page.page) + " ready without its commit");
                check_reuse(page, "ready");
                const Range range = range_of(page, facts);
                for (const auto& [other, ov] : view) {
                    if (other != page.page && ov.ready &&
                        range_of(ov.shown, facts).overlaps(range)) {
                        v.add("(c) page " + std::to_string(page.page) + " ready in " +
                              range.text() + ", the bytes of " + std::to_string(other) + " in " +
                              range_of(ov.shown, facts).text());
                        break;
                    }
                }
                pv.ready = true;
                pv.shown = page;
                pv.current_at_ready = current;
                break;
            }
            case EntryKind::evicted: {
                PageView& pv = view[page.page];
                if (!pv.ready && !pv.committed) {
                    v.add("(b) page " + std::to_string(page.page) + " evicted before ready");
                }
                // A failed fill is committed, never ready, and evicted: never shown either.
                if (pv.ready && current > pv.current_at_ready) {
                    freed.push_back({range_of(pv.shown, facts), current, page.page});
                }
                pv.ready = false;
                pv.committed = false;
                break;
            }
        }
    }
    return v;
}

// ---- the workload ----

struct RouteCounts {
    std::uint64_t tails = 0, level_3x3 = 0, level_2x2 = 0, tiles = 0, stored = 0, failed_fills = 0,
                  evictions = 0, held = 0, parts_helped = 0, page_cache_copies = 0;
    static constexpr std::uint64_t least = 100;  // events a route must see over the run
    bool enough() const {
        return std::min({tails, level_3x3, level_2x2, tiles, stored, failed_fills, evictions, held,
                         parts_helped}) >= least;
    }
    void add(const RouteCounts& o) {
        tails += o.tails;
        tiles += o.tiles;
        level_3x3 += o.level_3x3;
        level_2x2 += o.level_2x2;
        stored += o.stored;
        failed_fills += o.failed_fills;
        evictions += o.evictions;
        held += o.held;
        parts_helped += o.parts_helped;
        page_cache_copies += o.page_cache_copies;
    }
};

// Baked files made once for the whole binary: version 1 and a page archive (version 4).
struct BakedFiles {
    test::TemporaryFolder folder;
    std::string v1, v2;
    BakedFiles() {
        v1 = folder.file("v1.vtex");
        bake_texture(test::make_test_image(700, 600, 3), v1);
        v2 = folder.file("v2.vtex");
        test::write_rgba8_archive(test::make_test_image(900, 500, 4), v2);
    }
};
const BakedFiles& baked_files() {
    static BakedFiles files;
    return files;
}

struct RunResult {
    Violations violations;
    RouteCounts counts;
    std::string error;  // the workload itself went wrong (not a violation)
};

struct Workload {
    std::size_t pattern_textures = 10;
    std::size_t tile_textures = 2;  // streamed by tile in mip 0 (TileLevelSource)
    int frames = 120;
    int frameless_rounds = 20;
    int short_frames = 40;
};

Workload workload() {
    Workload w;
    if (under_sanitizer) {
        w.pattern_textures = 8;
        w.frames = 60;
        w.frameless_rounds = 10;
        w.short_frames = 40;
    }
    return w;
}

RunResult run_seed(std::uint64_t seed, const std::vector<std::string>& defects) {
    RunResult result;
    // One seed in four runs on a device with less memory than the budget: commits run out of
    // memory below it and the page table evicts more pages and tries again.
    constexpr std::size_t budget_pages = 20;
    HostBackendSettings device;
    if (seed % 4 == 1) device.physical_limit = (budget_pages - 6) * page_bytes;
    std::string reason;
    const std::unique_ptr<Backend> backend = test::try_make_backend("host", reason, device);
    if (!backend) {
        result.error = "no host backend: " + reason;
        return result;
    }
    const Workload work = workload();
    std::mt19937_64 rng(seed);
    const bool destroy_mid_stream = seed % 4 == 3;
    test::TestSwitchesGuard switches(defects);
    test::TestPointHandlerGuard perturb(test::SchedulePerturber({.seed = seed}));

    EventLog log;
    FaultInjectingFileLayer faults({.seed = seed, .short_read_every = 3, .eintr_every = 5});
    StreamerSettings s = test::streamer_test_settings(budget_pages);
    s.packed_level_pages = 4;  // a host for each shape, and one more to take turns
    s.worker_threads = 4;
    s.batch_pages = 3;
    s.max_pending = 64;
    s.table.evict_ahead_pages = 3;
    // One seed in four keeps what the view asked for in its last frames (the default): requests
    // beyond the budget are dropped and a coarser level may take a finer one's room. The others
    // keep only the current frame's pages: they evict more often, which the reuse rule's rarer
    // schedules (the begin_frame gate's) need.
    s.recent_frames = seed % 4 == 2 ? StreamerSettings{}.recent_frames : 1;
    s.file_reads.layer = &faults;
    s.file_reads.read_buffers = 4;
    s.file_reads.depth = 4;
    s.file_reads.decode_threads = 2;
    // Odd seeds read through pread threads: io_uring copies cached bytes on its own thread at
    // once, and a read then never completes between two steps of another thread.
    if (seed % 2 == 1) s.file_reads.backend = FileReadBackend::threads;
    const auto slow = [seed](std::span<const StreamedPage> pages) {
        // A slow app now and then: the same pages are slow for a seed.
        if ((pages.front().page * 0x9e3779b97f4a7c15ull ^ seed) % 7 == 0)
            std::this_thread::sleep_for(std::chrono::microseconds(300));
    };
    s.on_committed = [&](std::span<const StreamedPage> pages) {
        log.pages(EntryKind::committed, pages);
    };
    s.on_ready = [&](std::span<const StreamedPage> pages) {
        slow(pages);
        log.pages(EntryKind::ready, pages);
    };
    s.on_evicted = [&](std::span<const StreamedPage> pages) {
        log.pages(EntryKind::evicted, pages);
        slow(pages);
    };

    PageFacts facts;
    std::vector<PageIndex> regular, levels, stored, tile_pages;
    std::set<PageIndex> level_3x3, level_2x2, stored_set, tails, tile_set;
    auto streamer = std::make_unique<Streamer>(*backend, s);
    std::vector<std::shared_ptr<test::PatternSource>> patterns;
    const auto add = [&](std::shared_ptr<const TileSource> source, bool is_stored) {
        const TextureId id = streamer->add_texture(source);
        const TextureLayout layout = streamer->textures().layout(id);
        const PageIndex base = streamer->textures().base_page(id);
        const PageIndex tail = base + layout.tail_page();
        tails.insert(tail);
        facts.own_tail_bytes[tail] = std::uint64_t(layout.mip_count - layout.tail_first_mip) *
                                     layout.tile_format().tile_bytes();
        const std::uint64_t coarse = is_stored ? layout.tail_page() : layout.mips[2].first_page;
        for (std::uint64_t p = 0; p < coarse; ++p) {
            (is_stored ? stored : regular).push_back(base + p);
            if (is_stored) stored_set.insert(base + p);
        }
        const TileFormatInfo format = layout.tile_format();
        for (std::uint32_t mip = 0; mip < layout.tail_first_mip; ++mip) {
            const MipLevel& level = layout.mips[mip];
            if (layout.tile_level(mip)) continue;  // a tile: its one span
            facts.level_rows[base + level.first_page] = {
                std::uint64_t(level.tiles_x) * format.tile_bytes(),
                std::uint64_t(format.page_tiles_x) * format.tile_bytes(), level.tiles_y};
        }
        if (!is_stored) {
            levels.push_back(base + layout.mips[2].first_page);
            level_3x3.insert(levels.back());
            levels.push_back(base + layout.mips[3].first_page);
            level_2x2.insert(levels.back());
        }
    };
    try {
        for (std::size_t i = 0; i < work.pattern_textures; ++i) {
            auto source = std::make_shared<test::PatternSource>(10, seed * 131 + i);
            source->failing_pages = {std::uint64_t(1 + i % 3)};  // a mip 0 page fails each time
            patterns.push_back(source);
            add(source, false);
        }
        auto v1 = std::make_shared<BakedFileSource>(baked_files().v1);
        auto v2 = std::make_shared<BakedFileSource>(baked_files().v2);
        // One stored page of the archive fails its reads every time.
        faults.fail_at(v2->stored_read(1)->fd, v2->stored_read(1)->offset, EIO, 0);
        add(v1, true);
        add(v2, true);
        // Textures streamed by tile in mip 0: their tiles take turns in shared places.
        for (std::size_t i = 0; i < work.tile_textures; ++i) {
            auto source = std::make_shared<test::PatternSource>(10, seed * 137 + i);
            const TextureId id =
                streamer->add_texture(std::make_shared<TileLevelSource>(source, 1));
            const TextureLayout layout = streamer->textures().layout(id);
            const PageIndex base = streamer->textures().base_page(id);
            tails.insert(base + layout.tail_page());
            facts.own_tail_bytes[base + layout.tail_page()] =
                std::uint64_t(layout.mip_count - layout.tail_first_mip) *
                layout.tile_format().tile_bytes();
            for (std::uint64_t p = 0; p < layout.mips[1].first_page; ++p) {
                tile_pages.push_back(base + p);
                tile_set.insert(base + p);
            }
        }

        // Three threads request until told to stop: levels of a moving window of textures,
        // regular pages and stored pages.
        std::atomic<bool> stop{false};
        std::atomic<int> window{0};
        std::atomic<bool> frameless{false};
        std::vector<std::thread> requesters;
        std::atomic<int> request_errors{0};
        for (int t = 0; t < 3; ++t) {
            requesters.emplace_back([&, t] {
                std::mt19937_64 own(seed * 7 + t);
                while (!stop.load()) {
                    std::vector<PageIndex> want;
                    const std::size_t w = std::size_t(window.load());
                    // Levels of two textures: more would wait for places fenced by the frames in
                    // flight, and being asked for first, hold back the other pages.
                    for (std::size_t k = 0; k < 2; ++k) {
                        const std::size_t texture = (w + k) % work.pattern_textures;
                        want.push_back(levels[2 * texture + own() % 2]);
                    }
                    // Without frames every place is free once reported: 3 x 3 levels of four
                    // textures take turns in their places.
                    for (std::size_t k = 0; frameless && k < 4; ++k) {
                        want.push_back(levels[2 * ((w + k + own() % 2) % work.pattern_textures)]);
                    }
                    // Regular pages of the textures in the window: the others' go cold.
                    for (int k = 0; k < 2; ++k) {
                        const std::size_t texture = (w + own() % 3) % work.pattern_textures;
                        const std::size_t per = regular.size() / work.pattern_textures;
                        want.push_back(regular[texture * per + own() % per]);
                    }
                    for (int k = 0; k < 2; ++k) want.push_back(stored[own() % stored.size()]);
                    // Tiles near each other, moving with the window.
                    for (int k = 0; k < 3; ++k) {
                        want.push_back(tile_pages[(w * 7 + own() % 24) % tile_pages.size()]);
                    }
                    try {
                        streamer->request(std::span<const PageIndex>(want));
                    } catch (...) {
                        ++request_errors;
                    }
                    std::this_thread::sleep_for(std::chrono::microseconds(200 + own() % 400));
                }
            });
        }
        struct JoinRequesters {
            std::atomic<bool>& stop;
            std::vector<std::thread>& threads;
            void now() {
                stop = true;
                for (auto& thread : threads) {
                    if (thread.joinable()) thread.join();
                }
            }
            ~JoinRequesters() { now(); }
        } join{stop, requesters};
        const auto begin = [&] {
            const FrameId frame = streamer->begin_frame();
            log.frame(EntryKind::begun, frame);
            return frame;
        };
        const auto complete = [&](FrameId frame) {
            log.frame(EntryKind::completing, frame);  // before: the log never lags the table
            streamer->complete_frame(frame);
        };
        // Frames completed one to three late, now and then twice; the budget lowered under the
        // resident set half way and raised again later.
        std::deque<FrameId> in_flight;
        for (int f = 0; f < work.frames; ++f) {
            in_flight.push_back(begin());
            if (f % 4 == 0) ++window;
            if (f == work.frames / 3) streamer->set_budget((budget_pages / 2) * page_bytes);
            if (f == 2 * work.frames / 3) streamer->set_budget(budget_pages * page_bytes);
            while (in_flight.size() > 1 + rng() % 5) {
                complete(in_flight.front());
                if (rng() % 5 == 0) complete(in_flight.front());
                in_flight.pop_front();
            }
            log.wait_for_events(2, 50ms);
        }
        if (destroy_mid_stream) {
            join.now();
            streamer.reset();  // with requests pending, fills and events on their way
        } else {
            // No frames at all for a while.
            while (!in_flight.empty()) {
                complete(in_flight.back());
                in_flight.clear();
            }
            frameless = true;
            for (int r = 0; r < work.frameless_rounds; ++r) {
                ++window;
                if (r == work.frameless_rounds / 2)
                    streamer->set_budget((budget_pages / 2) * page_bytes);
                log.wait_for_events(4, 50ms);
            }
            // Short frames with gaps between them, where commits reuse evicted pages at once
            // and begin_frame must wait for their reports; then quiescence.
            frameless = false;
            for (int f = 0; f < work.short_frames; ++f) {
                if (f == work.short_frames / 2) streamer->set_budget(budget_pages * page_bytes);
                const FrameId frame = begin();
                std::this_thread::yield();
                complete(frame);
                log.wait_for_events(1, 20ms);
            }
        }
        stop = true;
        if (request_errors > 0) result.error = "requests threw";
    } catch (const std::exception& error) {
        result.error = std::string("the workload threw: ") + error.what();
    }
    std::map<PageIndex, PageView> view;
    if (streamer) {
        if (!streamer->wait_idle_while_progressing(60s)) result.error = "the streamer never idled";
        const StreamerStatistics stats = streamer->statistics();
        result.counts.failed_fills = stats.failed_pages;
        result.counts.held = stats.held_requests;
        result.counts.parts_helped = stats.file_reads.decode_parts_helped;
        result.counts.page_cache_copies = stats.file_reads.page_cache_attempts;
        const std::vector<Entry> entries = log.take();
        result.violations = check_log(entries, facts, view);
        // (d) the app's view is the streamer's.
        for (const PageIndex page : [&] {
                 std::set<PageIndex> all(regular.begin(), regular.end());
                 all.insert(levels.begin(), levels.end());
                 all.insert(stored.begin(), stored.end());
                 all.insert(tails.begin(), tails.end());
                 all.insert(tile_pages.begin(), tile_pages.end());
                 return all;
             }()) {
            const std::optional<StreamedPage> ready = streamer->ready_page(page);
            const auto seen = view.find(page);
            const bool shown = seen != view.end() && seen->second.ready;
            if (bool(ready) != shown ||
                (ready && (ready->physical != seen->second.shown.physical ||
                           ready->offset != seen->second.shown.offset ||
                           ready->generation != seen->second.shown.generation))) {
                result.violations.add("(d) page " + std::to_string(page) + (ready ? " " : " not ") +
                                      "ready, but the callbacks say" + (shown ? " " : " not ") +
                                      "ready (or elsewhere)");
            }
        }
        for (const Entry& e : entries) {
            if (e.kind == EntryKind::begun || e.kind == EntryKind::completing) continue;
            const PageIndex page = e.page.page;
            if (e.kind == EntryKind::evicted) ++result.counts.evictions;
            if (e.kind == EntryKind::committed) continue;
            if (tails.count(page) && e.kind == EntryKind::ready) ++result.counts.tails;
            if (level_3x3.count(page) && e.page.packed()) ++result.counts.level_3x3;
            if (level_2x2.count(page) && e.page.packed()) ++result.counts.level_2x2;
            if (tile_set.count(page) && e.kind == EntryKind::ready) ++result.counts.tiles;
            if (stored_set.count(page)) ++result.counts.stored;
        }
        streamer.reset();  // the destruction's own events are not checked
    } else {
        // Destroyed mid-stream: what was delivered until then must still hold (a) to (c).
        const std::vector<Entry> entries = log.take();
        result.violations = check_log(entries, facts, view);
        for (const Entry& e : entries) {
            if (e.kind == EntryKind::evicted) ++result.counts.evictions;
        }
    }
    return result;
}

// ---- seeds ----

std::vector<std::uint64_t> listed_seeds() {
    std::vector<std::uint64_t> seeds;
    std::ifstream file(VTPAGE_SCHEDULE_SEEDS_FILE);
    std::string line;
    while (std::getline(file, line)) {
        if (line.empty() || line[0] == '#') continue;
        seeds.push_back(std::stoull(line));
    }
    return seeds;
}

std::chrono::seconds fresh_seed_time() {
    if (const char* text = std::getenv("VTPAGE_EXPLORER_SECONDS")) {
        return std::chrono::seconds(std::atoll(text));
    }
    return under_sanitizer ? 5s : 20s;
}

// How long fresh seeds go on after fresh_seed_time() while a route has not been seen `least`
// times. Under ThreadSanitizer on two cores a run takes about 6 s and sees about 4 parts decoded
// by a helping thread: 120 s once ended that route at 93 of 100. Within the tests' 600 s.
constexpr std::chrono::seconds until_enough_time = 400s;

std::optional<std::uint64_t> only_seed() {
    if (const char* text = std::getenv("VTPAGE_EXPLORER_SEED")) return std::stoull(text);
    return std::nullopt;
}

class ScheduleExplorerTest : public testing::Test {
protected:
    void SetUp() override {
        if (!detail::test_points_built) {
            GTEST_SKIP() << "built without VTPAGE_TEST_POINTS: no points to perturb";
        }
        ASSERT_FALSE(listed_seeds().empty()) << "no seeds in " << VTPAGE_SCHEDULE_SEEDS_FILE;
    }
};

TEST_F(ScheduleExplorerTest, TheReuseRuleHoldsInEverySchedule) {
    std::vector<std::uint64_t> seeds = listed_seeds();
    const std::size_t listed = seeds.size();
    if (auto only = only_seed()) seeds = {*only};
    RouteCounts total;
    std::size_t runs = 0, fresh = 0;
    const auto start = Clock::now();
    std::random_device device;
    const auto deadline = start + fresh_seed_time();
    for (std::size_t i = 0;; ++i) {
        std::uint64_t seed = 0;
        if (i < seeds.size()) {
            seed = seeds[i];
        } else if (!only_seed() &&
                   (Clock::now() < deadline ||
                    (!total.enough() && Clock::now() < deadline + until_enough_time))) {
            // Fresh seeds for the time given, and on until every route was seen enough.
            seed = (std::uint64_t(device()) << 32) | device();
            ++fresh;
        } else {
            break;
        }
        const RunResult run = run_seed(seed, {});
        ++runs;
        total.add(run.counts);
        ASSERT_TRUE(run.error.empty()) << "seed " << seed << ": " << run.error;
        if (run.violations.count > 0) {
            std::ostringstream text;
            for (const std::string& v : run.violations.found) text << "\n  " << v;
            FAIL() << run.violations.count << " violations with seed " << seed << ":" << text.str()
                   << "\nreplay: VTPAGE_EXPLORER_SEED=" << seed
                   << " vtpage_schedule_explorer_tests; keep it: add the line \"" << seed
                   << "\" to tests/streaming/schedule_seeds.txt";
        }
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    std::printf(
        "schedule explorer: %zu runs (%zu listed, %zu fresh) in %.1f s; events: tails %llu, "
        "3x3 levels %llu, 2x2 levels %llu, tiles %llu, stored pages %llu, failed fills %llu, "
        "evictions %llu, held requests %llu, parts decoded by a helping thread %llu, reads "
        "copied from the page cache %llu\n",
        runs, std::min(listed, runs), fresh, seconds, (unsigned long long)total.tails,
        (unsigned long long)total.level_3x3, (unsigned long long)total.level_2x2,
        (unsigned long long)total.tiles, (unsigned long long)total.stored,
        (unsigned long long)total.failed_fills, (unsigned long long)total.evictions,
        (unsigned long long)total.held, (unsigned long long)total.parts_helped,
        (unsigned long long)total.page_cache_copies);
    if (!only_seed()) {
        const std::uint64_t least = RouteCounts::least;
        EXPECT_GE(total.tails, least) << "packed and own tails";
        EXPECT_GE(total.level_3x3, least) << "3 x 3 levels";
        EXPECT_GE(total.level_2x2, least) << "2 x 2 levels";
        EXPECT_GE(total.tiles, least) << "tiles of a tile level";
        EXPECT_GE(total.stored, least) << "stored pages";
        EXPECT_GE(total.failed_fills, least) << "failed fills";
        EXPECT_GE(total.evictions, least) << "evictions";
        EXPECT_GE(total.held, least) << "requests held for a view over budget (refaults)";
        EXPECT_GE(total.parts_helped, least) << "parts of a page decoded by a helping thread";
    }
}

// Each defect switch brings back a defect the reuse rule forbids: the explorer must catch it
// within the listed seeds and a few more.
class ScheduleExplorerDefectTest : public ScheduleExplorerTest,
                                   public testing::WithParamInterface<const char*> {};

// How long fresh seeds are tried for a defect the listed ones missed: a machine of many cores
// makes some schedules rarer (the begin_frame gate's window was missed by twelve seeds on a
// 16-core machine and caught within the first few on 2 cores).
constexpr auto defect_search_time = under_sanitizer ? 300s : 150s;

TEST_P(ScheduleExplorerDefectTest, IsCaught) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::uint64_t> seeds = listed_seeds();
    std::size_t runs = 0;
    for (std::uint64_t extra = 1;; ++extra) {
        const std::uint64_t seed = runs < seeds.size() ? seeds[runs] : 0xdefec7000 + extra;
        const RunResult run = run_seed(seed, {GetParam()});
        ++runs;
        if (run.violations.count > 0) {
            std::printf("%s: caught with seed %llu after %zu runs: %s\n", GetParam(),
                        (unsigned long long)seed, runs, run.violations.found.front().c_str());
            return;
        }
        const bool tried_enough = runs >= seeds.size() + (under_sanitizer ? 20 : 12);
        if (tried_enough && std::chrono::steady_clock::now() - start > defect_search_time) break;
    }
    ADD_FAILURE() << GetParam() << " was not caught in " << runs << " runs";
}

INSTANTIATE_TEST_SUITE_P(Defects, ScheduleExplorerDefectTest,
                         testing::Values("defect.table_reuses_evicted_pages_at_once",
                                         "defect.level_place_ripe_at_once",
                                         "defect.ready_reported_after_pages_evictable",
                                         "defect.begin_frame_ignores_pages_reused_at_once"),
                         [](const testing::TestParamInfo<const char*>& param) {
                             std::string name = std::string(param.param).substr(7);
                             std::erase(name, '_');
                             std::erase(name, '.');
                             return name;
                         });

}  // namespace
}  // namespace vtpage::vt
