/* llama_more.c - what `oomsim import llama-cpp` reads besides the buffers
 * and the times (docs/imports/llama-cpp.md "Where the log ran"): the build
 * line's target and the accelerator's name, so that a server's or a
 * desktop's log says so; the context's settings (flash attention, the KV's
 * types and cells, n_ctx_seq, kv_unified); llama-bench's rows at several
 * depths, which give the context's term of a token's time. */
#include "llama_int.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_fit.h>

/* ------------------------------------------------------------ helpers */

/* Text of the log for a YAML double-quoted value or a comment: printable
 * ASCII, quotes and backslashes as ', spaces trimmed. */
static void clean_name(char *dst, size_t n, const char *s, size_t len)
{
    while (len > 0 && *s == ' ')
        s++, len--;
    while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\r'))
        len--;
    scn__clean_copy(dst, n, s, len);
    for (char *p = dst; *p; p++)
        if (*p == '"' || *p == '\\')
            *p = '\'';
}

static const char *line_end(const line_iter *it) { return it->s + it->n; }

/* The word after `key` and its '=' ("flash_attn    = auto"), into w. */
static int word_after(const line_iter *it, const char *key, char *w, size_t n)
{
    const char *at = scn__find(it, key), *end = line_end(it);
    if (at == NULL)
        return 0;
    const char *p = at + strlen(key);
    while (p < end && *p == ' ')
        p++;
    if (p >= end || *p != '=')
        return 0;
    for (p++; p < end && *p == ' '; p++)
        ;
    size_t k = 0;
    while (p < end && k + 1 < n && (isalnum((unsigned char)*p) || *p == '_'))
        w[k++] = (char)tolower((unsigned char)*p++);
    w[k] = '\0';
    return k > 0;
}

/* ------------------------------------------------------------ the times */

/* The number after `phrase` and the '=' that follows it, spaces between
 * ("prompt eval time     =      11.54 ms"): 1 and *v; 0 when the phrase
 * or its '=' is absent; *bad when the '=' has no number. */
int llm__value_after(const line_iter *it, const char *phrase, double *v, int *bad)
{
    const char *at = scn__find(it, phrase);
    if (at == NULL)
        return 0;
    const char *p = at + strlen(phrase), *end = it->s + it->n;
    while (p < end && *p == ' ')
        p++;
    if (p >= end || *p != '=')
        return 0;
    p++;
    if (!scn__number_at(&p, end, v) || *v < 0) {
        *bad = 1;
        return 0;
    }
    return 1;
}

/* "... = X ms / N tokens" or "... / N runs": the count after the slash
 * that follows the phrase (a logcat prefix "I/tag" has a slash of its
 * own), -1. */
static double count_after_slash(const line_iter *it, const char *phrase)
{
    line_iter after = *it;
    const char *at = scn__find(it, phrase);
    if (at != NULL) {
        after.s = at;
        after.n = (size_t)(it->s + it->n - at);
    }
    const char *slash = scn__find(&after, "/");
    double r;
    if (slash != NULL) {
        const char *p = slash + 1;
        if (scn__number_at(&p, it->s + it->n, &r))
            return r;
    }
    return -1;
}

/* A request's timing line: a prompt's opens a request, a decode's ("eval
 * time", "generation eval time") closes the open one (or is one of its
 * own).  1 when the line was one. */
int llm__timing_line(const line_iter *it, llama_more *m, int *bad, int *oom)
{
    double v;
    int prompt = scn__find(it, "prompt eval time") != NULL;
    if (!(prompt ? llm__value_after(it, "prompt eval time", &v, bad) : llm__value_after(it, "eval time", &v, bad)))
        return 0;
    llama_req *last = m->nreq > 0 ? &m->req[m->nreq - 1] : NULL;
    if (prompt || last == NULL || last->eval_tok >= 0) {
        if (m->nreq == m->cap) {
            size_t nc = m->cap ? m->cap * 2 : 16;
            llama_req *nr = realloc(m->req, nc * sizeof *nr);
            if (nr == NULL) {
                *oom = 1;
                return 1;
            }
            m->req = nr;
            m->cap = nc;
        }
        last = &m->req[m->nreq++];
        *last = (llama_req){0, -1, 0, -1, it->no, it->no};
    }
    if (prompt) {
        last->prompt_ms = v;
        last->prompt_tok = count_after_slash(it, "prompt eval time");
    } else {
        last->eval_ms = v;
        last->eval_line = it->no;
        last->eval_tok = count_after_slash(it, "eval time");
        if (last->eval_tok < 0)
            last->eval_tok = 0; /* a decode time without its count */
    }
    return 1;
}

