"""Checks for lesson 09: autograd at scale — checkpointing, autocast, per-sample gradients.

Each check is a :class:`~autograder.common.oracle.Spec`: its seed draws caller states
(models arriving in training, evaluation or mixed mode, with Dropout and BatchNorm, a
frozen layer, stale, zero or no ``.grad``; inputs that need no gradient; transposed or
sliced inputs; other depths and batch sizes, batches of one; SGD, momentum or Adam with a
drawn learning rate; loss functions and loss modules; an outer ``no_grad``), the learner's
function and the reference run in identical worlds, and everything a caller can see
afterwards is compared, with what instruments saw during the call: forward calls per
block, saved-tensor bytes, the dtype each layer computed in, BatchNorm and Dropout calls
in training mode, the gradients at ``step()``.

Dropout in these models draws its mask from the CPU's global generator, which the check
seeds, so a call on a GPU and the reference on the CPU drop the same elements; the
learner's own random state is restored afterwards. Where the learner's call ran on a GPU,
values computed in reduced precision are compared within that precision's tolerance.

This module runs beside learner code (the learner's kernel, the grading sandbox's
observer): it builds the worlds, calls the learner's function, records and compares; it
holds no answer. The references, with the torch functions they use, are in
``autograder.references.lesson09``, with the judge only.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from autograder.common import trusted
from autograder.common.caller_states import (
    GROUPS,
    MODE_SWITCHED,
    ONE_SAMPLE_IN_TRAINING,
    grouped,
    leave_grads,
    one_short,
    raising,
    set_mode,
    switch_mode,
    with_callers_context,
    with_groups,
    with_raising,
)
from autograder.common.caller_states import MODES as _MODES
from autograder.common.caller_states import STALE as _STALE
from autograder.common.dtype_watch import watch_dtypes
from autograder.common.exercise import numbered
from autograder.common.global_state import set_during
from autograder.common.i18n import Text
from autograder.common.inputs import laid_out, uniform
from autograder.common.models import seeded_model
from autograder.common.on_device import OnTheDevice, there
from autograder.common.optimizer_steps import OPTIMIZERS, grads_at_step
from autograder.common.oracle import FLOAT_TOLERANCE, Rule, Spec, World, close, draw
from autograder.common.protocol import call, checker
from autograder.common.recorded import TENSORS, cpu_copy, dotted
from autograder.common.seeded_call import seeded_call
from autograder.common.simulated_machine import machine
from autograder.kernel.selfcheck import self_checker

# Taken at import, before any learner code runs (see trusted.py).
_fork_rng = torch.random.fork_rng
_torch_autocast = torch.autocast
_seed_cpu = torch.random.default_generator.manual_seed
_LOOSE = (5e-2, 5e-2)  # reduced-precision results of a GPU against the CPU's


class SeededDropout(torch.nn.Dropout):
    """Dropout whose mask comes from the CPU's global generator, whatever the device.

    The same elements are dropped on every device for one state of that generator, and
    checkpointing's ``preserve_rng_state`` restores it for the recomputation, as it does
    for PyTorch's own Dropout.
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0:
            return x
        keep = (trusted.rand(x.shape) >= self.p).to(device=x.device, dtype=x.dtype)
        return x * keep / (1 - self.p)


_LAYOUTS = {
    "contiguous": Text("x contiguous", "x 连续"),
    "transposed": Text("x transposed (not contiguous)", "x 是转置（不连续）"),
    "slice": Text("x a view into a larger storage", "x 是更大存储的视图"),
}


def _on_gpu(ctx) -> bool:
    """The learner's call ran on a GPU (the reference always runs on the CPU)."""
    return ctx.found.get("device", {}).get("value", "cpu") != "cpu"


def _loosely_close(e: dict, f: dict, ctx) -> bool:
    """On a GPU: the same but for values within reduced precision's tolerance; a returned
    loss the check's own step there gave (``_loss_there``) must match that one closely instead."""
    if not _on_gpu(ctx):
        return False
    b = there(ctx)
    if b is not None:
        a = f.get("value")
        kinds = trusted.type_(a) is float and trusted.type_(b) is float
        return kinds and abs(a - b) <= FLOAT_TOLERANCE[1] + FLOAT_TOLERANCE[0] * abs(b)
    for k in set(e) | set(f):
        a, b = f.get(k), e.get(k)
        if trusted.type_(a) is float and trusted.type_(b) is float:
            ok = abs(a - b) <= _LOOSE[1] + _LOOSE[0] * abs(b)
        else:
            ok = close(a, b, _LOOSE if k == "value" else (1e-4, 1e-5))
        if not ok:
            return False
    return True


def _outer(case: dict, device: torch.device):
    """What the caller calls from: its ``torch.no_grad()``, or autocast's default dtype for
    the device set to float16, as a GPU's is (a function that leaves out ``dtype=`` computes
    in float16 there). Not a float16 autocast region around the call: backward inside it
    would run in float16, and so the same answer with backward inside or after its own
    bfloat16 block would give other gradients."""
    if case.get("outer") == _FLOAT16_DEFAULT:
        return _autocast_default(device, torch.float16)
    return trusted.no_grad() if case.get("outer") else None


