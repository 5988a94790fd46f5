/* calibrate.c - the fit of `oomsim calibrate` (calibrate.h,
 * docs/calibration.md).
 *
 * The objective: for each field entry, the users with a visible memory
 * death out of `users`, binomial around the predicted per-user-day
 * probability q = 1 - (1 - p)^s, p the cell's per-session probability of
 * one; and for an entry with background_rate, a second binomial of the
 * same users against the cell's background memory deaths.  A simulated p
 * is noisy, and with the same seeds at every point it is still a jagged
 * function of the unknowns (a changed spike interval
 * moves every later spike, and a replication's death comes and goes), so
 * the likelihood is not maximised on the runs themselves: each stage runs
 * the fitted cells at a design of points (a grid for one unknown, a Halton
 * sequence for more) in one plan run, fits per rate a logistic
 * regression of the simulated deaths on the unknowns (linear and square
 * terms, and cross terms: GSL's weighted least squares, iterated), and
 * maximises the binomial likelihood of the observed users on that smooth
 * surface.  The unknowns are searched on y = logit((x - lo) / (hi - lo)),
 * inside their bounds.  The first stage covers the whole range; each next
 * one is centred on the fit, twice as wide as its interval, with twice the
 * replications, until the simulation's noise on the predicted rates (the
 * regression's own standard error, which pools the design's points) is
 * under a tenth of the observed rates', or 16 times the plan's
 * replications are reached.  The 95 % interval of each unknown is where
 * its profile likelihood (the others maximised) falls 1.92 under the top;
 * the inverse of the likelihood's curvature at the fit gives the
 * correlations.  A last plan run at the fit gives the rates after. */
#include "calibrate.h"
#include "internal.h"
#include "sim/sim.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_multimin.h>

#define CHI2_1_95 3.841458820694124

#define NS_MAX MDL_UNKNOWNS_MAX
#define P_MAX (1 + 2 * NS_MAX + NS_MAX * (NS_MAX - 1) / 2)
#define DESIGN_MAX RES_CAL_DESIGN_MAX
#define Y_EDGE 6.0 /* |y| at most: within 0.25 % of a bound */

/* One rate fitted: a cell's visible or background memory deaths against
 * its field entry's users with one. */
typedef struct obs {
    unsigned cell;
    int background;
    double users, observed; /* the field's users, and those with one */
    double sessions;        /* a user's sessions a day */
} obs;

typedef struct fit {
    const res_plan *plan;
    const mdl_unknown *u;
    unsigned nu;
    const res_cal_ctl *ctl;
    sim_error *err;
    /* the fitted cells: the first of each device with a field entry */
    unsigned ncells;
    const mdl_cell **proto;
    const mdl_field **entry;
    /* the rates fitted: each cell's visible one, and its background one
     * after it where the entry gives one */
    unsigned nobs;
    obs ob[RES_CAL_ENTRIES_MAX];
    /* the design run: points x cells */
    mdl_cell *cells;
    mdl_device *dev;
    const char **json;
    uint64_t *k;               /* [point * nobs + rate] */
    uint64_t *run_k;           /* a plan run's counts (res__cal_run) */
    uint64_t reps, max_reps;
    unsigned evals, max_evals;
    unsigned runs;             /* plan runs (each a design, or a check) */
    int searched[NS_MAX];
    unsigned ns, idx[NS_MAX];  /* the searched unknowns' indices */
    double x0[NS_MAX];         /* every unknown's start */
    /* the surrogate: per rate, logit p = beta . phi(y) */
    unsigned np;
    double beta[RES_CAL_ENTRIES_MAX][P_MAX];
    double cov[RES_CAL_ENTRIES_MAX][P_MAX * P_MAX];
    double lo[NS_MAX], hi[NS_MAX]; /* the stage's box in y */
    /* per rate: the share of the observed rate's variance in the whole
     * (the field's and the simulation's): each rate's log-likelihood is
     * weighted by it, so that an interval carries the simulation's noise */
    double kappa[RES_CAL_ENTRIES_MAX];
    const mdl_field *left_out;     /* an entry not fitted on (--holdout), NULL: none */
} fit;

static double logit(double t)
{
    return log(t / (1 - t));
}

static double sigmoid(double v)
{
    return 1 / (1 + exp(-v));
}

static double to_x(const mdl_unknown *u, double y)
{
    return u->lo + (u->hi - u->lo) * sigmoid(y);
}

