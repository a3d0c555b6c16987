"""The registry of torch's global settings (autograder/common/global_state.py).

(a) For every setting in the registry, a learner's function that leaves it changed fails
    the check, the feedback names it in both languages, and the check puts it back; a
    setting recorded only (the random states) is recorded and put back but fails nothing.
(b) This torch has no public global getter the registry does not know: every getter-like
    name of torch's modules is read by a setting or listed in IGNORED with its reason.
"""

from __future__ import annotations

import dataclasses
import gc
import importlib
import inspect
import os
import pkgutil
import random
import re
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad
import torch.autograd.graph
import torch.backends
import torch.backends.cuda
import torch.backends.cudnn
import torch.backends.mha
import torch.backends.mkldnn
import torch.backends.nnpack
import torch.backends.opt_einsum
import torch.backends.quantized
import torch.nn.modules.module
import torch.sparse
import torch.utils.checkpoint
import torch.utils.deterministic
from torch.optim.optimizer import register_optimizer_step_pre_hook
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from autograder.common import global_state
from autograder.common.i18n import Text
from autograder.common.protocol import Check, from_bytes, state_changes, to_bytes
from autograder.common.result import CheckFailed

EX = Text("Exercise 0 — global settings", "练习 0 —— 全局设置")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CUDA = torch.cuda.is_available()
_kept: list = []  # context managers a "learner" entered and never left, kept alive


@dataclasses.dataclass(frozen=True)
class Calls(Check):
    """Calls the learner's function once; any outcome passes, but for the settings."""

    @property
    def heading(self) -> Text:
        return EX

    def observe(self, fn) -> dict:
        fn()
        return {}

    def judge(self, obs: dict) -> None:
        pass


def _run(fn) -> tuple[dict, CheckFailed | None]:
    """Observe, round-trip through the weights-only format, decide (as self-study does)."""
    check = Calls()
    obs = from_bytes(to_bytes(check.observe_plain(fn)))
    try:
        check.decide(obs)
    except CheckFailed as failed:
        return obs, failed
    return obs, None


def _entered(manager) -> None:
    manager.__enter__()
    _kept.append(manager)


def _other(value: str, choices: tuple[str, ...]) -> str:
    return next(c for c in choices if c != value)


def _fp32(backend: str, op: str):
    def change():
        now = global_state.BY_NAME[f"fp32_precision_{backend}_{op}"].value()  # in force
        torch._C._set_fp32_precision_setter(backend, op, _other(now, ("ieee", "tf32")))

    return change


