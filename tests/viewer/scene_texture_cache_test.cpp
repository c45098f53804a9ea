// A scene's images baked into the texture cache: on Debian's assimp-testmodels (the textured box
// in its three forms, one image in two samplings, texture transforms, the clear-coat materials'
// normal, roughness, alpha and emissive maps) and on scenes made here (small images, images that
// are missing, garbage or cut short). Reuse, re-bakes of what changed or was damaged, and the
// texels of a baked tile against the image's.
#include "scene/scene_texture_cache.hpp"

#include "scene/scene_image_baker.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "../bake/vips_test_images.hpp"
#include "../bake/vips_under_thread_sanitizer.hpp"
#include "../support/temporary_folder.hpp"
#include "block_codec.hpp"
#include "scene/gltf_scene.hpp"
#include "vips_image_reader.hpp"
#include "vtpage/base/error.hpp"
#include "vtpage/streaming/sources/baked_texture_archive.hpp"

namespace vtpage::viewer {
namespace {

namespace fs = std::filesystem;
using vt::AddressMode;
using vt::ColorSpace;
using vt::TileFormat;

const fs::path models = "/usr/share/assimp/models/glTF2";

#define SKIP_WITHOUT_MODELS() \
    if (!fs::exists(models)) GTEST_SKIP() << models << " is missing (Debian: assimp-testmodels)"

constexpr std::int32_t none = -1;

std::string read_bytes(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// What a cached file is now: its bytes and when it was written.
struct FileState {
    std::string bytes;
    fs::file_time_type written;
    bool operator==(const FileState&) const = default;
};

FileState state_of(const fs::path& path) { return {read_bytes(path), fs::last_write_time(path)}; }

class SceneTextureCacheTest : public testing::Test {
protected:
    void SetUp() override { VTPAGE_SKIP_LIBVIPS_UNDER_THREAD_SANITIZER(); }

    SceneTextures bake(const fs::path& scene_file) {
        return bake(load_gltf_scene(scene_file), scene_file);
    }
    SceneTextures bake(const GltfScene& scene, const fs::path& scene_file) {
        lines_.clear();
        SceneTextureSettings settings = settings_;
        settings.progress = [this](std::string_view line) { lines_.emplace_back(line); };
        return bake_scene_textures(scene, scene_file, settings);
    }
    std::string error_of(const GltfScene& scene, const fs::path& scene_file) {
        try {
            bake(scene, scene_file);
        } catch (const SceneError& error) {
            return error.what();
        }
        return "";
    }
    std::vector<fs::path> cached_files() const {
        std::vector<fs::path> files;
        if (!fs::exists(cache())) return files;
        for (const auto& entry : fs::directory_iterator(cache())) files.push_back(entry.path());
        return files;
    }
    // A copy of a model's folder, whose files the test may change.
    fs::path copy_model(const std::string& folder) {
        const fs::path to = folder_.path() / folder;
        fs::copy(models / folder, to, fs::copy_options::recursive);
        return to;
    }
    fs::path cache() const { return folder_.path() / "cache"; }

    test::TemporaryFolder folder_;
    SceneTextureSettings settings_{.cache_dir = cache(), .threads = 2, .baker = in_process_baker()};
    std::vector<std::string> lines_;
};

// Checks that the file is a baked texture of that shape, format and sampling, and that its size
// is recorded (what material stacks are matched by).
void expect_baked(const SceneTexture& texture, std::uint32_t width, std::uint32_t height,
                  TileFormat format, vt::TextureSampling sampling) {
    EXPECT_EQ(texture.format, format);
    EXPECT_EQ(texture.sampling, sampling);
    EXPECT_EQ(texture.width, width) << texture.file;
    EXPECT_EQ(texture.height, height) << texture.file;
    const vt::BakedTextureArchive file(texture.file.string());
    EXPECT_EQ(file.shape(), (vt::TextureShape{width, height, format})) << texture.file;
    EXPECT_EQ(file.sampling(), sampling) << texture.file;
    file.check_all();
}

constexpr vt::TextureSampling repeat_srgb{AddressMode::repeat, AddressMode::repeat,
                                          ColorSpace::srgb};
constexpr vt::TextureSampling repeat_linear{AddressMode::repeat, AddressMode::repeat,
                                            ColorSpace::linear};

// The textured box's base colour is sRGB; its sampler mirrors along u and clamps along v in the
// .gltf beside its PNG, and repeats in the .glb and the .gltf with a data URI. Those two hold the
// same PNG bytes in the same sampling, so they share one file; the PNG beside the .gltf is
// another image (named by its path).
TEST_F(SceneTextureCacheTest, TheTexturedBoxIsOneBc1SrgbTextureInEachForm) {
    SKIP_WITHOUT_MODELS();
    const vt::TextureSampling mirror_clamp{AddressMode::mirrored_repeat, AddressMode::clamp_to_edge,
                                           ColorSpace::srgb};
    const std::vector<std::pair<std::string, vt::TextureSampling>> forms = {
        {"BoxTextured-glTF/BoxTextured.gltf", mirror_clamp},
        {"BoxTextured-glTF-Binary/BoxTextured.glb", repeat_srgb},
        {"BoxTextured-glTF-Embedded/BoxTextured.gltf", repeat_srgb}};
    std::vector<SceneTexture> baked;
    for (const auto& [form, sampling] : forms) {
        const GltfScene scene = load_gltf_scene(models / form);
        const SceneTextures textures = bake(scene, models / form);
        ASSERT_EQ(textures.textures.size(), 1u) << form;
        ASSERT_EQ(textures.material_slots.size(), scene.materials.size());
        const auto& slots = textures.material_slots.at(scene.meshes.at(0).material);
        EXPECT_EQ(slots, (std::array<std::int32_t, 5>{0, none, none, none, none})) << form;
        expect_baked(textures.textures[0], 211, 211, TileFormat::bc1, sampling);
        ASSERT_EQ(lines_.size(), 1u);
        EXPECT_EQ(lines_[0].rfind("scene texture 1/1: ", 0), 0u) << lines_[0];
        if (baked.empty()) {
            EXPECT_NE(lines_[0].find(": CesiumLogoFlat.png (base colour, bc1 srgb, "
                                     "mirrored_repeat/clamp_to_edge): baked in "),
                      std::string::npos)
                << lines_[0];
        }
        baked.push_back(textures.textures[0]);
    }
    EXPECT_EQ(lines_[0],
              "scene texture 1/1: embedded image 0 (base colour, bc1 srgb, "
              "repeat/repeat): reused");
    EXPECT_TRUE(baked[0].baked_now);
    EXPECT_TRUE(baked[1].baked_now);
    EXPECT_FALSE(baked[2].baked_now);
    EXPECT_NE(baked[0].file, baked[1].file);
    EXPECT_EQ(baked[1].file, baked[2].file);
    EXPECT_EQ(cached_files().size(), 2u);
}

// Normal maps bc5, roughness bc1 linear, a blended base colour bc3 sRGB, emissive bc1 sRGB; the
// normal map three materials share is baked once.
TEST_F(SceneTextureCacheTest, EachSlotIsBakedInItsFormatAndColourSpace) {
    SKIP_WITHOUT_MODELS();
    const fs::path file = models / "ClearCoat-glTF/ClearCoatTest.gltf";
    const GltfScene scene = load_gltf_scene(file);
    const SceneTextures textures = bake(scene, file);
    ASSERT_EQ(textures.textures.size(), 5u);
    EXPECT_EQ(lines_.size(), 5u);
    std::map<std::string, std::int32_t> slot_of;  // "material/slot" -> texture
    for (std::size_t m = 0; m < scene.materials.size(); ++m) {
        for (std::size_t s = 0; s < material_slot_count; ++s) {
            const std::int32_t index = textures.material_slots[m][s];
            EXPECT_EQ(index != none, texture_slot(scene.materials[m], MaterialSlot(s)).has_value());
            if (index != none) slot_of[scene.materials[m].name + "/" + std::to_string(s)] = index;
        }
    }
    const auto texture = [&](const std::string& key) -> const SceneTexture& {
        return textures.textures.at(slot_of.at(key));
    };
    expect_baked(texture("Partial_Coating/0"), 256, 256, TileFormat::bc3, repeat_srgb);
    expect_baked(texture("RoughVariations_Coating/2"), 512, 512, TileFormat::bc1, repeat_linear);
    expect_baked(texture("BaseNorm_Base/1"), 512, 512, TileFormat::bc5, repeat_linear);
    expect_baked(texture("CoatNorm_Coating/1"), 1024, 1024, TileFormat::bc5, repeat_linear);
    expect_baked(texture("LabelMaterial/4"), 256, 256, TileFormat::bc1, repeat_srgb);
    for (const char* shared : {"BaseNorm_Coated/1", "SharedNorm_Base/1", "SharedNorm_Coating/1"}) {
        EXPECT_EQ(slot_of.at(shared), slot_of.at("BaseNorm_Base/1")) << shared;
    }
    EXPECT_EQ(scene.images.at(texture("CoatNorm_Coating/1").image).name, "PlasticWrap_normals.jpg");
}

// The box's one image is its base colour (sRGB) and its metallic-roughness (linear): two files.
// The texture transform scene's nine materials use five images, each in one sampling.
TEST_F(SceneTextureCacheTest, AnImageIsBakedOncePerFormatAndSampling) {
    SKIP_WITHOUT_MODELS();
    const SceneTextures box = bake(models / "BoxTexcoords-glTF/boxTexcoords.gltf");
    ASSERT_EQ(box.textures.size(), 2u);
    EXPECT_EQ(box.textures[0].image, box.textures[1].image);
    EXPECT_NE(box.textures[0].file, box.textures[1].file);
    expect_baked(box.textures[0], 256, 256, TileFormat::bc1, repeat_srgb);
    expect_baked(box.textures[1], 256, 256, TileFormat::bc1, repeat_linear);

    const fs::path transforms = models / "textureTransform/TextureTransformTest.gltf";
    const GltfScene scene = load_gltf_scene(transforms);
    const SceneTextures textures = bake(scene, transforms);
    ASSERT_EQ(textures.textures.size(), 5u);
    std::map<std::string, vt::TextureSampling> sampling;
    for (const SceneTexture& texture : textures.textures) {
        EXPECT_TRUE(sampling.emplace(scene.images.at(texture.image).name, texture.sampling).second);
    }
    const vt::TextureSampling clamped{AddressMode::clamp_to_edge, AddressMode::clamp_to_edge,
                                      ColorSpace::srgb};
    EXPECT_EQ(sampling.at("UV.png"), clamped);
    EXPECT_EQ(sampling.at("Arrow.png"), clamped);
    EXPECT_EQ(sampling.at("Correct.png"), repeat_srgb);
    EXPECT_EQ(cached_files().size(), 7u);
}

// Base colour and emissive of one image and one sampling share a file; occlusion is bc4;
// images of 1 x 1, 3 x 5 and 13 x 7 texels bake.
TEST_F(SceneTextureCacheTest, SmallImagesInEverySlotBake) {
    const auto png = [&](const std::string& name, std::uint32_t width, std::uint32_t height) {
        test::SampleImage image{width, height, 4};
        for (std::uint32_t i = 0; i < width * height * 4; ++i)
            image.bytes.push_back(std::uint8_t(i * 37));
        const fs::path path = folder_.path() / name;
        test::save_image(image, path.string(), [](VipsImage* in, const char* to) {
            return vips_pngsave(in, to, nullptr);
        });
        return SceneImage{path, {}, "", name};
    };
    GltfScene scene;
    scene.images = {png("one.png", 1, 1), png("three.png", 3, 5), png("odd.png", 13, 7)};
    SceneMaterial& material = scene.materials.emplace_back();
    material.name = "small";
    material.base_colour_texture = TextureSlot{.image = 0, .srgb = true};
    material.emissive_texture = TextureSlot{.image = 0, .srgb = true};
    material.occlusion_texture = TextureSlot{.image = 1};
    material.normal_texture = TextureSlot{.image = 2, .wrap_u = viewer::AddressMode::clamp_to_edge};
    material.metallic_roughness_texture =
        TextureSlot{.image = 1, .wrap_v = viewer::AddressMode::mirrored_repeat};
    const SceneTextures textures = bake(scene, folder_.path() / "small.gltf");
    ASSERT_EQ(textures.textures.size(), 4u);
    EXPECT_EQ(textures.material_slots[0], (std::array<std::int32_t, 5>{0, 1, 2, 3, 0}));
    expect_baked(textures.textures[0], 1, 1, TileFormat::bc1, repeat_srgb);
    expect_baked(textures.textures[1], 13, 7, TileFormat::bc5,
                 {AddressMode::clamp_to_edge, AddressMode::repeat, ColorSpace::linear});
    expect_baked(textures.textures[2], 3, 5, TileFormat::bc1,
                 {AddressMode::repeat, AddressMode::mirrored_repeat, ColorSpace::linear});
    expect_baked(textures.textures[3], 3, 5, TileFormat::bc4, repeat_linear);
}

// A second bake of the same scene opens every file and writes none.
TEST_F(SceneTextureCacheTest, ASecondBakeReusesEveryFile) {
    SKIP_WITHOUT_MODELS();
    const fs::path file = models / "textureTransform/TextureTransformTest.gltf";
    const SceneTextures first = bake(file);
    std::vector<FileState> before;
    for (const SceneTexture& texture : first.textures) {
        EXPECT_TRUE(texture.baked_now);
        before.push_back(state_of(texture.file));
    }
    const SceneTextures second = bake(file);
    ASSERT_EQ(second.textures.size(), first.textures.size());
    for (std::size_t i = 0; i < second.textures.size(); ++i) {
        EXPECT_FALSE(second.textures[i].baked_now) << i;
        EXPECT_EQ(second.textures[i].file, first.textures[i].file);
        EXPECT_TRUE(state_of(second.textures[i].file) == before[i]) << i;
        EXPECT_EQ(lines_.at(i).substr(lines_.at(i).size() - 8), ": reused") << lines_.at(i);
    }
    EXPECT_EQ(second.material_slots, first.material_slots);
    EXPECT_EQ(cached_files().size(), first.textures.size());
}

// An image changed after its texture was baked is baked again; the others are reused.
TEST_F(SceneTextureCacheTest, AnImageChangedSinceItsBakeIsBakedAgainAlone) {
    SKIP_WITHOUT_MODELS();
    const fs::path file = copy_model("textureTransform") / "TextureTransformTest.gltf";
    const GltfScene scene = load_gltf_scene(file);
    const SceneTextures first = bake(scene, file);
    std::vector<FileState> before;
    for (const SceneTexture& texture : first.textures) before.push_back(state_of(texture.file));
    const fs::path arrow = file.parent_path() / "Arrow.png";
    fs::last_write_time(arrow,
                        fs::last_write_time(first.textures[0].file) + std::chrono::seconds(2));
    const SceneTextures second = bake(scene, file);
    ASSERT_EQ(second.textures.size(), first.textures.size());
    std::size_t baked = 0;
    for (std::size_t i = 0; i < second.textures.size(); ++i) {
        const bool is_arrow =
            scene.images.at(second.textures[i].image).path.filename() == "Arrow.png";
        EXPECT_EQ(second.textures[i].baked_now, is_arrow) << i;
        EXPECT_EQ(state_of(second.textures[i].file) == before[i], !is_arrow) << i;
        baked += second.textures[i].baked_now;
    }
    EXPECT_EQ(baked, 1u);
    EXPECT_FALSE(bake(scene, file).textures[0].baked_now);  // baked again, then reused
}

// The cache knows an image by its bytes: a copy of the scene's folder elsewhere (its files'
// times kept, as tar and rsync -a keep them) finds every texture baked for the first.
TEST_F(SceneTextureCacheTest, ACopyOfTheSceneElsewhereReusesTheCache) {
    SKIP_WITHOUT_MODELS();
    const fs::path first = copy_model("textureTransform") / "TextureTransformTest.gltf";
    const SceneTextures baked = bake(first);
    const fs::path copy = folder_.path() / "moved" / "scene";
    fs::create_directories(copy.parent_path());
    fs::copy(first.parent_path(), copy, fs::copy_options::recursive);
    for (const auto& entry : fs::directory_iterator(first.parent_path())) {
        fs::last_write_time(copy / entry.path().filename(), fs::last_write_time(entry.path()));
    }
    const SceneTextures again = bake(copy / "TextureTransformTest.gltf");
    ASSERT_EQ(again.textures.size(), baked.textures.size());
    for (std::size_t i = 0; i < again.textures.size(); ++i) {
        EXPECT_FALSE(again.textures[i].baked_now) << i;
        EXPECT_EQ(again.textures[i].file, baked.textures[i].file) << i;
    }
}

// A cached file cut short, with a flipped byte in its header, or of another sampling than its
// name says is baked again.
TEST_F(SceneTextureCacheTest, ADamagedCachedFileIsBakedAgain) {
    SKIP_WITHOUT_MODELS();
    const fs::path file = models / "BoxTexcoords-glTF/boxTexcoords.gltf";
    const SceneTextures first = bake(file);
    ASSERT_EQ(first.textures.size(), 2u);
    const fs::path& srgb = first.textures[0].file;
    const fs::path& linear = first.textures[1].file;
    const std::string good = read_bytes(linear);
    const auto damaged = [&](const std::string& bytes) {
        std::ofstream(linear, std::ios::binary | std::ios::trunc) << bytes;
        const SceneTextures again = bake(file);
        EXPECT_FALSE(again.textures[0].baked_now);
        expect_baked(again.textures[1], 256, 256, TileFormat::bc1, repeat_linear);
        return again.textures[1].baked_now;
    };
    EXPECT_TRUE(damaged(good.substr(0, good.size() / 2)));
    std::string flipped = good;
    flipped[20] = char(flipped[20] ^ 0x40);
    EXPECT_TRUE(damaged(flipped));
    EXPECT_TRUE(damaged(read_bytes(srgb)));  // a baked texture, of the other colour space
    EXPECT_FALSE(damaged(good));             // as baked: reused
}

// A baked file that cannot be renamed into the cache (a folder holds its name) is an io_error
// of the cache, not the scene's, and the file baked is not left beside it.
TEST_F(SceneTextureCacheTest, ACacheThatCannotBeWrittenIsAnIoErrorAndLeavesNoFile) {
    SKIP_WITHOUT_MODELS();
    const fs::path file = models / "BoxTextured-glTF/BoxTextured.gltf";
    const fs::path cached = bake(file).textures.at(0).file;
    fs::remove(cached);
    fs::create_directories(cached / "in the way");
    try {
        bake(file);
        ADD_FAILURE() << "a folder in the cached file's place was replaced";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::io_error);
        EXPECT_NE(error.detail().find("cannot move the baked texture into the cache"),
                  std::string::npos)
            << error.what();
    }
    EXPECT_EQ(cached_files(), std::vector<fs::path>{cached});
}

// Copies the textured box into the scratch folder with its image replaced by these bytes (none:
// the image is missing).
fs::path box_with_image(const fs::path& folder, const std::optional<std::string>& bytes) {
    fs::create_directories(folder);
    for (const char* name : {"BoxTextured.gltf", "BoxTextured0.bin"}) {
        fs::copy_file(models / "BoxTextured-glTF" / name, folder / name);
    }
    if (bytes) std::ofstream(folder / "CesiumLogoFlat.png", std::ios::binary) << *bytes;
    return folder / "BoxTextured.gltf";
}

// An image that is missing, garbage, cut short or past the memory limit is a SceneError that
// names the material's slot and the image, and nothing is left in the cache.
TEST_F(SceneTextureCacheTest, ABadImageIsASceneErrorAndLeavesNothingInTheCache) {
    SKIP_WITHOUT_MODELS();
    const std::string png = read_bytes(models / "BoxTextured-glTF/CesiumLogoFlat.png");
    const std::vector<std::pair<std::optional<std::string>, std::string>> cases = {
        {std::nullopt, "cannot be found"},
        {"this is not a PNG at all", "is not an image that can be read"},
        {png.substr(0, png.size() / 2), "is not an image that can be read"},
    };
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const fs::path file = box_with_image(folder_.path() / std::to_string(i), cases[i].first);
        const std::string message = error_of(load_gltf_scene(file), file);
        EXPECT_NE(
            message.find("base colour texture, image \"CesiumLogoFlat.png\": " + cases[i].second),
            std::string::npos)
            << message;
        EXPECT_EQ(message.rfind(file.string() + ": material 0", 0), 0u) << message;
        EXPECT_EQ(cached_files(), std::vector<fs::path>{}) << message;
    }
    GltfScene embedded = load_gltf_scene(models / "BoxTextured-glTF-Binary/BoxTextured.glb");
    embedded.images.at(0).embedded.assign(100, 0x5a);
    EXPECT_NE(error_of(embedded, "box.glb").find("image \"embedded image 0\": is not an image"),
              std::string::npos);
    settings_.max_memory_bytes = 1 << 20;
    const std::string limit =
        error_of(load_gltf_scene(models / "BoxTextured-glTF/BoxTextured.gltf"), "box.gltf");
    EXPECT_NE(limit.find("\": cannot be baked: a 211 x 211 image"), std::string::npos) << limit;
    EXPECT_EQ(cached_files(), std::vector<fs::path>{});
}

// The peak signal-to-noise ratio of a decoded tile against what it should hold.
double psnr(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b) {
    double error = 0;
    std::size_t samples = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (i % 4 == 3) continue;  // bc1 keeps no alpha
        error += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
        ++samples;
    }
    return error == 0 ? INFINITY : 10 * std::log10(255.0 * 255 / (error / double(samples)));
}

