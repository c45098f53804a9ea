// CUDA runtime calls the CUDA -> Vulkan tests make, behind plain types (the test files are C++).
// Each returns the CUDA error's name, "cudaSuccess" when all went well.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

struct CUstream_st;

namespace vtpage::test {

std::string cuda_stream_create(int device, CUstream_st** stream);
std::string cuda_stream_destroy(CUstream_st* stream);
std::string cuda_stream_synchronize(CUstream_st* stream);
std::string cuda_host_alloc(void** memory, std::size_t bytes);  // pinned
std::string cuda_host_free(void* memory);
// Enqueues a kernel that spins for `milliseconds` of GPU time: what follows it on the stream
// runs that much later.
std::string cuda_spin(CUstream_st* stream, double milliseconds);
std::string cuda_copy_to_device_async(std::uint64_t destination, const void* source,
                                      std::size_t bytes, CUstream_st* stream);

}  // namespace vtpage::test
