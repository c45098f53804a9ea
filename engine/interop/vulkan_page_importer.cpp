#include "vtpage/interop/vulkan_page_importer.hpp"

#include <sys/mman.h>

#include <atomic>
#include <cerrno>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "vtpage/backend/backend.hpp"
#include "vtpage/base/system_error.hpp"
#include "vtpage/interop/vulkan_context.hpp"
#include "vtpage/interop/vulkan_error.hpp"
#include "vtpage/interop/vulkan_handle.hpp"

namespace vtpage {

namespace {

std::string_view method_name(PageImportMethod method) {
    switch (method) {
        case PageImportMethod::automatic:
            return "automatic";
        case PageImportMethod::host_pointer:
            return "host_pointer";
        case PageImportMethod::opaque_fd:
            return "opaque_fd";
    }
    return "?";
}

// A writable mapping of a page that the importer made through the backend and takes down
// itself. (Not an mmap of an exported fd: the host backend seals exported pages against new
// writable mappings; the backend's own mappings keep write access.)
struct OwnMapping {
    Backend* backend = nullptr;
    DeviceAddress address = 0;
    std::size_t size = 0;
    bool mapped = false;
    OwnMapping() = default;
    OwnMapping(Backend& b, std::size_t s) : backend(&b), address(b.reserve(s)), size(s) {}
    OwnMapping(OwnMapping&& other) noexcept
        : backend(other.backend),
          address(std::exchange(other.address, 0)),
          size(other.size),
          mapped(other.mapped) {}
    OwnMapping& operator=(OwnMapping&& other) noexcept {
        if (this != &other) {
            reset();
            backend = other.backend;
            address = std::exchange(other.address, 0);
            size = other.size;
            mapped = other.mapped;
        }
        return *this;
    }
    ~OwnMapping() { reset(); }
    void reset() noexcept {
        if (!backend || !address) return;
        try {
            if (mapped) backend->unmap(address, size);
            backend->free_reservation(address, size);
        } catch (...) {
            // Nothing to do about it here: the range stays reserved.
        }
        address = 0;
    }
};

// One imported page. Members go in reverse order: the buffer, then the memory, then the
// mapping the memory was imported from.
struct Import {
    OwnMapping mapping;
    UniqueVkDeviceMemory memory;
    UniqueVkBuffer buffer;
    VkDeviceAddress address = 0;
};

}  // namespace

struct VulkanPageImporter::State {
    VulkanContext& context;
    Backend& backend;
    VulkanPageImporterSettings settings;
    PageImportMethod method = PageImportMethod::automatic;
    std::size_t page_size = 0;
    bool dedicated_only = false;  // opaque_fd imports need a dedicated allocation

    mutable std::mutex mutex;
    std::vector<std::unique_ptr<Import>> imports;  // by slot
    std::size_t imported = 0;
    std::uint64_t import_count = 0;
    std::uint64_t forget_count = 0;
    LatencyHistogram import_latency;
    LatencyHistogram forget_latency;
    std::function<void(std::uint32_t)> forget_listener;
    // Imports out of the table whose forget_page is to come (prepare_forget), and those of
    // them whose queue wait is done: their forget_page frees at once.
    std::unordered_map<std::uint32_t, std::unique_ptr<Import>> retiring;
    std::unordered_set<std::uint32_t> drained;
    // Set once a queue wait ran out of time: the device is not finishing its work (a lost or
    // wedged device), so the pages still to forget are freed without waiting each its own
    // deadline again (512 pages would take 85 minutes at 10 s each).
    std::atomic<bool> queue_stuck{false};
    std::atomic<bool> queue_stuck_logged{false};

    State(VulkanContext& c, Backend& b, VulkanPageImporterSettings s)
        : context(c), backend(b), settings(std::move(s)) {}

    // A slot's import out of the table, counted as forgotten.
    std::unique_ptr<Import> take_import_nolock(std::uint32_t slot) {
        --imported;
        ++forget_count;
        return std::move(imports[slot]);
    }

    VkExternalMemoryHandleTypeFlagBits handle_type() const {
        return method == PageImportMethod::opaque_fd
                   ? VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT
                   : VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
    }

    UniqueVkBuffer make_buffer(const std::string& arguments) const {
        VkExternalMemoryBufferCreateInfo external{
            VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO};
        external.handleTypes = handle_type();
        VkBufferCreateInfo create{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, &external};
        create.size = page_size;
        create.usage = settings.buffer_usage;
        create.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
        VkBuffer raw = VK_NULL_HANDLE;
        vk_check(vkCreateBuffer(context.device(), &create, nullptr, &raw),
                 "VulkanPageImporter::import_page", "vkCreateBuffer", arguments);
        return UniqueVkBuffer(context.device(), raw);
    }

