// Every teaching scenario shows what its `about` says: each claim of the
// about (the class, the stage, the instant or window of the death, the
// figures it quotes, what the fixed cell does) is checked against the
// run, the trace of replication 0 and its diagnosis.  The teaching
// catalog's values are fixed, so the figures are the model's, not luck;
// the shares read from the results are checked within the bounds the
// about gives.  Each scenario's test carries the tag [about:NAME]; those of
// llm-chat-grows, owner-leak and remote-inference-service live beside the
// features they teach (test_generation, test_owners, test_processes), and
// the last test here checks that no teaching scenario is without one.
#include <catch2/catch.hpp>

#include <jansson.h>

#include <string>
#include <vector>

#include "shim/shim.hpp"
#include "teaching.hpp"

using namespace shim;

using namespace teaching;

TEST_CASE("teaching: anr-main-thread-load is an ANR 5 s into the load at every start",
          "[teaching][about:anr-main-thread-load]")
{
    Results r("anr-main-thread-load");
    // at every start: a boot loop, one ANR per start, no other death
    CHECK(r.at(0, "deaths.any_rate") == 1.0);
    CHECK(r.at(0, "boot_loops.rate") == 1.0);
    CHECK(r.at(0, "deaths.by_reason.anr") == r.at(0, "deaths.per_replication.mean") * 20);
    // the memory is fine: the peak is far under the limit
    CHECK(r.at(0, "peak.app_bytes.max") < r.at(0, "limits.foreground_bytes") / 4);
    // the worker thread starts normally and serves every request
    CHECK(r.at(1, "deaths.any_rate") == 0.0);
    CHECK(r.completed_share(1) == 1.0);
    std::vector<Death> d = deaths("anr-main-thread-load");
    REQUIRE(d.size() >= 2);
    for (const Death &x : d) {
        CHECK(x.cls == "anr");
        CHECK(x.stage == "load");
        CHECK(x.importance == 100);
    }
    // 5 s into the load, which begins at the start
    CHECK(d[0].at_s == Approx(5.0).margin(0.001));
}

TEST_CASE("teaching: background-reclaim dies idle at the first spike after the switch",
          "[teaching][about:background-reclaim]")
{
    Results r("background-reclaim");
    CHECK(r.at(0, "deaths.any_rate") == 1.0);
    CHECK(r.at(0, "deaths.by_reason.system_reclaim") == 20); // one per session
    std::vector<Death> d = deaths("background-reclaim");
    REQUIRE(d.size() == 1);
    CHECK(d[0].cls == "system_reclaim");
    CHECK(d[0].importance == 400);
    CHECK(d[0].stage.empty()); // idle, holding its model
    std::string e = explain("background-reclaim");
    // survives the spike at 30 s in front, leaves at 40 s, dies at the spike at 60 s
    CHECK(has(e, "30.000 s     600 MiB  other apps' memory spikes"));
    CHECK(has(e, "40.000 s     600 MiB  the user switches away"));
    CHECK(d[0].at_s == Approx(60.0).margin(0.001));
    // the 348 MiB the line leaves: the spike, and the model's 100 MiB of mapped file pages
    CHECK(has(e, "lmk line of the background: other apps' memory and the app's own mapped file "
                 "pages (resident, not counted) took the rest"));
}

