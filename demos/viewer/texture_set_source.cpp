#include "texture_set_source.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <utility>

#include "vtpage/base/error.hpp"
#include "vtpage/base/system_error.hpp"
#include "vtpage/base/unique_fd.hpp"
#include "vtpage/streaming/layout/texture_layout.hpp"
#include "vtpage/streaming/sources/baked_texture.hpp"
#include "vtpage/streaming/sources/procedural_source.hpp"

namespace vtpage::viewer {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using Sources = std::vector<std::shared_ptr<const vt::TileSource>>;

const std::map<std::string, vt::TileFormat> procedural_formats = {
    {"rgba8", vt::TileFormat::rgba8},
    {"bc1", vt::TileFormat::bc1},
    {"bc3", vt::TileFormat::bc3},
};

// At most this much of an offending value goes into a message.
constexpr std::size_t excerpt_chars = 80;

std::string bounded(std::string text) {
    if (text.size() <= excerpt_chars) return text;
    text.resize(excerpt_chars);
    return text + "... (" + "cut at " + std::to_string(excerpt_chars) + " characters)";
}

// A value as the manifest wrote it, cut to a bounded excerpt (the manifest's depth is capped, so
// dumping it is bounded too).
std::string excerpt(const Json& value) { return bounded(value.dump()); }

// Every key of `object` is one of `allowed`.
void check_keys(const Json& object, const std::set<std::string>& allowed,
                const std::string& where) {
    for (const auto& [key, value] : object.items()) {
        if (allowed.count(key)) continue;
        std::string names;
        for (const std::string& name : allowed) {
            if (!names.empty()) names += ", ";
            names += name;
        }
        throw UsageError(
            detail::concat(where, ": unknown key '", bounded(key), "' (known: ", names, ")"));
    }
}

// A whole number in [low, high]; nlohmann keeps fractions, exponents and negative numbers apart
// from unsigned integers, so each of them is refused by its type.
std::uint64_t whole_number(const Json& value, const std::string& where, std::uint64_t low,
                           std::uint64_t high) {
    const std::string range = std::to_string(low) + " to " + std::to_string(high);
    if (!value.is_number_unsigned() || value.get<std::uint64_t>() < low ||
        value.get<std::uint64_t>() > high) {
        throw UsageError(where + " must be a whole number from " + range + ", not " +
                         excerpt(value));
    }
    return value.get<std::uint64_t>();
}

std::shared_ptr<const vt::TileSource> procedural_entry(const Json& settings,
                                                       const std::string& where) {
    if (!settings.is_object()) {
        throw UsageError(where + " must be an object such as {\"size_log2\": 12}, not " +
                         excerpt(settings));
    }
    check_keys(settings, {"format", "seed", "size_log2"}, where);
    if (!settings.contains("size_log2")) throw UsageError(where + ": size_log2 is missing");
    vt::ProceduralSettings procedural{.seed = 3};
    procedural.size_log2 = std::uint32_t(
        whole_number(settings["size_log2"], where + ": size_log2", 8, vt::max_size_log2));
    if (settings.contains("seed")) {
        procedural.seed =
            std::uint32_t(whole_number(settings["seed"], where + ": seed", 0, UINT32_MAX));
    }
    if (settings.contains("format")) {
        const Json& format = settings["format"];
        if (!format.is_string() || !procedural_formats.count(format.get<std::string>())) {
            throw UsageError(where + ": format must be \"rgba8\", \"bc1\" or \"bc3\", not " +
                             excerpt(format));
        }
        procedural.format = procedural_formats.at(format.get<std::string>());
    }
    return std::make_shared<vt::ProceduralSource>(procedural);
}

// The files a manifest names, by device and inode: entries naming the same file (through any
// name or link) share one open file and one source.
using OpenFiles = std::map<std::pair<dev_t, ino_t>, std::shared_ptr<const vt::TileSource>>;

// What is wrong with a path as a texture file, in words for a message; empty for a regular file,
// whose device and inode are then in `status`.
std::string not_a_file(const std::string& path, struct stat& status) {
    if (::stat(path.c_str(), &status) != 0) {
        const int error = errno;
        if (error == ELOOP) return "a loop of symbolic links";
        if (error == ENOENT) return "no such file";
        return errno_message(error);
    }
    if (S_ISDIR(status.st_mode)) return "a folder, not a baked texture file";
    if (!S_ISREG(status.st_mode)) return "not a regular file (a FIFO, device or socket)";
    return {};
}

std::shared_ptr<const vt::TileSource> file_entry(const std::string& name, const fs::path& folder,
                                                 const std::string& where, OpenFiles& files) {
    if (name.empty()) throw UsageError(where + " is an empty path");
    if (name.find('\0') != std::string::npos) {
        throw UsageError(where + ": the path " + excerpt(Json(name)) + " holds a NUL byte");
    }
    if (name.size() > max_manifest_path_bytes) {
        throw UsageError(detail::concat(where, ": a path of ", name.size(),
                                        " bytes, more than the ", max_manifest_path_bytes,
                                        " a path may have"));
    }
    const fs::path path(name);
    const std::string full = (path.is_absolute() ? path : folder / path).string();
    struct stat status {};
    if (const std::string problem = not_a_file(full, status); !problem.empty()) {
        throw UsageError(where + ": cannot use " + bounded(full) + " as a texture: " + problem);
    }
    auto& source = files[{status.st_dev, status.st_ino}];
    if (!source) {
        try {
            source = open_baked_texture(full);
        } catch (const UsageError& error) {
            throw UsageError(where + ": " + error.what());
        }
    }
    return source;
}

std::shared_ptr<const vt::TileSource> manifest_entry(const Json& entry, const fs::path& folder,
                                                     const std::string& where, OpenFiles& files) {
    if (entry.is_string()) return file_entry(entry.get<std::string>(), folder, where, files);
    if (entry.is_object()) {
        check_keys(entry, {"procedural"}, where);
        if (entry.size() != 1) throw UsageError(where + " is an empty object");
        return procedural_entry(entry["procedural"], where + ": procedural");
    }
    throw UsageError(where + " must be a file name or {\"procedural\": {...}}, not " +
                     excerpt(entry));
}

// The deepest nesting of brackets in JSON text (outside its strings).
std::size_t nesting_depth(const std::string& text) {
    std::size_t depth = 0, deepest = 0;
    bool in_string = false, escaped = false;
    for (const char c : text) {
        if (in_string) {
            if (escaped) {
                escaped = false;
            } else if (c == '\\') {
                escaped = true;
            } else if (c == '"') {
                in_string = false;
            }
            continue;
        }
        if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            deepest = std::max(deepest, ++depth);
            if (deepest > max_manifest_depth) return deepest;  // enough to refuse it
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return deepest;
}

// The manifest's bytes: a regular file of at most max_manifest_bytes, checked before reading.
std::string read_manifest_text(const std::string& path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    struct stat status {};
    if (!fd || ::fstat(fd.get(), &status) != 0) {
        const int error = errno;
        throw UsageError("cannot read the texture set manifest " + path + ": " +
                         (error == ELOOP ? "a loop of symbolic links" : errno_message(error)));
    }
    if (!S_ISREG(status.st_mode)) {
        throw UsageError("the texture set manifest " + path +
                         " is not a regular file (a FIFO, device or socket)");
    }
    if (std::uint64_t(status.st_size) > max_manifest_bytes) {
        throw UsageError(detail::concat("the texture set manifest ", path, " has ", status.st_size,
                                        " bytes, more than the ", max_manifest_bytes,
                                        " a manifest may have"));
    }
    std::string text(std::size_t(status.st_size), '\0');
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t got = ::read(fd.get(), text.data() + done, text.size() - done);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        done += std::size_t(got);
    }
    text.resize(done);
    return text;
}

Json read_manifest(const std::string& path) {
    const std::string text = read_manifest_text(path);
    if (nesting_depth(text) > max_manifest_depth) {
        throw UsageError(detail::concat("the texture set manifest ", path, " nests more than ",
                                        max_manifest_depth, " levels deep"));
    }
    Json manifest = Json::parse(text, nullptr, false);
    if (manifest.is_discarded()) {
        throw UsageError("the texture set manifest " + path + " is not JSON");
    }
    if (!manifest.is_object()) {
        throw UsageError(path + " must be an object such as {\"textures\": [...]}, not " +
                         excerpt(manifest));
    }
    check_keys(manifest, {"textures"}, path);
    if (!manifest.contains("textures")) throw UsageError(path + ": \"textures\" is missing");
    const Json& textures = manifest["textures"];
    if (!textures.is_array()) throw UsageError(path + ": \"textures\" must be a list");
    if (textures.empty()) throw UsageError(path + ": \"textures\" lists no texture");
    if (textures.size() > max_set_textures) {
        throw UsageError(detail::concat(path, ": \"textures\" lists ", textures.size(),
                                        " textures, at most ", max_set_textures, " are allowed"));
    }
    return manifest;
}

Sources open_manifest(const std::string& path) {
    const Json manifest = read_manifest(path);
    const fs::path folder = fs::path(path).parent_path();
    Sources sources;
    OpenFiles files;
    const Json& textures = manifest["textures"];
    for (std::size_t i = 0; i < textures.size(); ++i) {
        sources.push_back(manifest_entry(textures[i], folder,
                                         path + ": textures[" + std::to_string(i) + "]", files));
    }
    return sources;
}

Sources open_folder(const std::string& path) {
    std::vector<fs::path> files;
    std::error_code error;
    for (fs::directory_iterator it(path, error), end; !error && it != end; it.increment(error)) {
        std::error_code kind;
        if (it->is_regular_file(kind)) {
            files.push_back(it->path());
        } else if (kind) {  // a link that leads nowhere it can follow (a loop): said, not skipped
            throw UsageError("cannot use " + it->path().string() + " in the folder " + path + ": " +
                             (kind.value() == ELOOP ? "a loop of symbolic links" : kind.message()));
        }
    }
    if (error) throw UsageError("cannot read the folder " + path + ": " + error.message());
    if (files.empty()) throw UsageError("the folder " + path + " holds no texture file");
    if (files.size() > max_set_textures) {
        throw UsageError(detail::concat("the folder ", path, " holds ", files.size(),
                                        " files, at most ", max_set_textures, " are allowed"));
    }
    std::sort(files.begin(), files.end());
    Sources sources;
    for (const fs::path& file : files) sources.push_back(open_baked_texture(file.string()));
    return sources;
}

}  // namespace

bool is_texture_set(const std::string& texture) {
    std::error_code ignored;  // a loop or a missing file is no folder; opening it says why
    return fs::is_directory(texture, ignored) || fs::path(texture).extension() == ".json";
}

std::vector<std::shared_ptr<const vt::TileSource>> open_texture_set(const std::string& path) {
    std::error_code ignored;
    Sources sources = fs::is_directory(path, ignored) ? open_folder(path) : open_manifest(path);
    std::uint64_t pages = 0;
    for (const auto& source : sources) pages += vt::TextureLayout(source->shape()).page_count;
    if (pages > max_set_pages) {
        throw UsageError(detail::concat("the texture set ", path, " has ", pages,
                                        " pages, more than the ", max_set_pages,
                                        " (64 TiB) a set may have"));
    }
    return sources;
}

std::shared_ptr<const vt::TileSource> open_baked_texture(const std::string& path) {
    try {
        return std::make_shared<vt::BakedFileSource>(path);
    } catch (const Error& error) {
        if (error.code() == Errc::io_error || error.code() == Errc::corrupt_data) {
            throw UsageError("cannot use " + path + " as a texture: " + error.what());
        }
        throw;
    }
}

}  // namespace vtpage::viewer
