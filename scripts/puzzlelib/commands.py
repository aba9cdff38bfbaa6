"""The learner-facing commands: run, check, list."""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional

from . import build as bld
from .common import (PROG, BuildError, UsageError, build_dir, fmt_seconds, mark, out, quote_cmd,
                     rel, run_timeout, stdout_is_tty, table, width as text_width)
from .cases import STATUS_SEED, TRACE_MAX_THREADS, random_case, run_seed, seeded_cases, traceable
from .driver import ERROR, PASS, USAGE, Outcome, relevant_lines, run_driver
from .diagnosis import ReportFilter, report_after, split_output
from .explain import ORIGIN_HINT, explain, origin_lines, simulator_reason
from .messages import activate, tr, tr_reason
from .options import backend_choice, parse
from .puzzles import Puzzle, Variant, discover
from .request import Verb, parse_request, pick
from .status import StatusCache, file_hash, variant_status

RUN_HELP = """\
usage: {prog} run pNN --VARIANT [--solution] [--backend auto|cpu|gpu] [--seed S] [--lang en|ko]

Build a puzzle and run one variant on its small show input: prints the input, your output
and the expected output, then a verdict. When the show input passes, one random input of the
same size runs too (its seed is printed, and is the same on every call): a[i] = i can hide a bug.

  --VARIANT          which variant to run (see `{prog} run pNN --help`)
  --solution         run the reference solution instead of your file
  --backend B        auto (default: GPU if there is one), cpu (the simulator) or gpu
  --seed S           run one random size instead of the show input (reproducible with S)
  --n N, --tpb T     run this size / block size instead of the show input
  --lang en|ko       messages in English (the default) or Korean; PUZZLE_LANG=ko or a Korean locale
                     does the same
"""

CHECK_HELP = """\
usage: {prog} check [pNN [--VARIANT ...]] [--solution] [--backend auto|cpu|gpu] [--seed S] [--quick] [--lang L]

Test variants on many sizes (every block size the puzzle lists, edge sizes around it, a random
size and a large one). Without a puzzle: every puzzle; without a variant: every variant.

  --solution         check the reference solution instead of your file
  --backend B        auto (default), cpu (the simulator, finds races) or gpu
  --seed S           the seed of the random sizes and inputs; check prints it so the same cases
                     can be replayed. On the CPU simulator, `check --seed S` runs the cases that
                     `grade --seed S` runs, in the same order, with the same inputs (grade adds
                     time and memory limits); --quick runs the first of them only
  --quick            only the first two block sizes and no large size
  --lang en|ko       messages in English (the default) or Korean; PUZZLE_LANG=ko or a Korean locale
                     does the same
"""

LIST_HELP = """\
usage: {prog} list [--no-status] [--backend auto|cpu|gpu] [--lang en|ko]

List the puzzles and their variants. The status column builds your files and gives, for each
variant, the verdict of `{prog} check pNN --VARIANT --quick --seed {seed}` on the CPU simulator
(--backend changes that): solved, not yet (with the first case that fails), or does not build.
The cases are the same on every call, and the status is remembered until the file changes.

  --no-status        skip building and checking
  --lang en|ko       messages in English (the default) or Korean; PUZZLE_LANG=ko or a Korean locale
                     does the same
"""

RUN = Verb("run", pick("--solution", "--backend", "--seed", "--n", "--tpb", "--binary"), RUN_HELP,
           missing="run needs a puzzle, e.g. `{prog} run p14 --simple`.\n{puzzles}", one_variant=True)
CHECK = Verb("check", dict(pick("--solution", "--backend", "--seed"), **{"--quick": None, "--binary": str}),
             CHECK_HELP)
LIST_SPEC = {"--no-status": None, "--backend": backend_choice}

