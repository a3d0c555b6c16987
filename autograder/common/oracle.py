"""A differential oracle: a check written as a specification, judged against trusted code.

A :class:`Spec` says how its seed draws a matrix of caller states (``cases``), how one
case's world is built on any device (``build``: the arguments and every caller object),
and what trusted code does in that world (``reference``). ``observe`` builds each world
next to the learner's code, calls the learner's function and records, as plain data,
everything a caller could see afterwards (:func:`state`): the return value, every caller
tensor (values, flags, ``.grad``, in-place changes), every module (modes, parameters,
buffers, hooks), the global random state, and what instruments logged during the call.
``judge`` rebuilds each world on the CPU, refuses an observation whose recorded inputs
are not that world's, and fails on every difference from the reference's state that the
spec does not ``allow``, naming the misconception the spec's ``blame`` gives it. The judge
never calls learner code.

The reference itself is not here. Only the judge's process holds it
(``autograder/references``, registered with :func:`register_reference`); every process
that runs learner code compares with the reference's states computed ahead of time and
shipped as data (:mod:`autograder.common.expectations`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import re
import sys
import zlib
from collections import OrderedDict  # a dict to its caller: the same items, the same uses
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import torch

from autograder.common import compare as c
from autograder.common import expectations, reference_states, trusted
from autograder.common import global_state as global_settings
from autograder.common.domain import USED_FIRST_RESULT, before_second_clause
from autograder.common.i18n import Text
from autograder.common.inputs import resolve_device
from autograder.common.observation import InconsistentObservation
from autograder.common.protocol import Call, Check, call, returned
from autograder.common.result import CheckResult, require

_TENSORS = (torch.Tensor, torch.nn.Parameter)
_SCALARS = (bool, int, float, str)
_rng_state = torch.random.get_rng_state  # taken before any learner code runs
_cuda_rng_state = torch.cuda.get_rng_state
_seed_cpu = torch.default_generator.manual_seed
_seed_cuda = torch.cuda.manual_seed_all
_cuda_here = functools.cache(torch.cuda.is_available)  # asked once, when first seeding
_seed_mps = torch.mps.manual_seed  # does nothing where there is no MPS
RNG_SEED = 20261202  # every call starts from this seed, the reference's and the learner's
_global_hooks = torch.nn.modules.module
_OPTIMIZER = torch.optim.Optimizer
_list_copy, _dict_copy = list.copy, dict.copy  # a plain copy: no subclass's __iter__ runs
MAX_ITEMS = 64
FACT = "fact:"  # bases of the reference's state that carry facts for rules, not outcomes
MAX_RESULTS = 8
SECOND_RESULT = "second result"  # a second call's result, where a third call follows it
LATER = "after the call"  # what changed once the call had returned, as the result was used
TOLERANCE = {  # (rtol, atol) by the reference's dtype
    "torch.float64": (1e-10, 1e-12),  # float32 rounding (6e-8) fails; op order (1e-15) not
    "torch.float32": (1e-4, 1e-5),
    "torch.float16": (1e-2, 1e-2),
    "torch.bfloat16": (2e-2, 2e-2),
}
FLOAT_TOLERANCE = (1e-5, 1e-7)  # Python floats: a loss's .item() from float32 or float64
_NUMBERS = re.compile(r"\d+")  # in an exception's message, compared without them


_REFERENCES: dict[type, Callable[..., Any]] = {}  # filled only where the judge runs
_ALIVE: list[list] = []  # per observation in progress: every world built and its outcome


@contextlib.contextmanager
def _worlds_kept_alive():
    """Keep every world of one observation, and what each call returned, until its end.

    A world freed after its case lends its objects' ids (and storage addresses) to the next
    case's: an answer that remembers results by ``id`` would then meet a stale entry or not
    as the allocator happens to place objects, one answer with two verdicts in two
    processes. Kept, such an answer is met by the sequences in one world (``_call_again``)
    alone, the same way everywhere.
    """
    held: list = []
    _ALIVE.append(held)
    try:
        yield
    finally:
        _ALIVE.pop()


def _manual_seed(seed: int) -> None:
    """``torch.manual_seed`` for the devices a check can run on: the CPU, CUDA where a GPU is
    available, MPS. Not ``torch.manual_seed`` itself: where CUDA is compiled in but no GPU
    is there, each call queues a CUDA seeding for later with its formatted stack (1.5 ms,
    and kept for the life of the process), for a generator nothing here can ever use."""
    if _cuda_here():
        _seed_cuda(seed)
    _seed_mps(seed)
    _seed_cpu(seed)


def register_reference(spec_type: type, reference: Callable[..., Any]) -> None:
    """Make ``reference(spec, world, case)`` the trusted answer of ``spec_type``'s checks.

    Called only by ``autograder.references``, which no process running learner code has.
    """
    _REFERENCES[spec_type] = reference


def reference_of(spec_type: type) -> Callable[..., Any] | None:
    """The registered reference of a spec class or of the nearest base that has one."""
    return next((_REFERENCES[k] for k in spec_type.__mro__ if k in _REFERENCES), None)


def draw(seed: int, axes: dict[str, Sequence[Any]], count: int) -> list[dict[str, Any]]:
    """``count`` cases; each axis cycles through all its options from a seeded offset.

    Axes of one length n would keep step (two yes/no axes drawn only as yes-yes and
    no-no, or only as yes-no and no-yes), so the r-th axis of a length also turns further
    at each new cycle, by the digits of r in base n (digit j at each new run of n^(j+1)
    cases): the first keeps its plain cycle, and the second meets it in every pair of
    their options within n² cases (two yes/no axes within four).
    """
    g = trusted.generator().manual_seed(seed)
    offsets = {k: int(trusted.randint(len(v), (1,), generator=g)) for k, v in axes.items()}
    lengths = [len(v) for v in axes.values()]
    ranks = {k: lengths[:j].count(len(v)) for j, (k, v) in enumerate(axes.items())}

    def turned(i: int, n: int, rank: int) -> int:
        turn, period = 0, n
        while rank:
            rank, digit = divmod(rank, n)
            turn, period = turn + digit * (i // period), period * n
        return turn

    return [
        {k: v[(i + offsets[k] + turned(i, len(v), ranks[k])) % len(v)] for k, v in axes.items()}
        for i in range(count)
    ]


def pick(seed: int, options: Sequence[Any]) -> Any:
    """One option, the same for a seed on every side."""
    g = trusted.generator().manual_seed(seed)
    return options[int(trusted.randint(len(options), (1,), generator=g))]


def concrete(device) -> torch.device:
    """A device as tensors report it: plain ``cuda`` is the current GPU (``cuda:0``)."""
    device = torch.device(device)
    if device.type == "cuda" and device.index is None:
        return torch.device("cuda", torch.cuda.current_device())
    return device


class World:
    """One case's caller objects, built from the seed; instruments log into it."""

    def __init__(self, args: tuple, objects: dict[str, Any], device) -> None:
        self.args, self.objects, self.device = args, objects, concrete(device)
        self.logged: dict[str, dict] = {}
        # each caller tensor as built, with its version: "changed in place" means that very
        # tensor (a module's .to() may put a new one in its place, or keep it: on the CPU
        # .to("cpu") keeps it, on a GPU it is a copy), and the memory it holds its values in:
        # that storage is kept alive, so that no later allocation can reuse its address
        self.versions = {name: (t, _version(t), _storage(t)) for name, t in self.tensors()}
        self.settings_left: list[str] = []  # global settings the last call left changed
        self.held: dict[int, list] = {}  # what the caller's lists held before the call (_held)
        self.case: dict = {}  # the case built (Spec._run): a probe calls ``again`` with a variant

    def tensors(self) -> list[tuple[str, torch.Tensor]]:
        """Every caller tensor by name: the objects' tensors and modules' parameters."""
        found = []
        for name, obj in self.objects.items():
            if trusted.type_(obj) in _TENSORS:
                found.append((name, obj))
            elif trusted.isinstance_(obj, trusted.module_type):
                found += [(_label(name, k), p) for k, p in obj.named_parameters()]
                found += [(_label(name, k), b) for k, b in obj.named_buffers()]
        return found

    def fact(self, name: str, value: Any) -> None:
        """What the reference knows and a rule needs (e.g. the exact answer), as plain data:
        kept in the reference's state for the judge, never compared (``Context.fact``)."""
        self.logged[f"{FACT}{name}"] = {"kind": "fact", "value": value}

    def record(self, base: str, value: Any) -> None:
        """Log what a value is now (e.g. every .grad when step() runs), by a label."""
        _fields(value, self, base, self.logged, relations=False)


