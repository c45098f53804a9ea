// Named points in the library's concurrent code where a test may pause or yield the thread that
// reaches them, to force an interleaving that timing alone would rarely give, and named switches
// that turn a known defect back on, so that a test can show it would catch that defect. Compiled
// in only with the CMake option VTPAGE_TEST_POINTS (off by default): otherwise VTPAGE_TEST_POINT
// is nothing at all and VTPAGE_TEST_SWITCH is the constant false. Not part of the installed API.
//
// Points are reached at every RankedMutex acquisition (named after the mutex), around event
// delivery and its callbacks, at begin_frame/complete_frame and where the page loader reports.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace vtpage::detail {

#if defined(VTPAGE_TEST_POINTS) && VTPAGE_TEST_POINTS
inline constexpr bool test_points_built = true;
// Called on the thread that reaches a point, maybe with locks of the caller's held (a mutex's
// point is reached before it is taken, with those of lower rank held). One handler for the
// process; none: points cost a relaxed load.
using TestPointHandler = std::function<void(std::string_view point)>;
void set_test_point_handler(TestPointHandler handler);
void reach_test_point(std::string_view point);
// The switches that are on (none by default); a defect switch is named after the defect it
// brings back.
void set_test_switches(std::vector<std::string> on);
bool test_switch_on(std::string_view name);
#define VTPAGE_TEST_POINT(name) ::vtpage::detail::reach_test_point(name)
#define VTPAGE_TEST_SWITCH(name) ::vtpage::detail::test_switch_on(name)
#else
inline constexpr bool test_points_built = false;
#define VTPAGE_TEST_POINT(name) ((void)0)
#define VTPAGE_TEST_SWITCH(name) false
#endif

}  // namespace vtpage::detail
