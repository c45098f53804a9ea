#include "gpu_kernels.hpp"
#include "pattern.hpp"

#include <cuda_runtime.h>

#include <chrono>
#include <thread>

namespace vtpage::test {

namespace {

__global__ void sum_words(const std::uint32_t* words, std::size_t count, unsigned long long* sum) {
    unsigned long long local = 0;
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += std::size_t(gridDim.x) * blockDim.x) {
        local += words[i];
    }
    atomicAdd(sum, local);
}

__global__ void fill_words(std::uint32_t* words, std::size_t count, std::uint32_t value) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += std::size_t(gridDim.x) * blockDim.x) {
        words[i] = value;
    }
}

__global__ void fill_pattern(std::uint32_t* words, std::size_t count, std::uint64_t first,
                             std::uint32_t seed) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += std::size_t(gridDim.x) * blockDim.x) {
        words[i] = pattern_word(first + i, seed);
    }
}

__global__ void count_pattern_mismatches(const std::uint32_t* words, std::size_t count,
                                         std::uint64_t first, std::uint32_t seed,
                                         unsigned long long* mismatches) {
    unsigned long long local = 0;
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += std::size_t(gridDim.x) * blockDim.x) {
        local += words[i] != pattern_word(first + i, seed);
    }
    if (local) atomicAdd(mismatches, local);
}

// Enough blocks to keep every SM of a large GPU streaming over gigabytes.
constexpr int pattern_blocks = 2048;

std::string finish() {
    cudaError_t error = cudaGetLastError();
    if (error == cudaSuccess) error = cudaDeviceSynchronize();
    return cudaGetErrorName(error);
}

}  // namespace

std::string gpu_sum_words(std::uint64_t address, std::size_t words, std::uint64_t& sum) {
    unsigned long long* device_sum = nullptr;
    cudaError_t error = cudaMalloc(&device_sum, sizeof(*device_sum));
    if (error != cudaSuccess) return cudaGetErrorName(error);
    cudaMemset(device_sum, 0, sizeof(*device_sum));
    sum_words<<<128, 256>>>(reinterpret_cast<const std::uint32_t*>(address), words, device_sum);
    std::string result = finish();
    if (result == "cudaSuccess") {
        unsigned long long host_sum = 0;
        cudaMemcpy(&host_sum, device_sum, sizeof(host_sum), cudaMemcpyDeviceToHost);
        sum = host_sum;
    }
    cudaFree(device_sum);
    return result;
}

std::string gpu_fill_words(std::uint64_t address, std::size_t words, std::uint32_t value) {
    fill_words<<<128, 256>>>(reinterpret_cast<std::uint32_t*>(address), words, value);
    return finish();
}

std::string gpu_fill_pattern(std::uint64_t address, std::size_t words, std::uint64_t first,
                             std::uint32_t seed) {
    fill_pattern<<<pattern_blocks, 256>>>(reinterpret_cast<std::uint32_t*>(address), words, first,
                                          seed);
    return finish();
}

std::string gpu_count_pattern_mismatches(std::uint64_t address, std::size_t words,
                                         std::uint64_t first, std::uint32_t seed,
                                         std::uint64_t& mismatches) {
    unsigned long long* device_count = nullptr;
    cudaError_t error = cudaMalloc(&device_count, sizeof(*device_count));
    if (error != cudaSuccess) return cudaGetErrorName(error);
    error = cudaMemset(device_count, 0, sizeof(*device_count));
    if (error != cudaSuccess) {
        cudaFree(device_count);
        return cudaGetErrorName(error);
    }
    count_pattern_mismatches<<<pattern_blocks, 256>>>(
        reinterpret_cast<const std::uint32_t*>(address), words, first, seed, device_count);
    std::string result = finish();
    if (result == "cudaSuccess") {
        unsigned long long host_count = 0;
        error = cudaMemcpy(&host_count, device_count, sizeof(host_count), cudaMemcpyDeviceToHost);
        if (error == cudaSuccess) {
            mismatches = host_count;
        } else {
            result = cudaGetErrorName(error);
        }
    }
    cudaFree(device_count);
    return result;
}

namespace {
// Runs work with `device` current, then makes the previous device current again.
template <typename Work>
std::string on_device(int device, Work work) {
    int previous = 0;
    cudaError_t error = cudaGetDevice(&previous);
    if (error == cudaSuccess) error = cudaSetDevice(device);
    if (error != cudaSuccess) return cudaGetErrorName(error);
    std::string result = work();
    cudaSetDevice(previous);
    return result;
}
}  // namespace

std::string gpu_sum_words_on(int device, std::uint64_t address, std::size_t words,
                             std::uint64_t& sum) {
    return on_device(device, [&] { return gpu_sum_words(address, words, sum); });
}

std::string gpu_fill_words_on(int device, std::uint64_t address, std::size_t words,
                              std::uint32_t value) {
    return on_device(device, [&] { return gpu_fill_words(address, words, value); });
}

std::string gpu_delay_stream(void* stream, unsigned milliseconds) {
    static_assert(sizeof(void*) == sizeof(std::uintptr_t));
    const auto sleep = [](void* data) {
        std::this_thread::sleep_for(
            std::chrono::milliseconds(reinterpret_cast<std::uintptr_t>(data)));
    };
    return cudaGetErrorName(
        cudaLaunchHostFunc(static_cast<cudaStream_t>(stream), sleep,
                           reinterpret_cast<void*>(static_cast<std::uintptr_t>(milliseconds))));
}

std::string gpu_fill_words_async(void* stream, std::uint64_t address, std::size_t words,
                                 std::uint32_t value) {
    fill_words<<<128, 256, 0, static_cast<cudaStream_t>(stream)>>>(
        reinterpret_cast<std::uint32_t*>(address), words, value);
    return cudaGetErrorName(cudaGetLastError());
}

}  // namespace vtpage::test
