// The world's rules that cross files: a stage's allocation made whole
// before the kill rules, a dead process that loads nothing, releases
// before allocations at one instant; and the world checker, which must
// find nothing in a healthy world and catch a broken invariant.
#include <catch2/catch.hpp>

#include <string>

#include "models/world_int.h"
#include "scenarios/scenarios.h"
#include "shim/world.hpp"

namespace {

const int64_t MiB = 1024 * 1024;

using shim::Loaded;

// An iPhone with a 1000 MiB jetsam limit (500 MiB in the background),
// counting java, native and gpu (the default).
const char *phone = R"(
devices:
  - name: phone
    os: ios
    ram: 4GiB
    system: 1GiB
    kill: {rule: jetsam, limit: 1000MiB, background_limit: 500MiB}
)";

// One part: a 900 MiB file copied into native memory, then a prepare of
// 50 MiB native resident, 102 MiB native and 104 MiB Java transient.
const char *big = R"(
candidates:
  - id: big
    digest: 0a1b
    runtime: test-1
    parts:
      m:
        file: 900MiB
        load: {mode: copy, time: 100ms}
        prepare: {time: 50ms, transient: {native: 102MiB, java: 104MiB}, resident: {native: 50MiB}}
        inference: {time: 100ms}
workload: {path: [cold_start]}
)";

} // namespace

TEST_CASE("a stage's allocation is made whole, then the kill rules apply", "[world][rules]")
{
    // copy load: 900 MiB native.  prepare: 50 MiB native resident plus
    // 102 MiB native and 104 MiB java transient, one allocation: 1156 MiB,
    // over the 1000 MiB limit.  The peak and the record's footprint are
    // the whole 1156 MiB (charged category by category, a kill at the java
    // transient would report 1054 MiB).
    Loaded l(std::string("name: whole\nhorizon: 5s\nreplications: 1\n") + phone + big);
    mdl_rep r = shim::run_replication(l.s.cells[0]);
    CHECK(r.deaths_total == 1);
    CHECK(r.deaths[MDL_EXIT_LOW_MEMORY] == 1);
    CHECK(r.first_death_stage == MDL_STAGE_RUNTIME_PREPARE);
    CHECK(r.peak == 1156 * MiB);
    CHECK(r.first_death_counted == 1156 * MiB);
    REQUIRE(r.nrecords == 1);
    CHECK(r.records[0].pss_kb == 1156 * 1024);
}

TEST_CASE("the Java heap check refuses a stage's whole allocation", "[world][rules]")
{
    // java_heap_limit 100 MiB: the prepare's 104 MiB of Java fails before
    // anything of the stage is made, so only the load's 900 MiB is counted.
    Loaded l(std::string("name: heap\nhorizon: 5s\nreplications: 1\n") + R"(
devices:
  - name: droid
    os: android
    ram: 8GiB
    system: 1GiB
    cached_apps: 0
    cached_app_size: 100MiB
    kill: {rule: lmk, minfree: [{adj: 0, free: 100MiB}]}
    java_heap_limit: 100MiB
)" + std::string(big));
    mdl_rep r = shim::run_replication(l.s.cells[0]);
    CHECK(r.deaths[MDL_EXIT_JAVA_CRASH] == 1);
    CHECK(r.peak == 900 * MiB);
    CHECK(r.first_death_counted == 900 * MiB);
}

TEST_CASE("release_first: a load that kills the process is not started again in the dead "
          "process",
          "[world][rules]")
{
    // `small` is loaded by the first request.  The second needs `huge`
    // (1200 MiB, over the limit): release_first evicts `small`, whose
    // release starts the deferred load of `huge`, which dies at its first
    // allocation.  One start, one death: the dead process loads nothing.
    Loaded l(std::string("name: release-first\nhorizon: 5s\nreplications: 1\n") + phone + R"(
candidates:
  - id: split
    digest: 0a1b
    runtime: test-1
    parts:
      small: {file: 100MiB, load: {mode: copy, time: 100ms}, prepare: {time: 50ms}, inference: {time: 100ms}}
      huge: {file: 1200MiB, load: {mode: copy, time: 100ms}, prepare: {time: 50ms}, inference: {time: 100ms}}
workload:
  path: [cold_start, {requests: {every: 1s, count: 1, needs: [small]}},
         {requests: {every: 1s, count: 1, needs: [huge]}}]
policies: {residency: on_demand_release_first}
)");
    mdl_rep r = shim::run_replication(l.s.cells[0]);
    CHECK(r.deaths_total == 1);
    CHECK(r.deaths[MDL_EXIT_LOW_MEMORY] == 1);
    CHECK(r.first_death_stage == MDL_STAGE_LOAD);
    CHECK(r.switches == 2);
}

