// Processes (docs/model.md "Processes", models/service.c): the model in a
// service process of its own, bound by the app's main process.  Every
// figure below is derived in the comments from the scenario's fixed times
// and sizes; the world checker runs after every event in the sanitizer
// build (each process's memory balances, a service lives only with its
// client, a dead one holds and runs nothing).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "models/models.h"
#include "models/world_int.h"
#include "scenarios/scenarios.h"
#include "shim/shim.hpp"
#include "shim/world.hpp"

using shim::Loaded;
using shim::source_path;

namespace {

const int64_t MiB = 1024 * 1024;
const sim_time S = 1000000;

// What the timeline says of the processes: each exit (time, process,
// importance, class) and the notes of the service (time, note).
struct Exit {
    sim_time t;
    std::string process;
    int importance;
    trc_exit_reason reason;
    std::string log;
};
struct Timeline {
    std::vector<Exit> exits;
    std::vector<std::pair<sim_time, std::string>> notes;
    static int add(void *ctx, const trc_event *e, sim_error *)
    {
        auto *x = static_cast<Timeline *>(ctx);
        if ((e->has & TRC_F_KIND) && e->kind == TRC_EXIT_EVENT)
            x->exits.push_back({e->time_us, (e->has & TRC_F_PROCESS) ? e->process : "",
                                (int)e->exit.importance, e->exit_reason,
                                (e->has & TRC_F_LOG) ? e->log : ""});
        else if (e->has & TRC_F_ERROR)
            x->notes.push_back({e->time_us, e->error});
        return SIM_OK;
    }
    std::vector<sim_time> when(const std::string &note) const
    {
        std::vector<sim_time> v;
        for (const auto &n : notes)
            if (n.second == note)
                v.push_back(n.first);
        return v;
    }
};

// The teaching scenario: the app (120 MiB) binds com.example.app:ml, which holds
// 40 MiB of its own, the 600 MiB detector and the camera's 20 MiB session
// (780 MiB counted in all); minfree 72 MiB at adj 0, 90 at 100, 126 at
// 250 (which adj 700 uses); 2048 - 900 MiB of system; a 290 MiB spike
// every 40 s; requests every 1 s for 150 s from 1 s; restart 1 s.
std::string teach()
{
    return shim::read_file(source_path("scenarios/catalog/teach/remote-inference-service.yaml"));
}

std::string replace(std::string s, const std::string &from, const std::string &to)
{
    size_t at = s.find(from);
    REQUIRE(at != std::string::npos);
    return s.replace(at, from.size(), to);
}

} // namespace

TEST_CASE("processes: the service dies under pressure, the app lives, requests fail until the "
          "rebind, and each quick death doubles the wait twice",
          "[processes][about:remote-inference-service]")
{
    Loaded l(teach());
    Timeline t;
    mdl_rep r = shim::run_traced(l.s.cells[0], Timeline::add, &t);
    // each spike at 40, 80, 120 s leaves 2048 - 900 - 780 - 290 = 78 MiB
    // free: under the service's 90 MiB (adj 100, bound by the app in
    // front), over the app's 72 (adj 0): the service dies, the app lives.
    // At 160 s the camera has left (150 s; its last request ends at 150.2):
    // its 20 MiB session is closed, the detector stays (the default
    // residency keeps a loaded part): 2048 - 900 - 760 - 290 = 98, no death.
    REQUIRE(t.exits.size() == 3);
    for (size_t k = 0; k < 3; k++) {
        CHECK(t.exits[k].t == (sim_time)(40 * (k + 1)) * S);
        CHECK(t.exits[k].process == "com.example.app:ml");
        CHECK(t.exits[k].importance == 100); // BOUND_TOP: the foreground's importance
        CHECK(t.exits[k].reason == TRC_LOW_MEMORY);
    }
    CHECK(r.deaths_total == 3);
    CHECK(r.svc_deaths == 3);
    CHECK(r.alive_us == 180 * S); // the app's main process never died
    // restarts: 1 s after 40 s (the first); 80 s is 39 s after the restart
    // at 41 (under 60 s): 4 s; 120 s is 36 s after 84: 16 s
    CHECK(t.when("service_restart") == std::vector<sim_time>{41 * S, 84 * S, 136 * S});
    CHECK(r.svc_alive_us == (180 - 1 - 4 - 16) * S);
    // failed: the request in flight at each death (39, 79, 119) and every
    // arrival before the rebind (an arrival at the rebind's instant comes
    // first): 41; 81..84; 121..136: 3 + 1 + 4 + 16 = 24
    CHECK(r.svc_failed == 24);
    CHECK(t.when("service_died").size() == 24);
    CHECK(r.failed == 24);
    CHECK(r.lost == 0);
    CHECK(r.arrived == 150);
    CHECK(r.completed == 126);
}

