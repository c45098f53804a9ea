// A witness of a compute-sanitizer limitation, with CUDA alone (no vtpage code): initcheck loses
// the writes of copies that two streams make at the same time into disjoint parts of one
// allocation, and then reports reads of those bytes as uninitialized although they are right.
// The streamer does exactly that when two decode threads place packed coarse levels (or tails) in
// one page, which is why .ci/gpu-check runs the streamer tests under initcheck with one copy
// stream (VTPAGE_TEST_ONE_COPY_STREAM) and runs this probe beside them.
//
// Each round maps a fresh 2 MiB physical page, copies two levels of 2 x 2 tiles (64 KiB each,
// rows 512 KiB apart, as a packed RGBA8 level lies in its page) row by row from pinned memory,
// then reads every row back with cudaMemcpy and compares it.
//   vtpage_initcheck_probe concurrent   the two levels from two threads and streams at once
//   vtpage_initcheck_probe serial       the same copies, one level after the other
//   vtpage_initcheck_probe separate     at once, but each level in a page of its own
// Measured on an H200 (driver 580, compute-sanitizer of CUDA 13.0), 8 rounds each: concurrent
// 61,440 initcheck errors, serial 0, separate 0; every byte right in all three.
// Exit status: 0 every byte right, 1 a byte wrong or a CUDA call failed, 2 a bad argument.
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr std::size_t page_size = std::size_t(2) << 20;
constexpr std::size_t tile_bytes = std::size_t(64) << 10;
constexpr std::size_t row_pitch = 8 * tile_bytes;  // a page is 8 tiles wide
constexpr std::size_t row_bytes = 2 * tile_bytes;  // a level is 2 tiles wide and 2 rows high
constexpr int rounds = 8;

// The driver's VMM calls, found at run time as vtpage finds them (no binary links libcuda).
struct Driver {
    decltype(&cuMemAddressReserve) reserve = nullptr;
    decltype(&cuMemCreate) create = nullptr;
    decltype(&cuMemMap) map = nullptr;
    decltype(&cuMemSetAccess) set_access = nullptr;
    decltype(&cuMemUnmap) unmap = nullptr;
    decltype(&cuMemRelease) release = nullptr;

    bool load() {
        void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!library) return false;
        reserve = reinterpret_cast<decltype(reserve)>(dlsym(library, "cuMemAddressReserve"));
        create = reinterpret_cast<decltype(create)>(dlsym(library, "cuMemCreate"));
        map = reinterpret_cast<decltype(map)>(dlsym(library, "cuMemMap"));
        set_access = reinterpret_cast<decltype(set_access)>(dlsym(library, "cuMemSetAccess"));
        unmap = reinterpret_cast<decltype(unmap)>(dlsym(library, "cuMemUnmap"));
        release = reinterpret_cast<decltype(release)>(dlsym(library, "cuMemRelease"));
        return reserve && create && map && set_access && unmap && release;
    }
};

bool ok(int result, const char* call) {
    if (result == 0) return true;
    std::fprintf(stderr, "initcheck_probe: %s failed (%d)\n", call, result);
    return false;
}

// Copies a level's two rows into `level` on `stream` and waits for them.
void place_level(CUdeviceptr level, const std::byte* staging, cudaStream_t stream) {
    for (std::size_t y = 0; y < 2; ++y) {
        cudaMemcpyAsync(reinterpret_cast<void*>(level + y * row_pitch), staging + y * row_pitch,
                        row_bytes, cudaMemcpyHostToDevice, stream);
    }
    cudaStreamSynchronize(stream);
}

// Reads the level's rows back; false when a byte is not the staging pattern.
bool level_is_right(CUdeviceptr level, std::vector<std::byte>& back) {
    for (std::size_t y = 0; y < 2; ++y) {
        if (!ok(cudaMemcpy(back.data(), reinterpret_cast<void*>(level + y * row_pitch), row_bytes,
                           cudaMemcpyDeviceToHost),
                "cudaMemcpy")) {
            return false;
        }
        for (std::byte b : back) {
            if (b != std::byte{0x5A}) return false;
        }
    }
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "concurrent";
    if (mode != "concurrent" && mode != "serial" && mode != "separate") {
        std::fprintf(stderr, "usage: vtpage_initcheck_probe [concurrent|serial|separate]\n");
        return 2;
    }
    Driver driver;
    if (!driver.load()) {
        std::fprintf(stderr, "initcheck_probe: no CUDA driver with VMM (libcuda.so.1)\n");
        return 1;
    }
    if (!ok(cudaSetDevice(0), "cudaSetDevice") || !ok(cudaFree(nullptr), "cudaFree")) return 1;
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    CUmemAccessDesc access{};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CUdeviceptr region = 0;
    if (!ok(driver.reserve(&region, 2 * page_size, 0, 0, 0), "cuMemAddressReserve")) return 1;
    void* staging = nullptr;
    if (!ok(cudaHostAlloc(&staging, page_size, cudaHostAllocPortable), "cudaHostAlloc")) return 1;
    std::memset(staging, 0x5A, page_size);
    const auto* bytes = static_cast<const std::byte*>(staging);
    cudaStream_t streams[2];
    for (cudaStream_t& stream : streams) {
        if (!ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate"))
            return 1;
    }
    std::vector<std::byte> back(row_bytes);
    int wrong = 0;
    for (int round = 0; round < rounds; ++round) {
        CUmemGenericAllocationHandle pages[2];
        for (int p = 0; p < 2; ++p) {
            const CUdeviceptr at = region + p * page_size;
            if (!ok(driver.create(&pages[p], page_size, &prop, 0), "cuMemCreate") ||
                !ok(driver.map(at, page_size, 0, pages[p], 0), "cuMemMap") ||
                !ok(driver.set_access(at, page_size, &access, 1), "cuMemSetAccess")) {
                return 1;
            }
        }
        // Level 1 beside level 0 in the first page, or alone in the second.
        const CUdeviceptr levels[2] = {
            region, mode == "separate" ? region + page_size : region + row_bytes};
        if (mode == "serial") {
            place_level(levels[0], bytes, streams[0]);
            place_level(levels[1], bytes, streams[1]);
        } else {
            std::thread first(place_level, levels[0], bytes, streams[0]);
            std::thread second(place_level, levels[1], bytes, streams[1]);
            first.join();
            second.join();
        }
        for (CUdeviceptr level : levels) wrong += level_is_right(level, back) ? 0 : 1;
        for (int p = 0; p < 2; ++p) {
            if (!ok(driver.unmap(region + p * page_size, page_size), "cuMemUnmap") ||
                !ok(driver.release(pages[p]), "cuMemRelease")) {
                return 1;
            }
        }
    }
    std::printf("initcheck_probe %s: %d rounds, %d of %d levels wrong\n", mode.c_str(), rounds,
                wrong, 2 * rounds);
    return wrong == 0 ? 0 : 1;
}
