// An LLM part's requests (models/generate.c, docs/model.md "Token
// generation"): tokens cut to the KV region, prefill then decode in closed
// form, the KV resident as written or reserved, the kill where the KV
// crosses a line.  Every figure is derived in a comment.
//
// The phone of the exact cases: iOS under the plain rule (no `others`),
// 8 GiB, jetsam's limit `limit` in the foreground; it counts native and gpu
// memory, not the mapped file.  The model: a 100 MiB file, mapped; load
// and prepare take no time; compute 10 MiB; the KV 1 MiB per token;
// prefill 1 ms and decode 10 ms per token; nothing else is held.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "models/models.h"
#include "scenarios/scenarios.h"
#include "shim/shim.hpp"
#include "shim/world.hpp"

namespace {

const int64_t MiB = 1024 * 1024;
const sim_time MS = 1000;

using shim::Loaded;

std::string phone(const char *limit = "4GiB")
{
    return std::string("name: gen\nhorizon: 10min\nreplications: 1\ndevices:\n"
                       "  - {name: phone, os: ios, ram: 8GiB, system: 1GiB, "
                       "kill: {rule: jetsam, limit: ") +
           limit + "}}\n";
}

// The model with `gen` keys added to (or replacing) the defaults.
std::string model(const std::string &gen, const char *weights = "{mapped: 100MiB}")
{
    return std::string(R"(candidates:
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
          weights: )") +
           weights + "\n" + gen;
}

std::string path(const char *requests) { return std::string("workload: {path: [cold_start, ") + requests + "]}\n"; }

// Every request's latency (the times sink).
struct Times {
    std::vector<sim_time> latency;
    static void add(void *ctx, sim_time, sim_time l) { static_cast<Times *>(ctx)->latency.push_back(l); }
};

} // namespace

TEST_CASE("generation: the KV resident after N tokens is N x kv_per_token (touched), the "
          "whole context at its creation (reserved)",
          "[generation]")
{
    // One request of 100 prompt and 50 output tokens.  touched: the KV holds
    // 150 tokens at its end, 150 MiB, over compute's 10 MiB: a peak of
    // 160 MiB.  reserved: all 1000 tokens' 1000 MiB at the context's
    // creation, 1010 MiB.  The request takes 100 x 1 ms + 50 x 10 ms = 600 ms.
    const char *kv[] = {"touched", "reserved"};
    const int64_t peak[] = {160 * MiB, 1010 * MiB}, kvpeak[] = {150 * MiB, 1000 * MiB};
    for (int k = 0; k < 2; k++) {
        Loaded l(phone() + model(std::string("          prompt_tokens: 100\n          output_tokens: 50\n"
                                             "          kv: ") + kv[k] + "\n") +
                 path("{requests: {every: 1s, count: 1}}"));
        Times t;
        mdl_times_sink sink = {Times::add, &t, nullptr, nullptr};
        mdl_rep r = l.run(0, 0, &sink);
        INFO(kv[k]);
        CHECK(r.peak == peak[k]);
        CHECK(r.kv_peak == kvpeak[k]);
        CHECK(r.gen_requests == 1);
        CHECK(r.tokens_out == 50);
        CHECK(r.decode_us == 500 * MS);
        REQUIRE(t.latency.size() == 1);
        CHECK(t.latency[0] == 600 * MS);
        // time to first token: prefill, then one decoded token: 110 ms
        CHECK(r.ttft[mdl_ttft_bucket(110 * MS)] == 1);
        // 50 tokens in 500 ms: 100 tokens per second
        CHECK(r.tps[mdl_tps_bucket(100.0)] == 1);
        CHECK(r.deaths_total == 0);
    }
}

