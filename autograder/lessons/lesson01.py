"""Checks for lesson 01: requires_grad, leaves, and the graph.

Each check is an ``observe`` / ``judge`` pair (see autograder/common/protocol.py).
``observe`` builds inputs from a seed and calls the learner's function on several
of them — other shapes, dtypes and model depths than the prompt's example, with
callers' state that is not fresh (a stale ``.grad``, a model in eval mode) — and
keeps plain data. ``judge`` recomputes the inputs on the CPU, makes an independent
reference with trusted torch functions and compares. Hidden tests use other seeds
and sizes.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_leaves

from autograder.common import compare as c
from autograder.common import trusted
from autograder.common.exercise import Exercise
from autograder.common.i18n import Text
from autograder.common.inputs import resolve_device, uniform
from autograder.common.observation import Seen, snapshot
from autograder.common.protocol import Check, call, returned, verdict
from autograder.common.result import CheckResult, require
from autograder.kernel.selfcheck import run_self_check

# Shared helpers ------------------------------------------------------------------------------


def _at(name: str, case: str) -> str:
    """A value's name with the input it came from, written as code (the same in both languages)."""
    return f"{name} ⟨{case}⟩"


def _caller_unchanged(passed: bool, name: str, found: str | Text) -> CheckResult:
    """The caller's tensor or model must come back as it was handed over."""
    return CheckResult(
        Text("the caller's {name}: left as it was", "调用者的 {name}：保持原样").format(name=name),
        passed,
        Text("unchanged", "不变"),
        found,
    )


def _tensors_in(tree) -> list[torch.Tensor]:
    """Every tensor inside nested arguments or results (lists, tuples, dicts)."""
    return [leaf for leaf in tree_leaves(tree) if trusted.isinstance_(leaf, trusted.tensor_type)]


class _GraphFrom(TorchFunctionMode):
    """Names the torch functions called on the watched tensors that recorded a graph (or raised).

    Reading attributes such as ``requires_grad`` calls nothing here, and printing a
    tensor records no graph; running the operation whose result is to be predicted
    does one or the other.
    """

    def __init__(self, watched: list[torch.Tensor]):
        super().__init__()
        self.storages = {int(t.untyped_storage().data_ptr()) for t in watched}
        self.ops: list[str] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        tensors = _tensors_in((args, kwargs))
        reads = any(int(t.untyped_storage().data_ptr()) in self.storages for t in tensors)
        name = str(getattr(func, "__name__", "?"))
        try:
            out = func(*args, **kwargs)
        except Exception:
            if reads:
                self.ops.append(name)
            raise
        if reads and any(t.grad_fn is not None for t in _tensors_in(out)):
            self.ops.append(name)
        return out


_CONVERSIONS = frozenset("to cuda cpu double float half bfloat16 type".split())


class _Conversions(TorchFunctionMode):
    """Keeps every tensor a conversion method (``.to``, ``.double``...) made from one tensor."""

    def __init__(self, watched: torch.Tensor):
        super().__init__()
        self.watched = watched
        self.results: list[torch.Tensor] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = getattr(func, "__name__", "")
        if name in _CONVERSIONS and args and args[0] is self.watched:
            if trusted.isinstance_(out, trusted.tensor_type):
                self.results.append(out)
        return out


# Exercise 1 (RG-1) -------------------------------------------------------------------------


def _product_cases(size: int) -> list[tuple[int, torch.dtype]]:
    """(length, dtype) of a and b in each call: the size asked for, and a longer float64 pair."""
    return [(size, torch.float32), (size + 3, torch.float64)]


