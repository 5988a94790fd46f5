// test_imports.cpp - `oomsim import KIND` (docs/imports.md): each format
// from fixtures written from its documented layout (tests/data/imports/),
// the YAML it gives (every value, its comment, what the loader makes of
// it), a run on it, and the refusals naming the line.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "results/results.h"
#include "scenarios/scenarios.h"
#include "shim/shim.hpp"
#include "shim/world.hpp"

#include "shim/imports.hpp"

using namespace imports;


TEST_CASE("import benchmark-model: a log's stages, memory and times, each with its line",
          "[imports]")
{
    Imported r = import(SCN_IMPORT_BENCHMARK_MODEL, "bench.log",
                        fixture("benchmark_model_xnnpack.log"), "detector-v1", "detector");
    INFO(r.msg);
    REQUIRE(r.rc == SIM_OK);
    // the file: 12.5829 MB of 10^6 bytes
    CHECK(value_of(r.yaml, "file:") == "file: 12288KiB");
    CHECK(r.yaml.find("bench.log:11: the model file size, 12.5829 MB") != std::string::npos);
    // Init 48225 us is prepare's time
    CHECK(value_of(r.yaml, "      time: 48225us") == "      time: 48225us");
    // init = 31.4102 MiB less the 12 MiB file stays: 19.41 MiB = 19877 KiB
    CHECK(value_of(r.yaml, "resident:") == "resident: {native: 19877KiB}");
    // the runs: their median and p95 as printed (line 17, the benchmark's)
    CHECK(value_of(r.yaml, "time: {dist") ==
          "time: {dist: lognormal, median: 26396us, p95: 29120us}");
    CHECK(r.yaml.find("bench.log:17: the benchmark runs") != std::string::npos);
    // overall - init = 13.5156 MiB of working set
    CHECK(value_of(r.yaml, "working_set:") == "working_set: {native: 13840KiB}");
    Cand c(r.yaml);
    INFO(c.msg);
    REQUIRE(c.rc == SIM_OK);
    CHECK(std::string(c.c.id) == "detector-v1");
    REQUIRE(c.c.nparts == 1);
    CHECK(std::string(c.c.parts[0].name) == "detector");
    CHECK(c.c.parts[0].file == 12288 * 1024);
    CHECK(std::string(c.c.delegate) == "none"); // XNNPACK: inside the interpreter
}

TEST_CASE("import benchmark-model: the arenas, a logcat log, a mean and sd only", "[imports]")
{
    // the arenas of --print_preinvoke_state, in a logcat capture of a GPU run
    std::string log =
        "07-14 13:14:51.001 22838 22838 I tflite  : Created TensorFlow Lite delegate for GPU.\n"
        "07-14 13:14:51.002 22838 22838 I tflite  : kTfLiteArenaRw Info: \n"
        "07-14 13:14:51.003 22838 22838 I tflite  : Tensor 30 has the max size 17424 bytes "
        "(0.017 MB).\n"
        "07-14 13:14:51.004 22838 22838 I tflite  : This memory arena is estimated as[0x44dc50, "
        "0x447b00), taking 2097152 bytes (2.000 MB).\n"
        "07-14 13:14:51.005 22838 22838 I tflite  : kTfLiteArenaRwPersistent Info: not holding "
        "any allocation.\n"
        "07-14 13:14:51.006 22838 22838 I tflite  : kTfLiteMmapRo Info: \n"
        "07-14 13:14:51.007 22838 22838 I tflite  : This memory arena is estimated as[0x9000, "
        "0x1000), taking 4.0 MB.\n"
        "07-14 13:14:51.008 22838 22838 I tflite  : kTfLiteArenaRw Info: \n"
        "07-14 13:14:51.009 22838 22838 I tflite  : This memory arena is estimated as[0x1, "
        "0x0), taking 1048576 bytes (1.000 MB).\n"
        "07-14 13:14:52.190 22838 22838 I tflite  : The input model file size (MB): 4.19\n"
        "07-14 13:14:52.859 22838 22838 I tflite  : count=50 first=10000 curr=9000 min=8000 "
        "max=12000 avg=10000 std=2000\n"
        "07-14 13:14:56.520 22838 22838 I tflite  : Inference timings in us: Init: 1.4515e+06, "
        "First inference: 12000, Warmup (avg): 11000, Inference (avg): 10000\n";
    Imported r = import(SCN_IMPORT_BENCHMARK_MODEL, "gpu.log", log);
    INFO(r.msg);
    REQUIRE(r.rc == SIM_OK);
    // the read-write arenas of two subgraphs (2 + 1 MiB), the mapped 4.0 MB arena
    CHECK(value_of(r.yaml, "working_set:") == "working_set: {native: 3072KiB}");
    CHECK(value_of(r.yaml, "file:") == "file: 4096KiB");
    CHECK(r.yaml.find("gpu.log:9: the read-write arena") != std::string::npos);
    // no persistent arena and no footprint line: no resident
    CHECK(r.yaml.find("resident:") == std::string::npos);
    // Init in C++'s exponent form
    CHECK(value_of(r.yaml, "      time: 1451500us") == "      time: 1451500us");
    // a mean and sd only: the lognormal with that mean and variance, said
    // so; cv 0.2: median 10000 / sqrt(1.04) = 9806, p95 = median exp(1.6449
    // sqrt(ln 1.04)) = 9805.8 x 1.38512 = 13582
    CHECK(value_of(r.yaml, "time: {dist") ==
          "time: {dist: lognormal, median: 9806us, p95: 13582us}");
    CHECK(r.yaml.find("assumed lognormal") != std::string::npos);
    // the GPU delegate: a delegate stage inside Init
    Cand c(r.yaml);
    INFO(c.msg);
    REQUIRE(c.rc == SIM_OK);
    CHECK(std::string(c.c.delegate) == "gpu");
    CHECK(c.c.parts[0].has_delegate_prepare);
}

