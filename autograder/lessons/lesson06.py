"""Checks for lesson 06: CUDA is asynchronous — synchronize, events, non_blocking.

Each check is a :class:`~autograder.common.oracle.Spec`. On every machine the checks
run on a MODEL of a GPU (not a measurement): exercise 1 hands the learner's function
a virtual queue whose clock only moves when the host waits; exercises 2, 4, 5 and 6
run under :class:`ModelCuda`, which plays a CUDA device on the CPU (tensors it places
answer ``.device`` with ``cuda:N``; host reads and blocking copies wait for it; a
``non_blocking`` copy to the host holds stale values until ``synchronize()``; copies
to the device go on a timeline where a pin is a host copy); exercise 6 also hands the
function :class:`VDevice`, a model of streams on virtual time, in place of
``torch.cuda``; exercise 3 answers torch's probing functions as on several machines.
The seed draws the caller's state (arguments, a busy device, dtypes, views, 0-d
tensors, single rows, target devices), the learner's function and the reference run
in identical worlds, and everything observable is compared. Where a GPU exists the
real thing is checked as well; without one the judge says "skipped: no GPU" beside
its pass.

This module runs beside learner code (the learner's kernel, the grading sandbox's
observer) and holds no answer: the references are in ``autograder.references.lesson06``,
with the judge only. On a real GPU the learner's function is measured against the
check's own yardsticks (CUDA events, a blocking copy, the computation and the copy
alone), none of which is an answer.
"""

from __future__ import annotations

import contextlib
import math
import weakref
from dataclasses import dataclass
from typing import ClassVar

import torch

from autograder.common import trusted
from autograder.common.exercise import numbered
from autograder.common.gpu_timing import (
    event_ms,
    median,
    perf_counter,
    seconds_in_turns,
    synchronize,
)
from autograder.common.i18n import Text
from autograder.common.inputs import resolve_device, uniform, viewed
from autograder.common.model_cuda import ModelCuda, cuda_device, is_tensor, on_model
from autograder.common.oracle import (
    Rule,
    Spec,
    World,
    close,
    differs_only_in,
    draw,
    is_zero_or_none,
)
from autograder.common.protocol import call, checker, note, returned
from autograder.common.recorded import cpu_copy
from autograder.common.result import CheckResult, require
from autograder.common.simulated_machine import (
    MACHINES,
    default_device,
    machine,
    set_default_device,
    this_machine,
    twin,
)
from autograder.common.virtual_queue import VirtualQueue, is_mean, is_median
from autograder.common.virtual_streams import VDevice, VStream
from autograder.kernel.selfcheck import self_checker

NO_GPU = Text(
    "skipped: no GPU — {what} runs only where torch sees a CUDA GPU",
    "已跳过：没有 GPU——{what}只在 torch 能看到 CUDA GPU 的机器上运行",
)


@dataclass(frozen=True)
class _Modelled(Spec):
    """A spec judged on the model on every machine, and on the real GPU where there is one."""

    real: ClassVar[Text | None] = None  # what only a real GPU shows, for "skipped: no GPU"

    def calling(self, world: World, case: dict, fn):
        return getattr(world, "gpu", None) or contextlib.nullcontext()

    def on_gpu(self, fn, device: str) -> dict:
        """The observation on the real GPU ``device``."""
        raise NotImplementedError

    def judge_gpu(self, gpu: dict) -> CheckResult:
        raise NotImplementedError

    def observe(self, fn) -> dict:
        obs = super().observe(fn)
        device = str(resolve_device(self.device))
        if self.real is None or torch.device(device).type != "cuda":
            return {**obs, "gpu": None}
        with torch.cuda.device(device):  # the prompts' "current CUDA device" is the one handed in
            return {**obs, "gpu": self.on_gpu(fn, device)}

    def judge(self, obs: dict) -> None:
        super().judge(obs)
        if obs.get("gpu") is not None:
            require(self.heading, [self.judge_gpu(obs["gpu"])])
        elif self.real is not None:
            note(NO_GPU.format(what=self.real))


# Exercise 1 (CS-1, CS-2, CS-4) -------------------------------------------------------------


def _own_median(e: dict, f: dict, ctx) -> bool:
    """Another figure than the reference's that is still the median of the answer's own
    synchronized, one-call-at-a-time intervals, warm-ups untimed: where synchronize()
    itself takes time, a lap with two waits in it is a lap measured as honestly."""
    alone = ctx.probe("calls timed alone") == ctx.case["repeats"]
    honest = ctx.probe("clock reads while busy") == 0 and not ctx.probe("warm-up calls timed")
    return alone and honest and bool(ctx.probe("the median of the calls timed alone"))


def _no_warm_up(e: dict, f: dict, ctx) -> bool:
    """Warm-up calls timed, none run before timing began: the first call taken as typical.

    (Too few warm-up calls, e.g. a hard-coded count, is an ignored argument, not CS-4.)
    """
    warmed = ctx.probe("work() calls before the first clock read")
    return bool(ctx.probe("warm-up calls timed")) and warmed == 0


_CLOCK_NOTES = {  # what a case of exercise 1 changes in the queue or clock it hands over
    "exact": Text("a clock from 0, each call 2.099 ms", "时钟从 0 开始，每次调用 2.099 毫秒"),
    "hiccup": Text("the second timed call 4 times as slow", "第二次计时的调用慢了 4 倍"),
    "sync_cost": Text("each synchronize() itself taking 5 µs", "每次 synchronize() 本身耗时 5 µs"),
    "coarse": Text("a 1/1024 s clock (equal intervals)", "时钟每 1/1024 秒一跳（区间相等）"),
}


