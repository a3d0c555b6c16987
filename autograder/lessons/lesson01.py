"""Checks for lesson 01: requires_grad, leaves, and the graph.

Each check is an ``observe`` / ``judge`` pair (see autograder/common/protocol.py).
``observe`` builds inputs from a seed (hidden tests use other seeds and sizes),
calls the learner's function — with callers' state that is not fresh where that
matters — and keeps plain data. ``judge`` recomputes the inputs on the CPU, makes
an independent reference with ``torch.autograd.grad`` and compares.
"""

from __future__ import annotations

import copy
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

# Exercise 1 (RG-1) -------------------------------------------------------------------------


@dataclass(frozen=True)
class ProductGrads(Check):
    """y = ((a*b)**2).sum(): the learner returns a.grad, b.grad and c.grad for c = a*b."""

    number = 1
    seed: int = 0
    size: int = 5
    device: str | None = None

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        a0 = uniform(self.seed, self.size, device=device)
        b0 = uniform(self.seed + 1, self.size, device=device)
        out = call(fn, a0, b0)
        return {"device": str(device), "call": out.record(), "a": snapshot(a0)}

    def judge(self, obs: dict) -> None:
        ex = self.heading
        out = returned(ex, obs["call"], "product_grads")
        caller_a = Seen(obs["a"])
        require(ex, [c.returns_tuple(out, 3, "(a.grad, b.grad, c.grad)")])
        ga, gb, gc = out.items
        require(
            ex,
            [
                CheckResult(
                    Text("c.grad (c = a * b is not a leaf)", "c.grad（c = a * b 不是叶子张量）"),
                    gc.kind != "none",
                    Text(
                        "a tensor: call c.retain_grad() before backward()",
                        "一个张量：在 backward() 之前调用 c.retain_grad()",
                    ),
                    "None",
                    "RG-1",
                ),
                c.is_tensor(ga, "a.grad"),
                c.is_tensor(gb, "b.grad"),
                c.is_tensor(gc, "c.grad"),
            ],
        )
        a = uniform(self.seed, self.size, device="cpu").requires_grad_()
        b = uniform(self.seed + 1, self.size, device="cpu").requires_grad_()
        prod = a * b
        want_a, want_b, want_c = trusted.autograd_grad((prod**2).sum(), (a, b, prod))
        require(
            ex,
            [
                c.values(ga, want_a, "a.grad"),
                c.values(gb, want_b, "b.grad"),
                c.values(gc, want_c, "c.grad", misconception="RG-1"),
                c.on_device(gc, obs["device"], "c.grad"),
                c.requires_grad(caller_a, False, "a (the caller's tensor)"),
                c.values(caller_a, a.detach(), "a (the caller's tensor)"),
            ],
        )


def check_product_grads(fn, seed: int = 0, size: int = 5, device=None) -> None:
    verdict(ProductGrads(seed, size, None if device is None else str(device)), fn)


# Exercise 2 (RG-2) -------------------------------------------------------------------------


def _flag_cases(seed: int) -> list[tuple[bool, ...]]:
    """requires_grad flags of the inputs of each case: plain first input, random others."""
    g = trusted.generator().manual_seed(seed)
    cases = [(False, True), (False,), (True,)]
    for n_inputs in (2, 2, 3, 3, 4, 5):
        cases.append(tuple(bool(v) for v in trusted.randint(0, 2, (n_inputs,), generator=g)))
    return cases


@dataclass(frozen=True)
class OutputRequiresGrad(Check):
    """Compare the learner's rule with what a real op does, for mixed inputs."""

    number = 2
    seed: int = 0
    device: str | None = None

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        answers = []
        for flags in _flag_cases(self.seed):
            inputs = [
                torch.nn.Parameter(trusted.ones(2, device=device))
                if flag
                else trusted.ones(2, device=device)
                for flag in flags
            ]
            answers.append(call(fn, *inputs).record())
        return {"answers": answers}

    def judge(self, obs: dict) -> None:
        ex = self.heading
        results = []
        for flags, record in zip(_flag_cases(self.seed), obs["answers"], strict=True):
            predicted = returned(ex, record, "output_requires_grad")
            inputs = [trusted.ones(2).requires_grad_(flag) for flag in flags]
            actual = sum(inputs[1:], inputs[0]).requires_grad
            shown = ", ".join(str(f) for f in flags)
            first_only = not flags[0] and actual
            results.append(
                CheckResult(
                    Text(
                        "output of an op on inputs with requires_grad = ({flags})",
                        "对 requires_grad = ({flags}) 的输入做运算后的输出",
                    ).format(flags=shown),
                    predicted.kind == "bool" and predicted.value is actual,
                    str(actual),
                    predicted.describe(),
                    "RG-2" if first_only else None,
                )
            )
        require(ex, results)


