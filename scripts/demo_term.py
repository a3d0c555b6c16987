"""A demo term: N learners x the lessons, graded honestly through `course-grade`, then measured.

It shows that a class of 200 learners over eight lessons grades through the course's own
commands, and that `course-grade export` and `report` for the whole term stay small next to
grading. Two courses (en and zh) are made with `course-grade create`; learners are registered
with names (`nbgrader db student import`); each lesson gets a due date (`nbgrader db assignment
add --duedate`). Each learner hands in, per lesson, the learner notebook with every exercise's
solution cell replaced by a catalogued answer (tests/catalog: the lesson's solution and RIGHT
answers are right, WRONG answers wrong), drawn with a seeded RNG from the learner's level: some
mostly right, some mostly wrong, a few blank or not submitted, a few late, a few written
answers left for hand grading. Submissions lie where nbgrader's collect puts them, with
timestamp.txt. Then it grades each course (all lessons in one run), exports and reports the
term (both languages), and prints wall time and peak memory of each step:

    .venv/bin/python scripts/demo_term.py [--learners 200] [--lessons 01 02 ...] [--with-09]
        [--seed 1] [--keep DIR] [--machines]

``--machines`` grades the term on a Dask cluster instead, as across machines: by one worker
process on a core of its own, then by two.

Grading is most of its time: the full term (1,553 submissions) took 58 minutes on this
project's 2-core machine, shared with other work (2.26 s per submission; the README's table).
"""

from __future__ import annotations

import argparse
import csv
import importlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from autograder.grader import demo  # noqa: E402

BIN = Path(sys.executable).parent
LANGUAGES = ("en", "zh")
DEFAULT_LESSONS = ("01", "02", "03", "04", "05", "06", "07", "08")
FIRST_DUE = datetime(2026, 9, 14, 12, 0, tzinfo=UTC)  # lesson k is due a week after lesson k-1
SHOWN = 10  # disagreements with the catalogue printed in full
MANIFEST = "demo_term.json"  # beside the two courses: what each learner handed in

# Levels of learners: (name, share of the class, chance that an exercise is answered right).
LEVELS = (("strong", 0.45, 0.92), ("middling", 0.35, 0.65), ("struggling", 0.20, 0.3))
BOTH_COURSES = 0.1  # share of learners registered in both courses
ZH_ONLY = 0.4  # share of the others in the Chinese course
NOT_SUBMITTED = 0.03  # chance a learner hands in nothing for a lesson
BLANK = 0.02  # chance a learner hands in the notebook as released
SKIPPED = 0.04  # chance a learner leaves one exercise as released
LATE = 0.06  # chance a submission comes after the due date
WRITTEN = 0.08  # chance a learner writes a written answer (left for the hand grade)
WRITTEN_ANSWER = {
    "en": "Because gradients only flow where requires_grad is set, as the lesson shows.",
    "zh": "因为只有设置了 requires_grad 的张量才会有梯度，正如本课所示。",
}
FAMILY = {
    "en": ("Smith", "Jones", "Brown", "Taylor", "Wilson", "Evans", "Walker", "Roberts"),
    "zh": ("王", "李", "张", "刘", "陈", "杨", "赵", "黄"),
}
GIVEN = {
    "en": ("Alice", "Ben", "Chloe", "David", "Emma", "Farid", "Grace", "Hugo", "Isla", "Jun"),
    "zh": ("伟", "芳", "娜", "敏", "静", "磊", "洋", "艳", "勇", "婷"),
}


@dataclass
class Learner:
    """One learner of the term: who they are and where they are registered."""

    student: str
    first_name: str
    last_name: str
    courses: tuple[str, ...]  # course languages
    level: str
    right: float  # chance an exercise is answered right


@dataclass
class Handed:
    """What one learner handed in for one lesson, in one course."""

    course: str
    lesson: str
    student: str
    kind: str  # "submitted", "blank" (the notebook as released) or "not submitted"
    timestamp: str = ""
    late: bool = False
    answers: dict[str, str] = field(default_factory=dict)  # grade_id: "right:NAME" / "wrong:…"


