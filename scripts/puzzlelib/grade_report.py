"""Points, and the reports `grade` writes: JSON (docs/grading-schema.json), JUnit XML, CSV.

Also a small validator for the subset of JSON Schema that docs/grading-schema.json uses, so the
tests can check reports against the schema with the standard library alone.
"""

from __future__ import annotations

import csv
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import List, Optional

from .common import UsageError
from .messages import activate, set_lang, speaking, tr, tr_reason

SCHEMA_VERSION = 2  # 2: the verdict not-on-device, builds[].device_compile, variants[].require_device
VERDICTS = ("pass", "fail", "race", "not-on-device", "error", "build-error", "tampered")
FAILURES = ("fail", "race", "not-on-device")  # JUnit <failure>; the other non-pass verdicts are <error>


# ------------------------------------------------------------------------------ points

class Points:
    """grading/points.json:

        {"version": 1, "default": 1,
         "puzzles": {"p14": {"naive": 1, "simple": 2, ...}, "p12": 3},
         "require_device": {"default": true, "puzzles": {"p13": {"complete": false}}}}

    A puzzle maps to {variant: points} or to one number for each of its variants; variants not
    listed get "default". require_device (optional; true everywhere when absent): whether an output
    must be written by a kernel to pass, as a boolean for everything or per puzzle and variant in
    the same shape as the points.
    """

    def __init__(self, data: Optional[dict] = None, source: str = "(built-in: 1 point per variant)"):
        data = data if data is not None else {}
        where = source
        if not isinstance(data, dict):
            raise UsageError("%s: expected a JSON object" % where)
        unknown = set(data) - {"version", "default", "puzzles", "comment", "require_device"}
        if unknown:
            raise UsageError("%s: unknown keys %s (expected version, default, puzzles, require_device)"
                             % (where, sorted(unknown)))
        self.source = source
        self.default = data.get("default", 1)
        self._check_number(self.default, where + ": default")
        self.puzzles = data.get("puzzles", {})
        if not isinstance(self.puzzles, dict):
            raise UsageError("%s: 'puzzles' must be an object" % where)
        for puzzle, spec in self.puzzles.items():
            if isinstance(spec, dict):
                for variant, value in spec.items():
                    self._check_number(value, "%s: %s %s" % (where, puzzle, variant))
            else:
                self._check_number(spec, "%s: %s" % (where, puzzle))
        device = data.get("require_device", True)
        if isinstance(device, bool):
            device = {"default": device}
        if not isinstance(device, dict) or set(device) - {"default", "puzzles"}:
            raise UsageError("%s: require_device must be true, false or {\"default\": true, \"puzzles\": "
                             "{\"p13\": {\"complete\": false}}}, got %s" % (where, json.dumps(device)))
        self.device_default = device.get("default", True)
        self.device_puzzles = device.get("puzzles", {})
        if not isinstance(self.device_default, bool) or not isinstance(self.device_puzzles, dict):
            raise UsageError("%s: require_device: default must be true or false and puzzles an object" % where)
        for puzzle, spec in self.device_puzzles.items():
            values = spec.values() if isinstance(spec, dict) else [spec]
            if not all(isinstance(v, bool) for v in values):
                raise UsageError("%s: require_device: %s must map to true/false, or to {variant: true/false}"
                                 % (where, puzzle))

    def require_device(self, puzzle: str, variant: str) -> bool:
        """Whether the variant's output must be written by a kernel ("not-on-device" otherwise)."""
        spec = self.device_puzzles.get(puzzle)
        if isinstance(spec, dict):
            return spec.get(variant, self.device_default)
        if spec is not None:
            return spec
        return self.device_default

    @staticmethod
    def _check_number(value, where):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise UsageError("%s: points must be a non-negative number, got %r" % (where, value))

    @classmethod
    def load(cls, path: Path) -> "Points":
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as e:
            raise UsageError("cannot read the points file %s: %s" % (path, e))
        except ValueError as e:
            raise UsageError("the points file %s is not valid JSON: %s" % (path, e))
        return cls(data, str(path))

    def of(self, puzzle: str, variant: str):
        spec = self.puzzles.get(puzzle)
        if isinstance(spec, dict):
            return spec.get(variant, self.default)
        if spec is not None:
            return spec
        return self.default

    def unknown_names(self, puzzles) -> List[str]:
        """Puzzles or variants named in the file that the tree does not have (typos)."""
        names = []
        for table in (self.puzzles, self.device_puzzles):
            for puzzle, spec in table.items():
                if puzzle not in puzzles:
                    names.append(puzzle)
                elif isinstance(spec, dict):
                    names += ["%s:%s" % (puzzle, v) for v in spec if v not in puzzles[puzzle].variants]
        return sorted(set(names), key=names.index)


