// The page models alone (models/pages.h): no world (an engine only for the
// clock).  Each case builds a device from YAML, a ledger holding the app's
// memory, the other apps' state, and a host that records what the model
// hands the world (the verdicts on the app's processes, its notes, the
// looks it asks for) and, for a death, does what the world does: the app's
// memory goes and its process is gone.  Then it drives the model with allocations and time and
// reads its verdicts.  Every figure is derived in a comment.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include <gsl/gsl_rng.h>

#include "shim/phone.hpp"

namespace {

using shim::MiB;
using shim::MS;
using shim::Note;
using shim::Phone;

// Android in lmkd's PSI mode: 4096 MiB, 1300 MiB for the system, watermarks
// min 40, low 50, high 60 MiB, reclaim and refault at 100 MiB/s.
std::string droid(const std::string &extra = "")
{
    return "name: droid\nos: android\nram: 4096MiB\nsystem: 1300MiB\n"
           "kill: {rule: lmk, mode: psi, watermarks: {min: 40MiB, low: 50MiB, high: 60MiB}}\n"
           "counts: [native, java, gpu]\nreclaim_rate: 100MiB/s\nstorage_read: 100MiB/s\n" +
           extra;
}

} // namespace

TEST_CASE("pages: an allocation with room leaves the app alive and hands the warnings their room")
{
    Phone p(droid());
    p.setup();
    REQUIRE(p.pg.on == W_PAGES_LMKD);
    // 1000 MiB of the app: free 4096 - 1300 - 1000 = 1796 MiB, over low
    pg_result r = p.alloc(1000 * MiB);
    CHECK_FALSE(r.gone);
    CHECK(r.warn);
    CHECK(r.room == 1796 * MiB - 50 * MiB); // free over low, no cold file pages
    CHECK(pg_free(&p.pg) == 1796 * MiB);
    CHECK(p.out.min_free == 1746 * MiB);
    CHECK(p.kills.empty());
    CHECK(p.notes.empty());
    CHECK(p.looks.empty()); // kswapd asleep, no page cache to refault: nothing to look at
}

TEST_CASE("pages: the cached apps die before the app, each told to the timeline, no verdict on the app")
{
    // 60 MiB of cached apps of 20 MiB (the world draws the 60 MiB from the
    // device and hands it over): three of them (pg_setup counts them)
    Phone p(droid("cached_apps: 60MiB\ncached_app_size: 20MiB\n"), 60 * MiB);
    p.setup();
    REQUIRE(p.pg.ncached == 3);
    // the app takes all but -10 MiB: 4096 - 1300 - 60 + 10 = 2746 MiB.  No
    // zram, no file pages: reclaim finds nothing, and the killers (lmkd at
    // the stall's PSI event, then the kernel's OOM killer until free is over
    // min) take the cached apps, highest adj first: one leaves free at 10,
    // two at 30, all three at 50 MiB, over min at last
    pg_result r = p.alloc(2746 * MiB);
    CHECK_FALSE(r.gone);
    CHECK(p.kills.empty());
    CHECK(p.ds.cached == 0);
    CHECK(p.pg.ncached == 0);
    CHECK(p.out.cached_kills == 3);
    REQUIRE(p.notes.size() == 3);
    for (const Note &n : p.notes) {
        CHECK(n.what == "cached_app_killed");
        CHECK(n.adj == MDL_ADJ_MAX - 1);
    }
    CHECK(pg_free(&p.pg) == 50 * MiB);
    CHECK(p.app_figures.alive == 1);
}

