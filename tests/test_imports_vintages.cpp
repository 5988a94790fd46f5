// test_imports_vintages.cpp - `oomsim import KIND` on logs of every vintage a
// team may hold (docs/imports/*.md "Which versions print which lines"): each
// form from a fixture of the project's own, every value it gives checked.
#include <catch2/catch.hpp>

#include <string>

#include "scenarios/scenarios.h"
#include "shim/imports.hpp"

using namespace imports;

TEST_CASE("import llama-cpp: the 2023 forms, mapped and copied", "[imports][vintages]")
{
    // 2023-04: "mem required = X MB (+ Y MB per state)", ggml ctx size in KB
    // (a few KB: the weights are mapped), the KV from "kv self size"
    Imported e = llama("llama_cpp_2023_early.log");
    values_are(e.yaml, {"file: 2377157KiB", // 2321.50 MB less 59.11 KB, in KiB
                        "mode: mmap", "prompt_tokens: 17", "output_tokens: 63", "context: 512",
                        "kv_per_token: 332800B", // 162.50 MiB / 512
                        "slots: 1", "prefill: {per_token: 130000us}",
                        "decode: {per_token: 200000us}", "mapped: 2377157KiB", "repacked: 0KiB",
                        "gpu: 0KiB", "compute: 0KiB"});
    CHECK(e.yaml.find("      time: 1430200us") != std::string::npos);
    CHECK(e.yaml.find("is a small part of 'mem required'") != std::string::npos);
    CHECK(e.yaml.find("before b1289 the scratch buffers") != std::string::npos);
    // b1289: "ggml ctx size" as large as "mem required": the weights were copied
    Imported c = llama("llama_cpp_2023_copy.log");
    values_are(c.yaml, {"file: 1142948KiB", // model size 1.09 GiB
                        "mode: copy", "prompt_tokens: 40", "output_tokens: 99", "context: 1024",
                        "kv_per_token: 22528B", "prefill: {per_token: 24000us}",
                        "decode: {per_token: 65000us}", "mapped: 0KiB",
                        "compute: 69510KiB"}); // 67.88 MiB
    CHECK(c.yaml.find("# llama_cpp_2023_copy.log:1: llama.cpp build 1289.") != std::string::npos);
    CHECK(c.yaml.find("holds most of 'mem required'") != std::string::npos);
    for (const Imported *r : {&e, &c}) {
        Cand k(r->yaml);
        INFO(k.msg);
        CHECK(k.rc == SIM_OK);
    }
}

TEST_CASE("import llama-cpp: 2024's CPU buffer (mapped, assumed), a GPU named buffer, Vulkan "
          "host buffers", "[imports][vintages]")
{
    Imported r = llama("llama_cpp_2024_vulkan.log");
    values_are(r.yaml, {"file: 962939KiB", // the CPU buffer's 940.37 MiB, taken as the mapping
                        "mode: mmap", "prompt_tokens: 200", "output_tokens: 127",
                        "context: 2048", "kv_per_token: 28672B", // 28 + 28 MiB / 2048
                        "prefill: {per_token: 8000us}", "decode: {per_token: 42000us}",
                        "mapped: 550677KiB",                     // 940.37 less 402.60 MiB
                        "repacked: 0KiB", "gpu: 412263KiB",      // Mali-G720's 402.60 MiB
                        "compute: 318823KiB"}); // 299.75 + 11.02 + 0.58 (Vulkan_Host) MiB
    CHECK(r.yaml.find("# ASSUMED that the weights are mapped") != std::string::npos);
    CHECK(r.yaml.find("delegate: gpu") != std::string::npos);
    // the same log run with --no-mmap (its command line echoed): a copy
    std::string log = fixture("llama_cpp_2024_vulkan.log");
    Imported copy = import(SCN_IMPORT_LLAMA_CPP, "n.log", "main: llama-cli -m m.gguf --no-mmap\n" + log);
    REQUIRE(copy.rc == SIM_OK);
    values_are(copy.yaml, {"mode: copy", "mapped: 0KiB"});
    CHECK(copy.yaml.find("ASSUMED") == std::string::npos);
    Cand k(r.yaml);
    INFO(k.msg);
    CHECK(k.rc == SIM_OK);
}

