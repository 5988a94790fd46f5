// Hand-derived deterministic scenarios: fixed values, no randomness that
// matters (no delegate, no cache, no pressure), so the peak, the stage at
// the peak and the death reason follow from the memory semantics of
// docs/scenarios.md by arithmetic, done in each test's comments.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "models/models.h"
#include "results/results.h"
#include "scenarios/scenarios.h"
#include "shim/world.hpp"

namespace {

const int64_t MiB = 1024 * 1024;

struct Loaded : shim::Loaded {
    explicit Loaded(const std::string &yaml) : shim::Loaded(yaml, "hand.yaml") {}
};

// An Android device with room to spare: no cached apps, no pressure.
// available = 4096 - 1024 - app; the foreground level is 100 MiB.
const char *roomy_android = R"(
  - name: roomy
    os: android
    ram: 4GiB
    system: 1GiB
    cached_apps: 0
    cached_app_size: 100MiB
    kill: {rule: lmk, minfree: [{adj: 0, free: 100MiB}, {adj: 900, free: 200MiB}]}
    counts: [native, java, gpu]
    anr_timeout: 5s
)";

std::string part(const std::string &name, const std::string &mode, const std::string &file,
                 const std::string &prepare_resident, const std::string &ws,
                 const std::string &load_extra = "time: 100ms")
{
    return "      " + name + ":\n"
           "        file: " + file + "\n"
           "        load: {mode: " + mode + ", " + load_extra + "}\n"
           "        prepare: {time: 50ms, resident: {native: " + prepare_resident + "}}\n"
           "        inference: {time: 100ms, working_set: {native: " + ws + "}}\n"
           "        session: {native: 1MiB}\n";
}

std::string candidate(const std::string &id, const std::string &parts)
{
    return "  - id: " + id + "\n    digest: 0a1b\n    runtime: test-1\n    parts:\n" + parts;
}

} // namespace

TEST_CASE("copy vs mmap on a device that does not count file pages", "[world]")
{
    // roomy counts native/java/gpu, not file.  One part: a 100 MiB file,
    // prepare resident 10 MiB, no transient.
    //  mmap: load holds 100 MiB of `file` (not counted) -> counted 0;
    //        prepare adds 10 MiB native -> peak 10 MiB at runtime_prepare.
    //  copy: load holds 100 MiB native -> counted 100 MiB (stage load);
    //        prepare adds 10 MiB -> peak 110 MiB at runtime_prepare.
    Loaded l(std::string("name: copy-vs-mmap\nhorizon: 1s\nreplications: 1\ndevices:") +
             roomy_android + "candidates:\n" +
             candidate("m-mmap", part("m", "mmap", "100MiB", "10MiB", "5MiB")) +
             candidate("m-copy", part("m", "copy", "100MiB", "10MiB", "5MiB")) +
             "workload: {path: [cold_start]}\n");
    REQUIRE(l.s.ncells == 2);
    mdl_rep mm = l.run(0), cp = l.run(1);
    CHECK(mm.peak == 10 * MiB);
    CHECK(mm.peak_stage == MDL_STAGE_RUNTIME_PREPARE);
    CHECK(mm.stage_peak[MDL_STAGE_LOAD] == 0); // the mmapped file is not counted
    CHECK(cp.peak == 110 * MiB);
    CHECK(cp.peak_stage == MDL_STAGE_RUNTIME_PREPARE);
    CHECK(cp.stage_peak[MDL_STAGE_LOAD] == 100 * MiB);
    CHECK(mm.deaths_total == 0);
    CHECK(cp.deaths_total == 0);
}

TEST_CASE("two concurrent working sets", "[world]")
{
    // The part is ready at 150 ms (load 100 ms + prepare 50 ms; the mmapped
    // file is not counted, prepare resident 10 MiB).  Two requests arrive at
    // 10 ms and 20 ms and wait for it.  At 150 ms:
    //  sessions 2: both execute: 2 sessions (1 MiB each) + 2 working sets of
    //    50 MiB -> peak 10 + 2 + 100 = 112 MiB, stage inference;
    //  sessions 1: one at a time: 10 + 1 + 50 = 61 MiB.
    Loaded l(std::string("name: two-sets\nhorizon: 2s\nreplications: 1\ndevices:") +
             roomy_android + "candidates:\n" +
             candidate("one", part("m", "mmap", "100MiB", "10MiB", "50MiB")) +
             "workload:\n  path: [cold_start, {requests: {every: 10ms, count: 2}}]\n"
             "policies: {sessions: [1, 2]}\n");
    REQUIRE(l.s.ncells == 2);
    mdl_rep one = l.run(0), two = l.run(1);
    CHECK(one.peak == 61 * MiB);
    CHECK(two.peak == 112 * MiB);
    CHECK(two.peak_stage == MDL_STAGE_INFERENCE);
    CHECK(one.completed == 2);
    CHECK(two.completed == 2);
    // waits: sessions 2: 140 + 130 ms; sessions 1: the second also waits for
    // the first's 100 ms of inference: 140 + 230 ms
    CHECK(two.wait_sum == Approx(270000.0));
    CHECK(one.wait_sum == Approx(370000.0));
}

