"""The learner-facing commands: run, check, list."""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path
from typing import List, Optional

from . import build as bld
from .common import (PROG, BuildError, UsageError, build_dir, err, fmt_seconds, mark, out, quote_cmd,
                     rel, run_timeout, stdout_is_tty, table)
from .driver import ERROR, PASS, USAGE, Outcome, relevant_lines, run_driver
from .grade import case_seed
from .grade_run import explain, first_error_location, simulator_reason
from .options import backend_choice, parse, positive_int, seed_int, suggest_flag
from .puzzles import Puzzle, Variant, discover, find_puzzle

RUN_SPEC = {"--solution": None, "--backend": backend_choice, "--seed": seed_int,
            "--n": positive_int, "--tpb": positive_int, "--binary": str}
CHECK_SPEC = {"--solution": None, "--backend": backend_choice, "--seed": seed_int,
              "--quick": None, "--binary": str}
LIST_SPEC = {"--no-status": None, "--backend": backend_choice}

RUN_HELP = """\
usage: {prog} run pNN --VARIANT [--solution] [--backend auto|cpu|gpu] [--seed S]

Build a puzzle and run one variant on its small show input: prints the input, your output
and the expected output, then a verdict.

  --VARIANT          which variant to run (see `{prog} run pNN --help`)
  --solution         run the reference solution instead of your file
  --backend B        auto (default: GPU if there is one), cpu (the simulator) or gpu
  --seed S           run one random size instead of the show input (reproducible with S)
  --n N, --tpb T     run this size / block size instead of the show input
"""

CHECK_HELP = """\
usage: {prog} check [pNN [--VARIANT ...]] [--solution] [--backend auto|cpu|gpu] [--seed S] [--quick]

Test variants on many sizes (every block size the puzzle lists, edge sizes around it, a random
size and a large one). Without a puzzle: every puzzle; without a variant: every variant.

  --solution         check the reference solution instead of your file
  --backend B        auto (default), cpu (the simulator, finds races) or gpu
  --seed S           the seed of the random sizes and inputs; check prints it so the same cases
                     can be replayed. On the CPU simulator, `check --seed S` runs the cases that
                     `grade --seed S` runs, in the same order, with the same inputs (grade adds
                     time and memory limits); --quick runs the first of them only
  --quick            only the first two block sizes and no large size
"""

LIST_HELP = """\
usage: {prog} list [--no-status] [--backend auto|cpu|gpu]

List the puzzles and their variants. The status column builds your files and runs a quick
check of each variant (the show input and two random sizes) on the CPU simulator
(--backend changes that): solved, not yet, or does not build.

  --no-status        skip building and checking
"""

HINTS = {
    "wrong answer": "Compare the `out:` and `expected:` lines above; start at the first element that differs.",
    "wrong answer (no arrays)": "Look at the mismatches above; start at the first element that differs.",
    "race: result depends on thread order":
        "Threads read and write the same location without a barrier between them; the answer "
        "changed when they ran in a different order.",
    "race: reported by the simulator": "Read the simulator's report above: it names the kernel and what raced.",
    "kernel error": "Read the error report above: it says what went wrong, at which source line, and (on the CPU "
                    "simulator) in which block and threads, and what to try.",
    "timed out": "It ran longer than {timeout:g} s: look for a loop that never ends or a barrier some "
                 "threads never reach (PUZZLES_TIMEOUT sets the limit in seconds).",
}
CRASH_HINT = ("The program crashed, often from an out-of-bounds access. "
              "The CPU simulator (--backend cpu) usually names the bad access.")


