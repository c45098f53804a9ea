#version 460
// parity_render.glsl made wrong on purpose (VT_TEST_WRONG_WRAP: a repeating axis clamped):
// vulkan_image_parity_test.cpp expects it to fail a gate that the right one passes.
#define VT_TEST_WRONG_WRAP
#include "parity_render.glsl"
