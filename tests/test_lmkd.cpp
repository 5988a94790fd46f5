// lmkd's decision (models/lmkd.c) and `oomsim lmkd` on snapshots
// (replay/snapshot.c), one case per branch of mp_event_psi in lmkd.cpp at
// AOSP commit 18578a5.  Each expected figure is derived by hand in the
// comment above it from the source lines it names.
#include <catch2/catch.hpp>

#include <string>

#include "replay/replay.h"
#include "shim/shim.hpp"

using namespace shim;

namespace {

// A snapshot in the kernel's formats.  4 KiB pages.  One zone: min 1000,
// low 2000, high 3000, protection (0, 500): calc_zone_watermarks adds the
// largest protection to each, so lmkd's watermarks are 1500 / 2500 / 3500
// pages (6000 / 10000 / 14000 kB).
struct Snap {
    long free_kb = 100000;             // 25000 pages: over high
    long swap_total_kb = 0, swap_free_kb = 0;
    long inactive_file_kb = 400000;    // easy_available is never the bound below
    long active_anon_kb = 0, inactive_anon_kb = 0;
    // vmstat at the reset: file LRU 59999 + 40000 = 99999 pages, so that
    // thrashing = refaults x 100 / (99999 + 1) = refaults / 1000
    long refault0 = 1000000, kswapd0 = 500, direct0 = 7, refill0 = 900;
    long refault1 = 1000000, kswapd1 = 500, direct1 = 7, refill1 = 900;
    long lru1_inactive = 59999, lru1_active = 40000;
    std::string event = "medium", props, pressure;

    std::string meminfo() const
    {
        return "MemTotal:        4000000 kB\nMemFree:  " + std::to_string(free_kb) +
               " kB\nActive(anon):   " + std::to_string(active_anon_kb) +
               " kB\nInactive(anon): " + std::to_string(inactive_anon_kb) +
               " kB\nInactive(file): " + std::to_string(inactive_file_kb) +
               " kB\nShmem: 0 kB\nSwapTotal: " + std::to_string(swap_total_kb) +
               " kB\nSwapFree: " + std::to_string(swap_free_kb) + " kB\n";
    }
    static std::string vmstat(long inactive, long active, long refault, long kswapd, long direct,
                              long refill)
    {
        return "nr_free_pages 1\nnr_inactive_file " + std::to_string(inactive) +
               "\nnr_active_file " + std::to_string(active) +
               "\nworkingset_refault_anon 5\nworkingset_refault_file " +
               std::to_string(refault) + "\npgrefill " + std::to_string(refill) +
               "\npgscan_kswapd " + std::to_string(kswapd) + "\npgscan_direct " +
               std::to_string(direct) + "\n";
    }
};

// the 4.8-on layout: the node's stats after its first zone's header
const char *const kZone = "Node 0, zone   Normal\n  per-node stats\n      nr_inactive_file 59999\n"
                          "      nr_active_file 40000\n  pages free 1\n        min 1000\n"
                          "        low 2000\n        high 3000\n        present 100000\n"
                          "        protection: (0, 500)\n  pagesets\n    cpu: 0\n";

void feed(rpl_lmkd_snapshot *s, const char *file, const std::string &text)
{
    sim_error err;
    sim_error_clear(&err);
    INFO(file << ": " << err.msg);
    REQUIRE(rpl_lmkd_snapshot_parse(s, file, text.data(), text.size(), &err) == SIM_OK);
}

rpl_lmkd_snapshot read(const Snap &x)
{
    rpl_lmkd_snapshot s;
    rpl_lmkd_snapshot_init(&s);
    feed(&s, "meminfo", x.meminfo());
    feed(&s, "zoneinfo", kZone);
    feed(&s, "vmstat.0", Snap::vmstat(59999, 40000, x.refault0, x.kswapd0, x.direct0, x.refill0));
    feed(&s, "vmstat.1", Snap::vmstat(x.lru1_inactive, x.lru1_active, x.refault1, x.kswapd1,
                                      x.direct1, x.refill1));
    feed(&s, "event", x.event);
    if (!x.props.empty())
        feed(&s, "props", x.props);
    if (!x.pressure.empty())
        feed(&s, "pressure_memory", x.pressure);
    mdl_lmkd_props_resolve(&s.props);
    return s;
}

mdl_lmkd_decision decide(const Snap &x)
{
    rpl_lmkd_snapshot s = read(x);
    mdl_lmkd_decision d;
    rpl_lmkd_snapshot_decide(&s, &d);
    return d;
}

std::string desc(const mdl_lmkd_decision &d) { return d.description; }

} // namespace

