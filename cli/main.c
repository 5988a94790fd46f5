/* main.c - `oomsim`: subcommand dispatch, help and exit statuses. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

#ifndef OOMSIM_NO_JEMALLOC
/* jemalloc's options for the oomsim binary (it reads this symbol at its
 * start; MALLOC_CONF in the environment still overrides it): its memory on
 * transparent huge pages where the kernel allows them (madvise mode), so a
 * short run takes one page fault per 2 MiB instead of one per 4 KiB: a 10 s
 * plan faulted in 247 pages instead of 598 and started in 8 ms instead of
 * 10.3, for about 18 MiB more resident memory, bounded like the rest
 * (docs/performance.md, "Start-up"). */
const char *malloc_conf = "thp:always,metadata_thp:always";
#endif

typedef struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *synopsis;
} command;

static const command commands[] = {
    {"run", cli_run, "run [SCENARIO.yaml] [-o DIR] [-r N] [--seed S] [-j N] [--format F]\n"
                     "                      predict peaks and deaths for every cell"},
    {"calibrate", cli_calibrate, "calibrate PLAN [-j N] [-r N] [--max-evaluations N]\n"
                                 "                      fit the plan's unknown device values to its\n"
                                 "                      field rates"},
    {"replay", cli_replay, "replay TRACE --scenario S [--replication K] [-o DIR] [--format F]\n"
                           "                      a trace-driven run of the scenario's cells"},
    {"explain", cli_explain, "explain SCENARIO [--replication K] [--cell N]\n"
                             "                      one replication told as a timeline"},
    {"gen", cli_gen, "gen SCENARIO -o TRACE [--replication K] [--cell N]\n"
                     "                      write one replication's event timeline as a trace"},
    {"import", cli_import, "import perfetto TRACE (--process NAME | --pid N) [-o OUT]\n"
                           "                      read one app process out of a Perfetto trace\n"
                           "  import device FILE|DIR... [-o OUT.yaml]\n"
                           "                      a device profile from bugreports and\n"
                           "                      JetsamEvent reports\n"
                           "  import KIND FILE [-o OUT.yaml]\n"
                           "                      YAML from benchmark-model, llama-cpp,\n"
                           "                      onnxruntime logs, dumpsys meminfo, metrickit\n"
                           "                      payloads or play-vitals rows"},
    {"diagnose", cli_diagnose, "diagnose [TRACE] [--exits FILE]... [--process NAME] [--tz ZONE]\n"
                               "           [--format text|json]\n"
                               "                      classify exit records, with evidence"},
    {"lmkd", cli_lmkd, "lmkd SNAPSHOT_DIR [--format table|json]\n"
                       "                      lmkd's decision on one wake-up of a real phone"},
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
                 "  oomsim help COMMAND (or oomsim COMMAND --help)   that command's options\n"
                 "\nfor packaging, made from the same option tables as the help:\n"
                 "  oomsim --options    every command's options, one a line\n"
                 "  oomsim --man        the man page oomsim(1), in roff\n"
                 "  oomsim --completions bash|zsh   the shell's completion script\n"
                 "\nexit status: 0 ok, 1 invalid input (a bad or missing file or catalog name),\n"
                 "2 usage error, 3 I/O or internal failure, 130 interrupted (SIGINT),\n"
                 "143 terminated (SIGTERM), 138 stopped by SIGUSR1 (run --checkpoint)\n");
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "help") == 0 && argc > 2) {
        /* oomsim help COMMAND: that command's own --help */
        char help[] = "--help";
        char *args[] = {help, NULL};
        for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
            if (strcmp(argv[2], commands[i].name) == 0)
                return commands[i].fn(1, args);
        fprintf(stderr, "oomsim: unknown command '%s'\nsee oomsim --help\n", argv[2]);
        return CLI_USAGE;
    }
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        usage(stdout);
        return CLI_OK;
    }
    if (strcmp(name, "--options") == 0 && argc == 2) {
        cli_options_list(stdout);
        return fflush(stdout) == 0 ? CLI_OK : CLI_FAILURE;
    }
    if (strcmp(name, "--man") == 0 && argc == 2) {
        cli_man_page(stdout, usage);
        return fflush(stdout) == 0 ? CLI_OK : CLI_FAILURE;
    }
    if (strcmp(name, "--completions") == 0) {
        if (argc != 3)
            return cli_usage_error("--completions", "give bash or zsh");
        int rc = cli_completions(stdout, argv[2]);
        return rc == CLI_OK && fflush(stdout) != 0 ? CLI_FAILURE : rc;
    }
    if (strcmp(name, "--version") == 0) {
        printf("oomsim %s\n", SIM_VERSION);
        const char *mpi = sim_ranks_library();
        printf("MPI: %s\n", mpi != NULL ? mpi : "none (runs as one process)");
        return CLI_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (strcmp(name, commands[i].name) == 0)
            return commands[i].fn(argc - 2, argv + 2);
    fprintf(stderr, "oomsim: unknown command '%s'\nsee oomsim --help\n", name);
    return CLI_USAGE;
}

int main(int argc, char **argv)
{
    /* started by an MPI launcher: join the job (docs/scale-out.md) */
    if (sim_ranks_launched()) {
        sim_error err;
        sim_error_clear(&err);
        int rc = sim_ranks_start(&argc, &argv, &err);
        if (rc != SIM_OK) {
            fprintf(stderr, "oomsim: %s\n", err.msg);
            sim_ranks_stop();
            return cli_status(rc);
        }
    }
    int status;
    if (sim_ranks_size() > 1 &&
        (argc < 2 || (strcmp(argv[1], "run") != 0 && strcmp(argv[1], "calibrate") != 0))) {
        /* every rank would do the same work and print the same output */
        if (sim_ranks_rank() == 0)
            fprintf(stderr, "oomsim: only `oomsim run` and `oomsim calibrate` spread over the "
                    "ranks of an MPI job; "
                    "start %s%s without mpirun, or with one rank\n",
                    argc < 2 ? "oomsim" : "oomsim ", argc < 2 ? "" : argv[1]);
        status = CLI_USAGE;
    } else {
        status = dispatch(argc, argv);
    }
    /* In an MPI job rank 0 alone speaks, and the job's status is rank 0's:
     * the other ranks heard of every failure (sim_ranks_agree) and exit
     * 0.  Were they to exit with the failure's status, mpirun would abort
     * the job at the first of them, and could kill rank 0, or drop what it
     * printed, before that message reached the terminal. */
    if (sim_ranks_size() > 1 && sim_ranks_rank() != 0)
        status = CLI_OK;
    sim_ranks_stop();
    return status;
}
