/* fleet.c - the fleet formats, to a scenario's field block (docs/imports/
 * metrickit.md, docs/imports/play-vitals.md): MetricKit payloads (one
 * device's day each) and Play vitals' LMK-rate rows, read into groups (a
 * device type, a RAM bucket or a model) and written by one writer. */
#include "import_int.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "traces/json.h"

/* One group of the fleet (a device type, a RAM bucket, a model). */
typedef struct fleet_group {
    char label[64];         /* as the fleet names it */
    int64_t ram_mb;         /* a RAM bucket, MB; 0: by name */
    double hits, total;     /* MetricKit: payloads with an exit, payloads;
                               vitals: sum of rate x users, sum of users */
    double bg_hits;         /* MetricKit: payloads with a background memory exit */
    size_t first, count;    /* the first record (payload or row) and how many */
    double peak, suspended; /* MetricKit: the largest peak and suspended memory, bytes */
    double foreground_s;    /* MetricKit: cumulativeForegroundTime summed, seconds */
    unsigned foreground_unread; /* ... payloads whose time could not be read */
    /* MetricKit: every exit count, foreground [0] and background [1], summed by kind
     * (the key without "cumulative" and "ExitCount") */
    char kinds[2][16][48];
    double counts[2][16];
    unsigned nkinds[2];
} fleet_group;

#define GROUPS_MAX 256

/* What the fleet formats read: the groups and the records they came from. */
typedef struct fleet {
    fleet_group *g; /* GROUPS_MAX of them */
    unsigned ng;
    size_t records;  /* payloads or rows */
    scn_tally *ignored; /* the keys read and not used (the driver's) */
    unsigned more_pages; /* responses with a nextPageToken: rows not fetched */
} fleet;

/* A device name from the fleet's label (a model "google/coral", an iOS
 * deviceType "iPhone13,2"): lowercase letters and digits, other runs as
 * one '-' (the loader's names). */
static void device_name(char *dst, size_t n, const char *label)
{
    size_t k = 0;
    int dash = 0;
    for (const char *p = label; *p != '\0' && k + 2 < n; p++) {
        unsigned char c = (unsigned char)*p;
        if (isalnum(c) && c < 0x80) {
            if (dash && k > 0)
                dst[k++] = '-';
            dst[k++] = (char)tolower(c);
            dash = 0;
        } else {
            dash = 1;
        }
    }
    if (k == 0)
        dst[k++] = 'x';
    dst[k] = '\0';
}

/* Counts "path.key" (key alone when path is ""). */
static void tally_in(scn_tally *t, const char *path, const char *key)
{
    char kind[3 * SCN_TALLY_KIND]; /* cut to SCN_TALLY_KIND by scn__tally */
    snprintf(kind, sizeof kind, "%s%s%s", path, path[0] ? "." : "", key);
    scn__tally(t, kind, strlen(kind));
}

/* Every key of object o not in `used` (NULL-terminated), counted by its
 * path: "cpuMetrics", "metaData.osVersion". */
static void unused_keys(scn_tally *t, json_t *o, const char *path,
                        const char *const *used)
{
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v)
    {
        size_t k = 0;
        while (used[k] != NULL && strcmp(used[k], key) != 0)
            k++;
        if (used[k] == NULL)
            tally_in(t, path, key);
    }
}

/* A JSON input as a list of objects: an array of them, or one object (or
 * the array under `key`, as an API response holds its rows). */
static json_t *load_list(const scn_import_input *in, const char *name, const char *key,
                         const char *what, fleet *f, sim_error *err)
{
    json_error_t je;
    int oom = 0;
    json_t *doc = trc_json_loadb(in->text, in->len, 0, &je, &oom);
    if (doc == NULL && oom) {
        sim_error_set(err, SIM_ENOMEM, "out of memory");
        return NULL;
    }
    if (doc == NULL) {
        scn__fail_at(err, name, (unsigned)(je.line > 0 ? je.line : 1), "not %s: not JSON (column %d)",
                what, je.column);
        return NULL;
    }
    json_t *list = NULL;
    if (json_is_array(doc)) {
        list = json_incref(doc);
    } else if (json_is_object(doc) && key != NULL && json_is_array(json_object_get(doc, key))) {
        list = json_incref(json_object_get(doc, key));
        const char *const used[] = {key, "nextPageToken", NULL};
        unused_keys(f->ignored, doc, "", used);
        f->more_pages += json_string_length(json_object_get(doc, "nextPageToken")) > 0;
    } else if (json_is_object(doc)) {
        list = json_array();
        if (list != NULL && json_array_append(list, doc) != 0) {
            json_decref(list);
            list = NULL;
        }
        if (list == NULL)
            sim_error_set(err, SIM_ENOMEM, "out of memory");
    } else {
        scn__fail_at(err, name, 1, "not %s: expected a JSON object or array", what);
    }
    json_decref(doc);
    return list;
}

