// Costs that follow the runtime (models/generate.c, docs/model.md "The
// compute buffer"): llama.cpp's compute buffer sized from the graph for
// the context, with and without flash attention; a quantised V cache
// refused without it; the KV's type; weights read into memory without a
// mapping counted once.  Every figure is derived in a comment.
//
// The graph of the hand values: 32 query heads, a vocabulary of 32000,
// n_ubatch 512, 32 MiB of other tensors at the peak, one sequence.  The
// reserve graph has min(512, n_ctx) = 512 tokens.
//   without flash attention: scores f32 n_ctx x 512 x 32 x 4 bytes, beside
//     the f32 mask n_ctx x 512 x 4: n_ctx x 512 x 132 bytes
//       2048: 132 MiB, 8192: 528 MiB, 32768: 2112 MiB
//   with it: the f16 mask alone, n_ctx x 512 x 2: 2, 8, 32 MiB
//   logits: 32000 x 512 x 4 = 65,536,000 bytes (62.5 MiB)
//   output buffer: one row of logits, 32000 x 4 = 128,000 bytes
// compute = max(attention, logits) + output + other:
//   off: 164 MiB, 560 MiB, 2144 MiB (each + 128,000 bytes)
//   on:  94.5 MiB at all three (+ 128,000 bytes)
// 164 and 2144 MiB are the compute buffers a public llama.cpp log of a
// 32-head, 32000-token model reports at 2k and 32k without flash attention.
#include <catch2/catch.hpp>

#include <string>

#include "models/models.h"
#include "scenarios/scenarios.h"
#include "shim/shim.hpp"
#include "shim/world.hpp"

namespace {

const int64_t MiB = 1024 * 1024;
const int64_t OUTPUT = 32000 * 4;

using shim::Loaded;

// An iPhone under the plain rule, 8 GiB, no limit that matters; a model of
// a 100 MiB mapped file, a reserved KV of 1 KiB a token (so the peak shows
// the KV and the compute), one request of 100 + 10 tokens.
std::string scenario(const std::string &gen, const std::string &policies,
                     const char *weights = "{mapped: 100MiB}")
{
    return std::string("name: fa\nhorizon: 10min\nreplications: 1\ndevices:\n"
                       "  - {name: phone, os: ios, ram: 8GiB, system: 1GiB, "
                       "kill: {rule: jetsam, limit: 7GiB}}\n"
                       "candidates:\n  - id: llm\n    digest: 0a\n    runtime: test-1\n"
                       "    parts:\n      m:\n        file: 100MiB\n"
                       "        load: {mode: mmap, time: 0ms}\n        prepare: {time: 0ms}\n"
                       "        generation:\n          prompt_tokens: 100\n"
                       "          output_tokens: 10\n          context: 2048\n"
                       "          kv_per_token: 1KiB\n          kv: reserved\n"
                       "          prefill: {per_token: 1ms}\n          decode: {per_token: 10ms}\n"
                       "          weights: ") +
           weights + "\n" + gen + "workload: {path: [cold_start, {requests: {every: 1s, count: 1}}]}\n" +
           policies;
}

const char *GRAPH = "          compute: {heads: 32, vocab: 32000, ubatch: 512, other: 32MiB}\n";

int parse(const std::string &yaml, std::string &msg)
{
    scn_scenario s{};
    sim_error err;
    sim_error_clear(&err);
    int rc = scn_scenario_parse(yaml.data(), yaml.size(), "fa.yaml", &s, &err);
    msg = err.msg;
    if (rc == SIM_OK)
        scn_scenario_release(&s);
    return rc;
}

} // namespace

