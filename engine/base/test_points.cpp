#include "test_points.hpp"

#if defined(VTPAGE_TEST_POINTS) && VTPAGE_TEST_POINTS
#include <atomic>
#include <memory>

namespace vtpage::detail {
namespace {
// Swapped whole, so that a point reached while a test sets a new handler calls the old or the
// new one, never a half-made one.
std::atomic<std::shared_ptr<const TestPointHandler>> current_handler;
}  // namespace

void set_test_point_handler(TestPointHandler handler) {
    current_handler.store(handler ? std::make_shared<const TestPointHandler>(std::move(handler))
                                  : nullptr);
}

void reach_test_point(std::string_view point) {
    if (const auto handler = current_handler.load()) (*handler)(point);
}

}  // namespace vtpage::detail
#endif
