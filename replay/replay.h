/* replay.h - what oomsim makes of recorded and generated timelines: the
 * lifecycle probe (probe.c, docs/probe.md), trace-driven runs (replay.c),
 * the diagnosis of exit records (diagnose.c), the death classes and their
 * recoveries (classes.c), and the narration of one replication that
 * `oomsim explain` prints, with its drill (tell.c, quiz.c). */
#ifndef OOMSIM_REPLAY_H
#define OOMSIM_REPLAY_H

#include <stddef.h>

#include "models/models.h"
#include "sim/sim.h"
#include "traces/traces.h"

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

/* ---------------------------------------------------------------- replay */

/* Largest list a replay keeps (stage occurrences of one part and kind,
 * requests, relaunches). */
#define RPL_REPLAY_MAX 10000000

/* Reads the recorded session of a trace written by `oomsim gen` (with the
 * replay extension keys, docs/traces.md) for candidate `cand` (the parts
 * are matched by name) into *out (release with rpl_replay_free).
 * candidate_id (TRC_TEXT_MAX bytes, may be NULL) receives the trace's
 * candidate: its first event's.  With cand == NULL only candidate_id is
 * read.  Errors name the event. */
int rpl_replay_load(const char *path, const mdl_candidate *cand, mdl_replay *out,
                    char *candidate_id, sim_error *err);
void rpl_replay_free(mdl_replay *r);

/* ------------------------------------------------------------ diagnosis */

/* An exit record read from `dumpsys activity exit-info` output (its
 * multi-line and one-line toString layouts) or an lmkd kill line
 * (docs/on-call.md). */
typedef enum rpl_source { RPL_EXIT_INFO = 0, RPL_LMKD, RPL_IOS, RPL_KERNEL } rpl_source;

/* The report iOS writes (RPL_IOS records): a JetsamEvent with reason
 * per-process-limit or vm-pageshortage, a watchdog termination
 * (0x8badf00d) or a crash report at a death; an EXC_RESOURCE memory report
 * is a diagnostic written while the process lives on, never a kill's
 * record. */
typedef enum rpl_ios_report { RPL_IOS_JETSAM = 0, RPL_IOS_EXC_RESOURCE, RPL_IOS_WATCHDOG,
                              RPL_IOS_CRASH, RPL_IOS_JETSAM_PAGESHORTAGE,
                              RPL_IOS_JETSAM_SYSTEM, /* another system cause, in cause */
                              RPL_IOS_METRICKIT, /* no report: MetricKit's background count */
                              RPL_IOS_COUNT } rpl_ios_report;
/* Its name as iOS writes it ("JetsamEvent (per-process-limit)"). */
const char *rpl_ios_report_name(rpl_ios_report r);

#define RPL_TEXT_MAX 128

typedef struct rpl_exit {
    rpl_source source;
    char process[RPL_TEXT_MAX];
    char description[RPL_TEXT_MAX]; /* dumpsys description, or lmkd's reason */
    char app_version[RPL_TEXT_MAX]; /* a `version=` or `versionCode=` field, "" when none */
    int64_t timestamp_ms;           /* UTC; -1: none, or not readable unambiguously */
    int local_clock;                /* timestamp_ms is the phone's wall clock, zone unknown
                                     * (dumpsys, logcat): read as if UTC (rpl_exits_to_utc) */
    int reason_code;                /* ApplicationExitInfo reason; -1 for lmkd */
    int has_status, status;
    int has_importance, importance;
    int has_adj, adj;               /* lmkd: oom_score_adj */
    rpl_ios_report ios;             /* RPL_IOS: which report */
    char subreason[RPL_TEXT_MAX];   /* dumpsys subreason, "" when none */
    char package[RPL_TEXT_MAX];     /* dumpsys package, "" when none */
    int64_t uid;                    /* dumpsys realUid or lmkd uid; -1: not given */
    int64_t pss_kb, rss_kb;         /* -1: not given */
    int64_t pid;                    /* -1: not given */
    uint64_t line;                  /* where it starts in its file (from 1) */
    uint32_t file;                  /* which of the files given it is in (diagnose: from 0) */
    /* a JetsamEvent report (.ips): the process's entry */
    char cause[32];                 /* its `reason` (XNU's kill cause), "" when not killed */
    int jetsam_event;               /* 1: read from a JetsamEvent report */
    int jetsam_listed;              /* 1: the report lists it (cause "": not killed) */
    char largest[RPL_TEXT_MAX];     /* the report's largestProcess, "" when none */
    char states[64];                /* its `states`, comma-separated */
    int priority;                   /* its band (`priority`), -1 when not given */
    int64_t lifetime_max_kb;        /* its `lifetimeMax` pages, in kB; -1 when not given */
    int64_t free_kb, compressor_kb; /* memoryStatus: free pages, compressorSize; -1: none */
    /* Android's kill lines (lmkd's, the kernel's OOM killer's), read or joined */
    mdl_lmkd_reason lmkd;           /* lmkd's reason, from its words; NONE: not named */
    int kernel_oom;                 /* the kernel's OOM killer ended it */
    int64_t swap_kb;                /* lmkd: "kB swap" freed; -1: not given */
    int killinfo;                   /* lmkd: read from the events log's killinfo (no name) */
    int cut;                        /* lmkd: a line cut short before its oom_score_adj */
    int64_t yearless_ms;            /* a logcat time without its year (RPL_YEARLESS); -1 */
    int log_utc;                    /* the log's time is UTC (logcat -v epoch) */
    uint64_t joined_line;           /* an exit-info record: the kill line joined to it (0) */
    rpl_source joined_source;       /* ... and whose line it is (RPL_LMKD, RPL_KERNEL) */
    int64_t joined_gap_ms;          /* how far apart in time they were; -1: not known */
} rpl_exit;

