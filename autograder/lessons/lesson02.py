"""Checks for lesson 02: no_grad, inference_mode, and what autograd keeps in memory.

Each check is a :class:`~autograder.common.oracle.Spec`: its seed draws caller states
(plain models arriving in training mode, models with BatchNorm and Dropout arriving
in evaluation mode, a frozen first layer, stale, zero or no ``.grad``, float32 or
float64, transposed, sliced or single-row inputs, SGD, momentum or Adam with a drawn
learning rate, the caller under ``no_grad`` or ``inference_mode``), the learner's
function and the reference run in identical worlds, and everything the caller can
see afterwards is compared. Around each call the checks record what only that
moment shows: the bytes saved for backward, the grad and inference modes on return,
PyTorch's ``volatile`` warning, the gradients an optimizer step used. Probes then do
what the caller does next: hold the result and count the graphs it keeps alive,
train a head on the features, go backward through a counted result.

This module runs beside learner code (the learner's kernel, the grading sandbox's
observer) and holds no answer: it builds each case's world, calls the learner's
function, records what a caller sees and compares. The references are in
:mod:`autograder.references.lesson02`, which only the judge imports; the learner's
kernel compares with their states shipped in
``autograder/lessons/expected/lesson02.wire``. Where NG-2's blame needs more than the
reference's state, it reads the fact ``counts`` the reference records: the right count
and what typical wrong counters find.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from autograder.common import trusted
from autograder.common.call_watch import LOGGED, Watched
from autograder.common.caller_states import (
    GROUPS,
    HOOK_CALLS_NAMED,
    STALE,
    grouped,
    held_by_optimizer,
    hook_of_callers,
    leave_grads,
    one_short,
    raising,
    stepped_before,
    with_every_parameter_held,
    with_groups,
    with_hooked,
    with_raising,
)
from autograder.common.exercise import numbered
from autograder.common.i18n import Text
from autograder.common.inputs import laid_out, uniform
from autograder.common.models import relu_mlp
from autograder.common.optimizer_steps import (
    OPTIMIZERS,
    after_closure,
    stale_added,
    zeroed_frozen,
)
from autograder.common.oracle import FACT, Rule, Spec, World, close, draw, is_zero_or_none
from autograder.common.protocol import call, checker
from autograder.common.recorded import TENSORS, cpu_copy, dotted
from autograder.common.result import CheckFailed
from autograder.kernel.selfcheck import self_checker


def _ints(seed: int, *ranges: tuple[int, int]) -> list[int]:
    """One integer from each [low, high) range, drawn from the seed."""
    g = trusted.generator().manual_seed(seed)
    return [int(trusted.randint(low, high, (1,), generator=g)) for low, high in ranges]


# Models, inputs and the states callers leave them in ---------------------------------------


_ARRIVALS = {
    "train": Text("a plain model in training mode", "训练模式下的普通模型"),
    "eval": Text(
        "a model with BatchNorm and Dropout in evaluation mode",
        "评估模式下带 BatchNorm 与 Dropout 的模型",
    ),
    "train_norm": Text(
        "a model with BatchNorm and Dropout in training mode",
        "训练模式下带 BatchNorm 与 Dropout 的模型",
    ),
    "train_dropout": Text("a model with Dropout in training mode", "训练模式下带 Dropout 的模型"),
}
_LAYOUTS = {
    "plain": Text("inputs contiguous", "输入连续"),
    "transposed": Text("inputs transposed (not contiguous)", "输入是转置（不连续）"),
    "slice": Text("inputs a view into a larger storage", "输入是更大存储的视图"),
    "row": Text("a single row", "只有一行"),
}
_OUTER = {
    "": Text("grad mode on", "梯度模式开启"),
    "no_grad": Text("called under torch.no_grad()", "在 torch.no_grad() 下调用"),
    "inference_mode": Text(
        "called under torch.inference_mode(), x an inference tensor",
        "在 torch.inference_mode() 下调用，x 是推理张量",
    ),
}


_NORMED = ("eval", "train_norm")  # arrivals whose model has BatchNorm and Dropout


def model_for(seed: int, case: dict, device, last: int | None = None):
    """The case's model (arrival mode, frozen first layer, .grad) and its input width."""
    sizes = _ints(seed, (4, 10), *[(5, 13)] * (case["depth"] - 1), (3, 6))
    sizes = sizes if last is None else [*sizes[:-1], last]
    normed = case["arrival"] in _NORMED
    dropout = normed or case["arrival"] == "train_dropout"
    model = relu_mlp(seed, sizes, case["dtype"], device, batchnorm=normed, dropout=dropout)
    model.train(case["arrival"].startswith("train"))
    if case.get("frozen"):  # the first layer; its bias where it is the only one
        (model[0] if case["depth"] > 1 else model[0].bias).requires_grad_(False)
    leave_grads(model.parameters(), case.get("grads"), seed + 100)
    return model, sizes[0]


