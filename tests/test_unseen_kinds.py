"""Issue 22's red team by kind: fresh answers, not in tests/catalog, for every kind of miss.

Each wrong answer is of one kind named under the issue's "Why" (the caller's state is not
fresh, an argument is hard-coded, a side effect on the caller, an input at the edge, one
observable where another form differs) and must lose the exercise's points; each correct
answer, in an idiomatic style the observer once dropped (module-level objects, aliases,
classes with ``__call__``), must earn them and respect the learner-code policy. Both are
judged in self-study and split into observe/judge, as tests/test_lesson_checks.py does.

Kinds that do not apply: lesson 06, caller state: its functions take the caller's clock,
synchronize and work objects; the only caller state is work still queued, which the
catalogue covers. A wrong answer the checks miss stays here as a strict xfail naming why.
"""

from __future__ import annotations

from typing import NamedTuple

import pytest
from lesson_cells import run
from test_lesson_checks import CELLS, _policy_violations, _split_verdict, _test_source

from autograder.common.result import CheckFailed

LESSON = {
    "01": "01_requires_grad",
    "02": "02_no_grad",
    "03": "03_eval_vs_no_grad",
    "04": "04_detach",
    "05": "05_hooks",
    "06": "06_cuda_async",
    "07": "07_custom_function",
    "08": "08_capstone",
    "09": "09_scale",
}
STATE, ARGUMENT, SIDE_EFFECT, EDGE, OBSERVABLE = (
    "caller state not fresh",
    "hard-coded argument",
    "side effect on the caller",
    "input at the edge",
    "one observable where another form differs",
)


class Wrong(NamedTuple):
    lesson: str
    grade_id: str
    kind: str
    name: str
    code: str
    xfail: str | None = None


class Right(NamedTuple):
    lesson: str
    grade_id: str
    name: str
    code: str


WRONG = [
    # Lesson 01
    Wrong(
        "01",
        "ex4_per_batch_grads",
        STATE,
        "resets w.grad from the second batch on: assumes it arrives None",
        """
def per_batch_grads(w, batches):
    grads = []
    for i, x in enumerate(batches):
        if i:
            w.grad = None
        ((x @ w) ** 2).mean().backward()
        grads.append(w.grad.clone())
    return grads
""",
    ),
    Wrong(
        "01",
        "ex6_finetune_last_layer",
        ARGUMENT,
        "a default lr that the body uses instead of the argument",
        """
LR = 0.05


def finetune_last_layer(model, x, target, lr=LR):
    model[:-1].requires_grad_(False)
    optimizer = torch.optim.SGD(model[-1].parameters(), lr=LR)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    ),
    Wrong(
        "01",
        "ex1_product_grads",
        SIDE_EFFECT,
        "detach_() on the caller's tensors before copying them",
        """
def product_grads(a, b):
    a = a.detach_().clone().requires_grad_()
    b = b.detach_().clone().requires_grad_()
    c = a * b
    c.retain_grad()
    (c**2).sum().backward()
    return a.grad, b.grad, c.grad
""",
    ),
    Wrong(
        "01",
        "ex1_product_grads",
        EDGE,
        "copies to float32 for precision: a bfloat16 or float64 caller gets float32 gradients",
        """
def product_grads(a, b):
    a = a.detach().float().requires_grad_()
    b = b.detach().float().requires_grad_()
    c = a * b
    c.retain_grad()
    (c**2).sum().backward()
    return a.grad, b.grad, c.grad
""",
    ),
    Wrong(
        "01",
        "ex1_product_grads",
        OBSERVABLE,
        "gradients written out from the caller's tensors: they carry a graph",
        """
def product_grads(a, b):
    c = a * b
    return 2 * c * b, 2 * c * a, 2 * c
""",
    ),
    Wrong(
        "01",
        "ex1_product_grads",
        OBSERVABLE,
        "copies first, then the gradients written out: values right, autograd never asked",
        """
def product_grads(a, b):
    a, b = a.detach().clone(), b.detach().clone()
    c = a * b
    c_grad = 2 * c
    return c_grad * b, c_grad * a, c_grad
""",
    ),
    # Lesson 02
    Wrong(
        "02",
        "ex1_evaluate",
        STATE,
        "accuracy divided by len(batches) times the first batch's size",
        """
def evaluate(model, batches):
    total_loss, correct = 0.0, 0
    with torch.no_grad():
        for inputs, labels in batches:
            logits = model(inputs)
            total_loss += torch.nn.functional.cross_entropy(logits, labels).item()
            correct += (logits.argmax(dim=1) == labels).sum().item()
    return total_loss / len(batches), correct / (len(batches) * len(batches[0][1]))
""",
    ),
    Wrong(
        "02",
        "ex2_count_saved_bytes",
        ARGUMENT,
        "calls fn with its first argument only",
        """
def count_saved_bytes(fn, *args):
    sizes = []

    def pack(saved):
        sizes.append(saved.element_size() * saved.nelement())
        return saved

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda saved: saved):
        result = fn(args[0])
    return result, sum(sizes)
""",
    ),
    Wrong(
        "02",
        "ex5_input_saliency",
        SIDE_EFFECT,
        "freezes the model so that only x gets a gradient, never unfreezes it",
        """
def input_saliency(model, x):
    model.requires_grad_(False)
    with torch.inference_mode(False), torch.enable_grad():
        x = x.clone().requires_grad_()
        model(x).sum().backward()
    return x.grad
""",
    ),
    Wrong(
        "02",
        "ex4_frozen_features",
        EDGE,
        "casts the input to float32 for the backbone",
        """
def frozen_features(backbone, x):
    with torch.no_grad():
        return backbone(x.to(torch.float32))
""",
    ),
    Wrong(
        "02",
        "ex2_count_saved_bytes",
        OBSERVABLE,
        "right count, but the result returned detached",
        """
def count_saved_bytes(fn, *args):
    total = 0

    def pack(saved):
        nonlocal total
        total += saved.nbytes
        return saved

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda saved: saved):
        result = fn(*args)
    return result.detach(), total
