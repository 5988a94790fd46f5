// Android as it reclaims: the page model of lmkd's PSI mode (models/pages.c,
// docs/model.md "The phone's pages") and the legacy minfree mode.  The
// phone: 4096 MiB, system 1300 MiB (2796 MiB for apps), no cached apps,
// watermarks min 40, low 50, high 60 MiB; in psi mode reclaim_rate and
// storage_read are 100 MiB/s unless a case says otherwise.  Every figure is
// derived in a comment.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include <gsl/gsl_rng.h>

#include "replay/replay.h"
#include "scenarios/scenarios.h"
#include "shim/shim.hpp"
#include "shim/world.hpp"

namespace {

const int64_t MiB = 1024 * 1024;

using shim::Loaded;

// The phone in psi mode (or, with minfree, the legacy levels, adj 0 at
// 72 MiB), with `extra` device keys.
std::string droid(const char *mode, const std::string &extra = "")
{
    std::string kill = std::string(mode) == "psi"
                           ? "    kill: {rule: lmk, mode: psi, watermarks: {min: 40MiB, low: "
                             "50MiB, high: 60MiB}}\n    reclaim_rate: 100MiB/s\n"
                             "    storage_read: 100MiB/s\n"
                           : "    kill: {rule: lmk, mode: minfree, minfree: [{adj: 0, free: "
                             "72MiB}, {adj: 700, free: 200MiB}]}\n";
    return "name: psi\nhorizon: 60s\nreplications: 1\ndevices:\n  - name: droid\n"
           "    os: android\n    ram: 4096MiB\n    system: 1300MiB\n" +
           kill + extra;
}

std::string part(const char *file, bool hot) { return shim::mapped_part(file, hot); }

// The app holds `counted` of its own (its baseline) and a 10 MiB model.
std::string holding(const char *counted, const char *path)
{
    return part("10MiB", false) + "app: {baseline: {native: " + counted + "}}\n" +
           "workload: {path: [" + path + "]}\n";
}

// The phone of the thrashing LLM (its test derives the figures).
std::string llm_phone()
{
    std::string yaml =
        droid("psi", "    cached_apps: 60MiB\n    cached_app_size: 20MiB\n"
                     "    successor: {size: 20MiB}\n    lmkd: {psi_complete_stall_ms: 1000}\n") +
        part("600MiB", true) + "app: {baseline: {native: 2600MiB}}\n" +
        "workload: {path: [cold_start, {background: 5s}, {requests: {every: 200ms, for: 20s}}]}\n";
    yaml.replace(yaml.find("reclaim_rate: 100MiB/s"), 22, "reclaim_rate: 4GiB/s");
    yaml.replace(yaml.find("storage_read: 100MiB/s"), 22, "storage_read: 4GiB/s");
    return yaml;
}

} // namespace

TEST_CASE("minfree mode: the legacy levels, net of the reserve and with the file cache",
          "[psi][android]")
{
    // counted 2740 MiB: free 2796 - 2740 = 56 MiB < adj 0's 72 MiB: it dies
    // (low_memory), and minfree mode names no reason
    Loaded legacy(droid("minfree") + holding("2740MiB", "cold_start"));
    mdl_rep l = legacy.run(0);
    CHECK(l.deaths[MDL_EXIT_LOW_MEMORY] == 1);
    REQUIRE(l.nrecords == 1);
    CHECK(l.records[0].lmkd == MDL_LMKD_NONE);
    // counted 2700: free 96 MiB lives; with the zones' reserve (the high
    // watermark, 30 MiB) free is 66 < 72: mp_event_common's other_free
    Loaded lives(droid("minfree") + holding("2700MiB", "cold_start"));
    CHECK(lives.run(0).deaths_total == 0);
    std::string reserve = droid("minfree");
    reserve.replace(reserve.find("}]}"), 3,
                    "}], watermarks: {min: 10MiB, low: 20MiB, high: 30MiB}}");
    Loaded net(reserve + holding("2700MiB", "cold_start"));
    CHECK(net.run(0).deaths_total == 1);
    // ... but not while the page cache (other_file) is over the level
    Loaded cache(reserve + "    page_cache: {size: 100MiB, working_set: 0MiB}\n" +
                 holding("2600MiB", "cold_start"));
    CHECK(cache.run(0).deaths_total == 0);
}

