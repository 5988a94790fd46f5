// The GPU path of an LLM part (models/generate.c, docs/model.md "The GPU
// path"): llama.cpp's n_gpu_layers as the policy's `gpu_layers`, the
// offloaded layers' weights and their share of the KV in gpu memory, the
// compute buffer with the output layer, a tied embedding kept by the CPU,
// and on an iPhone with mmap the GPU's weights left as the file's pages
// (Metal maps them); a part without layers as before them.
// Every figure is derived in a comment.
//
// The model: 16 repeating layers of 32 MiB and an output layer of 205 MiB
// (a tied embedding's copy) in a 730 MiB file; as given, nothing on the
// GPU, 226 MiB mapped and read at every token, 504 MiB repacked; a KV of
// 32 KiB a token reserved for 4096 tokens (128 MiB); compute 10 MiB.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "models/models.h"
#include "scenarios/scenarios.h"
#include "shim/shim.hpp"
#include "shim/world.hpp"

namespace {

const int64_t MIB = 1 << 20;

using shim::Loaded;

// One request of 1000 prompt tokens and one output token on a phone of
// system `os` counting `counts`; `load` the part's load mode, `order` the
// layers' order, `extra` lines after the scenario's (policies).
std::string plan(const char *os, const char *counts, const char *load, const char *order,
                 const std::string &extra, const char *kv = "reserved")
{
    std::string rule = std::strcmp(os, "ios") == 0 ? "{rule: jetsam, limit: 6GiB}"
                                                   : "{rule: lmk, minfree: [{adj: 0, free: 72MiB}]}";
    std::string weights = std::strcmp(load, "mmap") == 0
                              ? "          weights: {mapped: 226MiB, repacked: 504MiB}\n"
                              : "";
    return std::string("name: gpu\nhorizon: 10min\nreplications: 1\ndevices:\n") +
           "  - {name: phone, os: " + os + ", ram: 8GiB, system: 1GiB, counts: " + counts +
           ", kill: " + rule + "}\n" +
           "candidates:\n  - id: llm\n    digest: 0a\n    runtime: test-1\n    parts:\n"
           "      m:\n        file: 730MiB\n        load: {mode: " +
           load +
           ", time: 0ms}\n"
           "        prepare: {time: 0ms}\n        generation:\n"
           "          context: 4096\n          kv_per_token: 32KiB\n          kv: " +
           kv + "\n          compute: 10MiB\n" + weights +
           "          layers: {count: 16, offloaded: 0, order: " + order +
           ", bytes: 32MiB, output: 205MiB}\n"
           "          prompt_tokens: 1000\n          output_tokens: 1\n"
           "          prefill: {per_token: 1ms}\n          decode: {per_token: 10ms}\n" +
           "workload: {path: [cold_start, {requests: {every: 1s, count: 1}}]}\n" + extra;
}

// Part 0 of cell `cell` in force.
mdl_generation in_force(const Loaded &l, unsigned cell)
{
    const mdl_cell &c = l.s.cells[cell];
    mdl_generation g;
    mdl_generation_in_force(&c.candidate->parts[0], &c.policy, c.device->os == MDL_OS_IOS, &g);
    return g;
}

// y with `from` replaced by `to`, once.
std::string swap(std::string y, const std::string &from, const std::string &to)
{
    size_t at = y.find(from);
    REQUIRE(at != std::string::npos);
    return y.replace(at, from.size(), to);
}

std::string load_error(const std::string &yaml)
{
    scn_scenario s{};
    sim_error err;
    sim_error_clear(&err);
    int rc = scn_scenario_parse(yaml.data(), yaml.size(), "gpu.yaml", &s, &err);
    if (rc == SIM_OK) {
        scn_scenario_release(&s);
        return "";
    }
    return err.msg;
}

} // namespace

