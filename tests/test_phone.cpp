// The app and the phone as they really are: the app's own memory (its
// baseline, its pages' holds), device speed and delegates, background life
// (the successor app, previous_ttl), and iOS as it kills (page shortage,
// warnings as a share of the limit, the entitlement, no GPU in the
// background, JetsamEvent records).  Every figure is derived in a comment;
// every scenario is deterministic (fixed times and sizes).
#include <catch2/catch.hpp>

#include <string>

#include "scenarios/scenarios.h"
#include "shim/world.hpp"

namespace {

const int64_t MiB = 1024 * 1024;
const sim_time SECOND = 1000000;

using shim::Loaded;

std::string head(const char *name, const char *horizon = "60s")
{
    return std::string("name: ") + name + "\nhorizon: " + horizon + "\nreplications: 1\n";
}

// An iPhone with a 1000 MiB foreground and 500 MiB background jetsam limit.
std::string iphone(const std::string &extra = "")
{
    return R"(
devices:
  - name: phone
    os: ios
    ram: 4GiB
    system: 1GiB
    kill: {rule: jetsam, limit: 1000MiB, background_limit: 500MiB}
)" + extra;
}

// One part whose file (copied into native) is `file`, ready 100 ms after
// a cold start; inference 100 ms with a working set of `ws`.
std::string model(const char *file, const char *ws = "0MiB")
{
    return std::string(R"(
candidates:
  - id: m
    digest: 0a1b
    runtime: test-1
    parts:
      m:
        file: )") + file + R"(
        load: {mode: copy, time: 50ms}
        prepare: {time: 50ms}
        inference: {time: 100ms, working_set: {native: )" + ws + R"(}}
)";
}

// A must-fail load: REQUIREs the error and that it names `what`.
void refused(const std::string &yaml, const char *what)
{
    scn_scenario s{};
    sim_error err;
    sim_error_clear(&err);
    int rc = scn_scenario_parse(yaml.data(), yaml.size(), "t.yaml", &s, &err);
    INFO(yaml);
    REQUIRE(rc != SIM_OK);
    CHECK(std::string(err.msg).find(what) != std::string::npos);
    INFO(err.msg);
}

} // namespace

TEST_CASE("the app's baseline counts like model memory", "[phone][app]")
{
    // baseline 300 MiB (native) at the cold start, then the model's 650 MiB
    // copy: 950 MiB, under the 1000 MiB limit, peak at the load.
    Loaded ok(head("baseline") + iphone() + model("650MiB") +
              "app: {baseline: {native: 300MiB}}\nworkload: {path: [cold_start]}\n");
    mdl_rep r = ok.run(0);
    CHECK(r.deaths_total == 0);
    CHECK(r.peak == 950 * MiB);
    CHECK(r.peak_stage == MDL_STAGE_LOAD);
    CHECK(r.stage_peak[MDL_STAGE_APP_START] == 300 * MiB);
    // baseline 400 MiB: 400 + 650 = 1050 MiB at the model's allocation:
    // over the limit, in the foreground, at stage load
    Loaded over(head("baseline") + iphone() + model("650MiB") +
                "app: {baseline: {native: 400MiB}}\nworkload: {path: [cold_start]}\n");
    mdl_rep d = over.run(0);
    CHECK(d.deaths_total == 1);
    CHECK(d.deaths[MDL_EXIT_LOW_MEMORY] == 1);
    CHECK(d.first_death_stage == MDL_STAGE_LOAD);
    CHECK(d.first_death_foreground == 1);
    CHECK(d.first_death_counted == 1050 * MiB);
    // a baseline alone over the limit dies at app_start, before model work
    Loaded alone(head("baseline") + iphone() + model("10MiB") +
                 "app: {baseline: {native: 1001MiB}}\nworkload: {path: [cold_start]}\n");
    mdl_rep a = alone.run(0);
    CHECK(a.deaths_total == 1);
    CHECK(a.first_death_stage == MDL_STAGE_APP_START);
    CHECK(a.peak_stage == MDL_STAGE_APP_START);
}

