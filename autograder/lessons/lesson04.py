"""Checks for lesson 04: detach, detach_, .data, and detach in GAN training.

Each check is an ``observe`` / ``judge`` pair (see autograder/common/protocol.py).
``observe`` builds its own tensors and models from a seed, calls the learner's
function, and records plain data: what came back, whether it shares storage with
the input (data pointers, and a mutation made on one side), whether backward
raised afterwards, and — for the GAN steps — what a spy optimizer saw in every
``.grad`` at the moment ``step()`` ran. ``judge`` rebuilds the same inputs on the
CPU, computes one correct step with ``torch.autograd.grad`` and compares.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

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


def _yes_no(flag: bool) -> Text:
    return YES if flag else NO


def _close(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal within the tolerance the value checks use (float64, on the CPU)."""
    if tuple(a.shape) != tuple(b.shape):
        return False
    a64, b64 = a.detach().to("cpu", torch.float64), b.detach().to("cpu", torch.float64)
    return bool(trusted.allclose(a64, b64, rtol=1e-5, atol=1e-6))


def _seen_close(found: Seen, want: torch.Tensor) -> bool:
    return found.is_tensor and _close(found.value, want)


def _seen_zero_or_none(found: Seen) -> bool:
    return found.kind == "none" or (found.is_tensor and not bool(found.value.any()))


# Exercise 1 (DT-1, DT-2) -------------------------------------------------------------------