TEST_CASE("generation: a chat that reaches its context truncates, resets or fails as on_full "
          "says, and without keep_context nothing accumulates",
          "[generation]")
{
    // Five requests of 100 + 50 tokens, 10 s apart, into a context of 400.
    // keep_context with truncate: 150, 300, then 450 > 400 (an overflow: the
    // oldest 50 give way), 400 and 400 again: 3 overflows, the KV at 400 MiB.
    // reset: 150, 300, 450 > 400 starts again at 0 (150), 300, 450 again:
    // 2 overflows, the KV never past 300 MiB (touched: the pages written
    // stay resident).  fail: the third, fourth and fifth are refused: 3
    // overflows, 3 failed, 2 completed, the KV at 300 MiB.  No keep_context:
    // every request starts at 0, 150 MiB, no overflow.
    struct Case {
        const char *keys;
        uint64_t overflow, failed, completed;
        int64_t kv;
    } cases[] = {
        {"keep_context: true\n          on_full: truncate\n", 3, 0, 5, 400 * MiB},
        {"keep_context: true\n          on_full: reset\n", 2, 0, 5, 300 * MiB},
        {"keep_context: true\n          on_full: fail\n", 3, 3, 2, 300 * MiB},
        {"keep_context: false\n", 0, 0, 5, 150 * MiB},
    };
    for (const Case &c : cases) {
        std::string gen = std::string("          prompt_tokens: 100\n          output_tokens: 50\n"
                                      "          context: 400\n          ") +
                          c.keys;
        std::string yaml = phone() + model("") + path("{requests: {every: 10s, count: 5}}");
        // the case's context replaces the default 1000
        yaml.replace(yaml.find("          context: 1000\n"), 24, gen);
        Loaded l(yaml);
        mdl_rep r = l.run(0);
        INFO(c.keys);
        CHECK(r.context_overflow == c.overflow);
        CHECK(r.failed == c.failed);
        CHECK(r.completed == c.completed);
        CHECK(r.kv_peak == c.kv);
    }
}

TEST_CASE("generation: the KV crossing the limit mid-decode kills at the computed instant, "
          "not at the end of the request",
          "[generation]")
{
    // A request of 100 prompt and 400 output tokens arrives 1 s after the
    // cold start.  The footprint is compute's 10 MiB and the KV's 1 MiB per
    // token; the limit is 310 MiB, so the app dies when the KV holds 301
    // tokens: the 100 of the prompt (written by 100 ms) and 201 decoded,
    // 201 x 10 ms later: at 1 s + 100 ms + 2010 ms = 3110 ms, with 311 MiB
    // counted, long before the request's end at 1 s + 4.1 s.  One line was
    // met (the limit), and the request never completed.
    Loaded l(phone("310MiB") + model("          prompt_tokens: 100\n          output_tokens: 400\n") +
             path("{requests: {every: 1s, count: 1}}"));
    mdl_rep r = l.run(0);
    REQUIRE(r.deaths_total == 1);
    CHECK(r.first_death == MDL_EXIT_LOW_MEMORY);
    CHECK(r.first_death_time == 3110 * MS);
    CHECK(r.first_death_counted == 311 * MiB);
    CHECK(r.kv_lines == 1);
    CHECK(r.completed == 0);
    // 310 MiB exactly is under the limit: 300 decoded tokens of a 399-token
    // output would have lived (the same request with 200 output tokens)
    Loaded ok(phone("310MiB") + model("          prompt_tokens: 100\n          output_tokens: 200\n") +
              path("{requests: {every: 1s, count: 1}}"));
    mdl_rep q = ok.run(0);
    CHECK(q.deaths_total == 0);
    CHECK(q.peak == 310 * MiB);
}

TEST_CASE("generation: a prefill of no time writes its prompt at once, and is checked then",
          "[generation]")
{
    // A phone 100 times as fast, a prefill of 1 us per token: the 40-token
    // prompt takes 0.4 us, 0 once rounded, so its 40 MiB of KV are written at
    // the request's start (1 s); with compute's 10 MiB the 45 MiB limit is
    // crossed there and then, not a microsecond later, not at the end.
    std::string yaml = phone("45MiB") +
                       model("          prompt_tokens: 40\n          output_tokens: 50\n") +
                       path("{requests: {every: 1s, count: 1}}");
    yaml.replace(yaml.find("prefill: {per_token: 1ms}"), 25, "prefill: {per_token: 1us}");
    yaml.replace(yaml.find("system: 1GiB, "), 14, "system: 1GiB, speed: {cpu: 100}, ");
    Loaded l(yaml);
    mdl_rep r = l.run(0);
    REQUIRE(r.deaths_total == 1);
    CHECK(r.first_death_time == 1000 * MS);
    CHECK(r.first_death_counted == 50 * MiB);
}