def _run(*command: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    return done


def lesson_names(prefixes: list[str]) -> list[str]:
    """The lesson folders of solutions/ whose names start with the given numbers."""
    found = sorted(p.name for p in (REPO / "solutions").iterdir() if p.is_dir())
    chosen = [name for name in found if name.split("_", 1)[0] in prefixes]
    missing = set(prefixes) - {name.split("_", 1)[0] for name in chosen}
    if missing:
        sys.exit(f"no lesson {', '.join(sorted(missing))} in solutions/")
    return chosen


def _answers(source_root: Path, lesson: str) -> tuple[dict, dict]:
    """Right and wrong answers by grade_id: {gid: {name: code}}, wrong on CPU and CUDA alike.

    Right: the lesson's solution and the catalogue's RIGHT answers; wrong: its WRONG ones.
    Only answers that behave the same on every device: the term may be graded on a GPU.
    """
    source = nbformat.read(str(source_root / "source" / lesson / f"{lesson}.ipynb"), 4)
    demo._catalog_package()
    catalogue = importlib.import_module(f"catalog.lesson{lesson.split('_', 1)[0]}")
    right: dict[str, dict[str, str]] = {}
    for gid, cell in demo._cells(source).items():
        if cell.metadata["nbgrader"].get("solution") and cell.cell_type == "code":
            right[gid] = {"solution": cell.source}
    wrong: dict[str, dict[str, str]] = {gid: {} for gid in right}
    for table, into in ((catalogue.RIGHT, right), (catalogue.WRONG, wrong)):
        for gid, answers in table.items():
            for answer in answers:
                if gid in into and {"cpu", "cuda"} <= set(answer.devices):
                    into[gid][answer.name] = answer.code
    return right, wrong


def _written(release) -> list[str]:
    return [
        gid
        for gid, cell in demo._cells(release).items()
        if cell.cell_type == "markdown" and cell.metadata["nbgrader"].get("solution")
    ]


def roster(count: int, rng: random.Random) -> list[Learner]:
    """``count`` learners with names, levels and courses (a few in both)."""
    learners = []
    for k in range(1, count + 1):
        if rng.random() < BOTH_COURSES:
            courses = LANGUAGES
        else:
            courses = ("zh",) if rng.random() < ZH_ONLY else ("en",)
        names = courses[0]
        level = rng.choices(LEVELS, weights=[w for _, w, _ in LEVELS])[0]
        learners.append(
            Learner(
                f"learner{k:03d}",
                rng.choice(GIVEN[names]),
                rng.choice(FAMILY[names]),
                courses,
                level[0],
                level[2],
            )
        )
    return learners


def _register(root: Path, learners: list[Learner], lessons: list[str]) -> None:
    """Names into the gradebook and each lesson's due date, as the instructor types them."""
    table = root / "students.csv"
    with table.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "first_name", "last_name", "email"])
        for learner in learners:
            writer.writerow(
                [
                    learner.student,
                    learner.first_name,
                    learner.last_name,
                    f"{learner.student}@example.org",
                ]  # fmt: skip
            )
    _run(str(BIN / "nbgrader"), "db", "student", "import", str(table), cwd=root)
    for k, lesson in enumerate(lessons):
        due = due_date(k)
        _run(str(BIN / "nbgrader"), "db", "assignment", "add", lesson, f"--duedate={due}", cwd=root)


def due_date(index: int) -> str:
    """The due date of the index-th lesson of the term, as nbgrader's --duedate takes it."""
    return (FIRST_DUE + timedelta(weeks=index)).strftime("%Y-%m-%d %H:%M:%S UTC")


def _stamp(when: datetime) -> str:
    """A time as `nbgrader submit` writes it in timestamp.txt."""
    return when.strftime("%Y-%m-%d %H:%M:%S.%f UTC")


