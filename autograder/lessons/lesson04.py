"""Checks for lesson 04: detach, detach_, .data, and detach in GAN training.

Each check is a :class:`~autograder.common.oracle.Spec`: its seed draws caller states
(contiguous, transposed, sliced, 0-d or leaf tensors; bfloat16; models arriving in
training, evaluation or mixed mode, with a frozen layer, with stale, zero or no
``.grad``; SGD, momentum or Adam; a discriminator whose logits are far past where
BCE of a sigmoid saturates), the learner's function and the reference run in
identical worlds, and everything the caller can see afterwards is compared. Probes
then test what a tensor is tied to: an in-place change made through the result, and
backward through the caller's graph afterwards.

This module runs beside learner code (the learner's kernel, the grading sandbox's
observer) and holds no answer: it builds each case's world, calls the learner's
function, records what a caller sees and compares. The references are in
:mod:`autograder.references.lesson04`, which only the judge imports; the learner's
kernel compares with their states shipped in
``autograder/lessons/expected/lesson04.wire``. Where a rule needs more than the
reference's state, it reads a fact the reference records: ``other order``, D's running
statistics after its two calls in the other order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import torch

from autograder.common import trusted
from autograder.common.caller_states import (
    GROUPS,
    grouped,
    leave_grads,
    set_mode,
    stepped_before,
    with_callers_context,
    with_groups,
)
from autograder.common.caller_states import MODES as _MODES
from autograder.common.caller_states import STALE as _STALE
from autograder.common.exercise import numbered
from autograder.common.i18n import Text
from autograder.common.inputs import laid_out, uniform
from autograder.common.optimizer_steps import OPTIMIZERS, grads_at_step, stale_added
from autograder.common.oracle import (
    TOLERANCE,
    Rule,
    Spec,
    World,
    close,
    differs_only_in,
    draw,
    is_zero_or_none,
    pick,
)
from autograder.common.protocol import call, checker
from autograder.common.recorded import TENSORS, cpu_copy, dotted
from autograder.kernel.selfcheck import self_checker


def _shares_t(found: dict) -> bool:
    return "t" in found.get("shares", "").split(", ")


# Exercise 1 (DT-1, DT-2) -------------------------------------------------------------------

_LAYOUTS = {
    "exp": ("t = w.exp()", lambda w: w.exp()),
    "leaf": (Text("t is a leaf", "t 是叶子张量"), lambda w: w),
    "transposed": (
        Text("t = w.exp().t(), not contiguous", "t = w.exp().t()，不连续"),
        lambda w: w.exp().t(),
    ),
    "slice": (
        Text(
            "t = w.exp()[1:-1], a view into a larger storage", "t = w.exp()[1:-1]，更大存储的视图"
        ),
        lambda w: w.exp()[1:-1],
    ),
    "scalar": (Text("t = w.exp() with shape ()", "t = w.exp()，形状为 ()"), lambda w: w.exp()),
    # not drawn: rows sharing memory (stride 0) are a case of their own
    "expanded": ("t = w.exp().expand(3, -1)", lambda w: w.exp().expand(3, -1)),
}
_W_SHAPE = {"exp": (0,), "leaf": (0,), "transposed": (0, 2), "slice": (2,), "scalar": ()}
_W_SHAPE["expanded"] = (0,)


@dataclass(frozen=True)
class FrozenCopy(Spec):
    """frozen_copy(t, share): no history; shares t's storage and version, or is independent."""

    number = 1
    seed: int = 0
    size: int = 5
    dtype: str = "float64"
    device: str | None = None

    probes = {
        "t_after_copy_changed": Text(
            "t after an in-place change of the copy", "原地修改副本之后的 t"
        ),
        "backward_raises": Text(
            "backward through t raises after the copy was changed in place",
            "原地修改副本之后，经过 t 的反向传播报错",
        ),
        "copy_after_t_changed": Text(
            "the copy after an in-place change of t", "原地修改 t 之后的副本"
        ),
    }
    names = {
        "result": "frozen_copy(t, share)",
        "probe:t_after_copy_changed": "t",
        "probe:copy_after_t_changed": "frozen_copy(t, share)",
    }
    blame = (
        Rule("result", lambda e, f, ctx: not ctx.case["share"] and _shares_t(f), "DT-1"),
        Rule(
            "probe:*",
            lambda e, f, ctx: not ctx.case["share"] and _shares_t(ctx.found.get("result", {})),
            "DT-1",
        ),
        Rule(
            "probe:backward_raises",
            lambda e, f, ctx: _shares_t(ctx.found.get("result", {})),
            "DT-2",
        ),
    )

    def cases(self) -> list[dict]:
        other = "float32" if self.dtype == "float64" else "float64"
        axes = {
            "share": [True, False],
            "layout": [k for k in _LAYOUTS if k != "expanded"],
            "dtype": [self.dtype, other, "bfloat16"],
        }
        drawn = draw(self.seed, axes, 10)
        # a caller inside torch.no_grad(); an independent copy of an expanded t
        outer, expanded = {**drawn[0], "grad_mode": False}, {**drawn[1], "layout": "expanded"}
        column = {**drawn[2], "layout": "transposed", "size": 1}  # t of shape (2, 1)
        return [*drawn, outer, {**expanded, "share": False}, column]

    def again_cases(self) -> list[dict]:
        """A shared copy and an independent copy, each made twice in one world: a handle or a
        copy kept per tensor (by its id) comes back the second time, stale or with what the
        caller did to it since."""
        cases = self.cases()
        return [next(c for c in cases if c["share"] is share) for share in (True, False)]

    def describe(self, case: dict) -> Text:
        text = Text("share={s}, {l}, dtype {d}", "share={s}，{l}，数据类型 {d}").format(
            s=case["share"], l=_LAYOUTS[case["layout"]][0], d=case["dtype"]
        )
        if case.get("size"):
            text = Text("{t}, w of shape (1, 2)", "{t}，w 的形状为 (1, 2)").format(t=text)
        return with_callers_context(text, case)

    def build(self, case: dict, device) -> World:
        shape = tuple(n or case.get("size", self.size) for n in _W_SHAPE[case["layout"]])
        w = uniform(self.seed, *shape, device=device, dtype=getattr(torch, case["dtype"]))
        w.requires_grad_()
        t = _LAYOUTS[case["layout"]][1](w)
        objects = {"t": t} if t is w else {"t": t, "w": w}
        world = World((t, case["share"]), objects, device)
        world.head, world.leaf = (t * t).sum(), w  # backward needs t's values
        world.writable = case["layout"] != "expanded"  # rows of one memory: nothing changes
        return world

    def probe(self, world: World, value, again) -> dict:
        if trusted.type_(value) not in TENSORS:
            return {}
        t = world.objects["t"]
        found: dict = {}
        if world.writable:
            with trusted.no_grad():
                value.add_(0.5)
            found["t_after_copy_changed"] = cpu_copy(t)
            backward = call(lambda: trusted.autograd_grad(world.head, world.leaf))
            found["backward_raises"] = not backward.ok
        world2, value2 = again()
        if trusted.type_(value2) in TENSORS:
            t2 = world2.objects["t"]
            with trusted.no_grad():  # through the base of a view (an expanded t cannot)
                (t2 if t2._base is None else t2._base).add_(0.25)
            found["copy_after_t_changed"] = cpu_copy(value2)
        return found


