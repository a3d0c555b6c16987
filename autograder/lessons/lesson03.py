"""Checks for lesson 03: model.eval() vs torch.no_grad().

Each check is a :class:`~autograder.common.oracle.Spec`: its seed draws caller states
(models of other widths and depths, some nested, in float32 or float64, arriving in
training, evaluation or mixed mode, with a frozen layer, with stale, zero or no
``.grad``; batches of unequal sizes down to one sample; transposed or sliced inputs;
exact ties u == p; drawn p, learning rates and sample counts; calls inside the
caller's no_grad), the learner's function and the reference run in identical worlds,
and everything a caller can see afterwards is compared. While either runs, global
module hooks count every Dropout and BatchNorm call (on the caller's modules or on
any copy) by its mode and whether autograd recorded it, and give each Dropout call in
training mode a mask drawn from the seed, so the reference on the CPU draws the same.

This module runs beside learner code (the learner's kernel, the grading sandbox's
observer) and holds no answer: it builds each case's world, calls the learner's function,
records what a caller sees and compares. The references are in
:mod:`autograder.references.lesson03`, which only the judge imports; the learner's
kernel compares with their states shipped in ``autograder/lessons/expected/lesson03.wire``.
"""

from __future__ import annotations

import contextlib
import warnings
from dataclasses import dataclass

import torch

from autograder.common import trusted
from autograder.common.caller_states import (
    INF_STALE,
    MODE_SWITCHED,
    one_short,
    raising,
    switch_mode,
    with_raising,
)
from autograder.common.caller_states import ONE_SAMPLE_IN_TRAINING as _ONE_SAMPLE
from autograder.common.caller_states import STALE as _STALE
from autograder.common.exercise import numbered
from autograder.common.i18n import Text
from autograder.common.inputs import uniform, viewed
from autograder.common.layer_watch import LayerWatch, LayerWatchSpec, layers_trained, probe_count
from autograder.common.model_cases import (
    MODES_ON_ARRIVAL,
    NET_TEXT,
    model_text,
    model_world,
    nets,
    set_grads,
    set_layer_modes,
)
from autograder.common.models import Net, make_backbone_head, make_net
from autograder.common.oracle import Rule, World, close, differs_only_in, draw, pick
from autograder.common.protocol import checker
from autograder.kernel.selfcheck import self_checker

# Taken at import, before any learner code runs (see trusted.py).
_get_rng, _set_rng = torch.random.get_rng_state, torch.random.set_rng_state
_get_cuda_rng, _set_cuda_rng = torch.cuda.get_rng_state, torch.cuda.set_rng_state
_where = torch.where
_nextafter = torch.nextafter


# What the blame rules read (the layer watch's counts: autograder.common.layer_watch) ---------


def _left_in_eval(ctx) -> bool:
    """Every module of the caller's model is in evaluation mode after the call."""
    return not any(v.get("training") for b, v in ctx.found.items() if b.startswith("model"))


def _ev2(ctx) -> bool:
    """BatchNorm trained under no_grad, none switched to eval: no_grad trusted to switch it."""
    return (
        probe_count(ctx, "BatchNorm train") > 0
        and probe_count(ctx, "BatchNorm train grad-mode") == 0
        and probe_count(ctx, "BatchNorm eval", "outer eval") == 0
    )


# Exercise 1 (EV-3) -------------------------------------------------------------------------

_LAYOUTS = {
    "contiguous": Text("contiguous", "连续"),
    "transposed": Text("transposed (not contiguous)", "转置（不连续）"),
    "slice": Text("a view into a larger storage", "更大存储的视图"),
    "row": Text("a single row", "只有一行"),
    "3-d": Text("three dimensions", "三维"),
    "scalar": Text("shape ()", "形状为 ()"),
}
_EDGES = {
    "plain": Text("values in [-1, 1)", "取值在 [-1, 1) 内"),
    "ties": Text("some u exactly equal to p", "部分 u 恰好等于 p"),
    "below": Text(
        "some u just below p (the next number down)", "部分 u 恰好比 p 小一点（紧挨着的下一个数）"
    ),
    "zeros": Text("some x exactly 0", "部分 x 恰好为 0"),
    "large": Text("|x| up to 10⁴", "|x| 最大到 10⁴"),
}