def check_output_requires_grad(fn, seed: int = 0, device=None) -> None:
    verdict(OutputRequiresGrad(seed, None if device is None else str(device)), fn)


# Exercise 3 (RG-3) -------------------------------------------------------------------------


def _rg3(message: str) -> str | None:
    return "RG-3" if "floating point" in message else None


def _integer_rows(seed: int) -> list[list[int]]:
    g = trusted.generator().manual_seed(seed)
    rows, cols = (int(n) for n in trusted.randint(1, 5, (2,), generator=g))
    return trusted.randint(-9, 10, (rows, cols), generator=g).tolist()


@dataclass(frozen=True)
class MakeTrainable(Check):
    """Integer data must become a floating-point leaf that requires grad."""

    number = 3
    seed: int = 0
    device: str | None = None

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        out = call(fn, _integer_rows(self.seed), device)
        return {"device": str(device), "call": out.record()}

    def judge(self, obs: dict) -> None:
        ex = self.heading
        t = returned(ex, obs["call"], "make_trainable", classify=_rg3)
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
                c.dtype(t, torch.float32, "t"),
                c.is_leaf(t, True, "t"),
                c.on_device(t, obs["device"], "t"),
                c.values(t, trusted.tensor(_integer_rows(self.seed), dtype=torch.float64), "t"),
            ],
        )


def check_make_trainable(fn, seed: int = 0, device=None) -> None:
    verdict(MakeTrainable(seed, None if device is None else str(device)), fn)


# Exercise 4 (RG-4) -------------------------------------------------------------------------


@dataclass(frozen=True)
class PerBatchGrads(Check):
    """Each entry must be the gradient of that batch alone, not a running sum.

    The caller's ``w`` arrives with a gradient already in ``.grad`` (as it would
    after an earlier step), so forgetting to reset it shows from the first batch.
    """

    number = 4
    seed: int = 0
    batches: int = 3
    dim: int = 4
    device: str | None = None

    def _inputs(self, device) -> tuple[torch.Tensor, list[torch.Tensor], torch.Tensor]:
        w = uniform(self.seed, self.dim, device=device)
        xs = [uniform(self.seed + 10 + k, 6, self.dim, device=device) for k in range(self.batches)]
        stale = uniform(self.seed + 5, self.dim, device=device)
        return w, xs, stale

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        w0, xs, stale = self._inputs(device)
        w = torch.nn.Parameter(w0)
        w.grad = stale.clone()
        out = call(fn, w, xs)
        return {"call": out.record()}

    def judge(self, obs: dict) -> None:
        ex = self.heading
        found = returned(ex, obs["call"], "per_batch_grads")
        w, xs, stale = self._inputs("cpu")
        w.requires_grad_()
        wanted = [trusted.autograd_grad(((x @ w) ** 2).mean(), w)[0] for x in xs]
        require(
            ex,
            [
                CheckResult(
                    Text("one gradient per batch", "每个批次一个梯度"),
                    found.kind == "list" and found.length == self.batches,
                    Text("a list of {n} tensors", "包含 {n} 个张量的 list").format(n=self.batches),
                    found.describe(),
                )
            ],
        )
        grads = found.items
        require(ex, [c.is_tensor(g, f"grads[{k}]") for k, g in enumerate(grads)])
        require(
            ex,
            [
                CheckResult(
                    Text("the stored gradients are separate copies", "保存的梯度是彼此独立的副本"),
                    len({g.storage for g in grads}) == self.batches,
                    Text("w.grad.clone() for each batch", "每个批次保存 w.grad.clone()"),
                    Text(
                        "several entries share one storage (the same w.grad)",
                        "多个元素共享同一块存储（同一个 w.grad）",
                    ),
                )
            ],
        )
        results = []
        running = stale.to(torch.float64)
        for k, (g, want) in enumerate(zip(grads, wanted, strict=True)):
            running = running + want.to(torch.float64)
            summed = bool(
                trusted.allclose(g.value.to(torch.float64), running, rtol=1e-5, atol=1e-6)
            )
            results.append(
                c.values(g, want, f"grads[{k}]", misconception="RG-4" if summed else None)
            )
        require(ex, results)


