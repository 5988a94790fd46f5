/* output.c - files a command writes: to a temporary name, then renamed,
 * so an interrupted or failed run leaves no half-written file. */
#define _XOPEN_SOURCE 700
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cli_output_dir(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return CLI_OK;
        fprintf(stderr, "oomsim: %s: not a directory\n", dir);
        return CLI_FAILURE;
    }
    if (mkdir(dir, 0777) != 0) {
        fprintf(stderr, "oomsim: cannot create %s: %s\n", dir, strerror(errno));
        return CLI_FAILURE;
    }
    return CLI_OK;
}

int cli_write_file(const char *dir, const char *name, const char *text, size_t len)
{
    char path[4096], tmp[4200];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path) {
        fprintf(stderr, "oomsim: output path too long\n");
        return CLI_FAILURE;
    }
    snprintf(tmp, sizeof tmp, "%s/.%s.tmp.%ld", dir, name, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (f == NULL) {
        fprintf(stderr, "oomsim: cannot write %s: %s\n", path, strerror(errno));
        return CLI_FAILURE;
    }
    int ok = fwrite(text, 1, len, f) == len && fputc('\n', f) != EOF && fflush(f) == 0 &&
             fsync(fileno(f)) == 0;
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        fprintf(stderr, "oomsim: cannot write %s: %s\n", path, strerror(errno));
        unlink(tmp);
        return CLI_FAILURE;
    }
    return CLI_OK;
}
