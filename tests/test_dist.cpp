// Distributions: parameter checks, and samples that agree with each
// distribution's mean and quantiles.  200k samples per check, fixed seed;
// tolerances are 4 standard errors of the estimator, derived per case.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>

#include "models/models.h"

namespace {
constexpr int N = 200000;

struct Rng {
    sim_stream s{};
    explicit Rng(uint64_t purpose) { REQUIRE(sim_stream_init(&s, nullptr, 3, 0, purpose) == SIM_OK); }
    ~Rng() { sim_stream_release(&s); }
};

std::vector<double> samples(const mdl_dist &d, uint64_t purpose)
{
    Rng r(purpose);
    std::vector<double> v;
    v.reserve(N);
    for (int i = 0; i < N; i++) {
        int64_t x = mdl_dist_sample(&d, sim_stream_rng(&r.s));
        REQUIRE(x >= 0);
        v.push_back(static_cast<double>(x));
    }
    return v;
}

double mean(const std::vector<double> &v)
{
    double s = 0;
    for (double x : v)
        s += x;
    return s / static_cast<double>(v.size());
}

double sd(const std::vector<double> &v)
{
    double m = mean(v), s = 0;
    for (double x : v)
        s += (x - m) * (x - m);
    return std::sqrt(s / static_cast<double>(v.size() - 1));
}

// Share of samples <= x.
double cdf(const std::vector<double> &v, double x)
{
    return static_cast<double>(std::count_if(v.begin(), v.end(), [x](double y) { return y <= x; })) /
           static_cast<double>(v.size());
}

// The sample mean is within 4 SE of the distribution's mean (SE from the
// sample's own sd; rounding to integers moves the mean by < 0.5/sqrt(12)
// per sample on average, negligible at these scales).
void mean_agrees(const mdl_dist &d, const std::vector<double> &v)
{
    double se = sd(v) / std::sqrt(static_cast<double>(N));
    INFO(mdl_dist_name(d.kind) << ": sample mean " << mean(v) << " theory " << mdl_dist_mean(&d)
                               << " se " << se);
    REQUIRE(std::fabs(mean(v) - mdl_dist_mean(&d)) < 4 * se + 0.5);
}
} // namespace

TEST_CASE("dist: lognormal by median and p95", "[dist][statistics]")
{
    mdl_dist d;
    sim_error err;
    REQUIRE(mdl_dist_lognormal(&d, 80000, 200000, &err) == SIM_OK); // 80 ms, p95 200 ms
    std::vector<double> v = samples(d, 1);
    // The empirical CDF at a true quantile p has SE sqrt(p(1-p)/N).
    REQUIRE(std::fabs(cdf(v, 80000) - 0.5) < 4 * std::sqrt(0.25 / N));
    REQUIRE(std::fabs(cdf(v, 200000) - 0.95) < 4 * std::sqrt(0.95 * 0.05 / N));
    mean_agrees(d, v);
}

TEST_CASE("dist: exponential, uniform and gamma means and spreads", "[dist][statistics]")
{
    mdl_dist d;
    sim_error err;
    REQUIRE(mdl_dist_exponential(&d, 90e6, &err) == SIM_OK);
    std::vector<double> v = samples(d, 2);
    mean_agrees(d, v);
    REQUIRE(std::fabs(cdf(v, 90e6 * std::log(2.0)) - 0.5) < 4 * std::sqrt(0.25 / N)); // median

    REQUIRE(mdl_dist_uniform(&d, 100.0 * (1 << 20), 400.0 * (1 << 20), &err) == SIM_OK);
    v = samples(d, 3);
    mean_agrees(d, v);
    REQUIRE(*std::min_element(v.begin(), v.end()) >= 100.0 * (1 << 20));
    REQUIRE(*std::max_element(v.begin(), v.end()) <= 400.0 * (1 << 20));

    REQUIRE(mdl_dist_gamma(&d, 120000, 0.4, &err) == SIM_OK);
    v = samples(d, 4);
    mean_agrees(d, v);
    // The sample cv has SE of about cv * sqrt((1 + 2 cv^2) / (2N)) (normal
    // theory; the gamma's is of the same order): 0.0007 at N = 200k and
    // cv 0.4, so 0.005 allows about 7 SE.
    REQUIRE(std::fabs(sd(v) / mean(v) - 0.4) < 0.005);
}