TEST_CASE("at one instant an execution's release comes before the next one's allocation",
          "[world][rules]")
{
    // One part (mmap, not counted; prepare 100 MiB resident), ready at
    // 150 ms.  Requests every 1 s from 1 s, each executing exactly 1 s with
    // a 600 MiB working set, sessions 2.  Request k ends at the instant
    // request k+1 allocates: with the release first the app holds 100 + 1
    // (session) + 600 = 701 MiB; the other order would hold two working
    // sets, 100 + 2 + 1200 > 1000, and die.
    Loaded l(std::string("name: same-instant\nhorizon: 6s\nreplications: 1\n") + phone + R"(
candidates:
  - id: one
    digest: 0a1b
    runtime: test-1
    parts:
      m:
        file: 100MiB
        load: {mode: mmap, time: 100ms}
        prepare: {time: 50ms, resident: {native: 100MiB}}
        inference: {time: 1s, working_set: {native: 600MiB}}
        session: {native: 1MiB}
workload:
  path: [cold_start, {requests: {every: 1s, count: 4}}]
policies: {sessions: 2}
)");
    mdl_rep r = shim::run_replication(l.s.cells[0]);
    CHECK(r.deaths_total == 0);
    CHECK(r.completed == 4);
    CHECK(r.peak == 701 * MiB);
}

namespace {

// A busy world: two sessions, a queue, an on-demand split, retries.
const char *busy = R"(
candidates:
  - id: split
    digest: 0a1b
    runtime: test-1
    parts:
      a: {file: 100MiB, load: {mode: copy, time: 100ms}, prepare: {time: 50ms}, inference: {time: 700ms, working_set: {native: 20MiB}}}
      b: {file: 100MiB, load: {mode: copy, time: 100ms}, prepare: {time: 50ms}, inference: {time: 500ms, working_set: {native: 20MiB}}}
workload:
  path: [cold_start, {requests: {every: 100ms, count: 40}}]
  timeout: 2s
policies: {sessions: 2, queue: 8, residency: on_demand_overlap, retry: {kind: fixed, delay: 300ms, max: 2}}
)";

struct Open {
    world w;
    mdl_rep out;
    sim_error err;
    explicit Open(const mdl_cell &cell)
    {
        sim_error_clear(&err);
        int rc = w__open(&w, &cell, 0, nullptr, nullptr, nullptr, &out, &err);
        INFO(err.msg);
        REQUIRE(rc == SIM_OK);
    }
    ~Open() { w__close(&w); }
    // runs to t and returns the checker's verdict there
    int at(sim_time t)
    {
        int run = sim_run(w.e, t);
        REQUIRE(run >= 0);
        return mdl_world_validate(&w, &err);
    }
};

} // namespace

TEST_CASE("the world checker finds nothing in a busy world", "[world][check]")
{
    Loaded l(std::string("name: busy\nhorizon: 10s\nreplications: 1\n") + phone + busy);
    Open o(l.s.cells[0]);
    for (sim_time t = 50000; t <= 8000000; t += 50000) {
        int rc = o.at(t);
        INFO("t = " << t << ": " << o.err.msg);
        REQUIRE(rc == SIM_OK);
    }
    CHECK(o.out.completed > 0);
    CHECK(o.out.rejected + o.out.timed_out > 0); // the queue was full or slow at times
}

