// The streamer's file read pipeline (StreamerFileReads): pages of baked archives are read through
// one read queue, many at once, decoded on their own threads and reported ready one by one. On
// both backends and both read backends (io_uring where the kernel allows it, and threads).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <numeric>
#include <set>
#include <thread>
#include <tuple>

#include <unistd.h>

#include "../support/backend_fixture.hpp"
#include "vtpage/config.hpp"
#if VTPAGE_HAS_CUDA
#include "../support/gpu_kernels.hpp"
#endif
#include "streaming/io/fault_injecting_file_layer.hpp"
#include "streaming/io/usable_cpus.hpp"
#include "streaming/streamer/decode_thread_counts.hpp"
#include "streaming_test_support.hpp"
#include "vtpage/streaming/archive/page_archive.hpp"
#include "vtpage/streaming/io/file_read_queue.hpp"
#include "vtpage/streaming/sources/baked_texture.hpp"
#include "vtpage/streaming/sources/device_fill_context.hpp"
#include "vtpage/streaming/sources/tile_level_source.hpp"
#include "vtpage/streaming/streamer/streamer.hpp"

namespace vtpage::vt {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Holds the reads of chosen offsets in flight until released; passes the others.
class HoldingLayer final : public FileLayer {
public:
    void hold(std::uint64_t offset) {
        std::lock_guard lock(mutex_);
        held_offsets_.push_back(offset);
    }
    void release() {
        {
            std::lock_guard lock(mutex_);
            held_offsets_.clear();
        }
        released_.notify_all();
    }
    std::size_t holding() const {
        std::lock_guard lock(mutex_);
        return waiting_;
    }
    ReadDecision decide(const ReadAttempt& attempt) override {
        std::unique_lock lock(mutex_);
        auto held = [&] {
            return std::find(held_offsets_.begin(), held_offsets_.end(), attempt.request_offset) !=
                   held_offsets_.end();
        };
        ++waiting_;
        released_.wait_for(lock, 20s, [&] { return !held(); });
        --waiting_;
        return ReadDecision::pass();
    }

private:
    mutable std::mutex mutex_;
    std::condition_variable released_;
    std::vector<std::uint64_t> held_offsets_;
    std::size_t waiting_ = 0;
};

using test::eventually;

std::size_t open_fd_count() {
    const std::filesystem::directory_iterator entries("/proc/self/fd");
    return std::size_t(std::distance(begin(entries), end(entries)));
}

// A file's source that counts the parts of stored pages decoded through it.
class PartCountingSource final : public TileSource {
public:
    explicit PartCountingSource(std::shared_ptr<const TileSource> source)
        : source_(std::move(source)) {}
    TextureShape shape() const noexcept override { return source_->shape(); }
    std::string name() const override { return source_->name(); }
    void fill_host(std::uint64_t page, std::span<std::byte> destination) const override {
        source_->fill_host(page, destination);
    }
    std::optional<StoredPageRead> stored_read(std::uint64_t page) const override {
        return source_->stored_read(page);
    }
    std::vector<StoredPart> split_stored(std::uint64_t page,
                                         std::span<const std::byte> stored) const override {
        return source_->split_stored(page, stored);
    }
    void decode_stored_part(std::uint64_t page, const StoredPart& part,
                            std::span<std::byte> destination) const override {
        ++parts_decoded;
        source_->decode_stored_part(page, part, destination);
    }
    mutable std::atomic<std::uint64_t> parts_decoded{0};

private:
    std::shared_ptr<const TileSource> source_;
};

using Param = std::tuple<std::string, FileReadBackend>;

class StreamerFileReadsTest : public testing::TestWithParam<Param> {
protected:
    void SetUp() override {
        std::string reason;
        backend_ = test::try_make_backend(std::get<0>(GetParam()), reason);
        if (!backend_) GTEST_SKIP() << reason;
        if (std::get<1>(GetParam()) == FileReadBackend::io_uring) {
            const std::string why = FileReadQueue::io_uring_unavailable_reason();
            if (!why.empty()) GTEST_SKIP() << "no io_uring here: " << why;
        }
        path_ = folder_.file("image.vtex");
        test::write_rgba8_archive(test::make_test_image(1500, 1100, 9), path_);
        source_ = std::make_shared<BakedFileSource>(path_);
        fds_ = open_fd_count();
    }

