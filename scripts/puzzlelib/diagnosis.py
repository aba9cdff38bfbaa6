"""The simulator's diagnosis, worded for the learner from its record of facts.

The simulator describes what it found as one JSON object (docs/architecture.md, "The diagnosis
record"): its kind, sites, block, threads, `interleaved`, and `facts`, the named facts the kind
alone does not say (the array and index, the barrier interval, counts, the source expression).
The driver puts it in RESULT's "diagnosis"; under `grade` the checker passes it on (driver.py,
`diagnosis_record`). This module turns a record into the lines a learner reads, in the language
asked for (messages.tr), and chooses the advice by rules over the facts:

- a *renderer* per kind words the facts (`@renderer("race_shared", ...)`);
- an *advice rule* is a condition over the facts and the words it adds (`@advice(...)`): the
  rules of a kind are tried in order and the first that holds speaks. Each rule is tested by a
  kernel that must trigger it and a close kernel that must not (tests/python/test_advice.py).

The renderers and rules live in diagnosis_*.py, one module per family of kinds, next to their
words; their Korean forms are in locale/ko/LC_MESSAGES/diagnosis_*.po. The simulator's own English
text (the record's "message", printed as `cudasim: error: ...` by a program run without the CLI)
is never parsed: the CLI hides that block and prints `render(record)` instead.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence, Tuple

from .messages import tr

Renderer = Callable[[dict], List[str]]
RENDERERS: Dict[str, Renderer] = {}


class Advice:
    """One rule: `when(record)` decides, `say(record)` words it. `id` is stable (tests name it)."""

    def __init__(self, id: str, kinds: Sequence[str], when: Callable[[dict], bool], say: Callable[[dict], str]):
        self.id = id
        self.kinds = tuple(kinds)
        self.when = when
        self.say = say

    def __repr__(self):
        return "Advice(%s)" % self.id


ADVICE: List[Advice] = []  # in the order they are tried


def renderer(*kinds: str) -> Callable[[Renderer], Renderer]:
    def register(fn: Renderer) -> Renderer:
        for k in kinds:
            if k in RENDERERS:
                raise ValueError("kind %s has two renderers" % k)
            RENDERERS[k] = fn
        return fn
    return register


def advice(id: str, kinds: Sequence[str], when: Callable[[dict], bool]) -> Callable[[Callable[[dict], str]], Advice]:
    """Registers a rule: the decorated function returns the advice's words for a record `when` holds for."""
    def register(say: Callable[[dict], str]) -> Advice:
        if any(a.id == id for a in ADVICE):
            raise ValueError("two advice rules are named %s" % id)
        a = Advice(id, kinds, when, say)
        ADVICE.append(a)
        return a
    return register


def chosen_advice(d: dict) -> Optional[Advice]:
    """The first rule of the record's kind whose condition holds, or None."""
    _load()
    for a in ADVICE:
        if d.get("kind") in a.kinds and a.when(d):
            return a
    return None


def advice_text(d: dict) -> Optional[str]:
    a = chosen_advice(d)
    return a.say(d) if a else None


def facts(d: dict) -> dict:
    f = d.get("facts")
    return f if isinstance(f, dict) else {}


# ---- words every family uses ----------------------------------------------------------------------

def who(v) -> str:
    """A block or thread index as the learner writes it: 3, or (3, 1, 0) in a 2D/3D launch."""
    v = list(v or [0, 0, 0])
    return str(v[0]) if v[1:] == [0, 0] else "(%s)" % ", ".join(str(x) for x in v)


def kernel_words(f: dict) -> str:
    """`kernel reduce_k1 (launched at p12.cu:97)` from the facts `kernel` and `launch_site`."""
    if f.get("launch_site"):
        return tr("kernel {kernel} (launched at {site})").format(kernel=f.get("kernel", "?"), site=f["launch_site"])
    return tr("kernel {kernel}").format(kernel=f.get("kernel", "?"))


# ---- the report -----------------------------------------------------------------------------------

_loaded = False


def _load() -> None:
    """Imports the families' modules, which register their renderers and rules."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    import importlib
    import pkgutil
    from pathlib import Path
    for m in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if m.name.startswith("diagnosis_"):
            importlib.import_module("." + m.name, __package__)


def render(d: Optional[dict]) -> List[str]:
    """The report of a diagnosis record in the learner's language: its lines, the first one the
    headline. [] without a record or without a renderer for its kind (test_diagnosis.py requires
    one for every kind the simulator has)."""
    if not d:
        return []
    _load()
    fn = RENDERERS.get(d.get("kind", ""))
    if fn is None:
        return []
    return fn(d)


class ReportFilter:
    """Holds back the simulator's English report from a driver's output as it streams: from the line
    that starts with `cudasim: error: ` on (the report ends the process: what follows it is the
    report's, however its lines are indented). A line is shown when the call returns True; the
    held-back lines are in `held`."""

    PREFIX = "cudasim: error: "

    def __init__(self):
        self.inside = False
        self.held: List[str] = []

    def __call__(self, line: str) -> bool:
        if self.inside or line.startswith(self.PREFIX):
            self.inside = True
            self.held.append(line)
            return False
        return True


def _report_block(lines: List[str], d: Optional[dict]) -> Optional[Tuple[int, int]]:
    """[start, end) of the simulator's English report in `lines`: the record's message, line for
    line, after `cudasim: error: `; else from that prefix to the end."""
    message = str((d or {}).get("message") or "").splitlines()
    for i, line in enumerate(lines):
        if not line.startswith(ReportFilter.PREFIX):
            continue
        block = [ReportFilter.PREFIX + message[0]] + message[1:] if message else []
        if block and [str(l) for l in lines[i:i + len(block)]] == block:
            return i, i + len(block)
        return i, len(lines)
    return None


def split_output(lines: List[str], d: Optional[dict]) -> Tuple[List[str], List[str]]:
    """(the driver's other lines, the report): the simulator's English block is replaced by the
    record's rendering; without a record or a renderer the lines stay as they are."""
    report = render(d)
    if not report:
        return list(lines), []
    span = _report_block(lines, d)
    if span is None:
        return list(lines), report
    return list(lines[:span[0]]) + list(lines[span[1]:]), report


def report_after(keep: ReportFilter, d: Optional[dict]) -> List[str]:
    """What to print after a run whose output went through `keep`: the rendered report and what the
    run printed after it, or the held-back lines as they were when the record has no renderer."""
    report = render(d)
    if not report:
        return keep.held
    rest, _ = split_output(keep.held, d)
    return report + rest
