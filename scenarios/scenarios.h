/* scenarios.h - scenario schema, loader and shipped catalog.
 *
 * So far: the unit parsers every scenario value goes through (sizes,
 * durations, rates, probabilities; docs/scenarios.md "Units") and the
 * device and candidate profile loaders (docs/scenario-loader.md), whose
 * messages carry file:line:col and the key path.
 *
 * Each unit parser takes the scalar's text (len bytes, not NUL-terminated),
 * stores the value in *out and returns SIM_OK; or returns SIM_EINPUT
 * (malformed) or SIM_ELIMIT (beyond the bound), err->msg saying what was
 * expected and what was found (at most 40 bytes of it), and *out is
 * untouched.  Pure and thread-safe. */
#ifndef OOMSIM_SCENARIOS_H
#define OOMSIM_SCENARIOS_H

#include <stddef.h>
#include <stdint.h>

#include "models/models.h"
#include "sim/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SCN_SIZE_MAX (INT64_C(1) << 40)                    /* 1 TiB */
#define SCN_DURATION_MAX (INT64_C(30) * 24 * 3600 * 1000000) /* 30 days, in us */

/* A size: a number with a unit, binary B KiB MiB GiB TiB or decimal KB MB
 * GB TB ("230B", "48MiB", "1.5GiB"); a bare number is refused unless it is
 * 0.  Rounded to the nearest byte; 0 <= size <= SCN_SIZE_MAX. */
int scn_parse_size(const char *s, size_t len, int64_t *bytes, sim_error *err);

/* A duration: a number with a unit us ms s min h ("250ms", "1.5s"); a bare
 * number is refused, naming the units.  Rounded to the nearest
 * microsecond; 0 <= duration <= SCN_DURATION_MAX. */
int scn_parse_duration(const char *s, size_t len, sim_time *us, sim_error *err);

/* A rate: "N/s", "N/min" or "N/h" with N > 0; stored as events per second. */
int scn_parse_rate(const char *s, size_t len, double *per_second, sim_error *err);

/* A probability: a number in [0, 1], or a percentage in [0%, 100%]. */
int scn_parse_probability(const char *s, size_t len, double *p, sim_error *err);

/* ------------------------------------------------------------- devices */

/* Loads a device profile (docs/scenarios.md "Device") from a YAML file into
 * *dev.  Returns SIM_OK, or SIM_EINPUT / SIM_ELIMIT / SIM_EIO with
 * "file:line:col: key.path: what" in err; on failure *dev holds nothing to
 * release.  Release a loaded device with scn_device_release(). */
int scn_device_load(const char *path, mdl_device *dev, sim_error *err);
/* The same from memory; `file` names the text in messages. */
int scn_device_parse(const char *text, size_t len, const char *file, mdl_device *dev,
                     sim_error *err);
/* Frees what the loader allocated for dev.  Safe on a zeroed device. */
void scn_device_release(mdl_device *dev);

/* ---------------------------------------------------------- candidates */

/* Loads a candidate profile (docs/scenarios.md "Candidate"); the same
 * contract as scn_device_load.  Release with scn_candidate_release(). */
int scn_candidate_load(const char *path, mdl_candidate *cand, sim_error *err);
int scn_candidate_parse(const char *text, size_t len, const char *file, mdl_candidate *cand,
                        sim_error *err);
/* Frees what the loader allocated for cand.  Safe on a zeroed candidate. */
void scn_candidate_release(mdl_candidate *cand);

/* ----------------------------------------------------------- scenarios */

#define SCN_REPLICATIONS_MAX 10000000u
#define SCN_CELLS_MAX 10000u
#define SCN_PROFILES_MAX 64u
#define SCN_PATHS_MAX 64u

/* A loaded scenario (docs/scenarios.md "Top level"), with its grid built:
 * cells[] is devices x candidates x policies, device outermost, then the
 * policy axes in file order.  Every pointer is owned by the scenario. */
