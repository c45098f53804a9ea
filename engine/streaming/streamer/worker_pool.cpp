#include "streaming/streamer/worker_pool.hpp"

#include <string>

#include "vtpage/base/trace.hpp"

namespace vtpage::vt::streamer_detail {

void WorkerPool::start(std::size_t count) {
    try {
        for (std::size_t i = 0; i < count; ++i) threads_.emplace_back([this, i] { work(i); });
    } catch (...) {
        stop();
        throw;
    }
}

void WorkerPool::stop() {
    parts_.book.stop();
    for (std::thread& thread : threads_) {
        if (thread.joinable()) thread.join();
    }
    threads_.clear();
}

void WorkerPool::work(std::size_t index) {
    trace::name_thread("vtpage worker " + std::to_string(index));
    FillStage fills(parts_.fills);
    WorkerStall stall;
    const std::function<std::size_t()> room = [this] { return parts_.stored.room(); };
    while (true) {
        fills.release_finished(false);
        std::optional<std::vector<PendingKey>> keys =
            parts_.book.take_batch(stall, fills.holding(), room, parts_.batch_pages);
        if (!keys) break;
        if (keys->empty()) continue;
        if (parts_.runner.run(std::move(*keys), fills)) {
            stall.stalled = false;
        } else {
            parts_.book.note_stall(stall);
        }
    }
    fills.finish();
}

}  // namespace vtpage::vt::streamer_detail
