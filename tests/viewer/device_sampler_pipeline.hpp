// The device's own sampler beside vtpage's, for the anisotropy and image parity tests: an RGBA8
// image (UNORM or SRGB) holding the mip levels it is given (the texels the virtual texture's
// tiles hold), two samplers on it (at
// the device's largest anisotropy, at most 16x, and without anisotropy) and a compute pipeline
// whose set 0 binds them as combined image samplers 0 and 1, and a level-of-detail probe
// (VulkanLodProbe) as 2; its other inputs are push constants (buffer device addresses among them).
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "vtpage/interop/vulkan_context.hpp"
#include "vtpage/interop/vulkan_handle.hpp"
#include "vtpage/interop/vulkan_lod_probe.hpp"

namespace vtpage::test {

// Level m of a mip chain: max(1, width >> m) x max(1, height >> m) RGBA8 texels, row by row, R
// in the low byte.
using MipLevels = std::vector<std::vector<std::uint32_t>>;

// How the device samples the image: each axis's address mode, and the image's format
// (VK_FORMAT_R8G8B8A8_SRGB decodes the texels to linear before filtering, as an sRGB virtual
// texture does).
struct DeviceSampling {
    VkSamplerAddressMode address_u = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
    VkSamplerAddressMode address_v = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
    VkFormat format = VK_FORMAT_R8G8B8A8_UNORM;
};

class DeviceSamplerPipeline {
public:
    // Needs VulkanContext::supports_sampler_anisotropy().
    DeviceSamplerPipeline(VulkanContext& context, std::uint32_t width, std::uint32_t height,
                          const MipLevels& levels, DeviceSampling sampling,
                          std::span<const std::uint32_t> spirv, std::uint32_t push_bytes,
                          const char* name);
    // `address`: both axes' address mode, a linear (UNORM) image.
    DeviceSamplerPipeline(VulkanContext& context, std::uint32_t width, std::uint32_t height,
                          const MipLevels& levels, VkSamplerAddressMode address,
                          std::span<const std::uint32_t> spirv, std::uint32_t push_bytes,
                          const char* name)
        : DeviceSamplerPipeline(context, width, height, levels, {address, address}, spirv,
                                push_bytes, name) {}

    // Dispatches groups_x x groups_y work groups with `push` in a submission of its own, waited
    // for, the shader's writes then visible to the host.
    void run(std::span<const std::byte> push, std::uint32_t groups_x, std::uint32_t groups_y);
    template <class Push>
    void run(const Push& push, std::uint32_t groups_x, std::uint32_t groups_y) {
        run(std::as_bytes(std::span(&push, 1)), groups_x, groups_y);
    }

    float max_anisotropy() const noexcept { return max_anisotropy_; }

private:
    void make_image(std::uint32_t width, std::uint32_t height, const MipLevels& levels,
                    VkFormat format);
    void make_samplers(const DeviceSampling& sampling, std::uint32_t level_count);
    void make_pipeline(std::span<const std::uint32_t> spirv, std::uint32_t push_bytes,
                       const char* name);

    VulkanContext& context_;
    VulkanLodProbe probe_;
    float max_anisotropy_ = 1;
    UniqueVkDeviceMemory memory_;  // members go in reverse: pipeline ... image, then memory
    UniqueVkImage image_;
    UniqueVkImageView view_;
    UniqueVkSampler anisotropic_;
    UniqueVkSampler isotropic_;
    UniqueVkDescriptorSetLayout set_layout_;
    UniqueVkDescriptorPool pool_;
    VkDescriptorSet set_ = VK_NULL_HANDLE;  // freed with the pool
    UniqueVkPipelineLayout layout_;
    UniqueVkPipeline pipeline_;
    std::uint32_t push_bytes_ = 0;
};

}  // namespace vtpage::test