@dataclass(frozen=True)
class Benchmark(_Modelled):
    """The median of synchronized, warmed-up, one-call-at-a-time intervals.

    On every machine: a virtual queue whose clock only moves on synchronize (the
    order of calls decides the figure), with drawn warm-up and repeat counts, drawn
    durations, and a device that may still be busy when the function is called.
    Where a GPU exists: real work timed against the check's own CUDA events.
    """

    number = 1
    seed: int = 0
    device: str | None = None

    # the median is one of the intervals the caller's float64 clock gives, itself: compared
    # exactly (a float32 copy, or a round trip through milliseconds, moves it; no clock
    # subtraction in another order does)
    float_tolerance = (0.0, 0.0)
    names = {
        "result": "benchmark(...)",
        "work() calls in this world": Text(
            "calls of work() in this world, every call of benchmark together",
            "这个环境中 work() 被调用的总次数（所有 benchmark 调用合计）",
        ),
    }
    probes = {
        "work() calls": Text(
            "calls of work(): warmup untimed, then repeats timed, as the arguments say (§4)",
            "work() 的调用次数：按参数先不计时地调用 warmup 次，再计时 repeats 次（§4）",
        ),
        "synchronize() calls": Text("calls of synchronize()", "synchronize() 的调用次数"),
        "clock reads while busy": Text(
            "clock reads while work was still queued", "设备上还有未完成的工作时读时钟的次数"
        ),
        "warm-up calls timed": Text("warm-up calls that were timed", "被计时的预热调用"),
        "work() calls before the first clock read": Text(
            "calls of work() before the clock was first read", "第一次读时钟之前 work() 的调用次数"
        ),
        "calls timed alone": Text(
            "intervals between two reads of the clock you were given that hold exactly one"
            " work() (the prompt times each call alone; re-read §4 Warm-up and the median)",
            "用传给你的时钟、两次读数之间恰好只有一次 work() 的计时区间个数"
            "（题目要求逐次计时；请重读 §4 预热与中位数）",
        ),
        "the median of the calls timed alone": Text(
            "the value returned is the median of your own intervals that each hold one work()"
            " (not a figure computed from them, e.g. with a synchronize() cost taken off)",
            "返回值正是你自己那些各含一次 work() 的计时区间的中位数"
            "（而不是由它们再算出来的数，例如减去 synchronize() 本身的耗时）",
        ),
        "the mean": Text(
            "the value returned is the mean of the timed intervals, not their median: one slow"
            " interval moves a mean (re-read §4 Warm-up and the median)",
            "返回的是各次计时的平均值，而不是中位数：一次偏慢的计时就能拉动平均值"
            "（请重读 §4 预热与中位数）",
        ),
    }
    allow = (
        Rule("result", _own_median),
        Rule("probe:the median of the calls timed alone"),
        Rule("probe:the mean", lambda e, f, ctx: not f["value"]),
        # more such intervals than the reference's: extra clock reads (a total time, say)
        Rule("probe:calls timed alone", lambda e, f, ctx: f["value"] >= e["value"]),
        Rule("probe:synchronize() calls"),
        Rule("probe:clock reads while busy"),
        Rule("probe:warm-up calls timed"),
        Rule("probe:work() calls before the first clock read"),
    )
    blame = (
        Rule("result", lambda e, f, ctx: ctx.probe("synchronize() calls") == 0, "CS-2"),
        Rule("result", lambda e, f, ctx: ctx.probe("clock reads while busy"), "CS-1"),
        Rule("result", _no_warm_up, "CS-4"),
        Rule("probe:work() calls", lambda e, f, ctx: f["value"] == ctx.case["repeats"], "CS-4"),
    )

    def cases(self) -> list[dict]:
        axes = {"warmup": [3, 0, 1, 2, 4], "repeats": [5, 1, 13, 7, 3, 21], "busy": [True, False]}
        # Every warm-up count with a busy and an idle device; and, whatever the seed, the
        # edge where the caller's queued work reaches a timing nothing outvotes: no warm-up
        # and one timed call (a median of three or more hides one slow call). Counts stay
        # odd: the median of an even count has two right definitions.
        edge = {"warmup": 0, "repeats": 1, "busy": True}
        # a clock that ticks every 1/1024 s, as coarse host clocks do: the intervals tie
        coarse = {"warmup": 2, "repeats": 7, "busy": False, "coarse": True}
        # a clock from 0 and calls of 2.099 ms: the median * 1000 / 1000 is not the median
        exact = {"warmup": 1, "repeats": 3, "busy": False, "exact": True}
        # one timed call four times as slow as the rest: the median of all five ignores it
        hiccup = {"warmup": 1, "repeats": 5, "busy": False, "hiccup": True}
        # a synchronize() that takes 5 µs itself: a "timer overhead" taken off is no interval
        costly = {"warmup": 2, "repeats": 5, "busy": True, "sync_cost": True}
        return [*draw(self.seed, axes, 10), edge, coarse, exact, hiccup, costly]

    def describe(self, case: dict) -> Text:
        busy = Text(", the device busy on arrival", "，调用时设备上仍有排队的工作")
        text = Text("warmup={w}, repeats={r}{b}", "预热 {w} 次，计时 {r} 次{b}").format(
            w=case["warmup"], r=case["repeats"], b=busy if case["busy"] else ""
        )
        note = next((t for k, t in _CLOCK_NOTES.items() if case.get(k)), None)
        return text if note is None else Text(f"{text.en}, {note.en}", f"{text.zh}，{note.zh}")

    def build(self, case: dict, device) -> World:
        g = trusted.generator().manual_seed(self.seed * 31 + case["warmup"] * 7 + case["repeats"])
        u = trusted.rand(case["warmup"] + case["repeats"] + 9, generator=g, dtype=torch.float64)
        slow = 0.02 + 0.03 * float(u[-1])  # a warm-up call: allocation, autotuning, loading
        durations = [slow] * case["warmup"] + [0.002 * (1 + 0.5 * x) for x in u.tolist()]
        start = 0.0 if case.get("exact") else 1000 + 100 * float(u[-2])
        durations = [0.002099] if case.get("exact") else durations
        if case.get("hiccup"):
            durations[case["warmup"] + 1] *= 4
        sync_s = 5e-6 if case.get("sync_cost") else 0.0
        q = VirtualQueue(durations, start, 0.04 if case["busy"] else 0.0, sync_s)
        clock = (lambda: math.floor(q.clock() * 1024) / 1024) if case.get("coarse") else q.clock
        world = World((q.work, q.synchronize, clock, case["warmup"], case["repeats"]), {}, "cpu")
        world.queue = q
        return world

    @contextlib.contextmanager
    def calling(self, world: World, case: dict, fn):
        """Around each call, the count of work() calls so far kept in the caller's world: a
        probe judges one call, and the calls in one world (``_call_again``) are judged by
        what the caller sees, e.g. a warm-up skipped for a work function seen before."""
        with super().calling(world, case, fn):
            yield
        world.logged["work() calls in this world"] = {
            "kind": "int",
            "value": world.queue.log.count("work"),
        }

    def probe(self, world: World, value, again) -> dict:
        q = world.queue
        alone = q.intervals()
        return {
            "work() calls": q.log.count("work"),
            "synchronize() calls": q.log.count("sync"),
            "clock reads while busy": q.log.count("clock, busy"),
            "warm-up calls timed": q.warmups_timed(world.args[3]),
            "work() calls before the first clock read": q.works_before_first_read(),
            "calls timed alone": len(alone),
            "the median of the calls timed alone": is_median(value, alone),
            "the mean": is_mean(value, alone),
        }

    real = Text("timing against CUDA events", "与 CUDA 事件对比计时")

    def on_gpu(self, fn, device: str) -> dict:
        """The learner's median of real work, and the same work timed by the check's events."""
        a = uniform(11, 2048, 2048, device=device)

        def work() -> None:
            x = a
            for _ in range(4):
                x = (x @ a).tanh()

        def events() -> float:
            return float(median([event_ms(work)[0] / 1000.0 for _ in range(7)]))

        # the check's timing right before and right after the answer's: other work on the
        # GPU (a second kernel, a test run beside it) moves both, and the band between them
        before = events()
        out = call(fn, work, synchronize, perf_counter, 3, 7)
        return {"call": out.record(), "events_s": [before, events()]}

    def judge_gpu(self, gpu: dict) -> CheckResult:
        found = returned(self.heading, gpu["call"], "benchmark")
        low, high = min(gpu["events_s"]), max(gpu["events_s"])
        number = found.kind == "float"
        shown = f"{found.value * 1000:.3f} ms" if number else found.describe()
        what = Text(
            "on the GPU: your median against the check's CUDA events before and after it "
            "(from 0.7 to 3 times: a host clock also counts launching the work, and a busy "
            "machine slows that)",
            "在 GPU 上：你的中位数与检查在其前后用 CUDA 事件测得的值相比（0.7 到 3 倍之间："
            "主机时钟还计入了启动这些工作的时间，机器繁忙时这部分会变慢）",
        )
        ok = number and 0.7 * low - 2e-4 <= found.value <= 3 * high + 1e-3
        slow = "CS-2" if number and found.value < 0.2 * low else None
        band = f"{low * 1000:.3f} ms" if high == low else f"{low * 1000:.3f}–{high * 1000:.3f} ms"
        return CheckResult(what, ok, band, shown, slow)


