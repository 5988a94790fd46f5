// Owners (docs/model.md "Owners", models/owners.c): who holds sessions of
// the model.  Every figure below is derived in the comments from the
// scenario's fixed times and sizes; the world checker runs after every
// event in the sanitizer build (sessions on ready parts, of open owners,
// their memory within the session owner's, tasks counted).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "models/models.h"
#include "models/world_int.h"
#include "scenarios/scenarios.h"
#include "shim/shim.hpp"
#include "shim/world.hpp"

using shim::Loaded;

namespace {

const int64_t MiB = 1024 * 1024;

// A session event of the timeline: when, which, its owner, its result.
struct Session {
    sim_time t;
    std::string what, owner, how;
    int64_t session, request;
};

struct Timeline {
    std::vector<Session> s;
    std::vector<std::pair<sim_time, std::string>> notes;
    static int add(void *ctx, const trc_event *e, sim_error *)
    {
        auto *x = static_cast<Timeline *>(ctx);
        if (e->has & TRC_F_OWNER)
            x->s.push_back({e->time_us, e->error, e->owner, e->action, e->session,
                            (e->has & TRC_F_REQUEST) ? e->request : -1});
        else if (e->has & TRC_F_ERROR)
            x->notes.push_back({e->time_us, e->error});
        else if (e->stage == TRC_RELEASE)
            x->notes.push_back({e->time_us, std::string("release ") + e->part});
        return SIM_OK;
    }
    sim_time when(const std::string &note) const
    {
        for (const auto &n : notes)
            if (n.second == note)
                return n.first;
        return -1;
    }
};

mdl_rep traced(Loaded &l, Timeline &t, unsigned cell = 0)
{
    return shim::run_traced(l.s.cells[cell], Timeline::add, &t);
}

// A roomy phone (nothing is killed) and one part: load 300 ms, prepare
// 500 ms (200 MiB resident), a session state of 20 MiB, inference 100 ms.
const char *roomy = R"(
name: owners
horizon: 30s
replications: 1
devices:
  - name: roomy
    os: android
    ram: 8GiB
    system: 1GiB
    kill: {rule: lmk, minfree: [{adj: 0, free: 50MiB}]}
candidates:
  - id: c
    digest: 0a1b
    runtime: test-1
    parts:
      model:
        file: 10MiB
        load: {mode: mmap, time: 300ms}
        prepare: {time: 500ms, resident: {native: 200MiB}}
        session: {native: 20MiB}
        inference: {time: 100ms}
policies: {residency: on_demand_overlap}
)";

// Two pages' owners of the model; the second's `releases` as given.  The
// path: enter cam at 0 (the model loads: ready at 0.8 s, camera's session
// opens then), two requests of camera at 1 and 2 s (the step lasts 2 s),
// enter overlay at 2 s (its session opens at once: the part is ready), two
// requests of overlay at 3 and 4 s, leave cam at 4 s, two more of overlay
// at 5 and 6 s, leave overlay at 6 s (arrivals come before path steps at
// one instant: the request of 6 s runs until 6.1 s).
std::string two_pages(const char *overlay_releases)
{
    return std::string(roomy) + "owners:\n  camera: {kind: page, page: cam}\n"
           "  overlay: {kind: page, page: overlay, releases: " + overlay_releases + "}\n"
           "workload:\n  path:\n    - cold_start\n    - enter: cam\n"
           "    - requests: {every: 1s, count: 2, owner: camera}\n    - enter: overlay\n"
           "    - requests: {every: 1s, count: 2, owner: overlay}\n    - leave: cam\n"
           "    - requests: {every: 1s, count: 2, owner: overlay}\n    - leave: overlay\n";
}

} // namespace