TEST_CASE("import llama-cpp: a server log keeps every request, and what is not in a log is left "
          "to fill in", "[imports][vintages]")
{
    Imported r = llama("llama_server_2025.log");
    values_are(r.yaml, {"file: 737711KiB", "mode: mmap",
                        "prompt_tokens: {dist: empirical, values: [120, 300, 40]}",
                        "output_tokens: {dist: empirical, values: [127, 60, 255]}",
                        "context: 8192", "slots: 2",
                        "kv_per_token: 16640B", // both caches (non-SWA 64, SWA 66 MiB) / 8192
                        "prefill: {per_token: {dist: empirical, values: [7500us, 8000us, 7000us]}}",
                        "decode: {per_token: {dist: empirical, values: [40000us, 42000us, 44000us]}}",
                        "mapped: 307631KiB", "repacked: 430080KiB", "compute: 528640KiB"});
    CHECK(r.yaml.find("# 3 requests in the log") != std::string::npos);
    // the server prints no load time: left for the user, and the loader names it
    CHECK(r.yaml.find("      # time: REQUIRED") != std::string::npos);
    Cand k(r.yaml);
    CHECK(k.rc == SIM_EINPUT);
    CHECK(k.msg.find("parts.model.load: missing required key \"time\"") != std::string::npos);
    // what was read and not used is listed
    CHECK(r.yaml.find("# ignored (read, not used):") != std::string::npos);
    CHECK(r.yaml.find("3 srv  update_slots lines") != std::string::npos);
    CHECK(r.yaml.find("3 slot print_timing lines") != std::string::npos);
    // the 2024-02 server's JSON lines, "generation eval time" and spaces before '='
    Imported j = import(SCN_IMPORT_LLAMA_CPP, "j.log",
        "load_tensors:   CPU_Mapped model buffer size =   100.00 MiB\n"
        "{\"tid\":\"1\",\"level\":\"INFO\",\"function\":\"print_timings\",\"msg\":\"prompt eval "
        "time     =     100.00 ms /    10 tokens (   10.00 ms per token)\",\"id_slot\":0}\n"
        "{\"tid\":\"1\",\"level\":\"INFO\",\"function\":\"print_timings\",\"msg\":\"generation "
        "eval time =    2000.00 ms /    40 runs   (   50.00 ms per token)\",\"id_slot\":0}\n"
        "{\"msg\":\"prompt eval time     =     300.00 ms /    20 tokens\"}\n"
        "{\"msg\":\"generation eval time =    1000.00 ms /    20 runs\"}\n");
    INFO(j.msg);
    REQUIRE(j.rc == SIM_OK);
    // no n_ctx: each request's time as it ran, never 0
    CHECK(value_of(j.yaml, "      time: {dist") ==
          "      time: {dist: empirical, values: [2100000us, 1300000us]}");
}

TEST_CASE("import benchmark-model: the form before 2020, 2020's peak footprint, a GPU delegate",
          "[imports][vintages]")
{
    Imported o = import(SCN_IMPORT_BENCHMARK_MODEL, "o.log", fixture("benchmark_model_2019.log"));
    INFO(o.msg);
    REQUIRE(o.rc == SIM_OK);
    // "Average inference timings in us: Warmup: 46310.4, Init: 412500, no stats: 41275.3"
    values_are(o.yaml, {"delegate: nnapi", "prepare:>time: 412500us",
                        // the benchmark's count= line: mean 41275.3, sd 1022, as a lognormal
                        "inference:>time: {dist: lognormal, median: 41263us, p95: 42978us}"});
    CHECK(o.yaml.find("the form before 2020") != std::string::npos);
    // no model file size in a 2019 log: left to fill in, never 0
    CHECK(o.yaml.find("    # file: REQUIRED, not in the log") != std::string::npos);
    CHECK(o.yaml.find("file: 0KiB") == std::string::npos);
    Cand oc(o.yaml);
    CHECK(oc.rc == SIM_EINPUT);
    CHECK(oc.msg.find("parts.model: missing required key \"file\"") != std::string::npos);
    Imported g = import(SCN_IMPORT_BENCHMARK_MODEL, "g.log",
                        fixture("benchmark_model_2020_gpu.log"));
    REQUIRE(g.rc == SIM_OK);
    values_are(g.yaml, {"delegate: gpu", "file: 2718KiB", // 2.78245 MB
                        "prepare:>time: 1840310us",
                        // "Peak memory footprint (MB): init=96.4023 overall=121.738"
                        "resident: {native: 95999KiB}",   // init less the file
                        "working_set: {native: 25944KiB}", // overall less init
                        "inference:>time: {dist: lognormal, median: 19502us, p95: 20583us}"});
    CHECK(g.yaml.find("# ignored (read, not used):") != std::string::npos);
    CHECK(g.yaml.find("1 Use gpu line") != std::string::npos);
    CHECK(g.yaml.find("/data/local") == std::string::npos); // no path from the log
    Cand gc(g.yaml);
    INFO(gc.msg);
    CHECK(gc.rc == SIM_OK);
}

