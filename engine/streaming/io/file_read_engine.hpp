// A FileReadQueue's backend: the threads that take reads from the ReadScheduler, make their
// attempts through the FileLayer and hand them back finished. Two exist: a pool of threads
// calling pread (file_read_threads.cpp) and one io_uring with the thread that feeds and reaps
// it (file_read_uring.cpp; file_read_uring_stub.cpp where vtpage was built without liburing).
// The threads share ownership of their engine and the scheduler, so that a read that outlives
// the queue's shutdown timeout still finds both when it ends.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "streaming/io/read_scheduler.hpp"
#include "vtpage/streaming/io/file_layer.hpp"

namespace vtpage::vt {

class FileReadEngine {
public:
    virtual ~FileReadEngine() = default;
    // After ReadScheduler::stop(): waits for the reads in flight until the deadline and ends
    // the threads. false when the deadline came first: the threads are left to end on their own.
    virtual bool stop(std::chrono::steady_clock::time_point deadline) = 0;
};

std::shared_ptr<FileReadEngine> make_thread_read_engine(std::shared_ptr<ReadScheduler> scheduler,
                                                        FileLayer& layer, std::size_t threads);
// not_supported where io_uring cannot be set up (the kernel refuses, or no liburing).
// `copiers`: the threads that copy cached reads (FileReadQueueSettings::page_cache_copiers, 0:
// the automatic count).
std::shared_ptr<FileReadEngine> make_uring_read_engine(std::shared_ptr<ReadScheduler> scheduler,
                                                       FileLayer& layer, std::size_t depth,
                                                       std::size_t copiers);
// Empty where an io_uring can be set up; else why not.
std::string uring_unavailable_reason();

}  // namespace vtpage::vt
