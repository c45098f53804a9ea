// The table the shaders read to find a virtual page's physical page: one 64-bit device address
// per page of the page table's region (0 where the page is not resident), in a device-local
// buffer at device_address().
//
// Who writes it:
//   - the streamer, when a committed page's bytes are in place, and the page table (or the
//     streamer) when it evicts pages: connect(streamer_settings) chains ready() and evicted()
//     into vt::StreamerSettings::on_ready / on_evicted (each page's fence is its fill value);
//     without a streamer, ready(mappings[, fill_value]) by hand and connect(table_settings) for
//     PageTableSettings::on_evicted;
//   - the page importer, when the pool destroys a physical page: the table clears whatever
//     pointed at it (the table registers itself as the importer's forget listener).
// These calls only edit a CPU-side copy and note the changed entries; they are thread-safe and
// cost about a microsecond per page.
//
// Who uploads it: the renderer, once per frame, under lock_submission():
//   auto lock = table.lock_submission();
//   IndirectionUpload upload = table.record_upload(commands, frame_slot);
//   ... record the frame, submit it (waiting for upload.wait_value on upload.wait_semaphore) ...
// record_upload writes the changed entries (8 bytes each) from the frame slot's staging buffer
// into the table, between barriers that order the writes after every earlier submission's reads
// and before this one's. A few runs of neighbouring entries are copied (one copy region per
// run); more are scattered by a compute dispatch whose cost does not grow with the number of
// runs (max_copy_regions chooses). Frames in flight are therefore never corrupted: each frame
// reads the table as its own submission left it. The frame slot's previous submission must be
// complete (the renderer waits for it), since its staging buffer is rewritten.
//
// CUDA fills (fill_timeline): by default a page is published at once and the frame that first
// reaches it waits on the device for its fill value, unless the host has already seen the
// timeline pass it. With publish_when_filled, a page stays out of the table until the fill
// timeline has reached its value (read at each upload, without waiting), so that frames never
// wait for fills: the page appears a frame or so later.
//
// A limit on the pages made visible per frame (set_publish_limit; 0, the default: none): a
// burst of ready pages then reaches the table over several frames instead of one, so that no
// frame pays for all their entries and first samples at once. Each record_upload publishes at
// most that many newly ready pages (with publish_when_filled, pages whose fills are done), in
// the order they became ready; the rest wait for later uploads. Evictions are never held back:
// a page evicted while it waits is never published, one evicted after it is cleared as usual,
// and a waiting page recommitted under another generation waits as the new one. Pages that
// became ready before a limit was set, and publish() by hand, are not limited.
//
// Stale events are dropped: a ready() for a page that was evicted since (or recommitted with
// another generation) is ignored when a page table is given to check against, and an eviction
// only clears an entry of the same or an older generation.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "vtpage/base/log.hpp"
#include "vtpage/core/page_table.hpp"
#include "vtpage/streaming/streamer/streamer.hpp"

