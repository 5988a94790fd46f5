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
    measure file_gib, load_ms, prompt_ms, eval_ms, eval_runs;
    int from_table; /* the sizes came from the memory breakdown table */
} llama_log;

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
 * <what>. */
static int buffer_line(const line_iter *it, const char *what, measure *m, int *bad)
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
        double v;
        any_buffer |= buffer_line(&it, "model buffer size", l->model, &bad);
        any_buffer |= buffer_line(&it, "KV buffer size", l->kv, &bad);
        any_buffer |= buffer_line(&it, "compute buffer size", l->compute, &bad);
        if (!scn__find(&it, "model buffer size") && !scn__find(&it, "KV buffer size") &&
            !scn__find(&it, "compute buffer size") && scn__find(&it, "load_tensors:") &&
            scn__find(&it, " buffer size ="))
            any_buffer |= buffer_line(&it, "buffer size =", l->model, &bad);
        if ((scn__find(&it, "file size") || scn__find(&it, "model size")) &&
            (scn__find(&it, " GiB") || scn__find(&it, " MiB")) &&
            (scn__number_after(&it, "file size   =", &v, &bad) ||
             scn__number_after(&it, "model size       =", &v, &bad) ||
             scn__number_after(&it, "file size =", &v, &bad) ||
             scn__number_after(&it, "model size =", &v, &bad)))
            scn__set(&l->file_gib, scn__find(&it, " GiB") ? v : v / 1024.0, it.no);
        if (scn__find(&it, "load time =") && scn__number_after(&it, "load time =", &v, &bad))
            scn__set(&l->load_ms, v, it.no);
        if (scn__find(&it, "prompt eval time =")) {
            if (scn__number_after(&it, "prompt eval time =", &v, &bad))
                scn__set(&l->prompt_ms, v, it.no);
        } else if (scn__find(&it, "eval time =") && scn__number_after(&it, "eval time =", &v, &bad)) {
            scn__set(&l->eval_ms, v, it.no);
            double r;
            const char *slash = scn__find(&it, "/");
            if (slash != NULL) {
                const char *p = slash + 1;
                if (scn__number_at(&p, it.s + it.n, &r))
                    scn__set(&l->eval_runs, r, it.no);
            }
        }
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