def _autocast_default(device: torch.device, dtype: torch.dtype):
    read = functools.partial(trusted.get_autocast_dtype, device.type)
    write = functools.partial(trusted.set_autocast_dtype, device.type)
    return set_during(read, write, dtype)


_FLOAT16_DEFAULT = "autocast_default_float16"  # domain says it under the prompt
_FROZEN_HELD = Text(
    ", model[0] frozen after the optimizer was made (it still holds model[0]'s parameters)",
    "，model[0] 在优化器创建之后才被冻结（优化器仍持有 model[0] 的参数）",
)
_OUTER_TEXT = {
    True: Text(", called under torch.no_grad()", "，在 torch.no_grad() 下调用"),
    _FLOAT16_DEFAULT: Text(
        ", autocast's default dtype set to float16 (torch.set_autocast_dtype)",
        "，autocast 的默认 dtype 被设为 float16（torch.set_autocast_dtype）",
    ),
}

_LOGGED = {  # what the instruments log, as feedback says it
    "the global random state after the call": Text(
        "the global random state after the call", "调用之后的全局随机状态"
    ),
    "BatchNorm/Dropout calls in training mode": Text(
        "BatchNorm/Dropout calls in training mode", "以训练模式运行的 BatchNorm/Dropout 调用次数"
    ),
}


class _Spec(Spec):
    """What every check here shares: the device is logged, not compared; RNG by a draw."""

    def compared(self, base: str, fields: dict) -> dict:
        if base == "device":
            return {}
        if base == "torch":  # the check seeds the generator: the draw after the call counts
            return {k: v for k, v in fields.items() if k != "rng_consumed"}
        return fields

    def label(self, base: str) -> str | Text:
        if base in _LOGGED:
            return _LOGGED[base]
        if base.startswith("dtype of ") and base.endswith("'s output"):
            module = base.removeprefix("dtype of ").removesuffix("'s output")
            return Text("the dtype of {m}'s output", "{m} 输出的 dtype").format(m=module)
        if base.startswith("probe:grad "):  # CheckpointedForward's probes
            return f"{base.removeprefix('probe:grad ')}.grad"
        return super().label(base)

    def explain(self, message: str) -> Text | None:
        return _explain(message)


# Exercise 1 (SC-1): each block under checkpoint -------------------------------------------


def _block(width: int, hidden: int, p: float) -> torch.nn.Sequential:
    return torch.nn.Sequential(
        torch.nn.Linear(width, hidden),
        torch.nn.Tanh(),
        SeededDropout(p),
        torch.nn.Linear(hidden, width),
    )


def _frozen_input_lost(e: dict, f: dict, ctx) -> bool:
    """x needs no gradient and nothing came out with a graph, or backward found none."""
    return not ctx.case["x_grad"] and not ctx.found.get("result", {}).get("requires_grad")


def _rng_not_preserved(e: dict, f: dict, ctx) -> bool:
    """Dropout trains, the forward matches, every block was recomputed: the masks differ."""
    probe = ctx.found.get("probe", {})
    recomputed = probe.get("forward calls") == ctx.expected.get("probe", {}).get("forward calls")
    same = close(
        ctx.found["result"].get("value"), ctx.expected["result"].get("value"), (1e-4, 1e-5)
    )
    return ctx.case["mode"] != "eval" and recomputed and same


