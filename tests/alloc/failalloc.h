/* failalloc.h - fail the Nth allocation of the whole process.
 *
 * The test executable that links failalloc.c replaces malloc, calloc,
 * realloc, free, the aligned allocators, strdup and strndup (ELF symbol
 * interposition, as glibc documents for replacing malloc), so every
 * library's allocation passes through it: libfyaml's, jansson's,
 * msgpack-c's, PLplot's, the C library's own (fopen, open_memstream) and,
 * in the sanitizer build whose allocator hook is the C library's, the
 * engine's.  Each call forwards to the allocator that comes next (the C
 * library, jemalloc, or the sanitizer's).
 *
 * Between failalloc_arm() and failalloc_disarm() allocations are counted;
 * the fail_at-th fails (NULL, errno ENOMEM), and each block allocated in
 * between and not yet freed is remembered (its address hidden from
 * LeakSanitizer, so a block lost by the code under test is still
 * reported as a leak).  One arming at a time; the code under test may
 * run threads.  FAILALLOC_BACKTRACE=FILE appends the stack of each failed
 * allocation to FILE, to find where a sweep step went wrong. */
#ifndef OOMSIM_FAILALLOC_H
#define OOMSIM_FAILALLOC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct failalloc_report {
    uint64_t calls;       /* allocations attempted while armed (and failable) */
    uint64_t spared;      /* allocations of other code (failalloc_only), never failed */
    int failed;           /* the fail_at-th was reached (and failed) */
    uint64_t live_blocks; /* allocated while armed, not freed at disarm */
    uint64_t live_bytes;
    const void *fail_caller; /* the code address that asked for the failed one */
    int overflow;         /* too many live blocks to remember: the check is void */
} failalloc_report;

/* Fails only the allocations asked for by the code of these loaded
 * objects (file names starting so: "libjansson.so"; "" is the program
 * itself), directly or through the C library, the dynamic loader or
 * libltdl; the others are counted as spared, for libraries that do not
 * survive their own allocation failures.  Returns 0 when one of them is
 * not loaded. */
int failalloc_only(const char *const *objects, size_t n);
/* Between these (they nest), the thread's allocations are spared: for a
 * library function that does not survive its own allocation failures,
 * wrapped by the test program (alloc/spare_jansson.c). */
void failalloc_spare_begin(void);
void failalloc_spare_end(void);
/* Starts counting; the fail_at-th allocation (from 1) fails, 0: none. */
void failalloc_arm(uint64_t fail_at);
/* Stops counting and says what happened since failalloc_arm(). */
void failalloc_disarm(failalloc_report *r);
/* After failalloc_disarm(): the code addresses that asked for the blocks
 * still live (up to max); returns how many were stored. */
size_t failalloc_live_callers(const void **out, size_t max);

#ifdef __cplusplus
}
#endif

#endif