check_benchmark = checker(Benchmark)


# Exercise 2 (CS-3) -------------------------------------------------------------------------

_LAYOUTS = {
    "plain": Text("contiguous", "连续"),
    "transposed": Text("transposed", "转置（不连续）"),
    "slice": Text("a slice of a larger tensor", "更大张量的切片"),
    "scalar": Text("shape ()", "形状为 ()"),
}


def _made(seed: int, layout: str, dtype: str, rows: int, device="cpu") -> torch.Tensor:
    """A seeded tensor of one layout and dtype (integers in [1, 9) for an integer dtype)."""
    kind = getattr(torch, dtype)
    shape = {"plain": (rows, 3), "transposed": (3, rows), "slice": (rows + 2, 3), "scalar": ()}
    if kind.is_floating_point:
        t = uniform(seed, *shape[layout], device=device, dtype=kind)
    else:
        g = trusted.generator().manual_seed(seed)
        t = trusted.randint(1, 9, shape[layout], generator=g, dtype=kind).to(device)
    return viewed(t, layout)


_ON_DEVICE = {  # the course device the model plays in exercise 2, said after a case
    "cuda": Text(", on a CUDA device", "，都在 CUDA 设备上"),
    "mps": Text(", on an Apple GPU (MPS)", "，都在 Apple GPU（MPS）上"),
    "xpu": Text(", on an Intel GPU (XPU)", "，都在 Intel GPU（XPU）上"),
    "cpu": Text(", on the CPU (no accelerator)", "，都在 CPU 上（没有加速器）"),
}


def _on_cpu_as_it_is(e: dict, f: dict, ctx) -> bool:
    """Tensors already on the CPU: the tensor itself (``to("cpu")`` returns it) or a copy."""
    same = differs_only_in("is", "shares", "requires_grad", "grad_fn")
    return ctx.case["accelerator"] == "cpu" and same(e, f, ctx)


def _stale(e: dict, f: dict, ctx) -> bool:
    """A host copy that holds the stale values of a copy nobody waited for."""
    return is_zero_or_none(f) and f.get("kind") == "tensor" and not is_zero_or_none(e)


@dataclass(frozen=True)
class ToHost(_Modelled):
    """Host copies issued non_blocking, waited for with the synchronize handed over.

    On every machine the tensors live on the model's CUDA device; a copy that was
    not waited for holds stale values when the function returns. On a GPU, the
    tensors also come out of a few milliseconds of real queued work, and the host
    copies are read at once.
    """

    number = 2
    seed: int = 0
    device: str | None = None

    names = {"result": "to_host(tensors, synchronize)"}
    real = Text("reading real copies at once", "立即读取真实拷贝")
    inference_compared = True  # the caller may change its copies in place
    probes = {
        "blocking copies": Text(
            "copies to the host issued blocking: .cpu() or .to('cpu') without non_blocking=True"
            " waits for the device at every copy (§5); the exercise asks for non_blocking copies"
            " and one synchronize after the last (re-read §6 Device-to-host copies with"
            " non_blocking)",
            "以阻塞方式发出的主机拷贝：不带 non_blocking=True 的 .cpu() 或 .to('cpu') 每拷贝一次"
            "都要等设备（§5）；本题要求发出非阻塞拷贝，在最后一次之后同步一次"
            "（请重读 §6 带 non_blocking 的设备到主机拷贝）",
        ),
        "copies not waited for": Text(
            "non_blocking copies not waited for when to_host returned",
            "to_host 返回时还没等到的非阻塞拷贝",
        ),
        "where": Text(
            "where the returned tensors are (CPU copies, §6)",
            "返回的张量所在的设备（应是 CPU 上的副本，§6）",
        ),
        "caller's list": Text("the caller's list after the call", "调用之后调用者的列表"),
    }
    allow = (
        Rule("result[*]", differs_only_in("requires_grad", "grad_fn")),
        Rule("result[*]", _on_cpu_as_it_is),
    )
    blame = (Rule("result[*]", _stale, "CS-3"), Rule("probe:copies not waited for", None, "CS-3"))

    def cases(self) -> list[dict]:
        axes = {
            "count": [3, 1, 2, 4],
            "layout": list(_LAYOUTS),
            "dtype": ["float32", "float64", "bfloat16", "int64"],
            "history": [False, True],
            # the course device may be another accelerator than CUDA, whose copies to the
            # host queue and come back the same way (the model plays it)
            "accelerator": ["cuda", "mps", "cuda", "xpu"],
        }
        drawn = draw(self.seed, axes, 4)
        # two empty ones among them; a course device that is the CPU (tensors already there);
        # the first tensor listed again at the end, then one alike (a copy per entry, in order)
        empty, twice = {**drawn[1], "count": 4, "empty": True}, {**drawn[3], "twice": True}
        return [*drawn, empty, {**drawn[2], "accelerator": "cpu"}, twice]

    def _items(self, case: dict) -> list[tuple[str, str]]:
        layouts, dtypes = list(_LAYOUTS), ["float32", "float64", "bfloat16", "int64"]
        first, kind = layouts.index(case["layout"]), dtypes.index(case["dtype"])
        return [(layouts[(first + k) % 4], dtypes[(kind + k) % 4]) for k in range(case["count"])]

    def describe(self, case: dict) -> Text:
        items = self._items(case)
        text = Text("tensors: {t}", "张量：{t}").format(
            t=Text(
                ", ".join(f"{_LAYOUTS[lay].en} {d}" for lay, d in items),
                "；".join(f"{_LAYOUTS[lay].zh}、{d}" for lay, d in items),
            )
        )
        if case["history"]:
            text = Text("{t}, with history", "{t}，带计算历史").format(t=text)
        if case.get("empty"):
            text = Text(  # two empty ones: both at address 0
                "{t}, the contiguous and the transposed one empty", "{t}，其中连续的和转置的为空"
            ).format(t=text)
        if case.get("twice"):
            text = Text(
                "{t}, then the first again and its double (same shape and dtype)",
                "{t}，末尾又列了一次第一个张量，再加上它的两倍（形状和 dtype 相同）",
            ).format(t=text)
        on = _ON_DEVICE[case["accelerator"]]
        return Text(text.en + on.en, text.zh + on.zh)

    def build(self, case: dict, device) -> World:
        gpu, objects, tensors = ModelCuda(), {}, []
        where = case["accelerator"]
        for k, (layout, dtype) in enumerate(self._items(case)):
            rows = 0 if case.get("empty") and layout in ("plain", "transposed") else k + 2
            t = gpu.place(_made(self.seed + k, layout, dtype, rows), where)
            if case["history"] and t.is_floating_point():
                objects[f"w{k}"] = t.requires_grad_()
                t = gpu.place(t * 2, where)
            objects[f"tensors[{k}]"] = t
            tensors.append(t)
        if case.get("twice"):  # the first tensor again, then one alike in shape and dtype
            tensors += [tensors[0], gpu.place(tensors[0].detach() * 2, where)]
        world = World((tensors, gpu.synchronize), objects, "cpu")
        world.gpu, world.given = gpu, list(tensors)
        return world

    def probe(self, world: World, value, again) -> dict:
        log, given = world.gpu.log, world.args[0]
        return {
            "blocking copies": log.count("to host, blocking"),
            "copies not waited for": len(world.gpu.pending),
            "where": ", ".join(str(w) for w in on_model(world, value)),
            "caller's list": len(given) == len(world.given)
            and all(a is b for a, b in zip(given, world.given, strict=True)),
        }

    def on_gpu(self, fn, device: str) -> dict:
        """to_host on tensors that a few milliseconds of real GPU work produce; read at once."""
        a = uniform(12, 2048, 2048, device=device)
        x = a
        for _ in range(6):
            x = (x @ a).tanh()
        zero = x.mean().clamp(0, 0)
        tensors = [_made(self.seed + k, "plain", "float32", k + 2, device) + zero for k in range(3)]
        return {"call": call(fn, tensors, synchronize).record()}

    def judge_gpu(self, gpu: dict) -> CheckResult:
        found = returned(self.heading, gpu["call"], "to_host")
        want = [_made(self.seed + k, "plain", "float32", k + 2) for k in range(3)]
        values = [item.value for item in found.items] if found.kind == "list" else []
        ok = len(values) == 3 and all(map(close, values, want, [(1e-4, 1e-5)] * 3))
        what = Text(
            "on the GPU: host copies of real queued work, read at once",
            "在 GPU 上：对真实排队工作的主机拷贝，立即读取",
        )
        right = Text("the tensors' values", "张量的数值")
        wrong = Text("other values (a copy not waited for)", "其他数值（没有等待的拷贝）")
        return CheckResult(what, ok, right, wrong, None if ok else "CS-3")