_HISTORY = Text(" with a graph (requires grad, not a leaf)", "，带计算图（需要梯度，非叶子）")
_EXACT = (0.25, 0.375, 0.625, 0.75)  # drop probabilities that float32 holds exactly


def _keep_probability(e: dict, f: dict, ctx) -> bool:
    """The output is what a keep probability p would give: mask reversed, or scale 1/p.

    Not where the call drew from the global random state: a mask of its own random numbers
    matches a reversed reading of a small u by chance, in one process and not in another.
    """
    x, u, p = ctx.before["x"]["value"], ctx.before["u"]["value"], ctx.case["p"]
    found = f.get("value")
    if not ctx.case["training"] or trusted.type_(found) is not trusted.tensor_type:
        return False
    if ctx.found.get("torch", {}).get("rng_consumed"):
        return False
    if x.numel() < 4:  # too few elements to tell a reading from chance
        return False
    zero = trusted.zeros((), dtype=x.dtype)
    readings = [_where(u < p, x / p, zero), _where(u >= p, x / p, zero)]
    readings.append(_where(u < p, x / (1 - p), zero))
    return any(close(found, r, (1e-3, 1e-5)) for r in readings)


@dataclass(frozen=True)
class DropoutByHand(LayerWatchSpec):
    """Drop where u < p, scale survivors by 1/(1-p); the identity when not training."""

    number = 1
    seed: int = 0
    p: float = 0.2
    device: str | None = None

    names = {"result": "dropout_by_hand(x, p, u, training)"}
    allow = (Rule("result", differs_only_in("is", "shares")),)  # x itself, or a copy
    blame = (Rule("result", _keep_probability, "EV-3"),)

    def cases(self) -> list[dict]:
        axes = {
            "training": [True, True, False, True, True],  # lengths prime to the others
            "layout": list(_LAYOUTS),
            "dtype": ["float32", "float64"],  # the exercises' inputs (bfloat16 is not one)
            "p": [self.p, pick(self.seed, _EXACT)],
            "edge": list(_EDGES),
            "history": [True, False, True],
            "u dtype": ["x's", "float64", "x's"],  # u of x's shape, in a dtype of its own
        }
        cases = draw(self.seed, axes, 8)
        for case in cases:  # a tie is u == p exactly: p must be a float32 number
            if case["edge"] in ("ties", "below"):
                case["p"] = pick(self.seed + 1, _EXACT)
            if not case["training"]:  # the identity must keep x's graph (x itself, or a copy)
                case["history"] = True
        # u just below p in every matrix: in float32 (u + 1 - p rounds up to 1 there), and in
        # float64 beside a float32 x (u rounded to x's dtype reaches p)
        below = {"training": True, "layout": "contiguous", "dtype": "float32", "edge": "below"}
        below.update(p=pick(self.seed + 1, _EXACT), history=False)
        # and u == p in float64 for a p that float32 rounds (0.2): a p made float32 moves the
        # tie; called inside no_grad, where training=True still drops (eval is not no_grad)
        tie = {**below, "u dtype": "float64", "edge": "ties", "p": self.p, "grad_mode": False}
        # and, whatever the seed, a transposed x in training mode (a view(-1) of it raises),
        # dropping most of it: p = 0.75 (a p above one half read as a keep probability shows)
        bent = {**below, "layout": "transposed", "edge": "plain", "p": _EXACT[-1]}
        return [*cases, {**below, "u dtype": "x's"}, {**below, "u dtype": "float64"}, tie, bent]

    def describe(self, case: dict) -> Text:
        return Text(
            "x {l}{h}, dtype {d}{u}, p={p}, training={t}, {e}",
            "x 为{l}{h}，数据类型 {d}{u}，p={p}，training={t}，{e}",
        ).format(
            u=_U_FLOAT64 if _u_dtype(case) != case["dtype"] else "",
            l=_LAYOUTS[case["layout"]],
            h=_HISTORY if case["history"] else "",
            d=case["dtype"],
            p=case["p"],
            t=case["training"],
            e=_EDGES[case["edge"]],
        )

    def build(self, case: dict, device) -> World:
        g = trusted.generator().manual_seed(self.seed)
        rows, cols = (int(n) for n in trusted.randint(3, 12, (2,), generator=g))
        shape = {
            "contiguous": (rows, cols),
            "transposed": (cols, rows),
            "slice": (rows + 2, cols),
            "row": (1, cols),
            "3-d": (2, rows, cols),
            "scalar": (),
        }[case["layout"]]
        dtype, p = getattr(torch, case["dtype"]), case["p"]
        x = uniform(self.seed + 1, *shape, device=device, dtype=dtype)
        u_dtype = getattr(torch, _u_dtype(case))
        u = (uniform(self.seed + 2, *shape, device=device, dtype=u_dtype) + 1) / 2
        flat_x, flat_u = x.view(-1), u.view(-1)
        if case["edge"] == "ties":
            flat_u[::3] = p
        elif case["edge"] == "below":  # in u's own dtype: rounding that to x's reaches p
            flat_u[::3] = _nextafter(
                trusted.tensor(p, dtype=u_dtype), trusted.tensor(0.0, dtype=u_dtype)
            )
        elif case["edge"] == "zeros":
            flat_x[::2] = 0
        elif case["edge"] == "large":
            x.mul_(1e4)
        if case["history"]:  # an activation: a result of earlier layers, with their graph
            x = x.requires_grad_().clone()
        x, u = viewed(x, case["layout"]), viewed(u, case["layout"])
        return World((x, p, u, case["training"]), {"x": x, "u": u}, device)


