#include "vtpage/app/interrupt_cleanup.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace vtpage::app {

namespace {

constexpr std::size_t slot_count = 16;

// Each registered path is a copy owned by whoever takes it out of its slot (an atomic exchange):
// the handler, which removes the file and exits, or the guard, which frees it.
std::array<std::atomic<const char*>, slot_count> partial_files{};
const char* program_name = "vtpage";

void write_text(const char* text) {
    std::size_t left = std::strlen(text);
    while (left > 0) {
        const ssize_t written = ::write(STDERR_FILENO, text, left);
        if (written <= 0) return;
        text += written;
        left -= std::size_t(written);
    }
}

[[noreturn]] void on_interrupt(int signal) {
    bool removed = false;
    for (auto& slot : partial_files) {
        const char* path = slot.exchange(nullptr);
        if (path && ::unlink(path) == 0) removed = true;
    }
    write_text(program_name);
    write_text(signal == SIGINT ? ": interrupted by SIGINT" : ": interrupted by SIGTERM");
    write_text(removed ? " (partial output removed)\n" : "\n");
    ::_exit(interrupted_exit_status);
}

}  // namespace

// The signals are taken by a thread of their own with sigwait, not by an asynchronous handler:
// a handler may interrupt any code (ThreadSanitizer's runtime deadlocked on its own lock when the
// handler ran inside its free), a waiting thread interrupts nothing.
void remove_partial_files_on_interrupt(const char* program) {
    program_name = program;
    sigset_t stops;
    sigemptyset(&stops);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGTERM);
    // Blocked here, before the program starts its threads, so that every thread inherits it and
    // only the waiting thread takes them.
    ::pthread_sigmask(SIG_BLOCK, &stops, nullptr);
    std::thread([stops] {
        int signal = 0;
        while (::sigwait(&stops, &signal) != 0) {}
        on_interrupt(signal);
    }).detach();
}

PartialFileGuard::PartialFileGuard(const std::string& path) {
    const char* copy = ::strdup(path.c_str());
    if (!copy) throw std::bad_alloc();
    for (std::size_t i = 0; i < slot_count; ++i) {
        const char* empty = nullptr;
        if (partial_files[i].compare_exchange_strong(empty, copy)) {
            slot_ = int(i);
            return;
        }
    }
    throw std::length_error("more than 16 partial files at once");
}

PartialFileGuard::~PartialFileGuard() { finish(); }

void PartialFileGuard::finish() noexcept {
    if (slot_ >= 0) {
        const char* path = partial_files[std::size_t(slot_)].exchange(nullptr);
        std::free(const_cast<char*>(path));  // null when the handler took it
    }
    slot_ = -1;
}

}  // namespace vtpage::app
