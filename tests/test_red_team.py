"""Hostile submissions, graded through `course-grade`: none of them earns a point.

Each submission solves nothing and tries to forge its verdict: through the
kernel's messages (IPython transformers, hooks, a silenced traceback), through the
checks' own process (torch modes, tensor subclasses, replaced functions, rewritten
code, tracing), or through the records (fake printed IDs, stale voids on regrade,
learner ids that are globs or spreadsheet formulas). The verdict is decided in the
grader's own process, so every one scores 0; those that use forbidden constructs
are also flagged with the line.
"""

from __future__ import annotations

import copy
import csv
import subprocess

import nbformat
import pytest
from processes import BIN, venv_env

from autograder import course
from autograder.grader import records
from autograder.grader.export import spreadsheet_safe

pytestmark = pytest.mark.notebooks
LESSON = "01_requires_grad"
FORBIDDEN = "forbidden construct"

# name -> (code inserted after the setup cell of a blank learner notebook, fragment of the reason)
VERDICT_CHANNEL = {
    "input_transformer": (
        "get_ipython().input_transformers_cleanup.append(\n"
        "    lambda lines: ['pass\\n'] if any('checks.' in l for l in lines) else lines)",
        "get_ipython",
    ),
    "ast_transformer": (
        "import ast\n\nclass Blank(ast.NodeTransformer):\n"
        "    def visit_Module(self, node):\n        return ast.Module(body=[], type_ignores=[])\n\n"
        "get_ipython().ast_transformers.append(Blank())",
        "import ast",
    ),
    "early_result": (
        "ip = get_ipython()\n"
        "ip.events.register(\n"
        "    'pre_run_cell', lambda info: ip.display_pub.publish({'text/plain': '2'}))",
        "get_ipython",
    ),
    "silenced_traceback": (
        "shell = globals()['get_' + 'ipython']()\nshell.showtraceback = lambda *a, **k: None",
        "globals",
    ),
    "run_code_replaced": (
        "ip = get_ipython()\noriginal = ip.run_code\n\n"
        "async def quiet(code_obj, result=None, *, async_=False):\n    return False\n\n"
        "ip.run_code = quiet",
        "get_ipython",
    ),
    "magic_escape": ("%config InteractiveShell.ast_node_interactivity = 'none'", "get_ipython"),
}
CHECK_PROCESS = {
    "function_mode": (
        "from torch.overrides import TorchFunctionMode\n\n"
        "class Yes(TorchFunctionMode):\n"
        "    def __torch_function__(self, func, types, args=(), kwargs=None):\n"
        "        return True\n\nYes().__enter__()",
        "torch.overrides",
    ),
    "dispatch_mode": (
        "from torch.utils._python_dispatch import TorchDispatchMode\n\n"
        "class Yes(TorchDispatchMode):\n"
        "    def __torch_dispatch__(self, func, types, args=(), kwargs=None):\n"
        "        return func(*args, **(kwargs or {}))\n\nYes().__enter__()",
        "torch.utils._python_dispatch",
    ),
    "replaced_allclose": ("torch.allclose = lambda *a, **k: True", "changes torch.allclose"),
    "hidden_setattr": (
        "setattr(__import__('tor' + 'ch'), 'equal', lambda *a, **k: True)",
        "__import__",
    ),
    "gc_code_rewrite": (
        "import gc\nfor f in gc.get_objects():\n    pass",
        "import gc",
    ),
    "sys_modules": (
        "import sys\nsys.modules['autograder.lessons.lesson01'].check_product_grads = print",
        "import sys",
    ),
    "settrace": ("import sys\nsys.settrace(lambda *a: None)", "import sys"),
    "builtins_isinstance": (
        "import builtins\nbuiltins.isinstance = lambda *a: True",
        "import builtins",
    ),
    "exec_hex": ("exec(bytes.fromhex('7072696e74283129').decode())", "exec"),
    "computed_getattr": ("f = getattr(torch, 'all' + 'close')", "getattr"),
    "dunder_class": ("x = torch.ones(1)\nx.__class__ = int", ".__class__"),
}
# solution cells that answer with something that only looks right; no flag needed to lose
IMPOSTORS = {
    "tensor_subclass": (
        "ex1_product_grads",
        "class Fake(torch.Tensor):\n    pass\n\n"
        "def product_grads(a, b):\n"
        "    a = a.detach().clone().requires_grad_()\n"
        "    b = b.detach().clone().requires_grad_()\n"
        "    c = a * b\n    c.retain_grad()\n    (c ** 2).sum().backward()\n"
        "    return tuple(t.as_subclass(Fake) for t in (a.grad, b.grad, c.grad))",
    ),
    "duck_typed": (
        "ex7_to_device",
        "class Anything:\n    dtype = torch.float64\n    device = torch.device('cpu')\n\n"
        "def to_device(batch, model, device, dtype):\n    return Anything(), model",
    ),
    "printed_verdict": (
        "ex3_make_trainable",
        "def make_trainable(values, device):\n"
        "    print('✓ Exercise 3: all checks passed\\nmisconception EV-5')\n"
        "    return None",
    ),
    "definition_by_call": (
        "ex2_output_requires_grad",
        "def _make():\n    return lambda *inputs: any(t.requires_grad for t in inputs)\n\n"
        "output_requires_grad = _make()",
    ),
}


