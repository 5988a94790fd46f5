/* units.c - sizes, durations, rates and probabilities (docs/scenarios.md "Units").
 *
 * A value is a decimal number (digits, an optional fraction, an optional
 * exponent; no sign other than a leading '-', which is reported as
 * negative) followed, after optional blanks, by a unit from a fixed
 * table.  The number is read with strtod from a bounded local copy, after
 * a scan that admits only that grammar, so "inf", "nan" and hex never
 * slip through. */
#include "scenarios.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define ECHO_MAX 40

typedef struct unit {
    const char *name;
    double scale;
} unit;

static const unit size_units[] = {
    {"B", 1.0},
    {"KiB", 1024.0},
    {"MiB", 1048576.0},
    {"GiB", 1073741824.0},
    {"TiB", 1099511627776.0},
    {"KB", 1e3},
    {"MB", 1e6},
    {"GB", 1e9},
    {"TB", 1e12},
};
static const unit duration_units[] = {
    {"us", 1.0}, {"ms", 1e3}, {"s", 1e6}, {"min", 60e6}, {"h", 3600e6},
};
static const unit rate_units[] = {{"s", 1.0}, {"min", 1.0 / 60}, {"h", 1.0 / 3600}};

/* Fails with "expected WHAT, got "TEXT"" (TEXT cut to ECHO_MAX bytes). */
static int expected(sim_error *err, int code, const char *what, const char *s, size_t len)
{
    int n = (int)(len > ECHO_MAX ? ECHO_MAX : len);
    return sim_error_set(err, code, "expected %s, got \"%.*s%s\"", what, n, s,
                         len > ECHO_MAX ? "..." : "");
}

/* Length of the leading number of s (digits [. digits] [e [+-] digits]),
 * 0 when there is none.  *integral is set when it has no fraction or
 * exponent. */
static size_t scan_number(const char *s, size_t len, int *integral)
{
    size_t i = 0, digits = 0;
    *integral = 1;
    while (i < len && s[i] >= '0' && s[i] <= '9')
        i++, digits++;
    if (i < len && s[i] == '.') {
        *integral = 0;
        i++;
        while (i < len && s[i] >= '0' && s[i] <= '9')
            i++, digits++;
    }
    if (digits == 0)
        return 0;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1;
        if (j < len && (s[j] == '+' || s[j] == '-'))
            j++;
        size_t k = j;
        while (k < len && s[k] >= '0' && s[k] <= '9')
            k++;
        if (k > j) {
            *integral = 0;
            i = k;
        }
    }
    return i;
}

static double to_double(const char *s, size_t n)
{
    char buf[64];
    if (n >= sizeof buf)
        return HUGE_VAL; /* more digits than any bound needs */
    memcpy(buf, s, n);
    buf[n] = '\0';
    return strtod(buf, NULL);
}

static size_t skip_blanks(const char *s, size_t i, size_t len)
{
    while (i < len && (s[i] == ' ' || s[i] == '\t'))
        i++;
    return i;
}

/* Finds the unit named s[0..len); on a miss, a case-insensitive match is
 * offered as "did you mean". */
static const unit *find_unit(const unit *units, size_t count, const char *s, size_t len,
                             const unit **near)
{
    *near = NULL;
    for (size_t i = 0; i < count; i++) {
        if (strlen(units[i].name) != len)
            continue;
        if (memcmp(units[i].name, s, len) == 0)
            return &units[i];
        if (strncasecmp(units[i].name, s, len) == 0 && *near == NULL)
            *near = &units[i];
    }
    return NULL;
}

/* Words people write for a unit, and the unit they mean: a suggestion in
 * the message, never taken silently. */
