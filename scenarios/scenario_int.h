/* scenario_int.h - what the files of the scenario loader share (internal
 * to scenarios/): the include stack and the loading of each top-level
 * section.  Each returns SIM_OK, or a SIM_E* code with err naming
 * file:line:col and the key path. */
#ifndef OOMSIM_SCENARIOS_SCENARIO_INT_H
#define OOMSIM_SCENARIOS_SCENARIO_INT_H

#include <limits.h>

#include "catalog_int.h"
#include "yaml_int.h"

#define INCLUDE_DEPTH_MAX 16

/* Where a document came from: a file on disk, a catalog entry, or text in
 * memory. */
typedef struct source {
    char id[PATH_MAX + 32];   /* "disk:<realpath>", "catalog:<path>" or "memory:<name>" */
    char name[PATH_MAX + 32]; /* what messages call it */
    int embedded;             /* a catalog entry */
} source;

/* A scenario being loaded, and the stack of documents being read (the
 * scenario file, then each include inside the one before). */
typedef struct loader {
    scn_scenario *s;
    source stack[INCLUDE_DEPTH_MAX];
    unsigned depth;
    int keep_yaml;    /* the plan calibrates: each device's text kept (device_yaml) */
} loader;

/* include.c */
/* The embedded catalog's file at path ("devices/android-4g.yaml"), or NULL. */
const scn__catalog_file *scn__catalog_find(const char *path);
/* Chains a document's text into the scenario's digest. */
void scn__digest_add(scn_scenario *s, const scn__doc *doc);
/* Opens src (from disk or the catalog) and adds its text to the digest. */
int scn__open_source(scn_scenario *s, const source *src, scn__doc *doc, sim_error *err);
/* The devices and candidates of the scenario's root mapping. */
int scn__load_profiles(loader *ld, const scn__node *root, sim_error *err);

/* workload.c: `workload` (required) */
int scn__load_workload(scn_scenario *s, const scn__node *root, sim_error *err);
/* Each named path's workload made whole: the shared arrays and keys, once
 * every part of the workload is loaded. */
void scn__paths_finish(scn_scenario *s);
/* owners.c: the `owners` map (before the workload), a requests step's
 * `owner` by name, and the owners' pages (after the workload). */
/* A map of named entries under root's `key` (`owners`, `processes`): *m
 * its node (m->n NULL when absent, *count 0), *count its entries, from 1
 * to max (`what`: one entry's kind, in the messages). */
int scn__named_map(const scn__node *root, const char *key, const char *what, unsigned max,
                   scn__node *m, int *count, sim_error *err);
/* The name of the map m's entry i (pair), a name of `[a-z0-9-]`, into
 * name (MDL_NAME_MAX), its errors at the key. */
int scn__map_name(const scn__node *m, struct fy_node_pair *pair, size_t i, char *name,
                  sim_error *err);
/* processes.c: `processes` (before the owners) */
int scn__load_processes(scn_scenario *s, const scn__node *root, sim_error *err);
/* calibrate.c: the `calibrate` block, after the devices and the field block */
int scn__load_calibrate(scn_scenario *s, const scn__node *root, sim_error *err);
int scn__load_owners(scn_scenario *s, const scn__node *root, sim_error *err);
int scn__holder_of(const scn_scenario *s, const scn__node *v, uint32_t *out, sim_error *err);
int scn__resolve_owners(scn_scenario *s, const scn__node *root, sim_error *err);
/* The top-level `app: {baseline: {...}, version: V}`: the app's own
 * memory and the version its exit records name. */
int scn__load_app(scn_scenario *s, const scn__node *root, sim_error *err);
/* A list of part names that every candidate must have (needs, prewarm). */
int scn__part_names(const scn_scenario *s, const scn__node *v, char (*out)[MDL_NAME_MAX],
                    unsigned *n, sim_error *err);
/* Fails: "<what> is not modelled by this version of oomsim". */
int scn__not_modelled(const scn__node *v, sim_error *err, const char *what);

/* policies.c: `policies` (optional): s->policies, policy_json, axes */
int scn__load_policies(scn_scenario *s, const scn__node *root, sim_error *err);

#endif /* OOMSIM_SCENARIOS_SCENARIO_INT_H */
