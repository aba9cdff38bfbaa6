"""The message catalogues (scripts/puzzlelib/locale/<lang>/LC_MESSAGES/*.po, read by catalog.py):
valid gettext files, a Korean form for every message with the same placeholders, and Korean
particles after a placeholder chosen from the value, never fixed in the table."""

import shutil
import subprocess

import pytest

from puzzlelib import catalog, messages

KO_ENTRIES = list(catalog.entries("ko"))


def test_there_are_korean_catalogues():
    assert len(catalog.po_files("ko")) >= 1
    assert len(KO_ENTRIES) > 100


@pytest.mark.parametrize("path", catalog.po_files("ko"), ids=lambda p: p.name)
def test_msgfmt_accepts_the_catalogue(path):
    """GNU gettext's own check (the format strings of c-format and python-brace-format entries
    included). The test command installs gettext; a machine without it skips only this test."""
    if shutil.which("msgfmt") is None:
        pytest.skip("msgfmt (GNU gettext) is not installed")
    r = subprocess.run(["msgfmt", "--check", "--statistics", "-o", "/dev/null", str(path)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr, r.stderr
    assert "untranslated" not in r.stderr and "fuzzy" not in r.stderr, r.stderr


@pytest.mark.parametrize("path,ctxt,msgid,msgstr,flags", KO_ENTRIES, ids=[e[2][:50] for e in KO_ENTRIES])
def test_every_message_has_a_korean_form_with_the_same_placeholders(path, ctxt, msgid, msgstr, flags):
    assert msgstr, "%s: %r has no Korean form" % (path.name, msgid)
    assert "fuzzy" not in flags, "%s: %r is marked fuzzy" % (path.name, msgid)
    assert sorted(catalog.placeholders(msgstr)) == sorted(catalog.placeholders(msgid)), (msgid, msgstr)
    positional = [p for p in catalog.placeholders(msgid) if p in ("%s", "%d", "%g")]
    assert [p for p in catalog.placeholders(msgstr) if p in ("%s", "%d", "%g")] == positional, \
        "printf placeholders must keep their order: %r" % msgid


def test_a_msgid_is_in_one_catalogue_only():
    seen = {}
    for path, ctxt, msgid, _msgstr, _flags in KO_ENTRIES:
        key = (ctxt, msgid)
        assert key not in seen, "%r is in %s and %s" % (msgid, seen[key].name, path.name)
        seen[key] = path


@pytest.mark.parametrize("value,sound", [
    ("thread 1", "ㄹ"), ("thread 2", ""), ("block 3", "ㅁ"), ("10", "ㅂ"), ("100", "ㄱ"), ("1000", "ㄴ"),
    ("t.html", "ㄹ"), ("p14.cu", ""), ("sdata[2]", ""), ("sdata[3]", "ㅁ"), ("out[6]", "ㄱ"),
    ("`tid + s`", ""), ("kernel", "ㄹ"), ("block", "ㄱ"), ("barrier", ""), ("exit", "ㄱ"),
    ("__syncthreads()", ""), ("`arrive()`", ""), ("fmaxf()", ""), ("파일", "ㄹ"), ("스레드", ""), ("TPB", ""), ("n", "ㄴ"), ("sum", "ㄴ"),
])
def test_the_final_sound_of_a_value(value, sound):
    assert catalog.final_sound(value) == sound


@pytest.mark.parametrize("template,value,expected", [
    ("%s가 멈춤", "thread 1", "thread 1이 멈춤"),
    ("%s가 멈춤", "thread 2", "thread 2가 멈춤"),
    ("%s를 썼습니다", "t.html", "t.html을 썼습니다"),
    ("%s을 썼습니다", "trace.md", "trace.md를 썼습니다"),
    ("%s을(를) 말한 건가요?", "--k1", "--k1을 말한 건가요?"),
    ("%s(으)로 씀", "out[1]", "out[1]로 씀"),
    ("%s(으)로 씀", "out[3]", "out[3]으로 씀"),
    ("%s은 없습니다", "p15", "p15는 없습니다"),
    ("%s와 함께", "sdata[0]", "sdata[0]과 함께"),
    ("%s이번", "x", "x이번"),  # not a particle: left as written
])
def test_a_particle_after_a_placeholder_is_chosen_from_the_value(template, value, expected):
    assert catalog.KoreanMessage(template) % value == expected


def test_named_placeholders_choose_particles_too():
    m = catalog.KoreanMessage("{who}가 {array}를 읽음")
    assert m.format(who="thread 1", array="sdata[2]") == "thread 1이 sdata[2]를 읽음"


def test_english_is_left_alone():
    assert catalog.Message("%s is %d%%") % ("x", 5) == "x is 5%"
    assert catalog.Message("{a}이") .format(a="1") == "1이"  # no particles outside Korean


@pytest.mark.parametrize("path,ctxt,msgid,msgstr,flags", KO_ENTRIES, ids=[e[2][:50] for e in KO_ENTRIES])
def test_no_korean_form_fixes_a_particle_the_value_decides(path, ctxt, msgid, msgstr, flags):
    """Render each Korean form twice, once with values that end in a consonant and once with values
    that end in a vowel: every particle written after a placeholder must follow the value."""
    names = {}
    for p in catalog.placeholders(msgstr):
        if p.startswith("{"):
            names[p[1:-1].partition(":")[0]] = p
    if not catalog.placeholders(msgstr):
        return
    for final, wrong in (("block 1", ["1가 ", "1를 ", "1는 ", "1와 ", "1으로 "]),
                         ("thread 2", ["2이 ", "2을 ", "2은 ", "2과 ", "2으로 "])):
        positional = tuple(final if p == "%s" else 7 for p in catalog.placeholders(msgstr)
                           if p in ("%s", "%d", "%g"))
        values = {n: (final if not p.endswith(":g}") else 1.5) for n, p in names.items()}
        for p in catalog.placeholders(msgstr):
            if p.startswith("%("):
                values[p[2:p.index(")")]] = final
        m = catalog.KoreanMessage(msgstr)
        text = m % (values if "%(" in msgstr else positional) if "%" in "".join(catalog.placeholders(msgstr)) \
            else m.format(**values)
        for w in wrong:
            assert w not in text + " ", "%s: %r renders as %r" % (path.name, msgstr, text)


def test_tr_returns_a_template_that_chooses_particles():
    messages.activate()
    messages.set_lang("ko")
    try:
        assert messages.tr("wrote %s: open it in a browser (it loads nothing from the network)") % "t.html" \
            == "t.html을 썼습니다: browser로 여세요 (network에서 아무것도 불러오지 않습니다)"
    finally:
        messages.set_lang(None)
        messages._active = False


def puzzle_texts():
    import json
    from conftest import REPO
    texts = []
    for path in sorted((REPO / "puzzles").glob("*/puzzle.json")):
        d = json.loads(path.read_text(encoding="utf-8"))
        texts += [(path.parent.name, d["title"]), (path.parent.name, d["summary"])]
        texts += [(path.parent.name, v["summary"]) for v in d["variants"].values()]
    return texts


@pytest.mark.parametrize("puzzle,text", puzzle_texts(), ids=lambda x: str(x)[:40])
def test_every_title_and_summary_of_the_declarations_has_a_korean_form(puzzle, text):
    """The declaration (puzzles/pNN/puzzle.json) is the one place a variant's summary is written;
    its Korean form is in locale/ko/LC_MESSAGES/puzzles.po, and the CLI shows it with --lang ko."""
    assert text in catalog.translations("ko"), "%s: %r has no Korean form in puzzles.po" % (puzzle, text)
