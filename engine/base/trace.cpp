#include "vtpage/base/trace.hpp"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <ostream>
#include <sstream>
#include <vector>

#include "vtpage/base/error.hpp"

#if defined(VTPAGE_HAS_NVTX) && VTPAGE_HAS_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace vtpage {

namespace {

using Clock = std::chrono::steady_clock;

struct Event {
    const char* category = nullptr;
    const char* name = nullptr;
    std::int64_t start = 0;  // ns since the recorder's origin
    std::int64_t duration = 0;
    TraceArgs args;
    char phase = 'X';  // X complete, i instant
    char scope = 't';  // of an instant: t thread, g global
};

// One thread's events: written by that thread, read by write() and statistics().
struct ThreadRing {
    std::mutex mutex;
    std::vector<Event> events;  // a ring of settings.events_per_thread
    std::size_t next = 0;
    std::size_t size = 0;
    std::uint64_t recorded = 0;
    std::uint64_t dropped = 0;
    std::uint32_t tid = 0;
    std::string name;

    void push(const Event& event) {
        std::lock_guard lock(mutex);
        if (events.empty()) return;
        events[next] = event;
        next = (next + 1) % events.size();
        if (size < events.size()) {
            ++size;
        } else {
            ++dropped;
        }
        ++recorded;
    }
    template <typename Visit>
    void for_each_nolock(Visit&& visit) const {
        const std::size_t first = (next + events.size() - size) % events.size();
        for (std::size_t i = 0; i < size; ++i) visit(events[(first + i) % events.size()]);
    }
};

struct ThreadIdentity {
    std::uint32_t tid = static_cast<std::uint32_t>(::syscall(SYS_gettid));
    std::string name;
};

ThreadIdentity& this_thread() {
    thread_local ThreadIdentity identity;
    return identity;
}

std::string default_name(std::uint32_t tid) {
    if (tid == static_cast<std::uint32_t>(::getpid())) return "main";
    return "thread " + std::to_string(tid);
}

std::atomic<std::uint64_t> next_recorder_id{1};

// The calling thread's ring of the recorder with this id (null: beyond max_threads).
struct RingCache {
    std::uint64_t recorder = 0;
    ThreadRing* ring = nullptr;
};
thread_local RingCache ring_cache;

void write_escaped(std::ostream& out, std::string_view text) {
    out << '"';
    for (char c : text) {
        if (c == '"' || c == '\\') {
            out << '\\' << c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char escaped[8];
            std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
            out << escaped;
        } else {
            out << c;
        }
    }
    out << '"';
}

void write_microseconds(std::ostream& out, std::int64_t nanoseconds) {
    char text[32];
    std::snprintf(text, sizeof text, "%lld.%03lld", static_cast<long long>(nanoseconds / 1000),
                  static_cast<long long>(nanoseconds % 1000));
    out << text;
}

void write_args(std::ostream& out, const TraceArgs& args) {
    out << ",\"args\":{";
    const char* separator = "";
    auto field = [&](const char* name, std::uint64_t value) {
        if (value == TraceArgs::unset) return;
        out << separator << '"' << name << "\":" << value;
        separator = ",";
    };
    field("page", args.page);
    field("frame", args.frame);
    field("count", args.count);
    out << '}';
}

}  // namespace

struct TraceRecorder::Impl {
    TraceSettings settings;
    std::uint64_t id = next_recorder_id.fetch_add(1);
    Clock::time_point origin = Clock::now();
    std::uint32_t pid = static_cast<std::uint32_t>(::getpid());

    mutable std::mutex rings_mutex;  // guards rings (not their contents)
    std::vector<std::unique_ptr<ThreadRing>> rings;
    std::atomic<std::uint64_t> dropped_threads{0};

