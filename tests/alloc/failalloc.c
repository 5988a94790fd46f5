/* failalloc.c - the process-wide fail-Nth allocator of failalloc.h. */
#define _GNU_SOURCE
#include "failalloc.h"

#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <unwind.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The allocator that comes next in the lookup order. */
static void *(*next_malloc)(size_t);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static void (*next_free)(void *);
static int (*next_posix_memalign)(void **, size_t, size_t);
static void *(*next_aligned_alloc)(size_t, size_t);
static void *(*next_memalign)(size_t, size_t);

/* dlsym may allocate before the real allocator is known: from here. */
static _Alignas(16) char boot[16384];
static size_t boot_used;
static atomic_int resolving;

static int in_boot(const void *p)
{
    return (const char *)p >= boot && (const char *)p < boot + sizeof boot;
}

static void *boot_alloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (n > sizeof boot - boot_used)
        return NULL;
    void *p = boot + boot_used;
    boot_used += n;
    return p;
}

static void resolve(void)
{
    if (next_free != NULL)
        return;
    atomic_store(&resolving, 1);
    *(void **)&next_malloc = dlsym(RTLD_NEXT, "malloc");
    *(void **)&next_calloc = dlsym(RTLD_NEXT, "calloc");
    *(void **)&next_realloc = dlsym(RTLD_NEXT, "realloc");
    *(void **)&next_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
    *(void **)&next_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
    *(void **)&next_memalign = dlsym(RTLD_NEXT, "memalign");
    *(void **)&next_free = dlsym(RTLD_NEXT, "free");
    atomic_store(&resolving, 0);
    if (next_malloc == NULL || next_calloc == NULL || next_realloc == NULL || next_free == NULL)
        abort();
}

/* ------------------------------------------------- while armed: the book */

static atomic_int armed;
static pthread_mutex_t book_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t calls, fail_at;
static int failed, overflow;

/* Blocks allocated while armed and not freed: an open-addressing table of
 * hidden addresses (linear probing, deletion by backward shift). */
#define SLOTS_LOG 20
#define SLOTS ((size_t)1 << SLOTS_LOG)
#define HIDE ((uintptr_t)0xa5a5a5a5a5a5a5a5u)
static uintptr_t slot_key[SLOTS];
static size_t slot_size[SLOTS];
static const void *slot_caller[SLOTS];
static size_t live;
static const void *fail_caller;

static size_t home(uintptr_t key)
{
    return (size_t)(((uint64_t)key * UINT64_C(0x9e3779b97f4a7c15)) >> (64 - SLOTS_LOG));
}

static void book_add(void *p, size_t n, const void *caller)
{
    if (live >= SLOTS / 2) {
        overflow = 1;
        return;
    }
    uintptr_t key = (uintptr_t)p ^ HIDE;
    size_t i = home(key);
    while (slot_key[i] != 0)
        i = (i + 1) & (SLOTS - 1);
    slot_key[i] = key;
    slot_size[i] = n;
    slot_caller[i] = caller;
    live++;
}

/* 1 when p was in the book (and is no longer; *size: its size). */
static int book_remove(const void *p, size_t *size)
{
    uintptr_t key = (uintptr_t)p ^ HIDE;
    size_t i = home(key);
    while (slot_key[i] != key) {
        if (slot_key[i] == 0)
            return 0;
        i = (i + 1) & (SLOTS - 1);
    }
    *size = slot_size[i];
    for (size_t j = i;;) {
        j = (j + 1) & (SLOTS - 1);
        if (slot_key[j] == 0)
            break;
        size_t k = home(slot_key[j]);
        /* the entry at j may move to i unless its home lies in (i, j] */
        int stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (stays)
            continue;
        slot_key[i] = slot_key[j];
        slot_size[i] = slot_size[j];
        slot_caller[i] = slot_caller[j];
        i = j;
    }
    slot_key[i] = 0;
    live--;
    return 1;
}

/* The code whose allocations may fail (failalloc_only), and the helpers'
 * (the C library, libltdl): an allocation a helper
 * makes is judged by the first frame above it that is not a helper's
 * (fopen called by oomsim may fail; asprintf called by libfyaml, or a
 * driver PLplot loads through libltdl, is spared).  Between
 * failalloc_spare_begin and _end every allocation of the thread is
 * spared.  Without failalloc_only every allocation may fail. */
#define RANGES_MAX 32
typedef struct range {
    uintptr_t lo, hi;
} range;
static range failable[RANGES_MAX], helper[RANGES_MAX], loader[RANGES_MAX];
static int nfailable, nhelper, nloader, restricted;
static uint64_t spared_calls;
static _Thread_local int unwinding, spare_depth;

void failalloc_spare_begin(void)
{
    spare_depth++;
}

void failalloc_spare_end(void)
{
    spare_depth--;
}

static int in_ranges(const range *r, int n, const void *addr)
{
    for (int i = 0; i < n; i++)
        if ((uintptr_t)addr >= r[i].lo && (uintptr_t)addr < r[i].hi)
            return 1;
    return 0;
}

