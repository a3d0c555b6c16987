"""Checks for lesson 07: custom autograd Functions.

Each check is a :class:`~autograder.common.oracle.Spec`: its seed draws caller states
(contiguous, transposed, sliced, 0-d or single-row inputs; float64, float32 or
bfloat16; leaves with a stale or no ``.grad``, non-leaves, inputs that need no
gradient; large magnitudes, exact ties; the float argument itself), the learner's
function and the reference run in identical worlds, and everything a caller sees
afterwards is compared. Probes then do what a caller of a Function does next: backward
with a random incoming gradient, and backward after an input or the output was changed
in place.

This module runs beside learner code (the learner's kernel, the grading sandbox's
observer): it builds the cases and their inputs (the Functions exercise 3 checks are
inputs), calls the learner's function and compares; it holds no answer. The reference
Functions live in ``autograder.references.lesson07``, with the judge only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

import torch
import torch.nn.functional as F

from autograder.common import trusted
from autograder.common.caller_states import with_callers_context
from autograder.common.exercise import numbered
from autograder.common.i18n import Text
from autograder.common.inputs import uniform
from autograder.common.oracle import TOLERANCE, Rule, Spec, World, close, draw
from autograder.common.protocol import call, checker
from autograder.common.recorded import TENSORS, cpu_copy
from autograder.kernel.selfcheck import self_checker

_LEGACY = ("Legacy autograd function", "Backward' object has no attribute")
_NO_TRANSFORMS = ("must override the setup_context staticmethod", "does not have vmap support")


def classify(message: str) -> str | None:
    """The misconception a PyTorch error message is evidence of."""
    if any(sign in message for sign in _LEGACY):
        return "CF-1"
    if any(sign in message for sign in _NO_TRANSFORMS):  # the ctx style under torch.func
        return "CF-5"
    counts = re.search(r"incorrect number of gradients \(expected (\d+), got (\d+)\)", message)
    if counts and int(counts[2]) < int(counts[1]):  # fewer than the inputs: one per output
        return "CF-2"
    return None


def explain(message: str) -> Text | None:
    """One line on what the quoted PyTorch error means, in the learner's language."""
    kind = classify(message)
    if kind == "CF-1":
        return Text(
            "the legacy style (an instance, a non-static forward) no longer runs: make forward"
            " and backward @staticmethod and call YourFunction.apply(...)",
            "旧式写法（创建实例、非静态的 forward）已经不能运行：把 forward 和 backward 写成"
            " @staticmethod，并调用 YourFunction.apply(...)",
        )
    if kind == "CF-5":
        return Text(
            "torch.func transforms need forward without ctx plus setup_context(ctx, inputs,"
            " output), and vmap needs generate_vmap_rule = True (or a vmap staticmethod)",
            "torch.func 的变换需要不带 ctx 的 forward 加上 setup_context(ctx, inputs, output)；"
            "vmap 还需要 generate_vmap_rule = True（或者一个 vmap 静态方法）",
        )
    if "Jacobian mismatch" in message:
        return Text(
            "gradcheck raises when the gradients differ; raise_exception=False makes it return"
            " False instead",
            "梯度不一致时 gradcheck 会抛出异常；传入 raise_exception=False 则改为返回 False",
        )
    return None


# Caller states -------------------------------------------------------------------------------

_LAYOUTS = {  # name: (description, storage shape for n columns and r rows, x from storage)
    "vector": (Text("of shape (n,)", "形状为 (n,)"), lambda n, r: (n * r,), lambda v: v),
    "matrix": (Text("of shape (r, n)", "形状为 (r, n)"), lambda n, r: (r, n), lambda v: v),
    "transposed": (
        Text("v.t(), not contiguous", "v.t()，不连续"),
        lambda n, r: (n, r),
        lambda v: v.t(),
    ),
    "slice": (
        Text("v[1:-1], a view into a larger storage", "v[1:-1]，更大存储的视图"),
        lambda n, r: (r + 2, n),
        lambda v: v[1:-1],
    ),
    "scalar": (Text("of shape ()", "形状为 ()"), lambda n, r: (), lambda v: v),
    "row": (Text("a single row (1, n)", "单行 (1, n)"), lambda n, r: (1, n), lambda v: v),
    # drawn only where the prompt says "any shape" (exercise 1): no element at all
    "empty": (
        Text("of shape (0, n), empty", "形状为 (0, n)，空张量"),
        lambda n, r: (0, n),
        lambda v: v,
    ),
    # exercise 3's x for a function of the last dimension: a copy flattened is another input
    "pairs": (
        Text("of shape (n, 2), pairs along the last dimension", "形状为 (n, 2)，最后一维两两成对"),
        lambda n, r: (n, 2),
        lambda v: v,
    ),
}
_DRAWN = [name for name in _LAYOUTS if name not in ("empty", "pairs")]  # every axis of layouts
_GRAD_STATES = {
    "stale": Text("a leaf with a stale .grad", "带残留 .grad 的叶子张量"),
    "fresh": Text("a leaf, .grad None", "叶子张量，.grad 为 None"),
    "nonleaf": Text("not a leaf (w * 1)", "非叶子张量（w * 1）"),
    "frozen": Text("requires_grad=False", "不需要梯度（requires_grad=False）"),
}