""",
    ),
    # Lesson 03
    Wrong(
        "03",
        "ex5_mc_dropout_predict",
        STATE,
        "modes saved per module type: mixed modes on arrival are lost",
        """
def mc_dropout_predict(model, x, samples):
    modes = {type(m): m.training for m in model.modules()}
    model.eval()
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.train()
    try:
        with torch.no_grad():
            preds = torch.stack([model(x) for _ in range(samples)])
    finally:
        for m in model.modules():
            m.training = modes[type(m)]
    return preds.mean(dim=0), preds.std(dim=0)
""",
    ),
    Wrong(
        "03",
        "ex1_dropout_by_hand",
        ARGUMENT,
        "keeps by u >= p but scales the survivors by a fixed 2",
        """
def dropout_by_hand(x, p, u, training):
    if not training:
        return x
    return torch.where(u >= p, x * 2, torch.zeros_like(x))
""",
    ),
    Wrong(
        "03",
        "ex5_mc_dropout_predict",
        SIDE_EFFECT,
        "seeds the global RNG for reproducible samples",
        """
def mc_dropout_predict(model, x, samples):
    modes = [m.training for m in model.modules()]
    model.eval()
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.train()
    torch.manual_seed(0)
    try:
        with torch.no_grad():
            preds = torch.stack([model(x) for _ in range(samples)])
    finally:
        for m, mode in zip(model.modules(), modes):
            m.train(mode)
    return preds.mean(dim=0), preds.std(dim=0)
""",
    ),
    Wrong(
        "03",
        "ex5_mc_dropout_predict",
        SIDE_EFFECT,
        "puts the global RNG back to its initial seed afterwards, 'to be reproducible'",
        """
def mc_dropout_predict(model, x, samples):
    saved = [(m, m.training) for m in model.modules()]
    model.eval()
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.train()
    with torch.no_grad():
        outputs = [model(x) for _ in range(samples)]
    for m, mode in saved:
        m.train(mode)
    torch.manual_seed(torch.initial_seed())
    preds = torch.stack(outputs)
    return preds.mean(0), preds.std(0)
""",
    ),
    Wrong(
        "03",
        "ex1_dropout_by_hand",
        EDGE,
        "keeps where sign(u - p) > 0: exact ties dropped",
        """
