// Writes the version-3 files of tests/streaming/files with the writer of the commit before
// version 4 existed, and prints the checksum64 of every page as read back then (appended to
// expected_pages.txt). Not part of the build: the files are kept as written then, so that a later
// reader is tested against what the version-3 writer made. Built once by hand against that
// commit's libraries (from the repository's root, its build in build/):
//   c++ -std=c++20 -Iengine/include -Iengine -Ibuild/include
//   tests/streaming/files/make_files_v3.cpp
//       build/engine/{streaming,core,backend,base}/libvtpage_*.a -lzstd -luring -lxxhash
//       (and CUDA's libcudart_static.a -ldl -lrt where the build has CUDA) -pthread
//   ./a.out tests/streaming/files >> tests/streaming/files/expected_pages.txt
#include <cstdio>
#include <string>
#include <vector>

#include "vtpage/streaming/archive/checksum64.hpp"
#include "vtpage/streaming/archive/page_archive.hpp"
#include "vtpage/streaming/sources/baked_texture_archive.hpp"
#include "vtpage/streaming/sources/baked_texture_descriptor.hpp"

using namespace vtpage::vt;

// The bytes of a page, as legacy_files_test.cpp recomputes them (as in make_files.cpp).
static std::byte pattern_byte(std::uint64_t page, std::uint64_t i) {
    return std::byte((i >> 6) ^ (page * 37) ^ ((i & 63) * 3));
}

// Bytes zstd cannot shrink, so that the page is stored raw.
static void fill_random(std::vector<std::byte>& page, std::uint64_t seed) {
    std::uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
    for (std::byte& b : page) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        b = std::byte(x >> 24);
    }
}

static void write_v3(const std::string& path, TextureShape shape, TextureSampling sampling,
                     std::uint64_t random_page) {
    const BakedTextureDescriptor d = make_baked_texture_descriptor(shape, 8, sampling);
    const PageArchiveShape archive = baked_archive_shape(shape);
    PageArchiveWriter writer(path, archive, std::as_bytes(std::span(&d, 1)));
    std::vector<std::byte> page(archive.page_bytes);
    for (std::uint64_t p = 0; p < archive.page_count; ++p) {
        for (std::uint64_t i = 0; i < page.size(); ++i) page[i] = pattern_byte(p, i);
        if (p == random_page) fill_random(page, p);
        writer.add_page(p, page);
    }
    writer.finish();
}

static void print_pages(const std::string& name, const std::string& path) {
    const BakedTextureArchive file(path);
    std::vector<std::byte> page(file.archive().shape().page_bytes);
    for (std::uint64_t p = 0; p < file.archive().shape().page_count; ++p) {
        file.read_page(p, page);
        std::printf("%s %llu %016llx\n", name.c_str(), (unsigned long long)p,
                    (unsigned long long)checksum64(page));
    }
}

int main(int argc, char** argv) {
    const std::string folder = argc > 1 ? argv[1] : ".";
    write_v3(folder + "/v3-rgba8-700x500.vtex", {700, 500, TileFormat::rgba8},
             {AddressMode::repeat, AddressMode::mirrored_repeat, ColorSpace::srgb}, ~0ull);
    write_v3(folder + "/v3-bc4-2000x1500.vtex", {2000, 1500, TileFormat::bc4},
             {AddressMode::clamp_to_edge, AddressMode::repeat, ColorSpace::linear}, 1);
    print_pages("v3-rgba8-700x500.vtex", folder + "/v3-rgba8-700x500.vtex");
    print_pages("v3-bc4-2000x1500.vtex", folder + "/v3-bc4-2000x1500.vtex");
}