@dataclass(frozen=True)
class CheckpointedForward(_Spec):
    """checkpointed_forward(blocks, x): every block under checkpoint(use_reentrant=False)."""

    number = 1
    seed: int = 0
    depth: int = 3
    width: int = 6
    batch: int = 4
    device: str | None = None

    names = {"result": "checkpointed_forward(blocks, x)"}
    probes = {
        "forward calls": Text(
            "forward calls of each block, forward and backward together (a pre-hook counts)",
            "每个块的 forward 调用次数，前向与反向合计（由前向预钩子计数）",
        ),
        "saved bytes": Text(
            "bytes of the tensors saved for backward outside checkpoints (at most the expected)",
            "检查点之外为反向传播保存的张量字节数（不超过期望值）",
        ),
        "backward": Text(
            "backward through the result with a random incoming gradient",
            "以随机的上游梯度对结果做反向传播",
        ),
        "recomputed": Text(
            "the blocks backward recomputed, in order (§2: a block under its own checkpoint is"
            " recomputed when the gradient reaches it, the last block first, and only if a"
            " gradient must flow through it; blocks under one checkpoint are recomputed"
            " together, the first block first)",
            "反向传播重新计算的块，按顺序（§2：单独使用梯度检查点的块在梯度传到它时才重新计算，"
            "最后一个块最先，而且只在有梯度要经过它时才重新计算；同一个检查点下的几个块一起"
            "重新计算，从第一个块开始）",
        ),
    }
    allow = (Rule("probe:saved bytes", lambda e, f, ctx: _fewer_bytes(e, f)),)
    blame = (
        Rule("result", _frozen_input_lost, "SC-1"),
        Rule("probe:*", _frozen_input_lost, "SC-1"),
        Rule("probe:grad *", _rng_not_preserved, "SC-1"),
    )

    def cases(self) -> list[dict]:
        # (blocks[0] frozen, x requires grad): all four in every matrix. Frozen and x free
        # is where only a checkpoint per block leaves blocks[0] out of the recomputation.
        needs = [(True, False), (False, True), (False, False), (True, True)]
        axes = {
            "needs": needs,
            "mode": ["train", "mixed", "eval"],
            "layout": list(_LAYOUTS),
            "stale": list(_STALE),
            "dtype": ["float32", "float64"],
            "depth": [self.depth, self.depth + 1],
            "batch": [self.batch, self.batch + 3, 1],
            "p": [0.5, 0.25],
            "outer": [False, True, False],
        }
        cases = draw(self.seed, axes, len(needs))
        for case in cases:
            case["frozen"], case["x_grad"] = case.pop("needs")
        return [*cases, {**cases[1], "bare": True}]  # a last block that is one bare layer

    def describe(self, case: dict) -> Text:
        x_grad = (
            Text("x requires grad", "x 需要梯度")
            if case["x_grad"]
            else Text("x does not require grad", "x 不需要梯度")
        )
        frozen = Text(", blocks[0] frozen", "，blocks[0] 被冻结") if case["frozen"] else ""
        if case.get("bare"):
            frozen = Text(
                "{f}, the last block a Dropout layer itself (no parameters, no Sequential)",
                "{f}，最后一个块就是一个 Dropout 层（没有参数，也不是 Sequential）",
            ).format(f=frozen)
        return Text(
            "{n} blocks in {m} with Dropout(p={p}){f}, {s}, {x}, {l}, batch {b}, {t}{o}",
            "{n} 个块，处于{m}，含 Dropout(p={p}){f}，{s}，{x}，{l}，批次大小 {b}，{t}{o}",
        ).format(
            o=_OUTER_TEXT.get(case["outer"], ""),
            n=case["depth"],
            m=_MODES[case["mode"]],
            p=case["p"],
            f=frozen,
            s=_STALE[case["stale"]],
            x=x_grad,
            l=_LAYOUTS[case["layout"]],
            b=case["batch"],
            t=case["dtype"],
        )

    def build(self, case: dict, device) -> World:
        dtype, width = getattr(torch, case["dtype"]), self.width

        def make():
            blocks = [_block(width, width + 2, case["p"]) for _ in range(case["depth"])]
            if case.get("bare"):  # a layer itself, not a Sequential of layers
                blocks[-1] = SeededDropout(case["p"])
            return torch.nn.Sequential(*blocks)

        blocks = seeded_model(make, self.seed, dtype, device)
        set_mode(blocks, case["mode"])
        if case["frozen"]:
            blocks[0].requires_grad_(False)
        leave_grads(blocks.parameters(), case["stale"], self.seed + 100)
        x = laid_out(self.seed + 1, case["batch"], width, case["layout"], device, dtype)
        if case["x_grad"]:
            x.requires_grad_()
        world = World((blocks, x), {"blocks": blocks, "x": x}, device)
        world.calls = [0] * case["depth"]
        world.order = []  # the blocks' forward calls in order, forward and backward together
        world.saved = 0
        for k, block in enumerate(blocks):
            block.register_forward_pre_hook(lambda m, args, k=k: _count(world, k))
        world.g = uniform(self.seed + 2, case["batch"], width, device=device, dtype=dtype)
        return world

    between = Text(
        "replaced blocks[1] with a new block of the same shape and mode",
        "把 blocks[1] 换成了一个形状和模式都相同的新块",
    )

    def between_calls(self, world: World, case: dict) -> None:
        """The caller swaps in a block of other weights (a wrapper or a list of blocks
        remembered from the first call, by the Sequential's id, still runs the old one)."""
        blocks, old = world.args[0], world.args[0][1]
        width, weights = self.width, next(old.parameters())
        new = seeded_model(
            lambda: _block(width, width + 2, case["p"]),
            self.seed + 50,
            weights.dtype,
            weights.device,
        )
        new.train(old.training)
        new.requires_grad_(weights.requires_grad)
        new.register_forward_pre_hook(lambda m, args: _count(world, 1))
        blocks[1] = new

    def calling(self, world: World, case: dict, fn):
        def pack(t):
            world.saved += t.numel() * t.element_size()
            return t

        hooks = trusted.saved_tensors_hooks(pack, lambda t: t)
        stack = contextlib.ExitStack()
        stack.enter_context(seeded_call(world, self.seed * 31 + 7, hooks))
        outer = _outer(case, world.device)
        if outer is not None:
            stack.enter_context(outer)
        return stack

    def probe(self, world: World, value, again) -> dict:
        if trusted.type_(value) not in TENSORS or value.shape != world.g.shape:
            return {}
        found: dict = {"saved bytes": world.saved}
        leaves = [(n, t) for n, t in world.tensors() if t.is_leaf and t.requires_grad]
        for _, t in leaves:
            t.grad = None
        before_backward = len(world.order)
        with _fork_rng(devices=[]):  # a recomputation that does not restore draws other masks
            _seed_cpu(self.seed * 31 + 11)
            done = call(lambda: value.backward(world.g))
        recomputed = world.order[before_backward:]
        found["backward"] = "no exception" if done.ok else trusted.type_(done.error).__name__
        for name, t in leaves:
            found[f"grad {name}"] = None if t.grad is None else cpu_copy(t.grad)
        found["forward calls"] = ", ".join(str(n) for n in world.calls)
        found["recomputed"] = str(recomputed)
        return found

    def probe_text(self, name: str) -> Text:
        if name.startswith("grad "):
            return Text(
                "{t}.grad after backward through the result (stale .grad set aside)",
                "对结果反向传播之后的 {t}.grad（不计残留的 .grad）",
            ).format(t=name[5:])
        return super().probe_text(name)


