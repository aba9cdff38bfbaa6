"""The learner-facing text in English (the default) or Korean.

`tr(text)` returns `text`, or its Korean form when Korean was asked for: `--lang ko` on the
command line (options.parse sets it), else PUZZLE_LANG=ko, else a Korean locale (LC_ALL,
LC_MESSAGES or LANG starting with `ko`). The English text is the key, so the code reads as it
prints; a `%s` in the key is a `%s` in the translation (tests/python/test_messages.py checks
both, and that every tr() literal in scripts/puzzlelib/ has its Korean form).

The Korean follows the course notes: Korean prose with the English technical terms kept
(Race Condition, Barrier, Bank Conflict, shared memory, thread, block).
"""

from __future__ import annotations

import os
import re
from typing import Optional

LANGS = ("en", "ko")
_chosen: Optional[str] = None  # set by --lang
# Only the learner's commands (run, check, list, trace) speak Korean: `grade` writes reports and
# JSON that tools read, and stays English whatever the locale.
_active = False


def activate() -> None:
    """Called by the learner's commands: from here on, tr() follows the language asked for."""
    global _active
    _active = True


def set_lang(value: str) -> None:
    global _chosen
    _chosen = value


def lang() -> str:
    if not _active:
        return "en"
    if _chosen:
        return _chosen
    env = os.environ.get("PUZZLE_LANG", "").strip().lower()
    if env:
        return "ko" if env.startswith("ko") else "en"
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var, "")
        if value:  # the first one set decides, as in POSIX
            return "ko" if value.lower().startswith("ko") else "en"
    return "en"


def korean() -> bool:
    return lang() == "ko"


def tr(text: str) -> str:
    if lang() == "ko":
        return KO.get(text, text)
    return text


