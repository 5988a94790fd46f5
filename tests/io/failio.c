/* failio.c - see failio.h. */
#define _GNU_SOURCE
#include "failio.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h> /* rename */
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef int (*fd_fn)(int);
typedef int (*rename_fn)(const char *, const char *);
typedef int (*mkdir_fn)(const char *, mode_t);

static write_fn next_write;
static fd_fn next_close;
static rename_fn next_rename;
static mkdir_fn next_mkdir;

static atomic_int armed;
static atomic_uint_fast64_t calls;
static uint64_t fail_at;
static int fail_errno;
static atomic_int failed;
static const char *_Atomic failed_which;

/* The C library's calls (resolved at the first call: a library's
 * constructor may write before this file's would run). */
static void failio_init(void)
{
    if (next_mkdir != NULL)
        return;
    *(void **)&next_write = dlsym(RTLD_NEXT, "write");
    *(void **)&next_close = dlsym(RTLD_NEXT, "close");
    *(void **)&next_rename = dlsym(RTLD_NEXT, "rename");
    *(void **)&next_mkdir = dlsym(RTLD_NEXT, "mkdir");
    if (!next_write || !next_close || !next_rename || !next_mkdir)
        abort();
}

__attribute__((constructor)) static void failio_start(void)
{
    failio_init();
}

/* 1 when this call is the one to fail (errno is then set). */
static int fails(const char *which)
{
    failio_init();
    if (!atomic_load(&armed))
        return 0;
    uint64_t n = atomic_fetch_add(&calls, 1) + 1;
    if (fail_at == 0 || n != fail_at)
        return 0;
    atomic_store(&failed, 1);
    atomic_store(&failed_which, which);
    errno = fail_errno;
    return 1;
}

ssize_t write(int fd, const void *p, size_t n)
{
    return fails("write") ? -1 : next_write(fd, p, n);
}

/* Counted and failable like the others, but it does not wait for the
 * disk: nothing in this test program needs its files to outlive a power
 * cut, and the sweeps write thousands of them. */
int fsync(int fd)
{
    if (fails("fsync"))
        return -1;
    (void)fd;
    return 0;
}

int close(int fd)
{
    if (fails("close")) {
        int e = errno;
        next_close(fd);
        errno = e;
        return -1;
    }
    return next_close(fd);
}

int rename(const char *from, const char *to)
{
    return fails("rename") ? -1 : next_rename(from, to);
}

int mkdir(const char *path, mode_t mode)
{
    return fails("mkdir") ? -1 : next_mkdir(path, mode);
}

void failio_arm(uint64_t at, int errnum)
{
    atomic_store(&calls, 0);
    atomic_store(&failed, 0);
    atomic_store(&failed_which, "");
    fail_at = at;
    fail_errno = errnum;
    atomic_store(&armed, 1);
}

void failio_disarm(failio_report *r)
{
    atomic_store(&armed, 0);
    r->calls = atomic_load(&calls);
    r->failed = atomic_load(&failed);
    r->which = atomic_load(&failed_which);
}
