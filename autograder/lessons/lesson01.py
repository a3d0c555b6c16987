"""Checks for lesson 01: requires_grad, leaves, and the graph.

Each check is a :class:`~autograder.common.oracle.Spec`: its seed draws caller states
(float32, float64 or bfloat16; strided, sliced, expanded, 0-d or single-element tensors;
zero and large values; Parameters, frozen Parameters, non-leaves and integer tensors; stale, zero
or no ``.grad``; models with BatchNorm arriving in training, evaluation or mixed mode,
with a frozen layer; drawn learning rates, batch sizes and target devices), the
learner's function and a trusted reference run in identical worlds, and everything the
caller can see afterwards is compared. Probes then do what a caller does next: backward
with the returned seed, or look at the model and batch that came back; exercise 1 notes
whether autograd computed the gradients, which hand-written formulas match in value.

This module runs beside learner code (the learner's kernel, the grading sandbox's
observer) and holds no answer: it builds each case's world, calls the learner's function,
records what a caller sees and compares. The references are in
:mod:`autograder.references.lesson01`, which only the judge imports; the learner's
kernel compares with their states shipped in ``autograder/lessons/expected/lesson01.wire``.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_leaves

from autograder.common import trusted
from autograder.common.caller_states import MODES as _MODES
from autograder.common.caller_states import STALE as _STALE
from autograder.common.caller_states import leave_grads, with_callers_context
from autograder.common.exercise import numbered
from autograder.common.i18n import Text
from autograder.common.inputs import laid_out, uniform
from autograder.common.models import tanh_mlp
from autograder.common.oracle import Rule, Spec, World, close, concrete, differs_only_in, draw
from autograder.common.protocol import call, checker
from autograder.common.recorded import TENSORS, cpu_copy
from autograder.kernel.selfcheck import self_checker

_DTYPES = ("float32", "float64", "bfloat16")


def _tensors_in(tree) -> list[torch.Tensor]:
    """Every tensor inside nested arguments or results (lists, tuples, dicts)."""
    return [leaf for leaf in tree_leaves(tree) if trusted.isinstance_(leaf, trusted.tensor_type)]


# Exercise 1 (RG-1) -------------------------------------------------------------------------

_LAYOUTS = {  # name: (description, storage length for n elements, view of the storage)
    "plain": (Text("contiguous", "连续"), lambda n: n, lambda v: v),
    "strided": (Text("v[::2], strided", "v[::2]，有步长"), lambda n: 2 * n, lambda v: v[::2]),
    "slice": (
        Text("v[1:-1], a view into a larger storage", "v[1:-1]，更大存储的视图"),
        lambda n: n + 2,
        lambda v: v[1:-1],
    ),
    "expanded": (
        Text("v[:1].expand(n), one element seen n times", "v[:1].expand(n)，同一个元素出现 n 次"),
        lambda n: n,
        lambda v: v[:1].expand(v.numel()),
    ),
}


_AUTOGRAD = frozenset(("backward", "grad"))  # Tensor.backward, autograd.backward, autograd.grad


class _Autograd(TorchFunctionMode):
    """Notes whether autograd was asked for gradients while the function ran.

    The caller's a and b do not require grad (the task says so), so gradients written
    out by hand (``2 * c * b``) have the values and flags autograd's have: only what
    ran tells them apart.
    """

    def __init__(self):
        super().__init__()
        self.ran = False

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.ran = self.ran or getattr(func, "__name__", "") in _AUTOGRAD
        return func(*args, **(kwargs or {}))


@dataclass(frozen=True)
class ProductGrads(Spec):
    """(a.grad, b.grad, c.grad) of y = ((a * b) ** 2).sum(), the caller's a and b untouched."""

    number = 1
    seed: int = 0
    size: int = 5
    device: str | None = None

    names = {"result": "product_grads(a, b)", "result[2]": "c.grad"}
    probes = {
        "autograd": Text(
            "autograd computed the gradients (y.backward() or torch.autograd.grad was called)",
            "梯度由自动求导算出（调用了 y.backward() 或 torch.autograd.grad）",
        )
    }
    blame = (
        Rule(
            "result[2]",
            lambda e, f, ctx: (
                f.get("kind") == "None" and ctx.found.get("result[0]", {}).get("kind") == "tensor"
            ),
            "RG-1",
        ),
    )

    def cases(self) -> list[dict]:
        axes = {"n": [self.size, 1, self.size + 3], "layout": list(_LAYOUTS), "dtype": _DTYPES}
        drawn = draw(self.seed, axes, 4)
        # any length: empty too; two tensors: the same one twice too (product_grads(a, a))
        edges = [
            {"n": 0, "layout": "plain", "dtype": _DTYPES[self.seed % 3]},
            {"n": self.size, "layout": "plain", "dtype": "float64", "same": True},
            # each its own floating dtype: c = a * b is float64, a.grad float32
            {"n": self.size, "layout": "plain", "dtype": "float32", "b_dtype": "float64"},
            # the caller's default dtype float64: an answer that sets one and "restores"
            # float32 changes it
            {"n": self.size, "layout": "plain", "dtype": "float32", "default_dtype": "float64"},
            # tensors that no longer require grad may still hold the .grad of earlier training
            {"n": self.size, "layout": "plain", "dtype": _DTYPES[self.seed % 3], "held": True},
            # c ** 2 beyond float32's range: y is inf, its gradients 2c are not
            {"n": self.size, "layout": "plain", "dtype": "float32", "scale": 1e10},
        ]
        return [*drawn, *edges]

    def describe(self, case: dict) -> Text:
        shown = Text("a, b of shape ({n},), {l}, {d}", "a、b 的形状为 ({n},)，{l}，{d}").format(
            n=case["n"], l=_LAYOUTS[case["layout"]][0], d=case["dtype"]
        )
        shown = with_callers_context(shown, case)
        if case.get("scale"):
            return Text("{s}, entries near 1e10", "{s}，元素约为 1e10").format(s=shown)
        if case.get("held"):
            return Text(
                "{s}, each holding a .grad from earlier training (frozen since)",
                "{s}，各自还留着之前训练得到的 .grad（之后被冻结）",
            ).format(s=shown)
        if case.get("b_dtype"):
            return Text("{s}, b in {d}", "{s}，b 为 {d}").format(s=shown, d=case["b_dtype"])
        if not case.get("same"):
            return shown
        return Text(
            "{s}, b is a (the same tensor twice)", "{s}，b 就是 a（同一个张量传了两次）"
        ).format(s=shown)

    def build(self, case: dict, device) -> World:
        _, length, view = _LAYOUTS[case["layout"]]
        dtype = getattr(torch, case["dtype"])
        dtypes = (dtype, getattr(torch, case.get("b_dtype", case["dtype"])))
        a, b = (
            view(
                uniform(self.seed + k, length(case["n"]), device=device, dtype=dtypes[k])
                * case.get("scale", 1)
            )
            for k in (0, 1)
        )
        if case.get("same"):
            return World((a, a), {"a": a}, device)
        if case.get("held"):
            leave_grads((a, b), "stale", self.seed + 7, frozen_too=True)
        return World((a, b), {"a": a, "b": b}, device)

    def calling(self, world: World, case: dict, fn):
        world.spy = _Autograd()
        return world.spy

    def probe(self, world: World, value, again) -> dict:
        return {"autograd": world.spy.ran}