class _PassThrough(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def _flip(getter, setter):
    return lambda: setter(not getter())


def _python_native_off():
    torch.backends.python_native.triton.enabled = False


def _other_engine():
    engines = [e for e in torch.backends.quantized.supported_engines if e != "none"]
    torch.backends.quantized.engine = _other(torch.backends.quantized.engine, tuple(engines))


def _autocast_on(device: str):
    return lambda: torch.set_autocast_enabled(device, not torch.is_autocast_enabled(device))


def _autocast_dtype(device: str):
    def change():
        now = torch.get_autocast_dtype(device)
        torch.set_autocast_dtype(device, torch.float64 if now != torch.float64 else torch.float32)

    return change


def _print(**options):
    return lambda: torch.set_printoptions(**options)


def _no_op(*args, **kwargs):
    return None


# How a learner's function leaves each setting changed. A new registry entry without a
# way to change it here fails test_every_setting_has_a_change.
CHANGES = {
    "inference_mode": lambda: _entered(torch.inference_mode()),
    "grad_enabled": lambda: torch.set_grad_enabled(False),
    "forward_grad_enabled": lambda: torch._C._set_fwd_grad_enabled(False),
    "dual_level": lambda: torch.autograd.forward_ad.enter_dual_level(),
    "multithreading_enabled": lambda: torch.autograd.set_multithreading_enabled(False),
    "view_replay_enabled": lambda: torch._C._set_view_replay_enabled(True),
    "anomaly_enabled": lambda: torch.autograd.set_detect_anomaly(True),
    "anomaly_check_nan": lambda: torch.set_anomaly_enabled(torch.is_anomaly_enabled(), False),
    "saved_tensors_hooks": lambda: _entered(
        torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t)
    ),
    "saved_tensors_hooks_allowed": lambda: _entered(
        torch.autograd.graph.disable_saved_tensors_hooks("not here")
    ),
    "allow_mutation_on_saved_tensors": lambda: _entered(
        torch.autograd.graph.allow_mutation_on_saved_tensors()
    ),
    "profiler_running": lambda: _entered(torch.autograd.profiler.profile()),
    "function_modes": lambda: _entered(TorchFunctionMode()),
    "dispatch_modes": lambda: _entered(_PassThrough()),
    "default_dtype": lambda: torch.set_default_dtype(torch.float64),
    "default_device": lambda: torch.set_default_device("meta"),
    "deterministic_algorithms": lambda: torch.use_deterministic_algorithms(True),
    "deterministic_warn_only": lambda: torch.use_deterministic_algorithms(
        torch.are_deterministic_algorithms_enabled(), warn_only=True
    ),
    "fill_uninitialized_memory": lambda: setattr(
        torch.utils.deterministic,
        "fill_uninitialized_memory",
        not torch.utils.deterministic.fill_uninitialized_memory,
    ),
    "warn_always": lambda: torch.set_warn_always(not torch.is_warn_always_enabled()),
    "num_threads": lambda: torch.set_num_threads(torch.get_num_threads() + 1),
    "num_interop_threads": None,  # once per process: test_the_interop_thread_count_is_compared
    "flush_denormal": lambda: torch.set_flush_denormal(True),
    "float32_matmul_precision": lambda: torch.set_float32_matmul_precision("medium"),
    "cuda_matmul_allow_tf32": lambda: setattr(
        torch.backends.cuda.matmul, "allow_tf32", not torch.backends.cuda.matmul.allow_tf32
    ),
    "cudnn_allow_tf32": lambda: setattr(
        torch.backends.cudnn, "allow_tf32", not torch.backends.cudnn.allow_tf32
    ),
    "mkldnn_allow_tf32": lambda: setattr(torch.backends.mkldnn, "allow_tf32", True),
    **{
        f"fp32_precision_{b}_{o}": _fp32(b, o)
        for b in ("generic", "cuda", "mkldnn")
        for o in ("all", "matmul", "conv", "rnn")
        if f"fp32_precision_{b}_{o}" in global_state.BY_NAME
    },
    "backends_flags_frozen": torch.backends.disable_global_flags,
    "cudnn_enabled": _flip(torch._C._get_cudnn_enabled, torch._C._set_cudnn_enabled),
    "cudnn_benchmark": lambda: setattr(torch.backends.cudnn, "benchmark", True),
    "cudnn_deterministic": lambda: setattr(torch.backends.cudnn, "deterministic", True),
    "cudnn_benchmark_limit": lambda: torch._C._cuda_set_cudnn_benchmark_limit(3),
    "cudnn_depthwise_kernel": lambda: torch._C._set_cudnn_depthwise_kernel(
        _other(torch._C._get_cudnn_depthwise_kernel(), ("native", "auto"))
    ),
    "miopen_immediate": _flip(torch._C._get_miopen_immediate, torch._C._set_miopen_immediate),
    "cuda_matmul_fp16_reduction": lambda: setattr(
        torch.backends.cuda.matmul, "allow_fp16_reduced_precision_reduction", (False, False)
    ),
    "cuda_matmul_bf16_reduction": lambda: setattr(
        torch.backends.cuda.matmul, "allow_bf16_reduced_precision_reduction", (False, False)
    ),
    "cuda_matmul_fp16_accumulation": lambda: setattr(
        torch.backends.cuda.matmul,
        "allow_fp16_accumulation",
        not torch.backends.cuda.matmul.allow_fp16_accumulation,
    ),
    "cuda_matmul_prefer_grouped_gemm": lambda: setattr(
        torch.backends.cuda.matmul,
        "prefer_cublaslt_grouped_gemm",
        not torch.backends.cuda.matmul.prefer_cublaslt_grouped_gemm,
    ),
    "sdp_flash": lambda: torch.backends.cuda.enable_flash_sdp(False),
    "sdp_mem_efficient": lambda: torch.backends.cuda.enable_mem_efficient_sdp(False),
    "sdp_math": lambda: torch.backends.cuda.enable_math_sdp(False),
    "sdp_cudnn": lambda: torch.backends.cuda.enable_cudnn_sdp(False),
    "sdp_fa3": _flip(torch._C._get_fa3_sdp_enabled, torch._C._set_sdp_use_fa3),
    "sdp_overrideable": _flip(
        torch._C._get_overrideable_sdp_enabled, torch._C._set_sdp_use_overrideable
    ),
    "sdp_math_reduction": lambda: torch.backends.cuda.allow_fp16_bf16_reduction_math_sdp(
        not torch.backends.cuda.fp16_bf16_reduction_math_sdp_allowed()
    ),
    "sdp_priority_order": lambda: torch._C._set_sdp_priority_order(
        list(reversed(torch._C._get_sdp_priority_order()))
    ),
    "preferred_linalg_library": lambda: torch.backends.cuda.preferred_linalg_library(
        _other(torch.backends.cuda.preferred_linalg_library().name.lower(), ("magma", "cusolver"))
    ),
    "preferred_blas_library": lambda: torch.backends.cuda.preferred_blas_library(
        _other(torch.backends.cuda.preferred_blas_library().name.lower(), ("cublaslt", "cublas"))
    ),
    "preferred_rocm_fa_library": lambda: torch.backends.cuda.preferred_rocm_fa_library(
        _other(torch.backends.cuda.preferred_rocm_fa_library().name.lower(), ("ck", "default"))
    ),
    "mkldnn_enabled": _flip(torch._C._get_mkldnn_enabled, torch._C._set_mkldnn_enabled),
    "mkldnn_deterministic": lambda: setattr(torch.backends.mkldnn, "deterministic", True),
    "nnpack_enabled": lambda: torch.backends.nnpack.set_flags(not torch._C._get_nnpack_enabled()),
    "opt_einsum_enabled": lambda: setattr(
        torch.backends.opt_einsum, "enabled", not torch.backends.opt_einsum.enabled
    ),
    "opt_einsum_strategy": lambda: setattr(
        torch.backends.opt_einsum,
        "strategy",
        _other(torch.backends.opt_einsum.strategy, ("greedy", "optimal")),
    ),
    "quantized_engine": _other_engine,
    "mha_fastpath": lambda: torch.backends.mha.set_fastpath_enabled(
        not torch.backends.mha.get_fastpath_enabled()
    ),
    "python_native_disabled": _python_native_off,
    "print_precision": _print(precision=2),
    "print_threshold": _print(threshold=5),
    "print_edgeitems": _print(edgeitems=1),
    "print_linewidth": _print(linewidth=40),
    "print_sci_mode": _print(sci_mode=True),
    **{f"autocast_{d}": _autocast_on(d) for d in global_state.AUTOCAST_DEVICES},
    **{f"autocast_dtype_{d}": _autocast_dtype(d) for d in global_state.AUTOCAST_DEVICES},
    "autocast_cache": lambda: torch.set_autocast_cache_enabled(False),
    "global_module_forward_hooks": lambda: torch.nn.modules.module.register_module_forward_hook(
        _no_op
    ),
    "global_module_backward_hooks": lambda: (
        torch.nn.modules.module.register_module_full_backward_hook(_no_op)
    ),
    "global_module_registration_hooks": lambda: (
        torch.nn.modules.module.register_module_module_registration_hook(_no_op)
    ),
    "global_optimizer_hooks": lambda: register_optimizer_step_pre_hook(_no_op),
    "sparse_invariant_checks": torch.sparse.check_sparse_tensor_invariants.enable,
    "checkpoint_device_type": lambda: torch.utils.checkpoint.DefaultDeviceType.set_device_type(
        "meta"
    ),
    "checkpoint_debug": lambda: _entered(torch.utils.checkpoint.set_checkpoint_debug_enabled(True)),
    "checkpoint_early_stop": lambda: _entered(
        torch.utils.checkpoint.set_checkpoint_early_stop(False)
    ),
    "cuda_current_device": lambda: torch.cuda.set_device(torch.cuda.device_count() - 1),
    "cuda_current_stream": lambda: torch.cuda.set_stream(torch.cuda.Stream()),
    "cuda_sync_debug_mode": lambda: torch.cuda.set_sync_debug_mode("warn"),
    "cuda_graph_capturing": None,  # a capture left open cannot be put back; compared only
    "cuda_memory_fraction": lambda: torch.cuda.set_per_process_memory_fraction(0.5),
    # recorded only: a right answer may draw random numbers
    "torch_rng": lambda: torch.rand(3),
    "torch_initial_seed": lambda: torch.manual_seed(12345),
    "cuda_rng": lambda: torch.cuda.manual_seed_all(12345),
    "numpy_rng": lambda: np.random.rand(3),
    "python_rng": lambda: random.random(),
    # a learner's "keep the log clean" that silences the caller's warnings for good
    "python_warnings": lambda: warnings.filterwarnings("ignore", category=UserWarning),
    # "no collection pauses inside the timed calls", never turned back on
    "python_gc": lambda: gc.disable(),
}