typedef struct scn_scenario {
    char name[MDL_NAME_MAX];
    char *about;                 /* "" when absent */
    mdl_target target;           /* target.set 0 when absent */
    mdl_field *field;            /* the fleet's observations (docs/field.md), nfield of them */
    unsigned nfield;
    /* `calibrate` (docs/calibration.md): the unknowns to fit against the field block */
    mdl_unknown fit[MDL_UNKNOWNS_MAX];
    unsigned nfit;
    int calibrate;               /* the block is present */
    uint64_t seed, replications;
    sim_time horizon;
    mdl_device *devices;
    unsigned ndevices;
    char **device_yaml;          /* per device: its profile as YAML, kept when the plan
                                    has a calibrate block (calibrate's -o); else NULLs */
    mdl_candidate *candidates;
    unsigned ncandidates;
    mdl_workload workload;
    /* `workload.paths` (npaths 0: one `path`): each named path is the
     * grid's first axis, `path`; paths[k] is the workload with path k's
     * steps (its other arrays shared with `workload`) */
    mdl_workload *paths;
    char (*path_names)[MDL_NAME_MAX];
    unsigned npaths;
    unsigned *path_of;           /* per policy: the index of its path (npaths > 0) */
    mdl_policy *policies;        /* one per combination of the axes, the path axis first */
    char **policy_json;          /* per policy: its axis values as a JSON object */
    unsigned npolicies;
    char (*axes)[MDL_NAME_MAX];  /* policy keys given a list, in file order */
    unsigned naxes;
    mdl_cell *cells;
    unsigned ncells;
    const mdl_candidate *lkg[SCN_PROFILES_MAX]; /* per candidate: its last_known_good */
    mdl_candidate *extras;       /* catalog candidates loaded as an lkg (SCN_PROFILES_MAX) */
    unsigned nextras;
    /* FNV-1a (64 bits) of the text of every file the loader read: the
     * scenario, then its includes in load order.  Two loads of the same
     * files give the same digest (what the ranks of an MPI job check). */
    uint64_t digest;
} scn_scenario;

/* Loads a scenario file, its includes and its catalog references, and
 * builds the grid.  Returns SIM_OK, or SIM_EINPUT / SIM_ELIMIT /
 * SIM_ENOTFOUND / SIM_EIO with "file:line:col: key.path: what" in err; on
 * failure *s holds nothing to release.  Release with
 * scn_scenario_release(). */
int scn_scenario_load(const char *path, scn_scenario *s, sim_error *err);
/* The same from memory; `file` names it in messages and relative
 * includes resolve from its directory. */
int scn_scenario_parse(const char *text, size_t len, const char *file, scn_scenario *s,
                       sim_error *err);
/* A scenario of the shipped catalog by path ("scenarios/capacity-plan.yaml"). */
int scn_scenario_load_catalog(const char *path, scn_scenario *s, sim_error *err);
void scn_scenario_release(scn_scenario *s);
/* The cell whose replications need the most events (mdl_events_estimate),
 * its estimate in *out: what the loader holds against MDL_EVENTS_MAX. */
unsigned scn_largest_estimate(const scn_scenario *s, mdl_estimate *out);
/* The events of the whole run, every cell's estimate times the
 * replications, for the time a run may take: an upper bound, as each
 * estimate is, but for the page model's looks and polls (mdl_estimate's
 * `pages`), left out: bounded by the horizon alone, they fire only under
 * memory pressure (docs/results.md). */
double scn_events_total(const scn_scenario *s);

/* A fitted value for scn_device_fitted: a knob (models/knobs.c), its value
 * in the knob's unit, and what `measured` says of it after "fitted: ". */
typedef struct scn_fitted {
    unsigned knob;
    double value;
    const char *source;
} scn_fitted;
/* Device `device` of s as YAML with the n values in place, each marked
 * fitted in `measured` (docs/calibration.md), under `header` (comment
 * lines).  The text is loaded back and each value read back before it is
 * handed out: malloc'd in *yaml, or an error with *yaml NULL. */
int scn_device_fitted(const scn_scenario *s, unsigned device, const scn_fitted *v, unsigned n,
                      const char *header, char **yaml, sim_error *err);

/* ------------------------------------------------------------- catalog */

/* The shipped catalog (scenarios/catalog, embedded at build time). */
#define SCN_DEFAULT_SCENARIO "scenarios/capacity-plan.yaml"

typedef enum scn_kind { SCN_KIND_DEVICE, SCN_KIND_CANDIDATE, SCN_KIND_SCENARIO,
                        SCN_KIND_OTHER, SCN_KIND_FRAGMENT } scn_kind;

typedef struct scn_catalog_item {
    scn_kind kind;
    const char *path;  /* "devices/android-4g.yaml" */
    const char *text;  /* the YAML, NUL-terminated */
    size_t len;
} scn_catalog_item;

/* Entries in sorted path order. */
unsigned scn_catalog_count(void);
void scn_catalog_get(unsigned i, scn_catalog_item *out);
/* The entry's name (its name, id or scenario name key) and `about` line
 * into name[MDL_NAME_MAX] and about[n] ("" when absent).  Returns SIM_OK
 * or an error of the YAML layer. */
int scn_catalog_describe(const scn_catalog_item *it, char *name, char *about, size_t n,
                         sim_error *err);