check_product_grads = checker(ProductGrads)


# Exercise 2 (RG-2) -------------------------------------------------------------------------

_KINDS = {  # what each input is, and how to make it (k: its position, for its length)
    "param": (Text("a Parameter", "一个 Parameter"), lambda k, d: torch.nn.Parameter(_ones(k, d))),
    "frozen": (
        Text("frozen Parameter", "冻结的 Parameter"),
        lambda k, d: torch.nn.Parameter(_ones(k, d), requires_grad=False),
    ),
    "nonleaf": (Text("non-leaf w * 2", "非叶子张量 w * 2"), lambda k, d: _ones(k, d, True) * 2),
    "view": (Text("view w[1:]", "视图 w[1:]"), lambda k, d: _ones(k + 1, d, True)[1:]),
    "float": (Text("float tensor", "浮点张量"), lambda k, d: _ones(k, d)),
    "int": (Text("int64 tensor", "int64 张量"), lambda k, d: _ones(k, d).long()),
    "scalar": (Text("0-dim tensor", "0 维张量"), lambda k, d: trusted.ones((), device=d)),
    "leaf": (
        Text("leaf made with requires_grad=True", "用 requires_grad=True 创建的叶子张量"),
        lambda k, d: _ones(k, d, True),
    ),
    "scalar_rg": (
        Text("0-dim tensor that requires grad", "需要梯度的 0 维张量"),
        lambda k, d: trusted.ones((), device=d, requires_grad=True),
    ),
    "empty_rg": (
        Text("empty tensor that requires grad", "需要梯度的空张量"),
        lambda k, d: trusted.zeros(0, device=d, requires_grad=True),
    ),
    "empty": (Text("empty tensor", "空张量"), lambda k, d: trusted.zeros(0, device=d)),
    "complex_rg": (
        Text("complex64 leaf that requires grad", "需要梯度的 complex64 叶子张量"),
        lambda k, d: trusted.ones(k + 2, dtype=torch.complex64, device=d, requires_grad=True),
    ),
    "complex": (
        Text("complex64 tensor", "complex64 张量"),
        lambda k, d: trusted.ones(k + 2, dtype=torch.complex64, device=d),
    ),
    "leaf_view": (
        Text(
            "view v[1:] of a tensor that does not require grad, then made to require grad (a leaf)",
            "不需要梯度的张量的视图 v[1:]，随后被设为需要梯度（叶子张量）",
        ),
        lambda k, d: _ones(k + 1, d)[1:].requires_grad_(),
    ),
}
_MANY = 1500  # beyond sys.getrecursionlimit()'s default of 1,000

_FIXED = (
    ("float", "param"),
    ("int",),
    ("frozen", "int"),
    ("nonleaf", "float"),
    ("float", "frozen", "view"),
    ("param",),
    ("scalar", "int", "frozen", "float"),
    ("float", "leaf"),
    ("int", "scalar_rg"),
    ("empty_rg", "float", "frozen"),
    ("float", "param", "int"),  # the one input that requires grad neither first nor last
    ("int", "complex_rg"),  # any dtype: complex tensors require grad too
    ("complex", "float"),  # and those that do not: none of these requires grad
    ("frozen", "leaf_view"),  # a view's flag is its own, not its base's
    ("empty_rg", "empty"),  # both at address 0: inputs told apart by data_ptr() are not
)


def _ones(k: int, device, requires_grad: bool = False) -> torch.Tensor:
    return trusted.ones(k + 2, device=device, requires_grad=requires_grad)


@contextlib.contextmanager
def _inside(outer, spy):
    """The spy inside the caller's context (e.g. its ``torch.no_grad()``)."""
    with outer, spy:
        yield spy


class _GraphFrom(TorchFunctionMode):
    """Notes whether a torch function ran on the watched tensors and recorded a graph (or raised).

    Reading attributes such as ``requires_grad`` calls nothing here, and printing a
    tensor records no graph; running the operation whose result is to be predicted
    does one or the other.
    """

    def __init__(self, watched: list[torch.Tensor]):
        super().__init__()
        self.storages = {int(t.untyped_storage().data_ptr()) for t in watched}
        self.ran = False

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        reads = any(
            int(t.untyped_storage().data_ptr()) in self.storages
            for t in _tensors_in((args, kwargs))
        )
        try:
            out = func(*args, **kwargs)
        except Exception:
            self.ran = self.ran or reads
            raise
        if reads and any(t.grad_fn is not None for t in _tensors_in(out)):
            self.ran = True
        return out