TEST_CASE("gpu layers: which layers n_gpu_layers puts on the GPU, in each order", "[generation]")
{
    // llama.cpp's load_tensors: i_gpu_start = n_layer - k before 57c1e0564
    // (the last k repeating layers; the output layer only at k = n + 1),
    // n_layer + 1 - k since (the output layer first, then the last k - 1).
    mdl_gen_layers l{};
    l.count = 16;
    uint32_t r = 99;
    int o = 9;
    const struct {
        int first;
        uint32_t k, r;
        int o;
    } cases[] = {{0, 0, 0, 0},  {0, 1, 1, 0},  {0, 16, 16, 0}, {0, 17, 16, 1},
                 {0, 99, 16, 1}, {1, 0, 0, 0},  {1, 1, 0, 1},   {1, 8, 7, 1},
                 {1, 17, 16, 1}, {1, 99, 16, 1}};
    for (const auto &c : cases) {
        l.output_first = c.first;
        mdl_gen_layers_on_gpu(&l, c.k, &r, &o);
        INFO("output_first " << c.first << ", k " << c.k);
        CHECK(r == c.r);
        CHECK(o == c.o);
    }
}

TEST_CASE("gpu layers: the weights the GPU takes leave the CPU's kinds, and its KV share",
          "[generation]")
{
    Loaded l(plan("android", "[native, java, gpu]", "mmap", "output_last",
                  "policies: {gpu_layers: [0, 8, all]}\n"));
    REQUIRE(l.s.ncells == 3);
    // 0: as given.
    mdl_generation g = in_force(l, 0);
    CHECK(g.gpu == 0);
    CHECK(g.mapped == 226 * MIB);
    CHECK(g.repacked == 504 * MIB);
    CHECK(g.kv_gpu_layers == 0);
    CHECK(g.compute_gpu == 0);
    CHECK(mdl_generation_file_pages(&l.s.cells[0].candidate->parts[0], &g) == 730 * MIB);
    // 8, output last: the last 8 repeating layers, 8 x 32 = 256 MiB, from the
    // repacked copy (504 - 256 = 248); the KV of 8 of 16 layers (half); the
    // output layer stays on the CPU, and with it the logits and the compute
    // buffer; the mapping is the whole file (730 MiB).
    g = in_force(l, 1);
    CHECK(g.gpu == 256 * MIB);
    CHECK(g.on_gpu == 256 * MIB);
    CHECK(g.repacked == 248 * MIB);
    CHECK(g.mapped == 226 * MIB);
    CHECK(g.kv_gpu_layers == 8);
    CHECK(g.kv_layers == 16);
    CHECK(mdl_kv_gpu_bytes(&g, 128 * MIB) == 64 * MIB);
    CHECK(g.compute_gpu == 0);
    CHECK(mdl_generation_file_pages(&l.s.cells[1].candidate->parts[0], &g) == 730 * MIB);
    // all (17): 16 x 32 = 512 MiB, 504 from the repacked copy and 8 from the
    // mapped (226 - 8 = 218); the output layer's 205 from the mapped (218 -
    // 205 = 13); gpu 717 MiB; all the KV and the compute buffer; the file
    // still mapped whole (oomsim does not place tensors in the file).
    g = in_force(l, 2);
    CHECK(g.gpu == 717 * MIB);
    CHECK(g.repacked == 0);
    CHECK(g.mapped == 13 * MIB);
    CHECK(mdl_kv_gpu_bytes(&g, 128 * MIB) == 128 * MIB);
    CHECK(g.compute_gpu == 1);
    CHECK(mdl_generation_file_pages(&l.s.cells[2].candidate->parts[0], &g) == 730 * MIB);
}