def resolve_variants(puzzle: Puzzle, flags: List[str], spec, puzzles=None) -> List[Variant]:
    """Map --VARIANT flags to variants; unknown ones are a usage error with suggestions."""
    chosen = []  # type: List[Variant]
    for flag in flags:
        v = puzzle.variant_by_flag(flag)
        if v is None:
            choices = [x.flag for x in puzzle.variants.values()] + list(spec)
            guess = suggest_flag(flag, choices)
            msg = "%s has no variant or option %s" % (puzzle.name, flag)
            others = [q.name for q in (puzzles or {}).values() if q.variant_by_flag(flag)]
            if guess:
                msg += " (did you mean %s?)" % guess
            elif others:
                msg += " (%s is a variant of %s)" % (flag, ", ".join(others))
            msg += "\nVariants of %s (%s):\n%s" % (puzzle.name, puzzle.title, puzzle.variant_help())
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
            msg = "unknown option %s" % flag
            guess = suggest_flag(flag, choices)
            if guess:
                msg += " (did you mean %s?)" % guess
            raise UsageError(msg)


def _find_puzzle_checking_flags(puzzles, name: str, flags: List[str], spec) -> Puzzle:
    try:
        return find_puzzle(puzzles, name)
    except UsageError:
        reject_unknown_flags(puzzles, flags, spec)  # `check --sed 3`: the flag is the real typo
        raise


def puzzle_usage(puzzle: Puzzle, command: str = "run") -> str:
    return ("usage: %s %s %s --VARIANT [--solution] [--backend auto|cpu|gpu] [--seed S]\n\n"
            "Puzzle %s: %s\nVariants:\n%s\n" % (PROG, command, puzzle.name, puzzle.name, puzzle.title,
                                                puzzle.variant_help()))


def _puzzle_list(puzzles) -> str:
    if not puzzles:
        return "Puzzles: none found (no puzzles/p*/puzzle.json)"
    return "Puzzles:\n" + "\n".join("  %-5s %s" % (p.name, p.title) for p in puzzles.values())


def _hint_for(outcome: Outcome) -> str:
    if outcome.reason == "wrong answer" and not any(l.lstrip().startswith("out:") for l in outcome.lines):
        return HINTS["wrong answer (no arrays)"]  # never point at lines that are not there
    if outcome.reason.startswith("race: unsynchronized accesses"):
        return ("Two threads accessed the same memory, at least one of them writing, with no barrier (or other "
                "synchronization) between them: the report above names both lines. The answer may have come out "
                "right this time; on a GPU it would not always.")
    if outcome.reason in HINTS:
        return HINTS[outcome.reason].format(timeout=run_timeout())
    if outcome.reason.startswith("crashed"):
        return CRASH_HINT
    return ""


def _run_flags(solution: bool, backend: str, binary: Optional[str]) -> List[str]:
    flags = ["--solution"] if solution else []
    flags += ["--backend", backend]
    if binary:
        flags += ["--binary", binary]
    return flags


# --------------------------------------------------------------------------------------- run

