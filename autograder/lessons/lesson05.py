"""Checks for lesson 05: hooks — seeing and changing what flows through a model.

Each check is an ``observe`` / ``judge`` pair (see autograder/common/protocol.py).
``observe`` builds its own models (several depths, nested names, dtypes, a model
that raises), calls the learner's function, then does what a real caller would do
next — run backward, change a layer's live output in place, remove the returned
handles — and records plain data: snapshots, hook counts, bytes still alive.
``judge`` rebuilds the same models on the CPU and computes references with plain
torch code and hooks of its own.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import torch
from torch import nn

from autograder.common import compare as c
from autograder.common import trusted
from autograder.common.exercise import Exercise
from autograder.common.i18n import Text
from autograder.common.inputs import resolve_device, uniform
from autograder.common.observation import Seen, snapshot
from autograder.common.protocol import Check, call, returned, verdict
from autograder.common.result import CheckResult, require
from autograder.kernel.measure import AliveSavedBytes
from autograder.kernel.selfcheck import run_self_check

LIVE_SHIFT = 1000.0  # what the checks add in place to a layer's live output after the call


def _dtype(name: str) -> torch.dtype:
    return getattr(torch, name)


def _fill(module: nn.Module, g: torch.Generator) -> None:
    """Fixed weights from a seeded generator, the same on every device."""
    with trusted.no_grad():
        for p in module.parameters():
            p.copy_(trusted.rand(*p.shape, generator=g) - 0.5)


def hook_count(model: nn.Module) -> int:
    """Module hooks registered anywhere in ``model`` (forward, pre-forward, backward)."""
    return sum(
        trusted.len_(m._forward_hooks)
        + trusted.len_(m._forward_pre_hooks)
        + trusted.len_(m._backward_hooks)
        + trusted.len_(m._backward_pre_hooks)
        for m in model.modules()
    )


def _is_handle(obj) -> bool:
    return trusted.type_(obj) is torch.utils.hooks.RemovableHandle


def _remove_all(handles) -> None:
    """Remove the handles a learner returned (only real RemovableHandle objects)."""
    if trusted.type_(handles) in (list, tuple):
        for h in handles:
            if _is_handle(h):
                h.remove()
    elif _is_handle(handles):
        handles.remove()


def relabel(result: CheckResult, what: Text) -> CheckResult:
    """The same result under a clearer title (e.g. which moment of the scenario it is about)."""
    return CheckResult(what, result.passed, result.expected, result.found, result.misconception)


# Exercise 1 (HK-1, HK-2, HK-3) ---------------------------------------------------------------


class Tapped(nn.Linear):
    """A Linear layer that keeps a graph-free alias of its last output, for the checks only."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = super().forward(x)
        self.tap = out.detach()
        return out


