"""A small option parser: argparse cannot handle the per-puzzle variant flags (--simple, ...)."""

from __future__ import annotations

import difflib
from typing import Dict, List, Optional

from .common import UsageError
from .messages import LANGS, set_lang, tr


class Parsed:
    def __init__(self):
        self.positionals = []  # type: List[str]
        self.options = {}  # type: Dict[str, object]
        self.unknown_flags = []  # type: List[str]   candidates for variant flags
        self.help = False

    def get(self, name, default=None):
        return self.options.get(name, default)


def parse(args: List[str], spec: Dict[str, Optional[type]], allow_unknown_flags: bool = False) -> Parsed:
    """Parse `args` against spec {"--name": value type or None for a switch}.

    Flags not in spec are collected in `unknown_flags` when allow_unknown_flags (variant flags,
    resolved later against the puzzle), otherwise they are a usage error with a suggestion.
    """
    p = Parsed()
    if "--lang" not in spec:  # first, so that every message about the other arguments is in that language
        for k, arg in enumerate(args):
            if arg == "--":
                break
            if arg.startswith("--lang=") or (arg == "--lang" and k + 1 < len(args)):
                value = arg[len("--lang="):] if "=" in arg else args[k + 1]
                if value in LANGS:
                    set_lang(value)
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg in ("-h", "--help"):
            p.help = True
            continue
        if arg == "--":
            p.positionals += args[i:]
            break
        if not arg.startswith("-") or arg == "-":
            p.positionals.append(arg)
            continue
        name, eq, value = arg.partition("=")
        if name == "--lang" and name not in spec:  # every command's: the language of its messages
            if not eq:
                if i >= len(args):
                    raise UsageError(tr("--lang needs a value: en or ko"))
                value = args[i]
                i += 1
            set_lang(lang_choice(value))
            continue
        if name in spec:
            kind = spec[name]
            if kind is None:
                if eq:
                    raise UsageError(tr("%s does not take a value") % name)
                p.options[name] = True
                continue
            if not eq:
                if i >= len(args):
                    raise UsageError(tr("%s needs a value") % name)
                value = args[i]
                i += 1
            try:
                p.options[name] = kind(value)
            except ValueError:
                raise UsageError(tr("%s: invalid value %s") % (name, repr(value)))
            continue
        # `-simple` too: a variant flag with one dash, answered with the right spelling later
        if allow_unknown_flags and (arg.startswith("--") or len(arg) > 2) and not eq:
            p.unknown_flags.append(arg)
            continue
        raise UsageError(unknown_flag_message(arg, list(spec)))
    return p


def suggest(word: str, choices: List[str]) -> Optional[str]:
    guess = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return guess[0] if guess else None


def suggest_flag(flag: str, choices: List[str]) -> Optional[str]:
    """Closest flag, compared without the leading dashes (they make every flag look alike)."""
    names = {c.lstrip("-"): c for c in choices}
    guess = suggest(flag.partition("=")[0].lstrip("-"), list(names))
    return names[guess] if guess else None


def unknown_flag_message(flag: str, choices: List[str]) -> str:
    msg = tr("unknown option %s") % flag
    guess = suggest_flag(flag, choices)
    if guess:
        msg += tr(" (did you mean %s?)") % guess
    return msg


def bare_variant(word: str, flags: List[str]) -> Optional[str]:
    """`simple` for `--simple`: the variant flag a positional word names without its dashes."""
    for flag in flags:
        if word.lstrip("-") == flag[2:]:
            return flag
    return None


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def seed_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise ValueError(text)
    return value


def backend_choice(text: str) -> str:
    if text not in ("auto", "cpu", "gpu"):
        raise UsageError(tr("--backend must be auto, cpu or gpu, not %s") % repr(text))
    return text


def lang_choice(text: str) -> str:
    if text not in LANGS:
        raise UsageError(tr("--lang must be en or ko, not %s") % repr(text))
    return text
