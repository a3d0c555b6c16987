"""Checks for lesson 08, the capstone: one check per part of the training script.

Each part of the script carries one bug planted from lessons 01-07. A check calls the
learner's repaired part on models, batches and devices it builds itself (other sizes,
depths and dtypes than the notebook's, models arriving in either mode, stale
gradients) and judges what it did, not the text of the fix. Each exercise's title
names the lesson its bug comes from; the feedback names the misconception where the
observation is evidence of it.

The planted bugs (the starter code in each solution cell's metadata) and what catches them:

1. ``train_epoch`` (01, RG-4): ``.grad`` never zeroed. A recording optimizer compares the
   gradient each step used with the batch's own gradient, from a dirty ``.grad``.
2. ``validate`` (02, NG-3): ``total += loss`` keeps every batch's graph. ``saved_tensors_hooks``
   count the saved tensors still alive each time the next batch is taken.
3. ``accuracy`` (03, EV-2; EV-4): ``no_grad`` without ``eval()``. BatchNorm's running statistics
   must be unchanged, the value the eval-mode one, the caller's mode restored.
4. ``discriminator_step`` (04, DT-4): no ``detach()`` on the fake samples. G's ``.grad`` and
   parameters must be untouched; D's step must use D's own gradient (DT-6 otherwise).
5. ``log_features`` (05, HK-3): a hook registered in the loop, never removed. No hook may be
   left on the layer, nor may one more model call grow the returned list.
6. ``time_step`` (06, CS-2; CS-1): no ``synchronize()`` around the clock, judged by call order
   and value on a deterministic model of a device queue.
7. ``Swish`` (07, CF-2): backward returns one gradient for two inputs (``x`` and a float); also
   values and gradients against autograd, and an in-place change of the input (CF-4).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import torch

from autograder.common import compare as c
from autograder.common import trusted
from autograder.common.exercise import Exercise
from autograder.common.i18n import Text
from autograder.common.inputs import resolve_device, uniform
from autograder.common.observation import Seen, described_float, snapshot
from autograder.common.protocol import Check, call, returned, verdict
from autograder.common.result import CheckResult, require
from autograder.kernel.selfcheck import run_self_check

# Taken at import, before any learner code runs (see trusted.py).
_SGD = torch.optim.SGD
_cross_entropy = torch.nn.functional.cross_entropy
_bce_logits = torch.nn.functional.binary_cross_entropy_with_logits
_sigmoid = torch.sigmoid
_fork_rng = torch.random.fork_rng
_BATCHNORM = torch.nn.modules.batchnorm._BatchNorm

# Which lesson each exercise's planted bug comes from (the misconceptions are theirs).
REVISITS = {
    1: "01_requires_grad",
    2: "02_no_grad",
    3: "03_eval_vs_no_grad",
    4: "04_detach",
    5: "05_hooks",
    6: "06_cuda_async",
    7: "07_custom_function",
}

_UNCHANGED = Text("unchanged", "不变")
_CHANGED = Text("changed", "已改变")
_CASE = Text("case {k}: {what}", "第 {k} 种情形：{what}")


def _in_case(k: int, what: Text) -> Text:
    return _CASE.format(k=k + 1, what=what)


def _dtype(name: str) -> torch.dtype:
    return getattr(torch, name)


def _close(a: torch.Tensor | None, b: torch.Tensor | None, tol: float = 1e-5) -> bool:
    if a is None or b is None:
        return a is None and b is None
    a64, b64 = a.to(torch.float64), b.detach().to("cpu", torch.float64)
    return a64.shape == b64.shape and bool(trusted.allclose(a64, b64, rtol=tol, atol=tol))


def _tensor_or_none(data: dict) -> torch.Tensor | None:
    seen = Seen(data)
    return seen.value if seen.is_tensor else None


# Models ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Net:
    """Linear → BatchNorm1d → ReLU → Dropout(p) blocks, then Linear; optionally nested."""

    sizes: tuple[int, ...]
    p: float = 0.0
    dtype: str = "float32"
    nested: bool = False


def make_net(seed: int, net: Net, device="cpu") -> torch.nn.Sequential:
    """A model with weights and running statistics fixed by ``seed``; global RNG untouched."""
    with _fork_rng(devices=[]):
        blocks = [
            [
                torch.nn.Linear(a, b),
                torch.nn.BatchNorm1d(b),
                torch.nn.ReLU(),
                torch.nn.Dropout(net.p),
            ]
            for a, b in zip(net.sizes[:-2], net.sizes[1:-1], strict=True)
        ]
        last = torch.nn.Linear(net.sizes[-2], net.sizes[-1])
    if net.nested:
        model = torch.nn.Sequential(*(torch.nn.Sequential(*b) for b in blocks), last)
    else:
        model = torch.nn.Sequential(*(layer for b in blocks for layer in b), last)
    g = trusted.generator().manual_seed(seed)
    with trusted.no_grad():
        for module in model.modules():
            if trusted.isinstance_(module, torch.nn.Linear):
                scale = module.in_features**-0.5
                for t in (module.weight, module.bias):
                    t.copy_((trusted.rand(t.shape, generator=g) * 2 - 1) * scale)
            elif trusted.isinstance_(module, _BATCHNORM):
                width = module.num_features
                module.weight.copy_(1 + 0.3 * (trusted.rand(width, generator=g) - 0.5))
                module.bias.copy_(0.3 * (trusted.rand(width, generator=g) - 0.5))
                module.running_mean.copy_(0.8 * (trusted.rand(width, generator=g) * 2 - 1))
                module.running_var.copy_(1.5 + 0.5 * trusted.rand(width, generator=g))
    return model.to(device=device, dtype=_dtype(net.dtype))


def make_batches(seed: int, n: int, batch: int, n_in: int, n_out: int, dtype: str, device="cpu"):
    """``n`` (inputs, labels) pairs; inputs far from the models' running statistics."""
    g = trusted.generator().manual_seed(seed)
    pairs = []
    for k in range(n):
        x = 2.0 * uniform(seed * 31 + k, batch, n_in, device="cpu", dtype=_dtype(dtype)) + 1.0
        y = trusted.randint(0, n_out, (batch,), generator=g)
        pairs.append((x.to(device), y.to(device)))
    return pairs