static double to_y(const mdl_unknown *u, double x)
{
    double t = (x - u->lo) / (u->hi - u->lo);
    t = t < 1e-6 ? 1e-6 : t > 1 - 1e-6 ? 1 - 1e-6 : t;
    return logit(t);
}

/* Every unknown's value at the searched ones' y. */
static void point_of(const fit *f, const double *y, double *x)
{
    memcpy(x, f->x0, sizeof f->x0);
    for (unsigned i = 0; i < f->ns; i++)
        x[f->idx[i]] = to_x(&f->u[f->idx[i]], y[i]);
}

/* ---- a plan run at a design of points ---- */

/* The device of cell c at x: 0 when a value cannot be set there. */
static int device_at(const fit *f, unsigned c, const double *x, mdl_device *d)
{
    *d = *f->proto[c]->device;
    for (unsigned j = 0; j < f->nu; j++) {
        if (f->u[j].device[0] != '\0' && strcmp(f->u[j].device, d->name) != 0)
            continue;
        sim_error why;
        sim_error_clear(&why);
        if (mdl_knob_set(d, f->u[j].knob, x[j], &why) != SIM_OK)
            return 0;
    }
    return 1;
}

/* The n points (every unknown's value) run as one plan (each point's
 * cells at f->reps): each rate's counts in f->k; ok[i] 0 for a point whose
 * values cannot be set. */
static int run_points(fit *f, const double (*x)[NS_MAX], unsigned n, int *ok)
{
    if (f->evals + n > f->max_evals)
        return sim_error_set(f->err, SIM_ELIMIT, "calibrate: the budget of %u points is "
                             "spent", f->max_evals);
    unsigned m = 0;
    uint64_t digest = sim_digest(0, &f->reps, sizeof f->reps);
    for (unsigned c = 0; c < f->ncells; c++) { /* the cells, by their place in the plan */
        size_t at = (size_t)(f->proto[c] - f->plan->cells);
        digest = sim_digest(digest, &at, sizeof at);
    }
    for (unsigned i = 0; i < n; i++) {
        ok[i] = 1;
        for (unsigned c = 0; c < f->ncells && ok[i]; c++)
            ok[i] = device_at(f, c, x[i], &f->dev[i * f->ncells + c]);
        digest = sim_digest(digest, x[i], f->nu * sizeof x[i][0]);
        digest = sim_digest(digest, &ok[i], sizeof ok[i]);
        for (unsigned c = 0; ok[i] && c < f->ncells; c++) {
            f->cells[m] = *f->proto[c];
            f->cells[m].device = &f->dev[i * f->ncells + c];
            f->json[m++] = "{}";
        }
    }
    if (m == 0)
        return sim_error_set(f->err, SIM_EINPUT, "calibrate: none of the %u points can be set "
                             "on the devices (each breaks a device's own rules, such as a "
                             "uniform's min past its max): narrow the bounds", n);
    res_plan p = *f->plan;
    p.cells = f->cells;
    p.policy_json = f->json;
    p.ncells = m;
    p.replications = f->reps;
    p.checkpoint = NULL;
    int rc = res__cal_run(f->ctl, &p, digest, f->run_k, f->err);
    if (rc != SIM_OK)
        return rc;
    f->evals += n;
    f->runs++;
    for (unsigned i = 0, at = 0; i < n; i++) { /* the run's cells: each point's in turn */
        if (!ok[i])
            continue;
        for (unsigned o = 0; o < f->nobs; o++)
            f->k[i * f->nobs + o] = f->run_k[(f->ob[o].background ? m : 0) + at + f->ob[o].cell];
        at += f->ncells;
    }
    return SIM_OK;
}

/* ---- the surrogate ---- */

static unsigned features(const fit *f, const double *y, double *phi)
{
    unsigned n = 0;
    phi[n++] = 1;
    for (unsigned i = 0; i < f->ns; i++)
        phi[n++] = y[i];
    for (unsigned i = 0; i < f->ns; i++)
        phi[n++] = y[i] * y[i];
    for (unsigned i = 0; i < f->ns; i++)
        for (unsigned j = i + 1; j < f->ns; j++)
            phi[n++] = y[i] * y[j];
    return n;
}

