// The SPIR-V of the viewer's mesh-scene shaders (shaders/scene*), compiled by glslc at build
// time and embedded here.
#pragma once

#include <cstdint>
#include <span>

namespace vtpage::viewer {

std::span<const std::uint32_t> scene_vertex_spirv();
std::span<const std::uint32_t> scene_fragment_spirv();
std::span<const std::uint32_t> scene_early_fragment_spirv();
std::span<const std::uint32_t> scene_reference_fragment_spirv();
std::span<const std::uint32_t> scene_feedback_vertex_spirv();
std::span<const std::uint32_t> scene_feedback_fragment_spirv();

}  // namespace vtpage::viewer
