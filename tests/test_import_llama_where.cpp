// `oomsim import llama-cpp`, where the log ran and what else it says
// (scenarios/import/llama_more.c, docs/imports/llama-cpp.md "Where the log
// ran"): a server's or desktop's log says so and leaves its times REQUIRED
// unless --speed-of scales them; the context's settings kept; llama-bench's
// rows at two depths give the context's term of a token's time; an NPU
// backend is the npu delegate; the memory breakdown table fills what the
// buffer lines lack.  The fixtures are the project's own logs, edited here.
#include <catch2/catch.hpp>

#include <string>

#include "shim/imports.hpp"

using namespace imports;

namespace {

// The fixture with every line holding `drop` removed and `from` replaced by
// `to` (once a line).
std::string edited_text(const std::string &all, const std::string &drop,
                        const std::string &from = "", const std::string &to = "")
{
    std::string out;
    for (size_t at = 0, nl; at < all.size(); at = nl + 1) {
        nl = all.find('\n', at);
        std::string line = all.substr(at, nl - at);
        if (!drop.empty() && line.find(drop) != std::string::npos)
            continue;
        size_t f = from.empty() ? std::string::npos : line.find(from);
        if (f != std::string::npos)
            line.replace(f, from.size(), to);
        out += line + "\n";
    }
    return out;
}

std::string edited(const std::string &name, const std::string &drop, const std::string &from = "",
                   const std::string &to = "")
{
    return edited_text(fixture(name), drop, from, to);
}

bool has(const std::string &s, const std::string &what) { return s.find(what) != std::string::npos; }

} // namespace

TEST_CASE("import llama-cpp: a phone's log says where it ran and keeps the context's settings",
          "[imports][generation]")
{
    Imported r = import(SCN_IMPORT_LLAMA_CPP, "a.log", fixture("llama_cpp_android_2025.log"));
    INFO(r.msg << r.yaml);
    REQUIRE(r.rc == SIM_OK);
    CHECK(has(r.yaml, "# a.log:1: built for aarch64-unknown-linux-android28."));
    CHECK(has(r.yaml, "measured_on:\n  platform: android  # a.log:1: the build line's target\n"
                      "  target: \"aarch64-unknown-linux-android28\"\n  backend: \"OpenCL\"\n"
                      "  build: 6500\n"));
    CHECK(!has(r.yaml, "NOT A PHONE"));
    // the eval line cites its own line, the prompt's its own
    CHECK(has(r.yaml, "prefill: {per_token: 7200us}  # a.log:51:"));
    CHECK(has(r.yaml, "decode: {per_token: 50000us}  # a.log:52:"));
    CHECK(has(r.yaml, "output_tokens: 127  # a.log:52:"));
    CHECK(value_of(r.yaml, "flash_attn:") == "flash_attn: auto");
    CHECK(value_of(r.yaml, "kv_type:") == "kv_type: f16");
    CHECK(has(r.yaml, "# a.log:30: n_ctx_seq 4096"));
    CHECK(has(r.yaml, "the KV caches hold 4096 cells in 1 cache"));
    Cand c(r.yaml);
    INFO(c.msg);
    CHECK(c.rc == SIM_OK);
    // flash attention off and a quantised V, as a log of an older build
    // prints them: kept, and a kv_unified server said so
    std::string off = edited("llama_cpp_android_2025.log", "", "flash_attn    = auto",
                             "flash_attn    = disabled");
    Imported o = import(SCN_IMPORT_LLAMA_CPP, "o.log", off);
    CHECK(value_of(o.yaml, "flash_attn:") == "flash_attn: off");
    std::string uni = edited("llama_cpp_android_2025.log", "", "kv_unified    = false",
                             "kv_unified    = true");
    CHECK(has(import(SCN_IMPORT_LLAMA_CPP, "u.log", uni).yaml,
              "# u.log:35: kv_unified = true: every sequence may use all of n_ctx's cells"));
}

