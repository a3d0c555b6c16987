"""Checks for lesson 02: no_grad, inference_mode, and what autograd keeps in memory.

Each check is an ``observe`` / ``judge`` pair (see autograder/common/protocol.py).
``observe`` calls the learner's function several times — models of other depths,
sizes and dtypes, arriving in train or eval mode, with stale ``.grad`` where an
optimizer step is involved, called under an outer ``no_grad`` / ``inference_mode``
where the scenario allows — and measures what only the learner's process can see:
bytes saved for backward during the call, graphs still alive afterwards, the grad
mode before and after, the modes the model ran in, whether an output is an
inference tensor. ``judge`` rebuilds every input on the CPU from the same seeds,
computes an independent reference and compares.
"""

from __future__ import annotations

import contextlib
import dataclasses
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import torch

from autograder.common import compare as c
from autograder.common import trusted
from autograder.common.exercise import Exercise, NotAttempted
from autograder.common.i18n import Text
from autograder.common.inputs import resolve_device, uniform
from autograder.common.observation import Seen, snapshot
from autograder.common.protocol import Check, call, returned, verdict
from autograder.common.result import CheckFailed, CheckResult, require
from autograder.kernel.measure import AliveSavedBytes, saved_bytes
from autograder.kernel.selfcheck import run_self_check

# Inputs ------------------------------------------------------------------------------------


def _dtype(name: str) -> torch.dtype:
    return getattr(torch, name)


def _ints(seed: int, *ranges: tuple[int, int]) -> list[int]:
    """One integer from each [low, high) range, drawn from the seed."""
    g = trusted.generator().manual_seed(seed)
    return [int(trusted.randint(low, high, (1,), generator=g)) for low, high in ranges]


def make_mlp(seed: int, sizes: list[int], dtype: str = "float32", device="cpu"):
    """Linear layers of the given sizes with ReLU between them; weights from the seed."""
    g = trusted.generator().manual_seed(seed)
    layers: list[torch.nn.Module] = []
    for k, (n_in, n_out) in enumerate(zip(sizes, sizes[1:], strict=False)):
        linear = torch.nn.Linear(n_in, n_out)
        with trusted.no_grad():
            linear.weight.copy_((trusted.rand(n_out, n_in, generator=g) * 2 - 1) / n_in**0.5)
            linear.bias.copy_(trusted.rand(n_out, generator=g) - 0.5)
        layers.append(linear)
        if k < len(sizes) - 2:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers).to(device=device, dtype=_dtype(dtype))


@dataclass(frozen=True)
class Scenario:
    """One call of the learner's function: the model, the data and the caller's state."""

    number: int
    seed: int
    depth: int
    dtype: str = "float32"
    training: bool = True  # the mode the model arrives in
    outer: str = ""  # what the caller runs under: "", "no_grad" or "inference_mode"
    batches: int = 1
    stale_grads: bool = False  # the parameters arrive with a non-empty .grad
    train: bool | None = None  # run_step's flag
    x_requires_grad: bool = False
    short_last: bool = False  # the last batch has fewer rows, as at the end of a data set

    def sizes(self, last: int | None = None) -> list[int]:
        """Layer sizes: inputs, hidden widths, outputs (``last`` fixes the outputs)."""
        drawn = _ints(self.seed, (4, 10), *[(5, 13)] * (self.depth - 1), (3, 6))
        return drawn if last is None else [*drawn[:-1], last]

    def describe(self) -> Text:
        mode = Text("train mode", "训练模式") if self.training else Text("eval mode", "评估模式")
        parts = [
            Text("{d}-layer model in {m}", "{d} 层模型，{m}").format(d=self.depth, m=mode),
            self.dtype,
        ]
        if self.batches > 1:
            parts.append(Text("{n} batches", "{n} 个批次").format(n=self.batches))
        if self.short_last:
            parts.append(Text("the last batch smaller", "最后一个批次较小"))
        if self.train is not None:
            parts.append(f"train={self.train}")
        if self.stale_grads:
            parts.append(Text("parameters with a non-empty .grad", "参数的 .grad 非空"))
        if self.x_requires_grad:
            parts.append("x.requires_grad=True")
        if self.outer == "inference_mode":
            parts.append(Text("x is an inference tensor", "x 是推理张量"))
        if self.outer:
            parts.append(
                Text("called under torch.{o}()", "在 torch.{o}() 下调用").format(o=self.outer)
            )
        en = ", ".join(p if isinstance(p, str) else p.en for p in parts)
        zh = "，".join(p if isinstance(p, str) else p.zh for p in parts)
        return Text(en, zh)


def _outer(name: str):
    """The caller's context: nothing, torch.no_grad() or torch.inference_mode()."""
    if name == "no_grad":
        return trusted.no_grad()
    if name == "inference_mode":
        return trusted.inference_mode()
    return contextlib.nullcontext()


def _stale_grads(model: torch.nn.Module, seed: int) -> dict[str, torch.Tensor]:
    """Gradients left over from an earlier step, on the CPU."""
    return {
        name: uniform(seed + 50 + k, *p.shape, device="cpu", dtype=p.dtype)
        for k, (name, p) in enumerate(model.named_parameters())
    }


def _set_grads(model: torch.nn.Module, grads: dict[str, torch.Tensor]) -> None:
    for name, p in model.named_parameters():
        p.grad = grads[name].to(p.device).clone() if name in grads else None


# Observing and judging the caller's state ----------------------------------------------------


def _module_state(model: torch.nn.Module) -> dict:
    """Parameters, their .grad and every submodule's mode, as plain data."""
    named = list(model.named_parameters())
    return {
        "params": {name: snapshot(p) for name, p in named},
        "grads": {name: snapshot(p.grad) for name, p in named},
        "training": [bool(m.training) for m in model.modules()],
    }


def _same(found: Seen, want: torch.Tensor | None) -> bool:
    if want is None:
        return found.kind == "none"
    return (
        found.is_tensor
        and found.dtype == want.dtype
        and found.shape == tuple(want.shape)
        and bool(trusted.equal(found.value, want.detach().cpu()))
    )