def _params(model: torch.nn.Module) -> list[torch.Tensor]:
    return list(model.parameters())


def _stale_grads(seed: int, model: torch.nn.Module) -> None:
    """Fill every .grad, as an earlier step would have left them."""
    for k, p in enumerate(model.parameters()):
        p.grad = uniform(seed + 900 + k, *p.shape, device=p.device, dtype=p.dtype)


def _stale_grad_values(seed: int, model: torch.nn.Module, stale: bool = True) -> list:
    """What ``_stale_grads`` put in each .grad (None where it put nothing), on the CPU."""
    return [
        uniform(seed + 900 + k, *p.shape, device="cpu", dtype=p.dtype) if stale else None
        for k, p in enumerate(model.parameters())
    ]


def _snap(t: torch.Tensor | None) -> dict:
    return snapshot(t)


def _modes(model: torch.nn.Module) -> list[bool]:
    return [bool(m.training) for m in model.modules()]


def _state(model: torch.nn.Module) -> dict:
    """Parameters and buffers as plain CPU copies."""
    return {n: snapshot(t) for n, t in model.state_dict(keep_vars=True).items()}


class _RecordingSGD(_SGD):
    """Plain SGD that records, at every step, the parameters and gradients it is given."""

    def __init__(self, params, lr: float):
        super().__init__(params, lr=lr)
        self.record: list[dict] = []

    def step(self, closure=None):
        params = [p for group in self.param_groups for p in group["params"]]
        if trusted.len_(self.record) < 50:
            self.record.append(
                {
                    "params": [_snap(p) for p in params],
                    "grads": [_snap(p.grad) for p in params],
                }
            )
        return super().step(closure)


def _step_records(obs_steps: list[dict]) -> list[tuple[list, list]]:
    """(parameters, gradients) of each recorded optimizer step, as CPU tensors or None."""
    return [
        (
            [_tensor_or_none(p) for p in step["params"]],
            [_tensor_or_none(g) for g in step["grads"]],
        )
        for step in obs_steps
    ]


def _loss_and_grads(net: Net, seed: int, params: list[torch.Tensor], x, y):
    """Cross-entropy of one batch in training mode at the given parameters, and its gradients."""
    model = make_net(seed, net)
    with trusted.no_grad():
        for p, value in zip(model.parameters(), params, strict=True):
            p.copy_(value)
    model.train()
    loss = _cross_entropy(model(x), y)
    return float(loss.detach()), list(trusted.autograd_grad(loss, list(model.parameters())))


# Exercise 1 (lesson 01): gradients zeroed before every backward ------------------------------

_TRAIN_CASES = (
    (Net((6, 10, 4)), 3, 8, True),
    (Net((5, 7, 7, 3), dtype="float64"), 4, 6, False),
    (Net((4, 9, 9, 9, 5), nested=True), 3, 5, True),
)


@dataclass(frozen=True)
class TrainEpoch(Check):
    """Every optimizer step must use the gradient of its own batch, whatever .grad held before."""

    number = 1
    seed: int = 0
    lr: float = 0.1
    device: str | None = None

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        cases = []
        for k, (net, n, batch, stale) in enumerate(_TRAIN_CASES):
            model = make_net(self.seed + k, net, device).train()
            if stale:
                _stale_grads(self.seed + k, model)
            optimizer = _RecordingSGD(model.parameters(), self.lr)
            batches = make_batches(
                self.seed + k, n, batch, net.sizes[0], net.sizes[-1], net.dtype, device
            )
            out = call(fn, model, optimizer, batches)
            cases.append({"call": out.record(), "steps": optimizer.record, "modes": _modes(model)})
        return {"cases": cases}

    def judge(self, obs: dict) -> None:
        ex = self.heading
        for k, ((net, n, batch, stale), case) in enumerate(
            zip(_TRAIN_CASES, obs["cases"], strict=True)
        ):
            found = returned(ex, case["call"], "train_epoch")
            batches = make_batches(self.seed + k, n, batch, net.sizes[0], net.sizes[-1], net.dtype)
            model = make_net(self.seed + k, net)
            steps = _step_records(case["steps"])
            require(
                ex,
                [
                    CheckResult(
                        _in_case(k, Text("optimizer.step() calls", "optimizer.step() 的调用次数")),
                        len(steps) == n,
                        str(n),
                        str(len(steps)),
                    ),
                    CheckResult(
                        _in_case(k, Text("the model's mode afterwards", "之后模型的模式")),
                        case["modes"] == _modes(model.train()),
                        Text("training mode, as it arrived", "训练模式，与传入时相同"),
                        Text("evaluation mode", "评估模式"),
                    ),
                ],
            )
            before = _stale_grad_values(self.seed + k, model, stale)
            losses = []
            for j, ((params, grads), (x, y)) in enumerate(zip(steps, batches, strict=True)):
                loss, fresh = _loss_and_grads(net, self.seed + k, params, x, y)
                losses.append(loss)
                ok = all(_close(g, f) for g, f in zip(grads, fresh, strict=True))
                previous = before if j == 0 else steps[j - 1][1]
                accumulated = (
                    not ok
                    and all(g is not None for g in grads)
                    and any(p is not None for p in previous)
                    and all(
                        _close(g - f, p if p is not None else torch.zeros_like(f))
                        for g, f, p in zip(grads, fresh, previous, strict=True)
                    )
                )
                where = Text(
                    "step {j}: the gradients the optimizer used", "第 {j} 步：优化器使用的梯度"
                )
                require(
                    ex,
                    [
                        CheckResult(
                            _in_case(k, where.format(j=j + 1)),
                            ok,
                            Text(
                                "the gradient of batch {j} alone", "只是第 {j} 个批次的梯度"
                            ).format(j=j + 1),
                            Text(
                                "batch {j}'s gradient plus what .grad already held",
                                "第 {j} 个批次的梯度加上 .grad 里原有的值",
                            ).format(j=j + 1)
                            if accumulated
                            else Text("other values", "其他数值"),
                            "RG-4" if accumulated else None,
                        )
                    ],
                )
            require(
                ex,
                [
                    c.values(
                        torch.tensor(
                            [i.value if i.kind == "float" else float("nan") for i in found.items]
                        ),
                        torch.tensor(losses),
                        "losses",
                    )
                    if found.kind == "list" and all(i.kind == "float" for i in found.items)
                    else CheckResult(
                        _in_case(k, Text("the return value", "返回值")),
                        False,
                        Text(
                            "a list of Python floats, one loss per batch",
                            "Python float 列表，每个批次一个损失",
                        ),
                        found.describe(),
                    )
                ],
            )


