"""`puzzle.py sim`: CUDA programs with their own main() (tests/sim/programs/), built for the
simulator and run, with their self-checks, arguments, the build cache and the errors a user meets.

Needs PUZZLES_BUILD_DIR (the command builds libcudasim there); skipped otherwise.
"""

import os
import re
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
    ["template_header/main.cu"],                           # templated __device__ helpers in a header
    ["stream_compaction.cu"],                              # out[atomicAdd(&n, 1)] = x: order differs, a note
    ["spin_lock_sum.cu"],                                  # a float sum under a lock, between and within blocks
    ["scoped_atomics.cu"],                                 # atomicAdd_block within each block
    ["message_passing.cu"],                                # cuda::atomic_ref release/acquire between blocks
    ["noinline.cu"],                                       # __noinline__ beside __attribute__((__noinline__))
]
# Programs whose default run the memory checker reports (and their fixed forms): listed here for
# the nvcc build as well.
REPORTED_PROGRAMS = [["ticket_reduction.cu"], ["status_halves.cu"], ["ldg_written.cu"], ["restrict_written.cu"]]


@pytest.mark.parametrize("sources", PROGRAM_SOURCES, ids=lambda s: s[0])
def test_program_passes_its_self_check(build_dir, sources):
    r = sim(build_dir, *[PROGRAMS / s for s in sources])
    assert r.returncode == 0, r
    assert "Test PASSED" in r.stdout, r


@pytest.mark.parametrize("sources", PROGRAM_SOURCES + REPORTED_PROGRAMS + [["printf_flood.cu"]], ids=lambda s: s[0])
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


def test_the_report_is_worded_from_the_record_in_the_learners_language(build_dir, tmp_path):
    """`sim` names a file for the simulator's record (CUDASIM_RECORD_FILE) and words the report
    itself: English as the simulator writes it, Korean with --lang ko, and the simulator's English
    block is not printed beside it."""
    (tmp_path / "race.cu").write_text(
        "__global__ void shift_left(int* a, int n) {\n"
        "  int i = threadIdx.x;\n"
        "  if (i + 1 < n) a[i] = a[i + 1];\n"
        "}\n"
        "int main() {\n"
        "  int* d; cudaMalloc(&d, 64 * sizeof(int)); cudaMemset(d, 0, 64 * sizeof(int));\n"
        "  shift_left<<<1, 64>>>(d, 64);\n"
        "  return 0;\n}\n")
    english = sim(build_dir, tmp_path / "race.cu")
    assert english.returncode == 3, english
    assert "race in kernel shift_left" in english.stderr and "cudasim: error:" not in english.stderr, english
    korean = sim(build_dir, tmp_path / "race.cu", "--lang", "ko")
    assert korean.returncode == 3, korean
    assert "race in kernel" not in korean.stderr and "cudasim: error:" not in korean.stderr, korean
    assert "Race Condition" in korean.stderr and "race.cu:3" in korean.stderr, korean
    assert re.search(r"[\uac00-\ud7a3]", korean.stderr), korean


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


STRAY = PROGRAMS / "stray_pointers.cu"


def stray_line(text):
    """The line of stray_pointers.cu that holds `text` (the messages name them)."""
    for number, line in enumerate(STRAY.read_text().splitlines(), 1):
        if text in line:
            return number
    raise AssertionError(text)


