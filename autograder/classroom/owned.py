"""Collect only what each learner submitted themselves.

nbgrader's exchange inbound is writable by every learner, and a submission's name says
whose it is (``nbgrader submit --student=OTHER``, or a folder planted by hand); nbgrader's
own collect files it under that name, only logs "cheating attempt?", and copies it with
``shutil.copytree``, which follows a symbolic link planted in the learner's own name (to
another learner's submission, to the instructor's ``source/``) as the instructor.

This collect (nbgrader's ``ExchangeFactory.collect`` plugin, set in the classroom
instructor's settings, so the formgrader's Collect and ``nbgrader collect`` both use it)
takes a submission only when it is the learner's own work: a real folder owned by the
account it names, holding only real folders and files of that account, none with a second
name (hard link), and no bigger than nbgrader's ``max_dir_size``. Anything else is refused,
logged as an error, and listed in the course's ``grading/refused/<assignment>.json``.

It checks without following links and copies what it checked: every entry is opened with
``O_NOFOLLOW`` relative to its checked parent folder, its owner and its number of names are
read from the open descriptor (``fstat``), and its bytes are copied from that descriptor,
first into a staging folder of the course; only a complete copy replaces the collected one.
A link swapped in after the first look fails to open or fails the check, and the submission
is refused then.
"""

from __future__ import annotations

import errno
import glob
import json
import os
import pwd
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from nbgrader.exchange.default.collect import ExchangeCollect, groupby
from nbgrader.utils import ignore_patterns

REFUSED = Path("grading") / "refused"
# Why a submission is not its learner's own work (the "problem" of a refused entry).
OWNER = "owner"  # the submission folder belongs to another account
LINK = "link"  # a symbolic link, the submission itself or something in it
HARD_LINK = "hard link"  # a file with more than one name
OTHER_OWNER = "other owner"  # something inside belongs to another account
NOT_PLAIN = "not plain"  # neither a folder nor a regular file (fifo, socket, device)
NOT_A_FOLDER = "not a folder"  # the submission is a file, not a folder
TOO_BIG = "too big"  # past max_dir_size bytes, MAX_ENTRIES entries or MAX_DEPTH levels
CHANGED = "changed"  # it changed while collect read it (a link swapped in, for one)
UNREADABLE = "unreadable"  # the instructor may not read it (its modes keep collect out)
# What reading a learner's folder may raise because of that folder, not of the course.
_THEIRS = {errno.EACCES, errno.EPERM, errno.ELOOP, errno.ENOTDIR, errno.ENOENT}

_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY
# Past these a submission is too big however few bytes it holds: each folder level holds a
# descriptor open while it is read, and a walk of millions of empty files takes the collect.
MAX_DEPTH, MAX_ENTRIES = 32, 10_000
_CHUNK = 1 << 20


class NotOwned(Exception):
    """A submission that is not its learner's own work: why, where in it, whose it is."""

    def __init__(self, problem: str, path: str, owner: str):
        super().__init__(f"{problem}: {path or '.'} ({owner})")
        self.problem, self.path, self.owner = problem, path, owner


def owner_of(path: str) -> str:
    return _name(os.lstat(path).st_uid)


def _name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def copy_owned(
    path: str,
    uid: int,
    dest: str | None = None,
    ignore: Callable[[str, list[str]], list[str]] | None = None,
    max_bytes: int | None = None,
) -> int:
    """Check that ``path`` is a folder of user ``uid`` holding only that user's own folders
    and single-named files, never following a link; with ``dest``, copy it there as checked
    (what ``ignore`` names is checked, not copied). Return its size in bytes; raise
    :class:`NotOwned` at the first thing that is not the learner's own."""
    parent, name = os.path.split(os.path.abspath(path))
    parent_fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        walk = _Walk(uid, path, ignore, max_bytes)
        info = os.lstat(name, dir_fd=parent_fd)
        if stat.S_ISREG(info.st_mode):
            raise NotOwned(NOT_A_FOLDER, "", _name(info.st_uid))
        walk.entry(parent_fd, name, "", dest)
        return walk.size
    finally:
        os.close(parent_fd)