KO = {
    # ---- run -----------------------------------------------------------------------------------
    "source: %s": "source: %s",
    "%s %s passed": "%s %s 통과",
    "%s %s failed: %s": "%s %s 실패: %s",
    "Run `%s check %s %s%s` to test many sizes.": "여러 크기로 시험하려면 `%s check %s %s%s`를 실행하세요.",
    "note: %s, so this runs on the CPU simulator": "note: %s, 그래서 CPU simulator에서 실행합니다",
    "This is a problem with the puzzle setup, not with your code: the build may be out of date.":
        "코드 문제가 아니라 퍼즐 설정 문제입니다. build가 오래되었을 수 있습니다.",
    # ---- where a wrong answer came from (explain.origin_lines) ----------------------------------
    "first wrong element: %s = %s, expected %s": "처음 틀린 원소: %s = %s, expected %s",
    "written by block %s, thread %s at %s (%s)": "block %s, thread %s가 %s에서 씀 (%s)",
    "written by block %s, thread %s at %s as %s (%s)": "block %s, thread %s가 %s에서 %s(으)로 씀 (%s)",
    "after barrier %d": "barrier %d 이후",
    "before the first barrier": "첫 barrier 이전",
    "computed from:": "다음 값들로 계산됨:",
    "on the chain back from the first wrong element": "처음 틀린 원소에서 거슬러 올라가는 chain 위의 cell",
    "%s = %s, read at %s": "%s = %s, %s에서 읽음",
    "input (copied from the host)": "입력 (host에서 복사됨)",
    "set by cudaMemset": "cudaMemset으로 설정됨",
    "no kernel wrote it during the run": "실행 중 어떤 kernel도 쓰지 않음",
    "the same write as above": "위와 같은 write",
    "(and %d more values it was computed from: `trace --html` draws every step)":
        "(이 값의 계산에 쓰인 값 %d개는 생략: `trace --html`이 모든 단계를 그립니다)",
    "(the run wrote too much to record every step)": "(실행이 너무 많이 써서 모든 단계를 기록하지 못했습니다)",
    "Follow the chain from the wrong element back to the input: at the first value you did not expect, check the "
    "index arithmetic of that read and the step (barrier) it ran in.":
        "틀린 원소에서 입력까지 chain을 거슬러 따라가세요. 예상과 다른 첫 값에서 그 read의 index 계산과 "
        "그것이 실행된 단계(barrier)를 확인하세요.",
    # ---- hints ---------------------------------------------------------------------------------
    "Compare the `out:` and `expected:` lines above; start at the first element that differs.":
        "위의 `out:`과 `expected:` 줄을 비교하세요. 처음으로 다른 원소부터 보면 됩니다.",
    "Look at the mismatches above; start at the first element that differs.":
        "위의 mismatch를 보세요. 처음으로 다른 원소부터 보면 됩니다.",
    "Threads read and write the same location without a barrier between them; the answer changed when "
    "they ran in a different order.":
        "thread들이 Barrier 없이 같은 위치를 읽고 씁니다. thread 실행 순서를 바꾸자 답이 달라졌습니다 "
        "(Race Condition).",
    "Running blocks side by side gave a different answer than running them one at a time: a block used a "
    "value that another block writes during the launch before that value was final. Wait until its flag "
    "is set (do not give up after a few polls) and use exactly what you waited for; update a shared total "
    "with one atomic (atomicAdd), not with a read and a later atomicExch.":
        "block들을 나란히 실행하자 하나씩 차례로 실행할 때와 다른 답이 나왔습니다. 어떤 block이 다른 block이 "
        "launch 중에 쓰는 값을 최종 값이 되기 전에 사용했습니다 (Race Condition). flag가 설정될 때까지 기다리고 "
        "(몇 번 polling하고 포기하지 마세요) 기다린 값을 그대로 사용하세요. 공유 합계는 읽은 뒤 나중에 "
        "atomicExch로 쓰지 말고 atomic 하나(atomicAdd)로 갱신하세요.",
    "Read the simulator's report above: it names the kernel and what raced.":
        "위의 simulator 보고를 읽으세요. 어느 kernel에서 무엇이 Race Condition을 일으켰는지 나와 있습니다.",
    "Read the error report above: it says what went wrong, at which source line, and (on the CPU simulator) "
    "in which block and threads, and what to try.":
        "위의 오류 보고를 읽으세요. 무엇이 잘못되었는지, 소스 몇 번째 줄인지, (CPU simulator에서는) 어느 block의 "
        "어느 thread인지, 무엇을 해 보면 되는지 나와 있습니다.",
    "It ran longer than {timeout:g} s: look for a loop that never ends or a barrier some threads never reach "
    "(PUZZLES_TIMEOUT sets the limit in seconds).":
        "{timeout:g}초보다 오래 걸렸습니다. 끝나지 않는 loop나 일부 thread가 도달하지 못하는 Barrier를 찾아보세요 "
        "(PUZZLES_TIMEOUT으로 제한 시간(초)을 바꿀 수 있습니다).",
    "Two threads accessed the same memory, at least one of them writing, with no barrier (or other "
    "synchronization) between them: the report above names both lines. The answer may have come out right "
    "this time; on a GPU it would not always.":
        "두 thread가 사이에 Barrier(또는 다른 동기화) 없이 같은 메모리에 접근했고, 그중 하나 이상이 썼습니다 "
        "(Race Condition). 위 보고에 두 줄이 모두 나와 있습니다. 이번에는 답이 맞았을 수 있지만 GPU에서는 "
        "늘 그렇지 않습니다.",
    "The program crashed, often from an out-of-bounds access. The CPU simulator (--backend cpu) usually "
    "names the bad access.":
        "프로그램이 비정상 종료했습니다. 대개 범위를 벗어난 접근(out-of-bounds) 때문입니다. CPU simulator"
        "(--backend cpu)는 보통 문제의 접근을 짚어 줍니다.",
    # ---- check ---------------------------------------------------------------------------------
    "seed: %d (replay with --seed %d)": "seed: %d (같은 case를 다시 돌리려면 --seed %d)",
    "checking %s: %d cases": "%s 검사 중: case %d개",
    "%s %s: pass (%d cases, %s)": "%s %s: 통과 (case %d개, %s)",
    "%s %s: %s (%s), failed at case %d of %d: n=%d tpb=%d seed=%d":
        "%s %s: %s (%s), case %d/%d에서 실패: n=%d tpb=%d seed=%d",
    "%s %s: %s, failed at case %d of %d: n=%d tpb=%d seed=%d": "%s %s: %s, case %d/%d에서 실패: n=%d tpb=%d seed=%d",
    "    replay: %s": "    다시 실행: %s",
    "%s %s: does not build%s": "%s %s: build 실패%s",
    "%s: %s; backend: %s": "%s: %s; backend: %s",
    "variant": "variant",
    "verdict": "판정",
    "cases": "case",
    "seconds": "초",
    "reason": "이유",
    "%d of %d variants passed, total %s (seed %d)": "variant %d/%d개 통과, 전체 %s (seed %d)",
    "%d of %d": "%d/%d",
    "failed at case %d of %d": "case %d/%d에서 실패",
    "compile error at %s": "%s에서 compile error",
    "compile error": "compile error",
    "does not build": "build 실패",
    "note: %s changed while this ran: the verdicts above are for the version built at the start (sha256 %s), "
    "not for the file as it is now. Run the command again.":
        "note: 실행하는 동안 %s가 바뀌었습니다. 위 판정은 시작할 때 build한 버전(sha256 %s)의 것이고 지금 파일의 "
        "것이 아닙니다. 명령을 다시 실행하세요.",
    # ---- list ----------------------------------------------------------------------------------
    "solved": "해결",
    "not yet (n=%d tpb=%d: %s)": "아직 (n=%d tpb=%d: %s)",
    "does not run": "실행 안 됨",
    "not yet (check failed at %s)": "아직 (check 실패: %s)",
    "puzzle": "puzzle",
    "title": "제목",
    "status": "상태",
    "summary": "요약",
    "checking %s ...": "%s 검사 중 ...",
    "No puzzles found (no puzzles/p*/puzzle.json).": "퍼즐이 없습니다 (puzzles/p*/puzzle.json이 없음).",
    "Run one: %s run pNN --VARIANT    Test many sizes: %s check pNN":
        "하나 실행: %s run pNN --VARIANT    여러 크기로 시험: %s check pNN",
    "status: the verdict of `%s check pNN --VARIANT --quick --seed %d` on your file (remembered until the file "
    "changes), or the case a full `check` of this very file failed at; `check pNN` tests every size.":
        "상태: 여러분의 파일에 대한 `%s check pNN --VARIANT --quick --seed %d`의 판정입니다 (파일이 바뀔 때까지 "
        "기억합니다). 바로 이 파일을 전체 `check`가 실패시켰다면 그 case를 보여 줍니다. 모든 크기는 "
        "`check pNN`으로 시험하세요.",
    # ---- verdict words -------------------------------------------------------------------------
    "pass": "통과",
    "fail": "오답",
    "race": "Race Condition",
    "error": "오류",
    "usage": "사용법 오류",
    "wrong answer": "오답",
    "passed": "통과",
    "timed out": "시간 초과",
    "timed out after %g s": "%g초 후 시간 초과",
    "kernel error": "kernel error",
    "kernel error: ": "kernel error: ",
    "race: result depends on thread order": "Race Condition: 결과가 thread 실행 순서에 따라 달라짐",
    "race: result depends on how blocks interleave": "Race Condition: 결과가 block들이 번갈아 실행되는 방식에 따라 달라짐",
    # ---- explain.py reasons --------------------------------------------------------------------
    "deadlock": "deadlock",
    "barrier divergence": "Barrier divergence",
    "endless loop (a thread never reached a barrier)": "끝나지 않는 loop (Barrier에 도달하지 않는 thread)",
    "endless wait (a block waits for what no other block will write)":
        "끝없는 대기 (다른 어떤 block도 쓰지 않을 값을 block이 기다림)",
    "endless loop (a block never finished)": "끝나지 않는 loop (block이 끝나지 않음)",
    "endless loop (a block passed the same barrier over and over)":
        "끝나지 않는 loop (block이 같은 Barrier를 끝없이 통과함)",
    "race: unsynchronized accesses to shared memory": "Race Condition: 동기화 없는 shared memory 접근",
    "race: unsynchronized accesses to device memory": "Race Condition: 동기화 없는 device memory 접근",
    "race: a block-scope atomic meets another block's access": "Race Condition: block 범위 atomic이 다른 block의 접근과 만남",
    "race: an atomic write and a plain or differently sized access":
        "Race Condition: atomic 쓰기와 일반 접근(또는 크기가 다른 접근)",
    "race: a read-only-path load (__ldg) of data written in the launch":
        "Race Condition: launch 중에 쓴 데이터를 read-only 경로(__ldg)로 읽음",
    "uninitialized read of shared memory": "초기화되지 않은 shared memory 읽기",
    "uninitialized read of device memory": "초기화되지 않은 device memory 읽기",
    "warp misuse: a shuffle reads a lane that has returned": "warp 오용: shuffle이 이미 return한 lane을 읽음",
    "warp misuse: a lane calls with a mask without itself": "warp 오용: 자기 자신이 빠진 mask로 호출한 lane",
    "warp misuse": "warp 오용",
    "stack overflow": "stack overflow",
    "crash: null pointer dereference": "crash: null pointer 역참조",
    "crash: use after free": "crash: 해제한 메모리 사용 (use after free)",
    "out-of-bounds access": "범위를 벗어난 접근 (out-of-bounds)",
    "crash in host code": "host 코드에서 crash",
    "crash: invalid memory access": "crash: 잘못된 메모리 접근",
    "crash: arithmetic error (division by zero?)": "crash: 산술 오류 (0으로 나눔?)",
    "out of memory": "메모리 부족",
    "device code called from host code": "host 코드에서 device 코드를 호출함",
    "device code calls the host function %(detail)s": "device 코드가 host 함수 %(detail)s를 호출함",
    "the launcher copied device memory to the host (%(detail)s)":
        "launcher가 device memory를 host로 복사함 (%(detail)s)",
    "race: reported by the simulator": "Race Condition: simulator가 보고함",
    "kernel launch failed": "kernel launch 실패",
    "CUDA call failed: ": "CUDA 호출 실패: ",
    "out of memory (limit %s)": "메모리 부족 (제한 %s)",
    # ---- trace ---------------------------------------------------------------------------------
    "trace of %s (%s), n=%d tpb=%d, block %d": "%s의 trace (%s), n=%d tpb=%d, block %d",
    "launch %d of %d: %s<<<%s, %s%s>>> at %s": "launch %d/%d: %s<<<%s, %s%s>>> (%s)",
    ": %d block%s, none of them the traced one": ": block %d개%s, 그중 trace하는 block은 없음",
    ", block %d (threads %s)": ", block %d (thread %s)",
    "shared memory: ": "shared memory: ",
    "step %d: from the kernel's start, until %s": "step %d: kernel 시작부터 %s까지",
    "step %d: after %s, until %s": "step %d: %s 다음부터 %s까지",
    "the end of the kernel": "kernel 끝",
    "the stop below": "아래에서 멈춘 곳",
    "  idle: %s": "  쉼: %s",
    "the launch stopped: %s": "launch가 멈춤: %s",
    "where the threads were when the launch stopped:": "launch가 멈췄을 때 thread들의 위치:",
    "%s wait at __syncthreads() at %s": "%s: %s의 __syncthreads()에서 기다림",
    "%s wait in %s at %s": "%s: %s에서 기다림 (%s)",
    "%s wait on a cuda::barrier at %s": "%s: %s의 cuda::barrier에서 기다림",
    "%s had returned": "%s: 이미 return함",
    "%s still running (no barrier reached)": "%s: 아직 실행 중 (Barrier에 도달하지 않음)",
    "(the block made more events than a trace can hold; the rest are not shown)":
        "(block의 event가 trace가 담을 수 있는 것보다 많아 나머지는 보이지 않습니다)",
    "wrote %s: open it in a browser (it loads nothing from the network)":
        "%s를 썼습니다: browser로 여세요 (network에서 아무것도 불러오지 않습니다)",
    "%s: %s (the simulator's report: `%s run %s %s%s`)": "%s: %s (simulator의 보고: `%s run %s %s%s`)",
    "%s as the traced block left it before the stop": "trace한 block이 멈추기 전에 남긴 %s",
    "threads:": "thread:",
    "a hazard or an uninitialized read": "hazard(Race Condition) 또는 초기화되지 않은 읽기",
    " \u2026 and %d more threads": " \u2026 외 thread %d개",
    "None of its blocks is the traced one.": "trace하는 block이 이 launch에는 없습니다.",
    "start: shared memory before the kernel runs (nothing written yet)":
        "시작: kernel이 실행되기 전의 shared memory (아직 아무것도 쓰지 않음)",
    "Rows below are the steps; use the slider, the buttons or the arrow keys.":
        "아래의 행이 step입니다. slider, 버튼, 화살표 키로 움직이세요.",
    "the start": "시작",
    "start": "시작",
    "previous step": "이전 step",
    "next step": "다음 step",
    "the last step": "마지막 step",
    "end": "끝",
    "step %d": "step %d",
    "failed: %s": "실패: %s",
    "The traced program did not run (exit %d).": "trace할 프로그램이 실행되지 않았습니다 (exit %d).",
    # ---- usage errors --------------------------------------------------------------------------
    "unknown option %s": "알 수 없는 option %s",
    " (did you mean %s?)": " (%s을(를) 말한 건가요?)",
    "%s has no variant or option %s": "%s에는 variant나 option %s이(가) 없습니다",
    "%s is not an option: variant flags start with two dashes (did you mean %s?)":
        "%s은(는) option이 아닙니다: variant flag는 대시 두 개로 시작합니다 (%s을(를) 말한 건가요?)",
}


