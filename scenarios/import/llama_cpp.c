/* llama_cpp.c - `oomsim import llama-cpp` (docs/imports/llama-cpp.md):
 * llama.cpp's load log to a candidate: the buffers by backend (the mapped
 * file, native, the accelerator's), the KV cache, compute, and the times. */
#include "llama_int.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct llama_log {
    measure model[MDL_CAT_COUNT], kv[MDL_CAT_COUNT], compute[MDL_CAT_COUNT]; /* MiB */
    measure output[MDL_CAT_COUNT];  /* the output (logits) buffers, MiB */
    measure repack;                 /* CPU_REPACK / CPU_AARCH64 / CPU_KLEIDIAI, within model */
    measure file_gib, load_ms;
    measure n_ctx, n_seq, mmap;     /* mmap: 1 or 0, as the log says it */
    measure build;                  /* "build = 1289" (2023), "build: 6502" (later) */
    /* 2023 (before b1843): one figure each, no buffers by backend */
    measure mem_required, ctx_size, vram_weights, vram_kv, kv_self, compute_total, per_state;
    int from_table; /* the sizes came from the memory breakdown table */
    int table_kinds; /* bits 1 model, 2 context, 4 compute: taken from the table */
    unsigned table_line; /* the table's first row */
    int plain_cpu;  /* "CPU buffer size" without "model": b1843 to b3989, mapped or not */
    int assumed_mapped; /* the plain CPU buffer taken as mapped (docs/imports/llama-cpp.md) */
    char mapped_why[160]; /* how the log tells mapped from copied weights */
    llama_more *more;
} llama_log;

/* A model buffer of the CPU backend's repacking buffer types (weights laid
 * out again for the CPU's matrix kernels, in anonymous memory: llama.cpp's
 * ggml-cpu repack.cpp, CPU_AARCH64 before b5615). */
static int repacked_backend(const char *b, size_t n)
{
    static const char *const names[] = {"CPU_REPACK", "CPU_AARCH64", "CPU_KLEIDIAI"};
    for (int k = 0; k < 3; k++)
        if (n == strlen(names[k]) && memcmp(b, names[k], n) == 0)
            return 1;
    return 0;
}

/* Where a llama.cpp buffer lives, by its backend's name: a "_Mapped"
 * buffer is the mmapped GGUF file; CPU, CPU_REPACK and the Host are
 * native memory, as are a backend's pinned host buffers (CUDA_Host,
 * Vulkan_Host); every other backend (CUDA0, Vulkan0, a GPU's own name as
 * Vulkan printed it from b3204 to b3932, Metal, MTL0, OpenCL0, HTP0, ...)
 * is the accelerator's, gpu. */
static int cat_of_backend(const char *b, size_t n)
{
    if (n >= 7 && memcmp(b + n - 7, "_Mapped", 7) == 0)
        return MDL_CAT_FILE;
    if ((n >= 3 && memcmp(b, "CPU", 3) == 0) || (n >= 4 && memcmp(b, "Host", 4) == 0) ||
        (n >= 5 && memcmp(b + n - 5, "_Host", 5) == 0))
        return MDL_CAT_NATIVE;
    return MDL_CAT_GPU;
}

/* "BACKEND <what> buffer size = X MiB": the backend is the word before
 * <what>.  A repacking backend's model buffer is counted in *repack too. */
static int buffer_line(const line_iter *it, const char *what, measure *m, measure *repack,
                       llama_more *more, int *bad)
{
    const char *at = scn__find(it, what);
    if (at == NULL)
        return 0;
    const char *e = at;
    while (e > it->s && e[-1] == ' ')
        e--;
    const char *b = e;
    while (b > it->s && b[-1] != ' ' && b[-1] != ':')
        b--;
    if (b == e)
        return 0;
    double v;
    if (!scn__number_after(it, "buffer size =", &v, bad))
        return 0;
    int c = cat_of_backend(b, (size_t)(e - b));
    scn__set(&m[c], m[c].v + v, it->no);
    if (more != NULL && c == MDL_CAT_GPU)
        llm__backend_seen(more, b, (size_t)(e - b), it->no);
    if (repack != NULL && repacked_backend(b, (size_t)(e - b)))
        scn__set(repack, repack->v + v, it->no);
    return 1;
}


/* "n_ctx         = 4096", "n_seq_max     = 2": a context parameter, the
 * key alone (not n_ctx_per_seq, n_ctx_train).  1 when the line was one. */
static int context_line(const line_iter *it, const char *key, measure *m, int *bad)
{
    double v;
    if (!llm__value_after(it, key, &v, bad))
        return 0;
    if (m->line == 0) /* the context's own line comes first (a server's slots later) */
        scn__set(m, v, it->no);
    return 1;
}

/* "| - NAME | total = free + (self = model + context + compute) +
 * unaccounted |", or for the host "| - Host | self = model + context +
 * compute |": the last three numbers before the closing of the self
 * sum. */
