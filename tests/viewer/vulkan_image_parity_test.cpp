// Image parity between vtpage's sampling and the device's own sampler, pose by pose, on the
// device (lavapipe in CI) with validation. A plane textured with a band-limited pattern (every
// page resident) is rendered by parity_render.glsl through a camera at fixed poses: head-on,
// magnified, minified, rotated in the plane, grazing, over mirrored uvs and over scaled and
// offset uvs, the textures linear or sRGB and their axes repeating, mirrored or clamped. The
// device samples a VkImage holding the tiles' very texels (UNORM or SRGB, so that it decodes
// before filtering too) with the same address modes; both take the level of detail from the
// same derivatives. Without anisotropy vtpage must match the device over the pixels the plane
// covers: PSNR at least the pose's gate (45 dB head-on and magnified, 40 dB elsewhere) at the
// formula's level of detail, at least 45 dB at every pose at the device's (vt_device_lod, the
// level-of-detail probe), and the 99.99th percentile of the channels' absolute errors at most
// 8/255 at both. At 16x the comparison is
// printed, not gated (lavapipe's anisotropic filter is its own; docs/vulkan.md). Three
// deliberately wrong variants (a repeating axis clamped, sRGB decoded after filtering, the level
// one too coarse) must each fail a pose's gate. A failing pose leaves its images behind.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numbers>
#include <span>
#include <string>
#include <vector>

#include "../bake/under_sanitizer.hpp"
#include "device_sampler_pipeline.hpp"
#include "renderer_rig.hpp"
#include "vtpage/interop/vulkan_buffer.hpp"

