"""What a Korean student reads is Korean: every planted bug's `check --lang ko` and every sample of
the Korean pages print no English sentence outside code, paths and the course notes' terms
(tests/python/english_detector.py says how a sentence is found, and lists the allowed terms)."""

import os
import subprocess

import pytest

from conftest import REPO

import english_detector
import test_planted

ROOT = REPO


def test_the_detector_finds_english_prose_and_passes_korean():
    english = ("  write-after-read between read at p12.cu:86 and write at p12.cu:86 [2 hazards]\n"
               "  The threads were in different steps of the loop.")
    assert len(english_detector.english_runs(english)) == 2
    korean = ("❌ p12 --k1: Race Condition (동기화 없는 shared memory 접근), case 1/12에서 실패: n=1 tpb=8 seed=3\n"
              "    다시 실행: python3 scripts/puzzle.py run p12 --k1 --n 1 --tpb 8 --seed 3 --backend cpu\n"
              "  block 0, thread 0이 p12.cu:86에서 __shared__ sdata[2]를 읽은 뒤 thread 2가 같은 step에서 썼습니다.\n"
              "backend:  CPU simulator (native x86-64 fibers; thread schedules: forward, reverse, random)")
    assert english_detector.english_runs(korean) == []
    # Code spans and commands are not prose, even when they hold English words.
    assert english_detector.english_runs("`if (threadIdx.x == 0) out[blockIdx.x] = sum;`를 쓰세요") == []


@pytest.mark.parametrize("path", test_planted.PLANTED, ids=lambda p: "%s/%s" % (p.parent.name, p.stem))
def test_a_planted_bug_is_told_in_korean(path):
    h, _puzzle, _flag, cmd = test_planted.planted_check(path)
    proc = subprocess.run(cmd + ["--lang", "ko"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=300, env=dict(os.environ, **h["env"]))
    assert proc.returncode == 1, proc.stdout
    runs = english_detector.english_runs(proc.stdout)
    assert not runs, "English in the Korean output of %s: %s\n%s" % (path.name, runs, proc.stdout)


def korean_samples():
    import sys
    sys.path.insert(0, str(ROOT / "scripts"))
    import readme_samples
    return [s for page in readme_samples.readmes() if page.name.endswith(".ko.md") for s in readme_samples.parse(page)]


def _sample_id(s):
    return s.where


@pytest.mark.parametrize("sample", korean_samples(), ids=_sample_id)
def test_a_korean_page_shows_korean_output(sample):
    if sample.args[0] == "sim":
        # What a user's own program prints is its own (its report is checked in test_sim_command).
        pytest.skip("the output of a user's program: %s" % sample.where)
    output = "\n".join(l for l in sample.lines if not l.startswith("$ "))
    runs = english_detector.english_runs(output)
    assert not runs, "%s: English in a sample of a Korean page: %s" % (sample.where, runs)