    std::unique_ptr<Import> import_host_pointer(const PooledPage& page,
                                                const std::string& arguments);
    std::unique_ptr<Import> import_opaque_fd(const PooledPage& page, const std::string& arguments);
    void finish(Import& import, const std::string& arguments) const;
};

std::unique_ptr<Import> VulkanPageImporter::State::import_host_pointer(
    const PooledPage& page, const std::string& arguments) {
    auto import = std::make_unique<Import>();
    void* pointer = reinterpret_cast<void*>(page.window);
    if (!pointer) {
        // No window: map the page ourselves, for exactly as long as the import lives.
        OwnMapping own(backend, page_size);
        backend.map(own.address, page_size, page.handle, 0);
        own.mapped = true;
        backend.set_access(own.address, page_size, Access::read_write);
        pointer = reinterpret_cast<void*>(own.address);
        import->mapping = std::move(own);
    }
    const VkDeviceSize alignment = context.host_pointer_alignment();
    if (alignment == 0 || reinterpret_cast<std::uintptr_t>(pointer) % alignment != 0 ||
        page_size % alignment != 0) {
        throw Error(Errc::invalid_argument, "VulkanPageImporter::import_page",
                    detail::concat("the page's memory is not aligned to the device's host pointer "
                                   "alignment of ",
                                   alignment, " bytes"),
                    arguments);
    }
    VkMemoryHostPointerPropertiesEXT properties{
        VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT};
    vk_check(context.functions().get_memory_host_pointer_properties(
                 context.device(), VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT, pointer,
                 &properties),
             "VulkanPageImporter::import_page", "vkGetMemoryHostPointerPropertiesEXT", arguments);
    import->buffer = make_buffer(arguments);
    VkMemoryRequirements requirements{};
    vkGetBufferMemoryRequirements(context.device(), import->buffer.get(), &requirements);
    const std::uint32_t type =
        context.memory_type(requirements.memoryTypeBits & properties.memoryTypeBits, 0);

    VkImportMemoryHostPointerInfoEXT host{VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT};
    host.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
    host.pHostPointer = pointer;
    VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO, &host};
    flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    VkMemoryAllocateInfo allocate{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &flags};
    allocate.allocationSize = page_size;
    allocate.memoryTypeIndex = type;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    vk_check(vkAllocateMemory(context.device(), &allocate, nullptr, &memory),
             "VulkanPageImporter::import_page", "vkAllocateMemory (host pointer)", arguments);
    import->memory = UniqueVkDeviceMemory(context.device(), memory);
    finish(*import, arguments);
    return import;
}

