#include "zipf_distribution.hpp"

#include <algorithm>
#include <cmath>

#include "vtpage/base/error.hpp"

namespace vtpage::stress {

namespace {

// log1p(x) / x, and (exp(x) - 1) / x, both well-behaved near 0 (where skew is near 1).
double log1p_over(double x) {
    return std::abs(x) > 1e-8 ? std::log1p(x) / x : 1.0 - x * (0.5 - x / 3.0);
}
double expm1_over(double x) {
    return std::abs(x) > 1e-8 ? std::expm1(x) / x : 1.0 + x * (0.5 + x / 6.0);
}

}  // namespace

ZipfDistribution::ZipfDistribution(std::uint64_t n, double skew) : n_(n), skew_(skew) {
    if (n == 0 || !(skew > 0.0) || !std::isfinite(skew)) {
        throw Error(Errc::invalid_argument, "ZipfDistribution",
                    "needs at least one rank and a positive skew",
                    detail::concat("n=", n, ", skew=", skew));
    }
    h_integral_x1_ = h_integral(1.5) - 1.0;
    h_integral_n_ = h_integral(double(n) + 0.5);
    squeeze_ = 2.0 - h_integral_inverse(h_integral(2.5) - h(2.0));
}

double ZipfDistribution::h(double x) const { return std::exp(-skew_ * std::log(x)); }

double ZipfDistribution::h_integral(double x) const {
    const double log_x = std::log(x);
    return expm1_over((1.0 - skew_) * log_x) * log_x;
}

double ZipfDistribution::h_integral_inverse(double x) const {
    double t = x * (1.0 - skew_);
    t = std::max(t, -1.0);  // rounding can step just past the domain's edge
    return std::exp(log1p_over(t) * x);
}

std::uint64_t ZipfDistribution::operator()(std::mt19937_64& random) const {
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    for (;;) {
        const double u = h_integral_n_ + uniform(random) * (h_integral_x1_ - h_integral_n_);
        const double x = h_integral_inverse(u);
        double k = std::floor(x + 0.5);
        k = std::clamp(k, 1.0, double(n_));
        if (k - x <= squeeze_ || u >= h_integral(k + 0.5) - h(k)) {
            return static_cast<std::uint64_t>(k);
        }
    }
}

}  // namespace vtpage::stress
