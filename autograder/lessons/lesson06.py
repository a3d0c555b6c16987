"""Checks for lesson 06: CUDA is asynchronous — synchronize, events, non_blocking.

Each check is an ``observe`` / ``judge`` pair (see autograder/common/protocol.py).
On every machine the checks look at the *order* of calls: the exercises receive the
functions that wait or read the clock as arguments, or the check watches torch calls
through a ``TorchFunctionMode`` and puts stand-ins in place of the probing functions
for the length of one call. Where a GPU exists, the same observation also runs the
real thing (CUDA events, real copies); without one, the judge says "skipped: no GPU"
beside its pass, never a silent pass.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

import torch
from torch.overrides import TorchFunctionMode

from autograder.common import compare as c
from autograder.common import trusted
from autograder.common.exercise import Exercise
from autograder.common.i18n import Text
from autograder.common.inputs import resolve_device, uniform
from autograder.common.observation import described_float
from autograder.common.protocol import Check, call, note, returned, verdict
from autograder.common.result import CheckResult, require
from autograder.kernel.selfcheck import run_self_check

# Taken when the checks are imported, before any learner code runs.
_CUDA_SYNCHRONIZE = torch.cuda.synchronize
_ACCELERATOR_SYNCHRONIZE = torch.accelerator.synchronize
_CUDA_EVENT = torch.cuda.Event
_perf_counter = time.perf_counter
_median = statistics.median

NO_GPU = Text(
    "skipped: no GPU — {what} runs only where torch sees a CUDA GPU",
    "已跳过：没有 GPU——{what}只在 torch 能看到 CUDA GPU 的机器上运行",
)


def _on_gpu(device: str) -> bool:
    return torch.device(device).type == "cuda"


def _logged(function, log: list):
    """``function`` that also writes "sync" in the log when it is called."""

    def wrapper(*args, **kwargs):
        log.append("sync")
        return function(*args, **kwargs)

    return wrapper


def _gpu_work(device: str, size: int = 2048, rounds: int = 4):
    """A few milliseconds of real GPU work, launched without waiting for it."""
    a = uniform(11, size, size, device=device)

    def work() -> None:
        x = a
        for _ in range(rounds):
            x = (x @ a).tanh()

    return work


# Exercise 1 (CS-1, CS-2, CS-4) -------------------------------------------------------------

_LAUNCH_S = 1e-5  # host time of one launch in the virtual queue
_SLOW_S = 0.05  # a warm-up call (allocation, autotuning, lazy initialisation)


def _durations(seed: int, warmup: int, repeats: int) -> list[float]:
    """Device time of each call: the first ``warmup`` are slow, the others differ a little."""
    g = trusted.generator().manual_seed(seed)
    jitter = trusted.rand(repeats + 8, generator=g, dtype=torch.float64).tolist()
    return [_SLOW_S] * warmup + [0.002 * (1 + 0.5 * u) for u in jitter]


class _VirtualQueue:
    """A check's deterministic queue: virtual host time, work that finishes later.

    ``work`` costs the host a launch and puts its duration on the device;
    ``synchronize`` moves host time to the end of the device's work; ``clock`` reads
    host time. Every call is logged in order.
    """

    def __init__(self, durations: list[float]):
        self.durations, self.log = durations, []
        self.host = self.device_free = 1000.0
        self.calls = 0

    def work(self) -> None:
        self.log.append("work")
        self.host += _LAUNCH_S
        duration = self.durations[min(self.calls, len(self.durations) - 1)]
        self.calls += 1
        self.device_free = max(self.host, self.device_free) + duration

    def synchronize(self) -> None:
        self.log.append("sync")
        self.host = max(self.host, self.device_free)

    def clock(self) -> float:
        self.log.append("clock")
        return self.host


def _clock_reads_after_unfinished_work(log: list[str]) -> int:
    """How many clock reads came after work with no synchronize in between."""
    pending, count = False, 0
    for entry in log:
        if entry == "work":
            pending = True
        elif entry == "sync":
            pending = False
        elif entry == "clock" and pending:
            count += 1
    return count


def _timed_calls(log: list[str]) -> list[int]:
    """Which calls of work() (0, 1, ...) sit alone between two consecutive clock reads."""
    timed, count, between, started = [], 0, [], False
    for entry in log:
        if entry == "work":
            between.append(count)
            count += 1
        elif entry == "clock":
            if started and len(between) == 1:
                timed.append(between[0])
            between, started = [], True
    return timed


_BENCH_CASES = ((3, 5), (2, 7))  # (warmup, repeats) of each virtual call


@dataclass(frozen=True)
class Benchmark(Check):
    """The median must come from synchronized, warmed-up, one-call-at-a-time intervals.

    On every machine: a virtual queue whose clock only moves on synchronize (the
    order of calls decides the figure). Where a GPU exists: real work timed by the
    learner's function against the check's own CUDA events.
    """

    number = 1
    seed: int = 0
    device: str | None = None

    def observe(self, fn) -> dict:
        device = str(resolve_device(self.device))
        cases = []
        for k, (warmup, repeats) in enumerate(_BENCH_CASES):
            q = _VirtualQueue(_durations(self.seed + k, warmup, repeats))
            out = call(fn, q.work, q.synchronize, q.clock, warmup, repeats)
            cases.append({"call": out.record(), "log": q.log[:500]})
        gpu = self._observe_gpu(fn, device) if _on_gpu(device) else None
        return {"device": device, "cases": cases, "gpu": gpu}

    def _observe_gpu(self, fn, device: str) -> dict:
        work = _gpu_work(device)
        out = call(fn, work, _CUDA_SYNCHRONIZE, _perf_counter, 3, 7)
        start, end = _CUDA_EVENT(enable_timing=True), _CUDA_EVENT(enable_timing=True)
        times = []
        for _ in range(7):
            _CUDA_SYNCHRONIZE()
            start.record()
            work()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / 1000.0)
        return {"call": out.record(), "events_s": float(_median(times))}

    def judge(self, obs: dict) -> None:
        for k, ((warmup, repeats), case) in enumerate(zip(_BENCH_CASES, obs["cases"], strict=True)):
            self._judge_case(k, warmup, repeats, case)
        if obs.get("gpu") is None:
            note(NO_GPU.format(what=Text("timing against CUDA events", "与 CUDA 事件对比计时")))
            return
        self._judge_gpu(obs["gpu"])

    def _judge_case(self, k: int, warmup: int, repeats: int, case: dict) -> None:
        ex = self.heading
        where = f"warmup={warmup}, repeats={repeats}"
        found = returned(ex, case["call"], "benchmark")
        log = case["log"]
        works, syncs = log.count("work"), log.count("sync")
        timed = _timed_calls(log)
        untimed_first = timed[0] if timed else works
        unfinished = _clock_reads_after_unfinished_work(log)
        require(
            ex,
            [
                CheckResult(
                    Text("calls of work() ({w})", "work() 的调用次数（{w}）").format(w=where),
                    works == warmup + repeats,
                    str(warmup + repeats),
                    str(works),
                    "CS-4" if works == repeats else None,
                ),
                CheckResult(
                    Text(
                        "warm-up: the first {n} calls of work() are not timed",
                        "预热：work() 的前 {n} 次调用不计时",
                    ).format(n=warmup),
                    untimed_first >= warmup,
                    Text("{n} untimed calls first", "先有 {n} 次不计时的调用").format(n=warmup),
                    Text("call {k} was timed", "第 {k} 次调用被计时了").format(k=untimed_first + 1),
                    "CS-4",
                ),
                CheckResult(
                    Text(
                        "synchronize() is called: the clock must wait for the device",
                        "调用了 synchronize()：读时钟之前必须等设备做完",
                    ),
                    syncs > 0,
                    Text("at least one call", "至少调用一次"),
                    Text("never called", "从未调用"),
                    "CS-2",
                ),
            ],
        )
        require(
            ex,
            [
                CheckResult(
                    Text(
                        "every clock read comes after synchronize(), not straight after work()",
                        "每次读时钟都在 synchronize() 之后，而不是紧跟在 work() 之后",
                    ),
                    unfinished == 0,
                    "work() → synchronize() → clock()",
                    Text(
                        "{n} clock read(s) while work was still queued",
                        "有 {n} 次读时钟时设备上的工作还没做完",
                    ).format(n=unfinished),
                    "CS-1",
                )
            ],
        )
        durations = _durations(self.seed + k, warmup, repeats)[warmup : warmup + repeats]
        want = _median([_LAUNCH_S + d for d in durations])
        results = [
            CheckResult(
                Text("benchmark returns a Python float", "benchmark 返回 Python float"),
                found.kind == "float",
                "float",
                found.describe(),
            )
        ]
        if found.kind == "float":
            results.append(
                CheckResult(
                    Text(
                        "the median of {r} timed calls, in seconds ({w})",
                        "{r} 次计时调用的中位数，单位为秒（{w}）",
                    ).format(r=repeats, w=where),
                    abs(found.value - want) <= 1e-6 + 1e-4 * want,
                    f"{want:.6f}",
                    f"{found.value:.6f}",
                )
            )
        require(ex, results)

    def _judge_gpu(self, gpu: dict) -> None:
        ex = self.heading
        found = returned(ex, gpu["call"], "benchmark")
        events = gpu["events_s"]
        close = found.kind == "float" and abs(found.value - events) <= 2e-4 + 0.3 * events
        require(
            ex,
            [
                CheckResult(
                    Text(
                        "on the GPU: your median against the check's CUDA events (±30 %)",
                        "在 GPU 上：你的中位数与检查用 CUDA 事件测得的值相比（±30 %）",
                    ),
                    close,
                    f"{events * 1000:.3f} ms",
                    f"{found.value * 1000:.3f} ms" if found.kind == "float" else found.describe(),
                    "CS-2" if found.kind == "float" and found.value < 0.2 * events else None,
                )
            ],
        )


def check_benchmark(fn, seed: int = 0, device=None) -> None:
    verdict(Benchmark(seed, None if device is None else str(device)), fn)


# Exercise 2 (CS-3) -------------------------------------------------------------------------


def _target(name: str, args: tuple, kwargs: dict):
    """(device, non_blocking) a ``to`` / ``cuda`` / ``cpu`` call asks for; None if no device."""
    device = kwargs.get("device")
    non_blocking = bool(kwargs.get("non_blocking", False))
    bools = [a for a in args[1:] if trusted.type_(a) is bool]
    if bools:
        non_blocking = non_blocking or bools[0]
    for a in args[1:]:
        if trusted.isinstance_(a, (str, torch.device, int)) and trusted.type_(a) is not bool:
            device = a
        elif trusted.isinstance_(a, trusted.tensor_type):
            device = a.device
    if name == "cuda":
        index = device if device is not None else 0
        device = torch.device("cuda", index) if trusted.type_(index) is int else index
    if name == "cpu":
        device = "cpu"
    return (None if device is None else torch.device(device)), non_blocking


class _Copies(TorchFunctionMode):
    """Logs every copy to the CPU made from one of the watched tensors, in the shared log."""

    def __init__(self, watched: list[torch.Tensor], log: list):
        super().__init__()
        self.storages = {int(t.untyped_storage().data_ptr()) for t in watched}
        self.log = log

    def _watched(self, t) -> bool:
        return trusted.isinstance_(t, trusted.tensor_type) and (
            int(t.untyped_storage().data_ptr()) in self.storages
        )

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = str(getattr(func, "__name__", ""))
        if name in ("to", "cpu") and args and self._watched(args[0]):
            device, non_blocking = _target(name, args, kwargs)
            if device is not None and device.type == "cpu":
                self.log.append("copy, non_blocking" if non_blocking else "copy")
        elif name == "copy_" and len(args) > 1 and self._watched(args[1]):
            blocking = not (kwargs.get("non_blocking") or (len(args) > 2 and args[2] is True))
            if args[0].device.type == "cpu":
                self.log.append("copy" if blocking else "copy, non_blocking")
        return func(*args, **kwargs)


def _to_host_cases(seed: int) -> list[tuple[tuple[int, ...], torch.dtype]]:
    """Shapes and dtypes of the tensors handed over: several, of different kinds."""
    g = trusted.generator().manual_seed(seed)
    n = int(trusted.randint(2, 5, (1,), generator=g))
    return [((k + 2, 3), torch.float64 if k % 2 else torch.float32) for k in range(n)]


def _heavy(device: str) -> torch.Tensor:
    """A 0-dim zero that the device computes only after a few milliseconds of work."""
    a = uniform(12, 2048, 2048, device=device)
    x = a
    for _ in range(6):
        x = (x @ a).tanh()
    return x.mean().clamp(0, 0)


@dataclass(frozen=True)
class ToHost(Check):
    """Copies issued non_blocking, then the learner's synchronize, then the return.

    The observation logs copies (a ``TorchFunctionMode``) and calls of the
    ``synchronize`` it hands over in one list. On a GPU the tensors come out of a few
    milliseconds of queued work, and the returned host copies are read at once: a
    copy that was not waited for shows stale values.
    """

    number = 2
    seed: int = 0
    device: str | None = None

    def observe(self, fn) -> dict:
        device = str(resolve_device(self.device))
        log: list[str] = []
        gpu = _on_gpu(device)
        offset = _heavy(device) if gpu else None
        tensors = []
        for k, (shape, dtype) in enumerate(_to_host_cases(self.seed)):
            t = uniform(self.seed + k, *shape, device=device, dtype=dtype)
            tensors.append(t + offset.to(dtype) if gpu else t)

        def synchronize() -> None:
            log.append("sync")
            if gpu:
                _CUDA_SYNCHRONIZE()

        with _Copies(tensors, log):
            if gpu:  # torch's own synchronize functions wait too, and are logged as such
                out = _with_patches(
                    fn,
                    [
                        (torch.cuda, "synchronize", _logged(_CUDA_SYNCHRONIZE, log)),
                        (torch.accelerator, "synchronize", _logged(_ACCELERATOR_SYNCHRONIZE, log)),
                    ],
                    list(tensors),
                    synchronize,
                )
            else:
                out = call(fn, list(tensors), synchronize)
        log.append("return")
        record = out.record()  # the host copies read at once, as the caller would
        return {"device": device, "call": record, "log": log[:200], "gpu": gpu}

    def judge(self, obs: dict) -> None:
        ex = self.heading
        cases = _to_host_cases(self.seed)
        found = returned(ex, obs["call"], "to_host")
        log = obs["log"]
        copies = [i for i, entry in enumerate(log) if entry.startswith("copy")]
        blocking = [i for i in copies if log[i] == "copy"]
        last_sync = max((i for i, entry in enumerate(log) if entry == "sync"), default=-1)
        unsafe = [i for i in copies if log[i] == "copy, non_blocking" and i > last_sync]
        require(
            ex,
            [
                CheckResult(
                    Text("a list with one host copy per tensor", "一个 list，每个张量一个主机副本"),
                    found.kind == "list" and found.length == len(cases),
                    Text("a list of {n} tensors", "包含 {n} 个张量的 list").format(n=len(cases)),
                    found.describe(),
                ),
                CheckResult(
                    Text(
                        "the copies are issued with non_blocking=True",
                        "拷贝时传入 non_blocking=True",
                    ),
                    bool(copies) and not blocking,
                    Text("every copy non_blocking", "每次拷贝都是非阻塞的"),
                    Text("{b} blocking copies of {n}", "{n} 次拷贝中有 {b} 次是阻塞的").format(
                        b=len(blocking), n=len(copies)
                    ),
                ),
                CheckResult(
                    Text(
                        "synchronize() after the last non_blocking copy, before returning",
                        "最后一次非阻塞拷贝之后、返回之前调用 synchronize()",
                    ),
                    not unsafe,
                    Text("copy … → synchronize() → return", "拷贝 … → synchronize() → 返回"),
                    Text("the order was: {o}", "实际顺序：{o}").format(o=" → ".join(log[:12])),
                    "CS-3",
                ),
            ],
        )
        results = []
        for k, (item, (shape, dtype)) in enumerate(zip(found.items, cases, strict=True)):
            want = uniform(self.seed + k, *shape, device="cpu", dtype=dtype)
            name = f"host[{k}]"
            results += [
                c.is_tensor(item, name),
                c.on_device(item, "cpu", name),
                c.dtype(item, dtype, name),
                c.values(item, want, name, "CS-3" if unsafe else None),
            ]
        require(ex, results)
        if not obs["gpu"]:
            note(NO_GPU.format(what=Text("reading real copies at once", "立即读取真实拷贝")))


def check_to_host(fn, seed: int = 0, device=None) -> None:
    verdict(ToHost(seed, None if device is None else str(device)), fn)


# Exercise 3 (CS-5) -------------------------------------------------------------------------

_REAL_IS_AVAILABLE = torch.accelerator.is_available
_REAL_CURRENT = torch.accelerator.current_accelerator

# (what the machine is, the build's accelerator, whether it is usable, the right answer)
_MACHINES = (
    (
        Text("a CUDA build on a machine without a usable GPU", "CUDA 版本、机器上没有可用的 GPU"),
        "cuda",
        False,
        "cpu",
    ),
    (Text("a CUDA build with one GPU", "CUDA 版本、有一块 GPU"), "cuda", True, "cuda"),
    (Text("a CPU-only build", "只支持 CPU 的版本"), None, False, "cpu"),
    (
        Text("a build for Apple GPUs (MPS), usable", "Apple GPU（MPS）版本、可用"),
        "mps",
        True,
        "mps",
    ),
    (Text("an MPS build whose GPU is not usable", "MPS 版本、GPU 不可用"), "mps", False, "cpu"),
)


class _Machine:
    """Stand-ins for torch's probing functions, as they answer on one kind of machine."""

    def __init__(self, built: str | None, usable: bool):
        self.built, self.usable = built, usable

    def patches(self) -> list[tuple[object, str, object]]:
        built, usable = self.built, self.usable
        device = None if built is None else torch.device(built)
        count = 1 if usable else 0

        def current_accelerator(check_available: bool = False):
            return None if check_available and not usable else device

        return [
            (torch.accelerator, "current_accelerator", current_accelerator),
            (torch.accelerator, "is_available", lambda: usable),
            (torch.accelerator, "device_count", lambda: count),
            (torch.cuda, "is_available", lambda: usable and built == "cuda"),
            (torch.cuda, "device_count", lambda: count if built == "cuda" else 0),
            (torch.backends.mps, "is_available", lambda: usable and built == "mps"),
            (torch.backends.mps, "is_built", lambda: built == "mps"),
            (torch.backends.cuda, "is_built", lambda: built == "cuda"),
        ]


