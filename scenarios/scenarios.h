/* scenarios.h - scenario schema, loader and shipped catalog.
 *
 * So far: the unit parsers every scenario value goes through (sizes,
 * durations, rates, probabilities; spec/SCENARIO.md "Units") and the
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

/* A size: integer bytes ("1048576") or a number with a unit, binary
 * B KiB MiB GiB TiB or decimal KB MB GB TB ("48MiB", "1.5GiB").  Rounded to
 * the nearest byte; 0 <= size <= SCN_SIZE_MAX. */
int scn_parse_size(const char *s, size_t len, int64_t *bytes, sim_error *err);

/* A duration: a number with a unit us ms s min h ("250ms", "1.5s"); a bare
 * number is refused, naming the units.  Rounded to the nearest
 * microsecond; 0 <= duration <= SCN_DURATION_MAX. */
int scn_parse_duration(const char *s, size_t len, sim_time *us, sim_error *err);

/* A rate: "N/s", "N/min" or "N/h" with N > 0; stored as events per second. */
int scn_parse_rate(const char *s, size_t len, double *per_second, sim_error *err);

/* A probability: a number in [0, 1]. */
int scn_parse_probability(const char *s, size_t len, double *p, sim_error *err);

/* ------------------------------------------------------------- devices */

/* Loads a device profile (spec/SCENARIO.md "Device") from a YAML file into
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

/* Loads a candidate profile (spec/SCENARIO.md "Candidate"); the same
 * contract as scn_device_load.  Release with scn_candidate_release(). */
int scn_candidate_load(const char *path, mdl_candidate *cand, sim_error *err);
int scn_candidate_parse(const char *text, size_t len, const char *file, mdl_candidate *cand,
                        sim_error *err);
/* Frees what the loader allocated for cand.  Safe on a zeroed candidate. */
void scn_candidate_release(mdl_candidate *cand);

#ifdef __cplusplus
}
#endif

#endif /* OOMSIM_SCENARIOS_H */
