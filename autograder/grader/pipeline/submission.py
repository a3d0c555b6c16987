"""Look at a submission before grading it, and stage a private copy of its notebooks.

A submission folder is data, not paths: before anything reads it, it is walked
without following links, and a folder holding links, special files, odd names
or too many files or bytes is rejected whole. Only the expected notebooks are
then copied, each read from a descriptor opened with O_NOFOLLOW, so neither
nbgrader nor learner code ever touches what the learner submitted.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograder.common.i18n import Text
from autograder.grader.reasons import says

IGNORED = {".ipynb_checkpoints"}  # Jupyter's autosaves: skipped, never read, never staged
READ_CHUNK = 1024**2


@dataclass(frozen=True)
class Bounds:
    """How large a submission folder may be before it is rejected unread."""

    max_files: int = 200
    max_bytes: int = 64 * 1024**2
    max_depth: int = 8


def expected_notebooks(course_root: Path, assignment: str) -> list[str]:
    """Names (without .ipynb) of the assignment's notebooks, from its source folder."""
    return sorted(p.stem for p in (course_root / "source" / assignment).glob("*.ipynb"))


# Letters, digits and . _ @ + - ; starting with a letter or digit: no glob characters, no
# path separators, nothing a shell, nbgrader's globbing or a spreadsheet would interpret.
LEARNER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,99}")


def valid_learner_id(name: str) -> bool:
    """Whether ``name`` is a learner id grading accepts (nbgrader treats ids as globs)."""
    return LEARNER_ID.fullmatch(name) is not None and ".." not in name


def students(course_root: Path, assignment: str) -> list[str]:
    """Every learner with a submission entry for the assignment (a link counts; it is rejected)."""
    submitted = course_root / "submitted"
    if not submitted.is_dir():
        return []
    found = []
    with os.scandir(submitted) as entries:
        for entry in entries:
            inside = os.path.join(entry.path, assignment)
            if entry.is_symlink() or (
                entry.is_dir(follow_symlinks=False) and os.path.lexists(inside)
            ):
                found.append(entry.name)
    return sorted(found)


def plain_name_problem(name: str) -> Text | None:
    """Why a file or folder name is not plain, or None."""
    if not name or name in (".", ".."):
        return Text("an empty or dot name", "名称为空，或是 . 或 ..")
    if "/" in name or "\\" in name or "\0" in name:
        return says("a path separator in {name!r}", "名称 {name!r} 中有路径分隔符", name=name)
    if any(unicodedata.category(c)[0] == "C" for c in name):
        return says(
            "a control or unassigned character in {name!r}",
            "名称 {name!r} 中有控制字符或未分配的字符",
            name=name,
        )
    if name.startswith((".", "-", "~")):
        return says(
            "a name starting with {first!r}: {name!r}",
            "以 {first!r} 开头的名称：{name!r}",
            first=name[0],
            name=name,
        )
    if name != name.strip() or len(name.encode("utf-8", "surrogateescape")) > 200:
        return says(
            "leading/trailing spaces or an overlong name: {name!r}",
            "名称首尾有空格或过长：{name!r}",
            name=name,
        )
    return None


def rejection(course_root: Path, assignment: str, student: str, bounds: Bounds) -> Text | None:
    """Why the submission folder must not be read at all, or None when it is plain data."""
    problem = plain_name_problem(student)
    if problem:
        return says(
            "the learner folder has {problem}", "学生文件夹的名称不合规：{problem}", problem=problem
        )
    if not valid_learner_id(student):
        return says(
            "{student!r} is not a valid learner id (letters, digits and . _ @ + -, starting "
            "with a letter or digit): nbgrader would read it as a pattern",
            "{student!r} 不是有效的学生 ID（只能由字母、数字和 . _ @ + - 组成，"
            "并以字母或数字开头）：nbgrader 会把它当作通配模式",
            student=student,
        )
    learner = course_root / "submitted" / student
    for folder in (learner, learner / assignment):
        try:
            mode = os.lstat(folder).st_mode
        except FileNotFoundError:
            return None  # nothing submitted: every notebook is "missing"
        if stat.S_ISLNK(mode):
            return _symbolic_link(folder.name)
        if not stat.S_ISDIR(mode):
            return says("{name} is not a folder", "{name} 不是文件夹", name=folder.name)
    return _walk_problem(learner / assignment, bounds)


