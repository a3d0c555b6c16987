"""One verdict everywhere (issue 33, item 4): what grading refuses, the check cell refuses.

Each answer to lesson 01's first exercise runs twice: in a real kernel, as a learner runs
the notebook from the top to the exercise's test cell, and through ``course-grade grade``
(sandbox, policy, observer, judge). Answers the learner-code policy refuses fail in both,
the kernel's feedback naming the refused line; answers it accepts pass in both. The fast
tests read a notebook's history directly (``graded_code.Notebook``): edited cells, helpers
in other cells, the instructor's cells.
"""

from __future__ import annotations

import subprocess

import nbformat
import pytest
from conftest import NOTEBOOKS
from lesson_cells import graded_cells
from nbgrader_course import exercises_only, points, submission, submit
from processes import BIN, venv_env

from autograder.grader.pipeline import records
from autograder.kernel import graded_code

LESSON = "01_requires_grad"
EXERCISE = "ex1_product_grads"
TESTS = f"{EXERCISE}_tests"
REFUSED_LINE = "grading refuses this line"
HOOK_LEFT = "before your function was called"

BODY = (
    "    a = a.detach().clone().requires_grad_()\n"
    "    b = b.detach().clone().requires_grad_()\n"
    "    c = a * b\n"
    "    c.retain_grad()\n"
    "    (c**2).sum().backward()\n"
    "    return a.grad, b.grad, c.grad\n"
)
RIGHT = "def product_grads(a, b):\n" + BODY

# an answer that calls times(), a helper another cell defines
USES_TIMES = (
    "def product_grads(a, b):\n"
    "    a = a.detach().clone().requires_grad_()\n"
    "    b = b.detach().clone().requires_grad_()\n"
    "    c = times(a, b)\n"
    "    c.retain_grad()\n"
    "    (c**2).sum().backward()\n"
    "    return a.grad, b.grad, c.grad\n"
)

# name -> (a cell the learner added above the exercise or None, the exercise's cell, refused)
ANSWERS: dict[str, tuple[str | None, str, bool]] = {
    "getattr_no_grad": (
        None,
        'def product_grads(a, b):\n    with getattr(torch, "no_grad")():\n        pass\n' + BODY,
        True,
    ),
    "import_warnings": (
        None,
        "import warnings\n\n"
        "def product_grads(a, b):\n"
        "    a = a.detach().clone().requires_grad_()\n"
        "    b = b.detach().clone().requires_grad_()\n"
        "    with warnings.catch_warnings():\n"
        "        c = a * b\n"
        "    c.retain_grad()\n"
        "    (c**2).sum().backward()\n"
        "    return a.grad, b.grad, c.grad\n",
        True,
    ),
    "stray_import_beside_a_right_answer": (None, "import os\n\n" + RIGHT, True),
    "refused_helper_in_a_cell_of_its_own": (
        "import warnings\n\ndef times(a, b):\n    with warnings.catch_warnings():\n"
        "        return a * b\n",
        USES_TIMES,
        True,
    ),
    "private_module_state": (
        None,
        "def product_grads(a, b):\n    hooks = torch.nn.Linear(1, 1)._forward_hooks\n" + BODY,
        True,
    ),
    # what the policy accepts
    "right": (None, RIGHT, False),
    "operator_as_a_function": (
        None,
        "import operator\n\n" + RIGHT.replace("a * b", "operator.mul(a, b)"),
        False,
    ),
    "alias_of_a_helper": (None, "def _grads(a, b):\n" + BODY + "\nproduct_grads = _grads\n", False),
    "helper_in_a_cell_of_its_own": (
        "def times(a, b):\n    return a * b\n",
        USES_TIMES,
        False,
    ),
    # issue 33: a global module hook, removed by its handle, and torch.nn.modules' members
    "global_module_hook_removed": (
        None,
        "from torch.nn.modules.module import register_module_forward_hook\n\n"
        "def product_grads(a, b):\n"
        "    seen = []\n"
        "    handle = register_module_forward_hook(lambda m, i, o: seen.append(m))\n"
        "    try:\n"
        "        a = a.detach().clone().requires_grad_()\n"
        "        b = b.detach().clone().requires_grad_()\n"
        "        c = torch.nn.modules.linear.Identity()(a * b)\n"
        "        c.retain_grad()\n"
        "        (c**2).sum().backward()\n"
        "    finally:\n"
        "        handle.remove()\n"
        "    return a.grad, b.grad, c.grad\n",
        False,
    ),
    "nn_modules_import": (
        None,
        "from torch.nn.modules import Identity\n\n"
        "def product_grads(a, b):\n"
        "    a = a.detach().clone().requires_grad_()\n"
        "    b = b.detach().clone().requires_grad_()\n"
        "    c = Identity()(a * b)\n"
        "    c.retain_grad()\n"
        "    (c**2).sum().backward()\n"
        "    return a.grad, b.grad, c.grad\n",
        False,
    ),
}
# Not the policy's: a global hook a cell left registered fails the check in both views.
HOOK_LEFT_BEHIND = (
    "handle = torch.nn.modules.module.register_module_forward_hook(lambda m, i, o: None)\n",
    RIGHT,
)