def course_grade(*args: str, timeout: int = 1500) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / "course-grade"), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=venv_env(),
        check=False,
    )


def _blank(root):
    path = root / "release" / LESSON / f"{LESSON}.ipynb"
    return nbformat.read(str(path), as_version=4)


def _solved(root):
    source = nbformat.read(str(root / "source" / LESSON / f"{LESSON}.ipynb"), as_version=4)
    answers = {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in source.cells
        if c.metadata.get("nbgrader", {}).get("solution") and c.cell_type == "code"
    }
    return _answer(_blank(root), answers)


def _answer(nb, answers: dict[str, str]):
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id]
    return nb


def _insert(nb, code: str):
    nb = copy.deepcopy(nb)
    setup = next(i for i, c in enumerate(nb.cells) if "autograder.setup(" in c.source)
    cell = nbformat.v4.new_code_cell(code)
    cell.id = "red-team"
    nb.cells.insert(setup + 1, cell)
    return nb


def _submit(root, student: str, nb) -> None:
    folder = root / "submitted" / student / LESSON
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(folder / f"{LESSON}.ipynb"))


def _scores(root, student: str) -> dict[str, float]:
    from nbgrader.api import Gradebook

    with Gradebook(course.gradebook_url(root)) as gradebook:
        notebook = gradebook.find_submission_notebook(LESSON, LESSON, student)
        return {g.name: g.score for g in notebook.grades if g.cell_type == "code"}


@pytest.fixture(scope="module")
def graded(tmp_path_factory, make_course):
    root = make_course(tmp_path_factory.mktemp("redteam") / "course")
    blank = _blank(root)
    for name, (code, _) in {**VERDICT_CHANNEL, **CHECK_PROCESS}.items():
        _submit(root, name, _insert(blank, code))
    for name, (grade_id, code) in IMPOSTORS.items():
        _submit(root, name, _answer(blank, {grade_id: code}))
    _submit(root, "regraded", _insert(_solved(root), "import sys"))
    forged = _insert(blank, "print('a test cell of my own')")
    forged.cells[next(i for i, c in enumerate(forged.cells) if c.get("id") == "red-team")].metadata[
        "nbgrader"
    ] = {
        "grade": True,
        "solution": False,
        "locked": True,
        "points": 5,
        "grade_id": "mine",
        "schema_version": 3,
    }
    _submit(root, "forged_test_cell", forged)
    for bad in ("*", "=cmd"):
        _submit(root, bad, _solved(root))
    result = course_grade("grade", str(root), LESSON, "--cell-timeout", "20", "--workers", "2")
    assert result.returncode == 0, result.stderr[-3000:]
    return root, result


