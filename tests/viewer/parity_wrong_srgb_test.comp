#version 460
// parity_render.glsl made wrong on purpose (VT_TEST_WRONG_SRGB: sRGB decoded after filtering):
// vulkan_image_parity_test.cpp expects it to fail a gate that the right one passes.
#define VT_TEST_WRONG_SRGB
#include "parity_render.glsl"
