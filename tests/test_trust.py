"""What the grader trusts: observations it checks, hidden tests it keeps, feedback that cannot run.

- The judge refuses an observation whose recorded facts disagree with its values: a
  snapshot that keeps a tensor's recorded shape while its value is empty would pass
  ``isclose(...).all()`` over an empty broadcast.
- A learner's kernel never holds a hidden test (a cell printing ``In`` shows none), and a
  first run that only ran the visible checks is not a "disagreement" when a hidden one fails.
- Feedback HTML keeps no script, event handler or ``javascript:`` URL from a learner's
  markdown, outputs or ``_repr_html_``; the verdicts (✓, Chinese) still render.
- A submission that kills its own process group keeps the verdicts of the cells that ran.
"""

from __future__ import annotations

import copy
import json
import subprocess
from html.parser import HTMLParser

import nbformat
import pytest
import torch
from conftest import SOLUTIONS
from lesson_cells import graded_cells
from nbgrader_course import points, submit
from processes import BIN, venv_env

from autograder.common import compare, protocol
from autograder.common.observation import InconsistentObservation, Seen, snapshot
from autograder.grader.pipeline import records
from autograder.grader.pipeline.judge import judge_cell, visible_checks_pass, visible_part
from autograder.grader.reports.feedback import KeepSafeOutputs, SanitizedHTMLExporter
from autograder.kernel.observer import observe_cell

LESSON = "01_requires_grad"
CELLS = graded_cells(SOLUTIONS / LESSON / f"{LESSON}.ipynb")
TESTS = CELLS["ex1_product_grads_tests"].source
ANSWER = CELLS["ex1_product_grads"].source


def _observed(code: str = ANSWER, source: str = TESTS) -> dict:
    try:
        observations = observe_cell(["import torch", code], source)
    finally:
        protocol.MODE.reset()
    return protocol.from_bytes(protocol.to_bytes({"status": "ok", "observations": observations}))


def _emptied(data):
    """Every tensor snapshot with its recorded facts kept and an empty value that broadcasts."""
    if isinstance(data, dict):
        if data.get("kind") == "tensor":
            value = data["value"]
            return {**data, "value": torch.empty((0,) + (1,) * value.dim(), dtype=value.dtype)}
        return {k: _emptied(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return type(data)(_emptied(v) for v in data)
    return data


# --- the judge checks each observation ---------------------------------------------------


def test_an_empty_broadcast_passes_isclose_which_is_why_shapes_are_checked():
    assert bool(torch.isclose(torch.empty(0, 1), torch.ones(5)).all())


def test_the_right_answer_is_judged_right():
    assert judge_cell(TESTS, _observed(), "en").passed


def test_a_snapshot_with_an_empty_value_behind_its_recorded_shape_earns_nothing():
    verdict = judge_cell(TESTS, _emptied(_observed()), "en")
    assert not verdict.passed
    assert "not consistent" in verdict.feedback and "recorded shape" in verdict.feedback


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("shape", [4], "recorded shape"),
        ("dtype", "torch.float64", "recorded dtype"),
        ("dtype", "torch.nonsense", "recorded dtype"),
        ("device", "elsewhere", "device"),
        ("is_leaf", False, "no tensor can have"),
        ("grad_fn", "MulBackward0", "no tensor can have"),
        ("requires_grad", 1, "True/False"),
        ("type", "FakeTensor", "a tensor of type"),
        ("extra", 1, "not a snapshot"),
    ],
)
def test_a_tensor_snapshot_whose_facts_disagree_with_its_value_is_refused(field, value, reason):
    recorded = {**snapshot(torch.ones(3)), field: value}
    with pytest.raises(InconsistentObservation, match=reason):
        Seen(recorded)


