// The CUDA driver API, resolved at run time. No binary of vtpage links libcuda: the driver is
// opened with dlopen("libcuda.so.1") when a CUDA backend is made, and every entry point is
// resolved through cuGetProcAddress for the CUDA version these headers describe. On a machine
// without the driver, load() throws device_unavailable and everything else keeps working.
#pragma once

#include <cuda.h>

#include <string>

#include "vtpage/base/error.hpp"

namespace vtpage::backend_detail {

#define VTPAGE_CUDA_DRIVER_FUNCTIONS(X)       \
    X(cuInit)                                 \
    X(cuDriverGetVersion)                     \
    X(cuGetErrorName)                         \
    X(cuGetErrorString)                       \
    X(cuDeviceGetCount)                       \
    X(cuDeviceGet)                            \
    X(cuDeviceGetName)                        \
    X(cuDeviceGetUuid)                        \
    X(cuDeviceGetAttribute)                   \
    X(cuDeviceTotalMem)                       \
    X(cuDeviceCanAccessPeer)                  \
    X(cuDevicePrimaryCtxRetain)               \
    X(cuDevicePrimaryCtxRelease)              \
    X(cuCtxGetCurrent)                        \
    X(cuCtxSetCurrent)                        \
    X(cuCtxSynchronize)                       \
    X(cuMemGetInfo)                           \
    X(cuMemAddressReserve)                    \
    X(cuMemAddressFree)                       \
    X(cuMemCreate)                            \
    X(cuMemRelease)                           \
    X(cuMemMap)                               \
    X(cuMemUnmap)                             \
    X(cuMemSetAccess)                         \
    X(cuMemExportToShareableHandle)           \
    X(cuMemImportFromShareableHandle)         \
    X(cuMemGetAllocationGranularity)          \
    X(cuMemGetAllocationPropertiesFromHandle) \
    X(cuMemcpyHtoD)                           \
    X(cuMemcpyDtoH)                           \
    X(cuStreamSynchronize)

struct CudaDriver {
    // Opens the driver and resolves every entry point; device_unavailable when it cannot.
    static CudaDriver load();

// NOLINTNEXTLINE(bugprone-macro-parentheses): the argument names the member it declares
#define VTPAGE_DECLARE_POINTER(name) decltype(&::name) name = nullptr;
    VTPAGE_CUDA_DRIVER_FUNCTIONS(VTPAGE_DECLARE_POINTER)
#undef VTPAGE_DECLARE_POINTER

    // "CUDA_ERROR_OUT_OF_MEMORY" for a result code.
    std::string error_name(CUresult result) const;
    std::string error_text(CUresult result) const;
    // Throws an Error for a failed call, with the result's name and the portable code for it.
    [[noreturn]] void fail(CUresult result, const char* operation, std::string arguments,
                           std::string detail = {}) const;
    void check(CUresult result, const char* operation, const std::string& arguments,
               std::string detail = {}) const {
        if (result != CUDA_SUCCESS) fail(result, operation, arguments, std::move(detail));
    }
};

Errc errc_for(CUresult result) noexcept;

}  // namespace vtpage::backend_detail
