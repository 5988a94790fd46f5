// A closed-loop requests step (`after_answer`, models/path.c, docs/model.md
// "A chat as people chat"): each request comes a think time after the
// previous one's answer ends, however it ended.  Every instant below is
// derived in a comment.
//
// The phone: iOS under the plain rule, 8 GiB, nothing is killed.  The
// model: an LLM part whose load and prepare take no time; each request is
// 100 prompt tokens at 1 ms and 50 output tokens at 10 ms: 600 ms.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "models/models.h"
#include "scenarios/scenarios.h"
#include "shim/shim.hpp"
#include "shim/world.hpp"

namespace {

const sim_time MS = 1000;

using shim::Loaded;

std::string chat(const std::string &steps, const char *extra = "")
{
    return std::string("name: chat\nhorizon: 10min\nreplications: 1\ndevices:\n"
                       "  - {name: phone, os: ios, ram: 8GiB, system: 1GiB, "
                       "kill: {rule: jetsam, limit: 4GiB}}\n"
                       R"(candidates:
  - id: llm
    digest: 0a
    runtime: test-1
    parts:
      m:
        file: 100MiB
        load: {mode: mmap, time: 0ms}
        prepare: {time: 0ms}
        generation:
          context: 1000
          kv_per_token: 1MiB
          prefill: {per_token: 1ms}
          decode: {per_token: 10ms}
          compute: 10MiB
          weights: {mapped: 100MiB}
          prompt_tokens: 100
          output_tokens: 50
)") + "workload:\n  path: [cold_start, " +
           steps + "]\n" + extra;
}

// Each request's arrival and, when it completed, its latency.
struct Seen {
    std::vector<sim_time> arrival, latency;
    static void done(void *ctx, sim_time, sim_time l)
    {
        static_cast<Seen *>(ctx)->latency.push_back(l);
    }
    static void came(void *ctx, sim_time t) { static_cast<Seen *>(ctx)->arrival.push_back(t); }
};

Seen run(const std::string &yaml)
{
    Loaded l(yaml);
    Seen s;
    mdl_times_sink sink = {Seen::done, &s, Seen::came, nullptr};
    l.run(0, 0, &sink);
    return s;
}

} // namespace

TEST_CASE("after_answer: each request a think time after the previous answer, never queued "
          "behind it",
          "[after_answer]")
{
    // think 2 s: the first at 2 s (the step begins at 0), its answer at
    // 2.6 s, the next at 4.6 s, then 7.2, 9.8, 12.4 s; each 600 ms, no wait
    Seen s = run(chat("{requests: {after_answer: 2s, count: 5}}"));
    REQUIRE(s.arrival.size() == 5);
    REQUIRE(s.latency.size() == 5);
    for (size_t k = 0; k < 5; k++) {
        CHECK(s.arrival[k] == 2000 * MS + (sim_time)k * 2600 * MS);
        CHECK(s.latency[k] == 600 * MS);
    }
    // the open loop at the same mean gap: a request every 300 ms waits
    // behind the one decoding (the second waits 300 ms, the third 600 ms)
    Seen o = run(chat("{requests: {every: 300ms, count: 5}}"));
    REQUIRE(o.latency.size() == 5);
    CHECK(o.latency[1] == 900 * MS);
    CHECK(o.latency[2] == 1200 * MS);
}

TEST_CASE("after_answer: a counted step ends with its last answer, and a given-up answer ends too",
          "[after_answer]")
{
    // two at 2 s and 4.6 s; the step ends with the second answer (5.2 s); the
    // next step's first comes its own think time (1 s) later: 6.2 s
    Seen s = run(chat("{requests: {after_answer: 2s, count: 2}}, "
                      "{requests: {after_answer: 1s, count: 1}}"));
    REQUIRE(s.arrival.size() == 3);
    CHECK(s.arrival[1] == 4600 * MS);
    CHECK(s.arrival[2] == 6200 * MS);
    // the client gives up after 300 ms (no retry): the user has no answer at
    // 2.3 s and writes again 2 s later, at 4.3 s, while the abandoned
    // attempt decodes to 2.6 s; a think time drawn from a distribution
    Seen t = run(chat("{requests: {after_answer: 2s, count: 2}}", "  timeout: 300ms\n"));
    REQUIRE(t.arrival.size() == 2);
    CHECK(t.arrival[1] == 4300 * MS);
    Seen d = run(chat("{requests: {after_answer: {dist: uniform, min: 1s, max: 3s}, for: 1min}}"));
    REQUIRE(d.arrival.size() >= 15); // at most 3.6 s a turn over 60 s: 16 or more
    for (size_t k = 1; k < d.arrival.size(); k++) {
        sim_time think = d.arrival[k] - (d.arrival[k - 1] + 600 * MS);
        CHECK(think >= 1000 * MS);
        CHECK(think <= 3000 * MS);
    }
}

TEST_CASE("after_answer: one of rate, every and after_answer", "[after_answer]")
{
    scn_scenario s{};
    sim_error err;
    sim_error_clear(&err);
    std::string y = chat("{requests: {after_answer: 2s, every: 1s, count: 2}}");
    CHECK(scn_scenario_parse(y.data(), y.size(), "c.yaml", &s, &err) != SIM_OK);
    CHECK(std::string(err.msg).find("c.yaml:") == 0);
    CHECK(std::string(err.msg).find("give exactly one of rate (Poisson arrivals), every (a "
                                     "fixed interval) and after_answer") != std::string::npos);
    scn_scenario_release(&s);
}

TEST_CASE("after_answer: an answer lost with the process ends too: the user writes again",
          "[after_answer]")
{
    // the conversation kept: the second request's prefill takes the KV past
    // 240 tokens (its 150 + 100), over the 250 MiB limit with compute's
    // 10 MiB: the app dies mid-answer.  The user reopens it 5 s later and
    // goes on writing, a think time after the lost answer (while the app is
    // closed, a turn ends at once): requests keep coming after the death.
    std::string y = chat("{requests: {after_answer: 2s, for: 1min}}", "  relaunch: 5s\n");
    size_t at = y.find("limit: 4GiB");
    y.replace(at, 11, "limit: 250MiB");
    at = y.find("          output_tokens: 50\n");
    y.insert(at, "          keep_context: true\n");
    Loaded l(y);
    Seen s;
    mdl_times_sink sink = {Seen::done, &s, Seen::came, nullptr};
    mdl_rep r = l.run(0, 0, &sink);
    CHECK(r.deaths_total >= 1);
    REQUIRE(s.arrival.size() >= 3);
    CHECK(s.arrival[0] == 2000 * MS);
    CHECK(s.arrival[1] == 4600 * MS);
    CHECK(s.arrival[2] > 4600 * MS + 5000 * MS); // after the relaunch
}
