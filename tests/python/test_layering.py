"""The learner commands (run, check, list, trace) must not load the grader's modules: a change to
grading cannot break them, and a learner reading them does not wade through the grader."""

import json
import subprocess
import sys

import pytest

from conftest import REPO

LEARNER_MODULES = ["commands", "trace", "request", "cases"]

PROBE = """
import json, sys
sys.path.insert(0, {scripts!r})
import puzzlelib.{module}
print(json.dumps(sorted(m for m in sys.modules if m.startswith("puzzlelib.grade"))))
"""


@pytest.mark.parametrize("module", LEARNER_MODULES)
def test_learner_commands_do_not_import_the_grader(module):
    code = PROBE.format(scripts=str(REPO / "scripts"), module=module)
    proc = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    imported = set(json.loads(proc.stdout))
    assert not imported, "%s imports %s" % (module, ", ".join(sorted(imported)))