/* Rate c's logistic regression on the design's counts (IRLS). */
static int regress(fit *f, unsigned c, const double (*y)[NS_MAX], unsigned n, const int *ok)
{
    unsigned m = 0, np = f->np;
    for (unsigned i = 0; i < n; i++)
        m += ok[i] != 0;
    if (m <= np) /* a regression needs more points than terms */
        return sim_error_set(f->err, SIM_EINPUT, "calibrate: only %u of the design's %u points "
                             "can be set on the devices (the others break a device's own "
                             "rules): too few to fit %u terms; narrow the bounds", m, n, np);
    gsl_matrix *X = gsl_matrix_alloc(m, np), *C = gsl_matrix_alloc(np, np);
    gsl_vector *w = gsl_vector_alloc(m), *z = gsl_vector_alloc(m), *b = gsl_vector_calloc(np);
    gsl_multifit_linear_workspace *ws = gsl_multifit_linear_alloc(m, np);
    int rc = X && C && w && z && b && ws ? SIM_OK
                                         : sim_error_set(f->err, SIM_ENOMEM, "out of memory");
    for (unsigned i = 0, r = 0; rc == SIM_OK && i < n; i++) {
        if (!ok[i])
            continue;
        double phi[P_MAX];
        features(f, y[i], phi);
        for (unsigned j = 0; j < np; j++)
            gsl_matrix_set(X, r, j, phi[j]);
        r++;
    }
    for (int it = 0; rc == SIM_OK && it < 30; it++) {
        for (unsigned i = 0, r = 0; i < n; i++) {
            if (!ok[i])
                continue;
            double eta = 0;
            for (unsigned j = 0; j < np; j++)
                eta += gsl_matrix_get(X, r, j) * gsl_vector_get(b, j);
            double mu = sigmoid(eta), R = (double)f->reps;
            mu = mu < 1e-6 ? 1e-6 : mu > 1 - 1e-6 ? 1 - 1e-6 : mu;
            double got = ((double)f->k[i * f->nobs + c] + 0.5) / (R + 1);
            gsl_vector_set(w, r, R * mu * (1 - mu));
            gsl_vector_set(z, r, eta + (got - mu) / (mu * (1 - mu)));
            r++;
        }
        double chisq;
        if (gsl_multifit_wlinear(X, w, z, b, C, &chisq, ws) != GSL_SUCCESS)
            break;
    }
    for (unsigned j = 0; rc == SIM_OK && j < np; j++) {
        f->beta[c][j] = gsl_vector_get(b, j);
        for (unsigned k = 0; k < np; k++)
            f->cov[c][j * np + k] = gsl_matrix_get(C, j, k);
    }
    gsl_matrix_free(X), gsl_matrix_free(C);
    gsl_vector_free(w), gsl_vector_free(z), gsl_vector_free(b);
    gsl_multifit_linear_free(ws);
    return rc;
}

/* Rate c's smoothed p at y, and the standard error of its logit. */
static double p_at(const fit *f, unsigned c, const double *y, double *se)
{
    double phi[P_MAX], eta = 0, v = 0;
    features(f, y, phi);
    for (unsigned j = 0; j < f->np; j++) {
        eta += f->beta[c][j] * phi[j];
        for (unsigned k = 0; k < f->np; k++)
            v += phi[j] * f->cov[c][j * f->np + k] * phi[k];
    }
    if (se != NULL)
        *se = sqrt(v > 0 ? v : 0);
    return sigmoid(eta);
}

/* The observed users' log-likelihood at y on the surrogate. */
static double ll_at(const fit *f, const double *y)
{
    double sum = 0;
    for (unsigned c = 0; c < f->nobs; c++) {
        const obs *o = &f->ob[c];
        double q = res__day_rate(p_at(f, c, y, NULL), o->sessions);
        q = q < 1e-12 ? 1e-12 : q > 1 - 1e-12 ? 1 - 1e-12 : q;
        sum += f->kappa[c] * (o->observed * log(q) + (o->users - o->observed) * log1p(-q));
    }
    return sum;
}

/* ---- the maximum and the profiles, on the surrogate ---- */

typedef struct prof {
    const fit *f;
    int fixed;        /* -1: none; else the searched index held at `at` */
    double at;
} prof;

static void full_y(const prof *p, const gsl_vector *v, double *y)
{
    for (unsigned i = 0, k = 0; i < p->f->ns; i++)
        y[i] = (int)i == p->fixed ? p->at : gsl_vector_get(v, k++);
}

static double neg_ll(const gsl_vector *v, void *ctx)
{
    const prof *p = ctx;
    double y[NS_MAX];
    full_y(p, v, y);
    double pen = 0;
    for (unsigned i = 0; i < p->f->ns; i++) { /* the box: no extrapolation */
        if (y[i] < p->f->lo[i])
            pen += 1e3 * (p->f->lo[i] - y[i]), y[i] = p->f->lo[i];
        if (y[i] > p->f->hi[i])
            pen += 1e3 * (y[i] - p->f->hi[i]), y[i] = p->f->hi[i];
    }
    return -ll_at(p->f, y) + pen;
}