@dataclass(frozen=True)
class ProductGrads(Check):
    """y = ((a*b)**2).sum(): the learner returns a.grad, b.grad and c.grad for c = a*b.

    Called on two pairs of inputs (float32 and float64, two lengths), so that a
    hard-coded size or dtype shows; the caller's a and b must stay as they were.
    """

    number = 1
    seed: int = 0
    size: int = 5
    device: str | None = None

    def _inputs(self, k: int, n: int, dtype: torch.dtype, device) -> tuple[torch.Tensor, ...]:
        a = uniform(self.seed + 2 * k, n, device=device, dtype=dtype)
        b = uniform(self.seed + 2 * k + 1, n, device=device, dtype=dtype)
        return a, b

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        cases = []
        for k, (n, dtype) in enumerate(_product_cases(self.size)):
            a0, b0 = self._inputs(k, n, dtype, device)
            out = call(fn, a0, b0)
            cases.append({"call": out.record(), "a": snapshot(a0), "b": snapshot(b0)})
        return {"device": str(device), "cases": cases}

    def judge(self, obs: dict) -> None:
        cases = zip(_product_cases(self.size), obs["cases"], strict=True)
        for k, ((n, dtype), case) in enumerate(cases):
            self._judge_case(k, n, dtype, case, obs["device"])

    def _judge_case(self, k: int, n: int, dtype: torch.dtype, case: dict, device: str) -> None:
        ex = self.heading
        where = f"{dtype}, torch.Size([{n}])"
        out = returned(ex, case["call"], "product_grads")
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
                    # only when the leaves got their gradients: then c's is missing for being c's
                    "RG-1" if ga.is_tensor else None,
                ),
                c.is_tensor(ga, "a.grad"),
                c.is_tensor(gb, "b.grad"),
                *([c.is_tensor(gc, "c.grad")] if gc.kind != "none" else []),
            ],
        )
        a, b = (t.requires_grad_() for t in self._inputs(k, n, dtype, "cpu"))
        prod = a * b
        wanted = trusted.autograd_grad((prod**2).sum(), (a, b, prod))
        results = []
        for name, found, want in zip(
            ("a.grad", "b.grad", "c.grad"), out.items, wanted, strict=True
        ):
            results += [
                c.values(found, want, _at(name, where)),
                c.dtype(found, dtype, _at(name, where)),
                c.on_device(found, device, _at(name, where)),
            ]
        for name, original in (("a", a), ("b", b)):
            caller = Seen(case[name])
            unchanged = not caller.requires_grad and c.values(caller, original, name).passed
            found = f"requires_grad={caller.requires_grad}"
            results.append(_caller_unchanged(unchanged, name, found))
        require(ex, results)


def check_product_grads(fn, seed: int = 0, size: int = 5, device=None) -> None:
    verdict(ProductGrads(seed, size, None if device is None else str(device)), fn)


# Exercise 2 (RG-2) -------------------------------------------------------------------------


def _flag_cases(seed: int) -> list[tuple[bool, ...]]:
    """requires_grad flags of the inputs of each case (no two alike): fixed ones, random others."""
    g = trusted.generator().manual_seed(seed)
    cases = [(False, True), (False,), (True,)]
    for n_inputs in (2, 2, 3, 3, 4, 5):
        flags = tuple(bool(v) for v in trusted.randint(0, 2, (n_inputs,), generator=g))
        if flags not in cases:
            cases.append(flags)
    return cases


def _flag_inputs(flags: tuple[bool, ...], device) -> list[torch.Tensor]:
    """Tensors of different lengths (they do not broadcast together); some plain ones integer."""
    inputs = []
    for k, flag in enumerate(flags):
        if flag:
            inputs.append(torch.nn.Parameter(trusted.ones(k + 2, device=device)))
        else:
            dtype = torch.int64 if k % 2 else torch.float32
            inputs.append(trusted.ones(k + 2, device=device, dtype=dtype))
    return inputs