def speak(lang: Optional[str]) -> None:
    """What students read (grade --lang): in `lang`, English when None, whatever the locale."""
    set_lang(lang or "en")
    activate()


def report_lang(report: dict) -> str:
    """The language a report was graded in (its "lang"; English for reports from before it)."""
    return report.get("lang") if report.get("lang") in ("en", "ko") else "en"


def verdict_text(row: dict) -> str:
    """`fail: wrong answer`: a variant's verdict and reason as a student reads them, the verdict said
    once (Korean says 오답 for fail and for wrong answer; `race: result depends on thread order`
    already starts with its verdict)."""
    verdict, reason = tr(row["verdict"]), tr_reason(row["reason"])
    if verdict == reason or reason.startswith(verdict + ": "):
        return reason
    return "%s: %s" % (verdict, reason)


def fmt_points(value) -> str:
    if isinstance(value, float) and not value.is_integer():
        return ("%.2f" % value).rstrip("0").rstrip(".")
    return "%d" % value


def percent(points, max_points) -> float:
    return round(100.0 * points / max_points, 2) if max_points else 100.0


# ------------------------------------------------------------------------------ JSON

def write_json(report: dict, path: Path) -> None:
    path = Path(path)
    if path.parent and not path.parent.is_dir():
        path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2, sort_keys=False) + "\n", encoding="utf-8")


# ------------------------------------------------------------------------------ JUnit

_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text) -> str:
    return _XML_BAD.sub("?", str(text))


def junit_tree(reports: List[dict]) -> ET.ElementTree:
    """One <testsuite> per puzzle (per student and puzzle in batch mode), one <testcase> per
    variant: fail, race and not-on-device are <failure>, error, build-error and tampered are <error>."""
    root = ET.Element("testsuites", name="puzzle grade")
    totals = {"tests": 0, "failures": 0, "errors": 0}
    seconds = 0.0
    for report in reports:
        with speaking(report_lang(report)):
            seconds += _junit_report(root, report, totals)
    for k, value in totals.items():
        root.set(k, str(value))
    root.set("time", "%.3f" % seconds)
    return ET.ElementTree(root)


