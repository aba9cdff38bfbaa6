#!/usr/bin/env python3
"""Which English commit each Korean page translates: check the pairs, or record them.

Every Korean page (README.ko.md, harness/sim/README.ko.md, puzzles/*/README.ko.md, docs/*.ko.md)
carries, near its top, the English page it translates and the commit of that English text:

    <!-- source: README.md @ 0123456789abcdef0123456789abcdef01234567 -->

(the English page is named relative to the Korean page's folder). A pair is stale when the English
page changed after that commit: a commit since then touched it, or the working tree differs from it.

    python3 scripts/translation_source.py                   check every pair (exit 1 when one is stale)
    python3 scripts/translation_source.py --update PAGE...  after bringing these Korean pages up to
                                                            date, record their English pages' last commit
    python3 scripts/translation_source.py --update --all    the same for every pair

A PAGE may be either page of a pair. --update refuses an English page with uncommitted changes:
commit it first, so that the recorded commit holds the text that was translated. Standard library
only; needs git and the repository's history (tests/python/test_translation_source.py skips
without them).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path
from typing import List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
SOURCE = re.compile(r"^<!-- source: (?P<page>\S+) @ (?P<sha>[0-9a-f]{40}) -->\s*$")
# The line must be among the first lines, where a translator sees it.
NEAR_TOP = 10
COMMAND = "python3 scripts/translation_source.py"


class NoHistory(Exception):
    """The checkout cannot answer: no git, no repository (a tarball), or a shallow clone that lacks the commit."""


def korean_pages(root: Path = ROOT) -> List[Path]:
    pages = [root / "README.ko.md", root / "harness" / "sim" / "README.ko.md"]
    pages += sorted(root.glob("puzzles/*/README.ko.md")) + sorted(root.glob("docs/*.ko.md"))
    return [p for p in pages if p.is_file()]


def english_of(korean: Path) -> Path:
    return korean.with_name(korean.name[:-len(".ko.md")] + ".md")


def korean_of(page: Path) -> Path:
    return page if page.name.endswith(".ko.md") else page.with_name(page.name[:-len(".md")] + ".ko.md")


def rel(path: Path, root: Path) -> str:
    return path.resolve().relative_to(root.resolve()).as_posix()


def git(root: Path, *args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", "-C", str(root)] + list(args), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True, encoding="utf-8")
    except FileNotFoundError:
        raise NoHistory("git is not installed")


def has_history(root: Path) -> bool:
    """Whether root is in a git work tree with at least one commit (a tarball has none)."""
    try:
        return git(root, "rev-parse", "--verify", "-q", "HEAD").returncode == 0
    except NoHistory:
        return False


def read_source(korean: Path) -> Optional[Tuple[str, str, int]]:
    """(English page as named, commit, 0-based line) of the page's source line, or None."""
    for i, line in enumerate(korean.read_text(encoding="utf-8").splitlines()[:NEAR_TOP]):
        m = SOURCE.match(line)
        if m:
            return m.group("page"), m.group("sha"), i
    return None


def update_command(korean: Path, root: Path) -> str:
    return "%s --update %s" % (COMMAND, rel(korean, root))