_U_FLOAT64 = Text(", u float64", "，u 为 float64")


def _u_dtype(case: dict) -> str:
    return case["dtype"] if case.get("u dtype", "x's") == "x's" else case["u dtype"]


check_dropout_by_hand = checker(DropoutByHand)


# Exercise 2 (EV-1) -------------------------------------------------------------------------


@dataclass(frozen=True)
class EvalGrads(LayerWatchSpec):
    """Parameter gradients of the MSE loss, computed with the model in evaluation mode."""

    number = 2
    seed: int = 0
    size: int = 8
    device: str | None = None

    differences_first = True  # BatchNorm training on one sample raises: what else differed?
    names = {"result": "eval_grads(model, x, target)"}
    allow = (
        Rule("model*.grad"),  # what .grad holds afterwards is not part of the task
        Rule("result[*]", differs_only_in("is", "shares")),  # so the dict may hold .grad itself
    )
    blame = (
        Rule("result[*]", lambda e, f, ctx: f.get("kind") == "None", "EV-1"),
        Rule("*", lambda e, f, ctx: ctx.case["mode"] == "eval" and layers_trained(ctx), "EV-1"),
    )

    def cases(self) -> list[dict]:
        axes = {
            "mode": ["train", "eval"],
            "stale": [*_STALE, "large"],
            "net": [*NET_TEXT, "two nested blocks"],  # 5: prime to the others
            "dtype": ["float32", "float64"],
            "rows": [self.size, 1, self.size + 3],
            "layout": ["contiguous", "transposed"],
        }
        drawn = draw(self.seed, axes, 4)
        return [*drawn, raising(drawn[0], mode="train")]

    def describe(self, case: dict) -> Text:
        text = Text("{m}, batch of {n}", "{m}，批次大小 {n}").format(
            m=model_text(case), n=case["rows"]
        )
        return with_raising(text, case)

    def build(self, case: dict, device) -> World:
        model, x, net = model_world(self, case, device, 4, 2)
        x = one_short(x) if case.get("raises") else x
        target = uniform(self.seed + 2, case["rows"], net.n_out, device=device, dtype=x.dtype)
        return World((model, x, target), {"model": model, "x": x, "target": target}, device)

    def blame_error(self, message: str, case: dict) -> str | None:
        """BatchNorm trained on one sample: switched to training mode for gradients."""
        return "EV-1" if _ONE_SAMPLE in message and case["mode"] == "eval" else None


