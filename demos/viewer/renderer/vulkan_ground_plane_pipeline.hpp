// The viewer's graphics pipelines over the ground plane: the colour pass (forward), the sample
// positions of the deferred textured pass, and the feedback pass (same vertex shader and push
// constants, dynamic rendering, no descriptors: the shaders reach the indirection table, the
// texture directory and the pages by device address).
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>

#include "vtpage/interop/vulkan_handle.hpp"

namespace vtpage {
class VulkanContext;
}

namespace vtpage::viewer {

// The push constants of shaders/ground_plane_frame.glsl, byte for byte.
struct GroundPlanePushConstants {
    float view_projection[16];
    std::uint64_t indirection;
    std::uint64_t directory;
    float plane_extent[2];  // vec2s: 8-byte aligned, so they come before the 4-byte members
    float plane_origin[2];
    std::uint32_t texture_id;
    float lod_bias;
    std::uint32_t mode;
    float max_anisotropy;  // VulkanRendererSettings::max_anisotropy
};
static_assert(offsetof(GroundPlanePushConstants, plane_extent) == 80, "ground_plane_frame.glsl");
static_assert(offsetof(GroundPlanePushConstants, plane_origin) == 88, "ground_plane_frame.glsl");
static_assert(offsetof(GroundPlanePushConstants, mode) == 104, "matches ground_plane_frame.glsl");
static_assert(offsetof(GroundPlanePushConstants, max_anisotropy) == 108, "ground_plane_frame.glsl");
static_assert(sizeof(GroundPlanePushConstants) == 112, "within the 128 bytes Vulkan guarantees");

class GroundPlanePipelines {
public:
    GroundPlanePipelines(VulkanContext& context, VkFormat colour_format,
                         VkFormat sample_position_format, VkFormat feedback_format);

    VkPipelineLayout layout() const noexcept { return layout_.get(); }
    VkPipeline colour() const noexcept { return colour_.get(); }
    VkPipeline sample_positions() const noexcept { return sample_positions_.get(); }
    VkPipeline feedback() const noexcept { return feedback_.get(); }
    static constexpr VkShaderStageFlags push_stages =
        VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT;

private:
    UniqueVkPipelineLayout layout_;
    UniqueVkPipeline colour_;
    UniqueVkPipeline sample_positions_;
    UniqueVkPipeline feedback_;
};

}  // namespace vtpage::viewer
