#!/usr/bin/env python3
"""reference_batch.py REFERENCE OUTDIR FILE... - runs the reference probe on
each FILE inside one interpreter, as `python3 REFERENCE FILE` would run it
alone, and writes OUTDIR/NAME.out, NAME.err and NAME.status for each (NAME
the file's base name).  One interpreter for a whole corpus: starting Python
costs about 0.3 s on the reference machine, the probe itself far less.

What a separate process would do is reproduced: SystemExit with a message
prints it and a newline to stderr and exits 1, with a number exits with it,
with nothing exits 0; any other exception prints its traceback and exits 1.
"""
import io
import os
import runpy
import sys
import traceback


def run_one(reference, path):
    out, err = io.StringIO(), io.StringIO()
    saved = sys.argv, sys.stdout, sys.stderr
    sys.argv, sys.stdout, sys.stderr = [reference, path], out, err
    status = 0
    try:
        runpy.run_path(reference, run_name="__main__")
    except SystemExit as e:
        if e.code is None:
            status = 0
        elif isinstance(e.code, int):
            status = e.code
        else:
            err.write(str(e.code) + "\n")
            status = 1
    except BaseException:  # the reference crashed: what Python prints
        traceback.print_exc(file=err)
        status = 1
    finally:
        sys.argv, sys.stdout, sys.stderr = saved
    return out.getvalue(), err.getvalue(), status


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    reference, outdir = sys.argv[1], sys.argv[2]
    for path in sys.argv[3:]:
        out, err, status = run_one(reference, path)
        base = os.path.join(outdir, os.path.basename(path))
        for ext, text in ((".out", out), (".err", err), (".status", "%d" % status)):
            with open(base + ext, "w", encoding="utf-8") as f:
                f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
