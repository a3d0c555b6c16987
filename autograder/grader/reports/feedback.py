"""Feedback for learners: nbgrader's generate_feedback, without the hidden tests.

nbgrader's feedback HTML shows test cells as graded, hidden tests and all, and
tracebacks that quote them. Two steps are added to its pipeline: nbgrader's own
``ClearHiddenTests`` and :class:`ShowOnlyCheckMessages`, which keeps only the
checks' messages (expected vs found, misconception ID, section) of each error.

The page shows what learners wrote and what their code displayed, so nothing in it
may run: :class:`KeepSafeOutputs` keeps only output types and metadata the page can
show as data, and :class:`SanitizedHTMLExporter` passes every piece of HTML (markdown
cells, HTML and markdown outputs, comments) through nh3, the binding of the maintained
Ammonia sanitiser, whose allow-list keeps no script, event handler or ``javascript:`` URL.
nbgrader also copies every other file of the autograded folder (the course's
source files among them) into the feedback folder; here nothing but the HTML
feedback of the expected notebooks may land there, and the two small files that
nbgrader's ``release_feedback`` needs, copied as data from the submission.

The page's frame (scores, headings, links) is in the course's language
(:class:`CourseFeedbackExporter`, a template over nbgrader's), and a written answer still
waiting for the instructor's hand grade says "pending", not 0 (:class:`MarkPendingHandGrades`).
"""

from __future__ import annotations

import html
import os
import re
import shutil
import stat
from pathlib import Path

import nh3
from jinja2 import DictLoader, pass_context
from nbconvert.exporters import HTMLExporter
from nbformat import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode, default

from autograder.grader.reports.feedback_frame import FRAME, TEMPLATE

# What release_feedback reads beside the HTML: the submission's timestamp and the secret
# that names the released file, both written by the learner's `nbgrader submit`.
RELEASE_FILES = ("timestamp.txt", "submission_secret.txt")
RELEASE_FILE_MAX_BYTES = 1024


class ShowOnlyCheckMessages(NbGraderPreprocessor):
    """Replace error tracebacks in test cells by the error's message alone."""

    def preprocess_cell(self, cell, resources, index):
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    output["traceback"] = [f"{output.get('ename')}: {output.get('evalue')}"]
        return cell, resources


# HTML that feedback may show: Ammonia's tags and attributes, classes (code highlighting,
# tables), heading anchors; links and images over the web only.
HTML_ATTRIBUTES = {
    **{tag: set(names) for tag, names in nh3.ALLOWED_ATTRIBUTES.items()},
    "*": {"class", "title"},
    **{f"h{n}": {"id"} for n in range(1, 7)},
}
URL_SCHEMES = {"http", "https", "mailto"}
# Output types shown as data (HTML and markdown only through the sanitiser); all else dropped.
SHOWN_TYPES = ("text/plain", "text/html", "text/markdown", "text/latex", "image/png", "image/jpeg")
IMAGE_TYPES = ("image/png", "image/jpeg")
BASE64 = re.compile(r"[A-Za-z0-9+/=\s]*")


def clean_html(markup) -> str:
    """HTML without anything that could run: nh3's allow-list of tags, attributes, URLs."""
    text = markup.decode() if isinstance(markup, bytes) else str(markup)
    return nh3.clean(text, attributes=HTML_ATTRIBUTES, url_schemes=URL_SCHEMES)


class SanitizedHTMLExporter(HTMLExporter):
    """nbconvert's HTML exporter with every piece of HTML it writes from the notebook cleaned.

    nbconvert's own ``sanitize_html`` covers outputs but not nbgrader's feedback template,
    whose markdown cells and comments go through ``markdown2html`` unsanitised (and
    markdown's own ``[x](javascript:…)`` links survive a sanitiser run on the source).
    """

    def default_filters(self):
        yield from super().default_filters()
        yield ("markdown2html", self._clean_markdown2html)
        yield ("clean_html", clean_html)

    @pass_context
    def _clean_markdown2html(self, context, source):
        return clean_html(self.markdown2html(context, source))

    def _init_resources(self, resources):
        resources = super()._init_resources(resources)
        resources["should_sanitize_html"] = True  # no scripts, widgets or raw HTML outputs
        return resources


class CourseFeedbackExporter(SanitizedHTMLExporter):
    """The sanitised exporter, with nbgrader's page framed in the course's language."""

    language = Unicode("en", help="the course's language, en or zh").tag(config=True)

    @default("template_file")
    def _our_template(self):
        return "course_feedback.html.j2"

    @default("extra_loaders")
    def _our_loader(self):
        return [DictLoader({"course_feedback.html.j2": TEMPLATE})]

    def _init_resources(self, resources):
        resources = super()._init_resources(resources)
        resources["frame"] = {key: text(self.language) for key, text in FRAME.items()}
        resources.setdefault("nbgrader", {}).setdefault("pending", 0)
        return resources


