// oomsim diagnose: dumpsys exit-info in both layouts and lmkd lines,
// classified with evidence levels (docs/on-call.md), matched to a trace.
#include <catch2/catch.hpp>

#include <cctype>
#include <cstring>
#include <set>
#include <string>

#include "replay/replay.h"
#include "shim/shim.hpp"

using namespace shim;

namespace {

std::vector<rpl_exit> parse(const std::string &text)
{
    rpl_exit *v = nullptr;
    size_t n = 0;
    sim_error err;
    sim_error_clear(&err);
    REQUIRE(rpl_exits_parse(text.data(), text.size(), "x", &v, &n, &err) == SIM_OK);
    std::vector<rpl_exit> out(v, v + n);
    free(v);
    return out;
}

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
                     "\n      \"reason_code\": 3,\n      \"reason\": \"LOW_MEMORY\",\n      "
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
    CHECK(t.out.find("class:     system_reclaim (confirmed)") != std::string::npos);
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
    CHECK(t.out.find("trace exit of an unnamed process, JetsamEvent (per-process-limit), "
                     "importance 100 (46 identical records") == 0);
    CHECK(t.out.find("class:     low_memory (confirmed)") != std::string::npos);
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
                     "own size), reason \"low watermark is breached\"\n"
                     "  isolated:  an isolated process") == 0);
    CHECK(r.out.find("exit-info exit of com.example.app, reason 6 (ANR), importance 100 (2 "
                     "identical records, the last at 2024-04-28 19:28:47.967 UTC)\n"
                     "  evidence:  2024-04-28 19:27:47.967 UTC, pid 1234, uid 10123, package "
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
    CHECK(r.out.find("class:     system_reclaim (confirmed)", a) < b);
    CHECK(r.out.find("class:     unknown (unconfirmed)", b) < c);
    CHECK(r.out.find("the JetsamEvent written at the death", b) < c);
    // a per-process-limit kill is low_memory in the background too
    CHECK(r.out.find("class:     low_memory (confirmed)", c) != std::string::npos);
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
    CHECK(d.out.find("class:     low_memory (confirmed)") != std::string::npos);
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