TEST_CASE("the jetsam limit, in the foreground and in the background", "[world]")
{
    // jetsam counts native and gpu; limit 100 MiB, background 50 MiB.
    // Part: mmap (not counted), prepare resident 60 MiB, ready at 150 ms.
    //  foreground: a request at 200 ms allocates 50 MiB of working set:
    //    60 + 1 (session) + 50 = 111 MiB > 100 -> low_memory at inference; the
    //    allocation is made, so the peak is 111 MiB.
    //  background: the background step starts right after cold_start, while
    //    the part loads; at 100 ms prepare allocates 60 MiB > 50 (the
    //    background limit): low_memory at 100 ms, peak 60 MiB (made, then killed).
    std::string dev = R"(
  - name: phone
    os: ios
    ram: 2GiB
    system: 512MiB
    kill: {rule: jetsam, limit: 100MiB, background_limit: 50MiB}
    counts: [native, gpu]
)";
    Loaded fg(std::string("name: jetsam-fg\nhorizon: 2s\nreplications: 1\ndevices:") + dev +
              "candidates:\n" + candidate("one", part("m", "mmap", "100MiB", "60MiB", "50MiB")) +
              "workload:\n  path: [cold_start, {requests: {every: 200ms, count: 1}}]\n");
    mdl_rep a = fg.run(0);
    CHECK(a.deaths_total == 1);
    CHECK(a.deaths[MDL_EXIT_LOW_MEMORY] == 1);
    CHECK(a.first_death_stage == MDL_STAGE_INFERENCE);
    CHECK(a.first_death_time == 200000);
    CHECK(a.peak == 111 * MiB);
    CHECK(a.lost == 1);

    Loaded bg(std::string("name: jetsam-bg\nhorizon: 3s\nreplications: 1\ndevices:") + dev +
              "candidates:\n" + candidate("one", part("m", "mmap", "100MiB", "60MiB", "50MiB")) +
              "workload:\n  path: [cold_start, {background: 1s}]\n");
    mdl_rep b = bg.run(0);
    CHECK(b.deaths[MDL_EXIT_LOW_MEMORY] == 1);
    CHECK(b.first_death_time == 100000);
    CHECK(b.peak == 60 * MiB);
    CHECK(b.peak_stage == MDL_STAGE_RUNTIME_PREPARE);
}

TEST_CASE("the Java heap limit throws before the allocation", "[world]")
{
    // java_heap_limit 64 MiB.  Each request holds a 40 MiB java payload from
    // arrival; inference takes 100 ms, sessions 1.  Requests at 10 and 20 ms:
    // the first holds 40 MiB of java; the second would make 80 > 64 ->
    // OutOfMemoryError: java_crash at 20 ms and the allocation is not made.
    // The part is ready at 51 ms (load 1 ms + prepare 50 ms), so the first
    // request is still waiting at 20 ms: peak = prepare 10 + payload 40 = 50 MiB.
    std::string dev = R"(
  - name: small-heap
    os: android
    ram: 4GiB
    system: 1GiB
    cached_apps: 0
    cached_app_size: 100MiB
    kill: {rule: lmk, minfree: [{adj: 0, free: 100MiB}]}
    counts: [native, java, gpu]
    java_heap_limit: 64MiB
)";
    Loaded l(std::string("name: heap\nhorizon: 1s\nreplications: 1\ndevices:") + dev +
             "candidates:\n" +
             candidate("one", part("m", "mmap", "1MiB", "10MiB", "5MiB", "time: 1ms")) +
             "workload:\n  path: [cold_start, {requests: {every: 10ms, count: 2, "
             "payload: {java: 40MiB}}}]\n");
    mdl_rep r = l.run(0);
    CHECK(r.deaths_total == 1);
    CHECK(r.deaths[MDL_EXIT_JAVA_CRASH] == 1);
    CHECK(r.first_death_time == 20000);
    CHECK(r.first_death_stage == MDL_STAGE_INFERENCE);
    CHECK(r.peak == 50 * MiB);
    CHECK(r.first_death_counted == 50 * MiB);
}

