"""The references of lesson 06's checks: held only by the judge (see ``autograder.references``)."""

from __future__ import annotations

import statistics

import torch

from autograder.lessons import lesson06 as checks
from autograder.lessons.lesson06 import World  # noqa: F401
from autograder.references import answers


@answers(checks.Benchmark)
def benchmark(spec, world: World, case: dict):
    work, synchronize, clock, warmup, repeats = world.args
    for _ in range(warmup):
        work()
    times = []
    for _ in range(repeats):
        synchronize()
        start = clock()
        work()
        synchronize()
        times.append(clock() - start)
    return statistics.median(times)


@answers(checks.ToHost)
def to_host(spec, world: World, case: dict):
    tensors, synchronize = world.args
    copies = [t.to("cpu", non_blocking=True) for t in tensors]
    synchronize()
    return copies


@answers(checks.PickDevice)
def pick_device(spec, world: World, case: dict):
    accelerator = torch.accelerator.current_accelerator()
    if accelerator is not None and torch.accelerator.is_available():
        return accelerator
    return torch.device("cpu")


@answers(checks.LoadBatch)
def load_batch(spec, world: World, case: dict):
    batch, device = world.args
    return tuple(t.to(device, non_blocking=True) for t in batch)


@answers(checks.EpochMeanLoss)
def epoch_mean_loss(spec, world: World, case: dict):
    step, batches = world.args
    return torch.stack([step(batch) for batch in batches]).mean().item()


@answers(checks.OverlapCopy)
def overlap_copy(spec, world: World, case: dict):
    compute, batch, side, cuda, device = world.args
    with cuda.stream(side):
        moved = batch.to(device, non_blocking=True)
    result = compute()
    cuda.current_stream().wait_stream(side)
    moved.record_stream(cuda.current_stream())
    return result, moved
