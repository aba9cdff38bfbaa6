"""Checks that scale: a big launch in a `puzzle.py sim` program is checked on a sample of its
blocks (harness/sim/src/sampling.cpp), and device memory costs little host memory
(harness/sim/src/shadow.cpp, the snapshots in memory.cpp).

Needs PUZZLES_BUILD_DIR (the command builds libcudasim there); skipped otherwise.
"""

import re

from conftest import REPO, run_cli

RACE = REPO / "tests" / "sim" / "programs" / "sampled_race.cu"
CHAIN = REPO / "tests" / "sim" / "programs" / "sampled_chain.cu"
FIGURE = REPO / "bench" / "sim" / "memory_figure.cu"
NOTE = re.compile(r"the memory checker checks (\d+) of its blocks \(([^;]*);")


def sim(build_dir, *args, env=None, timeout=300):
    e = {"PUZZLES_BUILD_DIR": str(build_dir)}
    e.update(env or {})
    return run_cli("sim", *args, env=e, timeout=timeout)


def sampled_blocks(stderr):
    m = NOTE.search(stderr)
    assert m, stderr
    blocks = [int(b) for b in re.split(r", | and ", m.group(2))]
    assert len(blocks) == int(m.group(1))
    return blocks


def test_sample_is_first_last_and_drawn_blocks_and_says_so(build_dir):
    r = sim(build_dir, RACE, "--", "-1", env={"CUDASIM_SAMPLE": "2"})
    assert r.returncode == 0, r
    assert "Test PASSED" in r.stdout, r
    blocks = sampled_blocks(r.stderr)
    assert len(blocks) == 4 and blocks[0] == 0 and blocks[-1] == 63, blocks
    assert "A race or an uninitialized read in an unchecked block is not found" in r.stderr, r
    assert "CUDASIM_SAMPLE=all" in r.stderr, r
    # The same seed draws the same sample; another seed another one.
    again = sim(build_dir, RACE, "--", "-1", env={"CUDASIM_SAMPLE": "2"})
    other = sim(build_dir, RACE, "--", "-1", env={"CUDASIM_SAMPLE": "2", "CUDASIM_SEED": "7"})
    assert sampled_blocks(again.stderr) == blocks
    assert sampled_blocks(other.stderr) != blocks


def test_race_in_a_sampled_block_is_found_with_every_block_rechecked(build_dir):
    r = sim(build_dir, RACE, "--", "63", env={"CUDASIM_SAMPLE": "2"})
    assert r.returncode == 3, r
    assert "running the launch again with every block checked" in r.stderr, r
    assert "race in kernel spread_flag" in r.stderr, r
    assert "Test PASSED" not in r.stdout, r


def test_race_in_an_unsampled_block_is_not_claimed(build_dir):
    blocks = sampled_blocks(sim(build_dir, RACE, "--", "-1", env={"CUDASIM_SAMPLE": "2"}).stderr)
    outside = next(b for b in range(64) if b not in blocks)
    r = sim(build_dir, RACE, "--", str(outside), env={"CUDASIM_SAMPLE": "2"})
    assert r.returncode == 0, r
    assert "Test PASSED" in r.stdout, r
    assert "race in kernel" not in r.stderr, r
    # Every block checked: the same race is found.
    full = sim(build_dir, RACE, "--", str(outside), env={"CUDASIM_SAMPLE": "all"})
    assert full.returncode == 3, full
    assert "race in kernel spread_flag" in full.stderr, full
    assert "checks" not in full.stderr, full


def test_auto_samples_big_launches_only(build_dir):
    small = sim(build_dir, RACE, "--", "40")  # 64 blocks of 64 threads: every block checked
    assert small.returncode == 3, small
    assert not NOTE.search(small.stderr), small
    big = sim(build_dir, RACE, "--", "-1", "128", "1024")  # 131072 threads: sampled
    assert big.returncode == 0, big
    assert len(sampled_blocks(big.stderr)) == 10, big


def test_checked_block_reads_what_an_unchecked_block_wrote_in_the_launch(build_dir):
    """Block b reads block b - 1's value after its flag: a sampled block after an unsampled one
    reads memory that an unchecked block wrote in the same launch, which holds a value."""
    r = sim(build_dir, CHAIN, env={"CUDASIM_SAMPLE": "4"})
    assert r.returncode == 0, r
    assert "Test PASSED" in r.stdout, r
    blocks = sampled_blocks(r.stderr)
    assert any(b - 1 not in blocks for b in blocks[1:]), blocks  # some checked block follows an unchecked one
    assert "cudasim: warning" not in r.stderr, r  # (an uninitialized read is a warning in sim programs)


def host_bytes_per_device_byte(build_dir, checks, how):
    r = sim(build_dir, FIGURE, "--", "64", how, env={"CUDASIM_CHECKS": checks})
    assert r.returncode == 0, r
    m = re.search(r"([\d.]+) host bytes per device byte", r.stdout)
    assert m, r
    return float(m.group(1))


def test_device_memory_costs_little_host_memory(build_dir):
    """The program reads its own peak resident memory (VmHWM) before and after 64 MiB of device
    memory, filled by cudaMemset or by a kernel, then summed by a launch of 512 blocks of 256
    threads (sampled with the checks on). Before the compact shadow, a memset cost 16 host bytes
    per device byte with the checks off too. With the checks off a launch keeps the memory it
    started from (one copy: the other thread orders start from it), so a kernel-filled buffer
    costs 2 bytes a byte and the small buffer of sums a little more."""
    assert host_bytes_per_device_byte(build_dir, "0", "memset") <= 2.0
    assert host_bytes_per_device_byte(build_dir, "0", "kernel") <= 2.1
    assert host_bytes_per_device_byte(build_dir, "1", "memset") <= 4.0
    assert host_bytes_per_device_byte(build_dir, "1", "kernel") <= 4.0
