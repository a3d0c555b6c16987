"""Checks for lesson 07: custom autograd Functions.

Each check is an ``observe`` / ``judge`` pair (see autograder/common/protocol.py).
``observe`` makes seeded inputs of several shapes on the check's device and dtype,
calls the learner's function, then does what a caller of a Function does next: it
runs backward with a random incoming gradient, runs ``gradcheck`` on a float64
copy, changes an input or the output in place after the forward pass (the version
counter's job), and counts the tensors that went through ``ctx.save_for_backward``
with saved-tensor hooks. It records plain data: values, error messages, counts.
``judge`` recomputes everything on the CPU with PyTorch's own operations and
autograd's own gradients, and names CF-1..CF-4 where the evidence shows them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import torch

from autograder.common import compare as c
from autograder.common import trusted
from autograder.common.exercise import Exercise
from autograder.common.i18n import Text
from autograder.common.inputs import resolve_device, uniform
from autograder.common.observation import Seen, snapshot
from autograder.common.protocol import Check, call, returned, verdict
from autograder.common.result import CheckResult, require
from autograder.kernel.selfcheck import run_self_check

YES, NO = Text("yes", "是"), Text("no", "否")
_LEGACY = ("Legacy autograd function", "Backward' object has no attribute")


def _dtype(name: str) -> torch.dtype:
    return getattr(torch, name)


def _device_name(device) -> str | None:
    return None if device is None else str(device)


def classify(message: str) -> str | None:
    """The misconception a PyTorch error message is evidence of."""
    if any(sign in message for sign in _LEGACY):
        return "CF-1"
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
    if kind == "CF-2":
        return Text(
            "backward must return one gradient per input of forward (None for a non-tensor)",
            "backward 必须为 forward 的每个输入各返回一个梯度（非张量输入返回 None）",
        )
    if "Jacobian mismatch" in message:
        return Text(
            "gradcheck raises when the gradients differ; raise_exception=False makes it return"
            " False instead",
            "梯度不一致时 gradcheck 会抛出异常；传入 raise_exception=False 则改为返回 False",
        )
    if "not a Variable" in message:
        return Text(
            "the gradient for a non-tensor input must be None",
            "非张量输入对应的梯度必须是 None",
        )
    return None


def _custom_node(out) -> bool:
    """Whether a returned tensor was made by a custom autograd.Function (its node's class)."""
    is_tensor = trusted.type_(out) in (torch.Tensor, torch.nn.Parameter)
    return is_tensor and trusted.isinstance_(out.grad_fn, trusted.function_node_type)


def _is_exact_tensor(value) -> bool:
    return trusted.type_(value) in (torch.Tensor, torch.nn.Parameter)


def _backward(out, inputs, grad_out) -> dict:
    """Gradients of ``out`` (weighted by grad_out) for ``inputs``, or the error backward raised."""
    if not (_is_exact_tensor(out) and out.requires_grad):
        return {"raised": None, "value": {"kind": "none"}}
    return call(lambda: trusted.autograd_grad(out, inputs, grad_out, allow_unused=True)).record()


def _through_function(found: Seen, ok: bool, name: str) -> CheckResult:
    return CheckResult(
        Text(
            "{name} comes out of your autograd.Function (.apply)",
            "{name} 由你的 autograd.Function（.apply）产生",
        ).format(name=name),
        ok,
        Text("grad_fn: <YourFunction>Backward", "grad_fn：<你的 Function>Backward"),
        f"grad_fn: {found.grad_fn}",
    )


def _grads(ex: Text, record: dict, count: int) -> list[Seen]:
    """The tensors autograd.grad returned, or feedback for what backward raised."""
    found = returned(ex, record, "torch.autograd.grad", classify=classify, explain=explain)
    if found.kind == "none":
        raise_no_graph(ex)
    return found.items[:count]


def raise_no_graph(ex: Text) -> None:
    require(
        ex,
        [
            CheckResult(
                Text("the result takes part in autograd", "结果参与自动求导"),
                False,
                Text("requires_grad=True, with a grad_fn", "requires_grad=True，带有 grad_fn"),
                Text("requires_grad=False (no graph)", "requires_grad=False（没有计算图）"),
            )
        ],
    )


def _unchanged(record: dict, want: torch.Tensor, name: str) -> list[CheckResult]:
    seen = Seen(record)
    return [
        c.values(seen, want, name),
        c.dtype(seen, want.dtype, name),
        c.requires_grad(seen, want.requires_grad, name),
    ]


# Exercise 1 (CF-1): SiLU as a Function ------------------------------------------------------

_SHAPES = ((1,), (3, 1), (2, 1, 2))  # the last size of each is replaced by the check's size


def _shapes(size: int) -> list[tuple[int, ...]]:
    return [(*shape[:-1], size if shape[-1] == 1 else shape[-1] + size) for shape in _SHAPES]


def _silu_inputs(seed: int, size: int, device, dtype):
    """(x, grad_out) per shape: x in [-3, 3) requires grad and holds a stale .grad."""
    cases = []
    for k, shape in enumerate(_shapes(size)):
        x = (uniform(seed + k, *shape, device=device, dtype=dtype) * 3).requires_grad_()
        g = uniform(seed + 50 + k, *shape, device=device, dtype=dtype)
        cases.append((x, g))
    return cases


@dataclass(frozen=True)
class SiluFunction(Check):
    """silu(x) = x·sigmoid(x) through a custom Function: values, gradient, gradcheck."""

    number = 1
    seed: int = 0
    size: int = 4
    dtype: str = "float64"
    device: str | None = None

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        cases = []
        for x, g in _silu_inputs(self.seed, self.size, device, _dtype(self.dtype)):
            x.grad = trusted.ones(x.shape, dtype=x.dtype, device=x.device)
            out = call(fn, x)
            cases.append(
                {
                    "call": out.record(),
                    "custom": _custom_node(out.value),
                    "backward": _backward(out.value, (x,), g),
                    "x_after": snapshot(x),
                }
            )
        x64 = (uniform(self.seed + 90, 5, device=device, dtype=torch.float64) * 3).requires_grad_()
        check = call(lambda: trusted.gradcheck(fn, (x64,), raise_exception=False))
        return {"device": str(device), "cases": cases, "gradcheck": check.record()}

    def judge(self, obs: dict) -> None:
        ex = self.heading
        dtype = _dtype(self.dtype)
        for case, (x, g) in zip(
            obs["cases"], _silu_inputs(self.seed, self.size, "cpu", dtype), strict=True
        ):
            name = f"silu(x) [x.shape = {tuple(x.shape)}]"
            out = returned(ex, case["call"], "silu", classify=classify, explain=explain)
            require(ex, [c.is_tensor(out, name)])
            want = torch.nn.functional.silu(x)
            (want_grad,) = trusted.autograd_grad(want, x, g)
            require(
                ex,
                [
                    c.values(out, want, name),
                    c.dtype(out, dtype, name),
                    c.on_device(out, obs["device"], name),
                    _through_function(out, case["custom"], name),
                ],
            )
            (grad,) = _grads(ex, case["backward"], 1)
            require(
                ex,
                [
                    c.values(grad, want_grad, Text("the gradient of x", "x 的梯度")),
                    *_unchanged(case["x_after"], x.detach().requires_grad_(), "x"),
                ],
            )
        passed = returned(ex, obs["gradcheck"], "torch.autograd.gradcheck", classify, explain)
        require(
            ex,
            [
                CheckResult(
                    Text(
                        "torch.autograd.gradcheck(silu, (x,)) with x in float64",
                        "对 float64 的 x 运行 torch.autograd.gradcheck(silu, (x,))",
                    ),
                    passed.kind == "bool" and passed.value is True,
                    "True",
                    passed.describe(),
                )
            ],
        )


def check_silu(fn, seed: int = 0, size: int = 4, dtype=torch.float64, device=None) -> None:
    name = str(dtype).removeprefix("torch.")
    verdict(SiluFunction(seed, size, name, _device_name(device)), fn)


# Exercise 2 (CF-2): straight-through quantisation ------------------------------------------


def _quantise_inputs(seed: int, size: int, device, dtype):
    cases = []
    for k, shape in enumerate(((size,), (3, size))):
        x = (uniform(seed + k, *shape, device=device, dtype=dtype) * 2).requires_grad_()
        g = uniform(seed + 60 + k, *shape, device=device, dtype=dtype)
        cases.append((x, g))
    return cases


@dataclass(frozen=True)
class QuantiseSTE(Check):
    """quantise(x, step): round to multiples of step forward, identity gradient backward."""

    number = 2
    seed: int = 0
    size: int = 6
    step: float = 0.5
    dtype: str = "float64"
    device: str | None = None

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        cases = []
        for x, g in _quantise_inputs(self.seed, self.size, device, _dtype(self.dtype)):
            out = call(fn, x, self.step)
            cases.append(
                {
                    "call": out.record(),
                    "backward": _backward(out.value, (x,), g),
                    "x_after": snapshot(x),
                }
            )
        with trusted.no_grad():
            x, _ = _quantise_inputs(self.seed, self.size, device, _dtype(self.dtype))[0]
            quiet = call(fn, x, self.step)
        return {"device": str(device), "cases": cases, "no_grad": quiet.record()}

    def judge(self, obs: dict) -> None:
        ex = self.heading
        dtype = _dtype(self.dtype)
        for case, (x, g) in zip(
            obs["cases"], _quantise_inputs(self.seed, self.size, "cpu", dtype), strict=True
        ):
            name = f"quantise(x, {self.step}) [x.shape = {tuple(x.shape)}]"
            out = returned(ex, case["call"], "quantise", classify=classify, explain=explain)
            require(ex, [c.is_tensor(out, name)])
            want = torch.round(x.detach() / self.step) * self.step
            require(
                ex,
                [
                    c.values(out, want, name),
                    c.dtype(out, dtype, name),
                    c.on_device(out, obs["device"], name),
                ],
            )
            (grad,) = _grads(ex, case["backward"], 1)
            require(
                ex,
                [
                    c.values(
                        grad,
                        g,
                        Text(
                            "the gradient of x (straight through: the incoming gradient)",
                            "x 的梯度（直通：原样传回收到的梯度）",
                        ),
                    ),
                    *_unchanged(case["x_after"], x.detach().requires_grad_(), "x"),
                ],
            )
        quiet = returned(ex, obs["no_grad"], "quantise", classify=classify, explain=explain)
        require(
            ex,
            [c.requires_grad(quiet, False, "quantise(x, step) under torch.no_grad()")],
        )


def check_quantise(
    fn, seed: int = 0, size: int = 6, step: float = 0.5, dtype=torch.float64, device=None
) -> None:
    name = str(dtype).removeprefix("torch.")
    verdict(QuantiseSTE(seed, size, float(step), name, _device_name(device)), fn)


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


class CubeOffByOnePercent(Cube):
    """x³ whose backward is 1 % too small: 2.97·x² instead of 3·x²."""

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 2.97 * x * x * grad_out


class LogCoshIgnoresGradOut(LogCosh):
    """log(cosh(x)) whose backward forgets to multiply by the incoming gradient."""

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return torch.tanh(x) + 0 * grad_out


_TO_CHECK = (
    (Text("Cube (a correct backward)", "Cube（backward 正确）"), Cube, True),
    (Text("LogCosh (a correct backward)", "LogCosh（backward 正确）"), LogCosh, True),
    (
        Text("Cube with the backward 2.97·x²", "backward 为 2.97·x² 的 Cube"),
        CubeOffByOnePercent,
        False,
    ),
    (
        Text("LogCosh with a backward that ignores grad_out", "backward 忽略 grad_out 的 LogCosh"),
        LogCoshIgnoresGradOut,
        False,
    ),
)


def _gradcheck_cases(seed: int) -> list[int]:
    """Indices into _TO_CHECK in a seeded order."""
    g = trusted.generator().manual_seed(seed)
    return [int(i) for i in trusted.rand(len(_TO_CHECK), generator=g).argsort()]


def _gradcheck_input(seed: int, k: int, size: int, device) -> torch.Tensor:
    """Two entries at least: with one, a backward that ignores grad_out looks right."""
    shape = (max(size, 2),) if k % 2 == 0 else (2, size)
    return (uniform(seed + k, *shape, device=device) * 1.5).requires_grad_()


@dataclass(frozen=True)
class BackwardIsCorrect(Check):
    """backward_is_correct(fn, x) says True for correct backwards, False for broken ones."""

    number = 3
    seed: int = 0
    size: int = 4
    device: str | None = None

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        cases = []
        for k, index in enumerate(_gradcheck_cases(self.seed)):
            x = _gradcheck_input(self.seed, k, self.size, device)
            answer = call(fn, _TO_CHECK[index][1].apply, x)
            cases.append({"call": answer.record(), "x_after": snapshot(x)})
        return {"cases": cases}

    def judge(self, obs: dict) -> None:
        ex = self.heading
        results, caller = [], []
        cases = list(enumerate(zip(_gradcheck_cases(self.seed), obs["cases"], strict=True)))
        # the correct backwards first: an error on one of them is the clearest evidence (CF-3)
        cases.sort(key=lambda case: not _TO_CHECK[case[1][0]][2])
        for k, (index, case) in cases:
            label, _, correct = _TO_CHECK[index]

            def blame(message: str, correct: bool = correct) -> str | None:
                return "CF-3" if correct and "mismatch" in message else classify(message)

            answer = returned(
                ex, case["call"], "backward_is_correct", classify=blame, explain=explain
            )
            x = _gradcheck_input(self.seed, k, self.size, "cpu")
            results.append(
                CheckResult(
                    Text(
                        "backward_is_correct(fn, x) for {label}",
                        "{label} 的 backward_is_correct(fn, x)",
                    ).format(label=label),
                    answer.kind == "bool" and answer.value is correct,
                    str(correct),
                    answer.describe(),
                    "CF-3" if correct and answer.kind == "bool" and not answer.value else None,
                )
            )
            caller.append(_unchanged(case["x_after"], x, "x"))
        changed = [rs for rs in caller if not all(r.passed for r in rs)]
        require(ex, results + (changed[0] if changed else []))  # the caller's x: shown once


def check_backward_is_correct(fn, seed: int = 0, size: int = 4, device=None) -> None:
    verdict(BackwardIsCorrect(seed, size, _device_name(device)), fn)


# Exercise 4 (CF-4): a product that keeps its inputs with save_for_backward -----------------


def _mul_inputs(seed: int, rows: int, cols: int, device, dtype):
    a = uniform(seed, rows, cols, device=device, dtype=dtype).requires_grad_()
    b = uniform(seed + 1, rows, cols, device=device, dtype=dtype).requires_grad_()
    g = uniform(seed + 2, rows, cols, device=device, dtype=dtype)
    return a, b, g


MUTATION = 1.0  # what the checks add in place to an input or output after the forward pass


def _count_saved(fn, *args):
    """Call fn and count the tensors packed for backward (what save_for_backward keeps)."""
    packed = []

    def pack(t):
        packed.append(1)
        return t

    with trusted.saved_tensors_hooks(pack, lambda t: t):
        out = call(fn, *args)
    return out, len(packed)


def _after_mutation(fn, make, mutate) -> dict:
    """Backward on fresh inputs from ``make()``, without and with an in-place change after forward.

    ``make()`` returns (args, inputs, grad_out); ``mutate(out, args)`` picks the tensor
    that is changed in place between the forward pass and backward.
    """
    record = {}
    for key in ("plain", "changed"):
        args, inputs, g = make()
        out = call(fn, *args)
        if not (out.ok and _is_exact_tensor(out.value)):
            return {"plain": out.record(), "changed": out.record()}
        if key == "changed":
            with trusted.no_grad():
                mutate(out.value, args).add_(MUTATION)
        record[key] = _backward(out.value, inputs, g)
    return record


def _same(found: list[Seen], plain: list[Seen]) -> bool:
    return trusted.len_(found) == trusted.len_(plain) and all(
        f.kind == p.kind and (not p.is_tensor or c.values(f, p.value, "g").passed)
        for f, p in zip(found, plain, strict=False)
    )


def _stayed_safe(ex: Text, record: dict, what: Text) -> CheckResult:
    """After an in-place change: backward raised about it, or gave the gradient it gives without."""
    plain = _grads(ex, record["plain"], 8)
    changed = record["changed"]
    if "modified by an inplace operation" in (changed.get("message", "") or ""):
        return CheckResult(what, True)
    found = _grads(ex, changed, 8)
    safe = _same(found, plain)
    return CheckResult(
        what,
        safe,
        Text(
            "backward raises (the version counter saw the change) or uses the values from forward",
            "反向传播报错（版本计数器发现了修改），或者仍使用前向传播时的值",
        ),
        Text(
            "backward ran silently with the changed values: another gradient",
            "反向传播悄悄地用了修改后的值：梯度变了",
        ),
        None if safe else "CF-4",
    )


@dataclass(frozen=True)
class MulFunction(Check):
    """mul(a, b) = a * b through a Function that keeps a and b with save_for_backward."""

    number = 4
    seed: int = 0
    rows: int = 3
    cols: int = 4
    dtype: str = "float64"
    device: str | None = None

    def _inputs(self, device, offset: int = 0):
        return _mul_inputs(self.seed + offset, self.rows, self.cols, device, _dtype(self.dtype))

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        a, b, g = self._inputs(device)
        out, saved = _count_saved(fn, a, b)
        record = {
            "device": str(device),
            "call": out.record(),
            "custom": _custom_node(out.value),
            "saved": saved,
            "backward": _backward(out.value, (a, b), g),
        }
        a, b, g = self._inputs(device, 10)
        b.requires_grad_(False)
        only_a = call(fn, a, b)
        record["only_a"] = _backward(only_a.value, (a,), g)
        for which, offset in (("a", 20), ("b", 30)):

            def make(offset: int = offset):
                a, b, g = self._inputs(device, offset)
                return (a, b), (a, b), g

            position = 0 if which == "a" else 1
            record[f"changed_{which}"] = _after_mutation(
                fn, make, lambda out, args, k=position: args[k]
            )
        return record

    def judge(self, obs: dict) -> None:
        ex = self.heading
        a, b, g = self._inputs("cpu")
        name = f"mul(a, b) [a.shape = {tuple(a.shape)}]"
        out = returned(ex, obs["call"], "mul", classify=classify, explain=explain)
        require(ex, [c.is_tensor(out, name)])
        require(
            ex,
            [
                c.values(out, a * b, name),
                c.dtype(out, _dtype(self.dtype), name),
                c.on_device(out, obs["device"], name),
                _through_function(out, obs["custom"], name),
            ],
        )
        grad_a, grad_b = _grads(ex, obs["backward"], 2)
        require(
            ex,
            [
                c.values(grad_a, g * b.detach(), Text("the gradient of a", "a 的梯度")),
                c.values(grad_b, g * a.detach(), Text("the gradient of b", "b 的梯度")),
            ],
        )
        a, b, g = self._inputs("cpu", 10)
        (grad_a,) = _grads(ex, obs["only_a"], 1)
        results = [
            c.values(
                grad_a,
                g * b,
                Text(
                    "the gradient of a when b does not require grad",
                    "b 不需要梯度时 a 的梯度",
                ),
            ),
            CheckResult(
                Text(
                    "tensors kept through ctx.save_for_backward in forward",
                    "forward 中通过 ctx.save_for_backward 保存的张量",
                ),
                obs["saved"] >= 2,
                Text("a and b (2 tensors)", "a 和 b（2 个张量）"),
                str(obs["saved"]),
                "CF-4",
            ),
        ]
        for which in ("a", "b"):
            what = Text(
                "backward after {t} was changed in place after forward",
                "forward 之后原地修改 {t}，再反向传播",
            ).format(t=which)
            results.append(_stayed_safe(ex, obs[f"changed_{which}"], what))
        require(ex, results)


def check_mul(
    fn, seed: int = 0, rows: int = 3, cols: int = 4, dtype=torch.float64, device=None
) -> None:
    name = str(dtype).removeprefix("torch.")
    verdict(MulFunction(seed, rows, cols, name, _device_name(device)), fn)


# Exercise 5 (CF-2, CF-4): soft clipping with a float limit ---------------------------------


def _clip_inputs(seed: int, size: int, limit: float, device, dtype):
    x = (uniform(seed, 2, size, device=device, dtype=dtype) * 3 * limit).requires_grad_()
    g = uniform(seed + 1, 2, size, device=device, dtype=dtype)
    return x, g


@dataclass(frozen=True)
class SoftClip(Check):
    """soft_clip(x, limit) = limit·tanh(x / limit), safe against in-place changes."""

    number = 5
    seed: int = 0
    size: int = 5
    limit: float = 2.0
    dtype: str = "float64"
    device: str | None = None

    def _inputs(self, device, offset: int = 0):
        dtype = _dtype(self.dtype)
        return _clip_inputs(self.seed + offset, self.size, self.limit, device, dtype)

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        x, g = self._inputs(device)
        out = call(fn, x, self.limit)
        record = {
            "device": str(device),
            "call": out.record(),
            "custom": _custom_node(out.value),
            "backward": _backward(out.value, (x,), g),
        }
        for key, offset in (("changed_x", 10), ("changed_out", 20)):

            def make(offset: int = offset):
                x, g = self._inputs(device, offset)
                return (x, self.limit), (x,), g

            pick = (lambda out, args: args[0]) if key == "changed_x" else (lambda out, args: out)
            record[key] = _after_mutation(fn, make, pick)
        return record

    def _reference(self, offset: int = 0):
        x, g = self._inputs("cpu", offset)
        want = self.limit * torch.tanh(x / self.limit)
        (grad,) = trusted.autograd_grad(want, x, g)
        return x, want, grad

    def judge(self, obs: dict) -> None:
        ex = self.heading
        x, want, want_grad = self._reference()
        name = f"soft_clip(x, {self.limit})"
        out = returned(ex, obs["call"], "soft_clip", classify=classify, explain=explain)
        require(ex, [c.is_tensor(out, name)])
        require(
            ex,
            [
                c.values(out, want, name),
                c.dtype(out, _dtype(self.dtype), name),
                c.on_device(out, obs["device"], name),
                _through_function(out, obs["custom"], name),
            ],
        )
        (grad,) = _grads(ex, obs["backward"], 1)
        results = [c.values(grad, want_grad, Text("the gradient of x", "x 的梯度"))]
        for key, what in (
            ("changed_x", Text("backward after x was changed in place", "原地修改 x 之后反向传播")),
            (
                "changed_out",
                Text("backward after the output was changed in place", "原地修改输出之后反向传播"),
            ),
        ):
            results.append(_stayed_safe(ex, obs[key], what))
        require(ex, results)


def check_soft_clip(
    fn, seed: int = 0, size: int = 5, limit: float = 2.0, dtype=torch.float64, device=None
) -> None:
    name = str(dtype).removeprefix("torch.")
    verdict(SoftClip(seed, size, float(limit), name, _device_name(device)), fn)


EXERCISES: tuple[Exercise, ...] = (
    Exercise(
        1,
        "silu",
        Text("SiLU as a custom Function", "把 SiLU 写成自定义 autograd Function"),
        check_silu,
        ("CF-1",),
    ),
    Exercise(
        2,
        "quantise",
        Text("straight-through quantisation", "直通估计的量化"),
        check_quantise,
        ("CF-2",),
    ),
    Exercise(
        3,
        "backward_is_correct",
        Text("checking a backward with gradcheck", "用 gradcheck 检查 backward"),
        check_backward_is_correct,
        ("CF-3",),
    ),
    Exercise(
        4,
        "mul",
        Text("a product that keeps its inputs safely", "安全保存输入的乘法"),
        check_mul,
        ("CF-4",),
    ),
    Exercise(
        5,
        "soft_clip",
        Text("soft clipping with a float limit", "带浮点上限的软截断"),
        check_soft_clip,
        ("CF-2", "CF-4"),
    ),
)


def self_check(namespace: dict) -> list:
    """Run every exercise's visible checks against the notebook's namespace; print a summary."""
    return run_self_check(EXERCISES, namespace)