def _version(t: torch.Tensor) -> int:
    """A tensor's version counter; -1 for an inference tensor, which keeps none."""
    return -1 if t.is_inference() else t._version


def _storage(t: torch.Tensor) -> tuple[object, int] | None:
    """Where a tensor's values live: its storage, and that storage's address now.
    ``share_memory_()``, ``set_()`` and ``.data = …`` move them without a version bump, so
    the caller's tensor may look unchanged yet no longer be what the caller's other views
    and pinned buffers see."""
    try:
        storage = trusted.untyped_storage(t)
    except (RuntimeError, NotImplementedError):  # sparse and nested tensors keep no one storage
        return None
    return storage, trusted.storage_address(storage)


def _moved(t: torch.Tensor, built: tuple[object, int] | None) -> bool:
    """Whether ``t`` holds its values elsewhere than where they were at build."""
    now = _storage(t)
    return built is not None and now is not None and now[1] != built[1]


def _label(root: str, dotted: str) -> str:
    """'G' and '1.0.weight' -> 'G[1][0].weight', as the learner would index it."""
    parts = [f"[{p}]" if p.isdigit() else f".{p}" for p in dotted.split(".") if p]
    return root + "".join(parts)


def _where(device: torch.device, world: World) -> str:
    return "inputs" if device == world.device else str(device)


def _fields(value: Any, world: World, base: str, out: dict, relations: bool = True) -> None:
    """Flatten one value into ``out[base]`` (and its items' bases): plain fields only."""
    kind = trusted.type_(value)
    if kind in _TENSORS:
        with trusted.no_grad(), trusted.inference_mode(False):
            copy = value.detach().to("cpu", copy=True)
            if copy.is_inference():
                copy = copy.clone()
        fields = {
            "kind": "tensor",
            "shape": [int(n) for n in value.shape],
            "dtype": str(value.dtype),
            "device": _where(value.device, world),
            "value": copy,
            "requires_grad": bool(value.requires_grad),
            "grad_fn": value.grad_fn is not None,
        }
        if relations:  # which of the caller's tensors, or their gradients, it is or shares
            # an inference tensor cannot be saved for backward nor changed in place later
            fields["inference"] = bool(value.is_inference())
            storage = value.untyped_storage().data_ptr()
            named = world.tensors()
            named += [(f"{n}.grad", t.grad) for n, t in named if t.is_leaf and t.grad is not None]
            fields["is"] = ", ".join(n for n, t in named if t is value)
            fields["shares"] = ", ".join(
                n for n, t in named if t.untyped_storage().data_ptr() == storage
            )
        out[base] = fields
    elif kind in (list, tuple):
        out[base] = {"kind": kind.__name__, "length": trusted.len_(value)}
        for k, item in enumerate(list(value)[:MAX_ITEMS]):
            _fields(item, world, f"{base}[{k}]", out, relations)
    elif kind is dict or kind is OrderedDict:  # keys in any order; str and int keys name items
        keys = [k for k in value if trusted.type_(k) in (str, int)][:MAX_ITEMS]
        out[base] = {"kind": "dict", "keys": sorted(trusted.repr_(k) for k in keys)}
        out[base]["length"] = trusted.len_(value)
        for k in keys:
            _fields(value[k], world, f"{base}[{trusted.repr_(k)}]", out, relations)
    elif value is None:
        out[base] = {"kind": "None"}
    elif kind in _SCALARS:
        out[base] = {"kind": kind.__name__, "value": value}
    elif trusted.isinstance_(value, float):  # numpy.float64 is a Python float to its caller
        out[base] = {"kind": "float", "value": float(value)}
    elif trusted.isinstance_(value, trusted.module_type):  # a model handed back: in which dtypes
        dtypes = [f"{n}: {t.dtype}" for n, t in [*value.named_parameters(), *value.named_buffers()]]
        out[base] = {"kind": str(kind.__name__), "dtypes": dtypes[:MAX_ITEMS]}
    else:
        out[base] = {"kind": str(kind.__name__)}


def _optimizer_fields(optimizer, world: World, base: str, out: dict) -> None:
    """An optimizer as its caller sees it: its groups' settings and the parameters each
    holds, and its state (momentum, Adam's moments and step counts), each state entry and
    each held parameter under its name."""
    names = {id(t): name for name, t in world.tensors()}
    groups = optimizer.param_groups
    out[base] = {"kind": "optimizer", "length": trusted.len_(groups), "hooks": _hooks(optimizer)}
    for g, group in enumerate(groups):
        settings = {k: v for k, v in group.items() if k != "params"}
        plain = {k: v for k, v in settings.items() if trusted.type_(v) in (bool, int, float, str)}
        plain |= {k: list(v) for k, v in settings.items() if trusted.type_(v) is tuple}
        held = list(group.get("params", ()))[:MAX_ITEMS]  # which of the caller's, in order
        plain["params"] = [names.get(id(p), "a parameter the caller does not hold") for p in held]
        out[f"{base}.param_groups[{g}]"] = {"kind": "dict", **plain}
    state = optimizer.state
    out[f"{base}.state"] = {"kind": "dict", "length": trusted.len_(state)}
    for p, entries in list(state.items())[:MAX_ITEMS]:
        label = names.get(id(p), "a parameter the caller does not hold")
        for key, value in sorted(entries.items(), key=lambda kv: str(kv[0])):
            entry = f"{base}.state[{label}][{key!r}]"
            _fields(value, world, entry, out, relations=False)
            if key == "step":  # torch keeps the step count on the CPU unless the optimizer
                out[entry].pop("device", None)  # is capturable or fused: not the caller's


_HOOK_DICTS = (  # a module's, then an optimizer's own (its global ones are global settings)
    "_forward_hooks",
    "_forward_pre_hooks",
    "_backward_hooks",
    "_backward_pre_hooks",
    "_optimizer_step_pre_hooks",
    "_optimizer_step_post_hooks",
    "_optimizer_state_dict_pre_hooks",
    "_optimizer_state_dict_post_hooks",
    "_optimizer_load_state_dict_pre_hooks",
    "_optimizer_load_state_dict_post_hooks",
)


def _hooks(obj: Any) -> int:
    """Hooks registered on a module or an optimizer, all kinds together."""
    return sum(trusted.len_(getattr(obj, n, None) or {}) for n in _HOOK_DICTS)


def _attributes(module: Any) -> list[str]:
    """A module's own public attributes as its caller could read them: plain ones with their
    values (BatchNorm's momentum, Dropout's p), any other by name (a method put on the
    instance, a cache left on it). Its parameters, buffers, submodules and hooks live in
    private dicts and are compared on their own."""
    found = []
    for key, value in trusted.dict_items(trusted.vars_(module)):
        if trusted.type_(key) is not str or key.startswith("_") or key == "training":
            continue
        plain = value is None or trusted.type_(value) in _SCALARS
        found.append(f"{key}={trusted.repr_(value)}" if plain else key)
    return sorted(found)