TEST_CASE("import benchmark-model: a log of two runs (CPU, then an external delegate), each its "
          "own candidate, or one with --run", "[imports][vintages]")
{
    Imported both = import(SCN_IMPORT_BENCHMARK_MODEL, "two.log",
                           fixture("benchmark_model_two_runs.log"), "seg");
    INFO(both.msg);
    REQUIRE(both.rc == SIM_OK);
    CHECK(both.yaml.find("# 2 runs in the log") != std::string::npos);
    CHECK(both.yaml.find("candidates:\n  - id: seg-1\n") != std::string::npos);
    CHECK(both.yaml.find("\n  - id: seg-2\n") != std::string::npos);
    CHECK(scn_kind_of_text(both.yaml.data(), both.yaml.size()) == SCN_KIND_FRAGMENT);
    sim_error err;
    sim_error_clear(&err);
    CHECK(scn_fragment_check(both.yaml.data(), both.yaml.size(), "two.yaml", &err) == SIM_OK);
    INFO(err.msg);
    Imported second = import(SCN_IMPORT_BENCHMARK_MODEL, "two.log",
                             fixture("benchmark_model_two_runs.log"), "seg", nullptr, nullptr, 2);
    REQUIRE(second.rc == SIM_OK);
    values_are(second.yaml, {"id: seg", "delegate: npu", "file: 8216KiB",
                             "prepare:>time: 2210700us", "resident: {native: 41869KiB}",
                             "working_set: {native: 9652KiB}",
                             "inference:>time: {dist: lognormal, median: 3120us, p95: 3420us}"});
    // the library by its file name, never its path
    CHECK(second.yaml.find("libQnnTFLiteDelegate.so") != std::string::npos);
    CHECK(second.yaml.find("/data/local/tmp") == std::string::npos);
    Cand sc(second.yaml);
    INFO(sc.msg);
    CHECK(sc.rc == SIM_OK);
    Imported first = import(SCN_IMPORT_BENCHMARK_MODEL, "two.log",
                            fixture("benchmark_model_two_runs.log"), "seg", nullptr, nullptr, 1);
    REQUIRE(first.rc == SIM_OK);
    values_are(first.yaml, {"delegate: none", "prepare:>time: 61402us",
                            "inference:>time: {dist: lognormal, median: 31010us, p95: 33870us}"});
    Imported third = import(SCN_IMPORT_BENCHMARK_MODEL, "two.log",
                            fixture("benchmark_model_two_runs.log"), "seg", nullptr, nullptr, 3);
    CHECK(third.rc == SIM_EINPUT);
    CHECK(third.msg.find("--run 3: the log holds 2 runs") != std::string::npos);
}

