/* probe.c - `oomsim probe EVENTS.json`.
 *
 * Messages go to stderr bare (no "oomsim:" prefix): for the inputs the
 * reference rejects they must be its exact text. */
#include "cli.h"
#include "replay/replay.h"

#include <stdio.h>
#include <string.h>

static const cli_opt probe_opts[] = {
    CLI_HELP_OPT,
};

const cli_cmd cli_probe_cmd = {
    .name = "probe",
    .usage = "usage: oomsim probe EVENTS.json\n"
        "  reads a JSON array of {time_ms, stage, rss_mb, budget_mb, sessions,\n"
        "  exit_reason} events and prints the peak, every event over budget and the\n"
        "  exit reason (docs/probe.md)\n",
    .opts = probe_opts,
    .nopts = sizeof probe_opts / sizeof *probe_opts,
    .unexpected = "one events file is needed; '%s' is unexpected",
};

int cli_probe(int argc, char **argv)
{
    /* one argument: --help, or the events file (whatever its name) */
    if (argc == 1 && cli_opt_named(&cli_probe_cmd, argv[0]) != NULL) {
        cli_help(&cli_probe_cmd, stdout);
        return CLI_OK;
    }
    if (argc != 1)
        return cli_usage_error("probe", "one events file is needed");
    sim_error err;
    sim_error_clear(&err);
    char *report = NULL;
    int rc = rpl_probe_file(argv[0], &report, &err);
    if (rc != SIM_OK)
        return cli_report_verbatim(&err);
    int status = cli_write_stdout(report, strlen(report));
    rpl_probe_free(report);
    return status;
}
