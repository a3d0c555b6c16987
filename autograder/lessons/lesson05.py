"""Checks for lesson 05: hooks — seeing and changing what flows through a model.

Each check is a :class:`~autograder.common.oracle.Spec`: its seed draws caller states
(models with BatchNorm arriving in training, evaluation or mixed mode, nested names,
frozen parameters, stale, zero or no ``.grad``, float32/float64/bfloat16, transposed,
sliced or single-row inputs, drawn limits, masks and learning rates, a model that
raises), the learner's function and the reference run in identical worlds, and
everything the caller can see afterwards is compared. Probes then do what a caller
does next: change a layer's live output in place, train through the hooks, remove
the returned handles.

This module runs beside learner code (the learner's kernel, the grading sandbox's
observer) and holds no answer: it builds each case's world, calls the learner's function,
records what a caller sees and compares. The references are in
:mod:`autograder.references.lesson05`, which only the judge imports; the learner's
kernel compares with their states shipped in ``autograder/lessons/expected/lesson05.wire``.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from dataclasses import dataclass

import torch
from torch import nn

from autograder.common import trusted
from autograder.common.caller_states import (
    HOOK_CALLS_NAMED,
    STALE,
    hook_of_callers,
    leave_grads,
    with_hooked,
)
from autograder.common.exercise import numbered
from autograder.common.i18n import Text
from autograder.common.inputs import device_name, laid_out, uniform
from autograder.common.on_device import OnTheDevice, there
from autograder.common.oracle import TOLERANCE, Rule, Spec, World, close, draw, more_hooks, state
from autograder.common.protocol import call, checker, verdict
from autograder.common.recorded import TENSORS, cpu_copy, dotted
from autograder.kernel.measure import AliveSavedBytes, saved_bytes
from autograder.kernel.selfcheck import self_checker

LIVE_SHIFT = 1000.0  # what the caller adds in place to a layer's live output after the call


# Models and the states callers leave them in ----------------------------------------------


class _Tap:
    """Keeps a graph-free alias of the module's last output, for the checks' probes."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = super().forward(x)
        self.tap = out.detach()
        return out


class TapLinear(_Tap, nn.Linear):
    pass


class TapNorm(_Tap, nn.BatchNorm1d):
    pass


class DenseLinear(nn.Linear):
    """A Linear that reads its input in row-major order, whatever the input's strides.

    A bfloat16 matmul rounds differently for a non-contiguous input, and equal answers
    leave different layouts: ``torch.where`` with a transposed mask returns a transposed
    result, ``output * mask`` a contiguous one. The check compares values, not layouts.
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(x.contiguous())


class Fails(nn.Module):
    """A layer that raises, as a model with a shape bug would."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise RuntimeError("the model failed in the middle of forward (planted by the check)")


_ACTS = {"tanh": nn.Tanh, "relu": lambda: nn.ReLU(inplace=True), "sigmoid": nn.Sigmoid}


