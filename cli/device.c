/* device.c - `oomsim import device FILE|DIR... [-o OUT] [--name NAME]
 * [--group-by model]` (docs/devices.md): a device profile from what a
 * phone reports of itself (Android bugreports, Perfetto traces of the
 * phone, iOS JetsamEvent reports),
 * read by replay/ (device.c), each value not in the captures the catalog's
 * figure for the phone's class.  The profile is loaded back before it is
 * written: what is written, `validate` accepts. */
#include "cli.h"
#include "replay/replay.h"
#include "results/results.h"
#include "scenarios/scenarios.h"

#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct dev_args {
    const char *out, *name, *group;
    const char *files[RPL_CAPTURES_MAX];
    unsigned nfiles;
} dev_args;

static const char *const group_choices[] = {"model", NULL};

#define DA(field) offsetof(dev_args, field)
static const cli_opt device_opts[] = {
    {"-o", NULL, CLI_OPT_TEXT, DA(out), CLI_NOWHERE, 0, 0, NULL, NULL, 0,
     "  -o OUT       the profile (OUT.yaml), or with --group-by model a directory of one\n"
     "               profile per model (default: the profile on standard output)\n"},
    {"--name", NULL, CLI_OPT_TEXT, DA(name), CLI_NOWHERE, 0, 0, NULL, NULL, 0,
     "  --name NAME  the profile's name (default: the phone's model)\n"},
    {"--group-by", NULL, CLI_OPT_CHOICE, DA(group), CLI_NOWHERE, 0, 0, group_choices,
     "--group-by takes model", 0,
     "  --group-by model  one profile per model of phone (without it, captures of two\n"
     "               models are refused together)\n"},
    CLI_HELP_OPT,
};

const cli_cmd cli_import_device_cmd = {
    .name = "import",
    .usage = "usage: oomsim import device FILE|DIR... [-o OUT] [--name NAME] [--group-by model]\n"
             "  a device profile from the phone's own captures, each recognised by its\n"
             "  content: Android bugreports (the zip adb bugreport writes, or its main\n"
             "  text), Perfetto traces of the phone (linux.sys_stats, linux.process_stats;\n"
             "  docs/perfetto/phone-trace-config.pbtxt) and iOS JetsamEvent reports (.ips);\n"
             "  a directory: its files. Every value says the file and line (or counters)\n"
             "  it came from; what they do not give is the\n"
             "  catalog's figure for the phone's RAM class, marked assumed (docs/devices.md)\n",
    .opts = device_opts,
    .nopts = sizeof device_opts / sizeof *device_opts,
    .unexpected = "unexpected argument '%s'",
    .positional = DA(files),
    .positionals = RPL_CAPTURES_MAX,
    .npositional = DA(nfiles),
};

typedef struct inputs {
    rpl_capture c[RPL_CAPTURES_MAX];
    char *path[RPL_CAPTURES_MAX];
    unsigned n;
} inputs;

/* A file: read by the importer from its path (a bugreport in pieces). */
static int add_file(inputs *in, const char *path, sim_error *err)
{
    if (in->n == RPL_CAPTURES_MAX)
        return sim_error_set(err, SIM_ELIMIT, "import device: at most %u captures",
                             RPL_CAPTURES_MAX);
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return sim_error_set(err, errno == ENOMEM ? SIM_ENOMEM : SIM_EINPUT, "cannot read %s: %s",
                             path, strerror(errno));
    fclose(f);
    char *p = strdup(path);
    if (p == NULL)
        return sim_error_set(err, SIM_ENOMEM, "out of memory");
    const char *slash = strrchr(path, '/');
    in->path[in->n] = p;
    in->c[in->n] = (rpl_capture){slash != NULL ? p + (slash - path) + 1 : p, NULL, 0, p};
    in->n++;
    return SIM_OK;
}

static int visible(const struct dirent *d)
{
    return d->d_name[0] != '.';
}

/* A file, or a directory's files in name order (hidden ones and those of
 * no capture kind passed over, and said). */
static int add_path(inputs *in, const char *path, sim_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return add_file(in, path, err);
    struct dirent **names = NULL;
    int count = scandir(path, &names, visible, alphasort);
    if (count < 0)
        return sim_error_set(err, SIM_EINPUT, "cannot read the directory %s: %s", path,
                             strerror(errno));
    int rc = SIM_OK;
    unsigned before = in->n;
    for (int k = 0; k < count; k++) {
        size_t len = strlen(path) + strlen(names[k]->d_name) + 2;
        char *file = rc == SIM_OK ? malloc(len) : NULL;
        if (rc == SIM_OK && file == NULL)
            rc = sim_error_set(err, SIM_ENOMEM, "out of memory");
        struct stat fs;
        if (file != NULL) {
            snprintf(file, len, "%s/%s", path, names[k]->d_name);
            if (stat(file, &fs) == 0 && S_ISREG(fs.st_mode)) {
                if (rpl_capture_kind_of_file(file) == RPL_CAPTURE_NONE)
                    fprintf(stderr, "oomsim import device: %s: passed over (not a bugreport, "
                            "a Perfetto trace nor a JetsamEvent report)\n", file);
                else
                    rc = add_file(in, file, err);
            }
        }
        free(file);
        free(names[k]);
    }
    free(names);
    if (rc == SIM_OK && in->n == before)
        rc = sim_error_set(err, SIM_EINPUT, "%s holds no capture (a bugreport or a "
                           "JetsamEvent report)", path);
    return rc;
}

