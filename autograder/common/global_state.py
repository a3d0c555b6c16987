"""Every global setting of torch a learner's function could leave changed: one registry.

Each :class:`Setting` says how to read one global setting as plain data (so that an
observation carrying it round-trips through ``wire.py``, which carries only plain data),
how to put a recorded value back, which plain types its value may have, and how feedback
names it in both course languages.

``protocol.Check.observe_plain`` reads every setting before and after the learner's call
(:func:`capture`, :func:`read`), then puts back every setting that can be put back
(:func:`restore`), so that one exercise's slip does not fail the next. The judge then
fails the check for each *compared* setting that differs (:func:`changes`). Settings a
right answer may legitimately change (the random state: dropout draws from it) are
*recorded only*: they travel in the observation, for a comparison with the reference's
run, but never fail an answer here.

A value of ``None`` means "not known here" (CUDA not started yet, a getter that refuses
to answer in this state): a change is only ever reported between two known values.

Every function used is a reference taken when this module is imported, before any
learner code runs (see ``trusted``): a learner who reassigns ``torch.is_grad_enabled``
changes the module attribute, not what is read here.
"""

from __future__ import annotations

import array
import contextlib
import gc as _gc
import hashlib
import os
import random as _python_random
import sys
import warnings as _warnings_module
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.autograd.forward_ad
import torch.autograd.graph
import torch.backends
import torch.backends.cuda
import torch.backends.cudnn
import torch.backends.mha
import torch.backends.mkldnn
import torch.backends.opt_einsum
import torch.backends.quantized
import torch.nn.modules.module
import torch.optim.optimizer
import torch.utils._device
import torch.utils.checkpoint
from torch.utils._device import DeviceContext

from autograder.common.i18n import Text

_C = torch._C
_A = torch._C._autograd


def _missing(name: str) -> Callable[..., Any]:
    def missing(*args: Any, **kwargs: Any) -> Any:
        raise AttributeError(f"this torch has no {name}")  # read as "not known here"

    return missing


# Every private function of torch._C and torch._C._autograd, as it is at import. A name
# this torch lacks reads as "not known here" instead of failing the import.
_C_REFS = {n: getattr(_C, n) for n in dir(_C)}
_A_REFS = {n: getattr(_A, n) for n in dir(_A)}


def _c(name: str) -> Any:
    return _C_REFS.get(name) or _missing(f"torch._C.{name}")


def _a(name: str) -> Any:
    return _A_REFS.get(name) or _missing(f"torch._C._autograd.{name}")


_isinstance, _type, _len, _getattr = isinstance, type, len, getattr

# --- references taken at import ----------------------------------------------------------
_is_grad_enabled = torch.is_grad_enabled
_set_grad_enabled = _c("_set_grad_enabled")
_is_inference_mode_enabled = torch.is_inference_mode_enabled
_inference_mode = torch.inference_mode
_is_fwd_grad_enabled = _c("_is_fwd_grad_enabled")
_set_fwd_grad_enabled = _c("_set_fwd_grad_enabled")
_forward_ad = torch.autograd.forward_ad
_exit_dual_level = torch.autograd.forward_ad.exit_dual_level
_is_multithreading_enabled = _c("_is_multithreading_enabled")
_set_multithreading_enabled = _c("_set_multithreading_enabled")
_is_view_replay_enabled = _c("_is_view_replay_enabled")
_set_view_replay_enabled = _c("_set_view_replay_enabled")
_is_anomaly_enabled = torch.is_anomaly_enabled
_is_anomaly_check_nan_enabled = torch.is_anomaly_check_nan_enabled
_set_anomaly_enabled = torch.set_anomaly_enabled
_top_saved_hooks = _a("_top_saved_tensors_default_hooks")
_push_saved_hooks = _a("_push_saved_tensors_default_hooks")
_pop_saved_hooks = _a("_pop_saved_tensors_default_hooks")
_saved_hooks_is_enabled = _a("_saved_tensors_hooks_is_enabled")
_saved_hooks_enable = _a("_saved_tensors_hooks_enable")
_saved_hooks_disable = _a("_saved_tensors_hooks_disable")
_saved_hooks_message = _a("_saved_tensors_hooks_get_disabled_error_message")
_graph = torch.autograd.graph
_profiler_enabled = _a("_profiler_enabled")
_disable_profiler = _a("_disable_profiler")
_get_default_dtype = torch.get_default_dtype
_set_default_dtype = torch.set_default_dtype
_device_module = torch.utils._device
_DEVICE_CONTEXT = torch._GLOBAL_DEVICE_CONTEXT
_set_default_device = torch.set_default_device
_len_function_stack = _c("_len_torch_function_stack")
_function_stack_at = _c("_get_function_stack_at")
_pop_function_stack = _c("_pop_torch_function_stack")
_push_function_stack = _c("_push_on_torch_function_stack")
_len_dispatch_stack = _c("_len_torch_dispatch_stack")
_pop_dispatch_stack = _c("_pop_torch_dispatch_stack")
_push_dispatch_stack = _c("_push_on_torch_dispatch_stack")
_dispatch_stack_at = _c("_get_dispatch_stack_at")
_no_torch_function = _C.DisableTorchFunction
_no_torch_dispatch = _c("_DisableTorchDispatch")
_are_deterministic = torch.are_deterministic_algorithms_enabled
_is_deterministic_warn_only = torch.is_deterministic_algorithms_warn_only_enabled
_use_deterministic = torch.use_deterministic_algorithms
_get_fill_memory = _c("_get_deterministic_fill_uninitialized_memory")
_set_fill_memory = _c("_set_deterministic_fill_uninitialized_memory")
_is_warn_always = torch.is_warn_always_enabled
_set_warn_always = torch.set_warn_always
_get_num_threads = torch.get_num_threads
_set_num_threads = torch.set_num_threads
_threads = {"get": _get_num_threads, "set": _set_num_threads}  # see pretend_kernel_threads
_get_num_interop_threads = torch.get_num_interop_threads
_set_flush_denormal = torch.set_flush_denormal
_get_f32_matmul = torch.get_float32_matmul_precision
_set_f32_matmul = torch.set_float32_matmul_precision
_get_fp32_precision = _c("_get_fp32_precision_getter")
_set_fp32_precision = _c("_set_fp32_precision_setter")
_backends_globals = torch.backends.flags_frozen.__globals__
_flags_frozen = torch.backends.flags_frozen
_tensor_str = torch._tensor_str
_is_autocast_enabled = torch.is_autocast_enabled
_set_autocast_enabled = torch.set_autocast_enabled
_get_autocast_dtype = torch.get_autocast_dtype
_set_autocast_dtype = torch.set_autocast_dtype
_is_autocast_cache_enabled = torch.is_autocast_cache_enabled
_set_autocast_cache_enabled = torch.set_autocast_cache_enabled
_module_hooks = torch.nn.modules.module
_optimizer_hooks = sys.modules["torch.optim.optimizer"]
_get_sparse_invariants = _c("_check_sparse_tensor_invariants")
_set_sparse_invariants = _c("_set_check_sparse_tensor_invariants")
_checkpoint = torch.utils.checkpoint
_checkpoint_device_type = torch.utils.checkpoint.DefaultDeviceType
_mha_globals = torch.backends.mha.get_fastpath_enabled.__globals__
_opt_einsum = torch.backends.opt_einsum
_opt_einsum_get_enabled = torch.backends.opt_einsum._get_enabled
_opt_einsum_set_enabled = torch.backends.opt_einsum._set_enabled
_opt_einsum_get_strategy = torch.backends.opt_einsum._get_strategy
_opt_einsum_set_strategy = torch.backends.opt_einsum._set_strategy
_get_qengine = _c("_get_qengine")
_set_qengine = _c("_set_qengine")
_qengine_str = sys.modules["torch.backends.quantized"]._get_qengine_str
_qengine_id = sys.modules["torch.backends.quantized"]._get_qengine_id
_cuda_is_initialized = torch.cuda.is_initialized
_cuda_current_device = torch.cuda.current_device
_cuda_set_device = torch.cuda.set_device
_cuda_current_stream = torch.cuda.current_stream
_cuda_set_stream = torch.cuda.set_stream
_cuda_stream = torch.cuda.Stream
_cuda_is_capturing = torch.cuda.is_current_stream_capturing
_cuda_get_sync_debug_mode = torch.cuda.get_sync_debug_mode
_cuda_set_sync_debug_mode = torch.cuda.set_sync_debug_mode
_cuda_get_fraction = torch.cuda.get_per_process_memory_fraction
_cuda_set_fraction = torch.cuda.set_per_process_memory_fraction
_cuda_get_rng_all = torch.cuda.get_rng_state_all
_cuda_set_rng_all = torch.cuda.set_rng_state_all
_cpu_generator = torch.random.default_generator
_get_rng_state = _cpu_generator.get_state
_set_rng_state = _cpu_generator.set_state
_initial_seed = _cpu_generator.initial_seed
_filters_mutated = getattr(_warnings_module, "_filters_mutated", None)
_python_getstate = _python_random.getstate
_python_setstate = _python_random.setstate
_gc_isenabled, _gc_enable, _gc_disable = _gc.isenabled, _gc.enable, _gc.disable
_gc_get_threshold, _gc_set_threshold = _gc.get_threshold, _gc.set_threshold
_python_repr = repr
_words, _WORD = array.array, "Q"  # the state's words as bytes: repr took twice as long
_DTYPES = {str(v): v for v in vars(torch).values() if _isinstance(v, torch.dtype)}
_LINALG = _c("_LinalgBackend")
_BLAS = _c("_BlasBackend")
_ROCM_FA = _c("_ROCmFABackend")

