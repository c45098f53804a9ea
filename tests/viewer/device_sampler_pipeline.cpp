#include "device_sampler_pipeline.hpp"

#include <algorithm>
#include <cstring>

#include "vtpage/base/error.hpp"
#include "vtpage/interop/vulkan_barrier.hpp"
#include "vtpage/interop/vulkan_buffer.hpp"
#include "vtpage/interop/vulkan_error.hpp"
#include "vtpage/interop/vulkan_shader_module.hpp"

namespace vtpage::test {

DeviceSamplerPipeline::DeviceSamplerPipeline(VulkanContext& context, std::uint32_t width,
                                             std::uint32_t height, const MipLevels& levels,
                                             DeviceSampling sampling,
                                             std::span<const std::uint32_t> spirv,
                                             std::uint32_t push_bytes, const char* name)
    : context_(context), probe_(context), push_bytes_(push_bytes) {
    make_image(width, height, levels, sampling.format);
    make_samplers(sampling, std::uint32_t(levels.size()));
    make_pipeline(spirv, push_bytes, name);
}

void DeviceSamplerPipeline::make_image(std::uint32_t width, std::uint32_t height,
                                       const MipLevels& levels, VkFormat format) {
    const VkDevice device = context_.device();
    const auto level_count = std::uint32_t(levels.size());
    VkImageCreateInfo info{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
    info.imageType = VK_IMAGE_TYPE_2D;
    info.format = format;
    info.extent = {width, height, 1};
    info.mipLevels = level_count;
    info.arrayLayers = 1;
    info.samples = VK_SAMPLE_COUNT_1_BIT;
    info.tiling = VK_IMAGE_TILING_OPTIMAL;
    info.usage = VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_SAMPLED_BIT;
    VkImage image = VK_NULL_HANDLE;
    vk_check(vkCreateImage(device, &info, nullptr, &image), "DeviceSamplerPipeline",
             "vkCreateImage");
    image_ = UniqueVkImage(device, image);
    VkMemoryRequirements needs;
    vkGetImageMemoryRequirements(device, image, &needs);
    VkMemoryAllocateInfo allocate{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    allocate.allocationSize = needs.size;
    allocate.memoryTypeIndex =
        context_.memory_type(needs.memoryTypeBits, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    VkDeviceMemory memory = VK_NULL_HANDLE;
    vk_check(vkAllocateMemory(device, &allocate, nullptr, &memory), "DeviceSamplerPipeline",
             "vkAllocateMemory");
    memory_ = UniqueVkDeviceMemory(device, memory);
    vk_check(vkBindImageMemory(device, image, memory, 0), "DeviceSamplerPipeline",
             "vkBindImageMemory");

    // Every level through one staging buffer, one copy region each.
    std::size_t bytes = 0;
    for (const auto& level : levels) bytes += level.size() * 4;
    VulkanBuffer staging(context_, bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, BufferMemory::upload,
                         "device sampler levels");
    std::vector<VkBufferImageCopy> regions;
    std::size_t offset = 0;
    for (std::uint32_t m = 0; m < level_count; ++m) {
        std::memcpy(staging.mapped() + offset, levels[m].data(), levels[m].size() * 4);
        VkBufferImageCopy region{};
        region.bufferOffset = offset;
        region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, m, 0, 1};
        region.imageExtent = {std::max(1u, width >> m), std::max(1u, height >> m), 1};
        regions.push_back(region);
        offset += levels[m].size() * 4;
    }
    staging.flush();
    context_.run_commands([&](VkCommandBuffer commands) {
        record_image_barrier(commands, image, VK_IMAGE_LAYOUT_UNDEFINED,
                             VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_2_NONE, 0,
                             VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                             level_count);
        vkCmdCopyBufferToImage(commands, staging.get(), image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                               std::uint32_t(regions.size()), regions.data());
        record_image_barrier(commands, image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                             VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, VK_PIPELINE_STAGE_2_COPY_BIT,
                             VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                             VK_ACCESS_2_SHADER_SAMPLED_READ_BIT, level_count);
    });

    VkImageViewCreateInfo view{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
    view.image = image;
    view.viewType = VK_IMAGE_VIEW_TYPE_2D;
    view.format = info.format;
    view.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, level_count, 0, 1};
    VkImageView made = VK_NULL_HANDLE;
    vk_check(vkCreateImageView(device, &view, nullptr, &made), "DeviceSamplerPipeline",
             "vkCreateImageView");
    view_ = UniqueVkImageView(device, made);
}

void DeviceSamplerPipeline::make_samplers(const DeviceSampling& sampling,
                                          std::uint32_t level_count) {
    max_anisotropy_ = std::min(16.0f, context_.properties().limits.maxSamplerAnisotropy);
    VkSamplerCreateInfo info{VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO};
    info.magFilter = VK_FILTER_LINEAR;
    info.minFilter = VK_FILTER_LINEAR;
    info.mipmapMode = VK_SAMPLER_MIPMAP_MODE_LINEAR;
    info.addressModeU = sampling.address_u;
    info.addressModeV = sampling.address_v;
    info.addressModeW = sampling.address_v;
    info.maxLod = float(level_count - 1);
    const auto make = [&](bool anisotropic, UniqueVkSampler& out) {
        info.anisotropyEnable = anisotropic ? VK_TRUE : VK_FALSE;
        info.maxAnisotropy = anisotropic ? max_anisotropy_ : 1.0f;
        VkSampler sampler = VK_NULL_HANDLE;
        vk_check(vkCreateSampler(context_.device(), &info, nullptr, &sampler),
                 "DeviceSamplerPipeline", "vkCreateSampler");
        out = UniqueVkSampler(context_.device(), sampler);
    };
    make(true, anisotropic_);
    make(false, isotropic_);
}

void DeviceSamplerPipeline::make_pipeline(std::span<const std::uint32_t> spirv,
                                          std::uint32_t push_bytes, const char* name) {
    const VkDevice device = context_.device();
    VkDescriptorSetLayoutBinding bindings[3]{};
    for (std::uint32_t b = 0; b < 3; ++b) {
        bindings[b] = {b, VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 1, VK_SHADER_STAGE_COMPUTE_BIT,
                       nullptr};
    }
    VkDescriptorSetLayoutCreateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    set_info.bindingCount = 3;
    set_info.pBindings = bindings;
    VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
    vk_check(vkCreateDescriptorSetLayout(device, &set_info, nullptr, &set_layout), name,
             "vkCreateDescriptorSetLayout");
    set_layout_ = UniqueVkDescriptorSetLayout(device, set_layout);

    const VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 3};
    VkDescriptorPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pool_info.maxSets = 1;
    pool_info.poolSizeCount = 1;
    pool_info.pPoolSizes = &size;
    VkDescriptorPool pool = VK_NULL_HANDLE;
    vk_check(vkCreateDescriptorPool(device, &pool_info, nullptr, &pool), name,
             "vkCreateDescriptorPool");
    pool_ = UniqueVkDescriptorPool(device, pool);
    VkDescriptorSetAllocateInfo allocate{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    allocate.descriptorPool = pool;
    allocate.descriptorSetCount = 1;
    allocate.pSetLayouts = &set_layout;
    vk_check(vkAllocateDescriptorSets(device, &allocate, &set_), name, "vkAllocateDescriptorSets");
    const VkDescriptorImageInfo images[3] = {
        {anisotropic_.get(), view_.get(), VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL},
        {isotropic_.get(), view_.get(), VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL},
        probe_.descriptor_image_info()};
    VkWriteDescriptorSet write{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    write.dstSet = set_;
    write.descriptorCount = 3;
    write.descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
    write.pImageInfo = images;
    vkUpdateDescriptorSets(device, 1, &write, 0, nullptr);

    const VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
    VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_info.setLayoutCount = 1;
    layout_info.pSetLayouts = &set_layout;
    layout_info.pushConstantRangeCount = 1;
    layout_info.pPushConstantRanges = &range;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    vk_check(vkCreatePipelineLayout(device, &layout_info, nullptr, &layout), name,
             "vkCreatePipelineLayout");
    layout_ = UniqueVkPipelineLayout(device, layout);

    auto module = make_shader_module(context_, spirv, name);
    VkComputePipelineCreateInfo create{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    create.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    create.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    create.stage.module = module.get();
    create.stage.pName = "main";
    create.layout = layout;
    VkPipeline pipeline = VK_NULL_HANDLE;
    vk_check(vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &create, nullptr, &pipeline), name,
             "vkCreateComputePipelines");
    pipeline_ = UniqueVkPipeline(device, pipeline);
}

void DeviceSamplerPipeline::run(std::span<const std::byte> push, std::uint32_t groups_x,
                                std::uint32_t groups_y) {
    if (push.size() != push_bytes_) {
        throw Error(Errc::invalid_argument, "DeviceSamplerPipeline::run",
                    "push constants of another size than the pipeline's");
    }
    context_.run_commands([&](VkCommandBuffer commands) {
        vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_.get());
        vkCmdBindDescriptorSets(commands, VK_PIPELINE_BIND_POINT_COMPUTE, layout_.get(), 0, 1,
                                &set_, 0, nullptr);
        vkCmdPushConstants(commands, layout_.get(), VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes_,
                           push.data());
        vkCmdDispatch(commands, groups_x, groups_y, 1);
        record_memory_barrier(commands, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                              VK_ACCESS_2_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_2_HOST_BIT,
                              VK_ACCESS_2_HOST_READ_BIT);
    });
}

}  // namespace vtpage::test