def check_per_batch_grads(fn, seed: int = 0, batches: int = 3, dim: int = 4, device=None) -> None:
    verdict(PerBatchGrads(seed, batches, dim, None if device is None else str(device)), fn)


# Exercise 5 (RG-5) -------------------------------------------------------------------------


def _rg5(message: str) -> str | None:
    return "RG-5" if "Mismatch in shape" in message else None


@dataclass(frozen=True)
class BackwardSeed(Check):
    """The seed must make backward(gradient=seed) do what backward() does."""

    number = 5
    seed: int = 0
    dtype: str = "float32"
    device: str | None = None

    def _input(self, device) -> torch.Tensor:
        return uniform(self.seed, 5, device=device, dtype=getattr(torch, self.dtype))

    def observe(self, fn) -> dict:
        x = self._input(resolve_device(self.device)).requires_grad_()
        loss = (x.sin() * x).sum()
        out = call(fn, loss)
        if not out.ok:
            return {"call": out.record()}
        effect = call(lambda s: trusted.autograd_grad(loss, x, grad_outputs=s)[0], out.value)
        return {"call": out.record(), "effect": effect.record()}

    def judge(self, obs: dict) -> None:
        ex = self.heading
        s = returned(ex, obs["call"], "backward_seed")
        require(ex, [c.is_tensor(s, "seed")])
        require(ex, [c.shape(s, (), "seed", misconception="RG-5")])
        x = self._input("cpu").requires_grad_()
        (want,) = trusted.autograd_grad((x.sin() * x).sum(), x)
        found = returned(ex, obs["effect"], "loss.backward(gradient=seed)", classify=_rg5)
        require(ex, [c.values(found, want, "x.grad"), c.values(s, trusted.ones(()), "seed")])


def check_backward_seed(fn, seed: int = 0, dtype=torch.float32, device=None) -> None:
    name = str(dtype).removeprefix("torch.")
    verdict(BackwardSeed(seed, name, None if device is None else str(device)), fn)


# Exercise 6 (RG-6) -------------------------------------------------------------------------


def make_mlp(seed: int, depth: int = 2, width: int = 8, device="cpu") -> torch.nn.Sequential:
    """An MLP with ``depth`` Linear layers and fixed weights (4 inputs, 3 outputs)."""
    g = trusted.generator().manual_seed(seed)
    sizes = [4, *[width] * (depth - 1), 3]
    layers: list[torch.nn.Module] = []
    for k, (n_in, n_out) in enumerate(zip(sizes, sizes[1:], strict=False)):
        linear = torch.nn.Linear(n_in, n_out)
        with trusted.no_grad():
            linear.weight.copy_(trusted.rand(n_out, n_in, generator=g) - 0.5)
            linear.bias.copy_(trusted.rand(n_out, generator=g) - 0.5)
        layers.append(linear)
        if k < depth - 1:
            layers.append(torch.nn.Tanh())
    return torch.nn.Sequential(*layers).to(device)


