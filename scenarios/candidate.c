/* candidate.c - candidate profiles: YAML to mdl_candidate
 * (docs/scenarios.md "Candidate").
 *
 * Identity fields are short tokens, never paths or free text: a digest is
 * hex, a runtime and a delegate are [A-Za-z0-9._-]+.  Parts keep their
 * listed order.  A part's delegate_prepare is required exactly when the
 * candidate has a delegate. */
#include "yaml_int.h"

#include <stdlib.h>
#include <string.h>

static int dist(mdl_candidate *c, const scn__node *v, int unit, mdl_dist *out, sim_error *err)
{
    return scn__owned_dist(&c->owned, v, unit, out, err);
}

int scn__token(const scn__node *v, int hex, char *out, sim_error *err)
{
    const char *s;
    size_t len;
    int rc = scn__scalar(v, &s, &len, err);
    if (rc != SIM_OK)
        return rc;
    int ok = len > 0 && len < MDL_TEXT_MAX;
    for (size_t i = 0; ok && i < len; i++) {
        char ch = s[i];
        int is_hex = (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
        int is_word = is_hex || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                      ch == '.' || ch == '_' || ch == '-';
        ok = hex ? is_hex : is_word;
    }
    if (!ok)
        return scn__fail(v, err, SIM_EINPUT, "expected %s of 1 to %d characters, got \"%.*s\"",
                         hex ? "a lowercase hex digest" : "a token from [A-Za-z0-9._-]",
                         MDL_TEXT_MAX - 1, (int)(len > 40 ? 40 : len), s);
    memcpy(out, s, len);
    out[len] = '\0';
    return SIM_OK;
}

static int boolean(const scn__node *v, int *out, sim_error *err)
{
    static const char *const names[] = {"false", "true"};
    return scn__enum(v, names, 2, out, err);
}

static int opt_amounts(mdl_candidate *c, const scn__node *m, const char *key,
                       mdl_amounts *out, sim_error *err)
{
    scn__node v;
    scn__get(m, key, &v);
    memset(out, 0, sizeof *out);
    return v.n == NULL ? SIM_OK : scn__amounts(&c->owned, &v, out, err);
}

/* load, prepare or delegate_prepare; `extra` lists the phase's own keys. */
static int phase(mdl_candidate *c, const scn__node *v, const char *const *keys, size_t nkeys,
                 mdl_phase *out, sim_error *err)
{
    static const char *const threads[] = {"worker", "main"};
    scn__node t;
    int rc = scn__expect_mapping(v, err);
    if (rc == SIM_OK)
        rc = scn__check_keys(v, keys, nkeys, err);
    if (rc == SIM_OK)
        rc = scn__require(v, "time", &t, err);
    if (rc == SIM_OK)
        rc = dist(c, &t, SCN__UNIT_DURATION, &out->time, err);
    if (rc == SIM_OK)
        rc = opt_amounts(c, v, "transient", &out->transient, err);
    if (rc == SIM_OK)
        rc = opt_amounts(c, v, "resident", &out->resident, err);
    if (rc != SIM_OK)
        return rc;
    scn__get(v, "thread", &t);
    out->main_thread = 0;
    return t.n == NULL ? SIM_OK : scn__enum(&t, threads, 2, &out->main_thread, err);
}

/* The load's file_hot flag (mode: mmap only). */
static int file_hot(const scn__node *ld, mdl_part *p, sim_error *err)
{
    scn__node hot;
    scn__get(ld, "file_hot", &hot);
    if (hot.n == NULL)
        return SIM_OK;
    static const char *const bools[] = {"false", "true"};
    int rc = scn__enum(&hot, bools, 2, &p->file_hot, err);
    if (rc == SIM_OK && p->file_hot && p->load_mode != MDL_LOAD_MMAP)
        rc = scn__fail(&hot, err, SIM_EINPUT, "file_hot needs mode: mmap (a copied file "
                       "is native memory already)");
    return rc;
}

/* The delegate's prepare: required with a delegate, refused without. */
static int delegate_prepare(mdl_candidate *c, const scn__node *v, mdl_part *p, sim_error *err)
{
    static const char *const dele_keys[] = {"time", "transient", "resident", "thread", "fail",
                                            "crash"};
    scn__node dp;
    scn__get(v, "delegate_prepare", &dp);
    int has_delegate = strcmp(c->delegate, "none") != 0;
    if (has_delegate && dp.n == NULL)
        return scn__fail(v, err, SIM_EINPUT, "missing required key \"delegate_prepare\" "
                         "(the candidate's delegate is %s)", c->delegate);
    if (!has_delegate && dp.n != NULL)
        return scn__fail(&dp, err, SIM_EINPUT, "delegate_prepare with delegate: none");
    p->has_delegate_prepare = dp.n != NULL;
    if (p->has_delegate_prepare) {
        int rc = phase(c, &dp, dele_keys, 6, &p->delegate_prepare, err);
        scn__node fa, cr;
        scn__get(&dp, "fail", &fa);
        scn__get(&dp, "crash", &cr);
        if (rc == SIM_OK && fa.n != NULL)
            rc = scn__probability(&fa, &p->delegate_fail, err);
        if (rc == SIM_OK && cr.n != NULL)
            rc = scn__probability(&cr, &p->delegate_crash, err);
        if (rc == SIM_OK && p->delegate_fail + p->delegate_crash > 1)
            rc = scn__fail(&dp, err, SIM_EINPUT, "fail + crash exceed 1");
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

/* An LLM part: its generation block stands for the inference key, and its
 * weights.mapped say which of the file's pages are hot. */
static int generation_part(mdl_candidate *c, const scn__node *v, const scn__node *gen,
                           const scn__node *ld, mdl_part *p, sim_error *err)
{
    scn__node x;
    scn__get(v, "inference", &x);
    if (x.n != NULL)
        return scn__fail(&x, err, SIM_EINPUT, "a part with generation has no inference key "
                         "(its requests run as prefill and decode)");
    scn__get(ld, "file_hot", &x);
    if (x.n != NULL)
        return scn__fail(&x, err, SIM_EINPUT, "with generation, weights.mapped says which "
                         "weights are read at every token: file_hot is not used");
    int rc = scn__generation(&c->owned, gen, p, err);
    if (rc == SIM_OK)
        rc = opt_amounts(c, v, "session", &p->session, err);
    return rc;
}

static int load_part(mdl_candidate *c, const scn__node *v, mdl_part *p, sim_error *err)
{
    static const char *const part_keys[] = {"file",      "load",    "prepare", "delegate_prepare",
                                            "inference", "session", "generation"};
    static const char *const load_keys[] = {"mode",   "time",   "transient",
                                            "resident", "thread", "file_hot"};
    static const char *const prep_keys[] = {"time", "transient", "resident", "thread"};
    static const char *const inf_keys[] = {"time", "working_set", "output"};
    static const char *const modes[] = {"mmap", "copy", "decompress"};
    scn__node f, ld, mode, pr, inf, t;
    int m = 0;
    int rc = scn__expect_mapping(v, err);
    if (rc == SIM_OK)
        rc = scn__check_keys(v, part_keys, 7, err);
    if (rc == SIM_OK)
        rc = scn__require(v, "file", &f, err);
    if (rc == SIM_OK)
        rc = scn__size(&f, &p->file, err);
    if (rc == SIM_OK)
        rc = scn__require(v, "load", &ld, err);
    if (rc == SIM_OK)
        rc = phase(c, &ld, load_keys, 6, &p->load, err);
    if (rc == SIM_OK)
        rc = scn__require(&ld, "mode", &mode, err);
    if (rc == SIM_OK)
        rc = scn__enum(&mode, modes, 3, &m, err);
    p->load_mode = (mdl_load_mode)m;
    if (rc == SIM_OK) /* only a mapping that loaded has keys to read */
        rc = file_hot(&ld, p, err);
    if (rc == SIM_OK && p->load_mode == MDL_LOAD_DECOMPRESS && p->load.transient.mask == 0)
        rc = scn__fail(&ld, err, SIM_EINPUT, "decompress needs a transient (the expanded "
                       "copy is built beside the file)");
    if (rc == SIM_OK)
        rc = scn__require(v, "prepare", &pr, err);
    if (rc == SIM_OK)
        rc = phase(c, &pr, prep_keys, 4, &p->prepare, err);
    if (rc != SIM_OK)
        return rc;

    rc = delegate_prepare(c, v, p, err);
    if (rc != SIM_OK)
        return rc;
    p->hot_bytes = p->file_hot ? p->file : 0;
    scn__node gen;
    scn__get(v, "generation", &gen);
    if (gen.n != NULL)
        return generation_part(c, v, &gen, &ld, p, err);
    rc = scn__require(v, "inference", &inf, err);
    if (rc == SIM_OK)
        rc = scn__expect_mapping(&inf, err);
    if (rc == SIM_OK)
        rc = scn__check_keys(&inf, inf_keys, 3, err);
    if (rc == SIM_OK)
        rc = scn__require(&inf, "time", &t, err);
    if (rc == SIM_OK)
        rc = dist(c, &t, SCN__UNIT_DURATION, &p->inference_time, err);
    if (rc == SIM_OK)
        rc = opt_amounts(c, &inf, "working_set", &p->working_set, err);
    if (rc == SIM_OK)
        rc = opt_amounts(c, &inf, "output", &p->output, err);
    if (rc == SIM_OK)
        rc = opt_amounts(c, v, "session", &p->session, err);
    return rc;
}

static int load_parts(mdl_candidate *c, const scn__node *root, sim_error *err)
{
    scn__node parts;
    int rc = scn__require(root, "parts", &parts, err);
    if (rc == SIM_OK)
        rc = scn__expect_mapping(&parts, err);
    if (rc != SIM_OK)
        return rc;
    int count = fy_node_mapping_item_count(parts.n);
    if (count < 1)
        return scn__fail(&parts, err, SIM_EINPUT, "expected at least one part");
    if (count > MDL_PARTS_MAX)
        return scn__fail(&parts, err, SIM_ELIMIT, "%d parts exceed the limit of %d", count,
                         MDL_PARTS_MAX);
    void *it = NULL;
    struct fy_node_pair *pair;
    while ((pair = fy_node_mapping_iterate(parts.n, &it)) != NULL) {
        scn__node key;
        scn__item(&parts, c->nparts, fy_node_pair_key(pair), &key);
        memcpy(key.path, parts.path, sizeof key.path);
        mdl_part *p = &c->parts[c->nparts];
        /* Part names follow the device-name rule: [a-z0-9-]; '_' too. */
        const char *s;
        size_t len;
        rc = scn__scalar(&key, &s, &len, err);
        int ok = rc == SIM_OK && len > 0 && len < MDL_NAME_MAX;
        for (size_t i = 0; ok && i < len; i++)
            ok = (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-' ||
                 s[i] == '_';
        if (rc != SIM_OK)
            return rc;
        if (!ok)
            return scn__fail(&key, err, SIM_EINPUT, "a part name is 1 to %d characters from "
                             "[a-z0-9_-], got \"%.*s\"", MDL_NAME_MAX - 1,
                             (int)(len > 40 ? 40 : len), s);
        memcpy(p->name, s, len);
        p->name[len] = '\0';
        scn__node v;
        scn__get(&parts, p->name, &v);
        rc = load_part(c, &v, p, err);
        if (rc != SIM_OK)
            return rc;
        c->nparts++;
    }
    return SIM_OK;
}

/* One entry of `cache.key`. */
static int key_part(void *ctx, const scn__node *v, sim_error *err)
{
    static const char *const names[] = {"digest", "runtime", "os"};
    unsigned *key = ctx;
    const char *t;
    size_t len;
    int rc = scn__scalar(v, &t, &len, err);
    if (rc != SIM_OK)
        return rc;
    for (unsigned k = 0; k < 3; k++)
        if (strlen(names[k]) == len && memcmp(names[k], t, len) == 0) {
            if (*key & (1u << k))
                return scn__fail(v, err, SIM_EINPUT, "%s is listed twice", names[k]);
            *key |= 1u << k;
            return SIM_OK;
        }
    return scn__fail(v, err, SIM_EINPUT, "expected digest, runtime or os, got \"%.*s\"",
                     (int)(len > 40 ? 40 : len), t);
}

/* `cache.key`: the list of what the key holds; every one by default. */
static int load_key(mdl_candidate *c, const scn__node *cache, sim_error *err)
{
    scn__node v;
    scn__get(cache, "key", &v);
    c->cache_key = MDL_KEY_ALL;
    if (v.n == NULL)
        return SIM_OK;
    c->cache_key = 0;
    int rc = scn__each(&v, "key entry", key_part, &c->cache_key, err);
    if (rc == SIM_OK && !(c->cache_key & MDL_KEY_DIGEST))
        return scn__fail(&v, err, SIM_EINPUT, "the key must hold the model's digest: "
                         "another model's artefact would be found valid");
    return rc;
}

static int load_cache(mdl_candidate *c, const scn__node *root, sim_error *err)
{
    static const char *const keys[] = {"size", "hit", "miss_time", "miss_transient", "key"};
    scn__node v, x;
    scn__get(root, "cache", &v);
    c->has_cache = v.n != NULL;
    if (!c->has_cache)
        return SIM_OK;
    int rc = scn__expect_mapping(&v, err);
    if (rc == SIM_OK)
        rc = scn__check_keys(&v, keys, 5, err);
    if (rc == SIM_OK)
        rc = load_key(c, &v, err);
    if (rc == SIM_OK)
        rc = scn__require(&v, "size", &x, err);
    if (rc == SIM_OK)
        rc = scn__size(&x, &c->cache_size, err);
    if (rc == SIM_OK)
        rc = scn__require(&v, "hit", &x, err);
    if (rc == SIM_OK)
        rc = scn__probability(&x, &c->cache_hit, err);
    if (rc == SIM_OK)
        rc = scn__require(&v, "miss_time", &x, err);
    if (rc == SIM_OK)
        rc = scn__duration(&x, &c->cache_miss_time, err);
    if (rc == SIM_OK)
        rc = opt_amounts(c, &v, "miss_transient", &c->cache_miss_transient, err);
    return rc;
}

/* measured_on: where an imported log ran (docs/scenarios.md "measured_on"):
 * checked, not used by the model. */
static int measured_on(const scn__node *root, sim_error *err)
{
    static const char *const keys[] = {"platform", "target", "backend", "hardware", "build",
                                       "speed_of"};
    static const char *const platforms[] = {"unknown", "android", "ios", "other"};
    scn__node v, x;
    scn__get(root, "measured_on", &v);
    if (v.n == NULL)
        return SIM_OK;
    int rc = scn__expect_mapping(&v, err);
    if (rc == SIM_OK)
        rc = scn__check_keys(&v, keys, 6, err);
    int pf;
    if (rc == SIM_OK)
        rc = scn__require(&v, "platform", &x, err);
    if (rc == SIM_OK)
        rc = scn__enum(&x, platforms, 4, &pf, err);
    for (int k = 1; k < 6 && rc == SIM_OK; k++) {
        scn__get(&v, keys[k], &x);
        const char *s;
        size_t len;
        if (x.n == NULL)
            continue;
        int64_t n;
        if (k == 4)
            rc = scn__int(&x, 1, 9999999, &n, err);
        else if ((rc = scn__scalar(&x, &s, &len, err)) == SIM_OK && (len == 0 || len > 63))
            rc = scn__fail(&x, err, SIM_EINPUT, "%s: 1 to 63 characters", keys[k]);
    }
    return rc;
}

int scn__candidate(const scn__node *root, mdl_candidate *c, sim_error *err)
{
    static const char *const keys[] = {"id",       "about",          "digest",
                                       "runtime",  "delegate",       "fallback",
                                       "fallback_overlap", "receipt_complete", "last_known_good",
                                       "parts",    "cache", "release_on_init_failure",
                                       "shares_weights", "measured_on"};
    scn__node v;
    int rc = scn__check_keys(root, keys, sizeof keys / sizeof *keys, err);
    if (rc == SIM_OK)
        rc = measured_on(root, err);
    if (rc == SIM_OK)
        rc = scn__require(root, "id", &v, err);
    if (rc == SIM_OK)
        rc = scn__name(&v, c->id, err);
    if (rc == SIM_OK)
        rc = scn__require(root, "digest", &v, err);
    if (rc == SIM_OK)
        rc = scn__token(&v, 1, c->digest, err);
    if (rc == SIM_OK)
        rc = scn__require(root, "runtime", &v, err);
    if (rc == SIM_OK)
        rc = scn__token(&v, 0, c->runtime, err);
    if (rc != SIM_OK)
        return rc;
    strcpy(c->delegate, "none");
    strcpy(c->fallback, "none");
    scn__get(root, "delegate", &v);
    if (v.n != NULL && (rc = scn__token(&v, 0, c->delegate, err)) != SIM_OK)
        return rc;
    scn__get(root, "fallback", &v);
    if (v.n != NULL && (rc = scn__token(&v, 0, c->fallback, err)) != SIM_OK)
        return rc;
    scn__get(root, "fallback_overlap", &v);
    if (v.n != NULL && (rc = boolean(&v, &c->fallback_overlap, err)) != SIM_OK)
        return rc;
    c->release_on_init_failure = 1;
    scn__get(root, "release_on_init_failure", &v);
    if (v.n != NULL && (rc = boolean(&v, &c->release_on_init_failure, err)) != SIM_OK)
        return rc;
    c->shares_weights = 1;
    scn__get(root, "shares_weights", &v);
    if (v.n != NULL && (rc = boolean(&v, &c->shares_weights, err)) != SIM_OK)
        return rc;
    scn__get(root, "receipt_complete", &v);
    if (v.n != NULL && (rc = boolean(&v, &c->receipt_complete, err)) != SIM_OK)
        return rc;
    scn__get(root, "last_known_good", &v);
    if (v.n != NULL && (rc = scn__name(&v, c->last_known_good, err)) != SIM_OK)
        return rc;
    if (v.n != NULL && strcmp(c->last_known_good, c->id) == 0)
        return scn__fail(&v, err, SIM_EINPUT, "a candidate cannot be its own last known good");
    scn__get(root, "about", &v);
    if (v.n != NULL) {
        const char *s;
        size_t len;
        if ((rc = scn__scalar(&v, &s, &len, err)) != SIM_OK)
            return rc;
    }
    rc = load_parts(c, root, err);
    return rc != SIM_OK ? rc : load_cache(c, root, err);
}

static int finish(scn__doc *doc, mdl_candidate *c, sim_error *err)
{
    scn__node root;
    int rc = scn__doc_root(doc, &root, err);
    if (rc == SIM_OK)
        rc = scn__candidate(&root, c, err);
    scn__doc_free(doc);
    if (rc != SIM_OK)
        scn_candidate_release(c);
    return rc;
}

int scn_candidate_parse(const char *text, size_t len, const char *file, mdl_candidate *c,
                        sim_error *err)
{
    scn__doc doc;
    memset(c, 0, sizeof *c);
    int rc = scn__doc_parse(&doc, text, len, file, err);
    return rc != SIM_OK ? rc : finish(&doc, c, err);
}

int scn_candidate_load(const char *path, mdl_candidate *c, sim_error *err)
{
    scn__doc doc;
    memset(c, 0, sizeof *c);
    int rc = scn__doc_load(&doc, path, err);
    return rc != SIM_OK ? rc : finish(&doc, c, err);
}

void scn_candidate_release(mdl_candidate *c)
{
    scn__owned_free(&c->owned);
}