class Fails(nn.Module):
    """A layer that raises, as a model with a shape bug would."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise RuntimeError("the model failed in the middle of forward (planted by the check)")


def feature_model(seed: int, depth: int, nested: bool, fails: bool = False) -> nn.Module:
    """Linear + ReLU(inplace=True) blocks and a Linear head; names '0', '2', … or 'body.0', …"""
    g = trusted.generator().manual_seed(seed)
    layers: list[nn.Module] = []
    width_in = 4
    for _ in range(depth):
        layers += [Tapped(width_in, 6), nn.ReLU(inplace=True)]
        width_in = 6
    if fails:
        layers.insert(2, Fails())
    head = Tapped(width_in, 3)
    if nested:
        model = nn.Sequential(OrderedDict(body=nn.Sequential(*layers), head=head))
    else:
        model = nn.Sequential(*layers, head)
    _fill(model, g)
    return model


def feature_names(depth: int, nested: bool) -> list[str]:
    """First and last hidden Linear layers (each feeds an in-place ReLU) and the head."""
    prefix = "body." if nested else ""
    hidden = sorted({f"{prefix}0", f"{prefix}{2 * (depth - 1)}"})
    return [*hidden, "head" if nested else str(2 * depth)]


@dataclass(frozen=True)
class ExtractFeatures(Check):
    """Features of named layers: CPU copies, no graph, no alias, no hook left, even on error."""

    number = 1
    seed: int = 0
    depth: int = 2
    nested: bool = False
    batch: int = 5
    dtype: str = "float32"
    device: str | None = None

    def _parts(self, device, fails=False):
        model = feature_model(self.seed, self.depth, self.nested, fails)
        model = model.to(device=device, dtype=_dtype(self.dtype))
        x = uniform(self.seed + 1, self.batch, 4, device=device, dtype=_dtype(self.dtype))
        return model, x

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        model, x = self._parts(device)
        names = feature_names(self.depth, self.nested)
        params = [p for p in model.parameters()]
        modules = dict(model.named_modules())
        hooks_before = hook_count(model)
        with AliveSavedBytes(exclude=params) as alive:
            out = call(fn, model, list(names), x)
        hooks_after = hook_count(model)
        found = out.value if out.ok and trusted.type_(out.value) is dict else {}
        aliases = {}
        with trusted.no_grad():
            for name in names:
                tap = getattr(modules[name], "tap", None)
                if tap is None:  # the learner's function never ran the model
                    continue
                feature = found.get(name)
                aliases[name] = bool(
                    trusted.type_(feature) in (torch.Tensor, nn.Parameter)
                    and feature.device == tap.device
                    and feature.untyped_storage().data_ptr() == tap.untyped_storage().data_ptr()
                )
                with trusted.inference_mode(tap.is_inference()):
                    tap.add_(LIVE_SHIFT)  # the caller keeps working with the live tensors
        kept_alive = alive.alive()
        record = out.record()
        failing, _ = self._parts(device, fails=True)
        failing_hooks_before = hook_count(failing)
        crash = call(fn, failing, list(names), x)
        return {
            "call": record,
            "names": names,
            "hooks": [hooks_before, hooks_after],
            "aliases": aliases,
            "kept_alive": int(kept_alive),
            "failing_call": crash.record(),
            "failing_hooks": [failing_hooks_before, hook_count(failing)],
            "params": {n: snapshot(p) for n, p in model.named_parameters()},
        }

    def _reference(self) -> dict[str, torch.Tensor]:
        model, x = self._parts("cpu")
        modules = dict(model.named_modules())
        got: dict[str, torch.Tensor] = {}
        handles = [
            modules[name].register_forward_hook(
                lambda m, i, o, name=name: got.__setitem__(name, o.detach().clone())
            )
            for name in feature_names(self.depth, self.nested)
        ]
        with trusted.no_grad():
            model(x)
        for h in handles:
            h.remove()
        return got

    def judge(self, obs: dict) -> None:
        ex = self.heading
        found = returned(ex, obs["call"], "extract_features")
        names = obs["names"]
        require(
            ex,
            [
                CheckResult(
                    Text("the return value", "返回值"),
                    found.kind == "dict" and set(found.data.get("items", {})) == set(names),
                    Text("a dict with the keys {k}", "键为 {k} 的 dict").format(k=names),
                    found.describe()
                    if found.kind != "dict"
                    else Text("a dict with the keys {k}", "键为 {k} 的 dict").format(
                        k=sorted(found.data.get("items", {}))
                    ),
                )
            ],
        )
        before, after = obs["hooks"]
        hk3 = [
            CheckResult(
                Text(
                    "module hooks left on the model after the call",
                    "调用之后模型上残留的模块钩子",
                ),
                after == before,
                str(before),
                str(after),
                "HK-3",
            )
        ]
        require(ex, [c.is_tensor(found.item(n), f"features[{n!r}]") for n in names] + hk3)
        reference = self._reference()
        results = []
        for name in names:
            feature, want = found.item(name), reference[name]
            label = f"features[{name!r}]"
            results += [
                c.requires_grad(feature, False, label, "HK-1"),
                c.grad_fn(feature, None, label, "HK-1"),
                c.on_device(feature, "cpu", label),
                c.dtype(feature, want.dtype, label),
                CheckResult(
                    Text(
                        "{f} shares memory with the layer's live output",
                        "{f} 与该层的活输出共享内存",
                    ).format(f=label),
                    not obs["aliases"].get(name, False),
                    Text("a separate copy", "一份独立的副本"),
                    Text(
                        "the same storage: an in-place change of the live tensor changed it",
                        "同一块存储：对活张量的原地修改改变了它",
                    ),
                    "HK-2",
                ),
            ]
            values = c.values(feature, want, label)
            if not values.passed and feature.is_tensor and feature.shape == tuple(want.shape):
                got = feature.value.to(torch.float64)
                later = [want.clamp(min=0), want.clamp(min=0) + LIVE_SHIFT, want + LIVE_SHIFT]
                if any(trusted.allclose(got, v.to(torch.float64), atol=1e-5) for v in later):
                    values = CheckResult(
                        Text("values of {f}", "{f} 的数值").format(f=label),
                        False,
                        Text(
                            "the layer's output at the moment the hook ran",
                            "钩子运行那一刻该层的输出",
                        ),
                        Text(
                            "values changed by in-place ops that ran later (an alias, not a copy)",
                            "被之后运行的原地操作改过的数值（别名，而不是副本）",
                        ),
                        "HK-2",
                    )
            results.append(values)
        require(ex, results)
        kept = obs["kept_alive"]
        require(
            ex,
            [
                CheckResult(
                    Text(
                        "bytes saved for backward that your features keep alive",
                        "你的特征让反向传播保存的张量一直存活的字节数",
                    ),
                    kept == 0,
                    "0",
                    str(kept),
                    "HK-1",
                )
            ],
        )
        crash = obs["failing_call"]
        hooks_before, hooks_after = obs["failing_hooks"]
        model, _ = self._parts("cpu")
        require(
            ex,
            [
                CheckResult(
                    Text(
                        "module hooks left behind when the model raises",
                        "模型抛出异常时残留的模块钩子",
                    ),
                    hooks_after == hooks_before,
                    str(hooks_before),
                    str(hooks_after),
                    "HK-3",
                ),
                CheckResult(
                    Text(
                        "the model's exception reaches the caller",
                        "模型的异常传给了调用者",
                    ),
                    crash.get("raised") is not None,
                    "RuntimeError",
                    Text("no exception", "没有异常"),
                ),
            ]
            + [
                c.values(Seen(obs["params"].get(n, {"kind": "none"})), p, f"model.{n}")
                for n, p in model.named_parameters()
            ],
        )


def check_extract_features(
    fn, seed: int = 0, depth: int = 2, nested: bool = False, dtype=torch.float32, device=None
) -> None:
    name = str(dtype).removeprefix("torch.")
    dev = None if device is None else str(device)
    verdict(ExtractFeatures(seed, depth, nested, 5 + seed % 3, name, dev), fn)


# Exercise 2 (HK-4) -------------------------------------------------------------------------


def tanh_mlp(seed: int, depth: int, width: int = 6) -> nn.Sequential:
    """Linear/Tanh layers with fixed weights: 4 inputs, 3 outputs."""
    g = trusted.generator().manual_seed(seed)
    sizes = [4, *[width] * (depth - 1), 3]
    layers: list[nn.Module] = []
    for k, (n_in, n_out) in enumerate(zip(sizes, sizes[1:], strict=False)):
        layers.append(nn.Linear(n_in, n_out))
        if k < depth - 1:
            layers.append(nn.Tanh())
    model = nn.Sequential(*layers)
    _fill(model, g)
    return model


def _clip_loss(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    return (model(x) ** 2).sum() * 4


@dataclass(frozen=True)
class ClipGradients(Check):
    """Per-parameter clipping by a tensor hook's return value; removable through the handles."""

    number = 2
    seed: int = 0
    depth: int = 2
    max_abs: float = 0.05
    dtype: str = "float32"
    device: str | None = None

    def _parts(self, device):
        model = tanh_mlp(self.seed, self.depth).to(device=device, dtype=_dtype(self.dtype))
        x = uniform(self.seed + 1, 8, 4, device=device, dtype=_dtype(self.dtype))
        return model, x

    def observe(self, fn) -> dict:
        model, x = self._parts(resolve_device(self.device))
        for k, p in enumerate(model.parameters()):  # gradients of an earlier step
            p.grad = uniform(self.seed + 30 + k, *p.shape, device=p.device, dtype=p.dtype)
        out = call(fn, model, self.max_abs)
        for p in model.parameters():
            p.grad = None  # optimizer.zero_grad(), as a training step starts
        backward = call(lambda: _clip_loss(model, x).backward())
        clipped = {n: snapshot(p.grad) for n, p in model.named_parameters()}
        if out.ok:
            _remove_all(out.value)
        for p in model.parameters():
            p.grad = None
        after = call(lambda: _clip_loss(model, x).backward())
        removed = {n: snapshot(p.grad) for n, p in model.named_parameters()}
        return {
            "call": out.record(),
            "backward": backward.record(),
            "clipped": clipped,
            "after_remove": after.record(),
            "removed": removed,
        }

    def judge(self, obs: dict) -> None:
        ex = self.heading
        handles = returned(ex, obs["call"], "clip_gradients")
        all_handles = handles.kind in ("list", "tuple") and all(
            h.data.get("type") == "RemovableHandle" for h in handles.items
        )
        require(
            ex,
            [
                CheckResult(
                    Text("the return value", "返回值"),
                    all_handles and handles.length > 0,
                    Text("a list of the hooks' handles", "由钩子句柄组成的 list"),
                    handles.describe(),
                )
            ],
        )
        returned(ex, obs["backward"], "loss.backward() with your hooks")
        model, x = self._parts("cpu")
        named = dict(model.named_parameters())
        grads = dict(
            zip(
                named,
                trusted.autograd_grad(_clip_loss(model, x), list(named.values())),
                strict=True,
            )
        )
        found = {n: Seen(obs["clipped"].get(n, {"kind": "none"})) for n in grads}
        # Every gradient untouched although hooks were registered: their results were dropped.
        ignored = all(f.is_tensor and c.values(f, grads[n], n).passed for n, f in found.items())
        results = []
        for name, g in grads.items():
            check = c.values(
                found[name], g.clamp(-self.max_abs, self.max_abs), f"model.{name}.grad"
            )
            if not check.passed and ignored:
                check = CheckResult(
                    check.what,
                    False,
                    Text("clipped to ±{m}", "裁剪到 ±{m}").format(m=self.max_abs),
                    Text(
                        "the unclipped gradient: the hooks' results were not returned",
                        "未裁剪的梯度：钩子的结果没有被返回",
                    ),
                    "HK-4",
                )
            results.append(check)
        require(ex, results)
        returned(ex, obs["after_remove"], "loss.backward() after removing the handles")
        after = Text("{r} after handle.remove()", "handle.remove() 之后的 {r}")
        require(
            ex,
            [
                relabel(
                    c.values(Seen(obs["removed"].get(n, {"kind": "none"})), g, f"model.{n}.grad"),
                    after.format(r=f"model.{n}.grad"),
                )
                for n, g in grads.items()
            ],
        )