    StreamerSettings settings(std::size_t read_buffers, FileLayer* layer = nullptr) const {
        StreamerSettings s = test::streamer_test_settings(64);
        s.queue_events = true;
        s.file_reads.backend = std::get<1>(GetParam());
        s.file_reads.read_buffers = read_buffers;
        s.file_reads.depth = read_buffers;
        s.file_reads.decode_threads = test::copy_threads(2);
        s.file_reads.layer = layer;
        return s;
    }

    std::vector<PageIndex> pages_of(const Streamer& streamer, TextureId id) const {
        std::vector<PageIndex> pages(streamer.textures().layout(id).page_count - 1);  // no tail
        std::iota(pages.begin(), pages.end(), streamer.textures().base_page(id));
        return pages;
    }

    // Every ready page holds what the archive's own reader gives for it.
    void expect_ready_pages_are_the_archive(const Streamer& streamer, TextureId id) {
        std::size_t checked = 0;
        ASSERT_TRUE(test::ready_pages_hold_their_source(*backend_, streamer, id, checked));
    }

    // Asks for every page of both textures at once, waits and checks that each ready page holds
    // its archive's bytes; `pages` gets what was asked for.
    void stream_every_page(Streamer& streamer, TextureId first, TextureId second,
                           std::vector<PageIndex>& pages) {
        pages = pages_of(streamer, first);
        const auto more = pages_of(streamer, second);
        pages.insert(pages.end(), more.begin(), more.end());
        streamer.request(pages);
        ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
        expect_ready_pages_are_the_archive(streamer, first);
        expect_ready_pages_are_the_archive(streamer, second);
    }

    std::uint64_t stored_offset(std::uint64_t page) const {
        return source_->stored_read(page).value().offset;
    }

    void TearDown() override {
        if (!backend_) return;
        source_.reset();
        EXPECT_EQ(open_fd_count(), fds_ - 1) << "file descriptors leaked (the archive's closed)";
    }

    std::unique_ptr<Backend> backend_;
    test::TemporaryFolder folder_;
    std::string path_;
    std::shared_ptr<BakedFileSource> source_;
    std::size_t fds_ = 0;
};

// The file is cut short while it is open (the last pages' bytes gone): those pages fail saying
// where the file ends; the pages before the cut arrive.
TEST_P(StreamerFileReadsTest, AFileTruncatedWhileOpenFailsThePagesPastTheCut) {
    Streamer streamer(*backend_, settings(4));
    const TextureId id = streamer.add_texture(source_);
    const auto pages = pages_of(streamer, id);
    std::vector<std::vector<std::byte>> expected;  // read before the cut
    for (std::uint64_t p = 0; p < streamer.textures().layout(id).page_count; ++p) {
        expected.push_back(test::source_page(*source_, p));
    }
    const std::uint64_t cut = stored_offset(pages.size() - 2);
    ASSERT_EQ(::truncate(path_.c_str(), off_t(cut)), 0);
    streamer.request(pages);
    ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
    std::size_t failed = 0;
    for (std::size_t i = 0; i < pages.size(); ++i) {
        const bool past_cut = stored_offset(i) >= cut;
        EXPECT_EQ(streamer.is_ready(pages[i]), !past_cut) << i;
        failed += past_cut;
    }
    EXPECT_EQ(failed, 2u);
    EXPECT_EQ(streamer.statistics().failed_pages, failed);
    try {
        streamer.rethrow_error();
        ADD_FAILURE() << "the cut was not reported";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::io_error);
        EXPECT_NE(std::string(error.what()).find("ends at byte"), std::string::npos)
            << error.what();
    }
    for (std::size_t i = 0; i < pages.size(); ++i) {
        if (const auto ready = streamer.ready_page(pages[i])) {
            EXPECT_TRUE(test::ready_holds_page(*backend_, *ready, source_->layout(), expected[i]))
                << i;
        }
    }
}

