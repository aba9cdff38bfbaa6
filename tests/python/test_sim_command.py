"""`puzzle.py sim`: CUDA programs with their own main() (tests/sim/programs/), built for the
simulator and run, with their self-checks, arguments, the build cache and the errors a user meets.

Needs PUZZLES_BUILD_DIR (the command builds libcudasim there); skipped otherwise.
"""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, run_cli

PROGRAMS = REPO / "tests" / "sim" / "programs"


def sim(build_dir, *args, timeout=300):
    return run_cli("sim", *args, env={"PUZZLES_BUILD_DIR": str(build_dir)}, timeout=timeout)


PROGRAM_SOURCES = [
    ["cg_reduce.cu"],                                      # cooperative groups
    ["constant_symbol.cu"],                                # __constant__, cudaMemcpyToSymbol/FromSymbol
    ["managed.cu"],                                        # cudaMallocManaged, prefetch, device attributes
    ["lock_by_value.cu"],                                  # a by-value parameter with a destructor
    ["multi_file/main.cu", "multi_file/host_reference.cpp"],  # a kernel in a .cuh, a host .cpp
    ["stream_compaction.cu"],                              # out[atomicAdd(&n, 1)] = x: order differs, a note
    ["spin_lock_sum.cu"],                                  # a float sum under a lock, between and within blocks
    ["scoped_atomics.cu"],                                 # atomicAdd_block within each block
    ["message_passing.cu"],                                # cuda::atomic_ref release/acquire between blocks
]
# Programs whose default run the memory checker reports (and their fixed forms): listed here for
# the nvcc build as well.
REPORTED_PROGRAMS = [["ticket_reduction.cu"], ["status_halves.cu"], ["ldg_written.cu"]]


@pytest.mark.parametrize("sources", PROGRAM_SOURCES, ids=lambda s: s[0])
def test_program_passes_its_self_check(build_dir, sources):
    r = sim(build_dir, *[PROGRAMS / s for s in sources])
    assert r.returncode == 0, r
    assert "Test PASSED" in r.stdout, r


@pytest.mark.parametrize("sources", PROGRAM_SOURCES + REPORTED_PROGRAMS, ids=lambda s: s[0])
def test_program_is_real_cuda_for_nvcc(tmp_path, sources):
    """The programs are CUDA, not simulator dialect: nvcc compiles and links them (nothing runs,
    so no GPU is needed)."""
    from puzzlelib.grade import find_nvcc
    nvcc = find_nvcc(None)
    if not nvcc:
        pytest.skip("no nvcc ($CUDACXX, PATH or /usr/local/cuda/bin): the CUDA build of the programs is not checked")
    cmd = [nvcc, "-std=c++17", "-arch=sm_90", "-o", str(tmp_path / "prog")] + [str(PROGRAMS / s) for s in sources]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=300)
    assert proc.returncode == 0, " ".join(cmd) + "\n" + proc.stdout


def test_arguments_after_double_dash_reach_the_program(build_dir):
    r = sim(build_dir, PROGRAMS / "cg_reduce.cu", "--", "777")
    assert r.returncode == 0, r
    assert "n = 777, sum = 3486, expected 3486" in r.stdout, r


def copy_program(tmp_path):
    dst = tmp_path / "prog"
    shutil.copytree(str(PROGRAMS / "multi_file"), str(dst))
    return dst


def test_build_is_cached_by_content_including_headers(build_dir, tmp_path):
    prog = copy_program(tmp_path)
    args = [prog / "main.cu", prog / "host_reference.cpp", "--build-only"]
    first = sim(build_dir, *args)
    assert first.returncode == 0, first
    exe = Path(first.stdout.strip())
    assert exe.is_file() and os.access(str(exe), os.X_OK)
    stamp = exe.stat().st_mtime_ns
    again = sim(build_dir, *args)
    assert again.returncode == 0 and Path(again.stdout.strip()) == exe, again
    assert exe.stat().st_mtime_ns == stamp  # not rebuilt
    # Editing the included .cuh is a new build (the old executable is replaced).
    cuh = prog / "kernels.cuh"
    cuh.write_text(cuh.read_text().replace("kernel<<<4, 128,", "kernel<<<3, 128,"))
    edited = sim(build_dir, *args)
    assert edited.returncode == 0, edited
    assert Path(edited.stdout.strip()) != exe
    assert not exe.exists()