_NEEDS_CUDA = {s.name for s in global_state.SETTINGS if s.name.startswith("cuda_")} - {
    "cuda_matmul_fp16_reduction",
    "cuda_matmul_bf16_reduction",
    "cuda_matmul_fp16_accumulation",
    "cuda_matmul_prefer_grouped_gemm",
    "cuda_matmul_allow_tf32",
}


@pytest.fixture(autouse=True, scope="module")
def _contexts_closed():
    """At the end, the context managers left entered are closed (their generators' own
    clean-up would otherwise run whenever they are collected), then all is put back."""
    saved = global_state.capture()
    yield
    for manager in reversed(_kept):
        if hasattr(manager, "gen"):  # @contextlib.contextmanager
            try:
                manager.gen.close()
            except Exception:  # it undoes what the check already put back: nothing left
                pass
    _kept.clear()
    global_state.restore(saved)


@pytest.fixture(autouse=True)
def _as_found():
    """Whatever a test leaves changed is put back (the test under test should have)."""
    saved = global_state.capture()
    yield
    global_state.restore(saved)


def _skip_unless_changeable(setting: global_state.Setting) -> None:
    if setting.name in _NEEDS_CUDA and not CUDA:
        pytest.skip("skipped: no GPU (CUDA settings are read once CUDA has started)")
    if setting.name == "cuda_current_device" and torch.cuda.device_count() < 2:
        pytest.skip("one GPU: there is no other current device to leave")
    if CUDA and setting.name in _NEEDS_CUDA:
        torch.cuda.init()
    if setting.value() is None:
        pytest.skip(f"{setting.name} cannot be read on this build, so it is never compared")
    if setting.name.startswith("opt_einsum") and not torch.backends.opt_einsum.is_available():
        pytest.skip("opt_einsum is not installed: torch refuses to change its settings")
    if setting.name == "flush_denormal":
        supported = torch.set_flush_denormal(True)
        torch.set_flush_denormal(False)
        if not supported:
            pytest.skip("this CPU cannot flush denormals")