/* ------------------------------------------------------------ where */

/* "build: 6500 (a7a98e0f) with <compiler> for <target>": the target. */
static int target_line(const line_iter *it, llama_more *m)
{
    /* before b1289 the target is on a line of its own: "main: built with
     * <compiler> for <target>" */
    if (m->target_line || !(scn__find(it, "build: ") || scn__find(it, "build = ") ||
                            scn__find(it, "built with ")))
        return 0;
    const char *w = scn__find(it, " with "), *f = NULL;
    for (const char *p = w; p != NULL;) { /* the last " for " */
        line_iter rest = *it;
        rest.s = p + 1;
        rest.n = (size_t)(line_end(it) - rest.s);
        const char *q = scn__find(&rest, " for ");
        if (q != NULL)
            f = q;
        p = q;
    }
    if (w == NULL || f == NULL)
        return 0;
    clean_name(m->target, sizeof m->target, f + 5, (size_t)(line_end(it) - f - 5));
    m->target_line = it->no;
    return 1;
}

/* From `from`, the text up to the first of `stop` (or the line's end). */
static void name_until(llama_more *m, const line_iter *it, const char *from, const char *stop)
{
    const char *end = line_end(it), *e = end;
    size_t sl = strlen(stop);
    for (const char *p = from; p + sl <= end; p++)
        if (memcmp(p, stop, sl) == 0) {
            e = p;
            break;
        }
    if (e <= from || m->hardware_line)
        return;
    clean_name(m->hardware, sizeof m->hardware, from, (size_t)(e - from));
    if (m->hardware[0] != '\0')
        m->hardware_line = it->no;
}

/* The accelerator's name, as each backend prints it (the first kept):
 * "ggml_vulkan: 0 = NAME | uma: ...", "ggml_opencl: device: 'NAME'",
 * Metal's "found device: NAME" and "GPU name:   NAME", CUDA's "Device 0:
 * NAME, compute capability", and b6513's "using device DEV (NAME) ...". */
static int hardware_line(const line_iter *it, llama_more *m)
{
    const char *at;
    if ((at = scn__find(it, "ggml_vulkan: ")) != NULL && scn__find(it, " = ") &&
        scn__find(it, " | ")) {
        name_until(m, it, scn__find(it, " = ") + 3, " | ");
    } else if ((at = scn__find(it, "ggml_opencl: device: '")) != NULL) {
        name_until(m, it, at + 22, "'");
    } else if ((at = scn__find(it, "found device: ")) != NULL) {
        name_until(m, it, at + 14, "\n");
    } else if ((at = scn__find(it, "GPU name:")) != NULL) {
        const char *p = at + 9;
        while (p < line_end(it) && *p == ' ')
            p++;
        name_until(m, it, p, "\n");
    } else if ((at = scn__find(it, " Device 0: ")) != NULL && scn__find(it, "compute capability")) {
        name_until(m, it, at + 11, ",");
    } else if ((at = scn__find(it, "using device ")) != NULL) {
        const char *p = memchr(at, '(', (size_t)(line_end(it) - at)), *end = line_end(it);
        if (p == NULL)
            return 0;
        int depth = 0;
        const char *q = p;
        for (; q < end; q++) /* the description may hold parentheses: "Adreno (TM) 750" */
            if (*q == '(')
                depth++;
            else if (*q == ')' && --depth == 0)
                break;
        if (q >= end)
            return 0;
        if (!m->hardware_line) {
            clean_name(m->hardware, sizeof m->hardware, p + 1, (size_t)(q - p - 1));
            m->hardware_line = m->hardware[0] ? it->no : 0;
        }
    } else {
        return 0;
    }
    return 1;
}

