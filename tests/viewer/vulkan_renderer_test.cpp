// The renderer against the CPU reference: a virtual texture whose pages are filled on the CPU
// (texture_layout.hpp directly) is drawn through the indirection table, and each pixel must be
// what the reference sampler computes from the flat pattern; the feedback must name the tiles
// the camera sees.
#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "../interop/vulkan_test_support.hpp"
#include "../support/backend_fixture.hpp"
#include "renderer/vulkan_screenshot.hpp"
#include "renderer_rig.hpp"
#include "vtpage/interop/vulkan_timeline.hpp"

#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#endif
#include <stb/stb_image.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

namespace vtpage {
namespace {

using namespace vtpage::viewer;  // the renderer under test

using test::compare;
using test::Difference;
using test::Frame;
using test::OrthoView;
constexpr std::uint32_t size_log2 = test::rig_size_log2;
constexpr std::uint32_t texture_id = test::rig_texture_id;
constexpr std::uint32_t width = test::rig_width;
constexpr std::uint32_t height = test::rig_height;
constexpr std::uint32_t divisor = test::rig_divisor;
constexpr int tolerance = test::rig_tolerance;
const std::uint8_t* const sky = test::rig_sky;

// Every test runs on each backend: host pages (host pointer imports, lavapipe in CI) and cuda
// pages (OPAQUE_FD imports into the GPU's Vulkan driver).
class VulkanRendererTest : public testing::TestWithParam<std::string>, protected test::RendererRig {
protected:
    void SetUp() override {
        std::string reason;
        if (!set_up(GetParam(), reason)) GTEST_SKIP() << GetParam() << ": " << reason;
    }
    void TearDown() override { tear_down(); }
};

struct LodCase {
    const char* name;
    float lod, u0, v0;
};
void PrintTo(const LodCase& c, std::ostream* out) { *out << c.name; }

class VulkanRendererLodTest : public testing::TestWithParam<std::tuple<std::string, LodCase>>,
                              protected test::RendererRig {
protected:
    void SetUp() override {
        std::string reason;
        const std::string& name = std::get<0>(GetParam());
        if (!set_up(name, reason)) GTEST_SKIP() << name << ": " << reason;
    }
    void TearDown() override { tear_down(); }
};

TEST_P(VulkanRendererLodTest, MatchesTheCpuReferenceWithEveryPageResident) {
    make_all_resident();
    const LodCase param = std::get<1>(GetParam());
    const OrthoView view = OrthoView::at_lod(param.lod, param.u0, param.v0);
    ASSERT_LE(view.u0 + view.su, 1.0f);
    ASSERT_LE(view.v0 + view.sv, 1.0f);
    const Frame frame = render(view);
    const auto expected = reference(view);
    const Difference d = compare(frame.colour, expected);
    EXPECT_LE(d.largest, tolerance) << d.differing << " channels differ";
    // The image has content: many distinct colours, none of them the sky.
    std::set<std::uint32_t> colours;
    for (std::size_t i = 0; i < frame.colour.size(); i += 4) {
        std::uint32_t packed;
        std::memcpy(&packed, &frame.colour[i], 4);
        colours.insert(packed);
        ASSERT_FALSE(frame.colour[i] == sky[0] && frame.colour[i + 1] == sky[1] &&
                     frame.colour[i + 2] == sky[2])
            << "sky at pixel " << i / 4;
    }
    EXPECT_GT(colours.size(), width * height / 4);
}

INSTANTIATE_TEST_SUITE_P(
    Views, VulkanRendererLodTest,
    testing::Combine(testing::ValuesIn(test::all_backend_names()),
                     testing::Values(LodCase{"MagnifiedAcrossTileBorders", -1.3f, 0.34f, 0.46f},
                                     LodCase{"TrilinearAcrossPages", 0.3f, 0.9f, 0.44f},
                                     LodCase{"Mips1And2", 1.6f, 0.05f, 0.33f},
                                     LodCase{"Mips2And3", 2.5f, 0.11f, 0.21f},
                                     LodCase{"IntoTheMipTail", 3.5f, 0.02f, 0.07f})),
    [](const testing::TestParamInfo<std::tuple<std::string, LodCase>>& param) {
        return std::get<0>(param.param) + "_" + std::get<1>(param.param).name;
    });

TEST_P(VulkanRendererTest, FallsBackToTheFinestResidentCoarserLevel) {
    make_all_resident();
    const OrthoView view = OrthoView::at_lod(0.3f, 0.9f, 0.44f);
    const auto full = reference(view);
    // Level 0 is gone entirely, and one of level 1's pages: those pixels come from level 2.
    evict(level_pages(0));
    evict({layout.mips[1].first_page});
    ASSERT_FALSE(resident(layout.mips[1].first_page));
    const Frame frame = render(view);
    const auto expected = reference(view);
    const Difference d = compare(frame.colour, expected);
    EXPECT_LE(d.largest, tolerance) << d.differing << " channels differ";
    EXPECT_GT(compare(expected, full).largest, 20) << "the fallback must change the image";

    // Only the tail left: everything comes from it.
    std::vector<std::uint64_t> all_but_tail;
    for (std::uint64_t page = 0; page + 1 < layout.page_count; ++page) {
        if (resident(page)) all_but_tail.push_back(page);
    }
    evict(all_but_tail);
    const Frame tail_only = render(view);
    EXPECT_LE(compare(tail_only.colour, reference(view)).largest, tolerance);
    for (std::size_t i = 3; i < tail_only.colour.size(); i += 4) {
        // Alpha encodes the level: 255 - 10 * mip, the tail's first level is 4.
        EXPECT_LE(tail_only.colour[i], 255 - 10 * layout.tail_first_mip + tolerance);
    }
}

TEST_P(VulkanRendererTest, PagesResidentInPartsOfTheViewMixLevelsPerPage) {
    make_all_resident();
    // A view over level 0's page boundary: keep the left page of level 0, drop the right one.
    const OrthoView view = OrthoView::at_lod(0.3f, 0.9f, 0.44f);
    const std::uint64_t right = layout.locate(0, 8, 3).page;
    ASSERT_NE(right, layout.locate(0, 7, 3).page);
    evict({right, layout.locate(0, 8, 4).page});
    const Frame frame = render(view);
    EXPECT_LE(compare(frame.colour, reference(view)).largest, tolerance);
    // Left of the page boundary (level 0 resident) alpha is between levels 0 and 1; right of
    // it the fine half fell back to level 1.
    test::ReferenceSampler sampler(size_log2,
                                   [this](std::uint64_t page) { return resident(page); });
    std::uint32_t fell_back = 0, kept = 0;
    for (std::uint32_t x = 0; x < width; ++x) {
        std::uint32_t wanted = 0, got = 0;
        sampler.sample(view.u(x, width), view.v(height / 2, height), view.su / width, 0, 0,
                       view.sv / height, 0, &wanted, &got);
        (got > wanted ? fell_back : kept) += 1;
    }
    EXPECT_GT(fell_back, 0u);
    EXPECT_GT(kept, 0u);
}

TEST_P(VulkanRendererTest, WithNothingResidentItShowsMagentaAndDoesNotFault) {
    const OrthoView view = OrthoView::at_lod(1.0f, 0.2f, 0.2f);
    const Frame frame = render(view);
    for (std::size_t i = 0; i < frame.colour.size(); i += 4) {
        ASSERT_EQ(frame.colour[i + 0], 255);
        ASSERT_EQ(frame.colour[i + 1], 0);
        ASSERT_EQ(frame.colour[i + 2], 255);
    }
}

// A frame the device cannot finish (it waits for a semaphore nobody signals) is reported as a
// typed error after the timeout instead of hanging the caller, and the renderer goes on once
// the semaphore comes.
TEST_P(VulkanRendererTest, AFrameThatNeverFinishesIsAnErrorNotAHang) {
    VulkanRenderer late(*context, *indirection, *textures,
                        VulkanRendererSettings{.width = 64, .height = 32, .frame_timeout_ms = 300});
    VulkanTimeline never(*context);
    FrameDesc frame = frame_for(OrthoView::at_lod(1.0f, 0.2f, 0.2f), RenderMode::textured);
    frame.waits.push_back(FrameWait{never.get(), 1});
    late.render(frame);
    try {
        late.finish();
        FAIL() << "finish() returned for a frame that cannot run";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::busy);
        EXPECT_NE(std::string(error.what()).find("300 ms"), std::string::npos) << error.what();
    }
    never.signal(1);
    // Now the frame runs. On a busy machine (lavapipe compiles the pipelines at the first draw,
    // slower still under a sanitizer) that may take longer than the 300 ms the renderer allows
    // per wait: each wait that gives up says so, and the frame arrives within a minute.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    std::size_t finished = 0;
    for (;;) {
        try {
            finished = late.finish().size();
            break;
        } catch (const Error& error) {
            ASSERT_EQ(error.code(), Errc::busy) << error.what();
            ASSERT_LT(std::chrono::steady_clock::now(), deadline) << error.what();
        }
    }
    EXPECT_EQ(finished, 1u);
}

// A renderer destroyed while its frame is past the deadline (a slow device, a loaded machine)
// waits longer for it instead of destroying what the device still uses: the validation layer,
// which reports every such destroy, stays quiet (the fixture checks), and the destruction ends
// when the frame does.
TEST_P(VulkanRendererTest, ARendererDestroyedPastAFramesDeadlineWaitsForTheFrame) {
    VulkanTimeline late_signal(*context);
    auto late = std::make_unique<VulkanRenderer>(
        *context, *indirection, *textures,
        VulkanRendererSettings{.width = 64, .height = 32, .frame_timeout_ms = 200});
    FrameDesc frame = frame_for(OrthoView::at_lod(1.0f, 0.2f, 0.2f), RenderMode::textured);
    frame.waits.push_back(FrameWait{late_signal.get(), 1});
    late->render(frame);
    const auto start = std::chrono::steady_clock::now();
    std::thread signaller([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(800));
        late_signal.signal(1);
    });
    late.reset();
    const auto waited = std::chrono::steady_clock::now() - start;
    signaller.join();
    EXPECT_GE(waited, std::chrono::milliseconds(800)) << "destroyed before its frame finished";
}