static int breakdown_row(const line_iter *it, llama_log *l)
{
    const char *dash = scn__find(it, "|   - ");
    if (dash == NULL || scn__find(it, "memory breakdown"))
        return 0;
    const char *name = dash + 6, *bar = memchr(name, '|', (size_t)(it->s + it->n - name));
    if (bar == NULL)
        return 0;
    size_t nl = 0;
    while (name + nl < bar && name[nl] != ' ')
        nl++;
    double nums[8];
    int k = 0;
    const char *p = bar + 1, *end = it->s + it->n;
    while (p < end && k < 8) {
        if (isdigit((unsigned char)*p)) {
            if (!scn__number_at(&p, end, &nums[k]))
                return 0;
            k++;
        } else {
            p++;
        }
    }
    /* device rows: total, free, self, model, context, compute, unaccounted;
     * host rows: self, model, context, compute */
    int at = k == 7 ? 3 : k == 4 ? 1 : -1;
    if (at < 0)
        return 0;
    int c = cat_of_backend(name, nl);
    if (c == MDL_CAT_FILE)
        c = MDL_CAT_NATIVE;
    scn__set(&l->model[c], l->model[c].v + nums[at], it->no);
    scn__set(&l->kv[c], l->kv[c].v + nums[at + 1], it->no);
    scn__set(&l->compute[c], l->compute[c].v + nums[at + 2], it->no);
    return 1;
}

/* The file size and the load time.  1 when the line gave one. */
static int size_or_load(const line_iter *it, llama_log *l, int *bad)
{
    double v;
    if ((scn__find(it, "file size") || scn__find(it, "model size")) &&
        (scn__find(it, " GiB") || scn__find(it, " MiB")) &&
        (llm__value_after(it, "file size", &v, bad) || llm__value_after(it, "model size", &v, bad))) {
        scn__set(&l->file_gib, scn__find(it, " GiB") ? v : v / 1024.0, it->no);
        return 1;
    }
    if (llm__value_after(it, "load time", &v, bad)) {
        scn__set(&l->load_ms, v, it->no);
        return 1;
    }
    return 0;
}

/* The 2023 forms (docs/imports/llama-cpp.md): "mem required  = X MB (+ Y
 * MB per state)", "ggml ctx size = X MB" (KB in 2023-03 and -04), "kv
 * self size  = X MB", "compute buffer total size = X MB", "VRAM used: X
 * MB", "VRAM kv self = X MB", and b1676's "system memory used  = X MiB".
 * llama.cpp's MB were 1024 x 1024 bytes (it divides by 1024.0 twice).
 * 1 when the line was one. */
static int line_2023(const line_iter *it, llama_log *l, int *bad)
{
    double v;
    if (llm__value_after(it, "mem required", &v, bad) ||
        llm__value_after(it, "system memory used", &v, bad)) {
        scn__set(&l->mem_required, v, it->no);
        const char *plus = scn__find(it, "(+ ");
        const char *p = plus != NULL ? plus + 3 : NULL;
        if (p != NULL && scn__find(it, "per state") && scn__number_at(&p, it->s + it->n, &v))
            scn__set(&l->per_state, v, it->no);
        return 1;
    }
    if (llm__value_after(it, "ggml ctx size", &v, bad)) {
        scn__set(&l->ctx_size, scn__find(it, " KB") ? v / 1024.0 : v, it->no);
        return 1;
    }
    if (llm__value_after(it, "kv self size", &v, bad) || llm__value_after(it, "KV self size", &v, bad)) {
        scn__set(&l->kv_self, v, it->no);
        return 1;
    }
    if (llm__value_after(it, "compute buffer total size", &v, bad)) {
        scn__set(&l->compute_total, v, it->no);
        return 1;
    }
    if (scn__find(it, "VRAM used") && (scn__number_after(it, "VRAM used:", &v, bad) ||
                                       llm__value_after(it, "VRAM used", &v, bad))) {
        scn__set(&l->vram_weights, v, it->no);
        return 1;
    }
    if (llm__value_after(it, "VRAM kv self", &v, bad)) {
        scn__set(&l->vram_kv, v, it->no);
        return 1;
    }
    return 0;
}

/* Whether the weights were mapped, as the log says it: "(mmap = true)"
 * (b4657 on, "mmap = true, direct_io" later), "use_mmap = 1" or "use_mmap:
 * true" (parameter dumps), "--no-mmap" (a command line echoed).  1 when
 * the line said. */
static int mmap_line(const line_iter *it, llama_log *l)
{
    const char *u = scn__find(it, "use_mmap");
    if (scn__find(it, "mmap = true") || scn__find(it, "load_mode = mmap"))
        scn__set(&l->mmap, 1, it->no);
    else if (scn__find(it, "mmap = false") || scn__find(it, "--no-mmap"))
        scn__set(&l->mmap, 0, it->no);
    else if (u != NULL) {
        const char *p = u + 8, *end = it->s + it->n;
        while (p < end && (*p == ' ' || *p == '=' || *p == ':' || *p == '"'))
            p++;
        if (p < end && (*p == '1' || *p == 't'))
            scn__set(&l->mmap, 1, it->no);
        else if (p < end && (*p == '0' || *p == 'f'))
            scn__set(&l->mmap, 0, it->no);
        else
            return 0;
    } else {
        return 0;
    }
    return 1;
}

/* "build = 1289 (16bc66d)" (2023's main), "build: 6502 (a1b2c3d4)", or
 * llama-bench's footer "build: 1831f53 (5212)" (the commit first): the
 * number is the one followed by " (", else the one in the parentheses. */
static int build_line(const line_iter *it, llama_log *l)
{
    const char *at = scn__find(it, "build = ");
    if (at != NULL)
        at += 8;
    else if ((at = scn__find(it, "build: ")) != NULL)
        at += 7;
    if (at == NULL || l->build.line)
        return 0;
    const char *end = it->s + it->n, *p = at, *open = memchr(at, '(', (size_t)(end - at));
    double v;
    if (!(scn__number_at(&p, end, &v) && end - p >= 2 && p[0] == ' ' && p[1] == '(')) {
        p = open != NULL ? open + 1 : NULL; /* the bench's footer */
        if (p == NULL || !scn__number_at(&p, end, &v) || p >= end || *p != ')')
            return 0;
    }
    if (v != floor(v) || v < 1 || v >= 1e7)
        return 0;
    scn__set(&l->build, v, it->no);
    return 1;
}

