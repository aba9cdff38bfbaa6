"""Each Korean page names the English commit it translates, and the English page has not changed
since (item 6 of the Korean-first issue).

README.ko.md, harness/sim/README.ko.md, puzzles/*/README.ko.md and docs/*.ko.md carry near their
top `<!-- source: README.md @ COMMIT -->`. The check fails when a commit after COMMIT touched the
English page, when the working tree's English page differs from COMMIT's, when git does not know
COMMIT, and when the line is missing or names another page; its message names the command to run
once the translation is brought up to date (`python3 scripts/translation_source.py --update PAGE`).
It skips only where the checkout has no git history (a tarball) or a shallow clone lacks COMMIT.
"""

import os
import subprocess
import sys

import pytest

from conftest import REPO

import translation_source as ts  # scripts/ (conftest puts it on sys.path)

PAGES = ts.korean_pages(REPO)
SCRIPT = REPO / "scripts" / "translation_source.py"


def test_every_korean_page_is_covered():
    names = {p.relative_to(REPO).as_posix() for p in PAGES}
    assert {"README.ko.md", "harness/sim/README.ko.md", "docs/instructors.ko.md",
            "puzzles/p14/README.ko.md"} <= names
    assert {p.relative_to(REPO).as_posix() for p in REPO.glob("puzzles/*/README.ko.md")} <= names
    assert {p.relative_to(REPO).as_posix() for p in REPO.glob("docs/*.ko.md")} <= names


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_the_korean_page_translates_the_english_page_as_it_is(page):
    try:
        problems = ts.problems(page, REPO)
    except ts.NoHistory as e:
        pytest.skip("cannot tell which English commit is translated: %s" % e)
    assert not problems, "\n".join(problems)


# ---- the check itself, on a scratch repository ------------------------------------------------

ENV = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
           GIT_COMMITTER_EMAIL="t@example.com", GIT_CONFIG_NOSYSTEM="1", HOME="/nonexistent")


