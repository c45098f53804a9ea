#include "vtpage/streaming/governor/decode_thread_governor.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "vtpage/base/error.hpp"

namespace vtpage::vt {
namespace {

// Decode threads over a backlog: each decodes pages_per_thread pages/s up to useful_threads
// threads (past them the disk or the memory bandwidth binds: no thread more decodes faster),
// and each active thread adds frame_ms_per_thread to the app's frame.
struct SimulatedDecoders {
    double pages_per_thread = 100;
    std::size_t useful_threads = 4;
    double frame_ms = 10;
    double frame_ms_per_thread = 0;
    std::size_t waiting = 16;
    bool decoding = true;

    DecodeThreadInput input(std::size_t active, double seconds = 0.1) const {
        const double threads = double(std::min(active, useful_threads));
        return {.seconds = seconds,
                .frame_ms = frame_ms + frame_ms_per_thread * double(active),
                .waiting_pages = waiting,
                .decoded_pages = decoding ? std::uint64_t(pages_per_thread * threads * seconds) : 0,
                .busy_seconds = decoding ? seconds * double(active) : 0};
    }
};

DecodeThreadGovernorSettings pool_of(std::size_t pool, std::size_t initial) {
    DecodeThreadGovernorSettings s;
    s.pool_threads = pool;
    s.initial_threads = initial;
    s.window_seconds = 0.45;  // five updates of 0.1 s (summed, a little under 0.5)
    s.window_updates = 5;
    s.surge = false;  // the steps on their own; surges have tests of their own below
    return s;
}

// As the streamer runs it with a frame target (the app's, here 30 ms against the simulated
// 10): the default windows and surges, an update every 10 ms.
DecodeThreadGovernorSettings streamer_like(std::size_t pool, std::size_t initial) {
    DecodeThreadGovernorSettings s;
    s.pool_threads = pool;
    s.initial_threads = initial;
    s.frame_ms_target = 30;
    return s;
}

std::size_t run_every_10_ms(DecodeThreadGovernor& governor, const SimulatedDecoders& decoders,
                            int updates) {
    std::size_t most = governor.active_threads();
    for (int i = 0; i < updates; ++i) {
        const DecodeThreadInput input = decoders.input(governor.active_threads(), 0.01);
        most = std::max(most, governor.update(input).active_threads);
    }
    return most;
}

// Runs `updates` updates, each measured with the threads active then; the most active seen.
std::size_t run(DecodeThreadGovernor& governor, const SimulatedDecoders& decoders, int updates) {
    std::size_t most = governor.active_threads();
    for (int i = 0; i < updates; ++i) {
        most = std::max(most,
                        governor.update(decoders.input(governor.active_threads())).active_threads);
    }
    return most;
}

TEST(DecodeThreadGovernorTest, AddsThreadsWhileTheyMakeDecodingFaster) {
    DecodeThreadGovernor governor(pool_of(8, 2));
    SimulatedDecoders decoders;  // faster up to 4 threads
    // A window measures 2 threads, a trial window 3 (kept), the next trial adds two at once: 5
    // (kept: 5 decode as fast as 4, faster than 3), the next three: 8, taken back, as 8 decode
    // no faster than 5; then single threads again, each taken back.
    EXPECT_EQ(run(governor, decoders, 5), 3u) << "a trial after one window with a backlog";
    EXPECT_EQ(governor.statistics().trials, 1u);
    EXPECT_EQ(run(governor, decoders, 5), 5u) << "a kept trial's window starts the next at once";
    EXPECT_EQ(run(governor, decoders, 5), 8u) << "twice the last step, up to the pool";
    run(governor, decoders, 5);
    EXPECT_EQ(governor.active_threads(), 5u) << "the three that did not help are taken back";
    const std::size_t most = run(governor, decoders, 200);
    EXPECT_EQ(most, 6u) << "one at a time after a trial that did not help";
    EXPECT_EQ(governor.statistics().kept, 2u);
    EXPECT_GE(governor.statistics().taken_back, 2u);
    while (governor.active_threads() != 5)
        governor.update(decoders.input(governor.active_threads()));
    EXPECT_EQ(governor.active_threads(), 5u) << "at most a step's half more than the 4 that help";
}

TEST(DecodeThreadGovernorTest, ALastingBacklogReachesThePoolInAFewWindows) {
    DecodeThreadGovernor governor(pool_of(15, 8));
    SimulatedDecoders decoders;
    decoders.useful_threads = 16;  // every thread helps
    // 8, then trials of 1, 2 and 4 threads, each kept: the pool in four windows (one by one it
    // took fourteen).
    run(governor, decoders, 4 * 5);
    EXPECT_EQ(governor.active_threads(), 15u);
    EXPECT_EQ(governor.statistics().trials, 3u);
    EXPECT_EQ(governor.statistics().kept, 3u);
    EXPECT_EQ(governor.statistics().windows, 4u);
}

TEST(DecodeThreadGovernorTest, DoesNotKeepAThreadThatDidNotHelpAndTriesLessOftenAfterEach) {
    DecodeThreadGovernor governor(pool_of(8, 2));
    SimulatedDecoders decoders;
    decoders.useful_threads = 2;  // the disk binds at 2 threads
    run(governor, decoders, 10);  // a window at 2 threads, a trial window at 3
    EXPECT_EQ(governor.active_threads(), 2u) << "taken back after its window";
    EXPECT_EQ(governor.statistics().taken_back, 1u);
    EXPECT_EQ(governor.statistics().kept, 0u);
    // 200 windows: with the wait doubling after each trial that did not help (2, 4, 8, 16, 32,
    // 32 ... windows), a handful of trials, not one every other window.
    run(governor, decoders, 1000);
    EXPECT_EQ(governor.statistics().kept, 0u);
    EXPECT_LE(governor.statistics().trials, 10u);
    EXPECT_GE(governor.statistics().trials, 4u) << "it still tries now and then";
}

TEST(DecodeThreadGovernorTest, AddsNothingWithoutABacklogOrBusyThreads) {
    SimulatedDecoders decoders;
    decoders.waiting = 0;  // the decode threads keep up
    DecodeThreadGovernor idle(pool_of(8, 2));
    run(idle, decoders, 200);
    EXPECT_EQ(idle.statistics().trials, 0u);
    EXPECT_EQ(idle.active_threads(), 2u);

    decoders.waiting = 16;
    decoders.decoding = false;  // pages wait, but nothing decodes (a page held on its read)
    DecodeThreadGovernor stalled(pool_of(8, 2));
    run(stalled, decoders, 200);
    EXPECT_EQ(stalled.statistics().trials, 0u);
}

TEST(DecodeThreadGovernorTest, RemovesAThreadWhenFramesAreOverTheTargetWhileDecoding) {
    DecodeThreadGovernorSettings s = pool_of(8, 4);
    s.frame_ms_target = 16;
    s.over_target_updates = 3;
    DecodeThreadGovernor governor(s);
    SimulatedDecoders decoders;
    decoders.frame_ms = 20;  // over the target with any number of threads
    decoders.waiting = 0;
    governor.update(decoders.input(4));
    governor.update(decoders.input(4));
    EXPECT_EQ(governor.active_threads(), 4u) << "two frames over the target are not yet a trend";
    EXPECT_EQ(governor.update(decoders.input(4)).change, DecodeThreadChange::removed);
    EXPECT_EQ(governor.active_threads(), 3u);
    run(governor, decoders, 100);
    EXPECT_EQ(governor.active_threads(), 1u) << "never below one";
    EXPECT_EQ(governor.statistics().removed, 3u);

    // Frames over the target while nothing is decoded are not the decode threads' doing.
    DecodeThreadGovernor idle(s);
    decoders.decoding = false;
    run(idle, decoders, 100);
    EXPECT_EQ(idle.active_threads(), 4u);
}

TEST(DecodeThreadGovernorTest, FramesAroundTheTargetNeitherRemoveNorAddEveryFrame) {
    DecodeThreadGovernorSettings s = pool_of(8, 4);
    s.frame_ms_target = 16;
    DecodeThreadGovernor governor(s);
    SimulatedDecoders decoders;
    // Every other frame over the target: never three in a row, and no window all within it.
    for (int i = 0; i < 400; ++i) {
        decoders.frame_ms = i % 2 ? 17 : 15;
        governor.update(decoders.input(governor.active_threads()));
    }
    EXPECT_EQ(governor.active_threads(), 4u);
    EXPECT_EQ(governor.statistics().removed + governor.statistics().trials, 0u);

    // After a removal it waits cooldown_windows windows before it tries a thread again, though
    // pages wait and the frames are fine.
    decoders.frame_ms = 20;
    run(governor, decoders, 3);
    ASSERT_EQ(governor.active_threads(), 3u);
    decoders.frame_ms = 10;
    run(governor, decoders, 2 * 5);
    EXPECT_EQ(governor.statistics().trials, 0u) << "two windows of cooling down";
    run(governor, decoders, 5);
    EXPECT_EQ(governor.statistics().trials, 1u);
}

TEST(DecodeThreadGovernorTest, TakesBackAThreadThatSlowsTheFramesThoughItDecodesFaster) {
    SimulatedDecoders decoders;
    decoders.frame_ms_per_thread = 2;  // 14 ms at 2 threads, 16 at 3, 18 at 4

    // Without a target, given or measured: the trial's frames are 14% slower, more than
    // max_frame_rise (10%).
    DecodeThreadGovernorSettings none = pool_of(8, 2);
    none.tail_ratio = 0;
    DecodeThreadGovernor relative(none);
    run(relative, decoders, 10);
    EXPECT_EQ(relative.statistics().trials, 1u);
    EXPECT_EQ(relative.statistics().taken_back, 1u);
    EXPECT_EQ(relative.active_threads(), 2u);

    // The measured target, 1.5 times the 14 ms the frames take before any trial (21 ms), keeps
    // threads up to a fifth (20 ms) and takes back a sixth (22 ms), for as long as the windows
    // it remembers include one at 2 threads.
    DecodeThreadGovernor measured(pool_of(8, 2));
    run(measured, decoders, 5 * 32);
    EXPECT_GE(measured.statistics().kept, 1u);
    EXPECT_LE(measured.active_threads(), 5u);
    EXPECT_GE(measured.statistics().taken_back, 1u);

    // With a 17 ms target: a third thread is kept (16 ms), a fourth's frames (18 ms) are over.
    DecodeThreadGovernorSettings s = pool_of(8, 2);
    s.frame_ms_target = 17;
    DecodeThreadGovernor targeted(s);
    run(targeted, decoders, 400);
    EXPECT_EQ(targeted.statistics().kept, 1u);
    EXPECT_LE(targeted.active_threads(), 3u);
    EXPECT_GE(targeted.statistics().taken_back, 1u);
}

// The frames are judged by their tail: a thread that makes one frame in twenty twice as slow
// barely moves the mean (5%) but is taken back; one that leaves the tail alone is kept.
TEST(DecodeThreadGovernorTest, JudgesTheFramesByTheirTailNotTheirMean) {
    DecodeThreadGovernorSettings s = pool_of(8, 2);
    s.window_updates = 40;
    s.window_seconds = 0;
    for (bool slow_tail : {true, false}) {
        SCOPED_TRACE(slow_tail ? "a slow frame in twenty" : "frames as before");
        DecodeThreadGovernor governor(s);
        SimulatedDecoders decoders;
        for (int i = 0; i < 80; ++i) {
            const std::size_t active = governor.active_threads();
            DecodeThreadInput input = decoders.input(active);
            if (slow_tail && active > 2 && i % 20 == 0) input.frame_ms = 2 * decoders.frame_ms;
            governor.update(input);
        }
        // Kept, the trial's window starts the next trial at once (two threads more).
        EXPECT_EQ(governor.statistics().trials, slow_tail ? 1u : 2u);
        EXPECT_EQ(governor.statistics().kept, slow_tail ? 0u : 1u);
        EXPECT_EQ(governor.active_threads(), slow_tail ? 2u : 5u);
    }
}

// A burst (updates in a row with pages waiting and the threads busy) puts the rest of the pool
// on trial within a few updates, where steps would have added one thread after a window; the
// trial is kept where the threads decode faster.
TEST(DecodeThreadGovernorTest, ABurstSurgesToThePoolWithinAFewUpdates) {
    DecodeThreadGovernor governor(streamer_like(31, 16));
    SimulatedDecoders decoders;
    decoders.useful_threads = 32;
    decoders.waiting = 0;  // the first reads are not back yet
    decoders.decoding = false;
    run_every_10_ms(governor, decoders, 3);
    decoders.waiting = 16;
    decoders.decoding = true;
    EXPECT_EQ(run_every_10_ms(governor, decoders, 7), 31u) << "a surge after 0.05 s of backlog";
    EXPECT_EQ(governor.statistics().surges, 1u);
    EXPECT_EQ(governor.statistics().windows, 0u) << "before the first window ended";
    run_every_10_ms(governor, decoders, 30);  // the trial's window: 0.25 s
    EXPECT_EQ(governor.statistics().kept, 1u);
    EXPECT_EQ(governor.active_threads(), 31u);
}

// A surge whose frames go over the target is taken back whole, a few updates in, and never
// tried again: the steps go on from where it began, and stop where the frames would.
TEST(DecodeThreadGovernorTest, ASurgeThatSlowsTheFramesIsTakenBackAndNotTriedAgain) {
    DecodeThreadGovernor governor(streamer_like(31, 16));
    SimulatedDecoders decoders;
    decoders.useful_threads = 32;
    decoders.frame_ms = 2;
    decoders.frame_ms_per_thread = 1;  // 18 ms at 16 threads, 33 at 31: over the 30 ms target
    run_every_10_ms(governor, decoders, 5);
    ASSERT_EQ(governor.active_threads(), 31u) << "the surge";
    run_every_10_ms(governor, decoders, 2);
    EXPECT_EQ(governor.active_threads(), 31u) << "two slow frames are not yet a trend";
    run_every_10_ms(governor, decoders, 1);
    EXPECT_EQ(governor.active_threads(), 16u) << "the third ends it, before its window does";
    EXPECT_EQ(governor.statistics().surges, 1u);
    EXPECT_EQ(governor.statistics().taken_back, 1u);
    run_every_10_ms(governor, decoders, 3000);  // 30 s of a lasting backlog
    EXPECT_EQ(governor.statistics().surges, 1u);
    EXPECT_GT(governor.statistics().kept, 0u) << "steps up to 28 threads keep within 30 ms";
    EXPECT_LE(governor.active_threads(), 28u);
}

// No surge where the window did not begin with a backlog in every update, where the threads
// idle, or where the frames are over the target.
// Without frames measured (streaming while nothing is drawn), the surge's pages per second
// judge it alone.
TEST(DecodeThreadGovernorTest, ASurgeWithoutFramesIsJudgedByItsPagesPerSecond) {
    for (std::size_t useful : {32, 16}) {
        SCOPED_TRACE(useful == 32 ? "every thread helps" : "16 threads are all that help");
        DecodeThreadGovernor governor(streamer_like(31, 16));
        SimulatedDecoders decoders;
        decoders.useful_threads = useful;
        for (int i = 0; i < 40; ++i) {
            DecodeThreadInput input = decoders.input(governor.active_threads(), 0.01);
            input.frame_ms = -1;
            governor.update(input);
        }
        EXPECT_EQ(governor.statistics().surges, 1u);
        EXPECT_EQ(governor.active_threads(), useful == 32 ? 31u : 16u);
    }
}

TEST(DecodeThreadGovernorTest, NoSurgeWithoutABurst) {
    SimulatedDecoders decoders;
    decoders.useful_threads = 32;
    DecodeThreadGovernor intermittent(streamer_like(31, 16));
    for (int i = 0; i < 400; ++i) {
        decoders.waiting = i % 2 ? 16 : 0;  // half the updates: a backlog, not a burst
        intermittent.update(decoders.input(intermittent.active_threads(), 0.01));
    }
    EXPECT_EQ(intermittent.statistics().surges, 0u);
    EXPECT_GT(intermittent.statistics().trials, 0u) << "the steps still follow a backlog";

    decoders.waiting = 16;
    DecodeThreadGovernorSettings untargeted = streamer_like(31, 16);
    untargeted.frame_ms_target = 0;  // no target, given or measured: the steps alone
    untargeted.tail_ratio = 0;
    DecodeThreadGovernor stepping(untargeted);
    run_every_10_ms(stepping, decoders, 400);
    EXPECT_EQ(stepping.statistics().surges, 0u);
    EXPECT_GT(stepping.statistics().kept, 0u);

    SimulatedDecoders idle = decoders;
    idle.decoding = false;
    DecodeThreadGovernor stalled(streamer_like(31, 16));
    run_every_10_ms(stalled, idle, 400);
    EXPECT_EQ(stalled.statistics().surges, 0u);

    DecodeThreadGovernorSettings targeted = streamer_like(31, 16);
    targeted.over_target_updates = 1000;  // no removal: the surge's own frame check
    decoders.frame_ms = 40;
    DecodeThreadGovernor over(targeted);
    run_every_10_ms(over, decoders, 400);
    EXPECT_EQ(over.statistics().surges, 0u);
}

// Decode threads that slow one frame in five, more the more of them decode: the app's pace
// (its median frame) does not move, its tail does.
struct SpikingFrames {
    SimulatedDecoders decoders;
    std::size_t harmless_threads = 8;  // up to 8 threads slow no frame
    double spike_ms_per_thread = 0.4;  // each thread past them, one frame in five
    bool spikes_of_its_own = false;    // the app's own: every fifth frame 5 ms, at any count
    int update = 0;