TEST_CASE("dist: normal truncated at 0", "[dist][statistics]")
{
    mdl_dist d;
    sim_error err;
    // Mean 900 MiB, sd 200 MiB: truncation removes ~3e-6 of the mass.
    REQUIRE(mdl_dist_normal(&d, 900.0 * (1 << 20), 200.0 * (1 << 20), &err) == SIM_OK);
    std::vector<double> v = samples(d, 5);
    mean_agrees(d, v);
    // Mean 0, sd 10: the half-normal, mean 10 * sqrt(2/pi) = 7.98.
    REQUIRE(mdl_dist_normal(&d, 0, 10, &err) == SIM_OK);
    REQUIRE(mdl_dist_mean(&d) == Approx(10 * std::sqrt(2 / M_PI)).epsilon(1e-12));
    v = samples(d, 6);
    mean_agrees(d, v);
}

TEST_CASE("dist: empirical and fixed", "[dist][statistics]")
{
    const int64_t values[] = {10, 20, 20, 70};
    mdl_dist d;
    sim_error err;
    REQUIRE(mdl_dist_empirical(&d, values, 4, &err) == SIM_OK);
    std::vector<double> v = samples(d, 7);
    REQUIRE(std::fabs(cdf(v, 10) - 0.25) < 4 * std::sqrt(0.25 * 0.75 / N));
    REQUIRE(std::fabs(cdf(v, 20) - 0.75) < 4 * std::sqrt(0.25 * 0.75 / N));
    REQUIRE(cdf(v, 69) == cdf(v, 20));
    mean_agrees(d, v);
    REQUIRE(mdl_dist_fixed(&d, 150000, &err) == SIM_OK);
    Rng r(8);
    for (int i = 0; i < 10; i++)
        REQUIRE(mdl_dist_sample(&d, sim_stream_rng(&r.s)) == 150000);
}

TEST_CASE("dist: one draw per sample for fixed-count kinds", "[dist]")
{
    // Two lognormals with different parameters on one stream stay in step
    // with a stream used for uniforms: both consume one uniform per sample.
    mdl_dist a, b;
    sim_error err;
    REQUIRE(mdl_dist_lognormal(&a, 10, 20, &err) == SIM_OK);
    REQUIRE(mdl_dist_normal(&b, 5, 3, &err) == SIM_OK);
    Rng r1(9), r2(9);
    for (int i = 0; i < 1000; i++) {
        (void)mdl_dist_sample(i % 2 ? &a : &b, sim_stream_rng(&r1.s));
        (void)gsl_rng_uniform(sim_stream_rng(&r2.s));
    }
    REQUIRE(gsl_rng_get(sim_stream_rng(&r1.s)) == gsl_rng_get(sim_stream_rng(&r2.s)));
}