HINTS = {
    "wrong answer": "Compare the `out:` and `expected:` lines above; start at the first element that differs.",
    "wrong answer (no arrays)": "Look at the mismatches above; start at the first element that differs.",
    "race: result depends on thread order":
        "Threads read and write the same location without a barrier between them; the answer "
        "changed when they ran in a different order.",
    "race: result depends on how blocks interleave":
        "Running blocks side by side gave a different answer than running them one at a time: a block used a "
        "value that another block writes during the launch before that value was final. Wait until its flag "
        "is set (do not give up after a few polls) and use exactly what you waited for; update a shared total "
        "with one atomic (atomicAdd), not with a read and a later atomicExch.",
    "race: reported by the simulator": "Read the simulator's report above: it names the kernel and what raced.",
    "kernel error": "Read the error report above: it says what went wrong, at which source line, and (on the CPU "
                    "simulator) in which block and threads, and what to try.",
    "timed out": "It ran longer than {timeout:g} s: look for a loop that never ends or a barrier some "
                 "threads never reach (PUZZLES_TIMEOUT sets the limit in seconds).",
}
CRASH_HINT = ("The program crashed, often from an out-of-bounds access. "
              "The CPU simulator (--backend cpu) usually names the bad access.")


def _hint_for(outcome: Outcome) -> str:
    if outcome.reason == "wrong answer" and origin_lines(outcome.result):
        return tr(ORIGIN_HINT)
    if outcome.reason == "wrong answer" and not any(l.lstrip().startswith("out:") for l in outcome.lines):
        return tr(HINTS["wrong answer (no arrays)"])  # never point at lines that are not there
    if outcome.reason.startswith("race: unsynchronized accesses"):
        return tr("Two threads accessed the same memory, at least one of them writing, with no barrier (or other "
                  "synchronization) between them: the report above names both lines. The answer may have come out "
                  "right this time; on a GPU it would not always.")
    if outcome.reason in HINTS:
        return tr(HINTS[outcome.reason]).format(timeout=run_timeout())
    if outcome.reason.startswith("crashed"):
        return tr(CRASH_HINT)
    return ""


def _run_flags(solution: bool, backend: str, binary: Optional[str]) -> List[str]:
    flags = ["--solution"] if solution else []
    flags += ["--backend", backend]
    if binary:
        flags += ["--binary", binary]
    return flags


def failing_block(result: Optional[dict]) -> int:
    """blockIdx.x of the block where a failing case went wrong (the writer of the first wrong
    element, or the block the simulator's diagnosis names), for `trace --blockidx`; 0 when none
    is known or the grid is not one-dimensional there."""
    result = result or {}
    nodes = (result.get("origin") or {}).get("nodes") if isinstance(result.get("origin"), dict) else None
    diagnosis = result.get("diagnosis") if isinstance(result.get("diagnosis"), dict) else {}
    block = nodes[0].get("block") if nodes and isinstance(nodes[0], dict) else diagnosis.get("block")
    if isinstance(block, list) and len(block) == 3 and all(isinstance(x, int) for x in block) and block[1:] == [0, 0]:
        return max(0, block[0])
    return 0


def case_lines(variant: Variant, n: int, tpb: int, seed: int, solution: bool, backend: str,
               binary: Optional[str], result: Optional[dict]) -> List[str]:
    """The commands of one failing case with a random input: `run` it again, and `trace` it (the
    same input, on the CPU simulator) when trace can draw it; otherwise why not."""
    replay = [PROG, "run", variant.puzzle, variant.flag, "--n", str(n), "--tpb", str(tpb), "--seed", str(seed)]
    lines = [tr("    replay: %s") % " ".join(replay + _run_flags(solution, backend, binary))]
    if binary and backend == "gpu":
        return lines  # a GPU binary given with --binary cannot be traced, and trace builds no other
    if not traceable(tpb):
        lines.append(tr("    trace: not for this case: its blocks have {tpb} threads, and trace draws at most {most}")
                     .format(tpb=tpb, most=TRACE_MAX_THREADS))
        return lines
    trace = [PROG, "trace", variant.puzzle, variant.flag, "--n", str(n), "--tpb", str(tpb), "--seed", str(seed)]
    block = failing_block(result)
    if block:
        trace += ["--blockidx", str(block)]
    if solution:
        trace.append("--solution")
    if binary:
        trace += ["--binary", binary]
    lines.append(tr("    trace: %s") % " ".join(trace))
    return lines


