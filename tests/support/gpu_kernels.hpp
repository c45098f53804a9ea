// Small CUDA kernels the GPU tests run on backend mappings. Each returns the name of the CUDA
// error the launch and the wait for it gave ("cudaSuccess" when all went well).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace vtpage::test {

std::string gpu_sum_words(std::uint64_t address, std::size_t words, std::uint64_t& sum);
std::string gpu_fill_words(std::uint64_t address, std::size_t words, std::uint32_t value);
// The same on a chosen device (its primary context); the calling thread's device is restored.
std::string gpu_sum_words_on(int device, std::uint64_t address, std::size_t words,
                             std::uint64_t& sum);
std::string gpu_fill_words_on(int device, std::uint64_t address, std::size_t words,
                              std::uint32_t value);

// Writes pattern_word(first + i, seed) (pattern.hpp) to word i of the range at address.
std::string gpu_fill_pattern(std::uint64_t address, std::size_t words, std::uint64_t first,
                             std::uint32_t seed);
// Counts the words of the range at address that differ from pattern_word(first + i, seed).
std::string gpu_count_pattern_mismatches(std::uint64_t address, std::size_t words,
                                         std::uint64_t first, std::uint32_t seed,
                                         std::uint64_t& mismatches);

// Enqueues on `stream` (a cudaStream_t) a host function that sleeps `milliseconds`: work
// enqueued after it waits that long. Returns without waiting.
std::string gpu_delay_stream(void* stream, unsigned milliseconds);
// Enqueues on `stream` (a cudaStream_t) a kernel that writes `value` to each of `words` words at
// address. Returns without waiting: the launch's error only.
std::string gpu_fill_words_async(void* stream, std::uint64_t address, std::size_t words,
                                 std::uint32_t value);

}  // namespace vtpage::test
