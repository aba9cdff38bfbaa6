"""`list`'s status column: what `check --quick --seed 1` says of the learner's file, cached.

The status runs the same cases on every call (cases.status_cases), so the same file always gets
the same status, and it is the verdict that `check pNN --VARIANT --quick --seed 1` prints. It is
cached in the build folder (list-status.json), keyed by the file's content hash, the binary's
hash and the cases: a second `list` of an unchanged file runs nothing, and any edit of the file
(or a rebuild, or a changed puzzle.json) runs the cases again.

A full `check` (not --quick) records its verdict for the file's content hash in the same cache: a
file that passes the quick cases but that `check` failed at a larger size is `not yet`, with that
case, so `list` never calls solved what `check` rejected.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from .cases import STATUS_SEED, status_cases
from .driver import PASS, USAGE, run_driver
from .explain import explain
from .messages import lang, tr, tr_reason

CACHE_NAME = "list-status.json"
CACHE_VERSION = 1


def file_hash(path: Path) -> Optional[str]:
    """sha256 of a file's bytes, or None when it cannot be read."""
    h = hashlib.sha256()
    try:
        with open(str(path), "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    except OSError:
        return None
    return h.hexdigest()


def replay_command(variant) -> str:
    """The check command whose verdict the status is."""
    return "check %s %s --quick --seed %d" % (variant.puzzle, variant.flag, STATUS_SEED)


class StatusCache:
    """{variant label: {"key": ..., "status": ...}} in <build>/list-status.json."""

    def __init__(self, build: Path):
        self.path = build / CACHE_NAME
        self.entries: Dict[str, dict] = {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if data.get("version") == CACHE_VERSION and isinstance(data.get("entries"), dict):
                self.entries = data["entries"]
        except (OSError, ValueError, AttributeError):
            pass  # no cache yet, or a damaged one: every status is computed again

    def get(self, label: str, key: str) -> Optional[str]:
        entry = self.entries.get(label)
        if isinstance(entry, dict) and entry.get("key") == key and isinstance(entry.get("status"), str):
            return entry["status"]
        return None

    def put(self, label: str, key: str, status: str) -> None:
        self.entries[label] = {"key": key, "status": status, "checked": self.entries.get(label, {}).get("checked")}

    def record_check(self, label: str, source_hash: str, backend: str, failed_case: Optional[list]) -> None:
        """A full check's verdict on this content of the file: None when it passed, else the failing
        case, [n, tpb, reason in English]."""
        entry = self.entries.setdefault(label, {})
        entry["checked"] = {"source": source_hash, "backend": backend, "failed": failed_case}

    def check_failure(self, label: str, source_hash: str, backend: str) -> Optional[str]:
        """`n=99 tpb=100: wrong answer`: the case at which a full check of this very file failed, if one did."""
        checked = (self.entries.get(label) or {}).get("checked")
        if isinstance(checked, dict) and checked.get("source") == source_hash and checked.get("backend") == backend:
            failed = checked.get("failed")
            if isinstance(failed, list) and len(failed) == 3:
                return "n=%s tpb=%s: %s" % (failed[0], failed[1], tr_reason(str(failed[2])))
        return None

    def save(self) -> None:
        """Written whole and renamed into place, so that two `list` at once never read half a file."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name("%s.%d.tmp" % (CACHE_NAME, os.getpid()))
            tmp.write_text(json.dumps({"version": CACHE_VERSION, "entries": self.entries}, indent=1, sort_keys=True),
                           encoding="utf-8")
            os.replace(str(tmp), str(self.path))
        except OSError:
            pass  # a read-only build folder: the status is right, only not remembered


def cache_key(source_hash: str, binary_hash: str, backend: str, cases: List[Tuple[int, int, int]]) -> str:
    text = json.dumps([source_hash, binary_hash, backend, cases, lang()])  # the status is stored as shown
    return hashlib.sha256(text.encode()).hexdigest()


def run_status(variant, binary: Path, cases: List[Tuple[int, int, int]], timeout: float) -> str:
    """solved, or `not yet (n=.. tpb=..: why)` at the first case that fails, as `check` stops there."""
    for n, tpb, seed in cases:
        cmd = [str(binary), "--variant", variant.name, "--n", str(n), "--tpb", str(tpb), "--seed", str(seed)]
        outcome = run_driver(cmd, timeout)
        if outcome.kind == PASS:
            continue
        if outcome.kind == USAGE:
            return tr("does not run")
        return tr("not yet (n=%d tpb=%d: %s)") % (n, tpb, tr_reason(explain(outcome)))
    return tr("solved")


def variant_status(variant, binary: Path, backend: str, source_hash: Optional[str], binary_hash: Optional[str],
                   cache: StatusCache, timeout: float) -> Tuple[str, bool]:
    """(status, from the cache)."""
    cases = status_cases(variant, backend)
    key = cache_key(source_hash, binary_hash, backend, cases) if source_hash and binary_hash else None
    cached = cache.get(variant.label, key) if key is not None else None
    status = cached if cached is not None else run_status(variant, binary, cases, timeout)
    if key is not None and cached is None:
        cache.put(variant.label, key, status)
    failed = cache.check_failure(variant.label, source_hash, backend) if source_hash else None
    if status == tr("solved") and failed:
        status = tr("not yet (check failed at %s)") % failed
    return status, cached is not None
