#include "scene/scene_texture_cache.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <exception>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>

#include "vtpage/base/error.hpp"
#include "vtpage/streaming/archive/format_checksum.hpp"
#include "vtpage/streaming/sources/baked_texture_archive.hpp"

namespace vtpage::viewer {

namespace fs = std::filesystem;

namespace {

// Part of every cached file's key: raised when the bake makes other texels from the same image,
// so that the files baked before are baked again.
constexpr std::uint32_t bake_version = 2;

// One texture to bake, and the first slot that asked for it (named in its messages).
struct Request {
    std::uint32_t image = 0;
    vt::TileFormat format = vt::TileFormat::bc1;
    vt::TextureSampling sampling;
    std::size_t material = 0;
    MaterialSlot slot = MaterialSlot::base_colour;

    bool same_texture(const Request& other) const {
        return image == other.image && format == other.format && sampling == other.sampling;
    }
};

// Where a request's messages point: the scene, the material, the slot and the image.
class Where {
public:
    Where(const fs::path& scene_file, const GltfScene& scene, const Request& request)
        : scene_file_(scene_file), scene_(scene), request_(request) {}

    [[noreturn]] void fail(const std::string& what) const {
        const SceneMaterial& material = scene_.materials[request_.material];
        std::ostringstream message;
        message << scene_file_.string() << ": material " << request_.material;
        if (!material.name.empty()) message << " \"" << material.name << "\"";
        message << ", " << to_string(request_.slot) << " texture, image \""
                << scene_.images[request_.image].name << "\": " << what;
        throw SceneError(message.str());
    }

private:
    const fs::path& scene_file_;
    const GltfScene& scene_;
    const Request& request_;
};

vt::AddressMode to_vt(AddressMode mode) {
    switch (mode) {
        case AddressMode::mirrored_repeat:
            return vt::AddressMode::mirrored_repeat;
        case AddressMode::clamp_to_edge:
            return vt::AddressMode::clamp_to_edge;
        case AddressMode::repeat:
            break;
    }
    return vt::AddressMode::repeat;
}

// The image's identity in the cache's key, and when its file last changed (none for bytes
// embedded in the scene: their hash is their identity).
struct ImageSource {
    std::string identity;
    fs::path file;  // canonical; empty when embedded
    std::optional<fs::file_time_type> modified;
};

std::string hex(std::uint64_t value) {
    char text[17];
    std::snprintf(text, sizeof text, "%016" PRIx64, value);
    return text;
}

std::uint64_t hash_of(std::string_view text) {
    return vt::xxh3_64(std::as_bytes(std::span(text.data(), text.size())));
}

// An image file's bytes hashed in chunks, then the chunks' hashes: its identity wherever the
// scene's folder lies, so that a cache baked on one machine serves a copy of the scene on
// another.
std::uint64_t hash_file(const fs::path& file, std::uint64_t& size, const Where& where) {
    std::ifstream in(file, std::ios::binary);
    std::vector<char> chunk(std::size_t(8) << 20);
    std::vector<std::uint64_t> hashes;
    size = 0;
    while (in) {
        in.read(chunk.data(), std::streamsize(chunk.size()));
        const auto got = std::size_t(in.gcount());
        if (got == 0) break;
        size += got;
        hashes.push_back(vt::xxh3_64(std::as_bytes(std::span(chunk.data(), got))));
    }
    if (in.bad() || (!in.eof() && !in)) where.fail("cannot be read (" + file.string() + ")");
    return vt::xxh3_64(std::as_bytes(std::span(hashes)));
}

ImageSource source_of(const SceneImage& image, const Where& where) {
    if (image.path.empty()) {
        const std::uint64_t hash = vt::xxh3_64(std::as_bytes(std::span(image.embedded)));
        return {"embedded " + hex(hash) + " " + std::to_string(image.embedded.size()), {}, {}};
    }
    std::error_code error;
    const fs::path file = fs::canonical(image.path, error);
    if (error) where.fail("cannot be found (" + image.path.string() + "): " + error.message());
    const fs::file_time_type modified = fs::last_write_time(file, error);
    if (error) where.fail("cannot be read (" + file.string() + "): " + error.message());
    std::uint64_t size = 0;
    const std::uint64_t hash = hash_file(file, size, where);
    return {"file " + hex(hash) + " " + std::to_string(size), file, modified};
}

fs::path cache_file(const SceneTextureSettings& settings, const ImageSource& source,
                    const Request& request) {
    const std::string key =
        detail::concat("vtpage scene texture ", bake_version, '\n', source.identity, '\n',
                       unsigned(request.format), ' ', unsigned(request.sampling.address_u), ' ',
                       unsigned(request.sampling.address_v), ' ',
                       unsigned(request.sampling.color_space), ' ', unsigned(settings.quality));
    return settings.cache_dir / (hex(hash_of(key)) + ".vtex");
}

// A cached file is used where it opens as a baked texture of the format and sampling asked for
// and was written after its image last changed.
bool reusable(const fs::path& file, const Request& request, const ImageSource& source) {
    std::error_code error;
    const fs::file_time_type baked = fs::last_write_time(file, error);
    if (error) return false;
    if (source.modified && baked < *source.modified) return false;
    try {
        const vt::BakedTextureArchive archive(file.string());
        return archive.version() == vt::page_archive_version &&
               archive.shape().format == request.format && archive.sampling() == request.sampling;
    } catch (const Error&) {
        return false;  // cut short, damaged or not a baked texture: baked again
    }
}

// The file a bake writes before it is renamed into the cache: named for this process and this
// bake, so that no other bake writes it. A file of that name can only be a dead process's (one
// killed mid-bake, whose id this process now has), so it may be removed.
fs::path temporary_for(const fs::path& file) {
    static std::atomic<std::uint64_t> bakes{0};
    return detail::concat(file.string(), ".baking-", ::getpid(), "-", bakes++);
}

// Removes the file when it goes, unless it was renamed away.
struct RemovedAtEnd {
    fs::path path;
    ~RemovedAtEnd() {
        std::error_code ignored;
        fs::remove(path, ignored);
    }
};

void move_into_place(const fs::path& temporary, const fs::path& file) {
    std::error_code error;
    fs::rename(temporary, file, error);
    if (error) {
        throw Error(Errc::io_error, "bake_scene_textures",
                    "cannot move the baked texture into the cache: " + error.message(),
                    "path=" + file.string());
    }
}

// Bakes the request's image into file, through a temporary file renamed over it.
void bake_into(const fs::path& file, const SceneImage& image, const ImageSource& source,
               const Request& request, const SceneTextureSettings& settings, const Where& where) {
    if (!settings.baker) {
        throw Error(Errc::invalid_argument, "bake_scene_textures",
                    "a texture is not in the cache and no baker was given",
                    "path=" + file.string());
    }
    const RemovedAtEnd temporary{temporary_for(file)};
    std::error_code ignored;
    fs::remove(temporary.path.string() + ".partial", ignored);  // a dead process's
    try {
        settings.baker({&image, source.file, temporary.path, request.format, request.sampling,
                        settings.quality, settings.threads, settings.max_memory_bytes});
    } catch (const SceneImageRefused& refused) {
        where.fail(refused.what());
    }
    move_into_place(temporary.path, file);
}

SceneTexture provide(const GltfScene& scene, const fs::path& scene_file, const Request& request,
                     const SceneTextureSettings& settings) {
    const Where where(scene_file, scene, request);
    const SceneImage& image = scene.images[request.image];
    const ImageSource source = source_of(image, where);
    SceneTexture texture{cache_file(settings, source, request), request.image, request.format,
                         request.sampling, false};
    if (!reusable(texture.file, request, source)) {
        bake_into(texture.file, image, source, request, settings, where);
        texture.baked_now = true;
    }
    const vt::BakedTextureArchive archive(texture.file.string());
    texture.width = archive.shape().width;
    texture.height = archive.shape().height;
    return texture;
}

std::int32_t index_of(std::vector<Request>& requests, const Request& request) {
    for (std::size_t i = 0; i < requests.size(); ++i) {
        if (requests[i].same_texture(request)) return std::int32_t(i);
    }
    requests.push_back(request);
    return std::int32_t(requests.size() - 1);
}

// The textures the materials' slots need, each once, in the order they are first asked for.
std::vector<Request> plan(const GltfScene& scene, const fs::path& scene_file, SceneTextures& out) {
    std::vector<Request> requests;
    for (std::size_t m = 0; m < scene.materials.size(); ++m) {
        auto& slots = out.material_slots.emplace_back();
        slots.fill(-1);
        for (std::size_t s = 0; s < material_slot_count; ++s) {
            const auto slot = MaterialSlot(s);
            const std::optional<TextureSlot>& texture = texture_slot(scene.materials[m], slot);
            if (!texture) continue;
            if (texture->image >= scene.images.size()) {
                throw SceneError(detail::concat(scene_file.string(), ": material ", m, ", ",
                                                to_string(slot), " texture: image ", texture->image,
                                                ", the scene holds ", scene.images.size()));
            }
            const vt::TileFormat format = slot_format(scene.materials[m], slot);
            slots[s] = index_of(requests,
                                {texture->image, format, slot_sampling(*texture, format), m, slot});
        }
    }
    return requests;
}

void make_cache_folder(const fs::path& folder) {
    if (folder.empty()) {
        throw Error(Errc::invalid_argument, "bake_scene_textures", "no cache folder given");
    }
    std::error_code error;
    fs::create_directories(folder, error);
    if (error) {
        throw Error(Errc::io_error, "bake_scene_textures",
                    "cannot make the cache folder: " + error.message(), "path=" + folder.string());
    }
}

void report(const SceneTextureSettings& settings, std::size_t index, std::size_t count,
            const GltfScene& scene, const Request& request, const SceneTexture& texture,
            double seconds) {
    if (!settings.progress) return;
    char outcome[48] = "reused";
    if (texture.baked_now) std::snprintf(outcome, sizeof outcome, "baked in %.2f s", seconds);
    settings.progress(detail::concat(
        "scene texture ", index + 1, "/", count, ": ", scene.images[request.image].name, " (",
        to_string(request.slot), ", ", vt::tile_format_name(request.format), " ",
        vt::color_space_name(request.sampling.color_space), ", ",
        vt::address_mode_name(request.sampling.address_u), "/",
        vt::address_mode_name(request.sampling.address_v), "): ", outcome));
}

// Each request's texture, in the requests' order, provided by settings.bakes_at_once workers
// that take the next request in turn. A failure stops the workers taking more; the first
// failing request's error (in the requests' order, so that a run reports what a serial one
// would) is thrown once every worker is done.
std::vector<SceneTexture> provide_all(const GltfScene& scene, const fs::path& scene_file,
                                      const std::vector<Request>& requests,
                                      const SceneTextureSettings& settings) {
    std::vector<std::optional<SceneTexture>> textures(requests.size());
    std::vector<std::exception_ptr> failures(requests.size());
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    std::mutex progress_mutex;  // guards settings.progress and `reported`
    std::size_t reported = 0;
    const auto work = [&] {
        for (std::size_t i = next++; i < requests.size() && !failed; i = next++) {
            const auto start = std::chrono::steady_clock::now();
            try {
                textures[i] = provide(scene, scene_file, requests[i], settings);
            } catch (...) {
                failures[i] = std::current_exception();
                failed = true;
                return;
            }
            const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
            const std::scoped_lock lock(progress_mutex);
            report(settings, reported++, requests.size(), scene, requests[i], *textures[i],
                   seconds.count());
        }
    };
    const std::size_t workers = std::clamp<std::size_t>(settings.bakes_at_once, 1,
                                                        std::max<std::size_t>(requests.size(), 1));
    {
        std::vector<std::jthread> pool;
        for (std::size_t w = 1; w < workers; ++w) pool.emplace_back(work);
        work();
    }
    for (const std::exception_ptr& failure : failures) {
        if (failure) std::rethrow_exception(failure);
    }
    std::vector<SceneTexture> provided;
    provided.reserve(textures.size());
    for (std::optional<SceneTexture>& texture : textures) provided.push_back(std::move(*texture));
    return provided;
}

}  // namespace

vt::TileFormat slot_format(const SceneMaterial& material, MaterialSlot slot) {
    switch (slot) {
        case MaterialSlot::base_colour:
            // Alpha is kept only where the material uses it.
            return material.alpha_mode == AlphaMode::opaque ? vt::TileFormat::bc1
                                                            : vt::TileFormat::bc3;
        case MaterialSlot::normal:
            return vt::TileFormat::bc5;  // x and y: z follows from them
        case MaterialSlot::occlusion:
            return vt::TileFormat::bc4;  // R
        case MaterialSlot::metallic_roughness:
        case MaterialSlot::emissive:
            break;
    }
    return vt::TileFormat::bc1;
}

vt::TextureSampling slot_sampling(const TextureSlot& texture, vt::TileFormat format) {
    const bool srgb = texture.srgb && vt::srgb_allowed(format);
    return {to_vt(texture.wrap_u), to_vt(texture.wrap_v),
            srgb ? vt::ColorSpace::srgb : vt::ColorSpace::linear};
}

SceneTextures bake_scene_textures(const GltfScene& scene, const fs::path& scene_file,
                                  const SceneTextureSettings& settings) {
    SceneTextures out;
    const std::vector<Request> requests = plan(scene, scene_file, out);
    make_cache_folder(settings.cache_dir);
    out.textures = provide_all(scene, scene_file, requests, settings);
    return out;
}

}  // namespace vtpage::viewer
