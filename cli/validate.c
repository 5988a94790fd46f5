/* validate.c - `oomsim validate FILE...`: checks scenario, device and
 * candidate files without running anything; exit 1 at the first invalid
 * file (docs/results.md). */
#include "cli.h"
#include "scenarios/scenarios.h"
#include "traces/traces.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int check_yaml(const char *path, sim_error *err, char *what, size_t n, FILE *after)
{
    char *text = NULL;
    size_t len = 0;
    int rc = sim_read_file(path, (size_t)16 << 20, &text, &len, err);
    if (rc != SIM_OK)
        return rc;
    scn_kind kind = scn_kind_of_text(text, len);
    if (kind == SCN_KIND_FRAGMENT) {
        rc = scn_fragment_check(text, len, path, err);
        free(text);
        if (rc == SIM_OK)
            snprintf(what, n, "a scenario's block (app, field or candidates)");
        return rc;
    }
    free(text);
    if (kind == SCN_KIND_DEVICE) {
        mdl_device d;
        rc = scn_device_load(path, &d, err);
        if (rc == SIM_OK) {
            snprintf(what, n, "device %s", d.name);
            cli_say_provenance(after, "  ", &d);
        }
        scn_device_release(&d);
    } else if (kind == SCN_KIND_CANDIDATE) {
        mdl_candidate c;
        rc = scn_candidate_load(path, &c, err);
        if (rc == SIM_OK)
            snprintf(what, n, "candidate %s, %u part%s", c.id, c.nparts, SIM_S(c.nparts));
        scn_candidate_release(&c);
    } else {
        /* a scenario, or something that should have been one: its
         * messages say what is wrong */
        scn_scenario s;
        rc = scn_scenario_load(path, &s, err);
        if (rc == SIM_OK) {
            mdl_estimate most;
            scn_largest_estimate(&s, &most);
            for (unsigned d = 0; d < s.ndevices; d++)
                cli_say_provenance(after, "  ", &s.devices[d]);
            unsigned long long j = cli_default_threads();
            snprintf(what, n, "scenario %s, %u cell%s x %llu replication%s, up to about %.3g "
                     "events per replication: a run of at most about %.2g s on %llu thread%s",
                     s.name, s.ncells, SIM_S(s.ncells), (unsigned long long)s.replications,
                     SIM_S(s.replications), most.total,
                     cli_run_seconds(&s, (unsigned)j), j, j == 1 ? "" : "s");
            /* field entries no device of the plan matches (docs/field.md) */
            for (unsigned k = 0; k < s.nfield; k++) {
                const mdl_field *f = &s.field[k];
                unsigned m = 0;
                for (unsigned d = 0; d < s.ndevices; d++)
                    m += f->device[0] ? strcmp(s.devices[d].name, f->device) == 0
                                      : s.devices[d].ram == f->ram;
                if (m == 0 && f->device[0])
                    printf("%s: field entry %u: no device of the plan is named %s\n", path, k,
                           f->device);
                else if (m == 0)
                    printf("%s: field entry %u: no device of the plan has %.0f MiB of RAM\n",
                           path, k, (double)f->ram / 1048576.0);
            }
            scn_scenario_release(&s);
        }
    }
    return rc;
}

/* Reads a whole trace (streaming): every event checked, the unpaired
 * begin/end events listed on stdout. */
