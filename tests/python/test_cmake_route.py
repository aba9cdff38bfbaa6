"""The CMake route of harness/sim/README.md ("In your own CMake project"), as a new user takes it:
the README's example files, written into a folder outside the repository, configured and built
with Make and with Ninja (`include(.../harness/cmake/Cudasim.cmake)`, `cudasim_add_executable`,
the kernel in a `.cuh` found through `target_include_directories`), run, and then built again
with the race the README describes.

The files and the commands come from the README's code blocks (`<!-- cmake-example: FILE -->`,
`<!-- cmake-example-run -->`, `<!-- cmake-example-race -->`), so the example cannot drift from
what is tested. Each generator builds the simulator library once (about 15 s on two idle cores);
the later steps rebuild only the program.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

README = REPO / "harness" / "sim" / "README.md"
CLONE_PLACEHOLDER = "/path/to/the/clone"
BARRIER = "    __syncthreads();\n"
JOBS = "2"  # the CI machine has two cores


def readme_blocks(readme=README):
    """{marker: block text} for each `<!-- cmake-example...-->` marker followed by a fenced block."""
    lines = readme.read_text(encoding="utf-8").splitlines(keepends=True)
    blocks = {}
    for i, line in enumerate(lines):
        m = re.match(r"^<!-- (cmake-example(?:: \S+|-run|-race)) -->\s*$", line)
        if not m:
            continue
        assert lines[i + 1].startswith("```"), "%s:%d: a fenced block must follow the marker" % (readme.name, i + 1)
        end = next(j for j in range(i + 2, len(lines)) if lines[j].startswith("```"))
        blocks[m.group(1)] = "".join(lines[i + 2:end])
    return blocks


BLOCKS = readme_blocks()
FILES = {k.split(": ", 1)[1]: v for k, v in BLOCKS.items() if k.startswith("cmake-example: ")}


def session(block):
    """[(command, [expected output lines])] of a `$ command` / output block."""
    steps = []
    for line in block.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    return steps


def write_project(folder: Path) -> Path:
    for name, text in FILES.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


def run(cmd, cwd, timeout=600, **extra_env):
    env = dict(os.environ, **extra_env)
    env.pop("CMAKE_GENERATOR", None)  # the test chooses the generator
    return subprocess.run(cmd, cwd=str(cwd), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                          universal_newlines=True, encoding="utf-8", errors="replace", timeout=timeout)


def readme_command(text, generator):
    """A README command line as this machine runs it: the clone is this repository, the generator
    is the one under test, two jobs."""
    args = shlex.split(text.replace(CLONE_PLACEHOLDER, str(REPO)))
    if args[:2] == ["cmake", "-S"]:
        args += ["-G", generator]
    if "--build" in args and "-j" in args:
        args[args.index("-j") + 1] = JOBS
    return args


def line_of(path: Path, code: str) -> int:
    numbers = [i for i, l in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if code in l]
    assert len(numbers) == 1, (code, numbers)
    return numbers[0]


def assert_names_translation(log, source):
    assert "cu2cpp %s " % source in log, log
    assert not re.search(r"cu2cpp\s*$|cu2cpp  ", log, re.M), "a cu2cpp step without a file name:\n" + log


def test_korean_readme_shows_the_same_example():
    korean = README.with_name("README.ko.md")
    assert "[English](README.md)" in korean.read_text(encoding="utf-8")
    assert "[한국어](README.ko.md)" in README.read_text(encoding="utf-8")
    assert readme_blocks(korean) == BLOCKS


def test_readme_has_the_whole_example():
    assert set(FILES) == {"CMakeLists.txt", "main.cu", "kernels/scale.cuh"}
    cml = FILES["CMakeLists.txt"]
    assert re.search(r"^cmake_minimum_required\(VERSION 3\.\d+\)", cml, re.M)
    assert re.search(r"^project\(\w+ LANGUAGES CXX\)", cml, re.M)
    assert "include(${CUDASIM_REPO}/harness/cmake/Cudasim.cmake)" in cml
    assert "cudasim_add_executable(demo main.cu)" in cml
    assert "target_include_directories(demo PRIVATE kernels)" in cml
    assert BARRIER in FILES["kernels/scale.cuh"]
    assert '#include "scale.cuh"' in FILES["main.cu"]
    assert "cmake-example-run" in BLOCKS and "cmake-example-race" in BLOCKS


@pytest.mark.parametrize("generator", ["Unix Makefiles", "Ninja"])
def test_readme_project_builds_runs_and_reports_a_race(tmp_path, generator):
    if generator == "Ninja" and not shutil.which("ninja"):
        pytest.skip("ninja is not installed (apt-get install ninja-build): the Ninja half of the CMake route is not tested")
    if not shutil.which("make") and generator == "Unix Makefiles":
        pytest.skip("make is not installed: the Makefile half of the CMake route is not tested")
    project = write_project(tmp_path / "demo")
    assert REPO not in project.parents  # a project outside the repository, as a user's is

    steps = session(BLOCKS["cmake-example-run"])
    assert [s[0].split()[:2] for s in steps] == [["cmake", "-S"], ["cmake", "--build"], ["build/demo"]], steps
    (configure, _), (build, _), (program, expected) = steps
    r = run(readme_command(configure, generator), project)
    assert r.returncode == 0, r.stdout
    assert "multiple different commands" not in r.stdout, r.stdout
    r = run(readme_command(build, generator), project)
    assert r.returncode == 0, r.stdout
    assert_names_translation(r.stdout, "main.cu")
    exe = project / "build" / "demo"
    assert exe.is_file(), "the README says the executable is build/demo"
    r = run([str(exe)], project, timeout=120)
    assert r.returncode == 0, r.stdout
    assert r.stdout.splitlines() == expected, r.stdout
    if sys.platform.startswith("linux"):
        assert_uninstrumented_build(exe, project, expected)

    # The race of the README: the barrier commented out; the header's change alone retranslates
    # main.cu (the depfile lists the headers it read).
    header = project / "kernels" / "scale.cuh"
    header.write_text(header.read_text(encoding="utf-8").replace(BARRIER, "    // __syncthreads();\n"), encoding="utf-8")
    write, read = line_of(header, "tile[threadIdx.x] = in[i];"), line_of(header, "out[i] = factor * tile[")
    race = session(BLOCKS["cmake-example-race"])
    assert [s[0] for s in race] == ["build/demo", "echo $?"], race
    report = [l for l in race[0][1] if l != "..."]
    status = int(race[1][1][0])
    assert status == 3

    for include in ('"scale.cuh"', "<scale.cuh>"):
        # An angle-bracket include is found through the include directories only: the translated
        # header must come before the original there, or the checker sees no shared memory and
        # names no line.
        main = project / "main.cu"
        text = main.read_text(encoding="utf-8")
        main.write_text(re.sub(r'#include ["<]scale\.cuh[">]', "#include " + include, text), encoding="utf-8")
        r = run(readme_command(build, generator), project)
        assert r.returncode == 0, r.stdout
        assert_names_translation(r.stdout, "main.cu")
        r = run([str(exe)], project, timeout=120)
        assert r.returncode == status, (include, r.stdout)
        out = r.stdout.splitlines()
        assert out[:len(report)] == report, (include, r.stdout)
        assert "kernels/scale.cuh:%d" % write in r.stdout and "kernels/scale.cuh:%d" % read in r.stdout, r.stdout
        assert ".cu.cpp" not in r.stdout and ".cudasim/" not in r.stdout, "a report names the translated copy:\n" + r.stdout


def assert_uninstrumented_build(exe, project, expected):
    """cudasim_add_executable also builds NAME.fast (harness/sim/src/fast_build.cpp): run by hand
    with the checks on it refuses (it has no instrumentation to check with); with the checks off
    NAME starts it in its place and prints the same; and NAME really does start it: a stand-in
    NAME.fast that only says so is what runs."""
    fast = exe.with_name(exe.name + ".fast")
    assert fast.is_file(), "no %s beside the program" % fast.name
    r = run([str(fast)], project, timeout=120, CUDASIM_CHECKS="1")
    assert r.returncode == 4 and "this is the uninstrumented build of the program" in r.stdout, r.stdout
    r = run([str(exe)], project, timeout=120, CUDASIM_CHECKS="0")
    assert r.returncode == 0 and r.stdout.splitlines() == expected, r.stdout
    real = fast.with_name(fast.name + ".real")
    fast.rename(real)
    try:
        fast.write_text("#!/bin/sh\necho stand-in \"$@\"\n")
        fast.chmod(0o755)
        r = run([str(exe), "a", "b"], project, timeout=120, CUDASIM_CHECKS="0")
        assert r.stdout == "stand-in a b\n", r.stdout
        r = run([str(exe)], project, timeout=120, CUDASIM_CHECKS="0", CUDASIM_FAST_BUILD="0")
        assert r.stdout.splitlines() == expected, r.stdout
    finally:
        fast.unlink()
        real.rename(fast)


def test_readme_program_is_real_cuda_for_nvcc(tmp_path):
    """The example compiles unchanged with nvcc (nothing runs, so no GPU is needed)."""
    from puzzlelib.grade import find_nvcc
    nvcc = find_nvcc(None)
    if not nvcc:
        pytest.skip("no nvcc ($CUDACXX, PATH or /usr/local/cuda/bin): the CUDA build of the example is not checked")
    project = write_project(tmp_path / "demo")
    cmd = [nvcc, "-std=c++17", "-arch=sm_90", "-I", "kernels", "-o", "demo", "main.cu"]
    r = run(cmd, project, timeout=300)
    assert r.returncode == 0, " ".join(cmd) + "\n" + r.stdout
