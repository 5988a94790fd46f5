// The speed of an LLM part's requests (models/generate.c, docs/model.md
// "Decode and prefill as the context fills"): each token's attention reads
// the context before it, so a token's time grows with it (per_1k_context);
// a prefill batch reads the context before it and itself; the weights'
// kinds run at their own speeds (weights_speed), so the policy's `weights`
// changes the times.  Every figure is derived in a comment.
//
// The phone: iOS under the plain rule, 8 GiB, nothing else held.  The
// model: a 100 MiB file, mapped; load and prepare take no time; compute
// 10 MiB; the KV 1 MiB per token; prefill 1 ms and decode 10 ms per token.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "models/models.h"
#include "scenarios/scenarios.h"
#include "shim/shim.hpp"
#include "shim/world.hpp"

namespace {

const sim_time MS = 1000;

using shim::Loaded;

// The scenario: one request of `prompt` and `output` tokens, the generation
// block's prefill and decode as given, `extra` lines after them.
std::string plan(unsigned prompt, unsigned output, const std::string &prefill,
                 const std::string &decode, const std::string &extra = "")
{
    return "name: speed\nhorizon: 10min\nreplications: 1\ndevices:\n"
           "  - {name: phone, os: ios, ram: 8GiB, system: 1GiB, "
           "kill: {rule: jetsam, limit: 6GiB}}\n"
           "candidates:\n  - id: llm\n    digest: 0a\n    runtime: test-1\n    parts:\n"
           "      m:\n        file: 100MiB\n        load: {mode: mmap, time: 0ms}\n"
           "        prepare: {time: 0ms}\n        generation:\n"
           "          context: 4000\n          kv_per_token: 1MiB\n          compute: 10MiB\n"
           "          weights: {mapped: 100MiB}\n"
           "          prompt_tokens: " +
           std::to_string(prompt) + "\n          output_tokens: " + std::to_string(output) +
           "\n          prefill: " + prefill + "\n          decode: " + decode + "\n" + extra +
           "workload: {path: [cold_start, {requests: {every: 1s, count: 1}}]}\n";
}

// Every request's latency, time to first token and decode rate.
struct Seen {
    std::vector<sim_time> latency, ttft;
    std::vector<double> tps;
    static void lat(void *c, sim_time, sim_time l) { static_cast<Seen *>(c)->latency.push_back(l); }
    static void gen(void *c, sim_time t, double r)
    {
        static_cast<Seen *>(c)->ttft.push_back(t);
        static_cast<Seen *>(c)->tps.push_back(r);
    }
};

Seen run(Loaded &l, unsigned cell = 0)
{
    Seen s;
    mdl_times_sink sink = {Seen::lat, &s, nullptr, Seen::gen};
    mdl_rep r = l.run(cell, 0, &sink);
    CHECK(r.deaths_total == 0);
    REQUIRE(s.latency.size() == 1);
    REQUIRE(s.ttft.size() == 1);
    return s;
}

} // namespace

TEST_CASE("generation speed: each decoded token reads the context before it", "[generation]")
{
    // 100 prompt tokens, 50 decoded at 10 ms + 2 ms per 1,000 tokens of
    // context.  Prefill has no context term: 100 ms.  Decode: the token at
    // position n reads n + 1 cells, n = 100 .. 149: 50 x 100 + (1 + .. + 50)
    // = 5000 + 1275 = 6275 cells, x 2 us = 12.55 ms over 500 ms: 512.55 ms.
    // The first token reads 101 cells: 10 ms + 0.202 ms, so time to first
    // token 100 + 10.202 = 110.202 ms; 50 tokens in 512.55 ms.
    Loaded l(plan(100, 50, "{per_token: 1ms}", "{per_token: 10ms, per_1k_context: 2ms}"));
    Seen s = run(l);
    CHECK(s.latency[0] == 612550);
    CHECK(s.ttft[0] == 110202);
    CHECK(s.tps[0] == Approx(50 / 0.51255).epsilon(1e-12));

    // Without the term: 600 ms, 110 ms to the first token, 100 tokens/s.
    Loaded flat(plan(100, 50, "{per_token: 1ms}", "{per_token: 10ms}"));
    Seen f = run(flat);
    CHECK(f.latency[0] == 600 * MS);
    CHECK(f.ttft[0] == 110 * MS);
    CHECK(f.tps[0] == Approx(100.0).epsilon(1e-12));
}

