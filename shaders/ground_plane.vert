#version 460
// One plane of the scene: two triangles over plane_origin + [0, plane_extent.x] x
// [0, plane_extent.y] at y = 0, no vertex buffer.
#include "ground_plane_frame.glsl"

layout(location = 0) out vec2 out_uv;

void main() {
    const vec2 corners[6] = vec2[](vec2(0, 0), vec2(1, 0), vec2(1, 1),
                                   vec2(0, 0), vec2(1, 1), vec2(0, 1));
    const vec2 uv = corners[gl_VertexIndex];
    out_uv = uv;
    const vec2 xz = frame.plane_origin + uv * frame.plane_extent;
    gl_Position = frame.view_projection * vec4(xz.x, 0.0, xz.y, 1.0);
}
