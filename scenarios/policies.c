/* policies.c - the scenario's policies: each key's parser, the grid axes
 * (a key given a list of values), the product of the axes in file order
 * (the first axis varies slowest), and each policy's JSON label. */
#include "scenario_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AXIS_VALUES_MAX 256u

/* ------------------------------------------------------------ policies */

typedef int (*apply_fn)(const scn_scenario *s, const scn__node *v, mdl_policy *p,
                        sim_error *err);

static int p_sessions(const scn_scenario *s, const scn__node *v, mdl_policy *p, sim_error *err)
{
    (void)s;
    int64_t n;
    if (fy_node_is_scalar(v->n)) {
        const char *t;
        size_t len;
        int rc = scn__scalar(v, &t, &len, err);
        if (rc != SIM_OK)
            return rc;
        int digits = len > 0;
        for (size_t i = 0; i < len; i++)
            digits &= t[i] >= '0' && t[i] <= '9';
        if (!digits)
            return scn__fail(v, err, SIM_EINPUT, "expected a positive integer, got \"%.*s\"",
                             (int)(len > 40 ? 40 : len), t);
    }
    int rc = scn__int(v, 1, MDL_SESSIONS_MAX, &n, err);
    if (rc == SIM_OK)
        p->sessions = (uint32_t)n;
    return rc;
}

/* `queue: N`, `unbounded`, or `{size: N, drop: newest|oldest}`: which
 * request a full queue gives up, the one arriving or the stalest waiting. */
static int p_queue(const scn_scenario *s, const scn__node *v, mdl_policy *p, sim_error *err)
{
    if (v->n != NULL && fy_node_is_mapping(v->n)) {
        static const char *const keys[] = {"size", "drop"};
        static const char *const drops[] = {"newest", "oldest"};
        scn__node size, drop;
        int rc = scn__check_keys(v, keys, 2, err);
        if (rc == SIM_OK)
            rc = scn__require(v, "size", &size, err);
        if (rc == SIM_OK)
            rc = scn__require(v, "drop", &drop, err);
        if (rc == SIM_OK && size.n != NULL && !fy_node_is_scalar(size.n))
            rc = scn__fail(&size, err, SIM_EINPUT, "expected a number of requests");
        if (rc == SIM_OK)
            rc = p_queue(s, &size, p, err);
        if (rc == SIM_OK && p->queue == MDL_QUEUE_UNBOUNDED)
            rc = scn__fail(&size, err, SIM_EINPUT, "an unbounded queue drops nothing: give a "
                           "size, or `queue: unbounded`");
        if (rc == SIM_OK)
            rc = scn__enum(&drop, drops, 2, &p->queue_drop_oldest, err);
        return rc;
    }
    (void)s;
    const char *t;
    size_t len;
    int rc = scn__scalar(v, &t, &len, err);
    if (rc != SIM_OK)
        return rc;
    if (len == 9 && memcmp(t, "unbounded", 9) == 0) {
        p->queue = MDL_QUEUE_UNBOUNDED;
        return SIM_OK;
    }
    int64_t n;
    rc = scn__int(v, 0, MDL_QUEUE_MAX, &n, err);
    if (rc == SIM_OK)
        p->queue = (uint32_t)n;
    return rc;
}