def _names(names: list[str]) -> str:
    return ", ".join(names[:4]) + (", …" if len(names) > 4 else "")


UNCHANGED = Text("unchanged", "不变")


def _model_as_found(
    state: dict,
    model: torch.nn.Module,
    grads: dict[str, torch.Tensor],
    training: bool,
    grads_misconception: str | None = None,
) -> list[CheckResult]:
    """The model's parameters, their .grad and its mode are as they were before the call."""
    params, found_grads = state.get("params", {}), state.get("grads", {})
    named = list(model.named_parameters())
    changed = [n for n, p in named if not _same(Seen(params.get(n, {"kind": "none"})), p)]
    flags = [
        n
        for n, p in named
        if Seen(params.get(n, {"kind": "none"})).requires_grad != p.requires_grad
    ]
    moved = [n for n, _ in named if not _same(Seen(found_grads.get(n)), grads.get(n))]
    modes = state.get("training", [])
    mode_kept = modes == [training] * len(modes) and len(modes) == len(list(model.modules()))
    want_mode = "model.train()" if training else "model.eval()"
    return [
        CheckResult(
            Text("the model's parameters are unchanged", "模型的参数保持不变"),
            not changed,
            UNCHANGED,
            Text("changed: {n}", "已改变：{n}").format(n=_names(changed)),
        ),
        CheckResult(
            Text("requires_grad of the model's parameters", "模型参数的 requires_grad"),
            not flags,
            UNCHANGED,
            Text("changed: {n}", "已改变：{n}").format(n=_names(flags)),
        ),
        CheckResult(
            Text("the .grad of the model's parameters", "模型参数的 .grad"),
            not moved,
            Text("unchanged (as the caller left them)", "不变（保持调用者留下的样子）"),
            Text("changed: {n}", "已改变：{n}").format(n=_names(moved)),
            grads_misconception if moved else None,
        ),
        CheckResult(
            Text("the model's mode (model.training)", "模型的模式（model.training）"),
            mode_kept,
            Text("as it arrived ({m})", "与传入时相同（{m}）").format(m=want_mode),
            Text("changed to {m}", "被改成了 {m}").format(
                m="model.train()" if modes[:1] == [True] else "model.eval()"
            ),
        ),
    ]


def _tensor_as_found(found: Seen, grad: Seen, want: torch.Tensor, name: str) -> list[CheckResult]:
    """The caller's tensor keeps its values, its requires_grad flag and an empty .grad."""
    return [
        CheckResult(
            Text(
                "{name} (the caller's tensor) is unchanged", "{name}（调用者的张量）保持不变"
            ).format(name=name),
            _same(found, want),
            UNCHANGED,
            Text("changed", "已改变"),
        ),
        c.requires_grad(found, want.requires_grad, f"{name}"),
        CheckResult(
            f"{name}.grad",
            grad.kind == "none",
            "None",
            grad.describe(),
        ),
    ]


def _grad_mode_after(record: dict) -> CheckResult:
    before, after = record["grad_before"], record["grad_after"]
    return CheckResult(
        Text(
            "grad mode after your function returned (torch.is_grad_enabled())",
            "函数返回后的梯度模式（torch.is_grad_enabled()）",
        ),
        before == after,
        Text("{v}, as before the call", "{v}，与调用前相同").format(v=before),
        str(after),
    )


def _is_float(found: Seen, name: str, misconception: str | None = None) -> CheckResult:
    return CheckResult(
        Text("{name} is a Python float", "{name} 是 Python float").format(name=name),
        found.kind == "float",
        "float",
        found.describe(),
        misconception if found.kind != "float" else None,
    )


def _nothing_saved(record: dict, misconception: str | None) -> CheckResult:
    packed, alive = record["packed"], record.get("alive", 0)
    found = Text("{n} bytes", "{n} 字节").format(n=packed)
    if record.get("volatile"):
        found = Text(
            "{n} bytes; PyTorch warned: “{w}”", "{n} 字节；PyTorch 给出了警告：“{w}”"
        ).format(n=packed, w=record["volatile"])
    elif alive:
        found = Text(
            "{n} bytes, and graphs holding {a} bytes still alive after your function returned",
            "{n} 字节，且函数返回后仍有计算图存活，占用 {a} 字节",
        ).format(n=packed, a=alive)
    return CheckResult(
        Text("bytes saved for backward while it ran", "运行期间为反向传播保存的字节数"),
        packed == 0 and not alive,
        "0",
        found,
        misconception if packed or alive else None,
    )


_CALL = Text("call {n} ({s}): {what}", "第 {n} 次调用（{s}）：{what}")


def _in(sc: Scenario | SavedCase, results: list[CheckResult]) -> list[CheckResult]:
    """The same results, each titled with the call they come from."""
    where = sc.describe()
    return [
        dataclasses.replace(r, what=_CALL.format(n=sc.number, s=where, what=r.what))
        for r in results
    ]


def _returned(
    ex: Text,
    sc: Scenario | SavedCase,
    record: dict,
    name: str,
    classify=None,
    title: Text | None = None,
) -> Seen:
    """protocol.returned, with the call's scenario (and ``title``, if given) in the feedback.

    ``classify`` gives (misconception ID or None, explanation or None) for a message.
    """
    diagnose = classify or _explain
    try:
        return returned(
            ex,
            record,
            name,
            classify=lambda message: diagnose(message)[0],
            explain=lambda message: diagnose(message)[1],
        )
    except NotAttempted:
        raise
    except CheckFailed as failure:
        failures = failure.failures
        if title is not None:
            failures = [dataclasses.replace(r, what=title) for r in failures]
        raise CheckFailed(ex, _in(sc, failures)) from None


# PyTorch errors, explained ------------------------------------------------------------------

