"""Whatever a check draws, the prompt says: the dtypes and the caller's grad contexts.

``autograder.common.domain`` reads them from the cases every check's seeds draw, and the
build writes the sentence under each exercise prompt of the learner notebooks, in both
languages (issue 33, "the domain the prompt allows").
"""

import re

import nbformat
import pytest
from conftest import NOTEBOOKS, SOLUTIONS

from autograder import course
from autograder.common import domain

LANGS = ("en", "zh")
LESSONS = [source.parent.name for source in course.lesson_sources(SOLUTIONS)]


def _prompts(lesson: str, lang: str) -> dict[int, str]:
    nb = nbformat.read(NOTEBOOKS / lang / f"{lesson}.ipynb", as_version=4)
    found = {}
    for cell in nb.cells:
        match = domain.HEADING.match(cell.source) if cell.cell_type == "markdown" else None
        if match:
            found[int(match.group(1))] = cell.source
    return found


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("lesson", LESSONS)
def test_every_prompt_says_what_its_check_draws(lesson, lang):
    prompts = _prompts(lesson, lang)
    for number, spec_type in domain.specs(int(lesson[:2])).items():
        assert number in prompts, f"{lesson}: no prompt for exercise {number} ({lang})"
        line = domain.sentence(spec_type, lang)
        if line is not None:
            assert line in prompts[number], f"{lesson} exercise {number} ({lang}): {line}"
        for dtype in domain.drawn(spec_type)["dtypes"]:
            assert re.search(rf"`{dtype}`", prompts[number]), (lesson, number, lang, dtype)


def test_the_sentence_names_each_dtype_and_context_in_both_languages():
    spec_type = domain.specs(2)[5]  # input_saliency: called from no_grad and inference_mode
    drawn = domain.drawn(spec_type)
    assert drawn == {"dtypes": ["float32", "float64"], "outer": ["no_grad", "inference_mode"]}
    for lang in LANGS:
        line = domain.sentence(spec_type, lang)
        for name in ("`float32`", "`float64`", "`torch.no_grad()`", "`torch.inference_mode()`"):
            assert name in line, (lang, line)


def test_a_check_that_draws_neither_adds_no_sentence():
    spec_type = domain.specs(1)[3]  # make_trainable: no dtype axis, never inside no_grad
    assert domain.drawn(spec_type) == {"dtypes": [], "outer": []}
    assert domain.sentence(spec_type, "en") is None