TEST_CASE("owners: two pages hold the model, one leaves and it stays, both leave and it goes",
          "[owners]")
{
    Loaded l(two_pages("true"));
    Timeline t;
    mdl_rep r = traced(l, t);
    REQUIRE(t.s.size() == 4);
    // camera's session opens when the model is ready (0.8 s), overlay's at its enter
    CHECK(t.s[0].what == "session_open");
    CHECK(t.s[0].owner == "camera");
    CHECK(t.s[0].t == 800000);
    CHECK(t.s[0].how == "enter cam");
    CHECK(t.s[1].owner == "overlay");
    CHECK(t.s[1].t == 2000000);
    // leaving cam at 4 s closes camera's session, its last request the 2nd
    // (request 1, at 2 s); the model stays: overlay holds it
    CHECK(t.s[2].what == "session_close");
    CHECK(t.s[2].owner == "camera");
    CHECK(t.s[2].t == 4000000);
    CHECK(t.s[2].how == "still held by overlay");
    CHECK(t.s[2].request == 1);
    // leaving overlay at 6 s: its session is busy with request 5 until
    // 6.1 s, then closes, released, and the model goes with it
    CHECK(t.s[3].how == "released");
    CHECK(t.s[3].request == 5);
    CHECK(t.s[3].t == 6100000);
    CHECK(t.when("release model") == 6100000);
    // the model stayed 2.1 s after cam left (4 to 6.1 s); nothing leaked
    CHECK(r.held_after_leave_us == 2100000);
    CHECK(r.leaked_sessions == 0);
    // the peak: 200 MiB resident + two 20 MiB sessions (both pages open, 2 to 4 s)
    CHECK(r.peak == 240 * MiB);
    CHECK(r.completed == 6);
}

TEST_CASE("owners: an owner that never releases leaks its session and keeps the part",
          "[owners]")
{
    Loaded l(two_pages("false"));
    Timeline t;
    mdl_rep r = traced(l, t);
    REQUIRE(t.s.size() == 4);
    CHECK(t.s[3].what == "session_leaked");
    CHECK(t.s[3].owner == "overlay");
    CHECK(t.s[3].t == 6000000);
    CHECK(t.when("release model") == -1); // never released
    // the clock from cam's leave (4 s) to the horizon (30 s)
    CHECK(r.held_after_leave_us == 26000000);
    CHECK(r.leaked_sessions == 1);
}

TEST_CASE("owners: a page entered again opens a new session, and a leaking one piles them up",
          "[owners]")
{
    // gallery leaks its session at every leave: three visits, three
    // sessions of 20 MiB held at the end (200 + 60 MiB)
    Loaded l(std::string(roomy) + "owners:\n  gallery: {kind: page, page: gallery, releases: "
             "false}\nworkload:\n  path:\n    - cold_start\n    - repeat: {times: 3, steps: "
             "[{enter: gallery}, {requests: {every: 1s, count: 1, owner: gallery}}, "
             "{leave: gallery}]}\n");
    Timeline t;
    mdl_rep r = traced(l, t);
    CHECK(r.leaked_sessions == 3);
    CHECK(r.peak == 260 * MiB);
}