def _ties(v: torch.Tensor, step: float) -> torch.Tensor:
    """Values near ``v`` whose quotient by ``step``, divided in their dtype, is exactly
    k + 0.5. Where ``step`` is not a power of two, (k + 0.5)·step rounded is not always one,
    and the nearest of its neighbours a few ulps away is: there ``x * (1 / step)``, which
    rounds twice, may fall off the tie and round the other way."""
    target = torch.floor(v / step) + 0.5
    near = target * step
    ties, tied = near.clone(), (near / step) == target
    up, down = near, near
    for _ in range(4):
        up, down = torch.nextafter(up, up + 1), torch.nextafter(down, down - 1)
        for found in (up, down):
            hit = ~tied & ((found / step) == target)
            ties, tied = torch.where(hit, found, ties), tied | hit
    return ties


def _input(seed: int, name: str, case: dict, grad: str, size: tuple[int, int], device):
    """One caller tensor ``name`` (and its leaf ``w_name`` when it is not a leaf itself)."""
    dtype = getattr(torch, case["dtype"])
    _, shape, view = _LAYOUTS[case["layout"]]
    v = uniform(seed, *shape(*size), device=device, dtype=dtype) * case.get("scale", 1.0)
    if case.get("ties"):  # x / step exactly k + 0.5: round() meets ties
        v = _ties(v, case["arg"])
    if case.get("zero"):  # an entry exactly 0: a backward that divides by x shows there
        v.reshape(-1)[0] = 0
    if "value" in case:  # every entry this value (exp(-x) overflows a Python float at -800)
        v = torch.full_like(v, case["value"])
    if grad == "nonleaf":
        w = v.requires_grad_()
        x = view(w * 1)
        return x, {name: x, f"w_{name}": w}
    x = view(v)
    if grad != "frozen":
        x.requires_grad_()
    if grad == "stale":
        x.grad = uniform(seed + 7, *x.shape, device=device, dtype=dtype)
    return x, {name: x}


def _grad_mark(t: torch.Tensor) -> tuple:
    """A tensor's ``.grad`` as it is now: which object, and its version (changed in place)."""
    grad = t.grad
    return (None,) if grad is None else (id(grad), grad._version)


def _error(error: BaseException) -> str:
    lines = str(error).splitlines()
    return f"{trusted.type_(error).__name__}: {lines[0] if lines else ''}"[:300]


def _backward(out, inputs: list, g) -> torch.Tensor | str | None:
    """Every gradient of ``out`` (weighted by ``g``) for ``inputs``, flattened into one tensor.

    None where nothing requires grad; the error's first line where backward raised.
    """
    wanted = [t for t in inputs if t.requires_grad]
    if trusted.type_(out) not in TENSORS or not out.requires_grad or not wanted:
        return None
    # twice through one graph, as gradcheck does: a backward that spends what it saved (a
    # saved tensor written in place, an attribute deleted) fails the second time
    call(lambda: trusted.autograd_grad(out, wanted, g, allow_unused=True, retain_graph=True))
    done = call(lambda: trusted.autograd_grad(out, wanted, g, allow_unused=True))
    if not done.ok:
        return _error(done.error)
    if any(trusted.type_(d) not in TENSORS for d in done.value):
        return "None"
    return torch.cat([cpu_copy(d).reshape(-1) for d in done.value])


def _raised_or_grads(again, change: str, inputs: list[str]):
    """Backward after ``change`` ('out' or a caller tensor) was changed in place after forward.

    True where backward raised; else the gradients it gave.
    """
    world, out = again()
    if trusted.type_(out) not in TENSORS:
        return None
    with trusted.no_grad():
        (out if change == "out" else world.objects[change]).add_(1.0)
    found = _backward(out, [world.objects[k] for k in inputs], world.g)
    return True if trusted.type_(found) is str else found


def _as_before(f: dict, ctx) -> bool:
    """A probe after an in-place change found what backward gave without it (or it is moot).

    Whether that gradient is right is judged by the 'grads' probe; here only the change counts.
    """
    plain = ctx.found.get("probe", {}).get("grads")
    if trusted.type_(plain) not in TENSORS:
        return True  # no gradient without the change either: reported on its own
    return close(f.get("value"), plain, TOLERANCE.get(str(plain.dtype), (0.0, 0.0)))


def _error_ids() -> tuple[Rule, ...]:
    """A probe that found an error message: the misconception the message is evidence of."""

    def rule(kind: str) -> Rule:
        def when(e: dict, f: dict, ctx) -> bool:
            return trusted.type_(f.get("value")) is str and classify(f["value"]) == kind

        return Rule("probe:*", when, kind)

    return (rule("CF-1"), rule("CF-2"), rule("CF-5"))


def _custom(out) -> bool:
    """Whether a returned tensor was made by a custom autograd.Function (its node's class)."""
    return trusted.type_(out) in TENSORS and trusted.isinstance_(
        out.grad_fn, trusted.function_node_type
    )