/* load_tensors' offload lines (src/llama-model.cpp, load_tensors). */
static int offload_line(const line_iter *it, llama_more *m)
{
    const char *at = scn__find(it, "offloaded ");
    const char *end = it->s + it->n;
    double k, of;
    if (at != NULL && scn__find(it, " layers to GPU")) {
        const char *p = at + 10;
        if (!scn__number_at(&p, end, &k) || p >= end || *p != '/')
            return 0;
        p++;
        if (!scn__number_at(&p, end, &of) || of < 1 || of > MDL_GEN_LAYERS_MAX + 1 || k < 0 ||
            k > of || k != floor(k) || of != floor(of))
            return 0;
        scn__set(&m->off_k, k, it->no);
        scn__set(&m->off_of, of, it->no);
        return 1;
    }
    if ((at = scn__find(it, "offloading ")) != NULL && scn__find(it, " repeating layers")) {
        const char *p = at + 11;
        if (!scn__number_at(&p, end, &k) || k < 0 || k > MDL_GEN_LAYERS_MAX)
            return 0;
        scn__set(&m->off_rep, floor(k), it->no);
        return 1;
    }
    if (scn__find(it, "offloading output layer to GPU")) {
        m->off_out_line = it->no;
        return 1;
    }
    return 0;
}

int llm__where_line(const line_iter *it, llama_more *m)
{
    int t = target_line(it, m);
    t |= offload_line(it, m);
    return hardware_line(it, m) | t;
}

/* llama.cpp's build 7467 (57c1e0564) offloads the output layer first. */
#define LLM_OUTPUT_FIRST_BUILD 7467

void llm__write_layers(const llama_more *m, out *w, double gpu_mib, unsigned gpu_line,
                       double build)
{
    if (!m->off_of.line)
        return;
    uint32_t count = (uint32_t)m->off_of.v - 1, k = (uint32_t)m->off_k.v;
    int out_on = m->off_out_line > 0;
    /* the log's own lines say the order when not every layer went; else the build */
    int first = k <= count ? out_on : build <= 0 || build >= LLM_OUTPUT_FIRST_BUILD;
    char c[240];
    if (gpu_mib <= 0 && k > 0) {
        put(w, "      # layers: {count: %u, offloaded: %u}: %s:%u, but no accelerator's model "
               "buffer of its own (Metal maps the file): give layers.bytes and layers.output to "
               "use gpu_layers\n", count, k, w->name, m->off_k.line);
        return;
    }
    put(w, "      layers:\n        count: %u", count);
    scn__from(w, m->off_of.line, "n_layer: the layers offloadable, less the output layer");
    put(w, "        offloaded: %u", k);
    scn__from(w, m->off_k.line, "n_gpu_layers, as the log ran");
    put(w, "        order: %s", first ? "output_first" : "output_last");
    scn__from(w, k <= count && k > 0 ? (out_on ? m->off_out_line : m->off_k.line) : 0,
              k <= count && k > 0
                  ? (out_on ? "the output layer offloaded before every repeating one"
                            : "the output layer not offloaded with some repeating ones")
              : build > 0 ? "by the build: 7467 (57c1e0564) and later offload the output first"
                          : "the build is not in the log: today's llama.cpp assumed");
    uint32_t r = m->off_rep.line ? (uint32_t)m->off_rep.v : 0;
    int out_gpu = first ? k >= 1 : k > count;
    if (!m->off_rep.line)
        r = first ? (k >= 1 ? k - 1 : 0) : (k < count ? k : count);
    /* the loader holds the layers within the file and the GPU's buffers */
    double room = m->file_bytes + gpu_mib * MIB;
    uint32_t implied = first ? (k >= 1 ? k - 1 : 0) : (k < count ? k : count);
    if (k > 0 && r != implied) { /* the loader moves `implied`: bytes from r would not fit */
        put(w, "        # bytes: the log offloads %u repeating layers where its %u layers in "
               "this order make %u: the counts disagree, not used\n", r, k, implied);
    } else if (k > 0 && r > 0 && !out_gpu && floor(gpu_mib * 1024.0 / r) * 1024.0 * count > room) {
        put(w, "        # bytes: %u layers of the accelerator's %.2f MiB / %u exceed the file and "
               "that buffer: the log's counts disagree, not used\n", count, gpu_mib, r);
    } else if (k > 0 && r > 0 && !out_gpu) {
        put(w, "        bytes: %.0fKiB", floor(gpu_mib * 1024.0 / r));
        snprintf(c, sizeof c, "the accelerator's model buffers (%.2f MiB) over the %u repeating "
                 "layers on it", gpu_mib, r);
        scn__from(w, gpu_line, c);
        put(w, "        # output: not in the log: the output layer's weights (a tied "
               "embedding's copy), to give before gpu_layers offloads it\n");
    } else if (k > 0 && r == 0 && out_gpu && gpu_mib * MIB <= room) {
        put(w, "        output: %" PRId64 "KiB", scn__kib_of(gpu_mib * MIB));
        scn__from(w, gpu_line, "the accelerator's model buffers: the output layer alone");
        put(w, "        # bytes: not in the log: one repeating layer's weights, to give before "
               "gpu_layers moves one\n");
    } else if (k > 0) {
        put(w, "        # bytes, output: not apart in the log: the accelerator's %.2f MiB hold "
               "the output layer and the repeating ones together; give them to use "
               "gpu_layers\n", gpu_mib);
    } else {
        put(w, "        # bytes, output: not in the log (nothing offloaded): give them to use "
               "gpu_layers\n");
    }
    put(w, "        # tied: not in the log: true when the output layer is the token embedding's "
           "copy (the CPU then keeps the embedding)\n");
}

