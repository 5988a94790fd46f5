/* file.c - reading an input file whole, with a size limit. */
#include "sim.h"

#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sim_read_file(const char *path, size_t max_bytes, char **data, size_t *len, sim_error *err)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL && errno == ENOMEM) /* the C library's FILE, not the file */
        return sim_error_set(err, SIM_ENOMEM, "%s: out of memory", path);
    if (f == NULL)
        return sim_error_set(err, SIM_EINPUT, "cannot read %s: %s", path, strerror(errno));
    /* a regular file's size read first: one allocation and one read, not a
     * buffer doubled and copied (a 60 MB bugreport's read was mostly copies) */
    size_t cap = 1 << 14, n = 0;
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (uint64_t)st.st_size < (uint64_t)max_bytes)
        cap = (size_t)st.st_size + 1; /* + 1: the end is seen without a doubling */
    char *buf = malloc(cap);
    int rc = buf != NULL ? SIM_OK : SIM_ENOMEM;
    while (rc == SIM_OK) {
        if (n == cap) {
            if (cap > max_bytes) {
                rc = SIM_ELIMIT;
                break;
            }
            char *nb = realloc(buf, cap * 2);
            if (nb == NULL) {
                rc = SIM_ENOMEM;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f))
                rc = sim_error_set(err, SIM_EIO, "cannot read %s: %s", path, strerror(errno));
            break;
        }
    }
    fclose(f);
    if (rc == SIM_OK && n > max_bytes)
        rc = SIM_ELIMIT;
    if (rc == SIM_ELIMIT)
        sim_error_set(err, rc, "%s: file exceeds the limit of %zu bytes", path, max_bytes);
    else if (rc == SIM_ENOMEM)
        sim_error_set(err, rc, "%s: out of memory", path);
    if (rc != SIM_OK) {
        free(buf);
        return rc;
    }
    *data = buf;
    *len = n;
    return SIM_OK;
}
