#include "renderer/scene_shaders.hpp"

namespace vtpage::viewer {

namespace {
// glslc -mfmt=num writes the words as a comma-separated list.
constexpr std::uint32_t scene_vert[] = {
#include "scene.vert.spv.inc"
};
constexpr std::uint32_t scene_frag[] = {
#include "scene.frag.spv.inc"
};
constexpr std::uint32_t scene_early_frag[] = {
#include "scene_early.frag.spv.inc"
};
constexpr std::uint32_t scene_reference_frag[] = {
#include "scene_reference.frag.spv.inc"
};
constexpr std::uint32_t scene_feedback_vert[] = {
#include "scene_feedback.vert.spv.inc"
};
constexpr std::uint32_t scene_feedback_frag[] = {
#include "scene_feedback.frag.spv.inc"
};
}  // namespace

std::span<const std::uint32_t> scene_vertex_spirv() { return scene_vert; }
std::span<const std::uint32_t> scene_fragment_spirv() { return scene_frag; }
std::span<const std::uint32_t> scene_early_fragment_spirv() { return scene_early_frag; }
std::span<const std::uint32_t> scene_reference_fragment_spirv() { return scene_reference_frag; }
std::span<const std::uint32_t> scene_feedback_vertex_spirv() { return scene_feedback_vert; }
std::span<const std::uint32_t> scene_feedback_fragment_spirv() { return scene_feedback_frag; }

}  // namespace vtpage::viewer
