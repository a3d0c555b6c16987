"""The caller's model a case of lessons 03 and 08 draws, and how feedback names it.

Both lessons hand the learner's function a caller's model drawn from the same axes (its
shape, the modes it arrives in, what its ``.grad`` holds, a frozen first layer, the
dtype, the input batch's layout); one builder and one wording serve both, so that a
case means the same model, and reads the same, wherever it appears.

This module runs beside learner code: it builds the caller's objects before any call.
"""

from __future__ import annotations

import torch

from autograder.common import trusted
from autograder.common.caller_states import LARGE_STALE, STALE, leave_grads
from autograder.common.dropout import DROPOUT
from autograder.common.i18n import Text
from autograder.common.inputs import laid_out
from autograder.common.layer_watch import BATCHNORM
from autograder.common.models import Net, make_net


def set_layer_modes(model: torch.nn.Module, mode: str) -> None:
    """'train', 'eval', 'mixed': evaluation mode except the first Dropout (as in MC dropout),
    'dropout_off': training mode except the first Dropout, or 'frozen_norm': training mode
    except the first BatchNorm (statistics frozen, as in fine-tuning)."""
    model.train(mode in ("train", "frozen_norm", "dropout_off"))
    if mode in ("mixed", "dropout_off"):
        next(m for m in model.modules() if trusted.isinstance_(m, DROPOUT)).train(mode == "mixed")
    if mode == "frozen_norm":
        next(m for m in model.modules() if trusted.isinstance_(m, BATCHNORM)).eval()


def set_grads(seed: int, stale: str, *models: torch.nn.Module) -> None:
    """Leave each trainable parameter's .grad as an earlier step would: stale, zero or None."""
    params = [p for m in models for p in m.parameters() if p.requires_grad]
    leave_grads(params, "stale" if stale in ("large", "inf") else stale, seed + 900)
    if stale in ("large", "inf"):
        for p in params:
            p.grad.add_(1e8 if stale == "large" else float("inf"))


def nets(seed: int, n_in: int, n_out: int) -> dict[str, Net]:
    """Model shapes for the matrix; widths change with the seed."""
    w = 8 + seed % 5
    return {
        "one block": Net(n_in, w + 4, n_out),
        "two nested blocks": Net(n_in + 1, w, n_out + 1, blocks=2, p=0.3, nested=True),
        "two blocks": Net(n_in, w - 1, n_out, blocks=2, p=0.2),
        "two 2-d blocks": Net(n_in, w + 1, n_out, blocks=2, p=0.25, planes=True),
    }


MODES_ON_ARRIVAL = {
    "train": Text("arriving in training mode", "进入时处于训练模式"),
    "eval": Text("arriving in evaluation mode", "进入时处于评估模式"),
    "mixed": Text(
        "in evaluation mode except its first Dropout", "处于评估模式，但第一个 Dropout 处于训练模式"
    ),
    "dropout_off": Text(
        "in training mode except its first Dropout", "处于训练模式，但第一个 Dropout 处于评估模式"
    ),
    "frozen_norm": Text(
        "in training mode except its first BatchNorm (statistics frozen)",
        "处于训练模式，但第一个 BatchNorm 处于评估模式（统计量被冻结）",
    ),
}
OUTER_NO_GRAD = Text("called inside torch.no_grad()", "在 torch.no_grad() 里调用")


def model_world(spec, case: dict, device, n_in: int, n_out: int) -> tuple:
    """The caller's model and input batch for a case: shape, dtype, mode, .grad, layout."""
    net = nets(spec.seed, n_in, n_out)[case["net"]]
    model = make_net(spec.seed, net, case["dtype"], device)
    set_layer_modes(model, case["mode"])
    if case.get("frozen") == "first":
        next(m for m in model.modules() if trusted.isinstance_(m, torch.nn.Linear)).requires_grad_(
            False
        )
    set_grads(spec.seed, case.get("stale", "none"), model)
    dtype, rows = getattr(torch, case["dtype"]), case["rows"]
    x = laid_out(spec.seed + 1, rows, net.n_in, case.get("layout", "plain"), device, dtype)
    return model, x, net


def model_text(case: dict) -> Text:
    parts = [
        Text("model with {n}", "模型含{n}").format(n=NET_TEXT[case["net"]]),
        MODES_ON_ARRIVAL[case["mode"]],
    ]
    if "stale" in case:
        parts.append({**STALE, **LARGE_STALE}[case["stale"]])
    if case.get("frozen") == "first":
        parts.append(Text("its first layer frozen", "第一层被冻结"))
    parts.append(Text("dtype {d}", "数据类型 {d}").format(d=case["dtype"]))
    if case.get("outer"):
        parts.append(OUTER_NO_GRAD)
    return Text(", ".join(t.en for t in parts), "，".join(t.zh for t in parts))


NET_TEXT = {
    "one block": Text("one block", "一个块"),
    "two nested blocks": Text("two nested blocks", "两个嵌套的块"),
    "two blocks": Text("two blocks", "两个块"),
    "two 2-d blocks": Text(
        "two blocks whose BatchNorm is a BatchNorm2d (on (n, c, 1, 1))",
        "两个块，其中的 BatchNorm 是 BatchNorm2d（作用于 (n, c, 1, 1)）",
    ),
}