TEST_P(VulkanRendererTest, FeedbackNamesTheTilesTheCameraSees) {
    make_resident({layout.tail_page()});  // feedback asks for what is wanted, resident or not
    // Each view crosses tile edges of its level in both directions, well inside the image.
    for (const OrthoView& view :
         {OrthoView::at_lod(0.3f, 0.9f, 0.44f), OrthoView::at_lod(1.6f, 0.14f, 0.4f),
          OrthoView::at_lod(2.5f, 0.3f, 0.3f)}) {
        const Frame frame = render(view);
        const std::uint32_t fw = renderer->feedback_width(), fh = renderer->feedback_height();
        ASSERT_EQ(fw, width / divisor);
        ASSERT_EQ(fh, height / divisor);
        ASSERT_EQ(frame.feedback.size(), std::size_t(fw) * fh);
        test::ReferenceSampler sampler(size_log2, [](std::uint64_t) { return true; });
        const float bias = renderer->feedback_lod_bias();
        std::set<std::pair<std::uint32_t, std::uint32_t>> seen, expected;
        std::size_t compared = 0;
        for (std::uint32_t y = 0; y < fh; ++y) {
            for (std::uint32_t x = 0; x < fw; ++x) {
                const float u = view.u(x, fw), v = view.v(y, fh);
                const vt::FeedbackEntry want =
                    sampler.feedback(texture_id, u, v, view.su / fw, 0, 0, view.sv / fh, bias);
                const vt::FeedbackEntry got = frame.feedback[y * fw + x];
                ASSERT_FALSE(got.is_empty()) << x << "," << y;
                seen.insert({got.texture_mip, got.tile_xy});
                expected.insert({want.texture_mip, want.tile_xy});
                // A sample within a hundredth of a texel of a tile edge may land either side.
                float cx = 0, cy = 0;
                sampler.level_position(want.tile().mip, u, v, cx, cy);
                const float ex = std::fmod(cx, float(vt::tile_payload));
                const float ey = std::fmod(cy, float(vt::tile_payload));
                if (std::min(ex, vt::tile_payload - ex) < 0.01f ||
                    std::min(ey, vt::tile_payload - ey) < 0.01f) {
                    continue;
                }
                ++compared;
                const vt::TileId w = want.tile(), g = got.tile();
                EXPECT_EQ(g.texture, w.texture);
                EXPECT_EQ(g.mip, w.mip) << "pixel " << x << "," << y;
                EXPECT_EQ(g.x, w.x) << "pixel " << x << "," << y;
                EXPECT_EQ(g.y, w.y) << "pixel " << x << "," << y;
            }
        }
        EXPECT_GT(compared, std::size_t(fw) * fh * 9 / 10);
        EXPECT_EQ(seen, expected);
        EXPECT_GE(seen.size(), 2u) << "the views cross tile edges";
    }
}

