/* generation.c - an LLM part's `generation` block (docs/scenarios.md
 * "generation"): tokens per request, the KV cache, the per-token times,
 * the weights by kind.  A part with it has no `inference` key. */
#include "yaml_int.h"

#include <string.h>

static int gen_size(const scn__node *m, const char *key, int required, int64_t min,
                    int64_t *out, sim_error *err)
{
    scn__node v;
    scn__get(m, key, &v);
    if (v.n == NULL)
        return required ? scn__require(m, key, &v, err) : SIM_OK;
    int rc = scn__size(&v, out, err);
    if (rc == SIM_OK && *out < min)
        rc = scn__fail(&v, err, SIM_EINPUT, "%s must be more than 0 bytes", key);
    return rc;
}

static int gen_word(const scn__node *m, const char *key, const char *const *names, size_t n,
                    int *out, sim_error *err)
{
    scn__node v;
    scn__get(m, key, &v);
    return v.n == NULL ? SIM_OK : scn__enum(&v, names, n, out, err);
}

/* prefill / decode: {per_token: <duration or distribution>,
 * per_1k_context: DURATION} */
static int per_token(mdl_owned *owned, const scn__node *m, const char *key, mdl_dist *out,
                     double *per_ctx, sim_error *err)
{
    static const char *const keys[] = {"per_token", "per_1k_context"};
    scn__node v, t;
    int rc = scn__require(m, key, &v, err);
    if (rc == SIM_OK)
        rc = scn__expect_mapping(&v, err);
    if (rc == SIM_OK)
        rc = scn__check_keys(&v, keys, 2, err);
    if (rc == SIM_OK)
        rc = scn__require(&v, "per_token", &t, err);
    if (rc == SIM_OK)
        rc = scn__owned_dist(owned, &t, SCN__UNIT_DURATION, out, err);
    if (rc == SIM_OK && mdl_dist_mean(out) <= 0)
        rc = scn__fail(&t, err, SIM_EINPUT, "a time per token must be more than 0");
    scn__get(&v, "per_1k_context", &t);
    sim_time c = 0;
    if (rc == SIM_OK && t.n != NULL)
        rc = scn__duration(&t, &c, err);
    *per_ctx = (double)c;
    return rc;
}

/* weights_speed: {mapped: N, repacked: N, gpu: N}, how fast the kernels
 * read each kind (1 each unless given) */
static int weights_speed(const scn__node *m, mdl_generation *g, sim_error *err)
{
    static const char *const keys[] = {"mapped", "repacked", "gpu"};
    double *const to[3] = {&g->speed_mapped, &g->speed_repacked, &g->speed_gpu};
    scn__node v, x;
    g->speed_mapped = g->speed_repacked = g->speed_gpu = 1.0;
    scn__get(m, "weights_speed", &v);
    if (v.n == NULL)
        return SIM_OK;
    int rc = scn__expect_mapping(&v, err);
    if (rc == SIM_OK)
        rc = scn__check_keys(&v, keys, 3, err);
    for (int k = 0; k < 3 && rc == SIM_OK; k++) {
        scn__get(&v, keys[k], &x);
        if (x.n != NULL)
            rc = scn__real(&x, 0.01, 100.0, to[k], err);
    }
    return rc;
}

