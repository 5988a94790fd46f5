#!/usr/bin/env python3
"""calls.py - the call graph between source files, drawn from the code's own
calls, and its circles.

A file calls another when it names a function (or a global table) the other
defines: a call, or a pointer taken to put in a table.  A static inline
function or a function-like macro of a header counts as the calls its body
makes, followed through other inline functions and macros, so a file that
calls an inline helper of a header calls the files that helper calls.  A .c
file that a header includes (the unity build's kill rules) is part of the
header.  Comments and string literals are not read.

Calls through an interface, a table of function pointers that the layer
above installs (`->host->kill(`: a page model's host; `->hold->`: the
owners; `->src->`: the stage costs), are not arrows of the graph: the file
that calls through one names none of the installer's functions.  They are
drawn apart (`interface_edges`), so the map shows them, and `--edges` and
the circles counted with them say where they run.

The graph is drawn per folder: an arrow joins two files of the same folder
(cross-folder arrows are the layering's, checked by the build's link order).
A circle is a strongly connected set of two or more files (Tarjan).

Usage: calls.py [ROOT] [--folder F] [--edges]
  prints each folder's circles, largest first; --edges the arrows too."""
import os
import re
import subprocess
import sys

IDENT = re.compile(r'[A-Za-z_]\w*')
# a definition at column 0: a function's signature, or a global's initialiser
FUNC_DEF = re.compile(r'^(?!typedef|struct\s+\w+\s*\{|enum|union|return|if|for|while|switch|do|else|'
                      r'case|#|extern)([A-Za-z_][\w \t\*]*?)\b([A-Za-z_]\w*)\s*\(')
VAR_DEF = re.compile(r'^(?!typedef|extern|#|static)(?:const\s+)?[A-Za-z_][\w \t\*]*?\b([A-Za-z_]\w*)'
                     r'\s*(?:\[[^\]]*\]\s*)*=')
MACRO_DEF = re.compile(r'^\s*#\s*define\s+([A-Za-z_]\w*)\(')
INCLUDE_C = re.compile(r'^\s*#\s*include\s+"([^"]+\.c)"')
KEYWORDS = {'if', 'for', 'while', 'switch', 'return', 'sizeof', 'do', 'else', 'case'}


def strip(text):
    """The text with comments and string and character literals blanked,
    line breaks kept (so line numbers hold)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == '/' and text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif c == '/' and text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            j = min(j + 1, n)
            out.append(c + ' ' * max(0, j - i - 2) + (c if j - i >= 2 else ''))
            i = j
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def sources(root, exts=('.c', '.h', '.cpp', '.hpp')):
    """The sources git tracks (corpus files aside); outside a checkout (a
    tarball), every one under root but the build trees."""
    try:
        out = subprocess.run(['git', '-C', root, 'ls-files'] + ['*' + e for e in exts],
                             capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        out = []
        for top, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d not in ('build', '.git')]
            out += [os.path.relpath(os.path.join(top, f), root) for f in files
                    if f.endswith(exts)]
    return sorted(p for p in out if '/corpus/' not in p)


def tracked(root):
    """The C sources of the library folders: what the graph is drawn over."""
    return [p for p in sources(root, ('.c', '.h')) if not p.startswith(('tests/', 'bench/'))]


def spans(lines, sig):
    """(match, first, brace, last), 0-based, of each definition whose
    signature sig(line) matches at column 0: the line opening its body, and
    its closing '}' at column 0 (the brace line itself for a one-line body)."""
    i, n = 0, len(lines)
    while i < n:
        m = sig(lines[i])
        if m is None:
            i += 1
            continue
        j = i
        while j < n and '{' not in lines[j] and not lines[j].rstrip().endswith(';'):
            j += 1
        if j >= n or '{' not in lines[j]:
            i = j + 1
            continue
        k = j
        if not lines[j].rstrip().endswith('}'):
            k = j + 1
            while k < n and not lines[k].startswith('}'):
                k += 1
        yield m, i, j, k
        i = k + 1


def bodies(lines):
    """(name, is_static, is_inline, body text) of each function defined at
    column 0."""
    for m, i, j, k in spans(lines, FUNC_DEF.match):
        spec = m.group(1).split()
        yield m.group(2), 'static' in spec, 'inline' in spec, '\n'.join(lines[j:k + 1])


class Graph:
    def __init__(self, root):
        self.root = root
        self.files = tracked(root)
        self.owner = {}    # global name -> the .c file defining it
        self.inline = {}   # inline function or macro name -> (header, body's identifiers)
        self.uses = {}     # file -> identifiers it names (outside its own definitions' names)
        self.part_of = {}  # a .c included by a header -> the header
        texts = {}
        for path in self.files:
            with open(os.path.join(root, path), encoding='utf-8', errors='replace') as f:
                texts[path] = strip(f.read())
        for path, text in texts.items():
            for line in text.split('\n'):
                m = INCLUDE_C.match(line)
                if m and path.endswith('.h'):
                    inc = os.path.normpath(os.path.join(os.path.dirname(path), m.group(1)))
                    self.part_of[inc] = path
        for path, text in texts.items():
            lines = text.split('\n')
            home = self.part_of.get(path, path)
            local = set()
            for name, static, inline, body in bodies(lines):
                if home.endswith('.h') and (inline or static):
                    self.inline[name] = (home, set(IDENT.findall(body)) - {name})
                elif not static and path.endswith('.c'):
                    self.owner[name] = path
                else:
                    local.add(name)
            for line in lines:
                m = VAR_DEF.match(line)
                if m and path.endswith('.c') and '(' not in line.split('=')[0]:
                    self.owner.setdefault(m.group(1), path)
            # function-like macros: the identifiers of their (continued) body
            for no, line in enumerate(lines):
                m = MACRO_DEF.match(line)
                if m is None or not home.endswith('.h'):
                    continue
                body, k = line[m.end():], no
                while body.rstrip().endswith('\\') and k + 1 < len(lines):
                    k += 1
                    body += '\n' + lines[k]
                self.inline.setdefault(m.group(1), (home, set(IDENT.findall(body)) - {m.group(1)}))
            self.uses[path] = set(IDENT.findall(text)) - KEYWORDS
        self._reach = {}

    def _targets(self, name, seen):
        """The .c files a name leads to: its owner, or what an inline
        helper's body names, followed."""
        if name in self.owner:
            return {self.owner[name]}
        if name not in self.inline or name in seen:
            return set()
        if name in self._reach:
            return self._reach[name]
        seen = seen | {name}
        out = set()
        for ident in self.inline[name][1]:
            out |= self._targets(ident, seen)
        self._reach[name] = out
        return out

    def edges(self):
        """{file: set of files it calls}, .c files only, within a folder."""
        out = {}
        for path in self.files:
            if not path.endswith('.c') or path in self.part_of:
                continue
            folder = os.path.dirname(path)
            to = set()
            names = set(self.uses[path])
            for name in names:
                for t in self._targets(name, frozenset()):
                    if t != path and os.path.dirname(t) == folder:
                        to.add(t)
            out[path] = to
        return out


