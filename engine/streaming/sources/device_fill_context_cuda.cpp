#include <cuda_runtime.h>

#include <algorithm>
#include <deque>
#include <utility>
#include <vector>

#include "vtpage/streaming/sources/device_fill_context.hpp"

#include "base/test_points.hpp"

namespace vtpage::vt {

namespace {

void check(cudaError_t error, const char* operation, const char* what, int device) {
    if (error == cudaSuccess) return;
    throw Error(
        error == cudaErrorNoDevice || error == cudaErrorInsufficientDriver ||
                error == cudaErrorInvalidDevice
            ? Errc::device_unavailable
            : (error == cudaErrorMemoryAllocation ? Errc::out_of_memory : Errc::backend_failure),
        operation, what, detail::concat("device=", device), error, cudaGetErrorName(error));
}

constexpr std::size_t staging_alignment = 256;
constexpr std::size_t min_arena_bytes = 8u << 20;

}  // namespace

bool device_fills_built() noexcept { return true; }

struct DeviceFillContext::State {
    struct Arena {
        std::byte* memory = nullptr;
        std::size_t capacity = 0;
        std::size_t used = 0;
        std::uint64_t last_ticket = 0;    // the batch that used it last
        std::vector<std::byte*> retired;  // outgrown buffers of the batch in progress
    };
    int device = 0;
    cudaStream_t stream = nullptr;
    Arena arenas[2];
    int current = 0;
    std::deque<std::pair<std::uint64_t, cudaEvent_t>> events;  // batches not known finished
    std::vector<cudaEvent_t> spare_events;
    std::uint64_t next_ticket = 1;
    std::uint64_t finished_ticket = 0;
    void* scratch = nullptr;  // scratch(): device memory
    std::size_t scratch_bytes = 0;

    // Pinned memory of `capacity` bytes for an arena (cudaHostAlloc: milliseconds a call).
    std::byte* pin(std::size_t capacity, const char* operation) const {
        void* memory = nullptr;
        check(cudaHostAlloc(&memory, capacity, cudaHostAllocPortable), operation,
              "cudaHostAlloc of pinned staging memory failed", device);
        return static_cast<std::byte*>(memory);
    }