def _plain_input_decided(e: dict, f: dict, ctx) -> bool:
    """A graph is recorded, and the answer let an input that needs no gradient say otherwise.

    Only where every input that requires grad is a Parameter (RG-2 is about parameters that
    require grad beside data that does not): an answer that misses a non-leaf input, or a
    plain tensor made with requires_grad=True (only Parameters counted), makes another
    mistake, not this misconception.
    """
    if ctx.case.get("outer"):  # under the caller's no_grad: grad mode decided, not an input
        return False
    if set(ctx.case.get("inputs", ())) & {
        "leaf",
        "scalar_rg",
        "empty_rg",
        "complex_rg",
        "leaf_view",
    }:
        return False
    inputs = [v for b, v in ctx.before.items() if re.fullmatch(r"inputs\[\d+\]", b)]
    needed = [v for v in inputs if v["requires_grad"]]
    mixed = needed and len(needed) < len(inputs) and not any(v["grad_fn"] for v in needed)
    return bool(mixed) and e.get("value") is True and f.get("value") is False


@dataclass(frozen=True)
class OutputRequiresGrad(Spec):
    """A bool predicted from the inputs' flags alone: any input requires grad."""

    number = 2
    seed: int = 0
    device: str | None = None

    names = {"result": "output_requires_grad(*inputs)"}
    probes = {
        "ran_an_operation": Text(
            "an operation on the inputs was run (predict from their attributes only)",
            "对输入运行了运算（只应根据它们的属性预测）",
        )
    }
    blame = (Rule("result", lambda e, f, ctx: _plain_input_decided(e, f, ctx), "RG-2"),)
    differences_first = True  # an answer that fails on no inputs at all may also break RG-2
    between = Text(
        "turned requires_grad off on its inputs that required grad, which keep a .grad",
        "关闭了它那些需要梯度的输入的 requires_grad，这些输入仍留着 .grad",
    )

    def between_calls(self, world: World, case: dict) -> None:
        """The same tensors, their flags changed: an answer remembered by id is stale, and
        one that takes a .grad left from an earlier backward for "requires grad" is wrong."""
        for t in world.args:
            if t.is_leaf and t.requires_grad:
                t.grad = trusted.ones(t.shape, dtype=t.dtype, device=t.device)
                t.requires_grad_(False)

    def cases(self) -> list[dict]:
        g = trusted.generator().manual_seed(self.seed)
        kinds = list(_KINDS)
        drawn = [
            tuple(kinds[int(i)] for i in trusted.randint(len(kinds), (n,), generator=g))
            for n in (2, 3, 5)
        ]
        # The question is about grad mode on: a caller under no_grad does not change the answer.
        asked = [{"inputs": list(k)} for k in (*_FIXED, *drawn)]
        # "Any number of tensors": none at all too (an operation on no tensor, a factory, does
        # not require grad).
        # and many: more than Python's recursion limit, as a long list unpacked would be
        many = {"inputs": ["scalar"] * _MANY + ["scalar_rg"]}
        return [*asked, {"inputs": []}, {"inputs": ["float", "param"], "outer": "no_grad"}, many]

    def describe(self, case: dict) -> Text:
        if len(case["inputs"]) > _MANY:
            return Text(
                "{n:,} inputs: 0-dim tensors, only the last one requires grad",
                "{n} 个输入：都是 0 维张量，只有最后一个需要梯度",
            ).format(n=len(case["inputs"]))
        parts = [_KINDS[k][0] for k in case["inputs"]]
        inputs = (
            Text("inputs: {t}", "输入：{t}").format(
                t=Text(", ".join(p.en for p in parts), "、".join(p.zh for p in parts))
            )
            if parts
            else Text("no inputs at all", "没有任何输入")
        )
        if not case.get("outer"):
            return inputs
        return Text(
            "{i}; called under the caller's torch.no_grad()",
            "{i}；在调用者的 torch.no_grad() 中调用",
        ).format(i=inputs)

    def build(self, case: dict, device) -> World:
        inputs = [_KINDS[kind][1](k, device) for k, kind in enumerate(case["inputs"])]
        named = dict(enumerate(inputs))
        if len(inputs) > _MANY:  # the first and the last stand for the rest in feedback
            named = {0: inputs[0], len(inputs) - 1: inputs[-1]}
        return World(tuple(inputs), {f"inputs[{k}]": t for k, t in named.items()}, device)

    def calling(self, world: World, case: dict, fn):
        world.spy = _GraphFrom(list(world.args))
        if not case.get("outer"):
            return world.spy
        return _inside(trusted.no_grad(), world.spy)

    def probe(self, world: World, value, again) -> dict:
        return {"ran_an_operation": world.spy.ran}


check_output_requires_grad = checker(OutputRequiresGrad)


# Exercise 3 (RG-3) -------------------------------------------------------------------------

_SHAPES = {"2d": (0, 0), "1d": (0,), "3d": (2, 0, 2), "single": (1, 1), "row": (1, 0)}
_RANGES = {  # large: beyond int8 and float16's exact integers; huge: beyond int32
    "small": 10,
    "large": 70001,
    "huge": 2**40 + 1,
}


def _in_the_callers_default(e: dict, f: dict, ctx) -> bool:
    """Where the caller set float64 as its default, a result in that default dtype with the
    same values is right as well: the prompt asks for the default floating-point dtype."""
    if not ctx.case.get("default_dtype") or f.get("dtype") != "torch.float64":
        return False
    found = f.get("value")
    if trusted.type_(found) not in TENSORS:
        return False
    # the exact integers: float64 holds them all, a pass through float32 rounds them
    exact = trusted.tensor(ctx.fact("values"), dtype=torch.float64)
    same = found.shape == exact.shape and trusted.equal(found.cpu(), exact)
    return same and differs_only_in("dtype", "value")(e, f, ctx)


