"""Checks for lesson 03: model.eval() vs torch.no_grad().

Each check is an ``observe`` / ``judge`` pair (see autograder/common/protocol.py).
``observe`` builds several models (other widths and depths than the prompt's, some
nested, some in float64) that arrive in training mode, in evaluation mode or in a
mix, with stale gradients where an optimizer is involved, and calls the learner's
function. While it runs, global module hooks record every Dropout and BatchNorm
call — on the caller's modules or on any copy of them — with the layer's mode,
the grad mode and the Dropout mask drawn; ``saved_tensors_hooks`` count the bytes
autograd saved. Afterwards the caller's modules are read back (modes, parameters,
running statistics). ``judge`` rebuilds the same models on the CPU and compares
with an independent computation; Dropout masks are replayed from the record.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch

from autograder.common import compare as c
from autograder.common import trusted
from autograder.common.exercise import Exercise
from autograder.common.i18n import Text
from autograder.common.inputs import resolve_device, uniform
from autograder.common.observation import Seen, snapshot
from autograder.common.protocol import Check, call, returned, verdict
from autograder.common.result import CheckFailed, CheckResult, require
from autograder.kernel.measure import saved_bytes
from autograder.kernel.selfcheck import run_self_check

# Taken at import, before any learner code runs (see trusted.py).
_BATCHNORM = torch.nn.modules.batchnorm._BatchNorm
_DROPOUT = torch.nn.modules.dropout._DropoutNd
_on_every_call_before = torch.nn.modules.module.register_module_forward_pre_hook
_on_every_call_after = torch.nn.modules.module.register_module_forward_hook
_fork_rng = torch.random.fork_rng
_mse = torch.nn.functional.mse_loss

_EVAL = Text("evaluation mode", "评估模式")
_TRAIN = Text("training mode", "训练模式")
_MIXED = Text("a mix of modes", "混合模式")
_UNCHANGED = Text("unchanged", "不变")
_CHANGED = Text("changed", "已改变")
_IDENTITY = Text(
    "; with training=False, Dropout returns x", "；training=False 时 Dropout 原样返回 x"
)
_CALLERS = Text("{name} (the caller's tensor)", "{name}（调用者的张量）")
_FLOAT_LOSS = Text("the returned loss is a Python float", "返回的损失是 Python float")


# Models ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Net:
    """The shape of a model: blocks of Linear → BatchNorm1d → ReLU → Dropout(p), then Linear."""

    n_in: int
    hidden: int
    n_out: int
    blocks: int = 1
    p: float = 0.5
    nested: bool = False  # each block in its own Sequential, as real models group layers
    dtype: str = "float32"

    @property
    def torch_dtype(self) -> torch.dtype:
        return getattr(torch, self.dtype)


def _fill(module: torch.nn.Module, g: torch.Generator) -> None:
    """Fixed weights and "trained" running statistics, far from a fresh batch's statistics."""
    with trusted.no_grad():
        if trusted.isinstance_(module, torch.nn.Linear):
            scale = module.in_features**-0.5
            module.weight.copy_((trusted.rand(module.weight.shape, generator=g) * 2 - 1) * scale)
            module.bias.copy_((trusted.rand(module.bias.shape, generator=g) * 2 - 1) * scale)
        elif trusted.isinstance_(module, _BATCHNORM):
            width = module.num_features
            module.weight.copy_(1 + 0.3 * (trusted.rand(width, generator=g) - 0.5))
            module.bias.copy_(0.3 * (trusted.rand(width, generator=g) - 0.5))
            module.running_mean.copy_(0.8 * (trusted.rand(width, generator=g) * 2 - 1))
            module.running_var.copy_(1.5 + 0.5 * trusted.rand(width, generator=g))
            module.num_batches_tracked.fill_(50)


def make_net(seed: int, net: Net, device="cpu") -> torch.nn.Sequential:
    """A model of the given shape with weights fixed by ``seed``; the global RNG is left alone."""
    with _fork_rng(devices=[]):
        blocks, width = [], net.n_in
        for _ in range(net.blocks):
            blocks.append(
                [
                    torch.nn.Linear(width, net.hidden),
                    torch.nn.BatchNorm1d(net.hidden),
                    torch.nn.ReLU(),
                    torch.nn.Dropout(net.p),
                ]
            )
            width = net.hidden
        last = torch.nn.Linear(width, net.n_out)
    if net.nested:
        model = torch.nn.Sequential(*(torch.nn.Sequential(*b) for b in blocks), last)
    else:
        model = torch.nn.Sequential(*(layer for b in blocks for layer in b), last)
    g = trusted.generator().manual_seed(seed)
    for module in model.modules():
        _fill(module, g)
    return model.to(device=device, dtype=net.torch_dtype)


def make_backbone_head(seed: int, net: Net, head_out: int, device="cpu"):
    """A backbone (``net``'s blocks without their Dropout) and a head Dropout(p) → Linear."""
    with _fork_rng(devices=[]):
        layers, width = [], net.n_in
        for _ in range(net.blocks):
            layers += [
                torch.nn.Linear(width, net.hidden),
                torch.nn.BatchNorm1d(net.hidden),
                torch.nn.ReLU(),
            ]
            width = net.hidden
        backbone = torch.nn.Sequential(*layers)
        head = torch.nn.Sequential(torch.nn.Dropout(net.p), torch.nn.Linear(width, head_out))
    g = trusted.generator().manual_seed(seed)
    for module in [*backbone.modules(), *head.modules()]:
        _fill(module, g)
    moved = [m.to(device=device, dtype=net.torch_dtype) for m in (backbone, head)]
    return moved[0], moved[1]