# What the driver says an uninitialized value is (harness.cpp's uninit_note), in Korean.
FILL_NOTES = [
    (re.compile(r"^the 0xCD fill read as an? (.+)$"), r"0xCD로 채운 값을 \1로 읽은 것"),
    (re.compile(r"^the 0xCD fill ([-+] \d+), computed from memory nobody wrote$"),
     r"0xCD로 채운 값 \1: 아무도 쓰지 않은 메모리로 계산됨"),
    (re.compile(r"^(\d+) x the 0xCD fill ([-+] \d+), a sum of memory nobody wrote$"),
     r"0xCD로 채운 값 \1개의 합 \2: 아무도 쓰지 않은 메모리를 더함"),
]


def fill_note(note: str) -> str:
    for pattern, replacement in FILL_NOTES:
        if pattern.match(note):
            return pattern.sub(replacement, note)
    return note


# The driver's mismatch block (harness/src/harness.cpp prints it in English): its lines, in Korean.
DRIVER_LINES = [
    (re.compile(r"^mismatch: (\d+) of (\d+) outputs differ; first at index (\d+)$"),
     r"mismatch: 출력 \2개 중 \1개가 다릅니다. 처음 다른 곳은 index \3"),
    (re.compile(r"^(\s+\[\d+\]) expected (.*?), got (.*?)(?: \(uninitialized: (.*)\))?$"),
     lambda m: "%s 기대값 %s, 결과 %s%s" % (m.group(1), m.group(2), m.group(3),
                                         " (초기화되지 않은 값: %s)" % fill_note(m.group(4)) if m.group(4) else "")),
    (re.compile(r"^note: memory from cudaMalloc and __shared__ arrays starts as garbage .*$"),
     "note: cudaMalloc 메모리와 __shared__ 배열은 쓰레기 값으로 시작합니다(simulator는 바이트 0xCD로 채웁니다). "
     "그 출력은 아무도 쓰지 않았거나, 아무도 쓰지 않은 메모리로 계산되었습니다."),
]