@dataclass(frozen=True)
class MakeTrainable(Spec):
    """A float32 leaf on the device asked for, with the values, requiring grad (or a
    leaf in the caller's default dtype, where it set float64)."""

    number = 3
    seed: int = 0
    device: str | None = None

    names = {"result": "make_trainable(values, device)"}
    allow = (Rule("result", _in_the_callers_default),)
    probes = {
        "values": Text("the caller's list values after the call", "调用之后调用者的列表 values"),
        "own_tensor": Text(
            "a second call with an equal list returns a tensor of its own (not the first one)",
            "用相等的列表再调用一次，返回的是它自己的张量（不是第一次的那个）",
        ),
        "trains": Text(
            "the result trains: multiplied by a weight of 3s, the gradient it gets (an inference "
            "tensor cannot be saved for backward; a hook of yours would change the gradient)",
            "结果能用于训练：与全为 3 的权重相乘后它得到的梯度（推理张量不能被保存用于反向传播；"
            "你注册的钩子会改变梯度）",
        ),
    }

    def cases(self) -> list[dict]:
        axes = {"shape": list(_SHAPES), "range": list(_RANGES), "target": ["course", "cpu"]}
        cases = draw(self.seed, axes, 5)
        # float32 all the same; integers beyond 2**24 tell a float64 result that passed
        # through float32 from one that holds them exactly
        huge = {**cases[0], "range": "huge", "default_dtype": "float64"}
        return [*cases, huge, {**cases[1], "empty": True}]  # empty: [[], []]

    def describe(self, case: dict) -> Text:
        target = {"course": Text("the inputs' device", "输入所在的设备"), "cpu": "cpu"}
        shown = Text(
            "a list of shape {s}, integers within ±{r}, device: {t}",
            "形状为 {s} 的列表，整数范围 ±{r}，设备：{t}",
        ).format(s=str(self._shape(case)), r=_RANGES[case["range"]] - 1, t=target[case["target"]])
        return with_callers_context(shown, case)

    def _shape(self, case: dict) -> tuple[int, ...]:
        if case.get("empty"):
            return (2, 0)
        g = trusted.generator().manual_seed(self.seed)
        n = int(trusted.randint(2, 6, (1,), generator=g))
        return tuple(k or n for k in _SHAPES[case["shape"]])

    def build(self, case: dict, device) -> World:
        g = trusted.generator().manual_seed(self.seed + 1)
        top = _RANGES[case["range"]]
        values = trusted.randint(-top + 1, top, self._shape(case), generator=g).tolist()
        target = torch.device(device if case["target"] == "course" else "cpu")
        world = World((values, target), {}, target)
        world.values = values
        world.fact("values", values)
        return world

    def probe(self, world: World, value, again) -> dict:
        _, other = again()
        own = not (
            trusted.type_(other) in TENSORS
            and trusted.type_(value) in TENSORS
            and value.numel() > 0  # nothing to share
            and other.untyped_storage().data_ptr() == value.untyped_storage().data_ptr()
        )
        trained = call(lambda: _trains(value))
        return {
            "values": trusted.repr_(world.values)[:2000],
            "own_tensor": own,
            "trains": trained.value if trained.ok else None,
        }

    def classify(self, message: str) -> str | None:
        return "RG-3" if "floating point" in message else None


def _trains(value) -> torch.Tensor:
    """Use the result as a parameter is used: in a product with a weight that requires grad,
    which autograd saves it for (it refuses an inference tensor); its gradient, 3s, passes
    through whatever hook the function left on it."""
    with trusted.inference_mode(False), trusted.set_grad_enabled(True):
        w = trusted.ones(value.shape, dtype=value.dtype, device=value.device).requires_grad_()
        return trusted.autograd_grad((value * w * 3).sum(), (w, value))[1]


check_make_trainable = checker(MakeTrainable)


# Exercise 4 (RG-4) -------------------------------------------------------------------------

_GRADS = {
    "stale": Text("w.grad held an old gradient", "w.grad 里已有旧梯度"),
    "zero": Text("w.grad held zeros", "w.grad 为零"),
    "none": Text("w.grad was None", "w.grad 为 None"),
}
_DIVERGED = Text(
    "w.grad held nan and inf (an earlier step diverged)",
    "w.grad 里有 nan 和 inf（之前某一步发散了）",
)


def _accumulated(e: dict, f: dict, ctx) -> bool:
    """grads[k] is what w.grad holds after k + 1 backward calls that were never reset."""
    k = int(ctx.base.removeprefix("result[").rstrip("]"))
    if f"result[{k}]" not in ctx.expected:  # more entries than batches: not this blame
        return False
    start = ctx.before["w.grad"].get("value")
    running = start.to(torch.float64) if trusted.type_(start) in TENSORS else 0.0
    for j in range(k + 1):
        running = running + ctx.expected[f"result[{j}]"]["value"].to(torch.float64)
    found = f.get("value")
    if trusted.type_(found) not in TENSORS or close(found, e.get("value"), (1e-4, 1e-5)):
        return False
    return close(found, running, (1e-4, 1e-5))


