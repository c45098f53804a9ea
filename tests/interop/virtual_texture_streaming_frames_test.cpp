// VirtualTextureStreaming around its frames: the region sized from page_count, the per-frame
// publish limit, request-to-visible latency, the governors run where feedback is processed,
// pausing requests, and the statistics of feedback processed on the feedback thread and on the
// caller's thread. Procedural textures on the app's own (validated) device.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <vector>

#include "../support/backend_fixture.hpp"
#include "streaming_test_frame.hpp"
#include "vtpage/base/error.hpp"
#include "vtpage/interop/virtual_texture_streaming.hpp"
#include "vtpage/streaming/layout/texture_layout.hpp"
#include "vtpage/streaming/sources/procedural_source.hpp"
#include "vulkan_test_support.hpp"

namespace vtpage {
namespace {

using namespace std::chrono_literals;

constexpr std::size_t mib = std::size_t(1) << 20;
constexpr std::uint32_t texture_log2 = 10;

// Procedural pages are filled on the CPU: seconds each under ThreadSanitizer.
std::chrono::milliseconds idle_deadline() { return test::under_thread_sanitizer ? 300s : 30s; }

VirtualTextureStreamingSettings small_settings() {
    VirtualTextureStreamingSettings settings;
    settings.page_count = 64;  // the region: 64 pages, never multiplied out here
    settings.frames_in_flight = 1;
    settings.streamer.table.budget_bytes = 64 * mib;
    return settings;
}

// Feedback asking for every tile of every level above the texture's tail.
std::vector<vt::FeedbackEntry> every_tile(const vt::TextureLayout& layout, vt::TextureId id) {
    std::vector<vt::FeedbackEntry> feedback;
    for (std::uint32_t mip = 0; mip < layout.tail_first_mip; ++mip) {
        for (std::uint32_t y = 0; y < layout.mips[mip].tiles_y; ++y) {
            for (std::uint32_t x = 0; x < layout.mips[mip].tiles_x; ++x) {
                feedback.push_back(vt::FeedbackEntry::make({id, mip, x, y}));
            }
        }
    }
    return feedback;
}

class StreamingFramesTest : public testing::TestWithParam<std::string> {
protected:
    // The streaming on the app's device with one procedural texture.
    void start(VulkanContext& app, Backend& backend, VirtualTextureStreamingSettings settings) {
        streaming_ = std::make_unique<VirtualTextureStreaming>(app, backend, std::move(settings));
        id_ = streaming_->add_texture(std::make_shared<vt::ProceduralSource>(
            vt::ProceduralSettings{.size_log2 = texture_log2}));
        pool_ = test::make_command_pool(app);
    }
    // The small streaming, its feedback processed on a thread of its own or on the caller's;
    // feedback asking for every tile of its texture.
    std::vector<vt::FeedbackEntry> start_asking_for_every_tile(VulkanContext& app, Backend& backend,
                                                               bool feedback_thread) {
        VirtualTextureStreamingSettings settings = small_settings();
        settings.feedback_thread = feedback_thread;
        start(app, backend, settings);
        return every_tile(streaming_->streamer().textures().layout(id_), id_);
    }
    IndirectionUpload frame(VulkanContext& app, std::span<const vt::FeedbackEntry> feedback = {}) {
        return test::run_streaming_frame(app, *streaming_, pool_.get(), feedback);
    }
    std::vector<PageIndex> all_pages() const {
        const PageIndex base = streaming_->streamer().textures().base_page(id_);
        std::vector<PageIndex> pages;
        for (std::uint64_t page = 0; page < vt::TextureLayout(texture_log2).page_count; ++page) {
            pages.push_back(base + page);
        }
        return pages;
    }
    std::size_t visible(std::span<const PageIndex> pages) const {
        std::size_t count = 0;
        for (PageIndex page : pages) count += streaming_->indirection().slot_of(page) ? 1 : 0;
        return count;
    }
    void stop() {
        streaming_.reset();
        pool_ = {};
    }