# Every device type autocast knows (torch._C._autocast_supported_devices(), a fixed list so
# that every observation has the same keys; tests/test_global_state.py checks it).
AUTOCAST_DEVICES = (
    "cpu",
    "cuda",
    "xpu",
    "mps",
    "hpu",
    "xla",
    "ipu",
    "mtia",
    "maia",
    "privateuseone",
)


@dataclass(frozen=True)
class Setting:
    """One global setting: how to read it as plain data, put it back, and name it."""

    name: str  # its key in an observation's "_state"
    text: Text  # what feedback calls it, with the API that reads or sets it
    read: Callable[[], Any]  # its value as plain data; None where it cannot be read here
    kind: type  # the plain type of a known value: bool, int, float, str or tuple
    restore: Callable[[Any], None] | None = None  # put back what ``save`` kept; None: cannot
    save: Callable[[], Any] | None = None  # what ``restore`` needs; default: the read value
    compared: bool = True  # False: recorded only, never fails an answer by itself
    covers: tuple[str, ...] = ()  # the public getters and flags it reads (completeness test)
    show: Callable[[Any], str | Text] | None = None  # the value as feedback shows it
    follows: tuple[str, ...] = ()  # earlier settings whose change moves this one too

    def value(self) -> Any:
        """The setting now, or None where it cannot be read; never raises."""
        try:
            found = self.read()
        except Exception:  # a getter that refuses in this state (mixed TF32 APIs, no CUDA)
            return None
        return found if plain(found, self.kind) else None

    def shown(self, value: Any) -> str | Text:
        if value is None:
            return UNKNOWN
        return self.show(value) if self.show is not None else str(value)


UNKNOWN = Text("cannot be read here", "此处无法读取")
_SCALARS = (bool, int, float, str)


def plain(value: Any, kind: type) -> bool:
    """A known value of a setting of this kind: exact plain types only (no subclasses)."""
    if _type(value) is not kind:
        return False
    if kind is tuple:
        return all(_type(v) in _SCALARS or plain(v, tuple) for v in value)
    return True


# --- readers and writers that take more than one call -------------------------------------


def pretend_kernel_threads() -> None:
    """Let learner code read a kernel's CPU threads (one per core, at least two) while
    torch keeps the ones it has.

    The grading observer and the mutation judge fork their children, so torch runs on one
    thread there (a forked OpenMP pool hangs), while a learner's kernel has one per core:
    an answer that sets one thread and leaves it so went unseen. Here torch's getter and
    setter keep the count that learner code sees, and the registry reads that count.
    """
    seen = [max(2, os.cpu_count() or 1)]

    def get_num_threads() -> int:
        return seen[0]

    def set_num_threads(threads: int) -> None:
        real = _get_num_threads()
        _set_num_threads(threads)  # torch's own checks of the argument
        _set_num_threads(real)
        seen[0] = int(threads)

    torch.get_num_threads, torch.set_num_threads = get_num_threads, set_num_threads
    _threads.update(get=get_num_threads, set=set_num_threads)


@contextlib.contextmanager
def set_during(read: Callable[[], Any], write: Callable[[Any], None], value: Any):
    """A setting the caller chose, around a call: ``write(value)``, and what ``read()`` found
    written back afterwards (the caller's default dtype, anomaly mode, autocast's dtype)."""
    was = read()
    write(value)
    try:
        yield
    finally:
        write(was)


def gc_state() -> tuple:
    """Whether Python collects reference cycles, and when (its three thresholds)."""
    return (bool(_gc_isenabled()), *(int(t) for t in _gc_get_threshold()))


def restore_gc(state: tuple) -> None:
    (_gc_enable if state[0] else _gc_disable)()
    _gc_set_threshold(*state[1:])


def anomaly_state() -> tuple[bool, bool]:
    """Anomaly detection and its check_nan, read with the functions taken at import."""
    return bool(_is_anomaly_enabled()), bool(_is_anomaly_check_nan_enabled())


def set_anomaly_state(state: tuple[bool, bool]) -> None:
    _set_anomaly_enabled(*state)


def _anomaly_enabled(value: bool) -> None:
    _set_anomaly_enabled(value, _is_anomaly_check_nan_enabled())


def _anomaly_check_nan(value: bool) -> None:
    _set_anomaly_enabled(_is_anomaly_enabled(), value)


_kept_inference_guards: list = []  # kept for good: released, a guard would undo our restore


def _restore_inference_mode(value: bool) -> None:
    """Inference mode has no setter; a guard entered and kept puts it back (as before)."""
    guard = _inference_mode(value)
    guard.__enter__()
    _kept_inference_guards.append(guard)


def _dual_level() -> int:
    return int(_forward_ad._current_level)


def _restore_dual_level(value: int) -> None:
    while _forward_ad._current_level > value:
        _exit_dual_level(level=_forward_ad._current_level)


def _saved_hooks_stack() -> list:
    """The saved-tensor default hooks, bottom first, read by taking them off and back on."""
    enabled = _saved_hooks_is_enabled()
    message = _saved_hooks_message()
    if not enabled:  # pushing back is refused while they are disabled
        _saved_hooks_enable()
    stack = []
    try:
        for _ in range(256):
            top = _top_saved_hooks(False)
            if top is None:
                break
            stack.append(top)
            _pop_saved_hooks()
    finally:
        stack.reverse()
        for pack, unpack in stack:
            _push_saved_hooks(pack, unpack)
        if not enabled:
            _saved_hooks_disable(message or "")
    return stack


def _restore_saved_hooks(stack: list) -> None:
    current = _saved_hooks_stack()
    enabled, message = _saved_hooks_is_enabled(), _saved_hooks_message()
    if not enabled:
        _saved_hooks_enable()
    try:
        for _ in current:
            _pop_saved_hooks()
        for pack, unpack in stack:
            _push_saved_hooks(pack, unpack)
    finally:
        if not enabled:
            _saved_hooks_disable(message or "")


def _saved_hooks_allowed() -> tuple:
    return (bool(_saved_hooks_is_enabled()), _saved_hooks_message() or "")


def _allowed_shown(value: tuple) -> Text:
    if value[0]:
        return Text("allowed", "允许")
    return Text("disabled: “{m}”", "已停用：“{m}”").format(m=value[1])


def _restore_saved_hooks_allowed(value: tuple) -> None:
    if value[0]:
        _saved_hooks_enable()
    else:
        _saved_hooks_disable(value[1])


def _allow_mutation_on_saved() -> bool:
    return bool(_graph._allow_mutation_on_saved_tensors_enabled)


def _restore_allow_mutation_on_saved(value: bool) -> None:
    _graph._allow_mutation_on_saved_tensors_enabled = value


def _restore_profiler(value: bool) -> None:
    if not value:
        _disable_profiler()


def _function_modes() -> list:
    """The TorchFunctionModes entered, bottom first, read without taking them off."""
    return [_function_stack_at(i) for i in range(_len_function_stack())]


def _global_device_context():
    return _getattr(_DEVICE_CONTEXT, "device_context", None)


def _default_device() -> str:
    """torch.get_default_device() without allocating (it makes a tensor for the index):
    the device context entered last (``with torch.device(...)``), else set_default_device's.

    set_default_device("cpu") leaves a context entered on every later torch call although
    get_default_device() reads "cpu" as before, so its device is shown with where it came
    from: on a machine without a GPU that is the only trace of a default left set.
    """
    for mode in reversed(_function_modes()):
        if _isinstance(mode, DeviceContext):
            if mode is _global_device_context():
                return f"{mode.device} (torch.set_default_device)"
            return str(mode.device)
    return "cpu"


def _saved_default_device() -> tuple:
    context = _global_device_context()
    return ("set_default_device", None if context is None else str(context.device))


def _restore_default_device(saved: tuple) -> None:
    """set_default_device's own context back; a device context left entered is a
    function mode, taken off before this (``function_modes``)."""
    context = _global_device_context()
    if (None if context is None else str(context.device)) != saved[1]:
        _set_default_device(saved[1])


