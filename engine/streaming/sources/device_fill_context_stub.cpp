// DeviceFillContext in a build without CUDA: it cannot be made.
#include "vtpage/streaming/sources/device_fill_context.hpp"

namespace vtpage::vt {

bool device_fills_built() noexcept { return false; }

struct DeviceFillContext::State {};

DeviceFillContext::DeviceFillContext(int device) {
    throw Error(Errc::device_unavailable, "DeviceFillContext", "vtpage was built without CUDA",
                detail::concat("device=", device));
}
DeviceFillContext::~DeviceFillContext() = default;
int DeviceFillContext::device() const noexcept { return 0; }
CudaStream DeviceFillContext::stream() const noexcept { return nullptr; }
void DeviceFillContext::make_current() const {}
void DeviceFillContext::reserve_staging(std::size_t) {}
void DeviceFillContext::begin_batch() {}
std::byte* DeviceFillContext::staging(std::size_t) { return nullptr; }
void DeviceFillContext::copy_to_device(DeviceAddress, const std::byte*, std::size_t) {}
DeviceAddress DeviceFillContext::scratch(std::size_t) { return 0; }
void DeviceFillContext::copy_on_device(DeviceAddress, DeviceAddress, std::size_t) {}
std::uint64_t DeviceFillContext::end_batch() { return 0; }
bool DeviceFillContext::finished(std::uint64_t) { return true; }
void DeviceFillContext::wait(std::uint64_t) {}
void DeviceFillContext::synchronize() {}
bool DeviceFillContext::idle() const { return true; }

}  // namespace vtpage::vt