TEST_P(VulkanRendererTest, FeedbackIsEmptyWhereThePlaneIsNotDrawn) {
    make_all_resident();
    // The plane ends at u = 1: the right part of the image is sky.
    const OrthoView view{0.8f, 0.3f, 0.4f, 0.3f};
    const Frame frame = render(view);
    const std::uint32_t fw = renderer->feedback_width(), fh = renderer->feedback_height();
    std::size_t empty = 0, inside = 0;
    for (std::uint32_t y = 0; y < fh; ++y) {
        for (std::uint32_t x = 0; x < fw; ++x) {
            const float u = view.u(x, fw);
            if (std::abs(u - 1.0f) < 0.02f) continue;  // the edge itself
            const bool on_plane = u < 1.0f;
            EXPECT_EQ(frame.feedback[y * fw + x].is_empty(), !on_plane) << x << "," << y;
            (on_plane ? inside : empty) += 1;
        }
    }
    EXPECT_GT(empty, 0u);
    EXPECT_GT(inside, 0u);
    // And the colour: sky beyond the edge.
    const std::uint32_t x = width - 1, y = height / 2;
    EXPECT_EQ(frame.colour[(y * width + x) * 4 + 0], sky[0]);
    EXPECT_EQ(frame.colour[(y * width + x) * 4 + 2], sky[2]);
}

