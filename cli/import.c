/* import.c - `oomsim import`, both forms.  `import KIND FILE...`: what a
 * team already measured, read by the importer of that kind (the table of
 * scenarios/import/, whose kinds and help lines this walks) and written as
 * YAML.  `import perfetto TRACE (--process NAME | --pid N) [-o OUT]
 * [--candidate OUT.yaml] [--id ID]`: one process's memory, stages and
 * death read out of a Perfetto trace (traces/perfetto/) and written as an
 * oomsim trace (docs/perfetto.md), with the candidate skeleton beside it.
 * Each file goes to a temporary name and is renamed, so a failed import
 * leaves nothing half-written. */
#include "cli.h"
#include "scenarios/scenarios.h"
#include "traces/traces.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The opening of `oomsim import KIND`'s help: its kinds from the importers'
 * table. */
static void yaml_head(FILE *f)
{
    fputs("usage: oomsim import KIND FILE... [-o OUT.yaml] [--id ID] [--part NAME]\n"
          "  writes YAML from what a team already measured, each value with a comment naming\n"
          "  the line it came from (docs/imports.md); KIND:\n",
          f);
    for (int k = 0; k < SCN_IMPORT_COUNT; k++) {
        const scn_importer *imp = scn_importer_of((scn_import_kind)k);
        fprintf(f, "    %-17s%s\n", imp->name, imp->help);
    }
}

/* What `oomsim import KIND` was asked. */
typedef struct yaml_args {
    const char *out, *minus, *speed_of;
    scn_import_opts o;
    unsigned long long run;
    const char *files[SCN_IMPORT_INPUTS_MAX];
    unsigned nfiles;
} yaml_args;

#define YA(field) offsetof(yaml_args, field)
#define ID_HELP "  --id ID      the candidate's id (default: imported)\n"
#define PART_HELP "  --part NAME  the part's name (default: model)\n"
#define MINUS_HELP                                                                     \
    "  --minus CANDIDATE  meminfo: subtract the candidate's parts (a file, or a catalog\n" \
    "               candidate's id): the dump was taken with the model loaded\n"
#define RUN_HELP                                                                        \
    "  --run K      benchmark-model: the log's run K alone (from 1); without it every run,\n" \
    "               each its own candidate (ids suffixed -1, -2, ...)\n"
#define SPEED_HELP                                                                       \
    "  --speed-of DEVICE  llama-cpp: the log's machine is as fast as DEVICE (a file, or a\n" \
    "               catalog device's name): its times are scaled by DEVICE's speed to the\n"  \
    "               reference phone's; needed to use the times of a server's or desktop's log\n"
#define RUN_MAX 1000000
static const cli_opt yaml_opts[] = {
    {"-o", NULL, CLI_OPT_TEXT, YA(out), CLI_NOWHERE, 0, 0, NULL, NULL, 0, "  -o OUT.yaml  write the YAML there (default: standard output)\n"},
    {"--id", NULL, CLI_OPT_TEXT, YA(o.id), CLI_NOWHERE, 0, 0, NULL, NULL, 0, ID_HELP},
    {"--part", NULL, CLI_OPT_TEXT, YA(o.part), CLI_NOWHERE, 0, 0, NULL, NULL, 0, PART_HELP},
    {"--minus", NULL, CLI_OPT_TEXT, YA(minus), CLI_NOWHERE, 0, 0, NULL, NULL, 0, MINUS_HELP},
    {"--run", NULL, CLI_OPT_ELSEWHERE, 0, CLI_NOWHERE, 0, 0, NULL, NULL, 0, RUN_HELP},
    CLI_HELP_OPT,
};

/* benchmark-model: --run is its alone. */
static const cli_opt yaml_opts_run[] = {
    {"-o", NULL, CLI_OPT_TEXT, YA(out), CLI_NOWHERE, 0, 0, NULL, NULL, 0, "  -o OUT.yaml  write the YAML there (default: standard output)\n"},
    {"--id", NULL, CLI_OPT_TEXT, YA(o.id), CLI_NOWHERE, 0, 0, NULL, NULL, 0, ID_HELP},
    {"--part", NULL, CLI_OPT_TEXT, YA(o.part), CLI_NOWHERE, 0, 0, NULL, NULL, 0, PART_HELP},
    {"--minus", NULL, CLI_OPT_ELSEWHERE, 0, CLI_NOWHERE, 0, 0, NULL, NULL, 0, MINUS_HELP},
    {"--run", NULL, CLI_OPT_COUNT, YA(run), CLI_NOWHERE, 1, RUN_MAX, NULL, NULL, 0, RUN_HELP},
    CLI_HELP_OPT,
};

