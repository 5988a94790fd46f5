// The model's rules as pure functions, without YAML or a world: the kill
// rules at their boundaries, the exit records, the recovery decisions, the
// lmkd threshold of diagnose, and the bootstrap interval's coverage.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "models/models.h"
#include "replay/replay.h"
#include "results/results.h"

namespace {

const int64_t MiB = 1024 * 1024;

// ram 4096, system 1024: 3072 MiB for apps.  Levels at adj 0 (100 MiB),
// 800 (300 MiB) and 900 (500 MiB): the background app (adj 700) is held to
// the adj-0 level, the cached apps are killed below 500 MiB.
mdl_device lmk_device()
{
    mdl_device d;
    std::memset(&d, 0, sizeof d);
    d.os = MDL_OS_ANDROID;
    d.rule = MDL_KILL_LMK;
    d.ram = 4096 * MiB;
    d.system = 1024 * MiB;
    d.cached_app_size = 100 * MiB;
    d.minfree[0] = {0, 100 * MiB};
    d.minfree[1] = {800, 300 * MiB};
    d.minfree[2] = {900, 500 * MiB};
    d.nminfree = 3;
    d.low_memory_reporting = 1;
    return d;
}

mdl_device jetsam_device()
{
    mdl_device d;
    std::memset(&d, 0, sizeof d);
    d.os = MDL_OS_IOS;
    d.rule = MDL_KILL_JETSAM;
    d.jetsam_limit = 1000 * MiB;
    d.jetsam_background_limit = 300 * MiB;
    return d;
}

mdl_kill_verdict decide(const mdl_device &d, int64_t counted, int64_t cached, int fg,
                        int64_t extra = 0, int64_t successor = 0, int aged = 0)
{
    mdl_kill_input in{counted, cached, extra, fg, successor, aged, 0, 0, 0};
    mdl_kill_verdict v;
    mdl_kill_decide(&d, &in, &v);
    return v;
}

} // namespace

TEST_CASE("lmk: free memory exactly at a level lives, one byte below dies", "[rules][kill]")
{
    mdl_device d = lmk_device();
    // no cached apps: free = 3072 MiB - counted; the foreground level is 100 MiB
    mdl_kill_verdict at = decide(d, 2972 * MiB, 0, 1);
    CHECK_FALSE(at.dies);
    CHECK(at.room == 100 * MiB);
    mdl_kill_verdict below = decide(d, 2972 * MiB + 1, 0, 1);
    CHECK(below.dies);
    CHECK(below.why == MDL_EXIT_LOW_MEMORY);
    CHECK(below.room == 100 * MiB - 1);
}

TEST_CASE("lmk: the background app is held to the level of adj 700", "[rules][kill]")
{
    mdl_device d = lmk_device();
    // free 250 MiB: under the adj-800 level (300) and the adj-900 level
    // (500), over the adj-0 level (100).  At adj 700 the app lives; a rule
    // that put it at adj 800 or 900 would kill it.
    mdl_kill_verdict v = decide(d, 2822 * MiB, 0, 0);
    CHECK_FALSE(v.dies);
    // free 99 MiB: below the adj-0 level, in the background: system_reclaim
    mdl_kill_verdict w = decide(d, 2973 * MiB, 0, 0);
    CHECK(w.dies);
    CHECK(w.why == MDL_EXIT_SYSTEM_RECLAIM);
    CHECK(mdl_kill_line(&d, 0) == 2972 * MiB);
    CHECK(mdl_kill_line(&d, 1) == 2972 * MiB);
}

TEST_CASE("lmk: cached apps go one at a time below the last level", "[rules][kill]")
{
    mdl_device d = lmk_device();
    // 1000 MiB cached, counted 2000: free 72 MiB.  Kills of 100 MiB each
    // until free reaches 500: 5 kills (free 572), 500 MiB cached left.
    mdl_kill_verdict v = decide(d, 2000 * MiB, 1000 * MiB, 1);
    CHECK(v.cached_kills == 5);
    CHECK(v.cached == 500 * MiB);
    CHECK(v.room == 572 * MiB);
    CHECK_FALSE(v.dies);
    // exactly at the last level: no kill
    mdl_kill_verdict at = decide(d, 1572 * MiB, 1000 * MiB, 1);
    CHECK(at.cached_kills == 0);
    // a pressure spike counts like memory for the check
    mdl_kill_verdict spike = decide(d, 1572 * MiB, 1000 * MiB, 1, 1);
    CHECK(spike.cached_kills == 1);
    // the last cached app frees what is left, however small
    mdl_kill_verdict last = decide(d, 2900 * MiB, 30 * MiB, 1);
    CHECK(last.cached_kills == 1);
    CHECK(last.cached == 0);
}