TEST_CASE("processes: a service that lived 60 s since its restart starts the backoff over",
          "[processes]")
{
    // spikes every 100 s: the service dies at 100 s and restarts 1 s later;
    // at 200 s it has lived 99 s since that restart, past
    // SERVICE_RESET_RUN_DURATION (60 s): the delay starts over at 1 s (the
    // camera's requests run to 230 s, so its session is open at each spike)
    Loaded l(replace(replace(replace(teach(), "pressure: 40s", "pressure: 100s"),
                             "horizon: 3min", "horizon: 4min"),
                     "for: 150s", "for: 230s"));
    Timeline t;
    shim::run_traced(l.s.cells[0], Timeline::add, &t);
    REQUIRE(t.exits.size() >= 2);
    CHECK(t.exits[0].t == 100 * S);
    CHECK(t.exits[1].t == 200 * S);
    CHECK(t.when("service_restart") == std::vector<sim_time>{101 * S, 201 * S});
}

TEST_CASE("processes: an important binding gives the service the app's adj, and the spikes "
          "kill nothing",
          "[processes]")
{
    // BIND_IMPORTANT: adj 0 and its 72 MiB level; 78 MiB free stays over it
    Loaded l(replace(teach(), "restart: 1s}", "restart: 1s, important: true}"));
    mdl_rep r = l.run(0);
    CHECK(r.deaths_total == 0);
    CHECK(r.completed == 150);
    SECTION("a spike that leaves 70 MiB takes the heavier process at adj 0: the service")
    {
        // 2048 - 900 - 780 - 298 = 70 MiB: under 72; both at adj 0, at or
        // under PERCEPTIBLE_APP_ADJ lmkd takes the heaviest: the service
        // (660 MiB) before the app (120 MiB)
        Loaded m(replace(replace(teach(), "restart: 1s}", "restart: 1s, important: true}"),
                         "pressure_size: 290MiB", "pressure_size: 298MiB"));
        Timeline t;
        mdl_rep q = shim::run_traced(m.s.cells[0], Timeline::add, &t);
        REQUIRE(!t.exits.empty());
        CHECK(t.exits[0].process == "com.example.app:ml");
        CHECK(q.deaths_total == q.svc_deaths);
    }
}

TEST_CASE("processes: a binding that waives priority leaves the service cached", "[processes]")
{
    // a 270 MiB spike leaves 98 MiB (118 at 160 s, the camera's session
    // closed): over the bound service's 90 MiB, under the 144 MiB of adj
    // 900, where BIND_WAIVE_PRIORITY leaves it: the service dies at 40, 80,
    // 120 and 160 s
    std::string y = replace(teach(), "pressure_size: 290MiB", "pressure_size: 270MiB");
    Loaded bound(y);
    CHECK(bound.run(0).deaths_total == 0);
    Loaded waived(replace(y, "restart: 1s}", "restart: 1s, waive_priority: true}"));
    mdl_rep r = waived.run(0);
    CHECK(r.svc_deaths == 4);
    CHECK(r.deaths_total == 4);
    // a cached process's reclaim: system_reclaim, the app in front or not
    CHECK(r.deaths[MDL_EXIT_SYSTEM_RECLAIM] == 4);
}