DTYPE_MIX = Text(
    "the tensors of one operation have different dtypes: keep the dtype the inputs arrive in "
    "instead of hard-coding one",
    "同一个运算里的张量 dtype 不一致：请沿用输入传进来时的 dtype，不要写死某个 dtype",
)
DEVICE_MIX = Text(
    "the tensors of one operation are on different devices: make new tensors on the inputs' "
    "device (x.device), not on a fixed one",
    "同一个运算里的张量位于不同设备上：新建的张量要放在输入所在的设备（x.device）上，"
    "不要写死某个设备",
)
SHAPE_MIX = Text(
    "the shapes do not fit: the checks use models and batches of other sizes, so do not "
    "hard-code shapes or layers",
    "形状对不上：检查会使用其他尺寸的模型和批次，不要把形状或层写死",
)
NO_GRAPH = Text(
    "autograd recorded no graph for this value: grad mode was off when it was computed "
    "(e.g. the caller runs under torch.no_grad()), or nothing it used requires grad",
    "自动求导没有为这个值记录计算图：计算它时梯度模式是关闭的（例如调用者处在 torch.no_grad() "
    "下），或者它用到的张量都不需要梯度",
)
NO_GRAPH_IN_INFERENCE = Text(
    "the model ran with grad mode on inside inference mode, and inference mode wins: nothing "
    "was recorded; leave it for the block with torch.inference_mode(False)",
    "模型运行时梯度模式虽然开启，却仍处在推理模式中，而推理模式优先：什么都没有被记录；"
    "请用 torch.inference_mode(False) 在这个代码块里退出推理模式",
)
INFERENCE_SAVED = Text(
    "an inference tensor (made under torch.inference_mode()) met a computation autograd "
    "records; make it under torch.no_grad(), or clone() it outside inference mode",
    "一个推理张量（在 torch.inference_mode() 下创建）进入了自动求导要记录的计算；"
    "请改在 torch.no_grad() 下计算它，或在推理模式之外对它 clone()",
)
INFERENCE_LEAF = Text(
    "x is an inference tensor: outside inference mode it cannot be made to require grad; "
    "clone() it outside inference mode first",
    "x 是推理张量：在推理模式之外不能给它设置 requires_grad=True；请先在推理模式之外对它 clone()",
)
UNPACK = Text(
    "backward asks the unpack hook for each saved tensor: the pack hook must return something "
    "unpack can turn back into it (e.g. return saved.detach() and unpack it as it is)",
    "反向传播会通过 unpack 钩子取回每个被保存的张量：pack 钩子返回的东西必须能让 unpack 还原出它"
    "（例如 pack 返回 saved.detach()，unpack 原样返回）",
)


Diagnosis = tuple[str | None, Text | None]


def _explain(message: str, in_inference_with_grad: bool = False) -> Diagnosis:
    """A misconception ID where the message is evidence of one, and a one-line explanation."""
    if "Inference tensors cannot be saved for backward" in message:
        return "NG-4", INFERENCE_SAVED
    if "inference tensor outside InferenceMode" in message:
        return "NG-4", INFERENCE_LEAF
    if "does not require grad" in message:
        if in_inference_with_grad:
            return "NG-5", NO_GRAPH_IN_INFERENCE
        return None, NO_GRAPH
    if "unpack_hook" in message:
        return None, UNPACK
    if "same device" in message or "to be on the same device" in message:
        return None, DEVICE_MIX
    if "dtype" in message or "scalar type" in message:
        return None, DTYPE_MIX
    if "shape" in message or "size of tensor" in message:
        return None, SHAPE_MIX
    return None, None


# Exercise 1 (NG-1, NG-3) -------------------------------------------------------------------


def _classifier_inputs(sc: Scenario, device):
    sizes = sc.sizes()
    model = make_mlp(sc.seed, sizes, sc.dtype, device)
    g = trusted.generator().manual_seed(sc.seed + 1)
    full = _ints(sc.seed + 2, (6, 13))[0]
    rows = [full] * sc.batches
    if sc.short_last:
        rows[-1] = full // 2
    batches = [
        (
            uniform(sc.seed + 100 + k, n, sizes[0], device="cpu", dtype=_dtype(sc.dtype)).to(
                device
            ),
            trusted.randint(0, sizes[-1], (n,), generator=g).to(device),
        )
        for k, n in enumerate(rows)
    ]
    return model, batches


