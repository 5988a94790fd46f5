/* cli.h - the subcommands of the `oomsim` command.
 *
 * Each subcommand gets argv after the subcommand name and returns an exit
 * status: CLI_OK, CLI_INPUT (invalid input), CLI_USAGE, CLI_FAILURE (I/O
 * or internal).  Only cli/ prints and decides exit statuses. */
#ifndef OOMSIM_CLI_H
#define OOMSIM_CLI_H

#include "sim/sim.h"

#include <signal.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { CLI_OK = 0, CLI_INPUT = 1, CLI_USAGE = 2, CLI_FAILURE = 3, CLI_INTERRUPTED = 130 };

/* Maps a SIM_E* code to the exit status spec/RESULTS.md gives it. */
int cli_status(int code);
/* Prints "oomsim: <msg>" (or the bare message for probe parity) and
 * returns the exit status for err. */
int cli_report(const sim_error *err);
/* Writes len bytes and a newline to stdout; CLI_OK or CLI_FAILURE. */
int cli_write_stdout(const char *text, size_t len);

/* One file of a set written together: name inside the directory, and
 * the text (a newline is added). */
typedef struct cli_file {
    const char *name;
    const char *text;
    size_t len;
} cli_file;
/* Writes the n files into dir (created, one level, when missing): each to
 * a temporary name first and, once all are written, each renamed to its
 * name.  On a failure, or when *stop (may be NULL) is set before a file,
 * every temporary is removed, and the directory too when this call made
 * it: the set is there whole or not at all.  Prints what went wrong;
 * returns CLI_OK, CLI_FAILURE or CLI_INTERRUPTED. */
int cli_write_files(const char *dir, const cli_file *files, unsigned n,
                    const volatile sig_atomic_t *stop);

/* A decimal integer in [min, max]: 1, or 0 when it is not one. */
int cli_number(const char *s, unsigned long long min, unsigned long long max,
               unsigned long long *out);
struct scn_scenario;
/* A scenario by path, or by catalog name (scenarios/, then teach/); NULL:
 * the default plan. */
int cli_load_scenario(const char *arg, struct scn_scenario *s, sim_error *err);
int cli_gen(int argc, char **argv);
int cli_diagnose(int argc, char **argv);
int cli_replay(int argc, char **argv);
int cli_explain(int argc, char **argv);
int cli_probe(int argc, char **argv);
int cli_run(int argc, char **argv);
int cli_validate(int argc, char **argv);
int cli_catalog(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif
