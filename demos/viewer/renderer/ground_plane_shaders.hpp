// The SPIR-V of the viewer's ground-plane shaders (shaders/ground_plane*) and of its identity
// check (shaders/identity_check.comp), compiled by glslc at build time and embedded here.
#pragma once

#include <cstdint>
#include <span>

namespace vtpage::viewer {

std::span<const std::uint32_t> ground_plane_vertex_spirv();
std::span<const std::uint32_t> ground_plane_fragment_spirv();
std::span<const std::uint32_t> ground_plane_feedback_fragment_spirv();
std::span<const std::uint32_t> ground_plane_sample_position_fragment_spirv();
std::span<const std::uint32_t> ground_plane_shade_compute_spirv();
std::span<const std::uint32_t> identity_check_compute_spirv();

}  // namespace vtpage::viewer
