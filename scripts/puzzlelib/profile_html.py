"""`profile --html`: the profile as one self-contained page (inline style, a Content Security Policy
that allows no requests, no script): the kernel tables, the annotated source, the top cost and the
story, the same figures as the terminal output (profile.py)."""

from __future__ import annotations

from typing import List

from .messages import lang, tr
from .profile import (KERNEL_LEGEND, STORY_LEGEND, change, kernel_header, kernel_rows, site_lines, story_header,
                      story_rows, top_sentence, variant_title)
from .trace_html import esc

CSP = "default-src 'none'; style-src 'unsafe-inline'"

STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.2em; color: #222; }
h1 { font-size: 1.25em; margin: 0 0 .3em; }
h2 { font-size: 1.05em; margin: 1.6em 0 .3em; font-family: ui-monospace, monospace; }
table { border-collapse: collapse; font: 12.5px ui-monospace, Menlo, Consolas, monospace; }
th, td { border: 1px solid #ddd; padding: .2em .5em; text-align: right; }
th:first-child, td:first-child, td:nth-child(2) { text-align: left; }
pre { font: 12.5px/1.35 ui-monospace, Menlo, Consolas, monospace; background: #f5f5f5; padding: .5em .7em;
      border-radius: 4px; white-space: pre-wrap; }
.top { border-left: 4px solid #d60; padding: .4em .8em; background: #fff8f0; }
.legend { color: #555; font-size: 12.5px; }
"""


def html_table(header, rows) -> str:
    head = "".join("<th>%s</th>" % esc(h) for h in header)
    body = "".join("<tr>%s</tr>" % "".join("<td>%s</td>" % esc(c) for c in r) for r in rows)
    return "<table><tr>%s</tr>%s</table>" % (head, body)


def page(puzzle, vps: List) -> str:
    """The page, in the language asked for (its <html lang> says which)."""
    title = tr("profile of {puzzle}: {variants}").format(puzzle=puzzle.name,
                                                        variants=", ".join(vp.variant.flag for vp in vps))
    parts = ['<!DOCTYPE html>\n<html lang="%s"><head><meta charset="utf-8">' % lang(),
             '<meta http-equiv="Content-Security-Policy" content="%s">' % CSP,
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             "<title>%s</title><style>%s</style></head><body>" % (esc(title), STYLE),
             "<h1>%s</h1>" % esc(title)]
    if len(vps) > 1:
        parts.append("<h2>%s</h2>" % esc(tr("the story, one row per variant")))
        parts.append(html_table(story_header() + [tr("what changed from the row above")],
                                [r + ["-" if i == 0 else change(vps[i - 1], vps[i])]
                                 for i, r in enumerate(story_rows(vps))]))
        parts.append('<p class="legend">%s</p>' % esc(tr(STORY_LEGEND)))
    for vp in vps:
        parts.append("<h2>%s</h2>" % esc(variant_title(vp)))
        parts.append(html_table(kernel_header(), kernel_rows(vp)))
        parts.append('<p class="legend">%s</p>' % esc(tr(KERNEL_LEGEND)))
        parts.append("<pre>%s</pre>" % esc("\n".join(l[2:] for l in site_lines(vp))))
        parts.append('<p class="top">%s</p>' % esc(top_sentence(vp)))
    parts.append("</body></html>\n")
    return "".join(parts)