check_to_host = checker(ToHost)


# Exercise 3 (CS-5) -------------------------------------------------------------------------


def _device_type(value) -> str | None:
    return value.type if trusted.type_(value) is torch.device else None


NOT_SIMULATED = Text(
    "skipped: pick_device() on this machine as it is — no simulated machine has its"
    " accelerator ({a})",
    "已跳过：在这台机器本身上调用 pick_device()——没有哪台模拟的机器带有它的加速器（{a}）",
)


@dataclass(frozen=True)
class PickDevice(Spec):
    """The device picker must name an accelerator only when it is usable.

    Each machine is simulated by answering torch's probing functions as it would,
    for one call; a last call runs on this machine as it is, against the reference's
    answer on the simulated machine of its kind (which the trusted probes, taken at
    import, tell).
    """

    number = 3
    seed: int = 0
    device: str | None = None

    names = {"result": "pick_device()"}
    probes = {
        "type": Text(
            "the kind of device returned (re-read §8 Choosing a device: torch.accelerator)",
            "返回的设备类型（请重读 §8 选择设备：torch.accelerator）",
        )
    }
    blame = (
        Rule(
            "probe:type",
            lambda e, f, ctx: (
                f["value"] is not None and MACHINES[ctx.case["machine"]][1:] == (f["value"], 0)
            ),
            "CS-5",
        ),
    )

    def cases(self) -> list[dict]:
        g = trusted.generator().manual_seed(self.seed)
        order = trusted.rand(len(MACHINES), generator=g).argsort().tolist()
        return [{"machine": list(MACHINES)[i]} for i in order]

    def describe(self, case: dict) -> Text:
        return Text("on {m}", "机器：{m}").format(m=MACHINES[case["machine"]][0])

    def build(self, case: dict, device) -> World:
        return World((), {}, "cpu")

    def calling(self, world: World, case: dict, fn):
        _, built, count = MACHINES[case["machine"]]
        return machine(built, count, fn, world)

    def probe(self, world: World, value, again) -> dict:
        return {"type": _device_type(value)}

    def observe(self, fn) -> dict:
        obs = super().observe(fn)
        kind = this_machine()
        default = default_device()
        here = call(fn).record()
        set_default_device(default)
        obs["here"] = {"call": here, "machine": kind}
        return obs

    def judge(self, obs: dict) -> None:
        """The drawn machines, then this one, judged against the reference's answer on the
        simulated machine of its kind (the learner's side knows no answer of its own)."""
        super().judge(obs)
        found = returned(self.heading, obs["here"]["call"], "pick_device")
        same = twin(obs["here"]["machine"], self.cases())
        if same is None:
            note(NOT_SIMULATED.format(a=obs["here"]["machine"][0]))
            return
        want = self.expected(same)["probe"]["type"]
        kind = str(found.value).split(":")[0] if found.kind == "device" else None
        what = Text("pick_device() on this machine, as it is", "在这台机器本身上调用 pick_device()")
        expected = f"torch.device('{want}')"
        require(self.heading, [CheckResult(what, kind == want, expected, found.describe())])


check_pick_device = checker(PickDevice)


# Exercise 4 (CS-6) -------------------------------------------------------------------------


def _no_later(e: dict, f: dict, ctx) -> bool:
    """A model time no later than the reference's (the answer is at least as fast)."""
    found, expected = f.get("value"), e.get("value")
    return trusted.type_(found) is float and found <= expected + 1e-6


def _later(e: dict, f: dict, ctx) -> bool:
    return not _no_later(e, f, ctx)


def _later_for_pinning(e: dict, f: dict, ctx) -> bool:
    """Later than the reference, and the answer pinned memory itself (a host copy): the
    belief that pinning makes a copy faster (CS-6). A blocking copy of a batch that arrived
    pinned is later too, but it is the opposite belief: its own probe says what went wrong."""
    return _later(e, f, ctx) and bool(ctx.probe("pinned in the call"))