TEST_CASE("teaching: cache-every-start dies as its rebuild begins, and a failed rebuild "
          "stays invalid",
          "[teaching][about:cache-every-start]")
{
    Results r("cache-every-start");
    // never-cached: every start, at stage cache, 0.5 s in: a boot loop
    CHECK(r.at(0, "boot_loops.rate") == 1.0);
    CHECK(r.at(0, "requests.completed") == 0);
    std::vector<Death> d = deaths("cache-every-start");
    REQUIRE(d.size() >= 2);
    for (const Death &x : d)
        CHECK(x.stage == "cache");
    CHECK(d[0].at_s == Approx(0.5).margin(0.001));
    CHECK(d[1].at_s - d[0].at_s == Approx(d[2].at_s - d[1].at_s).margin(0.001));
    std::string e = explain("cache-every-start");
    CHECK(has(e, "the compiled cache is not valid: rebuilding, 600.0 MiB more"));
    CHECK(has(e, "1500 MiB  the process dies: low_memory, during cache"));
    // mostly-cached: a session whose first start misses loops from there
    // (its deaths are all boot loops); the others never die
    CHECK(r.at(1, "deaths.any_rate") > 0.0);
    CHECK(r.at(1, "deaths.any_rate") < 0.15);
    CHECK(r.at(1, "boot_loops.rate") == r.at(1, "deaths.any_rate"));
    CHECK(r.at(1, "deaths.per_replication.mean") / r.at(1, "deaths.any_rate") > 20);
    // keyed-cache: no rebuild, no death, every request served
    CHECK(r.at(2, "deaths.any_rate") == 0.0);
    CHECK(r.completed_share(2) == 1.0);
}

TEST_CASE("teaching: delegate-fallback-two-sets holds the failed delegate's 800 MiB at the "
          "fallback",
          "[teaching][about:delegate-fallback-two-sets]")
{
    Results r("delegate-fallback-two-sets");
    CHECK(r.at(0, "boot_loops.rate") == 1.0);
    CHECK(r.at(0, "peak.app_bytes.max") == 1800.0 * 1048576);
    std::vector<Death> d = deaths("delegate-fallback-two-sets");
    REQUIRE_FALSE(d.empty());
    for (const Death &x : d) {
        CHECK(x.cls == "low_memory");
        CHECK(x.stage == "runtime_prepare");
    }
    std::string e = explain("delegate-fallback-two-sets");
    CHECK(has(e, "the failed delegate still holds 800.0 MiB (500.0 MiB of buffers, 300.0 MiB "
                 "of transient compile memory)"));
    CHECK(has(e, "1800 MiB  the process dies: low_memory, during runtime_prepare"));
    // the fixed cell: the release told, a peak of 1200 MiB in delegate_prepare, every
    // request served on the CPU
    CHECK(r.at(1, "deaths.any_rate") == 0.0);
    CHECK(r.at(1, "peak.app_bytes.max") == 1200.0 * 1048576);
    CHECK(r.at(1, "peak.stage_at_peak.delegate_prepare") == 1.0);
    CHECK(r.completed_share(1) == 1.0);
    std::string f = explain("delegate-fallback-two-sets", 1);
    CHECK(has(f, "400 MiB  model: the failed delegate's 800.0 MiB (500.0 MiB of buffers, "
                 "300.0 MiB of transient compile memory) is released"));
}