def check_train_epoch(fn, seed: int = 0, lr: float = 0.1, device=None) -> None:
    verdict(TrainEpoch(seed, lr, None if device is None else str(device)), fn)


# Exercise 2 (lesson 02): validation keeps no graph alive --------------------------------------


class _Packed:
    """What autograd saved for one tensor, held so that the check can count live graphs."""

    __slots__ = ("tensor", "__weakref__")

    def __init__(self, tensor: torch.Tensor):
        self.tensor = tensor


class _LiveGraphs:
    """Counts tensors saved for backward that are still alive (their graph is still kept)."""

    def __init__(self):
        self.alive: weakref.WeakSet = weakref.WeakSet()
        self.hooks = trusted.saved_tensors_hooks(self._pack, self._unpack)

    def _pack(self, tensor: torch.Tensor) -> _Packed:
        # detached: a saved output would otherwise hold its own graph in a cycle
        packed = _Packed(tensor.detach())
        self.alive.add(packed)
        return packed

    @staticmethod
    def _unpack(packed: _Packed) -> torch.Tensor:
        return packed.tensor

    def count(self) -> int:
        return trusted.len_(self.alive)


class _WatchedBatches:
    """A list of batches that notes, each time the next batch is taken, how many graphs live."""

    def __init__(self, pairs: list, live: _LiveGraphs):
        self.pairs, self.live, self.counts = pairs, live, []

    def __len__(self) -> int:
        return trusted.len_(self.pairs)

    def __getitem__(self, index):
        self.counts.append(self.live.count())
        return self.pairs[index]

    def __iter__(self):
        for pair in self.pairs:
            self.counts.append(self.live.count())
            yield pair
        self.counts.append(self.live.count())


_VALIDATE_CASES = (
    (Net((6, 12, 4), p=0.5), 5, 8, "train"),
    (Net((5, 9, 9, 3), p=0.3, dtype="float64", nested=True), 4, 6, "eval"),
)


def _reference_mean_loss(seed: int, net: Net, pairs) -> float:
    model = make_net(seed, net).eval()
    with trusted.no_grad():
        losses = [float(_cross_entropy(model(x), y)) for x, y in pairs]
    return sum(losses) / len(losses)