TEST_CASE("dist: bad parameters are refused with the parameter named", "[dist]")
{
    mdl_dist d{};
    d.kind = MDL_DIST_FIXED;
    d.p1 = 42;
    sim_error err;
    auto msg = [&](int rc) {
        REQUIRE(rc == SIM_EINPUT);
        REQUIRE(d.p1 == 42); // untouched
        return std::string(err.msg);
    };
    REQUIRE(msg(mdl_dist_lognormal(&d, 100, 100, &err)) ==
            "lognormal: p95 must be greater than the median");
    REQUIRE(msg(mdl_dist_lognormal(&d, 0, 100, &err)) == "lognormal: median must be > 0");
    REQUIRE(msg(mdl_dist_exponential(&d, -1, &err)) == "exponential: mean must be > 0");
    REQUIRE(msg(mdl_dist_uniform(&d, 5, 4, &err)) == "uniform: max must be >= min");
    REQUIRE(msg(mdl_dist_uniform(&d, -1, 4, &err)) == "uniform: min must be >= 0");
    REQUIRE(msg(mdl_dist_normal(&d, 1, 0, &err)) == "normal: sd must be > 0");
    REQUIRE(msg(mdl_dist_normal(&d, -90, 10, &err)).find("more than 8 sd below 0") !=
            std::string::npos);
    REQUIRE(msg(mdl_dist_gamma(&d, 1, 0, &err)) == "gamma: cv must be > 0 and <= 100");
    REQUIRE(msg(mdl_dist_empirical(&d, nullptr, 0, &err)) == "empirical: values must not be empty");
    const int64_t neg[] = {1, -1};
    REQUIRE(msg(mdl_dist_empirical(&d, neg, 2, &err)) == "empirical: value 1 is negative");
    REQUIRE(msg(mdl_dist_fixed(&d, -3, &err)) == "a fixed value must be >= 0");
    REQUIRE(mdl_dist_lognormal(&d, 1, NAN, &err) == SIM_EINPUT);
}

TEST_CASE("dist: the inline normal quantile and gamma draw give GSL's own bits", "[dist]")
{
    // models/dist.c evaluates the central region of the normal quantile and
    // Marsaglia and Tsang's gamma itself (constants once per distribution);
    // a twin stream through GSL's gsl_cdf_ugaussian_Pinv and gsl_ran_gamma
    // must give the very same samples, tails and shapes below 1 included
    mdl_dist ln, nm, g1, g2, g3;
    sim_error err;
    REQUIRE(mdl_dist_lognormal(&ln, 1e6, 5e6, &err) == SIM_OK);
    REQUIRE(mdl_dist_normal(&nm, 1e6, 4e5, &err) == SIM_OK);
    REQUIRE(mdl_dist_gamma(&g1, 1e5, 0.3, &err) == SIM_OK);
    REQUIRE(mdl_dist_gamma(&g2, 1e5, 1.0, &err) == SIM_OK);
    REQUIRE(mdl_dist_gamma(&g3, 1e5, 2.0, &err) == SIM_OK); // shape 0.25: GSL's own path
    Rng a(21), b(21);
    gsl_rng *ra = sim_stream_rng(&a.s), *rb = sim_stream_rng(&b.s);
    auto rounded = [](double x) -> int64_t { return x > 0 ? static_cast<int64_t>(x + 0.5) : 0; };
    long differ = 0;
    for (int i = 0; i < 1000000; i++) {
        int64_t mine = 0, gsl = 0;
        switch (i % 5) {
        case 0:
            mine = mdl_dist_sample(&ln, ra);
            gsl = rounded(std::exp(ln.p1 + ln.p2 * gsl_cdf_ugaussian_Pinv(gsl_rng_uniform_pos(rb))));
            break;
        case 1: {
            mine = mdl_dist_sample(&nm, ra);
            double lo = gsl_cdf_ugaussian_P(-nm.p1 / nm.p2);
            double u = lo + (1.0 - lo) * gsl_rng_uniform_pos(rb);
            if (u >= 1.0)
                u = std::nextafter(1.0, 0.0);
            gsl = rounded(nm.p1 + nm.p2 * gsl_cdf_ugaussian_Pinv(u));
            break;
        }
        case 2:
            mine = mdl_dist_sample(&g1, ra);
            gsl = rounded(gsl_ran_gamma(rb, g1.p1, g1.p2));
            break;
        case 3:
            mine = mdl_dist_sample(&g2, ra);
            gsl = rounded(gsl_ran_gamma(rb, g2.p1, g2.p2));
            break;
        default:
            mine = mdl_dist_sample(&g3, ra);
            gsl = rounded(gsl_ran_gamma(rb, g3.p1, g3.p2));
        }
        differ += mine != gsl;
    }
    CHECK(differ == 0);
    // and the streams are still in step
    CHECK(gsl_rng_get(ra) == gsl_rng_get(rb));
}