TEST_CASE("lmkd: the watermarks, free pages and swap as lmkd reads them", "[lmkd]")
{
    Snap x;
    rpl_lmkd_snapshot s = read(x);
    CHECK(s.wake.wmark_min == 1500);
    CHECK(s.wake.wmark_low == 2500);
    CHECK(s.wake.wmark_high == 3500);
    // get_lowest_watermark: MemFree - CmaFree against each sum, strictly below
    x.free_kb = 14000; // 3500 pages: not under high
    CHECK(decide(x).wmark == MDL_WMARK_NONE);
    x.free_kb = 13996; // 3499 pages
    CHECK(decide(x).wmark == MDL_WMARK_HIGH);
    x.free_kb = 9996;
    CHECK(decide(x).wmark == MDL_WMARK_LOW);
    x.free_kb = 5996;
    CHECK(decide(x).wmark == MDL_WMARK_MIN);
    // get_free_swap = min(SwapFree, MemFree + Inactive(file)), in pages
    x.swap_total_kb = 400000;
    x.swap_free_kb = 300000;
    x.free_kb = 4000;
    x.inactive_file_kb = 8000; // 1000 + 2000 pages = 12000 kB < SwapFree
    mdl_lmkd_decision d = decide(x);
    CHECK(d.free_swap == 3000);
    CHECK(d.swap_low_threshold == 10000); // 100000 pages x 10 / 100
    CHECK(d.swap_is_low);
}

TEST_CASE("lmkd: no reclaim and no new refault is no kill, whatever the memory", "[lmkd]")
{
    Snap x;
    x.free_kb = 4000; // under min, but nothing moved since the reset: lmkd bails out
    mdl_lmkd_decision d = decide(x);
    CHECK(d.bailed);
    CHECK(d.reason == MDL_LMKD_NONE);
    CHECK(desc(d) == "no_kill");
    // a refault alone is enough to go on (the last else-if of the reclaim state)
    x.refault1 += 1;
    d = decide(x);
    CHECK_FALSE(d.bailed);
    CHECK(d.reclaim == MDL_RECLAIM_NONE);
    CHECK(d.reason == MDL_LMKD_LOW_MEM);
}

TEST_CASE("lmkd: LOW_MEM kills only above the previous app, and only under low", "[lmkd]")
{
    Snap x;
    x.kswapd1 = 900; // kswapd scanned: reclaim = KSWAPD_RECLAIM
    x.free_kb = 12000; // 3000 pages: under high, not under low: "wmark < WMARK_HIGH" is false
    mdl_lmkd_decision d = decide(x);
    CHECK(d.reclaim == MDL_RECLAIM_KSWAPD);
    CHECK(d.reason == MDL_LMKD_NONE);
    x.free_kb = 8000; // 2000 pages < low 2500
    d = decide(x);
    CHECK(d.reason == MDL_LMKD_LOW_MEM);
    CHECK(d.min_score_adj == 701); // PREVIOUS_APP_ADJ + 1: never the foreground, nor previous
    CHECK(desc(d) == "low watermark is breached");
    x.free_kb = 4000; // 1000 pages < min 1500: still 701
    d = decide(x);
    CHECK(d.min_score_adj == 701);
    CHECK(desc(d) == "min watermark is breached");
}

TEST_CASE("lmkd: LOW_MEM_AND_SWAP only with swap under its low percentage", "[lmkd]")
{
    Snap x;
    x.kswapd1 = 900;
    x.free_kb = 8000; // low watermark breached
    x.swap_total_kb = 400000; // threshold 100000 x 10 / 100 = 10000 pages = 40000 kB
    x.swap_free_kb = 40000;   // 10000 pages: not under it
    CHECK(decide(x).reason == MDL_LMKD_LOW_MEM);
    x.swap_free_kb = 39996; // 9999 pages
    mdl_lmkd_decision d = decide(x);
    CHECK(d.reason == MDL_LMKD_LOW_MEM_AND_SWAP);
    CHECK(desc(d) == "low watermark is breached and swap is low (39996kB < 40000kB)");
    CHECK(d.min_score_adj == 201); // wmark > WMARK_MIN, thrashing < critical: perceptible spared
    x.swap_free_kb = 20001;        // 5000 pages: printed as 20000kB (pages x 4)
    x.free_kb = 4000;              // under min: the perceptible apps too
    d = decide(x);
    CHECK(desc(d) == "min watermark is breached and swap is low (20000kB < 40000kB)");
    CHECK(d.min_score_adj == 0);
    // swap_free_low_percentage 0 turns the test off
    x.props = "ro.lmk.swap_free_low_percentage=0\n";
    CHECK(decide(x).reason == MDL_LMKD_LOW_MEM);
}

