#include "vtpage/streaming/feedback/feedback_worker.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "../support/backend_fixture.hpp"
#include "streaming_test_support.hpp"
#include "vtpage/streaming/streamer/streamer.hpp"

namespace vtpage::vt {
namespace {

using namespace std::chrono_literals;

class FeedbackWorkerTest : public test::BackendTest {
protected:
    void TearDown() override { expect_baseline_resources("the streamer leaked"); }
    // A w x h window of mip 0 tiles starting at (x0, y0).
    static std::vector<FeedbackEntry> window(TextureId id, std::uint32_t x0, std::uint32_t y0,
                                             std::uint32_t w, std::uint32_t h) {
        std::vector<FeedbackEntry> entries;
        for (std::uint32_t y = y0; y < y0 + h; ++y) {
            for (std::uint32_t x = x0; x < x0 + w; ++x) {
                entries.push_back(FeedbackEntry::make({id, 0, x, y}));
            }
        }
        entries.push_back(FeedbackEntry{});  // an empty pixel is skipped
        return entries;
    }
    static PageIndex page_of(const Streamer& streamer, TextureId id, std::uint32_t x,
                             std::uint32_t y) {
        const TextureSet& set = streamer.textures();
        return set.base_page(id) + set.layout(id).locate(0, x, y).page;
    }
};

TEST_P(FeedbackWorkerTest, PostedFeedbackBecomesResidentPagesAndCompletesItsFrame) {
    Streamer streamer(*backend_, test::streamer_test_settings(64));
    const TextureId id = streamer.add_texture(std::make_shared<test::PatternSource>(12, 4));
    FeedbackWorker worker(streamer);
    const FrameId frame = streamer.begin_frame();
    const auto view = window(id, 2, 3, 4, 2);  // 4 x 2 tiles on two pages
    worker.post(frame, view);
    ASSERT_TRUE(worker.drain(10s));
    ASSERT_EQ(worker.take_error(), nullptr);
    const FeedbackFrameResult result = worker.last_result();
    EXPECT_EQ(result.frame, frame);
    EXPECT_EQ(result.samples, 8u);
    EXPECT_EQ(result.requests,
              FeedbackProcessor(streamer.textures()).process(view).requests.size());
    EXPECT_GT(result.requests, 2u);  // the two pages and their parents
    EXPECT_EQ(result.queued + result.ready, result.requests);
    EXPECT_EQ(streamer.page_table().statistics().completed_frame, frame);
    ASSERT_TRUE(streamer.wait_idle_while_progressing(30s));
    for (std::uint32_t y = 3; y < 5; ++y) {
        for (std::uint32_t x = 2; x < 6; ++x)
            EXPECT_TRUE(streamer.is_ready(page_of(streamer, id, x, y)));
    }
    // The same view again: everything it asks for is resident now.
    const FrameId again = streamer.begin_frame();
    worker.post(again, window(id, 2, 3, 4, 2));
    ASSERT_TRUE(worker.drain(10s));
    EXPECT_EQ(worker.last_result().ready, worker.last_result().requests);
    EXPECT_EQ(worker.take_results().size(), 2u);
    EXPECT_TRUE(worker.take_results().empty());
}

// A view that moved on withdraws the requests that were still waiting.
TEST_P(FeedbackWorkerTest, RequestsTheNewestViewNoLongerMakesAreWithdrawn) {
    auto s = test::streamer_test_settings(256);
    s.worker_threads = 1;
    s.batch_pages = 1;
    Streamer streamer(*backend_, s);
    auto source = std::make_shared<test::PatternSource>(14, 6);
    source->delay = 20ms;  // the first view cannot be streamed before the second arrives
    const TextureId id = streamer.add_texture(source);
    // The hooks see each feedback's frame and requests, and the pages withdrawn (worker thread;
    // read after drain()).
    std::vector<std::pair<FrameId, std::size_t>> requested;
    std::size_t withdrawn = 0;
    FeedbackWorkerSettings worker_settings;
    worker_settings.on_requests = [&](FrameId frame, std::span<const PageRequest> requests) {
        requested.emplace_back(frame, requests.size());
    };
    worker_settings.on_withdrawn = [&](std::span<const PageIndex> pages) {
        withdrawn += pages.size();
    };
    FeedbackWorker worker(streamer, worker_settings);
    const FrameId first = streamer.begin_frame();
    worker.post(first, window(id, 0, 0, 64, 32));  // 8 x 8 pages
    ASSERT_TRUE(worker.drain(10s));
    const std::size_t first_requests = worker.last_result().requests;
    const FrameId second = streamer.begin_frame();
    worker.post(second, window(id, 100, 100, 2, 2));
    ASSERT_TRUE(worker.drain(10s));
    const FeedbackFrameResult moved = worker.last_result();
    EXPECT_GT(moved.withdrawn, 40u);
    EXPECT_EQ(worker.statistics().withdrawn, moved.withdrawn);
    EXPECT_EQ(requested, (std::vector<std::pair<FrameId, std::size_t>>{{first, first_requests},
                                                                       {second, moved.requests}}));
    EXPECT_EQ(withdrawn, moved.withdrawn);
    // Withdrawn pages still pending were cancelled; those a worker had taken were not.
    const std::uint64_t cancelled = streamer.statistics().cancelled_requests;
    EXPECT_GT(cancelled, 0u);
    EXPECT_LE(cancelled, moved.withdrawn);
    EXPECT_FALSE(streamer.is_queued(page_of(streamer, id, 60, 28)));
    EXPECT_TRUE(streamer.is_queued(page_of(streamer, id, 101, 101)) ||
                streamer.is_ready(page_of(streamer, id, 101, 101)));
    ASSERT_TRUE(streamer.wait_idle_while_progressing(test::under_thread_sanitizer ? 300s : 60s));
    EXPECT_TRUE(streamer.is_ready(page_of(streamer, id, 101, 101)));
}

// The render thread never waits: frames posted faster than they are processed replace the
// waiting feedback, and every frame is completed all the same.
TEST_P(FeedbackWorkerTest, FramesPostedFasterThanProcessedAreCoalescedAndAllComplete) {
    Streamer streamer(*backend_, test::streamer_test_settings(64));
    const TextureId id = streamer.add_texture(std::make_shared<test::PatternSource>(14, 8));
    FeedbackWorker worker(streamer);
    // A large feedback takes the worker a while, so that later posts find it waiting.
    std::vector<FeedbackEntry> large;
    for (int i = 0; i < 40; ++i) {
        auto part = window(id, 0, 0, 100, 100);
        large.insert(large.end(), part.begin(), part.end());
    }
    FrameId last = 0;
    const int frames = test::under_thread_sanitizer ? 20 : 60;
    for (int f = 0; f < frames; ++f) {
        last = streamer.begin_frame();
        worker.post(last, large);
    }
    ASSERT_TRUE(worker.drain(60s));
    const FeedbackWorkerStatistics statistics = worker.statistics();
    EXPECT_EQ(statistics.posted, std::uint64_t(frames));
    EXPECT_EQ(statistics.processed + statistics.coalesced, statistics.posted);
    EXPECT_GT(statistics.coalesced, 0u) << "posting never found the worker busy";
    EXPECT_EQ(statistics.handoff.count, statistics.processed);
    EXPECT_EQ(worker.last_result().frame, last);
    EXPECT_EQ(streamer.page_table().statistics().completed_frame, last);
}

TEST_P(FeedbackWorkerTest, PausedRequestsQueueNothingButCompleteTheFrame) {
    Streamer streamer(*backend_, test::streamer_test_settings(64));
    const TextureId id = streamer.add_texture(std::make_shared<test::PatternSource>(12, 2));
    FeedbackWorker worker(streamer);
    worker.pause_requests(true);
    const FrameId frame = streamer.begin_frame();
    worker.post(frame, window(id, 0, 0, 3, 3));
    ASSERT_TRUE(worker.drain(10s));
    EXPECT_EQ(worker.last_result().samples, 9u);
    EXPECT_EQ(worker.last_result().queued, 0u);
    EXPECT_EQ(streamer.pending_count(), 0u);
    EXPECT_EQ(streamer.page_table().statistics().completed_frame, frame);
}

TEST_P(FeedbackWorkerTest, FramesOutOfOrderAreRefusedAndDestructionCompletesPostedFrames) {
    Streamer streamer(*backend_, test::streamer_test_settings(64));
    const TextureId id = streamer.add_texture(std::make_shared<test::PatternSource>(12, 3));
    FrameId last = 0;
    {
        FeedbackWorker worker(streamer);
        const FrameId first = streamer.begin_frame();
        last = streamer.begin_frame();
        worker.post(last, window(id, 0, 0, 2, 2));
        try {
            worker.post(first, window(id, 0, 0, 2, 2));
            ADD_FAILURE() << "an older frame was accepted";
        } catch (const Error& error) {
            EXPECT_EQ(error.code(), Errc::invalid_argument);
            EXPECT_NE(std::string(error.what()).find("increasing order"), std::string::npos);
        }
    }
    EXPECT_EQ(streamer.page_table().statistics().completed_frame, last);
}

// Feedback read before its frame is complete: its requests go out at once, the frame is
// completed only when complete() says so (after the requests of the feedback posted before),
// and destruction completes no frame that was not.
TEST_P(FeedbackWorkerTest, FeedbackPostedAheadOfItsFrameLeavesTheFrameOpenUntilCompleted) {
    Streamer streamer(*backend_, test::streamer_test_settings(64));
    const TextureId id = streamer.add_texture(std::make_shared<test::PatternSource>(12, 4));
    const auto completed = [&] { return streamer.page_table().statistics().completed_frame; };
    FrameId second = 0;
    {
        FeedbackWorker worker(streamer);
        const FrameId first = streamer.begin_frame();
        worker.post_feedback(first, window(id, 2, 3, 4, 2));
        ASSERT_TRUE(worker.drain(10s));
        ASSERT_EQ(worker.take_error(), nullptr);
        EXPECT_EQ(worker.last_result().frame, first);
        EXPECT_GT(worker.last_result().queued, 2u);
        EXPECT_EQ(completed(), 0u) << "the frame may still be drawn";

        second = streamer.begin_frame();
        worker.post_feedback(second, window(id, 2, 3, 4, 2));
        worker.complete(first);
        worker.complete(first);  // again: nothing
        ASSERT_TRUE(worker.drain(10s));
        EXPECT_EQ(completed(), first);
        EXPECT_THROW(worker.complete(first - 1), Error) << "an older frame";
        EXPECT_THROW(worker.post(second, window(id, 2, 3, 4, 2)), Error) << "posted already";
        worker.complete(second);
        ASSERT_TRUE(worker.drain(10s));
        EXPECT_EQ(completed(), second);
        EXPECT_EQ(worker.statistics().posted, 2u);

        const FrameId third = streamer.begin_frame();
        worker.post_feedback(third, window(id, 2, 3, 4, 2));
        ASSERT_TRUE(worker.drain(10s));
        ASSERT_EQ(worker.take_error(), nullptr);
    }
    EXPECT_EQ(completed(), second) << "the third frame was never completed";
    ASSERT_TRUE(streamer.wait_idle_while_progressing(30s));
    for (std::uint32_t y = 3; y < 5; ++y) {
        for (std::uint32_t x = 2; x < 6; ++x)
            EXPECT_TRUE(streamer.is_ready(page_of(streamer, id, x, y)));
    }
}

TEST_P(FeedbackWorkerTest, AfterFrameRunsOnTheWorkersThreadAndItsErrorIsKept) {
    Streamer streamer(*backend_, test::streamer_test_settings(64));
    const TextureId id = streamer.add_texture(std::make_shared<test::PatternSource>(12, 5));
    std::vector<FrameId> seen;
    std::thread::id hook_thread;
    FeedbackWorkerSettings worker_settings;
    worker_settings.after_frame = [&](const FeedbackFrameResult& result) {
        seen.push_back(result.frame);
        hook_thread = std::this_thread::get_id();
        if (result.frame == 2) throw Error(Errc::busy, "after_frame", "made to fail");
    };
    FeedbackWorker worker(streamer, worker_settings);
    for (int f = 0; f < 3; ++f) {
        worker.post(streamer.begin_frame(), window(id, 0, 0, 2, 2));
        ASSERT_TRUE(worker.drain(10s));
    }
    EXPECT_EQ(seen, (std::vector<FrameId>{1, 2, 3}));
    EXPECT_NE(hook_thread, std::this_thread::get_id());
    const std::exception_ptr error = worker.take_error();
    ASSERT_NE(error, nullptr);
    try {
        std::rethrow_exception(error);
    } catch (const Error& caught) {
        EXPECT_EQ(caught.code(), Errc::busy);
    }
    EXPECT_EQ(streamer.page_table().statistics().completed_frame, 3u);
}

INSTANTIATE_TEST_SUITE_P(Backends, FeedbackWorkerTest, testing::ValuesIn(test::all_backend_names()),
                         test::backend_param_name);

}  // namespace
}  // namespace vtpage::vt