def test_every_setting_has_a_change():
    assert set(CHANGES) == set(global_state.BY_NAME)


def test_names_are_unique_and_follow_only_earlier_settings():
    names = [s.name for s in global_state.SETTINGS]
    assert len(names) == len(set(names))
    for k, setting in enumerate(global_state.SETTINGS):
        assert set(setting.follows) <= set(names[:k]), setting.name


COMPARED = [s for s in global_state.SETTINGS if s.compared and CHANGES[s.name] is not None]
RECORDED = [s for s in global_state.SETTINGS if not s.compared]


def _params(settings: list) -> list:
    """One case per setting; CUDA's own are marked ``cuda``, so `make gpu-check` runs them."""
    return [
        pytest.param(s, id=s.name, marks=[pytest.mark.cuda] if s.name in _NEEDS_CUDA else [])
        for s in settings
    ]


@pytest.mark.parametrize("setting", _params(COMPARED))
def test_a_setting_left_changed_fails_the_check_and_is_put_back(setting):
    _skip_unless_changeable(setting)
    before = global_state.read()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        obs, failed = _run(CHANGES[setting.name])
    assert "observe_error" not in obs, obs["observe_error"]
    state = obs["_state"]
    assert state["before"][setting.name] != state["after"][setting.name], "nothing changed"
    assert failed is not None, f"{setting.name} left changed, yet the check passed"
    moved = {s.name for s in global_state.changes(state["before"], state["after"])}
    named = {setting.name} | (set(setting.follows) & moved)  # or what moved it along
    feedback = {lang: failed.feedback(lang) for lang in ("en", "zh")}
    for lang, text in feedback.items():
        assert any(global_state.BY_NAME[n].text(lang) in text for n in named), text
    assert "after your function returned" in feedback["en"]
    assert "函数返回后，" in feedback["zh"] and "与调用前相同" in feedback["zh"]
    now = global_state.read()
    assert {k: v for k, v in now.items() if now[k] != before[k]} == {}, "not put back"


