#include "vtpage/interop/vulkan_lod_probe.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "vtpage/interop/vulkan_barrier.hpp"
#include "vtpage/interop/vulkan_buffer.hpp"
#include "vtpage/interop/vulkan_context.hpp"
#include "vtpage/interop/vulkan_error.hpp"

namespace vtpage {

namespace {

constexpr const char* where = "VulkanLodProbe";
constexpr VkFormat probe_format = VK_FORMAT_R16_SFLOAT;  // linear filtering is guaranteed

// Small whole numbers as IEEE half floats: exponent and the bits below the leading one.
std::uint16_t half_of(std::uint32_t value) {
    if (value == 0) return 0;
    std::uint32_t exponent = 0;
    while ((value >> (exponent + 1)) != 0) ++exponent;
    const std::uint32_t mantissa = (value << (10 - exponent)) & 0x3ffu;
    return std::uint16_t(((exponent + 15) << 10) | mantissa);
}

}  // namespace

VulkanLodProbe::VulkanLodProbe(VulkanContext& context, std::uint32_t binding, VkExtent2D extent) {
    constexpr std::uint32_t largest = 1u << 15;
    if (extent.width == 0 || extent.height == 0 || extent.width > largest ||
        extent.height > largest) {
        throw Error(Errc::invalid_argument, where,
                    detail::concat("an extent of ", extent.width, " x ", extent.height, " (1 to ",
                                   largest, " a side)"));
    }
    while ((std::max(extent.width, extent.height) >> levels_) != 0) ++levels_;
    image_ = VulkanImage(context, extent, probe_format,
                         VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT,
                         "vtpage level-of-detail probe", levels_);
    make_sampler(context);
    fill(context);
    const VkDescriptorImageInfo image = descriptor_image_info();
    set_.emplace(context, binding, std::span(&image, 1),
                 VK_SHADER_STAGE_FRAGMENT_BIT | VK_SHADER_STAGE_COMPUTE_BIT, where);
}

void VulkanLodProbe::make_sampler(VulkanContext& context) {
    VkDevice device = context.device();
    // Trilinear, clamped, no anisotropy and no clamp of the level beyond the image's own.
    VkSamplerCreateInfo sampler{VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO};
    sampler.magFilter = VK_FILTER_LINEAR;
    sampler.minFilter = VK_FILTER_LINEAR;
    sampler.mipmapMode = VK_SAMPLER_MIPMAP_MODE_LINEAR;
    sampler.addressModeU = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
    sampler.addressModeV = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
    sampler.addressModeW = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
    sampler.maxLod = VK_LOD_CLAMP_NONE;
    VkSampler raw_sampler = VK_NULL_HANDLE;
    vk_check(vkCreateSampler(device, &sampler, nullptr, &raw_sampler), where, "vkCreateSampler");
    sampler_ = UniqueVkSampler(device, raw_sampler);
}

// Level i holds i in every texel.
void VulkanLodProbe::fill(VulkanContext& context) {
    std::vector<std::uint16_t> texels;
    std::vector<VkBufferImageCopy> copies;
    for (std::uint32_t level = 0; level < levels_; ++level) {
        const std::uint32_t width = std::max(1u, image_.extent().width >> level);
        const std::uint32_t height = std::max(1u, image_.extent().height >> level);
        VkBufferImageCopy copy{};
        copy.bufferOffset = texels.size() * sizeof(std::uint16_t);
        copy.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, level, 0, 1};
        copy.imageExtent = {width, height, 1};
        copies.push_back(copy);
        texels.insert(texels.end(), std::size_t(width) * height, half_of(level));
    }
    const std::uint64_t bytes = texels.size() * sizeof(std::uint16_t);
    VulkanBuffer staging(context, bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, BufferMemory::upload,
                         "vtpage level-of-detail probe staging");
    std::memcpy(staging.mapped(), texels.data(), bytes);
    staging.flush();
    context.run_commands([&](VkCommandBuffer commands) {
        VkImage image = image_.get();
        record_image_barrier(commands, image, VK_IMAGE_LAYOUT_UNDEFINED,
                             VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_2_NONE,
                             VK_ACCESS_2_NONE, VK_PIPELINE_STAGE_2_COPY_BIT,
                             VK_ACCESS_2_TRANSFER_WRITE_BIT, levels_);
        vkCmdCopyBufferToImage(commands, staging.get(), image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                               levels_, copies.data());
        record_image_barrier(
            commands, image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
            VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, VK_PIPELINE_STAGE_2_COPY_BIT,
            VK_ACCESS_2_TRANSFER_WRITE_BIT,
            VK_PIPELINE_STAGE_2_FRAGMENT_SHADER_BIT | VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
            VK_ACCESS_2_SHADER_SAMPLED_READ_BIT, levels_);
    });
}

VkDescriptorImageInfo VulkanLodProbe::descriptor_image_info() const noexcept {
    return {sampler_.get(), image_.view(), VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL};
}

}  // namespace vtpage
