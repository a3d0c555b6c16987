"""How a check's case describes the caller's state, in both languages, for every lesson.

Several lessons draw the same caller states (a model's modes on arrival, what its
parameters' ``.grad`` holds); one wording serves them all, so that feedback names a
state the same way wherever it appears.
"""

from __future__ import annotations

from autograder.common.i18n import Text

MODES = {
    "train": Text("training mode", "训练模式"),
    "eval": Text("evaluation mode", "评估模式"),
    "mixed": Text("mixed modes", "混合模式"),
}
STALE = {
    "stale": Text("stale .grad", "残留的 .grad"),
    "zero": Text(".grad zeros", ".grad 为零"),
    "none": Text(".grad None", ".grad 为 None"),
}
# what PyTorch says where a BatchNorm in training mode meets a batch of one sample: in a
# case whose model may arrive in training mode, the mark of an answer that never left it
ONE_SAMPLE_IN_TRAINING = "more than 1 value per channel when training"
# a case's "default_dtype": the caller's own torch.set_default_dtype (oracle._caller_default)
DEFAULT_DTYPE = Text(
    ", the caller's default dtype float64 (torch.set_default_dtype)",
    "，调用者的默认 dtype 为 float64（torch.set_default_dtype）",
)


def with_default_dtype(text: Text, case: dict) -> Text:
    """A case's description, followed by the caller's default dtype where the case sets one."""
    if not case.get("default_dtype"):
        return text
    return Text(text.en + DEFAULT_DTYPE.en, text.zh + DEFAULT_DTYPE.zh)


# a leftover far larger than one step's gradient: subtracting it back loses the new one
LARGE_STALE = {"large": Text("a large stale .grad (about 1e8)", "很大的残留 .grad（约 1e8）")}