def _set_mode(model: torch.nn.Module, mode: str) -> None:
    """'train', 'eval', or 'mixed': evaluation mode except the first Dropout (as in MC dropout)."""
    model.train(mode == "train")
    if mode == "mixed":
        next(m for m in model.modules() if trusted.isinstance_(m, _DROPOUT)).train()


def _modes(model: torch.nn.Module) -> list[bool]:
    return [bool(m.training) for m in model.modules()]


def _mode_name(modes: list[bool]) -> Text:
    if all(modes):
        return _TRAIN
    if not any(modes):
        return _EVAL
    return _MIXED


def _tensors(pairs) -> dict:
    """Plain CPU copies of named tensors (parameters or buffers)."""
    return {name: snapshot(t)["value"] for name, t in pairs}


def _stale_grads(seed: int, *modules: torch.nn.Module) -> None:
    """Fill every .grad, as an earlier step would have left them."""
    k = 0
    for module in modules:
        for p in module.parameters():
            p.grad = uniform(seed + 900 + k, *p.shape, device=p.device, dtype=p.dtype)
            k += 1


def _stale_grad_values(seed: int, module: torch.nn.Module, first: int = 0) -> list[torch.Tensor]:
    """The stale gradients ``_stale_grads`` put there, recomputed on the CPU."""
    return [
        uniform(seed + 900 + first + k, *p.shape, device="cpu", dtype=p.dtype)
        for k, p in enumerate(module.parameters())
    ]


# What the checks watch while the learner's function runs -----------------------------------


class _Spy:
    """Record every Dropout and BatchNorm call of any module, and the outermost calls.

    Global hooks see copies of the caller's model too (``copy.deepcopy``,
    ``torch.func.functional_call``), so a check judges what ran, not which object ran.
    """

    MAX_EVENTS = 4000

    def __init__(self, masks: bool = False):
        self.masks, self.depth, self.events = masks, 0, []
        self._handles: list = []

    def _before(self, module, args) -> None:
        self.depth += 1

    def _after(self, module, args, output) -> None:
        self.depth -= 1
        if trusted.isinstance_(module, _DROPOUT):
            role = "dropout"
        elif trusted.isinstance_(module, _BATCHNORM):
            role = "batchnorm"
        elif self.depth == 0:
            role = "outer"
        else:
            return
        if trusted.len_(self.events) >= self.MAX_EVENTS:
            return
        event = {
            "role": role,
            "kind": str(trusted.type_(module).__name__),
            "training": bool(module.training),
            "grad": bool(trusted.is_grad_enabled()),
        }
        if role == "dropout" and self.masks and trusted.type_(output) is trusted.tensor_type:
            with trusted.no_grad():
                event["mask"] = snapshot(output != 0)["value"]
        self.events.append(event)

    def __enter__(self) -> _Spy:
        self._handles = [_on_every_call_before(self._before), _on_every_call_after(self._after)]
        return self

    def __exit__(self, *exc) -> None:
        for handle in self._handles:
            handle.remove()


def _role(events: list[dict], role: str) -> list[dict]:
    return [e for e in events if e.get("role") == role]


def _ran_in(events: list[dict]) -> Text:
    """Which layer kinds ran in which mode, e.g. 'BatchNorm1d: training mode'."""
    seen = sorted({(e["kind"], e["training"]) for e in events})
    if not seen:
        return Text("no forward pass through such a layer", "没有经过这类层的前向传播")
    return Text(
        ", ".join(f"{kind}: {(_TRAIN if t else _EVAL).en}" for kind, t in seen),
        "，".join(f"{kind}：{(_TRAIN if t else _EVAL).zh}" for kind, t in seen),
    )


def _top_flag_only(events: list[dict]) -> bool:
    """The outermost module ran with training=False while layers inside it trained."""
    outer_eval = any(e["role"] == "outer" and not e["training"] for e in events)
    inner_train = any(e["role"] in ("dropout", "batchnorm") and e["training"] for e in events)
    return outer_eval and inner_train


_TOP_FLAG_HINT = Text(
    " (the model's own flag was False but its layers were still training: "
    "`model.training = False` changes one flag, model.eval() sets it on every submodule)",
    "（模型自身的标志是 False，但它的各层仍在训练模式：`model.training = False` "
    "只改了一个标志，model.eval() 才会设置每个子模块）",
)


def _explain(message: str) -> Text | None:
    """One line, in the learner's language, for PyTorch errors these exercises provoke."""
    if "does not require grad" in message:
        return Text(
            "the loss has no graph: it was computed under torch.no_grad() or from tensors "
            "that do not require grad, so backward() has nothing to go back through",
            "损失没有计算图：它是在 torch.no_grad() 下、或由不需要梯度的张量算出来的，"
            "所以 backward() 无法沿计算图反向传播",
        )
    if "more than 1 value per channel when training" in message:
        return Text(
            "BatchNorm ran in training mode on a batch of one sample: training mode needs "
            "batch statistics, evaluation mode uses the running statistics",
            "BatchNorm 在训练模式下处理了只有一个样本的批次：训练模式需要批次统计量，"
            "评估模式使用滑动平均统计量",
        )
    if any(part in message for part in ("cannot be multiplied", "size of tensor", "shape of")):
        return Text(
            "a tensor had a shape your code does not expect: does it assume the sizes of "
            "the example in the prompt?",
            "某个张量的形状与你的代码所假定的不符：代码是不是假定了题目示例中的尺寸？",
        )
    if "same device" in message:
        return Text(
            "tensors on two devices met in one operation: create tensors on the device of "
            "the inputs",
            "两个设备上的张量参与了同一个运算：请在输入所在的设备上创建张量",
        )
    if "dtype" in message:
        return Text(
            "tensors of two dtypes met in one operation: take the dtype from the inputs",
            "两种 dtype 的张量参与了同一个运算：请沿用输入的 dtype",
        )
    if "Inference tensors cannot be saved for backward" in message:
        return Text(
            "a tensor made under torch.inference_mode() entered a graph that needs it for "
            "backward: use torch.no_grad() there, or clone() it outside inference mode",
            "在 torch.inference_mode() 下得到的张量进入了需要保存它以便反向传播的计算图："
            "这里请改用 torch.no_grad()，或在推理模式之外对它 clone()",
        )
    if "index" in message and "out of range" in message:
        return Text(
            "an index past the end of a model or tensor: does your code assume the layers "
            "of the example model?",
            "索引超出了模型或张量的范围：你的代码是不是假定了示例模型的层？",
        )
    return None


