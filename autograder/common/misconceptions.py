"""The misconception catalogue: each ID from CURRICULUM.md, the wrong belief, where to re-read.

Feedback names the ID and the section so that a learner knows *which* belief
to revise, and an instructor can count how often each one shows up.
"""

from __future__ import annotations

from dataclasses import dataclass

from autograder.common.i18n import Text


@dataclass(frozen=True)
class Misconception:
    """A wrong belief learners bring, and the lesson section that corrects it."""

    id: str
    lesson: str
    belief: Text
    section: Text


def _rg(number: int, belief: Text, section: Text) -> Misconception:
    return Misconception(f"RG-{number}", "01_requires_grad", belief, section)


def _ng(number: int, belief: Text, section: Text) -> Misconception:
    return Misconception(f"NG-{number}", "02_no_grad", belief, section)


def _cs(number: int, belief: Text, section: Text) -> Misconception:
    return Misconception(f"CS-{number}", "06_cuda_async", belief, section)


def _ev(number: int, belief: Text, section: Text) -> Misconception:
    return Misconception(f"EV-{number}", "03_eval_vs_no_grad", belief, section)


def _dt(number: int, belief: Text, section: Text) -> Misconception:
    return Misconception(f"DT-{number}", "04_detach", belief, section)


def _hk(number: int, belief: Text, section: Text) -> Misconception:
    return Misconception(f"HK-{number}", "05_hooks", belief, section)


def _cf(number: int, belief: Text, section: Text) -> Misconception:
    return Misconception(f"CF-{number}", "07_custom_function", belief, section)


def _sc(number: int, belief: Text, section: Text) -> Misconception:
    return Misconception(f"SC-{number}", "09_scale", belief, section)


_CHECKPOINTING = Text("§2 Gradient checkpointing", "§2 梯度检查点")
_AUTOCAST = Text("§4 Autocast", "§4 自动混合精度（autocast）")


