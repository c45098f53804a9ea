#include "cuda_stream_helpers.hpp"

#include <cuda_runtime.h>

namespace vtpage::test {

namespace {

__global__ void spin(unsigned long long nanoseconds) {
    unsigned long long start = 0, now = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < nanoseconds);
}

std::string name(cudaError_t error) { return cudaGetErrorName(error); }

}  // namespace

std::string cuda_stream_create(int device, CUstream_st** stream) {
    cudaError_t error = cudaSetDevice(device);
    if (error == cudaSuccess) error = cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking);
    return name(error);
}
std::string cuda_stream_destroy(CUstream_st* stream) { return name(cudaStreamDestroy(stream)); }
std::string cuda_stream_synchronize(CUstream_st* stream) {
    return name(cudaStreamSynchronize(stream));
}
std::string cuda_host_alloc(void** memory, std::size_t bytes) {
    return name(cudaMallocHost(memory, bytes));
}
std::string cuda_host_free(void* memory) { return name(cudaFreeHost(memory)); }

std::string cuda_spin(CUstream_st* stream, double milliseconds) {
    spin<<<1, 1, 0, stream>>>(static_cast<unsigned long long>(milliseconds * 1e6));
    return name(cudaGetLastError());
}

std::string cuda_copy_to_device_async(std::uint64_t destination, const void* source,
                                      std::size_t bytes, CUstream_st* stream) {
    return name(cudaMemcpyAsync(reinterpret_cast<void*>(destination), source, bytes,
                                cudaMemcpyHostToDevice, stream));
}

}  // namespace vtpage::test
