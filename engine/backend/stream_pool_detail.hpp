// The CUDA stream-ordered pool, made by make_stream_ordered_pool in builds with CUDA.
#pragma once

#include <memory>

#include "vtpage/backend/stream_ordered_pool.hpp"

namespace vtpage::backend_detail {

// A new cudaMemPool_t with the settings, or (import_fd >= 0) the pool another process exported.
std::unique_ptr<StreamOrderedPool> make_cuda_stream_ordered_pool(StreamPoolSettings settings,
                                                                 int import_fd);

}  // namespace vtpage::backend_detail