TEST_CASE("a page's hold raises the peak by its size while on the page only", "[phone][app]")
{
    // model 100 MiB; each request holds a 200 MiB working set.  On the
    // camera page (48 MiB gpu) a request makes 100 + 48 + 200 = 348 MiB.
    // After the leave, a request with a 40 MiB payload makes 100 + 200 + 40
    // = 340 MiB; were the hold still there it would be 388 MiB.
    auto plan = [](const char *leave) {
        return head("page") + iphone() + model("100MiB", "200MiB") +
               "workload:\n  path: [cold_start, {enter: {page: camera, holds: {gpu: 48MiB}}},\n"
               "    {requests: {every: 1s, count: 1}}" +
               leave + ",\n    {requests: {every: 1s, count: 1, payload: {native: 40MiB}}}]\n";
    };
    Loaded l(plan(", {leave: camera}"));
    mdl_rep r = l.run(0);
    CHECK(r.completed == 2);
    CHECK(r.peak == 348 * MiB);
    CHECK(r.stage_peak[MDL_STAGE_PAGE] == 148 * MiB); // 100 + 48 at the enter
    Loaded stays(plan(""));
    CHECK(stays.run(0).peak == 388 * MiB); // the control: no leave, the hold stays
    // the string form still enters a page that holds nothing
    Loaded plain(head("page") + iphone() + model("100MiB", "200MiB") +
                 "workload: {path: [cold_start, {enter: camera}, "
                 "{requests: {every: 1s, count: 1}}, {leave: camera}]}\n");
    CHECK(plain.run(0).peak == 300 * MiB);
}

TEST_CASE("device speed divides drawn times where they run", "[phone][speed]")
{
    // a 3 s main-thread load: at speed.cpu 1 it ends before the 5 s ANR
    // timeout; at speed.cpu 0.5 it takes 6 s, and the app dies of an ANR
    // at 5 s.
    auto plan = [](const char *speed) {
        return head("speed") + std::string(R"(
devices:
  - name: droid
    os: android
    ram: 8GiB
    system: 1GiB
    kill: {rule: lmk, minfree: [{adj: 0, free: 100MiB}]}
    anr_timeout: 5s
)") + speed + R"(
candidates:
  - id: m
    digest: 0a1b
    runtime: test-1
    parts:
      m:
        file: 10MiB
        load: {mode: copy, time: 3s, thread: main}
        prepare: {time: 1s}
        inference: {time: 100ms}
workload: {path: [cold_start]}
)";
    };
    Loaded fast(plan(""));
    CHECK(fast.run(0).deaths_total == 0);
    Loaded slow(plan("    speed: {cpu: 0.5}\n"));
    mdl_rep r = slow.run(0);
    CHECK(r.deaths[MDL_EXIT_ANR] == 1);
    CHECK(r.first_death_time == 5 * SECOND);
    CHECK(r.first_death_stage == MDL_STAGE_LOAD);
}

TEST_CASE("speed.gpu divides the delegate's times, speed.cpu the rest", "[phone][speed]")
{
    // load 1 s + prepare 1 s on the CPU, delegate_prepare 2 s and
    // inference 1 s on the GPU.  cpu 2, gpu 4: ready at 0.5 + 0.5 + 0.5 =
    // 1.5 s; a request at 2 s runs 0.25 s: latency 250 ms.
    Loaded l(head("gpu-speed") + iphone("    speed: {cpu: 2, gpu: 4}\n") + R"(
candidates:
  - id: m
    digest: 0a1b
    runtime: test-1
    delegate: gpu
    fallback: cpu
    parts:
      m:
        file: 10MiB
        load: {mode: copy, time: 1s}
        prepare: {time: 1s}
        delegate_prepare: {time: 2s}
        inference: {time: 1s}
workload: {path: [cold_start, {requests: {every: 2s, count: 1}}]}
)");
    mdl_rep r = l.run(0);
    REQUIRE(r.completed == 1);
    CHECK(r.latency_sum == Approx(250000.0));
}

