#version 460
// The scene's colour pass through vtpage (scene_fragment.glsl).
#include "scene_fragment.glsl"