TEST_CASE("import benchmark-model: run on a phone with the same numbers, the peak is the log's",
          "[imports]")
{
    // The round trip: the candidate, the tool's own memory (peak - overall =
    // 49.2617 - 44.9258 MiB) as the app's baseline, a phone that counts
    // every category and kills nothing; the predicted peak is within 5 % of
    // the log's peak footprint.
    Imported r = import(SCN_IMPORT_BENCHMARK_MODEL, "bench.log",
                        fixture("benchmark_model_xnnpack.log"), "detector-v1", "detector");
    REQUIRE(r.rc == SIM_OK);
    shim::TempDir dir;
    dir.write("detector.yaml", r.yaml);
    std::string plan = dir.write("plan.yaml", R"(name: round-trip
horizon: 30s
replications: 1
app: {baseline: {native: 4440KiB}}
devices:
  - name: roomy
    os: android
    ram: 8GiB
    system: 1GiB
    kill: {rule: lmk, minfree: [{adj: 0, free: 16MiB}]}
    counts: [java, native, gpu, file]
candidates: [detector.yaml]
workload:
  path: [cold_start, {requests: {every: 1s, count: 5}}]
)");
    scn_scenario s;
    sim_error err;
    sim_error_clear(&err);
    REQUIRE(scn_scenario_load(plan.c_str(), &s, &err) == SIM_OK);
    mdl_rep rep = shim::run_replication(s.cells[0]);
    scn_scenario_release(&s);
    double peak_mib = double(rep.peak) / double(MiB);
    INFO("predicted " << peak_mib << " MiB against the log's 49.2617");
    CHECK(std::fabs(peak_mib - 49.2617) / 49.2617 < 0.05);
    CHECK(rep.deaths_total == 0);
}

TEST_CASE("import meminfo: both App Summary layouts into the app's baseline", "[imports]")
{
    Imported a = import(SCN_IMPORT_MEMINFO, "m13.txt", fixture("meminfo_android13.txt"));
    INFO(a.msg);
    REQUIRE(a.rc == SIM_OK);
    // the swapped-out memory is the app's own: TOTAL SWAP PSS 552 KB, of which
    // the Dalvik Heap row's SwapPss 40 KB is the Java heap's
    CHECK(value_of(a.yaml, "java:") == "java: 20556KiB"); // 20516 + 40
    CHECK(value_of(a.yaml, "native:") == "native: 531712KiB"); // 412180 + 1604 + 117416 + 512
    CHECK(a.yaml.find("TOTAL SWAP PSS 552 KB: the app's memory swapped out") != std::string::npos);
    CHECK(value_of(a.yaml, "gpu:") == "gpu: 69332KiB");
    CHECK(value_of(a.yaml, "file:") == "file: 11032KiB");
    CHECK(a.yaml.find("m13.txt:30: Java Heap") != std::string::npos);
    CHECK(a.yaml.find("System 6444 KB left out") != std::string::npos);
    CHECK(a.yaml.find("TOTAL RSS 735288 KB") != std::string::npos);
    Imported b = import(SCN_IMPORT_MEMINFO, "m9.txt", fixture("meminfo_android9.txt"));
    REQUIRE(b.rc == SIM_OK);
    CHECK(value_of(b.yaml, "native:") == "native: 62148KiB"); // 60408 + 604 + 1136
    CHECK(b.yaml.find("the layout before Android 10") != std::string::npos);
    // both check as a scenario's app block, and run
    for (const std::string &y : {a.yaml, b.yaml}) {
        sim_error err;
        sim_error_clear(&err);
        CHECK(scn_kind_of_text(y.data(), y.size()) == SCN_KIND_FRAGMENT);
        CHECK(scn_fragment_check(y.data(), y.size(), "app.yaml", &err) == SIM_OK);
    }
    shim::Loaded l(b.yaml + "name: with-baseline\nhorizon: 10s\nreplications: 1\n"
                            "devices: [android-4g]\ncandidates: [classifier-v1]\n"
                            "workload: {path: [cold_start]}\n");
    mdl_rep rep = l.run(0);
    // the baseline is held from the start: at least its counted part
    CHECK(rep.peak >= (14516 + 62148 + 22852) * 1024);
}

