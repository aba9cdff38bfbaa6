"""What a learner sees when their file uses CUDA the CPU simulator does not have (issue 9, item 8).

Built for real, in a fresh copy of the repository: the simulator's own explanation (an #error in
harness/sim/include) is shown although it is not in the learner's file, and a CUDA function the
simulator lacks is named as such instead of g++'s "did you mean" guess alone.

The tests share one copy, so the simulator is built once (the first test builds it from nothing)
and each later test rebuilds only the learner's file, which the `tree` fixture puts back first.
"""

import shutil

import pytest

from test_concurrency import finish, fresh_tree, start


@pytest.fixture(scope="module")
def shared_tree(tmp_path_factory):
    if not shutil.which("cmake") or not any(shutil.which(c) for c in ("c++", "g++", "clang++")):
        pytest.skip("needs cmake and a C++ compiler")
    root = fresh_tree(tmp_path_factory.mktemp("build_messages"))
    learner = root / "puzzles" / "p14" / "p14.cu"
    return root, learner.read_text(encoding="utf-8")


@pytest.fixture
def tree(shared_tree):
    """The shared copy with the learner's file as it was copied."""
    root, pristine = shared_tree
    (root / "puzzles" / "p14" / "p14.cu").write_text(pristine, encoding="utf-8")
    return root


def test_cub_and_a_missing_intrinsic_are_explained(tree):
    root = tree
    learner = root / "puzzles" / "p14" / "p14.cu"
    text = learner.read_text(encoding="utf-8")
    launcher = text.index("{", text.index("void p14_naive(")) + 1
    text = (text[:launcher] + "\n  unsigned peers = __match_any_sync(0xffffffffu, 1);\n  (void)peers;\n" + text[launcher:])
    learner.write_text("#include <cub/cub.cuh>\n" + text, encoding="utf-8")
    code, output = finish(start(root, "run", "p14", "--simple", "--backend", "cpu"))
    assert code == 2, output  # a build error, not a failed puzzle
    assert "Build of p14_cpu failed (puzzles/p14/p14.cu)" in output
    # the simulator header's #error text, although the error is not in the learner's file
    assert "CUB is not available on the CPU simulator" in output
    assert "harness/sim/include/cub/cub.cuh" in output
    assert "__match_any_sync is not supported by the CPU simulator; use __ballot_sync." in output
    assert str(root) not in output.split("Build of")[1]  # paths relative to the repository


def test_cooperative_groups_and_cuda_malloc_async_build(tree):
    """Both were refused before the simulator had them (issue 12): a learner file that uses them
    now builds and runs, and the puzzle's verdict is about the kernel, not the build."""
    root = tree
    learner = root / "puzzles" / "p14" / "p14.cu"
    text = learner.read_text(encoding="utf-8")
    launcher = text.index("{", text.index("void p14_naive(")) + 1
    text = (text[:launcher] + "\n  int* extra = nullptr;\n  cudaMallocAsync(&extra, 4, 0);\n  cudaFreeAsync(extra, 0);\n"
            + text[launcher:])
    learner.write_text("#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n" + text,
                       encoding="utf-8")
    code, output = finish(start(root, "run", "p14", "--simple", "--backend", "cpu"))
    assert code == 1, output  # built; the untouched skeleton then fails as a puzzle
    assert "Build of" not in output
    assert "p14 --simple failed" in output


def test_the_simulators_own_headers_refuse_a_learner_file(tree):
    """cudasim/control.h (schedules, error modes, last writers) and harness/sim/src are not CUDA: a
    puzzle file that used them would pass here and not build with nvcc, so its build stops and says so."""
    root = tree
    learner = root / "puzzles" / "p14" / "p14.cu"
    text = learner.read_text(encoding="utf-8")
    learner.write_text('#include <cudasim/control.h>\n#include "../../harness/sim/src/events.h"\n' + text,
                       encoding="utf-8")
    code, output = finish(start(root, "run", "p14", "--simple", "--backend", "cpu"))
    assert code == 2, output
    assert "Build of p14_cpu failed (puzzles/p14/p14.cu)" in output
    assert "cudasim/control.h is the harness's, not part of CUDA" in output
    assert "harness/sim/src holds the simulator's internals" in output


