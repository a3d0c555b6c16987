"""A MODEL of a GPU's work queue on the CPU, for learners without a GPU. Not a measurement.

A CUDA stream is a queue: the host (Python) puts kernels and copies on it and goes
on at once; the device runs them one after another, in order. This module imitates
exactly that with a worker thread: ``launch`` returns at once, the worker runs each
piece of work in order and takes at least the modelled time for it, ``synchronize``
waits until the queue is empty, events stamp the time at which the worker reaches
them, and a ``non_blocking`` device-to-host copy hands back a host buffer that holds
stale values (zeros here) until the worker gets to the copy. A second queue
(``gpu.stream()``, like ``torch.cuda.Stream``) has its own worker, so work on two
queues runs side by side; ``wait_stream`` and ``wait_event`` order one queue after a
point of another, and a kernel that reads a tensor no queued work has filled yet
fails (on a GPU it would read stale memory without a word). Every figure it gives
is the model's, chosen by the lesson; none is a GPU's.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch

from autograder.common.i18n import Text

LABEL = "MODEL of a GPU queue (CPU stand-in), not a measurement"
LABEL_ZH = "GPU 队列的模型（CPU 替身），不是实测"
# How a model tensor prints, in the learner's language (it is a model, not a CUDA tensor).
_MODEL_TENSOR = Text("model tensor({values})", "模型张量({values})")
# The model's own errors, in the learner's language (PyTorch's stay as PyTorch writes them).
_BOTH_REACHED = Text(
    "model: both events must be reached before elapsed_time",
    "模型：两个事件都执行到之后，才能调用 elapsed_time",
)
_RACE = Text(
    "{name} read a tensor that no work had filled yet (a race between queues; a GPU would "
    "read stale memory without an error)",
    "{name} 读取了一个还没有任何工作填充过的张量（两个队列之间的竞争；GPU 会不报任何错误地"
    "读到过期的值）",
)
_FAILED_EARLIER = Text(
    "model: a kernel launched earlier failed: {error}", "模型：之前启动的一个核函数失败了：{error}"
)


@dataclass
class Span:
    """One piece of work: when the host launched it, when the worker started and ended it."""

    name: str
    launched: float
    start: float = float("nan")
    end: float = float("nan")
    stream: str = "default"


class ModelTensor:
    """A tensor "on the model device": its values exist once the worker has computed them."""

    def __init__(self, shape: torch.Size, gpu: ModelGPU):
        self.shape, self.gpu = shape, gpu
        self.value: torch.Tensor | None = None

    def item(self) -> float:
        """Like CUDA's ``.item()``: waits for the queue (an implicit synchronization)."""
        self.gpu.synchronize()
        return self.value.item()

    def __repr__(self) -> str:
        """Printing needs the values, so it waits for the queue too (an implicit sync)."""
        self.gpu.synchronize()
        return _MODEL_TENSOR.format(values=self.value.tolist())()

    def cpu(self) -> torch.Tensor:
        """Like CUDA's ``.cpu()``: a blocking copy, so it waits for the queue first."""
        return self.gpu.to_host(self, non_blocking=False)


class ModelEvent:
    """Like ``torch.cuda.Event(enable_timing=True)``: a marker placed in the queue."""

    def __init__(self, gpu: ModelGPU):
        self.gpu = gpu
        self.time: float | None = None
        self.recorded = False
        self._done = threading.Event()

    def record(self, stream: ModelStream | None = None) -> None:
        """Put the marker on a queue (the current one by default); its worker stamps it."""
        self._done.clear()
        self.recorded = True
        (stream or self.gpu.current)._put(self._stamp, None)

    def _stamp(self) -> None:
        self.time = time.perf_counter()
        self._done.set()

    def query(self) -> bool:
        """Has the worker reached the marker yet?"""
        return self._done.is_set()

    def synchronize(self) -> None:
        """Wait until the worker has reached the marker (not the end of the queue)."""
        self._done.wait()

    def elapsed_time(self, end: ModelEvent) -> float:
        """Milliseconds of queue time between two reached markers; an error before that."""
        if not (self.query() and end.query()):
            raise RuntimeError(_BOTH_REACHED())
        return (end.time - self.time) * 1000.0


class ModelStream:
    """One queue of the model device and its worker thread, like a ``torch.cuda.Stream``."""

    def __init__(self, gpu: ModelGPU, name: str):
        self.gpu, self.name = gpu, name
        self._queue: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        self._worker: threading.Thread | None = None

    def _work(self) -> None:
        """Run queued work in order; end when the queue has stayed empty a moment."""
        while True:
            try:
                job, span = self._queue.get(timeout=0.2)
            except queue.Empty:
                with self._lock:
                    if self._queue.empty():
                        self._worker = None
                        return
                continue
            if span is not None:
                span.start = time.perf_counter()
            try:
                job()
            except Exception as error:  # reported at the next synchronization, as on a GPU
                self.gpu.error = self.gpu.error or error
            if span is not None:
                span.end = time.perf_counter()
            self._queue.task_done()

    def _put(self, job: Callable[[], None], span: Span | None) -> None:
        with self._lock:
            self._queue.put((job, span))
            if self._worker is None:
                self._worker = threading.Thread(target=self._work, daemon=True)
                self._worker.start()

    def wait_event(self, event: ModelEvent) -> None:
        """Later work on this queue waits until ``event`` is reached (no-op if never recorded)."""
        if event.recorded:
            self._put(event.synchronize, None)

    def wait_stream(self, other: ModelStream) -> None:
        """Later work on this queue waits for everything queued on ``other`` so far."""
        marker = self.gpu.event()
        marker.record(other)
        self.wait_event(marker)

    def synchronize(self) -> None:
        """The host waits until this queue is empty (other queues may still be busy)."""
        self._queue.join()


