// oomsim diagnose: which death of a trace an exit record is of.  A record
// matches only a death of the same process and app version within the
// window, one record per death (the nearest), and a trace's own record is
// said to be the simulator's (docs/traces.md "oomsim diagnose").
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <jansson.h>

#include "shim/shim.hpp"

using namespace shim;

namespace {

// The trace's exit events: one per time (ms of 2024-04-28 19:27:xx UTC),
// of com.example.app version 5.2.0, an inference running at each.
std::string trace_of(TempDir &dir, const std::vector<long long> &deaths)
{
    std::string t;
    long long ms = 1;
    for (long long at : deaths) {
        t += "{\"time_ms\":" + std::to_string(ms++) + ",\"stage\":\"inference\",\"kind\":"
             "\"begin\",\"session\":0}\n";
        t += "{\"time_ms\":" + std::to_string(ms++) + ",\"stage\":\"exit\",\"kind\":\"exit\","
             "\"exit_reason\":\"system_reclaim\",\"process\":\"com.example.app\","
             "\"app_version\":\"5.2.0\",\"exit\":{\"reason_code\":3,\"importance\":400,"
             "\"timestamp_ms\":" + std::to_string(at) + "}}\n";
    }
    return dir.write("t.jsonl", t);
}

// A dumpsys record at 19:27:SS.mmm (text) of process and version.
std::string record(const std::string &when, const std::string &process,
                   const std::string &version)
{
    return "ApplicationExitInfo(timestamp=2024-04-28 19:27:" + when + " process=" + process +
           " reason=3 (LOW_MEMORY) importance=400 versionCode=" + version + ")\n";
}

const long long AT_47 = 1714332467000; // 19:27:47.000 UTC

// diagnose --format json: each record's matched, evidence and outbid.
struct verdict {
    bool matched, outbid, own;
    std::string evidence, missing;
};

std::vector<verdict> verdicts(const std::vector<std::string> &args)
{
    std::vector<std::string> a = {"diagnose"};
    a.insert(a.end(), args.begin(), args.end());
    a.push_back("--format");
    a.push_back("json");
    RunResult r = oomsim(a);
    INFO(r.err);
    REQUIRE(r.status == 0);
    json_error_t e;
    json_t *doc = json_loads(r.out.c_str(), 0, &e);
    REQUIRE(doc != nullptr);
    std::vector<verdict> out;
    size_t k;
    json_t *x;
    json_array_foreach(json_object_get(doc, "exits"), k, x)
    {
        out.push_back({json_is_true(json_object_get(x, "matched")),
                       json_is_true(json_object_get(x, "outbid")),
                       json_is_true(json_object_get(x, "own_record")),
                       json_string_value(json_object_get(x, "evidence")),
                       json_string_value(json_object_get(x, "missing"))});
    }
    json_decref(doc);
    return out;
}

} // namespace

TEST_CASE("diagnose: a record of another process or another version is not this death",
          "[diagnose][match]")
{
    TempDir dir;
    std::string trace = trace_of(dir, {AT_47});
    std::string f = dir.write("r.txt", record("47.500", "com.example.app:inference", "5.2.0") +
                                           record("47.500", "com.example.app", "5.1.0") +
                                           record("47.400", "com.example.app", "5.2.0"));
    std::vector<verdict> v = verdicts({trace, "--exits", f});
    REQUIRE(v.size() == 3);
    // the service process of the same app, the same instant: not matched
    CHECK_FALSE(v[0].matched);
    CHECK(v[0].evidence == "supported");
    CHECK(v[0].missing.find("a trace exit of the same process within 5 s") == 0);
    // the main process of another version: not matched either, and told why
    CHECK_FALSE(v[1].matched);
    CHECK(v[1].evidence == "supported");
    CHECK(v[1].missing == "a trace of the same app version: the trace has a death of this "
                          "process at this time, of another version (5.1.0 here, 5.2.0 in the "
                          "trace)");
    // the same process and version: matched, confirmed, not the trace's own
    CHECK(v[2].matched);
    CHECK(v[2].evidence == "confirmed");
    CHECK_FALSE(v[2].own);
}