TEST_CASE("processes: the main process's death takes the service, and both start again at the "
          "relaunch",
          "[processes]")
{
    // the user goes to the background at 30 s: the app at adj 700, its
    // service too (a client at or over PERCEPTIBLE_APP_ADJ lends its own
    // adj).  The spike at 40 s leaves 78 MiB, under 126 (adj 700 uses adj
    // 250's level): at one adj over 200 lmkd takes the process whose adj
    // it heard first, the client: the app dies, and its binding with it
    // takes the service (no record of its own).  The user is back at 90 s:
    // both start; at 120 s, in front, the spike kills the service alone; at
    // 160 s the camera has left (150 s): 2048 - 900 - 760 - 290 = 98 MiB
    // over the service's 90, no death.
    std::string y = replace(teach(), "    - {requests: {every: 1s, for: 150s, owner: camera}}\n",
                            "    - {requests: {every: 1s, for: 30s, owner: camera}}\n"
                            "    - background: 60s\n"
                            "    - {requests: {every: 1s, for: 60s, owner: camera}}\n");
    Loaded l(y);
    Timeline t;
    mdl_rep r = shim::run_traced(l.s.cells[0], Timeline::add, &t);
    REQUIRE(t.exits.size() >= 2);
    CHECK(t.exits[0].t == 40 * S);
    CHECK(t.exits[0].process == "com.example.app");
    CHECK(t.exits[0].reason == TRC_SYSTEM_RECLAIM);
    CHECK(t.exits[0].importance == 400);
    CHECK(t.when("service_unbound") == std::vector<sim_time>{40 * S});
    CHECK(t.exits[1].t == 120 * S);
    CHECK(t.exits[1].process == "com.example.app:ml");
    CHECK(t.exits.size() == 2);
    CHECK(r.svc_deaths == 1);
    CHECK(r.deaths_total == 2);
    // the app: alive 0-40 and 90-180
    CHECK(r.alive_us == (40 + 90) * S);
    // explain tells the death at 120 s in front: the user reopened the app
    // there (no `foreground` note: the app was dead when the user came back)
    shim::TempDir dir;
    auto ex = shim::oomsim({"explain", dir.write("bg.yaml", y)});
    REQUIRE(ex.status == 0);
    CHECK(ex.out.find("the 1058 MiB lmk line of the service bound by the app in front (adj 100)") !=
          std::string::npos);
}

TEST_CASE("processes: lmkd's PSI mode kills the service at adj 100 and logs its name",
          "[processes][psi]")
{
    // the 3 GB phone of the catalog runs lmkd in PSI mode; a 1600 MiB model
    // in the service leaves no room: lmkd kills down the adjs and reaches
    // the service (adj 100) before the app in front (adj 0).  (With 2000 MiB
    // the kernel's OOM killer takes the service first, at the allocation,
    // and the complete stall's next PSI event, held a window, finds the
    // service down and kills the app in front.)
    std::string y = "name: psi\nseed: 7\nreplications: 1\nhorizon: 1min\n"
                    "devices: [android-3g]\n"
                    "candidates:\n  - id: big\n    digest: a1\n    runtime: litert-1.4.0\n"
                    "    parts:\n      model:\n        file: 40MiB\n"
                    "        load: {mode: mmap, time: 300ms}\n"
                    "        prepare: {time: 500ms, resident: {native: 1600MiB}}\n"
                    "        inference: {time: 200ms}\n"
                    "processes:\n  ml: {kind: service, restart: 2s}\n"
                    "app:\n  baseline: {native: 150MiB}\n  package: com.example.big\n"
                    "  processes:\n    ml: {baseline: {native: 40MiB}}\n"
                    "workload:\n  path: [cold_start, {requests: {every: 1s, for: 50s}}]\n";
    Loaded l(y);
    Timeline t;
    mdl_rep r = shim::run_traced(l.s.cells[0], Timeline::add, &t);
    CHECK(r.svc_deaths > 0);
    CHECK(r.deaths_total == r.svc_deaths); // the app in front lives
    bool lmkd = false;
    for (const Exit &x : t.exits) {
        CHECK(x.process == "com.example.big:ml"); // `app.package`, as the phone names it
        if (!x.log.empty()) {
            lmkd = true;
            CHECK(x.log.find("Kill 'com.example.big:ml'") != std::string::npos);
            CHECK(x.log.find("oom_score_adj 100 ") != std::string::npos);
        }
    }
    CHECK(lmkd);
}

