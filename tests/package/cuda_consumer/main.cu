// A kernel writes a DeviceVector and a committed PageTable page through the installed library's
// public headers; the host reads both back. Exit 77 (skipped, with the reason) where there is no
// CUDA GPU with virtual memory management.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "vtpage/backend/backend_factory.hpp"
#include "vtpage/core/device_vector.hpp"
#include "vtpage/core/page_table.hpp"

namespace {

constexpr int skipped = 77;

__global__ void write_indices(std::uint32_t* out, std::size_t count, std::uint32_t scale) {
    const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (i < count) out[i] = std::uint32_t(i) * scale;
}

// Launches the kernel over `count` elements and waits; false (with the CUDA error) on failure.
bool fill(std::uint32_t* out, std::size_t count, std::uint32_t scale) {
    write_indices<<<unsigned((count + 255) / 256), 256>>>(out, count, scale);
    const cudaError_t error = cudaDeviceSynchronize();
    if (error != cudaSuccess)
        std::fprintf(stderr, "cuda consumer: %s\n", cudaGetErrorString(error));
    return error == cudaSuccess;
}

// Index i holds i * scale.
bool holds_indices(const std::vector<std::uint32_t>& values, std::uint32_t scale) {
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (values[i] != std::uint32_t(i) * scale) return false;
    }
    return true;
}

bool check_vector(vtpage::Backend& backend) {
    vtpage::DeviceVector<std::uint32_t> vector(backend, 100000);
    if (!fill(vector.data(), vector.size(), 3)) return false;
    std::vector<std::uint32_t> seen(vector.size());
    vector.copy_to_host(seen);
    return holds_indices(seen, 3);
}

bool check_page(vtpage::Backend& backend) {
    using namespace vtpage;  // the _GiB / _MiB literals
    PageTable table(backend, {.region_size = 1_GiB, .budget_bytes = 8_MiB});
    const std::vector<PageIndex> pages{5};
    table.commit(pages);
    const std::size_t count = table.page_size() / sizeof(std::uint32_t);
    auto* page = reinterpret_cast<std::uint32_t*>(table.address_of(5));
    if (!fill(page, count, 7)) return false;
    std::vector<std::uint32_t> seen(count);
    backend.read(seen.data(), table.address_of(5), count * sizeof(std::uint32_t));
    return holds_indices(seen, 7);
}

}  // namespace

int main() {
    try {
        std::unique_ptr<vtpage::Backend> backend;
        try {
            backend = vtpage::make_backend({.name = "cuda"});
        } catch (const vtpage::Error& error) {
            std::printf("cuda consumer: skipped: no CUDA backend here (%s)\n", error.what());
            return skipped;
        }
        if (!check_vector(*backend) || !check_page(*backend)) {
            std::fprintf(stderr, "cuda consumer: the kernel's writes did not come back\n");
            return 1;
        }
        std::printf("cuda consumer: ok (DeviceVector and PageTable page written by a kernel)\n");
    } catch (const vtpage::Error& error) {
        std::fprintf(stderr, "cuda consumer: %s\n", error.what());
        return 1;
    }
    return 0;
}
