/* checkpoint.c - a run's folded state, written so that a later run
 * continues from it (docs/results.md "Checkpoints").
 *
 * A checkpoint is taken at the end of a round of replications, once every
 * thread's and every rank's histograms are in rank 0's thread 0 (run.c):
 * what rank 0 then holds is the whole state of the run, and nothing in it
 * depends on the threads or ranks that made it.  It holds the finished
 * cells' figures and comparisons, the running cell's figures so far, its
 * accumulator (sums in replication order, the values kept for the
 * quantiles or the sketches past them, the wait and latency histograms,
 * the latency resamples) and the baseline's per-replication values.
 *
 * The file is binary, in this machine's byte order, with every record as
 * this build lays it out: a header names the format, the version, the
 * byte order and the record sizes, and the run it belongs to (scenario
 * digest, seed, replications, horizon, cells, values kept); then the
 * sections; then its length and a CRC-32 of everything before.  Every
 * count in it is checked against the plan before anything is used, and
 * the file is read whole, up to res_checkpoint_bound() bytes. */
#include "run_int.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#define CK_MAGIC "OOMSIMCK"
#define CK_FORMAT 2u
#define CK_ORDER UINT64_C(0x0102030405060708)

/* The sketches' buckets (stats.c): each side of a res__qhist. */
#define CK_QH_BUCKETS ((uint64_t)((63u - 10u) << 10) + (2u << 10))

typedef struct ck_header {
    char magic[8];
    uint64_t format, order;
    char version[16];
    /* the record sizes of the build that wrote it */
    uint64_t cell_size, cmp_size, hist_buckets, boot_resamples, qh_buckets, stages, metrics,
        record_kinds;
    /* the run it belongs to */
    uint64_t scenario, plan, seed, replications, first, horizon, ncells, cap;
    /* where it is: cells done, replications of the running cell done,
     * comparisons made */
    uint64_t cell, done, ncmp;
} ck_header;

/* The accumulator's counters and sums of the running cell. */
typedef struct ck_sums {
    double peak_sum, wait_sum, latency_sum, queue_area, alive, accepting, deaths;
    uint64_t boot_loops, nmargins;
    uint64_t ngen, gen_over; /* the LLM requests' pairs kept (genvals.c) */
    uint64_t nstage[MDL_STAGE_COUNT];
    uint64_t peak_stage[MDL_STAGE_COUNT + 1], death_stage[MDL_STAGE_COUNT + 1];
} ck_sums;

/* The baseline's own figures. */
typedef struct ck_base {
    uint64_t cell, completed;
    double peak_p95, any, avail, latency_p95;
} ck_base;

/* ------------------------------------------------------------ writing */

typedef struct ck_writer {
    sim_out *o;
    uLong crc;
    uint64_t bytes;
    sim_error *err;
    int rc;
} ck_writer;

static void put(ck_writer *w, const void *p, size_t n)
{
    if (w->rc != SIM_OK || n == 0)
        return;
    const unsigned char *b = p;
    /* crc32 takes at most UINT_MAX bytes a call */
    for (size_t at = 0; at < n;) {
        size_t piece = n - at < (size_t)1 << 30 ? n - at : (size_t)1 << 30;
        w->crc = crc32(w->crc, b + at, (uInt)piece);
        at += piece;
    }
    w->bytes += n;
    w->rc = sim_out_write(w->o, p, n, w->err);
}

static void put_u64(ck_writer *w, uint64_t v)
{
    put(w, &v, sizeof v);
}

/* A sketch: its count, extremes and non-zero buckets (index, count). */
static void put_sketch(ck_writer *w, const res__qhist *q)
{
    put_u64(w, q->n);
    put(w, &q->min, sizeof q->min);
    put(w, &q->max, sizeof q->max);
    const uint64_t *side[2] = {q->neg, q->pos};
    for (int s = 0; s < 2; s++) {
        uint64_t used = 0;
        for (uint64_t b = 0; side[s] != NULL && b < CK_QH_BUCKETS; b++)
            used += side[s][b] != 0;
        put_u64(w, used);
        for (uint64_t b = 0; side[s] != NULL && b < CK_QH_BUCKETS; b++)
            if (side[s][b] != 0) {
                put_u64(w, b);
                put_u64(w, side[s][b]);
            }
    }
}

