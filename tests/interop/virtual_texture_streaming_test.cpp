// The interop layer on an app's own device: adopting handles (and the typed error naming what
// the device was created without), and VirtualTextureStreaming wiring a streamer to it: pages
// streamed, published in the indirection table through the frames it begins, and a teardown
// that waits for submitted frames. The "app's device" is a validated context's, adopted by a
// second context, so that the layer still reports everything done on it.
#include <gtest/gtest.h>

#include <span>

#include <chrono>
#include <cstring>
#include <memory>

#include "../support/backend_fixture.hpp"
#include "streaming_test_frame.hpp"
#include "vtpage/interop/virtual_texture_streaming.hpp"
#include "vtpage/interop/vulkan_device_handles.hpp"
#include "vtpage/interop/vulkan_error.hpp"
#include "vtpage/streaming/layout/texture_layout.hpp"
#include "vtpage/streaming/sources/procedural_source.hpp"
#include "vulkan_test_support.hpp"

namespace vtpage {
namespace {

using namespace std::chrono_literals;

TEST(VulkanDeviceHandles, DescribeCreationReadsTheFeatureChain) {
    VkPhysicalDeviceVulkan13Features vulkan13{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    VkPhysicalDeviceVulkan12Features vulkan12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                              &vulkan13};
    VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &vulkan12};
    VulkanDeviceRequirements requirements;
    requirements.device_extensions = {VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME};
    const char* extensions[] = {VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME};
    VkDeviceCreateInfo create{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &features};
    VulkanDeviceHandles handles;
    handles.describe_creation(create);
    EXPECT_EQ(requirements.missing_from(handles),
              "bufferDeviceAddress, timelineSemaphore, synchronization2, shaderInt64, "
              "VK_EXT_external_memory_host");
    requirements.enable(features, vulkan12, vulkan13);
    create.enabledExtensionCount = 1;
    create.ppEnabledExtensionNames = extensions;
    handles.describe_creation(create);
    EXPECT_EQ(requirements.missing_from(handles), "");
}

class AppDeviceTest : public testing::TestWithParam<std::string> {};

TEST_P(AppDeviceTest, AdoptingADeviceWithoutAFeatureNamesIt) {
    VTPAGE_BACKEND_OR_SKIP(backend, GetParam());
    VTPAGE_VULKAN_OR_SKIP(app, *backend);
    VulkanDeviceHandles handles = app->handles();
    handles.enabled_features.buffer_device_address = false;
    try {
        VulkanContext adopted(handles, vulkan_device_requirements(*backend));
        FAIL() << "adopted a device without bufferDeviceAddress";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::not_supported);
        EXPECT_NE(std::string(error.what()).find("bufferDeviceAddress"), std::string::npos);
    }
    handles = app->handles();
    handles.enabled_extensions.clear();
    EXPECT_THROW(VulkanContext(handles, vulkan_device_requirements(*backend)), Error);
    handles.device = VK_NULL_HANDLE;
    EXPECT_THROW(VulkanContext(handles, vulkan_device_requirements(*backend)), Error);
}

void run_frame(VulkanContext& context, VirtualTextureStreaming& streaming, VkCommandPool pool,
               std::span<const vt::FeedbackEntry> feedback = {}) {
    test::run_streaming_frame(context, streaming, pool, feedback);
}

TEST_P(AppDeviceTest, StreamingOnAnAdoptedDevicePublishesRequestedPages) {
    VTPAGE_BACKEND_OR_SKIP(backend, GetParam());
    VTPAGE_VULKAN_OR_SKIP(app, *backend);
    {
        VulkanContext context(app->handles(), vulkan_device_requirements(*backend));
        EXPECT_TRUE(context.adopted());
        VirtualTextureStreamingSettings settings;
        settings.page_count = 64;
        settings.frames_in_flight = 1;
        settings.streamer.table.region_size = 64 * vt::page_bytes;
        settings.streamer.table.budget_bytes = 32 * vt::page_bytes;
        VirtualTextureStreaming streaming(context, *backend, settings);
        const vt::TextureId id = streaming.add_texture(
            std::make_shared<vt::ProceduralSource>(vt::ProceduralSettings{.size_log2 = 10}));
        const PageIndex base = streaming.streamer().textures().base_page(id);
        const std::uint64_t pages = vt::TextureLayout(10).page_count;
        std::vector<PageIndex> all;
        for (std::uint64_t page = 0; page < pages; ++page) all.push_back(base + page);
        streaming.streamer().request(all);
        ASSERT_TRUE(streaming.wait_idle(30s));
        UniqueVkCommandPool pool = test::make_command_pool(context);
        run_frame(context, streaming, pool.get());  // publishes (CUDA: once the fill is done)
        run_frame(context, streaming, pool.get());
        for (PageIndex page : all) EXPECT_TRUE(streaming.indirection().slot_of(page)) << page;
        EXPECT_EQ(streaming.directory().get(id).width, 1024u);
        EXPECT_EQ(streaming.directory().get(id).height, 1024u);
        EXPECT_GE(streaming.importer().imported_count(), pages);
        streaming.shutdown();
        streaming.shutdown();  // idempotent
    }
    test::expect_no_validation_messages(*app);
}

