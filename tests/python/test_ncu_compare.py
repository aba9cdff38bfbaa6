"""scripts/ncu_compare.py: ncu's CSV, launch matching, the rows, and the runs that need no GPU."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from driver_helpers import binary

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "ncu_compare.py"
sys.path.insert(0, str(REPO / "scripts"))

import ncu_compare  # noqa: E402
from puzzlelib import build as bld  # noqa: E402
from puzzlelib import profile_data  # noqa: E402

# `ncu --csv --page raw --print-units base` as Nsight Compute writes it: its notes, the program's
# own output, a header row, a units row, one row per kernel launch (quoted, some numbers with
# thousands separators).
NCU_CSV = '''==PROF== Connected to process 4242 (/x/build-ncu-compare/bin/p12_solution_gpu)
RESULT {"verdict": "pass"}
==PROF== Disconnected from process 4242
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","gpu__time_duration.sum","l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum","smsp__sass_inst_executed_op_shared_ld.sum","smsp__thread_inst_executed_per_inst_executed.ratio"
"","","","","","","","","","","","nsecond","","",""
"0","4242","p12_solution_gpu","127.0.0.1","void reduce_k6<256u>(const int *, int *, int)","1","7","(256, 1, 1)","(1024, 1, 1)","0","9.0","5,120","8,192","36,864","29.75"
"1","4242","p12_solution_gpu","127.0.0.1","reduce_k6","1","7","(256, 1, 1)","(4, 1, 1)","0","9.0","2304","32","n/a","31.5"
'''


def test_parse_ncu_csv_reads_every_launch_in_order():
    launches = ncu_compare.parse_ncu_csv(NCU_CSV)
    assert [(l["id"], l["kernel"]) for l in launches] == [(0, "reduce_k6"), (1, "reduce_k6")]
    m = launches[0]["metrics"]
    assert m["gpu__time_duration.sum"] == 5120
    assert m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] == 8192
    assert m["smsp__sass_inst_executed_op_shared_ld.sum"] == 36864
    assert m["smsp__thread_inst_executed_per_inst_executed.ratio"] == 29.75
    assert launches[1]["metrics"]["smsp__sass_inst_executed_op_shared_ld.sum"] is None  # n/a
    assert launches[1]["name"] == "reduce_k6"


def test_parse_ncu_csv_without_a_header_has_no_launches():
    assert ncu_compare.parse_ncu_csv("==PROF== No kernels were profiled.\n") == []


def record(launch, kernel, shared_ld_inst, wavefronts, ideal, atom_inst):
    return profile_data.parse_launch({
        "launch": launch, "kernel": kernel, "at": "/x/p12.cu:10", "grid": [4, 1, 1], "block": [256, 1, 1],
        "shmem": 0, "blocks": 4, "warps": 32, "threads": 1024, "block_barriers": 0,
        "accesses": [
            # Two code addresses of one line: their counts add up.
            {"at": "/x/p12.cu:5", "pc": 1, "op": "shared_ld", "inst": shared_ld_inst // 2, "lanes": 1,
             "wavefronts": wavefronts // 2, "ideal": ideal // 2},
            {"at": "/x/p12.cu:5", "pc": 2, "op": "shared_ld", "inst": shared_ld_inst // 2, "lanes": 1,
             "wavefronts": wavefronts // 2, "ideal": ideal // 2},
            {"at": "/x/p12.cu:7", "pc": 3, "op": "global_atom", "inst": atom_inst, "lanes": 1, "sectors": 1,
             "ideal_sectors": 1, "bytes": 4, "same_addr_max": 1, "serial": 1},
        ]})


def by_counter(rows, launch=0):
    return {r["counter"]: r for r in rows if r["launch"] == launch}


def test_rows_compare_matched_launches_per_counter():
    sim = [record(0, "reduce_k6", 36864, 73728, 36864, 4), record(1, "reduce_k6", 40, 40, 40, 0)]
    gpu = ncu_compare.parse_ncu_csv(NCU_CSV)
    gpu[0]["metrics"][ncu_compare.ATOM] = 1.0
    gpu[0]["metrics"][ncu_compare.RED] = 3.0
    rows = ncu_compare.rows_for({"puzzle": "p12", "variant": "k6", "n": 262144, "tpb": 256}, sim, gpu)
    first = by_counter(rows)
    ld = first["smsp__sass_inst_executed_op_shared_ld.sum"]
    assert (ld["sim"], ld["ncu"], ld["diff_pct"], ld["ok"]) == (36864, 36864, 0.0, True)
    # wavefronts - ideal; ncu did not collect it in this sample
    assert first["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"]["sim"] == 36864
    assert first["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"]["ok"] is None
    # the simulator's 4 atomics against ATOM + RED
    assert (first[ncu_compare.ATOM_RED]["sim"], first[ncu_compare.ATOM_RED]["ncu"]) == (4, 4.0)
    assert first["gpu__time_duration.sum"]["sim"] is None and first["gpu__time_duration.sum"]["ncu"] == 5120
    second = by_counter(rows, 1)["smsp__sass_inst_executed_op_shared_ld.sum"]
    assert second["sim"] == 40 and second["ncu"] is None and second["ok"] is None


def test_a_shared_load_mismatch_names_the_compiler_gap():
    sim = [record(0, "reduce_k6", 36864 + 2048, 36864 + 2048, 36864 + 2048, 0)]
    gpu = ncu_compare.parse_ncu_csv(NCU_CSV)[:1]
    rows = ncu_compare.rows_for({"puzzle": "p12", "variant": "k6", "n": 262144, "tpb": 256}, sim, gpu)
    ld = by_counter(rows)["smsp__sass_inst_executed_op_shared_ld.sum"]
    assert ld["ok"] is False
    assert abs(ld["diff_pct"] - 100.0 * 2048 / 36864) < 1e-9
    assert "compiler" in ld["why"]


def test_launches_are_matched_by_kernel_name_and_order():
    sim = [record(0, "scan_blocks", 2, 2, 2, 0), record(1, "add_offsets", 2, 2, 2, 0)]
    gpu = [{"id": 0, "name": "scan_blocks", "kernel": "scan_blocks", "metrics": {}},
           {"id": 1, "name": "DeviceScanKernel", "kernel": "DeviceScanKernel", "metrics": {}},
           {"id": 2, "name": "add_offsets", "kernel": "add_offsets", "metrics": {}}]
    pairs = [(name, k, s is not None, g is not None) for name, k, s, g in ncu_compare.match_launches(sim, gpu)]
    assert pairs == [("scan_blocks", 0, True, True), ("add_offsets", 0, True, True),
                     ("DeviceScanKernel", 0, False, True)]


def test_cases_use_an_accepted_tpb_and_the_one_block_limit():
    puzzles = ncu_compare.discover(REPO)
    bk = puzzles["p14"].variants["brent-kung"]  # max_n 2*tpb
    assert ncu_compare.cases_for(bk, None) == [(512, 256), (387, 256)]
    ms = puzzles["p29"].variants["multi-stage"]  # tpb [256], any n
    assert ncu_compare.cases_for(ms, None) == [(262144, 256), (100003, 256)]
    assert ncu_compare.cases_for(bk, [100003]) == [(512, 256)]


def run_script(*args):
    return subprocess.run([sys.executable, str(SCRIPT)] + [str(a) for a in args], cwd=str(REPO),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=600)


@pytest.mark.skipif(bld.gpu_present(), reason="this machine has a GPU")
def test_without_a_gpu_it_exits_2_and_says_what_is_missing(tmp_path):
    proc = run_script("--out", tmp_path)
    assert proc.returncode == 2, proc.stdout
    assert "missing a GPU" in proc.stdout and "--sim-only" in proc.stdout


def test_sim_only_writes_the_simulators_counts(tmp_path):
    binary("p14_solution_cpu")  # skips the test without a build tree
    build = os.environ["PUZZLES_BUILD_DIR"]
    proc = run_script("--sim-only", "--build", build, "--puzzles", "p14", "--variants", "brent-kung",
                      "--sizes", "512", "--out", tmp_path, "--jobs", "1")
    assert proc.returncode == 0, proc.stdout
    # 512 elements, 256 threads: every thread loads 2 ints from global memory, coalesced: 2 requests
    # per warp of 8, 4 sectors each.
    row = [l for l in proc.stdout.splitlines() if "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum" in l]
    # (the row: puzzle, variant, n, tpb, kernel, #launch, counter, simulator, ncu, ...)
    assert len(row) == 1 and row[0].split()[7] == "16", proc.stdout
    sectors = [l for l in proc.stdout.splitlines() if "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum" in l]
    assert sectors[0].split()[7] == "64"
    reports = list(tmp_path.glob("ncu-compare-sim-only-*.md"))
    assert len(reports) == 1 and "Known gaps" in reports[0].read_text()
    raw = list((tmp_path / "raw").glob("p14-brent-kung-n512-tpb256.sim.jsonl"))
    assert raw and json.loads(raw[0].read_text().splitlines()[0])["kernel"]
