/* cli.h - the subcommands of the `oomsim` command.
 *
 * Each subcommand gets argv after the subcommand name and returns an exit
 * status: CLI_OK, CLI_INPUT (invalid input), CLI_USAGE, CLI_FAILURE (I/O
 * or internal).  Only cli/ prints and decides exit statuses. */
#ifndef OOMSIM_CLI_H
#define OOMSIM_CLI_H

#include "sim/sim.h"

#include <signal.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { CLI_OK = 0, CLI_INPUT = 1, CLI_USAGE = 2, CLI_FAILURE = 3, CLI_INTERRUPTED = 130 };
/* What a subcommand's argument parser returns when it has done the
 * command's whole work (--help printed): exit with CLI_OK. */
enum { CLI_DONE = -1 };

/* Maps a SIM_E* code to its exit status (oomsim --help lists them). */
int cli_status(int code);
/* Prints "oomsim: <msg>" (or the bare message for probe parity) and
 * returns the exit status for err. */
int cli_report(const sim_error *err);
/* The message as it is, no prefix: the probe's, whose messages are the
 * reference probe's own, byte for byte. */
int cli_report_verbatim(const sim_error *err);
/* A usage error of subcommand cmd: one line, "oomsim CMD: <message>",
 * then "see oomsim CMD --help" on stderr; returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Writes len bytes and a newline to stdout; CLI_OK or CLI_FAILURE. */
int cli_write_stdout(const char *text, size_t len);

/* One file of a set written together: name inside the directory, and
 * the text (a newline is added). */
typedef struct cli_file {
    const char *name;
    const char *text;
    size_t len;
} cli_file;
/* Writes the n files into dir (created, one level, when missing; a file
 * named "SUB/NAME" into dir/SUB, made when missing, removed again on a
 * failure when it is left empty): each to
 * a temporary name first and, once all are written, each renamed to its
 * name.  On a failure, or when *stop (may be NULL) is set before a file,
 * every temporary is removed, and the directory too when this call made
 * it: the set is there whole or not at all.  Prints what went wrong;
 * returns CLI_OK, CLI_FAILURE or CLI_INTERRUPTED. */
int cli_write_files(const char *dir, const cli_file *files, unsigned n,
                    const volatile sig_atomic_t *stop);
/* One file at `path`, the same way: text and a newline to a temporary
 * name beside it, then renamed; nothing left on a failure (printed).
 * CLI_OK or CLI_FAILURE. */
int cli_write_file(const char *path, const char *text, size_t len);
/* Starts *o at path with text and a newline, closed (sim_out: the caller
 * commits and frees it, even after a failure); SIM_OK or the failure. */
int cli_put_text(const char *path, const char *text, size_t len, sim_out **o, sim_error *err);
/* Prints "oomsim: <message>" of a failed output; returns CLI_FAILURE. */
int cli_output_failed(const sim_error *err);
/* Whether files can be written into dir: an existing, writable directory,
 * or a missing one whose parent is.  SIM_OK or SIM_EIO with the reason;
 * creates nothing. */
int cli_check_dir(const char *dir, sim_error *err);

/* Whether a file can be written at path (its directory exists and takes
 * new files, and it is not a directory); `option` names it in the
 * message.  SIM_OK or SIM_EIO; creates nothing. */
int cli_check_file(const char *option, const char *path, sim_error *err);

/* A decimal integer in [min, max] into *out: SIM_OK, or SIM_EINVAL when
 * it is not one (out untouched). */
int cli_number(const char *s, unsigned long long min, unsigned long long max,
               unsigned long long *out);
/* ------------------------------------------------------------- options */

/* The options of a subcommand are one table (options.c): each entry its
 * names, what it takes, where the value goes and its lines in --help, so
 * that the parser and the help come from the same place. */