TEST_CASE("lmk reclaims cached apps before the foreground app", "[world]")
{
    // ram 1000 MiB, system 400, cached apps 300 MiB in 100 MiB apps:
    // available = 300 - app.  Cached apps go while available < 150 (the
    // last level); the app goes when available < 50 (adj 0) with none left.
    //  app 500 MiB: available -200 -> three kills -> 100: >= 50, survives;
    //  app 560 MiB: -260 -> three kills -> 40 < 50: low_memory.
    std::string dev = R"(
  - name: tight
    os: android
    ram: 1000MiB
    system: 400MiB
    cached_apps: 300MiB
    cached_app_size: 100MiB
    kill: {rule: lmk, minfree: [{adj: 0, free: 50MiB}, {adj: 900, free: 150MiB}]}
    counts: [native, java, gpu]
)";
    Loaded l(std::string("name: lmk\nhorizon: 1s\nreplications: 1\ndevices:") + dev +
             "candidates:\n" + candidate("fits", part("m", "mmap", "1MiB", "500MiB", "1MiB")) +
             candidate("too-big", part("m", "mmap", "1MiB", "560MiB", "1MiB")) +
             "workload: {path: [cold_start]}\n");
    mdl_rep fits = l.run(0), big = l.run(1);
    CHECK(fits.deaths_total == 0);
    CHECK(fits.cached_kills == 3);
    CHECK(fits.peak == 500 * MiB);
    CHECK(big.cached_kills == 3);
    CHECK(big.deaths[MDL_EXIT_LOW_MEMORY] == 1);
    CHECK(big.first_death_stage == MDL_STAGE_RUNTIME_PREPARE);
    CHECK(big.peak == 560 * MiB);
}

TEST_CASE("an ANR from a load on the main thread", "[world]")
{
    // anr_timeout 5 s.  A 6 s load on the main thread in the foreground:
    // anr at 0 + 5 s, stage load.  A 4 s load does not trip it.  Without a
    // relaunch the process stays dead: alive 5 s of the 10 s horizon.
    Loaded l(std::string("name: anr\nhorizon: 10s\nreplications: 1\ndevices:") + roomy_android +
             "candidates:\n" +
             candidate("slow", part("m", "mmap", "1MiB", "1MiB", "1MiB",
                                    "time: 6s, thread: main")) +
             candidate("ok", part("m", "mmap", "1MiB", "1MiB", "1MiB", "time: 4s, thread: main")) +
             "workload: {path: [cold_start]}\n");
    mdl_rep slow = l.run(0), ok = l.run(1);
    CHECK(slow.deaths[MDL_EXIT_ANR] == 1);
    CHECK(slow.first_death_time == 5 * 1000000);
    CHECK(slow.first_death_stage == MDL_STAGE_LOAD);
    CHECK(slow.alive_us == 5 * 1000000);
    CHECK(ok.deaths_total == 0);
    CHECK(ok.alive_us == 10 * 1000000);
}

TEST_CASE("a relaunch starts a new process that runs the path on", "[world]")
{
    // The ANR of the test above, with relaunch fixed at 1 s: deaths at 5 s,
    // 11 s (relaunched at 6 s) and 17 s (relaunched at 12 s); relaunched at
    // 18 s, the horizon (20 s) ends it mid-load.  Alive 5 + 5 + 5 + 2 s.
    // Three deaths during start-up in a row: a boot loop.
    Loaded l(std::string("name: loop\nhorizon: 20s\nreplications: 1\ndevices:") + roomy_android +
             "candidates:\n" +
             candidate("slow", part("m", "mmap", "1MiB", "1MiB", "1MiB",
                                    "time: 6s, thread: main")) +
             "workload: {path: [cold_start], relaunch: 1s}\n");
    mdl_rep r = l.run(0);
    CHECK(r.deaths[MDL_EXIT_ANR] == 3);
    CHECK(r.boot_loop == 1);
    CHECK(r.alive_us == 5000000 * 3 + 2000000);
}

