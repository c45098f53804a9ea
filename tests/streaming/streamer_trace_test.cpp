// The streamer's trace points: pages of a baked archive streamed on the host backend (two
// workers, two decode threads) with a recorder installed, frames simulated with the app's
// first-visible call; the trace written to a file is valid Chrome JSON, and every page's stages
// come in the pipeline's order.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>
#include <thread>

#include "../support/backend_fixture.hpp"
#include "streaming_test_support.hpp"
#include "vtpage/base/trace.hpp"
#include "vtpage/streaming/sources/baked_texture.hpp"
#include "vtpage/streaming/streamer/streamer.hpp"

namespace vtpage::vt {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;

// A stored page's stages, in the order the pipeline does them: requested, committed by a worker,
// read, decoded and filled on the loader's threads, reported ready, first drawn by the app.
const std::vector<std::string> stages = {"request", "commit", "read",   "decode",
                                         "fill",    "ready",  "visible"};

class StreamerTraceTest : public testing::Test {
protected:
    void SetUp() override {
        std::string reason;
        backend_ = test::try_make_backend("host", reason);
        if (!backend_) GTEST_SKIP() << reason;
        path_ = folder_.file("image.vtex");
        test::write_rgba8_archive(test::make_test_image(1500, 1100, 9), path_);
    }

    StreamerSettings settings() const {
        StreamerSettings s = test::streamer_test_settings(64);
        s.worker_threads = 2;
        s.batch_pages = 4;  // several batches, on both workers
        s.queue_events = true;
        s.file_reads.decode_threads = 2;
        s.file_reads.read_buffers = 8;
        return s;
    }

    // Streams every page of the archive but its tail, a frame at a time as an app would: each
    // frame asks for the pages not drawn yet and draws (page_visible) those reported ready.
    std::set<PageIndex> stream_frames(Streamer& streamer) {
        const TextureId id = streamer.add_texture(std::make_shared<BakedFileSource>(path_));
        std::vector<PageIndex> wanted(streamer.textures().layout(id).page_count - 1);
        std::iota(wanted.begin(), wanted.end(), streamer.textures().base_page(id));
        std::set<PageIndex> visible;
        std::set<PageIndex> ready;
        const auto deadline = std::chrono::steady_clock::now() + 60s;
        while (visible.size() < wanted.size() && std::chrono::steady_clock::now() < deadline) {
            const FrameId frame = streamer.begin_frame();
            std::vector<PageIndex> missing;
            for (PageIndex page : wanted) {
                if (!visible.count(page)) missing.push_back(page);
            }
            streamer.request(missing);
            for (const StreamerEvent& event : streamer.poll_events()) {
                if (event.kind == StreamerEventKind::ready) ready.insert(event.page.page);
            }
            for (PageIndex page : missing) {
                if (ready.count(page) && visible.insert(page).second) {
                    trace::page_visible(page, frame);
                }
            }
            streamer.complete_frame(frame);
            std::this_thread::sleep_for(1ms);
        }
        EXPECT_EQ(visible.size(), wanted.size()) << "pages never became ready";
        return visible;
    }

    std::unique_ptr<Backend> backend_;
    test::TemporaryFolder folder_;
    std::string path_;
};

TEST_F(StreamerTraceTest, EveryStoredPageGoesThroughItsStagesInOrder) {
    TraceRecorder recorder;
    recorder.install();
    std::set<PageIndex> pages;
    {
        Streamer streamer(*backend_, settings());
        pages = stream_frames(streamer);
    }
    recorder.uninstall();
    ASSERT_FALSE(pages.empty());
    EXPECT_EQ(recorder.statistics().dropped, 0u);
    const std::string file = folder_.file("trace.json");
    recorder.write_file(file);

    std::ifstream in(file);
    const Json trace = Json::parse(in);
    ASSERT_TRUE(trace.at("traceEvents").is_array());
    std::map<std::uint64_t, std::string> thread_names;
    std::set<std::uint64_t> threads_with_events;
    // The first time each page reached each stage: start and end.
    std::map<PageIndex, std::map<std::string, std::pair<double, double>>> first;
    std::set<std::string> frame_markers;
    for (const Json& event : trace.at("traceEvents")) {
        for (const char* key : {"ph", "ts", "pid", "tid"}) {
            ASSERT_TRUE(event.contains(key)) << key << " missing in " << event.dump();
        }
        const std::string phase = event.at("ph");
        const std::uint64_t tid = event.at("tid");
        if (phase == "M") {
            if (event.at("name") == "thread_name") thread_names[tid] = event.at("args").at("name");
            continue;
        }
        threads_with_events.insert(tid);
        const double start = event.at("ts");
        double end = start;
        if (phase == "X") {
            ASSERT_GE(event.at("dur").get<double>(), 0.0) << event.dump();
            end += event.at("dur").get<double>();
        }
        const std::string name = event.at("name");
        if (event.at("cat") == "frame") frame_markers.insert(name);
        if (event.at("cat") != "page" || !event.at("args").contains("page")) continue;
        auto& stage = first[event.at("args").at("page").get<PageIndex>()];
        if (!stage.count(name) || start < stage[name].first) stage[name] = {start, end};
        if (name == "decode") {
            EXPECT_EQ(thread_names[tid].rfind("vtpage decode ", 0), 0u) << thread_names[tid];
        }
        if (name == "commit") {
            EXPECT_EQ(thread_names[tid].rfind("vtpage worker ", 0), 0u) << thread_names[tid];
        }
    }
    for (std::uint64_t tid : threads_with_events) EXPECT_TRUE(thread_names.count(tid)) << tid;
    EXPECT_TRUE(frame_markers.count("begin_frame"));
    EXPECT_TRUE(frame_markers.count("complete_frame"));

    constexpr double rounding = 0.002;  // microseconds: three decimals each side
    for (PageIndex page : pages) {
        SCOPED_TRACE("page " + std::to_string(page));
        const auto& stage = first[page];
        for (const std::string& name : stages) ASSERT_TRUE(stage.count(name)) << name;
        for (std::size_t i = 1; i < stages.size(); ++i) {
            EXPECT_LE(stage.at(stages[i - 1]).first, stage.at(stages[i]).first + rounding)
                << stages[i - 1] << " after " << stages[i];
        }
        // The read is complete before its decode begins, the decode before the fill ends.
        EXPECT_LE(stage.at("read").second, stage.at("decode").first + rounding);
        EXPECT_LE(stage.at("decode").second, stage.at("fill").second + rounding);
        EXPECT_LE(stage.at("fill").second, stage.at("ready").first + rounding);
    }
}

TEST_F(StreamerTraceTest, NothingIsRecordedWithoutAnInstalledRecorder) {
    TraceRecorder recorder;  // made, never installed
    {
        Streamer streamer(*backend_, settings());
        stream_frames(streamer);
    }
    EXPECT_EQ(recorder.statistics().recorded, 0u);
    EXPECT_EQ(TraceRecorder::installed(), nullptr);
}

}  // namespace
}  // namespace vtpage::vt
