"""What each check draws, said under its exercise's prompt: the declared input domain.

A Spec draws its cases from axes (``oracle.draw``). Two of them change what a right
answer must handle and are easy to leave out of a prompt: the dtypes of the inputs, and
whether the caller is inside ``torch.no_grad()`` or ``torch.inference_mode()``. They are
read here from the cases the seeds draw (the visible check's, the hidden ones' and the
salted ones' lie among them), and ``autograder.course`` writes the sentence under every
exercise prompt of the learner notebook. Whatever a check draws, the prompt says.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable

from autograder.common.i18n import Text

DTYPES = ("float16", "bfloat16", "float32", "float64", "int64")  # in the order said
SEEDS = range(16)  # the hidden tests' and salted seeds are drawn in this range or alike
_OUTER = {"no_grad": "torch.no_grad()", "inference_mode": "torch.inference_mode()"}
HEADING = re.compile(r"#+ (?:Exercise |练习 |Part |第 )(\d+)\b")  # lesson 08 has parts


def specs(lesson: int) -> dict[int, type]:
    """The lesson's checks by exercise number (torch is imported here, when a build needs
    it, not when the course's commands start)."""
    from autograder.common.oracle import Spec

    module = importlib.import_module(f"autograder.lessons.lesson{lesson:02d}")
    found = {}
    for value in vars(module).values():
        number = getattr(value, "number", None)
        if isinstance(value, type) and issubclass(value, Spec) and isinstance(number, int):
            if value.__module__ == module.__name__ and number > 0:
                found[number] = value
    return found


def drawn(spec_type: type, seeds: Iterable[int] = SEEDS) -> dict[str, list[str]]:
    """The dtypes and the caller's grad contexts the check's cases draw."""
    dtypes, outer = set(), set()
    for seed in seeds:
        for case in spec_type(seed=seed).cases():
            for key, value in case.items():
                if key.endswith("dtype") and value in DTYPES:
                    dtypes.add(value)
            mode = case.get("outer")
            if mode is True or case.get("grad_mode") is False:
                mode = "no_grad"
            if mode in _OUTER:
                outer.add(mode)
    return {
        "dtypes": [d for d in DTYPES if d in dtypes],
        "outer": [m for m in _OUTER if m in outer],
    }


def _listed(items: list[str], lang: str) -> str:
    names = [f"`{item}`" for item in items]
    if len(names) < 2:
        return "".join(names)
    if lang == "zh":
        return f"{'、'.join(names[:-1])} 或 {names[-1]}"
    return f"{', '.join(names[:-1])} or {names[-1]}"


def sentence(spec_type: type, lang: str) -> str | None:
    """The line under the prompt, in ``lang``; None where the check draws neither."""
    found = drawn(spec_type)
    parts = []
    if found["dtypes"]:
        what = Text("inputs of dtype {d}", "输入的 dtype 为 {d}")
        parts.append(what(lang).format(d=_listed(found["dtypes"], lang)))
    if found["outer"]:
        where = [_OUTER[m] for m in found["outer"]]
        what = Text("some calls made from inside {m}", "部分调用在 {m} 之内进行")
        parts.append(what(lang).format(m=_listed(where, lang)))
    if not parts:
        return None
    line = Text("*What the checks draw: {p}.*", "*检查会抽取：{p}。*")
    return line(lang).format(p=("; " if lang == "en" else "；").join(parts))


def said(nb, lesson: int, lang: str):
    """The learner notebook with each exercise prompt followed by what its check draws."""
    checks = specs(lesson)
    for cell in nb.cells:
        match = HEADING.match(cell.source) if cell.cell_type == "markdown" else None
        spec_type = checks.get(int(match.group(1))) if match else None
        line = sentence(spec_type, lang) if spec_type else None
        if line and line not in cell.source:
            prompt, hint, rest = cell.source.partition("<details>")  # said before the hint
            cell.source = f"{prompt.rstrip()}\n\n{line}\n\n{hint}{rest}".rstrip()
    return nb