namespace {

// A GPU candidate: prepare 100 MiB native resident, delegate_prepare 300 MiB
// gpu resident, CPU fallback; a 10 MiB file.
const char *gpu_model = R"(
candidates:
  - id: g
    digest: 0a1c
    runtime: test-1
    delegate: gpu
    fallback: cpu
    parts:
      m:
        file: 10MiB
        load: {mode: copy, time: 100ms}
        prepare: {time: 100ms, resident: {native: 100MiB}}
        delegate_prepare: {time: 1s, resident: {gpu: 300MiB}}
        inference: {time: 10s}
)";

} // namespace

TEST_CASE("a device without the delegate: no delegate memory, one fallback per start",
          "[phone][delegates]")
{
    // available: 10 + 100 + 300 MiB = 410 MiB at the peak, no failure.
    // unavailable: delegate_prepare fails at once with nothing held; the
    // fallback's prepare holds another 100 MiB: 10 + 100 + 100 = 210 MiB.
    const char *path = "workload: {path: [cold_start]}\n";
    Loaded has(head("delegate") + iphone() + gpu_model + path);
    mdl_rep a = has.run(0);
    CHECK(a.peak == 410 * MiB);
    CHECK(a.delegate_failures == 0);
    Loaded none(head("delegate") + iphone("    delegates: {gpu: {available: false}}\n") +
                gpu_model + path);
    mdl_rep n = none.run(0);
    CHECK(n.peak == 210 * MiB);
    CHECK(n.stage_peak[MDL_STAGE_DELEGATE_PREPARE] == -1); // nothing allocated there
    CHECK(n.delegate_failures == 1);
    CHECK(n.deaths_total == 0);
    // the device's failure rate overrides the candidate's: fail 1 fails
    // after the prepare's 1 s (its memory held until then)
    Loaded fails(head("delegate") + iphone("    delegates: {gpu: {fail: 1}}\n") + gpu_model +
                 path);
    mdl_rep f = fails.run(0);
    CHECK(f.delegate_failures == 1);
    CHECK(f.stage_peak[MDL_STAGE_DELEGATE_PREPARE] == 410 * MiB);
    // crash 1: the delegate crashes the process at every start
    Loaded crashes(head("delegate") + iphone("    delegates: {gpu: {crash: 100%}}\n") +
                   gpu_model + path);
    CHECK(crashes.run(0).deaths[MDL_EXIT_NATIVE_CRASH] == 1);
    // a device entry for another delegate kind changes nothing here
    Loaded other(head("delegate") + iphone("    delegates: {nnapi: {available: false}}\n") +
                 gpu_model + path);
    CHECK(other.run(0).peak == 410 * MiB);
}

TEST_CASE("iOS warns at a share of the limit in force", "[phone][ios]")
{
    // warning_at 20% of the 1000 MiB foreground limit: headroom below
    // 200 MiB, so counted above 800 MiB.  Exactly 800 MiB does not warn;
    // 801 MiB does.
    for (int extra : {0, 1}) {
        std::string ws = std::to_string(700 + extra) + "MiB";
        Loaded l(head("warn") + iphone("    warning_at: 20%\n") + model("100MiB", ws.c_str()) +
                 "workload: {path: [cold_start, {requests: {every: 1s, count: 1}}]}\n");
        mdl_rep r = l.run(0);
        CHECK(r.peak == (800 + extra) * MiB);
        CHECK(r.warnings == (uint64_t)extra);
    }
}

