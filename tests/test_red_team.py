"""Hostile submissions, graded through `course-grade` as root and as an unprivileged user.

Each hostile submission solves nothing and tries to forge its verdict: through the
kernel's messages (IPython transformers, hooks, a silenced traceback), through the
checks' own process (torch modes, tensor subclasses, replaced functions, rewritten
code, tracing, code that runs when a definition is made), or through the records
(fake printed IDs, stale voids on regrade, learner ids that are globs or spreadsheet
formulas). The verdict is decided in the grader's own process, so every one scores 0;
those that step outside the learner-code policy are also flagged with the line, and
cost only their own exercise. Correct answers written as module-level objects and
aliases earn their points, as they do in self-study.
"""

from __future__ import annotations

import copy
import csv
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from nbgrader_course import exercises_only, points, submit
from processes import venv_env
from test_sandbox import IS_ROOT, REPO, AsUser

from autograder.grader.pipeline import records
from autograder.grader.reports.export import spreadsheet_safe

pytestmark = pytest.mark.notebooks
LESSON = "01_requires_grad"
FORBIDDEN = "forbidden construct"
WRONG_EX1 = "\n    return a, b, a * b"  # a product_grads body that earns nothing on its own

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
    # issue 34: torch.backends.cudnn hands unknown names to the module it wraps (torch, sys,
    # os, ...); the walk used to end there unchecked. Reach sys.modules through operator,
    # then make every check observe with the reference instead of the learner's function.
    "cudnn_sys_modules": (
        "op = torch.backends.cudnn.torch.nn.modules.container.operator\n"
        'modules = op.attrgetter("sys.modules")(torch.backends.cudnn)\n'
        'oracle = modules["autograder.common.oracle"]\n'
        "observe = oracle.Spec.observe\n"
        "oracle.Spec.observe = lambda self, fn: observe(self, None)",
        "container.operator used as a value",
    ),
    "attrgetter_sys_modules": (
        'modules = torch.nn.modules.container.operator.attrgetter("sys.modules")(torch.nn)\n'
        'oracle = modules["autograder.common.oracle"]\n'
        "oracle.Spec.observe = lambda self, fn: None",
        "attribute names other than public names",
    ),
    "cudnn_patched_equal": (
        "T = torch.backends.cudnn.torch\nT.equal = lambda *a, **k: True",
        "torch.backends.cudnn.torch used as a value",
    ),
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
}

# Code that runs when a definition is made, reaching __import__ or the course (issue 23's
# nine routes, and more): name -> (the ex1 solution cell, its line, fragment of the flag)
DEFINITION_TIME = {
    "getattr_constant_dunder": (
        'def product_grads(a, b, s=getattr(print, "__self__")):' + WRONG_EX1,
        1,
        "getattr",
    ),
    "alias_of_the_instructors_import": (
        "def product_grads(a, b, g=autograder):" + WRONG_EX1,
        1,
        "autograder",
    ),
    "operator_attrgetter": (
        "import operator\n\n"
        'def product_grads(a, b, s=operator.attrgetter("__self__")(print)):' + WRONG_EX1,
        3,
        "attribute names other than public names",
    ),
    "string_formatter": (
        "import string\n\n"
        'def product_grads(a, b, f=string.Formatter().get_field("0.__self__", [print], {})):'
        + WRONG_EX1,
        1,
        "import string",
    ),
    "functools_reduce": (
        "import functools\n\n"
        'def product_grads(a, b, s=functools.reduce(getattr, ["__self__"], print)):' + WRONG_EX1,
        3,
        "getattr",
    ),
    "match_keyword_pattern": (
        "match print:\n    case object(__self__=b):\n        pass\n\n"
        "def product_grads(a, b):" + WRONG_EX1,
        2,
        "__self__",
    ),
    "numpy_ctypeslib": (
        "import numpy as np\n\ndef product_grads(a, b, c=np.ctypeslib.ctypes):" + WRONG_EX1,
        3,
        "ctypes",
    ),
    "type_three_arguments": (
        'T = type\nP = T("P", (), {"f": print})\n\ndef product_grads(a, b):' + WRONG_EX1,
        1,
        "type",
    ),
    "map_getattr": (
        'def product_grads(a, b, s=list(map(getattr, [print], ["__self__"]))):' + WRONG_EX1,
        1,
        "getattr",
    ),
    "decorator": (
        "@print\ndef product_grads(a, b):" + WRONG_EX1,
        1,
        "decorator",
    ),
    "class_body": (
        "class Forge:\n    found = print.__self__\n\ndef product_grads(a, b):" + WRONG_EX1,
        2,
        "__self__",
    ),
    "class_patched": (
        "T = torch.Tensor\nT.clone = lambda self: self\n\ndef product_grads(a, b):" + WRONG_EX1,
        1,
        "torch.Tensor used as a value",
    ),
    "input_history": ("print(In)\n\ndef product_grads(a, b):" + WRONG_EX1, 1, "In"),
}

