"""Checks for lesson 02: no_grad, inference_mode, and what autograd keeps in memory.

The checks measure behaviour: bytes saved for backward while the learner's code
runs, the grad mode before and after, whether outputs are inference tensors,
and values against an independent computation.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable

import torch

from autograder.common import compare as c
from autograder.common import trusted
from autograder.common.exercise import Exercise, call_learner
from autograder.common.i18n import Text
from autograder.common.inputs import resolve_device, uniform
from autograder.common.result import CheckResult, Passed, require
from autograder.kernel.measure import saved_bytes
from autograder.kernel.selfcheck import run_self_check


def make_classifier(seed: int, device, width: int = 16) -> torch.nn.Sequential:
    """A small MLP classifier with fixed weights: 8 features, 3 classes."""
    torch.manual_seed(seed)
    return torch.nn.Sequential(
        torch.nn.Linear(8, width), torch.nn.ReLU(), torch.nn.Linear(width, 3)
    ).to(device)


def _batches(seed: int, count: int, device) -> list[tuple[torch.Tensor, torch.Tensor]]:
    g = trusted.generator().manual_seed(seed)
    return [
        (
            uniform(seed + 100 + k, 10, 8, device=device),
            trusted.randint(0, 3, (10,), generator=g).to(device),
        )
        for k in range(count)
    ]


def _grad_mode_restored(before: bool) -> CheckResult:
    return CheckResult(
        Text(
            "grad mode after your function (torch.is_grad_enabled())",
            "函数返回后的梯度模式（torch.is_grad_enabled()）",
        ),
        trusted.is_grad_enabled() == before,
        str(before),
        str(trusted.is_grad_enabled()),
    )


def _no_graph(kept: int, misconception: str | None) -> CheckResult:
    return CheckResult(
        Text("bytes saved for backward while it ran", "运行期间为反向传播保存的字节数"),
        kept == 0,
        "0",
        str(kept),
        misconception,
    )


def _is_float(value, name: str, misconception: str | None = None) -> CheckResult:
    return CheckResult(
        Text("{name} is a Python float", "{name} 是 Python float").format(name=name),
        isinstance(value, float),
        "float",
        trusted.repr_(value)[:80],
        misconception,
    )


# Exercise 1 (NG-1, NG-3) -------------------------------------------------------------------


def check_evaluate(fn: Callable, seed: int = 0, count: int = 4, device=None) -> Passed:
    """Mean loss and accuracy as Python floats, with nothing saved for backward."""
    ex = EXERCISES[0].heading
    device = resolve_device(device)
    model = make_classifier(seed, device)
    reference = copy.deepcopy(model)
    batches = _batches(seed, count, device)
    before = trusted.is_grad_enabled()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out, kept = saved_bytes(call_learner, ex, fn, model, batches)
    volatile = any("volatile" in str(w.message) for w in caught)
    require(ex, [_grad_mode_restored(before)])
    require(ex, [_no_graph(kept, "NG-1" if volatile else "NG-3")])
    require(ex, [c.returns_tuple(out, 2, "(mean_loss, accuracy)")])
    mean_loss, accuracy = out
    keeps_graph = any(getattr(v, "grad_fn", None) is not None for v in out)
    rg = "NG-3" if keeps_graph else None
    require(ex, [_is_float(mean_loss, "mean_loss", rg), _is_float(accuracy, "accuracy", rg)])
    with trusted.no_grad():
        losses = [torch.nn.functional.cross_entropy(reference(x), y) for x, y in batches]
        hits = [(reference(x).argmax(dim=1) == y).double().mean() for x, y in batches]
    require(
        ex,
        [
            c.values(trusted.tensor(mean_loss), sum(losses) / count, "mean_loss", rtol=1e-4),
            c.values(trusted.tensor(accuracy), sum(hits) / count, "accuracy", rtol=1e-4),
        ],
    )
    return Passed(ex)


# Exercise 2 (NG-2) -------------------------------------------------------------------------


def _measured_cases(seed: int, device) -> list[tuple[Text, Callable, tuple]]:
    layer = torch.nn.Linear(6, 4).to(device)
    x = uniform(seed, 5, 6, device=device)
    leaf = uniform(seed + 1, 7, device=device).requires_grad_()
    return [
        (Text("a linear layer on a plain batch", "线性层作用于普通批次"), layer, (x,)),
        (Text("x * x for a leaf x", "叶子张量 x 的 x * x"), lambda t: t * t, (leaf,)),
        (Text("exp, then sum", "先 exp 再 sum"), lambda t: t.exp().sum(), (leaf,)),
        (Text("sum only", "只做 sum"), lambda t: t.sum(), (leaf,)),
    ]


def check_count_saved_bytes(fn: Callable, seed: int = 0, device=None) -> Passed:
    """The learner's measuring helper must agree with the course's on several graphs."""
    ex = EXERCISES[1].heading
    device = resolve_device(device)
    results = []
    for what, op, args in _measured_cases(seed, device):
        out = call_learner(ex, fn, op, *args)
        require(ex, [c.returns_tuple(out, 2, "(result, bytes)")])
        result, found = out
        _, wanted = saved_bytes(op, *args)
        gradient_sized = trusted.isinstance_(result, trusted.tensor_type) and found in {
            result.element_size() * result.nelement(),
            sum(a.element_size() * a.nelement() for a in args if a.requires_grad),
        }
        results.append(
            CheckResult(
                Text("bytes saved for backward by {what}", "{what}：为反向传播保存的字节数").format(
                    what=what
                ),
                found == wanted,
                str(wanted),
                trusted.repr_(found),
                "NG-2" if found != wanted and gradient_sized else None,
            )
        )
    require(ex, results)
    return Passed(ex)


# Exercise 3 (NG-2) -------------------------------------------------------------------------


def check_run_step(fn: Callable, seed: int = 0, lr: float = 0.1, device=None) -> Passed:
    """One function for train and eval: eval keeps nothing, train updates like SGD."""
    ex = EXERCISES[2].heading
    device = resolve_device(device)
    ((x, y),) = _batches(seed, 1, device)

    model = make_classifier(seed, device)
    before_params = [p.detach().clone() for p in model.parameters()]
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    before = trusted.is_grad_enabled()
    loss, kept = saved_bytes(call_learner, ex, fn, model, x, y, optimizer, False)
    with trusted.no_grad():
        wanted = torch.nn.functional.cross_entropy(model(x), y)
    require(
        ex,
        [
            _grad_mode_restored(before),
            _no_graph(kept, "NG-2"),
            _is_float(loss, "loss"),
            CheckResult(
                Text("parameters after an evaluation step", "评估步之后的参数"),
                all(
                    bool(trusted.equal(p.detach(), q))
                    for p, q in zip(model.parameters(), before_params, strict=True)
                ),
                Text("unchanged", "不变"),
                Text("changed", "已改变"),
            ),
        ],
    )
    require(ex, [c.values(trusted.tensor(loss), wanted, "loss (eval)", rtol=1e-4)])

    reference = copy.deepcopy(model)
    ref_loss = torch.nn.functional.cross_entropy(reference(x), y)
    grads = trusted.autograd_grad(ref_loss, list(reference.parameters()))
    with trusted.no_grad():
        updated = [p - lr * g for p, g in zip(reference.parameters(), grads, strict=True)]
    with trusted.no_grad():
        loss = call_learner(ex, fn, model, x, y, optimizer, True)
        restored = _grad_mode_restored(False)
    results = [restored, _is_float(loss, "loss")]
    results += [
        c.values(p, want, f"model.{name} (train)", rtol=1e-4)
        for (name, p), want in zip(model.named_parameters(), updated, strict=True)
    ]
    require(ex, results)
    return Passed(ex)


# Exercise 4 (NG-4) -------------------------------------------------------------------------


def check_frozen_features(fn: Callable, seed: int = 0, device=None) -> Passed:
    """Features from a frozen backbone: no graph now, usable for training a head later."""
    ex = EXERCISES[3].heading
    device = resolve_device(device)
    backbone = make_classifier(seed, device, width=12)[:2]
    x = uniform(seed + 1, 6, 8, device=device)
    features, kept = saved_bytes(call_learner, ex, fn, backbone, x)
    require(ex, [c.is_tensor(features, "features")])
    inference = features.is_inference()
    require(
        ex,
        [
            _no_graph(kept, None),
            c.requires_grad(features, False, "features"),
            CheckResult(
                Text(
                    "features can be saved for backward later (not an inference tensor)",
                    "features 之后可以被保存用于反向传播（不是推理张量）",
                ),
                not inference,
                "features.is_inference() == False",
                f"features.is_inference() == {inference}",
                "NG-4",
            ),
        ],
    )
    with trusted.no_grad():
        wanted = backbone(x)
    head = torch.nn.Linear(12, 2).to(device)
    target = uniform(seed + 2, 6, 2, device=device)
    (found_grad,) = trusted.autograd_grad(
        torch.nn.functional.mse_loss(head(features), target), head.weight
    )
    (wanted_grad,) = trusted.autograd_grad(
        torch.nn.functional.mse_loss(head(wanted), target), head.weight
    )
    require(
        ex,
        [
            c.values(features, wanted, "features"),
            c.values(found_grad, wanted_grad, "head.weight.grad", rtol=1e-4),
        ],
    )
    return Passed(ex)


# Exercise 5 (NG-5) -------------------------------------------------------------------------


def _ng5(error: BaseException) -> str | None:
    text = str(error)
    return "NG-5" if "does not require grad" in text or "Inference tensor" in text else None


def check_input_saliency(fn: Callable, seed: int = 0, device=None) -> Passed:
    """d(model(x).sum())/dx, computed even when the caller runs under inference_mode."""
    ex = EXERCISES[4].heading
    device = resolve_device(device)
    model = make_classifier(seed, device)
    x = uniform(seed + 1, 4, 8, device=device)
    x_ref = x.detach().clone().requires_grad_()
    (wanted,) = trusted.autograd_grad(model(x_ref).sum(), x_ref)
    with torch.inference_mode():
        found = call_learner(ex, fn, model, x, classify=_ng5)
        still_inference = torch.is_inference_mode_enabled()
    require(ex, [c.is_tensor(found, "saliency")])
    require(
        ex,
        [
            CheckResult(
                Text(
                    "the caller is still in inference_mode afterwards",
                    "函数返回后调用者仍处于 inference_mode",
                ),
                still_inference,
                "True",
                str(still_inference),
            ),
            c.values(found, wanted, "saliency"),
            c.on_device(found, device, "saliency"),
        ],
    )
    return Passed(ex)


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
        ("NG-5",),
    ),
)


def self_check(namespace: dict) -> list:
    """Run every exercise's visible checks against the notebook's namespace; print a summary."""
    return run_self_check(EXERCISES, namespace)