def _held(world: World) -> dict[int, list]:
    """The objects each caller list (or dict) holds before any call, by argument position."""
    held = {}
    for k, arg in enumerate(world.args):
        if trusted.isinstance_(arg, list):
            held[k] = _list_copy(arg)
        elif trusted.isinstance_(arg, dict):
            held[k] = list(_dict_copy(arg).values())
    return held


def _replaced(world: World, k: int, items: list) -> list[int]:
    """Positions of the caller's list ``k`` that hold another object than the caller put
    there (equal values or not: ``batches[i] = (x.contiguous(), y)`` is the caller's list
    changed)."""
    before = world.held.get(k, [])
    pairs = zip(items, before, strict=False)  # a length that changed is compared on its own
    return [i for i, (a, b) in enumerate(pairs) if a is not b][:MAX_ITEMS]


def state(world: World, value: Any, rng_before: tuple[bytes, ...] | None = None) -> dict:
    """Everything a caller can see after the call, as {base: {field: plain value}}."""
    out: dict[str, dict] = {}
    _fields(value, world, "result", out)
    for name, t in world.tensors():
        _fields(t, world, name, out, relations=False)
        built, version, storage = world.versions.get(name, (None, None, None))
        out[name]["changed_in_place"] = t is built and _version(t) != version
        out[name]["moved"] = t is built and _moved(t, storage)
        if not t.is_leaf:  # retain_grad() on it: the caller's next backward fills its .grad
            out[name]["retains_grad"] = bool(t.retains_grad)
        out[name]["hooks"] = trusted.len_(t._backward_hooks or {}) + trusted.len_(
            getattr(t, "_post_accumulate_grad_hooks", None) or {}
        )
        kept = t.is_leaf or t.retains_grad  # a non-leaf's .grad is the caller's if it kept one
        if kept and not name.endswith(("running_mean", "running_var", "num_batches_tracked")):
            _fields(t.grad, world, f"{name}.grad", out, relations=False)
    for name, obj in world.objects.items():
        if trusted.isinstance_(obj, trusted.module_type):
            for k, m in obj.named_modules():
                out[_label(name, k)] = {
                    "training": bool(m.training),
                    "hooks": _hooks(m),
                    "attributes": _attributes(m),
                }
    for k, arg in enumerate(world.args):  # the caller's containers and optimizers
        if trusted.isinstance_(arg, list):  # a tuple's items are compared where named
            items = _list_copy(arg)
            _fields(items, world, f"args[{k}]", out, relations=False)
            out[f"args[{k}]"]["replaced"] = _replaced(world, k, items)
        elif trusted.isinstance_(arg, dict):
            entries = _dict_copy(arg)
            _fields(entries, world, f"args[{k}]", out, relations=False)
            out[f"args[{k}]"]["replaced"] = _replaced(world, k, list(entries.values()))
        elif trusted.isinstance_(arg, _OPTIMIZER):
            _optimizer_fields(arg, world, f"args[{k}]", out)
    out.update(world.logged)
    out["torch"] = {
        "global_module_hooks": sum(
            trusted.len_(getattr(_global_hooks, n, {}))
            for n in ("_global_forward_hooks", "_global_forward_pre_hooks")
        ),
        "rng_consumed": rng_before is not None and rng_before != _rng_states(world),
        "rng_after": _rng_digest(world) if rng_before is not None else None,
        "settings_left": list(world.settings_left),
    }
    return out


@contextlib.contextmanager
def _settings_watched(world: World):
    """Read every global setting right before and right after the call, inside the caller's
    context: a context the check enters (``calling``: grad mode, autocast…) puts its own
    setting back on exit and would hide a function that leaves it changed."""
    before = global_settings.read_compared()
    yield
    after = global_settings.read_compared()
    world.settings_left = [_setting_name(s) for s in global_settings.changes(before, after)]


def _setting_name(setting: global_settings.Setting) -> str:
    return setting.covers[0] if setting.covers else setting.name


def _rng_states(world: World) -> tuple[bytes, ...]:
    """The CPU generator's state and, where the world is on a GPU, that GPU's: a dropout on
    the GPU draws from the second, its reference on the CPU from the first."""
    states = [_rng_state()]
    if world.device.type == "cuda":
        states.append(_cuda_rng_state(world.device))
    return tuple(t.numpy().tobytes() for t in states)


def _rng_digest(world: World) -> str | None:
    """The CPU generator's state after a call that started from ``RNG_SEED``, in short.

    Equal only when the call drew exactly what the reference draws (a reseeded, skipped or
    extra draw shows). Where the world is on a GPU, its draws go to that device's
    generator and the reference's (on the CPU) to this one: nothing to compare there.
    """
    if concrete(world.device).type != "cpu":
        return None
    digest = zlib.crc32(_rng_state().numpy().tobytes())
    return f"{digest:08x}"


def _shuffled_in_place(world: World, fresh: World) -> None:
    """What a caller does between two calls: change its tensors in place, and leave their
    ``.grad`` as the case's caller had them on arrival: none where there was none, the same
    leftover where there was one (a caller's own backward between steps). A function that
    clears a leftover only on its first call per model or optimizer adds it in the second.
    Each tensor's values move one place along its flattened storage
    (the same values, so masks stay 0/1 and labels stay labels), written through ``.data``
    as older training code does: its version counter does not move, so a result memoised by
    ``(data_ptr(), _version)`` is as stale as one memoised by ``id``. Only tensors that own
    their storage alone change (a base changed under its views would break the views'
    history).

    Not reversed: reversing every weight, bias and input of a network of linear layers,
    elementwise activations and norms permutes its hidden units and its samples alike, so
    it computes the same losses, and an answer that memoised the first call's passed. Lists
    keep their order: a result memoised per the objects a list holds, in order, must meet
    the same objects changed (``_used_by_caller`` shows a memo whose result the in-place
    change leaves right); a list of plain numbers is edited in place (``_numbers_moved``)."""
    named = world.tensors()
    arrived = {name: t.grad for name, t in fresh.tensors() if t.is_leaf}
    storages = [t.untyped_storage().data_ptr() for _, t in named]
    with trusted.no_grad():
        for (name, t), storage in zip(named, storages, strict=True):
            if t.is_leaf and name in arrived:
                _left_grad(t, arrived[name])
            if storages.count(storage) == 1 and _writable(t) and t.numel() > 1:
                t.data.copy_(t.flatten().roll(1).reshape(t.shape).clone())
    for arg in world.args:
        _numbers_moved(arg)


def _numbers_moved(value: Any) -> None:
    """A caller's list of numbers (nested or not) edited in place as its tensors are: each
    innermost list's numbers move one place along (a conversion memoised by the list's id
    hands back the old values)."""
    if trusted.type_(value) is not list:
        return
    if value and all(trusted.type_(v) in (int, float) for v in value):
        value[:] = value[-1:] + value[:-1]
        return
    for item in value:
        _numbers_moved(item)


def _left_grad(t: torch.Tensor, arrived: torch.Tensor | None) -> None:
    """``t.grad`` as it arrived (a tensor the function changed into another dtype or shape
    keeps what it has: no leftover of the old one fits)."""
    if arrived is None:
        t.grad = None
    elif (arrived.shape, arrived.dtype, arrived.device) == (t.shape, t.dtype, t.device):
        t.grad = arrived


def _callers_context(case: dict) -> contextlib.ExitStack:
    """The caller's own context around each call: torch.no_grad() where the case's caller
    records nothing (``"grad_mode": False``), and the default dtype it set
    (``"default_dtype"``): an answer that sets its own and then "restores" float32, or
    turns grad mode back on when done, leaves the caller's changed."""
    stack = contextlib.ExitStack()
    if case.get("grad_mode") is False:
        stack.enter_context(trusted.no_grad())
    name = case.get("default_dtype")
    if name is not None:
        read, write = trusted.get_default_dtype, trusted.set_default_dtype
        stack.enter_context(global_settings.set_during(read, write, getattr(torch, name)))
    return stack


