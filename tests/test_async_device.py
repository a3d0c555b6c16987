"""The CPU model of a GPU queue behaves like a CUDA stream in the ways lesson 06 relies on."""

from __future__ import annotations

import math
import threading
import time

import pytest
import torch

from autograder.kernel.async_device import ModelGPU

GATE_S = 30.0  # a launch that waited for gated work would take this long; nothing else does


def _gated(gate: threading.Event):
    """Work that cannot finish until the test opens ``gate``: no clock decides the test."""

    def work(x):
        gate.wait(GATE_S)
        return x * 2

    return work


def test_launch_returns_before_the_work_is_done_and_synchronize_waits():
    gpu, gate = ModelGPU(), threading.Event()
    out = gpu.launch(_gated(gate), torch.ones(3), ms=80)
    assert math.isnan(gpu.spans[-1].end)  # launch came back; the work has not ended
    gate.set()
    gpu.synchronize()  # back only once the work has ended, having taken its modelled time
    assert out.value.tolist() == [2.0] * 3
    assert gpu.spans[-1].end - gpu.spans[-1].start >= 0.08


def test_work_runs_in_the_order_it_was_launched():
    gpu = ModelGPU()
    order = []
    a = gpu.launch(lambda x: order.append("a") or x + 1, torch.zeros(2), ms=30, name="a")
    b = gpu.launch(lambda x: order.append("b") or x * 10, a, ms=1, name="b")
    gpu.synchronize()
    assert order == ["a", "b"] and b.value.tolist() == [10.0, 10.0]
    assert gpu.spans[0].end <= gpu.spans[1].start


def test_events_measure_the_queue_time_between_them():
    gpu = ModelGPU()
    start, end = gpu.event(), gpu.event()
    start.record()
    gpu.launch(torch.clone, torch.ones(1), ms=50)
    end.record()
    with pytest.raises(RuntimeError):
        start.elapsed_time(end)  # not reached yet: like CUDA, an error
    end.synchronize()
    assert 45 <= start.elapsed_time(end) < 5000  # queue time, not a timestamp; a busy host is slow


def test_a_non_blocking_copy_read_before_synchronize_is_stale():
    gpu = ModelGPU()
    y = gpu.launch(lambda x: x + 7, torch.ones(4), ms=60)
    early = gpu.to_host(y, non_blocking=True)
    seen_early = early.clone()
    gpu.synchronize()
    assert seen_early.tolist() == [0.0] * 4 and early.tolist() == [8.0] * 4
    assert gpu.to_host(y).tolist() == [8.0] * 4  # a blocking copy waits itself


def test_item_waits_and_the_first_call_of_a_kernel_costs_more():
    gpu = ModelGPU(first_call_ms=300)
    x = torch.ones(1)
    gpu.launch(torch.clone, x, ms=1, name="k")
    gpu.synchronize()
    first = gpu.spans[-1].end - gpu.spans[-1].start
    y = gpu.launch(lambda t: t * 3, x, ms=1, name="k")
    assert y.item() == 3.0
    second = gpu.spans[-1].end - gpu.spans[-1].start
    assert first >= 0.3 > second


def test_an_error_in_queued_work_shows_at_the_next_synchronization_unless_blocking():
    def bad(x):
        return x[10]  # index out of range, on the worker

    gpu = ModelGPU()
    gpu.launch(bad, torch.ones(2), ms=1)  # returns: nothing has run yet
    with pytest.raises(RuntimeError, match="launched earlier"):
        gpu.synchronize()
    with pytest.raises(RuntimeError, match="launched earlier"):
        ModelGPU(blocking=True).launch(bad, torch.ones(2), ms=1)


def test_only_a_pinned_non_blocking_copy_lets_the_host_go_on():
    gpu, x = ModelGPU(), torch.ones(3)
    started = time.perf_counter()
    y = gpu.to_device(x, pinned=False, non_blocking=True, ms=40)
    assert time.perf_counter() - started >= 0.04  # the host waited for the staged copy
    assert y.value.tolist() == [1.0] * 3
    gate = threading.Event()
    gpu.launch(_gated(gate), x, ms=1)  # the copy below queues behind this work
    y = gpu.to_device(x, pinned=True, non_blocking=True, ms=40)
    assert y.value is None  # the host is back while the copy still waits in the queue
    gate.set()
    gpu.synchronize()
    assert y.value.tolist() == [1.0] * 3


