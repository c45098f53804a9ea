// The push constants and the scene data of the viewer's mesh pipelines (VulkanRenderer drawing a
// glTF scene; the C++ side is demos/viewer/renderer/scene_gpu_layout.hpp and
// ScenePushConstants in vulkan_scene_pipeline.hpp).
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_buffer_reference : require

struct SceneVertex {
    vec3 position;
    float u;
    vec3 normal;
    float v;
};

struct SceneInstance {
    mat4 world;
    mat4 normal;
    uvec4 material;  // x
};

struct SceneMaterial {
    vec4 base_colour;
    vec4 emissive_metallic;
    vec4 roughness_cutoff;
    uint textures[5];  // base colour, normal, metallic-roughness, occlusion, emissive
    uint alpha_mode;   // 0 opaque, 1 mask, 2 blend
    uint double_sided;
    uint stack;           // the material stack some slots are layers of, or scene_no_texture
    vec4 transforms[10];  // two rows of a 2 x 3 uv transform per slot
    uint stack_layers[5];  // each slot's layer in the stack, or scene_no_layer
    uint stack_slot;       // the slot whose uv transform the stack is sampled with
    uint unused[2];
};

layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer SceneVertices {
    SceneVertex vertices[];
};
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer SceneInstances {
    SceneInstance instances[];
};
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer SceneMaterials {
    SceneMaterial materials[];
};

layout(push_constant, std430) uniform Frame {
    mat4 view_projection;  // world -> clip (Vulkan: y down, depth 0..1)
    uint64_t indirection;  // VulkanIndirectionTable::device_address()
    uint64_t directory;    // VulkanTextureDirectory::device_address()
    uint64_t vertices;     // SceneVertices
    uint64_t instances;    // SceneInstances
    uint64_t materials;    // SceneMaterials
    float lod_bias;        // -log2(downscale) in the feedback pass
    uint mode;             // 0 textured, 1 residency overlay, 2 mip overlay
    float max_anisotropy;  // 1: trilinear; up to 16: anisotropic
    uint frame_number;     // turns which slot a feedback pixel asks for
    uint64_t quality;      // SceneQualityBins, zeroed before the colour pass; 0: not counted
}
frame;

const uint scene_no_texture = 0xffffffffu;
const uint scene_no_layer = 0xffffffffu;

bool scene_has_texture(SceneMaterial m, uint slot) { return m.textures[slot] != scene_no_texture; }

// Whether this pipeline draws materials' stacks (ScenePipelines): false in the pipelines for draws
// without one, so that their shaders leave the stack path out (its registers and code).
layout(constant_id = 1) const bool scene_stacks_drawn = true;

// Whether the material has a stack this pipeline draws.
bool scene_has_stack(SceneMaterial m) {
    return scene_stacks_drawn && m.stack != scene_no_texture;
}

// Whether the slot is drawn through the material's stack (vtpage only: the reference samples
// each slot's own texture).
bool scene_in_stack(SceneMaterial m, uint slot) {
    return scene_has_stack(m) && m.stack_layers[slot] != scene_no_layer;
}

vec2 scene_transform_uv(SceneMaterial m, uint slot, vec2 uv) {
    const vec4 row0 = m.transforms[slot * 2u];
    const vec4 row1 = m.transforms[slot * 2u + 1u];
    return vec2(dot(row0.xy, uv) + row0.z, dot(row1.xy, uv) + row1.z);
}

// The derivatives of a transformed uv: the transform's linear part applied to uv's.
vec2 scene_transform_derivative(SceneMaterial m, uint slot, vec2 d) {
    return vec2(dot(m.transforms[slot * 2u].xy, d), dot(m.transforms[slot * 2u + 1u].xy, d));
}

#ifdef VT_FRAGMENT_SHADER
// The device's level of detail (a VulkanLodProbe, set 0) where scene_lod_from_device: vtpage's
// isotropic samples then filter between the levels, with the weights, that the reference's
// images do in the same place (virtual_texture.glsl, VT_LOD_PROBE).
layout(set = 0, binding = 0) uniform sampler2D scene_lod_probe;
layout(constant_id = 2) const bool scene_lod_from_device = true;
#define VT_LOD_PROBE scene_lod_probe
#define VT_LOD_PROBE_ENABLED scene_lod_from_device
#endif