TEST_CASE("background_gpu deny: GPU work in flight fails when the app leaves",
          "[phone][ios]")
{
    // ready on the GPU at 1.2 s; the request arrives at 2 s and runs 10 s on
    // the delegate; the app goes to the background at that instant.  Deny:
    // it fails then, its memory released; allow: it completes in the
    // background.
    // the GPU candidate on an iPhone with background_gpu set to `gpu`, on `path`
    auto run = [](const char *gpu, const char *path) {
        Loaded l(head("deny") + iphone(std::string("    background_gpu: ") + gpu + "\n") +
                 gpu_model + "workload: {path: [" + path + "]}\n");
        return l.run(0);
    };
    const char *leaves = "cold_start, {requests: {every: 2s, count: 1}}, {background: 30s}";
    mdl_rep d = run("deny", leaves);
    CHECK(d.completed == 0);
    CHECK(d.failed == 1);
    CHECK(d.deaths_total == 0);
    mdl_rep a = run("allow", leaves);
    CHECK(a.completed == 1);
    CHECK(a.failed == 0);
    // requests at 2 s and 4 s; one session: the second waits in the queue
    // behind the first.  The step (count 2 x every 2 s) ends at 4 s, after
    // the arrival at that instant, and the app leaves: the first fails in
    // flight, and the second, started in the background on the delegate,
    // fails at its start.
    mdl_rep b = run("deny", "cold_start, {requests: {every: 2s, count: 2}}, {background: 30s}");
    CHECK(b.failed == 2);
    CHECK(b.completed == 0);
    // a delegate_prepare that would start in the background (at 0.2 s) fails
    // at once, and the CPU fallback runs: 10 + 100 + 100 MiB, no GPU memory;
    // back in front at 30 s, a request runs on the CPU (10 s) and completes
    mdl_rep p = run("deny", "cold_start, {background: 30s}, {requests: {every: 1s, count: 1}}");
    CHECK(p.delegate_failures == 1);
    CHECK(p.peak == 210 * MiB);
    CHECK(p.completed == 1);
    CHECK(p.failed == 0);
}