TEST_CASE("processes: exit records of every process, and diagnose attributes each",
          "[processes][diagnose]")
{
    shim::TempDir dir;
    std::string trace = dir.file("t.jsonl");
    auto g = shim::oomsim({"gen", source_path("scenarios/catalog/teach/remote-inference-service.yaml"),
                           "-o", trace});
    REQUIRE(g.status == 0);
    auto all = shim::oomsim({"diagnose", trace});
    REQUIRE(all.status == 0);
    CHECK(all.out.find("trace exit of com.example.app:ml, reason 3 (LOW_MEMORY), importance 100") !=
          std::string::npos);
    CHECK(all.out.find("trace exit of com.example.app,") == std::string::npos);
    // the main process alone: nothing of its own, the others said
    auto main = shim::oomsim({"diagnose", trace, "--process", "com.example.app"});
    REQUIRE(main.status == 0);
    CHECK(main.out == "3 deaths of other processes of this app were not read (--process names "
                      "one): com.example.app:ml (3)\n");
    SECTION("asked for the service, the main process's record is the other")
    {
        // the background variant: the app dies at 40 s, the service at 120 s
        std::string y = replace(teach(), "    - {requests: {every: 1s, for: 150s, owner: camera}}\n",
                                "    - {requests: {every: 1s, for: 30s, owner: camera}}\n"
                                "    - background: 60s\n"
                                "    - {requests: {every: 1s, for: 60s, owner: camera}}\n");
        std::string bg = dir.file("bg.jsonl");
        REQUIRE(shim::oomsim({"gen", dir.write("bg.yaml", y), "-o", bg}).status == 0);
        auto svc = shim::oomsim({"diagnose", bg, "--process", "com.example.app:ml"});
        REQUIRE(svc.status == 0);
        CHECK(svc.out.find("trace exit of com.example.app:ml") != std::string::npos);
        CHECK(svc.out.find("trace exit of com.example.app,") == std::string::npos);
        CHECK(svc.out.find("1 death of other processes of this app was not read (--process "
                           "names one): com.example.app (1)") != std::string::npos);
    }
    auto js = shim::oomsim({"diagnose", trace, "--process", "com.example.app", "--format", "json"});
    REQUIRE(js.status == 0);
    CHECK(js.out.find("\"exits\": []") != std::string::npos);
    CHECK(js.out.find("\"process\": \"com.example.app:ml\",\n      \"deaths\": 3") != std::string::npos);
}

TEST_CASE("processes: the results give each process and the feature's availability",
          "[processes][results]")
{
    shim::TempDir dir;
    auto run = shim::oomsim({"run", source_path("scenarios/catalog/teach/remote-inference-service.yaml"),
                             "-o", dir.path()});
    REQUIRE(run.status == 0);
    CHECK(run.out.find("feature available") != std::string::npos);
    std::string doc = shim::read_file(dir.file("results.json"));
    // every replication is the same: 3 deaths of the service, 24 failed
    // requests, the service alive 159 of 180 s, the app 180 of 180
    CHECK(doc.find("\"processes\": {\n        \"main\": {\n          \"deaths\": 0.0,\n"
                   "          \"available\": 1.0\n        },\n        \"ml\": {\n"
                   "          \"deaths\": 3.0,\n          \"available\": 0.88333") !=
          std::string::npos);
    CHECK(doc.find("\"failed_requests\": 24.0") != std::string::npos);
    CHECK(doc.find("\"feature_available\": 0.88333") != std::string::npos);
    // a plan without processes has no such column
    auto plain = shim::oomsim({"run", source_path("scenarios/catalog/teach/owner-leak.yaml"),
                               "-o", dir.file("plain")});
    REQUIRE(plain.status == 0);
    CHECK(plain.out.find("feature available") == std::string::npos);
}