TEST_P(VulkanRendererTest, PerspectiveFeedbackGetsCoarserWithDistance) {
    make_all_resident();
    // Looking across the plane from above its near edge: the far rows (top of the image) want
    // coarser levels than the near ones.
    const float eye[3] = {0.5f, 0.05f, -0.05f};
    const float target[3] = {0.5f, 0.0f, 0.6f};
    // look-at and perspective (Vulkan clip space, y down), written out to keep the test
    // self-contained.
    float f[3] = {target[0] - eye[0], target[1] - eye[1], target[2] - eye[2]};
    const float fl = std::sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    for (float& c : f) c /= fl;
    const float up[3] = {0, 1, 0};
    float s[3] = {f[1] * up[2] - f[2] * up[1], f[2] * up[0] - f[0] * up[2],
                  f[0] * up[1] - f[1] * up[0]};
    const float sl = std::sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
    for (float& c : s) c /= sl;
    const float u[3] = {s[1] * f[2] - s[2] * f[1], s[2] * f[0] - s[0] * f[2],
                        s[0] * f[1] - s[1] * f[0]};
    const float near = 0.01f, far = 10.0f, tan_half = std::tan(0.5f),
                aspect = float(width) / height;
    // view rows: s, u, -f; projection: x / (aspect tan), -y / tan (Vulkan), depth 0..1.
    float view[4][4] = {{s[0], s[1], s[2], -(s[0] * eye[0] + s[1] * eye[1] + s[2] * eye[2])},
                        {u[0], u[1], u[2], -(u[0] * eye[0] + u[1] * eye[1] + u[2] * eye[2])},
                        {-f[0], -f[1], -f[2], (f[0] * eye[0] + f[1] * eye[1] + f[2] * eye[2])},
                        {0, 0, 0, 1}};
    float projection[4][4] = {{1 / (aspect * tan_half), 0, 0, 0},
                              {0, -1 / tan_half, 0, 0},
                              {0, 0, far / (near - far), far * near / (near - far)},
                              {0, 0, -1, 0}};
    FrameDesc desc;
    for (int row = 0; row < 4; ++row) {
        for (int col = 0; col < 4; ++col) {
            float sum = 0;
            for (int k = 0; k < 4; ++k) sum += projection[row][k] * view[k][col];
            desc.view_projection[col * 4 + row] = sum;
        }
    }
    desc.texture_id = texture_id;
    desc.capture = true;
    renderer->render(desc);
    auto done = renderer->finish();
    ASSERT_EQ(done.size(), 1u);
    const std::uint32_t fw = done[0].feedback_width, fh = done[0].feedback_height;
    double previous_mean = -1;
    int rows_with_plane = 0;
    for (std::uint32_t y = fh; y-- > 0;) {  // from the near (bottom) row up
        double sum = 0;
        int count = 0;
        for (std::uint32_t x = 0; x < fw; ++x) {
            const vt::FeedbackEntry entry = done[0].feedback[y * fw + x];
            if (entry.is_empty()) continue;
            const vt::TileId tile = entry.tile();
            EXPECT_EQ(tile.texture, texture_id);
            ASSERT_LT(tile.mip, layout.mip_count);
            ASSERT_LT(tile.x, layout.mips[tile.mip].tiles_x);
            ASSERT_LT(tile.y, layout.mips[tile.mip].tiles_y);
            sum += tile.mip;
            ++count;
        }
        if (count == 0) continue;
        ++rows_with_plane;
        const double mean = sum / count;
        EXPECT_GE(mean + 1e-9, previous_mean) << "row " << y;
        previous_mean = mean;
    }
    EXPECT_GE(rows_with_plane, int(fh) / 2);
    EXPECT_GT(previous_mean, 1.0) << "the far rows want coarse levels";
}