// The baked base colour's level-0 tile decodes to the PNG's texels, its borders to what the
// box's sampler reads past the edges (mirrored along u, clamped along v), within what BC1 loses.
TEST_F(SceneTextureCacheTest, TheBakedBaseColourHoldsTheImagesTexels) {
    SKIP_WITHOUT_MODELS();
    const fs::path image = models / "BoxTextured-glTF/CesiumLogoFlat.png";
    bake::VipsImageReader reader(image.string());
    const std::uint32_t width = reader.info().width, height = reader.info().height;
    std::vector<std::uint8_t> pixels(std::size_t(width) * height * 4);
    reader.read_rows(height, pixels);

    const SceneTextures textures = bake(models / "BoxTextured-glTF/BoxTextured.gltf");
    const vt::BakedTextureArchive file(textures.textures.at(0).file.string());
    const vt::TextureLayout layout = file.layout();
    const vt::TileFormatInfo info = layout.tile_format();
    ASSERT_EQ(layout.mips[0].tiles_x, 1u);  // 211 x 211: one tile of bc1
    const vt::TileLocation where = layout.locate(0, 0, 0);
    std::vector<std::byte> page(vt::format_page_bytes);
    file.read_page(where.page, page);
    std::vector<std::uint8_t> decoded(std::size_t(info.tile_size) * info.tile_size * 4);
    bake::decode_tile(TileFormat::bc1,
                      std::span(page).subspan(where.byte_offset(), where.tile_bytes), decoded);

    // The image and its borders, as the tile holds them and as the sampler reads the PNG; and
    // the same with the PNG upside down, which the tile must not match.
    const std::uint32_t covered = width + 2 * info.tile_border;
    std::vector<std::uint8_t> got, expected, flipped;
    const auto texel = [&](std::int64_t u, std::int64_t v) {
        const std::size_t x = vt::address_texel(AddressMode::mirrored_repeat, u, width);
        const std::size_t y = vt::address_texel(AddressMode::clamp_to_edge, v, height);
        return &pixels[(y * width + x) * 4];
    };
    for (std::uint32_t y = 0; y < covered; ++y) {
        const std::int64_t v = std::int64_t(y) - info.tile_border;
        for (std::uint32_t x = 0; x < covered; ++x) {
            const std::int64_t u = std::int64_t(x) - info.tile_border;
            const std::uint8_t* at = &decoded[(std::size_t(y) * info.tile_size + x) * 4];
            got.insert(got.end(), at, at + 4);
            expected.insert(expected.end(), texel(u, v), texel(u, v) + 4);
            flipped.insert(flipped.end(), texel(u, height - 1 - v), texel(u, height - 1 - v) + 4);
        }
    }
    EXPECT_GT(psnr(got, expected), 35.0);  // 42 dB as baked (range fit)
    EXPECT_LT(psnr(got, flipped), 20.0);
}