def _junit_report(root: ET.Element, report: dict, totals: dict) -> float:
    """The testsuites of one report, worded in its language; returns their seconds."""
    seconds = 0.0
    prefix = (report.get("student") + ": ") if report.get("batch") and report.get("student") else ""
    by_puzzle = {}  # type: Dict[str, List[dict]]
    for v in report["variants"]:
        by_puzzle.setdefault(v["puzzle"], []).append(v)
    for puzzle, variants in by_puzzle.items():
        failures = sum(1 for v in variants if v["verdict"] in FAILURES)
        errors = sum(1 for v in variants if v["verdict"] not in FAILURES + ("pass",))
        t = sum(v["seconds"] for v in variants)
        suite = ET.SubElement(root, "testsuite", name=_clean(prefix + puzzle), tests=str(len(variants)),
                              failures=str(failures), errors=str(errors), skipped="0", time="%.3f" % t,
                              timestamp=report["started_at"][:19])
        props = ET.SubElement(suite, "properties")
        for name, value in (("seed", report["seed"]), ("score", "%s/%s" % (
                fmt_points(report["score"]["points"]), fmt_points(report["score"]["max_points"]))),
                ("integrity", report["integrity"]["status"]), ("replay", report["replay"])):
            ET.SubElement(props, "property", name=name, value=_clean(value))
        for v in variants:
            case = ET.SubElement(suite, "testcase", classname=_clean(prefix + puzzle),
                                 name=_clean("%s%s %s" % (prefix, puzzle, v["flag"])), time="%.3f" % v["seconds"])
            if v["verdict"] != "pass":
                tag = "failure" if v["verdict"] in FAILURES else "error"
                message = verdict_text(v)
                body = []
                if v.get("failing_case"):
                    fc = v["failing_case"]
                    message += " (n=%d tpb=%d seed=%d)" % (fc["n"], fc["tpb"], fc["seed"])
                    body.append(tr("replay: %s") % fc["replay"])
                if v.get("diagnostic"):
                    body.append(v["diagnostic"])
                el = ET.SubElement(case, tag, message=_clean(message), type=v["verdict"])
                el.text = _clean("\n".join(body))
            out = ET.SubElement(case, "system-out")
            out.text = _clean(tr("points: %s/%s") % (fmt_points(v["points"]), fmt_points(v["max_points"])))
            totals["tests"] += 1
        totals["failures"] += failures
        totals["errors"] += errors
        seconds += t
    return seconds


def write_junit(reports: List[dict], path: Path) -> None:
    tree = junit_tree(reports)
    if hasattr(ET, "indent"):  # Python 3.9+
        ET.indent(tree)
    path = Path(path)
    if path.parent and not path.parent.is_dir():
        path.parent.mkdir(parents=True, exist_ok=True)
    with open(str(path), "wb") as f:
        tree.write(f, encoding="utf-8", xml_declaration=True)


# ------------------------------------------------------------------------------ CSV

def write_csv(reports: List[dict], path: Path) -> List[str]:
    """student, one column of points per variant ("p14 --simple"), total, max_points, percent,
    problems. Returns the header."""
    columns = []  # type: List[str]
    for report in reports:
        for v in report["variants"]:
            label = "%s %s" % (v["puzzle"], v["flag"])
            if label not in columns:
                columns.append(label)
    header = ["student"] + columns + ["total", "max_points", "percent", "problems"]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(str(path), "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        for report in reports:
            points = {"%s %s" % (v["puzzle"], v["flag"]): v["points"] for v in report["variants"]}
            w.writerow([report["student"]] + [fmt_points(points[c]) if c in points else "" for c in columns]
                       + [fmt_points(report["score"]["points"]), fmt_points(report["score"]["max_points"]),
                          "%.1f" % report["score"]["percent"], "; ".join(problems(report))])
    return header


def problems(report: dict) -> List[str]:
    """Short notes for the CSV: what did not pass, and integrity findings."""
    notes = []
    if report["integrity"]["status"] != "ok":
        files = report["integrity"]["modified"] + report["integrity"]["missing"]
        notes.append("%s: %s" % (report["integrity"]["status"], ", ".join(files)))
    by_puzzle = {}  # type: Dict[str, List[dict]]
    for v in report["variants"]:
        by_puzzle.setdefault(v["puzzle"], []).append(v)
    for puzzle, variants in by_puzzle.items():
        bad = [v for v in variants if v["verdict"] != "pass"]
        if len(bad) > 1 and len(bad) == len(variants) and len({(v["verdict"], v["reason"]) for v in bad}) == 1:
            notes.append("%s (every variant) %s (%s)" % (puzzle, bad[0]["verdict"], bad[0]["reason"]))
            continue
        for v in bad:
            notes.append("%s %s %s (%s)" % (v["puzzle"], v["flag"], v["verdict"], v["reason"]))
    review = report.get("review") or []
    if review:
        # The notes an instructor most needs first (grade puts serial-work and suspicious-call notes
        # ahead of the rest): two in full, then how many more the JSON report has.
        shown = ["review %s:%d: %s" % (n["file"], n["line"], n["text"]) for n in review[:2]]
        if len(review) > 2:
            shown.append("%d more review notes in the JSON report" % (len(review) - 2))
        notes += shown
    return notes


# ------------------------------------------------------------------------------ schema check

class SchemaError(Exception):
    pass


_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}
_IGNORED = {"$schema", "$id", "title", "description", "$comment", "examples", "default"}
_SUPPORTED = _IGNORED | {"type", "properties", "required", "additionalProperties", "items", "enum", "const",
                         "minimum", "maximum", "pattern", "$ref", "$defs", "minLength", "minItems", "anyOf"}