@dataclass(frozen=True)
class Evaluate(Check):
    """Mean loss and accuracy as Python floats, with nothing saved for backward."""

    number = 1
    seed: int = 0
    count: int = 4
    device: str | None = None

    def scenarios(self) -> tuple[Scenario, ...]:
        s = self.seed * 10
        return (
            Scenario(1, s + 1, depth=2, training=True, batches=self.count),
            Scenario(
                2,
                s + 2,
                3,
                "float64",
                False,
                batches=self.count + 1,
                stale_grads=True,
                short_last=True,
            ),
            Scenario(3, s + 3, depth=1, training=True, outer="no_grad", batches=2),
        )

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        return {"calls": [self._observe(fn, sc, device) for sc in self.scenarios()]}

    def _observe(self, fn, sc: Scenario, device) -> dict:
        model, batches = _classifier_inputs(sc, device)
        model.train(sc.training)
        _set_grads(model, _stale_grads(model, sc.seed) if sc.stale_grads else {})
        originals = [(x.clone(), y.clone()) for x, y in batches]
        params = list(model.parameters())
        with _outer(sc.outer):
            before = trusted.is_grad_enabled()
            with warnings.catch_warnings(record=True) as caught, AliveSavedBytes(params) as kept:
                warnings.simplefilter("always")
                out = call(fn, model, batches)
            after = trusted.is_grad_enabled()
            trusted.set_grad_enabled(before)
        alive = kept.alive()  # while the returned value is still held
        return {
            "call": out.record(),
            "packed": kept.packed,
            "alive": alive,
            "volatile": next((str(w.message) for w in caught if "volatile" in str(w.message)), ""),
            "grad_before": bool(before),
            "grad_after": bool(after),
            "model": _module_state(model),
            "batches_kept": all(
                bool(trusted.equal(x, x0)) and bool(trusted.equal(y, y0))
                for (x, y), (x0, y0) in zip(batches, originals, strict=True)
            ),
        }

    def judge(self, obs: dict) -> None:
        for sc, record in zip(self.scenarios(), obs["calls"], strict=True):
            self._judge(sc, record)

    def _judge(self, sc: Scenario, record: dict) -> None:
        ex = self.heading
        out = _returned(ex, sc, record["call"], "evaluate")
        require(ex, _in(sc, [c.returns_tuple(out, 2, "(mean_loss, accuracy)")]))
        mean_loss, accuracy = out.items
        model, batches = _classifier_inputs(sc, "cpu")
        stale = _stale_grads(model, sc.seed) if sc.stale_grads else {}
        as_found = _model_as_found(record["model"], model, stale, sc.training, "NG-3")
        called_backward = not as_found[2].passed
        keeps_graphs = record["alive"] > 0
        if record["volatile"]:
            saved_id = "NG-1"
        else:
            saved_id = "NG-3" if keeps_graphs or called_backward else None
        tensor_id = "NG-3" if keeps_graphs else None
        results = [
            _grad_mode_after(record),
            _nothing_saved(record, saved_id),
            _is_float(mean_loss, "mean_loss", tensor_id),
            _is_float(accuracy, "accuracy", tensor_id),
            *as_found,
            CheckResult(
                Text("the batches are unchanged", "批次数据保持不变"),
                record["batches_kept"],
                UNCHANGED,
                Text("changed", "已改变"),
            ),
        ]
        require(ex, _in(sc, results))
        with trusted.no_grad():
            losses = [torch.nn.functional.cross_entropy(model(x), y) for x, y in batches]
            hits = [(model(x).argmax(dim=1) == y).double().mean() for x, y in batches]
        want_loss = sum(loss.double() for loss in losses) / len(batches)
        want_accuracy = sum(hits) / len(batches)
        found_loss = trusted.tensor(mean_loss.value, dtype=torch.float64)
        found_accuracy = trusted.tensor(accuracy.value, dtype=torch.float64)
        require(
            ex,
            _in(
                sc,
                [
                    c.values(found_loss, want_loss, "mean_loss", rtol=1e-4),
                    c.values(found_accuracy, want_accuracy, "accuracy", rtol=1e-4),
                ],
            ),
        )


def check_evaluate(fn, seed: int = 0, count: int = 4, device=None) -> None:
    verdict(Evaluate(seed, count, None if device is None else str(device)), fn)


# Exercise 2 (NG-2) -------------------------------------------------------------------------


def _values(g, *shape: int, dtype=torch.float32, device="cpu", leaf: bool = True):
    """Values in [-1, 1) from ``g``, made on the CPU then moved, so every device sees the same."""
    t = (trusted.rand(*shape, generator=g, dtype=torch.float64) * 2 - 1).to(device, dtype)
    return t.requires_grad_(leaf)


def _linear_on_batch(g, device):
    n_in, n_out, rows = (int(v) for v in trusted.randint(3, 9, (3,), generator=g))
    layer = torch.nn.Linear(n_in, n_out).to(torch.float64)
    with trusted.no_grad():
        layer.weight.copy_(_values(g, n_out, n_in, dtype=torch.float64, leaf=False))
        layer.bias.copy_(_values(g, n_out, dtype=torch.float64, leaf=False))
    layer = layer.to(device)
    x = _values(g, rows, n_in, dtype=torch.float64, device=device, leaf=False)
    return layer, (x,), list(layer.parameters())


def _square(g, device):
    x = _values(g, *(int(v) for v in trusted.randint(2, 9, (2,), generator=g)), device=device)
    return (lambda t: t * t), (x,), [x]


def _exp_sum(g, device):
    x = _values(
        g, int(trusted.randint(3, 20, (1,), generator=g)), dtype=torch.float64, device=device
    )
    return (lambda t: t.exp().sum()), (x,), [x]


def _sum_only(g, device):
    x = _values(g, *(int(v) for v in trusted.randint(2, 9, (2,), generator=g)), device=device)
    return (lambda t: t.sum()), (x,), [x]


def _strided(g, device):
    rows, cols = (int(v) for v in trusted.randint(2, 7, (2,), generator=g))
    a = _values(g, 2 * rows, cols, device=device)
    b = _values(g, rows, cols, device=device)
    return (lambda u, v: u[::2] * v), (a, b), [a, b]


def _expanded(g, device):
    rows, cols = (int(v) for v in trusted.randint(3, 8, (2,), generator=g))
    a = _values(g, cols, dtype=torch.float64, device=device)
    b = _values(g, rows, cols, dtype=torch.float64, device=device)
    return (lambda u, v: u.expand(rows, cols) * v), (a, b), [a, b]


def _gather(g, device):
    rows, cols = (int(v) for v in trusted.randint(2, 8, (2,), generator=g))
    x = _values(g, rows, cols, device=device)
    index = trusted.randint(0, cols, (rows, 3), generator=g).to(device)
    return (lambda t, i: torch.gather(t, 1, i)), (x, index), [x]


def _sigmoid_bf16(g, device):
    x = _values(g, *(int(v) for v in trusted.randint(2, 9, (2,), generator=g)), leaf=False)
    x = x.to(device, torch.bfloat16).requires_grad_()
    return torch.sigmoid, (x,), [x]


def _mlp_on_leaf(g, device):
    n_in, hidden, n_out, rows = (int(v) for v in trusted.randint(2, 8, (4,), generator=g))
    mlp = make_mlp(int(trusted.randint(0, 1000, (1,), generator=g)), [n_in, hidden, n_out])
    mlp = mlp.to(device, torch.float64)
    x = _values(g, rows, n_in, dtype=torch.float64, device=device)
    return mlp, (x,), [x, *mlp.parameters()]