def _returned(ex: Text, record: dict, name: str) -> Seen:
    """The value the learner's function returned, or feedback that explains its error."""
    return returned(ex, record, name, explain=_explain)


def _case_text(k: int, what: Text) -> Text:
    return Text("case {k} ({what}): ", "情形 {k}（{what}）：").format(k=k, what=what)


def _arrives(mode: str) -> Text:
    return {
        "train": Text("model arriving in training mode", "模型进入时处于训练模式"),
        "eval": Text("model arriving in evaluation mode", "模型进入时处于评估模式"),
        "mixed": Text(
            "model in evaluation mode except its first Dropout",
            "模型处于评估模式，但第一个 Dropout 处于训练模式",
        ),
    }[mode]


def _observed(ex: Text, cases: list, observed: list) -> Iterator[tuple[int, Any, dict]]:
    """Each case with its observation; a case that was never observed fails, it is not skipped."""
    for k, case in enumerate(cases):
        if k >= trusted.len_(observed):
            raise CheckFailed(
                ex,
                [
                    CheckResult(
                        Text("running your function", "运行你的函数"),
                        False,
                        Text("case {k} observed", "观察到情形 {k}").format(k=k + 1),
                        Text("no observation of it", "没有它的观察记录"),
                    )
                ],
            )
        yield k, case, observed[k]


def _text(value: Text | str, lang: str) -> str:
    return value(lang) if trusted.isinstance_(value, Text) else value


def _join(*parts: Text | str) -> Text:
    """Text made of parts side by side in each language (plain strings are the same in both)."""
    return Text(*("".join(_text(part, lang) for part in parts) for lang in ("en", "zh")))


def _titled(prefix: Text, result: CheckResult) -> CheckResult:
    """The same result, its title prefixed with the case it comes from."""
    return CheckResult(
        _join(prefix, result.what),
        result.passed,
        result.expected,
        result.found,
        result.misconception,
    )


def _in_case(prefix: Text, results: list[CheckResult]) -> list[CheckResult]:
    return [_titled(prefix, r) for r in results]


def _layers_ran(
    events: list[dict], roles: tuple[str, ...], training: bool, what: Text, expected: Text, mid
) -> CheckResult:
    """Every watched call of these layer kinds ran in the wanted mode."""
    layers = [e for e in events if e["role"] in roles]
    found = _ran_in(layers)
    if _top_flag_only(events):
        found = _join(found, _TOP_FLAG_HINT)
    passed = bool(layers) and all(e["training"] is training for e in layers)
    return CheckResult(what, passed, expected, found, mid)


def _same_tensors(found: dict, wanted: dict) -> bool:
    return set(found) == set(wanted) and all(
        trusted.equal(found[name], wanted[name].detach()) for name in wanted
    )


def _stats_unchanged(found: dict, model: torch.nn.Module, mid: str | None) -> CheckResult:
    return CheckResult(
        Text("BatchNorm's running statistics are unchanged", "BatchNorm 的滑动平均统计量保持不变"),
        _same_tensors(found, dict(model.named_buffers())),
        _UNCHANGED,
        _CHANGED,
        mid,
    )


def _params_unchanged(found: dict, model: torch.nn.Module, what: Text) -> CheckResult:
    return CheckResult(
        what, _same_tensors(found, dict(model.named_parameters())), _UNCHANGED, _CHANGED
    )


def _mode_after(found: list[bool], wanted: list[bool], what: Text, mid=None) -> CheckResult:
    """Each module's training flag after the call, against the one it arrived with."""
    differ = sum(a != b for a, b in zip(found, wanted, strict=False))
    shown = Text(
        "{mode}: {n} of {total} modules are not in the mode they had",
        "{mode}：{total} 个模块中有 {n} 个不在原来的模式",
    ).format(mode=_mode_name(found), n=differ, total=trusted.len_(wanted))
    return CheckResult(what, found == wanted, _mode_name(wanted), shown, mid)


def _no_graph(events: list[dict], kept: int, mid: str | None) -> CheckResult:
    """No bytes saved, and grad mode off in the model's Dropout and BatchNorm calls.

    A loss module called afterwards with grad mode on records nothing from
    outputs that do not require grad, so only the model's own layers count.
    """
    grad_on = any(e["grad"] for e in events if e["role"] != "outer")
    return CheckResult(
        Text(
            "autograd recorded no graph during the forward passes",
            "前向传播期间自动求导没有记录计算图",
        ),
        kept == 0 and not grad_on,
        Text(
            "0 bytes saved for backward (grad mode off: torch.no_grad())",
            "为反向传播保存 0 字节（关闭梯度模式：torch.no_grad()）",
        ),
        Text(
            "{n} bytes saved for backward (grad mode on)",
            "为反向传播保存了 {n} 字节（梯度模式开启）",
        ).format(n=kept),
        mid if (kept or grad_on) else None,
    )


def _is_float(found: Seen) -> CheckResult:
    return CheckResult(_FLOAT_LOSS, found.kind == "float", "float", found.describe())