/* A logcat time without its year ("12-04 10:23:45.678"): month, day and
 * milliseconds of the day as ((month * 32 + day) * 86400000 + ms). */
#define RPL_YEARLESS(month, day, ms) (((int64_t)(month) * 32 + (day)) * 86400000 + (ms))
/* The UTC milliseconds of a yearless time in the year nearest to near_ms. */
int64_t rpl_yearless_near(int64_t yearless_ms, int64_t near_ms);

/* Reads every exit record in data[0..len) (a dumpsys dump, a log with lmkd
 * lines, or both), in order.  Lines that are neither are skipped.  Returns
 * SIM_OK with *out (free()) and *n, or SIM_ELIMIT / SIM_ENOMEM.  At most
 * RPL_EXITS_MAX records per input. */
#define RPL_EXITS_MAX 100000
int rpl_exits_parse(const char *data, size_t len, const char *name, rpl_exit **out, size_t *n,
                    sim_error *err);

/* Joins each kill line (RPL_LMKD, RPL_KERNEL) to the exit-info record of
 * the same pid within RPL_JOIN_WINDOW_MS (or, a time not being known on one
 * side, the only record of that pid): one death, whose record takes the
 * line's evidence (joined_line, lmkd, kernel_oom) while the line leaves
 * the list.  Returns the new count; the order is kept. */
#define RPL_JOIN_WINDOW_MS 5000
size_t rpl_exits_join(rpl_exit *v, size_t n);

/* A JetsamEvent report (`.ips`, bug_type "298": a one-line JSON header,
 * then the report) as exit records (replay/ips.c): the entry of `process`
 * (its name as the report cuts it, 32 characters), or with process NULL
 * every process the event killed.  A report that does not list `process`
 * gives one record saying so.  Malformed: SIM_EINPUT naming `name` and
 * what was wrong (line:column inside the JSON).  *out is free()d. */
int rpl_ips_parse(const char *data, size_t len, const char *name, const char *process,
                  rpl_exit **out, size_t *n, sim_error *err);
/* Whether data looks like an .ips report (its first line a JSON object
 * with a bug_type): 0 not one, 1 a JetsamEvent (bug_type "298" on that
 * line), 2 another kind of report (a crash report, 309, ...). */
int rpl_ips_detect(const char *data, size_t len);
/* Internal to replay/: a timestamp as rpl_exits_parse reads it (UTC
 * milliseconds, -1 when unreadable), with an optional " +HHMM" zone. */
int64_t rpl__timestamp_ms(const char *s, size_t n);
/* 1 when s is a date and time without a zone (the phone's own clock, as
 * dumpsys and logcat print it), 0 for epoch milliseconds or a zone given. */
int rpl__timestamp_local(const char *s, size_t n);
/* Internal to replay/: s into dst[cap], control characters as spaces, cut
 * on a UTF-8 character's start. */
