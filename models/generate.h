/* generate.h - the KV growth of a generating part (generate.c; docs/model.md
 * "Token generation"): a request's tokens cut to its KV region, prefill then
 * decode in closed form, the KV resident as tokens are written, and where
 * the next kill check falls as the KV grows.  Internal to models/.
 *
 * It computes and counts; it never charges, emits or schedules: the world
 * (genrun.c) charges what it computes, checks it and schedules the lines.
 *
 * Who may change what: genrun.c the regions (w_gen_slot) of the world's
 * generation parts (world.gslots, with proc.gen_growing and proc.kv_held);
 * generate.c only the request draws and counters it is handed. */
#ifndef OOMSIM_MODELS_GENERATE_H
#define OOMSIM_MODELS_GENERATE_H

#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "models.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A request's draws of a generation part: G_PROMPT and G_OUTPUT tokens, the
 * prefill and decode time per token (G_PREFILL, G_DECODE, us at speed 1). */
enum { G_PROMPT = 0, G_OUTPUT, G_PREFILL, G_DECODE };

/* One KV region of a generation part: the conversation in it and the
 * request decoding in it, whose tokens are a linear function of time in
 * prefill, and in decode too unless each token reads the context (shape >
 * 0: then the time of k tokens is quadratic in k). */
typedef struct w_gen_slot {
    sim_time start, tp, td;  /* the running request: prefill from start for tp, then decode */
    int64_t charged;         /* touched: the region's KV bytes charged to the ledger */
    int64_t least;           /* the least step between soft lines: the request's growth / 16 */
    uint32_t tokens;         /* the conversation's tokens in the region */
    uint32_t high;           /* the most tokens ever written in it (touched: resident) */
    uint32_t from, prompt, output; /* the running request's first token and its counts */
    uint32_t attempt;        /* the attempt running in it */
    double shape;            /* decode: a token's added time per token of context over its own */
    sim_handle line;         /* its next KV line (has_line) */
    uint8_t running, growing, has_line;
} w_gen_slot;

/* A request's draws for generation part def, from r. */
void gen_draw(const mdl_part *def, gsl_rng *r, uint32_t out[4]);
/* The split of a part's KV growth from before to after bytes into its
 * categories (added to add). */
void gen_kv_split(const mdl_generation *g, int64_t before, int64_t after,
                  int64_t add[MDL_CAT_COUNT]);
/* A request's prefill and decode times at speed 1, us: `prompt` tokens
 * written after `from` (in batches of the graph's ubatch, each reading the
 * context before it and itself), then `output` decoded, each reading the
 * tokens before it; per_token the request's draw.  Scaled by the weights'
 * time_scale. */
sim_time gen_prefill_us(const mdl_generation *g, uint32_t from, uint32_t prompt,
                        uint32_t per_token);
sim_time gen_decode_us(const mdl_generation *g, uint32_t from, uint32_t output,
                       uint32_t per_token);
/* Tokens written in region s at t (the request's from and after). */
double gen_tokens_at(const w_gen_slot *s, sim_time t);
/* The KV bytes region s holds resident at t (touched). */
int64_t gen_kv_at(const w_gen_slot *s, sim_time t, int64_t per_token);
/* Cuts a request to its region of c tokens: from + prompt + output <= c.
 * 1 when it did not fit (a context_overflow). */
int gen_fit(const mdl_generation *g, uint32_t c, uint32_t *from, uint32_t *prompt,
            uint32_t *output);
/* The least growth between two soft lines of a request that writes up to
 * `top` tokens in region s: its growth / 16, 4 MiB at least. */
int64_t gen_least(const w_gen_slot *s, const mdl_generation *g, uint32_t top);
/* Where region s's next line falls, the rule in force leaving `hard` (an
 * exact line; INT64_MAX none) and `soft` (a watermark) of room shared by
 * the `growing` regions: the instant its KV crosses it, INT64_MAX when the
 * request ends first or no line is ahead; never before now + 1. */
sim_time gen_line_at(const w_gen_slot *s, const mdl_generation *g, uint32_t growing,
                     int64_t hard, int64_t soft, sim_time now);
/* A request's end on region s, counted (its first submission at `first`):
 * time to first token, tokens per second. */
void gen_record(mdl_rep *o, const w_gen_slot *s, sim_time first, const mdl_times_sink *times);

#ifdef __cplusplus
}
#endif

#endif /* OOMSIM_MODELS_GENERATE_H */
