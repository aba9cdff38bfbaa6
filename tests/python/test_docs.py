"""The top-level README names every puzzle and every variant flag that the declarations define."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def declarations():
    import json
    for path in sorted((ROOT / "puzzles").glob("*/puzzle.json")):
        yield path.parent.name, json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name,decl", list(declarations()), ids=lambda x: x if isinstance(x, str) else "")
def test_readme_table_lists_the_declared_variants(name, decl):
    row = next((l for l in README.splitlines() if l.startswith("| [%s]" % name)), None)
    assert row, "README.md has no table row for %s" % name
    flags = set(re.findall(r"--[a-z0-9-]+", row.split("|")[-2]))
    assert flags == {"--" + v for v in decl["variants"]}, "README.md row for %s: %s" % (name, sorted(flags))
    assert "puzzles/%s/README.ko.md" % name in row


def test_readme_test_command_is_what_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = "python3 scripts/puzzle.py test"
    assert command in README and command in ci