TEST_CASE("Poisson arrivals on c sessions reproduce Erlang C", "[world][queue]")
{
    // M/M/2: lambda 3/s, exponential service of mean 500 ms (mu 2/s), an
    // unbounded queue, the part preloaded at once (zero load and prepare
    // times).  20 independent replications of 3400 s (about 10 200 requests
    // each, 204 000 in all).  Each replication's mean wait is one sample;
    // the test allows 4 standard errors of their mean (a false failure
    // below 1e-4 for a normal mean) plus 2 % for the start from an empty
    // queue (relaxation time about 30 s against 3400 s).
    const char *yaml = R"(
name: mmc
horizon: 3400s
replications: 20
seed: 7
devices:
  - {name: big, os: android, ram: 16GiB, system: 1GiB, cached_apps: 0, cached_app_size: 1MiB,
     kill: {rule: lmk, minfree: [{adj: 0, free: 1MiB}]}}
candidates:
  - id: q
    digest: 0a
    runtime: test-1
    parts:
      m:
        file: 1MiB
        load: {mode: mmap, time: 0ms}
        prepare: {time: 0ms}
        inference: {time: {dist: exponential, mean: 500ms}}
workload:
  path: [cold_start, {requests: {rate: "3/s", for: 3400s}}]
policies: {sessions: 2, queue: unbounded}
)";
    Loaded l(yaml);
    res_erlang_c ec;
    REQUIRE(res_erlang_c_compute(3.0, 2.0, 2, &ec) == 0);
    std::vector<double> wq, lq;
    uint64_t requests = 0;
    for (uint64_t k = 0; k < 20; k++) {
        mdl_rep r = l.run(0, k);
        REQUIRE(r.deaths_total == 0);
        requests += r.completed;
        wq.push_back(r.wait_sum / (double)r.completed / 1e6);
        lq.push_back(r.queue_area / (double)r.alive_us);
    }
    REQUIRE(requests >= 200000);
    res_interval ci;
    double mw = res_mean_ci95(wq.data(), wq.size(), &ci);
    double se_w = (ci.hi - ci.lo) / 2 / 2.093; // t(0.975, 19)
    double ml = res_mean_ci95(lq.data(), lq.size(), &ci);
    double se_l = (ci.hi - ci.lo) / 2 / 2.093;
    INFO("Wq " << mw << " (Erlang C " << ec.wq << "), Lq " << ml << " (" << ec.lq << ")");
    CHECK(std::abs(mw - ec.wq) < 4 * se_w + 0.02 * ec.wq);
    CHECK(std::abs(ml - ec.lq) < 4 * se_l + 0.02 * ec.lq);
}

TEST_CASE("results do not depend on the thread count", "[world][run]")
{
    scn_scenario s;
    sim_error err;
    sim_error_clear(&err);
    REQUIRE(scn_scenario_load_catalog(SCN_DEFAULT_SCENARIO, &s, &err) == SIM_OK);
    std::vector<const char *> pj;
    res_plan plan = shim::plan_of(s, 40, pj);
    std::string docs[2];
    for (unsigned t = 1; t <= 2; t++) {
        res_result r;
        REQUIRE(res_run(&plan, t, nullptr, nullptr, &r, &err) == SIM_OK);
        char *j = res_document_json(&plan, &r);
        REQUIRE(j != nullptr);
        docs[t - 1] = j;
        free(j);
        REQUIRE(r.cells[0].leaks == 0);
        res_result_free(&r);
    }
    CHECK(docs[0] == docs[1]);
    CHECK(docs[0].find("\"scenario\": \"capacity-plan\"") != std::string::npos);
    scn_scenario_release(&s);
}

TEST_CASE("an unbounded queue that never drains is refused, not grown without bound",
          "[world][queue]")
{
    // 1000 requests/s against one session of 1 h: the queue gains about
    // 1000 requests a second, so the limit of requests in the system
    // (MDL_REQUESTS_IN_SYSTEM_MAX) is passed after about 100 s.
    const char *yaml = R"(
name: flood
horizon: 1h
replications: 1
devices:
  - {name: big, os: android, ram: 16GiB, system: 1GiB, cached_apps: 0, cached_app_size: 1MiB,
     kill: {rule: lmk, minfree: [{adj: 0, free: 1MiB}]}}
candidates:
  - id: q
    digest: 0a
    runtime: test-1
    parts:
      m:
        file: 1MiB
        load: {mode: mmap, time: 0ms}
        prepare: {time: 0ms}
        inference: {time: 1h}
workload:
  path: [cold_start, {requests: {every: 1ms, for: 1h}}]
)";
    Loaded l(yaml);
    mdl_rep r;
    sim_error err;
    sim_error_clear(&err);
    REQUIRE(mdl_run_replication(&l.s.cells[0], 0, nullptr, nullptr, &r, &err) == SIM_ELIMIT);
    std::string m = err.msg;
    INFO(m);
    CHECK(m.find("more than 100000 requests in the system at once at t=100.") == 0);
    CHECK(m.find("bound policies.queue") != std::string::npos);
}

