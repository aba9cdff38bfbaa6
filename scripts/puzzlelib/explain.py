"""The learner-facing reason of an outcome, from the simulator's diagnosis.

A driver that the simulator stops with an error puts the simulator's diagnosis into its RESULT
line (`"diagnosis": {"kind": ..., "sites": [...], "block": ..., "threads": [...], "detail": ...,
"message": ..., "interleaved": ...}`, docs/architecture.md); under `grade` the checker's RESULT
carries it. REASONS names each kind of harness/sim/src/diagnosis.h (tests/python/test_explain.py
keeps the two in step), so rewording a simulator message never changes the reason shown.
"""

from __future__ import annotations

import re
from typing import Optional

from .driver import ERROR, RACE, Outcome

# The short reason of each kind; MESSAGE: the kind has none of its own, and the reason is
# "kernel error: " and the start of the simulator's message. A race reason replaces the verdict's
# generic one ("race: result depends on thread order") when the run ended in a race.
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
    "cuda_barrier_misuse": MESSAGE,
    "stack_overflow": "stack overflow",
    "null_dereference": "crash: null pointer dereference",
    "use_after_free": "crash: use after free",
    "out_of_bounds": "out-of-bounds access",
    "crash_host": "crash in host code",
    "crash_device": "crash: invalid memory access",
    "arithmetic": "crash: arithmetic error (division by zero?)",
    "out_of_memory": "out of memory",
    "shared_arena_full": MESSAGE,
    "shared_memory_limit": MESSAGE,
    "bad_pointer_argument": MESSAGE,
    "exception": MESSAGE,
    "device_code_from_host": "device code called from host code",
    # The simulator's run-time form of nvcc's error, for kernels that call exit, fopen, system, ...
    "host_call": "device code calls the host function %(detail)s",
    # The harness forbids it while a case runs: the answer must come from the kernels.
    "host_copy_in_launcher": "the launcher copied device memory to the host (%(detail)s)",
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

# The harness reports a failed CUDA call as "error: <what> failed at ..." (harness/src/harness.cpp);
# that text is the harness's own, from a process that has no simulator diagnosis to give.
HARNESS_ERROR = re.compile(r"^\s*error: (.*?)(?: failed at | a kernel launch or a kernel failed)")
# What the C++ runtime and the OS print when the address-space limit of `grade` is hit: neither
# is the simulator, so no diagnosis names it.
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
    reason = REASONS[kind]
    if reason is MESSAGE:
        return "kernel error: " + shorten(str(d.get("message") or kind), 60)
    return reason % {"detail": d.get("detail") or "?"}


def race_reason(outcome: Outcome) -> str:
    """The reason of a race verdict, from the simulator's diagnosis."""
    d = outcome.diagnosis
    return diagnosis_reason(d) if d is not None and d["kind"].startswith("race_") else RACE_OTHER


def simulator_reason(outcome: Outcome) -> Optional[str]:
    """A short name for what stopped the run: the simulator's diagnosis, else the harness's error."""
    reason = diagnosis_reason(outcome.diagnosis)
    if reason is not None:
        return reason
    for line in outcome.lines:
        if "a kernel launch or a kernel failed" in line:
            return "kernel launch failed"
        m = HARNESS_ERROR.match(line)
        if m:
            return "CUDA call failed: " + shorten(m.group(1), 40)
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
