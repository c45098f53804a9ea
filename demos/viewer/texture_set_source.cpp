#include "texture_set_source.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "vtpage/base/error.hpp"
#include "vtpage/streaming/baked_texture.hpp"
#include "vtpage/streaming/procedural_source.hpp"
#include "vtpage/streaming/texture_layout.hpp"

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

// Every key of `object` is one of `allowed`.
void check_keys(const Json& object, const std::set<std::string>& allowed,
                const std::string& where) {
    for (const auto& [key, value] : object.items()) {
        if (allowed.count(key)) continue;
        std::string names;
        for (const std::string& name : allowed) names += (names.empty() ? "" : ", ") + name;
        throw UsageError(where + ": unknown key '" + key + "' (known: " + names + ")");
    }
}

// A whole number in [low, high]; nlohmann keeps fractions, exponents and negative numbers apart
// from unsigned integers, so each of them is refused by its type.
std::uint64_t whole_number(const Json& value, const std::string& where, std::uint64_t low,
                           std::uint64_t high) {
    const std::string range = std::to_string(low) + " to " + std::to_string(high);
    if (!value.is_number_unsigned() || value.get<std::uint64_t>() < low ||
        value.get<std::uint64_t>() > high) {
        throw UsageError(where + " must be a whole number from " + range + ", not " + value.dump());
    }
    return value.get<std::uint64_t>();
}

std::shared_ptr<const vt::TileSource> procedural_entry(const Json& settings,
                                                       const std::string& where) {
    if (!settings.is_object()) {
        throw UsageError(where + " must be an object such as {\"size_log2\": 12}, not " +
                         settings.dump());
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
                             format.dump());
        }
        procedural.format = procedural_formats.at(format.get<std::string>());
    }
    return std::make_shared<vt::ProceduralSource>(procedural);
}

std::shared_ptr<const vt::TileSource> manifest_entry(const Json& entry, const fs::path& folder,
                                                     const std::string& where) {
    if (entry.is_string()) {
        const fs::path path(entry.get<std::string>());
        if (path.empty()) throw UsageError(where + " is an empty path");
        try {
            return open_baked_texture((path.is_absolute() ? path : folder / path).string());
        } catch (const UsageError& error) {
            throw UsageError(where + ": " + error.what());
        }
    }
    if (entry.is_object()) {
        check_keys(entry, {"procedural"}, where);
        if (entry.size() != 1) throw UsageError(where + " is an empty object");
        return procedural_entry(entry["procedural"], where + ": procedural");
    }
    throw UsageError(where + " must be a file name or {\"procedural\": {...}}, not " +
                     entry.dump());
}

Json read_manifest(const std::string& path) {
    std::ifstream file(path);
    if (!file) throw UsageError("cannot read the texture set manifest " + path);
    Json manifest = Json::parse(file, nullptr, false);
    if (manifest.is_discarded()) {
        throw UsageError("the texture set manifest " + path + " is not JSON");
    }
    if (!manifest.is_object()) {
        throw UsageError(path + " must be an object such as {\"textures\": [...]}, not " +
                         manifest.dump());
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
    const Json& textures = manifest["textures"];
    for (std::size_t i = 0; i < textures.size(); ++i) {
        sources.push_back(
            manifest_entry(textures[i], folder, path + ": textures[" + std::to_string(i) + "]"));
    }
    return sources;
}

Sources open_folder(const std::string& path) {
    std::vector<fs::path> files;
    std::error_code error;
    for (fs::directory_iterator it(path, error), end; !error && it != end; it.increment(error)) {
        if (it->is_regular_file()) files.push_back(it->path());
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
    return fs::is_directory(texture) || fs::path(texture).extension() == ".json";
}

std::vector<std::shared_ptr<const vt::TileSource>> open_texture_set(const std::string& path) {
    Sources sources = fs::is_directory(path) ? open_folder(path) : open_manifest(path);
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
