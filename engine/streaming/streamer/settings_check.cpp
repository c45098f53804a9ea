#include "streaming/streamer/settings_check.hpp"

#include <algorithm>

namespace vtpage::vt::streamer_detail {

namespace {

// The most pages the table can ever hold: its pool's windows, or as many as a pool has windows
// for by default where it maps none.
std::size_t most_pages(const PageTableSettings& table) {
    return table.pool.window_pages != 0 ? table.pool.window_pages
                                        : PagePoolSettings::default_window_pages;
}

void check_counts(const StreamerSettings& settings) {
    if (settings.recent_frames == 0 || settings.recent_frames > 1024) {
        throw Error(Errc::invalid_argument, "Streamer", "recent_frames must be 1 to 1024",
                    detail::concat("recent_frames=", settings.recent_frames));
    }
    if (settings.refault_hold_frames > 65536) {
        throw Error(Errc::invalid_argument, "Streamer", "refault_hold_frames must be 0 to 65536",
                    detail::concat("refault_hold_frames=", settings.refault_hold_frames));
    }
    if (settings.file_reads.page_cache_copiers > FileReadQueueSettings::max_page_cache_copiers) {
        throw Error(Errc::invalid_argument, "Streamer",
                    detail::concat("file_reads.page_cache_copiers must be 0 (automatic) to ",
                                   FileReadQueueSettings::max_page_cache_copiers),
                    detail::concat("page_cache_copiers=", settings.file_reads.page_cache_copiers));
    }
    if (settings.file_reads.decoded_pages_kept > StreamerFileReads::max_decoded_pages_kept) {
        throw Error(Errc::invalid_argument, "Streamer",
                    detail::concat("file_reads.decoded_pages_kept must be 0 to ",
                                   StreamerFileReads::max_decoded_pages_kept),
                    detail::concat("decoded_pages_kept=", settings.file_reads.decoded_pages_kept));
    }
    if (settings.worker_threads != 0 && settings.batch_pages != 0 && settings.max_pending != 0)
        return;
    throw Error(Errc::invalid_argument, "Streamer",
                "worker_threads, batch_pages and max_pending must be > 0",
                detail::concat("worker_threads=", settings.worker_threads, ", batch_pages=",
                               settings.batch_pages, ", max_pending=", settings.max_pending));
}

}  // namespace

// Refuses settings under which the streamer could not reach or hold its pages.
void check_streamer_settings(Backend& backend, const StreamerSettings& settings) {
    const PageTableSettings& table = settings.table;
    if (!table.map_into_region && !table.pool.map_windows) {
        throw Error(Errc::invalid_argument, "Streamer",
                    "the page table neither maps into its region nor maps pool windows: page "
                    "data could not be reached");
    }
    check_counts(settings);
    const std::size_t page_size = backend.granularity(table.pool.page_options).minimum;
    if (page_size != page_bytes) {
        throw Error(Errc::not_supported, "Streamer",
                    detail::concat("the backend's pages are ", page_size,
                                   " bytes; virtual textures need ", page_bytes),
                    detail::concat("backend=", backend.name()));
    }
    if (table.pool.map_windows && table.budget_bytes / page_size > table.pool.window_pages) {
        throw Error(Errc::invalid_argument, "Streamer",
                    "the budget holds more pages than the pool has windows for (raise "
                    "pool.window_pages)",
                    detail::concat("budget_pages=", table.budget_bytes / page_size,
                                   ", window_pages=", table.pool.window_pages));
    }
}

std::size_t level_host_names(const StreamerSettings& settings) {
    if (!settings.pack_levels) return 0;
    if (settings.packed_level_pages > 0) return settings.packed_level_pages;
    return std::max<std::size_t>(1, most_pages(settings.table) / 4);
}

}  // namespace vtpage::vt::streamer_detail