namespace vtpage {

class VulkanContext;
class VulkanPageImporter;

struct VulkanIndirectionTableSettings {
    // Entries: global page indices [0, page_count), 8 bytes each on the device.
    std::uint64_t page_count = 0;
    // Staging buffers, one per frame slot of the renderer.
    std::uint32_t frames_in_flight = 2;
    // When set, ready() publishes a page only while this table has it resident with the same
    // generation and physical page.
    const PageTable* page_table = nullptr;
    // The timeline semaphore CUDA fills signal (CudaVulkanTimeline::semaphore()); frames wait
    // for the highest fill value published. VK_NULL_HANDLE: fills are done before ready().
    VkSemaphore fill_timeline = VK_NULL_HANDLE;
    // Hold pages back until their fill value is reached instead of making frames wait for it.
    bool publish_when_filled = false;
    // Uploads of up to this many runs of neighbouring entries are copies; larger ones are a
    // compute scatter (0: always scatter).
    std::size_t max_copy_regions = 8;
    Log log;
};

// What one record_upload() did, and what the frame must wait for.
struct IndirectionUpload {
    std::size_t entries = 0;       // entries copied
    std::size_t regions = 0;       // runs of neighbouring entries
    bool scattered = false;        // written by the compute scatter, not copies
    bool cleared = false;          // the first upload also zeroes the whole table
    std::uint64_t fill_value = 0;  // the fill timeline value the published pages need
    // What the frame waits for on the device: fill_value, unless the host has already read the
    // timeline at or past it (then nothing, and wait_value is 0).
    VkSemaphore wait_semaphore = VK_NULL_HANDLE;  // set when wait_value > 0
    std::uint64_t wait_value = 0;
    // The pages this upload makes visible (published, or pointed at another physical page,
    // since the previous upload), ascending: the frame it is recorded for samples them first.
    std::vector<PageIndex> published_pages;
};

struct VulkanIndirectionTableStatistics {
    std::size_t published = 0;          // entries pointing at a page now
    std::size_t pending = 0;            // entries changed since the last upload
    std::size_t awaiting_fill = 0;      // ready pages held back until their fill completes
    std::size_t waiting_for_limit = 0;  // ready pages held back by the publish limit
    std::uint64_t ready_pages = 0;
    std::uint64_t stale_ready_pages = 0;  // ready() calls dropped as stale
    std::uint64_t evicted_pages = 0;
    std::uint64_t retired_slots = 0;  // physical pages destroyed while published
    std::uint64_t uploads = 0;
    std::uint64_t uploaded_entries = 0;
    std::uint64_t scattered_uploads = 0;  // uploads written by the compute scatter
    std::uint64_t limited_uploads = 0;    // uploads that left pages waiting for the limit
};

class VulkanIndirectionTable {
public:
    VulkanIndirectionTable(VulkanContext& context, VulkanPageImporter& importer,
                           VulkanIndirectionTableSettings settings);
    ~VulkanIndirectionTable();
    VulkanIndirectionTable(const VulkanIndirectionTable&) = delete;
    VulkanIndirectionTable& operator=(const VulkanIndirectionTable&) = delete;

    VkDeviceAddress device_address() const noexcept;
    VkBuffer buffer() const noexcept;
    std::uint64_t page_count() const noexcept;
    std::uint32_t frames_in_flight() const noexcept;
    VkSemaphore fill_timeline() const;
    // Replaces settings.fill_timeline (e.g. once the streamer's CudaVulkanTimeline exists).
    void set_fill_timeline(VkSemaphore timeline);

    // Chains ready() and evicted() into the streamer's on_ready and on_evicted (keeping the
    // callbacks already there, which run after ours).
    void connect(vt::StreamerSettings& streamer_settings);
    // Chains evicted() into the page table's on_evicted (keeping the callback already there).
    // The table does not exist yet then: once it does, pass it to check_against().
    void connect(PageTableSettings& table_settings);
    // The page table ready() checks against (nullptr: none); replaces settings.page_table.
    void check_against(const PageTable* table);

    // Publishes committed pages whose bytes are in place, or will be once the fill timeline
    // reaches fill_value (with publish_when_filled, they are held back until then).
    // out_of_range for a page beyond page_count, not_mapped for a physical page the importer
    // does not have.
    void ready(std::span<const PageMapping> pages, std::uint64_t fill_value = 0);
    // Clears evicted pages.
    void evicted(std::span<const PageMapping> pages);
    // The streamer's events: each page published with its own fence as the fill value. A packed
    // tail or coarse level (StreamedPage::packed) points `offset` bytes into the physical page
    // of the page that holds it, is checked against that page, is published at once (it is
    // filled before it is reported; under a publish limit, in its turn) and is cleared by its
    // own eviction or with that physical page.
    void ready(std::span<const vt::StreamedPage> pages);
    void evicted(std::span<const vt::StreamedPage> pages);
    // By hand, without a page table: publish or clear one page (generation 0).
    void publish(PageIndex page, std::uint32_t slot, std::uint64_t fill_value = 0);
    void clear(PageIndex page);

    // At most `pages` newly ready pages are published per record_upload from the next one on
    // (0: no limit, the default). Thread-safe.
    void set_publish_limit(std::size_t pages);
    std::size_t publish_limit() const;

    // The slot published for a page, if any (not for pages still held back for their fill or
    // the publish limit).
    std::optional<std::uint32_t> slot_of(PageIndex page) const;
    std::size_t published_count() const;

    // Held by the renderer from record_upload() until its submit returns: forgetting a physical
    // page takes it too, so that no frame recorded before the forget is submitted after it.
    [[nodiscard]] std::unique_lock<std::mutex> lock_submission();
    IndirectionUpload record_upload(VkCommandBuffer commands, std::uint32_t frame_slot);

    VulkanIndirectionTableStatistics statistics() const;

private:
    void ready_packed(const vt::StreamedPage& page);

    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace vtpage
