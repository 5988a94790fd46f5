/* device.h - a device memory profile and the plain kill rules' input and
 * verdict (docs/model.md, docs/scenarios.md), a part of models.h's
 * interface kept in its own header.  Included by models.h after the types
 * it uses; include models.h, not this. */
#ifndef OOMSIM_MODELS_DEVICE_H
#define OOMSIM_MODELS_DEVICE_H

/* ----------------------------------------------------------------- device */

/* A device memory profile (docs/model.md, docs/scenario-loader.md), every value
 * resolved: sizes in bytes, durations in microseconds. */
typedef enum mdl_os { MDL_OS_ANDROID = 0, MDL_OS_IOS = 1 } mdl_os;
typedef enum mdl_kill_rule { MDL_KILL_LMK = 0, MDL_KILL_JETSAM = 1 } mdl_kill_rule;

#define MDL_NAME_MAX 64
#define MDL_MINFREE_MAX 16
#define MDL_DELEGATES_MAX 8
/* iOS: the groups of `others` and the processes they may hold in all */
#define MDL_OTHER_GROUPS_MAX 8
#define MDL_OTHERS_MAX 64
/* One group of other processes beside the app, in one jetsam band. */
typedef struct mdl_other_group {
    int band;
    mdl_dist count;             /* processes, drawn per replication and rounded, */
    int64_t count_add;          /* ... plus this */
    mdl_dist size;              /* each one's anonymous memory, drawn per process */
} mdl_other_group;

/* What a device says about one delegate kind (its `delegates` entry and
 * its `speed` factor): it overrides the candidate's failure and crash
 * probabilities; unavailable, delegate_prepare fails at once. */
typedef struct mdl_device_delegate {
    char name[MDL_NAME_MAX];  /* the candidate's `delegate` it applies to */
    double speed;             /* 0: not given (cpu speed, or gpu for "gpu") */
    int has_override;         /* in `delegates` */
    int available;
    int has_fail, has_crash;
    double fail, crash;
} mdl_device_delegate;

typedef struct mdl_minfree {
    int adj;      /* oom_score_adj of the level */
    int64_t free; /* kill at or above adj when available memory is below this */
} mdl_minfree;

/* Where a profile's values come from (its `measured` map, docs/devices.md):
 * each a phone figure of mdl_device_values, measured (or fitted) with its
 * source; every value of the list not here is assumed. */
#define MDL_VALUES_MAX 24
#define MDL_SOURCE_MAX 320
typedef struct mdl_provenance {
    unsigned n;
    unsigned char value[MDL_VALUES_MAX];     /* index in mdl_device_values(os) */
    unsigned char fitted[MDL_VALUES_MAX];    /* 1: fitted, not measured */
    char src[MDL_VALUES_MAX][MDL_SOURCE_MAX];
} mdl_provenance;

/* Thermal throttling (`thermal`; docs/model.md "The phone: speed and
 * delegates"): sustained load heats the phone; past each step's `after`
 * seconds of heat an execution runs at that step's speed, until the heat
 * is `hysteresis` under it.  Idle, the heat falls `cooling` seconds per
 * second. */
#define MDL_THERMAL_STEPS_MAX 4
typedef struct mdl_thermal {
    sim_time after[MDL_THERMAL_STEPS_MAX]; /* heat at which each step begins, increasing */
    double speed[MDL_THERMAL_STEPS_MAX];   /* the speed factor from then, decreasing, (0, 1) */
    unsigned nsteps;
    double cooling;                        /* heat shed per idle second (> 0) */
    sim_time hysteresis;                   /* heat under `after` at which a step ends */
} mdl_thermal;

/* The name of thermal step k (0: none) as the OS reports it: Android's
 * PowerManager THERMAL_STATUS_*, iOS's ProcessInfo.ThermalState. */
const char *mdl_thermal_name(mdl_os os, unsigned k);

