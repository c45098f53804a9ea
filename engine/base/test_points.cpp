#include "base/test_points.hpp"

#if defined(VTPAGE_TEST_POINTS) && VTPAGE_TEST_POINTS
#include <algorithm>
#include <atomic>
#include <memory>

namespace vtpage::detail {
namespace {
// Swapped whole, so that a point reached while a test sets a new handler calls the old or the
// new one, never a half-made one. The flags keep the common case (nothing installed) at one
// relaxed load.
std::atomic<std::shared_ptr<const TestPointHandler>> current_handler;
std::atomic<bool> handler_installed{false};
std::atomic<std::shared_ptr<const std::vector<std::string>>> current_switches;
std::atomic<bool> switches_installed{false};
}  // namespace

void set_test_point_handler(TestPointHandler handler) {
    const bool installed = bool(handler);
    current_handler.store(installed ? std::make_shared<const TestPointHandler>(std::move(handler))
                                    : nullptr);
    handler_installed.store(installed, std::memory_order_release);
}

void reach_test_point(std::string_view point) {
    if (!handler_installed.load(std::memory_order_relaxed)) return;
    if (const auto handler = current_handler.load()) (*handler)(point);
}

void set_test_switches(std::vector<std::string> on) {
    const bool any = !on.empty();
    current_switches.store(any ? std::make_shared<const std::vector<std::string>>(std::move(on))
                               : nullptr);
    switches_installed.store(any, std::memory_order_release);
}

bool test_switch_on(std::string_view name) {
    if (!switches_installed.load(std::memory_order_relaxed)) return false;
    const auto switches = current_switches.load();
    return switches && std::find(switches->begin(), switches->end(), name) != switches->end();
}

}  // namespace vtpage::detail
#endif