def test_kernel_error_in_an_included_header_is_reported_there(build_dir, tmp_path):
    (tmp_path / "shift.cuh").write_text(
        "__global__ void shift_left(int* a, int n) {\n"
        "  int i = threadIdx.x;\n"
        "  if (i + 1 < n) a[i] = a[i + 1];\n"  # line 3: reads what its neighbour writes
        "}\n")
    (tmp_path / "race.cu").write_text(
        '#include <cstdio>\n#include "shift.cuh"\n'
        "int main() {\n"
        "  int* d; cudaMalloc(&d, 64 * sizeof(int)); cudaMemset(d, 0, 64 * sizeof(int));\n"
        "  shift_left<<<1, 64>>>(d, 64);\n"
        '  printf("unreachable\\n");\n'
        "  return 0;\n}\n")
    r = sim(build_dir, tmp_path / "race.cu")
    assert r.returncode == 3, r
    assert "race in kernel shift_left" in r.stderr, r
    assert "shift.cuh:3" in r.stderr, r
    assert "unreachable" not in r.stdout


def test_compile_error_names_the_original_file_and_exits_2(build_dir, tmp_path):
    (tmp_path / "broken.cuh").write_text("__global__ void k(int* a) {\n  a[0] = undeclared_name;\n}\n")
    (tmp_path / "main.cu").write_text('#include "broken.cuh"\nint main() { return 0; }\n')
    r = sim(build_dir, tmp_path / "main.cu")
    assert r.returncode == 2, r
    assert "%s:2" % (tmp_path / "broken.cuh") in r.stderr, r
    assert "did not compile for the simulator" in r.stderr, r
    assert "/tree/" not in r.stderr  # the translated copies are not what the user edits


def test_grid_sync_is_refused_with_a_message(build_dir, tmp_path):
    (tmp_path / "grid.cu").write_text(
        "#include <cooperative_groups.h>\n"
        "__global__ void k() { cooperative_groups::this_grid().sync(); }\n"
        "int main() { k<<<2, 32>>>(); return 0; }\n")
    r = sim(build_dir, tmp_path / "grid.cu")
    assert r.returncode == 2, r
    assert "grid-wide synchronization" in r.stderr and "Split the kernel in two launches" in r.stderr, r


def test_usage_errors(build_dir, tmp_path):
    r = sim(build_dir)
    assert r.returncode == 2 and "no source file given" in r.stderr, r
    r = sim(build_dir, tmp_path / "missing.cu")
    assert r.returncode == 2 and "no such file" in r.stderr, r
    r = sim(build_dir, PROGRAMS / "multi_file" / "host_reference.cpp")
    assert r.returncode == 2 and "no .cu file given" in r.stderr, r
    toolkit = tmp_path / "cuda" / "include"
    toolkit.mkdir(parents=True)
    (toolkit / "cuda_runtime_api.h").write_text("#error a toolkit header\n")
    r = sim(build_dir, "-I", toolkit, PROGRAMS / "cg_reduce.cu")
    assert r.returncode == 2 and "CUDA toolkit's include folder" in r.stderr, r


def test_help_lists_the_command():
    r = run_cli("--help")
    assert "sim" in r.output
    r = run_cli("sim", "--help")
    assert r.returncode == 0 and "-- program arguments" in r.stdout


def _site(program, marker):
    """'tests/sim/programs/FILE:LINE' of the line that carries `// @marker`."""
    for n, line in enumerate((PROGRAMS / program).read_text().splitlines(), 1):
        if line.rstrip().endswith("// " + marker):
            return "tests/sim/programs/%s:%d" % (program, n)
    raise AssertionError("no %s in %s" % (marker, program))


