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
    .usage = "usage: oomsim catalog [NAME]\n"
        "  lists the shipped devices, candidates and scenarios; a scenario names\n"
        "  them as `devices: [android-4g]` or `catalog/devices/android-4g.yaml`.\n"
        "  With NAME (an entry's name, or its path as listed), prints that entry's\n"
        "  YAML as shipped, with its comments: its sources and what is assumed\n",
    .opts = catalog_opts,
    .nopts = sizeof catalog_opts / sizeof *catalog_opts,
    .unexpected = "unexpected argument '%s'",
    .extra = "one name at a time; '%s' is extra",
    .positional = 0,
    .positionals = 1,
};

/* The entry named `name` (its name, its path, or its path without
 * ".yaml"), printed as shipped. */
static int print_entry(const char *name)
{
    for (unsigned i = 0; i < scn_catalog_count(); i++) {
        scn_catalog_item it;
        scn_catalog_get(i, &it);
        char own[MDL_NAME_MAX], about[8];
        sim_error err;
        sim_error_clear(&err);
        size_t pl = strlen(it.path);
        int by_path = strcmp(it.path, name) == 0 ||
                      (pl > 5 && strlen(name) == pl - 5 && strncmp(it.path, name, pl - 5) == 0);
        if (!by_path && (scn_catalog_describe(&it, own, about, sizeof about, &err) != SIM_OK ||
                         strcmp(own, name) != 0))
            continue;
        if (fwrite(it.text, 1, it.len, stdout) != it.len || fflush(stdout) != 0)
            return CLI_FAILURE;
        return CLI_OK;
    }
    fprintf(stderr, "oomsim catalog: no entry named '%s' (oomsim catalog lists them)\n", name);
    return CLI_INPUT;
}

int cli_catalog(int argc, char **argv)
{
    const char *entry = NULL; /* the one argument: an entry's name */
    int rc = cli_parse(&cli_catalog_cmd, argc, argv, &entry);
    if (rc != CLI_OK)
        return rc == CLI_DONE ? CLI_OK : rc;
    if (entry != NULL)
        return print_entry(entry);
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
