#include "scene_layout.hpp"

#include <algorithm>
#include <cmath>

namespace vtpage::viewer {

namespace {

std::size_t grid_columns(std::size_t planes) {
    return std::max<std::size_t>(1, std::size_t(std::ceil(std::sqrt(double(planes)))));
}

}  // namespace

SceneLayout grid_layout(const std::vector<PlaneExtent>& planes) {
    SceneLayout scene;
    if (planes.empty()) return scene;
    const std::size_t columns = grid_columns(planes.size());
    double cell_width = 0, largest = 0;
    for (const PlaneExtent& plane : planes) {
        cell_width = std::max(cell_width, plane.x);
        largest = std::max(largest, plane.larger());
    }
    const double gap = planes.size() > 1 ? largest * grid_gap_share : 0.0;
    double row_z = 0;
    for (std::size_t first = 0; first < planes.size(); first += columns) {
        const std::size_t last = std::min(first + columns, planes.size());
        double row_depth = 0;
        for (std::size_t i = first; i < last; ++i) row_depth = std::max(row_depth, planes[i].z);
        for (std::size_t i = first; i < last; ++i) {
            const double cell_x = double(i - first) * (cell_width + gap);
            scene.planes.push_back({.x = cell_x + (cell_width - planes[i].x) / 2,
                                    .z = row_z + (row_depth - planes[i].z) / 2,
                                    .extent = planes[i]});
        }
        row_z += row_depth + gap;
    }
    const std::size_t used_columns = std::min(columns, planes.size());
    scene.extent = {double(used_columns) * cell_width + double(used_columns - 1) * gap,
                    row_z - gap};
    return scene;
}

}  // namespace vtpage::viewer