TEST_CASE("owners: a task's run opens and closes its sessions, and holds adj 250 in the "
          "background", "[owners]")
{
    // lmk's levels: 100 MiB free at adj 250, 1500 MiB at 700.  8 GiB less
    // 1 GiB system less the preloaded model (200 MiB) leaves about 6.8 GiB
    // free: the app lives at both, until a spike of 5.5 GiB every 12 s
    // (at 12, 24, ... s) leaves about 1.3 GiB: under 1500 MiB, over 100.
    // The task runs every 10 s for 5 s: [10, 15), [25, 30), ...; the spike
    // at 12 s finds it running (adj 250): it lives; the one at 24 s at adj
    // 700: reclaimed.
    std::string yaml = std::string(roomy);
    yaml.replace(yaml.find("kill: {rule: lmk, minfree: [{adj: 0, free: 50MiB}]}"),
                 std::string("kill: {rule: lmk, minfree: [{adj: 0, free: 50MiB}]}").size(),
                 "kill: {rule: lmk, minfree: [{adj: 0, free: 50MiB}, {adj: 250, free: 100MiB}, "
                 "{adj: 700, free: 1500MiB}]}\n    pressure: 12s"
                 "\n    pressure_size: 5632MiB");
    yaml.replace(yaml.find("on_demand_overlap"), 17, "preload");
    yaml += "owners:\n  sync: {kind: task, every: 10s, runs: 5s}\nworkload:\n  path:\n"
            "    - cold_start\n    - background: 60s\n";
    Loaded l(yaml);
    Timeline t;
    mdl_rep r = traced(l, t);
    REQUIRE(t.s.size() >= 2);
    CHECK(t.s[0].what == "session_open");
    CHECK(t.s[0].how == "task run");
    CHECK(t.s[0].t == 10000000);
    CHECK(t.s[1].what == "session_close");
    CHECK(t.s[1].t == 15000000);
    CHECK(r.deaths_total == 1);
    CHECK(r.deaths[MDL_EXIT_SYSTEM_RECLAIM] == 1);
    CHECK(r.first_death_time == 24000000);
    // without the task the first spike, at 12 s, reclaims it
    yaml.replace(yaml.find("owners:"), yaml.find("workload:") - yaml.find("owners:"), "");
    Loaded plain(yaml);
    mdl_rep p = shim::run_replication(plain.s.cells[0]);
    CHECK(p.first_death_time == 12000000);
}

TEST_CASE("owners: a service in the app's process holds its parts from the start to the death",
          "[owners]")
{
    // under on_demand_overlap nothing loads at start; the service opens at
    // the cold start: the model loads (ready at 0.8 s), two sessions open
    Loaded l(std::string(roomy) + "owners:\n  svc: {kind: service, sessions: 2}\n"
             "workload:\n  path: [cold_start]\n");
    Timeline t;
    mdl_rep r = traced(l, t);
    REQUIRE(t.s.size() == 2);
    CHECK(t.s[0].t == 800000);
    CHECK(t.s[1].t == 800000);
    CHECK(t.s[0].session != t.s[1].session);
    CHECK(r.peak == 240 * MiB);
    CHECK(r.leaked_sessions == 0);
    // a runtime that does not share weights: each session copies the
    // prepared 200 MiB: 200 + 2 x (20 + 200) = 640 MiB
    std::string own = std::string(roomy) + "owners:\n  svc: {kind: service, sessions: 2}\n"
                      "workload:\n  path: [cold_start]\n";
    own.replace(own.find("runtime: test-1"), 15, "runtime: test-1\n    shares_weights: false");
    Loaded copy(own);
    CHECK(shim::run_replication(copy.s.cells[0]).peak == 640 * MiB);
}

TEST_CASE("owners: bad owners are refused with the file, line and column", "[owners][errors]")
{
    struct Case {
        std::string owners, path, msg;
    } cases[] = {
        {"  a: {kind: page, page: nowhere}\n", "[cold_start, {enter: cam}]",
         "t.yaml:24:25: owners.a.page: owner a: the path never enters page 'nowhere'"},
        {"  a: {kind: page, page: cam, needs: [eyes]}\n", "[cold_start, {enter: cam}]",
         "candidate c has no part 'eyes'"},
        {"  a: {kind: service, process: ml}\n", "[cold_start]",
         "owners.a.process: owner a: no process named 'ml' (the scenario has no `processes`)"},
        {"  a: {kind: daemon}\n", "[cold_start]", "owners.a.kind"},
        {"  a: {kind: task, every: 10s}\n", "[cold_start]", "missing required key \"runs\""},
        {"  a: {kind: page, page: cam, every: 1s}\n", "[cold_start, {enter: cam}]",
         "owners.a: unknown key"},
        {"  a: {kind: service, sessions: 65}\n", "[cold_start]", "owners.a.sessions"},
        {"  a: {kind: service}\n", "[cold_start, {requests: {every: 1s, count: 1, owner: b}}]",
         "no owner named 'b'"},
    };
    for (const Case &c : cases) {
        std::string yaml = std::string(roomy) + "owners:\n" + c.owners + "workload:\n  path: " +
                           c.path + "\n";
        scn_scenario s{};
        sim_error err;
        sim_error_clear(&err);
        INFO(c.owners);
        int rc = scn_scenario_parse(yaml.data(), yaml.size(), "t.yaml", &s, &err);
        REQUIRE((rc == SIM_EINPUT || rc == SIM_ELIMIT));
        INFO(err.msg);
        CHECK(std::string(err.msg).find(c.msg) != std::string::npos);
        CHECK(std::string(err.msg).rfind("t.yaml:", 0) == 0);
    }
}

