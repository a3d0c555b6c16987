"""Every lesson's checks, in-process, on every device, against the answer catalogues.

For each exercise: the reference solution and every catalogued correct
alternative pass the visible and hidden checks; every catalogued wrong answer
fails, naming its misconception ID (and section) where it has one and no ID where
it has none. Answers are judged in self-study mode, as the learner's kernel does.
The reference solution, and the right answers under other learners' salts, are
also judged split the way grading splits it — observed with the learner's
definitions, then judged from the observations alone. Every catalogued answer's
split verdict is the one test_catalogue_graded reads from ``course-grade`` (real
sandbox, observer and judge), compared there with the self-study verdict; its
Chinese feedback is read in test_feedback_wording.
"""

from __future__ import annotations

import importlib

import pytest
import torch
from conftest import SOLUTIONS
from lesson_cells import graded_cells, run

from autograder import course
from autograder.common import protocol
from autograder.common.exercise import NotAttempted
from autograder.common.misconceptions import lookup
from autograder.common.result import CheckFailed
from autograder.grader.pipeline import policy
from autograder.grader.pipeline.judge import judge_cell
from autograder.kernel.device import course_device
from autograder.kernel.observer import observe_cell

LESSONS = [source.parent.name for source in course.lesson_sources(SOLUTIONS)]
MIN_WRONG, MIN_RIGHT = 5, 3
# Lessons whose checks are specifications on the oracle (issue 22): the raised standard.
RAISED = dict.fromkeys(("01", "02", "03", "04", "05", "06", "07", "08", "09"), (8, 5))


def _number(lesson: str) -> str:
    return lesson.split("_", 1)[0]


def _checks(lesson: str):
    return importlib.import_module(f"autograder.lessons.lesson{_number(lesson)}")


def _catalogue(lesson: str):
    return importlib.import_module(f"catalog.lesson{_number(lesson)}")


CELLS = {lesson: graded_cells(SOLUTIONS / lesson / f"{lesson}.ipynb") for lesson in LESSONS}
EXERCISES = [
    pytest.param(lesson, exercise, id=f"{lesson}-ex{exercise.number}")
    for lesson in LESSONS
    for exercise in _checks(lesson).EXERCISES
]
WRONG = [
    pytest.param(lesson, grade_id, wrong, id=f"{grade_id}-{wrong.name}")
    for lesson in LESSONS
    for grade_id, answers in _catalogue(lesson).WRONG.items()
    for wrong in answers
]
RIGHT = [
    pytest.param(lesson, grade_id, right, id=f"{grade_id}-{right.name}")
    for lesson in LESSONS
    for grade_id, answers in _catalogue(lesson).RIGHT.items()
    for right in answers
]


def _skip_where_right(wrong, device: str) -> None:
    if torch.device(device).type not in wrong.devices:
        pytest.skip(f"this answer is right on {device}; it is wrong on {', '.join(wrong.devices)}")


def _grade_id(exercise) -> str:
    return f"ex{exercise.number}_{exercise.function}"


def _test_source(lesson: str, grade_id: str) -> str:
    return CELLS[lesson][f"{grade_id}_tests"].source


SALT = 48_611  # a submission's salt: grading draws other hidden inputs than self-study
OTHER_SALTS = (7_919, 2**30)  # two more learners' salts, for the right answers


def _split_verdict(code: str, test_source: str, salt: int = SALT):
    """Observe as the sandboxed observer does, round-trip the data, judge as the grader does,
    the hidden tests salted as for one learner's submission."""
    try:
        observations = observe_cell(["import torch", code], test_source, salt=salt)
    finally:
        protocol.MODE.reset()
    blob = protocol.from_bytes(protocol.to_bytes({"status": "ok", "observations": observations}))
    return judge_cell(test_source, blob, "en", salt=salt)


@pytest.mark.parametrize(("lesson", "exercise"), EXERCISES)
def test_exercise_has_its_cells_and_catalogues(lesson, exercise):
    grade_id = _grade_id(exercise)
    assert grade_id in CELLS[lesson] and f"{grade_id}_tests" in CELLS[lesson]
    assert f"def {exercise.function}(" in CELLS[lesson][grade_id].source
    wrong = _catalogue(lesson).WRONG.get(grade_id, [])
    assert {w.misconception for w in wrong} >= set(exercise.misconceptions)
    # A capstone's exercise revisits an earlier lesson, whose misconceptions it names.
    revisited = getattr(_checks(lesson), "REVISITS", {}).get(exercise.number, lesson)
    for misconception in exercise.misconceptions:
        assert lookup(misconception).lesson == revisited


@pytest.mark.parametrize(("lesson", "exercise"), EXERCISES)
def test_reference_solution_passes_visible_and_hidden_checks(lesson, exercise, device):
    grade_id = _grade_id(exercise)
    namespace = run(CELLS[lesson][grade_id].source)
    run(_test_source(lesson, grade_id), namespace)
    verdict = _split_verdict(CELLS[lesson][grade_id].source, _test_source(lesson, grade_id))
    assert verdict.passed, verdict.feedback