TEST_CASE("gpu layers: the output layer first, as llama.cpp places it since 57c1e0564",
          "[generation]")
{
    // 1: the output layer alone, its 205 MiB from the mapped (226 - 205 =
    // 21); no repeating layer, so no KV on the GPU, but the compute buffer
    // is the GPU's.  8: the output and 7 layers, 205 + 224 = 429 MiB; the
    // 224 from the repacked (504 - 224 = 280); KV 7/16 of 128 MiB = 56 MiB;
    // the compute buffer the GPU's, with the output layer.
    Loaded l(plan("android", "[native, java, gpu]", "mmap", "output_first",
                  "policies: {gpu_layers: [1, 8]}\n"));
    mdl_generation g = in_force(l, 0);
    CHECK(g.gpu == 205 * MIB);
    CHECK(g.mapped == 21 * MIB);
    CHECK(g.repacked == 504 * MIB);
    CHECK(g.kv_gpu_layers == 0);
    CHECK(g.compute_gpu == 1);
    g = in_force(l, 1);
    CHECK(g.gpu == 429 * MIB);
    CHECK(g.repacked == 280 * MIB);
    CHECK(g.mapped == 21 * MIB);
    CHECK(mdl_kv_gpu_bytes(&g, 128 * MIB) == 56 * MIB);
    CHECK(g.compute_gpu == 1);
}

TEST_CASE("gpu layers: on an iPhone with mmap the GPU's weights stay the file's pages",
          "[generation]")
{
    // Metal wraps the mapping (buffer_from_host_ptr): 8 layers, 256 MiB the
    // GPU reads, stay mapped and are read at every token: mapped 226 + 256 =
    // 482, gpu 0; the repacked copy loses them as on Android (248); the KV
    // still splits (Metal buffers), and nothing is unmapped.  Without mmap
    // (weights: repacked) they are copied: gpu 256 MiB, the CPU's copy the
    // rest, 730 - 256 = 474 MiB.
    Loaded l(plan("ios", "[native, gpu]", "mmap", "output_last",
                  "policies: {gpu_layers: [8], weights: [candidate, repacked]}\n"));
    REQUIRE(l.s.ncells == 2);
    mdl_generation g = in_force(l, 0);
    CHECK(g.gpu == 0);
    CHECK(g.on_gpu == 256 * MIB);
    CHECK(g.mapped == 482 * MIB);
    CHECK(g.repacked == 248 * MIB);
    CHECK(mdl_kv_gpu_bytes(&g, 128 * MIB) == 64 * MIB);
    CHECK(mdl_generation_file_pages(&l.s.cells[0].candidate->parts[0], &g) == 730 * MIB);
    g = in_force(l, 1);
    CHECK(g.gpu == 256 * MIB);
    CHECK(g.repacked == 474 * MIB);
    CHECK(g.mapped == 0);
    CHECK(mdl_generation_file_pages(&l.s.cells[1].candidate->parts[0], &g) == 0);
}

TEST_CASE("gpu layers: a run charges each share where the platform counts it", "[generation]")
{
    // A part read into memory (load mode copy): its copy holds what the CPU
    // keeps, the file less the GPU's layers (the output layer untied here).
    // The KV reserved, 128 MiB; compute 10 MiB with the output layer.
    // Counting native only (the peak is the counted peak):
    //   0:   730 copy + 128 KV + 10 compute = 868 MiB;
    //   8:   730 - 256 = 474 copy + 64 KV + 10 compute = 548 MiB;
    //   all: 730 - 717 = 13 copy, no KV, no compute: 13 MiB.
    // Counting gpu only: 0; 256 + 64 = 320; 717 + 128 + 10 = 855 MiB.
    const char *p = "policies: {gpu_layers: [0, 8, all]}\n";
    Loaded native(plan("ios", "[native]", "copy", "output_last", p));
    Loaded gpu(plan("ios", "[gpu]", "copy", "output_last", p));
    const int64_t want_native[3] = {868, 548, 13}, want_gpu[3] = {0, 320, 855};
    for (unsigned c = 0; c < 3; c++) {
        INFO("cell " << c);
        mdl_rep rn = native.run(c), rg = gpu.run(c);
        CHECK(rn.deaths_total == 0);
        CHECK(rn.peak == want_native[c] * MIB);
        CHECK(rg.peak == want_gpu[c] * MIB);
    }
    // A KV written as tokens come (touched): the 1001 tokens of the request,
    // 1001 x 32 KiB = 31.28 MiB, half of them the GPU's at 8 layers:
    // 1001 x 16 KiB = 16,016 KiB beside the 256 MiB of layers.
    Loaded t(plan("ios", "[gpu]", "copy", "output_last", p, "touched"));
    CHECK(t.run(1).peak == 256 * MIB + 1001 * 16 * 1024);
    // Tied: the output layer the GPU gets is the embedding's copy, and the
    // CPU's copy keeps the embedding: at all, 730 - 512 = 218 MiB native.
    std::string y = plan("ios", "[native]", "copy", "output_last", p);
    y.replace(y.find("output: 205MiB}"), 15, "output: 205MiB, tied: true}");
    Loaded tied(y);
    CHECK(tied.run(2).peak == 218 * MIB);
    CHECK(tied.run(1).peak == 548 * MIB);
}

