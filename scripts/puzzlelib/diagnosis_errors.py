"""The reports of a block that cannot go on, from their records' facts: deadlock, barrier
divergence, the runaways (a thread, a block, a barrier passed without end, a wait for what no block
writes), warp and cuda::barrier misuse, the shared-memory limits and a kernel argument that is not
device memory. diagnosis_crash.py has the crashes, host calls and copies, exceptions and the
simulator's own lack of memory.

The facts are set where the simulator raises each kind (harness/sim/src/scheduler.cpp, warps.cpp,
cuda_barrier.cpp, report.cpp, shared_memory.cpp, launch.cpp): `kernel` and `launch_site`, the
launch's `grid_dim` and `block_dim`, and each situation's own (`case`, the threads that wait and
where, counts, limits). Thread lists are ranges of linear indices, `[[0, 3], [8, 8]]`. The English
reads like the simulator's own message (tests/planted/*.plant match its words)."""

from __future__ import annotations

from typing import List, Optional

from .diagnosis import advice, advice_text, facts, kernel_words, render, renderer, who
from .messages import tr

# ---- words the reports share ----------------------------------------------------------------------


def at(v, dim=None) -> str:
    """An index as the simulator writes it: 5 in a 1-D launch (dim = the launch's shape), (5, 1, 0)
    otherwise; without the shape, as diagnosis.who does."""
    v = list(v or [0, 0, 0])
    if isinstance(dim, list) and len(dim) == 3:
        return str(v[0]) if dim[1:] == [1, 1] else "(%s)" % ", ".join(str(x) for x in v)
    return who(v)


def block_of(d: dict) -> str:
    return at(d.get("block"), facts(d).get("grid_dim"))


def thread_of(d: dict) -> str:
    threads = d.get("threads") or []
    return at(threads[0] if threads else None, facts(d).get("block_dim"))


def site_of(d: dict) -> str:
    sites = d.get("sites") or []
    return sites[0] if sites else "?"


def kernel_of(d: dict) -> str:
    return kernel_words(facts(d))


def ranges_text(r) -> str:
    """[[0, 3], [8, 8]] -> "0-3, 8", as the simulator's ranges()."""
    return ", ".join(str(lo) if lo == hi else "%d-%d" % (lo, hi) for lo, hi in (r or []))


def count(r) -> int:
    return sum(hi - lo + 1 for lo, hi in (r or []))


def mask_text(m) -> str:
    return "0x%08x" % int(m or 0)


def plural(n: int, one: str, many: str) -> str:
    """tr() of `one` when n is 1, else of `many`: the English sentence differs, the Korean may not."""
    return tr(one) if n == 1 else tr(many)


def postscript(d: dict) -> List[str]:
    """What the launch adds to any report of a kernel error (launch.cpp): the thread schedule that
    found it, when not the first, and the memory checker's own report of the same run."""
    f = facts(d)
    lines = []
    if f.get("found_in_schedule"):
        lines.append("  " + tr("(found while running the '{schedule}' thread schedule)").format(
            schedule=f["found_in_schedule"]))
    also = f.get("also")
    if isinstance(also, dict) and also.get("kind"):
        also.setdefault("facts", {})
        lines.append("  " + tr("The memory checker also found:"))
        lines += ["    " + l for l in render(also) or [also["kind"]]]
    return lines


def with_advice(d: dict, lines: List[str]) -> List[str]:
    """The report's lines, the chosen advice (one indented line per line of its words) and the postscript."""
    words = advice_text(d)
    if words:
        lines += ["  " + l for l in words.split("\n")]
    return lines + postscript(d)


def waiting_lines(groups, mask: bool = False) -> List[str]:
    """A line per group of threads that wait at the same call: "threads 0-3 wait in __syncthreads() at f:12"."""
    lines = []
    for g in groups or []:
        n = count(g.get("threads"))
        values = {"threads": ranges_text(g.get("threads")), "call": g.get("call", "?"), "site": g.get("site", "?")}
        if mask:
            values["mask"] = mask_text(g.get("mask"))
            line = plural(n, "thread {threads} waits in {call} (mask {mask}) at {site}",
                          "threads {threads} wait in {call} (mask {mask}) at {site}")
        else:
            line = plural(n, "thread {threads} waits in {call} at {site}", "threads {threads} wait in {call} at {site}")
        lines.append("    " + line.format(**values))
    return lines


