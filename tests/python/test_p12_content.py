"""Content tests for puzzle p12 (sum reduction) and for the `bench` command.

p12: the solution's show output matches puzzles/p12/expected/, every variant of the solution
passes edge sizes, many blocks and a large size, the unsolved skeleton fails cleanly, the driver
refuses block sizes a variant cannot take, the planted bugs are there, and the lesson files
cover every variant.

bench: it needs a GPU (the CPU backend and the CPU driver build exit 2 with an explanation); a
fake driver that prints BENCH lines stands in for the GPU, to test the table, the derived
columns, the files it writes, the restart after a crashed variant and the chart.

Tests that run binaries need PUZZLES_BUILD_DIR (a build tree with p12_solution_cpu and p12_cpu
in bin/) and are skipped without it.
"""

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from driver_helpers import binary, result, run

from conftest import run_cli

REPO = Path(__file__).resolve().parents[2]
PUZZLE = REPO / "puzzles" / "p12"
SPEC = json.loads((PUZZLE / "puzzle.json").read_text(encoding="utf-8"))
VARIANTS = list(SPEC["variants"])
SHOW_LINES = ("config:", "input:", "out:", "expected:")
SEEDS = (1, 2)

sys.path.insert(0, str(REPO / "scripts"))


def edge_sizes(variant):
    """(n, tpb): 1, tpb-1, tpb, tpb+1 and 3*tpb+5 for every tpb of the variant."""
    cases = []
    for tpb in SPEC["variants"][variant]["tpb"]:
        for n in (1, tpb - 1, tpb, tpb + 1, 3 * tpb + 5):
            if n >= 1 and (n, tpb) not in cases:
                cases.append((n, tpb))
    return cases


def show_args(variant):
    show = SPEC["variants"][variant]["show"]
    return ["--variant", variant, "--n", show["n"], "--tpb", show["tpb"], "--show"]


# ---- the declaration ------------------------------------------------------------------------

def test_declaration_has_title_summary_and_the_nine_variants():
    assert SPEC["title"].strip() and SPEC["summary"].strip()
    assert VARIANTS == ["atomic", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "shuffle"]
    for name, v in SPEC["variants"].items():
        assert v["summary"].strip(), name
        assert v["max_n"] is None, name
        assert v["large_n"]["cpu"] == 1 << 20, name
        assert v["large_n"]["gpu"] >= 1 << 24, name
        # many blocks: a size the sweep adds that needs several passes (or many blocks) at a small tpb
        assert any(n >= 100000 for n, _ in v.get("extra_cases", [])), name


def test_block_sizes_match_what_each_kernel_needs():
    for name in ("k1", "k2", "k3", "k4"):
        tpbs = SPEC["variants"][name]["tpb"]
        assert all(t & (t - 1) == 0 for t in tpbs) and min(tpbs) <= 8 and 1024 in tpbs, name
        assert "power-of-two" in SPEC["variants"][name]["summary"], name
    for name in ("k5", "k6", "k7"):
        tpbs = SPEC["variants"][name]["tpb"]
        assert all(t & (t - 1) == 0 and t >= 64 for t in tpbs) and 64 in tpbs and 1024 in tpbs, name
        assert ">= 64" in SPEC["variants"][name]["summary"], name
    assert all(t % 32 == 0 for t in SPEC["variants"]["shuffle"]["tpb"])
    assert any(t & (t - 1) for t in SPEC["variants"]["shuffle"]["tpb"])  # not only powers of two
    assert 100 in SPEC["variants"]["atomic"]["tpb"]