TEST_CASE("diagnose: a record without a version ties to a build only when the trace ran one",
          "[diagnose][match]")
{
    TempDir dir;
    // dumpsys exit-info as most builds print it: no version field
    std::string f = dir.write("r.txt", "ApplicationExitInfo(timestamp=2024-04-28 19:27:47.300 "
                                       "process=com.example.app reason=3 (LOW_MEMORY) "
                                       "importance=400)\n");
    std::vector<verdict> one = verdicts({trace_of(dir, {AT_47}), "--exits", f});
    REQUIRE(one.size() == 1);
    CHECK(one[0].matched);
    CHECK(one[0].evidence == "confirmed");
    CHECK(one[0].missing.find("the record names no version: tied to the trace's only build, "
                              "5.2.0") != std::string::npos);
    // the trace ran two builds (an update at 19:27:40): which one died is not known
    std::string two = dir.write(
        "two.jsonl",
        "{\"time_ms\":1,\"stage\":\"load\",\"kind\":\"begin\",\"app_version\":\"5.1.0\"}\n"
        "{\"time_ms\":2,\"stage\":\"exit\",\"kind\":\"exit\",\"exit_reason\":\"system_reclaim\","
        "\"process\":\"com.example.app\",\"exit\":{\"reason_code\":3,\"importance\":400,"
        "\"timestamp_ms\":1714332460000}}\n"
        "{\"time_ms\":3,\"stage\":\"inference\",\"kind\":\"begin\",\"session\":0,"
        "\"app_version\":\"5.2.0\"}\n"
        "{\"time_ms\":4,\"stage\":\"exit\",\"kind\":\"exit\",\"exit_reason\":\"system_reclaim\","
        "\"process\":\"com.example.app\",\"exit\":{\"reason_code\":3,\"importance\":400,"
        "\"timestamp_ms\":" + std::to_string(AT_47) + "}}\n");
    std::vector<verdict> v = verdicts({two, "--exits", f});
    REQUIRE(v.size() == 1);
    CHECK(v[0].matched);
    CHECK(v[0].evidence == "supported");
    CHECK(v[0].missing.find("the app version: the record names none, and the trace ran two "
                            "builds or more") == 0);
}