check_frozen_copy = checker(FrozenCopy)


# Exercise 2 (DT-3) -------------------------------------------------------------------------

# Tensors made from a leaf w of shape (4, 6): views first, then tensors that are not views.
_LEAF_VIEW = "w.detach()[1:].requires_grad_()"
_VIEWS = {
    "(w * 3)[1:]": lambda w: (w * 3)[1:],
    "(w + 1).t()": lambda w: (w + 1).t(),
    "(w * 2).unsqueeze(0)": lambda w: (w * 2).unsqueeze(0),
    "w[0]": lambda w: w[0],
    "(w * 2).permute(1, 0)": lambda w: (w * 2).permute(1, 0),
    "(w - 1).chunk(2)[1]": lambda w: (w - 1).chunk(2)[1],
    "(w * 2).narrow(1, 1, 3)": lambda w: (w * 2).narrow(1, 1, 3),
    "(w + 2).diagonal()": lambda w: (w + 2).diagonal(),
    "(w * 4).view(-1)": lambda w: (w * 4).view(-1),
    "(w * 5)[:, ::2]": lambda w: (w * 5)[:, ::2],
    _LEAF_VIEW: lambda w: w.detach()[1:].requires_grad_(),  # a view and a leaf at once
}
_LEAF = "w.detach().clone().requires_grad_()"
_NOT_VIEWS = {
    "w * 2": lambda w: w * 2,
    "w.exp()": lambda w: w.exp(),
    "w.sum(0)": lambda w: w.sum(0),
    _LEAF: lambda w: w.detach().clone().requires_grad_(),
    "(w * 2).t().reshape(-1)": lambda w: (w * 2).t().reshape(-1),
    "(w + 1).t().contiguous()": lambda w: (w + 1).t().contiguous(),
    "(w * 3).sum()": lambda w: (w * 3).sum(),
}
_MAKERS = {**_VIEWS, **_NOT_VIEWS}