def cmd_run(root: Path, args: List[str]) -> int:
    p = parse(args, RUN_SPEC, allow_unknown_flags=True)
    puzzles = discover(root)
    if not p.positionals:
        if p.help:
            out(RUN_HELP.format(prog=PROG) + "\n" + _puzzle_list(puzzles))
            return 0
        raise UsageError("run needs a puzzle, e.g. `%s run p14 --simple`.\n%s"
                         % (PROG, _puzzle_list(puzzles)))
    puzzle = _find_puzzle_checking_flags(puzzles, p.positionals[0], p.unknown_flags, RUN_SPEC)
    if p.help:
        out(puzzle_usage(puzzle) + "\n" + RUN_HELP.format(prog=PROG).split("\n", 2)[2])
        return 0
    variants = resolve_variants(puzzle, p.unknown_flags, RUN_SPEC, puzzles)
    if len(p.positionals) > 1:
        raise UsageError("run takes one puzzle, got: %s" % " ".join(p.positionals))
    if not variants:
        err("error: name the variant to run.\n" + puzzle_usage(puzzle))
        return 2
    if len(variants) > 1:
        raise UsageError("run takes one variant (got %s); use `%s check %s %s` for several."
                         % (" ".join(v.flag for v in variants), PROG, puzzle.name,
                            " ".join(v.flag for v in variants)))
    variant = variants[0]
    solution = bool(p.get("--solution"))
    timeout = run_timeout()

    out("Puzzle %s: %s" % (variant.label, variant.summary))
    binary_opt = p.get("--binary")
    if binary_opt:
        binary = Path(binary_opt)
        backend = p.get("--backend") if p.get("--backend") in ("cpu", "gpu") else "cpu"
        out("binary: %s" % rel(binary, root))
        note = ""
    else:
        out("source: %s" % puzzle.source(solution))
        try:
            backend, binary, note = bld.build_for_backend(root, build_dir(root), puzzle, solution,
                                                          p.get("--backend", "auto"))
        except BuildError:
            return 2
    if note and note != "no GPU found":  # the driver names the backend; say why a present GPU is not used
        out("note: %s, so this runs on the CPU simulator" % note)

    cmd = [str(binary), "--variant", variant.name]
    random_case = any(p.get(k) is not None for k in ("--seed", "--n", "--tpb"))
    if random_case:
        seed = p.get("--seed")
        if seed is None:
            seed = random.randint(1, 99999)
        tpb = p.get("--tpb") or variant.tpb[0]
        n = p.get("--n") or variant.random_n(tpb, random.Random(seed))
        cmd += ["--n", str(n), "--tpb", str(tpb), "--seed", str(seed)]
        out("case: n=%d tpb=%d seed=%d" % (n, tpb, seed))
    else:
        n, tpb = variant.show_case()
        cmd += ["--show", "--n", str(n), "--tpb", str(tpb)]
    out("")
    outcome = run_driver(cmd, timeout, on_line=out)
    out("")
    if outcome.kind == USAGE:
        out("%s %s failed: %s (%s)" % (mark(False), variant.label, outcome.reason, quote_cmd(cmd)))
        out("This is a problem with the puzzle setup, not with your code: the build may be out of date.")
        return 2
    if outcome.passed:
        out("%s %s passed" % (mark(True), variant.label))
        extra = " --solution" if solution else ""
        out("Run `%s check %s %s%s` to test many sizes." % (PROG, puzzle.name, variant.flag, extra))
        return 0
    reason = outcome.reason
    if reason == "kernel error":
        named = simulator_reason(outcome)
        if named:
            reason = "kernel error: " + named if not named.startswith("kernel error") else named
    out("%s %s failed: %s" % (mark(False), variant.label, reason))
    hint = _hint_for(outcome)
    if hint:
        out(hint)
    return 1


# ------------------------------------------------------------------------------------- check

class VariantResult:
    def __init__(self, variant: Variant, verdict: str, cases_run: int, cases_total: int, seconds: float,
                 reason: str = ""):
        self.variant = variant
        self.verdict = verdict
        self.reason = reason  # why it did not pass: a wrong answer, a race, or what the error was
        self.cases_run = cases_run
        self.cases_total = cases_total
        self.seconds = seconds


def _progress(label: str, i: int, total: int, n: int, tpb: int, since: Optional[float] = None) -> None:
    if stdout_is_tty():
        elapsed = "  %s" % fmt_seconds(time.monotonic() - since) if since is not None else ""
        sys.stdout.write("\r\033[K%s  case %d/%d  n=%d tpb=%d%s" % (label, i + 1, total, n, tpb, elapsed))
        sys.stdout.flush()


def _clear_progress() -> None:
    if stdout_is_tty():
        sys.stdout.write("\r\033[K")
        sys.stdout.flush()


