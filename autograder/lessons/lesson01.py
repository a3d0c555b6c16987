"""Checks for lesson 01: requires_grad, leaves, and the graph.

Every check builds fresh inputs from a seed (hidden tests use other seeds and
sizes), runs the learner's function, and compares with an independent
computation made here with ``torch.autograd.grad``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import torch

from autograder.common import compare as c
from autograder.common import trusted
from autograder.common.exercise import Exercise, call_learner
from autograder.common.i18n import Text
from autograder.common.inputs import resolve_device, uniform
from autograder.common.result import CheckResult, Passed, require
from autograder.kernel.selfcheck import run_self_check

# Exercise 1 (RG-1) -------------------------------------------------------------------------


def check_product_grads(fn: Callable, seed: int = 0, size: int = 5, device=None) -> Passed:
    """y = ((a*b)**2).sum(): the learner returns a.grad, b.grad and c.grad for c = a*b."""
    ex = EXERCISES[0].heading
    device = resolve_device(device)
    a0 = uniform(seed, size, device=device)
    b0 = uniform(seed + 1, size, device=device)
    out = call_learner(ex, fn, a0, b0)
    require(ex, [c.is_tensor(a0, "a"), c.requires_grad(a0, False, "a (the caller's tensor)")])
    require(ex, [c.returns_tuple(out, 3, "(a.grad, b.grad, c.grad)")])
    ga, gb, gc = out
    require(
        ex,
        [
            CheckResult(
                Text("c.grad (c = a * b is not a leaf)", "c.grad（c = a * b 不是叶子张量）"),
                gc is not None,
                Text(
                    "a tensor: call c.retain_grad() before backward()",
                    "一个张量：在 backward() 之前调用 c.retain_grad()",
                ),
                "None",
                "RG-1",
            ),
            c.is_tensor(ga, "a.grad"),
            c.is_tensor(gb, "b.grad"),
        ],
    )
    a = a0.detach().clone().requires_grad_()
    b = b0.detach().clone().requires_grad_()
    prod = a * b
    want_a, want_b, want_c = trusted.autograd_grad((prod**2).sum(), (a, b, prod))
    require(
        ex,
        [
            c.values(ga, want_a, "a.grad"),
            c.values(gb, want_b, "b.grad"),
            c.values(gc, want_c, "c.grad", misconception="RG-1"),
            c.on_device(gc, device, "c.grad"),
        ],
    )
    return Passed(ex)


# Exercise 2 (RG-2) -------------------------------------------------------------------------


def _flag_cases(seed: int, device: torch.device) -> list[tuple[torch.Tensor, ...]]:
    g = trusted.generator().manual_seed(seed)
    cases = []
    for n_inputs in (1, 2, 2, 3, 3, 4):
        flags = trusted.randint(0, 2, (n_inputs,), generator=g).tolist()
        cases.append(
            tuple(
                torch.nn.Parameter(trusted.ones(2, device=device))
                if flag
                else trusted.ones(2, device=device)
                for flag in flags
            )
        )
    first_plain = (
        trusted.ones(2, device=device),
        torch.nn.Parameter(trusted.ones(2, device=device)),
    )
    return [first_plain, *cases]


def check_output_requires_grad(fn: Callable, seed: int = 0, device=None) -> Passed:
    """Compare the learner's rule with what a real op does, for mixed inputs."""
    ex = EXERCISES[1].heading
    device = resolve_device(device)
    results = []
    for inputs in _flag_cases(seed, device):
        predicted = call_learner(ex, fn, *inputs)
        actual = sum(inputs[1:], inputs[0]).requires_grad
        flags = ", ".join(str(t.requires_grad) for t in inputs)
        first_only = not inputs[0].requires_grad and actual
        results.append(
            CheckResult(
                Text(
                    "output of an op on inputs with requires_grad = ({flags})",
                    "对 requires_grad = ({flags}) 的输入做运算后的输出",
                ).format(flags=flags),
                isinstance(predicted, bool) and predicted is actual,
                str(actual),
                trusted.repr_(predicted),
                "RG-2" if first_only else None,
            )
        )
    require(ex, results)
    return Passed(ex)


# Exercise 3 (RG-3) -------------------------------------------------------------------------


def _rg3(error: BaseException) -> str | None:
    return "RG-3" if "floating point" in str(error) else None


