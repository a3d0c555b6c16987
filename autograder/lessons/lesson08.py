"""Checks for lesson 08, the capstone: one check per part of the training script.

Each part of the script carries one bug planted from lessons 01-07 (REVISITS). Each check
is a :class:`~autograder.common.oracle.Spec`: its seed draws caller states
(models of other depths arriving in training, evaluation or mixed mode, with a frozen layer,
stale, zero or no ``.grad``; batches of unequal sizes; float32 or float64; optimizers and
learning rates), the learner's part and the official repair run in identical worlds, and
everything the caller can see afterwards is compared: the return value, every parameter,
buffer, ``.grad`` and mode, hooks left behind, the batches, and what instruments logged
(each optimizer step's gradients, graphs kept alive, BatchNorm and Dropout calls). The
models, modes and layer watch are lesson 03's (``autograder.common.model_cases`` and
``layer_watch``), the GAN step lesson 04's.

The timer (exercise 6) runs on a deterministic model of a device queue, with drawn
repeat counts and earlier work queued or not on arrival.

This module runs beside learner code (the learner's kernel, the grading sandbox's
observer): it builds the worlds, calls the learner's part, records and compares; it holds
no answer. The official repairs are in ``autograder.references.lesson08``, with the judge
only; where a comparison needs the right gradient, it reads the reference's state.
"""

from __future__ import annotations

import contextlib
import weakref
from dataclasses import dataclass

import torch

from autograder.common import trusted
from autograder.common.caller_states import (
    GROUPS,
    HOOK_CALLS_NAMED,
    grouped,
    held_by_optimizer,
    hook_of_callers,
    one_short,
    raising,
    refusing,
    with_every_parameter_held,
    with_groups,
    with_hooked,
    with_raising,
)
from autograder.common.exercise import numbered
from autograder.common.i18n import Text
from autograder.common.inputs import uniform
from autograder.common.layer_watch import LayerWatchSpec, layers_trained
from autograder.common.model_cases import model_text, model_world
from autograder.common.models import make_net
from autograder.common.optimizer_steps import grads_at_step, zeroed_frozen
from autograder.common.oracle import (
    SECOND_RESULT,
    Rule,
    Spec,
    World,
    close,
    draw,
    is_zero_or_none,
    more_hooks,
)
from autograder.common.protocol import call, checker
from autograder.common.recorded import TENSORS
from autograder.common.virtual_queue import VirtualQueue
from autograder.kernel.selfcheck import self_checker
from autograder.lessons import lesson03, lesson04

# Which lesson each exercise's planted bug comes from (the misconceptions are theirs).
REVISITS = {
    1: "01_requires_grad",
    2: "02_no_grad",
    3: "03_eval_vs_no_grad",
    4: "04_detach",
    5: "05_hooks",
    6: "06_cuda_async",
    7: "07_custom_function",
}

_MODEL_AXES = {
    "net": ["two nested blocks", "one block", "two blocks"],
    "mode": ["train", "eval", "mixed"],
    "frozen": ["none", "first"],
    "stale": ["stale", "zero", "none"],
    "dtype": ["float32", "float64"],
}
_N_IN, _N_OUT = 5, 3


def _batches(
    seed: int, sizes: list[int], world_objects: dict, device, dtype, net, scale: float = 1.0
) -> list:
    """(inputs, labels) pairs of the given sizes; each tensor is a caller object too."""
    g = trusted.generator().manual_seed(seed)
    pairs = []
    for j, n in enumerate(sizes):
        x = 2.0 * uniform(seed + 10 + j, n, net.n_in, device=device, dtype=dtype) + 1.0
        x = x * scale if scale != 1.0 else x
        y = trusted.randint(0, net.n_out, (n,), generator=g).to(device)
        pairs.append((x, y))
        world_objects[f"batches[{j}][0]"], world_objects[f"batches[{j}][1]"] = x, y
    return pairs


def _model_and_batches(spec, case: dict, device) -> tuple:
    model, _, net = model_world(spec, {**case, "rows": 2}, device, _N_IN, _N_OUT)
    objects = {"model": model}
    dtype, scale = getattr(torch, case["dtype"]), case.get("x_scale", 1.0)
    batches = _batches(spec.seed, case["sizes"], objects, device, dtype, net, scale)
    if case.get("inf_batch"):  # the caller's batches do not require grad
        batches[-1][0][0, 0] = float("inf")
    return model, batches, objects