TEST_CASE("processes: the world checker checks each process", "[processes][world][check]")
{
    Loaded l(teach());
    world w;
    mdl_rep out;
    sim_error err;
    sim_error_clear(&err);
    REQUIRE(w__open(&w, &l.s.cells[0], 0, nullptr, nullptr, nullptr, &out, &err) == SIM_OK);
    SECTION("both alive at 10 s: each owner holds its process's baseline")
    {
        REQUIRE(sim_run(w.e, 10 * S) >= 0);
        REQUIRE(w.proc.alive);
        REQUIRE(mdl_world_validate(&w, &err) == SIM_OK);
        w.main.app[MDL_CAT_NATIVE] += MiB; // the main process's record disagrees
        CHECK(mdl_world_validate(&w, &err) == SIM_EINTERNAL);
        CHECK(std::string(err.msg).find("app owner holds other") != std::string::npos);
        w.main.app[MDL_CAT_NATIVE] -= MiB;
        w.proc.app[MDL_CAT_NATIVE] += MiB; // the service's
        CHECK(mdl_world_validate(&w, &err) == SIM_EINTERNAL);
        CHECK(std::string(err.msg).find("service process's owner") != std::string::npos);
        w.proc.app[MDL_CAT_NATIVE] -= MiB;
    }
    SECTION("the service down at 40.5 s: it holds nothing, the app its own")
    {
        REQUIRE(sim_run(w.e, 40 * S + S / 2) >= 0);
        REQUIRE(!w.proc.alive);
        REQUIRE(w.main.alive);
        int rc = mdl_world_validate(&w, &err);
        INFO(err.msg);
        REQUIRE(rc == SIM_OK);
        CHECK(w__main_counted(&w) == 120 * MiB);
        w.proc.nsess = 1; // a session of a dead service (on a part it no longer has)
        CHECK(mdl_world_validate(&w, &err) == SIM_EINTERNAL);
        CHECK(std::string(err.msg).find("which is not ready") != std::string::npos);
        w.proc.nsess = 0;
        w.main.alive = 0; // the app dead, with memory still its own
        CHECK(mdl_world_validate(&w, &err) == SIM_EINTERNAL);
        CHECK(std::string(err.msg).find("dead main process still holds") != std::string::npos);
        w.main.alive = 1;
        w.main.alive = 0;
        w.proc.alive = 1; // a service without its client
        CHECK(mdl_world_validate(&w, &err) == SIM_EINTERNAL);
        w.proc.alive = 0;
        w.main.alive = 1;
    }
    CHECK(mdl_world_validate(&w, &err) == SIM_OK);
    w__close(&w);
}

