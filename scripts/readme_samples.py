#!/usr/bin/env python3
"""README sample outputs, produced by the program: check them, or rewrite them.

A sample is a fenced block right after a marker line:

    <!-- sample: run p14 --simple --solution -->
    ```
    $ python3 scripts/puzzle.py run p14 --simple --solution
    ...the output...
    ```

The marker holds the arguments of scripts/puzzle.py. `planted=NAME` runs the planted bug
tests/planted/pNN/NAME.plant instead of the learner's file (its binary is built by the test
suite in build-test/bin/planted_pNN_NAME_cpu) and shows it as the learner's file. A line `...`
in a sample stands for any number of output lines; a sample with such lines is checked but never
rewritten. Timings and the fiber implementation (Boost.Context or ucontext) are ignored in the
comparison.

A sample runs in English, whatever the machine's locale, unless its arguments hold `--lang ko`. A
Korean page (README.ko.md) shows its English page's samples in the same order, each in Korean (the
same arguments and `--lang ko`, as a Korean student sees it), and may add Korean samples besides
(tests/python/test_readme_samples.py).

    python3 scripts/readme_samples.py            check every README (exit 1 when one drifted)
    python3 scripts/readme_samples.py --update   rewrite the samples that have no `...`

The build folder is $PUZZLES_BUILD_DIR, else build-test/ (it must hold the planted binaries:
`python3 scripts/puzzle.py test` builds them).
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

ROOT = Path(__file__).resolve().parent.parent
MARKER = re.compile(r"^(?P<indent>\s*)<!-- sample: (?P<args>.+?) -->\s*$")
FENCE = re.compile(r"^(?P<indent>\s*)```")
SHOWN_PREFIX = "$ python3 scripts/puzzle.py "
ELLIPSIS = "..."
# Times change from run to run: "(20 cases, 1.3 s)", "total 4.1 s", the seconds column of check.
TIMING = re.compile(r"\b\d+(?:\.\d+)? s\b")
# The fiber implementation depends on the machine and on whether Boost.Context was found (see
# harness/sim/src/fiber.h); the samples show one of them.
FIBERS = re.compile(r"\b(?:native x86-64|boost\.context|ucontext) fibers")
TABLE_ROW = re.compile(r"^(p\d+ --[\w-]+\s+\S+\s+.*?\s)\d+\.\d(?=\s|$)")


class Sample:
    def __init__(self, path: Path, marker_line: int, start: int, end: int, indent: str, args: List[str],
                 planted: Optional[str], lines: List[str]):
        self.path = path
        self.marker_line = marker_line  # 0-based index of the marker
        self.start = start  # index of the opening fence
        self.end = end  # index of the closing fence
        self.indent = indent
        self.args = args
        self.planted = planted
        self.lines = lines  # the block's lines without the indent: "$ ..." and the output

    @property
    def where(self) -> str:
        return "%s:%d" % (self.path.relative_to(ROOT).as_posix(), self.marker_line + 1)

    @property
    def puzzle(self) -> str:
        return next(a for a in self.args if re.match(r"^p\d+$", a))

    @property
    def korean(self) -> bool:
        """The sample shows the Korean messages (`--lang ko`)."""
        return any(a == "--lang=ko" or a == "ko" and i > 0 and self.args[i - 1] == "--lang"
                   for i, a in enumerate(self.args))

    @property
    def english_args(self) -> List[str]:
        """The arguments without `--lang ko`: the English sample that a Korean one shows in Korean."""
        out: List[str] = []
        for a in self.args:
            if a == "--lang=ko" or a == "ko" and out and out[-1] == "--lang":
                if a == "ko":
                    out.pop()
                continue
            out.append(a)
        return out


def readmes() -> List[Path]:
    return ([ROOT / "README.md", ROOT / "README.ko.md", ROOT / "harness" / "sim" / "README.md",
             ROOT / "harness" / "sim" / "README.ko.md"] + sorted(ROOT.glob("puzzles/*/README*.md"))
            + sorted(ROOT.glob("docs/*.md")))


def parse(path: Path) -> List[Sample]:
    text = path.read_text(encoding="utf-8").splitlines()
    samples = []
    for i, line in enumerate(text):
        m = MARKER.match(line)
        if not m:
            continue
        words = shlex.split(m.group("args"))
        planted = next((w.split("=", 1)[1] for w in words if w.startswith("planted=")), None)
        args = [w for w in words if not w.startswith("planted=")]
        start = i + 1
        fence = FENCE.match(text[start]) if start < len(text) else None
        if not fence:
            raise SystemExit("%s:%d: a sample marker must be followed by a ``` block" % (path, i + 1))
        indent = fence.group("indent")
        end = start + 1
        while end < len(text) and text[end].strip() != "```":
            end += 1
        if end == len(text):
            raise SystemExit("%s:%d: the sample block is not closed" % (path, start + 1))
        body = [l[len(indent):] if l.startswith(indent) else l.lstrip() for l in text[start + 1:end]]
        samples.append(Sample(path, i, start, end, indent, args, planted, body))
    return samples


def build_dir() -> Path:
    env = os.environ.get("PUZZLES_BUILD_DIR")
    return Path(env).resolve() if env else ROOT / "build-test"


def planted_binary(sample: Sample, build: Path) -> Path:
    return build / "bin" / ("planted_%s_%s_cpu" % (sample.puzzle, sample.planted))


def produce(sample: Sample, build: Path) -> List[str]:
    """The sample's lines as the program prints them now: the shown command, then stdout."""
    args = list(sample.args)
    if sample.planted:
        args += ["--binary", str(planted_binary(sample, build))]
    # One worker thread: blocks that race with each other then meet in the same order every time.
    # English unless the sample asks for Korean (`--lang ko` wins over PUZZLE_LANG), whatever the locale.
    env = dict(os.environ, PUZZLES_BUILD_DIR=str(build), PYTHONIOENCODING="utf-8", CUDASIM_WORKERS="1",
               PUZZLE_LANG="en")
    env.pop("PUZZLES_ROOT", None)
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "puzzle.py")] + args, cwd=str(ROOT),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, universal_newlines=True,
                          encoding="utf-8", timeout=600)
    lines = proc.stdout.rstrip("\n").splitlines()
    if sample.planted:
        learner = "puzzles/%s/%s.cu" % (sample.puzzle, sample.puzzle)
        planted_src = re.compile(r"[^\s(]*planted/%s/%s\.cu" % (sample.puzzle, re.escape(sample.planted)))  # "(build-test/..." keeps its "("
        lines = [planted_src.sub(learner, l) for l in lines]
        # Short forms (the chain below a wrong answer names files by their base name) too.
        planted_name = re.compile(r"(?<![\w/.])%s\.cu\b" % re.escape(sample.planted))
        lines = [planted_name.sub("%s.cu" % sample.puzzle, l) for l in lines]
        lines = ["source: " + learner if l.startswith("binary: ") else l for l in lines]
        lines = [re.sub(r" --binary \S+", "", l) for l in lines]
    return [SHOWN_PREFIX + " ".join(shlex.quote(a) for a in sample.args)] + lines


