// iOS as memorystatus decides: the iPhone's page model (models/memstat.c,
// docs/model.md "The iPhone's pages").  The phone: 4096 MiB, system
// 1024 MiB (3072 MiB for the rest), page levels critical 5 % (204.8 MiB),
// idle 10 % (409.6 MiB), pressure 15 % (614.4 MiB) of ram; the pageout
// daemon's free target is 2000 pages of 16 KiB, 31.25 MiB.  Every figure is
// derived in a comment.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "models/world_int.h"
#include "results/results.h"
#include "scenarios/scenarios.h"
#include "shim/shim.hpp"
#include "shim/world.hpp"

namespace {

const int64_t MiB = 1024 * 1024;
const sim_time SECOND = 1000000;

using shim::Loaded;

// The iPhone with `others` (the page model's switch) and `extra` keys; no
// compressor unless a case gives one (ratio 1: nothing is gained).
std::string iphone(const std::string &others, const std::string &extra = "",
                   const char *limits = "limit: 3500MiB")
{
    return std::string("name: memstat\nhorizon: 60s\nreplications: 1\ndevices:\n"
                       "  - name: phone\n    os: ios\n    ram: 4096MiB\n    system: 1024MiB\n"
                       "    kill: {rule: jetsam, ") +
           limits + "}\n    pages: {critical: 5%, idle: 10%, pressure: 15%}\n" +
           "    others: " + others + "\n" +
           (extra.find("compressor") == std::string::npos ? "    compressor: {ratio: 1}\n" : "") +
           extra;
}

std::string part(const char *file, bool hot) { return shim::mapped_part(file, hot); }

std::string app(const char *native, const char *path)
{
    return std::string("app: {baseline: {native: ") + native + "}}\nworkload: {path: [" + path +
           "]}\n";
}

// Collects the timeline's notes and exits.
struct Notes {
    std::vector<std::string> what; // note (error) texts, in order
    std::vector<sim_time> when;
    static int add(void *ctx, const trc_event *e, sim_error *)
    {
        auto *n = static_cast<Notes *>(ctx);
        if (e->has & TRC_F_ERROR) {
            n->what.push_back(e->error);
            n->when.push_back(e->time_us);
        }
        return SIM_OK;
    }
    int count(const std::string &s) const
    {
        int c = 0;
        for (const auto &w : what)
            c += w == s;
        return c;
    }
    sim_time first(const std::string &s) const
    {
        for (size_t k = 0; k < what.size(); k++)
            if (what[k] == s)
                return when[k];
        return -1;
    }
};

mdl_rep traced(Loaded &l, Notes &n, unsigned cell = 0)
{
    return shim::run_traced(l.s.cells[cell], Notes::add, &n);
}

} // namespace

TEST_CASE("memstat: the suspended app below idle is idle-exit, the app in front lives",
          "[memstat][ios]")
{
    // No other process.  The app: 1800 MiB + a 10 MiB model: free 3072 -
    // 1810 = 1262 MiB.  In the background the successor's 1000 MiB: free
    // 262, available 262 + 10 (the file) = 272 MiB: under idle (409.6), over
    // critical (204.8), the system healthy.  For 2 s the app is in the aging
    // band (20): no idle process, nothing done.  At 2 s it is idle (band 0):
    // pick_action kills the idle band, idle-exit: the app (system_reclaim;
    // a kill in band 0 posts no JetsamEvent, memorystatus_should_post_snapshot:
    // the record is MetricKit's background count).  The successor in front
    // lives.
    Loaded l(iphone("[{band: 0, count: 0, size: 1MiB}]", "    successor: {size: 1000MiB}\n") +
             part("10MiB", false) + app("1800MiB", "cold_start, {background: 30s}"));
    Notes n;
    mdl_rep r = traced(l, n);
    CHECK(r.deaths_total == 1);
    CHECK(r.deaths[MDL_EXIT_SYSTEM_RECLAIM] == 1);
    CHECK(r.deaths_by_jetsam[MDL_JETSAM_IDLE_EXIT] == 1);
    CHECK(r.successor_kills == 0);
    REQUIRE(r.nrecords == 1);
    CHECK(r.records[0].kind == MDL_REC_METRICKIT);
    CHECK(r.records[0].jetsam == MDL_JETSAM_IDLE_EXIT);
    CHECK(r.records[0].importance == 400);
    CHECK(n.count("metrickit_background:idle-exit") == 1); // the exit event names it
    // killed when it reached the idle band, 2 s after it left
    sim_time left = n.first("background");
    REQUIRE(left >= 0);
    CHECK(n.first("idle_band") == left + 2 * SECOND);
    CHECK(r.records[0].time == left + 2 * SECOND);
    // with 100 MiB less of successor, available 372 MiB: still under idle
    // (409.6); with 200 MiB less, 472: over it, the app lives
    Loaded lives(iphone("[{band: 0, count: 0, size: 1MiB}]", "    successor: {size: 800MiB}\n") +
                 part("10MiB", false) + app("1800MiB", "cold_start, {background: 30s}"));
    CHECK(lives.run(0).deaths_total == 0);
}