TEST_CASE("lmkd: LOW_SWAP_AND_THRASHING needs no low memory", "[lmkd]")
{
    Snap x;
    x.swap_total_kb = 400000;
    x.swap_free_kb = 20000; // low
    x.refault1 = 1150000;   // 150000 refaults: thrashing 150 > thrashing_limit 100
    mdl_lmkd_decision d = decide(x);
    CHECK(d.wmark == MDL_WMARK_NONE);
    CHECK(d.thrashing == 150);
    CHECK(d.reason == MDL_LMKD_LOW_SWAP_AND_THRASHING);
    CHECK(desc(d) == "device is low on swap (20000kB < 40000kB) and thrashing (150%)");
    CHECK(d.min_score_adj == 201);
    x.refault1 = 1300000; // 300: not under thrashing_limit_critical (3 x 100)
    CHECK(decide(x).min_score_adj == 0);
}

TEST_CASE("lmkd: LOW_MEM_AND_SWAP_UTIL when swap_util_max is set", "[lmkd]")
{
    Snap x;
    x.kswapd1 = 900;
    x.free_kb = 8000;
    x.swap_total_kb = 400000; // 100000 pages
    x.swap_free_kb = 100000;  // 25000 pages free: used 75000, not low (>= 10000)
    x.active_anon_kb = 40000; // 10000 pages
    x.inactive_anon_kb = 20000; // 5000: swappable 15000 + 75000 = 90000, util 83 %
    CHECK(decide(x).reason == MDL_LMKD_LOW_MEM); // swap_util_max 100 is off
    x.props = "ro.lmk.swap_util_max=50\n";
    mdl_lmkd_decision d = decide(x);
    CHECK(d.reason == MDL_LMKD_LOW_MEM_AND_SWAP_UTIL);
    CHECK(desc(d) == "low watermark is breached and swap utilization is high (83% > 50%)");
    CHECK(d.min_score_adj == 0); // the branch sets none
}

TEST_CASE("lmkd: LOW_MEM_AND_THRASHING spares perceptible apps until critical", "[lmkd]")
{
    Snap x;
    x.free_kb = 8000;
    x.refault1 = 1100000; // thrashing 100: not over the limit
    CHECK(decide(x).reason == MDL_LMKD_LOW_MEM);
    x.refault1 = 1101000; // 101
    mdl_lmkd_decision d = decide(x);
    CHECK(d.reason == MDL_LMKD_LOW_MEM_AND_THRASHING);
    CHECK(desc(d) == "low watermark is breached and thrashing (101%)");
    CHECK(d.min_score_adj == 201);
    CHECK(d.cut_thrashing_limit);
    x.refault1 = 1300000; // 300 = 3 x 100: the foreground app may die
    CHECK(decide(x).min_score_adj == 0);
    x.free_kb = 12000; // free pages over low: thrashing alone does not kill
    CHECK(decide(x).reason == MDL_LMKD_NONE);
    // low-RAM devices: thrashing_limit 30, critical 90
    x.free_kb = 8000;
    x.refault1 = 1040000;
    x.props = "ro.config.low_ram=true\n";
    d = decide(x);
    CHECK(d.reason == MDL_LMKD_LOW_MEM_AND_THRASHING);
    CHECK(d.min_score_adj == 201);
    x.props = "";
    CHECK(decide(x).reason == MDL_LMKD_LOW_MEM);
    // lmkd reads the low-RAM switch from ro.config.low_ram alone
    // (update_props, property_get_bool): ro.lmk.low_ram and the
    // experiment's low_ram leave a phone as it is, LOW_MEM from 701
    for (const char *alias : {"ro.lmk.low_ram=true\n",
                              "persist.device_config.lmkd_native.low_ram=true\n"}) {
        x.props = alias;
        d = decide(x);
        INFO(alias);
        CHECK(d.reason == MDL_LMKD_LOW_MEM);
        CHECK(d.min_score_adj == 701);
    }
}