def validate(instance, schema: dict, root: Optional[dict] = None, where: str = "$") -> None:
    """Raise SchemaError when `instance` does not match `schema` (a JSON Schema subset: type,
    properties, required, additionalProperties, items, enum, const, minimum, maximum, pattern,
    minLength, minItems, anyOf and local $ref to #/$defs/...). Unknown keywords are an error, so the
    schema cannot silently use more than this checks."""
    root = root if root is not None else schema
    unknown = set(schema) - _SUPPORTED
    if unknown:
        raise SchemaError("%s: schema keywords not supported by this validator: %s" % (where, sorted(unknown)))
    if "$ref" in schema:
        ref = schema["$ref"]
        if not ref.startswith("#/$defs/"):
            raise SchemaError("%s: only local #/$defs/ references are supported, not %s" % (where, ref))
        validate(instance, root["$defs"][ref[len("#/$defs/"):]], root, where)
    if "anyOf" in schema:
        errors = []
        for option in schema["anyOf"]:
            try:
                validate(instance, option, root, where)
                break
            except SchemaError as e:
                errors.append(str(e))
        else:
            raise SchemaError("%s: matches none of the anyOf options: %s" % (where, "; ".join(errors)))
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_TYPES[t](instance) for t in types):
            raise SchemaError("%s: expected %s, got %r" % (where, " or ".join(types), instance))
    if "enum" in schema and instance not in schema["enum"]:
        raise SchemaError("%s: %r is not one of %r" % (where, instance, schema["enum"]))
    if "const" in schema and instance != schema["const"]:
        raise SchemaError("%s: expected %r, got %r" % (where, schema["const"], instance))
    if _TYPES["number"](instance):
        if "minimum" in schema and instance < schema["minimum"]:
            raise SchemaError("%s: %r < minimum %r" % (where, instance, schema["minimum"]))
        if "maximum" in schema and instance > schema["maximum"]:
            raise SchemaError("%s: %r > maximum %r" % (where, instance, schema["maximum"]))
    if isinstance(instance, str):
        if "pattern" in schema and not re.search(schema["pattern"], instance):
            raise SchemaError("%s: %r does not match /%s/" % (where, instance, schema["pattern"]))
        if "minLength" in schema and len(instance) < schema["minLength"]:
            raise SchemaError("%s: shorter than %d characters" % (where, schema["minLength"]))
    if isinstance(instance, list):
        if "minItems" in schema and len(instance) < schema["minItems"]:
            raise SchemaError("%s: fewer than %d items" % (where, schema["minItems"]))
        if "items" in schema:
            for i, item in enumerate(instance):
                validate(item, schema["items"], root, "%s[%d]" % (where, i))
    if isinstance(instance, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in instance:
                raise SchemaError("%s: missing required property %r" % (where, key))
        for key, value in instance.items():
            if key in props:
                validate(value, props[key], root, "%s.%s" % (where, key))
            else:
                extra = schema.get("additionalProperties", True)
                if extra is False:
                    raise SchemaError("%s: unexpected property %r" % (where, key))
                if isinstance(extra, dict):
                    validate(value, extra, root, "%s.%s" % (where, key))
