// The LLM table's quantiles (results/genvals.c, docs/results.md
// "generation"): exact order statistics of the cell's requests while it has
// at most exact_max of them (65,536), the same whatever the threads, and
// the 1/8-octave buckets' middles past that, said so.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include <gsl/gsl_statistics_double.h>

#include "cli/cli.h"
#include "results/results.h"
#include "scenarios/scenarios.h"
#include "shim/shim.hpp"
#include "shim/world.hpp"

namespace {

using shim::Loaded;

// An iPhone with room to spare; one model; 5 requests 10 s apart, each
// from an empty context.  `gen` gives the tokens and times.
std::string scenario(const std::string &gen, unsigned reps)
{
    return "name: q\nhorizon: 2min\nreplications: " + std::to_string(reps) +
           "\ndevices:\n  - {name: phone, os: ios, ram: 8GiB, system: 1GiB, "
           "kill: {rule: jetsam, limit: 7GiB}}\n"
           "candidates:\n  - id: llm\n    digest: 0a\n    runtime: test-1\n    parts:\n"
           "      m:\n        file: 100MiB\n        load: {mode: mmap, time: 0ms}\n"
           "        prepare: {time: 0ms}\n        generation:\n" +
           gen +
           "          context: 4096\n          kv_per_token: 1KiB\n"
           "          weights: {mapped: 100MiB}\n          compute: 10MiB\n"
           "          keep_context: false\n"
           "workload: {path: [cold_start, {requests: {every: 10s, count: 5}}]}\n";
}

// The cell's result, run on `threads` threads with `kept` values kept;
// with `table`, the tables `oomsim run` prints.
res_cell run_plan(Loaded &l, unsigned threads, uint64_t kept, std::string *table = nullptr)
{
    res_plan plan{};
    const char **labels = nullptr;
    sim_error err;
    sim_error_clear(&err);
    REQUIRE(cli_plan_of(&l.s, &plan, &labels, &err) == SIM_OK);
    plan.exact_max = kept;
    res_result r;
    int rc = res_run(&plan, threads, nullptr, nullptr, &r, &err);
    INFO(err.msg);
    REQUIRE(rc == SIM_OK);
    res_cell c = r.cells[0];
    if (table != nullptr) {
        char *t = res_document_table(&plan, &r);
        REQUIRE(t != nullptr);
        *table = t;
        std::free(t);
    }
    res_result_free(&r);
    std::free(labels);
    return c;
}

struct Pairs {
    std::vector<double> ttft, tps;
    static void add(void *, sim_time, sim_time) {}
    static void gen(void *ctx, sim_time ttft, double tps)
    {
        Pairs *p = static_cast<Pairs *>(ctx);
        p->ttft.push_back((double)ttft);
        if (tps >= 0)
            p->tps.push_back(tps);
    }
};

double quantile(std::vector<double> v, double p)
{
    std::sort(v.begin(), v.end());
    return gsl_stats_quantile_from_sorted_data(v.data(), 1, v.size(), p);
}

} // namespace

TEST_CASE("generation quantiles: a deterministic 200 ms to first token is 200 ms, 10 tokens/s "
          "is 10",
          "[generation][quantiles]")
{
    // 100 prompt tokens at 1 ms (100 ms), then the first of 20 output
    // tokens at 100 ms: 200 ms to the first token, 10 tokens a second
    Loaded l(scenario("          prompt_tokens: 100\n          output_tokens: 20\n"
                      "          prefill: {per_token: 1ms}\n          decode: {per_token: 100ms}\n",
                      40));
    std::string table;
    res_cell c = run_plan(l, 2, 0, &table);
    CHECK(c.gen_requests == 200);
    CHECK(c.gen_exact == 1);
    CHECK(c.ttft_q[0] == 200000.0);
    CHECK(c.ttft_q[1] == 200000.0);
    CHECK(c.tps_q[0] == 10.0);
    CHECK(c.tps_q[1] == 10.0);
    CHECK(table.find("10.0 / 10.0") != std::string::npos);
    CHECK(table.find("200 / 200 ms") != std::string::npos);
    // past what is kept (100 of 200): the buckets' middles, marked: 200 ms
    // is in the bucket of 20 x 10 ms, [2^(34/8), 2^(35/8)) x 10 ms, whose
    // middle is 2^(34.5/8) x 10 ms = 198.8 ms
    res_cell b = run_plan(l, 2, 100, &table);
    CHECK(b.gen_exact == 0);
    CHECK(b.ttft_q[0] == Approx(10000.0 * std::exp2(34.5 / 8)).epsilon(1e-12));
    CHECK(std::abs(b.ttft_q[0] - 200000.0) / 200000.0 < 0.0443);
    CHECK(table.find("ms ~") != std::string::npos);
}

TEST_CASE("generation quantiles: the order statistics of every request of the cell, whatever "
          "the threads",
          "[generation][quantiles]")
{
    // drawn tokens and times: the cell's p50 and p95 time to first token,
    // and p50 and p5 decode rate, are those of every request the
    // replications made, one by one (GSL's quantile of the sorted values)
    Loaded l(scenario("          prompt_tokens: {dist: uniform, min: 10, max: 400}\n"
                      "          output_tokens: {dist: uniform, min: 0, max: 200}\n"
                      "          prefill: {per_token: {dist: lognormal, median: 2ms, p95: 5ms}}\n"
                      "          decode: {per_token: {dist: lognormal, median: 30ms, p95: 60ms}}\n",
                      300));
    Pairs all;
    for (uint64_t rep = 0; rep < 300; rep++) {
        mdl_times_sink sink = {Pairs::add, &all, nullptr, Pairs::gen};
        l.run(0, rep, &sink);
    }
    REQUIRE(all.ttft.size() == 1500);
    REQUIRE(all.tps.size() < all.ttft.size()); // some answers of no token
    res_cell one = run_plan(l, 1, 0), three = run_plan(l, 3, 0);
    CHECK(one.gen_exact == 1);
    CHECK(one.ttft_q[0] == quantile(all.ttft, 0.50));
    CHECK(one.ttft_q[1] == quantile(all.ttft, 0.95));
    CHECK(one.tps_q[0] == quantile(all.tps, 0.50));
    CHECK(one.tps_q[1] == quantile(all.tps, 0.05));
    for (int k = 0; k < 2; k++) {
        CHECK(three.ttft_q[k] == one.ttft_q[k]);
        CHECK(three.tps_q[k] == one.tps_q[k]);
        CHECK(three.tps_ci[k] == one.tps_ci[k]);
    }
    // the p50's 95% interval: of m rates sorted, the ranks m/2 -+ 0.98
    // sqrt(m) (from 0, rounded outward); it holds the p50
    std::vector<double> sorted = all.tps;
    std::sort(sorted.begin(), sorted.end());
    double m = (double)sorted.size(), h = 0.98 * std::sqrt(m);
    CHECK(one.tps_ci[0] == sorted[(size_t)std::floor(m / 2 - h)]);
    CHECK(one.tps_ci[1] == sorted[(size_t)std::ceil(m / 2 + h)]);
    CHECK(one.tps_ci[0] <= one.tps_q[0]);
    CHECK(one.tps_ci[1] >= one.tps_q[0]);
    // one value fewer kept than the cell has: no longer exact
    res_cell past = run_plan(l, 3, 1499);
    CHECK(past.gen_exact == 0);
    CHECK(past.ttft_q[0] != one.ttft_q[0]);
}
