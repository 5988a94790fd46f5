// memorystatus's decision (models/xnu.c), one case per branch of
// memorystatus_pick_action and memorystatus_pick_kill_cause at XNU tag
// xnu-11417.101.15, the fallback thresholds of memorystatus_init and the
// phantom cache's is_thrashing.  The expected values come from the source
// lines the comments name.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "models/models.h"

namespace {

// Thresholds of a 4 GiB phone in pages of 16 KiB (262144 pages), as
// memorystatus_init computes them on a "medium" device: critical 4 % =
// 10485, idle 9 x 10485 / 4 = 23591, soft 15 x 10485 / 4 = 39318.
mdl_xnu_input healthy_input()
{
    mdl_xnu_input in;
    std::memset(&in, 0, sizeof in);
    in.critical = 10485;
    in.idle = 23591;
    in.soft = 39318;
    in.available = 50000; // over every threshold
    in.idle_procs = 3;
    return in;
}

mdl_xnu_decision decide(const mdl_xnu_input &in)
{
    mdl_xnu_decision d;
    mdl_xnu_decide(&in, &d);
    return d;
}

} // namespace

TEST_CASE("xnu: the kill causes carry XNU's numbers and names")
{
    // bsd/sys/kern_memorystatus.h: kMemorystatusKilledVMPageShortage 4,
    // FCThrashing 6, PerProcessLimit 7, IdleExit 9, VMCompressorThrashing 11,
    // VMCompressorSpaceShortage 12, LongIdleExit 17
    CHECK(std::string(mdl_jetsam_cause_name(MDL_JETSAM_VM_PAGESHORTAGE)) == "vm-pageshortage");
    CHECK(MDL_JETSAM_VM_PAGESHORTAGE == 4);
    CHECK(MDL_JETSAM_FC_THRASHING == 6);
    CHECK(MDL_JETSAM_PER_PROCESS_LIMIT == 7);
    CHECK(MDL_JETSAM_IDLE_EXIT == 9);
    CHECK(MDL_JETSAM_COMPRESSOR_THRASHING == 11);
    CHECK(MDL_JETSAM_COMPRESSOR_SPACE == 12);
    CHECK(MDL_JETSAM_LONG_IDLE_EXIT == 17);
    CHECK(std::string(mdl_jetsam_cause_name(MDL_JETSAM_COMPRESSOR_SPACE)) ==
          "vm-compressor-space-shortage");
    CHECK(std::string(mdl_jetsam_cause_name(MDL_JETSAM_COUNT)) == "?");
    for (int c = 1; c < MDL_JETSAM_COUNT; c++) {
        const char *name = mdl_jetsam_cause_name((mdl_jetsam_cause)c);
        if (name[0] == '\0')
            continue; // 16 is reserved
        mdl_jetsam_cause back = MDL_JETSAM_NONE;
        REQUIRE(mdl_jetsam_cause_parse(name, &back) == SIM_OK);
        CHECK(back == c);
    }
    mdl_jetsam_cause untouched = MDL_JETSAM_IDLE_EXIT;
    CHECK(mdl_jetsam_cause_parse("vm-pressure", &untouched) == SIM_ENOTFOUND);
    CHECK(mdl_jetsam_cause_parse("", &untouched) == SIM_ENOTFOUND);
    CHECK(untouched == MDL_JETSAM_IDLE_EXIT);
}

TEST_CASE("xnu: the fallback thresholds by DRAM size")
{
    // memorystatus_init: critical = pct x pages / 100 (5 up to 3 GiB, else
    // 4); idle and soft 9/4 and 15/4 of critical from 3 to 6 GiB, else 2x, 3x
    const int64_t gib = (int64_t)1 << 30, page = 16384;
    int64_t c = 0, i = 0, s = 0;
    mdl_xnu_thresholds(2 * gib, page, &c, &i, &s); // 131072 pages
    CHECK((c == 6553 && i == 13106 && s == 19659));
    mdl_xnu_thresholds(3 * gib, page, &c, &i, &s); // 196608 pages: still small
    CHECK((c == 9830 && i == 19660 && s == 29490));
    mdl_xnu_thresholds(4 * gib, page, &c, &i, &s); // 262144 pages: medium
    CHECK((c == 10485 && i == 23591 && s == 39318));
    mdl_xnu_thresholds(6 * gib, page, &c, &i, &s); // 393216 pages: medium
    CHECK((c == 15728 && i == 35388 && s == 58980));
    mdl_xnu_thresholds(8 * gib, page, &c, &i, &s); // 524288 pages: large
    CHECK((c == 20971 && i == 41942 && s == 62913));
}