/* The surrogate's maximum (over the free coordinates) from y, in place. */
static double maximise(const fit *f, int fixed, double at, double *y)
{
    prof p = {f, fixed, at};
    unsigned n = f->ns - (fixed >= 0);
    if (n == 0) {
        y[fixed] = at;
        return ll_at(f, y);
    }
    gsl_multimin_function fn = {neg_ll, n, &p};
    gsl_vector *v = gsl_vector_alloc(n), *st = gsl_vector_alloc(n);
    gsl_multimin_fminimizer *m = gsl_multimin_fminimizer_alloc(gsl_multimin_fminimizer_nmsimplex2,
                                                               n);
    double best = -INFINITY;
    if (v != NULL && st != NULL && m != NULL) {
        for (unsigned i = 0, k = 0; i < f->ns; i++)
            if ((int)i != fixed) {
                gsl_vector_set(v, k, y[i]);
                gsl_vector_set(st, k++, 0.25 * (f->hi[i] - f->lo[i]));
            }
        gsl_multimin_fminimizer_set(m, &fn, v, st);
        for (int it = 0; it < 2000; it++)
            if (gsl_multimin_fminimizer_iterate(m) != GSL_SUCCESS ||
                gsl_multimin_fminimizer_size(m) < 1e-6)
                break;
        full_y(&p, m->x, y);
        for (unsigned i = 0; i < f->ns; i++)
            y[i] = y[i] < f->lo[i] ? f->lo[i] : y[i] > f->hi[i] ? f->hi[i] : y[i];
        best = ll_at(f, y);
    }
    gsl_multimin_fminimizer_free(m);
    gsl_vector_free(v);
    gsl_vector_free(st);
    return best;
}

/* The best of a few starts: the box's centre and the design's corners'
 * midpoints (the likelihood of a logistic surface can have two tops). */
static double best_of(const fit *f, double *y)
{
    double top = -INFINITY, cand[NS_MAX];
    for (int s = -1; s <= 1; s++) {
        for (unsigned i = 0; i < f->ns; i++)
            cand[i] = (f->lo[i] + f->hi[i]) / 2 + s * (f->hi[i] - f->lo[i]) / 4;
        double v = maximise(f, -1, 0, cand);
        if (v > top) {
            top = v;
            memcpy(y, cand, f->ns * sizeof *y);
        }
    }
    return top;
}

/* Searched unknown i's interval in y: where its profile falls 1.92 under
 * the top, on a grid of the box refined by bisection; the box's edge when
 * it does not fall that far inside it. */
static void profile(const fit *f, unsigned i, const double *ystar, double top, double *lo,
                    double *hi)
{
    for (int side = -1; side <= 1; side += 2) {
        double in = ystar[i], out = side < 0 ? f->lo[i] : f->hi[i], y[NS_MAX];
        memcpy(y, ystar, f->ns * sizeof *y);
        if (top - maximise(f, (int)i, out, y) < CHI2_1_95 / 2) {
            *(side < 0 ? lo : hi) = out;
            continue;
        }
        for (int it = 0; it < 30; it++) {
            double mid = (in + out) / 2;
            memcpy(y, ystar, f->ns * sizeof *y);
            if (top - maximise(f, (int)i, mid, y) < CHI2_1_95 / 2)
                in = mid;
            else
                out = mid;
        }
        *(side < 0 ? lo : hi) = (in + out) / 2;
    }
}

/* ---- the stages ---- */

/* The design over the box: a grid of 9 for one unknown; a Halton sequence
 * (bases 2, 3, 5, 7, 11, 13) of 2P + 7 points with the centre for more. */
static unsigned design(const fit *f, double (*y)[NS_MAX])
{
    if (f->ns == 1) {
        for (unsigned i = 0; i < 9; i++)
            y[i][0] = f->lo[0] + (f->hi[0] - f->lo[0]) * i / 8.0;
        return 9;
    }
    static const unsigned base[NS_MAX] = {2, 3, 5, 7, 11, 13};
    unsigned n = 2 * f->np + 7;
    n = n > DESIGN_MAX ? DESIGN_MAX : n;
    for (unsigned i = 0; i < n; i++)
        for (unsigned d = 0; d < f->ns; d++) {
            double h = 0, frac = 1;
            for (unsigned k = i; k > 0; k /= base[d]) /* the radical inverse of i */
                frac /= base[d], h += frac * (double)(k % base[d]);
            y[i][d] = f->lo[d] + (f->hi[d] - f->lo[d]) * (i == 0 ? 0.5 : h);
        }
    return n;
}

