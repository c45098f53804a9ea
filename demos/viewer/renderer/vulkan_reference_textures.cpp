#include "renderer/vulkan_reference_textures.hpp"

#include <algorithm>
#include <cstring>

#include "vtpage/interop/vulkan_barrier.hpp"
#include "vtpage/interop/vulkan_buffer.hpp"
#include "vtpage/interop/vulkan_context.hpp"
#include "vtpage/interop/vulkan_error.hpp"

namespace vtpage::viewer {

namespace {

constexpr const char* where = "VulkanReferenceTextures";

VkSamplerAddressMode address_mode(vt::AddressMode mode) {
    switch (mode) {
        case vt::AddressMode::repeat:
            return VK_SAMPLER_ADDRESS_MODE_REPEAT;
        case vt::AddressMode::mirrored_repeat:
            return VK_SAMPLER_ADDRESS_MODE_MIRRORED_REPEAT;
        case vt::AddressMode::clamp_to_edge:
            break;
    }
    return VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
}

}  // namespace

VulkanReferenceTextures::VulkanReferenceTextures(VulkanContext& context,
                                                 const std::vector<ReferenceTexture>& textures,
                                                 float max_anisotropy)
    : context_(context) {
    if (textures.empty()) throw Error(Errc::invalid_argument, where, "no textures");
    for (const ReferenceTexture& texture : textures) {
        const bool rgba8 =
            texture.format == VK_FORMAT_R8G8B8A8_UNORM || texture.format == VK_FORMAT_R8G8B8A8_SRGB;
        if (!rgba8 && !context.supports_texture_compression_bc()) {
            throw Error(Errc::not_supported, where,
                        "the device does not sample BC images (textureCompressionBC): the "
                        "reference cannot hold the baked tiles' formats");
        }
    }
    images_.resize(textures.size());
    for (std::size_t i = 0; i < textures.size(); ++i) {
        if (textures[i].levels.empty()) {
            throw Error(Errc::invalid_argument, where,
                        detail::concat("texture ", i, " has no levels"));
        }
        make_image(textures[i], images_[i]);
        make_sampler(textures[i], max_anisotropy, images_[i]);
    }
    upload(textures);
    make_set();
}

void VulkanReferenceTextures::make_image(const ReferenceTexture& texture, Image& image) {
    VkDevice device = context_.device();
    VkImageCreateInfo create{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
    create.imageType = VK_IMAGE_TYPE_2D;
    create.format = texture.format;
    create.extent = {texture.levels[0].width, texture.levels[0].height, 1};
    create.mipLevels = std::uint32_t(texture.levels.size());
    create.arrayLayers = 1;
    create.samples = VK_SAMPLE_COUNT_1_BIT;
    create.tiling = VK_IMAGE_TILING_OPTIMAL;
    create.usage = VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    create.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    VkImage raw = VK_NULL_HANDLE;
    vk_check(vkCreateImage(device, &create, nullptr, &raw), where, "vkCreateImage");
    image.image = UniqueVkImage(device, raw);
    VkMemoryRequirements requirements{};
    vkGetImageMemoryRequirements(device, raw, &requirements);
    VkMemoryAllocateInfo allocate{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    allocate.allocationSize = requirements.size;
    allocate.memoryTypeIndex =
        context_.memory_type(requirements.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    VkDeviceMemory memory = VK_NULL_HANDLE;
    vk_check(vkAllocateMemory(device, &allocate, nullptr, &memory), where, "vkAllocateMemory");
    image.memory = UniqueVkDeviceMemory(device, memory);
    vk_check(vkBindImageMemory(device, raw, memory, 0), where, "vkBindImageMemory");
    bytes_ += requirements.size;
    VkImageViewCreateInfo view{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
    view.image = raw;
    view.viewType = VK_IMAGE_VIEW_TYPE_2D;
    view.format = texture.format;
    view.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, create.mipLevels, 0, 1};
    VkImageView raw_view = VK_NULL_HANDLE;
    vk_check(vkCreateImageView(device, &view, nullptr, &raw_view), where, "vkCreateImageView");
    image.view = UniqueVkImageView(device, raw_view);
}

namespace {

// A level's place in the staging buffer: a multiple of every format's texel block (16 bytes).
constexpr std::uint64_t level_alignment = 16;
std::uint64_t aligned(std::uint64_t offset) {
    return (offset + level_alignment - 1) / level_alignment * level_alignment;
}

}  // namespace

// Every level of every image through one staging buffer, in one submission, waited for.
void VulkanReferenceTextures::upload(const std::vector<ReferenceTexture>& textures) {
    std::uint64_t total = 0;
    for (const ReferenceTexture& texture : textures) {
        for (const ReferenceLevel& level : texture.levels) total += aligned(level.bytes.size());
    }
    VulkanBuffer staging(context_, std::max<std::uint64_t>(total, 4),
                         VK_BUFFER_USAGE_TRANSFER_SRC_BIT, BufferMemory::upload,
                         "vtpage reference staging");
    std::vector<std::vector<VkBufferImageCopy>> copies(textures.size());
    std::uint64_t offset = 0;
    for (std::size_t i = 0; i < textures.size(); ++i) {
        for (std::uint32_t mip = 0; mip < textures[i].levels.size(); ++mip) {
            const ReferenceLevel& level = textures[i].levels[mip];
            std::memcpy(staging.mapped() + offset, level.bytes.data(), level.bytes.size());
            VkBufferImageCopy copy{};
            copy.bufferOffset = offset;
            copy.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, mip, 0, 1};
            copy.imageExtent = {level.width, level.height, 1};
            copies[i].push_back(copy);
            offset += aligned(level.bytes.size());
        }
    }
    staging.flush();
    context_.run_commands([&](VkCommandBuffer commands) {
        for (std::size_t i = 0; i < textures.size(); ++i) {
            const auto levels = std::uint32_t(copies[i].size());
            VkImage image = images_[i].image.get();
            record_image_barrier(commands, image, VK_IMAGE_LAYOUT_UNDEFINED,
                                 VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_2_NONE,
                                 VK_ACCESS_2_NONE, VK_PIPELINE_STAGE_2_COPY_BIT,
                                 VK_ACCESS_2_TRANSFER_WRITE_BIT, levels);
            vkCmdCopyBufferToImage(commands, staging.get(), image,
                                   VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, levels, copies[i].data());
            record_image_barrier(commands, image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                 VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
                                 VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                                 VK_PIPELINE_STAGE_2_FRAGMENT_SHADER_BIT,
                                 VK_ACCESS_2_SHADER_SAMPLED_READ_BIT, levels);
        }
    });
}

void VulkanReferenceTextures::make_sampler(const ReferenceTexture& texture, float max_anisotropy,
                                           Image& image) {
    VkSamplerCreateInfo create{VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO};
    create.magFilter = VK_FILTER_LINEAR;
    create.minFilter = VK_FILTER_LINEAR;
    create.mipmapMode = VK_SAMPLER_MIPMAP_MODE_LINEAR;
    create.addressModeU = address_mode(texture.sampling.address_u);
    create.addressModeV = address_mode(texture.sampling.address_v);
    create.addressModeW = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
    create.maxLod = VK_LOD_CLAMP_NONE;
    if (max_anisotropy > 1.0f && context_.supports_sampler_anisotropy()) {
        create.anisotropyEnable = VK_TRUE;
        create.maxAnisotropy =
            std::min(max_anisotropy, context_.properties().limits.maxSamplerAnisotropy);
    }
    VkSampler sampler = VK_NULL_HANDLE;
    vk_check(vkCreateSampler(context_.device(), &create, nullptr, &sampler), where,
             "vkCreateSampler");
    image.sampler = UniqueVkSampler(context_.device(), sampler);
}

void VulkanReferenceTextures::make_set() {
    std::vector<VkDescriptorImageInfo> infos;
    for (const Image& image : images_) {
        infos.push_back(
            {image.sampler.get(), image.view.get(), VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL});
    }
    set_.emplace(context_, 0, infos, VK_SHADER_STAGE_FRAGMENT_BIT, where);
}

}  // namespace vtpage::viewer
