"""Code cells speak the notebook's language: comments and printed labels, not only prose."""

from __future__ import annotations

import re

import pytest
from conftest import NOTEBOOKS, REPO, SOLUTIONS
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


# One Chinese term per concept (issue 36): the variant docs/glossary.md rejects -> its term.
REJECTED = {
    "调用方": "调用者",
    "批大小": "批次大小",
    "批量大小": "批次大小",
    "激活检查点": "梯度检查点",
    "就地操作": "原地操作",
    "固定内存": "锁页内存",
    "活张量": "原张量",
    "正向传播": "前向传播",
    "暂退法": "Dropout",
}
GLOSSARY = REPO / "docs" / "glossary.md"
# Where a Chinese learner reads the course's words: the lessons and the feedback's sources.
FEEDBACK_SOURCES = [REPO / "autograder" / part for part in ("common", "lessons", "kernel")]


def _course_texts(feedback_only: bool = False):
    if not feedback_only:
        for path in course.lesson_sources(SOLUTIONS):
            yield path, path.read_text(encoding="utf-8")
    for folder in FEEDBACK_SOURCES:
        for path in sorted(folder.glob("*.py")):
            yield path, path.read_text(encoding="utf-8")


@pytest.mark.parametrize(("rejected", "term"), REJECTED.items())
def test_one_chinese_term_per_concept(rejected, term):
    glossary = GLOSSARY.read_text(encoding="utf-8")
    assert term in glossary and rejected in glossary, "the glossary names both"
    found = [path.name for path, text in _course_texts() if rejected in text]
    assert found == [], f"{rejected} in {found}: the glossary's term is {term}"


def test_gradients_accumulate_and_are_zeroed_in_the_glossarys_words():
    """累积 (not 累加) for gradients; 清零 (not 清空) for .grad."""
    wrong = re.compile(r"梯度[^。；，\n]{0,8}累加|清空 `?\.grad")
    found = [f"{path.name}: {m}" for path, text in _course_texts() for m in wrong.findall(text)]
    assert found == []


def test_a_gpu_kernel_is_a_kernel_function_in_feedback():
    """内核 is the Jupyter kernel (the grader's messages); a GPU kernel is 核函数."""
    found = [path.name for path, text in _course_texts(feedback_only=True) if "内核" in text]
    assert found == []


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
