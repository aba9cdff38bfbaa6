"""What a learner must not edit, the checksum manifest of it, and the tree `grade` builds.

Protected (docs/instructors.md explains why):

    CMakeLists.txt, harness/**        the build and the simulator
    scripts/**                        the CLI and the grader
    puzzles/<p>/** except <p>.cu      drivers, declarations, expected outputs (and any other file
        and *.md                      a driver needs); <p>.cu is the learner's, READMEs are lessons
    grading/points.json               the points
    .github/workflows/grade.yml       the class repository's CI job
    .github/workflows/classroom.yml   its GitHub Classroom autograding, where there is one

grading/protected.sha256 lists them as `sha256  path` lines, sorted (`sha256sum -c` reads it).
Hashes are taken with CRLF line ends turned into LF, so a checkout on Windows is not "tampered".

`grade` never builds the learner's tree itself: it builds a staged tree that holds the protected
build files (from the pristine copy, or from the learner's tree after they matched the manifest)
plus each puzzle's learner file puzzles/<p>/<p>.cu, and nothing else: files the learner added
(a header shadowing harness/harness.h, say) and solutions/ are never seen by the compiler.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

MANIFEST = "grading/protected.sha256"
POINTS = "grading/points.json"
WORKFLOW = ".github/workflows/grade.yml"
CLASSROOM_WORKFLOW = ".github/workflows/classroom.yml"  # `grade --classroom`, in a class template
SINGLE_FILES = ("CMakeLists.txt", POINTS, WORKFLOW, CLASSROOM_WORKFLOW)
PROTECTED_DIRS = ("harness", "scripts")
SKIP_NAMES = {"__pycache__", ".DS_Store", ".pytest_cache", ".mypy_cache"}
SKIP_SUFFIXES = (".pyc", ".pyo", ".swp", "~")
ALL = "*"  # the scope of a file that affects every puzzle


def _skipped(rel: str) -> bool:
    parts = rel.split("/")
    return any(p in SKIP_NAMES for p in parts) or rel.endswith(SKIP_SUFFIXES)


def learner_file(puzzle: str) -> str:
    return "puzzles/%s/%s.cu" % (puzzle, puzzle)


def is_protected(rel: str) -> bool:
    """Whether a path (relative, '/'-separated) is one the learner must not edit."""
    if _skipped(rel):
        return False
    if rel in SINGLE_FILES:
        return True
    parts = rel.split("/")
    if parts[0] in PROTECTED_DIRS and len(parts) > 1:
        return True
    if parts[0] == "puzzles" and len(parts) >= 3:
        puzzle = parts[1]
        # The learner's file, its backups (skeletons.py and `new --refresh` keep one before they
        # overwrite it) and the READMEs are the learner's own.
        if len(parts) == 3 and (parts[2] == puzzle + ".cu" or parts[2].startswith(puzzle + ".cu.bak-")
                                or parts[2].lower().endswith(".md")):
            return False
        return True
    return False


def scope(rel: str) -> str:
    """The puzzle a protected file belongs to, or ALL when it concerns every puzzle."""
    parts = rel.split("/")
    if parts[0] == "puzzles" and len(parts) >= 3:
        return parts[1]
    return ALL


def needed_for_build(rel: str) -> bool:
    return rel == "CMakeLists.txt" or rel.startswith("harness/") or rel.startswith("puzzles/")


def protected_files(root: Path) -> List[str]:
    """Every protected file under root, sorted."""
    root = Path(root)
    found = [f for f in SINGLE_FILES if (root / f).is_file()]
    tops = list(PROTECTED_DIRS)
    if (root / "puzzles").is_dir():
        tops += ["puzzles/" + d.name for d in sorted((root / "puzzles").iterdir())
                 if d.is_dir() and (d / "puzzle.json").is_file()]
    for top in tops:
        base = root / top
        if not base.is_dir():
            continue
        for dirpath, dirnames, filenames in os.walk(str(base)):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_NAMES)
            for name in filenames:
                rel = Path(dirpath, name).relative_to(root).as_posix()
                if os.path.isfile(os.path.join(dirpath, name)) and is_protected(rel):
                    found.append(rel)
    return sorted(set(found))


def file_hash(path: Path) -> str:
    data = Path(path).read_bytes().replace(b"\r\n", b"\n")
    return hashlib.sha256(data).hexdigest()


def manifest_text(root: Path) -> str:
    return "".join("%s  %s\n" % (file_hash(Path(root) / rel), rel) for rel in protected_files(root))


def write_manifest(root: Path, path: Optional[Path] = None) -> Tuple[Path, int]:
    path = Path(path) if path else Path(root) / MANIFEST
    text = manifest_text(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(str(path), "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    return path, text.count("\n")


class ManifestError(Exception):
    pass


def read_manifest(path: Path) -> Dict[str, str]:
    """{path: sha256} from a manifest file."""
    entries = {}
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise ManifestError("cannot read the manifest %s: %s" % (path, e))
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        m = re.match(r"^([0-9a-f]{64}) [ *](.+)$", line)
        if not m or m.group(2).startswith("/") or ".." in m.group(2).split("/"):
            raise ManifestError("%s:%d: expected `<sha256>  <relative path>`" % (path, number))
        entries[m.group(2)] = m.group(1)
    if not entries:
        raise ManifestError("the manifest %s lists no files" % path)
    return entries


def manifest_diff(root: Path, path: Optional[Path] = None) -> List[str]:
    """Differences between the committed manifest and the tree: [] when it is current."""
    path = Path(path) if path else Path(root) / MANIFEST
    if not path.is_file():
        return ["%s does not exist" % MANIFEST]
    current = manifest_text(root).splitlines()
    committed = path.read_text(encoding="utf-8").splitlines()
    if current == committed:
        return []
    return [l for l in difflib.unified_diff(committed, current, "committed", "current", lineterm="", n=0)
            if not l.startswith("@@")]


class Integrity:
    """The result of comparing a learner's tree with the manifest or the pristine tree."""

    def __init__(self, mode: str, checked: int, modified: List[str], missing: List[str]):
        self.mode = mode  # "manifest": refused when anything differs; "pristine": differences ignored
        self.checked = checked
        self.modified = modified
        self.missing = missing

    @property
    def problems(self) -> List[str]:
        return sorted(self.modified + self.missing)

    @property
    def status(self) -> str:
        if not self.problems:
            return "ok"
        return "tampered" if self.mode == "manifest" else "ignored"

    def tampered_scopes(self) -> Dict[str, List[str]]:
        """{puzzle or ALL: [files]} of the refused files (manifest mode only)."""
        if self.mode != "manifest":
            return {}
        scopes = {}  # type: Dict[str, List[str]]
        for rel in self.problems:
            scopes.setdefault(scope(rel), []).append(rel)
        return scopes

    def message(self) -> str:
        if not self.problems:
            if self.mode == "manifest":
                return "all %d protected files match %s" % (self.checked, MANIFEST)
            return "the submission's copies of protected files match the pristine tree (or are absent)"
        def listing(files, limit=10):
            more = len(files) - limit
            return ", ".join(files[:limit]) + (" and %d more" % more if more > 0 else "")

        parts = []
        if self.modified:
            parts.append("modified: " + listing(self.modified))
        if self.missing:
            parts.append("missing: " + listing(self.missing))
        if self.mode == "manifest":
            return ("files a learner must not edit differ from %s (%s). Grading refused for what they "
                    "affect: restore them (e.g. `git checkout -- FILE`), or grade with --pristine DIR, which "
                    "uses the course's copies instead." % (MANIFEST, "; ".join(parts)))
        return ("the submission changed protected files (%s); they were ignored: grading used the "
                "pristine copies." % "; ".join(parts))


