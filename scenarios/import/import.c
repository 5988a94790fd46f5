/* import.c - `oomsim import KIND FILE...` (docs/imports.md): the table of
 * importers, one per format, each a file of its own in this folder, and
 * the one driver that reads an input with one, writes its YAML and hands
 * the text back whole or not at all. */
#include "import_int.h"

#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

static const scn_importer *const importers[SCN_IMPORT_COUNT] = {
    [SCN_IMPORT_BENCHMARK_MODEL] = &scn__import_benchmark_model,
    [SCN_IMPORT_MEMINFO] = &scn__import_meminfo,
    [SCN_IMPORT_LLAMA_CPP] = &scn__import_llama_cpp,
    [SCN_IMPORT_ONNXRUNTIME] = &scn__import_onnxruntime,
    [SCN_IMPORT_METRICKIT] = &scn__import_metrickit,
    [SCN_IMPORT_PLAY_VITALS] = &scn__import_play_vitals,
};

const scn_importer *scn_importer_of(scn_import_kind k)
{
    return k < SCN_IMPORT_COUNT ? importers[k] : NULL;
}

const char *scn_import_kind_name(scn_import_kind k)
{
    return k < SCN_IMPORT_COUNT ? importers[k]->name : "?";
}

int scn_import(scn_import_kind kind, const scn_import_input *in, unsigned n,
               const scn_import_opts *o, char **yaml, sim_error *err)
{
    *yaml = NULL;
    if (n == 0)
        return sim_error_set(err, SIM_EINVAL, "import: an input is needed");
    const scn_importer *imp = scn_importer_of(kind);
    if (imp == NULL)
        return sim_error_set(err, SIM_EINVAL, "import: no such kind");
    if (n > imp->inputs)
        return sim_error_set(err, SIM_EINVAL, "import %s: one input", imp->name);
    if (imp->state_size > SCN_IMPORT_STATE_MAX)
        return sim_error_set(err, SIM_EINTERNAL, "import %s: its state exceeds the driver's",
                             imp->name);
    char name[128];
    scn__clean_copy(name, sizeof name, in[0].name, strlen(in[0].name));
    out w;
    scn__out_init(&w, name);
    alignas(max_align_t) unsigned char state[SCN_IMPORT_STATE_MAX];
    memset(state, 0, imp->state_size);
    int rc = imp->read(in, n, name, state, &w.ignored, err);
    if (rc == SIM_OK)
        rc = imp->write(state, o, &w, err);
    if (imp->release != NULL)
        imp->release(state);
    char *text = sim_text_done(&w.t);
    if (rc != SIM_OK) {
        free(text);
        return rc;
    }
    if (text == NULL)
        return sim_error_set(err, SIM_ENOMEM, "import: out of memory");
    *yaml = text;
    return SIM_OK;
}
