// Fuzzes the viewer's texture set manifest (demos/viewer/texture_set_source.cpp): a JSON file
// that names baked texture files and procedural textures. Input: the manifest's bytes, written to
// a file in a folder of this process's own (so that relative names resolve there, where only a
// small valid baked texture, "a.vtex", exists). Opening must give textures or throw the viewer's
// UsageError (or vtpage::Error); what it accepts must hold between 1 and max_set_textures
// textures of valid shapes.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "fuzz_files.hpp"
#include "texture_set_source.hpp"
#include "usage_error.hpp"
#include "vtpage/base/error.hpp"
#include "vtpage/streaming/sources/baked_texture.hpp"

namespace {

namespace fs = std::filesystem;
using namespace vtpage;

// The folder and a baked texture in it, made once per process beside the target's binary (in
// the build folder: nothing is left in the system's temporary folder, since libFuzzer ends
// without running exit handlers). The process id keeps parallel runs apart.
const fs::path& folder() {
    static const fs::path path = [] {
        const fs::path made = fuzz::own_folder("texture_set_manifest_work");
        vt::RgbaImage image;
        image.width = image.height = 64;
        image.texels.assign(std::size_t(64) * 64 * 4, 0x40);
        vt::bake_texture(image, (made / "a.vtex").string());
        return made;
    }();
    return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const fs::path manifest = folder() / "set.json";
    {
        std::ofstream file(manifest, std::ios::binary | std::ios::trunc);
        file.write(reinterpret_cast<const char*>(data), std::streamsize(size));
    }
    try {
        const auto sources = viewer::open_texture_set(manifest.string());
        if (sources.empty() || sources.size() > viewer::max_set_textures) std::abort();
        for (const auto& source : sources) {
            if (!source || !source->shape().valid()) std::abort();
        }
    } catch (const viewer::UsageError&) {
    } catch (const Error&) {}
    return 0;
}