@pytest.mark.parametrize(
    "recorded",
    [
        {"kind": "tuple", "items": [snapshot(1)], "length": 3},
        {"kind": "list", "items": "not a list", "length": 0},
        {"kind": "int", "value": float("nan")},
        {"kind": "bool", "value": 1},
        {"kind": "dict", "items": {1: snapshot(1)}},
        {"kind": "tensor"},
        {"kind": "anything else"},
        {
            "kind": "tuple",
            "items": [{**snapshot(torch.ones(2)), "value": torch.ones(0)}],
            "length": 1,
        },
    ],
)
def test_counts_sizes_and_types_must_agree_too(recorded):
    with pytest.raises(InconsistentObservation):
        Seen(recorded)


def test_a_value_comparison_never_broadcasts():
    found = {**snapshot(torch.ones(1)), "value": torch.ones(1), "shape": [1]}
    assert not compare.values(Seen(found), torch.ones(5), "x").passed
    assert compare.values(Seen(snapshot(torch.ones(5))), torch.ones(5), "x").passed


def test_a_non_tensor_is_on_no_device():
    assert not compare.on_device(Seen(snapshot(None)), "cpu", "x").passed
    assert not compare.dtype(Seen(snapshot(None)), torch.float32, "x").passed


def test_bare_tensors_in_an_observation_must_be_plain_cpu_copies():
    observed = _observed()
    key, observation = observed["observations"][0]
    observation = {**observation, "extra": torch.ones(2, requires_grad=True)}
    verdict = judge_cell(TESTS, {**observed, "observations": [(key, observation)]}, "en")
    assert not verdict.passed and "not consistent" in verdict.feedback


def test_an_observation_without_the_global_switches_is_refused():
    observed = _observed()
    stripped = [
        (key, {k: v for k, v in obs.items() if k != "_state"})
        for key, obs in observed["observations"]
    ]
    verdict = judge_cell(TESTS, {**observed, "observations": stripped}, "en")
    assert not verdict.passed and "global switches" in verdict.feedback


def test_more_observations_than_checks_are_refused():
    observed = _observed()
    extra = observed["observations"] + observed["observations"][-1:]
    verdict = judge_cell(TESTS, {**observed, "observations": extra}, "en")
    assert not verdict.passed and "more observations than checks" in verdict.feedback


@pytest.mark.parametrize("observations", ["text", [("key",)], [(1, {})]])
def test_observations_of_any_other_shape_are_refused(observations):
    verdict = judge_cell(TESTS, {"status": "ok", "observations": observations}, "en")
    assert not verdict.passed and "not consistent" in verdict.feedback


# --- hidden tests --------------------------------------------------------------------------

# Right for the visible check's sizes (5 and 8), wrong for the hidden ones'.
# Wrong only where the hidden checks look: their sizes are 9 and more, the visible one's less.
VISIBLE_ONLY = ANSWER.replace(
    "def product_grads(a, b):",
    "def product_grads(a, b):\n    if a.numel() >= 9:\n        return a, b, a",
)


def test_the_first_run_gets_the_test_cell_without_its_hidden_tests():
    visible = visible_part(TESTS)
    assert "HIDDEN" not in visible and "seed=101" not in visible and "seed=101" in TESTS
    assert "check_product_grads(product_grads, seed=1)" in visible


def test_the_visible_checks_are_judged_on_their_own():
    observed = _observed(VISIBLE_ONLY)
    assert not judge_cell(TESTS, observed, "en").passed
    assert visible_checks_pass(TESTS, observed, "en")
    assert not visible_checks_pass(
        TESTS, _observed("def product_grads(a, b):\n    return a, b, a"), "en"
    )


# --- feedback HTML -------------------------------------------------------------------------


class _Live(HTMLParser):
    """What in a page could run: script text, event handler attributes, javascript: URLs."""

    def __init__(self):
        super().__init__()
        self.scripts, self.handlers, self.urls, self._in_script = [], [], [], False

    def handle_starttag(self, tag, attrs):
        self._in_script = tag == "script"
        for name, value in attrs:
            if name.startswith("on"):
                self.handlers.append(f"{tag} {name}={value}")
            if name in ("href", "src", "action", "formaction") and (
                value or ""
            ).strip().lower().startswith("javascript:"):
                self.urls.append(f"{tag} {name}={value}")

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts.append(data)