/* The return addresses on the stack, innermost first.  libgcc's unwinder
 * directly: glibc's backtrace() dlopens libgcc_s on its first use, which
 * leaves the dynamic loader's blocks to the first step it runs in. */
typedef struct walk {
    void **frames;
    int n, max;
} walk;

static _Unwind_Reason_Code walk_frame(struct _Unwind_Context *ctx, void *data)
{
    walk *w = data;
    if (w->n >= w->max)
        return _URC_END_OF_STACK;
    w->frames[w->n++] = (void *)_Unwind_GetIP(ctx);
    return _URC_NO_REASON;
}

static int stack_frames(void **frames, int max)
{
    walk w = {frames, 0, max};
    _Unwind_Backtrace(walk_frame, &w);
    return w.n;
}

static int is_spared(const void *caller)
{
    if (spare_depth > 0)
        return 1;
    if (!restricted || unwinding || in_ranges(failable, nfailable, caller))
        return 0;
    /* the dynamic loader's own blocks (a new thread's TLS vector, grown
     * after a dlopen and kept with glibc's cached thread stacks; a dlopen's
     * link map): never ours to free, and never failed */
    if (in_ranges(loader, nloader, caller))
        return 1;
    if (!in_ranges(helper, nhelper, caller))
        return 1;
    unwinding = 1;
    void *frames[64];
    int n = stack_frames(frames, 64);
    unwinding = 0;
    int i = 0;
    while (i < n && frames[i] != caller)
        i++; /* the frames of this file, up to the helper's */
    while (i < n && in_ranges(helper, nhelper, frames[i]))
        i++;
    return i == n || !in_ranges(failable, nfailable, frames[i]);
}

typedef struct wanted {
    const char *prefix; /* "" : the program itself */
    range *into;
    int *n;
} wanted;

static int add_ranges(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    const wanted *w = data;
    const char *name = info->dlpi_name, *slash = strrchr(name, '/');
    const char *base = slash != NULL ? slash + 1 : name;
    int match = w->prefix[0] == '\0' ? name[0] == '\0'
                                      : base[0] != '\0' &&
                                            strncmp(base, w->prefix, strlen(w->prefix)) == 0;
    if (!match)
        return 0;
    for (int k = 0; k < info->dlpi_phnum && *w->n < RANGES_MAX; k++)
        if (info->dlpi_phdr[k].p_type == PT_LOAD && (info->dlpi_phdr[k].p_flags & PF_X)) {
            w->into[*w->n].lo = info->dlpi_addr + info->dlpi_phdr[k].p_vaddr;
            w->into[*w->n].hi = w->into[*w->n].lo + info->dlpi_phdr[k].p_memsz;
            (*w->n)++;
        }
    return 1;
}

int failalloc_only(const char *const *objects, size_t n)
{
    nfailable = 0;
    for (size_t i = 0; i < n; i++) {
        int before = nfailable;
        wanted w = {objects[i], failable, &nfailable};
        dl_iterate_phdr(add_ranges, &w);
        if (nfailable == before)
            return 0;
    }
    wanted l = {"ld-linux", loader, &nloader};
    dl_iterate_phdr(add_ranges, &l);
    static const char *const helpers[] = {"libc.so", "libltdl.so"};
    for (size_t i = 0; i < sizeof helpers / sizeof *helpers; i++) {
        wanted c = {helpers[i], helper, &nhelper};
        dl_iterate_phdr(add_ranges, &c);
    }
    restricted = 1;
    return 1;
}

/* Counts an allocation; 1 when it is the one to fail. */
static int book_call(const void *caller)
{
    pthread_mutex_lock(&book_lock);
    if (is_spared(caller)) {
        spared_calls++;
        pthread_mutex_unlock(&book_lock);
        return 0;
    }
    calls++;
    int fail = fail_at != 0 && calls == fail_at;
    if (fail) {
        failed = 1;
        fail_caller = caller;
    }
    pthread_mutex_unlock(&book_lock);
    const char *log = fail ? getenv("FAILALLOC_BACKTRACE") : NULL;
    if (log != NULL) {
        /* where the failed allocation came from, for a sweep being debugged */
        void *frames[32];
        int n = backtrace(frames, 32);
        int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
        if (fd >= 0) {
            (void)!write(fd, "--- failed\n", 11);
            backtrace_symbols_fd(frames, n, fd);
            close(fd);
        }
    }
    if (fail)
        errno = ENOMEM;
    return fail;
}

static void book_keep(void *p, size_t n, const void *caller)
{
    if (p == NULL || in_ranges(loader, nloader, caller))
        return; /* the loader's own: not followed (is_spared) */
    pthread_mutex_lock(&book_lock);
    book_add(p, n, caller);
    pthread_mutex_unlock(&book_lock);
}

static void book_drop(const void *p)
{
    pthread_mutex_lock(&book_lock);
    size_t size;
    if (live > 0)
        book_remove(p, &size);
    pthread_mutex_unlock(&book_lock);
}