TEST_CASE("import benchmark-model: another tool's lines before STARTING!, a CPU run then a GPU "
          "run, op profiling's summary", "[imports][vintages]")
{
    // label_image ran first: its "Applied GPU delegate." and a timing line
    // with 99999 everywhere must reach no run
    Imported both = import(SCN_IMPORT_BENCHMARK_MODEL, "p.log",
                           fixture("benchmark_model_label_image_op_profiling.log"), "mnet");
    INFO(both.msg);
    REQUIRE(both.rc == SIM_OK);
    CHECK(both.yaml.find("# lines 1 to 7 come before the first STARTING!") != std::string::npos);
    CHECK(both.yaml.find("99999") == std::string::npos);
    CHECK(both.yaml.find("\n  - id: mnet-2\n") != std::string::npos);
    Imported cpu = import(SCN_IMPORT_BENCHMARK_MODEL, "p.log",
                          fixture("benchmark_model_label_image_op_profiling.log"), "mnet",
                          nullptr, nullptr, 1);
    REQUIRE(cpu.rc == SIM_OK);
    // the CPU run: XNNPACK only, no delegate; its times from the benchmark's
    // own count= line (line 18), not the profiler's "Timings (microseconds)"
    values_are(cpu.yaml, {"delegate: none", "prepare:>time: 48200us",
                          "inference:>time: {dist: lognormal, median: 40290us, p95: 41880us}"});
    CHECK(cpu.yaml.find("fallback:") == std::string::npos);
    CHECK(cpu.yaml.find("39885") == std::string::npos);
    CHECK(cpu.yaml.find("7 op profiler summary lines") != std::string::npos);
    // the GPU run, whose delegate is said by "Applied GPU delegate." (the
    // form benchmark_model printed before "Explicitly applied")
    Imported gpu = import(SCN_IMPORT_BENCHMARK_MODEL, "p.log",
                          fixture("benchmark_model_label_image_op_profiling.log"), "mnet",
                          nullptr, nullptr, 2);
    REQUIRE(gpu.rc == SIM_OK);
    values_are(gpu.yaml, {"delegate: gpu", "prepare:>time: 1210400us",
                          "inference:>time: {dist: lognormal, median: 9200us, p95: 9480us}"});
    Cand gc(gpu.yaml);
    INFO(gc.msg);
    CHECK(gc.rc == SIM_OK);
    // "Applied NNAPI delegate." alone, in a one-run log without STARTING!
    Imported nn = import(SCN_IMPORT_BENCHMARK_MODEL, "n.log",
                         "INFO: Applied NNAPI delegate.\nINFO: Inference timings in us: Init: "
                         "1000, First inference: 900, Warmup (avg): 800, Inference (avg): 700\n");
    REQUIRE(nn.rc == SIM_OK);
    values_are(nn.yaml, {"delegate: nnapi"});
    CHECK(nn.yaml.find("before the first STARTING!") == std::string::npos);
}

TEST_CASE("import onnxruntime: a profile pasted without its [ ] or with a trailing comma, "
          "DirectML, a parameter_size of 0, no run", "[imports][vintages]")
{
    const std::string ev =
        "{\"cat\" : \"Session\",\"pid\" :1,\"tid\" :1,\"dur\" :5000,\"ts\" :1,\"ph\" : "
        "\"X\",\"name\" :\"model_loading_uri\",\"args\" : {}},\n"
        "{\"cat\" : \"Session\",\"dur\" :9000,\"ts\" :6000,\"name\" :"
        "\"session_initialization\",\"args\" : {}},\n"
        "{\"cat\" : \"Node\",\"dur\" :1,\"ts\" :20000,\"name\" :\"conv_fence_before\","
        "\"args\" : {\"op_name\" : \"Conv\"}},\n"
        "{\"cat\" : \"Node\",\"dur\" :800,\"ts\" :20001,\"name\" :\"conv_kernel_time\","
        "\"args\" : {\"op_name\" : \"Conv\",\"provider\" : \"DmlExecutionProvider\","
        "\"parameter_size\" : \"0\",\"output_size\" : \"4096\",\"activation_size\" : "
        "\"1024\"}},\n"
        "{\"cat\" : \"Session\",\"dur\" :1000,\"ts\" :20000,\"name\" :\"model_run\","
        "\"args\" : {}}";
    for (const std::string &text : {ev + "\n", ev + ",\n", "[\n" + ev + ",\n]\n"}) {
        Imported r = import(SCN_IMPORT_ONNXRUNTIME, "p.json", text);
        INFO(text << "\n" << r.msg);
        REQUIRE(r.rc == SIM_OK);
        CHECK(r.yaml.find("# Read as pasted into a report:") != std::string::npos);
        values_are(r.yaml, {"delegate: gpu", "load:>time: 5000us", "prepare:>time: 9000us",
                            "inference:>time: 1000us", "working_set: {native: 4KiB}"});
        // parameter_size "0": said as zero, never "not given"; the size left to fill in
        CHECK(r.yaml.find("its parameter_size is 0 for every node") != std::string::npos);
        CHECK(r.yaml.find("1 Node fence_before event") != std::string::npos);
    }
    // the whole file as ORT writes it: nothing repaired
    Imported whole = import(SCN_IMPORT_ONNXRUNTIME, "w.json", "[\n" + ev + "\n]\n");
    REQUIRE(whole.rc == SIM_OK);
    CHECK(whole.yaml.find("# Read as pasted") == std::string::npos);
    // no run in the profile: the time is left to fill in, never 0us
    Imported norun = import(SCN_IMPORT_ONNXRUNTIME, "n.json",
                            "[{\"cat\": \"Session\", \"name\": \"session_initialization\", "
                            "\"ts\": 0, \"dur\": 100}]");
    REQUIRE(norun.rc == SIM_OK);
    CHECK(norun.yaml.find("inference: {}  # time: REQUIRED, not in the profile") !=
          std::string::npos);
    CHECK(norun.yaml.find("time: 0us") == std::string::npos);
    // ... and the size too, for the reason it is missing
    CHECK(norun.yaml.find("# file: REQUIRED, not in the profile (no model_run event, and the "
                          "parameters are counted over a run's nodes)") != std::string::npos);
    // not JSON even so: refused with its line
    Imported bad = import(SCN_IMPORT_ONNXRUNTIME, "b.json", "{\"cat\": ,}\n");
    CHECK(bad.rc == SIM_EINPUT);
    CHECK(bad.msg.rfind("b.json:1: not an ONNX Runtime profile", 0) == 0);
}