def _exp_of_leaf(seed: int, size: int, device, dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """A leaf w and t = w.exp(): exp saves its output, so t is needed by backward."""
    w = uniform(seed, size, device=device, dtype=dtype).requires_grad_()
    return w, w.exp()


def _observe_frozen(fn, share: bool, seed: int, size: int, device, dtype) -> dict:
    """Call fn(t, share) twice: once changing the copy in place, once changing t."""
    w, t = _exp_of_leaf(seed, size, device, dtype)
    first = call(fn, t, share)
    record: dict = {"call": first.record(), "t_after": snapshot(t)}
    copy = first.value
    if not (first.ok and trusted.type_(copy) in (torch.Tensor, torch.nn.Parameter)):
        return record
    record["same_storage"] = bool(
        copy.untyped_storage().data_ptr() == t.untyped_storage().data_ptr()
    )
    with trusted.no_grad():
        copy.add_(0.5)
    record["t_after_copy_changed"] = snapshot(t)
    backward = call(lambda: trusted.autograd_grad(t.sum(), w))
    record["backward"] = backward.record()

    _, t2 = _exp_of_leaf(seed, size, device, dtype)
    second = call(fn, t2, share)
    if second.ok and trusted.type_(second.value) in (torch.Tensor, torch.nn.Parameter):
        with trusted.no_grad():
            t2.add_(0.25)
        record["copy_after_t_changed"] = snapshot(second.value)
    return record


@dataclass(frozen=True)
class FrozenCopy(Check):
    """frozen_copy(t, share): no history; shares t's storage (and version) or is independent."""

    number = 1
    seed: int = 0
    size: int = 5
    dtype: str = "float64"
    device: str | None = None

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        dtype = getattr(torch, self.dtype)
        return {
            "device": str(device),
            "shared": _observe_frozen(fn, True, self.seed, self.size, device, dtype),
            "independent": _observe_frozen(fn, False, self.seed + 1, self.size, device, dtype),
        }

    def judge(self, obs: dict) -> None:
        ex = self.heading
        results = []
        for share, key in ((True, "shared"), (False, "independent")):
            results += self._judge_case(ex, share, obs[key], obs["device"])
        require(ex, results)

    def _judge_case(self, ex: Text, share: bool, rec: dict, device: str) -> list[CheckResult]:
        """The storage and mutation results of one case, once its basic properties hold."""
        seed = self.seed if share else self.seed + 1
        name = f"frozen_copy(t, share={share})"
        copy = returned(ex, rec["call"], "frozen_copy")
        require(ex, [c.is_tensor(copy, name)])
        w, t = _exp_of_leaf(seed, self.size, "cpu", getattr(torch, self.dtype))
        t_after = Seen(rec["t_after"])
        require(
            ex,
            [
                c.requires_grad(copy, False, name),
                c.grad_fn(copy, None, name),
                c.dtype(copy, getattr(torch, self.dtype), name),
                c.on_device(copy, device, name),
                c.values(copy, t, name),
                c.requires_grad(t_after, True, "t"),
                c.grad_fn(t_after, "ExpBackward", "t"),
            ],
        )
        shared = rec["same_storage"]
        seen_in_t = _seen_close(Seen(rec["t_after_copy_changed"]), t + 0.5)
        seen_in_copy = _seen_close(Seen(rec["copy_after_t_changed"]), t + 0.25)
        raised = rec["backward"].get("raised") is not None
        if share:
            return [
                _storage_result(name, shared, True, None),
                _mutation_result("t", seen_in_t, True, None),
                _mutation_result("copy", seen_in_copy, True, None),
                CheckResult(
                    Text(
                        "backward through t raises after the copy was changed in place",
                        "原地修改副本之后，经过 t 的反向传播会报错",
                    ),
                    raised,
                    Text("it raises: autograd sees the change", "报错：自动求导看到了这次修改"),
                    Text(
                        "no error: autograd did not see the change (a wrong gradient)",
                        "没有报错：自动求导没有看到这次修改（梯度是错的）",
                    ),
                    "DT-2" if shared else None,
                ),
            ]
        return [
            _storage_result(name, shared, False, "DT-1"),
            _mutation_result("t", seen_in_t, False, "DT-1"),
            _mutation_result("copy", seen_in_copy, False, "DT-1"),
            CheckResult(
                Text(
                    "backward through t after the copy was changed in place",
                    "原地修改副本之后，经过 t 的反向传播",
                ),
                not raised,
                Text("works: t was not touched", "正常运行：t 没有被改动"),
                Text("it raises: the copy was t's own storage", "报错：副本就是 t 的存储"),
                "DT-1",
            ),
        ]


def _storage_result(name: str, shared: bool, wanted: bool, misconception) -> CheckResult:
    return CheckResult(
        Text("{name} shares t's storage (data_ptr)", "{name} 与 t 共享存储（data_ptr）").format(
            name=name
        ),
        shared == wanted,
        _yes_no(wanted),
        _yes_no(shared),
        misconception,
    )


_SHOWS_IN = {
    "t": Text("an in-place change of the copy shows in t", "原地修改副本后，t 随之改变"),
    "copy": Text("an in-place change of t shows in the copy", "原地修改 t 后，副本随之改变"),
}


def _mutation_result(side: str, seen: bool, wanted: bool, misconception) -> CheckResult:
    return CheckResult(
        _SHOWS_IN[side], seen == wanted, _yes_no(wanted), _yes_no(seen), misconception
    )


def check_frozen_copy(fn, seed: int = 0, size: int = 5, dtype=torch.float64, device=None) -> None:
    name = str(dtype).removeprefix("torch.")
    verdict(FrozenCopy(seed, size, name, None if device is None else str(device)), fn)


# Exercise 2 (DT-3) -------------------------------------------------------------------------

# Each maker takes a leaf w of shape (3, 4) and returns (tensor, is_view).
_MAKERS = (
    ("w * 2", lambda w: (w * 2, False)),
    ("w.exp()", lambda w: (w.exp(), False)),
    ("w.sum(0)", lambda w: (w.sum(0), False)),
    ("a fresh leaf", lambda w: (w.detach().clone().requires_grad_(), False)),
    ("(w * 3)[1:]", lambda w: ((w * 3)[1:], True)),
    ("(w + 1).t()", lambda w: ((w + 1).t(), True)),
    ("(w * 2).unsqueeze(0)", lambda w: ((w * 2).unsqueeze(0), True)),
    ("w[0]", lambda w: (w[0], True)),
)


_VIEW_NAMES = frozenset(name for name, make in _MAKERS[4:])


def _detach_cases(seed: int, count: int) -> list[int]:
    """Indices into _MAKERS: at least two views and two non-views, in a seeded order."""
    g = trusted.generator().manual_seed(seed)
    order = [int(i) for i in trusted.rand(len(_MAKERS), generator=g).argsort()]
    views = [i for i in order if _MAKERS[i][0] in _VIEW_NAMES][:2]
    others = [i for i in order if i not in views]
    plain = [i for i in others if _MAKERS[i][0] not in _VIEW_NAMES][:2]
    rest = [i for i in others if i not in plain][: max(count - 4, 0)]
    chosen = set(views + plain + rest)
    return [i for i in order if i in chosen]


@dataclass(frozen=True)
class DetachAll(Check):
    """detach_all(tensors): detach_() where allowed (same object), detach() on views."""

    number = 2
    seed: int = 0
    count: int = 5
    dtype: str = "float64"
    device: str | None = None

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        w = uniform(self.seed, 3, 4, device=device, dtype=getattr(torch, self.dtype))
        w.requires_grad_()
        inputs = [_MAKERS[i][1](w)[0] for i in _detach_cases(self.seed, self.count)]
        out = call(fn, list(inputs))
        record: dict = {"call": out.record(), "items": []}
        if not (out.ok and trusted.type_(out.value) is list):
            return record
        for k, original in enumerate(inputs):
            got = out.value[k] if k < trusted.len_(out.value) else None
            item = {
                "same_object": got is original,
                "input_after": snapshot(original),
                "shares_storage": False,
                "shares_version": False,
            }
            if trusted.type_(got) in (torch.Tensor, torch.nn.Parameter):
                item["shares_storage"] = bool(
                    got.untyped_storage().data_ptr() == original.untyped_storage().data_ptr()
                )
                before = original._version
                with trusted.no_grad():
                    got.add_(0)
                item["shares_version"] = bool(original._version != before)
            record["items"].append(item)
        return record

    def judge(self, obs: dict) -> None:
        ex = self.heading
        found = returned(ex, obs["call"], "detach_all", classify=_dt3)
        cases = _detach_cases(self.seed, self.count)
        require(
            ex,
            [
                CheckResult(
                    Text("the return value", "返回值"),
                    found.kind == "list" and found.length == len(cases),
                    Text("a list of {n} tensors", "包含 {n} 个张量的 list").format(n=len(cases)),
                    found.describe(),
                )
            ],
        )
        require(ex, [c.is_tensor(t, f"result[{k}]") for k, t in enumerate(found.items)])
        results = []
        for k, (index, got, item) in enumerate(zip(cases, found.items, obs["items"], strict=True)):
            label, make = _MAKERS[index]
            name = f"result[{k}] ({label})"
            results += [c.requires_grad(got, False, name), c.grad_fn(got, None, name)]
            if label in _VIEW_NAMES:
                results += [
                    _storage_shared(name, item["shares_storage"]),
                    CheckResult(
                        Text(
                            "{name} shares the view's version counter (autograd sees changes)",
                            "{name} 与视图共享版本计数器（自动求导看得到修改）",
                        ).format(name=name),
                        item["shares_version"],
                        YES,
                        NO,
                        "DT-2" if item["shares_storage"] else None,
                    ),
                ]
            else:
                results.append(
                    CheckResult(
                        Text(
                            "tensors[{k}] ({label}) detached in place (the same object returned)",
                            "tensors[{k}]（{label}）被原地分离（返回的是同一个对象）",
                        ).format(k=k, label=label),
                        item["same_object"] and not Seen(item["input_after"]).requires_grad,
                        YES,
                        NO,
                    )
                )
        require(ex, results)


def _storage_shared(name: str, shared: bool) -> CheckResult:
    return CheckResult(
        Text("{name} shares the view's storage", "{name} 与视图共享存储").format(name=name),
        shared,
        YES,
        NO,
    )


def _dt3(message: str) -> str | None:
    return "DT-3" if "detach views in-place" in message else None


def check_detach_all(fn, seed: int = 0, count: int = 5, dtype=torch.float64, device=None) -> None:
    name = str(dtype).removeprefix("torch.")
    verdict(DetachAll(seed, count, name, None if device is None else str(device)), fn)


# Exercise 3 (DT-2) -------------------------------------------------------------------------


@dataclass(frozen=True)
class NormalisedAndGrad(Check):
    """p = out / out.sum() without history, and d(out.sum())/dw, for out = exp(x @ w)."""

    number = 3
    seed: int = 0
    rows: int = 6
    dim: int = 4
    dtype: str = "float64"
    device: str | None = None

    def _inputs(self, device) -> tuple[torch.Tensor, torch.Tensor]:
        dtype = getattr(torch, self.dtype)
        w = uniform(self.seed, self.dim, device=device, dtype=dtype)
        x = uniform(self.seed + 1, self.rows, self.dim, device=device, dtype=dtype)
        return w, x

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        w, x = self._inputs(device)
        w.requires_grad_()
        out = call(fn, w, x)
        return {"device": str(device), "call": out.record(), "w": snapshot(w), "x": snapshot(x)}

    def judge(self, obs: dict) -> None:
        ex = self.heading
        found = returned(ex, obs["call"], "normalised_and_grad")
        require(ex, [c.returns_tuple(found, 2, "(p, grad)")])
        p, grad = found.items
        require(ex, [c.is_tensor(p, "p"), c.is_tensor(grad, "grad")])
        w, x = self._inputs("cpu")
        w.requires_grad_()
        out = torch.exp(x @ w)
        (want_grad,) = trusted.autograd_grad(out.sum(), w)
        want_p = out.detach() / out.detach().sum()
        hidden_change = x.t() @ want_p  # exp's backward reading a normalised output
        dt2 = "DT-2" if _seen_close(grad, hidden_change) else None
        dtype = getattr(torch, self.dtype)
        require(
            ex,
            [
                c.values(p, want_p, "p"),
                c.requires_grad(p, False, "p"),
                c.dtype(p, dtype, "p"),
                c.on_device(p, obs["device"], "p"),
                c.values(grad, want_grad, "grad", misconception=dt2),
                c.dtype(grad, dtype, "grad"),
                c.values(Seen(obs["w"]), w.detach(), "w"),
                c.values(Seen(obs["x"]), x, "x"),
            ],
        )


def check_normalised_and_grad(
    fn, seed: int = 0, rows: int = 6, dim: int = 4, dtype=torch.float64, device=None
) -> None:
    name = str(dtype).removeprefix("torch.")
    verdict(NormalisedAndGrad(seed, rows, dim, name, None if device is None else str(device)), fn)


# Exercises 4 and 5: the GAN steps (DT-4, DT-5, DT-6) ---------------------------------------


def make_gan(
    seed: int, depth: int = 2, z_dim: int = 3, data_dim: int = 6, hidden: int = 8, device="cpu"
) -> tuple[torch.nn.Sequential, torch.nn.Sequential]:
    """A generator and a discriminator with fixed float64 weights; ``depth`` Linear layers each."""
    g = trusted.generator().manual_seed(seed)

    def mlp(sizes: list[int], hidden_act, last_act) -> torch.nn.Sequential:
        layers: list[torch.nn.Module] = []
        for k, (n_in, n_out) in enumerate(zip(sizes, sizes[1:], strict=False)):
            linear = torch.nn.Linear(n_in, n_out, dtype=torch.float64)
            with trusted.no_grad():
                linear.weight.copy_(trusted.rand(n_out, n_in, generator=g) - 0.5)
                linear.bias.copy_(trusted.rand(n_out, generator=g) - 0.5)
            layers.append(linear)
            layers.append(hidden_act() if k < len(sizes) - 2 else last_act())
        return torch.nn.Sequential(*layers).to(device)

    inner = [hidden] * (depth - 1)
    generator = mlp([z_dim, *inner, data_dim], torch.nn.ReLU, torch.nn.Sigmoid)
    discriminator = mlp([data_dim, *inner, 1], lambda: torch.nn.LeakyReLU(0.2), torch.nn.Identity)
    return generator, discriminator


class SpySGD(torch.optim.SGD):
    """Plain SGD that records, each time ``step()`` runs, the gradients it is about to apply."""

    def __init__(self, params, lr: float):
        super().__init__(list(params), lr=lr)
        self.seen_at_step: list[list[dict]] = []

    def step(self, closure=None):
        params = [p for group in self.param_groups for p in group["params"]]
        self.seen_at_step.append([snapshot(p.grad) for p in params])
        return super().step(closure)


@dataclass(frozen=True)
class _GanScenario:
    """Models, batch and stale gradients of one GAN-step check, the same on every device."""

    seed: int
    depth: int
    batch: int
    lr: float

    def build(self, device):
        G, D = make_gan(self.seed, self.depth, device=device)
        z = uniform(self.seed + 1, self.batch, 3, device=device, dtype=torch.float64)
        real = (uniform(self.seed + 2, self.batch, 6, device=device, dtype=torch.float64) + 1) / 2
        stale_g = self._stale(G, 100, device)
        stale_d = self._stale(D, 200, device)
        return G, D, z, real, stale_g, stale_d

    def _stale(self, model, offset: int, device) -> list[torch.Tensor]:
        """What an earlier step left in .grad: the caller's state is not fresh."""
        return [
            uniform(self.seed + offset + k, *p.shape, device=device, dtype=torch.float64)
            for k, p in enumerate(model.parameters())
        ]


def _put_grads(model, grads: list[torch.Tensor]) -> None:
    for p, g in zip(model.parameters(), grads, strict=True):
        p.grad = g.clone()


def _model_state(model) -> dict:
    return {
        "params": [snapshot(p) for p in model.parameters()],
        "grads": [snapshot(p.grad) for p in model.parameters()],
        "training": bool(model.training),
    }


def _observe_gan_step(scenario: _GanScenario, device, fn, which: str) -> dict:
    G, D, z, real, stale_g, stale_d = scenario.build(device)
    _put_grads(G, stale_g)
    _put_grads(D, stale_d)
    optimizer = SpySGD((D if which == "d" else G).parameters(), scenario.lr)
    args = (G, D, optimizer, real, z) if which == "d" else (G, D, optimizer, z)
    out = call(fn, *args)
    return {
        "call": out.record(),
        "steps": optimizer.seen_at_step,
        "G": _model_state(G),
        "D": _model_state(D),
        "z": snapshot(z),
        "real": snapshot(real),
    }


def _float_result(loss: Seen, want: torch.Tensor, name: str) -> list[CheckResult]:
    results = [
        CheckResult(
            Text("{name} returns a Python float", "{name} 返回 Python float").format(name=name),
            loss.kind == "float",
            "float",
            loss.describe(),
        )
    ]
    if loss.kind == "float":
        results.append(c.values(trusted.tensor(loss.value), want, Text("the loss", "损失")))
    return results


def _one_step(steps: list, name: str) -> CheckResult:
    return CheckResult(
        Text("calls of {name}.step()", "{name}.step() 的调用次数").format(name=name),
        len(steps) == 1,
        "1",
        str(len(steps)),
    )


def _first_failure(what: Text, results: list[tuple[CheckResult, str | None]]) -> CheckResult:
    """One result for a whole model: the first failing parameter shows what was expected."""
    for result, misconception in results:
        if not result.passed:
            return CheckResult(what, False, result.expected, result.found, misconception)
    return CheckResult(what, True)


def _flags(state: dict, name: str) -> list[CheckResult]:
    """The model's parameters still require grad, and its mode is the one it arrived in."""
    flags = [
        (c.requires_grad(Seen(data), True, f"list({name}.parameters())[{k}]"), None)
        for k, data in enumerate(state["params"])
    ]
    return [
        _first_failure(
            Text("{name}'s parameters still require grad", "{name} 的参数仍然需要梯度").format(
                name=name
            ),
            flags,
        ),
        CheckResult(
            Text("{name}.training (its mode)", "{name}.training（模块的模式）").format(name=name),
            state["training"],
            "True",
            str(state["training"]),
        ),
    ]


def _unchanged(state: dict, model, name: str) -> list[CheckResult]:
    """The model's parameters, their requires_grad flags and its mode, as the caller gave them."""
    same = [
        (c.values(Seen(data), p, f"list({name}.parameters())[{k}]"), None)
        for k, (data, p) in enumerate(zip(state["params"], model.parameters(), strict=True))
    ]
    unchanged = Text("{name}'s parameters are unchanged", "{name} 的参数保持不变").format(name=name)
    return [_first_failure(unchanged, same), *_flags(state, name)]


def _stepped(
    state: dict,
    at_step: list,
    model,
    grads: list[torch.Tensor],
    stale: list[torch.Tensor],
    lr: float,
    name: str,
    stale_id: str | None,
    missing_id: str | None,
) -> list[CheckResult]:
    """The gradients seen by step() and the parameters after it, against one correct step.

    ``stale_id`` names a step that used the correct gradient plus the stale one;
    ``missing_id`` names a step that saw no new gradient (None, zero or only the stale one).
    """
    seen_grads, seen_params = [], []
    for k, (p, g, old) in enumerate(zip(model.parameters(), grads, stale, strict=True)):
        seen_grad, seen_param = Seen(at_step[k]), Seen(state["params"][k])
        if _seen_close(seen_grad, g + old):
            blame = stale_id
        elif _seen_zero_or_none(seen_grad) or _seen_close(seen_grad, old):
            blame = missing_id
        else:
            blame = None
        label = f"list({name}.parameters())[{k}]"
        seen_grads.append((c.values(seen_grad, g, f"{label}.grad"), blame))
        seen_params.append((c.values(seen_param, p.detach() - lr * g, label), blame))
    return [
        _first_failure(
            Text(
                "{name}'s .grad when step() ran: the gradient of this step's loss alone",
                "step() 执行时 {name} 的 .grad：只是这一步损失的梯度",
            ).format(name=name),
            seen_grads,
        ),
        _first_failure(
            Text(
                "{name}'s parameters after one correct step", "{name} 的参数等于正确更新一步后的值"
            ).format(name=name),
            seen_params,
        ),
    ]


def _caller_batches(obs: dict, z: torch.Tensor, real: torch.Tensor | None) -> list[CheckResult]:
    results = [c.values(Seen(obs["z"]), z, "z")]
    if real is not None:
        results.append(c.values(Seen(obs["real"]), real, "real"))
    return results


@dataclass(frozen=True)
class DStep(Check):
    """One discriminator step: D updated by the correct gradient, no gradient reaching G."""

    number = 4
    seed: int = 0
    depth: int = 2
    batch: int = 5
    lr: float = 0.1
    device: str | None = None

    def _scenario(self) -> _GanScenario:
        return _GanScenario(self.seed, self.depth, self.batch, self.lr)

    def observe(self, fn) -> dict:
        return _observe_gan_step(self._scenario(), resolve_device(self.device), fn, "d")

    def judge(self, obs: dict) -> None:
        ex = self.heading
        loss = returned(ex, obs["call"], "d_step")
        G, D, z, real, stale_g, stale_d = self._scenario().build("cpu")
        fake = G(z).detach()
        real_logits, fake_logits = D(real), D(fake)
        want_loss = F.binary_cross_entropy_with_logits(
            real_logits, trusted.ones(real_logits.shape, dtype=torch.float64)
        ) + F.binary_cross_entropy_with_logits(
            fake_logits, trusted.zeros(fake_logits.shape, dtype=torch.float64)
        )
        grads = trusted.autograd_grad(want_loss, list(D.parameters()))
        require(ex, [*_float_result(loss, want_loss, "d_step"), _one_step(obs["steps"], "opt_d")])
        g_state = obs["G"]
        changed = [
            k
            for k, (data, old) in enumerate(zip(g_state["grads"], stale_g, strict=True))
            if not (_seen_zero_or_none(Seen(data)) or _seen_close(Seen(data), old))
        ]
        leaked = CheckResult(
            Text("no gradient of loss_d reached G", "loss_d 的梯度没有传到 G"),
            not changed,
            Text(
                "G's .grad as before the call (or None / zero)",
                "G 的 .grad 与调用前相同（或 None / 零）",
            ),
            Text(
                "the D step changed the .grad of {n} of G's {total} parameters",
                "判别器步改变了 G 的 {total} 个参数中 {n} 个的 .grad",
            ).format(n=len(changed), total=len(stale_g)),
            "DT-4",
        )
        require(
            ex,
            [
                leaked,
                *_stepped(obs["D"], obs["steps"][0], D, grads, stale_d, self.lr, "D", "DT-6", None),
                *_unchanged(g_state, G, "G"),
                *_flags(obs["D"], "D"),
                *_caller_batches(obs, z, real),
            ],
        )


def check_d_step(
    fn, seed: int = 0, depth: int = 2, batch: int = 5, lr: float = 0.1, device=None
) -> None:
    verdict(DStep(seed, depth, batch, lr, None if device is None else str(device)), fn)


@dataclass(frozen=True)
class GStep(Check):
    """One generator step: G updated by the gradient through D, D left unchanged."""

    number = 5
    seed: int = 0
    depth: int = 2
    batch: int = 5
    lr: float = 0.1
    device: str | None = None

    def _scenario(self) -> _GanScenario:
        return _GanScenario(self.seed, self.depth, self.batch, self.lr)

    def observe(self, fn) -> dict:
        return _observe_gan_step(self._scenario(), resolve_device(self.device), fn, "g")

    def judge(self, obs: dict) -> None:
        ex = self.heading
        loss = returned(ex, obs["call"], "g_step")
        G, D, z, _, stale_g, _ = self._scenario().build("cpu")
        logits = D(G(z))
        want_loss = F.binary_cross_entropy_with_logits(
            logits, trusted.ones(logits.shape, dtype=torch.float64)
        )
        grads = trusted.autograd_grad(want_loss, list(G.parameters()))
        require(ex, [*_float_result(loss, want_loss, "g_step"), _one_step(obs["steps"], "opt_g")])
        require(
            ex,
            [
                *_stepped(obs["G"], obs["steps"][0], G, grads, stale_g, self.lr, "G", None, "DT-5"),
                *_unchanged(obs["D"], D, "D"),
                *_caller_batches(obs, z, None),
            ],
        )


def check_g_step(
    fn, seed: int = 0, depth: int = 2, batch: int = 5, lr: float = 0.1, device=None
) -> None:
    verdict(GStep(seed, depth, batch, lr, None if device is None else str(device)), fn)


EXERCISES: tuple[Exercise, ...] = (
    Exercise(
        1,
        "frozen_copy",
        Text("a frozen copy, shared or independent", "冻结的副本：共享还是独立"),
        check_frozen_copy,
        ("DT-1", "DT-2"),
    ),
    Exercise(
        2,
        "detach_all",
        Text("detach_() where allowed, detach() on views", "能原地就 detach_()，视图用 detach()"),
        check_detach_all,
        ("DT-3",),
    ),
    Exercise(
        3,
        "normalised_and_grad",
        Text("an in-place change after the forward pass", "前向传播之后的原地修改"),
        check_normalised_and_grad,
        ("DT-2",),
    ),
    Exercise(
        4,
        "d_step",
        Text("the discriminator step", "判别器步"),
        check_d_step,
        ("DT-4", "DT-6"),
    ),
    Exercise(
        5,
        "g_step",
        Text("the generator step", "生成器步"),
        check_g_step,
        ("DT-5",),
    ),
)


def self_check(namespace: dict) -> list:
    """Run every exercise's visible checks against the notebook's namespace; print a summary."""
    return run_self_check(EXERCISES, namespace)
