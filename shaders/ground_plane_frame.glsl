// The push constants of the viewer's ground-plane pipelines (VulkanRenderer; the C++ side is
// GroundPlanePushConstants in demos/viewer/renderer/vulkan_ground_plane_pipeline.hpp).
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

layout(push_constant, std430) uniform Frame {
    mat4 view_projection;   // world -> clip (Vulkan: y down, depth 0..1)
    uint64_t indirection;   // VulkanIndirectionTable::device_address()
    uint64_t directory;     // VulkanTextureDirectory::device_address()
    vec2 plane_extent;      // the plane covers origin + [0, extent.x] x [0, extent.y] in x and
                            // z, uv = (xz - origin) / plane_extent
    vec2 plane_origin;      // the plane's corner at uv (0, 0): one draw per plane of a scene
    uint texture_id;        // the plane's texture
    float lod_bias;         // -log2(downscale) in the feedback pass
    uint mode;              // 0 textured, 1 residency overlay, 2 mip overlay
    float max_anisotropy;   // 1: trilinear; up to 16: anisotropic, in the image and the feedback
} frame;