void llm__backend_seen(llama_more *m, const char *b, size_t n, unsigned line)
{
    static const char *const known[][2] = {{"Vulkan", "Vulkan"}, {"OpenCL", "OpenCL"},
                                           {"MTL", "Metal"},     {"Metal", "Metal"},
                                           {"CUDA", "CUDA"},     {"HTP", "HTP"},
                                           {"ROCm", "ROCm"},     {"SYCL", "SYCL"},
                                           {"CANN", "CANN"}};
    if (m->backend_line)
        return;
    for (size_t k = 0; k < sizeof known / sizeof *known; k++) {
        size_t kl = strlen(known[k][0]);
        if (n >= kl && memcmp(b, known[k][0], kl) == 0) {
            snprintf(m->backend, sizeof m->backend, "%s", known[k][1]);
            m->backend_line = line;
            return;
        }
    }
    /* another backend (RPC, MUSA, ...), or from b3204 to b3932 Vulkan's
     * buffers under the GPU's own name ("Mali-G720"): kept as printed */
    clean_name(m->backend, sizeof m->backend, b, n);
    m->backend_line = line;
}

/* A phone's target names Android or iOS (the compiler's triple before
 * b7278, "Android aarch64" or "iOS arm64" from it); any other target is a
 * server's or a desktop's, and so is a CUDA backend. */
llama_platform llm__platform(const llama_more *m)
{
    char low[64];
    size_t k = 0;
    for (; m->target[k] && k + 1 < sizeof low; k++)
        low[k] = (char)tolower((unsigned char)m->target[k]);
    low[k] = '\0';
    if (strcmp(m->backend, "CUDA") == 0 || strcmp(m->backend, "ROCm") == 0)
        return LP_OTHER;
    if (strstr(low, "android") != NULL)
        return LP_ANDROID;
    if (strstr(low, "apple-ios") != NULL || strncmp(low, "ios", 3) == 0)
        return LP_IOS;
    return m->target_line ? LP_OTHER : LP_UNKNOWN;
}