@dataclass(frozen=True)
class Validate(Check):
    """Mean validation loss in evaluation mode; no graph may outlive its batch."""

    number = 2
    seed: int = 0
    device: str | None = None

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        cases = []
        for k, (net, n, batch, mode) in enumerate(_VALIDATE_CASES):
            model = make_net(self.seed + k, net, device).train(mode == "train")
            pairs = make_batches(
                self.seed + 50 + k, n, batch, net.sizes[0], net.sizes[-1], net.dtype, device
            )
            live = _LiveGraphs()
            batches = _WatchedBatches(pairs, live)
            with live.hooks:
                out = call(fn, model, batches)
            record = out.record()
            del out
            cases.append(
                {
                    "call": record,
                    "counts": batches.counts[:100],
                    "after": live.count(),
                    "modes": _modes(model),
                }
            )
        return {"cases": cases}

    def judge(self, obs: dict) -> None:
        ex = self.heading
        for k, ((net, n, batch, mode), case) in enumerate(
            zip(_VALIDATE_CASES, obs["cases"], strict=True)
        ):
            found = returned(ex, case["call"], "validate")
            counts = case["counts"]
            growing = len(counts) >= 3 and counts[-1] > max(counts[1], 0) and counts[-1] > 0
            held = found.is_tensor and found.grad_fn is not None
            model = make_net(self.seed + k, net).train(mode == "train")
            require(
                ex,
                [
                    CheckResult(
                        _in_case(
                            k,
                            Text(
                                "graphs still alive when the loop ends (tensors saved for "
                                "backward that are kept)",
                                "循环结束时仍然存活的计算图（被保留下来的、为反向传播保存的张量）",
                            ),
                        ),
                        not growing,
                        Text("no more than one batch's graph", "最多一个批次的计算图"),
                        Text(
                            "{n} saved tensors alive after {b} batches: each batch's graph is kept",
                            "{b} 个批次之后仍有 {n} 个保存的张量存活：每个批次的计算图都被保留了",
                        ).format(n=counts[-1] if counts else 0, b=n),
                        "NG-3",
                    ),
                    CheckResult(
                        _in_case(k, Text("the return value", "返回值")),
                        found.kind == "float",
                        Text("a Python float", "一个 Python float"),
                        Text("{d}, holding a graph ({f})", "{d}，带着计算图（{f}）").format(
                            d=found.describe(), f=found.grad_fn
                        )
                        if held
                        else found.describe(),
                        "NG-3" if held else None,
                    ),
                    CheckResult(
                        _in_case(k, Text("the model's mode afterwards", "之后模型的模式")),
                        case["modes"] == _modes(model),
                        Text("as it arrived ({m})", "与传入时相同（{m}）").format(m=mode),
                        _CHANGED,
                        "EV-4" if mode == "train" else None,
                    ),
                ],
            )
            want = _reference_mean_loss(
                self.seed + k,
                net,
                make_batches(self.seed + 50 + k, n, batch, net.sizes[0], net.sizes[-1], net.dtype),
            )
            require(
                ex,
                [
                    CheckResult(
                        _in_case(
                            k, Text("the mean loss (evaluation mode)", "平均损失（评估模式）")
                        ),
                        abs(found.value - want) <= 1e-5 * max(1.0, abs(want)),
                        f"{want:.6g}",
                        f"{found.value:.6g}",
                    )
                ],
            )


def check_validate(fn, seed: int = 0, device=None) -> None:
    verdict(Validate(seed, None if device is None else str(device)), fn)


# Exercise 3 (lesson 03): accuracy measured in evaluation mode, mode restored ------------------

_ACCURACY_CASES = (
    (Net((6, 16, 5), p=0.5), 40, "train"),
    (Net((8, 12, 12, 4), p=0.4, dtype="float64", nested=True), 32, "eval"),
    (Net((5, 10, 3), p=0.6), 24, "train"),
)


def _accuracy_inputs(seed: int, net: Net, n: int, device="cpu"):
    """Images far from the running statistics; labels match evaluation mode 2 times in 3."""
    x = 2.0 * uniform(seed + 300, n, net.sizes[0], device="cpu", dtype=_dtype(net.dtype)) + 1.0
    model = make_net(seed, net).eval()
    with trusted.no_grad():
        predicted = model(x).argmax(1)
    g = trusted.generator().manual_seed(seed + 301)
    other = trusted.randint(0, net.sizes[-1], (n,), generator=g)
    keep = trusted.rand(n, generator=g) < 0.67
    labels = predicted.where(keep, other)
    return x.to(device), labels.to(device)


def _reference_accuracy(seed: int, net: Net, n: int) -> float:
    x, labels = _accuracy_inputs(seed, net, n)
    model = make_net(seed, net).eval()
    with trusted.no_grad():
        return float((model(x).argmax(1) == labels).to(torch.float64).mean())


@dataclass(frozen=True)
class Accuracy(Check):
    """Accuracy as the model would score in evaluation mode; the caller's model as it was."""

    number = 3
    seed: int = 0
    device: str | None = None

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        cases = []
        for k, (net, n, mode) in enumerate(_ACCURACY_CASES):
            model = make_net(self.seed + k, net, device).train(mode == "train")
            x, labels = _accuracy_inputs(self.seed + k, net, n, device)
            out = call(fn, model, x, labels)
            cases.append({"call": out.record(), "modes": _modes(model), "state": _state(model)})
        return {"cases": cases}

    def judge(self, obs: dict) -> None:
        ex = self.heading
        for k, ((net, n, mode), case) in enumerate(zip(_ACCURACY_CASES, obs["cases"], strict=True)):
            found = returned(ex, case["call"], "accuracy")
            model = make_net(self.seed + k, net).train(mode == "train")
            buffers = [
                name
                for name, t in model.state_dict().items()
                if not _close(_tensor_or_none(case["state"].get(name, {})), t, 1e-6)
            ]
            restored = case["modes"] == _modes(model)
            want = _reference_accuracy(self.seed + k, net, n)
            ok = found.kind == "float" and abs(found.value - want) <= 1e-6
            trained = bool(buffers)
            require(
                ex,
                [
                    CheckResult(
                        _in_case(
                            k,
                            Text(
                                "BatchNorm running statistics and parameters afterwards",
                                "之后的 BatchNorm 滑动平均统计量与参数",
                            ),
                        ),
                        not buffers,
                        _UNCHANGED,
                        Text(
                            "changed ({names}): the model ran in training mode",
                            "已改变（{names}）：模型是在训练模式下运行的",
                        ).format(names=", ".join(buffers[:3])),
                        "EV-2",
                    ),
                    CheckResult(
                        _in_case(k, Text("the model's mode afterwards", "之后模型的模式")),
                        restored,
                        Text("as it arrived ({m})", "与传入时相同（{m}）").format(m=mode),
                        _CHANGED,
                        "EV-4",
                    ),
                    CheckResult(
                        _in_case(k, Text("the accuracy", "准确率")),
                        ok,
                        Text(
                            "{w:.6g}, as in evaluation mode", "{w:.6g}，即评估模式下的结果"
                        ).format(w=want),
                        found.describe(),
                        "EV-2" if trained else None,
                    ),
                ],
            )


