// The textures of a texture set (--texture DIR or --texture set.json, docs/viewer.md), opened
// before any device work so that bad input is said at once: a UsageError (exit 2) naming the file
// or what is wrong with the manifest.
//
// A folder: every regular file in it, sorted by name, each a baked texture (vtpage-bake).
// A manifest (a file named *.json):
//   {"textures": ["a.vtex", "maps/b.vtex", {"procedural": {"size_log2": 12, "seed": 3}}]}
// with paths relative to the manifest's folder; a procedural entry takes size_log2 (8..20), and
// optionally seed (default 3) and format ("rgba8", "bc1", "bc3"). Nothing else is accepted:
// unknown keys, other types, fractions, numbers out of range, an empty list, a manifest larger
// than max_manifest_bytes or nested deeper than max_manifest_depth (both checked before parsing),
// a path holding a NUL byte or longer than max_manifest_path_bytes, a path that is not a regular
// file (a folder, FIFO, device, socket, a loop of links). Entries naming the same file share one
// open file and one source. Messages quote at most 80 characters of an offending value.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "usage_error.hpp"
#include "vtpage/streaming/sources/tile_source.hpp"

namespace vtpage::viewer {

// The texture directory's size (VulkanTextureDirectorySettings::max_textures, which the viewer
// sets to the set's size): a thousand textures' packed tails fit a 1 GiB budget.
inline constexpr std::size_t max_set_textures = 4096;
// The pages of a whole set: 64 TiB of address space, what one page table region spans.
inline constexpr std::uint64_t max_set_pages = std::uint64_t(1) << 25;

// The largest manifest read (4096 entries of paths of up to 1 KiB), its deepest nesting of lists
// and objects (a valid manifest nests 3 deep), and the longest path of an entry (PATH_MAX).
inline constexpr std::uint64_t max_manifest_bytes = std::uint64_t(4) << 20;
inline constexpr std::size_t max_manifest_depth = 8;
inline constexpr std::size_t max_manifest_path_bytes = 4096;

// Whether a --texture value names a set: a folder, or a file named *.json.
bool is_texture_set(const std::string& texture);

// The set's textures, in order. UsageError for a folder or manifest that cannot be read, a file
// that does not open as a baked texture, a bad manifest, no textures, more than max_set_textures
// or more than max_set_pages pages.
std::vector<std::shared_ptr<const vt::TileSource>> open_texture_set(const std::string& path);

// A baked texture file; UsageError naming it when it cannot be opened or is not one.
std::shared_ptr<const vt::TileSource> open_baked_texture(const std::string& path);

}  // namespace vtpage::viewer
