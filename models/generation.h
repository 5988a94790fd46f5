/* generation.h - an LLM part's token generation: the candidate's
 * `generation` block, the policy's axes over it, the buckets its figures
 * are kept in (docs/scenarios.md "generation", docs/model.md "Token
 * generation").  Included by models.h, after mdl_dist and sim_time. */
#ifndef OOMSIM_MODELS_GENERATION_H
#define OOMSIM_MODELS_GENERATION_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct mdl_part;
struct mdl_policy;

/* An LLM part's token generation (docs/scenarios.md "generation";
 * docs/model.md "Token generation").  A request draws its prompt and
 * output tokens; prefill writes the prompt into the KV cache, decode one
 * token at a time, each reading every mapped weight. */
#define MDL_GEN_SLOTS_MAX 8u           /* KV regions (llama.cpp's n_parallel) */
#define MDL_GEN_CONTEXT_MAX (1u << 20) /* tokens */
#define MDL_GEN_TOKENS_MAX (1u << 30)  /* a draw of prompt or output tokens is clamped here */
#define MDL_GEN_KV_MAX 1099511627776.0 /* context x kv_per_token: 1 TiB at most */
typedef enum mdl_kv_mode {
    MDL_KV_TOUCHED = 0, /* resident as tokens are written */
    MDL_KV_RESERVED     /* all of the context, at its creation */
} mdl_kv_mode;
typedef enum mdl_on_full {
    MDL_FULL_TRUNCATE = 0, /* the oldest tokens give way */
    MDL_FULL_RESET,        /* the conversation starts again */
    MDL_FULL_FAIL          /* the request fails */
} mdl_on_full;
/* The KV cache's type (llama.cpp's type_k and type_v, one for both here):
 * bytes per value over f16's 2 are 1, 34/64 (ggml's q8_0 block: 32 values
 * in 34 bytes) and 18/64 (q4_0: 32 in 18). */
typedef enum mdl_kv_type { MDL_KVT_F16 = 0, MDL_KVT_Q8_0, MDL_KVT_Q4_0 } mdl_kv_type;
double mdl_kv_type_scale(mdl_kv_type t);
/* llama.cpp's flash_attn_type: auto resolves to on where the backend runs
 * the fused op on the layer's device (the CPU and Metal do). */
typedef enum mdl_flash_attn { MDL_FA_AUTO = 0, MDL_FA_ON, MDL_FA_OFF } mdl_flash_attn;
/* Why a quantised V cache without flash attention makes no context
 * (llama.cpp's llama_init_from_model). */
#define MDL_FA_V_REFUSED                                                                      \
    "a quantised V cache needs flash attention: llama.cpp refuses to make the context "     \
    "(\"quantized V cache requires flash_attn to be enabled\"); use flash_attn: on or auto, " \
    "or kv_precision f16"
/* The compute buffer from the graph (docs/model.md "The compute buffer"):
 * heads 0 means the candidate gave `compute` as one size. */
typedef struct mdl_compute_graph {
    uint32_t heads;  /* n_head: query heads */
    uint32_t ubatch; /* n_ubatch: the tokens of one graph, 512 by default */
    uint32_t vocab;  /* n_vocab: the logits' rows */
    int64_t other;   /* the rest of the graph's live tensors at its peak, bytes */
    double scale;    /* 0 or 1: as sized; --headroom's memory factor otherwise */
} mdl_compute_graph;
/* The model's layers as llama.cpp places them (docs/model.md "The GPU
 * path"): n_gpu_layers counts the repeating layers and the output layer;
 * since 57c1e0564 (December 2025) the output layer goes first, before it
 * last.  count 0: the candidate gives no layers (its gpu weights as given,
 * and the KV and compute all in gpu when it gives any). */