/* One line of the log into *l: 1 when it was used. */
static int llama_line(const line_iter *it, llama_log *l, llama_log *table, int *any_buffer,
                      int *any_table, int *bad, int *oom)
{
    int used = 0, b;
    b = buffer_line(it, "model buffer size", l->model, &l->repack, l->more, bad);
    b |= buffer_line(it, "KV buffer size", l->kv, NULL, NULL, bad);
    b |= buffer_line(it, "compute buffer size", l->compute, NULL, NULL, bad);
    used |= buffer_line(it, "output buffer size", l->output, NULL, NULL, bad);
    if (!b && scn__find(it, "load_tensors:") && scn__find(it, " buffer size")) {
        /* b1843 to b3989: "llm_load_tensors:        CPU buffer size = ..." */
        b = buffer_line(it, "buffer size", l->model, &l->repack, l->more, bad);
        if (b && scn__find(it, " CPU buffer size"))
            l->plain_cpu = 1;
    }
    *any_buffer |= b;
    used |= b;
    used |= context_line(it, " n_ctx ", &l->n_ctx, bad);
    used |= context_line(it, " n_seq_max ", &l->n_seq, bad);
    used |= mmap_line(it, l);
    used |= build_line(it, l);
    used |= llm__where_line(it, l->more);
    if (!used)
        used = llm__context_line(it, l->more, bad) || llm__bench_row(it, l->more);
    if (!used)
        used = size_or_load(it, l, bad) || llm__timing_line(it, l->more, bad, oom) || line_2023(it, l, bad);
    *oom |= l->more->oom;
    int t = breakdown_row(it, table);
    if (t && table->table_line == 0)
        table->table_line = it->no;
    *any_table |= t;
    return used | t;
}

/* Every value within what one phone can say. */
static int llama_bounds(const llama_log *l, const llama_log *table, const char *name,
                        sim_error *err)
{
    for (int c = 0; c < MDL_CAT_COUNT; c++) {
        const measure *ms[7] = {&l->model[c], &l->kv[c], &l->compute[c], &l->output[c],
                                &table->model[c], &table->kv[c], &table->compute[c]};
        for (int k = 0; k < 7; k++) {
            int rc = scn__bounded(err, name, ms[k], MIB, 0, "buffers (MiB)");
            if (rc != SIM_OK)
                return rc;
        }
    }
    const measure *sz[8] = {&l->mem_required, &l->ctx_size, &l->vram_weights, &l->vram_kv,
                            &l->kv_self, &l->compute_total, &l->per_state, &l->repack};
    for (int k = 0; k < 8; k++) {
        int rc = scn__bounded(err, name, sz[k], MIB, 0, "a size (MiB)");
        if (rc != SIM_OK)
            return rc;
    }
    int rc = scn__bounded(err, name, &l->load_ms, 1000, 1, "a time (ms)");
    if (rc == SIM_OK)
        rc = scn__bounded(err, name, &l->file_gib, 1073741824.0, 0, "a file size (GiB)");
    for (size_t k = 0; rc == SIM_OK && k < l->more->nreq; k++) {
        const llama_req *q = &l->more->req[k];
        measure pm = {q->prompt_ms, q->line}, em = {q->eval_ms, q->line};
        rc = scn__bounded(err, name, &pm, 1000, 1, "a time (ms)");
        if (rc == SIM_OK)
            rc = scn__bounded(err, name, &em, 1000, 1, "a time (ms)");
        if (rc == SIM_OK && (q->prompt_tok > MDL_GEN_TOKENS_MAX || q->eval_tok > MDL_GEN_TOKENS_MAX))
            rc = scn__fail_at(err, name, q->line, "%.0f tokens is not a count of tokens",
                              q->prompt_tok > q->eval_tok ? q->prompt_tok : q->eval_tok);
    }
    if (rc != SIM_OK)
        return rc;
    if (l->n_ctx.line && (l->n_ctx.v < 1 || l->n_ctx.v > MDL_GEN_CONTEXT_MAX ||
                          l->n_ctx.v != floor(l->n_ctx.v)))
        return scn__fail_at(err, name, l->n_ctx.line, "n_ctx %.0f is not a context of 1 to %u "
                            "tokens", l->n_ctx.v, MDL_GEN_CONTEXT_MAX);
    if (l->n_seq.line && (l->n_seq.v < 1 || l->n_seq.v != floor(l->n_seq.v) ||
                          l->n_seq.v > 1e6))
        return scn__fail_at(err, name, l->n_seq.line, "n_seq_max %.0f is not a count of "
                            "sequences", l->n_seq.v);
    return SIM_OK;
}

/* The 2023 figures as buffers: "mem required" is the weights in memory
 * (mapped or in ggml's context) and, before b1289, the scratch buffers;
 * "ggml ctx size" holds the weights only when they were copied (a few MB
 * when mapped); VRAM the offloaded ones.  Mapped: as the log says, else
 * when the context is under a quarter of what is required, else mmap's
 * default since 2023-03-29 (assumed). */