TEST_CASE("generation: locked weights are counted, mapped ones are not", "[generation]")
{
    // The same request (100 + 50 tokens) with the 100 MiB of weights mapped:
    // 160 MiB counted and 100 MiB of file pages; locked (mlock): the weights
    // count, 260 MiB, and no file page is left to drop.
    Loaded mapped(phone() + model("          prompt_tokens: 100\n          output_tokens: 50\n") +
                  path("{requests: {every: 1s, count: 1}}"));
    Loaded locked(phone() +
                  model("          prompt_tokens: 100\n          output_tokens: 50\n",
                        "{mapped: 100MiB, locked: true}") +
                  path("{requests: {every: 1s, count: 1}}"));
    mdl_rep a = mapped.run(0), b = locked.run(0);
    CHECK(a.peak == 160 * MiB);
    CHECK(a.file_peak == 100 * MiB);
    CHECK(b.peak == 260 * MiB);
    CHECK(b.file_peak == 0);
}

TEST_CASE("generation: repacked and uploaded weights are the app's own memory, held from the "
          "load",
          "[generation]")
{
    // 40 MiB repacked (native) and 30 MiB on the GPU, both counted on the
    // iPhone: the peak is 160 + 70 = 230 MiB; the KV and compute live where
    // the weights do, the GPU, which the phone counts as well.
    Loaded l(phone() +
             model("          prompt_tokens: 100\n          output_tokens: 50\n",
                   "{mapped: 60MiB, repacked: 40MiB, gpu: 30MiB}") +
             path("{requests: {every: 1s, count: 1}}"));
    mdl_rep r = l.run(0);
    CHECK(r.peak == 230 * MiB);
    CHECK(r.stage_peak[MDL_STAGE_LOAD] == 70 * MiB);
}

TEST_CASE("generation: a part runs at most its slots' requests at once, each slot with "
          "context / slots tokens",
          "[generation]")
{
    // Two requests 1 ms apart (every 1 ms, count 2), each 100 + 50 tokens
    // (600 ms), with two sessions and no conversation kept.  One slot: the
    // second waits for the first, its latency 1200 - 1 = 1199 ms, and reuses
    // its region: 150 MiB of KV.  Two slots: both decode at once, 600 ms
    // each, in two regions of 150 tokens: 300 MiB.
    for (int slots = 1; slots <= 2; slots++) {
        Loaded l(phone() +
                 model(std::string("          prompt_tokens: 100\n          output_tokens: 50\n"
                                   "          keep_context: false\n          slots: ") +
                       std::to_string(slots) + "\n") +
                 path("{requests: {every: 1ms, count: 2}}") + "policies: {sessions: 2}\n");
        Times t;
        mdl_times_sink sink = {Times::add, &t, nullptr, nullptr};
        mdl_rep r = l.run(0, 0, &sink);
        INFO(slots << " slots");
        REQUIRE(t.latency.size() == 2);
        CHECK(t.latency[0] == 600 * MS);
        CHECK(t.latency[1] == (slots == 1 ? 1199 * MS : 600 * MS));
        CHECK(r.kv_peak == (slots == 1 ? 150 : 300) * MiB);
    }
    // each of 2 slots has 500 of the 1000 tokens: 400 + 200 does not fit
    Loaded l(phone() + model("          prompt_tokens: 400\n          output_tokens: 200\n"
                             "          slots: 2\n") +
             path("{requests: {every: 1s, count: 1}}"));
    CHECK(l.run(0).context_overflow == 1);
}

TEST_CASE("generation: a reserved KV with two slots is the whole context, written at once",
          "[generation]")
{
    // kv: reserved, context 1000 shared by 2 slots: llama.cpp makes one
    // cache of n_ctx cells, whatever n_seq_max, and clears all of it
    // (llama_kv_cache's constructor): 1000 x 1 MiB at the first request,
    // not 500 per slot nor 500 for the one slot in use.  One request of
    // 100 + 50 tokens: the peak is compute's 10 MiB and the 1000 MiB.
    Loaded l(phone() + model("          prompt_tokens: 100\n          output_tokens: 50\n"
                             "          kv: reserved\n          slots: 2\n") +
             path("{requests: {every: 1s, count: 1}}"));
    mdl_rep r = l.run(0);
    CHECK(r.kv_peak == 1000 * MiB);
    CHECK(r.peak == 1010 * MiB);
}