// The viewer's way: each image baked by the vtpage-bake program, in a process of its own.
class SceneBakeToolTest : public SceneTextureCacheTest {
protected:
    void SetUp() override {
        SceneTextureCacheTest::SetUp();
        settings_.baker = bake_tool_baker(VTPAGE_BAKE_TOOL);
    }
};

TEST_F(SceneBakeToolTest, TheProgramBakesWhatTheProcessBakes) {
    SKIP_WITHOUT_MODELS();
    for (const char* model :
         {"BoxTextured-glTF/BoxTextured.gltf", "BoxTextured-glTF-Binary/BoxTextured.glb"}) {
        const SceneTextures by_tool = bake(models / model);
        ASSERT_EQ(by_tool.textures.size(), 1u) << model;
        EXPECT_TRUE(by_tool.textures[0].baked_now);
        settings_.baker = in_process_baker();
        settings_.cache_dir = folder_.path() / "in_process";
        const SceneTextures in_process = bake(models / model);
        settings_.baker = bake_tool_baker(VTPAGE_BAKE_TOOL);
        settings_.cache_dir = cache();
        ASSERT_EQ(in_process.textures.size(), 1u);
        expect_baked(by_tool.textures[0], 211, 211, in_process.textures[0].format,
                     in_process.textures[0].sampling);
        const vt::BakedTextureArchive a(by_tool.textures[0].file.string());
        const vt::BakedTextureArchive b(in_process.textures[0].file.string());
        ASSERT_EQ(a.layout().page_count, b.layout().page_count);
        std::vector<std::byte> page_a(vt::format_page_bytes), page_b(vt::format_page_bytes);
        for (std::uint64_t page = 0; page < a.layout().page_count; ++page) {
            a.read_page(page, page_a);
            b.read_page(page, page_b);
            EXPECT_TRUE(page_a == page_b) << model << " page " << page;
        }
    }
    // The embedded image went to the program through a file beside the output, since removed.
    for (const fs::path& file : cached_files()) EXPECT_EQ(file.extension(), ".vtex") << file;
}