TEST_CASE("compute buffer: the graph's largest tensors at 2k, 8k and 32k, with and without "
          "flash attention",
          "[generation][flash_attn]")
{
    mdl_compute_graph g{};
    g.heads = 32;
    g.vocab = 32000;
    g.ubatch = 512;
    g.other = 32 * MiB;
    CHECK(mdl_compute_bytes(&g, 2048, 1, 0) == 164 * MiB + OUTPUT);
    CHECK(mdl_compute_bytes(&g, 8192, 1, 0) == 560 * MiB + OUTPUT);
    CHECK(mdl_compute_bytes(&g, 32768, 1, 0) == 2144 * MiB + OUTPUT);
    for (uint32_t n : {2048u, 8192u, 32768u})
        CHECK(mdl_compute_bytes(&g, n, 1, 1) == 94 * MiB + MiB / 2 + OUTPUT);
    // n_ctx padded to 256: 2000 is made as 2048
    CHECK(mdl_compute_bytes(&g, 2000, 1, 0) == 164 * MiB + OUTPUT);
    // a context shorter than the batch: n_batch is cut to the 100 tokens
    // asked for, before n_ctx is padded to 256: a 100-token graph, 256 x
    // 100 x 132 bytes of attention under 32000 x 100 x 4 of logits
    CHECK(mdl_compute_bytes(&g, 100, 1, 0) == 32 * MiB + 32000 * 100 * 4 + OUTPUT);
    // a ubatch past n_batch's default of 2048: 2048 tokens, 2048 x 2048 x
    // 132 bytes (528 MiB) of attention
    g.ubatch = 4096;
    CHECK(mdl_compute_bytes(&g, 2048, 1, 0) == 32 * MiB + 528 * MiB + OUTPUT);
    g.ubatch = 512;
    // 4 sequences of 8192: each attends to 8192 / 4 = 2048 rows, the batch
    // still 512 tokens (132 MiB), and 4 rows of output
    CHECK(mdl_compute_bytes(&g, 8192, 4, 0) == 164 * MiB + 4 * OUTPUT);
    // the logits dominate a large vocabulary with flash attention: Llama
    // 3.2 1B's 128256 x 512 x 4 = 250.5 MiB, as its public logs show
    g.vocab = 128256;
    g.other = 0;
    CHECK(mdl_compute_bytes(&g, 4096, 1, 1) == 128256LL * 512 * 4 + 128256LL * 4);
}

TEST_CASE("compute buffer: the policy's context and flash_attn size it in a run",
          "[generation][flash_attn]")
{
    // peak = compute + the reserved KV (context x 1 KiB); the cells run
    // context fastest within flash_attn: [on, off] x [2048, 8192, 32768]
    Loaded l(scenario(GRAPH, "policies: {flash_attn: [on, off], context: [2048, 8192, 32768]}\n"));
    REQUIRE(l.s.ncells == 6);
    const int64_t on = 94 * MiB + MiB / 2 + OUTPUT, off[3] = {164 * MiB, 560 * MiB, 2144 * MiB};
    const int64_t ctx[3] = {2048, 8192, 32768};
    for (unsigned k = 0; k < 3; k++) {
        INFO("context " << ctx[k]);
        CHECK(l.run(k).peak == on + ctx[k] * 1024);
        CHECK(l.run(3 + k).peak == off[k] + OUTPUT + ctx[k] * 1024);
    }
    // auto is on (the CPU and Metal run the fused op); a size given as one
    // figure stays that figure whatever the context and flash attention
    Loaded a(scenario(GRAPH, "policies: {flash_attn: auto}\n"));
    CHECK(a.run(0).peak == on + 2048 * 1024);
    Loaded fixed(scenario("          compute: 10MiB\n", "policies: {flash_attn: [on, off]}\n"));
    CHECK(fixed.run(0).peak == 10 * MiB + 2048 * 1024);
    CHECK(fixed.run(1).peak == 10 * MiB + 2048 * 1024);
}

