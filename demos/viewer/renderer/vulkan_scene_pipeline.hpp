// The viewer's graphics pipelines for a mesh scene (shaders/scene*): the colour pass of opaque
// and alpha-masked draws (depth tested and written), of blended draws (depth tested, not
// written, blended over), and the feedback pass of each. Vertices are pulled by device address
// (no vertex input), an index buffer is bound; both faces drawn (the shading lights a back face
// as its front), dynamic rendering with a depth attachment, no descriptors.
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>

#include "vtpage/interop/vulkan_handle.hpp"

namespace vtpage {
class VulkanContext;
}

namespace vtpage::viewer {

class VulkanReferenceTextures;

// The push constants of shaders/scene_frame.glsl, byte for byte.
struct ScenePushConstants {
    float view_projection[16];
    std::uint64_t indirection;
    std::uint64_t directory;
    std::uint64_t vertices;
    std::uint64_t instances;
    std::uint64_t materials;
    float lod_bias;
    std::uint32_t mode;
    float max_anisotropy;
    std::uint32_t frame_number;
};
static_assert(offsetof(ScenePushConstants, lod_bias) == 104, "scene_frame.glsl");
static_assert(sizeof(ScenePushConstants) == 120, "within the 128 bytes Vulkan guarantees");

class ScenePipelines {
public:
    static constexpr VkFormat depth_format = VK_FORMAT_D32_SFLOAT;

    // The hardware reference's colour pipelines where `reference` is given: its set bound as set
    // 0 (VulkanReferenceTextures), its textures sampled instead of virtual textures.
    ScenePipelines(VulkanContext& context, VkFormat colour_format, VkFormat feedback_format,
                   const VulkanReferenceTextures* reference = nullptr);

    VkPipelineLayout layout() const noexcept { return layout_.get(); }
    VkPipeline colour() const noexcept { return colour_.get(); }
    VkPipeline colour_blended() const noexcept { return colour_blended_.get(); }
    VkPipeline feedback() const noexcept { return feedback_.get(); }
    VkPipeline feedback_blended() const noexcept { return feedback_blended_.get(); }
    static constexpr VkShaderStageFlags push_stages =
        VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT;

private:
    UniqueVkPipelineLayout layout_;
    UniqueVkPipeline colour_;
    UniqueVkPipeline colour_blended_;
    UniqueVkPipeline feedback_;
    UniqueVkPipeline feedback_blended_;
};

}  // namespace vtpage::viewer
