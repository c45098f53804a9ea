// How closely a frame's pixels got the detail they wanted: the deferred textured pass counts the
// pixels on the plane, those sampled at the level of detail they wanted (no bias applied: the
// level the image would show with every page resident), and the levels the others fell back by
// to the finest resident coarser level. A scene's colour pass through vtpage counts the same of
// the fragments of textured materials it shades (by their base colour's sample; a fragment that
// a nearer one covers later is counted too). What a user sees of streaming, where pages per
// second say only what the streamer did.
#pragma once

#include <cstdint>

namespace vtpage::viewer {

struct SampleQuality {
    // Counted by the deferred textured pass and the scene's textured colour pass through vtpage;
    // the forward plane pass, the overlay modes and the reference textures do not.
    bool measured = false;
    std::uint64_t plane_pixels = 0;  // or, in a scene, fragments of textured materials
    std::uint64_t pixels_at_wanted_level = 0;
    // Summed over the plane's pixels: level sampled - level wanted (0 where it was resident).
    std::uint64_t missing_levels = 0;

    // 1 where there is no plane in view: nothing is missing.
    double share_at_wanted_level() const noexcept {
        return plane_pixels ? double(pixels_at_wanted_level) / double(plane_pixels) : 1.0;
    }
    double mean_levels_missing() const noexcept {
        return plane_pixels ? double(missing_levels) / double(plane_pixels) : 0.0;
    }
};

}  // namespace vtpage::viewer
