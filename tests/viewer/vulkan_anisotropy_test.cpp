// Anisotropic filtering in the sampling include (vt_anisotropic_footprint and the samples and
// feedback made from it), against the device's own sampler, on the device (lavapipe in CI) with
// validation. A plane textured with band-limited stripes (every page resident) is seen head-on
// and at grazing angles, rendered by anisotropy_render.glsl four ways: vtpage isotropic, vtpage
// at 16x, the device's sampler at 16x on an image holding the same mip levels as the tiles, and
// the ground truth (the device's sampler without anisotropy, 4 x 4 supersampled and averaged).
// PSNR against the ground truth over the pixels the plane covers: at the grazing poses vtpage's
// 16x must gain 3 dB on its isotropic sample and come within 1.5 dB of the device's 16x;
// head-on (a round footprint) it must be the isotropic sample itself. Two deliberately wrong
// variants (the major axis's level; probes along the minor axis) must fail that gate.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <numbers>
#include <span>
#include <vector>

#include "device_sampler_pipeline.hpp"
#include "renderer_rig.hpp"
#include "vtpage/interop/vulkan_buffer.hpp"

namespace vtpage {
namespace {

constexpr std::uint32_t anisotropy_render_test_comp[] = {
#include "anisotropy_render_test.comp.spv.inc"
};
constexpr std::uint32_t anisotropy_wrong_level_test_comp[] = {
#include "anisotropy_wrong_level_test.comp.spv.inc"
};
constexpr std::uint32_t anisotropy_wrong_axis_test_comp[] = {
#include "anisotropy_wrong_axis_test.comp.spv.inc"
};

constexpr std::uint32_t size_log2 = 8;  // 256 x 256 texels, 9 levels
constexpr std::uint32_t frame_size = 128;
constexpr std::uint32_t group_size = 8;  // the shader's local size, both axes
constexpr float head_on = 90;
constexpr float poses[] = {5, 10, 20, head_on};  // degrees between the view and the plane

// PixelResult in anisotropy_render.glsl.
struct PixelResult {
    test::Colour isotropic, anisotropic, device, device_isotropic, truth;
    vt::FeedbackEntry feedback_isotropic, feedback_anisotropic;
    std::uint32_t covered = 0;
    std::uint32_t probes = 0;
    std::uint32_t wanted_mip = 0;
    std::uint32_t padding = 0;
};
// The push constants of anisotropy_render.glsl.
struct AnisotropyPush {
    VkDeviceAddress indirection = 0;
    VkDeviceAddress directory = 0;
    VkDeviceAddress results = 0;
    std::uint32_t texture_id = 0;
    std::uint32_t width = frame_size;
    std::uint32_t height = frame_size;
    float max_anisotropy = 16;
    std::uint32_t padding[2] = {};
    float eye[4] = {};      // w: uv per world unit
    float right[4] = {};    // w: tan of half the horizontal field of view
    float up[4] = {};       // w: tan of half the vertical one
    float forward[4] = {};  // w unused
};
static_assert(sizeof(PixelResult) == 112 && sizeof(AnisotropyPush) == 112, "the shader's std430");

// Level 0: stripes along u (R), along v (G) and diagonal (B), 6.4, 5.3 and 6.4 texels a period,
// whole periods across the texture so that it repeats seamlessly. Each further level is the
// 2 x 2 mean of the one before, rounded, as a box-filtered mip chain: the tiles and the device's
// image are made from these very texels.
test::MipLevels stripe_levels() {
    constexpr std::uint32_t size = 1u << size_log2;
    const auto stripe = [](float periods, float position) {
        const float wave = std::sin(2 * std::numbers::pi_v<float> * periods * position / size);
        return std::uint32_t(std::lround(127.5f + 115.0f * wave));
    };
    test::MipLevels levels(1, std::vector<std::uint32_t>(size * size));
    for (std::uint32_t y = 0; y < size; ++y) {
        for (std::uint32_t x = 0; x < size; ++x) {
            const float u = float(x) + 0.5f, v = float(y) + 0.5f;
            levels[0][y * size + x] =
                stripe(40, u) | stripe(48, v) << 8 | stripe(1, 24 * u + 32 * v) << 16 | 0xffu << 24;
        }
    }
    for (std::uint32_t side = size / 2; side >= 1; side /= 2) {
        const std::vector<std::uint32_t>& finer = levels.back();
        std::vector<std::uint32_t> level(side * side);
        for (std::uint32_t y = 0; y < side; ++y) {
            for (std::uint32_t x = 0; x < side; ++x) {
                std::uint32_t texel = 0;
                for (std::uint32_t channel = 0; channel < 32; channel += 8) {
                    std::uint32_t sum = 0;
                    for (std::uint32_t i = 0; i < 4; ++i) {
                        const std::uint32_t fx = 2 * x + (i & 1), fy = 2 * y + (i >> 1);
                        sum += finer[fy * 2 * side + fx] >> channel & 0xffu;
                    }
                    texel |= (sum + 2) / 4 << channel;
                }
                level[y * side + x] = texel;
            }
        }
        levels.push_back(std::move(level));
    }
    return levels;
}

// The camera of a pose: looking down at `degrees` to the plane y = 0 at its origin, from a fixed
// distance, a 30-degree field of view; texel density such that the footprint's minor axis is
// about 1.5 texels where the view's centre meets the plane.
AnisotropyPush pose_push(float degrees) {
    const float a = degrees * std::numbers::pi_v<float> / 180;
    const float distance = 1.4f, tan_half = std::tan(15 * std::numbers::pi_v<float> / 180);
    AnisotropyPush push;
    push.forward[1] = -std::sin(a);
    push.forward[2] = std::cos(a);
    push.up[1] = std::cos(a);
    push.up[2] = std::sin(a);
    push.up[3] = tan_half;
    push.right[0] = 1;
    push.right[3] = tan_half;
    for (int i = 0; i < 3; ++i) push.eye[i] = -distance * push.forward[i];
    push.eye[2] += 0.3f;  // off the texture's corner
    push.eye[3] = 1;
    return push;
}

// Peak signal-to-noise ratio of a against b over the covered pixels' colour channels (1 is the
// peak), in dB; infinite where they are equal.
double psnr(std::span<const PixelResult> pixels, test::Colour PixelResult::*a,
            test::Colour PixelResult::*b) {
    double squared = 0;
    std::size_t count = 0;
    for (const PixelResult& p : pixels) {
        if (!p.covered) continue;
        const test::Colour &x = p.*a, &y = p.*b;
        for (const double d : {x.r - y.r, x.g - y.g, x.b - y.b}) squared += d * d;
        count += 3;
    }
    return count == 0 ? 0 : -10 * std::log10(squared / double(count));
}

// One pose's scores against the ground truth, in dB.
struct Scores {
    float degrees = 0;
    std::size_t covered = 0;
    double mean_probes = 0;
    double isotropic = 0, anisotropic = 0, device = 0, device_isotropic = 0;
    double anisotropic_vs_device = 0;
    double isotropic_vs_device = 0;  // both without anisotropy: the same texels, the same filter

