"""Sharding a class over CI jobs, and merging the shards once (`grade --shard K/N`, `grade --merge`).

The distributed engine is the CI's job matrix (docs/instructors.md, "A large class: sharded over
CI"): job K of N grades `--shard K/N`, every N-th submission of the sorted folder list starting at
the K-th, into its own --out folder, and writes shard-K-of-N.json there. One last job merges the
folders: it checks that every shard of 1..N is there exactly once, with the same seed, and writes
scores.csv, one JUnit file and the per-student JSON reports of the whole class.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import List, Optional

from . import grade_report as gr
from .common import UsageError

SHARD_RECORD = "shard-%d-of-%d.json"


def pick(students: List, k: int, n: int) -> List:
    """Shard k (1-based) of n: every n-th item, starting at the k-th (round robin, so each shard
    gets a mix of early and late names and the shards differ in size by one at most)."""
    return students[k - 1::n]


def write_shard_record(out_dir: Path, shard, seed: int, students: List[str], everyone: int) -> Path:
    path = Path(out_dir) / (SHARD_RECORD % shard)
    path.write_text(json.dumps({"shard": shard[0], "of": shard[1], "seed": seed, "class_size": everyone,
                                "students": students}, indent=2) + "\n", encoding="utf-8")
    return path


def merge(folders: List[Path], out_dir: Path, junit: Optional[Path]) -> List[dict]:
    """Merge the --out folders of every shard into out_dir; returns the reports in class order.
    Raises UsageError when a shard is missing, repeated, from another run (seed or class size),
    or a report it lists is absent."""
    records = []
    for folder in folders:
        if not folder.is_dir():
            raise UsageError("--merge: %s is not a directory" % folder)
        found = sorted(folder.glob("shard-*-of-*.json"))
        if not found:
            raise UsageError("--merge: %s holds no shard-K-of-N.json; is it the --out folder of a "
                             "`grade --submissions DIR --shard K/N` run?" % folder)
        for path in found:
            try:
                record = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                raise UsageError("--merge: cannot read %s: %s" % (path, e))
            records.append((folder, path, record))
    sizes = {r["of"] for _, _, r in records}
    seeds = {r["seed"] for _, _, r in records}
    classes = {r["class_size"] for _, _, r in records}
    if len(sizes) != 1 or len(seeds) != 1 or len(classes) != 1:
        raise UsageError("--merge: the shards come from different runs (shard counts %s, seeds %s, class sizes %s)"
                         % (sorted(sizes), sorted(seeds), sorted(classes)))
    n = sizes.pop()
    have = sorted(r["shard"] for _, _, r in records)
    if have != list(range(1, n + 1)):
        missing = sorted(set(range(1, n + 1)) - set(have))
        repeated = sorted({k for k in have if have.count(k) > 1})
        raise UsageError("--merge: expected shards 1..%d once each; %s%s" % (
            n, "missing %s" % ", ".join(map(str, missing)) if missing else "",
            ("; " if missing else "") + "repeated %s" % ", ".join(map(str, repeated)) if repeated else ""))
    reports = {}
    for folder, path, record in records:
        for name in record["students"]:
            report_path = folder / (name + ".json")
            try:
                reports[name] = json.loads(report_path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                raise UsageError("--merge: %s lists %s, but %s cannot be read: %s" % (path.name, name, report_path, e))
            if reports[name].get("seed") != record["seed"]:
                raise UsageError("--merge: %s has seed %s, its shard %s" % (report_path, reports[name].get("seed"),
                                                                            record["seed"]))
    class_size = classes.pop()
    if len(reports) != class_size:
        raise UsageError("--merge: the shards hold %d students, the class %d" % (len(reports), class_size))
    out_dir.mkdir(parents=True, exist_ok=True)
    ordered = [reports[name] for name in sorted(reports)]
    for name in sorted(reports):
        target = out_dir / (name + ".json")
        source = next(f for f, _, r in records if name in r["students"]) / (name + ".json")
        if source.resolve() != target.resolve():
            shutil.copyfile(str(source), str(target))
    gr.write_csv(ordered, out_dir / "scores.csv")
    if junit is not None:
        gr.write_junit(ordered, junit)
    return ordered