def exited_lines(r) -> List[str]:
    if not r:
        return []
    return ["    " + plural(count(r), "thread {threads} has returned", "threads {threads} have returned").format(
        threads=ranges_text(r))]


def case(d: dict) -> Optional[str]:
    return facts(d).get("case")


# ---- a block that cannot go on: deadlock and barrier divergence -------------------------------------


@renderer("barrier_divergence", "deadlock")
def render_stuck_block(d: dict) -> List[str]:
    f = facts(d)
    kernel, block = kernel_of(d), block_of(d)
    c = case(d)
    if c == "returned":
        lines = [tr("barrier divergence in {kernel}, block {block}: some threads returned while the others went on to "
                    "pass the barrier at {site}.").format(kernel=kernel, block=block, site=site_of(d))]
        reached = f.get("reached")
        lines.append("    " + plural(count(reached),
                                     "thread {threads} reached the barrier at {site} (barrier number {number} of the block)",
                                     "threads {threads} reached the barrier at {site} (barrier number {number} of the block)")
                     .format(threads=ranges_text(reached), site=site_of(d), number=f.get("barrier_number", "?")))
        for g in f.get("returned") or []:
            n, b = count(g.get("threads")), int(g.get("barriers") or 0)
            if b == 1:
                line = plural(n, "thread {threads} returned after passing 1 barrier",
                              "threads {threads} returned after passing 1 barrier")
            else:
                line = plural(n, "thread {threads} returned after passing {barriers} barriers",
                              "threads {threads} returned after passing {barriers} barriers")
            text = line.format(threads=ranges_text(g.get("threads")), barriers=b)
            if g.get("last_access"):
                text += tr(" (last memory access at {site})").format(site=g["last_access"])
            lines.append("    " + text)
        return with_advice(d, lines)
    if c == "different_barriers":
        lines = [tr("barrier divergence in {kernel}, block {block}: threads wait at different barriers.").format(
            kernel=kernel, block=block)]
        lines += waiting_lines(f.get("at_barrier")) + exited_lines(f.get("exited"))
        return with_advice(d, lines)
    if c == "warp":
        if d.get("kind") == "barrier_divergence":
            headline = tr("barrier divergence in {kernel}: block {block} cannot make progress: lanes wait in a warp *_sync "
                          "call for lanes that never arrive.")
        else:
            headline = tr("deadlock in {kernel}: block {block} cannot make progress: lanes wait in a warp *_sync call for "
                          "lanes that never arrive.")
        lines = [headline.format(kernel=kernel, block=block)]
        lines += waiting_lines(f.get("waiting"), mask=True) + waiting_lines(f.get("at_barrier")) + exited_lines(f.get("exited"))
        return with_advice(d, lines)
    if c == "cuda_barrier":
        lines = [tr("deadlock in {kernel}, block {block}: threads wait on a cuda::barrier phase that can never complete.")
                 .format(kernel=kernel, block=block)]
        lines += waiting_lines(f.get("waiting")) + waiting_lines(f.get("at_barrier")) + exited_lines(f.get("exited"))
        return with_advice(d, lines)
    # A record without its facts (an older simulator): the kind and the block.
    if d.get("kind") == "barrier_divergence":
        headline = tr("barrier divergence in {kernel}, block {block}.")
    else:
        headline = tr("deadlock in {kernel}, block {block}.")
    return [headline.format(kernel=kernel, block=block)] + postscript(d)


@advice("divergence_returned_early", ["barrier_divergence"], when=lambda d: case(d) == "returned")
def _returned_early(d: dict) -> str:
    return tr("Every thread of a block must reach every __syncthreads() the others reach: a thread that returns early "
              "(e.g. `if (i >= n) return;`) or skips a barrier inside an if is undefined behaviour in CUDA. Keep the "
              "threads alive and guard only their loads and stores.")


@advice("divergence_different_barriers", ["barrier_divergence"], when=lambda d: case(d) == "different_barriers")
def _different_barriers(d: dict) -> str:
    return tr("Every thread of a block must reach the same __syncthreads() call. Move the barrier out of the if/else, "
              "or make the condition the same for the whole block.")


