"""How a check's case describes the caller's state, in both languages, for every lesson.

Several lessons draw the same caller states (a model's modes on arrival, what its
parameters' ``.grad`` holds); one wording serves them all, so that feedback names a
state the same way wherever it appears.
"""

from __future__ import annotations

from autograder.common import trusted
from autograder.common.i18n import Text
from autograder.common.inputs import uniform

MODES = {
    "train": Text("training mode", "训练模式"),
    "eval": Text("evaluation mode", "评估模式"),
    "mixed": Text("mixed modes", "混合模式"),
    "mixed_train": Text("mixed modes, the model itself training", "混合模式，模型本身处于训练模式"),
}


def set_mode(model, mode: str) -> None:
    """The model's modes on arrival, as ``MODES`` names them: "train", "eval", "mixed"
    (evaluation mode except every other child, which trains) or "mixed_train" (the other
    way round: training mode except every other child, which evaluates; a mode put back by
    a recursive ``train()`` on what was training switches those children too)."""
    model.train(mode in ("train", "mixed_train"))
    for m in list(model.children())[::2] if mode.startswith("mixed") else ():
        m.train(mode == "mixed")


# What a caller does between two calls of a function that puts modes back (``Spec.between``,
# ``between_calls``): modes remembered from an earlier call, not read anew, come back wrong.
MODE_SWITCHED = Text(
    "switched the model's mode (model.train() or model.eval())",
    "切换了模型的模式（model.train() 或 model.eval()）",
)


def switch_mode(model) -> None:
    """The caller's switch between calls: the model, and every module in it, to the other
    mode."""
    model.train(not model.training)


# a case's "hooked": a layer the function works on carries a forward hook of the caller's
# own (a progress meter, a shape check). It stays, and keeps running: clearing the layer's
# ``_forward_hooks`` instead of removing one's own handle takes the caller's hook too.
HOOKED = Text(
    ", the layer carrying a forward hook of the caller's",
    "，该层上挂着调用者自己的前向钩子",
)
HOOK_CALLS = "calls of the caller's hook"  # what the hook logs, and how feedback names it
HOOK_CALLS_NAMED = {
    HOOK_CALLS: Text("calls of the caller's own forward hook", "调用者自己的前向钩子被调用的次数")
}


def hook_of_callers(world, layer) -> None:
    """The caller's own forward hook on ``layer``: it counts the layer's calls into
    ``world.logged``, which every check compares with the reference's count (say
    ``HOOK_CALLS_NAMED`` in the spec's ``names``)."""
    calls = {"kind": "int", "value": 0}
    world.logged[HOOK_CALLS] = calls
    layer.register_forward_hook(lambda *_: calls.update(value=calls["value"] + 1))


def with_hooked(text: Text, case: dict, clause: Text = HOOKED) -> Text:
    """A case's description, followed by the caller's own hook (``clause`` says on which
    layer) where the case has one."""
    return _followed(text, clause if case.get("hooked") else None)


STALE = {
    "stale": Text("stale .grad", "残留的 .grad"),
    "zero": Text(".grad zeros", ".grad 为零"),
    "none": Text(".grad None", ".grad 为 None"),
}
# what PyTorch says where a BatchNorm in training mode meets a batch of one sample: in a
# case whose model may arrive in training mode, the mark of an answer that never left it
ONE_SAMPLE_IN_TRAINING = "more than 1 value per channel when training"
# a case's "default_dtype": the caller's own torch.set_default_dtype (oracle._callers_context)
DEFAULT_DTYPE = Text(
    ", the caller's default dtype float64 (torch.set_default_dtype)",
    "，调用者的默认 dtype 为 float64（torch.set_default_dtype）",
)


def _followed(text: Text, clause: Text | None) -> Text:
    """A case's description with a clause after it, in both languages (none: as it is)."""
    return text if clause is None else Text(text.en + clause.en, text.zh + clause.zh)


CALLER_NO_GRAD = Text(", called inside torch.no_grad()", "，在 torch.no_grad() 之内调用")


def with_callers_context(text: Text, case: dict) -> Text:
    """A case's description, followed by the caller's torch.no_grad() and default dtype
    where the case has them (oracle._callers_context)."""
    text = _followed(text, CALLER_NO_GRAD if case.get("grad_mode") is False else None)
    return _followed(text, DEFAULT_DTYPE if case.get("default_dtype") else None)


# a case's "groups": the caller's optimizer holds its parameters in one group or in two, as
# one with another learning rate or weight decay for some parameters would
GROUPS = (1, 2)
TWO_GROUPS = Text(
    ", the optimizer's parameters in two param_groups",
    "，优化器的参数分成两个 param_groups",
)


def grouped(params: list, case: dict) -> list:
    """The caller's parameters as its optimizer is made with them: one list, or, where the
    case says two groups, the first half and the rest (a step, a zero_grad or a clip that
    reads only ``param_groups[0]`` then misses some)."""
    if case.get("groups", 1) < 2 or len(params) < 2:
        return params
    half = len(params) // 2
    return [{"params": params[:half]}, {"params": params[half:]}]