/* A histogram: its count, then the range of its non-zero buckets and
 * their counts. */
static void put_hist(ck_writer *w, const res_hist *h)
{
    uint64_t lo = 0, hi = RES_HIST_BUCKETS;
    while (lo < RES_HIST_BUCKETS && h->count[lo] == 0)
        lo++;
    while (hi > lo && h->count[hi - 1] == 0)
        hi--;
    put_u64(w, h->n);
    put_u64(w, lo);
    put_u64(w, hi);
    put(w, &h->count[lo], (size_t)(hi - lo) * sizeof h->count[0]);
}

/* Latency resamples: their counts, then the non-zero rows (index, the
 * resamples' counts). */
/* Whether row k of the resamples holds a count (written, and not zero). */
static int boot_row(const boot_hist *h, unsigned k)
{
    if (!BOOT_USED(h, k))
        return 0;
    for (unsigned b = 0; b < RES_LATENCY_BOOT; b++)
        if (h->count[k][b] != 0)
            return 1;
    return 0;
}

static void put_boot(ck_writer *w, const boot_hist *h, unsigned lo, unsigned hi)
{
    put(w, h->n, sizeof h->n);
    uint64_t rows = 0;
    for (unsigned k = lo; k <= hi && k < RES_HIST_BUCKETS; k++)
        rows += (uint64_t)boot_row(h, k);
    put_u64(w, rows);
    for (unsigned k = lo; k <= hi && k < RES_HIST_BUCKETS; k++)
        if (boot_row(h, k)) {
            put_u64(w, k);
            put(w, h->count[k], sizeof h->count[k]);
        }
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

static void header_of(const res_plan *plan, uint64_t plan_digest, uint64_t cap, ck_header *h)
{
    memset(h, 0, sizeof *h);
    memcpy(h->magic, CK_MAGIC, sizeof h->magic);
    h->format = CK_FORMAT;
    h->order = CK_ORDER;
    snprintf(h->version, sizeof h->version, "%s", SIM_VERSION);
    h->cell_size = sizeof(res_cell);
    h->cmp_size = sizeof(res_comparison);
    h->hist_buckets = RES_HIST_BUCKETS;
    h->boot_resamples = RES_LATENCY_BOOT;
    h->qh_buckets = CK_QH_BUCKETS;
    h->stages = MDL_STAGE_COUNT;
    h->metrics = RES_CMP_COUNT;
    h->record_kinds = MDL_RECORD_KINDS_MAX;
    h->scenario = plan->digest;
    h->plan = plan_digest;
    h->seed = plan->seed;
    h->replications = plan->replications;
    h->first = plan->first_replication;
    h->horizon = (uint64_t)plan->horizon;
    h->ncells = plan->ncells;
    h->cap = cap;
}

int res__ckpt_write(const res_plan *plan, uint64_t plan_digest, const acc *a,
                    const res_cell *cells, unsigned cell, uint64_t done,
                    const res_comparison *cmp, unsigned ncmp, const char *path, sim_error *err)
{
    ck_writer w = {NULL, crc32(0L, Z_NULL, 0), 0, err, SIM_OK};
    w.rc = sim_out_open(path, &w.o, err);
    ck_header h;
    header_of(plan, plan_digest, a->cap, &h);
    h.cell = cell;
    h.done = done;
    h.ncmp = ncmp;
    put(&w, &h, sizeof h);
    put(&w, cells, (size_t)(cell + 1) * sizeof *cells);
    put(&w, cmp, (size_t)ncmp * sizeof *cmp);
    ck_sums s;
    memset(&s, 0, sizeof s);
    s.peak_sum = a->peak_sum;
    s.wait_sum = a->wait_sum;
    s.latency_sum = a->latency_sum;
    s.queue_area = a->queue_area;
    s.alive = a->alive;
    s.accepting = a->accepting;
    s.deaths = a->deaths;
    s.boot_loops = a->boot_loops;
    s.nmargins = a->nmargins;
    s.ngen = a->gen.v != NULL ? a->gen.n : 0;
    s.gen_over = a->gen.v != NULL && a->gen.over;
    memcpy(s.nstage, a->nstage, sizeof s.nstage);
    memcpy(s.peak_stage, a->peak_stage, sizeof s.peak_stage);
    memcpy(s.death_stage, a->death_stage, sizeof s.death_stage);
    put(&w, &s, sizeof s);
    /* the values kept, and the sketches of the arrays past them */
    const res_cell *c = &cells[cell];
    put(&w, a->peaks, (size_t)min_u64(done, a->cap) * sizeof(double));
    for (int k = 0; k < MDL_STAGE_COUNT; k++)
        put(&w, a->stage[k], (size_t)min_u64(a->nstage[k], a->cap) * sizeof(double));
    put(&w, a->switch_peaks, (size_t)min_u64(c->with_switch, a->cap) * sizeof(double));
    put(&w, a->margins, (size_t)min_u64(a->nmargins, a->cap) * sizeof(double));
    for (int m = 0; m < RES_CMP_COUNT; m++)
        put(&w, a->cur.v[m], (size_t)min_u64(done, a->cap) * sizeof(double));
    if (done > a->cap)
        put_sketch(&w, &a->q_peak);
    for (int k = 0; k < MDL_STAGE_COUNT; k++)
        if (a->nstage[k] > a->cap)
            put_sketch(&w, &a->q_stage[k]);
    if (c->with_switch > a->cap)
        put_sketch(&w, &a->q_switch);
    if (a->nmargins > a->cap)
        put_sketch(&w, &a->q_margin);
    /* the histograms and resamples, all in thread 0's */
    const times_hist *t0 = &a->per_thread[0];
    put_hist(&w, &t0->wait);
    put_hist(&w, &t0->latency);
    if (t0->boot != NULL)
        put_boot(&w, t0->boot, t0->boot_lo, t0->boot_hi);
    put(&w, a->gen.v, (size_t)(2 * s.ngen) * sizeof(double));
    /* the baseline the running cell is compared with */
    if (res__baseline_of(plan, cell) != cell) {
        ck_base b = {a->base_cell, a->base_completed, a->base_peak_p95, a->base_any,
                     a->base_avail, a->base_latency_p95};
        put(&w, &b, sizeof b);
        for (int m = 0; m < RES_CMP_COUNT; m++)
            put(&w, a->base.v[m], (size_t)min_u64(plan->replications, a->cap) * sizeof(double));
        put_boot(&w, a->boot_base, a->base_lo, a->base_hi);
    }
    uint64_t trailer[2] = {w.bytes + sizeof trailer, 0};
    put(&w, &trailer[0], sizeof trailer[0]);
    trailer[1] = w.crc;
    if (w.rc == SIM_OK)
        w.rc = sim_out_write(w.o, &trailer[1], sizeof trailer[1], err);
    if (w.rc == SIM_OK)
        w.rc = sim_out_close(w.o, err);
    if (w.rc == SIM_OK)
        w.rc = sim_out_commit(&w.o, 1, err);
    sim_out_free(w.o);
    return w.rc;
}

/* ------------------------------------------------------------ reading */

struct res_resume {
    char *data;   /* the file */
    size_t len;
    ck_header h;
    const char *path;
};

/* A cursor over the sections, which says where a section went wrong. */
typedef struct ck_reader {
    const unsigned char *p;
    size_t at, end;
    const char *path;
    sim_error *err;
    int rc;
} ck_reader;

static int bad(ck_reader *r, const char *what)
{
    if (r->rc == SIM_OK)
        r->rc = sim_error_set(r->err, SIM_EINPUT,
                              "%s: byte %zu: %s: not a checkpoint this run can resume from",
                              r->path, r->at, what);
    return r->rc;
}

static const void *take(ck_reader *r, size_t n, const char *what)
{
    if (r->rc != SIM_OK)
        return NULL;
    if (n > r->end - r->at) {
        bad(r, what);
        return NULL;
    }
    const void *p = r->p + r->at;
    r->at += n;
    return p;
}

static uint64_t take_u64(ck_reader *r, const char *what)
{
    uint64_t v = 0;
    const void *p = take(r, sizeof v, what);
    if (p != NULL)
        memcpy(&v, p, sizeof v);
    return v;
}

static void take_into(ck_reader *r, void *into, size_t n, const char *what)
{
    const void *p = take(r, n, what);
    if (p != NULL && n > 0)
        memcpy(into, p, n);
}

static int take_sketch(ck_reader *r, res__qhist *q, uint64_t n, const char *what)
{
    if (take_u64(r, what) != n)
        return bad(r, what);
    take_into(r, &q->min, sizeof q->min, what);
    take_into(r, &q->max, sizeof q->max, what);
    uint64_t total = 0;
    for (int s = 0; s < 2 && r->rc == SIM_OK; s++) {
        uint64_t used = take_u64(r, what);
        if (used > CK_QH_BUCKETS)
            return bad(r, what);
        uint64_t **side = s == 0 ? &q->neg : &q->pos;
        if (used > 0 && (*side = calloc(CK_QH_BUCKETS, sizeof **side)) == NULL)
            return r->rc = sim_error_set(r->err, SIM_ENOMEM, "%s: out of memory", r->path);
        uint64_t last = 0;
        for (uint64_t i = 0; i < used && r->rc == SIM_OK; i++) {
            uint64_t b = take_u64(r, what), c = take_u64(r, what);
            if (b >= CK_QH_BUCKETS || (i > 0 && b <= last) || c == 0 || c > n - total)
                return bad(r, what);
            (*side)[b] = c;
            total += c;
            last = b;
        }
    }
    q->n = n;
    return total == n ? r->rc : bad(r, what);
}

static int take_hist(ck_reader *r, res_hist *h, unsigned *lo, unsigned *hi, const char *what)
{
    uint64_t n = take_u64(r, what), from = take_u64(r, what), to = take_u64(r, what);
    if (r->rc != SIM_OK || from > to || to > RES_HIST_BUCKETS)
        return bad(r, what);
    take_into(r, &h->count[from], (size_t)(to - from) * sizeof h->count[0], what);
    uint64_t total = 0;
    for (uint64_t k = from; k < to && r->rc == SIM_OK; k++) {
        if (h->count[k] > n - total)
            return bad(r, what);
        total += h->count[k];
    }
    if (total != n)
        return bad(r, what);
    h->n = n;
    if (from < to) {
        *lo = (unsigned)from;
        *hi = (unsigned)(to - 1);
    }
    return r->rc;
}

static int take_boot(ck_reader *r, boot_hist *h, unsigned *lo, unsigned *hi, const char *what)
{
    take_into(r, h->n, sizeof h->n, what);
    uint64_t rows = take_u64(r, what), last = 0;
    if (rows > RES_HIST_BUCKETS)
        return bad(r, what);
    for (uint64_t i = 0; i < rows && r->rc == SIM_OK; i++) {
        uint64_t k = take_u64(r, what);
        if (k >= RES_HIST_BUCKETS || (i > 0 && k <= last))
            return bad(r, what);
        take_into(r, h->count[k], sizeof h->count[k], what);
        BOOT_MARK(h, k);
        if (i == 0)
            *lo = (unsigned)k;
        *hi = (unsigned)k;
        last = k;
    }
    /* each resample's count is its rows' sum */
    for (unsigned b = 0; b < RES_LATENCY_BOOT && r->rc == SIM_OK; b++) {
        uint64_t total = 0;
        for (unsigned k = *lo; rows > 0 && k <= *hi; k++)
            if (BOOT_USED(h, k))
                total += h->count[k][b];
        if (total != h->n[b])
            return bad(r, what);
    }
    return r->rc;
}

uint64_t res__comparisons_before(const res_plan *plan, unsigned cell)
{
    uint64_t n = 0;
    for (unsigned ci = 0; ci < cell; ci++)
        n += res__baseline_of(plan, ci) != ci ? RES_CMP_COUNT : 0;
    return n;
}

uint64_t res__ckpt_bound(const res_plan *plan, uint64_t cap, int with_boot)
{
    uint64_t kept = min_u64(plan->replications, cap), ncmp = res__comparisons_before(plan, plan->ncells);
    uint64_t arrays = 1 + MDL_STAGE_COUNT + 1 + 1 + RES_CMP_COUNT; /* the running cell's */
    uint64_t sketch = 8 * 5 + 2 * CK_QH_BUCKETS * 16;
    uint64_t hist = 8 * 3 + RES_HIST_BUCKETS * 8;
    uint64_t boot = sizeof(((boot_hist *)0)->n) + 8 + RES_HIST_BUCKETS * (8 + 8 * RES_LATENCY_BOOT);
    uint64_t n = sizeof(ck_header) + plan->ncells * sizeof(res_cell) + ncmp * sizeof(res_comparison) +
                 sizeof(ck_sums) + arrays * kept * 8 +
                 (plan->replications > cap ? (MDL_STAGE_COUNT + 3) * sketch : 0) + 2 * hist +
                 sizeof(ck_base) + RES_CMP_COUNT * kept * 8 + 16;
    return n + (with_boot ? 2 * boot : 0) + 16 * res__gen_kept(plan);
}

/* What differs between the checkpoint's run and this one, "" if nothing. */
static void differences(const ck_header *f, const ck_header *me, char *out, size_t size)
{
    out[0] = '\0';
    size_t at = 0;
#define DIFF(...)                                                                             \
    do {                                                                                      \
        if (at < size)                                                                        \
            at += (size_t)snprintf(out + at, size - at, "%s", at > 0 ? "; " : "");            \
        if (at < size)                                                                        \
            at += (size_t)snprintf(out + at, size - at, __VA_ARGS__);                         \
    } while (0)
    if (memcmp(f->version, me->version, sizeof f->version) != 0)
        DIFF("written by oomsim %.15s, this is %s", f->version, SIM_VERSION);
    else if (f->cell_size != me->cell_size || f->cmp_size != me->cmp_size ||
             f->hist_buckets != me->hist_buckets || f->boot_resamples != me->boot_resamples ||
             f->qh_buckets != me->qh_buckets || f->stages != me->stages ||
             f->metrics != me->metrics || f->record_kinds != me->record_kinds)
        DIFF("written by a build whose records differ (cell %llu bytes, this build's %llu)",
             (unsigned long long)f->cell_size, (unsigned long long)me->cell_size);
    if (f->scenario != me->scenario)
        DIFF("the scenario's text differs (digest %016llx, this run's %016llx)",
             (unsigned long long)f->scenario, (unsigned long long)me->scenario);
    if (f->seed != me->seed)
        DIFF("seed %llu, this run's %llu", (unsigned long long)f->seed,
             (unsigned long long)me->seed);
    if (f->replications != me->replications)
        DIFF("%llu replications, this run's %llu", (unsigned long long)f->replications,
             (unsigned long long)me->replications);
    if (f->first != me->first)
        DIFF("replications from %llu, this run's from %llu", (unsigned long long)f->first,
             (unsigned long long)me->first);
    if (f->horizon != me->horizon)
        DIFF("horizon %llu us, this run's %llu us", (unsigned long long)f->horizon,
             (unsigned long long)me->horizon);
    if (f->ncells != me->ncells)
        DIFF("%llu cells, this run's %llu", (unsigned long long)f->ncells,
             (unsigned long long)me->ncells);
    if (f->cap != me->cap)
        DIFF("%llu values kept per cell, this run's %llu", (unsigned long long)f->cap,
             (unsigned long long)me->cap);
    if (at == 0 && f->plan != me->plan)
        DIFF("the plan's cells differ (devices, candidates or policies)");
#undef DIFF
}

int res__ckpt_load(const res_plan *plan, uint64_t plan_digest, uint64_t cap, int with_boot,
                   const char *path, res_resume **out, sim_error *err)
{
    *out = NULL;
    uint64_t bound = res__ckpt_bound(plan, cap, with_boot);
    char *data = NULL;
    size_t len = 0;
    int rc = sim_read_file(path, bound > SIZE_MAX ? SIZE_MAX : (size_t)bound, &data, &len, err);
    if (rc == SIM_ELIMIT)
        return sim_error_set(err, SIM_EINPUT, "%s: larger than a checkpoint of this run can be "
                             "(%llu bytes): not a checkpoint of this run", path,
                             (unsigned long long)bound);
    if (rc != SIM_OK)
        return rc;
    return res__ckpt_parse(plan, plan_digest, cap, data, len, path, out, err);
}

int res__ckpt_parse(const res_plan *plan, uint64_t plan_digest, uint64_t cap, char *data,
                    size_t len, const char *path, res_resume **out, sim_error *err)
{
    *out = NULL;
    ck_header h;
    if (len < sizeof h + 16 || memcmp(data, CK_MAGIC, 8) != 0) {
        free(data);
        return sim_error_set(err, SIM_EINPUT, "%s: not an oomsim checkpoint", path);
    }
    memcpy(&h, data, sizeof h);
    uint64_t trailer[2];
    memcpy(trailer, data + len - 16, sizeof trailer);
    if (h.format != CK_FORMAT || h.order != CK_ORDER) {
        free(data);
        return sim_error_set(err, SIM_EINPUT, "%s: a checkpoint of another format or byte "
                             "order (format %llu)", path, (unsigned long long)h.format);
    }
    uLong crc = crc32(0L, Z_NULL, 0);
    for (size_t at = 0; at < len - 8;) {
        size_t piece = len - 8 - at < (size_t)1 << 30 ? len - 8 - at : (size_t)1 << 30;
        crc = crc32(crc, (const unsigned char *)data + at, (uInt)piece);
        at += piece;
    }
    if (trailer[0] != len || trailer[1] != crc) {
        free(data);
        return sim_error_set(err, SIM_EINPUT, "%s: the checkpoint is truncated or corrupt (%zu "
                             "bytes; its check does not match): nothing was used", path, len);
    }
    ck_header me;
    header_of(plan, plan_digest, cap, &me);
    char diff[SIM_ERROR_MSG_MAX];
    differences(&h, &me, diff, sizeof diff);
    if (diff[0] != '\0') {
        free(data);
        return sim_error_set(err, SIM_EINPUT, "%s: a checkpoint of another run: %s", path, diff);
    }
    ck_reader r = {(const unsigned char *)data, sizeof h, len - 16, path, err, SIM_OK};
    if (h.cell >= plan->ncells)
        bad(&r, "the cell it stopped in");
    else if (h.done > plan->replications)
        bad(&r, "the replications done");
    else if (h.ncmp != res__comparisons_before(plan, (unsigned)h.cell))
        bad(&r, "the comparisons made");
    if (r.rc != SIM_OK) {
        free(data);
        return r.rc;
    }
    res_resume *res = calloc(1, sizeof *res);
    if (res == NULL) {
        free(data);
        return sim_error_set(err, SIM_ENOMEM, "%s: out of memory", path);
    }
    res->data = data;
    res->len = len;
    res->h = h;
    res->path = path;
    *out = res;
    return SIM_OK;
}

void res_resume_free(res_resume *r)
{
    if (r == NULL)
        return;
    free(r->data);
    free(r);
}

void res_resume_where(const res_resume *r, unsigned *cell, uint64_t *done)
{
    *cell = (unsigned)r->h.cell;
    *done = r->h.done;
}

/* Reads `n` values of an array kept up to cap. */
static void take_values(ck_reader *r, double *into, uint64_t n, uint64_t cap, const char *what)
{
    take_into(r, into, (size_t)min_u64(n, cap) * sizeof(double), what);
}

/* What later code uses as an index, checked: the cells' and the
 * comparisons' enums and cells, the running cell's counts. */
static int check_restored(ck_reader *r, const res_plan *plan, const ck_header *h,
                          const res_cell *cells, const res_comparison *cmp, const ck_sums *s)
{
    unsigned cell = (unsigned)h->cell;
    uint64_t done = h->done;
    for (unsigned ci = 0; ci <= cell; ci++) {
        const res_cell *x = &cells[ci];
        if (x->nrecords > MDL_RECORD_KINDS_MAX || (unsigned)x->top_reason >= MDL_EXIT_COUNT ||
            (unsigned)x->top_death_stage > MDL_STAGE_COUNT)
            return bad(r, "the cells' figures");
        for (unsigned k = 0; k < x->nrecords; k++)
            if ((unsigned)x->records[k].kind >= MDL_REC_KIND_COUNT ||
                (unsigned)x->records[k].description >= MDL_TEXT_COUNT ||
                (unsigned)x->records[k].lmkd >= MDL_LMKD_COUNT ||
                (unsigned)x->records[k].jetsam >= MDL_JETSAM_COUNT)
                return bad(r, "the cells' exit records");
    }
    for (uint64_t k = 0; k < h->ncmp; k++)
        if ((unsigned)cmp[k].metric >= RES_CMP_COUNT || cmp[k].baseline >= plan->ncells ||
            cmp[k].cell >= cell)
            return bad(r, "the comparisons");
    const res_cell *c = &cells[cell];
    if (s->nmargins > done || c->with_switch > done)
        return bad(r, "the running cell's counts");
    for (int k = 0; k < MDL_STAGE_COUNT; k++)
        if (s->nstage[k] > done)
            return bad(r, "the running cell's counts");
    uint64_t at_peak = 0;
    for (int k = 0; k <= MDL_STAGE_COUNT; k++)
        at_peak += s->peak_stage[k];
    if (at_peak != done)
        return bad(r, "the running cell's counts");
    /* while not over, every request so far is kept */
    if (s->ngen > c->gen_requests || s->ngen > res__gen_kept(plan) || s->gen_over > 1 ||
        (!s->gen_over && s->ngen != c->gen_requests))
        return bad(r, "the LLM requests' values");
    return SIM_OK;
}

/* The running cell's sums into its accumulator. */
static void restore_sums(acc *a, const ck_sums *s)
{
    a->peak_sum = s->peak_sum;
    a->wait_sum = s->wait_sum;
    a->latency_sum = s->latency_sum;
    a->queue_area = s->queue_area;
    a->alive = s->alive;
    a->accepting = s->accepting;
    a->deaths = s->deaths;
    a->boot_loops = s->boot_loops;
    a->nmargins = s->nmargins;
    memcpy(a->nstage, s->nstage, sizeof s->nstage);
    memcpy(a->peak_stage, s->peak_stage, sizeof s->peak_stage);
    memcpy(a->death_stage, s->death_stage, sizeof s->death_stage);
}

/* The running cell's kept values, or past a->cap their sketches, and its
 * histograms and latency resamples. */
static void restore_values(ck_reader *r, acc *a, uint64_t done, uint64_t with_switch)
{
    take_values(r, a->peaks, done, a->cap, "the peaks");
    for (int k = 0; k < MDL_STAGE_COUNT; k++)
        take_values(r, a->stage[k], a->nstage[k], a->cap, "the stages' peaks");
    take_values(r, a->switch_peaks, with_switch, a->cap, "the switch peaks");
    take_values(r, a->margins, a->nmargins, a->cap, "the margins");
    for (int m = 0; m < RES_CMP_COUNT; m++)
        take_values(r, a->cur.v[m], done, a->cap, "the values compared");
    if (done > a->cap)
        take_sketch(r, &a->q_peak, done, "the peaks' sketch");
    for (int k = 0; k < MDL_STAGE_COUNT; k++)
        if (a->nstage[k] > a->cap)
            take_sketch(r, &a->q_stage[k], a->nstage[k], "a stage's sketch");
    if (with_switch > a->cap)
        take_sketch(r, &a->q_switch, with_switch, "the switch peaks' sketch");
    if (a->nmargins > a->cap)
        take_sketch(r, &a->q_margin, a->nmargins, "the margins' sketch");
    times_hist *t0 = &a->per_thread[0];
    unsigned lo = RES_HIST_BUCKETS, hi = 0;
    take_hist(r, &t0->wait, &t0->pool_lo, &t0->pool_hi, "the wait histogram");
    take_hist(r, &t0->latency, &lo, &hi, "the latency histogram");
    if (lo < t0->pool_lo)
        t0->pool_lo = lo;
    if (hi > t0->pool_hi)
        t0->pool_hi = hi;
    if (t0->boot != NULL)
        take_boot(r, t0->boot, &t0->boot_lo, &t0->boot_hi, "the latency resamples");
}

/* The running cell's LLM requests' pairs (checked against its cap). */
static void restore_gen(ck_reader *r, acc *a, const ck_sums *s)
{
    if (a->gen.v == NULL)
        return;
    take_into(r, a->gen.v, (size_t)(2 * s->ngen) * sizeof(double), "the LLM requests' values");
    a->gen.n = s->ngen;
    a->gen.over = (int)s->gen_over;
}

/* The baseline's figures and values, when the running cell has one. */
static void restore_baseline(ck_reader *r, const res_plan *plan, unsigned cell, acc *a)
{
    unsigned base = res__baseline_of(plan, cell);
    if (base == cell || r->rc != SIM_OK)
        return;
    ck_base b;
    take_into(r, &b, sizeof b, "the baseline");
    if (r->rc == SIM_OK && b.cell != base)
        bad(r, "the baseline");
    a->base_cell = base;
    a->base_completed = b.completed;
    a->base_peak_p95 = b.peak_p95;
    a->base_any = b.any;
    a->base_avail = b.avail;
    a->base_latency_p95 = b.latency_p95;
    for (int m = 0; m < RES_CMP_COUNT; m++)
        take_values(r, a->base.v[m], plan->replications, a->cap, "the baseline's values");
    if (a->boot_base != NULL)
        take_boot(r, a->boot_base, &a->base_lo, &a->base_hi, "the baseline's resamples");
}

int res__ckpt_restore(const res_plan *plan, const res_resume *res, acc *a, res_cell *cells,
                      res_comparison *cmp, sim_error *err)
{
    const ck_header *h = &res->h;
    unsigned cell = (unsigned)h->cell;
    ck_reader r = {(const unsigned char *)res->data, sizeof *h, res->len - 16, res->path, err,
                   SIM_OK};
    take_into(&r, cells, (size_t)(cell + 1) * sizeof *cells, "the cells' figures");
    take_into(&r, cmp, (size_t)h->ncmp * sizeof *cmp, "the comparisons");
    ck_sums s;
    take_into(&r, &s, sizeof s, "the running cell's sums");
    if (r.rc != SIM_OK)
        return r.rc;
    int rc = check_restored(&r, plan, h, cells, cmp, &s);
    if (rc != SIM_OK)
        return rc;
    restore_sums(a, &s);
    restore_values(&r, a, h->done, cells[cell].with_switch);
    restore_gen(&r, a, &s);
    restore_baseline(&r, plan, cell, a);
    if (r.rc == SIM_OK && r.at != r.end)
        bad(&r, "bytes after the last section");
    return r.rc;
}
