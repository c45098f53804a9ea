#include <gtest/gtest.h>

#include <set>

#include "vtpage/backend/fault_injecting_backend.hpp"
#include "vtpage/backend/host_backend.hpp"

namespace vtpage {
namespace {

TEST(FaultInjectingBackend, FailsTheNthCallOfAKindBeforeItReachesTheBackend) {
    HostBackend host;
    FaultInjectingBackend faulty(host);
    faulty.add_rule({BackendOperation::create, Errc::out_of_memory, 2});
    PhysicalHandle first = faulty.create(2_MiB);
    try {
        faulty.create(2_MiB);
        FAIL() << "the second create did not fail";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::out_of_memory);
        EXPECT_EQ(error.operation(), "create");
        EXPECT_EQ(error.backend_code_name(), "VTPAGE_INJECTED_FAULT");
    }
    PhysicalHandle third = faulty.create(2_MiB);
    EXPECT_EQ(faulty.calls(BackendOperation::create), 3u);
    EXPECT_EQ(faulty.injected(BackendOperation::create), 1u);
    EXPECT_EQ(host.live_resources().pages, 2u);  // the failed call created nothing
    faulty.release(first);
    faulty.release(third);
}

TEST(FaultInjectingBackend, ProbabilityRulesAreSeededAndRepeatable) {
    auto run = [](std::uint64_t seed) {
        HostBackend host;
        FaultInjectingBackend faulty(host, seed);
        faulty.add_rule({BackendOperation::reserve, Errc::backend_failure, 0, 0.5});
        std::vector<bool> failed;
        for (int i = 0; i < 64; ++i) {
            try {
                DeviceAddress address = faulty.reserve(2_MiB);
                faulty.free_reservation(address, 2_MiB);
                failed.push_back(false);
            } catch (const Error&) {
                failed.push_back(true);
            }
        }
        return failed;
    };
    auto first = run(7);
    EXPECT_EQ(first, run(7));
    auto failures = std::count(first.begin(), first.end(), true);
    EXPECT_GT(failures, 10);
    EXPECT_LT(failures, 54);
}

TEST(FaultInjectingBackend, ParsesRuleSpecs) {
    auto rules = parse_fault_rules("create:out_of_memory@3,map%0.25,set_access:busy%1");
    ASSERT_EQ(rules.size(), 3u);
    EXPECT_EQ(rules[0].operation, BackendOperation::create);
    EXPECT_EQ(rules[0].nth, 3u);
    EXPECT_EQ(rules[1].operation, BackendOperation::map);
    EXPECT_EQ(rules[1].error, Errc::out_of_memory);
    EXPECT_DOUBLE_EQ(rules[1].probability, 0.25);
    EXPECT_EQ(rules[2].error, Errc::busy);
}

TEST(FaultInjectingBackend, BadSpecsNameTheBadPart) {
    for (const char* spec : {"explode@1", "create", "create@0", "create%2", "create:nope@1",
                             "map%x", "create@1,", ",map@1", "create@1x"}) {
        try {
            parse_fault_rules(spec);
            ADD_FAILURE() << spec << " was accepted";
        } catch (const Error& error) {
            EXPECT_EQ(error.code(), Errc::invalid_argument) << spec;
            EXPECT_FALSE(error.arguments().empty()) << spec;
        }
    }
}

}  // namespace
}  // namespace vtpage

namespace vtpage {
namespace {

TEST(FaultInjectingBackend, ExportAndImportAreShortNamesForTheFdCalls) {
    auto rules = parse_fault_rules("export%0.5,import:invalid_handle@2");
    ASSERT_EQ(rules.size(), 2u);
    EXPECT_EQ(rules[0].operation, BackendOperation::export_fd);
    EXPECT_EQ(rules[1].operation, BackendOperation::import_fd);
    EXPECT_EQ(rules[1].error, Errc::invalid_handle);
}

TEST(FaultInjectingBackend, ExportFailsAtItsRateAndLeaksNoDescriptor) {
    HostBackend host;
    FaultInjectingBackend faulty(host, 9);
    faulty.add_rules(parse_fault_rules("export:out_of_memory%0.3"));
    PhysicalHandle page = faulty.create(2_MiB);
    int failures = 0;
    std::vector<UniqueFd> fds;
    for (int i = 0; i < 200; ++i) {
        try {
            fds.push_back(faulty.export_fd(page));
        } catch (const Error& error) {
            EXPECT_EQ(error.code(), Errc::out_of_memory);
            ++failures;
        }
    }
    EXPECT_EQ(faulty.injected(BackendOperation::export_fd), std::uint64_t(failures));
    EXPECT_GT(failures, 30);  // about 60 expected
    EXPECT_LT(failures, 100);
    // Every descriptor handed out is a real, distinct one; failed calls made none.
    std::set<int> distinct;
    for (const auto& fd : fds) distinct.insert(fd.get());
    EXPECT_EQ(distinct.size(), fds.size());
    fds.clear();
    faulty.release(page);
}

}  // namespace
}  // namespace vtpage
