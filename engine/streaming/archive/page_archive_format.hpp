// What the page archive's writer and reader share (page_archive.hpp documents the format): the
// offsets a shape gives, the checks of a shape, the header's checksum, and pooled zstd contexts
// (a context holds megabytes of tables: made once per concurrent caller, not once per page).
#pragma once

#include <zstd.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "vtpage/streaming/archive/page_archive.hpp"

namespace vtpage::vt::archive {

// The offsets of the regions before the data, from the shape and the descriptor's size.
struct ArchiveOffsets {
    std::uint64_t index_offset = 0;
    std::uint64_t table_offset = 0;
    std::uint64_t data_offset = 0;
};
// The shape must have passed shape_problem and descriptor_bytes be at most 64 KiB; version 3
// has no tile table (table_offset is where it would start, and the data follows).
ArchiveOffsets archive_offsets(const PageArchiveShape& shape, std::uint64_t descriptor_bytes,
                               std::uint32_t version);

// The bytes of the tile checksum table: page_count x tiles_per_page x 8 in version 2, none in 3.
std::uint64_t table_bytes(const PageArchiveShape& shape, std::uint32_t version);

// What is wrong with a shape ("" when nothing is): empty, inconsistent or past the limits.
std::string shape_problem(const PageArchiveShape& shape);

// The parts a writer stores a zstd page in: before version 4 one; in version 4 the most, up to
// `wanted`, that divide tiles_per_page (a part is whole tiles).
std::uint32_t parts_for(const PageArchiveShape& shape, std::uint32_t version, std::uint32_t wanted);

// What is wrong with a header's parts_per_page ("" when nothing is): zero before version 4; in
// version 4, 1 to 64 and dividing tiles_per_page.
std::string parts_problem(const PageArchiveShape& shape, std::uint32_t version,
                          std::uint32_t parts_per_page);

// The most stored bytes a zstd page of `parts` frames may take (zstd's bound for each part).
std::uint64_t zstd_stored_bound(const PageArchiveShape& shape, std::uint32_t parts);

// The header's checksum, of its own version (archive_checksum), with header_checksum zero.
std::uint64_t header_checksum(PageArchiveHeader header);

// A pool of zstd contexts: take() lends one (made when none is free), the lease gives it back.
template <typename Context, Context* (*create)(), std::size_t (*destroy)(Context*)>
class ContextPool {
public:
    struct Free {
        void operator()(Context* context) const { destroy(context); }
    };
    using Owned = std::unique_ptr<Context, Free>;

    class Lease {
    public:
        Lease(ContextPool& pool, Owned context) : pool_(pool), context_(std::move(context)) {}
        ~Lease() { pool_.give_back(std::move(context_)); }
        Lease(const Lease&) = delete;
        Lease& operator=(const Lease&) = delete;
        Context* get() const { return context_.get(); }

    private:
        ContextPool& pool_;
        Owned context_;
    };

    // nullptr inside the lease when zstd cannot allocate a context.
    Lease take() {
        std::lock_guard lock(mutex_);
        if (free_.empty()) return Lease(*this, Owned(create()));
        Owned context = std::move(free_.back());
        free_.pop_back();
        return Lease(*this, std::move(context));
    }

private:
    void give_back(Owned context) {
        if (!context) return;
        std::lock_guard lock(mutex_);
        free_.push_back(std::move(context));
    }

    std::mutex mutex_;
    std::vector<Owned> free_;
};

using CompressionContexts = ContextPool<ZSTD_CCtx, ZSTD_createCCtx, ZSTD_freeCCtx>;
using DecompressionContexts = ContextPool<ZSTD_DCtx, ZSTD_createDCtx, ZSTD_freeDCtx>;

}  // namespace vtpage::vt::archive