    bool grazing() const { return degrees != head_on; }
    // The gate at a grazing pose.
    bool gains_on_isotropic() const { return anisotropic >= isotropic + 3; }
    bool near_the_device() const { return anisotropic >= device - 1.5; }
};

Scores score(float degrees, std::span<const PixelResult> pixels) {
    Scores s{degrees};
    std::size_t probes = 0;
    for (const PixelResult& p : pixels) {
        s.covered += p.covered;
        probes += p.covered ? p.probes : 0;
    }
    s.mean_probes = s.covered ? double(probes) / double(s.covered) : 0;
    s.isotropic = psnr(pixels, &PixelResult::isotropic, &PixelResult::truth);
    s.anisotropic = psnr(pixels, &PixelResult::anisotropic, &PixelResult::truth);
    s.device = psnr(pixels, &PixelResult::device, &PixelResult::truth);
    s.device_isotropic = psnr(pixels, &PixelResult::device_isotropic, &PixelResult::truth);
    s.anisotropic_vs_device = psnr(pixels, &PixelResult::anisotropic, &PixelResult::device);
    s.isotropic_vs_device = psnr(pixels, &PixelResult::isotropic, &PixelResult::device_isotropic);
    return s;
}

void print_table(const char* title, std::span<const Scores> rows) {
    std::printf("%s (PSNR against the ground truth, dB)\n", title);
    std::printf(
        "  pose  covered  probes  vtpage-iso  vtpage-16x  device-16x  device-iso  16x-vs-device"
        "  iso-vs-device-iso\n");
    for (const Scores& s : rows) {
        std::printf("  %4.0f  %7zu  %6.2f  %10.2f  %10.2f  %10.2f  %10.2f  %13.2f  %17.2f\n",
                    double(s.degrees), s.covered, s.mean_probes, s.isotropic, s.anisotropic,
                    s.device, s.device_isotropic, s.anisotropic_vs_device, s.isotropic_vs_device);
    }
}

class VulkanAnisotropyTest : public testing::Test, protected test::RendererRig {
protected:
    void SetUp() override {
        levels_ = std::make_shared<test::MipLevels>(stripe_levels());
        const auto texel = [levels = levels_](std::uint32_t mip, std::uint32_t x, std::uint32_t y) {
            const std::uint32_t side = std::max(1u, (1u << size_log2) >> mip);
            return (*levels)[mip][y * side + x];
        };
        const vt::TextureSampling repeat{vt::AddressMode::repeat, vt::AddressMode::repeat};
        std::string reason;
        if (!set_up("host", reason, vt::TextureShape::square(size_log2),
                    {.content = {texel, repeat}})) {
            GTEST_SKIP() << "host: " << reason;
        }
        if (!context->supports_sampler_anisotropy()) {
            GTEST_SKIP() << context->device_name() << " offers no samplerAnisotropy";
        }
        make_all_resident();
        render(test::OrthoView{});  // a frame uploads the indirection table and the directory
    }
    void TearDown() override { tear_down(); }