TEST_CASE("pages: with nothing else to take the app's process is the verdict, and the world's death ends the check")
{
    Phone p(droid());
    p.setup();
    // the app alone over the edge: free -10 MiB, nothing to reclaim, no
    // other process.  Direct reclaim wants min - free = 50 MiB and stalls
    // 0.5 s for it at 100 MiB/s: past PSI's 70 ms `some` threshold, lmkd
    // wakes on a medium event, and its decision reaches no process down to
    // its min_score_adj (the app is in front, at adj 0).  The allocation
    // cannot be met, so the kernel's OOM killer takes the largest process,
    // the app's: the verdict the world carries out
    pg_result r = p.alloc(2806 * MiB);
    CHECK(r.gone);
    CHECK(p.out.lmkd_wakeups == 1);
    CHECK(p.out.lmkd_kills_of_others == 0);
    REQUIRE(p.kills.size() == 1);
    const pg_kill &k = p.kills[0];
    CHECK(k.by == PG_BY_KERNEL_OOM);
    CHECK(k.main == 0);
    CHECK(p.out.kernel_oom_kills == 1);
    // the world killed it: its memory is gone, and the model read that back
    CHECK(p.app_figures.alive == 0);
    CHECK(pg_free(&p.pg) == 4096 * MiB - 1300 * MiB);
}

TEST_CASE("pages: behind, the app is the OOM killer's pick over a larger app in front, by its adj")
{
    Phone p(droid());
    p.app_figures.fg = 0;
    p.app_figures.bg = 1;
    p.ds.successor = 2000 * MiB; // the app the user went to, in front at adj 0
    p.setup();
    // the app holds 806 MiB: free 4096 - 1300 - 2000 - 806 = -10 MiB, nothing
    // to reclaim (no zram, no file pages).  lmkd wakes at the stall and
    // kills nobody (no swap to run low, no thrashing).  oom_badness adds
    // adj x totalpages / 1000 to a process's pages: 700 x 4096 MiB / 1000 =
    // 2867.2 MiB for the app, 0 for the app in front, so the app's
    // 806 + 2867.2 beats the other's 2000: the verdict is the app's
    pg_result r = p.alloc(806 * MiB);
    CHECK(r.gone);
    CHECK(p.out.lmkd_wakeups == 1);
    REQUIRE(p.kills.size() == 1);
    CHECK(p.kills[0].by == PG_BY_KERNEL_OOM);
    CHECK(p.kills[0].main == 0);
    CHECK(p.ds.successor == 2000 * MiB); // the larger app in front lives
    CHECK(p.out.successor_kills == 0);
    CHECK(p.notes.empty());
    CHECK(pg_free(&p.pg) == 4096 * MiB - 1300 * MiB - 2000 * MiB);
}

TEST_CASE("pages: in front, the same shortage takes the other app, the larger, and the app lives")
{
    Phone p(droid());
    p.ds.successor = 2000 * MiB; // the previous app, at adj 700 while the app is in front
    p.setup();
    // the same figures with the app in front (adj 0) and the other app the
    // previous one (700): 2000 + 2867.2 against 806: the other app dies, told
    // to the timeline as the previous app's kill, and the app lives
    pg_result r = p.alloc(806 * MiB);
    CHECK_FALSE(r.gone);
    CHECK(p.kills.empty());
    CHECK(p.ds.successor == 0);
    CHECK(p.out.successor_kills == 1);
    REQUIRE(p.notes.size() == 1);
    CHECK(p.notes[0].what == "previous_app_killed");
    CHECK(p.notes[0].why == "kernel_oom");
    CHECK(p.notes[0].adj == MDL_ADJ_PREVIOUS);
    CHECK(p.app_figures.alive == 1);
}

TEST_CASE("pages: an inference reads back what reclaim dropped of its weights, at storage speed")
{
    Phone p(droid());
    p.setup();
    // the app maps 100 MiB of weights, all hot, and reclaim has dropped 40 MiB
    // of them (the model's count, set as kswapd would have left it)
    REQUIRE(mdl_ledger_alloc(p.led, p.app, MDL_CAT_FILE, 100 * MiB, MDL_STAGE_LOAD, 0, nullptr) ==
            SIM_OK);
    p.app_figures.hot = 100 * MiB;
    p.pg.app_evicted = 40 * MiB;
    // the part's hot file is all of the app's: the 40 MiB come back, 0.4 s at
    // 100 MiB/s; memory is plentiful, so the pages cost only the time
    pg_result r;
    sim_time t = pg_refault(&p.pg, &p.a, 1, 100 * MiB, &r);
    CHECK(t == 400 * MS);
    CHECK_FALSE(r.gone);
    CHECK(p.pg.app_evicted == 0);
    CHECK(p.pg.refault == 40 * MiB);
    CHECK(p.out.refault_bytes == 40 * MiB);
    REQUIRE(p.notes.size() == 1);
    CHECK(p.notes[0].what == "refault");
    CHECK(p.notes[0].refault == 40 * MiB);
    CHECK(p.notes[0].took == 400 * MS);
    // 400 ms of the app's stall in front: past `some` (70 ms), short of
    // `full` (700 ms): lmkd wakes and, with room, kills nobody
    CHECK(p.out.lmkd_wakeups == 1);
    CHECK(p.kills.empty());
    // nothing more to read back
    CHECK(pg_refault(&p.pg, &p.a, 1, 100 * MiB, &r) == 0);
}

