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

VulkanLodProbe::VulkanLodProbe(VulkanContext& context, std::uint32_t binding, VkExtent2D extent)
    : extent_(extent) {
    constexpr std::uint32_t largest = 1u << 15;
    if (extent.width == 0 || extent.height == 0 || extent.width > largest ||
        extent.height > largest) {
        throw Error(Errc::invalid_argument, where,
                    detail::concat("an extent of ", extent.width, " x ", extent.height, " (1 to ",
                                   largest, " a side)"));
    }
    while ((std::max(extent.width, extent.height) >> levels_) != 0) ++levels_;
    make_image(context);
    make_sampler(context);
    fill(context);
    make_set(context, binding);
}

void VulkanLodProbe::make_image(VulkanContext& context) {
    VkDevice device = context.device();
    VkImageCreateInfo create{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
    create.imageType = VK_IMAGE_TYPE_2D;
    create.format = probe_format;
    create.extent = {extent_.width, extent_.height, 1};
    create.mipLevels = levels_;
    create.arrayLayers = 1;
    create.samples = VK_SAMPLE_COUNT_1_BIT;
    create.tiling = VK_IMAGE_TILING_OPTIMAL;
    create.usage = VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    create.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    VkImage raw = VK_NULL_HANDLE;
    vk_check(vkCreateImage(device, &create, nullptr, &raw), where, "vkCreateImage");
    image_ = UniqueVkImage(device, raw);
    context.set_name(VK_OBJECT_TYPE_IMAGE, reinterpret_cast<std::uint64_t>(raw),
                     "vtpage level-of-detail probe");
    VkMemoryRequirements requirements{};
    vkGetImageMemoryRequirements(device, raw, &requirements);
    VkMemoryAllocateInfo allocate{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    allocate.allocationSize = requirements.size;
    allocate.memoryTypeIndex =
        context.memory_type(requirements.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    VkDeviceMemory memory = VK_NULL_HANDLE;
    vk_check(vkAllocateMemory(device, &allocate, nullptr, &memory), where, "vkAllocateMemory");
    memory_ = UniqueVkDeviceMemory(device, memory);
    vk_check(vkBindImageMemory(device, raw, memory, 0), where, "vkBindImageMemory");

    VkImageViewCreateInfo view{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
    view.image = raw;
    view.viewType = VK_IMAGE_VIEW_TYPE_2D;
    view.format = probe_format;
    view.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, levels_, 0, 1};
    VkImageView raw_view = VK_NULL_HANDLE;
    vk_check(vkCreateImageView(device, &view, nullptr, &raw_view), where, "vkCreateImageView");
    view_ = UniqueVkImageView(device, raw_view);
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
        const std::uint32_t width = std::max(1u, extent_.width >> level);
        const std::uint32_t height = std::max(1u, extent_.height >> level);
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

void VulkanLodProbe::make_set(VulkanContext& context, std::uint32_t binding) {
    VkDevice device = context.device();
    VkDescriptorSetLayoutBinding entry{};
    entry.binding = binding;
    entry.descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
    entry.descriptorCount = 1;
    entry.stageFlags = VK_SHADER_STAGE_FRAGMENT_BIT | VK_SHADER_STAGE_COMPUTE_BIT;
    VkDescriptorSetLayoutCreateInfo layout{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    layout.bindingCount = 1;
    layout.pBindings = &entry;
    VkDescriptorSetLayout raw_layout = VK_NULL_HANDLE;
    vk_check(vkCreateDescriptorSetLayout(device, &layout, nullptr, &raw_layout), where,
             "vkCreateDescriptorSetLayout");
    set_layout_ = UniqueVkDescriptorSetLayout(device, raw_layout);
    const VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 1};
    VkDescriptorPoolCreateInfo pool{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pool.maxSets = 1;
    pool.poolSizeCount = 1;
    pool.pPoolSizes = &size;
    VkDescriptorPool raw_pool = VK_NULL_HANDLE;
    vk_check(vkCreateDescriptorPool(device, &pool, nullptr, &raw_pool), where,
             "vkCreateDescriptorPool");
    pool_ = UniqueVkDescriptorPool(device, raw_pool);
    VkDescriptorSetAllocateInfo allocate{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    allocate.descriptorPool = raw_pool;
    allocate.descriptorSetCount = 1;
    allocate.pSetLayouts = &raw_layout;
    vk_check(vkAllocateDescriptorSets(device, &allocate, &set_), where, "vkAllocateDescriptorSets");
    const VkDescriptorImageInfo info = descriptor_image_info();
    VkWriteDescriptorSet write{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    write.dstSet = set_;
    write.dstBinding = binding;
    write.descriptorCount = 1;
    write.descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
    write.pImageInfo = &info;
    vkUpdateDescriptorSets(device, 1, &write, 0, nullptr);
}

VkDescriptorImageInfo VulkanLodProbe::descriptor_image_info() const noexcept {
    return {sampler_.get(), view_.get(), VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL};
}

}  // namespace vtpage