namespace vtpage {
namespace {

using vt::AddressMode;
using vt::ColorSpace;

constexpr std::uint32_t parity_render_test_comp[] = {
#include "parity_render_test.comp.spv.inc"
};
constexpr std::uint32_t parity_wrong_wrap_test_comp[] = {
#include "parity_wrong_wrap_test.comp.spv.inc"
};
constexpr std::uint32_t parity_wrong_srgb_test_comp[] = {
#include "parity_wrong_srgb_test.comp.spv.inc"
};
constexpr std::uint32_t parity_wrong_lod_test_comp[] = {
#include "parity_wrong_lod_test.comp.spv.inc"
};

constexpr std::uint32_t size_log2 = 8;  // 256 x 256 texels, 9 levels
constexpr std::uint32_t texture_side = 1u << size_log2;
// Smaller frames under the sanitizers, at the same levels of detail (the poses scale uv).
constexpr std::uint32_t frame_size = test::under_sanitizer ? 64 : 128;
constexpr std::uint32_t group_size = 8;    // the shader's local size, both axes
constexpr double error_gate = 8.0 / 255;   // the 99.99th percentile's
constexpr double device_lod_gate_db = 45;  // every pose's, at the device's level of detail

// ParityPixel in parity_render.glsl; colours as the image shows them.
struct ParityPixel {
    test::Colour isotropic, isotropic_device_lod, anisotropic, device_isotropic, device_anisotropic;
    std::uint32_t covered = 0;
    std::uint32_t padding[3] = {};
};
// The push constants of parity_render.glsl.
struct ParityPush {
    VkDeviceAddress indirection = 0;
    VkDeviceAddress directory = 0;
    VkDeviceAddress results = 0;
    std::uint32_t texture_id = 0;
    std::uint32_t width = frame_size;
    std::uint32_t height = frame_size;
    float max_anisotropy = 16;
    std::uint32_t padding[2] = {};
    float eye[4] = {};      // w: uv's offset along u
    float right[4] = {};    // w: tan of half the horizontal field of view
    float up[4] = {};       // w: tan of half the vertical one
    float forward[4] = {};  // w: uv's offset along v
    float uv_map[4] = {};   // the plane's (x, z) to uv, row by row
};
static_assert(sizeof(ParityPixel) == 96 && sizeof(ParityPush) == 128, "the shader's std430");

// Level 0: per channel two or three waves of whole periods across the texture (so that it
// repeats seamlessly), 4.9 to 18 texels long and in several directions: detailed, yet below
// the Nyquist limit at every level the poses read. Each further level is the 2 x 2 mean of the
// one before, rounded: the tiles and the device's image are made from these very texels.
test::MipLevels pattern_levels() {
    struct Wave {
        float fx, fy, amplitude;  // periods across the texture along x and y
    };
    const Wave waves[3][3] = {{{24, 8, 0.22f}, {-10, 30, 0.18f}, {3, 5, 0.05f}},
                              {{40, 0, 0.15f}, {5, -17, 0.2f}, {0, 52, 0.1f}},
                              {{33, 33, 0.2f}, {-7, 12, 0.2f}, {14, -3, 0.05f}}};
    const auto channel = [&](const Wave(&channel_waves)[3], float x, float y) {
        float value = 0.5f;
        for (const Wave& w : channel_waves) {
            const float phase = 2 * std::numbers::pi_v<float> * (w.fx * x + w.fy * y);
            value += w.amplitude * std::sin(phase / float(texture_side));
        }
        return std::uint32_t(std::lround(255 * std::clamp(value, 0.0f, 1.0f)));
    };
    test::MipLevels levels(1, std::vector<std::uint32_t>(texture_side * texture_side));
    for (std::uint32_t y = 0; y < texture_side; ++y) {
        for (std::uint32_t x = 0; x < texture_side; ++x) {
            const float u = float(x) + 0.5f, v = float(y) + 0.5f;
            levels[0][y * texture_side + x] = channel(waves[0], u, v) |
                                              channel(waves[1], u, v) << 8 |
                                              channel(waves[2], u, v) << 16 | 0xffu << 24;
        }
    }
    for (std::uint32_t side = texture_side / 2; side >= 1; side /= 2) {
        const std::vector<std::uint32_t>& finer = levels.back();
        std::vector<std::uint32_t> level(side * side);
        for (std::uint32_t y = 0; y < side; ++y) {
            for (std::uint32_t x = 0; x < side; ++x) {
                std::uint32_t texel = 0;
                for (std::uint32_t shift = 0; shift < 32; shift += 8) {
                    std::uint32_t sum = 0;
                    for (std::uint32_t i = 0; i < 4; ++i) {
                        const std::uint32_t fx = 2 * x + (i & 1), fy = 2 * y + (i >> 1);
                        sum += finer[fy * 2 * side + fx] >> shift & 0xffu;
                    }
                    texel |= (sum + 2) / 4 << shift;
                }
                level[y * side + x] = texel;
            }
        }
        levels.push_back(std::move(level));
    }
    return levels;
}

// A camera over the plane y = 0 and the texture it sees there.
struct Pose {
    const char* name;
    float degrees;              // between the view and the plane; 90 head-on
    float texels_per_pixel;     // of level 0, across a pixel at the view's centre
    float rotation;             // of uv in the plane, degrees
    float centre_u, centre_v;   // uv at the view's centre
    float uv_scale, uv_offset;  // the uv above, then scaled and offset (both axes)
    vt::TextureSampling sampling;
    double gate_db;  // PSNR of vtpage against the device, without anisotropy
};

constexpr AddressMode clamp = AddressMode::clamp_to_edge, repeat = AddressMode::repeat,
                      mirror = AddressMode::mirrored_repeat;
// Every pose but the grazing ones crosses a seam or an edge of the texture.
const Pose poses[] = {
    {"head-on", 90, 1.3f, 0, 0.95f, 0.05f, 1, 0, {repeat, repeat, ColorSpace::linear}, 45},
    {"magnified", 90, 0.25f, 0, 0.03f, 0.97f, 1, 0, {clamp, clamp, ColorSpace::srgb}, 45},
    {"minified", 90, 5, 0, 0.3f, 0.6f, 1, 0, {repeat, repeat, ColorSpace::linear}, 40},
    {"rotated 45", 90, 1.7f, 45, 0.5f, 0.0f, 1, 0, {repeat, repeat, ColorSpace::srgb}, 40},
    {"grazing 10", 10, 1.5f, 0, 0.8f, 0.3f, 1, 0, {clamp, repeat, ColorSpace::linear}, 40},
    {"grazing 5", 5, 1.5f, 0, 0.2f, 0.1f, 1, 0, {repeat, mirror, ColorSpace::srgb}, 40},
    {"mirrored", 90, 2.5f, 0, 1.0f, 0.0f, 1, 0, {mirror, mirror, ColorSpace::srgb}, 40},
    {"3.5 uv + 0.25",
     90,
     0.5f,
     0,
     0.1f,
     0.2f,
     3.5f,
     0.25f,
     {repeat, repeat, ColorSpace::linear},
     40},
};

VkSamplerAddressMode device_mode(AddressMode mode) {
    if (mode == repeat) return VK_SAMPLER_ADDRESS_MODE_REPEAT;
    if (mode == mirror) return VK_SAMPLER_ADDRESS_MODE_MIRRORED_REPEAT;
    return VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
}
test::DeviceSampling device_sampling(const vt::TextureSampling& s) {
    return {device_mode(s.address_u), device_mode(s.address_v),
            s.color_space == ColorSpace::srgb ? VK_FORMAT_R8G8B8A8_SRGB : VK_FORMAT_R8G8B8A8_UNORM};
}
const char* mode_name(AddressMode mode) {
    return mode == repeat ? "repeat" : mode == mirror ? "mirror" : "clamp";
}

// The camera of a pose, as the anisotropy test's: looking down at the pose's angle to the plane
// at its origin from a fixed distance, a 30-degree field of view; uv per world unit such that a
// pixel at the view's centre spans the pose's texels across.
ParityPush pose_push(const Pose& pose) {
    const float pi = std::numbers::pi_v<float>;
    const float a = pose.degrees * pi / 180, r = pose.rotation * pi / 180;
    const float distance = 1.4f, tan_half = std::tan(15 * pi / 180);
    ParityPush push;
    push.forward[1] = -std::sin(a);
    push.forward[2] = std::cos(a);
    push.up[1] = std::cos(a);
    push.up[2] = std::sin(a);
    push.up[3] = tan_half;
    push.right[0] = 1;
    push.right[3] = tan_half;
    for (int i = 0; i < 3; ++i) push.eye[i] = -distance * push.forward[i];
    const float pixel_world = 2 * distance * tan_half / float(frame_size);
    const float scale = pose.uv_scale * pose.texels_per_pixel / (float(texture_side) * pixel_world);
    const float map[4] = {std::cos(r), -std::sin(r), std::sin(r), std::cos(r)};
    for (int i = 0; i < 4; ++i) push.uv_map[i] = scale * map[i];
    // The view's centre meets the plane at its origin.
    push.eye[3] = pose.uv_scale * pose.centre_u + pose.uv_offset;
    push.forward[3] = pose.uv_scale * pose.centre_v + pose.uv_offset;
    return push;
}

// vtpage's colours (isotropic or at 16x) against the device's, over the covered pixels' colour
// channels: PSNR (1 the peak; infinite where they are equal) and the 99.99th percentile of the
// absolute errors.
struct Agreement {
    double psnr = 0;
    double p9999 = 0;
};
Agreement agreement(std::span<const ParityPixel> pixels, test::Colour ParityPixel::*ours,
                    test::Colour ParityPixel::*device) {
    std::vector<double> errors;
    double squared = 0;
    for (const ParityPixel& p : pixels) {
        if (!p.covered) continue;
        const test::Colour &x = p.*ours, &y = p.*device;
        for (const double d : {x.r - y.r, x.g - y.g, x.b - y.b}) {
            squared += d * d;
            errors.push_back(std::abs(d));
        }
    }
    if (errors.empty()) return {};
    const auto at = errors.begin() + std::ptrdiff_t(double(errors.size() - 1) * 0.9999);
    std::nth_element(errors.begin(), at, errors.end());
    return {-10 * std::log10(squared / double(errors.size())), *at};
}

// One pose as a variant of the shader renders it, and its scores.
struct PoseResult {
    const Pose* pose = nullptr;
    std::size_t covered = 0;
    Agreement isotropic, device_lod, anisotropic;
    std::vector<ParityPixel> pixels;

