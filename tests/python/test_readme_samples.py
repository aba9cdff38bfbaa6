"""Every sample output in the READMEs (English and Korean) is what the program prints now.

The samples are marked `<!-- sample: ARGS -->` and produced by scripts/readme_samples.py, which
runs `scripts/puzzle.py ARGS` (planted bugs through their test binaries). Running the program
needs PUZZLES_BUILD_DIR (`python3 scripts/puzzle.py test` sets it to build-test/, which holds
the planted binaries); the tests that only read the READMEs run everywhere.
"""

import os
import re
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


def test_the_english_and_korean_readmes_have_the_same_samples():
    by_file = {}
    for s in SAMPLES:
        by_file.setdefault(s.path, []).append((s.args, s.planted, [rs.normalize(l) for l in s.lines]))
    for path in by_file:
        if path.name == "README.md" and (path.parent / "README.ko.md").is_file():
            assert by_file[path] == by_file[path.parent / "README.ko.md"], path


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