TEST_CASE("lmkd: DIRECT_RECL_AND_THRASHING over the low watermark", "[lmkd]")
{
    Snap x;
    x.direct1 = 8;        // pgscan_direct moved: DIRECT_RECLAIM
    x.refault1 = 1150000; // 150
    mdl_lmkd_decision d = decide(x);
    CHECK(d.reclaim == MDL_RECLAIM_DIRECT);
    CHECK(d.reason == MDL_LMKD_DIRECT_RECL_AND_THRASHING);
    CHECK(desc(d) == "device is in direct reclaim and thrashing (150%)");
    CHECK(d.min_score_adj == 201);
    x.direct1 = 7;
    x.kswapd1 = 600; // kswapd only: no kill over low
    CHECK(decide(x).reason == MDL_LMKD_NONE);
}

TEST_CASE("lmkd: NOT_RESPONDING on a critical event, and the critical stall", "[lmkd]")
{
    Snap x;
    x.kswapd1 = 900;
    x.event = "critical";
    mdl_lmkd_decision d = decide(x);
    CHECK(d.reason == MDL_LMKD_NOT_RESPONDING);
    CHECK(desc(d) == "device is not responding");
    CHECK(d.min_score_adj == 0);
    // full avg10 over stall_limit_critical: any kill may reach adj 0
    x.event = "medium";
    x.free_kb = 8000;
    x.pressure = "some avg10=80.00 avg60=1.00 avg300=0.10 total=1\n"
                 "full avg10=60.00 avg60=1.00 avg300=0.10 total=1\n";
    d = decide(x);
    CHECK(d.reason == MDL_LMKD_LOW_MEM);
    CHECK(d.min_score_adj == 701); // stall_limit_critical 100: a percent never over it
    CHECK_FALSE(d.critical_stall);
    x.props = "ro.lmk.stall_limit_critical=50\n";
    d = decide(x);
    CHECK(d.critical_stall);
    CHECK(d.min_score_adj == 0);
}

namespace {

// The simulator's view: the state carried from wake-up to wake-up.
struct Lmkd {
    mdl_lmkd_props p;
    mdl_lmkd_state s;
    mdl_lmkd_wake w{};
    mdl_lmkd_mem m{};
    explicit Lmkd(const char *props = "")
    {
        rpl_lmkd_snapshot snap;
        rpl_lmkd_snapshot_init(&snap);
        if (*props)
            feed(&snap, "props", props);
        p = snap.props;
        mdl_lmkd_props_resolve(&p);
        w.wmark_min = 1500;
        w.wmark_low = 2500;
        w.wmark_high = 3500;
        w.page_kb = 4;
        w.level = MDL_PSI_MEDIUM;
        w.event = 1;
        m.free = 25000;
        m.inactive_file = 100000;
        m.nr_inactive_file = 59999;
        m.nr_active_file = 40000;
        m.refault = 1000000;
        mdl_lmkd_state_init(&s, &p, &m, 0);
    }
    mdl_lmkd_decision wake(int64_t at_ms)
    {
        w.now_ms = at_ms;
        mdl_lmkd_decision d;
        mdl_lmkd_decide(&s, &p, &w, &m, &d);
        return d;
    }
};

} // namespace

TEST_CASE("lmkd: PRESSURE_AFTER_KILL on the wake-up after a kill", "[lmkd]")
{
    Lmkd l("ro.lmk.pressure_after_kill_min_score=200\n");
    l.m.free = 2000; // under low
    l.m.pgscan_kswapd = 10;
    mdl_lmkd_decision d = l.wake(10);
    REQUIRE(d.reason == MDL_LMKD_LOW_MEM);
    mdl_lmkd_killed(&l.s, &l.p, &d);
    // "cycle_after_kill && wmark < WMARK_LOW": under min even after the kill
    l.m.free = 1000;
    l.m.pgscan_kswapd = 20;
    d = l.wake(20);
    CHECK(d.reason == MDL_LMKD_PRESSURE_AFTER_KILL);
    CHECK(desc(d) == "min watermark is breached even after kill");
    CHECK(d.min_score_adj == 200); // pressure_after_kill_min_score
    // only on the first wake-up after it, and only under min
    l.m.pgscan_kswapd = 30;
    CHECK(l.wake(30).reason == MDL_LMKD_LOW_MEM);
}

