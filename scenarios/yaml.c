/* yaml.c - the YAML layer of the scenario loaders: documents from
 * libfyaml, positions and key paths, key checks and typed values.
 *
 * libfyaml reports syntax errors 1-based through a diagnostic object in
 * collect mode (nothing is printed); token marks are 0-based and are
 * shifted here.  Mappings and sequences carry no token of their own, so
 * a collection is placed where its key (or first item) is. */
#include "yaml_int.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int scn__fail(const scn__node *at, sim_error *err, int code, const char *fmt, ...)
{
    char msg[SIM_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (at->path[0] != '\0')
        return sim_error_set(err, code, "%s:%d:%d: %s: %s", at->doc->file, at->line, at->col,
                             at->path, msg);
    return sim_error_set(err, code, "%s:%d:%d: %s", at->doc->file, at->line, at->col, msg);
}

/* ---------------------------------------------------------- documents */

/* Strict UTF-8 without NUL bytes: no overlong forms, no surrogates, no
 * code point above U+10FFFF.  libfyaml 0.7.12 loops forever on some
 * invalid sequences (found by fuzz_device: F7 BA 8C 86), so nothing else
 * reaches it.  Returns the offset of the first bad byte, or len. */
static size_t first_bad_byte(const unsigned char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        unsigned c = s[i];
        size_t n;
        uint32_t cp, min;
        if (c == 0)
            return i;
        if (c < 0x80) {
            i++;
            continue;
        }
        if ((c & 0xE0) == 0xC0)
            n = 2, cp = c & 0x1F, min = 0x80;
        else if ((c & 0xF0) == 0xE0)
            n = 3, cp = c & 0x0F, min = 0x800;
        else if ((c & 0xF8) == 0xF0)
            n = 4, cp = c & 0x07, min = 0x10000;
        else
            return i;
        if (i + n > len)
            return i;
        for (size_t k = 1; k < n; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return i;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return i;
        i += n;
    }
    return len;
}

static void position_of(const char *s, size_t pos, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < pos; i++) {
        if (s[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

/* The offset of line:col (from 1) in text, or len. */
static size_t offset_of(const char *text, size_t len, int line, int col)
{
    size_t i = 0;
    for (int l = 1; l < line && i < len; i++)
        if (text[i] == '\n')
            l++;
    return i + (size_t)(col - 1) < len ? i + (size_t)(col - 1) : len;
}

/* Whether a node may begin at text[i]: the first character of its line
 * but spaces; after a mapping's ': ', a '? ' or a sequence's '- ' (the
 * dash at the line's indent); in a flow collection (depth > 0), after its
 * '[', '{' or ','.  Elsewhere a bracket or a quote is part of a plain
 * scalar ("about: a 5" screen [old]", "ratio 16:"9"). */
static int node_start(const char *text, size_t i, int depth)
{
    size_t j = i;
    while (j > 0 && text[j - 1] == ' ')
        j--;
    if (j == 0 || text[j - 1] == '\n')
        return 1;
    char p = text[j - 1];
    if (p == '[' || p == '{' || p == ',')
        return depth > 0;
    if (j == i) /* no space after the indicator */
        return 0;
    if (p == ':' || p == '?')
        return 1;
    if (p != '-')
        return 0;
    size_t k = j - 1;
    while (k > 0 && text[k - 1] == ' ')
        k--;
    return k == 0 || text[k - 1] == '\n';
}

/* Where the last flow collection ('[' or '{') left open in text starts:
 * its line and column from 1, quoted scalars (with their escapes: "\\" and
 * '') and comments skipped.  0 when none is open. */
static int unclosed(const char *text, size_t len, int *line, int *col)
{
    int ln = 1, cl = 1, depth = 0, found = 0;
    int at_line[64], at_col[64];
    char quote = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (quote == '"' && c == '\\' && i + 1 < len && text[i + 1] != '\n') {
            i++, cl += 2; /* an escape: the next character is not the end */
            continue;
        }
        if (quote != 0) {
            if (c == quote && quote == '\'' && i + 1 < len && text[i + 1] == '\'')
                i++, cl++; /* '' inside single quotes */
            else if (c == quote)
                quote = 0;
        } else if (c == '#' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '\n')) {
            while (i + 1 < len && text[i + 1] != '\n')
                i++;
        } else if ((c == '"' || c == '\'') && node_start(text, i, depth)) {
            quote = c;
        } else if ((c == '[' || c == '{') && (depth > 0 || node_start(text, i, depth))) {
            if (depth < 64)
                at_line[depth] = ln, at_col[depth] = cl;
            depth++;
        } else if ((c == ']' || c == '}') && depth > 0) {
            depth--;
        }
        if (c == '\n')
            ln++, cl = 1;
        else
            cl++;
    }
    if (depth > 0 && depth <= 64) {
        *line = at_line[depth - 1];
        *col = at_col[depth - 1];
        found = 1;
    }
    return found;
}

/* libfyaml's message, made to point where the fault is: an unclosed
 * bracket at the bracket (libfyaml reports the end of the file), a
 * duplicate key by its name. */
static int syntax_error(const char *text, size_t len, const char *file, int line, int col,
                        const char *msg, sim_error *err)
{
    int l, c;
    if ((strstr(msg, "without a closing") != NULL || strstr(msg, "closing bracket") != NULL) &&
        unclosed(text, len, &l, &c))
        return sim_error_set(err, SIM_EINPUT, "%s:%d:%d: YAML syntax error: this '%c' is never "
                             "closed (%s)", file, l, c,
                             text[offset_of(text, len, l, c)], msg);
    if (strstr(msg, "duplicate key") != NULL && line >= 1 && col >= 1) {
        size_t at = offset_of(text, len, line, col), end = at;
        while (end < len && end - at < 64 && text[end] != ':' && text[end] != '\n')
            end++;
        while (end > at && text[end - 1] == ' ')
            end--;
        if (end > at && end < len && text[end] != '\n')
            return sim_error_set(err, SIM_EINPUT, "%s:%d:%d: YAML syntax error: duplicate key "
                                 "'%.*s' (a key may appear once in a mapping)", file, line,
                                 col, (int)(end - at), text + at);
    }
    return sim_error_set(err, SIM_EINPUT, "%s:%d:%d: YAML syntax error: %s", file, line, col,
                         msg);
}

int scn__doc_parse(scn__doc *d, const char *text, size_t len, const char *file,
                   sim_error *err)
{
    memset(d, 0, sizeof *d);
    d->file = file;
    size_t bad = first_bad_byte((const unsigned char *)text, len);
    if (bad < len) {
        int line, col;
        position_of(text, bad, &line, &col);
        return sim_error_set(err, SIM_EINPUT, "%s:%d:%d: not a YAML text (a NUL byte or "
                             "invalid UTF-8)", file, line, col);
    }
    size_t i = 0;
    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r'))
        i++;
    if (i == len)
        return sim_error_set(err, SIM_EINPUT, "%s:1:1: empty file", file);
    d->text = malloc(len + 1);
    if (d->text == NULL)
        return sim_error_set(err, SIM_ENOMEM, "%s: out of memory", file);
    memcpy(d->text, text, len);
    d->text[len] = '\0';
    d->len = len;

    struct fy_diag_cfg dc;
    fy_diag_cfg_default(&dc);
    dc.fp = NULL;
    dc.colorize = false;
    struct fy_diag *diag = fy_diag_create(&dc);
    if (diag == NULL) {
        scn__doc_free(d);
        return sim_error_set(err, SIM_ENOMEM, "%s: out of memory", file);
    }
    fy_diag_set_collect_errors(diag, true);
    struct fy_parse_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.flags = FYPCF_QUIET | FYPCF_COLLECT_DIAG | FYPCF_RESOLVE_DOCUMENT;
    cfg.diag = diag;
    struct fy_parser *fyp = fy_parser_create(&cfg);
    int rc = SIM_OK;
    if (fyp == NULL || fy_parser_set_string(fyp, d->text, len) != 0) {
        rc = sim_error_set(err, SIM_ENOMEM, "%s: out of memory", file);
    } else {
        d->doc = fy_parse_load_document(fyp);
        struct fy_document *extra = d->doc != NULL ? fy_parse_load_document(fyp) : NULL;
        void *it = NULL;
        struct fy_diag_error *e = fy_diag_errors_iterate(diag, &it);
        if (e != NULL) {
            rc = syntax_error(d->text, len, file, e->line, e->column, e->msg, err);
        } else if (d->doc == NULL) {
            rc = sim_error_set(err, SIM_EINPUT, "%s:1:1: no YAML document", file);
        } else if (extra != NULL) {
            rc = sim_error_set(err, SIM_EINPUT, "%s: more than one YAML document (---); a "
                               "scenario file holds one", file);
        }
        if (extra != NULL)
            fy_parse_document_destroy(fyp, extra);
    }
    if (rc != SIM_OK && d->doc != NULL) {
        fy_parse_document_destroy(fyp, d->doc);
        d->doc = NULL;
    }
    /* The parser lives as long as its document: freeing the document
     * after its parser leaks libfyaml's cached scalar text (found by
     * fuzz_device on a quoted key with escapes). */
    d->fyp = fyp;
    fy_diag_destroy(diag);
    if (rc != SIM_OK)
        scn__doc_free(d);
    return rc;
}

int scn__doc_load(scn__doc *d, const char *path, sim_error *err)
{
    memset(d, 0, sizeof *d);
    char *buf = NULL;
    size_t n = 0;
    int rc = sim_read_file(path, SCN__FILE_MAX_BYTES, &buf, &n, err);
    if (rc == SIM_OK)
        rc = scn__doc_parse(d, buf, n, path, err);
    free(buf);
    return rc;
}

void scn__doc_free(scn__doc *d)
{
    if (d->doc != NULL)
        fy_parse_document_destroy(d->fyp, d->doc);
    if (d->fyp != NULL)
        fy_parser_destroy(d->fyp);
    free(d->text);
    d->doc = NULL;
    d->fyp = NULL;
    d->text = NULL;
}

/* --------------------------------------------------------- positions */

/* Keys are plain scalars; their text is read only then (see
 * quoted_escapes below for why quoted text is handled with care). */
static int plain(struct fy_node *k)
{
    return k != NULL && fy_node_is_scalar(k) && fy_node_get_style(k) == FYNS_PLAIN;
}


/* Where a node is: its own token for a scalar, else its first key or
 * item, else (an empty collection) the fallback. */
static void place(struct fy_node *n, const scn__doc *doc, int line, int col, scn__node *out)
{
    out->n = n;
    out->doc = doc;
    out->line = line;
    out->col = col;
    for (int depth = 0; n != NULL && depth < 64; depth++) {
        if (fy_node_is_scalar(n)) {
            struct fy_token *t = fy_node_get_scalar_token(n);
            const struct fy_mark *m = t != NULL ? fy_token_start_mark(t) : NULL;
            if (m != NULL) {
                /* A quoted scalar's mark is past its opening quote. */
                enum fy_node_style st = fy_node_get_style(n);
                int quoted = st == FYNS_SINGLE_QUOTED || st == FYNS_DOUBLE_QUOTED;
                out->line = m->line + 1;
                out->col = m->column + (quoted && m->column > 0 ? 0 : 1);
            }
            return;
        }
        void *it = NULL;
        if (fy_node_is_mapping(n)) {
            struct fy_node_pair *p = fy_node_mapping_iterate(n, &it);
            n = p != NULL ? fy_node_pair_key(p) : NULL;
        } else {
            n = fy_node_sequence_iterate(n, &it);
        }
    }
}

void scn__doc_top(scn__doc *d, scn__node *root)
{
    place(fy_document_root(d->doc), d, 1, 1, root);
    root->path[0] = '\0';
}

int scn__doc_root(scn__doc *d, scn__node *root, sim_error *err)
{
    scn__doc_top(d, root);
    if (root->n == NULL || !fy_node_is_mapping(root->n))
        return scn__fail(root, err, SIM_EINPUT, "expected a mapping of keys at the top level");
    return SIM_OK;
}

/* Key paths longer than SCN__PATH_MAX - 1 are cut: they only label messages. */
static void set_path(scn__node *n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void set_path(scn__node *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(n->path, sizeof n->path, fmt, ap);
    va_end(ap);
}

static void child_path(const scn__node *parent, const char *key, scn__node *child)
{
    if (parent->path[0] != '\0')
        set_path(child, "%s.%s", parent->path, key);
    else
        set_path(child, "%s", key);
}

void scn__get(const scn__node *m, const char *key, scn__node *child)
{
    void *it = NULL;
    struct fy_node_pair *p;
    child->n = NULL;
    child->doc = m->doc;
    child->line = m->line;
    child->col = m->col;
    child_path(m, key, child);
    while ((p = fy_node_mapping_iterate(m->n, &it)) != NULL) {
        struct fy_node *k = fy_node_pair_key(p);
        size_t len;
        const char *s = plain(k) ? fy_node_get_scalar(k, &len) : NULL;
        if (s != NULL && strlen(key) == len && memcmp(s, key, len) == 0) {
            scn__node at;
            place(k, m->doc, m->line, m->col, &at);
            /* A collection value is placed at its key: that is where the
             * reader looks for "kill:" or "minfree:". */
            struct fy_node *v = fy_node_pair_value(p);
            if (v != NULL && fy_node_is_scalar(v))
                place(v, m->doc, at.line, at.col, child);
            else {
                child->n = v;
                child->line = at.line;
                child->col = at.col;
            }
            return;
        }
    }
}

void scn__item(const scn__node *s, size_t i, struct fy_node *item, scn__node *child)
{
    place(item, s->doc, s->line, s->col, child);
    set_path(child, "%s[%zu]", s->path, i);
}

int scn__require(const scn__node *m, const char *key, scn__node *child, sim_error *err)
{
    scn__get(m, key, child);
    if (child->n == NULL) {
        scn__node at = *m;
        return scn__fail(&at, err, SIM_EINPUT, "missing required key \"%s\"", key);
    }
    return SIM_OK;
}

/* ------------------------------------------------------------- keys */


static size_t edit_distance(const char *a, size_t la, const char *b, size_t lb)
{
    size_t row[64];
    if (lb >= 64 || la >= 64)
        return 99;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

int scn__nearest(const char *word, const char *const *names, size_t n)
{
    size_t best = 99, len = strlen(word);
    int at = -1;
    for (size_t i = 0; i < n; i++) {
        size_t dist = edit_distance(word, len, names[i], strlen(names[i]));
        if (dist < best)
            best = dist, at = (int)i;
    }
    return best <= 2 && best < len ? at : -1;
}

int scn__check_keys(const scn__node *m, const char *const *keys, size_t n, sim_error *err)
{
    void *it = NULL;
    struct fy_node_pair *p;
    while ((p = fy_node_mapping_iterate(m->n, &it)) != NULL) {
        struct fy_node *k = fy_node_pair_key(p);
        scn__node at;
        place(k, m->doc, m->line, m->col, &at);
        set_path(&at, "%s", m->path);
        size_t len = 0;
        const char *s = plain(k) ? fy_node_get_scalar(k, &len) : NULL;
        if (s == NULL)
            return scn__fail(&at, err, SIM_EINPUT, "a key must be a plain name (unquoted)");
        size_t best = 99, best_i = 0, i;
        for (i = 0; i < n; i++) {
            if (strlen(keys[i]) == len && memcmp(keys[i], s, len) == 0)
                break;
            size_t dist = edit_distance(s, len, keys[i], strlen(keys[i]));
            if (dist < best) {
                best = dist;
                best_i = i;
            }
        }
        if (i < n)
            continue;
        int shown = (int)(len > 40 ? 40 : len);
        if (best <= 2 && best < len)
            return scn__fail(&at, err, SIM_EINPUT, "unknown key \"%.*s\" (did you mean "
                             "\"%s\"?)", shown, s, keys[best_i]);
        return scn__fail(&at, err, SIM_EINPUT, "unknown key \"%.*s\"", shown, s);
    }
    return SIM_OK;
}

/* ------------------------------------------------------------ values */

static const char *kind_of(struct fy_node *n)
{
    return fy_node_is_mapping(n) ? "a mapping" : fy_node_is_sequence(n) ? "a list" : "a scalar";
}

int scn__expect_mapping(const scn__node *v, sim_error *err)
{
    if (!fy_node_is_mapping(v->n))
        return scn__fail(v, err, SIM_EINPUT, "expected a mapping, got %s", kind_of(v->n));
    return SIM_OK;
}

int scn__expect_sequence(const scn__node *v, sim_error *err)
{
    if (!fy_node_is_sequence(v->n))
        return scn__fail(v, err, SIM_EINPUT, "expected a list, got %s", kind_of(v->n));
    return SIM_OK;
}

int scn__each(const scn__node *list, const char *what, scn__item_fn fn, void *ctx,
              sim_error *err)
{
    int rc = scn__expect_sequence(list, err);
    if (rc != SIM_OK)
        return rc;
    if (fy_node_sequence_item_count(list->n) < 1)
        return scn__fail(list, err, SIM_EINPUT, "expected at least one %s", what);
    void *it = NULL;
    struct fy_node *item;
    size_t i = 0;
    while (rc == SIM_OK && (item = fy_node_sequence_iterate(list->n, &it)) != NULL) {
        scn__node v;
        scn__item(list, i++, item, &v);
        rc = fn(ctx, &v, err);
    }
    return rc;
}

/* Escapes and line breaks in a quoted scalar's source.  libfyaml 0.7.12
 * (Debian 12) leaks a buffer when it unescapes a quoted scalar with more
 * than four escapes in a row (found by fuzz_device), and a smaller one
 * with four '' in a row between other characters ('x''''''''y', found by
 * fuzz_profiles); the atom-iterator leaks of upstream issues #337 and #401
 * are of the same family.  So the loader refuses more than three before
 * asking for the text. */
#define QUOTED_ESCAPES_MAX 3

static size_t quoted_escapes(const scn__node *v)
{
    enum fy_node_style st = fy_node_get_style(v->n);
    if (st != FYNS_SINGLE_QUOTED && st != FYNS_DOUBLE_QUOTED)
        return 0;
    struct fy_token *t = fy_node_get_scalar_token(v->n);
    const struct fy_mark *a = t != NULL ? fy_token_start_mark(t) : NULL;
    const struct fy_mark *b = t != NULL ? fy_token_end_mark(t) : NULL;
    if (a == NULL || b == NULL || b->input_pos > v->doc->len || a->input_pos > b->input_pos)
        return SIZE_MAX; /* cannot look: refuse rather than risk it */
    const char *s = v->doc->text;
    size_t n = 0;
    /* The marks span the content, without the quotes. */
    for (size_t i = a->input_pos; i < b->input_pos; i++) {
        if (s[i] == '\n')
            n++;
        else if (st == FYNS_SINGLE_QUOTED && s[i] == '\'' && i + 1 < b->input_pos &&
                 s[i + 1] == '\'')
            n++, i++;
        else if (st == FYNS_DOUBLE_QUOTED && s[i] == '\\')
            n++, i++;
    }
    return n;
}

int scn__scalar(const scn__node *v, const char **s, size_t *len, sim_error *err)
{
    if (!fy_node_is_scalar(v->n))
        return scn__fail(v, err, SIM_EINPUT, "expected a value, got %s", kind_of(v->n));
    if (quoted_escapes(v) > QUOTED_ESCAPES_MAX)
        return scn__fail(v, err, SIM_ELIMIT, "a quoted value may hold at most %d escapes or "
                         "line breaks; write it unquoted or as a block scalar (|)",
                         QUOTED_ESCAPES_MAX);
    *s = fy_node_get_scalar(v->n, len);
    if (*s == NULL)
        return scn__fail(v, err, SIM_EINPUT, "expected a value");
    return SIM_OK;
}

/* Prefixes the message a parser left in err with v's place. */
static int with_place(const scn__node *v, int rc, sim_error *err)
{
    if (rc != SIM_OK) {
        char msg[SIM_ERROR_MSG_MAX];
        snprintf(msg, sizeof msg, "%s", err != NULL ? err->msg : "");
        return scn__fail(v, err, rc, "%s", msg);
    }
    return SIM_OK;
}

int scn__size(const scn__node *v, int64_t *out, sim_error *err)
{
    const char *s;
    size_t len;
    int rc = scn__scalar(v, &s, &len, err);
    return rc != SIM_OK ? rc : with_place(v, scn_parse_size(s, len, out, err), err);
}

int scn__duration(const scn__node *v, sim_time *out, sim_error *err)
{
    const char *s;
    size_t len;
    int rc = scn__scalar(v, &s, &len, err);
    return rc != SIM_OK ? rc : with_place(v, scn_parse_duration(s, len, out, err), err);
}

int scn__rate(const scn__node *v, double *out, sim_error *err)
{
    const char *s;
    size_t len;
    int rc = scn__scalar(v, &s, &len, err);
    return rc != SIM_OK ? rc : with_place(v, scn_parse_rate(s, len, out, err), err);
}

int scn__probability(const scn__node *v, double *out, sim_error *err)
{
    const char *s;
    size_t len;
    int rc = scn__scalar(v, &s, &len, err);
    return rc != SIM_OK ? rc : with_place(v, scn_parse_probability(s, len, out, err), err);
}

int scn__real(const scn__node *v, double min, double max, double *out, sim_error *err)
{
    const char *t;
    size_t len;
    int rc = scn__scalar(v, &t, &len, err);
    if (rc != SIM_OK)
        return rc;
    char buf[64];
    char *end = NULL;
    if (len > 0 && len < sizeof buf) {
        memcpy(buf, t, len);
        buf[len] = '\0';
        *out = strtod(buf, &end);
    }
    if (len == 0 || len >= sizeof buf || end == NULL || *end != '\0' || !(*out == *out))
        return scn__fail(v, err, SIM_EINPUT, "expected a number, got \"%.*s\"",
                         (int)(len > 40 ? 40 : len), t);
    if (*out < min || *out > max)
        return scn__fail(v, err, SIM_ERANGE, "%.*s is out of range [%g, %g]",
                         (int)(len > 40 ? 40 : len), t, min, max);
    return SIM_OK;
}

int scn__int(const scn__node *v, int64_t min, int64_t max, int64_t *out, sim_error *err)
{
    const char *s;
    size_t len;
    int rc = scn__scalar(v, &s, &len, err);
    if (rc != SIM_OK)
        return rc;
    size_t i = 0;
    int neg = len > 0 && s[0] == '-';
    i = (size_t)neg;
    int64_t x = 0;
    int ok = i < len && len - i <= 18;
    for (; ok && i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            ok = 0;
        else
            x = x * 10 + (s[i] - '0');
    }
    if (neg)
        x = -x;
    if (!ok || x < min || x > max) {
        int shown = (int)(len > 40 ? 40 : len);
        if (min == 1 && max == INT64_MAX)
            return scn__fail(v, err, SIM_EINPUT, "expected a positive integer, got \"%.*s\"",
                             shown, s);
        if (ok)
            return scn__fail(v, err, SIM_ELIMIT, "%lld is out of range [%lld, %lld]", (long long)x,
                             (long long)min, (long long)max);
        return scn__fail(v, err, SIM_EINPUT, "expected an integer, got \"%.*s\"", shown, s);
    }
    *out = x;
    return SIM_OK;
}

int scn__enum(const scn__node *v, const char *const *names, size_t n, int *out,
              sim_error *err)
{
    const char *s;
    size_t len;
    int rc = scn__scalar(v, &s, &len, err);
    if (rc != SIM_OK)
        return rc;
    char expect[256] = "";
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        if (strlen(names[i]) == len && memcmp(names[i], s, len) == 0) {
            *out = (int)i;
            return SIM_OK;
        }
        int w = snprintf(expect + used, sizeof expect - used, "%s%s",
                         i == 0 ? "" : i + 1 == n ? " or " : ", ", names[i]);
        if (w > 0 && (size_t)w < sizeof expect - used)
            used += (size_t)w;
    }
    return scn__fail(v, err, SIM_EINPUT, "expected %s, got \"%.*s\"", expect,
                     (int)(len > 40 ? 40 : len), s);
}

int scn__name(const scn__node *v, char *out, sim_error *err)
{
    const char *s;
    size_t len;
    int rc = scn__scalar(v, &s, &len, err);
    if (rc != SIM_OK)
        return rc;
    int ok = len > 0 && len < MDL_NAME_MAX;
    for (size_t i = 0; ok && i < len; i++)
        ok = (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-';
    if (!ok)
        return scn__fail(v, err, SIM_EINPUT, "expected a name of 1 to %d characters from "
                         "[a-z0-9-], got \"%.*s\"", MDL_NAME_MAX - 1,
                         (int)(len > 40 ? 40 : len), s);
    memcpy(out, s, len);
    out[len] = '\0';
    return SIM_OK;
}

/* ------------------------------------------------------ distributions */

static int unit_value(const scn__node *v, int unit, double *out, sim_error *err)
{
    int64_t x;
    int rc = unit == SCN__UNIT_SIZE       ? scn__size(v, &x, err)
             : unit == SCN__UNIT_DURATION ? scn__duration(v, &x, err)
                                          : scn__int(v, 0, MDL_GEN_TOKENS_MAX, &x, err);
    if (rc == SIM_OK)
        *out = (double)x;
    return rc;
}

static int dist_param(const scn__node *m, const char *key, int unit, double *out,
                      sim_error *err)
{
    scn__node v;
    int rc = scn__require(m, key, &v, err);
    return rc != SIM_OK ? rc : unit_value(&v, unit, out, err);
}

static int dist_empirical(const scn__node *m, int unit, mdl_dist *out, int64_t **store,
                          sim_error *err)
{
    scn__node list;
    int rc = scn__require(m, "values", &list, err);
    if (rc == SIM_OK)
        rc = scn__expect_sequence(&list, err);
    if (rc != SIM_OK)
        return rc;
    int count = fy_node_sequence_item_count(list.n);
    if (count <= 0 || count > MDL_DIST_EMPIRICAL_MAX)
        return scn__fail(&list, err, count <= 0 ? SIM_EINPUT : SIM_ELIMIT,
                         count <= 0 ? "expected at least one value"
                                    : "more than %d values", MDL_DIST_EMPIRICAL_MAX);
    int64_t *vals = malloc(sizeof(int64_t) * (size_t)count);
    if (vals == NULL)
        return sim_error_set(err, SIM_ENOMEM, "%s: out of memory", m->doc->file);
    void *it = NULL;
    struct fy_node *item;
    size_t i = 0;
    while (rc == SIM_OK && (item = fy_node_sequence_iterate(list.n, &it)) != NULL) {
        scn__node v;
        scn__item(&list, i, item, &v);
        double x = 0;
        rc = unit_value(&v, unit, &x, err);
        vals[i++] = (int64_t)x;
    }
    if (rc == SIM_OK)
        rc = with_place(&list, mdl_dist_empirical(out, vals, (uint32_t)count, err), err);
    if (rc != SIM_OK) {
        free(vals);
        return rc;
    }
    *store = vals;
    return SIM_OK;
}

int scn__dist(const scn__node *v, int unit, mdl_dist *out, int64_t **store, sim_error *err)
{
    *store = NULL;
    if (fy_node_is_scalar(v->n)) {
        double x;
        int rc = unit_value(v, unit, &x, err);
        return rc != SIM_OK ? rc : mdl_dist_fixed(out, (int64_t)x, err);
    }
    if (!fy_node_is_mapping(v->n))
        return scn__fail(v, err, SIM_EINPUT, "expected a value or a {dist: ...} mapping, got "
                         "a list");
    static const char *const kinds[] = {"lognormal", "exponential", "uniform", "normal",
                                        "gamma", "empirical"};
    static const char *const keys[][4] = {{"dist", "median", "p95", NULL},
                                          {"dist", "mean", NULL, NULL},
                                          {"dist", "min", "max", NULL},
                                          {"dist", "mean", "sd", NULL},
                                          {"dist", "mean", "cv", NULL},
                                          {"dist", "values", NULL, NULL}};
    scn__node kv;
    int kind = 0;
    int rc = scn__require(v, "dist", &kv, err);
    if (rc == SIM_OK)
        rc = scn__enum(&kv, kinds, 6, &kind, err);
    if (rc != SIM_OK)
        return rc;
    size_t nkeys = keys[kind][2] != NULL ? 3 : 2;
    rc = scn__check_keys(v, keys[kind], nkeys, err);
    if (rc != SIM_OK)
        return rc;
    double a = 0, b = 0;
    switch (kind) {
    case 0:
        rc = dist_param(v, "median", unit, &a, err);
        if (rc == SIM_OK)
            rc = dist_param(v, "p95", unit, &b, err);
        return rc != SIM_OK ? rc : with_place(v, mdl_dist_lognormal(out, a, b, err), err);
    case 1:
        rc = dist_param(v, "mean", unit, &a, err);
        return rc != SIM_OK ? rc : with_place(v, mdl_dist_exponential(out, a, err), err);
    case 2:
        rc = dist_param(v, "min", unit, &a, err);
        if (rc == SIM_OK)
            rc = dist_param(v, "max", unit, &b, err);
        return rc != SIM_OK ? rc : with_place(v, mdl_dist_uniform(out, a, b, err), err);
    case 3:
        rc = dist_param(v, "mean", unit, &a, err);
        if (rc == SIM_OK)
            rc = dist_param(v, "sd", unit, &b, err);
        return rc != SIM_OK ? rc : with_place(v, mdl_dist_normal(out, a, b, err), err);
    case 4: {
        scn__node cv;
        rc = dist_param(v, "mean", unit, &a, err);
        if (rc == SIM_OK)
            rc = scn__require(v, "cv", &cv, err);
        const char *s;
        size_t len;
        if (rc == SIM_OK)
            rc = scn__scalar(&cv, &s, &len, err);
        if (rc == SIM_OK) {
            char buf[64];
            char *end;
            snprintf(buf, sizeof buf, "%.*s", (int)(len < 63 ? len : 63), s);
            b = strtod(buf, &end);
            if (end == buf || *end != '\0')
                return scn__fail(&cv, err, SIM_EINPUT, "expected a number, got \"%s\"", buf);
        }
        return rc != SIM_OK ? rc : with_place(v, mdl_dist_gamma(out, a, b, err), err);
    }
    default:
        return dist_empirical(v, unit, out, store, err);
    }
}

/* ------------------------------------------------------ owned values */

int scn__owned_dist(mdl_owned *owned, const scn__node *v, int unit, mdl_dist *out,
                    sim_error *err)
{
    int64_t *store = NULL;
    int rc = scn__dist(v, unit, out, &store, err);
    if (rc != SIM_OK || store == NULL)
        return rc;
    if (owned->n == owned->cap) {
        unsigned ncap = owned->cap == 0 ? 8 : owned->cap * 2;
        int64_t **n = realloc(owned->v, sizeof *n * ncap);
        if (n == NULL) {
            free(store);
            return sim_error_set(err, SIM_ENOMEM, "%s: out of memory", v->doc->file);
        }
        owned->v = n;
        owned->cap = ncap;
    }
    owned->v[owned->n++] = store;
    return SIM_OK;
}

int scn__amounts(mdl_owned *owned, const scn__node *v, mdl_amounts *out, sim_error *err)
{
    static const char *const cats[] = {"java", "native", "gpu", "file"};
    memset(out, 0, sizeof *out);
    int rc = scn__expect_mapping(v, err);
    if (rc == SIM_OK)
        rc = scn__check_keys(v, cats, MDL_CAT_COUNT, err);
    for (unsigned k = 0; rc == SIM_OK && k < MDL_CAT_COUNT; k++) {
        scn__node a;
        scn__get(v, cats[k], &a);
        if (a.n == NULL)
            continue;
        rc = scn__owned_dist(owned, &a, SCN__UNIT_SIZE, &out->cat[k], err);
        out->mask |= MDL_CAT_BIT(k);
    }
    return rc;
}

void scn__owned_free(mdl_owned *owned)
{
    for (unsigned i = 0; i < owned->n; i++)
        free(owned->v[i]);
    free(owned->v);
    owned->v = NULL;
    owned->n = owned->cap = 0;
}
