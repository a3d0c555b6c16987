"""A Dask cluster on this machine for the grading benchmarks (benchmark_grading, demo_term)."""

from __future__ import annotations

import functools
import os
import socket
import subprocess
import sys
from pathlib import Path

BIN = Path(sys.executable).parent


def dask_cluster(workers: int, own_cores: bool = False) -> tuple[str, list[subprocess.Popen]]:
    """A local Dask scheduler (loopback only, no dashboard) and ``workers`` single-threaded
    worker processes, returned once every worker has joined. ``own_cores``: each worker
    process is started alone, confined to a core of its own (its kernels, observers and
    zygote inherit the affinity), as if it were a one-core machine of its own."""
    from distributed import Client

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    scheduler = [str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", str(port)]
    started = [subprocess.Popen([*scheduler, "--no-dashboard"], **quiet)]
    worker = [str(BIN / "dask"), "worker", address, "--nthreads", "1", "--no-dashboard"]
    if own_cores:
        cores = sorted(os.sched_getaffinity(0))
        if len(cores) < workers:
            stop(started)
            sys.exit(f"{workers} workers on cores of their own need {workers} cores")
        for core in cores[:workers]:
            confined = functools.partial(os.sched_setaffinity, 0, {core})
            started.append(subprocess.Popen(worker, preexec_fn=confined, **quiet))
    else:
        started.append(subprocess.Popen([*worker, "--nworkers", str(workers)], **quiet))
    with Client(address, timeout=60) as client:
        client.wait_for_workers(workers, timeout=120)
    return address, started


def stop(started: list[subprocess.Popen]) -> None:
    """End the cluster's processes, workers first."""
    for process in reversed(started):
        process.terminate()
        process.wait(timeout=30)
