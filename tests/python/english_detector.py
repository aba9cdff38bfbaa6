"""Finds English sentences in text meant to be Korean.

A Korean message keeps code, paths, numbers and the course notes' English terms; what it must not
keep is English prose. The detector:

1. removes what is not prose: `code spans`, a quoted source line's `// comment`, command lines (`python3 scripts/puzzle.py ...`, lines
   of a `$ ` prompt), paths and file:line sites, identifiers that only code has (with `_`, `[`,
   `(`, `::`, `<<<`, a dot or a digit), flags (`--k1`), numbers and the table rule lines;
2. removes the allowed terms (ALLOWED_TERMS: the notes' vocabulary and the CUDA names a Korean
   sentence uses as they are), longest first, case-insensitively; a removed term neither counts
   nor breaks a run, so English built around terms is still found;
3. reports each run of MIN_WORDS or more English words (Latin letters, two or more each) that is
   left with nothing but spaces and light punctuation between them.

Three words is the shortest English phrase that reads as a sentence fragment ("the barrier at",
"read the report"); two allowed-term-free English words side by side are tolerated because labels
such as `out:` and `expected:` stand next to each other in the io lines.
"""

from __future__ import annotations

import re
from typing import List

MIN_WORDS = 3

# The course notes' terms (../shared/seeds) and CUDA's own names, kept in English in Korean text.
ALLOWED_TERMS = [
    "Race Condition", "Bank Conflict", "Warp Divergence", "Barrier divergence", "barrier divergence",
    "shared memory", "device memory", "host memory", "global memory", "managed memory",
    "read-after-write", "write-after-read", "write-after-write", "write-after-write", "out-of-bounds",
    "use after free", "null pointer", "stack overflow", "deadlock", "prefix sum", "Kogge-Stone",
    "Brent-Kung", "decoupled look-back", "look-back", "single-pass", "double buffer", "double-buffer",
    "thread", "threads", "block", "blocks", "warp", "warps", "lane", "lanes", "kernel", "kernels",
    "barrier", "Barrier", "launch", "launcher", "atomic", "atomics", "fence", "mask", "shuffle",
    "sector", "sectors", "request", "requests", "bank", "banks", "index", "element", "loop",
    "host", "device", "GPU", "CPU", "simulator", "schedule", "schedules", "forward", "reverse", "random",
    "mismatch", "out", "expected", "input", "config", "backend", "source", "note", "seed", "case", "cases",
    "variant", "verdict", "puzzle", "pass", "fail", "race", "error", "build", "compile error", "crash",
    "step", "chain", "cell", "hazard", "trace", "profile", "check", "run", "list", "grade", "replay",
    "browser", "network", "option", "flag", "polling", "flag", "ticket", "tile", "partial", "partials",
    "native x86-64 fibers", "boost.context fibers", "ucontext fibers", "fibers", "fiber",
    "CUDA", "CUB", "Nsight Compute", "ncu", "HTML", "JSON", "stdout", "stderr",
    # the PTX specification's own names, cited as they are titled
    "PTX ISA", "PTX memory model", "Memory Consistency Model", "PTX",
    "idle", "sum", "max", "min", "scan", "reduction", "naive", "inclusive", "exclusive",
    "interleaved addressing", "sequential addressing",
    "read", "write", "load", "store", "cudaMalloc", "cudaMemcpy", "cudaMemset", "cudaFree",
    "release", "acquire", "volatile", "const", "restrict", "read-only", "garbage", "stride", "offset",
    "SIZE", "TPB", "blocks", "k1", "k2", "k3",
]

_TERMS = re.compile("|".join(r"(?<![A-Za-z])%s(?![A-Za-z])" % re.escape(t)
                             for t in sorted(set(ALLOWED_TERMS), key=len, reverse=True)), re.I)
_CODE_SPAN = re.compile(r"`[^`]*`")
# A source line quoted in a report or a trace keeps its comment: `// every thread has read ...`.
_LINE_COMMENT = re.compile(r"(?:^|\s)//.*$")
_COMMAND = re.compile(r"(?:\$ )?(?:python3|pixi run|cmake|ctest|nvcc|g\+\+)\s.*$")
# A token that only code or paths have: a slash, a file:line, _, brackets, ::, <<<, a dot inside,
# a digit, or an option.
_CODE_TOKEN = re.compile(r"\S*(?:/|::|<<<|>>>|[_\[\]()=<>{}#*+]|\w\.\w|\d|^-|\s-)\S*")
_FLAG = re.compile(r"(?<!\w)--?[A-Za-z][\w-]*")
_WORD = re.compile(r"[A-Za-z]{2,}(?:'[a-z]+)?")
# What may separate the words of one English run: spaces and the punctuation inside a sentence.
_GLUE = re.compile(r"^[\s,;:'\"-]*$")


def strip_code(line: str) -> str:
    line = _CODE_SPAN.sub(" ", line)
    line = _LINE_COMMENT.sub(" ", line)
    line = _COMMAND.sub(" ", line)
    line = _FLAG.sub(" ", line)
    line = " ".join(" " if _CODE_TOKEN.fullmatch(tok) else tok for tok in line.split())
    # An allowed term is neutral: it neither counts as English nor breaks a run, so an English
    # sentence full of terms ("between read at ... and write at ...") is still found, while Hangul
    # around a term breaks the run as Korean prose does.
    return _TERMS.sub(" ", line)


def english_runs(text: str, min_words: int = MIN_WORDS) -> List[str]:
    """The runs of `min_words` or more English words in `text`, after code and allowed terms."""
    runs = []
    for raw in text.splitlines():
        if set(raw.strip()) <= set("-=| "):  # table rules
            continue
        line = strip_code(raw)
        words = list(_WORD.finditer(line))
        run = []
        for w in words:
            if run and _GLUE.match(line[run[-1].end():w.start()]):
                run.append(w)
            else:
                if len(run) >= min_words:
                    runs.append(line[run[0].start():run[-1].end()])
                run = [w]
        if len(run) >= min_words:
            runs.append(line[run[0].start():run[-1].end()])
    return runs
