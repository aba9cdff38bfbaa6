"""The message catalogues: GNU gettext `.po` files, one folder per language, one file per domain.

    scripts/puzzlelib/locale/<lang>/LC_MESSAGES/<domain>.po

As in gettext, the msgid is the English text the code carries (a key that reads as it prints),
and each language's msgstr is its form. Placeholders are named, `{array}`, or printf's `%s`/`%d`
in older messages; a translation keeps exactly the placeholders of its msgid
(tests/python/test_catalog.py, and `msgfmt --check` where GNU gettext is installed).

The catalogues are read here, with the standard library only, so that a new user's first command
needs nothing installed: Python's `gettext` module reads only compiled `.mo` files, and the `.po`
text is the one place the words live.

Korean particles: a particle written after a placeholder (`{array}이`, `%s를`, `{file}으로`) is
chosen when the message is formatted, from how the value before it ends (`thread 1이`,
`thread 2가`, `t.html을`, `out[3]을`): see `particle_after`.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

LOCALE = Path(__file__).resolve().parent / "locale"

# {name}, {name:g}, %(name)s, %s, %d, %g, %%: the placeholders a msgid may hold.
PLACEHOLDER = re.compile(r"%\(\w+\)[sdg]|%[sdg]|\{\w+(?::[^{}]*)?\}")


# ---- reading .po files ---------------------------------------------------------------------------

def _unquote(token: str, where: str) -> str:
    if not (len(token) >= 2 and token[0] == '"' and token[-1] == '"'):
        raise ValueError("%s: expected a quoted string, got %r" % (where, token))
    # A .po string is a C string; Python's literal rules agree for the escapes gettext writes.
    return ast.literal_eval(token)


def read_po(path: Path) -> List[Tuple[Optional[str], str, str, List[str]]]:
    """(msgctxt, msgid, msgstr, flags) of each entry of a .po file, in order; the header (msgid
    "") is left out. Plural forms are not used by this project and are refused."""
    entries = []
    ctxt: Optional[str] = None
    msgid: Optional[str] = None
    msgstr: Optional[str] = None
    flags: List[str] = []
    field: Optional[str] = None

    def flush():
        nonlocal ctxt, msgid, msgstr, flags, field
        if msgid is not None:
            if msgstr is None:
                raise ValueError("%s: msgid %r has no msgstr" % (path, msgid))
            if msgid != "":
                entries.append((ctxt, msgid, msgstr, flags))
        ctxt, msgid, msgstr, flags, field = None, None, None, [], None

    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        where = "%s:%d" % (path, n)
        if not line:
            flush()
            continue
        if line.startswith("#,"):
            if msgid is not None:
                flush()
            flags += [f.strip() for f in line[2:].split(",") if f.strip()]
            continue
        if line.startswith("#"):
            continue
        if line.startswith("msgctxt "):
            if msgid is not None:
                flush()
            ctxt, field = _unquote(line[8:].strip(), where), "ctxt"
        elif line.startswith("msgid_plural") or line.startswith("msgstr["):
            raise ValueError("%s: plural forms are not used in this project's catalogues" % where)
        elif line.startswith("msgid "):
            if msgid is not None:
                flush()
            msgid, field = _unquote(line[6:].strip(), where), "id"
        elif line.startswith("msgstr "):
            msgstr, field = _unquote(line[7:].strip(), where), "str"
        elif line.startswith('"'):
            part = _unquote(line, where)
            if field == "ctxt":
                ctxt = (ctxt or "") + part
            elif field == "id":
                msgid = (msgid or "") + part
            elif field == "str":
                msgstr = (msgstr or "") + part
            else:
                raise ValueError("%s: a string outside an entry" % where)
        else:
            raise ValueError("%s: not a .po line: %r" % (where, raw))
    flush()
    return entries


def po_files(lang: str) -> List[Path]:
    return sorted((LOCALE / lang / "LC_MESSAGES").glob("*.po"))


_loaded: Dict[str, Dict[str, str]] = {}


def translations(lang: str) -> Dict[str, str]:
    """msgid -> msgstr for one language, all domains together; a fuzzy or empty msgstr is left
    out (gettext's rule: an unfinished translation shows the English)."""
    if lang not in _loaded:
        table: Dict[str, str] = {}
        for path in po_files(lang):
            for ctxt, msgid, msgstr, flags in read_po(path):
                if msgstr and "fuzzy" not in flags:
                    table[msgid if ctxt is None else ctxt + "\x04" + msgid] = msgstr
        _loaded[lang] = table
    return _loaded[lang]


def entries(lang: str) -> Iterator[Tuple[Path, Optional[str], str, str, List[str]]]:
    for path in po_files(lang):
        for ctxt, msgid, msgstr, flags in read_po(path):
            yield path, ctxt, msgid, msgstr, flags


def placeholders(text: str) -> List[str]:
    return PLACEHOLDER.findall(text)


# ---- Korean particles --------------------------------------------------------------------------
# Each pair: the form after a final consonant (batchim), the form after a vowel. 으로/로 also takes
# 로 after ㄹ. The hedged forms a table may hold ("을(를)", "(으)로") are read as their pair.
PARTICLES = [("으로", "로"), ("이나", "나"), ("이", "가"), ("을", "를"), ("은", "는"), ("과", "와")]
_HEDGED = {"을(를)": ("을", "를"), "를(을)": ("을", "를"), "이(가)": ("이", "가"), "가(이)": ("이", "가"),
           "은(는)": ("은", "는"), "는(은)": ("은", "는"), "(으)로": ("으로", "로"), "과(와)": ("과", "와"),
           "와(과)": ("과", "와")}
_HEDGED_RE = "|".join(re.escape(h) for h in sorted(_HEDGED, key=len, reverse=True))
_PLAIN_RE = "|".join(sorted({p for pair in PARTICLES for p in pair}, key=len, reverse=True))
# A particle ends at a space, punctuation or the end: `{n}이다` is also right (이다 follows the same
# rule as 이/가), but `{n}이번` is not a particle and is left alone.
_PARTICLE_AT = re.compile(r"(%s|%s)(?=[\s.,:;!?)\]'\"`…]|이다|이며|입니다|이고|$)" % (_HEDGED_RE, _PLAIN_RE))
# 이다/이며/입니다/이고 after a vowel drop their 이 (2다, 2며, 2입니다 stays): only 이/가-like
# choices are made here, so the copula is left as written.

# How a final Latin letter is read when letters are read one by one (an extension, an acronym, a
# one-letter name): L, M, N, R end in a consonant (엘, 엠, 엔, 알); the others in a vowel.
_LETTER_BATCHIM = {"l": "ㄹ", "m": "ㅁ", "n": "ㄴ", "r": "ㄹ"}
# How a final digit is read (Sino-Korean): 영 일 이 삼 사 오 육 칠 팔 구.
_DIGIT_BATCHIM = {"0": "ㅇ", "1": "ㄹ", "2": "", "3": "ㅁ", "4": "", "5": "", "6": "ㄱ", "7": "ㄹ", "8": "ㄹ", "9": ""}
# A number that ends in zeros is read by its last unit: 십, 백, 천, 만.
_TENS_BATCHIM = {1: "ㅂ", 2: "ㄱ", 3: "ㄴ"}


def final_sound(value: str) -> Optional[str]:
    """The final consonant of `value` as read aloud in Korean: "" (ends in a vowel), "ㄹ", or another
    consonant; None when nothing readable ends it."""
    # `f()` is read as `f`; `out[3]`: the index is what is read last; `f(x)`: likewise.
    text = value.replace("()", "").rstrip(" \t\n'\"`)]}>*.,:;")
    if not text:
        return None
    ch = text[-1]
    if "\uac00" <= ch <= "\ud7a3":
        jong = (ord(ch) - 0xAC00) % 28
        return "" if jong == 0 else ("ㄹ" if jong == 8 else "ㅇ")
    if ch.isdigit():
        digits = re.search(r"\d+$", text).group(0)
        zeros = len(digits) - len(digits.rstrip("0"))
        if zeros and digits.strip("0"):
            return _TENS_BATCHIM.get(zeros, "ㄴ")
        return _DIGIT_BATCHIM[ch]
    if ch.isascii() and ch.isalpha():
        word = re.search(r"[A-Za-z]+$", text).group(0)
        before = text[: -len(word)]
        if len(word) == 1 or word.isupper() or before.endswith(".") or not re.search(r"[aeiouy]", word, re.I):
            return _LETTER_BATCHIM.get(word[-1].lower(), "")  # letters read one by one: html, TPB, s, md
        w = word.lower()
        if w.endswith("ng") or w[-1] in "mn":
            return "ㅇ" if w.endswith("ng") else "ㄴ"
        if w[-1] == "l" or w.endswith("le"):
            return "ㄹ"  # kernel, file
        if w[-1] == "k" or (w[-1] == "t" and len(w) > 1 and w[-2] in "aeiou"):
            return "ㄱ"  # block, out, input, set
        return ""
    return None


def particle_after(value: str, pair: Tuple[str, str]) -> str:
    sound = final_sound(value)
    consonant, vowel = pair
    if sound is None:
        return consonant if consonant != "으로" else "으로"
    if pair[0] == "으로":
        return "로" if sound in ("", "ㄹ") else "으로"
    return consonant if sound else vowel


def _pair_of(particle: str) -> Tuple[str, str]:
    if particle in _HEDGED:
        return _HEDGED[particle]
    for pair in PARTICLES:
        if particle in pair:
            return pair
    raise KeyError(particle)


# ---- formatting ----------------------------------------------------------------------------------

def _value(spec: str, values: dict, positional: list) -> str:
    if spec.startswith("{"):
        body = spec[1:-1]
        name, _, fmt = body.partition(":")
        v = values[name]
        return format(v, fmt) if fmt else str(v)
    if spec.startswith("%("):
        name = spec[2:spec.index(")")]
        return ("%" + spec[-1]) % values[name]
    v = positional.pop(0)
    return ("%" + spec[-1]) % v


def render(template: str, values: Optional[dict] = None, positional: tuple = (), korean: bool = False,
           percent: bool = False) -> str:
    """`template` with its placeholders filled; in Korean, each particle right after a placeholder
    is chosen from the value it follows. `percent`: printf's rules apply (as `template % args`
    does), so `%%` is one `%`."""
    values = values or {}
    pos = list(positional)
    out: List[str] = []
    at = 0

    def literal(text: str) -> str:
        return text.replace("%%", "%") if percent else text

    for m in PLACEHOLDER.finditer(template):
        if percent and m.group(0).startswith("{"):
            continue  # braces are literal text in a printf template
        if not percent and m.group(0).startswith("%"):
            continue  # and percent signs in a brace template
        out.append(literal(template[at:m.start()]))
        v = _value(m.group(0), values, pos)
        out.append(v)
        at = m.end()
        if korean:
            p = _PARTICLE_AT.match(template, at)
            if p:
                out.append(particle_after(v, _pair_of(p.group(1))))
                at = p.end()
    out.append(literal(template[at:]))
    if pos:
        raise TypeError("not all arguments converted during string formatting")
    return "".join(out)


class Message(str):
    """A translated template: `%` and `.format()` fill it as for a str, and in Korean choose each
    particle after a placeholder from its value (`tr("%s를 썼습니다") % "t.html"` gives
    `t.html을 썼습니다`)."""

    korean = False

    def __mod__(self, args):
        if isinstance(args, dict):
            return render(str(self), values=args, korean=self.korean, percent=True)
        if not isinstance(args, tuple):
            args = (args,)
        return render(str(self), positional=args, korean=self.korean, percent=True)

    def format(self, *args, **kwargs):
        if args:
            return str.format(self, *args, **kwargs)
        return render(str(self), values=kwargs, korean=self.korean)


class KoreanMessage(Message):
    korean = True