/* weights: {mapped, repacked, gpu, locked} */
static int weights(const scn__node *m, mdl_part *p, sim_error *err)
{
    static const char *const keys[] = {"mapped", "repacked", "gpu", "locked"};
    static const char *const bools[] = {"false", "true"};
    mdl_generation *g = &p->gen;
    scn__node v;
    scn__get(m, "weights", &v);
    if (v.n == NULL)
        return SIM_OK;
    int rc = scn__expect_mapping(&v, err);
    if (rc == SIM_OK)
        rc = scn__check_keys(&v, keys, 4, err);
    if (rc == SIM_OK)
        rc = gen_size(&v, "mapped", 0, 0, &g->mapped, err);
    if (rc == SIM_OK)
        rc = gen_size(&v, "repacked", 0, 0, &g->repacked, err);
    if (rc == SIM_OK)
        rc = gen_size(&v, "gpu", 0, 0, &g->gpu, err);
    if (rc == SIM_OK)
        rc = gen_word(&v, "locked", bools, 2, &g->locked, err);
    if (rc != SIM_OK)
        return rc;
    scn__node at;
    scn__get(&v, "mapped", &at);
    if (g->mapped > 0 && p->load_mode != MDL_LOAD_MMAP)
        return scn__fail(&at, err, SIM_EINPUT, "mapped weights need load mode: mmap");
    if (g->mapped > p->file)
        return scn__fail(&at, err, SIM_EINPUT, "mapped weights (%lld bytes) exceed the part's "
                         "file (%lld bytes)", (long long)g->mapped, (long long)p->file);
    if (g->locked && g->mapped == 0) {
        scn__get(&v, "locked", &at);
        return scn__fail(&at, err, SIM_EINPUT, "locked needs mapped weights to lock");
    }
    return SIM_OK;
}

/* The gpu weights the candidate's figures hold: weights.gpu as given, or
 * from the layers' sizes; either, when a layer is offloaded. */
static int layers_gpu(const scn__node *l, mdl_generation *g, int64_t file, sim_error *err)
{
    mdl_gen_layers *y = &g->layers;
    scn__node at;
    uint32_t r;
    int o;
    mdl_gen_layers_on_gpu(y, y->offloaded, &r, &o);
    /* the file may hold only the CPU's range (an import's mapped buffer):
     * the layers fit in it and the GPU's weights */
    if (y->bytes > 0 && (double)y->bytes * y->count > (double)file + (double)g->gpu) {
        scn__get(l, "bytes", &at);
        return scn__fail(&at, err, SIM_EINPUT, "%u layers of %lld bytes exceed the part's file "
                         "and weights.gpu (%lld bytes)", y->count, (long long)y->bytes,
                         (long long)(file + g->gpu));
    }
    if (y->output > file + g->gpu) {
        scn__get(l, "output", &at);
        return scn__fail(&at, err, SIM_EINPUT, "an output layer of %lld bytes exceeds the "
                         "part's file and weights.gpu", (long long)y->output);
    }
    /* (a layer's size given to the KiB: a KiB a layer of rounding) */
    if (g->gpu > 0 && y->bytes > 0 && g->gpu + (int64_t)r * 1024 < (int64_t)r * y->bytes) {
        scn__get(l, "bytes", &at);
        return scn__fail(&at, err, SIM_EINPUT, "weights.gpu (%lld bytes) is less than the %u "
                         "repeating layers offloaded at %lld bytes each", (long long)g->gpu, r,
                         (long long)y->bytes);
    }
    if (g->gpu > 0 && y->offloaded == 0) {
        scn__get(l, "offloaded", &at);
        return scn__fail(at.n != NULL ? &at : l, err, SIM_EINPUT, "weights.gpu is given but "
                         "layers.offloaded is 0: no layer is on the GPU");
    }
    if (g->gpu > 0 || y->offloaded == 0)
        return SIM_OK;
    if ((r > 0 && y->bytes < 0) || (o && y->output < 0)) {
        scn__get(l, "offloaded", &at);
        return scn__fail(&at, err, SIM_EINPUT, "layers.offloaded %u puts weights on the GPU: "
                         "give weights.gpu (the GPU's model buffer) or layers.bytes%s",
                         y->offloaded, o ? " and layers.output" : "");
    }
    g->gpu = (int64_t)r * (y->bytes > 0 ? y->bytes : 0) + (o ? y->output : 0);
    return SIM_OK;
}

/* layers: {count, offloaded, order, bytes, output, tied} (docs/scenarios.md
 * "generation"): llama.cpp's layers, for the gpu_layers axis. */
