#include "streamer_run.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <optional>
#include <thread>

#include "vtpage/base/trace.hpp"
#include "vtpage/streaming/governor/decode_thread_governor.hpp"
#include "vtpage/streaming/sources/device_fill_context.hpp"
#include "vtpage/streaming/streamer/streamer.hpp"

namespace vtpage::bench::disk {

namespace {

using Clock = std::chrono::steady_clock;

// An archive as an rgba8 texture just large enough for its pages: layout page p is archive
// page p; the layout's pages past the archive's (its tail among them) are zeros.
class ArchiveTexture final : public vt::TileSource {
public:
    explicit ArchiveTexture(const vt::PageArchive& archive) : archive_(archive) {
        std::uint32_t log2 = 7;
        while (vt::TextureLayout(vt::TextureShape::square(log2)).page_count <=
               archive.shape().page_count)
            ++log2;
        log2_ = log2;
    }
    vt::TextureShape shape() const noexcept override { return vt::TextureShape::square(log2_); }
    std::string name() const override { return archive_.path(); }
    std::uint64_t pages() const { return archive_.shape().page_count; }

    void fill_host(std::uint64_t page, std::span<std::byte> destination) const override {
        if (page < pages()) {
            archive_.read_page(page, destination);
        } else {
            std::memset(destination.data(), 0, vt::page_bytes);
        }
    }
    bool fills_device() const noexcept override { return vt::device_fills_built(); }
    // What a source without the split read does: read, decode and copy page after page.
    void fill_device(std::span<const vt::DevicePageFill> fills,
                     vt::DeviceFillContext& context) const override {
        for (const vt::DevicePageFill& fill : fills) {
            std::byte* staging = context.staging(vt::page_bytes);
            fill_host(fill.page, std::span(staging, vt::page_bytes));
            context.copy_to_device(fill.destination, staging, vt::page_bytes);
        }
    }
    std::optional<vt::StoredPageRead> stored_read(std::uint64_t page) const override {
        if (!split_reads || page >= pages()) return std::nullopt;
        const vt::StoredExtent extent = archive_.stored_extent(page);
        return vt::StoredPageRead{archive_.fd(), extent.offset, extent.bytes};
    }
    void decode_stored(std::uint64_t page, std::span<const std::byte> stored,
                       std::span<std::byte> destination) const override {
        archive_.decode_page(page, stored, destination);
    }
    std::vector<vt::StoredPart> split_stored(std::uint64_t page,
                                             std::span<const std::byte> stored) const override {
        return archive_.split_stored(page, stored);
    }
    void decode_stored_part(std::uint64_t page, const vt::StoredPart& part,
                            std::span<std::byte> destination) const override {
        archive_.decode_part(page, part, destination);
    }

    bool split_reads = true;

private:
    const vt::PageArchive& archive_;
    std::uint32_t log2_ = 7;
};

// The streamer's own decode threads, governed every `period` as VirtualTextureStreaming does
// after each feedback: the slowest loop turn as the frame, no frame-time target.
class DecodeThreadPacer {
public:
    static constexpr auto period = std::chrono::milliseconds(10);

    explicit DecodeThreadPacer(vt::Streamer& streamer) : streamer_(streamer) {
        const vt::DecodeThreadLoad load = streamer.decode_threads();
        most_active_ = load.active;
        if (!load.automatic) return;
        vt::DecodeThreadGovernorSettings settings;
        settings.pool_threads = load.pool;
        settings.initial_threads = load.active;
        governor_.emplace(settings);
        last_ = load;
    }

    void frame(double frame_ms) {
        slowest_ms_ = std::max(slowest_ms_, frame_ms);
        const auto now = Clock::now();
        if (!governor_ || now - last_time_ < period) return;
        const vt::DecodeThreadLoad load = streamer_.decode_threads();
        const vt::DecodeThreadDecision decision =
            governor_->update({.seconds = std::chrono::duration<double>(now - last_time_).count(),
                               .frame_ms = slowest_ms_,
                               .waiting_pages = load.waiting_pages,
                               .decoded_pages = load.decoded_pages - last_.decoded_pages,
                               .busy_seconds = load.busy_seconds - last_.busy_seconds});
        if (decision.active_threads != load.active) {
            streamer_.set_active_decode_threads(decision.active_threads);
        }
        most_active_ = std::max(most_active_, decision.active_threads);
        last_ = load;
        last_time_ = now;
        slowest_ms_ = 0;
    }

