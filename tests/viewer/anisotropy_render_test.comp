#version 460
// The renderer of vulkan_anisotropy_test.cpp: anisotropy_render.glsl as it is.
#include "anisotropy_render.glsl"
