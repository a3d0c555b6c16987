"""Checks for lesson 03: model.eval() vs torch.no_grad().

Every check builds fresh models and inputs from a seed (hidden tests use other
seeds and sizes) and watches the learner's code with forward hooks on the
Dropout and BatchNorm layers: the mode each layer ran in, whether autograd was
recording, and the Dropout masks drawn. Values are compared with an independent
computation on a deep copy of the model run in the correct mode.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from autograder.common import compare as c
from autograder.common import trusted
from autograder.common.exercise import Exercise, call_learner
from autograder.common.i18n import Text
from autograder.common.inputs import resolve_device, uniform
from autograder.common.result import CheckResult, Passed, require
from autograder.kernel.measure import saved_bytes
from autograder.kernel.selfcheck import run_self_check

_BATCHNORM = torch.nn.modules.batchnorm._BatchNorm
_DROPOUT = torch.nn.Dropout
_EVAL = Text("evaluation mode", "评估模式")
_TRAIN = Text("training mode", "训练模式")
_UNCHANGED = Text("unchanged", "不变")
_CHANGED = Text("changed", "已改变")


# Models and what the checks watch ----------------------------------------------------------


def _set_running_stats(bn: torch.nn.Module, seed: int) -> None:
    """Give a BatchNorm layer running statistics far from a fresh batch's statistics."""
    width = bn.num_features
    with trusted.no_grad():
        bn.running_mean.copy_(uniform(seed, width, device="cpu") * 0.8)
        bn.running_var.copy_(uniform(seed + 1, width, device="cpu") * 0.5 + 1.5)
        bn.num_batches_tracked.fill_(50)


def make_net(seed: int, device, p: float = 0.5) -> torch.nn.Sequential:
    """Linear(4, 16) → BatchNorm1d → ReLU → Dropout(p) → Linear(16, 2), with "trained" stats."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        net = torch.nn.Sequential(
            torch.nn.Linear(4, 16),
            torch.nn.BatchNorm1d(16),
            torch.nn.ReLU(),
            torch.nn.Dropout(p),
            torch.nn.Linear(16, 2),
        )
    _set_running_stats(net[1], seed + 100)
    return net.to(device)


def make_backbone_head(seed: int, device, p: float = 0.3):
    """A pre-trained backbone (Linear → BatchNorm1d → ReLU) and a head (Dropout(p) → Linear)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        backbone = torch.nn.Sequential(
            torch.nn.Linear(5, 12), torch.nn.BatchNorm1d(12), torch.nn.ReLU()
        )
        head = torch.nn.Sequential(torch.nn.Dropout(p), torch.nn.Linear(12, 3))
    _set_running_stats(backbone[1], seed + 100)
    return backbone.to(device), head.to(device)


@dataclass
class _Call:
    """One forward call of a watched layer: its kind, its mode, grad mode, and its output."""

    kind: str
    training: bool
    grad_enabled: bool
    output: torch.Tensor | None


@dataclass
class _Watch:
    """Record every forward call of the Dropout and BatchNorm layers of some modules."""

    modules: tuple[torch.nn.Module, ...]
    keep_outputs: bool = False
    calls: list[_Call] = field(default_factory=list)
    _handles: list = field(default_factory=list)

    def _hook(self, module, inputs, output):
        kept = output.detach().clone() if self.keep_outputs else None
        self.calls.append(
            _Call(type(module).__name__, module.training, trusted.is_grad_enabled(), kept)
        )

    def __enter__(self) -> _Watch:
        for root in self.modules:
            for module in root.modules():
                if trusted.isinstance_(module, (_BATCHNORM, _DROPOUT)):
                    self._handles.append(module.register_forward_hook(self._hook))
        return self

    def __exit__(self, *exc) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()

    def batchnorm(self) -> list[_Call]:
        return [call for call in self.calls if "BatchNorm" in call.kind]

    def dropout(self) -> list[_Call]:
        return [call for call in self.calls if "Dropout" in call.kind]

    def modes(self, calls: list[_Call] | None = None) -> Text:
        """Which layer kinds ran in which mode, e.g. 'BatchNorm1d: training mode'."""
        seen = sorted(
            {(call.kind, call.training) for call in (self.calls if calls is None else calls)}
        )
        if not seen:
            return Text("no forward pass through the model", "模型没有做任何前向传播")
        return Text(
            ", ".join(f"{kind}: {(_TRAIN if t else _EVAL).en}" for kind, t in seen),
            "，".join(f"{kind}：{(_TRAIN if t else _EVAL).zh}" for kind, t in seen),
        )