@dataclass(frozen=True)
class OutputRequiresGrad(Check):
    """Compare the learner's rule with what a real op does, for mixed inputs.

    The prompt asks for a prediction made without running an operation, so the
    operations the function runs on the inputs are recorded as well.
    """

    number = 2
    seed: int = 0
    device: str | None = None

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        answers = []
        for flags in _flag_cases(self.seed):
            inputs = _flag_inputs(flags, device)
            spy = _GraphFrom(inputs)
            with spy:
                out = call(fn, *inputs)
            answers.append(
                {
                    "call": out.record(),
                    "ops": list(dict.fromkeys(spy.ops))[:3],
                    "flags_after": [bool(t.requires_grad) for t in inputs],
                }
            )
        return {"answers": answers}

    def judge(self, obs: dict) -> None:
        ex = self.heading
        cases = list(zip(_flag_cases(self.seed), obs["answers"], strict=True))
        ops = next((answer["ops"] for _, answer in cases if answer["ops"]), [])
        require(
            ex,
            [
                CheckResult(
                    Text(
                        "output_requires_grad predicts without running an operation on the inputs",
                        "output_requires_grad 不对输入做运算就给出预测",
                    ),
                    not ops,
                    Text(
                        "no operation on the inputs: only their attributes",
                        "不对输入做运算：只读取它们的属性",
                    ),
                    Text("it ran {ops} on them", "它对输入运行了 {ops}").format(ops=", ".join(ops)),
                )
            ],
        )
        results = []
        for flags, answer in cases:
            predicted = returned(ex, answer["call"], "output_requires_grad")
            inputs = [trusted.ones(2).requires_grad_(flag) for flag in flags]
            actual = sum(inputs[1:], inputs[0]).requires_grad
            shown = ", ".join(str(f) for f in flags)
            # RG-2: a graph is recorded, and the answer let a plain input say otherwise
            rg2 = actual and not all(flags) and predicted.value is False
            results.append(
                CheckResult(
                    Text(
                        "output of an op on inputs with requires_grad = ({flags})",
                        "对 requires_grad = ({flags}) 的输入做运算后的输出",
                    ).format(flags=shown),
                    predicted.kind == "bool" and predicted.value is actual,
                    str(actual),
                    predicted.describe(),
                    "RG-2" if rg2 else None,
                )
            )
            results.append(
                _caller_unchanged(
                    answer["flags_after"] == list(flags),
                    "inputs",
                    f"requires_grad = {answer['flags_after']}",
                )
            )
        require(ex, results)


def check_output_requires_grad(fn, seed: int = 0, device=None) -> None:
    verdict(OutputRequiresGrad(seed, None if device is None else str(device)), fn)


# Exercise 3 (RG-3) -------------------------------------------------------------------------


def _rg3(message: str) -> str | None:
    return "RG-3" if "floating point" in message else None


def _integer_lists(seed: int) -> list[list]:
    """Nested lists of integers: 2-D of a random shape, 1-D, and 3-D."""
    g = trusted.generator().manual_seed(seed)
    rows, cols, length = (int(n) for n in trusted.randint(1, 6, (3,), generator=g))
    shapes = [(rows, cols), (length + 1,), (2, rows, 2)]
    return [trusted.randint(-9, 10, shape, generator=g).tolist() for shape in shapes]


def other_devices(device: str) -> list[str]:
    """The course device, then the CPU where the course device is a GPU.

    A function that uses the notebook's global ``DEVICE`` instead of its ``device``
    argument gets the right device whenever the two agree; asking for the CPU on a
    GPU machine is what shows it.
    """
    return [device] if torch.device(device).type == "cpu" else [device, "cpu"]


def _trainable_cases(seed: int, device: str) -> list[tuple[list, str]]:
    """(values, device) of each call: every shape on the course device, one on the CPU too."""
    lists = _integer_lists(seed)
    cases = [(values, device) for values in lists]
    return cases + [(lists[0], other) for other in other_devices(device)[1:]]


@dataclass(frozen=True)
class MakeTrainable(Check):
    """Integer data of several shapes must become a float32 leaf that requires grad."""

    number = 3
    seed: int = 0
    device: str | None = None

    def observe(self, fn) -> dict:
        device = str(resolve_device(self.device))
        calls = [
            call(fn, values, torch.device(where)).record()
            for values, where in _trainable_cases(self.seed, device)
        ]
        return {"device": device, "calls": calls}

    def judge(self, obs: dict) -> None:
        ex = self.heading
        cases = zip(_trainable_cases(self.seed, obs["device"]), obs["calls"], strict=True)
        for (values, device), record in cases:
            want = trusted.tensor(values, dtype=torch.float64)
            name = _at("t", f"{want.shape}, device={device!r}")
            t = returned(ex, record, "make_trainable", classify=_rg3)
            require(ex, [c.is_tensor(t, name)])
            require(
                ex,
                [
                    c.requires_grad(t, True, name),
                    c.dtype(t, torch.float32, name),
                    c.is_leaf(t, True, name),
                    c.on_device(t, device, name),
                    c.values(t, want, name),
                ],
            )


def check_make_trainable(fn, seed: int = 0, device=None) -> None:
    verdict(MakeTrainable(seed, None if device is None else str(device)), fn)


# Exercise 4 (RG-4) -------------------------------------------------------------------------

_GRAD_STATES = ("w.grad ≠ None", "w.grad = None")
# What each state means, shown beside the values it produced (the rendering is in the
# language feedback is being written in: the judge and the kernel set it first).
_GRAD_STATE_TEXT = {
    _GRAD_STATES[0]: Text("w.grad held an old gradient", "w.grad 里已有旧梯度"),
    _GRAD_STATES[1]: Text("w.grad was None", "w.grad 为 None"),
}