def with_groups(text: Text, case: dict) -> Text:
    """A case's description, followed by the optimizer's two groups where the case has them."""
    return _followed(text, TWO_GROUPS if case.get("groups", 1) >= 2 else None)


EVERY_PARAMETER_HELD = Text(
    "; the optimizer holds every parameter, and the frozen layer's still hold the .grad of"
    " their last backward",
    "；优化器持有所有参数，被冻结那一层的参数还留着上一次反向传播的 .grad",
)


def held_by_optimizer(model, case: dict, first_seed: int) -> list:
    """The parameters the caller's optimizer is made with: the trainable ones, or, where the
    case says "every_param", all of them, a layer having been frozen after the optimizer was
    made: its parameters keep the stale ``.grad`` of their last backward (``first_seed`` +
    k), which a step that clears only trainable gradients then steps with."""
    if not case.get("every_param"):
        return [p for p in model.parameters() if p.requires_grad]
    frozen = [p for p in model.parameters() if not p.requires_grad]
    leave_grads(frozen, "stale", first_seed, frozen_too=True)
    return list(model.parameters())


def with_every_parameter_held(text: Text, case: dict) -> Text:
    """A case's description, followed by ``EVERY_PARAMETER_HELD`` where the case says so."""
    return _followed(text, EVERY_PARAMETER_HELD if case.get("every_param") else None)


def stepped_before(optimizer, params: list, first_seed: int) -> None:
    """An optimizer that has taken a step of the caller's (momentum buffers, Adam's moments):
    one step with seeded gradients (``first_seed`` + k for the k-th parameter), each
    parameter's ``.grad`` then left as it was."""
    kept = [p.grad for p in params]
    for k, p in enumerate(params):
        p.grad = uniform(first_seed + k, *p.shape, device=p.device, dtype=p.dtype)
    optimizer.step()
    for p, grad in zip(params, kept, strict=True):
        p.grad = grad


# a case's "raises": partway through the call the model rejects an input one feature short,
# as a model with a shape bug would (``True``; another value names a cause the case builds
# itself, such as one row for BatchNorm in training mode, and leaves the input whole). The
# exception must reach the caller, and whatever the function switched (modes, grad mode,
# hooks) be back as it was: a restore written after the work, not in a ``finally`` or a
# ``with`` block, never runs.
RAISES = Text(
    ", an input one feature short: the model raises partway through the call",
    "，有一个输入少一个特征：模型在调用中途抛出异常",
)


# "raises": "hook": the caller's own forward pre-hook on the model's last layer raises a
# ValueError, not the RuntimeError a shape bug gives (a restore only under `except
# RuntimeError` is left out)
REFUSED = Text(
    ", the caller's forward pre-hook on the last layer raises ValueError partway through",
    "，调用者挂在最后一层上的前向预钩子在调用中途抛出 ValueError",
)


def refusing(model) -> None:
    """The caller's forward pre-hook on ``model``'s last layer, raising (``REFUSED``)."""

    def refuse(module, args):
        raise ValueError("the caller's hook refused this batch")

    list(model.modules())[-1].register_forward_pre_hook(refuse)


def raising(case: dict, **state) -> dict:
    """A case like ``case``, in the caller's ``state`` (e.g. ``outer="no_grad"``), in which
    the call raises (``one_short``)."""
    return {**case, **state, "raises": True}


def one_short(x):
    """``x`` without its last feature: the first layer rejects it (``RAISES``)."""
    return x[..., :-1].clone()


def with_raising(text: Text, case: dict) -> Text:
    """A case's description, followed by the input the model rejects where the case has one."""
    return _followed(text, {True: RAISES, "hook": REFUSED}.get(case.get("raises")))


# a leftover far larger than one step's gradient: subtracting it back loses the new one
LARGE_STALE = {"large": Text("a large stale .grad (about 1e8)", "很大的残留 .grad（约 1e8）")}
# a leftover of a step that overflowed: only discarding it (zero_grad) leaves a finite step
INF_STALE = {
    "inf": Text(
        "a stale .grad of inf (a step that overflowed)", "残留的 .grad 为 inf（某一步溢出）"
    )
}


def leave_grads(params, grads: str | None, first_seed: int, frozen_too: bool = False) -> None:
    """Each trainable parameter's ``.grad`` as an earlier step left it (a case's "grads"):
    "stale" (drawn from ``first_seed`` + k for the k-th of ``params``), "zero", or as it
    is (None, or anything else). ``frozen_too``: tensors that no longer require grad keep
    the ``.grad`` of their training too."""
    for k, p in enumerate(params):
        if not (p.requires_grad or frozen_too):
            continue
        if grads == "stale":
            p.grad = uniform(first_seed + k, *p.shape, device=p.device, dtype=p.dtype)
        elif grads == "zero":
            p.grad = trusted.zeros(p.shape, device=p.device, dtype=p.dtype)