TEST_CASE("generation: two regions growing at once die at the first crossing of the limit",
          "[generation]")
{
    // Two slots, two sessions, two requests 1 ms apart (every 1 ms: at 1 ms
    // and 2 ms), each 100 prompt + 400 output tokens, KV touched, limit 310
    // MiB: the app dies when the two regions together hold 301 tokens (10
    // MiB of compute + 301 MiB).  A writes its prompt's token i at 1 + i
    // ms, B at 2 + i; A's decoded token j at 101 + 10 j ms, B's at 102 +
    // 10 j.  At 101 + 10 j the regions hold 100 + j and 100 + j - 1 = 199 +
    // 2 j tokens; at 102 + 10 j, 200 + 2 j.  301 is first reached at j = 51,
    // 101 + 510 = 611 ms (at 602 ms they hold 300).  The room is shared by
    // the regions growing: each region's line is half the room, so the
    // kill falls there, with 311 MiB counted, not where one region alone
    // would have grown by the whole room.
    Loaded l(phone("310MiB") +
             model("          prompt_tokens: 100\n          output_tokens: 400\n"
                   "          keep_context: false\n          slots: 2\n") +
             path("{requests: {every: 1ms, count: 2}}") + "policies: {sessions: 2}\n");
    mdl_rep r = l.run(0);
    REQUIRE(r.deaths_total == 1);
    CHECK(r.first_death == MDL_EXIT_LOW_MEMORY);
    CHECK(r.first_death_time == 611 * MS);
    CHECK(r.first_death_counted == 311 * MiB);
}

TEST_CASE("generation: the policies set the context, the KV's precision, the weights and the "
          "slots",
          "[generation]")
{
    // reserved KV, so the peak shows the context: 10 MiB + context x bytes
    // per token.  context 500: 510 MiB.  q8_0: 1 MiB x 34/64 = 544 KiB a
    // token, 1000 x 544 KiB = 531.25 MiB, +10.  q4_0: 288 KiB a token,
    // 281.25 MiB, +10.  weights: repacked: the 100 MiB file copied into
    // anonymous memory (counted): 1110 MiB; mapped: 1010 MiB.
    Loaded l(phone() +
             model("          prompt_tokens: 100\n          output_tokens: 50\n          kv: "
                   "reserved\n") +
             path("{requests: {every: 1s, count: 1}}") +
             "policies: {context: [500, 1000], kv_precision: [f16, q8_0, q4_0], "
             "weights: [mapped, repacked]}\n");
    REQUIRE(l.s.ncells == 12);
    auto peak = [&](unsigned cell) { return l.run(cell).peak; };
    CHECK(peak(0) == 510 * MiB);            // 500, f16, mapped
    CHECK(peak(1) == 610 * MiB);            // 500, f16, repacked
    CHECK(peak(6) == 1010 * MiB);           // 1000, f16, mapped
    CHECK(peak(8) == 10 * MiB + 1000 * 544 * 1024); // 1000, q8_0, mapped
    CHECK(peak(10) == 10 * MiB + 1000 * 288 * 1024); // 1000, q4_0, mapped
    CHECK(peak(11) == 110 * MiB + 1000 * 288 * 1024); // 1000, q4_0, repacked
}

TEST_CASE("generation: unload_after releases the idle model, the next request loads it again",
          "[generation]")
{
    // Requests 60 s apart (600 ms each): with unload_after 30s the model goes
    // 30 s after each, so each of the 3 requests after the first loads it
    // again (on demand): 3 switches; without it, none.
    std::string base = phone() + model("          prompt_tokens: 100\n          output_tokens: 50\n") +
                       path("{requests: {every: 60s, count: 4}}");
    Loaded a(base + "policies: {unload_after: 30s}\n"), b(base);
    CHECK(a.run(0).switches == 3);
    CHECK(b.run(0).switches == 0);
}

TEST_CASE("generation: a chat of 40 requests costs no more events than 40 classifier requests",
          "[generation][speed]")
{
    // Events stay per request, never per token: a 10-minute chat of 40
    // requests 14 s apart (the last at 560 s; 300 + 150 tokens each, 1.8 s)
    // and a classifier whose inference takes the same 1.8 s fire the same
    // arrivals, starts and ends; with no line ahead (a 4 GiB limit) the
    // chat fires none more.
    std::string chat = phone() + model("          prompt_tokens: 300\n          output_tokens: 150\n") +
                       path("{requests: {every: 14s, count: 40}}");
    std::string classifier = phone() + std::string(R"(candidates:
  - id: c
    digest: 0a
    runtime: test-1
    parts:
      m:
        file: 100MiB
        load: {mode: mmap, time: 0ms}
        prepare: {time: 0ms}
        inference: {time: 1800ms, working_set: {native: 10MiB}}
)") + path("{requests: {every: 14s, count: 40}}");
    Loaded a(chat), b(classifier);
    mdl_rep x = a.run(0), y = b.run(0);
    CHECK(x.gen_requests == 40);
    CHECK(x.kv_lines == 0);
    CHECK(x.events <= y.events);
}