def _no_overlap(e: dict, f: dict, ctx) -> bool:
    """The device took longer while the host was not held up: the copy and the computation
    ran one after the other on the device (CS-7), not behind a blocking copy."""
    waited = [
        {"value": side.get("probe", {}).get("host waited")} for side in (ctx.expected, ctx.found)
    ]
    return _later(e, f, ctx) and _no_later(*waited, ctx)


def _overlapped_after_arrival(e: dict, f: dict, case: dict) -> bool:
    """Done no later than a copy that first waits for the work queued before the call
    (``side.wait_stream(main)``, as §10's cell does) and then overlaps the computation:
    later than the reference where the current stream was busy, yet the overlap the
    exercise asks for. The reference's launch overheads are allowed on top."""
    if trusted.type_(e.get("value")) is not float or trusted.type_(f.get("value")) is not float:
        return False
    busy, copy, compute = case["busy"], case["copy"], case["compute"]
    overheads = e["value"] - (max(copy, busy + compute) + _USE_US)
    return f["value"] <= busy + max(copy, compute) + _USE_US + overheads + 1e-6


def _same_on(out, batch, device: torch.device) -> bool:
    """``out`` holds the batch's values on ``device``, dtypes unchanged."""
    if trusted.type_(out) not in (list, tuple) or len(out) != len(batch):
        return False
    for got, want in zip(out, batch, strict=True):
        if not is_tensor(got) or got.device != device or got.dtype != want.dtype:
            return False
        if not torch.equal(got.detach().to("cpu"), want):
            return False
    return True


def _tuple_or_list(e: dict, f: dict, ctx) -> bool:
    """A list where the reference returns a tuple, or the other way round: the prompt lets
    the learner return either, whatever sequence the batch came in."""
    return f.get("kind") in ("list", "tuple") and differs_only_in("kind")(e, f, ctx)


def _holds(batch, given: tuple) -> bool:
    """The caller's batch holds the tensors it was given, in order, and nothing else (whether
    each still holds its memory is caller state, ``oracle.state``)."""
    return len(batch) == len(given) and all(a is b for a, b in zip(batch, given, strict=True))


@dataclass(frozen=True)
class LoadBatch(_Modelled):
    """Bring a batch to the device no later than a plain ``.to(device, non_blocking=True)``.

    Judged by behaviour, not by a recipe: on every machine the model places each copy
    on its timeline (a pin is a host copy; a pageable copy makes the host wait for the
    staged copy; a pinned non_blocking copy only queues a DMA), and the answer's host
    time and the time its data is on the device must be no later than the reference's.
    The batch arrives pageable or already pinned (as from ``DataLoader(pin_memory=True)``),
    as a tuple or as the list DataLoader's default collate yields (which must be left as
    it was; the tensors may come back in a list then). Where a GPU exists, the answer is
    timed on a 72 MB batch, pageable and pinned, against a blocking ``.to(device)`` of
    the same batch timed beside it: a yardstick, not the answer.
    """

    number = 4
    seed: int = 0
    rows: int = 6
    device: str | None = None

    names = {"result": "load_batch(batch, device)", "result[0]": "inputs", "result[1]": "targets"}
    real = Text("timing the copies on a real GPU", "在真实 GPU 上给拷贝计时")
    probes = {
        "where": Text(
            "the devices the returned tensors are on (the device asked for, §7)",
            "返回的张量所在的设备（应是要求的设备，§7）",
        ),
        "host busy": Text(
            "model µs the host was held up by copies and pinning (MODEL, not a measurement)",
            "主机被拷贝和锁页拖住的模型微秒数（模型，不是实测）",
        ),
        "on the device": Text(
            "model µs until the batch was on the device (MODEL, not a measurement)",
            "批次到达设备所用的模型微秒数（模型，不是实测）",
        ),
        "caller's batch": Text(
            "the caller's batch still holds its own tensors after the call",
            "调用之后，调用者的批次里仍是原来的张量",
        ),
        "pinned in the call": Text(
            "tensors pinned inside load_batch (each pin_memory() of pageable memory is a host"
            " copy, §7)",
            "在 load_batch 内部锁页的张量个数"
            "（对可分页内存调用 pin_memory() 就是一次主机拷贝，§7）",
        ),
        "blocking copies of pinned memory": Text(
            "copies of an already pinned batch issued without non_blocking=True: the host waits"
            " for each until it is done, while with non_blocking=True it only queues them"
            " (re-read §7 Host-to-device copies and pinned memory)",
            "对已经锁页的批次发出的、没有 non_blocking=True 的拷贝：主机要等每一次拷贝做完；"
            "加上 non_blocking=True，主机只是把它们放进队列"
            "（请重读 §7 主机到设备的拷贝与锁页内存）",
        ),
    }
    allow = (
        Rule("result", _tuple_or_list),
        Rule("result[*]", differs_only_in("is", "shares")),
        Rule("probe:host busy", _no_later),
        Rule("probe:on the device", _no_later),
    )
    blame = (
        Rule("probe:host busy", _later_for_pinning, "CS-6"),
        Rule("probe:on the device", _later_for_pinning, "CS-6"),
    )

    def cases(self) -> list[dict]:
        axes = {
            # the course device may be another accelerator, whose copies the model plays alike
            "target": ["cuda", "cpu", "cuda:1", "mps", "xpu"],
            "memory": ["pageable", "pinned"],
            "rows": [self.rows, 1, self.rows + 3],
            "dtype": ["float32", "float64", "bfloat16"],
            "layout": ["plain", "transposed"],
            "container": ["tuple", "list"],
        }
        drawn = draw(self.seed, axes, 6)
        # every seed: a pinned batch whose inputs are a transposed view (not contiguous) of
        # several rows, copied to a GPU: a contiguous() first is a pageable host copy there
        hard = {"memory": "pinned", "layout": "transposed", "target": "cuda"}
        if not any(c.items() >= hard.items() and c["rows"] > 1 for c in drawn):
            drawn.append({**drawn[0], **hard, "rows": self.rows + 3})
        return [*drawn, {**drawn[1], "regression": True}]  # targets in the inputs' dtype

    def describe(self, case: dict) -> Text:
        memory = {"pageable": Text("pageable", "可分页"), "pinned": Text("pinned", "锁页")}
        container = {
            "tuple": Text("tuple", "元组"),
            "list": Text("list (as DataLoader yields)", "列表（DataLoader 给出的形式）"),
        }
        shown = Text(
            "device {t}, a {m} batch as a {c}, {n} rows of {d}, inputs {l}",
            "设备 {t}，{m}内存中的批次，以{c}传入，{n} 行 {d}，输入张量（inputs）：{l}",
        ).format(
            t=case["target"],
            m=memory[case["memory"]],
            c=container[case["container"]],
            n=case["rows"],
            d=case["dtype"],
            l=_LAYOUTS[case["layout"]],
        )
        if not case.get("regression"):
            return shown
        return Text(
            "{s}, targets (n, 1) of {d} (regression)", "{s}，目标值形状 (n, 1)，为 {d}（回归）"
        ).format(s=shown, d=case["dtype"])

    def build(self, case: dict, device) -> World:
        inputs = _made(self.seed, case["layout"], case["dtype"], case["rows"])
        g = trusted.generator().manual_seed(self.seed + 1)
        targets = trusted.randint(0, 3, (case["rows"],), generator=g)
        if case.get("regression"):
            targets = trusted.randn(case["rows"], 1, generator=g).to(getattr(torch, case["dtype"]))
        objects = {"inputs": inputs, "targets": targets}
        batch = (inputs, targets) if case["container"] == "tuple" else [inputs, targets]
        world = World((batch, torch.device(case["target"])), objects, "cpu")
        world.gpu, world.given = ModelCuda(), (inputs, targets)
        if case["memory"] == "pinned":
            for t in (inputs, targets):
                world.gpu.pinned[id(t)] = weakref.ref(t)
        return world

    def probe(self, world: World, value, again) -> dict:
        gpu = world.gpu
        return {
            "where": ", ".join(str(w) for w in on_model(world, value)),
            "host busy": round(float(gpu.host_us), 6),
            "on the device": round(float(gpu.ready_us), 6),
            "caller's batch": _holds(world.args[0], world.given),
            "pinned in the call": gpu.pins,
            "blocking copies of pinned memory": gpu.log.count("to device, pinned, blocking"),
        }

    def on_gpu(self, fn, device: str) -> dict:
        """The answer and a blocking copy timed on a real GPU, from pageable and pinned memory."""
        target = cuda_device(device)
        g = trusted.generator().manual_seed(self.seed)
        pageable = (trusted.rand(1 << 20, 16, generator=g), trusted.randint(0, 3, (1 << 20,)))
        found = {"device": str(target)}
        for memory in ("pageable", "pinned"):
            batch = pageable if memory == "pageable" else tuple(t.pin_memory() for t in pageable)
            first = call(fn, batch, target)
            synchronize()
            if first.error is not None:
                return {**found, "call": first.record()}
            right = _same_on(first.value, batch, target)
            del first
            mine, blocking = seconds_in_turns(
                [
                    lambda b=batch: call(fn, b, target),
                    lambda b=batch: tuple(t.to(target) for t in b),
                ]
            )
            found[memory] = {"right": right, "mine": mine, "blocking": blocking}
        return found

    def judge_gpu(self, gpu: dict) -> CheckResult:
        what = Text(
            "on the GPU ({d}): a 72 MB batch, your load_batch against a blocking "
            ".to(device) (host time, time until on the device; +25 %)",
            "在 GPU（{d}）上：72 MB 的批次，你的 load_batch 与阻塞的 "
            ".to(device) 相比（主机时间、到达设备的时间；+25 %）",
        ).format(d=gpu["device"])
        if "call" in gpu:
            returned(self.heading, gpu["call"], "load_batch")
        ok, slow, shown, wanted = True, False, [], []
        for memory in ("pageable", "pinned"):
            seen = gpu[memory]
            fast = all(
                m <= 1.25 * r + 5e-4 for m, r in zip(seen["mine"], seen["blocking"], strict=True)
            )
            ok, slow = ok and seen["right"] and fast, slow or not fast
            shown.append(f"{memory}: " + " / ".join(f"{s * 1000:.2f} ms" for s in seen["mine"]))
            wanted.append(
                f"{memory}: " + " / ".join(f"{s * 1000:.2f} ms" for s in seen["blocking"])
            )
        return CheckResult(what, ok, "; ".join(wanted), "; ".join(shown), "CS-6" if slow else None)