TEST_CASE("import llama-cpp: a server's log says so, and its times wait for --speed-of",
          "[imports][generation]")
{
    // the same log built for a Linux server: no time is taken as a phone's
    std::string srv = edited("llama_cpp_android_2025.log", "", "aarch64-unknown-linux-android28",
                             "x86_64-linux-gnu");
    Imported r = import(SCN_IMPORT_LLAMA_CPP, "s.log", srv);
    INFO(r.msg << r.yaml);
    REQUIRE(r.rc == SIM_OK);
    CHECK(has(r.yaml, "# NOT A PHONE: this log ran on a server or a desktop (x86_64-linux-gnu"));
    CHECK(has(r.yaml, "  platform: other"));
    CHECK(has(r.yaml, "      prefill: {}  # per_token: REQUIRED, s.log:51: 7200 us a token on "
                      "x86_64-linux-gnu, not a phone"));
    CHECK(has(r.yaml, "      decode: {}  # per_token: REQUIRED, s.log:52: 50000 us a token on "
                      "x86_64-linux-gnu, not a phone"));
    CHECK(has(r.yaml, "      # time: REQUIRED, s.log:50: 2215 ms on x86_64-linux-gnu"));
    Cand c(r.yaml);
    CHECK(c.rc == SIM_EINPUT); // validate refuses it until the times are given
    // --speed-of a phone whose accelerator runs at 1.5 (the log's buffers are
    // OpenCL's, so its gpu speed): each time x 1.5 at the reference phone
    Imported s = import(SCN_IMPORT_LLAMA_CPP, "s.log", srv, nullptr, nullptr, nullptr, 0,
                        "fast-phone", 2.0, 1.5);
    INFO(s.yaml);
    REQUIRE(s.rc == SIM_OK);
    CHECK(value_of(s.yaml, "prefill:") == "prefill: {per_token: 10800us}");
    CHECK(value_of(s.yaml, "decode:") == "decode: {per_token: 75000us}");
    CHECK(value_of(s.yaml, "      time: ") == "      time: 3321825us"); // 2214.55 ms x 1.5
    CHECK(has(s.yaml, "  speed_of: fast-phone"));
    Cand sc(s.yaml);
    INFO(sc.msg);
    CHECK(sc.rc == SIM_OK);
    // a CUDA backend is a desktop's whatever the target
    std::string cuda = edited("llama_cpp_android_2025.log", "", "OpenCL0", "CUDA0");
    CHECK(has(import(SCN_IMPORT_LLAMA_CPP, "c.log", cuda).yaml, "# NOT A PHONE"));
    // the command: a catalog device's name
    shim::TempDir dir;
    std::string log = dir.write("srv.log", srv);
    auto run = shim::run({OOMSIM_BIN, "import", "llama-cpp", log, "--speed-of", "android-8g"});
    INFO(run.err);
    CHECK(run.status == 0);
    CHECK(has(run.out, "  speed_of: android-8g"));
    auto bad = shim::run({OOMSIM_BIN, "import", "llama-cpp", log, "--speed-of", "no-such-phone"});
    CHECK(bad.status == 1);
}

TEST_CASE("import llama-cpp: llama-bench's rows at two depths give the context's term",
          "[imports][generation]")
{
    // tg128 at 20 t/s (50,000 us a token) and at depth 4096 16 t/s (62,500):
    // a token of tg128 reads d + 64.5 cells on average, so the slope is
    // 12,500 us over 4096 cells: 3.0518 us a cell, 3052 us per 1,000.  pp512
    // at 100 and 80 t/s: 10,000 and 12,500 us a token, a batch of 512 from d
    // reading d + 512 cells: 2,500 over 4096, 610 us per 1,000.  The log's
    // own times lose the context's share: decode 50,000 - 3.0518 x (256 +
    // 64) = 49,023 us; prefill 7,200 - 0.61035 x 256 = 7,044 us.
    std::string log = fixture("llama_cpp_android_2025.log") +
        "| model           |       size |     params | backend    | ngl |            test |"
        "                  t/s |\n"
        "| --------------- | ---------: | ---------: | ---------- | --: | --------------: |"
        " -------------------: |\n"
        "| qwen2 1.5B Q4_0 | 1006.00 MiB |     1.54 B | OpenCL     |  14 |           pp512 |"
        "        100.00 ± 1.00 |\n"
        "| qwen2 1.5B Q4_0 | 1006.00 MiB |     1.54 B | OpenCL     |  14 |           tg128 |"
        "         20.00 ± 0.10 |\n"
        "| qwen2 1.5B Q4_0 | 1006.00 MiB |     1.54 B | OpenCL     |  14 |   pp512 @ d4096 |"
        "         80.00 ± 1.00 |\n"
        "| qwen2 1.5B Q4_0 | 1006.00 MiB |     1.54 B | OpenCL     |  14 |   tg128 @ d4096 |"
        "         16.00 ± 0.10 |\n"
        "\nbuild: a7a98e0f (6500)\n";
    Imported r = import(SCN_IMPORT_LLAMA_CPP, "b.log", log);
    INFO(r.msg << r.yaml);
    REQUIRE(r.rc == SIM_OK);
    CHECK(value_of(r.yaml, "decode:") == "decode: {per_token: 49023us, per_1k_context: 3052us}");
    CHECK(value_of(r.yaml, "prefill:") == "prefill: {per_token: 7044us, per_1k_context: 610us}");
    CHECK(has(r.yaml, "4 llama-bench rows"));
    Cand c(r.yaml);
    INFO(c.msg);
    REQUIRE(c.rc == SIM_OK);
    CHECK(c.c.parts[0].gen.decode_ctx == 3052.0);
    CHECK(c.c.parts[0].gen.prefill_ctx == 610.0);
    // one depth gives no slope: nothing added
    std::string one = fixture("llama_cpp_android_2025.log") +
        "| m | 1 MiB | 1 B | CPU | 4 | tg128 | 20.00 ± 0.10 |\n";
    Imported o = import(SCN_IMPORT_LLAMA_CPP, "o.log", one);
    CHECK(value_of(o.yaml, "decode:") == "decode: {per_token: 50000us}");
}

