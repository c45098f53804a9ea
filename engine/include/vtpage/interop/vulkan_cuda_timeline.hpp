// CUDA -> Vulkan ordering on the GPU path: a Vulkan timeline semaphore exported as an fd and
// imported into CUDA (cudaImportExternalSemaphore, static runtime). The streamer's "fills
// enqueued on this stream" hook calls signal(stream); the value it returns goes with the pages
// to VulkanIndirectionTable::ready(pages, value), and the frame that first reaches them waits
// for it (the table's fill_timeline is semaphore()).
//
//   CudaVulkanTimeline fills(context, cuda_device);
//   indirection settings: .fill_timeline = fills.semaphore()
//   streamer: fill_kernel<<<..., stream>>>(...); table.ready(pages, fills.signal(stream));
//
// A timeline only moves forward, so signals must complete in the order of their values. Signals
// from one stream do; when a signal follows one made on another stream (the streamer's workers
// each have a stream), signal() first makes its stream wait for the previous value
// (cudaWaitExternalSemaphoresAsync), so that the values still complete in order. That wait
// holds back only the later work of that stream, behind the other stream's earlier fills.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>

struct CUstream_st;  // cudaStream_t without the CUDA headers

namespace vtpage {

class VulkanContext;
class VulkanTimeline;

class CudaVulkanTimeline {
public:
    // not_supported in a build without CUDA or on a device without VK_KHR_external_semaphore_fd;
    // device_unavailable when CUDA has no such device; invalid_argument when the CUDA device is
    // not the context's Vulkan device (their UUIDs differ).
    explicit CudaVulkanTimeline(VulkanContext& context, int cuda_device = 0);
    // Destroys the CUDA side, then the semaphore: the caller makes sure that no signal is still
    // pending (synchronize the stream) and no frame still waits for one.
    ~CudaVulkanTimeline();
    CudaVulkanTimeline(const CudaVulkanTimeline&) = delete;
    CudaVulkanTimeline& operator=(const CudaVulkanTimeline&) = delete;

    // Enqueues on `stream` (nullptr: the legacy default stream) a signal of the next value and
    // returns that value: Vulkan work waiting for it runs after everything enqueued on the
    // stream before this call (and after every earlier value). Thread-safe.
    std::uint64_t signal(CUstream_st* stream);
    std::uint64_t last_signaled() const noexcept;
    VkSemaphore semaphore() const noexcept;
    const VulkanTimeline& timeline() const noexcept;

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace vtpage
