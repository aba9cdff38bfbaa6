"""The memory checker's diagnoses, worded from their facts: races (race_shared, race_device,
race_atomic_scope, race_mixed_access, race_read_only), the schedule comparison (race_schedule),
uninitialized reads (uninit_shared, uninit_device), out-of-bounds accesses and uses after free.

The facts come from harness/sim/src/findings.cpp (check_launch_end, out_of_bounds), hazard_check.h
and launch.cpp (race_schedule). The English reads as the simulator's own message (the planted bugs'
`also:` patterns and the README samples match it); the advice is chosen by the rules below, the
first that holds for the record's kind.

The facts, by kind (every record: `kernel`, `launch_site`, `grid_dim`, `block_dim`, `block_threads`):
- races: `space` (shared, device; `dynamic_shared`), `hazards` (the count), `pairs` (one per pair of
  lines: `hazard`, `first`/`second` read or write, `first_how`/`second_how` atomic, block_atomic,
  thread_atomic, volatile, ldg, restrict or "", `first_site`/`second_site`, `count`, `restricted`),
  and of the first pair: `hazard`, `array`, `index` (`bytes_index`), `access_first`/`access_second`,
  `atomic_first`/`atomic_second`, `block_first`, `class` (plain, scope, mixed_size,
  plain_vs_atomic, read_only), `cross_block`, `same_warp`, `cbar`, `accumulator`, `read_at_line`,
  `missing_acquire`, `block_fence_site`, `restricted`, `epoch_first`/`epoch_second`,
  `times_first`/`times_second` (how many elements each thread accessed at its line between the two
  barriers: more than one is several loop steps), `interval_from`/`interval_to` (barrier sites, null
  for the kernel's start and the block's end), and `uninit` (the uninitialized reads' facts) when
  there were some too;
- uninit_shared, uninit_device: `space`, `reads`, `read_sites` (`site`, `count`), `array`, `index`,
  `site`, `block`, `thread`, `interval_from`/`interval_to`;
- race_schedule: `schedule_first`, `schedule_second`, `buffers` (`buffer`, `differ`, `count`,
  `bytes_index`, `values`: `index`, `first`, `second`);
- out_of_bounds: `access`, `space` (`dynamic_shared`, `dynamic_bytes`), `site`, `array`, `index`,
  `bytes_index`, `size` (elements, or bytes with `bytes_index`); device memory: `buffer`, `distance`
  and `distance_side` (before, after) beyond the buffer's pages, `nearest`; `no_buffer` and
  `address`;
- use_after_free: `access`, `space`, `site`, `index` (`bytes_index`), `buffer`, `free_site`;
- a buffer (`buffer`, memory.cpp's alloc_json): `id`, `bytes`, `api`, `site`, `elements` and `type`, or
  for a __device__ variable `id` 0, `name`, `bytes`, `site`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import List, Optional

from .diagnosis import advice, advice_text, facts, kernel_words, renderer, who
from .messages import tr

RACE_KINDS = ("race_shared", "race_device", "race_atomic_scope", "race_mixed_access", "race_read_only")
PLAIN_RACE_KINDS = ("race_shared", "race_device")


# ---- words ----------------------------------------------------------------------------------------

def dim(v, extent=None) -> str:
    """A block or thread index as the simulator writes it: 3 when the launch's extent (grid_dim or
    block_dim) is 1D, (3, 1, 0) otherwise; without the extent, as diagnosis.who does."""
    v = list(v or [0, 0, 0])
    if not extent:
        return who(v)
    if list(extent)[1:] == [1, 1]:
        return str(v[0])
    return "(%s)" % ", ".join(str(x) for x in v)


def space_words(f: dict) -> str:
    # The course notes' terms, the same in every language.
    return "device memory" if f.get("space") == "device" else "shared memory"


def element(f: dict, shared_prefix: bool = True) -> str:
    """`__shared__ sdata[3]`, `partials[3]`, or `byte 12 of partials` (an untyped buffer)."""
    if f.get("bytes_index"):
        text = tr("byte {index} of {array}").format(index=f.get("index", "?"), array=f.get("array", "?"))
    else:
        text = "%s[%s]" % (f.get("array", "?"), f.get("index", "?"))
    if shared_prefix and f.get("space") != "device":
        return "__shared__ " + text
    return text


def interval(f: dict) -> str:
    start, end = f.get("interval_from"), f.get("interval_to")
    if start and end:
        return tr("between the barrier at {start} and the barrier at {end}").format(start=start, end=end)
    if start:
        return tr("between the barrier at {start} and the block's end").format(start=start)
    if end:
        return tr("between the kernel's start and the barrier at {end}").format(end=end)
    return tr("between the kernel's start and the block's end")


def count_words(n: int, one: str, many: str) -> str:
    """`one` or `many` (templates already through tr) filled with n."""
    return (one if n == 1 else many).format(n=n)


def indent(text: str, prefix: str = "  ") -> List[str]:
    return [prefix + line for line in text.split("\n")]


# How each access of a pair was made (findings.cpp how_fact), and what it did.
def access_words(how: str, access: str, site: str, restricted: str = "") -> str:
    write = access == "write"
    if how == "atomic":
        t = tr("atomic write at {site}") if write else tr("atomic read at {site}")
    elif how == "block_atomic":
        t = tr("block-scope atomic write at {site}") if write else tr("block-scope atomic read at {site}")
    elif how == "thread_atomic":
        t = tr("thread-scope atomic write at {site}") if write else tr("thread-scope atomic read at {site}")
    elif how == "volatile":
        t = tr("volatile write at {site}") if write else tr("volatile read at {site}")
    elif how == "restrict":
        return tr("read-only-path (const __restrict__ {param}) read at {site}").format(param=restricted, site=site)
    elif how == "ldg":
        t = tr("read-only-path (__ldg) read at {site}")
    else:
        t = tr("write at {site}") if write else tr("read at {site}")
    return t.format(site=site)


def first_clause(f: dict, d: dict) -> str:
    """`block 0 thread 0 read __shared__ sdata[1] at p12.cu:86` (the first access)."""
    blk = dim(f.get("block_first", d.get("block")), f.get("grid_dim"))
    threads = d.get("threads") or [[0, 0, 0]]
    thr = dim(threads[0], f.get("block_dim"))
    sites = d.get("sites") or ["?"]
    values = dict(block=blk, thread=thr, element=element(f), site=sites[0])
    if f.get("access_first") == "write":
        if f.get("atomic_first"):
            return tr("block {block} thread {thread} atomically updated {element} at {site}").format(**values)
        return tr("block {block} thread {thread} wrote {element} at {site}").format(**values)
    if f.get("atomic_first"):
        return tr("block {block} thread {thread} atomically read {element} at {site}").format(**values)
    return tr("block {block} thread {thread} read {element} at {site}").format(**values)


def second_clause(f: dict, d: dict) -> str:
    """`block 0 thread 1 wrote it at p12.cu:86` (the second access)."""
    blk = dim(d.get("block"), f.get("grid_dim"))
    threads = d.get("threads") or [[0, 0, 0]]
    thr = dim(threads[-1], f.get("block_dim"))
    sites = d.get("sites") or ["?"]
    values = dict(block=blk, thread=thr, site=sites[-1])
    if f.get("access_second") == "write":
        if f.get("atomic_second"):
            return tr("block {block} thread {thread} atomically updated it at {site}").format(**values)
        return tr("block {block} thread {thread} wrote it at {site}").format(**values)
    if f.get("atomic_second"):
        return tr("block {block} thread {thread} atomically read it at {site}").format(**values)
    return tr("block {block} thread {thread} read it at {site}").format(**values)


# ---- races ----------------------------------------------------------------------------------------

@renderer(*RACE_KINDS)
def render_race(d: dict) -> List[str]:
    f = facts(d)
    n = int(f.get("hazards", 1) or 1)
    head = (tr("race in {kernel}: {n} hazard on {space}.") if n == 1 else tr("race in {kernel}: {n} hazards on {space}."))
    lines = [head.format(kernel=kernel_words(f), n=n, space=space_words(f))]
    for p in f.get("pairs", []):
        first = access_words(p.get("first_how", ""), p.get("first", "read"), p.get("first_site", "?"), p.get("restricted", ""))
        second = access_words(p.get("second_how", ""), p.get("second", "write"), p.get("second_site", "?"),
                              p.get("restricted", ""))
        count = count_words(int(p.get("count", 1)), tr("[{n} hazard]"), tr("[{n} hazards]"))
        lines.append("  " + tr("{hazard} between {first} and {second} {count}").format(
            hazard=p.get("hazard", "?"), first=first, second=second, count=count))
    lines.append("  " + tr("first: {first}, then {second},").format(first=first_clause(f, d), second=second_clause(f, d)))
    cls = f.get("class")
    if cls == "read_only":
        tail = tr("in another block of the same launch (the read-only path is not coherent with it).")
    elif cls == "scope":
        tail = tr("in another block, which a block-scope atomic does not synchronise with.")
    elif f.get("cross_block"):
        tail = tr("in another block, with no release and acquire between them.")
    else:
        tail = tr("with no barrier between them ({interval}).").format(interval=interval(f))
    lines.append("         " + tail)
    words = advice_text(d)
    if words:
        lines += indent(words)
    if isinstance(f.get("uninit"), dict):
        lines += uninit_lines(f["uninit"], also=True)
    return lines


def _plain(d: dict) -> bool:
    return d.get("kind") in PLAIN_RACE_KINDS


def _same_line(d: dict) -> bool:
    sites = d.get("sites") or []
    return len(sites) == 2 and sites[0] == sites[1]


@advice("race_block_scope_atomic", ["race_atomic_scope"], when=lambda d: True)
def _(d):
    return tr("atomicAdd_block and the other _block atomics (and cuda::thread_scope_block) are atomic only among the "
              "threads of one block: threads of another block that update the same element race with them. Use atomicAdd "
              "(or the atomic without _block, cuda::thread_scope_device) when more than one block updates it.")


@advice("race_mixed_size", ["race_mixed_access"], when=lambda d: facts(d).get("class") == "mixed_size")
def _(d):
    return tr("Two atomic (or volatile) accesses are atomic with respect to each other only when they cover the same "
              "bytes: a wider read of a word written by narrower atomics (a flag half, then a value half) can see one half "
              "without the other. Write and read the whole word with one atomic of the same size (pack the flag and the "
              "value into one 64-bit atomicExch or atomicCAS).")


@advice("race_plain_vs_atomic", ["race_mixed_access"], when=lambda d: True)
def _(d):
    return tr("A plain load of an element that another thread updates with an atomic, with no order between them, is a "
              "data race (PTX memory model): it may see a stale or torn value. Read it with an atomic (atomicAdd(p, 0), "
              "cuda::atomic_ref::load) or a volatile load of the same size, or order the two; a CAS loop that validates "
              "the plain read with atomicCAS is fine.")


@advice("race_restrict_param", ["race_read_only"], when=lambda d: bool(facts(d).get("restricted")))
def _(d):
    return tr("The kernel's parameter {param} is a pointer to const declared __restrict__: that promises nvcc the data "
              "does not change during the launch, so it may load it through the read-only data cache (as __ldg does), "
              "which is not coherent with writes made during the launch, and fences do not make it so. Another block "
              "writes these bytes in this launch: drop __restrict__ (or const) from {param}, or split the work into two "
              "kernel launches.").format(param=facts(d)["restricted"])


@advice("race_ldg", ["race_read_only"], when=lambda d: True)
def _(d):
    return tr("__ldg (like a const __restrict__ pointer) reads through the read-only data cache, which is not coherent "
              "with writes made during the launch, and fences do not make it so: use it only for data no thread writes in "
              "this launch. Use a plain load here (or a volatile load or an atomic), or split the work into two kernel "
              "launches.")


@advice("race_missing_acquire", PLAIN_RACE_KINDS, when=lambda d: bool(facts(d).get("missing_acquire")))
def _(d):
    return tr("The writer published its data with a release (__threadfence(), then the atomic), and the reader's atomic "
              "saw it, but the reader made no acquire. The checker follows the PTX memory model, more strictly than "
              "NVIDIA's threadFenceReduction sample: a release pattern synchronizes only with an acquire pattern on the "
              "reader's side (PTX ISA, Memory Consistency Model: an atomic followed by a fence, or an acquire operation). "
              "Add a __threadfence() after the atomic, in the thread that then reads (before the __syncthreads() that "
              "passes the result to the block).")


@advice("race_block_fence", PLAIN_RACE_KINDS,
        when=lambda d: bool(facts(d).get("cross_block") and facts(d).get("block_fence_site")))
def _(d):
    return tr("The writer's fence at {site} is __threadfence_block(): it orders the thread's writes only for the threads "
              "of its own block, so the atomic after it publishes nothing to another block. Use __threadfence() there "
              "(device scope), and __threadfence() after the reader's atomic that observed it.").format(
                  site=facts(d)["block_fence_site"])


@advice("race_one_writer", PLAIN_RACE_KINDS,
        when=lambda d: bool(facts(d).get("accumulator") and not facts(d).get("read_at_line")))
def _(d):
    return tr("Every thread stores to the same element, so the last store wins, and which one is last depends on the "
              "order. If one value is meant (the block's result), let one thread store it: `if (threadIdx.x == 0) "
              "out[blockIdx.x] = ...;`. If every thread's value counts, give each thread its own element, or combine the "
              "values (atomicAdd, a reduction).")


@advice("race_cross_block_accumulator", PLAIN_RACE_KINDS,
        when=lambda d: bool(facts(d).get("cross_block") and facts(d).get("accumulator")))
def _(d):
    return tr("Many threads update the same element: use atomicAdd (or another atomic) for a shared total, or give each "
              "thread its own element and reduce them.")


@advice("race_cross_block_release", PLAIN_RACE_KINDS, when=lambda d: bool(facts(d).get("cross_block")))
def _(d):
    return tr("Blocks run in no fixed order and see each other's plain writes only through a release and an acquire: the "
              "writer calls __threadfence() before the atomic that announces its data, and the reader calls "
              "__threadfence() after the atomic that observed it. Otherwise split the work into two kernel launches.")


@advice("race_accumulator", PLAIN_RACE_KINDS, when=lambda d: bool(facts(d).get("accumulator")))
def _(d):
    return tr("Many threads update the same element: use atomicAdd (or another atomic), or a reduction tree in which each "
              "thread owns one element per step.")


@advice("race_cuda_barrier_phase", PLAIN_RACE_KINDS, when=lambda d: bool(facts(d).get("cbar")))
def _(d):
    return tr("With cuda::barrier, what a thread does after arrive() belongs to the next phase: write your element before "
              "arrive(), and read the other threads' elements only after wait() returns.")


# In a one-warp block, __syncthreads() is the lesson.
@advice("race_same_warp", PLAIN_RACE_KINDS,
        when=lambda d: bool(facts(d).get("same_warp")) and int(facts(d).get("block_threads", 0)) > 32)
def _(d):
    return tr("The lanes of a warp do not run in lockstep (since Volta): put __syncwarp() between the write and the read, "
              "or exchange values with __shfl_down_sync().")


def _times(d: dict):
    f = facts(d)
    return int(f.get("times_first", 0) or 0), int(f.get("times_second", 0) or 0)


def _write_after_read_at_one_line(d: dict) -> bool:
    return facts(d).get("hazard") == "write-after-read" and _same_line(d)


# The first schedule runs the threads in order, each to its next barrier. A read, then a write by a
# later thread, at one line (`sdata[tid] += sdata[tid + s]`): either the loop has no barrier between
# its steps (a thread ran the line several times between the same two barriers, reading an element
# before its owner had updated it for an earlier step), or both accesses were in one step and two
# active threads' elements overlap (`tid % 2 * s` for `tid % (2 * s)`). The checker counts, from its
# shadow, how many elements each thread accessed at its line in the interval (times_first/_second);
# a record without the counts (an older simulator) keeps the loop-step advice.
def _different_steps(d: dict) -> bool:
    a, b = _times(d)
    return _write_after_read_at_one_line(d) and (a == 0 or a > 1 or b > 1)


@advice("race_loop_step", PLAIN_RACE_KINDS, when=_different_steps)
def _(d):
    f = facts(d)
    a, b = _times(d)
    threads = d.get("threads") or [[0, 0, 0], [0, 0, 0]]
    ahead = threads[0] if a >= b else threads[-1]
    times = max(a, b)
    values = dict(ahead=dim(ahead, f.get("block_dim")), times=times, reader=dim(threads[0], f.get("block_dim")),
                  element=element(f, shared_prefix=False), owner=dim(threads[-1], f.get("block_dim")))
    if times > 1 and a >= b:
        return tr("The threads were in different steps of the loop: thread {reader} ran this line {times} times with no "
                  "barrier in between, and read {element} before thread {owner} had updated it for an earlier step. End "
                  "every step with __syncthreads() inside the loop, so that no thread starts the next step before all have "
                  "finished this one.").format(**values)
    if times > 1:
        return tr("The threads were in different steps of the loop: thread {ahead} ran this line {times} times with no "
                  "barrier in between, so thread {reader} read {element} and thread {owner} wrote it in different steps. "
                  "End every step with __syncthreads() inside the loop, so that no thread starts the next step before all "
                  "have finished this one.").format(**values)
    return tr("The threads were in different steps of the loop: one read an element before its owner had updated it for an "
              "earlier step. End every step with __syncthreads() inside the loop, so that no thread starts the next step "
              "before all have finished this one.")


@advice("race_same_step_overlap", PLAIN_RACE_KINDS, when=_write_after_read_at_one_line)
def _(d):
    f = facts(d)
    threads = d.get("threads") or [[0, 0, 0], [0, 0, 0]]
    if not (f.get("interval_from") and f.get("interval_from") == f.get("interval_to")):
        # Not between two passes of one barrier (a step of a loop around it): the same interval.
        return tr("Both accesses were between the same two barriers: thread {reader} read {element}, and thread {writer}, "
                  "also active there, wrote it. Between two barriers, the elements a thread reads must be ones that no "
                  "other active thread writes: check which threads the condition lets in, and the index "
                  "arithmetic.").format(reader=dim(threads[0], f.get("block_dim")), element=element(f, shared_prefix=False),
                                        writer=dim(threads[-1], f.get("block_dim")))
    return tr("Both accesses were in the same step of the loop (between the same two barriers): thread {reader} read "
              "{element}, and thread {writer}, also active in that step, wrote it. In one step, the elements a thread "
              "reads must be ones that no active thread writes in that step: check which threads the condition lets in, "
              "and the index arithmetic.").format(
                  reader=dim(threads[0], f.get("block_dim")), element=element(f, shared_prefix=False),
                  writer=dim(threads[-1], f.get("block_dim")))


@advice("race_read_write_split", PLAIN_RACE_KINDS,
        when=lambda d: facts(d).get("hazard") == "write-after-read" or _same_line(d))
def _(d):
    return tr("One step both reads elements that other threads write and writes its own: read into a register, "
              "__syncthreads(), then write, then __syncthreads() again (or write into a second buffer).")


@advice("race_missing_barrier", PLAIN_RACE_KINDS, when=lambda d: True)
def _(d):
    return tr("A thread read an element that another thread writes in the same step: put a __syncthreads() between the "
              "write and the read (read, barrier, write, barrier).")


# ---- uninitialized reads ---------------------------------------------------------------------------

def uninit_lines(f: dict, also: bool = False, d: Optional[dict] = None) -> List[str]:
    n = int(f.get("reads", 1) or 1)
    head = (tr("uninitialized read in {kernel}: {n} read of {space} that nothing wrote.") if n == 1 else
            tr("uninitialized read in {kernel}: {n} reads of {space} that nothing wrote."))
    head = head.format(kernel=kernel_words(f), n=n, space=space_words(f))
    lines = [tr("also: {report}").format(report=head) if also else head]
    for r in f.get("read_sites", []):
        lines.append("  " + tr("read at {site}").format(site=r.get("site", "?")) + " " +
                     count_words(int(r.get("count", 1)), tr("[{n} time]"), tr("[{n} times]")))
    values = dict(block=dim(f.get("block"), f.get("grid_dim")), thread=dim(f.get("thread"), f.get("block_dim")),
                  element=element(f), site=f.get("site", "?"), interval=interval(f))
    if f.get("space") == "device":
        first = tr("first: block {block} thread {thread} read {element} at {site} ({interval}), before any thread or "
                   "cudaMemcpy/cudaMemset wrote it.")
    else:
        first = tr("first: block {block} thread {thread} read {element} at {site} ({interval}), before any thread of the "
                   "block wrote it.")
    lines.append("  " + first.format(**values))
    # Beside a race, the uninitialized reads' own advice: as if they were the record.
    words = advice_text(d if d is not None else
                        {"kind": "uninit_device" if f.get("space") == "device" else "uninit_shared", "facts": f})
    if words:
        lines += indent(words)
    return lines


@renderer("uninit_shared", "uninit_device")
def render_uninit(d: dict) -> List[str]:
    return uninit_lines(facts(d), d=d)


@advice("uninit_device_garbage", ["uninit_device"], when=lambda d: True)
def _(d):
    return tr("cudaMalloc memory holds garbage: write every element before a kernel reads it (cudaMemcpy, "
              "cudaMemset or a kernel), or guard the read with the bounds check.")


@advice("uninit_shared_garbage", ["uninit_shared"], when=lambda d: True)
def _(d):
    return tr("Shared memory starts as garbage in every block: write every element a thread will read (padding "
              "too, with the operation's identity, e.g. 0 for a sum or -FLT_MAX for a max), or guard the read.")


# ---- the schedule comparison -------------------------------------------------------------------

def buffer_words(b: dict) -> str:
    """alloc_str's words, `buffer #2 (8 x int, cudaMalloc at p12.cu:33)`, as the crash family words a
    buffer (diagnosis_crash.buffer_words, the fact alloc_json makes); without that module, in
    English."""
    try:
        from .diagnosis_crash import buffer_words as crash_buffer_words
    except ImportError:
        crash_buffer_words = None
    if crash_buffer_words is not None:
        return crash_buffer_words(b)
    if not isinstance(b, dict):
        return "?"
    if b.get("id") == 0:
        return "__device__ variable %s (%s bytes, declared at %s)" % (b.get("name", "?"), b.get("bytes", "?"), b.get("site", "?"))
    if b.get("type"):
        return "buffer #%s (%s x %s, %s at %s)" % (b.get("id", "?"), b.get("elements", "?"), b["type"],
                                                   b.get("api", "cudaMalloc"), b.get("site", "?"))
    return "buffer #%s (%s bytes, %s at %s)" % (b.get("id", "?"), b.get("bytes", "?"), b.get("api", "cudaMalloc"),
                                                b.get("site", "?"))


@renderer("race_schedule")
def render_schedule(d: dict) -> List[str]:
    f = facts(d)
    first, second = f.get("schedule_first", "forward"), f.get("schedule_second", "?")
    if d.get("interleaved"):
        lines = [tr("race in {kernel}: the result depends on the order in which threads run or blocks interleave (or on "
                    "what uninitialized memory holds: each order fills it differently).").format(kernel=kernel_words(f)),
                 "  " + tr("Running the threads of each barrier interval in '{first}' order and in '{second}' order (which "
                           "also runs up to four blocks side by side, taking turns at barriers and polls, as blocks share "
                           "a GPU) wrote different values:").format(first=first, second=second)]
    else:
        lines = [tr("race in {kernel}: the result depends on the order in which threads run (or on what uninitialized "
                    "memory holds: each order fills it differently).").format(kernel=kernel_words(f)),
                 "  " + tr("Running the threads of each barrier interval in '{first}' order and in '{second}' order wrote "
                           "different values:").format(first=first, second=second)]
    for b in f.get("buffers", []):
        many = tr("{buffer}: {differ} of {count} bytes differ") if b.get("bytes_index") else \
            tr("{buffer}: {differ} of {count} elements differ")
        lines.append("    " + many.format(buffer=buffer_words(b.get("buffer")), differ=b.get("differ", "?"),
                                          count=b.get("count", "?")))
        for v in b.get("values", []):
            at = "byte %s:" % v.get("index") if b.get("bytes_index") else "[%s]" % v.get("index")
            lines.append("      %s %s: %s   %s: %s" % (at, first, v.get("first"), second, v.get("second")))
    words = advice_text(d)
    if words:
        lines += indent(words)
    return lines


def _thread_order_advice() -> List[str]:
    return [tr("Some thread reads memory that another thread writes without a barrier between them (within a block: "
               "separate the read and the write with __syncthreads(), or use a second buffer), or one block reads what "
               "another block writes in the same launch (split the work into two kernel launches)."),
            tr("This includes threads of one warp: since Volta they do not run in lockstep, so the 2007 'volatile last "
               "warp' idiom is a race too; put __syncwarp() between its read and write, or use __shfl_down_sync().")]


@advice("schedule_blocks_interleave", ["race_schedule"], when=lambda d: bool(d.get("interleaved")))
def _(d):
    return "\n".join([
        tr("Between blocks: a block that reads what another block writes during the launch must wait for it (a flag set "
           "after a release, read with an acquire) and use exactly what it waited for. A look-back that adds more tiles "
           "than the nearest inclusive prefix, that gives up after a few polls, or an update computed from an earlier "
           "read and stored with atomicExch changes with how blocks interleave.")] + _thread_order_advice())


@advice("schedule_thread_order", ["race_schedule"], when=lambda d: True)
def _(d):
    return "\n".join(_thread_order_advice())


# ---- out of bounds and use after free ----------------------------------------------------------------

def _where_words(f: dict, d: dict) -> dict:
    threads = d.get("threads") or []
    sites = d.get("sites") or []
    return dict(kernel=kernel_words(f), block=dim(d.get("block"), f.get("grid_dim")),
                thread=dim(threads[0] if threads else None, f.get("block_dim")), site=f.get("site") or (sites[0] if sites else "?"))


def oob_what(f: dict) -> Optional[str]:
    """What lies outside (findings.cpp and hazard_check.h's `what`), or None without the facts."""
    if f.get("no_buffer"):
        return tr("the address {address} is device memory, but no buffer is allocated").format(address=f.get("address", "?"))
    if "array" not in f or "size" not in f:
        return None
    el = element(f, shared_prefix=False)
    n = int(f["size"])
    if f.get("space") == "device":
        if f.get("bytes_index"):
            what = (tr("{element} is outside the buffer, which has {n} byte (valid offsets 0 to {last}; it came from an "
                       "untyped cudaMalloc, so offsets are in bytes)") if n == 1 else
                    tr("{element} is outside the buffer, which has {n} bytes (valid offsets 0 to {last}; it came from an "
                       "untyped cudaMalloc, so offsets are in bytes)"))
        else:
            what = (tr("{element} is outside the buffer, which has {n} element (valid indices 0 to {last})") if n == 1 else
                    tr("{element} is outside the buffer, which has {n} elements (valid indices 0 to {last})"))
        what = what.format(element=el, n=n, last=n - 1)
        if "distance" in f:
            dist = int(f["distance"])
            far = (tr("{n} byte before its start") if dist == 1 else tr("{n} bytes before its start")) \
                if f.get("distance_side") == "before" else \
                (tr("{n} byte after its end") if dist == 1 else tr("{n} bytes after its end"))
            if str(f["array"]).startswith("buffer #"):  # no parameter names it: the buffer is "it"
                more = (tr("{far}; it is {buffer}, the nearest buffer (no buffer is at that address)") if f.get("nearest")
                        else tr("{far}; it is {buffer}"))
            else:
                more = (tr("{far}; {name} is {buffer}, the nearest buffer (no buffer is at that address)")
                        if f.get("nearest") else tr("{far}; {name} is {buffer}"))
            what += ": " + more.format(far=far.format(n=dist), name=f["array"], buffer=buffer_words(f.get("buffer")))
        return what
    if f.get("dynamic_shared"):
        if int(f.get("dynamic_bytes", 0) or 0) == 0:
            return tr("{element} is dynamic shared memory, but the launch asked for none (the third <<<>>> argument sets "
                      "its size in bytes)").format(element=el)
        what = (tr("{element} is outside the {bytes} bytes of dynamic shared memory that the launch asked for ({n} element, "
                   "valid indices 0 to {last}; the third <<<>>> argument sets the size)") if n == 1 else
                tr("{element} is outside the {bytes} bytes of dynamic shared memory that the launch asked for ({n} "
                   "elements, valid indices 0 to {last}; the third <<<>>> argument sets the size)"))
        return what.format(element=el, bytes=f.get("dynamic_bytes"), n=n, last=n - 1)
    what = (tr("{element} is outside __shared__ {array}, which has {n} element (valid indices 0 to {last})") if n == 1 else
            tr("{element} is outside __shared__ {array}, which has {n} elements (valid indices 0 to {last})"))
    return what.format(element=el, array=f["array"], n=n, last=n - 1)


def place_words(f: dict) -> Optional[str]:
    """The device address a launch argument or a crash touched, from the `place` fact (memory.cpp,
    describe_address): "element [-2] of buffer #2 (...), which has 1000 elements: out of bounds,
    8 bytes before its start", or None without one."""
    p = f.get("place")
    if not isinstance(p, dict):
        return None
    if p.get("no_buffer"):
        return tr("address {address} of device memory, where no buffer is allocated: out of bounds").format(
            address=p.get("address", "?"))
    at = (tr("byte {offset}") if p.get("unit") == "byte" else tr("element [{offset}]")).format(offset=p.get("offset", "?"))
    buffer = buffer_words(p.get("buffer"))
    if p.get("freed"):
        return tr("{at} of {buffer}, which cudaFree already released at {free_site} (use after free)").format(
            at=at, buffer=buffer, free_site=p.get("free_site", "?"))
    n = int(p.get("size") or 0)
    if p.get("unit") == "byte":
        words = tr("{at} of {buffer}, which has {n} byte: out of bounds") if n == 1 else \
            tr("{at} of {buffer}, which has {n} bytes: out of bounds")
    else:
        words = tr("{at} of {buffer}, which has {n} element: out of bounds") if n == 1 else \
            tr("{at} of {buffer}, which has {n} elements: out of bounds")
    words = words.format(at=at, buffer=buffer, n=n)
    if "distance" in p:
        dist = int(p["distance"])
        far = (tr("{n} byte before its start") if dist == 1 else tr("{n} bytes before its start")) \
            if p.get("distance_side") == "before" else \
            (tr("{n} byte after its end") if dist == 1 else tr("{n} bytes after its end"))
        words += ", " + far.format(n=dist)
    if p.get("nearest"):
        words += " " + tr("(no buffer is there; this is the nearest one)")
    return words


def crash_or_argument(d: dict) -> Optional[List[str]]:
    """The report of an address found outside the memory checker: a launch's pointer argument
    (launch.cpp) or the crash handler (report.cpp, which sets "frames"); None otherwise."""
    from .diagnosis_crash import crash_headline, frame_lines
    f = facts(d)
    place = place_words(f)
    if place is None:
        return None
    if f.get("case") == "argument":
        lines = [tr("{kernel}: argument {argument} of the kernel is {address}, which is not device memory: {place}.").format(
            kernel=kernel_words(f), argument=f.get("argument", "?"), address=f.get("address", "?"), place=place)]
    elif "frames" in f:
        lines = [crash_headline(d, tr("invalid access to {place}").format(place=place))] + frame_lines(d)
    else:
        return None
    words = advice_text(d)
    return lines + (indent(words) if words else []) + also_found(d)


@renderer("out_of_bounds")
def render_out_of_bounds(d: dict) -> List[str]:
    found_elsewhere = crash_or_argument(d)
    if found_elsewhere is not None:
        return found_elsewhere
    f = facts(d)
    w = _where_words(f, d)
    what = oob_what(f)
    if what is not None and f.get("access") in ("read", "write"):
        head = (tr("out-of-bounds write of {space} in {kernel}, block {block}, thread {thread}, at {site}: {what}.")
                if f["access"] == "write" else
                tr("out-of-bounds read of {space} in {kernel}, block {block}, thread {thread}, at {site}: {what}."))
        lines = [head.format(space=space_words(f), what=what, **w)]
    elif f.get("case") == "argument":  # launch.cpp: a pointer argument outside every live buffer
        lines = [tr("{kernel}: argument {argument} of the kernel is {address}, which is not device memory: it points "
                    "outside every buffer (out of bounds).").format(kernel=kernel_words(f), argument=f.get("argument", "?"),
                                                                    address=f.get("address", "?"))]
    else:
        # A record with fewer facts (another part of the simulator found it): what it says.
        lines = [fallback_headline(d, tr("out-of-bounds access in {kernel} at {site}"), tr("out-of-bounds access in {kernel}"),
                                   tr("out-of-bounds access at {site}"), tr("out-of-bounds access"))]
    words = advice_text(d)
    if words:
        lines += indent(words)
    return lines + also_found(d)


def fallback_headline(d: dict, both: str, kernel: str, site: str, bare: str) -> str:
    f = facts(d)
    at = (d.get("sites") or [None])[0]
    if f.get("kernel") and at:
        return both.format(kernel=kernel_words(f), site=at)
    if f.get("kernel"):
        return kernel.format(kernel=kernel_words(f))
    return site.format(site=at) if at else bare


def also_found(d: dict) -> List[str]:
    """What the launch adds to the report of a kernel error (launch.cpp): the schedule that found it
    and the memory checker's own record of the same run (the facts `found_in_schedule` and `also`),
    as the errors family words them for every kernel error (diagnosis_errors.postscript)."""
    try:
        from .diagnosis_errors import postscript
    except ImportError:
        return []
    return postscript(d)


# The index expression of an out-of-bounds access, read from the source line the record names.
_COMMENT = re.compile(r"//.*$")


ROOT = Path(__file__).resolve().parents[2]


def source_line(site: str) -> Optional[str]:
    """The line `file:line` names, or None when it cannot be read. A relative path is relative to
    the directory the program ran in: the current one (the CLI runs programs where it runs), else
    the repository root."""
    m = re.match(r"^(.*):(\d+)$", site or "")
    if not m:
        return None
    path = Path(m.group(1))
    for candidate in ([path] if path.is_absolute() else [path, ROOT / path]):
        try:
            with open(candidate, encoding="utf-8", errors="replace") as fh:
                for i, line in enumerate(fh, 1):
                    if i == int(m.group(2)):
                        return line.rstrip("\n")
            return None
        except OSError:
            continue
    return None


def subscripts(line: str, array: str) -> List[str]:
    """The index expressions of `array[...]` on a line of code, each once, in order."""
    code = _COMMENT.sub("", line)
    found: List[str] = []
    for m in re.finditer(r"(?<![\w.>])%s\s*\[" % re.escape(array), code):
        depth, j = 1, m.end()
        while j < len(code) and depth:
            depth += {"[": 1, "]": -1}.get(code[j], 0)
            j += 1
        if depth:
            continue
        expr = " ".join(code[m.end():j - 1].split())
        if expr and expr not in found:
            found.append(expr)
    return found


def index_expression(d: dict) -> Optional[str]:
    """The one subscript of the array on the access's line that can have produced the bad index:
    the only one, or past the end the only one that adds (or adds or subtracts), before the start
    the only one that subtracts. None when the line cannot be read or it cannot tell."""
    f = facts(d)
    if "array" not in f or "index" not in f or "size" not in f or f.get("bytes_index"):
        return None
    line = source_line(f.get("site") or ((d.get("sites") or [""])[0]))
    if line is None:
        return None
    subs = subscripts(line, str(f["array"]))
    if len(subs) == 1:
        return subs[0]
    if int(f["index"]) < 0:
        picks = [s for s in subs if "-" in s]
    else:
        picks = [s for s in subs if "+" in s] or [s for s in subs if re.search(r"[-+]", s)]
    return picks[0] if len(picks) == 1 else None


@advice("oob_index_expression", ["out_of_bounds"], when=lambda d: index_expression(d) is not None)
def _(d):
    f = facts(d)
    expr = index_expression(d)
    index, size = int(f["index"]), int(f["size"])
    if index < 0:
        m = re.match(r"^(.+?)\s*-\s*(.+)$", expr)
        guard = "%s >= %s" % (m.group(1), m.group(2)) if m and "-" not in m.group(2) and "+" not in m.group(2) \
            else "%s >= 0" % expr
        return tr("The index `{expr}` reached {index}, before the start of {array}: guard the access with `{guard}`, or "
                  "change the index arithmetic so that it stays inside the array.").format(
                      expr=expr, index=index, array=f["array"], guard=guard)
    if f.get("space") == "device":
        return tr("The index `{expr}` reached {index}, past the end of {array} (valid indices 0 to {last}): guard the access "
                  "with a bounds check such as `{expr} < n` (n: the number of elements the kernel was given), or change the "
                  "index arithmetic so that it stays inside the buffer.").format(
                      expr=expr, index=index, array=f["array"], last=size - 1)
    block = list(f.get("block_dim") or [0, 0, 0])
    bound = "blockDim.x" if block and block[0] == size else str(size)
    return tr("The index `{expr}` reached {index}, past the end of {array} (valid indices 0 to {last}): guard the access "
              "with `{expr} < {bound}`, or change the index arithmetic so that it stays inside the array.").format(
                  expr=expr, index=index, array=f["array"], last=size - 1, bound=bound)


@advice("oob_guard_both_sides", ["out_of_bounds"], when=lambda d: True)
def _(d):
    return tr("Check the index against the array's size on both sides: a guard such as `i >= offset` before reading "
              "[i - offset], and `i < n` before [i].")


@renderer("use_after_free")
def render_use_after_free(d: dict) -> List[str]:
    found_elsewhere = crash_or_argument(d)
    if found_elsewhere is not None:
        return found_elsewhere
    f = facts(d)
    w = _where_words(f, d)
    if "buffer" in f and f.get("access") in ("read", "write"):
        at = (tr("byte {index}") if f.get("bytes_index") else tr("element [{index}]")).format(index=f.get("index", "?"))
        head = (tr("use after free: write of device memory in {kernel}, block {block}, thread {thread}, at {site}: {at} "
                   "of {buffer}, which cudaFree released at {free_site}.") if f["access"] == "write" else
                tr("use after free: read of device memory in {kernel}, block {block}, thread {thread}, at {site}: {at} "
                   "of {buffer}, which cudaFree released at {free_site}."))
        lines = [head.format(at=at, buffer=buffer_words(f["buffer"]), free_site=f.get("free_site", "?"), **w)]
    elif f.get("case") == "argument":  # launch.cpp: a pointer argument into a freed buffer
        lines = [tr("{kernel}: argument {argument} of the kernel is {address}, which is not device memory: it points "
                    "into a buffer that cudaFree already released (use after free).").format(
                        kernel=kernel_words(f), argument=f.get("argument", "?"), address=f.get("address", "?"))]
    else:
        lines = [fallback_headline(d, tr("use after free in {kernel} at {site}"), tr("use after free in {kernel}"),
                                   tr("use after free at {site}"), tr("use after free"))]
    words = advice_text(d)
    if words:
        lines += indent(words)
    return lines + also_found(d)


@advice("use_after_free_release_late", ["use_after_free"], when=lambda d: True)
def _(d):
    return tr("Call cudaFree only after the last kernel that uses the buffer, and do not use a pointer into it afterwards.")
