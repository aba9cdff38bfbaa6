"""The sizes and input seeds every command runs a variant on, in one place.

`check` and `grade` run the same cases in the same order with the same inputs (so that a graded
failure replays with `check --seed S`); `list` runs the cases of `check --quick --seed 1`; `run` and
`trace` run the show input or one size the learner names; `run` adds one random input of the show
size (run_seed), and a failing case names its `trace` command when trace can draw it (traceable).
"""

from __future__ import annotations

import hashlib
import random
from typing import List, Optional, Tuple


def sweep(variant, backend: str, seed: int, quick: bool = False) -> List[Tuple[int, int]]:
    """The checker's (n, tpb) cases, in order: for each block size 1, tpb-1, tpb, tpb+1, several
    blocks and a random size, then puzzle.json's extra_cases, then a large size. Deterministic
    for a given seed."""
    cases = []  # type: List[Tuple[int, int]]
    tpbs = variant.tpb[:2] if quick else variant.tpb
    for tpb in tpbs:
        rng = random.Random("%d:%s:%s:%d" % (seed, variant.puzzle, variant.name, tpb))
        limit = variant.n_limit(tpb)
        for n in (1, tpb - 1, tpb, tpb + 1, 3 * tpb + 5, variant.random_n(tpb, rng)):
            if limit is not None:
                n = min(n, limit)
            if n >= 1 and (n, tpb) not in cases:
                cases.append((n, tpb))
    if not quick:
        for case in variant.extra_cases:
            if case not in cases:
                cases.append(case)
    large = variant.large_n.get(backend)
    if large and not quick:
        tpb = max(variant.tpb)
        limit = variant.n_limit(tpb)
        n = large if limit is None else min(large, limit)
        if (n, tpb) not in cases:
            cases.append((n, tpb))
    return cases


def case_seed(seed: int, puzzle: str, variant: str, index: int) -> int:
    """The input seed of one case: unpredictable without the grade seed, reproducible with it."""
    digest = hashlib.sha256(("grade:%d:%s:%s:%d" % (seed, puzzle, variant, index)).encode()).hexdigest()
    return int(digest[:8], 16) & 0x7FFFFFFF


def seeded_cases(variant, backend: str, seed: int, quick: bool = False) -> List[Tuple[int, int, int]]:
    """(n, tpb, input seed) of every case `check` and `grade` run, in order."""
    return [(n, tpb, case_seed(seed, variant.puzzle, variant.name, i))
            for i, (n, tpb) in enumerate(sweep(variant, backend, seed, quick))]


# `list`'s status is `check --quick --seed STATUS_SEED`: the same cases on every call, so the
# same file always gets the same status, and the learner can replay it with that command.
STATUS_SEED = 1


def status_cases(variant, backend: str) -> List[Tuple[int, int, int]]:
    """(n, tpb, input seed) of `list`'s status: the cases of `check --quick --seed STATUS_SEED`."""
    return seeded_cases(variant, backend, STATUS_SEED, quick=True)


def random_case(variant, seed: int, n: Optional[int], tpb: Optional[int]) -> Tuple[int, int]:
    """`run --seed/--n/--tpb`: the size named, else the first block size and a random n."""
    tpb = tpb or variant.tpb[0]
    return n or variant.random_n(tpb, random.Random(seed)), tpb


def run_seed(variant) -> int:
    """The seed of the random input of the show size that `run` adds to the show input: a[i] = i
    can hide a bug (p14 --simple with `local_i > offset` is right when a[0] = 0). The same seed on
    every call, one per variant, so that the same file always gets the same verdict."""
    digest = hashlib.sha256(("run:%s:%s" % (variant.puzzle, variant.name)).encode()).hexdigest()
    return int(digest[:8], 16) % 90000 + 10000


# `trace` draws one block of at most this many threads (p29 --multi-stage is written for 256
# threads: its show size must trace).
TRACE_MAX_THREADS = 256


def traceable(tpb: int) -> bool:
    """Whether `trace` can draw a case with this block size (a command given to a learner must work)."""
    return tpb <= TRACE_MAX_THREADS


def traced_case(variant, n: Optional[int], tpb: Optional[int]) -> Tuple[int, int]:
    """`trace` without --seed: the show input, or the size named (with --tpb alone, n stays within
    one block). With --seed, trace runs random_case, as `run --seed` does."""
    show_n, show_tpb = variant.show_case()
    if n is None:
        n = show_n if tpb is None else min(show_n, tpb)
    return n, tpb or show_tpb
