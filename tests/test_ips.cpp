// JetsamEvent reports (.ips) read by `oomsim diagnose` (replay/ips.c):
// the entry of the app or every killed process, each cause classed, the
// largest process named, a listed-but-not-killed entry unconfirmed, a
// directory of reports read in name order, and every malformed report
// refused with one line naming the file and what was wrong.  The fixtures
// are in tests/data/ips (its README says where their layout comes from).
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <jansson.h>

#include "replay/replay.h"
#include "results/results.h"
#include "shim/shim.hpp"

using namespace shim;

namespace {

std::string ips(const char *name) { return source_path(std::string("tests/data/ips/") + name); }

struct Parsed {
    int rc = -1;
    std::string err;
    std::vector<rpl_exit> v;
};

Parsed parse(const std::string &text, const char *process)
{
    Parsed p;
    rpl_exit *x = nullptr;
    size_t n = 0;
    sim_error err;
    sim_error_clear(&err);
    p.rc = rpl_ips_parse(text.data(), text.size(), "r.ips", process, &x, &n, &err);
    p.err = err.msg;
    for (size_t k = 0; k < n; k++)
        p.v.push_back(x[k]);
    std::free(x);
    return p;
}

rpl_verdict verdict(const rpl_exit &x)
{
    rpl_verdict v;
    rpl_diagnose(&x, nullptr, &v);
    return v;
}

const char *const header =
    "{\"bug_type\":\"298\",\"timestamp\":\"2024-03-02 10:15:00.42 +0800\"}\n";

} // namespace

TEST_CASE("ips: the app's fc-thrashing kill in front, its figures from the report")
{
    std::string text = read_file(ips("JetsamEvent-2024-03-02-101500.ips"));
    REQUIRE(rpl_ips_detect(text.data(), text.size()) == 1);
    Parsed p = parse(text, "LLMChat");
    REQUIRE(p.rc == SIM_OK);
    REQUIRE(p.v.size() == 1);
    const rpl_exit &x = p.v[0];
    CHECK(std::string(x.cause) == "fc-thrashing");
    CHECK(x.pid == 1203);
    // rpages 78211 x 16384 bytes / 1024 = 1251376 kB; lifetimeMax 80112 pages
    CHECK(x.rss_kb == 1251376);
    CHECK(x.lifetime_max_kb == 80112 * 16);
    CHECK(x.priority == 100);
    CHECK(x.importance == 100); // frontmost
    CHECK(std::string(x.states) == "frontmost,resume");
    CHECK(std::string(x.largest) == "LLMChat");
    // free 2961 pages, compressorSize 51234 pages
    CHECK(x.free_kb == 2961 * 16);
    CHECK(x.compressor_kb == 51234 * 16);
    // 10:15:00.42 at +08:00 is 02:15:00.420 UTC: 2024-03-02 is day 19784
    CHECK(x.timestamp_ms == ((19784LL * 24 + 2) * 60 + 15) * 60000 + 420);
    rpl_verdict v = verdict(x);
    CHECK(std::string(v.cls) == "low_memory"); // frontmost: a foreground death
    CHECK(std::string(v.evidence) == "supported");
    CHECK(v.rec == RPL_REC_THRASHING);
    CHECK(std::string(v.supports).find("down to the app in front") != std::string::npos);
    CHECK(std::string(v.supports).find("fc-thrashing") != std::string::npos);
    CHECK(std::string(v.supports).find("it was the largest process") != std::string::npos);
}

TEST_CASE("ips: a suspended app's page-shortage kill names the larger process")
{
    Parsed p = parse(read_file(ips("JetsamEvent-2024-03-02-101800.ips")), "LLMChat");
    REQUIRE(p.rc == SIM_OK);
    REQUIRE(p.v.size() == 1);
    CHECK(p.v[0].importance == 400); // suspended: not frontmost
    rpl_verdict v = verdict(p.v[0]);
    CHECK(std::string(v.cls) == "system_reclaim");
    CHECK(v.rec == RPL_REC_RELEASE_IN_BACKGROUND);
    CHECK(std::string(v.supports).find("another process was the largest (Camera)") !=
          std::string::npos);
}