static const struct {
    const char *word, *unit;
} unit_aliases[] = {
    {"minute", "min"},       {"minutes", "min"},     {"mins", "min"},   {"mn", "min"},
    {"m", "min"},            {"second", "s"},        {"seconds", "s"},  {"sec", "s"},
    {"secs", "s"},           {"hour", "h"},          {"hours", "h"},    {"hr", "h"},
    {"hrs", "h"},            {"millisecond", "ms"},  {"milliseconds", "ms"},
    {"msec", "ms"},          {"msecs", "ms"},        {"microsecond", "us"},
    {"microseconds", "us"},  {"usec", "us"},         {"\xc2\xb5s", "us"},
    {"byte", "B"},           {"bytes", "B"},         {"kilobytes", "KiB"},
    {"megabytes", "MiB"},    {"gigabytes", "GiB"},   {"mbytes", "MiB"}, {"gbytes", "GiB"},
};

/* The unit a word stands for, when `units` has it; NULL otherwise. */
static const char *alias_of(const unit *units, size_t count, const char *s, size_t len)
{
    for (size_t a = 0; a < sizeof unit_aliases / sizeof *unit_aliases; a++) {
        if (strlen(unit_aliases[a].word) != len || strncasecmp(unit_aliases[a].word, s, len) != 0)
            continue;
        for (size_t i = 0; i < count; i++)
            if (strcmp(units[i].name, unit_aliases[a].unit) == 0)
                return units[i].name;
    }
    return NULL;
}

typedef struct quantity {
    double value;
    int integral;
    const unit *u; /* NULL: no unit */
} quantity;

/* Parses "number [blanks] [unit]".  `what` describes the expected form. */
static int parse_quantity(const char *s, size_t len, const unit *units, size_t count,
                          const char *what, quantity *q, sim_error *err)
{
    size_t i = skip_blanks(s, 0, len);
    if (i < len && s[i] == '-') {
        int integral;
        if (scan_number(s + i + 1, len - i - 1, &integral) > 0)
            return sim_error_set(err, SIM_EINPUT, "expected %s, got a negative value \"%.*s\"",
                                 what, (int)(len > ECHO_MAX ? ECHO_MAX : len), s);
    }
    size_t n = scan_number(s + i, len - i, &q->integral);
    if (n == 0)
        return expected(err, SIM_EINPUT, what, s, len);
    q->value = to_double(s + i, n);
    size_t j = skip_blanks(s, i + n, len);
    size_t end = len;
    while (end > j && (s[end - 1] == ' ' || s[end - 1] == '\t'))
        end--;
    q->u = NULL;
    if (j == end)
        return SIM_OK;
    const unit *near;
    q->u = find_unit(units, count, s + j, end - j, &near);
    if (q->u != NULL)
        return SIM_OK;
    if (near != NULL)
        return sim_error_set(err, SIM_EINPUT, "unknown unit \"%.*s\" (did you mean \"%s\"?)",
                             (int)(end - j > ECHO_MAX ? ECHO_MAX : end - j), s + j, near->name);
    const char *alias = alias_of(units, count, s + j, end - j);
    if (alias != NULL) /* "10 minutes": did you mean "10min"? */
        return sim_error_set(err, SIM_EINPUT, "unknown unit \"%.*s\" in \"%.*s\": did you mean "
                             "\"%.*s%s\"?", (int)(end - j > ECHO_MAX ? ECHO_MAX : end - j), s + j,
                             (int)(len > ECHO_MAX ? ECHO_MAX : len), s,
                             (int)(n > ECHO_MAX ? ECHO_MAX : n), s + i, alias);
    return expected(err, SIM_EINPUT, what, s, len);
}

/* value * scale rounded to the nearest integer, within [0, max]. */
static int scaled(double value, double scale, int64_t max, int64_t *out)
{
    double x = value * scale;
    if (!(x <= (double)max))
        return SIM_ELIMIT;
    *out = (int64_t)floor(x + 0.5);
    if (*out > max)
        return SIM_ELIMIT;
    return SIM_OK;
}

