#!/usr/bin/env python3
"""check_tutorial.py OOMSIM TUTORIAL.md - runs a tutorial page as a test.

In a fresh temporary directory, in the page's order:
- a fenced block right after `<!-- file: NAME -->` is written to NAME;
- in a ```console block, each line starting with `$ ` is a command, run with
  /bin/sh in that directory, with OOMSIM's directory first on PATH (so the
  page says `oomsim`); it must exit 0;
- each `<!-- expect: TEXT -->` after a console block must appear in the
  output (stdout and stderr) of that block's commands.
A page with no command, or an expectation with no block before it, fails.
Exit status 0 when everything holds, 1 otherwise (each failure printed).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    oomsim, page = os.path.abspath(sys.argv[1]), sys.argv[2]
    with open(page, encoding="utf-8") as f:
        lines = f.read().split("\n")
    work = tempfile.mkdtemp(prefix="oomsim-tutorial-")
    env = dict(os.environ, PATH=os.path.dirname(oomsim) + os.pathsep + os.environ["PATH"])
    failures, commands, expects = [], 0, 0
    output = None
    pending_file = None
    i = 0
    try:
        while i < len(lines):
            line = lines[i]
            m = re.match(r"<!-- file: (\S+) -->$", line)
            if m:
                pending_file = m.group(1)
                i += 1
                continue
            m = re.match(r"<!-- expect: (.*) -->$", line)
            if m:
                expects += 1
                if output is None:
                    failures.append("line %d: an expectation with no command before it" % (i + 1))
                elif m.group(1) not in output:
                    failures.append("line %d: the output does not hold %r:\n%s"
                                    % (i + 1, m.group(1), output[-3000:]))
                i += 1
                continue
            if line.startswith("```"):
                lang = line[3:].strip()
                j = i + 1
                while j < len(lines) and not lines[j].startswith("```"):
                    j += 1
                body = lines[i + 1:j]
                if pending_file is not None:
                    with open(os.path.join(work, pending_file), "w", encoding="utf-8") as f:
                        f.write("\n".join(body) + "\n")
                    pending_file = None
                elif lang == "console":
                    output = ""
                    for cmd in body:
                        if not cmd.startswith("$ "):
                            continue
                        commands += 1
                        p = subprocess.run(["/bin/sh", "-c", cmd[2:]], cwd=work, env=env,
                                           capture_output=True, text=True, timeout=600)
                        output += p.stdout + p.stderr
                        if p.returncode != 0:
                            failures.append("line %d: `%s` exited %d:\n%s"
                                            % (i + 1, cmd[2:], p.returncode, p.stderr[-2000:]))
                i = j + 1
                continue
            i += 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if commands == 0:
        failures.append("the page runs no command")
    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    if failures:
        return 1
    print("%s: %d commands, %d expectations hold" % (page, commands, expects))
    return 0


if __name__ == "__main__":
    sys.exit(main())
