#!/usr/bin/env python3
"""Planted bugs as small edits of a reference solution.

A planted bug (tests/planted/<puzzle>/<name>.plant) is a header that says how the grader must
reject it, then one or more edits of solutions/<puzzle>/<puzzle>.cu:

    // planted: p14 --simple
    // expect: race
    // match: race in kernel prefix_sum_simple
    // why: Kogge-Stone without the read/write split
    <<<<
        lines of the solution (they must occur exactly once)
    ====
        the lines that replace them
    >>>>

    plant.py SPEC.plant SOLUTION.cu OUT.cu   writes the learner file with the bug planted
    plant.py --make SOLUTION.cu BUGGY.cu     prints a .plant body for an edited copy (no header)

Keeping only the edit means a change to the solution reaches every planted bug, and an edit that
no longer applies stops the build with the reason.
"""
import difflib
import os
import re
import sys

HEADER = re.compile(r"^//\s*(planted|expect|match|why|also|env|advice):")


def parse(spec_text):
    """Returns (header lines, [(old lines, new lines), ...])."""
    lines = spec_text.splitlines()
    header, edits, i = [], [], 0
    while i < len(lines) and (HEADER.match(lines[i]) or not lines[i].strip()):
        if lines[i].strip():
            header.append(lines[i])
        i += 1
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        if lines[i] != "<<<<":
            raise ValueError("line %d: expected '<<<<' to start an edit, got %r" % (i + 1, lines[i]))
        old, new, i = [], [], i + 1
        while i < len(lines) and lines[i] != "====":
            old.append(lines[i])
            i += 1
        i += 1
        while i < len(lines) and lines[i] != ">>>>":
            new.append(lines[i])
            i += 1
        if i >= len(lines):
            raise ValueError("an edit is not closed with '>>>>'")
        i += 1
        if not old:
            raise ValueError("an edit has no solution lines to replace")
        edits.append((old, new))
    if not edits:
        raise ValueError("no edits")
    return header, edits


def find_once(haystack, needle):
    hits = [k for k in range(len(haystack) - len(needle) + 1) if haystack[k:k + len(needle)] == needle]
    return hits


def apply(spec_text, solution_text):
    header, edits = parse(spec_text)
    out = solution_text.splitlines()
    for n, (old, new) in enumerate(edits, 1):
        hits = find_once(out, old)
        if len(hits) != 1:
            raise ValueError("edit %d: its %d solution line(s) occur %d times in the solution (must be once): %r"
                             % (n, len(old), len(hits), old[0]))
        k = hits[0]
        out[k:k + len(old)] = new
    return "\n".join(header + out) + "\n"


def make(solution_text, buggy_text):
    """The edits that turn the solution into the buggy file, each widened until it is unique."""
    sol = solution_text.splitlines()
    bug = [l for l in buggy_text.splitlines()]
    while bug and HEADER.match(bug[0]):
        bug.pop(0)
    blocks = []
    sm = difflib.SequenceMatcher(a=sol, b=bug, autojunk=False)
    for tag, a0, a1, b0, b1 in sm.get_opcodes():
        if tag == "equal":
            continue
        ctx = 0
        while True:
            lo, hi = max(0, a0 - ctx), min(len(sol), a1 + ctx)
            old = sol[lo:hi]
            if old and len(find_once(sol, old)) == 1:
                break
            ctx += 1
        new = sol[lo:a0] + bug[b0:b1] + sol[a1:hi]
        blocks.append("<<<<\n%s\n====\n%s>>>>" % ("\n".join(old), "".join(l + "\n" for l in new)))
    return "\n".join(blocks) + "\n"


def main(argv):
    if len(argv) == 4 and argv[1] == "--make":
        with open(argv[2], encoding="utf-8") as a, open(argv[3], encoding="utf-8") as b:
            sys.stdout.write(make(a.read(), b.read()))
        return 0
    if len(argv) != 4:
        sys.stderr.write(__doc__)
        return 2
    spec, solution, out = argv[1:]
    with open(spec, encoding="utf-8") as f:
        spec_text = f.read()
    with open(solution, encoding="utf-8") as f:
        solution_text = f.read()
    try:
        text = apply(spec_text, solution_text)
    except ValueError as e:
        sys.stderr.write("%s: error: %s\n" % (spec, e))
        return 1
    tmp = out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