TEST_CASE("import meminfo: System holds the app's own swap, a swap the dump does not give is "
          "not 0", "[imports]")
{
    // Debug.MemoryInfo: System = TOTAL PSS less the private pages, TOTAL PSS
    // with the swapped-out PSS in it: 6444 KB holds the app's 552 KB
    Imported a = import(SCN_IMPORT_MEMINFO, "m13.txt", fixture("meminfo_android13.txt"));
    REQUIRE(a.rc == SIM_OK);
    CHECK(a.yaml.find("System 6444 KB left out: TOTAL PSS less the app's private pages, so the "
                      "pages it shares (libraries, fonts, the zygote's heap) and its own "
                      "swapped-out 552 KB (TOTAL SWAP PSS, counted above); the shared part, 5892 "
                      "KB, is not the app's own.") != std::string::npos);
    CHECK(a.yaml.find("not the app's own.\n") != std::string::npos);
    // no TOTAL SWAP PSS: not known, never written as 0
    std::string text = fixture("meminfo_android13.txt");
    std::string no_total = text;
    size_t at = no_total.find("TOTAL SWAP PSS:");
    REQUIRE(at != std::string::npos);
    no_total.erase(at, no_total.find('\n', at) - at);
    Imported b = import(SCN_IMPORT_MEMINFO, "m.txt", no_total);
    INFO(b.msg);
    REQUIRE(b.rc == SIM_OK);
    CHECK(b.yaml.find("what the app had swapped out is not known (not taken as 0 KB)") !=
          std::string::npos);
    CHECK(b.yaml.find("swapped 0") == std::string::npos);
    CHECK(b.yaml.find("swapped-out PSS, which this dump does not give") != std::string::npos);
    CHECK(value_of(b.yaml, "java:") == "java: 20516KiB");
    // TOTAL SWAP PSS without the per-heap SwapPss column: all of it in
    // native, the Java heap's share said to be unknown, not "0 KB"
    std::string no_column = text;
    at = no_column.find("SwapPss");
    REQUIRE(at != std::string::npos);
    no_column.replace(at, 7, "Dirty  ");
    Imported c = import(SCN_IMPORT_MEMINFO, "m.txt", no_column);
    REQUIRE(c.rc == SIM_OK);
    CHECK(c.yaml.find("counted below with the native memory, as the dump has no Dalvik Heap "
                      "SwapPss (the Java heap's share is not known)") != std::string::npos);
    CHECK(c.yaml.find("0 KB of the Java heap's") == std::string::npos);
    CHECK(value_of(c.yaml, "java:") == "java: 20516KiB");
    CHECK(value_of(c.yaml, "native:") == "native: 531752KiB"); // 412180 + 1604 + 117416 + 552
}

TEST_CASE("import meminfo: the model's parts subtracted, rows missing, a wrong file",
          "[imports]")
{
    shim::Loaded l("name: c\nhorizon: 1s\nreplications: 1\ndevices: [android-4g]\n"
                   "candidates: [classifier-v1]\nworkload: {path: [cold_start]}\n");
    const mdl_candidate *c = l.s.cells[0].candidate;
    // classifier-v1: a 4 MiB mmapped file, prepare resident 3 MiB native,
    // no delegate stage (xnnpack: delegate_prepare resident 5 MiB native)
    Imported r = import(SCN_IMPORT_MEMINFO, "m13.txt", fixture("meminfo_android13.txt"),
                        nullptr, nullptr, c);
    INFO(r.msg);
    REQUIRE(r.rc == SIM_OK);
    CHECK(value_of(r.yaml, "file:") == "file: 6936KiB"); // 11032 - 4096
    CHECK(value_of(r.yaml, "native:") == "native: 523520KiB"); // 531712 - 8192
    std::string small = fixture("meminfo_android9.txt");
    // rows missing: no Graphics, no Code
    std::string cut;
    for (size_t at = 0, nl; at < small.size(); at = nl + 1) {
        nl = small.find('\n', at);
        std::string line = small.substr(at, nl - at);
        if (line.find("Graphics:") == std::string::npos && line.find("Code:") == std::string::npos)
            cut += line + "\n";
    }
    Imported m = import(SCN_IMPORT_MEMINFO, "cut.txt", cut, nullptr, nullptr, c);
    REQUIRE(m.rc == SIM_OK);
    CHECK(value_of(m.yaml, "gpu:") == "gpu: 0KiB");
    CHECK(value_of(m.yaml, "file:") == "file: 0KiB");
    // no Code row: the 4 MiB file comes out of native with the 8 MiB resident
    CHECK(value_of(m.yaml, "native:") == "native: 49860KiB"); // 62148 - 8192 - 4096
    // a wrong file: named, with its line
    Imported w = import(SCN_IMPORT_MEMINFO, "notes.txt", "hello\nworld\n");
    CHECK(w.rc == SIM_EINPUT);
    CHECK(w.msg == "notes.txt:1: not dumpsys meminfo output: no 'App Summary' in its 2 lines "
                   "(dumpsys meminfo PACKAGE prints one per process)");
    Imported x = import(SCN_IMPORT_MEMINFO, "x.txt",
                        " App Summary\n           Java Heap:     many\n");
    CHECK(x.rc == SIM_EINPUT);
    CHECK(x.msg == "x.txt:2: Java Heap: without a number");
}