/* A number that may be given as a JSON number or a string of one (the
 * Reporting API writes decimals and int64s as strings). */
static int json_num(json_t *v, double *got)
{
    if (json_is_number(v)) {
        *got = json_number_value(v);
        return isfinite(*got);
    }
    if (!json_is_string(v))
        return 0;
    char *end;
    double d = strtod(json_string_value(v), &end);
    if (*end != '\0' || end == json_string_value(v) || !isfinite(d))
        return 0;
    *got = d;
    return 1;
}

/* A measurement as MetricKit writes it, localised: "1,106,818 kB",
 * "1.106.818 kB", "1 106 818 Ko" (a no-break space), "1,5 MB", "812 КБ".
 * The grouping characters are ',', '.', '\'', spaces and the no-break,
 * narrow no-break and thin spaces; a ',' or '.' is the decimal separator
 * when it is the last separator and either both kinds occur or it occurs
 * once and is not followed by exactly three digits.  The unit's first
 * letter, in Latin or Cyrillic, gives its scale: k, M, G (10^3, 10^6,
 * 10^9 bytes: Foundation's information units are decimal), B, b or o
 * (octets) bytes.  1 and *bytes, or 0. */
/* The unit words MetricKit writes after a number, in the locales iOS
 * writes them (docs/imports/metrickit.md has the table): CLDR's long and
 * short forms, and what devices were seen to write ("千字节", "秒").  The
 * longer word first where one begins another (毫秒 before 秒). */
typedef struct unit_word {
    const char *word;
    double scale; /* bytes, or seconds */
} unit_word;

static const unit_word byte_words[] = {
    {"千字节", 1e3},         {"兆字节", 1e6},         {"吉字节", 1e9},     {"字节", 1},
    {"キロバイト", 1e3},     {"メガバイト", 1e6},     {"ギガバイト", 1e9}, {"バイト", 1},
    {"킬로바이트", 1e3},     {"메가바이트", 1e6},     {"기가바이트", 1e9}, {"바이트", 1},
};

static const unit_word time_words[] = {
    {"毫秒", 1e-3},  {"秒钟", 1},       {"秒", 1},        {"分钟", 60},    {"分鐘", 60},
    {"小时", 3600},  {"小時", 3600},    {"ミリ秒", 1e-3}, {"時間", 3600},  {"分", 60},
    {"밀리초", 1e-3}, {"초", 1},        {"분", 60},       {"시간", 3600},  {"мс", 1e-3},
    {"мин", 60},     {"ч", 3600},       {"с", 1},         {"ms", 1e-3},    {"sec", 1},
    {"Sek", 1},      {"seconds", 1},    {"second", 1},    {"minutes", 60}, {"minute", 60},
    {"min", 60},     {"Min", 60},       {"hours", 3600},  {"hour", 3600},
    {"hr", 3600},    {"Std", 3600},     {"h", 3600},      {"s", 1},
};

/* The scale of the unit word at p: a table's word, or for bytes a Latin or
 * Cyrillic word by its first letter: k, K, M, G (10^3, 10^6, 10^9 bytes:
 * Foundation's information units are decimal), B, b or o (octets) bytes.
 * 0 when none. */
static double unit_scale(const unsigned char *p, int time)
{
    const unit_word *t = time ? time_words : byte_words;
    size_t n = time ? sizeof time_words / sizeof *time_words
                    : sizeof byte_words / sizeof *byte_words;
    for (size_t k = 0; k < n; k++) {
        size_t wl = strlen(t[k].word);
        /* an ASCII word ends there ("ms" is not "min") */
        if (strncmp((const char *)p, t[k].word, wl) == 0 &&
            !((unsigned char)t[k].word[0] < 0x80 && isalpha(p[wl])))
            return t[k].scale;
    }
    if (time)
        return 0;
    if (*p == 'k' || *p == 'K' || (p[0] == 0xd0 && p[1] == 0x9a) || (p[0] == 0xd0 && p[1] == 0xba))
        return 1e3; /* k, K, К, к */
    if (*p == 'M' || (p[0] == 0xd0 && p[1] == 0x9c))
        return 1e6; /* M, М */
    if (*p == 'G' || (p[0] == 0xd0 && p[1] == 0x93))
        return 1e9; /* G, Г */
    if (*p == 'B' || *p == 'b' || *p == 'o' || (p[0] == 0xd0 && p[1] == 0x91))
        return 1; /* bytes, octets, Б */
    return 0;
}