/* The catalog's profile for the phone: the same OS, the nearest RAM. */
typedef struct cat_pick {
    char name[MDL_NAME_MAX];
    const char *text;
    size_t len;
} cat_pick;

static int pick(void *ctx, int os, double ram, const char **name, const char **yaml,
                size_t *len, sim_error *err)
{
    cat_pick *cp = ctx;
    double best = -1;
    for (unsigned i = 0; i < scn_catalog_count(); i++) {
        scn_catalog_item it;
        scn_catalog_get(i, &it);
        if (strncmp(it.path, "devices/", 8) != 0)
            continue;
        mdl_device d;
        sim_error e;
        sim_error_clear(&e);
        int rc = scn_device_parse(it.text, it.len, it.path, &d, &e);
        if (rc == SIM_ENOMEM) {
            *err = e;
            return rc;
        }
        if (rc != SIM_OK)
            continue;
        double gap = d.ram > ram ? (double)d.ram - ram : ram - (double)d.ram;
        if ((int)d.os == os && (best < 0 || gap < best)) {
            best = gap;
            snprintf(cp->name, sizeof cp->name, "%s", d.name);
            cp->text = it.text;
            cp->len = it.len;
        }
        scn_device_release(&d);
    }
    if (best < 0)
        return sim_error_set(err, SIM_EINTERNAL, "the catalog has no device of that OS");
    *name = cp->name;
    *yaml = cp->text;
    *len = cp->len;
    return SIM_OK;
}

/* What is written, the loader accepts: checked before anything is. */
static int check(void *ctx, const char *yaml, const char *name, sim_error *err)
{
    (void)ctx;
    mdl_device d;
    int rc = scn_device_parse(yaml, strlen(yaml), name, &d, err);
    if (rc == SIM_OK)
        scn_device_release(&d);
    return rc;
}

static int write_all(const dev_args *a, const rpl_device_yaml *v, unsigned n)
{
    if (n == 1 && (a->group == NULL || a->out == NULL)) {
        size_t len = strlen(v[0].yaml) - 1; /* both writers add the newline */
        return a->out != NULL ? cli_write_file(a->out, v[0].yaml, len)
                              : cli_write_stdout(v[0].yaml, len);
    }
    if (a->out == NULL) { /* several on standard output: YAML documents */
        int status = CLI_OK;
        for (unsigned k = 0; k < n && status == CLI_OK; k++) {
            if (k > 0 && cli_write_stdout("---", 3) != CLI_OK)
                return CLI_FAILURE;
            status = cli_write_stdout(v[k].yaml, strlen(v[k].yaml) - 1);
        }
        return status;
    }
    cli_file files[RPL_CAPTURES_MAX];
    char names[RPL_CAPTURES_MAX][80];
    for (unsigned k = 0; k < n; k++) {
        snprintf(names[k], sizeof names[k], "%s.yaml", v[k].name);
        files[k] = (cli_file){names[k], v[k].yaml, strlen(v[k].yaml) - 1};
    }
    return cli_write_files(a->out, files, n, NULL);
}

int cli_import_device(int argc, char **argv)
{
    dev_args a;
    memset(&a, 0, sizeof a);
    int status = cli_parse(&cli_import_device_cmd, argc - 1, argv + 1, &a);
    if (status != CLI_OK)
        return status == CLI_DONE ? CLI_OK : status;
    if (a.nfiles == 0)
        return cli_usage_error("import", "a capture is needed (a bugreport, a JetsamEvent "
                               "report, or a directory of them)");
    if (a.name != NULL && !cli_valid_id(a.name))
        return cli_usage_error("import", "--name: 1 to 63 characters of [a-z0-9_-]");
    sim_error err;
    sim_error_clear(&err);
    inputs *in = calloc(1, sizeof *in);
    if (in == NULL) {
        sim_error_set(&err, SIM_ENOMEM, "out of memory");
        return cli_report(&err);
    }
    int rc = SIM_OK;
    for (unsigned k = 0; k < a.nfiles && rc == SIM_OK; k++)
        rc = add_path(in, a.files[k], &err);
    cat_pick cp;
    memset(&cp, 0, sizeof cp);
    rpl_device_opts o = {a.name, a.group != NULL, pick, &cp, check};
    rpl_device_yaml *v = NULL;
    unsigned n = 0;
    if (rc == SIM_OK)
        rc = rpl_device_import(in->c, in->n, &o, &v, &n, &err);
    for (unsigned k = 0; k < in->n; k++)
        free(in->path[k]);
    free(in);
    if (rc != SIM_OK) {
        rpl_device_yaml_free(v, n);
        return cli_report(&err);
    }
    status = write_all(&a, v, n);
    rpl_device_yaml_free(v, n);
    return status;
}

/* ---- what a profile's values rest on (validate) ------------------------ */

void cli_say_provenance(FILE *f, const char *indent, const struct mdl_device *d)
{
    sim_text t = SIM_TEXT_INIT;
    res_provenance_text(&t, indent, d);
    char *s = sim_text_done(&t);
    fputs(s != NULL ? s : "", f);
    free(s);
}
