/* timeline_int.h - the timeline's data (timeline.c collects it from the
 * world's trace events; plot.c draws it): a fixed number of time columns
 * of memory by category, the stage bands and the marks (deaths, warnings,
 * kills of cached apps, pressure, recovery). */
#ifndef OOMSIM_RESULTS_TIMELINE_INT_H
#define OOMSIM_RESULTS_TIMELINE_INT_H

#include "results.h"
#include "internal.h"

#define TL_OPEN 64

typedef enum mark_kind { MARK_DEATH = 0, MARK_WARNING, MARK_CACHED_KILL, MARK_PRESSURE,
                         MARK_RECOVERY, MARK_KINDS } mark_kind;

/* A band that is no stage: the app in the background. */
#define BAND_BACKGROUND TRC_STAGE_COUNT

typedef struct tl_band {
    sim_time t0, t1;
    int stage; /* a trc_stage, or BAND_BACKGROUND */
} tl_band;

typedef struct tl_mark {
    sim_time t;
    mark_kind kind;
    int64_t counted; /* a death: the counted memory the kill saw */
} tl_mark;

typedef struct tl_open {
    int stage;
    char part[TRC_TEXT_MAX];
    sim_time t0;
} tl_open;

struct res_timeline {
    mdl_device dev;          /* a copy: the device as the cell's policy puts it in force */
    int64_t line[2];         /* the kill lines drawn: background, foreground (res_timeline_lines) */
    sim_time horizon;
    unsigned counted;                          /* 1 << TRC_MEM_* the device counts */
    int64_t col[RES_TIMELINE_COLUMNS][TRC_MEM_COUNT];
    int64_t col_key[RES_TIMELINE_COLUMNS];     /* counted total of col[i] */
    unsigned filled;                           /* columns holding a state */
    int64_t state[TRC_MEM_COUNT];              /* memory now */
    res__memfollow follow;
    tl_band band[RES_TIMELINE_BANDS];
    unsigned nband;
    tl_open open[TL_OPEN];
    unsigned nopen;
    tl_mark mark[RES_TIMELINE_MARKS];
    unsigned nmark;
    /* the KV caches held (the world's kv notes), the highest per column */
    int64_t kv[RES_TIMELINE_COLUMNS];
    int64_t kv_state;
    unsigned kv_filled;
    res_timeline_info info;
};

#endif /* OOMSIM_RESULTS_TIMELINE_INT_H */