TEST_F(SceneBakeToolTest, TheProgramsRefusalNamesTheImageAndLeavesNothing) {
    SKIP_WITHOUT_MODELS();
    const fs::path file = box_with_image(folder_.path() / "bad", std::string("not a PNG"));
    const std::string message = error_of(load_gltf_scene(file), file);
    EXPECT_NE(message.find("base colour texture, image \"CesiumLogoFlat.png\": "),
              std::string::npos)
        << message;
    EXPECT_EQ(message.find("vtpage-bake: "), std::string::npos) << "the program's name is cut";
    EXPECT_EQ(cached_files(), std::vector<fs::path>{}) << message;
}

// Several bakes at once: each program bakes the same file a serial run does, every texture is
// reported once, and a bad image among good ones is the error, its good neighbours' files kept
// or not but nothing half-written left.
TEST_F(SceneBakeToolTest, BakesAtOnceMakeWhatOneAtATimeMakes) {
    const auto png = [&](const std::string& name, std::uint32_t width, std::uint32_t seed) {
        test::SampleImage image{width, width / 2 + 3, 3};
        for (std::uint32_t i = 0; i < image.width * image.height * 3; ++i)
            image.bytes.push_back(std::uint8_t(i * seed + i / 7));
        const fs::path path = folder_.path() / name;
        test::save_image(image, path.string(), [](VipsImage* in, const char* to) {
            return vips_pngsave(in, to, nullptr);
        });
        return SceneImage{path, {}, "", name};
    };
    GltfScene scene;
    for (std::uint32_t i = 0; i < 6; ++i) {
        scene.images.push_back(png("image" + std::to_string(i) + ".png", 40 + 9 * i, 3 + 2 * i));
        SceneMaterial& material = scene.materials.emplace_back();
        material.base_colour_texture = TextureSlot{.image = i, .srgb = true};
        material.normal_texture = TextureSlot{.image = i};
    }
    const SceneTextures serial = bake(scene, folder_.path() / "serial.gltf");
    settings_.cache_dir = folder_.path() / "at_once";
    settings_.bakes_at_once = 4;
    const SceneTextures at_once = bake(scene, folder_.path() / "at_once.gltf");
    EXPECT_EQ(lines_.size(), 12u);
    ASSERT_EQ(at_once.textures.size(), serial.textures.size());
    EXPECT_EQ(at_once.material_slots, serial.material_slots);
    for (std::size_t t = 0; t < serial.textures.size(); ++t) {
        EXPECT_TRUE(at_once.textures[t].baked_now);
        EXPECT_EQ(at_once.textures[t].image, serial.textures[t].image);
        EXPECT_EQ(at_once.textures[t].format, serial.textures[t].format);
        EXPECT_EQ(read_bytes(at_once.textures[t].file), read_bytes(serial.textures[t].file)) << t;
    }
    std::ofstream(folder_.path() / "image4.png") << "not a PNG";
    settings_.cache_dir = folder_.path() / "bad";
    const std::string message = error_of(scene, folder_.path() / "bad.gltf");
    EXPECT_NE(message.find("material 4, base colour texture, image \"image4.png\""),
              std::string::npos)
        << message;
    for (const auto& entry : fs::directory_iterator(settings_.cache_dir))
        EXPECT_EQ(entry.path().extension(), ".vtex") << entry.path();
}