void rpl__utf8_copy(char *dst, size_t cap, const char *s);
/* Internal to replay/: a record with nothing given (-1 figures, "" texts). */
void rpl__exit_init(rpl_exit *x, rpl_source src, uint64_t line);

/* The class of a death a diagnosis names, in the drill's order.  The six
 * classes of the model's deaths are named as mdl_exit_name names them. */
typedef enum rpl_class {
    RPL_CLASS_LOW_MEMORY = 0, RPL_CLASS_SYSTEM_RECLAIM, RPL_CLASS_JAVA_CRASH,
    RPL_CLASS_NATIVE_CRASH, RPL_CLASS_ANR, RPL_CLASS_WATCHDOG,
    RPL_CLASS_KERNEL_OOM, /* the kernel's OOM killer (mark_victim), not lmkd */
    RPL_CLASS_OTHER, RPL_CLASS_UNKNOWN, RPL_CLASS_COUNT
} rpl_class;
/* "low_memory" ... "unknown"; "?" past the table. */
const char *rpl_class_name(rpl_class c);
/* The class named s (any_case: letters in either case), or RPL_CLASS_COUNT. */
rpl_class rpl_class_parse(const char *s, int any_case);
/* The class of a model's death. */
rpl_class rpl_class_of_exit(mdl_exit x);
/* low_memory, system_reclaim and kernel_oom: the kills for memory. */
int rpl_class_is_memory(rpl_class c);
/* Internal to replay/: what supports class c, the drills' word on why a
 * class chosen is not the death's. */
const char *rpl__class_needs(rpl_class c);
/* What a record x of class c leaves out whatever a trace shows (NULL:
 * nothing of its own): the evidence on-call asks for next. */
const char *rpl_class_missing(const rpl_exit *x, rpl_class c);

/* The recoveries, the ladder, the signs and the life (the verdict table). */
#include "replay/ladder.h"

/* The diagnosis of one record: class and evidence level (docs/on-call.md),
 * the stage of the trace running at the exit, what is supported, what is
 * missing and the conservative recovery action. */
typedef struct rpl_verdict {
    rpl_class kind;
    const char *cls;              /* its name: rpl_class_name(kind) */
    const char *evidence;         /* confirmed, supported, unconfirmed */
    int matched;                  /* the record matched the trace */
    char matched_stage[32];       /* "" when none */
    char supports[256], missing[256];
    const char *matched_on;       /* what the match used ("pid and time", ...) */
    int started;                  /* the process had finished starting (-1: not known) */
    int own_record;               /* matched as the trace's own record (a simulated death) */
    int outbid;                   /* its nearest death went to a nearer record */
    rpl_recovery rec;
    const char *recovery;         /* its sentence: rpl_recovery_text(rec) */
    rpl_ladder ladder;            /* the recovery ladder for it */
} rpl_verdict;

/* Diagnoses records against a trace (NULL: no trace).  A record matches the
 * trace when an exit event of the trace has the same process and the same
 * app version (each compared when both sides give one: dumpsys exit-info
 * prints a version only in a `version=` or `versionCode=` field some
 * builds add) and an exit timestamp within RPL_MATCH_WINDOW_MS of the
 * record's. */
#define RPL_MATCH_WINDOW_MS 5000
typedef struct rpl_trace_exits rpl_trace_exits;
/* Reads the exit events of a trace (streaming), with the stage running at
 * each. */
int rpl_trace_exits_load(const char *path, rpl_trace_exits **out, sim_error *err);
void rpl_trace_exits_free(rpl_trace_exits *t);
/* The failures a trace shows that leave no exit: prepares that read an
 * outdated compiled cache (`cache_stale`), requests failed for want of a
 * part (`part_failed`). */
void rpl_trace_failures(const rpl_trace_exits *t, uint64_t *stale, uint64_t *failed);
/* The record an exit event of a trace carries (its `exit` map; on iOS, the
 * report named in its `error`), as rpl_diagnose reads it: the one reading
 * that `diagnose`, `explain` and `run` share. */
void rpl_exit_of_event(const trc_event *e, uint64_t index, rpl_exit *x);
/* Whether the record's process is an isolated one (a sandboxed WebView or
 * an isolated service: ":sandboxed_process" or ":isolated" in its name, or
 * a uid from 99000 to 99999). */