def _sizes(count: int, size: int, even: bool) -> list[int]:
    return [size] * count if even else [size + 2 * (j % 3) - 1 for j in range(count)]


def _describe(case: dict) -> Text:
    text = Text("{m}, batch sizes [{s}]", "{m}，批次大小 [{s}]").format(
        m=model_text(case), s=", ".join(str(n) for n in case["sizes"])
    )
    if "lr" in case:
        text = Text("{t}, optimizer {o}(lr={lr:g}{x})", "{t}，优化器 {o}(lr={lr:g}{x})").format(
            t=text, o=case["optimizer"], lr=case["lr"], x=_OPTIONS.get(case["optimizer"], "")
        )
    if case.get("x_scale"):
        text = Text(
            "{t}, inputs ×{k:g} (large gradients)", "{t}，输入放大 {k:g} 倍（梯度很大）"
        ).format(t=text, k=case["x_scale"])
    if case.get("inf_batch"):
        text = Text(
            "{t}, an inf in the last batch's inputs (its loss is not finite)",
            "{t}，最后一个批次的输入里有 inf（它的损失不是有限值）",
        ).format(t=text)
    return text


def _added_to_earlier(e: dict, f: dict, ctx) -> bool:
    """The gradient a step used is its own plus what .grad held before (stale or last step's)."""
    param, _, when = ctx.base.partition(" when ")
    label, _, n = when.removesuffix(" ran").rpartition(" #")
    earlier = (
        ctx.before.get(param, {})
        if n == "1"
        else ctx.found.get(f"{param} when {label} #{int(n) - 1} ran", {})
    )
    fv, ev, sv = f.get("value"), e.get("value"), earlier.get("value")
    if not all(trusted.type_(v) in TENSORS for v in (fv, ev, sv)) or fv.shape != sv.shape:
        return False
    return bool(sv.any()) and close(fv, ev + sv, (1e-4, 1e-5))


# model.train(was_training) restores one mode; a caller's mixed modes are not the task
_RESTORED = ["train", "eval"]
_OUTER = [False, True, False]  # one call in three from inside the caller's torch.no_grad()


def _modes_changed(e: dict, f: dict, ctx) -> bool:
    return e.get("training") != f.get("training")


# Exercise 1 (lesson 01): gradients zeroed before every backward ------------------------------

# Adam divides a gradient by its own size plus eps. With the default eps (1e-8), a gradient
# that is 0 in exact arithmetic (a bias before a BatchNorm in training mode) and rounding
# noise in float32 moves its parameter by about lr in a direction the noise picks, which the
# order of a sum (another formula, another thread count) changes; with eps well above that
# noise, such a parameter stays where any right answer leaves it.
_ADAM_EPS = 1e-2
_OPTIMIZERS = {
    "SGD": lambda params, lr: torch.optim.SGD(params, lr=lr),
    "SGD+momentum": lambda params, lr: torch.optim.SGD(params, lr=lr, momentum=0.9),
    "Adam": lambda params, lr: torch.optim.Adam(params, lr=lr, eps=_ADAM_EPS),
}
_OPTIONS = {"Adam": f", eps={_ADAM_EPS:g}"}  # what the case's text adds to lr