def check_accuracy(fn, seed: int = 0, device=None) -> None:
    verdict(Accuracy(seed, None if device is None else str(device)), fn)


# Exercise 4 (lesson 04): the discriminator step leaves the generator alone -------------------


@dataclass(frozen=True)
class Gan:
    """Sizes of a small GAN: noise → G → samples, samples → D → one logit."""

    z: int
    hidden: int
    d: int
    batch: int
    dtype: str = "float32"


_GAN_CASES = (
    (Gan(3, 8, 5, 6), True),
    (Gan(4, 6, 7, 5, "float64"), False),
)


def make_gan(seed: int, gan: Gan, device="cpu"):
    """G and D with weights fixed by ``seed``; no global RNG (CPU or CUDA) is touched."""
    with _fork_rng(devices=[]):
        g = torch.nn.Sequential(
            torch.nn.Linear(gan.z, gan.hidden), torch.nn.ReLU(), torch.nn.Linear(gan.hidden, gan.d)
        )
        d = torch.nn.Sequential(
            torch.nn.Linear(gan.d, gan.hidden),
            torch.nn.LeakyReLU(0.2),
            torch.nn.Linear(gan.hidden, 1),
        )
    rng = trusted.generator().manual_seed(seed)
    with trusted.no_grad():
        for p in [*g.parameters(), *d.parameters()]:
            scale = p.shape[-1] ** -0.5
            p.copy_((trusted.rand(p.shape, generator=rng) * 2 - 1) * scale)
    dtype = _dtype(gan.dtype)
    return g.to(device=device, dtype=dtype), d.to(device=device, dtype=dtype)


def _gan_batch(seed: int, gan: Gan, device="cpu"):
    dtype = _dtype(gan.dtype)
    real = uniform(seed + 400, gan.batch, gan.d, device=device, dtype=dtype)
    noise = uniform(seed + 401, gan.batch, gan.z, device=device, dtype=dtype)
    return real, noise


def _d_loss_and_grads(seed: int, gan: Gan, d_params: list[torch.Tensor]):
    """The reference discriminator loss on real and (detached) fake samples, and D's gradients."""
    g, d = make_gan(seed, gan)
    with trusted.no_grad():
        for p, value in zip(d.parameters(), d_params, strict=True):
            p.copy_(value)
    real, noise = _gan_batch(seed, gan)
    with trusted.no_grad():
        fake = g(noise)
    real_logits, fake_logits = d(real), d(fake)
    loss = _bce_logits(real_logits, real_logits.new_ones(real_logits.shape)) + _bce_logits(
        fake_logits, fake_logits.new_zeros(fake_logits.shape)
    )
    return float(loss.detach()), list(trusted.autograd_grad(loss, list(d.parameters())))


@dataclass(frozen=True)
class DiscriminatorStep(Check):
    """One D step: D's gradients of its own loss only, G's parameters and .grad untouched."""

    number = 4
    seed: int = 0
    lr: float = 0.05
    device: str | None = None

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        cases = []
        for k, (gan, stale_g) in enumerate(_GAN_CASES):
            g, d = make_gan(self.seed + k, gan, device)
            if stale_g:
                _stale_grads(self.seed + k, g)
            _stale_grads(self.seed + 50 + k, d)
            optimizer = _RecordingSGD(d.parameters(), self.lr)
            real, noise = _gan_batch(self.seed + k, gan, device)
            out = call(fn, g, d, optimizer, real, noise)
            cases.append(
                {
                    "call": out.record(),
                    "steps": optimizer.record,
                    "g_grads": [_snap(p.grad) for p in g.parameters()],
                    "g_params": [_snap(p) for p in g.parameters()],
                    "g_flags": [bool(p.requires_grad) for p in g.parameters()],
                }
            )
        return {"cases": cases}

    def judge(self, obs: dict) -> None:
        ex = self.heading
        for k, ((gan, stale_g), case) in enumerate(zip(_GAN_CASES, obs["cases"], strict=True)):
            found = returned(ex, case["call"], "discriminator_step")
            g, d = make_gan(self.seed + k, gan)
            g_before = _stale_grad_values(self.seed + k, g, stale_g)
            g_grads = [_tensor_or_none(x) for x in case["g_grads"]]
            g_params = [_tensor_or_none(x) for x in case["g_params"]]
            steps = _step_records(case["steps"])
            require(
                ex,
                [
                    CheckResult(
                        _in_case(k, Text("G's .grad afterwards", "之后 G 的 .grad")),
                        all(_close(a, b) for a, b in zip(g_grads, g_before, strict=True)),
                        Text("as it arrived (stale values)", "与传入时相同（残留梯度）")
                        if stale_g
                        else Text("None, as it arrived", "None，与传入时相同"),
                        Text(
                            "changed: the D loss reached G through the fake samples",
                            "已改变：D 的损失经由假样本传到了 G",
                        ),
                        "DT-4",
                    ),
                    CheckResult(
                        _in_case(
                            k, Text("G's parameters and requires_grad", "G 的参数与 requires_grad")
                        ),
                        all(_close(a, b) for a, b in zip(g_params, g.parameters(), strict=True))
                        and all(case["g_flags"]),
                        _UNCHANGED,
                        _CHANGED,
                    ),
                    CheckResult(
                        _in_case(
                            k, Text("D's optimizer.step() calls", "D 的 optimizer.step() 调用次数")
                        ),
                        len(steps) == 1,
                        "1",
                        str(len(steps)),
                    ),
                ],
            )
            params, grads = steps[0]
            loss, fresh = _d_loss_and_grads(self.seed + k, gan, params)
            d_stale = _stale_grad_values(self.seed + 50 + k, d)
            ok = all(_close(a, b) for a, b in zip(grads, fresh, strict=True))
            stale = not ok and all(
                a is not None and _close(a - b, s)
                for a, b, s in zip(grads, fresh, d_stale, strict=True)
            )
            require(
                ex,
                [
                    CheckResult(
                        _in_case(k, Text("the gradients D's step used", "D 这一步使用的梯度")),
                        ok,
                        Text(
                            "the gradient of the D loss alone",
                            "只是 D 的损失的梯度",
                        ),
                        Text(
                            "that plus the stale .grad D arrived with",
                            "它再加上 D 传入时残留的 .grad",
                        )
                        if stale
                        else Text("other values", "其他数值"),
                        "DT-6" if stale else None,
                    ),
                    CheckResult(
                        _in_case(k, Text("the returned loss", "返回的损失")),
                        found.kind == "float" and abs(found.value - loss) <= 1e-5 * max(1, loss),
                        described_float(loss),
                        found.describe(),
                    ),
                ],
            )