# a member that holds an interface -> the struct type of its table
INTERFACES = {'host': 'pg_host', 'hold': 'w_holders', 'src': 'w_costs'}
INSTALL = re.compile(r'^(?:static\s+)?const\s+(%s)\s+\w+\s*=' % '|'.join(INTERFACES.values()))
THROUGH = re.compile(r'->(%s)->\w+\s*\(' % '|'.join(INTERFACES))


def interface_edges(graph):
    """{file: {(file, interface type)}}: the calls through an interface, to
    the file of the same folder that installs its table."""
    installers = {}
    texts = {}
    for path in graph.files:
        with open(os.path.join(graph.root, path), encoding='utf-8', errors='replace') as f:
            texts[path] = strip(f.read())
        for line in texts[path].split('\n'):
            m = INSTALL.match(line)
            if m and path.endswith('.c'):
                installers.setdefault(m.group(1), set()).add(path)
    out = {}
    for path, text in texts.items():
        if not path.endswith('.c') or path in graph.part_of:
            continue
        for m in THROUGH.finditer(text):
            kind = INTERFACES[m.group(1)]
            for t in installers.get(kind, ()):
                if t != path and os.path.dirname(t) == os.path.dirname(path):
                    out.setdefault(path, set()).add((t, kind))
    return out


def circles(edges):
    """The strongly connected sets of two or more files, largest first."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        work = [(v, iter(sorted(edges.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    advanced = True
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(out, key=lambda c: (-len(c), c))


def main():
    import argparse
    ap = argparse.ArgumentParser(description='the call graph between source files, by folder')
    ap.add_argument('root', nargs='?', default=os.path.join(os.path.dirname(__file__), '..', '..'))
    ap.add_argument('--folder', help='only this folder (models, replay, traces/perfetto, ...)')
    ap.add_argument('--edges', action='store_true', help='print the arrows too')
    args = ap.parse_args()
    g = Graph(args.root)
    edges = g.edges()
    through = interface_edges(g)
    for f in sorted({os.path.dirname(p) for p in edges}):
        if args.folder and f != args.folder.rstrip('/'):
            continue
        sub = {p: t for p, t in edges.items() if os.path.dirname(p) == f}
        n = sum(len(t) for t in sub.values())
        cs = circles(sub)
        print('%s: %d files, %d arrows, %d circle%s' % (f or '.', len(sub), n, len(cs),
                                                       '' if len(cs) == 1 else 's'))
        for c in cs:
            print('  circle of %d: %s' % (len(c), ' '.join(os.path.basename(x) for x in c)))
        both = {p: t | {x for x, _ in through.get(p, ())} for p, t in sub.items()}
        if any(p in through for p in sub):
            for c in circles(both):
                print('  counting the calls through interfaces, a circle of %d: %s' %
                      (len(c), ' '.join(os.path.basename(x) for x in c)))
        if args.edges:
            for p in sorted(sub):
                print('  %s -> %s' % (os.path.basename(p),
                                      ' '.join(sorted(os.path.basename(x) for x in sub[p]))))
                for t, kind in sorted(through.get(p, ())):
                    print('  %s => %s (through %s)' % (os.path.basename(p), os.path.basename(t),
                                                      kind))
    return 0


if __name__ == '__main__':
    sys.exit(main())