def check_clip_gradients(
    fn, seed: int = 0, depth: int = 2, max_abs: float = 0.05, dtype=torch.float32, device=None
) -> None:
    name = str(dtype).removeprefix("torch.")
    verdict(ClipGradients(seed, depth, max_abs, name, None if device is None else str(device)), fn)


# Exercise 3 (HK-5) -------------------------------------------------------------------------

_LAYERS = {"tanh": nn.Tanh, "sigmoid": nn.Sigmoid, "linear": lambda: nn.Linear(6, 6)}


def _masked_model(seed: int, layer: str) -> nn.Sequential:
    g = trusted.generator().manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 6), _LAYERS[layer](), nn.Linear(6, 2))
    _fill(model, g)
    return model


def _hk5(message: str) -> str | None:
    return "HK-5" if "modified by an inplace operation" in message else None


@dataclass(frozen=True)
class MaskOutput(Check):
    """A forward hook on model[1] whose return value, output * mask, replaces the output."""

    number = 3
    seed: int = 0
    layer: str = "tanh"
    dtype: str = "float32"
    device: str | None = None

    def _parts(self, device):
        dtype = _dtype(self.dtype)
        model = _masked_model(self.seed, self.layer).to(device=device, dtype=dtype)
        x = uniform(self.seed + 1, 5, 4, device=device, dtype=dtype)
        g = trusted.generator().manual_seed(self.seed + 2)
        mask = (trusted.rand(6, generator=g) > 0.4).to(device=device, dtype=dtype)
        return model, x, mask

    def observe(self, fn) -> dict:
        model, x, mask = self._parts(resolve_device(self.device))
        x.requires_grad_()
        out = call(fn, model[1], mask)
        y = call(model, x)
        grads = call(lambda: trusted.autograd_grad((y.value**2).sum(), [x, model[0].weight]))
        if out.ok:
            _remove_all(out.value)
        plain = call(model, x)
        return {
            "call": out.record(),
            "y": y.record(),
            "grads": grads.record(),
            "after_remove": plain.record(),
            "hooks_after_remove": hook_count(model),
            "mask": snapshot(mask),
        }

    def judge(self, obs: dict) -> None:
        ex = self.heading
        handle = returned(ex, obs["call"], "mask_output")
        require(
            ex,
            [
                CheckResult(
                    Text("the return value", "返回值"),
                    handle.data.get("type") == "RemovableHandle",
                    Text("the hook's handle", "钩子的句柄"),
                    handle.describe(),
                )
            ],
        )
        model, x, mask = self._parts("cpu")
        x.requires_grad_()
        hidden = model[0](x)
        ref_y = model[2](model[1](hidden) * mask)
        want_gx, want_gw = trusted.autograd_grad((ref_y**2).sum(), [x, model[0].weight])
        y = returned(ex, obs["y"], "model(x) with your hook")
        unmasked = model[2](model[1](hidden)).detach()
        y_check = c.values(y, ref_y, "model(x)")
        if not y_check.passed and y.is_tensor and c.values(y, unmasked, "y").passed:
            y_check = CheckResult(
                y_check.what,
                False,
                Text(
                    "the output of model[1] replaced by output * mask",
                    "model[1] 的输出被替换为 output * mask",
                ),
                Text(
                    "the unchanged output: the hook's new value was not returned",
                    "输出没有变化：钩子算出的新值没有被返回",
                ),
                "HK-5",
            )
        require(ex, [y_check])
        grads = returned(ex, obs["grads"], "backward through your hook", classify=_hk5)
        gx, gw = grads.items
        inplace = "HK-5"  # the forward values were right, so only in-place mutation explains this
        require(
            ex,
            [
                c.values(gx, want_gx, "x.grad", inplace),
                c.values(gw, want_gw, "model[0].weight.grad", inplace),
            ],
        )
        after = returned(ex, obs["after_remove"], "model(x) after handle.remove()")
        require(
            ex,
            [
                relabel(
                    c.values(after, unmasked, "model(x)"),
                    Text("model(x) after handle.remove()", "handle.remove() 之后的 model(x)"),
                ),
                CheckResult(
                    Text(
                        "module hooks left after handle.remove()",
                        "handle.remove() 之后残留的模块钩子",
                    ),
                    obs["hooks_after_remove"] == 0,
                    "0",
                    str(obs["hooks_after_remove"]),
                    "HK-3",
                ),
                c.values(Seen(obs["mask"]), mask, "mask (the caller's tensor)"),
            ],
        )


