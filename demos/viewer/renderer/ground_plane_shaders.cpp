#include "renderer/ground_plane_shaders.hpp"

namespace vtpage::viewer {

namespace {
// glslc -mfmt=num writes the words as a comma-separated list.
constexpr std::uint32_t ground_plane_vert[] = {
#include "ground_plane.vert.spv.inc"
};
constexpr std::uint32_t ground_plane_frag[] = {
#include "ground_plane.frag.spv.inc"
};
constexpr std::uint32_t ground_plane_feedback_frag[] = {
#include "ground_plane_feedback.frag.spv.inc"
};
constexpr std::uint32_t ground_plane_sample_position_frag[] = {
#include "ground_plane_sample_position.frag.spv.inc"
};
constexpr std::uint32_t ground_plane_shade_comp[] = {
#include "ground_plane_shade.comp.spv.inc"
};
constexpr std::uint32_t identity_check_comp[] = {
#include "identity_check.comp.spv.inc"
};
}  // namespace

std::span<const std::uint32_t> ground_plane_vertex_spirv() { return ground_plane_vert; }
std::span<const std::uint32_t> ground_plane_fragment_spirv() { return ground_plane_frag; }
std::span<const std::uint32_t> ground_plane_feedback_fragment_spirv() {
    return ground_plane_feedback_frag;
}
std::span<const std::uint32_t> ground_plane_sample_position_fragment_spirv() {
    return ground_plane_sample_position_frag;
}
std::span<const std::uint32_t> ground_plane_shade_compute_spirv() {
    return ground_plane_shade_comp;
}
std::span<const std::uint32_t> identity_check_compute_spirv() { return identity_check_comp; }

}  // namespace vtpage::viewer