@dataclass(frozen=True)
class TrainEpoch(LayerWatchSpec):
    """Every optimizer step uses the gradient of its own batch, whatever .grad held before."""

    number = 1
    seed: int = 0
    lr: float = 0.1
    device: str | None = None

    counted = ()
    random = True
    names = {"result": "train_epoch(model, optimizer, batches)"}
    allow = (
        Rule("model*.grad"),  # what .grad holds after the last step is not the task
        Rule("model*", zeroed_frozen),
    )
    blame = (Rule("model*.grad when *", _added_to_earlier, "RG-4"),)

    def cases(self) -> list[dict]:
        axes = {
            **_MODEL_AXES,
            "mode": ["train", "mixed", "eval"],
            "optimizer": list(_OPTIMIZERS),
            "lr": [self.lr, self.lr / 2, self.lr * 1.5],
            "sizes": [_sizes(3, 6, False), _sizes(4, 5, True), _sizes(2, 7, False)],
            "groups": list(GROUPS),
        }
        cases = draw(self.seed, axes, 3)
        # inputs a hundred times as large: gradients far above any norm a clip would pick,
        # with plain SGD, which steps by the gradient's size (Adam would hide a rescaling);
        # and a last batch whose loss is not finite: its step is taken all the same
        scaled = {**cases[-1], "optimizer": "SGD", "x_scale": 100.0}
        # the optimizer holds the frozen layer too, its old .grad kept: SGD steps what has one
        held = {**cases[1], "frozen": "first", "stale": "stale", "optimizer": "SGD"}
        # a batch of one sample (the model in eval mode, where BatchNorm takes one): its
        # labels have shape (1,), which squeeze() would make 0-d
        single = {**cases[2], "mode": "eval", "sizes": [4, 1, 3]}
        return [
            *cases,
            scaled,
            {**cases[0], "inf_batch": True, "alone": True},
            {**held, "every_param": True},
            single,
        ]

    def describe(self, case: dict) -> Text:
        return with_every_parameter_held(with_groups(_describe(case), case), case)

    def build(self, case: dict, device) -> World:
        model, batches, objects = _model_and_batches(self, case, device)
        held = held_by_optimizer(model, case, self.seed + 60)
        optimizer = _OPTIMIZERS[case["optimizer"]](grouped(held, case), case["lr"])
        world = World((model, optimizer, batches), objects, device)
        names = {id(p): n for n, p in world.tensors()}
        grads_at_step(world, optimizer, "optimizer.step()", names)
        return world


check_train_epoch = checker(TrainEpoch)


# Exercise 2 (lesson 02): validation keeps no graph alive --------------------------------------


class _Packed:
    """What autograd saved for one tensor, held so that the check can count live graphs."""

    __slots__ = ("tensor", "__weakref__")

    def __init__(self, tensor: torch.Tensor):
        self.tensor = tensor


class _LiveGraphs:
    """Counts tensors saved for backward that are still alive (their graph is still kept),
    and the model's outputs that are (``note_output``, a forward hook during the call)."""

    def __init__(self):
        self.alive: weakref.WeakSet = weakref.WeakSet()
        self.outputs: weakref.WeakSet = weakref.WeakSet()
        self.hooks = trusted.saved_tensors_hooks(self._pack, self._unpack)

    def note_output(self, module, args, output) -> None:
        if trusted.isinstance_(output, trusted.tensor_type):
            self.outputs.add(output)

    def _pack(self, tensor: torch.Tensor) -> _Packed:
        # detached: a saved output would otherwise hold its own graph in a cycle
        packed = _Packed(tensor.detach())
        self.alive.add(packed)
        return packed

    @staticmethod
    def _unpack(packed: _Packed) -> torch.Tensor:
        return packed.tensor

    def count(self) -> int:
        return trusted.len_(self.alive)


class _WatchedBatches(list):
    """A list of batches that notes, each time the next batch is taken, how many graphs live.

    A real list, as the caller's is: emptying or shortening it shows in its length.
    """

    def __init__(self, pairs: list, live: _LiveGraphs):
        super().__init__(pairs)
        self.live, self.counts, self.outputs = live, [], []

    def _note(self) -> None:
        self.counts.append(self.live.count())
        self.outputs.append(trusted.len_(self.live.outputs))

    def __getitem__(self, index):
        self._note()
        return super().__getitem__(index)

    def __iter__(self):
        for pair in super().__iter__():
            self._note()
            yield pair
        self._note()

    def grew(self) -> bool:
        """More saved tensors alive at the end than one batch's graph: every graph kept."""
        c = self.counts
        return trusted.len_(c) >= 3 and c[-1] > max(c[1], 0) and c[-1] > 0

    def outputs_kept(self) -> bool:
        """More of the model's outputs alive when the loop ends than one batch's: all kept
        (detached or not, the memory grows with the number of batches)."""
        c = self.outputs
        return trusted.len_(c) >= 3 and c[-1] > max(c[1], 1)