TEST_CASE("generation speed: a prefill batch reads the context before it and itself",
          "[generation]")
{
    // 1200 prompt tokens in batches of 512 (llama.cpp's n_ubatch): 512 from
    // 0 reads 512 cells each, 512 from 512 reads 1024, 176 from 1024 reads
    // 1200: 512 x 512 + 512 x 1024 + 176 x 1200 = 997,632 cells, x 1 us
    // (1 ms per 1,000) = 997.632 ms over 1200 x 1 ms.  One token decoded at
    // 10 ms: 1200 + 997.632 + 10 = 2207.632 ms.  (Token by token it would
    // be 1 + .. + 1200 = 720,600 cells: the batch reads its later tokens.)
    Loaded l(plan(1200, 1, "{per_token: 1ms, per_1k_context: 1ms}", "{per_token: 10ms}"));
    Seen s = run(l);
    CHECK(s.latency[0] == 2207632);
    CHECK(s.ttft[0] == 2207632);

    // A graph of ubatch 256 (compute from the graph): 4 batches of 256 and
    // one of 176: 256 x (256 + 512 + 768 + 1024) + 176 x 1200 = 655,360 +
    // 211,200 = 866,560 cells: 1200 + 866.56 + 10 = 2076.56 ms.
    std::string y = plan(1200, 1, "{per_token: 1ms, per_1k_context: 1ms}", "{per_token: 10ms}");
    y.replace(y.find("compute: 10MiB"), 14, "compute: {heads: 8, vocab: 1000, ubatch: 256}");
    Loaded g(y);
    CHECK(run(g).latency[0] == 2076560);
}

TEST_CASE("generation speed: the weights' kinds run at their speeds, so `weights` changes the "
          "times",
          "[generation]")
{
    // The candidate's 100 MiB are mapped, repacked weights run 1.25 times as
    // fast: repacked, the times are 1 / 1.25 = 0.8 of the measured ones.
    // 100 x 1 ms + 50 x 10 ms = 600 ms becomes 480 ms; the first token
    // (100 + 10 ms) 88 ms; 125 tokens/s.  Mapped (as measured): 600 ms.
    Loaded l(plan(100, 50, "{per_token: 1ms}", "{per_token: 10ms}",
                  "          weights_speed: {repacked: 1.25}\n") +
             "policies: {weights: [mapped, repacked, candidate]}\n");
    REQUIRE(l.s.ncells == 3);
    CHECK(run(l, 0).latency[0] == 600 * MS);
    Seen rep = run(l, 1);
    CHECK(rep.latency[0] == 480 * MS);
    CHECK(rep.ttft[0] == 88 * MS);
    CHECK(rep.tps[0] == Approx(125.0).epsilon(1e-12));
    CHECK(run(l, 2).latency[0] == 600 * MS);

    // With no weights_speed every kind reads at 1: the weights' axis changes
    // no time, even where the kinds' bytes overlap (60 mapped + 80 repacked
    // of a 100 MiB file, as an import may give them): 600 ms each.
    std::string o = plan(100, 50, "{per_token: 1ms}", "{per_token: 10ms}") +
                    "policies: {weights: [mapped, repacked, candidate]}\n";
    o.replace(o.find("weights: {mapped: 100MiB}"), 25, "weights: {mapped: 60MiB, repacked: 80MiB}");
    Loaded ov(o);
    for (unsigned cell = 0; cell < 3; cell++)
        CHECK(run(ov, cell).latency[0] == 600 * MS);

    // A candidate measured with repacked weights that maps them instead runs
    // at 1 / 1.25 of its speed: 600 ms x 1.25 = 750 ms.
    std::string y = plan(100, 50, "{per_token: 1ms}", "{per_token: 10ms}",
                         "          weights_speed: {repacked: 1.25}\n") +
                    "policies: {weights: [mapped]}\n";
    y.replace(y.find("weights: {mapped: 100MiB}"), 25, "weights: {repacked: 100MiB}");
    Loaded m(y);
    CHECK(run(m).latency[0] == 750 * MS);
}

TEST_CASE("generation speed: the new keys are checked with file:line", "[generation][scenario]")
{
    struct Case {
        std::string yaml;
        const char *msg;
    } cases[] = {
        {plan(1, 1, "{per_token: 1ms, per_1k_context: fast}", "{per_token: 10ms}"), "fast"},
        {plan(1, 1, "{per_token: 1ms}", "{per_token: 10ms, per_k: 1ms}"), "per_k"},
        {plan(1, 1, "{per_token: 1ms}", "{per_token: 10ms}",
              "          weights_speed: {repacked: 0}\n"),
         "0"},
        {plan(1, 1, "{per_token: 1ms}", "{per_token: 10ms}",
              "          weights_speed: {shared: 2}\n"),
         "shared"},
        {plan(1, 1, "{per_token: 1ms}", "{per_token: 10ms}",
              "          weights_speed: {gpu: 0}\n"),
         "0"},
    };
    for (const Case &c : cases) {
        scn_scenario s{};
        sim_error err;
        sim_error_clear(&err);
        int rc = scn_scenario_parse(c.yaml.data(), c.yaml.size(), "speed.yaml", &s, &err);
        INFO(c.yaml << " -> " << err.msg);
        CHECK(rc != SIM_OK);
        CHECK(std::string(err.msg).find("speed.yaml:") == 0);
        CHECK(std::string(err.msg).find(c.msg) != std::string::npos);
        if (rc == SIM_OK)
            scn_scenario_release(&s);
    }
}