TEST_P(VulkanRendererTest, FramesInFlightComeBackInOrderEachWithItsOwnResidency) {
    make_all_resident();
    const OrthoView view = OrthoView::at_lod(0.3f, 0.9f, 0.44f);
    // Three frames submitted back to back, residency shrinking between them; each must show
    // the residency it was submitted with, though the later uploads run while it is in flight.
    std::vector<std::vector<std::uint8_t>> expected;
    std::vector<Frame> frames;
    auto submit = [&](std::uint64_t tag) {
        expected.push_back(reference(view));
        FrameDesc desc = frame_for(view);
        desc.user_tag = tag;
        if (auto done = renderer->render(desc)) frames.push_back(copy(*done));
    };
    submit(100);
    evict(level_pages(0));
    submit(101);
    evict(level_pages(1));
    submit(102);  // frame 1 comes back here (two frames in flight)
    ASSERT_EQ(frames.size(), 1u);
    for (const CompletedFrame& done : renderer->finish()) frames.push_back(copy(done));
    ASSERT_EQ(frames.size(), 3u);
    for (std::size_t i = 0; i < frames.size(); ++i) {
        EXPECT_EQ(frames[i].info.frame, i + 1);
        EXPECT_EQ(frames[i].info.user_tag, 100 + i);
        EXPECT_GE(frames[i].info.gpu_ms, 0.0);
        EXPECT_LE(compare(frames[i].colour, expected[i]).largest, tolerance) << "frame " << i;
    }
    EXPECT_TRUE(frames[0].info.upload.cleared);
    EXPECT_GT(frames[1].info.upload.entries, 0u);  // level 0's evictions
    EXPECT_EQ(renderer->frames_submitted(), 3u);
    EXPECT_TRUE(renderer->finish().empty());
}