WARP_NEVER_ARRIVES = ("Every non-exited lane named in a mask must reach the same *_sync call. A lane that took the other "
                      "side of an if, or waits at __syncthreads(), never arrives.")


@advice("warp_mask_from_activemask", ["barrier_divergence", "deadlock"],
        when=lambda d: case(d) == "warp" and isinstance(facts(d).get("activemask"), dict))
def _mask_from_activemask(d: dict) -> str:
    am = facts(d)["activemask"]
    return tr("The mask {mask} of thread {thread} came from __activemask() at {site}, which returns only the lanes that "
              "reached that call together: in divergent code, the lanes of the other branch are not in it. Use a mask "
              "the whole warp agrees on, such as 0xffffffff or __ballot_sync(0xffffffff, cond) taken before the "
              "branch.").format(mask=mask_text(am.get("mask")), thread=am.get("thread", "?"), site=am.get("site", "?")) \
        + "\n" + tr(WARP_NEVER_ARRIVES)


@advice("warp_lanes_never_arrive", ["barrier_divergence", "deadlock"], when=lambda d: case(d) == "warp")
def _lanes_never_arrive(d: dict) -> str:
    return tr(WARP_NEVER_ARRIVES)


@advice("cuda_barrier_missing_arrivals", ["deadlock"],
        when=lambda d: case(d) == "cuda_barrier" and isinstance(facts(d).get("cbar"), dict))
def _missing_arrivals(d: dict) -> str:
    b = facts(d)["cbar"]
    pending = int(b.get("pending") or 0)
    return plural(pending,
                  "The barrier (initialised at {site} for {expected} arrivals) still misses 1 arrival in phase {phase}: "
                  "every thread it counts must call arrive() (or arrive_and_wait()) once per phase.",
                  "The barrier (initialised at {site} for {expected} arrivals) still misses {pending} arrivals in phase "
                  "{phase}: every thread it counts must call arrive() (or arrive_and_wait()) once per phase.").format(
        site=b.get("init_site", "?"), expected=b.get("expected", "?"), pending=pending, phase=b.get("phase", "?"))


# ---- runaways -----------------------------------------------------------------------------------------


@renderer("runaway_barrier")
def render_runaway_barrier(d: dict) -> List[str]:
    f = facts(d)
    lines = [tr("runaway block in {kernel}: block {block} passed the barrier at {site} {passes} times: a loop around it "
                "never ends (its condition never changes, e.g. a stride multiplied by 1 or an index that is not "
                "incremented).").format(kernel=kernel_of(d), block=block_of(d), site=site_of(d),
                                        passes=f.get("passes", "?")),
             "  " + tr("CUDASIM_MAX_BARRIERS sets the limit.")]
    return lines + postscript(d)


@renderer("runaway_thread")
def render_runaway_thread(d: dict) -> List[str]:
    f = facts(d)
    values = {"kernel": kernel_of(d), "block": block_of(d), "thread": thread_of(d), "seconds": f.get("seconds", "?"),
              "site": site_of(d)}
    where = f.get("where")
    if where == "loop":
        headline = tr("runaway thread in {kernel}: block {block}, thread {thread} has run for {seconds} s without reaching "
                      "a barrier or returning, looping at {site}.")
    elif where == "last_access":
        headline = tr("runaway thread in {kernel}: block {block}, thread {thread} has run for {seconds} s without reaching "
                      "a barrier or returning; its last memory access was at {site}.")
    else:
        headline = tr("runaway thread in {kernel}: block {block}, thread {thread} has run for {seconds} s without reaching "
                      "a barrier or returning.")
    return with_advice(d, [headline.format(**values)])


HAND_OVER = ("Threads of a block hand values over at a __syncthreads(), not in a loop: a loop may read a plain variable "
             "once, keep it in a register and wait for ever. (CUDASIM_STALL_SECONDS sets the limit.)")


