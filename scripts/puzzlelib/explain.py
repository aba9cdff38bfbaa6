"""The learner-facing reason of an outcome, from the simulator's diagnosis.

A driver that the simulator stops with an error puts the simulator's diagnosis into its RESULT
line (`"diagnosis": {"kind": ..., "sites": [...], "block": ..., "threads": [...], "detail": ...,
"message": ..., "interleaved": ...}`, docs/architecture.md); under `grade` the checker's RESULT
carries it. REASONS names each kind of harness/sim/src/diagnosis.h (tests/python/test_explain.py
keeps the two in step), so rewording a simulator message never changes the reason shown.
"""

from __future__ import annotations

import re
from typing import List, Optional

from .driver import ERROR, RACE, Outcome
from .messages import tr

# The short reason of each kind. A race reason replaces the verdict's generic one ("race: result
# depends on thread order") when the run ended in a race. Where the situation says more than the
# kind, FACT_REASONS words the reason from the record's facts (below), and the entry here is the
# reason of a record without them. MESSAGE: no kind uses it any more (a reason used to be the start
# of the simulator's English message).
MESSAGE = None
REASONS = {
    "deadlock": "deadlock",
    "barrier_divergence": "barrier divergence",
    "runaway_thread": "endless loop (a thread never reached a barrier)",
    "endless_wait": "endless wait (a block waits for what no other block will write)",
    "runaway_block": "endless loop (a block never finished)",
    "runaway_barrier": "endless loop (a block passed the same barrier over and over)",
    "race_shared": "race: unsynchronized accesses to shared memory",
    "race_device": "race: unsynchronized accesses to device memory",
    "race_schedule": "race: result depends on thread order",
    "race_atomic_scope": "race: a block-scope atomic meets another block's access",
    "race_mixed_access": "race: an atomic write and a plain or differently sized access",
    "race_read_only": "race: a read-only-path load (__ldg) of data written in the launch",
    "uninit_shared": "uninitialized read of shared memory",
    "uninit_device": "uninitialized read of device memory",
    "warp_lane_returned": "warp misuse: a shuffle reads a lane that has returned",
    "warp_mask_without_self": "warp misuse: a lane calls with a mask without itself",
    "warp_misuse": "warp misuse",
    "cuda_barrier_misuse": "cuda::barrier misuse",
    "stack_overflow": "stack overflow",
    "null_dereference": "crash: null pointer dereference",
    "use_after_free": "crash: use after free",
    "out_of_bounds": "out-of-bounds access",
    "crash_host": "crash in host code",
    "crash_device": "crash: invalid memory access",
    "arithmetic": "crash: arithmetic error (division by zero?)",
    "out_of_memory": "out of memory",
    "shared_arena_full": "too many __shared__ variables for the simulator",
    "shared_memory_limit": "more than 48 KiB of shared memory per block",
    "bad_pointer_argument": "a kernel argument is not device memory",
    "exception": "a C++ exception escaped the kernel",
    "device_code_from_host": "device code called from host code",
    # The simulator's run-time form of nvcc's error, for kernels that call exit, fopen, system, ...
    "host_call": "device code calls the host function %(detail)s",
    # The harness forbids it while a case runs: the answer must come from the kernels.
    "host_copy_in_launcher": "the launcher copied device memory to the host (%(detail)s)",
}


def _cuda_barrier_reason(f: dict) -> str:
    c = f.get("case")
    if c == "uninitialised":
        return tr("cuda::barrier misuse: {call} before init()").format(call=f.get("call", "?"))
    if c == "init_count":
        return tr("cuda::barrier misuse: init() with a count of {expected}").format(expected=f.get("expected", "?"))
    if c == "arrive_count":
        return tr("cuda::barrier misuse: arrive({update}) with {pending} arrivals left").format(
            update=f.get("update", "?"), pending=f.get("pending", "?"))
    if c == "token":
        return tr("cuda::barrier misuse: wait() with a token arrive() did not return")
    return tr(REASONS["cuda_barrier_misuse"])


def _limit_reason(f: dict) -> str:
    if "declared" in f:
        return tr("more than 48 KiB of shared memory per block ({bytes} bytes)").format(
            bytes=int(f.get("declared") or 0) + int(f.get("dynamic") or 0))
    return tr(REASONS["shared_memory_limit"])


def _arena_reason(f: dict) -> str:
    if "count" in f:
        return tr("too many __shared__ variables for the simulator ({count})").format(count=f["count"])
    return tr(REASONS["shared_arena_full"])