def _observe_module(model: torch.nn.Module) -> dict:
    """How the caller's module was left: each module's mode, parameters, buffers."""
    return {
        "modes": _modes(model),
        "params": _tensors(model.named_parameters()),
        "buffers": _tensors(model.named_buffers()),
    }


def _adds_up(found: Seen, want: torch.Tensor, with_stale: torch.Tensor) -> bool:
    """The found values are what the stale .grad plus this batch's gradient would give."""
    return (
        found.is_tensor
        and found.shape == tuple(want.shape)
        and bool(trusted.allclose(found.value.to(want.dtype), with_stale, rtol=1e-4, atol=1e-6))
    )


def _stale(fix: str) -> CheckResult:
    """Why the values are off when the stale .grad was left in: backward() adds to it."""
    return CheckResult(
        Text("the gradients are this loss's alone", "梯度只来自这次的损失"),
        False,
        Text(
            "the .grad of an earlier step cleared first ({fix})", "先清掉之前留下的 .grad（{fix}）"
        ).format(fix=fix),
        Text(
            "the earlier .grad plus this loss's gradient: backward() adds to .grad",
            "之前的 .grad 加上这次损失的梯度：backward() 会累加到 .grad 上",
        ),
    )


# Exercise 1 (EV-3) -------------------------------------------------------------------------


def _dropout_cases(seed: int, p: float) -> list[tuple[tuple[int, ...], str, bool]]:
    """(shape of x, dtype, training) for each call; shapes and sizes drawn from the seed."""
    g = trusted.generator().manual_seed(seed)
    rows, cols, depth = (int(n) for n in trusted.randint(20, 60, (3,), generator=g))
    return [
        ((rows, cols), "float32", True),
        ((rows * cols,), "float64", True),
        ((3, depth, 5), "float64", True),
        ((rows, 7), "float64", False),
    ]


def _dropout_inputs(seed: int, k: int, shape, dtype: str, device):
    dt = getattr(torch, dtype)
    x = uniform(seed + 10 * k, *shape, device=device, dtype=dt)
    u = (uniform(seed + 10 * k + 1, *shape, device=device, dtype=dt) + 1) / 2
    return x, u


def _keep_probability(found: torch.Tensor, x: torch.Tensor, u: torch.Tensor, p: float) -> bool:
    """The output is what a keep probability p would give: mask reversed, or scale 1/p."""
    zero = trusted.zeros((), dtype=x.dtype)
    readings = [
        torch.where(u < p, x / p, zero),
        torch.where(u >= p, x / p, zero),
        torch.where(u < p, x / (1 - p), zero),
    ]
    return any(
        found.shape == r.shape and bool(trusted.allclose(found.to(r.dtype), r, rtol=1e-4))
        for r in readings
    )


@dataclass(frozen=True)
class DropoutByHand(Check):
    """Drop where u < p, scale survivors by 1/(1-p); the identity when not training."""

    number = 1
    seed: int = 0
    p: float = 0.2
    device: str | None = None

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        calls = []
        for k, (shape, dtype, training) in enumerate(_dropout_cases(self.seed, self.p)):
            x, u = _dropout_inputs(self.seed, k, shape, dtype, device)
            out = call(fn, x, self.p, u, training)
            calls.append({"call": out.record(), "x": snapshot(x), "u": snapshot(u)})
            if not out.ok:
                break
        return {"device": str(device), "calls": calls}

    def judge(self, obs: dict) -> None:
        ex, p = self.heading, self.p
        cases = _dropout_cases(self.seed, p)
        for k, (shape, dtype, training), seen in _observed(ex, cases, obs["calls"]):
            what = Text(
                "x of shape {s}, {d}, training={t}", "x 的形状为 {s}，{d}，training={t}"
            ).format(s=shape, d=dtype, t=training)
            prefix = _case_text(k + 1, what if training else _join(what, _IDENTITY))
            out = _returned(ex, seen["call"], "dropout_by_hand")
            x, u = _dropout_inputs(self.seed, k, shape, dtype, "cpu")
            require(ex, _in_case(prefix, [c.is_tensor(out, "out")]))
            if training:
                want = torch.where(u < p, trusted.zeros((), dtype=x.dtype), x / (1 - p))
                ev3 = out.shape == tuple(shape) and _keep_probability(out.value, x, u, p)
            else:
                want, ev3 = x, False
            mid = "EV-3" if ev3 else None
            require(
                ex,
                _in_case(
                    prefix,
                    [
                        c.shape(out, tuple(shape), "out"),
                        c.dtype(out, x.dtype, "out"),
                        c.on_device(out, obs["device"], "out"),
                        c.values(out, want, "out", misconception=mid),
                        c.values(Seen(seen["x"]), x, _CALLERS.format(name="x")),
                        c.values(Seen(seen["u"]), u, _CALLERS.format(name="u")),
                    ],
                ),
            )


def check_dropout_by_hand(fn, seed: int = 0, p: float = 0.2, device=None) -> None:
    verdict(DropoutByHand(seed, p, None if device is None else str(device)), fn)


# Exercise 2 (EV-1) -------------------------------------------------------------------------


def _width(seed: int, base: int) -> int:
    """A layer width that changes with the seed, so hidden tests use other models too."""
    return base + seed % 5


def _eval_grads_cases(seed: int, size: int) -> list[tuple[Net, str, bool, int]]:
    """(model shape, mode it arrives in, stale .grad, batch size) for each call."""
    w = _width(seed, 10)
    return [
        (Net(4, 16, 2), "eval", True, size),
        (Net(6, w, 3, blocks=2, p=0.3, nested=True, dtype="float64"), "train", True, size + 3),
        (Net(3, w - 2, 1, p=0.2), "train", False, size + 1),
    ]


