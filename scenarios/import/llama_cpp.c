/* llama_cpp.c - `oomsim import llama-cpp` (docs/imports/llama-cpp.md):
 * llama.cpp's load log to a candidate: the buffers by backend (the mapped
 * file, native, the accelerator's), the KV cache, compute, and the times. */
#include "import_int.h"

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
    measure file_gib, load_ms, prompt_ms, eval_ms, eval_runs, prompt_tokens;
    measure n_ctx, n_seq, mmap;     /* mmap: 1 (true) or 0, as load_tensors said */
    int from_table; /* the sizes came from the memory breakdown table */
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
 * native memory; every other backend (CUDA0, Vulkan0, Metal, MTL0,
 * OpenCL, HTP0, ...) is the accelerator's, gpu. */
static int cat_of_backend(const char *b, size_t n)
{
    if (n >= 7 && memcmp(b + n - 7, "_Mapped", 7) == 0)
        return MDL_CAT_FILE;
    if ((n >= 3 && memcmp(b, "CPU", 3) == 0) || (n >= 4 && memcmp(b, "Host", 4) == 0) ||
        (n >= 9 && memcmp(b + n - 9, "CUDA_Host", 9) == 0))
        return MDL_CAT_NATIVE;
    return MDL_CAT_GPU;
}

/* "BACKEND <what> buffer size = X MiB": the backend is the word before
 * <what>.  A repacking backend's model buffer is counted in *repack too. */
static int buffer_line(const line_iter *it, const char *what, measure *m, measure *repack,
                       int *bad)
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
    if (repack != NULL && repacked_backend(b, (size_t)(e - b)))
        scn__set(repack, repack->v + v, it->no);
    return 1;
}

/* "n_ctx         = 4096", "n_seq_max     = 2": a context parameter, the
 * key alone (not n_ctx_per_seq, n_ctx_train). */