def dropout_by_hand(x, p, u, training):
    if not training:
        return x
    return torch.where(torch.sign(u - p) > 0, x / (1 - p), torch.zeros_like(x))
""",
    ),
    Wrong(
        "03",
        "ex1_dropout_by_hand",
        OBSERVABLE,
        "evaluation mode returns x.detach(): the graph to x is cut",
        """
def dropout_by_hand(x, p, u, training):
    if not training:
        return x.detach()
    return torch.where(u >= p, x / (1 - p), torch.zeros_like(x))
""",
    ),
    Wrong(
        "03",
        "ex1_dropout_by_hand",
        OBSERVABLE,
        "training mode computed under no_grad ('a mask needs no graph'): no gradient reaches x",
        """
def dropout_by_hand(x, p, u, training):
    if not training:
        return x
    with torch.no_grad():
        return x * (u >= p) / (1 - p)
""",
    ),
    # Lesson 04
    Wrong(
        "04",
        "ex4_d_step",
        STATE,
        "G put in eval() for the fakes and back with train(): assumes G arrives training",
        """
import torch.nn.functional as F


def d_step(G, D, opt_d, real, z):
    opt_d.zero_grad()
    G.eval()
    with torch.no_grad():
        fake = G(z)
    G.train()
    real_logits, fake_logits = D(real), D(fake)
    loss_d = F.binary_cross_entropy_with_logits(
        real_logits, torch.ones_like(real_logits)
    ) + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
    loss_d.backward()
    opt_d.step()
    return loss_d.item()
""",
    ),
    Wrong(
        "04",
        "ex4_d_step",
        ARGUMENT,
        "its own SGD over D instead of the optimizer handed over",
        """
import torch.nn.functional as F


def d_step(G, D, opt_d, real, z):
    opt = torch.optim.SGD(D.parameters(), lr=opt_d.param_groups[0]["lr"])
    opt.zero_grad()
    fake = G(z).detach()
    real_logits, fake_logits = D(real), D(fake)
    loss_d = F.binary_cross_entropy_with_logits(
        real_logits, torch.ones_like(real_logits)
    ) + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
    loss_d.backward()
    opt.step()
    return loss_d.item()
""",
    ),
    Wrong(
        "04",
        "ex5_g_step",
        SIDE_EFFECT,
        "turns on requires_grad of the caller's noise z",
        """
import torch.nn.functional as F


def g_step(G, D, opt_g, z):
    z.requires_grad_()
    opt_g.zero_grad()
    logits = D(G(z))
    loss_g = F.binary_cross_entropy_with_logits(logits, torch.ones_like(logits))
    loss_g.backward()
    opt_g.step()
    return loss_g.item()
""",
    ),
    Wrong(
        "04",
        "ex2_detach_all",
        EDGE,
        "views told apart by data_ptr: a view at offset 0 is detached in place",
        """
def detach_all(tensors):
    result = []
    for t in tensors:
        if t.data_ptr() != t.untyped_storage().data_ptr():
            result.append(t.detach())
        else:
            result.append(t.detach_())
    return result
""",
    ),
    Wrong(
        "04",
        "ex5_g_step",
        EDGE,
        "sigmoid then binary_cross_entropy: saturates for large logits",
        """
import torch.nn.functional as F


def g_step(G, D, opt_g, z):
    opt_g.zero_grad()
    probs = torch.sigmoid(D(G(z)))
    loss_g = F.binary_cross_entropy(probs, torch.ones_like(probs))
    loss_g.backward()
    opt_g.step()
    return loss_g.item()
""",
    ),
    Wrong(
        "04",
        "ex5_g_step",
        EDGE,
        "-log(sigmoid(logits) + 1e-8) 'for stability': capped near 18 for confident D",
        """
def g_step(G, D, opt_g, z):
    opt_g.zero_grad()
    logits = D(G(z))
    loss_g = -torch.log(torch.sigmoid(logits) + 1e-8).mean()
    loss_g.backward()
    opt_g.step()
    return loss_g.item()
""",
    ),
    Wrong(
        "04",
        "ex3_normalised_and_grad",
        OBSERVABLE,
        "p returned as a new leaf that requires grad",
        """