TEST_CASE("processes: bad processes are refused with the file, line and column",
          "[processes][errors]")
{
    struct Case {
        std::string from, to, msg;
    } cases[] = {
        {"  ml: {kind: service, bound_by: main, restart: 1s}\n",
         "  ml: {kind: service, bound_by: ui, restart: 1s}\n",
         "processes.ml.bound_by: process ml: no process named 'ui' binds it"},
        {"  ml: {kind: service, bound_by: main, restart: 1s}\n",
         "  ml: {kind: service, bound_by: ml2, restart: 1s}\n"
         "  ml2: {kind: service, bound_by: ml, restart: 1s}\n",
         "a cycle of bindings: ml -> ml2 -> ml"},
        {"  ml: {kind: service, bound_by: main, restart: 1s}\n",
         "  ml: {kind: service, bound_by: ml, restart: 1s}\n", "a cycle of bindings: ml -> ml"},
        {"  ml: {kind: service, bound_by: main, restart: 1s}\n",
         "  ml: {kind: service, restart: 1s}\n  ml2: {kind: service, restart: 1s}\n",
         "processes.ml2: this version of oomsim models one service process"},
        {"  ml: {kind: service, bound_by: main, restart: 1s}\n",
         "  ml: {kind: extension, restart: 1s}\n", "an app extension"},
        {"  ml: {kind: service, bound_by: main, restart: 1s}\n", "  ml: {kind: service}\n",
         "missing required key \"restart\""},
        {"  ml: {kind: service, bound_by: main, restart: 1s}\n",
         "  ml: {kind: service, restart: 1s, important: true, waive_priority: true}\n",
         "exclude each other"},
        {"    ml: {baseline: {native: 40MiB}}\n", "    gpu: {baseline: {native: 40MiB}}\n",
         "app.processes.gpu: no process named 'gpu'"},
        {"  camera: {kind: page, page: cam, needs: [detector]}\n",
         "  camera: {kind: page, page: cam, needs: [detector]}\n  svc: {kind: service}\n",
         "owner svc: the model runs in process ml, where its service lives: add `process: ml`"},
        {"  camera: {kind: page, page: cam, needs: [detector]}\n",
         "  camera: {kind: page, page: cam, needs: [detector]}\n"
         "  svc: {kind: service, process: remote}\n",
         "owners.svc.process: owner svc: no process named 'remote'"},
        {"devices:\n", "devices:\n  - iphone-4g\n", "processes: device iphone-4g runs iOS, "
         "which has no app-owned service processes"},
        // the phone names it PACKAGE:NAME, as android:process=":NAME" allows
        {"  ml: {kind: service, bound_by: main, restart: 1s}\n",
         "  ml: {kind: service, bound_by: main, restart: 1s}\n"
         "  on-device-ml: {kind: service, restart: 1s}\n",
         "process 'on-device-ml': expected a name of at most 22 characters from [a-z0-9], "
         "begun by a letter"},
        {"  ml: {kind: service, bound_by: main, restart: 1s}\n",
         "  ml: {kind: service, bound_by: main, restart: 1s}\n"
         "  inferenceserviceprocess: {kind: service, restart: 1s}\n",
         "process 'inferenceserviceprocess': expected a name of at most 22"},
    };
    for (const Case &c : cases) {
        std::string yaml = replace(teach(), c.from, c.to);
        scn_scenario s{};
        sim_error err;
        sim_error_clear(&err);
        INFO(c.to);
        int rc = scn_scenario_parse(yaml.data(), yaml.size(), "t.yaml", &s, &err);
        REQUIRE((rc == SIM_EINPUT || rc == SIM_ELIMIT));
        INFO(err.msg);
        CHECK(std::string(err.msg).find(c.msg) != std::string::npos);
        CHECK(std::string(err.msg).rfind("t.yaml:", 0) == 0);
    }
}

TEST_CASE("processes: the main process's death in the service's start-up is a start-up death: "
          "the boot loop and the recovery learn of it",
          "[processes][recovery]")
{
    // an important binding: both at adj 0; the app holds 700 MiB, the
    // service 40 MiB and at runtime_prepare (0.3 s into its start) 400 MiB
    // more: 2048 - 900 - 1140 = 8 MiB free, under 72: lmkd takes the
    // heavier at adj 0, the app (700 MiB against 440), at every start while
    // the service's start-up (the preload) runs
    std::string y = replace(replace(replace(teach(), "restart: 1s}", "restart: 1s, important: true}"),
                                    "baseline: {native: 120MiB}", "baseline: {native: 700MiB}"),
                            "resident: {native: 600MiB}", "resident: {native: 400MiB}");
    y += "policies:\n  recovery: [naive, safe_mode]\n";
    Loaded l(y);
    Timeline t;
    mdl_rep naive = shim::run_traced(l.s.cells[0], Timeline::add, &t);
    REQUIRE(!t.exits.empty());
    CHECK(t.exits[0].t == 300000);
    CHECK(t.exits[0].process == "com.example.app");
    CHECK(naive.svc_deaths == 0);
    CHECK(naive.boot_loop == 1);
    // safe mode, learning of the start-up deaths, starts without the model
    mdl_rep safe = l.run(1);
    CHECK(safe.safe_mode_starts > 0);
    CHECK(safe.alive_us > naive.alive_us);
    SECTION("a main process that dies of its own baseline, before its service starts")
    {
        // 2048 - 900 - 1100 = 48 MiB free at its start, under 72: it dies
        // at every start, a start-up death each time
        Loaded m(replace(teach(), "baseline: {native: 120MiB}", "baseline: {native: 1100MiB}"));
        mdl_rep q = m.run(0);
        CHECK(q.deaths_total >= 2);
        CHECK(q.svc_deaths == 0);
        CHECK(q.boot_loop == 1);
    }
}

