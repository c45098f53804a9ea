// A scene material sampled through vtpage and shaded: each slot's virtual texture at the slot's
// transformed uv (wrap modes and sRGB decode come from the texture's descriptor), or, for the
// slots that are layers of the material's stack, the stack sampled once at their common
// transformed uv; a fixed sun and sky, and the glTF metallic-roughness model kept simple.
// Include after scene_frame.glsl and vtpage/virtual_texture.glsl, in a fragment shader.

const vec3 scene_sun_direction = vec3(0.36, 0.86, 0.36);  // normalised, towards the sun
const vec3 scene_sun_colour = vec3(0.84);
const vec3 scene_sky_colour = vec3(0.55, 0.62, 0.75);

#ifdef SCENE_REFERENCE
// The hardware reference: texture id i is element i of this array (VulkanReferenceTextures, set
// 1), an image of the same levels and formats whose sampler has the texture's address modes.
layout(constant_id = 0) const uint scene_reference_count = 1u;
layout(set = 1, binding = 0) uniform sampler2D scene_reference_textures[scene_reference_count];
#endif

// A fragment's surface and its screen derivatives, taken once before any branch (derivatives
// need every pixel of the quad).
struct SceneSurface {
    vec3 world;
    vec3 normal;
    vec2 uv;
    vec2 duv_dx;
    vec2 duv_dy;
    vec3 dp_dx;
    vec3 dp_dy;
};

SceneSurface scene_surface(vec3 world, vec3 normal, vec2 uv) {
    return SceneSurface(world, normal, uv, dFdx(uv), dFdy(uv), dFdx(world), dFdy(world));
}

// The slot's texture sampled (linear values); `fallback` where the material has none.
vec4 scene_sample(SceneMaterial m, uint slot, SceneSurface s, vec4 fallback,
                  out VtSampleInfo info) {
    info.wanted_mip = 0u;
    info.resident_mip = 0u;
    if (!scene_has_texture(m, slot)) return fallback;
#ifdef SCENE_REFERENCE
    // The same for every fragment of a draw (its material's): dynamically uniform.
    return textureGrad(scene_reference_textures[m.textures[slot]],
                       scene_transform_uv(m, slot, s.uv),
                       scene_transform_derivative(m, slot, s.duv_dx),
                       scene_transform_derivative(m, slot, s.duv_dy));
#endif
    VtTexture t = vt_texture(frame.directory, frame.indirection, m.textures[slot]);
    return vt_sample_grad_aniso_info(
        t, scene_transform_uv(m, slot, s.uv), scene_transform_derivative(m, slot, s.duv_dx),
        scene_transform_derivative(m, slot, s.duv_dy), frame.lod_bias, frame.max_anisotropy, info);
}

vec4 scene_sample(SceneMaterial m, uint slot, SceneSurface s, vec4 fallback) {
    VtSampleInfo info;
    return scene_sample(m, slot, s, fallback, info);
}

// The material's stack sampled once, every layer at the stack's uv (its slots' common
// transform); zero where the material has none, and in the reference, which samples each slot's
// own texture.
VtStackSample scene_sample_stack(SceneMaterial m, SceneSurface s, out VtSampleInfo info) {
    info.wanted_mip = 0u;
    info.resident_mip = 0u;
#ifdef SCENE_REFERENCE
    return vt_stack_filled(vec4(0.0));
#else
    if (!scene_has_stack(m)) return vt_stack_filled(vec4(0.0));
    VtTexture t = vt_texture(frame.directory, frame.indirection, m.stack);
    const uint slot = m.stack_slot;
    return vt_stack_sample_grad_aniso_info(
        t, scene_transform_uv(m, slot, s.uv), scene_transform_derivative(m, slot, s.duv_dx),
        scene_transform_derivative(m, slot, s.duv_dy), frame.lod_bias, frame.max_anisotropy, info);
#endif
}