def normalised_and_grad(w, x):
    out = torch.exp(x @ w)
    p = (out.detach() / out.detach().sum()).requires_grad_()
    out.sum().backward()
    return p, w.grad
""",
    ),
    # Lesson 05
    Wrong(
        "05",
        "ex4_train_and_log",
        STATE,
        "getattr on the layer name: a nested name like '0.1' is not found",
        """
def train_and_log(model, layer_name, batches, lr):
    layer = getattr(model, layer_name)
    log = []
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    handle = layer.register_forward_hook(lambda m, a, out: log.append(out.mean().item()))
    try:
        for x, y in batches:
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
    finally:
        handle.remove()
    return log
""",
    ),
    Wrong(
        "05",
        "ex4_train_and_log",
        ARGUMENT,
        "trains on the first three batches only",
        """
def train_and_log(model, layer_name, batches, lr):
    layer = model.get_submodule(layer_name)
    log = []
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    handle = layer.register_forward_hook(lambda m, a, out: log.append(out.mean().item()))
    try:
        for x, y in list(batches)[:3]:
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
    finally:
        handle.remove()
    return log
""",
    ),
    Wrong(
        "05",
        "ex5_forward_counting_saved",
        SIDE_EFFECT,
        "eval() for a deterministic count, the mode never restored",
        """
def forward_counting_saved(model, x):
    model.eval()
    n_bytes = 0

    def pack(t):
        nonlocal n_bytes
        n_bytes += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        output = model(x)
    return output, n_bytes
""",
    ),
    Wrong(
        "05",
        "ex3_mask_output",
        EDGE,
        "a float32 copy of the mask: a float64 output is computed in float64 but bfloat16 promotes",
        """
def mask_output(module, mask):
    mask32 = mask.float()

    def hook(module, args, output):
        return output * mask32

    return module.register_forward_hook(hook)
""",
    ),
    Wrong(
        "05",
        "ex1_extract_features",
        OBSERVABLE,
        "keeps output.detach(): on the CPU the stored tensor is the live output",
        """
def extract_features(model, names, x):
    modules = dict(model.named_modules())
    features = {}
    handles = []
    for name in names:
        def hook(module, args, output, name=name):
            features[name] = output.detach()

        handles.append(modules[name].register_forward_hook(hook))
    try:
        with torch.no_grad():
            model(x)
    finally:
        for handle in handles:
            handle.remove()
    return features
""",
    ),
    # Lesson 06
    Wrong(
        "06",
        "ex1_benchmark",
        ARGUMENT,
        "times five calls whatever repeats says",
        """
def benchmark(work, synchronize, clock, warmup, repeats):
    for _ in range(warmup):
        work()
    durations = []
    for _ in range(5):
        synchronize()
        start = clock()
        work()
        synchronize()
        durations.append(clock() - start)
    return sorted(durations)[len(durations) // 2]
""",
    ),
    Wrong(
        "06",
        "ex1_benchmark",
        ARGUMENT,
        "times at most ten calls, however many repeats asks for",
        """
def benchmark(work, synchronize, clock, warmup, repeats):
    for _ in range(warmup):
        work()
    durations = []
    for _ in range(min(repeats, 10)):
        synchronize()
        start = clock()
        work()
        synchronize()
        durations.append(clock() - start)
    return sorted(durations)[len(durations) // 2]
""",
    ),
    Wrong(
        "06",
        "ex4_load_batch",
        SIDE_EFFECT,
        "writes the copies back into the caller's batch",
        """
def load_batch(batch, device):
    batch = list(batch) if isinstance(batch, tuple) else batch
    for i, t in enumerate(batch):
        batch[i] = t.to(device, non_blocking=True)
    return tuple(batch)
""",
    ),
    Wrong(
        "06",
        "ex4_load_batch",
        SIDE_EFFECT,
        "empties the caller's list to let the host tensors go",
        """
def load_batch(batch, device):
    moved = tuple(t.to(device, non_blocking=True) for t in batch)
    if isinstance(batch, list):
        batch.clear()
    return moved
""",
    ),
    Wrong(
        "06",
        "ex4_load_batch",
        EDGE,
        "goes through view(-1): a non-contiguous tensor raises",
        """
def load_batch(batch, device):
    return tuple(t.view(-1).to(device, non_blocking=True).view(t.shape) for t in batch)
""",
    ),
    Wrong(
        "06",
        "ex5_epoch_mean_loss",
        OBSERVABLE,
        "keeps each loss as .tolist(): every step reads to the host",
        """
def epoch_mean_loss(step, batches):
    losses = [step(batch).tolist() for batch in batches]
    return sum(losses) / len(losses)
""",
    ),
    # Lesson 07
    Wrong(
        "07",
        "ex4_mul",
        STATE,
        "all or nothing: no gradient unless both inputs need one",
        """
class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad_out):
        if not all(ctx.needs_input_grad):
            return None, None
        a, b = ctx.saved_tensors
        return grad_out * b, grad_out * a


def mul(a, b):
    return Mul.apply(a, b)
""",
    ),
    Wrong(
        "07",
        "ex5_soft_clip",
        ARGUMENT,
        "backward takes the limit to be 1",
        """
class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, limit):
        ctx.save_for_backward(x)
        return limit * torch.tanh(x / limit)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * (1 - torch.tanh(x) ** 2), None


