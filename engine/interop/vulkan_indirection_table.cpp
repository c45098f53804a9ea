#include "vtpage/interop/vulkan_indirection_table.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "interop/vulkan_indirection_scatter.hpp"
#include "vtpage/base/trace.hpp"
#include "vtpage/interop/vulkan_barrier.hpp"
#include "vtpage/interop/vulkan_buffer.hpp"
#include "vtpage/interop/vulkan_command_label.hpp"
#include "vtpage/interop/vulkan_context.hpp"
#include "vtpage/interop/vulkan_error.hpp"
#include "vtpage/interop/vulkan_page_importer.hpp"

namespace vtpage {

namespace {

constexpr PageIndex no_page = ~PageIndex(0);
constexpr VkDeviceSize entry_bytes = sizeof(std::uint64_t);

struct Published {
    VkDeviceAddress address = 0;
    std::uint32_t slot = 0;
    std::uint64_t generation = 0;
};

// A ready page held back: until the fill timeline reaches `fill` (publish_when_filled), or
// for the publish limit, in the limit queue under `ticket` (0 while it awaits its fill).
struct HeldBack {
    VkDeviceAddress address = 0;
    std::uint32_t slot = 0;
    std::uint64_t generation = 0;
    std::uint64_t fill = 0;
    std::uint64_t ticket = 0;
    bool packed = false;  // shares its slot with other pages (StreamedPage::packed)
};

using interop_detail::IndirectionScatterPipeline;
using interop_detail::IndirectionScatterPushConstants;

}  // namespace

struct VulkanIndirectionTable::State {
    VulkanContext& context;
    VulkanPageImporter& importer;
    VulkanIndirectionTableSettings settings;
    VulkanBuffer table;
    std::vector<VulkanBuffer> staging;  // per frame slot
    IndirectionScatterPipeline scatter;
    bool initialized = false;  // zeroed on the device

    std::mutex submission;
    mutable std::mutex mutex;  // everything below; taken after `submission` where both are
    std::unordered_map<PageIndex, Published> published;
    std::vector<PageIndex> page_of_slot;  // no_page where the slot backs nothing published
    std::unordered_set<PageIndex> dirty;
    std::unordered_map<PageIndex, HeldBack> held;
    std::unordered_map<std::uint32_t, PageIndex> held_of_slot;
    // Packed tails: pages published into a slot that backs another page (page_of_slot's). A
    // list may name pages unpublished since; retire() and claim_slot() check.
    std::unordered_map<std::uint32_t, std::vector<PageIndex>> packed_of_slot;
    // Pages waiting for the publish limit, by ticket: the order in which they became ready.
    std::map<std::uint64_t, PageIndex> limit_queue;
    std::uint64_t next_ticket = 1;
    std::size_t publish_limit = 0;  // 0: none
    std::uint64_t fill_value = 0;   // the highest published
    std::uint64_t fill_seen = 0;    // the highest the host has read off the fill timeline
    VulkanIndirectionTableStatistics statistics;

    State(VulkanContext& c, VulkanPageImporter& i, VulkanIndirectionTableSettings s)
        : context(c), importer(i), settings(std::move(s)), scatter(c) {}