def _symbolic_link(where: str) -> Text:
    return says("{where} is a symbolic link", "{where} 是符号链接", where=where)


def _walk_problem(top: Path, bounds: Bounds) -> Text | None:
    """Walk without following links; stop at the first problem or past the bounds."""
    files = total = 0
    pending = [(top, 0)]
    while pending:
        folder, depth = pending.pop()
        try:
            entries = os.scandir(folder)
        except OSError as error:
            return says(
                "{name} cannot be listed: {error}",
                "无法列出 {name} 的内容：{error}",
                name=folder.name,
                error=error.strerror,
            )
        with entries:
            for entry in entries:
                if entry.name in IGNORED and depth == 0:
                    continue
                where = os.path.relpath(entry.path, top)
                problem = plain_name_problem(entry.name)
                if problem:
                    return says(
                        "{problem} (at {where!r})",
                        "{problem}（位于 {where!r}）",
                        problem=problem,
                        where=where,
                    )
                files += 1
                if files > bounds.max_files:
                    return says(
                        "more than {n} files and folders",
                        "文件和文件夹超过 {n} 个",
                        n=bounds.max_files,
                    )
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISLNK(info.st_mode):
                    return _symbolic_link(where)
                if stat.S_ISDIR(info.st_mode):
                    if depth + 1 >= bounds.max_depth:
                        return says(
                            "folders nested deeper than {n}",
                            "文件夹嵌套超过 {n} 层",
                            n=bounds.max_depth,
                        )
                    pending.append((Path(entry.path), depth + 1))
                elif stat.S_ISREG(info.st_mode):
                    if info.st_nlink > 1:
                        return says(
                            "{where} is a hard link to another file",
                            "{where} 是指向另一个文件的硬链接",
                            where=where,
                        )
                    total += info.st_size
                    if total > bounds.max_bytes:
                        return says(
                            "more than {mib} MiB in all",
                            "总大小超过 {mib} MiB",
                            mib=bounds.max_bytes // 1024**2,
                        )
                else:
                    return says(
                        "{where} is a special file (fifo, device or socket)",
                        "{where} 是特殊文件（FIFO、设备或套接字）",
                        where=where,
                    )
    return None


def problem(path: Path) -> tuple[str, Text] | None:
    """(status, reason) when a notebook cannot be graded at all, else None.

    ``path`` is the staged copy: a regular file this process wrote.
    """
    if not path.is_file():
        return "missing", says("{name} was not submitted", "没有提交 {name}", name=path.name)
    from autograder.grader.pipeline.verdicts import too_large

    try:
        nb = nbformat.read(str(path), as_version=4)
        large = too_large(nb)  # before validating: the bound is on all reading
        if large:
            return "rejected", says(
                "{name} is too large to grade: {why}",
                "{name} 太大，无法评分：{why}",
                name=path.name,
                why=large,
            )
        nbformat.validate(nb)
    except Exception as error:  # any parse or schema failure means the file is unusable
        first = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
        return "corrupt file", says(
            "{name} is not a valid notebook: {error}",
            "{name} 不是有效的笔记本：{error}",
            name=path.name,
            error=first,
        )
    return None


def stage(
    course_root: Path, staging: Path, assignment: str, student: str, names: list[str], limit: int
) -> Path:
    """Copy only the expected notebooks that exist, byte by byte without following links."""
    source = course_root / "submitted" / student / assignment
    target = staging / student / assignment
    if os.path.lexists(target):
        shutil.rmtree(target)
    target.mkdir(parents=True, mode=0o700)
    for name in names:
        copy_plain_file(source / f"{name}.ipynb", target / f"{name}.ipynb", limit)
    return target


def copy_plain_file(source: Path, target: Path, limit: int) -> None:
    """Copy up to ``limit`` bytes of a regular file; a link or special file copies nothing."""
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return
    with os.fdopen(fd, "rb") as reader:
        if not stat.S_ISREG(os.fstat(reader.fileno()).st_mode):
            return
        out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(out, "wb") as writer:
            while limit > 0 and (chunk := reader.read(min(READ_CHUNK, limit))):
                writer.write(chunk)
                limit -= len(chunk)
