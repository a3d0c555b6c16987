"""A MODEL of one CUDA device on the CPU, for the checks: not a measurement.

Lesson 06's checks observe what CUDA's asynchrony makes visible to a caller (a host read
that waits, a ``non_blocking`` copy to the host that holds stale values until the device
is waited for, a copy from pinned or pageable memory on the copy engine's clock) on any
machine, with or without a GPU: :class:`ModelCuda` plays the device around the learner's
call, and :class:`~autograder.common.virtual_streams.VDevice` adds streams where a check
hands those in. (The learner-facing ``autograder.kernel.async_device.ModelGPU`` is another
thing: a worker-thread queue in real time that lesson cells drive by hand.)

This module runs beside learner code: type tests go through ``trusted`` (see trusted.py).
"""

from __future__ import annotations

import weakref

import torch
from torch.overrides import TorchFunctionMode

from autograder.common import trusted
from autograder.common.oracle import World
from autograder.common.virtual_streams import VDevice

_READS = frozenset(
    "item tolist numpy __float__ __int__ __bool__ __index__ __format__ __repr__ __str__".split()
)


def is_tensor(value) -> bool:
    return trusted.isinstance_(value, trusted.tensor_type)


def _tensors(args: tuple, kwargs: dict) -> list[torch.Tensor]:
    found = []
    for a in [*args, *kwargs.values()]:
        items = list(a) if trusted.type_(a) in (list, tuple) else [a]
        found += [t for t in items if is_tensor(t)]
    return found


def cuda_device(device) -> torch.device:
    device = torch.device(device)
    return torch.device("cuda", device.index or 0) if device.type == "cuda" else device


def _target(name: str, args: tuple, kwargs: dict, device_of):
    """(device, dtype, non_blocking) a ``to`` / ``cuda`` / ``cpu`` call asks for, or a factory
    that takes its data from a tensor (``torch.as_tensor(t, dtype, device)``)."""
    device, dtype = kwargs.get("device"), kwargs.get("dtype")
    non_blocking = bool(kwargs.get("non_blocking", False))
    bools = [a for a in args[1:] if trusted.type_(a) is bool]
    non_blocking = non_blocking or (bools[0] if bools else False)
    for a in args[1:]:
        if trusted.isinstance_(a, torch.dtype):
            dtype = a
        elif is_tensor(a):
            device, dtype = device_of(a) or a.device, a.dtype
        elif trusted.isinstance_(a, (str, torch.device, int)) and trusted.type_(a) is not bool:
            device = a
    if name == "cuda":
        device = torch.device("cuda", device) if trusted.type_(device) is int else device or "cuda"
    if name == "cpu":
        device = "cpu"
    return (None if device is None else cuda_device(device)), dtype, non_blocking


