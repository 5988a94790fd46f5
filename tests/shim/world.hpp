// Helpers for the tests that run the model: one replication with its
// checks, and the plan `oomsim run` makes of a scenario.
#ifndef OOMSIM_TESTS_SHIM_WORLD_HPP
#define OOMSIM_TESTS_SHIM_WORLD_HPP

#include <catch2/catch.hpp>

#include <vector>

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

// The plan `oomsim run` makes of s at `reps` replications; `pj` receives the
// cells' policy labels and must outlive the plan.
inline res_plan plan_of(const scn_scenario &s, uint64_t reps, std::vector<const char *> &pj)
{
    pj.clear();
    for (unsigned i = 0; i < s.ncells; i++)
        pj.push_back(s.policy_json[i % s.npolicies]);
    return res_plan{s.name, s.about, s.seed, reps, s.horizon, s.cells, pj.data(), s.ncells, 0, nullptr, s.digest};
}

} // namespace shim

#endif
