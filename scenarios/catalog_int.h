/* catalog_int.h - the shipped catalog as embedded at build time
 * (scenarios/embed.cmake writes the table; catalog.c reads it). */
#ifndef OOMSIM_SCENARIOS_CATALOG_INT_H
#define OOMSIM_SCENARIOS_CATALOG_INT_H

#include <stddef.h>

typedef struct scn__catalog_file {
    const char *path; /* relative to scenarios/catalog: "devices/android-4g.yaml" */
    const char *text; /* NUL-terminated */
    size_t len;
} scn__catalog_file;

extern const scn__catalog_file scn__catalog_files[];
extern const unsigned scn__catalog_nfiles;

#endif
