#!/bin/sh
# selftest.sh - check.py finds what it is for: in a scratch repository with
# a file of 901 lines, a function of 81 lines, a sim/sim.h that defines a
# macro and a death class compared as a string, it reports those four
# breaches and exits 1.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
git init -q .
mkdir sim
printf '#ifndef OOMSIM_SIM_H\n#define OOMSIM_SIM_H\n#include "error.h"\n#define X 1\n#endif\n' >sim/sim.h
{ echo 'int long_one(void)'; echo '{'; i=0; while [ $i -lt 78 ]; do echo '    (void)0;'; i=$((i + 1)); done; echo '}'; } >f.c
{ i=0; while [ $i -lt 901 ]; do echo '/* line */'; i=$((i + 1)); done; } >big.h
printf 'int is_lm(const char *c) { return strcmp(c, "low_memory") == 0; }\n' >cls.c
{ echo 'int short_one(void)'; echo '{'; i=0; while [ $i -lt 77 ]; do echo '    (void)0;'; i=$((i + 1)); done; echo '}'; } >g.c
git add . >/dev/null
status=0
python3 "$here/check.py" "$work" >out.txt || status=$?
cat out.txt
[ "$status" -eq 1 ] || { echo "selftest: check.py exited $status, not 1" >&2; exit 1; }
grep -q '^f.c:1: long_one is 81 lines' out.txt || { echo "selftest: the 81-line function was missed" >&2; exit 1; }
grep -q '^big.h:1: 901 lines' out.txt || { echo "selftest: the 901-line file was missed" >&2; exit 1; }
grep -q '^sim/sim.h:4: not an include: #define X 1' out.txt || { echo "selftest: sim.h's macro was missed" >&2; exit 1; }
! grep -q 'short_one' out.txt || { echo "selftest: an 80-line function was reported" >&2; exit 1; }
grep -q '^cls.c:1: a death class or recovery action compared as a string' out.txt || { echo "selftest: the class compared as a string was missed" >&2; exit 1; }
grep -q '^layout: 4 breaches$' out.txt || { echo "selftest: not exactly 4 breaches" >&2; exit 1; }
echo "selftest: ok"
