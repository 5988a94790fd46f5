/* exitrec.c - the record a death leaves, as the system writes it
 * (docs/model.md "Exit records"): Android's
 * ApplicationExitInfo, or on iOS a JetsamEvent (with XNU's cause:
 * per-process-limit, vm-pageshortage, idle-exit, fc-thrashing, ...), a crash
 * report or a watchdog termination.  Pure functions of the device,
 * the reason and the state at the death. */
#include "world_int.h"

/* A kill in the idle band posts no JetsamEvent
 * (memorystatus_should_post_snapshot, kern_memorystatus.c): the app
 * learns of it from MetricKit's background exits alone. */
static void unreported(mdl_exit_record *r)
{
    r->kind = MDL_REC_METRICKIT;
    r->description = MDL_TEXT_METRICKIT;
    r->status = 0; /* a count: no status, no footprint */
    r->pss_kb = r->rss_kb = 0;
}

static void ios_record(const mdl_device *d, const mdl_death *x, mdl_exit_record *r)
{
    /* the footprint at the kill: jetsam reports carry it */
    r->pss_kb = r->rss_kb = x->counted / 1024;
    switch (x->why) {
    case MDL_EXIT_WATCHDOG:
        r->kind = MDL_REC_WATCHDOG;
        r->status = 9;
        r->description = MDL_TEXT_WATCHDOG;
        break;
    case MDL_EXIT_NATIVE_CRASH:
        r->kind = MDL_REC_CRASH;
        r->status = 11;
        r->description = MDL_TEXT_IOS_SEGV;
        break;
    case MDL_EXIT_SYSTEM_RECLAIM: /* memorystatus for the system's health:
                                   * the page model's cause; under the plain
                                   * rule the idle band's kill, idle-exit */
        r->jetsam = x->jetsam != MDL_JETSAM_NONE ? x->jetsam : MDL_JETSAM_IDLE_EXIT;
        r->kind = r->jetsam == MDL_JETSAM_VM_PAGESHORTAGE ? MDL_REC_JETSAM_PAGESHORTAGE
                                                           : MDL_REC_JETSAM_SYSTEM;
        r->description = r->jetsam == MDL_JETSAM_VM_PAGESHORTAGE ? MDL_TEXT_JETSAM_PAGESHORTAGE
                                                                  : MDL_TEXT_JETSAM_SYSTEM;
        r->status = 9;
        /* the page model says whether a report lists it; the plain rule's
         * idle-exit is a kill in band 0 */
        if (x->jetsam != MDL_JETSAM_NONE ? x->unreported : !d->xnu_idle_snapshot)
            unreported(r);
        break;
    default: /* low_memory: over the per-process limit, in the foreground or
              * the background alike, or the app in front killed for the
              * system's pages (its cause kept); an EXC_RESOURCE report is a
              * diagnostic the app may get before, never the kill's record */
        r->status = 9;
        if (x->jetsam != MDL_JETSAM_NONE && x->jetsam != MDL_JETSAM_PER_PROCESS_LIMIT) {
            r->jetsam = x->jetsam;
            r->kind = r->jetsam == MDL_JETSAM_VM_PAGESHORTAGE ? MDL_REC_JETSAM_PAGESHORTAGE
                                                               : MDL_REC_JETSAM_SYSTEM;
            r->description = r->jetsam == MDL_JETSAM_VM_PAGESHORTAGE
                                 ? MDL_TEXT_JETSAM_PAGESHORTAGE
                                 : MDL_TEXT_JETSAM_SYSTEM;
            if (x->unreported)
                unreported(r);
            break;
        }
        r->jetsam = MDL_JETSAM_PER_PROCESS_LIMIT;
        r->kind = MDL_REC_JETSAM;
        r->description = MDL_TEXT_JETSAM;
        break;
    }
}

static void android_record(const mdl_device *d, const mdl_death *x, mdl_exit_record *r)
{
    r->kind = MDL_REC_EXIT_INFO;
    r->pss_kb = x->sample_pss_kb;
    r->rss_kb = x->sample_rss_kb;
    switch (x->why) {
    case MDL_EXIT_JAVA_CRASH:
        r->reason = MDL_AEI_CRASH;
        r->description = MDL_TEXT_JAVA_OOM;
        break;
    case MDL_EXIT_NATIVE_CRASH:
        r->reason = MDL_AEI_CRASH_NATIVE;
        r->status = 6;
        r->description = MDL_TEXT_NATIVE_ABRT;
        break;
    case MDL_EXIT_ANR:
        r->reason = MDL_AEI_ANR;
        r->description = MDL_TEXT_ANR;
        break;
    default: /* low_memory, system_reclaim: an lmkd kill */
        r->lmkd = x->lmkd;
        if (x->kernel_oom) { /* lmkd did not kill: the system sees a SIGKILL */
            r->kernel_oom = 1;
            r->reason = MDL_AEI_SIGNALED;
            r->status = 9;
            r->description = MDL_TEXT_SIGNALED;
        } else if (d->low_memory_reporting) {
            r->reason = MDL_AEI_LOW_MEMORY;
            r->description = MDL_TEXT_LMKD;
        } else {
            r->reason = MDL_AEI_SIGNALED;
            r->status = 9;
            r->description = MDL_TEXT_SIGNALED;
        }
        break;
    }
}

void mdl_exit_record_make(const mdl_device *d, const mdl_death *x, mdl_exit_record *out)
{
    memset(out, 0, sizeof *out);
    out->cls = x->why;
    out->time = x->time;
    out->stage = x->stage;
    out->importance = x->foreground ? 100 : 400;
    if (d->os == MDL_OS_IOS)
        ios_record(d, x, out);
    else
        android_record(d, x, out);
}

void mdl_record_kinds_add(mdl_record_kind_count *v, unsigned *n,
                          const mdl_record_kind_count *sig)
{
    unsigned k = 0;
    while (k < *n && !(v[k].kind == sig->kind && v[k].reason == sig->reason &&
                       v[k].status == sig->status && v[k].importance == sig->importance &&
                       v[k].description == sig->description && v[k].lmkd == sig->lmkd &&
                       v[k].jetsam == sig->jetsam))
        k++;
    if (k == *n && k < MDL_RECORD_KINDS_MAX) {
        v[k] = *sig;
        v[k].count = 0;
        v[k].pss_kb_sum = 0;
        (*n)++;
    }
    if (k < *n) { /* more signatures than the table: impossible with the model's records */
        v[k].count += sig->count;
        v[k].pss_kb_sum += sig->pss_kb_sum;
    }
}

void mdl_rep_add_record(mdl_rep *o, const mdl_exit_record *r)
{
    if (o->nrecords < MDL_RECORDS_KEPT)
        o->records[o->nrecords++] = *r;
    mdl_record_kind_count one = {r->kind, r->reason, r->status, r->importance,
                                 r->description, 1, r->pss_kb, r->lmkd, r->jetsam};
    mdl_record_kinds_add(o->record_kinds, &o->nrecord_kinds, &one);
}