TEST_CASE("diagnose: deaths of one process, each within an hour of the one before, are a loop",
          "[diagnose][match]")
{
    TempDir dir;
    auto rec = [](const std::string &at, const std::string &process, int reason) {
        return "ApplicationExitInfo(timestamp=2024-04-28 " + at + " process=" + process +
               " reason=" + std::to_string(reason) + " importance=100)\n";
    };
    // three kills 20 min apart, another process once, an exit for another reason
    std::string f = dir.write("r.txt", rec("10:00:00.000", "com.example.app", 3) +
                                           rec("10:20:00.000", "com.example.app", 3) +
                                           rec("10:40:00.000", "com.example.app", 6) +
                                           rec("10:41:00.000", "com.example.app:ml", 3) +
                                           rec("10:42:00.000", "com.example.app", 10));
    RunResult r = oomsim({"diagnose", "--exits", f});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out.find("a loop: 3 deaths of com.example.app, each within an hour of the one "
                     "before (2400.0 s from the first to the last)") != std::string::npos);
    CHECK(r.out.find("deaths of com.example.app:ml") == std::string::npos);
    CHECK(r.out.find("the app dies again after it comes back") != std::string::npos);
    // reclaims in the background: a loop, with the background's advice
    std::string bg = dir.write("b.txt", "ApplicationExitInfo(timestamp=2024-04-28 10:00:00.000 "
                                        "process=com.example.app reason=3 importance=400)\n"
                                        "ApplicationExitInfo(timestamp=2024-04-28 10:30:00.000 "
                                        "process=com.example.app reason=3 importance=400)\n");
    RunResult b = oomsim({"diagnose", "--exits", bg});
    CHECK(b.out.find("each a reclaim in the background, the system's right") !=
          std::string::npos);
    // more than an hour apart: two deaths, no loop
    std::string apart = dir.write("a.txt", rec("10:00:00.000", "com.example.app", 3) +
                                               rec("11:00:00.001", "com.example.app", 3));
    CHECK(oomsim({"diagnose", "--exits", apart}).out.find("a loop") == std::string::npos);
    // a generated boot loop: every death of the trace, in JSON
    std::string trace = dir.file("p.jsonl");
    REQUIRE(oomsim({"gen", "prewarm-boot-loop", "-o", trace}).status == 0);
    RunResult j = oomsim({"diagnose", trace, "--format", "json"});
    REQUIRE(j.status == 0);
    json_error_t e;
    json_t *doc = json_loads(j.out.c_str(), 0, &e);
    REQUIRE(doc != nullptr);
    json_t *loops = json_object_get(doc, "loops");
    REQUIRE(json_array_size(loops) == 1);
    json_t *l = json_array_get(loops, 0);
    CHECK(json_integer_value(json_object_get(l, "deaths")) ==
          (json_int_t)json_array_size(json_object_get(doc, "exits")));
    CHECK(json_integer_value(json_object_get(l, "start_up")) ==
          json_integer_value(json_object_get(l, "deaths")));
    json_decref(doc);
    CHECK(oomsim({"diagnose", trace}).out.find("every one during start-up: a boot loop") !=
          std::string::npos);
}

TEST_CASE("diagnose: one record per death, the nearest, and an outbid record takes a free death",
          "[diagnose][match]")
{
    TempDir dir;
    // three records within 5 s of one death: only the nearest (0.1 s) is it
    std::string one = trace_of(dir, {AT_47});
    std::string three = dir.write("3.txt", record("47.900", "com.example.app", "5.2.0") +
                                               record("47.100", "com.example.app", "5.2.0") +
                                               record("50.000", "com.example.app", "5.2.0"));
    std::vector<verdict> v = verdicts({one, "--exits", three});
    REQUIRE(v.size() == 3);
    CHECK_FALSE(v[0].matched);
    CHECK(v[0].outbid);
    CHECK(v[0].evidence == "supported");
    CHECK(v[0].missing == "a death of its own in the trace: the death nearest to it (0.900 s "
                          "away) is matched by a record nearer to it (0.100 s away), and no "
                          "other death fits it; one record per death");
    CHECK(v[1].matched);
    CHECK_FALSE(v[1].outbid);
    CHECK(v[1].evidence == "confirmed");
    CHECK_FALSE(v[2].matched);
    CHECK(v[2].outbid);
    // the text form says it too
    RunResult t = oomsim({"diagnose", one, "--exits", three});
    CHECK(t.out.find("matched by a record nearer to it (0.100 s away)") != std::string::npos);
    // two deaths 2.8 s apart: the record outbid at the first takes the second
    TempDir two_dir;
    std::string two = trace_of(two_dir, {AT_47, AT_47 + 2800});
    std::string pair = two_dir.write("2.txt", record("47.300", "com.example.app", "5.2.0") +
                                                  record("47.100", "com.example.app", "5.2.0"));
    std::vector<verdict> w = verdicts({two, "--exits", pair});
    REQUIRE(w.size() == 2);
    CHECK(w[0].matched);
    CHECK_FALSE(w[0].outbid);
    CHECK(w[1].matched);
    // two outbid records and one free death: the nearer of them takes it,
    // whatever the input's order
    TempDir far_dir;
    std::string far = trace_of(far_dir, {AT_47, AT_47 + 3000});
    std::string three_near = far_dir.write(
        "3.txt", record("47.000", "com.example.app", "5.2.0") +
                     record("46.500", "com.example.app", "5.2.0") +
                     record("47.800", "com.example.app", "5.2.0"));
    std::vector<verdict> f = verdicts({far, "--exits", three_near});
    REQUIRE(f.size() == 3);
    CHECK(f[0].matched);
    CHECK_FALSE(f[1].matched); // 3.5 s from the free death, 2.2 s for the last
    CHECK(f[1].outbid);
    CHECK(f[2].matched);
    // a tie goes to the earlier record
    std::string tie = two_dir.write("tie.txt", record("47.200", "com.example.app", "5.2.0") +
                                                   record("46.800", "com.example.app", "5.2.0"));
    std::vector<verdict> u = verdicts({one, "--exits", tie});
    REQUIRE(u.size() == 2);
    CHECK(u[0].matched);
    CHECK(u[1].outbid);
}

