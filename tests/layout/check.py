#!/usr/bin/env python3
"""check.py - the house's size rules (docs/design/architecture.md, "Rules a
change must keep"), checked over every C and C++ source git tracks:

  - no source file over 900 lines, no header over 500 (the state of a
    concern in a small header of its own);
  - no function (a test case too) over 80 lines, from its signature to
    its closing brace (a function is a line at column 0 that opens a
    parameter list and whose body ends with a '}' at column 0);
  - sim/sim.h an umbrella: nothing but comments and #include lines
    between its include guard;
  - no string comparison against a death class's or a recovery action's
    name outside tests/: they are compared as enums (rpl_class,
    mdl_action, mdl_recovery), each named by one table (replay/classes.c,
    models/names.c);
  - the calls between files (calls.py draws them from the code): no circle
    of files in any folder but models/, and in models/ none of more than
    MODELS_CIRCLE_MAX files and none through a file of MODELS_OUTSIDE (the
    models that decide, below the world that acts);
  - a map that stays true: every C source of the library folders and
    bench/ named, with its line, in docs/design/architecture.md under its
    folder and in its folder's README.md; every test source in
    tests/README.md; no row naming a source that is gone; and no README or
    design page claiming of a folder what its calls contradict (CLAIMS: "no
    two files call each other", "no circle", the computing files that
    "never call the files that render").

Prints each breach as FILE:LINE: what, and exits 1 when there is one.
Usage: check.py [ROOT]  (default: the repository holding this file)."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import calls  # noqa: E402

FILE_MAX = 900
HEADER_MAX = 500
CLASSES = ('low_memory', 'system_reclaim', 'java_crash', 'native_crash', 'anr', 'watchdog',
           'other', 'unknown',
           'reject_new', 'stop_prewarm', 'reduce_concurrency', 'release_idle',
           'clear_rebuildable_cache', 'degrade_cpu', 'fallback_lkg', 'naive', 'safe_mode', 'ladder')
CLASS_CMP = re.compile(r'\bstr(?:n?case)?n?cmp\s*\([^;]*"(?:%s)"' % '|'.join(CLASSES))
FUNC_MAX = 80
TEST_SIG = re.compile(r'^(TEST_CASE|TEMPLATE_TEST_CASE)\s*\(')  # Catch2's, name first
SIG = re.compile(r'^(?!typedef|struct|enum|union|return|if|for|while|switch|do|else|case|#)'
                 r'[A-Za-z_][\w \t\*]*?\b([A-Za-z_]\w*)\s*\(')


def sources(root):
    """The C and C++ sources git tracks (calls.py's reading)."""
    return calls.sources(root)


def all_sources(root):
    """Every source git tracks (corpus files aside), C, C++ and headers."""
    return sources(root)


def functions(lines):
    """(name, first line, last line), 1-based, of each function definition."""
    for m, i, _, k in calls.spans(lines, lambda line: SIG.match(line) or TEST_SIG.match(line)):
        yield m.group(1), i + 1, k + 1


def check(root):
    bad = []
    for path in sources(root):
        with open(os.path.join(root, path), encoding='utf-8', errors='replace') as f:
            lines = f.read().split('\n')
        if lines and lines[-1] == '':
            lines.pop()
        if len(lines) > FILE_MAX:
            bad.append('%s:1: %d lines, more than %d' % (path, len(lines), FILE_MAX))
        elif path.endswith(('.h', '.hpp')) and len(lines) > HEADER_MAX:
            bad.append('%s:1: a header of %d lines, more than %d' % (path, len(lines), HEADER_MAX))
        if path.endswith(('.c', '.h')) and not path.startswith('tests/'):
            for no, line in enumerate(lines, 1):
                if CLASS_CMP.search(line):
                    bad.append('%s:%d: a death class or recovery action compared as a string' % (path, no))
        if path.endswith(('.c', '.h', '.cpp', '.hpp')):
            for name, a, b in functions(lines):
                if b - a + 1 > FUNC_MAX:
                    bad.append('%s:%d: %s is %d lines, more than %d' %
                               (path, a, name, b - a + 1, FUNC_MAX))
    with open(os.path.join(root, 'sim/sim.h'), encoding='utf-8') as f:
        text = re.sub(r'/\*.*?\*/', '', f.read(), flags=re.S)
    for no, line in enumerate(text.split('\n'), 1):
        s = line.strip()
        if s and not s.startswith(('#include', '#ifndef OOMSIM_SIM_H', '#define OOMSIM_SIM_H',
                                   '#endif')):
            bad.append('sim/sim.h:%d: not an include: %s' % (no, s))
    return bad


MODELS_CIRCLE_MAX = 8
MODELS_OUTSIDE = ('pages.c', 'memstat.c', 'lmkd.c', 'xnu.c', 'generate.c', 'owners.c')
LIBRARIES = ('sim', 'traces', 'models', 'scenarios', 'replay', 'results', 'cli', 'bench')
# What a page may claim of a folder's calls, and the test of the claim on
# (edges, circles) of that folder.
def table_after(text, title):
    """The files of the table that follows a line `title` (its first column)."""
    lines = text.split('\n')
    out = []
    for k, line in enumerate(lines):
        if line.strip() != title:
            continue
        for row in lines[k + 1:]:
            if row.startswith('|'):
                out += re.findall(r'`([^`/]+\.c)`', row.split('|')[1])
            elif out and not row.strip():
                break
    return out


def compute_apart(e, c, text):
    """The files under "Computing:" never call those under "Rendering:", but
    the one the page names as feeding both sides."""
    both = set(re.findall(r'`([^`/]+\.c)`[^.`]*?is the one file that feeds both sides', text))
    render = set(table_after(text, 'Rendering:'))
    for f in table_after(text, 'Computing:'):
        if f in both:
            continue
        for p, to in e.items():
            if os.path.basename(p) == f and any(os.path.basename(t) in render for t in to):
                return False
    return True


CLAIMS = (
    (re.compile(r'no two files call each other', re.I),
     lambda e, c, text: not any(a in e.get(b, ()) for a in e for b in e[a])),
    (re.compile(r'\bno circle\b', re.I), lambda e, c, text: not c),
    (re.compile(r'never call the files that render', re.I), compute_apart),
)


def circle_breaches(graph):
    bad = []
    edges = graph.edges()
    for folder in sorted({os.path.dirname(p) for p in edges}):
        sub = {p: t for p, t in edges.items() if os.path.dirname(p) == folder}
        for c in calls.circles(sub):
            names = ' '.join(os.path.basename(x) for x in c)
            if folder != 'models':
                bad.append('%s: a circle of files: %s' % (folder, names))
                continue
            if len(c) > MODELS_CIRCLE_MAX:
                bad.append('models: a circle of %d files, more than %d: %s' %
                           (len(c), MODELS_CIRCLE_MAX, names))
            for x in c:
                if os.path.basename(x) in MODELS_OUTSIDE:
                    bad.append('models: %s is in a circle: %s' % (os.path.basename(x), names))
    return bad, edges


def table_rows(text):
    """{name: its line} of the markdown table rows naming `name` with a
    description (the last cell not empty)."""
    rows = {}
    for line in text.split('\n'):
        if not line.startswith('|'):
            continue
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if len(cells) < 2 or not cells[-1] or set(cells[-1]) <= set('-: '):
            continue
        for name in re.findall(r'`([^`]+)`', cells[0]):
            rows[name] = cells[-1]
    return rows


def sections(text):
    """{folder: text} of architecture.md's '### FOLDER/' sections."""
    out, cur = {}, None
    for line in text.split('\n'):
        m = re.match(r'^### (\S+)/\s*$', line)
        if m:
            cur = m.group(1)
            out[cur] = ''
        elif line.startswith('## '):
            cur = None
        elif cur is not None:
            out[cur] += line + '\n'
    return out


def read(root, path):
    try:
        with open(os.path.join(root, path), encoding='utf-8') as f:
            return f.read()
    except OSError:
        return None


def map_breaches(root, files, edges):
    bad = []
    arch_path = 'docs/design/architecture.md'
    arch = read(root, arch_path) or ''
    secs = {k: table_rows(v) for k, v in sections(arch).items()}
    readmes = {}
    for path in files:
        top = path.split('/')[0]
        if path.endswith(('.c', '.h')) and top in LIBRARIES:
            rel = path[len(top) + 1:]
            if rel not in secs.get(top, {}):
                bad.append('%s:1: %s is not in its table under "### %s/"' % (arch_path, path, top))
            folder = os.path.dirname(path)
            readme = folder + '/README.md'
            if readme not in readmes:
                readmes[readme] = read(root, readme)
            if readmes[readme] is None:
                bad.append('%s:1: no README.md for %s' % (folder, path))
            elif os.path.basename(path) not in table_rows(readmes[readme]):
                bad.append('%s:1: %s is not in its table' % (readme, os.path.basename(path)))
        elif path.startswith('tests/') and path.endswith(('.cpp', '.hpp', '.c', '.h')):
            if 'tests/README.md' not in readmes:
                readmes['tests/README.md'] = read(root, 'tests/README.md') or ''
            rel = path[len('tests/'):]
            if rel not in table_rows(readmes['tests/README.md']):
                bad.append('tests/README.md:1: %s is not in its table' % rel)
    # no row for a file that is gone
    have = set(files)
    for folder, rows in secs.items():
        for name in rows:
            if name.endswith(('.c', '.h')) and folder + '/' + name not in have:
                bad.append('%s:1: "### %s/" names %s, which is not there' % (arch_path, folder, name))
    for readme, text in sorted(readmes.items()):
        folder = os.path.dirname(readme)
        for name in table_rows(text or ''):
            if name.endswith(('.c', '.h', '.cpp', '.hpp')) and \
                    os.path.normpath(os.path.join(folder, name)) not in have:
                bad.append('%s:1: names %s, which is not there' % (readme, name))
    # claims about a folder's calls: in its README, and in its architecture section
    pages = [(f + '/README.md', f) for f in sorted({os.path.dirname(p) for p in edges})]
    for page, folder in pages:
        text = read(root, page)
        if text is None:
            continue
        sub = {p: t for p, t in edges.items() if os.path.dirname(p) == folder}
        bad += claim_breaches(page, text, sub)
    for folder, text in sections(arch).items():
        sub = {p: t for p, t in edges.items() if os.path.dirname(p) == folder}
        bad += claim_breaches(arch_path + ' "### %s/"' % folder, text, sub)
    return bad


def claim_breaches(page, text, sub):
    bad = []
    cs = calls.circles(sub)
    for pattern, holds in CLAIMS:
        if pattern.search(text) and not holds(sub, cs, text):
            bad.append('%s: claims "%s", which its calls contradict' % (page, pattern.pattern))
    return bad


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..')
    bad = check(root)
    graph = calls.Graph(root)
    more, edges = circle_breaches(graph)
    bad += more
    bad += map_breaches(root, all_sources(root), edges)
    for b in bad:
        print(b)
    print('layout: %d breach%s' % (len(bad), '' if len(bad) == 1 else 'es'))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
