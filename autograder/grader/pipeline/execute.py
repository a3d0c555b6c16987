"""nbgrader's Execute step, made safe for learner code.

Kernels are forked from the worker's zygote and confined (see kernel.py). A
cell that runs past its timeout, or a kernel that dies (``os._exit``, a
segfault, the memory limit), is recorded against the cell that caused it; the kernel is
started afresh and grading goes on with the next cell. Test cells run without
their hidden tests: nothing hidden ever enters a learner's kernel.

What the kernel displays is bounded like its time: every output kind (streams, images,
HTML, JSON, what an Output widget shows) counts against a bound per cell and per
notebook (limits.py), so the autograded notebook the course stores and the feedback
page made from it stay bounded. The submission's own outputs and widget state are
dropped before the run; no widget state is kept.
"""

from __future__ import annotations

import copy
import json
import math
import time
from pathlib import Path

from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbclient.util import run_sync
from nbformat import NotebookNode
from nbgrader.preprocessors import Execute
from traitlets import Any, Integer, Unicode

from autograder.common.i18n import Text
from autograder.grader.pipeline import policy, stages
from autograder.grader.pipeline.integrity import is_test_cell
from autograder.grader.pipeline.judge import visible_part
from autograder.grader.sandbox.kernel import SandboxedKernelManager
from autograder.grader.sandbox.limits import Limits

INCIDENT_TEXT = {
    "timed out": Text(
        "this cell ran longer than {limit} s and was stopped; the kernel was restarted "
        "and your earlier cells were run again before grading went on.",
        "这个单元格运行超过 {limit} 秒，已被终止；内核已重启，"
        "并在继续评分前重新运行了你之前的单元格。",
    ),
    "crashed": Text(
        "the kernel died while running this cell (os._exit, a crash, or the memory "
        "limit); it was restarted and your earlier cells were run again.",
        "运行这个单元格时内核退出了（os._exit、崩溃或超出内存限制）；内核已重启，"
        "并重新运行了你之前的单元格。",
    ),
}
INCIDENT_NAME = {"timed out": "GradingTimeout", "crashed": "KernelDied"}
OUT_OF_TIME = "out of time"
OUT_OF_TIME_TEXT = Text(
    "not run: the notebook used up its {budget} s grading time before this cell.",
    "未运行：在这个单元格之前，本笔记本已用完 {budget} 秒的评分时间。",
)

NOT_READ = "CellNotRead"
NOT_READ_TEXT = Text(
    "not run: {why}. The graded run leaves this cell out; your other cells are graded.",
    "未运行：{why}。评分时跳过这个单元格；你的其他单元格照常评分。",
)
OUTPUT_CUT = Text(
    "[output cut: in the graded notebook a cell keeps at most {cell} MiB of outputs, "
    "the whole notebook {notebook} MiB]",
    "[输出已截断：评分后的笔记本中，每个单元格最多保留 {cell} MiB 的输出，"
    "整个笔记本最多 {notebook} MiB]",
)
CUT_MARK = "autograder_output_cut"  # the note's metadata key (the note is replaced, not added)
RESERVE = 32 * 1024  # room each cell keeps for its errors (shortened) and the note
ERROR_BYTES = 4 * 1024  # an error output, shortened: the grader reads only that there was one
ERRORS_KEPT = 4  # per cell: the first ones and the last
RECEIVED_FACTOR = 4  # a cell may send this many times its bound (figures redrawn in place)


def output_size(output) -> int:
    """Bytes an output takes in the stored notebook (JSON, UTF-8)."""
    text = json.dumps(output, ensure_ascii=False, default=str)
    return len(text.encode("utf-8", "surrogatepass"))