int rpl_exit_isolated(const rpl_exit *x);
/* The trace's own exit records (the `exit` maps of its exit events). */
size_t rpl_trace_exits_count(const rpl_trace_exits *t);
const rpl_exit *rpl_trace_exit_record(const rpl_trace_exits *t, size_t k);
void rpl_diagnose(const rpl_exit *x, const rpl_trace_exits *t, rpl_verdict *v);
/* The verdicts on n records against one trace (vs: n of them), one record
 * per death: a death the records share goes to the nearest in time (the
 * earlier on a tie), and a record so outbid is matched to another death
 * only when one no record took fits it.  own: the records are the trace's
 * own (its simulated exit records): a match then says so.  SIM_OK, or
 * SIM_ENOMEM. */
int rpl_diagnose_all(const rpl_exit *xs, size_t n, const rpl_trace_exits *t, int own,
                     rpl_verdict *vs);
/* The records `oomsim diagnose` reads (gather.c), each with the name of its
 * source ("exit-info", "lmkd", "kernel", "JetsamEvent", "trace"). */
typedef struct rpl_record {
    rpl_exit x;
    const char *source;
} rpl_record;
/* A note on a file passed over (not a report of the kind asked for). */
typedef void (*rpl_note_fn)(void *ctx, const char *text);
/* Every record of the nfiles files (a directory: its .ips reports, in name
 * order), the kill lines joined to the records of the same deaths; with no
 * files, the trace's own records.  In a JetsamEvent the app is `process`,
 * else the process of the trace's first exit (NULL: none).  A file passed
 * over is told to note (NULL: not told).  *out (the caller frees it) and
 * *n; SIM_OK, or the first refusal in err with nothing gathered. */
int rpl_gather(const char *const *files, int nfiles, const char *process,
               const rpl_trace_exits *t, rpl_note_fn note, void *ctx, rpl_record **out,
               size_t *n, sim_error *err);
/* `process` named: its app's other processes' deaths (o), other apps' kill lines (apps) */
#define RPL_OTHERS_MAX 16
typedef struct rpl_others {
    char name[RPL_OTHERS_MAX][RPL_TEXT_MAX];
    size_t count[RPL_OTHERS_MAX];
    unsigned n;
    size_t more; /* of processes past the table */
} rpl_others;
void rpl_leave_out_others(rpl_record *items, size_t *n, const char *process, rpl_others *o,
                          rpl_others *apps);
/* A loop: two or more deaths of one process (not an isolated one, not an
 * exit for another reason), each within RPL_LOOP_WINDOW_MS of the one
 * before (the tool's horizon of a session, not a platform's). */
#define RPL_LOOP_WINDOW_MS ((int64_t)3600 * 1000)
typedef struct rpl_loop {
    char process[RPL_TEXT_MAX];
    size_t deaths, start_up; /* of them, during start-up (started == 0) */
    size_t background;       /* of them, reclaims of the app in the background */
    int64_t first_ms, last_ms;
} rpl_loop;
/* The loops among n records and their verdicts, in the order they began:
 * *out (the caller frees it) and *nout.  SIM_OK or SIM_ENOMEM. */
int rpl_loops(const rpl_record *items, const rpl_verdict *vs, size_t n, rpl_loop **out,
              size_t *nout);
/* Two records say the same thing (all but their time and pid): told once. */
/* The phone's zone, when the user knows it (`--tz`): each record on the
 * phone's clock (local_clock) put on UTC, zone_min minutes east of UTC.
 * A logcat time without a year stays on the phone's clock. */
void rpl_exits_to_utc(rpl_record *items, size_t n, int zone_min);
int rpl_same_record(const rpl_record *a, const rpl_record *b, const rpl_verdict *va,
                    const rpl_verdict *vb);
/* rpl_diagnose_all over records: *out (n verdicts, the caller frees it);
 * SIM_OK or SIM_ENOMEM. */
int rpl_verdicts(const rpl_record *items, size_t n, const rpl_trace_exits *t, int own,
                 rpl_verdict **out, sim_error *err);
/* The verdict on a death told from its own timeline (`explain`): the
 * stage running at it ("" none) and whether the process had finished
 * starting (rpl_life_at_exit); the same advice as rpl_diagnose gives on a
 * matching trace. */