@dataclass(frozen=True)
class SavedCase:
    """One operation the learner's counter measures, and the caller's grad mode."""

    number: int
    what: Text
    build: Callable
    outer: str = ""

    def describe(self) -> Text:
        if not self.outer:
            return self.what
        return Text("{w}, called under torch.{o}()", "{w}，在 torch.{o}() 下调用").format(
            w=self.what, o=self.outer
        )


SAVED_CASES = (
    SavedCase(1, Text("x * x for a leaf x", "叶子张量 x 的 x * x"), _square),
    SavedCase(2, Text("a linear layer on a plain batch", "线性层作用于普通批次"), _linear_on_batch),
    SavedCase(3, Text("x.exp().sum() in float64", "float64 下的 x.exp().sum()"), _exp_sum),
    SavedCase(4, Text("x.sum()", "对 x 求和：x.sum()"), _sum_only),
    SavedCase(5, Text("a[::2] * b (a strided view)", "a[::2] * b（步长视图）"), _strided),
    SavedCase(
        6, Text("a.expand(n, m) * b in float64", "float64 下的 a.expand(n, m) * b"), _expanded
    ),
    SavedCase(7, Text("torch.gather(x, 1, index)", "用 torch.gather(x, 1, index) 取元素"), _gather),
    SavedCase(8, Text("torch.sigmoid in bfloat16", "bfloat16 下的 torch.sigmoid"), _sigmoid_bf16),
    SavedCase(9, Text("a small MLP on a leaf batch", "小型 MLP 作用于叶子批次"), _mlp_on_leaf),
    SavedCase(10, Text("x * x for a leaf x", "叶子张量 x 的 x * x"), _square, "no_grad"),
)


BACKWARD = Text(
    "backward through the result afterwards (torch.autograd.grad)",
    "之后对 result 做反向传播（torch.autograd.grad）",
)
NO_BACKWARD = {"raised": "RuntimeError", "message": "result has no graph to go backward through"}


@dataclass(frozen=True)
class Counts:
    """One case rebuilt on the CPU: the right count, and what typical wrong counters find."""

    result: torch.Tensor
    leaves: list
    exact: int  # every packed tensor, element_size() * nelement(), repeats included
    storage: int  # whole storages instead of tensors
    distinct: int  # a tensor packed twice counted once
    gradient_sized: frozenset[int]  # the result's or the inputs' size, as if gradients were kept

    def misread(self, counted: int, gradients_first: bool = False) -> str | None:
        """Which wrong way of counting gives ``counted``, where it is not the right count."""
        if counted == self.exact:
            return None
        if gradients_first and counted in self.gradient_sized:
            return "gradients"
        if counted == self.storage:
            return "storage"
        if counted == self.distinct:
            return "distinct"
        return "gradients" if counted in self.gradient_sized else "other"


def _counts(op, args, leaves, outer: str) -> Counts:
    exact, storage, distinct = 0, 0, {}

    def pack(saved):
        nonlocal exact, storage
        size = saved.element_size() * saved.nelement()
        exact += size
        storage += saved.untyped_storage().nbytes()
        distinct[(saved.data_ptr(), tuple(saved.shape))] = size
        return saved.detach()

    with _outer(outer), trusted.saved_tensors_hooks(pack, lambda saved: saved):
        result = op(*args)

    def size(tensors) -> int:
        return sum(t.element_size() * t.nelement() for t in tensors if t.requires_grad)

    tensors = [a for a in args if trusted.isinstance_(a, trusted.tensor_type)]
    # zero is left out: it is also what a counter that never sees a saved tensor finds
    sized = frozenset({size([result]), size(tensors), size(leaves)} - {0})
    return Counts(result, leaves, exact, storage, sum(distinct.values()), sized)


MISREAD = {
    "storage": Text(
        "{n} (the size of the saved tensors' whole storages, not of the tensors)",
        "{n}（这是被保存张量所在的整块存储的大小，而不是张量本身的大小）",
    ),
    "distinct": Text(
        "{n} (each tensor counted once; a tensor saved twice must count twice)",
        "{n}（每个张量只算了一次；被保存两次的张量要算两次）",
    ),
}


