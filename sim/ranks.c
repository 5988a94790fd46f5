/* ranks.c - the processes of an MPI job (sim.h "ranks").
 *
 * Built with MPI (OOMSIM_HAVE_MPI), sim_ranks_start() opens the MPI
 * module (sim/ranks_mpi.c, oomsim-mpi.so beside the binary) and every call
 * goes through its table: Open MPI and its libraries are loaded only by a
 * process an MPI launcher started.  Without MPI, without the module, or
 * before sim_ranks_start(), the process is rank 0 of a job of one and
 * each call copies or does nothing. */
#include "sim.h"
#include "ranks_mpi.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef OOMSIM_HAVE_MPI
#include <dlfcn.h>
#include <unistd.h>
#endif

static unsigned my_rank, job_size = 1, local_size = 1;
static int started;

uint64_t sim_digest(uint64_t h, const void *p, size_t n)
{
    if (h == 0)
        h = UINT64_C(14695981039346656037);
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * UINT64_C(1099511628211);
    return h;
}

int sim_ranks_launched(void)
{
    const char *force = getenv("OOMSIM_MPI");
    if (force != NULL && strcmp(force, "0") == 0)
        return 0;
    if (force != NULL && strcmp(force, "1") == 0)
        return 1;
    /* Open MPI's mpirun, a PMIx launcher (srun --mpi=pmix), a PMI one
     * (MPICH's Hydra, srun --mpi=pmi2) */
    return getenv("OMPI_COMM_WORLD_SIZE") != NULL || getenv("PMIX_RANK") != NULL ||
           getenv("PMI_RANK") != NULL || getenv("PMI_SIZE") != NULL;
}

unsigned sim_ranks_rank(void)
{
    return my_rank;
}

unsigned sim_ranks_size(void)
{
    return job_size;
}

unsigned sim_ranks_local(void)
{
    return local_size;
}

/* A positive count from the environment, 0 when absent or not a count. */
static unsigned long env_count(const char *name)
{
    const char *v = getenv(name);
    if (v == NULL || *v < '0' || *v > '9')
        return 0;
    char *end;
    unsigned long n = strtoul(v, &end, 10);
    return *end == '\0' ? n : 0;
}

/* N copies that cannot join one job would each run the whole plan. */
static int refuse_copies(const char *why, const char *fix, sim_error *err)
{
    unsigned long n = env_count("OMPI_COMM_WORLD_SIZE");
    if (n == 0)
        n = env_count("PMI_SIZE");
    if (n > 1)
        return sim_error_set(err, SIM_ESTATE, "%s, so %lu copies started by an MPI launcher "
                             "would each run everything; %s (docs/scale-out.md)", why, n, fix);
    started = 1;
    return SIM_OK;
}

#ifdef OOMSIM_HAVE_MPI

static const sim_ranks_mpi_ops *ops; /* the module's table, once opened */
static char module_why[SIM_ERROR_MSG_MAX];

/* Opens oomsim-mpi.so from the binary's own directory, else (installed)
 * from the prefix's LIBDIR/oomsim (OOMSIM_MPI_MODULE names another file);
 * NULL with module_why set when it cannot. */