static void buffers_of_2023(llama_log *l)
{
    double req = l->mem_required.v, ctx = l->ctx_size.v;
    int mapped = l->mmap.line ? l->mmap.v > 0
                 : l->ctx_size.line ? ctx < 0.25 * req
                                    : 1;
    if (l->mmap.line == 0 && l->ctx_size.line == 0)
        l->assumed_mapped = 1;
    else if (l->mmap.line == 0)
        snprintf(l->mapped_why, sizeof l->mapped_why, "'ggml ctx size' (%.2f MiB) %s 'mem "
                 "required' (%.2f MiB): the weights %s", ctx, mapped ? "is a small part of" :
                 "holds most of", req, mapped ? "are mapped" : "were copied into it");
    if (mapped)
        scn__set(&l->model[MDL_CAT_FILE], req > ctx ? req - ctx : 0, l->mem_required.line);
    else
        scn__set(&l->model[MDL_CAT_NATIVE], ctx > 0 ? ctx : req,
                 l->ctx_size.line ? l->ctx_size.line : l->mem_required.line);
    if (l->vram_weights.line)
        l->model[MDL_CAT_GPU] = l->vram_weights;
    if (l->kv_self.line)
        scn__set(&l->kv[MDL_CAT_NATIVE], l->kv_self.v - (l->vram_kv.line ? l->vram_kv.v : 0),
                 l->kv_self.line);
    else if (l->per_state.line)
        l->kv[MDL_CAT_NATIVE] = l->per_state;
    if (l->vram_kv.line)
        l->kv[MDL_CAT_GPU] = l->vram_kv;
    if (l->compute_total.line)
        l->compute[MDL_CAT_NATIVE] = l->compute_total;
}

static unsigned first_line(const measure *m, int n);

/* The memory breakdown table's rows (b6569 on) for each kind no buffer
 * line gave: the model's, the context's (the KV) and compute's. */
static void from_table(llama_log *l, const llama_log *table)
{
    measure *mine[3] = {l->model, l->kv, l->compute};
    const measure *its[3] = {table->model, table->kv, table->compute};
    l->table_line = table->table_line;
    for (int k = 0; k < 3; k++)
        if (first_line(mine[k], MDL_CAT_COUNT) == 0 && first_line(its[k], MDL_CAT_COUNT) != 0) {
            memcpy(mine[k], its[k], MDL_CAT_COUNT * sizeof *mine[k]);
            l->table_kinds |= 1 << k;
        }
}

static int read_llama(const scn_import_input *in, unsigned n, const char *name, void *state,
                      scn_tally *ignored, sim_error *err)
{
    (void)n; /* one input */
    llama_log *l = state;
    memset(l, 0, sizeof *l);
    l->more = calloc(1, sizeof *l->more);
    if (l->more == NULL)
        return sim_error_set(err, SIM_ENOMEM, "out of memory");
    llama_log table;
    memset(&table, 0, sizeof table);
    line_iter it;
    scn__lines_of(&it, in[0].text, in[0].len);
    int bad = 0, oom = 0, any_buffer = 0, any_table = 0;
    while (scn__next_line(&it)) {
        if (!llama_line(&it, l, &table, &any_buffer, &any_table, &bad, &oom))
            scn__tally_line(ignored, &it);
        if (oom)
            return sim_error_set(err, SIM_ENOMEM, "out of memory");
        if (bad)
            return scn__fail_at(err, name, it.no, "a number that cannot be read");
    }
    int rc = llama_bounds(l, &table, name, err);
    if (rc != SIM_OK)
        return rc;
    if (any_table) /* each kind the buffer lines do not give, from the table */
        from_table(l, &table);
    if (!any_buffer && any_table) { /* the table alone: a log cut to its end */
        l->from_table = 1;
    } else if (!any_buffer && l->mem_required.line) {
        buffers_of_2023(l);
    } else if (any_buffer && l->plain_cpu && l->model[MDL_CAT_FILE].line == 0 &&
               !(l->mmap.line && l->mmap.v == 0)) {
        /* b1843 to b3989 named the mapped buffer "CPU" too: mmap is on by
         * default, so the plain CPU model buffer is taken as the mapping */
        l->model[MDL_CAT_FILE] = l->model[MDL_CAT_NATIVE];
        l->model[MDL_CAT_NATIVE] = (measure){l->repack.v, l->repack.line};
        l->assumed_mapped = l->mmap.line == 0;
    }
    if (l->mmap.line)
        snprintf(l->mapped_why, sizeof l->mapped_why, "the log says mmap = %s (line %u)",
                 l->mmap.v > 0 ? "true" : "false", l->mmap.line);
    else if (l->assumed_mapped)
        snprintf(l->mapped_why, sizeof l->mapped_why, "ASSUMED: mmap is llama.cpp's default "
                 "and the log does not say");
    else if (l->mapped_why[0] == '\0')
        snprintf(l->mapped_why, sizeof l->mapped_why, "%s", l->model[MDL_CAT_FILE].line
                 ? "its _Mapped buffer" : "no _Mapped buffer (from b3990 on, a CPU model "
                 "buffer not named _Mapped is a copy)");
    if (!any_buffer && !any_table && !l->mem_required.line)
        return scn__fail_at(err, name, 1, "not a llama.cpp log: no buffer size line, no 'mem "
                            "required' line and no memory breakdown table in its %u lines", it.no);
    return SIM_OK;
}

static void release_llama(void *state)
{
    llama_log *l = state;
    if (l->more != NULL) {
        free(l->more->req);
        free(l->more->bench);
    }
    free(l->more);
    l->more = NULL;
}