TEST_CASE("import llama-cpp: buffers by backend, the KV cache, the compute buffers", "[imports]")
{
    Imported r = import(SCN_IMPORT_LLAMA_CPP, "ll.log", fixture("llama_cpp_android.log"),
                        "llama-1b");
    INFO(r.msg);
    REQUIRE(r.rc == SIM_OK);
    CHECK(value_of(r.yaml, "file:") == "file: 781118KiB"); // CPU_Mapped 762.81 MiB
    CHECK(value_of(r.yaml, "mode:") == "mode: mmap");
    CHECK(value_of(r.yaml, "      time: 1813180us") == "      time: 1813180us");
    // n_ctx 2048: the requests as tokens, the log's own
    CHECK(value_of(r.yaml, "context:") == "context: 2048");
    CHECK(value_of(r.yaml, "prompt_tokens:") == "prompt_tokens: 24");
    CHECK(value_of(r.yaml, "output_tokens:") == "output_tokens: 127");
    // the CPU's 32 MiB and the OpenCL0's 32 MiB of KV over 2048 tokens: 32 KiB each
    CHECK(value_of(r.yaml, "kv_per_token:") == "kv_per_token: 32768B");
    CHECK(value_of(r.yaml, "kv:") == "kv: reserved");
    // 417.37 ms / 24 tokens, 6026.70 ms / 127 runs
    CHECK(value_of(r.yaml, "prefill:") == "prefill: {per_token: 17390us}");
    CHECK(value_of(r.yaml, "decode:") == "decode: {per_token: 47454us}");
    // the 762.81 MiB of weights less the OpenCL0's 243.12: 519.69 MiB read from the mapping
    CHECK(value_of(r.yaml, "mapped:") == "mapped: 532163KiB");
    CHECK(value_of(r.yaml, "gpu:") == "gpu: 248955KiB");
    // 254.50 + 12.01 MiB of compute and the 0.49 MiB output buffer
    CHECK(value_of(r.yaml, "compute:") == "compute: 273408KiB");
    Cand c(r.yaml);
    INFO(c.msg);
    REQUIRE(c.rc == SIM_OK);
    CHECK(std::string(c.c.delegate) == "gpu");
    CHECK(c.c.parts[0].load_mode == MDL_LOAD_MMAP);
    CHECK(c.c.parts[0].has_generation);
    // the memory breakdown table alone: no n_ctx, so one request as the log ran it
    std::string table;
    std::string all = fixture("llama_cpp_android.log");
    for (size_t at = 0, nl; at < all.size(); at = nl + 1) {
        nl = all.find('\n', at);
        std::string line = all.substr(at, nl - at);
        if (line.find("llama_memory_breakdown_print") != std::string::npos)
            table += line + "\n";
    }
    Imported t = import(SCN_IMPORT_LLAMA_CPP, "table.log", table);
    INFO(t.msg);
    REQUIRE(t.rc == SIM_OK);
    CHECK(value_of(t.yaml, "resident:") == "resident: {gpu: 248832KiB}");  // 243 MiB
    CHECK(value_of(t.yaml, "session:") == "session: {native: 32768KiB, gpu: 32768KiB}");
    CHECK(value_of(t.yaml, "file:") == "file: 781312KiB"); // the host's 763 MiB, copied
    // no timing line: the inference's time is left to fill in, and the loader names it
    CHECK(t.yaml.find("      # time: REQUIRED, not in the log (no prompt eval") != std::string::npos);
    Cand tc(t.yaml);
    CHECK(tc.rc == SIM_EINPUT);
    CHECK(t.yaml.find("      # time: REQUIRED, not in the log (no load time") != std::string::npos);
    CHECK(tc.msg.find("parts.model.load: missing required key \"time\"") != std::string::npos);
    Imported w = import(SCN_IMPORT_LLAMA_CPP, "x.log", "main: hello\n");
    CHECK(w.rc == SIM_EINPUT);
    CHECK(w.msg.rfind("x.log:1: not a llama.cpp log", 0) == 0);
    Imported n = import(SCN_IMPORT_LLAMA_CPP, "n.log",
                        "load_tensors:   CPU_Mapped model buffer size =   10.00 MiB\n"
                        "llama_context: n_ctx         = 0\n");
    CHECK(n.rc == SIM_EINPUT);
    CHECK(n.msg.rfind("n.log:2: n_ctx 0", 0) == 0);
}

