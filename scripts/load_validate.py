"""Does the classroom hold a whole class pressing Validate at once? Simulated learners say.

Run as root on the classroom's machine, with the hub running (``course-classroom start``):

    .venv/bin/python scripts/load_validate.py /srv/classroom --learners 40

Each simulated learner is one of the classroom's learners, over HTTP as a browser would be:
it logs in to the hub with its own password (from the classroom's root-only passwords.csv),
asks the hub for an API token, starts its JupyterLab server through the hub's REST API and
puts lesson 01's learner notebook, answered with the official solutions, into a folder
``load-validate/`` of its home through the server's contents API. When every learner's
server is up, all press Validate at the same moment (nbgrader's validate handler, which
runs the whole notebook in a new kernel before it answers) and, while they wait, poll
the server the way JupyterLab does (kernels and sessions every 10 s); JupyterLab shows
"server unavailable" when such a poll fails, so a failed poll is a failure too.

Before the class presses Validate, the first learner presses it alone, and the machine's
busy CPU seconds over that Validate (``/proc/stat``, every process: kernel, server, hub)
are one Validate's cost. The class can finish no sooner than the CPU bound, learners ×
that cost ÷ the machine's cores; the summary gives the last result as a multiple of it.
Measure on an otherwise idle machine: every busy CPU second counts as the Validate's.

Per learner it records the time to Validate's result, the HTTP status and every failure;
it prints a table and a summary (min / median / max time to result, the CPU bound,
failures) and exits 1 when any learner failed. At the end it stops the servers it
started, revokes its tokens and removes the folder it made. Bounded: at most --learners
learners (no more than the list holds), one --deadline for the whole run, the hub only
on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import copy
import csv
import io
import json
import os
import statistics
import sys
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

import requests

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from autograder.classroom import passwords  # noqa: E402

LESSON = "01_requires_grad"
FOLDER = "load-validate"
POLL_EVERY_S = 10  # JupyterLab's kernel and session managers poll this often
MAX_LEARNERS = 200
LOOPBACK = {"127.0.0.1", "localhost"}


@dataclass
class Outcome:
    """What one simulated learner saw."""

    learner: str
    ready_s: float | None = None  # log-in to server up and notebook in place
    status: int | None = None  # HTTP status of Validate's POST
    result_s: float | None = None  # time from pressing Validate to its result
    polls: int = 0  # JupyterLab-like polls answered while waiting
    failures: list[str] = field(default_factory=list)


def answered_notebook() -> dict:
    """Lesson 01's English learner notebook with every answer cell from the solutions."""
    learner = json.loads((REPO / "notebooks" / "en" / f"{LESSON}.ipynb").read_text("utf-8"))
    source = json.loads((REPO / "solutions" / LESSON / f"{LESSON}.ipynb").read_text("utf-8"))

    def grade_id(cell: dict) -> str | None:
        return cell["metadata"].get("nbgrader", {}).get("grade_id")

    answers = {
        grade_id(cell): cell["source"]
        for cell in source["cells"]
        if cell["metadata"].get("nbgrader", {}).get("solution")
    }
    filled = copy.deepcopy(learner)
    for cell in filled["cells"]:
        if grade_id(cell) in answers and cell["metadata"]["nbgrader"].get("solution"):
            cell["source"] = answers[grade_id(cell)]
    return filled


