"""``course-grade``: create a course, grade a class, export grades, send feedback.

Every subcommand works on an ordinary nbgrader course directory, so nbgrader's
own commands and the formgrader keep working alongside it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import NoReturn

from autograder import course
from autograder.grader import quick_exit
from autograder.grader.pipeline import ownership, runner, submission
from autograder.grader.reports import export
from autograder.grader.sandbox import bwrap, cgroups, forked, huge_pages
from autograder.grader.sandbox.limits import Limits

REPO = Path(__file__).resolve().parents[2]
ERRORS_SHOWN = 10  # submissions that ended in error, named with their reason


def _create(args) -> int:
    names = course.create(args.course, args.lang, args.solutions, exchange=args.exchange)
    print(f"Created an nbgrader course ({args.lang}) in {args.course} with: {', '.join(names)}")
    print("Release files are in release/; run `jupyter lab` there to use the formgrader.")
    return 0


def _cuda_present() -> bool:
    import torch

    return torch.cuda.is_available()


def _loud(message: str) -> None:
    print("\n" + "!" * 78 + "\n" + message + "\n" + "!" * 78 + "\n", file=sys.stderr)


def _grade(args) -> int:
    root = args.course.resolve()
    if args.sandbox == "none" and not args.unsafe:
        print("course-grade: --sandbox none runs learner code unconfined; it needs --unsafe.")
        return 2
    missing = bwrap.missing_protections(root)
    if args.scheduler:  # each Dask worker makes the submissions' cgroups in its own
        missing.pop("cgroup", None)
    if args.sandbox == "none":
        missing.setdefault("bubblewrap", "--sandbox none was given.")
    if missing and not args.unsafe:
        print(
            "course-grade: refusing to run learner code, because this machine lacks:\n"
            + "\n".join(f"  - {problem}" for problem in missing.values())
            + "\nFix these (see README, 'What grading needs from the machine'), or pass "
            "--unsafe to grade without them on a machine you can afford to lose.",
            file=sys.stderr,
        )
        return 2
    if missing:
        _loud(
            "WARNING: --unsafe: grading WITHOUT these protections; learner code may read or "
            "change course files, other submissions and anything this user can reach:\n"
            + "\n".join(f"  - {problem}" for problem in missing.values())
        )
    bubblewrap = "bubblewrap" not in missing
    memory = args.memory_mb * 1024**2
    address_space = True
    if not bubblewrap and _cuda_present():
        address_space = False
        _loud(
            "WARNING: a CUDA GPU is visible to unsandboxed kernels; CUDA reserves far more "
            "virtual memory than it uses, so the per-process address-space limit is off."
        )
    limits = Limits(
        args.cell_timeout,
        memory,
        args.processes,
        args.notebook_timeout,
        args.scratch_mb * 1024**2,
        args.scratch_mb * 1024**2 // 4,
        address_space,
    )
    confinement = bwrap.Confinement(
        limits, bubblewrap=bubblewrap, landlock=bubblewrap and "landlock" not in missing
    )
    parent = None if "cgroup" in missing or args.scheduler else cgroups.find_parent()
    bounds = submission.Bounds(args.max_files, args.max_submission_mb * 1024**2)
    bad = [s for s in args.student or [] if not submission.valid_learner_id(s)]
    if bad:
        print(f"error: not a valid learner id: {bad[0]!r}", file=sys.stderr)
        return 2
    # On Dask a worker process has a core of its own (README), its kernel and observer share it.
    threads = 1 if args.scheduler else runner.kernel_threads(args.workers)
    graded_here = isinstance(parent, cgroups.CgroupParent)
    pairs = [
        (assignment, student)
        for assignment in args.assignments
        for student in args.student or submission.students(root, assignment)
    ]
    if pairs and not args.scheduler:  # the run's zygote imports while this process does
        lessons = forked.shipped_lessons(args.assignments)
        many = len(pairs) >= huge_pages.WORTH_IT_FROM
        forked.start_early(confinement, threads, graded_here, lessons, huge_pages=many)
    from autograder.grader.pipeline.worker import Task  # imports torch and nbgrader: only to grade

    tasks = [
        Task(
            str(root),
            assignment,
            student,
            confinement,
            parent if graded_here else None,
            bounds,
            threads,
            worker_cgroup=bool(args.scheduler) and not args.unsafe,
        )
        for assignment, student in pairs
    ]
    where = f"Dask at {args.scheduler}" if args.scheduler else f"{args.workers} workers"
    if graded_here:
        cgroup = f"v{parent.version}"
    else:
        cgroup = "the workers'" if args.scheduler and not args.unsafe else "none"
    print(
        f"Grading {len(tasks)} submissions of {', '.join(args.assignments)} ({where}, "
        f"sandbox: {confinement.kind}, cgroup: {cgroup})",
        file=sys.stderr,
    )
    try:
        results = runner.run(
            tasks, args.workers, args.scheduler, args.tls, probe=not args.scheduler
        )
    except runner.NotReady as refused:
        print(
            f"course-grade: refusing to grade, because grading cannot work here: {refused}\n"
            "Every submission would end in `error`. Check the limits (--memory-mb, "
            "--processes, --scratch-mb) and that the Python environment and the package "
            "are complete; see README, 'What grading needs from the machine'.",
            file=sys.stderr,
        )
        return 2
    counts: dict[str, int] = {}
    for record in results:
        counts[record.status] = counts.get(record.status, 0) + 1
    print("Done: " + ", ".join(f"{n} {status}" for status, n in sorted(counts.items())))
    return _errors(results)


def _errors(results) -> int:
    """1 when a submission ended in ``error`` (grading itself failed: regrade it once the
    cause is fixed), after naming them and why; else 0."""
    failed = [r for r in results if r.status == "error"]
    for record in failed[:ERRORS_SHOWN]:
        print(f"error: {record.student}/{record.notebook}: {record.reason}", file=sys.stderr)
    if len(failed) > ERRORS_SHOWN:
        print(f"error: … and {len(failed) - ERRORS_SHOWN} more; see `export`", file=sys.stderr)
    return 1 if failed else 0


def _export(args) -> int:
    from autograder.grader.reports import gradebook_rows, lms

    courses = [args.course.resolve(), *(c.resolve() for c in args.with_course)]
    if args.term == bool(args.assignment):
        print("course-grade export: give one assignment, or --term (not both)", file=sys.stderr)
        return 2
    ids = dict(item.split("=", 1) for item in args.canvas_assignment)
    name = "term" if args.term else args.assignment
    target = args.output or args.course / "grading" / f"{name}.csv"
    if args.term:
        rows = gradebook_rows.term_rows(courses)
        written = export.write_table(*export.term_table(rows), target)
    else:
        rows = [r for c in courses for r in gradebook_rows.lesson_rows(c, args.assignment)]
        written = export.write_table(*export.lesson_table(rows), target)
    print(written)
    print(lms.write_canvas(rows, target.with_name(f"{target.stem}-canvas.csv"), ids))
    print(lms.write_moodle(rows, target.with_name(f"{target.stem}-moodle.csv")))
    return 0


def _lesson_id(text: str) -> str:
    lesson, _, known = text.partition("=")
    if not lesson or not known.strip().isdigit():
        raise argparse.ArgumentTypeError(f"expected LESSON=ID (a number), not {text!r}")
    return text


def _feedback(args) -> int:
    from autograder.grader.reports import feedback

    written = feedback.generate(args.course.resolve(), args.assignment, args.student)
    print(f"Wrote feedback for {len(written)} submissions under {args.course / 'feedback'}")
    return 0


def _report(args) -> int:
    from autograder.grader.reports import report

    if args.term == bool(args.assignment):
        print("course-grade report: give one assignment, or --term (not both)", file=sys.stderr)
        return 2
    written = report.write(
        args.course.resolve(),
        None if args.term else args.assignment,
        args.output,
        with_courses=args.with_course,
        lang=args.lang,
    )
    print(written)
    return 0


def _demo_class(args) -> int:
    from autograder.grader import demo

    expectations = demo.build(args.course.resolve(), args.assignment)
    print(
        f"Wrote {len(expectations)} demo submissions under {args.course / 'submitted'} "
        f"and what grading must conclude in {demo.expectations_path(args.course, args.assignment)}"
    )
    return 0


def _assignment_command(
    sub, name, run, summary, description, several: bool = False
) -> argparse.ArgumentParser:
    """A subcommand that works on one assignment of one course (or several, in one run)."""
    command = sub.add_parser(name, help=summary, description=description)
    command.add_argument("course", type=Path, help="the nbgrader course directory")
    if several:
        command.add_argument(
            "assignments",
            nargs="+",
            metavar="assignment",
            help="assignment (lesson) names, e.g. 01_requires_grad 02_no_grad; several are "
            "graded in one run, sharing its workers",
        )
    else:
        command.add_argument("assignment", help="assignment (lesson) name, e.g. 01_requires_grad")
    command.set_defaults(run=run)
    return command


def _lesson_or_term(command: argparse.ArgumentParser, joined: str) -> None:
    """The arguments export and report share: a course, and a lesson or the whole term."""
    command.add_argument("course", type=Path, help="the nbgrader course directory")
    command.add_argument("assignment", nargs="?", help="assignment (lesson) name")
    command.add_argument("--term", action="store_true", help="every lesson of the course")
    command.add_argument(
        "--with-course",
        type=Path,
        action="append",
        default=[],
        help="another course of the same class (the other language); its learners join the "
        f"same {joined} (repeatable)",
    )


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(prog="course-grade", description=__doc__.splitlines()[0])
    sub = main.add_subparsers(dest="command", required=True)

    create = sub.add_parser(
        "create",
        help="make an nbgrader course from solutions/",
        description="Make an nbgrader course directory in one language.",
    )
    create.add_argument("course", type=Path, help="course directory to create or update")
    create.add_argument("--lang", choices=("en", "zh"), default="en", help="course language")
    create.add_argument(
        "--solutions",
        type=Path,
        default=REPO / "solutions",
        help="bilingual lesson sources (default: the repository's solutions/)",
    )
    create.add_argument(
        "--exchange", type=Path, help="nbgrader exchange folder (default: exchange/ in the course)"
    )
    create.set_defaults(run=_create)

    grade = _assignment_command(
        sub,
        "grade",
        _grade,
        "autograde every submission, in parallel and sandboxed",
        "Autograde submitted/<student>/<assignment> with nbgrader. Exit status: 0 when "
        "grading ran for every submission, 1 when any ended in `error` (named on stderr, "
        "with the reason), 2 when grading was refused before it began.",
        several=True,
    )
    grade.add_argument("--student", action="append", help="grade only this learner (repeatable)")
    grade.add_argument(
        "--workers",
        type=int,
        default=runner.default_workers(),
        help="local worker processes (default: one per core)",
    )
    grade.add_argument("--scheduler", help="Dask scheduler address: run tasks there instead")
    grade.add_argument(
        "--tls",
        type=Path,
        help="with --scheduler: the folder of the cluster's TLS certificate and key "
        "(course-classroom cluster prints it)",
    )
    grade.add_argument(
        "--cell-timeout",
        type=int,
        default=Limits.cell_timeout_s,
        help="seconds a cell may run before it is stopped (default: %(default)s)",
    )
    grade.add_argument(
        "--notebook-timeout",
        type=int,
        default=Limits.notebook_timeout_s,
        help="seconds a whole notebook may take, restarts and replays included; the cells "
        "left when it runs out are not run (default: %(default)s)",
    )
    grade.add_argument(
        "--memory-mb",
        type=int,
        default=Limits.memory_bytes // 1024**2,
        help="memory of a whole submission, all its processes together, in MiB "
        "(default: %(default)s)",
    )
    grade.add_argument(
        "--processes",
        type=int,
        default=Limits.processes,
        help="processes a submission may have at once (default: %(default)s)",
    )
    grade.add_argument(
        "--scratch-mb",
        type=int,
        default=Limits.scratch_bytes // 1024**2,
        help="size of a kernel's writable /tmp in MiB; /dev/shm gets a quarter "
        "(default: %(default)s)",
    )
    grade.add_argument(
        "--max-files",
        type=int,
        default=submission.Bounds.max_files,
        help="files and folders a submission folder may hold before it is rejected unread "
        "(default: %(default)s)",
    )
    grade.add_argument(
        "--max-submission-mb",
        type=int,
        default=submission.Bounds.max_bytes // 1024**2,
        help="bytes a submission folder may hold, in MiB (default: %(default)s)",
    )
    grade.add_argument(
        "--sandbox",
        choices=("bubblewrap", "none"),
        default="bubblewrap",
        help="bubblewrap (the default), or none, which needs --unsafe",
    )
    grade.add_argument(
        "--unsafe",
        action="store_true",
        help="grade even where the machine lacks a protection (sandbox, Landlock, cgroups), "
        "with a loud warning; never on a machine that holds anything you care about",
    )

    csv_export = sub.add_parser(
        "export",
        help="grades as CSV (per lesson or the term) and Canvas / Moodle import files",
        description="Write one CSV row per learner and notebook of a lesson (or, with --term, "
        "one per learner for every lesson), and beside it <name>-canvas.csv and "
        "<name>-moodle.csv for an LMS's grade import (README: 'Term outputs').",
    )
    _lesson_or_term(csv_export, "roster")
    csv_export.add_argument(
        "--canvas-assignment",
        action="append",
        default=[],
        metavar="LESSON=ID",
        type=_lesson_id,
        help="the Canvas assignment id a lesson's column fills (repeatable; without one, "
        "Canvas creates the assignment or lets you match it)",
    )
    csv_export.add_argument(
        "--output", type=Path, help="CSV path (default: grading/<assignment>.csv or term.csv)"
    )
    csv_export.set_defaults(run=_export)

    feedback = _assignment_command(
        sub,
        "feedback",
        _feedback,
        "per-learner feedback HTML, no hidden tests",
        "Generate feedback in the course language.",
    )
    feedback.add_argument("--student", help="only this learner")

    class_report = sub.add_parser(
        "report",
        help="HTML class report (per lesson or the term): scores, misconceptions, who needs a look",
        description="Write one self-contained HTML page (figures embedded, opens offline) for a "
        "lesson, or with --term for every lesson: score histograms, exercise difficulty and the "
        "misconceptions behind lost points, a sortable learner table linking each feedback page, "
        "misconceptions across lessons, and what needs attention (README: 'Term outputs').",
    )
    _lesson_or_term(class_report, "report")
    class_report.add_argument(
        "--lang",
        choices=("en", "zh"),
        help="the report's language (default: the first course's language)",
    )
    class_report.add_argument(
        "--output",
        type=Path,
        help="HTML path (default: grading/<assignment or term>-report.html in the course's "
        "language, ...-report-<lang>.html in the other)",
    )
    class_report.set_defaults(run=_report)

    _assignment_command(
        sub,
        "demo-class",
        _demo_class,
        "write a demo class: right, wrong and hostile submissions",
        "Fill submitted/ with a demo class and its expected grading outcomes.",
    )
    return main


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.run(args)
    finally:  # root's files in an instructor's course become the instructor's
        ownership.give_to_course_owner(args.course.resolve())


def entry() -> NoReturn:
    """The ``course-grade`` command: ``main``, then leave at once (quick_exit.py)."""
    quick_exit.exit_now(main())


if __name__ == "__main__":
    entry()
