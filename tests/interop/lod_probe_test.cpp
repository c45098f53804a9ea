// The level-of-detail probe (VulkanLodProbe with virtual_texture.glsl's VT_LOD_PROBE) against
// the device itself (lavapipe in CI): for random pairs of uv derivatives, round and stretched,
// at any angle, over every level and beyond, the level that vt_device_lod gives is the level,
// fraction included, that an ordinary image of the texture's size reads (a VulkanLodProbe made
// at that size, every level holding its index). The exact formula's distance from the device is
// printed beside it: how much the probe corrects on this device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "vtpage/interop/vulkan_buffer.hpp"
#include "vtpage/interop/vulkan_error.hpp"
#include "vtpage/interop/vulkan_lod_probe.hpp"
#include "vtpage/interop/vulkan_shader_module.hpp"
#include "vulkan_test_support.hpp"

namespace vtpage {
namespace {

constexpr std::uint32_t lod_probe_test_comp[] = {
#include "lod_probe_test.comp.spv.inc"
};
constexpr std::uint32_t group_size = 64;

// The shader's std430 structures and push constants.
struct Derivatives {
    float dx[2];
    float dy[2];
};
struct Levels {
    float device, probe, formula, padding;
};
struct LodProbePush {
    VkDeviceAddress cases = 0;
    VkDeviceAddress results = 0;
    std::uint32_t count = 0;
    std::uint32_t width = 0;
    std::uint32_t height = 0;
    std::uint32_t levels = 0;
};
static_assert(sizeof(Derivatives) == 16 && sizeof(Levels) == 16 && sizeof(LodProbePush) == 32,
              "lod_probe_test.comp's std430");

// lod_probe_test.comp with the probe's set as set 0 and the truth's as set 1.
class LodProbeTestPipeline {
public:
    LodProbeTestPipeline(VulkanContext& context, const VulkanLodProbe& probe,
                         const VulkanLodProbe& truth)
        : context_(context), probe_(probe), truth_(truth) {
        VkDevice device = context.device();
        const VkDescriptorSetLayout sets[2] = {probe.set_layout(), truth.set_layout()};
        const VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(LodProbePush)};
        VkPipelineLayoutCreateInfo layout{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
        layout.setLayoutCount = 2;
        layout.pSetLayouts = sets;
        layout.pushConstantRangeCount = 1;
        layout.pPushConstantRanges = &range;
        VkPipelineLayout raw_layout = VK_NULL_HANDLE;
        vk_check(vkCreatePipelineLayout(device, &layout, nullptr, &raw_layout), "test",
                 "vkCreatePipelineLayout");
        layout_ = UniqueVkPipelineLayout(device, raw_layout);
        const UniqueVkShaderModule module =
            make_shader_module(context, lod_probe_test_comp, "lod_probe_test.comp");
        VkComputePipelineCreateInfo create{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
        create.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
        create.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
        create.stage.module = module.get();
        create.stage.pName = "main";
        create.layout = raw_layout;
        VkPipeline raw = VK_NULL_HANDLE;
        vk_check(vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &create, nullptr, &raw),
                 "test", "vkCreateComputePipelines");
        pipeline_ = UniqueVkPipeline(device, raw);
    }

