// What a run's residency samples add up to (vt::ResidencySample: how much of what is resident
// the view samples, measured where feedback is processed once a window of frames): the newest
// sample for the HUD, and the mean over the run for the report.
#pragma once

#include <cstdint>

#include "vtpage/streaming/feedback/residency_efficiency.hpp"

namespace vtpage::viewer {

struct ResidencyTotals {
    vt::ResidencySample newest;
    std::uint64_t samples = 0;
    double share_sum = 0;
    double in_use_share_sum = 0;
    double resident_bytes_sum = 0;
    double in_use_bytes_sum = 0;
    double tile_granular_bytes_sum = 0;

    // Counts a sample once (feedback results repeat the newest until the next is measured).
    void add(const vt::ResidencySample& sample) {
        if (sample.frame == 0 || sample.frame == newest.frame) return;
        newest = sample;
        ++samples;
        share_sum += sample.sampled_share();
        in_use_share_sum += sample.in_use_share();
        resident_bytes_sum += double(sample.resident_bytes);
        in_use_bytes_sum += double(sample.in_use_bytes);
        tile_granular_bytes_sum += double(sample.tile_granular_bytes);
    }
    double mean_share() const { return samples ? share_sum / double(samples) : 0; }
    double mean_in_use_share() const { return samples ? in_use_share_sum / double(samples) : 0; }
    double mean_resident_bytes() const {
        return samples ? resident_bytes_sum / double(samples) : 0;
    }
    double mean_in_use_bytes() const { return samples ? in_use_bytes_sum / double(samples) : 0; }
    double mean_tile_granular_bytes() const {
        return samples ? tile_granular_bytes_sum / double(samples) : 0;
    }
};

}  // namespace vtpage::viewer