TEST_CASE("pages: kswapd reclaims in the model's own time, at the looks it asks for")
{
    // a page cache of 700 MiB, 300 of it the working set: 400 MiB cold
    Phone p(droid("page_cache: {size: 700MiB, working_set: 300MiB}\n"));
    p.setup();
    CHECK(p.pg.pc_cold == 400 * MiB);
    // free 45 MiB, between min and low: no direct reclaim, kswapd wakes and
    // the model asks to look again in 100 ms
    pg_result r = p.alloc((4096 - 1300 - 700 - 45) * MiB);
    CHECK_FALSE(r.gone);
    CHECK(p.pg.kswapd == 1);
    // direct reclaim starts under min only (__alloc_pages_slowpath: the
    // allocation is served from free pages down to min): nothing scanned
    // directly, no stall, the page cache whole, free still 45 MiB
    CHECK(p.pg.pgscan_direct == 0);
    CHECK(p.pg.stall == 0);
    CHECK(p.pg.pc_cold == 400 * MiB);
    CHECK(pg_free(&p.pg) == 45 * MiB);
    REQUIRE(p.looks.size() == 1);
    CHECK(p.looks[0].t == 100 * MS);
    CHECK(p.looks[0].what == PG_TICK);
    // 100 ms later: kswapd wants high - free = 15 MiB, 100 MiB/s gives it
    // 10 MiB of the cold page cache; free 55, still under high
    p.at(100 * MS);
    pg_look(&p.pg, &p.a, PG_TICK);
    CHECK(p.pg.pgscan_kswapd == 10 * MiB);
    CHECK(p.pg.pc_cold == 390 * MiB);
    // over low but under high: kswapd, once awake, goes on to high
    // (balance_pgdat reclaims until the zone is balanced at its high
    // watermark), so it stays awake and asks for another look
    CHECK(pg_free(&p.pg) == 55 * MiB);
    CHECK(p.pg.kswapd == 1);
    REQUIRE(p.looks.size() == 2);
    CHECK(p.looks[1].t == 200 * MS);
    // 100 ms more: the last 5 MiB, free at high: kswapd sleeps, no more looks
    p.at(200 * MS);
    pg_look(&p.pg, &p.a, PG_TICK);
    CHECK(p.pg.pgscan_kswapd == 15 * MiB);
    CHECK(pg_free(&p.pg) == 60 * MiB);
    CHECK(p.pg.kswapd == 0);
    CHECK(p.looks.size() == 2);
    CHECK(p.out.page_events == 2);
    CHECK(p.kills.empty());
}

