"""What the READMEs promise a learner (issue 9, items 2, 10 and 11).

- The install line names Boost.Context for each way to install, and says what the fallback costs.
- Korean READMEs avoid the awkward phrases found in review.
- Every figure about the simulator's speed in README.md comes from a committed report that names
  the machine and the command that printed it, and is quoted from it, not retyped.
- The first screen of each top README is what the project is, the install line, the first command
  and its output (in Korean on README.ko.md); platform details come after. Each learner file names
  its lesson in both languages.
"""
import re
from pathlib import Path

import pytest

import readme_samples as rs  # scripts/ (conftest puts it on sys.path)

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
# The Korean lessons, and the page `new` scaffolds a lesson from (its comments become a new lesson's).
KOREAN = sorted(ROOT.glob("puzzles/*/README.ko.md")) + [ROOT / "scripts/puzzlelib/templates/puzzle/README.ko.md"]


def section(text: str, title: str) -> str:
    m = re.search(r"^## %s\n(.*?)(?=^## |\Z)" % re.escape(title), text, re.M | re.S)
    assert m, "README.md has no section '## %s'" % title
    return m.group(1)


def test_install_line_names_boost_context_everywhere():
    start = section(README, "Start")
    assert "Boost.Context" in start
    assert "libboost-context-dev" in start  # apt
    assert re.search(r"brew install [^`]*\bboost\b", start)  # Homebrew
    assert "pixi" in start and "libboost-devel" in (ROOT / "pixi.toml").read_text(encoding="utf-8")


def test_the_fallbacks_cost_is_stated_with_its_source():
    start = section(README, "Start")
    assert "ucontext" in start
    m = re.search(r"(\d+(?:\.\d+)?)\s*times (?:fewer|slower)", start)
    assert m, "the Start section must say how much slower the ucontext fallback is"
    report = speed_report()
    assert m.group(1) + "x" in report, "the factor %s is not the one in %s" % (m.group(1), report_path())


@pytest.mark.parametrize("path", KOREAN, ids=lambda p: p.parent.name)
def test_korean_readmes_avoid_the_reviewed_awkward_phrases(path):
    text = path.read_text(encoding="utf-8")
    for phrase in ("show 설정", "show 입력", "단계 전체의 값을", "날아가는"):
        assert phrase not in text, "%s: %r" % (path.relative_to(ROOT), phrase)


def report_path() -> Path:
    m = re.search(r"\((bench/results/sim-speed-[\w-]+\.md)\)", README)
    assert m, "README.md must link the simulator speed report bench/results/sim-speed-DATE.md"
    return ROOT / m.group(1)


def speed_report() -> str:
    return report_path().read_text(encoding="utf-8")


def test_speed_report_names_machine_command_and_what_is_counted():
    report = speed_report()
    assert re.search(r"^Machine: .*\d+ cores", report, re.M)
    assert "Command: `python3 scripts/bench_sim.py" in report
    assert "launched CUDA threads per second" in report
    assert "numba" in report


def test_readme_speed_figures_are_quoted_from_the_report():
    measured = section(README, "Measured")
    simulator = next(l for l in measured.split("\n- ") if "Simulator" in l)
    figures = re.findall(r"\d+(?:,\d{3})*(?:\.\d+)?", re.sub(r"2\^\d+|\(bench/results/[^)]*\)", "", simulator))
    assert figures, simulator
    report = speed_report()
    for figure in figures:
        assert figure in report, "README.md's figure %s is not in %s" % (figure, report_path().name)
    assert "python3 scripts/bench_sim.py" in simulator


LEARNER_FILES = sorted(p for p in ROOT.glob("puzzles/p*/p*.cu") if p.stem == p.parent.name)


@pytest.mark.parametrize("path", LEARNER_FILES, ids=lambda p: p.parent.name)
def test_each_learner_file_points_to_both_readmes(path):
    # The skeleton's header comment (generated from solutions/pNN/pNN.cu) is what a learner reads
    # first: it names the lesson in English and in Korean, and both pages exist.
    header = path.read_text(encoding="utf-8").split("#include", 1)[0]
    for page in ("README.md", "README.ko.md"):
        name = "puzzles/%s/%s" % (path.parent.name, page)
        assert name in header, "%s's header comment does not name %s" % (path.relative_to(ROOT), name)
        assert (ROOT / name).is_file(), name


def test_there_are_learner_files():
    assert {"p12", "p13", "p14", "p29"} <= {p.parent.name for p in LEARNER_FILES}


HANGUL = re.compile(r"[\uac00-\ud7a3]")


@pytest.mark.parametrize("name, korean", [("README.md", False), ("README.ko.md", True)])
def test_the_first_screen_is_install_line_first_command_and_its_output(name, korean):
    text = (ROOT / name).read_text(encoding="utf-8")
    command = "python3 scripts/puzzle.py run p14 --simple" + (" --lang ko" if korean else "")
    first_block = re.search(r"^```sh\n(.*?)\n", text, re.M)
    assert first_block and first_block.group(1) == command, "%s: the first command should be `%s`" % (name, command)
    sample = rs.parse(ROOT / name)[0]
    assert rs.SHOWN_PREFIX + " ".join(sample.args) == "$ " + command, sample.where
    assert bool([l for l in sample.lines if HANGUL.search(l)]) == korean, "%s: the first output's language" % sample.where
    lines = text.splitlines()
    assert text.index("apt-get install") < first_block.start(), "%s: the install line comes first" % name
    after_sample = len("\n".join(lines[:sample.end + 1]))
    for detail in ("ucontext", "atos", "qemu", "RLIMIT_AS"):
        assert text.find(detail) > after_sample, "%s: %r comes before the first run's output" % (name, detail)