@pytest.mark.parametrize(("lesson", "exercise"), EXERCISES)
def test_reference_solution_passes_the_hidden_checks_of_any_learner(lesson, exercise):
    """Hidden inputs differ per submission: the solution passes whatever the salt draws."""
    grade_id = _grade_id(exercise)
    for salt in (1, *OTHER_SALTS):
        verdict = _split_verdict(
            CELLS[lesson][grade_id].source, _test_source(lesson, grade_id), salt
        )
        assert verdict.passed, f"salt {salt}: {verdict.feedback}"


@pytest.mark.parametrize(("lesson", "exercise"), EXERCISES)
def test_an_unfinished_stub_is_reported_as_not_attempted(lesson, exercise):
    def stub(*args, **kwargs):
        raise NotImplementedError()

    with pytest.raises(NotAttempted, match="not attempted"):
        exercise.check(stub)


def _self_study(self_study, code: str, tests: str):
    """The answer's self-study verdict, in English: its test cell run in-process after it
    (judged once per test run, tests/self_study.py; test_catalogue_graded reads it too)."""
    judged = self_study.judge(code, tests)
    if judged.error() is not None:
        raise judged.error()
    return judged


@pytest.mark.parametrize(("lesson", "grade_id", "wrong"), WRONG)
def test_wrong_answer_fails_and_names_its_misconception(
    lesson, grade_id, wrong, device, self_study
):
    _skip_where_right(wrong, device)
    failure = _self_study(self_study, wrong.code, _test_source(lesson, grade_id))
    assert not failure.passed, "the check passed this wrong answer (no CheckFailed)"
    feedback = failure.feedback
    assert "expected" in feedback and "found" in feedback
    misconception = wrong.misconception_on(torch.device(device).type)
    if misconception:
        assert misconception in failure.misconceptions
        assert lookup(misconception).section.en in feedback
    else:
        assert not failure.misconceptions, failure.misconceptions


@pytest.mark.parametrize(("lesson", "grade_id", "right"), RIGHT)
def test_correct_alternative_earns_the_points(lesson, grade_id, right, device, self_study):
    if torch.device(device).type not in right.devices:
        pytest.skip(f"this answer is wrong on {device}; it is right on {', '.join(right.devices)}")
    judged = _self_study(self_study, right.code, _test_source(lesson, grade_id))
    assert judged.passed, judged.feedback


@pytest.mark.parametrize(("lesson", "grade_id", "right"), RIGHT)
def test_correct_alternative_passes_the_hidden_checks_of_any_learner(lesson, grade_id, right):
    """Hidden inputs differ per submission: a right answer passes whatever the salt draws."""
    if course_device().type not in right.devices:
        pytest.skip(f"this answer is right on {', '.join(right.devices)} only")
    for salt in OTHER_SALTS:
        verdict = _split_verdict(right.code, _test_source(lesson, grade_id), salt)
        assert verdict.passed, f"salt {salt}: {verdict.feedback}"


def _policy_violations(code: str) -> list[str]:
    tree = policy.parse(code)
    assert tree is not None
    return [v.describe() for v in policy.violations(tree, policy.imported_names([tree]))]


@pytest.mark.parametrize(("lesson", "grade_id", "right"), RIGHT)
def test_correct_alternative_respects_the_learner_code_policy(lesson, grade_id, right):
    assert not _policy_violations(right.code)


@pytest.mark.parametrize(("lesson", "grade_id", "wrong"), WRONG)
def test_wrong_answer_respects_the_learner_code_policy(lesson, grade_id, wrong):
    """A catalogued mistake must lose its points to the checks, not to the policy (graded
    through course-grade, a cell the policy refuses never reaches the checks)."""
    assert not _policy_violations(wrong.code)


@pytest.mark.parametrize(("lesson", "exercise"), EXERCISES)
def test_reference_solution_respects_the_learner_code_policy(lesson, exercise):
    assert not _policy_violations(CELLS[lesson][_grade_id(exercise)].source)


def test_feedback_is_in_the_language_course_lang_names(monkeypatch):
    """COURSE_LANG chooses the feedback's language where nothing else did (every wrong
    answer's Chinese feedback is read in test_feedback_wording)."""
    from autograder.lessons import lesson01

    def product_grads(a, b):
        return a, b, a * b

    for lang, said in (("zh", "期望"), ("en", "expected")):
        monkeypatch.setenv("COURSE_LANG", lang)
        with pytest.raises(CheckFailed) as failure:
            lesson01.check_product_grads(product_grads)
        assert said in str(failure.value), str(failure.value)[:300]


@pytest.mark.parametrize("lesson", LESSONS)
def test_catalogues_are_as_large_as_the_definition_of_done_asks(lesson):
    catalogue = _catalogue(lesson)
    min_wrong, min_right = RAISED.get(_number(lesson), (MIN_WRONG, MIN_RIGHT))
    for exercise in _checks(lesson).EXERCISES:
        grade_id = _grade_id(exercise)
        assert len(catalogue.WRONG.get(grade_id, [])) >= min_wrong, grade_id
        everywhere = [r for r in catalogue.RIGHT.get(grade_id, []) if len(r.devices) > 1]
        assert len(everywhere) >= min_right, grade_id


def test_a_crashing_answer_becomes_feedback_not_a_traceback():
    from autograder.lessons import lesson01

    def to_device(batch, model, device, dtype):
        return batch.undefined_method()

    with pytest.raises(CheckFailed, match="AttributeError"):
        lesson01.check_to_device(to_device)