TEST_CASE("gpu layers: the GPU's weights read at their own speed", "[generation]")
{
    // weights_speed.gpu 2: at 8 layers the bytes read take, per byte,
    // (226 mapped + 248 repacked + 256 / 2) / 730 = 602 / 730 of the time
    // as given (every byte at 1): 1000 x 1 ms + 10 ms = 1010 ms becomes
    // 1010 x 602 / 730 = 832.9315 ms.
    std::string y = plan("android", "[native, java, gpu]", "mmap", "output_last",
                         "policies: {gpu_layers: [0, 8]}\n");
    y.replace(y.find("          layers:"), 0, "          weights_speed: {gpu: 2}\n");
    Loaded l(y);
    CHECK(in_force(l, 1).time_scale == Approx(602.0 / 730.0).epsilon(1e-12));
    CHECK(in_force(l, 0).time_scale == 1.0);
}

TEST_CASE("gpu layers: tied, `weights: repacked` keeps the embedding, and layers come back",
          "[generation]")
{
    // Tied, all on the GPU, --no-mmap (weights: repacked): the CPU's copy
    // holds the embedding and what is left of the layers, 730 - 16 x 32 =
    // 218 MiB, though the GPU reads the output's copy; what the CPU reads
    // at every token under `weights: mapped` is 730 - 717 = 13 MiB.
    std::string y = plan("android", "[native, java, gpu]", "mmap", "output_last",
                         "policies: {gpu_layers: [all], weights: [repacked, mapped]}\n");
    y.replace(y.find("output: 205MiB}"), 15, "output: 205MiB, tied: true}");
    Loaded l(y);
    mdl_generation g = in_force(l, 0);
    CHECK(g.repacked == 218 * MIB);
    CHECK(g.gpu == 717 * MIB);
    g = in_force(l, 1);
    CHECK(g.mapped == 13 * MIB);
    CHECK(g.repacked == 0);
    // A candidate measured with 8 layers on the GPU (weights.gpu 256 MiB,
    // 248 repacked) brought back to 0: the 256 MiB return to the repacked
    // copy, 504 MiB; the GPU holds nothing, the KV is all native.
    std::string b = plan("android", "[native, java, gpu]", "mmap", "output_last",
                         "policies: {gpu_layers: [0]}\n");
    b.replace(b.find("weights: {mapped: 226MiB, repacked: 504MiB}"), 43,
              "weights: {mapped: 226MiB, repacked: 248MiB, gpu: 256MiB}");
    b.replace(b.find("offloaded: 0"), 12, "offloaded: 8");
    Loaded back(b);
    g = in_force(back, 0);
    CHECK(g.repacked == 504 * MIB);
    CHECK(g.gpu == 0);
    CHECK(g.kv_gpu_layers == 0);
    CHECK(g.mapped == 226 * MIB);
}