def test_the_default_device_set_to_the_cpu_is_a_change_too():
    """set_default_device("cpu") leaves its context entered although get_default_device()
    reads "cpu" as before: without a GPU that is the only trace of it, and it is named."""
    before = global_state.read()
    obs, failed = _run(lambda: torch.set_default_device("cpu"))
    state = obs["_state"]
    assert state["before"]["default_device"] == "cpu"
    assert state["after"]["default_device"] == "cpu (torch.set_default_device)"
    assert failed is not None and "torch.get_default_device()" in failed.feedback("en")
    assert global_state.read() == before
    assert getattr(torch._GLOBAL_DEVICE_CONTEXT, "device_context", None) is None


@pytest.mark.parametrize("setting", _params(RECORDED))
def test_a_random_state_is_recorded_but_fails_nothing_and_is_put_back(setting):
    _skip_unless_changeable(setting)
    before = global_state.read()
    obs, failed = _run(CHANGES[setting.name])
    assert failed is None, failed.feedback("en")
    state = obs["_state"]
    assert state["before"][setting.name] != state["after"][setting.name]
    assert global_state.read() == before


def test_the_interop_thread_count_is_compared_but_cannot_be_put_back():
    """It can be set once per process, before parallel work: a fresh process shows it."""
    script = textwrap.dedent(
        """
        import dataclasses, torch
        from autograder.common.i18n import Text
        from autograder.common.protocol import Check
        from autograder.common.result import CheckFailed

        @dataclasses.dataclass(frozen=True)
        class Calls(Check):
            heading = Text("Exercise 0", "练习 0")
            def observe(self, fn):
                fn()
                return {}
            def judge(self, obs):
                pass

        n = torch.get_num_interop_threads()
        check = Calls()
        obs = check.observe_plain(lambda: torch.set_num_interop_threads(n + 1))
        try:
            check.decide(obs)
        except CheckFailed as failed:
            print(failed.feedback("en"))
        """
    )
    env = {**os.environ, "COURSE_LANG": "en"}
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=REPO,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert global_state.BY_NAME["num_interop_threads"].text("en") in out.stdout, out.stdout


def test_one_thread_left_set_is_seen_where_the_checks_run_on_one(monkeypatch):
    """The grading observer and the mutation judge keep torch to one thread (they fork), and
    learner code there reads a kernel's count: an answer that sets one thread and leaves it
    fails as in a learner's kernel, one that puts the count back passes, and torch itself
    stays on its one thread."""
    monkeypatch.setattr(torch, "get_num_threads", torch.get_num_threads)
    monkeypatch.setattr(torch, "set_num_threads", torch.set_num_threads)
    monkeypatch.setattr(global_state, "_threads", dict(global_state._threads))
    real = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        global_state.pretend_kernel_threads()
        assert torch.get_num_threads() >= 2
        _, failed = _run(lambda: torch.set_num_threads(1))
        assert failed is not None
        assert global_state.BY_NAME["num_threads"].text("en") in failed.feedback("en")

        def restores() -> None:
            count = torch.get_num_threads()
            torch.set_num_threads(1)
            torch.set_num_threads(count)

        _, failed = _run(restores)
        assert failed is None, failed.feedback("en")
        with pytest.raises(RuntimeError):
            torch.set_num_threads(0)  # torch's own check of the argument
        assert global_state._get_num_threads() == 1
    finally:
        global_state._set_num_threads(real)