    std::unique_ptr<VirtualTextureStreaming> streaming_;
    vt::TextureId id_ = 0;
    UniqueVkCommandPool pool_;
};

// The streamer's region holds the textures' pages and, past them, the hosts of packed pages
// (as many whatever the region): 64 pages of textures where page_count says 64, 128 where the
// region is set to 128 pages.
TEST_P(StreamingFramesTest, TheRegionIsSizedFromPageCountUnlessSet) {
    VTPAGE_BACKEND_OR_SKIP(backend, GetParam());
    VTPAGE_VULKAN_OR_SKIP(app, *backend);
    start(*app, *backend, small_settings());
    const std::uint64_t derived = streaming_->streamer().page_table().region().page_count();
    EXPECT_EQ(streaming_->indirection().page_count(), 64u);
    EXPECT_LT(derived, PageTableSettings{}.region_size / vt::page_bytes) << "not the default";
    stop();
    VirtualTextureStreamingSettings settings = small_settings();
    settings.page_count = 0;
    settings.streamer.table.region_size = 128 * vt::page_bytes;  // set: kept
    start(*app, *backend, settings);
    EXPECT_EQ(streaming_->streamer().page_table().region().page_count(), derived + 64);
    EXPECT_EQ(streaming_->indirection().page_count(), 128u);
    stop();
    test::expect_no_validation_messages(*app);
}

// The mip tail, visible in the first frame, is not limited; the pages streamed after it reach
// the table at most two a frame, and all of them in the end.
TEST_P(StreamingFramesTest, ThePublishLimitCapsThePagesMadeVisiblePerFrame) {
    VTPAGE_BACKEND_OR_SKIP(backend, GetParam());
    VTPAGE_VULKAN_OR_SKIP(app, *backend);
    VirtualTextureStreamingSettings settings = small_settings();
    settings.publish_limit = 2;
    start(*app, *backend, settings);
    const std::size_t tail = frame(*app).published_pages.size();
    EXPECT_EQ(streaming_->statistics().publish_limit, 2u);
    const std::vector<PageIndex> pages = all_pages();
    streaming_->streamer().request(pages);
    ASSERT_TRUE(streaming_->wait_idle(idle_deadline()));
    const std::size_t waiting = pages.size() - visible(pages);
    ASSERT_GT(waiting, 4u);
    std::size_t frames = 0;
    std::size_t published = 0;
    while (visible(pages) < pages.size() && frames < 2 * pages.size()) {
        const std::size_t made = frame(*app).published_pages.size();
        EXPECT_LE(made, 2u);
        published += made;
        ++frames;
    }
    EXPECT_EQ(visible(pages), pages.size());
    EXPECT_EQ(published, waiting);
    EXPECT_GE(frames, (waiting + 1) / 2);
    const StreamingStatistics statistics = streaming_->statistics();
    EXPECT_EQ(statistics.pages_made_visible, tail + published);
    EXPECT_EQ(statistics.most_made_visible, std::max<std::size_t>(tail, 2));
    stop();
    test::expect_no_validation_messages(*app);
}

// Pages the feedback of frame 1 asks for are visible from frame 2 on: one frame each.
TEST_P(StreamingFramesTest, LatencyCountsThePagesMadeVisibleAfterTheirRequest) {
    VTPAGE_BACKEND_OR_SKIP(backend, GetParam());
    VTPAGE_VULKAN_OR_SKIP(app, *backend);
    start(*app, *backend, small_settings());
    const std::vector<vt::FeedbackEntry> feedback =
        every_tile(streaming_->streamer().textures().layout(id_), id_);
    frame(*app, feedback);
    ASSERT_TRUE(streaming_->wait_idle(idle_deadline()));
    const std::size_t asked = streaming_->statistics().latency.tracked;
    EXPECT_GT(asked, 0u);
    EXPECT_EQ(streaming_->statistics().latency.samples, 0u);
    frame(*app, feedback);  // makes them visible, and its feedback applies that
    const vt::RequestLatencyStatistics latency = streaming_->statistics().latency;
    EXPECT_EQ(latency.samples, asked);
    EXPECT_EQ(latency.tracked, 0u);
    EXPECT_EQ(latency.frames_p50, 1u);
    EXPECT_EQ(latency.frames_max, 1u);
    EXPECT_LE(latency.samples, streaming_->statistics().pages_made_visible);
    stop();
    test::expect_no_validation_messages(*app);
}

// A governor whose device has no memory to spare and whose frames are all too slow: the budget
// falls to its floor, the publish limit to its least (under the app's own, the smaller wins)
// and the bias rises; the decisions show through statistics(), lod_bias() and on_governed.
TEST_P(StreamingFramesTest, TheGovernorsDecisionsAreAppliedAndVisible) {
    VTPAGE_BACKEND_OR_SKIP(backend, GetParam());
    VTPAGE_VULKAN_OR_SKIP(app, *backend);
    VirtualTextureStreamingSettings settings = small_settings();
    settings.publish_limit = 16;
    vt::StreamingGovernorSettings governor;
    governor.frame_ms_target = 1e-6;  // every measured frame is over it
    governor.min_budget_bytes = 16 * mib;
    governor.headroom_bytes = 32 * mib;
    governor.min_pages_per_frame = 8;
    governor.max_pages_per_frame = 8;
    settings.governor = governor;
    settings.memory_probe = [] { return MemoryInfo{256 * mib, 0}; };
    std::vector<GovernedFrame> heard;
    settings.on_governed = [&heard](const GovernedFrame& frame) { heard.push_back(frame); };
    start(*app, *backend, settings);
    EXPECT_EQ(streaming_->lod_bias(), 0.0f);
    EXPECT_EQ(streaming_->statistics().governor.budget_bytes, 64 * mib) << "no decision yet";
    frame(*app);  // no frame time yet: the memory alone
    frame(*app);  // one frame measured
    const StreamingStatistics statistics = streaming_->statistics();
    ASSERT_TRUE(statistics.governed);
    ASSERT_EQ(heard.size(), 2u);
    EXPECT_LT(heard[0].frame_ms, 0.0);
    EXPECT_GT(heard[1].frame_ms, 0.0);
    EXPECT_EQ(heard[1].decision, statistics.governor);
    EXPECT_EQ(statistics.governor.budget_bytes, 16 * mib);
    EXPECT_EQ(streaming_->streamer().page_table().budget_pages() *
                  streaming_->streamer().page_table().page_size(),
              16 * mib);
    EXPECT_EQ(statistics.governor.publish_limit, 8u);
    EXPECT_EQ(statistics.publish_limit, 8u);
    EXPECT_EQ(statistics.governor_statistics.frames, 2u);
    EXPECT_EQ(statistics.governor_statistics.frames_over_target, 1u);
    EXPECT_GT(statistics.governor.lod_bias, 0.0f);
    EXPECT_EQ(streaming_->lod_bias(), statistics.governor.lod_bias);
    stop();
    test::expect_no_validation_messages(*app);
}

// The streamer's decode threads are governed where feedback is processed when it chose them
// (decode_threads 0), and left alone when the app fixed their count; settings the decode
// threads' governor could not follow are refused before anything is made.
TEST_P(StreamingFramesTest, DecodeThreadsAreGovernedOnlyWhenTheStreamerChoseThem) {
    VTPAGE_BACKEND_OR_SKIP(backend, GetParam());
    VTPAGE_VULKAN_OR_SKIP(app, *backend);
    for (std::size_t decode_threads : {std::size_t(0), std::size_t(2)}) {
        SCOPED_TRACE(decode_threads);
        VirtualTextureStreamingSettings settings = small_settings();
        settings.streamer.file_reads.decode_threads = decode_threads;
        start(*app, *backend, settings);
        EXPECT_FALSE(streaming_->statistics().decode_threads_governed) << "no feedback yet";
        frame(*app);
        frame(*app);
        const StreamingStatistics statistics = streaming_->statistics();
        EXPECT_EQ(statistics.decode_threads_governed, decode_threads == 0);
        EXPECT_EQ(statistics.decode_threads.automatic, decode_threads == 0);
        EXPECT_GE(statistics.decode_threads.active, 1u);
        EXPECT_LE(statistics.decode_threads.active, statistics.decode_threads.pool);
        if (decode_threads > 0) {
            EXPECT_EQ(statistics.decode_threads.pool, decode_threads);
            EXPECT_EQ(statistics.decode_threads.active, decode_threads);
        }
        stop();
    }
    VirtualTextureStreamingSettings settings = small_settings();
    settings.decode_governor.window_updates = 0;
    try {
        VirtualTextureStreaming refused(*app, *backend, settings);
        ADD_FAILURE() << "a window of no updates was accepted";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::invalid_argument) << error.what();
    }
    test::expect_no_validation_messages(*app);
}

// The same feedback handled on the caller's thread and on the feedback thread: the statistics
// count it either way; while requests are paused it is processed and nothing is queued; what
// the view stops asking for is withdrawn.
TEST_P(StreamingFramesTest, StatisticsCountFeedbackOnEitherThreadAndPausing) {
    VTPAGE_BACKEND_OR_SKIP(backend, GetParam());
    VTPAGE_VULKAN_OR_SKIP(app, *backend);
    for (bool feedback_thread : {false, true}) {
        SCOPED_TRACE(feedback_thread ? "feedback thread" : "caller's thread");
        const std::vector<vt::FeedbackEntry> feedback =
            start_asking_for_every_tile(*app, *backend, feedback_thread);
        streaming_->pause_requests(true);
        frame(*app, feedback);
        ASSERT_TRUE(streaming_->drain_feedback(idle_deadline()));
        StreamingStatistics statistics = streaming_->statistics();
        EXPECT_EQ(statistics.feedback.posted, 1u);
        EXPECT_EQ(statistics.feedback.processed, 1u);
        EXPECT_EQ(statistics.last_feedback.samples, feedback.size());
        EXPECT_GT(statistics.last_feedback.requests, 0u);
        EXPECT_EQ(statistics.last_feedback.queued, 0u) << "paused";
        EXPECT_EQ(streaming_->streamer().pending_count(), 0u);
        streaming_->pause_requests(false);
        for (int i = 0; i < 2; ++i) {
            frame(*app, feedback);
            ASSERT_TRUE(streaming_->wait_idle(idle_deadline()));
        }
        statistics = streaming_->statistics();
        EXPECT_EQ(statistics.feedback.posted, 3u);
        EXPECT_EQ(statistics.feedback.processed + statistics.feedback.coalesced, 3u);
        EXPECT_GT(statistics.last_feedback.ready, 0u) << "the pages asked for after the pause";
        const std::vector<vt::FeedbackFrameResult> results = streaming_->take_feedback_results();
        ASSERT_FALSE(results.empty());
        EXPECT_EQ(results.back().frame, statistics.last_feedback.frame);
        EXPECT_TRUE(streaming_->take_feedback_results().empty());
        EXPECT_EQ(statistics.feedback.withdrawn, 0u) << "the view asked for the same pages";
        frame(*app);  // publishes what the last feedback brought in, and asks for nothing
        ASSERT_TRUE(streaming_->drain_feedback(idle_deadline()));
        const std::vector<PageIndex> pages = all_pages();
        EXPECT_EQ(visible(pages), pages.size());
        EXPECT_EQ(streaming_->statistics().feedback.withdrawn, statistics.last_feedback.requests)
            << "what the view no longer asks for is withdrawn";
        stop();
    }
    test::expect_no_validation_messages(*app);
}

// Feedback read before its frame is complete (post_feedback) becomes requests at once, and the
// frame stays open until complete_frame: the pages it used are not let go under it.
TEST_P(StreamingFramesTest, FeedbackPostedBeforeItsFrameCompletesLeavesTheFrameOpen) {
    VTPAGE_BACKEND_OR_SKIP(backend, GetParam());
    VTPAGE_VULKAN_OR_SKIP(app, *backend);
    for (bool feedback_thread : {false, true}) {
        SCOPED_TRACE(feedback_thread ? "feedback thread" : "caller's thread");
        const std::vector<vt::FeedbackEntry> feedback =
            start_asking_for_every_tile(*app, *backend, feedback_thread);
        const auto completed = [&] {
            return streaming_->streamer().page_table().statistics().completed_frame;
        };
        const FrameId first = test::submit_streaming_frame(*app, *streaming_, pool_.get()).id();
        streaming_->post_feedback(first, feedback);
        ASSERT_TRUE(streaming_->drain_feedback(idle_deadline()));
        EXPECT_EQ(streaming_->statistics().last_feedback.frame, first);
        EXPECT_GT(streaming_->statistics().last_feedback.queued, 0u);
        EXPECT_LT(completed(), first) << "its feedback was read, the frame is not complete";
        EXPECT_THROW(streaming_->post_feedback(first, feedback), Error) << "not a newer frame";

        streaming_->complete_frame(first);
        ASSERT_TRUE(streaming_->wait_idle(idle_deadline()));
        EXPECT_EQ(completed(), first);
        streaming_->complete_frame(first);  // again: nothing
        frame(*app);                        // publishes what the feedback brought in
        const std::vector<PageIndex> pages = all_pages();
        EXPECT_EQ(visible(pages), pages.size());
        EXPECT_EQ(streaming_->statistics().feedback.posted, 2u);
        stop();
    }
    test::expect_no_validation_messages(*app);
}

INSTANTIATE_TEST_SUITE_P(Backends, StreamingFramesTest,
                         testing::ValuesIn(test::all_backend_names()), test::backend_param_name);

}  // namespace
}  // namespace vtpage
