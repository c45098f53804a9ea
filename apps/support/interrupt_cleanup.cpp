#include "vtpage/app/interrupt_cleanup.hpp"

#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

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

void on_interrupt(int signal) {
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

void remove_partial_files_on_interrupt(const char* program) {
    program_name = program;
    struct sigaction action {};
    action.sa_handler = on_interrupt;
    sigemptyset(&action.sa_mask);
    sigaddset(&action.sa_mask, SIGINT);
    sigaddset(&action.sa_mask, SIGTERM);
    ::sigaction(SIGINT, &action, nullptr);
    ::sigaction(SIGTERM, &action, nullptr);
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
