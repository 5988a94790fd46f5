/* replay.h - trace-driven runs, the lifecycle probe and exit diagnosis.
 *
 * So far: the lifecycle probe (spec/TRACE.md, `oomsim probe`).  It reads a
 * probe-format JSON file (an array of {time_ms, stage, rss_mb, budget_mb,
 * sessions, exit_reason} objects) and reports the peak, the events over
 * budget, the last exit reason and the conservative recovery advice. */
#ifndef OOMSIM_REPLAY_H
#define OOMSIM_REPLAY_H

#include <stddef.h>

#include "sim/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest probe file read, in bytes; larger files are refused (SIM_ELIMIT). */
#define RPL_PROBE_MAX_BYTES ((size_t)256 << 20)

/* Runs the probe on the file at `path`.  On success returns SIM_OK and
 * sets *report to the JSON report (NUL-terminated, no trailing newline;
 * release it with rpl_probe_free()).  On failure returns SIM_EINPUT
 * (rejected input: err->msg is what the user sees, for the reference's
 * own rejections its exact message), SIM_ELIMIT, SIM_EIO or SIM_ENOMEM,
 * and *report is untouched.  Thread-safe. */
int rpl_probe_file(const char *path, char **report, sim_error *err);

/* The same on an in-memory document of len bytes; `name` (not NULL) is
 * the file name used in messages. */
int rpl_probe_buffer(const char *data, size_t len, const char *name, char **report,
                     sim_error *err);

/* Releases a report.  NULL is allowed. */
void rpl_probe_free(char *report);

#ifdef __cplusplus
}
#endif

#endif /* OOMSIM_REPLAY_H */