def check_make_trainable(fn: Callable, seed: int = 0, device=None) -> Passed:
    """Integer data must become a floating-point leaf that requires grad."""
    ex = EXERCISES[2].heading
    device = resolve_device(device)
    g = trusted.generator().manual_seed(seed)
    data = trusted.randint(-9, 10, (2, 3), generator=g).tolist()
    t = call_learner(ex, fn, data, device, classify=_rg3)
    require(ex, [c.is_tensor(t, "t")])
    require(
        ex,
        [
            c.requires_grad(t, True, "t"),
            CheckResult(
                Text("t.dtype is floating point", "t.dtype 是浮点类型"),
                t.dtype.is_floating_point,
                "torch.float32",
                str(t.dtype),
                "RG-3",
            ),
            c.is_leaf(t, True, "t"),
            c.on_device(t, device, "t"),
            c.values(t, trusted.tensor(data, dtype=torch.float64), "t"),
        ],
    )
    return Passed(ex)


# Exercise 4 (RG-4) -------------------------------------------------------------------------


def check_per_batch_grads(fn: Callable, seed: int = 0, batches: int = 3, device=None) -> Passed:
    """Each entry must be the gradient of that batch alone, not a running sum."""
    ex = EXERCISES[3].heading
    device = resolve_device(device)
    w = torch.nn.Parameter(uniform(seed, 4, device=device))
    xs = [uniform(seed + 10 + k, 6, 4, device=device) for k in range(batches)]
    w_ref = w.detach().clone().requires_grad_()
    wanted = [trusted.autograd_grad(((x @ w_ref) ** 2).mean(), w_ref)[0] for x in xs]
    found = call_learner(ex, fn, w, xs)
    shape_ok = isinstance(found, list) and len(found) == batches
    require(
        ex,
        [
            CheckResult(
                Text("one gradient per batch", "每个批次一个梯度"),
                shape_ok,
                f"list of {batches} tensors",
                trusted.repr_(type(found)),
            )
        ],
    )
    require(ex, [c.is_tensor(g, f"grads[{k}]") for k, g in enumerate(found)])
    aliased = len({g.data_ptr() for g in found}) < batches
    require(
        ex,
        [
            CheckResult(
                Text("the stored gradients are separate copies", "保存的梯度是彼此独立的副本"),
                not aliased,
                Text("w.grad.clone() for each batch", "每个批次保存 w.grad.clone()"),
                Text(
                    "several entries share one storage (the same w.grad)",
                    "多个元素共享同一块存储（同一个 w.grad）",
                ),
            )
        ],
    )
    results = []
    running = trusted.zeros(4, dtype=torch.float64)
    for k, (g, want) in enumerate(zip(found, wanted, strict=True)):
        running = running + want.detach().to("cpu", torch.float64)
        summed = k > 0 and bool(
            trusted.allclose(g.detach().to("cpu", torch.float64), running, rtol=1e-5, atol=1e-6)
        )
        results.append(c.values(g, want, f"grads[{k}]", misconception="RG-4" if summed else None))
    require(ex, results)
    return Passed(ex)


# Exercise 5 (RG-5) -------------------------------------------------------------------------


def _rg5(error: BaseException) -> str | None:
    return "RG-5" if "Mismatch in shape" in str(error) else None


def check_backward_seed(fn: Callable, seed: int = 0, dtype=torch.float32, device=None) -> Passed:
    """The seed must make loss.backward(gradient=seed) equal loss.backward()."""
    ex = EXERCISES[4].heading
    device = resolve_device(device)
    x = uniform(seed, 5, device=device, dtype=dtype).requires_grad_()
    loss = (x.sin() * x).sum()
    (want,) = trusted.autograd_grad(loss, x, retain_graph=True)
    s = call_learner(ex, fn, loss)
    require(ex, [c.is_tensor(s, "seed")])
    require(
        ex,
        [
            c.shape(s, (), "seed", misconception="RG-5"),
            c.dtype(s, dtype, "seed"),
            c.on_device(s, device, "seed"),
            c.values(s, trusted.ones((), dtype=torch.float64), "seed"),
        ],
    )
    (found,) = trusted.autograd_grad(loss, x, grad_outputs=s)
    require(ex, [c.values(found, want, "x.grad")])
    return Passed(ex)


# Exercise 6 (RG-6) -------------------------------------------------------------------------


def make_small_mlp(seed: int, device) -> torch.nn.Sequential:
    """A 4-8-3 MLP with fixed weights, the model exercise 6 fine-tunes."""
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3)).to(
        device
    )