class ModelGPU:
    """The model device: its default queue, any side queues, and the host's calls.

    ``first_call_ms`` models a one-time cost per kernel name.
    """

    def __init__(self, launch_us: float = 20.0, first_call_ms: float = 0.0, blocking=False):
        self.launch_s = launch_us / 1e6
        self.blocking = blocking  # like CUDA_LAUNCH_BLOCKING=1: each launch waits for its work
        self.error: Exception | None = None
        self.first_call_s = first_call_ms / 1000.0
        self.spans: list[Span] = []
        self.host_calls: list[Span] = []
        self._seen: set[str] = set()
        self.default = ModelStream(self, "default")
        self.current = self.default
        self.streams = [self.default]

    @property
    def _worker(self) -> threading.Thread | None:
        return self.default._worker

    def _put(self, job: Callable[[], None], span: Span | None) -> None:
        self.current._put(job, span)

    def stream(self) -> ModelStream:
        """A new queue with its own worker, like ``torch.cuda.Stream()``."""
        made = ModelStream(self, f"side {len(self.streams)}")
        self.streams.append(made)
        return made

    @contextlib.contextmanager
    def use(self, stream: ModelStream) -> Iterator[ModelStream]:
        """Launches inside go on ``stream``, like ``with torch.cuda.stream(stream):``."""
        before, self.current = self.current, stream
        try:
            yield stream
        finally:
            self.current = before

    def current_stream(self) -> ModelStream:
        return self.current

    def _host(self, name: str, started: float) -> None:
        self.host_calls.append(Span(name, started, started, time.perf_counter()))

    def launch(self, fn: Callable, *inputs, ms: float, name: str = "kernel", shape=None):
        """Queue ``fn(*values)`` taking ``ms`` model milliseconds; return its output at once."""
        started = time.perf_counter()
        first = name not in self._seen
        self._seen.add(name)
        cost = ms / 1000.0 + (self.first_call_s if first else 0.0)
        out = ModelTensor(shape if shape is not None else inputs[0].shape, self)
        span = Span(name, started, stream=self.current.name)

        def job() -> None:
            begin = time.perf_counter()
            if any(isinstance(x, ModelTensor) and x.value is None for x in inputs):
                raise RuntimeError(_RACE.format(name=name)())
            values = [x.value if isinstance(x, ModelTensor) else x for x in inputs]
            result = fn(*values)
            time.sleep(max(0.0, cost - (time.perf_counter() - begin)))
            out.value = result  # the values exist once the work has taken its time

        self._wait_launch(started)
        self._put(job, span)
        self.spans.append(span)
        self._host(f"launch {name}", started)
        if self.blocking:
            self.synchronize()
        return out

    def _wait_launch(self, started: float) -> None:
        """The host's own cost of a launch (a few microseconds on a real GPU)."""
        while time.perf_counter() - started < self.launch_s:
            pass

    def to_device(
        self, host: torch.Tensor, pinned: bool, non_blocking: bool, ms: float
    ) -> ModelTensor:
        """A host-to-device copy taking ``ms``. Only pinned memory lets the host go on at once.

        From pageable memory the driver stages the data through a pinned buffer chunk by
        chunk, its host copy overlapping the transfer, and the host waits for the copy
        whatever ``non_blocking`` says. The model gives both kinds of copy the same
        ``ms``; a real GPU's figures are the ones its cells print.
        """
        out = self.launch(torch.clone, host, ms=ms, name="copy H2D")
        if not (pinned and non_blocking):
            self.current.synchronize()
        return out

    def pin(self, host: torch.Tensor, ms: float) -> torch.Tensor:
        """Like ``pin_memory()``: a copy into page-locked memory, done by the host itself.

        It takes ``ms`` of the host's time (the model charges what the copy to the
        device would take) and queues nothing: the device is idle meanwhile.
        """
        started = time.perf_counter()
        time.sleep(ms / 1000.0)
        self._host("pin_memory", started)
        return host.clone()

    def to_host(self, x: ModelTensor, non_blocking: bool = False) -> torch.Tensor:
        """A device-to-host copy. With ``non_blocking`` the buffer is stale until the copy runs."""
        started = time.perf_counter()
        buffer = torch.zeros(x.shape)
        span = Span("copy D2H", started, stream=self.current.name)
        self._put(lambda: buffer.copy_(x.value), span)
        self.spans.append(span)
        if not non_blocking:
            self.synchronize()
        self._host("to_host" + (" (non_blocking)" if non_blocking else ""), started)
        return buffer

    def event(self) -> ModelEvent:
        return ModelEvent(self)

    def synchronize(self) -> None:
        """Wait until every queued piece of work has run, as ``torch.cuda.synchronize()``."""
        started = time.perf_counter()
        for stream in list(self.streams):
            stream.synchronize()
        self._host("synchronize", started)
        if self.error is not None:
            error, self.error = self.error, None
            raise RuntimeError(_FAILED_EARLIER.format(error=error)())