def _model_case(seed: int, k: int, net: Net, mode: str, rows: int, device):
    model = make_net(seed + 7 * k, net, device)
    _set_mode(model, mode)
    x = uniform(seed + 100 + k, rows, net.n_in, device=device, dtype=net.torch_dtype)
    target = uniform(seed + 200 + k, rows, net.n_out, device=device, dtype=net.torch_dtype)
    return model, x, target


@dataclass(frozen=True)
class EvalGrads(Check):
    """Parameter gradients of the MSE loss, computed with the model in evaluation mode."""

    number = 2
    seed: int = 0
    size: int = 8
    device: str | None = None

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        cases = []
        for k, (net, mode, stale, rows) in enumerate(_eval_grads_cases(self.seed, self.size)):
            model, x, target = _model_case(self.seed, k, net, mode, rows, device)
            if stale:
                _stale_grads(self.seed + k, model)
            with _Spy() as spy:
                out = call(fn, model, x, target)
            record = out.record()
            cases.append(
                {
                    "call": record,
                    "events": spy.events,
                    "model": _observe_module(model),
                    "x": snapshot(x),
                    "target": snapshot(target),
                }
            )
            if not out.ok:
                break
        return {"device": str(device), "cases": cases}

    def judge(self, obs: dict) -> None:
        ex = self.heading
        cases = _eval_grads_cases(self.seed, self.size)
        for k, (net, mode, stale, rows), seen in _observed(ex, cases, obs["cases"]):
            prefix = _case_text(k + 1, _arrives(mode))
            grads = _returned(ex, seen["call"], "eval_grads")
            model, x, target = _model_case(self.seed, k, net, mode, rows, "cpu")
            names = [name for name, _ in model.named_parameters()]
            require(
                ex,
                _in_case(
                    prefix,
                    [
                        CheckResult(
                            Text("the return value", "返回值"),
                            grads.kind == "dict" and set(grads.data.get("items", {})) == set(names),
                            Text(
                                "a dict with one entry per name in model.named_parameters()",
                                "字典，model.named_parameters() 中的每个参数名各一项",
                            ),
                            grads.describe()
                            if grads.kind != "dict"
                            else Text("a dict with keys {k}", "键为 {k} 的字典").format(
                                k=sorted(grads.data["items"])[:6]
                            ),
                        )
                    ],
                ),
            )
            events = seen["events"]
            ran_train = any(e["training"] for e in events if e["role"] != "outer")
            mid = "EV-1" if mode == "eval" and ran_train else None
            require(
                ex,
                _in_case(
                    prefix,
                    [
                        c.is_tensor(grads.item(name), f"grads[{name!r}]", _ev1_none(grads, name))
                        for name in names
                    ],
                ),
            )
            results = [
                _layers_ran(
                    events,
                    ("dropout", "batchnorm"),
                    False,
                    Text(
                        "Dropout and BatchNorm ran in evaluation mode during the forward pass",
                        "前向传播期间 Dropout 和 BatchNorm 处于评估模式",
                    ),
                    Text("evaluation mode (model.eval())", "评估模式（model.eval()）"),
                    mid,
                )
            ]
            model.eval()
            wanted = trusted.autograd_grad(_mse(model(x), target), list(model.parameters()))
            model.train(mode == "train")
            olds = _stale_grad_values(self.seed + k, model) if stale else [None] * len(names)
            summed, compared = [], []
            for name, want, old in zip(names, wanted, olds, strict=True):
                found = grads.item(name)
                summed.append(
                    old is not None and not ran_train and _adds_up(found, want, want + old)
                )
                compared.append(c.values(found, want, f"grads[{name!r}]", mid, rtol=1e-4))
            results += [_stale("model.zero_grad()")] if all(summed) else compared
            first = grads.item(names[0])
            results += [
                c.dtype(first, net.torch_dtype, f"grads[{names[0]!r}]"),
                c.on_device(first, obs["device"], f"grads[{names[0]!r}]"),
            ]
            require(ex, _in_case(prefix, results))
            state = seen["model"]
            require(
                ex,
                _in_case(
                    prefix,
                    [
                        _mode_after(
                            state["modes"],
                            _modes(model),
                            Text(
                                "every module is back in the mode it arrived in",
                                "每个模块都回到了进入时的模式",
                            ),
                        ),
                        _params_unchanged(
                            state["params"],
                            model,
                            Text(
                                "the model's parameters are unchanged (no optimizer step)",
                                "模型参数保持不变（不做优化器更新）",
                            ),
                        ),
                        _stats_unchanged(state["buffers"], model, mid),
                        c.values(Seen(seen["x"]), x, _CALLERS.format(name="x")),
                        c.values(Seen(seen["target"]), target, _CALLERS.format(name="target")),
                    ],
                ),
            )


def _ev1_none(grads: Seen, name: str) -> str | None:
    """A parameter without a gradient: the belief that evaluation mode computes none."""
    return "EV-1" if grads.kind == "dict" and grads.item(name).kind == "none" else None


def check_eval_grads(fn, seed: int = 0, size: int = 8, device=None) -> None:
    verdict(EvalGrads(seed, size, None if device is None else str(device)), fn)


# Exercise 3 (EV-2, EV-4, EV-5, EV-6) --------------------------------------------------------


def _validate_cases(seed: int, batches: int, size: int) -> list[tuple[Net, str, bool, list[int]]]:
    """(model shape, mode it arrives in, called under an outer no_grad, batch sizes)."""
    uneven = [size + 2] * (batches - 1) + [3]
    w = _width(seed, 8)
    return [
        (Net(4, 16, 2), "train", False, [size] * batches),
        (Net(5, w, 3, blocks=2, p=0.3, nested=True), "eval", False, uneven),
        (Net(4, w, 2, p=0.2, dtype="float64"), "train", False, [size + 1] * batches + [1]),
        (Net(3, w - 2, 1, blocks=2, p=0.4), "train", True, [size] * batches),
    ]