TEST_CASE("teaching: image-queue dies 15 to 35 s into each start, and dropping stale frames "
          "keeps it alive and fresh",
          "[teaching][about:image-queue]")
{
    Results r("image-queue");
    CHECK(r.at(0, "deaths.any_rate") == 1.0);
    CHECK(r.at(0, "requests.rejected") == 0);
    std::vector<Death> d = deaths("image-queue");
    REQUIRE(d.size() >= 3);
    for (const Death &x : d) {
        CHECK(x.cls == "low_memory");
        CHECK(x.stage == "inference");
        CHECK(x.importance == 100);
    }
    // each death 15 to 35 s after its start (the first start at 0, each
    // next one at the reopening the timeline tells)
    std::string e = explain("image-queue");
    double start = 0;
    size_t at = 0;
    for (const Death &x : d) {
        INFO("death at " << x.at_s << " s, start at " << start << " s");
        CHECK(x.at_s - start >= 15.0);
        CHECK(x.at_s - start <= 35.0);
        at = e.find("the user reopens the app", at);
        if (at == std::string::npos)
            break;
        size_t line = e.rfind('\n', at);
        start = std::stod(e.substr(line + 1, at - line - 1));
        at++;
    }
    // the pss sampled every 5 s grows up to each death
    TempDir dir;
    std::string trace = dir.file("t.jsonl");
    REQUIRE(oomsim({"gen", "image-queue", "-o", trace}).status == 0);
    std::string text = read_file(trace);
    std::vector<long long> rss;
    for (size_t k = 0; (k = text.find("\"stage\":\"", k)) != std::string::npos; k++) {
        size_t eol = text.find('\n', k);
        std::string ev = text.substr(text.rfind('\n', k) + 1, eol - text.rfind('\n', k) - 1);
        if (has(ev, "\"kind\":\"exit\""))
            break;
        if (has(ev, "\"kind\":\"sample\"") && !has(ev, "\"error\"") && !has(ev, "\"request\""))
            rss.push_back(std::stoll(ev.substr(ev.find("\"rss_mb\":") + 9)));
        k = eol;
    }
    REQUIRE(rss.size() >= 4); // at 5, 10, 15, 20 s, ...
    for (size_t k = 1; k < rss.size(); k++)
        CHECK(rss[k] > rss[k - 1]);
    // queue 4: lives, its frames wait (latency p95 near 2.9 s); drop
    // oldest: lives, the newest frame about a second old at p95
    CHECK(r.at(1, "deaths.any_rate") == 0.0);
    CHECK(r.at(2, "deaths.any_rate") == 0.0);
    CHECK(r.at(1, "requests.latency_us.p95") > 2.5e6);
    CHECK(r.at(1, "requests.latency_us.p95") < 3.3e6);
    CHECK(r.at(2, "requests.latency_us.p95") < 1.2e6);
    CHECK(r.at(2, "requests.rejected") > 0);
    CHECK(has(explain("image-queue", 2), "is dropped: the queue is full and gives up its "
                                         "stalest request"));
}

TEST_CASE("teaching: java-heap-copy crashes in the Java heap at runtime_prepare with free "
          "memory to spare",
          "[teaching][about:java-heap-copy]")
{
    Results r("java-heap-copy");
    CHECK(r.at(0, "boot_loops.rate") == 1.0);
    CHECK(r.at(0, "deaths.by_reason.java_crash") == r.at(0, "deaths.per_replication.mean") * 20);
    CHECK(r.at(0, "peak.app_bytes.max") < r.at(0, "limits.foreground_bytes") / 4);
    std::vector<Death> d = deaths("java-heap-copy");
    REQUIRE_FALSE(d.empty());
    for (const Death &x : d) {
        CHECK(x.cls == "java_crash");
        CHECK(x.stage == "runtime_prepare");
    }
    CHECK(has(explain("java-heap-copy"), "the Java heap would hold 150 + 60 = 210 MiB and pass its 192 MiB growth limit"));
    // mapped: starts and serves
    CHECK(r.at(1, "deaths.any_rate") == 0.0);
    CHECK(r.completed_share(1) == 1.0);
}

TEST_CASE("teaching: prewarm-boot-loop dies 3 s after every start, and safe mode or the last "
          "known good stop it",
          "[teaching][about:prewarm-boot-loop]")
{
    Results r("prewarm-boot-loop");
    CHECK(r.at(0, "boot_loops.rate") == 1.0);
    CHECK(r.at(0, "peak.app_bytes.max") == 1600.0 * 1048576);
    std::vector<Death> d = deaths("prewarm-boot-loop");
    REQUIRE(d.size() >= 2);
    CHECK(d[0].at_s == Approx(3.0).margin(0.001));
    for (const Death &x : d) {
        CHECK(x.cls == "low_memory");
        CHECK(x.stage == "delegate_prepare");
    }
    // safe_mode and fallback_lkg: one death, then up
    CHECK(r.at(1, "deaths.per_replication.mean") == 1.0);
    CHECK(r.at(2, "deaths.per_replication.mean") == 1.0);
    CHECK(r.at(1, "boot_loops.rate") == 0.0);
    CHECK(r.at(2, "boot_loops.rate") == 0.0);
    CHECK(r.at(2, "recovery.candidate_switches") > 0);
    // the last known good on its own never dies
    for (size_t c = 3; c < 6; c++)
        CHECK(r.at(c, "deaths.any_rate") == 0.0);
}

