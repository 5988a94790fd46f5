// Deaths, exit records and recovery (issue: deaths, restarts and safe
// recovery), on the shipped teaching scenarios (scenarios/catalog/teach/):
// their values are fixed, so each outcome is derived in the comments.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "models/models.h"
#include "results/results.h"
#include "scenarios/scenarios.h"
#include "shim/world.hpp"

namespace {

const int64_t MiB = 1024 * 1024;

struct Teach {
    scn_scenario s{};
    explicit Teach(const std::string &name)
    {
        sim_error err;
        sim_error_clear(&err);
        int rc = scn_scenario_load_catalog(("teach/" + name + ".yaml").c_str(), &s, &err);
        INFO(err.msg);
        REQUIRE(rc == SIM_OK);
    }
    ~Teach() { scn_scenario_release(&s); }
    mdl_rep run(unsigned cell, uint64_t rep = 0)
    {
        mdl_rep r = shim::run_replication(s.cells[cell], rep, nullptr, false);
        // the evidence is never deleted: one record per death, but on a
        // phone that keeps none (exit_info: false)
        uint64_t records = 0;
        for (unsigned k = 0; k < r.nrecord_kinds; k++)
            records += r.record_kinds[k].count;
        REQUIRE(records + r.deaths_unrecorded == r.deaths_total);
        REQUIRE((r.deaths_unrecorded == 0 || records == 0));
        return r;
    }
    // every cell over `reps` replications
    std::vector<res_cell> all(uint64_t reps)
    {
        std::vector<const char *> pj;
        res_plan plan = shim::plan_of(s, reps, pj);
        res_result r;
        sim_error err;
        sim_error_clear(&err);
        int rc = res_run(&plan, 2, nullptr, nullptr, &r, &err);
        INFO(err.msg);
        REQUIRE(rc == SIM_OK);
        std::vector<res_cell> out(r.cells, r.cells + r.ncells);
        res_result_free(&r);
        return out;
    }
};

double availability(const mdl_rep &r, sim_time horizon)
{
    return (double)r.alive_us / (double)horizon;
}

} // namespace

TEST_CASE("prewarm boot loop: naive loops, safe_mode dies once, fallback_lkg switches",
          "[recovery]")
{
    // big-v2's start-up dies at delegate_prepare, 3 s after each cold start
    // (load 1 s + prepare 2 s, then 300 + 400 + 900 = 1600 MiB > 1400 MiB);
    // the user relaunches 10 s after each death; horizon 600 s.
    //  naive: deaths at 3, 16, 29, ... : 46 in 600 s (the 47th start at
    //    598 s is cut by the horizon), alive 3 s of every 13: 138 s + 2 s;
    //    every death is a start-up death: a boot loop;
    //  safe_mode (after 1): dies at 3 s, relaunches at 13 s without start-up
    //    model work and stays up: alive 3 + 587 = 590 s (0.9833), no loop;
    //  fallback_lkg: small-v1's receipt is complete: the relaunch at 13 s
    //    runs it (one candidate switch), it fits: alive 590 s too.
    Teach t("prewarm-boot-loop");
    REQUIRE(t.s.ncells == 6);
    const sim_time h = t.s.horizon;
    mdl_rep naive = t.run(0), safe = t.run(1), lkg = t.run(2);
    CHECK(naive.deaths_total == 46);
    CHECK(naive.boot_loop == 1);
    CHECK(naive.deaths[MDL_EXIT_LOW_MEMORY] == 46);
    CHECK(availability(naive, h) == Approx(140.0 / 600).epsilon(0.01));
    CHECK(safe.deaths_total == 1);
    CHECK(safe.boot_loop == 0);
    CHECK(safe.safe_mode_starts == 1);
    CHECK(availability(safe, h) >= 590.0 / 600 - 1e-9);
    CHECK(lkg.deaths_total == 1);
    CHECK(lkg.candidate_switches == 1);
    CHECK(lkg.safe_mode_starts == 0);
    CHECK(availability(lkg, h) >= 590.0 / 600 - 1e-9);
    // the last known good holds its model: 100 + 120 MiB after its prepare
    CHECK(lkg.peak == 1600 * MiB); // the first start's peak, before the death

    // the record: iOS, over the foreground jetsam limit: a JetsamEvent
    // (per-process-limit), as in the background
    REQUIRE(naive.nrecords == MDL_RECORDS_KEPT);
    CHECK(naive.records[0].kind == MDL_REC_JETSAM);
    CHECK(naive.records[0].description == MDL_TEXT_JETSAM);
    CHECK(naive.records[0].importance == 100);
    CHECK(naive.records[0].stage == MDL_STAGE_DELEGATE_PREPARE);
    CHECK(naive.records[0].time == 3000000);
    CHECK(naive.records[1].time == 16000000);
    CHECK(naive.records[0].pss_kb == 1600 * 1024); // the footprint at the kill

    // over all replications (fixed values: every replication alike)
    std::vector<res_cell> c = t.all(10);
    CHECK(c[0].boot_loop_rate == 1.0);
    CHECK(c[1].boot_loop_rate == 0.0);
    CHECK(c[1].availability > 0.98);
    CHECK(c[2].candidate_switches == 10);
}