def _count(world: World, k: int) -> None:
    world.calls[k] += 1
    world.order.append(k)


def _fewer_bytes(e: dict, f: dict) -> bool:
    a, b = f.get("value"), e.get("value")
    return trusted.type_(a) is int and trusted.type_(b) is int and a <= b


_REDUCED_GRAD = "attempting to assign a gradient with dtype"


def _explain(message: str) -> Text | None:
    if _REDUCED_GRAD in message:
        return Text(
            "a parameter's .grad has the parameter's dtype: under autocast, float32"
            " parameters keep float32 gradients",
            "参数的 .grad 与参数的 dtype 相同：在 autocast 下，float32 参数的梯度仍是 float32",
        )
    if "does not require grad" in message:
        return Text(
            "backward found no graph: made under an outer torch.no_grad(), or from tensors"
            " none of which requires grad (with use_reentrant=True, checkpoint builds none"
            " when no input tensor requires grad, even though the parameters do)",
            "反向传播找不到计算图：它是在外层的 torch.no_grad() 下、或由都不需要梯度的张量"
            "算出来的（use_reentrant=True 时，只要没有输入张量需要梯度，checkpoint"
            " 就不建图，即使参数需要梯度）",
        )
    if "randomness" in message:
        return Text(
            "a random operation ran under vmap: the model must be in evaluation mode, or"
            " vmap needs randomness='different'/'same'",
            "vmap 下执行了随机运算：模型需要处于评估模式，"
            "或者给 vmap 传 randomness='different'/'same'",
        )
    if "more than 1 value per channel" in message:
        return Text(
            "BatchNorm ran in training mode on a batch of one sample",
            "BatchNorm 在训练模式下处理了只有一个样本的批次",
        )
    return None


check_checkpointed_forward = checker(CheckpointedForward)


# Models of exercises 2 and 3 ---------------------------------------------------------------

_LOSSES = {  # name: (description, loss_fn, whether the target holds class indices)
    "mse": ("F.mse_loss", F.mse_loss, False),
    "mse_module": ("nn.MSELoss()", torch.nn.MSELoss(), False),
    "cross_entropy": ("F.cross_entropy", F.cross_entropy, True),
    "smooth_l1_module": ("nn.SmoothL1Loss()", torch.nn.SmoothL1Loss(), False),
    "cross_entropy_module": ("nn.CrossEntropyLoss()", torch.nn.CrossEntropyLoss(), True),
}

# What the caller passes on its second call, by whether the target holds class indices: a loss
# of the same family whose gradients differ from every one above.
_SECOND_LOSS = {
    False: torch.nn.MSELoss(reduction="sum"),
    True: torch.nn.CrossEntropyLoss(label_smoothing=0.2),
}


class _LossPassed(_Spec):
    """A check whose caller passes another loss function of the same kind of target before
    its third call: a function transformed (or an optimizer built) around the first call's
    loss is stale, and a loss module replaced by its functional form loses its options."""

    between = Text("passed another loss function", "传入了另一个损失函数")

    def between_calls(self, world: World, case: dict) -> None:
        args = list(world.args)
        args[1] = _SECOND_LOSS[_LOSSES[case["loss"]][2]]
        world.args = tuple(args)


def _mlp(n_in: int, hidden: int, n_out: int, layers: str) -> torch.nn.Sequential:
    """Linear → [BatchNorm1d] → Tanh → [Dropout] → Linear; ``layers`` names what is there
    ("bn_first": the BatchNorm1d before the first Linear instead)."""
    if layers == "bare":  # buffers and no parameter: nothing to take a device or dtype from
        return torch.nn.Sequential(
            torch.nn.BatchNorm1d(n_in, affine=False), torch.nn.RReLU(), SeededDropout(0.25)
        )
    body: list[torch.nn.Module] = [torch.nn.Linear(n_in, hidden)]
    if layers == "bn_first":  # a first layer autocast leaves in the input's dtype
        body.insert(0, torch.nn.BatchNorm1d(n_in))
    elif "bn" in layers:
        body.append(torch.nn.BatchNorm1d(hidden))
    body.append(torch.nn.Tanh())
    if "dropout" in layers:
        body.append(SeededDropout(0.25))
    body.append(torch.nn.Linear(hidden, n_out))
    return torch.nn.Sequential(*body)


