"""`profile` (issue 18): the simulator's memory-pipeline counters per kernel and source line, the top
cost in words, the variants' story, --json against docs/profile-schema.json, and exit codes.
Its Korean (`--lang ko`): no English sentence left in the terminal output, the page or the help,
the same figures as the English; and the flags of check's replay line.

The expected counters are computed here from the kernels' index formulas with a bank model of our
own (32 banks of 4-byte words; a pass serves one word per bank), not read back from the program.
Runs against the test build (PUZZLES_BUILD_DIR), like the README samples; the tests of the
Korean words and of the flags also run without a build, on a fake driver that writes profile
records (FAKE_PROFILED_DRIVER).
"""

import html
import json
import os
import re
import subprocess
import sys

import pytest

from conftest import HANGUL, REPO, read_log, run_cli

from puzzlelib.catalog import read_po
from puzzlelib.common import width
from puzzlelib.grade_report import validate

WIDTH = 100


def profile(*args, tmp_path=None):
    """(exit code, stdout lines, the --json data or None)."""
    if not os.environ.get("PUZZLES_BUILD_DIR"):
        pytest.skip("set PUZZLES_BUILD_DIR to a build tree (python3 scripts/puzzle.py test does)")
    args = [str(a) for a in args]
    data_file = None
    if tmp_path is not None:
        data_file = tmp_path / "profile.json"
        args += ["--json", str(data_file)]
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    r = subprocess.run([sys.executable, str(REPO / "scripts" / "puzzle.py"), "profile"] + args, cwd=str(REPO),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, universal_newlines=True,
                       encoding="utf-8", timeout=600)
    data = json.loads(data_file.read_text()) if data_file is not None and data_file.is_file() else None
    return r.returncode, r.stdout.splitlines(), data


def line_of(path, text, after=0):
    """The 1-based number of the first source line after line `after` that contains `text`."""
    lines = (REPO / path).read_text(encoding="utf-8").splitlines()
    return next(i + 1 for i, l in enumerate(lines) if i + 1 > after and text in l)