TEST_CASE("ips: per-process-limit is low_memory, listed but not killed is unconfirmed")
{
    Parsed p = parse(read_file(ips("JetsamEvent-2025-06-14-091230.ips")), "OcrDemo");
    REQUIRE(p.rc == SIM_OK);
    REQUIRE(p.v.size() == 1);
    // the page size of the report: 92802 pages x 16384 = 1520467968 bytes
    CHECK(p.v[0].rss_kb * 1024 == 1520467968LL);
    CHECK(std::string(verdict(p.v[0]).cls) == "low_memory");
    Parsed q = parse(read_file(ips("JetsamEvent-2024-03-02-102000.ips")), "LLMChat");
    REQUIRE(q.v.size() == 1);
    CHECK(q.v[0].jetsam_listed == 1);
    CHECK(q.v[0].cause[0] == '\0');
    rpl_verdict v = verdict(q.v[0]);
    CHECK(std::string(v.cls) == "unknown");
    CHECK(std::string(v.evidence) == "unconfirmed");
    CHECK(std::string(v.supports).find("not killed in this event") != std::string::npos);
    // a name the report does not list
    Parsed r = parse(read_file(ips("JetsamEvent-2024-03-02-102000.ips")), "Maps");
    REQUIRE(r.v.size() == 1);
    CHECK(r.v[0].jetsam_listed == 0);
    CHECK(std::string(verdict(r.v[0]).supports).find("does not list Maps") != std::string::npos);
    // without a name: every killed process (the idle daemon here)
    Parsed all = parse(read_file(ips("JetsamEvent-2024-03-02-102000.ips")), nullptr);
    REQUIRE(all.v.size() == 1);
    CHECK(std::string(all.v[0].process) == "assistantd");
    CHECK(std::string(all.v[0].cause) == "idle-exit");
}

TEST_CASE("ips: names are matched as the report cuts them, causes classed by XNU's table")
{
    std::string body = "{\"memoryStatus\":{\"pageSize\":16384},\"processes\":["
                       "{\"name\":\"HealthMentalHealthWidgetExtensio\",\"reason\":\"highwater\"},"
                       "{\"name\":\"a\",\"reason\":\"vnode-limit\"},"
                       "{\"name\":\"b\",\"reason\":\"vm-compressor-space-shortage\"},"
                       "{\"name\":\"c\",\"reason\":\"something-new\"}]}\n";
    Parsed p = parse(header + body, "HealthMentalHealthWidgetExtension");
    REQUIRE(p.v.size() == 1);
    CHECK(p.v[0].jetsam_listed == 1);
    CHECK(std::string(verdict(p.v[0]).cls) == "low_memory"); // over its own soft limit
    Parsed all = parse(header + body, nullptr);
    REQUIRE(all.v.size() == 4);
    CHECK(std::string(verdict(all.v[1]).cls) == "other");
    CHECK(std::string(verdict(all.v[2]).cls) == "system_reclaim");
    CHECK(std::string(verdict(all.v[3]).cls) == "unknown");
    CHECK(std::string(verdict(all.v[3]).evidence) == "unconfirmed");
}