class _Walk:
    """One submission folder's walk through file descriptors (see :func:`copy_owned`)."""

    def __init__(self, uid, top, ignore, max_bytes):
        self.uid, self.top, self.ignore, self.max_bytes = uid, top, ignore, max_bytes
        self.size = self.entries = 0

    def entry(self, dir_fd: int, name: str, where: str, dest: str | None) -> None:
        self.entries += 1
        if self.entries > MAX_ENTRIES or where.count(os.sep) >= MAX_DEPTH:
            raise NotOwned(TOO_BIG, where, "")
        info = os.lstat(name, dir_fd=dir_fd)
        self._check(info, where, top=where == "")
        folder = stat.S_ISDIR(info.st_mode)
        try:
            kind = os.O_DIRECTORY if folder else os.O_NONBLOCK
            fd = os.open(name, _FLAGS | kind, dir_fd=dir_fd)
        except OSError as error:  # a link swapped in since lstat (ELOOP, ENOTDIR), or gone
            closed = error.errno in (errno.EACCES, errno.EPERM)  # or its modes keep us out
            raise NotOwned(UNREADABLE if closed else CHANGED, where, _name(info.st_uid)) from error
        try:
            found = os.fstat(fd)
            if (found.st_dev, found.st_ino) != (info.st_dev, info.st_ino):
                raise NotOwned(CHANGED, where, _name(found.st_uid))
            self._check(found, where, top=where == "")  # what is open is what is read
            if folder:
                self._folder(fd, found, where, dest)
            else:
                self._file(fd, found, where, dest)
        finally:
            os.close(fd)

    def _check(self, info: os.stat_result, where: str, top: bool) -> None:
        owner = _name(info.st_uid)
        if stat.S_ISLNK(info.st_mode):
            raise NotOwned(LINK, where, owner)
        if not (stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode)):
            raise NotOwned(NOT_PLAIN, where, owner)
        if info.st_uid != self.uid:
            raise NotOwned(OWNER if top else OTHER_OWNER, where, owner)
        if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
            raise NotOwned(HARD_LINK, where, owner)

    def _folder(self, fd: int, found: os.stat_result, where: str, dest: str | None) -> None:
        names = sorted(os.listdir(fd))
        skipped = set(self.ignore(os.path.join(self.top, where), names)) if self.ignore else set()
        if dest is not None:
            os.mkdir(dest, 0o700)
        for name in names:
            inner = None if dest is None or name in skipped else os.path.join(dest, name)
            self.entry(fd, name, os.path.join(where, name), inner)
        if dest is not None:
            os.chmod(dest, stat.S_IMODE(found.st_mode) | stat.S_IRWXU)
            os.utime(dest, ns=(found.st_atime_ns, found.st_mtime_ns))

    def _file(self, fd: int, found: os.stat_result, where: str, dest: str | None) -> None:
        self.size += found.st_size
        if self.max_bytes is not None and self.size > self.max_bytes:
            raise NotOwned(TOO_BIG, where, _name(found.st_uid))
        if dest is None:
            return
        out = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _FLAGS, 0o600)
        try:
            while chunk := os.read(fd, _CHUNK):
                os.write(out, chunk)
            os.fchmod(out, stat.S_IMODE(found.st_mode) | stat.S_IRUSR | stat.S_IWUSR)
        finally:
            os.close(out)
        os.utime(dest, ns=(found.st_atime_ns, found.st_mtime_ns))


