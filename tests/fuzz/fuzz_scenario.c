/* fuzz_scenario.c - libFuzzer target for the scenario loader
 * (scenarios/scenario.c over the YAML layer and the profile loaders) and
 * the world model behind it.  Any input must load or be refused with a
 * located message; a scenario that loads must run one replication of its
 * first cell (horizon cut to 200 ms, so a fuzzed rate cannot make one
 * input slow) with no leak and no error other than the model's own limit
 * on requests in the system; never crash, leak or hang.
 *
 * fuzz_scenario_check() is also called by tests/test_fuzz_corpus.cpp on
 * every file of tests/fuzz/corpus/scenario/, so the corpus is a
 * regression suite of the normal and the sanitizer builds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scenarios/scenarios.h"

const char *fuzz_scenario_check(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* NULL when the input was handled as it must be, else what went wrong. */
const char *fuzz_scenario_check(const uint8_t *data, size_t size)
{
    scn_scenario s;
    sim_error err;
    sim_error_clear(&err);
    int rc = scn_scenario_parse((const char *)data, size, "fuzz.yaml", &s, &err);
    if (rc != SIM_OK) {
        if (s.cells != NULL)
            return "a refused scenario left cells behind";
        /* located in this file or in an included one */
        if (err.msg[0] == '\0' || strchr(err.msg, ':') == NULL)
            return "a refusal without a located message";
        return NULL;
    }
    const char *bad = NULL;
    if (s.ncells == 0 || s.cells == NULL || s.replications == 0) {
        bad = "a scenario loaded with nothing to run";
    } else {
        mdl_cell cell = s.cells[0];
        if (cell.horizon > 200000)
            cell.horizon = 200000;
        mdl_rep rep;
        sim_error_clear(&err);
        rc = mdl_run_replication(&cell, 0, NULL, NULL, &rep, &err);
        if (rc == SIM_OK && rep.leaks != 0)
            bad = "a replication leaked";
        else if (rc != SIM_OK && rc != SIM_ELIMIT)
            bad = "a replication of a valid scenario failed";
    }
    scn_scenario_release(&s);
    return bad;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (fuzz_scenario_check(data, size) != NULL)
        abort();
    return 0;
}