TEST_CASE("memstat: the per-process limit is a verdict with its cause and the JetsamEvent the world reports")
{
    // an iPhone with the page model: 4096 MiB, 1024 for the system, a limit
    // of 1000 MiB, one idle process of 100 MiB beside the app
    std::string yaml = "name: phone\nos: ios\nram: 4096MiB\nsystem: 1024MiB\n"
                       "kill: {rule: jetsam, limit: 1000MiB}\n"
                       "pages: {critical: 5%, idle: 10%, pressure: 15%}\n"
                       "others: [{band: 0, count: 1, size: 100MiB}]\n"
                       "compressor: {ratio: 1}\n";
    Phone p(yaml);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 1);
    p.setup(r);
    gsl_rng_free(r);
    REQUIRE(p.pg.on == W_PAGES_XNU);
    REQUIRE(p.pg.x.nother == 1);
    CHECK(p.ds.cached == 100 * MiB);
    // 900 MiB: under the limit, the app lives, the warnings get their room
    pg_result lives = p.alloc(900 * MiB);
    CHECK_FALSE(lives.gone);
    CHECK(lives.warn);
    CHECK(lives.room == 100 * MiB); // the limit over the footprint
    CHECK(p.kills.empty());
    // 101 MiB more: 1001 MiB counted, over the limit: the app, at once
    pg_result dies = p.alloc(101 * MiB);
    CHECK(dies.gone);
    REQUIRE(p.kills.size() == 1);
    CHECK(p.kills[0].by == PG_BY_JETSAM);
    CHECK(p.kills[0].cause == MDL_JETSAM_PER_PROCESS_LIMIT);
    CHECK(p.out.jetsam_kills[MDL_JETSAM_PER_PROCESS_LIMIT] == 1);
    CHECK(p.out.deaths_by_jetsam[MDL_JETSAM_PER_PROCESS_LIMIT] == 1);
    // the JetsamEvent: the app (its footprint, the largest process) and the
    // idle process alive beside it; no other process was killed
    REQUIRE(p.events.size() == 1);
    const mdl_jetsam_event &ev = p.events[0];
    CHECK(ev.cause == MDL_JETSAM_PER_PROCESS_LIMIT);
    CHECK(ev.wired == 1024 * MiB);
    // (the snapshot lists them by band from 0 up: the idle process first)
    REQUIRE(ev.nprocs == 2);
    CHECK(ev.procs[1].app == 1);
    CHECK(ev.procs[1].killed == MDL_JETSAM_PER_PROCESS_LIMIT);
    CHECK(ev.procs[1].resident == 1001 * MiB);
    CHECK(ev.procs[0].app == 0);
    CHECK(ev.procs[0].killed == MDL_JETSAM_NONE);
    CHECK(ev.procs[0].resident == 100 * MiB);
    CHECK(p.pg.x.nother == 1); // the idle process lives: the kill was the app's limit
}

TEST_CASE("memstat: the phantom cache's pressure stays set until a thrashing kill clears it")
{
    // memorystatus_phantom_cache_pressure is set by the phantom cache and
    // cleared only after a kill for thrashing (memorystatus_thread_internal),
    // not by a quiet period.  The flag set, 10 s pass with no refault; the
    // next look still finds the file cache thrashing: the system is
    // unhealthy, and the top process, the other in band 40, is killed with
    // fc-thrashing; the flag is then clear and the app lives.
    std::string yaml = "name: phone\nos: ios\nram: 4096MiB\nsystem: 1024MiB\n"
                       "kill: {rule: jetsam, limit: 1000MiB}\n"
                       "pages: {critical: 5%, idle: 10%, pressure: 15%}\n"
                       "others: [{band: 40, count: 1, size: 100MiB}]\n"
                       "compressor: {ratio: 1}\nfc_thrashing: non-ssd\n";
    Phone p(yaml);
    CHECK(p.dev.fc_threshold == 500); // files on storage the pager does not call SSD
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 1);
    p.setup(r);
    gsl_rng_free(r);
    CHECK_FALSE(p.alloc(100 * MiB).gone);
    CHECK(p.out.jetsam_kills[MDL_JETSAM_FC_THRASHING] == 0);
    p.pg.x.fc = 1;
    p.pg.x.pc_hist = 0xfu;
    p.at(10 * 1000 * MS);
    CHECK_FALSE(p.alloc(1 * MiB).gone);
    CHECK(p.out.jetsam_kills[MDL_JETSAM_FC_THRASHING] == 1);
    CHECK(p.pg.x.nother == 0);
    CHECK(p.pg.x.fc == 0);
    // the kill restarts the sample (vm_phantom_cache_restart_sample): one
    // shift, a period begun at the kill; the history is kept, not cleared
    CHECK(p.pg.x.pc_hist == 0x1eu);
    CHECK(p.pg.x.pc_start == 10 * 1000 * MS);
    // the words are ssd and non-ssd
    mdl_device d;
    std::memset(&d, 0, sizeof d);
    sim_error err;
    sim_error_clear(&err);
    std::string ssd = yaml.substr(0, yaml.find("fc_thrashing")) + "fc_thrashing: ssd\n";
    REQUIRE(scn_device_parse(ssd.data(), ssd.size(), "p.yaml", &d, &err) == SIM_OK);
    CHECK(d.fc_threshold == 1000);
    scn_device_release(&d);
    std::memset(&d, 0, sizeof d);
    std::string hdd = yaml.substr(0, yaml.find("fc_thrashing")) + "fc_thrashing: hdd\n";
    CHECK(scn_device_parse(hdd.data(), hdd.size(), "p.yaml", &d, &err) == SIM_EINPUT);
    CHECK(std::string(err.msg).find("p.yaml:9:") != std::string::npos);
    scn_device_release(&d);
}

