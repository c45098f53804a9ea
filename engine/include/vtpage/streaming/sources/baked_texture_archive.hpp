// Baked textures of versions 2 and 3: a page archive (page_archive.hpp, checksummed
// zstd-compressed pages) whose descriptor is a BakedTextureDescriptor. The texture is the
// image's W x H in any tile format (no padding), laid out by TextureLayout; version 3 also
// records how it is sampled (address modes, colour space).
//
// Errors: as PageArchive (io_error for a file that cannot be opened or is not a regular file,
// corrupt_data naming the page for damaged bytes), and corrupt_data naming the field for a
// descriptor that does not describe the archive.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "vtpage/streaming/archive/page_archive.hpp"
#include "vtpage/streaming/layout/texture_layout.hpp"
#include "vtpage/streaming/sources/baked_texture_descriptor.hpp"

namespace vtpage::vt {

// The version of the baked texture at path, from its first 12 bytes: 1 for "VTPGBAKE"
// (BakedTextureFile), 2 or 3 for "VTPGPACK" of that version (BakedTextureArchive). io_error when
// it cannot be opened or is not a regular file, corrupt_data for a file too short, with another
// magic or another archive version.
int baked_file_version(const std::string& path);

class BakedTextureArchive {
public:
    explicit BakedTextureArchive(const std::string& path);

    const std::string& path() const noexcept { return archive_.path(); }
    const PageArchive& archive() const noexcept { return archive_; }
    const BakedTextureDescriptor& descriptor() const noexcept { return descriptor_; }
    // 2 or 3: the archive's format version.
    std::uint32_t version() const noexcept { return archive_.version(); }
    // How the texture is sampled (version 2: clamp to edge, linear).
    TextureSampling sampling() const noexcept { return descriptor_.sampling(); }
    TextureShape shape() const noexcept {
        return {descriptor_.width, descriptor_.height, TileFormat(descriptor_.format)};
    }
    TextureLayout layout() const noexcept { return TextureLayout(shape()); }

    // Reads, verifies and decompresses one page (2 MiB) into destination.
    void read_page(std::uint64_t page, std::span<std::byte> destination) const {
        archive_.read_page(page, destination);
    }
    // Reads and verifies every page; progress(fraction) after each.
    void check_all(const std::function<void(double fraction)>& progress = {}) const {
        archive_.check_all(progress);
    }

private:
    PageArchive archive_;
    BakedTextureDescriptor descriptor_;
};

}  // namespace vtpage::vt
