"""A MODEL of a CUDA device's streams and events on virtual time: not a measurement.

A check that hands the learner's function streams in place of ``torch.cuda`` needs them
to behave as CUDA's do, and deterministically on every machine: :class:`VDevice` keeps
the model µs at which each stream's queued work ends, when each tensor that lands on the
device is ready and on which stream it was made, which tensors another stream borrowed
(and whether ``record_stream`` was called for it), and writes into memory another
stream's queued work may still use. :class:`~autograder.common.model_cuda.ModelCuda`
drives it from the tensor calls it sees.

This module runs beside learner code; it calls nothing of the learner's.
"""

from __future__ import annotations

import contextlib
import weakref

import torch


class VStream(torch.Stream):
    """A stream of the check's virtual device: the model µs at which its queued work ends.

    A ``torch.Stream`` (of the CPU) only so that ``Tensor.record_stream`` accepts it.
    """

    def __new__(cls, device: VDevice, name: str):
        return super().__new__(cls, device="cpu")

    def __init__(self, device: VDevice, name: str):
        self.model, self.name, self.free_at = device, name, 0.0
        self.entered: list = []  # `with side:` blocks open, innermost last

    def __enter__(self) -> VStream:
        """``with side:`` makes the stream current as ``cuda.stream(side)`` does: a
        ``torch.Stream`` is its own context manager (torch's would switch the CPU's)."""
        self.entered.append(self.model.stream(self))
        self.entered[-1].__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.entered.pop().__exit__(*exc)

    def wait_stream(self, other: VStream) -> None:
        self.model.log.append(f"{self.name}.wait_stream({other.name})")
        self.free_at = max(self.free_at, other.free_at)

    def wait_event(self, event: VEvent) -> None:
        self.model.log.append(f"{self.name}.wait_event")
        if event.at is not None:
            self.free_at = max(self.free_at, event.at)

    def record_event(self, event: VEvent | None = None) -> VEvent:
        event = event if event is not None else VEvent(self.model)
        event.record(self)
        return event

    def query(self) -> bool:
        return self.free_at <= self.model.host_us

    def synchronize(self) -> None:
        self.model.log.append(f"{self.name}.synchronize")
        self.model.host_us = max(self.model.host_us, self.free_at)

    def __repr__(self) -> str:
        return f"<stream {self.name} (model)>"


class VEvent:
    """An event of the virtual device: the model µs its stream reaches it."""

    def __init__(self, device: VDevice, enable_timing: bool = False, **_):
        self.device, self.at = device, None

    def record(self, stream: VStream | None = None) -> None:
        self.at = (stream or self.device.current).free_at

    def wait(self, stream: VStream | None = None) -> None:
        (stream or self.device.current).wait_event(self)

    def query(self) -> bool:
        return self.at is None or self.at <= self.device.host_us

    def synchronize(self) -> None:
        self.device.log.append("event.synchronize")
        if self.at is not None:
            self.device.host_us = max(self.device.host_us, self.at)


class VDevice:
    """The check's MODEL of a CUDA device with streams, on virtual time; not a measurement.

    It stands in for ``torch.cuda`` in exercise 6 (``stream``, ``current_stream``,
    ``Stream``, ``Event``, ``synchronize``). Work goes on the current stream after what
    is queued there; a copy to the device from pinned memory with ``non_blocking`` costs
    the host nothing, any other makes the host wait for it. Each tensor that lands on
    the device remembers when it is ready and on which stream it was made.
    """

    def __init__(self, busy_us: float):
        self.default = VStream(self, "default")
        self.default.free_at = busy_us
        self.current, self.host_us, self.log = self.default, 0.0, []
        self.made: dict[int, tuple[weakref.ref, float, VStream]] = {}
        self.recorded: dict[int, list[str]] = {}
        # memory allocated on a stream, and until when that stream's earlier work runs
        self.allocated: dict[int, tuple[weakref.ref, VStream, float]] = {}
        # tensors made on one stream and read by work on another: (tensor, reader, recorded
        # for) -- kept past the tensor's life: freed unrecorded, its memory may be reused
        self.borrowed: list[tuple[weakref.ref, str, set[str]]] = []
        self.early_writes = 0  # writes into memory another stream's queued work may still use

    def Stream(self, *args, **kwargs) -> VStream:  # noqa: N802 - torch.cuda's spelling
        return VStream(self, "side")

    def Event(self, *args, **kwargs) -> VEvent:  # noqa: N802 - torch.cuda's spelling
        return VEvent(self, *args, **kwargs)

    def current_stream(self, device=None) -> VStream:
        return self.current

    def default_stream(self, device=None) -> VStream:
        return self.default

    @contextlib.contextmanager
    def stream(self, stream: VStream | None):
        before = self.current
        self.current = stream if stream is not None else before
        try:
            yield
        finally:
            self.current = before

    def synchronize(self, device=None) -> None:
        self.log.append("synchronize")
        self.host_us = max([self.host_us, self.default.free_at, *self._ends()])

    def _ends(self) -> list[float]:
        return [made[1] for made in self.made.values()]

    def launch(self, us: float) -> float:
        """Queue ``us`` of work on the current stream; the model µs it ends."""
        start = max(self.current.free_at, self.host_us)
        self.current.free_at = start + us
        return self.current.free_at

    def landed(self, t: torch.Tensor, ready: float) -> None:
        self.made[id(t)] = (weakref.ref(t), ready, self.current)

    def made_of(self, t) -> tuple[float, VStream] | None:
        entry = self.made.get(id(t))
        return entry[1:] if entry is not None and entry[0]() is t else None

    def allocate(self, t: torch.Tensor) -> None:
        """``t``'s memory comes from the current stream's pool, whose queued work runs until
        its ``free_at``: a block freed by that work may still be read until then."""
        self.allocated[id(t)] = (weakref.ref(t), self.current, self.current.free_at)
        self.landed(t, 0.0)

    def writing(self, t: torch.Tensor, start: float) -> None:
        """Work on the current stream writes into ``t`` from ``start``: too early where ``t``
        was allocated on another stream whose earlier work may still use the block."""
        entry = self.allocated.get(id(t))
        if entry is not None and entry[0]() is t and entry[1] is not self.current:
            self.early_writes += int(start < entry[2] - 1e-9)

    def reading(self, tensors: list[torch.Tensor]) -> None:
        """Work on the current stream reads ``tensors``: those made on a side stream are
        borrowed, and need ``record_stream`` for this stream before they are freed."""
        for t in tensors:
            made = self.made_of(t)
            if made is not None and made[1] is not self.current and made[1] is not self.default:
                recorded = set(self.recorded.get(id(t), []))
                self.borrowed.append((weakref.ref(t), self.current.name, recorded))

    def recording(self, t: torch.Tensor, stream_name: str) -> None:
        self.recorded.setdefault(id(t), []).append(stream_name)
        for ref, _, recorded in self.borrowed:
            if ref() is t:
                recorded.add(stream_name)

    def unrecorded_borrows(self) -> int:
        """Borrowed tensors not recorded for the stream that read them."""
        return sum(reader not in recorded for _, reader, recorded in self.borrowed)