/* llama-cpp: --speed-of is its alone. */
static const cli_opt yaml_opts_speed[] = {
    {"-o", NULL, CLI_OPT_TEXT, YA(out), CLI_NOWHERE, 0, 0, NULL, NULL, 0, "  -o OUT.yaml  write the YAML there (default: standard output)\n"},
    {"--id", NULL, CLI_OPT_TEXT, YA(o.id), CLI_NOWHERE, 0, 0, NULL, NULL, 0, ID_HELP},
    {"--part", NULL, CLI_OPT_TEXT, YA(o.part), CLI_NOWHERE, 0, 0, NULL, NULL, 0, PART_HELP},
    {"--speed-of", NULL, CLI_OPT_TEXT, YA(speed_of), CLI_NOWHERE, 0, 0, NULL, NULL, 0, SPEED_HELP},
    {"--minus", NULL, CLI_OPT_ELSEWHERE, 0, CLI_NOWHERE, 0, 0, NULL, NULL, 0, MINUS_HELP},
    {"--run", NULL, CLI_OPT_ELSEWHERE, 0, CLI_NOWHERE, 0, 0, NULL, NULL, 0, RUN_HELP},
    CLI_HELP_OPT,
};

/* The other kinds: --minus is meminfo's alone, --run benchmark-model's. */
static const cli_opt yaml_opts_no_minus[] = {
    {"-o", NULL, CLI_OPT_TEXT, YA(out), CLI_NOWHERE, 0, 0, NULL, NULL, 0, "  -o OUT.yaml  write the YAML there (default: standard output)\n"},
    {"--id", NULL, CLI_OPT_TEXT, YA(o.id), CLI_NOWHERE, 0, 0, NULL, NULL, 0, ID_HELP},
    {"--part", NULL, CLI_OPT_TEXT, YA(o.part), CLI_NOWHERE, 0, 0, NULL, NULL, 0, PART_HELP},
    {"--minus", NULL, CLI_OPT_ELSEWHERE, 0, CLI_NOWHERE, 0, 0, NULL, NULL, 0, MINUS_HELP},
    {"--run", NULL, CLI_OPT_ELSEWHERE, 0, CLI_NOWHERE, 0, 0, NULL, NULL, 0, RUN_HELP},
    CLI_HELP_OPT,
};

const cli_cmd cli_import_yaml_cmd = {
    .name = "import",
    .opts = yaml_opts_no_minus,
    .nopts = sizeof yaml_opts_no_minus / sizeof *yaml_opts_no_minus,
    .unexpected = "unexpected argument '%s'",
    .positional = YA(files),
    .positionals = SCN_IMPORT_INPUTS_MAX,
    .head = yaml_head,
    .npositional = YA(nfiles),
};

/* What `oomsim import perfetto` was asked. */
typedef struct pf_args {
    const char *trace, *out, *cand, *id;
    unsigned long long pid, step;
    int has_pid;
    trc_pf_opts o;
} pf_args;

#define PA(field) offsetof(pf_args, field)
static const cli_opt perfetto_opts[] = {
    {"-o", NULL, CLI_OPT_TEXT, PA(out), CLI_NOWHERE, 0, 0, NULL, NULL, 0, "  -o OUT       the oomsim trace to write (default: JSON Lines on standard output)\n"},
    {"--process", NULL, CLI_OPT_TEXT, PA(o.process), CLI_NOWHERE, 0, 0, NULL, NULL, 0, "  --process NAME  the app process, by its name (or --pid N)\n"},
    {"--pid", NULL, CLI_OPT_COUNT, PA(pid), PA(has_pid), 1, INT32_MAX, NULL,
     "--pid needs a process id (an integer from 1)", 1, NULL},
    {"--candidate", NULL, CLI_OPT_TEXT, PA(cand), CLI_NOWHERE, 0, 0, NULL, NULL, 0,
     "  --candidate OUT.yaml  also write a candidate skeleton with the measured stages\n"},
    {"--id", NULL, CLI_OPT_TEXT, PA(id), CLI_NOWHERE, 0, 0, NULL, NULL, 0,
     "  --id ID               the candidate id written in both (default: recorded)\n"},
    {"--step", NULL, CLI_OPT_COUNT, PA(step), CLI_NOWHERE, 0, 1000000, NULL,
     "--step needs a step index (an integer from 0)", 1,
     "  --step N              the workload step the recorded requests belong to when\n"
     "                        the trace is replayed (default 1: the step after cold_start)\n"},
    CLI_HELP_OPT,
};