/* A stage: the design run and the surrogates fitted. */
static int stage(fit *f)
{
    double (*y)[NS_MAX] = calloc(DESIGN_MAX, sizeof *y);
    double (*x)[NS_MAX] = calloc(DESIGN_MAX, sizeof *x);
    int *ok = calloc(DESIGN_MAX, sizeof *ok);
    int rc = y != NULL && x != NULL && ok != NULL
                 ? SIM_OK : sim_error_set(f->err, SIM_ENOMEM, "out of memory");
    unsigned n = rc == SIM_OK ? design(f, y) : 0;
    for (unsigned i = 0; i < n; i++)
        point_of(f, y[i], x[i]);
    if (rc == SIM_OK)
        rc = run_points(f, (const double(*)[NS_MAX])x, n, ok);
    for (unsigned c = 0; rc == SIM_OK && c < f->nobs; c++)
        rc = regress(f, c, (const double(*)[NS_MAX])y, n, ok);
    free(y);
    free(x);
    free(ok);
    return rc;
}

/* The simulation's noise on each predicted rate at y over the field's
 * (the worst entry's), each entry's weight set from it.  The surrogate's
 * own error pools the design's points, but with the same seeds at every
 * point their error is shared, not averaged away: the noise is at least a
 * single run's binomial error at the replications used. */
static double noise_share(fit *f, const double *y)
{
    double worst = 0;
    for (unsigned c = 0; c < f->nobs; c++) {
        double se, p = p_at(f, c, y, &se), s = f->ob[c].sessions;
        double q = res__day_rate(p, s), dq = s * pow(1 - p, s - 1);
        double sim_p = fmax(p * (1 - p) * se, sqrt(p * (1 - p) / (double)f->reps));
        double sim = dq * sim_p, field = sqrt(q * (1 - q) / f->ob[c].users);
        double r = field > 0 ? sim / field : 0;
        f->kappa[c] = 1 / (1 + r * r);
        worst = r > worst ? r : worst;
    }
    return worst;
}

/* Does unknown i move any predicted rate across its range, beyond twice
 * the surrogate's error (the others at y)? */
static int moves(const fit *f, unsigned i, const double *y)
{
    double a[NS_MAX], b[NS_MAX];
    memcpy(a, y, f->ns * sizeof *a);
    memcpy(b, y, f->ns * sizeof *b);
    a[i] = f->lo[i], b[i] = f->hi[i];
    for (unsigned c = 0; c < f->nobs; c++) {
        double sa, sb, pa = p_at(f, c, a, &sa), pb = p_at(f, c, b, &sb);
        double ea = logit(pa), eb = logit(pb);
        if (fabs(ea - eb) > 2 * sqrt(sa * sa + sb * sb) && fabs(pa - pb) > 1e-4)
            return 1;
    }
    return 0;
}

/* Each pair of searched unknowns' correlation with the others held at the
 * fit: -H_ik / sqrt(H_ii H_kk) of -log L's Hessian at y (central
 * differences on the surrogate); +-1 when the pair's curvature is flat
 * along a line: a ridge, the rates fixing a combination of the two. */
static void correlations(const fit *f, const double *y, res_calibration *out)
{
    const double h = 0.05;
    unsigned n = f->ns;
    double H[NS_MAX][NS_MAX];
    for (unsigned i = 0; i < n; i++)
        for (unsigned k = i; k < n; k++) {
            double v[4], t[NS_MAX];
            for (int s = 0; s < 4; s++) {
                memcpy(t, y, n * sizeof *t);
                t[i] += (s & 1 ? -h : h);
                t[k] += (s & 2 ? -h : h);
                v[s] = -ll_at(f, t);
            }
            H[i][k] = H[k][i] = (v[0] - v[1] - v[2] + v[3]) / (4 * h * h);
        }
    for (unsigned i = 0; i < n; i++)
        for (unsigned k = 0; k < n; k++) {
            double d = H[i][i] * H[k][k];
            double r = i == k ? 1 : d > 0 ? -H[i][k] / sqrt(d) : 0;
            out->corr[f->idx[i]][f->idx[k]] = r > 1 ? 1 : r < -1 ? -1 : r;
        }
}