class MarkPendingHandGrades(NbGraderPreprocessor):
    """Mark the graded cells still waiting for a hand grade, and their points in all.

    nbgrader counts such a cell as 0 points until the instructor grades it."""

    def preprocess(self, nb, resources):
        from nbgrader.api import Gradebook

        about = resources["nbgrader"]
        with Gradebook(about["db_url"]) as gradebook:
            notebook = gradebook.find_submission_notebook(
                about["notebook"], about["assignment"], about["student"]
            )
            pending = {g.name: g.max_score for g in notebook.grades if g.needs_manual_grade}
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader")
            if isinstance(meta, dict) and meta.get("grade_id") in pending:
                meta["pending"] = True
        about["pending"] = sum(pending.values())
        return nb, resources


def _safe_output(output) -> NotebookNode | None:
    """An output reduced to fields the page shows as data; None for any other kind."""
    kind = output.get("output_type")
    if kind == "stream":
        name = "stdout" if output.get("name") == "stdout" else "stderr"
        return NotebookNode(output_type=kind, name=name, text=str(output.get("text", "")))
    if kind == "error":
        lines = [str(line) for line in output.get("traceback", [])]
        ename, evalue = str(output.get("ename", "")), str(output.get("evalue", ""))
        return NotebookNode(output_type=kind, ename=ename, evalue=evalue, traceback=lines)
    if kind not in ("display_data", "execute_result"):
        return None
    data = {
        key: value
        for key, value in output.get("data", {}).items()
        if key in SHOWN_TYPES and isinstance(value, str)
    }
    if "text/html" in data:
        data["text/html"] = clean_html(data["text/html"])
    for key in IMAGE_TYPES:
        if key in data and not BASE64.fullmatch(data[key]):
            del data[key]
    metadata = {}
    for key in IMAGE_TYPES:  # the template writes these two unquoted: integers only
        sizes = output.get("metadata", {}).get(key, {})
        sizes = sizes if isinstance(sizes, dict) else {}
        kept = {k: v for k, v in sizes.items() if k in ("width", "height") and type(v) is int}
        if kept:
            metadata[key] = kept
    safe = NotebookNode(output_type=kind, data=NotebookNode(data), metadata=NotebookNode(metadata))
    if kind == "execute_result":
        count = output.get("execution_count")
        safe.execution_count = count if type(count) is int else None
    return safe


class KeepSafeOutputs(NbGraderPreprocessor):
    """Keep only what the feedback page can show as data (an allow-list of outputs)."""

    def preprocess_cell(self, cell, resources, index):
        meta = cell.metadata.get("nbgrader")
        if isinstance(meta, dict) and "grade_id" in meta:  # the template writes it unescaped
            meta["grade_id"] = html.escape(str(meta["grade_id"]))
        cell.pop("attachments", None)
        if cell.cell_type == "code":
            safe = (_safe_output(output) for output in cell.get("outputs", []))
            cell.outputs = [output for output in safe if output is not None]
        return cell, resources


def generate(course_root: Path, assignment: str, student: str | None = None) -> list[Path]:
    """Write feedback HTML for the assignment; return the feedback folders written."""
    from nbgrader.converters import GenerateFeedback
    from nbgrader.preprocessors import ClearHiddenTests

    from autograder import course
    from autograder.course import api
    from autograder.grader.pipeline import submission
    from autograder.grader.pipeline.late import ShowLateness

    nbgrader = api(course_root)
    defaults = GenerateFeedback.class_traits()["preprocessors"].default()
    steps = [
        ClearHiddenTests,
        ShowOnlyCheckMessages,
        *defaults,
        MarkPendingHandGrades,
        ShowLateness,
    ]
    nbgrader.config.ShowLateness.course_root = str(course_root)
    nbgrader.config.GenerateFeedback.preprocessors = [*steps, KeepSafeOutputs]
    nbgrader.config.GenerateFeedback.exporter_class = CourseFeedbackExporter
    nbgrader.config.CourseFeedbackExporter.language = course.language(course_root)
    nbgrader.coursedir.ignore = ["*", ".*"]  # copy no file besides the notebooks' feedback
    pages = {f"{name}.html" for name in submission.expected_notebooks(course_root, assignment)}
    written = []
    for learner in [student] if student else submission.students(course_root, assignment):
        if submission.plain_name_problem(learner):
            continue
        outcome = nbgrader.generate_feedback(assignment, learner, force=True)
        folder = course_root / "feedback" / learner / assignment
        _keep_only(folder, pages)
        _copy_release_files(course_root / "submitted" / learner / assignment, folder)
        if outcome["success"]:
            written.append(folder)
    return written


def _keep_only(folder: Path, pages: set[str]) -> None:
    """Remove from a feedback folder everything but the expected pages as regular files."""
    if not folder.is_dir() or folder.is_symlink():
        return
    with os.scandir(folder) as entries:
        for entry in entries:
            mode = entry.stat(follow_symlinks=False).st_mode
            if entry.name in pages and stat.S_ISREG(mode):
                continue
            if stat.S_ISDIR(mode):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)


def _copy_release_files(submitted: Path, folder: Path) -> None:
    """Copy the files release_feedback needs, as plain bounded data, readable by the course."""
    from autograder.grader.pipeline.submission import copy_plain_file

    if not folder.is_dir() or folder.is_symlink():
        return
    for name in RELEASE_FILES:
        target = folder / name
        copy_plain_file(submitted / name, target, RELEASE_FILE_MAX_BYTES)
        if target.exists():
            os.chmod(target, 0o644)
