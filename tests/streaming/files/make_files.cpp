// Writes the baked files of tests/streaming/files with the writers of the commit that wrote
// format versions 1 and 2 (before version 3 existed), and prints the checksum64 of every page
// as read back then (expected_pages.txt). Not part of the build: the files are kept as written
// then, so that a later reader is tested against what an earlier writer made. Built once by hand
// against that commit's libraries (from the repository's root, its build in build/):
//   c++ -std=c++20 -Iengine/include -Iengine -Ibuild/include tests/streaming/files/make_files.cpp
//       build/engine/{streaming,core,backend,base}/libvtpage_*.a -lzstd -luring
//       (and CUDA's libcudart_static.a -ldl -lrt where the build has CUDA) -pthread
//   ./a.out tests/streaming/files > tests/streaming/files/expected_pages.txt (then the header
//   line, and zstd -19 on the version-1 file)
#include <cstdio>
#include <string>
#include <vector>

#include "vtpage/streaming/archive/checksum64.hpp"
#include "vtpage/streaming/archive/page_archive.hpp"
#include "vtpage/streaming/sources/baked_texture.hpp"
#include "vtpage/streaming/sources/baked_texture_archive.hpp"
#include "vtpage/streaming/sources/baked_texture_descriptor.hpp"

using namespace vtpage::vt;

// The bytes of a version-2 page, as legacy_files_test.cpp recomputes them.
static std::byte pattern_byte(std::uint64_t page, std::uint64_t i) {
    return std::byte((i >> 6) ^ (page * 37) ^ ((i & 63) * 3));
}

static void write_v2(const std::string& path, TextureShape shape) {
    const BakedTextureDescriptor d = make_baked_texture_descriptor(shape, 8);
    const PageArchiveShape archive = baked_archive_shape(shape);
    PageArchiveWriter writer(path, archive, std::as_bytes(std::span(&d, 1)));
    std::vector<std::byte> page(archive.page_bytes);
    for (std::uint64_t p = 0; p < archive.page_count; ++p) {
        for (std::uint64_t i = 0; i < page.size(); ++i) page[i] = pattern_byte(p, i);
        writer.add_page(p, page);
    }
    writer.finish();
}

static void write_v1(const std::string& path, std::uint32_t width, std::uint32_t height) {
    RgbaImage image{width, height, std::vector<std::uint8_t>(std::size_t(width) * height * 4)};
    for (std::uint32_t y = 0; y < height; ++y) {
        for (std::uint32_t x = 0; x < width; ++x) {
            std::uint8_t* t = &image.texels[(std::size_t(y) * width + x) * 4];
            t[0] = std::uint8_t(x), t[1] = std::uint8_t(y), t[2] = std::uint8_t((x + y) / 8);
            t[3] = 255;
        }
    }
    bake_texture(image, path);
}

static void print_pages(const std::string& name, const std::string& path) {
    std::vector<std::byte> page(format_page_bytes + 1024 * 1024);
    if (baked_file_version(path) == 1) {
        const BakedTextureFile file(path);
        page.resize(file.header().page_bytes);
        for (std::uint64_t p = 0; p < file.header().page_count; ++p) {
            file.read_page(p, page);
            std::printf("%s %llu %016llx\n", name.c_str(), (unsigned long long)p,
                        (unsigned long long)checksum64(page));
        }
        return;
    }
    const BakedTextureArchive file(path);
    page.resize(file.archive().shape().page_bytes);
    for (std::uint64_t p = 0; p < file.archive().shape().page_count; ++p) {
        file.read_page(p, page);
        std::printf("%s %llu %016llx\n", name.c_str(), (unsigned long long)p,
                    (unsigned long long)checksum64(page));
    }
}

int main(int argc, char** argv) {
    const std::string folder = argc > 1 ? argv[1] : ".";
    write_v1(folder + "/v1-rgba8-500x300.vtex", 500, 300);
    write_v2(folder + "/v2-rgba8-700x500.vtex", {700, 500, TileFormat::rgba8});
    write_v2(folder + "/v2-bc1-2000x1500.vtex", {2000, 1500, TileFormat::bc1});
    print_pages("v1-rgba8-500x300.vtex", folder + "/v1-rgba8-500x300.vtex");
    print_pages("v2-rgba8-700x500.vtex", folder + "/v2-rgba8-700x500.vtex");
    print_pages("v2-bc1-2000x1500.vtex", folder + "/v2-bc1-2000x1500.vtex");
}
