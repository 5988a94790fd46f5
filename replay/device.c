/* device.c - `oomsim import device` (docs/devices.md): captures of a phone
 * recognised by their content, read into figures (bugreport.c, ips.c),
 * grouped by phone model and folded over the captures of each, then
 * written as device profiles (device_yaml.c). */
#include "capture_int.h"

#include "traces/traces.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the kinds ------------------------------------------------------------ */

int rpl_capture_kind(const char *data, size_t len)
{
    if (len >= 4 && memcmp(data, "PK\003\004", 4) == 0)
        return RPL_CAPTURE_BUGREPORT_ZIP;
    if (rpl__bugreport_detect(data, len))
        return RPL_CAPTURE_BUGREPORT;
    if (rpl_ips_detect(data, len) == 1)
        return RPL_CAPTURE_JETSAM;
    if (trc_pf_detect(data, len))
        return RPL_CAPTURE_PERFETTO;
    return RPL_CAPTURE_NONE;
}

int rpl_capture_kind_of_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return RPL_CAPTURE_NONE;
    char head[8192];
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    return rpl_capture_kind(head, n);
}

static int not_a_capture(const cap_phone *p, sim_error *err)
{
    return sim_error_set(err, SIM_EINPUT, "%s:1: not a capture oomsim reads: an Android "
                         "bugreport (its .zip, or its main text, which opens with \"== "
                         "dumpstate:\"), a Perfetto trace of the phone, or an iOS JetsamEvent "
                         "report (.ips, bug_type 298)",
                         p->file);
}

/* A capture in a file: a bugreport's text read in pieces, a zip through
 * libarchive from the file, a report whole (it is small). */
static int read_file_capture(const rpl_capture *in, cap_phone *p, sim_error *err)
{
    FILE *f = fopen(in->path, "rb");
    if (f == NULL)
        return sim_error_set(err, SIM_EINPUT, "cannot read %s: %s", in->path, strerror(errno));
    char head[8192];
    size_t n = fread(head, 1, sizeof head, f);
    p->kind = rpl_capture_kind(head, n);
    int rc;
    if (p->kind == RPL_CAPTURE_BUGREPORT) {
        rewind(f);
        rc = rpl__bugreport_file(f, p->file, p, err);
        fclose(f);
        return rc;
    }
    fclose(f);
    if (p->kind == RPL_CAPTURE_BUGREPORT_ZIP)
        return rpl__bugreport_zip(NULL, 0, in->path, p->file, p, err);
    if (p->kind == RPL_CAPTURE_PERFETTO) /* a packet at a time */
        return rpl__perfetto_phone(in->path, NULL, 0, p->file, p, err);
    if (p->kind != RPL_CAPTURE_JETSAM)
        return not_a_capture(p, err);
    char *text = NULL;
    size_t len = 0;
    rc = sim_read_file(in->path, (size_t)64 << 20, &text, &len, err);
    if (rc == SIM_OK)
        rc = rpl__ips_phone(text, len, p->file, p, err);
    free(text);
    return rc;
}

/* One capture read. */
static int read_one(const rpl_capture *in, cap_phone *p, sim_error *err)
{
    memset(p, 0, sizeof *p);
    rpl__utf8_copy(p->file, sizeof p->file, in->name);
    if (in->data == NULL)
        return read_file_capture(in, p, err);
    p->kind = rpl_capture_kind(in->data, in->len);
    switch (p->kind) {
    case RPL_CAPTURE_BUGREPORT:
        return rpl__bugreport_read(in->data, in->len, p->file, p, err);
    case RPL_CAPTURE_BUGREPORT_ZIP:
        return rpl__bugreport_zip(in->data, in->len, NULL, p->file, p, err);
    case RPL_CAPTURE_JETSAM:
        return rpl__ips_phone(in->data, in->len, p->file, p, err);
    case RPL_CAPTURE_PERFETTO:
        return rpl__perfetto_phone(NULL, in->data, in->len, p->file, p, err);
    default:
        return not_a_capture(p, err);
    }
}

/* What identifies the phone: its model, else its OS and RAM class. */
static void phone_id(const cap_phone *p, char *buf, size_t n)
{
    double cls = rpl__ram_class(p->f[CAP_RAM].v);
    if (p->model[0] != '\0')
        snprintf(buf, n, "%s (%s, %g GB)", p->model, p->os == MDL_OS_IOS ? "iOS" : "Android",
                 cls);
    else
        snprintf(buf, n, "an %s phone of %g GB", p->os == MDL_OS_IOS ? "iOS" : "Android", cls);
}

/* One phone: the same OS, RAM class and model (a trace names no model:
 * it joins the captures of its OS and RAM class). */
static int same_phone(const cap_phone *a, const cap_phone *b)
{
    return a->os == b->os && rpl__ram_class(a->f[CAP_RAM].v) == rpl__ram_class(b->f[CAP_RAM].v) &&
           (a->model[0] == '\0' || b->model[0] == '\0' || strcmp(a->model, b->model) == 0);
}

