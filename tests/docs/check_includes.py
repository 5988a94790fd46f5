#!/usr/bin/env python3
"""check_includes.py ROOT - every `<!-- include: PATH -->` in ROOT/docs/*.md
is followed by a fenced block whose text is PATH's, byte for byte, so an
example copied from a shipped file cannot go stale. Exit 1 naming each
block that differs, 0 when all agree (and at least one is checked)."""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
bad, checked = 0, 0
for page in sorted((root / "docs").glob("*.md")):
    text = page.read_text(encoding="utf-8")
    for m in re.finditer(r"<!-- include: (\S+) -->\n```[a-z]*\n(.*?)```\n", text, re.S):
        checked += 1
        line = text.count("\n", 0, m.start()) + 1
        want = (root / m.group(1)).read_text(encoding="utf-8")
        if not want.endswith("\n"):
            want += "\n"
        if m.group(2) != want:
            print(f"{page.relative_to(root)}:{line}: the block differs from {m.group(1)}")
            bad += 1
    for m in re.finditer(r"<!-- include: (\S+) -->\n(?!```)", text):
        print(f"{page.relative_to(root)}: include of {m.group(1)} without its block")
        bad += 1
if checked == 0:
    print("no include found")
    bad += 1
sys.exit(1 if bad else 0)
