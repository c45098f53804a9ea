// Profiler timelines: a TraceRecorder keeps what the library's threads (and the app's) do --
// complete events (a name, a start and a duration), instant events and frame markers -- and
// writes them in the Chrome / Perfetto JSON trace format (chrome://tracing, ui.perfetto.dev).
//
//   TraceRecorder recorder;               // bounded: events_per_thread per thread
//   recorder.install();                   // the library's trace points now record into it
//   ... stream, render; trace::page_visible(page, frame) when a page is first drawn ...
//   recorder.uninstall();
//   recorder.write_file("trace.json");
//
// One recorder is installed per process at a time. With none installed a trace point costs one
// relaxed atomic load and a branch. Each thread records into its own ring of
// events_per_thread events (no lock shared between threads while recording); a full ring drops
// its oldest event, counted in TraceStatistics::dropped. Threads beyond max_threads record
// nothing (counted too).
//
// Where vtpage was built with NVTX (the CUDA toolkit's header-only nvtx3), every scope of the
// library is also an NVTX range while a recorder with TraceSettings::nvtx is installed, so that
// Nsight Systems shows the same ranges.
//
// Lifetime: uninstall the recorder, and stop whatever records into it (destroy the streamer),
// before destroying it. Writing while threads record is fine.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>

namespace vtpage {

// What an event carries in its args; unset fields are left out.
struct TraceArgs {
    static constexpr std::uint64_t unset = ~std::uint64_t(0);
    std::uint64_t page = unset;   // a virtual page (PageIndex)
    std::uint64_t frame = unset;  // a frame (FrameId)
    std::uint64_t count = unset;  // pages of a batch, bytes, ...
};

struct TraceSettings {
    std::size_t events_per_thread = std::size_t(1) << 16;  // 64 bytes each
    std::size_t max_threads = 64;
    bool nvtx = true;  // also NVTX ranges, where built with NVTX
};

struct TraceStatistics {
    std::uint64_t recorded = 0;         // events recorded since the recorder was made
    std::uint64_t dropped = 0;          // oldest events overwritten by full rings
    std::uint64_t dropped_threads = 0;  // events of threads beyond max_threads
    std::size_t retained = 0;           // events in the rings now
    std::size_t threads = 0;
};

class TraceRecorder {
public:
    // invalid_argument for zero events_per_thread or max_threads.
    explicit TraceRecorder(TraceSettings settings = {});
    ~TraceRecorder();  // uninstalls it if it is installed
    TraceRecorder(const TraceRecorder&) = delete;
    TraceRecorder& operator=(const TraceRecorder&) = delete;

    // Makes this the process's recorder (replacing any other); uninstall only if it is.
    void install() noexcept;
    void uninstall() noexcept;
    static TraceRecorder* installed() noexcept {
        return installed_.load(std::memory_order_acquire);
    }
    // Only for the check whether anything is installed (it orders nothing).
    static TraceRecorder* installed_relaxed() noexcept {
        return installed_.load(std::memory_order_relaxed);
    }

    // Nanoseconds since the recorder was made (the time base of every event).
    std::int64_t now() const noexcept;

    // `name` and `category` must outlive the recorder (string literals).
    void complete(const char* category, const char* name, std::int64_t start, std::int64_t end,
                  TraceArgs args = {});
    void instant(const char* category, const char* name, TraceArgs args = {});
    // A process-wide marker ("frame" with the frame in its args).
    void frame_marker(const char* name, std::uint64_t frame);

    // The calling thread's name in this recorder (trace::name_thread does it for the installed
    // one).
    void rename_thread(std::string_view name);

    // NVTX (where built and enabled): push and pop a range on the calling thread.
    void push_range(const char* name) const noexcept;
    void pop_range() const noexcept;

    TraceStatistics statistics() const;
    // Drops every event kept (the counters stay).
    void clear();
    // The Chrome JSON trace: {"traceEvents": [...], "otherData": {...}} with thread_name and
    // process_name metadata; timestamps in microseconds.
    void write(std::ostream& out) const;
    std::string json() const;
    // io_error when the file cannot be written.
    void write_file(const std::string& path) const;

    struct Impl;

private:
    std::unique_ptr<Impl> impl_;
    static inline std::atomic<TraceRecorder*> installed_{nullptr};
};

namespace trace {

// The installed recorder, or null: one relaxed load (points check it before anything else).
inline TraceRecorder* active() noexcept {
    if (TraceRecorder::installed_relaxed() == nullptr) return nullptr;
    return TraceRecorder::installed();
}

// Names the calling thread in traces ("vtpage worker"); kept for recorders installed later. A
// thread other than the process's main one also gets it as its name in the system (top -H,
// perf, gdb, /proc/PID/task/TID/comm), shortened to the system's 15 characters by
// system_thread_name.
void name_thread(std::string_view name);
// "vtpage decode 12" -> "vtp-decode 12": "vtpage " written "vtp-", then the first 15 characters,
// without trailing spaces.
std::string system_thread_name(std::string_view name);

// The app's frame in which `page` was first drawn (derived from feedback, for example).
void page_visible(std::uint64_t page, std::uint64_t frame);

inline void instant(const char* category, const char* name, TraceArgs args = {}) {
    if (TraceRecorder* recorder = active()) recorder->instant(category, name, args);
}

// A complete event over the scope's life, and an NVTX range where built; nothing when no
// recorder is installed as the scope begins.
class Scope {
public:
    Scope(const char* category, const char* name, TraceArgs args = {}) noexcept
        : recorder_(active()) {
        if (recorder_) begin(category, name, args);
    }
    ~Scope() {
        if (recorder_) end();
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

    void set_count(std::uint64_t count) noexcept { args_.count = count; }
    // The frame, once known after the scope began (a frame id handed out inside it).
    void set_frame(std::uint64_t frame) noexcept { args_.frame = frame; }
    bool recording() const noexcept { return recorder_ != nullptr; }

private:
    void begin(const char* category, const char* name, TraceArgs args) noexcept;
    void end() noexcept;

    TraceRecorder* recorder_;
    const char* category_ = nullptr;
    const char* name_ = nullptr;
    TraceArgs args_;
    std::int64_t start_ = 0;
};

}  // namespace trace

#define VTPAGE_TRACE_CONCAT_INNER(a, b) a##b
#define VTPAGE_TRACE_CONCAT(a, b) VTPAGE_TRACE_CONCAT_INNER(a, b)
// A trace scope (and NVTX range) named `name` in `category` until the end of the block.
#define VTPAGE_TRACE_SCOPE(category, name, ...)                           \
    ::vtpage::trace::Scope VTPAGE_TRACE_CONCAT(vtpage_trace_, __LINE__) { \
        category, name, ::vtpage::TraceArgs { __VA_ARGS__ }               \
    }

}  // namespace vtpage