def _validation_data(seed: int, k: int, net: Net, sizes: list[int], device):
    dt = net.torch_dtype
    return [
        (
            uniform(seed + 10 * k + j, n, net.n_in, device=device, dtype=dt),
            uniform(seed + 500 + 10 * k + j, n, net.n_out, device=device, dtype=dt),
        )
        for j, n in enumerate(sizes)
    ]


def _validate_mode_id(events: list[dict], arrived: str, after: list[bool]) -> str | None:
    """Which belief explains forward passes that ran in training mode, if one does."""
    layers = [e for e in events if e["role"] != "outer"]
    if not any(e["training"] for e in layers) or _top_flag_only(events):
        return None
    if arrived == "train" and not any(after):
        return "EV-5"  # evaluation mode came, but only after the loop
    if not any(e["grad"] for e in layers):
        return "EV-2"  # no_grad was trusted to switch the layers
    return None


@dataclass(frozen=True)
class Validate(Check):
    """Mean validation loss in evaluation mode under no_grad; the caller's mode restored."""

    number = 3
    seed: int = 0
    batches: int = 3
    size: int = 8
    device: str | None = None

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        cases = []
        for k, (net, mode, outer, sizes) in enumerate(
            _validate_cases(self.seed, self.batches, self.size)
        ):
            model = make_net(self.seed + 7 * k, net, device)
            _set_mode(model, mode)
            data = _validation_data(self.seed, k, net, sizes, device)
            with _Spy() as spy, trusted.no_grad() if outer else contextlib.nullcontext():
                out, kept = saved_bytes(call, fn, model, data)
            cases.append(
                {
                    "call": out.record(),
                    "events": spy.events,
                    "saved": int(kept),
                    **_observe_module(model),
                }
            )
            if not out.ok:
                break
        return {"cases": cases}

    def judge(self, obs: dict) -> None:
        ex = self.heading
        cases = _validate_cases(self.seed, self.batches, self.size)
        for k, (net, mode, outer, sizes), seen in _observed(ex, cases, obs["cases"]):
            what = _arrives(mode)
            if outer:
                what = _join(
                    what, Text(", called under torch.no_grad()", "，在 torch.no_grad() 下调用")
                )
            prefix = _case_text(k + 1, what)
            found = _returned(ex, seen["call"], "validate")
            require(ex, _in_case(prefix, [_is_float(found)]))
            model = make_net(self.seed + 7 * k, net, "cpu")
            _set_mode(model, mode)
            arrived = _modes(model)
            data = _validation_data(self.seed, k, net, sizes, "cpu")
            events, after = seen["events"], seen["modes"]
            mid = _validate_mode_id(events, mode, after)
            model.eval()
            with trusted.no_grad():
                losses = [_mse(model(x), y).item() for x, y in data]
            want = sum(losses) / trusted.len_(losses)
            results = [
                _layers_ran(
                    events,
                    ("dropout", "batchnorm"),
                    False,
                    Text(
                        "Dropout and BatchNorm ran in evaluation mode during the forward passes",
                        "前向传播期间 Dropout 和 BatchNorm 处于评估模式",
                    ),
                    Text(
                        "evaluation mode (model.eval() before the loop)",
                        "评估模式（在循环之前调用 model.eval()）",
                    ),
                    mid,
                ),
                _stats_unchanged(seen["buffers"], model, mid),
            ]
            if not outer:
                results.append(_no_graph(events, seen["saved"], "EV-6"))
            restored_eval = mode == "train" and not any(after) and mid is None
            results += [
                _mode_after(
                    after,
                    arrived,
                    Text(
                        "the model is back in the mode it arrived in (restore it, not always "
                        "train())",
                        "模型回到了进入时的模式（恢复原来的模式，而不是一律 train()）",
                    ),
                    "EV-4" if restored_eval else mid if mode == "train" else None,
                ),
                c.values(trusted.tensor(found.value), trusted.tensor(want), "loss", mid, rtol=1e-4),
            ]
            require(ex, _in_case(prefix, results))


def check_validate(fn, seed: int = 0, batches: int = 3, size: int = 8, device=None) -> None:
    verdict(Validate(seed, batches, size, None if device is None else str(device)), fn)


class _Replay:
    """Make a reference model's Dropout layers apply recorded masks, in the order drawn."""

    def __init__(self, model: torch.nn.Module, masks: Iterator[torch.Tensor]):
        self.model, self.masks, self._handles = model, masks, []

    def _apply(self, module, args, output):
        (x,) = args
        mask = next(self.masks)
        return torch.where(mask, x / (1 - module.p), trusted.zeros((), dtype=x.dtype))

    def __enter__(self) -> _Replay:
        self._handles = [
            m.register_forward_hook(self._apply)
            for m in self.model.modules()
            if trusted.isinstance_(m, _DROPOUT)
        ]
        return self

    def __exit__(self, *exc) -> None:
        for handle in self._handles:
            handle.remove()


def _dropout_count(model: torch.nn.Module) -> int:
    return sum(1 for m in model.modules() if trusted.isinstance_(m, _DROPOUT))


# Exercise 4 (EV-2) -------------------------------------------------------------------------


def _finetune_cases(seed: int, size: int) -> list[tuple[Net, int, str, str, int]]:
    """(backbone shape, head outputs, backbone's mode, head's mode, batch size).

    The backbone's shape is a ``Net`` whose ``n_out`` is unused: the head sets the outputs.
    """
    w = _width(seed, 8)
    return [
        (Net(5, 12, 0, p=0.3), 3, "train", "train", size),
        (Net(6, w, 0, blocks=2, p=0.5), 2, "eval", "eval", size + 4),
        (Net(4, w - 1, 0, p=0.2, dtype="float64"), 4, "train", "eval", size + 2),
    ]


