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
    /* every message in one form: "oomsim: FILE:LINE:COL: what" */
    fprintf(stderr, "%s%s\n", strncmp(msg, "oomsim", 6) == 0 ? "" : "oomsim: ", msg);
    return cli_status(err->code);
}

int cli_report_verbatim(const sim_error *err)
{
    fprintf(stderr, "%s\n", err->msg[0] != '\0' ? err->msg : sim_strerror(err->code));
    return cli_status(err->code);
}

/* The directory a path is in ("." for a bare name); 0 when too long. */
static int parent_of(const char *path, char *parent, size_t size)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    while (n > 0 && path[n - 1] != '/')
        n--;
    while (n > 1 && path[n - 1] == '/')
        n--;
    if (n >= size)
        return 0;
    if (n == 0)
        snprintf(parent, size, ".");
    else
        snprintf(parent, size, "%.*s", (int)n, path);
    return 1;
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
    if (!parent_of(dir, parent, sizeof parent))
        return sim_error_set(err, SIM_EIO, "oomsim: -o: the path is too long");
    if (stat(parent, &st) != 0 || !S_ISDIR(st.st_mode))
        return sim_error_set(err, SIM_EIO, "oomsim: -o %s: cannot create it: %s is not a directory",
                             dir, parent);
    if (access(parent, W_OK | X_OK) != 0)
        return sim_error_set(err, SIM_EIO, "oomsim: -o %s: cannot create it in %s: %s", dir, parent,
                             strerror(errno));
    return SIM_OK;
}

int cli_check_file(const char *option, const char *path, sim_error *err)
{
    char parent[PATH_MAX];
    struct stat st;
    if (!parent_of(path, parent, sizeof parent))
        return sim_error_set(err, SIM_EIO, "oomsim: %s: the path is too long", option);
    if (stat(parent, &st) != 0 || !S_ISDIR(st.st_mode))
        return sim_error_set(err, SIM_EIO, "oomsim: %s %s: %s is not a directory", option, path,
                             parent);
    if (access(parent, W_OK | X_OK) != 0)
        return sim_error_set(err, SIM_EIO, "oomsim: %s %s: cannot write into %s: %s", option,
                             path, parent, strerror(errno));
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return sim_error_set(err, SIM_EIO, "oomsim: %s %s: a directory", option, path);
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

/* Prints "oomsim: <message>" of a failed output and returns the status. */
int cli_output_failed(const sim_error *err)
{
    fprintf(stderr, "oomsim: %s\n", err->msg);
    return CLI_FAILURE;
}

/* Starts a file of text and a newline; SIM_OK or the failure in err. */
int cli_put_text(const char *path, const char *text, size_t len, sim_out **o, sim_error *err)
{
    int rc = sim_out_open(path, o, err);
    if (rc == SIM_OK)
        rc = sim_out_write(*o, text, len, err);
    if (rc == SIM_OK)
        rc = sim_out_write(*o, "\n", 1, err);
    if (rc == SIM_OK)
        rc = sim_out_close(*o, err);
    return rc;
}

int cli_write_file(const char *path, const char *text, size_t len)
{
    sim_error err;
    sim_error_clear(&err);
    sim_out *o = NULL;
    int rc = cli_put_text(path, text, len, &o, &err);
    if (rc == SIM_OK)
        rc = sim_out_commit(&o, 1, &err);
    sim_out_free(o);
    return rc == SIM_OK ? CLI_OK : cli_output_failed(&err);
}

/* The folder of a file named "SUB/NAME" under dir, when it has one. */
static int folder_of(const char *dir, const char *name, char *path, size_t n)
{
    const char *slash = strchr(name, '/');
    return slash != NULL &&
           (size_t)snprintf(path, n, "%s/%.*s", dir, (int)(slash - name), name) < n;
}

/* The folders of files named "SUB/NAME" (one level), made when missing;
 * made[k] set for the file whose folder this call made. */
static int subdirs(const char *dir, const cli_file *files, unsigned n, unsigned char *made)
{
    char path[4096];
    struct stat st;
    for (unsigned k = 0; k < n; k++) {
        if (!folder_of(dir, files[k].name, path, sizeof path) || stat(path, &st) == 0)
            continue;
        if (mkdir(path, 0777) != 0) {
            fprintf(stderr, "oomsim: cannot create %s: %s\n", path, strerror(errno));
            return CLI_FAILURE;
        }
        made[k] = 1;
    }
    return CLI_OK;
}

int cli_write_files(const char *dir, const cli_file *files, unsigned n,
                    const volatile sig_atomic_t *stop)
{
    char path[4096];
    for (unsigned k = 0; k < n; k++)
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, files[k].name) >= sizeof path) {
            fprintf(stderr, "oomsim: output path too long\n");
            return CLI_FAILURE;
        }
    if (stop != NULL && *stop) {
        fprintf(stderr, "oomsim: interrupted before writing: nothing written to %s\n", dir);
        return CLI_INTERRUPTED;
    }
    sim_out **outs = calloc(n > 0 ? n : 1, sizeof *outs);
    unsigned char *made = calloc(n > 0 ? n : 1, 1); /* the subfolders this call made */
    if (outs == NULL || made == NULL) {
        free(outs);
        free(made);
        fprintf(stderr, "oomsim: out of memory writing the results\n");
        return CLI_FAILURE;
    }
    int created = 0;
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) {
            fprintf(stderr, "oomsim: %s: not a directory\n", dir);
            free(outs);
            free(made);
            return CLI_FAILURE;
        }
    } else if (mkdir(dir, 0777) != 0) {
        fprintf(stderr, "oomsim: cannot create %s: %s\n", dir, strerror(errno));
        free(outs);
        free(made);
        return CLI_FAILURE;
    } else {
        created = 1;
    }
    sim_error err;
    sim_error_clear(&err);
    int status = subdirs(dir, files, n, made);
    for (unsigned k = 0; k < n && status == CLI_OK; k++) {
        if (stop != NULL && *stop) {
            fprintf(stderr, "oomsim: interrupted while writing: nothing written to %s\n", dir);
            status = CLI_INTERRUPTED;
            break;
        }
        snprintf(path, sizeof path, "%s/%s", dir, files[k].name);
        if (cli_put_text(path, files[k].text, files[k].len, &outs[k], &err) != SIM_OK)
            status = cli_output_failed(&err);
    }
    if (status == CLI_OK && sim_out_commit(outs, n, &err) != SIM_OK)
        status = cli_output_failed(&err);
    /* the temporaries not renamed go; and the directory, when it is ours
     * and nothing went in */
    for (unsigned k = 0; k < n; k++)
        sim_out_free(outs[k]);
    free(outs);
    for (unsigned k = n; status != CLI_OK && k-- > 0;)
        if (made[k] && folder_of(dir, files[k].name, path, sizeof path))
            rmdir(path);
    free(made);
    if (status != CLI_OK && created)
        rmdir(dir);
    return status;
}