TEST_CASE("teaching: split-switch-overlap dies at the first switch, in prepare, and releasing "
          "first lives",
          "[teaching][about:split-switch-overlap]")
{
    Results r("split-switch-overlap");
    CHECK(r.at(0, "deaths.any_rate") == 1.0);
    CHECK(r.at(0, "peak.app_bytes.max") == 1500.0 * 1048576);
    std::vector<Death> d = deaths("split-switch-overlap");
    REQUIRE_FALSE(d.empty());
    CHECK(d[0].cls == "low_memory");
    CHECK(d[0].stage == "runtime_prepare");
    CHECK(d[0].at_s == Approx(22.4).margin(0.001));
    std::string e = explain("split-switch-overlap");
    // the first part's 700 MiB held while the second's prepare makes 800 MiB
    CHECK(has(e, "22.400 s     700 MiB  second: runtime_prepare begins, 800.0 MiB (700.0 MiB "
                 "of it stays)"));
    CHECK(has(e, "22.400 s    1500 MiB  the process dies: low_memory, during runtime_prepare"));
    // the load maps its file: nothing counted
    CHECK(has(e, "22.000 s     700 MiB  second: load begins"));
    CHECK(r.at(1, "deaths.any_rate") == 0.0);
    CHECK(r.completed_share(1) == 1.0);
    CHECK(r.at(1, "peak.app_bytes.max") <= 800.0 * 1048576);
}

TEST_CASE("teaching: timeout-retry-storm kills about half the sessions, and cancelling "
          "serves most requests",
          "[teaching][about:timeout-retry-storm]")
{
    Results r("timeout-retry-storm");
    // about half: within 35% to 65% over its 200 sessions
    CHECK(r.at(0, "deaths.any_rate") > 0.35);
    CHECK(r.at(0, "deaths.any_rate") < 0.65);
    CHECK(r.at(0, "requests.duplicate_working_sets") > 0);
    std::vector<Death> d = deaths("timeout-retry-storm");
    REQUIRE_FALSE(d.empty());
    CHECK(d[0].cls == "low_memory");
    CHECK(d[0].stage == "inference");
    CHECK(d[0].importance == 100);
    std::string e = explain("timeout-retry-storm");
    CHECK(has(e, "while the earlier attempt still runs: another working set for one request"));
    CHECK(has(e, "working set 245.0 MiB"));
    // cancelling: no duplicate, no death, about 70% served
    CHECK(r.at(1, "requests.duplicate_working_sets") == 0);
    CHECK(r.at(1, "deaths.any_rate") == 0.0);
    CHECK(has(explain("timeout-retry-storm", 1), "the attempt given up on stops, cancelled: its "
                                                 "working set is freed"));
    CHECK(r.completed_share(1) > 0.65);
    CHECK(r.completed_share(1) < 0.75);
}

