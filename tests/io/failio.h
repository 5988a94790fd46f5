/* failio.h - fail the Nth output system call of the whole process.
 *
 * The test executable that links failio.c defines write, fsync, close,
 * rename and mkdir (ELF symbol interposition, as failalloc.c does for the
 * allocator): every call to them through the dynamic linker, the
 * project's and the libraries', passes through it and goes on to the C
 * library's (or the sanitizer's wrapper of it).  The C library's own
 * stdio calls its internal write and close, which are not seen: oomsim
 * writes its output files with write(2) itself (sim/out.c) for this
 * reason.
 *
 * Between failio_arm() and failio_disarm() those calls are counted; the
 * fail_at-th fails with errno `errnum` (-1, and nothing done; a failed
 * close still releases the descriptor, as Linux does).  fsync succeeds
 * without waiting for the disk, armed or not: the sweeps write thousands
 * of files, and none of them needs to survive a power cut. */
#ifndef OOMSIM_FAILIO_H
#define OOMSIM_FAILIO_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct failio_report {
    uint64_t calls;    /* output calls made while armed */
    int failed;        /* the fail_at-th was reached (and failed) */
    const char *which; /* the name of the call that failed, or "" */
} failio_report;

/* Starts counting; the fail_at-th call (from 1) fails with errnum, 0: none. */
void failio_arm(uint64_t fail_at, int errnum);
void failio_disarm(failio_report *r);

#ifdef __cplusplus
}
#endif

#endif
