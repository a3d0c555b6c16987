"""The caller's optimizers, and the gradients each of their steps uses.

Several lessons hand the learner's function an optimizer and judge the gradients its
steps saw: one way of watching a step (also one given a closure) and of telling a
stale ``.grad`` that was added in serves them all.
"""

from __future__ import annotations

import torch

from autograder.common import trusted
from autograder.common.oracle import World, close, differs_only_in, is_zero_or_none
from autograder.common.recorded import TENSORS

# a case's "optimizer": what the caller trains with, made from its parameters and lr
OPTIMIZERS = {
    "sgd": lambda params, lr: torch.optim.SGD(params, lr=lr),
    "momentum": lambda params, lr: torch.optim.SGD(params, lr=lr, momentum=0.9),
    "adam": lambda params, lr: torch.optim.Adam(params, lr=lr),
}


def after_closure(args: tuple, kwargs: dict, log) -> tuple[tuple, dict] | None:
    """Log the gradients a step uses: now, or, where ``step(closure)`` is called (documented
    PyTorch: the step runs the closure, which computes them), right after the closure ran."""
    closure = kwargs.get("closure", args[1] if len(args) > 1 else None)  # args[0]: the optimizer
    if closure is None:
        log()
        return None

    def logged():
        loss = closure()
        log()
        return loss

    if "closure" in kwargs:
        return args, {**kwargs, "closure": logged}
    return (args[0], logged, *args[2:]), kwargs


def grads_at_step(world: World, optimizer, label: str, names: dict, params=None) -> None:
    """Log ``params``' .grad (by ``names``, keyed by id) each time ``label`` (the optimizer's
    step) runs, and count the steps; no ``params``: those the optimizer holds then."""
    world.logged[f"{label} calls"] = {"kind": "int", "value": 0}

    def spy(opt, args, kwargs):
        calls = world.logged[f"{label} calls"]["value"] + 1
        world.logged[f"{label} calls"] = {"kind": "int", "value": calls}

        def log():
            held = [p for group in opt.param_groups for p in group["params"]]
            for p in held if params is None else params:
                world.record(f"{names[id(p)]}.grad when {label} #{calls} ran", p.grad)

        return after_closure(args, kwargs, log)

    optimizer.register_step_pre_hook(spy)


def stale_added(e: dict, f: dict, ctx) -> bool:
    """The gradient seen at step() is this step's plus what the caller left in .grad."""
    stale = ctx.before.get(ctx.base.split(" when ")[0], {}).get("value")
    fv, ev = f.get("value"), e.get("value")
    if trusted.type_(stale) not in TENSORS or trusted.type_(fv) not in TENSORS or ev is None:
        return False
    return bool(stale.any()) and close(fv, ev + stale, (1e-4, 1e-5))


_in_place_only = differs_only_in("changed_in_place")


def zeroed_frozen(e: dict, f: dict, ctx) -> bool:
    """A frozen parameter the optimizer holds ("every_param"), its old .grad zeroed where
    the reference's is None: plain SGD steps it by nothing (in place, so only that differs)."""
    if not ctx.case.get("every_param"):
        return False
    if " when " in ctx.base:
        return is_zero_or_none(e) and is_zero_or_none(f)
    return _in_place_only(e, f, ctx)