TEST_CASE("teaching: delegate-native-crash crashes in delegate_prepare at every start, and the "
          "CPU path starts",
          "[teaching][about:delegate-native-crash]")
{
    Results r("delegate-native-crash");
    CHECK(r.at(0, "boot_loops.rate") == 1.0);
    CHECK(r.at(0, "deaths.by_reason.native_crash") ==
          r.at(0, "deaths.per_replication.mean") * 20);
    // memory is fine: 470 MiB at the crash, far under the lmk line
    CHECK(r.at(0, "peak.app_bytes.max") == 470.0 * 1048576);
    CHECK(r.at(0, "limits.foreground_bytes") > 1800.0 * 1048576);
    std::vector<Death> d = deaths("delegate-native-crash");
    REQUIRE(d.size() >= 2);
    for (const Death &x : d) {
        CHECK(x.cls == "native_crash");
        CHECK(x.stage == "delegate_prepare");
        CHECK(x.importance == 100);
    }
    CHECK(d[0].at_s == Approx(1.8).margin(0.001));
    TempDir dir;
    std::string trace = dir.file("t.jsonl");
    REQUIRE(oomsim({"gen", "delegate-native-crash", "-o", trace}).status == 0);
    RunResult g = oomsim({"diagnose", trace});
    CHECK(has(g.out, "missing:   the tombstone: the delegate or path that crashed"));
    // the ladder's fourth step, the evidence kept
    std::string e = explain("delegate-native-crash");
    CHECK(has(e, "> 4. fall back to the last known good, only with a complete receipt  <- this "
                 "death's step"));
    CHECK(has(e, "then the failure mode's own fix: turn the GPU delegate off on the affected "
                 "devices first"));
    CHECK(has(e, "keep the tombstone"));
    CHECK(r.at(1, "deaths.any_rate") == 0.0);
    CHECK(r.completed_share(1) == 1.0);
}

TEST_CASE("teaching: launch-watchdog ends every start 20 s in, with memory fine, and a worker "
          "after the first frame starts",
          "[teaching][about:launch-watchdog]")
{
    Results r("launch-watchdog");
    CHECK(r.at(0, "boot_loops.rate") == 1.0);
    CHECK(r.at(0, "deaths.by_reason.watchdog") == r.at(0, "deaths.per_replication.mean") * 20);
    CHECK(r.at(0, "peak.app_bytes.max") == 550.0 * 1048576);
    std::vector<Death> d = deaths("launch-watchdog");
    REQUIRE(d.size() >= 2);
    for (const Death &x : d) {
        CHECK(x.cls == "watchdog");
        CHECK(x.stage == "runtime_prepare");
    }
    CHECK(d[0].at_s == Approx(20.0).margin(0.001));
    std::string e = explain("launch-watchdog");
    CHECK(has(e, "the launch took longer than the 20.0 s watchdog"));
    CHECK(has(e, "watchdog termination (0x8badf00d)"));
    CHECK_FALSE(has(e, "JetsamEvent"));
    TempDir dir;
    std::string trace = dir.file("t.jsonl");
    REQUIRE(oomsim({"gen", "launch-watchdog", "-o", trace}).status == 0);
    CHECK(has(oomsim({"diagnose", trace}).out,
              "missing:   the main-thread work of the launch that took the time"));
    CHECK(r.at(1, "deaths.any_rate") == 0.0);
    CHECK(r.completed_share(1) == 1.0);
}

TEST_CASE("teaching: preload-startup-pressure dies in the second part's prepare at every start, "
          "and on demand lives",
          "[teaching][about:preload-startup-pressure]")
{
    Results r("preload-startup-pressure");
    CHECK(r.at(0, "boot_loops.rate") == 1.0);
    CHECK(r.at(0, "peak.app_bytes.max") == 1450.0 * 1048576);
    std::vector<Death> d = deaths("preload-startup-pressure");
    REQUIRE(d.size() >= 2);
    for (const Death &x : d) {
        CHECK(x.cls == "low_memory");
        CHECK(x.stage == "runtime_prepare");
    }
    CHECK(d[0].at_s == Approx(1.2).margin(0.001));
    std::string e = explain("preload-startup-pressure");
    CHECK(has(e, "1.200 s     650 MiB  second: runtime_prepare begins, 800.0 MiB"));
    CHECK(has(e, "JetsamEvent (per-process-limit)"));
    // on demand, release first: 800 MiB, no death, every request, the load
    // and prepare paid by the first request of each part (1.2 s at most)
    CHECK(r.at(1, "deaths.any_rate") == 0.0);
    CHECK(r.at(1, "boot_loops.rate") == 0.0);
    CHECK(r.at(1, "peak.app_bytes.max") == 800.0 * 1048576);
    CHECK(r.completed_share(1) == 1.0);
}