typedef struct mdl_gen_layers {
    uint32_t count;      /* n_layer: the repeating layers */
    uint32_t offloaded;  /* n_gpu_layers the candidate's figures are of */
    int output_first;    /* the output layer is offloaded first */
    int64_t bytes;       /* one repeating layer's weights; -1: not given */
    int64_t output;      /* the output layer's weights; -1: not given */
    int tied;            /* the output is the token embedding's copy: the CPU keeps its own */
} mdl_gen_layers;
#define MDL_GEN_LAYERS_MAX 4096u
typedef struct mdl_generation {
    mdl_dist prompt_tokens, output_tokens; /* per request */
    mdl_dist prefill, decode;              /* time per token at speed 1, us */
    /* the time a token adds per 1,000 tokens of context its attention reads,
     * us at speed 1 (prefill's per batch: a batch reads what precedes it
     * and itself); 0: none given */
    double prefill_ctx, decode_ctx;
    /* how fast the matrix kernels read each kind of CPU weights, relative to
     * an unnamed kind (1); the times were measured with the candidate's own */
    double speed_mapped, speed_repacked, speed_gpu;
    double time_scale;                     /* in force: the times' factor from the weights */
    uint32_t context;                      /* n_ctx: the tokens the KV cache is made for */
    uint32_t slots;                        /* KV regions of context / slots tokens each */
    int64_t kv_per_token;                  /* bytes, every layer's K and V */
    mdl_kv_mode kv;
    mdl_on_full on_full;
    int keep_context;                      /* the conversation persists between requests */
    int64_t mapped, repacked, gpu;         /* the weights by kind, bytes */
    int locked;                            /* the mapped weights are mlock'ed */
    int64_t compute;                       /* the compute buffer, at the context's creation */
    mdl_compute_graph graph;               /* compute from the graph, when heads > 0 */
    mdl_kv_type kv_type;                   /* what kv_per_token is of */
    mdl_flash_attn flash_attn;             /* as given; in force: on or off */
    int no_mmap;                           /* in force: the weights read into memory, unmapped */
    mdl_gen_layers layers;                 /* offloaded: as given; in force: the policy's */
    /* in force: the weight bytes the GPU reads at every token (in gpu
     * memory, or on an iPhone with mmap the file's pages it maps), the
     * repeating layers whose KV is in gpu memory (of layers.count; legacy:
     * all or none), whether the compute buffer is the GPU's */
    int64_t on_gpu;
    uint32_t kv_gpu_layers, kv_layers;
    int compute_gpu;
    int64_t cpu_off; /* in force: the file's bytes the CPU no longer holds (legacy: gpu) */
} mdl_generation;

/* The compute and output buffers of a graph-sized part (docs/model.md
 * "The compute buffer") for a context of so many tokens shared by slots
 * KV regions, flash attention on or off. */
int64_t mdl_compute_bytes(const mdl_compute_graph *gr, uint32_t context, uint32_t slots,
                          int fa);
/* The bytes of a part's file held as file pages no rule counts while it is
 * loaded (the mapping, less mlock'ed weights): 0 without mmap. */
int64_t mdl_generation_file_pages(const struct mdl_part *def, const mdl_generation *in_force);

/* A generation part's block with the policy's axes applied (the context,
 * kv_precision, weights, slots, gpu_layers), as a replication runs it on a
 * device of that system (iOS: Metal maps a mapped file's pages). */
void mdl_generation_in_force(const struct mdl_part *def, const struct mdl_policy *pol,
                             int ios, mdl_generation *out);
/* Of n bytes of a part's KV, those in gpu memory: the share of its layers
 * offloaded (floor). */
int64_t mdl_kv_gpu_bytes(const mdl_generation *in_force, int64_t n);
/* The layers on the GPU for n_gpu_layers k: *repeating of them, *output
 * whether the output layer is. */
void mdl_gen_layers_on_gpu(const mdl_gen_layers *l, uint32_t k, uint32_t *repeating,
                           int *output);
/* Why a policy's gpu_layers cannot be taken for part def (NULL: it can). */
const char *mdl_gen_layers_refusal(const struct mdl_part *def, uint32_t k);

/* Whether a candidate has a part that generates tokens. */
struct mdl_candidate;
int mdl_candidate_generates(const struct mdl_candidate *c);

/* How a generation part's CPU weights are held (the policy's `weights`). */
typedef enum mdl_weights {
    MDL_WEIGHTS_AS_GIVEN = 0, /* the candidate's weights block */
    MDL_WEIGHTS_MAPPED,       /* all mapped from the file */
    MDL_WEIGHTS_LOCKED,       /* mapped and mlock'ed */
    MDL_WEIGHTS_REPACKED,     /* all repacked into anonymous memory */
    MDL_WEIGHTS_CANDIDATE     /* the candidate's own (as MDL_WEIGHTS_AS_GIVEN, named) */
} mdl_weights;

/* The bucket of a time to first token (of 10 ms: 10 ms and up), of a decode
 * rate (of tokens/s x 16: 1/16 token/s and up), and their middles. */
unsigned mdl_ttft_bucket(sim_time us);
double mdl_ttft_middle_us(unsigned bucket);
unsigned mdl_tps_bucket(double tokens_per_s);
double mdl_tps_middle(unsigned bucket);
#ifdef __cplusplus
}
#endif

#endif /* OOMSIM_MODELS_GENERATION_H */
