// Android as it reclaims: lmkd's PSI mode (watermarks), zram, hot mapped
// weights and lmkd's kill reasons (docs/model.md "Kill rules").  The phone
// of the issue: 4096 MiB, system 1300 MiB (2796 MiB for apps), no cached
// apps, watermarks min 40, low 50, high 60 MiB.  Every figure is derived
// in a comment.
#include <catch2/catch.hpp>

#include <string>

#include <gsl/gsl_rng.h>

#include "scenarios/scenarios.h"
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
                             "50MiB, high: 60MiB}}\n"
                           : "    kill: {rule: lmk, mode: minfree, minfree: [{adj: 0, free: "
                             "72MiB}, {adj: 700, free: 200MiB}]}\n";
    return "name: psi\nhorizon: 60s\nreplications: 1\ndevices:\n  - name: droid\n"
           "    os: android\n    ram: 4096MiB\n    system: 1300MiB\n" +
           kill + extra;
}

// One part: a `file` mapped (mode mmap, `hot` or not), nothing else held.
std::string part(const char *file, bool hot)
{
    return std::string(R"(
candidates:
  - id: m
    digest: 0a1b
    runtime: test-1
    parts:
      m:
        file: )") + file + "\n        load: {mode: mmap, time: 100ms" +
           (hot ? ", file_hot: true" : "") + R"(}
        prepare: {time: 100ms}
        inference: {time: 100ms}
)";
}

// The app holds `counted` of its own (its baseline) and a 10 MiB model.
std::string holding(const char *counted, const char *path)
{
    return part("10MiB", false) + "app: {baseline: {native: " + counted + "}}\n" +
           "workload: {path: [" + path + "]}\n";
}

} // namespace

TEST_CASE("psi mode: the foreground dies under min, minfree mode under its level",
          "[psi][android]")
{
    // counted 2740 MiB: free 2796 - 2740 = 56 MiB.  psi: 56 >= min 40, the
    // app lives.  minfree: 56 < adj 0's 72 MiB, it dies (low_memory).
    Loaded psi(droid("psi") + holding("2740MiB", "cold_start"));
    CHECK(psi.run(0).deaths_total == 0);
    Loaded legacy(droid("minfree") + holding("2740MiB", "cold_start"));
    mdl_rep l = legacy.run(0);
    CHECK(l.deaths[MDL_EXIT_LOW_MEMORY] == 1);
    REQUIRE(l.nrecords == 1);
    CHECK(l.records[0].lmkd == MDL_LMKD_NONE); // minfree mode names no reason
}

TEST_CASE("psi mode: a background app dies under high", "[psi][android]")
{
    // counted 2745 MiB: free 51 MiB, over min 40: it lives in front; sent
    // to the background right after its start (t = 0), 51 < high 60: it dies
    // at that instant, LOW_MEM (no zram, no hot pages).
    Loaded l(droid("psi") + holding("2745MiB", "cold_start, {background: 20s}"));
    mdl_rep r = l.run(0);
    CHECK(r.deaths[MDL_EXIT_SYSTEM_RECLAIM] == 1);
    CHECK(r.first_death_time == 0);
    CHECK(r.first_death_foreground == 0);
    REQUIRE(r.nrecords == 1);
    CHECK(r.records[0].lmkd == MDL_LMKD_LOW_MEM);
    CHECK(r.deaths_by_lmkd[MDL_LMKD_LOW_MEM] == 1);
    Loaded front(droid("psi") + holding("2745MiB", "cold_start"));
    CHECK(front.run(0).deaths_total == 0);
}

