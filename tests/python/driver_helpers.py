"""Running a puzzle's driver binary from the content tests (test_pNN_content.py)."""
import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 120


def binary(name):
    """build/bin/<name> of the build tree in PUZZLES_BUILD_DIR; the test is skipped without one."""
    build = os.environ.get("PUZZLES_BUILD_DIR")
    if not build:
        pytest.skip("set PUZZLES_BUILD_DIR to a build tree to run the puzzle binaries")
    path = Path(build) / "bin" / name
    if not path.is_file():
        pytest.skip("%s is not built (cmake --build %s --target %s)" % (path, build, name))
    return path


def run(binary_path, *args, timeout=TIMEOUT):
    """(exit code, stdout and stderr together) of one driver run, from the repository root."""
    proc = subprocess.run([str(binary_path)] + [str(a) for a in args], cwd=str(REPO), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, timeout=timeout)
    return proc.returncode, proc.stdout


def result(output):
    """The driver's RESULT line as a dict."""
    lines = [l for l in output.splitlines() if l.startswith("RESULT ")]
    assert lines, "no RESULT line in:\n" + output
    return json.loads(lines[-1][len("RESULT "):])