TEST_CASE("past the values kept, quantiles come from the sketch within its resolution and the "
          "comparisons keep their meaning",
          "[world][run][large]")
{
    // The default plan at 300 replications, once with every value kept and
    // once keeping 100 per cell (res_plan.exact_max), as a run past 65,536
    // replications does.  A sketched quantile interpolates between the
    // order statistics' buckets, each within 2^-11 of its value: it lies
    // between the exact order statistics either side of the rank, widened by
    // that.  Counts and means do not depend on it at all.
    scn_scenario s;
    sim_error err;
    sim_error_clear(&err);
    REQUIRE(scn_scenario_load_catalog(SCN_DEFAULT_SCENARIO, &s, &err) == SIM_OK);
    std::vector<const char *> pj;
    const uint64_t reps = 300;
    res_plan plan = shim::plan_of(s, reps, pj);
    res_result exact, sketched;
    REQUIRE(res_run(&plan, 2, nullptr, nullptr, &exact, &err) == SIM_OK);
    plan.exact_max = 100;
    REQUIRE(res_run(&plan, 2, nullptr, nullptr, &sketched, &err) == SIM_OK);
    const double rel = 1.0 / 2048;
    // the exact order statistics of the peaks, re-derived from a run that
    // keeps them: the exact p-quantile brackets
    for (unsigned ci = 0; ci < exact.ncells; ci++) {
        const res_cell &e = exact.cells[ci], &k = sketched.cells[ci];
        INFO("cell " << ci);
        CHECK(e.with_death == k.with_death);
        CHECK(e.completed == k.completed);
        CHECK(e.peak.max == k.peak.max);
        CHECK(std::fabs(e.peak.mean - k.peak.mean) <= 1e-9 * e.peak.mean);
        // p50, p95, p99 and the CDF: within the spread of the order statistics
        // around the rank (the exact CDF's neighbours) and the bucket width
        for (int q = 1; q < RES_CDF_POINTS - 1; q++) {
            double lo = std::min(e.peak_cdf[q - 1], e.peak_cdf[q]) * (1 - rel);
            double hi = std::max(e.peak_cdf[q + 1], e.peak_cdf[q]) * (1 + rel);
            CHECK(k.peak_cdf[q] >= lo);
            CHECK(k.peak_cdf[q] <= hi);
        }
        CHECK(std::fabs(k.peak.p95 - e.peak.p95) <= (e.peak_cdf[96] - e.peak_cdf[94]) +
                                                         rel * e.peak.p95);
        CHECK(k.has_margin == e.has_margin);
        if (e.has_margin)
            CHECK(std::fabs(k.margin_p50 - e.margin_p50) <=
                  std::fabs(e.margin_p50) * 0.05 + 1024 * 1024);
    }
    REQUIRE(exact.ncmp == sketched.ncmp);
    for (unsigned m = 0; m < exact.ncmp; m++) {
        const res_comparison &e = exact.cmp[m], &k = sketched.cmp[m];
        INFO("comparison " << m << " metric " << res_metric_name(e.metric));
        // the estimate is the difference of the two cells' figures
        if (e.metric == RES_CMP_PEAK_P95)
            CHECK(k.diff == sketched.cells[k.cell].peak.p95 - sketched.cells[k.baseline].peak.p95);
        if (e.metric == RES_CMP_ANY_RATE || e.metric == RES_CMP_AVAILABILITY)
            CHECK(std::fabs(k.diff - e.diff) <= 1e-12);
        if (e.metric == RES_CMP_LATENCY_P95) {
            CHECK(k.diff == e.diff); // the pooled histograms, whatever is kept
            CHECK(k.ci.lo == e.ci.lo);
            CHECK(k.ci.hi == e.ci.hi);
        }
        CHECK(k.ci.lo <= k.diff);
        CHECK(k.diff <= k.ci.hi);
        if (e.metric != RES_CMP_LATENCY_P95)
            CHECK(k.pairs == reps);
    }
    res_result_free(&exact);
    res_result_free(&sketched);
    scn_scenario_release(&s);
}
