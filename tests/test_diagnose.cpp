// oomsim diagnose: dumpsys exit-info in both layouts and lmkd lines,
// classified with evidence levels (docs/on-call.md), matched to a trace.
#include <catch2/catch.hpp>

#include <cctype>
#include <cstring>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include <jansson.h>

#include "replay/replay.h"
#include "traces/traces.h"
#include "shim/exits.hpp"
#include "shim/shim.hpp"

using namespace shim;

namespace {

std::vector<rpl_exit> parse(const std::string &text) { return shim::parse_exits(text); }

} // namespace

TEST_CASE("diagnose: both dumpsys layouts and both lmkd forms parse", "[diagnose]")
{
    std::vector<rpl_exit> x = parse(read_file(source_path("tests/data/exit-info.txt")));
    REQUIRE(x.size() == 5);
    // multi-line, several fields to a line; the timestamp read as UTC
    CHECK(x[0].source == RPL_EXIT_INFO);
    CHECK(std::string(x[0].process) == "com.example.app");
    CHECK(x[0].timestamp_ms == 1714332467967);
    CHECK(x[0].reason_code == 3);
    CHECK(x[0].importance == 400);
    CHECK(x[0].pss_kb == 75 * 1024);
    CHECK(x[0].rss_kb == 120 * 1024);
    CHECK(x[0].pid == 12345);
    CHECK(std::string(x[0].description) == "lmk");
    // one field per line; sizes 0.00 and 1.2GB; a description with spaces
    CHECK(x[1].reason_code == 6);
    CHECK(x[1].pss_kb == 0);
    CHECK(x[1].rss_kb == 1258291); // 1.2 GiB in kB, rounded
    CHECK(std::string(x[1].description) ==
          "user request after error: Input dispatching timed out");
    // the one-line toString form
    CHECK(x[2].reason_code == 4);
    CHECK(x[2].timestamp_ms == 1714331400500);
    CHECK(std::string(x[2].description).find("java.lang.OutOfMemoryError") != std::string::npos);
    // lmkd, newer and older field lists; logcat dates have no year: no timestamp
    CHECK(x[3].source == RPL_LMKD);
    CHECK(x[3].adj == 0);
    CHECK(x[3].rss_kb == 812340);
    CHECK(x[3].timestamp_ms == -1);
    CHECK(std::string(x[3].description).find("low watermark") == 0);
    CHECK(x[4].source == RPL_LMKD);
    CHECK(std::string(x[4].process) == "com.other");
    CHECK(x[4].adj == 900);
    // a size past any memory is unreadable, not an overflow (found by fuzz_exits;
    // tests/fuzz/corpus/exits/regress-size-past-int64 replays the input)
    std::vector<rpl_exit> big =
        parse("ApplicationExitInfo(timestamp=950 process=a reason=3 pss=999999999999991.2GB "
              "rss=999999999999MB)");
    REQUIRE(big.size() == 1);
    CHECK(big[0].pss_kb == -1);
    CHECK(big[0].rss_kb == INT64_C(999999999999) * 1024);
    // a locale-formatted date cannot be read unambiguously
    CHECK(parse("ApplicationExitInfo(timestamp=28/04/2024 19:27 process=a reason=3)")[0]
              .timestamp_ms == -1);
}

TEST_CASE("diagnose: classes and evidence levels follow the on-call guide", "[diagnose]")
{
    auto verdict = [](const std::string &text) {
        std::vector<rpl_exit> x = parse(text);
        REQUIRE(x.size() == 1);
        rpl_verdict v;
        rpl_diagnose(&x[0], nullptr, &v);
        return std::string(v.cls) + "/" + v.evidence;
    };
    CHECK(verdict("ApplicationExitInfo(process=a reason=3 (LOW_MEMORY) importance=100)") ==
          "low_memory/supported");
    CHECK(verdict("ApplicationExitInfo(process=a reason=3 (LOW_MEMORY) importance=400)") ==
          "system_reclaim/supported");
    CHECK(verdict("ApplicationExitInfo(process=a reason=2 (SIGNALED) status=9 importance=100)") ==
          "low_memory/supported");
    CHECK(verdict("ApplicationExitInfo(process=a reason=2 (SIGNALED) status=15)") ==
          "other/supported");
    CHECK(verdict("ApplicationExitInfo(process=a reason=4 (CRASH) description=NullPointer)") ==
          "other/supported");
    CHECK(verdict("ApplicationExitInfo(process=a reason=5 (CRASH_NATIVE))") ==
          "native_crash/supported");
    CHECK(verdict("ApplicationExitInfo(process=a reason=10 (USER_REQUESTED))") ==
          "other/supported");
    CHECK(verdict("ApplicationExitInfo(process=a reason=0 (UNKNOWN))") == "unknown/unconfirmed");
    CHECK(verdict("Kill 'a' (1), uid 2, oom_score_adj 750 to free 10kB rss") ==
          "system_reclaim/supported");
}