    bool passes() const {
        return isotropic.psnr >= pose->gate_db && isotropic.p9999 <= error_gate &&
               device_lod.psnr >= device_lod_gate_db && device_lod.p9999 <= error_gate;
    }
    double margin() const {
        return std::min(isotropic.psnr - pose->gate_db, device_lod.psnr - device_lod_gate_db);
    }
};

PoseResult score(const Pose& pose, std::vector<ParityPixel> pixels) {
    PoseResult r{&pose};
    for (const ParityPixel& p : pixels) r.covered += p.covered;
    r.isotropic = agreement(pixels, &ParityPixel::isotropic, &ParityPixel::device_isotropic);
    r.device_lod =
        agreement(pixels, &ParityPixel::isotropic_device_lod, &ParityPixel::device_isotropic);
    r.anisotropic = agreement(pixels, &ParityPixel::anisotropic, &ParityPixel::device_anisotropic);
    r.pixels = std::move(pixels);
    return r;
}

void print_table(const char* title, const std::string& device, std::span<const PoseResult> rows) {
    std::printf("%s: vtpage against %s's sampler, %u x %u pixels, %u x %u texels\n", title,
                device.c_str(), frame_size, frame_size, texture_side, texture_side);
    std::printf("  %-14s %-6s %-14s %7s %5s %9s %11s %12s %14s %4s %9s %11s\n", "pose", "colour",
                "address u/v", "covered", "gate", "iso PSNR", "iso p99.99", "dev-lod PSNR",
                "dev-lod p99.99", "pass", "16x PSNR", "16x p99.99");
    for (const PoseResult& r : rows) {
        const vt::TextureSampling& s = r.pose->sampling;
        const std::string modes =
            std::string(mode_name(s.address_u)) + "/" + mode_name(s.address_v);
        std::printf(
            "  %-14s %-6s %-14s %7zu %5.0f %9.2f %7.2f/255 %12.2f %10.2f/255 %4s %9.2f "
            "%7.2f/255\n",
            r.pose->name, s.color_space == ColorSpace::srgb ? "sRGB" : "linear", modes.c_str(),
            r.covered, r.pose->gate_db, r.isotropic.psnr, r.isotropic.p9999 * 255,
            r.device_lod.psnr, r.device_lod.p9999 * 255, r.passes() ? "yes" : "NO",
            r.anisotropic.psnr, r.anisotropic.p9999 * 255);
    }
}

// A binary PPM of a channel-wise function of the pixels (black where the plane is not).
template <class Value>
void write_ppm(const std::filesystem::path& path, std::span<const ParityPixel> pixels,
               Value value) {
    std::ofstream out(path, std::ios::binary);
    out << "P6\n" << frame_size << ' ' << frame_size << "\n255\n";
    for (const ParityPixel& p : pixels) {
        const test::Colour c = p.covered ? value(p) : test::Colour{};
        for (const float channel : {c.r, c.g, c.b}) out.put(char(test::to_unorm8(channel)));
    }
}

// The pose's vtpage and device images and their difference (times 8: 32/255 is white) as PPM
// files in a folder of the test's temporary directory; returns the folder.
std::filesystem::path keep_images(const PoseResult& r) {
    std::string name = r.pose->name;
    std::replace_if(
        name.begin(), name.end(), [](char c) { return !std::isalnum(c); }, '_');
    const std::filesystem::path folder =
        std::filesystem::path(testing::TempDir()) / "vtpage-image-parity" / name;
    std::filesystem::create_directories(folder);
    const auto take = [](test::Colour ParityPixel::*colour) {
        return [colour](const ParityPixel& p) { return p.*colour; };
    };
    write_ppm(folder / "vtpage.ppm", r.pixels, take(&ParityPixel::isotropic));
    write_ppm(folder / "device.ppm", r.pixels, take(&ParityPixel::device_isotropic));
    write_ppm(folder / "difference.ppm", r.pixels, [](const ParityPixel& p) {
        const test::Colour &a = p.isotropic, &b = p.device_isotropic;
        return test::Colour{8 * std::abs(a.r - b.r), 8 * std::abs(a.g - b.g),
                            8 * std::abs(a.b - b.b), 1};
    });
    return folder;
}

struct Variant {
    const char* name;
    std::span<const std::uint32_t> spirv;
};

class VulkanImageParityTest : public testing::Test {
protected:
    void SetUp() override { levels_ = std::make_shared<test::MipLevels>(pattern_levels()); }