def _buffers(*modules: torch.nn.Module) -> list[torch.Tensor]:
    return [b.detach().clone() for m in modules for b in m.buffers()]


def _parameters(*modules: torch.nn.Module) -> list[torch.Tensor]:
    return [p.detach().clone() for m in modules for p in m.parameters()]


def _same(before: list[torch.Tensor], after: list[torch.Tensor]) -> bool:
    return trusted.len_(before) == trusted.len_(after) and all(
        trusted.equal(a, b.detach()) for a, b in zip(before, after, strict=True)
    )


def _stats_unchanged(before, modules, misconception: str | None) -> CheckResult:
    return CheckResult(
        Text("BatchNorm's running statistics are unchanged", "BatchNorm 的滑动平均统计量保持不变"),
        _same(before, _buffers(*modules)),
        _UNCHANGED,
        _CHANGED,
        misconception,
    )


def _all_modes(model: torch.nn.Module) -> list[bool]:
    return [m.training for m in model.modules()]


def _mode_name(modes: list[bool]) -> Text:
    if all(modes):
        return _TRAIN
    if not any(modes):
        return _EVAL
    return Text("a mix of modes", "混合模式")


def _is_float(value, what: Text) -> CheckResult:
    return CheckResult(what, trusted.isinstance_(value, float), "float", type(value).__name__)


def _mse(out: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return ((out - target) ** 2).mean()


def _no_graph(kept: int, grad_on: bool, misconception: str | None) -> CheckResult:
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
        misconception,
    )


# Exercise 1 (EV-3) -------------------------------------------------------------------------


def check_dropout_by_hand(
    fn: Callable, seed: int = 0, p: float = 0.2, rows: int = 40, cols: int = 50, device=None
) -> Passed:
    """Drop where u < p, scale survivors by 1/(1-p); identity when not training."""
    ex = EXERCISES[0].heading
    device = resolve_device(device)
    x = uniform(seed, rows, cols, device=device)
    u = (uniform(seed + 1, rows, cols, device=device) + 1) / 2
    out = call_learner(ex, fn, x.clone(), p, u.clone(), True)
    require(ex, [c.is_tensor(out, "out")])
    require(ex, [c.shape(out, tuple(x.shape), "out"), c.on_device(out, device, "out")])
    found = out.detach().to("cpu", torch.float64)
    xs = x.to("cpu", torch.float64)
    nonzero = xs != 0
    dropped = (found == 0) & nonzero
    kept = ~dropped & nonzero
    fraction = (dropped.sum() / nonzero.sum()).item()
    ratio = (found[kept] / xs[kept]).median().item() if kept.any() else float("nan")
    ev3 = abs(fraction - (1 - p)) < abs(fraction - p) or abs(ratio - 1 / p) < 1e-3
    ev3_id = "EV-3" if ev3 else None
    scaled = xs[kept] / (1 - p)
    drop = u.to("cpu", torch.float64) < p
    want = torch.where(drop, trusted.zeros((), dtype=torch.float64), xs / (1 - p))
    require(
        ex,
        [
            CheckResult(
                Text(
                    "fraction of elements set to zero (p = {p})", "被置零的元素比例（p = {p}）"
                ).format(p=p),
                abs(fraction - p) <= 0.05,
                Text("≈ {p} (p is the drop probability)", "≈ {p}（p 是丢弃概率）").format(p=p),
                f"{fraction:.3f}",
                ev3_id,
            ),
            CheckResult(
                Text("the scale of the kept elements", "保留下来的元素的缩放倍数"),
                bool(kept.any()) and bool(trusted.allclose(found[kept], scaled, rtol=1e-5)),
                f"1/(1-p) = {1 / (1 - p):.4g}",
                f"{ratio:.4g}",
                ev3_id,
            ),
            c.dtype(out, x.dtype, "out"),
            c.values(out, want, "out", misconception=ev3_id),
        ],
    )
    out_eval = call_learner(ex, fn, x.clone(), p, u.clone(), False)
    require(ex, [c.is_tensor(out_eval, "out (training=False)")])
    require(
        ex,
        [
            c.values(
                out_eval,
                x,
                Text(
                    "out with training=False (Dropout is the identity in evaluation mode)",
                    "training=False 时的 out（评估模式下 Dropout 什么也不做）",
                )(),
            )
        ],
    )
    return Passed(ex)