typedef enum cli_opt_kind {
    CLI_OPT_HELP,    /* prints the help; the parser returns CLI_DONE */
    CLI_OPT_FLAG,    /* int := 1 */
    CLI_OPT_TEXT,    /* const char * := the value */
    CLI_OPT_FILE,    /* the same, an empty value refused */
    CLI_OPT_COUNT,   /* unsigned long long := a decimal in [min, max] (cli_number) */
    CLI_OPT_SECONDS, /* double := a number in [min, max] */
    CLI_OPT_CHOICE,  /* const char * := the entry of `choices` the value names */
    CLI_OPT_LIST,    /* const char *[max] at target, the count (unsigned) at `given` */
    CLI_OPT_ELSEWHERE /* in the help, but another form of the command takes it: unexpected */
} cli_opt_kind;

#define CLI_NOWHERE ((size_t)-1)

/* The row every table has: -h and --help print the help. */
#define CLI_HELP_OPT {"--help", "-h", CLI_OPT_HELP, 0, CLI_NOWHERE, 0, 0, NULL, NULL, 0, NULL}

typedef struct cli_opt {
    const char *name, *alias;    /* "--help" and "-h"; alias NULL: none */
    cli_opt_kind kind;
    size_t target;               /* offsetof the value in the command's options */
    size_t given;                /* offsetof an int set to 1 when given, or CLI_NOWHERE */
    unsigned long long min, max; /* COUNT, SECONDS; LIST: max items */
    const char *const *choices;  /* CHOICE: NULL-terminated */
    /* A bad value: the message, its "%s" the value ("" when missing); NULL:
     * the command's `unexpected`.  A missing value gets the same message,
     * unless missing_unexpected. */
    const char *bad;
    int missing_unexpected;
    const char *help;            /* its lines in --help, verbatim; NULL: none */
} cli_opt;

/* A subcommand's table and how it speaks (designated initializers: what is
 * not given is 0 or NULL). */
typedef struct cli_cmd {
    const char *name;            /* "run": "oomsim run: ..." */
    const char *usage;           /* the help's opening lines, verbatim */
    const char *tail;            /* lines after the options' (NULL: none) */
    const cli_opt *opts;
    unsigned nopts;
    const char *unexpected;      /* an unknown option, or a value missing (%s: the argument) */
    const char *extra;           /* a positional argument too many (%s: it); NULL: unexpected */
    size_t positional;           /* offsetof const char *[positionals] */
    size_t npositional;          /* with positionals > 1: offsetof the unsigned count */
    unsigned positionals;
    int dash_is_positional;      /* a lone "-" is an argument, not an option */
    int (*speaks)(void);         /* NULL, or 0 when this process prints nothing */
    size_t message_max;          /* a message is cut to this many bytes; 0: never */
    void (*head)(FILE *f);       /* writes the opening lines when usage is NULL */
} cli_cmd;

/* Reads argv into `into` (the command's options, set to their defaults by
 * the caller) as c's table says.  CLI_OK; CLI_DONE after printing the help;
 * or CLI_USAGE after saying why. */
int cli_parse(const cli_cmd *c, int argc, char **argv, void *into);
/* The help: the opening lines, each option's (its own lines, or one made
 * from the table), the tail. */
void cli_help(const cli_cmd *c, FILE *f);
/* What an option takes, for a help line ("N", "FILE"; "" for none). */
const char *cli_opt_value(const cli_opt *o);
/* The entry of c's table named a (or its alias), or NULL. */
const cli_opt *cli_opt_named(const cli_cmd *c, const char *a);

/* Every subcommand's table, the one its parser reads (each in its file). */
extern const cli_cmd cli_run_cmd, cli_replay_cmd, cli_explain_cmd, cli_gen_cmd,
    cli_import_yaml_cmd, cli_import_perfetto_cmd, cli_diagnose_cmd, cli_lmkd_cmd,
    cli_validate_cmd, cli_catalog_cmd, cli_probe_cmd, cli_calibrate_cmd;

/* manual.c: what is made from the tables besides --help, for packaging:
 * every command's options one a line ("run -o VALUE"), the man page
 * oomsim(1) in roff, and bash's and zsh's completions.  `top` is the
 * top-level help (main.c's). */
void cli_options_list(FILE *f);
void cli_man_page(FILE *f, void (*top)(FILE *));
int cli_completions(FILE *f, const char *shell);

