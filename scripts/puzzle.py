#!/usr/bin/env python3
"""The puzzle CLI: build, run and check the CUDA scan/reduction puzzles.

    python3 scripts/puzzle.py list
    python3 scripts/puzzle.py run p14 --simple
    python3 scripts/puzzle.py check p14 --simple
    python3 scripts/puzzle.py test

Standard library only (Python 3.8+). The implementation lives in scripts/puzzlelib/; this module
re-exports its main entry points so tests can import `puzzle` and call parts directly.
Environment: PUZZLES_BUILD_DIR, PUZZLES_TEST_BUILD_DIR, PUZZLES_TIMEOUT, and PUZZLES_ROOT
(another repository root, used by the tests' fixture puzzles).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from puzzlelib.cli import main  # noqa: E402
from puzzlelib.driver import classify, parse_result_line, run_driver  # noqa: E402,F401
from puzzlelib.puzzles import discover, find_puzzle, load_puzzle  # noqa: E402,F401
from puzzlelib.build import build_failure_summary, gpu_present  # noqa: E402,F401

__all__ = ["main", "classify", "parse_result_line", "run_driver", "discover", "find_puzzle", "load_puzzle",
           "build_failure_summary", "gpu_present"]

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