def _argument_reason(f: dict) -> str:
    if "argument" in f:
        return tr("kernel argument {argument} is not device memory").format(argument=f["argument"])
    return tr(REASONS["bad_pointer_argument"])


def _host_copy_reason(f: dict, detail: str) -> str:
    if f.get("case") == "managed_read":
        return tr("the launcher copied device memory to the host (a read of cudaMallocManaged memory in host code)")
    return tr(REASONS["host_copy_in_launcher"]) % {"detail": f.get("how") or detail}


# The reasons that depend on the situation, worded from the record's facts (never from its
# message): kind -> function(facts, detail).
FACT_REASONS = {
    "cuda_barrier_misuse": lambda f, detail: _cuda_barrier_reason(f),
    "shared_memory_limit": lambda f, detail: _limit_reason(f),
    "shared_arena_full": lambda f, detail: _arena_reason(f),
    "bad_pointer_argument": lambda f, detail: _argument_reason(f),
    "exception": lambda f, detail: tr(REASONS["exception"]),
    "host_copy_in_launcher": _host_copy_reason,
}
RACE_OTHER = "race: reported by the simulator"
# The reason of a kind where the run that found it had blocks take turns side by side (the
# diagnosis's "interleaved": the 'random' schedule of a checked launch) and that says more than
# REASONS: a result that differs from the first schedule's because blocks interleaved, which no
# order of one block at a time shows (a look-back that gives up after a few polls, an update
# computed from an earlier read and stored with atomicExch).
INTERLEAVED_REASONS = {
    "race_schedule": "race: result depends on how blocks interleave",
}

# What the C++ runtime and the OS print when the address-space limit of `grade` is hit: neither
# is the simulator, so no diagnosis names it. The one regular expression over a program's text
# left in scripts/: that text (std::bad_alloc's what(), the loader's "cannot allocate memory")
# comes from the C++ runtime and the OS, which the project does not control and which report
# nothing as data; a failed CUDA call, which the harness does control, comes as data
# (Outcome.harness_error, the harness's `HARNESS_ERROR {json}` line).
OOM_TEXT = re.compile(r"std::bad_alloc|out of memory|cannot allocate memory|MemoryAllocation", re.I)


def diagnosis_reason(d: Optional[dict]) -> Optional[str]:
    """The short reason of a diagnosis, or None without one."""
    if d is None:
        return None
    kind = d["kind"]
    if d.get("interleaved") is True and kind in INTERLEAVED_REASONS:
        return INTERLEAVED_REASONS[kind]
    if kind not in REASONS:
        return "kernel error: " + kind
    if kind in FACT_REASONS:
        f = d.get("facts")
        return FACT_REASONS[kind](f if isinstance(f, dict) else {}, d.get("detail") or "?")
    return REASONS[kind] % {"detail": d.get("detail") or "?"}


def race_reason(outcome: Outcome) -> str:
    """The reason of a race verdict, from the simulator's diagnosis."""
    d = outcome.diagnosis
    return diagnosis_reason(d) if d is not None and d["kind"].startswith("race_") else RACE_OTHER


def simulator_reason(outcome: Outcome) -> Optional[str]:
    """A short name for what stopped the run: the simulator's diagnosis, else the harness's error."""
    reason = diagnosis_reason(outcome.diagnosis)
    if reason is not None:
        return reason
    failed = getattr(outcome, "harness_error", None)  # the harness's report of a failed CUDA call
    if isinstance(failed, dict):
        if failed.get("case") == "kernels":
            return "kernel launch failed"
        return "CUDA call failed: %s (%s)" % (failed.get("call") or "?", failed.get("error") or "?")
    return None


def shorten(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 3].rstrip() + "..."


def format_memory(limit: Optional[int]) -> str:
    if limit is None:
        return "no memory limit"
    if limit % (1 << 30) == 0:
        return "%d GiB" % (limit >> 30)
    return "%d MiB" % (limit >> 20)


def explain(outcome: Outcome, timeout: Optional[float] = None, memory: Optional[int] = None) -> str:
    """The reason of a verdict, naming what went wrong: for errors a crash, a deadlock, an
    endless loop, a time-out or running out of memory; for races and wrong answers the
    driver's own reason."""
    if outcome.timed_out:
        return "timed out" if timeout is None else "timed out after %g s" % timeout
    if outcome.kind == RACE:
        return outcome.detail
    if outcome.kind != ERROR:
        return outcome.reason
    oom = memory is not None and any(OOM_TEXT.search(l) for l in outcome.lines)
    if oom:
        return "out of memory (limit %s)" % format_memory(memory)
    if outcome.reason == "kernel error":
        return simulator_reason(outcome) or outcome.reason
    return outcome.reason