TEST_CASE("diagnose: a record that matches the trace is confirmed, with the stage", "[diagnose]")
{
    TempDir dir;
    // the trace: the app's process and version, an inference begun, then
    // the exit at 19:27:47.000 UTC (within 5 s of the record's .967)
    std::string trace = dir.write(
        "s.jsonl",
        "{\"time_ms\":1,\"stage\":\"load\",\"kind\":\"begin\",\"process\":\"com.example.app\","
        "\"app_version\":\"5.2.0\"}\n"
        "{\"time_ms\":2,\"stage\":\"load\",\"kind\":\"end\"}\n"
        "{\"time_ms\":3,\"stage\":\"inference\",\"kind\":\"begin\",\"session\":0}\n"
        "{\"time_ms\":4,\"stage\":\"exit\",\"kind\":\"exit\",\"exit_reason\":\"system_reclaim\","
        "\"exit\":{\"reason_code\":3,\"importance\":400,\"timestamp_ms\":1714332467000}}\n");
    RunResult r = oomsim({"diagnose", trace, "--exits", source_path("tests/data/exit-info.txt"),
                          "--format", "json"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    // the first record matches: confirmed at inference; the ANR of 19:20
    // and the others do not match the timeline
    size_t first = r.out.find("\"class\": \"system_reclaim\",\n      \"evidence\": \"confirmed\","
                              "\n      \"matched_stage\": \"inference\"");
    CHECK(first != std::string::npos);
    CHECK(r.out.find("\"class\": \"anr\",\n      \"evidence\": \"supported\",\n      "
                     "\"matched_stage\": null") != std::string::npos);
    // the JSON form's keys, in the order of docs/traces.md
    CHECK(r.out.find("{\n  \"exits\": [\n    {\n      \"source\": \"exit-info\",\n      "
                     "\"process\": \"com.example.app\",\n      \"timestamp_ms\": 1714332467967,"
                     "\n      \"clock\": \"phone-local\",\n      \"reason_code\": 3,\n      \"reason\": \"LOW_MEMORY\",\n      "
                     "\"importance\": 400,") == 0);
    // another app version does not match the timeline
    std::string other = dir.write("v.txt", "ApplicationExitInfo(timestamp=2024-04-28 "
                                           "19:27:47.967 process=com.example.app reason=3 "
                                           "(LOW_MEMORY) importance=400 versionCode=5.1.0)\n");
    RunResult ov = oomsim({"diagnose", trace, "--exits", other, "--format", "json"});
    CHECK(ov.out.find("\"evidence\": \"supported\"") != std::string::npos);
    std::string same = dir.write("w.txt", "ApplicationExitInfo(timestamp=2024-04-28 "
                                          "19:27:47.967 process=com.example.app reason=3 "
                                          "(LOW_MEMORY) importance=400 versionCode=5.2.0)\n");
    RunResult sv = oomsim({"diagnose", trace, "--exits", same, "--format", "json"});
    CHECK(sv.out.find("\"evidence\": \"confirmed\"") != std::string::npos);
    // the trace alone: its own exit record, matched to itself
    RunResult t = oomsim({"diagnose", trace});
    CHECK(t.status == 0);
    CHECK(t.out.find("trace exit of com.example.app, reason 3 (LOW_MEMORY), importance 400") ==
          0);
    // ... which is evidence of the simulation, said so, not a phone's record
    CHECK(t.out.find("class:     system_reclaim (confirmed by the simulator's own record: "
                     "evidence of the simulation, not of a phone)") != std::string::npos);
    CHECK(t.out.find("matched:   the simulator's own record of this death") !=
          std::string::npos);
    CHECK(t.out.find("stage:     inference") != std::string::npos);
    // usage
    CHECK(oomsim({"diagnose"}).status == 2);
    CHECK(oomsim({"diagnose", "--exits", dir.file("none.txt")}).status != 0);
}

TEST_CASE("diagnose: a file with no exit record in it is invalid input", "[diagnose]")
{
    TempDir dir;
    std::string prose = dir.write("notes.txt", "the app crashed twice yesterday\n"
                                               "no logs were kept\n");
    RunResult r = oomsim({"diagnose", "--exits", prose});
    CHECK(r.status == 1);
    CHECK(r.err == "oomsim: no exit record found in " + prose +
                       ": expected dumpsys exit-info, lmkd lines or a JetsamEvent report\n");
    CHECK(r.out.empty());
    std::string empty = dir.write("empty.txt", "");
    CHECK(oomsim({"diagnose", "--exits", empty, "--format", "json"}).status == 1);
}

namespace {
// The classes a text names after `key` ("\"class\": \"" or "supports "), as a set.
std::set<std::string> classes_after(const std::string &text, const std::string &key)
{
    std::set<std::string> out;
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
        size_t b = at + key.size(), e = b;
        while (e < text.size() && (std::isalnum((unsigned char)text[e]) || text[e] == '_'))
            e++;
        out.insert(text.substr(b, e - b));
    }
    return out;
}
} // namespace

TEST_CASE("diagnose, explain and run classify every death alike", "[diagnose][classifier]")
{
    TempDir dir;
    for (const char *s : {"prewarm-boot-loop", "delegate-fallback-two-sets", "java-heap-copy",
                          "anr-main-thread-load", "background-reclaim", "image-queue",
                          "split-switch-overlap"}) {
        INFO(s);
        std::string trace = dir.file(std::string(s) + ".jsonl");
        REQUIRE(oomsim({"gen", s, "-o", trace}).status == 0);
        RunResult d = oomsim({"diagnose", trace, "--format", "json"});
        REQUIRE(d.status == 0);
        RunResult x = oomsim({"explain", s});
        REQUIRE(x.status == 0);
        RunResult r = oomsim({"run", s, "-r", "1", "--format", "json"});
        REQUIRE(r.status == 0);
        // run: the reasons of cell 0's deaths (its replication 0 is gen's)
        std::string cell0 = r.out.substr(0, r.out.find("\"device\"", r.out.find("\"device\"") + 1));
        std::set<std::string> by_run;
        size_t by = cell0.find("\"by_reason\": {");
        REQUIRE(by != std::string::npos);
        std::string reasons = cell0.substr(by, cell0.find('}', by) - by);
        for (const char *c : {"low_memory", "java_crash", "native_crash", "anr",
                              "system_reclaim", "watchdog"})
            if (reasons.find(std::string("\"") + c + "\": 0") == std::string::npos)
                by_run.insert(c);
        std::set<std::string> by_diagnose = classes_after(d.out, "\"class\": \"");
        std::set<std::string> by_explain = classes_after(x.out, "The record supports ");
        CHECK(!by_run.empty());
        CHECK(by_diagnose == by_run);
        CHECK(by_explain == by_run);
        // a generated trace's own records match it: confirmed
        CHECK(d.out.find("\"evidence\": \"supported\"") == std::string::npos);
        CHECK(d.out.find("\"evidence\": \"unconfirmed\"") == std::string::npos);
    }
    // iOS records are named as iOS names them
    std::string ios = dir.file("ios.jsonl");
    REQUIRE(oomsim({"gen", "prewarm-boot-loop", "-o", ios}).status == 0);
    RunResult t = oomsim({"diagnose", ios});
    CHECK(t.out.find("trace exit of ExampleApp, JetsamEvent (per-process-limit), "
                     "importance 100 (46 identical records") == 0);
    CHECK(t.out.find("class:     low_memory (confirmed by the simulator's own record") != std::string::npos);
    CHECK(t.out.find("LOW_MEMORY") == std::string::npos);
}

TEST_CASE("diagnose shows its evidence, groups identical records, flags isolated processes",
          "[diagnose]")
{
    TempDir dir;
    std::string log = dir.write(
        "kills.txt",
        "lowmemorykiller: Kill 'com.android.chrome:sandboxed_process0' (4242), uid 99012, "
        "oom_score_adj 900 to free 4223760kB rss, 0kB swap; reason: low watermark is breached\n"
        "        ApplicationExitInfo #0:\n"
        "          timestamp=2024-04-28 19:27:47.967 pid=1234 realUid=10123 packageUid=10123\n"
        "          process=com.example.app reason=6 (ANR) subreason=0 (UNKNOWN) status=0\n"
        "          importance=100 pss=75MB rss=120MB description=user request after error: "
        "Input dispatching timed out state=empty trace=null package=com.example.app\n"
        "        ApplicationExitInfo #1:\n"
        "          timestamp=2024-04-28 19:28:47.967 pid=1240 realUid=10123 packageUid=10123\n"
        "          process=com.example.app reason=6 (ANR) subreason=0 (UNKNOWN) status=0\n"
        "          importance=100 pss=75MB rss=120MB description=user request after error: "
        "Input dispatching timed out state=empty trace=null package=com.example.app\n");
    RunResult r = oomsim({"diagnose", "--exits", log});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out.find("lmkd kill of com.android.chrome:sandboxed_process0, oom_score_adj 900\n"
                     "  evidence:  -, pid 4242, uid 99012, to free 4223760kB rss (the victim's "
                     "own size), 0kB swap, reason \"low watermark is breached\"\n"
                     "  isolated:  an isolated process") == 0);
    CHECK(r.out.find("exit-info exit of com.example.app, reason 6 (ANR), importance 100 (2 "
                     "identical records, the last at 2024-04-28 19:28:47.967 phone-local)\n"
                     "  evidence:  2024-04-28 19:27:47.967 phone-local, pid 1234, uid 10123, package "
                     "com.example.app, pss 76800kB, rss 122880kB, status 0, description "
                     "\"user request after error: Input dispatching timed out\", subreason 0 "
                     "(UNKNOWN)") != std::string::npos);
    // memory-only text is not printed for an ANR
    size_t anr = r.out.find("class:     anr");
    REQUIRE(anr != std::string::npos);
    CHECK(r.out.find("allocation that raised memory", anr) == std::string::npos);
    RunResult j = oomsim({"diagnose", "--exits", log, "--format", "json"});
    CHECK(j.out.find("\"pid\": 4242") != std::string::npos);
    CHECK(j.out.find("\"isolated\": true") != std::string::npos);
    CHECK(j.out.find("\"rss_kb\": 4223760") != std::string::npos);
    CHECK(j.out.find("\"subreason\": \"0 (UNKNOWN)\"") != std::string::npos);
    CHECK(j.out.find("\"package\": \"com.example.app\"") != std::string::npos);
}