TEST_CASE("ips: a longer name that begins with the app's is another process")
{
    // The report lists `llmd` alone, killed; the app is `llm`: the name is
    // compared whole (a name under 32 characters with its end), so the
    // report does not list the app and gives it no cause; `llmd` itself,
    // and a name cut at 32 characters, still match.
    std::string body = "{\"memoryStatus\":{\"pageSize\":16384},\"processes\":["
                       "{\"name\":\"llmd\",\"reason\":\"per-process-limit\","
                       "\"rpages\":100}]}\n";
    Parsed p = parse(header + body, "llm");
    REQUIRE(p.rc == SIM_OK);
    REQUIRE(p.v.size() == 1);
    CHECK(p.v[0].jetsam_listed == 0);
    CHECK(p.v[0].cause[0] == '\0');
    CHECK(std::string(verdict(p.v[0]).supports).find("does not list llm") != std::string::npos);
    Parsed d = parse(header + body, "llmd");
    REQUIRE(d.v.size() == 1);
    CHECK(d.v[0].jetsam_listed == 1);
    CHECK(std::string(d.v[0].cause) == "per-process-limit");
}

TEST_CASE("ips: vm-thrashing, the older name, is the compressor's thrashing")
{
    // xnu-11417.101.15's kern_memorystatus.h keeps, for ReportCrash,
    // kMemorystatusKilledVMThrashing defined as
    // kMemorystatusKilledVMCompressorThrashing: an older report's
    // "vm-thrashing" is "vm-compressor-thrashing" (not the file cache's
    // fc-thrashing), the system's reclaim, and its advice that of thrashing.
    std::string body = "{\"memoryStatus\":{\"pageSize\":16384},\"processes\":["
                       "{\"name\":\"llm\",\"reason\":\"vm-thrashing\",\"rpages\":100}]}\n";
    Parsed p = parse(header + body, "llm");
    REQUIRE(p.rc == SIM_OK);
    REQUIRE(p.v.size() == 1);
    CHECK(std::string(p.v[0].cause) == "vm-compressor-thrashing");
    CHECK(std::string(verdict(p.v[0]).cls) == "system_reclaim");
}

TEST_CASE("ips: malformed reports are refused naming the file and what was wrong")
{
    struct Case {
        std::string text, says;
    } cases[] = {
        {"{\"bug_type\":\"298\"}", "one line only"},
        {"{\"bug_type\":\"309\"}\n{}", "bug_type 309"},
        {"{\"timestamp\":\"x\"}\n{}", "no bug_type"},
        {"{\"bug_type\":\"298\"\n{}", "r.ips:1:"},
        {std::string(header) + "{\"processes\": [}", "r.ips:2:"},
        {std::string(header) + "[]", "must be a JSON object"},
        {std::string(header) + "{\"processes\":[]}", "no `pageSize`"},
        {std::string(header) + "{\"pageSize\":1000,\"processes\":[]}", "power of two"},
        {std::string(header) + "{\"memoryStatus\":{\"pageSize\":16384}}", "no `processes` list"},
        {std::string(header) + "{\"memoryStatus\":{\"pageSize\":16384},\"processes\":[{}]}",
         "processes[0]: `name`"},
        {std::string(header) +
             "{\"memoryStatus\":{\"pageSize\":16384},\"processes\":[{\"name\":\"a\",\"rpages\":-1}]}",
         "processes[0]: `rpages`"},
        {std::string(header) +
             "{\"memoryStatus\":{\"pageSize\":16384},\"processes\":[{\"name\":\"a\",\"states\":[1]}]}",
         "`states` must list strings"},
        {std::string(header) + "{\"memoryStatus\":{\"pageSize\":16384},\"largestProcess\":3,"
                               "\"processes\":[]}",
         "`largestProcess`"},
    };
    for (const Case &c : cases) {
        INFO(c.text);
        Parsed p = parse(c.text, "a");
        CHECK(p.rc == SIM_EINPUT);
        CHECK(p.err.find(c.says) != std::string::npos);
        CHECK(p.err.find("r.ips") != std::string::npos);
    }
}

