"""Markdown pages as the tests of the Korean pages read them: headings, code blocks and prose.

Used by test_docs_ko.py (docs/X.md and docs/X.ko.md stay in step) and test_scaffold.py (the
Korean page that `new` writes is Korean). Only what this repository's pages use is understood:
fenced blocks opened and closed by a line of three backticks (indented inside a list item too),
indented code paragraphs, ATX headings, list items, table rows, one-line HTML comments (not shown,
so not prose) and GitHub's heading anchors.
"""

import re
from typing import List, NamedTuple, Tuple

from conftest import HANGUL

FENCE = re.compile(r"^(?P<indent>\s*)```")  # as scripts/readme_samples.py opens a block
HEADING = re.compile(r"^(?P<level>#{1,6})\s+(?P<text>.*?)\s*$")
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
COMMENT = re.compile(r"^\s*<!--.*-->\s*$")  # a one-line HTML comment
INLINE_CODE = re.compile(r"(`+)(.+?)\1")
LINK = re.compile(r"\[(?P<text>[^\]]*)\]\((?P<target>[^)\s]*)\)")
# Prose shorter than this (once inline code and link targets are left out) is not judged: a table
# row of paths, a label, a line of punctuation.
MIN_PROSE = 40


class Page(NamedTuple):
    headings: List[Tuple[int, str]]  # (level, text) in order
    code: List[str]  # each block as written, fence lines and indentation included
    prose: List[str]  # paragraphs, list items and table rows outside code, lines joined


def parse(text: str) -> Page:
    lines = text.split("\n")
    headings, code, prose = [], [], []
    paragraph: List[str] = []

    def flush() -> None:
        if paragraph:
            if all(l.startswith("    ") for l in paragraph) and not LIST_ITEM.match(paragraph[0]):
                code.append("\n".join(paragraph))  # an indented code block
            else:
                prose.append(" ".join(l.strip() for l in paragraph))
            paragraph.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        if FENCE.match(line):
            flush()
            end = i + 1
            while end < len(lines) and lines[end].strip() != "```":
                end += 1
            assert end < len(lines), "the block opened at line %d is not closed" % (i + 1)
            code.append("\n".join(lines[i:end + 1]))
            i = end + 1
            continue
        heading = HEADING.match(line)
        if COMMENT.match(line):
            flush()  # not shown: a sample marker, the translation's source line
        elif heading:
            flush()
            headings.append((len(heading.group("level")), heading.group("text")))
        elif not line.strip():
            flush()
        elif line.lstrip().startswith("|"):
            flush()
            prose.append(line.strip())
        else:
            if LIST_ITEM.match(line):
                flush()
            paragraph.append(line)
        i += 1
    flush()
    return Page(headings, code, prose)


def words(prose: str) -> str:
    """The prose that a translator writes: without inline code and link targets."""
    return LINK.sub(lambda m: m.group("text"), INLINE_CODE.sub("", prose)).strip()


def english_only(page: Page) -> List[str]:
    """The prose paragraphs long enough to judge that hold no Hangul syllable."""
    return [p for p in page.prose if len(words(p)) > MIN_PROSE and not HANGUL.search(words(p))]


def judged(page: Page) -> List[str]:
    return [p for p in page.prose if len(words(p)) > MIN_PROSE]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = LINK.sub(lambda m: m.group("text"), heading).replace("`", "")
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def anchors(page: Page) -> List[str]:
    seen, out = {}, []
    for _, text in page.headings:
        base = slug(text)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.append(base if n == 0 else "%s-%d" % (base, n))
    return out


def links(text: str) -> List[str]:
    """Every link target outside code."""
    return [m.group("target") for p in parse(text).prose for m in LINK.finditer(p)]