TEST_CASE("import llama-cpp: a log without timings leaves the times per token REQUIRED",
          "[imports][generation]")
{
    // the 2025 log without its prompt eval and eval lines: the tokens stay
    // assumptions to replace, the times are never filled in, and the loader
    // refuses the candidate until they are given
    std::string all = shim::read_file(std::string(OOMSIM_SOURCE_DIR) +
                                      "/tests/data/imports/llama_cpp_android_2025.log");
    std::string log;
    for (size_t at = 0, nl; at < all.size(); at = nl + 1) {
        nl = all.find('\n', at);
        std::string line = all.substr(at, nl - at);
        if (line.find("eval time") == std::string::npos)
            log += line + "\n";
    }
    Imported t = import(SCN_IMPORT_LLAMA_CPP, "nt.log", log);
    INFO(t.msg << t.yaml);
    REQUIRE(t.rc == SIM_OK);
    CHECK(t.yaml.find("      prefill: {}  # per_token: REQUIRED, not in the log (no prompt eval "
                      "time line)") != std::string::npos);
    CHECK(t.yaml.find("      decode: {}  # per_token: REQUIRED, not in the log (no eval time "
                      "line)") != std::string::npos);
    CHECK(t.yaml.find("# No prompt eval or eval time line: the requests' times are left "
                      "REQUIRED") != std::string::npos);
    CHECK(t.yaml.find("1ms") == std::string::npos);
    CHECK(t.yaml.find("50ms") == std::string::npos);
    Cand c(t.yaml);
    CHECK(c.rc == SIM_EINPUT);
    CHECK(c.msg.find("generation.prefill: missing required key \"per_token\"") !=
          std::string::npos);
}

TEST_CASE("import llama-cpp: a 2025 log round-trips to a candidate whose peak is the log's "
          "buffers and the app's baseline",
          "[imports][generation]")
{
    // The project's own log in b6500's format (docs/imports/llama-cpp.md): a
    // 1.5B model, 14 of its 28 layers on the OpenCL backend, the rest
    // repacked for the CPU, two KV buffers, the timings.  What the app
    // holds beside the mapped file: CPU_REPACK 351.42 + OpenCL0 351.70 MiB
    // of weights, KV 56 + 56 MiB (reserved: llama.cpp clears it at its
    // creation), compute 298.75 + 11.02 MiB, output 0.58 MiB: 1125.47 MiB;
    // with a 150 MiB baseline, 1275.47 MiB.  The candidate imported runs one
    // request of the log's tokens on a phone that counts native and gpu
    // memory; its peak must be within 5 % of that sum.
    shim::TempDir dir;
    std::string cand = dir.file("qwen.yaml");
    auto r = shim::run({OOMSIM_BIN, "import", "llama-cpp",
                        std::string(OOMSIM_SOURCE_DIR) +
                            "/tests/data/imports/llama_cpp_android_2025.log",
                        "--id", "qwen", "-o", cand});
    INFO(r.err);
    REQUIRE(r.status == 0);
    std::string yaml = shim::read_file(cand);
    CHECK(value_of(yaml, "repacked:") == "repacked: 359855KiB");  // 351.42 MiB
    CHECK(value_of(yaml, "kv_per_token:") == "kv_per_token: 28672B"); // 112 MiB / 4096
    // 885.97 MiB of weights less 351.42 repacked and 351.70 uploaded: 182.85 MiB read from
    // the mapping at every token (the embedding, which the output reuses, and the norms)
    CHECK(value_of(yaml, "mapped:") == "mapped: 187239KiB");
    CHECK(value_of(yaml, "prefill:") == "prefill: {per_token: 7200us}");
    CHECK(value_of(yaml, "decode:") == "decode: {per_token: 50000us}");
    std::string plan =
        "name: rt\nhorizon: 2min\nreplications: 1\n"
        "devices:\n  - {name: phone, os: android, ram: 8GiB, system: 1GiB, cached_apps: 0, "
        "cached_app_size: 1MiB,\n     kill: {rule: lmk, minfree: [{adj: 0, free: 1MiB}]}, "
        "counts: [native, java, gpu], delegates: {gpu: {fail: 0, crash: 0}}}\n"
        "candidates: [qwen.yaml]\napp: {baseline: {native: 150MiB}}\n"
        "workload:\n  path: [cold_start, {requests: {every: 5s, count: 1}}]\n";
    auto run = shim::run({OOMSIM_BIN, "run", dir.write("rt.yaml", plan), "--format", "json"});
    INFO(run.err);
    REQUIRE(run.status == 0);
    size_t at = run.out.find("\"app_bytes\"");
    REQUIRE(at != std::string::npos);
    size_t p50 = run.out.find("\"p50\": ", at);
    REQUIRE(p50 != std::string::npos);
    double peak = std::stod(run.out.substr(p50 + 7));
    double want = (351.42 + 351.70 + 56 + 56 + 298.75 + 11.02 + 0.58 + 150) * 1048576.0;
    INFO("peak " << peak / 1048576.0 << " MiB, the log's " << want / 1048576.0 << " MiB");
    CHECK(std::fabs(peak - want) <= 0.05 * want);
}