def verify_manifest(tree: Path, entries: Dict[str, str]) -> Integrity:
    modified, missing = [], []
    for rel, digest in sorted(entries.items()):
        path = Path(tree) / rel
        if not path.is_file():
            missing.append(rel)
        elif file_hash(path) != digest:
            modified.append(rel)
    return Integrity("manifest", len(entries), modified, missing)


def compare_with_pristine(tree: Path, pristine: Path, files: Iterable[str]) -> Integrity:
    """Protected files the submission has and changed (absent ones are fine: a submission may
    be just the learner files)."""
    modified = []
    files = list(files)
    for rel in files:
        mine = Path(tree) / rel
        if mine.is_file() and file_hash(mine) != file_hash(Path(pristine) / rel):
            modified.append(rel)
    return Integrity("pristine", len(files), modified, [])


def committed_version(tree: Path, rel: str, digest: str, depth: int = 200) -> Optional[Tuple[str, bytes]]:
    """(commit, content) of the newest version of `rel` in the tree's git history whose hash is
    `digest` (a manifest entry), or None (no git, no history, no such version). An in-place grade
    takes the maxima of a tampered report from there, not from the edited file."""
    import subprocess
    try:
        log = subprocess.run(["git", "-C", str(tree), "log", "-n", str(depth), "--format=%H", "--", rel],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=30)
        for commit in log.stdout.decode().split():
            shown = subprocess.run(["git", "-C", str(tree), "show", "%s:%s" % (commit, rel)],
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=30)
            data = shown.stdout
            if shown.returncode == 0 and hashlib.sha256(data.replace(b"\r\n", b"\n")).hexdigest() == digest:
                return commit, data
    except (OSError, subprocess.SubprocessError):
        return None
    return None


