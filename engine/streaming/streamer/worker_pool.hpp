// The streamer's worker threads: each waits on the request book for a batch, runs it (the batch
// runner, with the worker's own fill stage) and, when it found no room in the budget, stalls
// until frames complete, pins are released or a short while passed.
//
// No lock of its own: the threads are started and joined by the streamer's constructor and
// destructor alone; the workers wait under the request book's lock.
#pragma once

#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

#include "streaming/streamer/batch_runner.hpp"
#include "streaming/streamer/fill_stage.hpp"
#include "streaming/streamer/request_book.hpp"
#include "streaming/streamer/stored_page_route.hpp"

namespace vtpage::vt::streamer_detail {

class WorkerPool {
public:
    struct Parts {
        RequestBook& book;
        BatchRunner& runner;
        StoredPageRoute& stored;
        FillStage::Parts fills;
        std::size_t batch_pages = 0;
    };
    explicit WorkerPool(Parts parts) : parts_(std::move(parts)) {}
    ~WorkerPool() { stop(); }

    // Starts `count` workers; if one cannot start, stops those that did and throws.
    void start(std::size_t count);
    // Stops the workers (each finishes its batch and its device work) and joins them.
    void stop();

private:
    void work(std::size_t index);

    Parts parts_;
    std::vector<std::thread> threads_;
};

}  // namespace vtpage::vt::streamer_detail