TEST_CASE("import onnxruntime: a profile's load, initialisation and runs", "[imports]")
{
    Imported r = import(SCN_IMPORT_ONNXRUNTIME, "p.json", fixture("onnxruntime_profile.json"));
    INFO(r.msg);
    REQUIRE(r.rc == SIM_OK);
    CHECK(value_of(r.yaml, "      time: 21873us") == "      time: 21873us");
    CHECK(r.yaml.find("p.json: event 0: model_loading") != std::string::npos);
    CHECK(value_of(r.yaml, "      time: 118432us") == "      time: 118432us");
    // parameters 3456 + 4004000 bytes
    CHECK(value_of(r.yaml, "file:") == "file: 3914KiB");
    // outputs of one run: 3211264 * 2 + 802816 + 4000 = 7229344 bytes
    CHECK(value_of(r.yaml, "working_set:") == "working_set: {native: 7060KiB}");
    CHECK(r.yaml.find("delegate: nnapi") != std::string::npos);
    Cand c(r.yaml);
    INFO(c.msg);
    CHECK(c.rc == SIM_OK);
    Imported bad = import(SCN_IMPORT_ONNXRUNTIME, "b.json", "[\n{\"cat\": 1},\n oops\n]");
    CHECK(bad.rc == SIM_EINPUT);
    CHECK(bad.msg.rfind("b.json:3: not an ONNX Runtime profile: not JSON", 0) == 0);
    Imported other = import(SCN_IMPORT_ONNXRUNTIME, "o.json", "[{\"name\": \"x\"}]");
    CHECK(other.rc == SIM_EINPUT);
    CHECK(other.msg.rfind("o.json:1: not an ONNX Runtime profile: no model_loading", 0) == 0);
}

TEST_CASE("import: malformed lines are refused with their line", "[imports]")
{
    Imported a = import(SCN_IMPORT_BENCHMARK_MODEL, "a.log",
                        "INFO: STARTING!\nINFO: Inference timings in us: Init: abc\n");
    CHECK(a.rc == SIM_EINPUT);
    CHECK(a.msg.rfind("a.log:2: an 'Inference timings in us' line without", 0) == 0);
    Imported b = import(SCN_IMPORT_BENCHMARK_MODEL, "b.log", "just\nsome\ntext\n");
    CHECK(b.rc == SIM_EINPUT);
    CHECK(b.msg.rfind("b.log:1: not a benchmark_model log", 0) == 0);
    Imported c = import(SCN_IMPORT_BENCHMARK_MODEL, "c.log",
                        "Inference timings in us: Init: 1, First inference: 2, Warmup (avg): 3, "
                        "Inference (avg): 4\nMemory footprint delta from the start of the tool "
                        "(MB): init=x overall=2\n");
    CHECK(c.rc == SIM_EINPUT);
    CHECK(c.msg.rfind("c.log:2: a memory footprint line without", 0) == 0);
}

TEST_CASE("import benchmark-model: a time of -0 is 0, and the YAML loads", "[imports]")
{
    // fuzz_import_benchmark_model's finding (corpus regress-negative-zero):
    // "avg=-0" passed the "not negative" check and was written "-0us",
    // which the loader refuses
    Imported a = import(SCN_IMPORT_BENCHMARK_MODEL, "z.log",
                        "The input model file size (MB): 1.5\n"
                        "Inference timings in us: Init: 1400000, First inference: 1, Warmup "
                        "(avg): 2, Inference (avg): 10000\ncount=50 first=1 curr=1 min=1 "
                        "avg=-0 std=0\n");
    INFO(a.msg);
    REQUIRE(a.rc == SIM_OK);
    CHECK(a.yaml.find("-0") == std::string::npos);
    Cand c(a.yaml);
    INFO(c.msg);
    CHECK(c.rc == SIM_OK);
}

TEST_CASE("import onnxruntime: a provider's name with a newline stays in its comment, and "
          "the YAML loads", "[imports]")
{
    // fuzz_import_onnxruntime's finding (corpus regress-provider-newline):
    // the execution provider's name went into a YAML comment as it was, and
    // an escaped newline in it ended the comment
    Imported a = import(SCN_IMPORT_ONNXRUNTIME, "n.json",
                        "[{\"cat\": \"Session\", \"name\": \"model_run\", \"ts\": 0, "
                        "\"dur\": 100},\n{\"cat\": \"Node\", \"name\": \"c_kernel_time\", "
                        "\"ts\": 1, \"dur\": 5, \"args\": {\"provider\": \"Odd\\nEP\"}}]");
    INFO(a.msg);
    REQUIRE(a.rc == SIM_OK);
    CHECK(a.yaml.find("Odd?EP") != std::string::npos);
    CHECK(a.yaml.find("Odd\nEP") == std::string::npos);
    // the YAML reads whole: what fails is the file size the profile does not
    // give (left REQUIRED), not a broken comment
    Cand c(a.yaml);
    INFO(c.msg);
    CHECK(c.rc == SIM_EINPUT);
    CHECK(c.msg.find("missing required key \"file\"") != std::string::npos);
}

