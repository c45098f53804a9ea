// Every physical page of a PagePool imported into Vulkan exactly once: when the pool creates the
// page, as a 2 MiB storage buffer with a 64-bit device address; and freed when the pool destroys
// the page. A recycled page keeps its import, so committing and evicting never touch Vulkan.
//
//   VulkanPageImporter importer(context, backend);
//   PageTableSettings table_settings;
//   importer.attach(table_settings.pool);   // before the pool exists
//   PageTable table(backend, table_settings);
//   ... importer.device_address(mapping.physical.slot) ...
//
// How a page enters Vulkan:
//   - opaque_fd (cuda backend): backend.export_fd(handle) imported with VkImportMemoryFdInfoKHR;
//     a successful import owns the fd, a failed one leaves it to us (closed at once).
//   - host_pointer (host backend; lavapipe refuses a memfd as OPAQUE_FD): the page's memory
//     imported with VK_EXT_external_memory_host, from the page's pool window when the pool maps
//     windows, else from the importer's own mapping of the page's exported memfd (kept until the
//     page is forgotten, so the import never outlives its memory).
//
// Forgetting a page waits for the work submitted so far to finish (VulkanContext::
// wait_for_submitted: the queue lock is held only to submit a marker, so frames go on being
// submitted) before freeing, since frames in flight may still read it: once per batch that the pool
// releases together (its on_destroying), so that a trim of hundreds of pages (a governor giving
// memory back) waits once, not once a page. A forget listener (the indirection table) hears of
// each page first, so that no later frame can reach it.
//
// The importer must outlive the pool it is attached to. All members are thread-safe: the pool
// calls from its workers.
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>

#include "vtpage/base/log.hpp"
#include "vtpage/core/latency_histogram.hpp"
#include "vtpage/core/page_pool.hpp"

namespace vtpage {

class Backend;
class VulkanContext;

enum class PageImportMethod { automatic, host_pointer, opaque_fd };

struct VulkanPageImporterSettings {
    // automatic: opaque_fd on a GPU backend, host_pointer on the host backend.
    PageImportMethod method = PageImportMethod::automatic;
    // The pool's page size; 0: the backend's minimum granularity (what PagePool uses).
    std::size_t page_size = 0;
    // Usage of each page's buffer (storage, device address and transfers by default).
    VkBufferUsageFlags buffer_usage =
        VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT |
        VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    Log log;
};

// One imported page.
struct ImportedPage {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkDeviceAddress address = 0;  // the page's first byte, for the shaders
};

struct VulkanPageImporterStatistics {
    std::size_t imported_pages = 0;  // now
    std::uint64_t imports = 0;
    std::uint64_t forgets = 0;
    LatencySummary import_latency;  // export (fd) or mapping (host) + buffer + import + bind
    LatencySummary forget_latency;  // the queue wait included
};

class VulkanPageImporter {
public:
    // not_supported when the device lacks the extension the method needs.
    VulkanPageImporter(VulkanContext& context, Backend& backend,
                       VulkanPageImporterSettings settings = {});
    // Frees every page still imported (after the queue drains).
    ~VulkanPageImporter();
    VulkanPageImporter(const VulkanPageImporter&) = delete;
    VulkanPageImporter& operator=(const VulkanPageImporter&) = delete;

    PageImportMethod method() const noexcept;
    std::size_t page_size() const noexcept;

    // Chains import_page / forget_page into the pool's on_created / on_destroyed, keeping the
    // callbacks already set there: a page is imported before theirs runs (and forgotten again
    // if theirs throws), and forgotten before theirs runs on destruction.
    void attach(PagePoolSettings& pool);

    // Imports one page; invalid_argument when its slot is imported already, or (host_pointer)
    // when the page has neither a window nor an exportable fd. Errors of the driver come back
    // as they are (VK_ERROR_INVALID_EXTERNAL_HANDLE -> invalid_handle...).
    void import_page(const PooledPage& page);
    // Frees a page's import (see above); a slot not imported is logged and ignored. Never
    // throws: it runs where the pool releases pages.
    void forget_page(const PooledPage& page) noexcept;
    // Before a batch of forget_page calls (the pool's on_destroying): one queue wait for all.
    void prepare_forget(std::span<const PooledPage> pages) noexcept;

    // 0 / nothing when the slot is not imported.
    VkDeviceAddress device_address(std::uint32_t slot) const;
    std::optional<ImportedPage> find(std::uint32_t slot) const;
    std::size_t imported_count() const;
    VulkanPageImporterStatistics statistics() const;

    // Called with the slot at the start of forget_page (or of prepare_forget for a batch),
    // once the import is out of the table, before the queue wait. One listener
    // (the indirection table); an empty function removes it.
    void set_forget_listener(std::function<void(std::uint32_t slot)> listener);

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace vtpage