@pytest.mark.parametrize("checks", ["1", "0"], ids=["checker", "no-checker"])
def test_stray_device_pointers_name_their_buffer_and_distance(build_dir, checks):
    """Every buffer lives in one arena with gaps around it: a wild pointer far below `out`, a write
    past the end of `out` (allocated before or after `a`) and a read of a released buffer are
    reported with the buffer they strayed from, with the memory checker and through the fault
    handler without it."""
    env = {"PUZZLES_BUILD_DIR": str(build_dir), "CUDASIM_CHECKS": checks}
    ok = run_cli("sim", STRAY, env=env, timeout=300)
    assert ok.returncode == 0 and "Test PASSED" in ok.stdout, ok
    lines = STRAY.read_text().splitlines()
    out_lines = [i for i, line in enumerate(lines, 1) if line.strip() == "cudaMalloc(&out, bytes);"]
    out_malloc = {"out": out_lines[0], "a": out_lines[1]}  # `out` first, then `a` first
    checked = checks == "1"

    r = run_cli("sim", STRAY, "--", "wild", env=env, timeout=300)
    assert r.returncode == 4, r
    if checked:
        assert ("out-of-bounds write of device memory in kernel copy_with_base" in r.stderr
                and "stray_pointers.cu:%d: out[-2000000] is outside the buffer, which has 1000 elements (valid "
                    "indices 0 to 999): 8000000 bytes before its start; out is buffer #2 (1000 x float, cudaMalloc at "
                    % stray_line("if (i < n) dst[i] = a[i];") in r.stderr), r
    else:
        # The first thread to fault is any of the launch's: its index is 2000000 minus its own.
        assert re.search(r"crash in kernel copy_with_base .*: invalid access to element \[-\d+\] of buffer #2 \(1000 x float, "
                         r"cudaMalloc at \S*stray_pointers\.cu:%d\), which has 1000 elements: out of bounds, \d+ bytes before "
                         r"its start\." % out_malloc["a"], r.stderr), r
    assert "stray_pointers.cu:%d" % out_malloc["a"] in r.stderr, r

    for first in ("a", "out"):
        r = run_cli("sim", STRAY, "--", "past", first, env=env, timeout=300)
        assert r.returncode == 4, r
        what = ("out[4000] is outside the buffer, which has 1000 elements (valid indices 0 to 999): 12000 bytes after its "
                "end; out is buffer" if checked else
                "invalid access to element [4000] of buffer")
        assert what in r.stderr, r
        assert "(1000 x float, cudaMalloc at %s:%d)" % (STRAY.relative_to(REPO), out_malloc[first]) in r.stderr, r
        assert "stray_pointers.cu:%d" % stray_line("cudaMalloc(&a, bytes);") not in r.stderr, r

    r = run_cli("sim", STRAY, "--", "free", env=env, timeout=300)
    assert r.returncode == 4, r
    freed = "(1000 x float, cudaMalloc at %s:%d), which cudaFree %sreleased at %s:%d" % (
        STRAY.relative_to(REPO), stray_line("cudaMalloc(&src, bytes);"), "" if checked else "already ",
        STRAY.relative_to(REPO), stray_line("if (std::strcmp(mode, \"free\") == 0) cudaFree(src);"))
    assert freed in r.stderr, r
    assert ("use after free: read of device memory in kernel gather" if checked else "(use after free)") in r.stderr, r


def test_stray_pointers_program_is_real_cuda_for_nvcc(tmp_path):
    test_program_is_real_cuda_for_nvcc(tmp_path, ["stray_pointers.cu"])

# ---- issue 19, item 6: __CUDA_ARCH__, cooperative-groups partitions, grid sync, Thrust/CUB, and a
# shuffle read whose undefined value is discarded ------------------------------------------------

COMPAT_PROGRAMS = [
    "cuda_arch.cu",       # #if __CUDA_ARCH__ >= 800 in a kernel takes the sm_90 branch; host code sees none
    "cg_partition.cu",    # cg::labeled_partition, binary_partition, block_tile_memory
    "shfl_discarded.cu",  # a guarded shuffle tree whose lanes read returned lanes and discard the value
]


@pytest.mark.parametrize("program", COMPAT_PROGRAMS)
def test_compat_program_passes_its_self_check(build_dir, program):
    r = sim(build_dir, PROGRAMS / program)
    assert r.returncode == 0, r
    assert "Test PASSED" in r.stdout, r


@pytest.mark.parametrize("program", COMPAT_PROGRAMS)
def test_compat_program_is_real_cuda_for_nvcc(tmp_path, program):
    test_program_is_real_cuda_for_nvcc(tmp_path, [program])


def test_cuda_arch_is_the_devices_in_device_code_only(build_dir):
    r = sim(build_dir, PROGRAMS / "cuda_arch.cu")
    assert r.returncode == 0, r
    assert "device code compiled for __CUDA_ARCH__ 900; the device is sm_90; host code sees no __CUDA_ARCH__" in r.stdout, r