# --------------------------------------------------------------------------------------- run

def cmd_run(root: Path, args: List[str]) -> int:
    activate()
    req = parse_request(root, args, RUN)
    if req is None:
        return 0
    puzzle, variant, solution = req.puzzle, req.variant, req.solution
    timeout = run_timeout()

    out(tr("Puzzle %s: %s") % (variant.label, tr(variant.summary)))
    if req.binary:
        binary = Path(req.binary)
        out("binary: %s" % rel(binary, root))
        backend, note = (req.backend if req.backend in ("cpu", "gpu") else "cpu"), ""
    else:
        out(tr("source: %s") % puzzle.source(solution))
        try:
            backend, binary, note = bld.build_for_backend(root, build_dir(root), puzzle, solution, req.backend)
        except BuildError:
            return 2
    if note and note != "no GPU found":  # the driver names the backend; say why a present GPU is not used
        out(tr("note: %s, so this runs on the CPU simulator") % note)

    cmd = [str(binary), "--variant", variant.name]
    show = not (req.seed_given() or req.n or req.tpb)
    if not show:
        seed = req.seed
        n, tpb = random_case(variant, seed, req.n, req.tpb)
        cmd += ["--n", str(n), "--tpb", str(tpb), "--seed", str(seed)]
        out("case: n=%d tpb=%d seed=%d" % (n, tpb, seed))
    else:
        n, tpb = variant.show_case()
        cmd += ["--show", "--n", str(n), "--tpb", str(tpb)]
    out("")
    # The simulator's English report is held back and worded from its record below.
    held = ReportFilter()
    outcome = run_driver(cmd, timeout, on_line=lambda line: held(line) and out(line))
    report = report_after(held, outcome.diagnosis)
    for line in report:
        out(line)
    out("")
    if outcome.kind == USAGE:
        return _setup_problem(variant, outcome, cmd)
    if outcome.passed and show:
        # a[i] = i can hide a bug (an element 0 that adds nothing): one random input of the same size.
        seed = run_seed(variant)
        random_cmd = [str(binary), "--variant", variant.name, "--n", str(n), "--tpb", str(tpb), "--seed", str(seed)]
        second = run_driver(random_cmd, timeout)
        if second.kind == USAGE:
            return _setup_problem(variant, second, random_cmd)
        if not second.passed:
            return _random_failure(variant, second, n, tpb, seed, solution, backend, req.binary)
        out(tr("A random input of the same size passed too (seed {seed}).").format(seed=seed))
    if outcome.passed:
        out(tr("%s %s passed") % (mark(True), variant.label))
        extra = " --solution" if solution else ""
        out(tr("Run `%s check %s %s%s` to test many sizes.") % (PROG, puzzle.name, variant.flag, extra))
        return 0
    for line in origin_lines(outcome.result):
        out(line)
    if origin_lines(outcome.result):
        out("")
    out(tr("%s %s failed: %s") % (mark(False), variant.label, tr_reason(_run_reason(outcome))))
    hint = _hint_for(outcome)
    if hint:
        out(hint)
    return 1


def _run_reason(outcome: Outcome) -> str:
    """The reason `run` gives, in English: a kernel error says which."""
    reason = outcome.reason
    if reason == "kernel error":
        named = simulator_reason(outcome)
        if named:
            reason = "kernel error: " + named if not named.startswith("kernel error") else named
    return reason


def _setup_problem(variant: Variant, outcome: Outcome, cmd: List[str]) -> int:
    out("%s %s failed: %s (%s)" % (mark(False), variant.label, outcome.reason, quote_cmd(cmd)))
    out(tr("This is a problem with the puzzle setup, not with your code: the build may be out of date."))
    return 2