TEST_CASE("import: the command writes validating YAML, or nothing", "[imports]")
{
    shim::TempDir dir;
    std::string src = std::string(OOMSIM_SOURCE_DIR) + "/tests/data/imports/";
    struct Case {
        const char *kind, *file;
    } cases[] = {{"benchmark-model", "benchmark_model_xnnpack.log"},
                 {"meminfo", "meminfo_android13.txt"},
                 {"llama-cpp", "llama_cpp_android.log"},
                 {"onnxruntime", "onnxruntime_profile.json"},
                 {"metrickit", "metrickit_days.json"},
                 {"play-vitals", "play_vitals_lmk.json"}};
    for (const auto &c : cases) {
        INFO(c.kind);
        std::string out = dir.file(std::string(c.kind) + ".yaml");
        auto r = shim::run({OOMSIM_BIN, "import", c.kind, src + c.file, "-o", out});
        INFO(r.err);
        REQUIRE(r.status == 0);
        auto v = shim::run({OOMSIM_BIN, "validate", out});
        INFO(v.out << v.err);
        CHECK(v.status == 0);
        // and a run on it: the candidate on a phone, the block in a plan
        std::string yaml = shim::read_file(out);
        bool candidate = yaml.find("\nparts:\n") != std::string::npos;
        std::string base = std::string(c.kind) + "-run.yaml";
        std::string plan =
            std::string("name: on-it\nhorizon: 20s\nreplications: 2\ndevices: [android-8g]\n") +
            (candidate ? "candidates: [" + std::string(c.kind) + ".yaml]\n"
                       : yaml + "candidates: [classifier-v1]\n") +
            "workload:\n  path: [cold_start, {requests: {every: 5s, count: 2}}]\n";
        auto run = shim::run({OOMSIM_BIN, "run", dir.write(base, plan), "-r", "2"});
        INFO(run.err);
        CHECK(run.status == 0);
        // the comments name the input's base name, never its path
        CHECK(shim::read_file(out).find(src) == std::string::npos);
    }
    auto bad = shim::run({OOMSIM_BIN, "import", "meminfo", src + "llama_cpp_android.log", "-o",
                          dir.file("bad.yaml")});
    CHECK(bad.status == 1);
    CHECK(bad.err.find("llama_cpp_android.log:1: not dumpsys meminfo output") !=
          std::string::npos);
    CHECK(!shim::exists(dir.file("bad.yaml")));
    auto minus = shim::run({OOMSIM_BIN, "import", "meminfo", src + "meminfo_android13.txt",
                            "--minus", "llm-1b"});
    CHECK(minus.status == 0);
    CHECK(minus.out.find("candidate llm-1b") != std::string::npos);
}


TEST_CASE("import metrickit: foreground memory-limit exits per device-day, localised sizes",
          "[imports]")
{
    std::string a = fixture("metrickit_day1.json"), b = fixture("metrickit_days.json");
    scn_import_input in[2] = {{"day1.json", a.data(), a.size()}, {"days.json", b.data(), b.size()}};
    scn_import_opts o = {nullptr, nullptr, nullptr, 0, nullptr, 0, 0};
    char *yaml = nullptr;
    sim_error err;
    sim_error_clear(&err);
    REQUIRE(scn_import(SCN_IMPORT_METRICKIT, in, 2, &o, &yaml, &err) == SIM_OK);
    std::string y(yaml);
    free(yaml);
    // iPhone13,2: two payloads, the second without the count (0 is left out)
    CHECK(y.find("    - device: iphone13-2") != std::string::npos);
    CHECK(value_of(y, "memory_exit_rate: 50") == "memory_exit_rate: 50%");
    CHECK(y.find("1 of 2 payloads") != std::string::npos);
    CHECK(value_of(y, "memory_exit_rate: 100") == "memory_exit_rate: 100%");
    // "1,106,818 kB" (the largest of "1.006.818 kB" and it) and the French
    // "812 345 Ko" with a narrow no-break space: decimal kilobytes
    CHECK(y.find("peak memory up to 1055.5 MiB") != std::string::npos);
    CHECK(y.find("peak memory up to 774.7 MiB, suspended memory up to 0.5 MiB") !=
          std::string::npos);
    // the exit counts by kind, foreground and background, summed over the payloads
    CHECK(y.find("# foreground exits over the payloads: NormalApp 8, MemoryResourceLimit 1") !=
          std::string::npos);
    CHECK(y.find("# background exits over the payloads: MemoryPressure 2") != std::string::npos);
    // the background rate: iPhone13,2's first payload had 2 memory-pressure
    // exits in the background, its second none; iPhone10,4's one payload none
    CHECK(y.find("background_rate: 50%  # 1 of 2 payloads had a background memory exit") !=
          std::string::npos);
    CHECK(y.find("background_rate: 0%  # 0 of 1 payload had a background memory exit") !=
          std::string::npos);
    CHECK(scn_fragment_check(y.data(), y.size(), "f.yaml", &err) == SIM_OK);
    // each localised form of one measurement (bytes / 2^20, one decimal)
    struct Form {
        const char *text, *mib;
    } forms[] = {{"1,106,818 kB", "1055.5"},       {"1.106.818 kB", "1055.5"},
                 {"1 106 818 kB", "1055.5"},       {"1\xc2\xa0" "106\xc2\xa0" "818 Ko", "1055.5"},
                 {"1'106'818 kB", "1055.5"},       {"1,5 MB", "1.4"},
                 {"1.5 MB", "1.4"},                {"2.5 GB", "2384.2"},
                 {"812 \xd0\x9a\xd0\x91", "0.8"},  {"1,106.5 kB", "1.1"},
                 {"1.106,5 kB", "1.1"},            {"999 bytes", "0.0"}};
    for (const auto &f : forms) {
        INFO(f.text);
        Imported r = import(SCN_IMPORT_METRICKIT, "p.json", payload(f.text));
        INFO(r.msg);
        REQUIRE(r.rc == SIM_OK);
        CHECK(peak_comment(r.yaml) == f.mib);
    }
    // refusals: not JSON (its line), not a payload, a size that is no size
    Imported x = import(SCN_IMPORT_METRICKIT, "x.json", "{\n\"a\": 1,\n}\n");
    CHECK(x.rc == SIM_EINPUT);
    CHECK(x.msg.rfind("x.json:3: not a MetricKit payload: not JSON", 0) == 0);
    Imported y2 = import(SCN_IMPORT_METRICKIT, "y.json", "[{\"foo\": 1}]");
    CHECK(y2.msg == "y.json:1: payload 0: not a MetricKit payload: no applicationExitMetrics "
                    "or memoryMetrics");
    Imported z = import(SCN_IMPORT_METRICKIT, "z.json", payload("lots"));
    CHECK(z.msg == "z.json:1: payload 0: peakMemoryUsage: a measurement that cannot be read");
}