def _live(page: str) -> _Live:
    parser = _Live()
    parser.feed(page)
    return parser


MARKDOWN_ATTACK = (
    "# notes\n\n<script>alert('md-script')</script>\n\n"
    "<img src=x onerror=\"alert('md-onerror')\">\n\n"
    "[click](javascript:alert('md-link')) <a href=\"javascript:alert('md-a')\">a</a>\n\n"
    "<details><summary>more</summary><kbd>Ctrl</kbd></details>"
)
HTML_ATTACK = (
    "<b>bold</b><img src=x onerror=\"alert('repr-html')\"><script>alert('repr-script')</script>"
)
CODE_ATTACK = (
    "class Shown:\n"
    "    def _repr_html_(self):\n"
    f"        return {HTML_ATTACK!r}\n\n"
    "    def _repr_png_(self):\n"
    "        return 'iVBORw0KGgo=', {'width': \"1 onerror=alert('png-width')\"}\n\n"
    "    def _repr_javascript_(self):\n"
    "        return \"alert('repr-js')\"\n\n"
    "print(\"<script>alert('stream')</script>\")\n"
    "Shown()"
)
MARKERS = ("md-", "repr-", "png-width", "stream")


def _feedback_page(nb) -> str:
    """Render a notebook as `course-grade feedback` does (nbgrader's feedback template)."""
    import os

    import nbgrader
    from traitlets.config import Config

    formgrader = os.path.join(os.path.dirname(nbgrader.__file__), "server_extensions", "formgrader")
    config = Config()
    config.HTMLExporter.template_name = "feedback"
    config.HTMLExporter.extra_template_basedirs = [os.path.join(formgrader, "templates")]
    css = os.path.join(formgrader, "static", "node_modules", "bootstrap", "dist", "css")
    config.HTMLExporter.extra_template_paths = [css]
    exporter = SanitizedHTMLExporter(config=config)
    exporter.register_preprocessor(KeepSafeOutputs(), enabled=True)
    page, _ = exporter.from_notebook_node(
        nb, resources={"nbgrader": {"notebook": "n", "score": 1, "max_score": 2, "late_penalty": 0}}
    )
    return page


def _attack_notebook():
    markdown = nbformat.v4.new_markdown_cell(MARKDOWN_ATTACK)
    code = nbformat.v4.new_code_cell(CODE_ATTACK)
    code.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="<script>alert('stream')</script>\n"),
        nbformat.v4.new_output(
            "execute_result",
            data={
                "text/plain": "<Shown>",
                "text/html": HTML_ATTACK,
                "image/png": "iVBORw0KGgo=",
                "application/javascript": "alert('repr-js')",
            },
            metadata={"image/png": {"width": "1 onerror=alert('png-width')"}},
            execution_count=1,
        ),
    ]
    verdict = nbformat.v4.new_code_cell("checks.check(f)")
    verdict.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="✓ 练习 1：全部检查通过\n")
    ]
    return nbformat.v4.new_notebook(cells=[markdown, code, verdict])


def test_feedback_html_keeps_nothing_that_runs():
    page = _feedback_page(_attack_notebook())
    live = _live(page)
    assert not [s for s in live.scripts if any(m in s for m in MARKERS)], live.scripts
    assert not live.handlers and not live.urls, (live.handlers, live.urls)
    assert "<b>bold</b>" in page and "<kbd>Ctrl</kbd>" in page  # harmless HTML still renders
    assert "✓ 练习 1：全部检查通过" in page


def test_without_the_sanitiser_the_same_page_would_run_the_attacks():
    from nbconvert.exporters import HTMLExporter

    exporter = HTMLExporter(template_name="classic")
    page, _ = exporter.from_notebook_node(_attack_notebook())
    live = _live(page)
    assert live.handlers and live.urls and any("md-script" in s for s in live.scripts)


# --- graded through course-grade -----------------------------------------------------------


def _course_grade(*args: str, timeout: int = 1500) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / "course-grade"), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=venv_env(),
        check=False,
    )