TEST_CASE("memstat: in the aging band beside another process, the other goes first",
          "[memstat][ios]")
{
    // One other process in band 20 (300 MiB).  The app: 1800 MiB + a 10 MiB
    // model: free 3072 - 300 - 1810 = 962 MiB.  In the background the app is
    // in band 20 too, and the successor's 900 MiB leave free 62, available
    // 72 with the file: under critical (204.8).  vm-pageshortage kills the
    // lowest band's first process: band 20's, where the other was before
    // the app (memorystatus_kill_top_process walks a band in order), so the
    // other goes: free 362, available 372, healthy.  372 is under idle
    // (409.6), and when the app ages into band 0 at 2 s it is idle-exit.
    Loaded l(iphone("[{band: 20, count: 1, size: 300MiB}]", "    successor: {size: 900MiB}\n") +
             part("10MiB", false) + app("1800MiB", "cold_start, {background: 30s}"));
    Notes n;
    mdl_rep r = traced(l, n);
    CHECK(r.cached_kills == 1);
    CHECK(r.jetsam_kills[MDL_JETSAM_VM_PAGESHORTAGE] == 1);
    CHECK(r.deaths_by_jetsam[MDL_JETSAM_VM_PAGESHORTAGE] == 0);
    REQUIRE(r.deaths_total == 1);
    CHECK(r.deaths_by_jetsam[MDL_JETSAM_IDLE_EXIT] == 1);
    sim_time left = n.first("background");
    REQUIRE(left >= 0);
    REQUIRE(r.nrecords >= 1);
    CHECK(r.records[0].jetsam == MDL_JETSAM_IDLE_EXIT);
    CHECK(r.records[0].time == left + 2 * SECOND);
}

TEST_CASE("memstat: below critical, vm-pageshortage marches up the bands to the app in front",
          "[memstat][ios]")
{
    // Others: two of 300 MiB in band 0, one in band 10, one in band 40
    // (1200 MiB).  The app: 1000 MiB + a 10 MiB model: free 3072 - 1200 -
    // 1010 = 862 MiB.  Entering a page holds `hold` more.
    const std::string others = "[{band: 40, count: 1, size: 300MiB}, {band: 0, count: 2, size: "
                               "300MiB}, {band: 10, count: 1, size: 300MiB}]";
    auto scenario = [&](const char *hold) {
        return iphone(others) + part("10MiB", false) + "app: {baseline: {native: 1000MiB}}\n" +
               "workload: {path: [cold_start, {enter: {page: big, holds: {native: " + hold +
               "}}}]}\n";
    };
    // 1400 MiB: free -538; pageout drops the 10 MiB model file: -528 MiB,
    // available the same: under critical, unhealthy: vm-pageshortage kills
    // band 0 (free -228), band 0 again (72), then band 10 (372 >= 204.8):
    // healthy; 372 is under idle but no process is idle: the band-40 process
    // and the app live.
    Loaded three(scenario("1400MiB"));
    mdl_rep a = three.run(0);
    CHECK(a.deaths_total == 0);
    CHECK(a.cached_kills == 3);
    CHECK(a.jetsam_kills[MDL_JETSAM_VM_PAGESHORTAGE] == 3);
    // 2000 MiB: free -1128 after the file; four kills free 1200: 72 MiB,
    // under critical with no lower band left: the app in front (band 100)
    Loaded all(scenario("2000MiB"));
    Notes n;
    mdl_rep b = traced(all, n);
    CHECK(b.cached_kills == 4);
    // the app in front killed for the system's pages: a foreground death
    CHECK(b.deaths[MDL_EXIT_LOW_MEMORY] == 1);
    CHECK(b.deaths[MDL_EXIT_SYSTEM_RECLAIM] == 0);
    CHECK(b.deaths_by_jetsam[MDL_JETSAM_VM_PAGESHORTAGE] == 1);
    CHECK(b.jetsam_kills[MDL_JETSAM_VM_PAGESHORTAGE] == 5);
    REQUIRE(b.nrecords >= 1);
    CHECK(b.records[0].kind == MDL_REC_JETSAM_PAGESHORTAGE);
    CHECK(b.records[0].importance == 100);
    CHECK(n.count("process_killed") == 4); // every other before the app
}