def _notebook(extra: str | None, answer: str) -> nbformat.NotebookNode:
    """The learner notebook with ``answer`` (and ``extra`` above it), without the lesson's
    demonstrations: no verdict depends on them, and each answer runs in a kernel of its own."""
    nb = exercises_only(submission(NOTEBOOKS / "en" / f"{LESSON}.ipynb", {EXERCISE: answer}))
    if extra is not None:
        at = next(i for i, c in enumerate(nb.cells) if _grade_id(c) == EXERCISE)
        nb.cells.insert(at, nbformat.v4.new_code_cell(extra))
    return nb


def _grade_id(cell) -> str | None:
    return cell.metadata.get("nbgrader", {}).get("grade_id")


def _kernel_outcome(nb: nbformat.NotebookNode) -> tuple[bool, str]:
    """Run the notebook from the top to the exercise's test cell, as a learner does;
    whether that cell passed and what it printed."""
    from nbclient import NotebookClient

    end = next(i for i, c in enumerate(nb.cells) if _grade_id(c) == TESTS)
    nb.cells = nb.cells[: end + 1]
    NotebookClient(
        nb, timeout=300, kernel_name="python3", allow_errors=True, shutdown_kernel="immediate"
    ).execute()
    outputs = nb.cells[end].outputs
    text = "\n".join(
        o.get("text", "") + o.get("evalue", "") + "\n".join(o.get("traceback", [])) for o in outputs
    )
    return not any(o.get("output_type") == "error" for o in outputs), text