def test_expected_files_cover_exactly_the_variants():
    files = sorted(p.stem for p in (PUZZLE / "expected").glob("*.txt"))
    assert files == sorted(VARIANTS)
    for name in VARIANTS:
        lines = (PUZZLE / "expected" / (name + ".txt")).read_text(encoding="utf-8").splitlines()
        assert [l.split(":")[0] + ":" for l in lines] == list(SHOW_LINES), name
        out = lines[2].split(":", 1)[1].strip()
        assert out == lines[3].split(":", 1)[1].strip(), name
        n = SPEC["variants"][name]["show"]["n"]
        assert out == "[%d]" % (n * (n - 1) // 2), name  # the show input is a[i] = i
        assert "SIZE = %d" % n in lines[0] and "TPB = %d" % SPEC["variants"][name]["show"]["tpb"] in lines[0]


def test_show_configs_show_the_host_loop():
    def config(name):
        return (PUZZLE / "expected" / (name + ".txt")).read_text(encoding="utf-8").splitlines()[0]
    assert "SIZE = 16, TPB = 8, blocks = 2, passes = 2" in config("k1")
    assert "SIZE = 32, TPB = 8, blocks = 2, passes = 2" in config("k4")  # two elements per thread
    assert "blocks = 2" in config("atomic") and "passes" not in config("atomic")


READMES = ["README.md", "README.ko.md"]


@pytest.mark.parametrize("readme", READMES)
def test_readmes_mention_every_variant_and_command(readme):
    text = (PUZZLE / readme).read_text(encoding="utf-8")
    for name in VARIANTS:
        assert "--" + name in text, "%s does not mention --%s" % (readme, name)
    for needle in ("python3 scripts/puzzle.py run p12 --k3", "--solution", "check p12", "bench p12",
                   "pixi run p12 --k3", "pixi run -e cuda bench p12", "__syncwarp", "volatile",
                   "__shfl_down_sync", "int4", "cub::DeviceReduce::Sum", "% of copy", "Brent"):
        assert needle in text, "%s does not mention `%s`" % (readme, needle)


@pytest.mark.parametrize("readme", READMES)
def test_readmes_paste_the_real_show_output(readme):
    text = (PUZZLE / readme).read_text(encoding="utf-8")
    for name in ("k1", "k5"):
        for line in (PUZZLE / "expected" / (name + ".txt")).read_text(encoding="utf-8").splitlines():
            assert line in text, "%s lacks the show line %r of --%s" % (readme, line, name)


@pytest.mark.parametrize("readme", READMES)
def test_readmes_quote_the_2007_table(readme):
    text = (PUZZLE / readme).read_text(encoding="utf-8")
    for gbps in ("2.083", "4.854", "9.741", "17.377", "31.289", "43.996", "62.671"):
        assert gbps in text, "%s lacks the G80 figure %s" % (readme, gbps)


def test_pixi_has_the_puzzle_and_bench_tasks():
    text = (REPO / "pixi.toml").read_text(encoding="utf-8")
    assert "[tasks.p12]" in text
    assert re.search(r'\[tasks\.bench\]\s*\ncmd = "python3 scripts/puzzle.py bench"', text)


# ---- the solution ---------------------------------------------------------------------------

@pytest.mark.parametrize("variant", VARIANTS)
def test_solution_show_matches_expected(variant):
    rc, out = run(binary("p12_solution_cpu"), *show_args(variant))
    assert rc == 0, out
    got = [l for l in out.splitlines() if l.startswith(SHOW_LINES)]
    want = (PUZZLE / "expected" / (variant + ".txt")).read_text(encoding="utf-8").splitlines()
    assert got == want


@pytest.mark.parametrize("variant", VARIANTS)
def test_solution_passes_edge_sizes_and_seeds(variant):
    sol = binary("p12_solution_cpu")
    failures = []
    for n, tpb in edge_sizes(variant):
        for seed in SEEDS:
            rc, out = run(sol, "--variant", variant, "--n", n, "--tpb", tpb, "--seed", seed)
            if rc != 0 or result(out)["verdict"] != "pass":
                failures.append("n=%d tpb=%d seed=%d rc=%d\n%s" % (n, tpb, seed, rc, out))
    assert not failures, "\n".join(failures[:3])


@pytest.mark.parametrize("variant,n,tpb,config", [
    ("k1", 100000, 8, "blocks = 12500, passes = 6"),
    ("k4", 100000, 8, "blocks = 6250, passes = 5"),
    ("k6", 100000, 64, "blocks = 782, passes = 3"),
    ("k6", 100000, 512, "blocks = 98, passes = 2"),
    ("k7", 1 << 20, 1024, None),
    ("shuffle", 1 << 20, 1024, None),
    ("shuffle", 100003, 96, None),
    ("atomic", 1 << 20, 256, "blocks = 4096"),
])
def test_solution_many_blocks_and_large_n(variant, n, tpb, config):
    rc, out = run(binary("p12_solution_cpu"), "--variant", variant, "--n", n, "--tpb", tpb, "--seed", 11)
    assert rc == 0, out
    if config:
        assert config in out, out


@pytest.mark.parametrize("variant,n,tpb,why", [
    ("k1", 100, 100, "power-of-two"),
    ("k4", 100, 48, "power-of-two"),
    ("k5", 100, 32, "at least 64"),
    ("k7", 100, 96, "at least 64"),
    ("shuffle", 100, 48, "multiple of 32"),
    ("k3", 1 << 29, 256, "2^29"),
])
def test_driver_refuses_block_sizes_outside_the_variant(variant, n, tpb, why):
    rc, out = run(binary("p12_solution_cpu"), "--variant", variant, "--n", n, "--tpb", tpb, "--seed", 1)
    assert rc == 2, out
    assert why in out


def test_the_launchers_keep_no_state_that_spoils_the_next_call():
    # The driver runs --shuffle twice on the same scratch space: its ticket must be back at 0.
    driver = (PUZZLE / "driver.cpp").read_text(encoding="utf-8")
    assert re.search(r'kShuffle = \{[^}]*, true\};', driver)


# ---- the skeleton ---------------------------------------------------------------------------

def test_shuffle_says_which_of_its_two_calls_failed():
    # The ticket left at 1 after the first call: right once, then wrong. The learner sees that
    # the second call failed and why the driver calls twice (issue 9, item 5).
    rc, out = run(binary("planted_p12_shuffle_ticket_not_reset_cpu"), *show_args("shuffle"))
    assert rc == 1, out
    assert "Call 1 of 2 returned the right sum; call 2 of 2, with d_work as call 1 left it, did not" in out
    assert "zero, for the next call" in out
    # The unsolved skeleton is already wrong on the first call, and is told so instead.
    rc, out = run(binary("p12_cpu"), *show_args("shuffle"))
    assert rc == 1, out
    assert "call 1 of 2, with d_work all zero, already returned a wrong sum" in out
    assert "Call 1 of 2 returned the right sum" not in out


@pytest.mark.parametrize("variant", VARIANTS)
def test_skeleton_fails_cleanly(variant):
    skel = binary("p12_cpu")
    tpb = SPEC["variants"][variant]["tpb"][1]
    for args in (show_args(variant), ["--variant", variant, "--n", 3 * tpb + 5, "--tpb", tpb, "--seed", 5]):
        rc, out = run(skel, *args)
        assert rc == 1, "expected a clean wrong answer (exit 1), got %d:\n%s" % (rc, out)
        assert "mismatch" in out
        assert result(out)["verdict"] == "fail"


def test_skeleton_leaves_only_fill_markers():
    skel = (PUZZLE / "p12.cu").read_text(encoding="utf-8")
    assert "END FILL" not in skel
    assert "atomicAdd(out" not in skel and "__shfl_down_sync(0x" not in skel
    assert skel.count("FILL ME IN") >= 15


# ---- planted bugs ---------------------------------------------------------------------------

PLANTED = sorted((REPO / "tests" / "planted" / "p12").glob("*.plant"))


def test_planted_bugs_cover_the_required_cases():
    names = {p.stem: p for p in PLANTED}
    required = {"k5_volatile_last_warp": ("--k5", "race"), "k3_no_load_guard": ("--k3", "error"),
                "k7_no_bound_check": ("--k7", "error"), "k3_no_barrier_in_loop": ("--k3", "race")}
    for name, (flag, expect) in required.items():
        assert name in names, name
        head = names[name].read_text(encoding="utf-8").splitlines()[:2]
        assert head == ["// planted: p12 %s" % flag, "// expect: %s" % expect], head
    volatile = names["k5_volatile_last_warp"].read_text(encoding="utf-8")
    assert "volatile int* sdata" in volatile and "sdata[tid] += sdata[tid + 16];" in volatile




# ---- bench: needs a GPU -----------------------------------------------------------------------

def test_bench_on_the_cpu_backend_explains_and_exits_2():
    r = run_cli("bench", "p12", "--backend", "cpu")
    assert r.returncode == 2, r
    assert "NVIDIA GPU" in r.stderr and "CPU simulator" in r.stderr
    assert "check" in r.stderr  # what to do instead


def test_bench_without_a_gpu_explains_and_exits_2(tmp_path):
    # An empty PATH hides nvidia-smi, as on a machine without a GPU.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    r = run_cli("bench", "p12", env={"PATH": str(bin_dir)})
    assert r.returncode == 2, r
    assert "lists no GPU" in r.stderr


def test_bench_of_the_cpu_driver_build_exits_2():
    sol = binary("p12_solution_cpu")
    rc, out = run(sol, "--bench", "--sizes", "1024")
    assert rc == 2, out
    assert "NVIDIA GPU" in out and "bench p12" in out
    r = run_cli("bench", "p12", "--binary", sol, "--out", "/nonexistent/never-written")
    assert r.returncode == 2, r


def test_bench_usage_errors():
    r = run_cli("bench")
    assert r.returncode == 2 and "bench needs a puzzle" in r.stderr
    r = run_cli("bench", "p12", "--k9", "--backend", "cpu")
    assert r.returncode == 2 and "no variant or option --k9" in r.stderr
    r = run_cli("bench", "p12", "--sizes", "lots", "--backend", "cpu")
    assert r.returncode == 2 and "--sizes" in r.stderr
    r = run_cli("bench", "--help")
    assert r.returncode == 0 and "--sizes" in r.stdout and "CUB" in r.stdout


def test_bench_is_listed_in_the_cli_usage():
    r = run_cli("--help")
    assert re.search(r"^\s+bench\s+time a puzzle's variants on a GPU", r.stdout, re.M), r.stdout


# ---- bench: a fake GPU driver -------------------------------------------------------------------

FAKE_BENCH = r'''#!{python}
"""Speaks the driver's --bench protocol with made-up times. CONFIG: {config!r}"""
import json, sys

CONFIG = {config!r}
args = sys.argv[1:]
if CONFIG.get("log"):
    with open(CONFIG["log"], "a") as f:
        f.write(json.dumps(args) + "\n")
if CONFIG.get("cpu"):
    print("error: --bench measures time on an NVIDIA GPU, and this is p12's CPU simulator build", file=sys.stderr)
    sys.exit(2)
opts = dict(zip(args[1::2], args[2::2]))
assert args[0] == "--bench"
sizes = [int(s) for s in opts["--sizes"].split(",")]
variants = opts.get("--variants", "atomic,k1,k2,k3,k4,k5,k6,k7,shuffle").split(",")
print("BENCH " + json.dumps({{"type": "device", "puzzle": "p12", "name": "NVIDIA Fake G100", "sm": "9.0", "sms": 100,
      "l2_bytes": 52428800, "memory_bytes": 85899345920, "cuda_runtime": 13000, "cuda_driver": 13000,
      "tpb": int(opts["--tpb"]), "runs": int(opts["--runs"]), "warmup": int(opts["--warmup"]), "sizes": sizes,
      "flush": opts["--flush"], "base": "k1", "baseline": "cub", "baseline_label": "cub::DeviceReduce::Sum",
      "reference_label": "G80 2007", "reference_note": "Harris 2007", "element_bytes": 4,
      "targets": [{{"variant": "k7", "fraction": 0.8, "n": 1 << 20}}, {{"variant": "shuffle", "fraction": 1.0, "n": 1 << 20}}]}}))
MS = CONFIG["ms"]
for n in sizes:
    for v in ["copy", "cub"] + variants:
        kind = "copy" if v == "copy" else "baseline" if v == "cub" else "variant"
        row = {{"type": "row", "variant": v, "kind": kind, "n": n, "tpb": 256, "status": "ok", "runs": 30,
               "bytes": 4.0 * n * (2 if kind == "copy" else 1), "reference_gbps": None, "l2_flushed": False, "message": ""}}
        if v in CONFIG.get("wrong", []):
            row.update(status="wrong", ms=None, gbps=None, message="got 3, expected 12")
        else:
            ms = MS[v] * n / (1 << 20)
            row.update(ms=ms, ms_min=ms, ms_max=ms, gbps=row["bytes"] / (ms * 1e-3) / 1e9)
        print("BENCH " + json.dumps(row))
        sys.stdout.flush()
        if v == CONFIG.get("crash"):
            print("BENCH " + json.dumps({{"type": "abort", "variant": v, "n": n, "message": "cudaErrorIllegalAddress"}}))
            sys.exit(4)
sys.exit(0)
'''

# Milliseconds at n = 2^20: k1 = 1.0, each kernel faster; CUB 0.1.
FAKE_MS = {"copy": 0.2, "cub": 0.1, "atomic": 2.0, "k1": 1.0, "k2": 0.5, "k3": 0.25, "k4": 0.2, "k5": 0.16,
           "k6": 0.125, "k7": 0.1176, "shuffle": 0.1}


@pytest.fixture
def fake_bench(tmp_path):
    counter = [0]

    def make(**config):
        counter[0] += 1
        config.setdefault("ms", FAKE_MS)
        path = tmp_path / ("fake_bench_%d.py" % counter[0])
        path.write_text(FAKE_BENCH.format(python=sys.executable, config=config), encoding="utf-8")
        path.chmod(0o755)
        return path

    return make


def bench_files(out_dir):
    md = sorted(out_dir.glob("*.md"))
    js = sorted(out_dir.glob("*.json"))
    assert len(md) == 1 and len(js) == 1, list(out_dir.iterdir())
    return md[0].read_text(encoding="utf-8"), json.loads(js[0].read_text(encoding="utf-8")), js[0]


def test_bench_collects_rows_into_a_table_and_files(fake_bench, tmp_path):
    log = tmp_path / "calls.log"
    out_dir = tmp_path / "results"
    r = run_cli("bench", "p12", "--solution", "--binary", fake_bench(log=str(log)), "--sizes", "2^20", "--runs", "25",
                "--out", out_dir, "--no-chart")
    assert r.returncode == 0, r
    calls = [json.loads(l) for l in log.read_text().splitlines()]
    assert calls == [["--bench", "--sizes", "1048576", "--variants", "atomic,k1,k2,k3,k4,k5,k6,k7,shuffle",
                      "--tpb", "256", "--runs", "25", "--warmup", "3", "--flush", "auto", "--seed", "1"]]
    assert "BENCH" not in r.stdout  # machine lines are hidden
    assert re.search(r"target: k7 >= 80 % of cub at n = 1048576 \(2\^20\): met \(85\.0 %\)", r.stdout), r.stdout
    assert "target: shuffle >= 100 % of cub at n = 1048576 (2^20): met (100.0 %)" in r.stdout
    md, data, js = bench_files(out_dir)
    assert js.name.startswith("p12-fake-g100-") and js.name.endswith(".json") and "learner" not in js.name
    rows = {(row["variant"], row["n"]): row for row in data["rows"]}
    k3 = rows[("k3", 1 << 20)]
    assert k3["step"] == pytest.approx(2.0) and k3["cumulative"] == pytest.approx(4.0)
    assert k3["pct_baseline"] == pytest.approx(40.0)
    # copy moves 8n bytes in 0.2 ms; k3 reads 4n bytes in 0.25 ms: 0.4 of the copy's speed
    assert k3["pct_copy"] == pytest.approx(40.0)
    assert rows[("atomic", 1 << 20)]["step"] is None and rows[("atomic", 1 << 20)]["cumulative"] == pytest.approx(0.5)
    assert [t["met"] for t in data["targets"]] == [True, True]
    assert data["device"]["name"] == "NVIDIA Fake G100" and data["solution"] is True
    assert "| `k3` | 0.2500 | 16.8 | 2.00x | 4.00x | 40.0 % | 40.0 % |" in md, md
    assert "| variant | ms | GB/s | step | vs k1 | % of cub | % of copy | G80 2007 GB/s |" in md
    assert "## n = 1048576 (2^20), 4.0 MiB" in md


def test_bench_reports_wrong_results_untimed_and_fails(fake_bench, tmp_path):
    out_dir = tmp_path / "results"
    r = run_cli("bench", "p12", "--binary", fake_bench(wrong=["k2", "k7"]), "--sizes", "2^20", "--out", out_dir,
                "--no-chart")
    assert r.returncode == 1, r
    assert "k2" in r.stdout and "got 3, expected 12" in r.stdout
    md, data, js = bench_files(out_dir)
    assert js.name.endswith("-learner.json")  # the learner's file, not the reference results
    assert "| `k2` | wrong result, not timed: got 3, expected 12 |" in md
    k3 = next(row for row in data["rows"] if row["variant"] == "k3")
    assert k3["step"] == pytest.approx(4.0)  # over k1: k2 was not timed
    assert [t["met"] for t in data["targets"]] == [None, True]
    assert "`k7` at least 80 % of cub at n = 1048576 (2^20): not measured" in md


def test_bench_restarts_without_a_variant_that_crashed(fake_bench, tmp_path):
    log = tmp_path / "calls.log"
    r = run_cli("bench", "p12", "--k3", "--k4", "--k5", "--binary", fake_bench(crash="k4", log=str(log)),
                "--sizes", "1024,2048", "--out", tmp_path / "res", "--no-chart")
    assert r.returncode == 1, r
    calls = [json.loads(l) for l in log.read_text().splitlines()]
    assert [c[2] for c in calls] == ["1024,2048", "1024,2048"]
    assert [c[4] for c in calls] == ["k3,k4,k5", "k3,k5"]
    assert "restarting without k4" in r.stdout
    md, data, _ = bench_files(tmp_path / "res")
    rows = {(row["variant"], row["n"]): row for row in data["rows"]}
    assert rows[("k5", 1024)]["status"] == "ok" and rows[("k5", 2048)]["status"] == "ok"
    assert rows[("k4", 2048)]["status"] == "error" and "crashed" in rows[("k4", 2048)]["message"]


def test_bench_passes_a_refusal_of_the_driver_through(fake_bench, tmp_path):
    r = run_cli("bench", "p12", "--binary", fake_bench(cpu=True), "--out", tmp_path / "res")
    assert r.returncode == 2, r
    assert "NVIDIA GPU" in r.output
    assert not (tmp_path / "res").exists() or not list((tmp_path / "res").iterdir())


def test_bench_chart_draws_a_png(fake_bench, tmp_path):
    if importlib.util.find_spec("matplotlib") is None:
        pytest.skip("matplotlib is not installed")
    out_dir = tmp_path / "results"
    r = run_cli("bench", "p12", "--solution", "--binary", fake_bench(wrong=["k2"]), "--sizes", "2^20,2^22",
                "--out", out_dir)
    assert r.returncode == 1, r  # k2 was wrong; the rest is still written and drawn
    pngs = list(out_dir.glob("*.png"))
    assert len(pngs) == 1 and pngs[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", r


def test_bench_chart_usage():
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "bench_chart.py")], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True)
    assert proc.returncode == 2 and "RESULTS.json OUT.png" in proc.stderr