static int p_residency(const scn_scenario *s, const scn__node *v, mdl_policy *p,
                       sim_error *err)
{
    (void)s;
    const char *t;
    size_t len;
    int rc = scn__scalar(v, &t, &len, err);
    if (rc != SIM_OK)
        return rc;
    static const char *const names[] = {"preload", "on_demand_overlap",
                                        "on_demand_release_first"};
    for (int k = 0; k < 3; k++)
        if (strlen(names[k]) == len && memcmp(names[k], t, len) == 0) {
            p->residency = (mdl_residency)k;
            return SIM_OK;
        }
    if (len > 4 && memcmp(t, "lru:", 4) == 0) {
        int64_t k = 0;
        size_t i = 4;
        for (; i < len && t[i] >= '0' && t[i] <= '9' && k <= MDL_PARTS_MAX; i++)
            k = k * 10 + (t[i] - '0');
        if (i == len && k >= 1 && k <= MDL_PARTS_MAX) {
            p->residency = MDL_RES_LRU;
            p->lru_k = (uint32_t)k;
            return SIM_OK;
        }
        return scn__fail(v, err, SIM_EINPUT, "lru:K needs K from 1 to %d, got \"%.*s\"",
                         MDL_PARTS_MAX, (int)(len > 40 ? 40 : len), t);
    }
    return scn__fail(v, err, SIM_EINPUT, "expected preload, on_demand_overlap, "
                     "on_demand_release_first or lru:K, got \"%.*s\"",
                     (int)(len > 40 ? 40 : len), t);
}

static int p_prewarm(const scn_scenario *s, const scn__node *v, mdl_policy *p, sim_error *err)
{
    return scn__part_names(s, v, p->prewarm, &p->nprewarm, err);
}

static int p_bool(const scn__node *v, int *out, sim_error *err)
{
    static const char *const names[] = {"false", "true"};
    return scn__enum(v, names, 2, out, err);
}

static int p_copy_runtime(const scn_scenario *s, const scn__node *v, mdl_policy *p,
                          sim_error *err)
{
    (void)s;
    return p_bool(v, &p->copy_runtime, err);
}

static int p_cancel(const scn_scenario *s, const scn__node *v, mdl_policy *p, sim_error *err)
{
    (void)s;
    return p_bool(v, &p->cancel_on_timeout, err);
}


static int p_retry(const scn_scenario *s, const scn__node *v, mdl_policy *p, sim_error *err)
{
    static const char *const kinds[] = {"none", "fixed", "backoff", "on_new_condition"};
    static const char *const keys_none[] = {"kind"};
    static const char *const keys_fixed[] = {"kind", "delay", "max"};
    static const char *const keys_backoff[] = {"kind", "base", "factor", "cap", "jitter", "max"};
    static const char *const keys_cond[] = {"kind", "max"};
    int rc = scn__expect_mapping(v, err);
    scn__node k, x;
    if (rc == SIM_OK)
        rc = scn__require(v, "kind", &k, err);
    int kind = 0;
    if (rc == SIM_OK)
        rc = scn__enum(&k, kinds, 4, &kind, err);
    if (rc != SIM_OK)
        return rc;
    mdl_retry *r = &p->retry;
    memset(r, 0, sizeof *r);
    r->kind = (mdl_retry_kind)kind;
    switch (r->kind) {
    case MDL_RETRY_NONE:
        return scn__check_keys(v, keys_none, 1, err);
    case MDL_RETRY_FIXED:
        if ((rc = scn__check_keys(v, keys_fixed, 3, err)) == SIM_OK &&
            (rc = scn__require(v, "delay", &x, err)) == SIM_OK)
            rc = scn__duration(&x, &r->delay, err);
        break;
    case MDL_RETRY_BACKOFF:
        if ((rc = scn__check_keys(v, keys_backoff, 6, err)) == SIM_OK &&
            (rc = scn__require(v, "base", &x, err)) == SIM_OK)
            rc = scn__duration(&x, &r->base, err);
        r->factor = 2.0;
        r->cap = SCN_DURATION_MAX;
        if (rc == SIM_OK) {
            scn__get(v, "factor", &x);
            if (x.n != NULL)
                rc = scn__real(&x, 1.0, 1000.0, &r->factor, err);
        }
        if (rc == SIM_OK) {
            scn__get(v, "cap", &x);
            if (x.n != NULL)
                rc = scn__duration(&x, &r->cap, err);
        }
        if (rc == SIM_OK) {
            scn__get(v, "jitter", &x);
            if (x.n != NULL)
                rc = scn__probability(&x, &r->jitter, err);
        }
        break;
    case MDL_RETRY_ON_NEW_CONDITION:
        rc = scn__check_keys(v, keys_cond, 2, err);
        break;
    }
    if (rc != SIM_OK)
        return rc;
    int64_t n;
    if ((rc = scn__require(v, "max", &x, err)) == SIM_OK &&
        (rc = scn__int(&x, 1, MDL_RETRIES_MAX, &n, err)) == SIM_OK)
        r->max = (uint32_t)n;
    if (rc == SIM_OK && s->workload.timeout == 0)
        return scn__fail(v, err, SIM_EINPUT, "a retry policy needs workload.timeout: a retry "
                         "follows a timeout, so without one it could never fire");
    return rc;
}