TEST_CASE("import llama-cpp: a Hexagon backend is the npu delegate, and the breakdown table "
          "fills the kinds the buffer lines lack",
          "[imports][generation]")
{
    std::string htp = edited("llama_cpp_android_2025.log", "", "OpenCL0", "HTP0");
    Imported r = import(SCN_IMPORT_LLAMA_CPP, "h.log", htp);
    INFO(r.msg << r.yaml);
    REQUIRE(r.rc == SIM_OK);
    CHECK(value_of(r.yaml, "delegate:") == "delegate: npu");
    CHECK(has(r.yaml, "  backend: \"HTP\""));
    // llama_cpp_android.log without its KV and compute buffer lines: its
    // memory breakdown table gives them (OpenCL0: 32 of context, 254 of
    // compute; the Host: 32 and 12), where before they were dropped
    std::string cut = edited("llama_cpp_android.log", "KV buffer size");
    std::string log;
    for (size_t at = 0, nl; at < cut.size(); at = nl + 1) {
        nl = cut.find('\n', at);
        std::string line = cut.substr(at, nl - at);
        if (line.find("compute buffer size") == std::string::npos)
            log += line + "\n";
    }
    Imported t = import(SCN_IMPORT_LLAMA_CPP, "t.log", log);
    INFO(t.yaml);
    REQUIRE(t.rc == SIM_OK);
    CHECK(has(t.yaml, "the memory breakdown table: the context (KV), compute taken from it"));
    // 64 MiB of KV over 2048 tokens; compute 254 + 12 MiB and the 0.49 MiB output buffer
    CHECK(value_of(t.yaml, "kv_per_token:") == "kv_per_token: 32768B");
    CHECK(value_of(t.yaml, "compute:") == "compute: 272886KiB");
    // with every buffer line, the table is read and said unused
    Imported all = import(SCN_IMPORT_LLAMA_CPP, "a.log", fixture("llama_cpp_android.log"));
    CHECK(has(all.yaml, "# a.log:25: the memory breakdown table: read, not used"));
}

TEST_CASE("import llama-cpp: what auto resolved to, an older log's target line, odd bench "
          "rows, an unknown backend",
          "[imports][generation]")
{
    // "Flash Attention was auto, set to disabled": the state in force
    std::string fa = edited("llama_cpp_android_2025.log", "", "llama_context: kv_unified    = false",
                            "llama_context: kv_unified    = false\n"
                            "llama_context: Flash Attention was auto, set to disabled");
    Imported f = import(SCN_IMPORT_LLAMA_CPP, "f.log", fa);
    INFO(f.yaml);
    CHECK(value_of(f.yaml, "flash_attn:") == "flash_attn: off");
    // 2023's main prints its target on a line of its own
    std::string old = "main: build = 1289 (16bc66d)\nmain: built with cc (GCC) 12.2 for "
                      "x86_64-linux-gnu\n" + fixture("llama_cpp_2023_copy.log");
    Imported o = import(SCN_IMPORT_LLAMA_CPP, "o.log", old);
    INFO(o.yaml);
    CHECK(has(o.yaml, "  platform: other"));
    CHECK(has(o.yaml, "# NOT A PHONE"));
    // a server's log with llama-bench's rows: the slope is the server's too,
    // so neither it nor the times are written
    std::string srv = edited("llama_cpp_android_2025.log", "", "aarch64-unknown-linux-android28",
                             "x86_64-linux-gnu") +
                      "| m | 1 MiB | 1 B | CPU | 8 | tg128 | 20.00 ± 0.10 |\n"
                      "| m | 1 MiB | 1 B | CPU | 8 | tg128 @ d4096 | 16.00 ± 0.10 |\n";
    Imported s = import(SCN_IMPORT_LLAMA_CPP, "s.log", srv);
    CHECK(has(s.yaml, "      decode: {}  # per_token: REQUIRED, s.log:52: 50000 us a token on "
                      "x86_64-linux-gnu (and llama-bench's slope on it)"));
    // a depth without its number is no test row: one depth left, no slope
    std::string odd = fixture("llama_cpp_android_2025.log") +
                      "| m | 1 MiB | 1 B | CPU | 8 | tg128 | 20.00 ± 0.10 |\n"
                      "| m | 1 MiB | 1 B | CPU | 8 | tg128 @ d | 16.00 ± 0.10 |\n"
                      "| m | 1 MiB | 1 B | CPU | 8 | tg128 @ d+4096 | 16.00 ± 0.10 |\n";
    Imported d = import(SCN_IMPORT_LLAMA_CPP, "d.log", odd);
    CHECK(value_of(d.yaml, "decode:") == "decode: {per_token: 50000us}");
    CHECK(has(d.yaml, "# per_1k_context: not in the log for prefill and decode both"));
    // an accelerator backend of another name is kept as it is printed
    std::string rpc = edited("llama_cpp_android_2025.log", "", "OpenCL0", "RPC0");
    CHECK(has(import(SCN_IMPORT_LLAMA_CPP, "r.log", rpc).yaml, "  backend: \"RPC0\""));
}