const cli_cmd cli_import_perfetto_cmd = {
    .name = "import",
    .usage = "usage: oomsim import perfetto TRACE (--process NAME | --pid N) [-o OUT.(jsonl|json|msgpack)]\n"
        "                     [--candidate OUT.yaml] [--id ID] [--step N]\n"
        "  reads one app process out of a binary Perfetto trace: its memory over time\n"
        "  (rss_stat, process_stats), its foreground/background changes (oom_score_adj),\n"
        "  its stages (slices named oomsim:STAGE:PART) and its death (lmkd, the kernel's\n"
        "  OOM killer), and writes them as an oomsim trace (JSON Lines on stdout without -o)\n",
    .opts = perfetto_opts,
    .nopts = sizeof perfetto_opts / sizeof *perfetto_opts,
    .unexpected = "unexpected argument '%s'",
    .positional = PA(trace),
    .positionals = 1,
};

static int usage_error(const char *what)
{
    return cli_usage_error("import", "%s", what);
}

static int write_event(void *ctx, const trc_event *e, sim_error *err)
{
    return trc_write(ctx, e, err);
}


/* The largest input an importer reads. */
#define IMPORT_MAX_BYTES ((size_t)64 << 20)

/* A candidate by path, or by a catalog candidate's id. */
/* The catalog's entry FOLDER/ARG.yaml when arg is a name (no '/'): 1 and
 * *it, else 0 (arg is a file). */
static int catalog_entry(const char *folder, const char *arg, scn_catalog_item *it)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s.yaml", folder, arg);
    for (unsigned i = 0; i < scn_catalog_count() && strchr(arg, '/') == NULL; i++) {
        scn_catalog_get(i, it);
        if (strcmp(it->path, path) == 0)
            return 1;
    }
    return 0;
}

static int load_candidate(const char *arg, mdl_candidate *c, sim_error *err)
{
    scn_catalog_item it;
    return catalog_entry("candidates", arg, &it) ? scn_candidate_parse(it.text, it.len, it.path,
                                                                       c, err)
                                                 : scn_candidate_load(arg, c, err);
}

/* --speed-of DEVICE: a catalog device's name, or a device file. */
static int load_device(const char *arg, mdl_device *d, sim_error *err)
{
    scn_catalog_item it;
    return catalog_entry("devices", arg, &it) ? scn_device_parse(it.text, it.len, it.path, d, err)
                                              : scn_device_load(arg, d, err);
}

static int import_yaml(scn_import_kind kind, int argc, char **argv)
{
    yaml_args a;
    memset(&a, 0, sizeof a);
    cli_cmd c = cli_import_yaml_cmd;
    if (kind == SCN_IMPORT_MEMINFO) { /* the one kind that takes --minus */
        c.opts = yaml_opts;
        c.nopts = sizeof yaml_opts / sizeof *yaml_opts;
    } else if (kind == SCN_IMPORT_BENCHMARK_MODEL) { /* ... and --run */
        c.opts = yaml_opts_run;
        c.nopts = sizeof yaml_opts_run / sizeof *yaml_opts_run;
    } else if (kind == SCN_IMPORT_LLAMA_CPP) { /* ... and --speed-of */
        c.opts = yaml_opts_speed;
        c.nopts = sizeof yaml_opts_speed / sizeof *yaml_opts_speed;
    }
    int status = cli_parse(&c, argc - 1, argv + 1, &a);
    if (status != CLI_OK)
        return status == CLI_DONE ? CLI_OK : status;
    const char *out = a.out, *minus = a.minus, *const *files = a.files;
    scn_import_opts o = a.o;
    o.run = a.run;
    unsigned n = a.nfiles;
    if (n == 0)
        return usage_error("an input file is needed");
    if (n > scn_importer_of(kind)->inputs)
        return usage_error("one input file (metrickit and play-vitals take several)");
    if (o.id != NULL && !cli_valid_id(o.id))
        return usage_error("--id: 1 to 63 characters of [a-z0-9_-]");
    if (o.part != NULL && !cli_valid_id(o.part))
        return usage_error("--part: 1 to 63 characters of [a-z0-9_-]");
    sim_error err;
    sim_error_clear(&err);
    scn_import_input in[SCN_IMPORT_INPUTS_MAX];
    char *texts[SCN_IMPORT_INPUTS_MAX] = {NULL};
    mdl_candidate cand;
    int rc = SIM_OK, have_cand = 0;
    if (minus != NULL) {
        rc = load_candidate(minus, &cand, &err);
        have_cand = rc == SIM_OK;
        o.minus = have_cand ? &cand : NULL;
    }
    mdl_device dev;
    int have_dev = 0;
    if (a.speed_of != NULL && rc == SIM_OK) {
        rc = load_device(a.speed_of, &dev, &err);
        have_dev = rc == SIM_OK;
        if (have_dev) {
            o.speed_of = dev.name[0] ? dev.name : "the device";
            o.speed_cpu = dev.speed_cpu;
            o.speed_gpu = dev.speed_gpu;
        }
    }
    for (unsigned k = 0; k < n && rc == SIM_OK; k++) {
        size_t len = 0;
        rc = sim_read_file(files[k], IMPORT_MAX_BYTES, &texts[k], &len, &err);
        const char *slash = strrchr(files[k], '/');
        in[k] = (scn_import_input){slash != NULL ? slash + 1 : files[k], texts[k], len};
    }
    char *yaml = NULL;
    if (rc == SIM_OK)
        rc = scn_import(kind, in, n, &o, &yaml, &err);
    for (unsigned k = 0; k < n; k++)
        free(texts[k]);
    if (have_cand)
        scn_candidate_release(&cand);
    if (have_dev)
        scn_device_release(&dev);
    if (rc != SIM_OK) {
        free(yaml);
        return cli_report(&err);
    }
    /* the YAML ends with its newline; both writers add one */
    status = out != NULL ? cli_write_file(out, yaml, strlen(yaml) - 1)
                             : cli_write_stdout(yaml, strlen(yaml) - 1);
    free(yaml);
    return status;
}