TEST_CASE("memstat: the per-process limit first, the entitled limit holds in the background",
          "[memstat][ios]")
{
    // A 6 GiB phone: 2300 MiB in front, 600 MiB behind, 2400 MiB entitled
    // (both limits).  The app's 2200 MiB: unentitled it dies at the move to
    // the background (per-process-limit, low_memory), before any page
    // decision; entitled it lives.  Pages: 6144 - 1024 - 2210 = 2910 free.
    std::string yaml = iphone("[{band: 0, count: 0, size: 1MiB}]", "    entitled_limit: 2400MiB\n",
                              "limit: 2300MiB, background_limit: 600MiB") +
                       part("10MiB", false) + app("2200MiB", "cold_start, {background: 30s}") +
                       "policies: {entitlement: [none, increased_memory_limit]}\n";
    yaml.replace(yaml.find("ram: 4096MiB"), 12, "ram: 6144MiB");
    Loaded l(yaml);
    REQUIRE(l.s.ncells == 2);
    mdl_rep none = l.run(0), entitled = l.run(1);
    CHECK(none.deaths[MDL_EXIT_LOW_MEMORY] == 1);
    CHECK(none.deaths_by_jetsam[MDL_JETSAM_PER_PROCESS_LIMIT] == 1);
    REQUIRE(none.nrecords == 1);
    CHECK(none.records[0].kind == MDL_REC_JETSAM);
    CHECK(none.records[0].jetsam == MDL_JETSAM_PER_PROCESS_LIMIT);
    CHECK(entitled.deaths_total == 0);
}

TEST_CASE("memstat: a just-suspended app's pages compress, its footprint does not shrink",
          "[memstat][ios]")
{
    // Compressor ratio 2; the system's file cache, 500 MiB, all in use.
    // The app: 1500 MiB + a 10 MiB model: free 3072 - 1510 - 500 = 1062.  In
    // the background the successor's 1600 MiB: free -538 MiB.  Pageout
    // wants the target back, 31.25 + 538 = 569.25 MiB: the model's cold file
    // 10 MiB, then 559.25 MiB from the compressor, which takes twice that of
    // the suspended app, 1118.5 MiB, into a pool of 559.25 MiB.  Available:
    // 31.25 + 500 = 531.25 MiB, over idle: the app lives, idle or not.  Its
    // footprint (phys_footprint counts compressed pages) stays 1500 MiB.
    const std::string cache = "    page_cache: {size: 500MiB, working_set: 500MiB}\n";
    Loaded l(iphone("[{band: 0, count: 0, size: 1MiB}]",
                    cache + "    compressor: {ratio: 2}\n    successor: {size: 1600MiB}\n") +
             part("10MiB", false) + app("1500MiB", "cold_start, {background: 30s}"));
    mdl_rep r = l.run(0);
    CHECK(r.deaths_total == 0);
    CHECK(r.swap_used_max == 1118 * MiB + MiB / 2);
    // the world just after the move: the app's pages in the compressor, its
    // counted bytes (the footprint) whole
    world w;
    mdl_rep out;
    sim_error err;
    sim_error_clear(&err);
    REQUIRE(w__open(&w, &l.s.cells[0], 0, nullptr, nullptr, nullptr, &out, &err) == SIM_OK);
    REQUIRE(sim_run(w.e, SECOND) >= 0); // the background step begins at 0.2 s
    REQUIRE(w.path.bg);
    CHECK(w.pg.x.app_comp == 1118 * MiB + MiB / 2);
    CHECK(mdl_ledger_counted(w.led) == 1500 * MiB);
    CHECK(w__pages_free(&w) == 2000 * 16384); // the free target
    w__close(&w);
    // with no compressor the 559.25 MiB come from the file cache: free
    // 31.25 and nothing of file, under critical: vm-pageshortage, and the
    // lowest band is the app's (aging, 20) under the successor's (100)
    Loaded none(iphone("[{band: 0, count: 0, size: 1MiB}]",
                       cache + "    successor: {size: 1600MiB}\n") +
                part("10MiB", false) + app("1500MiB", "cold_start, {background: 30s}"));
    mdl_rep d = none.run(0);
    CHECK(d.deaths_by_jetsam[MDL_JETSAM_VM_PAGESHORTAGE] == 1);
    CHECK(d.successor_kills == 0);
}

