/* timeline_run.c - one replication run for its pictures: the world's
 * trace events go to the timeline and, when asked, to the Chrome/Perfetto
 * JSON at once. */
#include "results.h"
#include "internal.h"

static int both_add(void *ctx, const trc_event *e, sim_error *err)
{
    void **two = ctx;
    int rc = res_timeline_add(two[0], e, err);
    return rc == SIM_OK ? res_chrome_add(two[1], e, err) : rc;
}

int res_timeline_run(const mdl_cell *cell, uint64_t rep, res_timeline **out, mdl_rep *r,
                     res_chrome *also, sim_error *err)
{
    *out = NULL;
    mdl_device dv;
    mdl_device_in_force(cell->device, &cell->policy, &dv);
    res_timeline *t = res_timeline_create(&dv, cell->horizon);
    if (t == NULL)
        return sim_error_set(err, SIM_ENOMEM, "timeline: out of memory");
    res_timeline_lines(t, cell);
    void *two[2] = {t, also};
    mdl_trace_sink sink = {res_timeline_add, t, NULL};
    if (also != NULL)
        sink = (mdl_trace_sink){both_add, two, NULL};
    int rc = mdl_run_replication_traced(cell, rep, NULL, NULL, &sink, r, err);
    if (rc != SIM_OK) {
        res_timeline_free(t);
        return rc;
    }
    res_timeline_finish(t);
    *out = t;
    return SIM_OK;
}