/* The entries' predicted rates from a run at x (before, or after), the
 * deviance against the saturated model with it. */
static int rates_at(fit *f, const double *x, res_calibration *out, int after)
{
    double at[1][NS_MAX];
    int ok = 0;
    memcpy(at[0], x, sizeof at[0]);
    int rc = run_points(f, (const double(*)[NS_MAX])at, 1, &ok);
    if (rc == SIM_OK && !ok)
        rc = sim_error_set(f->err, SIM_EINPUT, "calibrate: the values cannot be set on the "
                           "devices");
    double dev = 0;
    for (unsigned c = 0; rc == SIM_OK && c < f->nobs; c++) {
        res_cal_entry *e = &out->e[c];
        const obs *o = &f->ob[c];
        double s = o->sessions, p = (double)f->k[c] / (double)f->reps;
        res_interval ci = res_wilson95(f->k[c], f->reps);
        *(after ? &e->after : &e->before) = res__day_rate(p, s);
        res_interval *vi = after ? &e->after_ci : &e->before_ci;
        vi->lo = res__day_rate(ci.lo, s);
        vi->hi = res__day_rate(ci.hi, s);
        double users = o->users, got = o->observed;
        double q = res__day_rate(((double)f->k[c] + 0.5) / ((double)f->reps + 1), s);
        double ll = got * log(q) + (users - got) * log1p(-q);
        if (after)
            out->loglik += ll;
        else
            out->loglik_start += ll;
        /* weighted as the likelihood is: the simulation's noise is no misfit */
        double d = 0;
        if (got > 0)
            d += got * log(got / (users * q));
        if (users > got)
            d += (users - got) * log((users - got) / (users * (1 - q)));
        dev += f->kappa[c] * d;
    }
    if (after) {
        out->deviance = 2 * dev;
        out->df = f->nobs > f->ns ? f->nobs - f->ns : 0;
        out->gof_p = out->df > 0 ? gsl_cdf_chisq_Q(out->deviance, out->df) : NAN;
    }
    return rc;
}

static int setup(fit *f, const res_plan *plan)
{
    unsigned n = plan->ncells;
    f->proto = calloc(n, sizeof *f->proto);
    f->entry = calloc(n, sizeof *f->entry);
    if (f->proto == NULL || f->entry == NULL)
        return sim_error_set(f->err, SIM_ENOMEM, "calibrate: out of memory");
    for (unsigned i = 0; i < n; i++) {
        const mdl_device *d = plan->cells[i].device;
        const mdl_field *e = res__field_entry(plan, d);
        unsigned c = 0;
        while (c < f->ncells && f->proto[c]->device != d)
            c++;
        if (e == NULL || e == f->left_out || c < f->ncells)
            continue; /* no entry, left out, or the device's first cell is taken */
        f->proto[c] = &plan->cells[i];
        f->entry[c] = e;
        f->ncells++;
    }
    if (f->ncells == 0)
        return sim_error_set(f->err, SIM_EINPUT, "calibrate: no device of the plan has a field "
                             "entry");
    if (f->ncells > MDL_FIELD_MAX)
        f->ncells = MDL_FIELD_MAX;
    for (unsigned c = 0; c < f->ncells; c++)
        for (int b = 0; b <= f->entry[c]->has_background; b++) {
            const mdl_field *e = f->entry[c];
            double users = (double)e->users;
            f->ob[f->nobs++] = (obs){c, b, users, (double)llround((b ? e->background_rate
                                                                     : e->rate) * users),
                                     e->sessions_per_day};
        }
    size_t m = (size_t)DESIGN_MAX * f->ncells;
    f->cells = calloc(m, sizeof *f->cells);
    f->dev = calloc(m, sizeof *f->dev);
    f->json = calloc(m, sizeof *f->json);
    f->k = calloc((size_t)DESIGN_MAX * f->nobs, sizeof *f->k);
    f->run_k = calloc(2 * m, sizeof *f->run_k);
    if (f->cells == NULL || f->dev == NULL || f->json == NULL || f->k == NULL ||
        f->run_k == NULL)
        return sim_error_set(f->err, SIM_ENOMEM, "calibrate: out of memory");
    return SIM_OK;
}

static void release(fit *f)
{
    free(f->proto);
    free(f->entry);
    free(f->cells);
    free(f->dev);
    free(f->json);
    free(f->k);
    free(f->run_k);
}