TEST_CASE("previous_ttl: the app drops to adj 900 and its level applies", "[phone][android]")
{
    // ram 4 GiB - system 1 GiB = 3072 MiB; the app holds 2000 MiB, so
    // 1072 MiB are free.  adj 700's level (500 MiB) spares it; adj 900's
    // (1200 MiB) does not.  In the background from t = 0, it dies of
    // system_reclaim at exactly 0 + previous_ttl = 60 s.
    auto run = [](const char *ttl, const char *path) {
        Loaded l(head("ttl", "300s") + std::string(R"(
devices:
  - name: droid
    os: android
    ram: 4GiB
    system: 1GiB
    kill:
      rule: lmk
      minfree: [{adj: 0, free: 100MiB}, {adj: 700, free: 500MiB}, {adj: 900, free: 1200MiB}]
)") + ttl + model("2000MiB") + "workload: {path: [" + path + "]}\n");
        return l.run(0);
    };
    const char *away = "cold_start, {background: 200s}";
    CHECK(run("", away).deaths_total == 0);
    mdl_rep a = run("    previous_ttl: 60s\n", away);
    CHECK(a.deaths_total == 1);
    CHECK(a.deaths[MDL_EXIT_SYSTEM_RECLAIM] == 1);
    CHECK(a.first_death_time == 60 * SECOND);
    CHECK(a.first_death_foreground == 0);
    // back in front before the ttl: adj 0 again, and no late kill
    CHECK(run("    previous_ttl: 60s\n",
              "cold_start, {background: 30s}, {requests: {every: 100s, count: 1}}")
              .deaths_total == 0);
}

TEST_CASE("the successor app lowers available memory on Android, cached apps first",
          "[phone][android]")
{
    // 3072 MiB for apps; 600 MiB cached (200 MiB each); the app holds
    // 1500 MiB.  In the background (adj 700, level 500 MiB) the successor
    // takes 800 MiB: free = 3072 - 600 - 800 - 1500 = 172 MiB, under the
    // last level (500 MiB): the cached apps go one at a time, 172 -> 372 ->
    // 572 MiB after two kills; 572 >= 500: the app lives.  Back in front the
    // successor is gone: a request's 1200 MiB makes free 3072 - 200 - 2700 =
    // 172 MiB, the last cached app goes (372 MiB), over the foreground's
    // 100 MiB: it completes (with the successor still held it would die).
    // A 1100 MiB successor: free -128 -> 472 after all three cached apps;
    // still under 500: it dies in the background.
    auto plan = [](const char *size) {
        return head("successor") + std::string(R"(
devices:
  - name: droid
    os: android
    ram: 4GiB
    system: 1GiB
    cached_apps: 600MiB
    cached_app_size: 200MiB
    kill: {rule: lmk, minfree: [{adj: 0, free: 100MiB}, {adj: 700, free: 500MiB}]}
    successor: {size: )") + size + "}\n" + model("1500MiB", "1200MiB") +
               "workload: {path: [cold_start, {background: 30s}, "
               "{requests: {every: 1s, count: 1}}]}\n";
    };
    Loaded lives(plan("800MiB"));
    mdl_rep l = lives.run(0);
    CHECK(l.deaths_total == 0);
    CHECK(l.cached_kills == 3);
    CHECK(l.completed == 1);
    Loaded dies(plan("1100MiB"));
    mdl_rep d = dies.run(0);
    CHECK(d.cached_kills == 3);
    CHECK(d.deaths[MDL_EXIT_SYSTEM_RECLAIM] == 1);
}

TEST_CASE("iOS page shortage kills or spares a background app at its threshold",
          "[phone][ios]")
{
    // ram 4000 MiB, system 1000 MiB, pageshortage 10% = 400 MiB, successor
    // 2000 MiB: free = 3000 - 2000 - counted.  600 MiB counted leaves
    // exactly 400 MiB: spared; 601 MiB leaves 399 MiB: the idle band's
    // kill (system_reclaim), under the 1000 MiB background limit; XNU names
    // it idle-exit.
    for (int extra : {0, 1}) {
        std::string file = std::to_string(600 + extra) + "MiB";
        Loaded l(head("shortage") + R"(
devices:
  - name: phone
    os: ios
    ram: 4000MiB
    system: 1000MiB
    kill: {rule: jetsam, limit: 2000MiB, background_limit: 1000MiB}
    pageshortage: 10%
    successor: {size: 2000MiB}
)" + model(file.c_str()) + "workload: {path: [cold_start, {background: 30s}]}\n");
        mdl_rep r = l.run(0);
        INFO(file);
        CHECK(r.deaths_total == (uint32_t)extra);
        if (extra) {
            CHECK(r.deaths[MDL_EXIT_SYSTEM_RECLAIM] == 1);
            REQUIRE(r.nrecords == 1);
            CHECK(r.records[0].kind == MDL_REC_METRICKIT); // band 0: no JetsamEvent
            CHECK(r.records[0].jetsam == MDL_JETSAM_IDLE_EXIT);
            CHECK(r.records[0].importance == 400);
            CHECK(r.min_margin == -1 * MiB);
        } else {
            CHECK(r.min_margin == 0);
        }
        // the table's background line: min(1000, 4000 - 1000 - 400) MiB
        CHECK(mdl_kill_line(l.s.cells[0].device, 0) == 1000 * MiB);
    }
}

TEST_CASE("the entitlement axis: one start dies under the limit, survives entitled",
          "[phone][ios]")
{
    // a 2200 MiB start: over the 2098 MiB limit without the entitlement,
    // under the 2400 MiB entitled limit with it.  One grid, two cells that
    // differ only in the policy: a paired comparison.
    Loaded l(head("entitled") + R"(
devices:
  - name: phone
    os: ios
    ram: 6GiB
    system: 1GiB
    kill: {rule: jetsam, limit: 2098MiB, background_limit: 600MiB}
    entitled_limit: 2400MiB
)" + model("2200MiB") + "workload: {path: [cold_start]}\n"
                       "policies: {entitlement: [none, increased_memory_limit]}\n");
    REQUIRE(l.s.ncells == 2);
    mdl_rep none = l.run(0), entitled = l.run(1);
    CHECK(none.deaths[MDL_EXIT_LOW_MEMORY] == 1);
    CHECK(entitled.deaths_total == 0);
    CHECK(none.peak == entitled.peak); // the same draws
    CHECK(mdl_cell_kill_line(&l.s.cells[0], 1) == 2098 * MiB);
    CHECK(mdl_cell_kill_line(&l.s.cells[1], 1) == 2400 * MiB);
}