typedef struct mdl_device {
    char name[MDL_NAME_MAX];
    mdl_os os;
    int64_t ram, system;
    mdl_dist cached_apps;       /* other apps' memory at start */
    int64_t cached_app_size;    /* freed by each cached-app kill */
    int has_pressure;
    mdl_dist pressure;          /* time between background pressure spikes */
    mdl_dist pressure_size;
    mdl_kill_rule rule;
    mdl_minfree minfree[MDL_MINFREE_MAX]; /* lmk: increasing adj */
    unsigned nminfree;
    int lmk_psi;                /* lmk: lmkd's PSI mode (watermarks), else minfree levels */
    int64_t wmark_min, wmark_low, wmark_high; /* psi mode: the zone watermarks, summed */
    int has_zram;
    int64_t zram_size;          /* the zram device's capacity (uncompressed bytes) */
    double zram_ratio;          /* compression ratio, > 1 */
    double zram_swappable;      /* minfree mode: share of other apps' memory swapped */
    /* psi mode: the phone's pages (models/pages.c; docs/model.md "The phone's pages") */
    mdl_lmkd_props lmkd;        /* ro.lmk properties, resolved */
    int64_t reclaim_rate;       /* bytes/s kswapd and direct reclaim free */
    int64_t storage_read;       /* bytes/s read back at a refault */
    int64_t page_cache, page_cache_ws; /* other apps' and the system's file cache, its working set */
    int swappiness;             /* vm.swappiness: the anonymous share of reclaim, of 200 */
    int64_t jetsam_limit, jetsam_background_limit; /* jetsam */
    unsigned counts_mask;       /* MDL_CAT_BIT set */
    int64_t java_heap_limit;    /* 0: none */
    sim_time anr_timeout;       /* 0: none */
    sim_time launch_watchdog;   /* 0: none */
    int64_t warning_at;         /* 0: no memory warnings */
    sim_time pss_sample;        /* period of the system's pss/rss samples (exit records) */
    int low_memory_reporting;   /* 0: lmk kills are recorded as SIGNALED, status 9 */
    int no_exit_info;           /* Android 10 or older: a death leaves no exit record */
    double warning_share;       /* warning_at as a share of the limit in force; 0: a size */
    double speed_cpu, speed_gpu; /* durations are divided by these (1: as drawn) */
    mdl_device_delegate delegates[MDL_DELEGATES_MAX]; /* by delegate kind */
    unsigned ndelegates;
    int has_successor;
    mdl_dist successor;         /* the app the user switches to, per background step */
    sim_time previous_ttl;      /* lmk: adj 700 -> 900 after this long; 0: stays at 700 */
    int64_t pageshortage;       /* jetsam: background page-shortage level, bytes; 0: none */
    int64_t entitled_limit;     /* jetsam: both limits with the entitlement; 0: none */
    int background_gpu_deny;    /* iOS: no GPU work in the background */
    mdl_thermal thermal;        /* nsteps 0: never throttled */
    /* iOS page model (models/memstat.c; docs/model.md "The iPhone's pages"):
     * on when the device gives `others` */
    int xnu_pages;
    mdl_other_group others[MDL_OTHER_GROUPS_MAX];
    unsigned nothers;
    double compressor_ratio;    /* > 1 */
    int64_t compressor_max;     /* uncompressed bytes the compressor holds at most */
    int64_t xnu_critical, xnu_idle, xnu_soft; /* memorystatus's page levels, bytes */
    int64_t fc_threshold;       /* phantom-cache pages per 250 ms period */
    int64_t xnu_free_target;    /* the pageout daemon's free target, bytes */
    int xnu_idle_snapshot;      /* kern.jetsam_idle_snapshot: a kill in band 0 or 10 posts a
                                 * JetsamEvent too (default off: none) */
    int64_t *owned[4 + 2 * MDL_OTHER_GROUPS_MAX]; /* empirical values the loader
                                   allocated (scn_device_release frees them) */
    mdl_provenance *measured;   /* NULL: every value assumed (the loader's, freed
                                   with the profile) */
} mdl_device;

/* The phone figures of a profile on this OS that a capture can measure
 * (docs/devices.md), by their names in `measured`; *n of them. */
const char *const *mdl_device_values(mdl_os os, unsigned *n);
/* Whether value k of that list is in force on d (lmkd's minfree levels only
 * in minfree mode, its watermarks only in PSI mode). */
int mdl_device_value_in_force(const mdl_device *d, unsigned k);
/* The source of value k when measured or fitted (*fitted set), else NULL;
 * the same only for a value in force (mdl_device_value_in_force). */
const char *mdl_device_source(const mdl_device *d, unsigned k, int *fitted);
const char *mdl_device_source_in_force(const mdl_device *d, unsigned k, int *fitted);

/* The device's entry for a candidate's delegate kind (`delegates`), or
 * NULL when it says nothing of it. */
const mdl_device_delegate *mdl_device_delegate_of(const mdl_device *d, const char *kind);