TEST_CASE("psi: lmkd's LOW_MEM kills cached apps, never the foreground app", "[psi][android]")
{
    // A cold page cache of 100 MiB (no working set), no zram.  The app's
    // 2700 MiB: free 2796 - 100 - 2700 = -4 MiB, under min 40: direct
    // reclaim takes 44 MiB of the cold cache (free 40, at min), stalling
    // the app 44 / 100 s = 440 ms: PSI some over 70 ms wakes lmkd (full, the
    // app's own stall in front, 440 < 700 ms: not critical).  lmkd: direct
    // reclaim, no refault (thrashing 0), no swap; free 40 MiB is not under
    // min but under low: LOW_MEM, min_score_adj 701.  Nothing is at 701 or
    // above: the app (adj 0) lives.
    const std::string cache = "    page_cache: {size: 100MiB, working_set: 0MiB}\n";
    Loaded front(droid("psi", cache) + holding("2700MiB", "cold_start"));
    mdl_rep r = front.run(0);
    CHECK(r.lmkd_decided[MDL_LMKD_LOW_MEM] >= 1);
    CHECK(r.deaths_total == 0);
    CHECK(r.lmkd_kills_of_others == 0);
    CHECK(r.kernel_oom_kills == 0);
    // Two cached apps of 20 MiB as well: free -44 MiB, direct reclaim takes
    // 84 MiB of the cache (free 40) in 840 ms: over psi_complete_stall_ms
    // 700 that would be a critical event (NOT_RESPONDING, down to adj 0);
    // at 1000 it is not.  LOW_MEM kills the oldest cached app (adj 950),
    // free 60 MiB; the next polls find nothing moved: one kill, the app lives
    Loaded cached(droid("psi", cache + "    cached_apps: 40MiB\n    cached_app_size: 20MiB\n"
                                       "    lmkd: {psi_complete_stall_ms: 1000}\n") +
                  holding("2700MiB", "cold_start"));
    r = cached.run(0);
    CHECK(r.deaths_total == 0);
    CHECK(r.cached_kills == 1);
    CHECK(r.lmkd_decided[MDL_LMKD_LOW_MEM] == 1);
    CHECK(r.lmkd_decided[MDL_LMKD_NOT_RESPONDING] == 0);
    // at the default 700 ms the same stall is a complete one: NOT_RESPONDING
    Loaded stalled(droid("psi", cache + "    cached_apps: 40MiB\n    cached_app_size: 20MiB\n") +
                   holding("2700MiB", "cold_start"));
    r = stalled.run(0);
    CHECK(r.lmkd_decided[MDL_LMKD_NOT_RESPONDING] == 1);
    CHECK(r.cached_kills == 1); // the oldest cached app first, still
    CHECK(r.deaths_total == 0);
}

