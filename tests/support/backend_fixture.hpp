// Makes a backend by name for a test, or skips the test with the reason it cannot be had.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "vtpage/backend/backend_factory.hpp"

namespace vtpage::test {

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