TEST_CASE("the world checker follows the owners' sessions", "[owners][world][check]")
{
    Loaded l(two_pages("true"));
    world w;
    mdl_rep out;
    sim_error err;
    sim_error_clear(&err);
    REQUIRE(w__open(&w, &l.s.cells[0], 0, nullptr, nullptr, nullptr, &out, &err) == SIM_OK);
    // at 3 s both pages are open, each with one session of the model
    REQUIRE(sim_run(w.e, 3000000) >= 0);
    REQUIRE(mdl_world_validate(&w, &err) == SIM_OK);
    REQUIRE(w.proc.nsess == 2);
    SECTION("a session that outlives its owner")
    {
        w.proc.h_open[0] = 0;
        CHECK(mdl_world_validate(&w, &err) == SIM_EINTERNAL);
        CHECK(std::string(err.msg).find("outlives its owner camera") != std::string::npos);
        w.proc.h_open[0] = 1;
    }
    SECTION("a session's memory the ledger does not hold")
    {
        w.store.sess[0].amount[MDL_CAT_NATIVE] += 64 * MiB;
        CHECK(mdl_world_validate(&w, &err) == SIM_EINTERNAL);
        CHECK(std::string(err.msg).find("holds less than its owners' sessions") !=
              std::string::npos);
        w.store.sess[0].amount[MDL_CAT_NATIVE] -= 64 * MiB;
    }
    SECTION("a task counted that no owner runs")
    {
        w.proc.tasks++;
        CHECK(mdl_world_validate(&w, &err) == SIM_EINTERNAL);
        CHECK(std::string(err.msg).find("tasks running") != std::string::npos);
        w.proc.tasks--;
    }
    CHECK(mdl_world_validate(&w, &err) == SIM_OK);
    w__close(&w);
}

TEST_CASE("owner-leak shows what its about says", "[owners][teach][about:owner-leak]")
{
    // the shipped scenario, then the same with the gallery's close fixed
    std::string text = shim::read_file(shim::source_path("scenarios/catalog/teach/owner-leak.yaml"));
    Loaded l(text, "owner-leak.yaml");
    Timeline t;
    mdl_rep r = traced(l, t);
    // the camera page closes its session at its leave (20 s; its last
    // request, 9, runs until 20.2 s) and the detector goes with it
    auto find = [&](const std::string &what, const std::string &owner) -> const Session * {
        for (const Session &s : t.s)
            if (s.what == what && s.owner == owner)
                return &s;
        return nullptr;
    };
    const Session *cam = find("session_close", "camera");
    REQUIRE(cam != nullptr);
    CHECK(cam->how == "released");
    CHECK(t.when("release detector") == cam->t);
    // the gallery's leave (40 s) leaks its session, its last request 19;
    // the recognizer is never released
    const Session *leak = find("session_leaked", "gallery");
    REQUIRE(leak != nullptr);
    CHECK(leak->t == 40000000);
    CHECK(leak->request == 19);
    CHECK(t.when("release recognizer") == -1);
    // 550 MiB held in the background (520 + 30): the spike at 60 s reclaims it
    CHECK(r.deaths_total == 1);
    CHECK(r.deaths[MDL_EXIT_SYSTEM_RECLAIM] == 1);
    CHECK(r.first_death_time == 60000000);
    REQUIRE(r.nrecords == 1);
    CHECK(r.records[0].importance == 400);
    CHECK(r.leaked_sessions == 1);
    // the recognizer from the gallery's leave (40 s) to the death (60 s),
    // and the detector 0.2 s after the camera's leave (its last request ran on)
    CHECK(r.held_after_leave_us == 20200000);
    // the fix: the gallery closes its session, the recognizer goes, no death
    text.replace(text.find("releases: false"), 15, "releases: true");
    Loaded fixed(text, "owner-leak.yaml");
    Timeline f;
    mdl_rep x = traced(fixed, f);
    CHECK(x.deaths_total == 0);
    CHECK(x.leaked_sessions == 0);
    CHECK(f.when("release recognizer") == 40200000); // when request 19 ends
}