def make_model(
    seed: int, depth: int, dtype, act="tanh", norm=True, nested=False, fails=False, bias=True, out=3
):
    """Linear [→ BatchNorm1d] → activation blocks (4 → 6 wide), a Linear head to ``out``
    (3); seeded. ``bias`` False: the first Linear has none."""
    g = trusted.generator().manual_seed(seed)
    layers: list[nn.Module] = []
    for k in range(depth):
        layers += [TapLinear(4 if k == 0 else 6, 6, bias=bias or k > 0, dtype=dtype)]
        layers += [TapNorm(6, dtype=dtype)] if norm else []
        layers += [_ACTS[act]()]
    if fails:
        layers.insert(len(layers) // 2 + 1, Fails())
    head = TapLinear(6, out, dtype=dtype)
    body = OrderedDict(body=nn.Sequential(*layers), head=head)
    model = nn.Sequential(body) if nested else nn.Sequential(*layers, head)
    with trusted.no_grad():
        for p in model.parameters():
            p.copy_(trusted.rand(p.shape, generator=g, dtype=dtype) - 0.5)
        for m in model.modules():
            if trusted.isinstance_(m, nn.BatchNorm1d):
                m.running_mean.copy_(trusted.rand(6, generator=g) - 0.5)
                m.running_var.copy_(0.5 + trusted.rand(6, generator=g))
                m.weight.add_(1)
    return model


_MODES = {
    "train": Text("training mode", "训练模式"),
    "eval": Text("evaluation mode", "评估模式"),
    "mixed": Text(
        "training mode, BatchNorm in evaluation mode", "训练模式，BatchNorm 处于评估模式"
    ),
}
_FROZEN = {
    "none": Text("nothing frozen", "没有冻结的参数"),
    "first": Text("the first Linear frozen", "第一个 Linear 被冻结"),
    "bias": Text("the head's bias frozen", "输出层的 bias 被冻结"),
}


def arrive(model: nn.Module, case: dict, seed: int) -> None:
    """The caller's state: modes, frozen parameters, what .grad holds (from the case)."""
    model.train(case.get("mode", "train") != "eval")
    for m in model.modules():
        if case.get("mode") == "mixed" and trusted.isinstance_(m, nn.BatchNorm1d):
            m.eval()
    linears = [m for m in model.modules() if trusted.isinstance_(m, nn.Linear)]
    frozen = {"none": [], "first": list(linears[0].parameters()), "bias": [linears[-1].bias]}
    for p in frozen[case.get("frozen", "none")]:
        p.requires_grad_(False)
    leave_grads(model.parameters(), case.get("grads"), seed + 100)


_LAYOUTS = {
    "plain": Text("x contiguous", "x 连续"),
    "transposed": Text("x transposed (not contiguous)", "x 是转置（不连续）"),
    "slice": Text("x a view into a larger storage", "x 是更大存储的视图"),
    "row": Text("x a single row", "x 只有一行"),
}


_MASKS = {
    "binary": Text("mask of shape (6,)", "形状为 (6,) 的 mask"),
    "row": Text("mask of shape (1, 6)", "形状为 (1, 6) 的 mask"),
    "view": Text(
        "mask a column of a larger tensor (not contiguous)", "mask 是更大张量的一列（不连续）"
    ),
    "zeros": Text("mask all zeros", "mask 全为零"),
    # for a layer output of shape (n, 2, 6): a mask per position
    "binary3": Text("mask of shape (2, 6)", "形状为 (2, 6) 的 mask"),
    "row3": Text("mask of shape (1, 2, 6)", "形状为 (1, 2, 6) 的 mask"),
    "view3": Text(
        "mask of shape (2, 6), a transposed slice of a larger tensor (not contiguous)",
        "形状为 (2, 6) 的 mask，是更大张量的转置切片（不连续）",
    ),
    "zeros3": Text("mask all zeros, of shape (2, 6)", "形状为 (2, 6) 的全零 mask"),
}
_MASK_KINDS = [k for k in _MASKS if not k.endswith("3")]  # a "3" kind: x_dims 3 picks it


def _dtypes(first: str) -> list[str]:
    return [first, "float64" if first == "float32" else "float32", "bfloat16"]


def _backprop(found: dict, raised: str, output, model: nn.Module, x: torch.Tensor):
    """The caller's backward from ``output``: every gradient it gets, or that it raised."""
    named = {"x": x} if x.requires_grad else {}
    named.update({f"model{dotted(n)}": p for n, p in model.named_parameters() if p.requires_grad})
    grads = call(lambda: trusted.autograd_grad((output.float() ** 2).sum(), list(named.values())))
    found[raised] = not grads.ok
    if grads.ok:
        found.update(
            {f"grad|{k}.grad": cpu_copy(g) for k, g in zip(named, grads.value, strict=True)}
        )
    return grads


def _remove(handles) -> None:
    """What the caller does with the returned handles: remove each (real ones only)."""
    items = list(handles) if trusted.type_(handles) in (list, tuple) else [handles]
    for h in items:
        if trusted.type_(h) is torch.utils.hooks.RemovableHandle:
            h.remove()


def _hooks_left(world: World) -> int:
    """Hooks on every caller module and tensor, as the oracle's state counts them."""
    return sum(fields.get("hooks", 0) for fields in state(world, None).values())


def _handles_kept(e: dict, f: dict, ctx) -> bool:
    """Hooks stay although the caller removed every handle it was given."""
    kinds = [v.get("kind") for b, v in ctx.found.items() if b.startswith("result")]
    return "RemovableHandle" in kinds and (f.get("value") or 0) > 0


def _backward_raised(e: dict, f: dict, ctx) -> bool:
    """No gradients to compare: the failed backward is reported on its own."""
    return any(v is True for k, v in ctx.found["probe"].items() if k.startswith("raises"))


def _in_raising_case(e: dict, f: dict, ctx) -> bool:
    return bool(ctx.case.get("raises"))


def _probe_equals(other: str):
    """A rule's condition: the found probe value is what the reference's probe ``other`` holds.

    ``{}`` in ``other`` stands for what follows '|' in the probe's own name.
    """

    def when(e: dict, f: dict, ctx) -> bool:
        want = ctx.expected["probe"].get(other.format(ctx.base.partition("|")[2]))
        return want is not None and close(f.get("value"), want, (1e-3, 1e-4))

    return when


_FACTS = {  # how a case's facts read in feedback; any other fact reads 'name=value'
    "mode": _MODES,
    "grads": STALE,
    "frozen": _FROZEN,
    "x": _LAYOUTS,
    "mask": _MASKS,
    "raises": {True: Text("the model raises during the call", "调用过程中模型会抛出异常")},
    "names": {  # what extract_features is asked for (_PICKS)
        "linears": Text(
            "names: the first Linear, the last Linear and the head",
            "names：第一个 Linear、最后一个 Linear 和输出层",
        ),
        "norm+act": Text(
            "names: the last BatchNorm1d, the first ReLU and the head",
            "names：最后一个 BatchNorm1d、第一个 ReLU 和输出层",
        ),
        "one": Text("names: the last Linear only", "names：只有最后一个 Linear"),
        "none": Text("names empty", "names 为空"),
    },
    "bare": {True: Text("a model of two activations, no parameters", "两个激活层的模型，没有参数")},
    "ragged": {True: Text("the last batch smaller", "最后一个批次较小")},
    "nan": {True: Text("a nan in the last batch's x", "最后一个批次的 x 中有一个 nan")},
    "repeated": {True: Text("names the first layer twice", "names 里第一层出现两次")},
    "wrapped": {True: Text("the head a Sequential of its own", "输出层自成一个 Sequential")},
    "out": {
        1: Text(
            "one output: the head Linear(6, 1), y of shape (n, 1)",
            "只有一个输出：输出层为 Linear(6, 1)，y 的形状为 (n, 1)",
        )
    },
    "act": {
        "relu": Text(
            "each BatchNorm1d followed by an in-place ReLU", "每个 BatchNorm1d 之后是原地的 ReLU"
        )
    },
    "outer": {True: Text("called inside torch.no_grad()", "在 torch.no_grad() 里调用")},
    "bias": {False: Text("the first Linear without bias", "第一个 Linear 没有 bias")},
    "layer": {
        True: Text(
            "the model is one Linear(6, 3), with no submodules",
            "模型只是一个 Linear(6, 3)，没有子模块",
        )
    },
    "logger": {
        True: Text(
            "the caller's own hook on each parameter keeps the raw gradient",
            "调用者自己在每个参数上挂了钩子，保存原始梯度",
        )
    },
    "x_dims": {
        3: Text(
            "x of shape (n, 2, 4): model[1] outputs (n, 2, 6)",
            "x 的形状为 (n, 2, 4)：model[1] 的输出形状为 (n, 2, 6)",
        )
    },
    "norm": {True: Text("BatchNorm1d after each Linear", "每个 Linear 之后有 BatchNorm1d")},
    "pool": {
        True: Text(
            "a MaxPool1d before the head (it saves int64 indices)",
            "输出层之前有一个 MaxPool1d（它会保存 int64 类型的下标）",
        )
    },
}


class _HookSpec(Spec):
    """A spec whose probes are named 'kind|key'; ``probes`` says what each kind means."""

    def describe(self, case: dict) -> Text:
        en, zh = [], []
        for name, value in case.items():
            if name not in _FACTS:
                shown = f"{name}={value:g}" if trusted.type_(value) is float else f"{name}={value}"
                en, zh = [*en, shown], [*zh, shown]
            elif value in _FACTS[name]:
                en, zh = [*en, _FACTS[name][value].en], [*zh, _FACTS[name][value].zh]
        return Text(", ".join(en), "，".join(zh))

    def probe_text(self, name: str) -> Text:
        kind, _, key = name.partition("|")
        return self.probes[kind].format(k=key) if kind in self.probes else super().probe_text(name)


# Exercise 1 (HK-1, HK-2, HK-3) ---------------------------------------------------------------

_PICKS = {  # names passed to extract_features, by what they name
    "linears": ["linear", "last linear", "head"],
    "norm+act": ["last norm", "relu", "head"],
    "one": ["last linear"],
    "none": [],
}


def module_name(depth: int, nested: bool, which: str) -> str:
    """A submodule's name as named_modules() gives it, in a model from make_model(norm=True)."""
    if which == "head":
        return "head" if nested else str(3 * depth)
    last = 3 * (depth - 1)
    index = {"linear": 0, "norm": 1, "relu": 2, "last linear": last, "last norm": last + 1}
    return ("body." if nested else "") + str(index.get(which, last + 2))  # else: last activation


_FIRST_HOOKED = Text(
    ", the first layer in names carrying a forward hook of the caller's",
    "，names 中的第一层上挂着调用者自己的前向钩子",
)


@dataclass(frozen=True)
class ExtractFeatures(_HookSpec):
    """Features of named layers: CPU copies, no graph, no alias, no hook left, even on error."""

    number = 1
    seed: int = 0
    depth: int = 2
    nested: bool = False
    batch: int = 5
    dtype: str = "float32"
    device: str | None = None

    differences_first = True  # a model it cannot index (two activations): what else differed?
    names = {"result": "extract_features(model, names, x)", **HOOK_CALLS_NAMED}
    probes = {
        "later": Text(
            "{k} after the caller changes the layers' live outputs in place",
            "调用者对各层的输出做了原地修改之后的 {k}",
        ),
        "device": Text("the device of {k}", "{k} 所在的设备"),
        "head": Text(
            "whether a layer the caller trains can take {k} as its input",
            "调用者训练的层能否以 {k} 作为输入",
        ),
        "names": Text("the caller's list names after the call", "调用之后调用者的 names 列表"),
        "alive": Text(
            "bytes saved for backward that your function keeps alive",
            "你的函数让反向传播保存的张量一直存活的字节数",
        ),
    }
    allow = (
        Rule("result*", _in_raising_case),
        Rule("probe:later|*", lambda e, f, ctx: not _changed_later(ctx)),
    )
    blame = (
        Rule("result[*", lambda e, f, ctx: f.get("requires_grad") or f.get("grad_fn"), "HK-1"),
        Rule("result[*", lambda e, f, ctx: _later_values(e, f), "HK-2"),
        Rule("probe:later|*", None, "HK-2"),
        Rule("probe:alive", None, "HK-1"),
        Rule("probe:head|*", None, "NG-4"),
        Rule("model*", more_hooks, "HK-3"),
    )

    def cases(self) -> list[dict]:
        axes = {
            "raises": [False, True, False],
            "mode": list(_MODES),
            "grads": list(STALE),
            "frozen": list(_FROZEN),
            "dtype": _dtypes(self.dtype)[:2],  # features may go through NumPy: no bfloat16
            "x": list(_LAYOUTS),
            "nested": [self.nested, not self.nested],
            "names": list(_PICKS),
            # a caller inside torch.no_grad(): it must find grad mode off afterwards
            "outer": [False, True, False],
        }
        cases = draw(self.seed, axes, 4)
        for case in cases:  # BatchNorm in training mode needs more than one row
            case["mode"] = "eval" if case["x"] == "row" else case["mode"]
        # the caller's own forward hook on the first layer named: it stays, and keeps running
        return [
            *cases,
            {**cases[0], "raises": False, "hooked": True},
            {**cases[1], "names": "linears", "repeated": True},
            {**cases[2], "raises": False, "mode": "train", "x": "plain", "names": "none"},
            {**cases[3], "raises": False, "grads": "none", "frozen": "none", "bare": True},
        ]

    def describe(self, case: dict) -> Text:
        plain = super().describe({k: v for k, v in case.items() if k != "hooked"})
        return with_hooked(plain, case, _FIRST_HOOKED)

    def build(self, case: dict, device) -> World:
        dtype = getattr(torch, case["dtype"])
        if case.get("bare"):  # no parameter to take a device or dtype from
            model = nn.Sequential(nn.Tanh(), nn.ReLU()).train(case["mode"] != "eval")
        else:
            model = make_model(
                self.seed, self.depth, dtype, "relu", nested=case["nested"], fails=case["raises"]
            ).to(device)
            arrive(model, case, self.seed)
        x = laid_out(self.seed + 1, self.batch, 4, case["x"], device, dtype)
        names = [module_name(self.depth, case["nested"], w) for w in _PICKS[case["names"]]]
        names = list(dict.fromkeys(names))  # depth 1: the first hidden Linear is the last
        names = ["0", "1"] if case.get("bare") else names
        names += names[:1] if case.get("repeated") else []
        world = World((model, names, x), {"model": model, "x": x}, device)
        world.first_name = names[0] if names else None
        if case.get("hooked") and names:
            hook_of_callers(world, model.get_submodule(names[0]))
        return world

    before_second = Text(
        "put a copy of the first layer in names in its place (copy.deepcopy)",
        "把 names 中的第一层换成了它的副本（copy.deepcopy）",
    )

    def before_second_call(self, world: World, case: dict) -> None:
        """The first layer named replaced by a copy of itself: a table of submodules kept
        per model hooks the old layer, which no longer runs."""
        model, name = world.args[0], world.first_name
        if name is not None:
            model.set_submodule(name, trusted.deepcopy(model.get_submodule(name)))

    def calling(self, world: World, case: dict, fn):
        stack = contextlib.ExitStack()
        if case.get("outer"):
            stack.enter_context(trusted.no_grad())
        world.alive = AliveSavedBytes(exclude=list(world.objects["model"].parameters()))
        stack.enter_context(world.alive)
        return stack

    def compared(self, base: str, fields: dict) -> dict:
        """A feature's device is judged by the probe (CPU), not relative to the inputs'."""
        if base.startswith("result["):
            return {k: v for k, v in fields.items() if k != "device"}
        return fields

    def probe(self, world: World, value, again) -> dict:
        found = {
            "names": [trusted.repr_(n) for n in list(world.args[1])[:16]],
            "alive": world.alive.alive(),
        }
        if trusted.type_(value) is not dict:
            return found
        with trusted.no_grad():
            for m in world.objects["model"].modules():
                tap = getattr(m, "tap", None)
                if tap is not None:  # the caller keeps working with the live tensors
                    with trusted.inference_mode(tap.is_inference()):
                        tap.add_(LIVE_SHIFT)
        for name, feature in list(value.items())[:16]:
            if trusted.type_(feature) in TENSORS:
                found[f"later|features[{name!r}]"] = cpu_copy(feature)
                found[f"device|features[{name!r}]"] = feature.device.type
                found[f"head|features[{name!r}]"] = _trains_a_head(feature)
        return found


def _trains_a_head(feature: torch.Tensor) -> bool:
    """Whether a layer the caller trains can use the feature as input.

    An inference tensor (features taken under ``torch.inference_mode()``) cannot be saved
    for backward, so the caller's next step, training a head on the features, fails (NG-4).
    """

    def step():
        with trusted.set_grad_enabled(True):
            weight = trusted.ones((), dtype=feature.dtype, device=feature.device)
            weight.requires_grad_(True)
            return trusted.autograd_grad((feature * weight).sum(), weight)

    return call(step).ok


def _changed_later(ctx) -> bool:
    """The feature changed when the caller changed the live outputs: it is an alias."""
    now = ctx.found.get("result[" + ctx.base.partition("[")[2], {}).get("value")
    later = ctx.found["probe"].get(ctx.base.removeprefix("probe:"))
    return trusted.type_(now) in TENSORS and not close(later, now)


def _later_values(e: dict, f: dict) -> bool:
    """The feature holds values an in-place op (the next ReLU) wrote after the hook ran."""
    ev, fv = e.get("value"), f.get("value")
    if trusted.type_(ev) not in TENSORS or trusted.type_(fv) not in TENSORS:
        return False
    return not close(fv, ev, (1e-3, 1e-4)) and close(fv, ev.clamp(min=0), (1e-3, 1e-4))


def check_extract_features(
    fn, seed: int = 0, depth: int = 2, nested: bool = False, dtype=torch.float32, device=None
) -> None:
    name = str(dtype).removeprefix("torch.")
    dev = device_name(device)
    verdict(ExtractFeatures(seed, depth, nested, 5 + seed % 3, name, dev), fn)


# Exercise 2 (HK-4) -------------------------------------------------------------------------


def _grads(model: nn.Module, prefix: str) -> dict:
    return {
        f"{prefix}|model{dotted(n)}.grad": None if p.grad is None else cpu_copy(p.grad)
        for n, p in model.named_parameters()
    }


def _unclipped_with_hook(e: dict, f: dict, ctx) -> bool:
    """A parameter with a hook got the unclipped gradient: the hook's result was dropped."""
    param = ctx.base.partition("|")[2].removesuffix(".grad")
    before = ctx.before.get(param, {}).get("hooks") or 0  # the caller's own logging hooks
    hooked = (ctx.found.get(param, {}).get("hooks") or 0) > before
    return hooked and _probe_equals("after|{}")(e, f, ctx)


def _hooked_by_call(e: dict, f: dict, ctx) -> bool:
    """The call put a hook on the parameter whose raw gradient changed: the hook changed the
    gradient it was given in place (not a module hook that changes what flows to it)."""
    param = ctx.base.partition("|")[2].removesuffix(".grad")
    before = ctx.before.get(param, {}).get("hooks") or 0
    return (ctx.found.get(param, {}).get("hooks") or 0) > before


def _cancelled_to_noise(e: dict, f: dict, ctx) -> bool:
    """Equal but where the caller's gradient is rounding noise of a sum that cancels.

    A bias before a BatchNorm in training mode has gradient 0, reached as a sum of terms
    of the loss scale's size: what is left is noise of order eps·loss_scale, which the
    order of the sum (another thread count) changes. Where the reference's unclipped
    gradient is that small, both sides need only be that small; elsewhere the dtype's
    tolerance holds.
    """
    want, got = e.get("value"), f.get("value")
    unclipped = ctx.expected["probe"].get(f"after|{ctx.base.partition('|')[2]}")
    if any(trusted.type_(v) not in TENSORS for v in (want, got, unclipped)):
        return False
    if not want.shape == got.shape == unclipped.shape or str(want.dtype) not in TOLERANCE:
        return False
    rtol, atol = TOLERANCE[str(want.dtype)]
    bound = 32 * torch.finfo(want.dtype).eps * ctx.case["loss_scale"]
    want, got = want.to(torch.float64), got.to(torch.float64)
    equal = (want - got).abs() <= atol + rtol * want.abs()
    noise = (unclipped.to(torch.float64).abs() <= bound) & (got.abs() <= bound)
    return bool((equal | noise).all())


@dataclass(frozen=True)
class ClipGradients(_HookSpec):
    """Per-parameter clipping by a tensor hook's return value; removable through the handles."""

    number = 2
    seed: int = 0
    depth: int = 2
    max_abs: float = 0.05
    dtype: str = "float32"
    device: str | None = None

    names = {"result": "clip_gradients(model, max_abs)"}
    probes = {
        "step": Text(
            "{k} after the caller's step with your hooks", "带着你的钩子执行一步之后的 {k}"
        ),
        "shared": Text(
            "{k} in a step after the caller also clipped another model's gradients to a tenth "
            "of max_abs (each call's hooks keep their own limit)",
            "调用者又把另一个模型的梯度裁剪到 max_abs 的十分之一之后，再执行一步时的 {k}"
            "（每次调用注册的钩子各自保留自己的上限）",
        ),
        "after": Text("{k} in a step after handle.remove()", "handle.remove() 之后执行一步的 {k}"),
        "raises": Text("the caller's backward ({k}) raises", "调用者的反向传播（{k}）抛出异常"),
        "hooks": Text(
            "hooks left after removing the returned handles", "移除返回的句柄之后残留的钩子"
        ),
        "raw": Text(
            "{k} as the caller's own hook received it, after the step (your hook changed the "
            "gradient it was given in place: return a new one)",
            "调用者自己的钩子收到的 {k}，在这一步之后（你的钩子原地修改了它收到的梯度："
            "应返回一个新的）",
        ),
    }
    allow = (
        Rule(
            "result",
            lambda e, f, ctx: f.get("kind") == "tuple" and f.get("length") == e.get("length"),
        ),
        Rule("probe:step|*", _backward_raised),
        Rule("probe:shared|*", _backward_raised),
        Rule("probe:after|*", _backward_raised),
        Rule("probe:*.grad", _cancelled_to_noise),
    )
    blame = (
        Rule("probe:step|*", _unclipped_with_hook, "HK-4"),
        Rule("probe:hooks", _handles_kept, "HK-3"),
        Rule("probe:raw|*", _hooked_by_call, "HK-4"),
        Rule("model*.weight", more_hooks, "HK-3"),
        Rule("model*.bias", more_hooks, "HK-3"),
    )

    def cases(self) -> list[dict]:
        m = self.max_abs
        axes = {
            "mode": list(_MODES),
            "grads": list(STALE),
            "frozen": ["none"],  # a hook cannot be registered on a frozen parameter
            "dtype": _dtypes(self.dtype)[:2],  # bfloat16 sums of large gradients differ by device
            "max_abs": [m, m / 2, m * 3],
            "set_to_none": [True, False],
            "nested": [False, True],
            "loss_scale": [4.0, 1e4],
            "logger": [False, True],  # the caller's own hook keeps each raw gradient
        }
        drawn = draw(self.seed, axes, 3)
        # a parameter fewer: no bias to hook; a model that is one layer, with no children
        return [*drawn, {**drawn[0], "bias": False}, {**drawn[1], "nested": False, "layer": True}]

    def build(self, case: dict, device) -> World:
        dtype = getattr(torch, case["dtype"])
        one_layer = case.get("layer")  # depth 0: the head alone, Linear(6, 3)
        depth = 0 if one_layer else self.depth
        model = make_model(
            self.seed, depth, dtype, nested=case["nested"], bias=case.get("bias", True)
        ).to(device)
        model, width = (model[0], 6) if one_layer else (model, 4)
        arrive(model, case, self.seed)
        x = laid_out(self.seed + 1, 8, width, "plain", device, dtype)
        world = World((model, case["max_abs"]), {"model": model, "x": x}, device)
        world.raw = {}
        if case.get("logger"):  # registered before the learner's hooks: they run first
            for n, p in model.named_parameters():
                p.register_hook(lambda g, n=n: world.raw.__setitem__(n, g))
        return world

    def probe(self, world: World, value, again) -> dict:
        """The caller's steps: one through the hooks; one after it also clipped another
        model's gradients to a tighter limit (each call's hooks keep their own); one after
        removing the handles."""
        model, x = world.objects["model"], world.objects["x"]
        found: dict = {}
        for moment in ("step", "shared", "after"):
            if moment == "shared":
                again(dict(world.case, max_abs=world.case["max_abs"] / 10))
            if moment == "after":
                _remove(value)
            model.zero_grad(set_to_none=world.case["set_to_none"])
            backward = call(lambda: ((model(x) ** 2).sum() * world.case["loss_scale"]).backward())
            found[f"raises|{moment}"] = not backward.ok
            found.update(_grads(model, moment) if backward.ok else {})
            if moment == "step" and backward.ok:
                raw = world.raw.items()
                found.update({f"raw|model{dotted(n)}.grad": cpu_copy(g) for n, g in raw})
        found["hooks"] = _hooks_left(world)
        return found


check_clip_gradients = checker(ClipGradients)


# Exercise 3 (HK-5) -------------------------------------------------------------------------

_LAYERS = {
    "tanh": nn.Tanh,
    "sigmoid": nn.Sigmoid,
    "relu": nn.ReLU,
    "linear": lambda dtype: nn.Linear(6, 6, dtype=dtype),
    "norm": lambda dtype: nn.BatchNorm1d(6, dtype=dtype),
}


def _mask(seed: int, kind: str, device, dtype) -> torch.Tensor:
    g = trusted.generator().manual_seed(seed)
    big = (trusted.rand(6, 3, generator=g) > 0.4).to(device=device, dtype=dtype)
    masks = {"binary": big[:, 0].clone(), "row": big[:, 0].reshape(1, 6).clone()}
    masks.update(view=big[:, 1], zeros=trusted.zeros(6, device=device, dtype=dtype))
    pairs = big[:, :2].t()  # (2, 6): a mask per position of a (n, 2, 6) output
    masks.update(binary3=pairs.clone(), row3=pairs.reshape(1, 2, 6).clone())
    masks.update(view3=big[:, 1:].t(), zeros3=trusted.zeros(2, 6, device=device, dtype=dtype))
    return masks[kind]


def _unmasked(e: dict, f: dict, ctx) -> bool:
    """model(x) as if no hook ran, with a mask that changes it: the new output was dropped."""
    return not ctx.case["mask"].startswith("zeros") and _probe_equals("y_after")(e, f, ctx)


def _inplace_error(e: dict, f: dict, ctx) -> bool:
    return bool(ctx.found["probe"].get("inplace"))


def _forward_right(e: dict, f: dict, ctx) -> bool:
    want, got = ctx.expected["probe"].get("y"), ctx.found["probe"].get("y")
    return got is not None and close(got, want, (1e-3, 1e-4))


@dataclass(frozen=True)
class MaskOutput(_HookSpec):
    """A forward hook on model[1] whose return value, output * mask, replaces the output."""

    number = 3
    seed: int = 0
    layer: str = "tanh"
    dtype: str = "float32"
    device: str | None = None

    names = {"result": "mask_output(model[1], mask)", "probe:y": "model(x)", "probe:y_after": "y"}
    probes = {
        "y": Text("model(x) with your hook", "挂着你的钩子时的 model(x)"),
        "y_after": Text("model(x) after handle.remove()", "handle.remove() 之后的 model(x)"),
        "y_again": Text(
            "model(x) after mask_output hooked another model's layer with another mask",
            "mask_output 又用另一个掩码给另一个模型的层挂上钩子之后的 model(x)",
        ),
        "y_batch": Text(
            "model(x2) with your hook, x2 a batch of another size",
            "挂着你的钩子时的 model(x2)，x2 是另一种大小的批次",
        ),
        "grad": Text("{k} from backward through your hook", "经过你的钩子反向传播得到的 {k}"),
        "raises": Text("the caller's {k} raises", "调用者的 {k} 抛出异常"),
        "hooks": Text("hooks left after handle.remove()", "handle.remove() 之后残留的钩子"),
        "stats": Text(
            "model[1].running_mean after these forward passes",
            "这些前向传播之后的 model[1].running_mean",
        ),
        "inplace": Text(
            "backward raised an error about an in-place modification", "反向传播报出原地修改的错误"
        ),
    }
    allow = (Rule("probe:grad|*", _backward_raised),)
    blame = (
        Rule("probe:y", _unmasked, "HK-5"),
        Rule("probe:raises|backward", _inplace_error, "HK-5"),
        Rule("probe:grad|*", _forward_right, "HK-5"),
        Rule("probe:hooks", _handles_kept, "HK-3"),
        Rule("model*", more_hooks, "HK-3"),
    )

    def cases(self) -> list[dict]:
        axes = {
            "model[1]": [self.layer, *(k for k in _LAYERS if k != self.layer)],
            "mask": _MASK_KINDS,
            "dtype": _dtypes(self.dtype),
            "x_rows": [5, 1],
            "mode": ["train", "eval"],
            "x_dims": [2, 2, 3],  # 3: x of shape (n, 2, 4), model[1]'s output (n, 2, 6)
        }
        cases = draw(self.seed, axes, 4)
        for case in cases:  # BatchNorm in training mode needs more than one row
            case["mode"] = "eval" if case["x_rows"] == 1 else case["mode"]
            case["mask"] += "3" if case["x_dims"] == 3 else ""
        return cases

    def build(self, case: dict, device) -> World:
        dtype = getattr(torch, case["dtype"])
        g = trusted.generator().manual_seed(self.seed)
        layer = _LAYERS[case["model[1]"]]
        middle = layer(dtype) if case["model[1]"] in ("linear", "norm") else layer()
        if case["model[1]"] == "norm" and case["x_dims"] == 3:  # channels are dimension 1
            middle = nn.BatchNorm1d(2, dtype=dtype)
        model = nn.Sequential(nn.Linear(4, 6, dtype=dtype), middle, DenseLinear(6, 2, dtype=dtype))
        with trusted.no_grad():
            for p in model.parameters():
                p.copy_(trusted.rand(p.shape, generator=g, dtype=dtype) * 2 - 1)
        model.to(device).train(case["mode"] == "train")
        x = laid_out(self.seed + 1, case["x_rows"], 4, "plain", device, dtype)
        if case["x_dims"] == 3:
            x = uniform(self.seed + 1, case["x_rows"], 2, 4, device=device, dtype=dtype)
        x.requires_grad_()
        mask = _mask(self.seed + 2, case["mask"], device, dtype)
        world = World((model[1], mask), {"model": model, "mask": mask, "x": x}, device)
        rows = case["x_rows"] + 2  # the mask broadcasts over a batch of any size
        world.x_other = laid_out(self.seed + 3, rows, 4, "plain", device, dtype)
        if case["x_dims"] == 3:
            world.x_other = uniform(self.seed + 3, rows, 2, 4, device=device, dtype=dtype)
        return world

    def probe(self, world: World, value, again) -> dict:
        """The caller's forward and backward with the hook, then model(x) after remove()."""
        model, x = world.objects["model"], world.objects["x"]
        found: dict = {}
        y = call(model, x)
        found["raises|forward"] = not y.ok
        if y.ok and trusted.type_(y.value) in TENSORS:
            found["y"] = cpu_copy(y.value)
            grads = _backprop(found, "raises|backward", y.value, model, x)
            found["inplace"] = not grads.ok and "inplace operation" in str(grads.error)
            found["y_again"] = _after_another_call(world, again)
            found["y_batch"] = _output(world.objects["model"], world.x_other)
        _remove(value)
        found["y_after"] = cpu_copy(model(x))
        found["hooks"] = _hooks_left(world)
        # a hook that runs the layer again updates a training BatchNorm's statistics twice
        stats = getattr(model[1], "running_mean", None)
        found["stats"] = cpu_copy(stats) if trusted.type_(stats) in TENSORS else None
        return found


def _after_another_call(world: World, again):
    """model(x) once the function hooked another model's layer with another mask (all
    zeros, or a 0/1 mask where this one is zeros): each hook keeps its own mask."""
    suffix = "3" if world.case["mask"].endswith("3") else ""
    kind = "binary" if world.case["mask"].startswith("zeros") else "zeros"
    _, handle = again({**world.case, "mask": kind + suffix})
    y = _output(world.objects["model"], world.objects["x"])
    _remove(handle)
    return y


def _output(model: nn.Module, x):
    """model(x) without a graph, or "raised"."""
    with trusted.no_grad():
        y = call(model, x)
    return cpu_copy(y.value) if y.ok and trusted.type_(y.value) in TENSORS else "raised"


check_mask_output = checker(MaskOutput)


# Exercise 4 (HK-3) -------------------------------------------------------------------------


def _triangular(e: dict, f: dict, ctx) -> bool:
    n = e.get("length") or 0
    return f.get("length") == n * (n + 1) // 2 and n > 1


def _near_float(e: dict, f: dict, ctx) -> bool:
    """A logged float32 mean may differ in its last digits (another device, another sum); a
    float64 one holds float64's precision."""
    a, b = e.get("value"), f.get("value")
    if trusted.type_(a) is not float or trusted.type_(b) is not float:
        return False
    return ctx.case.get("dtype") != "float64" and abs(a - b) <= 1e-5 + 1e-4 * abs(a)


@dataclass(frozen=True)
class TrainAndLog(_HookSpec):
    """A training loop that logs one activation mean per step: no hook multiplies or stays."""

    number = 4
    seed: int = 0
    depth: int = 3
    steps: int = 4
    lr: float = 0.1
    train_mode: bool = True
    device: str | None = None

    floats_in_case_dtype = True
    names = {"result": "train_and_log(model, layer_name, batches, lr)"}
    allow = (Rule("model*.grad"), Rule("result*", _in_raising_case), Rule("result[*", _near_float))
    blame = (Rule("result", _triangular, "HK-3"), Rule("model*", more_hooks, "HK-3"))
    between = Text("halved the learning rate", "把学习率减半")

    def between_calls(self, world: World, case: dict) -> None:
        """The caller's next epoch with a decayed learning rate: an optimizer kept from the
        first call (on the model, the function, a module-level name) still has the old one."""
        model, layer, batches, lr = world.args
        world.args = (model, layer, batches, lr / 2)

    def cases(self) -> list[dict]:
        mode = "train" if self.train_mode else "eval"
        axes = {
            "raises": [False, True, False],
            "mode": [mode, "mixed", "eval" if self.train_mode else "train"],
            "grads": list(STALE),
            "frozen": list(_FROZEN),
            "dtype": ["float32", "float64"],
            "nested": [False, True],
            "layer_name": ["act", "norm", "linear", "head"],
            "steps": [self.steps, 2, self.steps + 1],
            "lr": [self.lr, self.lr / 2, self.lr * 1.7],
            "ragged": [False, True],
        }
        drawn = draw(self.seed, axes, 4)
        # every seed: a ragged last batch in a call that returns (a loss scaled by the first
        # batch's size shows there)
        if not any(c["ragged"] and not c["raises"] for c in drawn):
            k = next(k for k, c in enumerate(drawn) if not c["raises"])
            drawn[k] = {**drawn[k], "ragged": True}
        # the logged layer's output changed in place by the layer after it, once the hook ran
        inplace = {**drawn[0], "raises": False, "act": "relu", "layer_name": "norm"}
        # names ending alike: "0" and the head's own "9.0"
        wrapped = {**drawn[1], "nested": False, "layer_name": "linear", "wrapped": True}
        # one output (a nan in the last step's input: the last float logged is nan)
        return [*drawn, inplace, wrapped, {**drawn[2], "raises": False, "out": 1, "nan": True}]

    def build(self, case: dict, device) -> World:
        dtype = getattr(torch, case["dtype"])
        act, nested = case.get("act", "tanh"), case["nested"]
        out = case.get("out", 3)  # one output: (n, 1) targets, which squeeze() would break
        model = make_model(self.seed, self.depth, dtype, act, nested=nested, out=out).to(device)
        if case.get("wrapped"):
            model[-1] = torch.nn.Sequential(model[-1])
        arrive(model, case, self.seed)
        batches, objects = [], {"model": model}
        for k in range(case["steps"]):
            rows = 3 if case["ragged"] and k == case["steps"] - 1 else 6
            width = 5 if case["raises"] and k == case["steps"] - 1 else 4
            x = uniform(self.seed + 10 + k, rows, width, device=device, dtype=dtype)
            if case.get("nan") and k == case["steps"] - 1:
                x[0, 0] = float("nan")
            y = uniform(self.seed + 50 + k, rows, out, device=device, dtype=dtype)
            batches.append((x, y))
            objects.update({f"batches[{k}][0]": x, f"batches[{k}][1]": y})
        layer = module_name(self.depth, case["nested"], case["layer_name"])
        return World((model, layer, batches, case["lr"]), objects, device)


check_train_and_log = checker(TrainAndLog)


# Exercise 5 --------------------------------------------------------------------------------


def _copies(world: World) -> tuple:
    """The caller's model and input as they are right before the call."""
    model, x = world.objects["model"], world.objects["x"]
    with trusted.no_grad():
        return trusted.deepcopy(model), x.detach().clone().requires_grad_(x.requires_grad)


def _forward_there(model: nn.Module, x: torch.Tensor) -> dict:
    """The task's forward pass on the device: its output, the bytes it saved, and the
    caller's backward from it. A GPU's backend saves other tensors than the CPU's (cuDNN's
    batch norm keeps float32 statistics of a bfloat16 input) and rounds bfloat16 its own
    way, so ``_as_there`` lets the answer agree with these where the reference differs."""
    with trusted.set_grad_enabled(True):
        out, n_bytes = saved_bytes(model, x)
    found: dict = {}
    _backprop(found, "raises", out, model, x)
    grads = {f"probe:{k}": g for k, g in found.items() if k.startswith("grad|")}
    return {"result[0]": cpu_copy(out), "result[1]": n_bytes, **grads}


def _as_there(e: dict, f: dict, ctx) -> bool:
    """On a GPU: what the check's own forward pass there gave (``_forward_there``)."""
    value, found = there(ctx), f.get("value")
    if value is None:
        return False
    if trusted.type_(value) is int:
        return trusted.type_(found) is int and found == value
    dtype = f.get("dtype", str(found.dtype) if trusted.type_(found) in TENSORS else None)
    return dtype == str(value.dtype) and close(found, value, TOLERANCE["torch.bfloat16"])


@dataclass(frozen=True)
class ForwardCountingSaved(_HookSpec):
    """(output, bytes packed for backward) from pack/unpack hooks; the output still trains."""

    number = 5
    seed: int = 0
    depth: int = 2
    batch: int = 7
    dtype: str = "float32"
    device: str | None = None

    names = {
        "result": "forward_counting_saved(model, x)",
        "result[0]": "output",
        "result[1]": "n_bytes",
    }
    probes = {
        "raises": Text("backward from your output raises", "从你的输出反向传播时抛出异常"),
        "grad": Text("{k} from backward through your output", "从你的输出反向传播得到的 {k}"),
    }
    between = Text(
        "froze the first Linear (or unfroze it, where it was frozen)",
        "冻结了第一个 Linear（原本已冻结的则解冻）",
    )
    allow = (
        Rule("probe:grad|*", _backward_raised),
        Rule("result[0]", _as_there),
        Rule("result[1]", _as_there),
        Rule("probe:grad|*", _as_there),
    )

    def cases(self) -> list[dict]:
        axes = {
            "mode": ["train", "eval"],  # an answer that switches the mode changes what is saved
            "grads": list(STALE),
            "frozen": list(_FROZEN),
            "dtype": _dtypes(self.dtype),
            "x": list(_LAYOUTS),
            "x.requires_grad": [False, True],
            "activation": list(_ACTS),
            "pool": [False, True],
            "norm": [True, False],  # BatchNorm in training mode: a second forward pass shows
        }
        cases = draw(self.seed, axes, 4)
        for case in cases:  # BatchNorm in training mode needs more than one row
            case["norm"] = case["norm"] and case["x"] != "row"
        # The sliced x is saved (and a count of whole storages too large) only where the first
        # layer learns: that case never gets the first layer frozen, another one does instead.
        sliced = next(case for case in cases if case["x"] == "slice")
        if sliced["frozen"] == "first":
            other = next(case for case in cases if case["frozen"] != "first")
            sliced["frozen"], other["frozen"] = other["frozen"], "first"
        return cases

    def build(self, case: dict, device) -> World:
        dtype = getattr(torch, case["dtype"])
        model = make_model(self.seed, self.depth, dtype, case["activation"], norm=case["norm"])
        model = model.to(device)
        if case["pool"]:  # saves int64 indices: not every saved tensor has x's dtype
            model.insert(len(model) - 1, nn.MaxPool1d(3, stride=1, padding=1))
        arrive(model, case, self.seed)
        x = laid_out(self.seed + 1, self.batch, 4, case["x"], device, dtype)
        x.requires_grad_(case["x.requires_grad"])
        return World((model, x), {"model": model, "x": x}, device)

    def between_calls(self, world: World, case: dict) -> None:
        """Other parameters to train, so other tensors to save: a count remembered by the
        model's id, x's shape or dtype from the first call is stale."""
        model = world.objects["model"]
        first = next(m for m in model.modules() if trusted.isinstance_(m, nn.Linear))
        for p in first.parameters():
            p.requires_grad_(not p.requires_grad)

    def calling(self, world: World, case: dict, fn):
        if fn is None:
            return contextlib.nullcontext()
        return OnTheDevice(world, _copies, _forward_there)

    def probe(self, world: World, value, again) -> dict:
        """Backward from the returned output, as the caller's training step does."""
        model, x = world.objects["model"], world.objects["x"]
        if trusted.type_(value) is not tuple or trusted.type_(value[0]) not in TENSORS:
            return {}
        found: dict = {}
        _backprop(found, "raises", value[0], model, x)
        return found


def check_forward_counting_saved(
    fn, seed: int = 0, depth: int = 2, dtype=torch.float32, device=None
) -> None:
    name = str(dtype).removeprefix("torch.")
    dev = device_name(device)
    verdict(ForwardCountingSaved(seed, depth, 7 + seed % 3, name, dev), fn)


EXERCISES = numbered(
    globals(),
    (
        "extract_features",
        "a feature extractor that leaves nothing behind",
        "不留痕迹的特征提取器",
        "HK-1 HK-2 HK-3",
    ),
    ("clip_gradients", "clip gradients with tensor hooks", "用张量钩子裁剪梯度", "HK-4"),
    ("mask_output", "replace a layer's output", "替换一层的输出", "HK-5"),
    ("train_and_log", "log activations while training", "训练时记录激活值", "HK-3"),
    ("forward_counting_saved", "count what a forward pass saves", "统计前向传播保存的字节数", ""),
)

self_check = self_checker(EXERCISES)