# ------------------------------------------------------------------------------ staging

def sync_tree(dest: Path, files: Dict[str, bytes]) -> int:
    """Make dest hold exactly `files` ({relative path: content}); returns how many were written.

    Unchanged files are left alone (their timestamps too), so a reused build only recompiles
    what changed.
    """
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    written = 0
    for rel, data in files.items():
        path = dest / rel
        try:
            if path.is_file() and not path.is_symlink() and path.read_bytes() == data:
                continue
        except OSError:
            pass
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink() or path.exists():
            path.unlink()
        path.write_bytes(data)
        written += 1
    wanted = set(files)
    for dirpath, dirnames, filenames in os.walk(str(dest), topdown=False):
        for name in filenames:
            rel = Path(dirpath, name).relative_to(dest).as_posix()
            if rel not in wanted:
                os.unlink(os.path.join(dirpath, name))
        if dirpath != str(dest) and not os.listdir(dirpath):
            os.rmdir(dirpath)
    return written


# ------------------------------------------------------------------------------ review notes

FILL_MARK = re.compile(r"^\s*//\s*(FILL ME IN|END FILL)\b")
SUSPICIOUS = [
    (re.compile(r"\bRESULT\b"), "mentions RESULT, the driver's verdict line"),
    (re.compile(r"\b(_exit|_Exit|quick_exit|exit|abort|terminate)\s*\("), "ends the program itself"),
    (re.compile(r"\b(fopen|ifstream|ofstream|freopen|open)\s*\(|/proc/"), "opens files"),
    (re.compile(r"\b(system|popen|execv\w*|execl\w*|fork|posix_spawn\w*)\s*\("), "starts programs"),
    (re.compile(r"\b(getenv|setenv|putenv|dlsym|dlopen|signal|sigaction|atexit|setjmp|longjmp)\s*\("),
     "touches the process environment"),
    (re.compile(r"\b(asm|__asm__)\b|\.incbin"), "inline assembly"),
    # The harness's internals and other processes: the output channel to the grader's checker
    # (harness/channel.h), the simulator's records, the parent process.
    (re.compile(r"\bharness\s*::|\bcudasim\s*::|PUZZLES_\w+|harness/"), "uses the harness's or simulator's internals"),
    (re.compile(r"\b(kill|killpg|raise|getppid|ptrace|process_vm_\w+|__builtin_frame_address)\s*\("),
     "reaches into processes or stack frames"),
    (re.compile(r"cudaMemcpyDeviceToHost|cudaMemcpyDefault"), "copies device data to the host"),
    # an absolute or ../ path, or a macro: possibly a file outside the learner's tree
    (re.compile(r"^#\s*include\s*(?:[\"<]/|[\"<][^\">]*\.\.|[A-Za-z_])"), "includes a file outside the puzzle"),
]


