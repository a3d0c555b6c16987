"""One bilingual source notebook, two learner languages.

Prose and language-specific code live in consecutive cell pairs tagged
``lang-en`` and ``lang-zh``; untagged cells (all graded cells among them) are
shared, which keeps graded cells identical in both languages.
"""

from __future__ import annotations

import copy

import nbformat

from autograder.common.i18n import LANGUAGES

TAG_PREFIX = "lang-"


class BilingualError(ValueError):
    """Raised when a source notebook breaks the pairing convention."""


def cell_language(cell) -> str | None:
    """Return 'en' or 'zh' for a tagged cell, None for a shared one."""
    tags = [t for t in cell.get("metadata", {}).get("tags", []) if t.startswith(TAG_PREFIX)]
    if len(tags) > 1:
        raise BilingualError(f"Cell {cell.get('id')} has several language tags: {tags}")
    return tags[0].removeprefix(TAG_PREFIX) if tags else None


def is_graded(cell) -> bool:
    """Whether nbgrader treats the cell as a solution, test or task cell."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return bool(meta.get("solution") or meta.get("grade") or meta.get("task"))


def pairing_problems(nb) -> list[str]:
    """List every break of the convention: untagged prose, unpaired or mis-ordered cells."""
    problems = []
    cells = nb.cells
    i = 0
    while i < len(cells):
        cell = cells[i]
        lang = cell_language(cell)
        where = f"cell {i} (id {cell.get('id')})"
        if lang is None:
            if cell.cell_type == "markdown" and not is_graded(cell):
                problems.append(f"{where}: prose cell without a lang-en/lang-zh tag")
            i += 1
            continue
        if lang != "en":
            problems.append(f"{where}: a lang-{lang} cell must follow its lang-en partner")
            i += 1
            continue
        partner = cells[i + 1] if i + 1 < len(cells) else None
        if partner is None or cell_language(partner) != "zh":
            problems.append(f"{where}: lang-en cell without a lang-zh cell right after it")
            i += 1
            continue
        if partner.cell_type != cell.cell_type:
            problems.append(f"{where}: its lang-zh partner is a {partner.cell_type} cell")
        if is_graded(cell) or is_graded(partner):
            problems.append(f"{where}: graded cells must be shared, not language-tagged")
        for c, lg in ((cell, "en"), (partner, "zh")):
            if not "".join(c.source).strip():
                problems.append(f"{where}: the lang-{lg} side is empty")
        i += 2
    return problems


def split(nb, lang: str):
    """Return the notebook for one language: shared cells plus that language's cells."""
    if lang not in LANGUAGES:
        raise BilingualError(f"Unknown language {lang!r}; expected one of {LANGUAGES}")
    problems = pairing_problems(nb)
    if problems:
        raise BilingualError("The source breaks the bilingual convention:\n" + "\n".join(problems))
    out = copy.deepcopy(nb)
    kept = []
    for cell in out.cells:
        cell_lang = cell_language(cell)
        if cell_lang not in (None, lang):
            continue
        tags = [t for t in cell.metadata.get("tags", []) if not t.startswith(TAG_PREFIX)]
        if tags:
            cell.metadata["tags"] = tags
        else:
            cell.metadata.pop("tags", None)
        kept.append(cell)
    out.cells = kept
    out.metadata["course"] = {"language": lang}
    return out


def read(path) -> nbformat.NotebookNode:
    """Read a notebook as nbformat v4."""
    return nbformat.read(str(path), as_version=4)
