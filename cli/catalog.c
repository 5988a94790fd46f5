/* catalog.c - `oomsim catalog`: the shipped devices, candidates and
 * scenarios, each with its `about` line. */
#include "cli.h"
#include "scenarios/scenarios.h"

#include <stdio.h>
#include <string.h>

static const cli_opt catalog_opts[] = {
    CLI_HELP_OPT,
};

const cli_cmd cli_catalog_cmd = {
    .name = "catalog",
    .usage = "usage: oomsim catalog\n"
        "  lists the shipped devices, candidates and scenarios; a scenario names\n"
        "  them as `devices: [android-4g]` or `catalog/devices/android-4g.yaml`\n",
    .opts = catalog_opts,
    .nopts = sizeof catalog_opts / sizeof *catalog_opts,
    .unexpected = "unexpected argument '%s'",
};

int cli_catalog(int argc, char **argv)
{
    char none; /* no option takes a value, no argument is taken */
    int rc = cli_parse(&cli_catalog_cmd, argc, argv, &none);
    if (rc != CLI_OK)
        return rc == CLI_DONE ? CLI_OK : rc;
    /* scenarios in two groups: plans, then the teaching scenarios (teach/) */
    static const char *const titles[] = {"devices", "candidates", "scenarios",
                                         "teaching scenarios (one failure mode each)"};
    for (int group = 0; group < 4; group++) {
        int kind = group < SCN_KIND_SCENARIO ? group : SCN_KIND_SCENARIO;
        printf("%s%s:\n", group == 0 ? "" : "\n", titles[group]);
        for (unsigned i = 0; i < scn_catalog_count(); i++) {
            scn_catalog_item it;
            scn_catalog_get(i, &it);
            int teach = strncmp(it.path, "teach/", 6) == 0;
            if ((int)it.kind != kind || (kind == SCN_KIND_SCENARIO && teach != (group == 3)))
                continue;
            char name[MDL_NAME_MAX], about[2048];
            sim_error err;
            sim_error_clear(&err);
            if (scn_catalog_describe(&it, name, about, sizeof about, &err) != SIM_OK)
                return cli_report(&err);
            /* the first sentence is the line; a scenario's about is a paragraph */
            char *stop = strstr(about, ". ");
            if (stop != NULL && kind == SCN_KIND_SCENARIO)
                stop[1] = '\0';
            printf("  %-26s %s\n", name, about);
        }
    }
    if (fflush(stdout) != 0)
        return CLI_FAILURE;
    return CLI_OK;
}
