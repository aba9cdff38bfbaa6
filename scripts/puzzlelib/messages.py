"""The learner-facing text in English (the default) or Korean.

`tr(text)` returns `text`, or its Korean form when Korean was asked for: `--lang ko` on the
command line (options.parse sets it), else PUZZLE_LANG=ko, else a Korean locale (LC_ALL,
LC_MESSAGES or LANG starting with `ko`). As in gettext, the English text is the key, so the code
reads as it prints; the Korean forms are in the catalogues, scripts/puzzlelib/locale/ko/
LC_MESSAGES/*.po (catalog.py reads them). A placeholder in the key is the same placeholder in the
translation (tests/python/test_catalog.py checks both, and that every tr() literal in
scripts/puzzlelib/ has its Korean form).

The Korean follows the course notes: Korean prose with the English technical terms kept
(Race Condition, Barrier, Bank Conflict, shared memory, thread, block).
"""

from __future__ import annotations

import contextlib
import os
import re
from typing import Optional

from . import catalog

LANGS = ("en", "ko")
_chosen: Optional[str] = None  # set by --lang
# Only the learner's commands (run, check, list, trace) speak Korean: `grade` writes reports and
# JSON that tools read, and stays English whatever the locale.
_active = False


def activate() -> None:
    """Called by the learner's commands: from here on, tr() follows the language asked for."""
    global _active
    _active = True


def set_lang(value: str) -> None:
    global _chosen
    _chosen = value


@contextlib.contextmanager
def speaking(language: str):
    """tr() in `language` inside the block, whatever was chosen before (grade's reports are
    worded in the language they were graded in)."""
    global _chosen, _active
    saved = _chosen, _active
    _chosen, _active = language, True
    try:
        yield
    finally:
        _chosen, _active = saved


def lang() -> str:
    if not _active:
        return "en"
    if _chosen:
        return _chosen
    env = os.environ.get("PUZZLE_LANG", "").strip().lower()
    if env:
        return "ko" if env.startswith("ko") else "en"
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var, "")
        if value:  # the first one set decides, as in POSIX
            return "ko" if value.lower().startswith("ko") else "en"
    return "en"


def korean() -> bool:
    return lang() == "ko"


def tr(text: str) -> str:
    """`text` in the language asked for, as a template: `%` and `.format()` fill it, and in Korean
    choose each particle after a placeholder from the value (catalog.Message)."""
    if lang() == "ko":
        return catalog.KoreanMessage(KO.get(text, text))
    return catalog.Message(text)


# msgid -> Korean form, from the Korean catalogues (scripts/puzzlelib/locale/ko/LC_MESSAGES/*.po).
KO = catalog.translations("ko")


# A reason without its verdict word ("race: X" shown as "X" after "race"): the same in Korean.
for _key in [k for k in KO if k.startswith("race: ")]:
    KO.setdefault(_key[len("race: "):], KO[_key].split(": ", 1)[-1])

PLACEHOLDER = catalog.PLACEHOLDER
_patterns = None  # the KO keys with placeholders, as regexes that match a formatted text


def tr_reason(text: str) -> str:
    """A reason already formatted in English (`device code calls the host function exit`), in
    Korean: the key whose pattern matches it, with the same values put into the Korean form. A
    reason made of a known prefix and a text (`kernel error: ...`) translates the prefix."""
    if lang() != "ko":
        return text
    if text in KO:
        return KO[text]
    for prefix in ("kernel error: ", "CUDA call failed: "):
        if text.startswith(prefix):
            return KO[prefix] + tr_reason(text[len(prefix):])
    global _patterns
    if _patterns is None:
        _patterns = []
        for key, ko in KO.items():
            if PLACEHOLDER.search(key):
                parts = PLACEHOLDER.split(key)
                # a number where the key has %d or %g, any text where it has %s
                groups = [r"(-?\d+)" if h == "%d" else r"(-?[\d.e+]+)" if h in ("%g", "{timeout:g}") else "(.+?)"
                          for h in PLACEHOLDER.findall(key)]
                regex = re.escape(parts[0]) + "".join(g + re.escape(x) for g, x in zip(groups, parts[1:]))
                _patterns.append((re.compile("^" + regex + "$"), PLACEHOLDER.split(ko)))
    for pattern, ko_parts in _patterns:
        m = pattern.match(text)
        if m and len(ko_parts) == len(m.groups()) + 1:
            return "".join(part + (m.group(k + 1) if k < len(m.groups()) else "") for k, part in enumerate(ko_parts))
    return text