def soft_clip(x, limit):
    return SoftClip.apply(x, limit)
""",
    ),
    Wrong(
        "07",
        "ex2_quantise",
        SIDE_EFFECT,
        "rounds the caller's x in place and returns a copy",
        """
class Quantise(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, step):
        return x.div_(step).round_().mul_(step).clone()

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, None


def quantise(x, step):
    return Quantise.apply(x, step)
""",
    ),
    Wrong(
        "07",
        "ex3_backward_is_correct",
        SIDE_EFFECT,
        "x.double() is x itself for a float64 input, then requires_grad_",
        """
def backward_is_correct(fn, x):
    return torch.autograd.gradcheck(fn, (x.double().requires_grad_(),), raise_exception=False)
""",
    ),
    Wrong(
        "07",
        "ex3_backward_is_correct",
        SIDE_EFFECT,
        "torch.as_tensor(x, dtype=torch.float64) is x itself for a float64 x, then requires_grad_",
        """
def backward_is_correct(fn, x):
    x64 = torch.as_tensor(x, dtype=torch.float64).requires_grad_()
    return torch.autograd.gradcheck(fn, (x64,), raise_exception=False)
""",
    ),
    Wrong(
        "07",
        "ex2_quantise",
        EDGE,
        "ceil(x / step - 0.5): ties round down, not to even",
        """
class Quantise(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, step):
        return torch.ceil(x / step - 0.5) * step

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, None


def quantise(x, step):
    return Quantise.apply(x, step)
""",
    ),
    Wrong(
        "07",
        "ex1_silu",
        OBSERVABLE,
        "applies the Function to x.detach(): right values, no gradient reaches x",
        """
class SiLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        return grad_out * s * (1 + x * (1 - s))


def silu(x):
    return SiLU.apply(x.detach())
""",
    ),
    # Lesson 08
    Wrong(
        "08",
        "ex1_train_epoch",
        STATE,
        "zeroes each .grad in place: a fresh model's .grad is None",
        """
import torch.nn.functional as F


def train_epoch(model, optimizer, batches):
    losses = []
    for x, y in batches:
        for p in model.parameters():
            p.grad.zero_()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
""",
    ),
    Wrong(
        "08",
        "ex6_time_step",
        ARGUMENT,
        "caps the number of timed steps at ten",
        """
def time_step(step, synchronize, clock, repeats):
    n = min(repeats, 10)
    synchronize()
    start = clock()
    for _ in range(n):
        step()
    synchronize()
    return (clock() - start) / n
""",
    ),
    Wrong(
        "08",
        "ex6_time_step",
        ARGUMENT,
        "steps in unrolled groups of four: the remainder of repeats is never run",
        """
