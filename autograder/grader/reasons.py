"""Reasons and flags a person reads: made in both languages, saved side by side, shown in one.

Why a submission has its status, and what an integrity flag found, is made as a
:class:`Text` where it is found. It is saved as two plain fields: the English under the
field's own name (what older records and readers have) and the Chinese beside it, under
the same name with ``_zh``. A reader shows the field in its own language; a record saved
before there was a Chinese side shows its English.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from autograder.common.i18n import Text

ZH = "_zh"


def says(en: str, zh: str, **values: object) -> Text:
    """A message from a template in each language; a Text value fills in its own language.

    Unlike ``Text.format`` the templates need no Chinese of their own (``"{cell} {detail}"``):
    the filled message must have it.
    """

    def fill(template: str, lang: str) -> str:
        return template.format(
            **{k: v(lang) if isinstance(v, Text) else v for k, v in values.items()}
        )

    return Text(fill(en, "en"), fill(zh, "zh"))


def cell_name(cell: str) -> Text | str:
    """A cell as a reason names it: its grade id as is, a cell without one ("cell 4", as the
    grader's steps name it) in each language."""
    found = re.fullmatch(r"cell (\d+)", cell)
    return Text(cell, f"单元格 {found.group(1)}") if found else cell


def join(parts: Iterable[Text]) -> Text | None:
    """The parts one after another (``; `` and ``；``), or None when there are none."""
    parts = list(parts)
    if not parts:
        return None
    return Text("; ".join(p.en for p in parts), "；".join(p.zh for p in parts))


def fields(key: str, text: Text | None) -> dict[str, str]:
    """``text`` as the two fields it is saved in: ``key`` (English) and ``key_zh``."""
    return {key: text.en if text else "", key + ZH: text.zh if text else ""}


def _get(holder: Mapping | object, key: str) -> str:
    value = holder.get(key, "") if isinstance(holder, Mapping) else getattr(holder, key, "")
    return value if isinstance(value, str) else ""


def saved(holder: Mapping | object, key: str) -> Text | None:
    """The Text saved under ``key`` (a dict's items or an object's attributes), or None when
    it has no Chinese side (saved before there was one)."""
    en, zh = _get(holder, key), _get(holder, key + ZH)
    try:
        return Text(en, zh)
    except ValueError:  # a side is empty, or the Chinese side is not Chinese
        return None


def shown(holder: Mapping | object, key: str, lang: str) -> str:
    """The field in ``lang``; its English where it has no Chinese side."""
    text = saved(holder, key)
    return text(lang) if text is not None else _get(holder, key)
