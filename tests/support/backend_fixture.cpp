#include "backend_fixture.hpp"

namespace vtpage::test {

std::unique_ptr<Backend> try_make_backend(const std::string& name, std::string& reason,
                                          HostBackendSettings host) {
    BackendSettings settings;
    settings.name = name;
    settings.host = std::move(host);
    settings.log = Log(stderr_log(LogLevel::warning));
    try {
        return make_backend(settings);
    } catch (const Error& error) {
        if (error.code() != Errc::device_unavailable && error.code() != Errc::not_supported) {
            throw;
        }
        reason = error.what();
        return nullptr;
    }
}

HostBackendSettings small_host_backend() {
    HostBackendSettings host;
    host.page_size = under_thread_sanitizer ? 64_KiB : 2_MiB;
    host.physical_limit = 128 * host.page_size;
    return host;
}

void BackendTest::SetUp() {
    std::string reason;
    backend_ = try_make_backend(GetParam(), reason, host_settings());
    if (!backend_) GTEST_SKIP() << GetParam() << " backend unavailable: " << reason;
    page_ = backend_->granularity().minimum;
    baseline_ = backend_->live_resources();
}

void BackendTest::expect_baseline_resources(const char* message) const {
    if (backend_) {
        EXPECT_EQ(backend_->live_resources(), baseline_) << message;
    }
}

}  // namespace vtpage::test
