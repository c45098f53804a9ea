// A kernel writes and checks the stamps through the pages' device addresses (the region's
// mappings, read-write for this device). It runs in the CUDA backend's context: the backend
// works on the device's primary context, which is the one the runtime uses.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "page_verifier.hpp"
#include "vtpage/base/error.hpp"

namespace vtpage::stress {

namespace {

__global__ void stamp_pages(const StampJob* jobs, unsigned count,
                            unsigned long long stamps_per_page, unsigned long long stride,
                            unsigned* job_errors, StampMismatch* first, int* first_taken) {
    const unsigned long long total = count * stamps_per_page;
    for (unsigned long long i = blockIdx.x * 1ull * blockDim.x + threadIdx.x; i < total;
         i += 1ull * gridDim.x * blockDim.x) {
        const unsigned j = static_cast<unsigned>(i / stamps_per_page);
        const unsigned long long offset = (i % stamps_per_page) * stride;
        const StampJob job = jobs[j];
        auto* where = reinterpret_cast<PageStamp*>(job.address + offset);
        const PageStamp expected = make_stamp(job.page, job.generation, offset);
        if (job.write) {
            *where = expected;
            continue;
        }
        const PageStamp found = *where;
        if (!same_stamp(found, expected)) {
            atomicAdd(&job_errors[j], 1u);
            if (atomicCAS(first_taken, 0, 1) == 0) {
                first->page = job.page;
                first->generation = job.generation;
                first->found = found;
            }
        }
    }
}

void check(cudaError_t result, const char* what) {
    if (result == cudaSuccess) return;
    throw Error(Errc::backend_failure, "gpu verifier",
                std::string(what) + ": " + cudaGetErrorString(result), {},
                static_cast<std::int64_t>(result), cudaGetErrorName(result));
}

// What one run brings back, in one block: this header, then one error count per job.
struct ResultHeader {
    StampMismatch first;
    int first_taken;
    int reserved;
};

unsigned* job_errors_of(ResultHeader* header) {
    return reinterpret_cast<unsigned*>(reinterpret_cast<char*>(header) + sizeof(ResultHeader));
}

class GpuVerifier final : public PageVerifier {
public:
    GpuVerifier(const StampLayout& layout, int device, std::size_t max_jobs)
        : layout_(layout), device_(device), max_jobs_(max_jobs) {
        results_bytes_ = sizeof(ResultHeader) + max_jobs * sizeof(unsigned);
        try {
            check(cudaSetDevice(device_), "cudaSetDevice");
            check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
            check(cudaMalloc(&device_jobs_, max_jobs * sizeof(StampJob)), "cudaMalloc");
            check(cudaMalloc(&device_results_, results_bytes_), "cudaMalloc");
            check(cudaMallocHost(&host_jobs_, max_jobs * sizeof(StampJob)), "cudaMallocHost");
            check(cudaMallocHost(&host_results_, results_bytes_), "cudaMallocHost");
            // A first launch loads the module and sets the runtime up now, not during the run.
            stamp_pages<<<1, 32, 0, stream_>>>(
                device_jobs_, 0, 1, layout_.stride, job_errors_of(device_results_),
                &device_results_->first, &device_results_->first_taken);
            check(cudaGetLastError(), "kernel launch");
            check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
        } catch (...) {
            free_all();
            throw;
        }
    }
    ~GpuVerifier() override { free_all(); }

    std::size_t run(const StampJob* jobs, std::size_t count, StampMismatch& first) override {
        if (count == 0) return 0;
        if (count > max_jobs_) {
            throw Error(Errc::invalid_argument, "gpu verifier", "too many pages in one run");
        }
        check(cudaSetDevice(device_), "cudaSetDevice");
        for (std::size_t j = 0; j < count; ++j) host_jobs_[j] = jobs[j];
        check(cudaMemcpyAsync(device_jobs_, host_jobs_, count * sizeof(StampJob),
                              cudaMemcpyHostToDevice, stream_),
              "cudaMemcpyAsync");
        check(cudaMemsetAsync(device_results_, 0, results_bytes_, stream_), "cudaMemsetAsync");
        const unsigned long long total = count * layout_.stamps_per_page();
        const unsigned threads = 256;
        const unsigned blocks = static_cast<unsigned>(
            std::min<unsigned long long>((total + threads - 1) / threads, 1024));
        stamp_pages<<<blocks, threads, 0, stream_>>>(
            device_jobs_, static_cast<unsigned>(count), layout_.stamps_per_page(), layout_.stride,
            job_errors_of(device_results_), &device_results_->first, &device_results_->first_taken);
        check(cudaGetLastError(), "kernel launch");
        check(cudaMemcpyAsync(host_results_, device_results_, results_bytes_,
                              cudaMemcpyDeviceToHost, stream_),
              "cudaMemcpyAsync");
        // The pages stay pinned until this returns: no eviction runs under the kernel.
        check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
        std::size_t wrong = 0;
        const unsigned* job_errors = job_errors_of(host_results_);
        for (std::size_t j = 0; j < count; ++j) wrong += job_errors[j] ? 1 : 0;
        if (wrong > 0) first = host_results_->first;
        return wrong;
    }

    void corrupt(std::uint64_t address) override {
        check(cudaSetDevice(device_), "cudaSetDevice");
        const PageStamp garbage{~0ull, ~0ull, ~0ull, 0};
        check(cudaMemcpy(reinterpret_cast<void*>(address), &garbage, sizeof(garbage),
                         cudaMemcpyHostToDevice),
              "cudaMemcpy");
    }

private:
    void free_all() {
        if (stream_) cudaStreamSynchronize(stream_);
        if (host_results_) cudaFreeHost(host_results_);
        if (host_jobs_) cudaFreeHost(host_jobs_);
        if (device_results_) cudaFree(device_results_);
        if (device_jobs_) cudaFree(device_jobs_);
        if (stream_) cudaStreamDestroy(stream_);
        host_results_ = nullptr;
        host_jobs_ = nullptr;
        device_results_ = nullptr;
        device_jobs_ = nullptr;
        stream_ = nullptr;
    }

    StampLayout layout_;
    int device_;
    std::size_t max_jobs_;
    std::size_t results_bytes_ = 0;
    cudaStream_t stream_ = nullptr;
    StampJob* device_jobs_ = nullptr;
    ResultHeader* device_results_ = nullptr;
    StampJob* host_jobs_ = nullptr;
    ResultHeader* host_results_ = nullptr;
};

}  // namespace

std::unique_ptr<PageVerifier> make_gpu_verifier(const StampLayout& layout, int device,
                                                std::size_t max_jobs) {
    return std::make_unique<GpuVerifier>(layout, device, max_jobs);
}

}  // namespace vtpage::stress