// kernel/sched/psi.c (Linux 6.1), window_update: within a window the growth
// is the stall since its start plus the window before's growth in proportion
// to what is left of this one; a window over restarts, its growth kept.
TEST_CASE("psi trigger: the window slides, carrying the window before in proportion")
{
    const sim_time S = 1000 * MS, thr = 100 * MS;
    pg_psi_trigger t{};
    t.last_event = -S;
    pg_psi_reset(&t, 0, 0);
    // 80 ms at 0.5 s: growth 80 < 100, nothing
    CHECK(pg_psi_update(&t, 500 * MS, 80 * MS, 1, thr, S) == 0);
    // 10 ms more at 1.5 s: the window (from 0) is over: it restarts at 1.5 s
    // from the total 90, prev_growth 90, and the growth read is 90: nothing
    CHECK(pg_psi_update(&t, 1500 * MS, 90 * MS, 1, thr, S) == 0);
    CHECK(t.start == 1500 * MS);
    CHECK(t.start_value == 90 * MS);
    CHECK(t.prev_growth == 90 * MS);
    // 50 ms at 1.6 s: 50 in this window + 90 x (1000 - 100) / 1000 = 81 of
    // the one before: 131 >= 100, an event (a window counted from its start
    // alone would hold 50)
    CHECK(pg_psi_growth(&t, 1600 * MS, 140 * MS, S) == 131 * MS);
    CHECK(pg_psi_update(&t, 1600 * MS, 140 * MS, 1, thr, S) == 1);
    CHECK(t.last_event == 1600 * MS);
    CHECK(t.pending == 0);
}

// update_triggers: a breach inside the last event's window is not dropped:
// it is held (pending_event) and signalled at the first update once that
// window is over, with or without new stall then.
TEST_CASE("psi trigger: a breach within a window of the last event is held, then signalled")
{
    const sim_time S = 1000 * MS, thr = 100 * MS;
    pg_psi_trigger t{};
    t.last_event = -S;
    pg_psi_reset(&t, 0, 0);
    CHECK(pg_psi_update(&t, 100 * MS, 150 * MS, 1, thr, S) == 1); // 150 >= 100
    // 150 ms more at 0.5 s: a breach (300), but within 1 s of the event at
    // 0.1 s: held
    CHECK(pg_psi_update(&t, 500 * MS, 300 * MS, 1, thr, S) == 0);
    CHECK(t.pending == 1);
    // no new stall at 1.0 s: still inside the window, still held
    CHECK(pg_psi_update(&t, 1000 * MS, 300 * MS, 0, thr, S) == 0);
    // at 1.1 s, no new stall: the window is over, the event goes
    CHECK(pg_psi_update(&t, 1100 * MS, 300 * MS, 0, thr, S) == 1);
    CHECK(t.last_event == 1100 * MS);
    CHECK(t.pending == 0);
    // nothing held, no new stall: nothing
    CHECK(pg_psi_update(&t, 2200 * MS, 300 * MS, 0, thr, S) == 0);
}