_PROBES = {
    "custom": Text(
        "the result comes out of your autograd.Function, called through .apply (§1)",
        "结果由你的 autograd.Function 通过 .apply 产生（§1）",
    ),
    "grads": Text(
        "the gradients backward gives for a random incoming gradient, against what the"
        " exercise states (§2: one value per input; §3 shows how gradcheck finds a wrong"
        " backward)",
        "对随机的传入梯度，backward 给出的梯度，与题目的要求相比"
        "（§2：每个输入一个值；§3 演示 gradcheck 怎样找出错误的 backward）",
    ),
    "written": Text(
        "inputs whose .grad the backward wrote itself (backward returns gradients; autograd"
        " decides where they go)",
        "backward 自己写入了 .grad 的输入（backward 只返回梯度，梯度去哪里由自动求导决定）",
    ),
    "grad_out": Text(
        "the incoming gradient after backward (a backward must not change it in place)",
        "反向传播之后传入的梯度（backward 不能原地修改它）",
    ),
    "on_the_grid": Text(
        "every value of the result is a multiple of step, rounded once to x's dtype (the"
        " value is torch.round(x / step) * step)",
        "结果的每个值都是 step 的整数倍，且只按 x 的 dtype 舍入一次"
        "（值就是 torch.round(x / step) * step）",
    ),
    "interleaved": Text(
        "the gradients of a first call whose backward runs after a second call on other"
        " inputs (what backward needs belongs in that call's ctx, not on the Function class)",
        "第一次调用的梯度，其反向传播在对另一组输入的第二次调用之后才运行"
        "（backward 需要的东西应存进那次调用的 ctx，而不是 Function 类上）",
    ),
}

_CHANGED = {"out": Text("the result", "结果")}


def _changed(what: str) -> Text:
    return Text(
        "backward after {w} was changed in place after forward: it raises (True) or gives"
        " the gradients from forward's values",
        "forward 之后原地修改{w}，再反向传播：报错（True），或仍用前向传播时的值算出梯度",
    ).format(w=_CHANGED.get(what, f" {what} "))


@dataclass(frozen=True)
class _FunctionSpec(Spec):
    """A check of a function built on a custom Function, over drawn caller states.

    Subclasses declare the dataclass fields (seed, sizes, dtype, device, the setting).
    """

    inputs = ("x",)  # the caller tensors the learner's function receives, in order
    custom = True  # the result must come out of a custom Function
    changes: ClassVar[
        tuple[str, ...]
    ] = ()  # what probes change in place after forward ('out': result)

    def calling(self, world: World, case: dict, fn):
        return trusted.set_grad_enabled(case.get("grad_mode", True))

    def explain(self, message: str) -> Text | None:
        return explain(message)

    def classify(self, message: str) -> str | None:
        return classify(message)

    def probe_text(self, name: str) -> Text:
        if name in self.changes:
            return _changed(name)
        return _PROBES.get(name) or super().probe_text(name)

    def _dtypes(self) -> list[str]:
        return [self.dtype, "float32" if self.dtype == "float64" else "float64", "bfloat16"]

    def expanded(self, case: dict) -> dict:
        """``case`` with a matrix x whose incoming gradient is expanded from one row (stride
        0), as autograd hands backward after a sum or a broadcast downstream: a backward that
        views ``grad_out`` (``view(-1)``) or writes into it fails there."""
        fresh = {k: "fresh" for k in ("grad", *(f"{n}_grad" for n in self.inputs)) if k in case}
        return {**case, **fresh, "layout": "matrix", "g": "expanded", "grad_mode": True}

    def _size(self) -> tuple[int, int]:
        """Columns and rows of the caller's tensors."""
        return self.size, 3

    def arguments(self, case: dict) -> tuple:
        """What follows the tensors in the learner's call (a float setting)."""
        return ()

    def build(self, case: dict, device) -> World:
        args, objects = [], {}
        seed = self.seed + 1000 * case.get("other", 0)
        size = (self._size()[0], case.get("rows", self._size()[1]))  # a case may want more
        for k, name in enumerate(self.inputs):
            grad = case.get(f"{name}_grad", case.get("grad"))
            t, made = _input(seed + 10 * k, name, case, grad, size, device)
            args.append(t)
            objects.update(made)
        if case.get("same"):  # one tensor for every argument, mul(a, a)
            args, objects = [args[0]] * len(args), {n: args[0] for n in self.inputs}
        world = World((*args, *self.arguments(case)), objects, device)
        dtype = getattr(torch, case["dtype"])
        # the gradient from upstream, in (-3, 3) in float32 and float64 (a backward that clips
        # it to [-1, 1] shows), in (-1, 1) where half precision's rounding is the tolerance's
        k = 3 if dtype.itemsize > 2 else 1
        world.g = uniform(seed + 5, *args[0].shape, device=device, dtype=dtype) * k
        if case.get("g") == "expanded":  # one row for every row, as y.sum(0) upstream gives
            row = uniform(seed + 5, args[0].shape[-1], device=device, dtype=dtype) * k
            world.g = row.expand(args[0].shape)
        return world

    def probe(self, world: World, value, again) -> dict:
        if trusted.type_(value) not in TENSORS:
            return {}
        found: dict = {"custom": _custom(value)} if self.custom else {}
        found["interleaved"] = self._interleaved(world.case, again)
        g_before = cpu_copy(world.g)
        inputs = [world.objects[k] for k in self.inputs]
        marks = [_grad_mark(t) for t in inputs]
        found["grads"] = _backward(value, inputs, world.g)
        written = zip(self.inputs, inputs, marks, strict=True)
        found["written"] = ", ".join(k for k, t, mark in written if _grad_mark(t) != mark)
        found["grad_out"] = bool(trusted.equal(cpu_copy(world.g), g_before))
        for change in self.changes:
            found[change] = _raised_or_grads(again, change, list(self.inputs))
        return found

    def _interleaved(self, case: dict, again):
        """Two calls, then the first one's backward: the second call has other inputs (each
        one's requires_grad flipped, another setting), so state kept on the class shows."""
        world, first = again()
        if trusted.type_(first) not in TENSORS:
            return None
        other = {**case, "other": 1}
        for name in self.inputs:  # each input's requires_grad the other way round
            key = f"{name}_grad" if f"{name}_grad" in case else "grad"
            if key in case:
                other[key] = "fresh" if case[key] == "frozen" else "frozen"
        if "arg" in case:
            other["arg"] = case["arg"] * 2
        again(other)
        return _backward(first, [world.objects[k] for k in self.inputs], world.g)

    def describe(self, case: dict) -> Text:
        layout = _LAYOUTS[case["layout"]][0]
        parts = [(case["dtype"], case["dtype"]), (f"x {layout.en}", f"x {layout.zh}")]
        for name in self.inputs:
            grad = _GRAD_STATES[case.get(f"{name}_grad", case.get("grad"))]
            parts.append((f"{name}: {grad.en}", f"{name}：{grad.zh}"))
        if case.get("scale", 1.0) > 10:
            parts.append(("large magnitudes", "数值很大"))
        if case.get("ties"):
            parts.append(
                ("ties: x / step exactly k + 0.5", "恰好在中点：x / step 正好等于 k + 0.5")
            )
        if case.get("zero"):
            parts.append(("an entry exactly 0", "有一个元素恰好为 0"))
        if case.get("same"):
            parts.append(("b is a (the same tensor twice)", "b 就是 a（同一个张量传了两次）"))
        if "value" in case:
            parts.append((f"every entry {case['value']:g}", f"每个元素都是 {case['value']:g}"))
        if not case.get("grad_mode", True):
            parts.append(("under torch.no_grad()", "在 torch.no_grad() 下"))
        if case.get("g") == "expanded":
            parts.append(
                (
                    "the incoming gradient one row expanded to every row (stride 0)",
                    "传入的梯度是一行扩展到所有行（步长为 0）",
                )
            )
        if "arg" in case:
            parts.append((f"{self.setting}={case['arg']:g}",) * 2)
        return Text(", ".join(p[0] for p in parts), "，".join(p[1] for p in parts))