def _cut_text(text: str, most: int) -> str:
    """The start of ``text`` that takes at most ``most`` bytes as stored."""
    keep = text[: max(most, 0)]
    while keep and output_size(keep) > most:
        keep = keep[: len(keep) // 2]
    return keep


def _short_error(output, most: int) -> NotebookNode:
    """An error output in at most about ``most`` bytes: its name, the start of its message,
    the end of its traceback."""
    if output_size(output) <= most:
        return output
    traceback = [str(line) for line in output.get("traceback", [])][-4:]
    return NotebookNode(
        output_type="error",
        ename=_cut_text(str(output.get("ename", "")), 200),
        evalue=_cut_text(str(output.get("evalue", "")), most // 4),
        traceback=[_cut_text(line, most // 8) for line in traceback],
    )


def _text(output) -> str:
    text = output.get("text", "")
    return "".join(text) if isinstance(text, list) else str(text)


def cut_note(limits: Limits) -> NotebookNode:
    text = OUTPUT_CUT.format(
        cell=f"{limits.cell_output_bytes / 1024**2:g}",
        notebook=f"{limits.notebook_output_bytes / 1024**2:g}",
    )
    return NotebookNode(
        output_type="display_data",
        data={"text/plain": f"{text.en}\n{text.zh}"},
        metadata={CUT_MARK: True},
    )


def bound_outputs(outputs: list, room: int, limits: Limits, cut: bool = False):
    """The outputs of one cell that fit in ``room`` bytes, and the bytes they take.

    In order, whatever their kind; a stream is cut where the room ends, anything else that
    does not fit is left out, and a note says so. Errors are kept, shortened (a test
    cell's first run is read for whether it had one): the first few and the last.
    """
    full = room >= RESERVE
    content = room - RESERVE
    errors = [o for o in outputs if o.get("output_type") == "error"]
    chosen = [*errors[: ERRORS_KEPT - 1], *errors[-1:]] if full else errors[-1:]
    kept_errors = {id(o) for o in chosen}
    kept, used = [], 0
    for output in outputs:
        if output.get("metadata", {}).get(CUT_MARK):  # an earlier note: made again below
            cut = True
            continue
        if output.get("output_type") == "error":
            if id(output) in kept_errors:
                output = _short_error(output, ERROR_BYTES if full else 512)
                kept.append(output)
                used += output_size(output)
            else:
                cut = True
            continue
        size = output_size(output)
        if used + size <= content:
            kept.append(output)
            used += size
            continue
        cut = True
        if output.get("output_type") == "stream" and content - used > 1024:
            part = NotebookNode(
                output_type="stream",
                name=output.get("name", "stdout"),
                text=_cut_text(_text(output), content - used - 512),
            )
            kept.append(part)
            used += output_size(part)
    if cut:
        note = cut_note(limits)
        kept.append(note)
        used += output_size(note)
    return kept, used


class SandboxedExecute(Execute):
    """Execute each cell in a sandboxed, limited kernel; survive hangs and crashes."""

    workdir = Unicode(help="Folder private to this submission's kernels (sockets).").tag(
        config=True
    )
    zygote = Any(
        help="The worker's autograder.grader.sandbox.forked.Zygote, which forks kernels."
    ).tag(config=True)
    feedback_language = Unicode("", help="Language of the checks' feedback.").tag(config=True)
    threads = Integer(0, help="CPU threads each kernel's torch may use (0: default).").tag(
        config=True
    )
    incident_dir = Unicode(help="Folder that receives <notebook>.json with the incidents.").tag(
        config=True
    )
    confinement = Any(
        help="The autograder.grader.sandbox.bwrap.Confinement of the submission."
    ).tag(config=True)
    notebook_timeout = Integer(0, help="Seconds the whole notebook may take (0: no budget).").tag(
        config=True
    )

    def __init__(self, *args, **kwargs):
        kwargs["kernel_manager_class"] = SandboxedKernelManager
        # A grading kernel has nothing to save at the end: waiting for a graceful exit
        # cost every submission a few tenths of a second.
        kwargs.setdefault("shutdown_kernel", "immediate")
        super().__init__(*args, **kwargs)
        self.store_widget_state = False  # the graded notebook keeps no widget state
        self._replaying = False
        self._kept: dict[int, int] = {}  # cell index -> bytes its outputs take
        self._received = 0  # bytes of outputs the running cell has sent
        self._errors = 0  # error outputs the running cell has sent
        self._cut = False  # the running cell sent more than was kept

    @property
    def limits(self) -> Limits:
        return getattr(self.confinement, "limits", None) or Limits()

    def on_comm_open_jupyter_widget(self, msg):
        """No widget front end: what an Output widget displays goes to the cell, bounded there."""
        return None

    def _take(self, msg) -> bool:
        """Whether an output message is kept while the cell runs: a cell may send a few
        times its bound (figures redrawn in place), past that only errors, shortened."""
        if msg["msg_type"] == "error":
            content = msg.get("content", {})
            if isinstance(content, dict):
                shortened = _short_error(content, ERROR_BYTES)
                content.update({k: v for k, v in shortened.items() if k != "output_type"})
            self._errors += 1
            return self._errors <= 5 * ERRORS_KEPT
        self._received += len(json.dumps(msg.get("content", {}), default=str))
        if self._received <= RECEIVED_FACTOR * self.limits.cell_output_bytes:
            return True
        self._cut = True
        return False

    def output(self, outs, msg, display_id, cell_index):
        if self._replaying or not self._take(msg):  # a replay's outputs are thrown away
            return None
        return super().output(outs, msg, display_id, cell_index)

    def _update_display_id(self, display_id, msg):
        if self._replaying or not self._take(msg):
            return
        super()._update_display_id(display_id, msg)

    def _bound_cell(self, cell, index: int) -> None:
        """Cut the cell's outputs to its bound and to what the notebook has left."""
        limits = self.limits
        others = sum(self._kept.values()) - self._kept.get(index, 0)
        room = min(limits.cell_output_bytes, limits.notebook_output_bytes - others)
        cell.outputs, self._kept[index] = bound_outputs(cell.outputs, room, limits, self._cut)

    def bound_notebook(self, nb) -> None:
        """Every cell within its bound and all within the notebook's, in order (a display
        update may have grown a cell after it ran)."""
        self._kept, self._cut = {}, False
        for index, cell in enumerate(nb.cells):
            if cell.cell_type == "code":
                self._bound_cell(cell, index)

    def create_kernel_manager(self):
        if not self.kernel_name:
            self.kernel_name = self.nb.metadata.get("kernelspec", {}).get("name") or "python3"
        self.km = SandboxedKernelManager(
            kernel_name=self.kernel_name,
            config=self.config,
            workdir=self.workdir,
            confinement=self.confinement,
            zygote=self.zygote,
            feedback_language=self.feedback_language,
            threads=self.threads,
        )
        return self.km

    def preprocess(self, nb, resources=None, km=None):
        self.interrupt_on_timeout = False
        self._incidents = []
        self._completed = []
        budget = self.notebook_timeout
        spent = (resources or {}).get("reading_s", 0.0)  # reading it for the policy counts
        self._deadline = time.monotonic() + max(budget - spent, 0) if budget > 0 else None
        self._kept = {}
        for cell in nb.cells:  # what the submission brought is not what this run displayed
            if cell.cell_type == "code":
                cell.outputs = []
        nb.metadata.pop("widgets", None)
        try:
            with stages.timed("learner run"):
                nb, resources = super().preprocess(nb, resources, km)
            self.bound_notebook(nb)
            return nb, resources
        finally:
            if self.incident_dir:
                name = (resources or {}).get("unique_key", "notebook")
                target = Path(self.incident_dir) / f"{name}.json"
                target.parent.mkdir(parents=True, exist_ok=True)
                report = {"incidents": self._incidents}
                target.write_text(json.dumps(report), encoding="utf-8")

    def _out_of_time(self) -> bool:
        return self._deadline is not None and time.monotonic() >= self._deadline

    def _get_timeout(self, cell):
        """A cell's timeout, cut short where the notebook's budget ends sooner."""
        timeout = super()._get_timeout(cell)
        if self._deadline is None or cell is None:  # silent probes keep their own timeout
            return timeout
        remaining = max(1, math.ceil(self._deadline - time.monotonic()))
        return min(timeout or remaining, remaining)

    def _skip_for_time(self, cell, index):
        """Leave a cell unrun once the budget is spent; a test cell left so earns nothing."""
        if cell.cell_type != "code":
            return cell, self.resources
        if not any(i["kind"] == OUT_OF_TIME for i in self._incidents):
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            self._incidents.append({"cell": grade_id or f"cell {index}", "kind": OUT_OF_TIME})
        text = OUT_OF_TIME_TEXT.format(budget=self.notebook_timeout)
        message = f"{text.en}\n{text.zh}"
        cell.outputs = [
            NotebookNode(
                output_type="error",
                ename="NotebookTimeBudget",
                evalue=message,
                traceback=[f"NotebookTimeBudget: {message}"],
            )
        ]
        return cell, self.resources

    def _not_read(self, cell, why: Text):
        """A cell too long or too deeply nested to read is not run here either (Python's own
        compiler gives up on it, and IPython with it, until the cell times out): it is left
        out as the observer leaves it out, and says why."""
        text = NOT_READ_TEXT.format(why=why)
        message = f"{text.en}\n{text.zh}"
        cell.outputs = [
            NotebookNode(
                output_type="error",
                ename=NOT_READ,
                evalue=message,
                traceback=[f"{NOT_READ}: {message}"],
            )
        ]
        return cell, self.resources

    def preprocess_cell(self, cell, resources, index):
        """Run one cell; a test cell runs without its hidden tests.

        Learner code in this kernel can read what the kernel ran (IPython's ``In``) and
        print it into the feedback, so hidden tests never enter it: points come from
        the judge, which reads the full source, restored on the cell right after.
        """
        if not is_test_cell(cell):
            return self._run_cell(cell, resources, index)
        full = cell.source
        cell.source = visible_part(full)
        try:
            return self._run_cell(cell, resources, index)
        finally:
            cell.source = full

    def _run_cell(self, cell, resources, index):
        if self._out_of_time():
            return self._skip_for_time(cell, index)
        why = policy.unreadable(cell.source) if cell.cell_type == "code" else None
        if why is not None:
            return self._not_read(cell, why)
        self._received, self._errors, self._cut = 0, 0, False
        try:
            return self._execute(cell, resources, index)
        finally:
            if cell.cell_type == "code":
                self._bound_cell(cell, index)

    def _execute(self, cell, resources, index):
        try:
            result = super().preprocess_cell(cell, resources, index)
            self._completed.append(index)
            return result
        except (CellTimeoutError, DeadKernelError) as failure:
            kind = "timed out" if isinstance(failure, CellTimeoutError) else "crashed"
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            self._incidents.append({"cell": grade_id or f"cell {index}", "kind": kind})
            text = INCIDENT_TEXT[kind].format(limit=self.timeout)
            message = f"{text.en}\n{text.zh}"
            name = INCIDENT_NAME[kind]
            cell.outputs.append(
                NotebookNode(
                    output_type="error",
                    ename=name,
                    evalue=message,
                    traceback=[f"{name}: {message}"],
                )
            )
            self._restart_kernel()
            return cell, self.resources

    def _restart_kernel(self):
        """Kill the kernel (and its sandbox), start a fresh one, and replay the cells that ran.

        Replaying the learner's completed cells (not the test cells) restores
        imports and definitions, so a hanging or crashing cell costs only its own
        credit. Replayed outputs are discarded; a replay that fails is dropped. Once the
        notebook's budget is spent, nothing more is started: the remaining cells are skipped.
        """
        if self._out_of_time():
            return
        self._fresh_kernel()
        for index in list(self._completed):
            if self._out_of_time():
                return
            original = self.nb.cells[index]
            if original.metadata.get("nbgrader", {}).get("grade"):
                continue
            self._replaying = True
            try:
                self.execute_cell(copy.deepcopy(original), index, store_history=False)
            except (CellTimeoutError, DeadKernelError):
                self._completed.remove(index)
                self._fresh_kernel()
            finally:
                self._replaying = False
                self.nb.cells[index] = original

    def _fresh_kernel(self):
        if self.kc is not None:
            self.kc.stop_channels()
        run_sync(self.km.restart_kernel)(now=True)
        self.kc = self.start_new_kernel_client()