def warp_costs(active_index):
    """Warp-level shared-memory cost of one access: active_index(tid) -> word index or None (lane
    inactive), for the threads of a block. Returns (instructions, lanes, wavefronts)."""
    inst = lanes = wavefronts = 0
    by_warp = {}
    for tid, word in active_index:
        if word is not None:
            by_warp.setdefault(tid // 32, set()).add(word)
            lanes += 1
    for words in by_warp.values():
        per_bank = {}
        for w in words:
            per_bank[w % 32] = per_bank.get(w % 32, 0) + 1
        inst += 1
        wavefronts += max(per_bank.values())
    return inst, lanes, wavefronts


def add(total, part):
    return tuple(a + b for a, b in zip(total, part))


def site(variant, line, op):
    found = [s for s in variant["sites"] if s["line"] == line and s["op"] == op]
    assert len(found) == 1, (line, op, variant["sites"])
    return found[0]


# ---- p12 --k2 at one block of 256: 2-way ... 8-way conflicts, counted by hand ----------------------

def k2_expected(tpb):
    """The loop of reduce_k2: for s = 1, 2, 4, ...: index = 2*s*tid, active while index < tpb;
    it loads sdata[index] and sdata[index + s] and stores sdata[index]."""
    first = second = (0, 0, 0)
    s = 1
    while s < tpb:
        first = add(first, warp_costs((t, 2 * s * t if 2 * s * t < tpb else None) for t in range(tpb)))
        second = add(second, warp_costs((t, 2 * s * t + s if 2 * s * t < tpb else None) for t in range(tpb)))
        s *= 2
    return first, second


def test_k2_one_block_counts_the_conflicts_of_each_stride(tmp_path):
    code, lines, data = profile("p12", "--k2", "--solution", "--n", 256, "--tpb", 256, tmp_path=tmp_path)
    assert code == 0, lines
    v = data["variants"][0]
    assert len(v["launches"]) == 1 and v["launches"][0]["block"] == [256, 1, 1]
    src = "solutions/p12/p12.cu"
    loop = line_of(src, "if (index < blockDim.x) sdata[index] += sdata[index + s];")
    first, second = k2_expected(256)
    # By hand: s=1 4 warps 2-way, s=2 2 warps 4-way, s=4, 8, 16 one warp 8-way, then 4, 2, 1 lanes.
    assert first == (12, 255, 8 + 8 + 8 + 8 + 8 + 4 + 2 + 1)
    ld, st = site(v, loop, "shared_ld"), site(v, loop, "shared_st")
    assert (ld["inst"], ld["lanes"], ld["wavefronts"]) == add(first, second)
    assert (st["inst"], st["lanes"], st["wavefronts"]) == first
    assert ld["wavefronts"] - ld["ideal"] == 2 * (47 - 12)
    # The load of the block's 256 ints: 8 warps, 4 sectors each.
    load = line_of(src, "sdata[tid] = i < n ? in[i] : 0;", after=loop - 10)
    gl = site(v, load, "global_ld")
    assert (gl["inst"], gl["sectors"], gl["ideal_sectors"]) == (8, 32, 32)
    barrier = [b["inst"] for b in v["barriers"] if b["line"] == loop + 1]
    assert barrier == [8 * 8]  # 8 trips of the loop, one barrier per warp each
    text = "\n".join(lines)
    assert "p12.cu:%d  if (index < blockDim.x)" % loop in text
    assert "shared ld:         24 inst, 21.2 lanes, 94 wavefronts (3.92/inst), 70 bank conflicts" in text
    assert v["top_cost_kind"] == "bank conflicts"
    assert "3.9-way bank conflicts at p12.cu:%d" % loop in v["top_cost"]
    # Extra wavefronts of one of the two loads by lane stride (2s words): s=1 4, s=2 6, s=4, 8, 16
    # 7 each, s=32 3, s=64 1 (of 35); the sentence names the strides that hold 5 % or more.
    assert "the lanes of a warp touch words 2 to 64 apart" in " ".join(v["top_cost"].split())
    assert all(len(l) <= WIDTH for l in lines), [l for l in lines if len(l) > WIDTH]


# ---- p14 --brent-kung: the padded tree's few conflicts ------------------------------------------

def padded(i):
    return i + (i >> 5)  # CONFLICT_FREE_OFFSET: one spare word after every 32


def test_brent_kung_up_sweep_matches_the_padded_index_formulas(tmp_path):
    tpb, n = 64, 128
    code, lines, data = profile("p14", "--brent-kung", "--solution", "--n", n, "--tpb", tpb, tmp_path=tmp_path)
    assert code == 0, lines
    v = data["variants"][0]
    src = "solutions/p14/p14.cu"
    up = line_of(src, "temp[right] += temp[left];")
    expect_right = expect_left = (0, 0, 0)
    offset, d = 1, n // 2
    while d > 0:
        active = [(t, t < d) for t in range(tpb)]
        expect_right = add(expect_right, warp_costs((t, padded(offset * (2 * t + 2) - 1) if a else None)
                                                    for t, a in active))
        expect_left = add(expect_left, warp_costs((t, padded(offset * (2 * t + 1) - 1) if a else None)
                                                  for t, a in active))
        offset *= 2
        d //= 2
    ld, st = site(v, up, "shared_ld"), site(v, up, "shared_st")
    assert (ld["inst"], ld["lanes"], ld["wavefronts"]) == add(expect_right, expect_left)
    assert (st["inst"], st["lanes"], st["wavefronts"]) == expect_right
    # Without the padding the same tree would conflict far more: the padding is what the lesson shows.
    unpadded = (0, 0, 0)
    offset, d = 1, n // 2
    while d > 0:
        unpadded = add(unpadded, warp_costs((t, offset * (2 * t + 2) - 1 if t < d else None) for t in range(tpb)))
        offset *= 2
        d //= 2
    assert unpadded[2] > expect_right[2]
    assert "p14.cu:%d  temp[right] += temp[left];" % up in "\n".join(lines)


# ---- the story: k1 idle lanes, k2 bank conflicts, k3 neither --------------------------------------

@pytest.fixture(scope="module")
def story(tmp_path_factory):
    return profile("p12", "--k1", "--k2", "--k3", "--solution", "--n", 65536, "--tpb", 256,
                   tmp_path=tmp_path_factory.mktemp("story"))


def test_the_story_names_each_kernels_cost_at_its_line(story):
    code, lines, data = story
    assert code == 0, lines
    src = "solutions/p12/p12.cu"
    k1_line = line_of(src, "if (tid % (2 * s) == 0)")
    k2_line = line_of(src, "if (index < blockDim.x)")
    k3_line = line_of(src, "if (tid < s) sdata[tid] += sdata[tid + s];", after=k2_line)
    k1, k2, k3 = data["variants"]
    assert (k1["top_cost_kind"], k1["costs"][0]["line"]) == ("idle lanes", k1_line)
    assert "lanes idle" in k1["top_cost"] and "p12.cu:%d" % k1_line in k1["top_cost"]
    assert k1["totals"]["conflicts"] == 0  # k1's cost is instructions, not conflicts
    assert (k2["top_cost_kind"], k2["costs"][0]["line"]) == ("bank conflicts", k2_line)
    assert k3["totals"]["conflicts"] == 0 and k3["top_cost_kind"] is None
    assert "bank conflicts" in k3["change"] and "-> 0" in k3["change"]
    assert "p12.cu:%d had them; p12.cu:%d" % (k2_line, k3_line) in k3["change"]
    # The same additions: k2 and k3 issue as many shared instructions, k1 many more.
    assert k2["totals"]["shared"] == k3["totals"]["shared"] < k1["totals"]["shared"]
    assert k1["modeled_us"] > k2["modeled_us"] > k3["modeled_us"]
    text = "\n".join(lines)
    assert "the story, one row per variant:" in text
    assert "--k3 vs --k2: bank conflicts" in text
    assert all(len(l) <= WIDTH for l in lines), [l for l in lines if len(l) > WIDTH]


def test_json_matches_the_schema(story):
    _, _, data = story
    validate(data, json.loads((REPO / "docs" / "profile-schema.json").read_text(encoding="utf-8")))
    assert [v["variant"] for v in data["variants"]] == ["k1", "k2", "k3"]


def test_html_page_is_self_contained(tmp_path):
    page = tmp_path / "p.html"
    code, lines, _ = profile("p12", "--k2", "--solution", "--n", 512, "--tpb", 256, "--html", page)
    assert code == 0, lines
    html = page.read_text(encoding="utf-8")
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    assert "http://" not in html and "https://" not in html
    assert "sdata[index] += sdata[index + s]" in html and "bank conflicts" in html


# ---- exit codes ---------------------------------------------------------------------------------

def test_usage_errors_exit_2():
    code, _, _ = profile("p12", "--k9")
    assert code == 2
    code, _, _ = profile("p12")
    assert code == 2


def test_a_failing_kernel_exits_1_and_points_at_check():
    # The learner's skeleton (no --solution) does not compute the sum yet.
    code, lines, _ = profile("p12", "--k2", "--n", 256, "--tpb", 256)
    text = "\n".join(lines)
    if code == 0:
        pytest.skip("puzzles/p12/p12.cu solves --k2 in this tree")
    assert code == 1, text
    assert "failed" in text and "check p12 --k2" in text


# ---- profile_data's corrections (no build needed) -----------------------------------------------

def record(accesses, launch=0):
    return {"launch": launch, "kernel": "k", "at": "/x/k.cu:9", "grid": [2, 1, 1], "block": [32, 1, 1], "shmem": 0,
            "blocks": 2, "warps": 2, "threads": 64, "block_barriers": 0, "accesses": accesses, "barriers": [],
            "collectives": []}


def global_ld(pc, sectors, ideal, at="/x/k.cu:5"):
    return {"at": at, "pc": pc, "op": "global_ld", "inst": 2, "lanes": 64, "sectors": sectors,
            "ideal_sectors": ideal, "bytes": ideal * 32}


def test_the_members_of_an_int4_load_are_one_request():
    from puzzlelib import profile_data as pd
    # 32 lanes x 16 bytes: each member (4 bytes at a 16-byte stride) touches all 16 sectors; their
    # bytes fit in 4 each; 2 warps.
    members = [global_ld(pc, 2 * 16, 2 * 4) for pc in (1, 2, 3, 4)]
    site, = pd.parse_launch(record(members)).sites
    assert (site.counts["inst"], site.counts["sectors"], site.counts["ideal_sectors"]) == (2, 32, 32)
    # Two coalesced loads of one line (in[i] + in[i + blockDim.x]) stay two requests each warp.
    site, = pd.parse_launch(record([global_ld(1, 8, 8), global_ld(2, 8, 8)])).sites
    assert (site.counts["inst"], site.counts["sectors"]) == (4, 16)


def test_a_variant_called_twice_is_counted_once():
    from puzzlelib import profile_data as pd
    a = [pd.parse_launch(record([global_ld(1, 8, 8)], i)) for i in range(2)]
    assert pd.one_call(a) == a[:1]
    b = [pd.parse_launch(record([global_ld(1, 8, 8)], 0)), pd.parse_launch(record([global_ld(1, 4, 4)], 1))]
    assert pd.one_call(b) == b


# ---- Korean: a detector of English sentences -----------------------------------------------------

# What Korean profile output keeps in English: the course notes' terms, the names CUDA and Nsight
# Compute give to what is counted, the profile's units and its column abbreviations (the legend
# explains them in Korean), and the title of the docs' section it cites.
ALLOWED_TERMS = [
    "Bank Conflict", "Warp Divergence", "Race Condition", "shared memory", "global memory", "shared", "global",
    "thread", "block", "warp", "grid", "kernel", "lane", "lanes", "wavefront", "wavefronts", "sector", "sectors",
    "bank", "request", "barrier", "atomic", "launch", "stride", "word", "issue", "idle", "uncoalesced", "way",
    "byte", "us", "variant", "seed", "profile", "profiler", "counter", "loop", "solution", "puzzle", "build",
    "network", "replay", "check", "run", "CPU simulator", "simulator", "CPU", "GPU", "NVIDIA", "Nsight Compute",
    "shfl_down", "wavefr", "atom", "bar", "The cost model",
]
MIN_WORDS = 3
_TERMS = re.compile("|".join(r"(?<![A-Za-z])%s(?![A-Za-z])" % re.escape(t)
                             for t in sorted(ALLOWED_TERMS, key=len, reverse=True)), re.I)
_CODE_SPAN = re.compile(r"`[^`]*`")
# A source line of the listing ("  solutions/p12/p12.cu:82  if (tid % ...") is code after its site.
_SOURCE_LINE = re.compile(r"^\s*\S+\.(?:cu|cuh|cpp|h):\d+\s\s.*$")
# A token only code, paths, numbers and options have.
_CODE_TOKEN = re.compile(r"[/_\[\]{}<>=#*+|~\\\d]|\w\.\w|::|^-")
_WORD = re.compile(r"[A-Za-z]{2,}(?:'[a-z]+)?")
_GLUE = re.compile(r"^[\s,;:'\"()-]*$")


def prose(line):
    """`line` without code, paths, numbers, flags, single letters and allowed terms."""
    if _SOURCE_LINE.match(line):
        return ""
    line = _CODE_SPAN.sub(" ", line)
    line = " ".join(" " if _CODE_TOKEN.search(tok.strip(",.;:!?()'\"")) else tok for tok in line.split())
    line = re.sub(r"(?<![A-Za-z])[A-Za-z](?![A-Za-z])", " ", line)  # `x` of grid x block, "a"
    return _TERMS.sub(" ", line)


def english_runs(text):
    """The runs of MIN_WORDS or more English words, with nothing but spaces and the punctuation of a
    sentence between them, left after prose() takes away what may stay English."""
    runs = []
    for raw in text.splitlines():
        line = prose(raw)
        run = []
        for w in _WORD.finditer(line):
            if run and not _GLUE.match(line[run[-1].end():w.start()]):
                if len(run) >= MIN_WORDS:
                    runs.append(line[run[0].start():run[-1].end()])
                run = []
            run.append(w)
        if len(run) >= MIN_WORDS:
            runs.append(line[run[0].start():run[-1].end()])
    return runs


def page_text(page):
    """The words a browser shows of a page: no style, no tags, entities decoded, a line per block."""
    page = re.sub(r"<style>.*?</style>", " ", page, flags=re.S)
    page = re.sub(r"</?(?:h1|h2|p|tr|pre|table|title|body|head)[^>]*>", "\n", page)
    page = re.sub(r"<[^>]*>", " ", page)
    return html.unescape(page)


def test_the_detector_finds_english_and_passes_korean_with_terms():
    assert english_runs("top cost: no bank conflicts, idle lanes or uncoalesced accesses worth naming")
    assert english_runs("  the story, one row per variant:")
    assert english_runs("p12 --k1 failed at n=256 tpb=256 seed=1: the lanes of a warp touch words")
    assert not english_runs("가장 큰 비용: p12.cu:114에서 3.9-way Bank Conflict: 한 warp의 lane들이 2~64 word")
    assert not english_runs("  solutions/p12/p12.cu:82  if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];")
    assert not english_runs("  kernel        grid x block  sh읽기 sh쓰기 lane wavefr 충돌 gl요청 sector")
    assert not english_runs("`python3 scripts/puzzle.py check p12 --k2 --solution` 명령으로 확인하세요")


def numbers(text):
    """The figures of a text, in order of size: what must read the same in both languages."""
    return sorted(re.findall(r"\d+(?:[.,]\d+)*", text))


def display_width_ok(lines):
    return [l for l in lines if width(l) > WIDTH]


# ---- Korean: p12's story, the course notes' lesson ----------------------------------------------

@pytest.fixture(scope="module")
def story_in_both(tmp_path_factory):
    """The issue's command, `profile p12 --k1 --k2 --k3 --solution`, in English and in Korean, with
    its page: {lang: (exit code, stdout lines, page)}."""
    out = {}
    d = tmp_path_factory.mktemp("story-lang")
    for lang in ("en", "ko"):
        page = d / ("story-%s.html" % lang)
        code, lines, _ = profile("p12", "--k1", "--k2", "--k3", "--solution", "--lang", lang, "--html", page)
        out[lang] = (code, lines, page.read_text(encoding="utf-8") if page.is_file() else "")
    return out


def test_the_korean_story_has_no_english_sentence(story_in_both):
    code, lines, page = story_in_both["ko"]
    assert code == 0, lines
    text = "\n".join(lines)
    assert english_runs(text) == [], english_runs(text)
    assert english_runs(page_text(page)) == [], english_runs(page_text(page))
    assert '<html lang="ko">' in page
    assert display_width_ok(lines) == []
    # The detector is not blind: the English run of the same command is full of English sentences.
    assert len(english_runs("\n".join(story_in_both["en"][1]))) > 10


def test_the_korean_story_tells_the_notes_lesson(story_in_both):
    """k1: idle lanes of a divergent `if` (Warp Divergence); k2: Bank Conflict from the strided index;
    k3: no conflict left, at the line that does the work now."""
    _, lines, page = story_in_both["ko"]
    src = "solutions/p12/p12.cu"
    k1_line = line_of(src, "if (tid % (2 * s) == 0)")
    k2_line = line_of(src, "if (index < blockDim.x)")
    k3_line = line_of(src, "if (tid < s) sdata[tid] += sdata[tid + s];", after=k2_line)
    text = " ".join(" ".join(lines).split())
    assert "가장 큰 비용: idle lane: 활성 lane이 평균 32개 중 5.4개뿐입니다 (p12.cu:%d)" % k1_line in text
    assert "(Warp Divergence)" in text
    assert "3.9-way Bank Conflict (p12.cu:%d): 한 warp의 lane들이 2~64 word 간격(stride)으로 접근해서" % k2_line in text
    assert ("--k3 (--k2와 비교): Bank Conflict 432k -> 0 (p12.cu:%d에 있던 Bank Conflict가 사라졌습니다. "
            "이제 shared 접근이 가장 많은 줄 p12.cu:%d에도 없습니다)" % (k2_line, k3_line)) in text
    page = " ".join(page_text(page).split())
    for phrase in ("Warp Divergence", "3.9-way Bank Conflict (p12.cu:%d)" % k2_line, "위 줄에서 바뀐 것",
                   "variant를 차례로 비교한 이야기"):
        assert phrase in page


def test_korean_and_english_show_the_same_figures(story_in_both):
    (en_code, en, en_page), (ko_code, ko, ko_page) = story_in_both["en"], story_in_both["ko"]
    assert en_code == ko_code == 0
    assert numbers("\n".join(en[:-1])) == numbers("\n".join(ko[:-1]))  # the last line names the page file
    assert numbers(page_text(en_page)) == numbers(page_text(ko_page))
    assert not HANGUL.search("\n".join(en)) and not HANGUL.search(en_page)
    assert '<html lang="en">' in en_page


# ---- without a build: a fake driver that writes profile records ---------------------------------

FAKE_PROFILED_DRIVER = '''\
#!{python}
"""A fake puzzle driver that logs its arguments, fails for n > {fail_over}, and, when CUDASIM_PROFILE
names a file, writes one launch record per variant there (as harness/sim/src/profile.cpp would)."""
import json, os, sys

args = sys.argv[1:]
with open({log!r}, "a") as f:
    f.write(json.dumps(args) + "\\n")
opts = dict(zip(args[::2], args[1::2]))
if set(opts) != {{"--variant", "--n", "--tpb", "--seed"}}:
    print("usage: --variant V --n N --tpb T --seed S", file=sys.stderr)
    sys.exit(2)
variant, n, tpb, seed = opts["--variant"], int(opts["--n"]), int(opts["--tpb"]), int(opts["--seed"])
src = os.path.join(os.environ["PUZZLES_ROOT"], "puzzles", "p99", "p99.cu")
at = lambda line: "%s:%d" % (src, line)
accesses = {{
    # a 4-way conflict, lanes 2 words apart
    "simple": [{{"at": at(5), "pc": 1, "op": "shared_ld", "inst": 20, "lanes": 600, "wavefronts": 80, "ideal": 20,
                "strides": {{"2": 60}}}}],
    # nothing wasted
    "double-buffer": [{{"at": at(5), "pc": 1, "op": "shared_ld", "inst": 20, "lanes": 600, "wavefronts": 20,
                       "ideal": 20}}],
    # idle lanes, an uncoalesced store and atomics on one address
    "multi-block": [{{"at": at(7), "pc": 2, "op": "shared_ld", "inst": 400, "lanes": 1200, "wavefronts": 400,
                     "ideal": 400}},
                    {{"at": at(9), "pc": 3, "op": "global_st", "inst": 4000, "lanes": 128000, "sectors": 64000,
                     "ideal_sectors": 16000, "bytes": 512000}},
                    {{"at": at(11), "pc": 4, "op": "global_atom", "inst": 40000, "lanes": 1280000, "sectors": 40000,
                     "ideal_sectors": 40000, "bytes": 160000, "same_addr_max": 32, "serial": 40000}}],
}}[variant]
if os.environ.get("CUDASIM_PROFILE"):
    record = {{"launch": 0, "kernel": "fake_" + variant.replace("-", "_"), "at": at(3), "grid": [4, 1, 1],
              "block": [64, 1, 1], "shmem": 256, "blocks": 4, "warps": 8, "threads": 256, "block_barriers": 24,
              "accesses": accesses, "barriers": [{{"at": at(6), "inst": 24}}],
              "collectives": [{{"at": at(10), "op": "shfl_down", "inst": 8, "lanes": 256}}]}}
    with open(os.environ["CUDASIM_PROFILE"], "a") as f:
        f.write(json.dumps(record) + "\\n")
verdict = "fail" if n > {fail_over} else "pass"
if verdict == "fail":
    print("mismatch: 1 of %d outputs differ; first at index 0" % n)
print("RESULT " + json.dumps({{"verdict": verdict, "variant": variant, "n": n, "tpb": tpb, "seed": seed,
                              "mismatches": int(verdict == "fail")}}))
sys.exit(1 if verdict == "fail" else 0)
'''

FAKE_SOURCE = "\n".join(["// fake p99 for the profile tests", "", "__global__ void k(int* out) {",
                         "  __shared__ int s[64];", "  int x = s[2 * threadIdx.x];", "  __syncthreads();",
                         "  if (threadIdx.x % 16 == 0) x += s[threadIdx.x];", "", "  out[4 * i] = x;",
                         "  x += __shfl_down_sync(~0u, x, 1);", "  atomicAdd(out, x);", "}", ""])


@pytest.fixture
def fake_profiled(fixture_root, tmp_path):
    """(make(fail_over) -> a fake driver's path, the log of its calls, the fixture root)."""
    (fixture_root / "puzzles" / "p99" / "p99.cu").write_text(FAKE_SOURCE, encoding="utf-8")
    log = tmp_path / "driver-calls.jsonl"

    def make(fail_over=10 ** 9):
        path = tmp_path / ("fake_profiled_%d.py" % fail_over)
        path.write_text(FAKE_PROFILED_DRIVER.format(python=sys.executable, fail_over=fail_over, log=str(log)),
                        encoding="utf-8")
        path.chmod(0o755)
        return path

    return make, log, fixture_root


def test_the_flags_of_checks_replay_line_profile_the_failed_case(fake_profiled):
    make, log, root = fake_profiled
    binary = make(fail_over=20)
    checked = run_cli("check", "p99", "--multi-block", "--binary", binary, "--backend", "cpu", "--seed", 3, root=root)
    assert checked.returncode == 1, checked
    failed = read_log(log)[-1]  # check stops at its first failing case
    replay = next(l for l in checked.stdout.splitlines() if "replay:" in l).split("replay:", 1)[1].split()
    assert replay[:4] == ["python3", "scripts/puzzle.py", "run", "p99"]
    assert {"--n", "--tpb", "--seed", "--backend", "--binary"} <= set(replay)
    log.unlink()
    profiled = run_cli("profile", *replay[3:], root=root)
    # The same input reaches the driver; it still fails, and a wrong kernel is not profiled.
    assert read_log(log) == [failed], (read_log(log), failed)
    assert profiled.returncode == 1, profiled
    n, tpb, seed = (failed[failed.index(f) + 1] for f in ("--n", "--tpb", "--seed"))
    assert "failed at n=%s tpb=%s seed=%s" % (n, tpb, seed) in " ".join(profiled.stdout.split())
    assert "run p99 --multi-block --n %s --tpb %s --seed %s" % (n, tpb, seed) in " ".join(profiled.stdout.split())


def test_seed_n_and_tpb_reach_the_driver_as_check_gives_them(fake_profiled):
    make, log, root = fake_profiled
    binary = make()
    r = run_cli("profile", "p99", "--multi-block", "--n", 300, "--tpb", 8, "--seed", 12345, "--backend", "cpu",
                "--binary", binary, root=root)
    assert r.returncode == 0, r
    assert read_log(log) == [["--variant", "multi-block", "--n", "300", "--tpb", "8", "--seed", "12345"]]
    assert "seed 12345" in r.stdout.splitlines()[0]
    assert "p99 --multi-block: n=300 tpb=8 seed=12345" in r.stdout
    # --seed alone: the default size, that input seed; no --seed: seed 1, the same input every time.
    log.unlink()
    assert run_cli("profile", "p99", "--multi-block", "--seed", 7, "--binary", binary, root=root).returncode == 0
    assert run_cli("profile", "p99", "--multi-block", "--binary", binary, root=root).returncode == 0
    assert [c[-1] for c in read_log(log)] == ["7", "1"]
    assert all(c[2:6] == ["--n", str(1 << 20), "--tpb", "256"] for c in read_log(log))


def test_a_gpu_backend_is_refused_in_both_languages(fake_profiled):
    make, log, root = fake_profiled
    for lang in ("en", "ko"):
        r = run_cli("profile", "p99", "--simple", "--backend", "gpu", "--binary", make(), "--lang", lang, root=root)
        assert r.returncode == 2, r
        assert "--backend gpu" in r.stderr
        assert bool(HANGUL.search(r.stderr)) == (lang == "ko"), r.stderr
    assert read_log(log) == []


FAKE_STORY = ("p99", "--simple", "--double-buffer", "--multi-block", "--n", 32, "--tpb", 32)


def test_a_fake_story_in_korean(fake_profiled, tmp_path):
    """A story of three variants (bank conflicts; nothing wasted; atomics on one address), with
    barriers, a collective and atomics' lanes per address, in Korean: no English sentence, the same
    figures as in English."""
    make, _, root = fake_profiled
    binary = make()
    runs = {}
    for lang in ("en", "ko"):
        page = tmp_path / ("fake-%s.html" % lang)
        r = run_cli("profile", *FAKE_STORY, "--binary", binary, "--lang", lang, "--html", page, root=root)
        assert r.returncode == 0, r
        runs[lang] = (r.stdout.splitlines(), page_text(page.read_text(encoding="utf-8")))
    en, ko = runs["en"], runs["ko"]
    en_text = " ".join(" ".join(en[0]).split())
    for phrase in ("4-way bank conflicts at p99.cu:5: the lanes of a warp touch words 2 apart",
                   "the time goes to the fixed cost of its 1 launch(es)", "atomics at p99.cu:11: 40,000 warp-level",
                   "up to 32 lanes/address", "shfl_down:", "warp-level barriers",
                   "bank conflicts 60 -> 0 (p99.cu:5 had them", "--multi-block vs --double-buffer: atomics 0 -> 40.0k"):
        assert phrase in en_text, phrase  # what the Korean is checked against is there
    ko_text = " ".join(" ".join(ko[0]).split())
    for phrase in ("4-way Bank Conflict (p99.cu:5): 한 warp의 lane들이 2 word 간격(stride)으로",
                   "시간은 launch 1번의 고정 비용에 듭니다", "p99.cu:11의 atomic: warp 단위 atomic 40,000개가",
                   "한 주소에 lane 최대 32", "shfl_down:", "warp 단위 barrier",
                   "Bank Conflict 60 -> 0 (p99.cu:5에 있던 Bank Conflict가 사라졌습니다",
                   "--multi-block (--double-buffer와 비교): atomic 0 -> 40.0k"):
        assert phrase in ko_text, phrase
    assert english_runs("\n".join(ko[0])) == [] and english_runs(ko[1]) == [], (english_runs("\n".join(ko[0])),
                                                                               english_runs(ko[1]))
    assert numbers("\n".join(en[0][:-1])) == numbers("\n".join(ko[0][:-1]))
    assert numbers(en[1]) == numbers(ko[1])


@pytest.fixture
def in_korean():
    from puzzlelib import messages
    messages.activate()
    messages.set_lang("ko")
    yield messages
    messages.set_lang(None)
    messages._active = False


def test_every_cost_and_ceiling_in_words(in_korean):
    """Each kind of cost (cost_text) and each ceiling the time goes to (bound_text) in both
    languages: Korean without an English sentence, the same figures."""
    from types import SimpleNamespace

    from puzzlelib import profile as prof
    costs = [dict(kind="bank conflicts", args=dict(at="k.cu:5", per=4.0, conflicts=60, strides=s))
             for s in ({2: 60}, {2: 30, 16: 30}, {})]
    costs += [dict(kind="idle lanes", args=dict(at="k.cu:7", avg=3.0, inst=400, full=38)),
              dict(kind="uncoalesced", args=dict(at="k.cu:9", per=16.0, ideal=4.0)),
              dict(kind="atomics", args=dict(at="k.cu:11", atomics=40000))]
    terms = dict(launch=2.0, issue=0.0, conflicts=0.0, shared=0.0, dram=0.0, atomics=0.0)
    totals = dict(warp_inst=622000, wavefronts=400, sectors=104000)
    bounds = [SimpleNamespace(terms=[dict(terms, time=9.0, **{k: 7.0})], launches=[1, 2], totals=totals)
              for k in ("launch", "issue", "shared", "dram", "atomics")]
    texts = {}
    for lang in ("en", "ko"):
        in_korean.set_lang(lang)
        texts[lang] = [prof.cost_text(c) for c in costs] + [prof.bound_text(b) for b in bounds]
    assert texts["en"][1].startswith("4-way bank conflicts at k.cu:5: the lanes of a warp touch words 2 to 16 apart")
    assert "touch different words of the same bank" in texts["en"][2]
    assert len(set(texts["en"][6:])) == 5  # each ceiling has its own words
    for en, ko in zip(texts["en"], texts["ko"]):
        assert HANGUL.search(ko) and english_runs(ko) == [], (en, ko)
        assert numbers(en) == numbers(ko), (en, ko)


def test_the_json_stays_english_under_lang_ko(fake_profiled, tmp_path):
    make, _, root = fake_profiled
    data = {}
    for lang in ("en", "ko"):
        target = tmp_path / ("p-%s.json" % lang)
        r = run_cli("profile", *FAKE_STORY, "--binary", make(), "--lang", lang, "--json", target, root=root)
        assert r.returncode == 0, r
        data[lang] = json.loads(target.read_text(encoding="utf-8"))
    assert data["ko"] == data["en"]
    assert data["en"]["variants"][0]["top_cost"].startswith("top cost: 4-way bank conflicts")
    validate(data["ko"], json.loads((REPO / "docs" / "profile-schema.json").read_text(encoding="utf-8")))


def test_help_and_usage_errors_in_korean(fake_profiled):
    _, _, root = fake_profiled
    r = run_cli("profile", "--help", "--lang", "ko", root=root)
    assert r.returncode == 0, r
    help_text = r.stdout.split("Puzzles:")[0]  # the puzzle list that follows is puzzle.json's
    assert HANGUL.search(help_text) and english_runs(help_text) == [], english_runs(help_text)
    for flag in ("--n N", "--tpb T", "--seed S", "--backend cpu", "--json FILE", "--html FILE", "--lang"):
        assert flag in help_text
    assert display_width_ok(help_text.splitlines()) == []
    r = run_cli("profile", "--lang", "ko", root=root)
    assert r.returncode == 2 and english_runs(r.stderr.splitlines()[0]) == [], r
    r = run_cli("profile", "p99", "--lang", "ko", root=root)
    assert r.returncode == 2 and HANGUL.search(r.stderr.splitlines()[0]), r
    r = run_cli("profile", "p99", "--simple", "--n", 1000, "--tpb", 8, "--lang", "ko", root=root)
    first = r.stderr.splitlines()[0]
    assert r.returncode == 2 and english_runs(first) == [] and HANGUL.search(first) and "n=8" in first, r


def test_every_label_and_text_constant_has_its_korean_form():
    from puzzlelib import profile as prof
    po = {(c, m): s for c, m, s, _ in read_po(REPO / "scripts/puzzlelib/locale/ko/LC_MESSAGES/profile.po")}
    labels = (set(prof.KERNEL_HEADER) | set(prof.STORY_HEADER) | {w for _, w in prof.STORY_COUNTERS}
              | set(prof.OP_LABELS.values()) | {"barrier"})
    assert sorted(l for l in labels if ("profile", l) not in po) == []
    texts = (prof.PROFILE_HELP, prof.PROFILE_MISSING, prof.KERNEL_LEGEND, prof.STORY_LEGEND)
    assert [t[:40] for t in texts if (None, t) not in po] == []
    # A Korean label fits the table as the English one does: at most 2 columns wider.
    assert [l for l in labels if width(po[("profile", l)]) > max(len(l), 6) + 2] == []
