/* yamlout.c - what every importer writes with: a comment naming the input
 * line a value came from, input text made safe for a comment, sizes in
 * KiB, errors naming NAME:LINE, the bounds on what one phone can say, and
 * a time distribution from what a log gives. */
#include "import_int.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void scn__out_init(out *o, const char *name)
{
    memset(o, 0, sizeof *o);
    o->t = (sim_text)SIM_TEXT_INIT;
    o->name = name;
}

/* "  # NAME:LINE: what" at the end of a value's line. */
void scn__from(out *o, unsigned line, const char *what)
{
    if (line > 0)
        put(o, "  # %s:%u: %s\n", o->name, line, what);
    else
        put(o, "  # %s\n", what);
}

/* Text from an input that goes into a comment: printable ASCII only (a
 * control character or a newline would end the comment; the YAML must stay
 * UTF-8), others as '?'. */
void scn__clean_copy(char *dst, size_t n, const char *src, size_t len)
{
    size_t k = 0;
    for (size_t i = 0; i < len && k + 1 < n; i++)
        dst[k++] = src[i] >= 0x20 && src[i] < 0x7f ? src[i] : '?';
    dst[k] = '\0';
}

int64_t scn__kib_of(double bytes)
{
    return (int64_t)ceil(bytes / 1024.0);
}

int scn__fail_at(sim_error *err, const char *name, unsigned line, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return sim_error_set(err, SIM_EINPUT, "%s:%u: %s", name, line, what);
}

int scn__bounded(sim_error *err, const char *name, const measure *m, double scale,
                   int is_time, const char *what)
{
    if (m->line == 0 || m->v * scale <= (is_time ? TIME_BOUND_US : SIZE_BOUND))
        return SIM_OK;
    return scn__fail_at(err, name, m->line, "%s of %.6g: more than %s", what, m->v,
                   is_time ? "a week" : "256 GiB");
}

/* A time distribution from what a log gives: its median and p95 when
 * printed, else a lognormal fitted to the mean and standard deviation (the
 * lognormal with that mean and variance: sigma^2 = ln(1 + cv^2), median =
 * mean / sqrt(1 + cv^2)), else the mean as a plain value. */
void scn__time_dist(out *o, double mean_us, double sd_us, double median_us, double p95_us,
                      unsigned line, const char *what)
{
    /* whole microseconds, a median of at least 1 and a p95 above it: the
     * loader's rules for a lognormal */
    median_us = round(median_us);
    p95_us = round(p95_us);
    if (median_us >= 1 && p95_us > median_us) {
        put(o, "{dist: lognormal, median: %.0fus, p95: %.0fus}", median_us, p95_us);
        char c[600];
        snprintf(c, sizeof c, "%s: its median and p95 as measured", what);
        scn__from(o, line, c);
    } else if (sd_us > 0 && mean_us > 0) {
        double cv = sd_us / mean_us, s2 = log1p(cv * cv);
        double med = round(mean_us / sqrt(1 + cv * cv)), p95 = round(med * exp(1.6448536 * sqrt(s2)));
        if (med < 1)
            med = 1;
        put(o, "{dist: lognormal, median: %.0fus, p95: %.0fus}", med, p95 > med ? p95 : med + 1);
        char c[600];
        snprintf(c, sizeof c, "%s: a lognormal fitted to mean %.0f us and sd %.0f us "
                 "(assumed lognormal)", what, mean_us, sd_us);
        scn__from(o, line, c);
    } else {
        put(o, "%.0fus", mean_us);
        scn__from(o, line, what);
    }
}

/* Values a log measured once per request (tokens, a time in `unit`): one
 * plainly, several as an empirical distribution of them (each request's
 * drawn alone), the first 100000 when there are more (the loader's most),
 * said in the comment; `close` ends the value ("}" inside a flow map). */
void scn__values(out *o, const double *v, size_t n, const char *unit, const char *close,
                 unsigned line, const char *what)
{
    char c[400];
    if (n == 1) {
        put(o, "%.0f%s%s", v[0], unit, close);
        scn__from(o, line, what);
        return;
    }
    size_t keep = n > 100000 ? 100000 : n;
    put(o, "{dist: empirical, values: [");
    for (size_t k = 0; k < keep; k++)
        put(o, "%s%.0f%s", k ? ", " : "", v[k], unit);
    put(o, "]}%s", close);
    if (keep < n)
        snprintf(c, sizeof c, "%s: the first %zu of the log's %zu requests (the most a "
                 "distribution takes)", what, keep, n);
    else
        snprintf(c, sizeof c, "%s: the log's %zu requests, each drawn alone", what, n);
    scn__from(o, line, c);
}