// The decode threads hand what they load to the route's lander and go on decoding: an app's
// ready callback that takes its time (it runs in the events' turn) holds up no decode thread.
// Before, the decode thread that delivered it held the turn, and every other decode thread
// waited for it at its own page's report: at most one page a thread was loaded meanwhile.
TEST_P(StreamerFileReadsTest, ASlowReadyCallbackHoldsUpNoDecodeThread) {
    const std::string path = folder_.file("large.vtex");
    test::write_rgba8_archive(test::make_test_image(2048, 2048, 4), path);
    const auto large = std::make_shared<BakedFileSource>(path);
    // Read buffers for every page: the workers commit them all in one batch before the first
    // is ready (a commit's own event waits for the held turn too).
    StreamerSettings s = settings(64);
    Streamer* streamer = nullptr;
    std::atomic<bool> armed{false};
    std::atomic<std::uint64_t> loaded_while_held{0};
    s.on_ready = [&](std::span<const StreamedPage>) {
        if (!armed.exchange(false)) return;  // the tail at add_texture, and all but the first
        std::uint64_t loaded = 0;
        eventually(
            [&] {
                loaded = streamer->statistics().file_reads.loaded;
                return loaded >= loaded_while_held;
            },
            120s);  // returns as soon as they are; a long limit for a loaded machine
        loaded_while_held = loaded;
    };
    Streamer made(*backend_, s);
    streamer = &made;
    const TextureId id = made.add_texture(large);
    const auto pages = pages_of(made, id);
    ASSERT_GT(pages.size(), 2 * s.file_reads.decode_threads);
    ASSERT_LE(pages.size(), std::min(s.batch_pages, s.file_reads.read_buffers));
    loaded_while_held = pages.size();  // what the held callback waits for
    armed = true;
    made.request(pages);
    ASSERT_TRUE(made.wait_idle_while_progressing(60s));
    EXPECT_EQ(loaded_while_held, pages.size())
        << "loaded while the first ready callback was held, of " << pages.size();
    for (PageIndex page : pages) EXPECT_TRUE(made.is_ready(page)) << page;
    std::size_t checked = 0;
    EXPECT_TRUE(test::ready_pages_hold_their_source(*backend_, made, id, checked));
    EXPECT_GE(checked, pages.size());
}

// Pages whose copies still run when the streamer is destroyed (on_fills_enqueued, stored pages
// of a version-2 file): destruction waits for the copies and unpins the pages, so the page
// table shuts down with none pinned and nothing is logged as an error.
TEST_P(StreamerFileReadsTest, CopiesPendingAtDestructionAreUnpinnedBeforeShutdown) {
#if VTPAGE_HAS_CUDA
    if (std::get<0>(GetParam()) != "cuda") GTEST_SKIP() << "copies are the CUDA backend's";
    if (!device_fills_built()) GTEST_SKIP() << "built without CUDA";
    ASSERT_EQ(source_->version(), 4);
    std::mutex mutex;
    std::vector<std::string> errors;
    StreamerSettings s = settings(4);
    s.log = Log([&](LogLevel level, std::string_view message) {
        std::lock_guard lock(mutex);
        if (level == LogLevel::error) errors.emplace_back(message);
    });
    std::atomic<std::uint64_t> fences{0};
    s.on_fills_enqueued = [&](CudaStream stream) -> std::uint64_t {
        // The batch's copies finish 300 ms from now: still pending at destruction.
        EXPECT_EQ(test::gpu_delay_stream(stream, 300), "cudaSuccess");
        return ++fences;
    };
    {
        Streamer streamer(*backend_, s);
        const TextureId id = streamer.add_texture(source_);
        streamer.request(pages_of(streamer, id));
        bool fenced = false;
        ASSERT_TRUE(eventually([&] {
            for (const StreamerEvent& event : streamer.poll_events()) {
                fenced |= event.kind == StreamerEventKind::ready && event.page.fence != 0;
            }
            return fenced;
        })) << "no page was reported ready with its copy pending";
    }
    std::lock_guard lock(mutex);
    EXPECT_TRUE(errors.empty()) << errors.size() << " errors, the first: " << errors.front();
#else
    GTEST_SKIP() << "built without CUDA";
#endif
}

// Tests that hold chosen reads in the file layer run on the threads backend only: the io_uring
// backend asks the layer on its one ring thread, so holding one read there holds them all.
class StreamerHeldReadsTest : public StreamerFileReadsTest {};