static int p_on_warning(const scn_scenario *s, const scn__node *v, mdl_policy *p,
                        sim_error *err)
{
    (void)s;
    /* the actions a warning may take, in MDL_WARN_* bit order, and the
     * ladder's others, not modelled on a warning; named by mdl_action_name */
    static const mdl_action taken[] = {MDL_ACT_REJECT_NEW, MDL_ACT_RELEASE_IDLE,
                                       MDL_ACT_CLEAR_CACHE, MDL_ACT_REDUCE_CONCURRENCY};
    static const mdl_action later[] = {MDL_ACT_STOP_PREWARM, MDL_ACT_DEGRADE_CPU,
                                       MDL_ACT_FALLBACK_LKG};
    const char *names[4];
    for (int k = 0; k < 4; k++)
        names[k] = mdl_action_name(taken[k]);
    int rc = scn__expect_sequence(v, err);
    if (rc != SIM_OK)
        return rc;
    p->on_warning = 0;
    void *it = NULL;
    struct fy_node *item;
    size_t i = 0;
    while ((item = fy_node_sequence_iterate(v->n, &it)) != NULL) {
        scn__node a;
        scn__item(v, i++, item, &a);
        const char *t;
        size_t len;
        if ((rc = scn__scalar(&a, &t, &len, err)) != SIM_OK)
            return rc;
        for (size_t k = 0; k < sizeof later / sizeof *later; k++) {
            const char *n = mdl_action_name(later[k]);
            if (strlen(n) == len && memcmp(n, t, len) == 0)
                return scn__not_modelled(&a, err, "this action on a memory warning");
        }
        int bit = 0;
        if ((rc = scn__enum(&a, names, 4, &bit, err)) != SIM_OK)
            return rc;
        if (p->on_warning & (1u << bit))
            return scn__fail(&a, err, SIM_EINPUT, "%s is listed twice", names[bit]);
        p->on_warning |= 1u << bit;
    }
    return SIM_OK;
}

static int p_recovery(const scn_scenario *s, const scn__node *v, mdl_policy *p,
                      sim_error *err)
{
    (void)s;
    const char *kinds[3]; /* a ladder is a mapping, below */
    for (int k = 0; k < 3; k++)
        kinds[k] = mdl_recovery_name((mdl_recovery)k);
    int rc;
    p->nladder = 0;
    if (!fy_node_is_mapping(v->n)) {
        int k = 0;
        if ((rc = scn__enum(v, kinds, 3, &k, err)) != SIM_OK)
            return rc;
        p->recovery = (mdl_recovery)k;
        return SIM_OK;
    }
    static const char *const keys[] = {"ladder"};
    scn__node l;
    if ((rc = scn__check_keys(v, keys, 1, err)) != SIM_OK ||
        (rc = scn__require(v, "ladder", &l, err)) != SIM_OK ||
        (rc = scn__expect_sequence(&l, err)) != SIM_OK)
        return rc;
    if (fy_node_sequence_item_count(l.n) < 1)
        return scn__fail(&l, err, SIM_EINPUT, "expected at least one action");
    const char *names[MDL_ACT_COUNT];
    for (int a = 0; a < MDL_ACT_COUNT; a++)
        names[a] = mdl_action_name((mdl_action)a);
    void *it = NULL;
    struct fy_node *item;
    size_t i = 0;
    int last = -1;
    while ((item = fy_node_sequence_iterate(l.n, &it)) != NULL) {
        scn__node a;
        scn__item(&l, i++, item, &a);
        int k = 0;
        if ((rc = scn__enum(&a, names, MDL_ACT_COUNT, &k, err)) != SIM_OK)
            return rc;
        if (k <= last)
            return scn__fail(&a, err, SIM_EINPUT, "%s is out of order: a ladder lists actions "
                             "in order of reversibility (reject_new, stop_prewarm, "
                             "reduce_concurrency, release_idle, clear_rebuildable_cache, "
                             "degrade_cpu, fallback_lkg), each once", names[k]);
        last = k;
        p->ladder[p->nladder++] = (mdl_action)k;
    }
    p->recovery = MDL_RECOVERY_LADDER;
    return SIM_OK;
}

