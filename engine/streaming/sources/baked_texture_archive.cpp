#include "vtpage/streaming/sources/baked_texture_archive.hpp"

#include <algorithm>
#include <cstring>

#include "streaming/archive/file_io.hpp"
#include "vtpage/base/error.hpp"
#include "vtpage/streaming/sources/baked_texture.hpp"

namespace vtpage::vt {

int baked_file_version(const std::string& path) {
    std::uint64_t file_size = 0;
    const UniqueFd fd = file_io::open_regular_file(path, "baked_file_version", file_size);
    // The magic, and for a page archive the version after it (PageArchive checks it further).
    char start[12] = {};
    const std::size_t wanted = std::min<std::uint64_t>(file_size, sizeof(start));
    if (file_size < sizeof(baked_magic) ||
        !file_io::read_exact(fd.get(), start, wanted, 0, "baked_file_version", path)) {
        throw Error(
            Errc::corrupt_data, "baked_file_version",
            detail::concat("truncated: the file has ", file_size, " bytes, too few for a magic"),
            detail::concat("path=", path));
    }
    if (std::memcmp(start, baked_magic, sizeof(baked_magic)) == 0) return 1;
    if (wanted < sizeof(start)) {  // a page archive's version does not fit
        throw Error(Errc::corrupt_data, "baked_file_version",
                    detail::concat("truncated: the file has ", file_size,
                                   " bytes, too few for a magic and a version"),
                    detail::concat("path=", path));
    }
    std::uint32_t version = 0;
    std::memcpy(&version, start + sizeof(page_archive_magic), sizeof(version));
    if (std::memcmp(start, page_archive_magic, sizeof(page_archive_magic)) != 0) {
        throw Error(Errc::corrupt_data, "baked_file_version",
                    detail::concat("bad magic: not a vtpage baked texture (version 1 to ",
                                   page_archive_version, ")"),
                    detail::concat("path=", path));
    }
    if (version < page_archive_oldest_version || version > page_archive_version) {
        throw Error(Errc::corrupt_data, "baked_file_version",
                    detail::concat("unsupported version ", version, " (this build reads versions ",
                                   page_archive_oldest_version, " to ", page_archive_version, ")"),
                    detail::concat("path=", path));
    }
    return int(version);
}

BakedTextureArchive::BakedTextureArchive(const std::string& path)
    : archive_(path),
      descriptor_(check_baked_texture_descriptor(archive_.descriptor(), archive_.shape(),
                                                 archive_.version(), path)) {}

}  // namespace vtpage::vt