TEST_P(StreamerFileReadsTest, EveryPageArrivesThroughTheReadQueueWithinItsBuffers) {
    Streamer streamer(*backend_, settings(3));
    const TextureId id = streamer.add_texture(source_);
    const auto pages = pages_of(streamer, id);
    ASSERT_GE(pages.size(), 6u);
    streamer.request(pages);
    ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
    for (PageIndex page : pages) EXPECT_TRUE(streamer.is_ready(page)) << page;
    expect_ready_pages_are_the_archive(streamer, id);
    const StreamerStatistics stats = streamer.statistics();
    EXPECT_EQ(stats.file_reads.loaded, pages.size());
    EXPECT_EQ(stats.file_reads.distinct_pages, pages.size());
    EXPECT_EQ(stats.file_reads.failed, 0u);
    EXPECT_EQ(stats.file_reads.outstanding, 0u);
    EXPECT_EQ(stats.file_reads.buffers_in_use, 0u);
    EXPECT_LE(stats.file_reads.buffers_peak, 3u);
    EXPECT_GE(stats.file_reads.buffers_peak, 1u);
    EXPECT_LE(stats.file_reads.reads_peak_in_flight, 3u);
    EXPECT_GT(stats.file_reads.bytes_read, 0u);
    EXPECT_EQ(stats.file_reads.backend, to_string(std::get<1>(GetParam())));
    EXPECT_EQ(stats.failed_pages, 0u);
}

// Automatic decode threads (decode_threads 0): a pool sized by the usable CPUs, of which some
// take pages; how many changes at any time, before the pipeline starts too, within the pool. An
// explicit count starts that many, all taking pages.
TEST_P(StreamerFileReadsTest, DecodeThreadsTakePagesAsManyAsAreActive) {
    StreamerSettings s = settings(8);
    s.file_reads.decode_threads = 0;
    {
        Streamer streamer(*backend_, s);
        const streamer_detail::DecodeThreadCounts expected =
            streamer_detail::decode_thread_counts(s.file_reads, usable_cpus());
        const DecodeThreadLoad load = streamer.decode_threads();
        EXPECT_TRUE(load.automatic);
        EXPECT_EQ(load.pool, expected.pool);
        EXPECT_EQ(load.active, expected.active);
        for (std::size_t refused : {std::size_t(0), load.pool + 1}) {
            try {
                streamer.set_active_decode_threads(refused);
                ADD_FAILURE() << refused << " accepted";
            } catch (const Error& error) {
                EXPECT_EQ(error.code(), Errc::out_of_range) << error.what();
            }
        }
        streamer.set_active_decode_threads(1);  // before the pipeline starts
        const TextureId id = streamer.add_texture(source_);
        const auto pages = pages_of(streamer, id);
        streamer.request(pages);
        ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
        for (PageIndex page : pages) EXPECT_TRUE(streamer.is_ready(page)) << page;
        const StreamerStatistics stats = streamer.statistics();
        EXPECT_EQ(stats.file_reads.decode_threads, load.pool);
        EXPECT_EQ(stats.file_reads.lowered_decode_threads, load.pool) << "low by default";
        EXPECT_EQ(stats.file_reads.active_decode_threads, 1u);
        EXPECT_EQ(stats.file_reads.decode_queue, 0u);
        const DecodeThreadLoad after = streamer.decode_threads();
        EXPECT_EQ(after.decoded_pages, stats.file_reads.loaded + stats.file_reads.failed);
        EXPECT_GT(after.busy_seconds, 0.0);
        streamer.set_active_decode_threads(load.pool);
        EXPECT_EQ(streamer.decode_threads().active, load.pool);
    }
    s.file_reads.decode_threads = 3;
    Streamer fixed(*backend_, s);
    const DecodeThreadLoad load = fixed.decode_threads();
    EXPECT_FALSE(load.automatic);
    EXPECT_EQ(load.pool, 3u);
    EXPECT_EQ(load.active, 3u);
}