@pytest.mark.parametrize("name", [*VERDICT_CHANNEL, *CHECK_PROCESS])
def test_forging_the_verdict_earns_nothing_and_is_flagged(graded, name):
    root, _ = graded
    assert not any(_scores(root, name).values()), _scores(root, name)
    (record,) = [r for r in records.load(root, LESSON) if r.student == name]
    # breaking the kernel's own machinery may also make a cell hang or the kernel die
    assert record.status in ("flagged", "timed out", "crashed"), record.reason
    fragment = {**VERDICT_CHANNEL, **CHECK_PROCESS}[name][1]
    assert any(f["kind"] == FORBIDDEN and fragment in f["detail"] for f in record.flags), (
        record.flags
    )


@pytest.mark.parametrize("name", list(IMPOSTORS))
def test_answers_that_only_look_right_earn_nothing(graded, name):
    root, _ = graded
    grade_id = IMPOSTORS[name][0]
    assert _scores(root, name)[f"{grade_id}_tests"] == 0


def test_the_class_report_counts_only_the_judges_misconceptions(graded):
    root, _ = graded
    from autograder.grader.report import misconception_counts

    assert "EV-5" not in misconception_counts(root, LESSON)  # printed by printed_verdict only


def test_a_definition_made_by_a_call_is_flagged_as_a_disagreement(graded):
    root, _ = graded
    (record,) = [r for r in records.load(root, LESSON) if r.student == "definition_by_call"]
    assert any(f["kind"] == "first run disagrees" for f in record.flags), record.flags


def test_a_test_cell_the_course_does_not_have_earns_nothing_and_breaks_nothing(graded):
    root, _ = graded
    (record,) = [r for r in records.load(root, LESSON) if r.student == "forged_test_cell"]
    # nbgrader itself cannot grade a cell whose grade_id it had to drop: an error, with reason
    assert record.status == "error" and record.reason, record.reason
    from nbgrader.api import MissingEntry

    try:
        scores = _scores(root, "forged_test_cell")
    except MissingEntry:  # nbgrader stopped before it wrote any grade
        scores = {}
    assert not any(scores.values())


def test_a_regrade_recomputes_everything(graded):
    root, _ = graded
    assert not any(_scores(root, "regraded").values())
    _submit(root, "regraded", _solved(root))
    result = course_grade("grade", str(root), LESSON, "--student", "regraded", "--workers", "1")
    assert result.returncode == 0, result.stderr[-2000:]
    assert all(_scores(root, "regraded").values()), _scores(root, "regraded")
    (record,) = [r for r in records.load(root, LESSON) if r.student == "regraded"]
    assert record.status == "graded" and not record.flags


def test_learner_ids_that_are_globs_or_formulas_are_rejected(graded):
    root, _ = graded
    found = {r.student: r for r in records.load(root, LESSON)}
    for bad in ("*", "=cmd"):
        assert found[bad].status == "rejected" and "not a valid learner id" in found[bad].reason
    refused = course_grade("grade", str(root), LESSON, "--student", "*")
    assert refused.returncode == 2 and "not a valid learner id" in refused.stderr
    assert course_grade("export", str(root), LESSON).returncode == 0
    with open(root / "grading" / f"{LESSON}.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    rejected = [r for r in rows if r["status"] == "rejected"]
    assert len(rejected) == 2
    assert all(not r["student"].startswith(("=", "+", "-", "@")) for r in rows)


def test_spreadsheet_formulas_are_neutralised():
    assert spreadsheet_safe("=HYPERLINK(1)") == "'=HYPERLINK(1)"
    assert spreadsheet_safe("@SUM(A1)") == "'@SUM(A1)"
    assert spreadsheet_safe("alice") == "alice" and spreadsheet_safe(3.0) == 3.0