# Exercise 2 (EV-1) -------------------------------------------------------------------------


def check_eval_grads(
    fn: Callable, seed: int = 0, size: int = 8, start_in_eval: bool = True, device=None
) -> Passed:
    """Parameter gradients of the MSE loss, computed with the model in evaluation mode."""
    ex = EXERCISES[1].heading
    device = resolve_device(device)
    model = make_net(seed, device)
    model.train(not start_in_eval)
    reference = copy.deepcopy(model).eval()
    x = uniform(seed + 1, size, 4, device=device)
    target = uniform(seed + 2, size, 2, device=device)
    stats, params = _buffers(model), _parameters(model)
    names = [name for name, _ in model.named_parameters()]
    with _Watch((model,)) as watch:
        grads = call_learner(ex, fn, model, x.clone(), target.clone())
    ran_in_train = any(call.training for call in watch.calls)
    ev1 = "EV-1" if start_in_eval else None
    if not trusted.isinstance_(grads, dict):
        require(
            ex,
            [
                CheckResult(
                    Text("the return value", "返回值"),
                    False,
                    Text("a dict {parameter name: gradient}", "字典 {参数名: 梯度}"),
                    type(grads).__name__,
                    "EV-1" if grads is None else None,
                )
            ],
        )
    results = [
        CheckResult(
            Text("gradient of model.{name}", "model.{name} 的梯度").format(name=name),
            trusted.isinstance_(grads.get(name), trusted.tensor_type),
            Text(
                "a tensor: evaluation mode still computes gradients",
                "一个张量：评估模式下照样计算梯度",
            ),
            trusted.repr_(grads.get(name))[:60],
            "EV-1",
        )
        for name in names
    ]
    results.append(
        CheckResult(
            Text(
                "Dropout and BatchNorm ran in evaluation mode during the forward pass",
                "前向传播期间 Dropout 和 BatchNorm 处于评估模式",
            ),
            bool(watch.calls) and not ran_in_train,
            _EVAL,
            watch.modes(),
            ev1,
        )
    )
    require(ex, results)
    want = trusted.autograd_grad(
        _mse(reference(x), target), [p for _, p in reference.named_parameters()]
    )
    results = [
        _stats_unchanged(stats, (model,), ev1 if ran_in_train else None),
        CheckResult(
            Text(
                "the model's parameters are unchanged (no optimizer step)",
                "模型参数保持不变（不做优化器更新）",
            ),
            _same(params, _parameters(model)),
            _UNCHANGED,
            _CHANGED,
        ),
        CheckResult(
            Text("the model is in evaluation mode afterwards", "之后模型处于评估模式"),
            not any(_all_modes(model)),
            _EVAL,
            _mode_name(_all_modes(model)),
        ),
    ]
    results += [
        c.values(grads[name], g, f"grads[{name!r}]", misconception=ev1 if ran_in_train else None)
        for name, g in zip(names, want, strict=True)
    ]
    results += [c.on_device(grads[name], device, f"grads[{name!r}]") for name in names[:1]]
    require(ex, results)
    return Passed(ex)


# Exercise 3 (EV-2, EV-4, EV-5, EV-6) --------------------------------------------------------


def _batches(seed: int, count: int, size: int, device) -> list[tuple[torch.Tensor, torch.Tensor]]:
    return [
        (
            uniform(seed + 10 + k, size, 4, device=device),
            uniform(seed + 50 + k, size, 2, device=device),
        )
        for k in range(count)
    ]


def _reference_loss(model: torch.nn.Module, batches) -> float:
    reference = copy.deepcopy(model).eval()
    with trusted.no_grad():
        losses = [_mse(reference(x), y).item() for x, y in batches]
    return sum(losses) / trusted.len_(losses)


def _run_validate(ex: Text, fn: Callable, model, batches):
    want = _reference_loss(model, batches)
    stats = _buffers(model)
    with _Watch((model,)) as watch:
        found, kept = saved_bytes(
            call_learner, ex, fn, model, [(x.clone(), y.clone()) for x, y in batches]
        )
    require(
        ex,
        [
            _is_float(
                found, Text("the returned loss is a Python float", "返回的损失是 Python float")
            )
        ],
    )
    return found, want, stats, kept, watch


