/* catalog.c - `oomsim catalog`: the shipped devices, candidates and
 * scenarios, each with its `about` line. */
#include "cli.h"
#include "scenarios/scenarios.h"

#include <stdio.h>
#include <string.h>

int cli_catalog(int argc, char **argv)
{
    if (argc > 0) {
        int help = strcmp(argv[0], "-h") == 0 || strcmp(argv[0], "--help") == 0;
        fprintf(help ? stdout : stderr, "usage: oomsim catalog\n"
                "  lists the shipped devices, candidates and scenarios; a scenario names\n"
                "  them as `devices: [android-4g]` or `catalog/devices/android-4g.yaml`\n");
        return help ? CLI_OK : CLI_USAGE;
    }
    static const char *const titles[] = {"devices", "candidates", "scenarios"};
    for (int kind = SCN_KIND_DEVICE; kind <= SCN_KIND_SCENARIO; kind++) {
        printf("%s%s:\n", kind == SCN_KIND_DEVICE ? "" : "\n", titles[kind]);
        for (unsigned i = 0; i < scn_catalog_count(); i++) {
            scn_catalog_item it;
            scn_catalog_get(i, &it);
            if ((int)it.kind != kind)
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
            printf("  %-16s %s\n", name, about);
        }
    }
    if (fflush(stdout) != 0)
        return CLI_FAILURE;
    return CLI_OK;
}