TEST_CASE("the entitlement raises the background limit too: an entitled app lives backgrounded",
          "[phone][ios]")
{
    // XNU applies the entitled limit to the active and the inactive limit
    // alike.  A 2200 MiB start, then 30 s in the background: the background
    // limit of 600 MiB kills it unentitled (at the move to the background),
    // and the entitled 2400 MiB holds in front and behind alike.
    Loaded l(head("entitled-bg") + R"(
devices:
  - name: phone
    os: ios
    ram: 6GiB
    system: 1GiB
    kill: {rule: jetsam, limit: 2300MiB, background_limit: 600MiB}
    entitled_limit: 2400MiB
)" + model("2200MiB") + "workload: {path: [cold_start, {background: 30s}]}\n"
                       "policies: {entitlement: [none, increased_memory_limit]}\n");
    REQUIRE(l.s.ncells == 2);
    mdl_rep none = l.run(0), entitled = l.run(1);
    CHECK(none.deaths[MDL_EXIT_LOW_MEMORY] == 1);
    CHECK(entitled.deaths_total == 0);
    mdl_device d;
    mdl_device_in_force(l.s.cells[1].device, &l.s.cells[1].policy, &d);
    CHECK(d.jetsam_limit == 2400 * MiB);
    CHECK(d.jetsam_background_limit == 2400 * MiB);
    mdl_device_in_force(l.s.cells[0].device, &l.s.cells[0].policy, &d);
    CHECK(d.jetsam_background_limit == 600 * MiB);
}

TEST_CASE("the new keys are checked where they are written", "[phone][loader]")
{
    std::string base = head("bad");
    std::string m = model("10MiB") + "workload: {path: [cold_start]}\n";
    refused(base + iphone("    previous_ttl: 60s\n") + m, "android devices only");
    const std::string droid = R"(
devices:
  - name: droid
    os: android
    ram: 4GiB
    system: 1GiB
    kill: {rule: lmk, minfree: [{adj: 0, free: 100MiB}]}
)";
    refused(base + droid + "    pageshortage: 5%\n" + m, "ios devices only");
    refused(base + droid + "    warning_at: 20%\n" + m, "a percentage needs a jetsam limit");
    refused(base + iphone("    pageshortage: 0.05\n") + m, "expected a percentage");
    refused(base + iphone("    speed: {cpu: 0}\n") + m, "out of range [0.01, 100]");
    refused(base + iphone("    speed: {npu: 2}\n") + m, "npu");
    refused(base + iphone("    delegates: {gpu: {fail: 0.6, crash: 0.6}}\n") + m,
            "fail + crash exceed 1");
    refused(base + iphone("    delegates: {gpu: {available: maybe}}\n") + m, "maybe");
    refused(base + iphone("    entitled_limit: 900MiB\n") + m,
            "must not be below the foreground limit");
    refused(base + iphone("    background_gpu: sometimes\n") + m, "sometimes");
    refused(base + iphone() + m + "policies: {entitlement: increased_memory_limit}\n",
            "no device of the scenario gives an entitled_limit");
    refused(base + iphone() + model("10MiB") + "app: {baseline: {}}\n" +
                "workload: {path: [cold_start]}\n",
            "expected at least one of java");
    refused(base + iphone() + model("10MiB") +
                "workload: {path: [cold_start, {enter: {page: cam, holds: {vram: 1MiB}}}]}\n",
            "vram");
    refused(base + iphone() + model("10MiB") +
                "workload: {path: [cold_start, {enter: {holds: {gpu: 1MiB}}}]}\n",
            "page");
}
