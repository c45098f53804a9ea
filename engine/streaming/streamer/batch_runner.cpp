#include "streaming/streamer/batch_runner.hpp"

#include <unordered_map>

#include "streaming/streamer/page_description.hpp"
#include "streaming/streamer/recent_demand.hpp"

namespace vtpage::vt::streamer_detail {

bool BatchRunner::run(std::vector<PendingKey> keys, FillStage& fills) {
    Timing timing;
    timing.commit_start = Clock::now();
    timing.trace = trace::active();
    timing.trace_commit_start = timing.trace ? timing.trace->now() : 0;
    std::vector<BatchItem> items = place_levels(keys);
    std::vector<PageMapping> mappings;
    if (!keys.empty()) {
        const CommitOutcome outcome = parts_.commits.commit(keys, mappings);
        if (outcome != CommitOutcome::committed && items.empty()) {
            return outcome == CommitOutcome::failed || outcome == CommitOutcome::superseded;
        }
    } else if (items.empty()) {
        const RequestBook::Lock lock = parts_.book.lock();
        ++parts_.book.stats(lock).budget_stalls;
        return false;  // no packed level found a place
    }
    timing.fill_start = Clock::now();
    timing.trace_fill_start = timing.trace ? timing.trace->now() : 0;
    trace_commits(timing, items, mappings);
    add_committed(items, keys, mappings);
    fill_and_finish(items, fills, timing);
    return true;
}

std::vector<BatchItem> BatchRunner::place_levels(std::vector<PendingKey>& keys) {
    std::vector<BatchItem> items;
    if (!parts_.placement.enabled()) return items;
    std::vector<PendingKey> rest, no_place, superseded;
    const LevelPlacement::PlacementLock placing = parts_.placement.lock_placement();
    if (parts_.placement.retiring()) parts_.placement.shrink(placing);
    for (const PendingKey& key : keys) {
        LevelOutcome outcome = LevelOutcome::not_a_level;
        if (std::optional<BatchItem> item = place_level(placing, key, outcome)) {
            items.push_back(std::move(*item));
        } else if (outcome == LevelOutcome::superseded) {
            superseded.push_back(key);
        } else {
            (outcome == LevelOutcome::waits ? no_place : rest).push_back(key);
        }
    }
    keys = std::move(rest);
    if (!no_place.empty() || !superseded.empty()) {
        const RequestBook::Lock lock = parts_.book.lock();
        parts_.book.requeue(lock, no_place);
        parts_.book.supersede(lock, superseded);
    }
    return items;
}

// The key's level placed, as an item described as a packed page; nullopt for a page that is no
// packable level, or one that found no place (`outcome` says whether it waits or is dropped).
std::optional<BatchItem> BatchRunner::place_level(const LevelPlacement::PlacementLock& placing,
                                                  const PendingKey& key, LevelOutcome& outcome) {
    const TextureSet& textures = parts_.textures;
    const std::optional<PageOwner> owner = textures.find(key.page);
    const std::optional<LevelShape> shape =
        owner ? PackedLevelPool::packable(textures.layout(owner->texture), owner->position.mip)
              : std::nullopt;
    if (!shape) return std::nullopt;
    const LevelPlacement::Placing found = parts_.placement.place(
        placing, key.page, *shape, first_kept_frame(key.asked_in, parts_.book.recent_frames()));
    if (!found.placed) {
        // A shape that found no room for a page of its own (the budget's share is taken by
        // other shapes) is streamed a page a level. A tile of a tile level has no page of its
        // own to be streamed in: without a host of its shape it is dropped as superseded (the
        // view asks for it again), never left waiting for a host that may not come.
        const bool tile = textures.layout(owner->texture).tile_level(owner->position.mip);
        outcome = found.superseded                    ? LevelOutcome::superseded
                  : parts_.placement.has_host(*shape) ? LevelOutcome::waits
                  : tile                              ? LevelOutcome::superseded
                                                      : LevelOutcome::not_a_level;
        return std::nullopt;
    }
    const PlacedLevel& placed = *found.placed;
    BatchItem item{.key = key, .owner = *owner, .source = textures.source(owner->texture)};
    item.route = BatchRoute::packed_level;
    item.place = placed.place;
    item.place->rows.source_offset = owner->source.byte_offset();  // a tile level's tile
    StreamedPage page = placed.host;
    item.mapping = {key.page, page.physical, page.generation};
    page.page = key.page;
    page.texture = owner->texture;
    page.layout_page = owner->layout_page;
    page.mip = owner->position.mip;
    page.data += item.place->offset;
    page.offset = item.place->offset;
    page.bytes = item.place->bytes;
    page.fence = 0;
    item.page = page;
    return item;
}

void BatchRunner::add_committed(std::vector<BatchItem>& items, const std::vector<PendingKey>& keys,
                                const std::vector<PageMapping>& mappings) {
    std::unordered_map<PageIndex, PendingKey> key_of;
    for (const PendingKey& key : keys) key_of[key.page] = key;
    items.reserve(items.size() + mappings.size());
    for (const PageMapping& mapping : mappings) {
        BatchItem item;
        item.key = key_of[mapping.page];
        item.mapping = mapping;
        item.page = describe_page(parts_.table, parts_.textures, mapping);
        item.owner = parts_.textures.find(mapping.page).value_or(PageOwner{});
        item.source = parts_.textures.source(item.owner.texture);
        items.push_back(std::move(item));
    }
}

// Stored pages go to the loader (which finishes them); this worker fills and finishes the rest.
void BatchRunner::fill_and_finish(std::vector<BatchItem>& items, FillStage& fills, Timing& timing) {
    if (parts_.stored.started()) items = parts_.stored.load(std::move(items));
    const FillStage::Filled filled = items.empty() ? FillStage::Filled{} : fills.fill(items);
    const auto done = Clock::now();
    if (timing.trace) {
        const std::int64_t trace_done = timing.trace->now();
        for (const BatchItem& item : items) {
            timing.trace->complete("page", "fill", timing.trace_fill_start, trace_done,
                                   {.page = item.mapping.page, .count = items.size()});
        }
    }
    count_batch(timing, done);
    std::vector<PageIndex> unpin_later =
        parts_.finisher.finish(items, filled.fence, filled.async_ticket != 0);
    fills.unpin_after(filled.async_ticket, std::move(unpin_later));
}

// One commit call for the batch (and one placement of its packed levels): each page's commit
// is the batch's.
void BatchRunner::trace_commits(const Timing& timing, const std::vector<BatchItem>& items,
                                const std::vector<PageMapping>& mappings) {
    if (!timing.trace) return;
    const std::size_t count = mappings.size() + items.size();
    for (const BatchItem& item : items) {
        timing.trace->complete("page", "commit", timing.trace_commit_start, timing.trace_fill_start,
                               {.page = item.mapping.page, .count = count});
    }
    for (const PageMapping& mapping : mappings) {
        timing.trace->complete("page", "commit", timing.trace_commit_start, timing.trace_fill_start,
                               {.page = mapping.page, .count = count});
    }
}

void BatchRunner::count_batch(const Timing& timing, Clock::time_point done) {
    const RequestBook::Lock lock = parts_.book.lock();
    StreamerStatistics& stats = parts_.book.stats(lock);
    ++stats.batches;
    stats.commit_seconds +=
        std::chrono::duration<double>(timing.fill_start - timing.commit_start).count();
    stats.fill_seconds += std::chrono::duration<double>(done - timing.fill_start).count();
}

}  // namespace vtpage::vt::streamer_detail
