/* out.c - files written whole or not at all (sim.h "output files").
 *
 * A file is written to a temporary name beside its path (".NAME.tmp.PID",
 * in the same directory, so the rename stays on one file system), through
 * write(2) in 64 KiB pieces, then fsync(2) and close(2): only a temporary
 * that reached the disk whole is ever renamed over the path.  A set of
 * files is committed together: each path that exists is first linked to a
 * backup name (".NAME.old.PID"), so that when a later rename of the set
 * fails, the paths already replaced get their old files back.  Every
 * system call the output makes is one of write, fsync, close, rename,
 * link, unlink and open: the I/O failure sweep (tests/io) fails them in
 * turn. */
#define _GNU_SOURCE /* fopencookie */
#include "sim.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OUT_BUFFER ((size_t)1 << 16)

struct sim_out {
    char path[PATH_MAX], tmp[PATH_MAX + 32], old[PATH_MAX + 32];
    int fd;          /* -1 once closed */
    int failed;      /* a write, fsync or close failed: err says which */
    int committed;   /* renamed over path: nothing to remove */
    int backed_up;   /* `old` links the file that was at path */
    int unsaved;     /* a file was at path and could not be linked */
    sim_error err;   /* the first failure */
    FILE *stream;    /* sim_out_stream's, or NULL */
    size_t used;
    unsigned char *buf;
};

/* "dir/.name.SUFFIX.PID" for path "dir/name"; 0 when it does not fit. */
static int beside(const char *path, const char *suffix, char *out, size_t size)
{
    const char *slash = strrchr(path, '/');
    int dir = slash != NULL ? (int)(slash - path + 1) : 0;
    return (size_t)snprintf(out, size, "%.*s.%s.%s.%ld", dir, path, path + dir, suffix,
                            (long)getpid()) < size;
}

static int fail(sim_out *o, int code, int errnum, sim_error *err)
{
    if (!o->failed) {
        o->failed = 1;
        if (code == SIM_ENOMEM)
            sim_error_set(&o->err, code, "cannot write %s: out of memory", o->path);
        else
            sim_error_set(&o->err, code, "cannot write %s: %s", o->path, strerror(errnum));
    }
    if (err != NULL)
        *err = o->err;
    return o->err.code;
}

int sim_out_open(const char *path, sim_out **out, sim_error *err)
{
    *out = NULL;
    size_t n = strlen(path);
    if (n == 0 || path[n - 1] == '/' || n >= PATH_MAX)
        return sim_error_set(err, SIM_EIO, "cannot write %s: not a file name", path);
    sim_out *o = calloc(1, sizeof *o);
    if (o == NULL)
        return sim_error_set(err, SIM_ENOMEM, "cannot write %s: out of memory", path);
    memcpy(o->path, path, n + 1);
    o->fd = -1;
    if (!beside(path, "tmp", o->tmp, sizeof o->tmp) ||
        !beside(path, "old", o->old, sizeof o->old)) {
        free(o);
        return sim_error_set(err, SIM_EIO, "cannot write %s: the name is too long", path);
    }
    if ((o->buf = malloc(OUT_BUFFER)) == NULL) {
        free(o);
        return sim_error_set(err, SIM_ENOMEM, "cannot write %s: out of memory", path);
    }
    o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (o->fd < 0) {
        int e = errno;
        free(o->buf);
        free(o);
        return sim_error_set(err, SIM_EIO, "cannot write %s: %s", path, strerror(e));
    }
    *out = o;
    return SIM_OK;
}

/* Writes all n bytes at p to the temporary (write may take fewer). */
static int put(sim_out *o, const unsigned char *p, size_t n, sim_error *err)
{
    while (n > 0) {
        ssize_t w = write(o->fd, p, n < ((size_t)1 << 30) ? n : ((size_t)1 << 30));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return fail(o, SIM_EIO, w < 0 ? errno : EIO, err);
        p += w;
        n -= (size_t)w;
    }
    return SIM_OK;
}

int sim_out_write(sim_out *o, const void *p, size_t n, sim_error *err)
{
    if (o->failed || o->fd < 0)
        return fail(o, SIM_EIO, EBADF, err);
    if (n > OUT_BUFFER - o->used) {
        int rc = put(o, o->buf, o->used, err);
        o->used = 0;
        if (rc != SIM_OK)
            return rc;
        if (n >= OUT_BUFFER) /* a large piece goes straight out */
            return put(o, p, n, err);
    }
    memcpy(o->buf + o->used, p, n);
    o->used += n;
    return SIM_OK;
}