def _user_function_modes() -> list:
    """The modes entered besides set_default_device's own device context."""
    context = _global_device_context()
    return [m for m in _function_modes() if m is not context]


def _function_mode_names() -> tuple:
    return tuple(str(_type(m).__name__) for m in _user_function_modes())


def _restore_function_modes(saved: list) -> None:
    """The stack as it was: set_default_device's context at the bottom, then the rest."""
    context = _global_device_context()
    popped = [_pop_function_stack() for _ in range(_len_function_stack())]
    if any(m is context for m in popped):
        _push_function_stack(context)
    for mode in saved:
        _push_function_stack(mode)


def _dispatch_modes() -> list:
    return [_dispatch_stack_at(i) for i in range(_len_dispatch_stack())]


def _dispatch_mode_names() -> tuple:
    return tuple(str(_type(m).__name__) for m in _dispatch_modes())


def _restore_dispatch_modes(saved: list) -> None:
    for _ in range(_len_dispatch_stack()):
        _pop_dispatch_stack(None)
    for mode in saved:
        _push_dispatch_stack(mode)


def _modes_shown(value: tuple) -> str | Text:
    return ", ".join(value) if value else Text("none", "无")


def _restore_deterministic(value: bool) -> None:
    _use_deterministic(value, warn_only=_is_deterministic_warn_only())


def _restore_deterministic_warn_only(value: bool) -> None:
    _use_deterministic(_are_deterministic(), warn_only=value)


_TINY = 1e-160  # squared: 1e-320, a denormal double


def _flushes_denormals() -> bool:
    """torch.set_flush_denormal has no getter; the FPU's own flags answer by a product.

    set_flush_denormal sets the calling thread's flush-to-zero and denormals-are-zero
    flags (x86 MXCSR, Arm FPCR), which every float multiply on this thread obeys, Python's
    too: 1e-160 squared is a denormal, or zero when they are set.
    """
    return (_TINY * _TINY) == 0.0


def _restore_flush_denormal(value: bool) -> None:
    _set_flush_denormal(value)


def _fp32_raw(backend: str, op: str) -> Callable[[], str]:
    return lambda: str(_get_fp32_precision(backend, op))


def _fp32(backend: str, op: str) -> Callable[[], str]:
    """The precision in force: "none" defers to the backend's "all", then to the generic
    one, then means full float32 ("ieee"). Read so, a right answer that sets
    float32_matmul_precision("high") and back (which leaves "ieee" where "none" was) has
    changed nothing."""

    def read() -> str:
        for b, o in ((backend, op), (backend, "all"), ("generic", "all")):
            found = str(_get_fp32_precision(b, o))
            if found != "none":
                return found
        return "ieee"

    return read


def _set_fp32(backend: str, op: str) -> Callable[[str], None]:
    return lambda value: _set_fp32_precision(backend, op, value)


_LEGACY_TF32 = {  # which legacy setting moves which precise one
    "matmul": ("float32_matmul_precision", "cuda_matmul_allow_tf32"),
    "conv": ("cudnn_allow_tf32",),
    "rnn": ("cudnn_allow_tf32",),
    "all": (),
}
_FP32_FOLLOWS = {
    (backend, op): (
        _LEGACY_TF32[op]
        + (() if backend == "generic" else ("fp32_precision_generic_all",))
        + (() if op == "all" else (f"fp32_precision_{backend}_all",))
    )
    for backend in ("generic", "cuda", "mkldnn")
    for op in ("all", "matmul", "conv", "rnn")
}


def _unfrozen(value: bool) -> None:
    _backends_globals["__allow_nonbracketed_mutation_flag"] = not value


def _print_option(field: str) -> Callable[[], Any]:
    return lambda: _getattr(_tensor_str.PRINT_OPTS, field)


def _set_print_option(field: str) -> Callable[[Any], None]:
    return lambda value: setattr(_tensor_str.PRINT_OPTS, field, value)


def _autocast_dtype(device: str) -> Callable[[], str]:
    return lambda: str(_get_autocast_dtype(device))


def _set_autocast_dtype_of(device: str) -> Callable[[str], None]:
    return lambda value: _set_autocast_dtype(device, _DTYPES[value])


_HOOK_GROUPS = {
    "forward": (
        _module_hooks,
        (
            "_global_forward_pre_hooks",
            "_global_forward_hooks",
            "_global_forward_hooks_always_called",
            "_global_forward_hooks_with_kwargs",
        ),
    ),
    "backward": (
        _module_hooks,
        ("_global_backward_pre_hooks", "_global_backward_hooks", "_global_is_full_backward_hook"),
    ),
    "registration": (
        _module_hooks,
        (
            "_global_module_registration_hooks",
            "_global_parameter_registration_hooks",
            "_global_buffer_registration_hooks",
        ),
    ),
    "optimizer": (
        _optimizer_hooks,
        ("_global_optimizer_pre_hooks", "_global_optimizer_post_hooks"),
    ),
}


def _hook_ids(group: str) -> Callable[[], tuple]:
    """The ids of a group's global hooks (each handle's id is unique in the process)."""
    owner, names = _HOOK_GROUPS[group]

    def read() -> tuple:
        ids: set[int] = set()
        for name in names:
            found = _getattr(owner, name, None)
            if _type(found) is not bool and found is not None:
                ids.update(int(k) for k in found)
        return tuple(sorted(ids))

    return read


def _hook_dicts(group: str) -> Callable[[], dict]:
    owner, names = _HOOK_GROUPS[group]

    def save() -> dict:
        found = {name: _getattr(owner, name, None) for name in names}
        return {n: dict(v) if _isinstance(v, dict) else v for n, v in found.items()}

    return save


def _restore_hook_dicts(group: str) -> Callable[[dict], None]:
    owner, _ = _HOOK_GROUPS[group]

    def restore(saved: dict) -> None:
        for name, kept in saved.items():
            now = _getattr(owner, name, None)
            if _isinstance(now, dict) and _isinstance(kept, dict):
                now.clear()  # the same dict object: RemovableHandles hold it
                now.update(kept)
            else:
                setattr(owner, name, kept)

    return restore


def _hooks_shown(value: tuple) -> Text:
    if not value:
        return Text("none installed", "没有安装")
    return Text("{n} installed", "已安装 {n} 个").format(n=_len(value))


def _checkpoint_device() -> str:
    return str(_checkpoint_device_type.get_device_type())


def _optional_flag(owner: Any, name: str) -> Callable[[], str]:
    """A module flag that may be None ("not set"), read as text: "True", "False", "None"."""
    return lambda: str(_getattr(owner, name))


def _set_optional_flag(owner: Any, name: str) -> Callable[[str], None]:
    values = {"True": True, "False": False, "None": None}
    return lambda value: setattr(owner, name, values[value])


def _fastpath() -> bool:
    return bool(_mha_globals["_is_fastpath_enabled"])


def _set_fastpath(value: bool) -> None:
    _mha_globals["_is_fastpath_enabled"] = value


def _python_native_state():
    """The filter of torch's Python-native kernels, if torch has them and they are loaded."""
    registry = sys.modules.get("torch._native.registry")
    return None if registry is None else _getattr(registry, "_filter_state", None)


def _python_native_disabled() -> tuple | None:
    state = _python_native_state()
    if state is None:
        return None
    return tuple(
        sorted(
            [f"dsl {n}" for n in state._dsl_names]
            + [f"op {n}" for n in state._op_symbols]
            + [f"key {n}" for n in state._dispatch_keys]
        )
    )


_python_native = _getattr(torch.backends, "python_native", None)


def _restore_python_native(value: tuple) -> None:
    now = set(_python_native_disabled() or ())
    want = set(value)
    for item in sorted(now - want):
        kind, name = item.split(" ", 1)
        if kind == "dsl":
            _python_native._get_dsl_controller(name).enable()
        elif kind == "op":
            _python_native.enable_operations(name)
        else:
            _python_native.enable_dispatch_keys(name)
    for item in sorted(want - now):
        kind, name = item.split(" ", 1)
        if kind == "dsl":
            _python_native._get_dsl_controller(name).disable()
        elif kind == "op":
            _python_native.disable_operations(name)
        else:
            _python_native.disable_dispatch_keys(name)


def _backend_name(getter: Callable[[], Any]) -> Callable[[], str]:
    return lambda: str(getter().name)


def _set_backend(setter: Callable[[Any], None], enum: Any) -> Callable[[str], None]:
    return lambda value: setter(_getattr(enum, value))


def _pair(getter: Callable[[], Any]) -> Callable[[], tuple]:
    return lambda: tuple(bool(v) for v in getter())