TEST_CASE("memstat: an LLM whose mapped weights do not fit is slowed, then fc-thrashing kills",
          "[memstat][ios]")
{
    // Storage reads 200 MiB/s; no compressor.  Others: two of 100 MiB in
    // band 0.  The app: 1700 MiB + 1500 MiB of weights mapped and read at
    // every inference: 3072 - 200 - 3200 = -328 MiB: the weights do not fit.
    // The load (cold pages) leaves 359.25 MiB of them out (the free target,
    // 31.25 MiB, back).  Ready at 200 ms; requests queue every 200 ms.
    // - Inference 1 (at 0.2 s) reads 359.25 MiB back (1.796 s: 7 periods of
    //   250 ms) and pageout drops as much again: per period, ghosts found
    //   3284 pages, added (the load's drop and this one) 6569: found >=
    //   added / 2, both over 1000: thrashing for four periods in a row, and
    //   file pages (1140.75 MiB) under half of 3072: fc-thrashing kills the
    //   lowest band, one process (100 MiB); the sample restarts.
    // - Inference 2 (at 0.2 + 1.796 + 0.1 = 2.096 s) reads 359.25 back,
    //   pageout drops 259.25: found 3284, added 2370 per period: thrashing;
    //   the other band-0 process goes.
    // - Inference 3 (at 3.9925 s) reads 259.25 back (5 periods), pageout
    //   drops 159.25: found 3318, added 2038: thrashing, and no lower band
    //   is left: the app in front dies of fc-thrashing, its inference slowed
    //   from 100 ms to 1.9 s the two times before.
    Loaded l(iphone("[{band: 0, count: 2, size: 100MiB}]", "    storage_read: 200MiB/s\n") +
             part("1500MiB", true) +
             app("1700MiB", "cold_start, {requests: {every: 200ms, for: 20s}}"));
    Notes n;
    mdl_rep r = traced(l, n);
    CHECK(r.cached_kills == 2);
    CHECK(r.deaths_total == 1);
    CHECK(r.deaths_by_jetsam[MDL_JETSAM_FC_THRASHING] == 1);
    CHECK(r.jetsam_kills[MDL_JETSAM_FC_THRASHING] == 3);
    REQUIRE(r.nrecords == 1);
    CHECK(r.records[0].kind == MDL_REC_JETSAM_SYSTEM);
    CHECK(r.records[0].jetsam == MDL_JETSAM_FC_THRASHING);
    CHECK(r.records[0].importance == 100);
    CHECK(r.records[0].time == 3992500);
    // both others went first, at the first two inferences
    REQUIRE(n.count("process_killed") == 2);
    CHECK(n.first("process_killed") == 200000);
    // slowed: two inferences took 1.896 s for 100 ms (ratio 18.96)
    CHECK(r.slowdown[mdl_slowdown_bucket(18.9625)] == 2);
    CHECK(r.refault_bytes == (359 * 2 + 259) * MiB + 3 * MiB / 4);
}