check_eval_grads = checker(EvalGrads)


# Exercise 3 (EV-2, EV-4, EV-5, EV-6) --------------------------------------------------------

_SIZES = {
    "even": Text("batches of equal size", "批次大小相同"),
    "uneven": Text("batches of unequal sizes", "批次大小不一"),
    "single": Text("the last batch a single sample", "最后一个批次只有一个样本"),
}


def _validate_blame(e: dict, f: dict, ctx) -> str | None:
    if not layers_trained(ctx):
        return None
    if ctx.case["mode"] == "train" and _left_in_eval(ctx):
        return "EV-5"  # evaluation mode came, but only after the loop
    return "EV-2" if _ev2(ctx) else None


@dataclass(frozen=True)
class Validate(LayerWatchSpec):
    """Mean validation loss in evaluation mode under no_grad; the caller's state unchanged."""

    number = 3
    seed: int = 0
    batches: int = 3
    size: int = 8
    device: str | None = None

    counted = ("Dropout train", "BatchNorm train", "Dropout graph", "BatchNorm graph")
    differences_first = True  # BatchNorm training on one sample raises: what else differed?
    names = {"result": "validate(model, batches)"}
    blame = (
        Rule("*", lambda e, f, ctx: _validate_blame(e, f, ctx) == "EV-5", "EV-5"),
        Rule("*", lambda e, f, ctx: _validate_blame(e, f, ctx) == "EV-2", "EV-2"),
        Rule("probe:* graph", None, "EV-6"),
        Rule(
            "model*",
            lambda e, f, ctx: (
                ctx.case["mode"] == "train" and _left_in_eval(ctx) and not layers_trained(ctx)
            ),
            "EV-4",  # model.train() forgotten after validation
        ),
    )

    def cases(self) -> list[dict]:
        axes = {
            "mode": ["train", "eval"],
            "outer": [False, False, True],
            "frozen": ["none", "first", "none", "first", "none"],  # 5: prime to the others
            "stale": ["stale", "none", "stale"],
            "net": ["two nested blocks", "one block", "two blocks"],
            "dtype": ["float32", "float64"],
            "sizes": list(_SIZES),
            "count": [self.batches, self.batches + 1],
            "rows": [self.size],
        }
        drawn = draw(self.seed, axes, 5)
        one = {**drawn[1], "outputs": 1}  # a model of one output, its targets of shape (n, 1)
        drawn[3]["nan"] = True  # a nan in a target: the mean over the batches is nan
        return [*drawn, raising(drawn[0], mode="train", outer=False), one]

    def describe(self, case: dict) -> Text:
        text = Text("{m}, output width {o}, {c} batches, {s}", "{m}，输出宽度 {o}，{c} 个批次，{s}")
        text = text.format(
            m=model_text(case), o=case.get("outputs", 2), c=case["count"], s=_SIZES[case["sizes"]]
        )
        if case.get("nan"):
            text = Text("{t}, a nan in the first target", "{t}，第一个目标中有一个 nan").format(
                t=text
            )
        return with_raising(text, case)

    def build(self, case: dict, device) -> World:
        model, _, net = model_world(self, case, device, 4, case.get("outputs", 2))
        sizes = {
            "even": [self.size] * case["count"],
            "uneven": [self.size + 2 * j for j in range(case["count"])],
            "single": [self.size] * (case["count"] - 1) + [1],
        }[case["sizes"]]
        dtype, batches, objects = getattr(torch, case["dtype"]), [], {"model": model}
        for j, n in enumerate(sizes):
            x = uniform(self.seed + 10 + j, n, net.n_in, device=device, dtype=dtype)
            x = one_short(x) if case.get("raises") and j == len(sizes) - 1 else x
            y = uniform(self.seed + 50 + j, n, net.n_out, device=device, dtype=dtype)
            if case.get("nan") and j == 0:
                y[0, 0] = float("nan")
            batches.append((x, y))
            objects[f"batches[{j}][0]"], objects[f"batches[{j}][1]"] = x, y
        return World((model, batches), objects, device)