class ModelCuda(TorchFunctionMode):
    """A MODEL of one CUDA device on the CPU, for the checks; not a measurement.

    Tensors it places, and what is computed from them, are "on cuda:N": CPU tensors
    whose ``.device`` answers the model's device. Placed on ``"mps"`` or ``"xpu"``, they
    play another accelerator's tensors, whose work queues and whose copies to the host
    come back the same way. Host reads of them (``.item()``,
    ``float()``, ``print``, ``.tolist()``, ``torch.tensor([...])``) and blocking copies
    to the host wait for the device; a ``non_blocking`` copy to the host returns a
    buffer that holds stale values (zeros) until the device is waited for; copies to
    the device are logged with whether their source was pinned, and placed on the
    model's timeline (:meth:`_timeline`). With ``real``, nothing is played: copies to a
    real GPU are only logged.
    """

    def __init__(self, real: bool = False):
        super().__init__()
        self.real = real
        self.where: dict[int, tuple] = {}
        self.pinned: dict[int, weakref.ref] = {}
        self.pending: list[tuple[torch.Tensor, torch.Tensor]] = []
        self.log: list[str] = []
        self.host_us = self.copy_engine_us = self.ready_us = 0.0
        self.streams: VDevice | None = None  # exercise 6: streams on virtual time
        self.copy_us = 0.0
        self.pins = 0  # pin_memory() calls that made a host copy (of memory not yet pinned)

    def place(self, t: torch.Tensor, device="cuda") -> torch.Tensor:
        """``t`` on the model's ``device``; placed on the CPU, it stays the CPU tensor it is
        (a machine without an accelerator: nothing to play)."""
        if cuda_device(device).type != "cpu":
            self.where[id(t)] = (weakref.ref(t), cuda_device(device))
        return t

    def device_of(self, t) -> torch.device | None:
        entry = self.where.get(id(t))
        return entry[1] if entry is not None and entry[0]() is t else None

    def is_pinned(self, t) -> bool:
        ref = self.pinned.get(id(t))
        return bool(t.is_pinned()) if self.real else ref is not None and ref() is t

    def synchronize(self) -> None:
        """The device's ``synchronize()``: every queued copy is done when it returns."""
        self._wait()
        self.log.append("sync")

    def _wait(self) -> None:
        for buffer, values in self.pending:
            buffer.detach().copy_(values)
        self.pending = []

    def _mark(self, out, device):
        for t in out if trusted.type_(out) in (list, tuple) else [out]:
            if is_tensor(t):
                self.place(t, device)
        return out

    def _to_host(self, out: torch.Tensor, non_blocking: bool) -> None:
        if non_blocking:
            self.pending.append((out, out.detach().clone()))
            out.detach().zero_()
        else:
            self._wait()
        self.log.append("to host, non_blocking" if non_blocking else "to host, blocking")

    def _to_device(self, source: torch.Tensor, non_blocking: bool, out=None) -> None:
        pinned = self.is_pinned(source)
        memory = "pinned" if pinned else "pageable"
        self.log.append(f"to device, {memory}, {'non_blocking' if non_blocking else 'blocking'}")
        self._timeline(source, pinned, non_blocking)
        if self.streams is not None and out is not None:
            self.streams.writing(out, max(self.streams.current.free_at, self.streams.host_us))
            ready = self.streams.launch(self.copy_us)
            if not (pinned and non_blocking):
                self.streams.host_us = max(self.streams.host_us, ready)
            self.streams.landed(out, ready)

    def _timeline(self, source: torch.Tensor, pinned: bool, non_blocking: bool) -> None:
        """A copy to the device on the model's clocks (model µs, not a measurement).

        The copy engine moves ``_US_PER_BYTE`` per byte, one copy after another. From
        pinned memory it is a DMA the host only queues (and waits for when blocking);
        from pageable memory the driver stages the data through a pinned buffer chunk
        by chunk, its host copy overlapping the DMA, and the host waits for all of it.
        """
        cost = _bytes(source) * _US_PER_BYTE
        start = max(self.host_us, self.copy_engine_us)
        self.copy_engine_us = start + cost
        self.ready_us = max(self.ready_us, self.copy_engine_us)
        if not (pinned and non_blocking):
            self.host_us = self.copy_engine_us

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = str(getattr(func, "__name__", ""))
        first = args[0] if args and is_tensor(args[0]) else None
        if self.real:
            if first is not None and name in ("to", "cuda"):
                device, _, non_blocking = _target(name, args, kwargs, lambda t: None)
                if device is not None and device.type == "cuda" and first.device.type == "cpu":
                    self._to_device(first, non_blocking)
            return func(*args, **kwargs)
        where = self.device_of(first) if first is not None else None
        if where is not None and name == "__get__":
            prop = str(getattr(getattr(func, "__self__", None), "__name__", ""))
            if prop == "device":
                return where
            if prop in _IS_DEVICE:
                return prop == f"is_{where.type}"
        if first is not None and name == "record_stream" and self.streams is not None:
            self.streams.recording(first, str(getattr(args[1], "name", "?")))
            return None
        if self.streams is not None and name not in _METADATA:
            self.streams.reading(_tensors(args, kwargs))
        if first is not None and name == "is_pinned":
            return self.is_pinned(first)
        if first is not None and name == "pin_memory":
            self.log.append("pin")
            if where is not None:
                raise RuntimeError("cannot pin 'torch.cuda.FloatTensor': only dense CPU tensors")
            if self.is_pinned(first):
                return first  # as in PyTorch: a pinned tensor pins to itself, at no cost
            self.host_us += _bytes(first) * _US_PER_BYTE  # a host copy into pinned memory
            self.pins += 1
            out = first.clone()
            self.pinned[id(out)] = weakref.ref(out)
            return out
        if first is not None and name == "type":  # a type name says the device: a move
            return self._typed(first, where, args[1] if len(args) > 1 else kwargs.get("dtype"))
        if first is not None and name in ("to", "cuda", "cpu"):
            device, dtype, non_blocking = _target(name, args, kwargs, self.device_of)
            if device is not None and (where is not None or device.type in _ACCELERATORS):
                return self._copy(first, where, device, dtype or first.dtype, non_blocking)
            if where is None and kwargs.get("copy"):  # a copy on the host, as a pin is
                self.host_us += _bytes(first) * _US_PER_BYTE
        if first is not None and name == "clone" and where is None:
            self.host_us += _bytes(first) * _US_PER_BYTE
        if first is not None and name == "contiguous" and not first.is_contiguous():
            # a copy into dense memory: on the host the host makes it; on the device it is a
            # kernel after the data has landed, so the batch is ready that much later
            if where is None:
                self.host_us += _bytes(first) * _US_PER_BYTE
            else:
                self.ready_us += _bytes(first) * _US_PER_BYTE
        if name == "copy_" and first is not None and len(args) > 1 and is_tensor(args[1]):
            source = self.device_of(args[1])
            non_blocking = bool(kwargs.get("non_blocking") or (len(args) > 2 and args[2] is True))
            out = func(*args, **kwargs)
            if source is not None and where is None:
                self._to_host(first, non_blocking)
            elif where is not None and source is None:
                self._to_device(args[1], non_blocking, first)
            return out
        if where is not None and name in _READS:
            if name == "numpy":
                raise TypeError("can't convert cuda:0 device type tensor to numpy")
            self._wait()
            self.log.append(f"read: {name}")
        if name in ("tensor", "as_tensor") and args and trusted.type_(args[0]) in (list, tuple):
            for item in args[0]:
                if is_tensor(item) and self.device_of(item) is not None:
                    self._wait()
                    self.log.append(f"read: torch.{name}")
        if name == "__setitem__" and where is None and self.device_of(args[-1]) is not None:
            self._wait()  # host[k] = a device tensor: a blocking copy to the host
            self.log.append("to host, blocking")
            return func(*args, **kwargs)
        asked, pin = kwargs.get("device"), kwargs.get("pin_memory")
        if first is not None and name in _FROM_DATA:
            device, dtype, _ = _target(name, args, kwargs, self.device_of)
            device = device or cuda_device(where or "cpu")  # none asked: the data's own device
            if where is not None or device.type in _ACCELERATORS:  # a copy, never non_blocking
                return self._copy(first, where, device, dtype or first.dtype, False)
        if asked is not None and torch.device(asked).type in _ACCELERATORS:
            out = self._mark(func(*args, **{**kwargs, "device": "cpu"}), asked)
            if self.streams is not None and is_tensor(out):
                self.streams.allocate(out)
            return out
        out = func(*args, **{k: v for k, v in kwargs.items() if k != "pin_memory"})
        if pin and is_tensor(out):  # a pinned host buffer (empty(..., pin_memory=True))
            self.pinned[id(out)] = weakref.ref(out)
        if asked is None and name not in _READS and name not in ("tensor", "as_tensor"):
            sources = [d for d in map(self.device_of, _tensors(args, kwargs)) if d is not None]
            if sources:
                self._mark(out, sources[0])
        return out

    def _typed(self, t: torch.Tensor, where, name):
        """``t.type()``: the name a device tensor has (``torch.cuda.FloatTensor``);
        ``t.type("torch.FloatTensor")``: a blocking copy to the host where ``t`` is on the
        device, ``t.type("torch.cuda.FloatTensor")`` one to the device; a dtype: ``t.to``."""
        if name is None:
            plain = t.type()
            return plain.replace("torch.", f"torch.{where.type}.", 1) if where else plain
        if trusted.isinstance_(name, torch.dtype):
            return self._copy(t, where, where, name, False) if where else t.type(name)
        if trusted.type_(name) is not str:  # a tensor type, torch.cuda.FloatTensor
            name = f"{name.__module__}.{name.__name__}"
        device = cuda_device("cuda" if ".cuda." in name else "cpu")
        dtype = torch.empty(0).type(name.replace(".cuda.", ".")).dtype
        if device.type == "cpu" and where is None:
            return t.type(name)
        return self._copy(t, where, device, dtype, False)

    def _copy(self, source, where, device: torch.device, dtype, non_blocking: bool):
        if device.type == "cpu":  # where is not None: from the device to the host
            out = source.to(dtype=dtype, copy=True)
            self._to_host(out, non_blocking)
            return out
        if device == where and dtype == source.dtype:
            return source
        out = self.place(source.to(dtype=dtype, copy=True), device)
        if where is None:
            self._to_device(source, non_blocking, out)
        return out


# the kinds of device the model plays (a copy to any of them is modelled alike)
_ACCELERATORS = frozenset(("cuda", "mps", "xpu"))
# a tensor's "which kind of device" properties, answered for the model's device
_IS_DEVICE = frozenset(("is_cpu", "is_cuda", "is_mps", "is_xpu"))

# what reads a tensor's description, not its memory: no kernel on any stream
_METADATA = frozenset(
    ("__get__", "__set__", "size", "dim", "numel", "nelement", "stride", "storage_offset")
    + ("is_contiguous", "is_pinned", "data_ptr", "element_size", "get_device", "record_stream")
)

# factories that take their data from a tensor: torch.as_tensor(t, device=...) is a copy
# (blocking) where the device differs, and the tensor itself where it does not
_FROM_DATA = ("as_tensor", "asarray", "tensor")


_US_PER_BYTE = 0.01  # the model's copy speed (host memcpy and DMA alike): 100 MB/s


def _bytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


def on_model(world: World, value) -> list:
    """Where each returned tensor is, as the model sees it (``cpu`` or ``cuda:N``)."""
    items = list(value) if trusted.type_(value) in (list, tuple) else [value]
    return [str(world.gpu.device_of(t) or t.device) if is_tensor(t) else None for t in items[:16]]
