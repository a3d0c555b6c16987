"""A learner's view in a real browser: a lesson runs to its self-check in JupyterLab.

Chromium (Debian's, never downloaded at run time) driven by Playwright opens a learner
notebook on the server `make lab` starts, runs Run → Run All Cells and waits for the
kernel, then checks what the learner sees: every code cell ran, figures are images, the
self-check printed its table, and Validate answers with its dialog. Four notebooks, one
of each kind: the first lesson (nbgrader's stubs) in English and in Chinese, the
capstone (starter code), and lesson 09 in Chinese (a read-only instructor cell, and
torch.compile in the learner's kernel). For every lesson in both languages, test_grading
shows the same from the untouched notebook's graded run: every code cell ran, every
figure is an image, and every cell that raised carries the tag that keeps JupyterLab's
Run All going. The server serves a copy of notebooks/ so that autosave and Validate
never touch the committed files. On failure a screenshot lands in test-artifacts/browser/.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest
from conftest import NOTEBOOKS, REPO, SOLUTIONS
from lab_server import get, running_lab
from lesson_cells import FIGURE_CALLS

from autograder import bilingual
from autograder.starter import starter_source

pytestmark = [pytest.mark.browser, pytest.mark.notebooks]

CHROMIUM = Path(os.environ.get("COURSE_CHROMIUM", "/usr/bin/chromium"))
ARTIFACTS = REPO / "test-artifacts" / "browser"
# One notebook of each kind: nbgrader's stubs in both languages, the capstone's starter code,
# lesson 09's locked instructor cell.
IN_THE_BROWSER = (
    ("en", "01_requires_grad"),
    ("zh", "01_requires_grad"),
    ("en", "08_capstone"),
    ("zh", "09_scale"),
)
LESSONS = [
    pytest.param(lang, f"{stem}.ipynb", id=f"{lang}/{stem}") for lang, stem in IN_THE_BROWSER
]
RUN_ALL_TIMEOUT_S = 300
VALIDATE_TIMEOUT_S = 300
SELF_CHECK_TITLE = {"en": "Self-check", "zh": "自测"}
NOT_ATTEMPTED = {"en": "not attempted", "zh": "尚未作答"}
FAILED = {"en": "failed", "zh": "未通过"}


def _starts_from_code(name: str) -> bool:
    """Whether the lesson's learner cells hold starter code (the capstone), not nbgrader's stub."""
    source = SOLUTIONS / Path(name).stem / name
    return any(starter_source(cell, "en") is not None for cell in bilingual.read(source).cells)


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium for every lesson; skipped, with the reason, where it cannot run."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    if not CHROMIUM.is_file():
        pytest.skip(f"no Chromium at {CHROMIUM} (Debian: apt-get install chromium)")
    # Chromium's sandbox refuses to start as root; containers and CI often are root.
    args = ["--no-sandbox"] if os.geteuid() == 0 else []
    with sync_api.sync_playwright() as playwright:
        try:
            chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=args)
        except sync_api.Error as error:
            pytest.skip(f"Chromium at {CHROMIUM} cannot start here: {error.message[:300]}")
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """`make lab`'s server, serving a copy of the learner notebooks."""
    workdir = tmp_path_factory.mktemp("browser-lab")
    served = workdir / "notebooks"
    shutil.copytree(NOTEBOOKS, served)
    with running_lab(workdir, root=served) as server:
        yield server


@pytest.fixture(scope="module")
def learner(browser):
    """One learner's browser for every lesson: like theirs, it keeps JupyterLab's scripts
    cached between lessons (each lesson still opens in a workspace of its own)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    yield context
    context.close()


@pytest.fixture
def page(learner):
    page = learner.new_page()
    yield page
    page.close()


@contextlib.contextmanager
def _screenshot_on_failure(page, name: str):
    try:
        yield
    except BaseException:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = ARTIFACTS / f"{name.replace('/', '-')}.png"
        with contextlib.suppress(Exception):
            page.screenshot(path=str(shot), full_page=True)
            print(f"screenshot saved: {shot}")
        raise


def _notebook_on_disk(lab, path: str) -> dict:
    status, body = get(lab.url(f"/api/contents/{path}?content=1"))
    assert status == 200, path
    return json.loads(body)["content"]


def _shut_down_kernels(lab, timeout_s: float = 30) -> None:
    """End the lesson's kernel through the server, so that lessons do not add up in memory.

    Once the server has seen the closed page's websocket go (waiting at most ``timeout_s``,
    then ending them anyway: the log check after the next lesson would show the traceback):
    a kernel ended while the server still writes to that socket logs a WebSocketClosedError
    traceback (seen on a busy machine, where the close reached the server after the
    shutdown)."""
    deadline = time.monotonic() + timeout_s
    while True:
        status, body = get(lab.url("/api/sessions"))
        assert status == 200
        sessions = json.loads(body)
        if all(s["kernel"]["connections"] == 0 for s in sessions) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    for session in sessions:
        get(lab.url(f"/api/sessions/{session['id']}"), method="DELETE")


# Every code cell's input prompt, e.g. "[12]:", "[*]:" while queued or running, "[ ]:" never run.
_PROMPTS_JS = """
() => Array.from(
  document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell')
).map(cell => cell.classList.contains('jp-CodeCell')
  ? (cell.querySelector('.jp-InputPrompt')?.textContent || '').trim()
  : null)