@dataclass(frozen=True)
class PerBatchGrads(Check):
    """Each entry must be the gradient of that batch alone, not a running sum.

    Called twice: once with a gradient already in ``w.grad`` (as after an earlier
    step), so forgetting to reset it shows from the first batch, and once with
    ``w.grad`` None (a fresh parameter). Batches have different numbers of rows.
    """

    number = 4
    seed: int = 0
    batches: int = 3
    dim: int = 4
    dtype: str = "float32"
    device: str | None = None

    def _inputs(self, device) -> tuple[torch.Tensor, list[torch.Tensor], torch.Tensor]:
        dtype = getattr(torch, self.dtype)
        w = uniform(self.seed, self.dim, device=device, dtype=dtype)
        xs = [
            uniform(self.seed + 10 + k, 3 + (2 * k) % 5, self.dim, device=device, dtype=dtype)
            for k in range(self.batches)
        ]
        stale = uniform(self.seed + 5, self.dim, device=device, dtype=dtype)
        return w, xs, stale

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        cases = []
        for state in _GRAD_STATES:
            w0, xs, stale = self._inputs(device)
            w = torch.nn.Parameter(w0)
            w.grad = stale if state == _GRAD_STATES[0] else None
            out = call(fn, w, xs)
            cases.append({"call": out.record(), "w": snapshot(w)})
        return {"device": str(device), "cases": cases}

    def judge(self, obs: dict) -> None:
        w, xs, stale = self._inputs("cpu")
        w.requires_grad_()
        wanted = [trusted.autograd_grad(((x @ w) ** 2).mean(), w)[0] for x in xs]
        for state, case in zip(_GRAD_STATES, obs["cases"], strict=True):
            start = stale if state == _GRAD_STATES[0] else trusted.zeros(self.dim)
            self._judge_case(state, case, w.detach(), wanted, start, obs["device"])

    def _judge_case(self, state, case, w, wanted, start, device) -> None:
        ex = self.heading
        found = returned(ex, case["call"], "per_batch_grads")
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
        running = start.to(torch.float64)
        for k, (g, want) in enumerate(zip(grads, wanted, strict=True)):
            running = running + want.to(torch.float64)
            summed = k > 0 or state == _GRAD_STATES[0]
            summed = summed and bool(
                trusted.allclose(g.value.to(torch.float64), running, rtol=1e-5, atol=1e-6)
            )
            name = _at(f"grads[{k}]", _GRAD_STATE_TEXT[state]())
            results += [
                c.values(g, want, name, misconception="RG-4" if summed else None),
                c.dtype(g, getattr(torch, self.dtype), name),
                c.on_device(g, device, name),
            ]
        caller = Seen(case["w"])
        results.append(
            _caller_unchanged(
                caller.requires_grad and c.values(caller, w, "w", rtol=0, atol=0).passed,
                "w",
                Text("changed", "已改变"),
            )
        )
        require(ex, results)


def check_per_batch_grads(
    fn, seed: int = 0, batches: int = 3, dim: int = 4, dtype=torch.float32, device=None
) -> None:
    name = str(dtype).removeprefix("torch.")
    check = PerBatchGrads(seed, batches, dim, name, None if device is None else str(device))
    verdict(check, fn)


# Exercise 5 (RG-5) -------------------------------------------------------------------------


def _rg5(message: str) -> str | None:
    return "RG-5" if "Mismatch in shape" in message else None


def _grad_from_seed(loss: torch.Tensor, x: torch.Tensor, seed: torch.Tensor) -> torch.Tensor:
    """What loss.backward(gradient=seed) would put in x.grad, without touching x.grad."""
    return trusted.autograd_grad(loss, x, grad_outputs=seed)[0]


def _seed_dtypes(dtype: str) -> list[str]:
    """The dtype asked for, then another one: autograd casts a seed of any dtype."""
    return [dtype, "float32" if dtype == "float64" else "float64"]


