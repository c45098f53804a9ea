// The viewer's renderer on the GPU path: pages filled by CUDA copies that land late, published
// with the fill timeline's value; the frame must wait for them and show them. Skipped, with the
// reason, where there is no CUDA device or no Vulkan driver for it.
#include <gtest/gtest.h>

#include <cstring>

#include "../interop/vulkan_test_support.hpp"
#include "renderer_rig.hpp"
#include "vtpage/config.hpp"
#include "vtpage/interop/vulkan_cuda_timeline.hpp"
#if VTPAGE_HAS_CUDA
#include "../interop/cuda_stream_helpers.hpp"
#endif

namespace vtpage {
namespace {

#if VTPAGE_HAS_CUDA

// The whole path of a frame: pages committed by the page table, filled by CUDA copies that land
// late, published with the fill timeline's value; the frame must wait and show them.
class CudaRendererTest : public testing::Test, protected test::RendererRig {
protected:
    void SetUp() override {
        std::string reason;
        if (!set_up("cuda", reason)) GTEST_SKIP() << "cuda: " << reason;
        ASSERT_EQ(test::cuda_stream_create(backend->capabilities().device, &stream), "cudaSuccess");
    }
    void TearDown() override {
        if (stream) {
            EXPECT_EQ(test::cuda_stream_synchronize(stream), "cudaSuccess");
        }
        if (renderer) renderer->finish();
        fills.reset();
        if (stream) {
            EXPECT_EQ(test::cuda_stream_destroy(stream), "cudaSuccess");
        }
        tear_down();
    }
    std::unique_ptr<CudaVulkanTimeline> fills;
    CUstream_st* stream = nullptr;
};

TEST_F(CudaRendererTest, FramesWaitForCudaFillsOfThePagesTheyReach) {
    fills = std::make_unique<CudaVulkanTimeline>(*context, backend->capabilities().device);
    indirection->set_fill_timeline(fills->semaphore());
    std::vector<std::uint64_t> all;
    for (std::uint64_t page = 0; page < layout.page_count; ++page) all.push_back(page);
    auto mappings = commit(all);
    // What is in the pages before the fills land: something else entirely.
    std::vector<std::uint8_t> stale(vt::page_bytes, 0x33);
    for (const PageMapping& mapping : mappings) {
        backend->write(table->data_address(mapping.page), stale.data(), stale.size());
    }
    void* pinned = nullptr;
    ASSERT_EQ(test::cuda_host_alloc(&pinned, mappings.size() * vt::page_bytes), "cudaSuccess");
    ASSERT_EQ(test::cuda_spin(stream, 200), "cudaSuccess");
    for (std::size_t i = 0; i < mappings.size(); ++i) {
        auto* staging = static_cast<std::uint8_t*>(pinned) + i * vt::page_bytes;
        const auto bytes = page_bytes(mappings[i].page - test::rig_base_page);
        std::memcpy(staging, bytes.data(), bytes.size());
        ASSERT_EQ(test::cuda_copy_to_device_async(table->data_address(mappings[i].page), staging,
                                                  vt::page_bytes, stream),
                  "cudaSuccess");
    }
    const std::uint64_t value = fills->signal(stream);
    indirection->ready(mappings, value);
    const auto view = test::OrthoView::at_lod(0.3f, 0.9f, 0.44f);
    const test::Frame frame = render(view);
    EXPECT_EQ(frame.info.upload.wait_value, value);
    EXPECT_EQ(frame.info.upload.wait_semaphore, fills->semaphore());
    EXPECT_LE(test::compare(frame.colour, reference(view)).largest, test::rig_tolerance);
    ASSERT_EQ(test::cuda_stream_synchronize(stream), "cudaSuccess");
    ASSERT_EQ(test::cuda_host_free(pinned), "cudaSuccess");
}

#endif  // VTPAGE_HAS_CUDA

}  // namespace
}  // namespace vtpage
