#include "interop/vulkan_shaders.hpp"

namespace vtpage::interop_detail {

namespace {
// glslc -mfmt=num writes the words as a comma-separated list.
constexpr std::uint32_t indirection_scatter_comp[] = {
#include "indirection_scatter.comp.spv.inc"
};
}  // namespace

std::span<const std::uint32_t> indirection_scatter_compute_spirv() {
    return indirection_scatter_comp;
}

}  // namespace vtpage::interop_detail