TEST_CASE("memstat: the pages sum to ram after every event, and the checker sees a break",
          "[memstat][ios][world][check]")
{
    // A busy iPhone: others in three bands, the compressor, a file cache,
    // hot weights, a background step with a successor, and back.
    Loaded l(iphone("[{band: 0, count: {min: 2, max: 5}, size: {dist: uniform, min: 50MiB, "
                    "max: 300MiB}}, {band: 10, count: 2, size: 80MiB}, {band: 40, count: 1, "
                    "size: 200MiB}]",
                    "    compressor: {ratio: 2.5, max: 1GiB}\n"
                    "    page_cache: {size: 400MiB, working_set: 200MiB}\n"
                    "    storage_read: 400MiB/s\n    successor: {size: 900MiB}\n") +
             part("900MiB", true) +
             app("1200MiB", "cold_start, {requests: {every: 300ms, for: 3s}}, {background: 4s}, "
                            "{requests: {every: 300ms, for: 3s}}"));
    world w;
    mdl_rep out;
    sim_error err;
    sim_error_clear(&err);
    REQUIRE(w__open(&w, &l.s.cells[0], 0, nullptr, nullptr, nullptr, &out, &err) == SIM_OK);
    REQUIRE(w.pg.on == W_PAGES_XNU);
    for (sim_time t = 10000; t <= 12 * SECOND; t += 10000) {
        REQUIRE(sim_run(w.e, t) >= 0);
        int rc = mdl_world_validate(&w, &err);
        INFO("t = " << t << ": " << err.msg);
        REQUIRE(rc == SIM_OK);
    }
    CHECK(out.swap_used_max > 0); // the compressor was used
    REQUIRE(w.pg.x.nother > 0);
    w.pg.x.other[0].resident += MiB; // a process grown behind the sums' back
    CHECK(mdl_world_validate(&w, &err) == SIM_EINTERNAL);
    CHECK(std::string(err.msg).find("others' sums") != std::string::npos);
    w.pg.x.other[0].resident -= MiB;
    w.pg.x.succ_comp = w.dev->compressor_max + 1; // the compressor over its max
    CHECK(mdl_world_validate(&w, &err) == SIM_EINTERNAL);
    w.pg.x.succ_comp = 0;
    w__close(&w);
}

TEST_CASE("memstat: the page model's keys are checked where they are written",
          "[memstat][ios][loader]")
{
    const std::string m = part("10MiB", false) + app("10MiB", "cold_start");
    auto refused = [&](const std::string &yaml, const char *what) {
        scn_scenario s{};
        sim_error err;
        sim_error_clear(&err);
        REQUIRE(scn_scenario_parse(yaml.data(), yaml.size(), "t.yaml", &s, &err) != SIM_OK);
        INFO(err.msg);
        CHECK(std::string(err.msg).find(what) != std::string::npos);
        CHECK(std::string(err.msg).find("t.yaml:") == 0);
    };
    const std::string g = "[{band: 0, count: 1, size: 10MiB}]";
    refused(iphone("[{band: 211, count: 1, size: 10MiB}]") + m, "out of range [0, 210]");
    refused(iphone("[{band: 0, count: 65, size: 10MiB}]") + m, "out of range [0, 64]");
    refused(iphone("[{band: 0, count: 40, size: 1MiB}, {band: 1, count: {min: 1, max: 30}, "
                   "size: 1MiB}]") + m,
            "at most 64 processes");
    refused(iphone("[{band: 0, count: 1, size: 10MiB, pid: 3}]") + m, "pid");
    refused(iphone("[]") + m, "at least one");
    refused(iphone("[{band: 0, count: {dist: lognormal, median: 3, p95: 9}, size: 1MiB}]") + m,
            "a number or uniform");
    refused(iphone(g, "    compressor: {ratio: 0.5}\n") + m, "out of range [1, 10]");
    refused(iphone(g, "    compressor: {max: 0B}\n") + m, "above 0");
    refused(iphone(g, "    cached_apps: 100MiB\n    cached_app_size: 10MiB\n") + m,
            "others replaces cached_apps");
    refused(iphone(g, "    pageshortage: 9%\n") + m, "pageshortage is pages.idle");
    std::string bad_levels = iphone(g) + m;
    bad_levels.replace(bad_levels.find("critical: 5%, idle: 10%"), 23, "critical: 12%, idle: 10%");
    refused(bad_levels, "critical <= idle <= pressure");
    refused(iphone(g, "    fc_thrashing: 0\n") + m, "out of range [1, 1000000]");
    // pageshortage is the idle level: between XNU's critical (4 %) and
    // pressure (15 %) levels for 4 GiB
    std::string low = iphone(g, "    pageshortage: 3%\n") + m;
    low.replace(low.find("    pages: {critical: 5%, idle: 10%, pressure: 15%}\n"), 52, "");
    refused(low, "must be between XNU's critical and pressure levels");
    // the page model's keys need others; others is iOS's
    std::string plain = "name: p\nhorizon: 10s\nreplications: 1\ndevices:\n  - name: phone\n"
                        "    os: ios\n    ram: 4GiB\n    system: 1GiB\n"
                        "    kill: {rule: jetsam, limit: 1GiB}\n";
    refused(plain + "    compressor: {ratio: 2}\n" + m, "give the device's others");
    refused(plain + "    storage_read: 100MiB/s\n" + m, "ios devices that give others");
    std::string droid = "name: p\nhorizon: 10s\nreplications: 1\ndevices:\n  - name: droid\n"
                        "    os: android\n    ram: 4GiB\n    system: 1GiB\n"
                        "    kill: {rule: lmk, minfree: [{adj: 0, free: 100MiB}]}\n";
    refused(droid + "    others: " + g + "\n" + m, "ios devices only");
}