#ifndef OOMSIM_MPI_LIBDIR
#define OOMSIM_MPI_LIBDIR "lib"
#endif
static const sim_ranks_mpi_ops *open_module(void)
{
    if (ops != NULL)
        return ops;
    char path[4096];
    const char *given = getenv("OOMSIM_MPI_MODULE");
    if (given != NULL && given[0] != '\0') {
        snprintf(path, sizeof path, "%s", given);
    } else {
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 32);
        if (n <= 0) {
            snprintf(module_why, sizeof module_why, "cannot find the oomsim binary");
            return NULL;
        }
        path[n] = '\0';
        char *slash = strrchr(path, '/');
        snprintf(slash != NULL ? slash + 1 : path, 32, "oomsim-mpi.so");
        /* installed: the prefix's LIBDIR/oomsim, the prefix being the
         * binary's directory's parent; LIBDIR as it is when it was given
         * absolute (-DCMAKE_INSTALL_LIBDIR=/usr/lib/...) */
        if (access(path, R_OK) != 0 && OOMSIM_MPI_LIBDIR[0] == '/') {
            snprintf(path, sizeof path, "%s/oomsim/oomsim-mpi.so", OOMSIM_MPI_LIBDIR);
        } else if (access(path, R_OK) != 0 && slash != NULL) {
            *slash = '\0';
            char *up = strrchr(path, '/');
            size_t at = up != NULL ? (size_t)(up - path) + 1 : 0;
            snprintf(path + at, sizeof path - at, "%s/oomsim/oomsim-mpi.so", OOMSIM_MPI_LIBDIR);
        }
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        snprintf(module_why, sizeof module_why, "%s", dlerror());
        return NULL;
    }
    const sim_ranks_mpi_ops *t = dlsym(h, "oomsim_mpi_ops");
    if (t == NULL || t->abi != SIM_RANKS_MPI_ABI) {
        snprintf(module_why, sizeof module_why, "%.300s is not this build's MPI module", path);
        dlclose(h);
        return NULL;
    }
    ops = t; /* stays open for the process's life */
    return ops;
}

const char *sim_ranks_library(void)
{
    const sim_ranks_mpi_ops *t = open_module();
    return t != NULL ? t->library() : NULL;
}

int sim_ranks_start(int *argc, char ***argv, sim_error *err)
{
    if (started)
        return SIM_OK;
    if (open_module() == NULL) {
        char why[SIM_ERROR_MSG_MAX + 64];
        snprintf(why, sizeof why, "the MPI module cannot be opened (%s)", module_why);
        return refuse_copies(why, "build the module beside the binary", err);
    }
    unsigned r = 0, n = 1, local = 1;
    int rc = ops->start(argc, argv, &r, &n, &local, err);
    started = 1; /* whatever happened, stop finalizes what started */
    if (rc != SIM_OK)
        return rc;
    my_rank = r;
    job_size = n;
    local_size = local;
    return SIM_OK;
}

void sim_ranks_stop(void)
{
    if (!started)
        return;
    started = 0;
    if (ops != NULL)
        ops->stop();
    my_rank = 0;
    job_size = local_size = 1;
}

/* Past here a job of one needs no module. */
#define JOINED (ops != NULL && job_size > 1)

#else /* no MPI: a job of one */

const char *sim_ranks_library(void)
{
    return NULL;
}

int sim_ranks_start(int *argc, char ***argv, sim_error *err)
{
    (void)argc;
    (void)argv;
    return refuse_copies("this oomsim was built without MPI", "build it with Open MPI installed",
                         err);
}

void sim_ranks_stop(void)
{
    started = 0;
}

#define JOINED 0

#endif

int sim_ranks_gather(const void *mine, size_t len, void *into, const size_t *lens,
                     sim_error *err)
{
#ifdef OOMSIM_HAVE_MPI
    if (JOINED)
        return ops->gather(mine, len, into, lens, err);
#endif
    (void)lens;
    (void)err;
    if (into != mine && len > 0)
        memmove(into, mine, len);
    return SIM_OK;
}

int sim_ranks_sum(uint64_t *v, size_t n, sim_error *err)
{
#ifdef OOMSIM_HAVE_MPI
    if (JOINED)
        return ops->sum(v, n, err);
#endif
    (void)v;
    (void)n;
    (void)err;
    return SIM_OK;
}

int sim_ranks_max(uint64_t *v, size_t n, sim_error *err)
{
#ifdef OOMSIM_HAVE_MPI
    if (JOINED)
        return ops->max(v, n, err);
#endif
    (void)v;
    (void)n;
    (void)err;
    return SIM_OK;
}

int sim_ranks_agree(int code, sim_error *err)
{
#ifdef OOMSIM_HAVE_MPI
    if (JOINED)
        return ops->agree(code, err);
#endif
    (void)err;
    return code;
}

int sim_ranks_same(uint64_t v, const char *what, sim_error *err)
{
#ifdef OOMSIM_HAVE_MPI
    if (JOINED)
        return ops->same(v, what, err);
#endif
    (void)v;
    (void)what;
    (void)err;
    return SIM_OK;
}