static int parse_measure(const char *s, double *bytes, int time)
{
    char digits[80];
    size_t nd = 0;
    long dec_at = -1; /* digits before the decimal separator, -1: none */
    int commas = 0, dots = 0;
    char last_sep = 0;
    size_t after_last = 0, last_sep_digits = 0;
    const unsigned char *p = (const unsigned char *)s;
    while (*p == ' ')
        p++;
    for (;;) {
        if (isdigit(*p)) {
            if (nd + 1 >= sizeof digits)
                return 0;
            digits[nd++] = (char)*p++;
            after_last++;
        } else {
            /* a separator between digits: one byte, or a no-break (U+00A0),
             * narrow no-break (U+202F) or thin (U+2009) space */
            size_t w = (*p == ',' || *p == '.' || *p == '\'' || *p == ' ') ? 1
                       : (p[0] == 0xc2 && p[1] == 0xa0)                         ? 2
                       : (p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xaf || p[2] == 0x89))
                           ? 3
                           : 0;
            if (w == 0 || !isdigit(p[w]))
                break; /* the number ends: a space before the unit */
            if (*p == ',')
                commas++;
            if (*p == '.')
                dots++;
            last_sep = w == 1 ? (char)*p : ' ';
            last_sep_digits = nd;
            after_last = 0;
            p += w;
        }
        if (nd == 0 && last_sep != 0)
            return 0; /* a separator before any digit */
    }
    if (nd == 0)
        return 0;
    if ((last_sep == ',' || last_sep == '.') && after_last > 0 &&
        ((commas > 0 && dots > 0) ||
         ((last_sep == ',' ? commas : dots) == 1 && after_last != 3)))
        dec_at = (long)last_sep_digits;
    digits[nd] = '\0';
    double v = 0;
    for (size_t i = 0; i < nd; i++)
        v = v * 10 + (digits[i] - '0');
    if (dec_at >= 0)
        v /= pow(10, (double)(nd - (size_t)dec_at));
    /* a space, a no-break or a narrow no-break space before the unit, or none
     * (zh, ko) */
    while (*p == ' ' || (p[0] == 0xc2 && p[1] == 0xa0) ||
           (p[0] == 0xe2 && p[1] == 0x80 && p[2] == 0xaf))
        p += *p == ' ' ? 1 : p[0] == 0xc2 ? 2 : 3;
    double scale = unit_scale(p, time);
    if (scale == 0)
        return 0;
    *bytes = v * scale;
    return isfinite(*bytes);
}

static fleet_group *group_of(fleet_group *g, unsigned *n, const char *label, int64_t ram_mb,
                             size_t rec)
{
    for (unsigned k = 0; k < *n; k++)
        if (g[k].ram_mb == ram_mb && strcmp(g[k].label, label) == 0)
            return &g[k];
    if (*n == GROUPS_MAX)
        return NULL;
    fleet_group *x = &g[(*n)++];
    memset(x, 0, sizeof *x);
    scn__clean_copy(x->label, sizeof x->label, label, strlen(label));
    x->ram_mb = ram_mb;
    x->first = rec;
    return x;
}

/* The keys of a MetricKit payload that are not read: the metrics this
 * importer has no use for (CPU, GPU, disk, network, launch, hangs...), the
 * metaData but the device type, the times but the foreground's, the
 * memory measures' spread. */