TEST_CASE("ips: oomsim diagnose reads a directory of reports, one verdict per report")
{
    RunResult r = oomsim({"diagnose", "--exits", source_path("tests/data/ips"), "--process",
                          "LLMChat", "--format", "json"});
    REQUIRE(r.status == 0);
    json_error_t je;
    json_t *doc = json_loads(r.out.c_str(), 0, &je);
    REQUIRE(doc != nullptr);
    json_t *exits = json_object_get(doc, "exits");
    // the four reports in name order: LLMChat's fc-thrashing and page-shortage
    // kills, listed but not killed, and OcrDemo's report not listing it
    struct Want {
        const char *reason, *report, *cls;
        bool listed;
    } want[] = {{"fc-thrashing", "JetsamEvent (fc-thrashing)", "low_memory", true},
                {"vm-pageshortage", "JetsamEvent (vm-pageshortage)", "system_reclaim", true},
                {nullptr, "JetsamEvent", "unknown", true},
                {nullptr, "JetsamEvent", "unknown", false}};
    REQUIRE(json_array_size(exits) == 4);
    for (size_t k = 0; k < 4; k++) {
        INFO(k);
        json_t *e = json_array_get(exits, k);
        json_t *reason = json_object_get(e, "jetsam_reason");
        if (want[k].reason != nullptr)
            CHECK(std::string(json_string_value(reason)) == want[k].reason);
        else
            CHECK(json_is_null(reason));
        CHECK(std::string(json_string_value(json_object_get(e, "report"))) == want[k].report);
        CHECK(std::string(json_string_value(json_object_get(e, "class"))) == want[k].cls);
        CHECK(json_is_true(json_object_get(e, "listed")) == want[k].listed);
        CHECK(std::string(json_string_value(json_object_get(e, "source"))) == "JetsamEvent");
    }
    json_decref(doc);
    RunResult text = oomsim({"diagnose", "--exits", ips("JetsamEvent-2024-03-02-101800.ips")});
    REQUIRE(text.status == 0);
    CHECK(text.out.find("JetsamEvent entry of LLMChat, reason vm-pageshortage, priority 0") !=
          std::string::npos);
    CHECK(text.out.find("largest process Camera") != std::string::npos);
    // a report that killed nothing, given alone without --process
    TempDir d;
    std::string none = d.write("none.ips", std::string(header) +
                                               "{\"pageSize\":16384,\"processes\":[{\"name\":\"a\"}]}\n");
    RunResult nothing = oomsim({"diagnose", "--exits", none});
    CHECK(nothing.status == 1);
    CHECK(nothing.err.find("killed no process: give --process NAME") != std::string::npos);
    std::string bad = d.write("bad.ips", "{\"bug_type\":\"298\"}\n{\"processes\": 3}\n");
    RunResult refused = oomsim({"diagnose", "--exits", bad});
    CHECK(refused.status == 1);
    CHECK(refused.out.empty());
    CHECK(refused.err.find("bad.ips: not a JetsamEvent report") != std::string::npos);
    TempDir empty;
    CHECK(oomsim({"diagnose", "--exits", empty.path()}).status == 1);
    CHECK(oomsim({"diagnose", "--exits", none, "--process", ""}).status == 2);
}

