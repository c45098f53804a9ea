// A leak check for tests: take the baseline when constructed, then expect_clean() after the
// work is torn down fails the test with what was left (descriptors, vtpage's mappings, the
// backend's pages, mappings and reservations). Device memory is left to the stress tool by
// default: kernels that tests run take device memory for the runtime the first time.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "backend_fixture.hpp"
#include "vtpage/backend/leak_check.hpp"

namespace vtpage::test {

class LeakGuard {
public:
    static LeakCheckSettings without_device_memory() {
        LeakCheckSettings settings;
        settings.device_memory = false;
        return settings;
    }
    explicit LeakGuard(Backend& backend, LeakCheckSettings settings = without_device_memory())
        : check_(backend, settings) {}
    void watch(DeviceAddress address, std::size_t size) { check_.watch(address, size); }
    LeakReport report() const { return check_.check(); }
    void expect_clean(const char* where = "after teardown") const {
        const LeakReport leaks = check_.check();
        EXPECT_TRUE(leaks.clean()) << where << ": " << leaks.describe();
    }

private:
    LeakCheck check_;
};

// A BackendTest that leaves nothing behind: after each test, no page, mapping, reservation or
// descriptor more than before it.
class LeakCheckedBackendTest : public BackendTest {
protected:
    void SetUp() override {
        BackendTest::SetUp();
        if (IsSkipped()) return;
        leaks_ = std::make_unique<LeakGuard>(*backend_);
    }
    void TearDown() override {
        if (leaks_) leaks_->expect_clean();
    }
    std::unique_ptr<LeakGuard> leaks_;
};

}  // namespace vtpage::test