TEST_CASE("generation: a part with generation is checked with file:line", "[generation][scenario]")
{
    struct Bad {
        const char *from, *to, *says;
    } bad[] = {
        {"          context: 1000\n", "          context: 0\n", "gen.yaml:"},
        {"          context: 1000\n", "          context: 1048577\n", "context"},
        {"          kv_per_token: 1MiB\n", "          kv_per_token: 0B\n", "more than 0"},
        {"          decode: {per_token: 10ms}\n", "          decode: {per_token: 0ms}\n",
         "more than 0"},
        {"          compute: 10MiB\n", "          compute: 10MiB\n          kv: paged\n", "paged"},
        {"          compute: 10MiB\n", "          compute: 10MiB\n          on_full: wrap\n", "wrap"},
        {"          compute: 10MiB\n", "          compute: 10MiB\n          slots: 9\n", "slots"},
        {"          weights: {mapped: 100MiB}\n", "          weights: {mapped: 200MiB}\n",
         "exceed the part's file"},
        {"        prepare: {time: 0ms}\n",
         "        prepare: {time: 0ms}\n        inference: {time: 1s}\n", "no inference key"},
    };
    std::string good = phone() + model("          prompt_tokens: 100\n          output_tokens: 50\n") +
                       path("{requests: {every: 1s, count: 1}}");
    for (const Bad &b : bad) {
        std::string yaml = good;
        size_t at = yaml.find(b.from);
        REQUIRE(at != std::string::npos);
        yaml.replace(at, strlen(b.from), b.to);
        scn_scenario s{};
        sim_error err;
        sim_error_clear(&err);
        int rc = scn_scenario_parse(yaml.data(), yaml.size(), "gen.yaml", &s, &err);
        INFO(b.to << " -> " << err.msg);
        CHECK(rc != SIM_OK);
        CHECK(std::string(err.msg).find("gen.yaml:") == 0);
        CHECK(std::string(err.msg).find(b.says) != std::string::npos);
        if (rc == SIM_OK)
            scn_scenario_release(&s);
    }
    // negative tokens: refused where they are written
    std::string yaml = good;
    yaml.replace(yaml.find("prompt_tokens: 100"), 18, "prompt_tokens: -1");
    scn_scenario s{};
    sim_error err;
    sim_error_clear(&err);
    CHECK(scn_scenario_parse(yaml.data(), yaml.size(), "gen.yaml", &s, &err) != SIM_OK);
    CHECK(std::string(err.msg).find("gen.yaml:") == 0);
}