TEST_CASE("import metrickit: Chinese, Japanese and Korean measurements, and the foreground time",
          "[imports][vintages]")
{
    Imported r = import(SCN_IMPORT_METRICKIT, "cjk.json", fixture("metrickit_cjk.json"));
    INFO(r.msg);
    REQUIRE(r.rc == SIM_OK);
    // 1,206,818千字节 (zh), 1.1 ギガバイト (ja), 980,000킬로바이트 (ko): decimal units
    CHECK(peak_comment(r.yaml) == "1150.9");
    CHECK(r.yaml.find("suspended memory up to 49.7 MiB") != std::string::npos); // 52,100千字节
    // 3,600秒 + 1.5 時間 + 5,400초 = 4 h; 3 memory-limit exits in them
    CHECK(r.yaml.find("# foreground time 4.0 h (applicationTimeMetrics): 750 foreground "
                      "memory-limit exits per 1000 h in front") != std::string::npos);
    CHECK(value_of(r.yaml, "memory_exit_rate:") == "memory_exit_rate: 66.6667%");
    // every unit word of the table in docs/imports/metrickit.md, one by one
    struct Form {
        const char *text, *mib;
    } forms[] = {{"1,000,000千字节", "953.7"}, {"1,000兆字节", "953.7"}, {"1吉字节", "953.7"},
                 {"1,000,000,000字节", "953.7"}, {"1,000,000 キロバイト", "953.7"},
                 {"1,000 メガバイト", "953.7"}, {"1 ギガバイト", "953.7"},
                 {"1,000,000,000 バイト", "953.7"}, {"1,000,000킬로바이트", "953.7"},
                 {"1,000메가바이트", "953.7"}, {"1기가바이트", "953.7"},
                 {"1,000,000,000바이트", "953.7"}, {"1,000,000 KB", "953.7"},
                 {"1 000 000\xe2\x80\xafko", "953.7"}, {"1 000 000 \xd0\xba\xd0\x91", "953.7"}};
    for (const auto &f : forms) {
        INFO(f.text);
        Imported p = import(SCN_IMPORT_METRICKIT, "p.json", payload(f.text));
        INFO(p.msg);
        REQUIRE(p.rc == SIM_OK);
        CHECK(peak_comment(p.yaml) == f.mib);
    }
    struct Time {
        const char *text;
        double hours;
    } times[] = {{"3,600秒", 1}, {"3,600 秒", 1}, {"60分钟", 1}, {"1小时", 1}, {"1小時", 1},
                 {"60分鐘", 1}, {"3,600,000毫秒", 1}, {"60 分", 1}, {"1 時間", 1},
                 {"3,600,000 ミリ秒", 1}, {"3,600초", 1}, {"60분", 1}, {"1시간", 1},
                 {"3,600,000밀리초", 1}, {"3600 sec", 1}, {"3600 s", 1}, {"60 min", 1},
                 {"1 hr", 1}, {"3600000 ms", 1}, {"3 600 с", 1}, {"60 мин", 1},
                 {"1 ч", 1}, {"3.600 Sek.", 1}, {"1 Std.", 1}};
    for (const auto &t : times) {
        INFO(t.text);
        std::string pay = std::string("{\"metaData\": {\"deviceType\": \"iPhone13,2\"}, "
                                      "\"applicationTimeMetrics\": {\"cumulativeForegroundTime\""
                                      ": \"") + t.text + "\"}, \"applicationExitMetrics\": "
                                      "{\"foregroundExitData\": {"
                                      "\"cumulativeMemoryResourceLimitExitCount\": 1}}}";
        Imported p = import(SCN_IMPORT_METRICKIT, "t.json", pay);
        INFO(p.msg);
        REQUIRE(p.rc == SIM_OK);
        CHECK(p.yaml.find("# foreground time 1.0 h") != std::string::npos);
    }
    // a time word this version does not know: said, not fatal (the time feeds a comment)
    Imported odd = import(SCN_IMPORT_METRICKIT, "b.json",
                          "{\"applicationTimeMetrics\": {\"cumulativeForegroundTime\": \"3 dk\"},"
                          " \"applicationExitMetrics\": {}}");
    REQUIRE(odd.rc == SIM_OK);
    CHECK(odd.yaml.find("cumulativeForegroundTime of 1 payload not read") != std::string::npos);
}