TEST_CASE("diagnose: the trace's own records are the simulator's, a logged one is not",
          "[diagnose][match]")
{
    TempDir dir;
    std::string trace = trace_of(dir, {AT_47});
    std::vector<verdict> own = verdicts({trace});
    REQUIRE(own.size() == 1);
    CHECK(own[0].matched);
    CHECK(own[0].own);
    CHECK(own[0].evidence == "confirmed");
    std::vector<verdict> logged = verdicts(
        {trace, "--exits", dir.write("r.txt", record("47.000", "com.example.app", "5.2.0"))});
    REQUIRE(logged.size() == 1);
    CHECK(logged[0].matched);
    CHECK_FALSE(logged[0].own);
    // a generated trace names the process and version of every exit: its
    // app's package (`app.package`, com.example.app) and `app.version`, "1"
    // when none is given
    std::string gen = dir.file("g.jsonl");
    REQUIRE(oomsim({"gen", "java-heap-copy", "-o", gen}).status == 0);
    std::string g = read_file(gen);
    size_t at = g.find("\"kind\": \"exit\"");
    if (at == std::string::npos)
        at = g.find("\"kind\":\"exit\"");
    REQUIRE(at != std::string::npos);
    std::string line = g.substr(g.rfind('\n', at) + 1, g.find('\n', at) - g.rfind('\n', at));
    CHECK(line.find("\"app_version\":\"1\"") != std::string::npos);
    CHECK(line.find("\"process\":\"") != std::string::npos);
}

TEST_CASE("diagnose: the scenario's app.version is the version its records name",
          "[diagnose][match]")
{
    TempDir dir;
    std::string base = read_file(source_path("scenarios/catalog/teach/java-heap-copy.yaml"));
    std::string yaml = dir.write("v.yaml", base + "app: {version: 5.2.0}\n");
    std::string gen = dir.file("g.jsonl");
    RunResult g = oomsim({"gen", yaml, "-o", gen});
    INFO(g.err);
    REQUIRE(g.status == 0);
    std::string text = read_file(gen);
    CHECK(text.find("\"app_version\":\"5.2.0\"") != std::string::npos);
    CHECK(text.find("\"app_version\":\"1\"") == std::string::npos);
    // its own records name the version and match themselves
    std::vector<verdict> mine = verdicts({gen});
    REQUIRE_FALSE(mine.empty());
    CHECK(mine[0].own);
    // not a token: refused at the value
    std::string bad = dir.write("b.yaml", base + "app: {version: \"5 2\"}\n");
    RunResult b = oomsim({"validate", bad});
    CHECK(b.status == 1);
    CHECK(b.err.find("b.yaml:") != std::string::npos);
    CHECK(b.err.find("a token from [A-Za-z0-9._-]") != std::string::npos);
}

