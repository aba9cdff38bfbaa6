#!/usr/bin/env python3
"""Generate the learners' files from the reference solutions.

A solution (solutions/pNN/*.cu) marks what the learner writes:

        // FILL ME IN (roughly 3 lines)
        <solution lines>
        // END FILL

The skeleton (puzzles/pNN/, same file name) is the solution with the solution lines and the
`// END FILL` line removed; the `FILL ME IN` line stays, so solving a puzzle only ever adds
lines. N must be the number of solution lines that are neither blank nor comment-only.

    python3 scripts/skeletons.py                 rewrite every skeleton
    python3 scripts/skeletons.py --check         exit 1 if a skeleton is stale or a marker is wrong
    python3 scripts/skeletons.py --fix-counts    first correct every N in the solutions

Every puzzles/<name>/ that has a solutions/<name>/ is handled. Standard library only.
"""

import argparse
import re
import sys
import time
from pathlib import Path

FILL = re.compile(r"^\s*//\s*FILL ME IN\b(.*)$")
FILL_COUNT = re.compile(r"^\s*\(roughly (\d+) lines?\)\s*$")
END = re.compile(r"^\s*//\s*END FILL\b(.*)$")
# A comment that starts like a marker but is not one (a typo would silently leave the solution in).
MARKER_LIKE = re.compile(r"^\s*//\s*(FILL\b|END\W*FILL\b)")


class MarkerError(Exception):
    pass


def counted(line):
    """Whether a solution line counts towards N: not blank and not only a comment."""
    s = line.strip()
    return bool(s) and not s.startswith("//")


def count_text(n):
    return "(roughly %d line%s)" % (n, "" if n == 1 else "s")


def parse(text, name):
    """The regions of a solution: a list of (fill_line_index, end_line_index, declared N).
    Raises MarkerError for malformed, nested or unclosed markers."""
    lines = text.splitlines(True)
    regions = []
    open_at = None
    declared = None
    for i, line in enumerate(lines):
        fill, end = FILL.match(line), END.match(line)
        where = "%s:%d" % (name, i + 1)
        if fill:
            if open_at is not None:
                raise MarkerError("%s: FILL ME IN inside the region opened at line %d (regions do not nest; "
                                  "is an END FILL missing?)" % (where, open_at + 1))
            m = FILL_COUNT.match(fill.group(1))
            if not m:
                raise MarkerError("%s: malformed marker %r; write `// FILL ME IN (roughly N lines)`"
                                  % (where, line.strip()))
            open_at, declared = i, int(m.group(1))
        elif end:
            if open_at is None:
                raise MarkerError("%s: END FILL without a FILL ME IN before it" % where)
            if end.group(1).strip():
                raise MarkerError("%s: malformed marker %r; write `// END FILL`" % (where, line.strip()))
            regions.append((open_at, i, declared))
            open_at = None
        elif MARKER_LIKE.match(line):
            raise MarkerError("%s: malformed marker %r; write `// FILL ME IN (roughly N lines)` or `// END FILL`"
                              % (where, line.strip()))
    if open_at is not None:
        raise MarkerError("%s:%d: FILL ME IN is never closed by // END FILL" % (name, open_at + 1))
    return lines, regions


def check_counts(lines, regions, name):
    """Messages for regions whose N is wrong or that hold no solution line."""
    problems = []
    for start, end, declared in regions:
        actual = sum(counted(l) for l in lines[start + 1:end])
        if actual == 0:
            problems.append("%s:%d: the region holds no solution line" % (name, start + 1))
        elif actual != declared:
            problems.append("%s:%d: says %s but the region has %d (blank and comment-only lines do not count); "
                            "`python3 scripts/skeletons.py --fix-counts` corrects it"
                            % (name, start + 1, count_text(declared), actual))
    return problems