# (program, arguments, exit status, [(marker or None, text)...]): each text must be in stderr, with
# the marker's file:line substituted for "{}" (in order: {0}, {1}).
MEMORY_MODEL_CASES = [
    ("ticket_reduction.cu", [], 3, [
        "read-after-write between write at {0} and read at {1}",
        "the reader's atomic saw it, but the reader made no acquire",
        "The checker follows the PTX memory model, more strictly than NVIDIA's threadFenceReduction sample",
        "a release pattern synchronizes only with an acquire pattern on the reader's side (PTX ISA, Memory Consistency "
        "Model: an atomic followed by a fence, or an acquire operation)",
        "Add a __threadfence() after the atomic, in the thread that then reads"],
     ["@partial-store", "@partial-load"]),
    ("ticket_reduction.cu", ["--reader-fence"], 0, [], []),
    ("scoped_atomics.cu", ["--one-counter"], 3, [
        "write-after-write between block-scope atomic write at {0} and block-scope atomic write at {0}",
        "in another block, which a block-scope atomic does not synchronise with.",
        "atomicAdd_block and the other _block atomics (and cuda::thread_scope_block) are atomic only among the threads of "
        "one block",
        "Use atomicAdd (or the atomic without _block, cuda::thread_scope_device) when more than one block updates it."],
     ["@block-add"]),
    ("message_passing.cu", ["--relaxed"], 3, [
        "read-after-write between write at {0} and read at {1}",
        "then block 1 thread 0 read it at {1},\n         in another block, with no release and acquire between them."],
     ["@message-store", "@message-load"]),
    ("message_passing.cu", ["--fence-block"], 3, [
        "read-after-write between write at {0} and read at {1}",
        "in another block, with no release and acquire between them."],
     ["@message-store", "@message-load"]),
    ("message_passing.cu", ["--fence"], 0, [], []),
    ("status_halves.cu", [], 3, [
        "read-after-write between atomic write at {0} and volatile read at {2}",
        "read-after-write between atomic write at {1} and volatile read at {2}",
        "only when they cover the same bytes",
        "pack the flag and the value into one 64-bit atomicExch or atomicCAS"],
     ["@value-half", "@flag-half", "@volatile-read"]),
    ("status_halves.cu", ["--plain"], 3, [
        "read-after-write between atomic write at {0} and read at {2}",
        "A plain load of an element that another thread updates with an atomic, with no order between them, is a data "
        "race (PTX memory model)"],
     ["@value-half", "@flag-half", "@plain-read"]),
    ("status_halves.cu", ["--packed"], 0, [], []),
    ("ldg_written.cu", [], 3, [
        "read-after-write between write at {0} and read-only-path (__ldg) read at {1}",
        "in another block of the same launch (the read-only path is not coherent with it).",
        "fences do not make it so",
        "Use a plain load here (or a volatile load or an atomic), or split the work into two kernel launches."],
     ["@table-store", "@table-load"]),
    ("ldg_written.cu", ["--plain-load"], 0, [], []),
]


@pytest.mark.parametrize("case", MEMORY_MODEL_CASES, ids=lambda c: " ".join([c[0]] + c[1]))
def test_memory_model_verdicts(build_dir, case):
    """Scopes, mixed accesses, the read-only path and the reader's acquire (issue 19): the verdict
    and the lines of the message, and the fixed form's pass."""
    program, args, status, texts, markers = case
    r = sim(build_dir, PROGRAMS / program, *(["--"] + args if args else []))
    assert r.returncode == status, r
    sites = [_site(program, m) for m in markers]
    for t in texts:
        assert t.format(*sites) in r.stderr, (t.format(*sites), r.stderr)
    if status == 0:
        assert "Test PASSED" in r.stdout, r
    else:
        assert "race in kernel" in r.stderr and "Test PASSED" not in r.stdout, r


def test_stream_compaction_note_names_indices_from_atomics(build_dir):
    r = sim(build_dir, PROGRAMS / "stream_compaction.cu")
    assert r.returncode == 0, r
    assert "cudasim: note: kernel keep_multiples_of_3" in r.stderr, r
    assert "an index taken with atomicAdd, out[atomicAdd(&n, 1)] = x" in r.stderr, r
    assert "That is not a race" in r.stderr, r


def test_uninitialized_read_is_a_warning_in_a_program(build_dir, tmp_path):
    """Outside the puzzles an uninitialized read whose garbage never reaches device memory is a
    warning and the program goes on; garbage that reaches device memory differs between the
    schedules and is reported as a race."""
    (tmp_path / "uninit.cu").write_text(
        "#include <cstdio>\n"
        "__global__ void k(int* out, bool leak) {\n"
        "  __shared__ int s[64];\n"
        "  int g = *(volatile int*)&s[threadIdx.x];\n"  # line 4: read before any write
        "  s[threadIdx.x] = threadIdx.x;\n"
        "  __syncthreads();\n"
        "  out[threadIdx.x] = s[63 - threadIdx.x] + (leak ? g : 0);\n"
        "}\n"
        "int main(int argc, char**) {\n"
        "  int* d; cudaMalloc(&d, 64 * sizeof(int));\n"
        "  k<<<1, 64>>>(d, argc > 1);\n"
        "  int h[64]; cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);\n"
        '  printf("done %d\\n", h[0]);\n'
        "  return 0;\n}\n")
    r = sim(build_dir, tmp_path / "uninit.cu")
    assert r.returncode == 0, r
    assert "cudasim: warning: uninitialized read in kernel k" in r.stderr, r
    assert "uninit.cu:4" in r.stderr and "The program goes on" in r.stderr, r
    assert "done 63" in r.stdout, r
    r = sim(build_dir, tmp_path / "uninit.cu", "--", "leak")
    assert r.returncode == 3, r
    assert "the result depends on the order in which threads run (or on what uninitialized memory holds" in r.stderr, r
