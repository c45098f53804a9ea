// The CPU writes and checks the stamps through the pages' own addresses: the host backend's
// mappings are plain process memory.
#include <cstring>

#include "page_verifier.hpp"

namespace vtpage::stress {

namespace {

class HostVerifier final : public PageVerifier {
public:
    explicit HostVerifier(const StampLayout& layout) : layout_(layout) {}

    std::size_t run(const StampJob* jobs, std::size_t count, StampMismatch& first) override {
        std::size_t wrong_pages = 0;
        for (std::size_t j = 0; j < count; ++j) {
            const StampJob& job = jobs[j];
            bool wrong = false;
            for (std::size_t offset = 0; offset < layout_.page_size; offset += layout_.stride) {
                auto* where = reinterpret_cast<unsigned char*>(job.address + offset);
                const PageStamp expected = make_stamp(job.page, job.generation, offset);
                if (job.write) {
                    std::memcpy(where, &expected, sizeof(expected));
                    continue;
                }
                PageStamp found;
                std::memcpy(&found, where, sizeof(found));
                if (!same_stamp(found, expected)) {
                    if (!wrong && wrong_pages == 0) first = {job.page, job.generation, found};
                    wrong = true;
                }
            }
            if (wrong) ++wrong_pages;
        }
        return wrong_pages;
    }

    void corrupt(std::uint64_t address) override {
        const PageStamp garbage{~0ull, ~0ull, ~0ull, 0};
        std::memcpy(reinterpret_cast<void*>(address), &garbage, sizeof(garbage));
    }

private:
    StampLayout layout_;
};

}  // namespace

std::unique_ptr<PageVerifier> make_host_verifier(const StampLayout& layout) {
    return std::make_unique<HostVerifier>(layout);
}

}  // namespace vtpage::stress