def git(root, *args):
    subprocess.run(["git", "-C", str(root)] + list(args), check=True, env=ENV,
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def script(root, *args):
    proc = subprocess.run([sys.executable, str(SCRIPT), "--root", str(root)] + list(args), cwd=str(root),
                          env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                          encoding="utf-8", timeout=60)
    return proc.returncode, proc.stdout


@pytest.fixture
def repo(tmp_path):
    """A repository whose README.ko.md and docs/guide.ko.md translate their English pages."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("# Title\n\n[한국어](README.ko.md)\n\nEnglish text.\n", encoding="utf-8")
    (tmp_path / "README.ko.md").write_text("# 제목\n\n[English](README.md)\n\n한국어 문장.\n", encoding="utf-8")
    (tmp_path / "docs" / "guide.md").write_text("# Guide\n\nText.\n", encoding="utf-8")
    (tmp_path / "docs" / "guide.ko.md").write_text("# 안내\n\n문장.\n", encoding="utf-8")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "pages")
    return tmp_path


def commit_all(root, message):
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)


def test_a_page_without_its_line_fails_and_update_writes_it_below_the_title(repo):
    rc, out = script(repo)
    assert rc == 1 and "README.ko.md has no line `<!-- source: README.md @ COMMIT -->`" in out, out
    assert "run `python3 scripts/translation_source.py --update README.ko.md`" in out, out
    rc, out = script(repo, "--update", "README.ko.md")
    assert rc == 0, out
    sha = subprocess.run(["git", "-C", str(repo), "log", "-1", "--format=%H", "--", "README.md"],
                         stdout=subprocess.PIPE, universal_newlines=True).stdout.strip()
    assert (repo / "README.ko.md").read_text(encoding="utf-8").split("\n")[:5] == [
        "# 제목", "", "<!-- source: README.md @ %s -->" % sha, "", "[English](README.md)"]
    assert ts.problems(repo / "README.ko.md", repo) == []
    assert ts.problems(repo / "docs" / "guide.ko.md", repo)  # not listed, so not stamped


def test_update_all_stamps_every_pair_and_a_second_update_replaces_the_line(repo):
    assert script(repo, "--update", "--all")[0] == 0
    assert script(repo) == (0, "2 Korean pages, each paired with the English commit it translates.\n")
    text = (repo / "docs" / "guide.ko.md").read_text(encoding="utf-8")
    assert text.count("<!-- source: guide.md @ ") == 1
    commit_all(repo, "stamped")
    (repo / "docs" / "guide.md").write_text("# Guide\n\nNew text.\n", encoding="utf-8")
    commit_all(repo, "guide: new text")
    assert script(repo, "--update", "docs/guide.md")[0] == 0  # either page of the pair names it
    text = (repo / "docs" / "guide.ko.md").read_text(encoding="utf-8")
    assert text.count("<!-- source: ") == 1 and ts.problems(repo / "docs" / "guide.ko.md", repo) == []


def test_an_english_change_after_the_commit_fails_with_the_command_to_run(repo):
    script(repo, "--update", "--all")
    commit_all(repo, "stamped")
    assert script(repo)[0] == 0
    (repo / "README.md").write_text("# Title\n\n[한국어](README.ko.md)\n\nChanged text.\n", encoding="utf-8")
    rc, out = script(repo)
    assert rc == 1 and "README.md changed (uncommitted changes)" in out, out
    commit_all(repo, "README: changed text")
    rc, out = script(repo)
    assert rc == 1 and "1 commit since: " in out and "README: changed text" in out, out
    assert "`git diff " in out and "then run `python3 scripts/translation_source.py --update README.ko.md`" in out
    assert "guide" not in out  # the other pair is still in step
    # A commit that touches neither page changes nothing.
    (repo / "other.txt").write_text("x", encoding="utf-8")
    commit_all(repo, "other")
    assert "docs/guide.ko.md" not in script(repo)[1]


def test_an_unknown_commit_or_another_page_fails(repo):
    script(repo, "--update", "--all")
    ko = repo / "README.ko.md"
    text = ko.read_text(encoding="utf-8")
    sha = ts.read_source(ko)[1]
    ko.write_text(text.replace(sha, "0123456789abcdef0123456789abcdef01234567"), encoding="utf-8")
    problems = ts.problems(ko, repo)
    assert problems and "which git does not know" in problems[0] and "--update README.ko.md" in problems[0]
    ko.write_text(text.replace("source: README.md", "source: OTHER.md"), encoding="utf-8")
    problems = ts.problems(ko, repo)
    assert problems and "names OTHER.md as its source; its English page is README.md" in problems[0]


def test_update_refuses_an_english_page_with_uncommitted_changes(repo):
    (repo / "README.md").write_text("# Title\n\nNot yet committed.\n", encoding="utf-8")
    rc, out = script(repo, "--update", "README.ko.md")
    assert rc != 0 and "README.md has uncommitted changes: commit it first" in out, out
    assert "source:" not in (repo / "README.ko.md").read_text(encoding="utf-8")


def test_update_needs_pages_or_all(repo):
    rc, out = script(repo, "--update")
    assert rc == 2 and "--update needs the pages you brought up to date, or --all" in out, out


def test_without_git_history_the_check_says_so_and_passes(repo, tmp_path_factory):
    # A tarball of the repository: the pages, no .git.
    tarball = tmp_path_factory.mktemp("tarball")
    for rel in ("README.md", "README.ko.md", "docs/guide.md", "docs/guide.ko.md"):
        (tarball / rel).parent.mkdir(exist_ok=True)
        (tarball / rel).write_bytes((repo / rel).read_bytes())
    script(repo, "--update", "--all")
    (tarball / "README.ko.md").write_bytes((repo / "README.ko.md").read_bytes())
    (tarball / "docs/guide.ko.md").write_bytes((repo / "docs/guide.ko.md").read_bytes())
    with pytest.raises(ts.NoHistory):
        ts.problems(tarball / "README.ko.md", tarball)
    rc, out = script(tarball)
    assert rc == 0 and "cannot check the translations" in out, out