# A reason without its verdict word ("race: X" shown as "X" after "race"): the same in Korean.
for _key in [k for k in KO if k.startswith("race: ")]:
    KO.setdefault(_key[len("race: "):], KO[_key].split(": ", 1)[-1])

PLACEHOLDER = re.compile(r"%\(\w+\)s|%[sdg]|\{\w+(?::\w+)?\}")
_patterns = None  # the KO keys with placeholders, as regexes that match a formatted text


def tr_reason(text: str) -> str:
    """A reason already formatted in English (`device code calls the host function exit`), in
    Korean: the key whose pattern matches it, with the same values put into the Korean form. A
    reason made of a known prefix and a text (`kernel error: ...`) translates the prefix."""
    if lang() != "ko":
        return text
    if text in KO:
        return KO[text]
    global _patterns
    if _patterns is None:
        _patterns = []
        for key, ko in KO.items():
            if PLACEHOLDER.search(key):
                parts = PLACEHOLDER.split(key)
                # a number where the key has %d or %g, any text where it has %s
                groups = [r"(-?\d+)" if h == "%d" else r"(-?[\d.e+]+)" if h in ("%g", "{timeout:g}") else "(.+?)"
                          for h in PLACEHOLDER.findall(key)]
                regex = re.escape(parts[0]) + "".join(g + re.escape(x) for g, x in zip(groups, parts[1:]))
                _patterns.append((re.compile("^" + regex + "$"), PLACEHOLDER.split(ko)))
    for pattern, ko_parts in _patterns:
        m = pattern.match(text)
        if m and len(ko_parts) == len(m.groups()) + 1:
            return "".join(part + (m.group(k + 1) if k < len(m.groups()) else "") for k, part in enumerate(ko_parts))
    for prefix in ("kernel error: ", "CUDA call failed: "):
        if text.startswith(prefix):
            return KO[prefix] + tr_reason(text[len(prefix):])
    return text


def driver_line(line: str) -> str:
    """A line of the driver's output, in Korean when it is one of the mismatch block's."""
    if lang() != "ko":
        return line
    for pattern, replacement in DRIVER_LINES:
        if pattern.match(line):
            return pattern.sub(replacement, line)
    return line