    DecodeThreadInput next(std::size_t active) {
        DecodeThreadInput input = decoders.input(active, 0.01);
        input.frame_ms = 2;
        if (++update % 5 == 0) {
            if (spikes_of_its_own) input.frame_ms = 5;
            if (active > harmless_threads) {
                input.frame_ms += spike_ms_per_thread * double(active - harmless_threads);
            }
        }
        return input;
    }
    void run(DecodeThreadGovernor& governor, int updates) {
        for (int i = 0; i < updates; ++i) governor.update(next(governor.active_threads()));
    }
};

// Without a target, the governor holds the one it measures: 1.5 times the app's median frame
// and at least half a millisecond over it (3 ms here). All 15 threads active (a lowered
// priority starts them all) make one frame in five 4.8 ms: it removes a thread a window until
// the tail is within 3 ms (10 threads: 2.8 ms), and the trials that follow are taken back.
TEST(DecodeThreadGovernorTest, WithoutATargetItHoldsTheAppsOwnPace) {
    DecodeThreadGovernorSettings s = streamer_like(15, 15);
    s.frame_ms_target = 0;
    DecodeThreadGovernor governor(s);
    SpikingFrames frames;
    frames.decoders.useful_threads = 16;
    frames.run(governor, 24);
    EXPECT_EQ(governor.active_threads(), 15u) << "nothing measured before the first window";
    frames.run(governor, 3000);  // 30 s
    EXPECT_DOUBLE_EQ(governor.statistics().measured_target_ms, 3.0);
    EXPECT_GE(governor.statistics().removed, 5u);
    EXPECT_GE(governor.active_threads(), 10u);
    EXPECT_LE(governor.active_threads(), 11u) << "10, or 11 on a trial";
    for (int i = 0; i < 3000; ++i) {
        EXPECT_LE(governor.update(frames.next(governor.active_threads())).active_threads, 11u);
    }

    // The slack: frames of 0.5 ms whose tail is 0.9 ms (a loop's jitter; 1.5 times is 0.75) are
    // within the target.
    DecodeThreadGovernor loop(s);
    SpikingFrames jitter = frames;
    jitter.harmless_threads = 15;
    for (int i = 0; i < 3000; ++i) {
        DecodeThreadInput input = jitter.next(loop.active_threads());
        input.frame_ms = i % 5 == 0 ? 0.9 : 0.5;
        loop.update(input);
    }
    EXPECT_DOUBLE_EQ(loop.statistics().measured_target_ms, 1.0);
    EXPECT_EQ(loop.active_threads(), 15u);

    // Frames that keep their pace keep every thread.
    DecodeThreadGovernor steady(s);
    SpikingFrames fine = frames;
    fine.harmless_threads = 15;
    fine.run(steady, 3000);
    EXPECT_EQ(steady.active_threads(), 15u);
    EXPECT_EQ(steady.statistics().removed, 0u);

    // A tail of the app's own (every fifth frame 5 ms, at any count): each removal's next
    // window has the same tail, so the thread is given back, and the removals come ever more
    // rarely: 4, 8, 16, then 32 windows apart.
    DecodeThreadGovernor own(s);
    SpikingFrames its_own = fine;
    its_own.spikes_of_its_own = true;
    std::size_t fewest = 15;
    for (int i = 0; i < 3000; ++i) {
        fewest = std::min(fewest, own.update(its_own.next(own.active_threads())).active_threads);
    }
    EXPECT_EQ(fewest, 14u) << "one thread at a time on trial, never more";
    EXPECT_GE(own.statistics().given_back, 4u);
    EXPECT_LE(own.statistics().removed, 7u) << "120 windows, removals ever further apart";
    EXPECT_EQ(own.statistics().removed - own.statistics().given_back, 15 - own.active_threads());

    // Without decoding, slow frames are not the decode threads' doing.
    DecodeThreadGovernor idle(s);
    SpikingFrames quiet = frames;
    quiet.decoders.decoding = false;
    quiet.run(idle, 3000);
    EXPECT_EQ(idle.active_threads(), 15u);

    // tail_ratio 0: no target measured, and nothing removed.
    s.tail_ratio = 0;
    DecodeThreadGovernor unmeasured(s);
    SpikingFrames again = frames;
    again.run(unmeasured, 3000);
    EXPECT_EQ(unmeasured.active_threads(), 15u);
    EXPECT_EQ(unmeasured.statistics().measured_target_ms, 0.0);
}

// A loop of 0.5 ms whose thread waits for a core now and then, however many threads decode (a
// 4 ms turn every 20 updates, so in every window): a thread removed for that tail is given
// back after the next window, whose tail is the same, and the pool stays whole but for the
// windows that check a removal. Before removals were checked, such a loop took the pool down
// to half its threads within a few seconds.
TEST(DecodeThreadGovernorTest, GivesBackAThreadWhoseRemovalLeftTheTailAsItWas) {
    DecodeThreadGovernorSettings s = streamer_like(15, 15);
    s.frame_ms_target = 0;  // measured: 1 ms (0.5 ms and the slack)
    DecodeThreadGovernor governor(s);
    SimulatedDecoders decoders;
    decoders.useful_threads = 16;
    double thread_updates = 0;
    constexpr int updates = 4000;  // 40 s
    for (int i = 0; i < updates; ++i) {
        DecodeThreadInput input = decoders.input(governor.active_threads(), 0.01);
        input.frame_ms = i % 20 == 0 ? 4 : 0.5;
        thread_updates += double(governor.update(input).active_threads);
    }
    const DecodeThreadGovernorStatistics& stats = governor.statistics();
    EXPECT_DOUBLE_EQ(stats.measured_target_ms, 1.0);
    EXPECT_GE(stats.given_back, 4u);
    EXPECT_EQ(stats.removed - stats.given_back, 15 - governor.active_threads());
    EXPECT_GE(governor.active_threads(), 14u);
    EXPECT_GE(thread_updates / updates, 14.8) << "a thread fewer only while a removal is checked";

    // The same loop where each thread past 6 adds 0.4 ms to the spike: each removal shortens
    // it by more than 5 %, is kept, and the removals stop at half the pool (7).
    DecodeThreadGovernor caused(s);
    for (int i = 0; i < updates; ++i) {
        const std::size_t active = caused.active_threads();
        DecodeThreadInput input = decoders.input(active, 0.01);
        input.frame_ms = 0.5;
        if (i % 20 == 0) input.frame_ms = 4 + 0.4 * double(active > 6 ? active - 6 : 0);
        caused.update(input);
    }
    EXPECT_EQ(caused.active_threads(), 7u);
    EXPECT_EQ(caused.statistics().given_back, 0u);
}

TEST(DecodeThreadGovernorTest, StaysWithinThePoolAndIgnoresUpdatesWithoutTime) {
    DecodeThreadGovernor governor(pool_of(3, 3));
    SimulatedDecoders decoders;
    decoders.useful_threads = 16;
    EXPECT_EQ(run(governor, decoders, 200), 3u);
    EXPECT_EQ(governor.statistics().trials, 0u) << "the whole pool is active";

    DecodeThreadGovernor one(pool_of(1, 1));
    EXPECT_EQ(run(one, decoders, 200), 1u);

    DecodeThreadGovernor timeless(pool_of(8, 2));
    for (int i = 0; i < 100; ++i) timeless.update(decoders.input(2, 0.0));
    EXPECT_EQ(timeless.statistics().windows, 0u);
}

TEST(DecodeThreadGovernorTest, RefusesSettingsItCannotFollow) {
    auto refused = [](DecodeThreadGovernorSettings s) {
        try {
            DecodeThreadGovernor governor(s);
        } catch (const Error& error) {
            return error.code() == Errc::invalid_argument;
        }
        return false;
    };
    EXPECT_TRUE(refused(pool_of(0, 0)));
    EXPECT_TRUE(refused(pool_of(4, 0)));
    EXPECT_TRUE(refused(pool_of(4, 5)));
    DecodeThreadGovernorSettings s = pool_of(4, 2);
    s.frame_ms_target = -1;
    EXPECT_TRUE(refused(s));
    DecodeThreadGovernorSettings surge = pool_of(4, 2);
    surge.surge_updates = 0;
    EXPECT_TRUE(refused(surge));
    for (double ratio : {0.5, 101.0, -1.0, std::numeric_limits<double>::quiet_NaN(),
                         std::numeric_limits<double>::infinity()}) {
        DecodeThreadGovernorSettings tail = pool_of(4, 2);
        tail.tail_ratio = ratio;
        EXPECT_TRUE(refused(tail)) << ratio;
    }
    for (double slack : {-0.1, 1001.0, std::numeric_limits<double>::quiet_NaN()}) {
        DecodeThreadGovernorSettings tail = pool_of(4, 2);
        tail.tail_slack_ms = slack;
        EXPECT_TRUE(refused(tail)) << slack;
    }
    for (double drop : {-0.1, 1.0, std::numeric_limits<double>::quiet_NaN()}) {
        DecodeThreadGovernorSettings removal = pool_of(4, 2);
        removal.removal_min_tail_drop = drop;
        EXPECT_TRUE(refused(removal)) << drop;
    }
    DecodeThreadGovernorSettings median = pool_of(4, 2);
    median.pace_windows = 0;
    EXPECT_TRUE(refused(median));
    median.pace_windows = 4097;
    EXPECT_TRUE(refused(median));
    surge = pool_of(4, 2);
    surge.surge_seconds = std::numeric_limits<double>::quiet_NaN();
    EXPECT_TRUE(refused(surge));
    s = pool_of(4, 2);
    s.window_updates = 0;
    EXPECT_TRUE(refused(s));
    s = pool_of(4, 2);
    s.busy_share = 1.5;
    EXPECT_TRUE(refused(s));
    EXPECT_FALSE(refused(pool_of(4, 2)));
}

}  // namespace
}  // namespace vtpage::vt
