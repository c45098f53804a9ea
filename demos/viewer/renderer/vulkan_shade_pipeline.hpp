// The compute pipeline of the deferred textured pass (shaders/ground_plane_shade.comp): samples
// the virtual texture at the positions the raster pass recorded, writes RGBA8 colours and counts
// the frame's sample quality into bins (sample_quality.hpp). No descriptors: everything is
// reached by device address.
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>

#include "renderer/vulkan_compute_pipeline.hpp"

namespace vtpage {
class VulkanContext;
}

namespace vtpage::viewer {

// The push constants of shaders/ground_plane_shade.comp, byte for byte.
struct ShadePushConstants {
    std::uint64_t indirection;
    std::uint64_t directory;
    // vec4 per pixel: (u, v, level of detail, texture id + 1; 0 on the sky)
    std::uint64_t positions;
    std::uint64_t colours;  // RGBA8 per pixel
    std::uint64_t quality;  // quality_bins uvec4 bins, zeroed before the pass
    std::uint32_t width;
    std::uint32_t height;
    std::uint32_t sky;           // RGBA8, R in the low byte
    std::uint32_t quality_bins;  // a power of two
    float lod_bias;              // added to each pixel's level of detail (the quality ignores it)
    float max_anisotropy;        // VulkanRendererSettings::max_anisotropy
};
static_assert(offsetof(ShadePushConstants, width) == 40, "matches ground_plane_shade.comp");
static_assert(offsetof(ShadePushConstants, lod_bias) == 56, "matches ground_plane_shade.comp");
static_assert(offsetof(ShadePushConstants, max_anisotropy) == 60, "ground_plane_shade.comp");
static_assert(sizeof(ShadePushConstants) == 64, "matches ground_plane_shade.comp");

class ShadePipeline {
public:
    // Errc::not_supported where compute shaders lack subgroup arithmetic (every desktop GPU and
    // lavapipe have it).
    explicit ShadePipeline(VulkanContext& context);

    // Binds, pushes and dispatches one invocation per pixel.
    void record(VkCommandBuffer commands, const ShadePushConstants& push) const {
        pipeline_.dispatch(commands, &push, push.width, push.height);
    }

private:
    ComputePipeline pipeline_;
};

}  // namespace vtpage::viewer
