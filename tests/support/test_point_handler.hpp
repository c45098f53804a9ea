// Installs a handler for the library's test points (engine/base/test_points.hpp), or turns
// test switches on, for the lifetime of a scope; in a build without them it does nothing (the
// tests that need the points skip, saying so).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/test_points.hpp"

namespace vtpage::test {

class TestPointHandlerGuard {
public:
    explicit TestPointHandlerGuard(std::function<void(std::string_view)> handler) {
#if defined(VTPAGE_TEST_POINTS) && VTPAGE_TEST_POINTS
        detail::set_test_point_handler(std::move(handler));
#else
        (void)handler;
#endif
    }
    ~TestPointHandlerGuard() {
#if defined(VTPAGE_TEST_POINTS) && VTPAGE_TEST_POINTS
        detail::set_test_point_handler(nullptr);
#endif
    }
    TestPointHandlerGuard(const TestPointHandlerGuard&) = delete;
    TestPointHandlerGuard& operator=(const TestPointHandlerGuard&) = delete;
};

// Turns the named test switches on for the lifetime of a scope (all off again after it); in a
// build without test points it does nothing.
class TestSwitchesGuard {
public:
    explicit TestSwitchesGuard(std::vector<std::string> on) {
#if defined(VTPAGE_TEST_POINTS) && VTPAGE_TEST_POINTS
        detail::set_test_switches(std::move(on));
#else
        (void)on;
#endif
    }
    ~TestSwitchesGuard() {
#if defined(VTPAGE_TEST_POINTS) && VTPAGE_TEST_POINTS
        detail::set_test_switches({});
#endif
    }
    TestSwitchesGuard(const TestSwitchesGuard&) = delete;
    TestSwitchesGuard& operator=(const TestSwitchesGuard&) = delete;
};

}  // namespace vtpage::test
