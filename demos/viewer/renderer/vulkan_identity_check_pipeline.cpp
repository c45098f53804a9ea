#include "renderer/vulkan_identity_check_pipeline.hpp"

#include "renderer/ground_plane_shaders.hpp"

namespace vtpage::viewer {

IdentityCheckPipeline::IdentityCheckPipeline(VulkanContext& context)
    : pipeline_(context, identity_check_compute_spirv(), sizeof(IdentityCheckPushConstants),
                "vtpage identity check") {}

}  // namespace vtpage::viewer