def _random_failure(variant: Variant, outcome: Outcome, n: int, tpb: int, seed: int, solution: bool, backend: str,
                    binary: Optional[str]) -> int:
    """The show input passed and the random input of the same size did not: that case's output
    and diagnosis as a failure, and how to run and trace it again."""
    out(tr("The show input passed, but a random input of the same size failed (n={n} tpb={tpb} seed={seed}):")
        .format(n=n, tpb=tpb, seed=seed))
    other, report = split_output(outcome.lines, outcome.diagnosis)
    for line in relevant_lines(other) + report:
        out(line)
    out("")
    for line in origin_lines(outcome.result):
        out(line)
    if origin_lines(outcome.result):
        out("")
    out(tr("{mark} {variant} failed on a random input: {reason}").format(
        mark=mark(False), variant=variant.label, reason=tr_reason(_run_reason(outcome))))
    for line in case_lines(variant, n, tpb, seed, solution, backend, binary, outcome.result):
        out(line)
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
        self.case = None  # the failing case, [n, tpb, reason in English], for list's status


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
                  timeout: float, solution: bool, given_binary: Optional[str]) -> VariantResult:
    """Run the variant's sweep until its first failing case; print the verdict."""
    cases = seeded_cases(variant, backend, seed, quick)
    if not stdout_is_tty():
        out(tr("checking %s: %d cases") % (variant.label, len(cases)))
    start = time.monotonic()
    failure = None
    ran = 0
    # The same cases and input seeds as `grade --seed S`, so that a graded failure replays here.
    for i, (n, tpb, this_seed) in enumerate(cases):
        _progress(variant.label, i, len(cases), n, tpb, start)
        case = ["--variant", variant.name, "--n", str(n), "--tpb", str(tpb), "--seed", str(this_seed)]
        outcome = run_driver([str(binary)] + case, timeout)
        ran += 1
        if not outcome.passed:
            failure = (i, n, tpb, this_seed, outcome)
            break
    seconds = time.monotonic() - start
    _clear_progress()
    if failure is None:
        out(tr("%s %s: pass (%d cases, %s)") % (mark(True), variant.label, len(cases), fmt_seconds(seconds)))
        return VariantResult(variant, PASS, ran, len(cases), seconds)
    i, n, tpb, input_seed, outcome = failure
    kind = ERROR if outcome.kind == USAGE else outcome.kind
    # For errors, name what happened: a crash, a deadlock, an endless loop, a time-out ...
    reason = explain(outcome) if outcome.kind == ERROR else outcome.detail
    verdict, why = tr(kind), tr_reason(reason)
    if verdict == why:  # Korean says "fail" and "wrong answer" with one word: say it once
        out(tr("%s %s: %s, failed at case %d of %d: n=%d tpb=%d seed=%d")
            % (mark(False), variant.label, verdict, i + 1, len(cases), n, tpb, input_seed))
    else:
        out(tr("%s %s: %s (%s), failed at case %d of %d: n=%d tpb=%d seed=%d")
            % (mark(False), variant.label, verdict, why, i + 1, len(cases), n, tpb, input_seed))
    for line in case_lines(variant, n, tpb, input_seed, solution, backend, given_binary, outcome.result):
        out(line)
    other, report = split_output(outcome.lines, outcome.diagnosis)
    for line in relevant_lines(other) + report:
        out("    | " + line)
    for line in origin_lines(outcome.result):
        out("    " + line)
    hint = _hint_for(outcome)
    if hint:
        out("    " + hint)
    verdict = "usage" if outcome.kind == USAGE else kind
    result = VariantResult(variant, verdict, ran, len(cases), seconds,
                           "%s (n=%d tpb=%d seed=%d)" % (tr_reason(reason), n, tpb, input_seed))
    result.case = [n, tpb, reason]
    return result