def normalize(line: str) -> str:
    line = FIBERS.sub("# fibers", TIMING.sub("# s", line.rstrip()))
    return TABLE_ROW.sub(r"\g<1>#", line)


def matches(shown: List[str], real: List[str]) -> bool:
    """The sample's lines against the real ones; a `...` line stands for any number of lines."""
    shown = [normalize(l) for l in shown]
    real = [normalize(l) for l in real]

    def match(i: int, j: int) -> bool:
        if i == len(shown):
            return j == len(real)
        if shown[i].strip() == ELLIPSIS:
            return any(match(i + 1, k) for k in range(j, len(real) + 1))
        return j < len(real) and shown[i] == real[j] and match(i + 1, j + 1)

    return match(0, 0)


def has_ellipsis(sample: Sample) -> bool:
    return any(l.strip() == ELLIPSIS for l in sample.lines)


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--update", action="store_true", help="rewrite samples without `...` from the real output")
    ap.add_argument("files", nargs="*", help="pages to check (default: every README, English and Korean, and docs/*.md)")
    args = ap.parse_args(argv)
    build = build_dir()
    files = [Path(f).resolve() for f in args.files] or readmes()
    drifted = 0
    for path in files:
        samples = parse(path)
        text = path.read_text(encoding="utf-8").splitlines()
        for sample in reversed(samples):  # bottom-up, so that earlier line numbers stay valid
            if sample.planted and not planted_binary(sample, build).is_file():
                print("%s: skipped, %s is not built (python3 scripts/puzzle.py test builds it)"
                      % (sample.where, planted_binary(sample, build)))
                continue
            real = produce(sample, build)
            if matches(sample.lines, real):
                continue
            if args.update and not has_ellipsis(sample):
                text[sample.start + 1:sample.end] = [(sample.indent + l).rstrip() for l in real]
                print("%s: updated" % sample.where)
                continue
            drifted += 1
            print("%s: the sample differs from the program's output; the output now is:" % sample.where)
            for line in real:
                print("    " + line)
        if args.update:
            path.write_text("\n".join(text) + "\n", encoding="utf-8")
    if drifted:
        print("%d sample(s) differ. Run `python3 scripts/readme_samples.py --update` (samples with `...` "
              "are edited by hand)." % drifted)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