def _target(seed: int, case: dict, rows: int, n_out: int, device) -> torch.Tensor:
    if _LOSSES[case["loss"]][2]:
        g = trusted.generator().manual_seed(seed)
        return trusted.randint(n_out, (rows,), generator=g).to(device)
    return uniform(seed, rows, n_out, device=device)


_KINDS = {  # a case's "layers", as feedback says them
    "plain": Text("plain", "普通"),
    "bn": Text("with BatchNorm", "含 BatchNorm"),
    "dropout": Text("with Dropout", "含 Dropout"),
    "bn+dropout": Text("with BatchNorm and Dropout", "含 BatchNorm 与 Dropout"),
    "bare": Text("BatchNorm, RReLU, Dropout, no parameter", "BatchNorm、RReLU、Dropout，没有参数"),
    "bn_first": Text("BatchNorm first, then plain", "先是 BatchNorm，然后是普通层"),
}


def _reduced_params(e: dict, f: dict, ctx) -> bool:
    """A parameter, buffer or gradient found in float16/bfloat16 where float32 was expected."""
    return f.get("dtype") in ("torch.bfloat16", "torch.float16") and e.get("dtype") != f.get(
        "dtype"
    )


# Exercise 2 (SC-2, SC-3): a bfloat16 training step ------------------------------------------


def _scaled(e: dict, f: dict, ctx) -> bool:
    """Found = k · expected for one k > 1.5: a scaled loss, never unscaled (GradScaler)."""
    ev, fv = e.get("value"), f.get("value")
    if trusted.type_(ev) is float and trusted.type_(fv) is float:
        return abs(ev) > 1e-6 and fv / ev > 1.5 and close(fv, ev * round(fv / ev), (1e-2, 0))
    if trusted.type_(ev) not in TENSORS or trusted.type_(fv) not in TENSORS:
        return False
    if ev.shape != fv.shape or not bool(ev.abs().max() > 0):
        return False
    k = float((fv.double().abs().sum() / ev.double().abs().sum()).item())
    return k > 1.5 and close(fv.double(), ev.double() * k, (1e-2, 1e-6))


def _stale_added(e: dict, f: dict, ctx) -> bool:
    """The gradient step() saw is this step's plus the stale .grad: never zeroed (RG-4)."""
    stale = ctx.before.get(ctx.base.split(" when ")[0], {}).get("value")
    ev, fv = e.get("value"), f.get("value")
    if any(trusted.type_(v) not in TENSORS for v in (ev, fv, stale)):
        return False
    if not (ev.shape == fv.shape == stale.shape) or not bool(stale.abs().max() > 0):
        return False
    return close(fv.double(), ev.double() + stale.double(), (1e-3, 1e-5))


def _copies(world: World) -> tuple:
    """The caller's model, loss, input and target as they are right before the call; the
    copied model without the check's own instruments (they log the caller's run only)."""
    model, loss_fn, x, target, _ = world.args
    twin = trusted.deepcopy(model)
    for m in twin.modules():
        m._forward_hooks.clear()
        m._forward_pre_hooks.clear()
    return twin, loss_fn, x.detach().clone(), target.detach().clone()


def _loss_there(call_seed: int) -> Callable[..., dict]:
    """The forward pass and loss the task asks for, under bfloat16 autocast on the device,
    the CPU generator seeded as for the call (so its ``SeededDropout`` masks are the
    call's). The reference's loss on the CPU differs in bfloat16's last bits, so a returned
    loss on a GPU is held to this one (``_loosely_close``): a loss rounded to bfloat16
    before ``.item()`` shows there too."""

    def run(model, loss_fn, x, target) -> dict:
        with _fork_rng(devices=[]), trusted.set_grad_enabled(True):
            _seed_cpu(call_seed)
            with _torch_autocast(x.device.type, dtype=torch.bfloat16):
                loss = loss_fn(model(x), target)
        return {"result": float(loss.item())}

    return run