check_validate = checker(Validate)


# Exercise 4 (EV-2) -------------------------------------------------------------------------


_FROZEN = {"first": Text(" with backbone[0] frozen", "，backbone[0] 被冻结")}


@dataclass(frozen=True)
class FinetuneHead(LayerWatchSpec):
    """One SGD step on the head; the backbone's weights and BatchNorm statistics stay frozen."""

    number = 4
    seed: int = 0
    lr: float = 0.1
    size: int = 10
    device: str | None = None

    random = True
    names = {"result": "finetune_head(backbone, head, x, target, lr)"}
    between = Text("passed a learning rate three times as large", "传入了三倍大的学习率")
    allow = (
        Rule("backbone*.grad"),  # what .grad holds afterwards is not part of the task
        Rule("head*.grad"),
        Rule("backbone*", differs_only_in("training")),  # nor the modes the modules are left in
        Rule("head*", differs_only_in("training")),
    )
    blame = (Rule("*", lambda e, f, ctx: _ev2(ctx), "EV-2"),)

    def cases(self) -> list[dict]:
        axes = {
            "backbone": ["train", "eval"],
            "head": ["eval", "train", "train"],
            "stale": list(_STALE),
            "frozen": ["none", "first"],
            "lr": [self.lr, self.lr / 2, self.lr * 1.5],
            "dtype": ["float32", "float64"],
            "blocks": [1, 2],
            "rows": [self.size, 3, self.size + 2],
        }
        drawn = draw(self.seed, axes, 4)
        # a Dropout that drops nothing hands its input on as it is (an inference tensor too)
        return [*drawn, {**drawn[1], "head": "train", "p": 0.0}, {**drawn[2], "stale": "inf"}]

    def describe(self, case: dict) -> Text:
        return Text(
            "backbone {b}{f}, head {h}, {s}, lr={lr:g}, {d}, batch of {n}{p}",
            "主干网络{b}{f}，头部{h}，{s}，lr={lr:g}，{d}，批次大小 {n}{p}",
        ).format(
            b=MODES_ON_ARRIVAL[case["backbone"]],
            f=_FROZEN.get(case["frozen"], ""),
            h=MODES_ON_ARRIVAL[case["head"]],
            s={**_STALE, **INF_STALE}[case["stale"]],
            lr=case["lr"],
            d=case["dtype"],
            n=case["rows"],
            p=", Dropout(p=0)" if "p" in case else "",
        )

    def build(self, case: dict, device) -> World:
        net = Net(5, 8 + self.seed % 5, 3, blocks=case["blocks"], p=case.get("p", 0.3))
        backbone, head = make_backbone_head(self.seed, net, case["dtype"], device)
        backbone.train(case["backbone"] == "train")
        head.train(case["head"] == "train")
        if case["frozen"] == "first":
            backbone[0].requires_grad_(False)
        set_grads(self.seed, case["stale"], backbone, head)
        dtype, rows = getattr(torch, case["dtype"]), case["rows"]
        x = uniform(self.seed + 1, rows, net.n_in, device=device, dtype=dtype)
        target = uniform(self.seed + 2, rows, net.n_out, device=device, dtype=dtype)
        objects = {"backbone": backbone, "head": head, "x": x, "target": target}
        return World((backbone, head, x, target, case["lr"]), objects, device)

    def between_calls(self, world: World, case: dict) -> None:
        """Another learning rate: an optimizer kept from the first call steps with the old one."""
        *rest, lr = world.args
        world.args = (*rest, lr * 3)


check_finetune_head = checker(FinetuneHead)