def _callers_own_settings() -> contextlib.ExitStack:
    """The last call in one world is made as a caller debugging and timing its model makes
    it: anomaly detection on (``check_nan`` off: values stay the task's business) and Python's
    garbage collector off. An answer that switches either back to its default when done,
    instead of putting back what it found, leaves the caller's setting changed; the results
    are the same either way."""
    stack = contextlib.ExitStack()
    read, write = global_settings.anomaly_state, global_settings.set_anomaly_state
    stack.enter_context(global_settings.set_during(read, write, (True, False)))
    read, write = global_settings.gc_state, global_settings.restore_gc
    stack.enter_context(global_settings.set_during(read, write, (False, *read()[1:])))
    return stack


def _changed_since(world: World, value: Any, found: dict) -> list[str]:
    """The caller's tensors, and the result's, whose values moved after the state was taken:
    while the probes used the result as a caller does (a backward that writes into a tensor
    it saved changes the caller's input or the result it returned)."""
    named = [*world.tensors(), ("result", value)]
    if trusted.type_(value) in (list, tuple):
        named += [(f"result[{k}]", v) for k, v in enumerate(list(value)[:MAX_ITEMS])]
    changed = []
    for name, t in named:
        before = found.get(name, {}).get("value")
        if trusted.type_(t) not in _TENSORS or trusted.type_(before) not in _TENSORS:
            continue
        with trusted.no_grad(), trusted.inference_mode(False):
            now = t.detach().to("cpu", copy=True)
        if now.shape != before.shape or now.dtype != before.dtype:
            changed.append(name)
        elif not bool(((now == before) | (now.isnan() & before.isnan())).all()):
            changed.append(name)
    return changed


def _writable(t: torch.Tensor) -> bool:
    return t._base is None and t.is_leaf and t.numel() > 0 and not t.is_inference()


def _used_by_caller(value: Any, world: World) -> None:
    """The caller works on what the first call returned before calling again, as callers do:
    it scales a result of its own in place, and turns on ``requires_grad`` of a detached one
    that shares its storage (``x.detach().requires_grad_()``). A result handed out twice,
    memoised, shows either change in the second call."""
    own = _caller_tensors(world)
    caller = {t.untyped_storage().data_ptr() for t in own}
    items = list(value) if trusted.type_(value) in (list, tuple) else [value]
    with trusted.no_grad():
        for t in items:
            if trusted.type_(t) not in _TENSORS or any(t is c for c in own):
                continue
            if not t.dtype.is_floating_point or not _scalable(t):
                continue
            if t.untyped_storage().data_ptr() not in caller:
                t.mul_(2)
            elif not t.requires_grad:
                t.requires_grad_()


def _scalable(t: torch.Tensor) -> bool:
    """A result the caller may scale in place: one it owns alone (``_writable``), or any
    tensor without a graph, views included (a view of a cached tensor handed out each call
    shows the scaling in the next result), unless its elements overlap (an expanded one)."""
    if _writable(t):
        return True
    if t.numel() == 0 or t.is_inference() or t.requires_grad:
        return False
    return bool(t.is_contiguous() or t.stride() and min(t.stride()) > 0)


def _holds_caller_tensors(value: Any, world: World) -> bool:
    """Whether a result is (or holds) one of the caller's tensors or their ``.grad``."""
    caller = _caller_tensors(world)
    items = list(value) if trusted.type_(value) in (list, tuple) else [value]
    return any(item is t for item in items for t in caller)


def _returned_again(first: Any, last: Any, world: World) -> bool:
    """The last call handed back the very object the first call returned: a list or dict
    (refilled, so the caller's first result changed), or a tensor with history of the
    function's own (a result memoised: one graph for two calls, freed by the first
    backward). A caller's tensor or argument handed back as it is (an identity, a move that
    was not needed, the caller's own list) is not one, nor a constant without history
    (lesson 01's catalogued seed)."""
    if last is not first or any(first is arg for arg in world.args):
        return False
    if trusted.type_(first) in (list, dict):
        return True
    if trusted.type_(first) not in _TENSORS or first.grad_fn is None:
        return False
    return not any(first is t for t in _caller_tensors(world))


def _backward_through(value: Any, world: World) -> str | None:
    """Backpropagate from the first call's result once the later calls are made, as a caller
    that kept it does: "ok", or the type of what it raised (its saved tensors kept in a store
    a later call cleared, state a later call overwrote). None where no result has a graph
    that reaches a tensor of the caller's."""
    items = list(value) if trusted.type_(value) in (list, tuple) else [value]
    outputs = [t for t in items if trusted.type_(t) in _TENSORS and t.grad_fn is not None]
    leaves = [t for _, t in world.tensors() if t.is_leaf and t.requires_grad]
    if not outputs or not leaves:
        return None
    seeds = [trusted.ones(t.shape, dtype=t.dtype, device=t.device) for t in outputs]
    done = call(lambda: trusted.autograd_grad(outputs, leaves, seeds, allow_unused=True))
    return "ok" if done.ok else trusted.type_(done.error).__name__


def _caller_tensors(world: World) -> list[torch.Tensor]:
    """The caller's tensors and their ``.grad``: objects a result may hand back as they are."""
    caller = [t for _, t in world.tensors()]
    return caller + [t.grad for t in caller if t.is_leaf and t.grad is not None]


def _changed(state_: dict) -> Any:
    fields = state_.get("first result")
    return fields.get("changed_by_second_call") if trusted.type_(fields) is dict else None


def _inputs(world: World) -> dict:
    """The world as the learner's function receives it: every caller object, no instrument."""
    return {k: v for k, v in state(world, None).items() if k not in world.logged}


@dataclasses.dataclass(frozen=True)
class Rule:
    """A base name (``*`` matches anything), a condition on (expected, found, context), an ID."""

    pattern: str
    when: Callable[[dict, dict, Context], bool] | None = None
    misconception: str | None = None

    def applies(self, base: str, expected: dict, found: dict, ctx: Context) -> bool:
        if not re.fullmatch(re.escape(self.pattern).replace(r"\*", ".*"), base):
            return False
        return self.when is None or bool(self.when(expected, found, ctx))


@dataclasses.dataclass
class Context:
    """What a rule may look at: the case, both states, and the world before any call."""

    spec: Spec
    case: dict
    expected: dict
    found: dict
    base: str = ""  # the difference being judged
    _before: dict | None = None

    def fact(self, name: str) -> Any:
        """A fact the reference recorded in this case (``World.fact``)."""
        return self.expected[f"{FACT}{name}"]["value"]

    def probe(self, name: str) -> Any:
        """What the check's probe found in the learner's world under ``name`` (None where it
        found nothing), for blame rules."""
        return self.found.get("probe", {}).get(name)

    @property
    def before(self) -> dict:
        if self._before is None:
            self._before = state(self.spec.build(self.case, "cpu"), None)
        return self._before


