/* capture_int.h - what the readers of a phone's own captures share
 * (`oomsim import device`, docs/devices.md): the figures one capture gives,
 * each with the line it came from and how it was derived, filled by
 * bugreport.c (an Android bugreport) and ips.c (a JetsamEvent report),
 * folded over several captures and written as a device profile by
 * device.c and device_yaml.c.  The kernel files inside a bugreport are
 * read by snapshot.c's readers, the ones `oomsim lmkd` uses. */
#ifndef OOMSIM_CAPTURE_INT_H
#define OOMSIM_CAPTURE_INT_H

#include "replay.h"

#include "sim/sim.h"

#include <stdio.h>

/* ---- snapshot.c: the kernel files, read as `oomsim lmkd` reads them ---- */

/* A value a reader kept, by its name, with its text and line. */
#define RPL_KVS_MAX 640
typedef struct rpl_kv {
    char name[64];
    char text[64];
    unsigned line;
} rpl_kv;
typedef struct rpl_kvs {
    rpl_kv e[RPL_KVS_MAX];
    unsigned n, over; /* over: values past the table, not kept */
} rpl_kvs;


/* One file of a snapshot (`file`: "meminfo", "zoneinfo", "vmstat.1",
 * "pressure_memory", "props", ...) read from text that starts after line
 * `base` of `name` (errors say name:LINE; errors of the whole text say
 * `label`); every value read is kept in kv (meminfo's and vmstat's lines,
 * the properties a device profile reads) when kv is not NULL. */
int rpl__snapshot_section(rpl_lmkd_snapshot *s, const char *file, const char *name,
                          const char *label, unsigned base, rpl_kvs *kv, const char *text,
                          size_t len, sim_error *err);
/* The kept value of that name, or NULL. */
const rpl_kv *rpl__kv(const rpl_kvs *kv, const char *name);

/* ---- one capture's figures --------------------------------------------- */

#define CAP_HOW 200

/* A figure: its value (bytes, a count, a ratio), the line it came from (0:
 * not derived) and how it was derived. */
typedef struct cap_fig {
    double v;
    unsigned line;
    char how[CAP_HOW];
} cap_fig;

/* The figures a device profile takes from a capture. */
typedef enum cap_key {
    CAP_RAM = 0,        /* bytes */
    CAP_SYSTEM,         /* bytes */
    CAP_CACHED_APPS,    /* bytes: Android's processes lmkd kills before the app */
    CAP_CACHED_COUNT,   /* processes in them */
    CAP_ZRAM_SIZE,      /* bytes */
    CAP_ZRAM_RATIO,
    CAP_WMARK_MIN, CAP_WMARK_LOW, CAP_WMARK_HIGH, /* bytes */
    CAP_PAGE_CACHE, CAP_PAGE_CACHE_WS,            /* bytes */
    CAP_JAVA_HEAP,      /* bytes */
    CAP_SDK,            /* the API level */
    CAP_MINFREE_MODE,   /* 1: lmkd's minfree levels, 0: its PSI mode */
    CAP_COMPRESSED,     /* bytes the compressor occupies (iOS) */
    CAP_COMP_RATIO,     /* what it holds over what it occupies (iOS) */
    CAP_KEYS
} cap_key;

/* Android's groups of "Total PSS by OOM adjustment", as the device profile
 * uses them: never killed for the app (the system), or killed before it
 * (the cached apps); the rest are in the header only. */
#define CAP_GROUPS_MAX 24
typedef struct cap_group {
    char label[40];     /* "Native", "Cached", ... */
    double pss;         /* bytes */
    unsigned count;     /* the processes listed under it */
    unsigned line;
    int role;           /* CAP_ROLE_* */
} cap_group;
enum { CAP_ROLE_SYSTEM = 0, CAP_ROLE_MIDDLE, CAP_ROLE_CACHED };

