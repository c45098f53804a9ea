// Named points in the library's concurrent code where a test may pause or yield the thread that
// reaches them, to force an interleaving that timing alone would rarely give. Compiled in only
// with the CMake option VTPAGE_TEST_POINTS (off by default): otherwise VTPAGE_TEST_POINT is
// nothing at all. Not part of the installed API.
#pragma once

#include <functional>
#include <string_view>

namespace vtpage::detail {

#if defined(VTPAGE_TEST_POINTS) && VTPAGE_TEST_POINTS
inline constexpr bool test_points_built = true;
// Called on the thread that reaches a point, with no lock of the caller's held unless the
// point's name says so. One handler for the process; empty: points cost a relaxed load.
using TestPointHandler = std::function<void(std::string_view point)>;
void set_test_point_handler(TestPointHandler handler);
void reach_test_point(std::string_view point);
#define VTPAGE_TEST_POINT(name) ::vtpage::detail::reach_test_point(name)
#else
inline constexpr bool test_points_built = false;
#define VTPAGE_TEST_POINT(name) ((void)0)
#endif

}  // namespace vtpage::detail
