#version 460
// The scene's colour pass through vtpage for draws that never discard (opaque and blended
// materials): depth tested before the shader runs, which the quality count's atomics would
// otherwise prevent, so that fragments a nearer surface hides are never shaded. Alpha-masked
// draws take scene.frag, whose discards must come before the depth write.
#define SCENE_EARLY_FRAGMENT_TESTS
#include "scene_fragment.glsl"