/* The profile through the loader's check: figures out of a phone's range
 * (a RAM the assumed system share fills) are the captures' fault, said in
 * the loader's words. */
static int checked(const rpl_device_opts *o, const rpl_device_yaml *v, const cap_phone *first,
                   sim_error *err)
{
    sim_error why;
    sim_error_clear(&why);
    if (o->check == NULL || o->check(o->ctx, v->yaml, v->name, &why) == SIM_OK)
        return SIM_OK;
    if (why.code == SIM_ENOMEM)
        return sim_error_set(err, SIM_ENOMEM, "%s", why.msg);
    return sim_error_set(err, SIM_EINPUT, "%s: its figures make no phone a profile can hold "
                         "(the profile written from it: %s)", first->file, why.msg);
}

int rpl_device_import(const rpl_capture *in, unsigned n, const rpl_device_opts *o,
                      rpl_device_yaml **out, unsigned *n_out, sim_error *err)
{
    *out = NULL;
    *n_out = 0;
    if (n == 0)
        return sim_error_set(err, SIM_EINVAL, "import device: a capture is needed");
    if (n > RPL_CAPTURES_MAX)
        return sim_error_set(err, SIM_ELIMIT, "import device: at most %u captures",
                             RPL_CAPTURES_MAX);
    cap_phone *p = calloc(n, sizeof *p);
    unsigned *group = calloc(n, sizeof *group);
    rpl_device_yaml *v = calloc(n, sizeof *v);
    int rc = p == NULL || group == NULL || v == NULL
                 ? sim_error_set(err, SIM_ENOMEM, "import device: out of memory") : SIM_OK;
    unsigned read = 0;
    for (; rc == SIM_OK && read < n; read++) {
        rc = read_one(&in[read], &p[read], err);
        if (rc == SIM_OK && p[read].f[CAP_RAM].line == 0)
            rc = sim_error_set(err, SIM_EINPUT, "%s: the phone's RAM is in none of its "
                               "sections (MEMORY INFO's MemTotal, dumpsys meminfo's Total RAM, "
                               "memoryStatus): no profile can rest on it", p[read].file);
        if (rc == SIM_OK && rpl__ram_class(p[read].f[CAP_RAM].v) == 0)
            rc = sim_error_set(err, SIM_EINPUT, "%s:%u: a RAM of %.0f MiB is beyond the "
                               "classes of phones (24 GB at most)", p[read].file,
                               p[read].f[CAP_RAM].line, p[read].f[CAP_RAM].v / 1048576.0);
    }
    /* the groups: one phone, or one per model; a group's phone is named by
     * its first capture that names a model */
    unsigned ngroups = 0;
    const cap_phone **named = calloc(n, sizeof *named);
    if (rc == SIM_OK && named == NULL)
        rc = sim_error_set(err, SIM_ENOMEM, "import device: out of memory");
    for (unsigned k = 0; rc == SIM_OK && k < n; k++) {
        unsigned g = 0;
        while (g < ngroups && !same_phone(named[g], &p[k]))
            g++;
        if (g == ngroups) {
            if (ngroups > 0 && !o->group_by_model) {
                char a[160], b[160];
                phone_id(named[0], a, sizeof a);
                phone_id(&p[k], b, sizeof b);
                rc = sim_error_set(err, SIM_EINPUT, "%s is %s and %s is %s: a profile is one "
                                   "model of phone (--group-by model writes one profile per "
                                   "model)", named[0]->file, a, p[k].file, b);
                break;
            }
            named[ngroups++] = &p[k];
        } else if (named[g]->model[0] == '\0') {
            named[g] = &p[k];
        }
        group[k] = g;
    }
    free(named);
    for (unsigned g = 0; rc == SIM_OK && g < ngroups; g++) {
        const cap_phone *members[RPL_CAPTURES_MAX];
        unsigned m = 0;
        for (unsigned k = 0; k < n; k++)
            if (group[k] == g)
                members[m++] = &p[k];
        rc = rpl__device_write(members, m, o, ngroups > 1, &v[g], err);
        if (rc == SIM_OK)
            (*n_out)++;
        if (rc == SIM_OK)
            rc = checked(o, &v[g], members[0], err);
    }
    for (unsigned k = 0; p != NULL && k < n; k++)
        cap__release(&p[k]);
    free(p);
    free(group);
    if (rc != SIM_OK) {
        rpl_device_yaml_free(v, n);
        *n_out = 0;
        return rc;
    }
    *out = v;
    return SIM_OK;
}

void rpl_device_yaml_free(rpl_device_yaml *v, unsigned n)
{
    for (unsigned k = 0; v != NULL && k < n; k++)
        free(v[k].yaml);
    free(v);
}