def _hand_in(learner: Learner, lang: str, lesson: str, index: int, rng, parts) -> tuple:
    """One learner's notebook of one lesson (or None) and what it holds."""
    release, right, wrong, written = parts
    handed = Handed(lang, lesson, learner.student, "submitted")
    if rng.random() < NOT_SUBMITTED:
        handed.kind = "not submitted"
        return None, handed
    due = FIRST_DUE + timedelta(weeks=index)
    handed.late = rng.random() < LATE
    offset = timedelta(minutes=rng.randint(30, 3 * 24 * 60))
    handed.timestamp = _stamp(due + offset if handed.late else due - offset)
    if rng.random() < BLANK:
        handed.kind = "blank"
        return release, handed
    chosen = {}
    skipped = rng.choice(list(right)) if rng.random() < SKIPPED else None
    for gid in right:
        if gid == skipped:
            handed.answers[gid] = "blank"
            continue
        verdict = "right" if rng.random() < learner.right or not wrong[gid] else "wrong"
        name = rng.choice(sorted((right if verdict == "right" else wrong)[gid]))
        chosen[gid] = (right if verdict == "right" else wrong)[gid][name]
        handed.answers[gid] = f"{verdict}:{name}"
    for gid in written:
        if rng.random() < WRITTEN:
            chosen[gid] = WRITTEN_ANSWER[lang]
            handed.answers[gid] = "written"
    return demo._with(release, chosen), handed


def build(base: Path, learners: int, lessons: list[str], seed: int) -> list[Handed]:
    """Make both courses under ``base`` and fill their submitted/ folders; return what went in.

    The same seed gives the same term. What each learner handed in is also written to
    ``base/demo_term.json``.
    """
    rng = random.Random(seed)
    people = roster(learners, rng)
    handed_in: list[Handed] = []
    term = base / "solutions"  # the term's lessons only: the term export holds every lesson
    term.mkdir()
    for lesson in lessons:
        (term / lesson).symlink_to(REPO / "solutions" / lesson, target_is_directory=True)
    for lang in LANGUAGES:
        root = base / lang
        _run(
            str(BIN / "course-grade"), "create", str(root), "--lang", lang, "--solutions", str(term)
        )
        _register(root, [p for p in people if lang in p.courses], lessons)
    for index, lesson in enumerate(lessons):
        parts = {}
        for lang in LANGUAGES:
            root = base / lang
            release = nbformat.read(str(root / "release" / lesson / f"{lesson}.ipynb"), 4)
            parts[lang] = (release, *_answers(root, lesson), _written(release))
        for learner in people:
            # A learner in both courses hands in each lesson in one of them.
            lang = rng.choice(learner.courses)
            nb, handed = _hand_in(learner, lang, lesson, index, rng, parts[lang])
            handed_in.append(handed)
            if nb is None:
                continue
            folder = base / lang / "submitted" / learner.student / lesson
            folder.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, str(folder / f"{lesson}.ipynb"))
            (folder / "timestamp.txt").write_text(handed.timestamp, encoding="utf-8")
    (base / MANIFEST).write_text(
        json.dumps([vars(h) for h in handed_in], ensure_ascii=False, indent=0), encoding="utf-8"
    )
    return handed_in


@dataclass
class Step:
    """One measured command: wall time, peak memory (its largest process), exit status."""

    name: str
    seconds: float
    peak_mib: float
    returncode: int
    output: str


# Forks the command from a small process and reports its rusage: on Linux a child's ru_maxrss
# starts at its parent's resident size at the fork (kept across exec), so a command forked from
# this script would count the script's memory as its own.
_TIMER = (
    "import os, sys\n"
    "pid = os.fork()\n"
    "if pid == 0:\n"
    "    os.execvp(sys.argv[2], sys.argv[2:])\n"
    "_, status, usage = os.wait4(pid, 0)\n"
    "open(sys.argv[1], 'w').write(str(usage.ru_maxrss))\n"
    "sys.exit(os.waitstatus_to_exitcode(status) % 256)\n"
)