// With feedback_thread, complete_frame hands the feedback over: what it asks for is streamed and
// published all the same, and wait_idle waits for the hand-off too.
TEST_P(AppDeviceTest, FeedbackOnItsOwnThreadStreamsWhatItAsksFor) {
    VTPAGE_BACKEND_OR_SKIP(backend, GetParam());
    VTPAGE_VULKAN_OR_SKIP(app, *backend);
    {
        VulkanContext context(app->handles(), vulkan_device_requirements(*backend));
        VirtualTextureStreamingSettings settings;
        settings.page_count = 64;
        settings.frames_in_flight = 1;
        settings.feedback_thread = true;
        settings.streamer.table.region_size = 64 * vt::page_bytes;
        settings.streamer.table.budget_bytes = 32 * vt::page_bytes;
        VirtualTextureStreaming streaming(context, *backend, settings);
        const vt::TextureId id = streaming.add_texture(
            std::make_shared<vt::ProceduralSource>(vt::ProceduralSettings{.size_log2 = 10}));
        const vt::TextureLayout layout = streaming.streamer().textures().layout(id);
        std::vector<vt::FeedbackEntry> feedback;  // every tile of every level but the tail
        for (std::uint32_t mip = 0; mip < layout.tail_first_mip; ++mip) {
            for (std::uint32_t y = 0; y < layout.mips[mip].tiles_y; ++y) {
                for (std::uint32_t x = 0; x < layout.mips[mip].tiles_x; ++x) {
                    feedback.push_back(vt::FeedbackEntry::make({id, mip, x, y}));
                }
            }
        }
        UniqueVkCommandPool pool = test::make_command_pool(context);
        // Procedural pages are filled on the CPU: seconds each under ThreadSanitizer.
        const auto deadline = test::under_thread_sanitizer ? 300s : 30s;
        for (int frame = 0; frame < 3; ++frame) {
            run_frame(context, streaming, pool.get(), feedback);
            ASSERT_TRUE(streaming.wait_idle(deadline));
        }
        const PageIndex base = streaming.streamer().textures().base_page(id);
        for (std::uint64_t page = 0; page < layout.page_count; ++page) {
            EXPECT_TRUE(streaming.indirection().slot_of(base + page)) << page;
        }
        streaming.shutdown();
    }
    test::expect_no_validation_messages(*app);
}

TEST_P(AppDeviceTest, AddingATexturePastTheTableIsOutOfRange) {
    VTPAGE_BACKEND_OR_SKIP(backend, GetParam());
    VTPAGE_VULKAN_OR_SKIP(app, *backend);
    {
        VirtualTextureStreamingSettings settings;
        settings.page_count = 4;
        settings.streamer.table.region_size = 64 * vt::page_bytes;
        settings.streamer.table.budget_bytes = 32 * vt::page_bytes;
        VirtualTextureStreaming streaming(*app, *backend, settings);
        try {
            streaming.add_texture(
                std::make_shared<vt::ProceduralSource>(vt::ProceduralSettings{.size_log2 = 10}));
            FAIL() << "a texture of 11 pages went into a table of 4";
        } catch (const Error& error) {
            EXPECT_EQ(error.code(), Errc::out_of_range);
        }
    }
    test::expect_no_validation_messages(*app);
}

// A source that says how it is sampled; its pages are zeros.
class MarkedSource final : public vt::TileSource {
public:
    MarkedSource(vt::TextureShape shape, vt::TextureSampling sampling)
        : shape_(shape), sampling_(sampling) {}
    vt::TextureShape shape() const noexcept override { return shape_; }
    vt::TextureSampling sampling() const noexcept override { return sampling_; }
    std::string name() const override { return "marked"; }
    void fill_host(std::uint64_t, std::span<std::byte> destination) const override {
        std::memset(destination.data(), 0, destination.size());
    }

private:
    vt::TextureShape shape_;
    vt::TextureSampling sampling_;
};

// The shaders learn a source's address modes and colour space through the directory; sRGB in a
// format without an sRGB variant is refused before the streamer has the texture.
TEST_P(AppDeviceTest, TheDirectoryLearnsHowASourceIsSampled) {
    VTPAGE_BACKEND_OR_SKIP(backend, GetParam());
    VTPAGE_VULKAN_OR_SKIP(app, *backend);
    {
        VirtualTextureStreamingSettings settings;
        settings.page_count = 16;
        settings.streamer.table.region_size = 64 * vt::page_bytes;
        settings.streamer.table.budget_bytes = 32 * vt::page_bytes;
        VirtualTextureStreaming streaming(*app, *backend, settings);
        const vt::TextureSampling marked{vt::AddressMode::repeat, vt::AddressMode::mirrored_repeat,
                                         vt::ColorSpace::srgb};
        const vt::TextureId id = streaming.add_texture(std::make_shared<MarkedSource>(
            vt::TextureShape{256, 128, vt::TileFormat::bc1}, marked));
        const VulkanTextureInfo info = streaming.directory().get(id);
        EXPECT_EQ(info.address_u, std::uint32_t(vt::AddressMode::repeat));
        EXPECT_EQ(info.address_v, std::uint32_t(vt::AddressMode::mirrored_repeat));
        EXPECT_EQ(info.color_space, std::uint32_t(vt::ColorSpace::srgb));
        const std::size_t textures = streaming.streamer().textures().texture_count();
        try {
            streaming.add_texture(std::make_shared<MarkedSource>(
                vt::TextureShape{256, 128, vt::TileFormat::bc4}, marked));
            FAIL() << "sRGB BC4 was taken";
        } catch (const Error& error) {
            EXPECT_EQ(error.code(), Errc::invalid_argument);
        }
        EXPECT_EQ(streaming.streamer().textures().texture_count(), textures);
        streaming.shutdown();
    }
    test::expect_no_validation_messages(*app);
}

INSTANTIATE_TEST_SUITE_P(Backends, AppDeviceTest, testing::ValuesIn(test::all_backend_names()),
                         test::backend_param_name);

}  // namespace
}  // namespace vtpage
