#include "backend/cuda_driver.hpp"

#include <dlfcn.h>

#include <string_view>

namespace vtpage::backend_detail {

namespace {
using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t,
                                    CUdriverProcAddressQueryResult*);

// The CUDA version whose signature of `name` cuda.h declares. Usually the headers' own version,
// but CUDA 13 gave cuCtxSynchronize a context argument (cuCtxSynchronize_v2, what a request for
// 13.0 returns) while cuda.h still declares the argument-less one: calling the one through the
// other's type passes a garbage context.
int declared_version(std::string_view name) {
    if (name == "cuCtxSynchronize") return 2000;
    return CUDA_VERSION;
}
}  // namespace

CudaDriver CudaDriver::load() {
    // The driver stays loaded for the life of the process: unloading it under a live context
    // is not safe, and the CUDA runtime holds it open anyway.
    void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!library) {
        // NOLINTNEXTLINE(concurrency-mt-unsafe): glibc keeps dlerror's message per thread
        const char* reason = dlerror();
        throw Error(Errc::device_unavailable, "CudaDriver::load",
                    std::string("the CUDA driver (libcuda.so.1) is not installed: ") +
                        (reason ? reason : "dlopen failed"));
    }
    auto get_proc_address = reinterpret_cast<GetProcAddress>(dlsym(library, "cuGetProcAddress_v2"));
    if (!get_proc_address) {
        throw Error(Errc::device_unavailable, "CudaDriver::load",
                    "the CUDA driver is too old: it lacks cuGetProcAddress_v2 (CUDA 12 or newer "
                    "is needed)");
    }
    CudaDriver driver;
    auto resolve = [&](const char* name, void** pointer) {
        CUdriverProcAddressQueryResult status{};
        CUresult result = get_proc_address(name, pointer, declared_version(name),
                                           CU_GET_PROC_ADDRESS_DEFAULT, &status);
        if (result != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS || !*pointer) {
            throw Error(Errc::device_unavailable, "CudaDriver::load",
                        std::string("the CUDA driver lacks ") + name, {}, result,
                        "cuGetProcAddress");
        }
    };
#define VTPAGE_RESOLVE(name) resolve(#name, reinterpret_cast<void**>(&driver.name));
    VTPAGE_CUDA_DRIVER_FUNCTIONS(VTPAGE_RESOLVE)
#undef VTPAGE_RESOLVE
    return driver;
}

std::string CudaDriver::error_name(CUresult result) const {
    const char* name = nullptr;
    if (cuGetErrorName && cuGetErrorName(result, &name) == CUDA_SUCCESS && name) return name;
    return "CUresult " + std::to_string(static_cast<int>(result));
}

std::string CudaDriver::error_text(CUresult result) const {
    const char* text = nullptr;
    if (cuGetErrorString && cuGetErrorString(result, &text) == CUDA_SUCCESS && text) return text;
    return {};
}

void CudaDriver::fail(CUresult result, const char* operation, std::string arguments,
                      std::string detail) const {
    std::string text = error_text(result);
    if (!detail.empty() && !text.empty()) detail += ": ";
    detail += text;
    throw Error(errc_for(result), operation, std::move(detail), std::move(arguments),
                static_cast<std::int64_t>(result), error_name(result));
}

Errc errc_for(CUresult result) noexcept {
    switch (result) {
        case CUDA_ERROR_OUT_OF_MEMORY:
            return Errc::out_of_memory;
        case CUDA_ERROR_INVALID_VALUE:
            return Errc::invalid_argument;
        case CUDA_ERROR_NOT_SUPPORTED:
            return Errc::not_supported;
        case CUDA_ERROR_INVALID_HANDLE:
            return Errc::invalid_handle;
        case CUDA_ERROR_ALREADY_MAPPED:
            return Errc::already_mapped;
        case CUDA_ERROR_NOT_MAPPED:
            return Errc::not_mapped;
        case CUDA_ERROR_NO_DEVICE:
        case CUDA_ERROR_NOT_INITIALIZED:
        case CUDA_ERROR_INVALID_DEVICE:
        case CUDA_ERROR_DEVICE_UNAVAILABLE:
        case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
        case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
            return Errc::device_unavailable;
        default:
            return Errc::backend_failure;
    }
}

}  // namespace vtpage::backend_detail