# Exercise 1 (CF-1): SiLU as a Function -------------------------------------------------------


@dataclass(frozen=True)
class SiluFunction(_FunctionSpec):
    """silu(x) = x·sigmoid(x) through a custom Function: value and gradient, any caller state."""

    number = 1
    seed: int = 0
    size: int = 4
    dtype: str = "float64"
    device: str | None = None

    names = {"result": "silu(x)", "probe:grads": "∂L/∂x"}
    blame = _error_ids()

    def cases(self) -> list[dict]:
        axes = {
            "layout": list(_DRAWN),
            "dtype": self._dtypes(),
            "grad": ["stale", "nonleaf", "fresh", "frozen"],
            "scale": [3.0, 3.0, 100.0],
            "zero": [False, True],
        }
        # "any shape, dtype and device": also half precision where exp(|x|) overflows (a
        # derivative written as e / (1 + e)² is nan there), and an empty x
        edges = [
            {"layout": "matrix", "dtype": "float16", "grad": "fresh", "scale": 16.0},
            {"layout": "empty", "dtype": self.dtype, "grad": "fresh", "scale": 1.0},
            # bfloat16 at large |x| (most entries past 512): 1 + x rounds to x there, so a
            # derivative multiplied out, (1 + x)·s − x·s², loses the 1
            {"layout": "matrix", "dtype": "bfloat16", "grad": "fresh", "scale": 3000.0},
            # float64 at 10.5, where the slope is 1 + 3e-4, not 1
            {"layout": "matrix", "dtype": "float64", "grad": "fresh", "value": 10.5},
            # called where the caller records nothing: the grad mode it is left in
            {
                "layout": "matrix",
                "dtype": self.dtype,
                "grad": "fresh",
                "scale": 3.0,
                "grad_mode": False,
            },
        ]
        drawn = draw(self.seed, axes, 6)
        # a 0-d x far below zero: sigmoid underflows to 0, exp(-x) overflows a Python float
        far = {"layout": "scalar", "dtype": self.dtype, "grad": "fresh", "value": -800.0}
        return [*drawn, *edges, far, self.expanded(drawn[0])]


check_silu = checker(SiluFunction)


# Exercise 2 (CF-2): straight-through quantisation --------------------------------------------


@dataclass(frozen=True)
class QuantiseSTE(_FunctionSpec):
    """quantise(x, step): round to multiples of step forward, identity gradient backward."""

    number = 2
    seed: int = 0
    size: int = 6
    step: float = 0.5
    dtype: str = "float64"
    device: str | None = None

    custom = False  # the detach trick (§5) is as good as a Function
    setting = "step"
    names = {"result": "quantise(x, step)", "probe:grads": "∂L/∂x"}
    blame = _error_ids()

    def cases(self) -> list[dict]:
        axes = {
            "layout": list(_DRAWN),
            "dtype": self._dtypes(),
            "grad": ["stale", "frozen", "nonleaf", "fresh"],
            "arg": [self.step, self.step * 2, self.step / 2],
            "ties": [False, True],
            "grad_mode": [True, True, False],
            "scale": [2.0],
        }
        drawn = draw(self.seed, axes, 6)
        # ties far from zero for a step that is no power of two: x / step rounds once to
        # k + 0.5, and any other way (x * (1 / step), a float64 copy of a float32 x, a step
        # made a float32 tensor for a float64 x) may round off the tie: many entries
        far = {**drawn[0], "layout": "matrix", "arg": self.step * 0.7, "ties": True}
        far.update(dtype="float32", grad="fresh", grad_mode=True, scale=40.0, rows=64)
        # x already on the grid: rounding changes nothing, yet the result is a new tensor
        on_grid = {**drawn[2], "grad": "fresh", "grad_mode": True, "value": 3 * drawn[2]["arg"]}
        nan = {**on_grid, "value": float("nan")}
        return [*drawn, self.expanded(drawn[0]), far, {**far, "dtype": "float64"}, on_grid, nan]

    def arguments(self, case: dict) -> tuple:
        return (case["arg"],)

    def probe(self, world: World, value, again) -> dict:
        grid = _on_the_grid(value, world.case["arg"]) if trusted.type_(value) in TENSORS else None
        return {**super().probe(world, value, again), "on_the_grid": grid}