/* ------------------------------------------------------------ the context */

static int kv_type_of(const line_iter *it, const char *key, measure *m)
{
    const char *at = scn__find(it, key), *end = line_end(it);
    if (at == NULL)
        return 0;
    const char *p = at + strlen(key), *q = p;
    while (q < end && *q != ')')
        q++;
    size_t n = (size_t)(q - p);
    double t = n == 3 && memcmp(p, "f16", 3) == 0    ? 0
               : n == 4 && memcmp(p, "q8_0", 4) == 0 ? 1
               : n == 4 && memcmp(p, "q4_0", 4) == 0 ? 2
                                                     : 3;
    if (m->line == 0 || t > m->v)
        scn__set(m, t, it->no);
    return 1;
}

/* "llama_kv_cache: size =  112.00 MiB (  4096 cells,  28 layers,  1/1
 * seqs), K (f16):   56.00 MiB, V (f16):   56.00 MiB" (b4464 on; one line a
 * cache): the cells, the K and V types. */
static int kv_size_line(const line_iter *it, llama_more *m)
{
    const char *c = scn__find(it, " cells,");
    if (c == NULL || !scn__find(it, "size ="))
        return 0;
    const char *p = c;
    while (p > it->s && p[-1] == ' ')
        p--;
    while (p > it->s && isdigit((unsigned char)p[-1]))
        p--;
    double cells;
    const char *q = p;
    if (!scn__number_at(&q, c, &cells) || cells < 1 || cells > 1e9)
        return 0;
    scn__set(&m->cells, m->cells.v + cells, m->cells.line ? m->cells.line : it->no);
    m->caches++;
    kv_type_of(it, "K (", &m->kv_k);
    kv_type_of(it, "V (", &m->kv_v);
    return 1;
}

int llm__context_line(const line_iter *it, llama_more *m, int *bad)
{
    char w[16];
    double v;
    /* "Flash Attention was auto, set to enabled": auto as it resolved */
    const char *res = scn__find(it, "Flash Attention was auto, set to ");
    if (res != NULL) {
        int on = scn__find(it, "set to enabled") != NULL;
        if (!on && scn__find(it, "set to disabled") == NULL)
            return 0;
        scn__set(&m->fa, on ? 1 : 2, it->no);
        m->fa_resolved = 1;
        return 1;
    }
    if (word_after(it, " flash_attn ", w, sizeof w) && !m->fa_resolved) {
        /* "auto" (b6325 on), "enabled"/"disabled", or 1/0 before */
        int on = strcmp(w, "1") == 0 || strcmp(w, "true") == 0 || strcmp(w, "enabled") == 0 ||
                 strcmp(w, "on") == 0;
        int off = strcmp(w, "0") == 0 || strcmp(w, "false") == 0 ||
                  strcmp(w, "disabled") == 0 || strcmp(w, "off") == 0;
        if (!on && !off && strcmp(w, "auto") != 0)
            return 0;
        scn__set(&m->fa, on ? 1 : off ? 2 : 0, it->no);
        return 1;
    }
    if (word_after(it, " kv_unified ", w, sizeof w)) {
        scn__set(&m->unified, strcmp(w, "true") == 0 || strcmp(w, "1") == 0, it->no);
        return 1;
    }
    if (llm__value_after(it, " n_ctx_seq ", &v, bad) ||
        llm__value_after(it, " n_ctx_per_seq ", &v, bad)) {
        if (m->n_ctx_seq.line == 0)
            scn__set(&m->n_ctx_seq, v, it->no);
        return 1;
    }
    return kv_size_line(it, m);
}

/* ------------------------------------------------------------ llama-bench */

/* "| model | size | ... | tg128 @ d4096 | 38.00 ± 0.20 |": a cell that is
 * a test (pp N or tg N, "@ dM" at a depth) and the last cell's number. */
