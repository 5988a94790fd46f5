/* options.c - one parser and one help printer for every subcommand's table
 * of options (cli.h, cli_opt).  An argument is an option when the table
 * names it; its value is the next argument, whatever it looks like.  The
 * first error wins; a repeated option keeps its last value. */
#include "cli.h"
#include "traces/traces.h"

#include <stdlib.h>
#include <string.h>

const cli_opt *cli_opt_named(const cli_cmd *c, const char *a)
{
    for (unsigned k = 0; k < c->nopts; k++)
        if (strcmp(a, c->opts[k].name) == 0 ||
            (c->opts[k].alias != NULL && strcmp(a, c->opts[k].alias) == 0))
            return &c->opts[k];
    return NULL;
}

const char *cli_opt_value(const cli_opt *o)
{
    switch (o->kind) {
    case CLI_OPT_HELP:
    case CLI_OPT_FLAG:
    case CLI_OPT_ELSEWHERE: return "";
    case CLI_OPT_COUNT: return "N";
    case CLI_OPT_SECONDS: return "SECONDS";
    case CLI_OPT_CHOICE: return "CHOICE";
    case CLI_OPT_LIST: return "FILE";
    default: return "VALUE";
    }
}

/* An option without lines of its own: its name, its alias, what it takes
 * (a choice's words). */
static void generated_line(const cli_opt *o, FILE *f)
{
    int n = fprintf(f, "  %s%s%s", o->name, o->alias != NULL ? ", " : "",
                    o->alias != NULL ? o->alias : "");
    if (o->kind == CLI_OPT_CHOICE && o->choices != NULL) {
        for (unsigned i = 0; o->choices[i] != NULL; i++)
            n += fprintf(f, "%s%s", i ? "|" : " ", o->choices[i]);
    } else if (cli_opt_value(o)[0] != '\0') {
        n += fprintf(f, " %s", cli_opt_value(o));
    }
    const char *what = o->kind == CLI_OPT_HELP ? "this help"
                       : o->kind == CLI_OPT_LIST ? "(may be given several times)" : "";
    if (what[0] != '\0')
        fprintf(f, "%*s%s", n < 22 ? 22 - n : 1, "", what);
    fputc('\n', f);
}

void cli_help(const cli_cmd *c, FILE *f)
{
    if (c->usage != NULL)
        fputs(c->usage, f);
    else
        c->head(f);
    /* every option of the table: its own lines, or a line made from it */
    for (unsigned k = 0; k < c->nopts; k++) {
        if (c->opts[k].help != NULL)
            fputs(c->opts[k].help, f);
        else
            generated_line(&c->opts[k], f);
    }
    if (c->tail != NULL)
        fputs(c->tail, f);
}

/* Says msg, its first "%s" replaced by arg, as c's usage error. */
static int say(const cli_cmd *c, const char *msg, const char *arg)
{
    if (c->speaks != NULL && !c->speaks())
        return CLI_USAGE;
    const char *at = strstr(msg, "%s");
    size_t head = at != NULL ? (size_t)(at - msg) : strlen(msg);
    size_t n = head + (at != NULL ? strlen(arg) + strlen(at + 2) : 0);
    if (c->message_max > 0 && n >= c->message_max)
        n = c->message_max - 1;
    char *text = malloc(n + 1);
    if (text == NULL)
        return cli_usage_error(c->name, "%s", msg);
    snprintf(text, n + 1, "%.*s%s%s", (int)head, msg, at != NULL ? arg : "",
             at != NULL ? at + 2 : "");
    int rc = cli_usage_error(c->name, "%s", text);
    free(text);
    return rc;
}

/* A value the option refuses (v NULL: missing). */
static int refuse(const cli_cmd *c, const cli_opt *o, const char *v)
{
    if (o->bad == NULL || (v == NULL && o->missing_unexpected))
        return say(c, c->unexpected, o->name);
    return say(c, o->bad, v != NULL ? v : "");
}

/* Stores v as o's value: SIM_OK, or SIM_EINVAL when o refuses it. */
static int store(const cli_opt *o, const char *v, char *into)
{
    switch (o->kind) {
    case CLI_OPT_FILE:
        if (v[0] == '\0')
            return SIM_EINVAL;
        /* fall through */
    case CLI_OPT_TEXT: *(const char **)(into + o->target) = v; return SIM_OK;
    case CLI_OPT_COUNT: {
        unsigned long long n;
        if (cli_number(v, o->min, o->max, &n) != SIM_OK)
            return SIM_EINVAL;
        *(unsigned long long *)(into + o->target) = n;
        return SIM_OK;
    }
    case CLI_OPT_SECONDS: {
        char *end = NULL;
        double t = strtod(v, &end);
        if (end == v || *end != '\0' || !(t >= (double)o->min && t <= (double)o->max))
            return SIM_EINVAL;
        *(double *)(into + o->target) = t;
        return SIM_OK;
    }
    case CLI_OPT_CHOICE:
        for (const char *const *k = o->choices; *k != NULL; k++)
            if (strcmp(v, *k) == 0) {
                *(const char **)(into + o->target) = *k;
                return SIM_OK;
            }
        return SIM_EINVAL;
    case CLI_OPT_LIST: {
        unsigned *count = (unsigned *)(into + o->given);
        if (*count >= o->max)
            return SIM_EINVAL;
        ((const char **)(into + o->target))[(*count)++] = v;
        return SIM_OK;
    }
    default: return SIM_EINVAL;
    }
}

/* Argument a, not an option: the next positional, or too many. */
static int positional(const cli_cmd *c, const char *a, char *into)
{
    if (c->positionals == 0) /* the command takes none */
        return say(c, c->extra != NULL ? c->extra : c->unexpected, a);
    const char **slots = (const char **)(into + c->positional);
    unsigned *n = c->positionals > 1 ? (unsigned *)(into + c->npositional) : NULL;
    unsigned have = n != NULL ? *n : slots[0] != NULL;
    if (have >= c->positionals)
        return say(c, c->extra != NULL ? c->extra : c->unexpected, a);
    slots[have] = a;
    if (n != NULL)
        ++*n;
    return CLI_OK;
}

int cli_parse(const cli_cmd *c, int argc, char **argv, void *into)
{
    char *base = into;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        const cli_opt *o = cli_opt_named(c, a);
        if (o == NULL) {
            int is_option = a[0] == '-' && (a[1] != '\0' || !c->dash_is_positional);
            int rc = is_option ? say(c, c->unexpected, a) : positional(c, a, base);
            if (rc != CLI_OK)
                return rc;
            continue;
        }
        if (o->kind == CLI_OPT_ELSEWHERE)
            return say(c, c->unexpected, a);
        if (o->kind == CLI_OPT_HELP) {
            if (c->speaks == NULL || c->speaks())
                cli_help(c, stdout);
            return CLI_DONE;
        }
        if (o->kind != CLI_OPT_FLAG) {
            if (v == NULL || store(o, v, base) != SIM_OK)
                return refuse(c, o, v);
            i++;
        } else {
            *(int *)(base + o->target) = 1;
        }
        if (o->given != CLI_NOWHERE && o->kind != CLI_OPT_LIST)
            *(int *)(base + o->given) = 1;
    }
    return CLI_OK;
}

/* A decimal integer in [min, max]. */
int cli_number(const char *s, unsigned long long min, unsigned long long max,
               unsigned long long *out)
{
    return sim_decimal(s, min, max, out);
}

/* 1 to 63 characters of [a-z0-9_-]: an id or a name on the command line. */
int cli_valid_id(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= TRC_TEXT_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
              s[i] == '-'))
            return 0;
    return 1;
}