@dataclass(frozen=True)
class BackwardSeed(Check):
    """The seed must make backward(gradient=seed) do what backward() does.

    Called on losses of two dtypes. Autograd converts a 0-dim seed to the loss's
    dtype and device, so only the seed's shape and value matter; the function
    must not run backward itself (the caller's leaf keeps ``.grad`` None).
    """

    number = 5
    seed: int = 0
    dtype: str = "float32"
    device: str | None = None

    def _input(self, dtype: str, device) -> torch.Tensor:
        return uniform(self.seed, 5, device=device, dtype=getattr(torch, dtype))

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        cases = []
        for dtype in _seed_dtypes(self.dtype):
            x = self._input(dtype, device).requires_grad_()
            loss = (x.sin() * x).sum()
            out = call(fn, loss)
            case = {"call": out.record(), "grad_untouched": x.grad is None}
            if out.ok:
                case["effect"] = call(_grad_from_seed, loss, x, out.value).record()
            cases.append(case)
        return {"cases": cases}

    def judge(self, obs: dict) -> None:
        ex = self.heading
        for dtype, case in zip(_seed_dtypes(self.dtype), obs["cases"], strict=True):
            s = returned(ex, case["call"], "backward_seed")
            require(ex, [c.is_tensor(s, "seed")])
            require(
                ex,
                [
                    c.shape(s, (), "seed", misconception="RG-5"),
                    CheckResult(
                        Text(
                            "backward_seed does not run backward itself",
                            "backward_seed 自己不运行反向传播",
                        ),
                        case["grad_untouched"],
                        Text("x.grad is None after your function", "函数返回后 x.grad 为 None"),
                        Text("x.grad was filled", "x.grad 已被填充"),
                    ),
                ],
            )
            x = self._input(dtype, "cpu").requires_grad_()
            (want,) = trusted.autograd_grad((x.sin() * x).sum(), x)
            found = returned(ex, case["effect"], "loss.backward(gradient=seed)", classify=_rg5)
            name = _at("x.grad", f"loss.dtype=torch.{dtype}")
            require(ex, [c.values(found, want, name), c.values(s, trusted.ones(()), "seed")])


def check_backward_seed(fn, seed: int = 0, dtype=torch.float32, device=None) -> None:
    name = str(dtype).removeprefix("torch.")
    verdict(BackwardSeed(seed, name, None if device is None else str(device)), fn)


# Exercise 6 (RG-6) -------------------------------------------------------------------------


def make_mlp(seed: int, depth: int = 2, width: int = 8, device="cpu") -> torch.nn.Sequential:
    """An MLP with ``depth`` Linear layers and fixed weights (4 inputs, 3 outputs).

    Built without touching the global random generator (``skip_init``), so that
    a check does not change the learner's random numbers.
    """
    g = trusted.generator().manual_seed(seed)
    sizes = [4, *[width] * (depth - 1), 3]
    layers: list[torch.nn.Module] = []
    for k, (n_in, n_out) in enumerate(zip(sizes, sizes[1:], strict=False)):
        linear = torch.nn.utils.skip_init(torch.nn.Linear, n_in, n_out)
        with trusted.no_grad():
            linear.weight.copy_(trusted.rand(n_out, n_in, generator=g) - 0.5)
            linear.bias.copy_(trusted.rand(n_out, generator=g) - 0.5)
        layers.append(linear)
        if k < depth - 1:
            layers.append(torch.nn.Tanh())
    return torch.nn.Sequential(*layers).to(device)


def _finetune_cases(depth: int) -> list[tuple[int, int, bool]]:
    """(depth, width, arrives in train mode): the depth asked for, then a deeper model in eval."""
    return [(depth, 8, True), (depth + 1, 5, False)]