@dataclass(frozen=True)
class Validate(LayerWatchSpec):
    """Mean validation loss in evaluation mode; no graph outlives its batch; modes restored."""

    number = 2
    seed: int = 0
    device: str | None = None

    counted = ("Dropout train", "BatchNorm train", "graphs kept", "outputs kept")
    names = {"result": "validate(model, batches)"}
    probes = {
        "graphs kept": Text(
            "every batch's graph still alive when the loop ends (tensors saved for backward)",
            "循环结束时每个批次的计算图仍然存活（为反向传播保存的张量）",
        ),
        "outputs kept": Text(
            "every batch's model output still alive when the loop ends (the memory grows with"
            " the number of batches)",
            "循环结束时每个批次的模型输出仍然存活（所需内存随批次数增长）",
        ),
    }
    blame = (
        Rule("probe:graphs kept", None, "NG-3"),
        Rule("result", lambda e, f, ctx: f.get("grad_fn"), "NG-3"),
        Rule("model*", _modes_changed, "EV-4"),
        Rule("*", lambda e, f, ctx: layers_trained(ctx), "EV-2"),
    )

    def cases(self) -> list[dict]:
        # [7, 7, 3]: a short last batch, as a DataLoader gives: the mean is over batches
        axes = {**_MODEL_AXES, "mode": _RESTORED, "sizes": [_sizes(4, 6, True), [5] * 3, [7, 7, 3]]}
        axes["outer"] = _OUTER  # a caller inside torch.no_grad() finds grad mode off afterwards
        drawn = draw(self.seed, axes, 3)
        return [*drawn, {**drawn[0], "mode": "train", "inf_batch": True}]  # a loss not finite

    def describe(self, case: dict) -> Text:
        return _describe(case)

    def build(self, case: dict, device) -> World:
        model, pairs, objects = _model_and_batches(self, case, device)
        world = World((model, None), objects, device)
        world.live = _LiveGraphs()
        world.args = (model, _WatchedBatches(pairs, world.live))
        return world

    def calling(self, world: World, case: dict, fn) -> contextlib.AbstractContextManager:
        stack = super().calling(world, case, fn)
        stack.enter_context(world.live.hooks)
        handle = world.objects["model"].register_forward_hook(world.live.note_output)
        stack.callback(handle.remove)
        return stack

    def probe(self, world: World, value, again) -> dict:
        batches = world.args[1]
        found = super().probe(world, value, again)
        return {**found, "graphs kept": batches.grew(), "outputs kept": batches.outputs_kept()}


check_validate = checker(Validate)


# Exercise 3 (lesson 03): accuracy measured in evaluation mode, mode restored ------------------


@dataclass(frozen=True)
class Accuracy(LayerWatchSpec):
    """Accuracy as the model scores in evaluation mode; the caller's model as it was."""

    number = 3
    seed: int = 0
    device: str | None = None

    counted = ("Dropout train", "BatchNorm train")
    names = {"result": "accuracy(model, images, labels)"}
    blame = (
        Rule("model*", _modes_changed, "EV-4"),
        Rule("*", lambda e, f, ctx: layers_trained(ctx), "EV-2"),
    )

    def cases(self) -> list[dict]:
        axes = {**_MODEL_AXES, "mode": _RESTORED, "layout": ["contiguous", "transposed"]}
        axes["rows"] = [50, 9, 2]  # 50: more than one chunk of 32, the last one short
        axes["outer"] = _OUTER
        drawn = draw(self.seed, axes, 3)
        nested = {**drawn[1], "net": "two nested blocks", "mode": "train"}  # whatever the salt
        refused = {**raising(drawn[2], mode="train"), "raises": "hook"}  # not a RuntimeError
        return [*drawn, raising(drawn[0], mode="train"), nested, refused]

    def describe(self, case: dict) -> Text:
        layout = lesson03._LAYOUTS[case["layout"]]
        text = Text("{m}, {n} images, {l}", "{m}，{n} 张图像，{l}").format(
            m=model_text(case), n=case["rows"], l=layout
        )
        return with_raising(text, case)

    def build(self, case: dict, device) -> World:
        model, x, net = model_world(self, case, device, _N_IN, _N_OUT)
        # far from the running statistics, where training mode scores otherwise; layout kept
        x = (2.0 * x.t() + 1.0).t() if case["layout"] == "transposed" else 2.0 * x + 1.0
        twin = make_net(self.seed, net, case["dtype"], device).eval()  # the caller's untouched
        with trusted.no_grad():  # labels match evaluation mode's prediction 2 times in 3
            predicted = twin(x).argmax(1).cpu()
        g = trusted.generator().manual_seed(self.seed + 301)
        other = trusted.randint(0, net.n_out, (case["rows"],), generator=g)
        keep = trusted.rand(case["rows"], generator=g) < 0.67
        labels = predicted.where(keep, other).to(device)
        x = one_short(x) if case.get("raises") is True else x
        if case.get("raises") == "hook":
            refusing(model)
        return World((model, x, labels), {"model": model, "images": x, "labels": labels}, device)


