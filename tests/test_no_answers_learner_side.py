"""No lesson holds an answer on the learner's side (issue 34, item 1).

``autograder.lessons.lessonNN`` runs beside learner code (the learner's kernel, the
grading sandbox's observer). Its checks may build, call and compare, but the code that
computes an exercise's answer lives in ``autograder.references.lessonNN``, with the judge
only; a rule that needs an answer-derived value reads a fact the reference records. These
tests read the lesson modules' source (the AST: a name bound anywhere in the module, by a
def, a class, an assignment or an import) and their Spec classes.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

from autograder.common import oracle

REPO = Path(__file__).resolve().parent.parent

# What left each lesson module: name -> where it is now ("references":
# autograder/references/lessonNN.py; None: replaced by the reference's state).
_REFERENCES = "references"
MOVED = {
    "01": {},
    "02": {"_counts": _REFERENCES},  # the exact saved bytes, and what wrong counters find
    "03": {"_mse": _REFERENCES, "_stack": _REFERENCES, "modes_kept": _REFERENCES},
    "04": {"_other_order": _REFERENCES},  # D's running statistics in the other call order
    "05": {},
    "06": {},
    "07": {
        "_Reference": _REFERENCES,
        "_StraightThrough": _REFERENCES,
        "_SoftplusReference": _REFERENCES,
    },
    "08": {
        "_cross_entropy": _REFERENCES,
        "_sigmoid": _REFERENCES,
        "modes_kept": _REFERENCES,
        "_swish_grad": None,
    },
    "09": {
        "_autocast": _REFERENCES,
        "_checkpoint": _REFERENCES,
        "_functional_call": _REFERENCES,
        "_enable_grad": _REFERENCES,
        "_stack": _REFERENCES,
    },
}
LESSONS = sorted(MOVED)


def _tree(package: str, lesson: str) -> ast.Module:
    return ast.parse((REPO / "autograder" / package / f"lesson{lesson}.py").read_text())


def _bound(tree: ast.Module) -> set[str]:
    """Every name the module binds: defs, classes, assignment targets, imports."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _imported(tree: ast.Module) -> set[str]:
    """The dotted names the module imports, 'from a import b' as 'a' and 'a.b'."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.update({node.module, *(f"{node.module}.{a.name}" for a in node.names)})
    return found


def _specs(module) -> list[type]:
    """The Spec classes the module defines or uses (bases included, by their MRO)."""
    found = {
        k
        for v in vars(module).values()
        if inspect.isclass(v) and issubclass(v, oracle.Spec)
        for k in v.__mro__
        if issubclass(k, oracle.Spec)
    }
    return sorted(found, key=lambda k: k.__qualname__)


@pytest.mark.parametrize("lesson", LESSONS)
def test_the_lesson_modules_specs_have_no_reference_of_their_own(lesson):
    module = importlib.import_module(f"autograder.lessons.lesson{lesson}")
    specs = _specs(module)
    assert specs, "no Spec found: the test would prove nothing"
    own = [k.__qualname__ for k in specs if k.reference is not oracle.Spec.reference]
    assert own == [], f"lesson {lesson}: Specs with a reference beside learner code: {own}"


@pytest.mark.parametrize("lesson", LESSONS)
def test_the_lesson_module_imports_no_reference(lesson):
    imported = {n for n in _imported(_tree("lessons", lesson)) if "references" in n.split(".")}
    assert imported == set(), f"lesson {lesson} imports {sorted(imported)}"


@pytest.mark.parametrize("lesson", LESSONS)
def test_the_lesson_module_does_not_define_what_moved_to_the_judge(lesson):
    defined = _bound(_tree("lessons", lesson)) & set(MOVED[lesson])
    assert defined == set(), f"lesson {lesson} still binds {sorted(defined)}"
    moved = {name for name, where in MOVED[lesson].items() if where == _REFERENCES}
    missing = moved - _bound(_tree("references", lesson))
    assert missing == set(), f"not in references/lesson{lesson}: {sorted(missing)}"


def _method(tree: ast.Module, cls: str, name: str) -> ast.FunctionDef:
    body = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls).body
    return next(f for f in body if isinstance(f, ast.FunctionDef) and f.name == name)


def test_lesson06_times_load_batch_against_a_yardstick_not_the_answer():
    """The GPU baseline of exercise 4 is a blocking copy, not the answer's non_blocking one;
    exercise 3's call on this machine records the machine, not the device to expect."""
    tree = _tree("lessons", "06")
    keywords = [
        (k.arg, k.value.value)
        for node in ast.walk(_method(tree, "LoadBatch", "on_gpu"))
        if isinstance(node, ast.Call)
        for k in node.keywords
        if isinstance(k.value, ast.Constant)
    ]
    assert ("non_blocking", True) not in keywords
    observe = _method(tree, "PickDevice", "observe")
    keys = {k.value for n in ast.walk(observe) if isinstance(n, ast.Dict) for k in n.keys}
    assert "want" not in keys and "machine" in keys
