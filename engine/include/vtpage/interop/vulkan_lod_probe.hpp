// The device's own level of detail, for shaders that sample virtual textures next to a renderer's
// ordinary images: a tiny mipmapped image whose every level holds its own index, sampled with
// trilinear filtering at the derivatives of a sample (virtual_texture.glsl, VT_LOD_PROBE). What
// comes back is the level the device would read and its trilinear fraction, with the device's
// own approximations of the footprint and its rounding of the fraction, which the exact formula
// of vt_lod does not reproduce on every device. A virtual texture sampled so filters between
// the same two levels, with the same weights, as a VkImage of its size in the same place.
//
// Bind descriptor_image_info() as a combined image sampler where the shader declares the probe
// (or use set_layout() and set(), one binding at `binding`, for the fragment and compute stages).
// Made at another extent (a full chain of levels, each holding its index), the image answers
// with the device's level of detail for an image of that size: the truth the probe is tested
// against.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <optional>

#include "vtpage/interop/vulkan_handle.hpp"
#include "vtpage/interop/vulkan_image.hpp"
#include "vtpage/interop/vulkan_sampler_set.hpp"

namespace vtpage {

class VulkanContext;

class VulkanLodProbe {
public:
    // The probe's extent: its level 0 is 2^(probe_levels - 1) texels a side
    // (virtual_texture.glsl's vt_lod_probe_levels).
    static constexpr std::uint32_t probe_levels = 6;
    static constexpr VkExtent2D probe_extent = {1u << (probe_levels - 1), 1u << (probe_levels - 1)};

    // The image is filled and ready to sample on return (one submission, waited for).
    // Errc::invalid_argument for an empty extent or one beyond 2^15 a side.
    explicit VulkanLodProbe(VulkanContext& context, std::uint32_t binding = 0,
                            VkExtent2D extent = probe_extent);

    std::uint32_t levels() const noexcept { return levels_; }

    VkDescriptorImageInfo descriptor_image_info() const noexcept;
    VkDescriptorSetLayout set_layout() const noexcept { return set_->layout(); }
    VkDescriptorSet set() const noexcept { return set_->get(); }

private:
    void make_sampler(VulkanContext& context);
    void fill(VulkanContext& context);

    std::uint32_t levels_ = 0;
    VulkanImage image_;  // members go in reverse: the set, the sampler, then the image
    UniqueVkSampler sampler_;
    std::optional<VulkanSamplerSet> set_;  // made last, from the image and the sampler
};

}  // namespace vtpage