TEST_CASE("flash_attn: a quantised V cache without flash attention is refused, as llama.cpp "
          "refuses to make its context",
          "[generation][flash_attn]")
{
    std::string msg;
    // the policy's kv_precision quantises V; flash_attn off refuses it
    CHECK(parse(scenario(GRAPH, "policies: {kv_precision: q8_0, flash_attn: off}\n"), msg) ==
          SIM_EINPUT);
    CHECK(msg.find("fa.yaml:") == 0);
    CHECK(msg.find("quantized V cache requires flash_attn to be enabled") != std::string::npos);
    CHECK(msg.find("kv_precision q8_0") != std::string::npos);
    CHECK(parse(scenario(GRAPH, "policies: {kv_precision: [f16, q4_0], flash_attn: [auto, off]}\n"),
                msg) == SIM_EINPUT);
    CHECK(msg.find("q4_0") != std::string::npos);
    // auto and on accept it; f16 without flash attention is fine
    CHECK(parse(scenario(GRAPH, "policies: {kv_precision: q8_0, flash_attn: [auto, on]}\n"), msg) ==
          SIM_OK);
    CHECK(parse(scenario(GRAPH, "policies: {kv_precision: f16, flash_attn: off}\n"), msg) ==
          SIM_OK);
    // the candidate's own type: refused where it says flash_attn: off
    std::string own = std::string(GRAPH) + "          kv_type: q8_0\n          flash_attn: off\n";
    CHECK(parse(scenario(own, ""), msg) == SIM_EINPUT);
    CHECK(msg.find("fa.yaml:") == 0);
    CHECK(msg.find(": a quantised V cache needs flash attention") != std::string::npos);
    CHECK(msg.find("in force with") == std::string::npos); // the candidate's, not a cell's
    // as written the candidate makes no context, whatever a policy does
    CHECK(parse(scenario(own, "policies: {kv_precision: f16}\n"), msg) == SIM_EINPUT);
    // the candidate's off, and a policy quantising V: refused at the grid
    CHECK(parse(scenario(std::string(GRAPH) + "          flash_attn: off\n",
                         "policies: {kv_precision: [f16, q8_0]}\n"),
                msg) == SIM_EINPUT);
    CHECK(msg.find("kv_precision q8_0 and flash_attn off") != std::string::npos);
    CHECK(parse(scenario(std::string(GRAPH) + "          flash_attn: sometimes\n", ""), msg) ==
          SIM_EINPUT);
    CHECK(parse(scenario("          compute: {heads: 32}\n", ""), msg) == SIM_EINPUT);
    CHECK(msg.find("vocab") != std::string::npos);
}

TEST_CASE("kv_precision scales the KV from the candidate's own type", "[generation][flash_attn]")
{
    // a q8_0 candidate of 1024 bytes a token: as given 1024; f16: 1024 x
    // 64/34 = 1927.5, rounded 1928; q4_0: 1024 x 18/34 = 542.1, 542
    Loaded l(scenario("          compute: 0B\n          kv_type: q8_0\n",
                      "policies: {kv_precision: [q8_0, f16, q4_0]}\n"));
    REQUIRE(l.s.ncells == 3);
    const int64_t per[3] = {1024, 1928, 542};
    const mdl_kv_type type[3] = {MDL_KVT_Q8_0, MDL_KVT_F16, MDL_KVT_Q4_0};
    for (unsigned k = 0; k < 3; k++) {
        mdl_generation g;
        mdl_generation_in_force(&l.s.cells[k].candidate->parts[0], &l.s.cells[k].policy, 0, &g);
        INFO("cell " << k);
        CHECK(g.kv_per_token == per[k]);
        CHECK(g.kv_type == type[k]);
        CHECK(l.run(k).peak == 2048 * per[k]);
    }
}

TEST_CASE("weights: repacked without a mapping counts the weights once, and the mapped figure "
          "is the same everywhere",
          "[generation][flash_attn]")
{
    // 100 MiB file, 60 mapped (hot) and 40 repacked as given.  As given: 40
    // MiB native and the whole file mapped (100 MiB of file pages, none
    // counted); repacked: the file read into 100 MiB of native memory, no
    // page mapped; mapped: 100 MiB mapped, all hot; candidate: as given.
    Loaded l(scenario("          compute: 0B\n",
                      "policies: {weights: [candidate, repacked, mapped]}\n",
                      "{mapped: 60MiB, repacked: 40MiB}"));
    REQUIRE(l.s.ncells == 3);
    const int64_t kv = 2048 * 1024;
    mdl_rep given = l.run(0), repacked = l.run(1), mapped = l.run(2);
    CHECK(given.peak == 40 * MiB + kv);
    CHECK(given.file_peak == 100 * MiB);
    CHECK(repacked.peak == 100 * MiB + kv);
    CHECK(repacked.file_peak == 0);
    CHECK(mapped.peak == kv);
    CHECK(mapped.file_peak == 100 * MiB);
    const int64_t pages[3] = {100 * MiB, 0, 100 * MiB};
    for (unsigned k = 0; k < 3; k++) {
        mdl_generation g;
        const mdl_part *def = &l.s.cells[k].candidate->parts[0];
        mdl_generation_in_force(def, &l.s.cells[k].policy, 0, &g);
        CHECK(mdl_generation_file_pages(def, &g) == pages[k]);
    }
}