    // A variant of the shader over the device's image of the texture's levels.
    test::DeviceSamplerPipeline pipeline(std::span<const std::uint32_t> spirv) {
        const std::uint32_t side = 1u << size_log2;
        return test::DeviceSamplerPipeline(*context, side, side, *levels_,
                                           VK_SAMPLER_ADDRESS_MODE_REPEAT, spirv,
                                           sizeof(AnisotropyPush), "anisotropy_render");
    }

    // The pixels of a pose as a variant of the shader renders them.
    std::vector<PixelResult> render_pose(test::DeviceSamplerPipeline& variant, float degrees) {
        const std::size_t bytes = std::size_t(frame_size) * frame_size * sizeof(PixelResult);
        VulkanBuffer output(
            *context, bytes,
            VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT,
            BufferMemory::readback, "anisotropy pixels");
        AnisotropyPush push = pose_push(degrees);
        push.indirection = indirection->device_address();
        push.directory = textures->device_address();
        push.results = output.device_address();
        push.texture_id = test::rig_texture_id;
        push.max_anisotropy = variant.max_anisotropy();
        variant.run(push, frame_size / group_size, frame_size / group_size);
        output.invalidate();
        std::vector<PixelResult> pixels(std::size_t(frame_size) * frame_size);
        std::memcpy(pixels.data(), output.mapped(), bytes);
        return pixels;
    }
    std::vector<PixelResult> render_pose(std::span<const std::uint32_t> spirv, float degrees) {
        test::DeviceSamplerPipeline variant = pipeline(spirv);
        return render_pose(variant, degrees);
    }

    std::vector<Scores> score_poses(std::span<const std::uint32_t> spirv) {
        test::DeviceSamplerPipeline variant = pipeline(spirv);
        std::vector<Scores> rows;
        for (const float degrees : poses) {
            rows.push_back(score(degrees, render_pose(variant, degrees)));
        }
        return rows;
    }