def test_the_worker_ends_when_idle_and_comes_back_for_new_work():
    gpu = ModelGPU()
    gpu.launch(torch.clone, torch.ones(1), ms=1)
    gpu.synchronize()
    deadline = time.monotonic() + GATE_S
    while gpu._worker is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gpu._worker is None  # no thread left behind by an idle model
    y = gpu.launch(lambda t: t + 1, torch.ones(1), ms=1)
    assert y.item() == 2.0


def test_pinning_is_host_time_and_the_copy_after_it_queues_behind_it():
    gpu, x = ModelGPU(), torch.ones(3)
    started = time.perf_counter()
    pinned = gpu.pin(x, ms=40)
    assert time.perf_counter() - started >= 0.04  # the host itself made the pinned copy
    assert not gpu.spans and pinned.tolist() == x.tolist()  # nothing went on the queue
    gate = threading.Event()
    gpu.launch(_gated(gate), x, ms=1)
    y = gpu.to_device(pinned, pinned=True, non_blocking=True, ms=40)
    assert y.value is None  # pinned and non_blocking: queued, the host is back
    gate.set()
    gpu.synchronize()
    assert y.value.tolist() == [1.0] * 3


def test_a_second_stream_runs_while_the_default_one_is_busy():
    gpu, gate = ModelGPU(), threading.Event()
    gpu.launch(_gated(gate), torch.ones(1), ms=1, name="compute")
    side = gpu.stream()
    with gpu.use(side):
        copied = gpu.to_device(torch.ones(2), pinned=True, non_blocking=True, ms=1)
    assert gpu.current is gpu.default  # the context restored the current stream
    side.synchronize()  # back although the default stream is still held by the gate
    assert copied.value.tolist() == [1.0, 1.0] and math.isnan(gpu.spans[0].end)
    assert [s.stream for s in gpu.spans] == ["default", "side 1"]
    gate.set()
    gpu.synchronize()


def test_wait_stream_orders_later_work_after_the_other_stream():
    gpu, gate = ModelGPU(), threading.Event()
    side = gpu.stream()
    with gpu.use(side):
        filled = gpu.launch(_gated(gate), torch.ones(1), ms=1, name="copy")
    gpu.default.wait_stream(side)
    used = gpu.launch(lambda t: t + 1, filled, ms=1, name="use")
    assert math.isnan(gpu.spans[-1].start)  # waits for the gated work on the side stream
    gate.set()
    gpu.synchronize()
    assert used.value.tolist() == [3.0]


def test_without_a_wait_a_kernel_can_read_what_the_other_stream_has_not_filled():
    gpu, gate = ModelGPU(), threading.Event()
    side = gpu.stream()
    with gpu.use(side):
        filled = gpu.launch(_gated(gate), torch.ones(1), ms=1, name="copy")
    gpu.launch(lambda t: t + 1, filled, ms=1, name="use")  # no wait_stream: a race
    gpu.default.synchronize()
    gate.set()
    with pytest.raises(RuntimeError, match="race between"):
        gpu.synchronize()


def test_an_event_recorded_on_one_stream_orders_another():
    gpu, gate = ModelGPU(), threading.Event()
    side = gpu.stream()
    done = gpu.event()
    with gpu.use(side):
        filled = gpu.launch(_gated(gate), torch.ones(1), ms=1, name="copy")
        done.record()
    gpu.default.wait_event(done)
    used = gpu.launch(lambda t: t * 5, filled, ms=1, name="use")
    gate.set()
    gpu.synchronize()
    assert used.value.tolist() == [10.0] and done.query()
    gpu.default.wait_event(gpu.event())  # an event never recorded: nothing to wait for
    gpu.synchronize()