def _on_the_grid(value: torch.Tensor, step: float) -> bool:
    """Every value is a multiple of ``step`` as the dtype holds it: k·step rounded once, in
    the dtype (as the formula computes it) or from the exact product. ``(q + x) - x`` rounds
    twice and lands an ulp beside the grid, within the tolerance values are compared with."""
    v = cpu_copy(value)
    k = (v.to(torch.float64) / step).round()
    on = (v == k.to(v.dtype) * step) | (v == (k * step).to(v.dtype)) | v.isnan()
    return bool(on.all())


check_quantise = checker(QuantiseSTE)


# Exercise 3 (CF-3): gradcheck the right way ---------------------------------------------------


class Cube(torch.autograd.Function):
    """x³ with a correct backward."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 3 * x * x * grad_out


class CubeOffByOnePercent(Cube):
    """x³ whose backward is 1 % too small: 2.97·x² instead of 3·x²."""

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 2.97 * x * x * grad_out


class CubeOffBeyondOne(Cube):
    """x³ whose backward is 1 % too small where |x| > 1 only: a check at a rescaled x misses it."""

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return torch.where(x.abs() > 1, 2.97, 3.0) * x * x * grad_out


class LogCosh(torch.autograd.Function):
    """log(cosh(x)) with a correct backward."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.log(torch.cosh(x))

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return torch.tanh(x) * grad_out


class LogCoshMeanGradOut(LogCosh):
    """log(cosh(x)) whose backward scales by grad_out's mean: right for a uniform grad_out."""

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return torch.tanh(x) * grad_out.mean()


class CumSum(torch.autograd.Function):
    """Running sums along the last dimension; backward sums the incoming gradient in reverse."""

    @staticmethod
    def forward(ctx, x):
        return torch.cumsum(x, -1)

    @staticmethod
    def backward(ctx, grad_out):
        return torch.flip(torch.cumsum(torch.flip(grad_out, (-1,)), -1), (-1,))


class CumSumForwardOrder(CumSum):
    """Running sums whose backward sums in forward order: the Jacobian transposed wrongly."""

    @staticmethod
    def backward(ctx, grad_out):
        return torch.cumsum(grad_out, -1)


class MovingSum(torch.autograd.Function):
    """Sums of three neighbours along the last dimension: x[i] + x[i-1] + x[i-2]."""

    @staticmethod
    def forward(ctx, x):
        return x + F.pad(x, (1, 0))[..., :-1] + F.pad(x, (2, 0))[..., :-2]

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out + F.pad(grad_out, (0, 1))[..., 1:] + F.pad(grad_out, (0, 2))[..., 2:]


class MovingSumForgetsOldest(MovingSum):
    """Moving sums whose backward forgets x[i-2]: right for two entries, wrong from three."""

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out + F.pad(grad_out, (0, 1))[..., 1:]