def test_host_device_functions_get_the_host_pass_and_lines_keep_their_numbers(build_dir, tmp_path):
    """A __host__ __device__ function is compiled once for both callers, so it sees no
    __CUDA_ARCH__ (nvcc's host pass); the lines cu2cpp adds around device bodies do not move a
    report: the race below is named at its own line, after a kernel's #if __CUDA_ARCH__ block."""
    (tmp_path / "hd.cu").write_text(
        "#include <cstdio>\n"
        "__host__ __device__ int pass() {\n"
        "#ifdef __CUDA_ARCH__\n"
        "  return __CUDA_ARCH__;\n"
        "#else\n"
        "  return 0;\n"
        "#endif\n"
        "}\n"
        "__global__ void k(int* out) {\n"
        "#if __CUDA_ARCH__ >= 700\n"
        "  int i = threadIdx.x;\n"
        "#endif\n"
        "  out[i] = pass();\n"
        "  if (i > 0) out[i - 1] += 1;\n"  # line 14: reads and writes the neighbour's element
        "}\n"
        "int main() {\n"
        "  int* d; cudaMalloc(&d, 32 * sizeof(int));\n"
        '  printf("host pass: %d\\n", pass());\n'
        "  k<<<1, 32>>>(d);\n"
        "  return 0;\n"
        "}\n")
    r = sim(build_dir, tmp_path / "hd.cu")
    assert r.returncode == 3, r
    assert "host pass: 0" in r.stdout, r
    assert "race in kernel k" in r.stderr, r
    assert "hd.cu:14" in r.stderr and "hd.cu:13" in r.stderr, r
    # A compile error inside a device body is named at its line too.
    (tmp_path / "bad.cu").write_text("__global__ void k(int* out) {\n  out[0] = 1;\n  out[1] = not_declared;\n}\n"
                                     "int main() { return 0; }\n")
    r = sim(build_dir, tmp_path / "bad.cu")
    assert r.returncode == 2, r
    assert "%s:3:" % (tmp_path / "bad.cu") in r.stderr, r


def test_shuffle_of_a_returned_lane_warns_once_and_runs_on(build_dir):
    r = sim(build_dir, PROGRAMS / "shfl_discarded.cu")
    assert r.returncode == 0, r
    assert "n = 1000: 0 of 32 warp sums differ" in r.stdout, r
    lines = (PROGRAMS / "shfl_discarded.cu").read_text().splitlines()
    shfl = next(n for n, text in enumerate(lines, 1) if "__shfl_down_sync(" in text)
    warning = "cudasim: warning: undefined value at tests/sim/programs/shfl_discarded.cu:%d: kernel warp_sums" % shfl
    assert r.stderr.count(warning) == 1, r
    assert "reads lane 16 through __shfl_down_sync, but lane 16 is not in the mask" in r.stderr, r
    assert "it gets an undefined value (on a GPU too)" in r.stderr, r
    assert "if it reaches device memory, the schedules' results differ and that is reported" in r.stderr, r


def test_undefined_shuffle_value_that_reaches_memory_is_reported(build_dir, tmp_path):
    src = (PROGRAMS / "shfl_discarded.cu").read_text()
    guarded = "    float other = __shfl_down_sync(live_mask, v, offset);\n    if (lane + offset < live) v += other;\n"
    assert guarded in src
    (tmp_path / "unguarded.cu").write_text(src.replace(guarded, "    v += __shfl_down_sync(live_mask, v, offset);\n"))
    r = sim(build_dir, tmp_path / "unguarded.cu")
    assert r.returncode == 3, r
    assert "cudasim: warning: undefined value at" in r.stderr, r
    assert "the result depends on the order in which threads run" in r.stderr, r


def test_grid_sync_through_cg_sync_gets_the_simulators_explanation(build_dir, tmp_path):
    (tmp_path / "grid.cu").write_text(
        "#include <cooperative_groups.h>\n"
        "namespace cg = cooperative_groups;\n"
        "__global__ void k(int* out) {\n"
        "  cg::grid_group grid = cg::this_grid();\n"
        "  out[grid.thread_rank()] = 1;\n"
        "  cg::sync(grid);\n"
        "}\n"
        "int main() { int* d; cudaMalloc(&d, 64 * sizeof(int)); k<<<2, 32>>>(d); return 0; }\n")
    r = sim(build_dir, tmp_path / "grid.cu")
    assert r.returncode == 2, r
    tail = r.stderr.split("The CPU simulator refuses something this program uses; its explanation:")
    assert len(tail) == 2, r
    line = tail[1].strip().splitlines()[0]
    assert line.startswith("%s:6: grid-wide synchronization" % (tmp_path / "grid.cu")), r
    assert "needs a cooperative launch (cudaLaunchCooperativeKernel)" in line
    assert "they cannot all wait for each other" in line
    assert "Split the kernel in two launches at the sync point" in line