TEST_CASE("psi: with zram not full and no thrashing, the app over the old line lives and slows",
          "[psi][android]")
{
    // The old psi rule counted hot weights against free memory and killed
    // the app in front when counted + hot > 2796 - min 40 = 2756 MiB
    // (LOW_MEM_AND_THRASHING).  Here counted 2300 + 600 MiB of hot weights
    // = 2900, with a page cache of 400 MiB (100 of it a working set),
    // reclaim and storage at 1 GiB/s, zram 1 GiB (empty).  The load maps
    // the weights: free 2796 - 2300 - 400 - 600 = -504 MiB, direct reclaim
    // drops the 300 MiB of cold cache and 244 MiB of the weights (cold
    // while loading) to reach min: a 544 ms stall, under the 700 ms of a
    // complete one.  Every inference first reads its dropped weights back
    // (a refault each, at 1 GiB/s) and direct reclaim drops as much again
    // of the working sets, so each 100 ms inference takes several times
    // longer.  lmkd wakes on the stalls; the refaults stay under the file
    // LRU (thrashing under 100 %); it may see swap as low (free swap is
    // bounded by MemFree + Inactive(file), small here), but with free at
    // min, not under it, its swap branch spares adj 200 and below: nothing
    // kills the app.
    std::string phone = droid("psi", "    zram: {size: 1GiB, ratio: 3}\n"
                                     "    page_cache: {size: 400MiB, working_set: 100MiB}\n");
    phone.replace(phone.find("reclaim_rate: 100MiB/s"), 22, "reclaim_rate: 1GiB/s");
    phone.replace(phone.find("storage_read: 100MiB/s"), 22, "storage_read: 1GiB/s");
    Loaded l(phone + part("600MiB", true) + "app: {baseline: {native: 2300MiB}}\n" +
             "workload: {path: [cold_start, {requests: {every: 5s, for: 30s}}]}\n");
    mdl_rep r = l.run(0);
    CHECK(r.deaths_total == 0);
    CHECK(r.completed == 6);
    CHECK(r.refault_bytes >= 6 * 200 * MiB);
    CHECK(r.thrashing_max < 100);
    CHECK(r.lmkd_wakeups >= 1);
    // slowed: every inference took over twice its time
    uint32_t slow = 0, all = 0;
    for (unsigned k = 0; k < MDL_SLOWDOWN_BUCKETS; k++) {
        all += r.slowdown[k];
        slow += k >= mdl_slowdown_bucket(2.0) ? r.slowdown[k] : 0;
    }
    CHECK(all == 6);
    CHECK(slow == 6);
    // the same app with its weights treated as cold: nothing to read back
    Loaded cold(phone + part("600MiB", false) + "app: {baseline: {native: 2300MiB}}\n" +
                "workload: {path: [cold_start, {requests: {every: 5s, for: 30s}}]}\n");
    mdl_rep c = cold.run(0);
    CHECK(c.deaths_total == 0);
    CHECK(c.refault_bytes == 0);
}

TEST_CASE("psi: LOW_MEM_AND_SWAP only with free swap under 10 % of zram", "[psi][android]")
{
    // Four cached apps of 100 MiB, counted 2400 MiB: free 2796 - 400 - 2400
    // = -4 MiB, under min: direct reclaim must free 44 MiB, and there is
    // nothing but the cached apps' anonymous memory: ratio 2, so 88 MiB go
    // to zram (stored in 44).  Free 40 MiB: at min, under low.  A 440 ms
    // stall wakes lmkd.  zram of 300 MiB: 212 MiB of swap free, free swap
    // min(212, MemFree 40 + Inactive(file) 0) = 40 MiB, not under 30 (10 %):
    // LOW_MEM, min_score_adj 701.  zram of 90 MiB: 2 MiB of swap free,
    // under 9: LOW_MEM_AND_SWAP, perceptible apps spared (201).  Both kill
    // a cached app.
    auto phone = [](const char *zram) {
        return droid("psi", std::string("    cached_apps: 400MiB\n    cached_app_size: 100MiB\n"
                                         "    zram: {size: ") + zram + ", ratio: 2}\n") +
               holding("2400MiB", "cold_start");
    };
    Loaded roomy(phone("300MiB"));
    mdl_rep r = roomy.run(0);
    CHECK(r.lmkd_decided[MDL_LMKD_LOW_MEM] == 1);
    CHECK(r.lmkd_decided[MDL_LMKD_LOW_MEM_AND_SWAP] == 0);
    CHECK(r.swap_used_max == 88 * MiB);
    CHECK(r.cached_kills == 1);
    Loaded full(phone("90MiB"));
    r = full.run(0);
    CHECK(r.lmkd_decided[MDL_LMKD_LOW_MEM_AND_SWAP] == 1);
    CHECK(r.lmkd_decided[MDL_LMKD_LOW_MEM] == 0);
    CHECK(r.cached_kills == 1);
    CHECK(r.deaths_total == 0);
}