def check_discriminator_step(fn, seed: int = 0, lr: float = 0.05, device=None) -> None:
    verdict(DiscriminatorStep(seed, lr, None if device is None else str(device)), fn)


# Exercise 5 (lesson 05): a feature logger that leaves no hook behind --------------------------

_LOGGER_CASES = (
    (Net((6, 10, 10, 4), p=0.5), 2, 3, 5),
    (Net((5, 8, 8, 8, 3), p=0.3, dtype="float64", nested=True), 1, 4, 4),
    (Net((7, 9, 2), p=0.2), 1, 2, 6),
)


def _layer(model: torch.nn.Sequential, index: int) -> torch.nn.Module:
    return model[index]


@dataclass(frozen=True)
class LogFeatures(Check):
    """One detached output of the chosen layer per batch; no hook left on the layer."""

    number = 5
    seed: int = 0
    device: str | None = None

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        cases = []
        for k, (net, index, n, batch) in enumerate(_LOGGER_CASES):
            model = make_net(self.seed + k, net, device).eval()
            layer = _layer(model, index)
            pairs = make_batches(
                self.seed + 70 + k, n, batch, net.sizes[0], net.sizes[-1], net.dtype, device
            )
            out = call(fn, model, layer, pairs)
            record = out.record()
            length = trusted.len_(out.value) if trusted.type_(out.value) is list else None
            with trusted.no_grad():
                model(pairs[0][0])
            grown = trusted.len_(out.value) if length is not None else None
            cases.append(
                {
                    "call": record,
                    "hooks_left": trusted.len_(layer._forward_hooks)
                    + trusted.len_(layer._forward_pre_hooks),
                    "grew": None if length is None else grown - length,
                    "modes": _modes(model),
                }
            )
        return {"cases": cases}

    def judge(self, obs: dict) -> None:
        ex = self.heading
        for k, ((net, index, n, batch), case) in enumerate(
            zip(_LOGGER_CASES, obs["cases"], strict=True)
        ):
            found = returned(ex, case["call"], "log_features")
            model = make_net(self.seed + k, net).eval()
            pairs = make_batches(
                self.seed + 70 + k, n, batch, net.sizes[0], net.sizes[-1], net.dtype
            )
            require(
                ex,
                [
                    CheckResult(
                        _in_case(k, Text("the model's mode afterwards", "之后模型的模式")),
                        case["modes"] == _modes(model),
                        Text("evaluation mode, as it arrived", "评估模式，与传入时相同"),
                        _CHANGED,
                    )
                ],
            )
            prefix = torch.nn.Sequential(*list(model)[: index + 1])
            with trusted.no_grad():
                want = [prefix(x) for x, _ in pairs]
            require(
                ex,
                [
                    CheckResult(
                        _in_case(
                            k, Text("hooks left on the layer afterwards", "之后层上留下的钩子")
                        ),
                        case["hooks_left"] == 0 and not case["grew"],
                        "0",
                        Text(
                            "{h} (one more model call added {g} entries to the returned list)",
                            "{h} 个（再调用一次模型，返回的列表又多了 {g} 项）",
                        ).format(h=case["hooks_left"], g=case["grew"] or 0),
                        "HK-3",
                    ),
                    CheckResult(
                        _in_case(k, Text("entries in the returned list", "返回列表的项数")),
                        found.kind == "list" and found.length == n,
                        Text("{n}, one per batch", "{n}，每个批次一项").format(n=n),
                        found.describe(),
                        "HK-3" if found.kind == "list" and found.length > n else None,
                    ),
                ],
            )
            for j, (item, expected) in enumerate(zip(found.items, want, strict=True)):
                require(
                    ex,
                    [
                        CheckResult(
                            _in_case(
                                k,
                                Text("entry {j} requires grad", "第 {j} 项 requires_grad").format(
                                    j=j
                                ),
                            ),
                            item.is_tensor and not item.requires_grad,
                            "False",
                            Text(
                                "True: it keeps the model's graph alive",
                                "True：它让模型的计算图一直存活",
                            )
                            if item.requires_grad
                            else item.describe(),
                            "HK-1" if item.requires_grad else None,
                        ),
                        c.values(item, expected, f"features[{j}]"),
                    ],
                )