// take_completed hands a frame back as soon as the device has finished it, once, in order, and
// render() then has nothing to hand back for that slot.
TEST_P(VulkanRendererTest, FinishedFramesAreTakenBeforeTheirSlotIsReused) {
    make_all_resident();
    const OrthoView view = OrthoView::at_lod(0.3f, 0.9f, 0.44f);
    const std::vector<std::uint8_t> expected = reference(view);
    std::uint64_t tag = 100;
    auto submit = [&] {
        FrameDesc desc = frame_for(view);
        desc.user_tag = tag++;
        return renderer->render(desc);
    };
    auto wait_for = [&](std::uint64_t number) {
        ASSERT_TRUE(renderer->timeline().wait(number, 10'000'000'000ull)) << "frame " << number;
    };
    ASSERT_FALSE(submit());
    wait_for(1);
    std::optional<CompletedFrame> first = renderer->take_completed();
    ASSERT_TRUE(first);
    EXPECT_EQ(first->frame, 1u);
    EXPECT_EQ(first->user_tag, 100u);
    EXPECT_LE(compare(copy(*first).colour, expected).largest, tolerance);
    EXPECT_FALSE(renderer->take_completed()) << "frame 1 was handed back already";

    ASSERT_FALSE(submit());
    ASSERT_FALSE(submit()) << "frame 3 reuses frame 1's slot, which was handed back";
    wait_for(3);
    std::vector<std::uint64_t> taken;
    while (std::optional<CompletedFrame> done = renderer->take_completed()) {
        taken.push_back(done->frame);
        EXPECT_EQ(done->user_tag, 99 + done->frame);
        EXPECT_LE(compare(copy(*done).colour, expected).largest, tolerance) << done->frame;
    }
    EXPECT_EQ(taken, (std::vector<std::uint64_t>{2, 3}));

    // Frames not taken come back from render() and finish() as before, each once.
    ASSERT_FALSE(submit()) << "frame 4 reuses frame 2's slot, which was handed back";
    ASSERT_FALSE(submit());
    std::optional<CompletedFrame> sixth_returns = submit();
    ASSERT_TRUE(sixth_returns);
    EXPECT_EQ(sixth_returns->frame, 4u);
    taken.clear();
    for (const CompletedFrame& done : renderer->finish()) taken.push_back(done.frame);
    EXPECT_EQ(taken, (std::vector<std::uint64_t>{5, 6}));
    EXPECT_FALSE(renderer->take_completed());
}

// A frame's feedback is read once its feedback pass is done (take_feedback), once, in frame
// order; the frame then comes back without it. It is the feedback the frame would have brought.
TEST_P(VulkanRendererTest, FeedbackIsHandedBackOnceAheadOfItsFrame) {
    make_all_resident();
    const OrthoView view = OrthoView::at_lod(0.3f, 0.9f, 0.44f);
    for (std::uint64_t tag : {100, 101}) {
        FrameDesc desc = frame_for(view);
        desc.user_tag = tag;
        ASSERT_FALSE(renderer->render(desc));
    }
    std::optional<FrameFeedback> early;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!early && std::chrono::steady_clock::now() < deadline) {
        early = renderer->take_feedback();
    }
    ASSERT_TRUE(early) << "frame 1's feedback pass did not finish in 10 s";
    EXPECT_EQ(early->frame, 1u);
    EXPECT_EQ(early->user_tag, 100u);
    ASSERT_EQ(early->feedback.size(), std::size_t(early->feedback_width) * early->feedback_height);
    const std::vector<vt::FeedbackEntry> taken(early->feedback.begin(), early->feedback.end());
    EXPECT_TRUE(std::any_of(taken.begin(), taken.end(),
                            [](const vt::FeedbackEntry& entry) { return !entry.is_empty(); }));

    const std::vector<CompletedFrame> done = renderer->finish();
    ASSERT_EQ(done.size(), 2u);
    EXPECT_TRUE(done[0].feedback_taken);
    EXPECT_TRUE(done[0].feedback.empty()) << "handed back already";
    EXPECT_FALSE(done[1].feedback_taken);
    ASSERT_EQ(done[1].feedback.size(), taken.size());
    EXPECT_TRUE(std::equal(taken.begin(), taken.end(), done[1].feedback.begin(),
                           [](const vt::FeedbackEntry& a, const vt::FeedbackEntry& b) {
                               return a.texture_mip == b.texture_mip && a.tile_xy == b.tile_xy;
                           }))
        << "the same view, the same feedback";
    EXPECT_FALSE(renderer->take_feedback()) << "every frame is handed back";
}

TEST_P(VulkanRendererTest, OverlayModesTintByResidency) {
    make_all_resident();
    const OrthoView view = OrthoView::at_lod(0.3f, 0.9f, 0.44f);
    auto greenness = [](const Frame& frame) {
        double sum = 0;
        for (std::size_t i = 0; i < frame.colour.size(); i += 4) {
            sum += int(frame.colour[i + 1]) - int(frame.colour[i]);
        }
        return sum / double(frame.colour.size() / 4);
    };
    const double all_resident = greenness(render(view, RenderMode::residency));
    evict(level_pages(0));
    const double fallen_back = greenness(render(view, RenderMode::residency));
    EXPECT_GT(all_resident, 20.0) << "green where the wanted level is resident";
    EXPECT_LT(fallen_back, -20.0) << "yellow to red where it fell back";
    const Frame mips = render(view, RenderMode::mip_levels);
    EXPECT_GT(compare(mips.colour, render(view).colour).largest, 40);
}

TEST_P(VulkanRendererTest, OverlayHookDrawsIntoTheColourImage) {
    make_all_resident();
    FrameDesc desc = frame_for(OrthoView::at_lod(1.0f, 0.2f, 0.2f));
    bool called = false;
    desc.overlay = [&](VkCommandBuffer commands, const OverlayTarget& target) {
        called = true;
        EXPECT_EQ(target.extent.width, width);
        EXPECT_EQ(target.format, VK_FORMAT_R8G8B8A8_UNORM);
        VkRenderingAttachmentInfo attachment{VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO};
        attachment.imageView = target.view;
        attachment.imageLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL;
        attachment.loadOp = VK_ATTACHMENT_LOAD_OP_LOAD;
        attachment.storeOp = VK_ATTACHMENT_STORE_OP_STORE;
        VkRenderingInfo rendering{VK_STRUCTURE_TYPE_RENDERING_INFO};
        rendering.renderArea = {{0, 0}, target.extent};
        rendering.layerCount = 1;
        rendering.colorAttachmentCount = 1;
        rendering.pColorAttachments = &attachment;
        vkCmdBeginRendering(commands, &rendering);
        VkClearAttachment clear{VK_IMAGE_ASPECT_COLOR_BIT, 0, {}};
        clear.clearValue.color = {{0.0f, 1.0f, 0.0f, 1.0f}};
        VkClearRect rect{{{4, 4}, {8, 8}}, 0, 1};
        vkCmdClearAttachments(commands, 1, &clear, 1, &rect);
        vkCmdEndRendering(commands);
    };
    renderer->render(desc);
    auto done = renderer->finish();
    ASSERT_EQ(done.size(), 1u);
    EXPECT_TRUE(called);
    const std::uint8_t* inside = &done[0].colour[(6 * width + 6) * 4];
    EXPECT_EQ(inside[0], 0);
    EXPECT_EQ(inside[1], 255);
    EXPECT_EQ(inside[2], 0);
    const std::uint8_t* outside = &done[0].colour[(20 * width + 20) * 4];
    EXPECT_FALSE(outside[0] == 0 && outside[1] == 255 && outside[2] == 0);
}

TEST_P(VulkanRendererTest, ScreenshotsRoundTripThroughPng) {
    make_all_resident();
    const Frame frame = render(OrthoView::at_lod(1.6f, 0.05f, 0.33f));
    const auto path = std::filesystem::temp_directory_path() /
                      ("vtpage_screenshot_" + std::to_string(::getpid()) + ".png");
    write_png(path.string(), width, height, frame.colour);
    int w = 0, h = 0, channels = 0;
    std::uint8_t* pixels = stbi_load(path.string().c_str(), &w, &h, &channels, 4);
    ASSERT_NE(pixels, nullptr);
    EXPECT_EQ(w, int(width));
    EXPECT_EQ(h, int(height));
    EXPECT_EQ(std::memcmp(pixels, frame.colour.data(), frame.colour.size()), 0);
    stbi_image_free(pixels);
    std::filesystem::remove(path);
    EXPECT_THROW(write_png(path.string(), width + 1, height, frame.colour), Error);
    EXPECT_THROW(write_png("/nonexistent-folder/x.png", width, height, frame.colour), Error);
}

TEST_P(VulkanRendererTest, ResizeMakesNewTargets) {
    make_all_resident();
    renderer->resize(32, 24);
    EXPECT_EQ(renderer->width(), 32u);
    EXPECT_EQ(renderer->feedback_width(), 8u);
    FrameDesc desc = frame_for(OrthoView::at_lod(1.0f, 0.2f, 0.2f));
    renderer->render(desc);
    auto done = renderer->finish();
    ASSERT_EQ(done.size(), 1u);
    EXPECT_EQ(done[0].width, 32u);
    EXPECT_EQ(done[0].colour.size(), 32u * 24 * 4);
    EXPECT_EQ(done[0].feedback.size(), 8u * 6);
}

INSTANTIATE_TEST_SUITE_P(Backends, VulkanRendererTest, testing::ValuesIn(test::all_backend_names()),
                         test::backend_param_name);

}  // namespace
}  // namespace vtpage