static int layers(const scn__node *m, mdl_part *p, sim_error *err)
{
    static const char *const keys[] = {"count", "offloaded", "order", "bytes", "output", "tied"};
    static const char *const orders[] = {"output_last", "output_first"};
    static const char *const bools[] = {"false", "true"};
    mdl_gen_layers *y = &p->gen.layers;
    y->bytes = y->output = -1;
    y->output_first = 1;
    scn__node v, x;
    scn__get(m, "layers", &v);
    if (v.n == NULL)
        return SIM_OK;
    int64_t n = 0;
    int rc = scn__expect_mapping(&v, err);
    if (rc == SIM_OK)
        rc = scn__check_keys(&v, keys, 6, err);
    if (rc == SIM_OK)
        rc = scn__require(&v, "count", &x, err);
    if (rc == SIM_OK)
        rc = scn__int(&x, 1, MDL_GEN_LAYERS_MAX, &n, err);
    y->count = (uint32_t)n;
    scn__get(&v, "offloaded", &x);
    n = 0;
    if (rc == SIM_OK && x.n != NULL)
        rc = scn__int(&x, 0, (int64_t)y->count + 1, &n, err);
    y->offloaded = (uint32_t)n;
    if (rc == SIM_OK)
        rc = gen_word(&v, "order", orders, 2, &y->output_first, err);
    if (rc == SIM_OK)
        rc = gen_word(&v, "tied", bools, 2, &y->tied, err);
    scn__get(&v, "bytes", &x);
    if (rc == SIM_OK && x.n != NULL)
        rc = gen_size(&v, "bytes", 0, 1, &y->bytes, err);
    scn__get(&v, "output", &x);
    if (rc == SIM_OK && x.n != NULL)
        rc = gen_size(&v, "output", 0, 0, &y->output, err);
    return rc == SIM_OK ? layers_gpu(&v, &p->gen, p->file, err) : rc;
}

/* How the weights are held and read: weights_speed, weights, layers. */
static int held(const scn__node *m, mdl_part *p, sim_error *err)
{
    int rc = weights_speed(m, &p->gen, err);
    if (rc == SIM_OK)
        rc = weights(m, p, err);
    return rc == SIM_OK ? layers(m, p, err) : rc;
}

/* compute: a size (as a log measured it), or the graph's figures
 * {heads, vocab, ubatch, other} (docs/model.md "The compute buffer"). */
static int compute(const scn__node *m, mdl_generation *g, sim_error *err)
{
    static const char *const keys[] = {"heads", "vocab", "ubatch", "other"};
    scn__node v, x;
    scn__get(m, "compute", &v);
    if (v.n == NULL || !fy_node_is_mapping(v.n))
        return gen_size(m, "compute", 0, 0, &g->compute, err);
    int64_t n = 0;
    int rc = scn__check_keys(&v, keys, 4, err);
    if (rc == SIM_OK)
        rc = scn__require(&v, "heads", &x, err);
    if (rc == SIM_OK)
        rc = scn__int(&x, 1, 4096, &n, err);
    g->graph.heads = (uint32_t)n;
    if (rc == SIM_OK)
        rc = scn__require(&v, "vocab", &x, err);
    if (rc == SIM_OK)
        rc = scn__int(&x, 1, 1 << 24, &n, err);
    g->graph.vocab = (uint32_t)n;
    g->graph.ubatch = 512; /* llama_context_default_params */
    scn__get(&v, "ubatch", &x);
    if (rc == SIM_OK && x.n != NULL) {
        rc = scn__int(&x, 1, 65536, &n, err);
        g->graph.ubatch = (uint32_t)n;
    }
    if (rc == SIM_OK)
        rc = gen_size(&v, "other", 0, 0, &g->graph.other, err);
    return rc;
}

/* kv_type and flash_attn; a quantised V cache without flash attention is
 * refused, as llama.cpp refuses to make its context. */
static int attention(const scn__node *m, mdl_generation *g, sim_error *err)
{
    static const char *const types[] = {"f16", "q8_0", "q4_0"};
    static const char *const fas[] = {"auto", "on", "off"};
    int type = 0, fa = 0;
    int rc = gen_word(m, "kv_type", types, 3, &type, err);
    g->kv_type = (mdl_kv_type)type;
    if (rc == SIM_OK)
        rc = gen_word(m, "flash_attn", fas, 3, &fa, err);
    g->flash_attn = (mdl_flash_attn)fa;
    if (rc == SIM_OK && g->kv_type != MDL_KVT_F16 && g->flash_attn == MDL_FA_OFF) {
        scn__node x;
        scn__get(m, "flash_attn", &x);
        return scn__fail(&x, err, SIM_EINPUT, "%s", MDL_FA_V_REFUSED);
    }
    return rc;
}

