"""Every sample output in the READMEs (English and Korean) is what the program prints now.
A Korean page shows its English page's samples in order, each in Korean (the same arguments and
`--lang ko`: what a Korean student sees), and may add Korean samples besides: at least one `run` or
`check` per puzzle.

The samples are marked `<!-- sample: ARGS -->` and produced by scripts/readme_samples.py, which
runs `scripts/puzzle.py ARGS` (planted bugs through their test binaries). Running the program
needs PUZZLES_BUILD_DIR (`python3 scripts/puzzle.py test` sets it to build-test/, which holds
the planted binaries); the tests that only read the READMEs run everywhere.
"""

import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import REPO

import readme_samples as rs  # scripts/readme_samples.py (conftest puts scripts/ on sys.path)

SAMPLES = [s for path in rs.readmes() for s in rs.parse(path)]
# Lines that only the program prints: a block holding one must be a checked sample.
PROGRAM_LINES = re.compile(r"^\s*(\$ python3 scripts/puzzle\.py |\u274c |\u2705 |cudasim: error|Puzzle p\d+ --)")


def test_there_are_samples_in_every_readme():
    # docs/*.md are scanned too, but only READMEs must show output.
    readmes = {p for p in rs.readmes() if p.name.startswith("README")}
    assert readmes <= {s.path for s in SAMPLES}
    assert (REPO / "harness" / "sim" / "README.md") in readmes


def test_every_program_output_block_is_a_checked_sample():
    for path in rs.readmes():
        lines = path.read_text(encoding="utf-8").splitlines()
        marked = {s.start for s in rs.parse(path)}
        # The CMake example's output is checked by tests/python/test_cmake_route.py, which builds it.
        marked |= {i + 1 for i, line in enumerate(lines) if line.startswith("<!-- cmake-example")}
        fence = None
        for i, line in enumerate(lines):
            if line.strip().startswith("```"):
                fence = i if fence is None else None
                continue
            if fence is not None and fence not in marked and PROGRAM_LINES.match(line):
                pytest.fail("%s:%d: program output outside a <!-- sample: ... --> block: %r"
                            % (path.relative_to(REPO), i + 1, line))


def test_each_sample_shows_the_command_it_runs():
    for s in SAMPLES:
        assert s.lines and s.lines[0] == rs.SHOWN_PREFIX + " ".join(s.args), s.where


def test_every_planted_sample_names_an_existing_planted_bug():
    # A renamed plant would otherwise be skipped forever as "not built".
    for s in SAMPLES:
        if s.planted:
            plant = REPO / "tests" / "planted" / s.puzzle / (s.planted + ".plant")
            assert plant.is_file(), "%s: planted=%s, but %s does not exist" % (s.where, s.planted, plant)


def pairing_problems(english, korean):
    """What keeps a Korean page's samples from being its English page's: each English sample, in
    order, shown in Korean (its arguments and `--lang ko`); Korean samples besides. A Korean page
    shows no English output: a student reading it sees what `--lang ko` prints."""
    def counterpart(e, k):
        return k.planted == e.planted and k.korean and k.english_args == e.args

    problems = ["%s: an English page shows Korean output" % e.where for e in english if e.korean]
    problems += ["%s: a Korean page shows English output (add --lang ko to the sample)" % k.where
                 for k in korean if not k.korean]
    korean = [k for k in korean if k.korean]
    k = 0
    for e in english:
        while k < len(korean) and not counterpart(e, korean[k]):
            k += 1
        if k == len(korean):
            problems.append("%s: the Korean page lacks this sample with --lang ko (or not in this order)" % e.where)
            return problems
        k += 1
    return problems


def test_the_korean_readmes_show_the_english_samples_in_english_or_korean_and_korean_ones_besides():
    by_file = {}
    for s in SAMPLES:
        by_file.setdefault(s.path, []).append(s)
    pairs = [(path, path.parent / "README.ko.md") for path in by_file
             if path.name == "README.md" and (path.parent / "README.ko.md").is_file()]
    assert len(pairs) >= 6  # the top page, the simulator's and the four puzzles'
    for english, korean in pairs:
        problems = pairing_problems(by_file[english], by_file.get(korean, []))
        assert not problems, "\n".join(problems)


def test_pairing_finds_each_way_a_korean_page_can_drift():
    def sample(page, *args, lines=("out",)):
        return rs.Sample(REPO / page, 0, 1, 2, "", list(args), None, ["$ x"] + list(lines))
    en = [sample("README.md", "run", "p14", "--simple"), sample("README.md", "check", "p14")]
    ok = [sample("README.ko.md", "run", "p14", "--simple", "--lang", "ko", lines=("출력",)),
          sample("README.ko.md", "list", "--lang", "ko"),
          sample("README.ko.md", "check", "p14", "--lang", "ko")]
    assert pairing_problems(en, ok) == []
    broken = {
        "lacks this sample": ok[:2],
        "shows English output": ok[:2] + [sample("README.ko.md", "check", "p14")],
        "not in this order": [ok[2], ok[0]],
        "shows Korean output": None,
    }
    for what, korean in broken.items():
        english = en if korean is not None else en + [sample("README.md", "list", "--lang", "ko")]
        problems = pairing_problems(english, korean if korean is not None else ok)
        assert any(what in p for p in problems), (what, problems)
    assert sample("x", "run", "p14", "--lang", "ko", "--simple").english_args == ["run", "p14", "--simple"]
    assert sample("x", "check", "--lang=ko").english_args == ["check"]


