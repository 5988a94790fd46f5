#!/usr/bin/env python3
"""check.py - the house's size rules (docs/design/architecture.md, "Rules a
change must keep"), checked over every C and C++ source git tracks:

  - no source file over 900 lines;
  - no function (a test case too) over 80 lines, from its signature to
    its closing brace (a function is a line at column 0 that opens a
    parameter list and whose body ends with a '}' at column 0);
  - sim/sim.h an umbrella: nothing but comments and #include lines
    between its include guard;
  - no string comparison against a death class's or a recovery action's
    name outside tests/: they are compared as enums (rpl_class,
    mdl_action, mdl_recovery), each named by one table (replay/classes.c,
    models/names.c).

Prints each breach as FILE:LINE: what, and exits 1 when there is one.
Usage: check.py [ROOT]  (default: the repository holding this file)."""
import os
import re
import subprocess
import sys

FILE_MAX = 900
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
    """The C and C++ sources git tracks; outside a checkout (a tarball),
    every one under root but the build trees."""
    try:
        out = subprocess.run(['git', '-C', root, 'ls-files', '*.c', '*.h', '*.cpp', '*.hpp'],
                             capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        out = []
        for top, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d not in ('build', '.git')]
            out += [os.path.relpath(os.path.join(top, f), root) for f in files
                    if f.endswith(('.c', '.h', '.cpp', '.hpp'))]
    return sorted(p for p in out if '/corpus/' not in p)


def functions(lines):
    """(name, first line, last line), 1-based, of each function definition."""
    i, n = 0, len(lines)
    while i < n:
        m = SIG.match(lines[i]) or TEST_SIG.match(lines[i])
        if m is None:
            i += 1
            continue
        j = i
        while j < n and '{' not in lines[j] and not lines[j].rstrip().endswith(';'):
            j += 1
        if j >= n or '{' not in lines[j]:
            i = j + 1
            continue
        if lines[j].rstrip().endswith('}'):  # a one-line body
            yield m.group(1), i + 1, j + 1
            i = j + 1
            continue
        k = j + 1
        while k < n and not lines[k].startswith('}'):
            k += 1
        yield m.group(1), i + 1, k + 1
        i = k + 1


def check(root):
    bad = []
    for path in sources(root):
        with open(os.path.join(root, path), encoding='utf-8', errors='replace') as f:
            lines = f.read().split('\n')
        if lines and lines[-1] == '':
            lines.pop()
        if len(lines) > FILE_MAX:
            bad.append('%s:1: %d lines, more than %d' % (path, len(lines), FILE_MAX))
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


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..')
    bad = check(root)
    for b in bad:
        print(b)
    print('layout: %d breach%s' % (len(bad), '' if len(bad) == 1 else 'es'))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