    ThreadRing* ring_of_this_thread() {
        if (ring_cache.recorder == id) return ring_cache.ring;
        ThreadIdentity& identity = this_thread();
        std::lock_guard lock(rings_mutex);
        ThreadRing* found = nullptr;
        for (auto& ring : rings) {
            if (ring->tid == identity.tid) found = ring.get();
        }
        if (!found && rings.size() < settings.max_threads) {
            auto ring = std::make_unique<ThreadRing>();
            ring->events.resize(settings.events_per_thread);
            ring->tid = identity.tid;
            ring->name = identity.name.empty() ? default_name(identity.tid) : identity.name;
            found = ring.get();
            rings.push_back(std::move(ring));
        }
        ring_cache = {id, found};
        return found;
    }

    void record(const Event& event) {
        if (ThreadRing* ring = ring_of_this_thread()) {
            ring->push(event);
        } else {
            dropped_threads.fetch_add(1, std::memory_order_relaxed);
        }
    }

    std::int64_t now() const noexcept {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - origin).count();
    }
};

TraceRecorder::TraceRecorder(TraceSettings settings) {
    if (settings.events_per_thread == 0 || settings.max_threads == 0) {
        throw Error(Errc::invalid_argument, "TraceRecorder",
                    "events_per_thread and max_threads must be > 0",
                    detail::concat("events_per_thread=", settings.events_per_thread,
                                   ", max_threads=", settings.max_threads));
    }
    impl_ = std::make_unique<Impl>();
    impl_->settings = settings;
}

TraceRecorder::~TraceRecorder() { uninstall(); }

void TraceRecorder::install() noexcept {
#if defined(VTPAGE_HAS_NVTX) && VTPAGE_HAS_NVTX
    // NVTX sets itself up on its first call, unsynchronised: done here, before any thread that
    // sees this recorder installed pushes a range.
    if (impl_->settings.nvtx) nvtxInitialize(nullptr);
#endif
    installed_.store(this, std::memory_order_release);
}

void TraceRecorder::uninstall() noexcept {
    TraceRecorder* self = this;
    installed_.compare_exchange_strong(self, nullptr, std::memory_order_acq_rel);
}

std::int64_t TraceRecorder::now() const noexcept { return impl_->now(); }

void TraceRecorder::complete(const char* category, const char* name, std::int64_t start,
                             std::int64_t end, TraceArgs args) {
    impl_->record({.category = category,
                   .name = name,
                   .start = start,
                   .duration = std::max<std::int64_t>(0, end - start),
                   .args = args});
}

void TraceRecorder::instant(const char* category, const char* name, TraceArgs args) {
    impl_->record({.category = category, .name = name, .start = now(), .args = args, .phase = 'i'});
}

void TraceRecorder::frame_marker(const char* name, std::uint64_t frame) {
    impl_->record({.category = "frame",
                   .name = name,
                   .start = now(),
                   .args = {.frame = frame},
                   .phase = 'i',
                   .scope = 'g'});
}

void TraceRecorder::push_range([[maybe_unused]] const char* name) const noexcept {
#if defined(VTPAGE_HAS_NVTX) && VTPAGE_HAS_NVTX
    if (impl_->settings.nvtx) nvtxRangePushA(name);
#endif
}

void TraceRecorder::pop_range() const noexcept {
#if defined(VTPAGE_HAS_NVTX) && VTPAGE_HAS_NVTX
    if (impl_->settings.nvtx) nvtxRangePop();
#endif
}

void TraceRecorder::rename_thread(std::string_view name) {
    if (ThreadRing* ring = impl_->ring_of_this_thread()) {
        std::lock_guard lock(ring->mutex);
        ring->name = std::string(name);
    }
}

TraceStatistics TraceRecorder::statistics() const {
    TraceStatistics stats;
    std::lock_guard lock(impl_->rings_mutex);
    for (const auto& ring : impl_->rings) {
        std::lock_guard ring_lock(ring->mutex);
        stats.recorded += ring->recorded;
        stats.dropped += ring->dropped;
        stats.retained += ring->size;
    }
    stats.dropped_threads = impl_->dropped_threads.load(std::memory_order_relaxed);
    stats.threads = impl_->rings.size();
    return stats;
}