check_accuracy = checker(Accuracy)


# Exercise 4 (lesson 04): the discriminator step leaves the generator alone -------------------


@dataclass(frozen=True)
class DiscriminatorStep(lesson04.DStep):
    """Lesson 04's discriminator step: D's own gradient only, G's .grad and parameters kept.

    Stricter than lesson 04 on G's ``.grad``: there it holds what the last G step left (stale,
    so emptying it is allowed); here the task says it may hold values the caller still needs,
    so emptying it loses them. That names no misconception of its own (with or without a
    detach before it); G's .grad grown by D's loss is still DT-4.
    """

    number = 4
    lr: float = 0.05  # the capstone script's
    names = {"result": "discriminator_step(G, D, opt_d, real, noise)"}
    allow = tuple(rule for rule in lesson04.DStep.allow if rule.pattern != "G*.grad")
    blame = (Rule("G*.grad", lambda e, f, ctx: is_zero_or_none(f)), *lesson04.DStep.blame)


check_discriminator_step = checker(DiscriminatorStep)


# Exercise 5 (lesson 05): a feature logger that leaves no hook behind --------------------------


@dataclass(frozen=True)
class LogFeatures(LayerWatchSpec):
    """The layer's output per batch, detached; no hook left, also when the model raises."""

    number = 5
    seed: int = 0
    device: str | None = None

    counted = ("grew", "batches", "attributes")  # the probes compared (not training counts)
    random = True
    inference_compared = True  # the caller may train a probe on the features
    names = {"result": "log_features(model, layer, batches)", **HOOK_CALLS_NAMED}
    probes = {
        "attributes": Text(
            "attributes your function left on the caller's modules (a list kept on the layer "
            "holds every call's features)",
            "你的函数在调用者的模块上留下的属性（挂在层上的 list 会保存每次调用的特征）",
        ),
        "grew": Text(
            "entries the returned list gained from one more model call",
            "再调用一次模型后返回列表新增的项数",
        ),
        "batches": Text(
            "the length of the caller's list batches after the call",
            "调用之后调用者的 batches 列表的长度",
        ),
    }
    blame = (
        Rule("probe:grew", None, "HK-3"),
        Rule("model*", more_hooks, "HK-3"),
        Rule("torch", None, "HK-3"),
        Rule("result", lambda e, f, ctx: (f.get("length") or 0) > (e.get("length") or 0), "HK-3"),
        Rule("result[*]", lambda e, f, ctx: f.get("requires_grad") is True, "HK-1"),
    )

    def cases(self) -> list[dict]:
        axes = {
            **_MODEL_AXES,
            "stale": ["none"],
            "layer": [0, 2, -1],
            "sizes": [_sizes(3, 5, False), _sizes(2, 4, True), [6]],
            "raises": [False, False, True],
            "outer": _OUTER,
        }
        drawn = draw(self.seed, axes, 3)
        # the caller's own forward hook on the layer: it stays, and keeps running
        return [*drawn, {**drawn[0], "raises": False, "hooked": True}]

    def describe(self, case: dict) -> Text:
        text = Text("{d}, layer model[{k}]", "{d}，层 model[{k}]").format(
            d=_describe(case), k=case["layer"]
        )
        return with_raising(with_hooked(text, case), case)

    def build(self, case: dict, device) -> World:
        model, batches, objects = _model_and_batches(self, case, device)
        layers = [m for m in model.modules() if not trusted.isinstance_(m, torch.nn.Sequential)]
        layer = layers[case["layer"]]
        if case["raises"]:  # the model raises on the last batch: the hook must go anyway
            x, y = batches[-1]
            batches[-1] = (one_short(x), y)
        world = World((model, layer, batches), objects, device)
        world.first_x = batches[0][0]  # the probe's input, whatever the call did to the list
        world.attributes = [set(vars(m)) for m in model.modules()]
        if case.get("hooked"):
            hook_of_callers(world, layer)
        return world

    def probe(self, world: World, value, again) -> dict:
        found = {"batches": trusted.len_(world.args[2])}  # the caller's list, left as it was
        modules = list(world.args[0].modules())
        pairs = zip(modules, world.attributes, strict=False)
        left = {k for m, had in pairs for k in vars(m) if k not in had}
        found["attributes"] = ", ".join(sorted(left))
        if trusted.type_(value) is not list:
            return found
        length = trusted.len_(value)
        with trusted.no_grad():
            world.args[0](world.first_x)
        return {**found, "grew": trusted.len_(value) - length}