TEST_CASE("generation: tokens per second fall when reclaim drops the mapped weights",
          "[generation][pages]")
{
    // Android in lmkd's PSI mode, two phones alike but for their RAM, the
    // same chat (common random numbers: the same tokens and per-token
    // times).  On the 12 GiB phone nothing is dropped: no refault, and the
    // decode rate is the draws'.  On the 3.5 GiB one the 880 MiB of hot
    // weights, 700 MiB repacked and a growing KV do not fit beside the
    // cached apps: reclaim drops weights, each request reads them back
    // before its tokens, and the decode rate over the same tokens (the app
    // lives through all of them on both) falls.
    auto dev = [](const char *name, const char *ram) {
        return std::string("  - {name: ") + name + ", os: android, ram: " + ram +
               ", system: 1.1GiB, cached_apps: 650MiB, cached_app_size: 120MiB,\n"
               "     kill: {rule: lmk, mode: psi, watermarks: {min: 7094KiB, low: 10239KiB, "
               "high: 13384KiB}},\n     counts: [native, java, gpu], zram: {size: 1536MiB, "
               "ratio: 2.5}, page_cache: {size: 500MiB, working_set: 250MiB},\n"
               "     storage_read: 40MB/s, reclaim_rate: 300MiB/s}\n";
    };
    std::string yaml = std::string("name: gen\nhorizon: 10min\nreplications: 1\nseed: 3\ndevices:\n") +
                       dev("small", "3.5GiB") + dev("big", "12GiB") + R"(candidates:
  - id: llm
    digest: 0a
    runtime: test-1
    parts:
      m:
        file: 900MiB
        load: {mode: mmap, time: 1s}
        prepare: {time: 0ms}
        generation:
          prompt_tokens: {dist: lognormal, median: 300, p95: 1500}
          output_tokens: {dist: lognormal, median: 150, p95: 600}
          context: 4096
          kv_per_token: 112KiB
          prefill: {per_token: {dist: lognormal, median: 1.2ms, p95: 2ms}}
          decode: {per_token: {dist: lognormal, median: 35ms, p95: 60ms}}
          weights: {mapped: 880MiB, repacked: 700MiB}
          compute: 300MiB
)" + path("{requests: {every: 15s, count: 30}}");
    Loaded l(yaml);
    mdl_rep small = l.run(0), big = l.run(1);
    REQUIRE(big.tokens_out > 0);
    REQUIRE(small.tokens_out > 0);
    CHECK(big.refault_bytes == 0);
    CHECK(small.refault_bytes > 0);
    double rate_small = (double)small.tokens_out / (double)small.decode_us;
    double rate_big = (double)big.tokens_out / (double)big.decode_us;
    INFO("tokens/s: small " << rate_small * 1e6 << ", big " << rate_big * 1e6);
    CHECK(rate_small < rate_big);
    INFO("deaths: small " << small.deaths_total);
    CHECK(small.deaths_total == 0);
}

TEST_CASE("generation: the llm-chat-grows teaching scenario shows what it promises",
          "[generation][teach][about:llm-chat-grows]")
{
    // On the 3 GB Android phone (cells 0-5: touched, reserved, fresh, each at
    // a context of 16384 then 4096), a user who reads each answer before the
    // next message: the touched KV grows until about half the sessions die,
    // mostly in the background; the reserved one kills it in the foreground
    // from the start; a 4096-token context or no kept conversation cuts the
    // deaths to a small share, the 4096-token context by cutting most
    // requests to fit.  At 200 replications: 51.5 %, 100 %, 15.5 %, 10.5 %,
    // 6.5 %; at 60 each bound checked is 3 standard errors or more (0.065
    // at one half, 0.047 at 0.155) from the share.
    Loaded l(shim::read_file(shim::source_path("scenarios/catalog/teach/llm-chat-grows.yaml")));
    REQUIRE(l.s.ncells == 12);
    auto share = [&](unsigned cell, unsigned *fg, unsigned *bg) {
        unsigned died = 0;
        *fg = *bg = 0;
        for (uint64_t rep = 0; rep < 60; rep++) {
            mdl_rep r = l.run(cell, rep);
            died += r.deaths_total > 0;
            if (r.deaths_total > 0 && (r.first_death == MDL_EXIT_LOW_MEMORY ||
                                       r.first_death == MDL_EXIT_SYSTEM_RECLAIM))
                (r.first_death_foreground ? *fg : *bg) += 1;
        }
        return died / 60.0;
    };
    unsigned fg, bg;
    double touched = share(0, &fg, &bg); // touched, 16384
    CHECK(touched > 0.3);
    CHECK(touched < 0.75);
    CHECK(bg > fg);
    CHECK(share(2, &fg, &bg) > 0.9); // reserved, 16384
    CHECK(fg > bg);
    CHECK(share(1, &fg, &bg) < 0.3); // touched, 4096
    CHECK(share(3, &fg, &bg) < 0.3); // reserved, 4096
    CHECK(share(4, &fg, &bg) < 0.2); // fresh, 16384
    // the 4096-token context no longer holds most conversations: more than
    // half of its requests are cut (2464 of 3836 at 200 replications)
    uint64_t cut = 0, started = 0;
    for (uint64_t rep = 0; rep < 60; rep++) {
        mdl_rep r = l.run(1, rep);
        cut += r.context_overflow;
        started += r.gen_started;
    }
    CHECK(cut * 2 > started);
}