TEST_CASE("psi: a complete stall is NOT_RESPONDING, an allocation nothing can meet a kernel "
          "OOM kill",
          "[psi][android]")
{
    // A cold page cache of 200 MiB, counted 2700: free -104 MiB, direct
    // reclaim of 144 MiB at 100 MiB/s stalls the app in front 1.44 s, over
    // psi_complete_stall_ms 700: a critical event, NOT_RESPONDING, down to
    // adj 0.  No other app: the app dies at its start, in front.
    Loaded stall(droid("psi", "    page_cache: {size: 200MiB, working_set: 0MiB}\n") +
                 holding("2700MiB", "cold_start"));
    mdl_rep r = stall.run(0);
    CHECK(r.deaths_by_lmkd[MDL_LMKD_NOT_RESPONDING] == 1);
    CHECK(r.first_death_foreground == 1);
    CHECK(r.first_death_time == 0);
    REQUIRE(r.nrecords >= 1);
    CHECK(r.records[0].lmkd == MDL_LMKD_NOT_RESPONDING);
    // No page cache, no zram, counted 2780: free 16 MiB under min 40 and
    // nothing to reclaim (lmkd sees no scan and no refault: it bails out):
    // the kernel's OOM killer takes the largest process, the app.  The
    // system sees a SIGKILL, not lmkd's kill.
    Loaded oom(droid("psi") + holding("2780MiB", "cold_start"));
    r = oom.run(0);
    CHECK(r.kernel_oom_kills == 1);
    CHECK(r.deaths_total == 1);
    REQUIRE(r.nrecords >= 1);
    CHECK(r.records[0].kernel_oom == 1);
    CHECK(r.records[0].lmkd == MDL_LMKD_NONE);
    CHECK(r.records[0].status == 9);
    CHECK(r.records[0].reason == MDL_AEI_SIGNALED);
}

TEST_CASE("psi: an LLM whose weights do not fit thrashes: cached apps, the previous app, then "
          "the app",
          "[psi][android]")
{
    // Three cached apps of 20 MiB, the app the user switches to of 20 MiB,
    // no zram, no page cache; reclaim and storage at 4 GiB/s; complete
    // stalls only at 1000 ms.  Counted 2600 MiB: free 2796 - 60 - 2600 =
    // 136 MiB.  The 600 MiB of hot weights cannot stay: mapping them takes
    // free to -464 MiB, direct reclaim drops 504 MiB of them (a 123 ms
    // stall: lmkd wakes; free at min, under low: LOW_MEM kills the oldest
    // cached app).  From 5.2 s the user asks every 200 ms: each inference
    // reads about 500 MiB back (a refault each) and direct reclaim drops
    // them again, over a file LRU of about 100 MiB: thrashing of several
    // hundred percent, over thrashing_limit_critical 300.  The PSI events
    // are the kernel's: the one of the stall at 5.2 s signalled, the
    // breaches after it held for a window (psi.c update_triggers), so lmkd
    // decides at its polls (every 10 ms after a kill), between the stalls:
    // free pages back at high after the reclaim, the device in direct
    // reclaim (pgscan_direct moved) and thrashing: DIRECT_RECL_AND_THRASHING
    // with min_score_adj 0, one kill per wake-up, by adj: the two cached apps
    // left (adj 999 down), the previous app (700, the one the user came back
    // from), then the app itself (0).
    std::string yaml = llm_phone();
    Loaded l(yaml);
    mdl_rep r = l.run(0);
    CHECK(r.cached_kills == 3);
    CHECK(r.successor_kills == 1);
    CHECK(r.kernel_oom_kills == 0);
    CHECK(r.thrashing_max >= 300);
    CHECK(r.deaths_total == 1);
    CHECK(r.first_death_foreground == 1);
    CHECK(r.deaths_by_lmkd[MDL_LMKD_DIRECT_RECL_AND_THRASHING] == 1);
    // the order, from the timeline: every other app before the app
    shim::TempDir dir;
    shim::write_file(dir.file("llm.yaml"), yaml);
    shim::RunResult g = shim::oomsim({"gen", dir.file("llm.yaml"), "-o", dir.file("t.jsonl")});
    REQUIRE(g.status == 0);
    std::string t = shim::read_file(dir.file("t.jsonl"));
    size_t last_cached = t.rfind("\"error\":\"cached_app_killed\"");
    size_t previous = t.find("\"error\":\"previous_app_killed\"");
    size_t app = t.find("\"error\":\"DIRECT_RECL_AND_THRASHING\"");
    REQUIRE(last_cached != std::string::npos);
    REQUIRE(previous != std::string::npos);
    REQUIRE(app != std::string::npos);
    CHECK(last_cached < previous);
    CHECK(previous < app);

}