TEST_CASE("owners: a part its owner left while it loaded goes when ready, and preload keeps "
          "its order", "[owners]")
{
    // enter cam and leave it at once: the model's load (0 to 0.8 s) was
    // for nobody; it goes when ready, with no session opened, and no time
    // counts as held after the leave
    std::string yaml = std::string(roomy);
    yaml.replace(yaml.find("on_demand_overlap"), 17, "\"lru:2\"");
    Loaded l(yaml + "owners:\n  camera: {kind: page, page: cam}\nworkload:\n  path: "
             "[cold_start, {enter: cam}, {leave: cam}]\n");
    Timeline t;
    mdl_rep r = traced(l, t);
    CHECK(t.s.empty());
    CHECK(t.when("release model") == 800000);
    CHECK(r.held_after_leave_us == 0);
    // under preload a service at the start waits for the start-up's loads:
    // no on-demand load (no switch); its sessions open when each part is ready
    std::string two = std::string(roomy);
    two.replace(two.find("on_demand_overlap"), 17, "preload");
    two.replace(two.find("        inference: {time: 100ms}\n"), 0,
                "");
    two += "owners:\n  svc: {kind: service}\nworkload:\n  path: [cold_start]\n";
    two.replace(two.find("    parts:\n"), 11,
                "    parts:\n      first:\n        file: 10MiB\n        load: {mode: mmap, time: "
                "300ms}\n        prepare: {time: 500ms, resident: {native: 100MiB}}\n        "
                "session: {native: 10MiB}\n        inference: {time: 100ms}\n");
    Loaded p(two);
    Timeline tp;
    mdl_rep rp = traced(p, tp);
    CHECK(rp.switches == 0);
    REQUIRE(tp.s.size() == 2);
    CHECK(tp.s[0].t == 800000);  // first: ready at 0.8 s
    CHECK(tp.s[1].t == 1600000); // model: loaded after it, ready at 1.6 s
}

TEST_CASE("owners: a relaunch while the user is on the page opens its owner again",
          "[owners]")
{
    // camera holds the small part; at 2 s a request for the 7.5 GiB part
    // kills the app during its prepare (2.3 s); the user, still on cam,
    // reopens it 1 s later: camera opens its session again once the small
    // part is ready (3.3 + 0.8 s)
    std::string yaml = std::string(roomy);
    yaml.replace(yaml.find("    parts:\n"), 11,
                 "    parts:\n      huge:\n        file: 10MiB\n        load: {mode: mmap, "
                 "time: 300ms}\n        prepare: {time: 500ms, resident: {native: 7500MiB}}\n"
                 "        inference: {time: 100ms}\n");
    yaml += "owners:\n  camera: {kind: page, page: cam, needs: [model]}\nworkload:\n  path:\n"
            "    - cold_start\n    - enter: cam\n    - requests: {every: 2s, count: 1, needs: "
            "[huge]}\n  relaunch: 1s\n";
    Loaded l(yaml);
    Timeline t;
    mdl_rep r = traced(l, t);
    REQUIRE(r.deaths_total == 1);
    CHECK(r.first_death_time == 2300000);
    std::vector<sim_time> opens;
    for (const Session &s : t.s)
        if (s.what == "session_open" && s.owner == "camera")
            opens.push_back(s.t);
    REQUIRE(opens.size() == 2);
    CHECK(opens[0] == 800000);
    CHECK(opens[1] == 4100000);
}