std::unique_ptr<Import> VulkanPageImporter::State::import_opaque_fd(const PooledPage& page,
                                                                    const std::string& arguments) {
    auto import = std::make_unique<Import>();
    import->buffer = make_buffer(arguments);
    VkMemoryRequirements requirements{};
    vkGetBufferMemoryRequirements(context.device(), import->buffer.get(), &requirements);
    if (requirements.size > page_size) {
        throw Error(Errc::not_supported, "VulkanPageImporter::import_page",
                    detail::concat("a buffer over one page needs ", requirements.size,
                                   " bytes of memory; the page has ", page_size),
                    arguments);
    }
    const std::uint32_t type =
        context.memory_type(requirements.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    UniqueFd fd = backend.export_fd(page.handle);
    VkImportMemoryFdInfoKHR fd_info{VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR};
    fd_info.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    fd_info.fd = fd.get();
    VkMemoryDedicatedAllocateInfo dedicated{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO,
                                            &fd_info};
    dedicated.buffer = import->buffer.get();
    VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
    flags.pNext = dedicated_only ? static_cast<const void*>(&dedicated) : &fd_info;
    flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    VkMemoryAllocateInfo allocate{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &flags};
    allocate.allocationSize = page_size;
    allocate.memoryTypeIndex = type;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    vk_check(vkAllocateMemory(context.device(), &allocate, nullptr, &memory),
             "VulkanPageImporter::import_page", "vkAllocateMemory (opaque fd)", arguments);
    fd.release();  // a successful import owns the fd; a failed one left it to us (closed above)
    import->memory = UniqueVkDeviceMemory(context.device(), memory);
    finish(*import, arguments);
    return import;
}

void VulkanPageImporter::State::finish(Import& import, const std::string& arguments) const {
    vk_check(vkBindBufferMemory(context.device(), import.buffer.get(), import.memory.get(), 0),
             "VulkanPageImporter::import_page", "vkBindBufferMemory", arguments);
    VkBufferDeviceAddressInfo info{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
    info.buffer = import.buffer.get();
    import.address = vkGetBufferDeviceAddress(context.device(), &info);
    if (import.address == 0) {
        throw Error(Errc::backend_failure, "VulkanPageImporter::import_page",
                    "the imported page has no device address", arguments);
    }
}

VulkanPageImporter::VulkanPageImporter(VulkanContext& context, Backend& backend,
                                       VulkanPageImporterSettings settings)
    : state_(std::make_unique<State>(context, backend, std::move(settings))) {
    State& s = *state_;
    s.page_size = s.settings.page_size ? s.settings.page_size : backend.granularity().minimum;
    s.method = s.settings.method;
    if (s.method == PageImportMethod::automatic) {
        s.method = backend.capabilities().gpu ? PageImportMethod::opaque_fd
                                              : PageImportMethod::host_pointer;
    }
    if (s.method == PageImportMethod::host_pointer && !context.supports_host_pointer_import()) {
        throw Error(Errc::not_supported, "VulkanPageImporter",
                    "host pointer import needs VK_EXT_external_memory_host", context.device_name());
    }
    if (s.method == PageImportMethod::opaque_fd) {
        if (!context.supports_fd_import()) {
            throw Error(Errc::not_supported, "VulkanPageImporter",
                        "fd import needs VK_KHR_external_memory_fd", context.device_name());
        }
        VkPhysicalDeviceExternalBufferInfo query{
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO};
        query.usage = s.settings.buffer_usage;
        query.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
        VkExternalBufferProperties properties{VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES};
        vkGetPhysicalDeviceExternalBufferProperties(context.physical_device(), &query, &properties);
        const auto features = properties.externalMemoryProperties.externalMemoryFeatures;
        if (!(features & VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT)) {
            throw Error(Errc::not_supported, "VulkanPageImporter",
                        "the device cannot import OPAQUE_FD memory for storage buffers",
                        context.device_name());
        }
        s.dedicated_only = features & VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT;
    }
    context.log().debug("vulkan: importing pages by ", method_name(s.method), ", ", s.page_size,
                        " bytes each");
}

VulkanPageImporter::~VulkanPageImporter() {
    State& s = *state_;
    if (s.imported == 0) return;
    try {
        s.context.wait_for_submitted();
    } catch (const Error& error) {
        s.settings.log.error("vulkan page importer: waiting for the queue: ", error.what());
    }
    s.imports.clear();
}

PageImportMethod VulkanPageImporter::method() const noexcept { return state_->method; }
std::size_t VulkanPageImporter::page_size() const noexcept { return state_->page_size; }

void VulkanPageImporter::attach(PagePoolSettings& pool) {
    pool.on_created = [this, theirs = std::move(pool.on_created)](const PooledPage& page) {
        import_page(page);
        if (!theirs) return;
        try {
            theirs(page);
        } catch (...) {
            forget_page(page);
            throw;
        }
    };
    pool.on_destroyed = [this, theirs = std::move(pool.on_destroyed)](const PooledPage& page) {
        forget_page(page);
        if (theirs) theirs(page);
    };
    pool.on_destroying =
        [this, theirs = std::move(pool.on_destroying)](std::span<const PooledPage> pages) {
            prepare_forget(pages);
            if (theirs) theirs(pages);
        };
}

void VulkanPageImporter::import_page(const PooledPage& page) {
    State& s = *state_;
    const std::string arguments = detail::concat("slot=", page.slot, " handle=", page.handle.value,
                                                 " method=", method_name(s.method));
    {
        std::lock_guard lock(s.mutex);
        if (page.slot < s.imports.size() && s.imports[page.slot]) {
            throw Error(Errc::invalid_argument, "VulkanPageImporter::import_page",
                        "the slot is imported already", arguments);
        }
    }
    std::unique_ptr<Import> import;
    {
        LatencyHistogram::Timer timer(s.import_latency);
        import = s.method == PageImportMethod::opaque_fd ? s.import_opaque_fd(page, arguments)
                                                         : s.import_host_pointer(page, arguments);
    }
    const std::string name = detail::concat("vtpage page slot ", page.slot);
    s.context.set_name(VK_OBJECT_TYPE_BUFFER, reinterpret_cast<std::uint64_t>(import->buffer.get()),
                       name.c_str());
    std::lock_guard lock(s.mutex);
    if (page.slot >= s.imports.size()) s.imports.resize(page.slot + 1);
    if (s.imports[page.slot]) {  // imported by another thread meanwhile: ours goes
        throw Error(Errc::invalid_argument, "VulkanPageImporter::import_page",
                    "the slot is imported already", arguments);
    }
    s.imports[page.slot] = std::move(import);
    ++s.imported;
    ++s.import_count;
}

// One queue wait for a whole batch: each page leaves the table and its listener hears of it (no
// later frame reaches it), then the wait, and each page's forget_page frees without waiting.
void VulkanPageImporter::prepare_forget(std::span<const PooledPage> pages) noexcept {
    State& s = *state_;
    std::function<void(std::uint32_t)> listener;
    std::vector<std::uint32_t> leaving;
    {
        std::lock_guard lock(s.mutex);
        listener = s.forget_listener;
        for (const PooledPage& page : pages) {
            if (page.slot >= s.imports.size() || !s.imports[page.slot]) continue;
            s.retiring[page.slot] = s.take_import_nolock(page.slot);
            leaving.push_back(page.slot);
        }
    }
    try {
        if (listener) {
            for (std::uint32_t slot : leaving) listener(slot);
        }
        s.context.wait_for_submitted();
    } catch (const std::exception& error) {
        s.settings.log.error("vulkan page importer: preparing to forget ", leaving.size(),
                             " pages: ", error.what());
        s.queue_stuck = true;
        return;  // each forget_page frees without waiting then
    }
    std::lock_guard lock(s.mutex);
    for (std::uint32_t slot : leaving) s.drained.insert(slot);
}

void VulkanPageImporter::forget_page(const PooledPage& page) noexcept {
    State& s = *state_;
    const auto start = std::chrono::steady_clock::now();
    std::unique_ptr<Import> import;
    std::function<void(std::uint32_t)> listener;
    bool prepared = false, drained = false;
    {
        std::lock_guard lock(s.mutex);
        listener = s.forget_listener;
        if (auto found = s.retiring.find(page.slot); found != s.retiring.end()) {
            import = std::move(found->second);
            s.retiring.erase(found);
            prepared = true;
            drained = s.drained.erase(page.slot) > 0;
        } else if (page.slot < s.imports.size() && s.imports[page.slot]) {
            import = s.take_import_nolock(page.slot);
        }
    }
    if (!import) {
        s.settings.log.warning("vulkan page importer: slot ", page.slot,
                               " is not imported; nothing to forget");
        return;
    }
    try {
        if (listener && !prepared) listener(page.slot);
        if (!drained && !s.queue_stuck) s.context.wait_for_submitted();
    } catch (const std::exception& error) {
        s.settings.log.error("vulkan page importer: forgetting slot ", page.slot, ": ",
                             error.what());
        s.queue_stuck = true;
    }
    if (!drained && s.queue_stuck && !s.queue_stuck_logged.exchange(true)) {
        s.settings.log.error(
            "vulkan page importer: the queue did not finish its work in time: "
            "the pages left are freed without waiting for it");
    }
    import.reset();
    s.forget_latency.record(std::chrono::steady_clock::now() - start);
}

VkDeviceAddress VulkanPageImporter::device_address(std::uint32_t slot) const {
    std::lock_guard lock(state_->mutex);
    const auto& imports = state_->imports;
    return slot < imports.size() && imports[slot] ? imports[slot]->address : 0;
}

std::optional<ImportedPage> VulkanPageImporter::find(std::uint32_t slot) const {
    std::lock_guard lock(state_->mutex);
    const auto& imports = state_->imports;
    if (slot >= imports.size() || !imports[slot]) return std::nullopt;
    const Import& import = *imports[slot];
    return ImportedPage{import.buffer.get(), import.memory.get(), import.address};
}

std::size_t VulkanPageImporter::imported_count() const {
    std::lock_guard lock(state_->mutex);
    return state_->imported;
}

VulkanPageImporterStatistics VulkanPageImporter::statistics() const {
    std::lock_guard lock(state_->mutex);
    const State& s = *state_;
    return {s.imported, s.import_count, s.forget_count, s.import_latency.summary(),
            s.forget_latency.summary()};
}

void VulkanPageImporter::set_forget_listener(std::function<void(std::uint32_t slot)> listener) {
    std::lock_guard lock(state_->mutex);
    state_->forget_listener = std::move(listener);
}

}  // namespace vtpage
