// A FileLayer that injects read faults, for tests of FileReadQueue (both backends):
//
//   FaultInjectingFileLayer faults({.seed = 7, .short_read_every = 3, .eintr_every = 5});
//   faults.fail_at(fd, 4096, EIO);       // the attempt that reads at that offset fails, once
//   faults.hold();                       // attempts wait in decide() until release()
//   FileReadQueue queue({.layer = &faults});
//
// Scripted faults (fail_at, shorten_at) match an attempt by fd and the offset it reads at, and
// are used up after `times` matches (0: never). Periodic faults count every attempt: every Nth
// is shortened to a random length (from the seed) or fails with EAGAIN, EINTR or EIO. A scripted
// fault wins over a periodic one. Which attempt is the Nth depends on the order the queue's
// threads make them; the lengths drawn depend only on the seed and that order.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <random>
#include <vector>

#include "vtpage/streaming/io/file_layer.hpp"

namespace vtpage::vt {

struct FaultInjectingFileLayerSettings {
    std::uint64_t seed = 1;
    std::uint64_t short_read_every = 0;  // 0: never
    std::uint64_t eagain_every = 0;
    std::uint64_t eintr_every = 0;
    std::uint64_t eio_every = 0;
};

class FaultInjectingFileLayer : public FileLayer {
public:
    explicit FaultInjectingFileLayer(FaultInjectingFileLayerSettings settings = {});

    // The next `times` attempts of fd at offset fail with `error` (0 times: every one).
    void fail_at(int fd, std::uint64_t offset, int error, std::uint64_t times = 1);
    // The next `times` attempts of fd at offset read at most `bytes`.
    void shorten_at(int fd, std::uint64_t offset, std::size_t bytes, std::uint64_t times = 1);
    // From now on attempts wait in decide() until release(): reads stay in flight.
    void hold();
    void release();
    // Attempts waiting in decide() now, and attempts decided in all.
    std::size_t held() const;
    std::uint64_t attempts() const;
    // Faults injected in all (shortened or failed attempts).
    std::uint64_t injected() const;

    ReadDecision decide(const ReadAttempt& attempt) override;

private:
    struct ScriptedFault {
        int fd = -1;
        std::uint64_t offset = 0;
        ReadDecision decision;
        std::uint64_t times = 1;  // 0: unlimited
    };
    void wait_while_held(std::unique_lock<std::mutex>& lock);
    bool scripted_nolock(const ReadAttempt& attempt, ReadDecision& decision);
    ReadDecision periodic_nolock(const ReadAttempt& attempt);

    FaultInjectingFileLayerSettings settings_;
    mutable std::mutex mutex_;
    std::condition_variable released_;
    std::vector<ScriptedFault> scripted_;
    std::mt19937_64 random_;
    bool holding_ = false;
    std::size_t held_ = 0;
    std::uint64_t attempts_ = 0;
    std::uint64_t injected_ = 0;
};

}  // namespace vtpage::vt