struct scn_scenario;
struct res_plan;
struct res_result;
/* A scenario by path, or by catalog name (scenarios/, then teach/); NULL:
 * the default plan. */
int cli_load_scenario(const char *arg, struct scn_scenario *s, sim_error *err);
/* The plan `oomsim run` makes of s (plan.c): its cells, seed,
 * replications, horizon and digest, and each cell's policy label, in
 * *labels (free() it after the plan; the plan points into it and into s).
 * Returns SIM_OK or SIM_ENOMEM (nothing to free). */
int cli_plan_of(const struct scn_scenario *s, struct res_plan *p, const char ***labels,
                sim_error *err);

/* The engine events one thread fires per second on the reference machine
 * (docs/performance.md: the default plan, 7.8 million events in about a
 * second on one core), and the run time an event estimate implies: an
 * upper bound, as the estimate is (run.c). */
#define CLI_EVENTS_PER_SECOND 8e6
double cli_run_seconds(const struct scn_scenario *s, unsigned threads);
/* The default -j: the CPUs this process may use (run.c). */
unsigned long long cli_default_threads(void);

/* What `run` and `replay` were asked (run.c). */
typedef struct cli_run_opts {
    const char *scenario, *dir, *format;
    int has_reps, has_seed, has_timeline;
    unsigned long long reps, seed, threads, timeline;
    const char *checkpoint, *resume; /* run only: --checkpoint, --resume */
    double period;                   /* --checkpoint-period, seconds */
    int has_period;
    int headroom;                    /* run only: --headroom */
} cli_run_opts;
/* Prints the results as o->format says and, with o->dir, writes them with
 * the plots and the report; returns the exit status. */
int cli__emit(const cli_run_opts *o, const struct res_plan *plan, const struct res_result *r);

/* The progress of a run on stderr (progress.c). */
typedef struct cli_progress {
    int shown;      /* percentage on screen, -1: nothing yet */
    double t0, after;
    int tty;        /* draw it (else only count) */
    unsigned ranks; /* > 1: an MPI job, progress as lines */
    uint64_t done;  /* replications done so far */
} cli_progress;
void cli_progress_start(cli_progress *b, unsigned ranks);
/* A res_progress_fn: ctx is the cli_progress. */
void cli_progress_show(void *ctx, uint64_t done, uint64_t total);
/* Erases a bar left on screen (a run that failed part way). */
void cli_progress_erase(const cli_progress *b);

/* SIGINT and SIGTERM (interrupt.c): caught (SIGUSR1 too with with_usr1)
 * into a flag a plan's runs stop at (res_plan.stop), set to the signal; a
 * second signal ends the process.  The exit status of an interrupted
 * command is 128 + the signal (cli_interrupted_status of CLI_INTERRUPTED). */
void cli_interrupt_catch(int with_usr1);
volatile sig_atomic_t *cli_interrupt_flag(void);
int cli_interrupted_status(int status);
const char *cli_signal_name(int sig);
int cli_gen(int argc, char **argv);
int cli_import(int argc, char **argv);
/* `import device` (device.c) */
int cli_import_device(int argc, char **argv);
extern const cli_cmd cli_import_device_cmd;
/* "NAME: M of its N values measured (VALUE: SOURCE, ...); K assumed: ..." of a
 * profile, on one line after indent (device.c) */
struct mdl_device;
void cli_say_provenance(FILE *f, const char *indent, const struct mdl_device *d);
/* 1 to 63 characters of [a-z0-9_-] (options.c) */
int cli_valid_id(const char *s);
int cli_diagnose(int argc, char **argv);
int cli_lmkd(int argc, char **argv);
int cli_replay(int argc, char **argv);
int cli_explain(int argc, char **argv);
/* After an LLM's death told by explain: the replication run again in each
 * cell that changes one LLM lever alone (levers.c), and which lived. */
int cli_explain_levers(const struct scn_scenario *s, unsigned cell, uint64_t rep);
int cli_probe(int argc, char **argv);
int cli_run(int argc, char **argv);
int cli_calibrate(int argc, char **argv);
int cli_validate(int argc, char **argv);
int cli_catalog(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif
