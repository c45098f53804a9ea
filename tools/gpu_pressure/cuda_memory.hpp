// Device memory taken through the CUDA driver, the way another process on the GPU would: plain
// cuMemAlloc in the device's primary context. The driver is opened at run time (no binary of
// vtpage links libcuda), so that the program starts on a machine without one and says why.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace vtpage::gpu_pressure {

class CudaMemory {
public:
    // Opens the driver and makes the device's primary context current. Error device_unavailable
    // where there is no driver, no device of that ordinal or the driver cannot start.
    explicit CudaMemory(int device);
    // Frees every allocation and releases the context.
    ~CudaMemory();
    CudaMemory(const CudaMemory&) = delete;
    CudaMemory& operator=(const CudaMemory&) = delete;

    std::string device_name() const;
    // Allocates `bytes` more; false when the device has no memory left for them (Error for any
    // other failure).
    bool allocate(std::uint64_t bytes);
    void free_all() noexcept;
    std::uint64_t allocated_bytes() const noexcept;
    // What cuMemGetInfo says is free on the device now.
    std::uint64_t free_bytes() const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace vtpage::gpu_pressure
