#include "renderer/vulkan_scene_geometry.hpp"

#include <cstring>
#include <span>

#include "vtpage/base/error.hpp"
#include "vtpage/interop/vulkan_context.hpp"

namespace vtpage::viewer {

namespace {

[[noreturn]] void refuse(const std::string& what) {
    throw Error(Errc::invalid_argument, "VulkanSceneGeometry", what);
}

template <typename T>
VulkanBuffer device_copy(VulkanContext& context, std::span<const T> items, VkBufferUsageFlags usage,
                         const char* name) {
    const VkDeviceSize bytes = items.size_bytes();
    VulkanBuffer staging(context, bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, BufferMemory::upload,
                         "vtpage scene staging");
    std::memcpy(staging.mapped(), items.data(), bytes);
    staging.flush();
    VulkanBuffer buffer(context, bytes, usage | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                        BufferMemory::device_local, name);
    context.run_commands([&](VkCommandBuffer commands) {
        const VkBufferCopy region{0, 0, bytes};
        vkCmdCopyBuffer(commands, staging.get(), buffer.get(), 1, &region);
    });
    return buffer;
}

}  // namespace

void check_scene_geometry(const SceneGeometryData& data) {
    if (data.vertices.empty() || data.indices.empty() || data.instances.empty() ||
        data.materials.empty() || data.draws.empty()) {
        refuse("a scene needs vertices, indices, instances, materials and draws");
    }
    for (const SceneGpuInstance& instance : data.instances) {
        if (instance.material >= data.materials.size()) {
            refuse(detail::concat("an instance names material ", instance.material, " of ",
                                  data.materials.size()));
        }
    }
    for (const SceneGpuDraw& draw : data.draws) {
        const std::uint64_t end = std::uint64_t(draw.first_index) + draw.index_count;
        if (draw.index_count == 0 || draw.index_count % 3 != 0 || end > data.indices.size() ||
            draw.vertex_offset < 0 || std::uint64_t(draw.vertex_offset) >= data.vertices.size() ||
            draw.instance >= data.instances.size()) {
            refuse(detail::concat("a draw of indices [", draw.first_index, ", ", end,
                                  ") at vertex ", draw.vertex_offset, " of instance ",
                                  draw.instance, " lies outside the scene's ", data.indices.size(),
                                  " indices, ", data.vertices.size(), " vertices and ",
                                  data.instances.size(), " instances"));
        }
        // The shaders pull vertices[index + vertex_offset] by address, without bounds.
        for (std::uint64_t i = draw.first_index; i < end; ++i) {
            if (std::uint64_t(draw.vertex_offset) + data.indices[i] >= data.vertices.size()) {
                refuse(detail::concat("index ", data.indices[i], " of a draw at vertex ",
                                      draw.vertex_offset, " reaches past the scene's ",
                                      data.vertices.size(), " vertices"));
            }
        }
    }
}

VulkanSceneGeometry::VulkanSceneGeometry(VulkanContext& context, const SceneGeometryData& data)
    : draws_(data.draws) {
    check_scene_geometry(data);
    for (SceneGpuDraw& draw : draws_) {
        const SceneGpuMaterial& material = data.materials[data.instances[draw.instance].material];
        draw.stacked = material.stack != scene_no_texture;
        draw.masked = material.alpha_mode == 1;
    }
    const VkBufferUsageFlags addressed =
        VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
    vertices_ = device_copy(context, std::span(data.vertices), addressed, "vtpage scene vertices");
    indices_ = device_copy(context, std::span(data.indices), VK_BUFFER_USAGE_INDEX_BUFFER_BIT,
                           "vtpage scene indices");
    instances_ =
        device_copy(context, std::span(data.instances), addressed, "vtpage scene instances");
    materials_ =
        device_copy(context, std::span(data.materials), addressed, "vtpage scene materials");
}

std::uint64_t VulkanSceneGeometry::bytes() const noexcept {
    return vertices_.size() + indices_.size() + instances_.size() + materials_.size();
}

}  // namespace vtpage::viewer