check_load_batch = checker(LoadBatch)


# Exercise 5 (CS-1) -------------------------------------------------------------------------


@dataclass(frozen=True)
class EpochMeanLoss(_Modelled):
    """The mean loss of an epoch, read to the host once, not once per step.

    The losses live on the model's CUDA device; the model logs every host read
    (``.item()``, ``float()``, ``print``, ``.tolist()``, ``.cpu()``, ``torch.tensor([...])``).
    """

    number = 5
    seed: int = 0
    batches: int = 5
    device: str | None = None

    names = {"result": "epoch_mean_loss(step, batches)"}
    probes = {
        "host reads": Text(
            "values read to the host (.item(), float(), print, .cpu()...)",
            "读回主机的次数（.item()、float()、print、.cpu() 等）",
        ),
        "steps": Text(
            "the batches step() was called with, in order (once each, as the prompt says)",
            "依次传给 step() 的批次（按题目要求，每个批次一次）",
        ),
        "batches": Text("len(batches) after the call", "调用之后的 len(batches)"),
        "grad mode off": Text(
            "calls of step() made with grad mode off (a training step needs it on: no "
            "torch.no_grad() around step)",
            "在梯度模式关闭时调用 step() 的次数（训练步骤需要梯度模式开启："
            "不要在 step 外面套 torch.no_grad()）",
        ),
        "losses changed": Text(
            "losses step() returned that your function changed in place or detached in place "
            "(by index)",
            "step() 返回的损失中被你的函数原地修改或原地分离（detach_）的那些（按下标）",
        ),
        "float64 mean": Text(
            "for float64 losses, the mean as exact as float64 holds it (no float32 on the way)",
            "损失为 float64 时，均值达到 float64 的精度（中途没有经过 float32）",
        ),
    }
    blame = (Rule("probe:host reads", lambda e, f, ctx: (f["value"] or 0) > e["value"], "CS-1"),)

    def cases(self) -> list[dict]:
        axes = {
            "count": [self.batches, 1, self.batches + 3],
            "dtype": ["float32", "float64"],
            "history": [True, False],
        }
        drawn = draw(self.seed, axes, 3)
        return [*drawn, {**drawn[0], "count": self.batches, "nan": True}]  # a diverged step

    def describe(self, case: dict) -> Text:
        text = Text("{n} batches, losses {d}", "{n} 个批次，损失为 {d}").format(
            n=case["count"], d=case["dtype"]
        )
        if case.get("nan"):
            text = Text(
                "{t}, a nan in the first batch (its loss is nan, so is the mean)",
                "{t}，第一个批次里有 nan（它的损失是 nan，均值也是）",
            ).format(t=text)
        if case["count"] > 1:
            text = Text("{t}, the last batch shorter", "{t}，最后一个批次较短").format(t=text)
        if case["history"]:
            text = Text("{t}, with history", "{t}，带计算历史").format(t=text)
        return text

    def build(self, case: dict, device) -> World:
        gpu, dtype = ModelCuda(), getattr(torch, case["dtype"])
        # a short last batch, as a DataLoader gives: the mean is over the losses step returned
        rows = [4] * (case["count"] - 1) + [2 if case["count"] > 1 else 4]
        drawn = [
            uniform(self.seed + 10 * case["count"] + j, n, 3, device="cpu", dtype=dtype)
            for j, n in enumerate(rows)
        ]
        if case.get("nan"):  # a diverged step
            drawn[0][0, 0] = float("nan")
        batches = [gpu.place(b) for b in drawn]
        w = gpu.place(uniform(self.seed, 3, device="cpu", dtype=dtype))
        w.requires_grad_(case["history"])
        steps: list[int] = []
        graded: list[bool] = []  # a training step needs grad mode: was it on at each call?
        # what step() returned, as the caller's step keeps it, and whether it had history
        losses: list[tuple[torch.Tensor, bool]] = []
        # In the caller's world: a caller's step trains, so every call of epoch_mean_loss must
        # run it on every batch, also a second call with the very same step and list (a mean
        # remembered per argument object, which this step's unchanged losses would hide).
        world_calls = {"kind": "int", "value": 0}

        def step(batch):
            world_calls["value"] += 1
            steps.append(next((k for k, b in enumerate(batches) if b is batch), -1))
            graded.append(trusted.is_grad_enabled())
            loss = ((batch - w) ** 2).mean()
            losses.append((loss, loss.requires_grad))
            return loss

        objects = {"w": w, **{f"batches[{k}]": b for k, b in enumerate(batches)}}
        world = World((step, list(batches)), objects, "cpu")
        world.gpu, world.steps, world.given = gpu, steps, world.args[1]
        world.logged["step() calls"] = world_calls
        world.graded, world.losses = graded, losses
        world.float64 = case["dtype"] == "float64"
        return world

    def probe(self, world: World, value, again) -> dict:
        waits = [e for e in world.gpu.log if e.startswith("read") or e == "to host, blocking"]
        # changed in place, or detached in place (detach_ leaves the version as it was)
        changed = [
            k
            for k, (t, history) in enumerate(world.losses)
            if t._version or t.requires_grad != history
        ]
        return {
            "host reads": len(waits),
            "steps": ", ".join(map(str, world.steps[:40])),
            "batches": len(world.given),
            "grad mode off": sum(1 for g in world.graded if not g),
            "losses changed": ", ".join(map(str, changed[:40])),
            "float64 mean": _as_exact(value, world.losses) if world.float64 else None,
        }