TEST_CASE("memstat: the plain jetsam rule's background kill is idle-exit", "[memstat][ios]")
{
    // No others: the plain rule.  Limit 3500 MiB; pageshortage 10 % (409.6
    // MiB).  The app's 1800 MiB in the background beside a 1000 MiB
    // successor: 3072 - 1800 - 1000 = 272 MiB < 409.6: killed at the move,
    // as XNU names the idle band's kill: idle-exit (not vm-pageshortage), for
    // which no JetsamEvent is posted
    Loaded l("name: plain\nhorizon: 60s\nreplications: 1\ndevices:\n  - name: phone\n"
             "    os: ios\n    ram: 4096MiB\n    system: 1024MiB\n"
             "    kill: {rule: jetsam, limit: 3500MiB}\n    pageshortage: 10%\n"
             "    successor: {size: 1000MiB}\n" +
             part("10MiB", false) + app("1800MiB", "cold_start, {background: 30s}"));
    mdl_rep r = l.run(0);
    CHECK(r.deaths[MDL_EXIT_SYSTEM_RECLAIM] == 1);
    REQUIRE(r.nrecords == 1);
    CHECK(r.records[0].kind == MDL_REC_METRICKIT);
    CHECK(r.records[0].jetsam == MDL_JETSAM_IDLE_EXIT);
}

TEST_CASE("memstat: the compressor out of space kills up the bands", "[memstat][ios]")
{
    // Compressor ratio 2, max 1000 MiB (low on space at 980).  Others: two
    // of 600 MiB in band 0; the file cache 400 MiB, all working set.  The
    // app: 1500 MiB + a 10 MiB model: 3072 - 1200 - 400 - 1510 = -38 MiB:
    // pageout drops the model's 10 MiB, then compresses 118.5 MiB of the
    // first process (pool 59.25): free 31.25, available 431.25, over idle.
    // A page then holds 900 MiB more: the compressor takes what it may, up
    // to 1000 MiB (the first process whole, 400 of the second; pool 500),
    // and the file cache goes: available under critical with the
    // compressor over 98 %: branch 1, vm-compressor-space-shortage, kills
    // the first process (its 600 MiB compressed: the pool frees 300); then
    // healthy but under idle with the second in band 0: idle-exit.
    Loaded l(iphone("[{band: 0, count: 2, size: 600MiB}]",
                    "    compressor: {ratio: 2, max: 1000MiB}\n"
                    "    page_cache: {size: 400MiB, working_set: 400MiB}\n") +
             part("10MiB", false) + "app: {baseline: {native: 1500MiB}}\n" +
             "workload: {path: [cold_start, {enter: {page: big, holds: {native: 900MiB}}}]}\n");
    mdl_rep r = l.run(0);
    CHECK(r.deaths_total == 0);
    CHECK(r.jetsam_kills[MDL_JETSAM_COMPRESSOR_SPACE] == 1);
    CHECK(r.jetsam_kills[MDL_JETSAM_IDLE_EXIT] == 1);
    CHECK(r.cached_kills == 2);
    CHECK(r.swap_used_max == 1000 * MiB);
}