class SoftAbs(torch.autograd.Function):
    """√(x² + 1), a smooth |x|, with a correct backward."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sqrt(x * x + 1)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return x / torch.sqrt(x * x + 1) * grad_out


class SoftAbsLosesSign(SoftAbs):
    """√(x² + 1) whose backward uses |x|: right for positive entries, wrong for negative ones,
    so a check at another point than x (|x|, x shifted) is caught."""

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return x.abs() / torch.sqrt(x * x + 1) * grad_out


_TO_CHECK = {  # name: (description, function)
    "cube": (Text("Cube (a correct backward)", "Cube（backward 正确）"), Cube),
    "cube_off": (
        Text("Cube with the backward 2.97·x²", "backward 为 2.97·x² 的 Cube"),
        CubeOffByOnePercent,
    ),
    "logcosh": (Text("LogCosh (a correct backward)", "LogCosh（backward 正确）"), LogCosh),
    "logcosh_off": (
        Text(
            "LogCosh with the backward tanh(x) · grad_out.mean()",
            "backward 为 tanh(x) · grad_out.mean() 的 LogCosh",
        ),
        LogCoshMeanGradOut,
    ),
    "cumsum": (Text("CumSum (a correct backward)", "CumSum（backward 正确）"), CumSum),
    "cumsum_off": (
        Text("CumSum with the backward in forward order", "backward 按前向顺序求和的 CumSum"),
        CumSumForwardOrder,
    ),
}
# More cases, outside the drawn ones: a backward wrong only where |x| > 1, so that a check at a
# rescaled x is caught; one wrong only from the third entry on, so that a check of a few entries
# of x, not of x, is caught; one wrong only where x < 0, so that a check at another point (|x|,
# x shifted away from kinks) is caught.
_ALSO_CHECKED = {
    "cube_off_beyond_one": (
        Text(
            "Cube with the backward 2.97·x² where |x| > 1, 3·x² elsewhere",
            "在 |x| > 1 处 backward 为 2.97·x²、其余处为 3·x² 的 Cube",
        ),
        CubeOffBeyondOne,
    ),
    "soft_abs_off": (
        Text(
            "SoftAbs (√(x² + 1)) with a backward that loses the sign: wrong only where x < 0",
            "backward 丢掉了符号的 SoftAbs（√(x² + 1)）：只在 x < 0 处出错",
        ),
        SoftAbsLosesSign,
    ),
    "moving_sum_off": (
        Text(
            "MovingSum (x[i] + x[i-1] + x[i-2]) with a backward that forgets x[i-2]",
            "backward 漏掉了 x[i-2] 的 MovingSum（x[i] + x[i-1] + x[i-2]）",
        ),
        MovingSumForgetsOldest,
    ),
}
_FUNCTIONS = {**_TO_CHECK, **_ALSO_CHECKED}
# Each drawn function and its twin with the backward the other way round (right <-> wrong):
# what the caller's fn applies after it "fixed or broke" its backward between two calls.
_OTHER_WAY = {
    **{name: f"{name}_off" for name in _TO_CHECK if not name.endswith("_off")},
    **{name: name.removesuffix("_off") for name in _TO_CHECK if name.endswith("_off")},
}


def _callers_fn(world: World, name: str):
    """The caller's ``fn``: a plain function of one tensor applying the custom Function the
    world holds now. Between two calls the caller swaps that Function (as editing and running
    the cell that defines it again does), so ``fn`` is the same object with another backward:
    a verdict remembered per ``fn`` (its id, its name) is stale whether or not CPython
    happens to reuse an id."""
    world.function = _FUNCTIONS[name][1]

    def fn(t):
        return world.function.apply(t)

    return fn


def _kept_x(f: dict, ctx) -> bool:
    """False for a correct elementwise backward, x left in float32: a check in float32.

    (A correct CumSum also fails a finite difference that perturbs every entry at once.)
    """
    elementwise = ctx.case["fn"] in ("cube", "logcosh")
    return elementwise and f.get("value") is False and ctx.found["x"]["dtype"] == "torch.float32"


# SoftAbs that loses the sign, at an x whose entries are all positive: its backward is right
# there until the caller negates x (between_calls)
_POSITIVE = {
    "fn": "soft_abs_off",
    "layout": "vector",
    "scale": 1.5,
    "dtype": "float32",
    "grad": "fresh",
    "positive": True,
}


# x's dtype and flags: float32 requiring grad, as the exercise describes it, and as other
# callers pass it: float64 (x.double() and x.to(torch.float64) are x itself), no grad.
_X_AS_DESCRIBED = [{"dtype": "float32", "grad": g} for g in ("stale", "fresh", "nonleaf")]
_X_OTHERWISE = [
    {"dtype": "float64", "grad": "frozen"},
    {"dtype": "float64", "grad": "fresh"},
    {"dtype": "float32", "grad": "frozen"},
]


@dataclass(frozen=True)
class BackwardIsCorrect(_FunctionSpec):
    """backward_is_correct(fn, x) says what a float64 gradcheck says, leaving x as it was."""

    number = 3
    seed: int = 0
    size: int = 4
    device: str | None = None

    dtype = "float32"  # the exercise's x
    custom = False
    names = {"result": "backward_is_correct(fn, x)"}
    differences_first = True  # gradcheck on x as it comes raises where x needs no grad
    blame = (Rule("result", lambda e, f, ctx: e.get("value") is True and _kept_x(f, ctx), "CF-3"),)

    def cases(self) -> list[dict]:
        """Six cases of x as the exercise describes it, three more of x as callers may pass it."""
        cases = []
        for k, states in enumerate((_X_AS_DESCRIBED, _X_OTHERWISE)):
            axes = {
                "fn": list(_TO_CHECK),
                "layout": ["vector", "matrix", "transposed", "slice", "row"],
                "x": states,
                "scale": [1.5],
            }
            drawn = draw(self.seed + k, axes, 6 if k == 0 else len(states))
            cases += [{**case, **case.pop("x")} for case in drawn]
        also = {"layout": "vector", "scale": 1.5, "dtype": "float32", "grad": "fresh"}
        cases += [{"fn": name, **also} for name in _ALSO_CHECKED]
        # the moving sum along a last dimension of 2: no x[i-2] there, so the backward that
        # forgets it is right; gradcheck at a flattened copy checks another function
        cases.append({**also, "fn": "moving_sum_off", "layout": "pairs"})
        cases.append(_POSITIVE)
        # the caller's default dtype float64: a copy made in float64 by setting the default,
        # then "restoring" float32, changes it
        return [*cases, {**cases[0], "default_dtype": "float64"}]

    between = Text(
        "made fn apply the Function whose backward is the other way round (a wrong one "
        "fixed, or a right one broken), or, where the backward is wrong only for x < 0, "
        "negated a positive x in place",
        "让 fn 改用 backward 正误相反的那个 Function（错的改对了，或对的改错了）；"
        "若 backward 只在 x < 0 处出错，则把原本为正的 x 原地取负",
    )

    def again_cases(self) -> list[dict]:
        """Also the SoftAbs that loses the sign at a positive x, negated between calls: a
        verdict kept per x (its id, its data_ptr, a float64 copy of it) stays True."""
        return [*super().again_cases(), _POSITIVE]

    def build(self, case: dict, device) -> World:
        world = super().build(case, device)
        world.args = (_callers_fn(world, case["fn"]), *world.args)
        if case.get("positive"):
            world.objects["x"].data.abs_().add_(0.25)  # .data: no version change
        return world

    def between_calls(self, world: World, case: dict) -> None:
        """The same fn with its backward fixed or broken, or (a backward wrong only for
        x < 0) a positive x negated: either way the right verdict flips."""
        if case.get("positive"):
            world.objects["x"].data.neg_()
        else:
            world.function = _FUNCTIONS[_OTHER_WAY[case["fn"]]][1]

    def probe(self, world: World, value, again) -> dict:
        return {}

    def blame_error(self, message: str, case: dict) -> str | None:
        """A mismatch raised where the reference's gradcheck passed: checked in float32."""
        correct = self.expected(case)["result"].get("value") is True
        return "CF-3" if correct and "mismatch" in message else classify(message)

    def describe(self, case: dict) -> Text:
        text = super().describe(case)
        fn = _FUNCTIONS[case["fn"]][0]
        text = with_callers_context(text, case)
        if case.get("positive"):
            text = Text(f"{text.en}, x > 0", f"{text.zh}，x > 0")
        return Text(f"fn: {fn.en}, {text.en}", f"fn：{fn.zh}，{text.zh}")


