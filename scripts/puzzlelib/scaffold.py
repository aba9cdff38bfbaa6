"""`new`: scaffold a working puzzle from scripts/puzzlelib/templates/puzzle/ (docs/instructors.md,
"Adding your own puzzle"), and `new pNN --refresh`: regenerate what is derived from its sources."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import List

from . import build as bld
from . import grade_integrity as gi
from .common import PROG, BuildError, UsageError, build_dir, err, out, rel, run_timeout
from .messages import tr
from .options import parse
from .pixi import generated_section, replace_section
from .puzzles import load_puzzle

TEMPLATES = Path(__file__).resolve().parent / "templates" / "puzzle"
NAME = re.compile(r"^p(\d+)$")
SHOW_LINES = ("config:", "input:", "out:", "expected:")  # what an expected/<variant>.txt holds

NEW_HELP = """\
usage: {prog} new pNN --title "TITLE"
       {prog} new pNN --refresh

Create puzzle pNN: a one-variant puzzle (--block, a sum per block in shared memory) that builds,
runs and grades, for you to turn into your exercise:

  solutions/pNN/pNN.cu              the reference solution, with FILL ME IN ... END FILL regions
  puzzles/pNN/pNN.cu                the learner's file, generated from the solution
  puzzles/pNN/driver.cpp            the input, the CPU reference, run_<variant>() per variant
  puzzles/pNN/puzzle.json           the variants: block sizes, sizes, show input, summaries
  puzzles/pNN/expected/*.txt        what the solution prints for each show input (built and run)
  puzzles/pNN/README.md, README.ko.md   the lesson, as comments that say what to write
  tests/python/test_pNN_content.py  the solution matches expected/, the skeleton fails

It also adds pNN to the puzzle tables of README.md and README.ko.md and to pixi.toml's tasks,
and rewrites grading/protected.sha256. CMake, list, run, check, grade and trace find the puzzle
by its puzzle.json; nothing else lists puzzles.

  --title TEXT   the puzzle's title (puzzle.json, READMEs, the tables of README.md and README.ko.md)
  --refresh      after editing pNN's solution, driver or puzzle.json: regenerate the skeleton
                 (the previous one is kept as .bak-*), expected/*.txt, pixi.toml's tasks and
                 grading/protected.sha256

Environment: PUZZLES_BUILD_DIR (the build used to run the solution; default build/).
"""


def fill(text: str, values: dict) -> str:
    for key, value in values.items():
        text = text.replace("@%s@" % key, value)
    left = re.findall(r"@[A-Z_]+@", text)
    if left:
        raise AssertionError("template placeholder %s has no value" % left[0])
    return text


def puzzle_json(title: str) -> str:
    """puzzle.json of the template, in the layout of the others (one line per small value)."""
    variant = {
        "summary": "each block sums its tile in shared memory (identity 0, tree with sequential addressing) and "
                   "writes one partial sum; power-of-two tpb only",
        "show": {"n": 10, "tpb": 4},
        "tpb": [4, 32, 256],
        "max_n": None,
        "large_n": {"cpu": 100003, "gpu": 16777259},
    }
    lines = ['{',
             '  "title": %s,' % json.dumps(title, ensure_ascii=False),
             '  "summary": %s,' % json.dumps("Scaffolded by `%s new`: sums per block; replace it with your "
                                             "exercise." % PROG),
             '  "variants": {',
             '    "block": {']
    body = ['      %s: %s' % (json.dumps(k), json.dumps(v)) for k, v in variant.items()]
    lines += [",\n".join(body), '    }', '  }', '}']
    return "\n".join(lines) + "\n"


# What the commands of a README's "Running it" block do, in each README's language: the Korean page
# is Korean outside its code, and the comments of its code too (as in puzzles/p13/README.ko.md).
RUN_COMMENTS = {
    "README.md": ["your file, on the show input", "many sizes and random inputs", "the reference solution"],
    "README.ko.md": ["작은 예시 입력으로 내 kernel 실행", "여러 크기와 무작위 입력", "같은 입력으로 정답 코드 실행"],
}
# A variant's summary is English (puzzle.json); the Korean table asks for it in Korean.
SUMMARY = {"README.md": "%s", "README.ko.md": "(한국어로 옮겨 주세요) %s"}


def readme_values(root: Path, name: str, page: str = "README.md") -> dict:
    """The table rows and commands of puzzles/NAME/PAGE (README.md or README.ko.md), from puzzle.json."""
    puzzle = load_puzzle(root / "puzzles" / name)
    rows = ["| `%s` | %s | %s |" % (v.flag, SUMMARY[page] % v.summary, ", ".join(str(t) for t in v.tpb))
            for v in puzzle.variants.values()]
    run, check, solution = RUN_COMMENTS[page]
    commands = []
    for v in puzzle.variants.values():
        commands += ["%s run %s %s              # %s" % (PROG, name, v.flag, run),
                     "%s check %s %s            # %s" % (PROG, name, v.flag, check),
                     "%s run %s %s --solution   # %s" % (PROG, name, v.flag, solution)]
    return {"VARIANT_ROWS": "\n".join(rows), "RUN_COMMANDS": "\n".join(commands)}


# The puzzle tables of the start pages: each row links the lesson in the page's language first.
README_ROWS = {
    "README.md": "| [{name}](puzzles/{name}/README.md) ([한국어](puzzles/{name}/README.ko.md)) | {title} | `{flags}` |\n",
    "README.ko.md": "| [{name}](puzzles/{name}/README.ko.md) ([English](puzzles/{name}/README.md)) | {title} | `{flags}` |\n",
}


def add_readme_rows(root: Path, name: str, title: str) -> List[str]:
    """A row in the puzzle table of README.md and of README.ko.md, after the last one
    (tests/python/test_docs.py checks README.md's); the pages that got one."""
    puzzle = load_puzzle(root / "puzzles" / name)
    flags = " ".join(v.flag for v in puzzle.variants.values())
    added = []
    for page, row in README_ROWS.items():
        path = root / page
        if not path.is_file():
            continue
        lines = path.read_text(encoding="utf-8").splitlines(True)
        rows = [i for i, l in enumerate(lines) if l.startswith("| [p")]
        if not rows:
            err("note: %s has no puzzle table (rows starting `| [p`); add %s by hand" % (page, name))
            continue
        lines.insert(rows[-1] + 1, row.format(name=name, title=title, flags=flags))
        path.write_text("".join(lines), encoding="utf-8")
        added.append(page)
    return added


def write_expected(root: Path, name: str) -> List[Path]:
    """Build the solution and write expected/<variant>.txt from its show runs."""
    puzzle = load_puzzle(root / "puzzles" / name)
    build = build_dir(root)
    target = puzzle.target(True, "cpu")
    out("building %s in %s (the first build of a folder takes a few minutes) ..." % (target, rel(build, root)))
    bld.build_target(root, build, target, puzzle.source(True))
    binary = bld.binary_path(build, target)
    written = []
    for v in puzzle.variants.values():
        n, tpb = v.show_case()
        cmd = [str(binary), "--variant", v.name, "--n", str(n), "--tpb", str(tpb), "--show"]
        try:
            proc = subprocess.run(cmd, cwd=str(root), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  universal_newlines=True, timeout=run_timeout())
        except subprocess.TimeoutExpired:
            err("error: %s did not finish in %.0f s" % (" ".join(cmd), run_timeout()))
            raise BuildError("solution timed out")
        if proc.returncode != 0:
            err(proc.stdout)
            err("error: the solution fails its own show input (%s %s, exit %d); fix %s or driver.cpp, "
                "then run `%s new %s --refresh`" % (name, v.flag, proc.returncode, puzzle.source(True), PROG, name))
            raise BuildError("solution failed")
        lines = [l for l in proc.stdout.splitlines() if l.startswith(SHOW_LINES)]
        path = root / "puzzles" / name / "expected" / (v.name + ".txt")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        written.append(path)
    return written


def sync_derived(root: Path, name: str) -> None:
    """pixi.toml's tasks and the grading manifest, from the tree as it is now."""
    pixi = root / "pixi.toml"
    if pixi.is_file():
        text = pixi.read_text(encoding="utf-8")
        pixi.write_text(replace_section(text, generated_section(root)), encoding="utf-8")
        out("updated pixi.toml (pixi run %s --VARIANT)" % name)
    path, count = gi.write_manifest(root)
    out("updated %s (%d protected files)" % (rel(path, root), count))


def create(root: Path, name: str, title: str) -> None:
    import skeletons  # scripts/skeletons.py (scripts/ is on sys.path)

    number = str(int(NAME.match(name).group(1)))
    puzzle_dir, solution_dir = root / "puzzles" / name, root / "solutions" / name
    for d in (puzzle_dir, solution_dir):
        if d.exists():
            raise UsageError(tr("%s already exists; pick another name, or `%s new %s --refresh` to regenerate its "
                                "derived files") % (rel(d, root), PROG, name))
    values = {"PUZZLE": name, "NUMBER": number, "TITLE": title}
    solution = fill((TEMPLATES / "solution.cu").read_text(encoding="utf-8"), values)
    files = {
        solution_dir / (name + ".cu"): solution,
        puzzle_dir / (name + ".cu"): skeletons.skeleton(solution, "solutions/%s/%s.cu" % (name, name)),
        puzzle_dir / "driver.cpp": fill((TEMPLATES / "driver.cpp").read_text(encoding="utf-8"), values),
        puzzle_dir / "puzzle.json": puzzle_json(title),
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for template in ("README.md", "README.ko.md"):
        readme = dict(values, **readme_values(root, name, template))
        (puzzle_dir / template).write_text(fill((TEMPLATES / template).read_text(encoding="utf-8"), readme),
                                           encoding="utf-8")
    tests = root / "tests" / "python"
    if tests.is_dir():
        test = tests / ("test_%s_content.py" % name)
        test.write_text(fill((TEMPLATES / "test_content.py").read_text(encoding="utf-8"), values), encoding="utf-8")
    tables = add_readme_rows(root, name, title)
    for path in sorted(list(files) + [puzzle_dir / "README.md", puzzle_dir / "README.ko.md"]):
        out("wrote %s" % rel(path, root))
    if tests.is_dir():
        out("wrote %s" % rel(test, root))
    if tables:
        out("added %s to the puzzle table of %s" % (name, " and ".join(tables)))


def cmd_new(root: Path, args: List[str]) -> int:
    p = parse(args, {"--title": str, "--refresh": None})
    if p.help:
        out(tr(NEW_HELP).format(prog=PROG))
        return 0
    if len(p.positionals) != 1:
        raise UsageError(tr("give one puzzle name, e.g. `%s new p15 --title \"Histogram\"`") % PROG)
    name = p.positionals[0].strip().lower()
    if not NAME.match(name):
        raise UsageError(tr("puzzle names are p followed by digits (p15), got %s") % repr(p.positionals[0]))
    if p.get("--refresh"):
        if p.get("--title"):
            raise UsageError(tr("--refresh keeps the title of puzzle.json; edit it there"))
        if not (root / "puzzles" / name / "puzzle.json").is_file():
            raise UsageError(tr("puzzles/%s/puzzle.json does not exist; `%s new %s --title ...` creates it")
                             % (name, PROG, name))
        import skeletons

        if skeletons.main(["--root", str(root)]) != 0:
            return 2
    else:
        title = (p.get("--title") or "").strip()
        if not title:
            raise UsageError(tr("--title is required: `%s new %s --title \"Histogram\"`") % (PROG, name))
        create(root, name, title)
    try:
        for path in write_expected(root, name):
            out("wrote %s" % rel(path, root))
    except BuildError:
        return 2
    sync_derived(root, name)
    if not p.get("--refresh"):
        out(NEXT_STEPS.format(prog=PROG, name=name))
    return 0


NEXT_STEPS = """
{name} runs: `{prog} run {name} --block --solution` prints its show input, `{prog} check {name}`
tests the learner's file. Now make it your exercise (docs/instructors.md, "Adding your own puzzle"):
  1. edit solutions/{name}/{name}.cu, puzzles/{name}/driver.cpp and puzzles/{name}/puzzle.json;
  2. `{prog} new {name} --refresh` regenerates the skeleton, expected/, pixi tasks and manifest;
  3. write the lesson in puzzles/{name}/README.md and README.ko.md (replace every comment);
  4. points: grading/points.json (default 1 per variant), then `{prog} grade --update-manifest`."""
