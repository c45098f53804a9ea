#include "vulkan_test_support.hpp"

#include <cstdlib>
#include <cstring>

#include "../support/backend_fixture.hpp"
#include "vtpage/interop/vulkan_buffer.hpp"
#include "vtpage/interop/vulkan_error.hpp"

namespace vtpage::test {

namespace {

// One bare instance for the life of the test process, so that the Vulkan loader keeps the
// driver loaded between the tests' contexts. NVIDIA's driver 580 (headless) refuses the 30th
// instance of a process whose earlier instances were all destroyed (VK_ERROR_INCOMPATIBLE_DRIVER:
// the loader unloads and reloads it each time; docs/gpu.md), and a test binary makes a context
// per test. With one instance kept, 200 create-and-destroy cycles passed.
class DriverKeeper {
public:
    DriverKeeper() {
        VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
        app.pApplicationName = "vtpage tests: keeps the driver loaded";
        app.apiVersion = VK_API_VERSION_1_3;
        VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
        info.pApplicationInfo = &app;
        if (vkCreateInstance(&info, nullptr, &instance_) != VK_SUCCESS) instance_ = VK_NULL_HANDLE;
    }
    ~DriverKeeper() {
        if (instance_) vkDestroyInstance(instance_, nullptr);
    }
    DriverKeeper(const DriverKeeper&) = delete;
    DriverKeeper& operator=(const DriverKeeper&) = delete;

private:
    VkInstance instance_ = VK_NULL_HANDLE;
};

}  // namespace

void keep_vulkan_driver_loaded() { static DriverKeeper keeper; }

ValidationMode test_validation_mode() {
    const char* value = std::getenv("VTPAGE_TEST_VALIDATION");
    if (!value || std::strcmp(value, "required") == 0) return ValidationMode::required;
    if (std::strcmp(value, "optional") == 0) return ValidationMode::if_available;
    if (std::strcmp(value, "off") == 0) return ValidationMode::off;
    ADD_FAILURE() << "VTPAGE_TEST_VALIDATION must be required, optional or off, not " << value;
    return ValidationMode::required;
}

std::unique_ptr<VulkanContext> try_make_vulkan_context(const Backend& backend, std::string& reason,
                                                       VulkanContextSettings base) {
    keep_vulkan_driver_loaded();
    base.validation = test_validation_mode();
    base.synchronization_validation = true;
    base.application_name = "vtpage tests";
    base.log = Log(stderr_log(LogLevel::warning));
    try {
        return std::make_unique<VulkanContext>(
            VulkanContextSettings::for_backend(backend, std::move(base)));
    } catch (const Error& error) {
        if (error.code() != Errc::device_unavailable) throw;
        reason = error.what();
        return nullptr;
    }
}

UniqueVkCommandPool make_command_pool(VulkanContext& context) {
    VkCommandPoolCreateInfo info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    info.queueFamilyIndex = context.queue_family();
    VkCommandPool pool = VK_NULL_HANDLE;
    vk_check(vkCreateCommandPool(context.device(), &info, nullptr, &pool), "make_command_pool",
             "vkCreateCommandPool");
    return UniqueVkCommandPool(context.device(), pool);
}

std::vector<std::uint8_t> read_buffer(VulkanContext& context, VkBuffer buffer, VkDeviceSize offset,
                                      VkDeviceSize size) {
    VulkanBuffer readback(context, size, VK_BUFFER_USAGE_TRANSFER_DST_BIT, BufferMemory::readback,
                          "test readback");
    context.run_commands([&](VkCommandBuffer commands) {
        VkBufferCopy region{offset, 0, size};
        vkCmdCopyBuffer(commands, buffer, readback.get(), 1, &region);
        record_memory_barrier(commands, VK_PIPELINE_STAGE_2_COPY_BIT,
                              VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_HOST_BIT,
                              VK_ACCESS_2_HOST_READ_BIT);
    });
    readback.invalidate();
    std::vector<std::uint8_t> bytes(size);
    std::memcpy(bytes.data(), readback.mapped(), size);
    return bytes;
}

void expect_no_validation_messages(const VulkanContext& context) {
    const ValidationMessageCounts counts = context.validation_messages();
    EXPECT_EQ(counts.errors, 0u) << "validation errors (printed above)";
    EXPECT_EQ(counts.warnings, 0u) << "validation warnings (printed above)";
    if (test_validation_mode() == ValidationMode::required) {
        EXPECT_TRUE(context.validation_enabled());
    }
}

void HostVulkanTest::SetUp() {
    backend_ = try_make_backend("host", skip_reason_);
    if (!backend_) GTEST_SKIP() << skip_reason_;
    context_ = try_make_vulkan_context(*backend_, skip_reason_);
    if (!context_) GTEST_SKIP() << "no Vulkan device: " << skip_reason_;
}

void HostVulkanTest::TearDown() {
    if (context_) expect_no_validation_messages(*context_);
}

}  // namespace vtpage::test