def _case_text(case: dict, *extra: Text | str) -> Text:
    parts = [
        _ARRIVALS[case["arrival"]],
        Text("{d} layers", "{d} 层").format(d=case["depth"]),
        case["dtype"],
        *([Text("first layer frozen", "第一层被冻结")] if case.get("frozen") else []),
        *([STALE[case["grads"]]] if "grads" in case else []),
        *([_LAYOUTS[case["layout"]]] if "layout" in case else []),
        *extra,
        _OUTER[case.get("outer", "")],
    ]
    en = ", ".join(p if trusted.type_(p) is str else p.en for p in parts)
    zh = "，".join(p if trusted.type_(p) is str else p.zh for p in parts)
    return Text(en, zh)


_PROBES = {
    "alive": Text(
        "bytes that graphs still hold while the caller keeps the result",
        "调用者持有返回值时，计算图仍占用的字节数",
    ),
    "is_inference": Text(
        "features.is_inference() (an inference tensor cannot be saved for backward later)",
        "features.is_inference()（推理张量之后不能被保存用于反向传播）",
    ),
    "head": Text(
        "training a head on the features later: head.weight's gradient",
        "之后用 features 训练一个头部：head.weight 的梯度",
    ),
    "same result": Text("result is the object fn returned", "result 就是 fn 返回的那个对象"),
    "backward": Text(
        "backward through result afterwards (what it raised)",
        "之后对 result 做反向传播（抛出的异常）",
    ),
    "second backward": Text(
        "a second backward through result, the first having kept the graph with"
        " retain_graph=True (what it raised)",
        "第一次用 retain_graph=True 保留计算图之后，再次对 result 做反向传播（抛出的异常）",
    ),
}


@dataclass(frozen=True)
class _Lesson02(Spec):
    """What every check of the lesson shares: the logged facts' names, PyTorch's errors."""

    differences_first = True

    def probe_text(self, name: str) -> Text:
        if name.startswith("grad["):
            return Text(
                "the gradient {n} from backward through result afterwards",
                "之后对 result 做反向传播得到的梯度 {n}",
            ).format(n=name)
        return _PROBES.get(name) or super().probe_text(name)

    def explain(self, message: str) -> Text | None:
        return next((text for words, _, text in _ERRORS if any(w in message for w in words)), None)

    def classify(self, message: str) -> str | None:
        return next((m for words, m, _ in _ERRORS if any(w in message for w in words)), None)


def _named(**names: str | Text) -> dict:
    return {**LOGGED, **names}


def _param_shape(ctx, base: str) -> list[int] | None:
    return ctx.before.get(base.removesuffix(".grad"), {}).get("shape")


def _grads_only_cleared(ctx) -> bool:
    """No gradient reached the model: each .grad as the caller left it, zero or None."""
    return all(
        close(f.get("value"), ctx.before.get(b, {}).get("value"), (1e-4, 1e-5))
        or is_zero_or_none(f, _param_shape(ctx, b))
        for b, f in ctx.found.items()
        if b.endswith(".grad") and b.startswith("model")
    )


# Exercise 1 (NG-1, NG-3) -------------------------------------------------------------------


def _graph_kept(e: dict, f: dict, ctx) -> bool:
    """A graph outlived the call: results with history, or saved tensors still alive."""
    result = [v for b, v in ctx.found.items() if b.startswith("result[")]
    alive = ctx.found.get("probe", {}).get("alive", 0)
    return (trusted.type_(alive) is int and alive > 0) or any(v.get("grad_fn") for v in result)


def _backward_called(e: dict, f: dict, ctx) -> bool:
    return not _grads_only_cleared(ctx)


def _volatile(e: dict, f: dict, ctx) -> bool:
    return ctx.found.get("volatile warning", {}).get("value") is True