@dataclass(frozen=True)
class Bf16TrainStep(_LossPassed):
    """bf16_train_step: forward and loss under bfloat16 autocast, backward and step outside."""

    number = 2
    seed: int = 0
    width: int = 5
    batch: int = 6
    lr: float = 0.1
    device: str | None = None

    names = {"result": "bf16_train_step(model, loss_fn, x, target, optimizer)"}
    allow = (
        Rule("model*.grad"),  # what .grad holds after the step is not part of the task
        Rule("*", _loosely_close),
    )
    blame = (
        Rule("model*", _reduced_params, "SC-2"),
        Rule("x", _reduced_params, "SC-2"),
        Rule("model*.grad when *", _reduced_params, "SC-2"),
        Rule("model*.grad when *", _scaled, "SC-3"),
        Rule("model*.grad when *", _stale_added, "RG-4"),
        Rule("result", _scaled, "SC-3"),
    )

    def cases(self) -> list[dict]:
        axes = {
            "mode": ["train", "eval", "mixed"],
            "layers": ["bn+dropout", "plain", "bn", "dropout"],
            "stale": list(_STALE),
            "frozen": [False, True],
            "optimizer": list(OPTIMIZERS),
            "loss": list(_LOSSES),
            "layout": list(_LAYOUTS),
            "batch": [self.batch, self.batch + 3],
            "lr": [self.lr, self.lr / 2, self.lr * 1.5],
            "outer": [False, _FLOAT16_DEFAULT],
            "groups": list(GROUPS),
        }
        drawn = draw(self.seed, axes, 3)
        # every seed: BatchNorm in training mode (batch statistics, running ones updated)
        if not any(c["mode"] == "train" and c["layers"].startswith("bn") for c in drawn):
            drawn.append({**drawn[0], "mode": "train", "layers": "bn"})
        return [*drawn, {**drawn[1], "mode": "train", "layers": "bn_first"}]

    def describe(self, case: dict) -> Text:
        frozen = _FROZEN_HELD if case["frozen"] else ""
        text = Text(
            "model ({y}) in {m}{f}, {s}, loss_fn={loss}, {o}(lr={lr:g}), {l}, batch {b}{c}",
            "模型（{y}）处于{m}{f}，{s}，loss_fn={loss}，{o}(lr={lr:g})，{l}，批次大小 {b}{c}",
        ).format(
            c=_OUTER_TEXT.get(case["outer"], ""),
            y=_KINDS[case["layers"]],
            m=_MODES[case["mode"]],
            f=frozen,
            s=_STALE[case["stale"]],
            loss=_LOSSES[case["loss"]][0],
            o=case["optimizer"],
            lr=case["lr"],
            l=_LAYOUTS[case["layout"]],
            b=case["batch"],
        )
        return with_groups(text, case)

    def build(self, case: dict, device) -> World:
        n_out = 3
        model = seeded_model(
            lambda: _mlp(self.width, self.width + 3, n_out, case["layers"]),
            self.seed,
            torch.float32,
            device,
        )
        set_mode(model, case["mode"])
        if case["frozen"]:
            model[0].requires_grad_(False)
        leave_grads(model.parameters(), case["stale"], self.seed + 100)
        x = laid_out(
            self.seed + 1, case["batch"], self.width, case["layout"], device, torch.float32
        )
        target = _target(self.seed + 2, case, case["batch"], n_out, device)
        trainable = [p for p in model.parameters() if p.requires_grad]
        # frozen after its optimizer was made, which still holds every parameter
        held = list(model.parameters())
        optimizer = OPTIMIZERS[case["optimizer"]](grouped(held, case), case["lr"])
        loss_fn = _LOSSES[case["loss"]][1]
        objects = {"model": model, "x": x, "target": target}
        world = World((model, loss_fn, x, target, optimizer), objects, device)
        watch_dtypes(world, model, per_device=False)
        names = {id(p): f"model{dotted(k)}" for k, p in model.named_parameters()}
        grads_at_step(world, optimizer, "optimizer.step()", names, trainable)
        return world

    def calling(self, world: World, case: dict, fn):
        stack = contextlib.ExitStack()
        if fn is not None:  # the check's own step on a GPU, after everything else is logged
            stack.enter_context(OnTheDevice(world, _copies, _loss_there(self.seed * 31 + 5)))
        stack.enter_context(seeded_call(world, self.seed * 31 + 5, _outer(case, world.device)))
        return stack

    def classify(self, message: str) -> str | None:
        return "SC-2" if _REDUCED_GRAD in message else None


check_bf16_train_step = checker(Bf16TrainStep)


# Exercise 3 (SC-2, EV-2, EV-4): predictions under autocast and inference mode --------------


def _trained_in_call(e: dict, f: dict, ctx) -> bool:
    """BatchNorm or Dropout ran in training mode: inference mode trusted to switch them."""
    calls = ctx.found.get("BatchNorm/Dropout calls in training mode", {}).get("value", 0)
    return trusted.type_(calls) is int and calls > 0


def _left_in_eval(e: dict, f: dict, ctx) -> bool:
    """A module that arrived in training mode is left in evaluation mode."""
    return e.get("training") is True and f.get("training") is False