// At the normal priority half of them take pages at first; at a lowered one (the default), the
// app's threads preempt them, and all of them do.
TEST(DecodeThreadCountsTest, AThreadForEachUsableCpuButOneHalfOfThemActiveAtTheNormalPriority) {
    using streamer_detail::decode_thread_counts;
    StreamerFileReads reads;  // 64 read buffers, automatic
    for (DecodeThreadPriority lowered : {DecodeThreadPriority::low, DecodeThreadPriority::idle}) {
        reads.decode_priority = lowered;
        for (std::size_t cpus : {1, 2, 3, 16, 128}) {
            const auto counts = decode_thread_counts(reads, cpus);
            EXPECT_EQ(counts.pool, std::clamp<std::size_t>(cpus - 1, 1, 64)) << cpus;
            EXPECT_EQ(counts.active, counts.pool) << cpus;
            EXPECT_TRUE(counts.automatic);
        }
    }
    reads.decode_priority = DecodeThreadPriority::normal;
    auto counts = decode_thread_counts(reads, 16);
    EXPECT_EQ(counts.pool, 15u) << "the app's render thread keeps a CPU";
    EXPECT_EQ(counts.active, 8u);
    EXPECT_TRUE(counts.automatic);
    counts = decode_thread_counts(reads, 128);
    EXPECT_EQ(counts.pool, 64u) << "at most a thread per read buffer";
    EXPECT_EQ(counts.active, 64u);
    counts = decode_thread_counts(reads, 3);
    EXPECT_EQ(counts.pool, 2u);
    EXPECT_EQ(counts.active, 2u);
    counts = decode_thread_counts(reads, 2);
    EXPECT_EQ(counts.pool, 1u);
    EXPECT_EQ(counts.active, 1u);
    counts = decode_thread_counts(reads, 1);
    EXPECT_EQ(counts.pool, 1u);
    EXPECT_EQ(counts.active, 1u);
    reads.decode_threads = 5;
    counts = decode_thread_counts(reads, 64);
    EXPECT_EQ(counts.pool, 5u);
    EXPECT_EQ(counts.active, 5u);
    EXPECT_FALSE(counts.automatic);
}

// Instances of one file (as a texture set's instanced manifest makes them) each read every page,
// and the distinct pages read are the file's: counted once however many textures share them.
TEST_P(StreamerFileReadsTest, InstancesOfOneFileReadItsPagesEachAndCountThemOnce) {
    Streamer streamer(*backend_, settings(4));
    const TextureId first = streamer.add_texture(source_);
    const TextureId second = streamer.add_texture(std::make_shared<BakedFileSource>(path_));
    auto pages = pages_of(streamer, first);
    const std::size_t per_texture = pages.size();
    const auto more = pages_of(streamer, second);
    pages.insert(pages.end(), more.begin(), more.end());
    streamer.request(pages);
    ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
    for (PageIndex page : pages) EXPECT_TRUE(streamer.is_ready(page)) << page;
    expect_ready_pages_are_the_archive(streamer, second);
    const StreamerStatistics stats = streamer.statistics();
    EXPECT_EQ(stats.file_reads.loaded, 2 * per_texture);
    EXPECT_EQ(stats.file_reads.distinct_pages, per_texture);
}

// Two files of one shape but different texels, every page of both asked for at once: each
// ready page, packed coarse levels included, holds its own file's bytes (a level's rows that
// were not copied would show the other file's level, which held the same place before).
TEST_P(StreamerFileReadsTest, FilesOfOneShapeEachHoldTheirOwnBytes) {
    const std::string other = folder_.file("other.vtex");
    test::write_rgba8_archive(test::make_test_image(1500, 1100, 23), other);
    for (int round = 0; round < 4; ++round) {
        Streamer streamer(*backend_, settings(4));
        const TextureId first = streamer.add_texture(source_);
        const TextureId second = streamer.add_texture(std::make_shared<BakedFileSource>(other));
        std::vector<PageIndex> pages;
        ASSERT_NO_FATAL_FAILURE(stream_every_page(streamer, first, second, pages));
    }
}

// Instances of one file have the same texels, and each round below makes the same placements,
// so a packed level whose rows were not all copied could still read right: its place may hold
// the same level from an earlier placement, in memory the driver hands out again. Here every
// ready page's bytes are overwritten with a poison pattern before its streamer goes, so each
// placement must write every row of its own: a row it left out reads as poison (or as whatever
// fresh memory holds).
TEST_P(StreamerFileReadsTest, EveryPlacementOfAPackedLevelWritesAllItsRows) {
    std::uint64_t poisoned_levels = 0;
    for (int round = 0; round < 6; ++round) {
        Streamer streamer(*backend_, settings(4));
        const TextureId first = streamer.add_texture(source_);
        const TextureId second = streamer.add_texture(std::make_shared<BakedFileSource>(path_));
        std::vector<PageIndex> pages;
        ASSERT_NO_FATAL_FAILURE(stream_every_page(streamer, first, second, pages));
        const std::vector<std::byte> poison(page_bytes, std::byte{0xCD});
        for (PageIndex page : pages) {
            const auto ready = streamer.ready_page(page);
            if (!ready) continue;
            backend_->write(ready->data, poison.data(), ready->bytes);
            poisoned_levels += ready->packed() ? 1 : 0;
        }
    }
    EXPECT_GT(poisoned_levels, 0u) << "no packed coarse level was ready";
}