TEST_CASE("hot mapped weights count against free memory: LOW_MEM_AND_THRASHING",
          "[psi][android]")
{
    // the app's own 2200 MiB, then a 600 MiB mapped part whose weights are
    // read at every inference: at the end of its load free is 2796 - 2200 -
    // 600 = -4 MiB, under min: it dies in the foreground, and without the
    // hot pages (596 MiB free) it would have lived: LOW_MEM_AND_THRASHING.
    auto plan = [](bool hot) {
        return droid("psi") + part("600MiB", hot) + "app: {baseline: {native: 2200MiB}}\n" +
               "workload: {path: [cold_start]}\n";
    };
    Loaded h(plan(true));
    mdl_rep r = h.run(0);
    CHECK(r.deaths[MDL_EXIT_LOW_MEMORY] == 1);
    CHECK(r.first_death_stage == MDL_STAGE_LOAD);
    CHECK(r.first_death_time == 100000); // the load's end
    REQUIRE(r.nrecords == 1);
    CHECK(r.records[0].lmkd == MDL_LMKD_LOW_MEM_AND_THRASHING);
    Loaded cold(plan(false));
    CHECK(cold.run(0).deaths_total == 0);
    // hot pages count only in the foreground: in the background from the
    // start, the same app lives there (free 596 MiB over high), and dies
    // when the user returns at 20 s and its weights are read again
    Loaded away(droid("psi") + part("600MiB", true) + "app: {baseline: {native: 2200MiB}}\n" +
                "workload: {path: [cold_start, {background: 20s}]}\n");
    mdl_rep a = away.run(0);
    CHECK(a.deaths_total == 1);
    CHECK(a.first_death_time == 20000000);
    CHECK(a.first_death_foreground == 1);
}

TEST_CASE("zram gives back part of the cached apps' memory, and cached apps go first",
          "[psi][android]")
{
    // 800 MiB of cached apps (100 MiB each); zram 1 GiB, ratio 2.5, 50 %
    // swappable: stored min(1024, 400) = 400 MiB, bonus 400 x (1 - 1/2.5) =
    // 240 MiB.  Counted 2300 MiB: free 2796 - 800 - 2300 + 240 = -64 MiB,
    // under high 60.  Each cached kill frees 100 MiB and takes 30 MiB of the
    // bonus: -64 + 70k >= 60 at k = 2 (76 MiB), over min: the app lives.
    Loaded l(droid("psi", "    cached_apps: 800MiB\n    cached_app_size: 100MiB\n"
                          "    zram: {size: 1GiB, ratio: 2.5, swappable: 50%}\n") +
             holding("2300MiB", "cold_start"));
    mdl_rep r = l.run(0);
    CHECK(r.cached_kills == 2);
    CHECK(r.deaths_total == 0);
    // the same without zram: -304 + 100k >= 60 at k = 4 (96 MiB)
    Loaded no(droid("psi", "    cached_apps: 800MiB\n    cached_app_size: 100MiB\n") +
              holding("2300MiB", "cold_start"));
    CHECK(no.run(0).cached_kills == 4);
    // the pure rule: the zram device's reason is LOW_MEM_AND_SWAP
    mdl_device d = l.s.devices[0];
    mdl_kill_input in{2800 * MiB, 0, 0, 1, 0, 0, 0};
    mdl_kill_verdict v;
    mdl_kill_decide(&d, &in, &v);
    CHECK(v.dies == 1);
    CHECK(v.lmkd == MDL_LMKD_LOW_MEM_AND_SWAP);
}

TEST_CASE("properties: more zram never kills earlier, hot pages never kill later",
          "[psi][android][property]")
{
    // the pure rule over random states (fixed seed): if the device with
    // more zram (a larger size, ratio or swappable share) kills the app,
    // the one with less does too; if the app dies without hot pages, it
    // dies with them
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 21);
    Loaded l(droid("psi", "    zram: {size: 1GiB, ratio: 2, swappable: 50%}\n") +
             holding("10MiB", "cold_start"));
    Loaded m(droid("minfree", "    zram: {size: 1GiB, ratio: 2, swappable: 50%}\n") +
             holding("10MiB", "cold_start"));
    unsigned deaths = 0, survivals = 0;
    for (int k = 0; k < 20000; k++) {
        mdl_device less = (k % 2 ? l : m).s.devices[0];
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
                          0};
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

TEST_CASE("properties over random scenarios: the first death comes no earlier with more zram "
          "and no later with hot pages",
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
            return droid("psi", "    cached_apps: {dist: uniform, min: 0MiB, max: " + cached +
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
    refused(with_kill("{rule: lmk, minfree: [{adj: 0, free: 1MiB}], watermarks: {min: 4MiB, low: "
                      "5MiB, high: 6MiB}}"),
            "watermarks belong to mode: psi");
    refused(with_kill("{rule: lmk, mode: fast, minfree: [{adj: 0, free: 1MiB}]}"), "fast");
    refused(droid("psi", "    zram: {size: 1GiB, ratio: 0.5, swappable: 50%}\n") + rest,
            "outside [1, 10]");
    refused(droid("psi", "    zram: {size: 1GiB, ratio: 2}\n") + rest, "swappable");
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