static int p_safe_mode_after(const scn_scenario *s, const scn__node *v, mdl_policy *p,
                             sim_error *err)
{
    (void)s;
    int64_t n;
    int rc = scn__int(v, 1, 1000, &n, err);
    if (rc == SIM_OK)
        p->safe_mode_after = (uint32_t)n;
    return rc;
}

static int p_stable_after(const scn_scenario *s, const scn__node *v, mdl_policy *p,
                          sim_error *err)
{
    (void)s;
    return scn__duration(v, &p->stable_after, err);
}

/* entitlement: none | increased_memory_limit (iOS's
 * com.apple.developer.kernel.increased-memory-limit): the foreground limit
 * becomes the device's entitled_limit.  A device without one is unchanged,
 * but some device of the scenario must have one. */
static int p_entitlement(const scn_scenario *s, const scn__node *v, mdl_policy *p,
                         sim_error *err)
{
    static const char *const names[] = {"none", "increased_memory_limit"};
    int rc = scn__enum(v, names, 2, &p->entitlement, err);
    if (rc != SIM_OK || !p->entitlement)
        return rc;
    for (unsigned k = 0; k < s->ndevices; k++)
        if (s->devices[k].entitled_limit > 0)
            return SIM_OK;
    return scn__fail(v, err, SIM_EINPUT, "increased_memory_limit: no device of the scenario "
                     "gives an entitled_limit, so it would change nothing");
}

/* The generation axes (docs/scenarios.md "Policies"): each needs a
 * candidate of the scenario with a generation part, or it would change
 * nothing.  0 in the policy: as the candidate says. */
static int need_generation(const scn_scenario *s, const scn__node *v, sim_error *err)
{
    for (unsigned c = 0; c < s->ncandidates; c++)
        for (unsigned k = 0; k < s->candidates[c].nparts; k++)
            if (s->candidates[c].parts[k].has_generation)
                return SIM_OK;
    return scn__fail(v, err, SIM_EINPUT, "no candidate of the scenario has a generation part, "
                     "so it would change nothing");
}

static int p_context(const scn_scenario *s, const scn__node *v, mdl_policy *p, sim_error *err)
{
    int64_t n;
    int rc = scn__int(v, 1, MDL_GEN_CONTEXT_MAX, &n, err);
    if (rc == SIM_OK)
        p->gen_context = (uint32_t)n;
    for (unsigned c = 0; rc == SIM_OK && c < s->ncandidates; c++)
        for (unsigned k = 0; rc == SIM_OK && k < s->candidates[c].nparts; k++) {
            const mdl_part *part = &s->candidates[c].parts[k];
            if (part->has_generation &&
                (double)n * (double)part->gen.kv_per_token > MDL_GEN_KV_MAX)
                rc = scn__fail(v, err, SIM_ELIMIT, "a context of %lld tokens makes %s's KV "
                               "cache more than 1 TiB", (long long)n, s->candidates[c].id);
        }
    return rc == SIM_OK ? need_generation(s, v, err) : rc;
}

