#include "streaming/streamer/fill_stage.hpp"

#include "base/test_points.hpp"
#include "streaming/streamer/tail_placement.hpp"

namespace vtpage::vt::streamer_detail {

FillStage::FillStage(Parts parts) : parts_(std::move(parts)) {
    if (!parts_.gpu) return;
    try {
        context_ = std::make_unique<DeviceFillContext>(parts_.device);
    } catch (...) {
        parts_.errors.record(std::current_exception());  // fills go through host memory
    }
}

FillStage::~FillStage() = default;

FillStage::Filled FillStage::fill(std::vector<BatchItem>& items) {
    Filled filled;
    DeviceGroups device_groups;
    LevelGroups level_groups;
    for (BatchItem& item : items) {
        if (item.route == BatchRoute::host_fill && context_ && item.source->fills_device()) {
            item.route = BatchRoute::device_fill;
            item.state = BatchState::filling;
            device_groups[item.source.get()].push_back(&item);
            continue;
        }
        if (item.route == BatchRoute::packed_level) {
            level_groups[{item.source.get(), item.owner.source.page}].push_back(&item);
            continue;
        }
        fill_here(item);
    }
    fill_levels_on_device(level_groups);  // those whose source fills on the device
    for (auto& [page, group] : level_groups) fill_levels(group);
    if (!device_groups.empty()) filled.fence = fill_on_device(device_groups, filled.async_ticket);
    return filled;
}

// A host fill, on this thread.
void FillStage::fill_here(BatchItem& item) {
    try {
        fill_page_on_host(parts_.backend, parts_.gpu, *item.source, item.owner.source.page,
                          item.page.data);
        item.state = BatchState::filled;
    } catch (...) {
        item.state = BatchState::failed;
        parts_.errors.record(std::current_exception());
    }
}

// Packed levels and tiles whose source fills on the device: their source pages filled into the
// context's scratch memory, each one's rows copied from there, all in one batch waited for (the
// scratch is the next batch's). Taken out of `groups`.
void FillStage::fill_levels_on_device(LevelGroups& groups) {
    if (!context_) return;
    std::vector<std::vector<BatchItem*>> on_device;
    for (auto it = groups.begin(); it != groups.end();) {
        if (!it->first.first->fills_device()) {
            ++it;
            continue;
        }
        on_device.push_back(std::move(it->second));
        it = groups.erase(it);
    }
    if (on_device.empty()) return;
    try {
        context_->begin_batch();
        const DeviceAddress scratch = context_->scratch(on_device.size() * page_bytes);
        for (std::size_t i = 0; i < on_device.size(); ++i) {
            const BatchItem& first = *on_device[i].front();
            const DevicePageFill fill{first.owner.source.page, scratch + i * page_bytes};
            try {
                first.source->fill_device(std::span(&fill, 1), *context_);
            } catch (...) {  // this page's fill refused (a damaged page): its levels fail
                for (BatchItem* item : on_device[i]) item->state = BatchState::failed;
                parts_.errors.record(std::current_exception());
                continue;
            }
            for (BatchItem* item : on_device[i]) {
                item->place->rows.for_each([&](std::uint64_t from, std::uint64_t to,
                                               std::uint64_t bytes) {
                    context_->copy_on_device(item->page.data + to, fill.destination + from, bytes);
                });
            }
        }
        context_->wait(context_->end_batch());
        for (auto& group : on_device) {
            for (BatchItem* item : group) {
                if (!item->failed()) item->state = BatchState::filled;
            }
        }
    } catch (...) {
        // The batch's work may have failed part way: every one of its levels fails.
        try {
            context_->synchronize();
        } catch (...) {}
        for (auto& group : on_device) {
            for (BatchItem* item : group) item->state = BatchState::failed;
        }
        parts_.errors.record(std::current_exception());
    }
}

// Packed levels, or tiles of a tile level, of one source page: the page filled once by its
// source on the host, in staging, then each one's rows.
void FillStage::fill_levels(const std::vector<BatchItem*>& group) {
    try {
        std::vector<std::byte> staging(page_bytes);
        group.front()->source->fill_host(group.front()->owner.source.page, staging);
        for (BatchItem* item : group) {
            item->place->rows.for_each(
                [&](std::uint64_t from, std::uint64_t to, std::uint64_t bytes) {
                    parts_.backend.write(item->page.data + to, staging.data() + from, bytes);
                });
            item->state = BatchState::filled;
        }
    } catch (...) {
        for (BatchItem* item : group) {
            if (item->state != BatchState::filled) item->state = BatchState::failed;
        }
        parts_.errors.record(std::current_exception());
    }
}

// Enqueued fills count as filled (their fence says when) unless they failed.
std::uint64_t FillStage::fill_on_device(DeviceGroups& groups, std::uint64_t& async_ticket) {
    struct MarkFilled {
        DeviceGroups& groups;
        ~MarkFilled() {
            for (auto& [source, group] : groups) {
                for (BatchItem* item : group) {
                    if (!item->failed()) item->state = BatchState::filled;
                }
            }
        }
    } mark_filled{groups};
    try {
        context_->begin_batch();
    } catch (...) {
        fail_all(groups, std::current_exception());
        return 0;
    }
    std::uint64_t fence = 0;
    bool waited = true;
    if (enqueue(groups) && parts_.settings.on_fills_enqueued) {
        try {
            fence = parts_.settings.on_fills_enqueued(context_->stream());
            waited = false;
        } catch (...) {
            parts_.errors.record(std::current_exception());
        }
    }
    end_batch(groups, waited, async_ticket);
    return waited ? 0 : fence;
}

// Enqueues each source's fills in one call; true when any was enqueued.
bool FillStage::enqueue(DeviceGroups& groups) {
    bool enqueued = false;
    for (auto& [source, group] : groups) {
        std::vector<DevicePageFill> fills;
        fills.reserve(group.size());
        for (BatchItem* item : group) fills.push_back({item->owner.source.page, item->page.data});
        try {
            source->fill_device(fills, *context_);
            enqueued = true;
        } catch (...) {
            enqueued |= fill_one_by_one(*source, fills, group, std::current_exception());
        }
    }
    return enqueued;
}

// After a device fill of several pages failed: one page that cannot be read (a damaged page of
// a file) fails the call for all of them, so each is filled again on its own and only those
// that fail again are marked failed, each error recorded. A page the failed call had enqueued
// already is copied twice, with the same bytes. True when any was enqueued.
bool FillStage::fill_one_by_one(const TileSource& source, const std::vector<DevicePageFill>& fills,
                                const std::vector<BatchItem*>& group,
                                const std::exception_ptr& group_error) {
    if (fills.size() == 1) {
        group.front()->state = BatchState::failed;
        parts_.errors.record(group_error);
        return false;
    }
    bool enqueued = false;
    for (std::size_t i = 0; i < fills.size(); ++i) {
        try {
            source.fill_device(std::span(&fills[i], 1), *context_);
            enqueued = true;
        } catch (...) {
            group[i]->state = BatchState::failed;
            parts_.errors.record(std::current_exception());
        }
    }
    return enqueued;
}

// Ends the device batch: waits for it, or (not `waited`) hands back its ticket.
void FillStage::end_batch(DeviceGroups& groups, bool waited, std::uint64_t& async_ticket) {
    async_ticket = 0;
    try {
        const std::uint64_t ticket = context_->end_batch();
        if (waited) {
            context_->wait(ticket);
        } else {
            async_ticket = ticket;
        }
    } catch (...) {
        fail_all(groups, std::current_exception());
        async_ticket = 0;
        // Failed pages are unpinned and reused at once: nothing enqueued for them may run on.
        try {
            if (!VTPAGE_TEST_SWITCH("defect.failed_device_batch_not_waited")) {
                context_->synchronize();
            }
        } catch (...) {
            parts_.errors.record(std::current_exception());
        }
    }
}

void FillStage::fail_all(DeviceGroups& groups, const std::exception_ptr& error) {
    for (auto& [source, group] : groups) {
        for (BatchItem* item : group) item->state = BatchState::failed;
    }
    parts_.errors.record(error);
}

void FillStage::unpin_after(std::uint64_t ticket, std::vector<PageIndex> pinned) {
    if (!pinned.empty()) async_.push_back({ticket, std::move(pinned)});
}

void FillStage::release_finished(bool wait) {
    if (!context_) return;
    while (!async_.empty()) {
        AsyncBatch& front = async_.front();
        try {
            if (wait) {
                context_->wait(front.ticket);
            } else if (!context_->finished(front.ticket)) {
                return;
            }
        } catch (...) {
            parts_.errors.record(std::current_exception());
        }
        parts_.unpin(front.pinned);
        async_.pop_front();
    }
}

void FillStage::finish() {
    if (!context_) return;
    release_finished(true);
    try {
        context_->synchronize();
    } catch (...) {
        parts_.errors.record(std::current_exception());
    }
}

}  // namespace vtpage::vt::streamer_detail
