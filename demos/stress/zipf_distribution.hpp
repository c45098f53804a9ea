// Zipf-distributed ranks 1..n with P(k) proportional to 1 / k^skew, in constant time per draw
// for any n (rejection-inversion sampling, Hoermann and Derflinger 1996): no table of n
// probabilities, so n can be every page of a 64 TiB region.
#pragma once

#include <cstdint>
#include <random>

namespace vtpage::stress {

class ZipfDistribution {
public:
    // skew > 0; n >= 1.
    ZipfDistribution(std::uint64_t n, double skew);
    std::uint64_t operator()(std::mt19937_64& random) const;
    std::uint64_t n() const noexcept { return n_; }
    double skew() const noexcept { return skew_; }

private:
    double h(double x) const;           // the density, x^-skew
    double h_integral(double x) const;  // its antiderivative
    double h_integral_inverse(double x) const;

    std::uint64_t n_;
    double skew_;
    double h_integral_x1_;
    double h_integral_n_;
    double squeeze_;
};

}  // namespace vtpage::stress