/* CLI_OK, CLI_DONE (help printed) or CLI_USAGE (said why). */
static int parse_perfetto(int argc, char **argv, pf_args *a)
{
    memset(a, 0, sizeof *a);
    a->id = "recorded";
    a->step = 1;
    int rc = cli_parse(&cli_import_perfetto_cmd, argc - 1, argv + 1, a);
    if (rc != CLI_OK)
        return rc;
    a->o.pid = a->has_pid ? (int64_t)a->pid : -1;
    a->o.step = (int64_t)a->step;
    if (a->trace == NULL)
        return usage_error("a Perfetto trace is needed");
    if ((a->o.process == NULL) == (a->o.pid < 0))
        return usage_error("one of --process NAME or --pid N is needed");
    if (!cli_valid_id(a->id))
        return usage_error("--id: 1 to 63 characters of [a-z0-9_-]");
    a->o.candidate_id = a->id;
    return CLI_OK;
}

/* The candidate skeleton, to be committed with the trace. */
static int put_candidate(const pf_args *a, const trc_pf_summary *sum, sim_out **o,
                         sim_error *err)
{
    char about[256];
    snprintf(about, sizeof about, "%" PRIu64 " lives of the process, %" PRIu64
             " stage slices, %" PRIu64 " memory events", sum->pids, sum->stage_slices,
             sum->memory_events);
    char *yaml = scn_import_perfetto_candidate(sum, a->id, about);
    if (yaml == NULL)
        return sim_error_set(err, SIM_ENOMEM, "out of memory");
    int rc = cli_put_text(a->cand, yaml, strlen(yaml) - 1, o, err);
    free(yaml);
    return rc;
}

/* The trace read and written to `f`; then the output closed.  *io is set
 * when the failure is the output's. */
static int read_trace(const pf_args *a, int format, FILE *f, sim_out *file,
                      trc_pf_summary *sum, int *io, sim_error *err)
{
    trc_writer *w = trc_writer_create(f, (trc_format)format, err);
    int rc = w == NULL ? err->code : SIM_OK;
    if (rc == SIM_OK)
        rc = trc_pf_import_file(a->trace, &a->o, write_event, w, sum, err);
    if (rc == SIM_OK)
        rc = trc_writer_finish(w, err);
    trc_writer_destroy(w);
    if (file != NULL) {
        sim_error e;
        sim_error_clear(&e);
        /* a failed write of the stream: the output's own error says why */
        if (sim_out_close(file, &e) != SIM_OK && (rc == SIM_OK || rc == SIM_EIO))
            rc = e.code, *err = e, *io = 1;
    } else if (rc == SIM_OK && fflush(stdout) != 0) {
        rc = sim_error_set(err, SIM_EIO, "cannot write the trace: %s", strerror(errno));
    }
    return rc;
}

