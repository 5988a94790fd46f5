/* llama_int.h - what llama_cpp.c (the buffers, the times) and llama_more.c
 * (where the log ran, the context's settings, llama-bench's rows) share of
 * `oomsim import llama-cpp` (docs/imports/llama-cpp.md).  Internal to
 * scenarios/import/. */
#ifndef OOMSIM_LLAMA_INT_H
#define OOMSIM_LLAMA_INT_H

#include "import_int.h"

/* One request's timings: llama_print_timings / llama_perf_context_print
 * print one per run, a server one per request. */
typedef struct llama_req {
    double prompt_ms, prompt_tok, eval_ms, eval_tok; /* eval_tok < 0: no eval line */
    unsigned line, eval_line; /* the prompt's line (or the eval's alone), the eval's */
} llama_req;

/* One llama-bench row: "pp512", "tg128 @ d4096" and its tokens per second. */
typedef struct llama_bench {
    double tps;
    unsigned n, depth, line;
    int gen; /* tg (decode) 1, pp (prompt) 0 */
} llama_bench;

/* Where the log ran, as it says it. */
typedef enum llama_platform {
    LP_UNKNOWN = 0, /* no build line with a target */
    LP_ANDROID,
    LP_IOS,
    LP_OTHER /* a server's or a desktop's: Linux, macOS, Windows, or a CUDA backend */
} llama_platform;

/* What the state cannot hold in its fixed size: the requests, the bench
 * rows, and what llama_more.c reads. */
typedef struct llama_more {
    llama_req *req;
    size_t nreq, cap;
    llama_bench *bench;
    size_t nbench, bcap;
    char target[64];   /* the build line's "for ..." */
    char hardware[64]; /* the accelerator as the log names it */
    char backend[24];  /* the accelerator's backend: Vulkan, OpenCL, Metal, CUDA, HTP, ... */
    unsigned target_line, hardware_line, backend_line;
    measure fa;        /* flash_attn: 0 auto, 1 on, 2 off */
    measure unified;   /* kv_unified: 1 true, 0 false */
    measure n_ctx_seq; /* n_ctx_seq (n_ctx_per_seq before b6931) */
    measure cells;     /* the KV caches' cells, summed over the caches */
    measure kv_k, kv_v; /* the KV's types: 0 f16, 1 q8_0, 2 q4_0, 3 another */
    unsigned caches;   /* the KV size lines */
    measure off_k, off_of; /* "offloaded K/M layers to GPU" (M: n_layer + 1) */
    measure off_rep;       /* "offloading R repeating layers to GPU" */
    unsigned off_out_line; /* "offloading output layer to GPU" */
    double file_bytes;     /* the part's file as written */
    int fa_resolved;   /* fa is what auto resolved to ("set to enabled") */
    int oom;
} llama_more;

/* llama_more.c: one line, 1 when it was used.  The number after `phrase`
 * and its '=' ("prompt eval time     =      11.54 ms"): 1 and *v; 0 when
 * absent; *bad when the '=' has no number.  A request's timing line. */
int llm__value_after(const line_iter *it, const char *phrase, double *v, int *bad);
int llm__timing_line(const line_iter *it, llama_more *m, int *bad, int *oom);
int llm__where_line(const line_iter *it, llama_more *m);
int llm__context_line(const line_iter *it, llama_more *m, int *bad);
int llm__bench_row(const line_iter *it, llama_more *m);
/* A model buffer of backend b[0..n) that is the accelerator's. */
void llm__backend_seen(llama_more *m, const char *b, size_t n, unsigned line);
llama_platform llm__platform(const llama_more *m);

/* The context's term of a time per token, from llama-bench's rows at two
 * depths or more (docs/model.md "Decode and prefill as the context
 * fills"): us per 1,000 cells read, and the first row's line; 0 when the
 * rows do not give it.  gen: decode's (tg rows), else prefill's (pp). */
double llm__per_1k(const llama_more *m, int gen, unsigned *line, int *clamped);
/* The cells a prompt of p tokens from an empty context reads per token, in
 * batches of 512 (llama.cpp's n_ubatch); a decode of o tokens after p
 * prompt tokens reads p + (o + 1) / 2 a token. */
double llm__prefill_cells(double p);

/* The header lines of where the log ran and the context's settings; the
 * generation keys of flash attention and the KV's type; `measured_on`. */
void llm__write_where(const llama_more *m, out *w, const char *speed_of);
void llm__write_attention(const llama_more *m, out *w);
/* The generation's `layers` from the offload lines, the accelerator's
 * model buffers gpu_mib (at line gpu_line) giving a layer's bytes where
 * they hold one kind of layer only. */
void llm__write_layers(const llama_more *m, out *w, double gpu_mib, unsigned gpu_line,
                       double build);
void llm__write_measured_on(const llama_more *m, out *w, double build, const char *speed_of);

#endif /* OOMSIM_LLAMA_INT_H */