/* iOS: the processes of one jetsam band, beside the app. */
#define CAP_BANDS_MAX 16
#define CAP_BAND_PROCS_MAX 512
typedef struct cap_band {
    int band;
    unsigned count;
    double *size;       /* count footprints, bytes (owned) */
    unsigned line;
} cap_band;

#define CAP_MINFREE_MAX 16
#define CAP_PROPS_MAX 16

typedef struct cap_phone {
    char file[128];           /* the capture's name, for comments */
    int kind;                 /* RPL_CAPTURE_* */
    int os;                   /* MDL_OS_* */
    char model[64], maker[64];
    unsigned model_line;
    cap_fig f[CAP_KEYS];
    cap_group group[CAP_GROUPS_MAX];
    unsigned ngroups;
    cap_band band[CAP_BANDS_MAX];
    unsigned nbands;
    int minfree_adj[CAP_MINFREE_MAX];
    double minfree_bytes[CAP_MINFREE_MAX];
    unsigned nminfree, minfree_line;
    /* ro.lmk properties the phone sets, by lmkd's short name */
    char prop_name[CAP_PROPS_MAX][48];
    int64_t prop_value[CAP_PROPS_MAX];
    unsigned prop_line[CAP_PROPS_MAX], nprops;
    /* what a bugreport lacked or could not give, one line each */
    char missing[8][160];
    unsigned nmissing;
    /* what was read and not used, by kind */
    char ign_kind[16][48];
    unsigned ign_count[16], nign, ign_other;
    /* a trace (perfetto.c): its figures over time, each series' samples
     * in time order (owned; NULL: the figure's one value), its foreground
     * spikes (bytes, owned) over span_s seconds of polls, the kills of
     * processes it records; its figures name no line */
    double *series[CAP_KEYS];
    unsigned nseries[CAP_KEYS];
    double *spike;
    unsigned nspikes, polls;
    double span_s;
    double kills;
    int no_lines;
    char device[64];          /* the build's device name (header only) */
} cap_phone;

/* A figure set (line 0 ignored: not derived). */
void cap__set(cap_phone *p, cap_key k, double v, unsigned line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* A section or a figure the capture lacks, said in the header. */
void cap__missing(cap_phone *p, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void cap__ignored(cap_phone *p, const char *kind, unsigned n);
void cap__release(cap_phone *p);

/* The role of an OOM group by its dumpsys meminfo label (CAP_ROLE_*). */
int rpl__oom_role(const char *label);
/* The median of n values (sorted in place). */
double rpl__median(double *v, unsigned n);

/* perfetto.c: a Perfetto trace of the phone (its file, or len bytes) */
int rpl__perfetto_phone(const char *path, const void *data, size_t len, const char *name,
                        cap_phone *p, sim_error *err);

/* bugreport.c: an Android bugreport's main text (or its zip) */
int rpl__bugreport_detect(const char *data, size_t len);
int rpl__bugreport_read(const char *data, size_t len, const char *name, cap_phone *p,
                        sim_error *err);
/* The bugreport in a zip as `adb bugreport` writes it: the entry that
 * main_entry.txt names (or the one bugreport-*.txt), read as above. */
int rpl__bugreport_zip(const char *data, size_t len, const char *path, const char *name,
                       cap_phone *p, sim_error *err);
/* The main text read from f in pieces of 1 MiB, never whole. */
int rpl__bugreport_file(FILE *f, const char *name, cap_phone *p, sim_error *err);
/* ips.c: a JetsamEvent report's whole phone */
int rpl__ips_phone(const char *data, size_t len, const char *name, cap_phone *p,
                   sim_error *err);

/* device.c: the marketed RAM class (GB) that holds `ram` bytes; 0: none */
double rpl__ram_class(double ram);
/* device_yaml.c: the profile of m captures of one phone (several: *
 * distributions over them); `suffix`: its name carries the model's. */
int rpl__device_write(const cap_phone *const *c, unsigned m, const rpl_device_opts *o,
                      int suffix, rpl_device_yaml *out, sim_error *err);

#endif /* OOMSIM_CAPTURE_INT_H */