@advice("runaway_loop_at_line", ["runaway_thread"], when=lambda d: facts(d).get("where") == "loop")
def _loop_at_line(d: dict) -> str:
    return tr("Does that loop have a condition that never changes (e.g. a stride that stays 0, or an index that is never "
              "incremented), or does it wait for a value that another thread can only write later?") + " " + tr(HAND_OVER)


@advice("runaway_loop_not_located", ["runaway_thread"], when=lambda d: facts(d).get("where") != "loop")
def _loop_not_located(d: dict) -> str:
    return tr("Is there a loop whose condition never changes (e.g. a stride that stays 0, or an index that is never "
              "incremented), or a spin-wait on a value that another thread can only write later?") + " " + tr(HAND_OVER)


def _watchdog_headline(d: dict) -> str:
    """runaway_block and endless_wait found by the watchdog: how long the block ran, the other
    blocks, and the barrier its threads passed most often."""
    f = facts(d)
    state = f.get("state")
    if state == "alone":
        s = tr(", the last block still running (of the launch's other {others} blocks, {finished} finished and "
               "{not_started} not started)").format(others=int(f.get("blocks") or 1) - 1, finished=f.get("finished", "?"),
                                                    not_started=f.get("not_started", "?"))
    elif state == "stuck":
        others = f.get("others")
        s = plural(count(others), ", like every other block still running (block {others})",
                   ", like every other block still running (blocks {others})").format(others=ranges_text(others))
    else:
        s = ""
    barrier = ""
    if d.get("sites"):
        passes = int(f.get("passes") or 0)
        barrier = plural(passes, "; its threads passed the barrier at {site} once",
                         "; its threads passed the barrier at {site} {passes} times").format(site=site_of(d), passes=passes)
    return tr("runaway block in {kernel}: block {block} has run for {seconds} s{state}{barrier}.").format(
        kernel=kernel_of(d), block=block_of(d), seconds=f.get("seconds", "?"), state=s, barrier=barrier)


@renderer("runaway_block")
def render_runaway_block(d: dict) -> List[str]:
    return [_watchdog_headline(d),
            "  " + tr("A loop around a barrier or a warp *_sync call that never ends? (CUDASIM_BLOCK_SECONDS sets the "
                      "limit.)")] + postscript(d)


def _poll_state(f: dict) -> str:
    """Where the waiting block stands among the others (scheduler.cpp, spin_limit)."""
    state = f.get("state")
    if state == "only":
        return tr("the launch's only block")
    finished = int(f.get("finished") or 0)
    values = {"position": f.get("position", "?"), "blocks": f.get("blocks", "?"), "schedule": f.get("schedule", "?"),
              "finished": finished, "not_started": f.get("not_started", "?"), "at_once": f.get("at_once", "?"),
              "others": ranges_text(f.get("beside"))}
    if state == "order":
        return plural(finished,
                      "block {position} of {blocks} to start in the '{schedule}' order, with 1 block before it finished "
                      "and {not_started} not started",
                      "block {position} of {blocks} to start in the '{schedule}' order, with {finished} blocks before it "
                      "finished and {not_started} not started").format(**values)
    n = count(f.get("beside"))
    if n == 0:
        beside = tr("running side by side with no other block")
    else:
        beside = plural(n, "running side by side with block {others}", "running side by side with blocks {others}").format(**values)
    return beside + plural(finished,
                           " (the '{schedule}' order runs up to {at_once} blocks at once, taking turns at barriers and polls, "
                           "as blocks share a GPU), with 1 block finished and {not_started} not started; every running block "
                           "waits too",
                           " (the '{schedule}' order runs up to {at_once} blocks at once, taking turns at barriers and polls, "
                           "as blocks share a GPU), with {finished} blocks finished and {not_started} not started; every "
                           "running block waits too").format(**values)


@renderer("endless_wait")
def render_endless_wait(d: dict) -> List[str]:
    f = facts(d)
    if f.get("case") != "polls":
        return with_advice(d, [_watchdog_headline(d)])
    read_at = tr(" at {site}").format(site=site_of(d)) if d.get("sites") else ""
    return with_advice(d, [tr(
        "runaway block in {kernel}: block {block}, thread {thread} waits for ever: it read the same global memory{at} "
        "{polls} times in a row without writing or reaching a barrier. Its block is {state}, so no block that is running "
        "can change what it reads.").format(kernel=kernel_of(d), block=block_of(d), thread=thread_of(d), at=read_at,
                                            polls=f.get("polls", "?"), state=_poll_state(f))])


