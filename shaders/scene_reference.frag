#version 460
// The scene's colour pass through ordinary sampled images: the hardware reference
// (scene_fragment.glsl, VulkanReferenceTextures).
#define SCENE_REFERENCE
#include "scene_fragment.glsl"