TEST_CASE("diagnose: iOS page-shortage kills, and EXC_RESOURCE is not a kill record",
          "[diagnose][ios]")
{
    TempDir dir;
    // a JetsamEvent with reason vm-pageshortage (written as the model
    // writes it: error jetsam_pageshortage), then an EXC_RESOURCE report
    // alone, then a per-process-limit JetsamEvent in the background
    std::string trace = dir.write(
        "ios.jsonl",
        "{\"time_ms\":1,\"stage\":\"exit\",\"kind\":\"exit\",\"error\":\"jetsam_pageshortage\","
        "\"exit\":{\"importance\":400,\"status\":9,\"timestamp_ms\":1}}\n"
        "{\"time_ms\":2,\"stage\":\"exit\",\"kind\":\"exit\",\"error\":\"exc_resource\","
        "\"exit\":{\"importance\":100,\"timestamp_ms\":2}}\n"
        "{\"time_ms\":3,\"stage\":\"exit\",\"kind\":\"exit\",\"error\":\"jetsam\","
        "\"exit\":{\"importance\":400,\"status\":9,\"timestamp_ms\":3}}\n");
    RunResult r = oomsim({"diagnose", trace});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    size_t a = r.out.find("JetsamEvent (vm-pageshortage)");
    size_t b = r.out.find("EXC_RESOURCE RESOURCE_TYPE_MEMORY report");
    size_t c = r.out.find("JetsamEvent (per-process-limit)");
    REQUIRE(a != std::string::npos);
    REQUIRE(b != std::string::npos);
    REQUIRE(c != std::string::npos);
    CHECK(r.out.find("class:     system_reclaim (confirmed by the simulator's own record", a) < b);
    CHECK(r.out.find("class:     unknown (unconfirmed)", b) < c);
    CHECK(r.out.find("the JetsamEvent written at the death", b) < c);
    // a per-process-limit kill is low_memory in the background too
    CHECK(r.out.find("class:     low_memory (confirmed by the simulator's own record", c) != std::string::npos);
}