TEST_CASE("xnu: the phantom cache thrashes only when most reads were evicted")
{
    // is_thrashing: added and found both >= threshold, found >= added / 2
    CHECK(mdl_xnu_pc_thrashing(1000, 1000, MDL_XNU_PC_THRESHOLD_SSD) == 1);
    CHECK(mdl_xnu_pc_thrashing(999, 5000, MDL_XNU_PC_THRESHOLD_SSD) == 0);  // too few evicted
    CHECK(mdl_xnu_pc_thrashing(5000, 999, MDL_XNU_PC_THRESHOLD_SSD) == 0);  // too few found
    CHECK(mdl_xnu_pc_thrashing(4000, 2000, MDL_XNU_PC_THRESHOLD_SSD) == 1); // exactly half
    CHECK(mdl_xnu_pc_thrashing(4001, 1999, MDL_XNU_PC_THRESHOLD_SSD) == 0); // a new working set
    // files on storage that is not an SSD: 500 (phantom_cache_thrashing_threshold)
    CHECK(mdl_xnu_pc_thrashing(600, 600, MDL_XNU_PC_THRESHOLD) == 1);
    CHECK(mdl_xnu_pc_thrashing(600, 600, MDL_XNU_PC_THRESHOLD_SSD) == 0);
}

TEST_CASE("xnu: the pageout daemon's free target, from the pages free at boot")
{
    // vm_page_free_reserve on iOS with the compressor: reserve 100 + 28 =
    // 128 pages; target = 128 + 15 + (free - 128) / 100, at most 2000
    // the 2 GiB iPhone, 700 MiB for the system: 1348 MiB = 86272 pages:
    // 128 + 15 + 86144 / 100 = 143 + 861 = 1004
    CHECK(mdl_xnu_free_target(86272) == 1004);
    // 4 GiB less 1 GiB: 196608 pages: 143 + 1964 = 2107, capped at 2000
    CHECK(mdl_xnu_free_target(196608) == MDL_XNU_FREE_TARGET_PAGES);
    // the cap is reached at 128 + 185700 pages, 1857 * 100 beyond the reserve
    CHECK(mdl_xnu_free_target(128 + 185699) == 1999);
    CHECK(mdl_xnu_free_target(128 + 185700) == 2000);
    // 10000 pages: min 128 + 10 + 49 = 187; target 128 + 15 + 98 = 241
    CHECK(mdl_xnu_free_target(10000) == 241);
}

TEST_CASE("xnu: the phantom cache's history shifts once a period gone")
{
    // vm_phantom_cache_check_pressure: a call after the 250 ms period ended
    // shifts pc_history once (pc_history <<= 1); it is called often, so a
    // look shifts once per period gone; a thrashing period sets bit 0;
    // pressure when the low 4 bits are set
    const int64_t P = MDL_XNU_PC_PERIOD_US;
    int64_t start = -10 * P;
    uint32_t h = mdl_xnu_pc_history(0, &start, 0, 3, 1); // a read of three thrashing periods
    CHECK(h == 0x7u);
    CHECK(start == 2 * P); // the read's last period began at 500 ms
    CHECK_FALSE(mdl_xnu_pc_pressure(h));
    // the next period thrashes: one shift, four bits: pressure
    int64_t s2 = start;
    uint32_t next = mdl_xnu_pc_history(h, &s2, 3 * P, 1, 1);
    CHECK(next == 0xfu);
    CHECK(mdl_xnu_pc_pressure(next));
    // a quiet minute (240 periods) shifts the history out: one thrashing
    // period after it is no pressure
    h = mdl_xnu_pc_history(h, &start, 60 * 1000000, 1, 1);
    CHECK(h == 0x1u);
    CHECK(start == 60 * 1000000);
    CHECK_FALSE(mdl_xnu_pc_pressure(h));
    // a look within the same period shifts nothing
    CHECK(mdl_xnu_pc_history(0x7u, &start, 60 * 1000000 + P - 1, 1, 0) == 0x7u);
    // two periods gone: two shifts
    start = 0;
    CHECK(mdl_xnu_pc_history(0x7u, &start, 2 * P, 1, 1) == 0x1du);
}