static ssize_t cookie_write(void *cookie, const char *p, size_t n)
{
    sim_out *o = cookie;
    if (sim_out_write(o, p, n, NULL) != SIM_OK) {
        errno = EIO;
        return -1;
    }
    return (ssize_t)n;
}

FILE *sim_out_stream(sim_out *o)
{
    if (o->stream == NULL) {
        cookie_io_functions_t io = {NULL, cookie_write, NULL, NULL};
        o->stream = fopencookie(o, "w", io);
    }
    return o->stream;
}

int sim_out_close(sim_out *o, sim_error *err)
{
    if (o->stream != NULL) {
        /* what the stream holds goes into the buffer; a stream that
         * could not take a buffer of its own wrote unbuffered */
        int flushed = fflush(o->stream) == 0 && !ferror(o->stream);
        fclose(o->stream);
        o->stream = NULL;
        if (!flushed && !o->failed)
            fail(o, SIM_EIO, EIO, NULL);
    }
    if (o->fd < 0)
        return fail(o, SIM_EIO, EBADF, err);
    int rc = o->failed ? o->err.code : put(o, o->buf, o->used, NULL);
    o->used = 0;
    if (rc == SIM_OK && fsync(o->fd) != 0)
        rc = fail(o, SIM_EIO, errno, NULL);
    /* Linux releases the descriptor even when close reports an error */
    if (close(o->fd) != 0 && rc == SIM_OK)
        rc = fail(o, SIM_EIO, errno, NULL);
    o->fd = -1;
    if (rc != SIM_OK && err != NULL)
        *err = o->err;
    return rc;
}

/* Puts back what commit replaced in files[0 .. n): the old file where
 * there was one, nothing where there was none.  Returns how many could
 * not be put back. */
static unsigned roll_back(sim_out *const *files, unsigned n)
{
    unsigned lost = 0;
    for (unsigned k = 0; k < n; k++) {
        sim_out *o = files[k];
        if (o->unsaved || (o->backed_up ? rename(o->old, o->path) != 0 : unlink(o->path) != 0))
            lost++;
        else
            o->backed_up = 0;
        o->committed = 0;
    }
    return lost;
}

int sim_out_commit(sim_out *const *files, unsigned n, sim_error *err)
{
    for (unsigned k = 0; k < n; k++)
        if (files[k]->failed || files[k]->fd >= 0)
            return files[k]->failed ? (*err = files[k]->err, err->code)
                                    : sim_error_set(err, SIM_ESTATE, "%s: not closed",
                                                    files[k]->path);
    /* the old files of a set, kept until every new one is in place (one
     * file needs none: its rename replaces it or does not) */
    for (unsigned k = 0; n > 1 && k < n; k++) {
        sim_out *o = files[k];
        if (link(o->path, o->old) == 0)
            o->backed_up = 1;
        else if (errno == EEXIST && unlink(o->old) == 0 && link(o->path, o->old) == 0)
            o->backed_up = 1;
        else
            o->unsaved = errno != ENOENT; /* a file system without hard links */
    }
    int rc = SIM_OK;
    unsigned done = 0;
    for (; done < n; done++) {
        sim_out *o = files[done];
        if (rename(o->tmp, o->path) != 0) {
            int e = errno;
            unsigned lost = roll_back(files, done);
            if (lost > 0)
                rc = sim_error_set(err, SIM_EIO, "cannot write %s: %s (%u of the files "
                                   "written before it could not be put back)", o->path,
                                   strerror(e), lost);
            else
                rc = sim_error_set(err, SIM_EIO, "cannot write %s: %s", o->path, strerror(e));
            break;
        }
        o->committed = 1;
    }
    for (unsigned k = 0; k < n; k++)
        if (files[k]->backed_up && unlink(files[k]->old) == 0)
            files[k]->backed_up = 0;
    return rc;
}

void sim_out_free(sim_out *o)
{
    if (o == NULL)
        return;
    if (o->stream != NULL)
        fclose(o->stream);
    if (o->fd >= 0)
        close(o->fd);
    if (!o->committed)
        unlink(o->tmp);
    free(o->buf);
    free(o);
}

int sim_out_file(const char *path, const void *p, size_t n, sim_error *err)
{
    sim_out *o;
    int rc = sim_out_open(path, &o, err);
    if (rc != SIM_OK)
        return rc;
    rc = sim_out_write(o, p, n, err);
    if (rc == SIM_OK)
        rc = sim_out_close(o, err);
    if (rc == SIM_OK)
        rc = sim_out_commit(&o, 1, err);
    sim_out_free(o);
    return rc;
}
