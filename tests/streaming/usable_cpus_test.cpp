#include "streaming/io/usable_cpus.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace vtpage::vt {
namespace {

TEST(UsableCpusTest, ReadsCgroupV2CpuMax) {
    EXPECT_EQ(cpu_quota_from_cpu_max("max 100000\n"), std::nullopt);
    EXPECT_EQ(cpu_quota_from_cpu_max("400000 100000\n"), 4.0);
    EXPECT_EQ(cpu_quota_from_cpu_max("150000 100000"), 1.5);
    EXPECT_EQ(cpu_quota_from_cpu_max(""), std::nullopt);
    EXPECT_EQ(cpu_quota_from_cpu_max("400000"), std::nullopt);
    EXPECT_EQ(cpu_quota_from_cpu_max("abc 100000"), std::nullopt);
    EXPECT_EQ(cpu_quota_from_cpu_max("400000 0"), std::nullopt);
}

TEST(UsableCpusTest, ReadsCgroupV1Quotas) {
    EXPECT_EQ(cpu_quota_from_cfs("-1\n", "100000\n"), std::nullopt);
    EXPECT_EQ(cpu_quota_from_cfs("200000\n", "100000\n"), 2.0);
    EXPECT_EQ(cpu_quota_from_cfs("50000", "100000"), 0.5);
    EXPECT_EQ(cpu_quota_from_cfs("", "100000"), std::nullopt);
}

TEST(UsableCpusTest, FindsTheProcessCgroupV2Path) {
    EXPECT_EQ(cgroup_v2_path("0::/user.slice/app.scope\n"), "/user.slice/app.scope");
    EXPECT_EQ(cgroup_v2_path("4:memory:/a\n1:cpu:/\n0::/\n"), "/");
    EXPECT_EQ(cgroup_v2_path("4:memory:/a\n1:cpu:/\n"), std::nullopt);
    EXPECT_EQ(cgroup_v2_path(""), std::nullopt);
}

TEST(UsableCpusTest, TheQuotaRoundedUpLowersTheAffinityCount) {
    EXPECT_EQ(usable_cpus_of(64, std::nullopt), 64u);
    EXPECT_EQ(usable_cpus_of(64, 4.0), 4u);
    EXPECT_EQ(usable_cpus_of(64, 1.5), 2u) << "a part of a CPU still runs a thread";
    EXPECT_EQ(usable_cpus_of(2, 8.0), 2u);
    EXPECT_EQ(usable_cpus_of(0, std::nullopt), 1u);
    EXPECT_EQ(usable_cpus_of(8, 0.25), 1u);
}

TEST(UsableCpusTest, ThisProcessHasAtLeastOneAndNoMoreThanTheMachine) {
    const std::size_t cpus = usable_cpus();
    EXPECT_GE(cpus, 1u);
    if (std::thread::hardware_concurrency() > 0) {
        EXPECT_LE(cpus, std::size_t(std::thread::hardware_concurrency()));
    }
}

}  // namespace
}  // namespace vtpage::vt