TEST_CASE("xnu: healthy over every threshold: no action")
{
    mdl_xnu_decision d = decide(healthy_input());
    CHECK(d.healthy == 1);
    CHECK(d.action == MDL_XNU_NONE);
    CHECK(d.cause == MDL_JETSAM_NONE);
    CHECK(d.branch == 3);
}

TEST_CASE("xnu: below idle and healthy: idle-exit in the idle band only")
{
    mdl_xnu_input in = healthy_input();
    in.available = 23590; // one page under idle, over critical
    mdl_xnu_decision d = decide(in);
    CHECK(d.healthy == 1);
    CHECK(d.action == MDL_XNU_KILL_IDLE);
    CHECK(d.cause == MDL_JETSAM_IDLE_EXIT);
    CHECK(d.max_band == MDL_BAND_IDLE);
    // no idle process left: healthy, nothing to do
    in.idle_procs = 0;
    d = decide(in);
    CHECK(d.action == MDL_XNU_NONE);
    // exactly at idle is not below it (available < idle)
    in = healthy_input();
    in.available = 23591;
    CHECK(decide(in).action == MDL_XNU_NONE);
    // between idle and soft, healthy: nothing (no high-water process)
    in.available = 30000;
    CHECK(decide(in).action == MDL_XNU_NONE);
    CHECK(decide(in).branch == 3);
}

TEST_CASE("xnu: below critical: vm-pageshortage up to the top band, idle processes or not")
{
    mdl_xnu_input in = healthy_input();
    in.available = 10484;
    in.idle_procs = 0;
    CHECK(decide(in).cause == MDL_JETSAM_VM_PAGESHORTAGE); // no idle process: the same
    in.idle_procs = 3;
    mdl_xnu_decision d = decide(in);
    CHECK(d.healthy == 0);
    CHECK(d.action == MDL_XNU_KILL_TOP);
    CHECK(d.cause == MDL_JETSAM_VM_PAGESHORTAGE);
    CHECK(d.max_band == MDL_BAND_MAX); // JETSAM_PRIORITY_MAX: the foreground too
    CHECK(d.branch == 4);
    in.available = 10485; // at critical: healthy, below idle: idle-exit
    CHECK(decide(in).cause == MDL_JETSAM_IDLE_EXIT);
}

TEST_CASE("xnu: file-cache thrashing kills the top process with fc-thrashing while pages are plenty")
{
    mdl_xnu_input in = healthy_input();
    in.fc_thrashing = 1;
    mdl_xnu_decision d = decide(in);
    CHECK(d.healthy == 0);
    CHECK(d.action == MDL_XNU_KILL_TOP);
    CHECK(d.cause == MDL_JETSAM_FC_THRASHING);
    // below idle too: unhealthy, so no idle-exit: the top-process kill names fc-thrashing
    in.available = 20000;
    CHECK(decide(in).cause == MDL_JETSAM_FC_THRASHING);
    // below critical as well: fc-thrashing comes first in pick_kill_cause
    in.available = 100;
    CHECK(decide(in).cause == MDL_JETSAM_FC_THRASHING);
}

TEST_CASE("xnu: the compressor's causes and their order")
{
    mdl_xnu_input in = healthy_input();
    in.compressor_thrashing = 1;
    in.fc_thrashing = 1;
    mdl_xnu_decision d = decide(in);
    CHECK(d.cause == MDL_JETSAM_COMPRESSOR_THRASHING); // first in pick_kill_cause
    CHECK(d.branch == 4);
    // exhausted: branch 1 of pick_action names the space shortage, thrashing or not
    in.compressor_exhausted = 1;
    d = decide(in);
    CHECK(d.cause == MDL_JETSAM_COMPRESSOR_SPACE);
    CHECK(d.branch == 1);
    CHECK(d.max_band == MDL_BAND_MAX);
    // the phantom cache's pressure with the compressor both thrashing and
    // out of space is not file-cache thrashing (memorystatus_health_check)
    CHECK(d.fc_thrashing == 0);
    in.compressor_exhausted = 0;
    CHECK(decide(in).fc_thrashing == 1); // thrashing alone: the file cache counts
    in.compressor_thrashing = 0;
    in.compressor_exhausted = 1;
    d = decide(in);
    CHECK(d.fc_thrashing == 1); // out of space alone: it counts too
    CHECK(d.cause == MDL_JETSAM_COMPRESSOR_SPACE);
}