def problems(korean: Path, root: Path = ROOT) -> List[str]:
    """Why the Korean page is not paired with the English commit it translates; empty when it is.
    Raises NoHistory when the checkout cannot tell."""
    english = english_of(korean)
    ko, en = rel(korean, root), rel(english, root)
    after = ("Once the Korean page translates the English one as it is now, run `%s`." % update_command(korean, root))
    if not english.is_file():
        return ["%s has no English page %s" % (ko, en)]
    source = read_source(korean)
    if source is None:
        return ["%s has no line `<!-- source: %s @ COMMIT -->` in its first %d lines. %s"
                % (ko, english.name, NEAR_TOP, after)]
    named, sha, _ = source
    if named != english.name:
        return ["%s names %s as its source; its English page is %s. %s" % (ko, named, english.name, after)]
    if not has_history(root):
        raise NoHistory("%s is not a git checkout with history" % root)
    if git(root, "cat-file", "-e", sha + "^{commit}").returncode != 0:
        if git(root, "rev-parse", "--is-shallow-repository").stdout.strip() == "true":
            raise NoHistory("a shallow clone lacks commit %s (git fetch --unshallow)" % sha[:12])
        return ["%s translates %s as of commit %s, which git does not know (a rebased or squashed "
                "branch?). Check the translation against %s, then run `%s`."
                % (ko, en, sha[:12], en, update_command(korean, root))]
    since = git(root, "log", "--format=%h %s", "%s..HEAD" % sha, "--", en).stdout.splitlines()
    uncommitted = git(root, "diff", "--quiet", "HEAD", "--", en).returncode != 0
    changed = git(root, "diff", "--quiet", sha, "--", en).returncode != 0
    if not since and not changed:
        return []
    what = []
    if since:
        what.append("%d commit%s since: %s" % (len(since), "" if len(since) == 1 else "s",
                                               "; ".join(l[:80] for l in since[:5]) + ("; ..." if len(since) > 5 else "")))
    if uncommitted:
        what.append("uncommitted changes")
    return ["%s translates %s as of commit %s, and %s changed (%s). Bring %s up to date (`git diff %s -- %s` "
            "shows what changed), commit %s, then run `%s`."
            % (ko, en, sha[:12], en, ", ".join(what) or "its text differs", ko, sha[:12], en, en,
               update_command(korean, root))]


def stamp(korean: Path, root: Path = ROOT) -> str:
    """Record the last commit of the Korean page's English page in the Korean page; returns it."""
    english = english_of(korean)
    en = rel(english, root)
    if not korean.is_file():
        raise SystemExit("%s: no such Korean page" % rel(korean, root))
    if not english.is_file():
        raise SystemExit("%s: no English page %s" % (rel(korean, root), en))
    if not has_history(root):
        raise SystemExit("%s is not a git checkout with history" % root)
    if git(root, "diff", "--quiet", "HEAD", "--", en).returncode != 0 or \
            git(root, "ls-files", "--error-unmatch", "--", en).returncode != 0:
        raise SystemExit("%s has uncommitted changes: commit it first, so that the recorded commit holds "
                         "the English text that was translated" % en)
    sha = git(root, "log", "-1", "--format=%H", "--", en).stdout.strip()
    line = "<!-- source: %s @ %s -->" % (english.name, sha)
    lines = korean.read_text(encoding="utf-8").split("\n")
    source = read_source(korean)
    if source is not None:
        lines[source[2]] = line
    else:
        # Below the title, where a reader of the raw page sees it first.
        title = next((i for i, l in enumerate(lines[:NEAR_TOP - 2]) if l.startswith("# ")), None)
        at = 0 if title is None else title + 1
        lines[at:at] = ([""] if title is not None else []) + [line] + ([] if title is not None else [""])
    korean.write_text("\n".join(lines), encoding="utf-8")
    return sha


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--update", action="store_true",
                    help="record the English page's last commit in the Korean pages named (or --all)")
    ap.add_argument("--all", action="store_true", help="with --update: every Korean page")
    ap.add_argument("--root", default=str(ROOT), help=argparse.SUPPRESS)
    ap.add_argument("pages", nargs="*", help="Korean pages, or their English pages (default: every pair)")
    args = ap.parse_args(argv)
    root = Path(args.root).resolve()
    if args.update and not args.pages and not args.all:
        ap.error("--update needs the pages you brought up to date, or --all")
    if args.all and args.pages:
        ap.error("--all takes no pages")
    pages = [korean_of(Path(p).resolve()) for p in args.pages] or korean_pages(root)
    if args.update:
        for page in pages:
            sha = stamp(page, root)
            print("%s: translates %s @ %s" % (rel(page, root), rel(english_of(page), root), sha[:12]))
        return 0
    stale = 0
    for page in pages:
        try:
            found = problems(page, root)
        except NoHistory as e:
            print("cannot check the translations: %s" % e)
            return 0
        for p in found:
            print(p)
        stale += bool(found)
    if stale:
        print("%d Korean page(s) out of step with their English page." % stale)
        return 1
    print("%d Korean pages, each paired with the English commit it translates." % len(pages))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
