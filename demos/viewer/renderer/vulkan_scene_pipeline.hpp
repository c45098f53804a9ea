// The viewer's graphics pipelines for a mesh scene (shaders/scene*): the colour pass of opaque
// and alpha-masked draws (depth tested and written), of blended draws (depth tested, not
// written, blended over), and the feedback pass of each. Vertices are pulled by device address
// (no vertex input), an index buffer is bound; both faces drawn (the shading lights a back face
// as its front), dynamic rendering with a depth attachment. Set 0 is the level-of-detail probe
// (VulkanLodProbe), set 1 the hardware reference's textures where there is one.
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "renderer/scene_gpu_layout.hpp"
#include "vtpage/interop/vulkan_handle.hpp"

namespace vtpage {
class VulkanContext;
class VulkanLodProbe;
}  // namespace vtpage

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
    std::uint64_t quality;  // the colour pass's quality bins (scene_fragment.glsl); 0: none
};
static_assert(offsetof(ScenePushConstants, lod_bias) == 104, "scene_frame.glsl");
static_assert(offsetof(ScenePushConstants, quality) == 120, "scene_frame.glsl");
static_assert(sizeof(ScenePushConstants) == 128, "the 128 bytes Vulkan guarantees");

class ScenePipelines {
public:
    static constexpr VkFormat depth_format = VK_FORMAT_D32_SFLOAT;

    struct Options {
        // The hardware reference's colour pipelines where given: its set bound as set 1
        // (VulkanReferenceTextures), its textures sampled instead of virtual textures.
        const VulkanReferenceTextures* reference = nullptr;
        // Whether vtpage's isotropic samples take the device's level of detail from the probe
        // (scene_lod_from_device) or the exact formula's (vt_formula_lod).
        bool lod_from_device = true;
    };
    // `probe`'s set layout is set 0 of the pipelines' layout. Makes the layout, the shader
    // modules and the depth pre-pass; the colour and feedback pipelines come with build_for.
    ScenePipelines(VulkanContext& context, VkFormat colour_format, VkFormat feedback_format,
                   const VulkanLodProbe& probe, const Options& options);

    // A pass's pipelines: opaque, blended and alpha-masked, each for draws whose material
    // samples a stack and for the others. The shaders' stack path is a specialization constant
    // (scene_stacks_drawn), so that a draw without a stack pays nothing for it (registers, code).
    // vtpage's colour pipelines test depth before the shader (scene_early.frag) except for masked
    // draws; elsewhere the masked pipelines are the opaque ones. The reference never samples
    // stacks: its stacked draws take the plain pipelines.
    enum Kind { opaque, blended, masked, kinds };
    static Kind kind_of(const SceneGpuDraw& draw) noexcept {
        return draw.blended ? blended : draw.masked ? masked : opaque;
    }
    struct Pass {
        VkPipeline pipelines[2][kinds] = {};  // [stacked][kind]
        VkPipeline for_draw(const SceneGpuDraw& draw) const {
            return pipelines[draw.stacked ? 1 : 0][kind_of(draw)];
        }
    };

    VkPipelineLayout layout() const noexcept { return layout_.get(); }
    // Depth only, vertex stage alone: the colour pass first lays down the depth of its opaque
    // draws, so that its (costly) shading runs once per pixel and not for what a nearer surface
    // hides.
    VkPipeline depth_prepass() const noexcept { return depth_prepass_.get(); }
    // Makes the colour and feedback pipelines that `draws` use and that are not made yet: on a
    // CPU device a pipeline takes seconds to compile, and a scene uses a few of the ten.
    void build_for(std::span<const SceneGpuDraw> draws);
    // The colour and feedback pipelines made so far (the depth pre-pass left out).
    std::size_t pipelines_built() const noexcept;
    // The pipelines by draw; a draw's entry is VK_NULL_HANDLE until build_for has seen its like.
    Pass colour() const noexcept;
    Pass feedback() const noexcept;
    static constexpr VkShaderStageFlags push_stages =
        VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT;

private:
    // Which of the made pipelines a draw of `stacked` and `kind` takes, in each pass.
    struct Variant {
        int stacked;
        int kind;
    };
    Variant colour_variant(bool stacked, Kind kind) const noexcept;
    Variant feedback_variant(bool stacked, Kind kind) const noexcept;
    // Each draw's pipeline in a pass: the made one of its variant (`variant_of`).
    Pass pass_of(const UniqueVkPipeline (&made)[2][kinds],
                 Variant (ScenePipelines::*variant_of)(bool, Kind) const noexcept) const noexcept;
    // The specialization constants of the fragment shaders (scene_frame.glsl: ids 0 to 2).
    struct Constants {
        std::uint32_t reference_count;  // the reference's array of textures (1 without one)
        VkBool32 stacks_drawn;
        VkBool32 lod_from_device;
    };
    UniqueVkPipeline make(VkShaderModule vertex, VkShaderModule fragment, VkFormat format,
                          bool colour_writes_rgba, bool blend, bool stacked, const char* name);
    void build_colour(Variant variant);
    void build_feedback(Variant variant);

    VulkanContext* context_;
    VkFormat colour_format_;
    VkFormat feedback_format_;
    bool reference_;
    Constants constants_[2];  // [stacked]
    UniqueVkPipelineLayout layout_;
    UniqueVkShaderModule vertex_;
    UniqueVkShaderModule fragment_;        // scene.frag, or the reference's
    UniqueVkShaderModule early_fragment_;  // scene_early.frag (vtpage's, depth tested first)
    UniqueVkShaderModule feedback_vertex_;
    UniqueVkShaderModule feedback_fragment_;
    UniqueVkPipeline depth_prepass_;
    UniqueVkPipeline colour_[2][kinds];  // [stacked][kind]; made by build_for
    UniqueVkPipeline feedback_[2][kinds];
};

}  // namespace vtpage::viewer
