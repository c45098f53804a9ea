#version 460
// anisotropy_render.glsl made wrong on purpose (VT_TEST_WRONG_LEVEL): vulkan_anisotropy_test.cpp
// expects it to fail the gate that the right one passes.
#define VT_TEST_WRONG_LEVEL
#include "anisotropy_render.glsl"