// A file streamed by tile in its finest level: the tiles of one stored page asked for together
// share its read and decode, and only the parts that hold them are decoded (a part is an eighth
// of a page by default, 4 RGBA8 tiles); each tile is then copied to its place.
TEST_P(StreamerFileReadsTest, TilesOfAStoredPageShareItsReadAndDecodeOnlyTheirParts) {
    const auto counting = std::make_shared<PartCountingSource>(source_);
    Streamer streamer(*backend_, settings(64));
    const TextureId id = streamer.add_texture(std::make_shared<TileLevelSource>(counting, 1));
    const TextureLayout layout = streamer.textures().layout(id);
    ASSERT_EQ(layout.tile_levels, 1u);
    const std::uint64_t tiles = layout.mips[1].first_page;  // 13 x 10
    ASSERT_EQ(tiles, std::uint64_t(layout.mips[0].tiles_x) * layout.mips[0].tiles_y);
    std::vector<PageIndex> pages(tiles);
    std::iota(pages.begin(), pages.end(), streamer.textures().base_page(id));
    streamer.request(pages);
    ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
    streamer.rethrow_error();
    for (PageIndex page : pages) {
        const auto ready = streamer.ready_page(page);
        ASSERT_TRUE(ready) << page;
        EXPECT_TRUE(ready->packed());
        EXPECT_EQ(ready->bytes, tile_bytes);
    }
    expect_ready_pages_are_the_archive(streamer, id);
    // Where the tiles are in the stored pages: each tile's part, and the bytes read if every
    // tile read its stored page alone, or every stored page were read once.
    const TextureLayout stored_layout = source_->layout();
    const std::uint32_t parts_per_page = PageArchive(path_).parts_per_page();
    const std::uint32_t tiles_per_part = tiles_per_page / parts_per_page;
    std::set<std::pair<std::uint64_t, std::uint32_t>> parts;
    std::set<std::uint64_t> stored_pages;
    std::uint64_t each_tile_alone = 0, each_page_once = 0;
    for (std::uint32_t y = 0; y < layout.mips[0].tiles_y; ++y) {
        for (std::uint32_t x = 0; x < layout.mips[0].tiles_x; ++x) {
            const TileLocation at = stored_layout.locate(0, x, y);
            parts.insert({at.page, at.tile_in_page / tiles_per_part});
            each_tile_alone += source_->stored_read(at.page)->bytes;
            if (stored_pages.insert(at.page).second) {
                each_page_once += source_->stored_read(at.page)->bytes;
            }
        }
    }
    const std::uint64_t decoded = counting->parts_decoded.load();
    EXPECT_GE(decoded, parts.size()) << "every part that holds a tile";
    EXPECT_LE(decoded, 3 * stored_pages.size() * parts_per_page)
        << "a stored page is decoded at most once a batch of its tiles";
    const StreamerStatistics stats = streamer.statistics();
    EXPECT_GE(stats.file_reads.bytes_read, each_page_once);
    EXPECT_LT(stats.file_reads.bytes_read, each_tile_alone / 4) << "tiles share their page's reads";
    std::printf(
        "%llu tiles of %zu stored pages: %llu parts decoded (%zu hold tiles), %llu bytes "
        "read (%llu if each tile read its page, %llu reading each page once)\n",
        (unsigned long long)tiles, stored_pages.size(), (unsigned long long)decoded, parts.size(),
        (unsigned long long)stats.file_reads.bytes_read, (unsigned long long)each_tile_alone,
        (unsigned long long)each_page_once);
    EXPECT_EQ(stats.level_pages, (tiles + 31) / 32);
    EXPECT_EQ(stats.file_reads.distinct_pages, TextureLayout(source_->shape()).mips[1].first_page)
        << "the stored pages of mip 0, each counted once";
}