/* kv_precision: the KV cache's type (mdl_kv_type), kv_per_token scaled
 * from the candidate's own type to it. */
static int p_kv_precision(const scn_scenario *s, const scn__node *v, mdl_policy *p,
                          sim_error *err)
{
    static const char *const names[] = {"f16", "q8_0", "q4_0"};
    int k = 0;
    int rc = scn__enum(v, names, 3, &k, err);
    if (rc == SIM_OK)
        p->kv_type = (unsigned)k + 1;
    return rc == SIM_OK ? need_generation(s, v, err) : rc;
}

static int p_flash_attn(const scn_scenario *s, const scn__node *v, mdl_policy *p,
                        sim_error *err)
{
    static const char *const names[] = {"auto", "on", "off"};
    int k = 0;
    int rc = scn__enum(v, names, 3, &k, err);
    if (rc == SIM_OK)
        p->flash_attn = (unsigned)k + 1;
    return rc == SIM_OK ? need_generation(s, v, err) : rc;
}

static int p_weights(const scn_scenario *s, const scn__node *v, mdl_policy *p, sim_error *err)
{
    static const char *const names[] = {"mapped", "locked", "repacked", "candidate"};
    int k = 0;
    int rc = scn__enum(v, names, 4, &k, err);
    if (rc == SIM_OK)
        p->gen_weights = (mdl_weights)(k + 1);
    return rc == SIM_OK ? need_generation(s, v, err) : rc;
}

static int p_slots(const scn_scenario *s, const scn__node *v, mdl_policy *p, sim_error *err)
{
    int64_t n;
    int rc = scn__int(v, 1, MDL_GEN_SLOTS_MAX, &n, err);
    if (rc == SIM_OK)
        p->gen_slots = (uint32_t)n;
    return rc == SIM_OK ? need_generation(s, v, err) : rc;
}

/* gpu_layers: llama.cpp's n_gpu_layers (its -1, every layer, is `all`);
 * some candidate of the scenario must give its generation's layers. */
static int p_gpu_layers(const scn_scenario *s, const scn__node *v, mdl_policy *p,
                        sim_error *err)
{
    int64_t n = MDL_GEN_LAYERS_MAX + 1;
    const char *t = NULL;
    size_t len = 0;
    int rc = scn__scalar(v, &t, &len, err);
    if (rc == SIM_OK && len == 2 && memcmp(t, "-1", 2) == 0)
        return scn__fail(v, err, SIM_EINPUT, "llama.cpp's -1 (every layer) is written `all` here");
    if (rc == SIM_OK && !(len == 3 && memcmp(t, "all", 3) == 0))
        rc = scn__int(v, 0, MDL_GEN_LAYERS_MAX + 1, &n, err);
    if (rc != SIM_OK)
        return rc;
    p->gpu_layers = (uint32_t)n + 1;
    for (unsigned c = 0; c < s->ncandidates; c++)
        for (unsigned k = 0; k < s->candidates[c].nparts; k++)
            if (s->candidates[c].parts[k].has_generation &&
                s->candidates[c].parts[k].gen.layers.count > 0)
                return SIM_OK;
    return scn__fail(v, err, SIM_EINPUT, "no candidate of the scenario gives its generation's "
                     "layers (layers: {count, offloaded, bytes, output}), so it would change "
                     "nothing");
}

static int p_unload_after(const scn_scenario *s, const scn__node *v, mdl_policy *p,
                          sim_error *err)
{
    int rc = scn__duration(v, &p->unload_after, err);
    if (rc == SIM_OK && p->unload_after <= 0)
        rc = scn__fail(v, err, SIM_EINPUT, "unload_after must be more than 0");
    return rc == SIM_OK ? need_generation(s, v, err) : rc;
}

