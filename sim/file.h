/* file.h - files: reading a file whole, and files written whole or not at all.
 * Part of sim/sim.h, which includes every header of sim/. */
#ifndef OOMSIM_SIM_FILE_H
#define OOMSIM_SIM_FILE_H

#include <stddef.h>
#include <stdio.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reads the file at path whole into a malloc'ed buffer (*data, *len bytes;
 * free it with free()).  Returns SIM_OK, SIM_EINPUT (cannot open: the
 * message names the path and the reason), SIM_ELIMIT (more than
 * max_bytes), SIM_EIO or SIM_ENOMEM; on failure *data is untouched. */
int sim_read_file(const char *path, size_t max_bytes, char **data, size_t *len,
                  sim_error *err);

/* A file written whole or not at all (out.c): bytes go to a temporary
 * name beside `path` and reach it only when sim_out_commit renames them
 * over it, after they were flushed to the disk.  A failure of any write,
 * fsync, close or rename is reported as SIM_EIO, "cannot write PATH:
 * <reason>"; whatever was at path before stays as it was, and
 * sim_out_free removes the temporary.  One thread at a time. */
typedef struct sim_out sim_out;
/* Creates the temporary: SIM_OK, SIM_EIO or SIM_ENOMEM. */
int sim_out_open(const char *path, sim_out **out, sim_error *err);
/* Appends n bytes (buffered).  After a failure every call fails the same
 * way. */
int sim_out_write(sim_out *o, const void *p, size_t n, sim_error *err);
/* A stdio stream writing into o, for writers that take a FILE *; NULL
 * when out of memory.  sim_out_close flushes and closes it. */
FILE *sim_out_stream(sim_out *o);
/* Writes what is buffered, then fsync and close: the temporary is whole. */
int sim_out_close(sim_out *o, sim_error *err);
/* Renames the n closed temporaries over their paths, all or none: when
 * one rename fails, the paths replaced before it get their old files
 * back (each existing path is linked to a backup name first). */
int sim_out_commit(sim_out *const *files, unsigned n, sim_error *err);
/* Closes what is open, removes the temporary unless committed, frees. */
void sim_out_free(sim_out *o);
/* One file: open, n bytes, close, commit, free. */
int sim_out_file(const char *path, const void *p, size_t n, sim_error *err);

#ifdef __cplusplus
}
#endif

#endif /* OOMSIM_SIM_FILE_H */