int scn__generation(mdl_owned *owned, const scn__node *v, mdl_part *p, sim_error *err)
{
    static const char *const keys[] = {"prompt_tokens", "output_tokens", "context",
                                       "kv_per_token",  "kv",            "slots",
                                       "prefill",       "decode",        "weights",
                                       "compute",       "keep_context",  "on_full",
                                       "kv_type",       "flash_attn",    "weights_speed",
                                       "layers"};
    static const char *const kvs[] = {"touched", "reserved"};
    static const char *const fulls[] = {"truncate", "reset", "fail"};
    static const char *const bools[] = {"false", "true"};
    mdl_generation *g = &p->gen;
    memset(g, 0, sizeof *g);
    g->slots = 1;
    g->keep_context = 1;
    scn__node x;
    int rc = scn__expect_mapping(v, err);
    if (rc == SIM_OK)
        rc = scn__check_keys(v, keys, 16, err);
    if (rc == SIM_OK)
        rc = scn__require(v, "prompt_tokens", &x, err);
    if (rc == SIM_OK)
        rc = scn__owned_dist(owned, &x, SCN__UNIT_COUNT, &g->prompt_tokens, err);
    if (rc == SIM_OK)
        rc = scn__require(v, "output_tokens", &x, err);
    if (rc == SIM_OK)
        rc = scn__owned_dist(owned, &x, SCN__UNIT_COUNT, &g->output_tokens, err);
    int64_t n = 0;
    if (rc == SIM_OK)
        rc = scn__require(v, "context", &x, err);
    if (rc == SIM_OK)
        rc = scn__int(&x, 1, MDL_GEN_CONTEXT_MAX, &n, err);
    g->context = (uint32_t)n;
    if (rc == SIM_OK)
        rc = gen_size(v, "kv_per_token", 1, 1, &g->kv_per_token, err);
    int kv = 0, full = 0;
    if (rc == SIM_OK)
        rc = gen_word(v, "kv", kvs, 2, &kv, err);
    g->kv = (mdl_kv_mode)kv;
    scn__get(v, "slots", &x);
    if (rc == SIM_OK && x.n != NULL) {
        rc = scn__int(&x, 1, MDL_GEN_SLOTS_MAX, &n, err);
        g->slots = (uint32_t)n;
        if (rc == SIM_OK && g->slots > g->context)
            rc = scn__fail(&x, err, SIM_EINPUT, "%u slots cannot share a context of %u tokens",
                           g->slots, g->context);
    }
    if (rc == SIM_OK)
        rc = per_token(owned, v, "prefill", &g->prefill, &g->prefill_ctx, err);
    if (rc == SIM_OK)
        rc = per_token(owned, v, "decode", &g->decode, &g->decode_ctx, err);
    if (rc == SIM_OK)
        rc = held(v, p, err);
    if (rc == SIM_OK)
        rc = compute(v, g, err);
    if (rc == SIM_OK)
        rc = attention(v, g, err);
    if (rc == SIM_OK)
        rc = gen_word(v, "keep_context", bools, 2, &g->keep_context, err);
    if (rc == SIM_OK)
        rc = gen_word(v, "on_full", fulls, 3, &full, err);
    g->on_full = (mdl_on_full)full;
    if (rc != SIM_OK)
        return rc;
    if ((double)g->context * (double)g->kv_per_token > MDL_GEN_KV_MAX) {
        scn__get(v, "kv_per_token", &x);
        return scn__fail(&x, err, SIM_ELIMIT, "a KV cache of %u tokens at %lld bytes a token "
                         "is more than 1 TiB", g->context, (long long)g->kv_per_token);
    }
    /* the mapped weights are read at every decoded token: hot, unless
     * locked (then never dropped, so never read back) */
    g->time_scale = 1.0;
    p->file_hot = g->mapped > 0 && !g->locked;
    p->hot_bytes = g->mapped;
    p->has_generation = 1;
    return SIM_OK;
}