typedef struct policy_key {
    const char *name;
    int list_valued; /* prewarm, on_warning: an axis is a list of lists */
    apply_fn apply;
} policy_key;

static const policy_key policy_keys[] = {
    {"sessions", 0, p_sessions},       {"queue", 0, p_queue},
    {"copy_runtime", 0, p_copy_runtime}, {"cancel_on_timeout", 0, p_cancel},
    {"retry", 0, p_retry},             {"residency", 0, p_residency},
    {"prewarm", 1, p_prewarm},         {"on_warning", 1, p_on_warning},
    {"recovery", 0, p_recovery},       {"safe_mode_after", 0, p_safe_mode_after},
    {"stable_after", 0, p_stable_after}, {"entitlement", 0, p_entitlement},
    {"context", 0, p_context},         {"kv_precision", 0, p_kv_precision},
    {"weights", 0, p_weights},         {"slots", 0, p_slots},
    {"unload_after", 0, p_unload_after}, {"flash_attn", 0, p_flash_attn},
    {"gpu_layers", 0, p_gpu_layers},
};
#define NPOLICY_KEYS (sizeof policy_keys / sizeof *policy_keys)

/* ------------------------------------------------------ JSON rendering */

static int json_number(const char *t, size_t len)
{
    size_t i = 0;
    if (i < len && t[i] == '-')
        i++;
    size_t d = i;
    while (i < len && t[i] >= '0' && t[i] <= '9')
        i++;
    if (i == d || (t[d] == '0' && i - d > 1))
        return 0;
    if (i < len && t[i] == '.') {
        size_t f = ++i;
        while (i < len && t[i] >= '0' && t[i] <= '9')
            i++;
        if (i == f)
            return 0;
    }
    return i == len;
}

static void sb_json_string(sim_text *b, const char *t, size_t len)
{
    sim_text_str(b, "\"");
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)t[i];
        char esc[8];
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            sim_text_put(b, esc, 2);
        } else if (c < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", c);
            sim_text_str(b, esc);
        } else {
            sim_text_put(b, (const char *)&t[i], 1);
        }
    }
    sim_text_str(b, "\"");
}

/* A policy value as JSON: plain integers and booleans stay what they are,
 * every other scalar is a string. */
static void sb_json(sim_text *b, struct fy_node *n, int depth)
{
    if (depth > 16) {
        sim_text_str(b, "null");
        return;
    }
    if (fy_node_is_scalar(n)) {
        size_t len;
        const char *t = fy_node_get_scalar(n, &len);
        int plain = fy_node_get_style(n) == FYNS_PLAIN;
        if (t != NULL && plain && (json_number(t, len) || (len == 4 && !memcmp(t, "true", 4)) ||
                                   (len == 5 && !memcmp(t, "false", 5))))
            sim_text_put(b, t, len);
        else
            sb_json_string(b, t != NULL ? t : "", t != NULL ? len : 0);
        return;
    }
    void *it = NULL;
    if (fy_node_is_sequence(n)) {
        struct fy_node *x;
        sim_text_str(b, "[");
        for (int i = 0; (x = fy_node_sequence_iterate(n, &it)) != NULL; i++) {
            if (i)
                sim_text_str(b, ", ");
            sb_json(b, x, depth + 1);
        }
        sim_text_str(b, "]");
        return;
    }
    struct fy_node_pair *pr;
    sim_text_str(b, "{");
    for (int i = 0; (pr = fy_node_mapping_iterate(n, &it)) != NULL; i++) {
        if (i)
            sim_text_str(b, ", ");
        size_t len;
        const char *k = fy_node_get_scalar(fy_node_pair_key(pr), &len);
        sb_json_string(b, k != NULL ? k : "", k != NULL ? len : 0);
        sim_text_str(b, ": ");
        sb_json(b, fy_node_pair_value(pr), depth + 1);
    }
    sim_text_str(b, "}");
}