@dataclass(frozen=True)
class PerBatchGrads(Spec):
    """Each entry is the gradient of that batch's loss alone, a copy; w left as it came."""

    number = 4
    seed: int = 0
    batches: int = 3
    dim: int = 4
    dtype: str = "float32"
    device: str | None = None

    names = {"result": "per_batch_grads(w, batches)"}
    allow = (Rule("w.grad"),)  # what w.grad holds afterwards is not part of the task
    blame = (Rule("result[*]", _accumulated, "RG-4"),)

    def cases(self) -> list[dict]:
        other = "float64" if self.dtype == "float32" else "float32"
        axes = {
            "grad": list(_GRADS),
            "count": [self.batches, 1, self.batches + 1],
            "layout": ["plain", "transposed"],
            "dtype": [self.dtype, other],
        }
        drawn = draw(self.seed, axes, 3)
        # a large first batch, then small ones: a gradient recovered by subtracting the
        # running total from w.grad is lost to rounding in float32
        mixed = {**drawn[0], "count": self.batches, "dtype": "float32", "scales": "mixed"}
        # and one column: a batch squeezed "to drop stray dimensions" loses it
        single = {**drawn[1], "dim": 1}
        # a batch of no rows still has its (zero) gradient in the list
        empty = {**drawn[2], "count": self.batches, "empty": 1}
        nothing = {**drawn[1], "count": 0}  # and no batches at all: an empty list of copies
        return [*drawn, {**drawn[0], "grad": "diverged"}, mixed, single, empty, nothing]

    def describe(self, case: dict) -> Text:
        layout = (
            Text(", batches not contiguous", "，批次不连续") if case["layout"] != "plain" else ""
        )
        if case.get("scales"):
            layout = Text(
                "{l}, the first batch's values about 1000 times larger than usual, the others' "
                "about 100 times smaller",
                "{l}，第一个批次的数值约为平常的 1000 倍，其余批次约为平常的百分之一",
            ).format(l=layout)
        if case.get("empty"):
            layout = Text("{l}, batches[1] has no rows", "{l}，batches[1] 没有行").format(l=layout)
        return Text(
            "{g}, {n} batches of {d} columns{l}, {t}", "{g}，{n} 个 {d} 列的批次{l}，{t}"
        ).format(
            g={**_GRADS, "diverged": _DIVERGED}[case["grad"]],
            n=case["count"],
            d=case.get("dim", self.dim),
            l=layout,
            t=case["dtype"],
        )

    def build(self, case: dict, device) -> World:
        dtype, d = getattr(torch, case["dtype"]), case.get("dim", self.dim)
        w = torch.nn.Parameter(uniform(self.seed, d, device=device, dtype=dtype))
        if case["grad"] == "stale":
            w.grad = uniform(self.seed + 5, d, device=device, dtype=dtype)
        elif case["grad"] == "zero":
            w.grad = trusted.zeros(d, device=device, dtype=dtype)
        elif case["grad"] == "diverged":  # 0 * inf is nan: scaling it by zero clears nothing
            w.grad = uniform(self.seed + 5, d, device=device, dtype=dtype)
            w.grad[:2] = float("nan")
            w.grad[-1] = float("inf")
        xs = []
        for k in range(case["count"]):
            # unequal sizes, a single row among them, none where the case says so
            rows = 1 + (3 * k + self.seed) % 5 if case.get("empty") != k else 0
            xs.append(laid_out(self.seed + 10 + k, rows, d, case["layout"], device, dtype))
            if case.get("scales"):
                xs[-1].mul_(1e3 if k == 0 else 1e-2)
        objects = {"w": w, **{f"batches[{k}]": x for k, x in enumerate(xs)}}
        return World((w, xs), objects, device)


check_per_batch_grads = checker(PerBatchGrads)


# Exercise 5 (RG-5) -------------------------------------------------------------------------

_LOSSES = {
    "vector": Text("x of shape (5,)", "x 的形状为 (5,)"),
    "slice": Text("x a view into a larger storage", "x 是更大存储的视图"),
    "scalar": Text("x of shape ()", "x 的形状为 ()"),
}
_SCALES = {1.0: "", 0.0: Text(", x zeros", "，x 全为零"), 1e4: Text(", large x", "，x 很大")}
_EDGE_SCALES = {
    float("inf"): Text(", x infinite (the loss is nan)", "，x 为无穷大（损失为 nan）"),
    1e9: Text(
        ", x about 1e9 (loss + 1 rounds to loss)", "，x 约为 1e9（loss + 1 舍入后仍是 loss）"
    ),
}


def _rg5(e: dict, f: dict, ctx) -> bool:
    """The seed holds one element but is not 0-dim (shape (1,), (1, 1)...)."""
    found = ctx.found.get("result", {})
    return found.get("kind") == "tensor" and found.get("shape") not in ([], None)


_RETAINED = Text(
    "; the caller called loss.retain_grad() and loss.backward(retain_graph=True) before",
    "；调用者之前调用过 loss.retain_grad() 和 loss.backward(retain_graph=True)",
)