def _finetune_inputs(seed: int, k: int, net: Net, head_out: int, rows: int, device):
    backbone, head = make_backbone_head(seed + 7 * k, net, head_out, device)
    x = uniform(seed + 100 + k, rows, net.n_in, device=device, dtype=net.torch_dtype)
    target = uniform(seed + 200 + k, rows, head_out, device=device, dtype=net.torch_dtype)
    return backbone, head, x, target


@dataclass(frozen=True)
class FinetuneHead(Check):
    """One SGD step on the head; the backbone's weights and BatchNorm statistics stay frozen.

    Head and backbone arrive with stale gradients, and in training or evaluation
    mode, so a forgotten zero_grad(), backbone.eval() or head.train() shows.
    """

    number = 4
    seed: int = 0
    lr: float = 0.1
    size: int = 10
    device: str | None = None

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        cases = []
        for k, case in enumerate(_finetune_cases(self.seed, self.size)):
            net, head_out, backbone_mode, head_mode, rows = case
            backbone, head, x, target = _finetune_inputs(self.seed, k, net, head_out, rows, device)
            backbone.train(backbone_mode == "train")
            head.train(head_mode == "train")
            _stale_grads(self.seed + k, backbone, head)
            with _Spy(masks=True) as spy:
                out = call(fn, backbone, head, x, target, self.lr)
            cases.append(
                {
                    "call": out.record(),
                    "events": spy.events,
                    "backbone": _observe_module(backbone),
                    "head": _observe_module(head),
                }
            )
            if not out.ok:
                break
        return {"cases": cases}

    def judge(self, obs: dict) -> None:
        ex = self.heading
        for k, case, seen in _observed(ex, _finetune_cases(self.seed, self.size), obs["cases"]):
            net, head_out, backbone_mode, head_mode, rows = case
            prefix = _case_text(
                k + 1,
                Text("backbone in {b}, head in {h}", "主干网络处于{b}，头部处于{h}").format(
                    b=_TRAIN if backbone_mode == "train" else _EVAL,
                    h=_TRAIN if head_mode == "train" else _EVAL,
                ),
            )
            loss = _returned(ex, seen["call"], "finetune_head")
            require(ex, _in_case(prefix, [_is_float(loss)]))
            backbone, head, x, target = _finetune_inputs(self.seed, k, net, head_out, rows, "cpu")
            events = seen["events"]
            norms = _role(events, "batchnorm")
            bn_train = any(e["training"] for e in norms)
            mid = (
                "EV-2" if bn_train and not any(e["grad"] for e in norms if e["training"]) else None
            )
            n_drop = _dropout_count(head)
            drops = [e for e in _role(events, "dropout") if e["grad"]][:n_drop]
            state = seen["backbone"]
            require(
                ex,
                _in_case(
                    prefix,
                    [
                        _layers_ran(
                            norms,
                            ("batchnorm",),
                            False,
                            Text(
                                "the backbone's BatchNorm ran in evaluation mode",
                                "主干网络的 BatchNorm 以评估模式运行",
                            ),
                            Text(
                                "evaluation mode (backbone.eval())", "评估模式（backbone.eval()）"
                            ),
                            mid,
                        ),
                        _stats_unchanged(state["buffers"], backbone, mid),
                        _params_unchanged(
                            state["params"],
                            backbone,
                            Text("the backbone's weights are unchanged", "主干网络的权重保持不变"),
                        ),
                        CheckResult(
                            Text(
                                "the head's Dropout was active in the forward pass that "
                                "autograd recorded",
                                "在自动求导记录的那次前向传播中，头部的 Dropout 处于工作状态",
                            ),
                            trusted.len_(drops) == n_drop and all(e["training"] for e in drops),
                            Text("training mode (head.train())", "训练模式（head.train()）"),
                            _ran_in(drops),
                        ),
                    ],
                ),
            )
            backbone.eval()
            with trusted.no_grad():
                features = backbone(x)
            head.eval()
            with _Replay(head, iter(e["mask"] for e in drops)):
                loss_ref = _mse(head(features), target)
            params = list(head.named_parameters())
            grads = trusted.autograd_grad(loss_ref, [p for _, p in params])
            olds = _stale_grad_values(self.seed + k, head, sum(1 for _ in backbone.parameters()))
            found_params = seen["head"]["params"]
            results = [c.values(trusted.tensor(loss.value), loss_ref.detach(), "loss", rtol=1e-4)]
            summed, compared = [], []
            for (name, p), g, old in zip(params, grads, olds, strict=True):
                found = Seen(snapshot(found_params.get(name)))
                want = p.detach() - self.lr * g
                summed.append(_adds_up(found, want, want - self.lr * old))
                compared.append(c.values(found, want, f"head.{name}", rtol=1e-4))
            results += [_stale("optimizer.zero_grad()")] if all(summed) else compared
            require(ex, _in_case(prefix, results))


def check_finetune_head(fn, seed: int = 0, lr: float = 0.1, size: int = 10, device=None) -> None:
    verdict(FinetuneHead(seed, lr, size, None if device is None else str(device)), fn)


# Exercise 5 (EV-2, EV-6) -------------------------------------------------------------------


def _mc_cases(seed: int, size: int) -> list[tuple[Net, str, bool, int]]:
    """(model shape, mode it arrives in, called under an outer no_grad, batch size)."""
    w = _width(seed, 8)
    return [
        (Net(4, 16, 2), "eval", False, size),
        (Net(6, w, 3, blocks=2, p=0.3, nested=True, dtype="float64"), "train", False, size + 3),
        (Net(5, w + 2, 2, blocks=2, p=0.2), "mixed", False, size + 1),
        (Net(3, w - 1, 1, p=0.4), "train", True, size),
    ]