@dataclass(frozen=True)
class FinetuneLastLayer(Check):
    """One SGD step must change the last layer only, by the right amount.

    Called on two models of different depths (so the last layer sits at a
    different index), one in train mode and one in eval mode. Both arrive with
    stale gradients in every ``.grad`` (as after an earlier step), so a step that
    does not zero them first is wrong. The model's mode must be left as it was.
    """

    number = 6
    seed: int = 0
    lr: float = 0.1
    depth: int = 2
    device: str | None = None

    def _inputs(self, k: int, depth: int, width: int, device):
        model = make_mlp(self.seed + 100 * k, depth, width, device=device)
        x = uniform(self.seed + 100 * k + 1, 10, 4, device=device)
        target = uniform(self.seed + 100 * k + 2, 10, 3, device=device)
        return model, x, target

    def observe(self, fn) -> dict:
        device = resolve_device(self.device)
        cases = []
        for k, (depth, width, training) in enumerate(_finetune_cases(self.depth)):
            model, x, target = self._inputs(k, depth, width, device)
            model.train(training)
            for j, p in enumerate(model.parameters()):
                p.grad = uniform(self.seed + 20 + j, *p.shape, device=p.device)
            out = call(fn, model, x, target, self.lr)
            cases.append(
                {
                    "call": out.record(),
                    "params": {name: snapshot(p) for name, p in model.named_parameters()},
                    "training": [bool(m.training) for m in model.modules()],
                }
            )
        return {"cases": cases}

    def judge(self, obs: dict) -> None:
        cases = zip(_finetune_cases(self.depth), obs["cases"], strict=True)
        for k, ((depth, width, training), case) in enumerate(cases):
            self._judge_case(k, depth, width, training, case)

    def _judge_case(self, k: int, depth: int, width: int, training: bool, case: dict) -> None:
        ex = self.heading
        loss = returned(ex, case["call"], "finetune_last_layer")
        model, x, target = self._inputs(k, depth, width, "cpu")
        reference = copy.deepcopy(model)
        loss_ref = torch.nn.functional.mse_loss(reference(x), target)
        last = dict(reference[-1].named_parameters())
        grads = dict(zip(last, trusted.autograd_grad(loss_ref, list(last.values())), strict=True))
        last_index = str(len(model) - 1)
        where = f"len(model)={len(model)}, model.training={training}"
        results = [
            CheckResult(
                Text("the returned loss is a Python float", "返回的损失是 Python float"),
                loss.kind == "float",
                "float",
                loss.describe(),
            )
        ]
        if loss.kind == "float":
            name = _at("loss", where)
            results.append(c.values(trusted.tensor(loss.value), loss_ref.detach(), name, rtol=1e-4))
        params = case["params"]
        still_trainable = [
            Seen(found).requires_grad
            for name, found in params.items()
            if not name.startswith(f"{last_index}.")
        ]
        # RG-6 only where no parameter was frozen at all (freezing was put somewhere else);
        # a wrong layer frozen is a wrong index, not that misconception
        rg6 = "RG-6" if still_trainable and all(still_trainable) else None
        for name, p in model.named_parameters():
            found = Seen(params.get(name, {"kind": "none"}))
            layer, _, leaf = name.partition(".")
            shown = _at(f"model.{name}", where)
            if layer == last_index:
                want = p.detach() - self.lr * grads[leaf]
                results.append(c.requires_grad(found, True, shown))
                results.append(c.values(found, want, shown, rtol=1e-4))
                continue
            results.append(c.requires_grad(found, False, shown, rg6))
            unchanged = c.values(found, p.detach(), shown, rtol=0, atol=0)
            results.append(
                CheckResult(
                    Text("{name} is unchanged by the step", "{name} 在这一步之后保持不变").format(
                        name=shown
                    ),
                    unchanged.passed,
                    Text("unchanged", "不变"),
                    Text(
                        "changed (a stale .grad left from before? zero the gradients first)",
                        "已改变（是之前遗留在 .grad 里的梯度吗？先把梯度清零）",
                    )
                    if not found.requires_grad
                    else Text("changed", "已改变"),
                )
            )
        modes = case["training"]
        results.append(
            CheckResult(
                Text(
                    "the model's train/eval mode is left as it arrived",
                    "模型的 train/eval 模式保持传入时的状态",
                ),
                all(flag is training for flag in modes),
                f"model.training={training}",
                Text("modes of the submodules: {m}", "各子模块的模式：{m}").format(m=modes),
            )
        )
        require(ex, results)


def check_finetune_last_layer(
    fn, seed: int = 0, lr: float = 0.1, depth: int = 2, device=None
) -> None:
    verdict(FinetuneLastLayer(seed, lr, depth, None if device is None else str(device)), fn)


# Exercise 7 (RG-7) -------------------------------------------------------------------------


def _seeded_linear(seed: int, dtype: torch.dtype) -> torch.nn.Linear:
    """A Linear(4, 2) with fixed weights, built without touching the global generator."""
    g = trusted.generator().manual_seed(seed)
    linear = torch.nn.utils.skip_init(torch.nn.Linear, 4, 2, dtype=dtype)
    with trusted.no_grad():
        linear.weight.copy_(trusted.rand(2, 4, generator=g) - 0.5)
        linear.bias.copy_(trusted.rand(2, generator=g) - 0.5)
    return linear