def cmd_check(root: Path, args: List[str]) -> int:
    activate()
    req = parse_request(root, args, CHECK)
    if req is None:
        return 0
    if req.binary and len(req.selected) != 1:
        raise UsageError("--binary needs exactly one puzzle")
    solution = req.solution
    quick = bool(req.get("--quick"))
    requested = req.backend
    timeout = run_timeout()
    seed = req.seed
    out(tr("seed: %d (replay with --seed %d)") % (seed, seed))

    started = time.monotonic()
    results = []  # type: List[VariantResult]
    build_failed = False
    tested: Dict[str, Optional[str]] = {}  # each source built, and its hash when it was built
    for puzzle in req.selected:
        variants = req.variants or list(puzzle.variants.values())
        if not req.binary:
            tested[puzzle.source(solution)] = file_hash(root / puzzle.source(solution))
        if req.binary:
            binary, backend, note = Path(req.binary), (requested if requested in ("cpu", "gpu") else "cpu"), ""
        else:
            try:
                backend, binary, note = bld.build_for_backend(root, build_dir(root), puzzle, solution, requested)
            except bld.SetupError:
                return 2
            except BuildError as e:
                build_failed = True
                reason = _build_error_reason(root, puzzle, solution, e.log)
                for v in variants:
                    out(tr("%s %s: does not build%s") % (mark(False), v.label,
                                                     "" if reason == tr("does not build") else " (%s)" % reason))
                    results.append(VariantResult(v, ERROR, 0, 0, 0.0, reason))
                continue
        # As in `run`: a machine without a GPU needs no note; a GPU that is not used does.
        shown_note = "" if note == "no GPU found" else note
        out(tr("%s: %s; backend: %s") % (puzzle.name, tr(puzzle.title), bld.backend_label(backend, shown_note)))
        for v in variants:
            results.append(check_variant(root, v, binary, backend, seed, quick, timeout, solution, req.binary))
        if not req.binary and not solution and not quick:
            remember_check(root, puzzle, backend, tested[puzzle.source(solution)], results[-len(variants):])

    total = time.monotonic() - started
    out("")
    rows = [(r.variant.label, tr(r.verdict), cases_cell(r), "%.1f" % r.seconds, r.reason) for r in results]
    out(table(rows, header=(tr("variant"), tr("verdict"), tr("cases"), tr("seconds"), tr("reason"))))
    passed = sum(1 for r in results if r.verdict == PASS)
    out(tr("%d of %d variants passed, total %s (seed %d)") % (passed, len(results), fmt_seconds(total), seed))
    for path, digest in tested.items():
        if file_hash(root / path) != digest:  # saved while the cases ran: say which version was judged
            out(tr("note: %s changed while this ran: the verdicts above are for the version built at the start "
                   "(sha256 %s), not for the file as it is now. Run the command again.") % (path, (digest or "?")[:12]))
    if build_failed or any(r.verdict == "usage" for r in results):
        return 2
    return 0 if passed == len(results) else 1


def remember_check(root: Path, puzzle: Puzzle, backend: str, source_hash: Optional[str],
                   results: List[VariantResult]) -> None:
    """A full check's verdicts, for `list`: it never calls solved a file this check rejected."""
    if not source_hash or file_hash(root / puzzle.source(False)) != source_hash:
        return  # the file changed during the run: the verdicts are not this file's
    cache = StatusCache(build_dir(root))
    for r in results:
        if r.verdict in (PASS, "fail", "race", ERROR):
            cache.record_check(r.variant.label, source_hash, backend, None if r.verdict == PASS else r.case)
    cache.save()


def cases_cell(r: VariantResult) -> str:
    """'20 of 20' when all passed; 'failed at case 2 of 20' (not '2/20', which reads as 2 passed)."""
    if not r.cases_total:
        return "-"
    if r.verdict == PASS:
        return tr("%d of %d") % (r.cases_run, r.cases_total)
    return tr("failed at case %d of %d") % (r.cases_run, r.cases_total)


