// A full disk for a test, stood in for by RLIMIT_FSIZE: writes past the limit fail (EFBIG rather
// than ENOSPC, through the same path), and SIGXFSZ is ignored so that the failure is an error
// and not the end of the process. The limit and the signal's handler come back at the end of
// the scope (the limit at lift(), when the test writes again before then).
#pragma once

#include <signal.h>
#include <sys/resource.h>

namespace vtpage::test {

class FullDisk {
public:
    // Files fill up at `bytes`; engaged() says whether the limit is in force.
    explicit FullDisk(rlim_t bytes) {
        struct sigaction ignore {};
        ignore.sa_handler = SIG_IGN;
        if (::getrlimit(RLIMIT_FSIZE, &saved_) != 0) return;
        if (::sigaction(SIGXFSZ, &ignore, &previous_) != 0) return;
        ignoring_ = true;
        struct rlimit small = saved_;
        small.rlim_cur = bytes;
        limited_ = ::setrlimit(RLIMIT_FSIZE, &small) == 0;
    }
    ~FullDisk() {
        lift();
        if (ignoring_) ::sigaction(SIGXFSZ, &previous_, nullptr);
    }
    FullDisk(const FullDisk&) = delete;
    FullDisk& operator=(const FullDisk&) = delete;

    bool engaged() const { return limited_; }
    // Files grow again (SIGXFSZ stays ignored until the end of the scope).
    void lift() {
        if (limited_) ::setrlimit(RLIMIT_FSIZE, &saved_);
        limited_ = false;
    }

private:
    struct rlimit saved_ {};
    struct sigaction previous_ {};
    bool ignoring_ = false;
    bool limited_ = false;
};

}  // namespace vtpage::test
