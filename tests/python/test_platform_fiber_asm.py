"""The native fiber switch (harness/sim/src/fiber.cpp) assembles for each platform it is written
for, Mach-O (macOS) included, which no machine here runs: clang cross-compiles fiber.cpp for
arm64 and x86-64 macOS and Linux, and the objects are read back. fiber.cpp needs only <cstddef>
and <cstdint>; without a macOS SDK, clang's own freestanding stddef.h and stdint.h stand in for
them (two one-line headers written here), so what is checked is fiber.cpp's code and assembly."""

import re
import shutil
import subprocess

import pytest

from conftest import REPO

FIBER = REPO / "harness" / "sim" / "src" / "fiber.cpp"
TARGETS = ["arm64-apple-macos11", "x86_64-apple-macos11", "aarch64-linux-gnu", "x86_64-linux-gnu"]


def tool(name):
    found = shutil.which(name)
    if not found:
        pytest.skip("%s is not installed" % name)
    return found


@pytest.fixture(scope="module")
def headers(tmp_path_factory):
    d = tmp_path_factory.mktemp("freestanding")
    (d / "cstddef").write_text("#include <stddef.h>\n")
    (d / "cstdint").write_text("#include <stdint.h>\n")
    return d


def compile_fiber(target, headers, tmp_path):
    obj = tmp_path / ("fiber-%s.o" % target)
    cmd = [tool("clang++"), "-target", target, "-std=c++17", "-O2", "-c", "-ffreestanding", "-nostdinc++",
           "-nostdlibinc", "-isystem", str(headers), "-DCUDASIM_USE_BOOST_CONTEXT=1", "-Wall", "-Wextra", "-Werror",
           str(FIBER), "-o", str(obj)]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    assert proc.returncode == 0, "%s:\n%s" % (" ".join(cmd), proc.stdout)
    return obj


def output(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout
    return proc.stdout


@pytest.mark.parametrize("target", TARGETS)
def test_native_switch_assembles_with_hidden_symbols(target, headers, tmp_path):
    obj = compile_fiber(target, headers, tmp_path)
    # Hidden (ELF) or private external (Mach-O, whose C names start with an underscore): the
    # switch is the simulator's own, and a learner's program cannot collide with it.
    if "apple" in target:
        symbols = output([tool("llvm-nm"), "-m", str(obj)])
        for name in ("_cudasim_fiber_switch", "_cudasim_fiber_start"):
            assert re.search(r"\(__TEXT,__text\) private external %s$" % name, symbols, re.M), symbols
    else:
        symbols = output([tool("llvm-readelf"), "--symbols", str(obj)])
        for name in ("cudasim_fiber_switch", "cudasim_fiber_start"):
            assert re.search(r"FUNC\s+GLOBAL\s+HIDDEN\s+\S+\s+%s$" % name, symbols, re.M), symbols


@pytest.mark.parametrize("target", [t for t in TARGETS if t.startswith(("arm64", "aarch64"))])
def test_aarch64_switch_saves_every_callee_saved_register(target, headers, tmp_path):
    obj = compile_fiber(target, headers, tmp_path)
    # The switch's instructions: from its address to the next symbol's (Mach-O's objdump names
    # the first address after a local label, so the range is taken from the symbol table).
    prefix = "_" if "apple" in target else ""
    addresses = {m.group(2): int(m.group(1), 16) for m in
                 re.finditer(r"^([0-9a-f]+) \w (\S+)$", output([tool("llvm-nm"), str(obj)]), re.M)}
    start, stop = addresses[prefix + "cudasim_fiber_switch"], addresses[prefix + "cudasim_fiber_start"]
    assert stop > start
    switch = output([tool("llvm-objdump"), "-d", "--no-show-raw-insn", "--start-address=%#x" % start,
                     "--stop-address=%#x" % stop, str(obj)])
    stored = set(re.findall(r"\bstp\s+([xd]\d+), ([xd]\d+)", switch))
    loaded = set(re.findall(r"\bldp\s+([xd]\d+), ([xd]\d+)", switch))
    # AAPCS64: x19-x28, the frame pointer and link register (x29, x30), and d8-d15.
    pairs = {("x%d" % r, "x%d" % (r + 1)) for r in range(19, 30, 2)} | {("d%d" % r, "d%d" % (r + 1)) for r in range(8, 16, 2)}
    assert stored == pairs, switch
    assert loaded == pairs, switch
    assert re.search(r"\bbr\s+x30\b", switch), switch  # an indirect jump, not a predicted return