class OwnedCollect(ExchangeCollect):
    """nbgrader's collect of the learners' own work only: a submission folder owned by
    another account, or holding a link, a second name or another account's file, is refused."""

    def init_src(self):
        super().init_src()  # the course's checks and its due date
        student = self.coursedir.student_id or "*"
        pattern = os.path.join(self.inbound_path, f"{student}+{self.coursedir.assignment_id}+*")
        records = [self._path_to_record(path) for path in glob.glob(pattern)]
        self.refused = []
        owned = []
        for record in records:
            try:
                self._copy(record)
            except NotOwned as problem:
                self._refuse(record, problem)
            else:
                owned.append(record)
        self.src_records = [self._latest(found) for found in groupby(owned, _user).values()]

    def copy_files(self):
        """Copy each chosen submission, as checked, into a staging folder of the course;
        nbgrader's own copy_files then decides what replaces what (--update, due date) and
        :meth:`do_copy` moves the staged copy in place. One refused now is not collected."""
        staging = tempfile.mkdtemp(prefix=".collecting-", dir=self.coursedir.root)
        self._staged = {}
        try:
            for record in list(self.src_records):
                source = os.path.join(self.inbound_path, record["filename"])
                staged = os.path.join(staging, record["filename"])
                try:
                    self._copy(record, staged)
                except NotOwned as problem:
                    shutil.rmtree(staged, ignore_errors=True)
                    self._refuse(record, problem)
                    self.src_records.remove(record)
                else:
                    self._staged[source] = staged
            self._report(self.refused)
            super().copy_files()
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def do_copy(self, src, dest, log=None):
        shutil.move(self._staged.pop(src), dest)

    def _copy(self, record: dict, dest: str | None = None) -> None:
        """Check (and with ``dest`` copy) one submission; raise NotOwned when it is not the
        learner's own."""
        path = os.path.join(self.inbound_path, record["filename"])
        try:
            uid = pwd.getpwnam(record["username"]).pw_uid
        except KeyError:
            raise NotOwned(OWNER, "", owner_of(path)) from None
        ignore = ignore_patterns(
            exclude=self.coursedir.ignore,
            include=self.coursedir.include,
            max_file_size=self.coursedir.max_file_size,
            log=self.log,
        )
        max_bytes = 1000 * self.coursedir.max_dir_size if self.coursedir.max_dir_size else None
        try:
            copy_owned(path, uid, dest, ignore, max_bytes)
        except FileNotFoundError as error:  # gone while collect read it
            raise NotOwned(CHANGED, _inside(error), record["username"]) from error
        except OSError as error:  # a folder the instructor may not enter, say; not disk full
            if error.errno not in _THEIRS:
                raise
            raise NotOwned(UNREADABLE, _inside(error), record["username"]) from error

    def _refuse(self, record: dict, problem: NotOwned) -> None:
        self.refused.append(
            {
                **record,
                "timestamp": str(record["timestamp"]),
                "owner": problem.owner,
                "problem": problem.problem,
                "path": problem.path,
            }
        )

    def _latest(self, records: list[dict]) -> dict:
        """The newest submission; with a due date and before_duedate, the newest before it."""
        ordered = self._sort_by_timestamp(records)
        if self.duedate is not None and self.before_duedate:
            on_time = [record for record in ordered if record["timestamp"] <= self.duedate]
            return (on_time or ordered)[0]
        return ordered[0]

    def _report(self, refused: list[dict]) -> None:
        for item in refused:
            self.log.error("Refused %s: %s", item["filename"], describe(item))
        folder = Path(self.coursedir.root) / REFUSED
        listed = folder / f"{self.coursedir.assignment_id}.json"
        if not refused and not listed.exists():
            return
        folder.mkdir(parents=True, exist_ok=True)
        known = json.loads(listed.read_text(encoding="utf-8")) if listed.exists() else []
        seen = {item["filename"] for item in known}
        known += [item for item in refused if item["filename"] not in seen]
        listed.write_text(json.dumps(known, indent=1) + "\n", encoding="utf-8")


def describe(item: dict) -> str:
    """Why a listed submission was refused, in English (gradebook_rows says it in both)."""
    claimed, owner, path = item.get("username"), item.get("owner"), item.get("path") or "."
    problem = item.get("problem", OWNER)
    if problem == OWNER:
        return f"it claims to be {claimed}'s submission but {owner} made it"
    said = {
        LINK: "is a symbolic link",
        HARD_LINK: "is a hard link (a file with another name elsewhere)",
        OTHER_OWNER: f"belongs to {owner}",
        NOT_PLAIN: "is neither a folder nor a file",
        NOT_A_FOLDER: "is a file, not a folder",
        TOO_BIG: "makes it bigger than the course allows (max_dir_size, entries, depth)",
        CHANGED: "changed while it was collected",
        UNREADABLE: "cannot be read by the instructor",
    }.get(problem, problem)
    return f"{claimed}'s submission holds what is not {claimed}'s own work: {path} {said}"


def _inside(error: OSError) -> str:
    """The entry ``error`` names, when it is one inside the submission (a name, not a path)."""
    name = error.filename
    return name if isinstance(name, str) and not os.path.isabs(name) else ""


def _user(record: dict) -> str:
    return record["username"]
