"""The reports of a program that stops outside the block scheduler's rules, from their records'
facts: crashes (a signal in a kernel or in host code: report.cpp's crash handler), a host function
called from device code (host_calls.cpp), device memory read by the launcher (host_reads.cpp),
device code used from host code, an exception that escapes a kernel, and the simulator's own lack
of memory. The words share diagnosis_errors.py's helpers and catalogue (diagnosis_errors.po).

A crash's facts: `in` ("kernel" or "host"; a kernel's record has `kernel`, `launch_site`, the block
and thread), `frames` (where it stopped, innermost first: `function` and `site`, then each caller
it was inlined into), and each kind's own: `address`, `buffer` (a device buffer: `id`, `bytes`,
`api`, `site`, `elements` and `type` when typed; a __device__ variable has `name`), `stack_kb`."""

from __future__ import annotations

from typing import List

from .diagnosis import advice, facts, renderer
from .diagnosis_errors import block_of, kernel_of, postscript, site_of, thread_of, with_advice
from .messages import tr


def buffer_words(b) -> str:
    """"buffer #2 (8 x int, cudaMalloc at p12.cu:40)", as the simulator's alloc_str."""
    if not isinstance(b, dict):
        return "?"
    if b.get("id") == 0:
        return tr("__device__ variable {name} ({bytes} bytes, declared at {site})").format(
            name=b.get("name", "?"), bytes=b.get("bytes", "?"), site=b.get("site", "?"))
    if b.get("type"):
        return tr("buffer #{id} ({elements} x {type}, {api} at {site})").format(
            id=b.get("id", "?"), elements=b.get("elements", "?"), type=b["type"], api=b.get("api", "cudaMalloc"),
            site=b.get("site", "?"))
    return tr("buffer #{id} ({bytes} bytes, {api} at {site})").format(
        id=b.get("id", "?"), bytes=b.get("bytes", "?"), api=b.get("api", "cudaMalloc"), site=b.get("site", "?"))


def frame_lines(d: dict) -> List[str]:
    """"  at k(int*) at p.cu:12", then " (inlined by) ..." per caller: where it stopped."""
    lines = []
    for i, fr in enumerate(facts(d).get("frames") or []):
        values = {"function": fr.get("function", "??"), "site": fr.get("site", "?")}
        if i == 0:
            lines.append("  " + tr("at {function} at {site}").format(**values))
        else:
            lines.append(" " + tr("(inlined by) {function} at {site}").format(**values))
    return lines


def in_kernel(d: dict) -> bool:
    return facts(d).get("in") == "kernel"


def crash_headline(d: dict, what: str) -> str:
    if in_kernel(d):
        return tr("crash in {kernel}, block {block}, thread {thread}: {what}.").format(
            kernel=kernel_of(d), block=block_of(d), thread=thread_of(d), what=what)
    return tr("crash in host code: {what}.").format(what=what)


@renderer("arithmetic", "stack_overflow", "null_dereference", "crash_device", "crash_host")
def render_crash(d: dict) -> List[str]:
    f = facts(d)
    kind = d.get("kind")
    if kind == "arithmetic":
        what = tr("arithmetic error (integer division by zero?)")
    elif kind == "stack_overflow":
        what = tr("stack overflow: the thread's local variables exceed the simulator's stack (set CUDASIM_STACK_KB to "
                  "raise it)")
    elif kind == "null_dereference":
        what = tr("null pointer dereference")
    elif f.get("case") == "device_memory":
        what = tr("host code dereferenced device memory ({buffer}). A device pointer is only valid inside kernels: copy "
                  "the data to a host array with cudaMemcpy first").format(buffer=buffer_words(f.get("buffer")))
    else:
        what = tr("invalid access to address {address}, which is not in any device buffer").format(
            address=f.get("address", "?"))
    return with_advice(d, [crash_headline(d, what)] + frame_lines(d))


@advice("crash_null_pointer_in_kernel", ["null_dereference"], when=in_kernel)
def _null_pointer(d: dict) -> str:
    return tr("A pointer the kernel used is null: check the arguments of the launch (every pointer must come from "
              "cudaMalloc, and be allocated before the launch) and any pointer the kernel computes or loads.")


@advice("crash_not_device_memory_in_kernel", ["crash_device"],
        when=lambda d: in_kernel(d) and facts(d).get("case") == "not_device_memory")
def _not_device_memory(d: dict) -> str:
    return tr("A kernel can only use device memory: pass pointers from cudaMalloc, not host arrays (copy the data over "
              "with cudaMemcpy), and check pointers the kernel computes or loads (an uninitialized one holds garbage).")