def measure(name: str, *command: str) -> Step:
    """Run a command; measure its wall time and the resident peak of its largest process.

    ``ru_maxrss`` (from wait4) covers the command and its descendants, the largest one of
    them, not all together.
    """
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    with tempfile.TemporaryDirectory() as scratch:
        peak = Path(scratch) / "maxrss"
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-c", _TIMER, str(peak), *command],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            check=False,
        )
        seconds = time.perf_counter() - started
        kib = int(peak.read_text()) if peak.exists() else 0
    return Step(name, seconds, kib / 1024, done.returncode, done.stdout)


def term_rows(term_csv: Path) -> list[dict]:
    """The rows of the term export: one per learner, every lesson's columns side by side."""
    with term_csv.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def statuses(rows: list[dict]) -> Counter:
    """How many learner-lessons of the term export ended in each status."""
    columns = [c for c in (rows[0] if rows else {}) if c.endswith(":status")]
    return Counter(row[c] or "(none)" for row in rows for c in columns)


def disagreements(rows: list[dict], handed_in: list[Handed]) -> list[str]:
    """Exercises whose points say otherwise than the catalogue: a right answer that scored 0,
    a wrong or blank one that scored. Only submissions graded in full are compared."""
    by_student = {row["student"]: row for row in rows}
    found = []
    for handed in handed_in:
        row = by_student.get(handed.student, {})
        if handed.kind != "submitted" or row.get(f"{handed.lesson}:status") != "graded":
            continue
        for gid, answer in handed.answers.items():
            points = row.get(f"{handed.lesson}:{gid}_tests")
            if answer == "written" or points is None:
                continue
            if answer.startswith("right:") == (points in ("0", "")):
                found.append(
                    f"{handed.course} {handed.student} {handed.lesson} {gid}: {answer} → {points}"
                )
    return found


def run_term(base: Path, lessons: list[str]) -> tuple[list[Step], list[dict]]:
    """Grade both courses, export and report the term; every step measured."""
    cli = str(BIN / "course-grade")
    en, zh = base / "en", base / "zh"
    steps = [
        measure(f"grade {lang}", cli, "grade", str(base / lang), *lessons) for lang in LANGUAGES
    ]
    for step in steps:
        if step.returncode not in (0, 1):  # 1: some submissions ended in error, said in export
            sys.exit(f"{step.name} failed:\n{step.output[-3000:]}")
    steps.append(measure("export term", cli, "export", str(en), "--term", "--with-course", str(zh)))
    for lang, root, other in (("en", en, zh), ("zh", zh, en)):
        steps.append(
            measure(
                f"report term {lang}",
                cli,
                "report",
                str(root),
                "--term",
                "--with-course",
                str(other),
                "--lang",
                lang,
            )  # fmt: skip
        )
    for step in steps[len(LANGUAGES) :]:
        if step.returncode != 0:
            sys.exit(f"{step.name} failed:\n{step.output[-3000:]}")
    return steps, term_rows(en / "grading" / "term.csv")


