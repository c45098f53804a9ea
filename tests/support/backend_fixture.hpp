// Makes a backend by name for a test, or skips the test with the reason it cannot be had.
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

// nullptr and a reason when the backend cannot be made on this machine.
std::unique_ptr<Backend> try_make_backend(const std::string& name, std::string& reason,
                                          HostBackendSettings host = {});

}  // namespace vtpage::test

// In a test body or SetUp: makes `variable` or skips with the reason.
#define VTPAGE_BACKEND_OR_SKIP(variable, name, ...)                                      \
    std::string variable##_skip_reason;                                                   \
    auto variable = ::vtpage::test::try_make_backend(name, variable##_skip_reason         \
                                                     __VA_OPT__(, ) __VA_ARGS__);         \
    if (!variable) {                                                                      \
        GTEST_SKIP() << name << " backend unavailable: " << variable##_skip_reason;       \
    }                                                                                     \
    static_assert(true)