def check_variant(root: Path, variant: Variant, binary: Path, backend: str, seed: int, quick: bool,
                  timeout: float, replay_flags: List[str]) -> VariantResult:
    """Run the variant's sweep until its first failing case; print the verdict."""
    cases = variant.sweep(backend, seed, quick)
    if not stdout_is_tty():
        out("checking %s: %d cases" % (variant.label, len(cases)))
    start = time.monotonic()
    failure = None
    ran = 0
    for i, (n, tpb) in enumerate(cases):
        _progress(variant.label, i, len(cases), n, tpb, start)
        # The same input seeds as `grade --seed S`, so that a graded failure replays here.
        this_seed = case_seed(seed, variant.puzzle, variant.name, i)
        case = ["--variant", variant.name, "--n", str(n), "--tpb", str(tpb), "--seed", str(this_seed)]
        outcome = run_driver([str(binary)] + case, timeout)
        ran += 1
        if not outcome.passed:
            failure = (i, n, tpb, this_seed, outcome)
            break
    seconds = time.monotonic() - start
    _clear_progress()
    if failure is None:
        out("%s %s: pass (%d cases, %s)" % (mark(True), variant.label, len(cases), fmt_seconds(seconds)))
        return VariantResult(variant, PASS, ran, len(cases), seconds)
    i, n, tpb, input_seed, outcome = failure
    kind = ERROR if outcome.kind == USAGE else outcome.kind
    # For errors, name what happened: a crash, a deadlock, an endless loop, a time-out ...
    reason = explain(outcome) if outcome.kind == ERROR else outcome.detail
    out("%s %s: %s (%s), failed at case %d of %d: n=%d tpb=%d seed=%d"
        % (mark(False), variant.label, kind, reason, i + 1, len(cases), n, tpb, input_seed))
    replay = [PROG, "run", variant.puzzle, variant.flag, "--n", str(n), "--tpb", str(tpb),
              "--seed", str(input_seed)] + replay_flags
    out("    replay: %s" % " ".join(replay))
    for line in relevant_lines(outcome.lines):
        out("    | " + line)
    hint = _hint_for(outcome)
    if hint:
        out("    " + hint)
    verdict = "usage" if outcome.kind == USAGE else kind
    return VariantResult(variant, verdict, ran, len(cases), seconds,
                         "%s (n=%d tpb=%d seed=%d)" % (reason, n, tpb, input_seed))


def cmd_check(root: Path, args: List[str]) -> int:
    p = parse(args, CHECK_SPEC, allow_unknown_flags=True)
    if p.help:
        out(CHECK_HELP.format(prog=PROG))
        return 0
    puzzles = discover(root)
    if p.positionals:
        selected = [_find_puzzle_checking_flags(puzzles, p.positionals[0], p.unknown_flags, CHECK_SPEC)]
        chosen = {selected[0].name: resolve_variants(selected[0], p.unknown_flags, CHECK_SPEC, puzzles)}
        if len(p.positionals) > 1:
            raise UsageError("check takes at most one puzzle, got: %s" % " ".join(p.positionals))
    else:
        reject_unknown_flags(puzzles, p.unknown_flags, CHECK_SPEC)
        if p.unknown_flags:
            raise UsageError("name a puzzle before variant flags, e.g. `%s check p14 %s`."
                             % (PROG, p.unknown_flags[0]))
        selected = list(puzzles.values())
        chosen = {}
        if not selected:
            raise UsageError("no puzzles found (no puzzles/p*/puzzle.json)")
    binary_opt = p.get("--binary")
    if binary_opt and len(selected) != 1:
        raise UsageError("--binary needs exactly one puzzle")
    solution = bool(p.get("--solution"))
    quick = bool(p.get("--quick"))
    requested = p.get("--backend", "auto")
    timeout = run_timeout()
    seed = p.get("--seed")
    if seed is None:
        seed = random.randint(1, 99999)
    out("seed: %d (replay with --seed %d)" % (seed, seed))

    started = time.monotonic()
    results = []  # type: List[VariantResult]
    build_failed = False
    for puzzle in selected:
        variants = chosen.get(puzzle.name) or list(puzzle.variants.values())
        if binary_opt:
            binary, backend, note = Path(binary_opt), (requested if requested in ("cpu", "gpu") else "cpu"), ""
        else:
            try:
                backend, binary, note = bld.build_for_backend(root, build_dir(root), puzzle, solution, requested)
            except bld.SetupError:
                return 2
            except BuildError as e:
                build_failed = True
                reason = _build_error_reason(root, puzzle, solution, e.log)
                for v in variants:
                    out("%s %s: does not build%s" % (mark(False), v.label,
                                                     "" if reason == "does not build" else " (%s)" % reason))
                    results.append(VariantResult(v, ERROR, 0, 0, 0.0, reason))
                continue
        # As in `run`: a machine without a GPU needs no note; a GPU that is not used does.
        shown_note = "" if note == "no GPU found" else note
        out("%s: %s; backend: %s" % (puzzle.name, puzzle.title, bld.backend_label(backend, shown_note)))
        flags = _run_flags(solution, backend, binary_opt)
        for v in variants:
            results.append(check_variant(root, v, binary, backend, seed, quick, timeout, flags))

    total = time.monotonic() - started
    out("")
    rows = [(r.variant.label, r.verdict, cases_cell(r), "%.1f" % r.seconds, r.reason) for r in results]
    out(table(rows, header=("variant", "verdict", "cases", "seconds", "reason")))
    passed = sum(1 for r in results if r.verdict == PASS)
    out("%d of %d variants passed, total %s (seed %d)" % (passed, len(results), fmt_seconds(total), seed))
    if build_failed or any(r.verdict == "usage" for r in results):
        return 2
    return 0 if passed == len(results) else 1


