#!/bin/sh
# selftest.sh - check.py finds what it is for.  In a scratch repository with
# a file of 901 lines, a function of 81 lines, a sim/sim.h that defines a
# macro and a death class compared as a string, it reports those four
# breaches and exits 1.  In a second one, with a circle of two files in
# replay/, a circle through models/pages.c, a circle of nine files in
# models/, a header of 501 lines named in no table, rows for a file that is
# gone, a README claiming that no two files call each other where two do,
# and one claiming that computing files never call rendering ones where one
# does, it reports each.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# check.py on a scratch repository must exit 1; its report is in out.txt
fails() {
    status=0
    python3 "$here/check.py" "$1" >out.txt || status=$?
    cat out.txt
    [ "$status" -eq 1 ] || { echo "selftest: check.py exited $status on $2, not 1" >&2; exit 1; }
}
# a line the report must hold, else what was missed
finds() { grep -q "$1" out.txt || { echo "selftest: $2 was missed" >&2; exit 1; }; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
git init -q .
mkdir sim
printf '#ifndef OOMSIM_SIM_H\n#define OOMSIM_SIM_H\n#include "error.h"\n#define X 1\n#endif\n' >sim/sim.h
mkdir -p docs/design
printf '### sim/\n\n| file | what |\n|---|---|\n| `sim.h` | the umbrella |\n' >docs/design/architecture.md
printf '| file | what |\n|---|---|\n| `sim.h` | the umbrella |\n' >sim/README.md
{ echo 'int long_one(void)'; echo '{'; i=0; while [ $i -lt 78 ]; do echo '    (void)0;'; i=$((i + 1)); done; echo '}'; } >f.c
{ i=0; while [ $i -lt 901 ]; do echo '/* line */'; i=$((i + 1)); done; } >big.h
printf 'int is_lm(const char *c) { return strcmp(c, "low_memory") == 0; }\n' >cls.c
{ echo 'int short_one(void)'; echo '{'; i=0; while [ $i -lt 77 ]; do echo '    (void)0;'; i=$((i + 1)); done; echo '}'; } >g.c
git add . >/dev/null
fails "$work" "the sizes"
finds '^f.c:1: long_one is 81 lines' "the 81-line function"
finds '^big.h:1: 901 lines' "the 901-line file"
finds '^sim/sim.h:4: not an include: #define X 1' "sim.h's macro"
! grep -q 'short_one' out.txt || { echo "selftest: an 80-line function was reported" >&2; exit 1; }
finds '^cls.c:1: a death class or recovery action compared as a string' "the class compared as a string"
finds '^layout: 4 breaches$' "a breach (not exactly 4)"

# the second repository: the call graph and the map
work2=$(mktemp -d)
trap 'rm -rf "$work" "$work2"' EXIT
cd "$work2"
git init -q .
mkdir -p sim replay models results docs/design
printf '#ifndef OOMSIM_SIM_H\n#define OOMSIM_SIM_H\n#endif\n' >sim/sim.h
printf 'void rpl_b(void);\nvoid rpl_a(void)\n{\n    rpl_b();\n}\n' >replay/a.c
printf 'void rpl_a(void);\nvoid rpl_b(void)\n{\n    rpl_a();\n}\n' >replay/b.c
printf 'int w_y(void);\nint pg_x(void)\n{\n    return w_y();\n}\n' >models/pages.c
printf 'int pg_x(void);\nint w_y(void)\n{\n    return pg_x();\n}\n' >models/world.c
i=1
while [ $i -le 9 ]; do
    next=$((i % 9 + 1))
    printf 'void c%d(void);\nvoid c%d(void)\n{\n    c%d();\n}\n' $next $i $next >models/c$i.c
    i=$((i + 1))
done
{ i=0; while [ $i -lt 501 ]; do echo '/* line */'; i=$((i + 1)); done; } >models/m.h
row() { for f in "$@"; do printf '| `%s` | a file |\n' "$f"; done; }
printf 'void res_r(void);\nvoid res_c(void)\n{\n    res_r();\n}\n' >results/c.c
printf 'void res_r(void)\n{\n}\n' >results/r.c
{ echo '| file | what |'; echo '|---|---|'; row sim.h; } >sim/README.md
{ echo 'The files that compute never call the files that render.'; echo; echo 'Computing:'; echo
  echo '| file | what |'; echo '|---|---|'; row c.c; echo; echo 'Rendering:'; echo
  echo '| file | what |'; echo '|---|---|'; row r.c; } >results/README.md
{ echo 'No two files call each other.'; echo; echo '| file | what |'; echo '|---|---|'; row a.c b.c old.c; } >replay/README.md
{ echo '| file | what |'; echo '|---|---|'; row pages.c world.c c1.c c2.c c3.c c4.c c5.c c6.c c7.c c8.c c9.c; } >models/README.md
{ echo '### sim/'; echo '| file | what |'; echo '|---|---|'; row sim.h
  echo '### replay/'; echo '| file | what |'; echo '|---|---|'; row a.c b.c old.c
  echo '### results/'; echo '| file | what |'; echo '|---|---|'; row c.c r.c
  echo '### models/'; echo '| file | what |'; echo '|---|---|'
  row pages.c world.c c1.c c2.c c3.c c4.c c5.c c6.c c7.c c8.c c9.c; } >docs/design/architecture.md
git add . >/dev/null
fails "$work2" "the map"
finds '^replay: a circle of files: a.c b.c$' "the circle in replay/"
finds '^models: pages.c is in a circle: pages.c world.c$' "the circle through pages.c"
finds '^models: a circle of 9 files, more than 8' "the circle of nine"
finds '^models/m.h:1: a header of 501 lines, more than 500$' "the long header"
finds 'architecture.md:1: models/m.h is not in its table under "### models/"' "the header missing from architecture.md"
finds '^models/README.md:1: m.h is not in its table$' "the header missing from the README"
finds '^replay/README.md: claims "no two files call each other"' "the false claim"
finds '"### replay/" names old.c, which is not there' "the row of a file gone, in architecture.md"
finds '^replay/README.md:1: names old.c, which is not there$' "the row of a file gone, in a README"
finds '^results/README.md: claims "never call the files that render"' "a computing file calling a rendering one"
finds '^layout: 10 breaches$' "a breach of the map (not exactly 10)"
echo "selftest: ok"
