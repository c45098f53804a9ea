// Tests that run libvips (in the test or in the bake tool it starts) are skipped, with the
// reason, under ThreadSanitizer: libvips hands buffers between its worker threads under glib's
// mutexes and conditions, which glib builds on futexes of its own that ThreadSanitizer cannot
// see, so every buffer is reported as a race; suppressed, each report is still processed, and
// one 1M-texel-wide image takes minutes. The rest of the suite (the page archive written from
// several threads, the streamer) runs under ThreadSanitizer as everywhere.
#pragma once

#include <gtest/gtest.h>

#if defined(__SANITIZE_THREAD__)
#define VTPAGE_UNDER_THREAD_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define VTPAGE_UNDER_THREAD_SANITIZER 1
#endif
#endif

#if defined(VTPAGE_UNDER_THREAD_SANITIZER)
#define VTPAGE_SKIP_LIBVIPS_UNDER_THREAD_SANITIZER()                                            \
    GTEST_SKIP() << "libvips synchronises its threads with glib's own futexes, which "          \
                    "ThreadSanitizer cannot see: every buffer it passes between threads would " \
                    "be reported (see tests/bake/vips_under_thread_sanitizer.hpp)"
#else
#define VTPAGE_SKIP_LIBVIPS_UNDER_THREAD_SANITIZER() static_cast<void>(0)
#endif