static void metrickit_unused(scn_tally *t, json_t *p)
{
    static const char *const top[] = {"applicationExitMetrics", "memoryMetrics", "metaData",
                                      "applicationTimeMetrics", NULL};
    static const char *const meta[] = {"deviceType", NULL};
    static const char *const times[] = {"cumulativeForegroundTime", NULL};
    static const char *const mem[] = {"peakMemoryUsage", "averageSuspendedMemory", NULL};
    static const char *const avg[] = {"averageValue", NULL};
    static const char *const exits[] = {"foregroundExitData", "backgroundExitData", NULL};
    unused_keys(t, p, "", top);
    unused_keys(t, json_object_get(p, "metaData"), "metaData", meta);
    unused_keys(t, json_object_get(p, "applicationTimeMetrics"), "applicationTimeMetrics", times);
    unused_keys(t, json_object_get(p, "memoryMetrics"), "memoryMetrics", mem);
    unused_keys(t, json_object_get(json_object_get(p, "memoryMetrics"), "averageSuspendedMemory"),
                "memoryMetrics.averageSuspendedMemory", avg);
    unused_keys(t, json_object_get(p, "applicationExitMetrics"), "applicationExitMetrics", exits);
}

/* Every exit count of a payload's side, summed by kind (the key without
 * "cumulative" and "ExitCount"). */
static void exit_kinds(fleet_group *x, json_t *exits, scn_tally *ignored)
{
    static const char *const sides[2] = {"foregroundExitData", "backgroundExitData"};
    for (int side = 0; side < 2; side++) {
        const char *key;
        json_t *v;
        json_object_foreach(json_object_get(exits, sides[side]), key, v)
        {
            double cnt;
            size_t kl = strlen(key);
            if (!json_num(v, &cnt) || cnt < 0 || cnt > 1e12 || kl < 20 ||
                strncmp(key, "cumulative", 10) != 0 || strcmp(key + kl - 9, "ExitCount") != 0) {
                char path[64];
                snprintf(path, sizeof path, "applicationExitMetrics.%s", sides[side]);
                tally_in(ignored, path, key); /* not an exit count */
                continue;
            }
            char kind[48];
            scn__clean_copy(kind, sizeof kind, key + 10, kl - 19);
            unsigned j = 0;
            while (j < x->nkinds[side] && strcmp(x->kinds[side][j], kind) != 0)
                j++;
            if (j == x->nkinds[side] && j < 16)
                snprintf(x->kinds[side][x->nkinds[side]++], 48, "%s", kind);
            if (j < 16)
                x->counts[side][j] += cnt;
        }
    }
}

/* The payload's peak and average suspended memory, the largest kept. */
static int memory_measures(fleet_group *x, json_t *mem, const char *name, size_t i,
                           sim_error *err)
{
    static const char *const mkeys[2] = {"peakMemoryUsage", "averageSuspendedMemory"};
    for (int k = 0; k < 2; k++) {
        json_t *m = json_object_get(mem, mkeys[k]);
        if (json_is_object(m))
            m = json_object_get(m, "averageValue");
        double b;
        if (m == NULL)
            continue;
        if (!(json_is_string(m) && parse_measure(json_string_value(m), &b, 0)) &&
            !(json_is_number(m) && (b = json_number_value(m) * 1e3, isfinite(b))))
            return scn__fail_at(err, name, 1, "payload %zu: %s: a measurement that cannot be "
                                "read", i, mkeys[k]);
        if (b > SIZE_BOUND)
            return scn__fail_at(err, name, 1, "payload %zu: %s: more than 256 GiB", i, mkeys[k]);
        double *slot = k == 0 ? &x->peak : &x->suspended;
        *slot = b > *slot ? b : *slot;
    }
    return SIM_OK;
}

