/* validate.c - `oomsim validate FILE...`: checks scenario, device and
 * candidate files without running anything; exit 1 at the first invalid
 * file (spec/RESULTS.md). */
#include "cli.h"
#include "scenarios/scenarios.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int check_yaml(const char *path, sim_error *err, char *what, size_t n)
{
    char *text = NULL;
    size_t len = 0;
    int rc = sim_read_file(path, (size_t)16 << 20, &text, &len, err);
    if (rc != SIM_OK)
        return rc;
    scn_kind kind = scn_kind_of_text(text, len);
    free(text);
    if (kind == SCN_KIND_DEVICE) {
        mdl_device d;
        rc = scn_device_load(path, &d, err);
        if (rc == SIM_OK)
            snprintf(what, n, "device %s", d.name);
        scn_device_release(&d);
    } else if (kind == SCN_KIND_CANDIDATE) {
        mdl_candidate c;
        rc = scn_candidate_load(path, &c, err);
        if (rc == SIM_OK)
            snprintf(what, n, "candidate %s, %u parts", c.id, c.nparts);
        scn_candidate_release(&c);
    } else {
        /* a scenario, or something that should have been one: its
         * messages say what is wrong */
        scn_scenario s;
        rc = scn_scenario_load(path, &s, err);
        if (rc == SIM_OK)
            snprintf(what, n, "scenario %s, %u cells x %llu replications", s.name, s.ncells,
                     (unsigned long long)s.replications);
        scn_scenario_release(&s);
    }
    return rc;
}

int cli_validate(int argc, char **argv)
{
    if (argc < 1 || strcmp(argv[0], "-h") == 0 || strcmp(argv[0], "--help") == 0) {
        int help = argc >= 1;
        fprintf(help ? stdout : stderr, "usage: oomsim validate FILE...\n"
                "  checks scenario, device and candidate files (.yaml, .yml)\n");
        return help ? CLI_OK : CLI_USAGE;
    }
    for (int i = 0; i < argc; i++) {
        const char *path = argv[i];
        sim_error err;
        sim_error_clear(&err);
        char what[256] = "";
        int rc;
        if (ends_with(path, ".yaml") || ends_with(path, ".yml")) {
            rc = check_yaml(path, &err, what, sizeof what);
        } else if (ends_with(path, ".json") || ends_with(path, ".jsonl") ||
                   ends_with(path, ".msgpack")) {
            rc = sim_error_set(&err, SIM_EINPUT, "%s: trace files are not read by this version "
                               "of oomsim yet", path);
        } else {
            rc = sim_error_set(&err, SIM_EINPUT, "%s: unknown kind of file (expected .yaml, "
                               ".yml, .json, .jsonl or .msgpack)", path);
        }
        if (rc != SIM_OK)
            return cli_report(&err);
        printf("%s: ok (%s)\n", path, what);
    }
    return fflush(stdout) == 0 ? CLI_OK : CLI_FAILURE;
}