TEST_CASE("import play-vitals: a RAM bucket past what the loader takes is refused, naming the "
          "row",
          "[imports]")
{
    // fuzz_import_play_vitals's finding (corpus regress-ram-past-loader): a
    // bucket of 4666096 MB was written as ram: 4666096MiB, past the
    // loader's 1 TiB
    std::string text = fixture("play_vitals_lmk.json");
    size_t at = text.find("\"4096\"");
    REQUIRE(at != std::string::npos);
    text.replace(at, 6, "\"4666096\"");
    Imported r = import(SCN_IMPORT_PLAY_VITALS, "v.json", text);
    CHECK(r.rc == SIM_EINPUT);
    CHECK(r.msg.find("v.json:1: row ") == 0);
    CHECK(r.msg.find("deviceRamBucket MB up to 1048576 (1 TiB)") != std::string::npos);
}

TEST_CASE("import play-vitals: the LMK rate by RAM bucket and model, weighted by users",
          "[imports]")
{
    Imported r = import(SCN_IMPORT_PLAY_VITALS, "v.json", fixture("play_vitals_lmk.json"));
    INFO(r.msg);
    REQUIRE(r.rc == SIM_OK);
    // 4096 MB: (0.012 x 20000 + 0.018 x 10000) / 30000 = 1.4 %, over 30000
    CHECK(r.yaml.find("    - ram: 4096MiB") != std::string::npos);
    CHECK(value_of(r.yaml, "lmk_rate: 1.4") == "lmk_rate: 1.4%");
    CHECK(value_of(r.yaml, "users: 30000") == "users: 30000");
    CHECK(value_of(r.yaml, "lmk_rate: 0.2") == "lmk_rate: 0.2%");
    CHECK(r.yaml.find("    - device: google-coral") != std::string::npos);
    sim_error err;
    sim_error_clear(&err);
    CHECK(scn_fragment_check(r.yaml.data(), r.yaml.size(), "f.yaml", &err) == SIM_OK);
    // the block in a plan: android-4g (4 GiB) takes the 4096 MB bucket
    std::string plan = r.yaml + "name: vitals\nhorizon: 20s\nreplications: 20\n"
                                "devices: [android-4g]\ncandidates: [classifier-v1]\n"
                                "workload: {path: [cold_start]}\n";
    shim::Loaded l(plan);
    REQUIRE(l.s.nfield == 3);
    std::vector<const char *> pj;
    res_plan p = shim::plan_of(l.s, 20, pj);
    res_result res;
    REQUIRE(res_run(&p, 1, nullptr, nullptr, &res, &err) == SIM_OK);
    res_field_cmp f;
    res_field_compare(&p, 0, &res.cells[0], &f);
    REQUIRE(f.f != nullptr);
    CHECK(f.visible.observed == Approx(0.014));
    CHECK(f.f->users == 30000);
    res_result_free(&res);
    // refusals
    Imported a = import(SCN_IMPORT_PLAY_VITALS, "a.json", "{\"rows\": [{\"metrics\": []}]}");
    CHECK(a.msg == "a.json:1: row 0: not an LMK-rate row: no userPerceivedLmkRate or "
                   "distinctUsers metric");
    Imported b = import(SCN_IMPORT_PLAY_VITALS, "b.json",
                        "[{\"dimensions\": [{\"dimension\": \"deviceRamBucket\", \"int64Value\": "
                        "\"4096\"}], \"metrics\": [{\"metric\": \"userPerceivedLmkRate\", "
                        "\"decimalValue\": {\"value\": \"1.4\"}}, {\"metric\": \"distinctUsers\", "
                        "\"decimalValue\": {\"value\": \"10\"}}]}]");
    CHECK(b.msg.rfind("b.json:1: row 0: userPerceivedLmkRate must be a fraction", 0) == 0);
    Imported c = import(SCN_IMPORT_PLAY_VITALS, "c.json", "[]");
    CHECK(c.msg == "c.json:1: no row in the input");
}