def _solved(root, answers: dict[str, str] | None = None):
    blank = nbformat.read(str(root / "release" / LESSON / f"{LESSON}.ipynb"), as_version=4)
    source = nbformat.read(str(root / "source" / LESSON / f"{LESSON}.ipynb"), as_version=4)
    solved = {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in source.cells
        if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")
    }
    solved.update(answers or {})
    nb = copy.deepcopy(blank)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in solved:
            cell.source = solved[grade_id]
    return nb


def _appended(nb, *cells):
    nb = copy.deepcopy(nb)
    for k, cell in enumerate(cells):
        cell.id = f"appended-{k}"
        nb.cells.append(cell)
    return nb


def _record(root, student: str) -> records.GradeRecord:
    (record,) = [r for r in records.load(root, LESSON) if r.student == student]
    return record


@pytest.fixture(scope="module")
def graded(tmp_path_factory, make_course):
    root = make_course(tmp_path_factory.mktemp("trust") / "course")
    solved = _solved(root)
    new = nbformat.v4
    submit(
        root, "reads_history", LESSON, _appended(solved, new.new_code_cell("print(In)\nprint(_ih)"))
    )
    submit(root, "visible_only", LESSON, _solved(root, {"ex1_product_grads": VISIBLE_ONLY}))
    submit(
        root,
        "scripts",
        LESSON,
        _appended(solved, new.new_markdown_cell(MARKDOWN_ATTACK), new.new_code_cell(CODE_ATTACK)),
    )
    submit(
        root,
        "kills_group",
        LESSON,
        _appended(solved, new.new_code_cell("import os\nos.killpg(0, 9)")),
    )
    result = _course_grade("grade", str(root), LESSON, "--cell-timeout", "30", "--workers", "2")
    assert result.returncode == 0, result.stderr[-3000:]
    feedback = _course_grade("feedback", str(root), LESSON)
    assert feedback.returncode == 0, feedback.stderr[-3000:]
    return root


def _page(root, student: str) -> str:
    return (root / "feedback" / student / LESSON / f"{LESSON}.html").read_text(encoding="utf-8")


def test_a_kernel_never_holds_a_hidden_test(graded):
    root = graded
    earned = points(root, LESSON, "reads_history")
    assert all(earned.values()), earned
    assert "check_product_grads(product_grads, seed=1)" in _page(root, "reads_history")
    graded = root / "autograded" / "reads_history" / LESSON / f"{LESSON}.ipynb"
    printed = json.dumps([c.get("outputs", []) for c in nbformat.read(graded, 4).cells])
    for leaked in ("seed=101", "BEGIN HIDDEN", "seed=202"):
        assert leaked not in _page(root, "reads_history")
        assert leaked not in printed  # not even in the printed history (sources keep them)
    record = _record(root, "reads_history")
    assert not [f for f in record.flags if f["kind"] == "first run disagrees"], record.flags


def test_failing_only_a_hidden_check_is_no_disagreement(graded):
    root = graded
    scores = points(root, LESSON, "visible_only")
    assert scores["ex1_product_grads_tests"] == 0
    assert all(v for k, v in scores.items() if k != "ex1_product_grads_tests"), scores
    record = _record(root, "visible_only")
    assert record.status == "graded" and not record.flags, (record.status, record.flags)


def test_a_graded_submissions_feedback_keeps_nothing_that_runs(graded):
    root = graded
    page = _page(root, "scripts")
    live = _live(page)
    assert not [s for s in live.scripts if any(m in s for m in MARKERS)], live.scripts
    assert not live.handlers and not live.urls, (live.handlers, live.urls)
    assert "all checks passed" in page and "<kbd>Ctrl</kbd>" in page


def test_killing_its_own_process_group_keeps_the_verdicts_of_the_cells_that_ran(graded):
    root = graded
    record = _record(root, "kills_group")
    assert record.status != "error", record.reason
    assert record.reason, record
    earned = points(root, LESSON, "kills_group")
    assert all(earned.values()), (earned, record.reason)