@dataclass(frozen=True)
class BackwardSeed(Spec):
    """A seed s for which loss.backward(gradient=s) does what loss.backward() does.

    Autograd converts a 0-dim seed to the loss's dtype and device, so the seed's shape
    and value are compared, not its dtype or device; backward with it must give the
    gradients backward() gives. The function must not run backward itself.
    """

    number = 5
    seed: int = 0
    dtype: str = "float32"
    device: str | None = None

    names = {"result": "backward_seed(loss)", "probe:grad": "x.grad"}
    probes = {
        "grad": Text(
            "x's gradient from loss.backward(gradient=seed)",
            "loss.backward(gradient=seed) 给出的 x 的梯度",
        ),
        "grad_3": Text(
            "x's gradient when the caller then backpropagates a seed of its own (3 times yours)",
            "调用者随后用自己的初始梯度（你返回的 3 倍）反向传播时 x 的梯度",
        ),
        "retains_grad": Text(
            "the caller's loss was made to keep its own .grad (retain_grad)",
            "调用者的 loss 被设成保留它自己的 .grad（retain_grad）",
        ),
        "inference": Text(
            "your seed is an inference tensor (made under torch.inference_mode(): the caller "
            "cannot scale it in place, seed *= 3, outside inference mode)",
            "你返回的初始梯度是推理张量（在 torch.inference_mode() 下创建：调用者不能在推理模式之外"
            "原地放大它）",
        ),
    }
    blame = (Rule("result", _rg5, "RG-5"), Rule("probe:grad", _rg5, "RG-5"))

    def cases(self) -> list[dict]:
        other = "float64" if self.dtype == "float32" else "float32"
        axes = {"dtype": [self.dtype, other, "bfloat16"], "loss": list(_LOSSES)}
        drawn = [
            {**case, "scale": s} for case, s in zip(draw(self.seed, axes, 3), _SCALES, strict=True)
        ]
        edges = [  # a loss that is not a number; one so large that loss + 1 rounds to loss
            {"dtype": self.dtype, "loss": "scalar", "scale": float("inf")},
            {"dtype": "float32", "loss": "vector", "scale": 1e9},
            # a caller that kept loss.grad (retain_grad) through a backward of its own
            {**drawn[0], "retained": True},
            {**drawn[0], "dtype": "float16"},  # a half-precision loss: the seed is still 1
        ]
        return [*drawn, *edges]

    def describe(self, case: dict) -> Text:
        return Text(
            "loss = (x.sin() * x).sum(), {x}{s}, {d}{r}",
            "损失 loss = (x.sin() * x).sum()，{x}{s}，{d}{r}",
        ).format(
            x=_LOSSES[case["loss"]],
            s={**_SCALES, **_EDGE_SCALES}[case["scale"]],
            d=case["dtype"],
            r=_RETAINED if case.get("retained") else "",
        )

    def build(self, case: dict, device) -> World:
        dtype = getattr(torch, case["dtype"])
        shape = {"vector": (5,), "slice": (7,), "scalar": ()}[case["loss"]]
        v = uniform(self.seed, *shape, device=device, dtype=dtype) * case["scale"]
        x = (v[1:-1] if case["loss"] == "slice" else v).requires_grad_()
        loss = (x.sin() * x).sum()
        if case.get("retained"):
            loss.retain_grad()
            loss.backward(retain_graph=True)
        return World((loss,), {"x": x, "loss": loss}, device)

    def compared(self, base: str, fields: dict) -> dict:
        if base != "result" or fields.get("kind") != "tensor":
            return fields
        value = fields["value"]  # any dtype and device autograd converts
        return {"kind": "tensor", "shape": fields["shape"], "value": value.to(torch.float64)}

    def probe(self, world: World, value, again) -> dict:
        loss, x = world.objects["loss"], world.objects["x"]
        done = call(lambda: trusted.autograd_grad(loss, x, value, retain_graph=True)[0])
        # the caller's own seed: a hook left on loss.grad_fn that forces one replaces it
        own = call(lambda: trusted.autograd_grad(loss, x, value * 3, retain_graph=True)[0])
        found = {
            "grad": cpu_copy(done.value) if done.ok else f"{trusted.type_(done.error).__name__}",
            "grad_3": cpu_copy(own.value) if own.ok else f"{trusted.type_(own.error).__name__}",
            "retains_grad": bool(loss.retains_grad),
        }
        # the caller's own seed, to scale in place as it likes
        found["inference"] = trusted.type_(value) in TENSORS and bool(value.is_inference())
        return found


check_backward_seed = checker(BackwardSeed)


# Models for exercises 6 and 7 ----------------------------------------------------------------


def _arrive(model: torch.nn.Module, mode: str, frozen: bool) -> None:
    """The model's state on arrival: its modes, and model[0].weight frozen or not."""
    model.train(mode == "train")
    if mode == "mixed":
        for m in list(model.children())[1::3]:  # the BatchNorm layers train
            m.train()
    model[0].weight.requires_grad_(not frozen)


# Exercise 6 (RG-6) -------------------------------------------------------------------------


def _length(case: dict) -> int:
    """len(model) in a FinetuneLastLayer case: depth blocks, the last without its Tanh on a
    "norm" tail, then the last Linear."""
    return case["depth"] * 3 - 2 - (case["tail"] == "norm" and case["depth"] > 1)


def _froze_elsewhere(e: dict, f: dict, ctx) -> bool:
    """No parameter's flag changed, but something else did: frozen the batch, or a mode."""
    last = f"model[{_length(ctx.case) - 1}]"
    params = [b for b in ctx.before if b.startswith("model[") and b.endswith((".weight", ".bias"))]
    params = [b for b in params if not b.startswith(last) and b in ctx.found]
    if any(ctx.found[b]["requires_grad"] != ctx.before[b]["requires_grad"] for b in params):
        return False
    changed = any(not close(ctx.found[b]["value"], ctx.before[b]["value"]) for b in params)
    modes = [b for b, v in ctx.before.items() if "training" in v]
    return changed or any(ctx.found.get(b) != ctx.before[b] for b in modes)


@dataclass(frozen=True)
class FinetuneLastLayer(Spec):
    """Every parameter but the last layer's frozen; one SGD step of the last layer."""

    number = 6
    seed: int = 0
    lr: float = 0.1
    depth: int = 2
    device: str | None = None

    names = {"result": "finetune_last_layer(model, x, target, lr)"}
    allow = (Rule("model*.grad"),)  # what .grad holds afterwards is not part of the task
    blame = (Rule("model*", _froze_elsewhere, "RG-6"),)
    between = Text(
        "unfroze every parameter and passed a learning rate three times as large",
        "把所有参数重新设为需要梯度，并传入了三倍大的学习率",
    )

    def between_calls(self, world: World, case: dict) -> None:
        """The caller trains the whole model for a while, then fine-tunes again: a model
        frozen once (remembered by id) or an optimizer kept from the first call is stale."""
        model, x, target, lr = world.args
        model.requires_grad_(True)
        world.args = (model, x, target, lr * 3)

    def cases(self) -> list[dict]:
        axes = {
            "depth": [self.depth, self.depth + 1],
            "mode": list(_MODES),
            "stale": list(_STALE),
            "frozen": [False, True],
            "lr": [self.lr, self.lr / 2, self.lr * 1.5],
            "batch": [6, 2, 9],
            "dtype": ["float64", "float32"],
            "x": ["plain", "transposed"],
            # no Tanh before the last Linear: model[-2] is a BatchNorm with parameters
            "tail": ["tanh", "norm", "tanh"],
            "last_bias": [True, False, True],  # nn.Linear(..., bias=False) is a last Linear too
            # targets far from the outputs: gradients whose norm is well above 1 (a step of
            # clipped gradients differs)
            "target_scale": [1.0, 8.0],
        }
        return draw(self.seed, axes, 3)

    def describe(self, case: dict) -> Text:
        frozen = Text(", model[0].weight frozen", "，model[0].weight 已冻结")
        tail = Text(", model[-2] a BatchNorm1d", "，model[-2] 是 BatchNorm1d")
        no_bias = Text(", model[-1] without bias", "，model[-1] 没有偏置")
        return Text(
            "len(model)={n}, {m}, {s}{f}{e}{nb}, lr={lr:g}, batch {b}, {t}",
            "len(model)={n}，{m}，{s}{f}{e}{nb}，lr={lr:g}，批次大小 {b}，{t}",
        ).format(
            n=_length(case),
            e=tail if case["tail"] == "norm" and case["depth"] > 1 else "",
            nb="" if case.get("last_bias", True) else no_bias,
            m=_MODES[case["mode"]],
            s=_STALE[case["stale"]],
            f=frozen if case["frozen"] else "",
            lr=case["lr"],
            b=case["batch"],
            t=case["dtype"],
        )

    def build(self, case: dict, device) -> World:
        dtype = getattr(torch, case["dtype"])
        model = tanh_mlp(
            self.seed,
            case["depth"],
            dtype,
            device,
            last_tanh=case["tail"] == "tanh",
            last_bias=case.get("last_bias", True),
        )
        _arrive(model, case["mode"], case["frozen"])
        for k, p in enumerate(model.parameters()):
            if case["stale"] == "stale":
                p.grad = uniform(self.seed + 20 + k, *p.shape, device=device, dtype=dtype)
            elif case["stale"] == "zero":
                p.grad = trusted.zeros(p.shape, device=device, dtype=dtype)
        n = case["batch"]
        x = laid_out(self.seed + 1, n, 4, case["x"], device, dtype)
        target = uniform(self.seed + 2, n, 3, device=device, dtype=dtype)
        target = target * case.get("target_scale", 1.0)
        world = World(
            (model, x, target, case["lr"]), {"model": model, "x": x, "target": target}, device
        )
        return world


