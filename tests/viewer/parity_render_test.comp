#version 460
// The renderer of vulkan_image_parity_test.cpp: parity_render.glsl as it is.
#include "parity_render.glsl"
