"""HTML for the class report: one self-contained page, readable without JavaScript.

Every value is escaped unless it is :class:`Markup` this module or the report built
(learner ids, names and reasons are learner-provided text). Tables are plain HTML; a
few lines of inline script let a reader sort a table by a column, and nothing else.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


class Markup(str):
    """HTML the report built itself, inserted as is."""


@dataclass(frozen=True)
class Cell:
    """A table cell: what it shows, and the key a sorted column orders it by."""

    shown: object
    key: object = None


def escape(value: object) -> str:
    """``value`` as HTML text, unless it is :class:`Markup`."""
    return value if isinstance(value, Markup) else html.escape(str(value))


def link(href: str, text: object) -> Markup:
    return Markup(f'<a href="{html.escape(href, quote=True)}">{escape(text)}</a>')


def table(
    headers: Sequence[object],
    rows: Iterable[Sequence[object]],
    *,
    sortable: bool = False,
    css: str = "",
) -> Markup:
    """A table with a header row; a :class:`Cell` carries its sort key as ``data-key``."""
    classes = " ".join(c for c in ("sortable" if sortable else "", css) if c)
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = []
        for value in row:
            if isinstance(value, Cell):
                key = "" if value.key is None else f' data-key="{html.escape(str(value.key))}"'
                cells.append(f"<td{key}>{escape(value.shown)}</td>")
            else:
                cells.append(f"<td>{escape(value)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    attribute = f' class="{classes}"' if classes else ""
    return Markup(
        f"<table{attribute}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def figure(uri: str | None, alt: str, nothing: str) -> Markup:
    """The figure as an image, or the sentence ``nothing`` where there is nothing to draw."""
    if uri is None:
        return Markup(f'<p class="nothing">{escape(nothing)}</p>')
    return Markup(f'<figure><img alt="{html.escape(alt)}" src="{uri}"></figure>')


def section(title: object, *parts: object, anchor: str = "", level: int = 2) -> Markup:
    """A titled part of the page; ``level`` 3 for a part inside another."""
    heading = f'<h{level} id="{html.escape(anchor)}">' if anchor else f"<h{level}>"
    body = "".join(map(escape, parts))
    return Markup(f"<section>{heading}{escape(title)}</h{level}>{body}</section>")


def folding(summary: object, content: object, *, open_: bool) -> Markup:
    """A part a reader opens and closes by its title (``<details>``: no script needed)."""
    opened = " open" if open_ else ""
    return Markup(
        f"<details{opened}><summary>{escape(summary)}</summary>{escape(content)}</details>"
    )


def abbreviation(short: str, full: str) -> Markup:
    """``short`` shown, ``full`` on hover (long exercise ids in a table's header)."""
    return Markup(f'<abbr title="{html.escape(full)}">{html.escape(short)}</abbr>')


def paragraph(text: object) -> Markup:
    return Markup(f"<p>{escape(text)}</p>")


_STYLE = """body{font-family:"Noto Sans CJK SC",sans-serif;max-width:72em;margin:2em auto;
padding:0 1em}img{max-width:100%}table{border-collapse:collapse;margin:.5em 0 1em}
td,th{border:1px solid #ccc;padding:.2em .6em;text-align:left;vertical-align:top}
th{background:#f1f3f5}table.sortable th{cursor:pointer}td[data-key]{text-align:right}
.nothing{color:#555;font-style:italic}section{margin-bottom:2em}
summary{cursor:pointer;font-weight:bold;margin:.4em 0}"""

# Click a sortable table's header: rows ordered by that column (data-key, else the text;
# numbers as numbers), a second click reverses. Without script the table stays as written.
_SORT = """document.querySelectorAll("table.sortable").forEach(function(t){
t.querySelectorAll("th").forEach(function(th,col){th.addEventListener("click",function(){
var body=t.tBodies[0],rows=Array.from(body.rows),up=th.dataset.up!=="1";th.dataset.up=up?"1":"0";
function key(r){var c=r.cells[col];var k=c.dataset.key!==undefined?c.dataset.key:c.textContent;
var n=parseFloat(k);return isNaN(n)||k===""?k:n;}
rows.sort(function(a,b){var x=key(a),y=key(b);if(typeof x!==typeof y){x=String(x);y=String(y);}
return (x<y?-1:x>y?1:0)*(up?1:-1);});rows.forEach(function(r){body.appendChild(r);});});});});"""


def page(title: str, lang: str, body: Iterable[object]) -> str:
    """The whole document: no external file, font, style or script."""
    return (
        f'<!DOCTYPE html>\n<html lang="{"zh-CN" if lang == "zh" else "en"}"><head>'
        f'<meta charset="utf-8"><title>{escape(title)}</title><style>{_STYLE}</style></head>'
        f"<body><h1>{escape(title)}</h1>{''.join(map(escape, body))}"
        f"<script>{_SORT}</script></body></html>\n"
    )