def _order(seed: int, names: list[str]) -> list[str]:
    g = trusted.generator().manual_seed(seed)
    return [names[int(i)] for i in trusted.rand(len(names), generator=g).argsort()]


@dataclass(frozen=True)
class DetachAll(Spec):
    """detach_all(tensors): detach_() where allowed (same object), detach() on views."""

    number = 2
    seed: int = 0
    count: int = 5
    dtype: str = "float64"
    device: str | None = None

    names = {"result": "detach_all(tensors)"}
    blame = (Rule("probe:versions*", lambda e, f, ctx: _same_storage(ctx), "DT-2"),)

    def cases(self) -> list[dict]:
        views = _order(self.seed, list(_VIEWS))
        plain = _order(self.seed + 1, list(_NOT_VIEWS))
        n_views = max(min(self.count // 2, len(views)), 1)
        mixed = _order(self.seed + 2, views[:n_views] + plain[: max(self.count - n_views, 1)])
        single = pick(self.seed, [views[n_views:][:1], plain[-1:]])
        other = [*plain[-2:], views[-1]]
        if not any(_LEAF in items for items in (mixed, single, other)):
            other = [_LEAF, *other[1:]]  # a leaf in every draw: detach_() keeps its .grad
        if not any("w[0]" in items for items in (mixed, single, other)):
            other = [*other[:2], "w[0]"]  # a view of the caller's w itself: its _base is w
        if not any(_LEAF_VIEW in items for items in (mixed, single, other)):
            single = [_LEAF_VIEW]  # a leaf that is a view: detach_() refuses it too
        dtypes = [self.dtype, "bfloat16", "float32"]
        drawn = [
            {"items": items, "dtype": d}
            for items, d in zip((mixed, single, other), dtypes, strict=True)
        ]
        return [*drawn, {**drawn[1], "shared": True}]  # two views that start at one element

    def describe(self, case: dict) -> Text:
        text = Text("tensors = [{t}], dtype {d}", "tensors = [{t}]，数据类型 {d}").format(
            t=", ".join(case["items"]), d=case["dtype"]
        )
        if _LEAF in case["items"]:
            text = Text(f"{text.en}, the leaf with a .grad", f"{text.zh}，其中的叶子张量带有 .grad")
        if case.get("shared"):
            text = Text(
                f"{text.en}, then h[0] and h[:2] of one h = w * 6 (same first element), then"
                " tensors[0] again",
                f"{text.zh}，随后是同一个 h = w * 6 的 h[0] 和 h[:2]（首元素相同），"
                "再是 tensors[0]",
            )
        return text

    def build(self, case: dict, device) -> World:
        w = uniform(self.seed, 4, 6, device=device, dtype=getattr(torch, case["dtype"]))
        w.requires_grad_()
        tensors = [_MAKERS[name](w) for name in case["items"]]
        if case.get("shared"):
            h = w * 6
            tensors += [h[0], h[:2], tensors[0]]
        for k, t in enumerate(tensors):  # a leaf the caller backpropagated into: .grad kept
            if t.is_leaf:
                t.grad = uniform(self.seed + 50 + k, *t.shape, device=device, dtype=t.dtype)
        objects = {"w": w, **{f"tensors[{k}]": t for k, t in enumerate(tensors)}}
        return World((list(tensors),), objects, device)

    def probe(self, world: World, value, again) -> dict:
        """Which caller tensors see an in-place change made through each result (versions)."""
        if trusted.type_(value) is not list:
            return {}
        found = {}
        for k, item in enumerate(value[:16]):
            if trusted.type_(item) in TENSORS:
                before = {n: t._version for n, t in world.tensors()}
                with trusted.no_grad():
                    item.add_(0)
                changed = [n for n, t in world.tensors() if t._version != before[n]]
                found[f"versions[{k}]"] = ", ".join(changed)
        return found

    def probe_text(self, name: str) -> Text:
        k = name.removeprefix("versions[").rstrip("]")
        return Text(
            "caller tensors whose version counter result[{k}] shares (autograd sees changes)",
            "与 result[{k}] 共享版本计数器的调用者张量（自动求导看得到修改）",
        ).format(k=k)

    def classify(self, message: str) -> str | None:
        return "DT-3" if "detach views in-place" in message else None


def _same_storage(ctx) -> bool:
    """The result item of a version probe shares the storage it should (as .data does)."""
    item = "result" + ctx.base.removeprefix("probe:versions")
    return ctx.found.get(item, {}).get("shares") == ctx.expected.get(item, {}).get("shares")


check_detach_all = checker(DetachAll)


# Exercise 3 (DT-2) -------------------------------------------------------------------------

_X_LAYOUTS = {
    "plain": Text("x contiguous", "x 连续"),
    "transposed": Text("x transposed (not contiguous)", "x 是转置（不连续）"),
    "slice": Text("x a view into a larger storage", "x 是更大存储的视图"),
}


def _normalised_dt2(e: dict, f: dict, ctx) -> bool:
    """grad as exp's backward computes it after its output was normalised in place."""
    p, x = ctx.expected["result[0]"].get("value"), ctx.before["x"].get("value")
    if trusted.type_(f.get("value")) not in TENSORS or p is None:
        return False
    hidden = x.to(torch.float64).t() @ p.to(torch.float64)
    return close(f["value"].to(torch.float64), hidden, (1e-3, 1e-4))


@dataclass(frozen=True)
class NormalisedAndGrad(Spec):
    """p = out / out.sum() without history, and d(out.sum())/dw, for out = exp(x @ w)."""

    number = 3
    seed: int = 0
    rows: int = 6
    dim: int = 4
    dtype: str = "float64"
    device: str | None = None

    names = {"result": "normalised_and_grad(w, x)", "result[0]": "p", "result[1]": "grad"}
    inference_compared = True  # p is an ordinary tensor: the caller may scale it in place
    allow = (
        Rule("w.grad"),  # filling w.grad is fine
        Rule("result[1]", differs_only_in("is", "shares", "requires_grad", "grad_fn")),
    )
    blame = (Rule("result[1]", _normalised_dt2, "DT-2"),)

    def cases(self) -> list[dict]:
        other = "float32" if self.dtype == "float64" else "float64"
        axes = {"x": list(_X_LAYOUTS), "rows": [self.rows, 1], "dtype": [self.dtype, other]}
        return draw(self.seed, axes, 4)

    def describe(self, case: dict) -> Text:
        return Text("x of shape ({n}, {d}), {x}, {t}", "x 的形状为 ({n}, {d})，{x}，{t}").format(
            n=case["rows"], d=self.dim, x=_X_LAYOUTS[case["x"]], t=case["dtype"]
        )

    def build(self, case: dict, device) -> World:
        dtype, n, d = getattr(torch, case["dtype"]), case["rows"], self.dim
        w = uniform(self.seed, d, device=device, dtype=dtype).requires_grad_()
        x = laid_out(self.seed + 1, n, d, case["x"], device, dtype)
        return World((w, x), {"w": w, "x": x}, device)


check_normalised_and_grad = checker(NormalisedAndGrad)


# Exercises 4 and 5: the GAN steps (DT-4, DT-5, DT-6) ---------------------------------------

_BN = torch.nn.BatchNorm1d


def make_gan(
    seed: int,
    depth: int,
    dtype: torch.dtype,
    device="cpu",
    d_norm: bool = False,
    images: bool = False,
):
    """G (Linear → BatchNorm1d → ReLU blocks, then a Sigmoid for even seeds, so its samples
    are not always in [0, 1]) and D (Linear → LeakyReLU), seeded.

    G's Linear layers before a BatchNorm have no bias, as DCGAN builds them: in training
    mode the BatchNorm subtracts the batch mean, so such a bias would get a gradient that
    is zero but for rounding noise, which Adam turns into a step of up to lr whose sign the
    order of a sum picks, and which the next call's running mean would then carry.

    With ``d_norm``, D starts with a BatchNorm1d over its input samples: in training mode it
    normalises each batch by that batch's statistics, so real and fake sent through D as one
    batch share statistics that two calls D(real), D(fake) keep apart. With ``images``, G
    ends by shaping its samples as 2×3 images (an Unflatten, as a generator's ``view`` does:
    its output is a view, which ``detach_()`` refuses) and D starts by flattening them.
    """
    g = trusted.generator().manual_seed(seed)

    def mlp(sizes: list[int], block, last, first=(), normed=False) -> torch.nn.Sequential:
        layers: list[torch.nn.Module] = list(first)
        for k, (n_in, n_out) in enumerate(zip(sizes, sizes[1:], strict=False)):
            hidden = k < len(sizes) - 2
            layers.append(torch.nn.Linear(n_in, n_out, bias=not (normed and hidden), dtype=dtype))
            layers += block(n_out) if hidden else [last()]
        model = torch.nn.Sequential(*layers)
        with trusted.no_grad():
            for p in model.parameters():
                p.copy_(trusted.rand(p.shape, generator=g, dtype=dtype) - 0.5)
            for m in model.modules():
                if trusted.isinstance_(m, _BN):
                    m.running_mean.copy_(trusted.rand(m.num_features, generator=g) - 0.5)
                    m.running_var.copy_(0.5 + trusted.rand(m.num_features, generator=g))
                    m.weight.add_(1)
        return model.to(device)

    inner = [8] * (depth - 1)
    G = mlp(
        [3, *inner, 6],
        lambda n: [_BN(n, dtype=dtype), torch.nn.ReLU()],
        torch.nn.Sigmoid if seed % 2 == 0 else torch.nn.Identity,
        normed=True,
    )
    first = [torch.nn.Flatten()] if images else []
    first += [_BN(6, dtype=dtype)] if d_norm else []
    D = mlp([6, *inner, 1], lambda n: [torch.nn.LeakyReLU(0.2)], torch.nn.Identity, first)
    if images:
        G.append(torch.nn.Unflatten(1, IMAGE))
    return G, D


IMAGE = (2, 3)  # the shape of one sample in the cases that draw images


def first_linear(model: torch.nn.Sequential) -> int:
    """The index of the model's first Linear (D's is 1 where it first flattens images)."""
    return next(k for k, m in enumerate(model) if trusted.isinstance_(m, torch.nn.Linear))


_LOGITS = {  # D's last bias shifted: far past where BCE of a sigmoid clamps its log at -100
    "moderate": (0.0, Text("D's logits moderate", "D 的 logits 适中")),
    "fake": (
        -150.0,
        Text(
            "D sure every sample is fake (logits near -150)",
            "D 确信每个样本都是假的（logits 约为 -150）",
        ),
    ),
    "real": (
        150.0,
        Text(
            "D sure every sample is real (logits near +150)",
            "D 确信每个样本都是真的（logits 约为 +150）",
        ),
    ),
    "winning": (  # drawn by one case of the D step; the loss still makes one step
        0.0,
        Text(
            "D already winning: reals shifted by +3, D(real) above +4, D(fake) below -4 (loss"
            " near 0.01)",
            "D 已经占上风：真实样本整体加 3，D(real) 高于 +4，D(fake) 低于 -4（损失约 0.01）",
        ),
    ),
}
_D_NORM = Text(", D starting with a BatchNorm1d", "，D 的第一层是 BatchNorm1d")
_D_SIGMOID = Text(
    ", D ending in a Sigmoid (its output taken as logits all the same)",
    "，D 的最后一层是 Sigmoid（其输出照样当作 logits）",
)
_SHARP = 50.0  # D's last weights scaled: G's gradient norm well above 1 (a clip would show)
_SHARP_TEXT = Text(
    ", D's last layer weights ×50 (G's gradients large)",
    "，D 最后一层的权重放大 50 倍（G 的梯度很大）",
)
_IMAGES = Text(
    ", samples shaped as 2×3 images (G ends in a view)", "，样本形状为 2×3 的图像（G 的输出是视图）"
)


def _stepped_by_noise_free(case: dict | None) -> dict | None:
    """The case called twice, with SGD with momentum where it drew Adam.

    Adam's first step moves an entry whose gradient is rounding noise by up to lr, either
    way (``_adam_noise`` allows it); a second call would compare everything computed from
    such entries, a BatchNorm's running mean included. Momentum keeps state across calls
    as well, and steps noise by noise.
    """
    if case is not None and case["optimizer"] == "adam":
        return {**case, "optimizer": "momentum"}
    return case


@dataclass(frozen=True)
class _GanStep(Spec):
    """One GAN step; ``which`` is the model whose optimizer the learner steps."""

    seed: int = 0
    depth: int = 2
    batch: int = 5
    lr: float = 0.1
    device: str | None = None

    which = "D"
    # D's logits on arrival; the G step leaves out "real": its loss then has no gradient
    logits: ClassVar[tuple[str, ...]] = ("moderate", "fake", "real")

    def cases(self) -> list[dict]:
        return draw(self.seed, self.axes(), 3)

    def again_case(self) -> dict | None:
        return _stepped_by_noise_free(super().again_case())

    between = Text(
        "froze the first layer of the other model (G before a D step, D before a G step)",
        "冻结了另一个模型的第一层（D 的一步之前冻结 G，G 的一步之前冻结 D）",
    )

    def between_calls(self, world: World, case: dict) -> None:
        """The caller freezes a layer of the model it does not step: flags remembered from
        the first call (by the model's id) and put back would unfreeze it."""
        other = world.objects["G" if self.which == "D" else "D"]
        next(other.parameters()).requires_grad_(False)

    def axes(self) -> dict[str, list]:
        return {
            "G_mode": list(_MODES),
            "D_mode": list(_MODES)[::-1],
            "stale": list(_STALE),
            "frozen": ["none", "G", "D"],
            "optimizer": list(OPTIMIZERS),
            "dtype": ["float64", "float32"],
            "batch": [max(self.batch, 2), self.batch + 1],
            "lr": [self.lr, self.lr / 2, self.lr * 1.5],
            "logits": list(self.logits),
            "history": [True, False],  # the optimizer has taken a step before (its state)
            "groups": list(GROUPS),
        }

    def describe(self, case: dict) -> Text:
        which = case["frozen"]  # D's first Linear is D[1] where D first flattens images
        index = int(which == "D" and case.get("images", False))
        frozen = (
            Text("nothing frozen", "没有冻结的层")
            if which == "none"
            else Text("{m}[{k}] frozen", "{m}[{k}] 被冻结").format(m=which, k=index)
        )
        text = Text(
            "G in {g}, D in {d}, {s}, {f}, {o}(lr={lr:g}){h}, {t}, batch {n}, {z}{b}{k}{i}",
            "G 处于{g}，D 处于{d}，{s}，{f}，{o}(lr={lr:g}){h}，{t}，批次大小 {n}，{z}{b}{k}{i}",
        ).format(
            h=Text(" after an earlier step", "，之前已走过一步") if case.get("history") else "",
            b=_D_NORM if case.get("D_norm") else _D_SIGMOID if case.get("sigmoid") else "",
            k=_SHARP_TEXT if case.get("sharp") else "",
            i=_IMAGES if case.get("images") else "",
            z=_LOGITS[case["logits"]][1],
            g=_MODES[case["G_mode"]],
            d=_MODES[case["D_mode"]],
            s=_STALE[case["stale"]],
            f=frozen,
            o=case["optimizer"],
            lr=case["lr"],
            t=case["dtype"],
            n=case["batch"],
        )
        return with_groups(text, case)

    def build(self, case: dict, device) -> World:
        dtype = getattr(torch, case["dtype"])
        images = case.get("images", False)
        G, D = make_gan(self.seed, self.depth, dtype, device, case.get("D_norm", False), images)
        with trusted.no_grad():
            D[-2].bias.add_(_LOGITS[case["logits"]][0])
            if case.get("sharp"):
                D[-2].weight.mul_(_SHARP)
        z = uniform(self.seed + 1, case["batch"], 3, device=device, dtype=dtype)
        sample = IMAGE if images else (6,)
        real = (uniform(self.seed + 2, case["batch"], *sample, device=device, dtype=dtype) + 1) / 2
        if case["logits"] == "winning":  # D(x) = 4 mean(x) - 9 where mean(x) > 0; reals higher
            real = real + 3
            with trusted.no_grad():
                for layer in (m for m in D if trusted.isinstance_(m, torch.nn.Linear)):
                    layer.weight.fill_(1 / layer.in_features), layer.bias.zero_()
                D[-2].weight.mul_(4), D[-2].bias.fill_(-9.0)
        if case.get("sigmoid"):  # after the last Linear's shifts (D[-2]) are made
            D.append(torch.nn.Sigmoid())
        models = {"G": G, "D": D}
        for name, model in models.items():
            set_mode(model, case[f"{name}_mode"])
            if case["frozen"] == name:  # a frozen layer; a frozen bias where there is one layer
                layer = model[first_linear(model)]
                (layer if self.depth > 1 else layer.bias).requires_grad_(False)
        stepped = models[self.which]
        trainable = [p for p in stepped.parameters() if p.requires_grad]
        optimizer = OPTIMIZERS[case["optimizer"]](grouped(trainable, case), case["lr"])
        if case.get("history"):  # steps of earlier iterations: momentum and Adam's moments
            stepped_before(optimizer, trainable, self.seed + 200)
        for model in models.values():  # fresh models: every other .grad is None
            leave_grads(model.parameters(), case["stale"], self.seed + 100)
        names = {id(p): f"{self.which}{dotted(k)}" for k, p in stepped.named_parameters()}
        if self.which == "D":
            world = World((G, D, optimizer, real, z), {**models, "z": z, "real": real}, device)
        else:
            world = World((G, D, optimizer, z), {**models, "z": z}, device)
        grads_at_step(world, optimizer, f"opt_{self.which.lower()}.step()", names, trainable)
        return world


def _adam_noise(e: dict, f: dict, ctx) -> bool:
    """A parameter after one Adam step, equal but where its gradient was float noise.

    Adam divides a gradient by its own size, so an entry whose gradient is rounding noise
    (within the tolerance the step-time gradients are compared with: behind a saturated
    logit) moves by up to lr in a direction the noise picks, which the order of a sum
    (another formula, another thread count) changes. Such entries may differ by up to
    2·lr; every other entry by the dtype's tolerance. The step-time gradients themselves
    are compared as usual.
    """
    if ctx.case["optimizer"] != "adam" or not differs_only_in("value")(e, f, ctx):
        return False
    label = f"opt_{ctx.spec.which.lower()}.step()"
    grad = ctx.expected.get(f"{ctx.base}.grad when {label} #1 ran", {}).get("value")
    ev, fv = e.get("value"), f.get("value")
    if any(trusted.type_(v) not in TENSORS for v in (grad, ev, fv)):
        return False
    if not grad.shape == ev.shape == fv.shape or str(ev.dtype) not in TOLERANCE:
        return False
    rtol, atol = TOLERANCE[str(ev.dtype)]
    ev, fv, grad = ev.to(torch.float64), fv.to(torch.float64), grad.to(torch.float64)
    gap = (ev - fv).abs()
    noise = grad.abs() <= atol
    return bool(((gap <= atol + rtol * ev.abs()) | (noise & (gap <= 2 * ctx.case["lr"]))).all())


def _nothing_new(e: dict, f: dict, ctx) -> bool:
    """The right loss, but no gradient of it reached any parameter: None, zero or the stale one.

    A loss that saturated (BCE of a sigmoid) also sends no gradient, but its value differs.
    """
    loss = ctx.expected.get("result", {}).get("value")
    if not close(ctx.found.get("result", {}).get("value"), loss):
        return False
    seen = {b: v for b, v in ctx.found.items() if " when " in b}
    stale = {b: ctx.before.get(b.split(" when ")[0], {}) for b in seen}
    return all(
        is_zero_or_none(v) or close(v.get("value"), stale[b].get("value"), (1e-4, 1e-5))
        for b, v in seen.items()
    )


def _either_order(e: dict, f: dict, ctx) -> bool:
    """D's BatchNorm running statistics as the two calls in the other order leave them.

    Each call D(x) in training mode moves the running statistics towards x's batch
    statistics by the BatchNorm's momentum, so D(fake) before D(real) ends with other
    running statistics than the reference's D(real) before D(fake), with the same loss,
    gradients and step. The task fixes no order; the number of calls stays compared
    (num_batches_tracked), so one batch of real and fake together is not excused here.
    The reference's fact ``other order`` holds those statistics, by base.
    """
    if not differs_only_in("value")(e, f, ctx):
        return False
    swapped = ctx.fact("other order").get(ctx.base)
    if trusted.type_(swapped) not in TENSORS or str(swapped.dtype) not in TOLERANCE:
        return False
    return close(f.get("value"), swapped, TOLERANCE[str(swapped.dtype)])


@dataclass(frozen=True)
class DStep(_GanStep):
    """One discriminator step: D updated by the correct gradient, no gradient reaching G."""

    number = 4
    which = "D"
    names = {"result": "d_step(G, D, opt_d, real, z)"}
    allow = (
        Rule("D*.grad"),  # what D's .grad holds after the step is not part of the task
        Rule("G*.grad", lambda e, f, ctx: is_zero_or_none(f)),
        Rule("D*", _adam_noise),
        Rule("D*.running_mean", _either_order),
        Rule("D*.running_var", _either_order),
    )

    blame = (Rule("G*.grad", None, "DT-4"), Rule("D*.grad when *", stale_added, "DT-6"))

    def again_case(self) -> dict | None:
        """A D without BatchNorm: with one, D(fake) before D(real) leaves other running
        statistics (allowed above), and a second step would start from another D than the
        reference's; without, either order leaves the same D and the second step compares."""
        return _stepped_by_noise_free(next((c for c in self.cases() if not c["D_norm"]), None))

    def classify(self, message: str) -> str | None:
        """G's output is a view in the image-shaped cases, so detach_() on it raises."""
        return "DT-3" if "detach views in-place" in message else None

    def cases(self) -> list[dict]:
        """The drawn cases, some with a BatchNorm in D, and one with it in training mode.

        Only there does one batch of real and fake through D differ from the two calls
        D(real), D(fake) the task writes (the batches share statistics), so every seed has
        such a case: the first drawn one without the BatchNorm, given it and D in training
        mode. The G step draws no such D: answers that switch D to eval there are right.
        Every seed also draws samples shaped as images, so G's output is a view (as a
        generator's ``view`` makes it), and as vectors.
        """
        added_last = {"D_norm": [False, True], "images": [False, True]}
        drawn = draw(self.seed, {**self.axes(), **added_last}, 3)
        plain = next(case for case in drawn if not case["D_norm"])
        # and a D that already tells real from fake (float32: so small a float64 loss would
        # tell float32 targets, right by the tolerance, from float64 ones)
        winning = {**plain, "logits": "winning", "optimizer": "sgd", "dtype": "float32"}
        sigmoid = {**drawn[-1], "D_norm": False, "sigmoid": True}  # the loss is fixed as is
        return [*drawn, {**plain, "D_mode": "train", "D_norm": True}, winning, sigmoid]


check_d_step = checker(DStep)


@dataclass(frozen=True)
class GStep(_GanStep):
    """One generator step: G updated by the gradient through D, D left unchanged."""

    number = 5
    which = "G"
    logits = ("moderate", "fake")
    names = {"result": "g_step(G, D, opt_g, z)"}
    # the step-time gradients are what counts
    allow = (Rule("D*.grad"), Rule("G*.grad"), Rule("G*", _adam_noise))
    blame = (Rule("G*.grad when *", _nothing_new, "DT-5"),)

    def cases(self) -> list[dict]:
        """The drawn cases, and a sharp D under plain SGD: G's gradient norm is then above
        any norm a clip would pick, and the step is the gradient's size."""
        drawn = super().cases()
        return [*drawn, {**drawn[0], "sharp": True, "optimizer": "sgd"}]


check_g_step = checker(GStep)


EXERCISES = numbered(
    globals(),
    (
        "frozen_copy",
        "a frozen copy, shared or independent",
        "冻结的副本：共享还是独立",
        "DT-1 DT-2",
    ),
    (
        "detach_all",
        "detach_() where allowed, detach() on views",
        "能原地就 detach_()，视图用 detach()",
        "DT-3",
    ),
    (
        "normalised_and_grad",
        "an in-place change after the forward pass",
        "前向传播之后的原地修改",
        "DT-2",
    ),
    ("d_step", "the discriminator step", "判别器步", "DT-4 DT-6"),
    ("g_step", "the generator step", "生成器步", "DT-5"),
)

self_check = self_checker(EXERCISES)