TEST_CASE("jetsam: exactly at the limit lives, and the background limit applies there",
          "[rules][kill]")
{
    mdl_device d = jetsam_device();
    CHECK_FALSE(decide(d, 1000 * MiB, 0, 1).dies);
    mdl_kill_verdict over = decide(d, 1000 * MiB + 1, 0, 1);
    CHECK(over.dies);
    CHECK(over.why == MDL_EXIT_LOW_MEMORY);
    CHECK(over.room == -1);
    CHECK_FALSE(decide(d, 300 * MiB, 0, 0).dies);
    CHECK(decide(d, 300 * MiB + 1, 0, 0).dies);
    // other apps' memory and spikes do not move a per-process limit
    CHECK_FALSE(decide(d, 1000 * MiB, 4096 * MiB, 1, 4096 * MiB).dies);
    CHECK(mdl_kill_line(&d, 1) == 1000 * MiB);
    CHECK(mdl_kill_line(&d, 0) == 300 * MiB);
}

TEST_CASE("exit records: what Android writes for each death", "[rules][exit]")
{
    mdl_device d = lmk_device();
    mdl_death x{MDL_EXIT_LOW_MEMORY, MDL_STAGE_INFERENCE, 5000000, 1, 700 * MiB, 640000, 700000,
                MDL_LMKD_NONE, 0, MDL_JETSAM_NONE, 0};
    mdl_exit_record r;
    mdl_exit_record_make(&d, &x, &r);
    CHECK(r.kind == MDL_REC_EXIT_INFO);
    CHECK(r.reason == MDL_AEI_LOW_MEMORY);
    CHECK(r.status == 0);
    CHECK(r.importance == 100);
    CHECK(r.pss_kb == 640000); // the last sample, not the memory at the kill
    CHECK(r.rss_kb == 700000);
    CHECK(r.time == 5000000);
    CHECK(r.description == MDL_TEXT_LMKD);

    d.low_memory_reporting = 0; // an lmkd kill the system cannot attribute
    x.why = MDL_EXIT_SYSTEM_RECLAIM;
    x.foreground = 0;
    mdl_exit_record_make(&d, &x, &r);
    CHECK(r.reason == MDL_AEI_SIGNALED);
    CHECK(r.status == 9);
    CHECK(r.importance == 400);
    CHECK(r.description == MDL_TEXT_SIGNALED);

    x.why = MDL_EXIT_JAVA_CRASH;
    mdl_exit_record_make(&d, &x, &r);
    CHECK(r.reason == MDL_AEI_CRASH);
    CHECK(r.description == MDL_TEXT_JAVA_OOM);
    x.why = MDL_EXIT_NATIVE_CRASH;
    mdl_exit_record_make(&d, &x, &r);
    CHECK(r.reason == MDL_AEI_CRASH_NATIVE);
    CHECK(r.status == 6);
    x.why = MDL_EXIT_ANR;
    mdl_exit_record_make(&d, &x, &r);
    CHECK(r.reason == MDL_AEI_ANR);
    CHECK(r.description == MDL_TEXT_ANR);
}

