"""Set up a classroom in one folder: accounts, exchange, courses, per-person Jupyter settings.

Layout of the folder (root-owned unless said otherwise):
  classroom.json            who the instructor (the grading user) is, the learners, which Python
                            users run, where the hub's REST API answers
  hub/                      JupyterHub's configuration, database, cookie secret and the roster
                            service's token (private)
  cluster/                  the grading cluster's TLS certificate and key (the instructor's only)
  python/                   where users cannot run the course's Python: a venv seeing the course's
                            packages, with the course's commands (nbgrader, course-grade, ...)
  python-base/              the base it was made from, when no system Python would do: a copy of
                            the course's own (interpreter.py)
  disks/                    with --home-mb: each learner's home as an image file (disks.py)
  course/, env/             only where users cannot enter the course's checkout or environment
                            (a clone under /root): read-only bind mounts of them (reach.py)
  exchange/                 nbgrader's shared exchange; exchange/<course>/ is the instructor's
  home/<user>/              homes of the accounts setup made (each private to its user)
The instructor's home holds one nbgrader course per language, autograd-course-en and
autograd-course-zh; learners' homes get the nbgrader settings of their course.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pwd
import sys
from dataclasses import dataclass
from pathlib import Path

from autograder import course
from autograder.classroom import (
    accounts,
    disks,
    hub_api,
    hub_config,
    interpreter,
    passwords,
    reach,
    roster,
)
from autograder.grader.pipeline import ownership

REPO = Path(__file__).resolve().parents[2]
CONFIG_ROOT = REPO / "jupyter-config"
# What only the instructor's grading may read: the checks' answers, the solutions, and the
# tests and the history, which hold them too.
INSTRUCTOR_ONLY = (
    REPO / "autograder" / "references",
    REPO / "solutions",
    REPO / "tests",
    REPO / ".git",
)
LANGUAGES = ("en", "zh")


def course_id(lang: str) -> str:
    """The nbgrader course id of the course in ``lang`` (as autograder.course writes it)."""
    return f"autograd-course-{lang}"


_LEARNER_NBGRADER = """\
# nbgrader settings of a learner in the classroom; written by course-classroom setup.
c = get_config()  # noqa: F821
c.Exchange.root = {exchange!r}
c.CourseDirectory.course_id = {course_id!r}
"""

_INSTRUCTOR_NBGRADER = """\
# nbgrader settings of the classroom's instructor; written by course-classroom setup.
# The formgrader works on one course per server: the default server on the English
# course, the server named "zh" on the Chinese one. Inside a course folder, nbgrader's
# commands use that folder's own nbgrader_config.py instead.
import os

c = get_config()  # noqa: F821
# Collect refuses a submission made in another learner's name (autograder/classroom/owned.py).
c.ExchangeFactory.collect = "autograder.classroom.owned.OwnedCollect"
# The formgrader's Autograde and Generate Feedback (and `nbgrader autograde`,
# `generate_feedback`) would run learner code unsandboxed and show hidden tests: they refuse,
# naming the `course-grade` command (autograder/classroom/formgrader.py).
c.Autograde.exporter_class = "autograder.classroom.formgrader.UseCourseGrade"
c.GenerateFeedback.exporter_class = "autograder.classroom.formgrader.UseCourseGrade"
if not os.path.isfile("nbgrader_config.py"):
    lang = "zh" if os.environ.get("JUPYTERHUB_SERVER_NAME") == "zh" else "en"
    course = os.path.join(os.path.expanduser("~"), "autograd-course-" + lang)
    c.CourseDirectory.root = course
    load_subconfig(os.path.join(course, "nbgrader_config.py"))  # noqa: F821
