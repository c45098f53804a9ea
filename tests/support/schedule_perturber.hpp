// A seeded schedule perturber for the library's test points (engine/base/test_points.hpp): at
// each point a thread yields, sleeps 0..max_sleep microseconds or goes on. Each thread draws
// from a PRNG of its own, made from the seed and the order in which threads first reach a point,
// mixed with a hash of the point's name, so that a seed gives the same perturbation as far as
// the OS schedules threads in the same order. Install it with a TestPointHandlerGuard.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string_view>
#include <thread>

namespace vtpage::test {

class SchedulePerturber {
public:
    struct Settings {
        std::uint64_t seed = 1;
        std::uint32_t yield_in_64 = 8;  // of 64 points reached: how many yield
        std::uint32_t sleep_in_64 = 2;  // ... and how many sleep
        std::uint32_t max_sleep_us = 200;
    };

    explicit SchedulePerturber(Settings settings)
        : shared_(std::make_shared<Shared>(settings, next_run().fetch_add(1) + 1)) {}

    void operator()(std::string_view point) const {
        Shared& shared = *shared_;
        thread_local std::uint64_t run = 0, state = 0;
        if (run != shared.run) {  // the thread's first point in this run: its ordinal
            run = shared.run;
            state = mix(shared.settings.seed ^ mix(shared.threads.fetch_add(1) + 1));
        }
        state += 0x9e3779b97f4a7c15ull;
        const std::uint64_t draw = mix(state ^ name_hash(point));
        const std::uint32_t slot = std::uint32_t(draw & 63);
        const Settings& s = shared.settings;
        if (slot < s.yield_in_64) {
            std::this_thread::yield();
        } else if (slot < s.yield_in_64 + s.sleep_in_64) {
            const auto us = (draw >> 8) % (std::uint64_t(s.max_sleep_us) + 1);
            std::this_thread::sleep_for(std::chrono::microseconds(us));
        }
    }

private:
    struct Shared {
        Shared(Settings s, std::uint64_t r) : settings(s), run(r) {}
        Settings settings;
        std::uint64_t run;  // tells the threads' state of an earlier perturber apart
        std::atomic<std::uint64_t> threads{0};
    };
    static std::atomic<std::uint64_t>& next_run() {
        static std::atomic<std::uint64_t> runs{0};
        return runs;
    }
    static std::uint64_t mix(std::uint64_t x) {  // splitmix64's finalizer
        x ^= x >> 30;
        x *= 0xbf58476d1ce4e5b9ull;
        x ^= x >> 27;
        x *= 0x94d049bb133111ebull;
        return x ^ (x >> 31);
    }
    static std::uint64_t name_hash(std::string_view name) {  // FNV-1a
        std::uint64_t h = 0xcbf29ce484222325ull;
        for (char c : name) h = (h ^ std::uint8_t(c)) * 0x100000001b3ull;
        return h;
    }

    std::shared_ptr<Shared> shared_;
};

}  // namespace vtpage::test