/* The searched unknowns (np set): those marked. */
static void searched_set(fit *f)
{
    f->ns = 0;
    for (unsigned j = 0; j < f->nu; j++)
        if (f->searched[j])
            f->idx[f->ns++] = j;
    f->np = 1 + 2 * f->ns + f->ns * (f->ns - 1) / 2;
}

/* The stages: the whole range first, then around the fit. */
static int stages(fit *f, res_calibration *out, double *ystar)
{
    int rc = SIM_OK;
    uint64_t cap = f->max_reps;
    for (unsigned i = 0; i < f->ns; i++)
        f->lo[i] = -Y_EDGE, f->hi[i] = Y_EDGE;
    for (int round = 0; rc == SIM_OK; round++) {
        if ((rc = stage(f)) != SIM_OK)
            break;
        if (round == 0) { /* what moves no rate is left at its start */
            double mid[NS_MAX] = {0};
            for (unsigned i = 0; i < f->ns; i++)
                mid[i] = to_y(&f->u[f->idx[i]], f->x0[f->idx[i]]);
            int any = 0;
            for (unsigned i = 0; i < f->ns; i++) {
                int m = moves(f, i, mid);
                out->u[f->idx[i]].identifiable = m;
                f->searched[f->idx[i]] = m;
                any |= m;
            }
            unsigned before = f->ns;
            searched_set(f);
            if (!any)
                return SIM_OK;
            if (f->ns < before) { /* the box again, without them */
                continue;
            }
        }
        for (unsigned c = 0; c < f->nobs; c++)
            f->kappa[c] = 1;
        best_of(f, ystar);
        double share = noise_share(f, ystar), top = best_of(f, ystar);
        out->noise_share = share;
        double lo[NS_MAX], hi[NS_MAX];
        for (unsigned i = 0; i < f->ns; i++)
            profile(f, i, ystar, top, &lo[i], &hi[i]);
        for (unsigned i = 0; i < f->ns; i++) {
            res_cal_unknown *u = &out->u[f->idx[i]];
            u->fitted = to_x(&f->u[f->idx[i]], ystar[i]);
            u->lo = to_x(&f->u[f->idx[i]], lo[i]);
            u->hi = to_x(&f->u[f->idx[i]], hi[i]);
            u->interval_exact = 1;
            u->at_bound = ystar[i] <= -Y_EDGE + 0.1 ? -1 : ystar[i] >= Y_EDGE - 0.1 ? 1 : 0;
        }
        if (f->ns > 1)
            correlations(f, ystar, out);
        /* the fit or its interval on an edge of the box that is not a bound:
         * the box moves there first (at most 12 stages in all) */
        int edge = 0;
        for (unsigned i = 0; i < f->ns; i++)
            edge |= (lo[i] <= f->lo[i] + 1e-3 && f->lo[i] > -Y_EDGE + 1e-3) ||
                    (hi[i] >= f->hi[i] - 1e-3 && f->hi[i] < Y_EDGE - 1e-3);
        /* the whole range's surrogate is coarse: a stage around the fit always
         * follows it */
        if ((round > 0 && !edge && (share <= 0.1 || f->reps >= cap)) || round >= 11)
            break;
        /* the next: around the fit, twice its interval (wider when it met the
         * box), twice the replications unless the box only moved */
        for (unsigned i = 0; i < f->ns; i++) {
            double w = hi[i] - lo[i];
            w = w < 0.5 ? 0.5 : w;
            if (edge)
                w = fmax(w, f->hi[i] - f->lo[i]);
            if (fabs(ystar[i]) > Y_EDGE - 1) /* near a bound: a box the profile can span */
                w = fmax(w, 3);
            f->lo[i] = fmax(-Y_EDGE, ystar[i] - w);
            f->hi[i] = fmin(Y_EDGE, ystar[i] + w);
        }
        if (!edge)
            f->reps = f->reps * 2 < cap ? f->reps * 2 : cap;
    }
    return rc;
}

int res_calibrate(const res_plan *plan, const mdl_unknown *u, unsigned nu,
                  const res_cal_ctl *ctl, res_calibration *out, sim_error *err)
{
    return res_calibrate_without(plan, NULL, u, nu, ctl, out, err);
}

/* The check run at the fit against the surface it was found on: an entry
 * whose run lies more than 4 binomial errors from the surface's rate is a
 * jump the smooth surface did not follow (out->missed, its index; else
 * -1), and the fit is not one. */
