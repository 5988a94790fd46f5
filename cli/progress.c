/* progress.c - the progress of `oomsim run` on stderr: a bar, only when
 * stderr is a terminal and the run has lasted a second (OOMSIM_PROGRESS_AFTER
 * sets that delay in seconds): replications done, their rate and the time
 * left, redrawn when the percentage changes, erased at the end.  In an MPI
 * job rank 0 reports instead, and its stderr is the launcher's pipe, never
 * a terminal: a line at every tenth of the run past that delay. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void cli_progress_start(cli_progress *b, unsigned ranks)
{
    memset(b, 0, sizeof *b);
    b->shown = -1;
    b->t0 = seconds();
    b->after = 1.0;
    b->tty = isatty(STDERR_FILENO);
    b->ranks = ranks;
    const char *after = getenv("OOMSIM_PROGRESS_AFTER");
    if (after != NULL)
        b->after = atof(after);
}

/* In a job: a line at every tenth. */
static void job_line(cli_progress *b, int pct, double dt, uint64_t done, uint64_t total)
{
    if (pct / 10 == b->shown / 10 || dt < b->after || done >= total)
        return;
    b->shown = pct;
    double rate = dt > 0 ? (double)done / dt : 0;
    fprintf(stderr, "oomsim: %3d%%  %llu/%llu replications on %u ranks, %.0f/s, ETA %.0f s\n",
            pct, (unsigned long long)done, (unsigned long long)total, b->ranks, rate,
            rate > 0 ? (double)(total - done) / rate : 0.0);
    fflush(stderr);
}

void cli_progress_show(void *ctx, uint64_t done, uint64_t total)
{
    cli_progress *b = ctx;
    b->done = done;
    int pct = total > 0 ? (int)(done * 100 / total) : 100;
    double dt = seconds() - b->t0;
    if (b->ranks > 1) {
        job_line(b, pct, dt, done, total);
        return;
    }
    if (!b->tty)
        return;
    if (pct == b->shown || (b->shown < 0 && dt < b->after && done < total))
        return;
    if (done >= total) {
        if (b->shown >= 0)
            fputs("\r\033[K", stderr);
        b->shown = pct;
    } else {
        b->shown = pct;
        char cells[41];
        int fill = pct * 40 / 100;
        memset(cells, '#', (size_t)fill);
        memset(cells + fill, '.', (size_t)(40 - fill));
        cells[40] = '\0';
        double rate = dt > 0 ? (double)done / dt : 0;
        fprintf(stderr, "\r[%s] %3d%%  %llu/%llu replications, %.0f/s, ETA %.0f s\033[K",
                cells, pct, (unsigned long long)done, (unsigned long long)total, rate,
                rate > 0 ? (double)(total - done) / rate : 0.0);
    }
    fflush(stderr);
}

void cli_progress_erase(const cli_progress *b)
{
    if (b->tty && b->ranks == 1 && b->shown >= 0 && b->shown < 100)
        fputs("\r\033[K", stderr);
}