@dataclass(frozen=True)
class FinetuneLastLayer(Check):
    """One SGD step must change the last layer only, by the right amount.

    The model arrives with stale gradients in every ``.grad`` (as after an
    earlier step), so a step that does not zero them first is wrong.
    """

    number = 6
    seed: int = 0
    lr: float = 0.1
    depth: int = 2
    device: str | None = None

    def _inputs(self, device):
        model = make_mlp(self.seed, self.depth, device=device)
        x = uniform(self.seed + 1, 10, 4, device=device)
        target = uniform(self.seed + 2, 10, 3, device=device)
        return model, x, target

    def observe(self, fn) -> dict:
        model, x, target = self._inputs(resolve_device(self.device))
        for k, p in enumerate(model.parameters()):
            p.grad = uniform(self.seed + 20 + k, *p.shape, device=p.device)
        out = call(fn, model, x, target, self.lr)
        params = {name: snapshot(p) for name, p in model.named_parameters()}
        return {"call": out.record(), "params": params}

    def judge(self, obs: dict) -> None:
        ex = self.heading
        loss = returned(ex, obs["call"], "finetune_last_layer")
        model, x, target = self._inputs("cpu")
        reference = copy.deepcopy(model)
        loss_ref = torch.nn.functional.mse_loss(reference(x), target)
        last = dict(reference[-1].named_parameters())
        grads = dict(zip(last, trusted.autograd_grad(loss_ref, list(last.values())), strict=True))
        last_index = str(len(model) - 1)
        results = [
            CheckResult(
                Text("the returned loss is a Python float", "返回的损失是 Python float"),
                loss.kind == "float",
                "float",
                loss.describe(),
            )
        ]
        if loss.kind == "float":
            results.append(
                c.values(trusted.tensor(loss.value), loss_ref.detach(), "loss", rtol=1e-4)
            )
        params = obs["params"]
        for name, p in model.named_parameters():
            found = Seen(params.get(name, {"kind": "none"}))
            layer, _, leaf = name.partition(".")
            if layer == last_index:
                want = p.detach() - self.lr * grads[leaf]
                results.append(c.requires_grad(found, True, f"model.{name}"))
                results.append(c.values(found, want, f"model.{name}", rtol=1e-4))
                continue
            results.append(c.requires_grad(found, False, f"model.{name}", "RG-6"))
            unchanged = c.values(found, p.detach(), f"model.{name}", rtol=0, atol=0)
            results.append(
                CheckResult(
                    Text(
                        "model.{name} is unchanged by the step", "model.{name} 在这一步之后保持不变"
                    ).format(name=name),
                    unchanged.passed,
                    Text("unchanged", "不变"),
                    Text("changed", "已改变"),
                    "RG-6",
                )
            )
        require(ex, results)


def check_finetune_last_layer(
    fn, seed: int = 0, lr: float = 0.1, depth: int = 2, device=None
) -> None:
    verdict(FinetuneLastLayer(seed, lr, depth, None if device is None else str(device)), fn)


# Exercise 7 (RG-7) -------------------------------------------------------------------------


@dataclass(frozen=True)
class ToDevice(Check):
    """Batch and model must both end up on the device and in the dtype asked for."""

    number = 7
    seed: int = 0
    dtype: str = "float64"
    device: str | None = None

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        dtype = getattr(torch, self.dtype)
        batch = uniform(self.seed, 3, 4, device="cpu")
        model = torch.nn.Linear(4, 2)
        out = call(fn, batch, model, device, dtype)
        is_pair = out.ok and trusted.type_(out.value) is tuple and trusted.len_(out.value) == 2
        same = is_pair and out.value[0] is batch
        returned_params = {}
        if is_pair:
            moved_model = out.value[1]
            if trusted.isinstance_(moved_model, trusted.module_type):
                returned_params = {n: snapshot(p) for n, p in moved_model.named_parameters()}
        return {
            "device": str(device),
            "call": out.record(),
            "same_batch": bool(same),
            "returned_params": returned_params,
        }

    def judge(self, obs: dict) -> None:
        ex = self.heading
        dtype = getattr(torch, self.dtype)
        out = returned(ex, obs["call"], "to_device")
        require(ex, [c.returns_tuple(out, 2, "(batch, model)")])
        moved, moved_model = out.items
        require(ex, [c.is_tensor(moved, "batch")])
        rg7 = "RG-7" if obs["same_batch"] else None
        require(
            ex,
            [
                c.dtype(moved, dtype, "batch", rg7),
                c.on_device(moved, obs["device"], "batch", rg7),
                c.values(moved, uniform(self.seed, 3, 4, device="cpu"), "batch"),
                CheckResult(
                    Text("the returned model is a torch.nn.Module", "返回的模型是 torch.nn.Module"),
                    moved_model.kind == "module",
                    "nn.Module",
                    moved_model.describe(),
                ),
            ],
        )
        results = []
        for name, data in obs["returned_params"].items():
            p = Seen(data)
            results += [
                c.dtype(p, dtype, f"model.{name}"),
                c.on_device(p, obs["device"], f"model.{name}"),
            ]
        require(ex, results)


def check_to_device(fn, seed: int = 0, dtype=torch.float64, device=None) -> None:
    name = str(dtype).removeprefix("torch.")
    verdict(ToDevice(seed, name, None if device is None else str(device)), fn)


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