static void amounts_row(out *w, const char *key, const measure *m, const char *what)
{
    int any = 0;
    unsigned line = 0;
    for (int c = 0; c < MDL_CAT_COUNT; c++)
        if (m[c].v > 0 && c != MDL_CAT_FILE)
            any = 1, line = line ? line : m[c].line;
    if (!any)
        return;
    put(w, "%s{", key);
    int first = 1;
    static const char *const cats[MDL_CAT_COUNT] = {"java", "native", "gpu", "file"};
    for (int c = 0; c < MDL_CAT_COUNT; c++)
        if (m[c].v > 0 && c != MDL_CAT_FILE) {
            put(w, "%s%s: %" PRId64 "KiB", first ? "" : ", ", cats[c], scn__kib_of(m[c].v * MIB));
            first = 0;
        }
    put(w, "}");
    scn__from(w, line, what);
}

static double kv_total(const llama_log *l)
{
    double s = 0;
    for (int c = 0; c < MDL_CAT_COUNT; c++)
        s += l->kv[c].v;
    return s;
}

static unsigned first_line(const measure *m, int n)
{
    for (int c = 0; c < n; c++)
        if (m[c].line)
            return m[c].line;
    return 0;
}

/* How the times are written: the context's term (us per 1,000 cells, 0
 * none) taken out of each, the speed they are scaled by (--speed-of), or
 * left REQUIRED (a server's or desktop's log without it). */
typedef struct llama_times {
    double per_1k_prefill, per_1k_decode;
    unsigned per_1k_line[2];
    int clamped[2]; /* llama-bench's slope was under 0: not used */
    double speed;     /* the log's machine's speed: 1 a phone's at speed 1 */
    const char *foreign; /* not NULL: not a phone's, left REQUIRED; the machine */
} llama_times;

/* One figure of every request that has it, as scn__values writes them:
 * which 0 prompt tokens, 1 decoded tokens, 2 prefill per token (us), 3
 * decode per token (us).  Tokens not in the log are `assumed` (a traffic
 * to replace); a time not in the log is left REQUIRED, never filled in.  A
 * time per token is the log's less the context's share of it (the cells
 * its tokens read, from an empty context), times the speed. */
static int request_values(out *w, const char *key, const llama_more *m, int which,
                          const char *what, const char *assumed, const llama_times *tm)
{
    double *v = malloc((m->nreq + 1) * sizeof *v);
    if (v == NULL)
        return SIM_ENOMEM;
    size_t n = 0;
    unsigned line = 0;
    int cut = 0;
    double per_1k = which == 2 ? tm->per_1k_prefill : which == 3 ? tm->per_1k_decode : 0;
    double raw = 0; /* the first request's own time per token, us */
    for (size_t k = 0; k < m->nreq; k++) {
        const llama_req *q = &m->req[k];
        double tok = which == 0 || which == 2 ? q->prompt_tok : q->eval_tok;
        double ms = which == 2 ? q->prompt_ms : q->eval_ms;
        if (tok < 0 || (which >= 2 && tok == 0))
            continue;
        double x = which < 2 ? tok : ms * 1000.0 / tok;
        if (n == 0)
            raw = x;
        if (which == 2 && per_1k > 0)
            x -= per_1k / 1000.0 * llm__prefill_cells(tok);
        else if (which == 3 && per_1k > 0)
            x -= per_1k / 1000.0 * ((q->prompt_tok > 0 ? q->prompt_tok : 0) + (tok + 1) / 2);
        if (which >= 2)
            x = round(x * tm->speed);
        if (which >= 2 && x < 1)
            x = 1, cut = 1; /* under 1 us: the least a time per token may be */
        line = line ? line : (which == 1 || which == 3 ? q->eval_line : q->line);
        v[n++] = x;
    }
    int flow = which >= 2; /* inside "{per_token: ...}" */
    char close[64] = "}";
    if (per_1k > 0)
        snprintf(close, sizeof close, ", per_1k_context: %.0fus}", per_1k * tm->speed);
    if (flow && (n == 0 || tm->foreign != NULL)) { /* never filled in: refused until given */
        put(w, "      %.*s%s  # per_token: REQUIRED, ", (int)(strchr(key, '{') - key + 1), key,
            per_1k > 0 && tm->foreign == NULL ? close + 2 : "}");
        if (n == 0)
            put(w, "not in the log (no %s line): a time per token on the reference phone, to "
                "fill in\n", which == 2 ? "prompt eval time" : "eval time");
        else /* the log's own figure, the first request's */
            put(w, "%s:%u: %.0f us a token on %s%s, not a phone: measure on one, or give "
                "--speed-of DEVICE\n", w->name, line, raw, tm->foreign, per_1k > 0
                ? " (and llama-bench's slope on it)" : "");
        free(v);
        return SIM_OK;
    }
    put(w, "      %s", key);
    if (n == 0) {
        put(w, "%s  # not in the log (%s): an assumption to replace\n", assumed, what);
    } else {
        char c[300];
        snprintf(c, sizeof c, "%s%s%s%s", what, per_1k > 0 ? ", less the context's share "
                 "(per_1k_context, from llama-bench's rows" : "", per_1k > 0 ? ")" : "",
                 cut ? " (under 1 us taken as 1 us)" : "");
        if (per_1k > 0 && tm->per_1k_line[which - 2] > 0)
            snprintf(c + strlen(c), sizeof c - strlen(c), "; per_1k_context from line %u on",
                     tm->per_1k_line[which - 2]);
        scn__values(w, v, n, flow ? "us" : "", flow ? close : "", line, c);
    }
    free(v);
    return SIM_OK;
}

/* The weights by kind: the mapped buffer less what was repacked or
 * uploaded (those tensors' pages are read once, at load); the repacked
 * ones (a copied file's weights are the load's copy, not counted again);
 * the accelerator's. */