"""

# JupyterLab's own menus in Chinese for learners of the Chinese course (language pack).
_CHINESE_LAB = '{"locale": "zh_CN"}\n'
_LAB_LOCALE = Path("lab/user-settings/@jupyterlab/translation-extension/plugin.jupyterlab-settings")


@dataclass(frozen=True)
class Classroom:
    """What setup made: the folder, who is in it, the passwords it gave out this time."""

    folder: Path
    instructor: str
    learners: dict[str, str]  # user -> course language
    given: dict[str, str]  # user -> new password, for the accounts made this time
    listen: hub_config.Listen
    python: Path  # the interpreter every classroom user runs
    hub: hub_api.Outcome | None = None  # what the running hub did; None: set up the first time

    @property
    def config_file(self) -> Path:
        return self.folder / "hub" / "jupyterhub_config.py"

    @property
    def exchange(self) -> Path:
        return self.folder / "exchange"

    def course(self, lang: str) -> Path:
        """The instructor's course folder in ``lang``."""
        return Path(pwd.getpwnam(self.instructor).pw_dir) / course_id(lang)


def _write_private(path: Path, text: str, owner: pwd.struct_passwd) -> None:
    """Write a file in ``owner``'s home, owned by them, as are the folders made on the way."""
    home = Path(owner.pw_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    relative = path.relative_to(home)
    for part in [relative, *relative.parents]:
        os.chown(home / part, owner.pw_uid, owner.pw_gid, follow_symlinks=False)


def keep_from_learners(folders: tuple[Path, ...], instructor: pwd.struct_passwd) -> None:
    """Let the instructor's group, not others, enter ``folders``: a learner's server, which
    runs as the learner with the course's package, then cannot read the references or the
    solutions (a folder closed to others closes everything under it, caches included)."""
    for folder in folders:
        if folder.is_dir():
            os.chown(folder, -1, instructor.pw_gid)
            os.chmod(folder, 0o750)


def _make_exchange(exchange: Path, instructor: pwd.struct_passwd) -> None:
    """nbgrader needs the exchange writable by all; the sticky bit and course folders owned
    by the instructor keep a learner from taking a course's place before its first release."""
    exchange.mkdir(parents=True, exist_ok=True)
    os.chmod(exchange, 0o1777)
    for lang in LANGUAGES:
        folder = exchange / course_id(lang)
        folder.mkdir(exist_ok=True)
        os.chown(folder, instructor.pw_uid, instructor.pw_gid)
        os.chmod(folder, 0o755)


def _make_courses(classroom: Classroom, instructor: pwd.struct_passwd) -> list[str]:
    """One nbgrader course per language in the instructor's home; an existing one is kept."""
    made = []
    for lang in LANGUAGES:
        root = classroom.course(lang)
        if root.exists():
            continue
        course.create(root, lang, REPO / "solutions", exchange=classroom.exchange)
        accounts.give(root, instructor)
        made.append(str(root))
    return made


def register_learners(
    classroom: Classroom, instructor: pwd.struct_passwd, names: dict[str, roster.Learner]
) -> None:
    """Each learner in their course's nbgrader gradebook, with the names, e-mail and LMS id
    the class list gives (the formgrader, the export and the Canvas / Moodle files show
    them); a learner the list does not name keeps what the gradebook has."""
    course.put_interpreter_bin_on_path()  # a new gradebook runs alembic
    from nbgrader.api import Gradebook

    for lang in LANGUAGES:
        root = classroom.course(lang)
        chosen = [name for name, chosen in classroom.learners.items() if chosen == lang]
        if not chosen or not root.is_dir():
            continue
        with Gradebook(course.gradebook_url(root)) as gradebook:
            for name in chosen:
                known = names.get(name)
                fields = {}
                if known is not None:
                    fields = {
                        "first_name": known.first_name or None,
                        "last_name": known.last_name or None,
                        "email": known.email or None,
                        "lms_user_id": known.lms_user_id or None,
                    }
                gradebook.update_or_create_student(name, **fields)
        ownership.give_to_course_owner(root)  # the gradebook stays the instructor's


def set_up(
    folder: Path,
    instructor: str,
    learners: dict[str, str],
    listen: hub_config.Listen,
    python_base: Path | None = None,
    names: dict[str, roster.Learner] | None = None,
    limits: hub_config.Limits | None = None,
) -> Classroom:
    """Make (or complete) the classroom in ``folder``; return what it holds. ``names``:
    the class list's rows by user, for the gradebooks; ``limits``: each server's.

    Run again, it adds the learners given to those it has (the whole class or only the new
    ones), and to the running hub through its REST API (hub_api.py), without a restart."""
    folder = folder.resolve()
    earlier = _about(folder)
    learners = {**earlier.get("learners", {}), **learners}
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o755)
    homes = folder / "home"
    homes.mkdir(exist_ok=True)
    os.chmod(homes, 0o755)
    # Who gets a password from setup: the accounts it makes now (user -> their course).
    roles = {instructor: "instructor"} | {name: course_id(lang) for name, lang in learners.items()}
    made = {name: role for name, role in roles.items() if not accounts.exists(name)}
    binds = {**earlier.get("binds", {}), **reach.needed(folder)}
    reach.ensure(binds)
    teacher = accounts.ensure_user(instructor, homes)
    try:
        python = interpreter.for_users(folder, teacher, python_base, binds)
    except interpreter.InterpreterError:
        if instructor in made:  # a refused setup leaves no account behind
            accounts.remove(instructor)
        raise
    classroom = Classroom(folder, instructor, dict(learners), {}, listen, python)

    keep_from_learners(INSTRUCTOR_ONLY, teacher)
    _make_exchange(classroom.exchange, teacher)
    _make_courses(classroom, teacher)
    register_learners(classroom, teacher, names or {})
    _write_private(
        Path(teacher.pw_dir) / ".jupyter/nbgrader_config.py", _INSTRUCTOR_NBGRADER, teacher
    )
    home_mb = (limits or hub_config.Limits()).home_mb
    for name, lang in learners.items():
        learner = accounts.ensure_user(name, homes)
        if home_mb and name in made:  # an account that existed keeps its home as it is
            disks.give_fixed_home(folder, learner, home_mb)
        settings = _LEARNER_NBGRADER.format(
            exchange=str(classroom.exchange), course_id=course_id(lang)
        )
        _write_private(Path(learner.pw_dir) / ".jupyter/nbgrader_config.py", settings, learner)
        if lang == "zh":
            _write_private(Path(learner.pw_dir) / ".jupyter" / _LAB_LOCALE, _CHINESE_LAB, learner)

    hub = folder / "hub"
    hub.mkdir(exist_ok=True)
    os.chmod(hub, 0o700)
    token = hub_api.ensure_token(folder)
    text = hub_config.render(
        folder,
        listen,
        reach.seen_by_users(Path(sys.executable).parent, binds),
        python,
        reach.seen_by_users(CONFIG_ROOT, binds),
        instructor,
        list(learners),
        limits or hub_config.Limits(),
    )
    classroom.config_file.write_text(text, encoding="utf-8")
    os.chmod(classroom.config_file, 0o600)
    classroom = dataclasses.replace(classroom, given=passwords.give(folder, made))
    url = hub_api.api_url(listen.hub_port)
    about = {
        "instructor": instructor,
        "python": str(python),
        "learners": learners,
        "hub_api": url,
        "binds": binds,
        "course": str(reach.seen_by_users(REPO, binds)),
    }
    (folder / "classroom.json").write_text(json.dumps(about, indent=1) + "\n", encoding="utf-8")
    if earlier:  # a hub of this classroom may be running: it learns of the learners now
        secret = token.read_text(encoding="ascii").strip()
        outcome = hub_api.add_learners(earlier.get("hub_api", url), secret, list(learners))
        classroom = dataclasses.replace(classroom, hub=outcome)
    return classroom


def _about(folder: Path) -> dict:
    """What an earlier setup of ``folder`` recorded in classroom.json ({} if none)."""
    try:
        found = json.loads((folder / "classroom.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}