/* What kind of file a path holds, by its root keys: SCN_KIND_FRAGMENT for
 * a scenario's `app`, `field` or `candidates` block alone (what `oomsim
 * import meminfo`, `metrickit` and `play-vitals` write, and
 * `benchmark-model` for a log of several runs),
 * SCN_KIND_OTHER when it is none of these (used by `oomsim validate`). */
scn_kind scn_kind_of_text(const char *text, size_t len);
/* Checks a fragment as the same keys of a scenario would be checked
 * (messages name FILE:line:col of the fragment). */
int scn_fragment_check(const char *text, size_t len, const char *file, sim_error *err);

/* ------------------------------------------------------------- imports */

/* `oomsim import KIND FILE...` (import/, docs/imports.md): what teams
 * already measure, written as YAML the loader accepts, each value with a
 * comment naming the input's line and what was assumed.  One importer a
 * format, each in a file of its own; scn_importer_of() gives its entry in
 * the table (name, help line, how many inputs), which the command line
 * walks for its kinds and its help. */
typedef enum scn_import_kind { SCN_IMPORT_BENCHMARK_MODEL = 0, SCN_IMPORT_MEMINFO,
                               SCN_IMPORT_LLAMA_CPP, SCN_IMPORT_ONNXRUNTIME,
                               SCN_IMPORT_METRICKIT, SCN_IMPORT_PLAY_VITALS,
                               SCN_IMPORT_COUNT } scn_import_kind;
const char *scn_import_kind_name(scn_import_kind k);

/* The most inputs an importer takes (MetricKit's payload files). */
#define SCN_IMPORT_INPUTS_MAX 64u

typedef struct scn_import_input {
    const char *name;  /* how comments and messages name it (a file's base name) */
    const char *text;
    size_t len;
} scn_import_input;

typedef struct scn_import_opts {
    const char *id;    /* the candidate's id (NULL: "imported") */
    const char *part;  /* the part's name (NULL: "model") */
    const mdl_candidate *minus; /* meminfo: the model's parts to subtract (NULL: none) */
    unsigned long long run;     /* benchmark-model: the run to import, from 1 (0: all) */
    /* llama-cpp: the log's machine is as fast as this device (NULL: a
     * phone at speed 1, or not a phone's times), its speeds */
    const char *speed_of;
    double speed_cpu, speed_gpu;
} scn_import_opts;

/* The YAML an importer writes into, and the lines, events or keys it read
 * and did not use (import/import_int.h). */
typedef struct scn_import_out scn_import_out;
typedef struct scn_tally scn_tally;

/* One format's importer.  read fills `state` (state_size bytes, at most
 * SCN_IMPORT_STATE_MAX, zeroed first; what read allocates besides, release
 * frees) from the inputs, and counts in `ignored` every line, event or key
 * it read and did not use; write turns the state into YAML, saying what
 * was ignored; release (NULL: nothing to free) runs after both, whatever
 * they returned. */
typedef struct scn_importer {
    const char *name;   /* KIND on the command line: "benchmark-model" */
    const char *help;   /* its line in `oomsim import --help` */
    unsigned inputs;    /* the most inputs it takes: 1 or SCN_IMPORT_INPUTS_MAX */
    size_t state_size;
    int (*read)(const scn_import_input *in, unsigned n, const char *name, void *state,
                scn_tally *ignored, sim_error *err);
    int (*write)(void *state, const scn_import_opts *o, scn_import_out *w, sim_error *err);
    void (*release)(void *state);
} scn_importer;

#define SCN_IMPORT_STATE_MAX 1024u

/* The importer of a kind (never NULL for k < SCN_IMPORT_COUNT). */
const scn_importer *scn_importer_of(scn_import_kind k);

/* The YAML (*yaml, malloc'ed) from n inputs of `kind`.  SIM_OK, or
 * SIM_EINPUT naming "NAME:LINE: what", SIM_EINVAL, SIM_ENOMEM. */
int scn_import(scn_import_kind kind, const scn_import_input *in, unsigned n,
               const scn_import_opts *o, char **yaml, sim_error *err);

/* The candidate skeleton of `oomsim import perfetto --candidate`
 * (import/perfetto.c, docs/perfetto.md) from what traces/perfetto/ read:
 * YAML text, malloc'ed; NULL out of memory.  `about` names what was
 * measured. */
char *scn_import_perfetto_candidate(const trc_pf_summary *sum, const char *id,
                                    const char *about);

#ifdef __cplusplus
}
#endif

#endif /* OOMSIM_SCENARIOS_H */