def _set_pair(setter: Callable[..., None]) -> Callable[[tuple], None]:
    return lambda value: setter(*value)


def _cuda(read: Callable[[], Any]) -> Callable[[], Any]:
    """A CUDA setting, read only once CUDA has started (reading would start it)."""
    return lambda: read() if _cuda_is_initialized() else None


def _current_stream() -> tuple:
    stream = _cuda_current_stream()
    return (int(stream.stream_id), int(stream.device_index), int(stream.device_type))


def _set_current_stream(value: tuple) -> None:
    stream_id, index, device_type = value
    _cuda_set_stream(_cuda_stream(stream_id=stream_id, device_index=index, device_type=device_type))


def _stream_shown(value: tuple) -> Text:
    return Text("stream {s} of cuda:{d}", "cuda:{d} 上的流 {s}").format(s=value[0], d=value[1])


def _memory_fraction() -> float:
    return float(_cuda_get_fraction(_cuda_current_device()))


def _set_memory_fraction(value: float) -> None:
    _cuda_set_fraction(value, _cuda_current_device())


def _digest(*parts: bytes) -> str:
    h = hashlib.blake2b(digest_size=8)
    for part in parts:
        h.update(part)
    return h.hexdigest()


def _tensor_bytes(t: torch.Tensor) -> bytes:
    return t.numpy().tobytes()


def _torch_rng_state() -> torch.Tensor:
    with _no_torch_function(), _no_torch_dispatch():  # modes left entered see none of it
        return _get_rng_state()


def _torch_rng() -> str:
    with _no_torch_function(), _no_torch_dispatch():
        return _digest(_tensor_bytes(_get_rng_state()))


def _restore_torch_rng(state: torch.Tensor) -> None:
    with _no_torch_function(), _no_torch_dispatch():
        _set_rng_state(state)


def _cuda_rng_states() -> list | None:
    if not _cuda_is_initialized():
        return None
    with _no_torch_function(), _no_torch_dispatch():
        return [s.clone() for s in _cuda_get_rng_all()]


def _cuda_rng() -> str | None:
    states = _cuda_rng_states()
    return None if states is None else _digest(*(_tensor_bytes(s) for s in states))


def _restore_cuda_rng(states: list | None) -> None:
    if states is not None and _cuda_is_initialized():
        with _no_torch_function(), _no_torch_dispatch():
            _cuda_set_rng_all(states)


def _numpy_random():
    numpy = sys.modules.get("numpy")  # not imported: nothing could have drawn from it
    return None if numpy is None else numpy.random


def _numpy_rng_state():
    module = _numpy_random()
    return None if module is None else module.get_state()


def _numpy_rng() -> str | None:
    state = _numpy_rng_state()
    if state is None:
        return None
    name, keys, pos, has_gauss, cached = state
    return _digest(
        str(name).encode(), keys.tobytes(), _python_repr((pos, has_gauss, cached)).encode()
    )


def _restore_numpy_rng(state) -> None:
    module = _numpy_random()
    if state is not None and module is not None:
        module.set_state(state)


def _python_rng() -> str:
    version, words, gauss = _python_getstate()  # 624 32-bit words and the index
    return _digest(_words(_WORD, words).tobytes(), _python_repr((version, gauss)).encode())


def _quiet_read_only(_value: Any) -> None:
    """Restored together with another setting (the random state holds the seed)."""


# --- the registry -------------------------------------------------------------------------


def _t(en: str, zh: str) -> Text:
    return Text(en, zh)


def _warning_filters() -> tuple:
    """Python's warning filters that apply everywhere: a built-in category and no module
    pattern, as ``warnings.simplefilter("ignore")`` adds one. A library's own filters,
    added when it is first imported (torch._dynamo's for SymPy), name their module or a
    category of their own: not the caller's setting."""
    return tuple(
        (str(action), "" if message is None else str(message.pattern), category.__name__, lineno)
        for action, message, category, module, lineno in _warnings_module.filters
        if module is None and _getattr(category, "__module__", "") == "builtins"
    )


def _saved_warning_filters() -> list:
    return list(_warnings_module.filters)


def _restore_warning_filters(saved: list) -> None:
    _warnings_module.filters = list(saved)
    if _filters_mutated is not None:  # the filters' cache, cleared as warnings' own API does
        _filters_mutated()


def _warning_filters_shown(value: tuple) -> str:
    return "; ".join(f"{a} {c}" + (f" '{m}'" if m else "") for a, m, c, _ in value) or "-"