TEST_CASE("gpu layers: a part without layers runs as before them", "[generation]")
{
    // weights.gpu 300 MiB with no layers: the KV and compute in gpu, and
    // the weights' speed over the CPU's kinds only.  226 mapped, 204
    // repacked at speed 2: as given, per byte (226 + 204 / 2) / 430 =
    // 328 / 430; `weights: repacked` holds the 730 - 300 = 430 CPU bytes
    // repacked: 215 / 430; the factor 215 / 328.
    std::string y = plan("android", "[native, java, gpu]", "mmap", "output_last",
                         "policies: {weights: [repacked]}\n");
    y.replace(y.find("weights: {mapped: 226MiB, repacked: 504MiB}"), 43,
              "weights: {mapped: 226MiB, repacked: 204MiB, gpu: 300MiB}\n"
              "          weights_speed: {repacked: 2}");
    y.erase(y.find("          layers:"), y.find("output: 205MiB}\n") + 16 - y.find("          layers:"));
    Loaded l(y);
    mdl_generation g = in_force(l, 0);
    CHECK(g.gpu == 300 * MIB);
    CHECK(g.repacked == 430 * MIB);
    CHECK(g.kv_gpu_layers == g.kv_layers);
    CHECK(g.compute_gpu == 1);
    CHECK(g.time_scale == Approx(215.0 / 328.0).epsilon(1e-12));
}

TEST_CASE("gpu layers: the keys and the axis are checked", "[generation][scenario]")
{
    std::string base = plan("android", "[native, java, gpu]", "mmap", "output_last", "");
    auto with = [&](const char *from, const char *to) {
        std::string y = base;
        size_t at = y.find(from);
        REQUIRE(at != std::string::npos);
        y.replace(at, std::strlen(from), to);
        return y;
    };
    const char *layers = "layers: {count: 16, offloaded: 0, order: output_last, bytes: 32MiB, "
                         "output: 205MiB}";
    struct Case {
        std::string yaml;
        const char *msg;
    } cases[] = {
        {with(layers, "layers: {offloaded: 0}"), "count"},
        {with(layers, "layers: {count: 16, offloaded: 18}"), "18"},
        {with(layers, "layers: {count: 16, order: middle}"), "middle"},
        {with(layers, "layers: {count: 16, bytes: 46MiB}"), "exceed the part's file"},
        {with(layers, "layers: {count: 16, tied: maybe}"), "maybe"},
        {swap(with("weights: {mapped: 226MiB, repacked: 504MiB}",
                   "weights: {mapped: 226MiB, repacked: 504MiB, gpu: 12MiB}"),
              "offloaded: 0", "offloaded: 8"),
         "is less than the 8 repeating layers"},
        {with(layers, "layers: {count: 16}") + "policies: {gpu_layers: [-1]}\n", "`all`"},
        {with(layers, "layers: {count: 16, offloaded: 4}"), "give weights.gpu"},
        {with("weights: {mapped: 226MiB, repacked: 504MiB}",
              "weights: {mapped: 226MiB, repacked: 504MiB, gpu: 100MiB}"),
         "layers.offloaded is 0"},
        {with(layers, "layers: {count: 16}") + "policies: {gpu_layers: [4, x]}\n", "x"},
    };
    for (const Case &c : cases) {
        std::string msg = load_error(c.yaml);
        INFO(c.yaml << " -> " << msg);
        CHECK(msg.find("gpu.yaml:") == 0);
        CHECK(msg.find(c.msg) != std::string::npos);
    }
    // A scenario none of whose candidates gives layers refuses the axis.
    std::string none = with(layers, "kv_type: f16") + "policies: {gpu_layers: [4]}\n";
    CHECK(load_error(none).find("gives its generation's layers") != std::string::npos);
    // A layer moved whose size is not given: refused as the cells are
    // checked, naming the candidate and what is missing.
    std::string msg = load_error(with(layers, "layers: {count: 16, output: 205MiB}") +
                                 "policies: {gpu_layers: [0, 4]}\n");
    CHECK(msg.find("gpu.yaml:") == 0);
    CHECK(msg.find("candidate llm, part m: gpu_layers 4") != std::string::npos);
    CHECK(msg.find("no layers.bytes") != std::string::npos);
    // ... and the output layer's the same way; 0 and as given move nothing.
    msg = load_error(with(layers, "layers: {count: 16, bytes: 32MiB}") +
                     "policies: {gpu_layers: [all]}\n");
    CHECK(msg.find("no layers.output") != std::string::npos);
    CHECK(load_error(with(layers, "layers: {count: 16}") + "policies: {gpu_layers: [0]}\n") ==
          "");
}