TEST_CASE("psi: the thrashing LLM's timeline: pages, lmkd's kill line, explain and the export",
          "[psi][android]")
{
    shim::TempDir dir;
    shim::write_file(dir.file("llm.yaml"), llm_phone());
    shim::RunResult g = shim::oomsim({"gen", dir.file("llm.yaml"), "-o", dir.file("t.jsonl")});
    REQUIRE(g.status == 0);
    std::string t = shim::read_file(dir.file("t.jsonl"));
    // the trace carries the pages; explain tells them, the Perfetto export counts them
    CHECK(t.find("\"error\":\"refault\",\"duration_us\":") != std::string::npos);
    CHECK(t.find("\"action\":\"LOW_MEM\",\"pages\":{\"free\":") != std::string::npos);
    shim::RunResult x = shim::oomsim({"explain", dir.file("llm.yaml"), "-o", dir.file("ex")});
    REQUIRE(x.status == 0);
    CHECK(x.out.find("of its dropped weights back from storage (+") != std::string::npos);
    CHECK(x.out.find("reclaim drops ") != std::string::npos);
    CHECK(x.out.find("lmkd kills the previous app (the one the user left) (") !=
          std::string::npos);
    CHECK(x.out.find("adj 700): free pages ") != std::string::npos);
    CHECK(x.out.find("(DIRECT_RECL_AND_THRASHING, adj 0; free pages ") != std::string::npos);
    // the app's death carries lmkd's own kill line, which the log reader reads as a real one
    size_t lp = t.find("\"log\":\"lowmemorykiller: Kill 'com.example.app' (");
    REQUIRE(lp != std::string::npos);
    std::string line = t.substr(lp + 7, t.find('"', lp + 7) - lp - 7);
    CHECK(line.find(", uid 10000, oom_score_adj 0 to free ") != std::string::npos);
    CHECK(line.find("kB rss, 0kB swap; reason: ") != std::string::npos);
    rpl_exit *xs = nullptr;
    size_t nx = 0;
    sim_error perr;
    sim_error_clear(&perr);
    REQUIRE(rpl_exits_parse(line.data(), line.size(), "log", &xs, &nx, &perr) == SIM_OK);
    REQUIRE(nx == 1);
    CHECK(xs[0].source == RPL_LMKD);
    CHECK(xs[0].adj == 0);
    CHECK(std::string(xs[0].description).find("device is in direct reclaim and thrashing (") !=
          std::string::npos);
    std::free(xs);
    CHECK(x.out.find("  lmkd logs: lowmemorykiller: Kill 'com.example.app' (") != std::string::npos);
    shim::RunResult dg = shim::oomsim({"diagnose", dir.file("t.jsonl")});
    REQUIRE(dg.status == 0);
    CHECK(dg.out.find(", pid 10") != std::string::npos);
    CHECK(dg.out.find(", uid 10000") != std::string::npos);
    std::string json = shim::read_file(dir.file("ex/timeline.json"));
    for (const char *counter : {"free pages", "file LRU", "swap used", "thrashing %", "psi some"})
        CHECK(json.find(std::string("\"name\":\"") + counter + "\"") != std::string::npos);
}