def _settings() -> list[Setting]:
    s: list[Setting] = [
        # Inference mode first: putting it back also sets grad mode, restored next.
        Setting(
            "inference_mode",
            _t(
                "inference mode (torch.is_inference_mode_enabled())",
                "推理模式（torch.is_inference_mode_enabled()）",
            ),
            lambda: bool(_is_inference_mode_enabled()),
            bool,
            _restore_inference_mode,
            covers=("torch.is_inference_mode_enabled",),
        ),
        Setting(
            "grad_enabled",
            _t("grad mode (torch.is_grad_enabled())", "梯度模式（torch.is_grad_enabled()）"),
            lambda: bool(_is_grad_enabled()),
            bool,
            _set_grad_enabled,
            covers=("torch.is_grad_enabled",),
            follows=("inference_mode",),
        ),
        Setting(
            "forward_grad_enabled",
            _t(
                "forward-mode AD (torch.autograd.forward_ad)",
                "前向模式自动微分（torch.autograd.forward_ad）",
            ),
            lambda: bool(_is_fwd_grad_enabled()),
            bool,
            _set_fwd_grad_enabled,
            follows=("inference_mode",),
        ),
        Setting(
            "dual_level",
            _t(
                "the forward-mode AD dual level entered (torch.autograd.forward_ad.dual_level)",
                "已进入的前向模式自动微分对偶层级（torch.autograd.forward_ad.dual_level）",
            ),
            _dual_level,
            int,
            _restore_dual_level,
        ),
        Setting(
            "multithreading_enabled",
            _t(
                "autograd's multithreading (torch.autograd.is_multithreading_enabled())",
                "autograd 的多线程（torch.autograd.is_multithreading_enabled()）",
            ),
            lambda: bool(_is_multithreading_enabled()),
            bool,
            _set_multithreading_enabled,
            covers=("torch.autograd.is_multithreading_enabled",),
            follows=("inference_mode",),
        ),
        Setting(
            "view_replay_enabled",
            _t(
                "autograd's view replay (torch.autograd.is_view_replay_enabled())",
                "autograd 的视图重放（torch.autograd.is_view_replay_enabled()）",
            ),
            lambda: bool(_is_view_replay_enabled()),
            bool,
            _set_view_replay_enabled,
            covers=("torch.autograd.is_view_replay_enabled",),
        ),
        Setting(
            "anomaly_enabled",
            _t(
                "anomaly detection (torch.is_anomaly_enabled())",
                "异常检测（torch.is_anomaly_enabled()）",
            ),
            lambda: bool(_is_anomaly_enabled()),
            bool,
            _anomaly_enabled,
            covers=("torch.is_anomaly_enabled",),
        ),
        Setting(
            "anomaly_check_nan",
            _t(
                "anomaly detection's NaN check (torch.is_anomaly_check_nan_enabled())",
                "异常检测的 NaN 检查（torch.is_anomaly_check_nan_enabled()）",
            ),
            lambda: bool(_is_anomaly_check_nan_enabled()),
            bool,
            _anomaly_check_nan,
            covers=("torch.is_anomaly_check_nan_enabled",),
        ),
        Setting(
            "saved_tensors_hooks",
            _t(
                "the number of saved-tensor hooks installed (torch.autograd.graph"
                ".saved_tensors_hooks)",
                "保存张量钩子数（torch.autograd.graph.saved_tensors_hooks）",
            ),
            lambda: _len(_saved_hooks_stack()),
            int,
            _restore_saved_hooks,
            save=_saved_hooks_stack,
        ),
        Setting(
            "saved_tensors_hooks_allowed",
            _t(
                "whether saved-tensor hooks may be installed "
                "(torch.autograd.graph.disable_saved_tensors_hooks)",
                "保存张量钩子的启用状态（torch.autograd.graph.disable_saved_tensors_hooks）",
            ),
            _saved_hooks_allowed,
            tuple,
            _restore_saved_hooks_allowed,
            show=_allowed_shown,
        ),
        Setting(
            "allow_mutation_on_saved_tensors",
            _t(
                "permission to change saved tensors in place "
                "(torch.autograd.graph.allow_mutation_on_saved_tensors)",
                "已保存张量的原地修改许可（torch.autograd.graph.allow_mutation_on_saved_tensors）",
            ),
            _allow_mutation_on_saved,
            bool,
            _restore_allow_mutation_on_saved,
        ),
        Setting(
            "profiler_running",
            _t(
                "whether the autograd profiler runs (torch.autograd.profiler.profile)",
                "autograd 性能分析器的运行状态（torch.autograd.profiler.profile）",
            ),
            lambda: bool(_profiler_enabled()),
            bool,
            _restore_profiler,
        ),
        # The modes first: putting the stack back leaves set_default_device's context at
        # the bottom, where the default device (below) expects to find it.
        Setting(
            "function_modes",
            _t(
                "the torch function modes in force (torch.overrides.TorchFunctionMode)",
                "torch function 模式栈（torch.overrides.TorchFunctionMode）",
            ),
            _function_mode_names,
            tuple,
            _restore_function_modes,
            save=_user_function_modes,
            show=_modes_shown,
        ),
        Setting(
            "dispatch_modes",
            _t(
                "the dispatch modes in force (torch.utils._python_dispatch.TorchDispatchMode)",
                "dispatch 模式栈（torch.utils._python_dispatch.TorchDispatchMode）",
            ),
            _dispatch_mode_names,
            tuple,
            _restore_dispatch_modes,
            save=_dispatch_modes,
            show=_modes_shown,
        ),
        Setting(
            "default_dtype",
            _t(
                "the default dtype (torch.get_default_dtype())",
                "默认 dtype（torch.get_default_dtype()）",
            ),
            lambda: str(_get_default_dtype()),
            str,
            lambda value: _set_default_dtype(_DTYPES[value]),
            covers=("torch.get_default_dtype",),
        ),
        Setting(
            "default_device",
            _t(
                "the default device (torch.get_default_device())",
                "默认设备（torch.get_default_device()）",
            ),
            _default_device,
            str,
            _restore_default_device,
            save=_saved_default_device,
            covers=("torch.get_default_device",),
        ),
        Setting(
            "deterministic_algorithms",
            _t(
                "deterministic algorithms (torch.are_deterministic_algorithms_enabled())",
                "确定性算法（torch.are_deterministic_algorithms_enabled()）",
            ),
            lambda: bool(_are_deterministic()),
            bool,
            _restore_deterministic,
            covers=(
                "torch.are_deterministic_algorithms_enabled",
                "torch.get_deterministic_debug_mode",
            ),
        ),
        Setting(
            "deterministic_warn_only",
            _t(
                "deterministic algorithms' warn-only mode "
                "(torch.is_deterministic_algorithms_warn_only_enabled())",
                "确定性算法的仅警告模式（torch.is_deterministic_algorithms_warn_only_enabled()）",
            ),
            lambda: bool(_is_deterministic_warn_only()),
            bool,
            _restore_deterministic_warn_only,
            covers=(
                "torch.is_deterministic_algorithms_warn_only_enabled",
                "torch.get_deterministic_debug_mode",
            ),
        ),
        Setting(
            "fill_uninitialized_memory",
            _t(
                "filling uninitialized memory (torch.utils.deterministic"
                ".fill_uninitialized_memory)",
                "填充未初始化的内存（torch.utils.deterministic.fill_uninitialized_memory）",
            ),
            lambda: bool(_get_fill_memory()),
            bool,
            _set_fill_memory,
            covers=("torch.utils.deterministic.fill_uninitialized_memory",),
        ),
        Setting(
            "warn_always",
            _t(
                "warning every time (torch.is_warn_always_enabled())",
                "每次都发出警告（torch.is_warn_always_enabled()）",
            ),
            lambda: bool(_is_warn_always()),
            bool,
            _set_warn_always,
            covers=("torch.is_warn_always_enabled",),
        ),
        Setting(
            "num_threads",
            _t(
                "the number of CPU threads (torch.get_num_threads())",
                "CPU 线程数（torch.get_num_threads()）",
            ),
            lambda: int(_threads["get"]()),
            int,
            lambda count: _threads["set"](count),
            covers=("torch.get_num_threads",),
        ),
        Setting(  # it can be set once per process, before any parallel work: compared only
            "num_interop_threads",
            _t(
                "the number of inter-op CPU threads (torch.get_num_interop_threads())",
                "CPU 算子间并行线程数（torch.get_num_interop_threads()）",
            ),
            lambda: int(_get_num_interop_threads()),
            int,
            None,
            covers=("torch.get_num_interop_threads",),
        ),
        Setting(
            "flush_denormal",
            _t(
                "flushing denormal numbers to zero (torch.set_flush_denormal)",
                "把非规格化数冲刷为零（torch.set_flush_denormal）",
            ),
            _flushes_denormals,
            bool,
            _restore_flush_denormal,
        ),
        # The TF32 / float32-precision settings: the legacy ones first, the precise ones
        # after, so that putting the precise ones back last leaves them as recorded.
        Setting(
            "float32_matmul_precision",
            _t(
                "float32 matmul precision (torch.get_float32_matmul_precision())",
                "float32 矩阵乘法精度（torch.get_float32_matmul_precision()）",
            ),
            lambda: str(_get_f32_matmul()),
            str,
            _set_f32_matmul,
            covers=("torch.get_float32_matmul_precision",),
        ),
        Setting(
            "cuda_matmul_allow_tf32",
            _t(
                "TF32 in CUDA matmuls (torch.backends.cuda.matmul.allow_tf32)",
                "CUDA 矩阵乘法中的 TF32（torch.backends.cuda.matmul.allow_tf32）",
            ),
            lambda: bool(_c("_get_cublas_allow_tf32")()),
            bool,
            _c("_set_cublas_allow_tf32"),
            covers=("torch.backends.cuda.matmul.allow_tf32",),
            follows=("float32_matmul_precision",),
        ),
        Setting(
            "cudnn_allow_tf32",
            _t(
                "TF32 in cuDNN (torch.backends.cudnn.allow_tf32)",
                "cuDNN 中的 TF32（torch.backends.cudnn.allow_tf32）",
            ),
            lambda: bool(_c("_get_cudnn_allow_tf32")()),
            bool,
            _c("_set_cudnn_allow_tf32"),
            covers=("torch.backends.cudnn.allow_tf32",),
        ),
        Setting(
            "mkldnn_allow_tf32",
            _t(
                "TF32 in oneDNN (torch.backends.mkldnn.allow_tf32)",
                "oneDNN 中的 TF32（torch.backends.mkldnn.allow_tf32）",
            ),
            lambda: _c("_get_onednn_allow_tf32")(),  # None here means "not set"
            bool,
            _c("_set_onednn_allow_tf32"),
            covers=("torch.backends.mkldnn.allow_tf32",),
        ),
    ]
    for backend, op, api, en, zh in (
        ("generic", "all", "torch.backends.fp32_precision", "every backend", "所有后端"),
        ("cuda", "all", "torch.backends.cudnn.fp32_precision", "CUDA", "CUDA"),
        (
            "cuda",
            "matmul",
            "torch.backends.cuda.matmul.fp32_precision",
            "CUDA matmuls",
            "CUDA 矩阵乘法",
        ),
        (
            "cuda",
            "conv",
            "torch.backends.cudnn.conv.fp32_precision",
            "cuDNN convolutions",
            "cuDNN 卷积",
        ),
        ("cuda", "rnn", "torch.backends.cudnn.rnn.fp32_precision", "cuDNN RNNs", "cuDNN 循环网络"),
        ("mkldnn", "all", "torch.backends.mkldnn.fp32_precision", "oneDNN", "oneDNN"),
        (
            "mkldnn",
            "matmul",
            "torch.backends.mkldnn.matmul.fp32_precision",
            "oneDNN matmuls",
            "oneDNN 矩阵乘法",
        ),
        (
            "mkldnn",
            "conv",
            "torch.backends.mkldnn.conv.fp32_precision",
            "oneDNN convolutions",
            "oneDNN 卷积",
        ),
        (
            "mkldnn",
            "rnn",
            "torch.backends.mkldnn.rnn.fp32_precision",
            "oneDNN RNNs",
            "oneDNN 循环网络",
        ),
    ):
        s.append(
            Setting(
                f"fp32_precision_{backend}_{op}",
                _t(f"the float32 precision of {en} ({api})", f"{zh}的 float32 精度（{api}）"),
                _fp32(backend, op),
                str,
                _set_fp32(backend, op),
                save=_fp32_raw(backend, op),
                covers=(api,),
                follows=_FP32_FOLLOWS[backend, op],
            )
        )
    s += [
        Setting(
            "backends_flags_frozen",
            _t(
                "whether the torch.backends flags are frozen "
                "(torch.backends.disable_global_flags())",
                "torch.backends 标志的冻结状态（torch.backends.disable_global_flags()）",
            ),
            lambda: bool(_flags_frozen()),
            bool,
            _unfrozen,
            covers=("torch.backends.flags_frozen",),
        ),
        Setting(
            "cudnn_enabled",
            _t(
                "whether cuDNN is used (torch.backends.cudnn.enabled)",
                "cuDNN 的启用状态（torch.backends.cudnn.enabled）",
            ),
            lambda: bool(_c("_get_cudnn_enabled")()),
            bool,
            _c("_set_cudnn_enabled"),
            covers=("torch.backends.cudnn.enabled",),
        ),
        Setting(
            "cudnn_benchmark",
            _t(
                "cuDNN benchmark mode (torch.backends.cudnn.benchmark)",
                "cuDNN 基准测试模式（torch.backends.cudnn.benchmark）",
            ),
            lambda: bool(_c("_get_cudnn_benchmark")()),
            bool,
            _c("_set_cudnn_benchmark"),
            covers=("torch.backends.cudnn.benchmark",),
        ),
        Setting(
            "cudnn_deterministic",
            _t(
                "cuDNN deterministic mode (torch.backends.cudnn.deterministic)",
                "cuDNN 确定性模式（torch.backends.cudnn.deterministic）",
            ),
            lambda: bool(_c("_get_cudnn_deterministic")()),
            bool,
            _c("_set_cudnn_deterministic"),
            covers=("torch.backends.cudnn.deterministic",),
        ),
        Setting(
            "cudnn_benchmark_limit",
            _t(
                "cuDNN benchmark limit (torch.backends.cudnn.benchmark_limit)",
                "cuDNN 基准测试的算法数上限（torch.backends.cudnn.benchmark_limit）",
            ),
            lambda: int(_c("_cuda_get_cudnn_benchmark_limit")()),
            int,
            lambda value: _c("_cuda_set_cudnn_benchmark_limit")(value),
            covers=("torch.backends.cudnn.benchmark_limit",),
        ),
        Setting(
            "cudnn_depthwise_kernel",
            _t(
                "cuDNN depthwise kernel choice (torch.backends.cudnn.depthwise_kernel)",
                "cuDNN 深度卷积核函数的选择（torch.backends.cudnn.depthwise_kernel）",
            ),
            lambda: str(_c("_get_cudnn_depthwise_kernel")()),
            str,
            _c("_set_cudnn_depthwise_kernel"),
            covers=("torch.backends.cudnn.depthwise_kernel",),
        ),
        Setting(
            "miopen_immediate",
            _t(
                "MIOpen immediate mode (torch.backends.miopen.immediate)",
                "MIOpen 即时模式（torch.backends.miopen.immediate）",
            ),
            lambda: bool(_c("_get_miopen_immediate")()),
            bool,
            _c("_set_miopen_immediate"),
            covers=("torch.backends.miopen.immediate",),
        ),
        Setting(
            "cuda_matmul_fp16_reduction",
            _t(
                "reduced-precision reductions in float16 matmuls, and with split-K "
                "(torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction)",
                "float16 矩阵乘法中的降精度归约，及 split-K 时的"
                "（torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction）",
            ),
            _pair(_c("_get_cublas_allow_fp16_reduced_precision_reduction")),
            tuple,
            _set_pair(_c("_set_cublas_allow_fp16_reduced_precision_reduction")),
            covers=(
                "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
                "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction_split_k",
            ),
        ),
        Setting(
            "cuda_matmul_bf16_reduction",
            _t(
                "reduced-precision reductions in bfloat16 matmuls, and with split-K "
                "(torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction)",
                "bfloat16 矩阵乘法中的降精度归约，及 split-K 时的"
                "（torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction）",
            ),
            _pair(_c("_get_cublas_allow_bf16_reduced_precision_reduction")),
            tuple,
            _set_pair(_c("_set_cublas_allow_bf16_reduced_precision_reduction")),
            covers=(
                "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction",
                "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction_split_k",
            ),
        ),
        Setting(
            "cuda_matmul_fp16_accumulation",
            _t(
                "float16 accumulation in CUDA matmuls "
                "(torch.backends.cuda.matmul.allow_fp16_accumulation)",
                "CUDA 矩阵乘法中的 float16 累加"
                "（torch.backends.cuda.matmul.allow_fp16_accumulation）",
            ),
            lambda: bool(_c("_get_cublas_allow_fp16_accumulation")()),
            bool,
            _c("_set_cublas_allow_fp16_accumulation"),
            covers=("torch.backends.cuda.matmul.allow_fp16_accumulation",),
        ),
        Setting(
            "cuda_matmul_prefer_grouped_gemm",
            _t(
                "the preference for cuBLASLt grouped GEMM "
                "(torch.backends.cuda.matmul.prefer_cublaslt_grouped_gemm)",
                "cuBLASLt 分组 GEMM 的优先设置"
                "（torch.backends.cuda.matmul.prefer_cublaslt_grouped_gemm）",
            ),
            lambda: bool(_c("_get_cublaslt_prefer_grouped_gemm")()),
            bool,
            _c("_set_cublaslt_prefer_grouped_gemm"),
            covers=("torch.backends.cuda.matmul.prefer_cublaslt_grouped_gemm",),
        ),
    ]
    for key, getter, setter, api, en, zh in (
        ("flash", "_get_flash_sdp_enabled", "_set_sdp_use_flash", "flash_sdp_enabled",
         "the flash attention kernel", "Flash Attention 核函数"),
        ("mem_efficient", "_get_mem_efficient_sdp_enabled", "_set_sdp_use_mem_efficient",
         "mem_efficient_sdp_enabled", "the memory-efficient attention kernel",
         "省显存注意力核函数"),
        ("math", "_get_math_sdp_enabled", "_set_sdp_use_math", "math_sdp_enabled",
         "the math attention kernel", "数学实现的注意力核函数"),
        ("cudnn", "_get_cudnn_sdp_enabled", "_set_sdp_use_cudnn", "cudnn_sdp_enabled",
         "the cuDNN attention kernel", "cuDNN 注意力核函数"),
        ("fa3", "_get_fa3_sdp_enabled", "_set_sdp_use_fa3", "fa3_sdp_enabled",
         "the FlashAttention-3 kernel", "FlashAttention-3 核函数"),
        ("overrideable", "_get_overrideable_sdp_enabled", "_set_sdp_use_overrideable",
         "overrideable_sdp_enabled", "the overrideable attention kernel", "可覆盖的注意力核函数"),
        ("math_reduction", "_get_math_sdp_allow_fp16_bf16_reduction",
         "_set_math_sdp_allow_fp16_bf16_reduction", "fp16_bf16_reduction_math_sdp_allowed",
         "reduced precision in the math attention kernel", "数学实现的注意力核函数中的降精度计算"),
    ):  # fmt: skip
        s.append(
            Setting(
                f"sdp_{key}",
                _t(f"{en} (torch.backends.cuda.{api}())", f"{zh}（torch.backends.cuda.{api}()）"),
                (lambda g: lambda: bool(g()))(_c(getter)),
                bool,
                _c(setter),
                covers=(f"torch.backends.cuda.{api}",),
            )
        )
    s += [
        Setting(
            "sdp_priority_order",
            _t(
                "the attention kernels' order of preference "
                "(torch.nn.attention.sdpa_kernel(..., set_priority=True))",
                "注意力核函数的优先顺序（torch.nn.attention.sdpa_kernel(..., set_priority=True)）",
            ),
            lambda: tuple(int(v) for v in _c("_get_sdp_priority_order")()),
            tuple,
            lambda value: _c("_set_sdp_priority_order")(list(value)),
        ),
        Setting(
            "preferred_linalg_library",
            _t(
                "the preferred linear-algebra library (torch.backends.cuda"
                ".preferred_linalg_library())",
                "首选的线性代数库（torch.backends.cuda.preferred_linalg_library()）",
            ),
            _backend_name(_c("_get_linalg_preferred_backend")),
            str,
            _set_backend(_c("_set_linalg_preferred_backend"), _LINALG),
            covers=("torch.backends.cuda.preferred_linalg_library",),
        ),
        Setting(
            "preferred_blas_library",
            _t(
                "the preferred BLAS library (torch.backends.cuda.preferred_blas_library())",
                "首选的 BLAS 库（torch.backends.cuda.preferred_blas_library()）",
            ),
            _backend_name(_c("_get_blas_preferred_backend")),
            str,
            _set_backend(_c("_set_blas_preferred_backend"), _BLAS),
            covers=("torch.backends.cuda.preferred_blas_library",),
        ),
        Setting(
            "preferred_rocm_fa_library",
            _t(
                "the preferred ROCm flash attention library "
                "(torch.backends.cuda.preferred_rocm_fa_library())",
                "首选的 ROCm Flash Attention 实现"
                "（torch.backends.cuda.preferred_rocm_fa_library()）",
            ),
            _backend_name(_c("_get_rocm_fa_preferred_backend")),
            str,
            _set_backend(_c("_set_rocm_fa_preferred_backend"), _ROCM_FA),
            covers=("torch.backends.cuda.preferred_rocm_fa_library",),
        ),
        Setting(
            "mkldnn_enabled",
            _t(
                "whether oneDNN is used (torch.backends.mkldnn.enabled)",
                "oneDNN 的启用状态（torch.backends.mkldnn.enabled）",
            ),
            lambda: bool(_c("_get_mkldnn_enabled")()),
            bool,
            _c("_set_mkldnn_enabled"),
            covers=("torch.backends.mkldnn.enabled",),
        ),
        Setting(
            "mkldnn_deterministic",
            _t(
                "oneDNN deterministic mode (torch.backends.mkldnn.deterministic)",
                "oneDNN 确定性模式（torch.backends.mkldnn.deterministic）",
            ),
            lambda: bool(_c("_get_mkldnn_deterministic")()),
            bool,
            _c("_set_mkldnn_deterministic"),
            covers=("torch.backends.mkldnn.deterministic",),
        ),
        Setting(
            "nnpack_enabled",
            _t(
                "whether NNPACK is used (torch.backends.nnpack.set_flags)",
                "NNPACK 的启用状态（torch.backends.nnpack.set_flags）",
            ),
            lambda: bool(_c("_get_nnpack_enabled")()),
            bool,
            _c("_set_nnpack_enabled"),
        ),
        Setting(
            "opt_einsum_enabled",
            _t(
                "whether torch.einsum uses opt_einsum (torch.backends.opt_einsum.enabled)",
                "torch.einsum 是否使用 opt_einsum（torch.backends.opt_einsum.enabled）",
            ),
            lambda: bool(_opt_einsum_get_enabled()),
            bool,
            _opt_einsum_set_enabled,
            covers=("torch.backends.opt_einsum.enabled",),
        ),
        Setting(
            "opt_einsum_strategy",
            _t(
                "opt_einsum's strategy (torch.backends.opt_einsum.strategy)",
                "opt_einsum 的策略（torch.backends.opt_einsum.strategy）",
            ),
            lambda: _opt_einsum_get_strategy(),  # None without opt_einsum installed
            str,
            _opt_einsum_set_strategy,
            covers=("torch.backends.opt_einsum.strategy",),
        ),
        Setting(
            "quantized_engine",
            _t(
                "the quantized engine (torch.backends.quantized.engine)",
                "量化引擎（torch.backends.quantized.engine）",
            ),
            lambda: str(_qengine_str(_get_qengine())),
            str,
            lambda value: _set_qengine(_qengine_id(value)),
            covers=("torch.backends.quantized.engine",),
        ),
        Setting(
            "mha_fastpath",
            _t(
                "the MultiheadAttention fast path (torch.backends.mha.get_fastpath_enabled())",
                "MultiheadAttention 快速路径（torch.backends.mha.get_fastpath_enabled()）",
            ),
            _fastpath,
            bool,
            _set_fastpath,
            covers=("torch.backends.mha.get_fastpath_enabled",),
        ),
        Setting(
            "python_native_disabled",
            _t(
                "the Python-native kernels disabled (torch.backends.python_native)",
                "被停用的 Python 原生核函数（torch.backends.python_native）",
            ),
            _python_native_disabled,
            tuple,
            _restore_python_native,
            covers=(
                "torch.backends.python_native.is_dsl_disabled",
                "torch.backends.python_native.is_operation_disabled",
                "torch.backends.python_native.cutedsl.enabled",
                "torch.backends.python_native.helion.enabled",
                "torch.backends.python_native.triton.enabled",
            ),
        ),
    ]
    for field, kind, en, zh in (
        ("precision", int, "digits", "打印的小数位数"),
        ("threshold", int, "element count beyond which it summarizes", "打印时开始省略的元素数"),
        ("edgeitems", int, "items shown at each end", "省略打印时首尾各显示的元素数"),
        ("linewidth", int, "line width", "打印行宽"),
        ("sci_mode", str, "scientific notation", "打印的科学计数法设置"),
    ):
        read = _print_option(field)
        s.append(
            Setting(
                f"print_{field}",
                _t(
                    f"the print options' {en} (torch.set_printoptions({field}=...))",
                    f"{zh}（torch.set_printoptions({field}=...)）",
                ),
                (lambda r: lambda: str(r()))(read) if kind is str else read,
                kind,
                _set_optional_flag(_tensor_str.PRINT_OPTS, field)
                if kind is str
                else _set_print_option(field),
                covers=(f"torch._tensor_str.PRINT_OPTS.{field}",),
            )
        )
    for device in AUTOCAST_DEVICES:
        s.append(
            Setting(
                f"autocast_{device}",
                _t(
                    f"autocast on {device} (torch.is_autocast_enabled('{device}'))",
                    f"{device} 上是否启用 autocast（torch.is_autocast_enabled('{device}')）",
                ),
                (lambda d: lambda: bool(_is_autocast_enabled(d)))(device),
                bool,
                (lambda d: lambda value: _set_autocast_enabled(d, value))(device),
                covers=("torch.is_autocast_enabled",)
                + {
                    "cpu": ("torch.is_autocast_cpu_enabled",),
                    "xla": ("torch.is_autocast_xla_enabled",),
                    "ipu": ("torch.is_autocast_ipu_enabled",),
                }.get(device, ()),
            )
        )
        s.append(
            Setting(
                f"autocast_dtype_{device}",
                _t(
                    f"the autocast dtype on {device} (torch.get_autocast_dtype('{device}'))",
                    f"{device} 的 autocast dtype（torch.get_autocast_dtype('{device}')）",
                ),
                _autocast_dtype(device),
                str,
                _set_autocast_dtype_of(device),
                covers=("torch.get_autocast_dtype",)
                + {
                    "cpu": ("torch.get_autocast_cpu_dtype",),
                    "cuda": ("torch.get_autocast_gpu_dtype",),
                    "xla": ("torch.get_autocast_xla_dtype",),
                    "ipu": ("torch.get_autocast_ipu_dtype",),
                }.get(device, ()),
            )
        )
    s.append(
        Setting(
            "autocast_cache",
            _t(
                "autocast's cache of casted weights (torch.is_autocast_cache_enabled())",
                "autocast 的权重转换缓存（torch.is_autocast_cache_enabled()）",
            ),
            lambda: bool(_is_autocast_cache_enabled()),
            bool,
            _set_autocast_cache_enabled,
            covers=("torch.is_autocast_cache_enabled",),
        )
    )
    for group, api, en, zh in (
        ("forward", "register_module_forward_hook", "forward", "前向"),
        ("backward", "register_module_full_backward_hook", "backward", "反向"),
        ("registration", "register_module_module_registration_hook", "registration", "注册"),
    ):
        s.append(
            Setting(
                f"global_module_{group}_hooks",
                _t(
                    f"global module {en} hooks (torch.nn.modules.module.{api})",
                    f"全局模块{zh}钩子（torch.nn.modules.module.{api}）",
                ),
                _hook_ids(group),
                tuple,
                _restore_hook_dicts(group),
                save=_hook_dicts(group),
                covers=tuple(f"torch.nn.modules.module.{n}" for n in _HOOK_GROUPS[group][1]),
                show=_hooks_shown,
            )
        )
    s += [
        Setting(
            "global_optimizer_hooks",
            _t(
                "global optimizer step hooks "
                "(torch.optim.optimizer.register_optimizer_step_pre_hook)",
                "全局优化器 step 钩子（torch.optim.optimizer.register_optimizer_step_pre_hook）",
            ),
            _hook_ids("optimizer"),
            tuple,
            _restore_hook_dicts("optimizer"),
            save=_hook_dicts("optimizer"),
            covers=tuple(f"torch.optim.optimizer.{n}" for n in _HOOK_GROUPS["optimizer"][1]),
            show=_hooks_shown,
        ),
        Setting(
            "sparse_invariant_checks",
            _t(
                "sparse tensor invariant checks "
                "(torch.sparse.check_sparse_tensor_invariants.is_enabled())",
                "稀疏张量不变量检查（torch.sparse.check_sparse_tensor_invariants.is_enabled()）",
            ),
            lambda: bool(_get_sparse_invariants()),
            bool,
            _set_sparse_invariants,
            covers=("torch.sparse.check_sparse_tensor_invariants.is_enabled",),
        ),
        Setting(
            "checkpoint_device_type",
            _t(
                "checkpoint's default device type "
                "(torch.utils.checkpoint.DefaultDeviceType.get_device_type())",
                "checkpoint 的默认设备类型"
                "（torch.utils.checkpoint.DefaultDeviceType.get_device_type()）",
            ),
            _checkpoint_device,
            str,
            _checkpoint_device_type.set_device_type,
            covers=("torch.utils.checkpoint.DefaultDeviceType.get_device_type",),
        ),
        Setting(
            "checkpoint_debug",
            _t(
                "checkpoint's debug mode (torch.utils.checkpoint.set_checkpoint_debug_enabled)",
                "checkpoint 的调试模式（torch.utils.checkpoint.set_checkpoint_debug_enabled）",
            ),
            _optional_flag(_checkpoint, "_checkpoint_debug_enabled"),
            str,
            _set_optional_flag(_checkpoint, "_checkpoint_debug_enabled"),
        ),
        Setting(
            "checkpoint_early_stop",
            _t(
                "checkpoint's early stop (torch.utils.checkpoint.set_checkpoint_early_stop)",
                "checkpoint 的提前停止（torch.utils.checkpoint.set_checkpoint_early_stop）",
            ),
            _optional_flag(_checkpoint, "_enable_checkpoint_early_stop"),
            str,
            _set_optional_flag(_checkpoint, "_enable_checkpoint_early_stop"),
        ),
        # CUDA: read only once CUDA has started (reading would start it). A call that
        # starts CUDA is no change: "not known before" is never compared.
        Setting(
            "cuda_current_device",
            _t(
                "the current CUDA device (torch.cuda.current_device())",
                "当前 CUDA 设备（torch.cuda.current_device()）",
            ),
            _cuda(lambda: int(_cuda_current_device())),
            int,
            _cuda_set_device,
            covers=("torch.cuda.current_device", "torch.accelerator.current_device_index"),
        ),
        Setting(
            "cuda_current_stream",
            _t(
                "the current CUDA stream (torch.cuda.current_stream())",
                "当前 CUDA 流（torch.cuda.current_stream()）",
            ),
            _cuda(_current_stream),
            tuple,
            _set_current_stream,
            covers=("torch.cuda.current_stream", "torch.accelerator.current_stream"),
            show=_stream_shown,
        ),
        Setting(
            "cuda_sync_debug_mode",
            _t(
                "CUDA's sync debug mode (torch.cuda.get_sync_debug_mode())",
                "CUDA 同步调试模式（torch.cuda.get_sync_debug_mode()）",
            ),
            _cuda(lambda: int(_cuda_get_sync_debug_mode())),
            int,
            _cuda_set_sync_debug_mode,
            covers=("torch.cuda.get_sync_debug_mode",),
        ),
        Setting(
            "cuda_graph_capturing",
            _t(
                "a CUDA graph capture under way (torch.cuda.is_current_stream_capturing())",
                "正在进行的 CUDA 图捕获（torch.cuda.is_current_stream_capturing()）",
            ),
            _cuda(lambda: bool(_cuda_is_capturing())),
            bool,
            None,
            covers=("torch.cuda.is_current_stream_capturing",),
        ),
        Setting(
            "cuda_memory_fraction",
            _t(
                "the share of GPU memory this process may use "
                "(torch.cuda.get_per_process_memory_fraction())",
                "本进程可使用的显存比例（torch.cuda.get_per_process_memory_fraction()）",
            ),
            _cuda(_memory_fraction),
            float,
            _set_memory_fraction,
            covers=("torch.cuda.get_per_process_memory_fraction",),
        ),
        # The random streams: recorded only. A right answer may draw from them (dropout);
        # whether it should is the reference's to say, case by case (oracle "rng_consumed").
        # Put back after the call all the same, so that a check draws nothing of the
        # learner's own random numbers.
        Setting(
            "torch_rng",
            _t(
                "torch's random state (torch.get_rng_state())",
                "torch 的随机状态（torch.get_rng_state()）",
            ),
            _torch_rng,
            str,
            _restore_torch_rng,
            save=_torch_rng_state,
            compared=False,
            covers=("torch.get_rng_state", "torch.random.get_rng_state"),
        ),
        Setting(
            "torch_initial_seed",
            _t("torch's seed (torch.initial_seed())", "torch 的随机种子（torch.initial_seed()）"),
            lambda: str(_initial_seed()),  # up to 2**64: as text
            str,
            _quiet_read_only,
            compared=False,
        ),
        Setting(
            "cuda_rng",
            _t(
                "CUDA's random state (torch.cuda.get_rng_state_all())",
                "CUDA 的随机状态（torch.cuda.get_rng_state_all()）",
            ),
            _cuda_rng,
            str,
            _restore_cuda_rng,
            save=_cuda_rng_states,
            compared=False,
            covers=("torch.cuda.get_rng_state", "torch.cuda.get_rng_state_all"),
        ),
        Setting(
            "numpy_rng",
            _t(
                "NumPy's global random state (numpy.random.get_state())",
                "NumPy 的全局随机状态（numpy.random.get_state()）",
            ),
            _numpy_rng,
            str,
            _restore_numpy_rng,
            save=_numpy_rng_state,
            compared=False,
        ),
        Setting(
            "python_warnings",
            _t(
                "Python's warning filters for every module (warnings.simplefilter, or"
                " warnings.filterwarnings without module=; warnings.catch_warnings() puts"
                " them back)",
                "Python 对所有模块生效的警告过滤器（warnings.simplefilter，或不带 module= 的"
                " warnings.filterwarnings；warnings.catch_warnings() 会把它们恢复原样）",
            ),
            _warning_filters,
            tuple,
            _restore_warning_filters,
            save=_saved_warning_filters,
            show=_warning_filters_shown,
        ),
        Setting(
            "python_gc",
            _t(
                "Python's garbage collector, on or off, and its thresholds (gc.disable(),"
                " gc.set_threshold())",
                "Python 的垃圾回收器是否开启，以及它的阈值（gc.disable()、gc.set_threshold()）",
            ),
            gc_state,
            tuple,
            restore_gc,
        ),
        Setting(
            "python_rng",
            _t(
                "Python's random state (random.getstate())",
                "Python 的随机状态（random.getstate()）",
            ),
            _python_rng,
            str,
            _python_setstate,
            save=_python_getstate,
            compared=False,
        ),
    ]
    return s


