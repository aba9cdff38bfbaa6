"""The diagnosis record and its rendering (scripts/puzzlelib/diagnosis.py): every kind the simulator
has is worded from its facts, in English and Korean, and the simulator's English block is replaced,
not parsed."""

import re

import pytest

from conftest import REPO

from puzzlelib import diagnosis, driver, messages

KINDS_H = REPO / "harness" / "sim" / "src" / "diagnosis.h"


def simulator_kinds():
    text = KINDS_H.read_text(encoding="utf-8")
    return re.findall(r"^\s*X\((\w+),\s*\d+,", text, re.M)


def test_the_kind_list_is_read():
    assert "race_shared" in simulator_kinds() and len(simulator_kinds()) > 20


@pytest.mark.parametrize("kind", simulator_kinds())
def test_every_kind_has_a_renderer(kind):
    diagnosis._load()
    assert kind in diagnosis.RENDERERS, "no renderer for the simulator's kind %s (diagnosis_*.py)" % kind


def test_the_filter_holds_back_the_report_and_split_output_removes_exactly_the_message():
    keep = diagnosis.ReportFilter()
    lines = ["out: [1, 2]", "cudasim: error: race in kernel k", "  write-after-read between ...",
             "also: uninitialized read in kernel k", "  advice"]
    assert [l for l in lines if keep(l)] == ["out: [1, 2]"]
    assert keep.held == lines[1:]
    record = {"kind": "race_shared", "message": "race in kernel k\n  write-after-read between ...\n"
                                                "also: uninitialized read in kernel k\n  advice"}
    other = ["mismatch: 1 of 2 outputs differ", "  [0] expected 1, got 2"]
    span = diagnosis._report_block(other[:1] + lines[1:] + other[1:], record)
    assert span == (1, 5)


def test_a_graded_record_comes_as_a_string_and_its_kind_is_the_checkers():
    result = {"diagnosis_kind": "deadlock", "diagnosis": '{"kind": "race_shared", "facts": {"array": "s"}}'}
    d = driver.diagnosis_record(result)
    assert d["kind"] == "deadlock" and d["facts"] == {"array": "s"}
    assert driver.diagnosis_record({"diagnosis": '{"kind": "deadlock"}'}) is None  # no validated kind: no record
    assert driver.diagnosis_record({"diagnosis_kind": "deadlock", "diagnosis": "{not json"})["kind"] == "deadlock"


def test_kernel_words_in_both_languages():
    f = {"kernel": "reduce_k1", "launch_site": "p12.cu:97"}
    assert diagnosis.kernel_words(f) == "kernel reduce_k1 (launched at p12.cu:97)"
    messages.activate()
    messages.set_lang("ko")
    try:
        assert diagnosis.kernel_words(f) == "kernel reduce_k1 (p12.cu:97에서 launch)"
    finally:
        messages.set_lang(None)
        messages._active = False