class Learner:
    """One learner's HTTP session: the hub's log-in cookie, then an API token."""

    def __init__(self, base: str, name: str, password: str, timeout_s: float):
        self.base, self.name, self.password = base, name, password
        self.http = requests.Session()
        self.timeout_s = timeout_s
        self.token_id: str | None = None
        self.started = False

    def hub(self, method: str, path: str, **kwargs) -> requests.Response:
        kwargs.setdefault("timeout", self.timeout_s)
        return self.http.request(method, f"{self.base}/hub/api/{path}", **kwargs)

    def server(self, method: str, path: str, **kwargs) -> requests.Response:
        kwargs.setdefault("timeout", self.timeout_s)
        return self.http.request(method, f"{self.base}/user/{self.name}/{path}", **kwargs)

    def log_in(self) -> None:
        """The hub's log-in form (PAM, the learner's own password), then a token of theirs."""
        self.http.get(f"{self.base}/hub/login", timeout=self.timeout_s).raise_for_status()
        form = {
            "username": self.name,
            "password": self.password,
            "_xsrf": self.http.cookies.get("_xsrf", ""),
        }
        # Not followed: the hub's home page would start the server the browser's way.
        answer = self.http.post(
            f"{self.base}/hub/login", data=form, allow_redirects=False, timeout=self.timeout_s
        )
        if answer.status_code != 302 or "login" in answer.headers.get("location", "/hub/login"):
            raise RuntimeError(f"log-in refused ({answer.status_code})")
        made = self.hub(
            "POST",
            f"users/{self.name}/tokens",
            json={"note": "load_validate", "expires_in": 7200},
            headers={"X-XSRFToken": self.http.cookies.get("_xsrf", "")},
        )
        made.raise_for_status()
        self.token_id = made.json()["id"]
        self.http.headers["Authorization"] = f"token {made.json()['token']}"

    def start_server(self, deadline: float) -> None:
        answer = self.hub("POST", f"users/{self.name}/server")
        if answer.status_code not in (201, 202, 400):  # 400: already running
            raise RuntimeError(f"server did not start ({answer.status_code}: {answer.text[:200]})")
        self.started = answer.status_code != 400
        while time.monotonic() < deadline:
            servers = self.hub("GET", f"users/{self.name}").json().get("servers", {})
            if servers.get("", {}).get("ready"):
                return
            time.sleep(1)
        raise RuntimeError("server not ready before the deadline")

    def put_notebook(self, notebook: dict) -> str:
        self.server("PUT", f"api/contents/{FOLDER}", json={"type": "directory"}).raise_for_status()
        path = f"{FOLDER}/{LESSON}.ipynb"
        body = {"type": "notebook", "format": "json", "content": notebook}
        self.server("PUT", f"api/contents/{path}", json=body).raise_for_status()
        return path

    def clean_up(self) -> None:
        """Remove what this run made: the folder, the server it started, the token."""
        for step in (
            lambda: self.server("DELETE", f"api/contents/{FOLDER}/{LESSON}.ipynb"),
            lambda: self.server("DELETE", f"api/contents/{FOLDER}"),
            lambda: self.started and self.hub("DELETE", f"users/{self.name}/server"),
            lambda: (
                self.token_id and self.hub("DELETE", f"users/{self.name}/tokens/{self.token_id}")
            ),
        ):
            try:
                step()
            except requests.RequestException:
                pass


def _poll_while(learner: Learner, done: threading.Event, outcome: Outcome) -> None:
    """JupyterLab's background polls; a 503, a 424 or no answer shows "server unavailable"."""
    while not done.wait(POLL_EVERY_S):
        for path in ("api/kernels", "api/sessions"):
            try:
                status = learner.server("GET", path).status_code
            except requests.RequestException as error:
                outcome.failures.append(f"poll {path}: {type(error).__name__}")
                continue
            if status == 200:
                outcome.polls += 1
            else:
                outcome.failures.append(f"poll {path}: HTTP {status}")


def _validate(learner: Learner, path: str, outcome: Outcome) -> None:
    done = threading.Event()
    poller = threading.Thread(target=_poll_while, args=(learner, done, outcome), daemon=True)
    poller.start()
    pressed = time.monotonic()
    try:
        answer = learner.server("POST", "assignments/validate", data={"path": path})
    except requests.RequestException as error:
        outcome.failures.append(f"validate: {type(error).__name__}")
        return
    finally:
        done.set()
        outcome.result_s = round(time.monotonic() - pressed, 1)
    outcome.status = answer.status_code
    if answer.status_code != 200:
        outcome.failures.append(f"validate: HTTP {answer.status_code}")
        return
    result = answer.json()
    text = json.dumps(result["value"])
    if not result["success"]:
        outcome.failures.append(f"validate: nbgrader failed: {text[-200:]}")
    elif "Timeout" in text or "DeadKernel" in text:
        outcome.failures.append(f"validate: the kernel did not finish: {text[-200:]}")