TEST_F(SceneBakeToolTest, AProgramThatHangsIsStoppedAtTheDeadline) {
    SKIP_WITHOUT_MODELS();
    const fs::path tool = folder_.path() / "hangs.sh";
    std::ofstream(tool) << "#!/bin/sh\nexec sleep 30\n";
    fs::permissions(tool, fs::perms::owner_all);
    settings_.baker = bake_tool_baker(tool, std::chrono::milliseconds(300));
    const auto start = std::chrono::steady_clock::now();
    try {
        bake(models / "BoxTextured-glTF/BoxTextured.gltf");
        FAIL() << "a bake that never ends was not stopped";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::io_error);
        EXPECT_NE(std::string(error.what()).find("longer than 300 ms"), std::string::npos)
            << error.what();
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
    EXPECT_EQ(cached_files(), std::vector<fs::path>{});
}

TEST_F(SceneBakeToolTest, AMissingProgramIsAFailureOfTheWork) {
    SKIP_WITHOUT_MODELS();
    settings_.baker = bake_tool_baker(folder_.path() / "no-such-program");
    try {
        bake(models / "BoxTextured-glTF/BoxTextured.gltf");
        FAIL() << "no program, no bake";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::io_error);
        EXPECT_NE(std::string(error.what()).find("exit status 127"), std::string::npos)
            << error.what();
    }
    EXPECT_EQ(cached_files(), std::vector<fs::path>{});
}

}  // namespace
}  // namespace vtpage::viewer
