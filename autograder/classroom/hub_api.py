"""Learners added to the running hub through JupyterHub's REST API, without a restart.

JupyterHub reads ``allowed_users`` once, when it starts: an account setup makes later could
not log in until a restart, and a restart stops every learner's server. So the classroom's
hub knows one service, ``course-roster``, with an API token of its own (``hub/roster-token``,
root's only, like the hub's database and cookie secret) and one role: ``admin:users``, the
scope JupyterHub requires to create users (it cannot start or reach servers, read tokens or
make anyone an admin: JupyterHub lets only admins grant that). No process runs as the
service: ``course-classroom setup``, as root, uses the token to add the learners it was given
(``POST /hub/api/users``); JupyterHub's own ``add_user`` then lets them log in.
"""

from __future__ import annotations

import json
import os
import secrets
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

SERVICE = "course-roster"
SCOPES = ("admin:users",)  # creating users needs it; nothing else is granted
TOKEN_FILE = "roster-token"  # in the classroom's hub/ folder
TIMEOUT_S = 30


def token_path(folder: Path) -> Path:
    return folder / "hub" / TOKEN_FILE


def ensure_token(folder: Path) -> Path:
    """The roster service's token file, made (root only) when there is none; an existing one
    is kept, as the running hub knows it."""
    path = token_path(folder)
    if not path.is_file():
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="ascii") as handle:
            handle.write(secrets.token_hex(32) + "\n")
    os.chmod(path, 0o600)
    return path


def api_url(hub_port: int) -> str:
    """The hub's REST API, on the loopback-only port the hub itself listens on."""
    return f"http://127.0.0.1:{hub_port}/hub/api"


@dataclass(frozen=True)
class Outcome:
    """What the running hub did with the learners: ``added`` (new to it), or why none were."""

    added: tuple[str, ...] = ()
    problem: str = ""  # "" when the hub took them (or knew them all already)

    def said(self) -> list[str]:
        """Lines for setup's output, English / Chinese."""
        if self.problem:
            return [self.problem]
        if not self.added:
            return [
                "  the running hub already knows every learner / 运行中的 JupyterHub 已有全部学生"
            ]
        names = ", ".join(self.added)
        return [
            f"  added to the running hub, no restart needed: {names} / "
            f"已加入运行中的 JupyterHub，无需重启：{names}"
        ]


NOT_RUNNING = (
    "  the hub is not running: the learners can log in once it starts / "
    "JupyterHub 没有运行：启动后学生即可登录"
)
REFUSED = (
    "  the running hub refused to add the learners ({status}): it was started before setup "
    "gave it the roster service; they can log in after the next restart "
    "(`course-classroom start`), and later additions need none / "
    "运行中的 JupyterHub 拒绝添加学生（{status}）：它启动时 setup 还没有为它配置名单服务；"
    "下次重启（`course-classroom start`）后学生即可登录，以后再添加学生就不必重启了"
)
FAILED = (
    "  the running hub could not add the learners ({status}: {said}); they can log in after "
    "the next restart / 运行中的 JupyterHub 无法添加学生（{status}：{said}）；"
    "下次重启后学生即可登录"
)


def add_learners(url: str, token: str, names: list[str]) -> Outcome:
    """Ask the hub at ``url`` to create ``names`` (those it has already stay as they are)."""
    if not names:
        return Outcome()
    request = urllib.request.Request(
        f"{url}/users",
        data=json.dumps({"usernames": sorted(names)}).encode(),
        headers={"Authorization": f"token {token}", "Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as answer:
            made = json.loads(answer.read().decode("utf-8"))
        return Outcome(tuple(sorted(user["name"] for user in made)))
    except urllib.error.HTTPError as error:
        if error.code == 409:  # "All N users already exist"
            return Outcome()
        if error.code in (401, 403):  # a hub started before it had the roster service
            return Outcome(problem=REFUSED.format(status=error.code))
        said = error.read().decode("utf-8", errors="replace")[:300]
        return Outcome(problem=FAILED.format(status=error.code, said=said))
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return Outcome(problem=NOT_RUNNING)
