// DeviceCopier of a build without CUDA: the arena is ordinary memory, a copy is a memcpy.
#include <cstdlib>
#include <cstring>
#include <vector>

#include "device_copy.hpp"
#include "vtpage/base/error.hpp"

namespace vtpage::bench::disk {

struct DeviceCopier::State {
    DeviceCopySettings settings;
    std::string description = "host memory (memcpy; built without CUDA)";
    std::string host_reason = "built without CUDA";
    std::vector<std::byte> arena;
};

DeviceCopier::DeviceCopier(DeviceCopySettings settings) : state_(std::make_unique<State>()) {
    if (settings.backend == "cuda") {
        throw Error(Errc::device_unavailable, "DeviceCopier", "built without CUDA");
    }
    if (settings.backend != "auto" && settings.backend != "host") {
        throw Error(Errc::invalid_argument, "DeviceCopier", "unknown backend " + settings.backend);
    }
    state_->settings = settings;
    state_->arena.resize(settings.arena_pages * settings.page_bytes);
}

DeviceCopier::~DeviceCopier() = default;

bool DeviceCopier::on_device() const noexcept { return false; }
const std::string& DeviceCopier::description() const noexcept { return state_->description; }
const std::string& DeviceCopier::host_reason() const noexcept { return state_->host_reason; }
std::size_t DeviceCopier::streams() const noexcept { return state_->settings.streams; }

HostBuffer DeviceCopier::allocate_staging(std::size_t bytes) const {
    const std::size_t rounded = (bytes + 4095) / 4096 * 4096;
    auto* memory = static_cast<std::byte*>(std::aligned_alloc(4096, rounded));
    if (!memory) throw Error(Errc::out_of_memory, "allocate_staging", "aligned_alloc failed");
    return HostBuffer(memory, [](std::byte* p) { std::free(p); });
}

void DeviceCopier::copy(std::size_t, std::size_t arena_page, const std::byte* source, std::size_t) {
    const std::size_t page_bytes = state_->settings.page_bytes;
    const std::size_t slot = arena_page % state_->settings.arena_pages;
    std::memcpy(state_->arena.data() + slot * page_bytes, source, page_bytes);
}

void DeviceCopier::wait(std::size_t) {}
void DeviceCopier::synchronize() {}

}  // namespace vtpage::bench::disk