# ---- where a wrong answer came from -------------------------------------------------------------
# A failing case's RESULT carries "origin" (harness.cpp; CPU simulator only): the first wrong
# element, the write that set it and the writes it was computed from, as data
# ({"index", "got", "expected", "nodes": [{"kind", "array", "index", "space", "block", "thread",
# "site", "barrier", "depth", "reads": [{"node", "value", "site"}], "more_reads"}]}). Node 0 is the
# write of the wrong element; each read names the node that wrote the word it read.

def _who(v) -> str:
    """A block or thread index as the learner writes it: 3, or (3, 1, 0) in a 2D/3D launch."""
    v = list(v or [0, 0, 0])
    return str(v[0]) if v[1:] == [0, 0] else "(%s)" % ", ".join(str(x) for x in v)


def _short(site: str) -> str:
    """file:line without the directories: the chain's first line gives the whole path."""
    return site.rsplit("/", 1)[-1] if site else "?"


def _step(node: dict) -> str:
    b = node.get("barrier") or 0
    return tr("after barrier %d") % b if b else tr("before the first barrier")


def _written(node: dict, site: str, read_as: str = "") -> str:
    """`read_as`: the reader's name for the word; when the writing kernel named it otherwise (one
    launch's `out` is the next launch's `scanned_sums`), the writer's name is given too."""
    name = "%s[%s]" % (node.get("array"), node.get("index"))
    if read_as and name != read_as:
        return tr("written by block %s, thread %s at %s as %s (%s)") % (_who(node.get("block")), _who(node.get("thread")),
                                                                        site, name, _step(node))
    return tr("written by block %s, thread %s at %s (%s)") % (_who(node.get("block")), _who(node.get("thread")),
                                                             site, _step(node))


# How many lines of the chain `check` and `run` print below the writer: enough to follow one path
# down to the input, short enough that the mismatch above stays on the screen.
ORIGIN_MAX_LINES = 8


def origin_lines(result: Optional[dict]) -> List[str]:
    """The chain back from the first wrong element, one line a step, indented by depth; [] without one."""
    origin = (result or {}).get("origin")
    if not isinstance(origin, dict):
        return []
    nodes = origin.get("nodes") or []
    if not nodes or nodes[0].get("kind") != "write":
        return []
    first = nodes[0]
    name = "%s[%s]" % (first.get("array"), origin.get("index"))
    lines = [tr("first wrong element: %s = %s, expected %s") % (name, origin.get("got"), origin.get("expected")),
             "  " + _written(first, first.get("site") or "?")]
    shown = {0}
    budget = [ORIGIN_MAX_LINES]  # chain lines left; the first path is followed down to its end first
    hidden = [0]  # values read that the budget, or the recorded walk, left out

    def reads_of(i: int, depth: int) -> None:
        node = nodes[i]
        pad = "  " * (depth + 1)
        for r in node.get("reads") or []:
            j = r.get("node")
            src = nodes[j] if isinstance(j, int) and 0 <= j < len(nodes) else None
            if src is None or budget[0] <= 0:  # beyond the recorded walk, or beyond what is printed
                hidden[0] += 1
                continue
            budget[0] -= 1
            # The word as the reading kernel names it (older records: as the writer named it).
            read_as = "%s[%s]" % (r.get("array", src["array"]), r.get("index", src["index"]))
            what = tr("%s = %s, read at %s") % (read_as, r.get("value"), _short(r.get("site", "")))
            kind = src.get("kind")
            if kind == "input":
                lines.append(pad + what + ": " + tr("input (copied from the host)"))
            elif kind == "memset":
                lines.append(pad + what + ": " + tr("set by cudaMemset"))
            elif kind != "write":
                lines.append(pad + what + ": " + tr("no kernel wrote it during the run"))
            elif j in shown:
                lines.append(pad + what + ", " + tr("the same write as above"))
            else:
                shown.add(j)
                lines.append(pad + what + ", " + _written(src, _short(src.get("site", "")), read_as))
                reads_of(j, depth + 1)
        hidden[0] += node.get("more_reads") or 0

    if first.get("reads"):
        lines.append("  " + tr("computed from:"))
        reads_of(0, 1)
        if hidden[0]:
            lines.append("  " + tr("(and %d more values it was computed from: `trace --html` draws every step)") % hidden[0])
    if origin.get("truncated"):
        lines.append("  " + tr("(the run wrote too much to record every step)"))
    return lines


ORIGIN_HINT = ("Follow the chain from the wrong element back to the input: at the first value you did not "
               "expect, check the index arithmetic of that read and the step (barrier) it ran in.")