def cases_cell(r: VariantResult) -> str:
    """'20 of 20' when all passed; 'failed at case 2 of 20' (not '2/20', which reads as 2 passed)."""
    if not r.cases_total:
        return "-"
    if r.verdict == PASS:
        return "%d of %d" % (r.cases_run, r.cases_total)
    return "failed at case %d of %d" % (r.cases_run, r.cases_total)


def _build_error_reason(root: Path, puzzle: Puzzle, solution: bool, log: str) -> str:
    """'compile error at puzzles/p14/p14.cu:12' from the failed build's output, when it names one."""
    if not log:
        return "does not build"  # no compile step ran (e.g. the target is missing)
    where = first_error_location(log, root, puzzle.source(solution))
    return "compile error at %s" % where if where else "compile error"


# -------------------------------------------------------------------------------------- list

def variant_status(variant: Variant, binary: Path, timeout: float, rng: random.Random) -> str:
    """solved / not yet, from the show case and two random sizes."""
    n, tpb = variant.show_case()
    runs = [["--show", "--n", str(n), "--tpb", str(tpb)]]
    for _ in range(2):
        tpb = rng.choice(variant.tpb)
        n = variant.random_n(tpb, rng)
        runs.append(["--n", str(n), "--tpb", str(tpb), "--seed", str(rng.randint(1, 99999))])
    for extra in runs:
        if not run_driver([str(binary), "--variant", variant.name] + extra, timeout).passed:
            return "not yet"
    return "solved"


def cmd_list(root: Path, args: List[str]) -> int:
    p = parse(args, LIST_SPEC)
    if p.help:
        out(LIST_HELP.format(prog=PROG))
        return 0
    if p.positionals:
        raise UsageError("list takes no arguments (got %s)" % " ".join(p.positionals))
    puzzles = discover(root)
    if not puzzles:
        out("No puzzles found (no puzzles/p*/puzzle.json).")
        return 0
    with_status = not p.get("--no-status")
    timeout = run_timeout()
    rng = random.Random()
    rows = []
    for puzzle in puzzles.values():
        statuses = {}
        if with_status:
            try:
                backend, binary, _ = bld.build_for_backend(root, build_dir(root), puzzle, False,
                                                           p.get("--backend", "cpu"), report=False)
            except bld.SetupError:
                return 2
            except BuildError:
                statuses = {name: "does not build" for name in puzzle.variants}
            else:
                for v in puzzle.variants.values():
                    bld.status("checking %s ..." % v.label)
                    statuses[v.name] = variant_status(v, binary, timeout, rng)
                bld.status("")
        first = True
        for v in puzzle.variants.values():
            row = [puzzle.name if first else "", puzzle.title if first else "", v.flag]
            if with_status:
                row.append(statuses[v.name])
            rows.append(row + [v.summary])
            first = False
    header = ["puzzle", "title", "variant"] + (["status"] if with_status else []) + ["summary"]
    out(table(rows, header=header))
    out("")
    out("Run one: %s run pNN --VARIANT    Test many sizes: %s check pNN" % (PROG, PROG))
    return 0