TEST_CASE("fallback_lkg switches only when the last known good's receipt is complete",
          "[recovery]")
{
    // The same scenario with small-v1's receipt incomplete: fallback_lkg
    // must not run a candidate whose files are not verified, so it acts as
    // safe_mode: one death, no switch, a safe-mode start.
    Teach t("prewarm-boot-loop");
    REQUIRE(std::string(t.s.candidates[1].id) == "small-v1");
    t.s.candidates[1].receipt_complete = 0;
    mdl_rep r = t.run(2);
    CHECK(r.candidate_switches == 0);
    CHECK(r.safe_mode_starts == 1);
    CHECK(r.deaths_total == 1);
    // and with no last known good at all, the same
    for (unsigned i = 0; i < t.s.ncells; i++)
        t.s.cells[i].lkg = nullptr;
    mdl_rep none = t.run(2);
    CHECK(none.candidate_switches == 0);
    CHECK(none.safe_mode_starts == 1);
}

TEST_CASE("a recovery ladder takes one more step per failure", "[recovery]")
{
    // ladder [reject_new, stop_prewarm]: the death at 3 s puts reject_new in
    // force (the relaunch at 13 s still prewarms and dies at 16 s); that
    // second death adds stop_prewarm: the relaunch at 26 s stays up.
    // Alive 3 + 3 + 574 = 580 s; accepting inference only in the first
    // process (3 s): reject_new stays in force.
    Teach t("prewarm-boot-loop");
    mdl_cell cell = t.s.cells[0];
    cell.policy.recovery = MDL_RECOVERY_LADDER;
    cell.policy.nladder = 2;
    cell.policy.ladder[0] = MDL_ACT_REJECT_NEW;
    cell.policy.ladder[1] = MDL_ACT_STOP_PREWARM;
    mdl_rep r;
    sim_error err;
    sim_error_clear(&err);
    REQUIRE(mdl_run_replication(&cell, 0, nullptr, nullptr, &r, &err) == SIM_OK);
    CHECK(r.deaths_total == 2);
    CHECK(r.boot_loop == 1); // two start-up deaths in a row, the same candidate
    CHECK(r.alive_us == 580000000);
    CHECK(r.accepting_us == 3000000);

    // ladder [degrade_cpu]: after the first death the delegate is skipped:
    // the CPU path holds 300 MiB and starts (one death in all)
    cell.policy.nladder = 1;
    cell.policy.ladder[0] = MDL_ACT_DEGRADE_CPU;
    REQUIRE(mdl_run_replication(&cell, 0, nullptr, nullptr, &r, &err) == SIM_OK);
    CHECK(r.deaths_total == 1);
    CHECK(r.accepting_us == r.alive_us);
}

TEST_CASE("exit records: reason codes and importances in the foreground and the background",
          "[recovery][records]")
{
    // ANR: reason 6, foreground (importance 100); dies 5 s into the load,
    // before the first pss sample (30 s): pss and rss 0.
    Teach anr("anr-main-thread-load");
    mdl_rep a = anr.run(0);
    REQUIRE(a.nrecords > 0);
    CHECK(a.records[0].kind == MDL_REC_EXIT_INFO);
    CHECK(a.records[0].reason == MDL_AEI_ANR);
    CHECK(a.records[0].importance == 100);
    CHECK(a.records[0].pss_kb == 0);
    CHECK(a.records[0].time == 5000000);
    CHECK(a.records[0].cls == MDL_EXIT_ANR);

    // background reclaim: LOW_MEMORY at importance 400 (cached), with the
    // pss of the last 20 s sample: the 600 MiB model.
    Teach bg("background-reclaim");
    mdl_rep b = bg.run(0);
    REQUIRE(b.nrecords > 0);
    CHECK(b.records[0].reason == MDL_AEI_LOW_MEMORY);
    CHECK(b.records[0].importance == 400);
    CHECK(b.records[0].cls == MDL_EXIT_SYSTEM_RECLAIM);
    CHECK(b.records[0].pss_kb == 600 * 1024);
    CHECK(b.records[0].rss_kb >= 600 * 1024); // rss also holds the mapped file
    // the first spike in the background: the requests step ends at 60 s and
    // the background step starts then; spikes every 30 s (30, 60, ...): at
    // equal times path steps come before device pressure, so the spike at
    // 60 s already finds the app in the background
    CHECK(b.records[0].time == 60000000);

    // a device without low-memory reporting: SIGNALED, status 9
    bg.s.devices[0].low_memory_reporting = 0;
    mdl_rep s9 = bg.run(0);
    CHECK(s9.records[0].reason == MDL_AEI_SIGNALED);
    CHECK(s9.records[0].status == 9);

    // Java heap: CRASH (OutOfMemoryError)
    Teach java("java-heap-copy");
    mdl_rep j = java.run(0);
    CHECK(j.records[0].reason == MDL_AEI_CRASH);
    CHECK(std::string(mdl_record_text_name(j.records[0].description)).find("OutOfMemoryError") != std::string::npos);
}