def time_step(step, synchronize, clock, repeats):
    synchronize()
    start = clock()
    for _ in range(repeats // 4):
        step()
        step()
        step()
        step()
    synchronize()
    return (clock() - start) / repeats
""",
    ),
    Wrong(
        "08",
        "ex5_log_features",
        SIDE_EFFECT,
        "puts the model in evaluation mode to log, never restores it",
        """
def log_features(model, layer, batches):
    features = []
    model.eval()
    handle = layer.register_forward_hook(
        lambda module, inputs, output: features.append(output.detach())
    )
    try:
        for x, _ in batches:
            model(x)
    finally:
        handle.remove()
    return features
""",
    ),
    Wrong(
        "08",
        "ex7_swish",
        EDGE,
        "the derivative written with exp(-beta x): NaN for large negative x",
        """
class Swish(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, beta):
        s = torch.sigmoid(beta * x)
        ctx.save_for_backward(x, s)
        ctx.beta = beta
        return x * s

    @staticmethod
    def backward(ctx, grad_output):
        x, s = ctx.saved_tensors
        e = torch.exp(-ctx.beta * x)
        return grad_output * (s + ctx.beta * x * e / (1 + e) ** 2), None


def swish(x, beta):
    return Swish.apply(x, beta)
""",
    ),
    Wrong(
        "08",
        "ex4_discriminator_step",
        OBSERVABLE,
        "returns D's loss after its update, measured again",
        """
import torch.nn.functional as F


def discriminator_step(G, D, opt_d, real, noise):
    def loss_of(fake):
        real_logits, fake_logits = D(real), D(fake)
        return F.binary_cross_entropy_with_logits(
            real_logits, torch.ones_like(real_logits)
        ) + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))

    opt_d.zero_grad()
    fake = G(noise).detach()
    loss_of(fake).backward()
    opt_d.step()
    with torch.no_grad():
        return loss_of(fake).item()
""",
    ),
    # Lesson 09
    Wrong(
        "09",
        "ex3_autocast_predict",
        STATE,
        "every module back to training mode: assumes the model arrived training",
        """
def autocast_predict(model, x):
    model.eval()
    dtype = torch.bfloat16 if x.device.type == "cpu" else torch.float16
    with torch.inference_mode(), torch.autocast(x.device.type, dtype=dtype):
        out = model(x).float()
    for m in model.modules():
        m.train()
    return out
""",
    ),
    Wrong(
        "09",
        "ex2_bf16_train_step",
        ARGUMENT,
        "the optimizer's lr overwritten with the prompt's 0.1",
        """
def bf16_train_step(model, loss_fn, x, target, optimizer):
    for group in optimizer.param_groups:
        group["lr"] = 0.1
    optimizer.zero_grad()
    with torch.autocast(device_type=x.device.type, dtype=torch.bfloat16):
        loss = loss_fn(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    ),
    Wrong(
        "09",
        "ex1_checkpointed_forward",
        SIDE_EFFECT,
        "Dropout switched off for a deterministic recomputation",
        """
from torch.utils.checkpoint import checkpoint


def checkpointed_forward(blocks, x):
    for m in blocks.modules():
        if isinstance(m, torch.nn.Dropout):
            m.eval()
    h = x
    for block in blocks:
        h = checkpoint(block, h, use_reentrant=False)
    return h
""",
    ),
    Wrong(
        "09",
        "ex4_per_sample_grads",
        EDGE,
        "each target reshaped with y[i].view(1): a target row of several values raises",
        """
from torch.func import functional_call, grad, vmap


def per_sample_grads(model, loss_fn, x, y):
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss_of(p, xi, yi):
        return loss_fn(functional_call(model, p, (xi[None, :],)), yi.view(1))

    return vmap(grad(loss_of), in_dims=(None, 0, 0))(params, x, y)
""",
    ),
    Wrong(
        "09",
        "ex1_checkpointed_forward",
        OBSERVABLE,
        "outputs detached between checkpointed blocks: the values right, no gradient"
        " reaches the earlier blocks",
        """
from torch.utils.checkpoint import checkpoint


def checkpointed_forward(blocks, x):
    h = x
    for k, block in enumerate(blocks):
        h = checkpoint(block, h, use_reentrant=False)
        if k < len(blocks) - 1:
            h = h.detach().requires_grad_(h.requires_grad)
    return h
""",
    ),
]