def _as_exact(value, losses: list) -> bool:
    """The mean within float64's rounding of the exact mean of the losses step returned (a
    sum kept in float32 is off by about float32's rounding, within a float's tolerance)."""
    if trusted.type_(value) is not float or not losses:
        return False
    exact = math.fsum(cpu_copy(loss).item() for loss, _ in losses) / len(losses)
    return abs(value - exact) <= 1e-12 * abs(exact)


check_epoch_mean_loss = checker(EpochMeanLoss)


# Exercise 6 (CS-7, CS-3) -------------------------------------------------------------------

_USE_US = 5.0  # the check's own kernel that reads the copied batch after the call


@dataclass(frozen=True)
class OverlapCopy(_Modelled):
    """A pinned batch copied on a side stream while the computation runs on the current one.

    On every machine: a virtual device with streams (``VDevice``) stands in for
    ``torch.cuda``; the check then reads the copied batch on the current stream with
    a kernel of its own, and compares with the reference: the device time until both
    are done (overlap), whether that kernel could start before the copy ended (a race),
    whether memory made on the side stream is recorded for the current one, and how
    long the host was held up. Where a GPU exists: real streams, timed by the check's
    CUDA events against the computation and the copy alone.
    """

    number = 6
    seed: int = 0
    device: str | None = None

    names = {"result": "overlap_copy(...)", "result[0]": "result", "result[1]": "moved"}
    real = Text("timing real streams with CUDA events", "用 CUDA 事件给真实的流计时")
    probes = {
        "where": Text(
            "the devices the returned tensors are on (both on the device, §10)",
            "返回的张量所在的设备（两者都应在设备上，§10）",
        ),
        "device time": Text(
            "model µs until the computation, the copy and a read of the batch were done "
            "(MODEL, not a measurement)",
            "计算、拷贝以及随后对批次的一次读取全部完成所用的模型微秒数（模型，不是实测）",
        ),
        "race": Text(
            "a kernel queued on the current stream after the call could read the batch before"
            " the copy ended: the current stream must wait for the side stream (wait_stream or"
            " an event; re-read §10 Streams: a copy beside the computation)",
            "调用之后在当前流上排队的核函数可能在拷贝结束之前就读取批次：当前流必须等待辅助流"
            "（wait_stream 或事件；请重读 §10 CUDA 流：让拷贝与计算并行）",
        ),
        "memory unprotected": Text(
            "memory made on the side stream and used on the current one without record_stream"
            " (the batch returned, or a tensor your function read on the current stream): once"
            " freed, the caching allocator may hand it out again while the current stream still"
            " reads it (re-read §10 Streams: a copy beside the computation)",
            "在辅助流上分配、在当前流上使用（返回的批次，或者你的函数在当前流上读取过的张量），"
            "却没有调用 record_stream 的内存：它一旦被释放，缓存分配器就可能在当前流还在读取时"
            "把它分配给别人（请重读 §10 CUDA 流：让拷贝与计算并行）",
        ),
        "memory still in use": Text(
            "memory allocated on the current stream while work was still queued there, then"
            " written by the side stream before that work was done: the block may be one that"
            " queued work still reads; allocate it inside the side stream's block, or make the"
            " side stream wait for the current one first (re-read §10 Streams: a copy beside"
            " the computation)",
            "在当前流上还有排队工作时从当前流分配的内存，在那些工作完成之前就被辅助流写入："
            "这块内存可能正被排队的工作读取；请在辅助流的 with 块里分配它，或者先让辅助流等待当前流"
            "（请重读 §10 CUDA 流：让拷贝与计算并行）",
        ),
        "on side": Text(
            "the copy ran on the stream `side` the caller handed over, not on one of its own (§10)",
            "拷贝在调用者传入的 `side` 流上进行，而不是另建一个流（§10）",
        ),
        "host waited": Text(
            "model µs the host was held up (MODEL, not a measurement); the host need not wait:"
            " a non_blocking copy of the pinned batch only queues, and the streams are ordered"
            " on the device (§10)",
            "主机被拖住的模型微秒数（模型，不是实测）；主机无须等待：锁页批次的非阻塞拷贝只是进入队列，"
            "流之间的顺序在设备上排好（§10）",
        ),
    }
    allow = (
        Rule("result[*]", differs_only_in("is", "shares")),
        Rule("probe:device time", _no_later),
        Rule("probe:device time", lambda e, f, ctx: _overlapped_after_arrival(e, f, ctx.case)),
        Rule("probe:host waited", _no_later),
    )
    blame = (Rule("probe:race", None, "CS-3"), Rule("probe:device time", _no_overlap, "CS-7"))

    def cases(self) -> list[dict]:
        axes = {
            "compute": [60.0, 30.0, 45.0],
            "copy": [40.0, 80.0],
            "busy": [0.0, 50.0],
            "dtype": ["float32", "float64", "bfloat16"],
        }
        drawn = draw(self.seed, axes, 6)
        # a caller inside `with cuda.stream(its_own)`: the current stream is not the default
        return [*drawn, {**drawn[1], "busy": 50.0, "own_stream": True}]

    def describe(self, case: dict) -> Text:
        busy = Text(", the current stream busy on arrival", "，调用时当前流上仍有排队的工作")
        text = Text(
            "computation {c} µs, copy {k} µs of {d}{b} (model)",
            "计算 {c} µs，拷贝 {k} µs 的 {d}{b}（模型）",
        ).format(
            c=int(case["compute"]),
            k=int(case["copy"]),
            d=case["dtype"],
            b=busy if case["busy"] else "",
        )
        if case.get("own_stream"):
            text = Text(
                f"{text.en}, called inside the caller's `with cuda.stream(s)`: the current"
                " stream is not the default one",
                f"{text.zh}，在调用者的 `with cuda.stream(s)` 里调用：当前流不是默认流",
            )
        return text

    def calling(self, world: World, case: dict, fn):
        stack = contextlib.ExitStack()
        stack.enter_context(super().calling(world, case, fn))
        stack.enter_context(world.cuda.stream(world.use))
        return stack

    def build(self, case: dict, device) -> World:
        own = case.get("own_stream", False)
        cuda, gpu = VDevice(0.0 if own else case["busy"]), ModelCuda()
        use = cuda.default  # the caller's current stream, where it uses the results
        if own:
            use = VStream(cuda, "caller's")
            use.free_at = case["busy"]
        gpu.streams, gpu.copy_us = cuda, case["copy"]
        batch = _made(self.seed, "plain", case["dtype"], 5)
        gpu.pinned[id(batch)] = weakref.ref(batch)
        weights = _made(self.seed + 1, "plain", "float32", 3)

        def compute():
            cuda.log.append(f"compute on {cuda.current.name}")
            out = gpu.place(weights * 2)
            cuda.landed(out, cuda.launch(case["compute"]))
            return out

        side = cuda.Stream()
        world = World((compute, batch, side, cuda, torch.device("cuda")), {"batch": batch}, "cpu")
        world.gpu, world.cuda, world.use = gpu, cuda, use
        return world

    def probe(self, world: World, value, again) -> dict:
        cuda, use = world.cuda, world.use
        items = list(value) if trusted.type_(value) in (list, tuple) else [value]
        moved = items[1] if len(items) > 1 and is_tensor(items[1]) else None
        made = cuda.made_of(moved) if moved is not None else None
        host = float(cuda.host_us)
        use_start = max(use.free_at, cuda.host_us)
        done = max([use_start + _USE_US, *cuda._ends(), use.free_at, cuda.default.free_at])
        race = made is not None and use_start < made[0] - 1e-9
        recorded = cuda.recorded.get(id(moved), []) if moved is not None else []
        unprotected = made is not None and made[1] is not use and use.name not in recorded
        unprotected = unprotected or cuda.unrecorded_borrows() > 0
        return {
            "where": ", ".join(str(w) for w in on_model(world, value)),
            "device time": round(float(done), 6),
            "race": bool(race),
            "memory unprotected": bool(unprotected),
            "memory still in use": cuda.early_writes > 0,
            "on side": made is None or made[1] is world.args[2],
            "host waited": round(host, 6),
        }

    def on_gpu(self, fn, device: str) -> dict:
        """Real streams: the check times the computation alone, the copy alone, and the call."""
        target = cuda_device(device)
        a = uniform(13, 2048, 2048, device=target)
        batch = trusted.rand(32, 1024, 1024).pin_memory()  # 128 MB

        def compute():
            x = a
            for _ in range(8):
                x = (x @ a).tanh()
            return x

        def copy():
            return batch.to(target, non_blocking=True)

        event_ms(compute)
        event_ms(copy)
        side = torch.cuda.Stream(target)
        first = call(fn, compute, batch, side, torch.cuda, target)  # a warm-up, checked too
        synchronize()
        if first.error is not None:
            return {"call": first.record()}
        value = first.value
        moved = value[1:2] if trusted.type_(value) in (list, tuple) else None

        def both():
            out = call(fn, compute, batch, side, torch.cuda, target)
            if out.ok and trusted.type_(out.value) in (list, tuple) and len(out.value) > 1:
                call(lambda: out.value[1].sum())  # the check's own read, on the current stream
            return out

        # three rounds, each timing all three in turn, and the median of each: other work on
        # the GPU (a second kernel, a test run beside it) then weighs on all three alike
        rounds = [[event_ms(run)[0] for run in (compute, copy, both)] for _ in range(3)]
        compute_ms, copy_ms, both_ms = (float(median(list(t))) for t in zip(*rounds, strict=True))
        right = _same_on(moved, (batch,), target)
        return {"right": right, "alone_ms": [compute_ms, copy_ms], "both_ms": both_ms}

    def judge_gpu(self, gpu: dict) -> CheckResult:
        if "call" in gpu:
            returned(self.heading, gpu["call"], "overlap_copy")
        compute, copy = gpu["alone_ms"]
        limit = max(compute, copy) + 0.5 * min(compute, copy)
        ok = gpu["right"] and gpu["both_ms"] <= limit
        what = Text(
            "on the GPU: computation and copy together, against each alone (CUDA events)",
            "在 GPU 上：计算与拷贝一起运行，与各自单独运行相比（CUDA 事件）",
        )
        want = Text(
            "≤ {limit:.2f} ms (compute {compute:.2f} ms, copy {copy:.2f} ms)",
            "≤ {limit:.2f} ms（计算 {compute:.2f} ms，拷贝 {copy:.2f} ms）",
        ).format(limit=limit, compute=compute, copy=copy)
        slow = gpu["both_ms"] > limit
        return CheckResult(what, ok, want, f"{gpu['both_ms']:.2f} ms", "CS-7" if slow else None)


check_overlap_copy = checker(OverlapCopy)


EXERCISES = numbered(
    globals(),
    ("benchmark", "time device work honestly", "老老实实地给设备上的工作计时", "CS-1 CS-2 CS-4"),
    ("to_host", "device-to-host copies, made safe", "安全的设备到主机拷贝", "CS-3"),
    ("pick_device", "a device picker that checks", "会检查的设备选择器", "CS-5"),
    ("load_batch", "a batch loader step", "批次加载的一步", "CS-6"),
    ("epoch_mean_loss", "one host read per epoch", "每轮只读回主机一次", "CS-1"),
    ("overlap_copy", "a copy beside the computation", "让拷贝与计算并行", "CS-7 CS-3"),
)

self_check = self_checker(EXERCISES)