/* The counted bytes above which the kill rules end the app, in the
 * foreground (1) or the background (0): jetsam's limit (in the background
 * the page-shortage level too, with no successor), or, under lmk,
 * ram - system - the minfree of the app's level once every cached app is
 * reclaimed (models/kill_lmk.c); -1 when no lmk level applies. */
int64_t mdl_kill_line(const mdl_device *d, int foreground);
/* The same under lmk's minfree levels for a process at oom_score_adj adj
 * (the model's service process: docs/model.md "Processes"); -1 when no
 * level applies or the device runs lmkd's PSI mode. */
int64_t mdl_lmk_line_at(const mdl_device *d, int adj);
/* Jetsam's per-process limit in the foreground (1) or the background (0),
 * the page-shortage level left out. */
int64_t mdl_device_jetsam_limit(const mdl_device *d, int foreground);

/* The kill rules as a pure function (models/kill_lmk.c, kill_jetsam.c;
 * docs/model.md "Kill rules").  The input is the memory state at a check:
 * after an allocation, a release, a change of foreground, or a pressure
 * spike of `extra` bytes held only for the check. */
typedef struct mdl_kill_input {
    int64_t counted;   /* the app's counted bytes */
    int64_t cached;    /* other apps' cached memory still held */
    int64_t extra;     /* a pressure spike's bytes (lmk only) */
    int foreground;
    int64_t successor; /* the app the user switched to (background only) */
    int aged;          /* lmk: in the background past previous_ttl (adj 900) */
    int64_t hot;       /* lmk: mapped file pages the app reads at every inference (foreground) */
    int job;           /* lmk: in the background with a job running (adj 250, owners) */
    int bound_adj;     /* lmk: the adj of the model's service process, the app's own
                          (from the flags) when 0 (processes) */
} mdl_kill_input;

typedef struct mdl_kill_verdict {
    int dies;              /* the app is killed */
    mdl_exit why;          /* when it dies: low_memory or system_reclaim */
    int64_t room;          /* headroom left after the cached kills (the warning level reads it) */
    uint32_t cached_kills; /* cached apps killed first, one at a time */
    int64_t cached;        /* cached memory left after them */
    int64_t margin;        /* the smallest headroom under the lines in force (negative: over) */
    mdl_lmkd_reason lmkd;  /* when it dies under lmk: lmkd's reason */
} mdl_kill_verdict;

/* Applies the device's kill rule to *in; fills *out.  Thread-safe. */
void mdl_kill_decide(const mdl_device *d, const mdl_kill_input *in, mdl_kill_verdict *out);

/* ---- knobs.c: the device values `oomsim calibrate` may set (docs/calibration.md) ---- */

/* A value's unit: how a calibrate block's bounds are read and printed. */
typedef enum { MDL_KNOB_BYTES = 0, MDL_KNOB_TIME, MDL_KNOB_RATIO, MDL_KNOB_RATE } mdl_knob_unit;

/* The knobs by their path below a device ("successor.size.max", "pressure.mean",
 * "system", ...): how many, each one's path and unit, and a path's index (-1:
 * none). */
unsigned mdl_knob_count(void);
const char *mdl_knob_path(unsigned k);
mdl_knob_unit mdl_knob_unit_of(unsigned k);
int mdl_knob_find(const char *path);
/* The knob's value on d (bytes, microseconds or a ratio), or SIM_EINPUT saying
 * why d has no such value (no successor; a lognormal has no `max`; a gamma's
 * draws would break common random numbers). */
int mdl_knob_get(const mdl_device *d, unsigned k, double *v, sim_error *err);
/* d's value set to v, the distribution rebuilt by its constructor: SIM_OK, or
 * SIM_EINPUT with the constructor's or the device's reason (d unchanged). */
int mdl_knob_set(mdl_device *d, unsigned k, double v, sim_error *err);
/* The knob's own range (the loader's bounds on the value). */
void mdl_knob_range(const mdl_device *d, unsigned k, double *lo, double *hi);

/* One unknown of a calibrate block: a knob on one device (device "": the
 * plan's every device, one value shared), searched within [lo, hi]. */
#define MDL_UNKNOWNS_MAX 6
typedef struct mdl_unknown {
    char device[MDL_NAME_MAX];
    unsigned knob;
    double lo, hi;
    char key[128];      /* as written: devices.NAME.PATH */
} mdl_unknown;

#endif /* OOMSIM_MODELS_DEVICE_H */