TEST_CASE("processes: a service's main-thread work dies of ActiveServices' timeout, not the "
          "input one",
          "[processes][anr]")
{
    // the detector's load on the main thread: 6 s passes the app's 5 s
    // input timeout, which the windowless service has not; 25 s passes the
    // 20 s SERVICE_TIMEOUT of a service whose client is in front
    std::string six = replace(teach(), "load: {mode: mmap, time: 300ms}",
                              "load: {mode: mmap, time: 6s, thread: main}");
    Loaded a(six);
    CHECK(a.run(0).deaths[MDL_EXIT_ANR] == 0);
    Loaded b(replace(teach(), "load: {mode: mmap, time: 300ms}",
                     "load: {mode: mmap, time: 25s, thread: main}"));
    Timeline t;
    mdl_rep r = shim::run_traced(b.s.cells[0], Timeline::add, &t);
    REQUIRE(!t.exits.empty());
    CHECK(t.exits[0].t == 20 * S);
    CHECK(t.exits[0].process == "com.example.app:ml");
    CHECK(r.deaths[MDL_EXIT_ANR] == r.deaths_total);
    SECTION("the timeout set with the app in front fires though the user left since")
    {
        Loaded c(replace(replace(teach(), "load: {mode: mmap, time: 300ms}",
                                 "load: {mode: mmap, time: 30s, thread: main}"),
                         "    - enter: cam\n", "    - enter: cam\n    - background: 2min\n"));
        Timeline u;
        shim::run_traced(c.s.cells[0], Timeline::add, &u);
        REQUIRE(!u.exits.empty());
        CHECK(u.exits[0].t == 20 * S);
    }
    SECTION("a device without anr_timeout has no ANR, for its services too")
    {
        Loaded c(replace(replace(teach(), "load: {mode: mmap, time: 300ms}",
                                 "load: {mode: mmap, time: 25s, thread: main}"),
                         "    anr_timeout: 5s\n", ""));
        CHECK(c.run(0).deaths[MDL_EXIT_ANR] == 0);
    }
}

TEST_CASE("processes: the service starts when the app's own start leaves the phone under its "
          "low watermark (PSI mode)",
          "[processes][psi]")
{
    // 3 GiB - 1.1 GiB of system - 1445 MiB of cached apps leaves about 530
    // MiB, of which the page cache holds 500: the app's 120 MiB baseline
    // takes free pages under the low watermark, and reclaim answers; the
    // app lives, and so must its binding: the service starts with it
    std::string dev = "devices:\n  - name: tight-psi\n    os: android\n    ram: 3GiB\n"
                      "    system: 1.1GiB\n    cached_apps: 1445MiB\n    cached_app_size: 120MiB\n"
                      "    kill:\n      rule: lmk\n      mode: psi\n"
                      "      watermarks: {min: 7094KiB, low: 10239KiB, high: 13384KiB}\n"
                      "    counts: [native, java, gpu]\n    anr_timeout: 5s\n"
                      "    zram: {size: 1536MiB, ratio: 2.5}\n"
                      "    page_cache: {size: 500MiB, working_set: 250MiB}\n"
                      "    storage_read: 40MB/s\n    reclaim_rate: 300MiB/s\ncandidates:\n";
    std::string y = teach();
    y = y.substr(0, y.find("devices:\n")) + dev + y.substr(y.find("  - id: scan-app"));
    y = replace(y, "resident: {native: 600MiB}", "resident: {native: 300MiB}");
    Loaded l(y);
    mdl_rep r = l.run(0);
    CHECK(r.svc_alive_us > 0);
    CHECK(r.completed > 0);
    CHECK(r.svc_failed < r.arrived);
}