def test_everything_left_changed_at_once_is_named_and_put_back():
    settable = []
    for setting in COMPARED:
        if setting.name in _NEEDS_CUDA or setting.value() is None:
            continue
        if setting.name in (
            "backends_flags_frozen",  # refuses the flag changes after it
            "saved_tensors_hooks_allowed",  # refused while saved-tensor hooks are installed
            "dispatch_modes",  # see every later call
            "function_modes",
        ):
            continue
        settable.append(setting)

    def leaves_everything_changed():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for setting in settable:
                CHANGES[setting.name]()

    before = global_state.read()
    obs, failed = _run(leaves_everything_changed)
    assert "observe_error" not in obs, obs["observe_error"]
    assert failed is not None
    assert len(failed.failures) >= len(settable) // 2
    now = global_state.read()
    assert {k: (before[k], v) for k, v in now.items() if v != before[k]} == {}


def test_a_right_answer_that_restores_what_it_changes_passes():
    def tidy():
        with torch.autograd.set_detect_anomaly(True), torch.no_grad():
            torch.nn.Dropout(0.5)(torch.ones(8))  # draws random numbers: recorded only
        precision = torch.get_float32_matmul_precision()
        torch.set_float32_matmul_precision("high")
        torch.set_float32_matmul_precision(precision)
        handle = torch.nn.modules.module.register_module_forward_hook(_no_op)
        handle.remove()
        with torch.autocast("cpu"), torch.inference_mode():
            pass

    obs, failed = _run(tidy)
    assert failed is None, failed.feedback("en")
    assert obs["_state"]["before"]["torch_rng"] != obs["_state"]["after"]["torch_rng"]


def test_an_observation_with_a_setting_of_the_wrong_type_is_refused():
    obs, _ = _run(lambda: None)
    check = Calls()
    bad = {**obs, "_state": {**obs["_state"], "after": {**obs["_state"]["after"]}}}
    bad["_state"]["after"]["num_threads"] = "2"
    with pytest.raises(CheckFailed, match="not consistent"):
        check.decide(bad)
    missing = {**obs, "_state": {"before": obs["_state"]["before"], "after": {}}}
    with pytest.raises(CheckFailed, match="global switches are missing"):
        check.decide(missing)
    nested = {**obs, "_state": {**obs["_state"], "after": {**obs["_state"]["after"]}}}
    nested["_state"]["after"]["sdp_priority_order"] = ([1],)
    with pytest.raises(CheckFailed, match="not consistent"):
        check.decide(nested)


def test_an_unknown_value_is_never_a_change():
    before = global_state.read()
    after = {**before, "num_threads": None, "cuda_current_device": 0}
    assert state_changes({**before, "cuda_current_device": None}, after) == []


# --- (b) no public global getter the registry does not know ------------------------------

