/* lmkd.c - `oomsim lmkd SNAPSHOT_DIR [--format table|json]` (docs/lmkd.md):
 * what lmkd decides on one wake-up, read from the kernel's own files. */
#include "cli.h"
#include "replay/replay.h"

#include "traces/json.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct lmkd_args {
    const char *dir, *format;
} lmkd_args;

static const char *const formats[] = {"table", "json", NULL};

static void head(FILE *f)
{
    fprintf(f, "usage: oomsim lmkd SNAPSHOT_DIR [--format table|json]\n"
               "  lmkd's decision on one wake-up, as %s decides it\n"
               "  in mp_event_psi (its PSI strategy, Android's default since 10).  SNAPSHOT_DIR\n"
               "  holds the kernel's own files: meminfo (/proc/meminfo), zoneinfo\n"
               "  (/proc/zoneinfo), vmstat.0 and vmstat.1 (/proc/vmstat at lmkd's last reset\n"
               "  and now); optionally pressure_memory (/proc/pressure/memory), event (low,\n"
               "  medium or critical: the PSI level that woke lmkd; default low), props\n"
               "  (NAME=VALUE or getprop's [NAME]: [VALUE] lines) and page_size (bytes;\n"
               "  default 4096).  The properties read, by their name after ro.lmk.:\n",
            MDL_LMKD_VERSION);
    for (const mdl_lmkd_prop *p = mdl_lmkd_prop_table; p->name != NULL; p++)
        fprintf(f, "    %-30s %s\n", p->name, p->help);
    fprintf(f, "  (low_ram is ro.config.low_ram; persist.device_config.lmkd_native.NAME\n"
               "  overrides ro.lmk.NAME, as in lmkd)\n");
}

#define LA(field) offsetof(lmkd_args, field)
static const cli_opt lmkd_opts[] = {
    {"--format", NULL, CLI_OPT_CHOICE, LA(format), CLI_NOWHERE, 0, 0, formats,
     "--format is table or json, got '%s'", 0,
     "  --format table|json   the output (default table)\n"},
    CLI_HELP_OPT,
};

const cli_cmd cli_lmkd_cmd = {
    .name = "lmkd",
    .head = head,
    .opts = lmkd_opts,
    .nopts = sizeof lmkd_opts / sizeof *lmkd_opts,
    .unexpected = "unexpected argument '%s'",
    .positional = LA(dir),
    .positionals = 1,
};

static int64_t kb(const rpl_lmkd_snapshot *s, int64_t pages) { return pages * s->wake.page_kb; }

static int print_json(const rpl_lmkd_snapshot *s, const mdl_lmkd_decision *d)
{
    int failed = 0;
    json_t *o = json_object();
    trc_json_set(o, "lmkd_version", json_string(MDL_LMKD_VERSION), &failed);
    trc_json_set(o, "free_kb", json_integer(kb(s, s->now.free - s->now.cma_free)), &failed);
    trc_json_set(o, "watermarks_kb",
                 json_pack("{sIsIsI}", "min", (json_int_t)kb(s, s->wake.wmark_min), "low",
                           (json_int_t)kb(s, s->wake.wmark_low), "high",
                           (json_int_t)kb(s, s->wake.wmark_high)), &failed);
    trc_json_set(o, "wmark", json_string(mdl_wmark_name(d->wmark)), &failed);
    trc_json_set(o, "swap_is_low", json_boolean(d->swap_is_low), &failed);
    trc_json_set(o, "free_swap_kb", json_integer(kb(s, d->free_swap)), &failed);
    trc_json_set(o, "swap_low_threshold_kb", json_integer(kb(s, d->swap_low_threshold)),
                 &failed);
    trc_json_set(o, "thrashing", json_integer(d->thrashing), &failed);
    trc_json_set(o, "reclaim", json_string(mdl_reclaim_name(d->reclaim)), &failed);
    trc_json_set(o, "critical_stall", json_boolean(d->critical_stall), &failed);
    trc_json_set(o, "kill_reason", json_string(mdl_lmkd_reason_name(d->reason)), &failed);
    trc_json_set(o, "min_score_adj",
                 d->reason != MDL_LMKD_NONE ? json_integer(d->min_score_adj) : json_null(),
                 &failed);
    trc_json_set(o, "description", json_string(d->description), &failed);
    json_t *ig = json_array();
    for (unsigned k = 0; k < s->nignored; k++)
        trc_json_append(ig, json_string(s->ignored[k]), &failed);
    trc_json_set(o, "ignored_props", ig, &failed);
    json_t *nt = json_array();
    for (unsigned k = 0; k < s->nnotes; k++)
        trc_json_append(nt, json_string(s->notes[k]), &failed);
    trc_json_set(o, "notes", nt, &failed);
    char *text = failed ? NULL : json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (text == NULL)
        return cli_report(&(sim_error){SIM_ENOMEM, "oomsim: out of memory"});
    int rc = printf("%s\n", text) < 0 ? CLI_FAILURE : CLI_OK;
    free(text);
    return rc;
}