static void context_line(const line_iter *it, const char *key, measure *m, int *bad)
{
    const char *at = scn__find(it, key);
    if (at == NULL)
        return;
    const char *p = at + strlen(key), *end = it->s + it->n;
    while (p < end && *p == ' ')
        p++;
    if (p == at + strlen(key) || p >= end || *p != '=')
        return;
    p++;
    double v;
    if (!scn__number_at(&p, end, &v))
        *bad = 1;
    else if (m->line == 0) /* the context's own line comes first (a server's slots later) */
        scn__set(m, v, it->no);
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

/* "... / N tokens" or "... / N runs": the count after the slash. */
static void count_after_slash(const line_iter *it, measure *m)
{
    const char *slash = scn__find(it, "/");
    double r;
    if (slash != NULL) {
        const char *p = slash + 1;
        if (scn__number_at(&p, it->s + it->n, &r))
            scn__set(m, r, it->no);
    }
}

/* The file size, the load time, the prompt's and the decode's times and
 * counts. */
static void sizes_and_times(const line_iter *it, llama_log *l, int *bad)
{
    double v;
    if ((scn__find(it, "file size") || scn__find(it, "model size")) &&
        (scn__find(it, " GiB") || scn__find(it, " MiB")) &&
        (scn__number_after(it, "file size   =", &v, bad) ||
         scn__number_after(it, "model size       =", &v, bad) ||
         scn__number_after(it, "file size =", &v, bad) ||
         scn__number_after(it, "model size =", &v, bad)))
        scn__set(&l->file_gib, scn__find(it, " GiB") ? v : v / 1024.0, it->no);
    if (scn__find(it, "load time =") && scn__number_after(it, "load time =", &v, bad))
        scn__set(&l->load_ms, v, it->no);
    if (scn__find(it, "prompt eval time =")) {
        if (scn__number_after(it, "prompt eval time =", &v, bad))
            scn__set(&l->prompt_ms, v, it->no);
        count_after_slash(it, &l->prompt_tokens);
    } else if (scn__find(it, "eval time =") && scn__number_after(it, "eval time =", &v, bad)) {
        scn__set(&l->eval_ms, v, it->no);
        count_after_slash(it, &l->eval_runs);
    }
}

static int read_llama(const scn_import_input *in, unsigned n, const char *name, void *state,
                      sim_error *err)
{
    (void)n; /* one input */
    llama_log *l = state;
    const char *text = in[0].text;
    size_t len = in[0].len;
    memset(l, 0, sizeof *l);
    llama_log table;
    memset(&table, 0, sizeof table);
    line_iter it;
    scn__lines_of(&it, text, len);
    int bad = 0, any_buffer = 0, any_table = 0;
    while (scn__next_line(&it)) {
        any_buffer |= buffer_line(&it, "model buffer size", l->model, &l->repack, &bad);
        any_buffer |= buffer_line(&it, "KV buffer size", l->kv, NULL, &bad);
        any_buffer |= buffer_line(&it, "compute buffer size", l->compute, NULL, &bad);
        (void)buffer_line(&it, "output buffer size", l->output, NULL, &bad);
        context_line(&it, " n_ctx ", &l->n_ctx, &bad);
        context_line(&it, " n_seq_max ", &l->n_seq, &bad);
        if (scn__find(&it, "(mmap = true)"))
            scn__set(&l->mmap, 1, it.no);
        else if (scn__find(&it, "(mmap = false)"))
            scn__set(&l->mmap, 0, it.no);
        if (!scn__find(&it, "model buffer size") && !scn__find(&it, "KV buffer size") &&
            !scn__find(&it, "compute buffer size") && scn__find(&it, "load_tensors:") &&
            scn__find(&it, " buffer size ="))
            any_buffer |= buffer_line(&it, "buffer size =", l->model, &l->repack, &bad);
        sizes_and_times(&it, l, &bad);
        any_table |= breakdown_row(&it, &table);
        if (bad)
            return scn__fail_at(err, name, it.no, "a number that cannot be read");
    }
    for (int c = 0; c < MDL_CAT_COUNT; c++) {
        const measure *ms[6] = {&l->model[c], &l->kv[c], &l->compute[c],
                                &table.model[c], &table.kv[c], &table.compute[c]};
        for (int k = 0; k < 6; k++) {
            int rc = scn__bounded(err, name, ms[k], MIB, 0, "buffers (MiB)");
            if (rc != SIM_OK)
                return rc;
        }
    }
    const measure *ts[3] = {&l->load_ms, &l->prompt_ms, &l->eval_ms};
    for (int k = 0; k < 3; k++) {
        int rc = scn__bounded(err, name, ts[k], 1000, 1, "a time (ms)");
        if (rc != SIM_OK)
            return rc;
    }
    int rcf = scn__bounded(err, name, &l->file_gib, 1073741824.0, 0, "a file size (GiB)");
    if (rcf != SIM_OK)
        return rcf;
    if (l->n_ctx.line && (l->n_ctx.v < 1 || l->n_ctx.v > MDL_GEN_CONTEXT_MAX ||
                          l->n_ctx.v != floor(l->n_ctx.v)))
        return scn__fail_at(err, name, l->n_ctx.line, "n_ctx %.0f is not a context of 1 to %u "
                            "tokens", l->n_ctx.v, MDL_GEN_CONTEXT_MAX);
    if (l->n_seq.line && (l->n_seq.v < 1 || l->n_seq.v != floor(l->n_seq.v) ||
                          l->n_seq.v > 1e6))
        return scn__fail_at(err, name, l->n_seq.line, "n_seq_max %.0f is not a count of "
                            "sequences", l->n_seq.v);
    for (int c = 0; c < MDL_CAT_COUNT; c++) {
        int rc = scn__bounded(err, name, &l->output[c], MIB, 0, "buffers (MiB)");
        if (rc != SIM_OK)
            return rc;
    }
    const measure *counts[2] = {&l->prompt_tokens, &l->eval_runs};
    for (int k = 0; k < 2; k++)
        if (counts[k]->line && (counts[k]->v < 0 || counts[k]->v > MDL_GEN_TOKENS_MAX))
            return scn__fail_at(err, name, counts[k]->line, "%.0f tokens is not a count of "
                                "tokens", counts[k]->v);
    if (!any_buffer && any_table) { /* the table alone: a log cut to its end */
        memcpy(l->model, table.model, sizeof l->model);
        memcpy(l->kv, table.kv, sizeof l->kv);
        memcpy(l->compute, table.compute, sizeof l->compute);
        l->from_table = 1;
    }
    if (!any_buffer && !any_table)
        return scn__fail_at(err, name, 1, "not a llama.cpp log: no 'model buffer size' line and no "
                       "memory breakdown table in its %u lines", it.no);
    return SIM_OK;
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

/* A per-token time: the phase's time over its tokens, as the log ran it. */
static void per_token(out *w, const char *key, const measure *ms, const measure *n,
                      const char *what)
{
    char c[300];
    if (ms->line && n->v > 0) {
        double us = round(ms->v * 1000.0 / n->v);
        snprintf(c, sizeof c, "%s: %.2f ms / %.0f tokens, at the log's phone's speed%s", what,
                 ms->v, n->v, us < 1 ? " (under 1 us: the least a time per token may be)" : "");
        put(w, "      %s: {per_token: %.0fus}", key, us < 1 ? 1 : us);
        scn__from(w, ms->line, c);
    } else {
        snprintf(c, sizeof c, "not in the log (%s): an assumption to replace", what);
        put(w, "      %s: {per_token: %s}", key, key[0] == 'p' ? "1ms" : "50ms");
        scn__from(w, 0, c);
    }
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
static void write_generation(const llama_log *l, out *w, int mapped, int gpu)
{
    char c[300];
    put(w, "    prepare:\n      time: 0us  # not timed apart: inside the load time; the "
           "weights below are held from the load\n");
    if (gpu)
        put(w, "    delegate_prepare:\n      time: 0us  # not timed apart: inside the load "
               "time; its failure rates are not in the log\n");
    put(w, "    generation:\n");
    if (l->prompt_tokens.line) {
        put(w, "      prompt_tokens: %.0f", l->prompt_tokens.v);
        scn__from(w, l->prompt_tokens.line, "the log's prompt: replace with your traffic's");
    } else {
        put(w, "      prompt_tokens: 300  # not in the log: an assumption to replace\n");
    }
    if (l->eval_runs.line) {
        put(w, "      output_tokens: %.0f", l->eval_runs.v);
        scn__from(w, l->eval_runs.line, "the log's decoded tokens: replace with your traffic's");
    } else {
        put(w, "      output_tokens: 150  # not in the log: an assumption to replace\n");
    }
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
    per_token(w, "prefill", &l->prompt_ms, &l->prompt_tokens, "prompt eval time");
    per_token(w, "decode", &l->eval_ms, &l->eval_runs, "eval time");
    write_weights(l, w, mapped);
    double compute = 0, output = 0;
    for (int k = 0; k < MDL_CAT_COUNT; k++) {
        compute += l->compute[k].v;
        output += l->output[k].v;
    }
    put(w, "      compute: %" PRId64 "KiB", scn__kib_of((compute + output) * MIB));
    snprintf(c, sizeof c, "the compute buffers (%.2f MiB) and the output buffer (%.2f MiB)",
             compute, output);
    scn__from(w, first_line(l->compute, MDL_CAT_COUNT), c);
    put(w, "      keep_context: true  # a chat: the conversation stays in the KV (assumed)\n");
    if (l->mmap.line == 0)
        put(w, "      # the log does not say mmap = true or false: %s\n",
            mapped ? "mapped, from its _Mapped buffer" : "copied, as no _Mapped buffer is named");
}

static int write_llama(void *state, const scn_import_opts *o, out *w, sim_error *err)
{
    (void)err;
    const llama_log *l = state;
    char c[400];
    int mapped = l->model[MDL_CAT_FILE].v > 0;
    int gpu = l->model[MDL_CAT_GPU].v > 0 || l->compute[MDL_CAT_GPU].v > 0;
    put(w, "# oomsim import llama-cpp: a candidate from llama.cpp's load log (%s).\n"
           "# Buffers by backend: a _Mapped buffer is the mmapped GGUF file (file pages),\n"
           "# CPU and Host buffers native memory, any other backend's gpu. llama.cpp\n"
           "# prints MiB. Not in the log, to fill in: the digest, the runtime version,\n"
           "# the delegate's failure rates; the KV cache is taken at the context size the\n"
           "# log ran with.\n", w->name);
    if (l->from_table)
        put(w, "# The sizes come from the memory breakdown table (model, context,\n"
               "# compute per device); the table does not tell mapped from copied weights.\n");
    put(w, "id: %s\nabout: \"measured from a llama.cpp load log\"\ndigest: \"0\"\n"
           "runtime: llama.cpp\n", o->id != NULL ? o->id : "imported");
    if (gpu)
        put(w, "delegate: gpu  # an accelerator backend holds buffers\nfallback: cpu  # "
               "assumed\n");
    put(w, "parts:\n  %s:\n", o->part != NULL ? o->part : "model");
    double file = mapped ? l->model[MDL_CAT_FILE].v * MIB : l->file_gib.v * 1073741824.0;
    int host_copy = !mapped && !l->file_gib.line && l->model[MDL_CAT_NATIVE].v > 0;
    if (host_copy)
        file = l->model[MDL_CAT_NATIVE].v * MIB;
    put(w, "    file: %" PRId64 "KiB", scn__kib_of(file));
    if (mapped)
        scn__from(w, l->model[MDL_CAT_FILE].line, "the mapped model buffer (the GGUF pages the "
             "CPU layers read)");
    else if (l->file_gib.line)
        scn__from(w, l->file_gib.line, "the GGUF file size");
    else if (host_copy)
        scn__from(w, l->model[MDL_CAT_NATIVE].line, "the host's model buffer (assumed copied: the "
             "table does not tell mapped from copied weights)");
    else
        scn__from(w, 0, "not in the log: fill in the GGUF file size");
    put(w, "    load:\n      mode: %s", mapped ? "mmap" : "copy");
    scn__from(w, mapped ? l->model[MDL_CAT_FILE].line : 0,
         mapped ? "the weights are mapped (use_mmap)" : "no mapped buffer: the weights are "
                                                        "read into memory");
    put(w, "      time: %.0fus", l->load_ms.v * 1000.0);
    scn__from(w, l->load_ms.line, l->load_ms.line ? "load time" : "not in the log");
    if (l->n_ctx.line && kv_total(l) > 0) {
        write_generation(l, w, mapped, gpu);
        return SIM_OK;
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
    put(w, "    inference:\n      time: ");
    double req_us = (l->prompt_ms.v + l->eval_ms.v) * 1000.0;
    snprintf(c, sizeof c, "one request: prompt eval %.0f ms + eval %.0f ms (%.0f tokens) "
             "as the log ran it", l->prompt_ms.v, l->eval_ms.v, l->eval_runs.v);
    scn__time_dist(w, req_us, 0, 0, 0, l->eval_ms.line ? l->eval_ms.line : l->prompt_ms.line,
              req_us > 0 ? c : "not in the log");
    amounts_row(w, "      working_set: ", l->compute, "the compute buffers");
    amounts_row(w, "    session: ", l->kv, "the KV cache (a session's state)");
    return SIM_OK;
}

_Static_assert(sizeof(llama_log) <= SCN_IMPORT_STATE_MAX, "the state fits the driver's buffer");

const scn_importer scn__import_llama_cpp = {"llama-cpp", "llama.cpp's load log: a candidate (weights, KV cache, compute)",
    1, sizeof(llama_log), read_llama, write_llama, NULL};