def check_log_features(fn, seed: int = 0, device=None) -> None:
    verdict(LogFeatures(seed, None if device is None else str(device)), fn)


# Exercise 6 (lesson 06): a timer that waits for the device ------------------------------------

_LAUNCH_S = 2e-6


def _durations(seed: int, repeats: int) -> list[float]:
    g = trusted.generator().manual_seed(seed + 600)
    return [float(x) for x in 1e-3 * (2.0 + 3.0 * trusted.rand(repeats + 1, generator=g))]


class _Queue:
    """A deterministic device queue: host time moves by launches and by waiting on sync."""

    def __init__(self, durations: list[float]):
        self.durations, self.log, self.calls = durations, [], 0
        self.host = 1000.0
        # earlier work still running when the learner's timer is called
        self.device_free = self.host + durations[0]

    def step(self) -> None:
        self.log.append("step")
        self.host += _LAUNCH_S
        self.calls += 1
        duration = self.durations[min(self.calls, len(self.durations) - 1)]
        self.device_free = max(self.host, self.device_free) + duration

    def synchronize(self) -> None:
        self.log.append("sync")
        self.host = max(self.host, self.device_free)

    def clock(self) -> float:
        self.log.append("clock")
        return self.host


_TIMER_CASES = (4, 7, 3)


@dataclass(frozen=True)
class TimeStep(Check):
    """The mean time per step of the device's work: synchronize before each clock read."""

    number = 6
    seed: int = 0

    def observe(self, fn) -> dict:
        cases = []
        for k, repeats in enumerate(_TIMER_CASES):
            q = _Queue(_durations(self.seed + k, repeats))
            out = call(fn, q.step, q.synchronize, q.clock, repeats)
            cases.append({"call": out.record(), "log": q.log[:300]})
        return {"cases": cases}

    def judge(self, obs: dict) -> None:
        ex = self.heading
        for k, (repeats, case) in enumerate(zip(_TIMER_CASES, obs["cases"], strict=True)):
            found = returned(ex, case["call"], "time_step")
            log = case["log"]
            durations = _durations(self.seed + k, repeats)
            want = sum(durations[1:]) / repeats
            first_clock = log.index("clock") if "clock" in log else len(log)
            earlier_included = "sync" not in log[:first_clock]
            require(
                ex,
                [
                    CheckResult(
                        _in_case(k, Text("calls of step()", "step() 的调用次数")),
                        log.count("step") == repeats,
                        str(repeats),
                        str(log.count("step")),
                    ),
                    CheckResult(
                        _in_case(
                            k,
                            Text("synchronize() is called", "调用了 synchronize()"),
                        ),
                        "sync" in log,
                        Text("before the clock is read", "在读时钟之前"),
                        Text(
                            "never: the clock measured the launches", "从未调用：时钟测到的只是启动"
                        ),
                        "CS-2",
                    ),
                    CheckResult(
                        _in_case(
                            k,
                            Text(
                                "synchronize() before the first clock read",
                                "第一次读时钟之前调用 synchronize()",
                            ),
                        ),
                        not earlier_included,
                        Text("earlier queued work finished first", "先等之前排队的工作完成"),
                        Text(
                            "the first clock read came while earlier work was still queued",
                            "第一次读时钟时，之前排队的工作还没做完",
                        ),
                        "CS-1",
                    ),
                ],
            )
            require(
                ex,
                [
                    CheckResult(
                        _in_case(k, Text("seconds per step", "每步的秒数")),
                        found.kind == "float" and abs(found.value - want) <= 0.02 * want,
                        Text("{w:.4g} s (±2%)", "{w:.4g} 秒（±2%）").format(w=want),
                        found.describe(),
                        "CS-2" if found.kind == "float" and found.value < 0.5 * want else None,
                    )
                ],
            )


def check_time_step(fn, seed: int = 0) -> None:
    verdict(TimeStep(seed), fn)


# Exercise 7 (lesson 07): a custom Function whose backward fits its forward --------------------

_SWISH_CASES = ((5,), (3, 4), (2, 3, 2))


def _swish_input(seed: int, shape: tuple, dtype: torch.dtype, device="cpu") -> torch.Tensor:
    return 3.0 * uniform(seed + 700, *shape, device=device, dtype=dtype)


def _beta(seed: int, k: int) -> float:
    return 0.5 + 0.25 * ((seed + k) % 5)


def _cf(message: str) -> str | None:
    lowered = message.lower()
    if "incorrect number of gradients" in lowered:
        return "CF-2"
    if "legacy autograd function" in lowered or "non-static forward" in lowered:
        return "CF-1"
    return None


_CF_EXPLAIN = {
    "CF-2": Text(
        "backward must return one gradient per input of forward (None for beta)",
        "backward 必须为 forward 的每个输入各返回一个梯度（beta 返回 None）",
    ),
    "CF-1": Text(
        "a Function needs static forward/backward and is called through .apply",
        "Function 的 forward/backward 必须是静态方法，并通过 .apply 调用",
    ),
}


def _explain_cf(message: str) -> Text | None:
    return _CF_EXPLAIN.get(_cf(message) or "")


def _swish_reference(x: torch.Tensor, beta: float, g: torch.Tensor):
    leaf = x.detach().clone().requires_grad_(True)
    y = leaf * _sigmoid(beta * leaf)
    (grad,) = trusted.autograd_grad(y, leaf, g)
    return y.detach(), grad


