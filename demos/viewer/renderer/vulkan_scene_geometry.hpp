// A mesh scene on the device: its vertices, indices, instance and material records copied once
// into device-local buffers (through a staging buffer, waited for), and the draws that show it.
// The renderer draws it when a frame names it (FrameDesc::scene); it must outlive those frames.
#pragma once

#include <cstdint>
#include <vector>

#include "renderer/scene_gpu_layout.hpp"
#include "vtpage/interop/vulkan_buffer.hpp"

namespace vtpage {
class VulkanContext;
}

namespace vtpage::viewer {

class VulkanSceneGeometry {
public:
    // invalid_argument for empty vertices, indices, instances, materials or draws, a draw whose
    // indices, vertices or instance lie outside the data, an index that reaches past the
    // vertices from its draw's vertex offset, or an instance naming a material that is not there.
    VulkanSceneGeometry(VulkanContext& context, const SceneGeometryData& data);

    VkBuffer index_buffer() const noexcept { return indices_.get(); }
    VkDeviceAddress vertices() const noexcept { return vertices_.device_address(); }
    VkDeviceAddress instances() const noexcept { return instances_.device_address(); }
    VkDeviceAddress materials() const noexcept { return materials_.device_address(); }
    const std::vector<SceneGpuDraw>& draws() const noexcept { return draws_; }
    std::uint64_t bytes() const noexcept;  // device memory of the four buffers

private:
    VulkanBuffer vertices_;
    VulkanBuffer indices_;
    VulkanBuffer instances_;
    VulkanBuffer materials_;
    std::vector<SceneGpuDraw> draws_;
};

// The check of the constructor, without a device (tests).
void check_scene_geometry(const SceneGeometryData& data);

}  // namespace vtpage::viewer