@dataclass(frozen=True)
class CountSavedBytes(Check):
    """The learner's counter must agree with the course's, keep backward working, call fn once."""

    number = 2
    seed: int = 0
    device: str | None = None

    def _build(self, case: SavedCase, device):
        return case.build(trusted.generator().manual_seed(self.seed * 100 + case.number), device)

    def _grad_outputs(self, case: SavedCase, result: torch.Tensor) -> torch.Tensor:
        seeded = uniform(self.seed * 100 + case.number + 50, result.numel(), device="cpu")
        return seeded.reshape(result.shape).to(result.device, result.dtype)

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        return {"calls": [self._observe(fn, case, device) for case in SAVED_CASES]}

    def _observe(self, fn, case: SavedCase, device) -> dict:
        op, args, leaves = self._build(case, device)
        results = []

        def counted(*inputs):
            result = op(*inputs)
            results.append(result)
            return result

        with _outer(case.outer):
            before = trusted.is_grad_enabled()
            out = call(fn, counted, *args)
            after = trusted.is_grad_enabled()
            trusted.set_grad_enabled(before)
        pair = out.ok and trusted.type_(out.value) is tuple and trusted.len_(out.value) == 2
        found = out.value[0] if pair else None
        ours = [r for r in results if r is found]
        record = {
            "call": out.record(),
            "calls": len(results),
            "same_result": bool(ours),
            "grad_before": bool(before),
            "grad_after": bool(after),
        }
        if ours and ours[0].grad_fn is not None:
            result = ours[0]
            seed = self._grad_outputs(case, result)
            grads = call(trusted.autograd_grad, result, leaves, seed, allow_unused=True)
            record["backward"] = grads.record()
        return record

    def judge(self, obs: dict) -> None:
        counts = [self._counts(case) for case in SAVED_CASES]
        found = [
            (counts_k, self._counted(record))
            for counts_k, record in zip(counts, obs["calls"], strict=True)
            if self._counted(record) is not None
        ]
        wrong = [(k, n) for k, n in found if n != k.exact]
        sized = [k.misread(n, gradients_first=True) for k, n in wrong].count("gradients")
        # NG-2 shows as a pattern: most wrong counts are the size of the gradients to come,
        # and at least one of them is no other known way of counting wrong
        ng2 = sized >= len(wrong) / 2 and any(k.misread(n) == "gradients" for k, n in wrong)
        for case, record, counts_k in zip(SAVED_CASES, obs["calls"], counts, strict=True):
            self._judge(case, record, counts_k, "NG-2" if ng2 else None)

    def _counts(self, case: SavedCase) -> Counts:
        op, args, leaves = self._build(case, "cpu")
        return _counts(op, args, leaves, case.outer)

    @staticmethod
    def _counted(record: dict) -> int | None:
        """The learner's count, where the call returned (result, int)."""
        value = record["call"].get("value", {})
        items = value.get("items", []) if value.get("kind") == "tuple" else []
        if len(items) == 2 and items[1].get("kind") == "int":
            return int(items[1]["value"])
        return None

    def _judge(self, case: SavedCase, record: dict, counts: Counts, ng2: str | None) -> None:
        ex = self.heading
        out = _returned(ex, case, record["call"], "count_saved_bytes")
        require(ex, _in(case, [c.returns_tuple(out, 2, "(result, nbytes)")]))
        result, nbytes = out.items
        calls = record["calls"]
        require(
            ex,
            _in(
                case,
                [
                    CheckResult(
                        Text("fn is called once", "fn 只被调用一次"),
                        calls == 1,
                        "1",
                        Text("{n} calls", "调用了 {n} 次").format(n=calls),
                    ),
                    CheckResult(
                        Text("result is what fn returned", "result 就是 fn 的返回值"),
                        record["same_result"],
                        Text("the object fn(*args) returned", "fn(*args) 返回的那个对象"),
                        result.describe(),
                    ),
                    _grad_mode_after(record),
                    CheckResult(
                        Text("nbytes is a Python int", "nbytes 是 Python int"),
                        nbytes.kind == "int",
                        "int",
                        nbytes.describe(),
                    ),
                ],
            ),
        )
        counted = nbytes.value
        misread = counts.misread(counted, gradients_first=ng2 is not None)
        found = MISREAD[misread].format(n=counted) if misread in MISREAD else str(counted)
        require(
            ex,
            _in(
                case,
                [
                    CheckResult(
                        Text("bytes saved for backward", "为反向传播保存的字节数"),
                        misread is None,
                        str(counts.exact),
                        found,
                        ng2 if misread not in MISREAD else None,
                    )
                ],
            ),
        )
        want_result, leaves = counts.result, counts.leaves
        require(ex, _in(case, [c.requires_grad(result, want_result.requires_grad, "result")]))
        if not want_result.requires_grad:
            return
        grads = _returned(ex, case, record.get("backward", NO_BACKWARD), "", title=BACKWARD)
        seed = self._grad_outputs(case, want_result)
        wanted = trusted.autograd_grad(want_result, leaves, seed, allow_unused=True)
        tolerance = 2e-2 if want_result.dtype == torch.bfloat16 else 1e-5
        got = grads.items
        require(
            ex,
            _in(
                case,
                [
                    c.values(
                        got[k] if k < len(got) else Seen({"kind": "none"}),
                        want,
                        f"grad[{k}]",
                        rtol=tolerance,
                        atol=tolerance,
                    )
                    for k, want in enumerate(wanted)
                    if want is not None
                ],
            ),
        )


def check_count_saved_bytes(fn, seed: int = 0, device=None) -> None:
    verdict(CountSavedBytes(seed, None if device is None else str(device)), fn)


# Exercise 3 (NG-2) -------------------------------------------------------------------------


@dataclass(frozen=True)
class RunStep(Check):
    """One function for train and eval: eval records nothing, train takes a clean SGD step."""

    number = 3
    seed: int = 0
    lr: float = 0.1
    device: str | None = None

    def scenarios(self) -> tuple[Scenario, ...]:
        s = self.seed * 10
        return (
            Scenario(1, s + 1, 2, training=True, stale_grads=True, train=False),
            Scenario(2, s + 2, 3, training=False, stale_grads=True, train=True),
            Scenario(3, s + 3, 1, "float64", True, "no_grad", stale_grads=True, train=True),
            Scenario(4, s + 4, 2, "float64", False, "no_grad", stale_grads=True, train=False),
        )

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        return {"calls": [self._observe(fn, sc, device) for sc in self.scenarios()]}

    def _observe(self, fn, sc: Scenario, device) -> dict:
        model, ((x, y),) = _classifier_inputs(sc, device)
        model.train(sc.training)
        _set_grads(model, _stale_grads(model, sc.seed))
        optimizer = torch.optim.SGD(model.parameters(), lr=self._lr(sc))
        x0, y0 = x.clone(), y.clone()
        with _outer(sc.outer):
            before = trusted.is_grad_enabled()
            out, packed = saved_bytes(call, fn, model, x, y, optimizer, sc.train)
            after = trusted.is_grad_enabled()
            trusted.set_grad_enabled(before)
        return {
            "call": out.record(),
            "packed": packed,
            "grad_before": bool(before),
            "grad_after": bool(after),
            "model": _module_state(model),
            "batch_kept": bool(trusted.equal(x, x0)) and bool(trusted.equal(y, y0)),
        }

    def judge(self, obs: dict) -> None:
        for sc, record in zip(self.scenarios(), obs["calls"], strict=True):
            self._judge(sc, record)

    def _judge(self, sc: Scenario, record: dict) -> None:
        ex = self.heading
        loss = _returned(ex, sc, record["call"], "run_step")
        model, ((x, y),) = _classifier_inputs(sc, "cpu")
        stale = _stale_grads(model, sc.seed)
        want_loss = torch.nn.functional.cross_entropy(model(x), y)
        grads = trusted.autograd_grad(want_loss, list(model.parameters()))
        as_found = _model_as_found(record["model"], model, stale, sc.training)
        results = [
            _grad_mode_after(record),
            _is_float(loss, "loss"),
            CheckResult(
                Text("the batch is unchanged", "批次数据保持不变"),
                record["batch_kept"],
                UNCHANGED,
                Text("changed", "已改变"),
            ),
        ]
        if not sc.train:
            no_backward = as_found[2].passed  # the stale .grad is still there
            results += [_nothing_saved(record, "NG-2" if no_backward else None), as_found[0]]
        else:
            results += self._stepped(record["model"]["params"], model, grads, stale, self._lr(sc))
        require(ex, _in(sc, results))
        found = trusted.tensor(loss.value, dtype=torch.float64)
        require(ex, _in(sc, [c.values(found, want_loss.detach(), "loss", rtol=1e-4)]))

    def _lr(self, sc: Scenario) -> float:
        """Each call's optimizer has its own learning rate: the step must use the optimizer."""
        return self.lr * (1.0, 0.5, 2.0, 1.0)[sc.number - 1]

    def _stepped(self, params: dict, model, grads, stale, lr: float) -> list[CheckResult]:
        """Each parameter moved by -lr * its fresh gradient; RG-4 where the stale one was added."""
        results = []
        for (name, p), g in zip(model.named_parameters(), grads, strict=True):
            found = Seen(params.get(name, {"kind": "none"}))
            want = p.detach() - lr * g
            kept_stale = p.detach() - lr * (g + stale[name])
            accumulated = found.shape == tuple(p.shape) and bool(
                trusted.allclose(found.value.double(), kept_stale.double(), rtol=1e-4, atol=1e-6)
            )
            rg4 = "RG-4" if accumulated else None
            after = Text("model.{n} after the step", "更新后的 model.{n}").format(n=name)
            results.append(c.values(found, want, after, rg4, rtol=1e-4))
        failed = [r for r in results if not r.passed]
        if len(failed) < 2:
            return results
        more = CheckResult(
            Text("the other parameters after the step", "这一步之后的其他参数"),
            False,
            Text("moved by -lr * their gradient", "按 -lr × 梯度移动"),
            Text("{k} more differ", "另有 {k} 个不同").format(k=len(failed) - 1),
            failed[1].misconception,
        )
        return [failed[0], more]