@dataclass(frozen=True)
class AutocastPredict(_Spec):
    """autocast_predict(model, x): float32 predictions, evaluation mode, inference, autocast."""

    number = 3
    seed: int = 0
    width: int = 5
    batch: int = 6
    device: str | None = None

    names = {"result": "autocast_predict(model, x)"}
    allow = (Rule("*", _loosely_close),)
    blame = (
        Rule("model*", _reduced_params, "SC-2"),
        Rule("x", _reduced_params, "SC-2"),
        Rule("BatchNorm/Dropout calls in training mode", None, "EV-2"),
        Rule("result", _trained_in_call, "EV-2"),
        Rule("model*", _left_in_eval, "EV-4"),
    )

    def cases(self) -> list[dict]:
        axes = {
            "mode": ["mixed", "train", "eval"],
            "layers": ["bn+dropout", "bn", "dropout"],
            "stale": list(_STALE),
            "frozen": [False, True],
            "layout": list(_LAYOUTS),
            "batch": [self.batch, 1, self.batch + 3],
            "outer": [False, False, True],
            "x dtype": ["float32", "float32", "bfloat16"],  # the result is float32 whatever x is
            "nested": [False, True],  # the layers in a body: modes of grandchildren
        }
        drawn = draw(self.seed, axes, 4)
        training_root = {**drawn[1], "mode": "mixed_train", "nested": False}
        # the caller's autocast default dtype float16 on this device: an autocast region
        # that leaves out dtype= computes in float16, not the bfloat16 a CPU x asks for
        float16_default = {**drawn[2], "outer": _FLOAT16_DEFAULT, "raises": False}
        # a CPU x on a machine that also has a usable CUDA GPU (simulated): the CPU's
        # bfloat16 still, whatever torch.cuda.is_available() says
        gpu_machine = {**drawn[3], "raises": False, "gpu_machine": True}
        cases = [*drawn, training_root, raising(drawn[0], mode="mixed"), float16_default]
        float64_default = {**drawn[1], "raises": False, "default_dtype": "float64"}
        bare = {**drawn[0], "layers": "bare", "mode": "train", "raises": False}  # no parameter
        return [*cases, gpu_machine, float64_default, bare]

    def describe(self, case: dict) -> Text:
        frozen = Text(", model[0] frozen", "，model[0] 被冻结") if case["frozen"] else ""
        outer = _OUTER_TEXT.get(case["outer"], "")
        if case["x dtype"] == "bfloat16":
            outer = Text("{o}, x in bfloat16", "{o}，x 为 bfloat16").format(o=outer)
        if case["nested"]:
            outer = Text(
                "{o}, the layers nested inside model[0] (a Sequential in the Sequential)",
                "{o}，各层嵌套在 model[0] 之内（Sequential 里的 Sequential）",
            ).format(o=outer)
        if case.get("gpu_machine"):
            outer = Text(
                "{o}, on a machine with a usable CUDA GPU (simulated where there is none)",
                "{o}，机器上有可用的 CUDA GPU（没有 GPU 时为模拟）",
            ).format(o=outer)
        text = Text(
            "model ({y}) in {m}{f}, {s}, {l}, batch {b}{o}",
            "模型（{y}）处于{m}{f}，{s}，{l}，批次大小 {b}{o}",
        ).format(
            y=_KINDS[case["layers"]],
            m=_MODES[case["mode"]],
            f=frozen,
            s=_STALE[case["stale"]],
            l=_LAYOUTS[case["layout"]],
            b=case["batch"],
            o=outer,
        )
        return with_callers_context(with_raising(text, case), case)

    def build(self, case: dict, device) -> World:
        model = seeded_model(
            lambda: _mlp(self.width, self.width + 3, 3, case["layers"]),
            self.seed,
            torch.float32,
            device,
        )
        if case["nested"]:
            model = torch.nn.Sequential(model[:-1], model[-1])
        set_mode(model, case["mode"])
        if case["nested"]:
            set_mode(model[0], case["mode"])
        if case["frozen"]:
            model[0].requires_grad_(False)
        leave_grads(model.parameters(), case["stale"], self.seed + 100)
        dtype = getattr(torch, case["x dtype"])
        x = laid_out(self.seed + 1, case["batch"], self.width, case["layout"], device, dtype)
        if case.get("raises"):
            x = one_short(x)
        world = World((model, x), {"model": model, "x": x}, device)
        watch_dtypes(world, model, per_device=True)
        return world

    between = MODE_SWITCHED

    def between_calls(self, world: World, case: dict) -> None:
        switch_mode(world.args[0])

    def calling(self, world: World, case: dict, fn):
        seeded = seeded_call(world, self.seed * 31 + 3, _outer(case, world.device))
        if not case.get("gpu_machine") or world.device.type != "cpu":
            return seeded
        stack = contextlib.ExitStack()
        stack.enter_context(machine("cuda", 1, fn))  # torch.cuda answers as on a GPU machine
        stack.enter_context(seeded)
        return stack

    def blame_error(self, message: str, case: dict) -> str | None:
        """BatchNorm trained on a batch of one: the model was never put in evaluation mode
        (inference_mode does not switch it)."""
        return "EV-2" if ONE_SAMPLE_IN_TRAINING in message else None


check_autocast_predict = checker(AutocastPredict)


# Exercise 4 (SC-5): per-sample gradients ---------------------------------------------------


def _accumulated(e: dict, f: dict, ctx) -> bool:
    """Each sample's gradient holds the samples before it too (.grad never cleared)."""
    ev, fv = e.get("value"), f.get("value")
    if trusted.type_(ev) not in TENSORS or trusted.type_(fv) not in TENSORS:
        return False
    return ev.shape == fv.shape and ev.shape[0] > 1 and close(fv, ev.cumsum(0), (1e-3, 1e-5))