TEST_CASE("ips: a real Analytics folder: other reports skipped, a malformed JetsamEvent refused")
{
    TempDir d;
    std::string llm = read_file(ips("JetsamEvent-2024-03-02-101500.ips"));
    d.write("JetsamEvent-2024-03-02-101500.ips", llm);
    d.write("._JetsamEvent-2024-03-02-101500.ips", "\x00\x05\x16\x07 resource fork");
    d.write("LLMChat-2024-03-02-101400.ips",
            "{\"bug_type\":\"309\",\"app_name\":\"LLMChat\"}\n{\"exception\":{}}\n");
    d.write("JetsamEvent-2024-03-02-101600.ips",
            std::string(header) + "{\"pageSize\":16384,\"processes\":[{\"name\":\"a\"}]}\n");
    d.write("notes.ips", "the phone got hot\n");
    RunResult r = oomsim({"diagnose", "--exits", d.path()});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("JetsamEvent entry of LLMChat, reason fc-thrashing") != std::string::npos);
    CHECK(r.err.find("LLMChat-2024-03-02-101400.ips: skipped, not a JetsamEvent report") !=
          std::string::npos);
    CHECK(r.err.find("101600.ips: skipped, the JetsamEvent killed no process") !=
          std::string::npos);
    CHECK(r.err.find("notes.ips: skipped, not an iOS report") != std::string::npos);
    CHECK(r.err.find("._") == std::string::npos); // hidden files are not read
    // a report with a leading blank line and a byte order mark is read the same
    d.write("JetsamEvent-2024-03-02-101500.ips", "\xEF\xBB\xBF\n" + llm);
    RunResult bom = oomsim({"diagnose", "--exits", d.file("JetsamEvent-2024-03-02-101500.ips")});
    CHECK(bom.status == 0);
    CHECK(bom.out.find("reason fc-thrashing") != std::string::npos);
    // a malformed JetsamEvent in the folder is refused, with nothing printed
    d.write("JetsamEvent-2024-03-02-101700.ips", std::string(header) + "{\"processes\": [}\n");
    RunResult bad = oomsim({"diagnose", "--exits", d.path()});
    CHECK(bad.status == 1);
    CHECK(bad.out.empty());
    CHECK(bad.err.find("JetsamEvent-2024-03-02-101700.ips:2:") != std::string::npos);
    // only skipped files: nothing to diagnose
    TempDir only;
    only.write("notes.ips", "the phone got hot\n");
    RunResult none = oomsim({"diagnose", "--exits", only.path()});
    CHECK(none.status == 1);
    CHECK(none.err.find("no record to diagnose") != std::string::npos);
}

TEST_CASE("ips: duplicate keys are refused, long names are cut on a character")
{
    Parsed dup = parse(std::string(header) + "{\"pageSize\":16384,\"processes\":[{\"name\":"
                                             "\"a\",\"reason\":\"idle-exit\",\"reason\":\"x\"}]}",
                       nullptr);
    CHECK(dup.rc == SIM_EINPUT);
    CHECK(dup.err.find("duplicate") != std::string::npos);
    // 70 two-byte characters: the record keeps whole characters only
    std::string name;
    for (int k = 0; k < 70; k++)
        name += "\xC3\xA9";
    Parsed p = parse(std::string(header) + "{\"pageSize\":16384,\"largestProcess\":\"" + name +
                         "\",\"processes\":[]}",
                     "Maps");
    REQUIRE(p.rc == SIM_OK);
    REQUIRE(p.v.size() == 1);
    std::string kept = p.v[0].largest;
    CHECK(kept.size() % 2 == 0);
    CHECK(kept.size() >= 120);
    rpl_verdict v = verdict(p.v[0]);
    std::string s = v.supports;
    size_t at = s.find("largest (");
    REQUIRE(at != std::string::npos);
    std::string cut = s.substr(at + 9, s.find(')', at) - at - 9);
    CHECK(cut.size() == 40); // 20 whole characters of 2 bytes
}