def _all_answers() -> dict[str, tuple[str | None, str, bool]]:
    return {**ANSWERS, "hook_left_behind": (*HOOK_LEFT_BEHIND, False)}


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory, make_course):
    """Each answer's kernel outcome, and the course graded with every answer as a learner."""
    kernel = {
        name: _kernel_outcome(_notebook(extra, code))
        for name, (extra, code, _) in _all_answers().items()
    }
    root = make_course(tmp_path_factory.mktemp("one-verdict") / "course")
    for name, (extra, code, _) in _all_answers().items():
        submit(root, name, LESSON, _notebook(extra, code))
    result = subprocess.run(
        [str(BIN / "course-grade"), "grade", str(root), LESSON, "--workers", "2"],
        env=venv_env(),
        capture_output=True,
        text=True,
        timeout=1500,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    graded = {r.student: r for r in records.load(root, LESSON)}
    return kernel, root, graded


@pytest.mark.notebooks
@pytest.mark.parametrize("name", list(ANSWERS))
def test_the_check_cell_and_the_grader_give_the_same_verdict(outcomes, name):
    kernel, root, graded = outcomes
    refused = ANSWERS[name][2]
    passed, text = kernel[name]
    earned = points(root, LESSON, name)[TESTS]
    forbidden = [f for f in graded[name].flags if f["kind"] == "forbidden construct"]
    assert passed == (earned > 0), (name, text, earned)
    assert passed == (not refused), (name, text)
    if refused:
        assert REFUSED_LINE in text, text
        assert forbidden, graded[name].flags
        # the kernel names the line the grader flags
        details = [f["detail"].split(": ", 1)[1] for f in forbidden]
        assert any(d in text for d in details), (details, text)
    else:
        assert not forbidden, forbidden
        assert graded[name].status == "graded", graded[name].reason


@pytest.mark.notebooks
def test_a_global_hook_left_registered_fails_in_both_views(outcomes):
    kernel, root, graded = outcomes
    passed, text = kernel["hook_left_behind"]
    assert not passed and HOOK_LEFT in text, text
    assert points(root, LESSON, "hook_left_behind")[TESTS] == 0
    assert not [f for f in graded["hook_left_behind"].flags if f["kind"] == "forbidden construct"]


# -- the kernel's reading of a history, without a kernel --------------------------------------


def _template(lesson: str = LESSON):
    known = graded_code.template(lesson[:2], "en")
    assert known is not None
    return known


def _instructor_cells() -> list[str]:
    nb = nbformat.read(str(NOTEBOOKS / "en" / f"{LESSON}.ipynb"), as_version=4)
    return [c.source for c in nb.cells if c.cell_type == "code" and not _grade_id(c)]


def _refused(history: list[str], number: int | None = None) -> list[str]:
    notebook = graded_code.Notebook(["", *history], _template())
    return [r.violation.describe().en for r in notebook.refusals("product_grads", number)]


def test_an_edited_cell_counts_in_its_last_version():
    setup = _instructor_cells()[0]
    wrong = "def product_grads(a, b):\n    return vars(a)\n"
    assert _refused([setup, wrong]) == ["line 2: vars (a builtin graded code may not use)"]
    assert _refused([setup, wrong, RIGHT]) == []


def test_a_helper_cell_counts_and_an_unrelated_cell_does_not():
    setup = _instructor_cells()[0]
    helper = "import string\n\ndef times(a, b):\n    return a * b\n"
    unrelated = "import os\nprint(os.getcwd())\n"
    uses = "def product_grads(a, b):\n    return times(a, b)\n"
    assert _refused([setup, helper, uses]) == ["line 1: import string"]
    assert _refused([setup, unrelated, RIGHT]) == []


def test_the_instructors_cells_are_exempt_and_their_course_names_refused():
    cells = _instructor_cells()  # `import autograder`, `graph`, `saved_bytes`, demos
    assert _refused([*cells, RIGHT]) == []
    uses_the_course = "def product_grads(a, b):\n    return saved_bytes(a, b)\n"
    assert _refused([*cells, uses_the_course]) == ["line 2: saved_bytes (the course's own code)"]


def test_the_functions_own_cell_is_read_when_another_name_points_to_it():
    setup = _instructor_cells()[0]
    helper = "def impl(a, b):\n    return vars(a)\n"
    alias = "product_grads = impl\n"
    assert _refused([setup, helper, alias], number=2) == [
        "line 2: vars (a builtin graded code may not use)"
    ]


# -- every catalogued answer: the kernel refuses it exactly when the grader's reading does ----


def _packs() -> list:
    """Per lesson, notebooks of answers: the n-th holds the n-th answer of every exercise
    (the official solution first, then the catalogue's), as test_catalogue_graded packs."""
    import importlib

    from conftest import SOLUTIONS

    from autograder import course

    found = []
    for source in course.lesson_sources(SOLUTIONS):
        lesson = source.parent.name
        catalogue = importlib.import_module(f"catalog.lesson{lesson[:2]}")
        answers: dict[str, list[str]] = {
            gid: [cell.source]
            for gid, cell in graded_cells(source).items()
            if cell.cell_type == "code" and not gid.endswith("_tests")
        }
        for entries in (catalogue.WRONG, catalogue.RIGHT):
            for gid, listed in entries.items():
                answers.setdefault(gid, []).extend(a.code for a in listed)
        for n in range(max(map(len, answers.values()))):
            pack = {gid: codes[n] for gid, codes in answers.items() if n < len(codes)}
            found.append(pytest.param(lesson, pack, id=f"{lesson[:2]}-{n:02d}"))
    return found


@pytest.mark.parametrize(("lesson", "answers"), _packs())
def test_every_catalogued_answer_is_refused_in_the_kernel_exactly_when_grading_refuses_it(
    lesson, answers
):
    from conftest import SOLUTIONS

    from autograder import bilingual
    from autograder.grader.pipeline import verdicts

    nb = submission(NOTEBOOKS / "en" / f"{lesson}.ipynb", answers)
    exempt = verdicts.instructor_sources(bilingual.read(SOLUTIONS / lesson / f"{lesson}.ipynb"))
    flags, _, _ = verdicts.read_notebook(nb, exempt)
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    notebook = graded_code.Notebook(["", *(c.source for c in code_cells)], _template(lesson))
    differ = {}
    for grade_id in answers:
        graded = sorted(f["detail"] for f in flags if f["voids"] == [f"{grade_id}_tests"])
        number = 1 + next(i for i, c in enumerate(code_cells) if _grade_id(c) == grade_id)
        refused = notebook.refusals(grade_id.split("_", 1)[1], number)
        kernel = sorted(r.violation.describe().en for r in refused)
        if kernel != graded:
            differ[grade_id] = (kernel, graded)
    assert not differ


def _routes() -> list:
    from test_policy import ACCEPTED, ROUTES

    refused = [pytest.param(code, id=f"refused-{name}") for name, (code, *_) in ROUTES.items()]
    return refused + [pytest.param(code, id=f"accepted-{name}") for name, code in ACCEPTED.items()]


@pytest.mark.parametrize("code", _routes())
def test_every_policy_route_in_an_exercise_cell_gets_the_graders_verdict_in_the_kernel(code):
    """test_policy's routes out and its accepted forms, each written in exercise 1's cell."""
    test_every_catalogued_answer_is_refused_in_the_kernel_exactly_when_grading_refuses_it(
        LESSON, {EXERCISE: code}
    )


def test_the_kernels_refusals_read_in_chinese():
    """Each refused route's feedback in Chinese cites code and names, no English prose."""
    import ast

    from language_lint import english_words
    from test_policy import ROUTES
    from test_reasons_language import NAMES, _code_names

    from autograder.grader.pipeline import policy

    cells = _instructor_cells()
    said_some = 0
    for name, (code, *_) in ROUTES.items():
        notebook = graded_code.Notebook(["", *cells, code], _template())
        found = notebook.refusals("product_grads", len(cells) + 1)
        said_some += bool(found)  # a few routes need test_policy's own setup to be refused
        tree = policy.parse(code)
        known = _code_names([ast.unparse(tree)]) | NAMES | {"obj", "SomeClass", "x", "name"}
        for refusal in found:
            said = refusal.result().message("zh")
            assert english_words(said, known, quoted_is_code=True) == [], (name, said)
    assert said_some > 0.9 * len(ROUTES)


GLOBAL_HOOK_FEATURES = """
def extract_features(model, names, x):
    wanted = {}
    for name, module in model.named_modules():
        if name in names:
            wanted.setdefault(module, []).append(name)
    out = {}

    def keep(module, inputs, output):
        for name in wanted.get(module, []):
            out[name] = output.detach().cpu().clone()

    handle = torch.nn.modules.module.register_module_forward_hook(keep)
    try:
        model(x)
    finally:
        handle.remove()
    return out
"""


def test_a_lesson_05_answer_with_a_global_module_hook_is_graded_and_passes():
    """Issue 33: the right answers refused before used a global module hook, removed."""
    from conftest import SOLUTIONS
    from lesson_cells import run

    from autograder.common.protocol import MODE

    answers = {"ex1_extract_features": GLOBAL_HOOK_FEATURES}
    test_every_catalogued_answer_is_refused_in_the_kernel_exactly_when_grading_refuses_it(
        "05_hooks", answers
    )
    nb = submission(NOTEBOOKS / "en" / "05_hooks.ipynb", answers)
    cell = next(c for c in nb.cells if _grade_id(c) == "ex1_extract_features")
    tree = graded_code.policy.parse(cell.source)
    assert graded_code.policy.violations(tree, graded_code.policy.imported_names([tree])) == []
    tests = graded_cells(SOLUTIONS / "05_hooks" / "05_hooks.ipynb")["ex1_extract_features_tests"]
    MODE.quiet = True
    try:
        run(tests.source, run(GLOBAL_HOOK_FEATURES))  # the visible and hidden checks pass
    finally:
        MODE.quiet = False


def test_a_chinese_notebooks_instructor_cells_are_recognised_too():
    nb = nbformat.read(str(NOTEBOOKS / "zh" / f"{LESSON}.ipynb"), as_version=4)
    cells = [c.source for c in nb.cells if c.cell_type == "code" and not _grade_id(c)]
    known = graded_code.template("01", "zh")
    assert 'autograder.setup("zh")' in cells[0]
    uses_device = "def product_grads(a, b):\n    return torch.zeros(1, device=DEVICE)\n"
    notebook = graded_code.Notebook(["", *cells, uses_device], known)
    assert notebook.refusals("product_grads", len(cells) + 1) == []
    wrong = "def product_grads(a, b):\n    return type(a)\n"
    notebook = graded_code.Notebook(["", *cells, wrong], known)
    (refusal,) = notebook.refusals("product_grads", len(cells) + 1)
    said = refusal.result().message("zh")
    assert "`return type(a)`" in said and "isinstance" in said, said