def _build_error_reason(root: Path, puzzle: Puzzle, solution: bool, log: str) -> str:
    """'compile error at puzzles/p14/p14.cu:12' from the failed build's output, when it names one."""
    if not log:
        return tr("does not build")  # no compile step ran (e.g. the target is missing)
    where = bld.first_error_location(log, root, puzzle.source(solution))
    return tr("compile error at %s") % where if where else tr("compile error")


# -------------------------------------------------------------------------------------- list

def summary_width(rows: List[List[str]], header: List[str]) -> Optional[int]:
    """How many characters the last column (the summary) may take on this terminal, or None
    when output is not a terminal (a pipe or a file keeps the whole text)."""
    if not stdout_is_tty():
        return None
    columns = shutil.get_terminal_size((100, 24)).columns
    widths = [max(text_width(str(r[i])) for r in rows + [header]) for i in range(len(header) - 1)]
    return max(20, columns - sum(w + 2 for w in widths) - 1)


def cut(text: str, width: Optional[int]) -> str:
    """The text in at most `width` terminal columns, cut with an ellipsis."""
    if width is None or text_width(text) <= width:
        return text
    kept = ""
    for c in text:
        if text_width(kept + c) > width - 1:
            break
        kept += c
    return kept.rstrip() + "\u2026"


def cmd_list(root: Path, args: List[str]) -> int:
    activate()
    p = parse(args, LIST_SPEC)
    if p.help:
        out(tr(LIST_HELP).format(prog=PROG, seed=STATUS_SEED))
        return 0
    if p.positionals:
        raise UsageError("list takes no arguments (got %s)" % " ".join(p.positionals))
    puzzles = discover(root)
    if not puzzles:
        out(tr("No puzzles found (no puzzles/p*/puzzle.json)."))
        return 0
    with_status = not p.get("--no-status")
    timeout = run_timeout()
    build = build_dir(root)
    cache = StatusCache(build)
    changed = []  # type: List[str]
    rows = []
    for puzzle in puzzles.values():
        statuses = {}
        if with_status:
            source = root / puzzle.source(False)
            before = file_hash(source)
            try:
                backend, binary, _ = bld.build_for_backend(root, build, puzzle, False,
                                                           p.get("--backend", "cpu"), report=False)
            except bld.SetupError:
                return 2
            except BuildError:
                statuses = {name: tr("does not build") for name in puzzle.variants}
            else:
                binary_hash = file_hash(binary)
                for v in puzzle.variants.values():
                    bld.status(tr("checking %s ...") % v.label)
                    statuses[v.name], _ = variant_status(v, binary, backend, before, binary_hash, cache, timeout)
                bld.status("")
                if file_hash(source) != before:
                    changed.append((puzzle.source(False), before))
                    for v in puzzle.variants.values():  # what was measured is not this file: forget it
                        cache.entries.pop(v.label, None)
        first = True
        for v in puzzle.variants.values():
            row = [puzzle.name if first else "", tr(puzzle.title) if first else "", v.flag]
            if with_status:
                row.append(statuses[v.name])
            rows.append(row + [tr(v.summary)])
            first = False
    if with_status:
        cache.save()
    header = [tr("puzzle"), tr("title"), tr("variant")] + ([tr("status")] if with_status else []) + [tr("summary")]
    width = summary_width([r[:-1] + [""] for r in rows], header)
    rows = [r[:-1] + [cut(r[-1], width)] for r in rows]
    out(table(rows, header=header))
    out("")
    if with_status:
        out(tr("status: the verdict of `%s check pNN --VARIANT --quick --seed %d` on your file (remembered until the "
               "file changes), or the case a full `check` of this very file failed at; `check pNN` tests every "
               "size.") % (PROG, STATUS_SEED))
    for path, digest in changed:
        out(tr("note: %s changed while this ran: the verdicts above are for the version built at the start "
               "(sha256 %s), not for the file as it is now. Run the command again.") % (path, (digest or "?")[:12]))
    out(tr("Run one: %s run pNN --VARIANT    Test many sizes: %s check pNN") % (PROG, PROG))
    return 0
