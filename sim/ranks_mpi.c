/* ranks_mpi.c - the MPI side of sim.h's ranks, built as a module
 * (oomsim-mpi.so beside the oomsim binary) that sim/ranks.c opens only
 * when an MPI launcher started the process: a run without MPI never loads
 * Open MPI and its libraries (docs/performance.md, "Start-up").
 *
 * The calls are thin wrappers over the MPI collectives on MPI_COMM_WORLD,
 * with MPI_ERRORS_RETURN so that an MPI failure comes back as a sim_error
 * instead of an abort.  Every call is made from the main thread only
 * (MPI_THREAD_FUNNELED): sim_replicate's workers never touch MPI.  The
 * module carries its own copy of sim/error.c (it links no other part of
 * oomsim) and exports one table, oomsim_mpi_ops. */
#include "sim.h"
#include "ranks_mpi.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

static unsigned my_rank, job_size = 1;
static int started;

static void mpi_stop(void);

static char library[MPI_MAX_LIBRARY_VERSION_STRING];

/* "rank R: msg" into err, keeping its code (a message from another rank,
 * or this rank's own when the job has several). */
static void name_rank(sim_error *err, int code, unsigned rank, const char *msg)
{
    char copy[SIM_ERROR_MSG_MAX];
    snprintf(copy, sizeof copy, "%s", msg[0] != '\0' ? msg : sim_strerror(code));
    sim_error_set(err, code, "rank %u: %s", rank, copy);
}

static const char *mpi_library(void)
{
    if (library[0] == '\0') {
        int len = 0;
        if (MPI_Get_library_version(library, &len) != MPI_SUCCESS)
            snprintf(library, sizeof library, "MPI");
        library[strcspn(library, ",\n")] = '\0'; /* "Open MPI v4.1.4" */
    }
    return library;
}

static int mpi_fail(sim_error *err, const char *call, int code)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(code, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error %d", code);
    return sim_error_set(err, SIM_EIO, "rank %u: %s: %s", my_rank, call, text);
}

/* What a rank says of itself when the ranks agree. */
typedef struct said {
    int32_t code;
    char msg[SIM_ERROR_MSG_MAX];
} said;

/* Allocated once when joining, so that no collective can fail to take
 * part for want of memory (the other ranks would wait for it). */
static said *heard;           /* one per rank */
static int *counts, *displs;  /* one per rank each */

static int mpi_start(int *argc, char ***argv, unsigned *rank, unsigned *size,
                     unsigned *local_out, sim_error *err)
{
    if (started)
        return SIM_OK;
    int provided = 0;
    int rc = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    if (rc != MPI_SUCCESS)
        return sim_error_set(err, SIM_EIO, "MPI_Init_thread failed (error %d): is this an "
                             "MPI launch?", rc);
    started = 1;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (provided < MPI_THREAD_FUNNELED) {
        mpi_stop();
        return sim_error_set(err, SIM_EIO, "the MPI library gives no thread support "
                             "(MPI_THREAD_FUNNELED is needed: replications run on threads)");
    }
    int r = 0, n = 1, local = 1;
    MPI_Comm node;
    if ((rc = MPI_Comm_rank(MPI_COMM_WORLD, &r)) != MPI_SUCCESS ||
        (rc = MPI_Comm_size(MPI_COMM_WORLD, &n)) != MPI_SUCCESS)
        return mpi_fail(err, "MPI_Comm_rank", rc);
    my_rank = (unsigned)r;
    job_size = (unsigned)n;
    heard = malloc(sizeof *heard * job_size);
    counts = malloc(sizeof *counts * job_size);
    displs = malloc(sizeof *displs * job_size);
    if (heard == NULL || counts == NULL || displs == NULL)
        return sim_error_set(err, SIM_ENOMEM, "rank %u: out of memory joining a job of %u "
                             "ranks", my_rank, job_size);
    /* the ranks sharing this machine's memory, to divide its cores */
    if ((rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, r, MPI_INFO_NULL,
                                  &node)) != MPI_SUCCESS)
        return mpi_fail(err, "MPI_Comm_split_type", rc);
    MPI_Comm_size(node, &local);
    MPI_Comm_free(&node);
    *rank = my_rank;
    *size = job_size;
    *local_out = local > 0 ? (unsigned)local : 1;
    return SIM_OK;
}

static void mpi_stop(void)
{
    if (!started)
        return;
    started = 0;
    MPI_Finalize();
    free(heard);
    free(counts);
    free(displs);
    heard = NULL;
    counts = displs = NULL;
    my_rank = 0;
    job_size = 1;
}