TEST_CASE("psi: random phones and paths keep their pages, every check passing",
          "[psi][android][property]")
{
    // Twenty random scenarios (fixed seed) over the page model's keys, five
    // replications each.  In a Debug build (the sanitizer suite) the world
    // checker runs after every event: the parts of RAM sum to it, free
    // pages never go negative, zram and the page cache hold no more than
    // their sizes.  Here every run must end cleanly, and between them the
    // runs must reach each kind of kill at least once.
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, 33);
    uint64_t lmkd = 0, oom = 0, lives = 0;
    for (int k = 0; k < 20; k++) {
        auto mib = [&](unsigned lo, unsigned span) {
            return std::to_string(lo + gsl_rng_uniform_int(g, span)) + "MiB";
        };
        std::string pc = mib(0, 600);
        std::string dev = "    cached_apps: " + mib(0, 600) + "\n    cached_app_size: 50MiB\n" +
                          "    successor: {size: " + mib(10, 300) + "}\n" +
                          "    page_cache: {size: " + pc + ", working_set: 0MiB}\n" +
                          "    pressure: {dist: exponential, mean: 3s}\n" +
                          "    pressure_size: {dist: uniform, min: 10MiB, max: " + mib(20, 400) +
                          "}\n" + (k % 2 ? "    zram: {size: " + mib(100, 900) + ", ratio: 2.5}\n" : "");
        std::string yaml = droid("psi", dev) + part(mib(100, 700).c_str(), k % 3 != 0) +
                           "app: {baseline: {native: " + mib(1600, 900) + "}}\n" +
                           "workload:\n  path: [cold_start, {requests: {every: 300ms, for: 10s}}, "
                           "{background: 5s}, {requests: {every: 1s, for: 10s}}]\n"
                           "  relaunch: 1s\n";
        Loaded l(yaml);
        for (uint64_t rep = 0; rep < 5; rep++) {
            INFO("scenario " << k << ", replication " << rep << "\n" << yaml);
            mdl_rep r = l.run(0, rep);
            lmkd += r.lmkd_kills_of_others + (r.deaths_total - r.kernel_oom_kills);
            oom += r.kernel_oom_kills;
            lives += r.deaths_total == 0;
            CHECK(r.min_free < INT64_MAX);
        }
    }
    gsl_rng_free(g);
    CHECK(lmkd > 0);
    CHECK(oom > 0);
    CHECK(lives > 0);
}

TEST_CASE("minfree mode: more zram never kills earlier, hot pages never kill later",
          "[psi][android][property]")
{
    // the pure rule over random states (fixed seed): if the device with
    // more zram (a larger size, ratio or swappable share) kills the app,
    // the one with less does too; if the app dies without hot pages, it
    // dies with them
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 21);
    Loaded m(droid("minfree", "    zram: {size: 1GiB, ratio: 2, swappable: 50%}\n") +
             holding("10MiB", "cold_start"));
    unsigned deaths = 0, survivals = 0;
    for (int k = 0; k < 20000; k++) {
        mdl_device less = m.s.devices[0];
        less.cached_app_size = (int64_t)(50 + gsl_rng_uniform_int(r, 200)) * MiB;
        less.zram_size = (int64_t)gsl_rng_uniform_int(r, 2048) * MiB;
        less.zram_ratio = 1.0 + 3.0 * gsl_rng_uniform(r);
        less.zram_swappable = gsl_rng_uniform(r);
        mdl_device more = less;
        more.zram_size += (int64_t)gsl_rng_uniform_int(r, 512) * MiB;
        more.zram_ratio += gsl_rng_uniform(r);
        more.zram_swappable += (1.0 - more.zram_swappable) * gsl_rng_uniform(r);
        mdl_kill_input in{(int64_t)gsl_rng_uniform_int(r, 2800) * MiB,
                          (int64_t)gsl_rng_uniform_int(r, 1500) * MiB,
                          (int64_t)gsl_rng_uniform_int(r, 300) * MiB,
                          (int)gsl_rng_uniform_int(r, 2),
                          (int64_t)gsl_rng_uniform_int(r, 800) * MiB,
                          (int)gsl_rng_uniform_int(r, 2),
                          0, 0, 0};
        mdl_kill_verdict a, b;
        mdl_kill_decide(&more, &in, &a);
        mdl_kill_decide(&less, &in, &b);
        INFO("state " << k);
        if (a.dies)
            REQUIRE(b.dies);
        CHECK(a.cached_kills <= b.cached_kills);
        mdl_kill_input hot = in;
        hot.hot = (int64_t)gsl_rng_uniform_int(r, 1000) * MiB;
        mdl_kill_decide(&less, &hot, &a);
        if (b.dies)
            REQUIRE(a.dies);
        deaths += b.dies;
        survivals += !b.dies;
    }
    gsl_rng_free(r);
    // both sides of the rule were exercised
    CHECK(deaths > 1000);
    CHECK(survivals > 1000);
}