TEST_CASE("pages: a second refault stall within the window wakes lmkd a window after the first event")
{
    Phone p(droid());
    p.setup();
    REQUIRE(mdl_ledger_alloc(p.led, p.app, MDL_CAT_FILE, 100 * MiB, MDL_STAGE_LOAD, 0, nullptr) ==
            SIM_OK);
    p.app_figures.hot = 100 * MiB;
    // 40 MiB back at 100 MiB/s: 400 ms of stall from 0; the kernel has seen
    // it all at 0.4 s: over `some` (70 ms), the medium event, lmkd's first
    // wake-up (the model's instant: at 0)
    p.pg.app_evicted = 40 * MiB;
    pg_result r;
    CHECK(pg_refault(&p.pg, &p.a, 1, 100 * MiB, &r) == 400 * MS);
    CHECK(p.out.lmkd_wakeups == 1);
    CHECK(p.pg.some.last_event == 400 * MS);
    // 20 MiB more at 0.5 s: 200 ms, seen at 0.7 s: the window's growth
    // 600 ms, a breach within 1 s of the event: held, and the kernel's poll
    // asked for at 1.4 s
    p.at(500 * MS);
    p.pg.app_evicted = 20 * MiB;
    uint64_t polls = p.out.lmkd_wakeups;
    CHECK(pg_refault(&p.pg, &p.a, 1, 100 * MiB, &r) == 200 * MS);
    CHECK(p.out.lmkd_wakeups == polls); // no event now
    CHECK(p.pg.some.pending == 1);
    int held = 0;
    for (const auto &l : p.looks)
        held += l.what == PG_PSI && l.t == 1400 * MS;
    CHECK(held == 1);
    // at 1.4 s the event goes: lmkd wakes on it, and its polling restarts
    // from the event (1 s past it)
    p.at(1400 * MS);
    pg_look(&p.pg, &p.a, PG_PSI);
    CHECK(p.out.lmkd_wakeups == polls + 1);
    CHECK(p.pg.poll_until == 2400 * MS);
    CHECK(p.pg.some.pending == 0);
    CHECK(p.kills.empty());
}

// oom_badness and select_bad_process (mm/oom_kill.c, Linux 6.1): points in
// pages, rss + swap + page tables (one table per 512 pages) + adj x
// (totalpages / 1000); the oldest process first, a tie to the later one.
// Here totalpages = 4096 MiB / 4 KiB = 1048576, 1048 pages per adj.  No
// PSI event (thresholds over the 0.5 s stall): the kernel alone decides.
std::string droid_quiet(const std::string &extra = "")
{
    return droid("lmkd: {psi_partial_stall_ms: 1000, psi_complete_stall_ms: 1000}\n" + extra);
}

TEST_CASE("pages: the kernel's OOM killer weighs the oldest cached app at its own adj, 999")
{
    // one cached app of 853 MiB; the app, behind at 700, allocates 1953 MiB:
    // free 2796 - 853 - 1953 = -10 MiB, nothing to reclaim.  The app:
    // 499968 + 977 + 700 x 1048 = 1234545 points; the cached app at 999:
    // 218368 + 427 + 999 x 1048 = 1265747, the larger: it dies, the app lives.
    // (At one adj for every cached app, 950, it would have 1214395, and the
    // app would die.)
    Phone p(droid_quiet("cached_apps: 853MiB\ncached_app_size: 1GiB\n"), 853 * MiB);
    p.app_figures.fg = 0;
    p.app_figures.bg = 1;
    p.setup();
    REQUIRE(p.pg.ncached == 1);
    pg_result r = p.alloc(1953 * MiB);
    CHECK_FALSE(r.gone);
    CHECK(p.out.lmkd_wakeups == 0);
    CHECK(p.out.kernel_oom_kills == 1);
    CHECK(p.out.cached_kills == 1);
    CHECK(p.kills.empty());
    REQUIRE(p.notes.size() == 1);
    CHECK(p.notes[0].what == "cached_app_killed");
    CHECK(p.notes[0].why == "kernel_oom");
    CHECK(p.notes[0].adj == 999);
}

// The app behind (700) with its model in a service, the main process
// holding 1403 MiB of anonymous memory in its rss; the phone set up.
void behind_with_service(Phone &p)
{
    p.app_figures.fg = 0;
    p.app_figures.bg = 1;
    p.app_figures.svc = 1;
    p.app_figures.main_alive = 1;
    p.host.main_anon = [](void *) -> int64_t { return 1403 * MiB; };
    p.setup();
}

