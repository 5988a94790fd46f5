/* main.c - `oomsim`: subcommand dispatch, help and exit statuses. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

typedef struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *synopsis;
} command;

static const command commands[] = {
    {"run", cli_run, "run [SCENARIO.yaml] [-o DIR] [-r N] [--seed S] [-j N] [--format F]\n"
                     "                      predict peaks and deaths for every cell"},
    {"replay", cli_replay, "replay TRACE --scenario S [--replication K] [-o DIR] [--format F]\n"
                           "                      a trace-driven run of the scenario's cells"},
    {"explain", cli_explain, "explain SCENARIO [--replication K] [--cell N]\n"
                             "                      one replication told as a timeline"},
    {"gen", cli_gen, "gen SCENARIO -o TRACE [--replication K] [--cell N]\n"
                     "                      write one replication's event timeline as a trace"},
    {"diagnose", cli_diagnose, "diagnose [TRACE] [--exits FILE]... [--format text|json]\n"
                               "                      classify exit records, with evidence"},
    {"validate", cli_validate, "validate FILE...    check scenario and profile files"},
    {"catalog", cli_catalog, "catalog             list the shipped devices, candidates, scenarios"},
    {"probe", cli_probe, "probe EVENTS.json   report peak, over-budget events, exit reason"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: oomsim COMMAND [ARGS]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(out, "  %s\n", commands[i].synopsis);
    fprintf(out, "\n  oomsim --version    print the version\n"
                 "\nexit status: 0 ok, 1 invalid input, 2 usage error, 3 I/O or internal "
                 "failure\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        usage(stdout);
        return CLI_OK;
    }
    if (strcmp(name, "--version") == 0) {
        printf("oomsim %s\n", SIM_VERSION);
        return CLI_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (strcmp(name, commands[i].name) == 0)
            return commands[i].fn(argc - 2, argv + 2);
    fprintf(stderr, "oomsim: unknown command '%s'\n", name);
    usage(stderr);
    return CLI_USAGE;
}
