// TraceRecorder: the Chrome JSON it writes, its bounded per-thread rings, and that nothing is
// recorded while no recorder is installed.
#include <gtest/gtest.h>
#include <pthread.h>

#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "vtpage/base/error.hpp"
#include "vtpage/base/trace.hpp"

namespace vtpage {
namespace {

using Json = nlohmann::json;

// The events of a trace that are not metadata.
std::vector<Json> recorded_events(const TraceRecorder& recorder) {
    const Json trace = Json::parse(recorder.json());
    std::vector<Json> events;
    for (const Json& event : trace.at("traceEvents")) {
        if (event.at("ph") != "M") events.push_back(event);
    }
    return events;
}

TEST(TraceRecorder, WritesCompleteInstantAndFrameEventsWithThreadNames) {
    TraceRecorder recorder;
    recorder.install();
    trace::name_thread("test main");
    { VTPAGE_TRACE_SCOPE("test", "scope", .page = 7); }
    trace::instant("test", "instant", {.count = 3});
    recorder.frame_marker("begin_frame", 5);
    trace::page_visible(7, 5);
    recorder.uninstall();

    const Json trace = Json::parse(recorder.json());
    ASSERT_TRUE(trace.contains("traceEvents"));
    std::set<std::string> names;
    bool thread_named = false;
    for (const Json& event : trace.at("traceEvents")) {
        for (const char* key : {"ph", "ts", "pid", "tid"}) EXPECT_TRUE(event.contains(key)) << key;
        if (event.at("ph") == "M") {
            if (event.at("name") == "thread_name" && event.at("args").at("name") == "test main")
                thread_named = true;
            continue;
        }
        names.insert(event.at("name").get<std::string>());
        if (event.at("ph") == "X") {
            EXPECT_GE(event.at("dur").get<double>(), 0.0);
        }
    }
    EXPECT_TRUE(thread_named);
    EXPECT_EQ(names, (std::set<std::string>{"scope", "instant", "begin_frame", "visible"}));
    for (const Json& event : recorded_events(recorder)) {
        if (event.at("name") == "scope") {
            EXPECT_EQ(event.at("ph"), "X");
            EXPECT_EQ(event.at("args").at("page"), 7);
        }
        if (event.at("name") == "begin_frame") {
            EXPECT_EQ(event.at("s"), "g");
            EXPECT_EQ(event.at("args").at("frame"), 5);
        }
        if (event.at("name") == "visible") {
            EXPECT_EQ(event.at("args").at("frame"), 5);
        }
    }
    EXPECT_EQ(recorder.statistics().recorded, 4u);
}

std::string system_name_of_this_thread() {
    char name[16] = {};
    ::pthread_getname_np(::pthread_self(), name, sizeof(name));
    return name;
}

TEST(TraceRecorder, NamesTheLibrarysThreadsForTheSystemButNotTheMainThread) {
    EXPECT_EQ(trace::system_thread_name("vtpage decode 12"), "vtp-decode 12");
    EXPECT_EQ(trace::system_thread_name("vtpage read completions"), "vtp-read comple");
    EXPECT_EQ(trace::system_thread_name("vtpage page cache copier"), "vtp-page cache");
    EXPECT_EQ(trace::system_thread_name("viewer render"), "viewer render");
    EXPECT_EQ(trace::system_thread_name(""), "");
    std::string seen;
    std::thread([&] {
        trace::name_thread("vtpage decode 12");
        seen = system_name_of_this_thread();
    }).join();
    EXPECT_EQ(seen, "vtp-decode 12");
    // The main thread's system name is the process's: kept.
    const std::string before = system_name_of_this_thread();
    trace::name_thread("vtpage not the process");
    EXPECT_EQ(system_name_of_this_thread(), before);
    trace::name_thread("test main");
}

TEST(TraceRecorder, AFullRingDropsItsOldestEventsAndCountsThem) {
    TraceRecorder recorder({.events_per_thread = 8});
    recorder.install();
    for (std::uint64_t i = 0; i < 20; ++i) trace::instant("test", "tick", {.count = i});
    recorder.uninstall();

    const TraceStatistics stats = recorder.statistics();
    EXPECT_EQ(stats.recorded, 20u);
    EXPECT_EQ(stats.dropped, 12u);
    EXPECT_EQ(stats.retained, 8u);
    std::vector<std::uint64_t> kept;
    for (const Json& event : recorded_events(recorder)) {
        kept.push_back(event.at("args").at("count").get<std::uint64_t>());
    }
    EXPECT_EQ(kept, (std::vector<std::uint64_t>{12, 13, 14, 15, 16, 17, 18, 19}));
    const Json trace = Json::parse(recorder.json());
    EXPECT_EQ(trace.at("otherData").at("dropped"), 12);
}

TEST(TraceRecorder, ThreadsBeyondTheLimitRecordNothingAndAreCounted) {
    TraceRecorder recorder({.events_per_thread = 4, .max_threads = 1});
    recorder.install();
    trace::instant("test", "main");
    std::thread([] { trace::instant("test", "other"); }).join();
    recorder.uninstall();
    const TraceStatistics stats = recorder.statistics();
    EXPECT_EQ(stats.threads, 1u);
    EXPECT_EQ(stats.recorded, 1u);
    EXPECT_EQ(stats.dropped_threads, 1u);
}

TEST(TraceRecorder, RecordsNothingWhileNotInstalled) {
    TraceRecorder recorder;
    EXPECT_EQ(trace::active(), nullptr);
    { VTPAGE_TRACE_SCOPE("test", "scope"); }
    trace::instant("test", "instant");
    trace::page_visible(1, 1);
    recorder.install();
    recorder.uninstall();
    trace::instant("test", "after");
    EXPECT_EQ(recorder.statistics().recorded, 0u);
    EXPECT_TRUE(recorded_events(recorder).empty());
}

TEST(TraceRecorder, RefusesAnEmptyBudget) {
    EXPECT_THROW(TraceRecorder({.events_per_thread = 0}), Error);
}

}  // namespace
}  // namespace vtpage