def busy_cpu_s() -> float:
    """CPU seconds the whole machine has spent busy since boot (all cores, every process)."""
    with open("/proc/stat", encoding="ascii") as stat:
        fields = [int(v) for v in stat.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle and iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


@dataclass
class Solo:
    """One Validate on its own, before the class: its wall time and the machine's CPU."""

    outcome: Outcome
    cpu_s: float | None = None

    def measure(self, learner: Learner, path: str, deadline: float) -> None:
        learner.timeout_s = max(1.0, deadline - time.monotonic())
        before = busy_cpu_s()
        _validate(learner, path, self.outcome)
        self.cpu_s = round(busy_cpu_s() - before, 1)


def _one(
    learner: Learner, notebook: dict, ready: threading.Barrier, deadline: float, paths: dict
) -> Outcome:
    outcome = Outcome(learner.name)
    began = time.monotonic()
    try:
        learner.log_in()
        learner.start_server(deadline)
        path = paths[learner.name] = learner.put_notebook(notebook)
        outcome.ready_s = round(time.monotonic() - began, 1)
    except (RuntimeError, requests.RequestException, KeyError) as error:
        outcome.failures.append(f"start: {error}")
        ready.abort()  # nobody validates: the comparison would be with a smaller class
        return outcome
    try:
        ready.wait(timeout=max(1.0, deadline - time.monotonic()))
    except threading.BrokenBarrierError:
        outcome.failures.append("start: another learner's server did not come up")
        return outcome
    learner.timeout_s = max(1.0, deadline - time.monotonic())
    _validate(learner, path, outcome)
    return outcome


def learners_listed(classroom: Path) -> dict[str, str]:
    """learner -> password, from the classroom's root-only list (the instructor left out)."""
    text = passwords.path(classroom).read_text(encoding="utf-8")
    rows = csv.DictReader(io.StringIO(text))
    return {row["user"]: row["password"] for row in rows if row["course"] != "instructor"}


def run(classroom: Path, base: str, count: int, deadline_s: float) -> tuple[list[Outcome], Solo]:
    """``count`` learners of ``classroom`` validate lesson 01 at once, after the first alone;
    their outcomes and the one alone's."""
    listed = learners_listed(classroom)
    if len(listed) < count:
        raise SystemExit(f"load_validate: {classroom} lists {len(listed)} learners, not {count}")
    deadline = time.monotonic() + deadline_s
    notebook = answered_notebook()
    learners = [Learner(base, name, listed[name], timeout_s=60) for name in sorted(listed)[:count]]
    paths: dict[str, str] = {}
    solo = Solo(Outcome(learners[0].name))
    # The barrier's action runs once every server is up, before any learner goes on.
    ready = threading.Barrier(
        count, action=lambda: solo.measure(learners[0], paths[learners[0].name], deadline)
    )
    try:
        with ThreadPoolExecutor(max_workers=count) as pool:
            futures = [pool.submit(_one, one, notebook, ready, deadline, paths) for one in learners]
            return [future.result() for future in futures], solo
    finally:
        for learner in learners:
            learner.timeout_s = 60
        with ThreadPoolExecutor(max_workers=min(count, 8)) as pool:
            list(pool.map(Learner.clean_up, learners))


def summary(outcomes: list[Outcome], solo: Solo) -> dict:
    times = [o.result_s for o in outcomes if o.result_s is not None and not o.failures]
    cores = os.cpu_count() or 1
    bound = solo.cpu_s * len(outcomes) / cores if solo.cpu_s and not solo.outcome.failures else None
    return {
        "learners": len(outcomes),
        "results": len(times),
        "failed": sum(1 for o in outcomes if o.failures) + bool(solo.outcome.failures),
        "min_s": min(times, default=None),
        "median_s": round(statistics.median(times), 1) if times else None,
        "max_s": max(times, default=None),
        "alone_s": solo.outcome.result_s,
        "alone_cpu_s": solo.cpu_s,
        "cores": cores,
        "cpu_bound_s": round(bound, 1) if bound else None,
        "max_over_bound": round(max(times) / bound, 2) if bound and times else None,
    }


def table(outcomes: list[Outcome]) -> str:
    lines = [f"{'learner':<16} {'ready s':>8} {'HTTP':>5} {'result s':>9} {'polls':>6}  failures"]
    for o in outcomes:
        lines.append(
            f"{o.learner:<16} {o.ready_s or '-':>8} {o.status or '-':>5} "
            f"{o.result_s or '-':>9} {o.polls:>6}  {'; '.join(o.failures) or 'none'}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("classroom", type=Path, help="the classroom folder (its passwords.csv)")
    parser.add_argument("--url", default="http://127.0.0.1:8000", help="the hub (%(default)s)")
    parser.add_argument("--learners", type=int, default=4, help="how many (%(default)s)")
    parser.add_argument("--deadline", type=float, default=1800, help="seconds for the whole run")
    parser.add_argument("--json", type=Path, help="also write the outcomes here")
    args = parser.parse_args(argv)
    if urllib.parse.urlsplit(args.url).hostname not in LOOPBACK:
        parser.error("the hub must be on this machine (127.0.0.1)")
    if not 1 <= args.learners <= MAX_LEARNERS:
        parser.error(f"--learners between 1 and {MAX_LEARNERS}")
    began = time.monotonic()
    outcomes, solo = run(args.classroom, args.url.rstrip("/"), args.learners, args.deadline)
    print(table([solo.outcome, *outcomes]))
    about = summary(outcomes, solo) | {"wall_s": round(time.monotonic() - began, 1)}
    print(
        f"alone (first row): {about['alone_s']} s, {about['alone_cpu_s']} busy CPU s; "
        f"CPU bound for {about['learners']} on {about['cores']} cores: "
        f"{about['cpu_bound_s']} s\n"
        f"{about['learners']} learners, {about['results']} results, {about['failed']} failed; "
        f"time to result min {about['min_s']} s, median {about['median_s']} s, "
        f"max {about['max_s']} s = {about['max_over_bound']} x the CPU bound; "
        f"whole run {about['wall_s']} s"
    )
    if args.json:
        learners = [asdict(o) for o in outcomes]
        body = {"summary": about, "alone": asdict(solo.outcome), "learners": learners}
        args.json.write_text(json.dumps(body, indent=1))
    return 1 if about["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
