/* interrupt.c - SIGINT and SIGTERM (and SIGUSR1 with a checkpoint) during
 * a command that runs plans (`run`, `replay`, `calibrate`): a flag the
 * runs stop at, and the exit status that says which signal came. */
#include "cli.h"

#include <signal.h>
#include <string.h>

/* SIGINT or SIGTERM during a run: the flag stops the replications
 * (res_plan.stop) and the writing of files; a second signal ends the
 * process at once.  A signal ignored when oomsim started (nohup, a
 * background job) stays ignored.  SIGTERM is what an MPI launcher sends
 * its ranks when it aborts a job.  With --checkpoint the flag asks for a
 * checkpoint at the end of the round in flight instead (res_checkpoint),
 * and SIGUSR1, a batch system's warning before its time limit, does too. */
static volatile sig_atomic_t interrupted; /* the signal that came, 0: none */

volatile sig_atomic_t *cli_interrupt_flag(void)
{
    return &interrupted;
}

static void on_interrupt(int sig)
{
    interrupted = sig;
}

/* An interrupted run exits 128 + the signal: 130 for SIGINT, 143 for
 * SIGTERM, 138 for SIGUSR1, as a shell reports a process the signal
 * ended. */
int cli_interrupted_status(int status)
{
    return status == CLI_INTERRUPTED && interrupted > 0 ? 128 + interrupted : status;
}

void cli_interrupt_catch(int with_usr1)
{
    const int sigs[] = {SIGINT, SIGTERM, SIGUSR1};
    for (size_t i = 0; i < (with_usr1 ? 3u : 2u); i++) {
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_interrupt;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = (int)SA_RESETHAND;
        sigaction(sigs[i], &sa, NULL);
    }
}

const char *cli_signal_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGUSR1 ? "SIGUSR1"
                                                                                   : "a signal";
}