@dataclass(frozen=True)
class McDropoutPredict(Check):
    """Mean and std over samples with Dropout on, BatchNorm in eval, no graph, modes restored."""

    number = 5
    seed: int = 0
    samples: int = 20
    size: int = 6
    device: str | None = None

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        cases = []
        for k, (net, mode, outer, rows) in enumerate(_mc_cases(self.seed, self.size)):
            model, x, _ = _model_case(self.seed, k, net, mode, rows, device)
            with _Spy(masks=True) as spy, trusted.no_grad() if outer else contextlib.nullcontext():
                out, kept = saved_bytes(call, fn, model, x, self.samples)
            cases.append(
                {
                    "device": str(device),
                    "call": out.record(),
                    "events": spy.events,
                    "saved": int(kept),
                    "x": snapshot(x),
                    **_observe_module(model),
                }
            )
            if not out.ok:
                break
        return {"cases": cases}

    def judge(self, obs: dict) -> None:
        ex = self.heading
        for k, (net, mode, outer, rows), seen in _observed(
            ex, _mc_cases(self.seed, self.size), obs["cases"]
        ):
            what = _arrives(mode)
            if outer:
                what = _join(
                    what, Text(", called under torch.no_grad()", "，在 torch.no_grad() 下调用")
                )
            prefix = _case_text(k + 1, what)
            out = _returned(ex, seen["call"], "mc_dropout_predict")
            require(ex, _in_case(prefix, [c.returns_tuple(out, 2, "(mean, std)")]))
            mean, std = out.items
            require(ex, _in_case(prefix, [c.is_tensor(mean, "mean"), c.is_tensor(std, "std")]))
            model, x, _ = _model_case(self.seed, k, net, mode, rows, "cpu")
            events = seen["events"]
            norms = _role(events, "batchnorm")
            bn_train = any(e["training"] for e in norms)
            bn_id = (
                "EV-2" if bn_train and not any(e["grad"] for e in norms if e["training"]) else None
            )
            drops = _role(events, "dropout")
            wanted_drops = self.samples * _dropout_count(model)
            results = [
                _layers_ran(
                    events,
                    ("batchnorm",),
                    False,
                    Text("BatchNorm ran in evaluation mode", "BatchNorm 以评估模式运行"),
                    _EVAL,
                    bn_id,
                ),
                _stats_unchanged(seen["buffers"], model, bn_id),
                _layers_ran(
                    events,
                    ("dropout",),
                    True,
                    Text(
                        "every Dropout was active in every forward pass",
                        "每次前向传播中每个 Dropout 都处于工作状态",
                    ),
                    _TRAIN,
                    None,
                ),
                CheckResult(
                    Text(
                        "calls of Dropout layers (samples × Dropout layers)",
                        "Dropout 层被调用的次数（采样次数 × Dropout 层数）",
                    ),
                    trusted.len_(drops) == wanted_drops,
                    str(wanted_drops),
                    str(trusted.len_(drops)),
                ),
            ]
            if not outer:
                results += [
                    _no_graph(events, seen["saved"], "EV-6"),
                    c.requires_grad(mean, False, "mean", "EV-6"),
                ]
            results += [
                _mode_after(
                    seen["modes"],
                    _modes(model),
                    Text("every module is back in the mode it had", "每个模块都回到了原来的模式"),
                ),
                c.values(Seen(seen["x"]), x, _CALLERS.format(name="x")),
            ]
            require(ex, _in_case(prefix, results))
            model.eval()
            masks = iter(e["mask"] for e in drops)
            with trusted.no_grad(), _Replay(model, masks):
                preds = torch.stack([model(x) for _ in range(self.samples)])
            require(
                ex,
                _in_case(
                    prefix,
                    [
                        c.shape(mean, (rows, net.n_out), "mean"),
                        c.shape(std, (rows, net.n_out), "std"),
                        c.dtype(mean, net.torch_dtype, "mean"),
                        c.on_device(mean, seen["device"], "mean"),
                        c.values(mean, preds.mean(dim=0), "mean", rtol=1e-4, atol=1e-5),
                        c.values(std, preds.std(dim=0), "std", rtol=1e-4, atol=1e-5),
                    ],
                ),
            )


def check_mc_dropout_predict(
    fn, seed: int = 0, samples: int = 20, size: int = 6, device=None
) -> None:
    verdict(McDropoutPredict(seed, samples, size, None if device is None else str(device)), fn)


EXERCISES: tuple[Exercise, ...] = (
    Exercise(
        1,
        "dropout_by_hand",
        Text("Dropout by hand", "手写 Dropout"),
        check_dropout_by_hand,
        ("EV-3",),
    ),
    Exercise(
        2,
        "eval_grads",
        Text("gradients in evaluation mode", "评估模式下的梯度"),
        check_eval_grads,
        ("EV-1",),
    ),
    Exercise(
        3,
        "validate",
        Text("a correct validation routine", "正确的验证流程"),
        check_validate,
        ("EV-2", "EV-4", "EV-5", "EV-6"),
    ),
    Exercise(
        4,
        "finetune_head",
        Text(
            "fine-tune a head on a frozen BatchNorm backbone",
            "在冻结的 BatchNorm 主干网络上微调头部",
        ),
        check_finetune_head,
        ("EV-2",),
    ),
    Exercise(
        5,
        "mc_dropout_predict",
        Text("Monte-Carlo dropout", "蒙特卡洛 Dropout"),
        check_mc_dropout_predict,
        ("EV-2", "EV-6"),
    ),
)


def self_check(namespace: dict) -> list:
    """Run every exercise's visible checks against the notebook's namespace; print a summary."""
    return run_self_check(EXERCISES, namespace)