static void say_summary(const char *trace, const trc_pf_summary *sum)
{
    fprintf(stderr, "oomsim import: %s: %" PRIu64 " packets (%" PRIu64 " compressed bundles), %" PRIu64
            " MiB; the process: %" PRIu64 " li%s, %" PRIu64 " memory events, %" PRIu64
            " stage slices, %" PRIu64 " death%s; %" PRIu64 " events written\n",
            trace, sum->packets, sum->compressed, sum->bytes >> 20, sum->pids,
            sum->pids == 1 ? "fe" : "ves", sum->memory_events, sum->stage_slices, sum->kills,
            SIM_S(sum->kills), sum->events);
    if (sum->has_realtime)
        fprintf(stderr, "oomsim import: %s: the exits' timestamp_ms are on the wall clock (UTC), from the "
                "trace's clock snapshot (REALTIME - BOOTTIME = %.3f s): an exit record's "
                "timestamp from the same phone compares\n", trace,
                (double)sum->realtime_offset_ns / 1e9);
    else
        fprintf(stderr, "oomsim import: %s: no clock snapshot gives REALTIME: the exits' timestamp_ms count "
                "from the trace's start, not the wall clock\n", trace);
}

static int import_perfetto(const pf_args *a)
{
    int format = TRC_JSONL;
    if (a->out != NULL && (format = trc_format_of_path(a->out)) < 0)
        return usage_error("the output's name must end in .json, .jsonl, .msgpack or .mp");
    sim_error err;
    sim_error_clear(&err);
    /* the trace and the candidate are written together, both or neither */
    sim_out *outs[2] = {NULL, NULL};
    unsigned nout = 0;
    int rc = SIM_OK, io = 0; /* io: the output failed, err says how */
    FILE *f = stdout;
    if (a->out != NULL) {
        io = rc = sim_out_open(a->out, &outs[nout++], &err);
        if (rc == SIM_OK && (f = sim_out_stream(outs[0])) == NULL)
            io = rc = sim_error_set(&err, SIM_ENOMEM, "cannot write %s: out of memory", a->out);
    }
    trc_pf_summary sum;
    memset(&sum, 0, sizeof sum);
    if (rc == SIM_OK)
        rc = read_trace(a, format, f, a->out != NULL ? outs[0] : NULL, &sum, &io, &err);
    else if (a->out != NULL && outs[0] != NULL)
        sim_out_close(outs[0], NULL);
    if (rc == SIM_OK && a->cand != NULL)
        io = rc = put_candidate(a, &sum, &outs[nout++], &err);
    if (rc == SIM_OK && nout > 0)
        io = rc = sim_out_commit(outs, nout, &err);
    for (unsigned k = 0; k < nout; k++)
        sim_out_free(outs[k]);
    if (rc == SIM_OK)
        say_summary(a->trace, &sum);
    trc_pf_summary_free(&sum);
    if (rc != SIM_OK)
        return io ? cli_output_failed(&err) : cli_report(&err);
    return CLI_OK;
}

int cli_import(int argc, char **argv)
{
    if (argc > 0 && strcmp(argv[0], "device") == 0)
        return cli_import_device(argc, argv);
    for (int k = 0; argc > 0 && k < SCN_IMPORT_COUNT; k++)
        if (strcmp(argv[0], scn_import_kind_name((scn_import_kind)k)) == 0)
            return import_yaml((scn_import_kind)k, argc, argv);
    const cli_opt *first = argc > 0 ? cli_opt_named(&cli_import_perfetto_cmd, argv[0]) : NULL;
    if (first != NULL && first->kind == CLI_OPT_HELP) { /* both forms' help */
        cli_help(&cli_import_perfetto_cmd, stdout);
        cli_help(&cli_import_device_cmd, stdout);
        cli_help(&cli_import_yaml_cmd, stdout);
        return CLI_OK;
    }
    if (argc < 1 || strcmp(argv[0], "perfetto") != 0) {
        char kinds[256] = "perfetto, device";
        for (int k = 0; k < SCN_IMPORT_COUNT; k++)
            snprintf(kinds + strlen(kinds), sizeof kinds - strlen(kinds), ", %s",
                     scn_import_kind_name((scn_import_kind)k));
        return cli_usage_error("import", "the kind to import is needed: %s", kinds);
    }
    pf_args a;
    int rc = parse_perfetto(argc, argv, &a);
    if (rc != CLI_OK)
        return rc == CLI_DONE ? CLI_OK : rc;
    return import_perfetto(&a);
}