def _swish_backward(fn, x: torch.Tensor, beta: float, g: torch.Tensor, mutate: bool) -> dict:
    """Forward, optionally change the input in place, then backward; record the outcome."""
    leaf = x.detach().clone().requires_grad_(True)
    source = leaf * 1.0
    out = call(fn, source, beta)
    record = {"call": out.record()}
    if not out.ok or not trusted.is_tensor(out.value):
        return record
    if mutate:
        with trusted.no_grad():
            source.mul_(-0.5)
    back = call(lambda: out.value.backward(g))
    record["backward"] = back.record()
    record["grad"] = _snap(leaf.grad)
    return record


@dataclass(frozen=True)
class SwishFunction(Check):
    """Swish through a custom Function: values and gradients as autograd's, beta a float."""

    number = 7
    seed: int = 0
    device: str | None = None

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        cases = []
        for k, shape in enumerate(_SWISH_CASES):
            dtype = torch.float64 if k % 2 == 0 else torch.float32
            x = _swish_input(self.seed + k, shape, dtype, device)
            g = uniform(self.seed + 710 + k, *shape, device=device, dtype=dtype)
            cases.append(_swish_backward(fn, x, _beta(self.seed, k), g, mutate=False))
        x = _swish_input(self.seed + 9, (6,), torch.float64, device)
        g = uniform(self.seed + 719, 6, device=device, dtype=torch.float64)
        changed = _swish_backward(fn, x, _beta(self.seed, 9), g, mutate=True)
        return {"cases": cases, "changed_input": changed}

    def judge(self, obs: dict) -> None:
        ex = self.heading
        for k, (shape, case) in enumerate(zip(_SWISH_CASES, obs["cases"], strict=True)):
            dtype = torch.float64 if k % 2 == 0 else torch.float32
            x = _swish_input(self.seed + k, shape, dtype)
            g = uniform(self.seed + 710 + k, *shape, device="cpu", dtype=dtype)
            want_y, want_grad = _swish_reference(x, _beta(self.seed, k), g)
            found = returned(ex, case["call"], "swish", _cf, _explain_cf)
            tol = {"rtol": 1e-4, "atol": 1e-5} if dtype == torch.float32 else {}
            require(
                ex,
                [
                    c.values(found, want_y, f"swish(x, beta) {tuple(shape)}", **tol),
                    c.requires_grad(found, True, "swish(x, beta)"),
                ],
            )
            returned(ex, case["backward"], "y.backward", _cf, _explain_cf)
            require(ex, [c.values(Seen(case["grad"]), want_grad, f"x.grad {tuple(shape)}", **tol)])
        changed = obs["changed_input"]
        returned(ex, changed["call"], "swish", _cf, _explain_cf)
        back = changed.get("backward", {})
        x = _swish_input(self.seed + 9, (6,), torch.float64)
        g = uniform(self.seed + 719, 6, device="cpu", dtype=torch.float64)
        _, want_grad = _swish_reference(x * 1.0, _beta(self.seed, 9), g)
        raised = back.get("raised") is not None
        version_error = raised and "inplace operation" in back.get("message", "")
        grad = _tensor_or_none(changed.get("grad", {}))
        right = version_error or (not raised and _close(grad, want_grad, 1e-7))
        require(
            ex,
            [
                CheckResult(
                    Text(
                        "x changed in place after forward, then backward",
                        "forward 之后原地修改 x，再 backward",
                    ),
                    right,
                    Text(
                        "autograd's “modified by an inplace operation” error, or the gradient "
                        "at the original x",
                        "autograd 报“modified by an inplace operation”错误，或给出原始 x 处的梯度",
                    ),
                    Text("a silently wrong gradient", "悄无声息的错误梯度")
                    if not raised
                    else Text("it raised {e}: {m}", "抛出了 {e}：{m}").format(
                        e=back.get("raised"), m=back.get("message", "")
                    ),
                    "CF-4" if not raised else None,
                )
            ],
        )


def check_swish(fn, seed: int = 0, device=None) -> None:
    verdict(SwishFunction(seed, None if device is None else str(device)), fn)


EXERCISES: tuple[Exercise, ...] = (
    Exercise(
        1,
        "train_epoch",
        Text("lesson 01 bug: the training loop", "第 01 课的错误：训练循环"),
        check_train_epoch,
        ("RG-4",),
    ),
    Exercise(
        2,
        "validate",
        Text("lesson 02 bug: the validation loss", "第 02 课的错误：验证损失"),
        check_validate,
        ("NG-3",),
    ),
    Exercise(
        3,
        "accuracy",
        Text("lesson 03 bug: the accuracy", "第 03 课的错误：准确率"),
        check_accuracy,
        ("EV-2", "EV-4"),
    ),
    Exercise(
        4,
        "discriminator_step",
        Text("lesson 04 bug: the discriminator step", "第 04 课的错误：判别器这一步"),
        check_discriminator_step,
        ("DT-4",),
    ),
    Exercise(
        5,
        "log_features",
        Text("lesson 05 bug: the feature logger", "第 05 课的错误：特征记录器"),
        check_log_features,
        ("HK-3",),
    ),
    Exercise(
        6,
        "time_step",
        Text("lesson 06 bug: the step timer", "第 06 课的错误：每步计时器"),
        check_time_step,
        ("CS-2",),
    ),
    Exercise(
        7,
        "swish",
        Text("lesson 07 bug: the custom Function", "第 07 课的错误：自定义 Function"),
        check_swish,
        ("CF-2",),
    ),
)


def self_check(namespace: dict) -> list:
    """Run every exercise's visible checks against the notebook's namespace; print a summary."""
    return run_self_check(EXERCISES, namespace)