void rpl_diagnose_told(const rpl_exit *x, const char *stage, int started, unsigned signs,
                       rpl_verdict *v);
const char *rpl_reason_name(int code);

/* ------------------------------------------------------------ narration */

/* One replication told for a person (`oomsim explain`, docs/on-call.md):
 * each trace event as a line of time, counted memory and what happens;
 * the cycles from a start to a death held back until the death, so that a
 * death that repeats the same way is told once with its count (full: every
 * line, as it comes); each death with the limit it crossed and its record;
 * then what the evidence supports.  quiz: the causes hidden, for the
 * drill.  The teller prints nothing: the caller takes the text told so far
 * with rpl_teller_text after each call and prints it. */
typedef struct rpl_teller rpl_teller;
/* NULL when out of memory.  cell must outlive the teller. */
/* quiz: 1 the quiz, 2 the drill (the quiz that hides more, asks more). */
rpl_teller *rpl_teller_create(const mdl_cell *cell, int full, int quiz);
void rpl_teller_free(rpl_teller *t);
/* The text told since the last call (whole lines; *len bytes, NULL when
 * none), valid until the next call on t; SIM_ENOMEM in *rc (may be NULL)
 * when some of it could not be kept. */
const char *rpl_teller_text(rpl_teller *t, size_t *len, int *rc);
/* The opening: the scenario's about (not with the drill, which it would
 * give away), the cell, the columns. */
void rpl_tell_header(rpl_teller *t, const char *scenario, const char *about,
                     const char *policy, unsigned long long rep);
/* A trace sink (mdl_trace_sink): tells one event. */
int rpl_tell(void *ctx, const trc_event *e, sim_error *err);
/* What is still held back (a partial cycle, a repeat count). */
void rpl_tell_finish(rpl_teller *t);
/* The replication's peak, deaths and requests. */
void rpl_tell_summary(rpl_teller *t, const mdl_rep *r);
/* One verdict per distinct kind of death, in the order they came. */
void rpl_tell_verdicts(rpl_teller *t);
/* Deaths told so far. */
unsigned rpl_teller_deaths(const rpl_teller *t);

/* The quiz over death k of those told (quiz.c; with the drill, drill.c):
 * the evidence was told without its causes (the drill hides the reason
 * codes, the importance and the class words too); the quiz asks its
 * questions one by one, each answer's form checked, then grades them all,
 * saying why the right answer is right and why a chosen one is not.
 * rpl_drill_none when no death was told. */
#define RPL_DRILL_QUESTIONS 8
#define RPL_TELL_DEATHS 64 /* deaths a teller remembers (for the verdicts and --death) */
#define RPL_ANSWER_MAX 128
void rpl_drill_none(rpl_teller *t);
/* Before the drill's questions on death k: picks the fixes it offers and
 * the fact its last question changes, and shuffles each question's
 * choices by seed (the same seed, the same drill).  SIM_OK or SIM_ENOMEM. */
int rpl_drill_prepare(rpl_teller *t, unsigned death, uint64_t seed);
/* How many questions: 2 (the class, the recovery), or the drill's 8 (the
 * class, foreground or background, which process, the stage, the evidence
 * level, the ladder's step, the fix, what changes if one fact does). */
unsigned rpl_quiz_questions(const rpl_teller *t);
/* Question q (from 0) about death `death`; echo: the answer to q - 1 as
 * given, printed first. */
void rpl_quiz_ask(rpl_teller *t, unsigned death, unsigned q, const char *echo);
/* 1 when answer (trimmed, RPL_ANSWER_MAX) has the form of question q's
 * answers, rewritten to its plain form (a number for a name); else 0 and
 * *form says the form expected. */
int rpl_quiz_form(const rpl_teller *t, unsigned q, char *answer, size_t n, const char **form);
/* The answer to every question, graded (answers: rpl_quiz_questions of
 * them, the last echoed first). */
void rpl_quiz_grade(rpl_teller *t, unsigned death, char answers[][RPL_ANSWER_MAX]);
/* The recovery's drill choice names the class it is for (classes.c). */
const char *rpl_recovery_for(rpl_recovery r);
/* After the drill: the scenario, now that it gives nothing away. */
void rpl_drill_reveal(rpl_teller *t, const char *about);

