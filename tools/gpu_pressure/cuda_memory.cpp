#include "cuda_memory.hpp"

#include <cuda.h>
#include <dlfcn.h>

#include <vector>

#include "vtpage/base/error.hpp"

namespace vtpage::gpu_pressure {

namespace {

using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t,
                                    CUdriverProcAddressQueryResult*);

#define VTPAGE_PRESSURE_FUNCTIONS(X) \
    X(cuInit)                        \
    X(cuGetErrorName)                \
    X(cuDeviceGetCount)              \
    X(cuDeviceGet)                   \
    X(cuDeviceGetName)               \
    X(cuDevicePrimaryCtxRetain)      \
    X(cuDevicePrimaryCtxRelease)     \
    X(cuCtxSetCurrent)               \
    X(cuMemAlloc)                    \
    X(cuMemFree)                     \
    X(cuMemGetInfo)

struct Driver {
// NOLINTNEXTLINE(bugprone-macro-parentheses): the argument names the member it declares
#define VTPAGE_DECLARE_POINTER(name) decltype(&::name) name = nullptr;
    VTPAGE_PRESSURE_FUNCTIONS(VTPAGE_DECLARE_POINTER)
#undef VTPAGE_DECLARE_POINTER

    std::string error_name(CUresult result) const {
        const char* name = nullptr;
        if (cuGetErrorName && cuGetErrorName(result, &name) == CUDA_SUCCESS && name) return name;
        return "CUresult " + std::to_string(static_cast<int>(result));
    }
    void check(CUresult result, const char* operation, Errc code = Errc::backend_failure) const {
        if (result == CUDA_SUCCESS) return;
        throw Error(code, operation, std::string(operation) + " failed: " + error_name(result), {},
                    static_cast<std::int64_t>(result), error_name(result));
    }
};

// The driver stays loaded for the life of the process, as the library's own loader keeps it.
Driver load_driver() {
    void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!library) {
        // NOLINTNEXTLINE(concurrency-mt-unsafe): glibc keeps dlerror's message per thread
        const char* reason = dlerror();
        throw Error(
            Errc::device_unavailable, "dlopen",
            std::string("no CUDA driver (libcuda.so.1): ") + (reason ? reason : "dlopen failed"));
    }
    auto get_proc_address = reinterpret_cast<GetProcAddress>(dlsym(library, "cuGetProcAddress_v2"));
    if (!get_proc_address) {
        throw Error(Errc::device_unavailable, "dlsym",
                    "the CUDA driver is too old: it lacks cuGetProcAddress_v2");
    }
    Driver driver;
    auto resolve = [&](const char* name, void** pointer) {
        CUdriverProcAddressQueryResult status{};
        const CUresult result =
            get_proc_address(name, pointer, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status);
        if (result != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS || !*pointer) {
            throw Error(Errc::device_unavailable, "cuGetProcAddress",
                        std::string("the CUDA driver lacks ") + name);  // older than the headers
        }
    };
#define VTPAGE_RESOLVE(name) resolve(#name, reinterpret_cast<void**>(&driver.name));
    VTPAGE_PRESSURE_FUNCTIONS(VTPAGE_RESOLVE)
#undef VTPAGE_RESOLVE
    return driver;
}

}  // namespace

struct CudaMemory::State {
    Driver driver;
    CUdevice device = 0;
    CUcontext context = nullptr;
    std::vector<CUdeviceptr> allocations;
    std::uint64_t allocated = 0;
};

CudaMemory::CudaMemory(int device) : state_(std::make_unique<State>()) {
    State& s = *state_;
    s.driver = load_driver();
    // No device, or a driver that cannot start (no GPU, a kernel module missing) all mean the
    // same here: there is no GPU memory to take.
    s.driver.check(s.driver.cuInit(0), "cuInit", Errc::device_unavailable);
    int count = 0;
    s.driver.check(s.driver.cuDeviceGetCount(&count), "cuDeviceGetCount", Errc::device_unavailable);
    if (device < 0 || device >= count) {
        throw Error(Errc::device_unavailable, "cuDeviceGet",
                    detail::concat("no CUDA device ", device, " (the machine has ", count, ")"));
    }
    s.driver.check(s.driver.cuDeviceGet(&s.device, device), "cuDeviceGet",
                   Errc::device_unavailable);
    s.driver.check(s.driver.cuDevicePrimaryCtxRetain(&s.context, s.device),
                   "cuDevicePrimaryCtxRetain", Errc::device_unavailable);
    const CUresult current = s.driver.cuCtxSetCurrent(s.context);
    if (current != CUDA_SUCCESS) {
        s.driver.cuDevicePrimaryCtxRelease(s.device);
        s.driver.check(current, "cuCtxSetCurrent", Errc::device_unavailable);
    }
}

CudaMemory::~CudaMemory() {
    free_all();
    state_->driver.cuCtxSetCurrent(nullptr);
    state_->driver.cuDevicePrimaryCtxRelease(state_->device);
}

std::string CudaMemory::device_name() const {
    char name[256] = {};
    state_->driver.check(state_->driver.cuDeviceGetName(name, sizeof(name), state_->device),
                         "cuDeviceGetName");
    return name;
}

bool CudaMemory::allocate(std::uint64_t bytes) {
    State& s = *state_;
    CUdeviceptr pointer = 0;
    const CUresult result = s.driver.cuMemAlloc(&pointer, bytes);
    if (result == CUDA_ERROR_OUT_OF_MEMORY) return false;
    s.driver.check(result, "cuMemAlloc");
    s.allocations.push_back(pointer);
    s.allocated += bytes;
    return true;
}

void CudaMemory::free_all() noexcept {
    State& s = *state_;
    for (CUdeviceptr pointer : s.allocations) s.driver.cuMemFree(pointer);
    s.allocations.clear();
    s.allocated = 0;
}

std::uint64_t CudaMemory::allocated_bytes() const noexcept { return state_->allocated; }

std::uint64_t CudaMemory::free_bytes() const {
    std::size_t free = 0, total = 0;
    state_->driver.check(state_->driver.cuMemGetInfo(&free, &total), "cuMemGetInfo");
    return free;
}

}  // namespace vtpage::gpu_pressure