TEST_CASE("pages: the kernel's OOM killer gives a tie to the newer process, the service")
{
    // the app runs its model in a service: main and service both behind, at
    // 700; the main process holds 1403 MiB of the app's 2806.  Free
    // 2796 - 2806 = -10 MiB, nothing to reclaim.  Each: 359168 pages + 702
    // tables + 733600 points, a tie: the service, started after its
    // client, is the later in the walk and dies
    Phone p(droid_quiet());
    behind_with_service(p);
    pg_result r = p.alloc(2806 * MiB);
    CHECK(r.gone);
    REQUIRE(p.kills.size() == 1);
    CHECK(p.kills[0].by == PG_BY_KERNEL_OOM);
    CHECK(p.kills[0].main == 0); // the service
    CHECK(p.out.kernel_oom_kills == 1);
}

TEST_CASE("pages: the kernel's OOM killer counts no GPU buffer in a process's rss")
{
    // the tie above, with 1000 of the service's 1403 MiB in GPU buffers
    // (held by fd, not in get_mm_rss): the service weighs 403 MiB, 103168
    // pages + 202 tables + 733600, under the main process's 359168 + 702 +
    // 733600: the main process dies
    Phone p(droid_quiet());
    behind_with_service(p);
    REQUIRE(mdl_ledger_alloc(p.led, p.app, MDL_CAT_GPU, 1000 * MiB, MDL_STAGE_LOAD, 0, nullptr) ==
            SIM_OK);
    p.alloc(1806 * MiB); // free 2796 - 2806 = -10 MiB
    REQUIRE(p.kills.size() == 1);
    CHECK(p.kills[0].by == PG_BY_KERNEL_OOM);
    CHECK(p.kills[0].main == 1);
}

TEST_CASE("pages: page tables tip the kernel's choice between the app's two processes")
{
    // the app in front: its main process at 0, the service it binds at 100
    // (100 x 1048 = 104800 points).  The service holds 306768 pages, the
    // main process 411567 (104799 more): free 715776 - 718335 = -2559 pages,
    // nothing to reclaim.  The service: 306768 + 600 tables + 104800 =
    // 412168; the main process: 411567 + 804 tables = 412371, the larger:
    // it dies.  (Without page tables the service would lead by one.)
    Phone p(droid_quiet());
    p.app_figures.svc = 1;
    p.app_figures.main_alive = 1;
    p.host.adj = [](void *, int main) { return main ? 0 : 100; };
    p.host.main_anon = [](void *) -> int64_t { return int64_t(411567) * 4096; };
    p.setup();
    p.alloc(int64_t(306768 + 411567) * 4096);
    REQUIRE(p.kills.size() == 1);
    CHECK(p.kills[0].by == PG_BY_KERNEL_OOM);
    CHECK(p.kills[0].main == 1);
}

// __alloc_pages_slowpath: past direct reclaim the allocation is met only
// above the min watermark (the device's min holds each zone's min and its
// largest protection, lowmem_reserve, summed): free pages under min with
// nothing left to reclaim go to the OOM killer even while some are free.
TEST_CASE("pages: direct reclaim keeps the reserve: under min with nothing to reclaim, the OOM killer runs though pages are free")
{
    // one cached app of 100 MiB; the app in front allocates 2676 MiB: free
    // 2796 - 100 - 2676 = 20 MiB, under min (40), over 0; nothing to
    // reclaim (no zram, no file pages).  The OOM killer: the cached app at
    // 999, 25600 + 50 + 999 x 1048 = 1072602 points, over the app's
    // 685056 + 1338 at adj 0: it dies, free 120 MiB, over min: the
    // allocation is met and the app lives
    Phone p(droid_quiet("cached_apps: 100MiB\ncached_app_size: 100MiB\n"), 100 * MiB);
    p.setup();
    pg_result r = p.alloc(2676 * MiB);
    CHECK_FALSE(r.gone);
    CHECK(p.out.kernel_oom_kills == 1);
    CHECK(p.out.cached_kills == 1);
    CHECK(p.kills.empty());
    CHECK(pg_free(&p.pg) == 120 * MiB);
}