/* ---------------------------------------------------------------- grid */

typedef struct axis {
    const policy_key *key;
    scn__node values[AXIS_VALUES_MAX]; /* only the first n are used */
    unsigned n;
} axis;

static int is_axis(const policy_key *k, const scn__node *v)
{
    if (!fy_node_is_sequence(v->n))
        return 0;
    if (!k->list_valued)
        return 1;
    void *it = NULL;
    struct fy_node *x = fy_node_sequence_iterate(v->n, &it);
    return x != NULL && fy_node_is_sequence(x);
}

/* One key of `policies`: a single value applies to base; a list of
 * values is an axis of the grid (each value checked on a scratch copy). */
static int load_key(const scn_scenario *s, const scn__node *pol, const policy_key *key,
                    mdl_policy *base, axis *axes, unsigned *naxes, sim_error *err)
{
    scn__node v;
    scn__get(pol, key->name, &v);
    if (!is_axis(key, &v))
        return key->apply(s, &v, base, err);
    axis *a = &axes[(*naxes)++];
    a->key = key;
    void *jt = NULL;
    struct fy_node *x;
    int rc = SIM_OK;
    while (rc == SIM_OK && (x = fy_node_sequence_iterate(v.n, &jt)) != NULL) {
        if (a->n == AXIS_VALUES_MAX)
            return scn__fail(&v, err, SIM_ELIMIT, "more than %u values on one axis",
                             AXIS_VALUES_MAX);
        scn__item(&v, a->n, x, &a->values[a->n]);
        mdl_policy scratch = *base;
        if (key->list_valued && !fy_node_is_sequence(x))
            rc = scn__fail(&a->values[a->n], err, SIM_EINPUT, "expected a list: an "
                           "axis of %s is a list of lists", key->name);
        else
            rc = key->apply(s, &a->values[a->n], &scratch, err);
        a->n++;
    }
    if (rc == SIM_OK && a->n == 0)
        rc = scn__fail(&v, err, SIM_EINPUT, "an axis needs at least one value");
    return rc;
}

/* The keys of `policies`, in file order (the axes' order). */
static int load_keys(const scn_scenario *s, const scn__node *pol, mdl_policy *base,
                     axis *axes, unsigned *naxes, sim_error *err)
{
    const char *names[NPOLICY_KEYS];
    for (unsigned k = 0; k < NPOLICY_KEYS; k++)
        names[k] = policy_keys[k].name;
    int rc;
    if ((rc = scn__expect_mapping(pol, err)) != SIM_OK ||
        (rc = scn__check_keys(pol, names, NPOLICY_KEYS, err)) != SIM_OK)
        return rc;
    void *it = NULL;
    struct fy_node_pair *pr;
    while (rc == SIM_OK && (pr = fy_node_mapping_iterate(pol->n, &it)) != NULL) {
        size_t len;
        const char *kname = fy_node_get_scalar(fy_node_pair_key(pr), &len);
        for (unsigned k = 0; k < NPOLICY_KEYS && kname != NULL && rc == SIM_OK; k++)
            if (strlen(policy_keys[k].name) == len && !memcmp(policy_keys[k].name, kname, len))
                rc = load_key(s, pol, &policy_keys[k], base, axes, naxes, err);
    }
    return rc;
}