TEST_CASE("import llama-cpp: the offload lines give the layers, their order and a layer's bytes",
          "[imports][generation]")
{
    // "offloaded 14/29 layers to GPU" (line 22): 28 repeating layers and the
    // output layer; "offloading 14 repeating layers" (line 21) and no line
    // offloading the output layer: the order of builds before 7467; the
    // OpenCL model buffer (line 25) holds the 14 layers alone: 351.70 MiB /
    // 14 = 25.121 MiB = 25,724.5 KiB, written 25724KiB (down: 14 of them fit).
    Imported r = import(SCN_IMPORT_LLAMA_CPP, "a.log", fixture("llama_cpp_android_2025.log"));
    INFO(r.msg << r.yaml);
    REQUIRE(r.rc == SIM_OK);
    CHECK(has(r.yaml, "      layers:\n        count: 28  # a.log:22:"));
    CHECK(has(r.yaml, "        offloaded: 14  # a.log:22:"));
    CHECK(has(r.yaml, "        order: output_last  # a.log:22:"));
    CHECK(has(r.yaml, "        bytes: 25724KiB  # a.log:25:"));
    CHECK(has(r.yaml, "        # output: not in the log"));
    Cand c(r.yaml);
    INFO(c.msg);
    REQUIRE(c.rc == SIM_OK);
    CHECK(c.c.parts[0].gen.layers.count == 28);
    CHECK(c.c.parts[0].gen.layers.offloaded == 14);
    CHECK(c.c.parts[0].gen.layers.output_first == 0);
    CHECK(c.c.parts[0].gen.layers.output == -1);

    // A build of 7467 or later offloads the output layer first and says
    // so: then the buffer holds it and 13 layers, neither alone.
    std::string first = edited("llama_cpp_android_2025.log", "", "offloading 14 repeating layers",
                               "offloading output layer to GPU\nload_tensors: offloading 13 "
                               "repeating layers");
    Imported f = import(SCN_IMPORT_LLAMA_CPP, "f.log", first);
    CHECK(has(f.yaml, "        order: output_first  # f.log:21: the output layer offloaded"));
    CHECK(has(f.yaml, "# bytes, output: not apart in the log"));
    CHECK(!has(f.yaml, "        bytes:"));
    Cand fc(f.yaml);
    INFO(fc.msg);
    CHECK(fc.rc == SIM_OK);

    // One layer, the output layer alone (order output_first): the buffer
    // is its size, 351.70 MiB = 360,140.8 KiB.
    std::string one =
        edited_text(first, "offloading 13 repeating", "offloaded 14/29", "offloaded 1/29");
    Imported o = import(SCN_IMPORT_LLAMA_CPP, "o.log", one);
    CHECK(has(o.yaml, "        output: 360141KiB  # o.log:"));
    CHECK(has(o.yaml, "        offloaded: 1  # o.log:"));

    // A CPU log has no offload line, and no layers.
    Imported cpu = import(SCN_IMPORT_LLAMA_CPP, "c.log",
                          edited("llama_cpp_android_2025.log", "offload"));
    CHECK(!has(cpu.yaml, "layers:"));
}