check_log_features = checker(LogFeatures)


# Exercise 6 (lesson 06): a timer that waits for the device ------------------------------------

_BUSY_S = 4e-3  # earlier work still queued when the timer is called, in the busy cases


def _within(share: float):
    """A rule's condition: a float result within ``share`` of the reference's."""

    def when(e: dict, f: dict, ctx) -> bool:
        found, want = f.get("value"), e.get("value")
        return trusted.type_(found) is float and abs(found - want) <= share * abs(want)

    return when


def _too_small(e: dict, f: dict, ctx) -> bool:
    """Under half the time of the steps asked for: the clock read their launches only."""
    found = f.get("value")
    steps = ctx.probe("step() calls") == ctx.case["repeats"]
    return steps and trusted.type_(found) in (int, float) and found < 0.5 * e["value"]


@dataclass(frozen=True)
class TimeStep(Spec):
    """The mean time per step of the device's work: synchronize before each clock read.

    Judged on lesson 06's deterministic queue (virtual time that moves only by launches and
    waits), with drawn repeat counts (up to 25) and a device idle or still busy with earlier
    work on arrival; the returned figure, the number of steps run and whether the first
    clock read came while work was queued are compared with the reference's.
    """

    number = 6
    seed: int = 0

    names = {"result": "time_step(step, synchronize, clock, repeats)"}
    probes = {
        "step() calls": Text("calls of step()", "step() 的调用次数"),
        "synchronize() calls": Text("calls of synchronize()", "synchronize() 的调用次数"),
        "first clock read while work queued": Text(
            "the first clock read came while work was still queued",
            "第一次读时钟时，设备上排队的工作还没做完",
        ),
    }
    allow = (
        Rule("result", _within(0.01)),
        Rule(SECOND_RESULT, _within(0.01)),  # the call before the caller's own work
        Rule("probe:synchronize() calls"),
        # a clock read before the first wait, its wait then taken off, times as honestly:
        # the result decides (reading while busy without taking it off is 4 % off or more)
        Rule("probe:first clock read while work queued"),
    )
    blame = (
        Rule("result", lambda e, f, ctx: ctx.probe("synchronize() calls") == 0, "CS-2"),
        Rule("result", _too_small, "CS-2"),
        Rule("*", lambda e, f, ctx: ctx.probe("first clock read while work queued"), "CS-1"),
    )

    def cases(self) -> list[dict]:
        axes = {"repeats": [4, 12, 1, 25, 7, 16, 3], "busy": [True, False]}
        return draw(self.seed, axes, 7)

    def describe(self, case: dict) -> Text:
        busy = Text(", the device busy on arrival", "，调用时设备上仍有排队的工作")
        return Text("repeats={r}{b}", "计时 {r} 步{b}").format(
            r=case["repeats"], b=busy if case["busy"] else ""
        )

    def build(self, case: dict, device) -> World:
        g = trusted.generator().manual_seed(self.seed * 31 + case["repeats"])
        u = trusted.rand(case["repeats"] + 2, generator=g, dtype=torch.float64).tolist()
        durations = [1e-3 * (2.0 + 3.0 * x) for x in u[:-1]]
        q = VirtualQueue(durations, 1000.0 + 100.0 * u[-1], _BUSY_S if case["busy"] else 0.0)
        world = World((q.work, q.synchronize, q.clock, case["repeats"]), {}, "cpu")
        world.queue = q
        return world

    between = Text(
        "spent half a second on the host and queued two steps of its own",
        "在主机上花了半秒，并把自己的两步工作排进了队列",
    )

    def between_calls(self, world: World, case: dict) -> None:
        """Work of the caller's own between two timings: a start time kept from the last
        call (to save a synchronize) counts it, a synchronize before the first read does not."""
        world.queue.host += 0.5
        world.queue.work()
        world.queue.work()

    def probe(self, world: World, value, again) -> dict:
        log = world.queue.log
        return {
            "step() calls": log.count("work"),
            "synchronize() calls": log.count("sync"),
            "first clock read while work queued": world.queue.first_read_busy(),
        }