TEST_CASE("diagnose and explain carry lmkd's kill reason from a generated trace",
          "[diagnose][psi]")
{
    // llm-hot-weights, cell 0 (android-3g, llm-1b with hot weights),
    // replication 4: three kills, all NOT_RESPONDING: the weights dropped
    // under pressure are read back from the phone's eMMC at 40 MB/s, a
    // complete stall of seconds (docs/model.md "The phone's pages")
    TempDir dir;
    std::string trace = dir.file("hot.jsonl");
    REQUIRE(oomsim({"gen", "llm-hot-weights", "--replication", "4", "-o", trace}).status == 0);
    RunResult d = oomsim({"diagnose", trace});
    INFO(d.out << d.err);
    REQUIRE(d.status == 0);
    CHECK(d.out.find("description \"lmkd: NOT_RESPONDING\"") != std::string::npos);
    CHECK(d.out.find("class:     low_memory (confirmed by the simulator's own record") != std::string::npos);
    CHECK(d.out.find("the phone thrashed or stalled on memory") != std::string::npos);
    RunResult x = oomsim({"explain", "llm-hot-weights", "--replication", "4"});
    REQUIRE(x.status == 0);
    CHECK(x.out.find("the phone stalled on memory (a complete PSI stall") != std::string::npos);
    // the result document counts the deaths by lmkd's reason, for PSI-mode cells only
    RunResult r = oomsim({"run", "llm-hot-weights", "-r", "8", "--format", "json"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("\"by_lmkd_reason\": {") != std::string::npos);
    CHECK(r.out.find("\"lmkd_reason\": \"NOT_RESPONDING\"") != std::string::npos);
    RunResult legacy = oomsim({"run", "background-reclaim", "-r", "4", "--format", "json"});
    REQUIRE(legacy.status == 0);
    CHECK(legacy.out.find("by_lmkd_reason") == std::string::npos);
}

namespace {

// One death as a verdict names it: its class, the stage running ("" none)
// and the recovery.
typedef std::tuple<std::string, std::string, std::string> Told;

std::set<Told> told_by_diagnose(const std::string &json_text)
{
    json_error_t je;
    json_t *doc = json_loads(json_text.c_str(), 0, &je);
    INFO(json_text);
    REQUIRE(doc != nullptr);
    std::set<Told> out;
    size_t k;
    json_t *x;
    json_array_foreach(json_object_get(doc, "exits"), k, x) {
        json_t *st = json_object_get(x, "matched_stage");
        out.insert(Told(json_string_value(json_object_get(x, "class")),
                        json_is_string(st) ? json_string_value(st) : "",
                        json_string_value(json_object_get(x, "recovery"))));
    }
    json_decref(doc);
    return out;
}

// explain's "what the evidence supports": "- the death at T s in STAGE: WHY.
// The record supports CLASS (...). Recovery: TEXT."
std::set<Told> told_by_explain(const std::string &text)
{
    std::set<Told> out;
    size_t at = 0;
    while ((at = text.find("\n- the death at ", at)) != std::string::npos) {
        size_t end = text.find('\n', at + 1);
        std::string line = text.substr(at + 1, end - at - 1);
        at = end;
        std::string stage;
        size_t in = line.find(" s in ");
        if (in != std::string::npos && in < line.find(": "))
            stage = line.substr(in + 6, line.find(": ", in) - in - 6);
        size_t c = line.find("The record supports ") + 20;
        std::string cls = line.substr(c, line.find(' ', c) - c);
        size_t r = line.find(". Recovery: ") + 12;
        out.insert(Told(cls, stage, line.substr(r, line.size() - r - 1)));
    }
    return out;
}

// diagnose on a trace of scenario s's cell and explain of the same cell
// name the same deaths alike; false when the cell does not exist.
bool same_advice(TempDir &dir, const std::string &s, int cell)
{
    std::string trace = dir.file("told.jsonl"), c = std::to_string(cell);
    RunResult g = oomsim({"gen", s, "--cell", c, "-o", trace});
    if (g.status != 0)
        return false;
    RunResult d = oomsim({"diagnose", trace, "--format", "json"});
    RunResult x = oomsim({"explain", s, "--cell", c});
    INFO(s << " cell " << cell << "\n" << x.out);
    REQUIRE(d.status == 0);
    REQUIRE(x.status == 0);
    CHECK(told_by_diagnose(d.out) == told_by_explain(x.out));
    return true;
}

} // namespace

TEST_CASE("diagnose and explain give one stage and one advice for every death",
          "[diagnose][explain][advice][many]")
{
    TempDir dir;
    unsigned cells = 0;
    for (const char *s : {"prewarm-boot-loop", "delegate-fallback-two-sets", "java-heap-copy",
                          "anr-main-thread-load", "background-reclaim", "image-queue",
                          "split-switch-overlap", "timeout-retry-storm", "cache-every-start",
                          "llm-chat-grows", "owner-leak", "remote-inference-service"})
        for (int cell = 0; same_advice(dir, s, cell); cell++)
            cells++;
    CHECK(cells >= 20);
    // the imported fixtures, each as the candidate of image-queue's phone and workload
    std::string base = read_file(source_path("scenarios/catalog/teach/image-queue.yaml"));
    std::string head = base.substr(0, base.find("\ncandidates:") + 1);
    std::string tail = base.substr(base.find("\nworkload:") + 1);
    // (the fixtures whose candidate loads as imported: the others leave a value
    // REQUIRED, which the import tests check)
    for (const char *f : {"llama_cpp_android.log", "llama_cpp_android_2025.log",
                          "llama_cpp_2023_early.log", "llama_cpp_2023_copy.log",
                          "llama_cpp_2024_vulkan.log", "benchmark_model_xnnpack.log",
                          "benchmark_model_2020_gpu.log", "onnxruntime_profile.json"}) {
        std::string kind = f[0] == 'l' ? "llama-cpp" : f[0] == 'b' ? "benchmark-model"
                                                                   : "onnxruntime";
        RunResult imp = oomsim({"import", kind, source_path(std::string("tests/data/imports/") + f)});
        INFO(f << "\n" << imp.err);
        REQUIRE(imp.status == 0);
        std::string cand = "candidates:\n", line;
        std::istringstream in(imp.out);
        bool first = true;
        while (std::getline(in, line))
            if (!line.empty() && line[0] != '#') {
                cand += (first ? "  - " : "    ") + line + "\n";
                first = false;
            }
        std::string yaml = dir.file(std::string(f) + ".yaml");
        write_file(yaml, head + cand + tail);
        CHECK(same_advice(dir, yaml, 0));
    }
}

TEST_CASE("diagnose: lmkd's kill line in every form Android 10 to 15 prints, and the kernel's",
          "[diagnose][killlines]")
{
    struct Form {
        const char *line;
        int64_t pid, rss, swap;
        int adj;
        mdl_lmkd_reason reason;
    };
    const Form forms[] = {
        // Android 10 (system/core lmkd.c, ALOGE): no reason, oom_adj
        {"12-04 10:23:45.678  1203  1203 E lowmemorykiller: Kill 'com.a' (101), uid 10234, "
         "oom_adj 906 to free 81234kB", 101, 81234, -1, 906, MDL_LMKD_NONE},
        // Android 11: a reason, min and low swapped in its words
        {"12-04 10:23:45.678  1203  1203 I lowmemorykiller: Kill 'com.a' (102), uid 10234, "
         "oom_adj 900 to free 81234kB; reason: low watermark is breached and swap is low "
         "(1000kB < 204800kB)", 102, 81234, -1, 900, MDL_LMKD_LOW_MEM_AND_SWAP},
        // Android 12 to 15: oom_score_adj, rss and swap
        {"2024-12-04 10:23:45.678  1203  1203 I lowmemorykiller: Kill 'com.a' (103), uid 10234, "
         "oom_score_adj 0 to free 812340kB rss, 201332kB swap; reason: device is low on swap "
         "(1000kB < 204800kB) and thrashing (134%)", 103, 812340, 201332, 0,
         MDL_LMKD_LOW_SWAP_AND_THRASHING},
        {"I lowmemorykiller: Kill 'com.a' (104), uid 1, oom_score_adj 200 to free 1kB rss, 0kB "
         "swap; reason: min watermark is breached even after kill", 104, 1, 0, 200,
         MDL_LMKD_PRESSURE_AFTER_KILL},
        {"Kill 'com.a' (105), uid 1, oom_score_adj 0 to free 1kB rss, 0kB swap; reason: device "
         "is not responding", 105, 1, 0, 0, MDL_LMKD_NOT_RESPONDING},
        {"Kill 'com.a' (106), uid 1, oom_score_adj 0 to free 1kB rss, 0kB swap; reason: device "
         "is in direct reclaim and thrashing (70%)", 106, 1, 0, 0,
         MDL_LMKD_DIRECT_RECL_AND_THRASHING},
        {"Kill 'com.a' (107), uid 1, oom_score_adj 0 to free 1kB rss, 0kB swap; reason: min "
         "watermark is breached and swap utilization is high (95% > 90%)", 107, 1, 0, 0,
         MDL_LMKD_LOW_MEM_AND_SWAP_UTIL},
        {"Kill 'com.a' (108), uid 1, oom_score_adj 0 to free 1kB rss, 0kB swap; reason: low "
         "watermark is breached and thrashing (40%)", 108, 1, 0, 0, MDL_LMKD_LOW_MEM_AND_THRASHING},
        {"Kill 'com.a' (109), uid 1, oom_score_adj 0 to free 1kB rss, 0kB swap; reason: "
         "filecache is low (1kB < 2kB) after thrashing", 109, 1, 0, 0,
         MDL_LMKD_LOW_FILECACHE_AFTER_THRASHING},
        // Android 14 QPR1 on
        {"Kill 'com.a' (110), uid 1, oom_score_adj 905 to free 1kB rss, 0kB swap; reason: low "
         "watermark is breached", 110, 1, 0, 905, MDL_LMKD_LOW_MEM},
        // no kill info: "kb swap", no reason
        {"Kill 'com.a' (111), uid 1, oom_score_adj 905 to free 5kB rss, 7kb swap", 111, 5, 7, 905,
         MDL_LMKD_NONE},
        // the in-kernel lowmemorykiller driver (Android 9 and before)
        {"<6>[ 123.4] lowmemorykiller: Killing 'com.a' (112), adj 906,", 112, -1, -1, 906,
         MDL_LMKD_NONE},
    };
    for (const Form &f : forms) {
        INFO(f.line);
        std::vector<rpl_exit> x = parse(f.line);
        REQUIRE(x.size() == 1);
        CHECK(x[0].source == RPL_LMKD);
        CHECK(std::string(x[0].process) == "com.a");
        CHECK(x[0].pid == f.pid);
        CHECK(x[0].rss_kb == f.rss);
        CHECK(x[0].swap_kb == f.swap);
        CHECK(x[0].adj == f.adj);
        CHECK(x[0].lmkd == f.reason);
    }
    // the times a logcat prefix gives: with a year, epoch seconds, or none
    std::vector<rpl_exit> t = parse(forms[2].line);
    CHECK(t[0].timestamp_ms == 1733307825678);
    t = parse("1733307825.678  1203  1203 I lowmemorykiller: Kill 'a' (1), uid 1, oom_score_adj "
              "0 to free 1kB rss, 0kB swap");
    CHECK(t[0].timestamp_ms == 1733307825678);
    t = parse(forms[0].line);
    CHECK(t[0].timestamp_ms == -1);
    CHECK(t[0].yearless_ms == RPL_YEARLESS(12, 4, 37425678));
    // the year nearest to a record's: late December beside early January
    CHECK(rpl_yearless_near(RPL_YEARLESS(12, 31, 0), 1735776000000 /* 2025-01-02 */) ==
          1735603200000 /* 2024-12-31 */);
}

TEST_CASE("diagnose: the kernel OOM killer's line, in its forms since 4.x", "[diagnose][killlines]")
{
    for (const char *k :
         {"<3>[ 812.1] Out of memory: Killed process 4321 (com.a) total-vm:6123456kB, "
          "anon-rss:1345678kB, file-rss:23456kB, shmem-rss:0kB, UID:10234 pgtables:4567kB "
          "oom_score_adj:0",
          "Killed process 4321 (com.a) total-vm:6123456kB, anon-rss:1345678kB, file-rss:23456kB",
          "Memory cgroup out of memory: Killed process 4321 (com.a) total-vm:1kB, "
          "anon-rss:1345678kB, file-rss:0kB, shmem-rss:0kB"}) {
        INFO(k);
        std::vector<rpl_exit> x = parse(k);
        REQUIRE(x.size() == 1);
        CHECK(x[0].source == RPL_KERNEL);
        CHECK(x[0].kernel_oom == 1);
        CHECK(x[0].pid == 4321);
        CHECK(std::string(x[0].process) == "com.a");
        CHECK(x[0].rss_kb == 1345678);
        rpl_verdict v;
        rpl_diagnose(&x[0], nullptr, &v);
        CHECK(v.kind == RPL_CLASS_KERNEL_OOM);
        CHECK(std::string(v.cls) == "kernel_oom");
        CHECK(v.rec == RPL_REC_KERNEL_OOM);
    }
    // the oom_reaper's line is not a second death
    CHECK(parse("oom_reaper: reaped process 4321 (com.a), now anon-rss:0kB").empty());
    // older kernels print the choice, then the kill: one death, one record
    CHECK(parse("Out of memory: Kill process 4321 (com.a) score 900 or sacrifice child\n"
                "Killed process 4321 (com.a) total-vm:1kB, anon-rss:5kB, file-rss:0kB\n")
              .size() == 1);
}

TEST_CASE("diagnose: a kill line and the exit record of the same pid are one death, and lmkd's "
          "reason picks the advice", "[diagnose][killlines]")
{
    auto record = [](int pid, const char *when, int reason, int importance) {
        return "ApplicationExitInfo #0:\n  timestamp=" + std::string(when) + " pid=" +
               std::to_string(pid) + " realUid=10234 user=0\n  process=com.example.chat "
               "reason=" + std::to_string(reason) + " status=" + (reason == 2 ? "9" : "0") +
               " importance=" + std::to_string(importance) + "\n";
    };
    auto lmkd = [](int pid, const char *when, const char *why) {
        return std::string(when) + "  1203  1203 I lowmemorykiller: Kill 'com.example.chat' (" +
               std::to_string(pid) + "), uid 10234, oom_score_adj 905 to free 8000kB rss, 100kB "
               "swap; reason: " + why + "\n";
    };
    struct Case {
        std::string text;
        size_t records;
        rpl_class cls;
        const char *evidence;
        rpl_recovery rec;
    } cases[] = {
        // within 5 s: one death, confirmed by lmkd's own account; LOW_MEM: a cached app
        {lmkd(500, "12-04 10:23:45.678", "low watermark is breached") +
             record(500, "2026-12-04 10:23:46.912", 3, 400),
         1, RPL_CLASS_SYSTEM_RECLAIM, "confirmed", RPL_REC_CACHED},
        // swap low: anonymous memory
        {record(501, "2026-12-04 10:23:46.912", 3, 400) +
             lmkd(501, "12-04 10:23:45.000", "low watermark is breached and swap is low (1kB < "
                                             "2kB)"),
         1, RPL_CLASS_SYSTEM_RECLAIM, "confirmed", RPL_REC_SWAP_LOW},
        // thrashing: the mapped weights
        {lmkd(502, "12-04 10:23:45.678", "low watermark is breached and thrashing (40%)") +
             record(502, "2026-12-04 10:23:46.000", 3, 100),
         1, RPL_CLASS_LOW_MEMORY, "confirmed", RPL_REC_THRASHING},
        // another pid, or the same pid 10 s apart: two records
        {lmkd(503, "12-04 10:23:45.678", "low watermark is breached") +
             record(504, "2026-12-04 10:23:45.700", 3, 400),
         2, RPL_CLASS_SYSTEM_RECLAIM, "supported", RPL_REC_CACHED},
        {lmkd(505, "12-04 10:23:35.000", "low watermark is breached") +
             record(505, "2026-12-04 10:23:45.700", 3, 400),
         2, RPL_CLASS_SYSTEM_RECLAIM, "supported", RPL_REC_CACHED},
        // SIGNALED 9 and the kernel's OOM kill of the same pid: kernel_oom, confirmed
        {"12-04 10:30:00.100     0     0 E kernel  : Out of memory: Killed process 506 "
         "(com.example.chat) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB\n" +
             record(506, "2026-12-04 10:30:00.412", 2, 100),
         1, RPL_CLASS_KERNEL_OOM, "confirmed", RPL_REC_KERNEL_OOM},
    };
    for (Case &c : cases) {
        INFO(c.text);
        std::vector<rpl_exit> x = parse(c.text);
        x.resize(rpl_exits_join(x.data(), x.size()));
        REQUIRE(x.size() == c.records);
        const rpl_exit &r = x.back(); // the exit-info record
        CHECK(r.source == RPL_EXIT_INFO);
        CHECK((r.joined_line > 0) == (c.records == 1));
        rpl_verdict v;
        rpl_diagnose(&r, nullptr, &v);
        CHECK(v.kind == c.cls);
        CHECK(std::string(v.evidence) == c.evidence);
        if (c.records == 1)
            CHECK(v.rec == c.rec);
    }
    // across files, as a person runs it: the logcat and the dumpsys dump
    TempDir dir;
    write_file(dir.file("logcat.txt"), lmkd(600, "12-04 10:23:45.678", "low watermark is "
                                            "breached and swap is low (1kB < 2kB)"));
    write_file(dir.file("exit-info.txt"), record(600, "2026-12-04 10:23:46.000", 3, 400));
    RunResult d = oomsim({"diagnose", "--exits", dir.file("logcat.txt"), "--exits",
                          dir.file("exit-info.txt")});
    INFO(d.out << d.err);
    REQUIRE(d.status == 0);
    CHECK(d.out.find("exit-info exit of com.example.chat") == 0);
    CHECK(d.out.find("lmkd kill of") == std::string::npos);
    CHECK(d.out.find("joined with lmkd's kill line 1 (the same pid, 0.3 s apart), lmkd's "
                     "reason LOW_MEM_AND_SWAP") != std::string::npos);
    CHECK(d.out.find("class:     system_reclaim (confirmed)") != std::string::npos);
    CHECK(d.out.find("swap (zram) was nearly full") != std::string::npos);
}

TEST_CASE("diagnose: a kill line joins the nearest record of its pid in the window",
          "[diagnose][killlines]")
{
    auto record = [](const char *when, int importance) {
        return "ApplicationExitInfo #0:\n  timestamp=" + std::string(when) + " pid=507 "
               "realUid=10234 user=0\n  process=com.example.chat reason=3 status=0 "
               "importance=" + std::to_string(importance) + "\n";
    };
    std::vector<rpl_exit> x = parse(record("2026-12-04 10:23:41.000", 100) +
                                    "12-04 10:23:45.678  1203  1203 I lowmemorykiller: Kill "
                                    "'com.example.chat' (507), uid 10234, oom_score_adj 905 to "
                                    "free 8000kB rss, 100kB swap; reason: low watermark is "
                                    "breached\n" +
                                    record("2026-12-04 10:23:46.000", 400));
    x.resize(rpl_exits_join(x.data(), x.size()));
    REQUIRE(x.size() == 2);
    CHECK(x[0].joined_line == 0); // 4.7 s away
    CHECK(x[1].joined_line > 0);  // 0.3 s away
    CHECK(x[1].joined_gap_ms == 322);
}

TEST_CASE("diagnose and explain: the kernel's OOM kill and an isolated process keep their own "
          "class and advice", "[diagnose][killlines]")
{
    // a trace's exit written by the page model for the kernel's OOM killer
    trc_event e;
    memset(&e, 0, sizeof e);
    e.has = TRC_F_KIND | TRC_F_EXIT | TRC_F_EXIT_REASON | TRC_F_ERROR;
    e.kind = TRC_EXIT_EVENT;
    e.stage = TRC_EXIT;
    e.exit_reason = TRC_LOW_MEMORY;
    e.exit.has = TRC_X_REASON_CODE | TRC_X_STATUS | TRC_X_IMPORTANCE;
    e.exit.reason_code = 2;
    e.exit.status = 9;
    e.exit.importance = 400; // in the background: still not system_reclaim
    snprintf(e.error, sizeof e.error, "kernel_oom");
    rpl_exit x;
    rpl_exit_of_event(&e, 0, &x);
    rpl_verdict v;
    rpl_diagnose_told(&x, "inference", 1, 0, &v);
    CHECK(v.kind == RPL_CLASS_KERNEL_OOM);
    CHECK(v.rec == RPL_REC_KERNEL_OOM);
    rpl_diagnose_told(&x, "load", 0, 0, &v);
    CHECK(v.rec == RPL_REC_START_UP); // a boot loop first
    // an isolated process's death: advice about that process
    std::vector<rpl_exit> iso = parse(
        "ApplicationExitInfo #0:\n  timestamp=2026-12-04 10:00:00.000 pid=700 realUid=99012\n"
        "  process=com.example.chat:sandboxed_process0 reason=3 (LOW_MEMORY) importance=100\n");
    REQUIRE(iso.size() == 1);
    rpl_diagnose(&iso[0], nullptr, &v);
    CHECK(v.rec == RPL_REC_ISOLATED);
    CHECK(std::string(v.recovery).find("not the app") != std::string::npos);
}

TEST_CASE("diagnose: LOW_MEM of a visible process, and a UTC kill line beside a local record",
          "[diagnose][killlines]")
{
    // LOW_MEM of a visible process (a lowered lowmem_min_oom_score): not "was cached"
    std::vector<rpl_exit> x = parse(
        "Kill 'com.example.chat' (700), uid 1, oom_score_adj 250 to free 1kB rss, 0kB swap; "
        "reason: low watermark is breached\n");
    rpl_verdict v;
    rpl_diagnose(&x[0], nullptr, &v);
    CHECK(v.kind == RPL_CLASS_LOW_MEMORY);
    CHECK(v.rec != RPL_REC_CACHED);
    // logcat -v epoch is UTC; dumpsys prints the phone's zone (UTC+1 here): one death
    std::vector<rpl_exit> y = parse(
        "1733307825.678  1203  1203 I lowmemorykiller: Kill 'com.example.chat' (701), uid 1, "
        "oom_score_adj 905 to free 1kB rss, 0kB swap; reason: low watermark is breached\n"
        "ApplicationExitInfo #0:\n  timestamp=2024-12-04 11:23:46.000 pid=701 realUid=1\n"
        "  process=com.example.chat reason=3 (LOW_MEMORY) status=0 importance=400\n");
    y.resize(rpl_exits_join(y.data(), y.size()));
    REQUIRE(y.size() == 1);
    CHECK(y[0].joined_line == 1);
}

TEST_CASE("diagnose: every process of the app is its own, and --process PACKAGE says what it left "
          "out", "[diagnose]")
{
    // dumpsys activity exit-info lists every process of the package: two
    // deaths of the :ml service process, one of the main process
    TempDir dir;
    write_file(dir.file("exit-info.txt"),
               "ApplicationExitInfo #0:\n  timestamp=2026-12-04 10:23:46.912 pid=501 "
               "realUid=10234 user=0\n  process=com.example.chat:ml reason=3 (LOW_MEMORY) "
               "status=0 importance=300\nApplicationExitInfo #1:\n  timestamp=2026-12-04 "
               "10:20:46.912 pid=488 realUid=10234 user=0\n  process=com.example.chat:ml "
               "reason=3 (LOW_MEMORY) status=0 importance=300\nApplicationExitInfo #2:\n  "
               "timestamp=2026-12-04 09:20:46.912 pid=400 realUid=10234 user=0\n  "
               "process=com.example.chat reason=3 (LOW_MEMORY) status=0 importance=400\n");
    RunResult all = oomsim({"diagnose", "--exits", dir.file("exit-info.txt")});
    REQUIRE(all.status == 0);
    CHECK(all.out.find("exit-info exit of com.example.chat:ml") != std::string::npos);
    CHECK(all.out.find("exit-info exit of com.example.chat,") != std::string::npos);
    CHECK(all.out.find("not read") == std::string::npos);
    RunResult main = oomsim({"diagnose", "--exits", dir.file("exit-info.txt"), "--process",
                             "com.example.chat"});
    INFO(main.out << main.err);
    REQUIRE(main.status == 0);
    CHECK(main.out.find("com.example.chat:ml, reason") == std::string::npos);
    CHECK(main.out.find("exit-info exit of com.example.chat,") != std::string::npos);
    CHECK(main.out.find("2 deaths of other processes of this app were not read (--process "
                        "names one): com.example.chat:ml (2)") != std::string::npos);
    RunResult js = oomsim({"diagnose", "--exits", dir.file("exit-info.txt"), "--process",
                           "com.example.chat", "--format", "json"});
    REQUIRE(js.status == 0);
    CHECK(js.out.find("\"process\": \"com.example.chat:ml\",\n      \"deaths\": 2") !=
          std::string::npos);
    // a process of another name is not the app's other process
    RunResult other = oomsim({"diagnose", "--exits", dir.file("exit-info.txt"), "--process",
                              "com.example"});
    CHECK(other.out.find("not read") == std::string::npos);
}

TEST_CASE("diagnose --process leaves out other apps' kill lines, says how many, and keeps the "
          "app's own",
          "[diagnose]")
{
    // logcat holds lmkd's kills of every process: Play services and the
    // dialer freed for the phone, and the app itself
    TempDir dir;
    write_file(dir.file("logcat.txt"),
               "12-04 10:23:45.678  1203  1203 I lowmemorykiller: Kill 'com.google.android.gms' "
               "(4242), uid 10099, oom_score_adj 800 to free 45000kB rss, 0kB swap; reason: low "
               "watermark is breached\n"
               "12-04 10:23:45.878  1203  1203 I lowmemorykiller: Kill 'com.android.dialer' "
               "(4250), uid 10051, oom_score_adj 900 to free 30000kB rss, 0kB swap; reason: low "
               "watermark is breached\n"
               "12-04 10:23:46.678  1203  1203 I lowmemorykiller: Kill 'com.example.chat' (501), "
               "uid 10234, oom_score_adj 0 to free 900000kB rss, 0kB swap; reason: low watermark "
               "is breached\n"
               "12-04 10:23:47.678  1203  1203 I lowmemorykiller: Kill 'com.google.android.gms' "
               "(4300), uid 10099, oom_score_adj 800 to free 41000kB rss, 0kB swap; reason: low "
               "watermark is breached\n");
    // without --process every line is read and judged
    RunResult all = oomsim({"diagnose", "--exits", dir.file("logcat.txt")});
    REQUIRE(all.status == 0);
    CHECK(all.out.find("lmkd kill of com.google.android.gms") != std::string::npos);
    CHECK(all.out.find("not read") == std::string::npos);
    RunResult app = oomsim({"diagnose", "--exits", dir.file("logcat.txt"), "--process",
                            "com.example.chat"});
    INFO(app.out << app.err);
    REQUIRE(app.status == 0);
    CHECK(app.out.find("lmkd kill of com.example.chat, oom_score_adj 0") != std::string::npos);
    CHECK(app.out.find("lmkd kill of com.google.android.gms") == std::string::npos);
    CHECK(app.out.find("lmkd kill of com.android.dialer") == std::string::npos);
    CHECK(app.out.find("3 kill lines of other apps' processes were not read (--process names "
                       "this app's; the phone freeing memory, not this app's deaths): "
                       "com.google.android.gms (2), com.android.dialer (1)") !=
          std::string::npos);
    RunResult js = oomsim({"diagnose", "--exits", dir.file("logcat.txt"), "--process",
                           "com.example.chat", "--format", "json"});
    REQUIRE(js.status == 0);
    CHECK(js.out.find("\"other_apps\": [\n    {\n      \"process\": "
                      "\"com.google.android.gms\",\n      \"kills\": 2") != std::string::npos);
    CHECK(js.out.find("\"other_processes\": []") != std::string::npos);
    // the app's :ml process named: the main process's line is the app's
    // other process, the others still other apps'
    RunResult ml = oomsim({"diagnose", "--exits", dir.file("logcat.txt"), "--process",
                           "com.example.chat:ml"});
    CHECK(ml.out.find("1 death of other processes of this app was not read") !=
          std::string::npos);
    CHECK(ml.out.find("3 kill lines of other apps' processes") != std::string::npos);
    CHECK(ml.out.find("no exit records") == std::string::npos);
}

TEST_CASE("diagnose: a record without a trace still asks for its class's own evidence",
          "[diagnose]")
{
    // a native crash read alone: the stage is not known, and the tombstone
    // is what names the delegate or path that crashed
    TempDir dir;
    write_file(dir.file("crash.txt"),
               "ApplicationExitInfo #0:\n  timestamp=2026-12-04 10:23:46.912 pid=501 realUid=10234"
               "\n  process=com.example.chat reason=5 (CRASH_NATIVE) status=11 importance=100\n"
               "ApplicationExitInfo #1:\n  timestamp=2026-12-04 10:20:46.912 pid=488 realUid=10234"
               "\n  process=com.example.chat reason=6 (ANR) status=0 importance=100\n"
               "ApplicationExitInfo #2:\n  timestamp=2026-12-04 10:10:46.912 pid=470 realUid=10234"
               "\n  process=com.example.chat reason=3 (LOW_MEMORY) status=0 importance=100\n");
    RunResult r = oomsim({"diagnose", "--exits", dir.file("crash.txt")});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out.find("missing:   a stage trace of the same process and time: the stage that was "
                     "running is not known; and the tombstone: the delegate or path that "
                     "crashed") != std::string::npos);
    CHECK(r.out.find("not known; and the main-thread trace of the blocking stage") !=
          std::string::npos);
    // a LOW_MEMORY record names its class: only the trace is missing
    CHECK(r.out.find("the allocation that raised memory are not known\n") != std::string::npos);
}

