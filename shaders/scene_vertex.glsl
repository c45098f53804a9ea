// The scene's vertex stage (scene.vert, scene_feedback.vert): a mesh instance's vertices pulled
// by index from the scene's vertex buffer, placed by the instance's world transform
// (gl_InstanceIndex is the draw's instance record). The feedback pass needs only the uv and the
// material (SCENE_FEEDBACK), and a vertex stage writes nothing its fragment stage leaves unread.
#include "scene_frame.glsl"

#ifndef SCENE_FEEDBACK
layout(location = 0) out vec3 out_world;
layout(location = 1) out vec3 out_normal;
layout(location = 4) flat out vec3 out_eye;
#endif
layout(location = 2) out vec2 out_uv;
layout(location = 3) flat out uint out_material;

void main() {
    SceneVertex vertex = SceneVertices(frame.vertices).vertices[gl_VertexIndex];
    SceneInstance instance = SceneInstances(frame.instances).instances[gl_InstanceIndex];
    // precise: no fused or reordered arithmetic, so that the depth pre-pass and the colour pass
    // (pipelines of their own) compute the very same depth for the same vertex.
    precise const vec4 world = instance.world * vec4(vertex.position, 1.0);
    out_uv = vec2(vertex.u, vertex.v);
    out_material = instance.material.x;
    precise const vec4 position = frame.view_projection * world;
    gl_Position = position;
#ifndef SCENE_FEEDBACK
    out_world = world.xyz;
    out_normal = mat3(instance.normal) * vertex.normal;
    // The camera's position: the point the view-projection sends to (0, 0, c, 0).
    const vec4 eye = inverse(frame.view_projection) * vec4(0.0, 0.0, 1.0, 0.0);
    out_eye = eye.xyz / eye.w;
#endif
}