# ---- the launcher and host code -----------------------------------------------------------------------------


@renderer("host_copy_in_launcher")
def render_host_copy(d: dict) -> List[str]:
    f = facts(d)
    if f.get("case") == "managed_read":
        return [tr("the launcher read managed memory ({buffer}) in host code while the case ran.").format(
                    buffer=buffer_words(f.get("buffer")))] + frame_lines(d) + [
                "  " + tr("A puzzle's answer must be computed by its kernels: the driver reads the output itself after the "
                          "launcher returns, and an answer computed on the CPU does not count."),
                "  " + tr("Leave the values in device memory and launch another kernel on them; to look at values while "
                          "debugging, printf from a kernel.")]
    n = int(f.get("bytes") or 0)
    if n == 1:
        headline = tr("the launcher copied 1 byte of device memory to the host ({how}) at {site}.")
    else:
        headline = tr("the launcher copied {bytes} bytes of device memory to the host ({how}) at {site}.")
    return [headline.format(bytes=n, how=f.get("how") or d.get("detail") or "?", site=site_of(d)),
            "  " + tr("A puzzle's answer must be computed by its kernels: the driver reads the output buffer itself after "
                      "the launcher returns, so the launcher has no reason to read device memory, and an answer computed "
                      "on the CPU (copied back, or copied into the output by a kernel) does not count."),
            "  " + tr("Remove the copy and compute the result on the device; if one kernel cannot finish it, launch another "
                      "on what the first left in device memory. To look at values while debugging, printf from a kernel.")]


@renderer("host_call")
def render_host_call(d: dict) -> List[str]:
    f = facts(d)
    values = {"kernel": kernel_of(d), "block": block_of(d), "thread": thread_of(d),
              "function": f.get("function") or d.get("detail") or "?", "kernel_name": f.get("kernel", "?")}
    if d.get("sites"):
        headline = tr("host function called from device code at {site}: {kernel}, block {block}, thread {thread}: calling "
                      "a __host__ function(\"{function}\") from a __global__ function(\"{kernel_name}\") is not allowed.") \
            .format(site=site_of(d), **values)
    else:
        headline = tr("host function called from device code: {kernel}, block {block}, thread {thread}: calling a __host__ "
                      "function(\"{function}\") from a __global__ function(\"{kernel_name}\") is not allowed.").format(**values)
    return [headline,
            "  " + tr("Device code cannot call host functions; on a GPU this is a build error (nvcc refuses the file). A "
                      "kernel ends with `return`, hands its results back through its output buffers, and may print with "
                      "printf.")] + postscript(d)


DEVICE_ONLY = {
    "shared_variable": "a __shared__ variable",
    "dynamic_shared": "dynamic shared memory",
    "tile_size": "tiled_partition(group, n) with n not a power of two from 1 to 32",
}


@renderer("device_code_from_host")
def render_device_code_from_host(d: dict) -> List[str]:
    f = facts(d)
    c = f.get("case")
    what = tr(DEVICE_ONLY[c]) if c in DEVICE_ONLY else f.get("what") or d.get("detail") or "?"
    if d.get("sites"):
        headline = tr("{site}: {what} was used outside a kernel (in host code).").format(site=site_of(d), what=what)
    else:
        headline = tr("{what} was used outside a kernel (in host code).").format(what=what)
    return [headline,
            "  " + tr("Built-in variables and device synchronisation exist only inside a __global__ function and the "
                      "__device__ functions it calls.")]


@renderer("exception")
def render_exception(d: dict) -> List[str]:
    f = facts(d)
    values = {"kernel": kernel_of(d), "block": block_of(d), "thread": thread_of(d)}
    if f.get("case") == "std":
        headline = tr("{kernel}: a C++ exception escaped the kernel in block {block}, thread {thread}: {exception}").format(
            exception=f.get("exception", ""), **values)
    else:
        headline = tr("{kernel}: an exception escaped the kernel in block {block}, thread {thread}").format(**values)
    return [headline] + postscript(d)


OUT_OF_MEMORY = {
    "thread_stack": "the simulator could not allocate a thread stack (out of memory)",
    "stack": "the simulator could not allocate a stack (out of memory)",
    "shadow_memory": "the simulator could not allocate its shadow memory (out of memory)",
    "shared_memory": "the simulator could not allocate shared memory (out of memory)",
}


@renderer("out_of_memory")
def render_out_of_memory(d: dict) -> List[str]:
    what = facts(d).get("what")
    return [tr(OUT_OF_MEMORY[what]) if what in OUT_OF_MEMORY else tr("the simulator ran out of memory")]