TEST_CASE("teaching: no-exit-record leaves a death no record names, which stays unknown",
          "[teaching][about:no-exit-record]")
{
    Results r("no-exit-record");
    // Android 10: every death unrecorded; Android 11: none
    CHECK(r.at(0, "deaths.any_rate") == 1.0);
    CHECK(r.at(0, "deaths.unrecorded") == r.at(0, "deaths.per_replication.mean") * 20);
    CHECK(r.at(1, "deaths.by_reason.low_memory") > 0); // Android 11 names no unrecorded death
    CHECK(r.at(1, "deaths.by_reason.low_memory") == r.at(1, "deaths.per_replication.mean") * 20);
    std::vector<Death> d = deaths("no-exit-record");
    REQUIRE(d.size() >= 2);
    for (const Death &x : d) {
        CHECK(x.cls == "unknown");
        CHECK(x.evidence == "unconfirmed");
        CHECK(x.stage == "inference");
    }
    std::string e = explain("no-exit-record");
    CHECK(has(e, "5.000 s    1100 MiB  the process dies: unknown, during inference: no exit "
                 "record names a cause"));
    CHECK(has(e, "no exit record: the phone keeps no ApplicationExitInfo (Android 10 or "
                 "older)"));
    CHECK(has(e, "It stays unknown (unconfirmed): missing everything"));
    CHECK(has(e, "> 1. reject new inference"));
    CHECK(has(e, "then the failure mode's own fix: reject new inference and keep the app "
                 "usable; collect exit records before changing anything"));
    // the same death on Android 11: a LOW_MEMORY record at importance 100
    std::vector<Death> k = deaths("no-exit-record", 1);
    REQUIRE_FALSE(k.empty());
    CHECK(k[0].cls == "low_memory");
    CHECK(k[0].importance == 100);
    CHECK(k[0].stage == "inference");
    // the report says why the Android 10 row lists no record
    TempDir out;
    REQUIRE(oomsim({"run", "no-exit-record", "-o", out.path()}).status == 0);
    CHECK(has(read_file(out.file("report.html")),
              "none: the phone keeps no exit record (160 deaths left none)"));
    // exit_info is Android's: refused on an iPhone
    TempDir dir;
    std::string ios = read_file(source_path("scenarios/catalog/teach/launch-watchdog.yaml"));
    size_t at = ios.find("    launch_watchdog: 20s\n");
    REQUIRE(at != std::string::npos);
    ios.insert(at, "    exit_info: false\n");
    RunResult v = oomsim({"validate", dir.write("x.yaml", ios)});
    CHECK(v.status == 1);
    CHECK(has(v.err, "exit_info is Android's ApplicationExitInfo"));
}

