#include "vtpage/interop/vulkan_sampler_set.hpp"

#include "vtpage/interop/vulkan_context.hpp"
#include "vtpage/interop/vulkan_error.hpp"

namespace vtpage {

VulkanSamplerSet::VulkanSamplerSet(VulkanContext& context, std::uint32_t binding,
                                   std::span<const VkDescriptorImageInfo> images,
                                   VkShaderStageFlags stages, const char* name) {
    if (images.empty()) throw Error(Errc::invalid_argument, name, "no images for the set");
    VkDevice device = context.device();
    const auto count = std::uint32_t(images.size());
    VkDescriptorSetLayoutBinding entry{};
    entry.binding = binding;
    entry.descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
    entry.descriptorCount = count;
    entry.stageFlags = stages;
    VkDescriptorSetLayoutCreateInfo layout{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    layout.bindingCount = 1;
    layout.pBindings = &entry;
    VkDescriptorSetLayout raw_layout = VK_NULL_HANDLE;
    vk_check(vkCreateDescriptorSetLayout(device, &layout, nullptr, &raw_layout), name,
             "vkCreateDescriptorSetLayout");
    layout_ = UniqueVkDescriptorSetLayout(device, raw_layout);
    const VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, count};
    VkDescriptorPoolCreateInfo pool{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pool.maxSets = 1;
    pool.poolSizeCount = 1;
    pool.pPoolSizes = &size;
    VkDescriptorPool raw_pool = VK_NULL_HANDLE;
    vk_check(vkCreateDescriptorPool(device, &pool, nullptr, &raw_pool), name,
             "vkCreateDescriptorPool");
    pool_ = UniqueVkDescriptorPool(device, raw_pool);
    VkDescriptorSetAllocateInfo allocate{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    allocate.descriptorPool = raw_pool;
    allocate.descriptorSetCount = 1;
    allocate.pSetLayouts = &raw_layout;
    vk_check(vkAllocateDescriptorSets(device, &allocate, &set_), name, "vkAllocateDescriptorSets");
    VkWriteDescriptorSet write{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    write.dstSet = set_;
    write.dstBinding = binding;
    write.descriptorCount = count;
    write.descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
    write.pImageInfo = images.data();
    vkUpdateDescriptorSets(device, 1, &write, 0, nullptr);
}

}  // namespace vtpage
