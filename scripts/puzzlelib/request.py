"""One command line, one request: the puzzle, its variants and the options of a command.

Every command that takes `pNN --VARIANT...` (run, check, trace, bench, and any new one) declares a
Verb (its options besides the variant flags, its help, what it needs) and reads the Request that
parse_request makes of its arguments; argparse cannot parse the per-puzzle variant flags.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Dict, List, Optional

from .common import PROG, UsageError, out
from .messages import tr
from .options import backend_choice, bare_variant, parse, positive_int, seed_int, suggest_flag
from .puzzles import Puzzle, Variant, discover, find_puzzle

# The options most verbs share, to build a Verb's options from: Verb(options=pick("--solution", ...)).
COMMON_OPTIONS = {"--solution": None, "--backend": backend_choice, "--seed": seed_int,
                  "--n": positive_int, "--tpb": positive_int, "--binary": str}


def pick(*names: str) -> Dict[str, object]:
    return {name: COMMON_OPTIONS[name] for name in names}


class BareUsageError(UsageError):
    """A usage error whose message already shows the usage: the CLI adds no `--help` pointer."""


class Verb:
    """A command over puzzles and variants.

    options: {"--name": value type, or None for a switch}, besides the variant flags.
    help: the --help text, in English: its translation (a msgid of the catalogues) is shown in the
        language asked for, with {prog} replaced; its first line, with pNN replaced, heads the
        usage shown for one puzzle.
    missing: the usage error without a puzzle ({prog}, {puzzles} the list), translated likewise;
        None: no puzzle means every puzzle (check).
    one_variant: exactly one variant (run, trace); otherwise any number, none meaning all.
    """

    def __init__(self, name: str, options: Dict[str, object], help: str, missing: Optional[str] = None,
                 one_variant: bool = False):
        self.name = name
        self.options = options
        self.english_help = help
        self.missing = missing
        self.one_variant = one_variant

    @property
    def help(self) -> str:
        """The --help text in the language asked for."""
        return tr(self.english_help).replace("{prog}", PROG)

    def puzzle_usage(self, puzzle: Puzzle) -> str:
        """The usage line for one puzzle, and its variants."""
        usage = self.help.split("\n", 1)[0].replace(" pNN ", " %s " % puzzle.name, 1)
        return tr("%s\n\nPuzzle %s: %s\nVariants:\n%s\n") % (usage, puzzle.name, tr(puzzle.title),
                                                               puzzle.variant_help())


class Request:
    """What one command line asks for. `selected` holds one puzzle, or every puzzle when the verb
    allows none; `variants` the variants asked for (empty: all of them)."""

    def __init__(self, verb: Verb, root: Path, puzzles: Dict[str, Puzzle], selected: List[Puzzle],
                 variants: List[Variant], parsed):
        self.verb = verb
        self.root = root
        self.puzzles = puzzles
        self.selected = selected
        self.variants = variants
        self._parsed = parsed
        self._seed = parsed.get("--seed")

    @property
    def puzzle(self) -> Puzzle:
        return self.selected[0]

    @property
    def variant(self) -> Variant:
        return self.variants[0]

    def get(self, name: str, default=None):
        """A command-specific option, by its flag."""
        return self._parsed.get(name, default)

    @property
    def solution(self) -> bool:
        return bool(self.get("--solution"))

    @property
    def backend(self) -> str:
        return self.get("--backend", "auto")

    @property
    def binary(self) -> Optional[str]:
        return self.get("--binary")

    @property
    def n(self) -> Optional[int]:
        return self.get("--n")

    @property
    def tpb(self) -> Optional[int]:
        return self.get("--tpb")

    def seed_given(self) -> bool:
        return self.get("--seed") is not None

    @property
    def seed(self) -> int:
        """--seed, else one random seed for the whole command (printed, so that it replays)."""
        if self._seed is None:
            self._seed = random.randint(1, 99999)
        return self._seed


def parse_request(root: Path, args: List[str], verb: Verb) -> Optional[Request]:
    """The request of `args`, or None when --help was asked for (and printed)."""
    p = parse(args, verb.options, allow_unknown_flags=True)
    if p.help and verb.missing is None:  # before reading puzzle.json, which may be broken
        out(verb.help)
        return None
    puzzles = discover(root)
    if not p.positionals:
        if p.help:
            out(verb.help + "\n" + puzzle_list(puzzles))
            return None
        if verb.missing is not None:
            raise UsageError(tr(verb.missing).format(prog=PROG, puzzles=puzzle_list(puzzles)))
        reject_unknown_flags(puzzles, p.unknown_flags, verb.options)
        if p.unknown_flags:
            raise UsageError(tr("name a puzzle before variant flags, e.g. `%s %s p14 %s`.")
                             % (PROG, verb.name, p.unknown_flags[0]))
        if not puzzles:
            raise UsageError(tr("no puzzles found (no puzzles/p*/puzzle.json)"))
        return Request(verb, root, puzzles, list(puzzles.values()), [], p)
    try:
        puzzle = find_puzzle(puzzles, p.positionals[0])
    except UsageError:
        reject_unknown_flags(puzzles, p.unknown_flags, verb.options)  # `check --sed 3`: the flag is the typo
        raise
    if p.help:
        out(verb.puzzle_usage(puzzle) + "\n" + verb.help.split("\n", 2)[2])
        return None
    flags = [v.flag for v in puzzle.variants.values()]
    for word in p.positionals[1:]:  # `run p14 simple`: a variant named without its dashes
        flag = bare_variant(word, flags)
        if flag:
            raise UsageError(tr("%s is not an option: variant flags start with two dashes (did you mean %s?)")
                             % (word, flag))
    variants = resolve_variants(puzzle, p.unknown_flags, verb.options, puzzles)
    if len(p.positionals) > 1:
        many = tr("%s takes at most one puzzle, got: %s") if verb.missing is None else tr("%s takes one puzzle, got: %s")
        raise UsageError(many % (verb.name, " ".join(p.positionals)))
    if verb.one_variant and not variants:
        raise BareUsageError(tr("name the variant to %s.\n%s") % (verb.name, verb.puzzle_usage(puzzle)))
    if verb.one_variant and len(variants) > 1:
        flags = " ".join(v.flag for v in variants)
        raise UsageError(tr("%s takes one variant (got %s); use `%s check %s %s` for several.")
                         % (verb.name, flags, PROG, puzzle.name, flags))
    return Request(verb, root, puzzles, [puzzle], variants, p)


def puzzle_list(puzzles: Dict[str, Puzzle]) -> str:
    if not puzzles:
        return tr("Puzzles: none found (no puzzles/p*/puzzle.json)")
    return tr("Puzzles:") + "\n" + "\n".join("  %-5s %s" % (p.name, tr(p.title)) for p in puzzles.values())


def resolve_variants(puzzle: Puzzle, flags: List[str], spec, puzzles=None) -> List[Variant]:
    """Map --VARIANT flags to variants; unknown ones are a usage error with suggestions."""
    chosen = []  # type: List[Variant]
    for flag in flags:
        v = puzzle.variant_by_flag(flag)
        if v is None:
            choices = [x.flag for x in puzzle.variants.values()] + list(spec)
            guess = suggest_flag(flag, choices)
            msg = tr("%s has no variant or option %s") % (puzzle.name, flag)
            others = [q.name for q in (puzzles or {}).values() if q.variant_by_flag(flag)]
            if guess:
                msg += tr(" (did you mean %s?)") % guess
            elif others:
                msg += tr(" (%s is a variant of %s)") % (flag, ", ".join(others))
            msg += "\n" + tr("Variants of %s (%s):\n%s") % (puzzle.name, tr(puzzle.title), puzzle.variant_help())
            raise UsageError(msg)
        if v not in chosen:
            chosen.append(v)
    return chosen


def reject_unknown_flags(puzzles, flags: List[str], spec) -> None:
    """Flags that are no variant of any puzzle are typos of options (or variants): say so
    before anything else, so `check --sed 3` does not complain about a puzzle named 3."""
    known = {v.flag for p in puzzles.values() for v in p.variants.values()}
    for flag in flags:
        if flag not in known and flag.replace("_", "-") not in known:
            choices = list(spec) + sorted(known)
            msg = tr("unknown option %s") % flag
            guess = suggest_flag(flag, choices)
            if guess:
                msg += tr(" (did you mean %s?)") % guess
            raise UsageError(msg)