/* One MetricKit payload (one device's day) into its device type's group. */
static int metrickit_payload(fleet *f, json_t *p, const char *name, size_t i, sim_error *err)
{
    json_t *exits = json_object_get(p, "applicationExitMetrics");
    json_t *mem = json_object_get(p, "memoryMetrics");
    if (!json_is_object(exits) && !json_is_object(mem))
        return scn__fail_at(err, name, 1, "payload %zu: not a MetricKit payload: no "
                            "applicationExitMetrics or memoryMetrics", i);
    const char *type =
        json_string_value(json_object_get(json_object_get(p, "metaData"), "deviceType"));
    fleet_group *x = group_of(f->g, &f->ng, type != NULL ? type : "unknown", 0, f->records);
    if (x == NULL)
        return scn__fail_at(err, name, 1, "more than %d device types", GROUPS_MAX);
    x->count++;
    x->total += 1;
    /* zero counts are absent, not written as 0 */
    double c = 0;
    json_t *fg = json_object_get(json_object_get(exits, "foregroundExitData"),
                                 "cumulativeMemoryResourceLimitExitCount");
    if (fg != NULL && (!json_num(fg, &c) || c < 0))
        return scn__fail_at(err, name, 1, "payload %zu: a foreground memory-limit exit count "
                            "that is not a count", i);
    x->hits += c > 0;
    /* in the background: killed for the system's memory pressure, or over
     * the background memory limit */
    static const char *const bg_keys[2] = {"cumulativeMemoryPressureExitCount",
                                           "cumulativeMemoryResourceLimitExitCount"};
    double bg = 0;
    for (int k = 0; k < 2; k++) {
        json_t *v = json_object_get(json_object_get(exits, "backgroundExitData"), bg_keys[k]);
        double n = 0;
        if (v != NULL && (!json_num(v, &n) || n < 0))
            return scn__fail_at(err, name, 1, "payload %zu: backgroundExitData.%s: not a "
                                "count", i, bg_keys[k]);
        bg += n;
    }
    x->bg_hits += bg > 0;
    exit_kinds(x, exits, f->ignored);
    metrickit_unused(f->ignored, p);
    json_t *fgt = json_object_get(json_object_get(p, "applicationTimeMetrics"),
                                  "cumulativeForegroundTime");
    double sec = 0;
    if (fgt != NULL && !(json_is_string(fgt) && parse_measure(json_string_value(fgt), &sec, 1)) &&
        !(json_is_number(fgt) && (sec = json_number_value(fgt), isfinite(sec)))) {
        x->foreground_unread++; /* a locale's word not in the table: said, not fatal */
        sec = 0;
    }
    if (sec < 0 || sec > 86400.0 * 366)
        return scn__fail_at(err, name, 1, "payload %zu: cumulativeForegroundTime: %.6g s is "
                            "not a day's", i, sec);
    x->foreground_s += sec;
    int rc = memory_measures(x, mem, name, i, err);
    if (rc == SIM_OK)
        f->records++;
    return rc;
}

/* One Play vitals row (a day of a RAM bucket or a model) into its group. */
static int vitals_row(fleet *f, json_t *row, const char *name, size_t i, sim_error *err)
{
    double rate = -1, users = -1, ram = 0;
    const char *model = NULL;
    size_t k;
    json_t *x;
    json_array_foreach(json_object_get(row, "metrics"), k, x)
    {
        const char *m = json_string_value(json_object_get(x, "metric"));
        json_t *v = json_object_get(json_object_get(x, "decimalValue"), "value");
        if (m == NULL)
            continue;
        if (strcmp(m, "userPerceivedLmkRate") == 0 && !json_num(v, &rate))
            rate = -2;
        else if (strcmp(m, "distinctUsers") == 0 && !json_num(v, &users))
            users = -2;
        else if (strcmp(m, "userPerceivedLmkRate") != 0 && strcmp(m, "distinctUsers") != 0)
            tally_in(f->ignored, "metrics", m); /* the 7- and 28-day means, ... */
    }
    json_array_foreach(json_object_get(row, "dimensions"), k, x)
    {
        const char *d = json_string_value(json_object_get(x, "dimension"));
        if (d != NULL && strcmp(d, "deviceRamBucket") == 0 &&
            !json_num(json_object_get(x, "int64Value"), &ram))
            ram = -1;
        else if (d != NULL && strcmp(d, "deviceModel") == 0)
            model = json_string_value(json_object_get(x, "stringValue"));
        else if (d != NULL && strcmp(d, "deviceRamBucket") != 0)
            tally_in(f->ignored, "dimensions", d); /* countryCode, apiLevel, ... */
    }
    static const char *const used[] = {"metrics", "dimensions", NULL};
    unused_keys(f->ignored, row, "", used); /* aggregationPeriod, startTime */
    if (rate == -1 && users == -1)
        return scn__fail_at(err, name, 1, "row %zu: not an LMK-rate row: no "
                            "userPerceivedLmkRate or distinctUsers metric", i);
    /* the RAM is written as MiB, which the loader takes up to 1 TiB */
    if (rate < 0 || rate > 1 || users < 1 || users > 1e12 || ram < 0 || ram > 1048576)
        return scn__fail_at(err, name, 1, "row %zu: userPerceivedLmkRate must be a fraction "
                            "from 0 to 1, distinctUsers a count from 1, deviceRamBucket "
                            "MB up to 1048576 (1 TiB)", i);
    if (ram == 0 && model == NULL)
        return scn__fail_at(err, name, 1, "row %zu: neither a deviceRamBucket nor a "
                            "deviceModel dimension: query the metric set by one of them", i);
    fleet_group *gr = group_of(f->g, &f->ng, model != NULL ? model : "", (int64_t)ram,
                               f->records);
    if (gr == NULL)
        return scn__fail_at(err, name, 1, "more than %d RAM buckets or models", GROUPS_MAX);
    gr->count++;
    gr->hits += rate * users;
    gr->total += users;
    f->records++;
    return SIM_OK;
}