def close(
    a: Any,
    b: Any,
    tolerance: tuple[float, float] = (1e-7, 1e-9),
    floats: tuple[float, float] = FLOAT_TOLERANCE,
) -> bool:
    """Equal plain values; tensors of one shape, and floats, within a tolerance (``floats``
    for Python floats, (rtol, atol)); NaN equals NaN, as in tensors compared."""
    if trusted.type_(a) is float and trusted.type_(b) is float:
        if a != a or b != b:  # NaN
            return a != a and b != b
        return a == b or abs(a - b) <= floats[1] + floats[0] * abs(b)
    if trusted.type_(a) in _TENSORS or trusted.type_(b) in _TENSORS:
        if not (trusted.type_(a) in _TENSORS and trusted.type_(b) in _TENSORS):
            return False
        if a.shape != b.shape or a.dtype.is_floating_point != b.dtype.is_floating_point:
            return False
        if not a.dtype.is_floating_point:
            return bool(trusted.equal(a, b))
        if a.dtype == b.dtype and trusted.equal(a, b):  # most often: the reference's bits
            return True
        rtol, atol = tolerance
        a64, b64 = a.to(torch.float64), b.to(torch.float64)
        return bool(trusted.isclose(a64, b64, rtol=rtol, atol=atol, equal_nan=True).all())
    return trusted.type_(a) is trusted.type_(b) and a == b


def _tolerance(fields: dict) -> tuple[float, float]:
    value = fields.get("value")
    dtype = str(value.dtype) if trusted.type_(value) in _TENSORS else fields.get("dtype", "")
    return TOLERANCE.get(dtype, (0.0, 0.0))


def differs_only_in(*fields: str):
    """A rule's condition: expected and found agree on every field except ``fields``, values
    within the tolerance of the expected dtype (a float64 result rounded through float32
    differs)."""

    def when(e: dict, f: dict, ctx) -> bool:
        keys = (set(e) | set(f)) - set(fields)
        return all(close(e.get(k), f.get(k), _tolerance(e)) for k in keys)

    return when


def is_zero_or_none(fields: dict, shape: Sequence[int] | None = None) -> bool:
    """A .grad that holds nothing: None, or all zeros (of ``shape``, where it is given)."""
    v = fields.get("value")
    if fields.get("kind") == "None":
        return True
    if shape is not None and (trusted.type_(v) not in _TENSORS or list(v.shape) != list(shape)):
        return False
    return trusted.type_(v) in _TENSORS and v.numel() > 0 and not bool(v.any())


def more_hooks(e: dict, f: dict, ctx) -> bool:
    """More hooks than the reference left (a rule's condition): registered again, or never
    removed."""
    return (f.get("hooks") or 0) > (e.get("hooks") or 0)


_ABSENT = {"kind": "absent"}
# A value logged when an optimizer stepped: "model[0].weight.grad when optimizer.step() #1 ran"
# (lesson 02 writes "… ran #1")
_CALLS_LOG = re.compile(r"(?P<f>\S+\(\)) calls")  # "opt_d.step() calls": a counter
_STEP_LOG = re.compile(r"(?P<param>.+) when (?P<step>\S+\(\)) (?:#(?P<n>\d+) ran|ran #(?P<n2>\d+))")
_FIELD_ORDER = ("kind", "length", "shape", "dtype", "device", "value")
_WHAT = {
    "kind": Text("what {b} is", "{b} 是什么"),
    "length": Text("the length len({b})", "长度 len({b})"),
    "dtypes": Text("the dtypes of the parameters and buffers of {b}", "{b} 的参数和缓冲区的 dtype"),
    "value": Text("the value {b}", "值 {b}"),
    "grad_fn": Text("{b} has history (a grad_fn)", "{b} 带有计算历史（grad_fn）"),
    "inference": Text(
        "{b} is an inference tensor (made under torch.inference_mode(): the caller cannot use "
        "it in a computation that autograd records, nor change it in place)",
        "{b} 是推理张量（在 torch.inference_mode() 下创建：调用者不能把它用在自动求导记录的计算里，"
        "也不能原地修改它）",
    ),
    "is": Text("the caller's tensor that {b} is", "{b} 就是调用者的哪个张量"),
    "shares": Text("caller tensors whose storage {b} shares", "与 {b} 共享存储的调用者张量"),
    "changed_in_place": Text(
        "{b} changed in place (its version counter)", "{b} 被原地修改（版本计数器）"
    ),
    "moved": Text(
        "{b} moved to other memory (as share_memory_(), set_() or .data = … do)",
        "{b} 被移到了别的内存（share_memory_()、set_() 或 .data = … 都会这样）",
    ),
    "hooks": Text("hooks left registered on {b}", "{b} 上残留的钩子数"),
    "retains_grad": Text(
        "{b} keeps its .grad in a backward (retain_grad())",
        "{b} 在反向传播中保留 .grad（retain_grad()）",
    ),
    "attributes": Text(
        "the attributes of {b} (plain ones with their values)", "{b} 的属性（普通属性连同取值）"
    ),
    "replaced": Text(
        "positions of {b} that no longer hold the object the caller put there",
        "{b} 中不再是调用者放入的那个对象的位置",
    ),
    "rng_consumed": Text("the global random state changed by the call", "调用改变了全局随机状态"),
    "settings_left": Text(
        "global settings left changed when the function returned (read inside the caller's "
        "context)",
        "函数返回时被改变且未恢复的全局设置（在调用者的上下文内读取）",
    ),
    "rng_after": Text(
        "the global random state after the call (reseeded, or more or fewer draws than the "
        "task makes)",
        "调用之后的全局随机状态（被重新设种，或抽取的随机数比任务多或少）",
    ),
    "raised": Text("the exception that reaches the caller", "传给调用者的异常"),
    "message": Text(
        "the first line of the exception's message, numbers as # (the caller must get the "
        "exception itself, not another one in its place)",
        "异常消息的第一行，数字记作 #（调用者应当收到那个异常本身，而不是换成的另一个异常）",
    ),
    "global_module_hooks": Text("global module hooks left registered", "残留的全局模块钩子数"),
    "changed": Text(
        "tensors whose values changed after the function returned, as the result was used "
        "(a backward through it)",
        "函数返回之后、使用结果（对它做反向传播）时值被改变的张量",
    ),
    "returned_again": Text(
        "the first call's result handed out again by the last call (a list or dict refilled, "
        "a tensor memoised: not made anew)",
        "最后一次调用又交回了第一次调用返回的那个对象（重新填充的列表或字典、缓存下来的张量，而不是新建的）",
    ),
    "backward_after_later_call": Text(
        "a backward through the first call's result, made after the later calls (did a later "
        "call take away what the first one saved?)",
        "在后面几次调用之后，沿第一次调用的结果做反向传播（后面的调用是否拿走了第一次调用保存的东西？）",
    ),
    "changed_by_second_call": Text(
        "the first call's result changed by the second call (a reused buffer?)",
        "第一次调用的结果被第二次调用改变（复用了输出缓冲区？）",
    ),
}
_PLAIN = {
    "": Text("none", "无"),
    "inputs": Text("the inputs' device", "输入所在的设备"),
    "absent": Text("nothing", "没有"),
    "None": Text("None", "None（空）"),
    "no exception": Text("no exception", "没有异常"),
    "ok": Text("it ran", "正常完成"),
}


def _shown(field: str, value: Any) -> str | Text:
    if field in ("settings_left", "changed", "replaced") and trusted.type_(value) is list:
        return ", ".join(str(v) for v in value) if value else _PLAIN[""]
    plain = ("is", "shares", "device", "kind", "raised", "backward_after_later_call")
    if field in plain and value in _PLAIN:
        return _PLAIN[value]
    if trusted.type_(value) is str and value == "no exception":  # a probe's record of a call
        return _PLAIN[value]
    if field == "message" and trusted.type_(value) is str:  # PyTorch's words, quoted
        return f"“{value}”"
    if trusted.type_(value) in _TENSORS:  # a value, where the other side has none
        return Text("a tensor of shape {s}", "形状为 {s} 的张量").format(s=str(tuple(value.shape)))
    if field == "shape":
        return str(tuple(value))
    if trusted.type_(value) is float:
        return f"{value:.6g}"
    return str(value)