TEST_CASE("the world checker catches a broken invariant", "[world][check]")
{
    Loaded l(std::string("name: busy\nhorizon: 10s\nreplications: 1\n") + phone + busy);
    SECTION("a busy count left one too high")
    {
        Open o(l.s.cells[0]);
        REQUIRE(o.at(1000000) == SIM_OK);
        o.w.proc.parts[0].busy++;
        CHECK(mdl_world_validate(&o.w, &o.err) == SIM_EINTERNAL);
        CHECK(std::string(o.err.msg).find("part 0 counts") != std::string::npos);
        o.w.proc.parts[0].busy--;
    }
    SECTION("a queue length off by one")
    {
        Open o(l.s.cells[0]);
        REQUIRE(o.at(1000000) == SIM_OK);
        REQUIRE(o.w.proc.q_len > 0);
        o.w.proc.q_len--;
        CHECK(mdl_world_validate(&o.w, &o.err) == SIM_EINTERNAL);
        CHECK(std::string(o.err.msg).find("queue") != std::string::npos);
        o.w.proc.q_len++;
    }
    SECTION("a part's resident that no longer matches the ledger")
    {
        Open o(l.s.cells[0]);
        REQUIRE(o.at(1000000) == SIM_OK);
        o.w.proc.parts[0].resident[MDL_CAT_NATIVE] += 1;
        CHECK(mdl_world_validate(&o.w, &o.err) == SIM_EINTERNAL);
        CHECK(std::string(o.err.msg).find("resident") != std::string::npos);
        o.w.proc.parts[0].resident[MDL_CAT_NATIVE] -= 1;
    }
    SECTION("an execution slot counted twice")
    {
        Open o(l.s.cells[0]);
        REQUIRE(o.at(1000000) == SIM_OK);
        o.w.proc.running++;
        CHECK(mdl_world_validate(&o.w, &o.err) == SIM_EINTERNAL);
        CHECK(std::string(o.err.msg).find("slots") != std::string::npos);
        o.w.proc.running--;
    }
}

TEST_CASE("the world checker follows the app's own memory and the successor app",
          "[world][check][phone]")
{
    // the busy world with the app's baseline, a page hold and a successor app
    // during a background step
    std::string phone_succ = std::string(phone) + "    successor: {size: 100MiB}\n";
    Loaded l(std::string("name: app\nhorizon: 10s\nreplications: 1\n") + phone_succ + R"(
candidates:
  - id: m
    digest: 0a1b
    runtime: test-1
    parts:
      m: {file: 100MiB, load: {mode: copy, time: 100ms}, prepare: {time: 50ms}, inference: {time: 100ms}}
app: {baseline: {native: 50MiB}}
workload:
  path: [cold_start, {enter: {page: cam, holds: {gpu: 20MiB}}}, {requests: {every: 500ms, count: 4}},
         {background: 2s}, {leave: cam}, {requests: {every: 500ms, count: 4}}]
)");
    {
        Open o(l.s.cells[0]);
        for (sim_time t = 50000; t <= 8000000; t += 50000) {
            int rc = o.at(t);
            INFO("t = " << t << ": " << o.err.msg);
            REQUIRE(rc == SIM_OK);
        }
        CHECK(o.out.completed == 8);
    }
    SECTION("a baseline that no longer matches the ledger")
    {
        Open o(l.s.cells[0]);
        REQUIRE(o.at(1000000) == SIM_OK);
        o.w.proc.app[MDL_CAT_NATIVE] += 1;
        CHECK(mdl_world_validate(&o.w, &o.err) == SIM_EINTERNAL);
        CHECK(std::string(o.err.msg).find("app owner") != std::string::npos);
        o.w.proc.app[MDL_CAT_NATIVE] -= 1;
    }
    SECTION("a successor app left behind in the foreground")
    {
        Open o(l.s.cells[0]);
        REQUIRE(o.at(1000000) == SIM_OK);
        o.w.dstate.successor = 1;
        CHECK(mdl_world_validate(&o.w, &o.err) == SIM_EINTERNAL);
        CHECK(std::string(o.err.msg).find("successor") != std::string::npos);
        o.w.dstate.successor = 0;
    }
}