    // Every pose as each variant renders it (one row per pose in each variant's list); a rig of
    // its own per pose, whose texture has the pose's sampling. False, with the reason, where
    // this machine cannot run it.
    bool render_poses(std::span<const Variant> variants, std::vector<std::vector<PoseResult>>& rows,
                      std::string& reason) {
        rows.assign(variants.size(), {});
        for (const Pose& pose : poses) {
            SCOPED_TRACE(pose.name);
            test::RendererRig rig;
            const auto texel = [levels = levels_](std::uint32_t mip, std::uint32_t x,
                                                  std::uint32_t y) {
                const std::uint32_t side = std::max(1u, texture_side >> mip);
                return (*levels)[mip][y * side + x];
            };
            if (!rig.set_up("host", reason, vt::TextureShape::square(size_log2),
                            {.content = {texel, pose.sampling}})) {
                return false;
            }
            if (!rig.context->supports_sampler_anisotropy()) {
                reason = rig.context->device_name() + " offers no samplerAnisotropy";
                return false;
            }
            device_ = rig.context->device_name();
            rig.make_all_resident();
            rig.render(test::OrthoView{});  // a frame uploads the indirection table and directory
            for (std::size_t v = 0; v < variants.size(); ++v) {
                rows[v].push_back(score(pose, render(rig, pose, variants[v].spirv)));
            }
            rig.tear_down();  // checks that the validation layer said nothing
        }
        return true;
    }