@dataclasses.dataclass(frozen=True)
class Spec(Check):
    """A check as a specification; subclasses define cases, build, reference, allow, blame."""

    allow: ClassVar[tuple[Rule, ...]] = ()  # differences the exercise permits
    blame: ClassVar[tuple[Rule, ...]] = ()  # which misconception a difference means
    # base -> what feedback calls it ("result[0]" -> "p")
    names: ClassVar[dict[str, str | Text]] = {}
    # True: an exception one case raised is reported beside the differences the calls that
    # returned showed, not instead of them (they say more about the misconception)
    differences_first: ClassVar[bool] = False
    # False only with a reason: a second call in one world means nothing for the exercise
    called_again: ClassVar[bool] = True
    # False only where the prompt leaves the random state to the function (e.g. it may seed
    # for reproducibility and put the caller's state back)
    random_state_compared: ClassVar[bool] = True
    # what the caller does before a third call besides changing its tensors in place
    # (``between_calls``), as feedback says it: "validated with model.eval()"
    between: ClassVar[Text | None] = None
    # what it also does before the second call (``before_second_call``), said alike
    before_second: ClassVar[Text | None] = None
    # how close two Python floats must be: a loss's .item() may come from float32; a
    # figure the caller's own float64 numbers make (a median of clock readings) is closer
    float_tolerance: ClassVar[tuple[float, float]] = FLOAT_TOLERANCE
    # a float the task reduces from a float64 case's tensors (case["dtype"]) holds float64's
    # precision: a mean taken in float32 on the way is off by float32's rounding (True: every
    # float result; else the names of those that do)
    floats_in_case_dtype: ClassVar[bool | tuple[str, ...]] = False
    # whether a result may be an inference tensor only where the reference's is: where the
    # caller may go on to train on it or change it in place (features to fit a probe on)
    inference_compared: ClassVar[bool] = False

    def cases(self) -> list[dict]:
        raise NotImplementedError

    def build(self, case: dict, device) -> World:
        raise NotImplementedError

    def reference(self, world: World, case: dict) -> Any:
        """The trusted answer in ``world``: present only in the judge's process."""
        reference = reference_of(type(self))
        if reference is None:
            raise LookupError(f"no reference for {type(self).__name__} in this process")
        return reference(self, world, case)

    def expected(self, case: dict, again: bool = False) -> dict:
        """The reference's state after the call in ``case`` (``again``: after its second
        call, see ``_call_again``): computed where the judge's references are (or read from
        the shipped data, where that was written from the same code), else read from the
        data shipped with the course."""
        reference = reference_of(type(self))
        if reference is None:
            return expectations.lookup(self, case, again)
        check, case_id = expectations.key(self), expectations.case_key(case, again)
        key = (reference, check, case_id)
        if reference.__module__.startswith("autograder.references."):  # not a stand-in
            found = expectations.shipped(expectations.lesson_of(self), check, case_id)
            if found is not None:  # kept apart: what `make build` computes never reads it
                return reference_states.remembered(("shipped", *key), lambda: found)
        if again:
            return reference_states.remembered(
                key, lambda: self._call_again(None, case, "cpu")["state"]
            )
        return reference_states.remembered(
            key, lambda: self._observe_case(None, case, "cpu")["state"]
        )

    def again_case(self) -> dict | None:
        """The case called twice in one world: the first that must not raise and arrives
        with a leftover ``.grad``, else the first that must not raise. A case marked
        ``"alone"`` is never it: its first call leaves a world no second call says anything
        about (a model whose weights a non-finite step made NaN)."""
        if not self.called_again:
            return None
        calls = [case for case in self.cases() if not case.get("raises") and not case.get("alone")]
        return next((c for c in calls if self._arrives_with_grad(c)), next(iter(calls), None))

    def again_cases(self) -> list[dict]:
        """Every case called again in one world: ``again_case``'s, unless a check has paths
        that keep state apart (lesson 04's shared copy and independent copy each make their
        own sequence)."""
        case = self.again_case()
        return [] if case is None else [case]

    def _arrives_with_grad(self, case: dict) -> bool:
        """Whether the caller's tensors arrive with a leftover ``.grad`` in ``case``: the
        sequence is made where the caller has most to lose (see ``_shuffled_in_place``)."""
        world = self.build(case, "cpu")
        return any(t.is_leaf and t.grad is not None for _, t in world.tensors())

    def _call_again(self, fn, case: dict, device) -> dict:
        """Call, let the caller change its tensors in place, call again in the same world.

        A fresh world per call hides state kept across calls: a result memoised by id or
        shape, a reused output buffer (the first result is kept and compared after the
        second call), a flag set once, a consumed input list, a counter. The reference
        goes through the same sequence in the judge.

        Where the caller also does something else between calls (``between_calls``, e.g. a
        new learning rate, another loss function), that comes before a third call: the
        second is made with the very same objects, so a result cached per argument object
        (keeping them, as ``functools.cache`` does, so no freed id is reused) shows in the
        second call's result, which is compared as "second result".
        """
        world, first, rec = self._run(fn, case, device)
        inputs = rec.pop("inputs")
        if fn is not None:
            rec["call"]["inputs"] = inputs
        if not first.ok:
            return {"call": rec["call"]}
        _shuffled_in_place(world, self.build(case, device))
        _used_by_caller(first.value, world)
        self.before_second_call(world, case)
        kept: dict[str, dict] = {}
        _fields(first.value, world, "kept", kept, relations=False)
        middle: dict[str, dict] = {}
        if self.acts_between_calls:
            second = self._call_in(world, case, fn)
            if not second.ok:
                return {"call": rec["call"], "second": second.record()}
            _fields(second.value, world, SECOND_RESULT, middle, relations=False)
            self.between_calls(world, case)
        before = _inputs(world)  # what "as before" means for the last call
        rng = _rng_states(world)
        with _callers_own_settings():
            last = self._call_in(world, case, fn)
        found = state(world, last.value, rng)
        found.update(middle)
        now: dict[str, dict] = {}
        _fields(first.value, world, "kept", now, relations=False)
        changed = any(self._first_difference(kept[b], now.get(b, _ABSENT)) for b in kept)
        if _holds_caller_tensors(first.value, world):  # the caller's own, changed as it may be
            changed = None
        found["first result"] = {
            "changed_by_second_call": changed,
            "returned_again": _returned_again(first.value, last.value, world),
            "backward_after_later_call": _backward_through(first.value, world),
        }
        if self.acts_between_calls:
            calls = {"second": second.record(), "third": last.record()}
        else:
            calls = {"second": last.record()}
        return {"call": rec["call"], **calls, "state": found, "before": before}

    def _call_in(self, world: World, case: dict, fn) -> Call:
        """One more call in ``world``: the learner's ``fn``, or the reference where it is None."""
        with _callers_context(case), self.calling(world, case, fn), _settings_watched(world):
            return call(fn, *world.args) if fn is not None else Call(self.reference(world, case))

    @property
    def acts_between_calls(self) -> bool:
        """Whether this check's caller does more between calls than change its tensors."""
        return type(self).between_calls is not Spec.between_calls

    def between_calls(self, world: World, case: dict) -> None:
        """What else the caller does before a third call in one world (say it in
        ``between``), e.g. validate with ``model.eval()``: a function that must redo its
        work on every call, and keeps a flag or a cache instead, shows there. A check that
        defines it gets the third call (``_call_again``)."""

    def before_second_call(self, world: World, case: dict) -> None:
        """What else the caller does before the second call in one world (say it in
        ``before_second``), with the same arguments: e.g. a new Parameter put into its model,
        which a function that keeps what it took from the model per its id never sees."""

    def describe(self, case: dict) -> Text:
        """The caller's state in one case, for feedback."""
        raise NotImplementedError

    def label(self, base: str) -> str | Text:
        """What feedback calls ``base``: its entry in ``names``, else the base itself (a probe
        'kind|what' by its what, a probe's name without 'probe:'), a gradient logged when an
        optimizer stepped (``World.record``) said in the learner's language."""
        if base in self.names:
            return self.names[base]
        if base.startswith(SECOND_RESULT):  # kept from the call before the last (_call_again)
            rest = base.removeprefix(SECOND_RESULT)
            return Text("the second call's result{r}", "第二次调用的结果{r}").format(r=rest)
        label = base.partition("|")[2] or base.removeprefix("probe:")
        calls = _CALLS_LOG.fullmatch(label)
        if calls is not None:
            return Text("calls of {f}", "{f} 的调用次数").format(f=calls["f"])
        step = _STEP_LOG.fullmatch(label)
        if step is None:
            return label
        return Text("{p} when {s} #{n} ran", "第 {n} 次调用 {s} 时 {p}").format(
            p=step["param"], s=step["step"], n=step["n"] or step["n2"]
        )

    def calling(self, world: World, case: dict, fn) -> contextlib.AbstractContextManager:
        """What surrounds a call (``fn`` None: the reference's), e.g. a simulated machine."""
        return contextlib.nullcontext()

    def compared(self, base: str, fields: dict) -> dict:
        """The fields of ``base`` the exercise compares: all, unless a spec leaves some out."""
        return fields

    def probe(self, world: World, value: Any, again: Callable[[], tuple]) -> dict:
        """Experiments on the result after the state was taken; {name: plain value}."""
        return {}

    def probe_text(self, name: str) -> Text:
        """What a probe's result means, for feedback."""
        found = Text("a probe of the result ({n})", "对结果的探测（{n}）").format(n=name)
        return self.probes.get(name, found)

    def classify(self, message: str) -> str | None:
        """The misconception an exception's message is evidence of, if any."""
        return None

    def blame_error(self, message: str, case: dict) -> str | None:
        """The misconception an exception raised in ``case`` is evidence of (classify's)."""
        return self.classify(message)

    def explain(self, message: str) -> Text | None:
        """One line on what a quoted PyTorch error means, in the learner's language."""
        return None

    @property
    def function(self) -> str:
        """The learner's function's name, as the lesson's EXERCISES give it."""
        return sys.modules[type(self).__module__].EXERCISES[self.number - 1].function

    def _run(self, fn, case: dict, device, seeded: bool = True) -> tuple[World, Call, dict]:
        """Call the learner's function, or the reference where ``fn`` is None, in a new world.

        ``seeded``: from ``RNG_SEED``, one start on both sides, so that the random state
        after the call compares; a probe's extra call starts where the caller's state is.
        """
        world = self.build(case, device)
        world.case, world.held = case, _held(world)
        inputs = _inputs(world) if fn is not None else None
        if seeded:
            _manual_seed(RNG_SEED)
        rng = _rng_states(world)
        with _callers_context(case), self.calling(world, case, fn), _settings_watched(world):
            if fn is not None:
                outcome = call(fn, *world.args)
            elif case.get("raises"):  # a case where the caller must see an exception
                outcome = call(self.reference, world, case)
            else:
                outcome = Call(self.reference(world, case))
        if _ALIVE:
            _ALIVE[-1].append((world, outcome))
        return world, outcome, {"call": outcome.record(), "rng": rng, "inputs": inputs}

    def _observe_case(self, fn, case: dict, device) -> dict:
        world, outcome, rec = self._run(fn, case, device)
        inputs = rec.pop("inputs")
        if fn is not None:  # the judge rebuilds this world and compares (``_verify_inputs``)
            rec["call"]["inputs"] = inputs
        if case.get("raises"):  # what reached the caller, and the state it was left in
            found = state(world, outcome.value, rec["rng"])
            raised = rec["call"].get("raised")
            found["exception"] = {"raised": raised or "no exception"}
            if raised:  # the very exception, not another of its type raised in its place;
                # its numbers aside (shapes: a right answer may run the batch in pieces)
                message = rec["call"].get("message", "")
                found["exception"]["message"] = _NUMBERS.sub("#", message)
            return {"call": rec["call"], "state": {**found, "probe": {}}}
        if not outcome.ok:
            return {"call": rec["call"]}

        def again(other: dict | None = None):  # another call: of this case, or of ``other``
            w2, o2, _ = self._run(fn, case if other is None else other, device, seeded=False)
            return w2, o2.value if o2.ok else None

        found = state(world, outcome.value, rec["rng"])
        probed = call(self.probe, world, outcome.value, again)
        if fn is None and not probed.ok:  # the course's own probe broke: never compare that
            raise RuntimeError(f"{type(self).__name__}'s probe fails on the reference") from (
                probed.error
            )
        found["probe"] = probed.value if probed.ok else {"failed": trusted.repr_(probed.error)}
        found[LATER] = {"changed": _changed_since(world, outcome.value, found)}
        return {"call": rec["call"], "state": found}

    def observe(self, fn) -> dict:
        device = resolve_device(getattr(self, "device", None))
        with _worlds_kept_alive():
            cases = [self._observe_case(fn, case, device) for case in self.cases()]
            again = [self._call_again(fn, case, device) for case in self.again_cases()]
        return {"cases": cases, "again": again}

    def judge(self, obs: dict) -> None:
        ex = self.heading
        results: list[CheckResult] = []
        pairs = list(zip(self.cases(), obs["cases"], strict=True))
        if self.differences_first:  # the calls that returned first, then those that raised
            pairs.sort(key=lambda p: bool(p[1]["call"].get("raised")) and not p[0].get("raises"))
        for case, rec in pairs:
            self._verify_inputs(case, rec["call"])
        for case, rec in pairs:
            if not case.get("raises") or rec["call"].get("not_implemented"):
                raised = rec["call"].get("raised") and not rec["call"].get("not_implemented")
                if self.differences_first and raised:  # the exception beside the differences
                    blame = self._blame(case)
                    failed = call(returned, ex, rec["call"], self.function, blame, self.explain)
                    results += failed.error.failures
                    continue
                returned(ex, rec["call"], self.function, self._blame(case), self.explain)
            results += self._differences(case, self.expected(case), rec["state"])
        if not results:  # the calls in one world are judged once every single call is right
            recs, cases = obs.get("again"), self.again_cases()
            if trusted.type_(recs) is not list or trusted.len_(recs) != trusted.len_(cases):
                raise InconsistentObservation("observation not consistent: the second calls")
            for case, rec in zip(cases, recs, strict=True):
                results += self._judge_again(case, rec)
                if results:
                    break
        require(ex, _chosen(results))

    def _judge_again(self, case: dict, rec: Any) -> list[CheckResult]:
        if trusted.type_(rec) is not dict or trusted.type_(rec.get("call")) is not dict:
            raise InconsistentObservation("observation not consistent: the second call is missing")
        self._verify_inputs(case, rec["call"])
        if rec["call"].get("raised"):  # the first call raised here, and not in the same case
            raise InconsistentObservation("observation not consistent: the calls disagree")
        ordinals = {"second": Text("second", "第二"), "third": Text("third", "第三")}
        for which, ordinal in ordinals.items():
            made = rec.get(which) if trusted.type_(rec.get(which)) is dict else {}
            if not made.get("raised"):
                continue
            what = Text(
                "calling {f}(...) a {n} time — in the case: {c}",
                "{n}次调用 {f}(...)——情形：{c}",
            )
            found = Text("it raised {k}: “{m}”", "抛出了 {k}：“{m}”").format(
                k=made["raised"], m=made.get("message", "")
            )
            shown = what.format(f=self.function, n=ordinal, c=self._again_text(case))
            return [CheckResult(shown, False, Text("no exception", "不抛出异常"), found)]
        expected, found, before = (
            self.expected(case, again=True),
            rec.get("state"),
            rec.get("before"),
        )
        if trusted.type_(found) is not dict or trusted.type_(before) is not dict:
            raise InconsistentObservation("observation not consistent: the second call's state")
        if None in (_changed(expected), _changed(found)):  # a result that is caller state
            found_first = found.get("first result")
            if trusted.type_(found_first) is not dict:
                raise InconsistentObservation("observation not consistent: the first result")
            changed = _changed(expected)
            found = {**found, "first result": {**found_first, "changed_by_second_call": changed}}
        if expected.get("first result", {}).get("backward_after_later_call") is None:
            found_first = found.get("first result")  # a graph the reference's result has not:
            if trusted.type_(found_first) is dict:  # what a backward through it does is free
                kept = {**found_first, "backward_after_later_call": None}
                found = {**found, "first result": kept}
        return self._differences(case, expected, found, self._again_text(case), before)

    def _again_text(self, case: dict) -> Text:
        also = before_second_clause(self.before_second)
        if self.between is not None:
            return Text(
                "{c}; called twice more in the same world: after the caller changed its "
                "tensors in place, gave them back the .grad they arrived with{s} and used the "
                "first result, then after it also {b}",
                "{c}；在同一环境中又调用了两次：先在调用者原地修改了自己的张量、把它们的 .grad"
                " 恢复成传入时的样子{s}、并使用了第一次调用的结果之后，再在它又{b}之后",
            ).format(c=self.describe(case), s=also, b=self.between)
        return Text(
            "{c}; called a second time in the same world, after the caller changed its "
            "tensors in place, gave them back the .grad they arrived with{s} and used the "
            "first result ({used})",
            "{c}；调用者原地修改了自己的张量、把它们的 .grad 恢复成传入时的样子{s}、并使用了"
            "第一次调用的结果（{used}）之后，在同一环境中第二次调用",
        ).format(c=self.describe(case), s=also, used=USED_FIRST_RESULT)

    def _verify_inputs(self, case: dict, recorded: dict) -> None:
        """Refuse an observation made in another world than the one ``case``'s seed builds:
        forging one would mean answering the judge's own inputs, i.e. the exercise."""
        inputs = recorded.get("inputs")
        key = ("inputs", expectations.key(self), expectations.case_key(case))
        made = reference_states.remembered(key, lambda: _inputs(self.build(case, "cpu")))
        if trusted.type_(inputs) is not dict or set(inputs) != set(made):
            raise InconsistentObservation(
                "observation not consistent: the inputs of a case were not recorded"
            )
        for base, fields in made.items():
            seen = inputs[base]
            if trusted.type_(seen) is not dict or self._first_difference(fields, seen):
                raise InconsistentObservation(
                    f"observation not consistent: {base} is not what the case's seed makes"
                )

    def _blame(self, case: dict) -> Callable[[str], str | None]:
        return lambda message: self.blame_error(message, case)

    def _differences(
        self, case: dict, expected: dict, found: dict, told: Text | None = None, before=None
    ) -> list[CheckResult]:
        ctx = Context(self, case, expected, found, _before=before)
        allowed = (*self.allow, _PARTWAY_GRADS)
        results = []
        for base in [*expected, *(b for b in found if b not in expected)]:
            if base.startswith(FACT):
                continue
            e, f = expected.get(base, _ABSENT), found.get(base, _ABSENT)
            if base == "probe":
                pairs = [(f"probe:{k}", {"value": v}, {"value": f.get(k)}) for k, v in e.items()]
            else:
                pairs = [(base, e, f)]
            for name, e1, f1 in pairs:
                ctx.base = name
                if name == "torch" and trusted.type_(f1) is dict and trusted.type_(e1) is dict:
                    if f1.get("rng_after") is None or not self.random_state_compared:
                        e1 = {k: v for k, v in e1.items() if k != "rng_after"}  # a GPU world
                        f1 = {k: v for k, v in f1.items() if k != "rng_after"}
                e1, f1 = self.compared(name, e1), self.compared(name, f1)
                if not self.inference_compared:
                    e1, f1 = ({k: v for k, v in d.items() if k != "inference"} for d in (e1, f1))
                floats = self._floats(case, name)
                field = self._first_difference(e1, f1, floats, self.tolerance(case, e1))
                if field is None or any(r.applies(name, e1, f1, ctx) for r in allowed):
                    continue
                blame = next((r for r in self.blame if r.applies(name, e1, f1, ctx)), None)
                results.append(self._result(case, name, field, e1, f1, blame, told))
        return results

    def _floats(self, case: dict, name: str) -> tuple[float, float]:
        """How close two Python floats at ``name`` must be in ``case``."""
        held = self.floats_in_case_dtype
        if case.get("dtype") == "float64" and (held is True or name in (held or ())):
            return TOLERANCE["torch.float64"]
        return self.float_tolerance

    def tolerance(self, case: dict, fields: dict) -> tuple[float, float]:
        """(rtol, atol) for a tensor's values in ``case``: by the reference's dtype."""
        return _tolerance(fields)

    def _first_difference(self, e: dict, f: dict, floats=None, tol=None) -> str | None:
        order = [*_FIELD_ORDER, *(k for k in e if k not in _FIELD_ORDER)]
        order += [k for k in f if k not in order]
        tol, floats = tol or _tolerance(e), floats or self.float_tolerance
        return next((k for k in order if not close(e.get(k), f.get(k), tol, floats)), None)

    def _result(self, case, base, field, e, f, blame: Rule | None, told=None) -> CheckResult:
        misconception = blame.misconception if blame else None
        label = self.label(base)
        where = Text("{what} — in the case: {case}", "{what}——情形：{case}")
        values = field == "value" and trusted.type_(e.get("value")) in _TENSORS
        if base.startswith("probe:"):
            what = self.probe_text(base[6:])
        elif values:
            what = Text("values of {b}", "{b} 的数值").format(b=label)
        elif field in _WHAT:
            what = _WHAT[field].format(b=label)
        else:
            what = Text("{b}.{f}", "属性 {b}.{f}").format(b=label, f=field)
        told = told or self.describe(case)
        if values and trusted.type_(f.get("value")) in _TENSORS:  # probes' tensors too
            rtol, atol = self.tolerance(case, e)
            shown = c.values(f["value"], e["value"], label, misconception, rtol, atol)
            what = where.format(what=what, case=told)
            return dataclasses.replace(shown, what=what)
        shown = [_shown(field, side.get(field, "absent")) for side in (e, f)]
        if shown[0] == shown[1]:  # floats that differ beyond six digits: all of them
            shown = [trusted.repr_(side.get(field)) for side in (e, f)]
        return CheckResult(where.format(what=what, case=told), False, *shown, misconception)

    probes: ClassVar[dict[str, Text]] = {}  # what each probe's name means, for feedback


# What a call that raised left in ``.grad`` is not judged: ``zero_grad()`` may come before
# the forward pass or after it, and the exception cut the work short either way.
_PARTWAY_GRADS = Rule("*.grad", lambda e, f, ctx: bool(ctx.case.get("raises")))


def _chosen(results: list[CheckResult]) -> list[CheckResult]:
    """At most MAX_RESULTS, one per thing checked, but every misconception named at least once."""
    kept: list[CheckResult] = []
    seen_titles, seen_ids = set(), set()
    for r in results:
        title = re.sub(r" — .*|——.*", "", r.title("en"))
        new_id = r.misconception and r.misconception not in seen_ids
        if new_id or (title not in seen_titles and len(kept) < MAX_RESULTS):
            kept.append(r)
            seen_titles.add(title)
            seen_ids.add(r.misconception)
    return kept
