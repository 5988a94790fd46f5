/* exits_int.h - what the readers of exit records in replay/ share: the
 * small text helpers of diagnose.c and the Android kill lines of
 * killlines.c (lmkd's, the kernel OOM killer's), read and joined to the
 * exit records of the same deaths. */
#ifndef OOMSIM_EXITS_INT_H
#define OOMSIM_EXITS_INT_H

#include "replay.h"

/* diagnose.c */
int rpl__parse_int(const char *s, size_t n, int64_t *out);
void rpl__copy_text(char *dst, const char *s, size_t n);
const char *rpl__find(const char *s, size_t n, const char *what);
int64_t rpl__days_from_civil(int64_t y, unsigned m, unsigned d);

/* How far apart two times are once a time zone is taken out: a gap of up
 * to 14 h less the nearest whole number of quarter hours (a record printed
 * in the phone's zone beside a UTC clock); a longer gap as it is. */
int64_t rpl__zone_gap(int64_t a, int64_t b);

/* killlines.c: a kill line of lmkd ("Kill '...'", "Killing '...'") or of
 * the kernel's OOM killer ("Killed process PID (NAME)"), with the time of
 * its log prefix: 1 and *x, or 0 when the line is neither. */
int rpl__read_kill_line(const char *s, size_t n, uint64_t line, rpl_exit *x);

#endif
