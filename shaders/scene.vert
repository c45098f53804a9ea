#version 460
// The scene's colour pass vertex stage (scene_vertex.glsl).
#include "scene_vertex.glsl"
