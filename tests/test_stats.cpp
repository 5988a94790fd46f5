// Statistics: Wilson intervals, t intervals, quantiles and Erlang C against
// values computed by hand from their formulas.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "results/results.h"

TEST_CASE("stats: Wilson 95 % intervals", "[stats]")
{
    // k = 5, n = 100: p = 0.05, z = 1.96: centre (0.05 + 0.019208) / 1.038415 = 0.066648,
    // half 1.96 * sqrt(0.000475 + 0.00009604) / 1.038415 = 0.045108 -> [0.02154, 0.11175].
    res_interval ci = res_wilson95(5, 100);
    REQUIRE(ci.lo == Approx(0.021544).margin(1e-5));
    REQUIRE(ci.hi == Approx(0.111752).margin(1e-5));
    // No successes: the interval starts at 0 and its top is z^2 / (n + z^2).
    ci = res_wilson95(0, 1000);
    REQUIRE(ci.lo == 0);
    REQUIRE(ci.hi == Approx(3.841459 / (1000 + 3.841459)).epsilon(1e-6));
    ci = res_wilson95(1000, 1000);
    REQUIRE(ci.hi == 1);
    REQUIRE(ci.lo == Approx(1 - 3.841459 / (1000 + 3.841459)).epsilon(1e-6));
    ci = res_wilson95(3, 0);
    REQUIRE(ci.lo == 0);
    REQUIRE(ci.hi == 1);
}

TEST_CASE("stats: mean with a t interval", "[stats]")
{
    // x = 1..5: mean 3, sd sqrt(2.5) = 1.581139, t(0.975, 4) = 2.776445:
    // half = 2.776445 * 1.581139 / sqrt(5) = 1.963243.
    std::vector<double> x{1, 2, 3, 4, 5};
    res_interval ci;
    REQUIRE(res_mean_ci95(x.data(), x.size(), &ci) == 3);
    REQUIRE(ci.lo == Approx(3 - 1.963243).epsilon(1e-6));
    REQUIRE(ci.hi == Approx(3 + 1.963243).epsilon(1e-6));
    REQUIRE(res_mean_ci95(x.data(), 1, &ci) == 1);
    REQUIRE(ci.lo == ci.hi);
    REQUIRE(res_mean_ci95(nullptr, 0, &ci) == 0);
}

TEST_CASE("stats: quantiles interpolate between order statistics", "[stats]")
{
    std::vector<double> x{40, 10, 30, 20};
    res_sort(x.data(), x.size());
    REQUIRE(x == std::vector<double>{10, 20, 30, 40});
    REQUIRE(res_quantile_sorted(x.data(), 4, 0.5) == 25);  // between 20 and 30
    REQUIRE(res_quantile_sorted(x.data(), 4, 0.95) == Approx(38.5)); // 30 + 0.85 * 10
    REQUIRE(res_quantile_sorted(x.data(), 4, 0) == 10);
    REQUIRE(res_quantile_sorted(x.data(), 4, 1) == 40);
    REQUIRE(res_quantile_sorted(x.data(), 0, 0.5) == 0);
}

TEST_CASE("stats: Erlang C", "[stats]")
{
    res_erlang_c r;
    // c = 1 is M/M/1: P(wait) = rho, Wq = rho / (mu - lambda).
    REQUIRE(res_erlang_c_compute(0.9, 1.0, 1, &r) == SIM_OK);
    REQUIRE(r.p_wait == Approx(0.9));
    REQUIRE(r.wq == Approx(9.0));
    REQUIRE(r.lq == Approx(8.1));
    // c = 2, a = 1.5 Erlang (lambda 1.5, mu 1): P0 = 1 / (1 + 1.5 + 1.125 / 0.25) = 1/7,
    // C = (1.125 / 0.25) * P0 = 0.642857, Wq = C / (2 - 1.5) = 1.285714.
    REQUIRE(res_erlang_c_compute(1.5, 1.0, 2, &r) == SIM_OK);
    REQUIRE(r.p_wait == Approx(4.5 / 7));
    REQUIRE(r.wq == Approx(4.5 / 7 / 0.5));
    REQUIRE(r.rho == Approx(0.75));
    // Large c stays finite (the recurrence never forms a^c / c!).
    REQUIRE(res_erlang_c_compute(4900, 1.0, 5000, &r) == SIM_OK);
    REQUIRE(std::isfinite(r.wq));
    REQUIRE(r.p_wait > 0);
    REQUIRE(r.p_wait < 1);
    REQUIRE(res_erlang_c_compute(2.0, 1.0, 2, &r) == SIM_EINVAL); // unstable
    REQUIRE(res_erlang_c_compute(1.0, 0.0, 2, &r) == SIM_EINVAL);
    REQUIRE(res_erlang_c_compute(1.0, 1.0, 0, &r) == SIM_EINVAL);
}