// Tiles asked for one at a time, as a view that moves asks for them: with pages kept decoded,
// each stored page is read and decoded once and its other tiles are copied from it; without,
// each tile reads its stored page again.
TEST_P(StreamerFileReadsTest, TilesAskedForOneByOneReadTheirPageOnceWhileItIsKeptDecoded) {
    for (const std::size_t kept : {std::size_t(16), std::size_t(0)}) {
        StreamerSettings s = settings(64);
        s.file_reads.decoded_pages_kept = kept;
        Streamer streamer(*backend_, s);
        const TextureId id = streamer.add_texture(std::make_shared<TileLevelSource>(source_, 1));
        const TextureLayout layout = streamer.textures().layout(id);
        const PageIndex base = streamer.textures().base_page(id);
        const TextureLayout stored_layout = source_->layout();
        std::set<std::uint64_t> stored_pages;
        std::uint64_t each_tile_alone = 0, each_page_once = 0, tiles = 0;
        for (std::uint32_t y = 0; y < layout.mips[0].tiles_y; ++y) {
            for (std::uint32_t x = 0; x < layout.mips[0].tiles_x; ++x, ++tiles) {
                const PageIndex page = base + layout.locate(0, x, y).page;
                streamer.request(std::span(&page, 1));
                ASSERT_TRUE(streamer.wait_idle_while_progressing(20s));
                ASSERT_TRUE(streamer.is_ready(page)) << page;
                const std::uint64_t stored = stored_layout.locate(0, x, y).page;
                each_tile_alone += source_->stored_read(stored)->bytes;
                if (stored_pages.insert(stored).second) {
                    each_page_once += source_->stored_read(stored)->bytes;
                }
            }
        }
        streamer.rethrow_error();
        expect_ready_pages_are_the_archive(streamer, id);
        const StreamerStatistics::FileReads reads = streamer.statistics().file_reads;
        if (kept > 0) {
            EXPECT_EQ(reads.bytes_read, each_page_once) << "each stored page read once";
            EXPECT_EQ(reads.decoded_page_hits, tiles - stored_pages.size());
        } else {
            EXPECT_EQ(reads.bytes_read, each_tile_alone) << "each tile reads its page";
            EXPECT_EQ(reads.decoded_page_hits, 0u);
        }
    }
}

// Short reads, EINTR and EAGAIN are continued and retried: the bytes are the same.
TEST_P(StreamerFileReadsTest, ShortAndInterruptedReadsGiveTheSameBytes) {
    FaultInjectingFileLayer faults(
        {.seed = 3, .short_read_every = 2, .eagain_every = 5, .eintr_every = 3});
    {
        Streamer streamer(*backend_, settings(4, &faults));
        const TextureId id = streamer.add_texture(source_);
        const auto pages = pages_of(streamer, id);
        streamer.request(pages);
        ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
        for (PageIndex page : pages) EXPECT_TRUE(streamer.is_ready(page)) << page;
        expect_ready_pages_are_the_archive(streamer, id);
        EXPECT_EQ(streamer.statistics().failed_pages, 0u);
    }
    EXPECT_GT(faults.injected(), 0u);
}

// A read that fails (EIO every time) fails its page with the reason; the others arrive.
TEST_P(StreamerFileReadsTest, AFailedReadFailsItsPageWithTheReasonAndTheOthersArrive) {
    FaultInjectingFileLayer faults;
    const int fd = source_->stored_read(3)->fd;
    faults.fail_at(fd, stored_offset(3), EIO, 0);
    Streamer streamer(*backend_, settings(4, &faults));
    const TextureId id = streamer.add_texture(source_);
    const auto pages = pages_of(streamer, id);
    streamer.request(pages);
    ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
    for (std::size_t i = 0; i < pages.size(); ++i) EXPECT_EQ(streamer.is_ready(pages[i]), i != 3);
    try {
        streamer.rethrow_error();
        ADD_FAILURE() << "the failed read was not reported";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::io_error);
        EXPECT_NE(std::string(error.what()).find("page=3"), std::string::npos) << error.what();
    }
    const StreamerStatistics stats = streamer.statistics();
    EXPECT_EQ(stats.failed_pages, 1u);
    EXPECT_EQ(stats.file_reads.failed, 1u);
    EXPECT_EQ(stats.file_reads.buffers_in_use, 0u);
    expect_ready_pages_are_the_archive(streamer, id);
    EXPECT_EQ(streamer.page_table().statistics().pinned_pages, 1 + stats.level_pages)
        << "only the tail and the pages of packed levels are pinned";
}

