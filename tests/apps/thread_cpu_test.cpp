// Which threads spent a measurement's CPU time: /proc's stat lines read as the kernel writes them
// (names with spaces and parentheses among them), kinds without their numbers, the difference
// between two samples counted by hand, and a live named thread found spinning.
#include <gtest/gtest.h>

#include <pthread.h>

#include <thread>

#include "../support/cpu_spin.hpp"
#include "vtpage/app/thread_cpu.hpp"

namespace vtpage::app {
namespace {

TEST(ThreadCpuTest, ReadsATasksStatLine) {
    const auto task = parse_task_stat(
        "4242 (vtp-decode 12) S 4200 4200 4100 34816 4200 1077936192 2304 0 0 0 731 95 0 0 30 10 "
        "21 0 90157 2164260864 6211 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 -1 7 0 0\n");
    ASSERT_TRUE(task.has_value());
    EXPECT_EQ(task->name, "vtp-decode 12");
    EXPECT_EQ(task->ticks, 731u + 95u);
    // A name may hold ") (": it ends at the last ')'.
    const auto odd = parse_task_stat("7 (a) (b c) R 1 1 1 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 1");
    ASSERT_TRUE(odd.has_value());
    EXPECT_EQ(odd->name, "a) (b c");
    EXPECT_EQ(odd->ticks, 11u);
}

TEST(ThreadCpuTest, RefusesLinesThatDoNotParse) {
    EXPECT_FALSE(parse_task_stat("").has_value());
    EXPECT_FALSE(parse_task_stat("7 vtp R 1 1 1 0 -1 0 0 0 0 0 5 6").has_value());  // no ( )
    EXPECT_FALSE(parse_task_stat("7 (vtp) R 1 1 1 0 -1 0 0 0 0 0 5").has_value());  // no stime
    EXPECT_FALSE(parse_task_stat("7 (vtp) R 1 1 1 0 -1 0 0 0 0 0 5 x").has_value());
    EXPECT_FALSE(parse_task_stat("7 (vtp) R 1 1 1 0 -1 0 0 0 0 0 -5 6").has_value());
}

TEST(ThreadCpuTest, AKindIsTheNameWithoutItsNumber) {
    EXPECT_EQ(thread_kind("vtp-decode 12"), "vtp-decode");
    EXPECT_EQ(thread_kind("vtp-worker 0"), "vtp-worker");
    EXPECT_EQ(thread_kind("vtp-lander"), "vtp-lander");
    EXPECT_EQ(thread_kind("cuda-EvtHandlr"), "cuda-EvtHandlr");
    EXPECT_EQ(thread_kind("1234"), "1234");
    EXPECT_EQ(thread_kind(""), "");
}

TEST(ThreadCpuTest, CountsWhatEachKindSpentBetweenTwoSamples) {
    ThreadCpuSample before, after;
    before.threads = {{10, {"vtp-decode", 1.0}},
                      {11, {"vtp-decode", 2.0}},
                      {12, {"main", 5.0}},
                      {13, {"vtp-worker", 1.0}}};
    after.threads = {{10, {"vtp-decode", 1.5}},    // spent 0.5
                     {11, {"vtp-decode", 2.25}},   // 0.25
                     {12, {"main", 5.0}},          // nothing
                     {14, {"vtp-decode", 0.5}},    // started since: all of it
                     {13, {"vtp-lander", 0.75}}};  // the id of an ended worker, reused
    const auto kinds = cpu_by_kind_between(before, after);
    EXPECT_DOUBLE_EQ(kinds.at("vtp-decode"), 1.25);
    EXPECT_DOUBLE_EQ(kinds.at("main"), 0.0);
    EXPECT_DOUBLE_EQ(kinds.at("vtp-lander"), 0.75);
    EXPECT_EQ(kinds.count("vtp-worker"), 0u);  // ended: not seen
}

TEST(ThreadCpuTest, FindsANamedThreadSpinning) {
    const ThreadCpuSample before = sample_threads();
    ASSERT_FALSE(before.threads.empty()) << "/proc/self/task was not read";
    ThreadCpuSample during;
    std::thread spinner([&] {
        ::pthread_setname_np(::pthread_self(), "cpu-test 3");
        test::spin_this_thread_for(0.1);
        during = sample_threads();  // while the thread is alive
    });
    spinner.join();
    const auto kinds = cpu_by_kind_between(before, during);
    ASSERT_EQ(kinds.count("cpu-test"), 1u);
    // Clock ticks are 10 ms: 0.1 s of spinning is at least 0.08 s of them.
    EXPECT_GE(kinds.at("cpu-test"), 0.08);
}

}  // namespace
}  // namespace vtpage::app
