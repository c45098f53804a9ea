// Where the planes of a scene lie: a texture set's textures (docs/viewer.md), each on a plane of
// one world unit per texel of mip 0 at its texture's aspect, in a grid of ceil(sqrt(n)) columns
// filled row by row from z = 0, each plane centred in its cell. Columns are as wide as the widest
// plane, each row as deep as its deepest one, with a gap of an eighth of the largest side
// between cells. One plane lies at the origin with the scene's extent its own: the single
// texture's plane as it always was.
//
//   SceneLayout scene = grid_layout({{4096, 4096}, {1024, 512}, {2048, 2048}});
//   camera paths fly over scene.extent; plane i covers scene.planes[i].origin + [0, extent]
#pragma once

#include <vector>

#include "camera.hpp"

namespace vtpage::viewer {

struct PlanePlacement {
    double x = 0;  // the plane's corner at uv (0, 0)
    double z = 0;
    PlaneExtent extent;
};

struct SceneLayout {
    std::vector<PlanePlacement> planes;  // in the order given
    PlaneExtent extent;                  // the whole grid: [0, extent.x] x [0, extent.z]
};

// The gap between cells, as a share of the largest plane's larger side.
inline constexpr double grid_gap_share = 0.125;

// The grid of `planes` (at least one, each extent positive; empty gives an empty scene of
// extent 1 x 1).
SceneLayout grid_layout(const std::vector<PlaneExtent>& planes);

}  // namespace vtpage::viewer
