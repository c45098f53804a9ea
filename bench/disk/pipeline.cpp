#include "pipeline.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <optional>

#include "parallel.hpp"
#include "staging_ring.hpp"
#include "support/report_table.hpp"
#include "vtpage/base/error.hpp"

namespace vtpage::bench::disk {

namespace {

using namespace std::chrono_literals;

// A page read and waiting to be decoded: its read buffer and where it came from.
struct Job {
    std::size_t buffer = 0;
    const PageRef* page = nullptr;
};

// A queue of values between threads whose pop gives up when the run stops.
template <typename T>
class Handoff {
public:
    void push(T value) {
        {
            const std::lock_guard lock(mutex_);
            values_.push_back(value);
        }
        changed_.notify_one();
    }
    void close() {
        {
            const std::lock_guard lock(mutex_);
            closed_ = true;
        }
        changed_.notify_all();
    }
    // The next value; nullopt once closed and empty, or when `stop` is set.
    std::optional<T> pop(const std::atomic<bool>& stop) {
        std::unique_lock lock(mutex_);
        while (values_.empty() && !closed_ && !stop) changed_.wait_for(lock, 10ms);
        if (values_.empty() || stop) return std::nullopt;
        T value = values_.front();
        values_.pop_front();
        return value;
    }
    // Every value there now, without waiting; or, with `wait`, after one came (or 10 ms).
    std::deque<T> take_all(bool wait) {
        std::unique_lock lock(mutex_);
        if (wait && values_.empty()) changed_.wait_for(lock, 10ms);
        return std::exchange(values_, {});
    }

private:
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<T> values_;
    bool closed_ = false;
};

std::uint64_t round_up(std::uint64_t bytes, std::uint64_t alignment) {
    return (bytes + alignment - 1) / alignment * alignment;
}

// Read buffers aligned for O_DIRECT.
HostBuffer aligned_buffers(std::size_t bytes) {
    void* memory = std::aligned_alloc(vt::file_read_direct_alignment,
                                      round_up(bytes, vt::file_read_direct_alignment));
    if (!memory) throw Error(Errc::out_of_memory, "Pipeline", "no memory for the read buffers");
    return HostBuffer(static_cast<std::byte*>(memory), [](std::byte* p) { std::free(p); });
}

class Pipeline {
public:
    Pipeline(const PageSet& set, ReadMode mode, DeviceCopier& copier,
             const PipelineSettings& settings)
        : set_(set),
          mode_(mode),
          copier_(copier),
          settings_(settings),
          files_(set, mode),
          buffer_bytes_(round_up(set.largest_extent, vt::file_read_direct_alignment)),
          buffer_count_(settings.depth + 2 * settings.workers),
          buffers_(aligned_buffers(buffer_bytes_ * buffer_count_)),
          staging_(copier, settings.staging_pages, set.page_bytes),
          queue_({.depth = settings.depth,
                  .max_queued = buffer_count_,
                  .backend = settings.read_backend,
                  .page_cache_copiers = settings.page_cache_copiers}) {
        for (std::size_t i = 0; i < buffer_count_; ++i) returned_.push(i);
        pages_of_buffer_.resize(buffer_count_);
    }

    // Copies still running after a failure must end before the staging buffers are freed.
    ~Pipeline() {
        try {
            copier_.synchronize();
        } catch (const Error&) {}
    }

    PipelineResult run() {
        const app::CpuSample cpu_before = app::sample_cpu();
        Stopwatch clock;
        run_parallel(settings_.workers + 1, [&](std::size_t index, const std::atomic<bool>& stop) {
            if (index == 0) {
                read_pages(clock, stop);
            } else {
                decode_pages(index - 1, stop);
            }
        });
        copier_.synchronize();
        PipelineResult result;
        result.seconds = clock.seconds();
        result.cpu = app::cpu_usage_since(cpu_before);
        result.pages = delivered_.load();
        result.bytes_read = bytes_read_;
        result.read_backend = std::string(vt::to_string(queue_.backend()));
        return result;
    }

private:
    std::byte* buffer(std::size_t index) const { return buffers_.get() + index * buffer_bytes_; }