@dataclass(frozen=True)
class Evaluate(_Lesson02):
    """Mean loss and accuracy as Python floats, with nothing saved for backward."""

    number = 1
    seed: int = 0
    count: int = 4
    device: str | None = None

    names = _named(
        result="evaluate(model, batches)", **{"result[0]": "mean_loss", "result[1]": "accuracy"}
    )
    floats_in_case_dtype = ("result[0]",)  # the accuracy's fractions are float32 by the task
    blame = (
        Rule("volatile warning", None, "NG-1"),
        Rule("saved for backward", _volatile, "NG-1"),
        Rule("result*", lambda e, f, ctx: bool(f.get("grad_fn")), "NG-3"),
        Rule("probe:alive", None, "NG-3"),
        Rule("model*.grad", lambda e, f, ctx: not is_zero_or_none(f), "NG-3"),
        Rule("saved for backward", lambda e, f, ctx: _graph_kept(e, f, ctx), "NG-3"),
        Rule("saved for backward", _backward_called, "NG-3"),
    )

    def cases(self) -> list[dict]:
        axes = {
            "arrival": ["train", "eval"],
            "outer": ["", "no_grad", ""],
            "grads": ["stale", "none", "zero", "stale"],
            "frozen": [True, False, False],
            "dtype": ["float32", "float64"],
            "depth": [2, 3, 1],
            "batches": [self.count, self.count + 1, self.count],
            "layout": ["plain", "transposed", "plain", "slice"],
            "last": ["same", "short", "row"],
        }
        drawn = draw(self.seed, axes, 4)
        # inputs that require grad record a graph whatever the parameters' flags
        inputs_grad = {**drawn[1], "inputs_grad": True, "layout": "plain", "outer": ""}
        tied = {**drawn[2], "tied": True}  # argmax takes the first of 6 equal logits (topk not)
        return [*drawn, raising(drawn[0], outer="", batches=self.count), inputs_grad, tied]

    def describe(self, case: dict) -> Text:
        last = {
            "same": Text("{n} equal batches", "{n} 个大小相同的批次"),
            "short": Text("{n} batches, the last one smaller", "{n} 个批次，最后一个较小"),
            "row": Text("{n} batches, the last one a single row", "{n} 个批次，最后一个只有一行"),
        }[case["last"]].format(n=case["batches"])
        if case.get("inputs_grad"):
            last = Text("{s}, inputs that require grad", "{s}，输入需要梯度").format(s=last)
        if case.get("tied"):
            last = Text(
                "{s}, the last layer all zeros (6 classes)", "{s}，最后一层全为零（6 个类别）"
            ).format(s=last)
        return with_raising(_case_text(case, last), case)

    def build(self, case: dict, device) -> World:
        model, width = model_for(self.seed, case, device, last=6 if case.get("tied") else None)
        classes = model[-1].out_features
        if case.get("tied"):
            with trusted.no_grad():
                for p in model[-1].parameters():
                    p.zero_()
        rows = [_ints(self.seed + 2, (6, 13))[0]] * case["batches"]
        rows[-1] = {"same": rows[-1], "short": rows[-1] // 2, "row": 1}[case["last"]]
        g = trusted.generator().manual_seed(self.seed + 3)
        batches, objects = [], {"model": model}
        for k, n in enumerate(rows):
            x = laid_out(self.seed + 10 + k, n, width, case["layout"], device, case["dtype"])
            if case.get("raises") and k == len(rows) - 1:
                x = one_short(x)
            if case.get("inputs_grad"):
                x.requires_grad_()
            y = trusted.randint(0, classes, (n,), generator=g).to(device)
            batches.append((x, y))
            objects.update({f"batches[{k}][0]": x, f"batches[{k}][1]": y})
        return World((model, batches), objects, device)

    def calling(self, world: World, case: dict, fn):
        return Watched(world, case["outer"], graphs=True)

    def probe(self, world: World, value, again) -> dict:
        return {"alive": int(world.kept.alive())}

    def classify(self, message: str) -> str | None:
        if "does not require grad" in message:
            return "NG-3"  # backward() was called in an evaluation, to free a graph
        return super().classify(message)


check_evaluate = checker(Evaluate)


# Exercise 2 (NG-2) -------------------------------------------------------------------------


def _values(g, *shape: int, dtype=torch.float32, device="cpu", leaf: bool = True):
    """Values in [-1, 1) from ``g``, made on the CPU then moved, so every device sees the same."""
    t = (trusted.rand(shape, generator=g, dtype=torch.float64) * 2 - 1).to(device, dtype)
    return t.requires_grad_(leaf)


def _sizes(g, low: int, high: int, n: int) -> list[int]:
    return [int(v) for v in trusted.randint(low, high, (n,), generator=g)]


def _square(g, device):
    return (lambda t: t * t), (_values(g, *_sizes(g, 2, 9, 2), device=device),)


def _raising(g, device):
    """x * x saved, then the caller's fn fails: the exception is the caller's to see."""

    def fails(t):
        t * t
        raise ValueError("the caller's fn failed after saving a tensor")

    return fails, (_values(g, *_sizes(g, 2, 9, 2), device=device),)


def _gram(g, device):
    """x @ x.t() saves x twice, once as a transposed view: two saved tensors, one memory."""
    return (lambda t: t @ t.t()), (_values(g, *_sizes(g, 2, 9, 2), device=device),)


def _argmax(g, device):
    return (lambda t: (t * t).argmax()), (_values(g, *_sizes(g, 2, 9, 2), device=device),)


def _square_0d(g, device):
    return (lambda t: t * t), (_values(g, dtype=torch.float64, device=device),)


def _linear_on_batch(g, device):
    n_in, n_out, rows = _sizes(g, 3, 9, 3)
    layer = nn.Linear(n_in, n_out).to(torch.float64)
    with trusted.no_grad():
        layer.weight.copy_(_values(g, n_out, n_in, dtype=torch.float64, leaf=False))
        layer.bias.copy_(_values(g, n_out, dtype=torch.float64, leaf=False))
    return layer.to(device), (
        _values(g, rows, n_in, dtype=torch.float64, device=device, leaf=False),
    )


def _exp_sum(g, device):
    x = _values(g, *_sizes(g, 3, 20, 1), dtype=torch.float64, device=device)
    return (lambda t: t.exp().sum()), (x,)


def _sum_only(g, device):
    return (lambda t: t.sum()), (_values(g, *_sizes(g, 2, 9, 2), device=device),)


def _strided(g, device):
    rows, cols = _sizes(g, 2, 7, 2)
    a, b = _values(g, 2 * rows, cols, device=device), _values(g, rows, cols, device=device)
    return (lambda u, v: u[::2] * v), (a, b)


def _transposed(g, device):
    rows, cols = _sizes(g, 2, 7, 2)
    a = _values(g, cols, rows, device=device, leaf=False).t().requires_grad_()
    return (lambda u, v: u * v), (a, _values(g, rows, cols, device=device))


def _expanded(g, device):
    rows, cols = _sizes(g, 3, 8, 2)
    a = _values(g, cols, dtype=torch.float64, device=device)
    b = _values(g, rows, cols, dtype=torch.float64, device=device)
    return (lambda u, v: u.expand(rows, cols) * v), (a, b)


def _gather(g, device):
    rows, cols = _sizes(g, 2, 8, 2)
    x = _values(g, rows, cols, device=device)
    index = trusted.randint(0, cols, (rows, 3), generator=g).to(device)
    return (lambda t, i: torch.gather(t, 1, i)), (x, index)


def _sigmoid_bf16(g, device):
    x = _values(g, *_sizes(g, 2, 9, 2), leaf=False).to(device, torch.bfloat16)
    return torch.sigmoid, (x.requires_grad_(),)


def _mlp_on_leaf(g, device):
    n_in, hidden, n_out, rows = _sizes(g, 2, 8, 4)
    mlp = relu_mlp(int(trusted.randint(0, 1000, (1,), generator=g)), [n_in, hidden, n_out])
    return mlp.to(device, torch.float64), (
        _values(g, rows, n_in, dtype=torch.float64, device=device),
    )


_OPS = {
    "square": (Text("x * x for a leaf x", "叶子张量 x 的 x * x"), _square),
    "argmax": (
        Text("(x * x).argmax(): a result that needs no grad", "(x * x).argmax()：结果不需要梯度"),
        _argmax,
    ),
    "gram": (Text("x @ x.t(): x saved twice", "x @ x.t()：x 被保存了两次"), _gram),
    "square_0d": (Text("x * x for a 0-d float64 x", "0 维 float64 张量 x 的 x * x"), _square_0d),
    "linear": (Text("a linear layer on a plain batch", "线性层作用于普通批次"), _linear_on_batch),
    "exp_sum": (Text("x.exp().sum() in float64", "float64 下的 x.exp().sum()"), _exp_sum),
    "sum": (Text("x.sum()", "对 x 求和：x.sum()"), _sum_only),
    "strided": (Text("a[::2] * b (a strided view)", "a[::2] * b（步长视图）"), _strided),
    "transposed": (Text("a * b for a transposed a", "a * b，a 是转置（不连续）"), _transposed),
    "expanded": (
        Text("a.expand(n, m) * b in float64", "float64 下的 a.expand(n, m) * b"),
        _expanded,
    ),
    "gather": (Text("torch.gather(x, 1, index)", "用 torch.gather(x, 1, index) 取元素"), _gather),
    "sigmoid": (Text("torch.sigmoid in bfloat16", "bfloat16 下的 torch.sigmoid"), _sigmoid_bf16),
    "mlp": (Text("a small MLP on a leaf batch", "小型 MLP 作用于叶子批次"), _mlp_on_leaf),
    "raises": (
        Text(
            "x * x for a leaf x, then fn raises ValueError",
            "先算叶子张量 x 的 x * x，随后 fn 抛出 ValueError",
        ),
        _raising,
    ),
}


def _gradient_sized(e: dict, f: dict, ctx) -> bool:
    """The count is the size of the gradients to come, and no other known way of miscounting.

    The counts are the reference's fact ``counts``: what it packed, and what typical wrong
    counters find in the same case (``autograder/references/lesson02.py``).
    """
    counts = ctx.fact("counts")
    found = f.get("value")  # looked up in sets: a tensor found is never compared element-wise
    return found in frozenset(counts["gradients"]) and found not in frozenset(counts["others"])


@dataclass(frozen=True)
class CountSavedBytes(_Lesson02):
    """The counter agrees with autograd's packing, keeps backward working, calls fn once."""

    number = 2
    seed: int = 0
    device: str | None = None

    names = _named(
        result="count_saved_bytes(fn, *args)",
        **{"result[0]": "result", "result[1]": "nbytes"},
        **{"fn calls": Text("calls of fn(*args)", "fn(*args) 的调用次数")},
    )
    blame = (Rule("result[1]", _gradient_sized, "NG-2"),)

    def cases(self) -> list[dict]:
        ops = [
            {"op": op, "outer": "", **({"raises": True} if op == "raises" else {})} for op in _OPS
        ]
        extra = draw(self.seed, {"op": ["square", "linear", "mlp"], "outer": ["no_grad"]}, 1)
        return ops + extra

    def describe(self, case: dict) -> Text:
        what = _OPS[case["op"]][0]
        if not case["outer"]:
            return what
        return Text("{w}, {o}", "运算：{w}，{o}").format(w=what, o=_OUTER[case["outer"]])

    def build(self, case: dict, device) -> World:
        number = list(_OPS).index(case["op"])
        g = trusted.generator().manual_seed(self.seed * 100 + number)
        op, args = _OPS[case["op"]][1](g, device)
        objects = {f"args[{k}]": a for k, a in enumerate(args)}
        if trusted.isinstance_(op, trusted.module_type):
            objects["fn"] = op

        def counted(*inputs):
            result = op(*inputs)
            world.results.append(result)
            world.logged["fn calls"]["value"] += 1
            return result

        world = World((counted, *args), objects, device)
        world.op, world.results = op, []
        world.logged["fn calls"] = {"kind": "int", "value": 0}
        return world

    between = Text(
        "measured another function (a small MLP on a leaf batch, or x.exp().sum())",
        "测量了另一个函数（作用于叶子批次的小型 MLP，或 x.exp().sum()）",
    )

    def between_calls(self, world: World, case: dict) -> None:
        """The caller measures something else, then goes back through the first result's
        graph: saved tensors filed in a store that each call clears are gone by then."""
        other = "mlp" if case["op"] != "mlp" else "exp_sum"
        g = trusted.generator().manual_seed(self.seed * 100 + 99)
        op, args = _OPS[other][1](g, world.device)
        world.earlier_args = world.args  # alive to the end: no id of theirs is reused
        world.args = (op, *args)

    def calling(self, world: World, case: dict, fn):
        return Watched(world, case["outer"], saved=False)

    def probe(self, world: World, value, again) -> dict:
        pair = trusted.type_(value) is tuple and trusted.len_(value) == 2
        result = value[0] if pair else None
        found: dict = {"same result": any(r is result for r in world.results)}
        if trusted.type_(result) not in TENSORS or result.grad_fn is None:
            return found
        leaves = [t for _, t in world.tensors() if t.requires_grad and t.is_leaf]
        seed = uniform(self.seed + 50, result.numel(), device="cpu").reshape(result.shape)
        seed = seed.to(result.device, result.dtype)
        grads = call(
            trusted.autograd_grad, result, leaves, seed, allow_unused=True, retain_graph=True
        )
        found["backward"] = "" if grads.ok else trusted.type_(grads.error).__name__
        # the caller's second backward through the graph it kept: each saved tensor unpacked
        # again
        again = call(trusted.autograd_grad, result, leaves, seed, allow_unused=True)
        found["second backward"] = "" if again.ok else trusted.type_(again.error).__name__
        for k, grad in enumerate(grads.value if grads.ok else ()):
            found[f"grad[{k}]"] = None if grad is None else cpu_copy(grad)
        return found

    def judge(self, obs: dict) -> None:
        """NG-2 shows as a pattern: most wrong counts are the size of the gradients to come."""
        try:
            super().judge(obs)
        except CheckFailed as failed:
            if "NG-2" not in failed.misconceptions or self._gradients_counted(obs):
                raise
            kept = [dataclasses.replace(r, misconception=None) for r in failed.failures]
            raise CheckFailed(failed.exercise, kept) from None

    def _gradients_counted(self, obs: dict) -> bool:
        wrong = []
        for case, rec in zip(self.cases(), obs["cases"], strict=True):
            if case.get("raises"):  # fn raised: no count to read
                continue
            items = rec["call"].get("value", {}).get("items", [])
            counted = items[1].get("value") if len(items) == 2 else None
            counts = self.expected(case)[FACT + "counts"]["value"]
            if trusted.type_(counted) is int and counted != counts["exact"]:
                wrong.append(counted in counts["gradients"])
        return 2 * sum(wrong) > len(wrong)


check_count_saved_bytes = checker(CountSavedBytes)


# Exercise 3 (NG-2) -------------------------------------------------------------------------


def _eval_grads_cleared(e: dict, f: dict, ctx) -> bool:
    return not ctx.case["train"] and is_zero_or_none(f, _param_shape(ctx, ctx.base))


@dataclass(frozen=True)
class RunStep(_Lesson02):
    """One function for train and eval: eval records nothing, train takes a clean step."""

    number = 3
    seed: int = 0
    lr: float = 0.1
    device: str | None = None

    names = _named(result="run_step(model, inputs, labels, optimizer, train)")
    allow = (
        Rule("model*.grad", lambda e, f, ctx: ctx.case["train"]),  # judged at step() time
        Rule("model*.grad", _eval_grads_cleared),  # zero_grad() on both paths is fine
        Rule("model*", zeroed_frozen),  # zero_grad(set_to_none=False) steps a frozen one by 0
        Rule("saved for backward", lambda e, f, ctx: ctx.case["train"]),
        # a step(closure) was called before the forward inside it raised
        Rule("optimizer.step() calls", lambda e, f, ctx: bool(ctx.case.get("raises"))),
    )
    blame = (
        Rule("* when optimizer.step() ran*", stale_added, "RG-4"),
        Rule("saved for backward", lambda e, f, ctx: _grads_only_cleared(ctx), "NG-2"),
    )

    def cases(self) -> list[dict]:
        axes = {
            "train": [True, False],
            "arrival": ["train", "eval", "train"],
            "outer": ["no_grad", "", "", "no_grad"],
            "grads": list(STALE),
            "frozen": [False, True, False, True, True],
            "optimizer": list(OPTIMIZERS),
            "dtype": ["float32", "float64", "float64"],
            "depth": [2, 3, 1],
            "layout": ["plain", "transposed", "row"],
            "lr": [self.lr, self.lr / 2, self.lr * 1.5],
            "groups": list(GROUPS),
        }
        drawn = draw(self.seed, axes, 6)
        # BatchNorm and Dropout in training mode: a second forward pass moves the statistics;
        # stale .grad in both of the optimizer's param_groups (every group is cleared)
        normed = {**drawn[1], "train": True, "arrival": "train_norm", "layout": "plain"}
        normed |= {"groups": 2, "grads": "stale", "frozen": False}
        # a layer frozen after the optimizer took it, its stale .grad kept (plain SGD)
        held = {**drawn[2], "train": True, "frozen": True, "optimizer": "sgd", "every_param": True}
        return [*drawn, raising(drawn[0], train=True, outer="no_grad"), normed, held]

    def describe(self, case: dict) -> Text:
        step = Text("train={t}, {o}(lr={lr:g})", "train={t}，优化器 {o}(lr={lr:g})")
        if case.get("stepped"):
            step = Text(
                "train={t}, {o}(lr={lr:g}) that has stepped before",
                "train={t}，之前已经更新过的优化器 {o}(lr={lr:g})",
            )
        step = with_groups(step.format(t=case["train"], o=case["optimizer"], lr=case["lr"]), case)
        step = with_every_parameter_held(step, case)
        return with_raising(_case_text(case, step), case)

    def compared(self, base: str, fields: dict) -> dict:
        """The model's mode is not part of the task (model.train(train) is fine)."""
        return {k: v for k, v in fields.items() if k != "training"}

    def build(self, case: dict, device) -> World:
        arrival = "train_norm" if case["arrival"] == "train_norm" else "train"  # else a plain MLP
        model, width = model_for(self.seed, {**case, "arrival": arrival}, device)
        model.train(case["arrival"].startswith("train"))
        rows = _ints(self.seed + 2, (6, 13))[0]
        x = laid_out(self.seed + 10, rows, width, case["layout"], device, case["dtype"])
        if case.get("raises"):
            x = one_short(x)
        g = trusted.generator().manual_seed(self.seed + 3)
        y = trusted.randint(0, model[-1].out_features, (x.shape[0],), generator=g).to(device)
        held = held_by_optimizer(model, case, self.seed + 200)
        optimizer = OPTIMIZERS[case["optimizer"]](grouped(held, case), case["lr"])
        if case.get("stepped"):
            stepped_before(optimizer, held, self.seed + 300)
        world = World(
            (model, x, y, optimizer, case["train"]), {"model": model, "x": x, "y": y}, device
        )
        names = {id(p): f"model{dotted(k)}" for k, p in model.named_parameters()}
        world.logged["optimizer.step() calls"] = {"kind": "int", "value": 0}

        def spy(opt, args, kwargs):
            calls = world.logged["optimizer.step() calls"]["value"] + 1
            world.logged["optimizer.step() calls"]["value"] = calls

            def record():
                for p in held:
                    world.record(f"{names[id(p)]}.grad when optimizer.step() ran #{calls}", p.grad)

            return after_closure(args, kwargs, record)

        optimizer.register_step_pre_hook(spy)
        return world

    def again_case(self) -> dict | None:
        """An evaluation (train=False) made twice in one world: its loss must follow the
        weights the caller changed in between (a loss memoised per weight tensor does not).
        Its optimizer has momentum and arrives having stepped before, so that the training
        step that follows (``between_calls``) has state of the caller's to keep."""
        evals = [c for c in self.cases() if not c["train"]]
        case = next((c for c in evals if self._arrives_with_grad(c)), None)
        case = case or next(iter(evals), None) or super().again_case()
        if case is None:
            return None
        stateful = case["optimizer"] if case["optimizer"] != "sgd" else "momentum"
        return {**case, "optimizer": stateful, "stepped": True}

    between = Text("took a training step (train=True)", "做了一次训练（train=True）")

    def between_calls(self, world: World, case: dict) -> None:
        """The caller trains after it evaluated, with the same objects: the other path."""
        model, x, y, optimizer, train = world.args
        world.args = (model, x, y, optimizer, not train)

    def calling(self, world: World, case: dict, fn):
        return Watched(world, case["outer"])


check_run_step = checker(RunStep)


# Exercise 4 (NG-4) -------------------------------------------------------------------------


def _is_inference(e: dict, f: dict, ctx) -> bool:
    return ctx.found.get("probe", {}).get("is_inference") is True


_BACKBONE_HOOKED = Text(
    ", the backbone carrying a forward hook of the caller's", "，骨干网络上挂着调用者自己的前向钩子"
)


@dataclass(frozen=True)
class FrozenFeatures(_Lesson02):
    """Features from a frozen backbone: no graph now, usable for training a head later."""

    number = 4
    seed: int = 0
    device: str | None = None

    names = {**_named(result="features", x="x"), **HOOK_CALLS_NAMED}
    blame = (Rule("probe:*", _is_inference, "NG-4"),)

    def cases(self) -> list[dict]:
        axes = {
            "arrival": ["train", "eval"],
            "outer": ["", "no_grad", ""],
            "x_grad": [True, False, False, True],
            "frozen": [False, True],
            "grads": ["stale", "none", "stale"],
            "dtype": ["float32", "float64"],
            "depth": [2, 3, 1],
            "layout": list(_LAYOUTS),
        }
        # the features are backbone(x) in the mode it arrived in: Dropout and batch
        # statistics at work in training mode (not an evaluation-mode forward pass)
        training = {"arrival": "train_norm", "outer": "", "x_grad": False, "frozen": False}
        training |= {"grads": "none", "dtype": "float64", "depth": 2, "layout": "plain"}
        training |= {"rows": 37}  # more rows than a chunk of 16 or 32 "to bound memory"
        drawn = draw(self.seed, axes, 4)
        # the caller's own forward hook on the backbone: backbone.forward(x) skips it
        hooked = {**drawn[1], "hooked": True}
        # one row in training mode: BatchNorm rejects it, and the caller must get that error
        one_row = {**training, "rows": 1, "raises": "BatchNorm"}
        # the last layer raises after BatchNorm ran in training mode: a retry moves it twice
        late = {**training, "rows": 5, "raises": "last"}
        return [*drawn, training, one_row, late, raising(drawn[0], outer=""), hooked]

    def describe(self, case: dict) -> Text:
        text = _case_text(case, *(["x.requires_grad=True"] if case["x_grad"] else []))
        if case.get("rows"):
            text = Text("{t}, x of {n} row(s)", "{t}，x 有 {n} 行").format(t=text, n=case["rows"])
        if case.get("raises") == "last":
            text = Text(
                "{t}; the last layer rejects its input (it raises after the others ran)",
                "{t}；最后一层拒绝它的输入（在其他层运行之后抛出异常）",
            ).format(t=text)
        return with_raising(with_hooked(text, case, _BACKBONE_HOOKED), case)

    def build(self, case: dict, device) -> World:
        last = _ints(self.seed + 3, (4, 9))[0]
        backbone, width = model_for(self.seed, case, device, last=last)
        rows = case.get("rows") or _ints(self.seed + 2, (3, 9))[0]
        x = laid_out(self.seed + 10, rows, width, case["layout"], device, case["dtype"])
        x = one_short(x) if case.get("raises") is True else x
        if case.get("raises") == "last":
            backbone[-1].in_features -= 1  # a weight one column short
            backbone[-1].weight = torch.nn.Parameter(backbone[-1].weight.detach()[:, 1:].clone())
        x.requires_grad_(case["x_grad"])
        world = World((backbone, x), {"backbone": backbone, "x": x}, device)
        if case.get("hooked"):
            hook_of_callers(world, backbone)
        world.head = relu_mlp(self.seed + 7, [last, 2], case["dtype"], device)
        world.target = uniform(self.seed + 8, x.shape[0], 2, device=device).to(x.dtype)
        return world

    def calling(self, world: World, case: dict, fn):
        return Watched(world, case["outer"], dropout_seed=self.seed, graphs=True)

    def probe(self, world: World, value, again) -> dict:
        if trusted.type_(value) not in TENSORS:
            return {}
        head = world.head
        loss = call(lambda: F.mse_loss(head(value), world.target))
        grad = call(lambda: trusted.autograd_grad(loss.value, head[0].weight)[0])
        return {
            "is_inference": bool(value.is_inference()),
            "head": cpu_copy(grad.value) if loss.ok and grad.ok else "RuntimeError",
        }


check_frozen_features = checker(FrozenFeatures)


# Exercise 5 (NG-5, NG-4) -------------------------------------------------------------------


def _same_but_history(e: dict, f: dict) -> bool:
    keys = (set(e) | set(f)) - {"requires_grad", "grad_fn"}
    return all(close(e.get(k), f.get(k), (1e-4, 1e-5)) for k in keys)


_X_GRAD = Text("x a leaf that requires grad", "x 是需要梯度的叶子张量")


@dataclass(frozen=True)
class InputSaliency(_Lesson02):
    """d(model(x).sum())/dx, also when the caller runs under inference_mode on inference tensors."""

    number = 5
    seed: int = 0
    device: str | None = None

    names = _named(result="saliency", x="x")
    # the prompt asks for the gradient's values: one that keeps history (torch.func.grad
    # with grad mode on) is not wrong
    allow = (Rule("result", lambda e, f, ctx: _same_but_history(e, f)),)

    def cases(self) -> list[dict]:
        axes = {
            "outer": ["inference_mode", "no_grad", "", "inference_mode"],
            "arrival": ["train", "eval"],
            "grads": ["stale", "none", "none"],
            "frozen": [False, True],
            "dtype": ["float32", "float64"],
            "depth": [2, 3, 1],
            "layout": ["plain", "transposed", "row"],
            "x_grad": [False, True, False],  # a leaf the caller made with requires_grad=True
        }
        cases = draw(self.seed, axes, 4)
        for case in cases:  # an inference tensor cannot require grad
            case["x_grad"] = case["x_grad"] and case["outer"] != "inference_mode"
        # the gradient of model(x) in the mode it arrived in: Dropout at work in training
        # mode (an evaluation-mode forward pass gives another one). Not BatchNorm: a right
        # torch.func.grad answer cannot update its running statistics.
        dropout = {**cases[0], "arrival": "train_dropout", "outer": "inference_mode"}
        cases.append(dropout | {"x_grad": False, "depth": 2, "frozen": False})
        cases.append({**cases[1], "outer": "", "x_grad": "held"})  # x.grad the caller's own
        # a function that fails inside inference mode only is evidence of NG-5: judge it last
        cases = sorted(cases, key=lambda case: case["outer"] == "inference_mode")
        return [*cases, raising(cases[-1], outer="inference_mode", x_grad=False)]

    def describe(self, case: dict) -> Text:
        extra = [_X_GRAD] if case["x_grad"] else []
        if case["x_grad"] == "held":
            extra.append(Text("x.grad holding the caller's gradient", "x.grad 里有调用者的梯度"))
        return with_raising(_case_text(case, *extra), case)

    def build(self, case: dict, device) -> World:
        model, width = model_for(self.seed, case, device)
        rows = _ints(self.seed + 2, (2, 7))[0]
        x = laid_out(self.seed + 10, rows, width, case["layout"], device, case["dtype"])
        x = one_short(x) if case.get("raises") else x
        if case["x_grad"]:
            x = x.detach().requires_grad_()  # a leaf of the caller's, as the layout left it
        if case["x_grad"] == "held":
            x.grad = uniform(self.seed + 4, *x.shape, device=device, dtype=x.dtype)
        if case["outer"] == "inference_mode":
            with trusted.inference_mode():
                x = x.clone()  # an inference tensor, as the caller made it
        return World((model, x), {"model": model, "x": x}, device)

    def calling(self, world: World, case: dict, fn):
        return Watched(world, case["outer"], saved=False, dropout_seed=self.seed)

    def blame_error(self, message: str, case: dict) -> str | None:
        if "does not require grad" in message and case["outer"] == "inference_mode":
            return "NG-5"  # it worked where enable_grad can turn recording on
        return self.classify(message)


check_input_saliency = checker(InputSaliency)


# PyTorch errors, explained ------------------------------------------------------------------

_ERRORS: tuple[tuple[tuple[str, ...], str | None, Text], ...] = (
    (
        ("Inference tensors cannot be saved for backward",),
        "NG-4",
        Text(
            "an inference tensor (made under torch.inference_mode()) met a computation "
            "autograd records; make it under torch.no_grad(), or clone() it outside "
            "inference mode",
            "一个推理张量（在 torch.inference_mode() 下创建）进入了自动求导要记录的计算；"
            "请改在 torch.no_grad() 下计算它，或在推理模式之外对它 clone()",
        ),
    ),
    (
        ("inference tensor outside InferenceMode",),
        "NG-4",
        Text(
            "x is an inference tensor: outside inference mode it cannot be made to require "
            "grad; clone() it outside inference mode first",
            "x 是推理张量：在推理模式之外不能给它设置 requires_grad=True；"
            "请先在推理模式之外对它 clone()",
        ),
    ),
    (
        ("does not require grad",),
        None,
        Text(
            "autograd recorded no graph for this value: grad mode was off when it was computed "
            "(the caller may run under torch.no_grad(), and torch.enable_grad() cannot turn "
            "recording on inside torch.inference_mode()), or nothing it used requires grad",
            "自动求导没有为这个值记录计算图：计算它时梯度模式是关闭的（调用者可能处在 "
            "torch.no_grad() 下；而在 torch.inference_mode() 里，torch.enable_grad() 也无法"
            "重新开启记录），或者它用到的张量都不需要梯度",
        ),
    ),
    (
        ("unpack_hook",),
        None,
        Text(
            "backward asks the unpack hook for each saved tensor: the pack hook must return "
            "something unpack can turn back into it",
            "反向传播会通过 unpack 钩子取回每个被保存的张量：pack 钩子返回的东西必须能让 "
            "unpack 还原出它",
        ),
    ),
    (
        ("same device",),
        None,
        Text(
            "the tensors of one operation are on different devices: make new tensors on the "
            "inputs' device, not on a fixed one",
            "同一个运算里的张量位于不同设备上：新建的张量要放在输入所在的设备上，不要写死某个设备",
        ),
    ),
    (
        ("dtype", "scalar type"),
        None,
        Text(
            "the tensors of one operation have different dtypes: keep the dtype the inputs "
            "arrive in instead of hard-coding one",
            "同一个运算里的张量 dtype 不一致：请沿用输入传进来时的 dtype，不要写死某个 dtype",
        ),
    ),
    (
        ("shape", "size of tensor", "out of range"),
        None,
        Text(
            "the shapes do not fit: the checks use models and batches of other sizes, so do "
            "not hard-code shapes or layers",
            "形状对不上：检查会使用其他尺寸的模型和批次，不要把形状或层写死",
        ),
    ),
)


EXERCISES = numbered(
    globals(),
    ("evaluate", "an evaluation that keeps nothing", "什么都不保留的评估", "NG-1 NG-3"),
    ("count_saved_bytes", "measure what backward needs", "测量反向传播需要保存什么", "NG-2"),
    ("run_step", "one step for train and eval", "训练与评估共用一个步骤", "NG-2"),
    ("frozen_features", "features for a head trained later", "为之后训练的头部提取特征", "NG-4"),
    ("input_saliency", "a gradient in inference_mode", "在 inference_mode 中求梯度", "NG-5 NG-4"),
)

self_check = self_checker(EXERCISES)