def test_thrust_and_cub_includes_get_advice(build_dir, tmp_path):
    (tmp_path / "thr.cu").write_text(
        "#include <thrust/device_vector.h>\n#include <thrust/reduce.h>\n"
        "int main() { thrust::device_vector<int> v(10, 1); return thrust::reduce(v.begin(), v.end()) == 10 ? 0 : 1; }\n")
    r = sim(build_dir, tmp_path / "thr.cu")
    assert r.returncode == 2, r
    assert "thrust/device_vector.h: No such file" in r.stderr, r
    assert "Thrust (<thrust/...>) is not supported by the CPU simulator: write the kernel yourself" in r.stderr, r
    assert "std::sort, std::accumulate, std::inclusive_scan" in r.stderr, r
    assert r.stderr.count("Thrust (<thrust/...>)") == 1, r
    (tmp_path / "cub.cu").write_text(
        "#include <cub/block/block_reduce.cuh>\n"
        "__global__ void k(int* out) {\n"
        "  typedef cub::BlockReduce<int, 128> R;\n"
        "  __shared__ typename R::TempStorage tmp;\n"
        "  int s = R(tmp).Sum(threadIdx.x);\n"
        "  if (threadIdx.x == 0) *out = s;\n"
        "}\n"
        "int main() { return 0; }\n")
    r = sim(build_dir, tmp_path / "cub.cu")
    assert r.returncode == 2, r
    assert "CUB (<cub/...>) is not supported by the CPU simulator" in r.stderr, r
    assert "cg::reduce, cg::inclusive_scan" in r.stderr, r
# ---- reports name the user's files; device printf is bounded like a GPU's buffer (issue 19) ----

TEMPLATE_HEADER = PROGRAMS / "template_header"


def not_a_translated_copy(text, build_dir):
    """No file:line in text names the translated mirror tree or a `.cu.cpp` copy."""
    assert ".cu.cpp" not in text, text
    assert "/tree/" not in text and "sim-programs" not in text, text
    assert str(build_dir) not in text, text


@pytest.mark.parametrize("mode, code, lines", [
    ("race", 3, ["race in kernel shift_left",
                 "write-after-read between read at tests/sim/programs/template_header/store.cuh:6 and write at "
                 "tests/sim/programs/template_header/store.cuh:11"]),
    ("oob", 4, ["out-of-bounds write of device memory in kernel fill_index",
                "at tests/sim/programs/template_header/store.cuh:11: out[100] is outside the buffer"]),
])
def test_reports_inside_templated_header_helpers_name_the_header(build_dir, mode, code, lines):
    r = sim(build_dir, TEMPLATE_HEADER / "main.cu", "--", mode)
    assert r.returncode == code, r
    for line in lines:
        assert line in r.stderr, r
    not_a_translated_copy(r.stderr, build_dir)


def test_no_report_trace_or_profile_names_a_translated_copy(build_dir, tmp_path):
    exe = sim(build_dir, TEMPLATE_HEADER / "main.cu", "--build-only").stdout.strip()
    runs = {}
    # A crash with the memory checker off goes through the crash handler's own symbolizer.
    far = tmp_path / "far"
    far.mkdir()
    shutil.copyfile(str(TEMPLATE_HEADER / "store.cuh"), str(far / "store.cuh"))
    (far / "far.cu").write_text(
        '#include "store.cuh"\n'
        "__global__ void k(int* out) { store_at(out, int(threadIdx.x) * 4000000, 1); }\n"
        "int main() { int* d; cudaMalloc(&d, 64 * sizeof(int)); k<<<1, 32>>>(d); return 0; }\n")
    far_exe = sim(build_dir, far / "far.cu", "--build-only").stdout.strip()
    env = dict(os.environ, CUDASIM_TRACE=str(tmp_path / "trace.jsonl"), CUDASIM_PROFILE=str(tmp_path / "profile.jsonl"))
    for mode in ("race", "oob", ""):
        runs[mode] = subprocess.run([exe, mode], stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                                    env=env, cwd=str(REPO), timeout=120)
    runs["crash"] = subprocess.run([far_exe], stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                                   env=dict(os.environ, CUDASIM_CHECKS="0"), timeout=120)
    assert runs["crash"].returncode == 4 and "store.cuh:11" in runs["crash"].stderr, runs["crash"].stderr
    assert "Test PASSED" in runs[""].stdout, runs[""]
    for r in runs.values():
        not_a_translated_copy(r.stderr, build_dir)
    trace = (tmp_path / "trace.jsonl").read_text()
    profile = (tmp_path / "profile.jsonl").read_text()
    assert "store.cuh:11" in trace and "store.cuh:6" in profile, (trace[:2000], profile[:2000])
    not_a_translated_copy(trace, build_dir)
    not_a_translated_copy(profile, build_dir)


FIFO = 1 << 20  # cudaLimitPrintfFifoSize's default
NOTE = re.compile(r"cudasim: note: kernel count_and_print \(launched at \S*printf_flood\.cu:\d+\) printed more than the "
                  r"(\d+)-byte printf buffer holds: the first (\d+) printf records \((\d+) lines, (\d+) bytes\) were "
                  r"overwritten and not printed, as on a GPU, whose printf buffer is circular\. To keep more, call "
                  r"cudaDeviceSetLimit\(cudaLimitPrintfFifoSize, bytes\) before the first launch\.")