static void check_surface(const fit *f, const double *ystar, res_calibration *out)
{
    for (unsigned c = 0; c < f->nobs; c++) {
        double R = (double)f->reps, ph = p_at(f, c, ystar, NULL);
        double z = fabs((double)f->k[c] - R * ph) / sqrt(R * ph * (1 - ph) + 0.25);
        if (z > 4 && out->missed < 0) {
            out->missed = (int)c;
            out->missed_rate = res__day_rate(ph, f->ob[c].sessions);
        }
    }
}

/* Each rate fitted as the calibration's entry: its device, field entry
 * and observed users. */
static void entries(fit *f, res_calibration *out)
{
    for (unsigned c = 0; c < f->nobs; c++) {
        res_cal_entry *e = &out->e[c];
        const obs *o = &f->ob[c];
        const mdl_field *fe = f->entry[o->cell];
        f->kappa[c] = 1;
        snprintf(e->device, sizeof e->device, "%s", f->proto[o->cell]->device->name);
        e->field = (unsigned)(fe - f->plan->field);
        e->background = o->background;
        e->users = fe->users;
        e->observed_users = (uint64_t)o->observed;
        e->observed = o->background ? fe->background_rate : fe->rate;
        e->observed_ci = res_wilson95(e->observed_users, e->users);
    }
    out->nentries = f->nobs;
}

int res_calibrate_without(const res_plan *plan, const mdl_field *left_out, const mdl_unknown *u,
                          unsigned nu, const res_cal_ctl *ctl, res_calibration *out,
                          sim_error *err)
{
    memset(out, 0, sizeof *out);
    out->missed = -1;
    if (nu == 0 || nu > MDL_UNKNOWNS_MAX)
        return sim_error_set(err, SIM_EINVAL, "calibrate: 1 to %d unknowns", MDL_UNKNOWNS_MAX);
    fit *f = calloc(1, sizeof *f);
    if (f == NULL)
        return sim_error_set(err, SIM_ENOMEM, "calibrate: out of memory");
    f->plan = plan, f->u = u, f->nu = nu, f->ctl = ctl, f->err = err;
    f->left_out = left_out;
    f->reps = plan->replications, f->max_evals = ctl->max_evals;
    f->max_reps = ctl->max_reps > 0 ? ctl->max_reps : plan->replications * 16;
    f->max_reps = f->max_reps < f->reps ? f->reps : f->max_reps;
    int rc = setup(f, plan);
    out->nu = nu;
    /* the start: each unknown's value on the first device it names */
    for (unsigned j = 0; rc == SIM_OK && j < nu; j++) {
        double v = (u[j].lo + u[j].hi) / 2;
        for (unsigned c = 0; c < f->ncells; c++)
            if (u[j].device[0] == '\0' || strcmp(u[j].device, f->proto[c]->device->name) == 0) {
                sim_error why;
                sim_error_clear(&why);
                if (mdl_knob_get(f->proto[c]->device, u[j].knob, &v, &why) != SIM_OK ||
                    v <= u[j].lo || v >= u[j].hi)
                    v = (u[j].lo + u[j].hi) / 2;
                break;
            }
        f->x0[j] = out->u[j].start = out->u[j].fitted = v;
        out->u[j].lo = u[j].lo, out->u[j].hi = u[j].hi;
        out->u[j].identifiable = 1;
        f->searched[j] = 1;
    }
    if (rc == SIM_OK)
        entries(f, out);
    searched_set(f);
    if (rc == SIM_OK)
        rc = rates_at(f, f->x0, out, 0);
    double ystar[NS_MAX] = {0};
    if (rc == SIM_OK)
        rc = stages(f, out, ystar);
    int budget = rc == SIM_ELIMIT;
    if (rc == SIM_OK) /* the check runs (two points) are not charged to the budget */
        f->max_evals = UINT_MAX;
    double x[NS_MAX];
    point_of(f, ystar, x);
    if (rc == SIM_OK)
        rc = rates_at(f, x, out, 1);
    if (rc == SIM_OK && f->ns > 0)
        check_surface(f, ystar, out);
    if (rc == SIM_OK && f->reps != plan->replications) {
        /* before, again at the replications after was run at: the two
         * likelihoods then compare (an entry with no death scores by its
         * replications) */
        out->loglik_start = 0;
        rc = rates_at(f, f->x0, out, 0);
    }
    out->replications = f->reps;
    out->evaluations = f->evals;
    out->plan_runs = f->runs;
    out->converged = rc == SIM_OK && out->missed < 0;
    if (budget) { /* the figures are where it stopped */
        sim_error_clear(err);
        rc = SIM_OK;
    }
    release(f);
    free(f);
    return rc;
}
