/* manual.c - what the packaging makes from the subcommands' option tables
 * (the tables their parsers read, so none can drift from the parser): the
 * list of every option, the man page oomsim(1), and the bash and zsh
 * completions.  The build runs `oomsim --man` and `oomsim --completions
 * SHELL` and installs their output (CMakeLists.txt). */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

typedef struct table {
    const char *words; /* the command as typed: "import perfetto" */
    const cli_cmd *cmd;
} table;

static const table tables[] = {
    {"run", &cli_run_cmd},
    {"calibrate", &cli_calibrate_cmd},
    {"replay", &cli_replay_cmd},
    {"explain", &cli_explain_cmd},
    {"gen", &cli_gen_cmd},
    {"import perfetto", &cli_import_perfetto_cmd},
    {"import device", &cli_import_device_cmd},
    {"import", &cli_import_yaml_cmd},
    {"diagnose", &cli_diagnose_cmd},
    {"lmkd", &cli_lmkd_cmd},
    {"validate", &cli_validate_cmd},
    {"catalog", &cli_catalog_cmd},
    {"probe", &cli_probe_cmd},
};
#define NTABLES (sizeof tables / sizeof *tables)

/* The import kinds, for completion. */
static const char kinds[] = "perfetto device benchmark-model llama-cpp onnxruntime meminfo metrickit "
                            "play-vitals";

void cli_options_list(FILE *f)
{
    for (size_t t = 0; t < NTABLES; t++)
        for (unsigned k = 0; k < tables[t].cmd->nopts; k++) {
            const cli_opt *o = &tables[t].cmd->opts[k];
            fprintf(f, "%s %s%s%s\n", tables[t].words, o->name,
                    cli_opt_value(o)[0] ? " " : "", cli_opt_value(o));
            if (o->alias != NULL)
                fprintf(f, "%s %s\n", tables[t].words, o->alias);
        }
}

/* Text into roff: a line starting with '.' or '\'' is escaped, '\\' and
 * '-' are written as roff's own. */
static void roff_text(FILE *f, const char *s, size_t n)
{
    int start = 1;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (start && (c == '.' || c == '\''))
            fputs("\\&", f);
        if (c == '\\')
            fputs("\\e", f);
        else if (c == '-')
            fputs("\\-", f);
        else
            fputc(c, f);
        start = c == '\n';
    }
}

/* A help text (what --help prints) as a no-fill block. */
static void roff_block(FILE *f, void (*write)(const void *, FILE *), const void *arg)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (m == NULL)
        return;
    write(arg, m);
    fclose(m);
    fputs(".nf\n", f);
    roff_text(f, buf, len);
    if (len > 0 && buf[len - 1] != '\n')
        fputc('\n', f);
    fputs(".fi\n", f);
    free(buf);
}

static void help_of(const void *cmd, FILE *f) { cli_help(cmd, f); }
static void top_of(const void *top, FILE *f)
{
    void (*fn)(FILE *);
    memcpy(&fn, top, sizeof fn);
    fn(f);
}

void cli_man_page(FILE *f, void (*top)(FILE *))
{
    fputs(".TH OOMSIM 1 \"\" \"oomsim\" \"User Commands\"\n"
          ".SH NAME\noomsim \\- predict on\\-device AI memory, process deaths and recoveries\n"
          ".SH SYNOPSIS\n.B oomsim\n.I COMMAND\n[\\fIARGS\\fR]\n"
          ".SH DESCRIPTION\n"
          "oomsim replays recorded or synthetic stage traces against modelled phones (Android's "
          "lmkd and kernel, iOS's memorystatus), predicts the memory each model lifecycle stage "
          "needs, how likely the app is to be killed on real user paths, and which recovery "
          "strategy keeps it usable; it reads the logs teams already have and classifies exit "
          "records with an evidence level.\n", f);
    roff_block(f, top_of, &top);
    fputs(".SH COMMANDS\n", f);
    for (size_t t = 0; t < NTABLES; t++) {
        fputs(".SS ", f);
        roff_text(f, tables[t].words, strlen(tables[t].words));
        fputc('\n', f);
        roff_block(f, help_of, tables[t].cmd);
    }
    fputs(".SH FILES\nThe shipped devices, candidates and scenarios are inside the binary "
          "(\\fBoomsim catalog\\fR lists them). With MPI, \\fBoomsim\\-mpi.so\\fR beside the "
          "binary (or in ../lib/oomsim) spreads a run or a calibration over ranks.\n"
          ".SH EXIT STATUS\n0 ok, 1 invalid input, 2 usage error, 3 I/O or internal failure, "
          "130 interrupted, 143 terminated, 138 stopped by SIGUSR1 (run \\-\\-checkpoint).\n"
          ".SH SEE ALSO\nThe project's docs/ folder: scenarios.md, traces.md, results.md, "
          "on\\-call.md, imports.md, devices.md, calibration.md.\n", f);
}