_GETTER = re.compile(
    r"^(get_|is_|are_|has_|current_|preferred_)|_(enabled|mode|precision|allowed)$"
)
_SETTER = ("set_", "use_", "enable_", "disable_")
_MODULES = (
    "torch",
    "torch.autograd",
    "torch.autograd.graph",
    "torch.autograd.grad_mode",
    "torch.autograd.anomaly_mode",
    "torch.autograd.forward_ad",
    "torch.autograd.profiler",
    "torch.random",
    "torch.cuda",
    "torch.accelerator",
    "torch.sparse",
    "torch.utils.checkpoint",
    "torch.utils.deterministic",
    "torch.overrides",
    "torch.nn.modules.module",
    "torch.optim.optimizer",
    "torch.backends",
)
_HARDWARE = "what the machine or the build offers, not a setting"
_PREDICATE = "a question about a value passed to it, not a setting"
IGNORED = {
    "torch.accelerator.current_accelerator": _HARDWARE,
    "torch.accelerator.current_device_idx": "on CUDA the same as torch.cuda.current_device",
    "torch.accelerator.get_device_capability": _HARDWARE,
    "torch.accelerator.get_memory_info": "free and total device memory: a measurement",
    "torch.accelerator.is_available": _HARDWARE,
    "torch.autograd.graph.get_gradient_edge": _PREDICATE,
    "torch.autograd.has_torch_function": _PREDICATE,
    "torch.autograd.is_tensor_like": _PREDICATE,
    "torch.autograd.profiler.KinetoStepTracker.current_step": (
        "the profiler's step counter: every optimizer.step() of a right answer moves it"
    ),
    "torch.backends.cpu.get_cpu_capability": _HARDWARE,
    "torch.backends.cuda.is_built": _HARDWARE,
    "torch.backends.cuda.is_ck_sdpa_available": _HARDWARE,
    "torch.backends.cuda.is_flash_attention_available": _HARDWARE,
    "torch.backends.cusparselt.get_max_alg_id": _HARDWARE,
    "torch.backends.cusparselt.is_available": _HARDWARE,
    "torch.backends.kleidiai.is_available": _HARDWARE,
    "torch.backends.mkl.is_available": _HARDWARE,
    "torch.backends.mps.get_core_count": _HARDWARE,
    "torch.backends.mps.get_name": _HARDWARE,
    "torch.backends.mps.is_available": _HARDWARE,
    "torch.backends.mps.is_built": _HARDWARE,
    "torch.backends.mps.is_macos13_or_newer": _HARDWARE,
    "torch.backends.mps.is_macos_or_newer": _HARDWARE,
    "torch.backends.nnpack.is_available": _HARDWARE,
    "torch.backends.openmp.is_available": _HARDWARE,
    "torch.backends.python_native.all_dsls": "the DSLs torch knows: a catalogue",
    "torch.backends.python_native.available_dsls": _HARDWARE,
    "torch.backends.python_native.get_dsl_operations": "the operations of a DSL: a catalogue",
    "torch.backends.quantized.supported_engines": _HARDWARE,
    "torch.backends.xnnpack.enabled": "fixed when torch was built (no setter)",
    "torch.cuda.current_blas_handle": "a handle CUDA makes on demand, not a setting",
    "torch.cuda.current_solver_handle": "a handle CUDA makes on demand, not a setting",
    "torch.cuda.get_allocator_backend": "chosen by PYTORCH_CUDA_ALLOC_CONF before CUDA starts",
    "torch.cuda.get_arch_list": _HARDWARE,
    "torch.cuda.get_device_capability": _HARDWARE,
    "torch.cuda.get_device_name": _HARDWARE,
    "torch.cuda.get_device_properties": _HARDWARE,
    "torch.cuda.get_gencode_flags": _HARDWARE,
    "torch.cuda.get_stream_from_external": "wraps a stream made elsewhere: a constructor",
    "torch.cuda.is_available": _HARDWARE,
    "torch.cuda.is_bf16_supported": _HARDWARE,
    "torch.cuda.is_initialized": "CUDA starting on first use is no setting; a right answer may",
    "torch.cuda.is_tf32_supported": _HARDWARE,
    "torch.get_device": _PREDICATE,
    "torch.get_device_module": "the module of a device type: a lookup",
    "torch.get_file_path": "a path inside torch's package: a lookup",
    "torch.is_complex": _PREDICATE,
    "torch.is_conj": _PREDICATE,
    "torch.is_distributed": _PREDICATE,
    "torch.is_floating_point": _PREDICATE,
    "torch.is_inference": _PREDICATE,
    "torch.is_neg": _PREDICATE,
    "torch.is_nonzero": _PREDICATE,
    "torch.is_same_size": _PREDICATE,
    "torch.is_signed": _PREDICATE,
    "torch.is_storage": _PREDICATE,
    "torch.is_tensor": _PREDICATE,
    "torch.is_vulkan_available": _HARDWARE,
    "torch.nn.modules.module.is_traceable_wrapper_subclass": _PREDICATE,
    "torch.overrides.get_default_nowrap_functions": "a list of functions: a catalogue",
    "torch.overrides.get_ignored_functions": "a list of functions: a catalogue",
    "torch.overrides.get_overridable_functions": "a list of functions: a catalogue",
    "torch.overrides.get_testing_overrides": "a list of functions: a catalogue",
    "torch.overrides.has_torch_function": _PREDICATE,
    "torch.overrides.has_torch_function_unary": _PREDICATE,
    "torch.overrides.has_torch_function_variadic": _PREDICATE,
    "torch.overrides.is_tensor_like": _PREDICATE,
    "torch.overrides.is_tensor_method_or_property": _PREDICATE,
    "torch.utils.checkpoint.get_device_states": "the random states of the given tensors' devices",
}


def _backend_modules() -> list[str]:
    return [
        f"torch.backends.{m.name}"
        for m in pkgutil.iter_modules(torch.backends.__path__)
        if not m.name.startswith("_")
    ]