TEST_CASE("app.package and app.executable name the processes as the phone does",
          "[diagnose][match]")
{
    TempDir dir;
    std::string base = read_file(source_path("scenarios/catalog/teach/java-heap-copy.yaml"));
    std::string yaml = dir.write("p.yaml", base + "app: {package: org.example.chat2, "
                                                  "version: 7.1}\n");
    std::string gen = dir.file("g.jsonl");
    REQUIRE(oomsim({"gen", yaml, "-o", gen}).status == 0);
    std::string text = read_file(gen);
    CHECK(text.find("\"process\":\"org.example.chat2\"") != std::string::npos);
    CHECK(text.find("\"process\":\"bytes-in-heap\"") == std::string::npos);
    // the narration's record names the process and the build, as on-call matches them
    RunResult x = oomsim({"explain", yaml});
    INFO(x.out << x.err);
    CHECK(x.out.find("ApplicationExitInfo of app version 7.1 (dumpsys prints none: the app's "
                     "upload of the record adds it): process=org.example.chat2 reason=4 "
                     "(CRASH)") != std::string::npos);
    // the drill hides the reason, not the process
    RunResult q = oomsim({"explain", yaml, "--drill", "--answers", dir.write("a.txt", "1\n")});
    CHECK(q.out.find("process=org.example.chat2 reason=(hidden)") != std::string::npos);
    // only what Android's package parser accepts; each refusal names the value's place
    for (const char *bad : {"chat", "com.1example", "com.example-app", "com._x",
                            "com.example.a-very-long-package-name-indeed"}) {
        std::string b = dir.write("b.yaml", base + "app: {package: " + bad + "}\n");
        RunResult r = oomsim({"validate", b});
        INFO(bad << ": " << r.err);
        CHECK(r.status == 1);
        CHECK(r.err.find("b.yaml:") != std::string::npos);
        CHECK(r.err.find("an Android package name") != std::string::npos);
    }
    for (const char *good : {"a.b", "com.example.app_2", "A.B9"}) {
        std::string g2 = dir.write("g.yaml", base + "app: {package: " + good + "}\n");
        CHECK(oomsim({"validate", g2}).status == 0);
    }
    std::string e = dir.write("e.yaml", base + "app: {executable: \"Chat App\"}\n");
    RunResult r = oomsim({"validate", e});
    CHECK(r.status == 1);
    CHECK(r.err.find("e.yaml:") != std::string::npos);
}

TEST_CASE("diagnose: a JetsamEvent that does not list the trace's process is read whole",
          "[diagnose][match]")
{
    TempDir dir;
    // reports written for ExampleApp, a trace of another app (OtherApp)
    std::string ips = dir.file("ips"), mine = dir.file("a.jsonl"), other = dir.file("b.jsonl");
    REQUIRE(oomsim({"gen", "llm-chat-grows", "--cell", "8", "-o", mine, "--exits", ips})
                .status == 0);
    std::string watchdog = dir.write(
        "w.yaml", read_file(source_path("scenarios/catalog/teach/launch-watchdog.yaml")) +
                      "app: {executable: OtherApp}\n");
    REQUIRE(oomsim({"gen", watchdog, "-o", other}).status == 0);
    RunResult d = oomsim({"diagnose", other, "--exits", ips});
    INFO(d.out << d.err);
    REQUIRE(d.status == 0);
    // the trace names in-launch, which the reports do not list: every process
    // they killed is read, and none matches the other app's timeline
    CHECK(d.out.find("JetsamEvent entry of") == 0);
    CHECK(d.out.find("not listed") == std::string::npos);
    CHECK(d.out.find("(confirmed)") == std::string::npos);
    // the app's own trace: its entry, matched
    RunResult m = oomsim({"diagnose", mine, "--exits", ips});
    CHECK(m.out.find("JetsamEvent entry of ExampleApp, reason vm-pageshortage") == 0);
    // frontmost when the phone ran out: a foreground death
    CHECK(m.out.find("class:     low_memory (confirmed)") != std::string::npos);
    // --process names the entry to read, listed or not
    RunResult p = oomsim({"diagnose", other, "--exits", ips, "--process", "OtherApp"});
    CHECK(p.out.find("not listed") != std::string::npos);
}
