// oomsim replay: a trace written by gen from scenario S, replayed under S,
// reproduces the replication it recorded (peak, stage at the peak,
// deaths, requests) exactly; under another policy it runs the recorded
// arrivals and costs (docs/results.md, docs/traces.md).
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <string>

#include "models/models.h"
#include "replay/replay.h"
#include "scenarios/scenarios.h"
#include "shim/shim.hpp"
#include "traces/traces.h"

using namespace shim;

namespace {

int write_event(void *ctx, const trc_event *e, sim_error *err)
{
    return trc_write(static_cast<trc_writer *>(ctx), e, err);
}

struct Case {
    const char *scenario;
    unsigned cell;
    uint64_t rep;
};

mdl_rep record(const mdl_cell &cell, uint64_t rep, const std::string &path)
{
    FILE *f = std::fopen(path.c_str(), "wb");
    REQUIRE(f != nullptr);
    sim_error err;
    sim_error_clear(&err);
    trc_writer *w = trc_writer_create(f, (trc_format)trc_format_of_path(path.c_str()), &err);
    mdl_trace_sink sink{write_event, w, nullptr};
    mdl_rep r;
    int rc = mdl_run_replication_traced(&cell, rep, nullptr, nullptr, &sink, &r, &err);
    INFO(err.msg);
    REQUIRE(rc == SIM_OK);
    REQUIRE(trc_writer_finish(w, &err) == SIM_OK);
    trc_writer_destroy(w);
    std::fclose(f);
    return r;
}

} // namespace

TEST_CASE("replay: gen then replay under the same scenario reproduces the replication",
          "[replay]")
{
    const Case cases[] = {
        {"scenarios/capacity-plan.yaml", 1, 3},   // sessions 2, delegate failures possible
        {"teach/prewarm-boot-loop.yaml", 0, 0},   // 46 deaths at start-up, relaunches
        {"teach/timeout-retry-storm.yaml", 0, 2}, // timeouts, retries, duplicate working sets
        {"teach/image-queue.yaml", 0, 1},         // a growing queue, low-memory deaths
        {"teach/split-switch-overlap.yaml", 0, 0}, // on-demand switches, a death at a switch
        {"teach/cache-every-start.yaml", 0, 0},   // cache rebuilds at every start
        {"teach/background-reclaim.yaml", 0, 0},  // background, pressure spikes
        {"scenarios/split-vs-preload.yaml", 2, 5}, // release-first residency
        {"teach/owner-leak.yaml", 0, 0},          // owners' sessions, a leak, a reclaim
        {"teach/remote-inference-service.yaml", 0, 0}, // a service process's deaths, restarts
    };
    TempDir dir;
    const char *ext[] = {".jsonl", ".msgpack", ".json"};
    int k = 0;
    for (const Case &c : cases) {
        scn_scenario s;
        sim_error err;
        sim_error_clear(&err);
        REQUIRE(scn_scenario_load_catalog(c.scenario, &s, &err) == SIM_OK);
        std::string path = dir.file("t" + std::to_string(k) + ext[k % 3]);
        k++;
        mdl_rep a = record(s.cells[c.cell], c.rep, path);
        char id[TRC_TEXT_MAX];
        mdl_replay rp;
        int rc = rpl_replay_load(path.c_str(), s.cells[c.cell].candidate, &rp, id, &err);
        INFO(c.scenario << " " << err.msg);
        REQUIRE(rc == SIM_OK);
        CHECK(std::string(id) == s.cells[c.cell].candidate->id);
        mdl_cell cell = s.cells[c.cell];
        cell.replay = &rp;
        mdl_rep b;
        REQUIRE(mdl_run_replication(&cell, c.rep, nullptr, nullptr, &b, &err) == SIM_OK);
        CHECK(b.peak == a.peak);
        CHECK(b.peak_stage == a.peak_stage);
        CHECK(b.deaths_total == a.deaths_total);
        CHECK(std::memcmp(b.deaths, a.deaths, sizeof a.deaths) == 0);
        CHECK(b.boot_loop == a.boot_loop);
        CHECK(b.arrived == a.arrived);
        CHECK(b.completed == a.completed);
        CHECK(b.rejected == a.rejected);
        CHECK(b.timed_out == a.timed_out);
        CHECK(b.duplicates == a.duplicates);
        CHECK(b.alive_us == a.alive_us);
        CHECK(b.latency_sum == a.latency_sum);
        rpl_replay_free(&rp);
        scn_scenario_release(&s);
    }
}

TEST_CASE("replay: a repeated requests step that ends at its last arrival", "[replay]")
{
    // three occurrences of one step (the same requests entry), each a rate
    // with a count: each ends at its own last arrival
    const std::string yaml = R"(name: rep
horizon: 2min
replications: 1
seed: 5
devices: [android-3g]
candidates: [ocr-v3]
workload:
  path:
    - cold_start
    - repeat: {times: 3, steps: [{requests: {rate: "2/s", count: 6}}, {background: 2s}]}
  relaunch: 5s
policies: {sessions: 2}
)";
    scn_scenario s;
    sim_error err;
    sim_error_clear(&err);
    REQUIRE(scn_scenario_parse(yaml.data(), yaml.size(), "rep.yaml", &s, &err) == SIM_OK);
    TempDir dir;
    std::string path = dir.file("r.jsonl");
    for (uint64_t rep = 0; rep < 4; rep++) {
        mdl_rep a = record(s.cells[0], rep, path);
        mdl_replay rp;
        REQUIRE(rpl_replay_load(path.c_str(), s.cells[0].candidate, &rp, nullptr, &err) ==
                SIM_OK);
        mdl_cell cell = s.cells[0];
        cell.replay = &rp;
        mdl_rep b;
        REQUIRE(mdl_run_replication(&cell, rep, nullptr, nullptr, &b, &err) == SIM_OK);
        CHECK(a.arrived == b.arrived);
        CHECK(a.completed == b.completed);
        CHECK(a.peak == b.peak);
        CHECK(a.deaths_total == b.deaths_total);
        CHECK(a.latency_sum == b.latency_sum);
        rpl_replay_free(&rp);
    }
    scn_scenario_release(&s);
}

TEST_CASE("replay: the command runs every cell of the trace's candidate", "[replay][cli]")
{
    TempDir dir;
    std::string t = dir.file("s.msgpack");
    RunResult g = oomsim({"gen", "timeout-retry-storm", "--replication", "2", "-o", t});
    REQUIRE(g.status == 0);
    RunResult r = oomsim({"replay", t, "--scenario", "timeout-retry-storm", "--replication", "2",
                          "--format", "json"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out.find("\"replications\": 1") != std::string::npos);
    CHECK(r.out.find("\"cancel_on_timeout\": true") != std::string::npos); // the other policy
    // the recorded cell's peak, as gen reported it
    size_t p = g.err.find("peak ");
    REQUIRE(p != std::string::npos);
    CHECK(r.out.find("\"comparisons\"") != std::string::npos);
    // a scenario without the trace's candidate is refused
    RunResult bad = oomsim({"replay", t, "--scenario", "capacity-plan"});
    CHECK(bad.status == 1);
    CHECK(bad.err.find("the trace's candidate 'slow-cpu' is not a candidate of") !=
          std::string::npos);
    CHECK(oomsim({"replay", t}).status == 2);
}