TEST_CASE("minfree mode over random scenarios: the first death comes no earlier with more "
          "zram and no later with hot pages",
          "[psi][android][property]")
{
    // ten random scenarios (fixed seed): cached apps, pressure spikes, a
    // background step and a relaunch; each replication's first death time
    // (the horizon when none) under more zram is no earlier, and with the
    // part hot no later.  Up to the first death the two runs see the same
    // draws and the same app, and at every check the app's fate with every
    // cached app gone decides: more zram or fewer hot pages only add free
    // memory there.
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    auto first = [](const mdl_rep &x) { return x.deaths_total ? x.first_death_time : -1; };
    unsigned died = 0, lived = 0;
    for (int k = 0; k < 10; k++) {
        std::string cached = std::to_string(200 + gsl_rng_uniform_int(r, 1000)) + "MiB";
        std::string file = std::to_string(100 + gsl_rng_uniform_int(r, 800)) + "MiB";
        unsigned lo = 1500 + (unsigned)gsl_rng_uniform_int(r, 700);
        std::string base_lo = std::to_string(lo) + "MiB", base = std::to_string(lo + 400) + "MiB";
        auto plan = [&](const char *zram, bool hot) {
            return droid("minfree", "    cached_apps: {dist: uniform, min: 0MiB, max: " + cached +
                                    "}\n    cached_app_size: 120MiB\n    pressure: {dist: "
                                    "exponential, mean: 5s}\n    pressure_size: {dist: uniform, "
                                    "min: 50MiB, max: 400MiB}\n" + zram) +
                   part(file.c_str(), hot) + "app: {baseline: {native: {dist: uniform, min: " +
                   base_lo + ", max: " + base + "}}}\n" +
                   "workload:\n  path: [cold_start, {requests: {every: 1s, for: 20s}}, "
                   "{background: 10s}, {requests: {every: 1s, for: 20s}}]\n  relaunch: 2s\n";
        };
        Loaded none(plan("", false));
        Loaded less(plan("    zram: {size: 512MiB, ratio: 2, swappable: 40%}\n", false));
        Loaded more(plan("    zram: {size: 1GiB, ratio: 3, swappable: 60%}\n", false));
        Loaded hot(plan("    zram: {size: 512MiB, ratio: 2, swappable: 40%}\n", true));
        for (uint64_t rep = 0; rep < 20; rep++) {
            INFO("scenario " << k << ", replication " << rep);
            sim_time t0 = first(none.run(0, rep)), t1 = first(less.run(0, rep)),
                     t2 = first(more.run(0, rep)), th = first(hot.run(0, rep));
            // -1 is "no death": the latest of all
            auto later_or_same = [](sim_time a, sim_time b) { return a < 0 || (b >= 0 && a >= b); };
            CHECK(later_or_same(t1, t0));
            CHECK(later_or_same(t2, t1));
            CHECK(later_or_same(t1, th));
            died += t1 >= 0;
            lived += t1 < 0;
        }
    }
    gsl_rng_free(r);
    // the scenarios have deaths and survivals both (a tenth of the 200
    // replications each at least, so neither direction is vacuous)
    CHECK(died >= 15);
    CHECK(lived >= 15);
}

