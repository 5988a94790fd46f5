// Helpers for the tests that run the model: one replication with its
// checks, and the plan `oomsim run` makes of a scenario.
#ifndef OOMSIM_TESTS_SHIM_WORLD_HPP
#define OOMSIM_TESTS_SHIM_WORLD_HPP

#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "cli/cli.h"

#include "models/models.h"
#include "results/results.h"
#include "scenarios/scenarios.h"

namespace shim {

// Runs replication `rep` of `cell`; REQUIREs success and, when asked, no leak.
inline mdl_rep run_replication(const mdl_cell &cell, uint64_t rep = 0,
                               const mdl_times_sink *sink = nullptr, bool no_leaks = true)
{
    mdl_rep r;
    sim_error err;
    sim_error_clear(&err);
    int rc = mdl_run_replication(&cell, rep, nullptr, sink, &r, &err);
    INFO(err.msg);
    REQUIRE(rc == SIM_OK);
    if (no_leaks)
        REQUIRE(r.leaks == 0);
    return r;
}

// A scenario parsed from YAML text (its messages name `file`); REQUIREs
// that it loads, and releases it at the end of the scope.
struct Loaded {
    scn_scenario s{};
    explicit Loaded(const std::string &yaml, const char *file = "test.yaml")
    {
        sim_error err;
        sim_error_clear(&err);
        int rc = scn_scenario_parse(yaml.data(), yaml.size(), file, &s, &err);
        INFO(err.msg);
        REQUIRE(rc == SIM_OK);
    }
    ~Loaded() { scn_scenario_release(&s); }
    // Replication rep of cell `cell`, as run_replication.
    mdl_rep run(unsigned cell, uint64_t rep = 0, const mdl_times_sink *sink = nullptr,
                bool no_leaks = true)
    {
        return run_replication(s.cells[cell], rep, sink, no_leaks);
    }
    Loaded(const Loaded &) = delete;
    Loaded &operator=(const Loaded &) = delete;
};

// Replication rep of `cell` with its timeline sent to fn(ctx, event); as
// run_replication, without the leak check.
inline mdl_rep run_traced(const mdl_cell &cell, int (*fn)(void *, const trc_event *, sim_error *),
                          void *ctx, uint64_t rep = 0)
{
    mdl_trace_sink sink = {fn, ctx, NULL};
    mdl_rep r;
    sim_error err;
    sim_error_clear(&err);
    int rc = mdl_run_replication_traced(&cell, rep, nullptr, nullptr, &sink, &r, &err);
    INFO(err.msg);
    REQUIRE(rc == SIM_OK);
    return r;
}

// The plan `oomsim run` makes of s (cli_plan_of) at `reps` replications;
// `pj` receives the cells' policy labels and must outlive the plan.
inline res_plan plan_of(const scn_scenario &s, uint64_t reps, std::vector<const char *> &pj)
{
    res_plan p;
    const char **labels = nullptr;
    sim_error err;
    sim_error_clear(&err);
    REQUIRE(cli_plan_of(&s, &p, &labels, &err) == SIM_OK);
    pj.assign(labels, labels + s.ncells);
    std::free(labels);
    p.policy_json = pj.data();
    p.replications = reps;
    return p;
}

// One part: a `file` mapped (mode mmap, `hot`: read at every inference, or
// not), load and prepare 100 ms each, inference 100 ms, nothing else held.
inline std::string mapped_part(const char *file, bool hot)
{
    return std::string(R"(
candidates:
  - id: m
    digest: 0a1b
    runtime: test-1
    parts:
      m:
        file: )") + file + "\n        load: {mode: mmap, time: 100ms" +
           (hot ? ", file_hot: true" : "") + R"(}
        prepare: {time: 100ms}
        inference: {time: 100ms}
)";
}

} // namespace shim

#endif
