"""Command dispatch for scripts/puzzle.py."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import List, Optional

from .bench import cmd_bench
from .commands import cmd_check, cmd_list, cmd_run
from .common import PROG, UsageError, err, out, repo_root
from .grade import cmd_grade
from .messages import activate, set_lang, tr
from .options import lang_choice, suggest
from .pixi import cmd_sync_pixi
from .profile import cmd_profile
from .request import BareUsageError
from .scaffold import cmd_new
from .sim_cmd import cmd_sim
from .testcmd import cmd_test
from .trace import cmd_trace

COMMANDS = {
    "run": (cmd_run, "build and run one variant on its show input"),
    "check": (cmd_check, "test variants on many sizes"),
    "trace": (cmd_trace, "watch one block run, barrier by barrier, in the terminal"),
    "profile": (cmd_profile, "count bank conflicts, sectors, idle lanes per source line; model the time"),
    "list": (cmd_list, "puzzles, variants and your progress"),
    "grade": (cmd_grade, "grade a submission on hidden inputs (instructors, CI)"),
    "test": (cmd_test, "the project's test suite (build, ctest, pytest)"),
    "sync-pixi": (cmd_sync_pixi, "regenerate the puzzle tasks in pixi.toml"),
    "sim": (cmd_sim, "build and run your own CUDA program (with its main()) on the CPU simulator"),
    "bench": (cmd_bench, "time a puzzle's variants on a GPU, next to CUB and copy bandwidth"),
    "new": (cmd_new, "scaffold a new puzzle from a working template (instructors)"),
}

USAGE = """\
usage: {prog} <command> [options]

CUDA scan/reduction puzzles: edit puzzles/pNN/pNN.cu, then run and check it.

commands:
{commands}

examples:
  {prog} list
  {prog} run p14 --simple
  {prog} check p14 --simple
  {prog} profile p12 --k1 --k2 --k3 --solution

`{prog} <command> --help` describes a command's options.
Environment: PUZZLES_BUILD_DIR (default build/), PUZZLES_TIMEOUT (seconds per run, default 120).
"""


def usage() -> str:
    width = max(len(c) for c in COMMANDS)
    commands = "\n".join("  %s  %s" % (name.ljust(width), tr(text)) for name, (_, text) in COMMANDS.items())
    return tr(USAGE).format(prog=PROG, commands=commands)


def _leading_lang(argv: List[str]) -> List[str]:
    """`--lang ko` before the command (or anywhere with --help) chooses the language of what follows;
    the command gets the rest of the arguments."""
    rest = list(argv)
    while rest and (rest[0] == "--lang" or rest[0].startswith("--lang=")):
        if "=" in rest[0]:
            value, rest = rest[0].partition("=")[2], rest[1:]
        elif len(rest) > 1:
            value, rest = rest[1], rest[2:]
        else:
            raise UsageError(tr("--lang needs a value: en or ko"))
        set_lang(lang_choice(value))
    asks_help = any(a in ("-h", "--help") for a in rest[:rest.index("--") if "--" in rest else len(rest)])
    if rest and (rest[0] in ("-h", "--help", "help") or rest[0] not in COMMANDS or asks_help):
        for k, arg in enumerate(rest):  # the help, a command's help (sim reads no --lang) or an unknown command
            if arg == "--":
                break
            if arg.startswith("--lang=") or (arg == "--lang" and k + 1 < len(rest)):
                set_lang(lang_choice(arg.partition("=")[2] if "=" in arg else rest[k + 1]))
    return rest


def main(argv: Optional[List[str]] = None, root: Optional[Path] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    root = Path(root) if root is not None else repo_root()
    try:
        argv = _leading_lang(argv)
    except UsageError as e:
        err(tr("error: %s") % e)
        return 2
    if not argv or argv[0] in ("-h", "--help", "help"):
        activate()  # the overview is the learner's first page: in the language asked for
        if argv and argv[0] == "help" and len(argv) > 1:
            return main([argv[1], "--help"], root)
        text = usage()
        if argv:
            out(text)
            return 0
        err(text)
        return 2
    command, args = argv[0], argv[1:]
    if command not in COMMANDS:
        activate()
        msg = tr("error: unknown command '%s'") % command
        guess = suggest(command, list(COMMANDS))
        if guess:
            msg += tr(" (did you mean %s?)") % guess
        err(msg + "\n")
        err(usage())
        return 2
    if command != "grade":  # grade chooses its language with its own --lang, whatever the locale
        activate()
    try:
        return COMMANDS[command][0](root, args)
    except UsageError as e:
        err(tr("error: %s") % e)
        if not isinstance(e, BareUsageError):
            err(tr("(`%s %s --help` for usage)") % (PROG, command))
        return 2
    except KeyboardInterrupt:
        err("\n" + tr("interrupted"))
        return 130
    except BrokenPipeError:  # e.g. `... | head`
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 1