static void write_weights(const llama_log *l, out *w, int mapped)
{
    double repack = l->repack.v, gpu = l->model[MDL_CAT_GPU].v;
    double file = l->file_gib.line ? l->file_gib.v * 1024.0 : l->model[MDL_CAT_FILE].v;
    double hot = file - repack - gpu; /* the tensors left to read from the file */
    if (hot > l->model[MDL_CAT_FILE].v)
        hot = l->model[MDL_CAT_FILE].v; /* ... within what is mapped */
    if (!mapped || hot < 0)
        hot = 0;
    put(w, "      weights:\n        mapped: %" PRId64 "KiB", scn__kib_of(hot * MIB));
    scn__from(w, l->model[MDL_CAT_FILE].line,
              mapped ? "the weights (file size) less the repacked and uploaded ones, whose mapped "
                       "pages are read at load only, within the mapped buffer (an assumption "
                       "from llama.cpp's buffer layout)"
                     : "no mapped buffer: nothing is read from the file after the load");
    put(w, "        repacked: %" PRId64 "KiB", scn__kib_of((mapped ? repack : 0) * MIB));
    scn__from(w, l->repack.line,
              mapped ? "the CPU_REPACK (CPU_AARCH64) buffers: weights laid out again"
                     : "0: without mmap the load copies the whole file (load.mode: copy), "
                       "the repacked buffers within it");
    put(w, "        gpu: %" PRId64 "KiB", scn__kib_of(gpu * MIB));
    scn__from(w, l->model[MDL_CAT_GPU].line, "the accelerator's model buffers");
    put(w, "        locked: false  # the log does not say (--mlock prints nothing)\n");
}

/* The part's requests as tokens (the log's context, KV, compute, times). */
static int write_generation(const llama_log *l, out *w, int mapped, int gpu,
                            const llama_times *tm)
{
    char c[300];
    put(w, "    prepare:\n      time: 0us  # not timed apart: inside the load time; the "
           "weights below are held from the load\n");
    if (gpu)
        put(w, "    delegate_prepare:\n      time: 0us  # not timed apart: inside the load "
               "time; its failure rates are not in the log\n");
    put(w, "    generation:\n");
    int rc = request_values(w, "prompt_tokens: ", l->more, 0, "the log's prompt: replace with your "
                   "traffic's", "300", tm);
    if (rc == SIM_OK)
        rc = request_values(w, "output_tokens: ", l->more, 1, "the log's decoded tokens: replace with "
                   "your traffic's", "150", tm);
    put(w, "      context: %.0f", l->n_ctx.v);
    scn__from(w, l->n_ctx.line, "n_ctx");
    double kv = kv_total(l), per = round(kv * MIB / l->n_ctx.v);
    put(w, "      kv_per_token: %.0fB", per < 1 ? 1 : per);
    snprintf(c, sizeof c, "the KV buffers summed (%.2f MiB) over n_ctx", kv);
    scn__from(w, first_line(l->kv, MDL_CAT_COUNT), c);
    put(w, "      kv: reserved  # llama.cpp clears its KV buffers when it makes them: every "
           "page written at once\n");
    unsigned slots = l->n_seq.line ? (unsigned)l->n_seq.v : 1;
    if (slots > MDL_GEN_SLOTS_MAX)
        slots = MDL_GEN_SLOTS_MAX;
    if (slots > (unsigned)l->n_ctx.v)
        slots = (unsigned)l->n_ctx.v; /* a region holds a token at least */
    put(w, "      slots: %u", slots);
    scn__from(w, l->n_seq.line, l->n_seq.line ? (l->n_seq.v > MDL_GEN_SLOTS_MAX
                                                     ? "n_seq_max, cut to oomsim's 8"
                                                     : "n_seq_max (n_parallel)")
                                              : "not in the log: one sequence assumed");
    if (rc == SIM_OK)
        rc = request_values(w, "prefill: {per_token: ", l->more, 2, tm->speed != 1
                   ? "prompt eval time over its tokens, times --speed-of's speed"
                   : "prompt eval time over its tokens, at the log's phone's speed", NULL, tm);
    if (rc == SIM_OK)
        rc = request_values(w, "decode: {per_token: ", l->more, 3, tm->speed != 1
                   ? "eval time over its runs, times --speed-of's speed"
                   : "eval time over its runs, at the log's phone's speed", NULL, tm);
    if (tm->per_1k_decode <= 0 || tm->per_1k_prefill <= 0)
        put(w, "      # per_1k_context: %s: a token's time here does not grow with the context, "
               "an assumption (llama-bench -d 0,4096 appended to the log measures it)\n",
            tm->clamped[0] || tm->clamped[1] ? "llama-bench's rows give a slope under 0 (their "
            "noise), not used" : "not in the log for prefill and decode both");
    put(w, "      # weights_speed: not in the log: every kind of weights at speed 1, an "
           "assumption (a run with and one without the repacking measure it)\n");
    llm__write_attention(l->more, w);
    write_weights(l, w, mapped);
    llm__write_layers(l->more, w, l->model[MDL_CAT_GPU].v, l->model[MDL_CAT_GPU].line,
                      l->build.line ? l->build.v : 0);
    double compute = 0, output = 0;
    for (int k = 0; k < MDL_CAT_COUNT; k++) {
        compute += l->compute[k].v;
        output += l->output[k].v;
    }
    put(w, "      compute: %" PRId64 "KiB", scn__kib_of((compute + output) * MIB));
    snprintf(c, sizeof c, compute + output > 0 || !l->mem_required.line
             ? "the compute buffers (%.2f MiB) and the output buffer (%.2f MiB)"
             : "not printed apart: before b1289 the scratch buffers are in 'mem required', "
               "counted with the weights above (%.0f, %.0f)", compute, output);
    scn__from(w, first_line(l->compute, MDL_CAT_COUNT), c);
    put(w, "      keep_context: true  # a chat: the conversation stays in the KV (assumed)\n");
    return rc;
}