"""


def _wait_for_kernel_connected(lab, path: str, timeout_s: float) -> None:
    """Until the page's kernel is idle with the browser attached; Run All before that is lost."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status, body = get(lab.url("/api/sessions"))
        kernels = [s["kernel"] for s in json.loads(body or "[]") if s["path"] == path]
        if status == 200 and any(
            k["connections"] >= 1 and k["execution_state"] == "idle" for k in kernels
        ):
            return
        time.sleep(0.5)
    raise AssertionError(f"no kernel connected to {path} within {timeout_s} s")


def _wait_for_kernel_idle(page, timeout_s: float) -> None:
    indicator = page.locator(".jp-NotebookPanel-toolbar .jp-Notebook-ExecutionIndicator")
    page.wait_for_function(
        """(el) => el && el.getAttribute('data-status') === 'idle'""",
        arg=indicator.element_handle(timeout=timeout_s * 1000),
        timeout=timeout_s * 1000,
    )


def _run_all(page) -> float:
    """Run → Run All Cells; return the seconds until every code cell has its number."""
    page.locator("#jp-MainMenu .lm-MenuBar-item", has_text=re.compile(r"^Run$")).click()
    started = time.perf_counter()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
    page.wait_for_function(
        f"""() => {{
          const prompts = ({_PROMPTS_JS})().filter(p => p !== null);
          return prompts.length > 0 && prompts.every(p => /^\\[\\d+\\]:?$/.test(p));
        }}""",
        timeout=RUN_ALL_TIMEOUT_S * 1000,
        polling=250,
    )
    elapsed = time.perf_counter() - started
    _wait_for_kernel_idle(page, 60)
    return elapsed


def _cell(page, index: int):
    return page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell").nth(index)


def _validate(page) -> str:
    """Press Validate in the notebook toolbar; return the text of the dialog it opens."""
    page.locator(".jp-NotebookPanel-toolbar .validate-button").locator(
        "jp-button, button"
    ).first.click()
    dialog = page.locator(".jp-Dialog", has_text="Validation Results")
    dialog.wait_for(timeout=VALIDATE_TIMEOUT_S * 1000)
    text = dialog.locator(".jp-Dialog-body").inner_text()
    dialog.locator(".jp-Dialog-button").first.click()
    return text


@pytest.mark.parametrize(("lang", "name"), LESSONS)
def test_run_all_reaches_the_self_check(page, lab, lang, name, record_property):
    path = f"{lang}/{name}"
    cells = _notebook_on_disk(lab, path)["cells"]
    with _screenshot_on_failure(page, path):
        # A workspace of its own per lesson: nothing from an earlier lesson is restored.
        workspace = re.sub(r"\W", "-", path)
        page.goto(lab.url(f"/lab/workspaces/{workspace}/tree/{path}"))
        page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").first.wait_for(timeout=60_000)
        _wait_for_kernel_connected(lab, path, 120)
        _wait_for_kernel_idle(page, 60)
        # Self-study: no nbgrader menu or course panels, the Validate button in the toolbar.
        assert page.locator("#jp-MainMenu .lm-MenuBar-item", has_text="Nbgrader").count() == 0
        assert page.locator(".jp-NotebookPanel-toolbar .validate-button").count() == 1

        seconds = _run_all(page)
        record_property("run_all_seconds", round(seconds, 1))
        print(f"Run All {path}: {seconds:.1f} s")

        prompts = page.evaluate(_PROMPTS_JS)
        assert len(prompts) == len(cells), "the page shows other cells than the notebook holds"
        for index, (cell, prompt) in enumerate(zip(cells, prompts, strict=True)):
            if cell["cell_type"] != "code":
                continue
            assert re.fullmatch(r"\[\d+\]:?", prompt), (index, prompt, cell["source"][:80])
            source = "".join(cell["source"])
            if any(call in source for call in FIGURE_CALLS):
                images = _cell(page, index).locator(".jp-OutputArea-output img")
                assert images.count() >= 1, (index, "a figure cell shows no image")

        check = next(i for i, c in enumerate(cells) if "self_check(" in "".join(c["source"]))
        report = _cell(page, check).locator(".jp-OutputArea").inner_text()
        assert SELF_CHECK_TITLE[lang] in report, report
        lines = [line for line in report.splitlines() if line.startswith(("✓", "✗", "·", "!"))]
        assert lines, report
        # The learner answered nothing: every exercise is "not attempted", none "could not run";
        # in the capstone, which starts from a broken script, every exercise runs and fails.
        untouched = FAILED[lang] if _starts_from_code(name) else NOT_ATTEMPTED[lang]
        for line in lines:
            assert untouched in line, line

        dialog = _validate(page)
        assert dialog.strip(), "Validate answered with an empty dialog"
        print(f"Validate {path}: a dialog of {len(dialog.splitlines())} lines")
        for noise in ("Traceback", "[E "):
            assert noise not in lab.terminal(), noise
    page.close()  # its kernel's websocket first: a kernel ended under an open one may log
    _shut_down_kernels(lab)  # a zmq "Socket operation on non-socket" traceback