TEST_CASE("memstat: the pressure level reaches the app in front as a memory warning",
          "[memstat][ios]")
{
    // ram - system = 3072 MiB (AM).  With the compressor's pool at 1600
    // MiB, ANC = 1472 < 1536 (AM / 2): warning, heard by the app in front
    // (one memory warning; the limit's warning, 80 % of 3500 MiB, is far).
    // At 2300 MiB, ANC 772 < 921.6 (0.30 AM): critical, no new warning
    // (the edge).  With the pool empty, ANC 3072 > 0.35 AM and > 0.60 AM:
    // back to normal, the warning ends.
    Loaded l(iphone("[{band: 0, count: 1, size: 10MiB}]",
                    "    compressor: {ratio: 2, max: 8GiB}\n    warning_at: 20%\n") +
             part("10MiB", false) + app("100MiB", "cold_start, {requests: {every: 1s, for: 5s}}"));
    world w;
    mdl_rep out;
    sim_error err;
    sim_error_clear(&err);
    REQUIRE(w__open(&w, &l.s.cells[0], 0, nullptr, nullptr, nullptr, &out, &err) == SIM_OK);
    REQUIRE(sim_run(w.e, SECOND) >= 0);
    REQUIRE(w.proc.alive);
    REQUIRE(w.proc.fg);
    CHECK(out.warnings == 0);
    auto pool = [&](int64_t content) {
        w.pg.x.other[0].comp = content;
        w.pg.x.other_comp = content;
        REQUIRE(w__pages_check(&w, 0, 1) == W_LIVES);
    };
    pool(3200 * MiB);
    CHECK(w.pg.x.level == 1);
    CHECK(out.warnings == 1);
    CHECK(w.proc.warned == 1);
    pool(4600 * MiB);
    CHECK(w.pg.x.level == 2);
    CHECK(out.warnings == 1);
    // one step per look, with XNU's hysteresis: pool 2100 MiB, ANC 972 =
    // 0.316 AM, under 0.35: critical stays; pool 1800, ANC 0.414 AM: warning;
    // pool 1300, ANC 0.577 AM, under 0.60: warning stays
    pool(4200 * MiB);
    CHECK(w.pg.x.level == 2);
    pool(3600 * MiB);
    CHECK(w.pg.x.level == 1);
    pool(2600 * MiB);
    CHECK(w.pg.x.level == 1);
    CHECK(w.proc.warned == 1);
    pool(0);
    CHECK(w.pg.x.level == 0);
    CHECK(w.proc.warned == 0);
    // from critical, over 0.60 AM goes straight to normal
    pool(4600 * MiB);
    REQUIRE(w.pg.x.level == 2);
    pool(0);
    CHECK(w.pg.x.level == 0);
    w__close(&w);
}

TEST_CASE("memstat: with the app dead, a new app in front still makes room", "[memstat][ios]")
{
    // The app's 1200 MiB is over its 1000 MiB limit at the cold start: it
    // dies (per-process-limit) and the user does not come back.  One band-0
    // process of 2000 MiB; the user then opens a 1500 MiB app: 3072 - 2000 -
    // 1500 = -428 MiB.  With no compressor, memorystatus kills the band-0
    // process (vm-pageshortage), and free pages never go negative.
    Loaded l(iphone("[{band: 0, count: 1, size: 2000MiB}]", "    successor: {size: 1500MiB}\n",
                    "limit: 1000MiB") +
             part("10MiB", false) + app("1200MiB", "cold_start, {background: 30s}"));
    world w;
    mdl_rep out;
    sim_error err;
    sim_error_clear(&err);
    REQUIRE(w__open(&w, &l.s.cells[0], 0, nullptr, nullptr, nullptr, &out, &err) == SIM_OK);
    for (sim_time t = 10000; t <= 5 * SECOND; t += 10000) {
        REQUIRE(sim_run(w.e, t) >= 0);
        int rc = mdl_world_validate(&w, &err);
        INFO("t = " << t << ": " << err.msg);
        REQUIRE(rc == SIM_OK);
        REQUIRE(w__pages_free(&w) >= 0);
    }
    CHECK(out.deaths_by_jetsam[MDL_JETSAM_PER_PROCESS_LIMIT] == 1);
    CHECK(out.jetsam_kills[MDL_JETSAM_VM_PAGESHORTAGE] == 1);
    CHECK(w.pg.x.nother == 0);
    w__close(&w);
}