def test_thrust_and_cub_advice_from_compiler_output():
    """Which compiler output gets which advice line (issue 19): a missing Thrust or CUB header, and
    the simulator's own cub/cub.cuh #error, each once; nothing for unrelated missing headers."""
    from puzzlelib import build as bld
    thrust = ("p.cu:1:10: fatal error: thrust/device_vector.h: No such file or directory\n"
              "p.cu:2:10: fatal error: thrust/sort.h: No such file or directory\n")
    advice = bld.unsupported_cuda_advice(thrust)
    assert advice[0].startswith("Thrust (<thrust/...>) is not supported by the CPU simulator: write the kernel yourself")
    assert "puzzles/p12" in advice[0] and "puzzles/p14" in advice[0] and "std::inclusive_scan" in advice[0]
    assert sum("Thrust" in a for a in advice) == 1
    cub_missing = "p.cu:1:10: fatal error: cub/warp/warp_reduce.cuh: No such file or directory\n"
    cub_error = ('harness/sim/include/cub/cub.cuh:2:2: error: #error "cudasim: CUB is not available on the CPU '
                 'simulator; the puzzles ask you to write the collective yourself."\n')
    for text in (cub_missing, cub_error, cub_missing + cub_error):
        advice = bld.unsupported_cuda_advice(text)
        assert sum(a.startswith("CUB (<cub/...>) is not supported by the CPU simulator") for a in advice) == 1, text
    assert bld.unsupported_cuda_advice("p.cu:1:10: fatal error: mylib/thrust.h: No such file or directory\n") == []


def test_a_puzzle_file_that_includes_thrust_gets_the_advice(tree):
    root = tree
    learner = root / "puzzles" / "p14" / "p14.cu"
    learner.write_text("#include <thrust/scan.h>\n" + learner.read_text(encoding="utf-8"), encoding="utf-8")
    code, output = finish(start(root, "run", "p14", "--simple", "--backend", "cpu"))
    assert code == 2, output
    assert "Build of p14_cpu failed (puzzles/p14/p14.cu)" in output
    assert "thrust/scan.h: No such file" in output
    assert "Thrust (<thrust/...>) is not supported by the CPU simulator" in output


def test_the_build_failure_in_korean(tree):
    """The CLI's words around the compiler's output follow --lang ko (issue 21); the compiler's own
    lines stay as the compiler printed them."""
    root = tree
    learner = root / "puzzles" / "p14" / "p14.cu"
    text = learner.read_text(encoding="utf-8")
    launcher = text.index("{", text.index("void p14_naive(")) + 1
    learner.write_text(text[:launcher] + "\n  int broken = ;\n" + text[launcher:], encoding="utf-8")
    code, output = finish(start(root, "run", "p14", "--simple", "--backend", "cpu", "--lang", "ko"))
    assert code == 2, output
    assert "p14_cpu build 실패 (puzzles/p14/p14.cu):" in output
    assert "위의 첫 번째 error를 고친 다음 같은 명령을 다시 실행하세요." in output
    assert "(build 출력 전체: build/last-build.log)" in output
    assert "error: expected primary-expression" in output  # g++'s line, untouched
    for english in ("Build of", "Fix the first error above", "full build output"):
        assert english not in output, english


def test_the_advice_in_korean():
    from puzzlelib import build as bld
    from puzzlelib import messages

    text = ("p.cu:1:10: fatal error: thrust/sort.h: No such file or directory\n"
            "p.cu:5:3: error: '__match_any_sync' was not declared in this scope\n"
            "p.cu:6:3: error: 'cudaFooBar' was not declared in this scope\n")
    with messages.speaking("ko"):
        advice = bld.unsupported_cuda_advice(text)
        summary = bld.build_failure_summary(text, bld.Path("/nonexistent"), "p.cu", "p14_cpu")
    assert advice[0].startswith("Thrust(<thrust/...>)는 CPU simulator가 지원하지 않습니다.")
    assert "__match_any_sync는 CPU simulator가 지원하지 않습니다. 대신 __ballot_sync를 쓰세요." in advice
    assert any(a.startswith("cudaFooBar는 CPU simulator의 CUDA에 없습니다") for a in advice)
    assert advice[-1] == "(NVIDIA GPU와 CUDA toolkit이 있는 컴퓨터에서는 --backend gpu가 nvcc로 build합니다.)"
    assert summary.startswith("\np14_cpu build 실패 (p.cu):")
    assert "  p.cu:5:3: error: '__match_any_sync' was not declared in this scope" in summary
    assert "not supported" not in summary and "Fix the first error" not in summary


def test_every_advice_text_has_a_korean_form():
    from puzzlelib import build as bld
    from puzzlelib.messages import KO

    texts = list(bld.UNSUPPORTED_CUDA.values()) + list(bld.LIBRARY_ADVICE.values()) + [
        bld.CMAKE_MISSING, bld.UCONTEXT_HINT, bld.NO_GPU, bld.NO_GPU_TARGET]
    assert [t for t in texts if t not in KO] == []
