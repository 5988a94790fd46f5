/* import.c - `oomsim import perfetto`'s entry points (docs/perfetto.md):
 * the three passes over a file or a buffer, the sort of the records, the
 * two walks, and what is freed after; the phone pass of `import device`. */
#include "pf_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct source {
    const char *path;
    const uint8_t *data;
    size_t len;
} source;

int pf__run_pass(imp *m, const char *path, const uint8_t *data, size_t len)
{
    m->packet_off = 0;
    m->depth = 0;
    if (path == NULL)
        return pf__packets(m, data, len, 0);
    FILE *in = fopen(path, "rb");
    if (in == NULL)
        return sim_error_set(m->err, errno == ENOENT ? SIM_ENOTFOUND : SIM_EIO,
                             "%s: cannot open: %s", m->name, strerror(errno));
    int rc = pf__packets_file(m, in);
    fclose(in);
    return rc;
}

static int import(const source *src, const char *name, const trc_pf_opts *o, trc_pf_sink sink,
                  void *ctx, trc_pf_summary *sum, sim_error *err)
{
    memset(sum, 0, sizeof *sum);
    if (o == NULL || (o->process == NULL && o->pid <= 0))
        return sim_error_set(err, SIM_EINVAL, "import: a process name or a pid is needed");
    imp m;
    memset(&m, 0, sizeof m);
    m.o = o;
    m.name = name;
    m.err = err;
    m.sum = sum;
    int rc = SIM_OK;
    for (m.pass = 1; m.pass <= 3 && rc == SIM_OK; m.pass++) {
        rc = pf__run_pass(&m, src->path, src->data, src->len);
        if (rc == SIM_OK && m.pass == 1 && m.pids.n == 0) {
            if (o->process != NULL)
                rc = sim_error_set(err, SIM_EINPUT, "%s: no process named '%s' in the trace "
                                   "(process_tree or process descriptors)", name, o->process);
            else
                rc = sim_error_set(err, SIM_EINPUT, "%s: no process with pid %" PRId64
                                   " in the trace", name, o->pid);
        }
    }
    walk *w = NULL;
    if (rc == SIM_OK) {
        if (m.nrec > 1)
            qsort(m.recs, m.nrec, sizeof *m.recs, pf__rec_cmp);
        w = calloc(1, sizeof *w);
        if (w == NULL)
            rc = pf__oom(&m);
    }
    if (rc == SIM_OK) {
        w->m = &m;
        w->sink = sink;
        w->ctx = ctx;
        w->emit = 0;
        rc = pf__walk_records(w);
        if (rc == SIM_OK) {
            w->emit = 1;
            rc = pf__walk_records(w);
        }
    }
    if (w != NULL)
        free(w->res);
    free(w);
    free(m.recs);
    free(m.seqs);
    free(m.inflated);
    pf__map_free(&m.pids), pf__map_free(&m.threads), pf__map_free(&m.tracks), pf__map_free(&m.mms);
    pf__map_free(&m.names);
    pf__map_free(&m.seq_index);
    return rc;
}

int trc_pf_import_file(const char *path, const trc_pf_opts *o, trc_pf_sink sink, void *ctx,
                       trc_pf_summary *sum, sim_error *err)
{
    source src = {path, NULL, 0};
    return import(&src, path, o, sink, ctx, sum, err);
}

int trc_pf_import_buffer(const void *data, size_t len, const char *name, const trc_pf_opts *o,
                         trc_pf_sink sink, void *ctx, trc_pf_summary *sum, sim_error *err)
{
    source src = {NULL, len > 0 ? data : (const void *)"", len};
    return import(&src, name, o, sink, ctx, sum, err);
}

void trc_pf_summary_free(trc_pf_summary *sum)
{
    if (sum == NULL)
        return;
    for (unsigned p = 0; p < TRC_PF_PARTS_MAX; p++)
        for (int s = 0; s < TRC_STAGE_COUNT; s++)
            free(sum->stages[p][s].occ);
    memset(sum, 0, sizeof *sum);
}


/* ---- the phone pass (phone.c): one pass, no records, no walk ---- */

static int phone(const char *path, const void *data, size_t len, const char *name,
                 trc_pf_phone *out, sim_error *err)
{
    trc_pf_summary sum;
    memset(&sum, 0, sizeof sum);
    imp m;
    memset(&m, 0, sizeof m);
    m.name = name;
    m.err = err;
    m.sum = &sum;
    int rc = pf__phone_start(&m, out);
    if (rc == SIM_OK)
        rc = pf__run_pass(&m, path, data, len);
    if (rc == SIM_OK)
        rc = pf__phone_finish(&m);
    out->bytes = sum.bytes;
    out->packets = sum.packets;
    free(m.inflated);
    free(m.seqs);
    pf__map_free(&m.seq_index);
    return rc;
}

int trc_pf_phone_file(const char *path, trc_pf_phone *out, sim_error *err)
{
    return phone(path, NULL, 0, path, out, err);
}

int trc_pf_phone_buffer(const void *data, size_t len, const char *name, trc_pf_phone *out,
                        sim_error *err)
{
    return phone(NULL, len > 0 ? data : (const void *)"", len, name, out, err);
}
