// The compute pipeline of the identity check (shaders/identity_check.comp): at the positions the
// deferred pass recorded, reads the identity texture unfiltered through the frame's indirection
// table and counts the pixels whose words are not the page and texel their coordinates map to
// (VulkanRendererSettings::identity_check).
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>

#include "renderer/vulkan_compute_pipeline.hpp"

namespace vtpage {
class VulkanContext;
}

namespace vtpage::viewer {

// The push constants of shaders/identity_check.comp, byte for byte.
struct IdentityCheckPushConstants {
    std::uint64_t indirection;
    std::uint64_t directory;
    std::uint64_t positions;  // vec4 per pixel: (u, v, level of detail, texture id + 1)
    std::uint64_t counts;     // IdentityCheckCounts
    std::uint32_t width;
    std::uint32_t height;
    std::uint32_t identity_tag;  // vt::IdentitySettings::texture
    std::uint32_t padding;
};
static_assert(offsetof(IdentityCheckPushConstants, width) == 32, "matches identity_check.comp");
static_assert(sizeof(IdentityCheckPushConstants) == 48, "matches identity_check.comp");

// What the check adds up in a frame, byte for byte the shader's Counts.
struct IdentityCheckCounts {
    std::uint32_t pixels;      // pixels of the plane checked
    std::uint32_t violations;  // ... whose words were not their own
    std::uint32_t coarser;     // ... that read a coarser level than they wanted
    std::uint32_t unused;
};
static_assert(sizeof(IdentityCheckCounts) == 16, "matches identity_check.comp");

class IdentityCheckPipeline {
public:
    explicit IdentityCheckPipeline(VulkanContext& context);

    // Binds, pushes and dispatches one invocation per pixel; the counts must be zero before.
    void record(VkCommandBuffer commands, const IdentityCheckPushConstants& push) const {
        pipeline_.dispatch(commands, &push, push.width, push.height);
    }

private:
    ComputePipeline pipeline_;
};

}  // namespace vtpage::viewer