    // Each case's three levels (a submission of its own, waited for).
    std::vector<Levels> run(const std::vector<Derivatives>& cases, VkExtent2D size) {
        const VkBufferUsageFlags usage =
            VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
        const VkDeviceSize bytes = cases.size() * sizeof(Derivatives);
        VulkanBuffer input(context_, bytes, usage, BufferMemory::upload, "lod probe cases");
        std::memcpy(input.mapped(), cases.data(), bytes);
        input.flush();
        VulkanBuffer output(context_, cases.size() * sizeof(Levels), usage, BufferMemory::readback,
                            "lod probe results");
        const LodProbePush push{input.device_address(),
                                output.device_address(),
                                std::uint32_t(cases.size()),
                                size.width,
                                size.height,
                                truth_.levels()};
        const VkDescriptorSet sets[2] = {probe_.set(), truth_.set()};
        context_.run_commands([&](VkCommandBuffer commands) {
            vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_.get());
            vkCmdBindDescriptorSets(commands, VK_PIPELINE_BIND_POINT_COMPUTE, layout_.get(), 0, 2,
                                    sets, 0, nullptr);
            vkCmdPushConstants(commands, layout_.get(), VK_SHADER_STAGE_COMPUTE_BIT, 0,
                               sizeof(push), &push);
            vkCmdDispatch(commands, (push.count + group_size - 1) / group_size, 1, 1);
            record_memory_barrier(commands, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                                  VK_ACCESS_2_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_2_HOST_BIT,
                                  VK_ACCESS_2_HOST_READ_BIT);
        });
        output.invalidate();
        std::vector<Levels> results(cases.size());
        std::memcpy(results.data(), output.mapped(), results.size() * sizeof(Levels));
        return results;
    }

private:
    VulkanContext& context_;
    const VulkanLodProbe& probe_;
    const VulkanLodProbe& truth_;
    UniqueVkPipelineLayout layout_;
    UniqueVkPipeline pipeline_;
};

// Derivatives whose longer axis spans 2^-2 to 2^(levels + 1) texels: round ones, ones stretched
// up to 8:1, at any angle, the two axes at any angle to each other, in uv units of `size`.
std::vector<Derivatives> random_derivatives(VkExtent2D size, std::uint32_t levels,
                                            std::size_t count, std::uint32_t seed) {
    std::mt19937 random(seed);
    std::uniform_real_distribution<float> level(-2.0f, float(levels) + 1.0f);
    std::uniform_real_distribution<float> angle(0.0f, 6.2831853f);
    std::uniform_real_distribution<float> stretch_log2(0.0f, 3.0f);
    std::vector<Derivatives> cases;
    for (std::size_t i = 0; i < count; ++i) {
        const float longer = std::exp2(level(random));
        const float shorter = i % 4 == 0 ? longer : longer / std::exp2(stretch_log2(random));
        const float a = angle(random), b = i % 4 == 0 ? a + 1.5707963f : angle(random);
        const float w = float(size.width), h = float(size.height);
        cases.push_back({{longer * std::cos(a) / w, longer * std::sin(a) / h},
                         {shorter * std::cos(b) / w, shorter * std::sin(b) / h}});
        if (i % 2) std::swap(cases.back().dx, cases.back().dy);  // the longer one on either axis
    }
    return cases;
}

class LodProbeTest : public test::HostVulkanTest {};

TEST_F(LodProbeTest, ItAnswersWithTheLevelAnImageOfTheTexturesSizeReads) {
    if (IsSkipped()) return;
    const VulkanLodProbe probe(*context_);
    // Square and not, powers of two and not, one level and many.
    const VkExtent2D sizes[] = {{256, 256}, {2048, 512}, {300, 700}, {4096, 4096}, {1, 1}};
    std::printf("  %-11s %6s  %-33s %-33s\n", "size", "levels", "probe - device: largest, mean",
                "formula - device: largest, mean");
    std::uint32_t seed = 1;
    for (const VkExtent2D size : sizes) {
        SCOPED_TRACE(std::to_string(size.width) + " x " + std::to_string(size.height));
        const VulkanLodProbe truth(*context_, 0, size);
        LodProbeTestPipeline pipeline(*context_, probe, truth);
        const std::vector<Derivatives> cases =
            random_derivatives(size, truth.levels(), 8192, seed++);
        const std::vector<Levels> results = pipeline.run(cases, size);
        double probe_largest = 0, probe_sum = 0, formula_largest = 0, formula_sum = 0;
        std::size_t shown = 0;
        for (std::size_t i = 0; i < results.size(); ++i) {
            const Levels& r = results[i];
            const double probe_off = std::abs(double(r.probe) - r.device);
            const double formula_off = std::abs(double(r.formula) - r.device);
            probe_largest = std::max(probe_largest, probe_off);
            formula_largest = std::max(formula_largest, formula_off);
            probe_sum += probe_off;
            formula_sum += formula_off;
            // Four steps of an 8-bit fraction. The H200 answers in steps of 1/256 from a log2 of
            // its own whose error follows the mantissa: at a size that is not a power of two the
            // probe's scaled derivatives have another mantissa, and 5 of 8,192 cases at 300 x 700
            // were 3/256 off (lavapipe: none). A probe a level's 1/50 off still fails.
            if (probe_off > 1.0 / 64 && shown++ < 5) {
                ADD_FAILURE() << "case " << i << ": dx (" << cases[i].dx[0] << ", "
                              << cases[i].dx[1] << "), dy (" << cases[i].dy[0] << ", "
                              << cases[i].dy[1] << "): device " << r.device << ", probe " << r.probe
                              << ", formula " << r.formula;
            }
        }
        const double n = double(results.size());
        std::printf("  %5u x %-5u %6u  %10.5f %10.5f              %10.5f %10.5f\n", size.width,
                    size.height, truth.levels(), probe_largest, probe_sum / n, formula_largest,
                    formula_sum / n);
        EXPECT_EQ(shown, 0u) << "cases where the probe is off the device by more than 1/64";
    }
}

TEST_F(LodProbeTest, ExtentsItCannotHoldAreRefused) {
    if (IsSkipped()) return;
    for (const VkExtent2D extent : {VkExtent2D{0, 16}, VkExtent2D{16, 0}, VkExtent2D{65536, 1}}) {
        try {
            VulkanLodProbe probe(*context_, 0, extent);
            ADD_FAILURE() << extent.width << " x " << extent.height << " was accepted";
        } catch (const Error& error) {
            EXPECT_EQ(error.code(), Errc::invalid_argument) << error.what();
            EXPECT_NE(std::string(error.what()).find("1 to 32768 a side"), std::string::npos)
                << error.what();
        }
    }
}

}  // namespace
}  // namespace vtpage
