// What only the CUDA backend does: kernels read and write its mappings, and the access flags
// hold against them. A kernel that faults ends its CUDA context for good, so those cases run in
// a child process and the test checks what the child saw. They run only when
// VTPAGE_TEST_KERNEL_FAULTS=1: on an H100 with driver 580, after such a fault no Vulkan frame
// finishes on that GPU any more, in any process (docs/gpu.md), which would hang the Vulkan tests
// running beside them. .ci/gpu-check runs them last.
#include <gtest/gtest.h>

#include <cstdlib>
#include <numeric>
#include <string>

#include "../support/backend_fixture.hpp"
#include "../support/child_process.hpp"
#include "vtpage/config.hpp"
#if VTPAGE_HAS_CUDA
#include "../support/gpu_kernels.hpp"
#endif

namespace vtpage {
namespace {

#if VTPAGE_HAS_CUDA

// A page with a known pattern, left with the given access; prints what kernels saw.
int kernel_access_child(const std::vector<std::string>& arguments) {
    const std::string access_name = arguments.at(0);
    const std::string kernel = arguments.at(1);
    std::string reason;
    auto backend = test::try_make_backend("cuda", reason);
    if (!backend) return 2;
    const std::size_t page = backend->granularity().minimum;
    DeviceAddress address = backend->reserve(page);
    PhysicalHandle handle = backend->create(page);
    backend->map(address, page, handle);
    backend->set_access(address, page, Access::read_write);
    std::vector<std::uint32_t> words(page / 4);
    std::iota(words.begin(), words.end(), 1u);
    backend->write(address, words.data(), page);
    Access access = access_name == "read" ? Access::read : Access::none;
    backend->set_access(address, page, access);
    std::string result;
    if (kernel == "read") {
        std::uint64_t sum = 0;
        result = test::gpu_sum_words(address, words.size(), sum);
        std::uint64_t expected = std::accumulate(words.begin(), words.end(), std::uint64_t(0));
        std::printf("read kernel: %s, sum %s\n", result.c_str(),
                    sum == expected ? "matches" : "differs");
    } else {
        result = test::gpu_fill_words(address, words.size(), 99);
        std::printf("write kernel: %s\n", result.c_str());
    }
    std::fflush(stdout);
    // The context may be dead now; the process ends without cleaning up, as an app would.
    return 0;
}
VTPAGE_CHILD_MODE("kernel-access", kernel_access_child);

// Why the faulting cases are skipped, or empty when they may run.
std::string kernel_faults_refused() {
    const char* value = std::getenv("VTPAGE_TEST_KERNEL_FAULTS");
    if (value && std::string(value) == "1") return {};
    return "a kernel that faults leaves the GPU unable to finish Vulkan frames (driver 580, "
           "docs/gpu.md); set VTPAGE_TEST_KERNEL_FAULTS=1 to run it, after every Vulkan test";
}

class CudaBackendKernels : public testing::Test {
protected:
    void SetUp() override {
        std::string reason;
        auto backend = test::try_make_backend("cuda", reason);
        if (!backend) {
            GTEST_SKIP() << "cuda backend unavailable: " << reason;
        }
        read_only_ = backend->capabilities().read_only_access;
    }
    bool read_only_ = false;
};

TEST_F(CudaBackendKernels, KernelsReadAndWriteReadWriteMappings) {
    std::string reason;
    auto backend = test::try_make_backend("cuda", reason);
    const std::size_t page = backend->granularity().minimum;
    DeviceAddress address = backend->reserve(2 * page);
    PhysicalHandle first = backend->create(page);
    PhysicalHandle second = backend->create(page);
    backend->map(address, page, first);
    backend->map(address + page, page, second);
    backend->set_access(address, 2 * page, Access::read_write);
    EXPECT_EQ(test::gpu_fill_words(address, 2 * page / 4, 3), "cudaSuccess");
    std::uint64_t sum = 0;
    EXPECT_EQ(test::gpu_sum_words(address, 2 * page / 4, sum), "cudaSuccess");
    EXPECT_EQ(sum, 3 * (2 * page / 4));
    std::vector<std::uint32_t> back(page / 4);
    backend->read(back.data(), address + page, page);
    EXPECT_EQ(back.front(), 3u);
    EXPECT_EQ(back.back(), 3u);
    backend->unmap(address, 2 * page);
    backend->release(first);
    backend->release(second);
    backend->free_reservation(address, 2 * page);
}

TEST_F(CudaBackendKernels, ReadKernelOnReadOnlyMappingWorks) {
    if (!read_only_) {
        GTEST_SKIP() << "the device does not accept read-only mappings";
    }
    auto child = test::run_child("kernel-access", {"read", "read"});
    EXPECT_EQ(child.exit_code, 0) << child.output;
    EXPECT_NE(child.output.find("read kernel: cudaSuccess, sum matches"), std::string::npos)
        << child.output;
}

TEST_F(CudaBackendKernels, WriteKernelOnReadOnlyMappingFailsAndIsReported) {
    if (!read_only_) {
        GTEST_SKIP() << "the device does not accept read-only mappings";
    }
    if (const std::string refused = kernel_faults_refused(); !refused.empty()) {
        GTEST_SKIP() << refused;
    }
    auto child = test::run_child("kernel-access", {"read", "write"});
    EXPECT_EQ(child.exit_code, 0) << child.output;
    EXPECT_NE(child.output.find("write kernel: cuda"), std::string::npos) << child.output;
    EXPECT_EQ(child.output.find("write kernel: cudaSuccess"), std::string::npos)
        << "a kernel wrote to a read-only mapping: " << child.output;
}

TEST_F(CudaBackendKernels, ReadKernelOnInaccessibleMappingFailsAndIsReported) {
    if (const std::string refused = kernel_faults_refused(); !refused.empty()) {
        GTEST_SKIP() << refused;
    }
    auto child = test::run_child("kernel-access", {"none", "read"});
    EXPECT_EQ(child.exit_code, 0) << child.output;
    EXPECT_NE(child.output.find("read kernel: cuda"), std::string::npos) << child.output;
    EXPECT_EQ(child.output.find("read kernel: cudaSuccess"), std::string::npos)
        << "a kernel read a mapping with no access: " << child.output;
}

#else

TEST(CudaBackendKernels, NeedTheCudaBuild) {
    GTEST_SKIP() << "this build has no CUDA compiler, so no CUDA backend or kernels";
}

#endif

}  // namespace
}  // namespace vtpage