def _with_machine(fn, machine: _Machine, *args):
    """Call fn with torch's probing functions answering as on ``machine``; restore them after."""
    return _with_patches(fn, machine.patches(), *args)


def _with_patches(fn, patches: list, *args):
    """Call fn with stand-ins in place of module functions; put the originals back after."""
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in patches]
    try:
        for owner, name, stand_in in patches:
            setattr(owner, name, stand_in)
        return call(fn, *args)
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)


@dataclass(frozen=True)
class PickDevice(Check):
    """The device picker must name an accelerator only when it is usable.

    Each machine is simulated by putting stand-ins for torch's probing functions in
    place for one call; a last call runs on this machine as it is, against what the
    trusted probes (taken at import) say.
    """

    number = 3
    seed: int = 0
    device: str | None = None

    def _machines(self) -> list[tuple]:
        """The simulated machines in an order drawn from the seed (hidden checks use others)."""
        g = trusted.generator().manual_seed(self.seed)
        order = trusted.rand(len(_MACHINES), generator=g).argsort().tolist()
        return [_MACHINES[i] for i in order]

    def observe(self, fn) -> dict:
        calls = [
            _with_machine(fn, _Machine(built, usable)).record()
            for _, built, usable, _ in self._machines()
        ]
        real = call(fn).record()
        usable = bool(_REAL_IS_AVAILABLE())
        current = _REAL_CURRENT(check_available=True) if usable else None
        here = "cpu" if current is None else current.type
        built = _REAL_CURRENT()
        return {
            "calls": calls,
            "real": real,
            "here": here,
            "built_here": None if built is None else built.type,
        }

    def judge(self, obs: dict) -> None:
        ex = self.heading
        results = []
        cases = list(self._machines())
        usable_here = obs["here"] != "cpu"
        cases.append(
            (
                Text("this machine, as it is", "这台机器本身"),
                obs["built_here"],
                usable_here,
                obs["here"],
            )
        )
        for (what, built, usable, want), record in zip(
            cases, [*obs["calls"], obs["real"]], strict=True
        ):
            found = returned(ex, record, "pick_device")
            kind = str(found.value).split(":")[0] if found.kind == "device" else None
            trusted_build = built is not None and usable is False and kind == built
            results.append(
                CheckResult(
                    Text("pick_device() on {m}", "在{m}上调用 pick_device()").format(m=what),
                    kind == want,
                    f"torch.device('{want}')",
                    found.describe(),
                    "CS-5" if trusted_build else None,
                )
            )
        require(ex, results)


