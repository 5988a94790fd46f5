/* capture.c - one capture's figures (capture_int.h): set with the line
 * they came from and how, what the capture lacked, what was read and not
 * used; the values kept from the kernel's files by name; a RAM's class.
 * Below the readers (bugreport.c, ips.c) and the writer (device_yaml.c). */
#include "capture_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

void cap__set(cap_phone *p, cap_key k, double v, unsigned line, const char *fmt, ...)
{
    if (!isfinite(v) || v < 0)
        return;
    cap_fig *f = &p->f[k];
    f->v = v;
    f->line = line > 0 ? line : 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->how, sizeof f->how, fmt, ap);
    va_end(ap);
}

void cap__missing(cap_phone *p, const char *fmt, ...)
{
    if (p->nmissing == sizeof p->missing / sizeof *p->missing)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->missing[p->nmissing++], sizeof p->missing[0], fmt, ap);
    va_end(ap);
}

void cap__ignored(cap_phone *p, const char *kind, unsigned n)
{
    for (unsigned k = 0; k < p->nign; k++)
        if (strcmp(p->ign_kind[k], kind) == 0) {
            p->ign_count[k] += n;
            return;
        }
    if (p->nign == sizeof p->ign_kind / sizeof *p->ign_kind) {
        p->ign_other += n;
        return;
    }
    snprintf(p->ign_kind[p->nign], sizeof p->ign_kind[0], "%s", kind);
    p->ign_count[p->nign++] = n;
}

void cap__release(cap_phone *p)
{
    for (unsigned k = 0; k < p->nbands; k++)
        free(p->band[k].size);
    p->nbands = 0;
    for (int k = 0; k < CAP_KEYS; k++) {
        free(p->series[k]);
        p->series[k] = NULL;
        p->nseries[k] = 0;
    }
    free(p->spike);
    p->spike = NULL;
    p->nspikes = 0;
}

/* The groups of dumpsys meminfo's OOM table: what the device profile does
 * with each (AOSP ActivityManagerService's DUMP_MEM_OOM_LABEL, every
 * release's labels): never killed for the app (the system), or killed
 * before it (the cached apps). */
int rpl__oom_role(const char *label)
{
    static const struct {
        const char *label;
        int role;
    } role[] = {
        {"Native", CAP_ROLE_SYSTEM},          {"System", CAP_ROLE_SYSTEM},
        {"Persistent", CAP_ROLE_SYSTEM},      {"Persistent Service", CAP_ROLE_SYSTEM},
        {"Foreground", CAP_ROLE_CACHED},      {"Visible", CAP_ROLE_SYSTEM},
        {"Perceptible", CAP_ROLE_SYSTEM},     {"Perceptible Low", CAP_ROLE_SYSTEM},
        {"Perceptible Medium", CAP_ROLE_SYSTEM}, {"Backup", CAP_ROLE_SYSTEM},
        {"Heavy Weight", CAP_ROLE_SYSTEM},    {"A Services", CAP_ROLE_SYSTEM},
        {"Home", CAP_ROLE_SYSTEM},            {"Previous", CAP_ROLE_CACHED},
        {"B Services", CAP_ROLE_CACHED},      {"Cached", CAP_ROLE_CACHED},
    };
    for (size_t k = 0; k < sizeof role / sizeof *role; k++)
        if (strcmp(role[k].label, label) == 0)
            return role[k].role;
    return -1;
}

double rpl__median(double *v, unsigned n)
{
    if (n == 0)
        return 0;
    gsl_sort(v, 1, n);
    return gsl_stats_median_from_sorted_data(v, 1, n);
}

const rpl_kv *rpl__kv(const rpl_kvs *kv, const char *name)
{
    for (unsigned k = 0; kv != NULL && k < kv->n; k++)
        if (strcmp(kv->e[k].name, name) == 0)
            return &kv->e[k];
    return NULL;
}

/* The marketed RAM class a phone's RAM falls in: the smallest class of
 * 1, 1.5, 2, 3, 4, 6, 8, 12, 16 or 24 GB (GiB) that holds it (MemTotal and
 * the pages the VM manages are a little under the chips' size). */
double rpl__ram_class(double ram)
{
    static const double gib[] = {1, 1.5, 2, 3, 4, 6, 8, 12, 16, 24};
    for (size_t k = 0; k < sizeof gib / sizeof *gib; k++)
        if (ram <= gib[k] * 1073741824.0)
            return gib[k];
    return 0;
}

const char *rpl_capture_kind_name(int kind)
{
    switch (kind) {
    case RPL_CAPTURE_BUGREPORT: return "Android bugreport";
    case RPL_CAPTURE_BUGREPORT_ZIP: return "Android bugreport (zip)";
    case RPL_CAPTURE_JETSAM: return "JetsamEvent report";
    case RPL_CAPTURE_PERFETTO: return "Perfetto trace";
    default: return "none";
    }
}