@advice("endless_wait_on_later_block", ["endless_wait"], when=lambda d: facts(d).get("case") == "polls")
def _wait_on_later_block(d: dict) -> str:
    return tr("A spin-wait on a flag or counter that a later block (or no block) writes? On a GPU blocks start in no "
              "guaranteed order and a block keeps its place until it returns, so a block that waits for one that has not "
              "started can wait for ever. Wait only for blocks that started before this one (take the tile from an "
              "atomicAdd ticket, not from blockIdx), and check that every block writes what the others wait for, the "
              "first one too.")


@advice("endless_wait_no_writer", ["endless_wait"], when=lambda d: facts(d).get("case") == "watchdog")
def _wait_no_writer(d: dict) -> str:
    return tr("No running block will change what it waits for. A spin-wait on a flag or counter that another block was to "
              "write? Check that every block writes what the others wait for, the first one too, or find the loop that "
              "never ends. (CUDASIM_BLOCK_SECONDS sets the limit.)")


# ---- warp collectives -----------------------------------------------------------------------------------

UNDEFINED_LANE = {
    "returned": "warp misuse at {site}: {kernel}, block {block}: lane {lane} of warp {warp} reads lane {source} through "
                "{call}, but lane {source} has already returned from the kernel; it would get garbage.",
    "not_in_mask": "warp misuse at {site}: {kernel}, block {block}: lane {lane} of warp {warp} reads lane {source} through "
                   "{call}, but lane {source} is not in the mask; it would get garbage.",
    "not_in_mask_returned": "warp misuse at {site}: {kernel}, block {block}: lane {lane} of warp {warp} reads lane {source} "
                            "through {call}, but lane {source} is not in the mask (it has returned from the kernel); it "
                            "would get garbage.",
    "absent": "warp misuse at {site}: {kernel}, block {block}: lane {lane} of warp {warp} reads lane {source} through "
              "{call}, but lane {source} does not exist (the block has fewer threads than the warp has lanes); it would "
              "get garbage.",
}


@renderer("warp_lane_returned", "warp_misuse", "warp_mask_without_self")
def render_warp(d: dict) -> List[str]:
    f = facts(d)
    values = {"site": site_of(d), "kernel": kernel_of(d), "block": block_of(d), "thread": thread_of(d),
              "lane": f.get("lane", "?"), "call": f.get("call", "?"), "mask": mask_text(f.get("mask"))}
    if d.get("kind") == "warp_mask_without_self":
        return [tr("warp misuse at {site}: block {block}, thread {thread}: lane {lane} calls {call} with mask {mask}, which "
                   "does not include lane {lane} itself.").format(**values),
                "  " + tr("Every lane that calls a *_sync intrinsic must be named in its mask.")] + postscript(d)
    c = case(d)
    if c == "undefined_value":
        values.update(warp=f.get("warp", "?"), source=f.get("source_lane", "?"))
        return [tr(UNDEFINED_LANE.get(f.get("why"), UNDEFINED_LANE["not_in_mask"])).format(**values),
                "  " + tr("Keep every lane whose value is read taking part in the call (no early return before it), give "
                          "absent lanes a neutral value, or read only lanes that exist (e.g. check "
                          "`lane + delta < active lanes`).")] + postscript(d)
    if c == "width":
        return [tr("warp misuse at {site}: block {block}, thread {thread}: width {width} of {call} is not a power of two "
                   "between 1 and 32.").format(width=f.get("width", "?"), **values)] + postscript(d)
    values.update(other_lane=f.get("other_lane", "?"), other_call=f.get("other_call", "?"),
                  other_site=f.get("other_site", "?"), other_mask=mask_text(f.get("other_mask")))
    if c == "mask_mismatch":
        return [tr("warp misuse at {site}: block {block}, thread {thread}: lane {lane} calls {call} with mask {mask} while "
                   "lane {other_lane} of the same warp waits in {other_call} at {other_site} with mask {other_mask}.")
                .format(**values),
                "  " + tr("Lanes that meet in a *_sync call must all pass the same mask.")] + postscript(d)
    if c == "call_mismatch":
        return [tr("warp misuse at {site}: block {block}, thread {thread}: lane {lane} calls {call} while lane {other_lane} "
                   "waits in {other_call} at {other_site} with the same mask {mask}.").format(**values),
                "  " + tr("The lanes of a mask must all call the same intrinsic; the others took a different branch.")] \
            + postscript(d)
    return [tr("warp misuse at {site}: block {block}, thread {thread}.").format(**values)] + postscript(d)