/* Without tokens: each request's time as the log ran it (prompt eval and
 * eval), or, not in the log, left to the user: the loader names it. */
static int request_time(out *w, const llama_more *m, const llama_times *tm)
{
    double *v = malloc((m->nreq + 1) * sizeof *v);
    if (v == NULL)
        return SIM_ENOMEM;
    for (size_t k = 0; k < m->nreq; k++)
        v[k] = round((m->req[k].prompt_ms + m->req[k].eval_ms) * 1000.0 * tm->speed);
    if (m->nreq > 0 && tm->foreign != NULL) {
        put(w, "      # time: REQUIRED, %s:%u: %.0f us on %s, not a phone: measure on one, or "
               "give --speed-of DEVICE\n", w->name, m->req[0].line, v[0], tm->foreign);
    } else if (m->nreq == 0) {
        put(w, "      # time: REQUIRED, not in the log (no prompt eval or eval time line): "
               "a request's time, to fill in\n");
    } else {
        put(w, "      time: ");
        scn__values(w, v, m->nreq, "us", "", m->req[0].line, "a request: prompt eval and "
                    "eval time, as the log ran it");
    }
    free(v);
    return SIM_OK;
}

/* The header: what the log is, how it was read, what it dropped. */
static void write_header(const llama_log *l, out *w)
{
    put(w, "# oomsim import llama-cpp: a candidate from llama.cpp's load log (%s).\n"
           "# Buffers by backend: a _Mapped buffer is the mmapped GGUF file (file pages),\n"
           "# CPU and Host buffers native memory, any other backend's gpu. llama.cpp\n"
           "# prints MiB. Not in the log, to fill in: the digest, the runtime version,\n"
           "# the delegate's failure rates; the KV cache is taken at the context size the\n"
           "# log ran with.\n", w->name);
    if (l->from_table)
        put(w, "# The sizes come from the memory breakdown table (model, context,\n"
               "# compute per device); the table does not tell mapped from copied weights.\n");
    else if (l->table_line && l->table_kinds == 0)
        put(w, "# %s:%u: the memory breakdown table: read, not used: the buffer lines give\n"
               "# the model, the context and compute.\n", w->name, l->table_line);
    else if (l->table_line)
        put(w, "# %s:%u: the memory breakdown table: %s%s%staken from it (the log has no\n"
               "# such buffer lines); its other rows read, not used: the buffer lines give them.\n",
            w->name, l->table_line, l->table_kinds & 1 ? "the model, " : "",
            l->table_kinds & 2 ? "the context (KV), " : "", l->table_kinds & 4 ? "compute " : "");
    if (l->build.line)
        put(w, "# %s:%u: llama.cpp build %.0f.\n", w->name, l->build.line, l->build.v);
    if (l->more->nreq == 0)
        put(w, "# No prompt eval or eval time line: the requests' times are left REQUIRED,\n"
               "# to fill in (the loader names each); none is made up.\n");
    if (l->mem_required.line && l->model[MDL_CAT_FILE].line + l->model[MDL_CAT_NATIVE].line)
        put(w, "# The 2023 form: the weights from 'mem required' (%.2f MiB) less 'ggml ctx\n"
               "# size' (%.2f MiB, the weights themselves only when copied), the KV from 'kv\n"
               "# self size', compute from 'compute buffer total size'.\n", l->mem_required.v,
            l->ctx_size.v);
    if (l->assumed_mapped)
        put(w, "# ASSUMED that the weights are mapped, llama.cpp's default: the log does\n"
               "# not say mmap = true or false%s. A log run with --no-mmap imports as a copy.\n",
            l->plain_cpu ? ", and from b1843 to b3989 a mapped buffer\n# printed as 'CPU', "
                           "like a copy" : "");
    if (l->more->nreq > 1)
        put(w, "# %zu requests in the log (a server's): tokens and per-token times are\n"
               "# drawn from them, each alone (which prompt went with which answer is not\n"
               "# kept).\n", l->more->nreq);
    scn__tally_put(w, "line");
}

/* How the log's times are written: the context's term from llama-bench's
 * rows, --speed-of's speed, or REQUIRED for a server's or desktop's. */
static llama_times times_of(const llama_log *l, const scn_import_opts *o, int gpu)
{
    llama_times tm = {0, 0, {0, 0}, {0, 0}, 1.0, NULL};
    tm.per_1k_prefill = llm__per_1k(l->more, 0, &tm.per_1k_line[0], &tm.clamped[0]);
    tm.per_1k_decode = llm__per_1k(l->more, 1, &tm.per_1k_line[1], &tm.clamped[1]);
    if (o->speed_of != NULL)
        tm.speed = gpu && o->speed_gpu > 0 ? o->speed_gpu : o->speed_cpu > 0 ? o->speed_cpu : 1;
    else if (llm__platform(l->more) == LP_OTHER)
        tm.foreign = l->more->target[0] ? l->more->target : "a server or desktop";
    return tm;
}

