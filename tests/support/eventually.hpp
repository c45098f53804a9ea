// Waiting in a test for what another thread makes true at a time no test can know, on a loaded
// machine or under a sanitizer.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace vtpage::test {

// Whether `condition` holds within `limit`, polled every millisecond.
inline bool eventually(const std::function<bool()>& condition,
                       std::chrono::milliseconds limit = std::chrono::seconds(20)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!condition()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

}  // namespace vtpage::test