TEST_CASE("ips: with a trace, the app is the trace's process and its kill is confirmed")
{
    // the trace of LLMChat: an inference begun, then its exit at 02:15:00.000
    // UTC, within 5 s of the fc-thrashing report (10:15:00.42 +0800); the
    // 10:20 report lists LLMChat without killing it: no match, unconfirmed
    TempDir dir;
    std::string trace = dir.write(
        "llm.jsonl",
        "{\"time_ms\":1,\"stage\":\"load\",\"kind\":\"begin\",\"process\":\"LLMChat\"}\n"
        "{\"time_ms\":2,\"stage\":\"load\",\"kind\":\"end\"}\n"
        "{\"time_ms\":3,\"stage\":\"inference\",\"kind\":\"begin\",\"session\":0}\n"
        "{\"time_ms\":4,\"stage\":\"exit\",\"kind\":\"exit\",\"exit_reason\":\"system_reclaim\","
        "\"exit\":{\"importance\":100,\"timestamp_ms\":1709345700000}}\n");
    RunResult r = oomsim({"diagnose", trace, "--exits", ips("JetsamEvent-2024-03-02-101500.ips"),
                          "--exits", ips("JetsamEvent-2024-03-02-102000.ips"), "--format",
                          "json"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    json_error_t je;
    json_t *doc = json_loads(r.out.c_str(), 0, &je);
    REQUIRE(doc != nullptr);
    json_t *exits = json_object_get(doc, "exits");
    REQUIRE(json_array_size(exits) == 2); // LLMChat's entry in each, no --process given
    json_t *killed = json_array_get(exits, 0), *listed = json_array_get(exits, 1);
    CHECK(std::string(json_string_value(json_object_get(killed, "process"))) == "LLMChat");
    CHECK(std::string(json_string_value(json_object_get(killed, "evidence"))) == "confirmed");
    CHECK(std::string(json_string_value(json_object_get(killed, "matched_stage"))) ==
          "inference");
    CHECK(std::string(json_string_value(json_object_get(listed, "evidence"))) == "unconfirmed");
    CHECK(json_is_null(json_object_get(listed, "matched_stage")));
    json_decref(doc);
}

TEST_CASE("ips: gen --exits writes the page model's JetsamEvent, which diagnose confirms")
{
    // The LLM of tests/test_memstat.cpp: two band-0 processes killed by
    // fc-thrashing at 0.2 s and 2.096 s, the app in front at 3.9925 s (so
    // the report is JetsamEvent-1970-01-01-000003.ips, the trace's clock).
    TempDir d;
    std::string yaml =
        "name: llm\nhorizon: 60s\nreplications: 1\ndevices:\n  - name: phone\n    os: ios\n"
        "    ram: 4096MiB\n    system: 1024MiB\n    kill: {rule: jetsam, limit: 3500MiB}\n"
        "    pages: {critical: 5%, idle: 10%, pressure: 15%}\n"
        "    others: [{band: 0, count: 2, size: 100MiB}]\n    compressor: {ratio: 1}\n"
        "    storage_read: 200MiB/s\ncandidates:\n  - id: chat-llm\n    digest: 0a1b\n"
        "    runtime: test-1\n    parts:\n      m:\n        file: 1500MiB\n"
        "        load: {mode: mmap, time: 100ms, file_hot: true}\n"
        "        prepare: {time: 100ms}\n        inference: {time: 100ms}\n"
        "app: {baseline: {native: 1700MiB}, executable: ChatLlm}\n"
        "workload: {path: [cold_start, {requests: {every: 200ms, for: 20s}}]}\n";
    std::string scn = d.write("llm.yaml", yaml);
    RunResult g = oomsim({"gen", scn, "-o", d.file("t.jsonl"), "--exits", d.file("ev"),
                          "--exits-format", "ips"});
    INFO(g.err);
    REQUIRE(g.status == 0);
    CHECK(g.err.find("1 JetsamEvent report") != std::string::npos);
    std::string text = read_file(d.file("ev/JetsamEvent-1970-01-01-000003.ips"));
    REQUIRE(rpl_ips_detect(text.data(), text.size()) == 1);
    // the header line, then the report: the app killed in front, its band
    json_error_t je;
    size_t nl = text.find('\n');
    json_t *head = json_loadb(text.data(), nl, 0, &je);
    REQUIRE(head != nullptr);
    CHECK(std::string(json_string_value(json_object_get(head, "bug_type"))) == "298");
    CHECK(std::string(json_string_value(json_object_get(head, "timestamp"))) ==
          "1970-01-01 00:00:03.99 +0000");
    json_decref(head);
    Parsed p = parse(text, "ChatLlm"); // the process as iOS names it: `app.executable`
    REQUIRE(p.rc == SIM_OK);
    REQUIRE(p.v.size() == 1);
    CHECK(std::string(p.v[0].cause) == "fc-thrashing");
    CHECK(p.v[0].priority == 100);
    CHECK(std::string(p.v[0].states) == "frontmost");
    // diagnose: the report, lined up with the trace's own exit, confirmed
    RunResult r = oomsim({"diagnose", d.file("t.jsonl"), "--exits", d.file("ev"), "--process",
                          "ChatLlm"});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out.find("reason fc-thrashing, priority 100") != std::string::npos);
    CHECK(r.out.find("low_memory (confirmed)") != std::string::npos); // in front
    // the trace alone names the cause too
    RunResult t = oomsim({"diagnose", d.file("t.jsonl")});
    CHECK(t.out.find("JetsamEvent (fc-thrashing)") != std::string::npos);
    // --exits needs an iOS device that gives others; --exits-format needs --exits
    RunResult u = oomsim({"gen", d.write("d.yaml", "name: x\nhorizon: 10s\nreplications: 1\n"
                                         "devices: [android-4g]\ncandidates:\n  - id: m\n"
                                         "    digest: 0a1b\n    runtime: t-1\n    parts:\n"
                                         "      m: {file: 1MiB, load: {mode: mmap, time: 1ms},"
                                         " prepare: {time: 1ms}, inference: {time: 1ms}}\n"
                                         "workload: {path: [cold_start]}\n"),
                          "-o", d.file("u.jsonl"), "--exits", d.file("none")});
    CHECK(u.status == 2);
    CHECK(u.err.find("writes no JetsamEvent") != std::string::npos);
    RunResult v = oomsim({"gen", scn, "-o", d.file("v.jsonl"), "--exits-format", "ips"});
    CHECK(v.status == 2);
    CHECK(v.err.find("--exits-format needs --exits") != std::string::npos);
}

TEST_CASE("ips: gen --exits writes one report in 30 s, the next with the kills between")
{
    // A boot loop: the app's 1200 MiB baseline is over its 1000 MiB limit
    // at every cold start, and the user reopens it 100 ms after each death.
    // Each death is a per-process-limit kill, which posts at once
    // (memorystatus_kill_process_sync), but memorystatus_post_snapshot
    // sends none within 30 s of the last (JETSAM_SNAPSHOT_TIMEOUT_SECS): the
    // first death's report at 0 s, then the snapshot the second death made
    // fills with every life killed until the first death past 30 s, which
    // sends it.  Its buffer holds MDL_JETSAM_PROCS entries: the idle
    // process and 71 lives of the app, each killed; later kills are not
    // listed (XNU's full snapshot).
    TempDir d;
    std::string yaml =
        "name: loop\nhorizon: 35s\nreplications: 1\ndevices:\n  - name: phone\n    os: ios\n"
        "    ram: 4096MiB\n    system: 1024MiB\n    kill: {rule: jetsam, limit: 1000MiB}\n"
        "    others: [{band: 0, count: 1, size: 100MiB}]\ncandidates:\n  - id: m\n"
        "    digest: 0a1b\n    runtime: test-1\n    parts:\n"
        "      m: {file: 1MiB, load: {mode: mmap, time: 1ms}, prepare: {time: 1ms},"
        " inference: {time: 1ms}}\n"
        "app: {baseline: {native: 1200MiB}}\n"
        "workload: {path: [cold_start], relaunch: 100ms}\n";
    RunResult g = oomsim({"gen", d.write("loop.yaml", yaml), "-o", d.file("t.jsonl"), "--exits",
                          d.file("ev")});
    INFO(g.err);
    REQUIRE(g.status == 0);
    CHECK(g.err.find(": 2 JetsamEvent reports") != std::string::npos);
    std::string first = read_file(d.file("ev/JetsamEvent-1970-01-01-000000.ips"));
    auto count = [](const std::string &t, const std::string &w) {
        size_t n = 0;
        for (size_t at = t.find(w); at != std::string::npos; at = t.find(w, at + 1))
            n++;
        return n;
    };
    CHECK(count(first, "\"per-process-limit\"") == 1);
    // the second: the first death past 30 s, within the first 100 ms of 30 s
    std::string second = read_file(d.file("ev/JetsamEvent-1970-01-01-000030.ips"));
    CHECK(count(second, "\"per-process-limit\"") == MDL_JETSAM_PROCS - 1);
    CHECK(count(second, "\"pid\"") == MDL_JETSAM_PROCS);
    // two reports of one second would be named apart, -1, -2, ... after the first
    char name[64];
    res_ips_name(30 * 1000000 + 5, 2, name, sizeof name);
    CHECK(std::string(name) == "JetsamEvent-1970-01-01-000030-2.ips");
}

TEST_CASE("ips: a highwater kill is explained as a kill under system pressure", "[ips]")
{
    // memorystatus_pick_action: MEMORYSTATUS_KILL_HIWATER only below the
    // pressure level or on an unhealthy system
    rpl_exit x;
    memset(&x, 0, sizeof x);
    x.source = RPL_IOS;
    x.ios = RPL_IOS_JETSAM;
    x.jetsam_event = 1;
    x.jetsam_listed = 1;
    x.timestamp_ms = x.pid = x.uid = x.pss_kb = x.rss_kb = -1;
    x.priority = -1;
    snprintf(x.process, sizeof x.process, "%s", "llmd");
    snprintf(x.cause, sizeof x.cause, "%s", "highwater");
    snprintf(x.states, sizeof x.states, "%s", "daemon");
    rpl_verdict v;
    rpl_diagnose_all(&x, 1, nullptr, 0, &v);
    CHECK(v.kind == RPL_CLASS_LOW_MEMORY);
    CHECK(std::string(v.supports).find("over its high-water mark, its soft limit, which kills "
                                       "only when the system is under memory pressure") !=
          std::string::npos);
    snprintf(x.cause, sizeof x.cause, "%s", "per-process-limit");
    rpl_diagnose_all(&x, 1, nullptr, 0, &v);
    CHECK(std::string(v.supports).find("over its own footprint limit") != std::string::npos);
}

TEST_CASE("ips: an idle-band death with no JetsamEvent is read as MetricKit's count", "[ips]")
{
    // the exit event the model writes for the app killed in band 0:
    // memorystatus_should_post_snapshot posts no report, so the record is
    // MetricKit's background count, which names no cause and gives no time
    // and no footprint; the cause after the colon is the simulator's
    trc_event e;
    memset(&e, 0, sizeof e);
    e.has = TRC_F_KIND | TRC_F_EXIT | TRC_F_EXIT_REASON | TRC_F_ERROR;
    e.kind = TRC_EXIT_EVENT;
    e.stage = TRC_EXIT;
    e.exit_reason = TRC_SYSTEM_RECLAIM;
    e.exit.has = TRC_X_IMPORTANCE;
    e.exit.importance = 400;
    snprintf(e.error, sizeof e.error, "metrickit_background:idle-exit");
    rpl_exit x;
    rpl_exit_of_event(&e, 0, &x);
    CHECK(x.source == RPL_IOS);
    CHECK(x.ios == RPL_IOS_METRICKIT);
    CHECK(std::string(x.cause).empty());
    CHECK(x.timestamp_ms == -1);
    rpl_verdict v;
    rpl_diagnose(&x, nullptr, &v);
    CHECK(v.kind == RPL_CLASS_SYSTEM_RECLAIM);
    CHECK(std::string(v.supports).find("no JetsamEvent") == 0);
    CHECK(std::string(v.supports).find("cumulativeMemoryPressureExitCount") !=
          std::string::npos);
    CHECK(std::string(rpl_ios_report_name(x.ios)).find("MetricKit") != std::string::npos);
}