/* The load: mapped or copied, and its time. */
static void write_load(const llama_log *l, out *w, int mapped, const llama_times *tm)
{
    put(w, "    load:\n      mode: %s", mapped ? "mmap" : "copy");
    char c[200];
    snprintf(c, sizeof c, "%s, as %s", mapped ? "mapped" : "copied", l->mapped_why);
    scn__from(w, l->mmap.line ? l->mmap.line : mapped ? l->model[MDL_CAT_FILE].line : 0, c);
    if (l->load_ms.line && tm->foreign != NULL) {
        put(w, "      # time: REQUIRED, %s:%u: %.0f ms on %s, not a phone: measure on one, or "
               "give --speed-of DEVICE\n", w->name, l->load_ms.line, l->load_ms.v, tm->foreign);
    } else if (l->load_ms.line) {
        put(w, "      time: %.0fus", round(l->load_ms.v * 1000.0 * tm->speed));
        scn__from(w, l->load_ms.line, tm->speed != 1 ? "load time, times --speed-of's speed"
                                                     : "load time");
    } else {
        put(w, "      # time: REQUIRED, not in the log (no load time line): the load's time, "
               "to fill in\n");
    }
}

static int write_llama(void *state, const scn_import_opts *o, out *w, sim_error *err)
{
    const llama_log *l = state;
    int mapped = l->model[MDL_CAT_FILE].v > 0;
    int gpu = l->model[MDL_CAT_GPU].v > 0 || l->compute[MDL_CAT_GPU].v > 0;
    int npu = strcmp(l->more->backend, "HTP") == 0;
    llama_times tm = times_of(l, o, gpu);
    write_header(l, w);
    llm__write_where(l->more, w, o->speed_of);
    put(w, "id: %s\nabout: \"measured from a llama.cpp load log\"\ndigest: \"0\"\n"
           "runtime: llama.cpp\n", o->id != NULL ? o->id : "imported");
    llm__write_measured_on(l->more, w, l->build.line ? l->build.v : 0, o->speed_of);
    if (gpu)
        put(w, "delegate: %s  # %s\nfallback: cpu  # assumed\n", npu ? "npu" : "gpu",
            npu ? "the Hexagon NPU's backend (HTP) holds buffers, in shared memory counted as "
                  "the accelerator's"
                : "an accelerator backend holds buffers");
    put(w, "parts:\n  %s:\n", o->part != NULL ? o->part : "model");
    double file = mapped ? l->model[MDL_CAT_FILE].v * MIB : l->file_gib.v * 1073741824.0;
    int host_copy = !mapped && !l->file_gib.line && l->model[MDL_CAT_NATIVE].v > 0;
    if (host_copy)
        file = l->model[MDL_CAT_NATIVE].v * MIB;
    put(w, "    file: %" PRId64 "KiB", scn__kib_of(file));
    l->more->file_bytes = file;
    if (mapped)
        scn__from(w, l->model[MDL_CAT_FILE].line, l->mem_required.line && !l->plain_cpu
                  ? "'mem required' less 'ggml ctx size': the mapped weights (before b1289 the "
                    "scratch buffers too)"
                  : "the mapped model buffer (the GGUF pages the CPU layers read)");
    else if (l->file_gib.line)
        scn__from(w, l->file_gib.line, "the GGUF file size");
    else if (host_copy)
        scn__from(w, l->model[MDL_CAT_NATIVE].line, "the host's model buffer (assumed copied: the "
             "table does not tell mapped from copied weights)");
    else
        scn__from(w, 0, "not in the log: fill in the GGUF file size");
    write_load(l, w, mapped, &tm);
    if (l->n_ctx.line && kv_total(l) > 0) {
        return write_generation(l, w, mapped, gpu, &tm) == SIM_OK
                   ? SIM_OK : sim_error_set(err, SIM_ENOMEM, "out of memory");
    }
    put(w, "    # no n_ctx or KV buffer in the log: one request as the log ran it, no tokens\n");
    measure resident[MDL_CAT_COUNT];
    memset(resident, 0, sizeof resident);
    resident[MDL_CAT_GPU] = l->model[MDL_CAT_GPU];
    if (!mapped)
        resident[MDL_CAT_NATIVE] = (measure){0, 0}; /* copied weights: the load's own */
    else
        resident[MDL_CAT_NATIVE] = l->model[MDL_CAT_NATIVE]; /* repacked weights */
    put(w, "    prepare:\n      time: 0us  # not timed apart: inside the load time\n");
    amounts_row(w, "      resident: ", resident, "the model buffers the backends hold "
                "(offloaded or repacked weights)");
    if (gpu)
        put(w, "    delegate_prepare:\n      time: 0us  # not timed apart: inside the load "
               "time; its failure rates are not in the log\n");
    int ws = 0;
    for (int k = 0; k < MDL_CAT_COUNT; k++)
        ws |= k != MDL_CAT_FILE && l->compute[k].v > 0;
    if (l->more->nreq == 0 && !ws) { /* nothing measured: a mapping the loader reads */
        put(w, "    inference: {}  # time: REQUIRED, not in the log (no prompt eval or eval time "
               "line): a request's time, to fill in\n");
    } else {
        put(w, "    inference:\n");
        if (request_time(w, l->more, &tm) != SIM_OK)
            return sim_error_set(err, SIM_ENOMEM, "out of memory");
        amounts_row(w, "      working_set: ", l->compute, "the compute buffers");
    }
    amounts_row(w, "    session: ", l->kv, "the KV cache (a session's state)");
    return SIM_OK;
}

_Static_assert(sizeof(llama_log) <= SCN_IMPORT_STATE_MAX, "the state fits the driver's buffer");

const scn_importer scn__import_llama_cpp = {"llama-cpp", "llama.cpp's load log: a candidate (weights, KV cache, compute)",
    1, sizeof(llama_log), read_llama, write_llama, release_llama};
