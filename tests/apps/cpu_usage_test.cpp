// The cores a benchmark's row had: /proc/stat's first line read as the kernel writes it, every
// malformed line refused, the shares between two samples counted by hand, and a live sample
// that sees this thread's own spinning.
#include <gtest/gtest.h>

#include "../support/cpu_spin.hpp"
#include "vtpage/app/cpu_usage.hpp"

namespace vtpage::app {
namespace {

TEST(CpuUsageTest, ReadsTheMachineLineOfProcStat) {
    const auto ticks =
        parse_proc_stat_cpu("cpu  10132153 290696 3084719 46828483 16683 0 25195 175628 0 0\n");
    ASSERT_TRUE(ticks.has_value());
    EXPECT_EQ(ticks->busy, 10132153u + 290696u + 3084719u + 0u + 25195u);
    EXPECT_EQ(ticks->idle, 46828483u + 16683u);
    EXPECT_EQ(ticks->steal, 175628u);
    // Kernels before guests were counted write 8 fields: enough.
    EXPECT_TRUE(parse_proc_stat_cpu("cpu 1 2 3 4 5 6 7 8").has_value());
}

TEST(CpuUsageTest, RefusesEveryOtherLine) {
    EXPECT_FALSE(parse_proc_stat_cpu("cpu0 1 2 3 4 5 6 7 8").has_value());  // one CPU's line
    EXPECT_FALSE(parse_proc_stat_cpu("intr 1 2 3 4 5 6 7 8").has_value());
    EXPECT_FALSE(parse_proc_stat_cpu("cpu 1 2 3 4 5 6 7").has_value());  // no steal field
    EXPECT_FALSE(parse_proc_stat_cpu("cpu 1 2 x 4 5 6 7 8").has_value());
    EXPECT_FALSE(parse_proc_stat_cpu("cpu 1 2 -3 4 5 6 7 8").has_value());
    EXPECT_FALSE(parse_proc_stat_cpu("cpu 1 2 3.5 4 5 6 7 8").has_value());
    EXPECT_FALSE(parse_proc_stat_cpu("cpu 1 2 3 4 5 6 7 99999999999999999999999").has_value());
    EXPECT_FALSE(parse_proc_stat_cpu("").has_value());
}

CpuSample at(double seconds, MachineTicks machine, double process_seconds) {
    CpuSample sample;
    sample.when = std::chrono::steady_clock::time_point(
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            std::chrono::duration<double>(seconds)));
    sample.machine = machine;
    sample.process_seconds = process_seconds;
    return sample;
}

TEST(CpuUsageTest, SharesTheCoresBetweenThisProcessOthersAndSteal) {
    // 2 s at 100 ticks a second: 3 cores busy (one of them this process), 1 stolen, 12 idle.
    const CpuSample before = at(10, {.busy = 1000, .idle = 5000, .steal = 100}, 1.0);
    const CpuSample after = at(12, {.busy = 1600, .idle = 7400, .steal = 300}, 3.0);
    const CpuUsage usage = cpu_usage_between(before, after, 100);
    EXPECT_DOUBLE_EQ(usage.seconds, 2.0);
    EXPECT_DOUBLE_EQ(usage.process_seconds, 2.0);
    EXPECT_DOUBLE_EQ(usage.process_cores, 1.0);
    ASSERT_TRUE(usage.machine_known);
    EXPECT_DOUBLE_EQ(usage.other_cores, 2.0);
    EXPECT_DOUBLE_EQ(usage.steal_cores, 1.0);
    EXPECT_DOUBLE_EQ(usage.idle_cores, 12.0);
}

TEST(CpuUsageTest, NeverCountsBelowZero) {
    // The process's own clock ran ahead of the machine's ticks: nobody else was busy.
    const CpuSample before = at(0, {.busy = 100, .idle = 100, .steal = 10}, 0.0);
    const CpuUsage ahead = cpu_usage_between(before, at(1, {100 + 50, 100, 10}, 1.0), 100);
    EXPECT_DOUBLE_EQ(ahead.process_cores, 1.0);
    EXPECT_DOUBLE_EQ(ahead.other_cores, 0.0);
    // Samples in the wrong order: no time, nothing spent.
    const CpuUsage backwards = cpu_usage_between(at(5, {200, 200, 20}, 2.0), before, 100);
    EXPECT_DOUBLE_EQ(backwards.seconds, 0.0);
    EXPECT_DOUBLE_EQ(backwards.process_seconds, 0.0);
    EXPECT_FALSE(backwards.machine_known);
    // Counters that went back count as zero.
    const CpuUsage reset = cpu_usage_between(before, at(1, {50, 50, 5}, 0.5), 100);
    EXPECT_DOUBLE_EQ(reset.other_cores, 0.0);
    EXPECT_DOUBLE_EQ(reset.steal_cores, 0.0);
    EXPECT_DOUBLE_EQ(reset.idle_cores, 0.0);
}

TEST(CpuUsageTest, WithoutTheMachinesTicksOnlyTheProcessIsKnown) {
    CpuSample before = at(0, {}, 0.0);
    CpuSample after = at(4, {}, 2.0);
    before.machine.reset();
    const CpuUsage usage = cpu_usage_between(before, after, 100);
    EXPECT_DOUBLE_EQ(usage.process_cores, 0.5);
    EXPECT_FALSE(usage.machine_known);
    EXPECT_FALSE(cpu_usage_between(at(0, {}, 0), at(1, {}, 0), 0).machine_known);  // no tick rate
}

TEST(CpuUsageTest, ALiveSampleSeesThisThreadSpin) {
    const CpuSample before = sample_cpu();
    test::spin_this_thread_for(0.05);
    const CpuUsage usage = cpu_usage_since(before);
    EXPECT_GE(usage.process_seconds, 0.045);
    EXPECT_GT(usage.seconds, 0.0);
    EXPECT_TRUE(usage.machine_known) << "/proc/stat's first line was not read";
    EXPECT_GE(usage.idle_cores + usage.other_cores + usage.process_cores + usage.steal_cores, 0.0);
}

}  // namespace
}  // namespace vtpage::app