def check_run_step(fn, seed: int = 0, lr: float = 0.1, device=None) -> None:
    verdict(RunStep(seed, lr, None if device is None else str(device)), fn)


# Exercise 4 (NG-4) -------------------------------------------------------------------------


def _backbone_inputs(sc: Scenario, device):
    sizes = sc.sizes(last=_ints(sc.seed + 3, (4, 9))[0])
    backbone = make_mlp(sc.seed, sizes, sc.dtype, device)
    rows = _ints(sc.seed + 2, (3, 9))[0]
    x = uniform(sc.seed + 100, rows, sizes[0], device="cpu", dtype=_dtype(sc.dtype)).to(device)
    head = make_mlp(sc.seed + 7, [sizes[-1], 2], sc.dtype, device)
    target = uniform(sc.seed + 101, rows, 2, device="cpu", dtype=_dtype(sc.dtype)).to(device)
    return backbone, x.requires_grad_(sc.x_requires_grad), head, target


HEAD = Text(
    "training a head on the features later (backward through head(features))",
    "之后用 features 训练一个头部（通过 head(features) 做反向传播）",
)


def _head_grad(head: torch.nn.Module, features: torch.Tensor, target: torch.Tensor):
    """Train the head later: the gradient of its loss with respect to its weight."""
    loss = torch.nn.functional.mse_loss(head(features), target)
    return trusted.autograd_grad(loss, head[0].weight)[0]


@dataclass(frozen=True)
class FrozenFeatures(Check):
    """Features from a frozen backbone: no graph now, usable for training a head later."""

    number = 4
    seed: int = 0
    device: str | None = None

    def scenarios(self) -> tuple[Scenario, ...]:
        s = self.seed * 10
        return (
            Scenario(1, s + 1, 2, training=True),
            Scenario(2, s + 2, 3, "float64", False, x_requires_grad=True),
            Scenario(3, s + 3, 1, training=True, outer="no_grad"),
        )

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        return {"calls": [self._observe(fn, sc, device) for sc in self.scenarios()]}

    def _observe(self, fn, sc: Scenario, device) -> dict:
        backbone, x, head, target = _backbone_inputs(sc, device)
        backbone.train(sc.training)
        with _outer(sc.outer):
            before = trusted.is_grad_enabled()
            out, packed = saved_bytes(call, fn, backbone, x)
            after = trusted.is_grad_enabled()
            trusted.set_grad_enabled(before)
        record = {
            "call": out.record(),
            "packed": packed,
            "grad_before": bool(before),
            "grad_after": bool(after),
            "model": _module_state(backbone),
            "x": snapshot(x),
            "x_grad": snapshot(x.grad),
        }
        if out.ok and trusted.type_(out.value) is trusted.tensor_type:
            record["head"] = call(_head_grad, head, out.value, target).record()
        return record

    def judge(self, obs: dict) -> None:
        for sc, record in zip(self.scenarios(), obs["calls"], strict=True):
            self._judge(sc, record)

    def _judge(self, sc: Scenario, record: dict) -> None:
        ex = self.heading
        features = _returned(ex, sc, record["call"], "frozen_features")
        require(ex, _in(sc, [c.is_tensor(features, "features")]))
        backbone, x, head, target = _backbone_inputs(sc, "cpu")
        results = [
            _nothing_saved(record, None),
            _grad_mode_after(record),
            c.requires_grad(features, False, "features"),
            CheckResult(
                Text(
                    "features can be saved for backward later (not an inference tensor)",
                    "features 之后可以被保存用于反向传播（不是推理张量）",
                ),
                not features.is_inference,
                "features.is_inference() == False",
                f"features.is_inference() == {features.is_inference}",
                "NG-4",
            ),
            c.on_device(features, record["x"]["device"], "features"),
            c.dtype(features, _dtype(sc.dtype), "features"),
            *_model_as_found(record["model"], backbone, {}, sc.training),
            *_tensor_as_found(Seen(record["x"]), Seen(record["x_grad"]), x, "x"),
        ]
        require(ex, _in(sc, results))
        with trusted.no_grad():
            wanted = backbone(x)
        require(ex, _in(sc, [c.values(features, wanted, "features", rtol=1e-4)]))
        found = _returned(ex, sc, record.get("head", NO_BACKWARD), "", title=HEAD)
        want_grad = _head_grad(head, wanted, target)
        require(ex, _in(sc, [c.values(found, want_grad, "head.weight.grad", rtol=1e-4)]))