RIGHT = [
    Right(  # the red team's 'non-contiguous input raises': c is 1-D, view(-1) never raises
        "01",
        "ex1_product_grads",
        "sums over c.view(-1): c is 1-D whatever a's layout",
        """
def product_grads(a, b):
    a = a.detach().clone().requires_grad_()
    b = b.detach().clone().requires_grad_()
    c = a * b
    c.retain_grad()
    flat = c.view(-1)
    (flat * flat).sum().backward()
    return a.grad, b.grad, c.grad
""",
    ),
    Right(
        "01",
        "ex2_output_requires_grad",
        "a helper aliased at module level, any over a generator",
        """
def _needs_grad(t):
    return t.requires_grad


wants_grad = _needs_grad


def output_requires_grad(*inputs):
    return any(wants_grad(t) for t in inputs)
""",
    ),
    Right(
        "01",
        "ex5_backward_seed",
        "a computed module-level constant, full_like",
        """
ONE = 2 - 1.0


def backward_seed(loss):
    return torch.full_like(loss, ONE)
""",
    ),
    Right(
        "02",
        "ex4_frozen_features",
        "no_grad() decorating a helper, aliased",
        """
@torch.no_grad()
def _features(backbone, x):
    return backbone(x)


frozen_features = _features
""",
    ),
    Right(
        "03",
        "ex5_mc_dropout_predict",
        "samples seeded for reproducibility, the caller's RNG state saved and put back",
        """
def mc_dropout_predict(model, x, samples):
    modes = [m.training for m in model.modules()]
    saved = torch.get_rng_state()
    saved_gpu = torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None
    model.eval()
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.train()
    try:
        torch.manual_seed(1234)
        with torch.no_grad():
            preds = torch.stack([model(x) for _ in range(samples)])
    finally:
        torch.set_rng_state(saved)
        if saved_gpu is not None:
            torch.cuda.set_rng_state_all(saved_gpu)
        for m, mode in zip(model.modules(), modes):
            m.train(mode)
    return preds.mean(dim=0), preds.std(dim=0)
""",
    ),
    Right(
        "03",
        "ex1_dropout_by_hand",
        "x.view_as(x) in evaluation mode: a view keeps x's graph",
        """
def dropout_by_hand(x, p, u, training):
    if training:
        return x * (u >= p).to(x.dtype) / (1 - p)
    return x.view_as(x)
""",
    ),
    Right(
        "03",
        "ex3_validate",
        "a module-level criterion, statistics.fmean, modes restored by name",
        """
import statistics

CRITERION = torch.nn.MSELoss()


def validate(model, batches):
    modes = {name: m.training for name, m in model.named_modules()}
    model.eval()
    try:
        with torch.no_grad():
            return statistics.fmean(CRITERION(model(x), y).item() for x, y in batches)
    finally:
        for name, m in model.named_modules():
            m.training = modes[name]
""",
    ),
    Right(  # the red team's 'stale .grad lost': the task hands in w with w.grad None
        "04",
        "ex3_normalised_and_grad",
        "sets w.grad to None first: a no-op for the w the task promises",
        """
def normalised_and_grad(w, x):
    w.grad = None
    out = torch.exp(x @ w)
    p = out.detach().clone()
    p.div_(p.sum())
    out.sum().backward()
    return p, w.grad
""",
    ),
    Right(
        "04",
        "ex5_g_step",
        "a module-level BCEWithLogitsLoss, ones from new_ones",
        """
CRITERION = torch.nn.BCEWithLogitsLoss()


def g_step(G, D, opt_g, z):
    opt_g.zero_grad()
    logits = D(G(z))
    loss_g = CRITERION(logits, logits.new_ones(logits.shape))
    loss_g.backward()
    opt_g.step()
    return loss_g.item()
""",
    ),
    Right(
        "04",
        "ex1_frozen_copy",
        "a class with __call__, its instance bound to the name",
        """
class _FrozenCopy:
    def __call__(self, t, share):
        shared = t.detach()
        return shared if share else shared.clone()


frozen_copy = _FrozenCopy()
""",
    ),
    Right(
        "05",
        "ex3_mask_output",
        "functools.partial of a module-level hook",
        """
import functools


def _masked(mask, module, args, output):
    return output * mask


def mask_output(module, mask):
    return module.register_forward_hook(functools.partial(_masked, mask))
""",
    ),
    Right(
        "06",
        "ex5_epoch_mean_loss",
        "a module-level zero, torch.stack of the rest",
        """
ZERO = torch.zeros(())


def epoch_mean_loss(step, batches):
    losses = [step(batch) for batch in batches]
    return (sum(losses, ZERO.to(losses[0].device)) / len(losses)).item()
""",
    ),
    Right(
        "07",
        "ex2_quantise",
        "a class with __call__ around Quantise.apply",
        """
class Quantise(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, step):
        return torch.round(x / step) * step

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, None


class _Quantiser:
    def __call__(self, x, step):
        return Quantise.apply(x, step)


quantise = _Quantiser()
""",
    ),
    Right(
        "08",
        "ex1_train_epoch",
        "Optimizer.zero_grad aliased at module level, a module-level criterion",
        """
ZERO_GRAD = torch.optim.Optimizer.zero_grad
CRITERION = torch.nn.CrossEntropyLoss()


def train_epoch(model, optimizer, batches):
    losses = []
    for x, y in batches:
        ZERO_GRAD(optimizer)
        loss = CRITERION(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
""",
    ),
    Right(
        "09",
        "ex4_per_sample_grads",
        "vmap over a module-level grad of a named helper, buffers passed explicitly",
        """
from torch.func import functional_call, grad, vmap


def _sample_loss(params, buffers, model, loss_fn, xi, yi):
    return loss_fn(functional_call(model, (params, buffers), (xi[None],)), yi[None])


SAMPLE_GRAD = grad(_sample_loss)


def per_sample_grads(model, loss_fn, x, y):
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}
    batched = vmap(SAMPLE_GRAD, in_dims=(None, None, None, None, 0, 0))
    return batched(params, buffers, model, loss_fn, x, y)
""",
    ),
]


