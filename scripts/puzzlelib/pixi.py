"""`sync-pixi`: keep the per-puzzle tasks in pixi.toml equal to puzzles/*/puzzle.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List

from .common import PROG, UsageError, err, out
from .messages import tr
from .options import parse
from .puzzles import discover

BEGIN = "# BEGIN generated puzzle tasks"
END = "# END generated puzzle tasks"

SYNC_HELP = """\
usage: {prog} sync-pixi [--check]

Rewrite the puzzle tasks in pixi.toml (between `{begin}` and `{end}`) from
puzzles/*/puzzle.json, one task per puzzle: `pixi run p14 --simple` runs a variant.

  --check    change nothing; exit 1 if pixi.toml is out of date
"""


def toml_string(text: str) -> str:
    # JSON string escapes are valid TOML basic-string escapes for the characters we emit.
    return json.dumps(text, ensure_ascii=False)


def generated_section(root: Path) -> str:
    lines = [BEGIN + " (`%s sync-pixi` writes this part)" % PROG]
    for puzzle in discover(root).values():
        flags = ", ".join(v.flag for v in puzzle.variants.values())
        desc = "%s: %s. Run one variant: pixi run %s --VARIANT (%s)" % (
            puzzle.name, puzzle.title or puzzle.summary, puzzle.name, flags)
        lines += ["[tasks.%s]" % puzzle.name,
                  "cmd = %s" % toml_string("python3 scripts/puzzle.py run %s" % puzzle.name),
                  "description = %s" % toml_string(desc),
                  ""]
    lines.append(END)
    return "\n".join(lines)


def replace_section(text: str, section: str) -> str:
    lines = text.splitlines(True)
    starts = [i for i, l in enumerate(lines) if l.startswith(BEGIN)]
    ends = [i for i, l in enumerate(lines) if l.startswith(END)]
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise UsageError("pixi.toml needs exactly one `%s` line followed by one `%s` line" % (BEGIN, END))
    new = "".join(lines[:starts[0]]) + section + "\n" + "".join(lines[ends[0] + 1:])
    return new


def cmd_sync_pixi(root: Path, args: List[str]) -> int:
    p = parse(args, {"--check": None})
    if p.help:
        out(tr(SYNC_HELP).format(prog=PROG, begin=BEGIN, end=END))
        return 0
    if p.positionals:
        raise UsageError("sync-pixi takes no arguments (got %s)" % " ".join(p.positionals))
    path = root / "pixi.toml"
    if not path.is_file():
        raise UsageError("no pixi.toml in %s" % root)
    text = path.read_text(encoding="utf-8")
    new = replace_section(text, generated_section(root))
    if new == text:
        out("pixi.toml puzzle tasks are up to date")
        return 0
    if p.get("--check"):
        err("pixi.toml puzzle tasks are out of date with puzzles/*/puzzle.json; "
            "run `%s sync-pixi`." % PROG)
        return 1
    path.write_text(new, encoding="utf-8")
    count = len(discover(root))
    out("pixi.toml: puzzle tasks rewritten (%d puzzle%s)" % (count, "" if count == 1 else "s"))
    return 0