/* A fleet format: where its list of records is, what one is called, and
 * how one record joins its group. */
typedef struct fleet_format {
    const char *key, *what, *none;
    int (*record)(fleet *f, json_t *r, const char *name, size_t i, sim_error *err);
} fleet_format;

static const fleet_format metrickit_format = {"payloads", "a MetricKit payload",
                                              "no MetricKit payload in the input",
                                              metrickit_payload};
static const fleet_format vitals_format = {"rows", "a Play Developer Reporting response",
                                           "no row in the input", vitals_row};

static int read_fleet(const fleet_format *fmt, const scn_import_input *in, unsigned n,
                      fleet *f, scn_tally *ignored, sim_error *err)
{
    f->ignored = ignored;
    f->g = calloc(GROUPS_MAX, sizeof *f->g);
    if (f->g == NULL)
        return sim_error_set(err, SIM_ENOMEM, "out of memory");
    for (unsigned k = 0; k < n; k++) {
        char name[128];
        scn__clean_copy(name, sizeof name, in[k].name, strlen(in[k].name));
        json_t *list = load_list(&in[k], name, fmt->key, fmt->what, f, err);
        if (list == NULL)
            return err->code;
        size_t i;
        json_t *r;
        int rc = SIM_OK;
        json_array_foreach(list, i, r)
        {
            if ((rc = fmt->record(f, r, name, i, err)) != SIM_OK)
                break;
        }
        json_decref(list);
        if (rc != SIM_OK)
            return rc;
    }
    if (f->records == 0)
        return scn__fail_at(err, in[0].name, 1, "%s", fmt->none);
    return SIM_OK;
}

static int read_metrickit(const scn_import_input *in, unsigned n, const char *name, void *state,
                          scn_tally *ignored, sim_error *err)
{
    (void)name;
    return read_fleet(&metrickit_format, in, n, state, ignored, err);
}

static int read_vitals(const scn_import_input *in, unsigned n, const char *name, void *state,
                       scn_tally *ignored, sim_error *err)
{
    (void)name;
    return read_fleet(&vitals_format, in, n, state, ignored, err);
}

static void release_fleet(void *state)
{
    free(((fleet *)state)->g);
}

/* The group's first lines: its device (or RAM bucket) and its rate. */
static void group_head(out *w, const fleet_group *g, int metrickit)
{
    char c[300];
    if (g->ram_mb > 0) {
        put(w, "    - ram: %" PRId64 "MiB", g->ram_mb);
        scn__from(w, 0, "deviceRamBucket (MB)");
    } else {
        char dev[MDL_NAME_MAX];
        device_name(dev, sizeof dev, g->label);
        put(w, "    - device: %s", dev);
        snprintf(c, sizeof c, "%s \"%s\" (rename to the plan's device)",
                 metrickit ? "metaData.deviceType" : "deviceModel", g->label);
        scn__from(w, 0, c);
    }
    put(w, "      %s: %.6g%%", metrickit ? "memory_exit_rate" : "lmk_rate",
        100.0 * g->hits / g->total);
    if (metrickit)
        snprintf(c, sizeof c, "%.0f of %.0f payload%s (device-days) had one", g->hits, g->total,
                 g->total == 1 ? "" : "s");
    else
        snprintf(c, sizeof c, "userPerceivedLmkRate, users-weighted over %zu row%s from row %zu",
                 g->count, g->count == 1 ? "" : "s", g->first);
    scn__from(w, 0, c);
}