HANGUL = re.compile(r"[\uac00-\ud7a3]")
PUZZLE_PAGES = sorted(REPO.glob("puzzles/p*/README.ko.md"))


@pytest.mark.parametrize("page", PUZZLE_PAGES, ids=[p.parent.name for p in PUZZLE_PAGES])
def test_every_puzzle_page_in_korean_shows_the_korean_output_of_run_or_check(page):
    # Checked against the program like every sample (test_sample_is_the_programs_output); Korean
    # text must be in the output itself, so a `--lang ko` the program ignored cannot pass.
    korean = [s for s in rs.parse(page) if s.korean and s.args[0] in ("run", "check")]
    assert korean, "%s has no `<!-- sample: run|check pNN ... --lang ko -->`" % page.relative_to(REPO)
    for s in korean:
        assert s.puzzle == page.parent.name, s.where
        assert [l for l in s.lines[1:] if HANGUL.search(l)], "%s: no Korean in the output" % s.where
        assert not rs.has_ellipsis(s), "%s: a Korean sample is shown whole" % s.where


def test_every_puzzle_has_a_korean_page():
    assert [p.parent.name for p in PUZZLE_PAGES] == sorted(d.name for d in REPO.glob("puzzles/p*") if d.is_dir())
    assert len(PUZZLE_PAGES) >= 4


def test_a_sample_asks_for_korean_only_with_lang_ko():
    def sample(*args):
        return rs.Sample(REPO / "README.md", 0, 1, 2, "", list(args), None, [])
    assert sample("run", "p14", "--simple", "--lang", "ko").korean
    assert sample("check", "p14", "--lang=ko").korean
    assert not sample("run", "p14", "--simple").korean
    assert not sample("run", "p14", "--lang", "en").korean


def test_samples_run_in_english_whatever_the_locale(monkeypatch, tmp_path):
    # A Korean locale on the machine that checks or rewrites the samples must not turn the English
    # samples Korean; `--lang ko` on the command line still wins over PUZZLE_LANG=en.
    seen = {}

    def fake_run(cmd, **kw):
        seen.update(cmd=cmd, env=kw["env"])
        return subprocess.CompletedProcess(cmd, 0, stdout="out\n", stderr="")

    monkeypatch.setenv("LANG", "ko_KR.UTF-8")
    monkeypatch.setenv("PUZZLE_LANG", "ko")
    monkeypatch.setattr(rs.subprocess, "run", fake_run)
    s = rs.Sample(REPO / "README.ko.md", 0, 1, 2, "", ["run", "p14", "--simple", "--lang", "ko"], None, [])
    assert rs.produce(s, tmp_path) == ["$ python3 scripts/puzzle.py run p14 --simple --lang ko", "out"]
    assert seen["env"]["PUZZLE_LANG"] == "en" and seen["cmd"][-2:] == ["--lang", "ko"]


def test_matching_ignores_times_and_honours_ellipses():
    real = ["\u2705 p14 --simple: pass (20 cases, 1.3 s)", "a", "b"]
    assert rs.matches(["\u2705 p14 --simple: pass (20 cases, 0.9 s)", "...", "b"], real)
    assert not rs.matches(["\u2705 p14 --simple: pass (21 cases, 0.9 s)", "a", "b"], real)
    assert not rs.matches(["\u2705 p14 --simple: pass (20 cases, 1.3 s)", "a"], real)
    assert rs.matches(["backend:  CPU simulator (boost.context fibers; ...)"], ["backend:  CPU simulator (ucontext fibers; ...)"])


@pytest.mark.parametrize("sample", SAMPLES, ids=[s.where for s in SAMPLES])
def test_sample_is_the_programs_output(sample):
    build = os.environ.get("PUZZLES_BUILD_DIR")
    if not build:
        pytest.skip("set PUZZLES_BUILD_DIR to a build tree (python3 scripts/puzzle.py test does)")
    if sample.planted and not rs.planted_binary(sample, Path(build)).is_file():
        pytest.skip("%s is not built" % rs.planted_binary(sample, Path(build)))
    os.environ.setdefault("PUZZLES_BUILD_DIR", build)
    real = rs.produce(sample, rs.build_dir())
    assert rs.matches(sample.lines, real), (
        "%s drifted from the program's output; run `python3 scripts/readme_samples.py --update`.\n"
        "The output now:\n%s" % (sample.where, "\n".join(real)))