def check_frozen_features(fn, seed: int = 0, device=None) -> None:
    verdict(FrozenFeatures(seed, None if device is None else str(device)), fn)


# Exercise 5 (NG-5, NG-4) -------------------------------------------------------------------


def _saliency_inputs(sc: Scenario, device):
    sizes = sc.sizes()
    model = make_mlp(sc.seed, sizes, sc.dtype, device)
    rows = _ints(sc.seed + 2, (2, 7))[0]
    x = uniform(sc.seed + 100, rows, sizes[0], device="cpu", dtype=_dtype(sc.dtype)).to(device)
    return model, x


@dataclass(frozen=True)
class InputSaliency(Check):
    """d(model(x).sum())/dx, also when the caller runs under inference_mode on inference tensors."""

    number = 5
    seed: int = 0
    device: str | None = None

    def scenarios(self) -> tuple[Scenario, ...]:
        s = self.seed * 10
        return (
            Scenario(1, s + 1, 2, training=True, outer="inference_mode"),
            Scenario(2, s + 2, 3, "float64", False, "inference_mode"),
            Scenario(3, s + 3, 2, training=False, outer="no_grad"),
            Scenario(4, s + 4, 1, training=True),
        )

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        return {"calls": [self._observe(fn, sc, device) for sc in self.scenarios()]}

    def _observe(self, fn, sc: Scenario, device) -> dict:
        model, x0 = _saliency_inputs(sc, device)
        model.train(sc.training)
        modes = []

        def probe(module, inputs):
            modes.append(
                [bool(trusted.is_grad_enabled()), bool(trusted.is_inference_mode_enabled())]
            )

        handle = model.register_forward_pre_hook(probe)
        with _outer(sc.outer):
            x = x0.clone()  # an inference tensor under inference_mode, as the prompt says
            before = trusted.is_grad_enabled()
            inference_before = trusted.is_inference_mode_enabled()
            out = call(fn, model, x)
            after = trusted.is_grad_enabled()
            inference_after = trusted.is_inference_mode_enabled()
            trusted.set_grad_enabled(before)
        handle.remove()
        return {
            "call": out.record(),
            "modes": modes,
            "grad_before": bool(before),
            "grad_after": bool(after),
            "inference_before": bool(inference_before),
            "inference_after": bool(inference_after),
            "model": _module_state(model),
            "x": snapshot(x),
            "x_grad": snapshot(x.grad),
        }

    def judge(self, obs: dict) -> None:
        for sc, record in zip(self.scenarios(), obs["calls"], strict=True):
            self._judge(sc, record)

    def _judge(self, sc: Scenario, record: dict) -> None:
        ex = self.heading
        grad_in_inference = any(grad and inference for grad, inference in record["modes"])

        def classify(message: str) -> Diagnosis:
            return _explain(message, grad_in_inference)

        saliency = _returned(ex, sc, record["call"], "input_saliency", classify)
        require(ex, _in(sc, [c.is_tensor(saliency, "saliency")]))
        model, x = _saliency_inputs(sc, "cpu")
        before, after = record["inference_before"], record["inference_after"]
        results = [
            CheckResult(
                Text(
                    "inference mode after your function returned",
                    "函数返回后的推理模式",
                ),
                before == after,
                Text("{v}, as before the call", "{v}，与调用前相同").format(v=before),
                str(after),
            ),
            _grad_mode_after(record),
            c.on_device(saliency, record["x"]["device"], "saliency"),
            c.dtype(saliency, _dtype(sc.dtype), "saliency"),
            *_model_as_found(record["model"], model, {}, sc.training),
            *_tensor_as_found(Seen(record["x"]), Seen(record["x_grad"]), x, "x"),
        ]
        require(ex, _in(sc, results))
        leaf = x.clone().requires_grad_()
        (wanted,) = trusted.autograd_grad(model(leaf).sum(), leaf)
        require(ex, _in(sc, [c.values(saliency, wanted, "saliency", rtol=1e-4)]))


def check_input_saliency(fn, seed: int = 0, device=None) -> None:
    verdict(InputSaliency(seed, None if device is None else str(device)), fn)


EXERCISES: tuple[Exercise, ...] = (
    Exercise(
        1,
        "evaluate",
        Text("an evaluation that keeps nothing", "什么都不保留的评估"),
        check_evaluate,
        ("NG-1", "NG-3"),
    ),
    Exercise(
        2,
        "count_saved_bytes",
        Text("measure what backward needs", "测量反向传播需要保存什么"),
        check_count_saved_bytes,
        ("NG-2",),
    ),
    Exercise(
        3,
        "run_step",
        Text("one step for train and eval", "训练与评估共用一个步骤"),
        check_run_step,
        ("NG-2",),
    ),
    Exercise(
        4,
        "frozen_features",
        Text("features for a head trained later", "为之后训练的头部提取特征"),
        check_frozen_features,
        ("NG-4",),
    ),
    Exercise(
        5,
        "input_saliency",
        Text("a gradient inside inference_mode", "在 inference_mode 中求梯度"),
        check_input_saliency,
        ("NG-5", "NG-4"),
    ),
)


def self_check(namespace: dict) -> list:
    """Run every exercise's visible checks against the notebook's namespace; print a summary."""
    return run_self_check(EXERCISES, namespace)