check_finetune_last_layer = checker(FinetuneLastLayer)


# Exercise 7 (RG-7) -------------------------------------------------------------------------

_CONVERSIONS = frozenset("to cuda cpu double float half bfloat16 type".split())


class _Conversions(TorchFunctionMode):
    """Keeps every tensor a conversion method (``.to``, ``.double``...) made from one tensor,
    and which of them a later conversion took as its input (``batch.double().to(device)``:
    the float64 copy is used, not dropped, although a GPU moves it into a new tensor)."""

    def __init__(self, watched: torch.Tensor):
        super().__init__()
        self.watched = watched
        self.results: list[torch.Tensor] = []
        self.chained: list[torch.Tensor] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if getattr(func, "__name__", "") not in _CONVERSIONS or not args:
            return out
        if args[0] is self.watched and trusted.isinstance_(out, trusted.tensor_type):
            self.results.append(out)
        elif any(args[0] is r for r in self.results):
            self.chained.append(args[0])
        return out

    def dropped(self, *kept) -> bool:
        """A copy of the watched tensor made, then neither kept nor converted further."""
        used = [*kept, self.watched, *self.chained]
        return any(not any(r is u for u in used) for r in self.results)


class _Scaled(torch.nn.Module):
    """Layers with a parameter and a buffer of the module's own: moving each child misses them."""

    def __init__(self, layers: torch.nn.Module, scale: torch.Tensor) -> None:
        super().__init__()
        self.layers = layers
        self.scale = torch.nn.Parameter(scale)
        self.register_buffer("shift", scale.detach() / 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x) * self.scale + self.shift


def _dropped(e: dict, f: dict, ctx) -> bool:
    return ctx.found.get("probe", {}).get("dropped_copy") is True


def _as_before(e: dict, f: dict, ctx) -> bool:
    """The caller's model may be moved in place (as .to does) or left as it was (a copy moved)."""
    before = ctx.spec.compared(ctx.base, ctx.before.get(ctx.base, {}))
    return ctx.spec._first_difference(before, f) is None


_MODEL_IS = {  # what else a ToDevice case's model is, said after the case
    "mixed": Text("; model[0] already in {td}, the rest not", "；model[0] 已是 {td}，其余不是"),
    "own": Text(
        "; the model a module with a parameter and a buffer of its own around its layers",
        "；模型是一个包着各层、自己还带一个参数和一个缓冲区的模块",
    ),
    "grads": Text(
        "; every trainable parameter holds a .grad from a backward",
        "；每个可训练参数都带着一次反向传播留下的 .grad",
    ),
    "bare": Text(
        "; the model BatchNorm1d(4, affine=False): buffers, no parameter; the batch int64",
        "；模型是 BatchNorm1d(4, affine=False)：有缓冲区，没有参数；批次是 int64",
    ),
}