@dataclass(frozen=True)
class PerSampleGrads(_LossPassed):
    """per_sample_grads: {name: (batch, *shape)} gradients of each sample's loss, .grad intact."""

    number = 4
    seed: int = 0
    width: int = 4
    batch: int = 5
    device: str | None = None

    names = {"result": "per_sample_grads(model, loss_fn, x, y)"}
    before_second = Text(
        "assigned a new Parameter to model[0].weight", "给 model[0].weight 换上了一个新的参数"
    )
    blame = (Rule("model*.grad", None, "SC-5"), Rule("result[*", _accumulated, "SC-5"))

    def cases(self) -> list[dict]:
        axes = {
            "layers": ["plain", "bn+dropout"],  # plain models train, the others are evaluated
            "stale": list(_STALE),
            "frozen": [True, False, False],
            "loss": list(_LOSSES),
            "layout": list(_LAYOUTS),
            "dtype": ["float32", "float64"],
            "batch": [self.batch, 1, self.batch + 2],
            "outer": [False, True, False],
        }
        return draw(self.seed, axes, 4)

    def describe(self, case: dict) -> Text:
        mode = _MODES["train" if case["layers"] == "plain" else "eval"]
        frozen = Text(", model[0] frozen", "，model[0] 被冻结") if case["frozen"] else ""
        outer = _OUTER_TEXT.get(case["outer"], "")
        return Text(
            "model ({y}) in {m}{f}, {s}, loss_fn={loss}, {l}, batch {b}, {t}{o}",
            "模型（{y}）处于{m}{f}，{s}，loss_fn={loss}，{l}，批次大小 {b}，{t}{o}",
        ).format(
            y=_KINDS[case["layers"]],
            m=mode,
            f=frozen,
            s=_STALE[case["stale"]],
            loss=_LOSSES[case["loss"]][0],
            l=_LAYOUTS[case["layout"]],
            b=case["batch"],
            t=case["dtype"],
            o=outer,
        )

    def build(self, case: dict, device) -> World:
        dtype = getattr(torch, case["dtype"])
        model = seeded_model(
            lambda: _mlp(self.width, self.width + 2, 3, case["layers"]), self.seed, dtype, device
        )
        model.train(case["layers"] == "plain")
        if case["frozen"]:
            model[0].requires_grad_(False)
        leave_grads(model.parameters(), case["stale"], self.seed + 100)
        x = laid_out(self.seed + 1, case["batch"], self.width, case["layout"], device, dtype)
        y = _target(self.seed + 2, case, case["batch"], 3, device)
        if not _LOSSES[case["loss"]][2]:
            y = y.to(dtype)
        args = (model, _LOSSES[case["loss"]][1], x, y)
        return World(args, {"model": model, "x": x, "y": y}, device)

    def before_second_call(self, world: World, case: dict) -> None:
        """A new weight, with the same loss function: parameters taken once per model (or
        per model and loss) are stale."""
        model = world.args[0]
        old = model[0].weight
        with trusted.no_grad():
            new = trusted.parameter_type(old.flip(0) * 2, requires_grad=old.requires_grad)
        new.grad = old.grad
        model[0].weight = new

    def calling(self, world: World, case: dict, fn):
        return seeded_call(world, self.seed * 31 + 1, _outer(case, world.device))

    def explain(self, message: str) -> Text | None:
        if "does not require grad" in message:  # a loop under the outer no_grad, most often
            return Text(
                "backward found no graph: the check also calls your function under an outer"
                " torch.no_grad(), as the prompt says, where nothing is recorded (or nothing you"
                " differentiated requires grad); torch.func.grad computes gradients there"
                " anyway, while a loop that calls backward() or torch.autograd.grad needs"
                " torch.enable_grad() inside your function, and parameters or copies of them"
                " that require grad (§6)",
                "反向传播找不到计算图：题目写明，检查还会在外层的 torch.no_grad() 下调用你的函数，"
                "那里什么都不记录（或者你求导的对象都不需要梯度）；torch.func.grad 在那里照样"
                "能算出梯度，而调用 backward() 或 torch.autograd.grad 的循环需要在函数内部使用"
                " torch.enable_grad()，并且参数或参数的副本要需要梯度（§6）",
            )
        return _explain(message)


check_per_sample_grads = checker(PerSampleGrads)


EXERCISES = numbered(
    globals(),
    ("checkpointed_forward", "every block under checkpoint", "每个块都用检查点", "SC-1"),
    (
        "bf16_train_step",
        "a training step under bfloat16 autocast",
        "bfloat16 autocast 下的训练步",
        "SC-2 SC-3",
    ),
    (
        "autocast_predict",
        "predictions under autocast and inference mode",
        "autocast 与推理模式下的预测",
        "SC-2",
    ),
    (
        "per_sample_grads",
        "per-sample gradients with torch.func",
        "用 torch.func 计算逐样本梯度",
        "SC-5",
    ),
)

self_check = self_checker(EXERCISES)