void TraceRecorder::clear() {
    std::lock_guard lock(impl_->rings_mutex);
    for (const auto& ring : impl_->rings) {
        std::lock_guard ring_lock(ring->mutex);
        ring->next = 0;
        ring->size = 0;
    }
}

void TraceRecorder::write(std::ostream& out) const {
    const TraceStatistics stats = statistics();
    const std::uint32_t pid = impl_->pid;
    out << "{\"traceEvents\":[\n";
    out << "{\"ph\":\"M\",\"name\":\"process_name\",\"ts\":0,\"pid\":" << pid << ",\"tid\":" << pid
        << ",\"args\":{\"name\":\"vtpage\"}}";
    std::lock_guard lock(impl_->rings_mutex);
    for (const auto& ring : impl_->rings) {
        std::lock_guard ring_lock(ring->mutex);
        out << ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"ts\":0,\"pid\":" << pid
            << ",\"tid\":" << ring->tid << ",\"args\":{\"name\":";
        write_escaped(out, ring->name);
        out << "}}";
        ring->for_each_nolock([&](const Event& event) {
            out << ",\n{\"ph\":\"" << event.phase << "\",\"cat\":";
            write_escaped(out, event.category ? event.category : "");
            out << ",\"name\":";
            write_escaped(out, event.name ? event.name : "");
            out << ",\"pid\":" << pid << ",\"tid\":" << ring->tid << ",\"ts\":";
            write_microseconds(out, event.start);
            if (event.phase == 'X') {
                out << ",\"dur\":";
                write_microseconds(out, event.duration);
            } else {
                out << ",\"s\":\"" << event.scope << '"';
            }
            write_args(out, event.args);
            out << '}';
        });
    }
    out << "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"recorded\":" << stats.recorded
        << ",\"dropped\":" << stats.dropped << ",\"dropped_threads\":" << stats.dropped_threads
        << "}}\n";
}

std::string TraceRecorder::json() const {
    std::ostringstream out;
    write(out);
    return out.str();
}

void TraceRecorder::write_file(const std::string& path) const {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (out) write(out);
    out.flush();
    if (!out) {
        throw Error(Errc::io_error, "TraceRecorder", "cannot write the trace",
                    detail::concat("path=", path));
    }
}

namespace trace {

std::string system_thread_name(std::string_view name) {
    constexpr std::string_view prefix = "vtpage ";
    std::string system(name);
    if (name.substr(0, prefix.size()) == prefix) system = "vtp-" + system.substr(prefix.size());
    constexpr std::size_t limit = 15;  // the kernel's 16 bytes with the terminating zero
    if (system.size() > limit) system.resize(limit);
    while (!system.empty() && system.back() == ' ') system.pop_back();
    return system;
}

void name_thread(std::string_view name) {
    ThreadIdentity& identity = this_thread();
    identity.name = std::string(name);
    // The main thread's system name is the process's (ps, top, killall): left as it is.
    if (identity.tid != static_cast<std::uint32_t>(::getpid())) {
        ::pthread_setname_np(::pthread_self(), system_thread_name(name).c_str());
    }
    if (TraceRecorder* recorder = active()) recorder->rename_thread(identity.name);
}

void page_visible(std::uint64_t page, std::uint64_t frame) {
    if (TraceRecorder* recorder = active()) {
        recorder->instant("page", "visible", {.page = page, .frame = frame});
    }
}

void Scope::begin(const char* category, const char* name, TraceArgs args) noexcept {
    category_ = category;
    name_ = name;
    args_ = args;
    start_ = recorder_->now();
    recorder_->push_range(name);
}

void Scope::end() noexcept {
    recorder_->pop_range();
    try {
        recorder_->complete(category_, name_, start_, recorder_->now(), args_);
    } catch (...) {
        // No memory for the thread's ring: the event is lost, never the caller's work.
    }
}

}  // namespace trace

}  // namespace vtpage