def check_pick_device(fn, seed: int = 0, device=None) -> None:
    verdict(PickDevice(seed, None if device is None else str(device)), fn)


# Exercise 4 (CS-6) -------------------------------------------------------------------------


class _HostToDevice(TorchFunctionMode):
    """Watches pinning and copies to CUDA; with ``simulate``, plays a CUDA device on the CPU.

    Simulating, ``pin_memory()`` returns a copy marked pinned and a copy to CUDA
    returns a CPU copy marked "on cuda"; nothing reaches a real GPU. Watching (on a
    real GPU), the calls run as they are and are only logged.
    """

    def __init__(self, simulate: bool):
        super().__init__()
        self.simulate = simulate
        self.log: list[dict] = []
        self.pinned: dict[int, torch.Tensor] = {}
        self.on_cuda: dict[int, torch.Tensor] = {}

    def _is_pinned(self, t: torch.Tensor) -> bool:
        return id(t) in self.pinned if self.simulate else bool(t.is_pinned())

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = str(getattr(func, "__name__", ""))
        source = args[0] if args and trusted.isinstance_(args[0], trusted.tensor_type) else None
        if source is None or not self.simulate and name not in ("pin_memory", "to", "cuda"):
            return func(*args, **kwargs)
        if name == "pin_memory":
            self.log.append({"op": "pin", "cuda": source.device.type == "cuda"})
            if not self.simulate:
                return func(*args, **kwargs)
            out = source.clone()
            self.pinned[id(out)] = out
            return out
        if name == "is_pinned":
            return self._is_pinned(source)
        if name in ("to", "cuda"):
            device, non_blocking = _target(name, args, kwargs)
            if device is not None and device.type == "cuda" and source.device.type == "cpu":
                pinned = self._is_pinned(source)
                self.log.append({"op": "copy", "pinned": pinned, "non_blocking": non_blocking})
                if not self.simulate:
                    return func(*args, **kwargs)
                dtype = kwargs.get("dtype") or next(
                    (a for a in args[1:] if trusted.isinstance_(a, torch.dtype)), source.dtype
                )
                out = source.to(dtype=dtype, copy=True)
                self.on_cuda[id(out)] = out
                return out
        return func(*args, **kwargs)