TEST_CASE("teaching: stale-cache-after-update fails every load after the update until the "
          "key names the OS",
          "[teaching][about:stale-cache-after-update]")
{
    Results r("stale-cache-after-update");
    const double reps = 20;
    // digest-only: 24 requests served before the update, the 36 after it all fail; no death
    CHECK(r.at(0, "deaths.any_rate") == 0.0);
    CHECK(r.at(0, "requests.arrived") == 60 * reps);
    CHECK(r.at(0, "requests.completed") == 24 * reps);
    CHECK(r.at(0, "requests.failed") == 36 * reps);
    CHECK(deaths("stale-cache-after-update").empty());
    std::string e = explain("stale-cache-after-update");
    CHECK(has(e, "122.000 s     200 MiB  the phone's OS is updated: the app stops"));
    CHECK(has(e, "122.600 s     200 MiB  model: runtime_prepare fails: the compiled cache its "
                 "key found valid was built for the OS version before the update"));
    CHECK(has(e, "request 24 fails: a part it needs could not be made ready"));
    CHECK_FALSE(has(e, "rebuilding"));
    // the trace: the prepare's end names cache_stale, after the update's note
    TempDir dir;
    std::string trace = dir.file("t.jsonl");
    REQUIRE(oomsim({"gen", "stale-cache-after-update", "-o", trace}).status == 0);
    std::string t = read_file(trace);
    size_t upd = t.find("\"os_update\""), stale = t.find("\"cache_stale\"");
    REQUIRE(upd != std::string::npos);
    REQUIRE(stale != std::string::npos);
    CHECK(stale > upd);
    CHECK_FALSE(has(t, "\"exit\""));
    // diagnose: no exit, but the failures counted
    RunResult dg = oomsim({"diagnose", trace, "--format", "json"});
    REQUIRE(dg.status == 0);
    CHECK(has(dg.out, "\"cache_stale\": 1"));
    CHECK(has(dg.out, "\"part_failed\": 36"));
    RunResult dt = oomsim({"diagnose", trace});
    CHECK(has(dt.out, "1 runtime_prepare failed reading a compiled cache built for an earlier "
                      "runtime or OS version (cache_stale)"));
    // versioned-key: rebuilt once after the update (8 s, 300 MiB more), every request served
    CHECK(r.at(1, "deaths.any_rate") == 0.0);
    CHECK(r.completed_share(1) == 1.0);
    CHECK(r.at(1, "peak.app_bytes.max") == 500.0 * 1048576);
    CHECK(r.at(1, "peak.stage_at_peak.cache") == 1.0);
    std::string f = explain("stale-cache-after-update", 1);
    CHECK(has(f, "122.300 s     200 MiB  model: the compiled cache is not valid: rebuilding, "
                 "300.0 MiB more"));
    CHECK(has(f, "130.600 s     200 MiB  model: the compiled cache is rebuilt: its 300.0 MiB of "
                 "compile memory freed"));
    CHECK(has(f, "130.600 s     200 MiB  model: runtime_prepare ends"));
    size_t first = f.find("rebuilding");
    CHECK(f.find("rebuilding", first + 1) == std::string::npos);
}