# Correct answers in the forms self-study accepts (issue 22): module-level objects,
# aliases, computed constants, a function built by a call, the setup cell's DEVICE.
MODULE_LEVEL = {
    "ex1_product_grads": (
        "def my_product_grads(a, b):\n"
        "    a = a.detach().clone().requires_grad_()\n"
        "    b = b.detach().clone().requires_grad_()\n"
        "    c = a * b\n    c.retain_grad()\n    (c**2).sum().backward()\n"
        "    return a.grad, b.grad, c.grad\n\n"
        "product_grads = my_product_grads"
    ),
    "ex2_output_requires_grad": (
        "def _make():\n    return lambda *inputs: any(t.requires_grad for t in inputs)\n\n"
        "output_requires_grad = _make()"
    ),
    "ex3_make_trainable": (
        "FLOAT = torch.float32\n\ndef make_trainable(values, device):\n"
        "    return torch.tensor(values, dtype=FLOAT, device=device, requires_grad=True)"
    ),
    "ex4_per_batch_grads": (
        "ONE = 2 - 1.0\n\ndef per_batch_grads(w, batches):\n    grads = []\n"
        "    for x in batches:\n        w.grad = None\n"
        "        (((x @ w) ** 2).mean() * ONE).backward()\n"
        "        grads.append(w.grad.clone())\n    return grads"
    ),
    "ex5_backward_seed": "backward_seed = torch.ones_like",
    "ex6_finetune_last_layer": (
        "criterion = torch.nn.MSELoss()\n\ndef finetune_last_layer(model, x, target, lr):\n"
        "    model[:-1].requires_grad_(False)\n"
        "    trainable = [p for p in model.parameters() if p.requires_grad]\n"
        "    optimizer = torch.optim.SGD(trainable, lr=lr)\n"
        "    optimizer.zero_grad()\n    loss = criterion(model(x), target)\n"
        "    loss.backward()\n    optimizer.step()\n    return loss.item()"
    ),
    "ex7_to_device": (
        "def to_device(batch, model, device=DEVICE, dtype=torch.float32):\n"
        "    batch = batch.to(device=device, dtype=dtype)\n"
        "    model.to(device=device, dtype=dtype)\n    return batch, model"
    ),
}


# Bad input costs one cell, never the notebook (issue 34): a right answer with a 40,000-term
# expression after it (Python's parser runs out of recursion), and cells that flood the
# notebook with images, HTML, JSON and display updates.
DEEP_CELL = "ex2_output_requires_grad"
FORTY_THOUSAND_TERMS = "\n\nx = " + "1+" * 40_000 + "1"
FLOOD = (
    "import base64\n\nfrom IPython.display import HTML, JSON, Image, display\n\n"
    'PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk'
    '+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")\n'
    "for _ in range(6):\n    display(Image(data=PNG + bytes(500_000), format='png'))\n"
    "display(HTML('<p>' + 'x' * 1_500_000 + '</p>'))\n"
    "display(JSON({'x': 'y' * 1_500_000}))\n"
    "handle = display(HTML('small'), display_id=True)\n"
    "for _ in range(3):\n    handle.update(HTML('<b>' + 'z' * 1_500_000 + '</b>'))\n"
    "print('w' * 3_000_000)"
)
FLOOD_CELLS = 10  # about 13 MB each: 130 MB asked for, past the 64 MiB a submission may be