def check_validate(
    fn: Callable, seed: int = 0, batches: int = 3, size: int = 8, device=None
) -> Passed:
    """Mean validation loss in eval mode under no_grad; the previous mode restored."""
    ex = EXERCISES[2].heading
    device = resolve_device(device)
    data = _batches(seed, batches, size, device)

    model = make_net(seed, device).train()
    found, want, stats, kept, watch = _run_validate(ex, fn, model, data)
    ran_in_train = any(call.training for call in watch.calls)
    grad_on = any(call.grad_enabled for call in watch.calls)
    late_eval = ran_in_train and not any(_all_modes(model))
    if late_eval:
        mode_id = "EV-5"
    elif ran_in_train and not grad_on:
        mode_id = "EV-2"
    else:
        mode_id = None
    after = _all_modes(model)
    require(
        ex,
        [
            CheckResult(
                Text(
                    "Dropout and BatchNorm ran in evaluation mode during the forward passes",
                    "前向传播期间 Dropout 和 BatchNorm 处于评估模式",
                ),
                bool(watch.calls) and not ran_in_train,
                Text(
                    "evaluation mode (model.eval() before the loop)",
                    "评估模式（在循环之前调用 model.eval()）",
                ),
                watch.modes(),
                mode_id,
            ),
            _stats_unchanged(stats, (model,), mode_id),
            _no_graph(kept, grad_on, "EV-6" if grad_on else None),
            CheckResult(
                Text(
                    "a model that was in training mode is back in training mode afterwards",
                    "原本处于训练模式的模型，之后回到训练模式",
                ),
                all(after),
                _TRAIN,
                _mode_name(after),
                "EV-5" if late_eval else "EV-4",
            ),
            c.values(trusted.tensor(found), trusted.tensor(want), "loss", mode_id, rtol=1e-4),
        ],
    )

    model = make_net(seed + 1, device).eval()
    found, want, stats, kept, watch = _run_validate(ex, fn, model, data)
    after = _all_modes(model)
    require(
        ex,
        [
            CheckResult(
                Text(
                    "a model that was in evaluation mode stays in evaluation mode "
                    "(restore the previous mode, not always train())",
                    "原本处于评估模式的模型，之后仍处于评估模式"
                    "（恢复原来的模式，而不是一律 train()）",
                ),
                not any(after),
                _EVAL,
                _mode_name(after),
            ),
            _stats_unchanged(stats, (model,), None),
            c.values(trusted.tensor(found), trusted.tensor(want), "loss", rtol=1e-4),
        ],
    )
    return Passed(ex)


# Exercise 4 (EV-2) -------------------------------------------------------------------------


def check_finetune_head(
    fn: Callable, seed: int = 0, lr: float = 0.1, size: int = 10, device=None
) -> Passed:
    """One SGD step on the head; the backbone's weights and BatchNorm statistics stay frozen."""
    ex = EXERCISES[3].heading
    device = resolve_device(device)
    backbone, head = make_backbone_head(seed, device)
    backbone.train()
    head.train()
    ref_backbone, ref_head = copy.deepcopy(backbone).eval(), copy.deepcopy(head)
    x = uniform(seed + 1, size, 5, device=device)
    target = uniform(seed + 2, size, 3, device=device)
    stats, weights = _buffers(backbone), _parameters(backbone)
    with _Watch((backbone, head), keep_outputs=True) as watch:
        loss = call_learner(ex, fn, backbone, head, x.clone(), target.clone(), lr)
    require(
        ex,
        [_is_float(loss, Text("the returned loss is a Python float", "返回的损失是 Python float"))],
    )
    bn_train = any(call.training for call in watch.batchnorm())
    drops = [call for call in watch.dropout() if call.grad_enabled]
    require(
        ex,
        [
            CheckResult(
                Text(
                    "the backbone's BatchNorm ran in evaluation mode",
                    "主干网络的 BatchNorm 以评估模式运行",
                ),
                bool(watch.batchnorm()) and not bn_train,
                Text("evaluation mode (backbone.eval())", "评估模式（backbone.eval()）"),
                watch.modes(watch.batchnorm()),
                "EV-2",
            ),
            _stats_unchanged(stats, (backbone,), "EV-2"),
            CheckResult(
                Text("the backbone's weights are unchanged", "主干网络的权重保持不变"),
                _same(weights, _parameters(backbone)),
                _UNCHANGED,
                _CHANGED,
            ),
            CheckResult(
                Text(
                    "the head's Dropout was active while training (with autograd recording)",
                    "训练时头部的 Dropout 处于工作状态（且自动求导在记录）",
                ),
                bool(drops) and all(call.training for call in drops),
                _TRAIN,
                watch.modes(watch.dropout()),
            ),
        ],
    )
    p = head[0].p
    mask = drops[0].output != 0
    with trusted.no_grad():
        features = ref_backbone(x)
    dropped = torch.where(mask, features / (1 - p), trusted.zeros((), device=device))
    linear = ref_head[1]
    loss_ref = _mse(linear(dropped), target)
    grads = trusted.autograd_grad(loss_ref, [linear.weight, linear.bias])
    require(
        ex,
        [
            c.values(trusted.tensor(loss), loss_ref.detach(), "loss", rtol=1e-4),
            c.values(head[1].weight, linear.weight - lr * grads[0], "head[1].weight", rtol=1e-4),
            c.values(head[1].bias, linear.bias - lr * grads[1], "head[1].bias", rtol=1e-4),
        ],
    )
    return Passed(ex)