// The slot's value: its layer of the stack sample where it is one (through vtpage), otherwise
// its own texture sampled; `info` is the stack's or the slot's sample.
vec4 scene_slot_value(SceneMaterial m, uint slot, SceneSurface s, vec4 fallback,
                      VtStackSample stack, VtSampleInfo stack_info, out VtSampleInfo info) {
#ifndef SCENE_REFERENCE
    if (scene_in_stack(m, slot)) {
        info = stack_info;
        return stack.layer[m.stack_layers[slot]];
    }
#endif
    return scene_sample(m, slot, s, fallback, info);
}

vec4 scene_slot_value(SceneMaterial m, uint slot, SceneSurface s, vec4 fallback,
                      VtStackSample stack, VtSampleInfo stack_info) {
    VtSampleInfo info;
    return scene_slot_value(m, slot, s, fallback, stack, stack_info, info);
}

// The normal map's tangent-space normal (BC5: x and y stored, z rebuilt; `sampled` is the
// normal slot's value) turned into world space by the frame that the position's and uv's screen
// derivatives span (no stored tangents).
vec3 scene_mapped_normal(SceneMaterial m, vec3 normal, SceneSurface s, vec4 sampled) {
    if (!scene_has_texture(m, 1u)) return normal;
    const vec2 xy = sampled.xy * 2.0 - 1.0;
    const vec3 tangent_normal = vec3(xy, sqrt(max(1.0 - dot(xy, xy), 0.0)));
    const vec3 across_y = cross(s.dp_dy, normal), across_x = cross(normal, s.dp_dx);
    const vec3 t = across_y * s.duv_dx.x + across_x * s.duv_dy.x;
    const vec3 b = across_y * s.duv_dx.y + across_x * s.duv_dy.y;
    const float largest = max(dot(t, t), dot(b, b));
    if (!(largest > 0.0)) return normal;  // a degenerate uv mapping: the surface's normal
    const float scale = inversesqrt(largest);
    return normalize(mat3(t * scale, b * scale, normal) * tangent_normal);
}

// The material's linear colour and alpha at this fragment; `info` is the base colour's sample
// (the stack's where the base colour is one of its layers).
vec4 scene_shade(SceneMaterial m, SceneSurface s, vec3 eye, out VtSampleInfo info) {
    VtSampleInfo stack_info;
    const VtStackSample stack = scene_sample_stack(m, s, stack_info);
    const vec4 base =
        m.base_colour * scene_slot_value(m, 0u, s, vec4(1.0), stack, stack_info, info);
    vec3 n = normalize(s.normal);
    const vec3 to_eye = normalize(eye - s.world);
    if (dot(n, to_eye) < 0.0) n = -n;  // the back of a face lit as its front
    if (scene_has_texture(m, 1u)) {
        n = scene_mapped_normal(
            m, n, s, scene_slot_value(m, 1u, s, vec4(0.5, 0.5, 1.0, 1.0), stack, stack_info));
    }
    const vec4 mr = scene_slot_value(m, 2u, s, vec4(1.0), stack, stack_info);
    const float roughness = clamp(m.roughness_cutoff.x * mr.g, 0.04, 1.0);
    const float metallic = clamp(m.emissive_metallic.w * mr.b, 0.0, 1.0);
    const float occlusion = scene_slot_value(m, 3u, s, vec4(1.0), stack, stack_info).r;
    const vec3 emissive = m.emissive_metallic.rgb * scene_sample(m, 4u, s, vec4(1.0)).rgb;

    const vec3 diffuse_colour = base.rgb * (1.0 - metallic);
    const vec3 specular_colour = mix(vec3(0.04), base.rgb, metallic);
    const float n_dot_l = max(dot(n, scene_sun_direction), 0.0);
    const vec3 half_vector = normalize(scene_sun_direction + to_eye);
    const float r4 = max(roughness * roughness * roughness * roughness, 1e-4);
    const float shininess = 2.0 / r4 - 2.0;
    const float specular = pow(max(dot(n, half_vector), 0.0), shininess) * (shininess + 8.0) / 25.0;
    const vec3 direct = (diffuse_colour + specular_colour * specular) * n_dot_l * scene_sun_colour;
    const vec3 ambient = (diffuse_colour + specular_colour * 0.25) * scene_sky_colour * occlusion;
    return vec4(direct + ambient * 0.5 + emissive, base.a);
}
