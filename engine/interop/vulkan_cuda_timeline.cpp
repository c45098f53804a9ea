#include "vtpage/interop/vulkan_cuda_timeline.hpp"

#include <atomic>
#include <cstring>
#include <mutex>

#include "vtpage/base/error.hpp"
#include "vtpage/interop/vulkan_context.hpp"
#include "vtpage/interop/vulkan_timeline.hpp"

#if VTPAGE_INTEROP_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace vtpage {

#if VTPAGE_INTEROP_WITH_CUDA

namespace {

Errc errc_for(cudaError_t error) {
    switch (error) {
        case cudaErrorNoDevice:
        case cudaErrorInsufficientDriver:
        case cudaErrorInvalidDevice:
        case cudaErrorDevicesUnavailable:
            return Errc::device_unavailable;
        case cudaErrorMemoryAllocation:
            return Errc::out_of_memory;
        case cudaErrorInvalidValue:
            return Errc::invalid_argument;
        case cudaErrorInvalidResourceHandle:
            return Errc::invalid_handle;
        case cudaErrorNotSupported:
            return Errc::not_supported;
        default:
            return Errc::backend_failure;
    }
}

void check(cudaError_t error, const char* operation, const char* call, std::string arguments = {}) {
    if (error == cudaSuccess) return;
    cudaGetLastError();  // clear the sticky copy of a non-fatal error
    throw Error(errc_for(error), operation,
                detail::concat(call, " failed: ", cudaGetErrorString(error)), std::move(arguments),
                error, cudaGetErrorName(error));
}

}  // namespace

struct CudaVulkanTimeline::State {
    VulkanTimeline timeline;
    int device = 0;
    cudaExternalSemaphore_t semaphore = nullptr;
    std::mutex mutex;
    std::atomic<std::uint64_t> last{0};
    CUstream_st* last_stream = nullptr;  // where `last` was signalled

    State(VulkanContext& context, int cuda_device)
        : timeline(context, 0, true, "vtpage CUDA fill timeline"), device(cuda_device) {}
    ~State() {
        if (semaphore) {
            cudaSetDevice(device);
            cudaDestroyExternalSemaphore(semaphore);
        }
    }
};

CudaVulkanTimeline::CudaVulkanTimeline(VulkanContext& context, int cuda_device) {
    const std::string arguments = detail::concat("cuda_device=", cuda_device);
    if (!context.supports_semaphore_fd()) {
        throw Error(Errc::not_supported, "CudaVulkanTimeline",
                    context.device_name() +
                        " cannot export semaphores as fds "
                        "(VK_KHR_external_semaphore_fd)",
                    arguments);
    }
    check(cudaSetDevice(cuda_device), "CudaVulkanTimeline", "cudaSetDevice", arguments);
    cudaDeviceProp properties{};
    check(cudaGetDeviceProperties(&properties, cuda_device), "CudaVulkanTimeline",
          "cudaGetDeviceProperties", arguments);
    const DeviceUuid vulkan_uuid = context.device_uuid();
    static_assert(sizeof(properties.uuid.bytes) == sizeof(vulkan_uuid));
    if (std::memcmp(properties.uuid.bytes, vulkan_uuid.data(), vulkan_uuid.size()) != 0) {
        throw Error(
            Errc::invalid_argument, "CudaVulkanTimeline",
            "the CUDA device is not the context's Vulkan device (" + context.device_name() + ")",
            arguments);
    }
    state_ = std::make_unique<State>(context, cuda_device);
    UniqueFd fd = state_->timeline.export_fd();
    cudaExternalSemaphoreHandleDesc description{};
    description.type = cudaExternalSemaphoreHandleTypeTimelineSemaphoreFd;
    description.handle.fd = fd.get();
    check(cudaImportExternalSemaphore(&state_->semaphore, &description), "CudaVulkanTimeline",
          "cudaImportExternalSemaphore", arguments);
    fd.release();  // a successful import owns the fd; a failed one left it to us (closed then)
}

CudaVulkanTimeline::~CudaVulkanTimeline() = default;

std::uint64_t CudaVulkanTimeline::signal(CUstream_st* stream) {
    State& s = *state_;
    std::lock_guard lock(s.mutex);  // values reach the stream in the order they are handed out
    const std::uint64_t value = s.last.load() + 1;
    check(cudaSetDevice(s.device), "CudaVulkanTimeline::signal", "cudaSetDevice");
    if (value > 1 && stream != s.last_stream) {
        // Keep the values in order across streams: this one completes after the previous one.
        cudaExternalSemaphoreWaitParams wait{};
        wait.params.fence.value = value - 1;
        check(cudaWaitExternalSemaphoresAsync(&s.semaphore, &wait, 1,
                                              reinterpret_cast<cudaStream_t>(stream)),
              "CudaVulkanTimeline::signal", "cudaWaitExternalSemaphoresAsync",
              detail::concat("value=", value - 1));
    }
    cudaExternalSemaphoreSignalParams parameters{};
    parameters.params.fence.value = value;
    check(cudaSignalExternalSemaphoresAsync(&s.semaphore, &parameters, 1,
                                            reinterpret_cast<cudaStream_t>(stream)),
          "CudaVulkanTimeline::signal", "cudaSignalExternalSemaphoresAsync",
          detail::concat("value=", value));
    s.last.store(value);
    s.last_stream = stream;
    return value;
}

std::uint64_t CudaVulkanTimeline::last_signaled() const noexcept { return state_->last.load(); }
VkSemaphore CudaVulkanTimeline::semaphore() const noexcept { return state_->timeline.get(); }
const VulkanTimeline& CudaVulkanTimeline::timeline() const noexcept { return state_->timeline; }

#else  // a build without CUDA

struct CudaVulkanTimeline::State {
    VulkanTimeline timeline;
};

CudaVulkanTimeline::CudaVulkanTimeline(VulkanContext&, int cuda_device) {
    throw Error(Errc::not_supported, "CudaVulkanTimeline", "this build of vtpage has no CUDA",
                detail::concat("cuda_device=", cuda_device));
}
CudaVulkanTimeline::~CudaVulkanTimeline() = default;
// Unreachable: no object can be made.
std::uint64_t CudaVulkanTimeline::signal(CUstream_st*) { return 0; }
std::uint64_t CudaVulkanTimeline::last_signaled() const noexcept { return 0; }
VkSemaphore CudaVulkanTimeline::semaphore() const noexcept { return VK_NULL_HANDLE; }
const VulkanTimeline& CudaVulkanTimeline::timeline() const noexcept { return state_->timeline; }

#endif

}  // namespace vtpage
