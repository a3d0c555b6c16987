"""The classroom's spawner, without a hub: what it adds to a server's environment."""

from __future__ import annotations

from jupyterhub.spawner import LocalProcessSpawner

from autograder.classroom.spawner import BoundedSpawner


def test_each_kernel_gets_one_torch_thread_unless_the_instructor_says_otherwise(monkeypatch):
    """A class shares the cores: OpenMP threads waiting for a core spin (spawner.py)."""
    monkeypatch.setattr(LocalProcessSpawner, "get_env", lambda self: dict(self.environment))
    assert BoundedSpawner().get_env()["OMP_NUM_THREADS"] == "1"
    assert BoundedSpawner(cpu_limit=2.5).get_env()["OMP_NUM_THREADS"] == "2"
    told = BoundedSpawner(environment={"OMP_NUM_THREADS": "4"}, cpu_limit=1.0)
    assert told.get_env()["OMP_NUM_THREADS"] == "4"