    std::size_t most_active() const {
        return std::max(most_active_, streamer_.decode_threads().active);
    }

private:
    vt::Streamer& streamer_;
    std::optional<vt::DecodeThreadGovernor> governor_;
    vt::DecodeThreadLoad last_;
    Clock::time_point last_time_ = Clock::now();
    double slowest_ms_ = 0;
    std::size_t most_active_ = 0;
};

}  // namespace

StreamerRunResult run_streamer(const PageSet& set, Backend& backend,
                               const StreamerRunSettings& settings) {
    vt::StreamerSettings s;
    s.file_reads.enabled = settings.read_pipeline;
    s.file_reads.decode_threads = settings.decode_threads;
    s.file_reads.backend = settings.read_backend;
    s.file_reads.page_cache_copiers = settings.page_cache_copiers;
    s.file_reads.decode_priority = settings.decode_priority;
    std::atomic<std::uint64_t> ready{0};
    s.on_ready = [&](std::span<const vt::StreamedPage> pages) { ready += pages.size(); };
    s.table.budget_bytes = streamer_budget_pages * vt::page_bytes;
    vt::Streamer streamer(backend, s);
    std::vector<PageIndex> order;
    for (const auto& archive : set.archives) {
        auto texture = std::make_shared<ArchiveTexture>(*archive);
        texture->split_reads = settings.read_pipeline;
        const vt::TextureId id = streamer.add_texture(texture);
        const PageIndex base = streamer.textures().base_page(id);
        for (std::uint64_t p = 0; p < texture->pages(); ++p) order.push_back(base + p);
    }
    const std::vector<PageIndex> pass = order;
    for (std::size_t p = 1; p < settings.passes; ++p)
        order.insert(order.end(), pass.begin(), pass.end());
    const std::uint64_t tails = ready.load();
    constexpr std::size_t window = 256;  // pages asked for ahead of what has arrived
    StreamerRunResult result;
    std::size_t next = 0;
    const app::CpuSample cpu_before = app::sample_cpu();
    const app::ThreadCpuSample threads_before = app::sample_threads();
    const auto start = Clock::now();
    const auto deadline = start + std::chrono::duration<double>(settings.seconds);
    DecodeThreadPacer pacer(streamer);
    auto turn = start;
    while (ready - tails < order.size() && Clock::now() < deadline) {
        const auto now = Clock::now();
        pacer.frame(std::chrono::duration<double, std::milli>(now - turn).count());
        turn = now;
        FrameId frame = 0;
        {
            VTPAGE_TRACE_SCOPE("bench", "turn begin_frame");
            frame = streamer.begin_frame();
        }
        const std::size_t asked_ahead = next - std::min<std::size_t>(next, ready - tails);
        if (asked_ahead < window && next < order.size()) {
            VTPAGE_TRACE_SCOPE("bench", "turn request");
            const std::size_t take = std::min(window - asked_ahead, order.size() - next);
            streamer.request(std::span(order).subspan(next, take));
            next += take;
        }
        {
            VTPAGE_TRACE_SCOPE("bench", "turn complete_frame");
            streamer.complete_frame(frame);
        }
        VTPAGE_TRACE_SCOPE("bench", "turn sleep");
        std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    result.cpu = app::cpu_usage_since(cpu_before);
    result.thread_cpu_seconds = app::cpu_by_kind_between(threads_before, app::sample_threads());
    result.pages = ready - tails;
    const vt::StreamerStatistics stats = streamer.statistics();
    result.failed = stats.failed_pages;
    result.decode_threads = stats.file_reads.decode_threads;
    result.active_decode_threads = stats.file_reads.active_decode_threads;
    result.most_active_decode_threads = pacer.most_active();
    return result;
}

}  // namespace vtpage::bench::disk