@dataclass
class Graded:
    """A class graded once by one identity: the course, and how to run `course-grade` as it."""

    root: Path
    wrapper: list[str]
    env: dict[str, str]

    def run(self, *args: str, timeout: int = 1500) -> subprocess.CompletedProcess:
        command = [*self.wrapper, sys.executable, "-m", "autograder.grader.cli", *args]
        return subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, env=self.env, check=False
        )


def _blank(root):
    """The learner notebook as released, without its demonstrations (no attack needs them)."""
    path = root / "release" / LESSON / f"{LESSON}.ipynb"
    return exercises_only(nbformat.read(str(path), as_version=4))


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


def _solution_cells(nb):
    return [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")]


def _flooded(nb):
    """``nb`` with FLOOD_CELLS cells of the learner's own that flood it, after the setup."""
    nb = copy.deepcopy(nb)
    setup = next(i for i, c in enumerate(nb.cells) if "autograder.setup(" in c.source)
    for k in range(FLOOD_CELLS):
        cell = nbformat.v4.new_code_cell(FLOOD)
        cell.id = f"flood-{k}"
        nb.cells.insert(setup + 1 + k, cell)
    return nb


@pytest.fixture(scope="module", params=["root", "user"])
def graded(request, make_course):
    """The class graded once per identity, as test_sandbox.py grades its own."""
    if request.param == "root" and not IS_ROOT:
        pytest.skip("skipped: grading as root needs root")
    if (
        request.param == "user"
        and IS_ROOT
        and not (shutil.which("useradd") and shutil.which("setpriv"))
    ):
        pytest.skip("skipped: useradd and setpriv are needed to grade as another user")
    user = AsUser() if request.param == "user" and IS_ROOT else None  # may skip
    base = Path(tempfile.mkdtemp(prefix="course-redteam-", dir="/tmp"))
    try:
        os.chmod(base, 0o755)
        root = make_course(base / "course")
        blank = _blank(root)
        for name, (code, _) in {**VERDICT_CHANNEL, **CHECK_PROCESS}.items():
            submit(root, name, LESSON, _insert(blank, code))
        for name, (grade_id, code) in IMPOSTORS.items():
            submit(root, name, LESSON, _answer(blank, {grade_id: code}))
        for name, (code, _, _) in DEFINITION_TIME.items():
            submit(root, name, LESSON, _answer(blank, {"ex1_product_grads": code}))
        submit(root, "module_level", LESSON, _answer(blank, MODULE_LEVEL))
        solved = _solved(root)
        first = next(c for c in solved.cells if c.metadata.get("nbgrader", {}).get("solution"))
        submit(
            root,
            "regraded",
            LESSON,
            _answer(solved, {"ex1_product_grads": first.source + "\nimport sys"}),
        )
        forged = _insert(blank, "print('a test cell of my own')")
        forged.cells[
            next(i for i, c in enumerate(forged.cells) if c.get("id") == "red-team")
        ].metadata["nbgrader"] = {
            "grade": True,
            "solution": False,
            "locked": True,
            "points": 5,
            "grade_id": "mine",
            "schema_version": 3,
        }
        submit(root, "forged_test_cell", LESSON, forged)
        right = {c.metadata["nbgrader"]["grade_id"]: c.source for c in _solution_cells(solved)}
        deep = _answer(solved, {DEEP_CELL: right[DEEP_CELL] + FORTY_THOUSAND_TERMS})
        submit(root, "deep_cell", LESSON, deep)
        submit(root, "output_flood", LESSON, _flooded(solved))
        for bad in ("*", "=cmd"):
            submit(root, bad, LESSON, solved)
        graded = Graded(root, [], venv_env(PYTHONPATH=str(REPO)))
        if user:
            subprocess.run(["chown", "-R", user.name, str(base)], check=True)
            graded = Graded(root, user.wrapper(), dict(graded.env, HOME=str(base)))
        # 5 s a cell: lesson 01's slowest notebook here, the output flood, takes 1.4 s to run
        # all its cells; builtins_isinstance leaves its kernel spinning until the limit (a
        # "timed out" its test allows), a core busy that long in each identity.
        limit = ("--cell-timeout", "5")
        result = graded.run("grade", str(root), LESSON, *limit, "--workers", "2")
        # grade exits 1 naming the submissions that end in error: only the forged test cell
        errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
        assert [e.split("/")[0] for e in errors] == ["error: forged_test_cell"], result.stderr
        assert result.returncode == 1, result.stderr[-3000:]
        yield graded
    finally:
        if user:
            user.close()
        shutil.rmtree(base, ignore_errors=True)


def _record(root, student: str):
    (record,) = [r for r in records.load(root, LESSON) if r.student == student]
    return record


@pytest.mark.parametrize("name", [*VERDICT_CHANNEL, *CHECK_PROCESS])
def test_forging_the_verdict_earns_nothing_and_is_flagged(graded, name):
    assert not any(points(graded.root, LESSON, name).values()), points(graded.root, LESSON, name)
    record = _record(graded.root, name)
    # breaking the kernel's own machinery may also make a cell hang or the kernel die
    assert record.status in ("flagged", "timed out", "crashed"), record.reason
    fragment = {**VERDICT_CHANNEL, **CHECK_PROCESS}[name][1]
    assert any(f["kind"] == FORBIDDEN and fragment in f["detail"] for f in record.flags), (
        record.flags
    )


@pytest.mark.parametrize("name", list(DEFINITION_TIME))
def test_code_run_when_a_definition_is_made_earns_nothing_and_is_flagged(graded, name):
    _, line, fragment = DEFINITION_TIME[name]
    assert points(graded.root, LESSON, name)["ex1_product_grads_tests"] == 0
    record = _record(graded.root, name)
    assert record.status == "flagged", record.reason
    mine = [f for f in record.flags if f["kind"] == FORBIDDEN and fragment in f["detail"]]
    assert any(
        f["cell"] == "ex1_product_grads"
        and f["detail"].startswith(f"line {line}:")
        and f["voids"] == ["ex1_product_grads_tests"]
        and f["detail"] in record.reason
        for f in mine
    ), record.flags


@pytest.mark.parametrize("name", list(IMPOSTORS))
def test_answers_that_only_look_right_earn_nothing(graded, name):
    grade_id = IMPOSTORS[name][0]
    assert points(graded.root, LESSON, name)[f"{grade_id}_tests"] == 0


def test_the_class_report_counts_only_the_judges_misconceptions(graded):
    from autograder.grader.reports.report import misconception_counts

    assert "EV-5" not in misconception_counts(graded.root, LESSON)  # printed_verdict only


def test_module_level_objects_and_aliases_earn_their_points(graded):
    scores = points(graded.root, LESSON, "module_level")
    assert all(scores[f"{grade_id}_tests"] > 0 for grade_id in MODULE_LEVEL), scores
    record = _record(graded.root, "module_level")
    assert record.status == "graded" and not record.flags, record.reason


def test_a_test_cell_the_course_does_not_have_earns_nothing_and_breaks_nothing(graded):
    record = _record(graded.root, "forged_test_cell")
    # nbgrader itself cannot grade a cell whose grade_id it had to drop: an error, with reason
    assert record.status == "error" and record.reason, record.reason
    from nbgrader.api import MissingEntry

    try:
        scores = points(graded.root, LESSON, "forged_test_cell")
    except MissingEntry:  # nbgrader stopped before it wrote any grade
        scores = {}
    assert not any(scores.values())


def test_a_violation_costs_only_its_own_exercise_and_a_regrade_recomputes_everything(graded):
    root = graded.root
    scores = points(root, LESSON, "regraded")
    assert scores.pop("ex1_product_grads_tests") == 0
    assert all(scores.values()), scores  # the other exercises keep their points
    record = _record(root, "regraded")
    assert record.status == "flagged"
    (flag,) = record.flags
    assert flag["cell"] == "ex1_product_grads" and flag["voids"] == ["ex1_product_grads_tests"]
    assert flag["detail"].startswith("line ") and flag["detail"].endswith(": import sys")
    submit(root, "regraded", LESSON, _solved(root))
    result = graded.run("grade", str(root), LESSON, "--student", "regraded", "--workers", "1")
    assert result.returncode == 0, result.stderr[-2000:]
    assert all(points(root, LESSON, "regraded").values()), points(root, LESSON, "regraded")
    record = _record(root, "regraded")
    assert record.status == "graded" and not record.flags


def test_learner_ids_that_are_globs_or_formulas_are_rejected(graded):
    root = graded.root
    found = {r.student: r for r in records.load(root, LESSON)}
    for bad in ("*", "=cmd"):
        assert found[bad].status == "rejected" and "not a valid learner id" in found[bad].reason
    refused = graded.run("grade", str(root), LESSON, "--student", "*")
    assert refused.returncode == 2 and "not a valid learner id" in refused.stderr
    assert graded.run("export", str(root), LESSON).returncode == 0
    with open(root / "grading" / f"{LESSON}.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    rejected = [r for r in rows if r["status"] == "rejected"]
    assert len(rejected) == 2
    assert all(not r["student"].startswith(("=", "+", "-", "@")) for r in rows)


def test_spreadsheet_formulas_are_neutralised():
    assert spreadsheet_safe("=HYPERLINK(1)") == "'=HYPERLINK(1)"
    assert spreadsheet_safe("@SUM(A1)") == "'@SUM(A1)"
    assert spreadsheet_safe("alice") == "alice" and spreadsheet_safe(3.0) == 3.0


def test_a_cell_too_deep_to_read_costs_only_that_cell(graded):
    """A valid cell whose 40,000-term expression makes Python's parser give up is refused
    with a reason; the notebook is graded, the other answers keep their points."""
    scores = points(graded.root, LESSON, "deep_cell")
    assert scores.pop(f"{DEEP_CELL}_tests") == 0
    assert scores and all(scores.values()), scores
    record = _record(graded.root, "deep_cell")
    assert record.status == "flagged", record.reason  # not an error, not a timeout
    (flag,) = [f for f in record.flags if f["kind"] == FORBIDDEN]
    assert flag["cell"] == DEEP_CELL and flag["voids"] == [f"{DEEP_CELL}_tests"]
    assert "nested too deeply" in flag["detail"] and "嵌套太深" in flag["detail_zh"]
    from nbgrader_course import autograded_path

    nb = nbformat.read(str(autograded_path(graded.root, LESSON, "deep_cell")), as_version=4)
    (cell,) = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == DEEP_CELL]
    assert [o.get("ename") for o in cell.outputs] == ["CellNotRead"]  # the kernel left it out


def test_an_output_flood_leaves_a_bounded_notebook(graded):
    """Images, HTML, JSON, display updates and text, 130 MB asked for: each cell keeps at
    most its bound, the notebook at most its own, and every answer keeps its points."""
    from nbgrader_course import autograded_path

    from autograder.grader.pipeline.execute import CUT_MARK, output_size
    from autograder.grader.sandbox.limits import Limits

    limits = Limits()
    scores = points(graded.root, LESSON, "output_flood")
    assert scores and all(scores.values()), scores
    path = autograded_path(graded.root, LESSON, "output_flood")
    nb = nbformat.read(str(path), as_version=4)
    sizes = [sum(map(output_size, c.outputs)) for c in nb.cells if c.cell_type == "code"]
    assert max(sizes) <= limits.cell_output_bytes
    assert sum(sizes) <= limits.notebook_output_bytes + 64 * 1024  # and a note per cut cell
    assert path.stat().st_size < limits.notebook_output_bytes + 2 * 1024**2  # + its own cells
    flood = [c for c in nb.cells if c.source == FLOOD]
    assert len(flood) == FLOOD_CELLS
    assert all(any(o.get("metadata", {}).get(CUT_MARK) for o in c.outputs) for c in flood)
    kinds = {o.output_type for o in flood[0].outputs}
    assert "display_data" in kinds, kinds