TEST_CASE("memstat: the successor ages into the idle band and goes first", "[memstat][ios]")
{
    // The app: 1800 MiB + 10 MiB; a 1000 MiB successor while it is away
    // (free 262 MiB, available 272: under idle, 409.6, over critical).  The
    // user comes back after 1 s: the app is in front (band 100), the
    // successor ages: at 2 s after the return it is idle (band 0) and
    // memorystatus kills it at once (idle-exit), on its own timer.
    Loaded l(iphone("[{band: 0, count: 0, size: 1MiB}]", "    successor: {size: 1000MiB}\n") +
             part("10MiB", false) + app("1800MiB", "cold_start, {background: 1s}"));
    Notes n;
    mdl_rep r = traced(l, n);
    CHECK(r.deaths_total == 0);
    CHECK(r.successor_kills == 1);
    CHECK(r.jetsam_kills[MDL_JETSAM_IDLE_EXIT] == 1);
    sim_time back = n.first("foreground");
    REQUIRE(back >= 0);
    CHECK(n.first("successor_killed") == back + 2 * SECOND);
    CHECK(n.count("process_killed") == 0); // the others' note, not the successor's
}

TEST_CASE("memstat: a count {min, max} draws each count equally often, 0 included",
          "[memstat][ios][loader]")
{
    // count {min: 0, max: 2}: over 600 replications each of 0, 1, 2 is
    // drawn about 200 times (binomial, p = 1/3: sd 11.5; 4 sd either side)
    Loaded l(iphone("[{band: 0, count: {min: 0, max: 2}, size: 1MiB}]") + part("10MiB", false) +
             app("10MiB", "cold_start"));
    int seen[3] = {0, 0, 0};
    for (uint64_t rep = 0; rep < 600; rep++) {
        world w;
        mdl_rep out;
        sim_error err;
        sim_error_clear(&err);
        REQUIRE(w__open(&w, &l.s.cells[0], rep, nullptr, nullptr, nullptr, &out, &err) ==
                SIM_OK);
        REQUIRE(w.pg.x.nother <= 2);
        seen[w.pg.x.nother]++;
        w__close(&w);
    }
    for (int k = 0; k < 3; k++) {
        INFO("count " << k);
        CHECK(seen[k] >= 200 - 46);
        CHECK(seen[k] <= 200 + 46);
    }
}

namespace {
struct Reports {
    std::vector<mdl_jetsam_event> v;
    static int keep(void *ctx, const mdl_jetsam_event *ev, sim_error *)
    {
        static_cast<Reports *>(ctx)->v.push_back(*ev);
        return SIM_OK;
    }
    static int none(void *, const trc_event *, sim_error *) { return SIM_OK; }
};
} // namespace

TEST_CASE("memstat: a JetsamEvent's rpages is the footprint, at the page that crossed the limit",
          "[memstat][ips]")
{
    // ios-warning-ignored: the app in front goes over its per-process limit
    // by a whole allocation; XNU's ledger kills at the page that crossed it
    // (phys_footprint, which the snapshot's `pages` is), so the report says
    // the limit and one page, and its lifetimeMax is no less
    Loaded l(shim::read_file(
        shim::source_path("scenarios/catalog/teach/ios-warning-ignored.yaml")));
    const mdl_cell &cell = l.s.cells[0];
    Reports got;
    mdl_trace_sink sink{Reports::none, nullptr, Reports::keep};
    sink.ctx = &got;
    mdl_rep r;
    sim_error err;
    sim_error_clear(&err);
    REQUIRE(mdl_run_replication_traced(&cell, 0, nullptr, nullptr, &sink, &r, &err) == SIM_OK);
    REQUIRE(got.v.size() == 1);
    const mdl_jetsam_event &ev = got.v[0];
    REQUIRE(ev.cause == MDL_JETSAM_PER_PROCESS_LIMIT);
    bool app = false;
    for (unsigned k = 0; k < ev.nprocs; k++) {
        const mdl_jetsam_proc &p = ev.procs[k];
        CHECK(p.footprint <= p.lifetime_max);
        if (!p.app)
            continue;
        app = true;
        CHECK(p.footprint == cell.device->jetsam_limit + MDL_XNU_PAGE);
        CHECK(p.lifetime_max == p.footprint);
    }
    CHECK(app);
    // the report as written: rpages the footprint in 16 KiB pages
    char *text = nullptr;
    size_t len = 0;
    REQUIRE(res_ips_format(&ev, "ExampleApp", "iphone", 0, 0, &text, &len, &err) == SIM_OK);
    std::string t(text, len);
    free(text);
    CHECK(t.find("\"rpages\": " + std::to_string((cell.device->jetsam_limit + MDL_XNU_PAGE) /
                                                  MDL_XNU_PAGE)) != std::string::npos);
}
