"""Code cells speak the notebook's language: comments and printed labels, not only prose."""

from __future__ import annotations

import pytest
from conftest import NOTEBOOKS, SOLUTIONS
from language_lint import CJK, english_in_code, identifiers

from autograder import bilingual, course

LESSONS = [s.parent.name for s in course.lesson_sources(SOLUTIONS)]


def _code_cells(lang: str, lesson: str):
    nb = bilingual.read(NOTEBOOKS / lang / f"{lesson}.ipynb")
    return [cell for cell in nb.cells if cell.cell_type == "code"]


@pytest.mark.parametrize("lesson", LESSONS)
def test_chinese_notebooks_have_no_english_comments_or_labels(lesson):
    cells = _code_cells("zh", lesson)
    known = identifiers([cell.source for cell in cells])
    problems = [
        f"{cell.id}: {problem}" for cell in cells for problem in english_in_code(cell.source, known)
    ]
    assert problems == []


@pytest.mark.parametrize("lesson", LESSONS)
def test_english_notebooks_have_no_chinese_in_code(lesson):
    mixed = [cell.id for cell in _code_cells("en", lesson) if CJK.search(cell.source)]
    assert mixed == []


KNOWN = {"loss", "batch", "full", "kept", "total", "x", "model", "name"}


@pytest.mark.parametrize(
    "source",
    [
        "y = x * 2  # keep the outputs for later",
        "y = x  # e.g. [2.0, 2.0]",
        "y = x  # full batch",
        'print("your prediction:", x)',
        'print(f"mean of the output: {x:.3f}")',
        'print("整个批次：", x, "| equal:", x)',
        'ax.set_xlabel("batches evaluated")',
        'ax.plot(x, label="measured")',
        'names = {"a": "grad mode on"}',
        'print("Dropout\'s p：", x)',
        "y = x  # 保存 the outputs",
    ],
)
def test_the_lint_finds_english(source):
    assert english_in_code(source, KNOWN)


@pytest.mark.parametrize(
    "source",
    [
        "net.eval()  # 将模型设置为评估模式",
        "prediction = None  # 填 True 或 False",
        'prediction = None  # 填 "tensor" 或 None',
        "prediction = None  # 例如 [2.0, 2.0]",
        'print(f"{name}: requires_grad={x}, is_leaf={x}")',
        'print("x.grad：", x, "| loss.item()：", loss.item())',
        'print("batch 的字节数：", kept, "MB")',
        'print("RuntimeError：", x)',
        'print("int64 * float32 ->", x)',
        'ax.plot(x, label="total += loss（泄漏）")',
        'ax.set_title("Dropout 的 p：1/(1-p)")',
        'print(f"{name:8}：{x:6.2f} MB，loss 仍被引用")',
        'raise ValueError("boom")',
    ],
)
def test_the_lint_accepts_chinese_with_code_names(source):
    assert english_in_code(source, KNOWN) == []
