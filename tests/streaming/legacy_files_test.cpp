// Files of the older format versions keep opening: baked files written by the writers of
// versions 1, 2 and 3 (tests/streaming/files, made by make_files.cpp and make_files_v3.cpp there
// and committed as they were written, never regenerated) are opened by today's reader and every
// page is compared with what was read back when they were written, and for versions 2 and 3 with
// the pattern they were written from, tile by tile (but the one page of random bytes, stored
// raw).
#include <gtest/gtest.h>

#include <zstd.h>

#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "../support/temporary_folder.hpp"
#include "page_archive_test_support.hpp"
#include "vtpage/streaming/archive/checksum64.hpp"
#include "vtpage/streaming/sources/baked_texture.hpp"
#include "vtpage/streaming/sources/baked_texture_archive.hpp"
#include "vtpage/streaming/sources/baked_texture_descriptor.hpp"

namespace vtpage::vt {
namespace {

const std::string files_folder = VTPAGE_LEGACY_FILES_DIR;

// The bytes of page `page` of the version-2 files (make_files.cpp's pattern_byte).
std::byte pattern_byte(std::uint64_t page, std::uint64_t i) {
    return std::byte((i >> 6) ^ (page * 37) ^ ((i & 63) * 3));
}

// make_files_v3.cpp's sampling per file: versions 1 and 2 read as the defaults.
TextureSampling expected_sampling(const std::string& file) {
    if (file == "v3-rgba8-700x500.vtex") {
        return {AddressMode::repeat, AddressMode::mirrored_repeat, ColorSpace::srgb};
    }
    if (file == "v3-bc4-2000x1500.vtex") return {AddressMode::clamp_to_edge, AddressMode::repeat};
    return {};
}
// The page of random bytes that the version-3 writer stored raw.
const std::string random_page_file = "v3-bc4-2000x1500.vtex";
constexpr std::uint64_t random_page = 1;

struct ExpectedPage {
    std::string file;
    std::uint64_t page = 0;
    std::uint64_t checksum = 0;
};

std::vector<ExpectedPage> expected_pages() {
    std::ifstream in(files_folder + "/expected_pages.txt");
    std::vector<ExpectedPage> pages;
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream fields(line);
        ExpectedPage e;
        fields >> e.file >> e.page >> std::hex >> e.checksum;
        pages.push_back(e);
    }
    return pages;
}

// The file as written: version-1 files are kept zstd-compressed (their pages are stored raw).
std::string unpacked(const std::string& name, const test::TemporaryFolder& folder) {
    const std::string packed = files_folder + "/" + name + ".zst";
    const std::vector<std::byte> frame = test::read_file(packed);
    if (frame.empty()) return files_folder + "/" + name;
    const unsigned long long size = ZSTD_getFrameContentSize(frame.data(), frame.size());
    EXPECT_LT(size, 1ull << 30) << packed;
    std::vector<std::byte> bytes(size);
    EXPECT_EQ(ZSTD_decompress(bytes.data(), bytes.size(), frame.data(), frame.size()), size);
    const std::string path = folder.file(name);
    test::write_file(path, bytes);
    return path;
}

TEST(BakedLegacyFilesTest, EveryPageOfTheCommittedFilesReadsAsWritten) {
    const std::vector<ExpectedPage> pages = expected_pages();
    ASSERT_GE(pages.size(), 6u) << files_folder;
    test::TemporaryFolder folder;
    std::map<std::string, std::unique_ptr<BakedFileSource>> sources;
    std::vector<std::byte> page(page_bytes + 256 * 1024);  // a version-1 page is larger
    std::set<int> versions;
    for (const ExpectedPage& e : pages) {
        auto& source = sources[e.file];
        if (!source) source = std::make_unique<BakedFileSource>(unpacked(e.file, folder));
        const int version = source->version();
        versions.insert(version);
        EXPECT_EQ("v" + std::to_string(version), e.file.substr(0, 2)) << e.file;
        EXPECT_EQ(source->sampling(), expected_sampling(e.file)) << e.file;
        const std::span<std::byte> out = std::span(page).first(
            version == 1 ? BakedTextureFile(source->name()).header().page_bytes : page_bytes);
        source->fill_host(e.page, out);
        EXPECT_EQ(checksum64(out), e.checksum) << e.file << " page " << e.page;
        if (version == 1 || (e.file == random_page_file && e.page == random_page)) continue;
        const TileFormatInfo info = tile_format_info(source->shape().format);
        for (std::uint32_t t = 0; t < info.tiles_per_page(); ++t) {
            const std::uint64_t first = std::uint64_t(t) * info.tile_bytes();
            for (std::uint64_t i = first; i < first + info.tile_bytes(); ++i) {
                if (out[i] != pattern_byte(e.page, i)) {
                    ADD_FAILURE() << e.file << " page " << e.page << " tile " << t << " byte " << i;
                    break;
                }
            }
        }
    }
    EXPECT_EQ(versions, (std::set<int>{1, 2, 3}));
    EXPECT_EQ(sources.size(), 5u);
}

TEST(BakedLegacyFilesTest, TheCommittedFilesCheckClean) {
    test::TemporaryFolder folder;
    const std::string v1 = unpacked("v1-rgba8-500x300.vtex", folder);
    BakedTextureFile(v1).check_all();
    for (const char* name : {"v2-rgba8-700x500.vtex", "v2-bc1-2000x1500.vtex"}) {
        const BakedTextureArchive archive(files_folder + "/" + name);
        EXPECT_EQ(archive.version(), 2u) << name;
        archive.check_all();
    }
    for (const char* name : {"v3-rgba8-700x500.vtex", "v3-bc4-2000x1500.vtex"}) {
        const BakedTextureArchive archive(files_folder + "/" + name);
        EXPECT_EQ(archive.version(), 3u) << name;
        archive.check_all();
    }
    // The random page is stored raw, the others zstd-compressed, as the version-3 writer chose.
    const BakedTextureArchive v3(files_folder + "/" + random_page_file);
    EXPECT_EQ(v3.archive().stored_extent(random_page).encoding, PageEncoding::raw);
    EXPECT_EQ(v3.archive().stored_extent(0).encoding, PageEncoding::zstd);
}

// make_files_v3.cpp's bytes that zstd cannot shrink.
void fill_random(std::vector<std::byte>& page, std::uint64_t seed) {
    std::uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
    for (std::byte& b : page) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        b = std::byte(x >> 24);
    }
}