@dataclass(frozen=True)
class ToDevice(Spec):
    """The batch and the model come back on the device and in the dtype asked for.

    Devices are compared by where they are meant to be (the target, or where the
    inputs started), so that a GPU machine's observation and the CPU judge agree.
    """

    number = 7
    seed: int = 0
    dtype: str = "float64"
    device: str | None = None

    names = {"result": "to_device(batch, model, device, dtype)", "result[0]": "batch"}
    between = Text(
        "converted the model back to the dtype it arrived in",
        "把模型的 dtype 改回它传进来时的那一种",
    )
    allow = (
        Rule("result[0]", differs_only_in("is", "shares")),  # a copy where no move is needed
        Rule("model*", _as_before),
    )
    blame = (Rule("*", _dropped, "RG-7"),)

    def cases(self) -> list[dict]:
        start = "float64" if self.dtype == "float32" else "float32"
        third = "float32" if self.dtype == "float64" else "float64"
        moves = [
            ("cpu", start, "course", self.dtype),
            ("course", "float64", "cpu", "float32"),
            ("course", self.dtype, "course", third),
            ("cpu", "float64", "course", "float64"),  # the dtype already right: no rounding
        ]
        axes = {"mode": list(_MODES), "frozen": [False, True], "layout": ["plain", "transposed"]}
        drawn = [
            {**case, "from": f, "from_dtype": fd, "to": t, "to_dtype": td}
            for case, (f, fd, t, td) in zip(draw(self.seed, axes, len(moves)), moves, strict=True)
        ]
        # any nn.Module: one whose first layer is already in the dtype asked for, the rest not
        mixed = {"mode": "train", "frozen": False, "layout": "plain", "mixed": True}
        # and a module with a parameter and a buffer of its own, beside its children
        own = {**drawn[0], "own": True}
        # "a dtype": half precision too, as the hidden tests ask for
        half = [
            {**drawn[1], "from": "course", "from_dtype": "float32", "to": "course", "to_dtype": h}
            for h in ("float16", "bfloat16")
        ]
        return [
            *drawn,
            *half,
            {
                **mixed,
                "from": "course",
                "from_dtype": start,
                "to": "course",
                "to_dtype": self.dtype,
            },
            own,
            # a model partway through training: its .grad move with it, as PyTorch's .to moves them
            {**drawn[0], "grads": True},
            {**drawn[2], "mode": "train", "frozen": False, "layout": "plain", "bare": True},
        ]

    def describe(self, case: dict) -> Text:
        where = {"cpu": "cpu", "course": Text("the course device", "课程设备")}
        extra = next((t for k, t in _MODEL_IS.items() if case.get(k)), "")
        return Text(
            "from {f}, {fd} to {t}, {td}; model in {m}{z}{x}",
            "从 {f}、{fd} 到 {t}、{td}；模型处于{m}{z}{x}",
        ).format(
            f=where[case["from"]],
            fd=case["from_dtype"],
            t=where[case["to"]],
            td=case["to_dtype"],
            m=_MODES[case["mode"]],
            z=Text(", model[0].weight frozen", "，model[0].weight 已冻结")
            if case["frozen"]
            else "",
            x=extra.format(td=case["to_dtype"]),
        )

    def build(self, case: dict, device) -> World:
        start = torch.device(device if case["from"] == "course" else "cpu")
        target = torch.device(device if case["to"] == "course" else "cpu")
        dtype = getattr(torch, case["from_dtype"])
        batch = laid_out(self.seed, 3, 4, case["layout"], start, dtype)
        model = tanh_mlp(self.seed, 2, dtype, start)
        _arrive(model, case["mode"], case["frozen"])
        if case.get("grads"):
            leave_grads(model.parameters(), "stale", self.seed + 50)
        if case.get("own"):
            model = _Scaled(model, uniform(self.seed + 3, 3, device=start, dtype=dtype))
        if case.get("bare"):  # no parameter to take a device or a dtype from; token ids
            model = torch.nn.BatchNorm1d(4, affine=False, device=start, dtype=dtype)
            batch = (batch * 9).long()
        if case.get("mixed"):
            model[0].to(target, getattr(torch, case["to_dtype"]))
            # the device as a tensor reports it (cuda:0, not cuda): a comparison with the
            # first parameter's device then says "already there" on a GPU too
            target = concrete(target)
        world = World(
            (batch, model, target, getattr(torch, case["to_dtype"])),
            {"batch": batch, "model": model},
            start,
        )
        world.target = concrete(target)
        return world

    def between_calls(self, world: World, case: dict) -> None:
        """The caller converts the model back: a model remembered as moved is not."""
        world.args[1].to(getattr(torch, case["from_dtype"]))

    def compared(self, base: str, fields: dict) -> dict:
        return {k: v for k, v in fields.items() if k != "device"}  # see the probes

    def calling(self, world: World, case: dict, fn):
        world.spy = _Conversions(world.args[0])
        return world.spy

    def probe(self, world: World, value, again) -> dict:
        def where(t: torch.Tensor) -> str:
            return "device" if t.device == world.target else "batch.device"  # asked for / before

        pair = trusted.type_(value) is tuple and trusted.len_(value) == 2
        moved = value[0] if pair else None
        found = {"dropped_copy": world.spy.dropped(moved)}
        if trusted.type_(moved) in TENSORS:
            found["batch_device"] = where(moved)
        model = value[1] if pair else None
        if not trusted.isinstance_(model, trusted.module_type):
            return found
        tensors = [*model.named_parameters(), *model.named_buffers()]
        for name, t in tensors:
            found[f"model.{name}"] = cpu_copy(t)
            found[f"model.{name} dtype"] = str(t.dtype)
            found[f"model.{name} requires_grad"] = bool(t.requires_grad)
        found["model devices"] = ", ".join(sorted({where(t) for _, t in tensors}))
        found["model modes"] = [bool(m.training) for m in model.modules()]
        return found

    def probe_text(self, name: str) -> Text:
        if name == "dropped_copy":
            return Text(
                "a converted copy of the batch was made and dropped", "转换后的批次副本被丢弃了"
            )
        if name == "batch_device":
            return Text("the returned batch's device", "返回的批次所在的设备")
        if name == "model devices":
            return Text(
                "the returned model: where its tensors are", "返回的模型：它的张量所在的位置"
            )
        if name == "model modes":
            return Text(
                "the returned model: m.training of each module m",
                "返回的模型：每个模块 m 的 m.training",
            )
        return Text("the returned model: {n}", "返回的模型：{n}").format(n=name.replace(" ", "."))


check_to_device = checker(ToDevice)


EXERCISES = numbered(
    globals(),
    ("product_grads", "gradients of a product", "乘积的梯度", "RG-1"),
    ("output_requires_grad", "the propagation rule", "传播规则", "RG-2"),
    ("make_trainable", "a trainable tensor from integers", "由整数构造可训练张量", "RG-3"),
    ("per_batch_grads", "one gradient per batch", "每个批次的梯度", "RG-4"),
    ("backward_seed", "the seed of backward()", "backward() 的初始梯度", "RG-5"),
    ("finetune_last_layer", "fine-tune the last layer only", "只微调最后一层", "RG-6"),
    ("to_device", "move a batch and a model", "移动批次和模型", "RG-7"),
)

self_check = self_checker(EXERCISES)