TEST_CASE("import llama-cpp: a logcat brief line's slash, and a line of many colons",
          "[imports][vintages]")
{
    // "I/llama( 123): ...": the counts are the ones after the value
    Imported r = import(SCN_IMPORT_LLAMA_CPP, "b.log",
                        "I/llama( 123): load_tensors:   CPU_Mapped model buffer size = 10.00 MiB\n"
                        "I/llama( 123): llama_context: n_ctx = 512\n"
                        "I/llama( 123): llama_kv_cache: CPU KV buffer size = 4.00 MiB\n"
                        "I/llama( 123): prompt eval time = 100.00 ms / 10 tokens\n"
                        "I/llama( 123): eval time = 400.00 ms / 8 runs\n");
    INFO(r.msg);
    REQUIRE(r.rc == SIM_OK);
    values_are(r.yaml, {"prompt_tokens: 10", "output_tokens: 8", "prefill: {per_token: 10000us}",
                        "decode: {per_token: 50000us}"});
    // an unused line of 200000 "1: " (a reviewer's finding: the tally recursed
    // once per colon): read and listed, no crash
    std::string many = "load_tensors:   CPU_Mapped model buffer size = 10.00 MiB\n";
    for (int k = 0; k < 200000; k++)
        many += "1: ";
    many += "x\n";
    Imported m = import(SCN_IMPORT_LLAMA_CPP, "m.log", many);
    REQUIRE(m.rc == SIM_OK);
    CHECK(m.yaml.find("# ignored (read, not used): 1 1 line") != std::string::npos);
}

namespace {

// The header's "# ignored (read, not used): ..." as one line (its
// continuation lines joined), "" when there is none.
std::string ignored_of(const std::string &yaml)
{
    size_t at = yaml.find("# ignored (read, not used):");
    if (at == std::string::npos)
        return "";
    std::string joined;
    for (size_t nl; at < yaml.size(); at = nl + 1) {
        nl = yaml.find('\n', at);
        std::string line = yaml.substr(at, nl - at);
        if (!joined.empty() && line.rfind("#   ", 0) != 0)
            break;
        joined += joined.empty() ? line : line.substr(3);
        if (nl == std::string::npos)
            break;
    }
    return joined;
}

} // namespace

