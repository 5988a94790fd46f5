/* generate.c - the KV growth of an LLM part's requests (docs/model.md
 * "Token generation"; generate.h): a request's prompt and output tokens,
 * cut to its KV region; prefill, then decode, in closed form; the KV cache
 * resident as tokens are written (touched); where the growing KV crosses
 * the next line the rule in force leaves, computed, never polled.  The
 * world charges and checks what it computes (genrun.c). */
#include <math.h>
#include <string.h>

#include "generate.h"

/* Under a page model, or past a line that did not kill, the KV is checked
 * again after this much growth at least, and after 1/16 of a request's
 * growth at most (docs/model.md "Token generation"). */
#define GEN_STEP_MIN ((int64_t)4 << 20)
#define GEN_STEP_PARTS 16

static uint32_t clamp_tokens(int64_t v)
{
    return v > (int64_t)MDL_GEN_TOKENS_MAX ? MDL_GEN_TOKENS_MAX : (uint32_t)v;
}

static uint32_t clamp_us(int64_t v)
{
    return v > (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

void gen_draw(const mdl_part *def, gsl_rng *r, uint32_t out[4])
{
    const mdl_generation *g = &def->gen;
    out[G_PROMPT] = clamp_tokens(mdl_dist_sample(&g->prompt_tokens, r));
    out[G_OUTPUT] = clamp_tokens(mdl_dist_sample(&g->output_tokens, r));
    out[G_PREFILL] = clamp_us(mdl_dist_sample(&g->prefill, r));
    out[G_DECODE] = clamp_us(mdl_dist_sample(&g->decode, r));
}

int64_t mdl_kv_gpu_bytes(const mdl_generation *g, int64_t n)
{
    if (g->kv_gpu_layers == 0 || g->kv_layers == 0)
        return 0;
    return g->kv_gpu_layers >= g->kv_layers ? n : n / g->kv_layers * g->kv_gpu_layers +
                                                      n % g->kv_layers * g->kv_gpu_layers /
                                                          g->kv_layers;
}

void gen_kv_split(const mdl_generation *g, int64_t before, int64_t after,
                  int64_t add[MDL_CAT_COUNT])
{
    int64_t gpu = mdl_kv_gpu_bytes(g, after) - mdl_kv_gpu_bytes(g, before);
    add[MDL_CAT_GPU] += gpu;
    add[MDL_CAT_NATIVE] += after - before - gpu;
}

/* ------------------------------------------------------------ the times */

/* A time computed in double, held to what sim_time carries with room. */
static sim_time time_us(double us)
{
    if (!(us > 0))
        return 0;
    return us < 4e18 ? (sim_time)llround(us) : (sim_time)4e18;
}

sim_time gen_prefill_us(const mdl_generation *g, uint32_t from, uint32_t prompt,
                        uint32_t per_token)
{
    double us = (double)prompt * per_token;
    if (g->prefill_ctx > 0 && prompt > 0) {
        /* m full batches of b and a last of c: a batch of k tokens from
         * position n reads n + k cells (the KQ of the batch's graph) */
        double b = g->graph.ubatch > 0 ? g->graph.ubatch : 512;
        double m = floor((double)prompt / b), c = (double)prompt - m * b, n = from;
        double cells = b * (m * n + b * m * (m + 1) / 2) + c * (n + m * b + c);
        us += g->prefill_ctx / 1000.0 * cells;
    }
    return time_us(us * (g->time_scale > 0 ? g->time_scale : 1.0));
}

sim_time gen_decode_us(const mdl_generation *g, uint32_t from, uint32_t output,
                       uint32_t per_token)
{
    double k = output, us = k * per_token;
    /* the token at position n reads n + 1 cells: from + 1 .. from + output */
    if (g->decode_ctx > 0)
        us += g->decode_ctx / 1000.0 * (k * from + k * (k + 1) / 2);
    return time_us(us * (g->time_scale > 0 ? g->time_scale : 1.0));
}

/* The share of decode's time the first k of its tokens take: k / output
 * when no token reads the context; else T(k) / T(output) with T(k) =
 * k (1 + shape n0) + shape k (k + 1) / 2, n0 the tokens before decode. */
static double decode_share(const w_gen_slot *s, double k)
{
    if (s->shape <= 0 || s->output == 0)
        return s->output > 0 ? k / s->output : 1.0;
    double n0 = (double)s->from + s->prompt, out = s->output;
    double whole = out * (1 + s->shape * n0) + s->shape * out * (out + 1) / 2;
    return (k * (1 + s->shape * n0) + s->shape * k * (k + 1) / 2) / whole;
}

/* decode_share's inverse: the tokens decoded at share u of its time. */
static double decode_tokens(const w_gen_slot *s, double u)
{
    if (s->shape <= 0)
        return (double)s->output * u;
    double n0 = (double)s->from + s->prompt, out = s->output;
    double a = s->shape / 2, b = 1 + s->shape * n0 + s->shape / 2;
    double t = u * (out * (1 + s->shape * n0) + s->shape * out * (out + 1) / 2);
    double k = 2 * t / (b + sqrt(b * b + 4 * a * t)); /* the positive root, stable */
    return k < out ? k : out;
}

/* ------------------------------------------------------------ the tokens */

/* A phase of no time writes its tokens at its start. */
double gen_tokens_at(const w_gen_slot *s, sim_time t)
{
    double x = s->from;
    sim_time in = t - s->start;
    if (in < 0)
        return x;
    if (in < s->tp)
        return x + (double)s->prompt * (double)in / (double)s->tp;
    x += s->prompt;
    in -= s->tp;
    if (in >= s->td)
        return x + s->output;
    return x + decode_tokens(s, (double)in / (double)s->td);
}

int64_t gen_kv_at(const w_gen_slot *s, sim_time t, int64_t per_token)
{
    double tok = floor(gen_tokens_at(s, t) + 1e-9);
    uint32_t n = tok > (double)s->high ? (uint32_t)tok : s->high;
    return (int64_t)n * per_token;
}

/* The first instant at which region s has `n` tokens written (INT64_MAX:
 * not within the request). */
static sim_time time_of_tokens(const w_gen_slot *s, uint64_t n)
{
    if (n <= s->from)
        return s->start;
    uint64_t k = n - s->from;
    if (k <= s->prompt) {
        if (s->tp <= 0)
            return s->start;
        return s->start + (sim_time)ceil((double)s->tp * (double)k / (double)s->prompt - 1e-9);
    }
    k -= s->prompt;
    if (k > s->output)
        return INT64_MAX;
    if (s->td <= 0)
        return s->start + s->tp;
    return s->start + s->tp + (sim_time)ceil((double)s->td * decode_share(s, (double)k) - 1e-9);
}

/* ------------------------------------------------------------ the lines */

int64_t gen_least(const w_gen_slot *s, const mdl_generation *g, uint32_t top)
{
    if (top < s->high)
        top = s->high;
    int64_t share = ((int64_t)top - s->high) * g->kv_per_token / GEN_STEP_PARTS;
    return share > GEN_STEP_MIN ? share : GEN_STEP_MIN;
}

sim_time gen_line_at(const w_gen_slot *s, const mdl_generation *g, uint32_t growing,
                     int64_t hard, int64_t soft, sim_time now)
{
    int64_t end_bytes = (int64_t)(s->from + s->prompt + s->output) * g->kv_per_token;
    int64_t n = (int64_t)growing;
    int64_t step = hard != INT64_MAX ? hard / n + 1 : INT64_MAX;
    if (soft != INT64_MAX) {
        int64_t least = s->least;
        int64_t by_soft = soft > 0 ? soft / n : 0;
        if (by_soft < least)
            by_soft = least;
        if (by_soft < step)
            step = by_soft;
    }
    if (step == INT64_MAX)
        return INT64_MAX; /* no line ahead: the request's end charges the rest */
    int64_t target = s->charged + step;
    if (target > end_bytes)
        return INT64_MAX; /* the request ends first: its end charges the rest */
    uint64_t tokens = (uint64_t)((target + g->kv_per_token - 1) / g->kv_per_token);
    sim_time t = time_of_tokens(s, tokens);
    if (t == INT64_MAX || t >= s->start + s->tp + s->td)
        return INT64_MAX;
    if (t <= now)
        t = now + 1; /* past already (rounding): the next microsecond, so time moves on */
    return t;
}

int gen_fit(const mdl_generation *g, uint32_t c, uint32_t *from, uint32_t *prompt,
               uint32_t *output)
{
    if ((uint64_t)*from + *prompt + *output <= c)
        return 0;
    if (*output > c)
        *output = c;
    if (*prompt > c - *output)
        *prompt = c - *output;
    if (g->on_full == MDL_FULL_RESET)
        *from = 0;
    if ((uint64_t)*from + *prompt + *output > c)
        *from = c - *prompt - *output; /* truncate: the oldest tokens give way */
    return 1;
}

void gen_record(mdl_rep *o, const w_gen_slot *s, sim_time first, const mdl_times_sink *times)
{
    o->gen_requests++;
    sim_time ttft = s->start + s->tp - first;
    if (s->output > 0 && s->shape > 0)
        ttft += (sim_time)llround((double)s->td * decode_share(s, 1.0));
    else if (s->output > 0)
        ttft += s->td / s->output;
    o->ttft[mdl_ttft_bucket(ttft)]++;
    double tps = -1;
    if (s->output > 0 && s->td > 0) {
        tps = (double)s->output * 1e6 / (double)s->td;
        o->tps[mdl_tps_bucket(tps)]++;
        o->tokens_out += s->output;
        o->decode_us += s->td;
    }
    if (times != NULL && times->gen != NULL)
        times->gen(times->ctx, ttft, tps);
}

/* ------------------------------------------------------------ buckets */

/* of 10 ms: 10 ms to 2^16 x 10 ms, about 11 minutes (a wait longer still
 * is in the last bucket) */
unsigned mdl_ttft_bucket(sim_time us) { return mdl_slowdown_bucket((double)us / 10000.0); }
double mdl_ttft_middle_us(unsigned bucket) { return mdl_slowdown_middle(bucket) * 10000.0; }
unsigned mdl_tps_bucket(double tokens_per_s) { return mdl_slowdown_bucket(tokens_per_s * 16.0); }
double mdl_tps_middle(unsigned bucket) { return mdl_slowdown_middle(bucket) / 16.0; }

/* ------------------------------------------------------------ in force */

double mdl_kv_type_scale(mdl_kv_type t)
{
    return t == MDL_KVT_Q8_0 ? 34.0 / 64.0 : t == MDL_KVT_Q4_0 ? 18.0 / 64.0 : 1.0;
}

/* llama.cpp's compute buffer is the high-water mark of the graph's live
 * tensors (ggml-alloc.c, ggml_gallocr_reserve_n), reserved for a prompt
 * graph of min(n_ubatch, n_ctx) tokens (llama-context.cpp, sched_reserve);
 * n_ctx is padded to 256, and so is each sequence's share of it with
 * several (n_ctx_seq; the llama_context constructor, kv_unified false).  Its largest
 * tensors: without flash attention the f32 scores, n_kv x tokens x heads
 * (build_attn_mha's ggml_mul_mat(k, q); the soft_max runs in place, ggml-
 * alloc.c's ggml_op_can_inplace), beside the f32 mask, n_kv x tokens
 * (build_attn_inp_kq_mask); with it no scores and an f16 mask; or the
 * logits, vocab x tokens f32, whichever is larger; plus the rest.  The
 * output buffer holds a row of logits per sequence (output_reserve). */
int64_t mdl_compute_bytes(const mdl_compute_graph *gr, uint32_t context, uint32_t slots, int fa)
{
    uint64_t n_ctx = ((uint64_t)context + 255) / 256 * 256;
    if (slots < 1)
        slots = 1;
    /* the KV rows one sequence attends to (n_ctx_seq, padded again) */
    double kv = (double)(slots > 1 ? (n_ctx / slots + 255) / 256 * 256 : n_ctx);
    /* n_ubatch is at most n_batch, itself at most the context asked for,
     * before its padding (2048 by default: llama_context_default_params) */
    uint64_t batch = context < 2048u ? context : 2048u;
    double tokens = (double)(gr->ubatch < batch ? gr->ubatch : batch);
    double attention = fa ? kv * tokens * 2.0 : kv * tokens * ((double)gr->heads * 4.0 + 4.0);
    double logits = (double)gr->vocab * tokens * 4.0;
    double output = (double)gr->vocab * 4.0 * (double)slots;
    double scale = gr->scale > 0 ? gr->scale : 1.0;
    return (int64_t)((fmax(attention, logits) + output + (double)gr->other) * scale);
}

int mdl_candidate_generates(const mdl_candidate *c)
{
    for (unsigned k = 0; k < c->nparts; k++)
        if (c->parts[k].has_generation)
            return 1;
    return 0;
}

int64_t mdl_generation_file_pages(const mdl_part *def, const mdl_generation *g)
{
    if (def->load_mode != MDL_LOAD_MMAP || g->no_mmap)
        return 0;
    int64_t n = def->file - (g->locked ? g->mapped : 0);
    return n > 0 ? n : 0;
}

/* ------------------------------------------------------------ the GPU */

void mdl_gen_layers_on_gpu(const mdl_gen_layers *l, uint32_t k, uint32_t *repeating,
                           int *output)
{
    uint32_t n = l->count;
    if (k > n + 1)
        k = n + 1;
    if (l->output_first) { /* i_gpu_start = n + 1 - k: the output layer, then the last k - 1 */
        *output = k >= 1;
        *repeating = k >= 1 ? k - 1 : 0;
    } else { /* i_gpu_start = n - k: the last k, the output layer past them */
        *output = k > n;
        *repeating = k < n ? k : n;
    }
}

const char *mdl_gen_layers_refusal(const mdl_part *def, uint32_t k)
{
    const mdl_gen_layers *l = &def->gen.layers;
    uint32_t r0, r;
    int o0, o;
    if (l->count == 0)
        return "its generation gives no layers (layers: {count, offloaded, bytes, output})";
    mdl_gen_layers_on_gpu(l, l->offloaded, &r0, &o0);
    mdl_gen_layers_on_gpu(l, k, &r, &o);
    if (r != r0 && l->bytes < 0)
        return "it moves repeating layers, and the candidate gives no layers.bytes";
    if (o != o0 && l->output < 0)
        return "it moves the output layer, and the candidate gives no layers.output";
    return NULL;
}

/* Up to n bytes off *from, as far as it holds them: what is left of n. */
static int64_t take(int64_t *from, int64_t n)
{
    int64_t t = n < *from ? n : *from;
    *from -= t;
    return n - t;
}

/* The policy's gpu_layers over the candidate's layers (docs/model.md "The
 * GPU path"): the weights that move between the CPU's kinds and the GPU,
 * the KV's and the compute buffer's place, what the CPU keeps. */
static void offload(const mdl_part *def, const mdl_policy *pol, mdl_generation *g)
{
    const mdl_gen_layers *l = &def->gen.layers;
    if (l->count == 0) { /* the weights.gpu as given, and the KV and compute with them */
        g->on_gpu = g->gpu;
        g->cpu_off = 0; /* as before layers: a copied file holds them too */
        g->kv_layers = 1;
        g->kv_gpu_layers = g->gpu > 0;
        g->compute_gpu = g->gpu > 0;
        return;
    }
    uint32_t k = pol->gpu_layers > 0 ? pol->gpu_layers - 1 : l->offloaded;
    if (k > l->count + 1)
        k = l->count + 1;
    uint32_t r0, r;
    int o0, o;
    mdl_gen_layers_on_gpu(l, l->offloaded, &r0, &o0);
    mdl_gen_layers_on_gpu(l, k, &r, &o);
    /* sizes not given move nothing (a cell that would move them is refused) */
    int64_t lb = l->bytes > 0 ? l->bytes : 0, ob = l->output > 0 ? l->output : 0;
    int64_t dl = ((int64_t)r - (int64_t)r0) * lb, dout = (int64_t)(o - o0) * ob;
    int mmap = def->load_mode == MDL_LOAD_MMAP;
    /* a layer's matrices leave the repacked copy first (what llama.cpp
     * repacks are the layers' matrices), the output's the mapping first
     * (its matrix, or the tied embedding, read from the file); back, they
     * return where the candidate keeps such weights */
    if (dl > 0)
        (void)take(&g->mapped, take(&g->repacked, dl));
    else if (dl < 0 && def->gen.repacked > 0)
        g->repacked -= dl;
    else if (dl < 0 && mmap)
        g->mapped -= dl;
    if (dout > 0)
        (void)take(&g->repacked, take(&g->mapped, dout));
    else if (dout < 0 && mmap)
        g->mapped -= dout;
    g->gpu += dl + dout;
    if (g->gpu < 0)
        g->gpu = 0;
    g->on_gpu = g->gpu;
    g->layers.offloaded = k;
    g->kv_layers = l->count;
    g->kv_gpu_layers = r; /* llama_kv_cache: each layer's K and V on its layer's device */
    /* the logits, the largest tensor at the default settings, are computed
     * where the output matrix is (ggml_backend_sched: an op goes to its
     * weights' backend) */
    g->compute_gpu = o;
    /* a tied output is the embedding's copy (TENSOR_DUPLICATED): the CPU
     * keeps the embedding for the input layer */
    g->cpu_off = (int64_t)r * lb + (o && !l->tied ? ob : 0);
}

/* The time the kernels take to read a byte of a part's CPU weights as g
 * holds them: each kind's bytes at its speed (weights_speed; 0 is 1), the
 * rest of the CPU's at 1, averaged over the bytes; 1 for a part of no CPU
 * weights.  An average, so that with every speed 1 the factor is exactly
 * 1 whatever the kinds' bytes add up to (an imported part's mapped and
 * repacked bytes may overlap the file's). */
static double weights_time(const mdl_part *def, const mdl_generation *g, int64_t gpu)
{
    double sm = def->gen.speed_mapped > 0 ? def->gen.speed_mapped : 1.0;
    double sr = def->gen.speed_repacked > 0 ? def->gen.speed_repacked : 1.0;
    double sg = def->gen.speed_gpu > 0 ? def->gen.speed_gpu : 1.0;
    int64_t cpu = def->file > gpu ? def->file - gpu : 0;
    /* a part without layers times its CPU's weights only, as before them */
    int64_t on_gpu = def->gen.layers.count > 0 ? gpu : 0;
    int64_t rest = cpu - g->mapped - g->repacked;
    double r = (double)(rest > 0 ? rest : 0);
    double bytes = (double)g->mapped + (double)g->repacked + r + (double)on_gpu;
    double t = (double)g->mapped / sm + (double)g->repacked / sr + r + (double)on_gpu / sg;
    return bytes > 0 ? t / bytes : 1.0;
}

/* The policy's generation axes over the candidate's block (docs/scenarios.md
 * "Policies"): the context, the KV's precision, how the weights are held,
 * the slots, flash attention, and the compute buffer they make. */
void mdl_generation_in_force(const mdl_part *def, const mdl_policy *pol, int ios,
                             mdl_generation *g)
{
    *g = def->gen;
    if (pol->gen_context > 0)
        g->context = pol->gen_context;
    if (pol->kv_type > 0 && (mdl_kv_type)(pol->kv_type - 1) != g->kv_type) {
        mdl_kv_type t = (mdl_kv_type)(pol->kv_type - 1);
        double f = mdl_kv_type_scale(t) / mdl_kv_type_scale(g->kv_type);
        g->kv_per_token = (int64_t)((double)g->kv_per_token * f + 0.5);
        if (g->kv_per_token < 1)
            g->kv_per_token = 1;
        g->kv_type = t;
    }
    if (pol->flash_attn > 0)
        g->flash_attn = (mdl_flash_attn)(pol->flash_attn - 1);
    /* auto: on, as llama.cpp resolves it where the backend runs the fused
     * op on the layer's device (llama-context.cpp, resolve_fused_ops), or
     * where a quantised V cache needs it (llama_init_from_model) */
    if (g->flash_attn == MDL_FA_AUTO)
        g->flash_attn = MDL_FA_ON;
    if (pol->gen_slots > 0)
        g->slots = pol->gen_slots;
    if (g->slots > g->context)
        g->slots = g->context;
    if (g->graph.heads > 0)
        g->compute = mdl_compute_bytes(&g->graph, g->context, g->slots,
                                       g->flash_attn == MDL_FA_ON);
    /* the weights file, all read from its mapping (no repacking: llama.cpp
     * built without its CPU repack buffers), or all copied into anonymous
     * memory (--no-mmap: one CPU buffer the size of the weights, and no
     * mapping: the file's pages are the page cache's, not the app's) */
    offload(def, pol, g);
    int mmap = def->load_mode == MDL_LOAD_MMAP;
    int64_t cpu = def->file > g->on_gpu ? def->file - g->on_gpu : 0; /* what the CPU reads */
    if ((pol->gen_weights == MDL_WEIGHTS_MAPPED || pol->gen_weights == MDL_WEIGHTS_LOCKED) &&
        mmap) {
        g->mapped = cpu;
        g->repacked = 0;
        g->locked = pol->gen_weights == MDL_WEIGHTS_LOCKED && cpu > 0;
    } else if (pol->gen_weights == MDL_WEIGHTS_REPACKED) {
        g->mapped = 0;
        /* a copied file is the copy already; the copy holds what the CPU
         * keeps (a tied embedding, though the GPU reads the output's copy) */
        g->repacked = !mmap ? 0 : def->gen.layers.count > 0 ? def->file - g->cpu_off : cpu;
        if (g->repacked < 0)
            g->repacked = 0;
        g->locked = 0;
        g->no_mmap = mmap;
    }
    g->time_scale = weights_time(def, g, g->on_gpu) / weights_time(def, &def->gen, def->gen.gpu);
    /* Metal wraps a mapped file's pages in its buffers, no copy (ggml-metal.cpp,
     * buffer_from_host_ptr; llama-model.cpp, load_tensors): on an iPhone the
     * GPU's weights stay file pages, read at every token */
    if (ios && mmap && !g->no_mmap && def->gen.layers.count > 0 && g->on_gpu > 0) {
        g->mapped += g->on_gpu;
        if (g->mapped > def->file)
            g->mapped = def->file;
        g->gpu = 0;
    }
}