/* MetricKit's memory and every exit kind, as comments. */
static void metrickit_extras(out *w, const fleet_group *g)
{
    if (g->peak > 0)
        put(w, "      # peak memory up to %.1f MiB, suspended memory up to %.1f MiB (MetricKit's "
               "units are decimal: kB = 1000 bytes)\n",
            g->peak / MIB, g->suspended / MIB);
    if (g->foreground_unread > 0)
        put(w, "      # cumulativeForegroundTime of %u payload%s not read (a unit word this "
               "version does not know): left out of the foreground time\n", g->foreground_unread,
            g->foreground_unread == 1 ? "" : "s");
    if (g->foreground_s > 0) {
        double mem = 0;
        for (unsigned j = 0; j < g->nkinds[0]; j++)
            if (strcmp(g->kinds[0][j], "MemoryResourceLimit") == 0)
                mem = g->counts[0][j];
        put(w, "      # foreground time %.1f h (applicationTimeMetrics): %.3g foreground "
               "memory-limit exits per 1000 h in front\n", g->foreground_s / 3600.0,
            mem * 1000.0 * 3600.0 / g->foreground_s);
    }
    static const char *const side_names[2] = {"foreground", "background"};
    for (int side = 0; side < 2; side++) {
        if (g->nkinds[side] == 0)
            continue;
        put(w, "      # %s exits over the payloads:", side_names[side]);
        for (unsigned j = 0; j < g->nkinds[side]; j++)
            put(w, "%s %s %.0f", j ? "," : "", g->kinds[side][j], g->counts[side][j]);
        put(w, "\n");
    }
}

/* The one writer of both fleet formats: the field block, a device (or RAM
 * bucket) a group. */
static int write_fleet(const fleet *f, out *w, int metrickit)
{
    if (metrickit)
        put(w, "# oomsim import metrickit: %zu MetricKit payloads (%s...), each one device's\n"
               "# day: per device type, the share of payloads with a foreground exit by the\n"
               "# memory resource limit (a count MetricKit leaves out when it is 0), and the\n"
               "# share with a background memory exit. Rename each device to the plan's\n"
               "# device of that class.\n",
            f->records, w->name);
    else
        put(w, "# oomsim import play-vitals: %zu rows of the Play Developer Reporting API's LMK\n"
               "# rate metric set (%s...): per RAM bucket or model, userPerceivedLmkRate (a\n"
               "# fraction) weighted by distinctUsers over the rows (days), and the users\n"
               "# summed (device-days). Rename each model to the plan's device of that class.\n",
            f->records, w->name);
    if (f->more_pages > 0)
        put(w, "# %u response%s a nextPageToken: more rows than these, not fetched. Fetch\n"
               "# every page (pageToken) and give them all, or the rates are of a part.\n",
            f->more_pages, f->more_pages == 1 ? " has" : "s have");
    scn__tally_put(w, "key");
    put(w, "field:\n  sessions_per_day: 1  # assumed: how many sessions a user has a day "
           "(fill in)\n  devices:\n");
    for (unsigned k = 0; k < f->ng; k++) {
        const fleet_group *g = &f->g[k];
        group_head(w, g, metrickit);
        if (metrickit) {
            put(w, "      users: %.0f  # the payloads: device-days\n", g->total);
            put(w, "      background_rate: %.6g%%  # %.0f of %.0f payload%s had a background "
                   "memory exit (MemoryPressure or MemoryResourceLimit)\n",
                100.0 * g->bg_hits / g->total, g->bg_hits, g->total, g->total == 1 ? "" : "s");
            put(w, "      source: \"MetricKit, %.0f payload%s\"\n", g->total,
                g->total == 1 ? "" : "s");
            metrickit_extras(w, g);
        } else {
            put(w, "      users: %.0f  # distinctUsers summed over the rows (device-days)\n",
                g->total);
            put(w, "      source: \"Play vitals, %zu row%s\"\n", g->count,
                g->count == 1 ? "" : "s");
        }
    }
    return SIM_OK;
}

static int write_metrickit(void *state, const scn_import_opts *o, out *w, sim_error *err)
{
    (void)o, (void)err;
    return write_fleet(state, w, 1);
}

static int write_vitals(void *state, const scn_import_opts *o, out *w, sim_error *err)
{
    (void)o, (void)err;
    return write_fleet(state, w, 0);
}

const scn_importer scn__import_metrickit = {
    "metrickit", "MetricKit payloads (JSON, one or more files): a field block",
    SCN_IMPORT_INPUTS_MAX, sizeof(fleet), read_metrickit, write_metrickit, release_fleet};

const scn_importer scn__import_play_vitals = {
    "play-vitals", "Play Developer Reporting LMK-rate rows (JSON): a field block",
    SCN_IMPORT_INPUTS_MAX, sizeof(fleet), read_vitals, write_vitals, release_fleet};

_Static_assert(sizeof(fleet) <= SCN_IMPORT_STATE_MAX, "the state fits the driver's buffer");