def machines(base: Path, lessons: list[str], submitted: int) -> str:
    """Grading across machines, on one: the term graded on a Dask cluster by one worker
    process, then by two, each confined to a core of its own (a one-core machine of its
    own; scripts/local_cluster.py). Each cluster grades the term twice: its first run
    imports torch, nbgrader and the course in every worker, the second finds them there.
    Linear in workers: two workers grade the term in half the time of one."""
    from load_validate import busy_cpu_s
    from local_cluster import dask_cluster, stop

    cli = str(BIN / "course-grade")
    lines, warm = [], {}
    for workers in (1, 2):
        address, started = dask_cluster(workers, own_cores=True)
        try:
            for run_name in ("first run", "again"):
                for lang in LANGUAGES:
                    for folder in ("autograded", "feedback", "grading"):
                        shutil.rmtree(base / lang / folder, ignore_errors=True)
                before, clock = busy_cpu_s(), time.perf_counter()
                for lang in LANGUAGES:
                    step = measure("grade", cli, "grade", str(base / lang), *lessons,
                                   "--scheduler", address)  # fmt: skip
                    if step.returncode not in (0, 1):
                        sys.exit(f"grading on {workers} workers failed:\n{step.output[-3000:]}")
                seconds, busy = time.perf_counter() - clock, busy_cpu_s() - before
                warm[workers] = seconds
                lines.append(
                    f"{workers} one-core worker{'s' if workers > 1 else ' '}, {run_name:9s}: "
                    f"{seconds:6.1f} s, {60 * submitted / seconds:5.1f} submissions/min, "
                    f"{busy:6.1f} busy core-s ({busy / seconds:4.2f} cores busy)"
                )
        finally:
            stop(started)
    lines.append(f"two one-core workers / one (second runs): {warm[1] / warm[2]:4.2f}x faster")
    return "\n".join(lines)


def table(steps: list[Step], handed_in: list[Handed], rows: list[dict]) -> str:
    """The measurements and the term's outcome as a small text table."""
    submitted = [h for h in handed_in if h.kind != "not submitted"]
    lines = [f"{'step':<16}{'wall s':>10}{'peak MiB':>10}{'exit':>6}"]
    for step in steps:
        lines.append(
            f"{step.name:<16}{step.seconds:>10.1f}{step.peak_mib:>10.0f}{step.returncode:>6}"
        )
    grading = sum(s.seconds for s in steps if s.name.startswith("grade"))
    lines += [
        f"submissions: {len(submitted)} ({sum(h.late for h in submitted)} late, "
        f"{sum(h.kind == 'blank' for h in submitted)} blank, "
        f"{sum('written' in h.answers.values() for h in submitted)} with a written answer), "
        f"not submitted: {len(handed_in) - len(submitted)}",
        f"grading: {grading:.1f} s, {grading / max(len(submitted), 1):.2f} s per submission "
        f"({len(os.sched_getaffinity(0))} cores, load average now {os.getloadavg()[0]:.1f})",
        "term statuses: " + ", ".join(f"{n} {s}" for s, n in sorted(statuses(rows).items())),
    ]
    odd = disagreements(rows, handed_in)
    answers = sum(a != "written" for h in submitted for a in h.answers.values())
    lines.append(f"points that disagree with the catalogue: {len(odd)} of {answers} answers")
    return "\n".join(lines + [f"  {line}" for line in odd[:SHOWN]])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=200, help="learners in the term")
    parser.add_argument(
        "--lessons", nargs="+", default=list(DEFAULT_LESSONS), help="lesson numbers (01 02 …)"
    )
    parser.add_argument("--with-09", action="store_true", help="add lesson 09 to the term")
    parser.add_argument("--seed", type=int, default=1, help="seed of the learners' answers")
    parser.add_argument("--keep", type=Path, help="build the term here and keep it")
    parser.add_argument(
        "--machines",
        action="store_true",
        help="instead of one run: grade the term on 1, then 2 Dask workers, a core each",
    )
    args = parser.parse_args(argv)
    prefixes = [*args.lessons, *(["09"] if args.with_09 else [])]
    lessons = lesson_names(list(dict.fromkeys(prefixes)))
    base = args.keep or Path(tempfile.mkdtemp(prefix="demo-term-"))
    if args.keep and any(base.iterdir() if base.exists() else ()):
        sys.exit(f"{base} is not empty")
    base.mkdir(parents=True, exist_ok=True)
    try:
        started = time.perf_counter()
        handed_in = build(base, args.learners, lessons, args.seed)
        print(f"built the term in {time.perf_counter() - started:.1f} s under {base}")
        if args.machines:
            submitted = sum(h.kind != "not submitted" for h in handed_in)
            print(f"{submitted} submissions")
            print(machines(base, lessons, submitted))
            return 0
        steps, rows = run_term(base, lessons)
        print(table(steps, handed_in, rows))
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