# Exercise 5 (EV-2, EV-6) -------------------------------------------------------------------


@dataclass(frozen=True)
class McDropoutPredict(LayerWatchSpec):
    """Mean and std over samples with Dropout on, BatchNorm in eval, no graph, modes restored."""

    number = 5
    seed: int = 0
    samples: int = 20
    size: int = 6
    device: str | None = None

    random = True
    # the prompt says nothing of the random state: seeding for reproducible samples and
    # putting the caller's state back is a right answer (tests/test_unseen_kinds.py)
    random_state_compared = False
    counted = ("Dropout train", "BatchNorm train", "Dropout graph", "BatchNorm graph")
    counted += ("rng_reseeded",)
    probes = {
        "rng_reseeded": Text(
            "the caller's global random state was reset to a fixed seed (the same state "
            "after the call whatever it was before)",
            "调用者的全局随机状态被重置为固定种子（无论调用前是什么状态，调用后都相同）",
        )
    }
    names = {
        "result": "mc_dropout_predict(model, x, samples)",
        "result[0]": "mean",
        "result[1]": "std",
    }
    blame = (
        Rule("*", lambda e, f, ctx: _ev2(ctx), "EV-2"),
        Rule("probe:* graph", None, "EV-6"),
        Rule("result[*]", lambda e, f, ctx: f.get("requires_grad") or f.get("grad_fn"), "EV-6"),
    )

    def cases(self) -> list[dict]:
        axes = {
            "mode": ["mixed", "train", "eval"],
            "outer": [False, False, True, False, True],  # 5 and 4: prime to the 3 modes
            "net": ["two nested blocks", "one block", "two blocks", "two nested blocks"],
            "dtype": ["float32", "float64"],
            "rows": [self.size, 1, self.size + 3],
            "samples": [self.samples, max(self.samples // 2 + 1, 2)],
            "layout": ["contiguous", "transposed"],
        }
        drawn = draw(self.seed, axes, 4)
        # and one sample, as the prompt allows: the std of one sample is nan, not zero
        # a mix the other way too: a training model with its statistics frozen
        frozen_norm = {**drawn[1], "mode": "frozen_norm"}
        # outputs far from zero with a small spread, in float32: a std that subtracts
        # E[p]² from E[p²] loses its digits there (100, not more: a GPU's own rounding of
        # outputs near 1000 already moves their std past float32's tolerance)
        far = {**drawn[0], "dtype": "float32", "far": True}
        return [
            *drawn,
            {**drawn[-1], "samples": 1},
            frozen_norm,
            far,
            raising(drawn[0], mode="mixed"),
        ]

    def describe(self, case: dict) -> Text:
        text = Text("{m}, batch of {n}, samples={s}", "{m}，批次大小 {n}，samples={s}").format(
            m=model_text(case), n=case["rows"], s=case["samples"]
        )
        if case.get("far"):
            text = Text(
                "{t}, outputs near 100 (the head's bias), their spread small",
                "{t}，输出在 100 附近（输出层的偏置），离散程度很小",
            ).format(t=text)
        return with_raising(text, case)

    def calling(self, world: World, case: dict, fn) -> contextlib.AbstractContextManager:
        """With one sample PyTorch warns that std has no degrees of freedom; the nan is what
        the task asks for, so the warning is not shown under a right answer."""
        stack = super().calling(world, case, fn)
        if case["samples"] == 1:
            stack.enter_context(warnings.catch_warnings())
            warnings.filterwarnings("ignore", message=r"\w+\(\): degrees of freedom is <= 0")
        return stack

    def build(self, case: dict, device) -> World:
        model, x, _ = model_world(self, case, device, 4, 2)
        x = one_short(x) if case.get("raises") else x
        if case.get("far"):
            head = [m for m in model.modules() if trusted.isinstance_(m, torch.nn.Linear)][-1]
            with trusted.no_grad():
                head.bias.add_(100.0)
        return World((model, x, case["samples"]), {"model": model, "x": x}, device)

    between = MODE_SWITCHED

    def between_calls(self, world: World, case: dict) -> None:
        switch_mode(world.args[0])

    def blame_error(self, message: str, case: dict) -> str | None:
        """BatchNorm trained on one sample under no_grad: no_grad trusted to switch it."""
        return "EV-2" if _ONE_SAMPLE in message else None

    def probe(self, world: World, value, again) -> dict:
        return {**super().probe(world, value, again), "rng_reseeded": _reseeds(world, again)}


def _rng_states(device: torch.device) -> list[torch.Tensor]:
    """The global random states a call on ``device`` draws from: the CPU's, and its GPU's."""
    return [_get_rng(), *([_get_cuda_rng(device)] if device.type == "cuda" else [])]


def _reseeds(world: World, again) -> bool:
    """The call sets the random state it leaves, whatever state it found (a seed).

    The call runs again from the state it left, one number further on: drawing from it
    ends elsewhere, leaving it alone or restoring it ends one number on; only a seed set
    inside (a fixed one, or ``initial_seed()``) ends where the first call did. The
    caller's state after the first call is put back.
    """
    after = _rng_states(world.device)
    trusted.rand(1)
    if world.device.type == "cuda":
        trusted.rand(1, device=world.device)
    try:
        again()
        now = _rng_states(world.device)
        return any(trusted.equal(a, b) for a, b in zip(after, now, strict=True))
    finally:
        _set_rng(after[0])
        if world.device.type == "cuda":
            _set_cuda_rng(after[1], world.device)


check_mc_dropout_predict = checker(McDropoutPredict)


# Exercise 6 (EV-2, EV-4) -------------------------------------------------------------------

_NEXT = {
    "next Dropout train": Text(
        "the number of Dropout calls in training mode in the caller's next forward pass",
        "调用者下一次前向传播中以训练模式运行的 Dropout 调用次数",
    ),
    "next BatchNorm train": Text(
        "the number of BatchNorm calls in training mode (running statistics updated) in the "
        "caller's next forward pass",
        "调用者下一次前向传播中以训练模式运行（会更新滑动平均统计量）的 BatchNorm 调用次数",
    ),
}


def _left_as_it_arrived_in_eval(e: dict, f: dict, ctx) -> bool:
    """A module that must train arrived in evaluation mode and was left there: train() forgotten."""
    arrived = ctx.before.get(ctx.base, {}).get("training")
    return e.get("training") is True and f.get("training") is False and arrived is False


def _fewer_dropout_calls_after_eval(e: dict, f: dict, ctx) -> bool:
    arrived = ctx.before.get("model", {}).get("training")
    return (f.get("value") or 0) < (e.get("value") or 0) and arrived is False


def _weights_frozen_not_statistics(e: dict, f: dict, ctx) -> bool:
    """BatchNorm still updates its statistics, and the answer froze gradients instead:
    parameters that required grad no longer do, or grad mode left switched off."""
    if not ctx.found.get("probe", {}).get("next BatchNorm train"):
        return False
    frozen = any(
        fields.get("requires_grad") is True
        and ctx.found.get(base, {}).get("requires_grad") is False
        for base, fields in ctx.before.items()
    )
    settings = ctx.found.get("torch", {}).get("settings_left") or []
    return frozen or "torch.is_grad_enabled" in settings


@dataclass(frozen=True)
class FinetuneMode(LayerWatchSpec):
    """Every module in training mode except BatchNorm (statistics frozen); nothing else changed."""

    number = 6
    seed: int = 0
    device: str | None = None

    counted = ("next Dropout train", "next BatchNorm train")
    probes = _NEXT
    names = {"result": "finetune_mode(model)"}
    # the caller validates between two epochs: the second call must redo the whole job
    between = Text("validated with model.eval()", "用 model.eval() 做了验证")
    blame = (
        Rule("*", _weights_frozen_not_statistics, "EV-2"),
        Rule("model*", _left_as_it_arrived_in_eval, "EV-4"),
        Rule("probe:next Dropout train", _fewer_dropout_calls_after_eval, "EV-4"),
    )

    def cases(self) -> list[dict]:
        axes = {
            "mode": ["eval", "train", "mixed", "dropout_off"],
            "net": ["two nested blocks", "one block", "two blocks", "two nested blocks"],
            "stale": list(_STALE),
            "frozen": ["none", "first"],
            "dtype": ["float32", "float64"],
        }
        drawn = draw(self.seed, axes, 6)
        # preparation code a caller may run inside its own no_grad block: grad mode stays off;
        # BatchNorm1d(track_running_stats=False), which has no running statistics, is one too
        return [*drawn, {**drawn[0], "outer": True}, {**drawn[1], "no_stats": True}]

    def describe(self, case: dict) -> Text:
        if case.get("no_stats"):
            return Text(
                "{t}, BatchNorm1d without running statistics", "{t}，BatchNorm1d 不记录运行统计量"
            ).format(t=model_text(case))
        return model_text(case)

    def build(self, case: dict, device) -> World:
        model = make_net(self.seed, nets(self.seed, 4, 2)[case["net"]], case["dtype"], device)
        set_layer_modes(model, case["mode"])
        if case["frozen"] == "first":
            _first_linear(model).requires_grad_(False)
        set_grads(self.seed, case["stale"], model)
        for m in model.modules() if case.get("no_stats") else ():  # track_running_stats=False
            if trusted.isinstance_(m, torch.nn.BatchNorm1d):
                m.track_running_stats, m.running_mean, m.running_var = False, None, None
                m.num_batches_tracked = None
        return World((model,), {"model": model}, device)

    def between_calls(self, world: World, case: dict) -> None:
        world.args[0].eval()

    before_second = Text(
        "put a copy of the model's first BatchNorm layer, in training mode, in its place",
        "把模型的第一个 BatchNorm 层换成了它的副本（处于训练模式）",
    )

    def before_second_call(self, world: World, case: dict) -> None:
        """A recalibrated BatchNorm swapped in: a list of layers kept per model misses it."""
        model = world.args[0]
        name = next(
            n for n, m in model.named_modules() if trusted.isinstance_(m, torch.nn.BatchNorm1d)
        )
        model.set_submodule(name, trusted.deepcopy(model.get_submodule(name)).train())

    def probe(self, world: World, value, again) -> dict:
        """The caller's next forward pass on a batch: which layers ran in training mode."""
        model = world.args[0]
        first = _first_linear(model)
        dtype = first.weight.dtype
        x = uniform(self.seed + 3, 5, first.in_features, device=world.device, dtype=dtype)
        with LayerWatch(self.seed) as layers, trusted.no_grad():
            model(x)
        return {
            "next Dropout train": layers.counts["Dropout train"],
            "next BatchNorm train": layers.counts["BatchNorm train"],
        }


def _first_linear(model: torch.nn.Module) -> torch.nn.Linear:
    return next(m for m in model.modules() if trusted.isinstance_(m, torch.nn.Linear))


check_finetune_mode = checker(FinetuneMode)


EXERCISES = numbered(
    globals(),
    ("dropout_by_hand", "Dropout by hand", "手写 Dropout", "EV-3"),
    ("eval_grads", "gradients in evaluation mode", "评估模式下的梯度", "EV-1"),
    ("validate", "a correct validation routine", "正确的验证流程", "EV-2 EV-4 EV-5 EV-6"),
    (
        "finetune_head",
        "fine-tune a head on a frozen BatchNorm backbone",
        "在冻结的 BatchNorm 主干网络上微调头部",
        "EV-2",
    ),
    ("mc_dropout_predict", "Monte-Carlo dropout", "蒙特卡洛 Dropout", "EV-2 EV-6"),
    (
        "finetune_mode",
        "training mode with frozen BatchNorm statistics",
        "冻结 BatchNorm 统计量的训练模式",
        "EV-2 EV-4",
    ),
)

self_check = self_checker(EXERCISES)