def check_finetune_last_layer(fn: Callable, seed: int = 0, lr: float = 0.1, device=None) -> Passed:
    """One SGD step must change the last layer only, by the right amount."""
    ex = EXERCISES[5].heading
    device = resolve_device(device)
    model = make_small_mlp(seed, device)
    reference = copy.deepcopy(model)
    x = uniform(seed + 1, 10, 4, device=device)
    target = uniform(seed + 2, 10, 3, device=device)
    loss_ref = torch.nn.functional.mse_loss(reference(x), target)
    last = list(reference[-1].parameters())
    grads = trusted.autograd_grad(loss_ref, last)
    expected_last = [p.detach() - lr * g for p, g in zip(last, grads, strict=True)]

    loss = call_learner(ex, fn, model, x.clone(), target.clone(), lr)
    results = [
        CheckResult(
            Text("the returned loss is a Python float", "返回的损失是 Python float"),
            isinstance(loss, float),
            "float",
            type(loss).__name__,
        )
    ]
    if isinstance(loss, float):
        results.append(c.values(trusted.tensor(loss), loss_ref.detach(), "loss", rtol=1e-4))
    last_index = str(len(model) - 1)
    reference_params = dict(reference.named_parameters())
    expected = dict(
        zip(
            (f"{last_index}.{n}" for n, _ in reference[-1].named_parameters()),
            expected_last,
            strict=True,
        )
    )
    for name, p in model.named_parameters():
        if name in expected:
            results.append(c.requires_grad(p, True, f"model.{name}"))
            results.append(c.values(p, expected[name], f"model.{name}", rtol=1e-4))
            continue
        results.append(c.requires_grad(p, False, f"model.{name}", "RG-6"))
        results.append(
            CheckResult(
                Text(
                    "model.{name} is unchanged by the step", "model.{name} 在这一步之后保持不变"
                ).format(name=name),
                bool(trusted.equal(p.detach(), reference_params[name].detach())),
                Text("unchanged", "不变"),
                Text("changed", "已改变"),
                "RG-6",
            )
        )
    require(ex, results)
    return Passed(ex)


# Exercise 7 (RG-7) -------------------------------------------------------------------------


def check_to_device(fn: Callable, seed: int = 0, device=None) -> Passed:
    """Batch and model must both end up on the device and dtype asked for."""
    ex = EXERCISES[6].heading
    device = resolve_device(device)
    dtype = torch.float64
    batch = uniform(seed, 3, 4, device="cpu")
    original = batch.clone()
    model = torch.nn.Linear(4, 2)
    out = call_learner(ex, fn, batch, model, device, dtype)
    require(ex, [c.returns_tuple(out, 2, "(batch, model)")])
    moved, moved_model = out
    require(ex, [c.is_tensor(moved, "batch")])
    rg7 = "RG-7" if moved is batch else None
    require(
        ex,
        [
            c.dtype(moved, dtype, "batch", rg7),
            c.on_device(moved, device, "batch", rg7),
            c.values(moved, original, "batch"),
            CheckResult(
                Text("the returned model is a torch.nn.Module", "返回的模型是 torch.nn.Module"),
                isinstance(moved_model, torch.nn.Module),
                "nn.Module",
                type(moved_model).__name__,
            ),
        ],
    )
    params = list(moved_model.named_parameters())
    require(
        ex,
        [c.dtype(p, dtype, f"model.{name}") for name, p in params]
        + [c.on_device(p, device, f"model.{name}") for name, p in params],
    )
    return Passed(ex)


EXERCISES: tuple[Exercise, ...] = (
    Exercise(
        1,
        "product_grads",
        Text("gradients of a product", "乘积的梯度"),
        check_product_grads,
        ("RG-1",),
    ),
    Exercise(
        2,
        "output_requires_grad",
        Text("the propagation rule", "传播规则"),
        check_output_requires_grad,
        ("RG-2",),
    ),
    Exercise(
        3,
        "make_trainable",
        Text("a trainable tensor from integers", "由整数构造可训练张量"),
        check_make_trainable,
        ("RG-3",),
    ),
    Exercise(
        4,
        "per_batch_grads",
        Text("one gradient per batch", "每个批次的梯度"),
        check_per_batch_grads,
        ("RG-4",),
    ),
    Exercise(
        5,
        "backward_seed",
        Text("the seed of backward()", "backward() 的初始梯度"),
        check_backward_seed,
        ("RG-5",),
    ),
    Exercise(
        6,
        "finetune_last_layer",
        Text("fine-tune the last layer only", "只微调最后一层"),
        check_finetune_last_layer,
        ("RG-6",),
    ),
    Exercise(
        7,
        "to_device",
        Text("move a batch and a model", "移动批次和模型"),
        check_to_device,
        ("RG-7",),
    ),
)


def self_check(namespace: dict) -> list:
    """Run every exercise's visible checks against the notebook's namespace; print a summary."""
    return run_self_check(EXERCISES, namespace)