int llm__bench_row(const line_iter *it, llama_more *m)
{
    const char *s = it->s, *end = line_end(it);
    while (s < end && *s == ' ')
        s++;
    if (s >= end || *s != '|')
        return 0;
    llama_bench b = {0, 0, 0, it->no, 0};
    int have_test = 0;
    const char *last = NULL;
    for (const char *cell = s + 1; cell < end;) {
        const char *bar = memchr(cell, '|', (size_t)(end - cell));
        if (bar == NULL)
            break;
        const char *p = cell;
        while (p < bar && *p == ' ')
            p++;
        if (bar - p >= 3 && (memcmp(p, "pp", 2) == 0 || memcmp(p, "tg", 2) == 0) &&
            isdigit((unsigned char)p[2])) {
            b.gen = p[0] == 't';
            char *e;
            unsigned long n = strtoul(p + 2, &e, 10), d = 0;
            int depth_ok = 1;
            while (e < bar && *e == ' ')
                e++;
            if (e < bar - 1 && *e == '@') {
                for (e++; e < bar && *e == ' '; e++)
                    ;
                /* "@ d4096": digits after the d, or not a test */
                if (e + 1 < bar && *e == 'd' && isdigit((unsigned char)e[1]))
                    d = strtoul(e + 1, &e, 10);
                else
                    depth_ok = 0;
                while (e < bar && *e == ' ')
                    e++;
            }
            if (depth_ok && e == bar && n > 0 && n <= 1000000 && d <= MDL_GEN_CONTEXT_MAX) {
                b.n = (unsigned)n;
                b.depth = (unsigned)d;
                have_test = 1;
            }
        }
        if (bar > p)
            last = p;
        cell = bar + 1;
    }
    double tps;
    const char *q = last;
    if (!have_test || q == NULL || !scn__number_at(&q, end, &tps) || !(tps > 0) || tps > 1e7)
        return 0;
    b.tps = tps;
    if (m->nbench == m->bcap) {
        size_t nc = m->bcap ? m->bcap * 2 : 16;
        llama_bench *nb = realloc(m->bench, nc * sizeof *nb);
        if (nb == NULL) {
            m->oom = 1;
            return 1;
        }
        m->bench = nb;
        m->bcap = nc;
    }
    m->bench[m->nbench++] = b;
    return 1;
}

double llm__prefill_cells(double p)
{
    /* m batches of 512 and a last of c: each batch's tokens read what
     * precedes the batch and the batch */
    double b = 512, full = floor(p / b), c = p - full * b;
    return p > 0 ? (b * b * full * (full + 1) / 2 + c * (full * b + c)) / p : 0;
}

double llm__per_1k(const llama_more *m, int gen, unsigned *line, int *clamped)
{
    double x[64], y[64];
    size_t n = 0;
    unsigned lo = UINT32_MAX, hi = 0;
    *line = 0;
    *clamped = 0;
    for (size_t k = 0; k < m->nbench && n < 64; k++) {
        const llama_bench *b = &m->bench[k];
        if (b->gen != gen)
            continue;
        /* the cells a token reads, on average over the row's tokens */
        x[n] = b->depth + (gen ? (b->n + 1) / 2.0 : llm__prefill_cells(b->n));
        y[n++] = 1e6 / b->tps; /* us a token */
        lo = b->depth < lo ? b->depth : lo;
        hi = b->depth > hi ? b->depth : hi;
        if (*line == 0)
            *line = b->line;
    }
    if (n < 2 || hi == lo)
        return 0; /* one depth: no slope */
    double c0, c1, cov00, cov01, cov11, ss;
    gsl_fit_linear(x, 1, y, 1, n, &c0, &c1, &cov00, &cov01, &cov11, &ss);
    if (!(c1 > 0)) {
        *clamped = 1;
        return 0;
    }
    return c1 * 1000.0;
}

/* ------------------------------------------------------------ writing */

static const char *const platforms[] = {"unknown", "android", "ios", "other"};