SETTINGS: tuple[Setting, ...] = tuple(_settings())
BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}
TYPES: dict[str, type] = {s.name: s.kind for s in SETTINGS}


class Snapshot:
    """The settings' plain values (for the observation) and what restoring them needs."""

    def __init__(self, values: dict, saved: dict) -> None:
        self.values, self.saved = values, saved


_COMPARED = tuple(s for s in SETTINGS if s.compared)


def read() -> dict[str, Any]:
    """Every setting's value now, as plain data (None where not known here)."""
    return {s.name: s.value() for s in SETTINGS}


def read_compared() -> dict[str, Any]:
    """The values ``changes`` compares: ``read`` without the random states, which are
    recorded but never compared, and whose reading is most of a full read (numpy's alone
    copies 2.5 KB). Checks read it around every call they make."""
    return {s.name: s.value() for s in _COMPARED}


def capture() -> Snapshot:
    """Every setting now, with what is needed to put it back later."""
    saved = {}
    for s in SETTINGS:
        if s.save is not None:
            try:
                saved[s.name] = s.save()
            except Exception:  # cannot be kept here: it will not be put back
                saved[s.name] = None
    return Snapshot(read(), saved)


def restore(snapshot: Snapshot | dict) -> list[str]:
    """Put back every setting that can be and has changed; return those still different.

    Never raises: a setting that cannot be put back (the inter-op thread count) stays as
    the call left it, and the next check's "before" starts from there.
    """
    values = snapshot.values if _isinstance(snapshot, Snapshot) else snapshot
    saved = snapshot.saved if _isinstance(snapshot, Snapshot) else {}
    for _ in range(2):  # twice: the TF32 settings move one another
        different = []
        for s in SETTINGS:
            want = values.get(s.name)
            if s.restore is None or want is None or s.value() == want:
                continue
            if s.save is not None and s.name not in saved:
                continue  # only the plain value is known: not enough to put this back
            try:
                s.restore(saved[s.name] if s.save is not None else want)
            except Exception:  # put back what can be; the rest is reported by the judge
                pass
            if s.value() != want:
                different.append(s.name)
        if not different:
            break
    return different


def valid(side: Any) -> bool:
    """The judge's test of one recorded side: every setting, each of its plain type."""
    if _type(side) is not dict or set(side) != set(TYPES):
        return False
    return all(v is None or plain(v, TYPES[name]) for name, v in side.items())


def changes(before: dict, after: dict) -> list[Setting]:
    """The compared settings that differ, both values known; one that moved only because
    an earlier one did (grad mode under inference mode) is not named again."""
    moved = {
        s.name
        for s in SETTINGS
        if s.compared
        and before.get(s.name) is not None
        and after.get(s.name) is not None
        and before.get(s.name) != after.get(s.name)
    }
    return [s for s in SETTINGS if s.name in moved and not moved.intersection(s.follows)]