static int mpi_gather(const void *mine, size_t len, void *into, const size_t *lens,
                      sim_error *err)
{
    if (into != mine && len > 0 && (my_rank == 0 || job_size == 1))
        memmove(into, mine, len);
    if (job_size == 1)
        return SIM_OK;
    if (len > INT_MAX)
        return sim_error_set(err, SIM_ELIMIT, "rank %u: %zu bytes to gather (over %d)", my_rank,
                             len, INT_MAX);
    int rc;
    if (my_rank != 0) {
        rc = MPI_Gatherv(mine, (int)len, MPI_BYTE, NULL, NULL, NULL, MPI_BYTE, 0,
                         MPI_COMM_WORLD);
    } else {
        size_t at = 0;
        for (unsigned r = 0; r < job_size; r++) {
            if (lens[r] > INT_MAX || at > INT_MAX - lens[r])
                return sim_error_set(err, SIM_ELIMIT, "rank 0: more than %d bytes to gather",
                                     INT_MAX);
            counts[r] = (int)lens[r];
            displs[r] = (int)at;
            at += lens[r];
        }
        /* rank 0's own bytes are in place, at the start */
        rc = MPI_Gatherv(MPI_IN_PLACE, 0, MPI_BYTE, into, counts, displs, MPI_BYTE, 0,
                         MPI_COMM_WORLD);
    }
    return rc == MPI_SUCCESS ? SIM_OK : mpi_fail(err, "MPI_Gatherv", rc);
}

static int mpi_sum(uint64_t *v, size_t n, sim_error *err)
{
    if (job_size == 1 || n == 0)
        return SIM_OK;
    if (n > INT_MAX)
        return sim_error_set(err, SIM_ELIMIT, "rank %u: %zu values to sum", my_rank, n);
    int rc = my_rank == 0
                 ? MPI_Reduce(MPI_IN_PLACE, v, (int)n, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD)
                 : MPI_Reduce(v, NULL, (int)n, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? SIM_OK : mpi_fail(err, "MPI_Reduce", rc);
}

static int mpi_agree(int code, sim_error *err)
{
    if (job_size == 1)
        return code;
    /* the common case, nobody failed, costs one small reduction */
    int failed = code != SIM_OK, any = 0;
    int rc = MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS)
        return mpi_fail(err, "MPI_Allreduce", rc);
    if (!any)
        return SIM_OK;
    said mine;
    memset(&mine, 0, sizeof mine);
    mine.code = code;
    if (code != SIM_OK)
        snprintf(mine.msg, sizeof mine.msg, "%s", err->msg);
    rc = MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, heard, (int)sizeof mine, MPI_BYTE,
                       MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS)
        return mpi_fail(err, "MPI_Allgather", rc);
    unsigned r = 0;
    while (r < job_size && heard[r].code == SIM_OK)
        r++;
    if (r == job_size)
        return sim_error_set(err, SIM_EINTERNAL, "rank %u: the ranks disagree on a failure",
                             my_rank);
    name_rank(err, heard[r].code, r, heard[r].msg);
    return heard[r].code;
}

static int mpi_same(uint64_t v, const char *what, sim_error *err)
{
    if (job_size == 1)
        return SIM_OK;
    /* heard[] has room for a uint64_t per rank */
    uint64_t *all = (uint64_t *)(void *)heard;
    int rc = MPI_Allgather(&v, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS)
        return mpi_fail(err, "MPI_Allgather", rc);
    unsigned r = 1;
    while (r < job_size && all[r] == all[0])
        r++;
    if (r == job_size)
        return SIM_OK;
    return sim_error_set(err, SIM_EINPUT, "rank %u: %s differs from rank 0's", r, what);
}
static int mpi_max(uint64_t *v, size_t n, sim_error *err)
{
    if (job_size == 1 || n == 0)
        return SIM_OK;
    if (n > INT_MAX)
        return sim_error_set(err, SIM_ELIMIT, "rank %u: %zu values to compare", my_rank, n);
    int rc = MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? SIM_OK : mpi_fail(err, "MPI_Allreduce", rc);
}

const sim_ranks_mpi_ops oomsim_mpi_ops = {SIM_RANKS_MPI_ABI, mpi_start, mpi_stop, mpi_library,
                                          mpi_gather, mpi_sum, mpi_agree, mpi_same,
                                          mpi_max};
