// DeviceCopier of a CUDA build: one cudaMalloc'd arena on device 0, pinned staging memory,
// cudaMemcpyAsync on a few non-blocking streams, one event per fence. Without a device (or with
// --backend host) it falls back to ordinary memory and memcpy, saying why.
#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "device_copy.hpp"
#include "vtpage/base/error.hpp"

namespace vtpage::bench::disk {

namespace {

void check(cudaError_t error, const char* operation) {
    if (error == cudaSuccess) return;
    throw Error(error == cudaErrorMemoryAllocation ? Errc::out_of_memory : Errc::backend_failure,
                operation, cudaGetErrorString(error), {}, error, cudaGetErrorName(error));
}

// Empty when device 0 can be used; else why not.
std::string no_device_reason() {
    int count = 0;
    const cudaError_t error = cudaGetDeviceCount(&count);
    if (error != cudaSuccess) {
        cudaGetLastError();
        return std::string("no CUDA device: ") + cudaGetErrorName(error);
    }
    return count > 0 ? std::string() : std::string("no CUDA device");
}

}  // namespace

struct DeviceCopier::State {
    DeviceCopySettings settings;
    std::string description;
    std::string host_reason;
    bool device = false;
    std::byte* arena = nullptr;         // on the device
    std::vector<std::byte> host_arena;  // without one
    std::vector<cudaStream_t> streams;
    std::vector<cudaEvent_t> fences;

    void open_device() {
        check(cudaSetDevice(0), "cudaSetDevice");
        cudaDeviceProp properties{};
        check(cudaGetDeviceProperties(&properties, 0), "cudaGetDeviceProperties");
        description = std::string("CUDA device 0 (") + properties.name + ")";
        check(cudaMalloc(&arena, settings.arena_pages * settings.page_bytes), "cudaMalloc");
        for (std::size_t i = 0; i < settings.streams; ++i) {
            check(cudaStreamCreateWithFlags(&streams.emplace_back(), cudaStreamNonBlocking),
                  "cudaStreamCreateWithFlags");
        }
        for (std::size_t i = 0; i < settings.fences; ++i) {
            check(cudaEventCreateWithFlags(&fences.emplace_back(), cudaEventDisableTiming),
                  "cudaEventCreateWithFlags");
        }
    }
};

DeviceCopier::DeviceCopier(DeviceCopySettings settings) : state_(std::make_unique<State>()) {
    if (settings.backend != "auto" && settings.backend != "host" && settings.backend != "cuda") {
        throw Error(Errc::invalid_argument, "DeviceCopier", "unknown backend " + settings.backend);
    }
    state_->settings = settings;
    state_->host_reason = settings.backend == "host" ? "--backend host" : no_device_reason();
    if (settings.backend == "cuda" && !state_->host_reason.empty()) {
        throw Error(Errc::device_unavailable, "DeviceCopier", state_->host_reason);
    }
    state_->device = state_->host_reason.empty();
    if (state_->device) {
        state_->open_device();
    } else {
        state_->description = "host memory (memcpy; " + state_->host_reason + ")";
        state_->host_arena.resize(settings.arena_pages * settings.page_bytes);
    }
}

DeviceCopier::~DeviceCopier() {
    if (!state_->device) return;
    cudaDeviceSynchronize();
    for (cudaEvent_t event : state_->fences) cudaEventDestroy(event);
    for (cudaStream_t stream : state_->streams) cudaStreamDestroy(stream);
    if (state_->arena) cudaFree(state_->arena);
}

bool DeviceCopier::on_device() const noexcept { return state_->device; }
const std::string& DeviceCopier::description() const noexcept { return state_->description; }
const std::string& DeviceCopier::host_reason() const noexcept { return state_->host_reason; }
std::size_t DeviceCopier::streams() const noexcept { return state_->settings.streams; }

HostBuffer DeviceCopier::allocate_staging(std::size_t bytes) const {
    const std::size_t rounded = (bytes + 4095) / 4096 * 4096;
    if (state_->device) {
        void* memory = nullptr;
        check(cudaHostAlloc(&memory, rounded, cudaHostAllocPortable), "cudaHostAlloc");
        return HostBuffer(static_cast<std::byte*>(memory), [](std::byte* p) { cudaFreeHost(p); });
    }
    auto* memory = static_cast<std::byte*>(std::aligned_alloc(4096, rounded));
    if (!memory) throw Error(Errc::out_of_memory, "allocate_staging", "aligned_alloc failed");
    return HostBuffer(memory, [](std::byte* p) { std::free(p); });
}

void DeviceCopier::copy(std::size_t stream, std::size_t arena_page, const std::byte* source,
                        std::size_t fence) {
    const std::size_t page_bytes = state_->settings.page_bytes;
    const std::size_t offset = (arena_page % state_->settings.arena_pages) * page_bytes;
    if (!state_->device) {
        std::memcpy(state_->host_arena.data() + offset, source, page_bytes);
        return;
    }
    cudaStream_t s = state_->streams[stream % state_->streams.size()];
    check(cudaSetDevice(0), "cudaSetDevice");  // the calling thread's device
    check(cudaMemcpyAsync(state_->arena + offset, source, page_bytes, cudaMemcpyHostToDevice, s),
          "cudaMemcpyAsync");
    check(cudaEventRecord(state_->fences[fence % state_->fences.size()], s), "cudaEventRecord");
}

void DeviceCopier::wait(std::size_t fence) {
    if (!state_->device) return;
    check(cudaEventSynchronize(state_->fences[fence % state_->fences.size()]),
          "cudaEventSynchronize");
}

void DeviceCopier::synchronize() {
    if (!state_->device) return;
    for (cudaStream_t stream : state_->streams) {
        check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    }
}

}  // namespace vtpage::bench::disk
