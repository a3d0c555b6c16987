"""One line, in the learner's language, for PyTorch errors that running a caller's model provokes.

The checks that hand the learner's function a caller's model (lessons 03 and 08) see the
same errors from it (no graph to go back through, BatchNorm on one sample, a shape or
device the code assumed); one explanation serves them all.
"""

from __future__ import annotations

from autograder.common.caller_states import ONE_SAMPLE_IN_TRAINING
from autograder.common.i18n import Text


def explain_model_error(message: str) -> Text | None:
    """One line, in the learner's language, for PyTorch errors that running a caller's model
    provokes (None for any other error)."""
    if "does not require grad" in message:
        return Text(
            "the loss has no graph: it was computed under torch.no_grad() or from tensors "
            "that do not require grad, so backward() has nothing to go back through",
            "损失没有计算图：它是在 torch.no_grad() 下、或由不需要梯度的张量算出来的，"
            "所以 backward() 无法沿计算图反向传播",
        )
    if ONE_SAMPLE_IN_TRAINING in message:
        return Text(
            "BatchNorm ran in training mode on a batch of one sample: training mode needs "
            "batch statistics, evaluation mode uses the running statistics",
            "BatchNorm 在训练模式下处理了只有一个样本的批次：训练模式需要批次统计量，"
            "评估模式使用滑动平均统计量",
        )
    if "view size is not compatible" in message:
        return Text(
            "view() needs a contiguous tensor: inputs may be transposed or sliced; "
            "reshape() works on any layout",
            "view() 需要连续的张量：输入可能是转置或切片得到的；reshape() 适用于任何内存布局",
        )
    if any(part in message for part in ("cannot be multiplied", "size of tensor", "shape of")):
        return Text(
            "a tensor had a shape your code does not expect: does it assume the sizes of "
            "the example in the prompt?",
            "某个张量的形状与你的代码所假定的不符：代码是不是假定了题目示例中的尺寸？",
        )
    if "same device" in message:
        return Text(
            "tensors on two devices met in one operation: create tensors on the device of "
            "the inputs",
            "两个设备上的张量参与了同一个运算：请在输入所在的设备上创建张量",
        )
    if "dtype" in message:
        return Text(
            "tensors of two dtypes met in one operation: take the dtype from the inputs",
            "两种 dtype 的张量参与了同一个运算：请沿用输入的 dtype",
        )
    if "Inference tensors cannot be saved for backward" in message:
        return Text(
            "a tensor made under torch.inference_mode() entered a graph that needs it for "
            "backward: use torch.no_grad() there, or clone() it outside inference mode",
            "在 torch.inference_mode() 下得到的张量进入了需要保存它以便反向传播的计算图："
            "这里请改用 torch.no_grad()，或在推理模式之外对它 clone()",
        )
    if "index" in message and "out of range" in message:
        return Text(
            "an index past the end of a model or tensor: does your code assume the layers "
            "of the example model?",
            "索引超出了模型或张量的范围：你的代码是不是假定了示例模型的层？",
        )
    return None
