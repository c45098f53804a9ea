// The camera and its scripted paths: the same pose for the same time, loops that join, a dive
// from above the whole texture to texel level, a benchmark flight that keeps moving over new
// ground, and a projection that puts what the camera looks at in the middle of the image; around
// a mesh scene's box, the whole box in view and in the depth range, from outside it.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <vector>

#include "camera.hpp"
#include "camera_path.hpp"

namespace vtpage::viewer {
namespace {

constexpr double plane = 1 << 20;

void expect_same(const CameraPose& a, const CameraPose& b) {
    EXPECT_DOUBLE_EQ(a.x, b.x);
    EXPECT_DOUBLE_EQ(a.z, b.z);
    EXPECT_DOUBLE_EQ(a.altitude, b.altitude);
    EXPECT_DOUBLE_EQ(a.yaw, b.yaw);
    EXPECT_DOUBLE_EQ(a.pitch, b.pitch);
}

double distance(const CameraPose& a, const CameraPose& b) {
    return std::hypot(a.x - b.x, a.z - b.z, a.altitude - b.altitude);
}

// Texels of mip 0 across one pixel of an image `width` pixels across, at the middle of the
// image (or at its bottom edge).
double texels_per_pixel(const CameraPose& pose, double width, double aspect, bool bottom = false) {
    const double fov_y = Camera{}.fov_y;
    const double fov_x = 2 * std::atan(std::tan(fov_y / 2) * aspect);
    const double depression = -pose.pitch + (bottom ? fov_y / 2 : 0.0);
    const double slant = pose.altitude / std::sin(std::min(depression, 1.5707));
    return slant * 2 * std::tan(fov_x / 2) / width;
}

// Clip x and y of the world point (x, 0, z).
void clip_of(const std::array<float, 16>& m, double x, double z, double& cx, double& cy) {
    const double w = m[0 * 4 + 3] * x + m[2 * 4 + 3] * z + m[3 * 4 + 3];
    cx = (m[0 * 4 + 0] * x + m[2 * 4 + 0] * z + m[3 * 4 + 0]) / w;
    cy = (m[0 * 4 + 1] * x + m[2 * 4 + 1] * z + m[3 * 4 + 1]) / w;
}

TEST(CameraPathTest, NamesAreKnownAndUnknownOnesAreNot) {
    for (const char* name : {"overview", "dive", "benchmark", "cuts"}) {
        const CameraPath* path = find_camera_path(name);
        ASSERT_NE(path, nullptr) << name;
        EXPECT_EQ(path->name, name);
        EXPECT_GT(path->seconds, 0);
        EXPECT_FALSE(path->description.empty());
    }
    EXPECT_EQ(find_camera_path("sideways"), nullptr);
    EXPECT_EQ(camera_paths().size(), 4u);
}

TEST(CameraPathTest, EveryPathIsRepeatableSmoothAndOverThePlane) {
    for (const CameraPath& path : camera_paths()) {
        SCOPED_TRACE(path.name);
        for (double t = 0; t <= path.seconds; t += 0.25) {
            const CameraPose pose = path.at(t, plane);
            expect_same(pose, path.at(t, plane));
            EXPECT_GE(pose.altitude, min_altitude);
            EXPECT_LT(pose.pitch, 0) << "looks down at the plane";
            double x = 0, z = 0;
            ASSERT_TRUE(looked_at_point(pose, x, z));
            EXPECT_GE(x, 0);
            EXPECT_LE(x, plane);
            EXPECT_GE(z, 0);
            EXPECT_LE(z, plane);
            // No jumps but at cuts: a 60 Hz step moves the camera by a few times its altitude
            // at most (the benchmark flies at its set speed, faster than that on purpose).
            if (path.cut_between(t, t + 1.0 / 60)) continue;
            const CameraPose next = path.at(t + 1.0 / 60, plane);
            const double limit = path.name == "benchmark"
                                     ? 1.1 * benchmark_speed(plane) / 60
                                     : 6 * std::max(pose.altitude, next.altitude);
            EXPECT_LT(distance(pose, next), limit) << "t=" << t;
        }
    }
}

TEST(CameraPathTest, LoopsJoinAndTheDiveHoldsItsEnd) {
    for (const CameraPath& path : camera_paths()) {
        SCOPED_TRACE(path.name);
        if (path.holds_end) {
            expect_same(path.at(path.seconds + 3, plane), path.at(path.seconds, plane));
        } else if (path.cut_between(path.seconds - 1e-6, path.seconds)) {
            // A loop that cuts back to its start: the next pass is the same as the first.
            expect_same(path.at(path.seconds, plane), path.at(0, plane));
            expect_same(path.at(path.seconds + 1.5, plane), path.at(1.5, plane));
        } else {
            // The end of a pass is where the next one starts.
            const CameraPose start = path.at(0, plane);
            const CameraPose end = path.at(path.seconds - 1e-6, plane);
            EXPECT_LT(distance(start, end), 1.0);
            EXPECT_NEAR(std::remainder(start.yaw - end.yaw, 2 * 3.141592653589793), 0.0, 1e-3);
            EXPECT_NEAR(start.pitch, end.pitch, 1e-3);
            expect_same(path.at(path.seconds + 1.5, plane), path.at(1.5, plane));
        }
    }
}

TEST(CameraPathTest, TheDiveGoesFromTheWholeTextureToTexelLevel) {
    const CameraPath& dive = *find_camera_path("dive");
    const CameraPose top = dive.at(0, plane);
    const CameraPose bottom = dive.at(dive.seconds, plane);
    EXPECT_GT(top.altitude, plane) << "the whole texture is in view";
    EXPECT_GT(texels_per_pixel(top, 1280, 16.0 / 9), 512);
    EXPECT_LT(texels_per_pixel(bottom, 1280, 16.0 / 9), 0.1) << "a texel spans 10+ pixels";
    // It only goes down.
    for (double t = 0.1; t <= dive.seconds; t += 0.1) {
        EXPECT_LE(dive.at(t, plane).altitude, dive.at(t - 0.1, plane).altitude + 1e-9);
    }
}

TEST(CameraPathTest, TheBenchmarkFliesLowAndFastOverNewGround) {
    const CameraPath& benchmark = *find_camera_path("benchmark");
    for (double t = 0; t < benchmark.seconds; t += 0.5) {
        const CameraPose pose = benchmark.at(t, plane);
        const CameraPose next = benchmark.at(t + 1.0 / 60, plane);
        // Low: mip 0 is in view at 1080p (at the bottom of the image).
        EXPECT_LT(texels_per_pixel(pose, 1920, 16.0 / 9, true), 1.0);
        // Fast: more than half a page (960 texels wide at mip 0) of new ground per 60 Hz frame.
        EXPECT_GT(std::hypot(next.x - pose.x, next.z - pose.z), 480.0);
    }
    // One pass never comes back over the same ground: its start and its middle are far apart.
    const CameraPose start = benchmark.at(0, plane);
    const CameraPose middle = benchmark.at(benchmark.seconds / 2, plane);
    EXPECT_GT(std::hypot(start.x - middle.x, start.z - middle.z), 100000.0);
}

TEST(CameraPathTest, TheCutsPathHoldsEachPlaceAndCutsFarAway) {
    const CameraPath& path = *find_camera_path("cuts");
    std::vector<CameraPose> places;
    for (double t = 0; t < path.seconds; t += cut_hold_seconds) {
        // Still for the whole hold, no cut inside it.
        expect_same(path.at(t + 0.1, plane), path.at(t + cut_hold_seconds - 0.1, plane));
        EXPECT_FALSE(path.cut_between(t + 0.05, t + cut_hold_seconds - 0.05));
        places.push_back(path.at(t + 0.1, plane));
    }
    ASSERT_EQ(places.size(), 4u);
    for (std::size_t i = 0; i < places.size(); ++i) {
        for (std::size_t j = i + 1; j < places.size(); ++j) {
            double xi = 0, zi = 0, xj = 0, zj = 0;
            ASSERT_TRUE(looked_at_point(places[i], xi, zi));
            ASSERT_TRUE(looked_at_point(places[j], xj, zj));
            EXPECT_GT(std::hypot(xi - xj, zi - zj), 0.3 * plane) << i << " and " << j;
        }
    }
    // A cut at each hold's start, but not at the very first frame; a frame that steps over
    // several holds saw several.
    const double step = 0.25;
    int cuts = 0;
    for (int frame = 1; frame * step < 2 * path.seconds; ++frame) {
        cuts += path.cut_between((frame - 1) * step, frame * step);
    }
    EXPECT_EQ(cuts, 7) << "two passes: 3 cuts in the first, 4 in the second";
    EXPECT_FALSE(path.cut_between(0, 0.1));
    EXPECT_TRUE(path.cut_between(0, 100));
    EXPECT_FALSE(find_camera_path("dive")->cut_between(0, 100));
    // The frame at a cut shows the new place.
    EXPECT_TRUE(path.cut_between(2.9, 3.0));
    expect_same(path.at(3.0, plane), places[1]);
    expect_same(path.at(path.seconds, plane), places[0]);
}

TEST(CameraPathTest, PathsOverAWidePlaneStayOverItsBothExtents) {
    const PlaneExtent wide{5120, 2880};
    for (const CameraPath& path : camera_paths()) {
        SCOPED_TRACE(path.name);
        for (double t = 0; t <= path.seconds; t += 0.25) {
            double x = 0, z = 0;
            ASSERT_TRUE(looked_at_point(path.at(t, wide), x, z));
            EXPECT_GE(x, 0);
            EXPECT_LE(x, wide.x);
            EXPECT_GE(z, 0);
            EXPECT_LE(z, wide.z) << "t=" << t;
        }
    }
    // Centred on the plane, not on the square of its larger side.
    double x = 0, z = 0;
    ASSERT_TRUE(looked_at_point(starting_pose(wide), x, z));
    EXPECT_DOUBLE_EQ(x, 2560);
    EXPECT_DOUBLE_EQ(z, 1440);
}

TEST(CameraPathTest, TheImageTourFramesTheWholeImageThenZoomsIntoDetail) {
    const CameraPath* tour = find_camera_path(View::image, "image-tour");
    ASSERT_NE(tour, nullptr);
    EXPECT_EQ(find_camera_path("image-tour"), nullptr) << "not a flight over the plane";
    EXPECT_EQ(find_camera_path(View::image, "dive"), nullptr);
    const PlaneExtent wide{5120, 2880};
    const auto whole =
        Camera{.pose = tour->at(0, wide, 16.0 / 9), .projection = Projection::orthographic}
            .view_projection(16.0 / 9);
    double left = 0, top = 0, right = 0, bottom = 0;
    clip_of(whole, 0, 0, left, top);
    clip_of(whole, wide.x, wide.z, right, bottom);
    EXPECT_GE(left, -1);  // the whole image is in view
    EXPECT_GE(top, -1);
    EXPECT_LE(right, 1);
    EXPECT_LE(bottom, 1);
    EXPECT_GT(right - left, 1.8) << "and fills most of the width";
    // Then detail at several places: a few texels of mip 0 across the view, far apart.
    std::vector<CameraPose> details;
    for (double t = 0; t <= tour->seconds; t += 0.25) {
        const CameraPose pose = tour->at(t, wide, 16.0 / 9);
        EXPECT_EQ(clamp_image_pose(pose, wide).altitude, pose.altitude) << "t=" << t;
        if (pose.altitude <= 64 &&
            (details.empty() ||
             std::hypot(pose.x - details.back().x, pose.z - details.back().z) > 500)) {
            details.push_back(pose);
        }
    }
    EXPECT_GE(details.size(), 3u);
    expect_same(tour->at(tour->seconds, wide), tour->at(0, wide));  // the loop joins
}

TEST(CameraTest, TheImageViewIsTopDownWithSquarePixelsAndZoomsAboutAPoint) {
    const CameraPose pose{300, 100, 200, 0, max_pitch_down};
    const auto m = Camera{.pose = pose, .projection = Projection::orthographic}.view_projection(2);
    double cx = 0, cy = 0;
    clip_of(m, 300, 200, cx, cy);
    EXPECT_NEAR(cx, 0, 1e-6);
    EXPECT_NEAR(cy, 0, 1e-6);
    clip_of(m, 400, 250, cx, cy);  // 100 texels right, 50 down: the image's right, bottom edge
    EXPECT_NEAR(cx, 1, 1e-6);
    EXPECT_NEAR(cy, 1, 1e-6);
    // Zooming in about a point keeps that point where it was on the screen.
    const CameraPose zoomed = zoom_image_about(pose, 0.25, 380, 170);
    EXPECT_DOUBLE_EQ(zoomed.altitude, 25);
    double before_x = 0, before_y = 0, after_x = 0, after_y = 0;
    clip_of(m, 380, 170, before_x, before_y);
    clip_of(Camera{.pose = zoomed, .projection = Projection::orthographic}.view_projection(2), 380,
            170, after_x, after_y);
    EXPECT_NEAR(after_x, before_x, 1e-6);
    EXPECT_NEAR(after_y, before_y, 1e-6);
}

TEST(CameraTest, ThePointLookedAtIsInTheMiddleOfTheImage) {
    for (const CameraPath& path : camera_paths()) {
        for (double t : {0.0, 3.0, 7.5}) {
            const CameraPose pose = path.at(t, plane);
            double x = 0, z = 0;
            ASSERT_TRUE(looked_at_point(pose, x, z));
            const auto m = Camera{pose}.view_projection(16.0 / 9);
            // Clip coordinates of (x, 0, z) with the column-major matrix.
            double clip[4];
            for (int row = 0; row < 4; ++row) {
                clip[row] = m[0 * 4 + row] * x + m[2 * 4 + row] * z + m[3 * 4 + row];
            }
            ASSERT_GT(clip[3], 0) << "in front of the camera";
            EXPECT_NEAR(clip[0] / clip[3], 0.0, 1e-3) << path.name << " t=" << t;
            EXPECT_NEAR(clip[1] / clip[3], 0.0, 1e-3) << path.name << " t=" << t;
            EXPECT_GT(clip[2] / clip[3], 0.0);
            EXPECT_LT(clip[2] / clip[3], 1.0);
        }
    }
}

TEST(CameraTest, ClampKeepsThePoseNearThePlaneAndThePitchInRange) {
    CameraPose pose{-1e9, 1e9, 5e9, 7.0, -3.0};
    pose = clamp_pose(pose, plane);
    EXPECT_GE(pose.x, -plane);
    EXPECT_LE(pose.z, 2 * plane);
    EXPECT_LE(pose.altitude, max_altitude(plane));
    EXPECT_GE(pose.pitch, max_pitch_down);
    EXPECT_LE(std::abs(pose.yaw), 3.1416);
    pose.altitude = 0.001;
    EXPECT_GE(clamp_pose(pose, plane).altitude, min_altitude);
}

TEST(CameraTest, ClampFollowsEachExtentOfAWidePlane) {
    const PlaneExtent wide{4000, 1000};
    const CameraPose far = clamp_pose({1e9, 1e9, 1e9, 0, -1}, wide);
    EXPECT_DOUBLE_EQ(far.x, 4000 + 2000);  // a margin of half the larger side
    EXPECT_DOUBLE_EQ(far.z, 1000 + 2000);
    EXPECT_DOUBLE_EQ(far.altitude, max_altitude(4000));
}

// The scene view's paths (--scene): around a mesh scene's box, whatever its shape and place.
struct NamedBox {
    const char* name;
    SceneBox box;
};

const std::vector<NamedBox> scene_boxes = {
    {"unit cube", {{0, 0, 0}, {1, 1, 1}}},
    {"flat and wide", {{-50, 0, -50}, {50, 0.5, 50}}},
    {"an upright wall without depth", {{-3, -2, 0}, {3, 2, 0}}},
    {"a long room", {{0, 0, 0}, {10, 4, 3}}},
    {"far from the origin", {{1e4, -2e3, 5e3}, {1e4 + 8, -2e3 + 3, 5e3 + 5}}},
};

// Clip coordinates of the world point p.
std::array<double, 4> clip_of(const std::array<float, 16>& m, const std::array<double, 3>& p) {
    std::array<double, 4> clip{};
    for (int row = 0; row < 4; ++row) {
        clip[row] =
            m[0 * 4 + row] * p[0] + m[1 * 4 + row] * p[1] + m[2 * 4 + row] * p[2] + m[3 * 4 + row];
    }
    return clip;
}

// The box's corners, and points on each of its faces between them.
std::vector<std::array<double, 3>> box_points(const SceneBox& box, bool faces) {
    std::vector<std::array<double, 3>> points;
    const int steps = faces ? 6 : 1;
    for (int axis = 0; axis < 3; ++axis) {
        for (int side = 0; side < 2; ++side) {
            for (int i = 0; i <= steps; ++i) {
                for (int j = 0; j <= steps; ++j) {
                    std::array<double, 3> p{};
                    const int a = (axis + 1) % 3, b = (axis + 2) % 3;
                    p[axis] = side ? box.max[axis] : box.min[axis];
                    p[a] = box.min[a] + (box.max[a] - box.min[a]) * i / steps;
                    p[b] = box.min[b] + (box.max[b] - box.min[b]) * j / steps;
                    points.push_back(p);
                }
            }
        }
    }
    return points;
}

bool inside(const SceneBox& box, const CameraPose& pose) {
    const double eye[3] = {pose.x, pose.altitude, pose.z};
    for (int axis = 0; axis < 3; ++axis) {
        if (eye[axis] < box.min[axis] || eye[axis] > box.max[axis]) return false;
    }
    return true;
}

double distance_to_centre(const CameraPose& pose, const SceneBox& box) {
    const auto c = box.centre();
    return std::hypot(pose.x - c[0], pose.altitude - c[1], pose.z - c[2]);
}

TEST(ScenePathTest, TheScenePathsAreTheSceneViewsAlone) {
    ASSERT_EQ(camera_paths(View::scene).size(), 3u);
    for (const char* name : {"orbit", "approach", "flythrough"}) {
        const CameraPath* path = find_camera_path(View::scene, name);
        ASSERT_NE(path, nullptr) << name;
        EXPECT_EQ(path->name, name);
        EXPECT_NE(path->scene_pose, nullptr) << name;
        EXPECT_EQ(path->pose, nullptr) << name << ": not a flight over a plane";
        EXPECT_GT(path->seconds, 0);
        EXPECT_FALSE(path->description.empty());
        EXPECT_EQ(find_camera_path(name), nullptr) << name;
        EXPECT_EQ(find_camera_path(View::plane, name), nullptr) << name;
        EXPECT_EQ(find_camera_path(View::image, name), nullptr) << name;
    }
    for (const char* name : {"overview", "dive", "benchmark", "cuts", "image-tour"}) {
        EXPECT_EQ(find_camera_path(View::scene, name), nullptr) << name;
    }
}

// The orbit frames the whole box in a 16:9 image at every moment, inside the depth range the
// scene camera gives it, from outside the box.
TEST(ScenePathTest, TheOrbitShowsTheWholeBoxFromOutsideIt) {
    const CameraPath& orbit = *find_camera_path(View::scene, "orbit");
    for (const NamedBox& named : scene_boxes) {
        SCOPED_TRACE(named.name);
        const std::vector<std::array<double, 3>> points = box_points(named.box, true);
        for (double t = 0; t <= orbit.seconds; t += 0.1) {
            const CameraPose pose = orbit.at(t, named.box);
            ASSERT_FALSE(inside(named.box, pose)) << "t=" << t;
            const auto m = scene_camera(pose, named.box).view_projection(16.0 / 9);
            for (const auto& p : points) {
                const auto clip = clip_of(m, p);
                ASSERT_GT(clip[3], 0) << "behind the camera at t=" << t;
                ASSERT_GE(clip[2] / clip[3], 0) << "nearer than the near plane at t=" << t;
                ASSERT_LE(clip[2] / clip[3], 1) << "beyond the far plane at t=" << t;
                ASSERT_LE(std::abs(clip[0] / clip[3]), 1) << "off the side at t=" << t;
                ASSERT_LE(std::abs(clip[1] / clip[3]), 1) << "off the top or bottom at t=" << t;
            }
            // The centre of the box is the middle of the image.
            const auto centre = clip_of(m, named.box.centre());
            EXPECT_NEAR(centre[0] / centre[3], 0, 1e-3);
            EXPECT_NEAR(centre[1] / centre[3], 0, 1e-3);
        }
    }
}

// The approach goes in to a third of the framing distance, closer than the box's corners (not
// into the box: a long one stops it sooner): what is behind the camera or beside it is out of
// view, but nothing in view is clipped by the depth range.
TEST(ScenePathTest, TheApproachComesCloseWithoutEnteringTheBoxOrClippingIt) {
    const CameraPath& approach = *find_camera_path(View::scene, "approach");
    const CameraPath& orbit = *find_camera_path(View::scene, "orbit");
    for (const NamedBox& named : scene_boxes) {
        SCOPED_TRACE(named.name);
        const std::vector<std::array<double, 3>> points = box_points(named.box, true);
        const double framing = distance_to_centre(orbit.at(0, named.box), named.box);
        double nearest = framing;
        std::size_t in_view = 0;
        for (double t = 0; t <= approach.seconds; t += 0.1) {
            const CameraPose pose = approach.at(t, named.box);
            ASSERT_FALSE(inside(named.box, pose)) << "t=" << t;
            nearest = std::min(nearest, distance_to_centre(pose, named.box));
            const auto m = scene_camera(pose, named.box).view_projection(16.0 / 9);
            for (const auto& p : points) {
                const auto clip = clip_of(m, p);
                // Behind the camera or off the image's sides: not drawn whatever its depth.
                if (clip[3] <= 0 || std::abs(clip[0]) > clip[3] || std::abs(clip[1]) > clip[3]) {
                    continue;
                }
                ++in_view;
                ASSERT_GE(clip[2] / clip[3], 0) << "nearer than the near plane at t=" << t;
                ASSERT_LE(clip[2] / clip[3], 1) << "beyond the far plane at t=" << t;
            }
            const auto centre = clip_of(m, named.box.centre());
            ASSERT_GT(centre[3], 0);
            EXPECT_NEAR(centre[0] / centre[3], 0, 1e-3);
            EXPECT_NEAR(centre[1] / centre[3], 0, 1e-3);
        }
        EXPECT_NEAR(distance_to_centre(approach.at(0, named.box), named.box), framing,
                    1e-9 * framing);
        EXPECT_GT(in_view, 0u);
        EXPECT_LT(nearest, 0.5 * framing) << "in to a third, or to the box where it is long";
        // No 60 Hz step jumps within a pass, and later passes are the first again.
        for (double t = 0; t + 1.0 / 60 <= approach.seconds; t += 0.05) {
            EXPECT_LT(distance(approach.at(t, named.box), approach.at(t + 1.0 / 60, named.box)),
                      0.05 * named.box.radius())
                << "t=" << t;
        }
        expect_same(approach.at(approach.seconds + 1.5, named.box), approach.at(1.5, named.box));
    }
    // Where the box is not in the way, in to a third of the framing distance.
    const SceneBox& wide = scene_boxes[1].box;
    double nearest = distance_to_centre(approach.at(0, wide), wide);
    for (double t = 0; t <= approach.seconds; t += 0.1) {
        nearest = std::min(nearest, distance_to_centre(approach.at(t, wide), wide));
    }
    EXPECT_NEAR(nearest / distance_to_centre(approach.at(0, wide), wide), 0.35, 0.01);
}

// The flythrough crosses the box's longer side low over its top, never inside it, looking ahead
// (along its way) and a little down, with no 60 Hz step jumps; it holds its end.
TEST(ScenePathTest, TheFlythroughCrossesLowOverTheBoxLookingAhead) {
    const CameraPath& flythrough = *find_camera_path(View::scene, "flythrough");
    EXPECT_TRUE(flythrough.holds_end);
    for (const NamedBox& named : scene_boxes) {
        SCOPED_TRACE(named.name);
        const SceneBox& box = named.box;
        const int along = box.max[0] - box.min[0] >= box.max[2] - box.min[2] ? 0 : 2;
        const double length = box.max[along] - box.min[along];
        const CameraPose start = flythrough.at(0, box),
                         end = flythrough.at(flythrough.seconds, box);
        const double eye_start[3] = {start.x, start.altitude, start.z};
        const double eye_end[3] = {end.x, end.altitude, end.z};
        EXPECT_NEAR(eye_start[along], box.min[along] + 0.075 * length, 1e-6 * length);
        EXPECT_NEAR(eye_end[along], box.max[along] - 0.075 * length, 1e-6 * length);
        for (double t = 0; t + 1.0 / 60 <= flythrough.seconds; t += 0.05) {
            const CameraPose pose = flythrough.at(t, box), next = flythrough.at(t + 1.0 / 60, box);
            ASSERT_FALSE(inside(box, pose)) << "t=" << t;
            EXPECT_GT(pose.altitude, box.max[1]) << "t=" << t;
            EXPECT_LT(pose.altitude - box.max[1], 0.5 * box.radius()) << "t=" << t;
            EXPECT_LT(pose.pitch, 0);
            // The view's direction agrees with the way it moves.
            const double dx = next.x - pose.x, dz = next.z - pose.z;
            const double moved = std::hypot(dx, dz);
            if (moved > 1e-9 * box.radius()) {
                EXPECT_GT((dx * std::sin(pose.yaw) + dz * std::cos(pose.yaw)) / moved, 0.7)
                    << "t=" << t;
            }
            EXPECT_LT(distance(pose, next), 0.05 * box.radius()) << "t=" << t;
        }
        expect_same(flythrough.at(flythrough.seconds + 3, box), end);
    }
}

// The orbit's end is its start, and later passes are the first again; no 60 Hz step jumps.
TEST(ScenePathTest, TheOrbitLoops) {
    const CameraPath& orbit = *find_camera_path(View::scene, "orbit");
    EXPECT_FALSE(orbit.holds_end);
    for (const NamedBox& named : scene_boxes) {
        SCOPED_TRACE(named.name);
        const SceneBox& box = named.box;
        const auto start = scene_camera(orbit.at(0, box), box).view_projection(16.0 / 9);
        const auto end = scene_camera(orbit.at(orbit.seconds, box), box).view_projection(16.0 / 9);
        for (int k = 0; k < 16; ++k) {
            EXPECT_NEAR(end[k], start[k], 1e-4 * (1 + std::abs(start[k]))) << "element " << k;
        }
        const CameraPose a = orbit.at(0, box), b = orbit.at(orbit.seconds, box);
        EXPECT_NEAR(std::hypot(a.x - b.x, a.altitude - b.altitude, a.z - b.z), 0,
                    1e-9 * distance_to_centre(a, box));
        EXPECT_NEAR(std::remainder(a.yaw - b.yaw, 2 * 3.141592653589793), 0, 1e-9);
        EXPECT_NEAR(a.pitch, b.pitch, 1e-9);
        expect_same(orbit.at(orbit.seconds + 1.5, box), orbit.at(1.5, box));
        const double radius = box.radius();
        for (double t = 0; t <= 2 * orbit.seconds; t += 0.05) {
            EXPECT_LT(distance(orbit.at(t, box), orbit.at(t + 1.0 / 60, box)), 0.05 * radius)
                << "t=" << t;
        }
    }
}

}  // namespace
}  // namespace vtpage::viewer