TEST_CASE("lmkd: after a kill, free pages between min and low are LOW_MEM, not PRESSURE_AFTER_KILL",
          "[lmkd]")
{
    // mp_event_psi: "cycle_after_kill && wmark < WMARK_LOW" (lmkd 18578a5):
    // WMARK_LOW (free under low, over min) is not under WMARK_LOW, so the
    // wake-up after a LOW_MEM kill with 2000 free pages (min 1500, low 2500)
    // falls to the LOW_MEM branch: "low watermark is breached", killing from
    // PREVIOUS_APP_ADJ + 1, 701; not pressure_after_kill_min_score's 200.
    Lmkd l("ro.lmk.pressure_after_kill_min_score=200\n");
    l.m.free = 2000;
    l.m.pgscan_kswapd = 10;
    mdl_lmkd_decision d = l.wake(10);
    REQUIRE(d.reason == MDL_LMKD_LOW_MEM);
    mdl_lmkd_killed(&l.s, &l.p, &d);
    l.m.pgscan_kswapd = 20;
    d = l.wake(20);
    CHECK(d.reason == MDL_LMKD_LOW_MEM);
    CHECK(desc(d) == "low watermark is breached");
    CHECK(d.min_score_adj == 701);
}

TEST_CASE("lmkd: a thrashing kill cuts the limit, the window decays", "[lmkd]")
{
    Lmkd l;
    l.m.free = 2000;
    l.m.refault = 1150000; // 150 > 100
    mdl_lmkd_decision d = l.wake(100);
    REQUIRE(d.reason == MDL_LMKD_LOW_MEM_AND_THRASHING);
    mdl_lmkd_killed(&l.s, &l.p, &d);
    CHECK(l.s.thrashing_limit == 90); // 100 x (100 - 10) / 100
    // the next wake-up resets the base (a kill happened): thrashing from here
    l.m.refault = 1150001;
    CHECK(l.wake(110).thrashing == 0);
    // 95 % since that reset: over the cut limit 90, under the property's 100
    l.m.refault = 1150001 + 95000;
    d = l.wake(200);
    CHECK(d.thrashing == 95);
    CHECK(d.reason == MDL_LMKD_LOW_MEM_AND_THRASHING);
    // one window after the reset at 110 (1090 ms): the window's growth,
    // 95, was not under the limit in force (90), so it is carried whole
    // (no eligible process was found); the limit is the property's again
    Lmkd later = l;
    l.m.refault += 1;
    d = l.wake(1200);
    CHECK(l.s.thrashing_limit == 100);
    CHECK(d.thrashing == 95);
    // two windows (2190 ms): the growth is halved per window, 95 >> 2 = 23
    later.m.refault += 1;
    CHECK(later.wake(2300).thrashing == 23);
}

TEST_CASE("lmkd: LOW_FILECACHE_AFTER_THRASHING keeps killing while the cache is low",
          "[lmkd]")
{
    Lmkd l("ro.lmk.filecache_min_kb=500000\n");
    l.m.free = 2000;
    l.m.refault = 1150000;
    mdl_lmkd_decision d = l.wake(100);
    REQUIRE(d.reason == MDL_LMKD_LOW_MEM_AND_THRASHING); // sets check_filecache
    mdl_lmkd_killed(&l.s, &l.p, &d);
    l.m.free = 20000; // over high now
    l.m.pgscan_kswapd = 5;
    l.m.nr_inactive_file = 60000;
    l.m.nr_active_file = 20000; // 80000 pages = 320000 kB < 500000 kB
    d = l.wake(110);
    CHECK(d.reason == MDL_LMKD_LOW_FILECACHE_AFTER_THRASHING);
    CHECK(desc(d) == "filecache is low (320000kB < 500000kB) after thrashing");
    CHECK(d.min_score_adj == 201);
    l.m.nr_active_file = 70000; // 520000 kB: big enough, the check stops
    l.m.pgscan_kswapd = 6;
    CHECK(l.wake(120).reason == MDL_LMKD_NONE);
    CHECK(l.s.check_filecache == 0);
}

TEST_CASE("lmkd: a critical level on a poll is not an event", "[lmkd]")
{
    Lmkd l;
    l.w.level = MDL_PSI_CRITICAL;
    l.w.event = 0; // "level == VMPRESS_LEVEL_CRITICAL && events != 0"
    l.m.pgscan_kswapd = 1;
    CHECK(l.wake(10).reason == MDL_LMKD_NONE);
    l.w.event = 1;
    l.m.pgscan_kswapd = 2;
    CHECK(l.wake(20).reason == MDL_LMKD_NOT_RESPONDING);
}