def check_mask_output(fn, seed: int = 0, layer: str = "tanh", dtype=torch.float32, device=None):
    name = str(dtype).removeprefix("torch.")
    verdict(MaskOutput(seed, layer, name, None if device is None else str(device)), fn)


# Exercise 4 (HK-3) -------------------------------------------------------------------------


@dataclass(frozen=True)
class TrainAndLog(Check):
    """A training loop that logs one activation mean per step: no hook multiplies or stays."""

    number = 4
    seed: int = 0
    depth: int = 3
    steps: int = 4
    lr: float = 0.1
    train_mode: bool = True
    device: str | None = None

    def _parts(self, device):
        model = tanh_mlp(self.seed, self.depth).to(device)
        batches = [
            (
                uniform(self.seed + 10 + k, 6, 4, device=device),
                uniform(self.seed + 50 + k, 6, 3, device=device),
            )
            for k in range(self.steps)
        ]
        return model, batches

    def _layer(self) -> str:
        return str(2 * (self.depth - 2) + 1)  # the last Tanh

    def observe(self, fn) -> dict:
        model, batches = self._parts(resolve_device(self.device))
        model.train(self.train_mode)
        for k, p in enumerate(model.parameters()):  # gradients of an earlier step
            p.grad = uniform(self.seed + 90 + k, *p.shape, device=p.device)
        before = hook_count(model)
        out = call(fn, model, self._layer(), batches, self.lr)
        return {
            "call": out.record(),
            "hooks": [before, hook_count(model)],
            "params": {n: snapshot(p) for n, p in model.named_parameters()},
        }

    def _reference(self) -> tuple[list[float], nn.Module]:
        model, batches = self._parts("cpu")
        means = []
        for x, y in batches:
            means.append(float(model[: int(self._layer()) + 1](x).detach().mean()))
            loss = nn.functional.mse_loss(model(x), y)
            grads = trusted.autograd_grad(loss, list(model.parameters()))
            with trusted.no_grad():
                for p, g in zip(model.parameters(), grads, strict=True):
                    p -= self.lr * g
        return means, model

    def judge(self, obs: dict) -> None:
        ex = self.heading
        log = returned(ex, obs["call"], "train_and_log")
        before, after = obs["hooks"]
        triangular = self.steps * (self.steps + 1) // 2
        multiplied = log.kind == "list" and log.length == triangular
        require(
            ex,
            [
                CheckResult(
                    Text("one logged mean per step", "每一步记录一个均值"),
                    log.kind == "list" and log.length == self.steps,
                    Text("a list of {n} floats", "包含 {n} 个 float 的 list").format(n=self.steps),
                    Text(
                        "{n} entries: 1 + 2 + … + {s} — one more hook each step",
                        "{n} 个元素：1 + 2 + … + {s}——每一步多出一个钩子",
                    ).format(n=triangular, s=self.steps)
                    if multiplied
                    else log.describe(),
                    "HK-3" if multiplied else None,
                ),
                CheckResult(
                    Text(
                        "module hooks left on the model after the call",
                        "调用之后模型上残留的模块钩子",
                    ),
                    after == before,
                    str(before),
                    str(after),
                    "HK-3",
                ),
            ],
        )
        means, model = self._reference()
        results = []
        for k, (item, want) in enumerate(zip(log.items, means, strict=True)):
            results.append(
                CheckResult(
                    Text("logged mean at step {k}", "第 {k} 步记录的均值").format(k=k),
                    item.kind == "float" and abs(item.value - want) <= 1e-4 + 1e-4 * abs(want),
                    f"{want:.6g}",
                    f"{item.value:.6g}" if item.kind == "float" else item.describe(),
                )
            )
        results += [
            c.values(Seen(obs["params"].get(n, {"kind": "none"})), p, f"model.{n}", rtol=1e-4)
            for n, p in model.named_parameters()
        ]
        require(ex, results)