TEST_CASE("exit records: what iOS writes for each death", "[rules][exit]")
{
    mdl_device d = jetsam_device();
    mdl_death x{MDL_EXIT_LOW_MEMORY, MDL_STAGE_LOAD, 1000, 1, 1001 * MiB, 5, 6, MDL_LMKD_NONE, 0, MDL_JETSAM_NONE, 0};
    mdl_exit_record r;
    mdl_exit_record_make(&d, &x, &r);
    // over the per-process limit in the foreground: a JetsamEvent, never an
    // EXC_RESOURCE report (a diagnostic, not a kill's record)
    CHECK(r.kind == MDL_REC_JETSAM);
    CHECK(r.description == MDL_TEXT_JETSAM);
    CHECK(r.pss_kb == 1001 * 1024); // the footprint at the kill
    CHECK(r.status == 9);
    CHECK(r.reason == 0);
    x.foreground = 0;
    mdl_exit_record_make(&d, &x, &r);
    CHECK(r.kind == MDL_REC_JETSAM);
    CHECK(r.description == MDL_TEXT_JETSAM);
    CHECK(r.importance == 400);
    CHECK(r.jetsam == MDL_JETSAM_PER_PROCESS_LIMIT);
    // the plain rule's background kill: the idle band's, XNU's idle-exit,
    // for which memorystatus_should_post_snapshot posts no JetsamEvent:
    // MetricKit's background exit count is the only record
    x.why = MDL_EXIT_SYSTEM_RECLAIM;
    mdl_exit_record_make(&d, &x, &r);
    CHECK(r.kind == MDL_REC_METRICKIT);
    CHECK(r.jetsam == MDL_JETSAM_IDLE_EXIT);
    CHECK(std::string(mdl_record_kind_name(r.kind)) == "metrickit_background");
    CHECK(r.description == MDL_TEXT_METRICKIT);
    CHECK(r.importance == 400);
    // ... unless the device sets kern.jetsam_idle_snapshot
    d.xnu_idle_snapshot = 1;
    mdl_exit_record_make(&d, &x, &r);
    CHECK(r.kind == MDL_REC_JETSAM_SYSTEM);
    CHECK(std::string(mdl_record_kind_name(r.kind)) == "jetsam_system");
    d.xnu_idle_snapshot = 0;
    // the page model says for itself: a kill it posts a report for keeps
    // the JetsamEvent, one it posts none for is MetricKit's
    x.jetsam = MDL_JETSAM_IDLE_EXIT;
    x.unreported = 1;
    mdl_exit_record_make(&d, &x, &r);
    CHECK(r.kind == MDL_REC_METRICKIT);
    x.unreported = 0;
    mdl_exit_record_make(&d, &x, &r);
    CHECK(r.kind == MDL_REC_JETSAM_SYSTEM);
    // the page model's causes: vm-pageshortage keeps its own record kind
    x.jetsam = MDL_JETSAM_VM_PAGESHORTAGE;
    mdl_exit_record_make(&d, &x, &r);
    CHECK(r.kind == MDL_REC_JETSAM_PAGESHORTAGE);
    CHECK(r.description == MDL_TEXT_JETSAM_PAGESHORTAGE);
    CHECK(std::string(mdl_record_text_name(r.description)) == "jetsam: vm-pageshortage");
    x.jetsam = MDL_JETSAM_FC_THRASHING;
    x.foreground = 1;
    mdl_exit_record_make(&d, &x, &r);
    CHECK(r.kind == MDL_REC_JETSAM_SYSTEM);
    CHECK(r.jetsam == MDL_JETSAM_FC_THRASHING);
    CHECK(r.importance == 100);
    x.jetsam = MDL_JETSAM_NONE;
    x.why = MDL_EXIT_WATCHDOG;
    mdl_exit_record_make(&d, &x, &r);
    CHECK(r.kind == MDL_REC_WATCHDOG);
    CHECK(r.description == MDL_TEXT_WATCHDOG);
    x.why = MDL_EXIT_NATIVE_CRASH;
    mdl_exit_record_make(&d, &x, &r);
    CHECK(r.kind == MDL_REC_CRASH);
    CHECK(r.status == 11);
}

TEST_CASE("exit records: the first are kept, all are counted by signature", "[rules][exit]")
{
    mdl_device d = lmk_device();
    mdl_rep o;
    std::memset(&o, 0, sizeof o);
    mdl_death a{MDL_EXIT_LOW_MEMORY, MDL_STAGE_LOAD, 0, 1, 0, 100, 0, MDL_LMKD_NONE, 0, MDL_JETSAM_NONE, 0};
    mdl_death b{MDL_EXIT_ANR, MDL_STAGE_LOAD, 0, 1, 0, 50, 0, MDL_LMKD_NONE, 0, MDL_JETSAM_NONE, 0};
    mdl_exit_record ra, rb;
    mdl_exit_record_make(&d, &a, &ra);
    mdl_exit_record_make(&d, &b, &rb);
    for (int k = 0; k < MDL_RECORDS_KEPT + 4; k++)
        mdl_rep_add_record(&o, k % 2 ? &rb : &ra);
    CHECK(o.nrecords == MDL_RECORDS_KEPT);
    REQUIRE(o.nrecord_kinds == 2);
    CHECK(o.record_kinds[0].count == (MDL_RECORDS_KEPT + 4) / 2);
    CHECK(o.record_kinds[0].pss_kb_sum == 100 * (MDL_RECORDS_KEPT + 4) / 2);
    CHECK(o.record_kinds[1].reason == MDL_AEI_ANR);
}