CATALOGUE: dict[str, Misconception] = {
    m.id: m
    for m in (
        _rg(
            1,
            Text(
                "non-leaf tensors get .grad after backward()",
                "非叶子张量在 backward() 之后也会有 .grad",
            ),
            Text("§4 .grad lives on leaves", "§4 只有叶子张量才有 .grad"),
        ),
        _rg(
            2,
            Text(
                "an input with requires_grad=False means no graph is built",
                "输入的 requires_grad=False 就不会构建计算图",
            ),
            Text("§2 The propagation rule", "§2 requires_grad 的传播规则"),
        ),
        _rg(
            3,
            Text(
                "integer tensors can require grad",
                "整数张量也可以设置 requires_grad=True",
            ),
            Text("§3 Which tensors can require grad", "§3 哪些张量可以求梯度"),
        ),
        _rg(
            4,
            Text(
                "each backward() overwrites .grad",
                "每次 backward() 都会覆盖 .grad",
            ),
            Text("§5 Gradients accumulate", "§5 梯度会累积"),
        ),
        _rg(
            5,
            Text(
                "loss.backward() equals loss.backward(torch.FloatTensor([1.0]))",
                "loss.backward() 等价于 loss.backward(torch.FloatTensor([1.0]))",
            ),
            Text(
                "§6 backward() on scalars and non-scalars",
                "§6 标量与非标量的 backward()",
            ),
        ),
        _rg(
            6,
            Text(
                "freezing can be done without requires_grad_(False) on the frozen parameters (on "
                "the input batch instead, with eval(), or by leaving them out of the optimizer)",
                "冻结不必给要冻结的参数设置 requires_grad_(False)"
                "（改为设置输入批次、调用 eval()，或只是不把它们交给优化器）",
            ),
            Text("§9 Freezing part of a model", "§9 冻结模型的一部分"),
        ),
        _rg(
            7,
            Text(
                ".to() / .cuda() on a tensor moves it in place",
                "对张量调用 .to() / .cuda() 会原地移动它",
            ),
            Text("§10 Moving tensors and modules", "§10 移动张量与模块"),
        ),
        _ng(
            1,
            Text("volatile=True still turns autograd off", "volatile=True 仍然能关闭自动求导"),
            Text("§1 volatile, then and now", "§1 volatile 的过去与现在"),
        ),
        _ng(
            2,
            Text(
                "no_grad saves memory because no gradients are stored",
                "no_grad 省内存是因为不保存梯度",
            ),
            Text("§2 What a graph costs", "§2 计算图占用的是什么"),
        ),
        _ng(
            3,
            Text(
                "test-time memory grows because backward() was never called",
                "测试时内存增长是因为从没调用 backward()",
            ),
            Text("§5 Why evaluation memory grows", "§5 评估时内存为什么会增长"),
        ),
        _ng(
            4,
            Text(
                "outputs of inference_mode can be used in training later",
                "inference_mode 的输出之后可以用于训练",
            ),
            Text("§4 inference_mode", "§4 inference_mode（推理模式）"),
        ),
        _ng(
            5,
            Text(
                "enable_grad() re-enables autograd inside inference_mode",
                "在 inference_mode 里用 enable_grad() 可以重新开启自动求导",
            ),
            Text("§4 inference_mode", "§4 inference_mode（推理模式）"),
        ),
        _ng(
            6,
            Text("no_grad makes inference much faster", "no_grad 能让推理快很多"),
            Text("§6 Is no_grad faster?", "§6 no_grad 更快吗？"),
        ),
        _ev(
            1,
            Text(
                "model.eval() disables gradient computation or changes gradients",
                "model.eval() 会关闭梯度计算，或者改变梯度",
            ),
            Text("§5 Gradients in evaluation mode", "§5 评估模式下的梯度"),
        ),
        _ev(
            2,
            Text(
                "torch.no_grad() switches Dropout/BatchNorm to inference behaviour (so the model "
                "need not be in eval() mode while it computes)",
                "torch.no_grad() 会让 Dropout / BatchNorm 切换到推理时的行为"
                "（所以模型计算时不必处于 eval() 模式）",
            ),
            Text("§4 The 2×2 table, measured", "§4 实测 2×2 对照表"),
        ),
        _ev(
            3,
            Text("Dropout's p is the keep probability", "Dropout 的 p 是保留概率"),
            Text("§2 Dropout: p is the drop probability", "§2 Dropout：p 是丢弃概率"),
        ),
        _ev(
            4,
            Text(
                "no need to call model.train() after validation",
                "验证结束后不必再调用 model.train()",
            ),
            Text("§6 A correct validation routine", "§6 正确的验证流程"),
        ),
        _ev(
            5,
            Text(
                "model.eval() can be called after the evaluation loop",
                "model.eval() 可以在评估循环之后再调用",
            ),
            Text("§6 A correct validation routine", "§6 正确的验证流程"),
        ),
        _ev(
            6,
            Text(
                "model.eval() alone is enough to save memory at test time",
                "测试时只调用 model.eval() 就足以节省内存",
            ),
            Text("§6 A correct validation routine", "§6 正确的验证流程"),
        ),
        _hk(
            1,
            Text(
                "storing a hook's output costs nothing extra",
                "保存钩子拿到的输出不会额外占用内存",
            ),
            Text("§4 What a stored output keeps alive", "§4 保存的输出让什么一直存活"),
        ),
        _hk(
            2,
            Text(
                ".cpu() always makes a copy",
                ".cpu() 总会复制一份数据",
            ),
            Text(
                "§5 .cpu().numpy() can be the live tensor", "§5 .cpu().numpy() 可能就是原张量本身"
            ),
        ),
        _hk(
            3,
            Text(
                "hooks go away by themselves",
                "钩子会自己消失",
            ),
            Text("§3 Handles, remove() and a context manager", "§3 句柄、remove() 与上下文管理器"),
        ),
        _hk(
            4,
            Text(
                "a tensor hook's return value is ignored",
                "张量钩子的返回值会被忽略",
            ),
            Text("§1 Tensor hooks: inspect or replace a gradient", "§1 张量钩子：查看或替换梯度"),
        ),
        _hk(
            5,
            Text(
                "a forward hook can change the output only by mutating it",
                "前向钩子只能通过原地修改来改变输出",
            ),
            Text("§2 Module hooks: before and after forward", "§2 模块钩子：forward 之前与之后"),
        ),
        _cs(
            1,
            Text(
                "a CUDA call has finished when the Python line returns",
                "Python 这一行返回时，CUDA 调用就已经执行完了",
            ),
            Text("§1 The host and the device: a queue", "§1 主机与设备：一个队列"),
        ),
        _cs(
            2,
            Text(
                "a wall-clock timer around GPU code measures the kernel",
                "用挂钟计时器包住 GPU 代码，量到的就是核函数的时间",
            ),
            Text("§2 Timing GPU code", "§2 给 GPU 代码计时"),
        ),
        _cs(
            3,
            Text(
                "non_blocking=True is always safe (a copy must be waited for — by the host, "
                "or by the stream that reads it — before its result is read)",
                "non_blocking=True 总是安全的（读取拷贝结果之前，必须先等拷贝完成——"
                "由主机等，或者由读取它的那个流等）",
            ),
            Text(
                "§6 Device-to-host copies with non_blocking (a copy read by another stream:"
                " §10 Streams)",
                "§6 带 non_blocking 的设备到主机拷贝（由另一个流读取的拷贝：§10 CUDA 流）",
            ),
        ),
        _cs(
            4,
            Text(
                "the first call's time is representative (no warm-up)",
                "第一次调用的耗时就有代表性（不需要预热）",
            ),
            Text("§4 Warm-up and the median", "§4 预热与中位数"),
        ),
        _cs(
            5,
            Text(
                "current_accelerator() returning cuda means a GPU is usable",
                "current_accelerator() 返回 cuda 就说明有可用的 GPU",
            ),
            Text("§8 Choosing a device: torch.accelerator", "§8 选择设备：torch.accelerator"),
        ),
        _cs(
            6,
            Text(
                "non_blocking=True or pin_memory() makes a host-to-device copy faster",
                "non_blocking=True 或 pin_memory() 能让主机到设备的拷贝更快",
            ),
            Text(
                "§7 Host-to-device copies and pinned memory",
                "§7 主机到设备的拷贝与锁页内存",
            ),
        ),
        _cs(
            7,
            Text(
                "a non-blocking copy overlaps with the kernels already queued on the same stream "
                "(overlap needs a second stream)",
                "非阻塞拷贝会与同一个流上已排队的核函数并行（其实要并行必须用第二个流）",
            ),
            Text(
                "§10 Streams: a copy beside the computation",
                "§10 CUDA 流：让拷贝与计算并行",
            ),
        ),
        _dt(
            1,
            Text("detach() copies the data", "detach() 会复制数据"),
            Text(
                "§1 detach() shares storage; clone() copies", "§1 detach() 共享存储，clone() 才复制"
            ),
        ),
        _dt(
            2,
            Text(".data and detach() are interchangeable", ".data 和 detach() 可以互换"),
            Text(
                "§3 .data vs detach(): the version counter",
                "§3 .data 与 detach()：版本计数器",
            ),
        ),
        _dt(
            3,
            Text("detach_() works on any tensor", "detach_() 对任何张量都能用"),
            Text("§2 detach_() and views", "§2 detach_() 与视图"),
        ),
        _dt(
            4,
            Text(
                "leaving out detach in the D step only costs speed",
                "判别器步里不用 detach 只是慢一点",
            ),
            Text(
                "§5 Three D steps, measured",
                "§5 三种判别器步的实测",
            ),
        ),
        _dt(
            5,
            Text(
                "the G step needs detach too",
                "生成器步也需要 detach",
            ),
            Text("§4 A GAN on real digits", "§4 在真实手写数字上训练 GAN"),
        ),
        _dt(
            6,
            Text(
                "G's optimizer step makes stale D gradients harmless",
                "生成器的优化器更新一步后，判别器残留的梯度就无害了",
            ),
            Text(
                "§6 Zeroing the right gradients, or freezing D",
                "§6 清零该清零的梯度，或冻结判别器",
            ),
        ),
        _cf(
            1,
            Text(
                "the legacy Function style (an instance with __init__ and a non-static forward)"
                " still works",
                "旧式 Function 写法（带 __init__ 的实例、非静态的 forward）现在依然可用",
            ),
            Text(
                "§1 From the legacy style to @staticmethod and .apply",
                "§1 从旧式写法到 @staticmethod 与 .apply",
            ),
        ),
        _cf(
            2,
            Text(
                "backward returns one gradient per output",
                "backward 为每个输出返回一个梯度",
            ),
            Text(
                "§2 backward's contract: one gradient per input",
                "§2 backward 的约定：每个输入对应一个梯度",
            ),
        ),
        _cf(
            3,
            Text(
                "gradcheck works in float32",
                "gradcheck 在 float32 下也能可靠地工作",
            ),
            Text(
                "§3 Checking a backward with gradcheck in float64",
                "§3 用 float64 下的 gradcheck 检查 backward",
            ),
        ),
        _cf(
            4,
            Text(
                "saving inputs as attributes on ctx is the same as save_for_backward",
                "把输入存成 ctx 的属性，与 save_for_backward 等价",
            ),
            Text(
                "§4 What to keep for backward: ctx.save_for_backward",
                "§4 为 backward 保存什么：ctx.save_for_backward",
            ),
        ),
        _cf(
            5,
            Text(
                "the forward(ctx, ...) style is all there is (torch.func needs setup_context)",
                "forward(ctx, ...) 就是唯一的写法（torch.func 需要 setup_context）",
            ),
            Text(
                "§7 The style current PyTorch recommends: setup_context, and torch.func",
                "§7 现行 PyTorch 推荐的写法：setup_context 与 torch.func",
            ),
        ),
        _sc(
            1,
            Text(
                "checkpointing saves memory for free (it recomputes the forward: time, RNG)",
                "梯度检查点能白白省下内存（其实它要重算前向传播：花时间，还牵涉随机数状态）",
            ),
            _CHECKPOINTING,
        ),
        _sc(
            2,
            Text(
                "under autocast the parameters and their .grad become float16/bfloat16",
                "在 autocast 下，参数和它们的 .grad 也会变成 float16/bfloat16",
            ),
            _AUTOCAST,
        ),
        _sc(
            3,
            Text(
                "bfloat16 autocast needs a GradScaler like float16",
                "bfloat16 的 autocast 也像 float16 一样需要 GradScaler",
            ),
            _AUTOCAST,
        ),
        _sc(
            4,
            Text(
                "hooks added to a module after torch.compile behave exactly as in eager mode",
                "在 torch.compile 之后才注册到模块上的钩子，行为与 eager 模式完全相同",
            ),
            Text(
                "§5 torch.compile with hooks and custom Functions",
                "§5 torch.compile 与钩子、自定义 Function",
            ),
        ),
        _sc(
            5,
            Text(
                "per-sample gradients need a Python loop over the batch",
                "逐样本梯度必须用 Python 循环逐个样本地算",
            ),
            Text("§6 torch.func: per-sample gradients", "§6 torch.func：逐样本梯度"),
        ),
        _sc(
            6,
            Text(
                "moving saved tensors to the CPU with saved-tensor hooks costs nothing",
                "用保存张量的钩子把保存的张量移到 CPU 上，没有任何代价",
            ),
            Text("§3 Saved tensors off the device", "§3 把保存的张量移出设备"),
        ),
    )
}


def lookup(misconception_id: str) -> Misconception:
    """Return the catalogue entry for an ID, with a clear error for an unknown one."""
    try:
        return CATALOGUE[misconception_id]
    except KeyError:
        raise KeyError(
            f"Unknown misconception ID {misconception_id!r}; known: {', '.join(CATALOGUE)}"
        ) from None
