"""Each person's server bounded: its memory and its processes, all together, in a cgroup.

JupyterHub's LocalProcessSpawner starts each server as its user and honours no limit
(its ``mem_limit`` is documented as unenforced): one learner could take the machine's
memory or processes and stop the class, the hub and grading. This spawner makes a control
group per server before it starts it (as root, through ``autograder/grader/sandbox/cgroups.py``, the
same groups grading uses: cgroup v2, else v1), puts the server's process in it before it
drops to the user (so every process the server, its kernels and its terminals start is
in it too), and removes it, ending what is left in it, when the server stops or ends.

- ``Spawner.mem_limit``: the most memory the server uses, kernels and ``/tmp`` included
  (the kernel's out-of-memory killer then ends the biggest process of that server, usually
  the kernel that allocated, nobody else's);
- ``BoundedSpawner.processes``: the most processes and threads at once (``pids.max``);
- ``Spawner.cpu_limit``: the most cores' time the server's processes get together (the
  group's cpu quota, where the machine has the cpu controller; else the hub's log says it
  is not enforced), and torch's threads in each kernel (``OMP_NUM_THREADS``), one where it
  is not set. A class shares the cores, and an OpenMP thread waiting for a core another
  kernel holds spins: on a busy 2-core machine one small BatchNorm took 45 times as long
  with two threads per kernel as with one.

A learner whose home has a fixed size (``setup --home-mb``, ``disks.py``) gets it mounted
again, where a reboot ended the mount, before their server starts: a server never starts
on the empty folder beneath it.

Where the machine has no cgroup the hub may create groups in, the server starts without
limits and the hub's log says why.
"""

from __future__ import annotations

import asyncio
import os

from jupyterhub.spawner import LocalProcessSpawner
from traitlets import Integer, Unicode

from autograder.classroom import disks
from autograder.grader.sandbox import cgroups

UNBOUNDED = 1 << 62  # "no limit" that cgroup v1 and v2 both take as a number


class BoundedSpawner(LocalProcessSpawner):
    """LocalProcessSpawner whose every server runs in a cgroup of its own, with limits."""

    processes = Integer(
        1024,
        config=True,
        help="The most processes and threads one server (with its kernels and terminals) "
        "runs at once: its cgroup's pids.max. 0: no limit.",
    )

    classroom = Unicode(
        "",
        config=True,
        help="The classroom folder, whose disks/ lists the learners' homes of a fixed size.",
    )

    _group: cgroups.Cgroup | None = None

    def get_env(self) -> dict:
        """The server's environment, with torch's threads per kernel (see the module's
        docstring); an ``OMP_NUM_THREADS`` the instructor set in ``environment`` stays."""
        env = super().get_env()
        env.setdefault("OMP_NUM_THREADS", str(max(1, int(self.cpu_limit or 1))))
        return env

    def _limited(self) -> cgroups.Cgroup | None:
        """A new group with this server's limits, or None (and why, in the log)."""
        if not self.mem_limit and not self.processes and not self.cpu_limit:
            return None
        parent = cgroups.find_parent()
        if isinstance(parent, str):
            self.log.warning("%s's server starts without limits: %s", self.user.name, parent)
            return None
        if self.cpu_limit and parent.cpu is None:
            self.log.warning(
                "%s's server: cpu_limit %s is not enforced: no cgroup cpu controller here",
                self.user.name,
                self.cpu_limit,
            )
        try:
            memory, processes = self.mem_limit or UNBOUNDED, self.processes or UNBOUNDED
            return parent.create(memory, processes, self.cpu_limit or None)
        except OSError as error:
            self.log.warning("%s's server starts without limits: %s", self.user.name, error)
            return None

    def make_preexec_fn(self, name):
        drop = super().make_preexec_fn(name)
        join = self._group.procs_files() if self._group is not None else []

        def preexec():
            pid = str(os.getpid())
            for procs in join:  # still root: join the group, then become the user
                with open(procs, "w", encoding="ascii") as handle:
                    handle.write(pid)
            drop()

        return preexec

    async def _mount_home(self) -> None:
        """The learner's fixed-size home, mounted again where a reboot ended the mount."""
        if not self.classroom:
            return
        import pwd
        from pathlib import Path

        home = pwd.getpwnam(self.user.name).pw_dir
        image = disks.listed(Path(self.classroom)).get(home)
        if image:
            await asyncio.to_thread(disks.mount, Path(home), Path(image))

    async def start(self):
        await self._mount_home()
        await self._remove_group()  # one a previous server of this spawner left
        self._group = self._limited()
        if self._group is not None:
            self.log.info(
                "%s's server: at most %s bytes of memory, %s processes and %s cores, in %s",
                self.user.name,
                self.mem_limit or "unlimited",
                self.processes or "unlimited",
                self.cpu_limit or "all",
                self._group.folders[0],
            )
        try:
            return await super().start()
        except BaseException:
            await self._remove_group()
            raise

    async def poll(self):
        status = await super().poll()
        if status is not None:
            await self._remove_group()
        return status

    async def stop(self, now=False):
        try:
            await super().stop(now=now)
        finally:
            await self._remove_group()

    async def _remove_group(self) -> None:
        group, self._group = self._group, None
        if group is not None:
            await asyncio.to_thread(group.kill_and_remove)

    def load_state(self, state):
        super().load_state(state)
        if state.get("cgroup"):
            self._group = cgroups.Cgroup(tuple(state["cgroup"]))

    def get_state(self):
        state = super().get_state()
        if self._group is not None:
            state["cgroup"] = list(self._group.folders)
        return state
