#include "vtpage/streaming/sources/baked_texture_archive.hpp"

#include <cstring>

#include "streaming/archive/file_io.hpp"
#include "vtpage/base/error.hpp"
#include "vtpage/streaming/sources/baked_texture.hpp"

namespace vtpage::vt {

int baked_file_version(const std::string& path) {
    std::uint64_t file_size = 0;
    const UniqueFd fd = file_io::open_regular_file(path, "baked_file_version", file_size);
    char magic[8] = {};
    if (file_size < sizeof(magic) ||
        !file_io::read_exact(fd.get(), magic, sizeof(magic), 0, "baked_file_version", path)) {
        throw Error(
            Errc::corrupt_data, "baked_file_version",
            detail::concat("truncated: the file has ", file_size, " bytes, too few for a magic"),
            detail::concat("path=", path));
    }
    if (std::memcmp(magic, baked_magic, sizeof(magic)) == 0) return 1;
    if (std::memcmp(magic, page_archive_magic, sizeof(magic)) == 0) return 2;
    throw Error(Errc::corrupt_data, "baked_file_version",
                "bad magic: not a vtpage baked texture (version 1 or 2)",
                detail::concat("path=", path));
}

BakedTextureArchive::BakedTextureArchive(const std::string& path)
    : archive_(path),
      descriptor_(check_baked_texture_descriptor(archive_.descriptor(), archive_.shape(), path)) {}

}  // namespace vtpage::vt