# Exercise 5 (EV-2, EV-6) -------------------------------------------------------------------


def check_mc_dropout_predict(
    fn: Callable, seed: int = 0, samples: int = 20, size: int = 6, start_in_eval=True, device=None
) -> Passed:
    """Mean and std over samples with Dropout on, BatchNorm in eval, and no graph."""
    ex = EXERCISES[4].heading
    device = resolve_device(device)
    model = make_net(seed, device)
    model.train(not start_in_eval)
    modes = _all_modes(model)
    reference = copy.deepcopy(model).eval()
    x = uniform(seed + 1, size, 4, device=device)
    stats = _buffers(model)
    with _Watch((model,), keep_outputs=True) as watch:
        out, kept = saved_bytes(call_learner, ex, fn, model, x.clone(), samples)
    require(ex, [c.returns_tuple(out, 2, "(mean, std)")])
    mean, std = out
    require(ex, [c.is_tensor(mean, "mean"), c.is_tensor(std, "std")])
    bn_train = any(call.training for call in watch.batchnorm())
    grad_on = any(call.grad_enabled for call in watch.calls)
    bn_id = "EV-2" if bn_train and not grad_on else None
    drops = watch.dropout()
    require(
        ex,
        [
            CheckResult(
                Text("BatchNorm ran in evaluation mode", "BatchNorm 以评估模式运行"),
                bool(watch.batchnorm()) and not bn_train,
                _EVAL,
                watch.modes(watch.batchnorm()),
                bn_id,
            ),
            _stats_unchanged(stats, (model,), bn_id),
            CheckResult(
                Text(
                    "Dropout was active in every forward pass",
                    "每次前向传播中 Dropout 都处于工作状态",
                ),
                bool(drops) and all(call.training for call in drops),
                _TRAIN,
                watch.modes(watch.dropout()),
            ),
            CheckResult(
                Text("number of forward passes", "前向传播的次数"),
                trusted.len_(drops) == samples,
                str(samples),
                str(trusted.len_(drops)),
            ),
            _no_graph(kept, grad_on, "EV-6" if grad_on else None),
            c.requires_grad(mean, False, "mean", "EV-6"),
            CheckResult(
                Text("every module is back in the mode it had", "每个模块都回到了原来的模式"),
                _all_modes(model) == modes,
                _mode_name(modes),
                _mode_name(_all_modes(model)),
            ),
            c.shape(mean, (size, 2), "mean"),
            c.shape(std, (size, 2), "std"),
        ],
    )
    p = model[3].p
    with trusted.no_grad():
        features = reference[:3](x)
        preds = torch.stack(
            [
                reference[4](
                    torch.where(
                        call.output != 0, features / (1 - p), trusted.zeros((), device=device)
                    )
                )
                for call in drops
            ]
        )
    require(
        ex,
        [
            c.on_device(mean, device, "mean"),
            c.values(mean, preds.mean(dim=0), "mean", rtol=1e-4, atol=1e-5),
            c.values(std, preds.std(dim=0), "std", rtol=1e-4, atol=1e-5),
        ],
    )
    return Passed(ex)


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
