#include "renderer/vulkan_shade_pipeline.hpp"

#include "renderer/ground_plane_shaders.hpp"

namespace vtpage::viewer {

ShadePipeline::ShadePipeline(VulkanContext& context)
    : pipeline_(context, ground_plane_shade_compute_spirv(), sizeof(ShadePushConstants),
                "vtpage ground plane shade") {}

}  // namespace vtpage::viewer
