"""The symbolizer of the simulator's reports (harness/sim/src/symbols.cpp): each of addr2line,
llvm-symbolizer and atos that is installed, forced with CUDASIM_SYMBOLIZER, gives the same
file:line (the checker's many addresses at once, and a crash's function and line); a named one
that is missing falls back to another with a note; with none at all the report says why."""

import os
import re
import shutil
import subprocess

import pytest

SYMBOLIZERS = ["addr2line", "llvm-symbolizer", "atos"]


def program(build_dir, name):
    path = build_dir / "tests" / "bin" / name
    if not path.exists():
        pytest.skip("%s was not built" % path)
    return path


def run(binary, **env):
    proc = subprocess.run([str(binary)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120,
                          env=dict(os.environ, **env))
    return proc.returncode, proc.stdout


# tests/sim/fatal/race_exit.cu: `a[i] = a[i + 1]` at line 6 reads and writes neighbours.
RACE_LINES = r"write-after-read between read at \S*race_exit\.cu:6 and write at \S*race_exit\.cu:6"
# tests/sim/fatal/stack_overflow.cu: the crash is inside recurse() (g++), or in the checker's
# callback that recurse() called (clang's frames differ): a function, its file and line.
CRASH_SITE = r"\n  at (recurse\(int\) at \S*stack_overflow\.cu:([5-9]|1[01])|cudasim::detail::on_access\(.*\) at \S*access\.cpp:\d+)\n"


def installed_or_skip(tool):
    if not shutil.which(tool):
        pytest.skip("%s is not installed" % tool)


@pytest.mark.parametrize("tool", SYMBOLIZERS)
def test_race_report_names_both_lines_with_each_symbolizer(build_dir, tool):
    installed_or_skip(tool)
    code, output = run(program(build_dir, "proc_race_exit"), CUDASIM_SYMBOLIZER=tool)
    assert code == 3, output
    assert re.search(RACE_LINES, output), output
    assert "cudasim: note" not in output, output


@pytest.mark.parametrize("tool", SYMBOLIZERS)
def test_crash_report_names_the_function_and_line_with_each_symbolizer(build_dir, tool):
    installed_or_skip(tool)
    code, output = run(program(build_dir, "proc_stack_overflow"), CUDASIM_SYMBOLIZER=tool)
    assert code == 4, output
    assert "stack overflow" in output, output
    assert re.search(CRASH_SITE, output), output


def test_a_named_symbolizer_that_is_missing_falls_back_with_a_note(build_dir):
    fallback = next((t for t in SYMBOLIZERS if shutil.which(t)), None)
    if fallback is None:
        pytest.skip("no symbolizer is installed to fall back to")
    code, output = run(program(build_dir, "proc_race_exit"), CUDASIM_SYMBOLIZER="llvm-symbolizer-does-not-exist")
    assert code == 3, output
    assert ("cudasim: note: CUDASIM_SYMBOLIZER=llvm-symbolizer-does-not-exist is not installed; using %s instead."
            % fallback) in output, output
    assert re.search(RACE_LINES, output), output


def test_a_program_that_is_not_a_symbolizer_is_refused_with_a_note(build_dir):
    if not any(shutil.which(t) for t in SYMBOLIZERS):
        pytest.skip("no symbolizer is installed to fall back to")
    code, output = run(program(build_dir, "proc_race_exit"), CUDASIM_SYMBOLIZER="/bin/true")
    assert code == 3, output
    assert "CUDASIM_SYMBOLIZER=/bin/true is none of addr2line, llvm-symbolizer and atos" in output, output
    assert re.search(RACE_LINES, output), output


def test_without_any_symbolizer_the_report_says_why(build_dir, tmp_path):
    # PATH names an empty folder: the shell that runs a symbolizer is found by its path, the
    # symbolizers are not.
    code, output = run(program(build_dir, "proc_race_exit"), PATH=str(tmp_path))
    assert code == 3, output
    assert "cudasim: note: no symbolizer is installed (addr2line, llvm-symbolizer or atos), so reports name no " \
           "file:line" in output, output
    # The report itself is still made, without the lines.
    assert re.search(r"cudasim: error: race in kernel shift_left", output), output
    assert not re.search(r"race_exit\.cu:6", output), output