def _strip_comment(line: str) -> str:
    """The line without a trailing // comment (string literals respected)."""
    quote = None
    i = 0
    while i < len(line):
        c = line[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif line.startswith("//", i):
            return line[:i]
        i += 1
    return line


def _code_lines(text: str) -> Tuple[List[Tuple[int, str]], List[bool]]:
    """The non-blank code lines, comments removed and spaces normalized, as (line number, code),
    and fill[i]: whether a FILL ME IN marker lies between code line i-1 and code line i
    (len(lines) + 1 entries: the last is for the end of the file)."""
    lines = []  # type: List[Tuple[int, str]]
    fill = [False]
    in_block = False
    for number, raw in enumerate(text.splitlines(), 1):
        if FILL_MARK.match(raw) and "FILL ME IN" in raw:
            fill[-1] = True
            continue
        line = raw
        if in_block:
            end = line.find("*/")
            if end < 0:
                continue
            line = line[end + 2:]
            in_block = False
        start = line.find("/*")
        if start >= 0 and "*/" not in line[start:]:
            line = line[:start]
            in_block = True
        code = " ".join(_strip_comment(line).split())
        if code:
            lines.append((number, code))
            fill.append(False)
    return lines, fill


def _align(base: List[str], fill: List[bool], mine: List[str]):
    """Edit operations turning the skeleton's code lines into the learner's, at least cost:
    matching lines are free, lines inserted where a FILL ME IN marker is are free, any other
    insertion costs 1 and a deletion 2 (so that a changed line reads as one line replaced, not as
    skeleton lines moved into a FILL region). The cost is 0 exactly when the learner's file is
    the skeleton with lines added at FILL ME IN markers only. Returns ("match"|"insert"|"delete",
    i, j, free) operations."""
    n, m = len(base), len(mine)
    inf = float("inf")
    cost = [[inf] * (m + 1) for _ in range(n + 1)]
    cost[0][0] = 0
    for i in range(n + 1):
        row, prev = cost[i], cost[i - 1] if i else None
        ins = 0 if fill[i] else 1
        for j in range(m + 1):
            best = row[j]
            if i and j and base[i - 1] == mine[j - 1] and prev[j - 1] < best:
                best = prev[j - 1]
            if i and prev[j] + 2 < best:
                best = prev[j] + 2
            if j and row[j - 1] + ins < best:
                best = row[j - 1] + ins
            row[j] = best
    ops = []
    i, j = n, m
    while i or j:
        if i and j and base[i - 1] == mine[j - 1] and cost[i][j] == cost[i - 1][j - 1]:
            ops.append(("match", i - 1, j - 1, True))
            i, j = i - 1, j - 1
        elif j and cost[i][j] == cost[i][j - 1] + (0 if fill[i] else 1):
            ops.append(("insert", i, j - 1, fill[i]))
            j -= 1
        else:
            ops.append(("delete", i - 1, j, False))
            i -= 1
    return ops[::-1]


def review_learner_file(text: str, skeleton: Optional[str], rel: str, limit: int = 12) -> List[dict]:
    """Things an instructor may want to look at in a learner file. Heuristics, never a verdict:

    - code added, changed or removed outside the FILL ME IN regions of the skeleton (the host
      launchers are learner code too: a launcher that computes the answer on the CPU passes);
    - calls that have no business in a kernel exercise (exit, file access, RESULT, ...), when the
      skeleton does not have them.
    """
    notes = []  # type: List[dict]
    mine, _ = _code_lines(text)
    base, fill = _code_lines(skeleton) if skeleton is not None else (None, None)
    if base is not None and len(base) * len(mine) <= 4000000:
        ops = _align([c for _, c in base], fill, [c for _, c in mine])
        k = 0
        while k < len(ops):
            op, i, j, free = ops[k]
            if op == "match" or free:
                k += 1
                continue
            group = [ops[k]]
            k += 1
            while k < len(ops) and ops[k][0] != "match" and not ops[k][3]:
                group.append(ops[k])
                k += 1
            added = [mine[g[2]] for g in group if g[0] == "insert"]
            removed = [base[g[1]] for g in group if g[0] == "delete"]
            if added:
                first, last = added[0][0], added[-1][0]
                many = last > first
                where = "lines %d-%d" % (first, last) if many else "line %d" % first
                if removed:
                    text_ = "%s %s skeleton code (%s): %s" % (where, "replace" if many else "replaces",
                                                             removed[0][1][:60], added[0][1][:80])
                else:
                    text_ = "%s %s added outside the FILL ME IN regions: %s" % (
                        where, "were" if many else "was", added[0][1][:80])
                notes.append({"file": rel, "line": first, "kind": "outside-fill", "text": text_})
            else:
                line = mine[j][0] if j < len(mine) else len(text.splitlines())
                notes.append({"file": rel, "line": line, "kind": "outside-fill",
                              "text": "skeleton code removed: %s%s" % (
                                  removed[0][1][:80], " (and %d more lines)" % (len(removed) - 1)
                                  if len(removed) > 1 else "")})
    skeleton_code = "\n".join(c for _, c in base) if base is not None else ""
    for number, code in mine:
        for pattern, why in SUSPICIOUS:
            if pattern.search(code) and not pattern.search(skeleton_code):
                notes.append({"file": rel, "line": number, "kind": "suspicious", "text": "%s: %s" % (why, code[:80])})
                break
    # Suspicious calls first: when a file differs everywhere from the skeleton, they are what a
    # reader most needs, and the limit must not cut them.
    notes = [n for n in notes if n["kind"] == "suspicious"] + [n for n in notes if n["kind"] != "suspicious"]
    if len(notes) > limit:
        more = len(notes) - limit + 1
        notes = notes[:limit - 1] + [{"file": rel, "line": notes[limit - 1]["line"], "kind": "more",
                                      "text": "... and %d more" % more}]
    return notes