/* ---- lmkd's decision on a snapshot (snapshot.c; `oomsim lmkd`) ---------- */

#define RPL_LMKD_IGNORED_MAX 16
#define RPL_LMKD_NOTES_MAX 8

/* One wake-up of lmkd read from the kernel's files of a snapshot
 * directory: meminfo, zoneinfo, vmstat.0 (at lmkd's last reset) and
 * vmstat.1 (now); optional pressure_memory, event, props, page_size. */
typedef struct rpl_lmkd_snapshot {
    mdl_lmkd_props props;      /* resolved: lmkd's defaults where unset */
    mdl_lmkd_mem reset, now;   /* vmstat.0's counters; meminfo and vmstat.1 */
    mdl_lmkd_wake wake;        /* watermarks, PSI, the level, the page size */
    int use_minfree_levels, use_new_strategy, use_psi; /* -1: not set */
    char ignored[RPL_LMKD_IGNORED_MAX][128]; /* lmkd properties this decision does not read */
    unsigned nignored;
    /* how lmkd reads what it was given, where that differs from the file:
     * zones its parser drops, a protection taken as 0 (zoneinfo) */
    char notes[RPL_LMKD_NOTES_MAX][600];
    unsigned nnotes, notes_over;
} rpl_lmkd_snapshot;

/* Empty, with lmkd's defaults to come (4 KiB pages, a PSI event). */
void rpl_lmkd_snapshot_init(rpl_lmkd_snapshot *s);
/* One file's text by its name in the directory ("meminfo", "vmstat.1",
 * ...): SIM_OK, or SIM_EINPUT naming file:line.  page_size before meminfo. */
int rpl_lmkd_snapshot_parse(rpl_lmkd_snapshot *s, const char *file, const char *text,
                            size_t len, sim_error *err);
/* Every file of dir, the properties resolved. */
int rpl_lmkd_snapshot_read(const char *dir, rpl_lmkd_snapshot *s, sim_error *err);
/* lmkd's decision on it: the reset under a second before, woken as the
 * event file says. */
void rpl_lmkd_snapshot_decide(const rpl_lmkd_snapshot *s, mdl_lmkd_decision *d);

/* ---- a device profile from a phone's captures (device.c; `oomsim import
 * device`, docs/devices.md) -------------------------------------------- */

/* The kinds of capture, each recognised by its content. */
enum { RPL_CAPTURE_BUGREPORT = 0, RPL_CAPTURE_BUGREPORT_ZIP, RPL_CAPTURE_JETSAM,
       RPL_CAPTURE_PERFETTO, RPL_CAPTURE_NONE };
int rpl_capture_kind(const char *data, size_t len);
int rpl_capture_kind_of_file(const char *path); /* by its first 8 KiB */
const char *rpl_capture_kind_name(int kind);
/* A capture: its name, and its bytes or (data NULL) its file's path. */
typedef struct rpl_capture { const char *name, *data; size_t len; const char *path; } rpl_capture;

/* The catalog's profile for a phone of this OS and RAM: name and YAML. */
typedef int (*rpl_catalog_fn)(void *ctx, int os, double ram, const char **name,
                              const char **yaml, size_t *len, sim_error *err);
typedef int (*rpl_check_fn)(void *ctx, const char *yaml, const char *name, sim_error *err);
typedef struct rpl_device_opts {
    const char *name;    /* the profile's name (default: from the model) */
    int group_by_model;  /* one profile per phone model, instead of refusing a mix */
    rpl_catalog_fn catalog;
    void *ctx;
    rpl_check_fn check;  /* the loader's (NULL: none); its refusal: SIM_EINPUT */
} rpl_device_opts;

typedef struct rpl_device_yaml { char name[64]; char *yaml; } rpl_device_yaml;

#define RPL_CAPTURES_MAX 256u
/* The n captures as device profiles (one, or one per model with
 * group_by_model), *out of *n_out released with rpl_device_yaml_free;
 * SIM_EINPUT names the file and line of bad input. */
int rpl_device_import(const rpl_capture *in, unsigned n, const rpl_device_opts *o,
                      rpl_device_yaml **out, unsigned *n_out, sim_error *err);
void rpl_device_yaml_free(rpl_device_yaml *v, unsigned n);

#ifdef __cplusplus
}
#endif

#endif /* OOMSIM_REPLAY_H */