TEST_CASE("the new reclaim keys are checked where they are written", "[psi][loader]")
{
    auto refused = [](const std::string &yaml, const char *what) {
        scn_scenario s{};
        sim_error err;
        sim_error_clear(&err);
        int rc = scn_scenario_parse(yaml.data(), yaml.size(), "t.yaml", &s, &err);
        INFO(yaml << "\n" << err.msg);
        REQUIRE(rc != SIM_OK);
        CHECK(std::string(err.msg).find(what) != std::string::npos);
    };
    std::string rest = holding("10MiB", "cold_start");
    auto with_kill = [&](const char *kill) {
        return std::string("name: psi\nhorizon: 60s\ndevices:\n  - name: droid\n    os: android\n"
                           "    ram: 4096MiB\n    system: 1300MiB\n    kill: ") +
               kill + "\n" + rest;
    };
    refused(with_kill("{rule: lmk, mode: psi}"), "watermarks");
    refused(with_kill("{rule: lmk, mode: psi, watermarks: {min: 60MiB, low: 50MiB, high: 70MiB}}"),
            "in order");
    refused(with_kill("{rule: lmk, mode: psi, watermarks: {min: 4MiB, low: 5MiB, high: 6MiB}, "
                      "minfree: [{adj: 0, free: 1MiB}]}"),
            "minfree belongs to mode: minfree");
    refused(with_kill("{rule: lmk, mode: fast, minfree: [{adj: 0, free: 1MiB}]}"), "fast");
    refused(droid("psi", "    zram: {size: 1GiB, ratio: 0.5}\n") + rest,
            "out of range [1, 10]");
    refused(droid("minfree", "    zram: {size: 1GiB, ratio: 2}\n") + rest, "swappable");
    // the page model's keys, each with its place
    auto swap_line = [](std::string y, const char *from, const char *to) {
        return y.replace(y.find(from), std::strlen(from), to);
    };
    refused(swap_line(droid("psi"), "reclaim_rate: 100MiB/s", "reclaim_rate: 0MiB/s") + rest,
            "reclaim_rate: a rate must be above 0/s");
    refused(swap_line(droid("psi"), "storage_read: 100MiB/s", "storage_read: 250MB") + rest,
            "storage_read: expected a rate in bytes per second");
    refused(droid("psi", "    swappiness: 201\n") + rest, "swappiness");
    refused(droid("psi", "    lmkd: {swap_free_low_percentage: 101}\n") + rest,
            "lmkd.swap_free_low_percentage");
    refused(droid("psi", "    lmkd: {thrashing_limit: -1}\n") + rest, "lmkd.thrashing_limit");
    refused(droid("psi", "    lmkd: {lowmem_min_oom_score: 800}\n") + rest,
            "lowmem_min_oom_score");
    refused(droid("psi", "    lmkd: {low_ram: maybe}\n") + rest, "lmkd.low_ram");
    refused(droid("psi", "    page_cache: {size: 100MiB, working_set: 200MiB}\n") + rest,
            "within the page cache");
    refused(droid("psi", "    page_cache: {size: 3GiB, working_set: 0MiB}\n") + rest,
            "fit in ram - system");
    refused(droid("minfree", "    reclaim_rate: 100MiB/s\n") + rest, "kill mode: psi only");
    refused(droid("minfree", "    lmkd: {thrashing_limit: 50}\n") + rest, "kill mode: psi only");
    refused(droid("psi", "    zram: {size: 1GiB, ratio: 2, swappable: 50%}\n") + rest,
            "swappable belongs to mode: minfree");
    refused(droid("psi") + R"(
candidates:
  - id: m
    digest: 0a1b
    runtime: test-1
    parts:
      m:
        file: 10MiB
        load: {mode: copy, time: 100ms, file_hot: true}
        prepare: {time: 100ms}
        inference: {time: 100ms}
workload: {path: [cold_start]}
)",
            "file_hot needs mode: mmap");
    // found by fuzz_profiles: a part that is not a mapping was read for its
    // file_hot key (a crash); and a delegates entry that is not a mapping
    refused(droid("psi") + "candidates:\n  - id: m\n    digest: 0a1b\n    runtime: test-1\n"
                           "    parts:\n      m: gpu tim150 +ms\nworkload: {path: [cold_start]}\n",
            "expected a mapping");
    refused(droid("psi", "    delegates: {gpu: maybe}\n") + rest, "expected a mapping");
    refused(std::string("name: z\nhorizon: 60s\ndevices:\n  - name: p\n    os: ios\n"
                        "    ram: 4GiB\n    system: 1GiB\n    kill: {rule: jetsam, limit: 2GiB}\n"
                        "    zram: {size: 1GiB, ratio: 2, swappable: 50%}\n") +
                rest,
            "android devices only");
}