TEST_CASE("teaching: reenable-regression gates the fix on every regression path, and the "
          "disabled build fails on the fallback path only",
          "[teaching][about:reenable-regression]")
{
    TempDir dir;
    RunResult run = oomsim({"run", "reenable-regression", "--format", "json", "-o", dir.path()});
    INFO(run.err);
    REQUIRE(run.status == 0);
    json_error_t e;
    json_t *doc = json_load_file(dir.file("results.json").c_str(), 0, &e);
    REQUIRE(doc != nullptr);
    const char *paths[] = {"cold-start", "first-load", "repeated-entry", "concurrency",
                           "background-switch", "pressure", "fallback", "cache-rebuild"};
    json_t *cells = json_object_get(doc, "cells");
    REQUIRE(json_array_size(cells) == 16);
    for (size_t c = 0; c < 16; c++) {
        json_t *x = json_array_get(cells, c);
        INFO("cell " << c);
        CHECK(std::string(json_string_value(json_object_get(json_object_get(x, "policy"),
                                                            "path"))) == paths[c % 8]);
        double any = json_number_value(json_object_get(json_object_get(x, "deaths"),
                                                       "any_rate"));
        CHECK(any == (c == 6 ? 1.0 : 0.0)); // build-41 dies on the fallback path alone
        bool meets = json_is_true(json_object_get(json_object_get(x, "target"), "meets"));
        CHECK(meets == (c != 6));
    }
    // the gate: build-41 none, its closest the fallback cell; build-42 re-enabled
    json_t *d = json_object_get(doc, "decisions");
    REQUIRE(json_array_size(d) == 2);
    json_t *old = json_array_get(d, 0), *fix = json_array_get(d, 1);
    CHECK(json_is_null(json_object_get(old, "recommended")));
    CHECK(json_integer_value(json_object_get(old, "closest")) == 6);
    CHECK(json_integer_value(json_object_get(json_object_get(old, "paths"), "count")) == 8);
    CHECK(json_is_false(json_object_get(json_object_get(old, "paths"), "passed")));
    CHECK(json_array_size(json_object_get(old, "meeting")) == 7);
    CHECK(json_integer_value(json_object_get(fix, "recommended")) == 8);
    CHECK(json_is_true(json_object_get(json_object_get(fix, "paths"), "passed")));
    json_decref(doc);
    Results r("reenable-regression");
    CHECK(r.at(6, "peak.app_bytes.max") == 2100.0 * 1048576);
    CHECK(r.at(14, "peak.app_bytes.max") == 1400.0 * 1048576);
    // the text: the decision as the about quotes it
    RunResult t = oomsim({"run", "reenable-regression", "-o", dir.file("text")});
    REQUIRE(t.status == 0);
    CHECK(has(t.out, "0 of 1 on all 8 paths"));
    CHECK(has(t.out, "closest: path=fallback (deaths up to 100%, 83.3% of requests completed"));
    CHECK(has(t.out, "1 of 1 on all 8 paths"));
    CHECK(has(t.out, "meets it on every path; the only one that does"));
    // the fallback path: two sets held in build-41, the release told in build-42
    std::string x = explain("reenable-regression", 6);
    CHECK(has(x, "the failed delegate still holds 900.0 MiB"));
    // denied the GPU in the background, the delegate still failed: the ladder's fix is its own
    CHECK(has(x, "then the failure mode's own fix: release the failed delegate's buffers before "
                 "the fallback prepares its own"));
    CHECK(has(x, "2100 MiB  the process dies: low_memory, during runtime_prepare: counted "
                 "2100 MiB over the 2068 MiB background jetsam limit"));
    // a line for every release: a stage's transient, a page's hold
    std::string p = explain("reenable-regression", 5);
    CHECK(has(p, "1.300 s    1000 MiB  model: runtime_prepare ends: its 200.0 MiB of transient "
                 "memory freed"));
    CHECK(has(p, "3.300 s    1600 MiB  model: delegate_prepare ends: its 300.0 MiB of transient "
                 "memory freed"));
    CHECK(has(p, "30.000 s    1240 MiB  the user leaves camera: its hold of 500.0 MiB is "
                 "released"));
    // the cache-rebuild path rebuilds after the update, once
    std::string cr = explain("reenable-regression", 7);
    CHECK(has(cr, "model: the compiled cache is not valid: rebuilding, 300.0 MiB more"));
    CHECK(has(cr, "model: the compiled cache is rebuilt: its 300.0 MiB of compile memory freed"));
    CHECK(cr.find("rebuilding") == cr.rfind("rebuilding"));
    std::string y = explain("reenable-regression", 14);
    CHECK(has(y, "500 MiB  model: the failed delegate's 900.0 MiB"));
    CHECK_FALSE(has(y, "the process dies"));
}

TEST_CASE("teaching: every teaching scenario has a test of its about", "[teaching]")
{
    std::string all;
    for (const char *f : {"test_teaching.cpp", "test_teaching_modes.cpp", "test_generation.cpp",
                          "test_owners.cpp", "test_processes.cpp"})
        all += read_file(source_path(std::string("tests/") + f));
    RunResult c = oomsim({"catalog"});
    REQUIRE(c.status == 0);
    size_t from = c.out.find("teaching scenarios (one failure mode each):\n");
    REQUIRE(from != std::string::npos);
    int n = 0;
    for (size_t at = c.out.find('\n', from) + 1; at < c.out.size() && c.out[at] == ' ';
         at = c.out.find('\n', at) + 1) {
        size_t start = c.out.find_first_not_of(' ', at);
        std::string name = c.out.substr(start, c.out.find(' ', start) - start);
        INFO(name);
        CHECK(has(all, "[about:" + name + "]"));
        n++;
    }
    CHECK(n >= 26);
}
