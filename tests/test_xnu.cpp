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

// Thresholds of a 4 GiB phone in pages of 16 KiB: 262144 pages; 4 / 9 /
// 15 % (the (3, 6] GB row): critical 10485, idle 23592, soft 39321.
mdl_xnu_input healthy_input()
{
    mdl_xnu_input in;
    std::memset(&in, 0, sizeof in);
    in.critical = 10485;
    in.idle = 23592;
    in.soft = 39321;
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
    // memorystatus_init's table: (0,3] GB 5/10/15, (3,6] 4/9/15, above 4/8/12
    const int64_t gib = (int64_t)1 << 30;
    int c = 0, i = 0, p = 0;
    mdl_xnu_threshold_pcts(3 * gib, &c, &i, &p);
    CHECK((c == 5 && i == 10 && p == 15));
    mdl_xnu_threshold_pcts(3 * gib + 1, &c, &i, &p);
    CHECK((c == 4 && i == 9 && p == 15));
    mdl_xnu_threshold_pcts(6 * gib, &c, &i, &p);
    CHECK((c == 4 && i == 9 && p == 15));
    mdl_xnu_threshold_pcts(8 * gib, &c, &i, &p);
    CHECK((c == 4 && i == 8 && p == 12));
}

TEST_CASE("xnu: the phantom cache thrashes only when most reads were evicted")
{
    // is_thrashing: added and found both >= threshold, found >= added / 2
    CHECK(mdl_xnu_pc_thrashing(1000, 1000, MDL_XNU_PC_THRESHOLD_SSD) == 1);
    CHECK(mdl_xnu_pc_thrashing(999, 5000, MDL_XNU_PC_THRESHOLD_SSD) == 0);  // too few evicted
    CHECK(mdl_xnu_pc_thrashing(5000, 999, MDL_XNU_PC_THRESHOLD_SSD) == 0);  // too few found
    CHECK(mdl_xnu_pc_thrashing(4000, 2000, MDL_XNU_PC_THRESHOLD_SSD) == 1); // exactly half
    CHECK(mdl_xnu_pc_thrashing(4001, 1999, MDL_XNU_PC_THRESHOLD_SSD) == 0); // a new working set
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
    in.available = 23591; // one page under idle, over critical
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
    in.available = 23592;
    CHECK(decide(in).action == MDL_XNU_NONE);
}

TEST_CASE("xnu: below critical: vm-pageshortage up to the top band, idle processes or not")
{
    mdl_xnu_input in = healthy_input();
    in.available = 10484;
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
    // both compressor flags: the phantom cache's pressure is not file-cache
    // thrashing (memorystatus_health_check), so only the compressor is unhealthy
    in.compressor_thrashing = 0;
    d = decide(in);
    CHECK(d.cause == MDL_JETSAM_COMPRESSOR_SPACE);
}