TEST_CASE("diagnose: dumpsys and logcat times are the phone's clock, --tz puts them on UTC",
          "[diagnose]")
{
    TempDir dir;
    // dumpsys prints the phone's wall clock, logcat -v year too, -v epoch UTC
    std::string log = dir.write(
        "x.txt",
        "ApplicationExitInfo(timestamp=2024-04-28 19:27:47.967 pid=12345 realUid=10123 "
        "process=com.example.app reason=3 (LOW_MEMORY) importance=400 description=lmk)\n"
        "2024-04-28 19:20:00.000  1203  1203 I lowmemorykiller: Kill 'com.example.app' (12001), "
        "uid 10123, oom_score_adj 905 to free 1kB rss, 0kB swap; reason: low watermark is "
        "breached\n"
        "1714332000.000  1203  1203 I lowmemorykiller: Kill 'com.example.app' (12002), uid "
        "10123, oom_score_adj 905 to free 1kB rss, 0kB swap; reason: low watermark is breached\n"
        "04-28 19:00:00.000  1203  1203 I lowmemorykiller: Kill 'com.example.app' (12003), uid "
        "10123, oom_score_adj 905 to free 1kB rss, 0kB swap; reason: low watermark is breached\n");
    RunResult r = oomsim({"diagnose", "--exits", log});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out.find("evidence:  2024-04-28 19:27:47.967 phone-local, pid 12345") !=
          std::string::npos);
    CHECK(r.out.find("evidence:  2024-04-28 19:20:00.000 phone-local, pid 12001") !=
          std::string::npos);
    // the same kill twice, the last one's time as its log gives it
    CHECK(r.out.find("(2 identical records, the last at 04-28 19:00:00.000 phone-local (no "
                     "year))\n  evidence:  2024-04-28 19:20:00.000 UTC, pid 12002") !=
          std::string::npos);
    CHECK(r.out.find(" UTC, pid 12345") == std::string::npos);
    // the phone was at +05:30: 19:27:47.967 there is 13:57:47.967 UTC
    r = oomsim({"diagnose", "--exits", log, "--tz", "+05:30"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("evidence:  2024-04-28 13:57:47.967 UTC, pid 12345") != std::string::npos);
    CHECK(r.out.find("evidence:  2024-04-28 13:50:00.000 UTC, pid 12001") != std::string::npos);
    // now on one clock, the three kills are told as one run
    CHECK(r.out.find("(3 identical records, the last at 04-28 19:00:00.000 phone-local (no "
                     "year))") != std::string::npos);
    r = oomsim({"diagnose", "--exits", log, "--tz", "-0800", "--format", "json"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("\"timestamp_ms\": 1714361267967,\n      \"clock\": \"UTC\"") !=
          std::string::npos);
    r = oomsim({"diagnose", "--exits", log, "--format", "json"});
    CHECK(r.out.find("\"timestamp_ms\": 1714332467967,\n      \"clock\": \"phone-local\"") !=
          std::string::npos);
    CHECK(oomsim({"diagnose", "--exits", log, "--tz", "UTC"}).status == 0);
    for (const char *bad : {"+8:10", "+15:00", "Asia/Shanghai", "8", "+08:0", "-", "+1:"}) {
        INFO(bad);
        RunResult b = oomsim({"diagnose", "--exits", log, "--tz", bad});
        CHECK(b.status == 2);
        CHECK(b.err.find("--tz is the phone's offset from UTC") != std::string::npos);
        CHECK(b.out.empty());
    }
}