check_backward_is_correct = checker(BackwardIsCorrect)


# Exercise 4 (CF-4): a product that keeps its inputs with save_for_backward -----------------


def _unneeded_change(e: dict, f: dict, ctx) -> bool:
    """a changed while b needs no gradient: a was not needed, backward may ignore the change."""
    return ctx.case["b_grad"] == "frozen" and _as_before(f, ctx)


@dataclass(frozen=True)
class MulFunction(_FunctionSpec):
    """mul(a, b) = a * b through a Function; backward raises after a or b changed in place."""

    number = 4
    seed: int = 0
    rows: int = 3
    cols: int = 4
    dtype: str = "float64"
    device: str | None = None

    inputs = ("a", "b")
    changes = ("a", "b")
    names = {"result": "mul(a, b)", "probe:grads": "(∂L/∂a, ∂L/∂b)"}
    allow = (Rule("probe:a", _unneeded_change),)
    blame = (*_error_ids(), Rule("probe:a", None, "CF-4"), Rule("probe:b", None, "CF-4"))

    def cases(self) -> list[dict]:
        axes = {
            "layout": list(_DRAWN),
            "dtype": self._dtypes(),
            "a_grad": ["stale", "nonleaf", "fresh"],
            "b_grad": ["frozen", "fresh", "stale", "nonleaf"],
            "zero": [False, True],
        }
        drawn = draw(self.seed, axes, 6)
        return [*drawn, self.expanded(drawn[0]), {**drawn[1], "same": True}]

    def _size(self) -> tuple[int, int]:
        return self.cols, self.rows


check_mul = checker(MulFunction)


# Exercise 5 (CF-2, CF-4): soft clipping with a float limit ---------------------------------


def _safe_after_change(e: dict, f: dict, ctx) -> bool:
    """Backward raised, or still gave the gradient from forward's values."""
    return f.get("value") is True or _as_before(f, ctx)


@dataclass(frozen=True)
class SoftClip(_FunctionSpec):
    """soft_clip(x, limit) = limit·tanh(x / limit), safe against in-place changes."""

    number = 5
    seed: int = 0
    size: int = 5
    limit: float = 2.0
    dtype: str = "float64"
    device: str | None = None

    changes = ("x", "out")
    setting = "limit"
    names = {"result": "soft_clip(x, limit)", "probe:grads": "∂L/∂x"}
    allow = (Rule("probe:x", _safe_after_change), Rule("probe:out", _safe_after_change))
    blame = (*_error_ids(), Rule("probe:x", None, "CF-4"), Rule("probe:out", None, "CF-4"))

    def cases(self) -> list[dict]:
        axes = {
            "layout": list(_DRAWN),
            "dtype": self._dtypes(),
            "grad": ["stale", "nonleaf", "fresh", "frozen"],
            "arg": [self.limit, self.limit * 2, self.limit / 4],
            "scale": [3.0, 3.0, 1000.0],
        }
        drawn = [
            {**case, "scale": case["scale"] * case["arg"]} for case in draw(self.seed, axes, 6)
        ]
        # any dtype: also half precision with |x| / limit up to 50, where exp(2x / limit)
        # overflows (a tanh written through exp is nan there)
        half = {"layout": "matrix", "dtype": "float16", "grad": "fresh", "arg": self.limit}
        # and a limit past 256, where y ** 2 overflows float16 though y itself does not
        wide = {**half, "arg": 300.0, "scale": 3.0 * 300.0}
        # float64 with |x| / limit up to 5, where tanh is nearly flat but its slope (1e-3 at
        # 4) is not 0: a backward that zeroes it there is wrong; a limit float32 cannot hold
        flat = {**half, "dtype": "float64", "arg": self.limit * 0.15, "scale": 0.75 * self.limit}
        # bfloat16 near 0 (|x| / limit below 0.01): a tanh through exp(2x / limit) - 1 cancels
        small = {**half, "dtype": "bfloat16", "scale": 0.01 * self.limit, "small": True}
        edges = [{**half, "scale": 50.0 * self.limit}, wide, flat, small]
        return [*drawn, *edges, self.expanded(drawn[0])]

    def arguments(self, case: dict) -> tuple:
        return (case["arg"],)

    def tolerance(self, case: dict, fields: dict) -> tuple[float, float]:
        rtol, atol = super().tolerance(case, fields)  # near 0, relative to values near 0.01
        return (rtol, atol / 100) if case.get("small") else (rtol, atol)