    // The pixels of a pose as a variant of the shader renders them, on the device's image of
    // the texture with the pose's address modes and colour space.
    std::vector<ParityPixel> render(test::RendererRig& rig, const Pose& pose,
                                    std::span<const std::uint32_t> spirv) {
        test::DeviceSamplerPipeline pipeline(*rig.context, texture_side, texture_side, *levels_,
                                             device_sampling(pose.sampling), spirv,
                                             sizeof(ParityPush), "parity_render");
        const std::size_t bytes = std::size_t(frame_size) * frame_size * sizeof(ParityPixel);
        VulkanBuffer output(
            *rig.context, bytes,
            VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT,
            BufferMemory::readback, "parity pixels");
        ParityPush push = pose_push(pose);
        push.indirection = rig.indirection->device_address();
        push.directory = rig.textures->device_address();
        push.results = output.device_address();
        push.texture_id = test::rig_texture_id;
        push.max_anisotropy = pipeline.max_anisotropy();
        pipeline.run(push, frame_size / group_size, frame_size / group_size);
        output.invalidate();
        std::vector<ParityPixel> pixels(std::size_t(frame_size) * frame_size);
        std::memcpy(pixels.data(), output.mapped(), bytes);
        return pixels;
    }

    std::shared_ptr<test::MipLevels> levels_;
    std::string device_;  // the name of the device that rendered the last pose
};

TEST_F(VulkanImageParityTest, WithoutAnisotropyEveryPoseMatchesTheDevicesSampler) {
    const Variant right[] = {{"vtpage", parity_render_test_comp}};
    std::vector<std::vector<PoseResult>> rows;
    std::string reason;
    if (!render_poses(right, rows, reason)) GTEST_SKIP() << "host: " << reason;
    print_table("image parity (16x reported, not gated)", device_, rows[0]);
    const PoseResult* worst = nullptr;
    for (const PoseResult& r : rows[0]) {
        SCOPED_TRACE(r.pose->name);
        EXPECT_GE(r.covered, std::size_t(frame_size) * frame_size / 2);
        EXPECT_GE(r.isotropic.psnr, r.pose->gate_db);
        EXPECT_LE(r.isotropic.p9999, error_gate) << r.isotropic.p9999 * 255 << "/255";
        EXPECT_GE(r.device_lod.psnr, device_lod_gate_db) << "at the device's level of detail";
        EXPECT_LE(r.device_lod.p9999, error_gate) << r.device_lod.p9999 * 255 << "/255";
        if (!r.passes() && (!worst || r.margin() < worst->margin())) worst = &r;
    }
    if (worst) {
        ADD_FAILURE() << "the worst pose, " << worst->pose->name
                      << ": vtpage.ppm, device.ppm and difference.ppm (times 8) in "
                      << keep_images(*worst).string();
    }
}

// The gates can fail: each wrong variant fails at least one pose's.
TEST_F(VulkanImageParityTest, WrongVariantsFailAGate) {
    const Variant wrong[] = {{"wrong wrap (repeat clamped)", parity_wrong_wrap_test_comp},
                             {"wrong sRGB (decoded after filtering)", parity_wrong_srgb_test_comp},
                             {"wrong level (lod + 1)", parity_wrong_lod_test_comp}};
    std::vector<std::vector<PoseResult>> rows;
    std::string reason;
    if (!render_poses(wrong, rows, reason)) GTEST_SKIP() << "host: " << reason;
    for (std::size_t v = 0; v < std::size(wrong); ++v) {
        print_table(wrong[v].name, device_, rows[v]);
        const auto failed = std::count_if(rows[v].begin(), rows[v].end(),
                                          [](const PoseResult& r) { return !r.passes(); });
        EXPECT_GE(failed, 1) << wrong[v].name << " passes every pose's gate";
    }
}

}  // namespace
}  // namespace vtpage