    // Submits the read of the next page into a free buffer; false when no more pages go in.
    bool submit_next(const Stopwatch& clock, std::size_t free_buffer) {
        const bool one_pass_done = is_cold(mode_) && next_page_ == set_.pages.size();
        if (one_pass_done || clock.seconds() >= settings_.seconds) return false;
        const PageRef& page = set_.pages[next_page_++ % set_.pages.size()];
        const std::uint64_t bytes =
            mode_ == ReadMode::cold_direct
                ? round_up(page.extent.bytes, vt::file_read_direct_alignment)
                : page.extent.bytes;
        pages_of_buffer_[free_buffer] = &page;
        queue_.submit({.fd = files_.fd(page.archive),
                       .offset = page.extent.offset,
                       .destination = std::span(buffer(free_buffer), bytes),
                       .tag = free_buffer});
        bytes_read_ += bytes;
        ++in_flight_;
        return true;
    }

    void hand_over_completions() {
        for (const vt::ReadCompletion& done : queue_.wait(1, 5ms)) {
            --in_flight_;
            if (done.status != vt::ReadStatus::ok) {
                throw Error(Errc::io_error, "FileReadQueue", done.message);
            }
            jobs_.push({done.tag, pages_of_buffer_[done.tag]});
        }
    }

    // The reading thread: keeps every free buffer reading until no more pages go in.
    void read_pages(const Stopwatch& clock, const std::atomic<bool>& stop) {
        bool submitting = true;
        std::deque<std::size_t> free;
        while (!stop) {
            const bool idle = in_flight_ == 0 && submitting;
            for (std::size_t b : returned_.take_all(idle && free.empty())) free.push_back(b);
            while (submitting && !free.empty()) {
                submitting = submit_next(clock, free.front());
                if (submitting) free.pop_front();
            }
            if (in_flight_ > 0) {
                hand_over_completions();
            } else if (!submitting) {
                break;
            }
        }
        jobs_.close();
    }

    // A decoding worker: verifies and decodes each page read into a staging buffer, gives the
    // read buffer back and copies the page to the device.
    void decode_pages(std::size_t worker, const std::atomic<bool>& stop) {
        while (const std::optional<Job> job = jobs_.pop(stop)) {
            const PageRef& page = *job->page;
            const StagingRing::Slot slot = staging_.acquire();
            set_.archives[page.archive]->decode_page(
                page.page, std::span(buffer(job->buffer), page.extent.bytes),
                std::span(slot.memory, set_.page_bytes));
            returned_.push(job->buffer);
            copier_.copy(worker, delivered_++, slot.memory, slot.index);
            staging_.copying(slot);
        }
    }

    const PageSet& set_;
    ReadMode mode_;
    DeviceCopier& copier_;
    PipelineSettings settings_;
    SetFiles files_;
    std::size_t buffer_bytes_;
    std::size_t buffer_count_;
    HostBuffer buffers_;
    StagingRing staging_;
    vt::FileReadQueue queue_;
    std::vector<const PageRef*> pages_of_buffer_;
    Handoff<Job> jobs_;
    Handoff<std::size_t> returned_;  // read buffers free again
    std::size_t next_page_ = 0;
    std::size_t in_flight_ = 0;
    std::uint64_t bytes_read_ = 0;
    std::atomic<std::uint64_t> delivered_{0};
};

}  // namespace

PipelineResult run_pipeline(const PageSet& set, ReadMode mode, DeviceCopier& copier,
                            const PipelineSettings& settings) {
    PipelineSettings checked = settings;
    // A worker holds one staging buffer at most: with as many buffers, acquire always finds one.
    checked.workers = std::clamp<std::size_t>(settings.workers, 1, settings.staging_pages);
    Pipeline pipeline(set, mode, copier, checked);
    return pipeline.run();
}

}  // namespace vtpage::bench::disk
