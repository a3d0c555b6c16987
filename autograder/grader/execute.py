"""nbgrader's Execute step, made safe for learner code.

Kernels are forked from the worker's zygote and confined (see kernel.py). A
cell that runs past its timeout, or a kernel that dies (``os._exit``, a
segfault, the memory limit), is recorded against the cell that caused it; the kernel is
started afresh and grading goes on with the next cell. Test cells run without
their hidden tests: nothing hidden ever enters a learner's kernel.
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
from autograder.grader.integrity import is_test_cell
from autograder.grader.judge import visible_part
from autograder.grader.kernel import SandboxedKernelManager

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


class SandboxedExecute(Execute):
    """Execute each cell in a sandboxed, limited kernel; survive hangs and crashes."""

    workdir = Unicode(help="Folder private to this submission's kernels (sockets).").tag(
        config=True
    )
    zygote = Any(help="The worker's autograder.grader.forked.Zygote, which forks kernels.").tag(
        config=True
    )
    feedback_language = Unicode("", help="Language of the checks' feedback.").tag(config=True)
    threads = Integer(0, help="CPU threads each kernel's torch may use (0: default).").tag(
        config=True
    )
    incident_dir = Unicode(help="Folder that receives <notebook>.json with the incidents.").tag(
        config=True
    )
    confinement = Any(help="The autograder.grader.sandbox.Confinement of the submission.").tag(
        config=True
    )
    notebook_timeout = Integer(0, help="Seconds the whole notebook may take (0: no budget).").tag(
        config=True
    )

    def __init__(self, *args, **kwargs):
        kwargs["kernel_manager_class"] = SandboxedKernelManager
        # A grading kernel has nothing to save at the end: waiting for a graceful exit
        # cost every submission a few tenths of a second.
        kwargs.setdefault("shutdown_kernel", "immediate")
        super().__init__(*args, **kwargs)

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
        try:
            return super().preprocess(nb, resources, km)
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
            try:
                self.execute_cell(copy.deepcopy(original), index, store_history=False)
            except (CellTimeoutError, DeadKernelError):
                self._completed.remove(index)
                self._fresh_kernel()
            finally:
                self.nb.cells[index] = original

    def _fresh_kernel(self):
        if self.kc is not None:
            self.kc.stop_channels()
        run_sync(self.km.restart_kernel)(now=True)
        self.kc = self.start_new_kernel_client()
