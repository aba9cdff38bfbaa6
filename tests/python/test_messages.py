"""Korean messages on request (issue 21): `--lang ko`, PUZZLE_LANG=ko or a Korean locale; English
is the default, and `grade` stays English whatever the locale.

The Korean table (scripts/puzzlelib/messages.py) is keyed by the English text: every tr() literal
in scripts/puzzlelib/ must have its Korean form, with the same placeholders in the same order.
"""

import ast
import json
import re
import subprocess

import pytest

from conftest import REPO

from puzzlelib import commands, driver_text, explain, messages
from puzzlelib.messages import KO, PLACEHOLDER

PUZZLELIB = REPO / "scripts" / "puzzlelib"


def tr_literals():
    """(file:line, text) of every tr("...") and tr_reason("...") call with a literal argument."""
    found = []
    for path in sorted(PUZZLELIB.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "tr"
                    and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                found.append(("%s:%d" % (path.name, node.lineno), node.args[0].value))
    return found


def test_there_are_tr_calls_to_check():
    assert len(tr_literals()) > 50


@pytest.mark.parametrize("where,text", tr_literals(), ids=lambda x: x if ":" in str(x) and ".py" in str(x) else "")
def test_every_tr_literal_has_a_korean_form(where, text):
    assert text in KO, "%s: tr(%r) has no Korean form in messages.KO" % (where, text)


@pytest.mark.parametrize("key", sorted(KO))
def test_the_korean_form_keeps_the_placeholders_in_order(key):
    # printf's placeholders are filled in order; named ones ({array}, %(detail)s) may move, as the
    # Korean sentence orders its words (test_catalog.py checks that they are the same set).
    positional = [p for p in PLACEHOLDER.findall(key) if p in ("%s", "%d", "%g")]
    assert [p for p in PLACEHOLDER.findall(KO[key]) if p in ("%s", "%d", "%g")] == positional, (key, KO[key])
    assert sorted(PLACEHOLDER.findall(KO[key])) == sorted(PLACEHOLDER.findall(key)), (key, KO[key])


def test_every_reason_and_hint_has_a_korean_form():
    reasons = [r for r in explain.REASONS.values() if r is not explain.MESSAGE] + [explain.RACE_OTHER]
    reasons += list(explain.INTERLEAVED_REASONS.values())
    texts = reasons + list(commands.HINTS.values()) + [commands.CRASH_HINT]
    missing = [t for t in texts if t not in KO]
    assert not missing, missing


@pytest.fixture
def korean():
    messages.activate()
    messages.set_lang("ko")
    yield
    messages.set_lang(None)
    messages._active = False


def test_formatted_reasons_are_translated_with_their_values(korean):
    assert messages.tr_reason("device code calls the host function exit") == "device 코드가 host 함수 exit를 호출함"
    assert messages.tr_reason("out of memory (limit 2 GiB)") == "메모리 부족 (제한 2 GiB)"
    assert messages.tr_reason("timed out after 3 s") == "3초 후 시간 초과"
    assert messages.tr_reason("kernel error: barrier divergence") == "kernel 오류: Barrier divergence"
    assert messages.tr_reason("unsynchronized accesses to shared memory") == "동기화 없는 shared memory 접근"


def test_the_korean_keeps_the_notes_english_terms(korean):
    # As the course notes write them: Korean prose, English technical terms.
    assert "Race Condition" in messages.tr_reason("race: result depends on thread order")
    assert "Barrier" in messages.tr_reason("barrier divergence")
    assert re.search(r"[\uac00-\ud7a3]", messages.tr_reason("race: unsynchronized accesses to shared memory"))


SAY_MISMATCH = ('SAY {"key": "mismatch", "text": "mismatch: {count} of {total} outputs differ; first at index {first}", '
                '"count": 8, "total": 8, "first": 0}')


def say_element(index, expected, got, fill=None):
    """A mismatch_at record as harness.cpp prints it (its fill note a phrase of its own)."""
    record = {"key": "mismatch_at", "text": "  [{index}] expected {expected}, got {got}", "index": index,
              "expected": expected, "got": got}
    if fill is not None:
        record["text"] += " (uninitialized: {fill})"
        record["fill"] = fill
    return "SAY " + json.dumps(record)


FILL_FLOAT = {"key": "fill_read_as", "text": "the 0xCD fill read as a float"}
FILL_COMPUTED = {"key": "fill_computed", "text": "the 0xCD fill {rest}, computed from memory nobody wrote", "rest": "+ 5"}
FILL_SUM = {"key": "fill_sum", "text": "{count} x the 0xCD fill {rest}, a sum of memory nobody wrote", "count": 3,
            "rest": "- 2"}


def test_the_mismatch_block_in_korean_from_its_data(korean):
    assert driver_text.render(SAY_MISMATCH) == "mismatch: 출력 8개 중 8개가 다릅니다. 처음 다른 곳은 index 0"
    assert driver_text.render(say_element(1, "1", "-842150451")) == "  [1] 기대값 1, 결과 -842150451"
    assert driver_text.render(say_element(0, "2", "-4.316021e+08", FILL_FLOAT)) == \
        "  [0] 기대값 2, 결과 -4.316021e+08 (초기화되지 않은 값: 0xCD로 채운 값을 float로 읽은 것)"
    # The notes of values computed from the fill (harness.cpp's uninit_note), every form in Korean.
    assert driver_text.render(say_element(0, "0", "-842150446", FILL_COMPUTED)) == \
        "  [0] 기대값 0, 결과 -842150446 (초기화되지 않은 값: 0xCD로 채운 값 + 5: 아무도 쓰지 않은 메모리로 계산됨)"
    assert driver_text.render(say_element(0, "0", "1768515945", FILL_SUM)) == \
        "  [0] 기대값 0, 결과 1768515945 (초기화되지 않은 값: 0xCD로 채운 값 3개의 합 - 2: 아무도 쓰지 않은 메모리를 더함)"
    # Lines that are not SAY records are shown as they came.
    assert driver_text.render("config:   SIZE = 8") == "config:   SIZE = 8"


def test_the_mismatch_block_in_english_is_the_drivers_english():
    # English (the default): the template with its facts, as the driver prints it when run by hand.
    assert driver_text.render(SAY_MISMATCH) == "mismatch: 8 of 8 outputs differ; first at index 0"
    assert driver_text.render(say_element(0, "0", "1768515945", FILL_SUM)) == \
        "  [0] expected 0, got 1768515945 (uninitialized: 3 x the 0xCD fill - 2, a sum of memory nobody wrote)"
    line = driver_text.render(SAY_MISMATCH)
    assert isinstance(line, driver_text.SaidLine) and line.said["key"] == "mismatch" and line.said["count"] == 8


@pytest.mark.parametrize("line", [
    'SAY {"key": "x", "text": "{missing} fact"}',           # a placeholder no fact fills
    'SAY {"key": "x", "text": "{n:>99999999}", "n": 1}',    # a format spec: never applied to a learner's line
    'SAY {"key": "x", "text": "%s", "n": 1}',
    'SAY {"key": "x", "text": 3}',
    'SAY {"key": "x", "text": "{v}", "v": [1, 2]}',
    'SAY {"key": "x", "text": "{v}", "v": {"text": "{w}"}}',
    'SAY not json',
    'SAY ["text"]',
])
def test_a_line_that_is_no_valid_record_is_shown_as_it_came(korean, line):
    # Learner code can print anything, under grade too: such a line is text, never formatted.
    assert driver_text.render(line) == line and not isinstance(driver_text.render(line), driver_text.SaidLine)


# harness::Say("key", "text" "text" ...): the templates of the C++ sources, string literals joined.
SAY_CALL = re.compile(r'Say\(\s*"[^"]*"\s*,((?:\s*"(?:[^"\\]|\\.)*")+)')
SAY_SOURCES = sorted((REPO / "harness" / "src").glob("*.cpp")) + sorted((REPO / "puzzles").glob("*/driver.cpp"))


def say_templates():
    found = []
    for path in SAY_SOURCES:
        text = path.read_text(encoding="utf-8")
        for m in SAY_CALL.finditer(text):
            literal = "".join(ast.literal_eval(part) for part in re.findall(r'"(?:[^"\\]|\\.)*"', m.group(1)))
            found.append(("%s:%d" % (path.relative_to(REPO), text.count("\n", 0, m.start()) + 1), literal))
    return found


def test_the_drivers_say_their_prose_as_data():
    where = {w.split(":")[0] for w, _ in say_templates()}
    assert "harness/src/harness.cpp" in where and "puzzles/p13/driver.cpp" in where and "puzzles/p12/driver.cpp" in where
    assert len(say_templates()) >= 19


@pytest.mark.parametrize("where,text", say_templates(), ids=lambda x: x if ".cpp:" in str(x) else "")
def test_every_driver_sentence_has_a_korean_form(where, text):
    assert text in KO, "%s: harness::Say template %r has no Korean form in the catalogues" % (where, text)


def test_no_regular_expression_reads_the_drivers_prose():
    """The mismatch block, the fill notes and p13's notes reach the CLI as data (SAY records):
    nothing in scripts/ matches their English any more (messages.DRIVER_LINES and FILL_NOTES are gone)."""
    assert not hasattr(messages, "DRIVER_LINES") and not hasattr(messages, "FILL_NOTES")
    assert not hasattr(messages, "driver_line")
    prose = ["outputs differ", "0xCD fill", "] expected ", "expected (.*?), got", "uninitialized: ",
             "calls p13_single_pass twice", "uniform in [-1000"]
    for path in sorted((REPO / "scripts").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for words in prose:
            assert words not in text, "%s still carries the driver's English %r" % (path.relative_to(REPO), words)


def test_english_unless_activated(monkeypatch):
    # `grade` never activates: its reports and JSON stay English in a Korean locale.
    monkeypatch.setenv("LANG", "ko_KR.UTF-8")
    monkeypatch.setenv("PUZZLE_LANG", "ko")
    assert messages.lang() == "en" and messages.tr("solved") == "solved"


@pytest.mark.parametrize("how", [["--lang", "ko"], ["--lang=ko"], "PUZZLE_LANG", "LANG"])
def test_run_and_check_speak_korean_on_request(cli, fixture_root, fake_driver, how):
    env = {"PUZZLE_LANG": "", "LC_ALL": "", "LC_MESSAGES": "", "LANG": "C.UTF-8"}
    extra = []
    if how == "PUZZLE_LANG":
        env["PUZZLE_LANG"] = "ko"
    elif how == "LANG":
        env["LANG"] = "ko_KR.UTF-8"
    else:
        extra = how
    r = cli("run", "p99", "--simple", "--binary", fake_driver(mode="fail"), *extra, root=fixture_root, env=env)
    assert r.returncode == 1, r
    assert "p99 --simple 실패: 오답" in r.stdout
    assert "위의 `out:`과 `expected:` 줄을 비교하세요" in r.stdout
    r = cli("check", "p99", "--simple", "--seed", "1", "--binary", fake_driver(mode="race"), *extra,
            root=fixture_root, env=env)
    assert r.returncode == 1, r
    assert "seed: 1 (같은 case를 다시 돌리려면 --seed 1)" in r.stdout
    assert re.search(r"p99 --simple: Race Condition \(.*\), case 1/\d+에서 실패", r.stdout), r.stdout
    assert "variant 0/1개 통과" in r.stdout


def test_a_wrong_answer_in_check_is_named_once_in_korean(cli, fixture_root, fake_driver):
    # The verdict "fail" and the reason "wrong answer" are both 오답 in Korean: not "오답 (오답)".
    r = cli("check", "p99", "--simple", "--seed", "1", "--binary", fake_driver(mode="fail"), "--lang", "ko",
            root=fixture_root)
    assert r.returncode == 1, r
    assert re.search(r"p99 --simple: 오답, case 1/\d+에서 실패: n=", r.stdout), r.stdout
    assert "오답 (오답)" not in r.stdout
    r = cli("check", "p99", "--simple", "--seed", "1", "--binary", fake_driver(mode="fail"), "--lang", "en",
            root=fixture_root)
    assert re.search(r"p99 --simple: fail \(wrong answer\), failed at case 1 of \d+: n=", r.stdout), r.stdout


def test_english_is_the_default(cli, fixture_root, fake_driver):
    env = {"PUZZLE_LANG": "", "LC_ALL": "", "LC_MESSAGES": "", "LANG": "C.UTF-8"}
    r = cli("run", "p99", "--simple", "--binary", fake_driver(mode="fail"), root=fixture_root, env=env)
    assert "p99 --simple failed: wrong answer" in r.stdout
    r = cli("run", "p99", "--simple", "--binary", fake_driver(mode="fail"), "--lang", "en", root=fixture_root,
            env=dict(env, PUZZLE_LANG="ko"))
    assert "p99 --simple failed: wrong answer" in r.stdout  # --lang wins over the environment


def test_a_bad_language_is_a_usage_error(cli, fixture_root):
    r = cli("run", "p99", "--simple", "--lang", "fr", root=fixture_root)
    assert r.returncode == 2 and "--lang must be en or ko" in r.stderr


@pytest.mark.parametrize("word", ["simple", "-simple"])
def test_a_variant_without_its_dashes_suggests_the_flag(cli, fixture_root, word):
    r = cli("run", "p99", word, root=fixture_root)
    assert r.returncode == 2
    assert "did you mean --simple?" in r.stderr, r.stderr


def test_korean_tables_line_up_in_the_terminal():
    # Hangul takes two terminal columns: `check`'s table pads by columns, not by characters.
    from puzzlelib import commands
    from puzzlelib.common import table, width

    assert width("판정") == 4 and width("case 2/20에서 실패") == 18 and width("fail") == 4
    lines = table([["p14 --simple", "오류", "case 2/20에서 실패", "0.0", "이유"]],
                  header=["variant", "판정", "case", "초", "이유"]).splitlines()
    # Each column starts at the same terminal column on every line.
    starts = [[width(l[:m.start()]) for m in re.finditer(r"(?<=  )\S", l)] for l in lines]
    assert starts[0] == starts[1] == [14, 20, 40, 45], lines
    assert 19 <= width(commands.cut("한국어 요약 " * 10, 21)) <= 21 and commands.cut("abc", 21) == "abc"


@pytest.mark.parametrize("puzzle,args", [
    ("p12", ["--variant", "shuffle", "--n", 100, "--tpb", 32, "--seed", 3]),   # calls the launcher twice: its note
    ("p13", ["--variant", "block", "--n", 10, "--tpb", 4, "--show"]),
    ("p14", ["--variant", "simple", "--n", 8, "--tpb", 8, "--show"]),
])
def test_the_data_words_the_same_english_as_the_driver_run_by_hand(puzzle, args):
    """A driver run by hand prints its English; run as the CLI runs it, SAY records, which
    driver_text words in English as exactly those lines."""
    from driver_helpers import binary, run

    path = binary("%s_cpu" % puzzle)
    _, by_hand = run(path, *args)
    proc = subprocess.run([str(path)] + [str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, env=driver_text.environment(), timeout=120)
    records = [l for l in proc.stdout.splitlines() if l.startswith("SAY ")]
    assert records, proc.stdout
    worded = [driver_text.render(l) for l in proc.stdout.splitlines()]
    assert worded == by_hand.splitlines()


def refusal_reasons():
    """Why drivers refuse a case: the literals of `refuse(c, "...")` and of their *unsupported()
    functions (whose result is what they refuse with)."""
    literal = r'"(?:[^"\\]|\\.)*"'
    found = []
    for path in sorted((REPO / "puzzles").glob("*/driver.cpp")):
        text = path.read_text(encoding="utf-8")
        chunks = [m.group(1) for m in re.finditer(r"refuse\(c,\s*((?:%s\s*)+)\)" % literal, text)]
        for m in re.finditer(r"^\S[^\n]*unsupported\([^)]*\)\s*\{\n(.*?)^\}", text, re.M | re.S):
            chunks += [m2.group(0) for m2 in re.finditer(r"(?:%s\s*)+" % literal, m.group(1))]
        for chunk in chunks:
            found.append((path.parent.name, "".join(ast.literal_eval(p) for p in re.findall(literal, chunk))))
    return found


def test_the_drivers_refuse_with_reasons_to_translate():
    assert {p for p, _ in refusal_reasons()} == {"p12", "p13", "p14", "p29"}
    assert len(refusal_reasons()) >= 15


@pytest.mark.parametrize("puzzle,why", sorted(set(refusal_reasons())))
def test_every_refusal_has_a_korean_form(puzzle, why):
    assert why in KO, "%s refuses a case with %r, which has no Korean form" % (puzzle, why)


def test_a_refused_case_in_korean(cli):
    from driver_helpers import binary

    r = cli("run", "p14", "--simple", "--n", 100, "--tpb", 32, "--binary", binary("p14_cpu"), "--lang", "ko")
    assert r.returncode == 2, r
    assert "오류: p14 --simple, n = 100, tpb = 32: block 하나는 원소를 최대 tpb개까지 scan합니다" in r.output
    assert "scans at most" not in r.output and "SAY {" not in r.output