void llm__write_where(const llama_more *m, out *w, const char *speed_of)
{
    llama_platform pf = llm__platform(m);
    if (m->target_line)
        put(w, "# %s:%u: built for %s.\n", w->name, m->target_line, m->target);
    if (m->hardware_line)
        put(w, "# %s:%u: the accelerator: %s (%s).\n", w->name, m->hardware_line, m->hardware,
            m->backend[0] ? m->backend : "its backend not in the buffers");
    if (pf == LP_OTHER && speed_of == NULL)
        put(w, "# NOT A PHONE: this log ran on a server or a desktop (%s). Its times are\n"
               "# that machine's, not the reference phone's: they are left REQUIRED below,\n"
               "# the log's figure in each comment. Give --speed-of DEVICE to take them as the\n"
               "# times of a phone as fast as DEVICE (scaled to the reference phone), or measure\n"
               "# on a phone.\n",
            m->target[0] ? m->target : m->backend[0] ? m->backend : "its backend");
    else if (pf == LP_OTHER)
        put(w, "# NOT A PHONE: this log ran on a server or a desktop (%s); its times are\n"
               "# taken as those of a phone as fast as %s (--speed-of), scaled to the\n"
               "# reference phone by %s's speed.\n",
            m->target, speed_of, speed_of);
    else if (pf == LP_UNKNOWN)
        put(w, "# Where the log ran is not in it (no build line with a target): its times are\n"
               "# taken as the reference phone's; check that it is a phone's.\n");
    if (m->unified.line && m->unified.v > 0)
        put(w, "# %s:%u: kv_unified = true: every sequence may use all of n_ctx's cells;\n"
               "# oomsim gives each slot n_ctx / slots (docs/model.md \"Token generation\").\n",
            w->name, m->unified.line);
    if (m->n_ctx_seq.line)
        put(w, "# %s:%u: n_ctx_seq %.0f (the cells one sequence may use).\n", w->name,
            m->n_ctx_seq.line, m->n_ctx_seq.v);
    if (m->caches > 0)
        put(w, "# %s:%u: the KV caches hold %.0f cells in %u cache%s (a sliding-window model's\n"
               "# second cache holds fewer).\n",
            w->name, m->cells.line, m->cells.v, m->caches, m->caches > 1 ? "s" : "");
    if (m->nbench > 0)
        put(w, "# %zu llama-bench rows (pp/tg at their depths): the context's term of a\n"
               "# token's time (per_1k_context) where two depths or more give it.\n",
            m->nbench);
    (void)platforms;
}

void llm__write_attention(const llama_more *m, out *w)
{
    static const char *const fas[] = {"auto", "on", "off"};
    static const char *const types[] = {"f16", "q8_0", "q4_0"};
    if (m->fa.line) {
        put(w, "      flash_attn: %s", fas[(int)m->fa.v]);
        scn__from(w, m->fa.line, "flash_attn, as the context was made");
    }
    if (m->kv_v.line && m->kv_v.v < 3) {
        char c[160];
        snprintf(c, sizeof c, "the V cache's type%s", m->kv_k.v != m->kv_v.v
                 ? " (K's differs: oomsim keeps one type for both, V's, which flash attention "
                   "needs)"
                 : ", K's the same");
        put(w, "      kv_type: %s", types[(int)m->kv_v.v]);
        scn__from(w, m->kv_v.line, c);
    }
}

void llm__write_measured_on(const llama_more *m, out *w, double build, const char *speed_of)
{
    put(w, "measured_on:\n  platform: %s", platforms[llm__platform(m)]);
    scn__from(w, m->target_line, m->target_line ? "the build line's target"
                                                : "no build line with a target");
    if (m->target_line)
        put(w, "  target: \"%s\"\n", m->target);
    put(w, "  backend: \"%s\"\n", m->backend[0] ? m->backend : "CPU");
    if (m->hardware_line)
        put(w, "  hardware: \"%s\"\n", m->hardware);
    if (build > 0)
        put(w, "  build: %.0f\n", build);
    if (speed_of != NULL)
        put(w, "  speed_of: %s  # --speed-of: the times scaled by its speed\n", speed_of);
}