def _params(answers):
    return [
        pytest.param(
            a,
            id=f"{a.lesson}-{a.grade_id}-{a.name}",
            marks=[pytest.mark.xfail(strict=True, reason=a.xfail)]
            if getattr(a, "xfail", None)
            else [],
        )
        for a in answers
    ]


def _tests_of(answer) -> str:
    return _test_source(LESSON[answer.lesson], answer.grade_id)


def test_every_lesson_has_a_fresh_wrong_answer_of_every_kind_that_applies():
    kinds = {(w.lesson, w.kind) for w in WRONG}
    not_applicable = {("06", STATE)}
    for lesson in LESSON:
        for kind in (STATE, ARGUMENT, SIDE_EFFECT, EDGE, OBSERVABLE):
            assert (lesson, kind) in kinds or (lesson, kind) in not_applicable, (lesson, kind)


def test_no_answer_is_a_copy_of_a_catalogue_entry():
    import importlib

    def squash(code: str) -> str:
        return "".join(code.split())

    for answer in [*WRONG, *RIGHT]:
        catalogue = importlib.import_module(f"catalog.lesson{answer.lesson}")
        known = [
            *catalogue.WRONG.get(answer.grade_id, []),
            *catalogue.RIGHT.get(answer.grade_id, []),
        ]
        assert squash(answer.code) not in {squash(k.code) for k in known}, answer.name
        assert squash(answer.code) != squash(CELLS[LESSON[answer.lesson]][answer.grade_id].source)


@pytest.mark.parametrize("wrong", _params(WRONG))
def test_fresh_wrong_answer_loses_the_points(wrong, device):
    namespace = run(wrong.code)
    with pytest.raises(CheckFailed):
        run(_tests_of(wrong), namespace)
    verdict = _split_verdict(wrong.code, _tests_of(wrong))
    assert not verdict.passed


@pytest.mark.parametrize("right", _params(RIGHT))
def test_fresh_correct_answer_earns_the_points(right, device):
    namespace = run(right.code)
    run(_tests_of(right), namespace)
    verdict = _split_verdict(right.code, _tests_of(right))
    assert verdict.passed, verdict.feedback


@pytest.mark.parametrize("right", _params(RIGHT))
def test_fresh_correct_answer_respects_the_learner_code_policy(right):
    assert not _policy_violations(right.code)