namespace {

struct Recovery {
    mdl_candidate cand{}, lkg{};
    mdl_policy pol{};
    mdl_recovery_state s{};
    Recovery(mdl_recovery r, uint32_t after)
    {
        pol.recovery = r;
        pol.safe_mode_after = after;
        lkg.receipt_complete = 1;
        mdl_recovery_init(&s, &cand);
    }
    void death(mdl_stage st, int in_startup = 1, mdl_exit why = MDL_EXIT_LOW_MEMORY)
    {
        mdl_recovery_on_death(&s, &pol, s.candidate, &lkg, in_startup, why, st);
    }
};

} // namespace

TEST_CASE("recovery: safe mode after safe_mode_after start-up deaths at one stage",
          "[rules][recovery]")
{
    Recovery r(MDL_RECOVERY_SAFE_MODE, 2);
    r.death(MDL_STAGE_LOAD);
    CHECK(r.s.same_stage == 1);
    CHECK_FALSE(r.s.safe_mode);
    r.death(MDL_STAGE_RUNTIME_PREPARE); // another stage: the count starts again
    CHECK(r.s.same_stage == 1);
    CHECK_FALSE(r.s.safe_mode);
    r.death(MDL_STAGE_RUNTIME_PREPARE);
    CHECK(r.s.same_stage == 2);
    CHECK(r.s.safe_mode);
    CHECK(r.s.consec[MDL_EXIT_LOW_MEMORY] == 3);
    // a stable run clears the counts, not safe mode
    mdl_recovery_on_stable(&r.s, &r.cand);
    CHECK(r.s.same_stage == 0);
    CHECK(r.s.consec[MDL_EXIT_LOW_MEMORY] == 0);
    CHECK(r.s.last_stable == &r.cand);
    CHECK(r.s.safe_mode);
}

TEST_CASE("recovery: a death after the start-up does not count toward safe mode",
          "[rules][recovery]")
{
    Recovery r(MDL_RECOVERY_SAFE_MODE, 1);
    r.death(MDL_STAGE_INFERENCE, 0);
    CHECK(r.s.same_stage == 0);
    CHECK_FALSE(r.s.safe_mode);
    CHECK(r.s.failed_stage == MDL_STAGE_INFERENCE);
    Recovery naive(MDL_RECOVERY_NAIVE, 1);
    naive.death(MDL_STAGE_LOAD);
    CHECK_FALSE(naive.s.safe_mode);
    CHECK(naive.s.candidate == &naive.cand);
}

TEST_CASE("recovery: fallback_lkg switches only to a complete last known good",
          "[rules][recovery]")
{
    Recovery r(MDL_RECOVERY_FALLBACK_LKG, 1);
    r.death(MDL_STAGE_LOAD);
    CHECK(r.s.candidate == &r.lkg);
    CHECK_FALSE(r.s.safe_mode);
    // the next start switches, and the condition is new
    r.s.same_stage = 3;
    CHECK(mdl_recovery_on_start(&r.s, &r.cand) == 1);
    CHECK(r.s.same_stage == 0);
    CHECK(mdl_recovery_on_start(&r.s, &r.lkg) == 0);

    Recovery bad(MDL_RECOVERY_FALLBACK_LKG, 1);
    bad.lkg.receipt_complete = 0;
    bad.death(MDL_STAGE_LOAD);
    CHECK(bad.s.candidate == &bad.cand);
    CHECK(bad.s.safe_mode); // no trustworthy lkg: safe mode instead
}

TEST_CASE("recovery: the ladder takes one step per death, in order", "[rules][recovery]")
{
    Recovery r(MDL_RECOVERY_LADDER, 1);
    r.pol.ladder[0] = MDL_ACT_REJECT_NEW;
    r.pol.ladder[1] = MDL_ACT_FALLBACK_LKG;
    r.pol.nladder = 2;
    r.death(MDL_STAGE_INFERENCE, 0);
    CHECK(r.s.acts == (1u << MDL_ACT_REJECT_NEW));
    CHECK(r.s.candidate == &r.cand);
    r.death(MDL_STAGE_INFERENCE, 0);
    CHECK(r.s.acts == ((1u << MDL_ACT_REJECT_NEW) | (1u << MDL_ACT_FALLBACK_LKG)));
    CHECK(r.s.candidate == &r.lkg);
    r.death(MDL_STAGE_INFERENCE, 0); // the ladder is exhausted
    CHECK(r.s.ladder_step == 2);
}

namespace {

rpl_exit lmkd_kill(int adj)
{
    rpl_exit x;
    std::memset(&x, 0, sizeof x);
    x.source = RPL_LMKD;
    x.reason_code = -1;
    x.has_adj = 1;
    x.adj = adj;
    x.pss_kb = x.rss_kb = x.pid = x.timestamp_ms = -1;
    std::strcpy(x.process, "com.example.app");
    return x;
}

std::string verdict_class(int adj)
{
    rpl_exit x = lmkd_kill(adj);
    rpl_verdict v;
    rpl_diagnose(&x, nullptr, &v);
    return v.cls;
}

} // namespace