TEST_CASE("owners: under release-first an owner's opening keeps the release a waiting load "
          "needs", "[owners]")
{
    // inference 5 s, two sessions.  The detector's request of 2 s runs from
    // its load's end (2.8 s) to 7.8 s; a recognizer request at 3 s must
    // wait for the detector's release (release first).  Entering cam at
    // 4 s does not keep the detector: it goes at 7.8 s, the recognizer
    // loads (ready 8.6 s) and serves its two requests (to 13.6 s); camera's
    // first request (14 s) loads the detector again, and camera's session
    // opens when it is ready, at 14.8 s.
    std::string yaml = std::string(roomy);
    yaml.replace(yaml.find("on_demand_overlap"), 17, "on_demand_release_first, sessions: 2");
    yaml.replace(yaml.find("inference: {time: 100ms}"), 24, "inference: {time: 5s}");
    yaml.replace(yaml.find("    parts:\n"), 11,
                 "    parts:\n      recognizer:\n        file: 10MiB\n        load: {mode: "
                 "mmap, time: 300ms}\n        prepare: {time: 500ms, resident: {native: "
                 "300MiB}}\n        inference: {time: 5s}\n");
    yaml += "owners:\n  camera: {kind: page, page: cam, needs: [model]}\nworkload:\n  path:\n"
            "    - cold_start\n    - requests: {every: 2s, count: 1, needs: [model]}\n"
            "    - requests: {every: 1s, count: 2, needs: [recognizer]}\n    - enter: cam\n"
            "    - requests: {every: 10s, count: 1, needs: [model], owner: camera}\n";
    Loaded l(yaml);
    Timeline t;
    mdl_rep r = traced(l, t);
    CHECK(t.when("release model") == 7800000);
    REQUIRE(!t.s.empty());
    CHECK(t.s[0].what == "session_open");
    CHECK(t.s[0].t == 14800000);
    CHECK(r.completed == 4);
}

TEST_CASE("owners: a part loaded for nobody goes without evicting a held one, under overlap "
          "and release-first", "[owners]")
{
    // svc holds `model` from the start (ready 0.8 s); gal is entered and
    // left at 2 s while `other` starts loading for it; `other` is ready at
    // 2.8 s and goes at once, `model` stays (overlap would have evicted it)
    auto yaml = [](const char *residency) {
        std::string y = std::string(roomy);
        y.replace(y.find("on_demand_overlap"), 17, residency);
        y.replace(y.find("    parts:\n"), 11,
                  "    parts:\n      other:\n        file: 10MiB\n        load: {mode: mmap, "
                  "time: 300ms}\n        prepare: {time: 500ms, resident: {native: 300MiB}}\n"
                  "        inference: {time: 100ms}\n");
        return y + "owners:\n  svc: {kind: service, needs: [model]}\n  gallery: {kind: page, "
                   "page: gal, needs: [other]}\nworkload:\n  path:\n    - cold_start\n"
                   "    - requests: {every: 2s, count: 1, needs: [model], owner: svc}\n"
                   "    - enter: gal\n    - leave: gal\n";
    };
    Loaded ov(yaml("on_demand_overlap"));
    Timeline t;
    traced(ov, t);
    CHECK(t.when("release other") == 2800000);
    CHECK(t.when("release model") == -1);
    // release-first: `other`'s load waits for `model`'s room (model runs its
    // request 2 to 2.1 s); the gallery leaves before: the waiting load is
    // dropped, and `model`, which svc holds, stays
    Loaded rf(yaml("on_demand_release_first"));
    Timeline f;
    traced(rf, f);
    CHECK(f.when("release model") == -1);
    CHECK(f.when("release other") == -1); // never loaded
}