check_time_step = checker(TimeStep)


# Exercise 7 (lesson 07): a custom Function whose backward fits its forward --------------------


def _cf(message: str) -> str | None:
    lowered = message.lower()
    if "incorrect number of gradients" in lowered:
        return "CF-2"
    if "legacy autograd function" in lowered or "non-static forward" in lowered:
        return "CF-1"
    return None


_CF_EXPLAIN = {
    "CF-2": Text(
        "backward must return one gradient per input of forward (None for beta)",
        "backward 必须为 forward 的每个输入各返回一个梯度（beta 返回 None）",
    ),
    "CF-1": Text(
        "a Function needs static forward/backward and is called through .apply",
        "Function 的 forward/backward 必须是静态方法，并通过 .apply 调用",
    ),
}
_X_KINDS = {
    "leaf": Text("x a leaf", "x 是叶子张量"),
    "computed": Text("x = w * 1 (has history)", "x = w * 1（带计算历史）"),
    "transposed": Text("x = w.t(), not contiguous", "x = w.t()，不连续"),
}
_EDGES = {
    "plain": Text("values in [-3, 3)", "取值在 [-3, 3) 内"),
    "zeros": Text("some x exactly 0", "部分 x 恰好为 0"),
    "large": Text("|x| up to 60", "|x| 最大到 60"),
}


def _raised_or_right(e: dict, f: dict, ctx) -> bool:
    """Backward after x changed in place raised, or still gave the right gradient: the
    reference's 'x.grad' (nothing on the learner's side computes it)."""
    found, right = f.get("value"), ctx.expected.get("probe", {}).get("x.grad")
    return found is True or close(found, right, (1e-4, 1e-5))