def _batch(seed: int, rows: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(inputs, targets) in pageable CPU memory, as a Dataset without pin_memory gives them."""
    inputs = uniform(seed, rows, 5, device="cpu")
    g = trusted.generator().manual_seed(seed + 1)
    return inputs, trusted.randint(0, 3, (rows,), generator=g)


# (name, simulated GPU machine, target device)
_LOADS = (
    ("cuda", True, "cuda"),
    ("cpu", True, "cpu"),
    ("here", False, "cpu"),
)


@dataclass(frozen=True)
class LoadBatch(Check):
    """Pin and copy with non_blocking for a CUDA target; leave a CPU target alone.

    The CUDA target is played on the CPU by ``_HostToDevice(simulate=True)`` on every
    machine; where a GPU exists, a real copy to it is watched as well.
    """

    number = 4
    seed: int = 0
    rows: int = 6
    device: str | None = None

    def observe(self, fn) -> dict:
        device = str(resolve_device(self.device))
        loads = [(name, sim, target) for name, sim, target in _LOADS]
        if _on_gpu(device):
            loads.append(("gpu", False, device))
        cases = []
        for k, (name, simulate, target) in enumerate(loads):
            batch = _batch(self.seed + k, self.rows + k)
            spy = _HostToDevice(simulate)
            with spy:
                if simulate:
                    out = _with_machine(fn, _Machine("cuda", True), batch, torch.device(target))
                else:
                    out = call(fn, batch, torch.device(target))
            items = out.value if out.ok and trusted.type_(out.value) in (tuple, list) else []
            cases.append(
                {
                    "name": name,
                    "target": target,
                    "call": out.record(),
                    "on_cuda": [id(t) in spy.on_cuda for t in list(items)[:4]],
                    "log": spy.log[:50],
                }
            )
        return {"cases": cases}

    def judge(self, obs: dict) -> None:
        for k, case in enumerate(obs["cases"]):
            self._judge_case(k, case)
        if not any(case["name"] == "gpu" for case in obs["cases"]):
            note(NO_GPU.format(what=Text("a real pinned copy", "真实的锁页内存拷贝")))

    def _judge_case(self, k: int, case: dict) -> None:
        ex = self.heading
        target, name = case["target"], case["name"]
        found = returned(ex, case["call"], "load_batch")
        where = {
            "cuda": Text("to a CUDA device", "拷到 CUDA 设备"),
            "gpu": Text("to this machine's GPU", "拷到本机 GPU"),
            "cpu": Text("to the CPU, on a machine with a GPU", "在有 GPU 的机器上拷到 CPU"),
            "here": Text("to the CPU, on this machine", "在本机上拷到 CPU"),
        }[name]
        require(
            ex,
            [
                CheckResult(
                    Text(
                        "load_batch {w}: returns (inputs, targets)",
                        "load_batch {w}：返回 (inputs, targets)",
                    ).format(w=where),
                    found.kind == "tuple" and found.length == 2,
                    "(inputs, targets)",
                    found.describe(),
                )
            ],
        )
        batch = _batch(self.seed + k, int(self.rows) + k)
        results = []
        cuda_target = torch.device(target).type == "cuda"
        log = case["log"]
        for j, (item, want) in enumerate(zip(found.items, batch, strict=True)):
            label = ("inputs", "targets")[j]
            shown = f"{label} ({target})"
            if name == "cuda":
                results.append(
                    CheckResult(
                        Text("{x} was copied to the CUDA device", "{x} 已拷到 CUDA 设备").format(
                            x=label
                        ),
                        case["on_cuda"][j] if j < len(case["on_cuda"]) else False,
                        "x.to(device, ...)",
                        Text("still the CPU tensor", "仍是 CPU 上的张量"),
                    )
                )
            else:
                stayed = not (j < len(case["on_cuda"]) and case["on_cuda"][j])
                placed = c.on_device(item, target, shown)
                found_on = placed.found if stayed else "cuda"
                results.append(CheckResult(placed.what, placed.passed and stayed, target, found_on))
            results += [c.values(item, want, shown), c.dtype(item, want.dtype, shown)]
        copies = [e for e in log if e["op"] == "copy"]
        pins = [e for e in log if e["op"] == "pin"]
        if cuda_target:
            pageable = [e for e in copies if e["non_blocking"] and not e["pinned"]]
            results += [
                CheckResult(
                    Text(
                        "copies to CUDA start from pinned memory (pin_memory())",
                        "拷到 CUDA 的数据来自锁页内存（pin_memory()）",
                    ),
                    bool(copies) and all(e["pinned"] for e in copies),
                    Text("pinned", "锁页内存"),
                    Text("pageable memory", "可分页内存"),
                    "CS-6" if pageable else None,
                ),
                CheckResult(
                    Text("the copies use non_blocking=True", "拷贝时传入 non_blocking=True"),
                    bool(copies) and all(e["non_blocking"] for e in copies),
                    "non_blocking=True",
                    Text("a blocking copy", "阻塞拷贝"),
                ),
            ]
        else:
            results.append(
                CheckResult(
                    Text(
                        "nothing is pinned for a batch that stays on the CPU",
                        "留在 CPU 上的批次不需要锁页",
                    ),
                    not pins,
                    Text("no pin_memory()", "不调用 pin_memory()"),
                    Text("{n} pin_memory() calls", "调用了 {n} 次 pin_memory()").format(
                        n=len(pins)
                    ),
                )
            )
        require(ex, results)


def check_load_batch(fn, seed: int = 0, rows: int = 6, device=None) -> None:
    verdict(LoadBatch(seed, rows, None if device is None else str(device)), fn)


# Exercise 5 (CS-1) -------------------------------------------------------------------------

_READS = frozenset(
    "item tolist numpy cpu __float__ __int__ __bool__ __index__ __format__ __repr__ __str__".split()
)


class _HostReads(TorchFunctionMode):
    """Counts the calls that make the host wait for a tensor's value (implicit syncs)."""

    def __init__(self):
        super().__init__()
        self.reads: list[str] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = str(getattr(func, "__name__", ""))
        if name in _READS or name == "to" and _target(name, args, kwargs)[0] == torch.device("cpu"):
            self.reads.append(name)
        return func(*args, **kwargs)


@dataclass(frozen=True)
class EpochMeanLoss(Check):
    """The mean loss of an epoch, read to the host once, not once per step."""

    number = 5
    seed: int = 0
    batches: int = 5
    device: str | None = None

    def _batches(self, k: int, device) -> list[torch.Tensor]:
        n = self.batches + 3 * k
        return [uniform(self.seed + 10 * k + j, 4, 3, device=device) for j in range(n)]

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        cases = []
        for k in range(2):
            steps: list[int] = []

            def step(batch, steps=steps):
                steps.append(1)
                return (batch * batch).mean()

            batches, spy = self._batches(k, device), _HostReads()
            with spy:
                out = call(fn, step, batches)
            cases.append({"call": out.record(), "reads": spy.reads[:100], "steps": len(steps)})
        return {"cases": cases}

    def judge(self, obs: dict) -> None:
        ex = self.heading
        for k, case in enumerate(obs["cases"]):
            batches = self._batches(k, "cpu")
            want = float(trusted.tensor([float((b * b).mean()) for b in batches]).mean())
            found = returned(ex, case["call"], "epoch_mean_loss")
            reads = case["reads"]
            where = Text("{n} batches", "{n} 个批次").format(n=len(batches))
            results = [
                CheckResult(
                    Text(
                        "step() is called once per batch ({w})", "每个批次调用一次 step()（{w}）"
                    ).format(w=where),
                    case["steps"] == len(batches),
                    str(len(batches)),
                    str(case["steps"]),
                ),
                CheckResult(
                    Text(
                        "values read to the host (.item(), float(), print, .cpu()...)",
                        "读回主机的次数（.item()、float()、print、.cpu() 等）",
                    ),
                    len(reads) <= 1,
                    Text("once, at the end", "只在最后读一次"),
                    Text("{n} times: {names}", "{n} 次：{names}").format(
                        n=len(reads), names=", ".join(dict.fromkeys(reads))
                    ),
                    "CS-1" if len(reads) > 1 else None,
                ),
                CheckResult(
                    Text(
                        "the mean loss as a Python float ({w})",
                        "以 Python float 表示的平均损失（{w}）",
                    ).format(w=where),
                    found.kind == "float" and abs(found.value - want) <= 1e-5 * max(1.0, abs(want)),
                    described_float(want),
                    found.describe(),
                ),
            ]
            require(ex, results)


def check_epoch_mean_loss(fn, seed: int = 0, batches: int = 5, device=None) -> None:
    verdict(EpochMeanLoss(seed, batches, None if device is None else str(device)), fn)


EXERCISES: tuple[Exercise, ...] = (
    Exercise(
        1,
        "benchmark",
        Text("time device work honestly", "老老实实地给设备上的工作计时"),
        check_benchmark,
        ("CS-1", "CS-2", "CS-4"),
    ),
    Exercise(
        2,
        "to_host",
        Text("device-to-host copies, made safe", "安全的设备到主机拷贝"),
        check_to_host,
        ("CS-3",),
    ),
    Exercise(
        3,
        "pick_device",
        Text("a device picker that checks", "会检查的设备选择器"),
        check_pick_device,
        ("CS-5",),
    ),
    Exercise(
        4,
        "load_batch",
        Text("a batch loader step", "批次加载的一步"),
        check_load_batch,
        ("CS-6",),
    ),
    Exercise(
        5,
        "epoch_mean_loss",
        Text("one host read per epoch", "每轮只读回主机一次"),
        check_epoch_mean_loss,
        ("CS-1",),
    ),
)


def self_check(namespace: dict) -> list:
    """Run every exercise's visible checks against the notebook's namespace; print a summary."""
    return run_self_check(EXERCISES, namespace)