TEST_CASE("teaching scenarios: two sets, retries, switches and queues show what their about says",
          "[recovery][teach]")
{
    SECTION("delegate fallback holding two sets")
    {
        // overlap: 400 + 800 + (400 + 200) = 1800 MiB at the fallback's
        // prepare, one allocation, > 1400: dies at runtime_prepare at every
        // start; released:
        // 400 + 800 = 1200 MiB in the delegate's prepare, and lives
        Teach t("delegate-fallback-two-sets");
        std::vector<res_cell> c = t.all(5);
        CHECK(c[0].any_rate == 1.0);
        CHECK(c[0].top_death_stage == MDL_STAGE_RUNTIME_PREPARE);
        CHECK(c[0].boot_loop_rate == 1.0);
        CHECK(c[0].peak.max == 1800.0 * MiB);
        CHECK(c[1].any_rate == 0.0);
        CHECK(c[1].peak.max == 1200.0 * MiB);
    }
    SECTION("timeout retry storm")
    {
        Teach t("timeout-retry-storm");
        std::vector<res_cell> c = t.all(20);
        CHECK(c[0].duplicates > 0);
        CHECK(c[0].retried > 0);
        CHECK(c[1].duplicates == 0);
        CHECK(c[0].peak.p95 > c[1].peak.p95 + 180.0 * MiB); // at least one more working set
    }
    SECTION("split switch overlap")
    {
        // overlap dies at the first switch (700 + 700 + 100 > 1400);
        // release_first holds one part: 700 + 100 = 800 MiB
        Teach t("split-switch-overlap");
        std::vector<res_cell> c = t.all(5);
        CHECK(c[0].any_rate == 1.0);
        CHECK(c[0].top_reason == MDL_EXIT_LOW_MEMORY);
        CHECK(c[1].any_rate == 0.0);
        CHECK(c[1].peak.max == 800.0 * MiB);
        CHECK(c[1].switches > 0);
    }
    SECTION("a queue of large images")
    {
        Teach t("image-queue");
        std::vector<res_cell> c = t.all(10);
        CHECK(c[0].any_rate == 1.0);
        CHECK(c[0].top_reason == MDL_EXIT_LOW_MEMORY);
        CHECK(c[0].rejected == 0);
        CHECK(c[1].any_rate == 0.0);
        CHECK(c[1].rejected > 0);
    }
}

TEST_CASE("teaching scenarios: the Java heap, the cache, background reclaim and an ANR show "
          "what their about says",
          "[recovery][teach]")
{
    SECTION("model bytes copied into the Java heap")
    {
        // 150 MiB of byte[] + 60 MiB of prepare transient > 192 MiB: java_crash
        Teach t("java-heap-copy");
        std::vector<res_cell> c = t.all(5);
        CHECK(c[0].any_rate == 1.0);
        CHECK(c[0].top_reason == MDL_EXIT_JAVA_CRASH);
        CHECK(c[0].top_death_stage == MDL_STAGE_RUNTIME_PREPARE);
        CHECK(c[1].any_rate == 0.0);
    }
    SECTION("a cache rebuilt at every start")
    {
        // 900 + 600 MiB of rebuild > 1400: dies at stage cache every start
        Teach t("cache-every-start");
        std::vector<res_cell> c = t.all(20);
        CHECK(c[0].any_rate == 1.0);
        CHECK(c[0].top_death_stage == MDL_STAGE_CACHE);
        CHECK(c[0].boot_loop_rate == 1.0);
        CHECK(c[1].any_rate < 0.5); // only the starts that miss (5 %) die
    }
    SECTION("background reclaim")
    {
        Teach t("background-reclaim");
        std::vector<res_cell> c = t.all(5);
        CHECK(c[0].any_rate == 1.0);
        CHECK(c[0].by_reason[MDL_EXIT_SYSTEM_RECLAIM] == 5);
        CHECK(c[0].by_reason[MDL_EXIT_LOW_MEMORY] == 0); // never in the foreground
    }
    SECTION("an ANR from a load on the main thread")
    {
        Teach t("anr-main-thread-load");
        std::vector<res_cell> c = t.all(5);
        CHECK(c[0].any_rate == 1.0);
        CHECK(c[0].top_reason == MDL_EXIT_ANR);
        CHECK(c[0].top_death_stage == MDL_STAGE_LOAD);
        CHECK(c[1].any_rate == 0.0);
    }
}
