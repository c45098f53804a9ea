// Makes a backend by name for a test, or skips the test with the reason it cannot be had; the
// base fixture of the suites that run on every backend.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "vtpage/backend/backend_factory.hpp"

namespace vtpage::test {

// ThreadSanitizer keeps applications to a few small address ranges, so tests reserve less there.
#if defined(__SANITIZE_THREAD__)
inline constexpr bool under_thread_sanitizer = true;
#else
inline constexpr bool under_thread_sanitizer = false;
#endif
// A reservation far larger than memory: 16 TiB, or 64 GiB under ThreadSanitizer.
inline constexpr std::size_t huge_reservation_bytes =
    under_thread_sanitizer ? std::size_t(64) << 30 : std::size_t(16) << 40;

// The backends every parameterised suite runs on; those missing here are skipped at run time.
inline std::vector<std::string> all_backend_names() { return {"host", "cuda"}; }
// Names each case of such a suite after its backend (".../host", ".../cuda").
inline std::string backend_param_name(const testing::TestParamInfo<std::string>& param) {
    return param.param;
}

// nullptr and a reason when the backend cannot be made on this machine.
std::unique_ptr<Backend> try_make_backend(const std::string& name, std::string& reason,
                                          HostBackendSettings host = {});

// A small host backend: 2 MiB pages (64 KiB under ThreadSanitizer, where every access to them is
// instrumented: the same tests on 32 times less memory) and at most 128 of them, so that out of
// memory is cheap to reach.
HostBackendSettings small_host_backend();

// The base of the suites parameterised over backend names (instantiated with
// all_backend_names()): SetUp makes backend_, or skips the test with the reason, and notes
// page_ (the backend's page size) and baseline_ (what it holds before the test). A suite that
// sets up more calls BackendTest::SetUp() first and returns if IsSkipped().
class BackendTest : public testing::TestWithParam<std::string> {
protected:
    void SetUp() override;
    // The settings of the host backend; the suite's own where it overrides this.
    virtual HostBackendSettings host_settings() const { return {}; }
    // For TearDown: the backend holds again what it held before the test.
    void expect_baseline_resources(const char* message = "") const;

    std::unique_ptr<Backend> backend_;
    std::size_t page_ = 0;
    LiveResources baseline_;
};

}  // namespace vtpage::test

// In a test body or SetUp: makes `variable` or skips with the reason.
#define VTPAGE_BACKEND_OR_SKIP(variable, name, ...)                                                \
    std::string variable##_skip_reason;                                                            \
    auto variable =                                                                                \
        ::vtpage::test::try_make_backend(name, variable##_skip_reason __VA_OPT__(, ) __VA_ARGS__); \
    if (!variable) {                                                                               \
        GTEST_SKIP() << name << " backend unavailable: " << variable##_skip_reason;                \
    }                                                                                              \
    static_assert(true)