static int print_table(const rpl_lmkd_snapshot *s, const mdl_lmkd_decision *d)
{
    printf("lmkd's decision (%s, mp_event_psi)\n", MDL_LMKD_VERSION);
    printf("  %-22s %lld kB (watermarks: min %lld, low %lld, high %lld kB)\n", "free",
           (long long)kb(s, s->now.free - s->now.cma_free), (long long)kb(s, s->wake.wmark_min),
           (long long)kb(s, s->wake.wmark_low), (long long)kb(s, s->wake.wmark_high));
    printf("  %-22s %s\n", "wmark", mdl_wmark_name(d->wmark));
    printf("  %-22s %s\n", "swap_is_low", d->swap_is_low ? "true" : "false");
    printf("  %-22s %lld\n", "free_swap_kb", (long long)kb(s, d->free_swap));
    printf("  %-22s %lld\n", "swap_low_threshold_kb", (long long)kb(s, d->swap_low_threshold));
    printf("  %-22s %lld %%\n", "thrashing", (long long)d->thrashing);
    printf("  %-22s %s\n", "reclaim", mdl_reclaim_name(d->reclaim));
    printf("  %-22s %s\n", "critical_stall", d->critical_stall ? "true" : "false");
    printf("  %-22s %s\n", "kill_reason", mdl_lmkd_reason_name(d->reason));
    if (d->reason != MDL_LMKD_NONE)
        printf("  %-22s %d (kills processes at or above it, highest first)\n", "min_score_adj",
               d->min_score_adj);
    else
        printf("  %-22s -\n", "min_score_adj");
    printf("  %-22s %s\n", "description", d->description);
    if (d->bailed)
        printf("  (no reclaim and no new refault since the reset: lmkd stops there)\n");
    for (unsigned k = 0; k < s->nignored; k++)
        printf("  ignored: %s (not read by this decision)\n", s->ignored[k]);
    for (unsigned k = 0; k < s->nnotes; k++)
        printf("  note: %s\n", s->notes[k]);
    if (s->notes_over > 0)
        printf("  note: %u more notes\n", s->notes_over);
    return fflush(stdout) != 0 ? CLI_FAILURE : CLI_OK;
}

int cli_lmkd(int argc, char **argv)
{
    lmkd_args a = {NULL, "table"};
    int rc = cli_parse(&cli_lmkd_cmd, argc, argv, &a);
    if (rc != CLI_OK)
        return rc == CLI_DONE ? CLI_OK : rc;
    if (a.dir == NULL)
        return cli_usage_error("lmkd", "a snapshot directory is needed");
    sim_error err;
    sim_error_clear(&err);
    rpl_lmkd_snapshot *s = malloc(sizeof *s);
    if (s == NULL)
        return cli_report(&(sim_error){SIM_ENOMEM, "oomsim: out of memory"});
    if (rpl_lmkd_snapshot_read(a.dir, s, &err) != SIM_OK) {
        free(s);
        return cli_report(&err);
    }
    mdl_lmkd_decision d;
    rpl_lmkd_snapshot_decide(s, &d);
    rc = strcmp(a.format, "json") == 0 ? print_json(s, &d) : print_table(s, &d);
    free(s);
    return rc;
}