// Asked for version 3, today's writer writes the committed version-3 files byte for byte: the
// version-4 writer changed nothing in what it writes for readers of version 3.
TEST(BakedLegacyFilesTest, TheVersion3WriterStillWritesTheCommittedFiles) {
    struct File {
        const char* name;
        TextureShape shape;
        TextureSampling sampling;
        std::uint64_t random;
    };
    test::TemporaryFolder folder;
    for (const File& f : {File{"v3-rgba8-700x500.vtex",
                               {700, 500, TileFormat::rgba8},
                               expected_sampling("v3-rgba8-700x500.vtex"),
                               ~0ull},
                          File{"v3-bc4-2000x1500.vtex",
                               {2000, 1500, TileFormat::bc4},
                               expected_sampling("v3-bc4-2000x1500.vtex"),
                               random_page}}) {
        const BakedTextureDescriptor d = make_baked_texture_descriptor(f.shape, 8, f.sampling);
        const PageArchiveShape shape = baked_archive_shape(f.shape);
        const std::string path = folder.file(f.name);
        PageArchiveWriter writer(path, shape, std::as_bytes(std::span(&d, 1)), {.version = 3});
        std::vector<std::byte> page(shape.page_bytes);
        for (std::uint64_t p = 0; p < shape.page_count; ++p) {
            for (std::uint64_t i = 0; i < page.size(); ++i) page[i] = pattern_byte(p, i);
            if (p == f.random) fill_random(page, p);
            writer.add_page(p, page);
        }
        writer.finish();
        EXPECT_TRUE(test::read_file(path) == test::read_file(files_folder + "/" + f.name))
            << f.name;
    }
}

}  // namespace
}  // namespace vtpage::vt