TEST_CASE("import meminfo, metrickit and play-vitals list what they read and did not use",
          "[imports][vintages]")
{
    // meminfo: by where in the dump; a second process's section (dumpsys
    // prints the preamble once, then each process from its ** MEMINFO line)
    std::string dump = fixture("meminfo_android13.txt");
    std::string second = fixture("meminfo_android9.txt");
    second = second.substr(second.find("** MEMINFO"));
    // the SQL and DATABASES sections as dumpsys prints them after the Objects
    dump += "\n SQL\n         MEMORY_USED:      123\n  PAGECACHE_OVERFLOW:       45"
            "          MALLOC_SIZE:      117\n\n DATABASES\n      pgsz     dbsz   Lookaside(b)"
            "          cache  Dbname\n         4       20             32         5/22/3  "
            "app.db\n";
    Imported m = import(SCN_IMPORT_MEMINFO, "m.txt", dump + "\n" + second);
    INFO(m.msg);
    REQUIRE(m.rc == SIM_OK);
    std::string ig = ignored_of(m.yaml);
    INFO(ig);
    // the table's 17 rows but the Dalvik Heap's, and its second header line
    CHECK(ig.find(" 18 per-heap table lines") != std::string::npos);
    CHECK(ig.find(" 1 App Summary Unknown line") != std::string::npos);
    // the second section's 16 lines with a letter (the Objects are the first's)
    CHECK(ig.find(" 2 Objects lines") != std::string::npos);
    CHECK(ig.find(" 2 SQL lines") != std::string::npos);
    CHECK(ig.find(" 2 DATABASES lines") != std::string::npos); // its column header and a row
    CHECK(ig.find(" 16 other processes' lines") != std::string::npos);
    // the values are still the first process's
    CHECK(value_of(m.yaml, "java:") == value_of(import(SCN_IMPORT_MEMINFO, "m.txt", dump).yaml,
                                                "java:"));
    // a dump pasted from its table's header: the table is still the table
    std::string cut = fixture("meminfo_android13.txt");
    Imported c = import(SCN_IMPORT_MEMINFO, "c.txt", cut.substr(cut.find("                   Pss")));
    REQUIRE(c.rc == SIM_OK);
    CHECK(ignored_of(c.yaml).find("# ignored (read, not used): 18 per-heap table lines,") == 0);
    // MetricKit: by key path, counted over the payloads
    Imported k = import(SCN_IMPORT_METRICKIT, "d.json", fixture("metrickit_day1.json"));
    REQUIRE(k.rc == SIM_OK);
    ig = ignored_of(k.yaml);
    INFO(ig);
    for (const char *key : {" 1 timeStampBegin key", " 1 appVersion key", " 1 metaData.osVersion key",
                            " 1 metaData.platformArchitecture key",
                            " 1 memoryMetrics.averageSuspendedMemory.sampleCount key"})
        CHECK(ig.find(key) != std::string::npos);
    CHECK(ig.find("deviceType") == std::string::npos); // read
    CHECK(ig.find("ExitCount") == std::string::npos);
    Imported odd = import(SCN_IMPORT_METRICKIT, "o.json",
                          "{\"cpuMetrics\": {}, \"applicationExitMetrics\": {\"foregroundExitData\""
                          ": {\"cumulativeNormalAppExitCount\": 1, \"note\": 2}}}");
    REQUIRE(odd.rc == SIM_OK);
    ig = ignored_of(odd.yaml);
    CHECK(ig.find(" 1 cpuMetrics key") != std::string::npos);
    CHECK(ig.find(" 1 applicationExitMetrics.foregroundExitData.note key") != std::string::npos);
    // Play vitals: a row's other keys, metrics and dimensions; a page not fetched
    std::string rows = "{\"rows\": [{\"aggregationPeriod\": \"DAILY\", \"dimensions\": "
                       "[{\"dimension\": \"deviceRamBucket\", \"int64Value\": \"4096\"}, "
                       "{\"dimension\": \"countryCode\", \"stringValue\": \"DE\"}], \"metrics\": "
                       "[{\"metric\": \"userPerceivedLmkRate\", \"decimalValue\": {\"value\": "
                       "\"0.01\"}}, {\"metric\": \"distinctUsers\", \"decimalValue\": {\"value\": "
                       "\"100\"}}, {\"metric\": \"userPerceivedLmkRate7dUserWeighted\", "
                       "\"decimalValue\": {\"value\": \"0.02\"}}]}], \"nextPageToken\": \"abc\"}";
    Imported v = import(SCN_IMPORT_PLAY_VITALS, "v.json", rows);
    INFO(v.msg);
    REQUIRE(v.rc == SIM_OK);
    ig = ignored_of(v.yaml);
    INFO(ig);
    CHECK(ig.find(" 1 aggregationPeriod key") != std::string::npos);
    CHECK(ig.find(" 1 dimensions.countryCode key") != std::string::npos);
    CHECK(ig.find(" 1 metrics.userPerceivedLmkRate7dUserWeighted key") != std::string::npos);
    CHECK(v.yaml.find("# 1 response has a nextPageToken: more rows than these, not fetched.") !=
          std::string::npos);
    CHECK(ig.find("nextPageToken") == std::string::npos); // read, not ignored
    Imported whole = import(SCN_IMPORT_PLAY_VITALS, "w.json", fixture("play_vitals_lmk.json"));
    REQUIRE(whole.rc == SIM_OK);
    CHECK(whole.yaml.find("nextPageToken: more rows") == std::string::npos); // "" is the last page
}
