"""Puzzle declarations (puzzles/pNN/puzzle.json)."""

from __future__ import annotations

import difflib
import json
import random
import re
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from . import cases
from .common import UsageError
from .messages import tr

VARIANT_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")
MAX_N_TIMES_TPB = re.compile(r"^\s*(?:(\d+)\s*\*\s*)?tpb\s*$")

# Upper bound for random sizes when max_n does not bound them, in blocks.
RANDOM_BLOCKS = 16


class Variant:
    def __init__(self, puzzle: str, name: str, data: dict, where: str):
        def bad(msg):
            return UsageError("%s: variant %r: %s" % (where, name, msg))

        if not VARIANT_NAME.match(name):
            raise bad("names use lowercase letters, digits and '-'")
        if not isinstance(data, dict):
            raise bad("expected an object")
        self.puzzle = puzzle
        self.name = name
        self.summary = str(data.get("summary", "")).strip()
        self.show = data.get("show") or {}
        if not isinstance(self.show, dict) or not all(
                isinstance(self.show.get(k, 1), int) and self.show.get(k, 1) > 0 for k in ("n", "tpb")):
            raise bad("'show' must be an object like {\"n\": 8, \"tpb\": 8}")
        tpb = data.get("tpb")
        if (not isinstance(tpb, list) or not tpb
                or not all(isinstance(t, int) and not isinstance(t, bool) and t > 0 for t in tpb)):
            raise bad("'tpb' must be a non-empty list of positive integers")
        self.tpb = list(tpb)
        self.max_n = data.get("max_n")
        self._max_n_factor = None  # max_n = factor * tpb
        if isinstance(self.max_n, str):
            m = MAX_N_TIMES_TPB.match(self.max_n)
            if not m:
                raise bad("'max_n' must be \"tpb\", \"K*tpb\", an integer or null")
            self._max_n_factor = int(m.group(1) or 1)
        elif self.max_n is not None and (not isinstance(self.max_n, int) or isinstance(self.max_n, bool)
                                         or self.max_n < 1):
            raise bad("'max_n' must be \"tpb\", \"K*tpb\", a positive integer or null")
        large = data.get("large_n")
        if large is not None and not (isinstance(large, dict) and all(
                isinstance(v, int) and v > 0 for v in large.values())):
            raise bad("'large_n' must be null or an object like {\"cpu\": 1048576, \"gpu\": 16777216}")
        self.large_n = large or {}
        extra = data.get("extra_cases", [])
        if not (isinstance(extra, list) and all(
                isinstance(c, list) and len(c) == 2 and all(isinstance(v, int) and v > 0 for v in c) for c in extra)):
            raise bad("'extra_cases' must be a list of [n, tpb] pairs")
        self.extra_cases = [tuple(c) for c in extra]

    @property
    def flag(self) -> str:
        return "--" + self.name

    @property
    def label(self) -> str:
        return "%s %s" % (self.puzzle, self.flag)

    def show_case(self) -> Tuple[int, int]:
        """(n, tpb) of the show input: puzzle.json's "show", defaulting to one full first block."""
        tpb = self.show.get("tpb", self.tpb[0])
        return self.show.get("n", tpb), tpb

    def n_limit(self, tpb: int) -> Optional[int]:
        """Largest n this variant accepts with block size tpb (None: unbounded)."""
        if self._max_n_factor is not None:
            return self._max_n_factor * tpb
        return self.max_n

    def random_n(self, tpb: int, rng: random.Random) -> int:
        limit = self.n_limit(tpb)
        upper = RANDOM_BLOCKS * tpb if limit is None else min(limit, RANDOM_BLOCKS * tpb)
        return rng.randint(1, max(1, upper))

    def sweep(self, backend: str, seed: int, quick: bool = False) -> List[Tuple[int, int]]:
        """The checker's (n, tpb) cases, in order (cases.sweep says which)."""
        return cases.sweep(self, backend, seed, quick)


class Puzzle:
    def __init__(self, name: str, directory: Path, data: dict):
        where = "%s/puzzle.json" % name
        if not isinstance(data, dict):
            raise UsageError("%s: expected a JSON object" % where)
        self.name = name
        self.dir = directory
        self.title = str(data.get("title", "")).strip()
        self.summary = str(data.get("summary", "")).strip()
        variants = data.get("variants")
        if not isinstance(variants, dict) or not variants:
            raise UsageError("%s: 'variants' must be a non-empty object" % where)
        self.variants = {k: Variant(name, k, v, where) for k, v in variants.items()}  # type: Dict[str, Variant]

    def source(self, solution: bool) -> str:
        """The .cu file a target compiles, relative to the repository root."""
        base = "solutions" if solution else "puzzles"
        return "%s/%s/%s.cu" % (base, self.name, self.name)

    def target(self, solution: bool, backend: str) -> str:
        return "%s%s_%s" % (self.name, "_solution" if solution else "", backend)

    def variant_by_flag(self, flag: str) -> Optional[Variant]:
        name = flag[2:] if flag.startswith("--") else flag
        return self.variants.get(name) or self.variants.get(name.replace("_", "-"))

    def variant_help(self, indent: str = "  ") -> str:
        width = max(len(v.flag) for v in self.variants.values())
        return "\n".join("%s%s  %s" % (indent, v.flag.ljust(width), tr(v.summary))
                         for v in self.variants.values())


def load_puzzle(directory: Path) -> Puzzle:
    path = directory / "puzzle.json"
    try:
        with path.open(encoding="utf-8") as f:
            data = json.load(f)
    except ValueError as e:
        raise UsageError("%s/puzzle.json is not valid JSON: %s" % (directory.name, e))
    return Puzzle(directory.name, directory, data)


def puzzle_dirs(root: Path) -> List[Path]:
    base = root / "puzzles"
    if not base.is_dir():
        return []
    return sorted(d for d in base.glob("p*") if d.is_dir() and (d / "puzzle.json").is_file())


def discover(root: Path) -> Dict[str, Puzzle]:
    """Every puzzles/p*/ with a puzzle.json, by name, in order."""
    return {d.name: load_puzzle(d) for d in puzzle_dirs(root)}


def find_puzzle(puzzles: Dict[str, Puzzle], arg: str) -> Puzzle:
    """Resolve 'p14', 'P14' or '14'; unknown names raise a usage error with a suggestion."""
    key = arg.strip().lower()
    candidates = [key]
    if key.isdigit():
        candidates += ["p" + key, "p" + key.zfill(2)]
    for c in candidates:
        if c in puzzles:
            return puzzles[c]
    msg = tr("unknown puzzle '%s'") % arg
    guess = difflib.get_close_matches(candidates[-1] if key.isdigit() else key, list(puzzles), n=1)
    if guess:
        msg += tr(" (did you mean %s?)") % guess[0]
    if puzzles:
        msg += "\n" + tr("Puzzles: %s") % ", ".join(puzzles)
    else:
        msg += "\n" + tr("No puzzles found (no puzzles/p*/puzzle.json).")
    raise UsageError(msg)
