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
typedef struct mdl_generation {
    mdl_dist prompt_tokens, output_tokens; /* per request */
    mdl_dist prefill, decode;              /* time per token at speed 1, us */
    uint32_t context;                      /* n_ctx: the tokens the KV cache is made for */
    uint32_t slots;                        /* KV regions of context / slots tokens each */
    int64_t kv_per_token;                  /* bytes, every layer's K and V */
    mdl_kv_mode kv;
    mdl_on_full on_full;
    int keep_context;                      /* the conversation persists between requests */
    int64_t mapped, repacked, gpu;         /* the weights by kind, bytes */
    int locked;                            /* the mapped weights are mlock'ed */
    int64_t compute;                       /* the compute buffer, at the context's creation */
} mdl_generation;

/* A generation part's block with the policy's axes applied (the context,
 * kv_precision, weights, slots), as a replication runs it. */
void mdl_generation_in_force(const struct mdl_part *def, const struct mdl_policy *pol,
                             mdl_generation *out);

/* How a generation part's CPU weights are held (the policy's `weights`). */
typedef enum mdl_weights {
    MDL_WEIGHTS_AS_GIVEN = 0, /* the candidate's weights block */
    MDL_WEIGHTS_MAPPED,       /* all mapped from the file */
    MDL_WEIGHTS_LOCKED,       /* mapped and mlock'ed */
    MDL_WEIGHTS_REPACKED      /* all repacked into anonymous memory */
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