TEST_CASE("diagnose: an lmkd kill at adj 700 and above is a background reclaim",
          "[rules][diagnose]")
{
    CHECK(verdict_class(600) == "low_memory");
    CHECK(verdict_class(699) == "low_memory");
    CHECK(verdict_class(700) == "system_reclaim");
    CHECK(verdict_class(900) == "system_reclaim");
}

TEST_CASE("bootstrap: the paired p95 interval covers the true difference about 95 % of "
          "the time",
          "[rules][stats]")
{
    // x and y independent normals, y shifted by 1: the true difference of
    // the p95s is exactly 1.  T trials of n pairs, each with the run's
    // RES_BOOTSTRAP resamples.  The count of intervals that cover 1 is
    // binomial; the tolerance is 3.5 of its standard deviations around
    // 0.95 (a percentile bootstrap of a tail quantile undercovers a little
    // at this n, which the lower side allows).
    const int T = 300;
    const size_t n = 200;
    gsl_rng *data = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(data, 20261203);
    std::vector<double> x(n), y(n);
    int covered = 0;
    double width = 0;
    for (int t = 0; t < T; t++) {
        for (size_t k = 0; k < n; k++) {
            x[k] = gsl_ran_gaussian(data, 1.0);
            y[k] = 1.0 + gsl_ran_gaussian(data, 1.0);
        }
        double diff;
        res_interval ci;
        REQUIRE(res_paired_quantile_diff(x.data(), y.data(), n, 0.95, RES_BOOTSTRAP, 7,
                                         static_cast<uint64_t>(t), 2, &diff, &ci) == SIM_OK);
        covered += ci.lo <= 1.0 && 1.0 <= ci.hi;
        width += ci.hi - ci.lo;
    }
    gsl_rng_free(data);
    double rate = (double)covered / T;
    double sd = std::sqrt(0.95 * 0.05 / T);
    INFO("coverage " << rate << ", mean width " << width / T);
    CHECK(rate >= 0.95 - 3.5 * sd);
    CHECK(rate <= 0.95 + 3.5 * sd);
}

TEST_CASE("bootstrap: the interval does not depend on the threads, and its quantiles are the "
          "sorted sample's",
          "[stats][bootstrap]")
{
    // resamples keyed by their index: 1, 2 and 4 threads give the same
    // bytes; with every value taken once (no resampling) the quantile walk
    // from either end finds res_quantile_sorted's answer
    const size_t n = 1001;
    std::vector<double> x(n), y(n);
    for (size_t k = 0; k < n; k++) {
        x[k] = static_cast<double>((k * 7919) % n);
        y[k] = x[k] + static_cast<double>(k % 13);
    }
    double d1, d2, d4;
    res_interval c1, c2, c4;
    REQUIRE(res_paired_quantile_diff(x.data(), y.data(), n, 0.95, 200, 3, 1, 1, &d1, &c1) ==
            SIM_OK);
    REQUIRE(res_paired_quantile_diff(x.data(), y.data(), n, 0.95, 200, 3, 1, 2, &d2, &c2) ==
            SIM_OK);
    REQUIRE(res_paired_quantile_diff(x.data(), y.data(), n, 0.95, 200, 3, 1, 4, &d4, &c4) ==
            SIM_OK);
    CHECK(d1 == d2);
    CHECK(d1 == d4);
    CHECK(c1.lo == c2.lo);
    CHECK(c1.hi == c2.hi);
    CHECK(c1.lo == c4.lo);
    CHECK(c1.hi == c4.hi);
    CHECK(c1.lo <= d1);
    CHECK(d1 <= c1.hi);
    CHECK(c1.lo < c1.hi);
    // identical samples: exactly 0 and [0, 0]
    double d0;
    res_interval c0;
    REQUIRE(res_paired_quantile_diff(x.data(), x.data(), n, 0.95, 200, 3, 1, 2, &d0, &c0) ==
            SIM_OK);
    CHECK(d0 == 0);
    CHECK(c0.lo == 0);
    CHECK(c0.hi == 0);
    // no resamples: the interval is the point
    REQUIRE(res_paired_quantile_diff(x.data(), y.data(), n, 0.05, 0, 3, 1, 2, &d0, &c0) ==
            SIM_OK);
    CHECK(c0.lo == d0);
    CHECK(c0.hi == d0);
}
