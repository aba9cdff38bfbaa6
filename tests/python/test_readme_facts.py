"""What the READMEs state agrees with the checker and the declarations (issue 21).

- No page says that `__syncthreads()` forgives a thread that has returned: the simulator reports
  that as barrier divergence (tests/planted/p14/simple_barriers_in_offset_if.plant and
  p12/k1_barrier_in_if.plant prove it), and p14's tip forbids it.
- A comment that counts a puzzle's variants ("both variants") counts them as puzzle.json does.
- Every sample shows the same fiber implementation, and the Start section names the others, so
  a learner whose machine prints another one knows why.
- Every Korean page has a Korean title that keeps the English one.
"""

import json
import re

import pytest

from conftest import HANGUL, REPO

import readme_samples as rs  # scripts/readme_samples.py (conftest puts scripts/ on sys.path)

PAGES = [p for p in rs.readmes() if p.name != "instructors.md"]

# Ways to say that a returned thread is excused from a __syncthreads(), in English and Korean.
FORGIVING = [
    re.compile(r"__syncthreads\(\)`?\s+(forgives|ignores|excuses|does not wait for|skips)\b[^.;]*\b(returned|exited)",
               re.I),
    re.compile(r"\b(returned|exited) threads?\b[^.;]*\b(are|is) (not counted|ignored|excused|forgiven)\b[^.;]*"
               r"__syncthreads", re.I),
    re.compile(r"__syncthreads\(\)`?[^.;]*return한 thread를[^.;]*(셈에서 빼|무시|세지 않|기다리지 않)"),
]


def test_the_forgiving_patterns_find_the_old_wording():
    # A check that cannot fail is no check: the wording issue 21 removed from p29's README matches.
    old_en = "`__syncthreads()` forgives a thread that has returned; `cuda::barrier` does not"
    old_ko = "`__syncthreads()`는 이미 return한 thread를 셈에서 빼 주지만 `cuda::barrier`는 그렇지 않습니다"
    assert any(p.search(old_en) for p in FORGIVING)
    assert any(p.search(old_ko) for p in FORGIVING)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_no_page_says_syncthreads_forgives_a_returned_thread(page):
    # Joined lines: a sentence may wrap anywhere.
    text = " ".join(page.read_text(encoding="utf-8").split())
    for pattern in FORGIVING:
        m = pattern.search(text)
        assert not m, "%s: %r contradicts the checker (a returned thread is barrier divergence)" % (
            page.relative_to(REPO), m.group(0))


def variant_counts():
    return {p.parent.name: len(json.loads(p.read_text(encoding="utf-8"))["variants"])
            for p in (REPO / "puzzles").glob("*/puzzle.json")}


COUNTED = re.compile(r"check (p\d+)\s+#\s*(both variants|두 variant|all (?:two|three|\w+) variants)")
NUMBERS = {"both variants": 2, "두 variant": 2, "all two variants": 2, "all three variants": 3}


def test_comments_that_count_variants_count_them_as_puzzle_json_does():
    counts = variant_counts()
    for page in PAGES:
        for k, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            m = COUNTED.search(line)
            if m:
                assert NUMBERS.get(m.group(2)) == counts[m.group(1)], "%s:%d: %s has %d variants: %s" % (
                    page.relative_to(REPO), k, m.group(1), counts[m.group(1)], line.strip())


def test_every_sample_shows_one_fiber_implementation_and_the_start_names_all():
    shown = {m.group(0) for s in (x for p in rs.readmes() for x in rs.parse(p))
             for line in s.lines for m in [rs.FIBERS.search(line)] if m}
    assert shown == {"native x86-64 fibers"}, shown
    for name in ("README.md", "README.ko.md"):
        text = (REPO / name).read_text(encoding="utf-8")
        for fibers in ("native x86-64 fibers", "boost.context fibers", "ucontext fibers"):
            assert "`%s`" % fibers in text, "%s does not explain %s" % (name, fibers)


@pytest.mark.parametrize("name", sorted(variant_counts()))
def test_korean_pages_have_korean_titles_that_keep_the_english_one(name):
    title = json.loads((REPO / "puzzles" / name / "puzzle.json").read_text(encoding="utf-8"))["title"]
    first = (REPO / "puzzles" / name / "README.ko.md").read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# ") and HANGUL.search(first), first
    assert "(%s)" % title in first, first


def test_the_korean_template_title_is_korean():
    first = (REPO / "scripts" / "puzzlelib" / "templates" / "puzzle" / "README.ko.md").read_text(
        encoding="utf-8").splitlines()[0]
    assert HANGUL.search(first), first


def test_the_korean_start_page_covers_start_exit_codes_and_trace():
    text = (REPO / "README.ko.md").read_text(encoding="utf-8")
    start = re.search(r"^## 시작하기\n(.*?)(?=^## )", text, re.M | re.S)
    assert start, "README.ko.md has no 시작하기 section"
    body = start.group(1)
    assert "종료 코드" in body and "0은 통과" in body
    assert "puzzle.py trace p14 --simple" in body and "--html" in body
    assert "--lang ko" in body and "PUZZLE_LANG=ko" in body