def _move_cases(dtype: str, device: str) -> list[tuple[str, torch.dtype, str, torch.dtype]]:
    """(device and dtype the batch and model arrive in, device and dtype asked for).

    First from the CPU in float32 to the course device in the dtype asked for, then
    from the course device in float64 to float32 — on the CPU where the course device
    is a GPU — so that every conversion really has to happen somewhere.
    """
    return [
        ("cpu", torch.float32, device, getattr(torch, dtype)),
        (device, torch.float64, other_devices(device)[-1], torch.float32),
    ]


@dataclass(frozen=True)
class ToDevice(Check):
    """Batch and model must both end up on the device and in the dtype asked for.

    Called twice with different dtypes and devices, so a hard-coded dtype or a
    dropped ``.to`` result shows even on a CPU-only machine, and an ignored device
    argument (or the global ``DEVICE``) on a GPU machine. RG-7 is named only when
    the function made a converted copy of the batch and returned the original.
    """

    number = 7
    seed: int = 0
    dtype: str = "float64"
    device: str | None = None

    def _inputs(self, k: int, device: str, dtype: torch.dtype):
        batch = uniform(self.seed + k, 3, 4, device=device, dtype=dtype)
        return batch, _seeded_linear(self.seed + k, dtype).to(device)

    def observe(self, fn) -> dict:
        device = str(resolve_device(self.device))
        cases = []
        for k, (start, start_dtype, target, wanted) in enumerate(_move_cases(self.dtype, device)):
            batch, model = self._inputs(k, start, start_dtype)
            spy = _Conversions(batch)
            with spy:
                out = call(fn, batch, model, torch.device(target), wanted)
            is_pair = out.ok and trusted.type_(out.value) is tuple and trusted.len_(out.value) == 2
            moved = out.value[0] if is_pair else None
            returned_params = {}
            if is_pair and trusted.isinstance_(out.value[1], trusted.module_type):
                returned_params = {n: snapshot(p) for n, p in out.value[1].named_parameters()}
            cases.append(
                {
                    "call": out.record(),
                    "same_batch": bool(is_pair and moved is batch),
                    "dropped_copy": any(r is not batch and r is not moved for r in spy.results),
                    "returned_params": returned_params,
                    "caller_batch": snapshot(batch),
                }
            )
        return {"device": device, "cases": cases}

    def judge(self, obs: dict) -> None:
        cases = zip(_move_cases(self.dtype, obs["device"]), obs["cases"], strict=True)
        for k, (move, case) in enumerate(cases):
            self._judge_case(k, move, case)

    def _judge_case(self, k: int, move: tuple, case: dict) -> None:
        ex = self.heading
        start, start_dtype, target, wanted = move
        out = returned(ex, case["call"], "to_device")
        require(ex, [c.returns_tuple(out, 2, "(batch, model)")])
        moved, moved_model = out.items
        where = f"{start!r}, {start_dtype} → {target!r}, {wanted}"
        require(ex, [c.is_tensor(moved, _at("batch", where))])
        batch, model = self._inputs(k, "cpu", start_dtype)
        rg7 = "RG-7" if case["same_batch"] and case["dropped_copy"] else None
        # values within the rounding of the dtype asked for: a wrong dtype has its own check
        eps = float(torch.finfo(wanted).eps)
        caller = Seen(case["caller_batch"])
        require(
            ex,
            [
                c.dtype(moved, wanted, _at("batch", where), rg7),
                c.on_device(moved, target, _at("batch", where), rg7),
                c.values(moved, batch.to(wanted), _at("batch", where), rtol=eps, atol=0),
                _caller_unchanged(
                    caller.dtype == start_dtype and c.on_device(caller, start, "batch").passed,
                    "batch",
                    f"{caller.device}, {caller.dtype}",
                ),
                CheckResult(
                    Text("the returned model is a torch.nn.Module", "返回的模型是 torch.nn.Module"),
                    moved_model.kind == "module",
                    "nn.Module",
                    moved_model.describe(),
                ),
            ],
        )
        results = []
        for name, p in model.named_parameters():
            found = Seen(case["returned_params"].get(name, {"kind": "none"}))
            shown = _at(f"model.{name}", where)
            results += [
                c.dtype(found, wanted, shown),
                c.on_device(found, target, shown),
                c.values(found, p.detach().to(wanted), shown, rtol=eps, atol=0),
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