def test_device_printf_beyond_the_buffer_is_dropped_with_one_note(build_dir):
    # 256 threads x 40000 lines of 26 bytes: about 10 million lines, 266 MB, 254 times the buffer.
    lines_per_thread = 40000
    r = sim(build_dir, PROGRAMS / "printf_flood.cu", "--", str(lines_per_thread))
    assert r.returncode == 0, r.stderr
    assert "Test PASSED" in r.stderr and "runaway" not in r.stderr, r.stderr
    out = r.stdout.encode()
    assert 0 < len(out) <= FIFO, len(out)
    assert len(NOTE.findall(r.stderr)) == 1, r.stderr
    limit, records, lines, lost = map(int, NOTE.search(r.stderr).groups())
    assert limit == FIFO and records == lines
    total = 256 * lines_per_thread
    assert records + r.stdout.count("\n") == total
    assert lost + len(out) == total * len("thread    0 line       0\n")
    # The buffer keeps the newest records (the simulator runs a block's threads one after another
    # between barriers, so the last thread's last line is the newest), and lost the oldest.
    assert r.stdout.endswith("thread  255 line   39999\n") and "thread    0 line       0\n" not in r.stdout
    # Raised with cudaDeviceSetLimit, the buffer keeps more.
    raised = sim(build_dir, PROGRAMS / "printf_flood.cu", "--", str(lines_per_thread), str(8 * FIFO))
    assert raised.returncode == 0, raised.stderr
    assert "printf buffer: %d bytes" % (8 * FIFO) in raised.stderr
    assert FIFO < len(raised.stdout.encode()) <= 8 * FIFO
    assert int(NOTE.search(raised.stderr).group(1)) == 8 * FIFO


def test_device_printf_within_the_buffer_is_printed_once_without_a_note(build_dir):
    r = sim(build_dir, PROGRAMS / "printf_flood.cu", "--", "10")
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("\n") == 256 * 10 and "thread  255 line       9\n" in r.stdout  # once, not once per schedule
    assert "cudasim: note" not in r.stderr, r.stderr
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
        "in another block, with no release and acquire between them.",
        "The writer's fence at {2} is __threadfence_block(): it orders the thread's writes only for the threads of its "
        "own block, so the atomic after it publishes nothing to another block. Use __threadfence() there"],
     ["@message-store", "@message-load", "@writer-fence-block"]),
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
    ("restrict_written.cu", [], 3, [
        "read-after-write between write at {0} and read-only-path (const __restrict__ src) read at {1}",
        "in another block of the same launch (the read-only path is not coherent with it).",
        "The kernel's parameter src is a pointer to const declared __restrict__",
        "drop __restrict__ (or const) from src, or split the work into two kernel launches."],
     ["@table-store", "@table-load"]),
    ("restrict_written.cu", ["--no-restrict"], 0, [], []),
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


def test_spin_wait_on_a_plain_flag_is_kept_and_reported_at_its_line(build_dir, tmp_path):
    """C++ lets a compiler delete a loop without side effects (the forward-progress rule), CUDA does
    not: compiled without -fno-finite-loops, this wait was deleted and the program ran on as if the
    flag were set. Kept, it spins, and the watchdog names the loop's line, the block and the thread."""
    (tmp_path / "wait.cu").write_text(
        "#include <cstdio>\n"
        "__global__ void wait_for_go(const int* go, int* out) {\n"
        "  while (*go == 0) {\n"  # line 3: a plain read, kept in a register: it never sees a change
        "  }\n"
        "  out[threadIdx.x] = 1;\n"
        "}\n"
        "int main() {\n"
        "  int *go, *out;\n"
        "  cudaMalloc(&go, sizeof(int)); cudaMemset(go, 0, sizeof(int));\n"
        "  cudaMalloc(&out, 32 * sizeof(int));\n"
        "  wait_for_go<<<1, 32>>>(go, out);\n"
        "  cudaDeviceSynchronize();\n"
        '  printf("unreachable: the wait ended\\n");\n'
        "  return 0;\n}\n")
    r = run_cli("sim", tmp_path / "wait.cu",
                env={"PUZZLES_BUILD_DIR": str(build_dir), "CUDASIM_STALL_SECONDS": "1"}, timeout=300)
    assert "unreachable" not in r.stdout, r
    assert r.returncode == 4, r
    assert re.search(r"runaway thread in kernel wait_for_go .*: block 0, thread 0 has run for 1 s without reaching a "
                     r"barrier or returning, looping at \S*wait\.cu:3\.", r.stderr), r
