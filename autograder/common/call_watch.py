"""The call watch: what one call leaves of autograd's modes, and what it saved for backward.

A function that turns autograd off (``torch.no_grad()``, ``torch.inference_mode()``,
``torch.set_grad_enabled``, saved-tensor hooks) can leave the caller in a state it did not
ask for, and whether it kept memory for backward shows only while it runs. Around one
call, :class:`Watched` enters the caller's own context, then logs grad mode and inference
mode on return, saved-tensor hooks left installed, the bytes saved for backward and
PyTorch's ``volatile`` warning; :data:`LOGGED` says each of these in feedback.

This module runs beside learner code: everything it calls was taken at import.
"""

from __future__ import annotations

import contextlib
import warnings

import torch

from autograder.common import trusted
from autograder.common.dropout import SeededDropout
from autograder.common.i18n import Text
from autograder.common.oracle import World
from autograder.kernel.measure import AliveSavedBytes

# Taken when the checks are imported, before any learner code runs (as in trusted).
_top_saved_hooks = torch._C._autograd._top_saved_tensors_default_hooks
_pop_saved_hooks = torch._C._autograd._pop_saved_tensors_default_hooks
_on_every_call_after = torch.nn.modules.module.register_module_forward_hook


def _outer(name: str):
    """The caller's context: nothing, torch.no_grad() or torch.inference_mode()."""
    if name == "no_grad":
        return trusted.no_grad()
    if name == "inference_mode":
        return trusted.inference_mode()
    return contextlib.nullcontext()


def _same_hooks(a, b) -> bool:
    """Two tops of the saved-tensor hooks stack are the same (pack, unpack) pair."""
    if a is None or b is None:
        return a is b
    return all(x is y for x, y in zip(a, b, strict=True))


class Watched:
    """Around one call: the caller's context; grad mode, inference mode, saved bytes logged.

    Saved-tensor hooks the call left installed are logged and taken off, so that they
    neither count nor break (torch.func refuses them) what the caller runs next.
    ``dropout_seed``: dropout that trains takes its masks from this seed on the CPU, so that
    an answer on a GPU meets the reference's masks (:mod:`autograder.common.dropout`).
    """

    def __init__(
        self,
        world: World,
        outer: str,
        saved: bool = True,
        dropout_seed: int | None = None,
        graphs: bool = False,
    ) -> None:
        self.world, self.outer, self.saved = world, outer, saved
        self.dropout_seed, self.graphs = dropout_seed, graphs
        self.stack = contextlib.ExitStack()
        self.recorded = False

    def _note_graph(self, module, args, output) -> None:
        """A module's output with history: autograd recorded a graph, and saved what its
        backward needs, whichever saved-tensor hooks (``save_on_cpu``) took the tensors."""
        if trusted.type_(output) is trusted.tensor_type and output.grad_fn is not None:
            self.recorded = True

    def __enter__(self) -> Watched:
        self.stack.enter_context(_outer(self.outer))
        self.grad_before = bool(trusted.is_grad_enabled())
        self.caught = self.stack.enter_context(warnings.catch_warnings(record=True))
        warnings.simplefilter("always")
        if self.saved:
            params = [t for _, t in self.world.tensors()]
            self.world.kept = self.stack.enter_context(AliveSavedBytes(exclude=params))
        self.hooks_before = _top_saved_hooks(False)
        if self.dropout_seed is not None:
            self.stack.enter_context(SeededDropout(self.dropout_seed))
        if self.graphs:
            self.stack.callback(_on_every_call_after(self._note_graph).remove)
        return self

    def __exit__(self, *exc_info) -> None:
        log = self.world.logged
        left = 0  # hooks the call pushed and never popped, taken off down to the caller's
        while left < 64 and _top_saved_hooks(False) is not None:
            if _same_hooks(_top_saved_hooks(False), self.hooks_before):
                break
            _pop_saved_hooks()
            left += 1
        log["saved-tensor hooks left on"] = {"kind": "bool", "value": left > 0}
        log["grad mode on return"] = {"kind": "bool", "value": bool(trusted.is_grad_enabled())}
        inference = bool(trusted.is_inference_mode_enabled())
        log["inference mode on return"] = {"kind": "bool", "value": inference}
        if self.saved:
            log["saved for backward"] = {"kind": "int", "value": int(self.world.kept.packed)}
            volatile = any("volatile" in str(w.message) for w in self.caught)
            log["volatile warning"] = {"kind": "bool", "value": volatile}
        if self.graphs:
            log["graph recorded"] = {"kind": "bool", "value": self.recorded}
        trusted.set_grad_enabled(self.grad_before)
        self.stack.close()


LOGGED = {  # what Watched logs, as feedback says it
    "saved-tensor hooks left on": Text(
        "saved-tensor hooks still installed on return (torch.autograd.graph.saved_tensors_hooks)",
        "函数返回时是否仍装着保存张量钩子（torch.autograd.graph.saved_tensors_hooks）",
    ),
    "grad mode on return": Text(
        "grad mode on return (torch.is_grad_enabled())",
        "函数返回时的梯度模式（torch.is_grad_enabled()）",
    ),
    "inference mode on return": Text(
        "inference mode on return (torch.is_inference_mode_enabled())",
        "函数返回时的推理模式（torch.is_inference_mode_enabled()）",
    ),
    "saved for backward": Text(
        "bytes saved for backward while it ran", "运行期间为反向传播保存的字节数"
    ),
    "graph recorded": Text(
        "whether autograd recorded a graph while it ran (a module's output had history)",
        "运行期间自动求导是否记录了计算图（某个模块的输出带有计算历史）",
    ),
    "volatile warning": Text(
        "PyTorch warned that volatile has no effect", "PyTorch 警告 volatile 不再起作用"
    ),
}