    void free_arena(Arena& arena) {
        for (std::byte* old : arena.retired) cudaFreeHost(old);
        arena.retired.clear();
        if (arena.memory) cudaFreeHost(arena.memory);
        arena = Arena{};
    }
};

DeviceFillContext::DeviceFillContext(int device) : state_(std::make_unique<State>()) {
    state_->device = device;
    check(cudaSetDevice(device), "DeviceFillContext", "cudaSetDevice failed", device);
    check(cudaStreamCreateWithFlags(&state_->stream, cudaStreamNonBlocking), "DeviceFillContext",
          "cudaStreamCreateWithFlags failed", device);
}

DeviceFillContext::~DeviceFillContext() {
    cudaSetDevice(state_->device);
    cudaStreamSynchronize(state_->stream);
    for (auto& [ticket, event] : state_->events) cudaEventDestroy(event);
    for (cudaEvent_t event : state_->spare_events) cudaEventDestroy(event);
    for (auto& arena : state_->arenas) state_->free_arena(arena);
    if (state_->scratch) cudaFree(state_->scratch);
    cudaStreamDestroy(state_->stream);
}

int DeviceFillContext::device() const noexcept { return state_->device; }
CudaStream DeviceFillContext::stream() const noexcept { return state_->stream; }

void DeviceFillContext::make_current() const {
    check(cudaSetDevice(state_->device), "DeviceFillContext::make_current", "cudaSetDevice failed",
          state_->device);
}

void DeviceFillContext::reserve_staging(std::size_t bytes) {
    make_current();
    const std::size_t capacity = std::max(bytes, min_arena_bytes);
    for (State::Arena& arena : state_->arenas) {
        if (arena.capacity >= capacity) continue;
        std::byte* memory = state_->pin(capacity, "DeviceFillContext::reserve_staging");
        if (arena.memory) cudaFreeHost(arena.memory);  // nothing is staged in it yet
        arena.memory = memory;
        arena.capacity = capacity;
        arena.used = 0;
    }
}

void DeviceFillContext::begin_batch() {
    make_current();
    state_->current ^= 1;
    State::Arena& arena = state_->arenas[state_->current];
    if (arena.last_ticket != 0) wait(arena.last_ticket);
    for (std::byte* old : arena.retired) cudaFreeHost(old);
    arena.retired.clear();
    arena.used = 0;
}

std::byte* DeviceFillContext::staging(std::size_t bytes) {
    State::Arena& arena = state_->arenas[state_->current];
    const std::size_t rounded =
        (bytes + staging_alignment - 1) / staging_alignment * staging_alignment;
    if (arena.used + rounded > arena.capacity) {
        // Grow: what this batch already staged stays valid in the retired buffer.
        const std::size_t capacity = std::max({rounded, 2 * arena.capacity, min_arena_bytes});
        std::byte* memory = state_->pin(capacity, "DeviceFillContext::staging");
        if (arena.memory) arena.retired.push_back(arena.memory);
        arena.memory = memory;
        arena.capacity = capacity;
        arena.used = 0;
    }
    std::byte* result = arena.memory + arena.used;
    arena.used += rounded;
    return result;
}

void DeviceFillContext::copy_to_device(DeviceAddress destination, const std::byte* staging,
                                       std::size_t bytes) {
    check(cudaMemcpyAsync(reinterpret_cast<void*>(destination), staging, bytes,
                          cudaMemcpyHostToDevice, state_->stream),
          "DeviceFillContext::copy_to_device", "cudaMemcpyAsync failed", state_->device);
}

DeviceAddress DeviceFillContext::scratch(std::size_t bytes) {
    if (bytes > state_->scratch_bytes) {
        make_current();
        // Nothing may still read the old memory: the caller waited for its work.
        if (state_->scratch) cudaFree(state_->scratch);
        state_->scratch = nullptr;
        state_->scratch_bytes = 0;
        check(cudaMalloc(&state_->scratch, bytes), "DeviceFillContext::scratch",
              "cudaMalloc of scratch memory failed", state_->device);
        state_->scratch_bytes = bytes;
    }
    return reinterpret_cast<DeviceAddress>(state_->scratch);
}

void DeviceFillContext::copy_on_device(DeviceAddress destination, DeviceAddress source,
                                       std::size_t bytes) {
    check(
        cudaMemcpyAsync(reinterpret_cast<void*>(destination), reinterpret_cast<const void*>(source),
                        bytes, cudaMemcpyDeviceToDevice, state_->stream),
        "DeviceFillContext::copy_on_device", "cudaMemcpyAsync failed", state_->device);
}

std::uint64_t DeviceFillContext::end_batch() {
    // Tests make the end of a batch fail here, its work already enqueued.
    VTPAGE_TEST_POINT("device_fill.end_batch");
    cudaEvent_t event = nullptr;
    if (!state_->spare_events.empty()) {
        event = state_->spare_events.back();
        state_->spare_events.pop_back();
    } else {
        check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
              "DeviceFillContext::end_batch", "cudaEventCreate failed", state_->device);
    }
    const cudaError_t recorded = cudaEventRecord(event, state_->stream);
    if (recorded != cudaSuccess) {
        state_->spare_events.push_back(event);
        check(recorded, "DeviceFillContext::end_batch", "cudaEventRecord failed", state_->device);
    }
    const std::uint64_t ticket = state_->next_ticket++;
    state_->events.emplace_back(ticket, event);
    state_->arenas[state_->current].last_ticket = ticket;
    return ticket;
}

bool DeviceFillContext::finished(std::uint64_t ticket) {
    while (!state_->events.empty() && state_->finished_ticket < ticket) {
        auto [front_ticket, event] = state_->events.front();
        const cudaError_t status = cudaEventQuery(event);
        if (status == cudaErrorNotReady) return false;
        state_->events.pop_front();
        state_->spare_events.push_back(event);
        state_->finished_ticket = front_ticket;
        check(status, "DeviceFillContext::finished", "the batch's work failed", state_->device);
    }
    return state_->finished_ticket >= ticket || state_->events.empty();
}

void DeviceFillContext::wait(std::uint64_t ticket) {
    while (!state_->events.empty() && state_->finished_ticket < ticket) {
        auto [front_ticket, event] = state_->events.front();
        const cudaError_t status = cudaEventSynchronize(event);
        state_->events.pop_front();
        state_->spare_events.push_back(event);
        state_->finished_ticket = front_ticket;
        check(status, "DeviceFillContext::wait", "the batch's work failed", state_->device);
    }
}

void DeviceFillContext::synchronize() {
    const cudaError_t status = cudaStreamSynchronize(state_->stream);
    while (!state_->events.empty()) {
        state_->spare_events.push_back(state_->events.front().second);
        state_->finished_ticket = state_->events.front().first;
        state_->events.pop_front();
    }
    check(status, "DeviceFillContext::synchronize", "the stream's work failed", state_->device);
}

bool DeviceFillContext::idle() const { return cudaStreamQuery(state_->stream) == cudaSuccess; }

}  // namespace vtpage::vt