def _getters_of(name: str) -> set[str]:
    """Getter-like functions, static getters of classes, and flags (data descriptors)."""
    importlib.import_module(name)
    module = sys.modules[name]  # torch.backends.* replace themselves with a flags module
    found = set()
    for attr in dir(module):
        if attr.startswith("_"):
            continue
        try:
            value = getattr(module, attr)
        except Exception:  # a flag that cannot be read here is still a flag (see below)
            continue
        if inspect.ismodule(value):
            continue
        if inspect.isclass(value):
            if value.__module__ == name:
                found |= {
                    f"{name}.{attr}.{a}"
                    for a, v in vars(value).items()
                    if isinstance(v, staticmethod | classmethod)
                    and _GETTER.search(a)
                    and not a.startswith(_SETTER)
                }
            continue
        if not (getattr(value, "__module__", None) or "torch").startswith("torch"):
            continue  # imported from elsewhere (typing.get_args)
        if callable(value) and _GETTER.search(attr) and not attr.startswith(_SETTER):
            found.add(f"{name}.{attr}")
    for klass in type(module).__mro__:
        if klass in (type(sys), object):
            continue
        for attr, v in vars(klass).items():
            if attr.startswith("_"):
                continue
            if isinstance(v, torch.backends._FP32Precision):
                found.add(f"{name}.{attr}.fp32_precision")
            elif hasattr(type(v), "__get__") and hasattr(type(v), "__set__"):
                found.add(f"{name}.{attr}")
    return found


def _public_getters() -> set[str]:
    found = set()
    for name in (*_MODULES, *_backend_modules()):
        found |= _getters_of(name)
    # cuBLAS flags answer through __getattr__: the names it answers to
    source = inspect.getsource(type(torch.backends.cuda.matmul).__getattr__)
    found |= {f"torch.backends.cuda.matmul.{n}" for n in re.findall(r'name == "(\w+)"', source)}
    native = getattr(torch.backends, "python_native", None)
    if native is not None:
        found |= {f"torch.backends.python_native.{d}.enabled" for d in native.all_dsls}
    options = torch._tensor_str.PRINT_OPTS
    found |= {f"torch._tensor_str.PRINT_OPTS.{a}" for a in vars(options) if not a.startswith("_")}
    for module in (torch.nn.modules.module, sys.modules["torch.optim.optimizer"]):
        found |= {f"{module.__name__}.{a}" for a in vars(module) if a.startswith("_global_")}
    return found


def test_the_registry_knows_every_public_global_getter_of_this_torch():
    covered = {name for s in global_state.SETTINGS for name in s.covers}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = _public_getters()
    unknown = sorted(found - covered - set(IGNORED))
    assert not unknown, (
        f"torch {torch.__version__} has global getters the registry does not know: {unknown}. "
        "Add a Setting to autograder/common/global_state.py, or the name to IGNORED here "
        "with a one-line reason."
    )
    assert all(reason.strip() for reason in IGNORED.values())


def test_every_device_type_autocast_knows_is_recorded():
    assert set(torch._C._autocast_supported_devices()) <= set(global_state.AUTOCAST_DEVICES)


def test_the_enumeration_finds_what_the_registry_reads():
    """The search for getters is not blind: it finds known getters of each kind."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = _public_getters()
    for name in (
        "torch.is_grad_enabled",
        "torch.backends.cudnn.benchmark",
        "torch.backends.mkldnn.matmul.fp32_precision",
        "torch.backends.cuda.matmul.allow_tf32",
        "torch.backends.quantized.engine",
        "torch.sparse.check_sparse_tensor_invariants.is_enabled",
        "torch._tensor_str.PRINT_OPTS.sci_mode",
        "torch.nn.modules.module._global_forward_hooks",
        "torch.utils.deterministic.fill_uninitialized_memory",
    ):
        assert name in found, name


def test_a_getter_torch_adds_is_noticed(monkeypatch):
    """What the test above would say of a torch with one more global getter."""

    def is_shiny_mode_enabled() -> bool:
        return True

    is_shiny_mode_enabled.__module__ = "torch"  # as torch's own functions say
    monkeypatch.setattr(torch, "is_shiny_mode_enabled", is_shiny_mode_enabled, raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = _public_getters()
    covered = {name for s in global_state.SETTINGS for name in s.covers}
    assert sorted(found - covered - set(IGNORED)) == ["torch.is_shiny_mode_enabled"]
