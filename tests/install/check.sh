#!/bin/sh
# check.sh BUILD_DIR [deb] - oomsim installed like a Unix tool: `cmake
# --install` into a temporary prefix gives a binary that runs the shipped
# default scenario, a man page `man -l` renders with every command, and
# bash and zsh completions with every option of the tables; with "deb",
# `cpack -G DEB` builds a package whose dependencies are Debian's packages
# the binary needs (dpkg-shlibdeps), each shared library it loads checked.
set -eu
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/usr" > "$tmp/install.log"
bin="$tmp/usr/bin/oomsim"
test -x "$bin" || { echo "no $bin"; exit 1; }
"$bin" run -r 4 > "$tmp/run.out" || { echo "the installed oomsim cannot run the default scenario"; exit 1; }
grep -q "peak" "$tmp/run.out" || { echo "the run printed no table"; cat "$tmp/run.out"; exit 1; }
# with MPI built, the installed binary finds its module in the prefix
if [ -n "$(find "$tmp/usr" -name 'oomsim-mpi.so')" ]; then
    "$bin" --version | grep -q "MPI: none" && { echo "the installed binary misses its MPI module"; exit 1; }
fi
page=$(find "$tmp/usr" -name oomsim.1)
test -n "$page" || { echo "no man page installed"; exit 1; }
LC_ALL=C MANPAGER=cat MANWIDTH=100 man -l "$page" > "$tmp/man.txt" 2> "$tmp/man.err" ||
    { echo "man -l failed"; cat "$tmp/man.err"; exit 1; }
bash_c=$(find "$tmp/usr" -path '*bash-completion/completions/oomsim')
zsh_c=$(find "$tmp/usr" -path '*zsh/vendor-completions/_oomsim')
test -n "$bash_c" && test -n "$zsh_c" || { echo "no completions installed"; exit 1; }
bash -n "$bash_c" || { echo "the bash completion does not parse"; exit 1; }
# every option of every command, from the same tables, in all three
"$bin" --options > "$tmp/options"
while read -r cmd rest; do
    opt=${rest#perfetto }
    opt=${opt%% *}
    for f in "$tmp/man.txt" "$bash_c" "$zsh_c"; do
        # the option as a word: "-o" is not the "-o" inside "--options"
        grep -qE -e "(^|[^-[:alnum:]])$opt([^-[:alnum:]]|\$)" "$f" ||
            { echo "$f lacks $cmd's $opt"; exit 1; }
    done
done < "$tmp/options"
for c in run replay explain gen import diagnose lmkd validate catalog probe; do
    grep -q "^   $c\|^  $c" "$tmp/man.txt" || { echo "the man page lacks $c"; exit 1; }
done
if [ "${2:-}" = deb ]; then
    (cd "$build" && cpack -G DEB -B "$tmp/deb" > "$tmp/cpack.log" 2>&1) ||
        { echo "cpack failed"; cat "$tmp/cpack.log"; exit 1; }
    deb=$(find "$tmp/deb" -maxdepth 1 -name 'oomsim_*.deb')
    test -n "$deb" || { echo "no .deb"; exit 1; }
    dpkg-deb -f "$deb" Depends > "$tmp/depends"
    # every shared library the binary and the MPI module load comes from a
    # package the .deb depends on (the binary links most libraries' static
    # archives: libc6 at least)
    grep -q libc6 "$tmp/depends" || { echo "the .deb does not depend on libc6"; exit 1; }
    mods=$(find "$tmp/usr" -name 'oomsim-mpi.so')
    # the libraries each names itself (NEEDED), not what those load in turn
    libs=$(for f in "$bin" $mods; do
        for so in $(objdump -p "$f" | awk '/NEEDED/ {print $2}'); do
            ldd "$f" | awk -v so="$so" '$1 == so && $3 ~ /^\// {print $3}'
        done
    done | sort -u)
    for lib in $libs; do
        pkg=$(dpkg -S "$lib" 2>/dev/null || dpkg -S "$(readlink -f "$lib")" 2>/dev/null ||
              dpkg -S "/usr$lib" 2>/dev/null || true)
        pkg=$(echo "$pkg" | head -1 | cut -d: -f1)
        test -n "$pkg" || continue # not from a package (a build-tree library)
        case "$pkg" in libc6|libgcc-s1) ;; *)
            grep -q "$pkg" "$tmp/depends" ||
                { echo "the .deb does not depend on $pkg ($lib):"; cat "$tmp/depends"; exit 1; } ;;
        esac
    done
    dpkg-deb -c "$deb" | grep -q "usr/share/man/man1/oomsim.1" || { echo "the .deb lacks the man page"; exit 1; }
fi
echo "installed, run, man page and completions: ok"
