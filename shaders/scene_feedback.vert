#version 460
// The scene's feedback pass vertex stage: uv and material only (scene_vertex.glsl).
#define SCENE_FEEDBACK
#include "scene_vertex.glsl"