TEST_CASE("generation: a freed KV region goes to the request that waited for it, before the "
          "queue's next",
          "[generation]")
{
    // Two sessions, one slot, three requests 1 ms apart of 600 ms each: the
    // second holds a session and waits for the region, the third waits in the
    // queue.  When the first ends, the second decodes (1200 - 1 = 1199 ms),
    // then the third (1800 - 2 = 1798 ms): first come, first served.
    Loaded l(phone() +
             model("          prompt_tokens: 100\n          output_tokens: 50\n"
                   "          keep_context: false\n") +
             path("{requests: {every: 1ms, count: 3}}") + "policies: {sessions: 2}\n");
    Times t;
    mdl_times_sink sink = {Times::add, &t, nullptr, nullptr};
    l.run(0, 0, &sink);
    REQUIRE(t.latency.size() == 3);
    CHECK(t.latency[0] == 600 * MS);
    CHECK(t.latency[1] == 1199 * MS);
    CHECK(t.latency[2] == 1798 * MS);
}

TEST_CASE("generation: waiting for a region survives the part's release and a release-first "
          "switch",
          "[generation]")
{
    // A second part e evicts m (overlap residency) while m decodes, and a
    // request waits for m's region: m loads again for it at once (500 ms
    // after its last request ended), never stranded.  Under release_first
    // with two slots, the same switch ends (no request waits forever).
    // llm's m (the model above, its load 500 ms, a context of 4000) and e
    auto yaml_of = [](const std::string &slots) {
        std::string y = phone() +
                        model("          prompt_tokens: 100\n          output_tokens: 500\n"
                              "          keep_context: false\n          slots: " + slots + "\n") +
                        R"(      e:
        file: 10MiB
        load: {mode: mmap, time: 100ms}
        prepare: {time: 0ms}
        inference: {time: 100ms}
)" + "workload: {path: [cold_start, {requests: {every: 1s, count: 2, needs: [m]}}, "
                              "{requests: {every: 1s, count: 1, needs: [e]}}, {requests: {every: 1s, "
                              "count: 3, needs: [m]}}]}\n";
        y.replace(y.find("load: {mode: mmap, time: 0ms}"), 29, "load: {mode: mmap, time: 500ms}");
        y.replace(y.find("context: 1000"), 13, "context: 4000");
        return y;
    };
    for (const char *residency : {"on_demand_overlap", "on_demand_release_first"}) {
        for (const char *slots : {"1", "2"}) {
            Loaded l(yaml_of(slots) + "policies: {sessions: 4, residency: " + residency + "}\n");
            Times t;
            mdl_times_sink sink = {Times::add, &t, nullptr, nullptr};
            mdl_rep r = l.run(0, 0, &sink);
            INFO(residency << ", " << slots << " slots");
            CHECK(r.completed == 6);
            // each m request takes 5.1 s; five of them, two at most at once, one
            // reload: none waits near the horizon
            for (sim_time x : t.latency)
                CHECK(x < 30 * 1000 * MS);
        }
    }
}

TEST_CASE("generation: unload_after counts from the last use, and a long wait keeps its time "
          "to first token",
          "[generation]")
{
    // Requests 50 s apart under unload_after 60s: the part is never idle for
    // 60 s, so it is never released; 70 s apart it is released after every
    // request, and each of the 3 later requests loads it again.
    std::string base = phone() + model("          prompt_tokens: 100\n          output_tokens: 50\n");
    Loaded a(base + path("{requests: {every: 50s, count: 4}}") + "policies: {unload_after: 60s}\n");
    Loaded b(base + path("{requests: {every: 70s, count: 4}}") + "policies: {unload_after: 60s}\n");
    CHECK(a.run(0).switches == 0);
    CHECK(b.run(0).switches == 3);
    // a prompt of 100,000 tokens at 1 ms: the first token after 100 s of
    // prefill and one 10 ms decode step, past the first minute, in its own
    // bucket (of 10 ms) and not the last
    std::string yaml = phone() + model("          prompt_tokens: 100000\n          output_tokens: 1\n") +
                       path("{requests: {every: 1s, count: 1}}");
    yaml.replace(yaml.find("context: 1000"), 13, "context: 200000");
    yaml.replace(yaml.find("kv_per_token: 1MiB"), 18, "kv_per_token: 1KiB"); // 98 MiB of KV
    Loaded c(yaml);
    mdl_rep r = c.run(0);
    unsigned bucket = mdl_ttft_bucket(100010 * MS);
    CHECK(bucket < MDL_SLOWDOWN_BUCKETS - 1);
    CHECK(r.ttft[bucket] == 1);
}
