// The measurements behind the archive's default zstd level (page_archive.hpp): ratio and
// single-thread MB/s of compression and decompression at levels 1, 3, 6, 9 and 19, on 2 MiB
// pages of ProceduralSource::fill_host and on random pages. Disabled by default (it takes
// seconds and prints timings, which a test must not assert); run it with
//   vtpage_streaming_tests --gtest_also_run_disabled_tests --gtest_filter='*ZstdLevels*'
#include <gtest/gtest.h>

#include <zstd.h>

#include <chrono>
#include <cstdio>

#include "page_archive_test_support.hpp"
#include "vtpage/streaming/layout/texture_layout.hpp"
#include "vtpage/streaming/sources/procedural_source.hpp"

namespace vtpage::vt {
namespace {

using Pages = std::vector<std::vector<std::byte>>;

// Pages spread over a 16Ki x 16Ki procedural texture: mip 0 through the tail.
Pages procedural_pages(std::size_t count) {
    const ProceduralSource source(ProceduralSettings{7, 14});
    const std::uint64_t page_count = TextureLayout(14).page_count;
    Pages pages(count, std::vector<std::byte>(page_bytes));
    for (std::size_t i = 0; i < count; ++i) source.fill_host(i * page_count / count, pages[i]);
    return pages;
}

struct Measurement {
    double ratio = 0, compress_mbs = 0, decompress_mbs = 0;
    bool all_shrink = true;
};

Measurement measure(const Pages& pages, int level) {
    using clock = std::chrono::steady_clock;
    ZSTD_CCtx* cctx = ZSTD_createCCtx();
    ZSTD_DCtx* dctx = ZSTD_createDCtx();
    std::vector<std::byte> frame(ZSTD_compressBound(page_bytes)), out(page_bytes);
    double compress_s = 0, decompress_s = 0, stored = 0;
    Measurement m;
    for (const auto& page : pages) {
        const auto start = clock::now();
        const std::size_t size =
            ZSTD_compressCCtx(cctx, frame.data(), frame.size(), page.data(), page.size(), level);
        const auto middle = clock::now();
        const std::size_t back =
            ZSTD_decompressDCtx(dctx, out.data(), out.size(), frame.data(), size);
        const auto end = clock::now();
        EXPECT_EQ(back, page.size());
        EXPECT_TRUE(out == page);
        compress_s += std::chrono::duration<double>(middle - start).count();
        decompress_s += std::chrono::duration<double>(end - middle).count();
        stored += double(std::min<std::size_t>(size, page.size()));  // raw when it does not shrink
        m.all_shrink = m.all_shrink && size < page.size();
    }
    ZSTD_freeCCtx(cctx);
    ZSTD_freeDCtx(dctx);
    const double bytes = double(pages.size() * page_bytes);
    m.ratio = bytes / stored;
    m.compress_mbs = bytes / 1e6 / compress_s;
    m.decompress_mbs = bytes / 1e6 / decompress_s;
    return m;
}

TEST(PageArchiveZstdLevels, DISABLED_PrintsTheTable) {
    const Pages procedural = procedural_pages(16);
    Pages random;
    for (std::uint64_t i = 0; i < 4; ++i) random.push_back(test::random_page(page_bytes, i));
    std::printf("level  ratio  compress MB/s  decompress MB/s   random: ratio  compress MB/s\n");
    for (int level : {-10, -5, -3, -1, 1, 3, 6, 9, 19}) {
        const Measurement p = measure(procedural, level), r = measure(random, level);
        EXPECT_TRUE(p.all_shrink);
        EXPECT_FALSE(r.all_shrink) << "random pages do not shrink: they are stored raw";
        std::printf("%5d  %5.2f  %13.0f  %15.0f   %13.2f  %13.0f\n", level, p.ratio, p.compress_mbs,
                    p.decompress_mbs, r.ratio, r.compress_mbs);
    }
}

}  // namespace
}  // namespace vtpage::vt