    void check_page(PageIndex page, const char* operation) const {
        if (page >= settings.page_count) {
            throw Error(Errc::out_of_range, operation,
                        detail::concat("the table has ", settings.page_count, " pages"),
                        detail::concat("page=", page));
        }
    }
    // From here to retire(), which takes it: under `mutex`.
    // Whether the page table (when there is one to check against) still has `page` committed as
    // the event says; a ready event that fails this is stale and counted so.
    bool current_in_table(PageIndex page, std::uint64_t generation, std::uint32_t slot) {
        if (!settings.page_table) return true;
        const auto current = settings.page_table->lookup(page);
        if (current && current->generation == generation && current->physical.slot == slot) {
            return true;
        }
        ++statistics.stale_ready_pages;
        return false;
    }
    void unpublish(PageIndex page) {
        auto found = published.find(page);
        if (found == published.end()) return;
        if (found->second.slot < page_of_slot.size() && page_of_slot[found->second.slot] == page) {
            page_of_slot[found->second.slot] = no_page;
        }
        published.erase(found);
        dirty.insert(page);
    }
    void forget_held(PageIndex page) {
        auto found = held.find(page);
        if (found == held.end()) return;
        auto slot = held_of_slot.find(found->second.slot);
        if (slot != held_of_slot.end() && slot->second == page) held_of_slot.erase(slot);
        if (found->second.ticket != 0) limit_queue.erase(found->second.ticket);
        held.erase(found);
    }
    // The slot now backs `page`: whatever it backed before (an eviction whose callback has not
    // come yet) must no longer reach it, published or still held back.
    void claim_slot(PageIndex page, std::uint32_t slot) {
        if (slot >= page_of_slot.size()) page_of_slot.resize(slot + 1, no_page);
        if (page_of_slot[slot] != no_page && page_of_slot[slot] != page) {
            unpublish(page_of_slot[slot]);
            unpublish_packed(slot);
        }
        auto other = held_of_slot.find(slot);
        if (other != held_of_slot.end() && other->second != page) forget_held(other->second);
    }
    // ticket 0: until the fill is done; otherwise in the limit queue.
    void hold_back(PageIndex page, const HeldBack& entry) {
        if (!entry.packed) claim_slot(page, entry.slot);
        forget_held(page);
        unpublish(page);  // an older entry points at a physical page the page has lost
        held[page] = entry;
        if (!entry.packed) held_of_slot[entry.slot] = page;
        if (entry.ticket != 0) limit_queue.emplace(entry.ticket, page);
    }
    // A page whose bytes are (or will be, by `fill`) in place: published at once without a
    // limit, queued behind the pages that became ready before it with one.
    void make_visible(PageIndex page, std::uint32_t slot, VkDeviceAddress address,
                      std::uint64_t generation, std::uint64_t fill) {
        if (publish_limit == 0 || is_published_as(page, slot, generation)) {
            publish(page, slot, address, generation, fill);
        } else {
            hold_back(page, HeldBack{address, slot, generation, fill, next_ticket++});
        }
    }
    // Already visible as this mapping: nothing new for the limit to hold back.
    bool is_published_as(PageIndex page, std::uint32_t slot, std::uint64_t generation) const {
        auto found = published.find(page);
        return found != published.end() && found->second.slot == slot &&
               found->second.generation == generation;
    }
    // Publishes the first pages of the limit queue, at most publish_limit (0: all of them).
    void publish_queued() {
        std::size_t count = 0;
        while (!limit_queue.empty() && (publish_limit == 0 || count < publish_limit)) {
            const PageIndex page = limit_queue.begin()->second;
            const HeldBack entry = held.at(page);
            if (entry.packed) {
                publish_packed(page, entry.slot, entry.address, entry.generation);
            } else {
                publish(page, entry.slot, entry.address, entry.generation, entry.fill);
            }
            ++count;
        }
        if (!limit_queue.empty()) ++statistics.limited_uploads;
    }
    // Reads the fill timeline (without waiting) into fill_seen.
    std::uint64_t read_fill_timeline() {
        std::uint64_t reached = 0;
        vk_check(vkGetSemaphoreCounterValue(context.device(), settings.fill_timeline, &reached),
                 "VulkanIndirectionTable::record_upload", "vkGetSemaphoreCounterValue");
        fill_seen = std::max(fill_seen, reached);
        return reached;
    }
    // Makes the pages held for their fills visible once the timeline has passed them, in
    // the order of their fill values.
    void publish_filled() {
        if (held.size() == limit_queue.size() || !settings.fill_timeline) return;
        const std::uint64_t reached = read_fill_timeline();
        std::vector<std::pair<PageIndex, HeldBack>> filled;
        for (const auto& [page, entry] : held) {
            if (entry.ticket == 0 && entry.fill <= reached) filled.emplace_back(page, entry);
        }
        std::sort(filled.begin(), filled.end(), [](const auto& a, const auto& b) {
            return std::pair(a.second.fill, a.first) < std::pair(b.second.fill, b.first);
        });
        for (const auto& [page, entry] : filled) {
            forget_held(page);
            make_visible(page, entry.slot, entry.address, entry.generation, entry.fill);
        }
    }
    void publish(PageIndex page, std::uint32_t slot, VkDeviceAddress address,
                 std::uint64_t generation, std::uint64_t fill) {
        claim_slot(page, slot);
        forget_held(page);
        unpublish(page);
        published[page] = Published{address, slot, generation};
        page_of_slot[slot] = page;
        dirty.insert(page);
        fill_value = std::max(fill_value, fill);
    }
    // Packed pages live as long as the page whose slot they share.
    void publish_packed(PageIndex page, std::uint32_t slot, VkDeviceAddress address,
                        std::uint64_t generation) {
        forget_held(page);
        unpublish(page);
        published[page] = Published{address, slot, generation};
        packed_of_slot[slot].push_back(page);
        dirty.insert(page);
    }
    void unpublish_packed(std::uint32_t slot) {
        auto packed = packed_of_slot.find(slot);
        if (packed == packed_of_slot.end()) return;
        for (PageIndex page : packed->second) {
            auto found = published.find(page);
            if (found != published.end() && found->second.slot == slot) unpublish(page);
        }
        packed_of_slot.erase(packed);
    }
    void retire(std::uint32_t slot) {
        std::lock_guard submit_lock(submission);
        std::lock_guard lock(mutex);
        unpublish_packed(slot);
        if (slot < page_of_slot.size() && page_of_slot[slot] != no_page) {
            unpublish(page_of_slot[slot]);
            ++statistics.retired_slots;
        }
        auto other = held_of_slot.find(slot);
        if (other != held_of_slot.end()) forget_held(other->second);
        std::vector<PageIndex> packed_held;
        for (const auto& [page, entry] : held) {
            if (entry.packed && entry.slot == slot) packed_held.push_back(page);
        }
        for (PageIndex page : packed_held) forget_held(page);
    }
};

VulkanIndirectionTable::VulkanIndirectionTable(VulkanContext& context, VulkanPageImporter& importer,
                                               VulkanIndirectionTableSettings settings)
    : state_(std::make_unique<State>(context, importer, std::move(settings))) {
    State& s = *state_;
    if (s.settings.page_count == 0 || s.settings.page_count > (std::uint64_t(1) << 32) ||
        s.settings.frames_in_flight == 0) {
        throw Error(Errc::invalid_argument, "VulkanIndirectionTable",
                    "page_count must be in [1, 2^32] (the shaders index pages with 32 bits) "
                    "and frames_in_flight positive",
                    detail::concat("page_count=", s.settings.page_count,
                                   " frames_in_flight=", s.settings.frames_in_flight));
    }
    s.table = VulkanBuffer(context, s.settings.page_count * entry_bytes,
                           VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                               VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT |
                               VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                               VK_BUFFER_USAGE_TRANSFER_SRC_BIT,  // for tools and tests
                           BufferMemory::device_local, "vtpage indirection table");
    s.staging.resize(s.settings.frames_in_flight);
    importer.set_forget_listener(
        [state = state_.get()](std::uint32_t slot) { state->retire(slot); });
}

VulkanIndirectionTable::~VulkanIndirectionTable() { state_->importer.set_forget_listener({}); }

VkDeviceAddress VulkanIndirectionTable::device_address() const noexcept {
    return state_->table.device_address();
}
VkBuffer VulkanIndirectionTable::buffer() const noexcept { return state_->table.get(); }
std::uint64_t VulkanIndirectionTable::page_count() const noexcept {
    return state_->settings.page_count;
}
std::uint32_t VulkanIndirectionTable::frames_in_flight() const noexcept {
    return state_->settings.frames_in_flight;
}
VkSemaphore VulkanIndirectionTable::fill_timeline() const {
    std::lock_guard lock(state_->mutex);
    return state_->settings.fill_timeline;
}

void VulkanIndirectionTable::set_fill_timeline(VkSemaphore timeline) {
    std::lock_guard lock(state_->mutex);
    state_->settings.fill_timeline = timeline;
    state_->fill_seen = 0;  // another timeline: nothing read off it yet
}

void VulkanIndirectionTable::connect(PageTableSettings& table_settings) {
    table_settings.on_evicted =
        [this, theirs = std::move(table_settings.on_evicted)](std::span<const PageMapping> pages) {
            evicted(pages);
            if (theirs) theirs(pages);
        };
}

void VulkanIndirectionTable::connect(vt::StreamerSettings& streamer_settings) {
    streamer_settings.on_ready = [this, theirs = std::move(streamer_settings.on_ready)](
                                     std::span<const vt::StreamedPage> pages) {
        ready(pages);
        if (theirs) theirs(pages);
    };
    streamer_settings.on_evicted = [this, theirs = std::move(streamer_settings.on_evicted)](
                                       std::span<const vt::StreamedPage> pages) {
        evicted(pages);
        if (theirs) theirs(pages);
    };
}

void VulkanIndirectionTable::ready(std::span<const vt::StreamedPage> pages) {
    // One call per fence value, in order: a batch carries one value for all its pages.
    std::vector<PageMapping> batch;
    std::uint64_t fence = pages.empty() ? 0 : pages.front().fence;
    for (const vt::StreamedPage& page : pages) {
        if (page.packed()) {
            ready_packed(page);
            continue;
        }
        if (page.fence != fence) {
            ready(batch, fence);
            batch.clear();
            fence = page.fence;
        }
        batch.push_back({page.page, page.physical, page.generation});
    }
    if (!batch.empty()) ready(batch, fence);
}

void VulkanIndirectionTable::ready_packed(const vt::StreamedPage& page) {
    State& s = *state_;
    s.check_page(page.page, "VulkanIndirectionTable::ready");
    std::lock_guard lock(s.mutex);
    ++s.statistics.ready_pages;
    if (!s.current_in_table(page.table_page, page.generation, page.physical.slot)) return;
    const VkDeviceAddress address = s.importer.device_address(page.physical.slot);
    if (address == 0) {
        throw Error(Errc::not_mapped, "VulkanIndirectionTable::ready",
                    "the physical page of a packed page is not imported into Vulkan",
                    detail::concat("page=", page.page, " table_page=", page.table_page,
                                   " slot=", page.physical.slot));
    }
    if (page.offset + page.bytes > vt::page_bytes) {
        throw Error(
            Errc::invalid_argument, "VulkanIndirectionTable::ready",
            "a packed page (tail or coarse level) passes the end of the page that holds it",
            detail::concat("page=", page.page, " offset=", page.offset, " bytes=", page.bytes));
    }
    // Filled before it is reported (fence 0): visible at once, or in its turn under a limit.
    if (s.publish_limit == 0) {
        s.publish_packed(page.page, page.physical.slot, address + page.offset, page.generation);
    } else {
        HeldBack entry{address + page.offset, page.physical.slot, page.generation, 0,
                       s.next_ticket++};
        entry.packed = true;
        s.hold_back(page.page, entry);
    }
}

void VulkanIndirectionTable::evicted(std::span<const vt::StreamedPage> pages) {
    std::vector<PageMapping> mappings;
    mappings.reserve(pages.size());
    for (const vt::StreamedPage& page : pages) {
        mappings.push_back({page.page, page.physical, page.generation});
    }
    evicted(mappings);
    // A packed level leaves its host page, which stays: it is no longer cleared with it.
    State& s = *state_;
    std::lock_guard lock(s.mutex);
    for (const vt::StreamedPage& page : pages) {
        if (!page.packed()) continue;
        auto packed = s.packed_of_slot.find(page.physical.slot);
        if (packed == s.packed_of_slot.end()) continue;
        std::erase(packed->second, page.page);
        if (packed->second.empty()) s.packed_of_slot.erase(packed);
    }
}

void VulkanIndirectionTable::check_against(const PageTable* table) {
    std::lock_guard lock(state_->mutex);
    state_->settings.page_table = table;
}

void VulkanIndirectionTable::ready(std::span<const PageMapping> pages, std::uint64_t fill_value) {
    State& s = *state_;
    for (const PageMapping& mapping : pages)
        s.check_page(mapping.page, "VulkanIndirectionTable::ready");
    std::lock_guard lock(s.mutex);
    for (const PageMapping& mapping : pages) {
        ++s.statistics.ready_pages;
        // Checked under our lock: an eviction after this check reports to evicted() after it,
        // and one before it shows here.
        if (!s.current_in_table(mapping.page, mapping.generation, mapping.physical.slot)) {
            continue;
        }
        auto found = s.published.find(mapping.page);
        auto held = s.held.find(mapping.page);
        if ((found != s.published.end() && found->second.generation > mapping.generation) ||
            (held != s.held.end() && held->second.generation > mapping.generation)) {
            ++s.statistics.stale_ready_pages;
            continue;
        }
        const VkDeviceAddress address = s.importer.device_address(mapping.physical.slot);
        if (address == 0) {
            throw Error(Errc::not_mapped, "VulkanIndirectionTable::ready",
                        "the physical page is not imported into Vulkan",
                        detail::concat("page=", mapping.page, " slot=", mapping.physical.slot));
        }
        if (s.settings.publish_when_filled && s.settings.fill_timeline && fill_value > 0) {
            s.hold_back(mapping.page,
                        HeldBack{address, mapping.physical.slot, mapping.generation, fill_value});
        } else {
            s.make_visible(mapping.page, mapping.physical.slot, address, mapping.generation,
                           fill_value);
        }
    }
}

void VulkanIndirectionTable::evicted(std::span<const PageMapping> pages) {
    State& s = *state_;
    std::lock_guard lock(s.mutex);
    for (const PageMapping& mapping : pages) {
        ++s.statistics.evicted_pages;
        // Held back (for its fill or the limit): never published.
        auto held = s.held.find(mapping.page);
        if (held != s.held.end() && held->second.generation <= mapping.generation) {
            s.forget_held(mapping.page);
        }
        auto found = s.published.find(mapping.page);
        if (found == s.published.end() || found->second.generation > mapping.generation) continue;
        s.unpublish(mapping.page);
    }
}

void VulkanIndirectionTable::publish(PageIndex page, std::uint32_t slot, std::uint64_t fill_value) {
    State& s = *state_;
    s.check_page(page, "VulkanIndirectionTable::publish");
    const VkDeviceAddress address = s.importer.device_address(slot);
    if (address == 0) {
        throw Error(Errc::not_mapped, "VulkanIndirectionTable::publish",
                    "the physical page is not imported into Vulkan",
                    detail::concat("page=", page, " slot=", slot));
    }
    std::lock_guard lock(s.mutex);
    ++s.statistics.ready_pages;
    s.publish(page, slot, address, 0, fill_value);
}

void VulkanIndirectionTable::clear(PageIndex page) {
    State& s = *state_;
    s.check_page(page, "VulkanIndirectionTable::clear");
    std::lock_guard lock(s.mutex);
    s.forget_held(page);
    s.unpublish(page);
}

std::optional<std::uint32_t> VulkanIndirectionTable::slot_of(PageIndex page) const {
    std::lock_guard lock(state_->mutex);
    auto found = state_->published.find(page);
    if (found == state_->published.end()) return std::nullopt;
    return found->second.slot;
}

void VulkanIndirectionTable::set_publish_limit(std::size_t pages) {
    std::lock_guard lock(state_->mutex);
    state_->publish_limit = pages;
}

std::size_t VulkanIndirectionTable::publish_limit() const {
    std::lock_guard lock(state_->mutex);
    return state_->publish_limit;
}

std::size_t VulkanIndirectionTable::published_count() const {
    std::lock_guard lock(state_->mutex);
    return state_->published.size();
}

std::unique_lock<std::mutex> VulkanIndirectionTable::lock_submission() {
    return std::unique_lock(state_->submission);
}

IndirectionUpload VulkanIndirectionTable::record_upload(VkCommandBuffer commands,
                                                        std::uint32_t frame_slot) {
    State& s = *state_;
    if (frame_slot >= s.settings.frames_in_flight) {
        throw Error(Errc::out_of_range, "VulkanIndirectionTable::record_upload",
                    detail::concat("there are ", s.settings.frames_in_flight, " frame slots"),
                    detail::concat("frame_slot=", frame_slot));
    }
    VTPAGE_TRACE_SCOPE("vulkan", "indirection upload");
    const VulkanCommandLabel label(s.context, commands, "vtpage indirection upload");
    std::vector<PageIndex> pages;
    std::vector<std::uint64_t> values;
    IndirectionUpload upload;
    {
        std::lock_guard lock(s.mutex);
        s.publish_filled();
        s.publish_queued();
        pages.assign(s.dirty.begin(), s.dirty.end());
        s.dirty.clear();
        std::sort(pages.begin(), pages.end());
        values.reserve(pages.size());
        for (PageIndex page : pages) {
            auto found = s.published.find(page);
            values.push_back(found == s.published.end() ? 0 : found->second.address);
            if (found != s.published.end()) upload.published_pages.push_back(page);
        }
        if (s.settings.fill_timeline && s.fill_value > s.fill_seen) s.read_fill_timeline();
        // A fill the host has already seen done needs no wait on the device: with
        // publish_when_filled that is every fill, and frames then wait for nothing from CUDA.
        if (s.settings.fill_timeline) upload.fill_value = s.fill_value;
        if (s.settings.fill_timeline && s.fill_value > s.fill_seen) {
            upload.wait_semaphore = s.settings.fill_timeline;
            upload.wait_value = s.fill_value;
        }
        ++s.statistics.uploads;
        s.statistics.uploaded_entries += pages.size();
    }
    if (pages.empty() && s.initialized) return upload;
    std::size_t runs = 0;
    for (std::size_t i = 0; i < pages.size(); ++i) runs += i == 0 || pages[i] != pages[i - 1] + 1;
    const bool scatter = runs > s.settings.max_copy_regions;

    // Earlier submissions' reads of the table, and earlier uploads' writes, come before these
    // writes.
    constexpr VkPipelineStageFlags2 shader_stages = VK_PIPELINE_STAGE_2_VERTEX_SHADER_BIT |
                                                    VK_PIPELINE_STAGE_2_FRAGMENT_SHADER_BIT |
                                                    VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT;
    constexpr VkPipelineStageFlags2 write_stages =
        VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT | VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT;
    constexpr VkAccessFlags2 write_access =
        VK_ACCESS_2_TRANSFER_WRITE_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT;
    record_memory_barrier(commands, shader_stages | write_stages, write_access, write_stages,
                          write_access);

    if (!s.initialized) {
        vkCmdFillBuffer(commands, s.table.get(), 0, VK_WHOLE_SIZE, 0);
        upload.cleared = true;
        s.initialized = true;
        if (!pages.empty()) {  // the writes below land after the fill
            record_memory_barrier(commands, VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT,
                                  VK_ACCESS_2_TRANSFER_WRITE_BIT, write_stages, write_access);
        }
    }
    if (!pages.empty()) {
        // Copies read the values alone; the scatter reads the values, then the page indices.
        const VkDeviceSize value_bytes = pages.size() * entry_bytes;
        const VkDeviceSize bytes =
            value_bytes + (scatter ? pages.size() * sizeof(std::uint32_t) : 0);
        VulkanBuffer& staging = s.staging[frame_slot];
        if (!staging || staging.size() < bytes) {
            VkDeviceSize capacity = 4096;
            while (capacity < bytes) capacity *= 2;
            staging =
                VulkanBuffer(s.context, capacity,
                             VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                 VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT,
                             BufferMemory::upload, "vtpage indirection staging");
        }
        std::memcpy(staging.mapped(), values.data(), value_bytes);
        if (scatter) {
            auto* indices = reinterpret_cast<std::uint32_t*>(staging.mapped() + value_bytes);
            for (std::size_t i = 0; i < pages.size(); ++i) {
                indices[i] = static_cast<std::uint32_t>(pages[i]);
            }
        }
        staging.flush();
        if (scatter) {
            IndirectionScatterPushConstants push{};
            push.table = s.table.device_address();
            push.values = staging.device_address();
            push.pages = staging.device_address() + value_bytes;
            push.count = static_cast<std::uint32_t>(pages.size());
            s.scatter.record(commands, push);
        } else {
            std::vector<VkBufferCopy> regions;
            regions.reserve(runs);
            for (std::size_t i = 0; i < pages.size(); ++i) {
                if (!regions.empty() && pages[i] == pages[i - 1] + 1) {
                    regions.back().size += entry_bytes;
                } else {
                    regions.push_back({i * entry_bytes, pages[i] * entry_bytes, entry_bytes});
                }
            }
            vkCmdCopyBuffer(commands, staging.get(), s.table.get(),
                            static_cast<std::uint32_t>(regions.size()), regions.data());
        }
        upload.entries = pages.size();
        upload.regions = runs;
        upload.scattered = scatter;
        if (scatter) {
            std::lock_guard lock(s.mutex);
            ++s.statistics.scattered_uploads;
        }
    }
    // The writes are visible to this submission's shaders (and to copies, for tools and tests).
    record_memory_barrier(commands, write_stages, write_access,
                          shader_stages | VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT,
                          VK_ACCESS_2_SHADER_STORAGE_READ_BIT | VK_ACCESS_2_TRANSFER_READ_BIT);
    return upload;
}

VulkanIndirectionTableStatistics VulkanIndirectionTable::statistics() const {
    std::lock_guard lock(state_->mutex);
    VulkanIndirectionTableStatistics statistics = state_->statistics;
    statistics.published = state_->published.size();
    statistics.pending = state_->dirty.size();
    statistics.waiting_for_limit = state_->limit_queue.size();
    statistics.awaiting_fill = state_->held.size() - statistics.waiting_for_limit;
    return statistics;
}

}  // namespace vtpage