// Completion is per page: while one read is held, every other page arrives.
TEST_P(StreamerHeldReadsTest, ASlowReadHoldsBackNoOtherPage) {
    HoldingLayer layer;
    layer.hold(stored_offset(1));
    Streamer streamer(*backend_, settings(4, &layer));
    const TextureId id = streamer.add_texture(source_);
    const auto pages = pages_of(streamer, id);
    streamer.request(pages);
    auto others_ready = [&] {
        for (std::size_t i = 0; i < pages.size(); ++i) {
            if (i != 1 && !streamer.is_ready(pages[i])) return false;
        }
        return true;
    };
    EXPECT_TRUE(eventually(others_ready)) << "pages behind the held read waited for it";
    EXPECT_FALSE(streamer.is_ready(pages[1]));
    EXPECT_EQ(layer.holding(), 1u);
    layer.release();
    ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
    EXPECT_TRUE(streamer.is_ready(pages[1]));
    expect_ready_pages_are_the_archive(streamer, id);
}

// With every read buffer taken, requests wait in the priority queue: withdrawn there, they are
// never committed, read or reported.
TEST_P(StreamerHeldReadsTest, RequestsWithdrawnWhileTheBuffersAreTakenNeverReachTheTable) {
    HoldingLayer layer;
    layer.hold(stored_offset(0));
    Streamer streamer(*backend_, settings(1, &layer));
    const TextureId id = streamer.add_texture(source_);
    const auto pages = pages_of(streamer, id);
    streamer.request(std::span(pages).first(1));
    ASSERT_TRUE(eventually([&] { return layer.holding() == 1; }));
    streamer.request(std::span(pages).subspan(1));
    EXPECT_EQ(streamer.pending_count(), pages.size() - 1);
    streamer.cancel(std::span(pages).subspan(1));
    layer.release();
    ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
    EXPECT_TRUE(streamer.is_ready(pages[0]));
    for (std::size_t i = 1; i < pages.size(); ++i) {
        EXPECT_FALSE(streamer.page_table().is_resident(pages[i])) << i;
    }
    EXPECT_EQ(streamer.statistics().file_reads.loaded, 1u);
}

// Destroying the streamer while reads are held returns once they are released, and leaves
// nothing behind (TearDown counts the descriptors; the backend its resources).
TEST_P(StreamerHeldReadsTest, DestructionWithReadsInFlightNeitherHangsNorLeaks) {
    const LiveResources baseline = backend_->live_resources();
    HoldingLayer layer;
    for (std::uint64_t page = 0; page < 4; ++page) layer.hold(stored_offset(page));
    std::thread releaser;
    {
        Streamer streamer(*backend_, settings(4, &layer));
        const TextureId id = streamer.add_texture(source_);
        streamer.request(pages_of(streamer, id));
        ASSERT_TRUE(eventually([&] { return layer.holding() == 4; }));
        releaser = std::thread([&] {
            std::this_thread::sleep_for(100ms);
            layer.release();
        });
    }  // destroyed with four reads held
    releaser.join();
    EXPECT_EQ(backend_->live_resources(), baseline);
}

std::string param_name(const testing::TestParamInfo<Param>& info) {
    return std::get<0>(info.param) + "_" + std::string(to_string(std::get<1>(info.param)));
}

INSTANTIATE_TEST_SUITE_P(Backends, StreamerFileReadsTest,
                         testing::Combine(testing::ValuesIn(test::all_backend_names()),
                                          testing::Values(FileReadBackend::threads,
                                                          FileReadBackend::io_uring)),
                         param_name);
INSTANTIATE_TEST_SUITE_P(Backends, StreamerHeldReadsTest,
                         testing::Combine(testing::ValuesIn(test::all_backend_names()),
                                          testing::Values(FileReadBackend::threads)),
                         param_name);

}  // namespace
}  // namespace vtpage::vt