check_soft_clip = checker(SoftClip)


# Exercise 6 (CF-5, CF-4): softplus in the setup_context style, under torch.func ----------


_vmap, _grad = torch.func.vmap, torch.func.grad  # taken before any learner code runs


def _summed(f):
    return lambda t: f(t).sum()


_TRANSFORMS = {  # name: (description, how the function is transformed)
    "vmap": (Text("under torch.func.vmap(softplus)", "在 torch.func.vmap(softplus) 下"), _vmap),
    "grad": (
        Text(
            "under torch.func.grad(lambda t: softplus(t).sum())",
            "在 torch.func.grad(lambda t: softplus(t).sum()) 下",
        ),
        lambda f: _grad(_summed(f)),
    ),
    "vmap_grad": (
        Text(
            "per-row gradients: torch.func.vmap(torch.func.grad(lambda t: softplus(t).sum()))",
            "逐行的梯度：torch.func.vmap(torch.func.grad(lambda t: softplus(t).sum()))",
        ),
        lambda f: _vmap(_grad(_summed(f))),
    ),
}


@dataclass(frozen=True)
class SoftplusTransformable(_FunctionSpec):
    """softplus(x) through a Function that torch.func.vmap and torch.func.grad can transform.

    Plain calls are judged like the other exercises; in the transformed cases the learner's
    function and the reference run under the same transform, and what comes out is compared.
    """

    number = 6
    seed: int = 0
    size: int = 4
    dtype: str = "float64"
    device: str | None = None

    changes = ("x",)
    names = {"result": "softplus(x)", "probe:grads": "∂L/∂x"}
    allow = (Rule("probe:x", _safe_after_change),)
    blame = (*_error_ids(), Rule("probe:x", None, "CF-4"))

    def cases(self) -> list[dict]:
        plain = {
            "layout": list(_DRAWN),
            "dtype": self._dtypes(),
            "grad": ["stale", "nonleaf", "fresh", "frozen"],
            "scale": [3.0, 1000.0, 12.0],  # 12: entries between 5 and 20, below softplus' threshold
        }
        batched = {  # vmap maps over the first dimension: at least one row
            "layout": ["matrix", "transposed", "slice", "row"],
            "dtype": self._dtypes(),
            "scale": [3.0, 1000.0],
            "grad": ["fresh", "nonleaf", "stale"],
        }
        transformed = [
            {**case, "transform": name, **({} if name == "vmap" else {"grad": "frozen"})}
            for case, name in zip(draw(self.seed + 1, batched, 3), _TRANSFORMS, strict=True)
        ]
        # vmap over a vector: every slice is 0-d (a 0-d path through .item() breaks there)
        transformed.append({**transformed[0], "layout": "vector"})
        # any dtype: also half precision with entries up to 16, where exp(x) overflows below
        # softplus' threshold of 20 (log1p(exp(x)) is inf there)
        half = {"layout": "matrix", "dtype": "float16", "grad": "fresh", "scale": 16.0}
        far = {**half, "dtype": "float64", "scale": 28.0}  # softplus > 1e-12 down to -27.6
        drawn = draw(self.seed, plain, 6)
        return [*drawn, *transformed, half, self.expanded(drawn[0]), far]

    def transformed(self, fn, case: dict):
        """``fn`` as the case's caller calls it: as it is, or under a torch.func transform."""
        transform = _TRANSFORMS.get(case.get("transform"), (None, lambda f: f))[1]
        return transform(fn)

    def _run(self, fn, case: dict, device, seeded: bool = True):
        """The learner's function under the case's transform; the reference applies it itself."""
        transformed = None if fn is None else self.transformed(fn, case)
        return super()._run(transformed, case, device, seeded)

    def describe(self, case: dict) -> Text:
        text = super().describe(case)
        if "transform" not in case:
            return text
        how = _TRANSFORMS[case["transform"]][0]
        return Text(f"{how.en}, {text.en}", f"{how.zh}，{text.zh}")


check_softplus = checker(SoftplusTransformable)


EXERCISES = numbered(
    globals(),
    ("silu", "SiLU as a custom Function", "把 SiLU 写成自定义 autograd Function", "CF-1"),
    ("quantise", "straight-through quantisation", "直通估计的量化", "CF-2"),
    (
        "backward_is_correct",
        "checking a backward with gradcheck",
        "用 gradcheck 检查 backward",
        "CF-3",
    ),
    ("mul", "a product that keeps its inputs safely", "安全保存输入的乘法", "CF-4"),
    ("soft_clip", "soft clipping with a float limit", "带浮点上限的软截断", "CF-2 CF-4"),
    (
        "softplus",
        "softplus in the setup_context style, under torch.func",
        "setup_context 写法的 softplus，经得起 torch.func 变换",
        "CF-5 CF-4",
    ),
)

self_check = self_checker(EXERCISES)
