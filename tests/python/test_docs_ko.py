"""Every page of docs/ has a Korean version that stays in step with it (issue 21).

For each docs/X.md there is a docs/X.ko.md (and no Korean page without its English one); the
two have the same sequence of heading levels and the same code blocks, byte for byte and in the
same order (commands, paths, JSON and program output are not translated); each links to the
other; most of the Korean page's prose holds Hangul (80 % of the paragraphs, list items and table
rows that are long enough to judge); every `#anchor` link of either page reaches one of its
headings. README.ko.md links the Korean pages where README.md links the English ones.
"""

import difflib
import re

import pytest

from conftest import REPO
from markdown_pages import anchors, english_only, judged, links, parse

DOCS = REPO / "docs"
ENGLISH = sorted(p for p in DOCS.glob("*.md") if not p.name.endswith(".ko.md"))
KOREAN_SHARE = 0.8


def korean(path):
    return path.with_name(path.stem + ".ko.md")


def pair_problems(en_name: str, en_text: str, ko_name: str, ko_text: str) -> list:
    """What keeps two pages from being a pair; empty when they are one."""
    en, ko = parse(en_text), parse(ko_text)
    problems = []
    levels_en, levels_ko = [l for l, _ in en.headings], [l for l, _ in ko.headings]
    if levels_en != levels_ko:
        problems.append("heading levels differ: %s has %s, %s has %s" % (
            en_name, "".join(map(str, levels_en)), ko_name, "".join(map(str, levels_ko))))
    if en.code != ko.code:
        if len(en.code) != len(ko.code):
            problems.append("%s has %d code blocks, %s has %d" % (en_name, len(en.code), ko_name, len(ko.code)))
        k = next((k for k, (a, b) in enumerate(zip(en.code, ko.code)) if a != b), None)
        if k is not None:
            diff = difflib.unified_diff(en.code[k].split("\n"), ko.code[k].split("\n"), en_name, ko_name, lineterm="")
            problems.append("code block %d differs:\n%s" % (k + 1, "\n".join(diff)))
    if not any(t.split("#")[0] == ko_name for t in links(en_text)):
        problems.append("%s does not link %s" % (en_name, ko_name))
    if not any(t.split("#")[0] == en_name for t in links(ko_text)):
        problems.append("%s does not link %s" % (ko_name, en_name))
    prose, english = judged(ko), english_only(ko)
    if not prose or len(english) > (1 - KOREAN_SHARE) * len(prose):
        problems.append("%s: %d of %d paragraphs have no Hangul, e.g. %r" % (
            ko_name, len(english), len(prose), (english or [""])[0][:100]))
    for name, text, page in ((en_name, en_text, en), (ko_name, ko_text, ko)):
        known = set(anchors(page))
        for target in links(text):
            if target.startswith("#") and target[1:] not in known:
                problems.append("%s: the link %s reaches no heading" % (name, target))
    return problems


@pytest.mark.parametrize("page", ENGLISH, ids=lambda p: p.name)
def test_the_page_has_a_korean_version_in_step_with_it(page):
    ko = korean(page)
    assert ko.is_file(), "docs/%s has no Korean version docs/%s" % (page.name, ko.name)
    problems = pair_problems(page.name, page.read_text(encoding="utf-8"), ko.name, ko.read_text(encoding="utf-8"))
    assert not problems, "\n".join(problems)


def test_there_are_pages_and_no_korean_page_without_its_english_one():
    assert {"architecture.md", "instructors.md"} <= {p.name for p in ENGLISH}
    for ko in DOCS.glob("*.ko.md"):
        assert ko.with_name(ko.name[:-len(".ko.md")] + ".md").is_file(), ko


EN = """# Title

한국어: [x.ko.md](x.ko.md)

Some English prose that is long enough to be judged, see [below](#the-second-part).

```sh
python3 scripts/puzzle.py run p14 --simple
```

## The second part

- an item that is long enough to be judged by the test, with `code`
"""

KO = """# 제목

English: [x.md](x.md)

판단할 만큼 충분히 긴 한국어 문장입니다. 테스트가 이 문단을 세려면 글자가 마흔 개를 넘어야 하므로 조금 더 씁니다. 자세한 내용은 [아래](#두-번째-부분)를 보세요.

```sh
python3 scripts/puzzle.py run p14 --simple
```

## 두 번째 부분

- 판단할 만큼 충분히 긴 항목 하나, 그리고 `code`가 들어 있는 문장입니다. 이것도 마흔 글자를 넘겨야 합니다
"""


def test_a_pair_passes_and_each_way_of_breaking_it_is_found():
    # A check that cannot fail is no check: break the pair above in each way the test looks for.
    assert pair_problems("x.md", EN, "x.ko.md", KO) == []
    broken = {
        "heading levels differ": KO.replace("## 두 번째 부분", "### 두 번째 부분"),
        "code block 1 differs": KO.replace("--simple\n```", "--simple --solution\n```"),
        "code blocks": KO.replace("```sh\npython3 scripts/puzzle.py run p14 --simple\n```\n", ""),
        "does not link x.md": KO.replace("[x.md](x.md)", "x.md"),
        "have no Hangul": re.sub(r"^(- )?판단할 [^\n]*", r"\1An English sentence, long enough to be judged by the test.",
                                 KO, flags=re.M),
        "reaches no heading": KO.replace("(#두-번째-부분)", "(#the-second-part)"),
    }
    for what, ko in broken.items():
        problems = pair_problems("x.md", EN, "x.ko.md", ko)
        assert any(what in p for p in problems), (what, problems)
    problems = pair_problems("x.md", EN.replace("[x.ko.md](x.ko.md)", ""), "x.ko.md", KO)
    assert any("does not link x.ko.md" in p for p in problems), problems
    # The translation's source line (scripts/translation_source.py) is a comment, not English prose.
    stamped = KO.replace("# 제목\n", "# 제목\n\n<!-- source: x.md @ %s -->\n" % ("0" * 40))
    assert parse(stamped).prose == parse(KO).prose and pair_problems("x.md", EN, "x.ko.md", stamped) == []


def test_the_korean_readme_links_the_korean_pages_where_readme_links_the_english_ones():
    english = links((REPO / "README.md").read_text(encoding="utf-8"))
    korean_links = set(links((REPO / "README.ko.md").read_text(encoding="utf-8")))
    for target in english:
        path = target.split("#")[0]
        if not path.endswith(".md") or path.endswith(".ko.md") or "://" in path:
            continue
        ko = path[:-len(".md")] + ".ko.md"
        if (REPO / ko).is_file():
            assert ko in korean_links, "README.md links %s; README.ko.md should link %s" % (path, ko)