int scn_parse_size(const char *s, size_t len, int64_t *bytes, sim_error *err)
{
    static const char what[] = "a size such as 230B, 48MiB or 1.5GiB";
    quantity q;
    int rc = parse_quantity(s, len, size_units, sizeof size_units / sizeof *size_units, what,
                            &q, err);
    if (rc != SIM_OK)
        return rc;
    if (q.u == NULL && !(q.integral && q.value == 0))
        return sim_error_set(err, SIM_EINPUT, "a size needs a unit (B, KiB, MiB, GiB, TiB, "
                             "KB, MB, GB, TB), got %.*s", (int)(len > ECHO_MAX ? ECHO_MAX : len),
                             s);
    int64_t v;
    if (scaled(q.value, q.u != NULL ? q.u->scale : 1.0, SCN_SIZE_MAX, &v) != SIM_OK)
        return sim_error_set(err, SIM_ELIMIT, "size \"%.*s\" exceeds the limit of 1TiB",
                             (int)(len > ECHO_MAX ? ECHO_MAX : len), s);
    *bytes = v;
    return SIM_OK;
}

int scn_parse_duration(const char *s, size_t len, sim_time *us, sim_error *err)
{
    static const char what[] = "a duration such as 250ms or 1.5s";
    quantity q;
    int rc = parse_quantity(s, len, duration_units,
                            sizeof duration_units / sizeof *duration_units, what, &q, err);
    if (rc != SIM_OK)
        return rc;
    if (q.u == NULL)
        return sim_error_set(err, SIM_EINPUT, "a duration needs a unit (us, ms, s, min or h), "
                             "got \"%.*s\"", (int)(len > ECHO_MAX ? ECHO_MAX : len), s);
    int64_t v;
    if (scaled(q.value, q.u->scale, SCN_DURATION_MAX, &v) != SIM_OK)
        return sim_error_set(err, SIM_ELIMIT, "duration \"%.*s\" exceeds the limit of 30 days",
                             (int)(len > ECHO_MAX ? ECHO_MAX : len), s);
    *us = v;
    return SIM_OK;
}

int scn_parse_rate(const char *s, size_t len, double *per_second, sim_error *err)
{
    static const char what[] = "a rate such as 0.5/s or 30/min";
    const char *slash = memchr(s, '/', len);
    if (slash == NULL)
        return expected(err, SIM_EINPUT, what, s, len);
    size_t n = (size_t)(slash - s);
    quantity q;
    int rc = parse_quantity(s, n, NULL, 0, what, &q, err);
    if (rc != SIM_OK || q.u != NULL)
        return rc != SIM_OK ? rc : expected(err, SIM_EINPUT, what, s, len);
    size_t j = skip_blanks(s, n + 1, len), end = len;
    while (end > j && (s[end - 1] == ' ' || s[end - 1] == '\t'))
        end--;
    const unit *near;
    const unit *u = find_unit(rate_units, sizeof rate_units / sizeof *rate_units, s + j,
                              end - j, &near);
    if (u == NULL)
        return expected(err, SIM_EINPUT, what, s, len);
    if (!(q.value > 0) || !(q.value < 1e9))
        return sim_error_set(err, SIM_ELIMIT, "rate \"%.*s\" must be above 0 and below "
                             "10^9 per unit", (int)(len > ECHO_MAX ? ECHO_MAX : len), s);
    *per_second = q.value * u->scale;
    return SIM_OK;
}

int scn_parse_probability(const char *s, size_t len, double *p, sim_error *err)
{
    static const char what[] = "a probability between 0 and 1 (or 0% and 100%)";
    static const unit percent[] = {{"%", 0.01}};
    quantity q;
    int rc = parse_quantity(s, len, percent, 1, what, &q, err);
    if (rc != SIM_OK)
        return rc;
    double v = q.u != NULL ? q.value * q.u->scale : q.value;
    if (!(v <= 1.0))
        return sim_error_set(err, SIM_EINPUT, "expected a probability between 0 and 1 (or 0%% "
                             "and 100%%), got \"%.*s\"", (int)(len > ECHO_MAX ? ECHO_MAX : len),
                             s);
    *p = v;
    return SIM_OK;
}
