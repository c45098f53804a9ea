// What the Vulkan tests share: a context made for a backend with the validation layer on (or the
// test skipped, with the reason, where there is no Vulkan device), a check that the layer said
// nothing, and small helpers to read device memory back.
//
// VTPAGE_TEST_VALIDATION=required (default) | optional | off chooses the validation mode; with
// "required" a missing layer fails the test with a message saying how to provide it.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vtpage/backend/backend.hpp"
#include "vtpage/interop/vulkan_barrier.hpp"
#include "vtpage/interop/vulkan_context.hpp"
#include "vtpage/interop/vulkan_handle.hpp"

namespace vtpage::test {

// Keeps one Vulkan instance for the life of the process (the first call makes it), so that the
// driver is not unloaded and reloaded between tests (see vulkan_test_support.cpp).
void keep_vulkan_driver_loaded();

ValidationMode test_validation_mode();

// A context for `backend` (VulkanContextSettings::for_backend), or nullptr and the reason when
// this machine has no fitting Vulkan device. Other failures are thrown.
std::unique_ptr<VulkanContext> try_make_vulkan_context(const Backend& backend, std::string& reason,
                                                       VulkanContextSettings base = {});

// A command pool on the context's queue family, for tests that record and submit their own
// command buffers (vtpage::Error when it cannot be made).
UniqueVkCommandPool make_command_pool(VulkanContext& context);

// Copies `size` bytes of a buffer to the host (a one-off submission).
std::vector<std::uint8_t> read_buffer(VulkanContext& context, VkBuffer buffer, VkDeviceSize offset,
                                      VkDeviceSize size);

// Fails the current test when the validation layer reported warnings or errors.
void expect_no_validation_messages(const VulkanContext& context);

// The base of the suites that run shaders on the host backend's Vulkan device: SetUp makes
// backend_ and context_, or skips the test with the reason; TearDown fails the test when the
// validation layer said anything. A suite that sets up more calls HostVulkanTest::SetUp() first
// and returns if IsSkipped().
class HostVulkanTest : public testing::Test {
protected:
    void SetUp() override;
    void TearDown() override;

    std::string skip_reason_;
    std::unique_ptr<Backend> backend_;
    std::unique_ptr<VulkanContext> context_;
};

}  // namespace vtpage::test

// In a test body or SetUp: makes `variable` (a std::unique_ptr<VulkanContext>) or skips.
#define VTPAGE_VULKAN_OR_SKIP(variable, backend, ...)                   \
    std::string variable##_skip_reason;                                 \
    auto variable = ::vtpage::test::try_make_vulkan_context(            \
        backend, variable##_skip_reason __VA_OPT__(, ) __VA_ARGS__);    \
    if (!variable) {                                                    \
        GTEST_SKIP() << "no Vulkan device for the " << (backend).name() \
                     << " backend: " << variable##_skip_reason;         \
    }                                                                   \
    static_assert(true)