def skeleton(text, name):
    """The learner's file for a solution's text. Raises MarkerError."""
    lines, regions = parse(text, name)
    problems = check_counts(lines, regions, name)
    if problems:
        raise MarkerError("\nerror: ".join(problems))
    drop = set()
    for start, end, _ in regions:
        drop.update(range(start + 1, end + 1))
    return "".join(l for i, l in enumerate(lines) if i not in drop)


def fix_counts(text, name):
    lines, regions = parse(text, name)
    for start, end, _ in regions:
        actual = sum(counted(l) for l in lines[start + 1:end])
        lines[start] = re.sub(r"\(roughly \d+ lines?\)", count_text(actual), lines[start], count=1)
    return "".join(lines)


def pairs(root):
    """(solution, skeleton) paths: every solutions/<name>/*.cu whose puzzles/<name>/ exists."""
    out = []
    sol_root = root / "solutions"
    if not sol_root.is_dir():
        return out
    for sol_dir in sorted(p for p in sol_root.iterdir() if p.is_dir()):
        puzzle_dir = root / "puzzles" / sol_dir.name
        if not puzzle_dir.is_dir():
            continue
        for sol in sorted(sol_dir.glob("*.cu")):
            out.append((sol, puzzle_dir / sol.name))
    return out


def read(path):
    with open(str(path), encoding="utf-8", newline="") as f:
        return f.read()


def write(path, text):
    with open(str(path), "w", encoding="utf-8", newline="") as f:
        f.write(text)


def first_difference(a, b):
    la, lb = a.splitlines(), b.splitlines()
    for i in range(max(len(la), len(lb))):
        x = la[i] if i < len(la) else "<end of file>"
        y = lb[i] if i < len(lb) else "<end of file>"
        if x != y:
            return i + 1, x, y
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description="Generate puzzles/*/*.cu skeletons from solutions/*/*.cu.")
    ap.add_argument("--check", action="store_true", help="only check; exit 1 if anything would change")
    ap.add_argument("--fix-counts", action="store_true", help="correct the N of every FILL ME IN in the solutions")
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1], help="repository root")
    args = ap.parse_args(argv)
    if args.check and args.fix_counts:
        ap.error("--check and --fix-counts do not go together")

    root = args.root
    failures = []
    todo = pairs(root)
    if not todo:
        print("skeletons: no solutions/<name>/*.cu with a puzzles/<name>/ under %s" % root)
    for sol, skel in todo:
        sol_name = str(sol.relative_to(root))
        skel_name = str(skel.relative_to(root))
        try:
            text = read(sol)
            if args.fix_counts:
                fixed = fix_counts(text, sol_name)
                if fixed != text:
                    write(sol, fixed)
                    print("fixed the line counts in %s" % sol_name)
                    text = fixed
            want = skeleton(text, sol_name)
        except MarkerError as e:
            failures.append(str(e))
            continue
        have = read(skel) if skel.is_file() else None
        if have == want:
            continue
        if args.check:
            if have is None:
                failures.append("%s is missing; `python3 scripts/skeletons.py` generates it from %s" % (skel_name, sol_name))
            else:
                line, got, expected = first_difference(have, want)
                failures.append("%s differs from what %s generates (first at line %d):\n"
                                "    skeleton:  %s\n    generated: %s\n"
                                "  Edit the solution, not the skeleton, then run `python3 scripts/skeletons.py`."
                                % (skel_name, sol_name, line, got.strip(), expected.strip()))
        else:
            if have is not None:
                # The skeleton may hold a learner's work: keep it before overwriting.
                backup = skel.with_name("%s.bak-%s" % (skel.name, time.strftime("%Y%m%d-%H%M%S")))
                write(backup, have)
                print("kept the previous %s as %s" % (skel_name, backup.relative_to(root)))
            write(skel, want)
            print("wrote %s" % skel_name)
    for f in failures:
        print("error: " + f, file=sys.stderr)
    if failures:
        return 1
    if args.check:
        print("skeletons: %d file%s up to date" % (len(todo), "" if len(todo) == 1 else "s"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
