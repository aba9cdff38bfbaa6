"""The driver's own prose, rendered from data in the learner's language.

A driver says a note or a line of its mismatch block with harness::Say (harness/include/harness/
harness.h). Run by hand it prints the English; run by the CLI, whose runners put
PUZZLES_DRIVER_TEXT=data in its environment (`environment()`), it prints the line as data:

    SAY {"key": "mismatch", "text": "mismatch: {count} of {total} ... first at index {first}",
         "count": 8, "total": 8, "first": 0}

(the text shortened here). `text` is an English template and the msgid of its Korean form in the catalogues (as in gettext,
the code that says the line carries the English); the other members are its facts, an integer, a
string, or a phrase of the same shape (`"fill": {"key": ..., "text": ..., ...}`). `render` fills
the template of the language asked for with the facts: nothing here reads the English of a line
to find out what it says. `key` names the line for programs (Outcome.said).

A line that is not a valid SAY record (learner code can print anything) is shown as it came.
"""

from __future__ import annotations

import json
import os
from typing import Dict, Optional

from .catalog import PLACEHOLDER
from .messages import tr

ENV_VAR = "PUZZLES_DRIVER_TEXT"
PREFIX = "SAY "
MAX_DEPTH = 4  # phrases inside phrases


def environment(base: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    """The environment to start a driver with, so that it says its prose as data."""
    env = dict(os.environ if base is None else base)
    env[ENV_VAR] = "data"
    return env


class SaidLine(str):
    """A line rendered from a SAY record: the text in the learner's language; `said` is the record."""

    said: dict = {}


def record(line: str) -> Optional[dict]:
    """The SAY record of a driver's output line, or None when the line is not one."""
    if not line.startswith(PREFIX + "{"):
        return None
    try:
        data = json.loads(line[len(PREFIX):])
    except ValueError:
        return None
    return data if _valid(data, 0) else None


def _valid(data, depth: int) -> bool:
    if not isinstance(data, dict) or not isinstance(data.get("text"), str) or depth > MAX_DEPTH:
        return False
    for name, value in data.items():
        if name in ("key", "text"):
            continue
        if isinstance(value, dict):
            if not _valid(value, depth + 1):
                return False
        elif isinstance(value, bool) or not isinstance(value, (int, str)):
            return False
    # every placeholder is a plain {name} that one of the facts fills
    for spec in PLACEHOLDER.findall(data["text"]):
        if not spec.startswith("{") or ":" in spec or spec[1:-1] in ("key", "text") or spec[1:-1] not in data:
            return False
    return True


def words(data: dict) -> str:
    """The record's text in the language asked for, its facts filled in (phrases first)."""
    facts = {name: words(value) if isinstance(value, dict) else value
             for name, value in data.items() if name not in ("key", "text")}
    return tr(data["text"]).format(**facts)


def render(line: str) -> str:
    """A driver's output line as the learner reads it: a SAY record in words (a SaidLine), any
    other line unchanged."""
    data = record(line)
    if data is None:
        return line
    shown = SaidLine(words(data))
    shown.said = data
    return shown