def check_train_and_log(
    fn, seed: int = 0, depth: int = 3, steps: int = 4, train_mode: bool = True, device=None
) -> None:
    dev = None if device is None else str(device)
    verdict(TrainAndLog(seed, depth, steps, 0.1, train_mode, dev), fn)


# Exercise 5 --------------------------------------------------------------------------------


def _count_saved(model: nn.Module, x: torch.Tensor) -> tuple[torch.Tensor, int]:
    total = 0

    def pack(t: torch.Tensor) -> torch.Tensor:
        nonlocal total
        total += t.element_size() * t.nelement()
        return t

    with trusted.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    return out, total


@dataclass(frozen=True)
class ForwardCountingSaved(Check):
    """(output, bytes packed for backward) from pack/unpack hooks; the output still trains."""

    number = 5
    seed: int = 0
    depth: int = 2
    batch: int = 7
    dtype: str = "float32"
    device: str | None = None

    def _parts(self, device):
        dtype = _dtype(self.dtype)
        model = tanh_mlp(self.seed, self.depth, width=5 + self.seed % 4)
        model = model.to(device=device, dtype=dtype)
        x = uniform(self.seed + 1, self.batch, 4, device=device, dtype=dtype)
        return model, x

    def observe(self, fn) -> dict:
        model, x = self._parts(resolve_device(self.device))
        out = call(fn, model, x)
        ok = out.ok and trusted.type_(out.value) is tuple and trusted.len_(out.value) == 2
        grads = {"raised": None, "value": {"kind": "none"}}
        if ok and trusted.type_(out.value[0]) is torch.Tensor:
            output = out.value[0]
            grads = call(
                lambda: trusted.autograd_grad((output**2).sum(), list(model.parameters()))
            ).record()
        return {"call": out.record(), "grads": grads}

    def judge(self, obs: dict) -> None:
        ex = self.heading
        found = returned(ex, obs["call"], "forward_counting_saved")
        require(ex, [c.returns_tuple(found, 2, "(output, n_bytes)")])
        output, n_bytes = found.items
        model, x = self._parts("cpu")
        want_out, want_bytes = _count_saved(model, x)
        want_grads = trusted.autograd_grad((want_out**2).sum(), list(model.parameters()))
        require(
            ex,
            [
                c.values(output, want_out, "output"),
                c.requires_grad(output, True, "output"),
                CheckResult(
                    Text(
                        "n_bytes (bytes packed for backward)", "n_bytes（为反向传播打包的字节数）"
                    ),
                    n_bytes.kind == "int" and n_bytes.value == want_bytes,
                    Text("the int {n}", "整数 {n}").format(n=want_bytes),
                    n_bytes.describe(),
                ),
            ],
        )
        grads = returned(ex, obs["grads"], "backward from your output")
        require(
            ex,
            [
                c.values(g, w, f"grad of {n}")
                for (n, _), g, w in zip(
                    model.named_parameters(), grads.items, want_grads, strict=False
                )
            ]
            + [
                CheckResult(
                    Text("gradients of every parameter", "每个参数的梯度"),
                    grads.length == len(want_grads),
                    str(len(want_grads)),
                    str(grads.length),
                )
            ],
        )


