// Commits, writes, evicts and reads back pages through the installed library's public headers,
// and writes and reads a page archive (which links zstd, a private dependency of the library).
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "vtpage/backend/backend_factory.hpp"
#include "vtpage/core/page_table.hpp"
#include "vtpage/streaming/archive/page_archive.hpp"

namespace {

// One compressible page through a page archive in a temporary folder: whether it came back.
bool archive_round_trip() {
    char folder[] = "/tmp/vtpage-consumer-XXXXXX";
    if (!::mkdtemp(folder)) return false;
    const std::string path = std::string(folder) + "/one.vtpa";
    std::vector<std::byte> page(4096, std::byte{42}), back(4096);
    {
        vtpage::vt::PageArchiveWriter writer(path, {1, 4096, 1024, 4}, {});
        writer.add_page(0, page);
        writer.finish();
    }
    const vtpage::vt::PageArchive archive(path);
    archive.read_page(0, back);
    const bool compressed = archive.stored_extent(0).encoding == vtpage::vt::PageEncoding::zstd;
    ::unlink(path.c_str());
    ::rmdir(folder);
    return compressed && back == page;
}

}  // namespace

int main() {
    using namespace vtpage;
    try {
        auto backend = make_backend({.name = "host"});
        PageTable table(*backend, {.region_size = 1_GiB, .budget_bytes = 4_MiB});
        const std::vector<PageIndex> pages{3, 7};
        table.commit(pages);
        const std::uint64_t value = 0x7670616765;
        backend->write(table.address_of(7), &value, sizeof(value));
        std::uint64_t seen = 0;
        backend->read(&seen, table.address_of(7), sizeof(seen));
        const std::vector<PageIndex> more{9};
        table.commit(more);  // the budget holds two pages: page 3 is evicted
        if (seen != value || table.is_resident(3) || !table.is_resident(9) ||
            !archive_round_trip()) {
            std::fprintf(stderr, "consumer: unexpected state\n");
            return 1;
        }
        std::printf("consumer: ok (%zu resident)\n", table.resident_count());
    } catch (const Error& error) {
        std::fprintf(stderr, "consumer: %s\n", error.what());
        return 1;
    }
    return 0;
}