static int check_trace(const char *path, int drop_unknown, sim_error *err, char *what, size_t n)
{
    trc_read_opts opts = {drop_unknown};
    trc_reader *r = trc_open(path, -1, &opts, err);
    if (r == NULL)
        return err->code;
    trc_pairs *p = trc_pairs_create(err);
    if (p == NULL) {
        trc_close(r);
        return err->code;
    }
    trc_event e;
    int rc;
    while ((rc = trc_next(r, &e, err)) == 1)
        if ((rc = trc_pairs_add(p, &e, trc_events_read(r) - 1, err)) != SIM_OK)
            break;
    if (rc == 0) {
        size_t nu = 0;
        const trc_unpaired *u = trc_pairs_report(p, &nu);
        int w = snprintf(what, n, "trace, %llu event%s, %zu unpaired begin/end",
                         (unsigned long long)trc_events_read(r), SIM_S(trc_events_read(r)), nu);
        if (drop_unknown && w > 0 && (size_t)w < n)
            snprintf(what + w, n - (size_t)w, ", %llu keys outside the allow-list dropped",
                     (unsigned long long)trc_unknown_dropped(r));
        for (size_t k = 0; k < nu; k++)
            printf("%s: event %llu: %s of %s%s%s%s without its %s\n", path,
                   (unsigned long long)u[k].index, u[k].is_end ? "end" : "begin",
                   trc_stage_name(u[k].stage), u[k].part[0] ? " part " : "", u[k].part,
                   u[k].session >= 0 ? " (a session)" : "", u[k].is_end ? "begin" : "end");
        rc = SIM_OK;
    }
    trc_pairs_destroy(p);
    trc_close(r);
    return rc;
}

/* The table gives the help; the files are read in order as they come,
 * --drop-unknown for the traces after it (so it is not cli_parse's). */
static const cli_opt validate_opts[] = {
    {"--drop-unknown", NULL, CLI_OPT_FLAG, 0, CLI_NOWHERE, 0, 0, NULL, NULL, 0,
     "  --drop-unknown  skip a trace event's unknown keys (for the files after it)\n"},
    CLI_HELP_OPT,
};

const cli_cmd cli_validate_cmd = {
    .name = "validate",
    .usage = "usage: oomsim validate [--drop-unknown] FILE...\n"
        "  checks scenario, device and candidate files (.yaml, .yml) and traces\n"
        "  (.json, .jsonl, .msgpack, .mp); lists a trace's unpaired begin/end\n",
    .tail = "  prints the run's size estimate for a scenario\n",
    .opts = validate_opts,
    .nopts = sizeof validate_opts / sizeof *validate_opts,
    .unexpected = "unexpected argument '%s'",
};

int cli_validate(int argc, char **argv)
{
    if (argc < 1)
        return cli_usage_error("validate", "a file to check is needed");
    const cli_opt *first = cli_opt_named(&cli_validate_cmd, argv[0]);
    if (first != NULL && first->kind == CLI_OPT_HELP) {
        cli_help(&cli_validate_cmd, stdout);
        return CLI_OK;
    }
    int drop_unknown = 0;
    for (int i = 0; i < argc; i++) {
        const char *path = argv[i];
        const cli_opt *o = cli_opt_named(&cli_validate_cmd, path);
        if (o != NULL && o->kind == CLI_OPT_FLAG) {
            drop_unknown = 1; /* for the traces after it */
            continue;
        }
        sim_error err;
        sim_error_clear(&err);
        char what[256] = "";
        int rc;
        /* what the profiles' values rest on, said after the ok line */
        char *after_text = NULL;
        size_t after_len = 0;
        FILE *after = open_memstream(&after_text, &after_len);
        if (after == NULL) {
            sim_error_set(&err, SIM_ENOMEM, "out of memory");
            return cli_report(&err);
        }
        if (ends_with(path, ".yaml") || ends_with(path, ".yml")) {
            rc = check_yaml(path, &err, what, sizeof what, after);
        } else if (trc_format_of_path(path) >= 0) {
            rc = check_trace(path, drop_unknown, &err, what, sizeof what);
        } else {
            rc = sim_error_set(&err, SIM_EINPUT, "%s: unknown kind of file (expected .yaml, "
                               ".yml, .json, .jsonl, .msgpack or .mp)", path);
        }
        int closed = fclose(after);
        if (rc == SIM_OK && closed != 0)
            rc = sim_error_set(&err, SIM_ENOMEM, "out of memory");
        if (rc != SIM_OK) {
            free(after_text);
            return cli_report(&err);
        }
        printf("%s: ok (%s)\n%s", path, what, after_text != NULL ? after_text : "");
        free(after_text);
    }
    return fflush(stdout) == 0 ? CLI_OK : CLI_FAILURE;
}
