"""A term in the local classroom, end to end, in a real browser (issue 16).

`course-classroom setup` makes a classroom with throw-away Unix users (a unique prefix,
removed at the end, also on failure): an instructor, two learners of the English course
and one of the Chinese course. Through JupyterHub and Chromium, the learners fetch lesson
01 in the Assignments panel; one pastes the official solutions, the other solves part and
answers one exercise with a catalogued wrong answer; both validate and submit from the
panel. The instructor releases and collects in their JupyterLab terminal, grades through a
local one-worker Dask cluster (`course-classroom cluster`): one learner with `course-grade
grade`, the other with the formgrader's Autograde button, which runs course-grade there;
sees the scores in the formgrader and grades the written answer there by hand, writes
feedback and releases it (terminal);
the learners fetch it in the panel, and the test reads it: scores, the named
misconception, no hidden tests. Learners must not read each other's work or the
instructor's course. While bob validates, alice's terminal keeps allocating past her
server's memory limit and filling her /tmp: her commands stop at the limits, his Validate
completes. Alice then plants, in her own name, every form of another one's work that
test_classroom_collect plants (links to bob's submission and to the instructor's source/, a
hard link, bob's file in her folder…); the formgrader's Collect button refuses each and
keeps her own work.
The Chinese learner's JupyterLab runs with the Chinese language pack and fetches and
submits the Chinese notebook. One run, kept lean: the suite must stay fast. On failure
the pages' screenshots land in test-artifacts/classroom/.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import re
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from classroom_hub import (
    as_user,
    classroom,
    http_status,
    running,
    running_hub,
    skip_unless_a_classroom_can_run,
)
from conftest import REPO
from processes import free_port, venv_env

from autograder.classroom import passwords
from autograder.classroom.setup import INSTRUCTOR_ONLY

pytestmark = [pytest.mark.browser, pytest.mark.notebooks]

CHROMIUM = Path(os.environ.get("COURSE_CHROMIUM", "/usr/bin/chromium"))
ARTIFACTS = REPO / "test-artifacts" / "classroom"
LESSON = "01_requires_grad"
NOTEBOOK = f"{LESSON}/{LESSON}.ipynb"
WRONG_EXERCISE, WRONG_ID = "ex4_per_batch_grads", "RG-4"
WRITTEN, WRITTEN_ANSWER = "written_rg2", "A leaf made by the user keeps requires_grad=True."
SKIPPED_EXERCISE = "ex7_to_device"
HIDDEN_TEST_MARKS = ("BEGIN HIDDEN TESTS", "seed=505")  # seed=505: only in a hidden test
VALIDATE_TIMEOUT_S = 300
PYTHON = Path(sys.executable)
# Small limits, so that alice's commands reach them at once (setup's defaults: 4G, 1024 MiB).
LIMITS = ("--memory", "2G", "--tmp-mb", "256")
STOP = ".stop-hogging"  # in alice's home: her terminal's loop ends when root makes it
# Alice's terminal, over and over until STOP exists: allocate past her memory limit (the
# out-of-memory killer ends that command: status 137), fill her /tmp (no space left). A
# bomb costs about 1.2 busy core-seconds (2 GiB of pages written before the kill): a pause
# of 4 s keeps her at it through bob's Validate with 3 or 4 bombs, not 8 (a 1 s pause).
HOG = (
    f"while [ ! -e ~/{STOP} ]; do "
    "python -c 'b = bytearray(3 * 1024**3); b[::4096] = bytes(len(b[::4096]))'; "
    "echo __BOMB__$?; head -c 400M /dev/zero > /tmp/fill; rm -f /tmp/fill; sleep 4; done"
)


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium; skipped, with the reason, where the classroom cannot run."""
    skip_unless_a_classroom_can_run()
    if shutil.which("bwrap") is None:
        pytest.skip("grading needs bubblewrap (apt-get install bubblewrap)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    if not CHROMIUM.is_file():
        pytest.skip(f"no Chromium at {CHROMIUM} (Debian: apt-get install chromium)")
    with sync_api.sync_playwright() as playwright:
        try:
            chromium = playwright.chromium.launch(
                executable_path=str(CHROMIUM), args=["--no-sandbox"]
            )
        except sync_api.Error as error:
            pytest.skip(f"Chromium at {CHROMIUM} cannot start here: {error.message[:300]}")
        yield chromium
        chromium.close()


@contextlib.contextmanager
def _screenshots_on_failure(people: dict):
    """On failure, a screenshot of every person's page."""
    try:
        yield
    except BaseException:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        for name, person in people.items():
            with contextlib.suppress(Exception):
                person.page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
                print(f"screenshot saved: {ARTIFACTS / name}.png")
        raise


def _logs_in(browser, base: str, name: str, password: str) -> bool:
    """Whether the hub lets ``name`` in with ``password`` (a fresh browser, no server started)."""
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{base}/hub/login")
    page.fill("#username_input", name)
    page.fill("#password_input", password)
    page.click("#login_submit")
    page.wait_for_load_state()
    refused = page.locator("#login_submit").count() == 1 and "/hub/login" in page.url
    context.close()
    return not refused


class Person:
    """One person's browser session on the hub: log in, use the Assignments panel."""

    def __init__(self, browser, base: str, name: str, password: str):
        self.base, self.name = base, name
        self.context = browser.new_context(viewport={"width": 1400, "height": 1000})
        self.page = self.context.new_page()
        self.page.goto(f"{base}/hub/login")
        self.page.fill("#username_input", name)
        self.page.fill("#password_input", password)
        self.page.click("#login_submit")
        self.page.locator("#jp-MainMenu").wait_for(timeout=180_000)

    def url(self, path: str) -> str:
        return f"{self.base}/user/{self.name}/{path}"

    def contents(self, path: str) -> dict:
        """A file or folder through the server's contents API, with the browser's log-in."""
        response = self.page.request.get(self.url(f"api/contents/{path}?content=1"))
        assert response.ok, (path, response.status)
        return json.loads(response.text())["content"]

    def assignments(self):
        """Nbgrader → Assignment List in the open JupyterLab, its lists refreshed; the panel.

        As a learner does it: the page is never reloaded (a reload restores the whole
        workspace, the slowest thing the browser does here)."""
        panel = self.page.locator("#nbgrader-assignment-list")
        was_open = panel.count() > 0
        self.page.locator("#jp-MainMenu .lm-MenuBar-item", has_text="Nbgrader").click()
        self.page.locator(".lm-Menu-itemLabel", has_text="Assignment List").click()
        panel.wait_for(timeout=60_000)
        if was_open:  # a new panel loads its lists itself; a second load would race with it
            panel.locator("#refresh_assignments_list").click()
        # nbgrader disables the course menu while it loads and enables it when the lists are in
        panel.locator("#course_list_dropdown:not([disabled])").wait_for(timeout=60_000)
        return panel

    def _notebook_row(self, panel):
        """The fetched lesson's notebook row (its name, Validate), unfolded."""
        fetched = panel.locator("#fetched_assignments_list")
        row = fetched.locator(".nested_list_item", has_text=LESSON).first
        if not row.is_visible():
            fetched.locator(".assignment-notebooks-link", has_text=LESSON).click()
        row.wait_for()
        return row

    def fetch(self) -> None:
        panel = self.assignments()
        released = panel.locator("#released_assignments_list .list_item", has_text=LESSON)
        released.get_by_role("button", name="Fetch").click()
        panel.locator("#fetched_assignments_list .list_item", has_text=LESSON).first.wait_for()

    def answer(self, answers: dict[str, str]) -> None:
        """Paste each answer into its solution cell (by grade_id) in JupyterLab, then save."""
        cells = self.contents(NOTEBOOK)["cells"]
        where = {c["metadata"].get("nbgrader", {}).get("grade_id"): i for i, c in enumerate(cells)}
        self._notebook_row(self.assignments()).locator(".item_name a").click()
        shown = self.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell")
        shown.first.wait_for(timeout=60_000)
        for grade_id, code in answers.items():
            cell = shown.nth(where[grade_id])
            cell.scroll_into_view_if_needed()
            if "jp-MarkdownCell" in (cell.get_attribute("class") or ""):
                cell.dblclick()  # a rendered written answer opens its editor
            cell.locator(".cm-content").click()
            self.page.keyboard.press("Control+a")
            self.page.keyboard.insert_text(code)
            self.page.keyboard.press("Escape")
        toolbar = self.page.locator(
            ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-NotebookPanel-toolbar"
        )
        # Read the file only once JupyterLab has saved it (its tab no longer marked as
        # changed): a read during the save races with the server's atomic write.
        unsaved = self.page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.jp-mod-dirty")
        unsaved.first.wait_for()
        toolbar.locator("[data-command='docmanager:save']").first.click()
        unsaved.first.wait_for(state="detached", timeout=60_000)
        saved = self.contents(NOTEBOOK)["cells"]
        if all("".join(saved[where[g]]["source"]) == code for g, code in answers.items()):
            return
        raise AssertionError(f"{self.name}'s answers did not reach the saved notebook")

    def submit(self, validate: bool = True) -> str:
        """Validate the notebook (unless told not to), then Submit, both from the panel;
        return Validate's text."""
        panel = self.assignments()
        fetched = panel.locator("#fetched_assignments_list")
        text = ""
        if validate:
            self._notebook_row(panel).get_by_role("button", name="Validate").click()
            dialog = self.page.locator(".jp-Dialog")
            dialog.wait_for(timeout=VALIDATE_TIMEOUT_S * 1000)
            text = dialog.locator(".jp-Dialog-body").inner_text()
            dialog.locator(".jp-Dialog-button").first.click()
        fetched.get_by_role("button", name="Submit").first.click()
        panel.locator("#submitted_assignments_list .list_item", has_text=LESSON).first.wait_for()
        return text

    def terminal(self, command: str, timeout_s: float = 300) -> str:
        """Run ``command`` in a new terminal of this person's JupyterLab, as typed there;
        return what the terminal showed. Fails unless the command exits 0."""
        args = [f"/user/{self.name}/", self._xsrf(), command, timeout_s]
        shown = self.page.evaluate(_TERMINAL_JS, args)
        done = re.search(r"__DONE__(\d+)", shown)
        assert done and done[1] == "0", shown[-3000:]
        return shown

    def _xsrf(self) -> str:
        (xsrf,) = [
            c["value"]
            for c in self.context.cookies()
            if c["name"] == "_xsrf" and c["path"].rstrip("/") == f"/user/{self.name}"
        ]
        return xsrf

    def start_terminal(self, command: str, timeout_s: float = 900) -> None:
        """Start ``command`` in a new terminal of this person's JupyterLab and return at once;
        ``finish_terminal`` waits for what it showed."""
        self.page.evaluate(
            "([run, args]) => { window.courseTerminal = eval(run)(args); }",
            [_TERMINAL_JS, [f"/user/{self.name}/", self._xsrf(), command, timeout_s]],
        )

    def finish_terminal(self) -> str:
        """What the terminal ``start_terminal`` opened showed, once its command exited."""
        return self.page.evaluate("() => window.courseTerminal")

    def collect(self, timeout_s: float = 300) -> tuple[str, str]:
        """Manage Assignments → the lesson's Collect button; the answer's dialog: its id
        (success-modal or error-modal) and its text, the collect log included."""
        self.page.goto(self.url("formgrader/manage_assignments"))
        row = self.page.locator("tr", has_text=LESSON).first
        row.locator(".collect a").click()
        modal = self.page.locator("#success-modal, #error-modal")
        modal.wait_for(timeout=timeout_s * 1000)
        return modal.get_attribute("id") or "", modal.text_content() or ""

    def autograde(self, student: str, timeout_s: float = 900) -> tuple[str, str]:
        """Manage Submissions → the learner's Autograde button; the answer's dialog: its id
        (success-modal or error-modal) and its text."""
        self.page.goto(self.url(f"formgrader/manage_submissions/{LESSON}"))
        row = self.page.locator("tr", has_text=student).first
        row.locator(".autograde a").click()
        modal = self.page.locator("#success-modal, #error-modal")
        modal.wait_for(timeout=timeout_s * 1000)
        return modal.get_attribute("id") or "", modal.text_content() or ""

    def formgrader_rows(self, names: list[str]) -> dict[str, str]:
        """Manage Submissions of the lesson: each learner's row as the formgrader shows it."""
        self.page.goto(self.url(f"formgrader/manage_submissions/{LESSON}"))
        rows = {name: self.page.locator("tr", has_text=name).first for name in names}
        for row in rows.values():
            row.locator(".score").wait_for(timeout=60_000)
        return {name: row.inner_text() for name, row in rows.items()}

    def fetch_feedback(self) -> str:
        """Fetch Feedback in the panel; return the feedback page's text as the browser shows it."""
        panel = self.assignments()
        submitted = panel.locator("#submitted_assignments_list")
        submitted.get_by_role("button", name="Fetch Feedback").first.click()
        submitted.get_by_text("(view feedback)").first.wait_for(timeout=60_000)
        folder = self.contents(f"{LESSON}/feedback")
        (stamp,) = [entry["path"] for entry in folder]
        page = self.context.new_page()
        page.goto(self.url(f"files/{stamp}/{LESSON}.html"))
        text = page.locator("body").inner_text()
        page.close()
        return text


# Run in the instructor's Lab page: open a terminal through Jupyter's API, type the command
# into it over the terminal's websocket, return the screen's text once it printed its status.
_TERMINAL_JS = r"""
async ([base, xsrf, command, timeoutS]) => {
  const headers = {"X-XSRFToken": xsrf};
  const made = await fetch(base + "api/terminals", {method: "POST", headers});
  if (!made.ok) return "no terminal: HTTP " + made.status;
  const name = (await made.json()).name;
  const shown = await new Promise((resolve) => {
    const socket = new WebSocket(location.origin.replace(/^http/, "ws") + base
                                 + "terminals/websocket/" + name);
    let text = "";
    const timer = setTimeout(() => { socket.close(); resolve(text + "[timed out]"); },
                             timeoutS * 1000);
    socket.onopen = () => {
      socket.send(JSON.stringify(["set_size", 50, 500, 800, 4000]));
      socket.send(JSON.stringify(["stdin", command + "; echo __DONE__$?\r"]));
    };
    socket.onmessage = (event) => {
      const [kind, data] = JSON.parse(event.data);
      if (kind === "stdout") text += data;
      if (/__DONE__\d+/.test(text)) { clearTimeout(timer); socket.close(); resolve(text); }
    };
    socket.onerror = () => { clearTimeout(timer); resolve(text + "[websocket error]"); };
  });
  await fetch(base + "api/terminals/" + name, {method: "DELETE", headers});
  return shown;
}
"""


def _hand_grade(instructor: Person, course: Path, student: str, grade_id: str, points: int):
    """Give a written answer its points in the formgrader's page of the submission, as an
    instructor types them; wait until the gradebook holds them."""
    from nbgrader.api import Gradebook

    from autograder import course as courses

    url = courses.gradebook_url(course)
    with Gradebook(url) as gradebook:
        notebook_id = gradebook.find_submission_notebook(LESSON, LESSON, student).id
    page = instructor.page
    page.goto(instructor.url(f"formgrader/submissions/{notebook_id}"))
    score = page.locator(f"input.score#{grade_id}")
    score.wait_for(timeout=120_000)
    # Only once its script has loaded the grades is a typed score saved (before, the grade's
    # view is not bound yet, and binding it resets the field).
    page.wait_for_function("() => window.formgrader?.grades?.loaded === true", timeout=120_000)
    score.fill(str(points))
    score.press("Tab")  # the formgrader saves a score when it changes
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with Gradebook(url) as gradebook:
            if gradebook.find_grade(grade_id, LESSON, LESSON, student).manual_score == points:
                return
        time.sleep(1)
    raise AssertionError(f"the formgrader did not save {student}'s {grade_id}")


def _exported(course: Path) -> dict[str, dict]:
    """``course-grade export`` (as root); its rows by learner, without the rows of the
    submissions collect refused (status "refused": what alice planted)."""
    import csv

    _course_grade("export", str(course), LESSON)
    with open(course / "grading" / f"{LESSON}.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert any(row["status"] == "refused" for row in rows), rows  # listed for the instructor
    return {row["student"]: row for row in rows if row["status"] != "refused"}


def _formgrader_course(instructor: Person, opened: str) -> str:
    """The course id the formgrader opened at URL ``opened`` manages (a server may start)."""
    instructor.page.goto(opened)
    instructor.page.get_by_text(LESSON).first.wait_for(timeout=180_000)
    assert instructor.page.locator("#warning-course-id, #warning-exchange").count() == 0
    found = re.search(r"course_id[^\n]*?(autograd-course-\w+)", instructor.page.content())
    return found[1] if found else ""


def _official_solutions(course: Path) -> dict[str, str]:
    """The solution cells of the instructor's source notebook, by grade_id."""
    source = json.loads((course / "source" / LESSON / f"{LESSON}.ipynb").read_text("utf-8"))
    return {
        cell["metadata"]["nbgrader"]["grade_id"]: "".join(cell["source"])
        for cell in source["cells"]
        if cell["cell_type"] == "code" and cell["metadata"].get("nbgrader", {}).get("solution")
    }


def _catalogued_wrong_answer() -> str:
    from catalog import lesson01

    return next(
        w.code for w in lesson01.WRONG[WRONG_EXERCISE] if w.misconception == WRONG_ID
    ).strip("\n")


# Run as a learner: whether the grading cluster takes a task from them, with a certificate of
# their own, without any, or in plain TCP.
_INTRUDER = """
import json, sys
from distributed import Client
from distributed.security import Security
tls = sys.argv[1]
outcome = {}
for how, address, security in (
    ("own certificate", tls, Security.temporary()),
    ("plain tcp", tls.replace("tls://", "tcp://"), None),
):
    try:
        with Client(address, security=security, timeout=10) as client:
            outcome[how] = "ran as uid %d" % client.submit(__import__("os").getuid).result()
    except Exception as error:
        outcome[how] = type(error).__name__
print(json.dumps(outcome))
"""


# Run as a learner: what each path gives them, "read" or the error's name.
_PROBE = """
import json, os, sys
seen = {}
for path in sys.argv[1:]:
    try:
        os.listdir(path) if os.path.isdir(path) else open(path, "rb").read(1)
        seen[path] = "read"
    except OSError as error:
        seen[path] = type(error).__name__
print(json.dumps(seen))
"""


def _what_user_can_read(name: str, paths: list[Path], python: str) -> dict[str, str]:
    result = as_user(name, [python, "-c", _PROBE, *map(str, paths)], cwd=Path("/"))
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout)


def _course_grade(*args: str) -> str:
    """``course-grade ARGS`` with this tree's package, as root (grading needs cgroups)."""
    result = subprocess.run(
        [str(PYTHON), "-m", "autograder.grader.cli", *args],
        env=venv_env(),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    return result.stdout + result.stderr


def test_a_term_in_the_classroom(browser, record_property):
    started = time.monotonic()
    prefix = f"ct{secrets.token_hex(3)}"
    teacher, alice, bob, chen = (f"{prefix}{role}" for role in ("t", "a", "b", "z"))
    people: dict[str, Person] = {}
    try:
        with (
            classroom("classroom", teacher, [alice, bob], [chen], ARTIFACTS, LIMITS) as made,
            _screenshots_on_failure(people),
        ):
            folder, room, python = made.folder, made.room, made.python
            password = passwords.handed_out(room)
            assert set(password) == {teacher, alice, bob, chen}, made.setup_output
            assert (room / passwords.FILE).stat().st_mode & 0o777 == 0o600
            en, zh = (made.home(teacher) / f"autograd-course-{lang}" for lang in ("en", "zh"))
            record_property("setup_seconds", round(time.monotonic() - started, 1))

            with running_hub(room, folder / "hub.log"):
                base = made.url
                assert http_status(f"{base}/hub/login") == 200
                # One person, one login: a learner's password opens no one else's account.
                for other in (bob, teacher):
                    assert not _logs_in(browser, base, other, password[alice]), other
                assert _logs_in(browser, base, alice, password[alice])  # the check can tell

                # The instructor's formgrader: the English course on the default server,
                # the Chinese one on the server named "zh".
                instructor = people[teacher] = Person(browser, base, teacher, password[teacher])
                # The README's commands, typed in the instructor's JupyterLab terminal.
                for course in (en, zh):
                    shown = instructor.terminal(
                        f"cd ~/{course.name} && nbgrader release_assignment {LESSON}"
                    )
                    assert "Permission denied" not in shown and "not found" not in shown, shown
                formgrader = instructor.url("formgrader")
                assert _formgrader_course(instructor, formgrader) == "autograd-course-en"
                # The "zh" server starts and opens on its formgrader, as the hub's spawn
                # page does with ?next=
                spawn_zh = f"{base}/hub/spawn/{teacher}/zh?next=/user/{teacher}/zh/formgrader"
                assert _formgrader_course(instructor, spawn_zh) == "autograd-course-zh"

                solutions = _official_solutions(en)
                partial = {g: code for g, code in solutions.items() if g != SKIPPED_EXERCISE}
                partial[WRONG_EXERCISE] = _catalogued_wrong_answer()
                validated = {}
                complete = solutions | {WRITTEN: WRITTEN_ANSWER}  # alice writes her answer too
                for name, answers in ((alice, complete), (bob, partial)):
                    learner = people[name] = Person(browser, base, name, password[name])
                    learner.fetch()
                    learner.answer(answers)
                    validated[name] = learner.submit()
                    if name == alice:  # she hogs her server while bob works and validates
                        learner.start_terminal(HOG)
                # Validate passes the complete answer and names the wrong answer's misconception.
                assert "Check failed" not in validated[alice], validated[alice]
                assert "You did not provide a response" not in validated[alice], validated[alice]
                assert WRONG_ID in validated[bob] and "Check failed" in validated[bob]
                # Alice's commands stopped at her limits, every time, and her server lives.
                (made.home(alice) / STOP).touch()
                hogged = people[alice].finish_terminal()
                bombs = re.findall(r"__BOMB__(\d+)", hogged)
                assert bombs and set(bombs) == {"137"}, hogged[-3000:]  # the OOM killer's SIGKILL
                assert "No space left on device" in hogged and "__DONE__0" in hogged, hogged[-3000:]
                assert people[alice].contents(NOTEBOOK)["cells"]

                # The Chinese course: JupyterLab in Chinese, the Chinese notebook.
                learner = people[chen] = Person(browser, base, chen, password[chen])
                assert learner.page.locator("#jp-MainMenu", has_text="文件").count() == 1
                learner.fetch()
                fetched = json.dumps(learner.contents(NOTEBOOK), ensure_ascii=False)
                assert "学习目标" in fetched and "Learning goals" not in fetched
                learner.submit(validate=False)

                # Alice submits her own work again, in Bob's name: it must not replace his.
                forged = as_user(
                    alice,
                    [python, "-m", "nbgrader", "submit", LESSON, f"--student={bob}"],
                    cwd=room / "home" / alice,
                )
                assert forged.returncode == 0, forged.stderr[-2000:]

                # Isolation: another learner's work and the instructor's course stay closed.
                own = room / "home" / alice / NOTEBOOK
                probed = [
                    own,
                    room / "home" / bob / NOTEBOOK,
                    room / "home" / bob,
                    en / "source" / LESSON,
                    en / "gradebook.db",
                    room / "exchange" / "autograd-course-en" / "inbound",
                    room / passwords.FILE,
                    *INSTRUCTOR_ONLY,  # the checks' answers (references) and the solutions
                ]
                seen = _what_user_can_read(alice, probed, python)
                assert seen.pop(str(own)) == "read"
                assert set(seen.values()) == {"PermissionError"}, seen

                # The instructor collects and grades through a local Dask cluster (one worker:
                # two submissions; test_sandbox grades with two workers side by side).
                collected = instructor.terminal(f"cd ~/{en.name} && nbgrader collect {LESSON}")
                assert f"claims to be {bob}'s submission but {alice} made it" in collected
                (refused,) = json.loads((en / "grading/refused" / f"{LESSON}.json").read_text())
                assert (refused["username"], refused["owner"]) == (bob, alice)
                instructor.terminal(f"cd ~/{zh.name} && nbgrader collect {LESSON}")
                assert (zh / "submitted" / chen / LESSON / f"{LESSON}.ipynb").is_file()

                # Alice files what is not hers as her own newer work, in her name, in every
                # form test_classroom_collect plants (links to bob's submission, to the
                # instructor's source/, to a file, a link inside a folder, a hard link, bob's
                # file in her folder, an unreadable folder): the formgrader's Collect button
                # (an update) refuses and lists each, and her collected work stays hers.
                from test_classroom_collect import plant_every_form

                collected = en / "submitted" / alice / LESSON
                hers = (collected / f"{LESSON}.ipynb").read_bytes()
                inbound = room / "exchange" / en.name / "inbound"
                (bobs,) = [
                    path
                    for path in inbound.glob(f"{bob}+*")
                    if path.stat().st_uid == pwd.getpwnam(bob).pw_uid
                ]
                planted = plant_every_form(made, alice, bobs, en / "source" / LESSON, bob)
                shown, said = instructor.collect()
                assert shown == "success-modal", said[-3000:]
                for form, name in planted.items():
                    assert f"Refused {name}" in said, (form, said[-3000:])
                assert (collected / f"{LESSON}.ipynb").read_bytes() == hers
                for path in collected.rglob("*"):
                    assert not path.is_symlink() and path.stat().st_nlink == 1, path
                listed = json.loads((en / "grading/refused" / f"{LESSON}.json").read_text())
                assert set(planted.values()) <= {item["filename"] for item in listed}
                scheduler = free_port()
                cluster = [str(PYTHON), "-m", "autograder.classroom.cli", "cluster", str(room)]
                cluster += ["--workers", "1", "--port", str(scheduler)]
                with running(cluster, folder / "dask.log", "Dask scheduler at"):
                    address = f"tls://127.0.0.1:{scheduler}"
                    # A learner cannot run anything on it: no certificate of theirs is taken.
                    intruder = as_user(alice, [python, "-c", _INTRUDER, address], cwd=Path("/"))
                    assert intruder.returncode == 0, intruder.stderr[-2000:]
                    tried = json.loads(intruder.stdout)
                    assert not any(v.startswith("ran") for v in tried.values()), tried
                    secret = [room / "cluster", room / "cluster" / "key.pem"]
                    seen = _what_user_can_read(alice, secret, python)
                    assert set(seen.values()) == {"PermissionError"}, seen
                    tls = ["--scheduler", address, "--tls", str(room / "cluster")]
                    graded = _course_grade("grade", str(en), LESSON, "--student", alice, *tls)
                    assert f"Dask at {address}" in graded and "1 graded" in graded, graded
                    # The formgrader's Autograde runs course-grade on the cluster, as the
                    # instructor, sandboxed: nbgrader's own autograde (refused by the course's
                    # settings) never runs learner code in their server.
                    shown, said = instructor.autograde(bob)
                    assert shown == "success-modal", said[-3000:]
                    assert f"Dask at {address}" in said and "1 graded" in said, said[-3000:]
                    assert "sandbox: bubblewrap" in said, said[-3000:]
                # The workers ran as the instructor, never root: what they wrote is theirs.
                written = list((en / "grading" / "records").rglob("*.json"))
                owners = {path.stat().st_uid for path in written}
                assert written and owners == {pwd.getpwnam(teacher).pw_uid}, owners
                records = {json.loads(path.read_text())["student"] for path in written}
                assert records == {alice, bob}, records

                # The formgrader shows course-grade's scores; alice's written answer waits for
                # its hand grade, "pending" in the export, not 0.
                rows = instructor.formgrader_rows([alice, bob])
                assert "14 / 16" in rows[alice] and "needs manual grading" in rows[alice], rows
                assert "10 / 16" in rows[bob] and "graded" in rows[bob], rows
                assert "needs autograding" not in json.dumps(rows), rows
                exported = _exported(en)
                assert exported[alice]["hand_grading"] == "pending: 2 points", exported[alice]
                _course_grade("feedback", str(en), LESSON, "--student", alice)
                page = (en / "feedback" / alice / LESSON / f"{LESSON}.html").read_text("utf-8")
                assert "Score: pending: graded by hand / 2.0" in page, page[:3000]
                assert "2.0 points still to be graded by hand" in page, page[:3000]
                # Hand grading in the formgrader reaches the gradebook and the export.
                _hand_grade(instructor, en, alice, WRITTEN, 2)
                rows = instructor.formgrader_rows([alice, bob])
                assert "16 / 16" in rows[alice] and "needs manual grading" not in rows[alice]
                assert "10 / 16" in rows[bob] and "needs autograding" not in rows[bob], rows
                exported = _exported(en)
                assert float(exported[alice]["score"]) == 16, exported[alice]
                assert exported[alice]["hand_grading"] == "done", exported[alice]

                _course_grade("feedback", str(en), LESSON)
                # Root's course-grade left the course the instructor's: their terminal runs
                # release_feedback and course-grade itself there.
                root_owned = [p for p in en.rglob("*") if p.lstat().st_uid == 0]
                assert not root_owned, root_owned[:5]
                instructor.terminal(f"cd ~/{en.name} && nbgrader release_feedback {LESSON}")
                instructor.terminal(f"course-grade report ~/{en.name} {LESSON}")

                feedback = {name: people[name].fetch_feedback() for name in (alice, bob)}
            record_property("feedback", json.dumps(feedback)[:4000])
            for text in feedback.values():
                for mark in HIDDEN_TEST_MARKS:
                    assert mark not in text
            # The lesson's prose names every misconception; a verdict says "misconception ID:".
            verdict = f"misconception {WRONG_ID}:"
            assert verdict in feedback[bob] and verdict not in feedback[alice], feedback[bob]
            assert re.search(r"Score: 16(\.0)? / 16", feedback[alice]), feedback[alice][:800]
            assert re.search(r"Score: 10(\.0)? / 16", feedback[bob]), feedback[bob][:800]
    finally:
        seconds = round(time.monotonic() - started, 1)
        record_property("seconds", seconds)
        print(f"classroom term: {seconds} s")