@dataclass(frozen=True)
class SwishFunction(Spec):
    """Swish through a custom Function: values and gradients as autograd's, beta a float."""

    number = 7
    seed: int = 0
    device: str | None = None

    names = {"result": "swish(x, beta)"}
    probes = {
        "x.grad": Text("the gradient backward gives x", "backward 给 x 的梯度"),
        "wrong count": Text(
            "backward returns a wrong number of gradients", "backward 返回的梯度个数不对"
        ),
        "after x changed": Text(
            "backward after x was changed in place after forward: it raises (True) or gives"
            " the gradient from forward's values",
            "forward 之后原地修改 x，再反向传播：报错（True），或仍用前向传播时的值算出梯度",
        ),
        "grad_output changed": Text(
            "backward changed the caller's incoming gradient (grad_output) in place",
            "backward 原地修改了调用者传入的梯度（grad_output）",
        ),
        "x.grad_other_beta": Text(
            "the gradient backward gives x when another swish with another beta ran forward"
            " before it",
            "在它之前另一个 swish 用另一个 beta 做过前向传播时，backward 给 x 的梯度",
        ),
        "x.grad again": Text(
            "the gradient a second backward through the same graph (retain_graph=True) gives x",
            "沿同一计算图第二次反向传播（retain_graph=True）给 x 的梯度",
        ),
    }
    allow = (Rule("probe:after x changed", _raised_or_right),)
    blame = (Rule("probe:wrong count", None, "CF-2"), Rule("probe:after x changed", None, "CF-4"))

    def cases(self) -> list[dict]:
        axes = {
            "shape": [(3, 4), (5,), (), (1,), (2, 3, 2)],
            "dtype": ["float64", "float32"],
            "x": list(_X_KINDS),
            "edge": list(_EDGES),
            "beta": [0.5, 1.0, 1.75, 2.5],
        }
        cases = draw(self.seed, axes, 4)
        for case in cases:
            if case["x"] == "transposed" and len(case["shape"]) != 2:
                case["x"] = "computed"
        # no float32 holds 0.1; beta = 0 makes swish x / 2
        return [*cases, {**cases[0], "dtype": "float64", "beta": 0.1}, {**cases[1], "beta": 0.0}]

    def describe(self, case: dict) -> Text:
        return Text(
            "x of shape {s}, {t}, {x}, {e}, beta={b}", "x 的形状为 {s}，{t}，{x}，{e}，beta={b}"
        ).format(
            s=str(case["shape"]),
            t=case["dtype"],
            x=_X_KINDS[case["x"]],
            e=_EDGES[case["edge"]],
            b=case["beta"],
        )

    def build(self, case: dict, device) -> World:
        dtype, shape = getattr(torch, case["dtype"]), case["shape"]
        base = shape[::-1] if case["x"] == "transposed" else shape
        w = 3.0 * uniform(self.seed + 700, *base, device=device, dtype=dtype)
        if case["edge"] == "zeros":
            w = w.where(w.abs() > 1.0, trusted.zeros((), dtype=dtype, device=device))
            w.reshape(-1)[:1] = 0  # one entry exactly 0 whatever the shape (a 0-d x too)
        elif case["edge"] == "large":
            w = 20.0 * w
        w.requires_grad_()
        x = {"leaf": w, "computed": w * 1, "transposed": w.t() if w.dim() == 2 else w}[case["x"]]
        objects = {"x": x} if x is w else {"x": x, "w": w}
        world = World((x, case["beta"]), objects, device)
        world.leaf = w
        return world

    def probe(self, world: World, value, again) -> dict:
        if trusted.type_(value) not in TENSORS or value.shape != world.args[0].shape:
            return {}
        g = uniform(self.seed + 710, *value.shape, device=value.device, dtype=value.dtype)
        back = call(lambda: trusted.autograd_grad(value, world.leaf, g, retain_graph=True))
        found = {"wrong count": not back.ok and _cf(trusted.repr_(back.error)) == "CF-2"}
        # The caller's gradient may be shared (.sum() passes a view of ones): never written.
        again_g = uniform(self.seed + 710, *value.shape, device=value.device, dtype=value.dtype)
        found["grad_output changed"] = not trusted.equal(g, again_g)
        if back.ok:
            found["x.grad"] = back.value[0].detach().to("cpu", copy=True)
            # a second swish layer, with its own beta, runs forward before this backward: a
            # beta kept on the class or in a global is the later one's
            again({**world.case, "beta": world.case["beta"] + 1.25})
            other = call(lambda: trusted.autograd_grad(value, world.leaf, g, retain_graph=True))
            found["x.grad_other_beta"] = (
                other.value[0].detach().to("cpu", copy=True)
                if other.ok
                else trusted.type_(other.error).__name__
            )
            # the graph kept: a backward that changed what forward saved gives no second one
            twice = call(lambda: trusted.autograd_grad(value, world.leaf, again_g))
            found["x.grad again"] = (  # what raised, by its type: the same on every device
                twice.value[0].detach().to("cpu", copy=True)
                if twice.ok
                else trusted.type_(twice.error).__name__
            )
        world2, value2 = again()  # the input changed in place after forward, then backward
        x2 = world2.args[0]
        if trusted.type_(value2) not in TENSORS or x2.is_leaf or not value2.requires_grad:
            return found
        with trusted.no_grad():
            x2.mul_(-0.5)
        late = call(lambda: trusted.autograd_grad(value2, world2.leaf, g))
        found["after x changed"] = late.value[0].detach().to("cpu", copy=True) if late.ok else True
        return found

    def classify(self, message: str) -> str | None:
        return _cf(message)

    def explain(self, message: str) -> Text | None:
        return _CF_EXPLAIN.get(_cf(message) or "")


check_swish = checker(SwishFunction)


EXERCISES = numbered(
    globals(),
    ("train_epoch", "lesson 01 bug: the training loop", "第 01 课的错误：训练循环", "RG-4"),
    ("validate", "lesson 02 bug: the validation loss", "第 02 课的错误：验证损失", "NG-3"),
    ("accuracy", "lesson 03 bug: the accuracy", "第 03 课的错误：准确率", "EV-2 EV-4"),
    ("discriminator_step", "lesson 04 bug: discriminator step", "第 04 课的错误：判别器步", "DT-4"),
    ("log_features", "lesson 05 bug: the feature logger", "第 05 课的错误：特征记录器", "HK-3"),
    ("time_step", "lesson 06 bug: the step timer", "第 06 课的错误：每步计时器", "CS-2"),
    ("swish", "lesson 07 bug: the custom Function", "第 07 课的错误：自定义 Function", "CF-2"),
)

self_check = self_checker(EXERCISES)
