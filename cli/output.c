/* output.c - what a command prints and the files it writes: exit
 * statuses, error messages, stdout, and sets of files written whole or
 * not at all. */
#define _XOPEN_SOURCE 700
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cli_status(int code)
{
    switch (code) {
    case SIM_OK:
        return CLI_OK;
    case SIM_EINPUT:
    case SIM_ERANGE:
    case SIM_ELIMIT:
    case SIM_ENOTFOUND:
    case SIM_EINVAL:
        return CLI_INPUT;
    case SIM_EINTR:
        return CLI_INTERRUPTED;
    default:
        return CLI_FAILURE;
    }
}

int cli_report(const sim_error *err)
{
    const char *msg = err->msg[0] != '\0' ? err->msg : sim_strerror(err->code);
    fprintf(stderr, "%s\n", msg);
    return cli_status(err->code);
}

int cli_check_dir(const char *dir, sim_error *err)
{
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return sim_error_set(err, SIM_EIO, "oomsim: -o %s: not a directory", dir);
        if (access(dir, W_OK | X_OK) != 0)
            return sim_error_set(err, SIM_EIO, "oomsim: -o %s: cannot write into it: %s", dir,
                                 strerror(errno));
        return SIM_OK;
    }
    if (errno != ENOENT && errno != ENOTDIR)
        return sim_error_set(err, SIM_EIO, "oomsim: -o %s: %s", dir, strerror(errno));
    /* missing: its parent must take a new directory */
    char parent[PATH_MAX];
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    while (n > 0 && dir[n - 1] != '/')
        n--;
    while (n > 1 && dir[n - 1] == '/')
        n--;
    if (n >= sizeof parent)
        return sim_error_set(err, SIM_EIO, "oomsim: -o: the path is too long");
    if (n == 0)
        snprintf(parent, sizeof parent, ".");
    else
        snprintf(parent, sizeof parent, "%.*s", (int)n, dir);
    if (stat(parent, &st) != 0 || !S_ISDIR(st.st_mode))
        return sim_error_set(err, SIM_EIO, "oomsim: -o %s: cannot create it: %s is not a directory",
                             dir, parent);
    if (access(parent, W_OK | X_OK) != 0)
        return sim_error_set(err, SIM_EIO, "oomsim: -o %s: cannot create it in %s: %s", dir, parent,
                             strerror(errno));
    return SIM_OK;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "oomsim %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nsee oomsim %s --help\n", cmd);
    va_end(ap);
    return CLI_USAGE;
}

int cli_write_stdout(const char *text, size_t len)
{
    if (fwrite(text, 1, len, stdout) != len || fputc('\n', stdout) == EOF ||
        fflush(stdout) != 0) {
        fprintf(stderr, "oomsim: cannot write the output\n");
        return CLI_FAILURE;
    }
    return CLI_OK;
}

/* dir/name and its temporary name while a set of files is written; 0
 * when either does not fit. */
typedef struct paths {
    char path[4096], tmp[4200];
} paths;

static int paths_of(const char *dir, const char *name, paths *p)
{
    return (size_t)snprintf(p->path, sizeof p->path, "%s/%s", dir, name) < sizeof p->path &&
           (size_t)snprintf(p->tmp, sizeof p->tmp, "%s/.%s.tmp.%ld", dir, name,
                            (long)getpid()) < sizeof p->tmp;
}

static int write_temp(const char *tmp, const char *path, const cli_file *file)
{
    FILE *f = fopen(tmp, "wb");
    if (f == NULL) {
        fprintf(stderr, "oomsim: cannot write %s: %s\n", path, strerror(errno));
        return CLI_FAILURE;
    }
    int ok = fwrite(file->text, 1, file->len, f) == file->len && fputc('\n', f) != EOF &&
             fflush(f) == 0 && fsync(fileno(f)) == 0;
    int saved = errno;
    ok = fclose(f) == 0 && ok;
    if (!ok) {
        fprintf(stderr, "oomsim: cannot write %s: %s\n", path, strerror(saved != 0 ? saved : errno));
        unlink(tmp);
        return CLI_FAILURE;
    }
    return CLI_OK;
}

int cli_write_file(const char *path, const char *text, size_t len)
{
    char tmp[4200];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= sizeof tmp) {
        fprintf(stderr, "oomsim: cannot write %s: the name is too long\n", path);
        return CLI_FAILURE;
    }
    cli_file file = {path, text, len};
    int status = write_temp(tmp, path, &file);
    if (status == CLI_OK && rename(tmp, path) != 0) {
        fprintf(stderr, "oomsim: cannot write %s: %s\n", path, strerror(errno));
        unlink(tmp);
        status = CLI_FAILURE;
    }
    return status;
}

int cli_write_files(const char *dir, const cli_file *files, unsigned n,
                    const volatile sig_atomic_t *stop)
{
    paths p;
    for (unsigned k = 0; k < n; k++)
        if (!paths_of(dir, files[k].name, &p)) {
            fprintf(stderr, "oomsim: output path too long\n");
            return CLI_FAILURE;
        }
    if (stop != NULL && *stop) {
        fprintf(stderr, "oomsim: interrupted before writing: nothing written to %s\n", dir);
        return CLI_INTERRUPTED;
    }
    int created = 0;
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) {
            fprintf(stderr, "oomsim: %s: not a directory\n", dir);
            return CLI_FAILURE;
        }
    } else if (mkdir(dir, 0777) != 0) {
        fprintf(stderr, "oomsim: cannot create %s: %s\n", dir, strerror(errno));
        return CLI_FAILURE;
    } else {
        created = 1;
    }
    int status = CLI_OK;
    unsigned staged = 0;
    for (; staged < n; staged++) {
        if (stop != NULL && *stop) {
            fprintf(stderr, "oomsim: interrupted while writing: nothing written to %s\n", dir);
            status = CLI_INTERRUPTED;
            break;
        }
        paths_of(dir, files[staged].name, &p);
        if ((status = write_temp(p.tmp, p.path, &files[staged])) != CLI_OK)
            break;
    }
    unsigned renamed = 0;
    for (; status == CLI_OK && renamed < n; renamed++) {
        paths_of(dir, files[renamed].name, &p);
        if (rename(p.tmp, p.path) != 0) {
            fprintf(stderr, "oomsim: cannot write %s: %s (%u of the %u files were replaced)\n",
                    p.path, strerror(errno), renamed, n);
            status = CLI_FAILURE;
            break;
        }
    }
    if (status == CLI_OK)
        return CLI_OK;
    /* the temporaries not renamed, and the directory when it is ours */
    for (unsigned k = renamed; k < staged; k++) {
        paths_of(dir, files[k].name, &p);
        unlink(p.tmp);
    }
    if (created && renamed == 0)
        rmdir(dir);
    return status;
}