    std::shared_ptr<test::MipLevels> levels_;
};

TEST_F(VulkanAnisotropyTest, AtGrazingPoses16xGainsOnIsotropicAndComesNearTheDevice) {
    const std::vector<Scores> rows = score_poses(anisotropy_render_test_comp);
    std::printf("%s, %u x %u pixels, %u x %u texels\n", context->device_name().c_str(), frame_size,
                frame_size, 1u << size_log2, 1u << size_log2);
    print_table("vtpage anisotropic sampling", rows);
    for (const Scores& s : rows) {
        SCOPED_TRACE(testing::Message() << s.degrees << " degrees");
        EXPECT_GT(s.covered, std::size_t(frame_size) * frame_size / 4);
        // The two isotropic filters agree but for rounding: the device's image holds the
        // tiles' texels.
        EXPECT_GE(s.isotropic_vs_device, 40.0);
        if (!s.grazing()) continue;
        EXPECT_TRUE(s.gains_on_isotropic()) << s.anisotropic << " dB against " << s.isotropic;
        EXPECT_TRUE(s.near_the_device()) << s.anisotropic << " dB against " << s.device;
    }
}

// Head-on the footprint is round: one probe, the isotropic sample bit for bit.
TEST_F(VulkanAnisotropyTest, HeadOnTheSampleIsTheIsotropicOne) {
    const std::vector<PixelResult> pixels = render_pose(anisotropy_render_test_comp, head_on);
    std::size_t differing = 0, probed = 0;
    for (const PixelResult& p : pixels) {
        if (!p.covered) continue;
        probed += p.probes != 1;
        differing += std::memcmp(&p.isotropic, &p.anisotropic, sizeof(test::Colour)) != 0 ||
                     p.feedback_isotropic.texture_mip != p.feedback_anisotropic.texture_mip ||
                     p.feedback_isotropic.tile_xy != p.feedback_anisotropic.tile_xy;
    }
    EXPECT_EQ(probed, 0u);
    EXPECT_EQ(differing, 0u);
}

// At a grazing pose the anisotropic feedback asks for the level its probes read (finer than the
// isotropic one wherever the footprint is elongated), never a coarser one than the isotropic.
TEST_F(VulkanAnisotropyTest, AnisotropicFeedbackAsksForTheFinerLevelItReads) {
    const std::vector<PixelResult> pixels = render_pose(anisotropy_render_test_comp, 10);
    std::size_t elongated = 0, finer = 0, coarser = 0, not_read = 0;
    for (const PixelResult& p : pixels) {
        if (!p.covered) continue;
        const std::uint32_t iso = p.feedback_isotropic.tile().mip;
        const std::uint32_t aniso = p.feedback_anisotropic.tile().mip;
        not_read += aniso != p.wanted_mip;
        coarser += aniso > iso;
        if (p.probes < 4) continue;
        ++elongated;
        finer += aniso < iso;
    }
    std::printf("10 degrees: %zu pixels of 4 probes or more, %zu of them ask for a finer level\n",
                elongated, finer);
    EXPECT_GT(elongated, 1000u);
    EXPECT_GE(finer, elongated * 9 / 10);
    EXPECT_EQ(coarser, 0u);
    EXPECT_EQ(not_read, 0u);
}

// The gate can fail: probes at the major axis's level, or along the minor axis, miss it.
TEST_F(VulkanAnisotropyTest, WrongVariantsFailTheGate) {
    const struct {
        const char* name;
        std::span<const std::uint32_t> spirv;
    } variants[] = {{"wrong level (the major axis's)", anisotropy_wrong_level_test_comp},
                    {"wrong axis (probes along the minor one)", anisotropy_wrong_axis_test_comp}};
    for (const auto& variant : variants) {
        const std::vector<Scores> rows = score_poses(variant.spirv);
        print_table(variant.name, rows);
        std::size_t failed = 0;
        for (const Scores& s : rows) {
            failed += s.grazing() && !(s.gains_on_isotropic() && s.near_the_device());
        }
        EXPECT_GE(failed, 2u) << variant.name << " passes the gate at most grazing poses";
    }
}

}  // namespace
}  // namespace vtpage
