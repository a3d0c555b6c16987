"""Whatever a check draws, the prompt says: dtypes, grad contexts, shapes, layers, optimizers.

``autograder.common.domain`` reads them from the cases every check's seeds draw and from the
worlds those cases build; ``make build`` ships them (``autograder/lessons/expected/
domain.json``) and writes the sentence under each exercise prompt of the learner notebooks,
in both languages (issue 33, "the domain the prompt allows").
"""

import importlib
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
def test_the_line_is_said_under_exercise_prompts_only(lesson, lang):
    """Not under a lesson's title: "第 01 课" once read as exercise 1's heading."""
    nb = nbformat.read(NOTEBOOKS / lang / f"{lesson}.ipynb", as_version=4)
    start = {"en": "*What the checks draw:", "zh": "*检查会抽取："}[lang]
    holders = [cell.source for cell in nb.cells if start in cell.source]
    prompts = [prompt for prompt in _prompts(lesson, lang).values() if start in prompt]
    assert holders and sorted(holders) == sorted(prompts)


def test_the_shipped_domain_is_what_the_checks_draw():
    """Fails when a check's cases or worlds change and `make build` was not run."""
    assert domain.facts() == domain.declared(), "stale domain.json: run `make build`"


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("lesson", LESSONS)
def test_every_prompt_says_what_its_check_draws(lesson, lang):
    prompts = _prompts(lesson, lang)
    for number, spec_type in domain.specs(int(lesson[:2])).items():
        assert number in prompts, f"{lesson}: no prompt for exercise {number} ({lang})"
        assert domain.of(spec_type), f"{lesson} exercise {number}: not in domain.json"
        line = domain.sentence(spec_type, lang)
        if line is not None:
            assert line in prompts[number], f"{lesson} exercise {number} ({lang}): {line}"
        found = domain.of(spec_type)
        for name in found["dtypes"] + found["modules"] + found["optimizers"]:
            assert re.search(rf"`{name}`", prompts[number]), (lesson, number, lang, name)


@pytest.mark.parametrize("lesson", LESSONS)
def test_the_hidden_tests_ask_only_for_dtypes_the_prompt_says(lesson):
    """A hidden test that passes another dtype draws it: the line must say it too (01 ex7's
    float16 and bfloat16 once went unsaid, and a right answer by the line failed there)."""
    number = int(lesson[:2])
    module = importlib.import_module(f"autograder.lessons.lesson{number:02d}")
    numbers = {id(e.check): e.number for e in module.EXERCISES}
    by_check = {name: numbers[id(v)] for name, v in vars(module).items() if id(v) in numbers}
    source = nbformat.read(SOLUTIONS / lesson / f"{lesson}.ipynb", as_version=4)
    for cell in source.cells:
        for name, args in re.findall(r"checks\.(check_\w+)\(([^)]*)\)", cell.source):
            for dtype in re.findall(r"dtype=torch\.(\w+)", args):
                said = domain.shipped(number, by_check[name])["dtypes"]
                assert dtype in said, (lesson, name, dtype, said)


def test_the_sentence_names_each_dtype_and_context_in_both_languages():
    spec_type = domain.specs(2)[5]  # input_saliency: called from no_grad and inference_mode
    found = domain.of(spec_type)
    assert found["dtypes"] == ["float32", "float64"]
    assert found["outer"] == ["no_grad", "inference_mode"]
    for lang in LANGS:
        line = domain.sentence(spec_type, lang)
        for name in ("`float32`", "`float64`", "`torch.no_grad()`", "`torch.inference_mode()`"):
            assert name in line, (lang, line)


def test_the_worlds_say_shapes_layers_losses_and_optimizers():
    """Read from the built worlds, not from case keys: a GAN step's models end in a view
    layer (Unflatten) and start by flattening; lesson 09's train step takes a loss module."""
    gan = domain.of(domain.specs(4)[4])
    assert {"Unflatten", "Flatten", "BatchNorm1d", "Linear"} <= set(gan["modules"])
    assert gan["optimizers"] == ["Adam", "SGD"]
    train = domain.of(domain.specs(9)[2])
    assert "CrossEntropyLoss" in train["losses"] and "CrossEntropyLoss" not in train["modules"]
    copy = domain.of(domain.specs(4)[1])  # frozen_copy draws 0-d, empty and view tensors
    assert copy["shapes"] == ["0-d", "empty", "view"]
    en, zh = (domain.sentence(domain.specs(4)[1], lang) for lang in LANGS)
    assert "tensors that may be 0-d, empty or views of a larger tensor" in en
    assert "张量可能是 0 维的、空的或更大张量的视图" in zh


def test_the_calls_in_one_world_are_said_with_what_the_caller_does_between():
    """Every check calls again in one world (the contract); one whose caller also acts
    between calls says what, and that the second call has the very same objects."""
    trainable = domain.specs(1)[3]  # make_trainable: an empty list, the caller's default dtype
    assert domain.of(trainable)["again"]
    assert domain.sentence(trainable, "en") == (
        "*What the checks draw: lists that may be empty; some calls made with the caller's "
        "default dtype set to float64 (`torch.set_default_dtype`); a second call with the same "
        "objects after the caller changed them in place, gave them back the `.grad` they "
        "arrived with and used the first result (scaled it in place, or turned on "
        "its `requires_grad` if it came from `detach()`), made with anomaly detection on and "
        "Python's garbage collector off.*"
    )
    assert "可能为空的列表" in domain.sentence(trainable, "zh")  # [[], []]
    head = domain.specs(3)[4]  # finetune_head: a new learning rate before the third call
    en, zh = (domain.sentence(head, lang) for lang in LANGS)
    assert "with the very same objects" in en and "three times as large" in en
    assert "传入完全相同的对象" in zh and "三倍大的学习率" in zh
    assert "anomaly detection on" in en and "异常检测开启" in zh  # oracle._callers_own_settings
    assert "garbage collector off" in en and "垃圾回收关闭" in zh


def test_a_check_that_draws_nothing_it_says_adds_no_sentence(monkeypatch):
    spec_type = domain.specs(1)[3]
    # as a check with called_again = False that draws no default dtype of the caller's and
    # no empty list
    said = dict(domain.of(spec_type), again=False, default_dtype=False, empty_list=False)
    monkeypatch.setattr(domain, "of", lambda _: said)
    assert not any(said.values()), said
    assert domain.sentence(spec_type, "en") is None


def test_a_check_whose_caller_acts_between_calls_says_what_it_does():
    """The third call (``Spec.between_calls``) and its words (``Spec.between``) go together:
    feedback and the prompt's line say what the caller did only where ``between`` is set."""
    for lesson in range(1, 10):
        for spec_type in domain.specs(lesson).values():
            acts = spec_type(seed=0).acts_between_calls
            assert acts == (spec_type.between is not None), spec_type.__name__
