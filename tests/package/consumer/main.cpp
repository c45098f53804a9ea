// Commits, writes, evicts and reads back pages through the installed library's public headers.
#include <cstdio>
#include <vector>

#include "vtpage/backend/backend_factory.hpp"
#include "vtpage/core/page_table.hpp"

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
        if (seen != value || table.is_resident(3) || !table.is_resident(9)) {
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
