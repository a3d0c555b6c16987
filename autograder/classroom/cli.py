"""``course-classroom``: set up a local classroom, start its JupyterHub, start a Dask cluster."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from autograder.classroom import (
    accounts,
    disks,
    hub_config,
    interpreter,
    passwords,
    reach,
    roster,
)

BIN = Path(sys.executable).parent


def _learners(args) -> dict[str, str]:
    chosen = {row.user: row.lang for row in args.listed}
    chosen |= {name: "en" for name in args.learners} | {name: "zh" for name in args.zh_learners}
    bad = [name for name in [args.instructor, *chosen] if not accounts.valid_name(name)]
    if bad:
        raise SystemExit(f"course-classroom: not a portable user name: {bad[0]!r}")
    return chosen


def _setup(args) -> int:
    from autograder.classroom import setup

    try:
        args.listed = roster.read(args.roster) if args.roster else []
    except (OSError, roster.RosterError) as error:
        print(f"course-classroom: {error}", file=sys.stderr)
        return 2
    learners = _learners(args)
    if os.geteuid() != 0:
        print(
            "course-classroom setup needs root: it makes the classroom's Unix accounts, and "
            "JupyterHub starts each person's server as their own user.",
            file=sys.stderr,
        )
        return 2
    listen = hub_config.Listen(args.ip, args.port, args.hub_port, args.proxy_api_port)
    try:
        names = {row.user: row for row in args.listed}
        limits = hub_config.Limits(
            args.memory, args.processes, args.tmp_mb, args.home_mb, args.cpus
        )
        classroom = setup.set_up(
            args.folder, args.instructor, learners, listen, args.python, names, limits
        )
    except (
        accounts.AccountError,
        interpreter.InterpreterError,
        reach.ReachError,
        disks.DiskError,
    ) as error:
        print(f"course-classroom: {error}", file=sys.stderr)
        return 2
    print(f"Classroom in {classroom.folder}")
    print(f"  instructor: {classroom.instructor} (formgrader; courses in", end=" ")
    print(f"{classroom.course('en')} and {classroom.course('zh')})")
    for lang in setup.LANGUAGES:
        names = [name for name, chosen in classroom.learners.items() if chosen == lang]
        print(f"  learners of {setup.course_id(lang)}: {', '.join(names) or '-'}")
    print(f"  exchange: {classroom.exchange}")
    print("  log-in: each person's own account password (PAM)")
    listed = passwords.path(classroom.folder)
    print(f"  new passwords for {', '.join(classroom.given) or 'nobody'}: in {listed} (root only)")
    if classroom.hub is not None:
        print("\n".join(classroom.hub.said()))
    print(f"Start it with: course-classroom start {classroom.folder}")
    print(f"Then open http://{listen.ip}:{listen.port}/")
    return 0


def _binds(folder: Path) -> dict[str, str]:
    """The bind mounts an earlier setup of ``folder`` made (reach.py)."""
    import json

    try:
        about = json.loads((folder.resolve() / "classroom.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    binds = about.get("binds", {}) if isinstance(about, dict) else {}
    return binds if isinstance(binds, dict) else {}


def _start(args) -> int:
    hub = args.folder.resolve() / "hub"
    config = hub / "jupyterhub_config.py"
    if not config.is_file():
        print(f"course-classroom: no classroom in {args.folder} (run setup first)", file=sys.stderr)
        return 2
    try:
        reach.ensure(_binds(args.folder))  # gone after a reboot
        disks.mount_all(args.folder.resolve())
    except (reach.ReachError, disks.DiskError) as error:
        print(f"course-classroom: {error}", file=sys.stderr)
        return 2
    os.chdir(hub)
    command = [str(BIN / "jupyterhub"), "-f", str(config), *args.hub_args]
    os.execve(command[0], command, dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}"))


def _cluster(args) -> int:
    from autograder.classroom import cluster

    if not (args.folder / "classroom.json").is_file():
        print(f"course-classroom: no classroom in {args.folder} (run setup first)", file=sys.stderr)
        return 2
    try:
        reach.ensure(_binds(args.folder))
    except reach.ReachError as error:
        print(f"course-classroom: {error}", file=sys.stderr)
        return 2
    return cluster.run(args.folder.resolve(), args.workers, args.host, args.port)


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(prog="course-classroom", description=__doc__.splitlines()[0])
    sub = main.add_subparsers(dest="command", required=True)

    setup = sub.add_parser(
        "setup",
        help="make accounts, the exchange, both courses and JupyterHub's configuration (root)",
        description="Set up a local classroom in FOLDER. Run it again with new learners to "
        "add them, also to the running hub (no restart). Each account setup makes gets its own "
        "password, listed in FOLDER/passwords.csv (root only); accounts that exist keep theirs.",
    )
    setup.add_argument("folder", type=Path, help="where the classroom lives")
    setup.add_argument("--instructor", default="instructor", help="the instructor's user name")
    setup.add_argument("--learners", nargs="*", default=[], help="learners of the English course")
    setup.add_argument(
        "--zh-learners", nargs="*", default=[], help="learners of the Chinese course"
    )
    setup.add_argument(
        "--roster",
        type=Path,
        help="the class list as CSV, as Canvas or Moodle export it: a column of log-in names "
        "(username), and first name, last name, e-mail, language (en or zh; default en), LMS "
        "user id where known; learners are registered with their names in their course",
    )
    setup.add_argument(
        "--memory",
        default=hub_config.Limits.memory,
        help="the most memory one person's server uses, kernels and /tmp included (%(default)s)",
    )
    setup.add_argument(
        "--tmp-mb",
        type=int,
        default=hub_config.Limits.tmp_mb,
        help="the size of each learner's own /tmp in MiB, within --memory (%(default)s)",
    )
    setup.add_argument(
        "--home-mb",
        type=int,
        default=hub_config.Limits.home_mb,
        help="give each learner setup makes a home of at most this many MiB, a file system of "
        "its own (for a file system without quotas); 0: homes share the disk (%(default)s)",
    )
    setup.add_argument(
        "--processes",
        type=int,
        default=hub_config.Limits.processes,
        help="the most processes and threads one person's server runs at once (%(default)s)",
    )
    setup.add_argument(
        "--cpus",
        type=float,
        default=hub_config.Limits.cpus,
        help="the most cores' time one learner's server gets, all its processes together "
        "(a cgroup cpu quota; the instructor's is not capped); 0: no limit (%(default)s)",
    )
    setup.add_argument("--ip", default="127.0.0.1", help="address the hub listens on (%(default)s)")
    setup.add_argument("--port", type=int, default=8000, help="the hub's port (%(default)s)")
    setup.add_argument("--hub-port", type=int, default=8081, help="internal, on 127.0.0.1")
    setup.add_argument("--proxy-api-port", type=int, default=8001, help="internal, on 127.0.0.1")
    setup.add_argument(
        "--python",
        type=Path,
        help="a Python of the course's version to build the classroom's own from, when other "
        "users cannot run this one (e.g. a pyenv under /root); without it setup uses the "
        "system's, or a copy of this one's base",
    )
    setup.set_defaults(run=_setup)

    start = sub.add_parser("start", help="run the classroom's JupyterHub (as root)")
    start.add_argument("folder", type=Path, help="the classroom folder")
    start.add_argument("hub_args", nargs="*", help="more jupyterhub options, after --")
    start.set_defaults(run=_start)

    cluster = sub.add_parser(
        "cluster",
        help="start the classroom's Dask cluster to grade through (as root)",
        description="Start a Dask cluster that speaks only TLS with the classroom's own "
        "certificate; its workers run as the instructor, never as root.",
    )
    cluster.add_argument("folder", type=Path, help="the classroom folder")
    cluster.add_argument("--workers", type=int, default=2, help="worker processes (%(default)s)")
    cluster.add_argument("--host", default="127.0.0.1", help="scheduler address (%(default)s)")
    cluster.add_argument("--port", type=int, default=8786, help="scheduler port (%(default)s)")
    cluster.set_defaults(run=_cluster)
    return main


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