void failalloc_arm(uint64_t n)
{
    resolve();
    static int warmed;
    if (!warmed && getenv("FAILALLOC_BACKTRACE") != NULL) {
        void *frame[1]; /* the unwinder loads itself on its first use */
        backtrace(frame, 1);
        warmed = 1;
    }
    pthread_mutex_lock(&book_lock);
    for (size_t i = 0; live > 0 && i < SLOTS; i++)
        if (slot_key[i] != 0) {
            slot_key[i] = 0;
            live--;
        }
    calls = 0;
    spared_calls = 0;
    fail_at = n;
    failed = 0;
    fail_caller = NULL;
    overflow = 0;
    live = 0;
    pthread_mutex_unlock(&book_lock);
    atomic_store(&armed, 1);
}

void failalloc_disarm(failalloc_report *r)
{
    atomic_store(&armed, 0);
    pthread_mutex_lock(&book_lock);
    memset(r, 0, sizeof *r);
    r->calls = calls;
    r->spared = spared_calls;
    r->failed = failed;
    r->overflow = overflow;
    r->fail_caller = fail_caller;
    r->live_blocks = live;
    for (size_t i = 0; i < SLOTS && live > 0; i++)
        if (slot_key[i] != 0)
            r->live_bytes += slot_size[i];
    pthread_mutex_unlock(&book_lock);
}

size_t failalloc_live_callers(const void **out, size_t max)
{
    size_t n = 0;
    pthread_mutex_lock(&book_lock);
    for (size_t i = 0; i < SLOTS && n < max && n < live; i++)
        if (slot_key[i] != 0)
            out[n++] = slot_caller[i];
    pthread_mutex_unlock(&book_lock);
    return n;
}

/* ---------------------------------------------------- the replacements */

#define CALLER __builtin_return_address(0)

static void *counted_malloc(size_t n, const void *caller)
{
    if (atomic_load(&resolving))
        return boot_alloc(n);
    resolve();
    if (!atomic_load(&armed))
        return next_malloc(n);
    if (book_call(caller))
        return NULL;
    void *p = next_malloc(n);
    book_keep(p, n, caller);
    return p;
}

void *malloc(size_t n)
{
    return counted_malloc(n, CALLER);
}

void *calloc(size_t k, size_t n)
{
    if (atomic_load(&resolving))
        return boot_alloc(k * n); /* dlsym's own small requests; zeroed bss */
    resolve();
    if (!atomic_load(&armed))
        return next_calloc(k, n);
    if (book_call(CALLER))
        return NULL;
    void *p = next_calloc(k, n);
    book_keep(p, k * n, CALLER);
    return p;
}

void *realloc(void *p, size_t n)
{
    if (in_boot(p)) {
        size_t room = (size_t)(boot + sizeof boot - (char *)p);
        void *q = counted_malloc(n, CALLER);
        if (q != NULL)
            memcpy(q, p, n < room ? n : room);
        return q;
    }
    resolve();
    /* realloc(p, 0) frees p: never failed, so the caller's view stays true */
    if (!atomic_load(&armed) || n == 0) {
        if (p != NULL && atomic_load(&armed))
            book_drop(p);
        return next_realloc(p, n);
    }
    if (book_call(CALLER))
        return NULL;
    size_t old = 0;
    pthread_mutex_lock(&book_lock);
    int tracked = p == NULL || (live > 0 && book_remove(p, &old));
    pthread_mutex_unlock(&book_lock);
    void *q = next_realloc(p, n);
    if (q == NULL && p != NULL && tracked)
        book_keep(p, old, CALLER); /* the old block is still there */
    else if (tracked)
        book_keep(q, n, CALLER); /* a block allocated before arming stays unbooked */
    return q;
}

void free(void *p)
{
    if (p == NULL || in_boot(p))
        return;
    resolve();
    if (atomic_load(&armed))
        book_drop(p);
    next_free(p);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    resolve();
    if (!atomic_load(&armed))
        return next_posix_memalign(out, align, n);
    if (book_call(CALLER))
        return ENOMEM;
    int rc = next_posix_memalign(out, align, n);
    if (rc == 0)
        book_keep(*out, n, CALLER);
    return rc;
}

static void *counted_aligned(void *(*next)(size_t, size_t), size_t align, size_t n,
                             const void *caller)
{
    resolve();
    if (!atomic_load(&armed))
        return next(align, n);
    if (book_call(caller))
        return NULL;
    void *p = next(align, n);
    book_keep(p, n, caller);
    return p;
}

void *aligned_alloc(size_t align, size_t n)
{
    resolve();
    return counted_aligned(next_aligned_alloc, align, n, CALLER);
}

void *memalign(size_t align, size_t n);
void *memalign(size_t align, size_t n)
{
    resolve();
    return counted_aligned(next_memalign, align, n, CALLER);
}

/* The sanitizers implement these themselves, past malloc: counted here. */
char *strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = counted_malloc(n, CALLER);
    if (p != NULL)
        memcpy(p, s, n);
    return p;
}

char *strndup(const char *s, size_t max)
{
    size_t n = strnlen(s, max);
    char *p = counted_malloc(n + 1, CALLER);
    if (p != NULL) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}
