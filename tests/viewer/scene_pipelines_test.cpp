// The scene's pipelines are made on first need: a scene of opaque draws without stacks compiles
// two of the ten colour and feedback pipelines (on a CPU device each takes seconds), and each
// draw finds its own once build_for has seen its like, with the fallbacks the shaders allow
// (masked feedback takes the opaque pipeline).
#include <gtest/gtest.h>

#include <vector>

#include "interop/vulkan_test_support.hpp"
#include "renderer/vulkan_scene_pipeline.hpp"
#include "vtpage/interop/vulkan_lod_probe.hpp"

namespace vtpage::viewer {
namespace {

constexpr VkFormat colour_format = VK_FORMAT_R8G8B8A8_UNORM;
constexpr VkFormat feedback_format = VK_FORMAT_R32G32_UINT;

SceneGpuDraw draw_of(bool stacked, bool blended, bool masked) {
    SceneGpuDraw draw;
    draw.index_count = 3;
    draw.stacked = stacked;
    draw.blended = blended;
    draw.masked = masked;
    return draw;
}

class ScenePipelinesTest : public test::HostVulkanTest {};

TEST_F(ScenePipelinesTest, MakesOnlyThePipelinesItsDrawsUse) {
    VulkanLodProbe probe(*context_);
    ScenePipelines pipelines(*context_, colour_format, feedback_format, probe, {});
    EXPECT_NE(pipelines.depth_prepass(), VK_NULL_HANDLE);
    EXPECT_EQ(pipelines.pipelines_built(), 0u);

    const SceneGpuDraw plain = draw_of(false, false, false);
    const SceneGpuDraw masked = draw_of(false, false, true);
    const SceneGpuDraw stacked_blended = draw_of(true, true, false);
    EXPECT_EQ(pipelines.colour().for_draw(plain), VK_NULL_HANDLE);

    const std::vector<SceneGpuDraw> opaque_scene{plain, plain};
    pipelines.build_for(opaque_scene);
    EXPECT_EQ(pipelines.pipelines_built(), 2u);  // one colour, one feedback
    EXPECT_NE(pipelines.colour().for_draw(plain), VK_NULL_HANDLE);
    EXPECT_NE(pipelines.feedback().for_draw(plain), VK_NULL_HANDLE);
    EXPECT_EQ(pipelines.colour().for_draw(masked), VK_NULL_HANDLE);
    EXPECT_EQ(pipelines.colour().for_draw(stacked_blended), VK_NULL_HANDLE);

    // A masked draw adds its colour pipeline; its feedback is the opaque one.
    const std::vector<SceneGpuDraw> with_masked{plain, masked};
    pipelines.build_for(with_masked);
    EXPECT_EQ(pipelines.pipelines_built(), 3u);
    EXPECT_NE(pipelines.colour().for_draw(masked), VK_NULL_HANDLE);
    EXPECT_NE(pipelines.colour().for_draw(masked), pipelines.colour().for_draw(plain));
    EXPECT_EQ(pipelines.feedback().for_draw(masked), pipelines.feedback().for_draw(plain));

    // A stacked, blended draw adds both of its own; seen again, nothing more is made.
    const std::vector<SceneGpuDraw> with_stacks{plain, masked, stacked_blended};
    pipelines.build_for(with_stacks);
    pipelines.build_for(with_stacks);
    EXPECT_EQ(pipelines.pipelines_built(), 5u);
    const VkPipeline stacked_colour = pipelines.colour().for_draw(stacked_blended);
    EXPECT_NE(stacked_colour, VK_NULL_HANDLE);
    EXPECT_NE(stacked_colour, pipelines.colour().for_draw(draw_of(false, true, false)));
    EXPECT_NE(pipelines.feedback().for_draw(stacked_blended), VK_NULL_HANDLE);
    EXPECT_EQ(pipelines.colour().for_draw(draw_of(true, false, false)), VK_NULL_HANDLE);
}

}  // namespace
}  // namespace vtpage::viewer