/* Policy c of the grid (the first axis varies slowest) and its label. */
static int grid_policy(scn_scenario *s, const mdl_policy *base, const axis *axes,
                       unsigned naxes, uint64_t c, sim_error *err)
{
    mdl_policy p = *base;
    sim_text b = SIM_TEXT_INIT;
    sim_text_str(&b, "{");
    uint64_t rest = c;
    if (s->npaths > 0) { /* the path axis first, varying slowest */
        uint64_t per = 1;
        for (unsigned k = 0; k < naxes; k++)
            per *= axes[k].n;
        s->path_of[c] = (unsigned)(c / per);
        sim_text_str(&b, "\"path\": ");
        sb_json_string(&b, s->path_names[c / per], strlen(s->path_names[c / per]));
        if (naxes > 0)
            sim_text_str(&b, ", ");
    }
    unsigned pick[NPOLICY_KEYS];
    for (unsigned k = naxes; k-- > 0;) {
        pick[k] = (unsigned)(rest % axes[k].n);
        rest /= axes[k].n;
    }
    int rc = SIM_OK;
    for (unsigned k = 0; k < naxes && rc == SIM_OK; k++) {
        const scn__node *v = &axes[k].values[pick[k]];
        rc = axes[k].key->apply(s, v, &p, err);
        if (k)
            sim_text_str(&b, ", ");
        sb_json_string(&b, axes[k].key->name, strlen(axes[k].key->name));
        sim_text_str(&b, ": ");
        sb_json(&b, v->n, 0);
    }
    sim_text_str(&b, "}");
    if (b.oom && rc == SIM_OK)
        rc = sim_error_set(err, SIM_ENOMEM, "out of memory");
    s->policies[c] = p;
    s->policy_json[c] = sim_text_done(&b);
    s->npolicies = (unsigned)c + 1;
    return rc;
}

/* The grid's policies: the product of the axes. */
static int build_grid(scn_scenario *s, const scn__node *pol, const mdl_policy *base,
                      const axis *axes, unsigned naxes, sim_error *err)
{
    uint64_t combos = s->npaths > 0 ? s->npaths : 1;
    for (unsigned k = 0; k < naxes; k++) {
        combos *= axes[k].n;
        if (combos * s->ndevices * s->ncandidates > SCN_CELLS_MAX)
            return scn__fail(pol, err, SIM_ELIMIT, "the grid holds more than %u cells",
                             SCN_CELLS_MAX);
    }
    unsigned first = s->npaths > 0; /* the path axis */
    s->policies = calloc(combos, sizeof *s->policies);
    s->policy_json = calloc(combos, sizeof *s->policy_json);
    s->axes = calloc(naxes + first, sizeof *s->axes);
    s->path_of = calloc(combos, sizeof *s->path_of);
    if (s->policies == NULL || s->policy_json == NULL || s->axes == NULL || s->path_of == NULL)
        return sim_error_set(err, SIM_ENOMEM, "out of memory");
    if (first)
        snprintf(s->axes[0], MDL_NAME_MAX, "path");
    for (unsigned k = 0; k < naxes; k++)
        snprintf(s->axes[first + k], MDL_NAME_MAX, "%s", axes[k].key->name);
    s->naxes = naxes + first;
    int rc = SIM_OK;
    for (uint64_t c = 0; c < combos && rc == SIM_OK; c++)
        rc = grid_policy(s, base, axes, naxes, c, err);
    return rc;
}

int scn__load_policies(scn_scenario *s, const scn__node *root, sim_error *err)
{
    mdl_policy base;
    memset(&base, 0, sizeof base);
    base.sessions = 1;
    base.queue = MDL_QUEUE_UNBOUNDED;
    base.residency = MDL_RES_PRELOAD;
    base.safe_mode_after = 1;
    base.stable_after = 60 * (sim_time)1000000;
    scn__node pol;
    scn__get(root, "policies", &pol);
    axis *axes = NULL;
    unsigned naxes = 0;
    int rc = SIM_OK;
    if (pol.n != NULL) {
        axes = calloc(NPOLICY_KEYS, sizeof *axes);
        if (axes == NULL)
            return scn__fail(&pol, err, SIM_ENOMEM, "out of memory");
        rc = load_keys(s, &pol, &base, axes, &naxes, err);
    }
    if (rc == SIM_OK)
        rc = build_grid(s, &pol, &base, axes, naxes, err);
    free(axes);
    return rc;
}