TEST_CASE("processes: kill_heaviest_task makes lmkd take the heavier of main and service at one "
          "adj in the background", "[processes][psi]")
{
    // BIND_IMPORTANT: the service shares its client's adj, 700 then 900 in
    // the background. A 1400 MiB model in the service (1440 MiB with its
    // baseline, against the app's 150) and the background's successor app
    // leave the 3 GB phone short, and lmkd kills at the pair's adj, over
    // PERCEPTIBLE_APP_ADJ: find_and_kill_process takes its list's tail, the
    // process slotted first (the client's adj reaches lmkd first): the main
    // process, whose death takes the service. With kill_heaviest_task,
    // proc_get_heaviest at every adj: the service, and the app lives.
    std::string dev = shim::read_file(source_path("scenarios/catalog/devices/android-3g.yaml"));
    std::string inl;
    bool first = true;
    for (size_t at = 0; at < dev.size();) {
        size_t nl = dev.find('\n', at);
        std::string line = dev.substr(at, nl - at);
        at = nl == std::string::npos ? dev.size() : nl + 1;
        if (line.empty() || line[0] == '#' || line.rfind("measured", 0) == 0 ||
            line.rfind("  zram.ratio", 0) == 0)
            continue;
        inl += (first ? "  - " : "    ") + line + "\n";
        first = false;
    }
    auto scenario = [&](const std::string &lmkd, const std::string &resident = "native: 1400MiB",
                        const std::string &app = "150MiB") {
        return "name: heaviest\nseed: 7\nreplications: 4\nhorizon: 3min\ndevices:\n" + inl +
               lmkd +
               "candidates:\n  - id: big\n    digest: a1\n    runtime: litert-1.4.0\n"
               "    parts:\n      model:\n        file: 40MiB\n"
               "        load: {mode: mmap, time: 300ms}\n"
               "        prepare: {time: 500ms, resident: {" + resident + "}}\n"
               "        inference: {time: 200ms}\n"
               "processes:\n  ml: {kind: service, restart: 2s, important: true}\n"
               "app:\n  baseline: {native: " + app + "}\n  package: com.example.big\n"
               "  processes:\n    ml: {baseline: {native: 40MiB}}\n"
               "workload:\n  path: [cold_start, {requests: {every: 1s, for: 5s}}, "
               "{background: 150s}]\n";
    };
    Loaded tail(scenario(""));
    Loaded heavy(scenario("    lmkd: {kill_heaviest_task: true}\n"));
    int64_t tail_main = 0, tail_svc = 0, heavy_main = 0, heavy_svc = 0;
    for (uint64_t k = 0; k < 4; k++) {
        mdl_rep a = tail.run(0, k), b = heavy.run(0, k);
        tail_main += (int64_t)(a.deaths_total - a.svc_deaths);
        tail_svc += (int64_t)a.svc_deaths;
        heavy_main += (int64_t)(b.deaths_total - b.svc_deaths);
        heavy_svc += (int64_t)b.svc_deaths;
    }
    CHECK(tail_main > 0);
    CHECK(tail_svc == 0);
    CHECK(heavy_main == 0);
    CHECK(heavy_svc > 0);
    // proc_get_heaviest weighs /proc/PID/statm's resident pages, which hold
    // no GPU buffer: with 1300 of the service's 1400 MiB on the GPU it
    // weighs 100 + 40 MiB of baseline + 40 MiB of mapped file, under the
    // main process's 250 MiB: the main process is the heavier and dies
    Loaded gpu(scenario("    lmkd: {kill_heaviest_task: true}\n", "native: 100MiB, gpu: 1300MiB",
                        "250MiB"));
    int64_t gpu_main = 0, gpu_svc = 0;
    for (uint64_t k = 0; k < 4; k++) {
        mdl_rep c = gpu.run(0, k);
        gpu_main += (int64_t)(c.deaths_total - c.svc_deaths);
        gpu_svc += (int64_t)c.svc_deaths;
    }
    CHECK(gpu_main > 0);
    CHECK(gpu_svc == 0);
}
