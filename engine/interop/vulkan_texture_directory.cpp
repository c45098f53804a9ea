#include "vtpage/interop/vulkan_texture_directory.hpp"

#include <algorithm>
#include <mutex>
#include <vector>

#include "vtpage/interop/vulkan_barrier.hpp"
#include "vtpage/interop/vulkan_buffer.hpp"
#include "vtpage/interop/vulkan_command_label.hpp"
#include "vtpage/interop/vulkan_context.hpp"
#include "vtpage/interop/vulkan_error.hpp"

namespace vtpage {

struct VulkanTextureDirectory::State {
    explicit State(const VulkanContext& c) : context(c) {}
    const VulkanContext& context;  // for its command labels
    VulkanTextureDirectorySettings settings;
    VulkanBuffer buffer;
    mutable std::mutex mutex;
    std::vector<VulkanTextureInfo> textures;
    std::uint32_t dirty_begin = 0;  // the range of ids changed since the last upload
    std::uint32_t dirty_end = 0;
};

VulkanTextureDirectory::VulkanTextureDirectory(VulkanContext& context,
                                               VulkanTextureDirectorySettings settings)
    : state_(std::make_unique<State>(context)) {
    State& s = *state_;
    s.settings = settings;
    if (settings.max_textures == 0) {
        throw Error(Errc::invalid_argument, "VulkanTextureDirectory", "max_textures is 0");
    }
    s.textures.resize(settings.max_textures);
    s.buffer = VulkanBuffer(
        context, VkDeviceSize(settings.max_textures) * sizeof(VulkanTextureInfo),
        VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT |
            VK_BUFFER_USAGE_TRANSFER_DST_BIT,
        BufferMemory::device_local, "vtpage texture directory");
    s.dirty_begin = 0;  // the first upload writes every entry (zeros where unset)
    s.dirty_end = settings.max_textures;
}

VulkanTextureDirectory::~VulkanTextureDirectory() = default;

VkDeviceAddress VulkanTextureDirectory::device_address() const noexcept {
    return state_->buffer.device_address();
}
std::uint32_t VulkanTextureDirectory::max_textures() const noexcept {
    return state_->settings.max_textures;
}

void VulkanTextureDirectory::set(std::uint32_t id, std::uint32_t base_page,
                                 std::uint32_t size_log2) {
    if (size_log2 > vt::max_size_log2) {
        throw Error(Errc::out_of_range, "VulkanTextureDirectory::set",
                    detail::concat("sizes go up to 2^", vt::max_size_log2),
                    detail::concat("id=", id, " size_log2=", size_log2));
    }
    set(id, base_page, vt::TextureShape::square(size_log2));
}

namespace {

void check_sampling(std::uint32_t id, vt::TextureShape shape, vt::TextureSampling sampling) {
    if (vt::sampling_valid(sampling, shape)) return;
    throw Error(
        Errc::invalid_argument, "VulkanTextureDirectory::set",
        "address modes are clamp_to_edge, repeat or mirrored_repeat; sRGB is for rgba8, "
        "bc1 and bc3 (a stack's sRGB layers too, its first layer's bit its colour space)",
        detail::concat("id=", id, " address_u=", std::uint32_t(sampling.address_u),
                       " address_v=", std::uint32_t(sampling.address_v), " color_space=",
                       std::uint32_t(sampling.color_space), " srgb_layers=", sampling.srgb_layers,
                       " format=", std::uint32_t(shape.format), " stack=", shape.stack.packed));
}

}  // namespace

void VulkanTextureDirectory::set(std::uint32_t id, std::uint32_t base_page, vt::TextureShape shape,
                                 vt::TextureSampling sampling) {
    State& s = *state_;
    if (id >= s.settings.max_textures || !shape.valid()) {
        throw Error(Errc::out_of_range, "VulkanTextureDirectory::set",
                    detail::concat("ids go up to ", s.settings.max_textures - 1, ", sides up to ",
                                   vt::max_size, " texels, in a known format"),
                    detail::concat("id=", id, " width=", shape.width, " height=", shape.height,
                                   " srgb_layers=", sampling.srgb_layers, " format=",
                                   std::uint32_t(shape.format), " stack=", shape.stack.packed));
    }
    check_sampling(id, shape, sampling);
    const VulkanTextureInfo info = VulkanTextureInfo::make(base_page, shape, sampling);
    if (std::uint64_t(base_page) + vt::TextureLayout(shape).page_count > UINT32_MAX) {
        throw Error(Errc::out_of_range, "VulkanTextureDirectory::set",
                    "the texture's pages go beyond 32-bit page indices",
                    detail::concat("base_page=", base_page, " width=", shape.width,
                                   " height=", shape.height));
    }
    std::lock_guard lock(s.mutex);
    s.textures[id] = info;
    if (s.dirty_begin == s.dirty_end) {
        s.dirty_begin = id;
        s.dirty_end = id + 1;
    } else {
        s.dirty_begin = std::min(s.dirty_begin, id);
        s.dirty_end = std::max(s.dirty_end, id + 1);
    }
}

VulkanTextureInfo VulkanTextureDirectory::get(std::uint32_t id) const {
    std::lock_guard lock(state_->mutex);
    if (id >= state_->textures.size()) {
        throw Error(Errc::out_of_range, "VulkanTextureDirectory::get", "no such texture id",
                    detail::concat("id=", id));
    }
    return state_->textures[id];
}

void VulkanTextureDirectory::record_upload(VkCommandBuffer commands) {
    State& s = *state_;
    std::vector<VulkanTextureInfo> changed;
    std::uint32_t first = 0;
    {
        std::lock_guard lock(s.mutex);
        if (s.dirty_begin == s.dirty_end) return;
        first = s.dirty_begin;
        changed.assign(s.textures.begin() + s.dirty_begin, s.textures.begin() + s.dirty_end);
        s.dirty_begin = s.dirty_end = 0;
    }
    const VulkanCommandLabel label(s.context, commands, "vtpage texture directory upload");
    constexpr VkPipelineStageFlags2 shader_stages = VK_PIPELINE_STAGE_2_VERTEX_SHADER_BIT |
                                                    VK_PIPELINE_STAGE_2_FRAGMENT_SHADER_BIT |
                                                    VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT;
    record_memory_barrier(commands, shader_stages, 0, VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT,
                          VK_ACCESS_2_TRANSFER_WRITE_BIT);
    // vkCmdUpdateBuffer takes at most 65536 bytes per call.
    const std::size_t per_call = 65536 / sizeof(VulkanTextureInfo);
    for (std::size_t i = 0; i < changed.size(); i += per_call) {
        const std::size_t count = std::min(per_call, changed.size() - i);
        vkCmdUpdateBuffer(commands, s.buffer.get(), (first + i) * sizeof(VulkanTextureInfo),
                          count * sizeof(VulkanTextureInfo), changed.data() + i);
    }
    record_memory_barrier(commands, VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT,
                          VK_ACCESS_2_TRANSFER_WRITE_BIT, shader_stages,
                          VK_ACCESS_2_SHADER_STORAGE_READ_BIT);
}

}  // namespace vtpage