/* Every option name of command t, space-separated. */
static void names_of(FILE *f, const cli_cmd *c)
{
    for (unsigned k = 0; k < c->nopts; k++)
        if (c->opts[k].kind != CLI_OPT_ELSEWHERE || strcmp(c->name, "import") == 0)
            fprintf(f, "%s%s%s%s", k ? " " : "", c->opts[k].name,
                    c->opts[k].alias != NULL ? " " : "",
                    c->opts[k].alias != NULL ? c->opts[k].alias : "");
}

/* The command words a completion offers first. */
static void commands(FILE *f)
{
    for (size_t t = 0; t < NTABLES; t++)
        if (strchr(tables[t].words, ' ') == NULL)
            fprintf(f, "%s ", tables[t].words);
}

/* One case arm a command: its words (a one-word command followed by
 * anything), then its options (import's kinds too), in a shell's syntax. */
static void arms(FILE *f, const char *indent, const char *open, const char *close)
{
    for (size_t t = 0; t < NTABLES; t++) {
        const char *w = tables[t].words;
        fprintf(f, "%s\"%s\"%s) %s", indent, w, strchr(w, ' ') != NULL ? "" : "\\ *", open);
        names_of(f, tables[t].cmd);
        if (strcmp(w, "import") == 0)
            fprintf(f, " %s", kinds);
        fputs(close, f);
    }
}

static void bash(FILE *f)
{
    fputs("# bash completion for oomsim, made from its option tables (oomsim --completions "
          "bash)\n_oomsim()\n{\n    local cur=${COMP_WORDS[COMP_CWORD]} opts\n"
          "    if [ \"$COMP_CWORD\" -eq 1 ]; then\n        COMPREPLY=($(compgen -W \"", f);
    commands(f);
    fputs("help --help --version\" -- \"$cur\"))\n        return\n    fi\n"
          "    case \"${COMP_WORDS[1]} ${COMP_WORDS[2]}\" in\n", f);
    arms(f, "        ", "opts=\"", "\" ;;\n");
    fputs("    esac\n    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
          "    [ ${#COMPREPLY[@]} -eq 0 ] && COMPREPLY=($(compgen -f -- \"$cur\"))\n}\n"
          "complete -o filenames -F _oomsim oomsim\n", f);
}

static void zsh(FILE *f)
{
    fputs("#compdef oomsim\n# zsh completion for oomsim, made from its option tables (oomsim "
          "--completions zsh)\nlocal -a opts\nif (( CURRENT == 2 )); then\n  compadd -- ", f);
    commands(f);
    fputs("help --help --version\n  return\nfi\ncase \"$words[2] $words[3]\" in\n", f);
    arms(f, "  ", "opts=(", ") ;;\n");
    fputs("esac\ncompadd -- $opts\n_files\n", f);
}

int cli_completions(FILE *f, const char *shell)
{
    if (strcmp(shell, "bash") == 0)
        bash(f);
    else if (strcmp(shell, "zsh") == 0)
        zsh(f);
    else
        return cli_usage_error("--completions", "bash or zsh, not '%s'", shell);
    return CLI_OK;
}