def check_forward_counting_saved(
    fn, seed: int = 0, depth: int = 2, dtype=torch.float32, device=None
) -> None:
    name = str(dtype).removeprefix("torch.")
    dev = None if device is None else str(device)
    verdict(ForwardCountingSaved(seed, depth, 7 + seed % 3, name, dev), fn)


EXERCISES: tuple[Exercise, ...] = (
    Exercise(
        1,
        "extract_features",
        Text("a feature extractor that leaves nothing behind", "不留痕迹的特征提取器"),
        check_extract_features,
        ("HK-1", "HK-2", "HK-3"),
    ),
    Exercise(
        2,
        "clip_gradients",
        Text("clip gradients with tensor hooks", "用张量钩子裁剪梯度"),
        check_clip_gradients,
        ("HK-4",),
    ),
    Exercise(
        3,
        "mask_output",
        Text("replace a layer's output", "替换一层的输出"),
        check_mask_output,
        ("HK-5",),
    ),
    Exercise(
        4,
        "train_and_log",
        Text("log activations while training", "训练时记录激活值"),
        check_train_and_log,
        ("HK-3",),
    ),
    Exercise(
        5,
        "forward_counting_saved",
        Text("count what a forward pass saves", "统计前向传播保存的字节数"),
        check_forward_counting_saved,
        (),
    ),
)


def self_check(namespace: dict) -> list:
    """Run every exercise's visible checks against the notebook's namespace; print a summary."""
    return run_self_check(EXERCISES, namespace)