# ---- cuda::barrier -----------------------------------------------------------------------------------------


@renderer("cuda_barrier_misuse")
def render_cuda_barrier(d: dict) -> List[str]:
    f = facts(d)
    values = {"site": site_of(d), "block": block_of(d), "thread": thread_of(d)}
    c = case(d)
    if c == "uninitialised":
        return [tr("cuda::barrier misuse at {site}: block {block}, thread {thread}: {call} on a barrier that was never "
                   "initialised.").format(call=f.get("call", "?"), **values),
                "  " + tr("Call init(&bar, count) once (e.g. from thread 0), then __syncthreads(), before any thread uses "
                          "it.")] + postscript(d)
    if c == "init_count":
        return [tr("cuda::barrier misuse at {site}: block {block}, thread {thread}: init() with an expected count of "
                   "{expected}; a block barrier counts between 1 and 1024 threads.").format(
            expected=f.get("expected", "?"), **values)] + postscript(d)
    if c == "arrive_count":
        pending = int(f.get("pending") or 0)
        return [plural(pending,
                       "cuda::barrier misuse at {site}: block {block}, thread {thread}: arrive({update}) when only 1 "
                       "arrival remains in this phase (the barrier was initialised for {expected} at {init_site}).",
                       "cuda::barrier misuse at {site}: block {block}, thread {thread}: arrive({update}) when only "
                       "{pending} arrivals remain in this phase (the barrier was initialised for {expected} at "
                       "{init_site}).").format(update=f.get("update", "?"), pending=pending,
                                               expected=f.get("expected", "?"), init_site=f.get("init_site", "?"),
                                               **values)] + postscript(d)
    if c == "token":
        return [tr("cuda::barrier misuse at {site}: block {block}, thread {thread}: wait() with a token that arrive() did "
                   "not return.").format(**values)] + postscript(d)
    return [tr("cuda::barrier misuse at {site}: block {block}, thread {thread}.").format(**values)] + postscript(d)


# ---- shared memory and the launch's arguments -----------------------------------------------------------------


@renderer("shared_memory_limit")
def render_shared_limit(d: dict) -> List[str]:
    f = facts(d)
    limit = int(f.get("limit") or 49152)
    return [tr("{kernel}: the block needs more than {limit} bytes ({kib} KiB) of shared memory ({declared} bytes of "
               "__shared__ variables so far, {dynamic} dynamic). The last one: {name} ({bytes} bytes) at {site}.").format(
        kernel=kernel_of(d), limit=limit, kib=limit // 1024, declared=f.get("declared", "?"), dynamic=f.get("dynamic", "?"),
        name=f.get("name", "?"), bytes=f.get("bytes", "?"), site=site_of(d))] + postscript(d)


@renderer("shared_arena_full")
def render_shared_arena(d: dict) -> List[str]:
    f = facts(d)
    return [tr("{kernel}: {count} __shared__ variables do not fit the simulator's shared-memory arena (each takes at "
               "least 32 bytes there). The last one: {name} at {site}.").format(
        kernel=kernel_of(d), count=f.get("count", "?"), name=f.get("name", "?"), site=site_of(d))] + postscript(d)


@renderer("bad_pointer_argument")
def render_bad_pointer(d: dict) -> List[str]:
    f = facts(d)
    return [tr("{kernel}: argument {argument} of the kernel is {address}, which is not device memory (a host address?).")
            .format(kernel=kernel_of(d), argument=f.get("argument", "?"), address=f.get("address", "?")),
            "  " + tr("A kernel can only dereference memory from cudaMalloc: copy host data there with cudaMemcpy and pass "
                      "the device pointer.")] + postscript(d)
