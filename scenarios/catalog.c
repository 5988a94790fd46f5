/* catalog.c - the shipped catalog, embedded at build time
 * (scenarios/embed.cmake), and what `oomsim catalog` shows of it. */
#include "yaml_int.h"
#include "catalog_int.h"

#include <stdlib.h>
#include <string.h>

unsigned scn_catalog_count(void)
{
    return scn__catalog_nfiles;
}

void scn_catalog_get(unsigned i, scn_catalog_item *out)
{
    const scn__catalog_file *f = &scn__catalog_files[i];
    out->path = f->path;
    out->text = f->text;
    out->len = f->len;
    out->kind = strncmp(f->path, "devices/", 8) == 0      ? SCN_KIND_DEVICE
                : strncmp(f->path, "candidates/", 11) == 0 ? SCN_KIND_CANDIDATE
                                                            : SCN_KIND_SCENARIO;
}

/* The scalar text of key in mapping m into out[n] ("" when absent). */
static int text_of(const scn__node *m, const char *key, char *out, size_t n, sim_error *err)
{
    scn__node v;
    scn__get(m, key, &v);
    out[0] = '\0';
    if (v.n == NULL)
        return SIM_OK;
    const char *s;
    size_t len;
    int rc = scn__scalar(&v, &s, &len, err);
    if (rc != SIM_OK)
        return rc;
    if (len >= n)
        len = n - 1;
    memcpy(out, s, len);
    out[len] = '\0';
    return SIM_OK;
}

int scn_catalog_describe(const scn_catalog_item *it, char *name, char *about, size_t n,
                         sim_error *err)
{
    scn__doc doc;
    char file[256];
    snprintf(file, sizeof file, "catalog/%s", it->path);
    int rc = scn__doc_parse(&doc, it->text, it->len, file, err);
    if (rc != SIM_OK)
        return rc;
    scn__node root;
    rc = scn__doc_root(&doc, &root, err);
    if (rc == SIM_OK)
        rc = text_of(&root, it->kind == SCN_KIND_CANDIDATE ? "id" : "name", name,
                     MDL_NAME_MAX, err);
    if (rc == SIM_OK)
        rc = text_of(&root, "about", about, n, err);
    scn__doc_free(&doc);
    return rc;
}

scn_kind scn_kind_of_text(const char *text, size_t len)
{
    scn__doc doc;
    sim_error err;
    if (scn__doc_parse(&doc, text, len, "-", &err) != SIM_OK)
        return SCN_KIND_OTHER;
    scn__node root, v;
    scn_kind k = SCN_KIND_OTHER;
    if (scn__doc_root(&doc, &root, &err) == SIM_OK) {
        scn__get(&root, "workload", &v);
        if (v.n != NULL) {
            k = SCN_KIND_SCENARIO;
        } else {
            scn__get(&root, "parts", &v);
            if (v.n != NULL) {
                k = SCN_KIND_CANDIDATE;
            } else {
                scn__get(&root, "ram", &v);
                if (v.n != NULL)
                    k = SCN_KIND_DEVICE;
                scn__node name, field;
                scn__node cands;
                scn__get(&root, "app", &v);
                scn__get(&root, "field", &field);
                scn__get(&root, "name", &name);
                scn__get(&root, "candidates", &cands);
                if (k == SCN_KIND_OTHER &&
                    (v.n != NULL || field.n != NULL || cands.n != NULL) && name.n == NULL)
                    k = SCN_KIND_FRAGMENT;
            }
        }
    }
    scn__doc_free(&doc);
    return k;
}

int scn_fragment_check(const char *text, size_t len, const char *file, sim_error *err)
{
    /* the fragment, then what makes it a scenario: its lines and columns
     * are the file's own */
    static const char rest[] = "\nname: fragment-check\nseed: 1\nreplications: 1\n"
                               "horizon: 1s\ndevices: [android-4g]\n"
                               "workload: {path: [cold_start]}\n";
    static const char cands[] = "candidates: [classifier-v1]\n";
    /* a fragment of candidates (benchmark-model's runs) brings its own */
    int own = 0;
    for (size_t i = 0; i + 11 <= len && !own; i++)
        own = (i == 0 || text[i - 1] == '\n') && memcmp(text + i, "candidates:", 11) == 0;
    char *all = malloc(len + sizeof rest + sizeof cands);
    if (all == NULL)
        return sim_error_set(err, SIM_ENOMEM, "out of memory");
    memcpy(all, text, len);
    memcpy(all + len, rest, sizeof rest);
    size_t n = len + sizeof rest - 1;
    if (!own) {
        memcpy(all + n, cands, sizeof cands);
        n += sizeof cands - 1;
    }
    scn_scenario s;
    int rc = scn_scenario_parse(all, n, file, &s, err);
    if (rc == SIM_OK)
        scn_scenario_release(&s);
    free(all);
    return rc;
}
