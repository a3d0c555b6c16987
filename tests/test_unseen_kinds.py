"""Issue 22's red team by kind: fresh answers, not in tests/catalog, for every kind of miss.

Each wrong answer is of one kind named under the issue's "Why" (the caller's state is not
fresh, an argument is hard-coded, a side effect on the caller, an input at the edge, one
observable where another form differs) and must lose the exercise's points; each correct
answer, in an idiomatic style the observer once dropped (module-level objects, aliases,
classes with ``__call__``), must earn them and respect the learner-code policy. Both are
judged in self-study and split into observe/judge, as tests/test_lesson_checks.py does.

Kinds that do not apply: lesson 06, caller state: its functions take the caller's clock,
synchronize and work objects; the only caller state is work still queued, which the
catalogue covers. Every wrong answer here is caught on every machine: none is marked as a
known miss.
"""

from __future__ import annotations

from typing import NamedTuple

import pytest
import torch
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
    devices: tuple[str, ...] = ("cpu", "cuda")  # where it is wrong (as tests/catalog says)


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
        OBSERVABLE,
        "a fresh zeros .grad per batch, kept without a copy: the last entry is w.grad itself, so"
        " the caller's next backward adds into it (listed right until a held-back set showed"
        " it; the prompt asks for copies)",
        """
def per_batch_grads(w, batches):
    kept = []
    for x in batches:
        w.grad = torch.zeros_like(w)
        ((x @ w) ** 2).mean().backward()
        kept.append(w.grad)
    return kept
""",
    ),
    Wrong(
        "01",
        "ex4_per_batch_grads",
        OBSERVABLE,
        "w.grad set to None before each batch and kept without a copy: the last entry is w.grad"
        " itself, so the caller's next backward (or zero_grad(set_to_none=False)) changes it"
        " (listed right until a held-back set showed it; the prompt asks for copies)",
        """
def per_batch_grads(w, batches):
    out = []
    for x in batches:
        w.grad = None
        loss = ((x @ w) ** 2).mean()
        loss.backward()
        out.append(w.grad)
    return out
""",
    ),
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
    # Lesson 04, a second class of learners (brief r1)
    Wrong(
        "04",
        "ex1_frozen_copy",
        OBSERVABLE,
        "to(t.device, t.dtype) for the copy: it returns the detached tensor itself",
        """
def frozen_copy(t, share):
    frozen = t.detach()
    if share:
        return frozen
    return frozen.to(t.device, t.dtype)
""",
    ),
    Wrong(
        "04",
        "ex1_frozen_copy",
        OBSERVABLE,
        "empty_like filled with copy_ from t itself: the copy is recorded in the graph",
        """
def frozen_copy(t, share):
    if share:
        return t.detach()
    return torch.empty_like(t).copy_(t)
""",
    ),
    Wrong(
        "04",
        "ex2_detach_all",
        OBSERVABLE,
        "one try around the whole list: a single view makes every result a new tensor",
        """
def detach_all(tensors):
    try:
        return [t.detach_() for t in tensors]
    except RuntimeError:
        return [t.detach() for t in tensors]
""",
    ),
    Wrong(
        "04",
        "ex3_normalised_and_grad",
        OBSERVABLE,
        "the exponent shifted by its max 'for stability': p right, the gradient scaled",
        """
def normalised_and_grad(w, x):
    logits = x @ w
    out = torch.exp(logits - logits.max())
    p = out.detach().clone()
    p /= p.sum()
    out.sum().backward()
    return p, w.grad
""",
    ),
    Wrong(
        "04",
        "ex3_normalised_and_grad",
        OBSERVABLE,
        "a clone divided in place by out.sum(), which has history: p joins the graph",
        """
def normalised_and_grad(w, x):
    out = torch.exp(x @ w)
    p = out.detach().clone()
    p.div_(out.sum())
    out.sum().backward()
    return p, w.grad
""",
    ),
    Wrong(
        "04",
        "ex4_d_step",
        ARGUMENT,
        "targets for a batch of 64, the example's size",
        """
import torch.nn.functional as F


def d_step(G, D, opt_d, real, z):
    opt_d.zero_grad()
    fake = G(z).detach()
    ones = torch.ones(64, 1, device=real.device, dtype=real.dtype)
    zeros = torch.zeros(64, 1, device=real.device, dtype=real.dtype)
    loss_d = F.binary_cross_entropy_with_logits(D(real), ones) + F.binary_cross_entropy_with_logits(
        D(fake), zeros
    )
    loss_d.backward()
    opt_d.step()
    return loss_d.item()
""",
    ),
    Wrong(
        "04",
        "ex4_d_step",
        OBSERVABLE,
        "detaches the noise instead of the fakes: G's graph stays attached",
        """
import torch.nn.functional as F


def d_step(G, D, opt_d, real, z):
    opt_d.zero_grad()
    fake = G(z.detach())
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
        "ex5_g_step",
        STATE,
        "zero_grad after backward, before the step: the step sees no gradient",
        """
import torch.nn.functional as F


def g_step(G, D, opt_g, z):
    logits = D(G(z))
    loss_g = F.binary_cross_entropy_with_logits(logits, torch.ones_like(logits))
    loss_g.backward()
    opt_g.zero_grad()
    opt_g.step()
    return loss_g.item()
""",
    ),
    Wrong(
        "04",
        "ex5_g_step",
        SIDE_EFFECT,
        "D frozen with each flag saved, but D put in eval() for the G step and left there",
        """
import torch.nn.functional as F


def g_step(G, D, opt_g, z):
    flags = [p.requires_grad for p in D.parameters()]
    D.requires_grad_(False)
    D.eval()
    opt_g.zero_grad()
    logits = D(G(z))
    loss_g = F.binary_cross_entropy_with_logits(logits, torch.ones_like(logits))
    loss_g.backward()
    opt_g.step()
    for p, flag in zip(D.parameters(), flags):
        p.requires_grad_(flag)
    return loss_g.item()
""",
    ),
    Wrong(
        "04",
        "ex5_g_step",
        STATE,
        "D switched to eval() for the G step 'so it is not trained', its mode restored after",
        """
import torch.nn.functional as F


def g_step(G, D, opt_g, z):
    was_training = D.training
    D.eval()
    opt_g.zero_grad()
    logits = D(G(z))
    loss_g = F.binary_cross_entropy_with_logits(logits, torch.ones_like(logits))
    loss_g.backward()
    opt_g.step()
    D.train(was_training)
    return loss_g.item()
""",
    ),
    Wrong(
        "04",
        "ex4_d_step",
        EDGE,
        "real and fake through D as one batch: with BatchNorm in D the statistics mix",
        """
import torch.nn.functional as F


def d_step(G, D, opt_d, real, z):
    opt_d.zero_grad()
    fake = G(z).detach()
    logits = D(torch.cat([real, fake]))
    n = real.shape[0]
    loss_d = F.binary_cross_entropy_with_logits(
        logits[:n], torch.ones_like(logits[:n])
    ) + F.binary_cross_entropy_with_logits(logits[n:], torch.zeros_like(logits[n:]))
    loss_d.backward()
    opt_d.step()
    return loss_d.item()
""",
    ),
    Wrong(
        "04",
        "ex4_d_step",
        SIDE_EFFECT,
        "D.requires_grad_(True) 'to be sure D learns': a layer the caller froze is unfrozen",
        """
import torch.nn.functional as F


def d_step(G, D, opt_d, real, z):
    D.requires_grad_(True)
    opt_d.zero_grad()
    fake = G(z).detach()
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
        "ex5_g_step",
        SIDE_EFFECT,
        "G.requires_grad_(True) 'so that G gets its gradient': a frozen G layer is unfrozen",
        """
import torch.nn.functional as F


def g_step(G, D, opt_g, z):
    G.requires_grad_(True)
    opt_g.zero_grad()
    logits = D(G(z))
    loss_g = F.binary_cross_entropy_with_logits(logits, torch.ones_like(logits))
    loss_g.backward()
    opt_g.step()
    return loss_g.item()
""",
    ),
    # Lesson 05, a second class of learners (brief r1)
    Wrong(
        "05",
        "ex1_extract_features",
        ARGUMENT,
        "submodules looked up among the direct children: a nested name like 'body.2' is missed",
        """
def extract_features(model, names, x):
    children = dict(model.named_children())
    features = {}
    handles = []
    for name in names:
        def hook(module, args, output, name=name):
            features[name] = output.detach().clone().cpu()
        handles.append(children[name].register_forward_hook(hook))
    try:
        model(x)
    finally:
        for handle in handles:
            handle.remove()
    return features
""",
    ),
    Wrong(
        "05",
        "ex1_extract_features",
        SIDE_EFFECT,
        "hooks in a list, but only the last handle removed in finally",
        """
def extract_features(model, names, x):
    modules = dict(model.named_modules())
    features = {}
    handle = None
    try:
        for name in names:
            handle = modules[name].register_forward_hook(
                lambda m, a, out, name=name: features.__setitem__(name, out.detach().clone().cpu())
            )
        with torch.no_grad():
            model(x)
    finally:
        if handle is not None:
            handle.remove()
    return features
""",
    ),
    Wrong(
        "05",
        "ex2_clip_gradients",
        OBSERVABLE,
        "clip_grad_value_ once, now: no hook, later gradients never clipped",
        """
def clip_gradients(model, max_abs):
    torch.nn.utils.clip_grad_value_(model.parameters(), max_abs)
    return []
""",
    ),
    Wrong(
        "05",
        "ex2_clip_gradients",
        EDGE,
        "clamp with an upper bound only: large negative gradients pass",
        """
def clip_gradients(model, max_abs):
    return [p.register_hook(lambda g: g.clamp(max=max_abs)) for p in model.parameters()]
""",
    ),
    Wrong(
        "05",
        "ex3_mask_output",
        EDGE,
        "the mask flattened to (1, -1): only 2-d outputs broadcast",
        """
def mask_output(module, mask):
    flat = mask.reshape(1, -1)
    return module.register_forward_hook(lambda m, args, out: out * flat)
""",
    ),
    Wrong(
        "05",
        "ex4_train_and_log",
        ARGUMENT,
        "SGD with momentum 0.9 'to train faster': not the optimizer asked for",
        """
def train_and_log(model, layer_name, batches, lr):
    layer = model.get_submodule(layer_name)
    log = []
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
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
        OBSERVABLE,
        "the loss summed over the elements, not averaged",
        """
def train_and_log(model, layer_name, batches, lr):
    layer = model.get_submodule(layer_name)
    log = []
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    handle = layer.register_forward_hook(lambda m, a, out: log.append(out.mean().item()))
    try:
        for x, y in batches:
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y, reduction="sum")
            loss.backward()
            optimizer.step()
    finally:
        handle.remove()
    return log
""",
    ),
    Wrong(
        "05",
        "ex5_forward_counting_saved",
        OBSERVABLE,
        "counts only saved tensors that require grad: the saved input is left out",
        """
def forward_counting_saved(model, x):
    n_bytes = 0

    def pack(t):
        nonlocal n_bytes
        if t.requires_grad:
            n_bytes += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        output = model(x)
    return output, n_bytes
""",
    ),
    Wrong(
        "05",
        "ex5_forward_counting_saved",
        EDGE,
        "every saved tensor priced at x's element size: MaxPool's indices are int64",
        """
def forward_counting_saved(model, x):
    count = [0]

    def pack(t):
        count[0] += t.numel()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        output = model(x)
    return output, count[0] * x.element_size()
""",
    ),
    Wrong(
        "05",
        "ex5_forward_counting_saved",
        EDGE,
        "floating-point tensors only, 'the activations': integer and bool saves dropped",
        """
def forward_counting_saved(model, x):
    n_bytes = 0

    def pack(t):
        nonlocal n_bytes
        if t.is_floating_point():
            n_bytes += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        output = model(x)
    return output, n_bytes
""",
    ),
    Wrong(
        "05",
        "ex5_forward_counting_saved",
        STATE,
        "the count memoised by the model's id, x's shape and dtype: stale once the caller"
        " freezes a layer (written before reading the check; it passed every check then)",
        """
_counted = {}


def forward_counting_saved(model, x):
    n = 0

    def pack(t):
        nonlocal n
        n += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    key = (id(model), tuple(x.shape), x.dtype)
    if key not in _counted:
        _counted[key] = n
    return out, _counted[key]
""",
    ),
    Wrong(
        "05",
        "ex5_forward_counting_saved",
        SIDE_EFFECT,
        "a counting forward pass, then a second one for a clean output: the model runs twice",
        """
def forward_counting_saved(model, x):
    sizes = []

    def pack(t):
        sizes.append(t.numel() * t.element_size())
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        model(x)
    return model(x), sum(sizes)
""",
    ),
    Wrong(
        "05",
        "ex1_extract_features",
        SIDE_EFFECT,
        "sorts the caller's names in place 'for a stable order'",
        """
def extract_features(model, names, x):
    names.sort()
    modules = dict(model.named_modules())
    features = {}
    handles = [
        modules[name].register_forward_hook(
            lambda m, a, out, name=name: features.update({name: out.detach().clone().cpu()})
        )
        for name in names
    ]
    try:
        with torch.no_grad():
            model(x)
    finally:
        for handle in handles:
            handle.remove()
    return features
""",
    ),
    # Lesson 06, a second class of learners (brief r1)
    Wrong(
        "06",
        "ex1_benchmark",
        OBSERVABLE,
        "the middle duration in call order: never sorted",
        """
def benchmark(work, synchronize, clock, warmup, repeats):
    for _ in range(warmup):
        work()
    durations = []
    for _ in range(repeats):
        synchronize()
        start = clock()
        work()
        synchronize()
        durations.append(clock() - start)
    return durations[repeats // 2]
""",
    ),
    Wrong(
        "06",
        "ex1_benchmark",
        EDGE,
        "the warm-up loop one short: range(warmup - 1)",
        """
def benchmark(work, synchronize, clock, warmup, repeats):
    for _ in range(warmup - 1):
        work()
    durations = []
    for _ in range(repeats):
        synchronize()
        start = clock()
        work()
        synchronize()
        durations.append(clock() - start)
    return sorted(durations)[repeats // 2]
""",
    ),
    Wrong(
        "06",
        "ex2_to_host",
        EDGE,
        "copies made float32 on the way: to('cpu', torch.float32, non_blocking=True)",
        """
def to_host(tensors, synchronize):
    copies = [t.to("cpu", torch.float32, non_blocking=True) for t in tensors]
    synchronize()
    return copies
""",
    ),
    Wrong(
        "06",
        "ex3_pick_device",
        ARGUMENT,
        "the machine probed once, when the cell runs: later answers of the probes are ignored",
        """
_ACCELERATOR = torch.accelerator.current_accelerator(check_available=True)


def pick_device():
    return _ACCELERATOR if _ACCELERATOR is not None else torch.device("cpu")
""",
    ),
    Wrong(
        "06",
        "ex3_pick_device",
        ARGUMENT,
        "the first answer cached in a module-level dict: every later call repeats it",
        """
_PICKED = {}


def pick_device():
    if "device" not in _PICKED:
        accelerator = torch.accelerator.current_accelerator()
        usable = accelerator is not None and torch.accelerator.is_available()
        _PICKED["device"] = accelerator if usable else torch.device("cpu")
    return _PICKED["device"]
""",
    ),
    Wrong(
        "06",
        "ex4_load_batch",
        OBSERVABLE,
        "only the targets copied non_blocking: the inputs, the big tensor, hold the host",
        """
def load_batch(batch, device):
    inputs, targets = batch
    return inputs.to(device), targets.to(device, non_blocking=True)
""",
    ),
    Wrong(
        "06",
        "ex5_epoch_mean_loss",
        OBSERVABLE,
        "skips NaN losses with an if on a device tensor: every step reads to the host",
        """
def epoch_mean_loss(step, batches):
    total, count = 0.0, 0
    for batch in batches:
        loss = step(batch)
        if torch.isnan(loss):
            continue
        total = total + loss
        count += 1
    return (total / count).item()
""",
    ),
    Wrong(
        "06",
        "ex5_epoch_mean_loss",
        EDGE,
        "the sum assigned, not added: the mean of the last loss alone",
        """
def epoch_mean_loss(step, batches):
    total = None
    for batch in batches:
        total = step(batch)
    return (total / len(batches)).item()
""",
    ),
    Wrong(
        "06",
        "ex6_overlap_copy",
        OBSERVABLE,
        "the current stream made to wait for the side stream before the computation is queued",
        """
def overlap_copy(compute, batch, side, cuda, device):
    main = cuda.current_stream()
    with cuda.stream(side):
        moved = batch.to(device, non_blocking=True)
    main.wait_stream(side)
    moved.record_stream(main)
    result = compute()
    return result, moved
""",
    ),
    Wrong(
        "06",
        "ex6_overlap_copy",
        OBSERVABLE,
        "record_stream on the side stream: the current stream's use of the batch is not recorded",
        """
def overlap_copy(compute, batch, side, cuda, device):
    with cuda.stream(side):
        moved = batch.to(device, non_blocking=True)
        moved.record_stream(side)
    result = compute()
    cuda.current_stream().wait_stream(side)
    return result, moved
""",
    ),
    Wrong(
        "06",
        "ex4_load_batch",
        OBSERVABLE,
        "a generator expression returned, not a tuple: nothing is copied until it is unpacked",
        """
def load_batch(batch, device):
    return (t.to(device, non_blocking=True) for t in batch)
""",
    ),
    Wrong(
        "06",
        "ex2_to_host",
        OBSERVABLE,
        "a lazy map of copies, synchronized, then listed: the copies are issued after the wait",
        """
def to_host(tensors, synchronize):
    copies = map(lambda t: t.to("cpu", non_blocking=True), tensors)
    synchronize()
    return list(copies)
""",
    ),
    Wrong(
        "06",
        "ex6_overlap_copy",
        OBSERVABLE,
        "the event recorded on the side stream before the copy: waiting for it orders nothing",
        """
def overlap_copy(compute, batch, side, cuda, device):
    copied = cuda.Event()
    with cuda.stream(side):
        copied.record()
        moved = batch.to(device, non_blocking=True)
    result = compute()
    main = cuda.current_stream()
    main.wait_event(copied)
    moved.record_stream(main)
    return result, moved
""",
    ),
    Wrong(
        "06",
        "ex4_load_batch",
        OBSERVABLE,
        "copy=True as well: for the CPU the batch is copied on the host for nothing",
        """
def load_batch(batch, device):
    return [t.to(device, non_blocking=True, copy=True) for t in batch]
""",
    ),
    Wrong(
        "06",
        "ex1_benchmark",
        EDGE,
        "the median at index (repeats + 1) // 2, counted from one",
        """
def benchmark(work, synchronize, clock, warmup, repeats):
    for _ in range(warmup):
        work()
    durations = []
    for _ in range(repeats):
        synchronize()
        start = clock()
        work()
        synchronize()
        durations.append(clock() - start)
    return sorted(durations)[(repeats + 1) // 2]
""",
    ),
    # Lesson 07, a second class of learners (brief r1)
    Wrong(
        "07",
        "ex1_silu",
        OBSERVABLE,
        "a sign slip in the derivative: s * (1 - x * (1 - s))",
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
        return grad_out * s * (1 - x * (1 - s))


def silu(x):
    return SiLU.apply(x)
""",
    ),
    Wrong(
        "07",
        "ex2_quantise",
        EDGE,
        "rounded to integer indices with long(): the result comes back float32",
        """
class Quantise(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, step):
        return torch.round(x / step).long() * step

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, None


def quantise(x, step):
    return Quantise.apply(x, step)
""",
    ),
    Wrong(
        "07",
        "ex2_quantise",
        EDGE,
        "trunc(x / step + 0.5): negative values round towards zero",
        """
class Quantise(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, step):
        return torch.trunc(x / step + 0.5) * step

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
        ARGUMENT,
        "tolerances loosened to eps=1e-3, atol=1e-2 'because the input is float32'",
        """
def backward_is_correct(fn, x):
    x64 = x.detach().double().requires_grad_()
    return torch.autograd.gradcheck(
        fn, (x64,), eps=1e-3, atol=1e-2, rtol=1e-2, raise_exception=False
    )
""",
    ),
    Wrong(
        "07",
        "ex3_backward_is_correct",
        EDGE,
        "checks only the first two entries, to be quick",
        """
def backward_is_correct(fn, x):
    x64 = x.detach().flatten()[:2].double().requires_grad_()
    return torch.autograd.gradcheck(fn, (x64,), raise_exception=False)
""",
    ),
    Wrong(
        "07",
        "ex4_mul",
        SIDE_EFFECT,
        "forward multiplies a in place (a *= b): the caller's a changes",
        """
class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a.clone(), b)
        a *= b
        return a

    @staticmethod
    def backward(ctx, grad_out):
        a, b = ctx.saved_tensors
        return grad_out * b, grad_out * a


def mul(a, b):
    return Mul.apply(a, b)
""",
    ),
    Wrong(
        "07",
        "ex5_soft_clip",
        SIDE_EFFECT,
        "tanh_ in place on x / limit, then mul_: fine, but x / limit written as x.div_(limit)",
        """
class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, limit):
        y = x.div_(limit).tanh_().mul_(limit)
        ctx.save_for_backward(y)
        ctx.limit = limit
        return y.clone()

    @staticmethod
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        return grad_out * (1 - (y / ctx.limit) ** 2), None


def soft_clip(x, limit):
    return SoftClip.apply(x, limit)
""",
    ),
    Wrong(
        "07",
        "ex6_softplus",
        EDGE,
        "the sigmoid written out in backward as exp(x) / (1 + exp(x)): NaN for large x",
        """
class Softplus(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return torch.nn.functional.softplus(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        e = torch.exp(x)
        return grad_out * e / (1 + e)


def softplus(x):
    return Softplus.apply(x)
""",
    ),
    Wrong(
        "07",
        "ex6_softplus",
        OBSERVABLE,
        "the Function only where x requires grad, autograd's softplus elsewhere: grad() misses it",
        """
class Softplus(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return torch.nn.functional.softplus(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(x)


def softplus(x):
    if x.requires_grad:
        return Softplus.apply(x)
    return torch.nn.functional.softplus(x)
""",
    ),
    Wrong(
        "07",
        "ex2_quantise",
        EDGE,
        "flattened with view(-1) 'to handle any shape': a transposed x raises",
        """
class Quantise(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, step):
        flat = x.view(-1)
        return (torch.round(flat / step) * step).view(x.shape)

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, None


def quantise(x, step):
    return Quantise.apply(x, step)
""",
    ),
    Wrong(
        "07",
        "ex5_soft_clip",
        SIDE_EFFECT,
        "clamps the caller's x in place 'against overflow' before tanh",
        """
class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, limit):
        x.clamp_(-50 * limit, 50 * limit)
        ctx.save_for_backward(x)
        ctx.limit = limit
        return limit * torch.tanh(x / limit)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * (1 - torch.tanh(x / ctx.limit) ** 2), None


def soft_clip(x, limit):
    return SoftClip.apply(x, limit)
""",
    ),
    # Lesson 08, a second class of learners (brief r1)
    Wrong(
        "08",
        "ex1_train_epoch",
        ARGUMENT,
        "skips a batch smaller than 64, the example's batch size",
        """
import torch.nn.functional as F


def train_epoch(model, optimizer, batches):
    losses = []
    for x, y in batches:
        if len(x) < 64:
            continue
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
""",
    ),
    Wrong(
        "08",
        "ex2_validate",
        SIDE_EFFECT,
        "grad mode switched off with set_grad_enabled(False) and never switched back on",
        """
import torch.nn.functional as F


def validate(model, batches):
    was_training = model.training
    model.eval()
    total = 0.0
    torch.set_grad_enabled(False)
    for x, y in batches:
        total += F.cross_entropy(model(x), y).item()
    model.train(was_training)
    return float(total) / len(batches)
""",
    ),
    Wrong(
        "08",
        "ex3_accuracy",
        EDGE,
        "argmax with keepdim=True: (n, 1) against (n,) labels compares every pair",
        """
def accuracy(model, images, labels):
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            predicted = model(images).argmax(dim=1, keepdim=True)
    finally:
        model.train(was_training)
    return (predicted == labels).float().mean().item()
""",
    ),
    Wrong(
        "08",
        "ex4_discriminator_step",
        OBSERVABLE,
        "detaches the noise instead of the generated samples",
        """
import torch.nn.functional as F


def discriminator_step(G, D, opt_d, real, noise):
    opt_d.zero_grad()
    fake = G(noise.detach())
    real_logits, fake_logits = D(real), D(fake)
    loss = F.binary_cross_entropy_with_logits(
        real_logits, torch.ones_like(real_logits)
    ) + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
    loss.backward()
    opt_d.step()
    return loss.item()
""",
    ),
    Wrong(
        "08",
        "ex4_discriminator_step",
        SIDE_EFFECT,
        "detaches, then clears G's .grad 'for hygiene': the caller's G gradients are lost",
        """
import torch.nn.functional as F


def discriminator_step(G, D, opt_d, real, noise):
    opt_d.zero_grad()
    fake = G(noise).detach()
    G.zero_grad()
    real_logits, fake_logits = D(real), D(fake)
    loss = F.binary_cross_entropy_with_logits(
        real_logits, torch.ones_like(real_logits)
    ) + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
    loss.backward()
    opt_d.step()
    return loss.item()
""",
    ),
    Wrong(
        "08",
        "ex5_log_features",
        OBSERVABLE,
        "extend instead of append: one entry per row, not per batch",
        """
def log_features(model, layer, batches):
    features = []
    handle = layer.register_forward_hook(
        lambda module, inputs, output: features.extend(output.detach())
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
        "ex6_time_step",
        OBSERVABLE,
        "the first step left out of the timing as a warm-up, still divided by repeats",
        """
def time_step(step, synchronize, clock, repeats):
    synchronize()
    step()
    synchronize()
    start = clock()
    for _ in range(repeats - 1):
        step()
    synchronize()
    return (clock() - start) / repeats
""",
    ),
    Wrong(
        "08",
        "ex7_swish",
        SIDE_EFFECT,
        "the incoming gradient multiplied in place and returned",
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
        return grad_output.mul_(s + ctx.beta * x * s * (1 - s)), None


def swish(x, beta):
    return Swish.apply(x, beta)
""",
    ),
    Wrong(
        "08",
        "ex5_log_features",
        SIDE_EFFECT,
        "takes the batches off the caller's list with pop(0), as from a queue",
        """
def log_features(model, layer, batches):
    features = []
    handle = layer.register_forward_hook(
        lambda module, inputs, output: features.append(output.detach())
    )
    try:
        while batches:
            x, _ = batches.pop(0)
            model(x)
    finally:
        handle.remove()
    return features
""",
    ),
    Wrong(
        "08",
        "ex1_train_epoch",
        STATE,
        "model.train() first 'to be safe': a model that arrives with a layer in eval mode changes",
        """
import torch.nn.functional as F


def train_epoch(model, optimizer, batches):
    model.train()
    losses = []
    for x, y in batches:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
""",
    ),
    # Lesson 09, a second class of learners (brief r1)
    Wrong(
        "09",
        "ex1_checkpointed_forward",
        OBSERVABLE,
        "a lambda per block without binding it: backward recomputes the last block every time",
        """
from torch.utils.checkpoint import checkpoint


def checkpointed_forward(blocks, x):
    h = x
    for block in blocks:
        h = checkpoint(lambda inp: block(inp), h, use_reentrant=False)
    return h
""",
    ),
    Wrong(
        "09",
        "ex1_checkpointed_forward",
        EDGE,
        "the last block left unwrapped: 'its output is needed anyway'",
        """
from torch.utils.checkpoint import checkpoint


def checkpointed_forward(blocks, x):
    h = x
    for block in blocks[:-1]:
        h = checkpoint(block, h, use_reentrant=False)
    return blocks[-1](h)
""",
    ),
    Wrong(
        "09",
        "ex1_checkpointed_forward",
        OBSERVABLE,
        "x replaced by a detached leaf that requires grad: no gradient reaches the caller's x",
        """
from torch.utils.checkpoint import checkpoint


def checkpointed_forward(blocks, x):
    h = x.detach().requires_grad_()
    for block in blocks:
        h = checkpoint(block, h, use_reentrant=False)
    return h
""",
    ),
    Wrong(
        "09",
        "ex2_bf16_train_step",
        ARGUMENT,
        "autocast for 'cuda' written out: on the CPU nothing runs in bfloat16",
        """
def bf16_train_step(model, loss_fn, x, target, optimizer):
    optimizer.zero_grad()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = loss_fn(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
        devices=("cpu",),  # on a GPU the course device is CUDA: right there
    ),
    Wrong(
        "09",
        "ex2_bf16_train_step",
        EDGE,
        "the target cast to bfloat16 'to match the autocast output'",
        """
def bf16_train_step(model, loss_fn, x, target, optimizer):
    optimizer.zero_grad()
    with torch.autocast(device_type=x.device.type, dtype=torch.bfloat16):
        out = model(x)
        loss = loss_fn(out, target.to(torch.bfloat16))
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    ),
    Wrong(
        "09",
        "ex3_autocast_predict",
        STATE,
        "modes saved and restored for the direct children only: grandchildren's modes lost",
        """
def autocast_predict(model, x):
    dtype = torch.bfloat16 if x.device.type == "cpu" else torch.float16
    was = model.training
    children = [(child, child.training) for child in model.children()]
    model.eval()
    with torch.inference_mode(), torch.autocast(device_type=x.device.type, dtype=dtype):
        out = model(x)
    for child, mode in children:
        child.train(mode)
    model.training = was
    return out.float()
""",
    ),
    Wrong(
        "09",
        "ex3_autocast_predict",
        EDGE,
        "returned in x's dtype, not float32",
        """
def autocast_predict(model, x):
    dtype = torch.bfloat16 if x.device.type == "cpu" else torch.float16
    modes = {m: m.training for m in model.modules()}
    model.eval()
    try:
        with torch.inference_mode(), torch.autocast(device_type=x.device.type, dtype=dtype):
            out = model(x)
    finally:
        for m, mode in modes.items():
            m.training = mode
    return out.to(x.dtype)
""",
    ),
    Wrong(
        "09",
        "ex4_per_sample_grads",
        OBSERVABLE,
        "the parameters passed undetached: the returned gradients require grad",
        """
from torch.func import functional_call, grad, vmap


def per_sample_grads(model, loss_fn, x, y):
    params = dict(model.named_parameters())

    def loss_of_one(params, xi, yi):
        return loss_fn(functional_call(model, params, (xi.unsqueeze(0),)), yi.unsqueeze(0))

    return vmap(grad(loss_of_one), in_dims=(None, 0, 0))(params, x, y)
""",
    ),
    Wrong(
        "09",
        "ex4_per_sample_grads",
        SIDE_EFFECT,
        "model.eval() 'so that BatchNorm works on one sample', never restored",
        """
from torch.func import functional_call, grad, vmap


def per_sample_grads(model, loss_fn, x, y):
    model.eval()
    params = {name: p.detach() for name, p in model.named_parameters()}

    def loss_of_one(params, xi, yi):
        return loss_fn(functional_call(model, params, (xi[None],)), yi[None])

    return vmap(grad(loss_of_one), in_dims=(None, 0, 0))(params, x, y)
""",
    ),
    Wrong(
        "09",
        "ex4_per_sample_grads",
        EDGE,
        "the rows returned in float32 whatever the parameters' dtype",
        """
from torch.func import functional_call, grad, vmap


def per_sample_grads(model, loss_fn, x, y):
    params = {name: p.detach() for name, p in model.named_parameters()}

    def loss_of_one(params, xi, yi):
        return loss_fn(functional_call(model, params, (xi[None],)), yi[None])

    grads = vmap(grad(loss_of_one), in_dims=(None, 0, 0))(params, x, y)
    return {name: g.float() for name, g in grads.items()}
""",
    ),
    Wrong(
        "09",
        "ex4_per_sample_grads",
        OBSERVABLE,
        "frozen parameters given rows of zeros: their per-sample gradients are not zero",
        """
from torch.func import functional_call, grad, vmap


def per_sample_grads(model, loss_fn, x, y):
    trainable = {n: p.detach() for n, p in model.named_parameters() if p.requires_grad}
    frozen = {n: p.detach() for n, p in model.named_parameters() if not p.requires_grad}

    def loss_of_one(params, xi, yi):
        out = functional_call(model, {**params, **frozen}, (xi[None],))
        return loss_fn(out, yi[None])

    grads = vmap(grad(loss_of_one), in_dims=(None, 0, 0))(trainable, x, y)
    for n, p in frozen.items():
        grads[n] = torch.zeros(len(x), *p.shape, dtype=p.dtype, device=p.device)
    return {n: grads[n] for n, _ in model.named_parameters()}
""",
    ),
    Wrong(
        "09",
        "ex1_checkpointed_forward",
        OBSERVABLE,
        "each block's forward method checkpointed directly: the blocks' hooks never run",
        """
from torch.utils.checkpoint import checkpoint


def checkpointed_forward(blocks, x):
    for block in blocks:
        x = checkpoint(block.forward, x, use_reentrant=False)
    return x
""",
    ),
    # Lessons 05-09, red team r4: kinds nobody listed (state across calls, caller objects,
    # inputs the checks did not draw, instruments that failed documented forms)
    Wrong(
        "05",
        "ex1_extract_features",
        STATE,
        "the features dict kept at module level and cleared each call: two results are one dict",
        """
_FEATURES = {}


def extract_features(model, names, x):
    _FEATURES.clear()
    modules = dict(model.named_modules())
    handles = []
    for name in names:
        def hook(m, args, out, name=name):
            _FEATURES[name] = out.detach().to("cpu", copy=True)
        handles.append(modules[name].register_forward_hook(hook))
    try:
        with torch.no_grad():
            model(x)
    finally:
        for h in handles:
            h.remove()
    return _FEATURES
""",
    ),
    Wrong(
        "05",
        "ex1_extract_features",
        OBSERVABLE,
        "the hook returns its copy, which replaces the output the next layer gets",
        """
def extract_features(model, names, x):
    modules = dict(model.named_modules())
    features = {}
    def make(name):
        def hook(m, args, out):
            features[name] = out.detach().to("cpu", copy=True)
            return features[name]
        return hook
    handles = [modules[n].register_forward_hook(make(n)) for n in names]
    try:
        with torch.no_grad():
            model(x)
    finally:
        for h in handles:
            h.remove()
    return features
""",
    ),
    Wrong(
        "05",
        "ex1_extract_features",
        OBSERVABLE,
        "a forward pre-hook per name: features are the layers' inputs",
        """
def extract_features(model, names, x):
    modules = dict(model.named_modules())
    features = {}
    def make(name):
        def hook(m, args):
            features[name] = args[0].detach().to("cpu", copy=True)
        return hook
    handles = [modules[n].register_forward_pre_hook(make(n)) for n in names]
    try:
        with torch.no_grad():
            model(x)
    finally:
        for h in handles:
            h.remove()
    return features
""",
    ),
    Wrong(
        "05",
        "ex2_clip_gradients",
        SIDE_EFFECT,
        "clamp_ in the hook: the gradient the caller's own hook kept is clipped too",
        """
def clip_gradients(model, max_abs):
    handles = []
    for p in model.parameters():
        handles.append(p.register_hook(lambda g: g.clamp_(-max_abs, max_abs)))
    return handles
""",
    ),
    Wrong(
        "05",
        "ex2_clip_gradients",
        STATE,
        "hooks only on parameters whose .grad is not None: a caller with .grad None gets none",
        """
def clip_gradients(model, max_abs):
    return [
        p.register_hook(lambda g: g.clamp(-max_abs, max_abs))
        for p in model.parameters()
        if p.grad is not None
    ]
""",
    ),
    Wrong(
        "05",
        "ex2_clip_gradients",
        OBSERVABLE,
        "full backward pre-hooks clip what flows out of each layer, not the parameters' gradients",
        """
def clip_gradients(model, max_abs):
    handles = []
    for m in model.modules():
        if len(list(m.children())) == 0 and any(True for _ in m.parameters(recurse=False)):
            handles.append(
                m.register_full_backward_pre_hook(
                    lambda mod, go: tuple(
                        None if g is None else g.clamp(-max_abs, max_abs) for g in go
                    )
                )
            )
    return handles
""",
    ),
    Wrong(
        "05",
        "ex3_mask_output",
        EDGE,
        "the mask's first row taken: a (1, 6) mask flattened, a (2, 6) mask loses a row",
        """
def mask_output(module, mask):
    flat = mask.reshape(-1)[: mask.shape[-1]]
    def hook(m, args, output):
        return output * flat
    return module.register_forward_hook(hook)
""",
    ),
    Wrong(
        "05",
        "ex3_mask_output",
        STATE,
        "the handle memoised by id(module): a second mask never gets a hook",
        """
_HANDLES = {}


def mask_output(module, mask):
    if id(module) in _HANDLES:
        return _HANDLES[id(module)]
    h = module.register_forward_hook(lambda m, a, o: o * mask)
    _HANDLES[id(module)] = h
    return h
""",
    ),
    Wrong(
        "05",
        "ex4_train_and_log",
        STATE,
        "the optimizer kept on the model from the first call: the next epoch's lr is ignored",
        """
def train_and_log(model, layer_name, batches, lr):
    if not hasattr(model, "_opt"):
        model._opt = torch.optim.SGD(model.parameters(), lr=lr)
    opt = model._opt
    layer = model.get_submodule(layer_name)
    log = []
    h = layer.register_forward_hook(lambda m, a, o: log.append(o.mean().item()))
    try:
        for x, y in batches:
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            opt.step()
    finally:
        h.remove()
    return log
""",
    ),
    Wrong(
        "05",
        "ex4_train_and_log",
        SIDE_EFFECT,
        "the batches list consumed with pop(0)",
        """
def train_and_log(model, layer_name, batches, lr):
    layer = model.get_submodule(layer_name)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    log = []
    h = layer.register_forward_hook(lambda m, a, o: log.append(o.mean().item()))
    try:
        while batches:
            x, y = batches.pop(0)
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            opt.step()
    finally:
        h.remove()
    return log
""",
    ),
    Wrong(
        "05",
        "ex4_train_and_log",
        EDGE,
        "loss as sum of squares / numel of the first batch (ragged last batch)",
        """
def train_and_log(model, layer_name, batches, lr):
    layer = model.get_submodule(layer_name)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    log = []
    h = layer.register_forward_hook(lambda m, a, o: log.append(o.mean().item()))
    n = batches[0][1].numel()
    try:
        for x, y in batches:
            opt.zero_grad()
            (((model(x) - y) ** 2).sum() / n).backward()
            opt.step()
    finally:
        h.remove()
    return log
""",
    ),
    Wrong(
        "05",
        "ex5_forward_counting_saved",
        EDGE,
        "counts only floating-point saved tensors (MaxPool's int64 indices missed)",
        """
def forward_counting_saved(model, x):
    total = [0]
    def pack(t):
        if t.is_floating_point():
            total[0] += t.numel() * t.element_size()
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    return out, total[0]
""",
    ),
    Wrong(
        "05",
        "ex5_forward_counting_saved",
        STATE,
        "the counter kept at module level and never reset",
        """
_COUNT = {"bytes": 0}


def _pack(t):
    _COUNT["bytes"] += t.numel() * t.element_size()
    return t


def forward_counting_saved(model, x):
    with torch.autograd.graph.saved_tensors_hooks(_pack, lambda t: t):
        out = model(x)
    return out, _COUNT["bytes"]
""",
    ),
    Wrong(
        "05",
        "ex5_forward_counting_saved",
        OBSERVABLE,
        "counts each distinct tensor once (by id): a tensor packed twice counts once",
        """
def forward_counting_saved(model, x):
    seen = {}
    def pack(t):
        seen[id(t)] = t.numel() * t.element_size()
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    return out, sum(seen.values())
""",
    ),
    Wrong(
        "05",
        "ex5_forward_counting_saved",
        EDGE,
        "untyped_storage().nbytes() where contiguous: a contiguous view counts all its storage",
        """
def forward_counting_saved(model, x):
    n = 0
    def pack(t):
        nonlocal n
        n += t.untyped_storage().nbytes() if t.is_contiguous() else t.numel() * t.element_size()
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    return out, n
""",
    ),
    Wrong(
        "05",
        "ex5_forward_counting_saved",
        OBSERVABLE,
        "the forward pass run in evaluation mode, the mode restored: BatchNorm saves other tensors",
        """
def forward_counting_saved(model, x):
    n = 0
    def pack(t):
        nonlocal n
        n += t.numel() * t.element_size()
        return t
    was = model.training
    model.eval()
    try:
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            out = model(x)
    finally:
        model.train(was)
    return out, n
""",
    ),
    Wrong(
        "06",
        "ex1_benchmark",
        STATE,
        "the durations kept at module level: a second benchmark takes the median of both runs",
        """
_LAPS = []


def benchmark(work, synchronize, clock, warmup, repeats):
    for _ in range(warmup):
        work()
    for _ in range(repeats):
        synchronize()
        t0 = clock()
        work()
        synchronize()
        _LAPS.append(clock() - t0)
    return sorted(_LAPS)[len(_LAPS) // 2]
""",
    ),
    Wrong(
        "06",
        "ex1_benchmark",
        OBSERVABLE,
        "the mean of the middle three laps, not the median",
        """
def benchmark(work, synchronize, clock, warmup, repeats):
    for _ in range(warmup):
        work()
    laps = []
    for _ in range(repeats):
        synchronize()
        t0 = clock()
        work()
        synchronize()
        laps.append(clock() - t0)
    laps.sort()
    mid = len(laps) // 2
    window = laps[max(mid - 1, 0): mid + 2]
    return sum(window) / len(window)
""",
    ),
    Wrong(
        "06",
        "ex2_to_host",
        EDGE,
        "one concatenated copy split into views: dtypes promoted, results share storage",
        """
def to_host(tensors, synchronize):
    flat = [t.reshape(-1) for t in tensors]
    host = torch.cat(flat).to("cpu", non_blocking=True)
    synchronize()
    parts = host.split([f.numel() for f in flat])
    return [p.view(t.shape) for p, t in zip(parts, tensors)]
""",
    ),
    Wrong(
        "06",
        "ex2_to_host",
        OBSERVABLE,
        "the results returned as a tuple",
        """
def to_host(tensors, synchronize):
    copies = tuple(t.to("cpu", non_blocking=True) for t in tensors)
    synchronize()
    return copies
""",
    ),
    Wrong(
        "06",
        "ex4_load_batch",
        EDGE,
        "a list batch unpacked in the wrong order: (targets, inputs) comes back",
        """
def load_batch(batch, device):
    inputs, targets = batch
    if isinstance(batch, list):
        return [targets.to(device, non_blocking=True), inputs.to(device, non_blocking=True)]
    return inputs.to(device, non_blocking=True), targets.to(device, non_blocking=True)
""",
    ),
    Wrong(
        "06",
        "ex4_load_batch",
        OBSERVABLE,
        "non_blocking only for the inputs; the targets copied blocking (they are small)",
        """
def load_batch(batch, device):
    inputs, targets = batch
    return inputs.to(device, non_blocking=True), targets.to(device)
""",
    ),
    Wrong(
        "06",
        "ex5_epoch_mean_loss",
        SIDE_EFFECT,
        "the losses added in place into the first step's returned loss",
        """
def epoch_mean_loss(step, batches):
    total = None
    for batch in batches:
        loss = step(batch)
        if total is None:
            total = loss
        else:
            total += loss
    return (total / len(batches)).item()
""",
    ),
    Wrong(
        "06",
        "ex5_epoch_mean_loss",
        OBSERVABLE,
        "every step called under torch.no_grad(): a real training step could not backward",
        """
def epoch_mean_loss(step, batches):
    with torch.no_grad():
        losses = [step(b) for b in batches]
    return torch.stack(losses).mean().item()
""",
    ),
    Wrong(
        "06",
        "ex5_epoch_mean_loss",
        OBSERVABLE,
        "each loss copied to the host with .to('cpu') and summed there",
        """
def epoch_mean_loss(step, batches):
    total = 0.0
    for b in batches:
        total = total + step(b).detach().to("cpu")
    return float(total / len(batches))
""",
    ),
    Wrong(
        "06",
        "ex6_overlap_copy",
        OBSERVABLE,
        "record_stream on the side stream instead of the current one",
        """
def overlap_copy(compute, batch, side, cuda, device):
    with cuda.stream(side):
        moved = batch.to(device, non_blocking=True)
    result = compute()
    cuda.current_stream().wait_stream(side)
    moved.record_stream(side)
    return result, moved
""",
    ),
    Wrong(
        "06",
        "ex6_overlap_copy",
        OBSERVABLE,
        "the current stream waits for the side stream before the computation is queued",
        """
def overlap_copy(compute, batch, side, cuda, device):
    with cuda.stream(side):
        moved = batch.to(device, non_blocking=True)
    main = cuda.current_stream()
    main.wait_stream(side)
    moved.record_stream(main)
    result = compute()
    return result, moved
""",
    ),
    Wrong(
        "06",
        "ex6_overlap_copy",
        OBSERVABLE,
        "an event recorded on the side stream before the copy is queued",
        """
def overlap_copy(compute, batch, side, cuda, device):
    done = cuda.Event()
    with cuda.stream(side):
        done.record()
        moved = batch.to(device, non_blocking=True)
    result = compute()
    main = cuda.current_stream()
    main.wait_event(done)
    moved.record_stream(main)
    return result, moved
""",
    ),
    Wrong(
        "06",
        "ex3_pick_device",
        STATE,
        "the device chosen once and kept in a module-level list",
        """
_CHOICE = []


def pick_device():
    if not _CHOICE:
        acc = torch.accelerator.current_accelerator(check_available=True)
        _CHOICE.append(acc if acc is not None else torch.device("cpu"))
    return _CHOICE[0]
""",
    ),
    Wrong(
        "07",
        "ex1_silu",
        EDGE,
        "backward takes the sigmoid as y / x from the saved output: NaN at x = 0",
        """
class SiLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x * torch.sigmoid(x)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad_out):
        x, y = ctx.saved_tensors
        s = y / x
        return grad_out * s * (1 + x * (1 - s))


def silu(x):
    return SiLU.apply(x)
""",
    ),
    Wrong(
        "07",
        "ex1_silu",
        EDGE,
        "the sigmoid saved in float32 'to save memory'",
        """
class SiLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        s = torch.sigmoid(x)
        ctx.save_for_backward(x, s.float())
        return x * s

    @staticmethod
    def backward(ctx, grad_out):
        x, s = ctx.saved_tensors
        return grad_out * (s * (1 + x * (1 - s))).to(grad_out.dtype)


def silu(x):
    return SiLU.apply(x)
""",
    ),
    Wrong(
        "07",
        "ex1_silu",
        EDGE,
        "a 0-d x reshaped to (1,): the result has the wrong shape",
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
    if x.dim() == 0:
        return SiLU.apply(x.reshape(1))
    return SiLU.apply(x)
""",
    ),
    Wrong(
        "07",
        "ex2_quantise",
        OBSERVABLE,
        "a clipped straight-through estimator: gradient only where |x| <= 1",
        """
class Quantise(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, step):
        ctx.save_for_backward(x)
        return torch.round(x / step) * step

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * (x.abs() <= 1).to(grad_out.dtype), None


def quantise(x, step):
    return Quantise.apply(x, step)
""",
    ),
    Wrong(
        "07",
        "ex2_quantise",
        STATE,
        "step taken from the first call and kept on the class",
        """
class Quantise(torch.autograd.Function):
    step = None

    @staticmethod
    def forward(ctx, x, step):
        if Quantise.step is None:
            Quantise.step = step
        return torch.round(x / Quantise.step) * Quantise.step

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
        OBSERVABLE,
        "gradcheck with loosened tolerances (atol=rtol=1e-2)",
        """
def backward_is_correct(fn, x):
    x64 = x.detach().double().requires_grad_()
    return torch.autograd.gradcheck(fn, (x64,), atol=1e-2, rtol=1e-2, raise_exception=False)
""",
    ),
    Wrong(
        "07",
        "ex3_backward_is_correct",
        OBSERVABLE,
        "gradcheck at |x| + 0.1 to stay away from kinks: a backward wrong only for x < 0 passes",
        """
def backward_is_correct(fn, x):
    x64 = (x.detach().double().abs() + 0.1).requires_grad_()
    return torch.autograd.gradcheck(fn, (x64,), raise_exception=False)
""",
    ),
    Wrong(
        "07",
        "ex3_backward_is_correct",
        OBSERVABLE,
        "checks a single entry x[:1] to be fast",
        """
def backward_is_correct(fn, x):
    x64 = x.detach().double().reshape(-1)[:1].clone().requires_grad_()
    return torch.autograd.gradcheck(fn, (x64,), raise_exception=False)
""",
    ),
    Wrong(
        "07",
        "ex4_mul",
        OBSERVABLE,
        "b kept on ctx when it needs no grad, saved otherwise",
        """
class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        if b.requires_grad:
            ctx.save_for_backward(a, b)
            ctx.b = None
        else:
            ctx.save_for_backward(a)
            ctx.b = b
        return a * b

    @staticmethod
    def backward(ctx, grad_out):
        if ctx.b is None:
            a, b = ctx.saved_tensors
        else:
            (a,) = ctx.saved_tensors
            b = ctx.b
        return grad_out * b, grad_out * a


def mul(a, b):
    return Mul.apply(a, b)
""",
    ),
    Wrong(
        "07",
        "ex4_mul",
        EDGE,
        "saves the product and divides it back out: NaN where an entry is 0",
        """
class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        out = a * b
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        a, b, out = ctx.saved_tensors
        return grad_out * out / a, grad_out * out / b


def mul(a, b):
    return Mul.apply(a, b)
""",
    ),
    Wrong(
        "07",
        "ex5_soft_clip",
        STATE,
        "the limit of the first call kept on the Function class",
        """
class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, limit):
        if not hasattr(SoftClip, "limit"):
            SoftClip.limit = limit
        y = SoftClip.limit * torch.tanh(x / SoftClip.limit)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        return grad_out * (1 - (y / SoftClip.limit) ** 2), None


def soft_clip(x, limit):
    return SoftClip.apply(x, limit)
""",
    ),
    Wrong(
        "07",
        "ex5_soft_clip",
        OBSERVABLE,
        "the derivative from the saved result with the limit squared in the wrong place",
        """
class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, limit):
        y = limit * torch.tanh(x / limit)
        ctx.save_for_backward(y)
        ctx.limit = limit
        return y

    @staticmethod
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        return grad_out * (1 - y ** 2 / ctx.limit), None


def soft_clip(x, limit):
    return SoftClip.apply(x, limit)
""",
    ),
    Wrong(
        "07",
        "ex6_softplus",
        EDGE,
        "backward writes sigmoid as exp(x) / (1 + exp(x)): NaN for large x",
        """
class Softplus(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return torch.nn.functional.softplus(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        e = torch.exp(x)
        return grad_out * e / (1 + e)


def softplus(x):
    return Softplus.apply(x)
""",
    ),
    Wrong(
        "07",
        "ex6_softplus",
        EDGE,
        "forward uses softplus with threshold=5: large entries returned as x too early",
        """
class Softplus(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return torch.nn.functional.softplus(x, threshold=5)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(x)


def softplus(x):
    return Softplus.apply(x)
""",
    ),
    Wrong(
        "08",
        "ex1_train_epoch",
        SIDE_EFFECT,
        "the optimizer's momentum buffers thrown away each epoch for a clean start",
        """
import torch.nn.functional as F


def train_epoch(model, optimizer, batches):
    optimizer.state.clear()
    losses = []
    for x, y in batches:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
""",
    ),
    Wrong(
        "08",
        "ex1_train_epoch",
        OBSERVABLE,
        "the losses of the epoch averaged into one float per batch so far (running mean)",
        """
import torch.nn.functional as F


def train_epoch(model, optimizer, batches):
    losses, total = [], 0.0
    for k, (x, y) in enumerate(batches, 1):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item()
        losses.append(total / k)
    return losses
""",
    ),
    Wrong(
        "08",
        "ex2_validate",
        EDGE,
        "the mean weighted by batch size: a small last batch counts less",
        """
import torch.nn.functional as F


def validate(model, batches):
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for x, y in batches:
            total += F.cross_entropy(model(x), y, reduction="sum").item()
            count += len(y)
    model.train(was_training)
    return total / count
""",
    ),
    Wrong(
        "08",
        "ex2_validate",
        OBSERVABLE,
        "the loss tensors kept with their graphs until the end, detached only when summed",
        """
import torch.nn.functional as F


def validate(model, batches):
    was_training = model.training
    model.eval()
    losses = []
    for x, y in batches:
        losses.append(F.cross_entropy(model(x), y))
    model.train(was_training)
    return float(sum(l.detach() for l in losses)) / len(batches)
""",
    ),
    Wrong(
        "08",
        "ex4_discriminator_step",
        SIDE_EFFECT,
        "D's momentum reset by a fresh state each step",
        """
import torch.nn.functional as F


def discriminator_step(G, D, opt_d, real, noise):
    opt_d.state.clear()
    opt_d.zero_grad()
    fake = G(noise).detach()
    r, f = D(real), D(fake)
    loss = F.binary_cross_entropy_with_logits(
        r, torch.ones_like(r)
    ) + F.binary_cross_entropy_with_logits(f, torch.zeros_like(f))
    loss.backward()
    opt_d.step()
    return loss.item()
""",
    ),
    Wrong(
        "08",
        "ex4_discriminator_step",
        OBSERVABLE,
        "the fake batch generated in G's evaluation mode, G put back in train()",
        """
import torch.nn.functional as F


def discriminator_step(G, D, opt_d, real, noise):
    opt_d.zero_grad()
    G.eval()
    with torch.no_grad():
        fake = G(noise)
    G.train()
    r, f = D(real), D(fake)
    loss = F.binary_cross_entropy_with_logits(
        r, torch.ones_like(r)
    ) + F.binary_cross_entropy_with_logits(f, torch.zeros_like(f))
    loss.backward()
    opt_d.step()
    return loss.item()
""",
    ),
    Wrong(
        "08",
        "ex5_log_features",
        EDGE,
        "the features stacked into one tensor: ragged batches raise, and it is not a list",
        """
def log_features(model, layer, batches):
    features = []
    handle = layer.register_forward_hook(lambda m, i, o: features.append(o.detach()))
    try:
        for x, _ in batches:
            model(x)
    finally:
        handle.remove()
    return list(torch.stack(features)) if features else []
""",
    ),
    Wrong(
        "08",
        "ex5_log_features",
        STATE,
        "features kept in a list on the layer across calls: every call's features stay alive",
        """
def log_features(model, layer, batches):
    if not hasattr(layer, "logged"):
        layer.logged = []
    start = len(layer.logged)
    handle = layer.register_forward_hook(lambda m, i, o: m.logged.append(o.detach()))
    try:
        for x, _ in batches:
            model(x)
    finally:
        handle.remove()
    return layer.logged[start:]
""",
    ),
    Wrong(
        "08",
        "ex6_time_step",
        OBSERVABLE,
        "median of per-step laps instead of the mean",
        """
def time_step(step, synchronize, clock, repeats):
    laps = []
    for _ in range(repeats):
        synchronize()
        t0 = clock()
        step()
        synchronize()
        laps.append(clock() - t0)
    laps.sort()
    return laps[len(laps) // 2]
""",
    ),
    Wrong(
        "08",
        "ex6_time_step",
        ARGUMENT,
        "one extra untimed step before the timed ones: step() runs repeats + 1 times",
        """
def time_step(step, synchronize, clock, repeats):
    step()
    synchronize()
    start = clock()
    for _ in range(repeats):
        step()
    synchronize()
    return (clock() - start) / repeats
""",
    ),
    Wrong(
        "08",
        "ex7_swish",
        SIDE_EFFECT,
        "backward scales grad_output in place",
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
        return grad_output.mul_(s + ctx.beta * x * s * (1 - s)), None


def swish(x, beta):
    return Swish.apply(x, beta)
""",
    ),
    Wrong(
        "08",
        "ex7_swish",
        STATE,
        "beta stored on the class at the first call",
        """
class Swish(torch.autograd.Function):
    beta = None

    @staticmethod
    def forward(ctx, x, beta):
        if Swish.beta is None:
            Swish.beta = beta
        s = torch.sigmoid(Swish.beta * x)
        ctx.save_for_backward(x, s)
        return x * s

    @staticmethod
    def backward(ctx, grad_output):
        x, s = ctx.saved_tensors
        return grad_output * (s + Swish.beta * x * s * (1 - s)), None


def swish(x, beta):
    return Swish.apply(x, beta)
""",
    ),
    Wrong(
        "09",
        "ex1_checkpointed_forward",
        OBSERVABLE,
        "x detached first 'to start a clean graph': no gradient reaches x",
        """
from torch.utils.checkpoint import checkpoint


def checkpointed_forward(blocks, x):
    h = x.detach()
    for block in blocks:
        h = checkpoint(block, h, use_reentrant=False)
    return h
""",
    ),
    Wrong(
        "09",
        "ex1_checkpointed_forward",
        OBSERVABLE,
        "only blocks in training mode checkpointed",
        """
from torch.utils.checkpoint import checkpoint


def checkpointed_forward(blocks, x):
    h = x
    for block in blocks:
        h = checkpoint(block, h, use_reentrant=False) if block.training else block(h)
    return h
""",
    ),
    Wrong(
        "09",
        "ex1_checkpointed_forward",
        OBSERVABLE,
        "pairs of blocks checkpointed together to halve the overhead",
        """
from torch.utils.checkpoint import checkpoint


def checkpointed_forward(blocks, x):
    h = x
    mods = list(blocks)
    for i in range(0, len(mods), 2):
        pair = torch.nn.Sequential(*mods[i:i + 2])
        h = checkpoint(pair, h, use_reentrant=False)
    return h
""",
    ),
    Wrong(
        "09",
        "ex2_bf16_train_step",
        EDGE,
        "the target cast to bfloat16 as well",
        """
def bf16_train_step(model, loss_fn, x, target, optimizer):
    optimizer.zero_grad()
    with torch.autocast(device_type=x.device.type, dtype=torch.bfloat16):
        loss = loss_fn(model(x), target.to(torch.bfloat16))
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    ),
    Wrong(
        "09",
        "ex2_bf16_train_step",
        OBSERVABLE,
        "the loss rounded to bfloat16 before .item()",
        """
def bf16_train_step(model, loss_fn, x, target, optimizer):
    optimizer.zero_grad()
    with torch.autocast(device_type=x.device.type, dtype=torch.bfloat16):
        loss = loss_fn(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.to(torch.bfloat16).item()
""",
    ),
    Wrong(
        "09",
        "ex2_bf16_train_step",
        SIDE_EFFECT,
        "optimizer state cleared to avoid float32/bfloat16 mixing in momentum",
        """
def bf16_train_step(model, loss_fn, x, target, optimizer):
    optimizer.state.clear()
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
        "ex3_autocast_predict",
        EDGE,
        "returned in x's dtype, not float32",
        """
def autocast_predict(model, x):
    dtype = torch.bfloat16 if x.device.type == "cpu" else torch.float16
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        with torch.inference_mode(), torch.autocast(device_type=x.device.type, dtype=dtype):
            out = model(x)
    finally:
        for m, t in modes:
            m.training = t
    return out.to(x.dtype)
""",
    ),
    Wrong(
        "09",
        "ex3_autocast_predict",
        STATE,
        "modes restored in reverse order with train(flag): a parent overwrites its children",
        """
def autocast_predict(model, x):
    dtype = torch.bfloat16 if x.device.type == "cpu" else torch.float16
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    with torch.inference_mode(), torch.autocast(device_type=x.device.type, dtype=dtype):
        out = model(x)
    for m, t in reversed(modes):
        m.train(t)
    return out.float()
""",
    ),
    Wrong(
        "09",
        "ex4_per_sample_grads",
        OBSERVABLE,
        "the parameters passed as they are: the rows require grad",
        """
from torch.func import functional_call, grad, vmap


def per_sample_grads(model, loss_fn, x, y):
    params = dict(model.named_parameters())

    def one(p, xi, yi):
        return loss_fn(functional_call(model, p, (xi.unsqueeze(0),)), yi.unsqueeze(0))

    return vmap(grad(one), in_dims=(None, 0, 0))(params, x, y)
""",
    ),
    Wrong(
        "09",
        "ex4_per_sample_grads",
        EDGE,
        "a loop with autograd.grad, its rows stacked in float32",
        """
def per_sample_grads(model, loss_fn, x, y):
    names = [n for n, _ in model.named_parameters()]
    params = [p for _, p in model.named_parameters()]
    rows = {n: [] for n in names}
    with torch.enable_grad():
        for i in range(len(x)):
            copies = [p.detach().requires_grad_() for p in params]
            out = torch.func.functional_call(model, dict(zip(names, copies)), (x[i:i + 1],))
            gs = torch.autograd.grad(loss_fn(out, y[i:i + 1]), copies)
            for n, g in zip(names, gs):
                rows[n].append(g.float())
    return {n: torch.stack(r) for n, r in rows.items()}
""",
    ),
    # Lesson 01, red team r3 (lessons 01-03, second round)
    Wrong(
        "01",
        "ex1_product_grads",
        OBSERVABLE,
        "retain_grad on c, then the name c rebound to c ** 2: c.grad is the square's",
        """
def product_grads(a, b):
    a = a.detach().clone().requires_grad_()
    b = b.detach().clone().requires_grad_()
    c = a * b
    c.retain_grad()
    c = c**2
    c.sum().backward()
    return a.grad, b.grad, c.grad
""",
    ),
    Wrong(
        "01",
        "ex1_product_grads",
        ARGUMENT,
        "a trainable copy of a only: b is copied without requires_grad",
        """
def product_grads(a, b):
    a = a.detach().clone().requires_grad_()
    b = b.detach().clone()
    c = a * b
    c.retain_grad()
    (c**2).sum().backward()
    return a.grad, b.grad, c.grad
""",
    ),
    Wrong(  # r3: missed until OutputRequiresGrad drew a call under the caller's no_grad
        "01",
        "ex2_output_requires_grad",
        STATE,
        "also asks the caller's grad mode: the task asks about grad mode on",
        """
def output_requires_grad(*inputs):
    return torch.is_grad_enabled() and any(t.requires_grad for t in inputs)
""",
    ),
    Wrong(
        "01",
        "ex2_output_requires_grad",
        OBSERVABLE,
        "asks whether an input already holds a .grad",
        """
def output_requires_grad(*inputs):
    return any(t.grad is not None for t in inputs)
""",
    ),
    Wrong(
        "01",
        "ex2_output_requires_grad",
        OBSERVABLE,
        "asks whether an input has a grad_fn: a leaf that requires grad is missed",
        """
def output_requires_grad(*inputs):
    return any(t.grad_fn is not None for t in inputs)
""",
    ),
    Wrong(
        "01",
        "ex2_output_requires_grad",
        ARGUMENT,
        "looks at the first and the last input only",
        """
def output_requires_grad(*inputs):
    return bool(inputs[0].requires_grad or inputs[-1].requires_grad)
""",
    ),
    Wrong(
        "01",
        "ex3_make_trainable",
        OBSERVABLE,
        "multiplies by 1.0 to get floats: the result is not a leaf",
        """
def make_trainable(values, device):
    t = torch.tensor(values, device=device, dtype=torch.float32, requires_grad=True)
    return t * 1.0
""",
    ),
    Wrong(
        "01",
        "ex4_per_batch_grads",
        STATE,
        "differences of the accumulated gradient, starting from zeros",
        """
def per_batch_grads(w, batches):
    grads = []
    previous = torch.zeros_like(w)
    for x in batches:
        ((x @ w) ** 2).mean().backward()
        grads.append(w.grad.clone() - previous)
        previous = w.grad.clone()
    return grads
""",
    ),
    Wrong(
        "01",
        "ex4_per_batch_grads",
        EDGE,
        "copies each gradient as float32 for storage: a float64 w's copies lose precision",
        """
def per_batch_grads(w, batches):
    grads = []
    for x in batches:
        w.grad = None
        ((x @ w) ** 2).mean().backward()
        grads.append(w.grad.detach().float().clone())
    return grads
""",
    ),
    Wrong(
        "01",
        "ex5_backward_seed",
        OBSERVABLE,
        "the sign of the loss: 1 only while the loss is positive",
        """
def backward_seed(loss):
    return torch.sign(loss.detach())
""",
    ),
    Wrong(
        "01",
        "ex6_finetune_last_layer",
        STATE,
        "optimizer over every parameter, only the last layer's .grad emptied",
        """
def finetune_last_layer(model, x, target, lr):
    for p in model[:-1].parameters():
        p.requires_grad = False
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    model[-1].zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    ),
    Wrong(
        "01",
        "ex6_finetune_last_layer",
        EDGE,
        "freezes every parameter but the last one: the last weight is frozen too",
        """
def finetune_last_layer(model, x, target, lr):
    params = list(model.parameters())
    for p in params[:-1]:
        p.requires_grad_(False)
    optimizer = torch.optim.SGD([p for p in params if p.requires_grad], lr=lr)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    ),
    Wrong(
        "01",
        "ex6_finetune_last_layer",
        SIDE_EFFECT,
        "an optimizer over the last layer only, nothing frozen: the other layers' .grad grows",
        """
def finetune_last_layer(model, x, target, lr):
    optimizer = torch.optim.SGD(model[-1].parameters(), lr=lr)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    ),
    Wrong(
        "01",
        "ex7_to_device",
        EDGE,
        "converts each parameter's data: buffers keep their dtype",
        """
def to_device(batch, model, device, dtype):
    for p in model.parameters():
        p.data = p.data.to(device=device, dtype=dtype)
    return batch.to(device=device, dtype=dtype), model
""",
    ),
    # Lesson 02, red team r3
    Wrong(
        "02",
        "ex1_evaluate",
        OBSERVABLE,
        "softmax before cross_entropy: the loss is of probabilities",
        """
def evaluate(model, batches):
    losses, accuracies = [], []
    with torch.no_grad():
        for inputs, labels in batches:
            probs = model(inputs).softmax(dim=1)
            losses.append(torch.nn.functional.cross_entropy(probs, labels).item())
            accuracies.append((probs.argmax(dim=1) == labels).float().mean().item())
    return sum(losses) / len(losses), sum(accuracies) / len(accuracies)
""",
    ),
    Wrong(
        "02",
        "ex1_evaluate",
        SIDE_EFFECT,
        "eval() for the evaluation, never put back",
        """
def evaluate(model, batches):
    model.eval()
    total_loss = total_acc = 0.0
    with torch.no_grad():
        for inputs, labels in batches:
            logits = model(inputs)
            total_loss += torch.nn.functional.cross_entropy(logits, labels).item()
            total_acc += (logits.argmax(1) == labels).double().mean().item()
    return total_loss / len(batches), total_acc / len(batches)
""",
    ),
    Wrong(
        "02",
        "ex1_evaluate",
        OBSERVABLE,
        "loss weighted by batch size: a mean over samples, the smaller last batch counts less",
        """
def evaluate(model, batches):
    loss_sum = acc_sum = 0.0
    count = 0
    with torch.no_grad():
        for inputs, labels in batches:
            logits = model(inputs)
            n = len(labels)
            loss_sum += torch.nn.functional.cross_entropy(logits, labels).item() * n
            acc_sum += (logits.argmax(1) == labels).sum().item()
            count += n
    return loss_sum / count, acc_sum / count
""",
    ),
    Wrong(  # r3: missed until Watched logged saved-tensor hooks left installed
        "02",
        "ex2_count_saved_bytes",
        SIDE_EFFECT,
        "enters the hooks' context by hand and never leaves it",
        """
def count_saved_bytes(fn, *args):
    sizes = []

    def pack(saved):
        sizes.append(saved.element_size() * saved.nelement())
        return saved.detach()

    torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t).__enter__()
    result = fn(*args)
    return result, sum(sizes)
""",
    ),
    Wrong(
        "02",
        "ex2_count_saved_bytes",
        EDGE,
        "counts floating-point tensors only: saved integer indices are skipped",
        """
def count_saved_bytes(fn, *args):
    total = 0

    def pack(saved):
        nonlocal total
        if saved.is_floating_point():
            total += saved.element_size() * saved.nelement()
        return saved.detach()

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        result = fn(*args)
    return result, total
""",
    ),
    Wrong(
        "02",
        "ex2_count_saved_bytes",
        OBSERVABLE,
        "packs the saved tensors in float16 to save memory: gradients change",
        """
def count_saved_bytes(fn, *args):
    total = 0

    def pack(saved):
        nonlocal total
        total += saved.element_size() * saved.nelement()
        return saved.detach().half(), saved.dtype

    def unpack(packed):
        tensor, dtype = packed
        return tensor.to(dtype)

    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        result = fn(*args)
    return result, total
""",
    ),
    Wrong(
        "02",
        "ex3_run_step",
        STATE,
        "optimizer.step() outside the if: in evaluation the stale .grad moves the parameters",
        """
def run_step(model, inputs, labels, optimizer, train):
    with torch.set_grad_enabled(train):
        loss = torch.nn.functional.cross_entropy(model(inputs), labels)
        if train:
            optimizer.zero_grad()
            loss.backward()
        optimizer.step()
    return loss.item()
""",
    ),
    Wrong(
        "02",
        "ex4_frozen_features",
        OBSERVABLE,
        "requires_grad_() on the features so that the head's backward works",
        """
def frozen_features(backbone, x):
    with torch.no_grad():
        features = backbone(x)
    return features.requires_grad_()
""",
    ),
    Wrong(
        "02",
        "ex4_frozen_features",
        EDGE,
        "detached parameters through functional_call: a graph is still recorded for x",
        """
def frozen_features(backbone, x):
    params = {name: p.detach() for name, p in backbone.named_parameters()}
    return torch.func.functional_call(backbone, params, (x,))
""",
    ),
    Wrong(
        "02",
        "ex4_frozen_features",
        SIDE_EFFECT,
        "no_grad and eval(), eval never undone",
        """
def frozen_features(backbone, x):
    backbone.eval()
    with torch.no_grad():
        return backbone(x)
""",
    ),
    Wrong(
        "02",
        "ex5_input_saliency",
        EDGE,
        "copies x through tolist(): a float64 x comes back float32",
        """
def input_saliency(model, x):
    with torch.inference_mode(False), torch.enable_grad():
        leaf = torch.tensor(x.tolist(), device=x.device, requires_grad=True)
        (grad,) = torch.autograd.grad(model(leaf).sum(), leaf)
    return grad
""",
    ),
    Wrong(
        "02",
        "ex5_input_saliency",
        OBSERVABLE,
        "the gradient of the mean, not of the sum",
        """
def input_saliency(model, x):
    with torch.inference_mode(False), torch.enable_grad():
        x = x.clone().requires_grad_()
        (grad,) = torch.autograd.grad(model(x).mean(), x)
    return grad
""",
    ),
    Wrong(
        "02",
        "ex2_count_saved_bytes",
        OBSERVABLE,
        "counts in unpack: unpack runs only when backward reads the tensor",
        """
def count_saved_bytes(fn, *args):
    total = 0

    def unpack(saved):
        nonlocal total
        total += saved.element_size() * saved.nelement()
        return saved

    with torch.autograd.graph.saved_tensors_hooks(lambda t: t.detach(), unpack):
        result = fn(*args)
    return result, total
""",
    ),
    Wrong(
        "02",
        "ex2_count_saved_bytes",
        OBSERVABLE,
        "counts elements, not bytes",
        """
def count_saved_bytes(fn, *args):
    counts = []

    def pack(saved):
        counts.append(saved.numel())
        return saved.detach()

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        result = fn(*args)
    return result, sum(counts)
""",
    ),
    # Lesson 03, red team r3
    Wrong(
        "03",
        "ex1_dropout_by_hand",
        OBSERVABLE,
        "multiplies the kept values by 1 - p instead of dividing",
        """
def dropout_by_hand(x, p, u, training):
    if not training:
        return x
    return x * (u >= p) * (1 - p)
""",
    ),
    Wrong(
        "03",
        "ex1_dropout_by_hand",
        OBSERVABLE,
        "old-style dropout: evaluation scales by 1 - p",
        """
def dropout_by_hand(x, p, u, training):
    if training:
        return x * (u >= p)
    return x * (1 - p)
""",
    ),
    Wrong(
        "03",
        "ex1_dropout_by_hand",
        EDGE,
        "drops where u <= p: a u equal to p is dropped too",
        """
def dropout_by_hand(x, p, u, training):
    if not training:
        return x
    return torch.where(u > p, x / (1 - p), torch.zeros_like(x))
""",
    ),
    Wrong(
        "03",
        "ex2_eval_grads",
        OBSERVABLE,
        "only the Dropout layers switched to evaluation: BatchNorm uses and moves batch statistics",
        """
def eval_grads(model, x, target):
    dropouts = [m for m in model.modules() if isinstance(m, torch.nn.Dropout)]
    modes = [m.training for m in dropouts]
    for m in dropouts:
        m.eval()
    model.zero_grad()
    torch.nn.functional.mse_loss(model(x), target).backward()
    for m, mode in zip(dropouts, modes):
        m.train(mode)
    return {name: p.grad.clone() for name, p in model.named_parameters()}
""",
    ),
    Wrong(
        "03",
        "ex2_eval_grads",
        STATE,
        "reads the mode after eval(): the model always leaves in evaluation mode",
        """
def eval_grads(model, x, target):
    model.eval()
    was_training = model.training
    model.zero_grad()
    torch.nn.functional.mse_loss(model(x), target).backward()
    model.train(was_training)
    return {name: p.grad.clone() for name, p in model.named_parameters()}
""",
    ),
    Wrong(
        "03",
        "ex2_eval_grads",
        EDGE,
        "zero_() on every .grad: a parameter without one yet raises",
        """
def eval_grads(model, x, target):
    was_training = model.training
    model.eval()
    for p in model.parameters():
        p.grad.zero_()
    torch.nn.functional.mse_loss(model(x), target).backward()
    model.train(was_training)
    return {name: p.grad.clone() for name, p in model.named_parameters()}
""",
    ),
    Wrong(
        "03",
        "ex3_validate",
        OBSERVABLE,
        "only BatchNorm switched to evaluation: Dropout stays active",
        """
def validate(model, batches):
    norms = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm1d)]
    modes = [m.training for m in norms]
    for m in norms:
        m.eval()
    with torch.no_grad():
        losses = [torch.nn.functional.mse_loss(model(x), y).item() for x, y in batches]
    for m, mode in zip(norms, modes):
        m.train(mode)
    return sum(losses) / len(losses)
""",
    ),
    Wrong(
        "03",
        "ex3_validate",
        EDGE,
        "skips one-sample batches, as if BatchNorm could not take them",
        """
def validate(model, batches):
    was_training = model.training
    model.eval()
    with torch.no_grad():
        losses = [
            torch.nn.functional.mse_loss(model(x), y).item() for x, y in batches if len(x) > 1
        ]
    model.train(was_training)
    return sum(losses) / len(losses)
""",
    ),
    Wrong(
        "03",
        "ex4_finetune_head",
        STATE,
        "one optimizer over backbone and head, only the head's .grad emptied",
        """
def finetune_head(backbone, head, x, target, lr):
    backbone.eval()
    head.train()
    params = list(backbone.parameters()) + list(head.parameters())
    optimizer = torch.optim.SGD(params, lr=lr)
    head.zero_grad()
    with torch.no_grad():
        features = backbone(x)
    loss = torch.nn.functional.mse_loss(head(features), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    ),
    Wrong(
        "03",
        "ex4_finetune_head",
        SIDE_EFFECT,
        "trains a deep copy of the head: the caller's head is never updated",
        """
import copy


def finetune_head(backbone, head, x, target, lr):
    backbone.eval()
    head = copy.deepcopy(head).train()
    optimizer = torch.optim.SGD(head.parameters(), lr=lr)
    optimizer.zero_grad()
    with torch.no_grad():
        features = backbone(x)
    loss = torch.nn.functional.mse_loss(head(features), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    ),
    Wrong(
        "03",
        "ex5_mc_dropout_predict",
        EDGE,
        "switches on the Dropout among the model's children only: a nested one stays off",
        """
def mc_dropout_predict(model, x, samples):
    modes = [m.training for m in model.modules()]
    model.eval()
    for m in model.children():
        if isinstance(m, torch.nn.Dropout):
            m.train()
    with torch.no_grad():
        preds = torch.stack([model(x) for _ in range(samples)])
    for m, mode in zip(model.modules(), modes):
        m.train(mode)
    return preds.mean(dim=0), preds.std(dim=0)
""",
    ),
    Wrong(
        "03",
        "ex5_mc_dropout_predict",
        OBSERVABLE,
        "population std (correction=0) instead of preds.std(dim=0)",
        """
def mc_dropout_predict(model, x, samples):
    modes = [m.training for m in model.modules()]
    model.eval()
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.train()
    with torch.no_grad():
        preds = torch.stack([model(x) for _ in range(samples)])
    for m, mode in zip(model.modules(), modes):
        m.train(mode)
    return preds.mean(dim=0), preds.std(dim=0, correction=0)
""",
    ),
    Wrong(
        "03",
        "ex3_validate",
        OBSERVABLE,
        "losses summed per sample and divided by the number of samples",
        """
def validate(model, batches):
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    try:
        with torch.no_grad():
            for x, y in batches:
                summed = torch.nn.functional.mse_loss(model(x), y, reduction="sum")
                total += summed.item() / y[0].numel()
                count += len(x)
    finally:
        model.train(was_training)
    return total / count
""",
    ),
    # Lessons 01-04, red team r4 (state across calls, edges the prompt allows, closures)
    Wrong(
        "01",
        "ex1_product_grads",
        EDGE,
        "y as a Python sum over c's elements: an empty a gives the int 0, which has no backward",
        """
def product_grads(a, b):
    a = a.detach().clone().requires_grad_()
    b = b.detach().clone().requires_grad_()
    c = a * b
    c.retain_grad()
    y = sum(ci ** 2 for ci in c)
    y.backward()
    return a.grad, b.grad, c.grad
""",
    ),
    Wrong(
        "01",
        "ex1_product_grads",
        STATE,
        "leaf copies kept per shape and dtype and refilled each call: their .grad accumulates",
        """
_LEAVES = {}


def product_grads(a, b):
    key = (tuple(a.shape), a.dtype, str(a.device))
    if key not in _LEAVES:
        _LEAVES[key] = (torch.zeros_like(a).requires_grad_(), torch.zeros_like(b).requires_grad_())
    la, lb = _LEAVES[key]
    with torch.no_grad():
        la.copy_(a)
        lb.copy_(b)
    c = la * lb
    c.retain_grad()
    (c**2).sum().backward()
    return la.grad, lb.grad, c.grad
""",
    ),
    Wrong(
        "01",
        "ex1_product_grads",
        SIDE_EFFECT,
        "anomaly detection switched on to debug the graph, never switched off",
        """
def product_grads(a, b):
    torch.autograd.set_detect_anomaly(True)
    a = a.detach().clone().requires_grad_()
    b = b.detach().clone().requires_grad_()
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
        "one leaf per distinct tensor: product_grads(a, a) gets the gradient of a ** 4 twice",
        """
def product_grads(a, b):
    leaves = {}
    def leaf(t):
        if id(t) not in leaves:
            leaves[id(t)] = t.detach().clone().requires_grad_()
        return leaves[id(t)]
    la, lb = leaf(a), leaf(b)
    c = la * lb
    c.retain_grad()
    (c**2).sum().backward()
    return la.grad, lb.grad, c.grad
""",
    ),
    Wrong(
        "01",
        "ex1_product_grads",
        OBSERVABLE,
        "the gradients returned in a list, not the tuple asked for",
        """
def product_grads(a, b):
    a = a.detach().clone().requires_grad_()
    b = b.detach().clone().requires_grad_()
    c = a * b
    c.retain_grad()
    (c**2).sum().backward()
    return [a.grad, b.grad, c.grad]
""",
    ),
    Wrong(
        "01",
        "ex2_output_requires_grad",
        EDGE,
        "a Parameter or a grad_fn decides: a leaf made with requires_grad=True is missed",
        """
def output_requires_grad(*inputs):
    return any(
        (isinstance(t, torch.nn.Parameter) and t.requires_grad) or t.grad_fn is not None
        for t in inputs
    )
""",
    ),
    Wrong(
        "01",
        "ex2_output_requires_grad",
        EDGE,
        "0-dim inputs skipped as 'just numbers': a 0-dim tensor that requires grad is missed",
        """
def output_requires_grad(*inputs):
    return any(t.requires_grad for t in inputs if t.dim() > 0)
""",
    ),
    Wrong(
        "01",
        "ex2_output_requires_grad",
        EDGE,
        "empty tensors skipped: an empty tensor that requires grad is missed",
        """
def output_requires_grad(*inputs):
    return any(t.requires_grad for t in inputs if t.numel() > 0)
""",
    ),
    Wrong(
        "01",
        "ex2_output_requires_grad",
        STATE,
        "answers memoised by the inputs' ids: a flag the caller changes later is not seen",
        """
_ANSWERS = {}


def output_requires_grad(*inputs):
    key = tuple(id(t) for t in inputs)
    if key not in _ANSWERS:
        _ANSWERS[key] = any(t.requires_grad for t in inputs)
    return _ANSWERS[key]
""",
    ),
    Wrong(
        "01",
        "ex3_make_trainable",
        EDGE,
        "through torch.IntTensor: integers beyond int32 overflow",
        """
def make_trainable(values, device):
    return torch.IntTensor(values).to(device=device, dtype=torch.float32).requires_grad_()
""",
    ),
    Wrong(
        "01",
        "ex3_make_trainable",
        SIDE_EFFECT,
        "set_default_device(device) so the tensor is made there, never set back",
        """
def make_trainable(values, device):
    torch.set_default_device(device)
    return torch.tensor(values, dtype=torch.float32, requires_grad=True)
""",
    ),
    Wrong(
        "01",
        "ex3_make_trainable",
        STATE,
        "tensors memoised by repr(values): two calls with equal lists share one tensor",
        """
_MADE = {}


def make_trainable(values, device):
    key = (repr(values), str(device))
    if key not in _MADE:
        _MADE[key] = torch.tensor(values, dtype=torch.float32, device=device, requires_grad=True)
    return _MADE[key]
""",
    ),
    Wrong(
        "01",
        "ex3_make_trainable",
        EDGE,
        "the values' nesting read from the first item only: an empty list or a 1-d list breaks",
        """
def make_trainable(values, device):
    if isinstance(values[0], list):
        rows = [list(map(float, row)) for row in values]
    else:
        rows = [float(v) for v in values]
    return torch.tensor(rows, dtype=torch.float32, device=device, requires_grad=True)
""",
    ),
    Wrong(
        "01",
        "ex4_per_batch_grads",
        OBSERVABLE,
        "each gradient kept as w.grad.detach() (shared): the next batch's zero_() erases it",
        """
def per_batch_grads(w, batches):
    grads = []
    for x in batches:
        if w.grad is not None:
            w.grad.zero_()
        ((x @ w) ** 2).mean().backward()
        grads.append(w.grad.detach())
    return grads
""",
    ),
    Wrong(
        "01",
        "ex4_per_batch_grads",
        EDGE,
        "the mean taken as sum / the first batch's row count: a shorter last batch is scaled wrong",
        """
def per_batch_grads(w, batches):
    n = batches[0].shape[0]
    grads = []
    for x in batches:
        w.grad = None
        (((x @ w) ** 2).sum() / n).backward()
        grads.append(w.grad.clone())
    return grads
""",
    ),
    Wrong(
        "01",
        "ex4_per_batch_grads",
        OBSERVABLE,
        "the copies returned as a tuple, not the list asked for",
        """
def per_batch_grads(w, batches):
    grads = []
    for x in batches:
        w.grad = None
        ((x @ w) ** 2).mean().backward()
        grads.append(w.grad.clone())
    return tuple(grads)
""",
    ),
    Wrong(
        "01",
        "ex4_per_batch_grads",
        SIDE_EFFECT,
        "batches consumed with pop(0), emptying the caller's list",
        """
def per_batch_grads(w, batches):
    grads = []
    while batches:
        x = batches.pop(0)
        w.grad = None
        ((x @ w) ** 2).mean().backward()
        grads.append(w.grad.clone())
    return grads
""",
    ),
    Wrong(
        "01",
        "ex4_per_batch_grads",
        STATE,
        "gradients memoised by the batch's id: a batch changed in place keeps its old gradient",
        """
_SEEN = {}


def per_batch_grads(w, batches):
    grads = []
    for x in batches:
        if id(x) not in _SEEN:
            w.grad = None
            ((x @ w) ** 2).mean().backward()
            _SEEN[id(x)] = w.grad.clone()
        grads.append(_SEEN[id(x)].clone())
    return grads
""",
    ),
    Wrong(
        "01",
        "ex5_backward_seed",
        EDGE,
        "loss * 0 + 1: an inf or nan loss gives a nan seed",
        """
def backward_seed(loss):
    return loss.detach() * 0 + 1
""",
    ),
    Wrong(
        "01",
        "ex5_backward_seed",
        SIDE_EFFECT,
        "retain_grad() on the caller's loss: its backward then fills loss.grad",
        """
def backward_seed(loss):
    loss.retain_grad()
    return torch.ones_like(loss)
""",
    ),
    Wrong(
        "01",
        "ex5_backward_seed",
        SIDE_EFFECT,
        "detach_() on the caller's loss to read it: its backward has nothing left to do",
        """
def backward_seed(loss):
    loss.detach_()
    return torch.ones_like(loss)
""",
    ),
    Wrong(
        "01",
        "ex5_backward_seed",
        EDGE,
        "1 computed as (loss + 1) - loss: a large loss rounds it to 0",
        """
def backward_seed(loss):
    value = loss.detach()
    return (value + 1) - value
""",
    ),
    Wrong(
        "01",
        "ex6_finetune_last_layer",
        EDGE,
        "the optimizer built over [weight, bias]: a last Linear without bias gives None to SGD",
        """
def finetune_last_layer(model, x, target, lr):
    model[:-1].requires_grad_(False)
    last = model[-1]
    optimizer = torch.optim.SGD([last.weight, last.bias], lr=lr)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    ),
    Wrong(
        "01",
        "ex6_finetune_last_layer",
        STATE,
        "last layer's stale .grad not cleared: the optimizer over it alone never zeroes it",
        """
def finetune_last_layer(model, x, target, lr):
    model[:-1].requires_grad_(False)
    optimizer = torch.optim.SGD(model[-1].parameters(), lr=lr)
    loss = torch.nn.functional.mse_loss(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    ),
    Wrong(
        "01",
        "ex6_finetune_last_layer",
        ARGUMENT,
        "SGD with Nesterov momentum 'for a smoother fine-tune': a first step 1.9 times too long",
        """
def finetune_last_layer(model, x, target, lr):
    model[:-1].requires_grad_(False)
    optimizer = torch.optim.SGD(model[-1].parameters(), lr=lr, momentum=0.9, nesterov=True)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    ),
    Wrong(
        "01",
        "ex6_finetune_last_layer",
        OBSERVABLE,
        "summed squared error instead of mse_loss's mean",
        """
def finetune_last_layer(model, x, target, lr):
    model[:-1].requires_grad_(False)
    optimizer = torch.optim.SGD(model[-1].parameters(), lr=lr)
    optimizer.zero_grad()
    loss = ((model(x) - target) ** 2).sum()
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    ),
    Wrong(
        "01",
        "ex7_to_device",
        OBSERVABLE,
        "Module.type(dtype): integer buffers (BatchNorm's num_batches_tracked) become floats too",
        """
def to_device(batch, model, device, dtype):
    model.to(device).type(dtype)
    return batch.to(device, dtype), model
""",
    ),
    Wrong(
        "01",
        "ex7_to_device",
        EDGE,
        "skips the conversion when the first parameter is already there: a mixed model stays mixed",
        """
def to_device(batch, model, device, dtype):
    first = next(model.parameters())
    if first.device != torch.device(device) or first.dtype != dtype:
        model.to(device, dtype)
    return batch.to(device, dtype), model
""",
    ),
    Wrong(
        "01",
        "ex7_to_device",
        SIDE_EFFECT,
        "set_default_dtype(dtype) so later tensors match, never set back",
        """
def to_device(batch, model, device, dtype):
    if dtype in (torch.float32, torch.float64):
        torch.set_default_dtype(dtype)
    model.to(device=device, dtype=dtype)
    return batch.to(device=device, dtype=dtype), model
""",
    ),
    Wrong(
        "01",
        "ex7_to_device",
        ARGUMENT,
        "half() for float16 and float() for anything else: float64 asked, float32 made",
        """
def to_device(batch, model, device, dtype):
    model = model.half() if dtype == torch.float16 else model.float()
    model.to(device)
    return batch.to(device, dtype), model
""",
    ),
    Wrong(
        "02",
        "ex1_evaluate",
        OBSERVABLE,
        "mean loss and accuracy rounded to 4 decimals for the report",
        """
def evaluate(model, batches):
    losses, accs = [], []
    with torch.no_grad():
        for inputs, labels in batches:
            logits = model(inputs)
            losses.append(torch.nn.functional.cross_entropy(logits, labels).item())
            accs.append((logits.argmax(dim=1) == labels).float().mean().item())
    return round(sum(losses) / len(losses), 4), round(sum(accs) / len(accs), 4)
""",
    ),
    Wrong(
        "02",
        "ex1_evaluate",
        STATE,
        "results memoised per model and batch count: a model trained since gets old numbers",
        """
_RESULTS = {}


def evaluate(model, batches):
    key = (id(model), len(batches))
    if key not in _RESULTS:
        total_loss = total_acc = 0.0
        with torch.no_grad():
            for inputs, labels in batches:
                logits = model(inputs)
                total_loss += torch.nn.functional.cross_entropy(logits, labels).item()
                total_acc += (logits.argmax(1) == labels).float().mean().item()
        _RESULTS[key] = (total_loss / len(batches), total_acc / len(batches))
    return _RESULTS[key]
""",
    ),
    Wrong(
        "02",
        "ex1_evaluate",
        OBSERVABLE,
        "the pair returned as a list instead of a tuple",
        """
def evaluate(model, batches):
    total_loss = total_acc = 0.0
    with torch.no_grad():
        for inputs, labels in batches:
            logits = model(inputs)
            total_loss += torch.nn.functional.cross_entropy(logits, labels).item()
            total_acc += (logits.argmax(1) == labels).float().mean().item()
    return [total_loss / len(batches), total_acc / len(batches)]
""",
    ),
    Wrong(
        "02",
        "ex2_count_saved_bytes",
        OBSERVABLE,
        "the total kept in a 0-dim tensor: nbytes is a tensor, not an int",
        """
def count_saved_bytes(fn, *args):
    total = torch.zeros((), dtype=torch.int64)

    def pack(saved):
        total.add_(saved.element_size() * saved.nelement())
        return saved.detach()

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda saved: saved):
        result = fn(*args)
    return result, total
""",
    ),
    Wrong(
        "02",
        "ex2_count_saved_bytes",
        STATE,
        "the count kept in a module-level variable that only grows",
        """
TOTAL = 0


def _pack(saved):
    global TOTAL
    TOTAL += saved.element_size() * saved.nelement()
    return saved.detach()


def count_saved_bytes(fn, *args):
    with torch.autograd.graph.saved_tensors_hooks(_pack, lambda saved: saved):
        result = fn(*args)
    return result, TOTAL
""",
    ),
    Wrong(
        "02",
        "ex2_count_saved_bytes",
        EDGE,
        "sizes read from sys.getsizeof of each saved tensor's numpy copy",
        """
import sys


def count_saved_bytes(fn, *args):
    sizes = []

    def pack(saved):
        sizes.append(saved.detach().cpu().numpy().nbytes)
        return saved.detach()

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda saved: saved):
        result = fn(*args)
    return result, int(sum(sizes))
""",
    ),
    Wrong(
        "02",
        "ex2_count_saved_bytes",
        SIDE_EFFECT,
        "anomaly detection switched on 'to see what is saved', never switched off",
        """
def count_saved_bytes(fn, *args):
    torch.autograd.set_detect_anomaly(True)
    total = 0

    def pack(saved):
        nonlocal total
        total += saved.element_size() * saved.nelement()
        return saved.detach()

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda saved: saved):
        result = fn(*args)
    return result, total
""",
    ),
    Wrong(
        "02",
        "ex3_run_step",
        ARGUMENT,
        "gradients clipped to norm 1 'for stability' before the step",
        """
def run_step(model, inputs, labels, optimizer, train):
    with torch.set_grad_enabled(train):
        loss = torch.nn.functional.cross_entropy(model(inputs), labels)
        if train:
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
    return loss.item()
""",
    ),
    Wrong(
        "02",
        "ex3_run_step",
        STATE,
        "a new optimizer of the same class over the same groups: the caller's momentum is lost",
        """
def run_step(model, inputs, labels, optimizer, train):
    with torch.set_grad_enabled(train):
        loss = torch.nn.functional.cross_entropy(model(inputs), labels)
        if train:
            fresh = type(optimizer)(optimizer.param_groups)
            fresh.zero_grad()
            loss.backward()
            fresh.step()
    return loss.item()
""",
    ),
    Wrong(
        "02",
        "ex3_run_step",
        SIDE_EFFECT,
        "a learning-rate warm-up written into the caller's param_groups",
        """
def run_step(model, inputs, labels, optimizer, train):
    with torch.set_grad_enabled(train):
        loss = torch.nn.functional.cross_entropy(model(inputs), labels)
        if train:
            for group in optimizer.param_groups:
                group["lr"] = group["lr"] * 0.5
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return loss.item()
""",
    ),
    Wrong(
        "02",
        "ex3_run_step",
        OBSERVABLE,
        "the loss read after the step by a second forward pass",
        """
def run_step(model, inputs, labels, optimizer, train):
    with torch.set_grad_enabled(train):
        loss = torch.nn.functional.cross_entropy(model(inputs), labels)
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            with torch.no_grad():
                loss = torch.nn.functional.cross_entropy(model(inputs), labels)
    return loss.item()
""",
    ),
    Wrong(
        "02",
        "ex3_run_step",
        EDGE,
        "set_grad_enabled(train) inside try, restored with set_grad_enabled(True) in finally",
        """
def run_step(model, inputs, labels, optimizer, train):
    try:
        torch.set_grad_enabled(train)
        loss = torch.nn.functional.cross_entropy(model(inputs), labels)
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return loss.item()
    finally:
        torch.set_grad_enabled(True)
""",
    ),
    Wrong(
        "02",
        "ex4_frozen_features",
        OBSERVABLE,
        "eval() for the features, mode restored: a training backbone's Dropout is switched off",
        """
def frozen_features(backbone, x):
    was = backbone.training
    backbone.eval()
    try:
        with torch.no_grad():
            return backbone(x)
    finally:
        backbone.train(was)
""",
    ),
    Wrong(
        "02",
        "ex4_frozen_features",
        STATE,
        "features memoised by the input's id: an x changed in place gets stale features",
        """
_FEATURES = {}


def frozen_features(backbone, x):
    key = (id(backbone), id(x))
    if key not in _FEATURES:
        with torch.no_grad():
            _FEATURES[key] = backbone(x)
    return _FEATURES[key]
""",
    ),
    Wrong(
        "02",
        "ex4_frozen_features",
        EDGE,
        "features stored in float16 to halve their memory",
        """
def frozen_features(backbone, x):
    with torch.no_grad():
        return backbone(x).half()
""",
    ),
    Wrong(
        "02",
        "ex4_frozen_features",
        SIDE_EFFECT,
        "x detached in place before the forward pass",
        """
def frozen_features(backbone, x):
    x.detach_()
    with torch.no_grad():
        return backbone(x)
""",
    ),
    Wrong(
        "02",
        "ex5_input_saliency",
        OBSERVABLE,
        "the map normalised to [0, 1] for display",
        """
def input_saliency(model, x):
    with torch.inference_mode(False), torch.enable_grad():
        xc = x.clone().requires_grad_()
        (g,) = torch.autograd.grad(model(xc).sum(), xc)
    return g / g.abs().max()
""",
    ),
    Wrong(
        "02",
        "ex5_input_saliency",
        SIDE_EFFECT,
        "the model's parameters frozen for the saliency and set back to True after",
        """
def input_saliency(model, x):
    with torch.inference_mode(False), torch.enable_grad():
        model.requires_grad_(False)
        xc = x.clone().requires_grad_()
        model(xc).sum().backward()
        model.requires_grad_(True)
        return xc.grad
""",
    ),
    Wrong(
        "02",
        "ex5_input_saliency",
        STATE,
        "a deep copy of the model made once and kept: a model trained since is not seen",
        """
import copy

_COPIES = {}


def input_saliency(model, x):
    if id(model) not in _COPIES:
        with torch.inference_mode(False):
            _COPIES[id(model)] = copy.deepcopy(model)
    twin = _COPIES[id(model)]
    with torch.inference_mode(False), torch.enable_grad():
        xc = x.clone().requires_grad_()
        (g,) = torch.autograd.grad(twin(xc).sum(), xc)
    return g
""",
    ),
    Wrong(
        "02",
        "ex1_evaluate",
        EDGE,
        "the last batch skipped when it is smaller than the first (drop_last)",
        """
def evaluate(model, batches):
    size = len(batches[0][1])
    losses, accs = [], []
    with torch.no_grad():
        for inputs, labels in batches:
            if len(labels) < size:
                continue
            logits = model(inputs)
            losses.append(torch.nn.functional.cross_entropy(logits, labels).item())
            accs.append((logits.argmax(1) == labels).float().mean().item())
    return sum(losses) / len(losses), sum(accs) / len(accs)
""",
    ),
    Wrong(
        "03",
        "ex1_dropout_by_hand",
        OBSERVABLE,
        "survivors scaled by the fraction actually kept, not by 1 - p",
        """
def dropout_by_hand(x, p, u, training):
    if not training:
        return x
    keep = (u >= p).to(x.dtype)
    return x * keep / keep.mean()
""",
    ),
    Wrong(
        "03",
        "ex1_dropout_by_hand",
        SIDE_EFFECT,
        "u shifted by p in place, then compared with 0",
        """
def dropout_by_hand(x, p, u, training):
    if not training:
        return x
    u.sub_(p)
    return torch.where(u >= 0, x / (1 - p), torch.zeros_like(x))
""",
    ),
    Wrong(
        "03",
        "ex1_dropout_by_hand",
        STATE,
        "the mask memoised per shape: later calls reuse the first call's u",
        """
_MASKS = {}


def dropout_by_hand(x, p, u, training):
    if not training:
        return x
    key = (tuple(x.shape), p)
    if key not in _MASKS:
        _MASKS[key] = u >= p
    return torch.where(_MASKS[key], x / (1 - p), torch.zeros_like(x))
""",
    ),
    Wrong(
        "03",
        "ex1_dropout_by_hand",
        EDGE,
        "the mask cast to float32: float64 x comes back float32",
        """
def dropout_by_hand(x, p, u, training):
    if not training:
        return x
    mask = (u >= p).to(torch.float32)
    return (x * mask / (1 - p)).to(torch.float32)
""",
    ),
    Wrong(
        "03",
        "ex2_eval_grads",
        OBSERVABLE,
        "BatchNorm's momentum set to 0 instead of eval(): batch statistics are used",
        """
def eval_grads(model, x, target):
    saved = {}
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm1d):
            saved[m] = m.momentum
            m.momentum = 0.0
        elif isinstance(m, torch.nn.Dropout):
            saved[m] = m.training
            m.eval()
    model.zero_grad()
    torch.nn.functional.mse_loss(model(x), target).backward()
    for m, value in saved.items():
        if isinstance(m, torch.nn.BatchNorm1d):
            m.momentum = value
        else:
            m.train(value)
    return {name: p.grad.clone() for name, p in model.named_parameters()}
""",
    ),
    Wrong(
        "03",
        "ex2_eval_grads",
        EDGE,
        "the gradients kept as float32 copies 'to save memory'",
        """
def eval_grads(model, x, target):
    modes = [m.training for m in model.modules()]
    model.eval()
    model.zero_grad()
    torch.nn.functional.mse_loss(model(x), target).backward()
    for m, mode in zip(model.modules(), modes):
        m.train(mode)
    return {name: p.grad.float() for name, p in model.named_parameters()}
""",
    ),
    Wrong(
        "03",
        "ex3_validate",
        OBSERVABLE,
        "BatchNorm's momentum 0 in training mode: batch statistics used, Dropout active",
        """
def validate(model, batches):
    bns = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm1d)]
    momenta = [m.momentum for m in bns]
    for m in bns:
        m.momentum = 0.0
    with torch.no_grad():
        losses = [torch.nn.functional.mse_loss(model(x), y).item() for x, y in batches]
    for m, momentum in zip(bns, momenta):
        m.momentum = momentum
    return sum(losses) / len(losses)
""",
    ),
    Wrong(
        "03",
        "ex3_validate",
        STATE,
        "the validation loss memoised per model: a model trained since gets the old value",
        """
_LOSSES = {}


def validate(model, batches):
    if id(model) not in _LOSSES:
        modes = [m.training for m in model.modules()]
        model.eval()
        with torch.no_grad():
            losses = [torch.nn.functional.mse_loss(model(x), y).item() for x, y in batches]
        for m, mode in zip(model.modules(), modes):
            m.train(mode)
        _LOSSES[id(model)] = sum(losses) / len(losses)
    return _LOSSES[id(model)]
""",
    ),
    Wrong(
        "03",
        "ex3_validate",
        EDGE,
        "last batch dropped when it is smaller than the first (drop_last)",
        """
def validate(model, batches):
    modes = [m.training for m in model.modules()]
    model.eval()
    size = len(batches[0][0])
    with torch.no_grad():
        losses = [
            torch.nn.functional.mse_loss(model(x), y).item() for x, y in batches if len(x) == size
        ]
    for m, mode in zip(model.modules(), modes):
        m.train(mode)
    return sum(losses) / len(losses)
""",
    ),
    Wrong(
        "03",
        "ex4_finetune_head",
        OBSERVABLE,
        "BatchNorm frozen with momentum 0 in training mode: batch statistics still used",
        """
def finetune_head(backbone, head, x, target, lr):
    backbone.train()
    for m in backbone.modules():
        if isinstance(m, torch.nn.BatchNorm1d):
            m.momentum = 0.0
    head.train()
    with torch.no_grad():
        features = backbone(x)
    optimizer = torch.optim.SGD(head.parameters(), lr=lr)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(head(features), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    ),
    Wrong(
        "03",
        "ex4_finetune_head",
        EDGE,
        "only the first BatchNorm switched to eval(): deeper blocks use batch statistics",
        """
def finetune_head(backbone, head, x, target, lr):
    next(m for m in backbone.modules() if isinstance(m, torch.nn.BatchNorm1d)).eval()
    head.train()
    with torch.no_grad():
        features = backbone(x)
    optimizer = torch.optim.SGD(head.parameters(), lr=lr)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(head(features), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    ),
    Wrong(
        "03",
        "ex4_finetune_head",
        ARGUMENT,
        "SGD with Nesterov momentum: the first step is 1.9 times the plain one",
        """
def finetune_head(backbone, head, x, target, lr):
    backbone.eval()
    head.train()
    with torch.no_grad():
        features = backbone(x)
    optimizer = torch.optim.SGD(head.parameters(), lr=lr, momentum=0.9, nesterov=True)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(head(features), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    ),
    Wrong(
        "03",
        "ex5_mc_dropout_predict",
        SIDE_EFFECT,
        "modes saved and restored for the direct children only: a nested module's mode is lost",
        """
def mc_dropout_predict(model, x, samples):
    modes = [m.training for m in model.children()]
    model.eval()
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.train()
    with torch.no_grad():
        preds = torch.stack([model(x) for _ in range(samples)])
    for m, mode in zip(model.children(), modes):
        m.train(mode)
    model.train(any(modes))
    return preds.mean(dim=0), preds.std(dim=0)
""",
    ),
    Wrong(
        "03",
        "ex5_mc_dropout_predict",
        OBSERVABLE,
        "a first pass in evaluation mode kept as a sample, then samples - 1 with Dropout",
        """
def mc_dropout_predict(model, x, samples):
    modes = [m.training for m in model.modules()]
    model.eval()
    with torch.no_grad():
        preds = [model(x)]
        for m in model.modules():
            if isinstance(m, torch.nn.Dropout):
                m.train()
        preds += [model(x) for _ in range(samples - 1)]
    for m, mode in zip(model.modules(), modes):
        m.train(mode)
    preds = torch.stack(preds)
    return preds.mean(dim=0), preds.std(dim=0)
""",
    ),
    Wrong(
        "03",
        "ex5_mc_dropout_predict",
        STATE,
        "modes saved once per model on the first call, restored from that record every time",
        """
_MODES = {}


def mc_dropout_predict(model, x, samples):
    if id(model) not in _MODES:
        _MODES[id(model)] = [m.training for m in model.modules()]
    model.eval()
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.train()
    with torch.no_grad():
        preds = torch.stack([model(x) for _ in range(samples)])
    for m, mode in zip(model.modules(), _MODES[id(model)]):
        m.train(mode)
    return preds.mean(dim=0), preds.std(dim=0)
""",
    ),
    Wrong(
        "03",
        "ex5_mc_dropout_predict",
        OBSERVABLE,
        "BatchNorm's momentum set to 0 with model.train(): statistics kept, batch statistics used",
        """
def mc_dropout_predict(model, x, samples):
    modes = [m.training for m in model.modules()]
    bns = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm1d)]
    momenta = [m.momentum for m in bns]
    model.train()
    for m in bns:
        m.momentum = 0.0
    with torch.no_grad():
        preds = torch.stack([model(x) for _ in range(samples)])
    for m, momentum in zip(bns, momenta):
        m.momentum = momentum
    for m, mode in zip(model.modules(), modes):
        m.train(mode)
    return preds.mean(dim=0), preds.std(dim=0)
""",
    ),
    Wrong(
        "03",
        "ex6_finetune_mode",
        OBSERVABLE,
        "model.apply(eval() for BatchNorm, else train()): a container's train() comes last",
        """
def finetune_mode(model):
    def set_mode(m):
        if isinstance(m, torch.nn.BatchNorm1d):
            m.eval()
        else:
            m.train()

    model.apply(set_mode)
""",
    ),
    Wrong(
        "03",
        "ex6_finetune_mode",
        OBSERVABLE,
        "track_running_stats turned off instead of eval(): batch statistics are used",
        """
def finetune_mode(model):
    model.train()
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm1d):
            m.track_running_stats = False
""",
    ),
    Wrong(
        "03",
        "ex6_finetune_mode",
        EDGE,
        "model.training = True on the top module only: Dropouts left in evaluation stay off",
        """
def finetune_mode(model):
    model.training = True
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm1d):
            m.eval()
""",
    ),
    Wrong(
        "03",
        "ex6_finetune_mode",
        OBSERVABLE,
        "returns the model for chaining instead of None",
        """
def finetune_mode(model):
    model.train()
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm1d):
            m.eval()
    return model
""",
    ),
    Wrong(
        "04",
        "ex1_frozen_copy",
        OBSERVABLE,
        "a full slice t.detach()[:] taken for a copy, as with Python lists: it is a view",
        """
def frozen_copy(t, share):
    if share:
        return t.detach()
    return t.detach()[:]
""",
    ),
    Wrong(
        "04",
        "ex1_frozen_copy",
        OBSERVABLE,
        "contiguous() taken for a copy: a contiguous t comes back shared",
        """
def frozen_copy(t, share):
    if share:
        return t.detach()
    return t.detach().contiguous()
""",
    ),
    Wrong(
        "04",
        "ex1_frozen_copy",
        STATE,
        "copies memoised by id(t): a t changed in place gets a stale copy",
        """
_COPIES = {}


def frozen_copy(t, share):
    if share:
        return t.detach()
    if id(t) not in _COPIES:
        _COPIES[id(t)] = t.detach().clone()
    return _COPIES[id(t)]
""",
    ),
    Wrong(
        "04",
        "ex2_detach_all",
        SIDE_EFFECT,
        "the results written back into the caller's list, which is returned",
        """
def detach_all(tensors):
    for i, t in enumerate(tensors):
        try:
            tensors[i] = t.detach_()
        except RuntimeError:
            tensors[i] = t.detach()
    return tensors
""",
    ),
    Wrong(
        "04",
        "ex2_detach_all",
        EDGE,
        "a view told apart by a storage larger than the tensor: a view of a whole tensor is missed",
        """
def detach_all(tensors):
    result = []
    for t in tensors:
        if t.untyped_storage().nbytes() > t.nelement() * t.element_size():
            result.append(t.detach())
        else:
            result.append(t.detach_())
    return result
""",
    ),
    Wrong(
        "04",
        "ex2_detach_all",
        OBSERVABLE,
        "in place ones first, views after: the order is lost",
        """
def detach_all(tensors):
    done, views = [], []
    for t in tensors:
        try:
            done.append(t.detach_())
        except RuntimeError:
            views.append(t.detach())
    return done + views
""",
    ),
    Wrong(
        "04",
        "ex2_detach_all",
        OBSERVABLE,
        "the results returned as a tuple",
        """
def detach_all(tensors):
    out = []
    for t in tensors:
        try:
            out.append(t.detach_())
        except RuntimeError:
            out.append(t.detach())
    return tuple(out)
""",
    ),
    Wrong(
        "04",
        "ex3_normalised_and_grad",
        STATE,
        "out memoised per (w, x) ids: a w changed in place gets a stale p",
        """
_OUT = {}


def normalised_and_grad(w, x):
    key = (id(w), id(x))
    if key not in _OUT:
        _OUT[key] = torch.exp(x @ w).detach()
    p = _OUT[key] / _OUT[key].sum()
    out = torch.exp(x @ w)
    out.sum().backward()
    return p, w.grad
""",
    ),
    Wrong(
        "04",
        "ex3_normalised_and_grad",
        OBSERVABLE,
        "softmax over x @ w, but the gradient of the log of out.sum()",
        """
def normalised_and_grad(w, x):
    out = torch.exp(x @ w)
    p = (out / out.sum()).detach()
    torch.log(out.sum()).backward()
    return p, w.grad
""",
    ),
    Wrong(
        "04",
        "ex3_normalised_and_grad",
        SIDE_EFFECT,
        "w.grad returned after zeroing it 'to leave w clean': the returned gradient is zeros",
        """
def normalised_and_grad(w, x):
    out = torch.exp(x @ w)
    p = out.detach() / out.detach().sum()
    out.sum().backward()
    grad = w.grad
    w.grad.zero_()
    return p, grad
""",
    ),
    Wrong(
        "04",
        "ex3_normalised_and_grad",
        EDGE,
        "p computed by softmax in float32 for numerical safety",
        """
def normalised_and_grad(w, x):
    out = torch.exp(x @ w)
    p = torch.softmax((x @ w).detach().float(), dim=0).to(w.dtype)
    out.sum().backward()
    return p, w.grad
""",
    ),
    Wrong(
        "04",
        "ex4_d_step",
        ARGUMENT,
        "one-sided label smoothing: real targets 0.9 instead of ones",
        """
import torch.nn.functional as F


def d_step(G, D, opt_d, real, z):
    opt_d.zero_grad()
    fake = G(z).detach()
    real_logits, fake_logits = D(real), D(fake)
    loss_d = F.binary_cross_entropy_with_logits(
        real_logits, torch.full_like(real_logits, 0.9)
    ) + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
    loss_d.backward()
    opt_d.step()
    return loss_d.item()
""",
    ),
    Wrong(
        "04",
        "ex4_d_step",
        SIDE_EFFECT,
        "G in eval() for the fakes, its mode restored: its BatchNorm statistics not updated",
        """
import torch.nn.functional as F


def d_step(G, D, opt_d, real, z):
    was = [m.training for m in G.modules()]
    G.eval()
    with torch.no_grad():
        fake = G(z)
    for m, mode in zip(G.modules(), was):
        m.train(mode)
    opt_d.zero_grad()
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
        STATE,
        "fakes memoised by the noise's id: a z redrawn in place gives the old fakes",
        """
import torch.nn.functional as F

_FAKES = {}


def d_step(G, D, opt_d, real, z):
    if id(z) not in _FAKES:
        _FAKES[id(z)] = G(z).detach()
    fake = _FAKES[id(z)]
    opt_d.zero_grad()
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
        "ex5_g_step",
        ARGUMENT,
        "label smoothing in the G step: targets 0.9",
        """
import torch.nn.functional as F


def g_step(G, D, opt_g, z):
    opt_g.zero_grad()
    logits = D(G(z))
    loss_g = F.binary_cross_entropy_with_logits(logits, torch.full_like(logits, 0.9))
    loss_g.backward()
    opt_g.step()
    return loss_g.item()
""",
    ),
    Wrong(
        "04",
        "ex5_g_step",
        OBSERVABLE,
        "the WGAN generator loss, minus the mean logit",
        """
def g_step(G, D, opt_g, z):
    opt_g.zero_grad()
    loss_g = -D(G(z)).mean()
    loss_g.backward()
    opt_g.step()
    return loss_g.item()
""",
    ),
    Wrong(
        "04",
        "ex5_g_step",
        STATE,
        "a fresh Adam with opt_g's learning rate: the caller's optimizer never steps",
        """
import torch.nn.functional as F


def g_step(G, D, opt_g, z):
    opt = torch.optim.Adam(G.parameters(), lr=opt_g.param_groups[0]["lr"])
    opt.zero_grad()
    logits = D(G(z))
    loss_g = F.binary_cross_entropy_with_logits(logits, torch.ones_like(logits))
    loss_g.backward()
    opt.step()
    return loss_g.item()
""",
    ),
    Wrong(
        "01",
        "ex2_output_requires_grad",
        EDGE,
        "max() over the flags: raises for no inputs at all (held-back set, 2026-12-02)",
        """
def output_requires_grad(*inputs):
    return bool(max(t.requires_grad for t in inputs))
""",
    ),
    Wrong(
        "03",
        "ex4_finetune_head",
        STATE,
        "one SGD per head kept by id: a later call's lr is ignored (held-back set, 2026-12-02)",
        """
import torch.nn.functional as F

optimizers = {}


def finetune_head(backbone, head, x, target, lr):
    backbone.eval()
    head.train()
    if id(head) not in optimizers:
        optimizers[id(head)] = torch.optim.SGD(head.parameters(), lr=lr)
    optimizer = optimizers[id(head)]
    with torch.no_grad():
        features = backbone(x)
    optimizer.zero_grad()
    loss = F.mse_loss(head(features), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    ),
    Wrong(
        "07",
        "ex1_silu",
        STATE,
        "x and sigmoid(x) kept on the Function class, not ctx (held-back set, 2026-12-02)",
        """
import torch


class SiLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        SiLU.x = x.detach()
        SiLU.s = torch.sigmoid(x).detach()
        return x * SiLU.s

    @staticmethod
    def backward(ctx, grad_out):
        s, x = SiLU.s, SiLU.x
        return grad_out * s * (1 + x * (1 - s))


def silu(x):
    return SiLU.apply(x)
""",
    ),
    Wrong(
        "07",
        "ex5_soft_clip",
        STATE,
        "limit kept on the Function class, not ctx (held-back set, 2026-12-02)",
        """
import torch


class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, limit):
        SoftClip.limit = limit
        ctx.save_for_backward(x)
        return limit * torch.tanh(x / limit)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        t = torch.tanh(x / SoftClip.limit)
        return grad_out * (1 - t * t), None


def soft_clip(x, limit):
    return SoftClip.apply(x, limit)
""",
    ),
    Wrong(
        "09",
        "ex4_per_sample_grads",
        STATE,
        "vmap(grad(...)) cached by id(model): the first loss_fn forever (held-back set)",
        """
from torch.func import functional_call, grad, vmap

_cache = {}


def per_sample_grads(model, loss_fn, x, y):
    key = id(model)
    if key not in _cache:
        def loss_of_one(params, xi, yi):
            out = functional_call(model, params, (xi.unsqueeze(0),))
            return loss_fn(out, yi.unsqueeze(0))
        _cache[key] = vmap(grad(loss_of_one), in_dims=(None, 0, 0))
    params = {name: p.detach() for name, p in model.named_parameters()}
    return _cache[key](params, x, y)
""",
    ),
    # A held-back set written 2026-12-06 (issue 33): answers the checks passed until the
    # contract in common/ grew (caller changes through .data, module attributes, replaced list
    # items, optimizer hooks, tensors changed by backward) or a check drew the case.
    Wrong(
        "01",
        "ex4_per_batch_grads",
        STATE,
        "gradients memoised by data_ptr and _version: an update through w.data (no version "
        "bump) gets stale gradients (held-back set, 2026-12-06)",
        """
_memo = {}


def per_batch_grads(w, batches):
    key = (w.data_ptr(), w._version) + tuple(
        (x.data_ptr(), x._version, tuple(x.shape)) for x in batches
    )
    if key not in _memo:
        grads = []
        for x in batches:
            w.grad = None
            ((x @ w) ** 2).mean().backward()
            grads.append(w.grad.clone())
        _memo[key] = grads
    return [g.clone() for g in _memo[key]]
""",
    ),
    Wrong(
        "01",
        "ex4_per_batch_grads",
        SIDE_EFFECT,
        "replaces non-contiguous batches in the caller's list with contiguous copies (held-"
        "back set, 2026-12-06)",
        """
def per_batch_grads(w, batches):
    grads = []
    for i, x in enumerate(batches):
        if not x.is_contiguous():
            batches[i] = x = x.contiguous()  # faster matmul next time too
        w.grad = None
        ((x @ w) ** 2).mean().backward()
        grads.append(w.grad.clone())
    return grads
""",
    ),
    Wrong(
        "01",
        "ex6_finetune_last_layer",
        STATE,
        "one SGD per model kept by id: a later call's learning rate is ignored (held-back "
        "set, 2026-12-06)",
        """
_optimizers = {}


def finetune_last_layer(model, x, target, lr):
    model[:-1].requires_grad_(False)
    # build the optimizer once per model and reuse it on later calls
    if id(model) not in _optimizers:
        _optimizers[id(model)] = (model, torch.optim.SGD(model[-1].parameters(), lr=lr))
    optimizer = _optimizers[id(model)][1]
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    ),
    Wrong(
        "01",
        "ex6_finetune_last_layer",
        OBSERVABLE,
        "clips the last layer's gradient norm to 1 before the SGD step (held-back set, 2026-12-06)",
        """
def finetune_last_layer(model, x, target, lr):
    model[:-1].requires_grad_(False)
    opt = torch.optim.SGD(model[-1].parameters(), lr=lr)
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), target)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model[-1].parameters(), max_norm=1.0)  # safe fine-tuning
    opt.step()
    return loss.item()
""",
    ),
    Wrong(
        "01",
        "ex7_to_device",
        STATE,
        "remembers which models it moved (by id) and skips them later (held-back set, 2026-12-06)",
        """
_moved = {}


def to_device(batch, model, device, dtype):
    batch = batch.to(device, dtype)
    if _moved.get(id(model)) != (str(device), dtype):  # move each model once
        model.to(device, dtype)
        _moved[id(model)] = (str(device), dtype)
    return batch, model
""",
    ),
    Wrong(
        "02",
        "ex1_evaluate",
        SIDE_EFFECT,
        "replaces non-contiguous inputs in the caller's batches list with contiguous copies "
        "(held-back set, 2026-12-06)",
        """
def evaluate(model, batches):
    losses, accs = [], []
    with torch.no_grad():
        for i, (inputs, labels) in enumerate(batches):
            if not inputs.is_contiguous():
                inputs = inputs.contiguous()
                batches[i] = (inputs, labels)  # keep the contiguous copy for next time
            logits = model(inputs)
            losses.append(torch.nn.functional.cross_entropy(logits, labels).item())
            accs.append((logits.argmax(1) == labels).float().mean().item())
    return sum(losses) / len(losses), sum(accs) / len(accs)
""",
    ),
    Wrong(
        "02",
        "ex1_evaluate",
        STATE,
        "results memoised by the tensors' data_ptr and _version: weights changed through "
        ".data give the old numbers (held-back set, 2026-12-06)",
        """
_cache = {}


def _key(model, batches):
    tensors = [*model.parameters(), *model.buffers()] + [t for pair in batches for t in pair]
    return tuple((t.data_ptr(), t._version) for t in tensors) + tuple(
        m.training for m in model.modules()
    )


def evaluate(model, batches):
    key = _key(model, batches)
    if key in _cache:
        return _cache[key]
    total_loss = total_acc = 0.0
    with torch.no_grad():
        for inputs, labels in batches:
            logits = model(inputs)
            total_loss += torch.nn.functional.cross_entropy(logits, labels).item()
            total_acc += (logits.argmax(1) == labels).float().mean().item()
    result = (total_loss / len(batches), total_acc / len(batches))
    _cache[_key(model, batches)] = result
    return result
""",
    ),
    Wrong(
        "02",
        "ex3_run_step",
        SIDE_EFFECT,
        "registers a zero_grad step post-hook on the caller's optimizer and leaves it there "
        "(held-back set, 2026-12-06)",
        """
_hooked = []


def run_step(model, inputs, labels, optimizer, train):
    if train and not any(o is optimizer for o in _hooked):
        # never let a stale gradient leak into the next step
        optimizer.register_step_post_hook(lambda opt, args, kwargs: opt.zero_grad())
        _hooked.append(optimizer)
    with torch.set_grad_enabled(train):
        loss = torch.nn.functional.cross_entropy(model(inputs), labels)
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return loss.item()
""",
    ),
    Wrong(
        "02",
        "ex4_frozen_features",
        STATE,
        "features memoised by data_ptr and _version: an input changed through .data gets "
        "stale features (held-back set, 2026-12-06)",
        """
_features = {}


def frozen_features(backbone, x):
    key = (
        id(backbone),
        x.data_ptr(),
        x._version,
        tuple(x.shape),
        tuple((p.data_ptr(), p._version) for p in backbone.parameters()),
    )
    if key not in _features:
        with torch.no_grad():
            _features[key] = backbone(x)
    return _features[key].clone()
""",
    ),
    Wrong(
        "03",
        "ex1_dropout_by_hand",
        STATE,
        "the scaled mask memoised by data_ptr and _version of x and u: new uniforms written "
        "through .data reuse the old mask (held-back set, 2026-12-06)",
        """
_memo = {}


def dropout_by_hand(x, p, u, training):
    if not training:
        return x
    key = (x.data_ptr(), x._version, u.data_ptr(), u._version, tuple(x.shape), x.stride(), p)
    if key not in _memo:
        _memo[key] = ((u >= p).to(x.dtype) / (1 - p)).detach()  # the scaled mask, reused
    return x * _memo[key]
""",
    ),
    Wrong(
        "03",
        "ex2_eval_grads",
        STATE,
        "gradients memoised by data_ptr and _version: weights changed through .data give the "
        "old gradients (held-back set, 2026-12-06)",
        """
_memo = {}


def eval_grads(model, x, target):
    key = tuple(
        (t.data_ptr(), t._version) for t in [*model.parameters(), *model.buffers(), x, target]
    )
    if key not in _memo:
        was = model.training
        model.eval()
        try:
            model.zero_grad()
            torch.nn.functional.mse_loss(model(x), target).backward()
        finally:
            model.train(was)
        _memo[key] = {n: p.grad.clone() for n, p in model.named_parameters()}
    return {n: g.clone() for n, g in _memo[key].items()}
""",
    ),
    Wrong(
        "03",
        "ex3_validate",
        SIDE_EFFECT,
        "writes contiguous copies of the batches back into the caller's list (held-back set, "
        "2026-12-06)",
        """
def validate(model, batches):
    was = model.training
    model.eval()
    try:
        with torch.no_grad():
            total = 0.0
            for i, (x, y) in enumerate(batches):
                x, y = x.to(torch.get_default_dtype()) if False else x, y
                batches[i] = (
                    x.contiguous(),
                    y.contiguous(),
                )  # tidy the batches for the next epoch
                total += torch.nn.functional.mse_loss(model(x), y).item()
    finally:
        model.train(was)
    return total / len(batches)
""",
    ),
    Wrong(
        "03",
        "ex3_validate",
        STATE,
        "validation losses memoised by data_ptr and _version: weights changed through .data "
        "give the old loss (held-back set, 2026-12-06)",
        """
_seen = {}


def validate(model, batches):
    key = tuple(
        (t.data_ptr(), t._version)
        for t in [*model.parameters(), *model.buffers()] + [t for pair in batches for t in pair]
    )
    if key in _seen:
        return _seen[key]
    was = model.training
    model.eval()
    try:
        with torch.no_grad():
            losses = [torch.nn.functional.mse_loss(model(x), y).item() for x, y in batches]
    finally:
        model.train(was)
    _seen[key] = sum(losses) / len(losses)
    return _seen[key]
""",
    ),
    Wrong(
        "03",
        "ex3_validate",
        SIDE_EFFECT,
        "sets every BatchNorm's momentum to 0 'to keep the statistics' and never restores it "
        "(held-back set, 2026-12-06)",
        """
def validate(model, batches):
    was = model.training
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm1d):
            m.momentum = 0.0  # running statistics must stay untouched
    model.eval()
    try:
        with torch.no_grad():
            losses = [torch.nn.functional.mse_loss(model(x), y).item() for x, y in batches]
    finally:
        model.train(was)
    return sum(losses) / len(losses)
""",
    ),
    Wrong(
        "03",
        "ex4_finetune_head",
        STATE,
        "backbone features memoised by data_ptr and _version: a batch refilled through .data "
        "trains on the old features (held-back set, 2026-12-06)",
        """
_features = {}


def finetune_head(backbone, head, x, target, lr):
    backbone.eval()
    head.train()
    key = (
        id(backbone),
        x.data_ptr(),
        x._version,
        tuple(
            (t.data_ptr(), t._version) for t in [*backbone.parameters(), *backbone.buffers()]
        ),
    )
    if key not in _features:  # the backbone is frozen: compute its features once
        with torch.no_grad():
            _features[key] = backbone(x)
    features = _features[key]
    optimizer = torch.optim.SGD(head.parameters(), lr=lr)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(head(features), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    ),
    Wrong(
        "03",
        "ex4_finetune_head",
        SIDE_EFFECT,
        "sets the backbone's BatchNorm momentum to 0 on top of eval() and leaves it (held-"
        "back set, 2026-12-06)",
        """
def finetune_head(backbone, head, x, target, lr):
    for m in backbone.modules():
        if isinstance(m, torch.nn.BatchNorm1d):
            m.momentum = 0.0  # statistics frozen for good
    backbone.eval()
    head.train()
    with torch.no_grad():
        features = backbone(x)
    optimizer = torch.optim.SGD(head.parameters(), lr=lr)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(head(features), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    ),
    Wrong(
        "03",
        "ex5_mc_dropout_predict",
        SIDE_EFFECT,
        "sets BatchNorm momentum to 0 as well as eval() and leaves it at 0 (held-back set, "
        "2026-12-06)",
        """
def mc_dropout_predict(model, x, samples):
    modes = [m.training for m in model.modules()]
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm1d):
            m.momentum = 0.0  # running statistics must not be updated
    model.eval()
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.train()
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
        "ex6_finetune_mode",
        SIDE_EFFECT,
        "also sets every BatchNorm's momentum to 0 (the prompt: change nothing else) (held-"
        "back set, 2026-12-06)",
        """
def finetune_mode(model):
    model.train()
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm1d):
            m.eval()
            m.momentum = 0.0  # belt and braces: the statistics cannot move
""",
    ),
    Wrong(
        "03",
        "ex6_finetune_mode",
        SIDE_EFFECT,
        "replaces each BatchNorm's train() with a no-op so the freeze survives model.train() "
        "(held-back set, 2026-12-06)",
        """
def finetune_mode(model):
    model.train()
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm1d):
            m.eval()
            m.train = lambda mode=True, _m=m: _m  # keep it frozen even if someone calls train()
""",
    ),
    Wrong(
        "04",
        "ex4_d_step",
        STATE,
        "G's requires_grad flags cached per id(G) on the first call and restored from the "
        "cache (held-back set, 2026-12-06)",
        """
import torch.nn.functional as F

_g_flags = {}


def d_step(G, D, opt_d, real, z):
    # remember G's trainable flags once per generator, freeze G while making the fakes
    flags = _g_flags.setdefault(id(G), [p.requires_grad for p in G.parameters()])
    G.requires_grad_(False)
    try:
        fake = G(z)
    finally:
        for p, flag in zip(G.parameters(), flags):
            p.requires_grad_(flag)
    opt_d.zero_grad()
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
        "ex5_g_step",
        STATE,
        "D's requires_grad flags cached per id(D) on the first call and restored from the "
        "cache (held-back set, 2026-12-06)",
        """
import torch.nn.functional as F

_d_flags = {}


def g_step(G, D, opt_g, z):
    flags = _d_flags.setdefault(id(D), [p.requires_grad for p in D.parameters()])
    D.requires_grad_(False)  # D is not trained here
    try:
        opt_g.zero_grad()
        logits = D(G(z))
        loss_g = F.binary_cross_entropy_with_logits(logits, torch.ones_like(logits))
        loss_g.backward()
        opt_g.step()
    finally:
        for p, flag in zip(D.parameters(), flags):
            p.requires_grad_(flag)
    return loss_g.item()
""",
    ),
    Wrong(
        "05",
        "ex1_extract_features",
        SIDE_EFFECT,
        "grad mode switched off with set_grad_enabled(False) and back ON in finally: a caller"
        " under no_grad leaves with grad mode on (held-back set, 2026-12-06)",
        """
def extract_features(model, names, x):
    modules = dict(model.named_modules())
    features = {}
    handles = []
    for name in names:

        def hook(module, args, output, name=name):
            features[name] = output.detach().to("cpu", copy=True)

        handles.append(modules[name].register_forward_hook(hook))
    torch.set_grad_enabled(False)  # no graph while extracting
    try:
        model(x)
    finally:
        torch.set_grad_enabled(True)
        for h in handles:
            h.remove()
    return features
""",
    ),
    Wrong(
        "05",
        "ex5_forward_counting_saved",
        SIDE_EFFECT,
        "model.train() before the forward pass (held-back set, 2026-12-06)",
        """
def forward_counting_saved(model, x):
    model.train()  # count what a training step saves
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
        "07",
        "ex1_silu",
        STATE,
        "the result memoised per (id(x), x._version): a second call hands back the first "
        "call's tensor and graph (held-back set, 2026-12-06)",
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


_results = {}


def silu(x):
    key = (id(x), x._version, x.requires_grad, torch.is_grad_enabled())
    if key not in _results:  # same tensor, unchanged since: no need to recompute
        _results[key] = SiLU.apply(x)
    return _results[key]
""",
    ),
    Wrong(
        "07",
        "ex1_silu",
        SIDE_EFFECT,
        "backward reuses the saved x as scratch (x *= 1 - s): the caller's x is changed by "
        "backward (held-back set, 2026-12-06)",
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
        x *= 1 - s  # x·(1 − σ(x)), computed where x already is
        return grad_out * s * (1 + x)


def silu(x):
    return SiLU.apply(x)
""",
    ),
    Wrong(
        "07",
        "ex2_quantise",
        STATE,
        "results cached per (id(x), x._version, step): an unchanged x gets the very tensor "
        "the caller already scaled (held-back set, 2026-12-06)",
        """
class Quantise(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, step):
        return torch.round(x / step) * step

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, None


_seen = {}


def quantise(x, step):
    key = (id(x), x._version, step, x.requires_grad, torch.is_grad_enabled())
    if key not in _seen:
        _seen[key] = Quantise.apply(x, step)
    return _seen[key]
""",
    ),
    Wrong(
        "07",
        "ex4_mul",
        SIDE_EFFECT,
        "backward reuses the saved b as scratch (b *= grad_out): the caller's b changes "
        "during backward (held-back set, 2026-12-06)",
        """
class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad_out):
        a, b = ctx.saved_tensors
        grad_b = grad_out * a if ctx.needs_input_grad[1] else None
        grad_a = None
        if ctx.needs_input_grad[0]:
            b *= grad_out  # b is not needed after this: no new tensor
            grad_a = b
        return grad_a, grad_b


def mul(a, b):
    return Mul.apply(a, b)
""",
    ),
    Wrong(
        "07",
        "ex5_soft_clip",
        SIDE_EFFECT,
        "backward divides the saved result in place (y /= limit): the caller's result changes"
        " when backward runs (held-back set, 2026-12-06)",
        """
class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, limit):
        y = limit * torch.tanh(x / limit)
        ctx.save_for_backward(y)
        ctx.limit = limit
        return y

    @staticmethod
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        y /= ctx.limit  # tanh(x / limit)
        return grad_out * (1 - y * y), None


def soft_clip(x, limit):
    return SoftClip.apply(x, limit)
""",
    ),
    Wrong(
        "07",
        "ex5_soft_clip",
        STATE,
        "results memoised per (id(x), x._version, limit): the second call returns the first "
        "call's result and freed graph (held-back set, 2026-12-06)",
        """
class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, limit):
        y = limit * torch.tanh(x / limit)
        ctx.save_for_backward(y)
        ctx.limit = limit
        return y

    @staticmethod
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        return grad_out * (1 - (y / ctx.limit) ** 2), None


_cache = {}


def soft_clip(x, limit):
    key = (id(x), x._version, float(limit), torch.is_grad_enabled())
    if key not in _cache:
        _cache[key] = SoftClip.apply(x, limit)
    return _cache[key]
""",
    ),
    Wrong(
        "08",
        "ex2_validate",
        SIDE_EFFECT,
        "grad mode switched off with set_grad_enabled(False) and back on with "
        "set_grad_enabled(True): a caller inside no_grad finds it on (held-back set, "
        "2026-12-06)",
        """
import torch.nn.functional as F


def validate(model, batches):
    '''Mean validation loss, measured in evaluation mode.'''
    was_training = model.training
    model.eval()
    torch.set_grad_enabled(False)
    total = 0.0
    for x, y in batches:
        total += F.cross_entropy(model(x), y).item()
    torch.set_grad_enabled(True)
    model.train(was_training)
    return float(total) / len(batches)
""",
    ),
    Wrong(
        "08",
        "ex2_validate",
        STATE,
        "the loss cached per (id(model), parameters' versions, id(batches)): a list whose "
        "batches the caller replaced gets the old loss (held-back set, 2026-12-06)",
        """
import torch.nn.functional as F

_last = {}


def validate(model, batches):
    '''Mean validation loss, measured in evaluation mode.'''
    key = (id(model), tuple(p._version for p in model.parameters()), id(batches), len(batches))
    if key in _last:  # nothing trained since: the same loss
        return _last[key]
    was_training = model.training
    model.eval()
    total = 0.0
    with torch.no_grad():
        for x, y in batches:
            total += F.cross_entropy(model(x), y).item()
    model.train(was_training)
    _last[key] = float(total) / len(batches)
    return _last[key]
""",
    ),
    Wrong(
        "08",
        "ex3_accuracy",
        SIDE_EFFECT,
        "grad mode switched off by set_grad_enabled(False) and on again by "
        "set_grad_enabled(True): a caller inside no_grad finds it on (held-back set, "
        "2026-12-06)",
        """
def accuracy(model, images, labels):
    '''Fraction of images classified correctly.'''
    was_training = model.training
    model.eval()
    torch.set_grad_enabled(False)
    predicted = model(images).argmax(dim=1)
    torch.set_grad_enabled(True)
    model.train(was_training)
    return (predicted == labels).float().mean().item()
""",
    ),
    Wrong(
        "08",
        "ex3_accuracy",
        STATE,
        "accuracy cached per (id(model), parameters' versions, id(images), id(labels)): new "
        "images copied into the same tensor get the old figure (held-back set, 2026-12-06)",
        """
_scores = {}


def accuracy(model, images, labels):
    '''Fraction of images classified correctly.'''
    key = (id(model), tuple(p._version for p in model.parameters()), id(images), id(labels))
    if key not in _scores:
        was_training = model.training
        model.eval()
        try:
            with torch.no_grad():
                predicted = model(images).argmax(dim=1)
        finally:
            model.train(was_training)
        _scores[key] = (predicted == labels).float().mean().item()
    return _scores[key]
""",
    ),
    Wrong(
        "08",
        "ex5_log_features",
        SIDE_EFFECT,
        "grad mode switched off for logging and on again with set_grad_enabled(True): a "
        "caller inside no_grad finds it on (held-back set, 2026-12-06)",
        """
def log_features(model, layer, batches):
    '''The layer's output for each batch, stored detached.'''
    features = []
    handle = layer.register_forward_hook(
        lambda module, inputs, output: features.append(output.detach())
    )
    torch.set_grad_enabled(False)
    try:
        for x, _ in batches:
            model(x)
    finally:
        handle.remove()
        torch.set_grad_enabled(True)
    return features
""",
    ),
    Wrong(
        "08",
        "ex7_swish",
        SIDE_EFFECT,
        "backward scales the saved x in place (x *= beta): the caller's x is changed by "
        "backward (held-back set, 2026-12-06)",
        """
class Swish(torch.autograd.Function):
    '''x * sigmoid(beta * x); beta is a Python float.'''

    @staticmethod
    def forward(ctx, x, beta):
        s = torch.sigmoid(beta * x)
        ctx.save_for_backward(x, s)
        ctx.beta = beta
        return x * s

    @staticmethod
    def backward(ctx, grad_output):
        x, s = ctx.saved_tensors
        x *= ctx.beta  # beta * x
        return grad_output * (s + x * s * (1 - s)), None


def swish(x, beta):
    return Swish.apply(x, beta)
""",
    ),
    Wrong(
        "08",
        "ex7_swish",
        STATE,
        "results memoised per (id(x), x._version, beta): the second call returns the first "
        "call's tensor and freed graph (held-back set, 2026-12-06)",
        """
class Swish(torch.autograd.Function):
    '''x * sigmoid(beta * x); beta is a Python float.'''

    @staticmethod
    def forward(ctx, x, beta):
        s = torch.sigmoid(beta * x)
        ctx.save_for_backward(x, s)
        ctx.beta = beta
        return x * s

    @staticmethod
    def backward(ctx, grad_output):
        x, s = ctx.saved_tensors
        return grad_output * (s + ctx.beta * x * s * (1 - s)), None


_made = {}


def swish(x, beta):
    key = (id(x), x._version, beta, torch.is_grad_enabled())
    if key not in _made:
        _made[key] = Swish.apply(x, beta)
    return _made[key]
""",
    ),
    Wrong(
        "09",
        "ex3_autocast_predict",
        STATE,
        "an evaluation-mode deep copy cached per (id(model), parameters' versions): new "
        "BatchNorm statistics are never seen (held-back set, 2026-12-06)",
        """
import copy

_frozen_copies = {}


def autocast_predict(model, x):
    key = (id(model), tuple(p._version for p in model.parameters()))
    if key not in _frozen_copies:  # the caller's model is never touched
        _frozen_copies[key] = copy.deepcopy(model).eval()
    dtype = torch.bfloat16 if x.device.type == "cpu" else torch.float16
    with torch.inference_mode(), torch.autocast(x.device.type, dtype=dtype):
        out = _frozen_copies[key](x)
    return out.float()
""",
    ),
    Wrong(
        "02",
        "ex4_frozen_features",
        OBSERVABLE,
        "features from a deep copy of the backbone under no_grad (in training mode the "
        "caller's BatchNorm statistics are left as found) (held-back set, 2026-12-06)",
        """
import copy


def frozen_features(backbone, x):
    twin = copy.deepcopy(backbone)  # the caller's backbone stays exactly as it was
    with torch.no_grad():
        return twin(x)
""",
    ),
    Wrong(
        "06",
        "ex1_benchmark",
        STATE,
        "warm-up skipped for a work function already seen (module-level set of ids) (held-"
        "back set, 2026-12-06)",
        """
_warm = set()


def benchmark(work, synchronize, clock, warmup, repeats):
    if id(work) not in _warm:  # a function needs warming up only once
        for _ in range(warmup):
            work()
        _warm.add(id(work))
    durations = []
    for _ in range(repeats):
        synchronize()
        start = clock()
        work()
        synchronize()
        durations.append(clock() - start)
    return sorted(durations)[repeats // 2]
""",
    ),
    Wrong(
        "07",
        "ex4_mul",
        STATE,
        "products memoised per (id, _version) of a and b: a second call returns the first "
        "call's tensor, whose graph is already freed (held-back set, 2026-12-06)",
        """
class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad_out):
        a, b = ctx.saved_tensors
        grad_a = grad_out * b if ctx.needs_input_grad[0] else None
        grad_b = grad_out * a if ctx.needs_input_grad[1] else None
        return grad_a, grad_b


_done = {}


def mul(a, b):
    key = (id(a), a._version, id(b), b._version, torch.is_grad_enabled())
    if key not in _done:
        _done[key] = Mul.apply(a, b)
    return _done[key]
""",
    ),
    Wrong(
        "01",
        "ex1_product_grads",
        EDGE,
        "converts b's copy to a's dtype: a float32 a with a float64 b gets float32 b.grad and"
        " c.grad (held-back set, 2026-12-06)",
        """
def product_grads(a, b):
    # make both copies the same dtype as a so the product is well defined
    a = a.detach().clone().requires_grad_()
    b = b.detach().to(a.dtype).requires_grad_()
    c = a * b
    c.retain_grad()
    (c**2).sum().backward()
    return a.grad, b.grad, c.grad
""",
    ),
    Wrong(
        "04",
        "ex1_frozen_copy",
        EDGE,
        "independent copy through NumPy via float32 (for bfloat16): float64 values rounded to"
        " float32 (held-back set, 2026-12-06)",
        """
def frozen_copy(t, share):
    if share:
        return t.detach()
    import numpy as np

    values = (
        t.detach().cpu().float().numpy().copy()
    )  # numpy has no bfloat16: go through float32
    return torch.from_numpy(values).to(device=t.device, dtype=t.dtype)
""",
    ),
    Wrong(
        "05",
        "ex2_clip_gradients",
        EDGE,
        "the limit made a default-dtype tensor: float64 gradients clipped to "
        "float32(max_abs), just above max_abs (held-back set, 2026-12-06)",
        """
def clip_gradients(model, max_abs):
    limit = torch.tensor(max_abs)
    return [
        p.register_hook(lambda g: torch.clamp(g, -limit, limit)) for p in model.parameters()
    ]
""",
    ),
    Wrong(
        "06",
        "ex5_epoch_mean_loss",
        SIDE_EFFECT,
        "each returned loss detached in place with detach_() (held-back set, 2026-12-06): "
        "detach_ leaves the version as it was",
        """
def epoch_mean_loss(step, batches):
    losses = []
    for batch in batches:
        loss = step(batch)
        loss.detach_()  # free the graph: only the value is needed here
        losses.append(loss)
    return torch.stack(losses).mean().item()
""",
    ),
    Wrong(
        "07",
        "ex1_silu",
        EDGE,
        "a guard for large entries reads x.abs().max(): an empty x (any shape, e.g. (0, 3)) "
        "raises (held-back set, 2026-12-06)",
        """
class SiLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        if x.abs().max() > 30:  # large entries: the stable two-branch sigmoid
            s = torch.where(x >= 0, 1 / (1 + torch.exp(-x)), torch.exp(x) / (1 + torch.exp(x)))
        else:
            s = torch.sigmoid(x)
        return x * s

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        return grad_out * s * (1 + x * (1 - s))


def silu(x):
    return SiLU.apply(x)
""",
    ),
    Wrong(
        "07",
        "ex1_silu",
        EDGE,
        "derivative written as s + x·s·(1 − s) with s·(1 − s) from exp(−x)/(1 + exp(−x))²: "
        "overflows to NaN in float16 (any dtype is allowed) (held-back set, 2026-12-06)",
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
        e = torch.exp(-x.clamp(min=-80.0))  # clamp keeps exp finite in float32/bfloat16
        ds = e / (1 + e) ** 2  # σ'(x) = σ(x)(1 − σ(x))
        return grad_out * (s + x * ds)


def silu(x):
    return SiLU.apply(x)
""",
    ),
    Wrong(
        "07",
        "ex3_backward_is_correct",
        SIDE_EFFECT,
        "anomaly detection switched on for the check and off afterwards: a caller that had it"
        " on loses it (held-back set, 2026-12-06)",
        """
def backward_is_correct(fn, x):
    torch.autograd.set_detect_anomaly(True)  # a wrong backward then says where
    x64 = x.detach().double().requires_grad_()
    verdict = torch.autograd.gradcheck(fn, (x64,), raise_exception=False)
    torch.autograd.set_detect_anomaly(False)
    return verdict
""",
    ),
    Wrong(
        "01",
        "ex3_make_trainable",
        STATE,
        "conversions memoised by id(values): a list the caller edits between calls gives the "
        "old values (held-back set, 2026-12-06)",
        """
_converted = {}

def make_trainable(values, device):
    # converting a big nested list is slow: convert each list object once
    key = (id(values), str(device))
    if key not in _converted:
        _converted[key] = (values, torch.tensor(values, dtype=torch.float32, device=device))
    return _converted[key][1].clone().requires_grad_()
""",
    ),
    Wrong(
        "01",
        "ex5_backward_seed",
        STATE,
        "one cached ones tensor per dtype and device, handed out as a view each call (held-"
        "back set, 2026-12-06)",
        """
_ones = {}

def backward_seed(loss):
    key = (loss.dtype, loss.device)
    if key not in _ones:
        _ones[key] = torch.ones((), dtype=loss.dtype, device=loss.device)
    return _ones[key].view(())   # a fresh 0-dim view each call
""",
    ),
    Wrong(
        "01",
        "ex5_backward_seed",
        SIDE_EFFECT,
        "registers a prehook on loss.grad_fn that forces its seed: the caller's own gradient="
        " is overridden later (held-back set, 2026-12-06)",
        """
def backward_seed(loss):
    seed = torch.ones_like(loss)
    loss.grad_fn.register_prehook(lambda grads: (seed,) * len(grads))  # make sure backward uses it
    return seed
""",
    ),
    Wrong(
        "02",
        "ex3_run_step",
        STATE,
        "evaluation losses memoised by data_ptr and _version: weights changed through .data "
        "give the old loss (held-back set, 2026-12-06)",
        """
_evals = {}

def run_step(model, inputs, labels, optimizer, train):
    if not train:
        key = tuple((t.data_ptr(), t._version) for t in [*model.parameters(), inputs, labels])
        if key not in _evals:
            with torch.set_grad_enabled(False):
                _evals[key] = torch.nn.functional.cross_entropy(model(inputs), labels).item()
        return _evals[key]
    with torch.set_grad_enabled(True):
        loss = torch.nn.functional.cross_entropy(model(inputs), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()
""",
    ),
    Wrong(
        "02",
        "ex5_input_saliency",
        EDGE,
        "uses x itself when it already requires grad: backward leaves a .grad on the caller's"
        " x (held-back set, 2026-12-06)",
        """
def input_saliency(model, x):
    with torch.inference_mode(False), torch.enable_grad():
        # x already tracked? use it as it is; otherwise a leaf copy
        x_ = x if x.requires_grad else x.clone().requires_grad_()
        model(x_).sum().backward(inputs=[x_])
    return x_.grad
""",
    ),
    Wrong(
        "03",
        "ex2_eval_grads",
        EDGE,
        "subtracts the arriving .grad instead of zeroing it: a large leftover swallows this "
        "loss's gradient (held-back set, 2026-12-06)",
        """
def eval_grads(model, x, target):
    # don't wipe the caller's gradients: take the difference instead
    before = {
        n: (p.grad.clone() if p.grad is not None else None) for n, p in model.named_parameters()
    }
    was = model.training
    model.eval()
    try:
        torch.nn.functional.mse_loss(model(x), target).backward()
    finally:
        model.train(was)
    return {n: p.grad - before[n] if before[n] is not None else p.grad.clone()
            for n, p in model.named_parameters()}
""",
    ),
    Wrong(
        "04",
        "ex2_detach_all",
        STATE,
        "the result list kept at module level, cleared and refilled on each call (held-back "
        "set, 2026-12-06)",
        """
_results = []


def detach_all(tensors):
    _results.clear()
    for t in tensors:
        try:
            _results.append(t.detach_())
        except RuntimeError:
            _results.append(t.detach())
    return _results
""",
    ),
    Wrong(
        "05",
        "ex3_mask_output",
        STATE,
        "the mask kept in a module-level variable that each call overwrites (held-back set, "
        "2026-12-06)",
        """
MASK = None


def _apply_mask(module, args, output):
    return output * MASK


def mask_output(module, mask):
    global MASK
    MASK = mask
    return module.register_forward_hook(_apply_mask)
""",
    ),
    Wrong(
        "08",
        "ex1_train_epoch",
        STATE,
        "the stale .grad cleared only on the first call per model (a module-level set of "
        "ids); later epochs trust zero_grad after each step (held-back set, 2026-12-06)",
        """
import torch.nn.functional as F

_cleaned = set()


def train_epoch(model, optimizer, batches):
    '''One pass over the training batches; returns the loss of each batch.'''
    if id(model) not in _cleaned:  # whatever the caller left: once
        optimizer.zero_grad()
        _cleaned.add(id(model))
    losses = []
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()  # clean for the next batch
        losses.append(loss.item())
    return losses
""",
    ),
    Wrong(
        "08",
        "ex6_time_step",
        STATE,
        "the end time of the previous call (per clock) reused as the next call's start, to "
        "save a synchronize: the caller's work between calls is counted (held-back set, "
        "2026-12-06)",
        """
_ended = {}


def time_step(step, synchronize, clock, repeats):
    '''Mean seconds per call of step().'''
    start = _ended.get(id(clock))
    if start is None:  # first call: wait for earlier work once
        synchronize()
        start = clock()
    for _ in range(repeats):
        step()
    synchronize()
    end = clock()
    _ended[id(clock)] = end
    return (end - start) / repeats
""",
    ),
    Wrong(
        "09",
        "ex1_checkpointed_forward",
        SIDE_EFFECT,
        "grad mode forced on with torch.set_grad_enabled(True) 'so that checkpoint builds a "
        "graph', never put back: a caller inside no_grad finds it on (held-back set, "
        "2026-12-06)",
        """
from torch.utils.checkpoint import checkpoint


def checkpointed_forward(blocks, x):
    torch.set_grad_enabled(True)  # checkpoint needs autograd on
    h = x
    for block in blocks:
        h = checkpoint(block, h, use_reentrant=False)
    return h
""",
    ),
    Wrong(
        "09",
        "ex1_checkpointed_forward",
        STATE,
        "the checkpointed wrappers built once per Sequential (by id) and reused: a block the "
        "caller replaced is never run (held-back set, 2026-12-06)",
        """
from functools import partial

from torch.utils.checkpoint import checkpoint

_wrapped = {}


def checkpointed_forward(blocks, x):
    if id(blocks) not in _wrapped:  # build the wrappers once per model
        _wrapped[id(blocks)] = [partial(checkpoint, block, use_reentrant=False) for block in blocks]
    h = x
    for run in _wrapped[id(blocks)]:
        h = run(h)
    return h
""",
    ),
    Wrong(
        "09",
        "ex2_bf16_train_step",
        STATE,
        "stale gradients cleared on the first call per optimizer only (a module-level set), "
        "zero_grad after each step afterwards (held-back set, 2026-12-06)",
        """
_fresh = set()


def bf16_train_step(model, loss_fn, x, target, optimizer):
    if id(optimizer) not in _fresh:  # the caller's leftovers: once
        optimizer.zero_grad()
        _fresh.add(id(optimizer))
    with torch.autocast(device_type=x.device.type, dtype=torch.bfloat16):
        loss = loss_fn(model(x), target)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()  # ready for the next call
    return loss.item()
""",
    ),
    Wrong(
        "09",
        "ex2_bf16_train_step",
        SIDE_EFFECT,
        "autocast without dtype, trusting the device's default: where the caller set "
        "autocast's default dtype to float16 (as a GPU's is) it computes in float16 (held-"
        "back set, 2026-12-06)",
        """
def bf16_train_step(model, loss_fn, x, target, optimizer):
    optimizer.zero_grad()
    with torch.autocast(x.device.type):  # the CPU's autocast dtype is bfloat16
        loss = loss_fn(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    ),
    Wrong(
        "09",
        "ex4_per_sample_grads",
        STATE,
        "the detached parameters and the vmap(grad) function built once per (id(model), "
        "id(loss_fn)): a parameter the caller replaced is never seen (held-back set, "
        "2026-12-06)",
        """
from torch.func import functional_call, grad, vmap

_prepared = {}


def per_sample_grads(model, loss_fn, x, y):
    key = (id(model), id(loss_fn))
    if key not in _prepared:
        # shares storage: stays current
        params = {name: p.detach() for name, p in model.named_parameters()}

        def loss_of_one(params, xi, yi):
            return loss_fn(functional_call(model, params, (xi.unsqueeze(0),)), yi.unsqueeze(0))

        _prepared[key] = (params, vmap(grad(loss_of_one), in_dims=(None, 0, 0)))
    params, per_sample = _prepared[key]
    return per_sample(params, x, y)
""",
    ),
    Wrong(
        "01",
        "ex1_product_grads",
        SIDE_EFFECT,
        "sets the default dtype to float64 and 'restores' float32, not the caller's default "
        "(held-back set, 2026-12-06)",
        """
def product_grads(a, b):
    torch.set_default_dtype(torch.float64)  # accurate intermediate sums
    a = a.detach().clone().requires_grad_()
    b = b.detach().clone().requires_grad_()
    c = a * b
    c.retain_grad()
    y = (c ** 2).sum()
    y.backward()
    torch.set_default_dtype(torch.float32)  # back to the default
    return a.grad, b.grad, c.grad
""",
    ),
    Wrong(
        "01",
        "ex3_make_trainable",
        SIDE_EFFECT,
        "set_default_dtype(float32) to get float32, the caller's default dtype overwritten "
        "(held-back set, 2026-12-06)",
        """
def make_trainable(values, device):
    torch.set_default_dtype(torch.float32)  # the task wants the default float dtype, float32
    return torch.tensor(values, device=device, dtype=torch.get_default_dtype()).requires_grad_()
""",
    ),
    Wrong(
        "07",
        "ex3_backward_is_correct",
        SIDE_EFFECT,
        "default dtype set to float64 for the copy, then 'restored' to float32: a caller "
        "whose default was float64 finds it changed (held-back set, 2026-12-06)",
        """
def backward_is_correct(fn, x):
    torch.set_default_dtype(torch.float64)
    x64 = torch.tensor(x.tolist(), requires_grad=True, device=x.device)
    ok = torch.autograd.gradcheck(fn, (x64,), raise_exception=False)
    torch.set_default_dtype(torch.float32)
    return ok
""",
    ),
    Wrong(
        "01",
        "ex7_to_device",
        EDGE,
        "batch.float() first 'for integer batches': a float64 batch asked in float64 is "
        "rounded through float32 (held-back set, 2026-12-06)",
        """
def to_device(batch, model, device, dtype):
    batch = batch.float().to(device=device, dtype=dtype)   # integer batches need a float first
    model.to(device=device, dtype=dtype)
    return batch, model
""",
    ),
    Wrong(
        "03",
        "ex1_dropout_by_hand",
        EDGE,
        "mask as floor(u + 1 - p): u just below p rounds to 1 and is kept (held-back set, "
        "2026-12-06)",
        """
def dropout_by_hand(x, p, u, training):
    if not training:
        return x
    mask = torch.floor(u + (1 - p))   # 1 where u >= p, 0 where u < p
    return x * mask / (1 - p)
""",
    ),
    Wrong(
        "03",
        "ex1_dropout_by_hand",
        EDGE,
        "casts u to x's dtype before comparing: a float64 u just below p is rounded up to p "
        "and kept (held-back set, 2026-12-06)",
        """
def dropout_by_hand(x, p, u, training):
    if not training:
        return x
    keep = u.to(x.dtype) >= p          # compare in x's precision
    return torch.where(keep, x / (1 - p), torch.zeros_like(x))
""",
    ),
    Wrong(
        "06",
        "ex2_to_host",
        EDGE,
        "copied as float32 then cast back to the dtype: float64 and large int64 values change"
        " (held-back set, 2026-12-06)",
        """
def to_host(tensors, synchronize):
    # bfloat16 and friends: move as float32, restore the dtype once the data is there
    staged = [t.float().to("cpu", non_blocking=True) for t in tensors]
    synchronize()
    return [s.to(t.dtype) for s, t in zip(staged, tensors)]
""",
    ),
    Wrong(
        "01",
        "ex2_output_requires_grad",
        EDGE,
        "only floating-point inputs looked at: a complex tensor that requires grad is skipped"
        " (held-back set, 2026-12-06)",
        """
def output_requires_grad(*inputs):
    # only floating-point tensors can require grad (RG-3): look at those
    return any(t.requires_grad for t in inputs if t.is_floating_point())
""",
    ),
    Wrong(
        "01",
        "ex2_output_requires_grad",
        EDGE,
        "a view answers with its base's flag: views made under no_grad, or leaf views given "
        "requires_grad, are misjudged (held-back set, 2026-12-06)",
        """
def output_requires_grad(*inputs):
    # a view shares its base's data, so it shares its base's flag
    return any((t._base if t._base is not None else t).requires_grad for t in inputs)
""",
    ),
    Wrong(
        "07",
        "ex5_soft_clip",
        EDGE,
        "tanh and its derivative from exp(2x/limit), clamped at ±40 'against overflow': "
        "exp(40) is inf in float16 (any dtype allowed), NaN there (held-back set, 2026-12-06)",
        """
class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, limit):
        ctx.save_for_backward(x)
        ctx.limit = limit
        e = torch.exp(2 * (x / limit).clamp(-40.0, 40.0))
        return limit * (e - 1) / (e + 1)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        e = torch.exp(2 * (x / ctx.limit).clamp(-40.0, 40.0))
        t = (e - 1) / (e + 1)
        return grad_out * (1 - t * t), None


def soft_clip(x, limit):
    return SoftClip.apply(x, limit)
""",
    ),
    Wrong(
        "07",
        "ex6_softplus",
        EDGE,
        "log1p(exp(x)) below softplus' threshold 20, x above: exp overflows in float16 for 11"
        " < x <= 20 (any dtype is allowed) (held-back set, 2026-12-06)",
        """
class Softplus(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return torch.where(x > 20, x, torch.log1p(torch.exp(x)))

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(x)


def softplus(x):
    return Softplus.apply(x)
""",
    ),
    Wrong(
        "02",
        "ex2_count_saved_bytes",
        SIDE_EFFECT,
        "enters the hooks with __enter__/__exit__ without try/finally: an fn that raises "
        "leaves the hooks installed (held-back set, 2026-12-06)",
        """
def count_saved_bytes(fn, *args):
    sizes = []

    def pack(t):
        sizes.append(t.element_size() * t.nelement())
        return t.detach()

    hooks = torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t)
    hooks.__enter__()
    result = fn(*args)
    hooks.__exit__(None, None, None)
    return result, sum(sizes)
""",
    ),
    Wrong(
        "02",
        "ex2_count_saved_bytes",
        EDGE,
        "unpack drops each saved tensor after its first use: a second backward "
        "(retain_graph=True) breaks (held-back set, 2026-12-06)",
        """
def count_saved_bytes(fn, *args):
    store, total = [], 0

    def pack(saved):
        nonlocal total
        total += saved.element_size() * saved.nelement()
        store.append(saved.detach())
        return len(store) - 1

    def unpack(i):
        t, store[i] = store[i], None   # free each saved tensor as soon as backward used it
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        result = fn(*args)
    return result, total
""",
    ),
    Wrong(
        "08",
        "ex1_train_epoch",
        EDGE,
        "gradient norm clipped at 10 'for stability' before each step: a large gradient is "
        "not the batch's gradient (held-back set, 2026-12-06)",
        """
import torch.nn.functional as F


def train_epoch(model, optimizer, batches):
    '''One pass over the training batches; returns the loss of each batch.'''
    losses = []
    for x, y in batches:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=10.0)
        optimizer.step()
        losses.append(loss.item())
    return losses
""",
    ),
    Wrong(
        "08",
        "ex2_validate",
        EDGE,
        "every batch's output kept (detached, under no_grad) and the losses computed after "
        "the loop: memory grows with the number of batches (held-back set, 2026-12-06)",
        """
import torch.nn.functional as F


def validate(model, batches):
    '''Mean validation loss, measured in evaluation mode.'''
    was_training = model.training
    model.eval()
    with torch.no_grad():
        outputs = [(model(x), y) for x, y in batches]  # no graph is kept under no_grad
    model.train(was_training)
    return sum(F.cross_entropy(o, y).item() for o, y in outputs) / len(outputs)
""",
    ),
    Wrong(
        "06",
        "ex5_epoch_mean_loss",
        EDGE,
        "losses weighted by len(batch): not the mean of the returned losses when the last "
        "batch is short (held-back set, 2026-12-06)",
        """
def epoch_mean_loss(step, batches):
    total, rows = 0, 0
    for batch in batches:
        n = len(batch)  # weight each loss by its batch size: a short last batch counts less
        total = total + step(batch) * n
        rows += n
    return (total / rows).item()
""",
    ),
    Wrong(
        "07",
        "ex3_backward_is_correct",
        EDGE,
        "x flattened to a vector before gradcheck: a function of the last dimension is "
        "checked at another input (held-back set, 2026-12-06)",
        """
def backward_is_correct(fn, x):
    x64 = x.detach().reshape(-1).double().requires_grad_()  # gradcheck on a flat vector
    return torch.autograd.gradcheck(fn, (x64,), raise_exception=False)
""",
    ),
    Wrong(
        "03",
        "ex5_mc_dropout_predict",
        EDGE,
        "special-cases samples=1 with a zero std instead of preds.std(dim=0) (nan) (held-back"
        " set, 2026-12-06)",
        """
def mc_dropout_predict(model, x, samples):
    modes = [m.training for m in model.modules()]
    model.eval()
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.train()
    try:
        with torch.no_grad():
            preds = torch.stack([model(x) for _ in range(samples)])
    finally:
        for m, mode in zip(model.modules(), modes):
            m.train(mode)
    std = preds.std(dim=0) if samples > 1 else torch.zeros_like(preds[0])  # one sample: no spread
    return preds.mean(dim=0), std
""",
    ),
    Wrong(
        "04",
        "ex5_g_step",
        EDGE,
        "G's gradient norm-clipped to 1.0 before opt_g.step() (held-back set, 2026-12-06)",
        """
import torch.nn.functional as F


def g_step(G, D, opt_g, z):
    opt_g.zero_grad()
    logits = D(G(z))
    loss_g = F.binary_cross_entropy_with_logits(logits, torch.ones_like(logits))
    loss_g.backward()
    torch.nn.utils.clip_grad_norm_(G.parameters(), 1.0)  # stabilise the generator
    opt_g.step()
    return loss_g.item()
""",
    ),
    Wrong(
        "06",
        "ex1_benchmark",
        EDGE,
        "median by torch.tensor(durations).median().item(): durations rounded to float32 "
        "(held-back set, 2026-12-06)",
        """
def benchmark(work, synchronize, clock, warmup, repeats):
    for _ in range(warmup):
        work()
    durations = []
    for _ in range(repeats):
        synchronize()
        start = clock()
        work()
        synchronize()
        durations.append(clock() - start)
    return torch.tensor(durations).median().item()
""",
    ),
    Wrong(
        "08",
        "ex1_train_epoch",
        EDGE,
        "the step skipped when a batch's loss is not finite: not one step per batch (held-"
        "back set, 2026-12-06)",
        """
import torch.nn.functional as F


def train_epoch(model, optimizer, batches):
    '''One pass over the training batches; returns the loss of each batch.'''
    losses = []
    for x, y in batches:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        if torch.isfinite(loss):  # a bad batch must not spoil the weights
            loss.backward()
            optimizer.step()
        losses.append(loss.item())
    return losses
""",
    ),
    Wrong(
        "06",
        "ex4_load_batch",
        EDGE,
        "torch.as_tensor(t, device=device): a blocking copy, no non_blocking (held-back set, "
        "2026-12-06)",
        """
def load_batch(batch, device):
    return tuple(torch.as_tensor(t, device=device) for t in batch)  # no copy when already there
""",
    ),
    Wrong(
        "06",
        "ex6_overlap_copy",
        EDGE,
        "destination allocated on the current stream before the side block, filled on the "
        "side stream (held-back set, 2026-12-06)",
        """
def overlap_copy(compute, batch, side, cuda, device):
    moved = torch.empty_like(batch, device=device)  # the destination, ready before the copy
    with cuda.stream(side):
        moved.copy_(batch, non_blocking=True)
    result = compute()
    main = cuda.current_stream()
    main.wait_stream(side)
    moved.record_stream(main)
    return result, moved
""",
    ),
    Wrong(
        "06",
        "ex6_overlap_copy",
        EDGE,
        "the side-stream tensor cloned on the current stream instead of record_stream (held-"
        "back set, 2026-12-06)",
        """
def overlap_copy(compute, batch, side, cuda, device):
    with cuda.stream(side):
        staged = batch.to(device, non_blocking=True)
    result = compute()
    main = cuda.current_stream()
    main.wait_stream(side)
    moved = staged.clone()  # memory of the current stream: no record_stream needed
    return result, moved
""",
    ),
    Wrong(
        "06",
        "ex4_load_batch",
        EDGE,
        "contiguous() before each copy: a pinned non-contiguous view is copied to pageable "
        "memory first (held-back set, 2026-12-06)",
        """
def load_batch(batch, device):
    # the DMA engine wants dense memory: make each tensor contiguous first
    return tuple(t.contiguous().to(device, non_blocking=True) for t in batch)
""",
    ),
    Wrong(
        "01",
        "ex1_product_grads",
        SIDE_EFFECT,
        "silences every warning with warnings.filterwarnings('ignore') and leaves the filter "
        "on (held-back set, 2026-12-06)",
        """
import warnings

def product_grads(a, b):
    warnings.filterwarnings("ignore")  # keep the output clean of autograd's UserWarnings
    a = a.detach().clone().requires_grad_()
    b = b.detach().clone().requires_grad_()
    c = a * b
    c.retain_grad()
    y = (c ** 2).sum()
    y.backward()
    return a.grad, b.grad, c.grad
""",
    ),
    Wrong(
        "02",
        "ex1_evaluate",
        SIDE_EFFECT,
        "warnings.simplefilter('ignore') to keep the log clean, never undone: the volatile "
        "warning (NG-1) disappears for the caller (held-back set, 2026-12-06)",
        """
import warnings

def evaluate(model, batches):
    warnings.simplefilter("ignore")  # no warning noise in the evaluation log
    total_loss, total_acc = 0.0, 0.0
    with torch.no_grad():
        for inputs, labels in batches:
            logits = model(inputs)
            total_loss += torch.nn.functional.cross_entropy(logits, labels).item()
            total_acc += (logits.argmax(dim=1) == labels).float().mean().item()
    return total_loss / len(batches), total_acc / len(batches)
""",
    ),
    Wrong(
        "02",
        "ex5_input_saliency",
        SIDE_EFFECT,
        "filters out every UserWarning for the rest of the session (held-back set, 2026-12-06)",
        """
import warnings

def input_saliency(model, x):
    with warnings.catch_warnings():
        pass
    # inference-mode warnings are noise here
    warnings.filterwarnings("ignore", category=UserWarning)
    with torch.inference_mode(False), torch.enable_grad():
        x = x.clone().requires_grad_()
        (saliency,) = torch.autograd.grad(model(x).sum(), x)
    return saliency
""",
    ),
    Wrong(
        "04",
        "ex4_d_step",
        EDGE,
        "clears only opt_d.param_groups[0]'s gradients: with several param groups the stale "
        "gradients of the other groups are added into the step (fourth held-back set, "
        "2026-12-06)",
        """
import torch
import torch.nn.functional as F


def d_step(G, D, opt_d, real, z):
    for p in opt_d.param_groups[0]["params"]:
        p.grad = None
    with torch.no_grad():
        fake = G(z)
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
        "ex5_g_step",
        EDGE,
        "clears only opt_g.param_groups[0]'s gradients: with several param groups stale "
        "gradients stay in the others and are added into the step (fourth held-back set, "
        "2026-12-06)",
        """
import torch
import torch.nn.functional as F


def g_step(G, D, opt_g, z):
    for p in opt_g.param_groups[0]["params"]:
        p.grad = None
    logits = D(G(z))
    loss_g = F.binary_cross_entropy_with_logits(logits, torch.ones_like(logits))
    loss_g.backward()
    opt_g.step()
    return loss_g.item()
""",
    ),
    Wrong(
        "08",
        "ex1_train_epoch",
        EDGE,
        "clears .grad by hand for optimizer.param_groups[0] only: with several parameter "
        "groups the others keep accumulating (fourth held-back set, 2026-12-06)",
        """
import torch
import torch.nn.functional as F


def train_epoch(model, optimizer, batches):
    '''One pass over the training batches; returns the loss of each batch.'''
    params = optimizer.param_groups[0]["params"]
    losses = []
    for x, y in batches:
        for p in params:
            p.grad = None
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
""",
    ),
    Wrong(  # right until every check drew a call that raises (issue 33)
        "03",
        "ex5_mc_dropout_predict",
        SIDE_EFFECT,
        "train() everywhere, then every BatchNorm back to eval(), modes put back by name"
        "; the modes put back after the work, not in finally, so a call that raises "
        "leaves them changed",
        """
def mc_dropout_predict(model, x, samples):
    modes = {name: m.training for name, m in model.named_modules()}
    model.train()
    for m in model.modules():
        if isinstance(m, (torch.nn.BatchNorm1d, torch.nn.BatchNorm2d)):
            m.eval()
    with torch.no_grad():
        preds = torch.stack([model(x) for _ in range(samples)])
    for name, m in model.named_modules():
        m.train(modes[name])
    return preds.mean(dim=0), preds.std(dim=0)
""",
    ),
    Wrong(  # right until every check drew a call that raises (issue 33)
        "03",
        "ex2_eval_grads",
        SIDE_EFFECT,
        "the dict holds the .grad tensors themselves (zero_grad set them to None first)"
        "; the modes put back after the work, not in finally, so a call that raises "
        "leaves them changed",
        """
def eval_grads(model, x, target):
    modes = [m.training for m in model.modules()]
    model.eval()
    model.zero_grad()
    torch.nn.functional.mse_loss(model(x), target).backward()
    for m, mode in zip(model.modules(), modes):
        m.train(mode)
    return {name: p.grad for name, p in model.named_parameters()}
""",
    ),
    Wrong(  # right until every check drew a call that raises (issue 33)
        "03",
        "ex2_eval_grads",
        SIDE_EFFECT,
        "train(False) per module, the modes kept in a dict by name, stale .grad set to None"
        "; the modes put back after the work, not in finally, so a call that raises "
        "leaves them changed",
        """
def eval_grads(model, x, target):
    modes = {name: m.training for name, m in model.named_modules()}
    for m in model.modules():
        m.train(False)
    for p in model.parameters():
        p.grad = None
    loss = torch.nn.functional.mse_loss(model(x), target)
    loss.backward()
    grads = {name: p.grad.detach().clone() for name, p in model.named_parameters()}
    for name, m in model.named_modules():
        m.train(modes[name])
    return grads
""",
    ),
    Wrong(  # right until every check drew a call that raises (issue 33)
        "03",
        "ex3_validate",
        SIDE_EFFECT,
        "a while loop over an iterator, inference_mode, the mode restored per module"
        "; the modes put back after the work, not in finally, so a call that raises "
        "leaves them changed",
        """
def validate(model, batches):
    modes = [m.training for m in model.modules()]
    model.train(False)
    total, count = 0.0, 0
    it = iter(batches)
    with torch.inference_mode():
        while True:
            try:
                x, y = next(it)
            except StopIteration:
                break
            total += torch.nn.functional.mse_loss(model(x), y).item()
            count += 1
    for m, mode in zip(model.modules(), modes):
        m.train(mode)
    return total / count
""",
    ),
    Wrong(  # right until every check drew a call that raises (issue 33)
        "03",
        "ex5_mc_dropout_predict",
        SIDE_EFFECT,
        "outputs written into a preallocated tensor by index, var().sqrt()"
        "; the modes put back after the work, not in finally, so a call that raises "
        "leaves them changed",
        """
def mc_dropout_predict(model, x, samples):
    modes = {m: m.training for m in model.modules()}
    model.eval()
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.train(True)
    with torch.no_grad():
        first = model(x)
        preds = first.new_empty((samples, *first.shape))
        preds[0] = first
        for i in range(1, samples):
            preds[i] = model(x)
    for m, mode in modes.items():
        m.train(mode)
    return preds.mean(0), preds.var(0).sqrt()
""",
    ),
    Wrong(
        "01",
        "ex2_output_requires_grad",
        EDGE,
        "recursive: first input's flag or the rule applied to the rest: 'any number of "
        "tensors' of a thousand or more blows Python's recursion limit (fourth held-back set,"
        " 2026-12-06)",
        """
import torch

def output_requires_grad(*inputs):
    if not inputs:
        return False
    return bool(inputs[0].requires_grad) or output_requires_grad(*inputs[1:])
""",
    ),
    Wrong(
        "01",
        "ex4_per_batch_grads",
        EDGE,
        "clears the leftover gradient with w.grad.mul_(0) when there is one: a leftover nan "
        "or inf stays nan (0 * inf = nan) and poisons the first copy (fourth held-back set, "
        "2026-12-06)",
        """
import torch

def per_batch_grads(w, batches):
    grads = []
    for x in batches:
        if w.grad is not None:
            w.grad.mul_(0)
        loss = ((x @ w) ** 2).mean()
        loss.backward()
        grads.append(w.grad.clone())
    return grads
""",
    ),
    Wrong(
        "01",
        "ex7_to_device",
        EDGE,
        "moves each child module with .to(...) in a loop over model.children(): parameters "
        "and buffers registered on the top module itself are never converted (fourth held-"
        "back set, 2026-12-06)",
        """
import torch

def to_device(batch, model, device, dtype):
    for child in model.children():
        child.to(device=device, dtype=dtype)
    batch = batch.to(device=device, dtype=dtype)
    return batch, model
""",
    ),
    Wrong(
        "02",
        "ex1_evaluate",
        SIDE_EFFECT,
        "switches grad mode off with torch.set_grad_enabled(False) and puts the saved mode "
        "back at the end, but not in a finally: when a batch raises (bad label, shape "
        "mismatch) the caller is left with grad mode off (fourth held-back set, 2026-12-06)",
        """
import torch
import torch.nn.functional as F

def evaluate(model, batches):
    previous = torch.is_grad_enabled()
    torch.set_grad_enabled(False)
    losses, accs = [], []
    for inputs, labels in batches:
        logits = model(inputs)
        losses.append(F.cross_entropy(logits, labels).item())
        accs.append((logits.argmax(dim=1) == labels).float().mean().item())
    torch.set_grad_enabled(previous)
    return sum(losses) / len(losses), sum(accs) / len(accs)
""",
    ),
    Wrong(
        "02",
        "ex3_run_step",
        SIDE_EFFECT,
        "saves torch.is_grad_enabled(), calls torch.set_grad_enabled(train) as a function and"
        " restores the saved mode at the end, not in a finally (not the single block asked): "
        "an exception in the forward pass leaves the caller's grad mode changed (fourth held-"
        "back set, 2026-12-06)",
        """
import torch
import torch.nn.functional as F

def run_step(model, inputs, labels, optimizer, train):
    was_enabled = torch.is_grad_enabled()
    torch.set_grad_enabled(train)
    loss = F.cross_entropy(model(inputs), labels)
    if train:
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    torch.set_grad_enabled(was_enabled)
    return loss.item()
""",
    ),
    Wrong(
        "03",
        "ex2_eval_grads",
        SIDE_EFFECT,
        "model.eval(), backward, then model.train(was_training) without try/finally: if the "
        "forward or the loss raises, the caller's training model is left in evaluation mode "
        "(fourth held-back set, 2026-12-06)",
        """
import torch
import torch.nn.functional as F

def eval_grads(model, x, target):
    was_training = model.training
    model.eval()
    for p in model.parameters():
        p.grad = None
    F.mse_loss(model(x), target).backward()
    model.train(was_training)
    return {name: p.grad.clone() for name, p in model.named_parameters()}
""",
    ),
    Wrong(
        "03",
        "ex5_mc_dropout_predict",
        SIDE_EFFECT,
        "remembers the top module's mode and each Dropout's mode, then restores with "
        "model.train(top) and the Dropouts' flags: a model that arrived with a BatchNorm in "
        "eval inside a training model gets that BatchNorm back in training (fourth held-back "
        "set, 2026-12-06)",
        """
import torch
import torch.nn as nn

def mc_dropout_predict(model, x, samples):
    top = model.training
    drops = [m for m in model.modules() if isinstance(m, nn.Dropout)]
    drop_modes = [d.training for d in drops]
    model.eval()
    for d in drops:
        d.train()
    with torch.no_grad():
        preds = torch.stack([model(x) for _ in range(samples)])
    model.train(top)
    for d, mode in zip(drops, drop_modes):
        d.train(mode)
    return preds.mean(dim=0), preds.std(dim=0)
""",
    ),
    Wrong(
        "05",
        "ex4_train_and_log",
        SIDE_EFFECT,
        "the hook keeps the output tensor and the mean is read after the forward pass: an in-"
        "place op after the layer has changed it by then (fourth held-back set, 2026-12-06)",
        """
import torch


def train_and_log(model, layer_name, batches, lr):
    layer = dict(model.named_modules())[layer_name]
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    seen = {}
    handle = layer.register_forward_hook(lambda m, a, out: seen.__setitem__("out", out))
    log = []
    try:
        for x, y in batches:
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            log.append(seen["out"].mean().item())
            loss.backward()
            optimizer.step()
    finally:
        handle.remove()
    return log
""",
    ),
    Wrong(
        "07",
        "ex1_silu",
        SIDE_EFFECT,
        "torch.set_grad_enabled(True) called bare 'so the Function is recorded': the caller's"
        " no_grad block is switched back on (fourth held-back set, 2026-12-06)",
        """
import torch


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
    torch.set_grad_enabled(True)   # make sure the Function is recorded
    return SiLU.apply(x)
""",
    ),
    Wrong(
        "07",
        "ex5_soft_clip",
        EDGE,
        "derivative written 1 - y**2 / limit**2: y**2 overflows to inf in float16 once the "
        "limit passes ~256, gradient -inf (fourth held-back set, 2026-12-06)",
        """
import torch


class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, limit):
        y = limit * torch.tanh(x / limit)
        ctx.save_for_backward(y)
        ctx.limit = limit
        return y

    @staticmethod
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        # 1 - tanh^2 = 1 - y^2 / limit^2
        return grad_out * (1 - y ** 2 / ctx.limit ** 2), None


def soft_clip(x, limit):
    return SoftClip.apply(x, limit)
""",
    ),
    Wrong(
        "08",
        "ex7_swish",
        EDGE,
        "backward turns the saved sigmoid into the derivative in place: a second backward "
        "through the retained graph finds a modified saved tensor and raises (fourth held-"
        "back set, 2026-12-06)",
        """
import torch


class Swish(torch.autograd.Function):
    '''x * sigmoid(beta * x); beta is a Python float.'''

    @staticmethod
    def forward(ctx, x, beta):
        s = torch.sigmoid(beta * x)
        ctx.save_for_backward(x, s)
        ctx.beta = beta
        return x * s

    @staticmethod
    def backward(ctx, grad_output):
        x, s = ctx.saved_tensors
        # turn the saved sigmoid into the derivative in place: no new tensor
        s.mul_(1 + ctx.beta * x * (1 - s))
        return grad_output * s, None


def swish(x, beta):
    return Swish.apply(x, beta)
""",
    ),
    Wrong(
        "09",
        "ex3_autocast_predict",
        SIDE_EFFECT,
        "every module's mode saved and restored, but not in a finally: when the forward pass "
        "raises the model stays in eval mode (fourth held-back set, 2026-12-06)",
        """
import torch


def autocast_predict(model, x):
    dtype = torch.bfloat16 if x.device.type == "cpu" else torch.float16
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    with torch.inference_mode(), torch.autocast(device_type=x.device.type, dtype=dtype):
        out = model(x)
    for m, training in modes:
        m.training = training
    return out.float()
""",
    ),
    Wrong(
        "03",
        "ex6_finetune_mode",
        EDGE,
        "also calls torch.set_grad_enabled(True) 'because training needs gradients': inside a"
        " caller's no_grad block this switches grad mode on for the rest of it (fourth held-"
        "back set, 2026-12-06)",
        """
import torch
import torch.nn as nn

def finetune_mode(model):
    torch.set_grad_enabled(True)
    model.train()
    for module in model.modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            module.eval()
""",
    ),
    Wrong(
        "01",
        "ex5_backward_seed",
        EDGE,
        "makes the seed under @torch.inference_mode() ('a constant needs no autograd'): it "
        "returns an inference tensor, and the caller's in-place scaling of the result outside"
        " inference mode raises (fifth held-back set, 2026-12-06)",
        """
import torch

@torch.inference_mode()
def backward_seed(loss):
    return torch.ones_like(loss)
""",
    ),
    Wrong(
        "02",
        "ex2_count_saved_bytes",
        EDGE,
        "pack files each saved tensor in a module-level dict under a counter key, and the "
        "dict is cleared at the start of every call: after a second call, backward through "
        "the first call's result finds its tensors gone (KeyError) (fifth held-back set, "
        "2026-12-06)",
        """
import torch

_STORE = {}

def count_saved_bytes(fn, *args):
    _STORE.clear()  # start each measurement clean
    total = 0

    def pack(saved):
        nonlocal total
        total += saved.element_size() * saved.nelement()
        key = len(_STORE)
        _STORE[key] = saved.detach()
        return key

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda key: _STORE[key]):
        result = fn(*args)
    return result, total
""",
    ),
    Wrong(
        "03",
        "ex5_mc_dropout_predict",
        EDGE,
        "std from the one-pass formula sqrt((E[p^2] - E[p]^2) * S/(S-1)): cancellation gives "
        "wrong values, even nan from a negative variance, when the outputs are large compared"
        " with their spread (fifth held-back set, 2026-12-06)",
        """
import torch

def mc_dropout_predict(model, x, samples):
    modes = [m.training for m in model.modules()]
    model.eval()
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.train()
    try:
        with torch.no_grad():
            preds = torch.stack([model(x) for _ in range(samples)])
    finally:
        for m, mode in zip(model.modules(), modes):
            m.train(mode)
    mean = preds.mean(dim=0)
    spread = preds.pow(2).mean(dim=0) - mean.pow(2)
    var = spread * samples / (samples - 1) if samples > 1 else mean * float("nan")
    return mean, var.sqrt()
""",
    ),
    Wrong(
        "04",
        "ex1_frozen_copy",
        STATE,
        "share=True results memoised by id(t): the second call returns the first result, "
        "which the caller has since turned requires_grad on for (fifth held-back set, "
        "2026-12-06)",
        """
_shared = {}


def frozen_copy(t, share):
    if share:
        # one shared handle per tensor is enough
        if id(t) not in _shared:
            _shared[id(t)] = t.detach()
        return _shared[id(t)]
    return t.detach().clone()
""",
    ),
    Wrong(
        "07",
        "ex1_silu",
        EDGE,
        "the derivative multiplied out as (1 + x)·s − x·s²: for large x in bfloat16 (e.g. "
        "300), 1 + x rounds to x and the two big terms cancel to 0 instead of 1 (fifth held-"
        "back set, 2026-12-06)",
        """
import torch


class SiLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        # s * (1 + x * (1 - s)) multiplied out
        return grad_out * ((1 + x) * s - x * s * s)


def silu(x):
    return SiLU.apply(x)
""",
    ),
    Wrong(
        "02",
        "ex1_evaluate",
        EDGE,
        "'nothing recorded' by freezing the model's parameters (flags restored in finally) "
        "instead of no_grad: inputs that require grad still record a graph and save tensors "
        "for backward (held back, 2026-12-06)",
        """
import torch
import torch.nn.functional as F

def evaluate(model, batches):
    flags = [p.requires_grad for p in model.parameters()]
    model.requires_grad_(False)
    try:
        total_loss, total_acc = 0.0, 0.0
        for inputs, labels in batches:
            logits = model(inputs)
            total_loss += F.cross_entropy(logits, labels).item()
            total_acc += (logits.argmax(dim=1) == labels).float().mean().item()
    finally:
        for p, f in zip(model.parameters(), flags):
            p.requires_grad_(f)
    return total_loss / len(batches), total_acc / len(batches)
""",
    ),
    Wrong(
        "01",
        "ex2_output_requires_grad",
        EDGE,
        "treats a tensor that holds a .grad as requiring grad: after the caller turns "
        "requires_grad off on inputs that keep their .grad (the prompt's third call), it "
        "still answers True (seventh held-back set, 2026-12-06)",
        """
import torch

def output_requires_grad(*inputs):
    # a tensor that already carries a gradient is clearly part of training
    return any(t.requires_grad or t.grad is not None for t in inputs)
""",
    ),
    Wrong(
        "05",
        "ex3_mask_output",
        EDGE,
        "expands the mask to the first output's shape once and caches it in the hook's "
        "closure 'to save the broadcast': the next forward pass with another batch size "
        "raises a size mismatch, although the mask must broadcast over any batch (seventh "
        "held-back set, 2026-12-06)",
        """
import torch

def mask_output(module, mask):
    cache = {}

    def hook(module, args, output):
        if "mask" not in cache:  # broadcast the mask once, not on every forward pass
            cache["mask"] = mask.expand_as(output).to(output.dtype)
        return output * cache["mask"]

    return module.register_forward_hook(hook)
""",
    ),
    Wrong(
        "05",
        "ex4_train_and_log",
        EDGE,
        "wraps any error in a new RuntimeError with the step number 'for a clearer message': "
        "the hook is removed, but the caller no longer receives the model's own exception (an"
        " except clause for its type, e.g. ValueError, misses it) (seventh held-back set, "
        "2026-12-06)",
        """
import torch

def train_and_log(model, layer_name, batches, lr):
    layer = model.get_submodule(layer_name)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    log = []
    handle = layer.register_forward_hook(lambda m, args, out: log.append(out.mean().item()))
    try:
        for step, (x, y) in enumerate(batches):
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
    except Exception as error:
        raise RuntimeError(f"train_and_log failed at step {step}: {error}") from error
    finally:
        handle.remove()
    return log
""",
    ),
    Wrong(
        "06",
        "ex4_load_batch",
        EDGE,
        "copies both with non_blocking=True but casts the targets to torch.long 'because "
        "class labels are int64': float targets (regression, or bfloat16/float64 batches) are"
        " truncated to integers, and the prompt says dtypes unchanged (seventh held-back set,"
        " 2026-12-06)",
        """
import torch

def load_batch(batch, device):
    inputs, targets = batch
    inputs = inputs.to(device, non_blocking=True)
    targets = targets.to(device, dtype=torch.long, non_blocking=True)  # class labels are int64
    return inputs, targets
""",
    ),
    Wrong(
        "09",
        "ex1_checkpointed_forward",
        EDGE,
        "checkpoints only blocks that have parameters and runs Dropout/Tanh blocks plainly: "
        "those blocks are not wrapped in their own checkpoint and keep their activations, so "
        "backward does not recompute every block (seventh held-back set, 2026-12-06)",
        """
from torch.utils.checkpoint import checkpoint


def checkpointed_forward(blocks, x):
    h = x
    for block in blocks:
        if any(True for _ in block.parameters()):
            h = checkpoint(block, h, use_reentrant=False)
        else:
            h = block(h)      # nothing to gain: no weights in this block
    return h
""",
    ),
    Wrong(
        "06",
        "ex4_load_batch",
        EDGE,
        "moves each tensor's storage into shared memory with share_memory_() first 'as "
        "DataLoader workers do, for a faster transfer': an extra host copy, and the caller's "
        "batch tensors now live in different (shared) memory (eighth held-back set, "
        "2026-12-06)",
        """
import torch


def load_batch(batch, device):
    moved = []
    for t in batch:
        t.share_memory_()  # shared memory transfers faster
        moved.append(t.to(device, non_blocking=True))
    return tuple(moved)
""",
    ),
    Wrong(
        "01",
        "ex3_make_trainable",
        EDGE,
        "builds the tensor in float32 and then converts it to the caller's default dtype: "
        "under float64 the result is float64 but holds values already rounded to float32 "
        "(2**24+1 becomes 2**24), right in neither dtype (eighth held-back set, 2026-12-06)",
        """
import torch

def make_trainable(values, device):
    t = torch.tensor(values, dtype=torch.float32, device=device)
    t = t.to(torch.get_default_dtype())   # follow the caller's default dtype
    return t.requires_grad_()
""",
    ),
    Wrong(
        "01",
        "ex4_per_batch_grads",
        EDGE,
        "lets the gradients accumulate and recovers each batch's by subtracting the running "
        "total: after a large-valued batch, a small batch's gradient is lost to float "
        "cancellation (eighth held-back set, 2026-12-06)",
        """
import torch

def per_batch_grads(w, batches):
    w.grad = None
    grads = []
    seen = torch.zeros_like(w)
    for x in batches:
        loss = ((x @ w) ** 2).mean()
        loss.backward()                     # w.grad accumulates
        grads.append(w.grad - seen)         # this batch's share
        seen = w.grad.clone()
    return grads
""",
    ),
    Wrong(
        "05",
        "ex3_mask_output",
        SIDE_EFFECT,
        "the hook recomputes the layer with module.forward(*args) and returns that times the "
        "mask 'to get a fresh output that nothing else saved': right values, but a "
        "BatchNorm1d in training mode runs twice per call and updates its running statistics "
        "twice (eighth held-back set, 2026-12-06)",
        """
import torch


def mask_output(module, mask):
    def hook(mod, args, output):
        fresh = mod.forward(*args)  # forward() does not run the hooks again
        return fresh * mask
    return module.register_forward_hook(hook)
""",
    ),
    Wrong(
        "07",
        "ex1_silu",
        EDGE,
        "backward flattens the incoming gradient with grad_out.view(-1): an incoming gradient"
        " that is an expanded (stride-0) tensor, as y.sum(0) or any broadcast upstream gives,"
        " cannot be viewed and backward raises (eighth held-back set, 2026-12-06)",
        """
import torch

class SiLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        g = grad_out.view(-1)          # work on flat vectors, any shape
        xf = x.reshape(-1)
        s = torch.sigmoid(xf)
        return (g * s * (1 + xf * (1 - s))).view(x.shape)


def silu(x):
    return SiLU.apply(x)
""",
    ),
    Wrong(
        "04",
        "ex1_frozen_copy",
        SIDE_EFFECT,
        "calls t.retain_grad() first 'so autograd keeps watching t': values and sharing are "
        "right, but when t is a non-leaf the caller's t is changed (retains_grad turns on and"
        " its .grad gets filled by the next backward) - the prompt says leave t as it is "
        "(ninth held-back set, 2026-12-06)",
        """
import torch


def frozen_copy(t, share):
    # make sure autograd keeps watching t, so in-place changes through the result are noticed
    t.retain_grad()
    if share:
        return t.detach()
    return t.detach().clone()
""",
    ),
    Wrong(
        "07",
        "ex5_soft_clip",
        EDGE,
        "backward zeroes the gradient where |y| > 0.999·limit 'because tanh is flat there': "
        "the true derivative 1 − (y/limit)² is about 2e-3 there, not 0 (ninth held-back set, "
        "2026-12-06)",
        """
import torch

class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, limit):
        y = limit * torch.tanh(x / limit)
        ctx.save_for_backward(y)
        ctx.limit = limit
        return y

    @staticmethod
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        r = y / ctx.limit
        d = torch.where(r.abs() > 0.999, torch.zeros_like(r), 1 - r * r)
        return grad_out * d, None


def soft_clip(x, limit):
    return SoftClip.apply(x, limit)
""",
    ),
    Wrong(
        "09",
        "ex3_autocast_predict",
        SIDE_EFFECT,
        "restores the modes by calling m.train() on every module that was training (and "
        "nothing on the others): train() is recursive, so the root's call switches submodules"
        " that arrived in evaluation mode back to training (ninth held-back set, 2026-12-06)",
        """
import torch


def autocast_predict(model, x):
    dtype = torch.bfloat16 if x.device.type == "cpu" else torch.float16
    were_training = [m for m in model.modules() if m.training]
    model.eval()
    try:
        with torch.inference_mode(), torch.autocast(device_type=x.device.type, dtype=dtype):
            out = model(x)
    finally:
        for m in were_training:
            m.train()
    return out.float()
""",
    ),
    Wrong(
        "01",
        "ex4_per_batch_grads",
        EDGE,
        "squeezes each batch 'to drop stray singleton dims': with d = 1 a (n, 1) batch "
        "becomes (n,) and x @ w raises (and a batch of one sample becomes 1-D) (tenth held-"
        "back set, 2026-12-06)",
        """
def per_batch_grads(w, batches):
    grads = []
    for x in batches:
        w.grad = None
        x = x.squeeze()          # drop stray singleton dimensions
        loss = ((x @ w) ** 2).mean()
        loss.backward()
        grads.append(w.grad.clone())
    return grads
""",
    ),
    Wrong(
        "04",
        "ex1_frozen_copy",
        SIDE_EFFECT,
        "share=True calls share_memory_() on the detached tensor, reading 'share' as 'shared "
        "memory': values are shared, but the caller's t has its storage moved into a shared-"
        "memory segment (t.is_shared() turns True, its data_ptr changes) although the prompt "
        "says to leave t as it is (tenth held-back set, 2026-12-06)",
        """
import torch


def frozen_copy(t, share):
    d = t.detach()
    if share:
        # "share" = put the storage in shared memory so both tensors use it
        return d.share_memory_()
    return d.clone()
""",
    ),
    Wrong(
        "07",
        "ex6_softplus",
        EDGE,
        "forward takes a math-module path for 0-d inputs via x.item(): ordinary calls are "
        "right, but under vmap over a 1-d tensor every slice is 0-d and .item() on a batched "
        "tensor raises (tenth held-back set, 2026-12-06)",
        """
import math
import torch

class Softplus(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        if x.dim() == 0:
            # a single number: the math module is exact and cheap
            v = x.item()
            value = v + math.log1p(math.exp(-v)) if v > 0 else math.log1p(math.exp(v))
            return torch.tensor(value, dtype=x.dtype, device=x.device)
        return torch.nn.functional.softplus(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(x)


def softplus(x):
    return Softplus.apply(x)
""",
    ),
    Wrong(
        "07",
        "ex1_silu",
        EDGE,
        "backward takes a math-module fast path for 0-d inputs: math.exp(-v) overflows "
        "(OverflowError) for a 0-d x of -800 (float64/float32), where the tensor formula "
        "gives gradient 0 (tenth held-back set, 2026-12-06)",
        """
import math
import torch

class SiLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        if x.dim() == 0:
            # a scalar: plain math is faster than launching tensor kernels
            v = x.item()
            s = 1.0 / (1.0 + math.exp(-v))
            return grad_out * (s * (1 + v * (1 - s)))
        s = torch.sigmoid(x)
        return grad_out * s * (1 + x * (1 - s))


def silu(x):
    return SiLU.apply(x)
""",
    ),
    Wrong(
        "02",
        "ex5_input_saliency",
        SIDE_EFFECT,
        "puts the model in evaluation mode for the gradient 'so the map is deterministic' and "
        "restores the mode afterwards: a model that arrives training with Dropout gives the "
        "gradient of another forward pass than model(x) (tenth held-back set, 2026-12-06)",
        """
import torch


def input_saliency(model, x):
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode(False), torch.enable_grad():
            x = x.clone().requires_grad_()
            (saliency,) = torch.autograd.grad(model(x).sum(), x)
    finally:
        model.train(was_training)
    return saliency
""",
    ),
    Wrong(
        "01",
        "ex3_make_trainable",
        OBSERVABLE,
        "makes the tensor under @torch.inference_mode(): an inference tensor that "
        "requires grad, which autograd refuses to save when it meets a weight that "
        "requires grad (eleventh held-back set, 2026-12-06)",
        """
import torch


@torch.inference_mode()
def make_trainable(values, device):
    # making a tensor needs no autograd bookkeeping
    return torch.tensor(values, dtype=torch.float32, device=device, requires_grad=True)
""",
    ),
    Wrong(
        "06",
        "ex1_benchmark",
        SIDE_EFFECT,
        "turns Python's garbage collector off 'for stable timings' and never back on "
        "(eleventh held-back set, 2026-12-06)",
        """
import gc


def benchmark(work, synchronize, clock, warmup, repeats):
    gc.disable()  # no garbage-collection pauses inside the timed calls
    for _ in range(warmup):
        work()
    times = []
    for _ in range(repeats):
        synchronize()
        t0 = clock()
        work()
        synchronize()
        times.append(clock() - t0)
    times.sort()
    return times[repeats // 2]
""",
    ),
    Wrong(
        "06",
        "ex5_epoch_mean_loss",
        EDGE,
        "keeps the running sum in a float32 vector: float64 losses are summed in float32 "
        "(eleventh held-back set, 2026-12-06)",
        """
import torch


def epoch_mean_loss(step, batches):
    total = torch.zeros(1)
    for batch in batches:
        total += step(batch).detach()  # stays on the device, no read
    return total.item() / len(batches)
""",
    ),
    Wrong(
        "07",
        "ex2_quantise",
        EDGE,
        "writes the estimator as (q + x) - x.detach(): two roundings put values an ulp "
        "beside the grid (eleventh held-back set, 2026-12-06)",
        """
import torch


def quantise(x, step):
    q = torch.round(x / step) * step
    # straight through: the value of q, the gradient of x
    return q + x - x.detach()
""",
    ),
    Wrong(
        "07",
        "ex3_backward_is_correct",
        STATE,
        "keeps one float64 copy of x per data_ptr(): after the caller changed x in place "
        "the old values are checked (eleventh held-back set, 2026-12-06)",
        """
import torch


_copies = {}


def backward_is_correct(fn, x):
    # one float64 copy per input tensor (keyed by its memory), reused on later calls
    key = x.data_ptr()
    if key not in _copies:
        _copies[key] = x.detach().double()
    x64 = _copies[key].clone().requires_grad_()
    return torch.autograd.gradcheck(fn, (x64,), raise_exception=False)
""",
    ),
    Wrong(
        "08",
        "ex5_log_features",
        SIDE_EFFECT,
        "removes its hook by clearing the layer's _forward_hooks: the caller's own "
        "forward hook goes too (eleventh held-back set, 2026-12-06)",
        '''
def log_features(model, layer, batches):
    """The layer's output for each batch, stored detached."""
    features = []
    layer.register_forward_hook(lambda module, inputs, output: features.append(output.detach()))
    try:
        for x, _ in batches:
            model(x)
    finally:
        layer._forward_hooks.clear()  # remove the hook again
    return features
''',
    ),
    Wrong(
        "09",
        "ex3_autocast_predict",
        STATE,
        "remembers each model's modes per id() on the first call and puts those back on "
        "every later call (eleventh held-back set, 2026-12-06)",
        """
import torch


_modes_of = {}  # the modes each model had when we first saw it


def autocast_predict(model, x):
    dtype = torch.bfloat16 if x.device.type == "cpu" else torch.float16
    if id(model) not in _modes_of:
        _modes_of[id(model)] = [m.training for m in model.modules()]
    model.eval()
    try:
        with torch.inference_mode(), torch.autocast(device_type=x.device.type, dtype=dtype):
            out = model(x)
    finally:
        for m, training in zip(model.modules(), _modes_of[id(model)]):
            m.training = training
    return out.float()
""",
    ),
    Wrong(
        "07",
        "ex1_silu",
        EDGE,
        "builds SiLU with a factory and writes the slope as s·(1 + x − x·s): in bfloat16 "
        "at large magnitudes 1 + x − x·s cancels to 0 (eleventh held-back set, "
        "2026-12-06)",
        '''
import torch


def make_elementwise(f, df):
    """A custom Function from a forward formula f and its derivative df."""

    class Elementwise(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return f(x)

        @staticmethod
        def backward(ctx, grad_out):
            (x,) = ctx.saved_tensors
            return grad_out * df(x)

    return Elementwise


def _silu_value(x):
    return x * torch.special.expit(x)


def _silu_slope(x):
    s = torch.special.expit(x)
    return s * (1 + x - x * s)


SiLU = make_elementwise(_silu_value, _silu_slope)


def silu(x):
    return SiLU.apply(x)
''',
    ),
    Wrong(
        "05",
        "ex1_extract_features",
        SIDE_EFFECT,
        "removes its hooks by clearing each named layer's _forward_hooks: the caller's "
        "own forward hook goes too (twelfth held-back set, 2026-12-06)",
        """
import torch


def extract_features(model, names, x):
    modules = dict(model.named_modules())
    features = {}
    for name in names:
        def hook(module, args, output, name=name):
            features[name] = output.detach().clone().cpu()
        modules[name].register_forward_hook(hook)
    try:
        with torch.no_grad():
            model(x)
    finally:
        for name in names:
            modules[name]._forward_hooks.clear()
    return features
""",
    ),
    Wrong(
        "06",
        "ex2_to_host",
        EDGE,
        "synchronizes only when a tensor is_cuda: on another accelerator (MPS, XPU) its "
        "non_blocking copies are not waited for (twelfth held-back set, 2026-12-06)",
        """
def to_host(tensors, synchronize):
    copies = [t.to("cpu", non_blocking=True) for t in tensors]
    if any(t.is_cuda for t in tensors):
        synchronize()
    return copies
""",
    ),
    Wrong(
        "06",
        "ex3_pick_device",
        EDGE,
        "asks torch.cuda, then torch.backends.mps, and nothing else: on an XPU machine it "
        "returns cpu (twelfth held-back set, 2026-12-06)",
        """
import torch


def pick_device():
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")
""",
    ),
    Wrong(
        "07",
        "ex2_quantise",
        EDGE,
        "multiplies by 1 / step instead of dividing: for a step that is no power of two, "
        "ties round the other way (twelfth held-back set, 2026-12-06)",
        """
import torch


class Quantise(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, step):
        inv = 1.0 / step  # multiplying is cheaper than dividing
        return torch.round(x * inv) * step

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, None


def quantise(x, step):
    return Quantise.apply(x, step)
""",
    ),
    Wrong(
        "08",
        "ex7_swish",
        STATE,
        "keeps beta on the Function class: with two swish layers in one forward, the "
        "first layer's backward uses the second's beta (twelfth held-back set, "
        "2026-12-06)",
        '''
import torch


class Swish(torch.autograd.Function):
    """x * sigmoid(beta * x); beta is a Python float."""

    @staticmethod
    def forward(ctx, x, beta):
        Swish.beta = beta
        s = torch.sigmoid(beta * x)
        ctx.save_for_backward(x, s)
        return x * s

    @staticmethod
    def backward(ctx, grad_output):
        x, s = ctx.saved_tensors
        return grad_output * (s + Swish.beta * x * s * (1 - s)), None


def swish(x, beta):
    return Swish.apply(x, beta)
''',
    ),
    Wrong(
        "02",
        "ex4_frozen_features",
        OBSERVABLE,
        "calls backbone.forward(x) directly: the caller's own forward hook on the "
        "backbone never runs (thirteenth held-back set, 2026-12-06)",
        """
import torch


def frozen_features(backbone, x):
    with torch.no_grad():
        return backbone.forward(x)  # just the computation, nothing else
""",
    ),
    Wrong(
        "04",
        "ex2_detach_all",
        SIDE_EFFECT,
        "also sets each leaf's .grad to None: the gradient the caller had is lost "
        "(thirteenth held-back set, 2026-12-06)",
        """
def detach_all(tensors):
    result = []
    for t in tensors:
        if t.is_leaf:
            t.grad = None  # a detached tensor should not keep a gradient either
        try:
            result.append(t.detach_())
        except RuntimeError:
            result.append(t.detach())
    return result
""",
    ),
    Wrong(
        "05",
        "ex1_extract_features",
        STATE,
        "keeps a table of submodules per model: after the caller puts a copy of a layer "
        "in its place, it hooks the old one (thirteenth held-back set, 2026-12-06)",
        """
import torch


import functools


@functools.lru_cache(maxsize=None)
def _submodules(model):
    return dict(model.named_modules())


def extract_features(model, names, x):
    modules = _submodules(model)
    features = {}

    def keep(name):
        def hook(module, args, output):
            features[name] = output.detach().to("cpu", copy=True)

        return hook

    handles = [modules[name].register_forward_hook(keep(name)) for name in names]
    try:
        with torch.no_grad():
            model(x)
    finally:
        for handle in handles:
            handle.remove()
    return features
""",
    ),
    Wrong(
        "05",
        "ex2_clip_gradients",
        EDGE,
        "hooks the weight and bias of every layer with a weight: on a Linear without bias "
        "it raises (thirteenth held-back set, 2026-12-06)",
        """
import torch


def clip_gradients(model, max_abs):
    def clip(grad):
        return grad.clamp(-max_abs, max_abs)

    handles = []
    for module in model.modules():
        if isinstance(getattr(module, "weight", None), torch.nn.Parameter):
            handles.append(module.weight.register_hook(clip))
            handles.append(module.bias.register_hook(clip))
    return handles
""",
    ),
    Wrong(
        "06",
        "ex6_overlap_copy",
        EDGE,
        "orders and records on the default stream: for a caller inside its own "
        "cuda.stream(s), work it queues next may read the batch before the copy ends "
        "(thirteenth held-back set, 2026-12-06)",
        """
def overlap_copy(compute, batch, side, cuda, device):
    with cuda.stream(side):
        moved = batch.to(device, non_blocking=True)
    result = compute()
    main = cuda.default_stream()  # where the training step runs
    main.wait_stream(side)
    moved.record_stream(main)
    return result, moved
""",
    ),
    Wrong(
        "09",
        "ex2_bf16_train_step",
        SIDE_EFFECT,
        "drops the frozen parameters from the caller's optimizer's param_groups "
        "(thirteenth held-back set, 2026-12-06)",
        """
import torch


def bf16_train_step(model, loss_fn, x, target, optimizer):
    for group in optimizer.param_groups:
        group["params"] = [p for p in group["params"] if p.requires_grad]  # only trainable ones
        for p in group["params"]:
            p.grad = None
    with torch.autocast(device_type=x.device.type, dtype=torch.bfloat16):
        loss = loss_fn(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    ),
    Wrong(
        "09",
        "ex3_autocast_predict",
        EDGE,
        "leaves out dtype= in autocast: where the caller set autocast's default dtype to "
        "float16, a CPU x runs in float16 (thirteenth held-back set, 2026-12-06)",
        """
import torch


def autocast_predict(model, x):
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        # autocast's default is already bfloat16 on the CPU and float16 on CUDA
        with torch.inference_mode(), torch.autocast(device_type=x.device.type):
            out = model(x)
    finally:
        for m, training in modes:
            m.training = training
    return out.float()
""",
        devices=("cpu",),  # on a GPU the default for CUDA is float16, as the prompt asks
    ),
    Wrong(
        "09",
        "ex3_autocast_predict",
        EDGE,
        "trusts autocast's default dtype per device (bfloat16 on the CPU): where the caller "
        "set it to float16, a CPU x runs in float16 (written as right; wrong since the checks "
        "draw that caller, thirteenth held-back set, 2026-12-06)",
        """
def autocast_predict(model, x):
    modes = {name: m.training for name, m in model.named_modules()}
    model.eval()
    try:
        with torch.inference_mode(), torch.autocast(x.device.type):
            out = model(x)
    finally:
        for name, m in model.named_modules():
            m.train(modes[name])
    return out.float()
""",
        devices=("cpu",),  # on a GPU the default for CUDA is float16, as the prompt asks
    ),
    Wrong(
        "09",
        "ex3_autocast_predict",
        EDGE,
        "picks float16 whenever CUDA is available, also for a CPU x: on a machine with a "
        "GPU the CPU forward runs in float16 (thirteenth held-back set, 2026-12-06)",
        """
import torch


def autocast_predict(model, x):
    # GPUs use float16, CPUs bfloat16
    dtype = torch.float16 if torch.cuda.is_available() else torch.bfloat16
    modes = {m: m.training for m in model.modules()}
    model.eval()
    try:
        with torch.inference_mode(), torch.autocast(device_type=x.device.type, dtype=dtype):
            out = model(x)
    finally:
        for m, training in modes.items():
            m.training = training
    return out.float()
""",
        devices=("cpu",),  # on a GPU the course device is CUDA: float16 is right there
    ),
    Wrong(
        "06",
        "ex4_load_batch",
        EDGE,
        "passes non_blocking=True only for a CUDA device: to an MPS or XPU device a "
        "pinned batch is copied blocking (fourteenth held-back set, 2026-12-06)",
        """
def load_batch(batch, device):
    inputs, targets = batch
    # asynchronous copies are a CUDA feature
    fast = device.type == "cuda"
    return inputs.to(device, non_blocking=fast), targets.to(device, non_blocking=fast)
""",
    ),
    Wrong(
        "01",
        "ex1_product_grads",
        SIDE_EFFECT,
        "clears the caller's .grad of a and b first, to start clean: a .grad they held from "
        "earlier training is lost (fourteenth held-back set's kinds, rewritten 2026-12-07)",
        """
def product_grads(a, b):
    for t in (a, b):
        t.grad = None  # start from a clean slate
    a = a.detach().clone().requires_grad_()
    b = b.detach().clone().requires_grad_()
    c = a * b
    c.retain_grad()
    (c ** 2).sum().backward()
    return a.grad, b.grad, c.grad
""",
    ),
    Wrong(
        "01",
        "ex5_backward_seed",
        SIDE_EFFECT,
        "zeroes loss.grad where the caller kept one, so that the seed starts from nothing: "
        "the caller's loss.grad is lost (fourteenth held-back set's kinds, rewritten "
        "2026-12-07)",
        """
import torch


def backward_seed(loss):
    if loss.grad is not None:
        loss.grad.zero_()  # a fresh start for the seed
    return torch.ones_like(loss)
""",
    ),
    Wrong(
        "01",
        "ex7_to_device",
        SIDE_EFFECT,
        "clears the model's gradients before moving it (zero_grad(), to move less): the .grad"
        " of a model partway through training is lost (fourteenth held-back set's kinds, "
        "rewritten 2026-12-07)",
        """
def to_device(batch, model, device, dtype):
    model.zero_grad()  # nothing stale travels with the model
    return batch.to(device=device, dtype=dtype), model.to(device=device, dtype=dtype)
""",
    ),
    Wrong(
        "08",
        "ex1_train_epoch",
        STATE,
        "each existing .grad zeroed in place by hand, but only where the parameter requires grad:"
        " a frozen parameter the optimizer holds keeps its old .grad, which SGD steps (listed"
        " right until 2026-12-07, when a case first gave the optimizer such a parameter)",
        """
import torch.nn.functional as F


def train_epoch(model, optimizer, batches):
    losses = []
    for x, y in batches:
        for p in model.parameters():
            if p.grad is not None and p.requires_grad:
                p.grad.zero_()
        loss = F.cross_entropy(model(x), y, reduction="mean", label_smoothing=0.0)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
""",
    ),
    Wrong(
        "08",
        "ex1_train_epoch",
        STATE,
        "clears .grad only of the parameters that require grad: a frozen parameter the "
        "optimizer holds keeps its old .grad, and SGD steps it (fourteenth held-back set's "
        "kinds, rewritten 2026-12-07)",
        '''
import torch.nn.functional as F


def train_epoch(model, optimizer, batches):
    """One pass over the training batches; returns the loss of each batch."""
    losses = []
    for x, y in batches:
        for p in model.parameters():
            if p.requires_grad:
                p.grad = None
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
''',
    ),
    Wrong(
        "07",
        "ex2_quantise",
        EDGE,
        "hands x back as it is where it is already on the grid: the caller's result is x "
        "itself, so changing one changes the other (fourteenth held-back set's kinds, "
        "rewritten 2026-12-07)",
        """
import torch


class Quantise(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, step):
        return torch.round(x / step) * step

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, None


def quantise(x, step):
    q = torch.round(x / step) * step
    if torch.equal(q, x):
        return x  # nothing to round: no need for a new tensor
    return Quantise.apply(x, step)
""",
    ),
    Wrong(
        "02",
        "ex1_evaluate",
        OBSERVABLE,
        "keeps the saved tensors off the device with save_on_cpu instead of turning autograd "
        "off: a graph is still recorded and tensors still saved (fourteenth held-back set's "
        "kinds, rewritten 2026-12-07)",
        """
import torch
import torch.nn.functional as F


def evaluate(model, batches):
    was_training = model.training
    model.eval()
    losses, accs = [], []
    try:
        with torch.autograd.graph.save_on_cpu():
            for x, y in batches:
                out = model(x)
                losses.append(F.cross_entropy(out, y).item())
                accs.append((out.argmax(1) == y).float().mean().item())
    finally:
        model.train(was_training)
    return sum(losses) / len(losses), sum(accs) / len(accs)
""",
    ),
    Wrong(
        "02",
        "ex2_count_saved_bytes",
        EDGE,
        "reports 0 when the result does not require grad, reasoning that nothing then needs "
        "backward: tensors were saved all the same (fourteenth held-back set's kinds, "
        "rewritten 2026-12-07)",
        """
import torch


def count_saved_bytes(fn, *args):
    sizes = []

    def pack(t):
        sizes.append(t.element_size() * t.nelement())
        return t.detach()

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        result = fn(*args)
    if not (torch.is_tensor(result) and result.requires_grad):
        return result, 0
    return result, int(sum(sizes))
""",
    ),
    Wrong(
        "06",
        "ex5_epoch_mean_loss",
        EDGE,
        "nanmean over the stacked losses: a diverged step's nan is left out of the mean, "
        "which hides it (fourteenth held-back set's kinds, rewritten 2026-12-07)",
        """
import torch


def epoch_mean_loss(step, batches):
    losses = [step(batch) for batch in batches]
    return torch.stack(losses).detach().nanmean().item()
""",
    ),
    Wrong(
        "05",
        "ex4_train_and_log",
        EDGE,
        "logs the mean in float32 whatever the model's dtype: a float64 model's means lose "
        "float64's precision (fourteenth held-back set's kinds, rewritten 2026-12-07)",
        """
import torch
import torch.nn.functional as F


def train_and_log(model, layer_name, batches, lr):
    layer = dict(model.named_modules())[layer_name]
    logged = []
    handle = layer.register_forward_hook(
        lambda m, i, out: logged.append(out.detach().float().mean().item())
    )
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    try:
        for x, y in batches:
            opt.zero_grad()
            F.mse_loss(model(x), y).backward()
            opt.step()
    finally:
        handle.remove()
    return logged
""",
    ),
    Wrong(
        "04",
        "ex2_detach_all",
        STATE,
        "remembers each result by the address of its first element: two views starting at one"
        " element get one result (fourteenth held-back set's kinds, rewritten 2026-12-07)",
        """
def detach_all(tensors):
    done = {}
    results = []
    for t in tensors:
        key = t.data_ptr()
        if key not in done:
            try:
                done[key] = t.detach_()
            except RuntimeError:
                done[key] = t.detach()
        results.append(done[key])
    return results
""",
    ),
    Wrong(
        "06",
        "ex1_benchmark",
        EDGE,
        "statistics.median_grouped: with tied middle intervals it interpolates inside a class"
        " one second wide (fourteenth held-back set's kinds, rewritten 2026-12-07)",
        """
import statistics


def benchmark(work, synchronize, clock, warmup, repeats):
    for _ in range(warmup):
        work()
    synchronize()
    times = []
    for _ in range(repeats):
        start = clock()
        work()
        synchronize()
        times.append(clock() - start)
    return statistics.median_grouped(times)
""",
    ),
    Wrong(
        "08",
        "ex6_time_step",
        STATE,
        "turns the garbage collector off while timing and on again afterwards: a caller that "
        "had it off finds it on (fourteenth held-back set's kinds, rewritten 2026-12-07)",
        """
import gc


def time_step(step, synchronize, clock, repeats):
    gc.disable()  # no collection pauses inside the timed region
    try:
        synchronize()
        start = clock()
        for _ in range(repeats):
            step()
        synchronize()
        return (clock() - start) / repeats
    finally:
        gc.enable()
""",
    ),
    Wrong(
        "01",
        "ex2_output_requires_grad",
        EDGE,
        "and/or without brackets: any complex input counts as requiring grad (fourteenth "
        "held-back set's kinds, rewritten 2026-12-07)",
        """
def output_requires_grad(*inputs):
    return any(t.requires_grad and t.is_floating_point() or t.is_complex() for t in inputs)
""",
    ),
    Wrong(
        "08",
        "ex5_log_features",
        OBSERVABLE,
        "runs the model under inference_mode: the features are inference tensors, and a probe"
        " trained on them raises (fourteenth held-back set's kinds, rewritten 2026-12-07)",
        '''
import torch


def log_features(model, layer, batches):
    """The layer's output for each batch, stored detached."""
    features = []
    handle = layer.register_forward_hook(
        lambda module, inputs, output: features.append(output.detach())
    )
    try:
        with torch.inference_mode():
            for x, _ in batches:
                model(x)
    finally:
        handle.remove()
    return features
''',
    ),
    Wrong(
        "07",
        "ex5_soft_clip",
        EDGE,
        "tanh written through exp in x's dtype: in bfloat16 near 0, exp(2u) - 1 cancels to "
        "nothing (fourteenth held-back set's kinds, rewritten 2026-12-07)",
        """
import torch


class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, limit):
        e = torch.exp(2 * x / limit)
        t = (e - 1) / (e + 1)
        ctx.save_for_backward(t)
        ctx.limit = limit
        return limit * t

    @staticmethod
    def backward(ctx, grad_out):
        (t,) = ctx.saved_tensors
        return grad_out * (1 - t * t), None


def soft_clip(x, limit):
    return SoftClip.apply(x, limit)
""",
    ),
    Wrong(
        "07",
        "ex4_mul",
        SIDE_EFFECT,
        "where b does not require grad, backward stores b's gradient in b.grad itself, for "
        "the caller's convenience (fourteenth held-back set's kinds, rewritten 2026-12-07)",
        """
import torch


class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        grad_a = grad_output * b if ctx.needs_input_grad[0] else None
        if ctx.needs_input_grad[1]:
            return grad_a, grad_output * a
        b.grad = grad_output * a  # keep it anyway, in case the caller wants it
        return grad_a, None


def mul(a, b):
    return Mul.apply(a, b)
""",
    ),
    Wrong(
        "04",
        "ex1_frozen_copy",
        STATE,
        "switches grad mode off with torch.set_grad_enabled(False) for the copy and then back"
        " on with set_grad_enabled(True): a caller that calls it inside torch.no_grad() "
        "leaves with grad mode ON (global setting not restored) (fifteenth held-back set, "
        "2026-12-07)",
        """
import torch


def frozen_copy(t, share):
    torch.set_grad_enabled(False)  # nothing made here gets a history
    result = t.detach() if share else t.clone()
    torch.set_grad_enabled(True)
    return result
""",
    ),
    Wrong(
        "07",
        "ex1_silu",
        EDGE,
        "backward takes the slope to be exactly 1 where x > 10 ('the sigmoid is 1 there'): "
        "off by x·e^-x (3e-4 at 10.5), which gradcheck's rtol=1e-3 lets pass but the prompt's"
        " float64-to-rounding comparison does not (fifteenth held-back set, 2026-12-07)",
        """
import torch


class SiLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        slope = s * (1 + x * (1 - s))
        # for large x the sigmoid is 1, so the slope is 1 there: skip the work
        slope = torch.where(x > 10, torch.ones_like(x), slope)
        return grad_out * slope


def silu(x):
    return SiLU.apply(x)
""",
    ),
    Wrong(
        "08",
        "ex2_validate",
        EDGE,
        "returns at once when a batch's loss is not finite ('the mean is inf or NaN anyway'):"
        " that path skips model.train(was_training), so a model that arrived in training mode"
        " is left in evaluation mode (fifteenth held-back set, 2026-12-07)",
        '''
import math

import torch.nn.functional as F


def validate(model, batches):
    """Mean validation loss, measured in evaluation mode."""
    was_training = model.training
    model.eval()
    total = 0.0
    with torch.no_grad():
        for x, y in batches:
            loss = F.cross_entropy(model(x), y).item()
            if not math.isfinite(loss):
                return loss  # the mean is inf or NaN anyway: stop early
            total += loss
    model.train(was_training)
    return float(total) / len(batches)
''',
    ),
    Wrong(
        "08",
        "ex7_swish",
        EDGE,
        "beta saved through save_for_backward as torch.tensor(beta): that tensor is float32 "
        "(the default dtype), so in float64 backward uses 0.100000001490116 instead of 0.1 "
        "and the gradient is not autograd's (fifteenth held-back set, 2026-12-07)",
        '''
import torch


class Swish(torch.autograd.Function):
    """x * sigmoid(beta * x); beta is a Python float."""

    @staticmethod
    def forward(ctx, x, beta):
        s = torch.sigmoid(beta * x)
        # everything backward needs, through save_for_backward
        ctx.save_for_backward(x, s, torch.tensor(beta, device=x.device))
        return x * s

    @staticmethod
    def backward(ctx, grad_output):
        x, s, beta = ctx.saved_tensors
        return grad_output * (s + beta * x * s * (1 - s)), None


def swish(x, beta):
    return Swish.apply(x, beta)
''',
    ),
    Wrong(
        "09",
        "ex3_autocast_predict",
        STATE,
        "converts the result with .to(torch.get_default_dtype()): that is float32 only while "
        "the caller keeps the default; where the caller set float64 the predictions come back"
        " float64, not float32 (fifteenth held-back set, 2026-12-07)",
        """
import torch


def autocast_predict(model, x):
    dtype = torch.bfloat16 if x.device.type == "cpu" else torch.float16
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        with torch.inference_mode(), torch.autocast(device_type=x.device.type, dtype=dtype):
            out = model(x)
    finally:
        for m, training in modes:
            m.train(training)
    return out.to(torch.get_default_dtype())  # back to ordinary precision
""",
    ),
    Wrong(
        "01",
        "ex1_product_grads",
        EDGE,
        "y written as torch.linalg.vector_norm(c) ** 2 ('the sum of squares is the "
        "squared norm'): for large entries the norm overflows to inf and backward gives "
        "nan gradients where (c ** 2).sum()'s gradient 2c is finite (fifteenth held-back "
        "set, mended 2026-12-07)",
        """
import torch


def product_grads(a, b):
    a = a.detach().clone().requires_grad_()
    b = b.detach().clone().requires_grad_()
    c = a * b
    c.retain_grad()
    y = torch.linalg.vector_norm(c) ** 2   # sum of squares = squared Euclidean norm
    y.backward()
    return a.grad, b.grad, c.grad
""",
    ),
    Wrong(
        "01",
        "ex4_per_batch_grads",
        EDGE,
        "skips a batch with no rows ('its mean is nan, there is nothing to learn from "
        "it'): the task asks for one copy per batch, in order, and backward of the empty "
        "batch's loss gives a zero gradient, so the list comes back one entry short and "
        "every later entry is out of place (fifteenth held-back set, mended 2026-12-07)",
        """
import torch


def per_batch_grads(w, batches):
    grads = []
    for x in batches:
        if x.shape[0] == 0:
            continue          # an empty batch has a nan loss: nothing to learn
        w.grad = None
        ((x @ w) ** 2).mean().backward()
        grads.append(w.grad.clone())
    return grads
""",
    ),
    Wrong(
        "02",
        "ex1_evaluate",
        OBSERVABLE,
        "per-batch losses collected with torch.tensor(list) (the default float32) and "
        "averaged there: a float64 model's mean loss is rounded to float32 (about 1e-8 "
        "relative), not as exact as float64 holds it (fifteenth held-back set, mended "
        "2026-12-07)",
        """
import torch


def evaluate(model, batches):
    losses, accs = [], []
    with torch.no_grad():
        for inputs, labels in batches:
            logits = model(inputs)
            losses.append(torch.nn.functional.cross_entropy(logits, labels).item())
            accs.append((logits.argmax(dim=1) == labels).float().mean().item())
    return torch.tensor(losses).mean().item(), torch.tensor(accs).mean().item()
""",
    ),
    Wrong(
        "02",
        "ex1_evaluate",
        EDGE,
        "predictions as logits.argsort(dim=1)[:, -1] (the class sorted last, 'the "
        "largest'): where logits tie, argmax takes the first of them and argsort's last "
        "entry is another one, so a classifier with tied logits (a zero-initialised head,"
        " saturated units) gets a different accuracy (fifteenth held-back set, mended "
        "2026-12-07)",
        """
import torch


def evaluate(model, batches):
    loss_total, acc_total = 0.0, 0.0
    with torch.no_grad():
        for inputs, labels in batches:
            logits = model(inputs)
            loss_total += torch.nn.functional.cross_entropy(logits, labels).item()
            predicted = logits.argsort(dim=1)[:, -1]
            acc_total += (predicted == labels).float().mean().item()
    return loss_total / len(batches), acc_total / len(batches)
""",
    ),
    Wrong(
        "02",
        "ex4_frozen_features",
        EDGE,
        "runs the backbone on chunks of 16 rows 'to bound memory' and concatenates: a "
        "backbone in training mode normalises each chunk with its own batch statistics "
        "and updates its running statistics once per chunk (fifteenth held-back set, "
        "mended 2026-12-07)",
        """
import torch


def frozen_features(backbone, x, chunk=16):
    with torch.no_grad():
        return torch.cat([backbone(part) for part in x.split(chunk)])
""",
    ),
    Wrong(
        "03",
        "ex4_finetune_head",
        EDGE,
        "the backbone run under torch.inference_mode() ('stronger than no_grad'): the "
        "features are inference tensors; it works while the head's active Dropout makes "
        "an ordinary tensor from them, but a head whose Dropout has p = 0 hands them "
        "straight to the Linear, which cannot save an inference tensor for backward, and "
        "the step raises (fifteenth held-back set, mended 2026-12-07)",
        """
import torch


def finetune_head(backbone, head, x, target, lr):
    backbone.eval()
    head.train()
    with torch.inference_mode():
        features = backbone(x)
    optimizer = torch.optim.SGD(head.parameters(), lr=lr)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(head(features), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    ),
    Wrong(
        "03",
        "ex6_finetune_mode",
        STATE,
        "keeps the list of the model's BatchNorm modules in a module-level dict keyed by "
        "id(model), built on the first call ('every epoch calls it again'): when the "
        "caller replaces a BatchNorm between epochs (e.g. a freshly calibrated one), the "
        "new module is never switched to eval (fifteenth held-back set, mended "
        "2026-12-07)",
        """
import torch


bn_layers = {}

def finetune_mode(model):
    if id(model) not in bn_layers:
        bn_layers[id(model)] = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm1d)]
    model.train()
    for bn in bn_layers[id(model)]:
        bn.eval()
""",
    ),
    Wrong(
        "05",
        "ex1_extract_features",
        ARGUMENT,
        "keeps the handles in a dict {name: handle} and removes its values: when the "
        "caller's list names a layer twice, the first handle is overwritten and its hook "
        "stays on the model (fifteenth held-back set, mended 2026-12-07)",
        """
import torch


def extract_features(model, names, x):
    modules = dict(model.named_modules())
    features = {}

    def keeper(name):
        def hook(module, args, output):
            features[name] = output.detach().to("cpu", copy=True)
        return hook

    handles = {name: modules[name].register_forward_hook(keeper(name)) for name in names}
    try:
        with torch.no_grad():
            model(x)
    finally:
        for handle in handles.values():
            handle.remove()
    return features
""",
    ),
    Wrong(
        "05",
        "ex4_train_and_log",
        ARGUMENT,
        "finds the layer with `name.endswith(layer_name)` over named_modules() 'so a "
        "short name works': a name like '1' also matches '0.1', so several layers are "
        "hooked and several means are logged per step (fifteenth held-back set, mended "
        "2026-12-07)",
        """
import torch


def train_and_log(model, layer_name, batches, lr):
    log = []
    hook = lambda module, args, output: log.append(output.mean().item())
    handles = [
        m.register_forward_hook(hook)
        for name, m in model.named_modules()
        if name.endswith(layer_name)
    ]
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    try:
        for x, y in batches:
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
    finally:
        for h in handles:
            h.remove()
    return log
""",
    ),
    Wrong(
        "06",
        "ex1_benchmark",
        OBSERVABLE,
        "keeps each interval in milliseconds ((clock() - start) * 1000) and returns "
        "statistics.median(...) / 1000: the round trip through ms rounds, so the result "
        "is often not one of the measured durations itself, which the prompt requires "
        "(fifteenth held-back set, mended 2026-12-07)",
        """
import torch


import statistics


def benchmark(work, synchronize, clock, warmup, repeats):
    for _ in range(warmup):
        work()
    laps_ms = []
    for _ in range(repeats):
        synchronize()
        start = clock()
        work()
        synchronize()
        laps_ms.append((clock() - start) * 1000)
    return statistics.median(laps_ms) / 1000
""",
    ),
    Wrong(
        "02",
        "ex5_input_saliency",
        STATE,
        "sets x.grad = None first 'so no stale gradient mixes in' (though it "
        "differentiates a copy): a leaf x that arrives with a .grad from the caller's own"
        " work loses it (sixteenth held-back set, mended 2026-12-07)",
        """
import torch


def input_saliency(model, x):
    if x.requires_grad:
        x.grad = None
    with torch.inference_mode(False), torch.enable_grad():
        xc = x.detach().clone().requires_grad_()
        (g,) = torch.autograd.grad(model(xc).sum(), xc)
    return g
""",
    ),
    Wrong(
        "04",
        "ex1_frozen_copy",
        EDGE,
        "share=False allocates torch.empty_strided(t.size(), t.stride()) 'to keep t's "
        "exact memory layout' and copy_()s into it: fine for contiguous, transposed or "
        "sliced t, but for a t made by expand() (stride 0, allowed: it is part of a graph"
        " and requires grad) the destination has overlapping memory and copy_ raises "
        "(sixteenth held-back set, mended 2026-12-07)",
        """
import torch


def frozen_copy(t, share):
    frozen = t.detach()
    if share:
        return frozen
    # same layout as t, so strides and memory format are kept exactly
    copy = torch.empty_strided(t.size(), t.stride(), dtype=t.dtype, device=t.device)
    return copy.copy_(frozen)
""",
    ),
    Wrong(
        "05",
        "ex1_extract_features",
        EDGE,
        "a shortcut 'nothing to extract, no need to run the model' when names is empty: "
        "the prompt says run the model once on x in any case, and in training mode that "
        "pass updates BatchNorm's running statistics, which now stay as they were "
        "(sixteenth held-back set, mended 2026-12-07)",
        """
import torch


def extract_features(model, names, x):
    if not names:  # nothing to extract: save the forward pass
        return {}
    modules = dict(model.named_modules())
    features = {}

    def keeper(name):
        def hook(module, args, output):
            features[name] = output.detach().to("cpu", copy=True)

        return hook

    handles = [modules[name].register_forward_hook(keeper(name)) for name in names]
    try:
        with torch.no_grad():
            model(x)
    finally:
        for handle in handles:
            handle.remove()
    return features
""",
    ),
    Wrong(
        "05",
        "ex1_extract_features",
        EDGE,
        "starts with x = x.to(next(model.parameters())) 'so x matches the model': right "
        "for models with parameters, but a model without any (an activation stack, a "
        "feature-normalising Sequential) makes next() raise StopIteration before anything"
        " runs (sixteenth held-back set, mended 2026-12-07)",
        """
import torch


def extract_features(model, names, x):
    x = x.to(next(model.parameters()))  # same device and dtype as the model
    modules = dict(model.named_modules())
    features = {}
    handles = []
    for name in names:
        keep = lambda module, args, output, name=name: features.update(
            {name: output.detach().to("cpu", copy=True)}
        )
        handles.append(modules[name].register_forward_hook(keep))
    try:
        with torch.no_grad():
            model(x)
    finally:
        for handle in handles:
            handle.remove()
    return features
""",
    ),
    Wrong(
        "06",
        "ex2_to_host",
        EDGE,
        "copies only tensors with numel() > 0: an empty tensor in the list (an empty "
        "batch of detections, a (2, 0, 4) slice) is dropped, so the result is shorter "
        "than the input and the copies no longer line up with it (sixteenth held-back "
        "set, mended 2026-12-07)",
        """
import torch


def to_host(tensors, synchronize):
    copies = []
    for t in tensors:
        if t.numel():  # an empty tensor has nothing to copy
            copies.append(t.to("cpu", non_blocking=True))
    synchronize()
    return copies
""",
    ),
    Wrong(
        "01",
        "ex5_backward_seed",
        EDGE,
        "returns ones, but 65536 when the loss is float16, having read that half-"
        "precision training scales the loss 'so small gradients survive': "
        "loss.backward(gradient=s) then gives gradients 65536 times those of "
        "loss.backward() (seventeenth held-back set, mended 2026-12-07)",
        """
import torch


def backward_seed(loss):
    scale = 65536.0 if loss.dtype == torch.float16 else 1.0
    return torch.full_like(loss, scale)
""",
    ),
    Wrong(
        "07",
        "ex2_quantise",
        EDGE,
        "forward runs torch.nan_to_num(x) first 'so no NaN or inf leaves the quantiser': "
        "a NaN entry comes back as 0.0 where torch.round(x / step) * step keeps it NaN "
        "(±inf still overflow back to ±inf) (seventeenth held-back set, mended "
        "2026-12-07)",
        """
import torch


class Quantise(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, step):
        # no NaN or inf may leave the quantiser
        x = torch.nan_to_num(x)
        return torch.round(x / step) * step

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, None


def quantise(x, step):
    return Quantise.apply(x, step)
""",
    ),
    Wrong(
        "07",
        "ex4_mul",
        ARGUMENT,
        "when a is b the answer passes b.detach() 'so the square saves one input': the "
        "same tensor as both arguments is allowed by the prompt (same shape, dtype, "
        "device), and the gradient of a*a becomes a instead of 2a (seventeenth held-back "
        "set, mended 2026-12-07)",
        """
import torch


class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad_out):
        a, b = ctx.saved_tensors
        return grad_out * b, grad_out * a


def mul(a, b):
    if a is b:
        # the square: one input, saved once
        return Mul.apply(a, b.detach())
    return Mul.apply(a, b)
""",
    ),
    Wrong(
        "08",
        "ex7_swish",
        EDGE,
        "forward uses the identity x*sigmoid(bx) = silu(bx)/beta to reach the fused "
        "kernel: for beta = 0.0 (a Python float the prompt allows; swish is then x/2) the"
        " result is 0/0 = NaN everywhere (seventeenth held-back set, mended 2026-12-07)",
        """
import torch


class Swish(torch.autograd.Function):
    '''x * sigmoid(beta * x); beta is a Python float.'''

    @staticmethod
    def forward(ctx, x, beta):
        bx = beta * x
        ctx.save_for_backward(bx)
        ctx.beta = beta
        # x * sigmoid(bx) = silu(bx) / beta, using the fused kernel
        return torch.nn.functional.silu(bx) / beta

    @staticmethod
    def backward(ctx, grad_output):
        (bx,) = ctx.saved_tensors
        s = torch.sigmoid(bx)
        return grad_output * s * (1 + bx * (1 - s)), None


def swish(x, beta):
    return Swish.apply(x, beta)
""",
    ),
    Wrong(
        "01",
        "ex7_to_device",
        EDGE,
        "moves the model, then the batch with batch.to(next(model.parameters())) 'so they "
        "always match': a module without parameters (a Flatten, an activation, a "
        "buffer-only module) raises StopIteration (seventeenth held-back set, mended "
        "2026-12-07)",
        """
def to_device(batch, model, device, dtype):
    model = model.to(device=device, dtype=dtype)
    batch = batch.to(next(model.parameters()))
    return batch, model
""",
    ),
    Wrong(
        "07",
        "ex3_backward_is_correct",
        ARGUMENT,
        "gradchecks lambda t: fn(t).sum() 'a scalar is simpler to check': the incoming "
        "gradient is then always ones, so a backward that mixes grad_out's entries (e.g. "
        "returns grad_out.mean() * exp(x), right only for a uniform incoming gradient) is "
        "reported True (seventeenth held-back set, mended 2026-12-07)",
        """
import torch


def backward_is_correct(fn, x):
    x64 = x.detach().double().requires_grad_()
    # one scalar output is simpler to check than a whole vector
    return torch.autograd.gradcheck(
        lambda t: fn(t).sum(), (x64,), raise_exception=False
    )
""",
    ),
    Wrong(
        "09",
        "ex3_autocast_predict",
        EDGE,
        "reads the device from next(model.parameters()) instead of x (the exercises say "
        "take the device from the inputs): a model without parameters (activations, "
        "Dropout) raises StopIteration (seventeenth held-back set, mended 2026-12-07)",
        """
import torch


def autocast_predict(model, x):
    device = next(model.parameters()).device
    dtype = torch.bfloat16 if device.type == "cpu" else torch.float16
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        with torch.inference_mode(), torch.autocast(device_type=device.type, dtype=dtype):
            out = model(x)
    finally:
        for m, training in modes:
            m.training = training
    return out.float()
""",
    ),
    Wrong(
        "01",
        "ex4_per_batch_grads",
        EDGE,
        "stacks the copies into one tensor and returns list(stacked): with an empty list "
        "of batches torch.stack raises instead of returning [] (eighteenth held-back set, "
        "mended 2026-12-07)",
        """
import torch


def per_batch_grads(w, batches):
    grads = []
    for x in batches:
        w.grad = None
        ((x @ w) ** 2).mean().backward()
        grads.append(w.grad)
    return list(torch.stack(grads))
""",
    ),
    Wrong(
        "02",
        "ex3_run_step",
        SIDE_EFFECT,
        "computes the reported loss in a separate no_grad forward pass before the "
        "training pass: in training mode BatchNorm's running statistics move twice and "
        "Dropout draws two masks, so the model's buffers, the caller's random state and "
        "the returned loss differ from one step (eighteenth held-back set, mended "
        "2026-12-07)",
        """
import torch


def run_step(model, inputs, labels, optimizer, train):
    with torch.no_grad():
        reported = torch.nn.functional.cross_entropy(model(inputs), labels).item()
    with torch.set_grad_enabled(train):
        if train:
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(inputs), labels)
            loss.backward()
            optimizer.step()
    return reported
""",
    ),
    Wrong(
        "03",
        "ex3_validate",
        EDGE,
        "squeezes the output 'to drop the extra dimension' before mse_loss: a one-output "
        "model's (n, 1) output becomes (n,) and against an (n, 1) target broadcasts to n "
        "x n, a different loss (PyTorch only warns) (eighteenth held-back set, mended "
        "2026-12-07)",
        """
import torch


def validate(model, batches):
    was_training = model.training
    model.eval()
    total = 0.0
    try:
        with torch.no_grad():
            for x, y in batches:
                total += torch.nn.functional.mse_loss(model(x).squeeze(), y).item()
    finally:
        model.train(was_training)
    return total / len(batches)
""",
    ),
    Wrong(
        "04",
        "ex2_detach_all",
        ARGUMENT,
        "keeps a dict of tensors already handled 'so nothing is detached twice' and "
        "returns its values: a tensor listed twice comes back once, so the result is "
        "shorter than the input and misaligned (eighteenth held-back set, mended "
        "2026-12-07)",
        """
def detach_all(tensors):
    done = {}
    for t in tensors:
        if t in done:
            continue
        try:
            done[t] = t.detach_()
        except RuntimeError:
            done[t] = t.detach()
    return list(done.values())
""",
    ),
    Wrong(
        "07",
        "ex3_backward_is_correct",
        ARGUMENT,
        "gradcheck at x / max|x| 'to keep the finite differences well-conditioned': a "
        "backward wrong only for large |x| is checked where it is right (eighteenth "
        "held-back set, mended 2026-12-07)",
        """
import torch


def backward_is_correct(fn, x):
    x64 = x.detach().double()
    scale = x64.abs().max().clamp(min=1.0)
    x64 = (x64 / scale).requires_grad_(True)
    return torch.autograd.gradcheck(fn, (x64,), raise_exception=False)
""",
    ),
    Wrong(
        "07",
        "ex6_softplus",
        EDGE,
        "entries below -20 set to 0 'since softplus is negligible there': right for "
        "float32's 1e-5, but in float64 softplus(-25) = 1.4e-11 is above the prompt's "
        "1e-12 absolute tolerance (eighteenth held-back set, mended 2026-12-07)",
        """
import torch


class Softplus(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        sp = torch.nn.functional.softplus(x)
        return torch.where(x < -20, torch.zeros_like(sp), sp)

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(x)


def softplus(x):
    return Softplus.apply(x)
""",
    ),
    Wrong(
        "09",
        "ex3_autocast_predict",
        OBSERVABLE,
        "switches only the Dropout and BatchNorm modules to evaluation mode (and back): "
        "the model itself and other mode-dependent layers (RReLU's random slopes) stay in "
        "training mode (eighteenth held-back set, mended 2026-12-07)",
        """
import torch


def autocast_predict(model, x):
    dtype = torch.bfloat16 if x.device.type == "cpu" else torch.float16
    switched = []
    for m in model.modules():
        norm_or_dropout = (torch.nn.Dropout, torch.nn.BatchNorm1d, torch.nn.BatchNorm2d)
        if isinstance(m, norm_or_dropout) and m.training:
            m.eval()
            switched.append(m)
    try:
        with torch.inference_mode(), torch.autocast(device_type=x.device.type, dtype=dtype):
            out = model(x)
    finally:
        for m in switched:
            m.train()
    return out.float()
""",
    ),
    Wrong(
        "01",
        "ex5_backward_seed",
        SIDE_EFFECT,
        "torch.autograd.grad(loss, loss)[0], 'd loss / d loss is the implicit seed': where "
        "the caller called loss.retain_grad(), autograd.grad still accumulates into "
        "loss.grad (1 becomes 2) (eighteenth held-back set, written as right; caught "
        "unchanged 2026-12-07)",
        """
import torch


def backward_seed(loss):
    (seed,) = torch.autograd.grad(loss, loss)
    return seed
""",
    ),
    Wrong(
        "06",
        "ex4_load_batch",
        ARGUMENT,
        "returns targets.to(device, non_blocking=True).reshape(-1) 'cross_entropy wants "
        "1-d targets': right for (n,) class labels, but (n, 1) regression targets or (n, "
        "k) multi-label targets come back with another shape (twentieth held-back set, "
        "mended 2026-12-07)",
        """
def load_batch(batch, device):
    inputs, targets = batch
    inputs = inputs.to(device, non_blocking=True)
    targets = targets.to(device, non_blocking=True).reshape(-1)
    return inputs, targets
""",
    ),
    Wrong(
        "03",
        "ex1_dropout_by_hand",
        EDGE,
        "compares u >= torch.tensor(p) 'to keep everything on the tensor side': "
        "torch.tensor(p) is float32, so p = 0.35 becomes 0.3499999940...; a float64 u in "
        "the gap (0.349999997 < 0.35) is kept and scaled where the prompt drops it (u < "
        "p) (twentieth held-back set, mended 2026-12-07)",
        """
import torch


def dropout_by_hand(x, p, u, training):
    if not training:
        return x
    keep = u >= torch.tensor(p)
    return torch.where(keep, x / (1 - p), torch.zeros_like(x))
""",
    ),
    Wrong(
        "05",
        "ex4_train_and_log",
        ARGUMENT,
        "computes mse_loss(model(x).squeeze(), y) 'so the output has the targets' shape': "
        "for (n, 1) targets the (n,) prediction broadcasts against (n, 1) into an (n, n) "
        "difference (twentieth held-back set, mended 2026-12-07)",
        """
def train_and_log(model, layer_name, batches, lr):
    layer = model.get_submodule(layer_name)
    log = []
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    handle = layer.register_forward_hook(lambda m, a, out: log.append(out.mean().item()))
    try:
        for x, y in batches:
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(x).squeeze(), y).backward()
            opt.step()
    finally:
        handle.remove()
    return log
""",
    ),
    Wrong(
        "06",
        "ex4_load_batch",
        OBSERVABLE,
        "returns t.to(device, non_blocking=True).contiguous(): a non-contiguous input gets "
        "a second full copy after the transfer, on the CPU device a host copy (twentieth "
        "held-back set, mended 2026-12-07)",
        """
def load_batch(batch, device):
    inputs, targets = batch
    return (inputs.to(device, non_blocking=True).contiguous(),
            targets.to(device, non_blocking=True).contiguous())
""",
    ),
    Wrong(
        "06",
        "ex6_overlap_copy",
        ARGUMENT,
        "makes its own stream with cuda.Stream() 'a fresh stream cannot be busy' and copies "
        "there: the copy does not run on the side stream the caller handed over (twentieth "
        "held-back set, mended 2026-12-07)",
        """
def overlap_copy(compute, batch, side, cuda, device):
    copy_stream = cuda.Stream()
    with cuda.stream(copy_stream):
        moved = batch.to(device, non_blocking=True)
    result = compute()
    main = cuda.current_stream()
    main.wait_stream(copy_stream)
    moved.record_stream(main)
    return result, moved
""",
    ),
    Wrong(
        "02",
        "ex4_frozen_features",
        EDGE,
        "switches a training backbone to eval() for a batch of one row 'because BatchNorm "
        "cannot take it': backbone(x) in the mode it arrived in raises there, and the caller "
        "must get that error (twenty-first held-back set, mended 2026-12-07)",
        """
def frozen_features(backbone, x):
    with torch.no_grad():
        if x.shape[0] == 1 and backbone.training:
            backbone.eval()  # BatchNorm cannot normalise a single sample in training mode
            try:
                return backbone(x)
            finally:
                backbone.train()
        return backbone(x)
""",
    ),
    Wrong(
        "03",
        "ex4_finetune_head",
        STATE,
        "clears the leftover .grad with p.grad -= p.grad: a leftover inf (an earlier step "
        "that overflowed) becomes nan, and so does the step (twenty-first held-back set, "
        "mended 2026-12-07)",
        """
def finetune_head(backbone, head, x, target, lr):
    backbone.eval()
    head.train()
    with torch.no_grad():
        features = backbone(x)
        for p in head.parameters():
            if p.grad is not None:
                p.grad -= p.grad  # this batch's gradients only
    loss = torch.nn.functional.mse_loss(head(features), target)
    loss.backward()
    torch.optim.SGD(head.parameters(), lr=lr).step()
    return loss.item()
""",
    ),
    Wrong(
        "03",
        "ex6_finetune_mode",
        EDGE,
        "switches to eval() the modules whose running_mean is not None: a "
        "BatchNorm1d(track_running_stats=False) stays in training mode (twenty-first "
        "held-back set, mended 2026-12-07)",
        """
def finetune_mode(model):
    model.train()
    for m in model.modules():
        # the layers that keep running statistics are the ones to freeze
        if getattr(m, "running_mean", None) is not None:
            m.eval()
""",
    ),
    Wrong(
        "06",
        "ex2_to_host",
        EDGE,
        "copies only tensors whose device is not the CPU 'nothing to copy for those': where "
        "the course device is the CPU every tensor is dropped (twenty-second held-back set, "
        "mended 2026-12-07)",
        """
def to_host(tensors, synchronize):
    copies = [t.to("cpu", non_blocking=True) for t in tensors if t.device.type != "cpu"]
    synchronize()
    return copies
""",
    ),
    Wrong(
        "02",
        "ex3_run_step",
        STATE,
        "clears the gradients of optimizer.param_groups[0] only: the second group's stale "
        ".grad is added to this step's (twenty-second held-back set, caught by the hidden "
        "checks only, now by the visible ones too, 2026-12-07)",
        """
def run_step(model, inputs, labels, optimizer, train):
    with torch.set_grad_enabled(train):
        loss = torch.nn.functional.cross_entropy(model(inputs), labels)
        if train:
            for p in optimizer.param_groups[0]["params"]:
                p.grad = None
            loss.backward()
            optimizer.step()
    return loss.item()
""",
    ),
    Wrong(
        "09",
        "ex2_bf16_train_step",
        SIDE_EFFECT,
        "BatchNorm layers put in evaluation mode for the autocast forward and restored: the "
        "model was not used in the mode it arrived in (twenty-second held-back set, caught "
        "when graded only, now in self-study too, 2026-12-07)",
        """
import torch.nn as nn


def bf16_train_step(model, loss_fn, x, target, optimizer):
    norms = [m for m in model.modules() if isinstance(m, nn.BatchNorm1d)]
    flags = [m.training for m in norms]
    optimizer.zero_grad()
    try:
        for m in norms:
            m.eval()
        with torch.autocast(device_type=x.device.type, dtype=torch.bfloat16):
            loss = loss_fn(model(x), target)
    finally:
        for m, flag in zip(norms, flags):
            m.train(flag)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    ),
    Wrong(
        "02",
        "ex4_frozen_features",
        OBSERVABLE,
        "runs the backbone under saved_tensors_hooks whose pack returns None and detaches "
        "the result: nothing is saved, but grad mode stays on and a graph is recorded "
        "(twenty-third held-back set, mended 2026-12-07)",
        """
def frozen_features(backbone, x):
    with torch.autograd.graph.saved_tensors_hooks(lambda t: None, lambda p: None):
        features = backbone(x)
    return features.detach()
""",
    ),
    Wrong(
        "03",
        "ex6_finetune_mode",
        STATE,
        "calls model.train() only 'if not model.training': a model whose top module trains "
        "but one Dropout is off keeps that Dropout off (twenty-third held-back set, mended "
        "2026-12-07)",
        """
def finetune_mode(model):
    if not model.training:
        model.train()
    for module in model.modules():
        if isinstance(module, torch.nn.BatchNorm1d):
            module.eval()
""",
    ),
    Wrong(
        "04",
        "ex5_g_step",
        ARGUMENT,
        "clamps G's output to [0, 1] 'fake images must lie where the real ones do': for a G "
        "that does not end in a Sigmoid the loss and G's step change (twenty-third held-back "
        "set, mended 2026-12-07)",
        """
import torch.nn.functional as F


def g_step(G, D, opt_g, z):
    opt_g.zero_grad()
    fake = G(z).clamp(0.0, 1.0)
    logits = D(fake)
    loss_g = F.binary_cross_entropy_with_logits(logits, torch.ones_like(logits))
    loss_g.backward()
    opt_g.step()
    return loss_g.item()
""",
    ),
    Wrong(
        "02",
        "ex2_count_saved_bytes",
        OBSERVABLE,
        "files each saved tensor under its data_ptr(): x and x.t() saved by x @ x.t() share "
        "one key, so backward unpacks the wrong one (twenty-third held-back set, mended "
        "2026-12-07)",
        """
def count_saved_bytes(fn, *args):
    store, total = {}, 0

    def pack(t):
        nonlocal total
        total += t.element_size() * t.nelement()
        store[t.data_ptr()] = t.detach()
        return t.data_ptr()

    def unpack(key):
        return store[key]

    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        result = fn(*args)
    return result, total
""",
    ),
    Wrong(
        "04",
        "ex2_detach_all",
        SIDE_EFFECT,
        "detaches a view's base in place, t._base.detach_(): for w[0] the base is the "
        "caller's own w, which stops requiring grad (twenty-third held-back set, now drawn "
        "for every seed, 2026-12-07)",
        """
def detach_all(tensors):
    out = []
    for t in tensors:
        if t._base is not None:
            t._base.detach_()
            out.append(t.detach())
        else:
            out.append(t.detach_())
    return out
""",
    ),
    Wrong(
        "07",
        "ex2_quantise",
        EDGE,
        "rounds x / step computed on a float64 copy and casts back: for a float32 x at a "
        "step that is no power of two, x / step in float32 lands on k + 0.5 where the "
        "exact quotient does not (twenty-third held-back set, now drawn for every seed, "
        "2026-12-07)",
        """
class Quantise(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, step):
        return (torch.round(x.double() / step) * step).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, None


def quantise(x, step):
    return Quantise.apply(x, step)
""",
    ),
    Wrong(
        "03",
        "ex1_dropout_by_hand",
        OBSERVABLE,
        "drops only when training and grad mode is on ('no gradients means inference'): called "
        "with training=True inside the caller's no_grad it returns x (twenty-fourth held-back "
        "set, mended 2026-12-07)",
        """
def dropout_by_hand(x, p, u, training):
    if not (training and torch.is_grad_enabled()):   # no autograd: we are doing inference
        return x
    keep = u >= p
    return torch.where(keep, x / (1 - p), torch.zeros_like(x))
""",
    ),
    Wrong(
        "06",
        "ex2_to_host",
        EDGE,
        "copies each distinct tensor once through a dict keyed by id(t): a tensor listed twice "
        "comes back once (twenty-fourth held-back set, mended 2026-12-07)",
        """
def to_host(tensors, synchronize):
    copies = {}
    for t in tensors:
        if id(t) not in copies:
            copies[id(t)] = t.to("cpu", non_blocking=True)
    synchronize()
    return list(copies.values())
""",
    ),
    Wrong(
        "03",
        "ex3_validate",
        EDGE,
        "leaves out batches whose loss is nan ('one corrupt batch should not spoil the mean'): "
        "the mean over the batches is nan there (twenty-fourth held-back set, mended "
        "2026-12-07)",
        """
import math

def validate(model, batches):
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            losses = [torch.nn.functional.mse_loss(model(x), y).item() for x, y in batches]
    finally:
        model.train(was_training)
    finite = [l for l in losses if not math.isnan(l)]   # a corrupt batch should not spoil the mean
    return sum(finite) / len(finite)
""",
    ),
    Wrong(
        "05",
        "ex4_train_and_log",
        EDGE,
        "logs only finite means: a step whose layer output holds a nan logs nothing, so the log"
        " is not one float per step (twenty-fourth held-back set, mended 2026-12-07)",
        """
import math


def train_and_log(model, layer_name, batches, lr):
    layer = model.get_submodule(layer_name)
    log = []

    def hook(module, args, output):
        value = output.mean().item()
        if not math.isnan(value):
            log.append(value)

    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    handle = layer.register_forward_hook(hook)
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
        "07",
        "ex5_soft_clip",
        EDGE,
        "saves the limit as torch.tensor(limit), a float32 0-d tensor: for a float64 x and a "
        "limit float32 cannot hold (0.3) backward's slope is off (twenty-fourth held-back set, "
        "mended 2026-12-07)",
        """
class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, limit):
        y = limit * torch.tanh(x / limit)
        ctx.save_for_backward(y, torch.tensor(limit, device=x.device))
        return y

    @staticmethod
    def backward(ctx, grad_out):
        y, limit = ctx.saved_tensors
        return grad_out * (1 - (y / limit) ** 2), None


def soft_clip(x, limit):
    return SoftClip.apply(x, limit)
""",
    ),
    Wrong(
        "01",
        "ex7_to_device",
        ARGUMENT,
        "converts the batch's dtype only when it is floating point ('ids stay integers'): an "
        "int64 batch does not come back in the dtype asked for (twenty-fourth held-back set, "
        "mended 2026-12-07)",
        """
def to_device(batch, model, device, dtype):
    if batch.is_floating_point():
        batch = batch.to(device=device, dtype=dtype)
    else:
        batch = batch.to(device=device)   # ids and labels stay integers
    model.to(device=device, dtype=dtype)
    return batch, model
""",
    ),
    Wrong(
        "03",
        "ex2_eval_grads",
        OBSERVABLE,
        "switches only nn.Dropout and nn.BatchNorm1d modules to evaluation: a BatchNorm2d stays"
        " in training mode (twenty-fourth held-back set, mended 2026-12-07)",
        """
def eval_grads(model, x, target):
    switched = [m for m in model.modules()
                if isinstance(m, (torch.nn.Dropout, torch.nn.BatchNorm1d)) and m.training]
    for m in switched:
        m.eval()
    try:
        model.zero_grad()
        torch.nn.functional.mse_loss(model(x), target).backward()
    finally:
        for m in switched:
            m.train()
    return {name: p.grad.clone() for name, p in model.named_parameters()}
""",
    ),
    Wrong(
        "06",
        "ex4_load_batch",
        ARGUMENT,
        "keeps the dtype with .type(t.type()): the host tensor's type name is a CPU one "
        "(torch.FloatTensor), so the moved batch is copied back to the host (twenty-fourth "
        "held-back set, mended 2026-12-07: the model of a GPU reads type names)",
        """
def load_batch(batch, device):
    moved = []
    for t in batch:
        moved.append(t.to(device, non_blocking=True).type(t.type()))
    return tuple(moved)
""",
    ),
    Wrong(
        "01",
        "ex2_output_requires_grad",
        STATE,
        "keeps one input per storage address, {t.data_ptr(): t}: two empty tensors share "
        "address 0, and the last one hides one that requires grad (twenty-fourth held-back "
        "set, mended 2026-12-07)",
        """
def output_requires_grad(*inputs):
    unique = {t.data_ptr(): t for t in inputs}
    return any(t.requires_grad for t in unique.values())
""",
    ),
    Wrong(
        "07",
        "ex2_quantise",
        EDGE,
        "passes the step as torch.tensor(step), float32 by default: for a float64 x and a "
        "step float32 cannot hold, x / step misses the ties (twenty-fourth held-back set, "
        "caught by the visible checks since 2026-12-07)",
        """
class Quantise(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, step):
        return torch.round(x / step) * step

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, None


def quantise(x, step):
    return Quantise.apply(x, torch.tensor(step, device=x.device))
""",
    ),
    Wrong(
        "04",
        "ex2_detach_all",
        SIDE_EFFECT,
        "switches leaves off with requires_grad_(False): a leaf that is a view comes back as "
        "the same object, changed, where detach_() refuses it (twenty-fifth held-back set, "
        "mended 2026-12-07)",
        """
def detach_all(tensors):
    result = []
    for t in tensors:
        if t.is_leaf:
            result.append(t.requires_grad_(False))
            continue
        try:
            result.append(t.detach_())
        except RuntimeError:
            result.append(t.detach())
    return result
""",
    ),
    Wrong(
        "06",
        "ex1_benchmark",
        EDGE,
        "drops laps above twice the median before taking the median: with one slow lap in "
        "five the median of four is the mean of two laps (twenty-fifth held-back set, mended "
        "2026-12-07)",
        """
import statistics

def benchmark(work, synchronize, clock, warmup, repeats):
    for _ in range(warmup):
        work()
    laps = []
    for _ in range(repeats):
        synchronize()
        start = clock()
        work()
        synchronize()
        laps.append(clock() - start)
    typical = statistics.median(laps)
    kept = [lap for lap in laps if lap <= 2 * typical]  # drop outliers (a GC pause)
    return statistics.median(kept)
""",
    ),
    Wrong(
        "06",
        "ex2_to_host",
        STATE,
        "reuses one host buffer per (shape, dtype) within a call: two tensors alike in both "
        "come back as the second one's values (twenty-fifth held-back set, mended 2026-12-07)",
        """
def to_host(tensors, synchronize):
    buffers = {}
    copies = []
    for t in tensors:
        key = (tuple(t.shape), t.dtype)
        if key not in buffers:
            buffers[key] = torch.empty(t.shape, dtype=t.dtype, device="cpu")
        copies.append(buffers[key].copy_(t, non_blocking=True))
    synchronize()
    return copies
""",
    ),
    Wrong(
        "07",
        "ex1_silu",
        OBSERVABLE,
        "builds the slope in place in the saved sigmoid: a second backward through the same "
        "graph (retain_graph=True, as gradcheck runs) raises (twenty-fifth held-back set, "
        "mended 2026-12-07)",
        """
class SiLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        s = torch.sigmoid(x)
        ctx.save_for_backward(x, s)
        return x * s

    @staticmethod
    def backward(ctx, grad_out):
        x, s = ctx.saved_tensors
        return grad_out * s.mul_(1 + x * (1 - s))


def silu(x):
    return SiLU.apply(x)
""",
    ),
    Wrong(
        "07",
        "ex2_quantise",
        ARGUMENT,
        "clips the straight-through gradient to [-1, 1]: an incoming gradient beyond 1 does "
        "not pass unchanged (twenty-fifth held-back set, mended 2026-12-07)",
        """
class Quantise(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, step):
        return torch.round(x / step) * step

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out.clamp(-1.0, 1.0), None  # keep the estimator stable


def quantise(x, step):
    return Quantise.apply(x, step)
""",
    ),
    Wrong(
        "08",
        "ex3_accuracy",
        EDGE,
        "averages per-chunk accuracies over chunks of 32: a short last chunk weighs as much "
        "as a full one (twenty-fifth held-back set, mended 2026-12-07)",
        """
def accuracy(model, images, labels, chunk=32):
    # fraction of images classified correctly (in chunks, to bound memory)
    was_training = model.training
    model.eval()
    try:
        scores = []
        with torch.no_grad():
            for k in range(0, len(images), chunk):
                predicted = model(images[k:k + chunk]).argmax(dim=1)
                scores.append((predicted == labels[k:k + chunk]).float().mean().item())
    finally:
        model.train(was_training)
    return sum(scores) / len(scores)
""",
    ),
    Wrong(
        "08",
        "ex7_swish",
        EDGE,
        "recovers sigmoid(beta * x) as out / x in backward: 0 / 0 where x is exactly 0 "
        "(twenty-fifth held-back set, mended 2026-12-07)",
        """
class Swish(torch.autograd.Function):
    # x * sigmoid(beta * x); beta is a Python float

    @staticmethod
    def forward(ctx, x, beta):
        out = x * torch.sigmoid(beta * x)
        ctx.save_for_backward(x, out)
        ctx.beta = beta
        return out

    @staticmethod
    def backward(ctx, grad_output):
        x, out = ctx.saved_tensors
        s = out / x  # sigmoid(beta * x), recovered from the output
        return grad_output * (s + ctx.beta * x * s * (1 - s)), None


def swish(x, beta):
    return Swish.apply(x, beta)
""",
    ),
    Wrong(
        "02",
        "ex4_frozen_features",
        SIDE_EFFECT,
        "retries backbone(x.to(dtype)) after a RuntimeError: where the backbone raises after "
        "BatchNorm ran in training mode, its running statistics move twice "
        "(twenty-fifth held-back set, mended 2026-12-07)",
        """
def frozen_features(backbone, x):
    with torch.no_grad():
        try:
            return backbone(x)
        except RuntimeError:
            # usually a dtype mismatch: retry in the backbone's dtype
            dtype = next(backbone.parameters()).dtype
            return backbone(x.to(dtype))
""",
    ),
    Wrong(
        "09",
        "ex2_bf16_train_step",
        ARGUMENT,
        "feeds model(x.to(torch.bfloat16)) inside autocast: a first layer autocast leaves "
        "alone (BatchNorm1d) then runs on a rounded input (twenty-fifth held-back set, "
        "mended 2026-12-07)",
        """
def bf16_train_step(model, loss_fn, x, target, optimizer):
    optimizer.zero_grad()
    with torch.autocast(device_type=x.device.type, dtype=torch.bfloat16):
        loss = loss_fn(model(x.to(torch.bfloat16)), target)  # feed the model bfloat16 directly
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    ),
    Wrong(
        "02",
        "ex1_evaluate",
        EDGE,
        "predictions as logits.topk(1, dim=1).indices: on six tied logits topk picks another "
        "class than argmax, which takes the first (twenty-sixth held-back set, mended "
        "2026-12-07)",
        """
def evaluate(model, batches):
    losses, accs = [], []
    with torch.no_grad():
        for inputs, labels in batches:
            logits = model(inputs)
            losses.append(torch.nn.functional.cross_entropy(logits, labels).item())
            pred = logits.topk(1, dim=1).indices.squeeze(1)
            accs.append((pred == labels).float().mean().item())
    return sum(losses) / len(losses), sum(accs) / len(accs)
""",
    ),
    Wrong(
        "05",
        "ex2_clip_gradients",
        ARGUMENT,
        "hooks the parameters of each of model.children(): a model that is itself one layer "
        "has no children, so nothing is clipped (twenty-sixth held-back set, mended "
        "2026-12-07)",
        """
def clip_gradients(model, max_abs):
    handles = []
    for layer in model.children():
        for p in layer.parameters():
            handles.append(p.register_hook(lambda g: g.clamp(-max_abs, max_abs)))
    return handles
""",
    ),
    Wrong(
        "03",
        "ex1_dropout_by_hand",
        EDGE,
        "flattens x with view(-1): for a transposed x in training mode view raises (caught "
        "only by the hidden checks before; twenty-seventh held-back set, mended 2026-12-07)",
        """
def dropout_by_hand(x, p, u, training):
    if not training:
        return x
    flat_x = x.view(-1)
    keep = u.view(-1) >= p
    out = torch.zeros_like(flat_x)
    out[keep] = flat_x[keep] / (1 - p)
    return out.view(x.shape)
""",
    ),
    Wrong(
        "04",
        "ex1_frozen_copy",
        EDGE,
        "returns t.detach().squeeze(): a t of shape (2, 1) comes back as (2,) (caught only by "
        "the hidden checks before; twenty-seventh held-back set, mended 2026-12-07)",
        """
def frozen_copy(t, share):
    frozen = t.detach().squeeze()
    return frozen if share else frozen.clone()
""",
    ),
    Wrong(
        "06",
        "ex1_benchmark",
        EDGE,
        "times a bare synchronize() first and takes that 'timer overhead' off every lap: the"
        " figure is no longer one of the measured durations, which the prompt asks for (passed"
        " while the model's synchronize() was free; twenty-sixth held-back set, mended"
        " 2026-12-07)",
        """
def benchmark(work, synchronize, clock, warmup, repeats):
    for _ in range(warmup):
        work()
    synchronize()
    t0 = clock()
    synchronize()
    overhead = clock() - t0
    laps = []
    for _ in range(repeats):
        synchronize()
        start = clock()
        work()
        synchronize()
        laps.append(clock() - start - overhead)
    return sorted(laps)[len(laps) // 2]
""",
    ),
    Wrong(
        "06",
        "ex2_to_host",
        OBSERVABLE,
        "issues the non_blocking copies inside torch.inference_mode(): every host copy is an "
        "inference tensor, which the caller can neither change in place nor save for backward "
        "(twenty-eighth held-back set, mended 2026-12-07: a result may be an inference tensor "
        "only where the reference's is, in every exercise)",
        """
def to_host(tensors, synchronize):
    with torch.inference_mode():
        copies = [t.to("cpu", non_blocking=True) for t in tensors]
    synchronize()
    return copies
""",
    ),
    Wrong(
        "07",
        "ex4_mul",
        STATE,
        "keeps b.requires_grad on the Function class: a second product, made with a b that "
        "needs no gradient before the first one's backward, drops b's gradient there "
        "(twenty-eighth held-back set, mended 2026-12-07)",
        """
class Mul(torch.autograd.Function):
    b_needs_grad = True

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        Mul.b_needs_grad = b.requires_grad
        return a * b

    @staticmethod
    def backward(ctx, grad_out):
        a, b = ctx.saved_tensors
        grad_b = grad_out * a if Mul.b_needs_grad else None
        return grad_out * b, grad_b


def mul(a, b):
    return Mul.apply(a, b)
""",
    ),
    Wrong(
        "04",
        "ex4_d_step",
        EDGE,
        "skips backward and opt_d.step() while loss_d is below 0.3, a GAN balancing habit: a "
        "D that already wins is not stepped, where the task says one step (twenty-eighth "
        "held-back set, mended 2026-12-07)",
        """
import torch.nn.functional as F


def d_step(G, D, opt_d, real, z):
    opt_d.zero_grad()
    fake = G(z).detach()
    real_logits, fake_logits = D(real), D(fake)
    loss_d = (F.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits))
              + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits)))
    if loss_d.item() > 0.3:  # a D that already wins is not updated (keeps the GAN balanced)
        loss_d.backward()
        opt_d.step()
    return loss_d.item()
""",
    ),
    Wrong(
        "08",
        "ex1_train_epoch",
        EDGE,
        "passes each batch's labels through y.squeeze(): a batch of one sample gets 0-d "
        "labels and cross_entropy raises (twenty-eighth held-back set, mended 2026-12-07)",
        '''
import torch.nn.functional as F


def train_epoch(model, optimizer, batches):
    """One pass over the training batches; returns the loss of each batch."""
    losses = []
    for x, y in batches:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y.squeeze())
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
''',
    ),
    Wrong(
        "03",
        "ex1_dropout_by_hand",
        EDGE,
        "reads a p above one half as a keep probability and drops with 1 - p instead (caught "
        "only by the hidden checks before; twenty-eighth held-back set, mended 2026-12-07: "
        "every seed draws p = 0.75)",
        """
def dropout_by_hand(x, p, u, training):
    if not training:
        return x
    if p > 0.5:
        # a p above one half must be a keep probability (as in older papers)
        p = 1 - p
    return torch.where(u >= p, x / (1 - p), torch.zeros_like(x))
""",
    ),
    Wrong(
        "02",
        "ex3_run_step",
        STATE,
        "sets p.grad = None only where p.requires_grad: a layer the caller froze after its "
        "optimizer was made keeps its stale .grad, and the step moves it by that "
        "(twenty-fifth held-back set, mended 2026-12-07)",
        """
def run_step(model, inputs, labels, optimizer, train):
    with torch.set_grad_enabled(train):
        loss = torch.nn.functional.cross_entropy(model(inputs), labels)
        if train:
            for p in model.parameters():
                if p.requires_grad:          # frozen parameters get no gradient anyway
                    p.grad = None
            loss.backward()
            optimizer.step()
    return loss.item()
""",
    ),
    Wrong(
        "08",
        "ex3_accuracy",
        SIDE_EFFECT,
        "puts the mode back only under except RuntimeError (and after a forward that "
        "succeeded): a model that raises anything else leaves the caller's model in "
        "evaluation mode (twenty-ninth held-back set, mended 2026-12-07: the caller's forward "
        "pre-hook raises ValueError)",
        """
def accuracy(model, images, labels):
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            predicted = model(images).argmax(dim=1)
    except RuntimeError:  # shape or dtype errors from the forward pass
        model.train(was_training)
        raise
    model.train(was_training)
    return (predicted == labels).float().mean().item()
""",
    ),
    Wrong(
        "09",
        "ex1_checkpointed_forward",
        EDGE,
        "takes the Sequentials among blocks.modules() as the blocks: a block that is a bare "
        "layer never runs, a Sequential nested in a block runs twice (twenty-ninth held-back "
        "set, mended 2026-12-07)",
        """
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


def checkpointed_forward(blocks, x):
    h = x
    for block in [m for m in blocks.modules() if isinstance(m, nn.Sequential) and m is not blocks]:
        h = checkpoint(block, h, use_reentrant=False)
    return h
""",
    ),
    Wrong(
        "06",
        "ex2_to_host",
        EDGE,
        "copies each storage address once (a dict keyed on data_ptr()): two empty tensors, "
        "both at address 0, get one copy (twenty-ninth held-back set, mended 2026-12-07)",
        """
def to_host(tensors, synchronize):
    copies = {}
    out = []
    for t in tensors:
        key = t.data_ptr()  # the same tensor twice is copied once
        if key not in copies:
            copies[key] = t.to("cpu", non_blocking=True)
        out.append(copies[key])
    synchronize()
    return out
""",
    ),
    Wrong(
        "08",
        "ex4_discriminator_step",
        EDGE,
        "uses F.binary_cross_entropy when D's last module is a Sigmoid: the task fixes "
        "BCE-with-logits of D's output whatever D ends with (thirtieth held-back set, mended "
        "2026-12-07: a D ending in Sigmoid is drawn)",
        """
import torch.nn as nn
import torch.nn.functional as F


def discriminator_step(G, D, opt_d, real, noise):
    opt_d.zero_grad()
    fake = G(noise).detach()
    real_out, fake_out = D(real), D(fake)
    if isinstance(D[-1], nn.Sigmoid):
        # D already outputs probabilities: plain BCE, not BCE-with-logits
        bce = F.binary_cross_entropy
    else:
        bce = F.binary_cross_entropy_with_logits
    loss = bce(real_out, torch.ones_like(real_out)) + bce(fake_out, torch.zeros_like(fake_out))
    loss.backward()
    opt_d.step()
    return loss.item()
""",
    ),
    Wrong(
        "09",
        "ex2_bf16_train_step",
        OBSERVABLE,
        "loss module swapped for its functional form (options dropped)",
        """
import torch.nn.functional as F


def bf16_train_step(model, loss_fn, x, target, optimizer):
    if isinstance(loss_fn, torch.nn.CrossEntropyLoss):
        loss_fn = F.cross_entropy
    elif isinstance(loss_fn, torch.nn.MSELoss):
        loss_fn = F.mse_loss
    elif isinstance(loss_fn, torch.nn.SmoothL1Loss):
        loss_fn = F.smooth_l1_loss
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
        "ex2_bf16_train_step",
        STATE,
        "loss function taken once per model",
        """
_LOSS = {}


def bf16_train_step(model, loss_fn, x, target, optimizer):
    fn = _LOSS.setdefault(id(model), loss_fn)
    optimizer.zero_grad()
    with torch.autocast(device_type=x.device.type, dtype=torch.bfloat16):
        loss = fn(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    ),
    Wrong(
        "01",
        "ex3_make_trainable",
        EDGE,
        "an empty nested list made a 1-D empty tensor ([[], []] has shape (2, 0))",
        """
def make_trainable(values, device):
    if len(values) == 0 or (isinstance(values[0], list) and len(values[0]) == 0):
        return torch.zeros(0, device=device, requires_grad=True)   # nothing to train
    return torch.tensor(values, dtype=torch.float32, device=device).requires_grad_()
""",
    ),
    Wrong(
        "04",
        "ex3_normalised_and_grad",
        OBSERVABLE,
        "p computed under inference_mode: an inference tensor the caller cannot scale in place",
        """
def normalised_and_grad(w, x):
    out = torch.exp(x @ w)
    with torch.inference_mode():  # p needs no history
        p = out / out.sum()
    out.sum().backward()
    return p, w.grad
""",
    ),
    Wrong(
        "01",
        "ex3_make_trainable",
        SIDE_EFFECT,
        "a clamp(-1, 1) gradient hook left on the returned leaf",
        """
def make_trainable(values, device):
    t = torch.tensor(values, dtype=torch.float32, device=device, requires_grad=True)
    # integer-valued data can be large: keep its gradients in a sane range
    t.register_hook(lambda grad: grad.clamp(-1.0, 1.0))
    return t
""",
    ),
]

RIGHT = [
    Right(
        "06",
        "ex4_load_batch",
        "returns a collections.namedtuple: a tuple, as the prompt allows (twenty-fifth "
        "held-back set, accepted since 2026-12-07: a tuple or list subclass is read as the "
        "tuple or list it is)",
        """
import collections

Batch = collections.namedtuple("Batch", ["inputs", "targets"])


def load_batch(batch, device):
    inputs, targets = batch
    return Batch(inputs.to(device, non_blocking=True), targets.to(device, non_blocking=True))
""",
    ),
    Right(
        "06",
        "ex6_overlap_copy",
        "with side: instead of cuda.stream(side): a torch.Stream is its own context manager "
        "(twenty-fourth held-back set, accepted since 2026-12-07: the model's streams are "
        "context managers too)",
        """
def overlap_copy(compute, batch, side, cuda, device):
    with side:
        moved = batch.to(device, non_blocking=True)
    result = compute()
    main = cuda.current_stream()
    main.wait_stream(side)
    moved.record_stream(main)
    return result, moved
""",
    ),
    Right(
        "05",
        "ex1_extract_features",
        "copies with output.detach().to('cpu', x.dtype, copy=True): the models the prompt "
        "names take x in their own dtype, so it is the output's (twenty-first held-back set, "
        "written as wrong, 2026-12-07)",
        """
def extract_features(model, names, x):
    modules = dict(model.named_modules())
    features = {}
    handles = []
    for name in names:

        def hook(module, args, output, name=name):
            features[name] = output.detach().to("cpu", x.dtype, copy=True)

        handles.append(modules[name].register_forward_hook(hook))
    try:
        with torch.no_grad():
            model(x)
    finally:
        for h in handles:
            h.remove()
    return features
""",
    ),
    Right(
        "05",
        "ex3_mask_output",
        "output.masked_fill(mask == 0, 0): the mask is in the module's dtype, as the prompt "
        "now says (twenty-first held-back set, written as wrong, 2026-12-07)",
        """
def mask_output(module, mask):
    def hook(module, args, output):
        return output.masked_fill(mask == 0, 0)

    return module.register_forward_hook(hook)
""",
    ),
    Right(
        "02",
        "ex5_input_saliency",
        "torch.func.jacrev of the model, summed: a model in training mode has no BatchNorm, "
        "as the prompt now says (twenty-first held-back set, written as wrong, 2026-12-07)",
        """
def input_saliency(model, x):
    with torch.inference_mode(False), torch.enable_grad():
        xc = x.clone()
        jac = torch.func.jacrev(model)(xc)  # (n, out, n, d)
        return jac.sum(dim=(0, 1))  # d (sum of outputs) / d x
""",
    ),
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
    # Lesson 04, a second class of learners (brief r1)
    Right(
        "04",
        "ex1_frozen_copy",
        "view_as of the detached tensor to share, clone then detach_ to copy",
        """
def frozen_copy(t, share):
    if share:
        return t.detach().view_as(t)
    return t.clone().detach_()
""",
    ),
    Right(
        "04",
        "ex2_detach_all",
        "views told apart by t._base (the one private attribute allowed)",
        """
def detach_all(tensors):
    return [t.detach() if t._base is not None else t.detach_() for t in tensors]
""",
    ),
    Right(
        "04",
        "ex3_normalised_and_grad",
        "torch.mv, p by an L1 normalize of a detached copy, autograd.grad",
        """
def normalised_and_grad(w, x):
    out = torch.exp(torch.mv(x, w))
    p = torch.nn.functional.normalize(out.detach(), p=1, dim=0)
    (grad,) = torch.autograd.grad(out.sum(), [w])
    return p, grad
""",
    ),
    Right(
        "04",
        "ex5_g_step",
        "both models' gradients cleared with Module.zero_grad, softplus of minus the logits",
        """
import torch.nn.functional as F


def g_step(G, D, opt_g, z):
    G.zero_grad()
    D.zero_grad()
    loss_g = F.softplus(-D(G(z))).mean()
    loss_g.backward()
    opt_g.step()
    return float(loss_g)
""",
    ),
    Right(
        "04",
        "ex3_normalised_and_grad",
        "the gradient kept, w.grad set back to None: w exactly as it came",
        """
def normalised_and_grad(w, x):
    out = (x @ w).exp()
    p = out.detach() / out.detach().sum()
    out.sum().backward()
    grad = w.grad
    w.grad = None
    return p, grad
""",
    ),
    Right(
        "04",
        "ex1_frozen_copy",
        "Tensor.detach called unbound, a copy by torch.clone",
        """
def frozen_copy(t, share):
    frozen = torch.Tensor.detach(t)
    return frozen if share else torch.clone(frozen)
""",
    ),
    # Lesson 05, a second class of learners (brief r1)
    Right(
        "05",
        "ex1_extract_features",
        "no_grad forward, to('cpu', copy=True) without detach, get_submodule",
        """
def extract_features(model, names, x):
    features = {}
    handles = []
    try:
        for name in names:
            module = model.get_submodule(name)
            handles.append(
                module.register_forward_hook(
                    lambda m, a, out, key=name: features.update({key: out.to("cpu", copy=True)})
                )
            )
        with torch.no_grad():
            model(x)
    finally:
        for handle in handles:
            handle.remove()
    return features
""",
    ),
    Right(
        "05",
        "ex2_clip_gradients",
        "torch.where with the sign times the limit, a for loop",
        """
def clip_gradients(model, max_abs):
    def clip(grad):
        return torch.where(grad.abs() > max_abs, grad.sign() * max_abs, grad)

    handles = []
    for parameter in model.parameters():
        handles.append(parameter.register_hook(clip))
    return handles
""",
    ),
    Right(
        "05",
        "ex4_train_and_log",
        "means kept as detached tensors, turned into floats at the end; a new SGD per step",
        """
def train_and_log(model, layer_name, batches, lr):
    means = []
    handle = model.get_submodule(layer_name).register_forward_hook(
        lambda m, a, out: means.append(out.detach().mean())
    )
    try:
        for x, y in batches:
            optimizer = torch.optim.SGD(model.parameters(), lr=lr)
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
    finally:
        handle.remove()
    return [m.item() for m in means]
""",
    ),
    Right(
        "05",
        "ex5_forward_counting_saved",
        "nbytes summed in a list, a contextmanager-free alias of the hooks",
        """
SAVED = torch.autograd.graph.saved_tensors_hooks


def forward_counting_saved(model, x):
    sizes = []

    def pack(t):
        sizes.append(t.nbytes)
        return t

    with SAVED(pack, lambda t: t):
        output = model(x)
    return output, int(sum(sizes))
""",
    ),
    Right(
        "05",
        "ex4_train_and_log",
        "a contextmanager that registers the hook and removes it",
        """
from contextlib import contextmanager


@contextmanager
def _logging(layer, log):
    handle = layer.register_forward_hook(lambda m, a, out: log.append(float(out.mean())))
    try:
        yield log
    finally:
        handle.remove()


def train_and_log(model, layer_name, batches, lr):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    with _logging(model.get_submodule(layer_name), []) as log:
        for x, y in batches:
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
    return log
""",
    ),
    Right(
        "05",
        "ex4_train_and_log",
        "an SGD over the trainable parameters only, found with filter",
        """
def train_and_log(model, layer_name, batches, lr):
    trainable = filter(lambda p: p.requires_grad, model.parameters())
    optimizer = torch.optim.SGD(trainable, lr=lr)
    log = []
    handle = model.get_submodule(layer_name).register_forward_hook(
        lambda m, a, out: log.append(out.mean().item())
    )
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
    # Lesson 06, a second class of learners (brief r1)
    Right(
        "06",
        "ex1_benchmark",
        "one synchronize before the timed loop, then one after each call; torch's median",
        """
def benchmark(work, synchronize, clock, warmup, repeats):
    for _ in range(warmup):
        work()
    synchronize()
    durations = []
    for _ in range(repeats):
        start = clock()
        work()
        synchronize()
        durations.append(clock() - start)
    return torch.tensor(durations, dtype=torch.float64).median().item()
""",
    ),
    Right(
        "06",
        "ex2_to_host",
        "detached copies issued in a for loop, one synchronize at the end",
        """
def to_host(tensors, synchronize):
    copies = []
    for t in tensors:
        copies.append(t.detach().to(device="cpu", non_blocking=True))
    synchronize()
    return copies
""",
    ),
    Right(
        "06",
        "ex3_pick_device",
        "CUDA, then MPS, then the generic accelerator, each asked whether it is usable",
        """
def pick_device():
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    if torch.accelerator.is_available():
        return torch.accelerator.current_accelerator()
    return torch.device("cpu")
""",
    ),
    Right(
        "06",
        "ex3_pick_device",
        "asks torch.cuda, torch.xpu and torch.backends.mps in turn: every machine the prompt "
        "says the checks simulate (twentieth held-back set, written as wrong; the prompt now "
        "names the machines, 2026-12-07)",
        """
def pick_device():
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.xpu.is_available():
        return torch.device("xpu")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")
""",
    ),
    Right(
        "06",
        "ex5_epoch_mean_loss",
        "an integer start, +=, the mean read once with float()",
        """
def epoch_mean_loss(step, batches):
    total = 0
    for batch in batches:
        total += step(batch)
    return float(total / len(batches))
""",
    ),
    # Lesson 07, a second class of learners (brief r1)
    Right(
        "07",
        "ex1_silu",
        "forward as x / (1 + exp(-x)), backward factored as s + y * (1 - s) from x",
        """
class SiLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x / (1 + torch.exp(-x))

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        return grad_out * (s + x * s * (1 - s))


def silu(x):
    return SiLU.apply(x)
""",
    ),
    Right(
        "07",
        "ex4_mul",
        "needs_input_grad unpacked, torch.mul in backward",
        """
class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return torch.mul(a, b)

    @staticmethod
    def backward(ctx, grad_out):
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        grad_a = torch.mul(grad_out, b) if need_a else None
        grad_b = torch.mul(grad_out, a) if need_b else None
        return grad_a, grad_b


def mul(a, b):
    return Mul.apply(a, b)
""",
    ),
    Right(
        "07",
        "ex5_soft_clip",
        "the result saved and a clone returned: a change to the result cannot reach backward",
        """
class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, limit):
        y = torch.tanh(x / limit) * limit
        ctx.save_for_backward(y)
        ctx.limit = limit
        return y.clone()

    @staticmethod
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        t = y / ctx.limit
        return grad_out * (1 - t * t), None


def soft_clip(x, limit):
    return SoftClip.apply(x, limit)
""",
    ),
    Right(
        "07",
        "ex3_backward_is_correct",
        "a float64 copy by to(dtype=..., copy=True), gradcheck's exhaustive mode spelt out",
        """
def backward_is_correct(fn, x):
    x64 = x.detach().to(dtype=torch.float64, copy=True).requires_grad_(True)
    return bool(torch.autograd.gradcheck(fn, [x64], fast_mode=False, raise_exception=False))
""",
    ),
    Right(
        "07",
        "ex6_softplus",
        "forward as logaddexp(x, 0), stable for large x",
        """
class Softplus(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return torch.logaddexp(x, torch.zeros_like(x))

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.special.expit(x)


def softplus(x):
    return Softplus.apply(x)
""",
    ),
    Right(
        "07",
        "ex5_soft_clip",
        "the limit saved as a 0-dim tensor beside x with save_for_backward",
        """
class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, limit):
        ctx.save_for_backward(x, torch.tensor(limit, dtype=x.dtype, device=x.device))
        return limit * torch.tanh(x / limit)

    @staticmethod
    def backward(ctx, grad_out):
        x, limit = ctx.saved_tensors
        return grad_out * (1 - torch.tanh(x / limit) ** 2), None


def soft_clip(x, limit):
    return SoftClip.apply(x, limit)
""",
    ),
    # Lesson 08, a second class of learners (brief r1)
    Right(
        "08",
        "ex3_accuracy",
        "torch.max for the predicted class, train(mode=...) restored in finally",
        """
def accuracy(model, images, labels):
    was_training = model.training
    model.train(False)
    try:
        with torch.inference_mode():
            _, predicted = torch.max(model(images), dim=1)
    finally:
        model.train(mode=was_training)
    return (predicted == labels).float().mean().item()
""",
    ),
    Right(
        "08",
        "ex5_log_features",
        "the loop under no_grad, outputs stored as they are (they carry no graph)",
        """
def log_features(model, layer, batches):
    features = []
    handle = layer.register_forward_hook(lambda module, inputs, output: features.append(output))
    try:
        with torch.no_grad():
            for x, _ in batches:
                model(x)
    finally:
        handle.remove()
    return features
""",
    ),
    Right(
        "08",
        "ex7_swish",
        "the derivative factored as s * (1 + beta * x * (1 - s))",
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
        return grad_output * s * (1 + ctx.beta * x * (1 - s)), None


def swish(x, beta):
    return Swish.apply(x, beta)
""",
    ),
    Right(
        "08",
        "ex2_validate",
        "a no_grad-decorated helper for one batch, the losses summed with sum()",
        """
import torch.nn.functional as F


@torch.no_grad()
def _batch_loss(model, x, y):
    return F.cross_entropy(model(x), y).item()


def validate(model, batches):
    was_training = model.training
    model.eval()
    total = 0.0
    total += sum(_batch_loss(model, x, y) for x, y in batches)
    model.train(was_training)
    return float(total) / len(batches)
""",
    ),
    Right(
        "08",
        "ex2_validate",
        "the batch losses summed under no_grad in one expression, one .item()",
        """
import torch.nn.functional as F


def validate(model, batches):
    was_training = model.training
    model.eval()
    total = 0.0
    with torch.no_grad():
        total = sum(F.cross_entropy(model(x), y) for x, y in batches).item()
    model.train(was_training)
    return float(total) / len(batches)
""",
    ),
    Right(
        "08",
        "ex3_accuracy",
        "@torch.no_grad() on the whole function, the mode restored in finally",
        """
@torch.no_grad()
def accuracy(model, images, labels):
    was_training = model.training
    model.eval()
    try:
        predicted = model(images).argmax(dim=1)
    finally:
        model.train(was_training)
    return (predicted == labels).float().mean().item()
""",
    ),
    # Lesson 09, a second class of learners (brief r1)
    Right(
        "09",
        "ex1_checkpointed_forward",
        "an index loop over len(blocks), preserve_rng_state spelt out",
        """
import torch.utils.checkpoint


def checkpointed_forward(blocks, x):
    h = x
    for i in range(len(blocks)):
        h = torch.utils.checkpoint.checkpoint(
            blocks[i], h, use_reentrant=False, preserve_rng_state=True
        )
    return h
""",
    ),
    Right(
        "09",
        "ex2_bf16_train_step",
        "model.zero_grad(set_to_none=True), torch.amp.autocast, float() of the loss",
        """
from torch.amp import autocast


def bf16_train_step(model, loss_fn, x, target, optimizer):
    model.zero_grad(set_to_none=True)
    with autocast(x.device.type, dtype=torch.bfloat16):
        prediction = model(x)
        loss = loss_fn(prediction, target)
    loss.backward()
    optimizer.step()
    return float(loss)
""",
    ),
    Right(
        "09",
        "ex3_autocast_predict",
        "modes as a list in modules() order, restored by zip with train(mode)",
        """
def autocast_predict(model, x):
    modules = list(model.modules())
    modes = [m.training for m in modules]
    model.eval()
    dtype = {"cpu": torch.bfloat16}.get(x.device.type, torch.float16)
    try:
        with torch.inference_mode():
            with torch.autocast(x.device.type, dtype):
                out = model(x)
    finally:
        for m, mode in zip(modules, modes):
            m.train(mode)
    return out.to(torch.float32)
""",
    ),
    Right(
        "09",
        "ex4_per_sample_grads",
        "a Python loop of autograd.grad on detached copies of every parameter, stacked",
        """
def per_sample_grads(model, loss_fn, x, y):
    names = [name for name, _ in model.named_parameters()]
    rows = {name: [] for name in names}
    params = {name: p.detach().requires_grad_() for name, p in model.named_parameters()}
    with torch.enable_grad():
        for i in range(len(x)):
            out = torch.func.functional_call(model, params, (x[i : i + 1],))
            grads = torch.autograd.grad(loss_fn(out, y[i : i + 1]), list(params.values()))
            for name, g in zip(names, grads):
                rows[name].append(g)
    return {name: torch.stack(rows[name]) for name in names}
""",
    ),
    Right(
        "09",
        "ex4_per_sample_grads",
        "vmap of grad of a lambda, the sample's batch dimension by slicing xi[None]",
        """
from torch.func import functional_call, grad, vmap


def per_sample_grads(model, loss_fn, x, y):
    params = {name: p.detach() for name, p in model.named_parameters()}
    per_sample = vmap(
        grad(lambda p, xi, yi: loss_fn(functional_call(model, p, (xi[None],)), yi[None])),
        in_dims=(None, 0, 0),
    )
    return per_sample(params, x, y)
""",
    ),
    Right(
        "09",
        "ex2_bf16_train_step",
        "the stale gradients set to None by hand, autocast entered through a variable",
        """
def bf16_train_step(model, loss_fn, x, target, optimizer):
    for group in optimizer.param_groups:
        for p in group["params"]:
            p.grad = None
    mixed = torch.autocast(device_type=x.device.type, dtype=torch.bfloat16)
    with mixed:
        loss = loss_fn(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    ),
    # Lessons 05-09, red team r4
    Right(
        "05",
        "ex1_extract_features",
        "copy.deepcopy of each detached output, the handles popped off a list in finally",
        """
import copy


def extract_features(model, names, x):
    features = {}
    handles = []
    try:
        for name in names:
            layer = model.get_submodule(name)

            def keep(m, a, out, name=name):
                features[name] = copy.deepcopy(out.detach()).cpu()

            handles.append(layer.register_forward_hook(keep))
        with torch.no_grad():
            model(x)
    finally:
        while handles:
            handles.pop().remove()
    return features
""",
    ),
    Right(
        "05",
        "ex2_clip_gradients",
        "a closure factory per parameter, torch.clip with keywords",
        """
def _clipper(limit):
    def hook(grad):
        return torch.clip(grad, min=-limit, max=limit)
    return hook


def clip_gradients(model, max_abs):
    handles = []
    for name, param in model.named_parameters():
        handles.append(param.register_hook(_clipper(max_abs)))
    return handles
""",
    ),
    Right(
        "05",
        "ex3_mask_output",
        "torch.where(mask.bool(), output, 0.0): the same as output * mask for a 0/1 mask",
        """
def mask_output(module, mask):
    def hook(m, args, output):
        return torch.where(mask.bool(), output, 0.0)
    return module.register_forward_hook(hook)
""",
    ),
    Right(
        "05",
        "ex3_mask_output",
        "torch.mul through functools.partial with the mask bound by keyword, with_kwargs",
        """
import functools


def _apply(module, args, kwargs, output, *, mask):
    return torch.mul(output, mask)


def mask_output(module, mask):
    return module.register_forward_hook(functools.partial(_apply, mask=mask), with_kwargs=True)
""",
    ),
    Right(
        "05",
        "ex4_train_and_log",
        "model.zero_grad() before the loop, optimizer.zero_grad(set_to_none=False) after each step",
        """
def train_and_log(model, layer_name, batches, lr):
    layer = model.get_submodule(layer_name)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    log = []
    h = layer.register_forward_hook(lambda m, a, o: log.append(o.mean().item()))
    try:
        model.zero_grad()
        for x, y in batches:
            torch.nn.functional.mse_loss(model(x), y).backward()
            opt.step()
            opt.zero_grad(set_to_none=False)
    finally:
        h.remove()
    return log
""",
    ),
    Right(
        "05",
        "ex4_train_and_log",
        "a with-statement helper that removes the hook, manual float()",
        """
import contextlib


@contextlib.contextmanager
def _hooked(layer, fn):
    handle = layer.register_forward_hook(fn)
    try:
        yield
    finally:
        handle.remove()


def train_and_log(model, layer_name, batches, lr):
    means = []
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    with _hooked(model.get_submodule(layer_name), lambda m, a, o: means.append(float(o.mean()))):
        for inputs, targets in batches:
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(model(inputs), targets)
            loss.backward()
            opt.step()
    return means
""",
    ),
    Right(
        "05",
        "ex5_forward_counting_saved",
        "Tensor.nbytes of each packed tensor, a subclass of saved_tensors_hooks",
        """
class _Counter(torch.autograd.graph.saved_tensors_hooks):
    def __init__(self):
        self.total = 0
        super().__init__(self.pack, self.unpack)

    def pack(self, t):
        self.total += t.nbytes
        return t

    @staticmethod
    def unpack(t):
        return t


def forward_counting_saved(model, x):
    counter = _Counter()
    with counter:
        output = model(x)
    return output, int(counter.total)
""",
    ),
    Right(
        "06",
        "ex1_benchmark",
        "one clock read per interval boundary: each lap ends where the next begins",
        """
def benchmark(work, synchronize, clock, warmup, repeats):
    for _ in range(warmup):
        work()
    synchronize()
    laps = []
    last = clock()
    for _ in range(repeats):
        work()
        synchronize()
        now = clock()
        laps.append(now - last)
        last = now
    laps.sort()
    return laps[repeats // 2]
""",
    ),
    Right(
        "06",
        "ex2_to_host",
        "synchronize skipped when the list is empty: nothing was copied",
        """
def to_host(tensors, synchronize):
    out = []
    for t in tensors:
        out.append(t.to("cpu", non_blocking=True))
    if out:
        synchronize()
    return out
""",
    ),
    Right(
        "06",
        "ex4_load_batch",
        "a loop over the batch, .to with keywords, a tuple at the end",
        """
def load_batch(batch, device):
    moved = []
    for tensor in batch:
        moved.append(tensor.to(device=device, non_blocking=True))
    return tuple(moved)
""",
    ),
    Right(
        "06",
        "ex5_epoch_mean_loss",
        "torch.stack of detached losses, mean, one .item()",
        """
def epoch_mean_loss(step, batches):
    losses = [step(batch).detach() for batch in batches]
    return torch.stack(losses).mean().item()
""",
    ),
    Right(
        "06",
        "ex6_overlap_copy",
        "an event recorded inside the side block after the copy, waited for after compute",
        """
def overlap_copy(compute, batch, side, cuda, device):
    with cuda.stream(side):
        moved = batch.to(device, non_blocking=True)
        copied = cuda.Event()
        copied.record()
    result = compute()
    here = cuda.current_stream()
    here.wait_event(copied)
    moved.record_stream(here)
    return result, moved
""",
    ),
    Right(
        "07",
        "ex1_silu",
        "the derivative as s + y * (1 - s), y recomputed, torch.addcmul",
        """
class SiLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.mul(x, torch.sigmoid(x))

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        y = x * s
        return grad_out * torch.addcmul(s, y, 1 - s)


def silu(x):
    return SiLU.apply(x)
""",
    ),
    Right(
        "07",
        "ex2_quantise",
        "plain rounding where nothing needs a gradient, the Function otherwise",
        """
class Quantise(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, step):
        out = torch.round(x / step) * step
        return out

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, None


def quantise(x, step):
    if not torch.is_grad_enabled() or not x.requires_grad:
        return torch.round(x / step) * step
    return Quantise.apply(x, step)
""",
    ),
    Right(
        "07",
        "ex3_backward_is_correct",
        "a float64 leaf that requires grad checked as it is (gradcheck restores what it perturbs)",
        """
def backward_is_correct(fn, x):
    if x.dtype == torch.float64 and x.requires_grad and x.is_leaf:
        x64 = x
    else:
        x64 = x.detach().double().requires_grad_()
    return torch.autograd.gradcheck(fn, (x64,), raise_exception=False)
""",
    ),
    Right(
        "07",
        "ex3_backward_is_correct",
        "gradcheck's error caught as a RuntimeError, the point rebuilt from tolist() in float64",
        """
from torch.autograd import gradcheck


def backward_is_correct(fn, x):
    point = torch.tensor(x.tolist(), dtype=torch.float64, device=x.device, requires_grad=True)
    try:
        return bool(gradcheck(fn, [point]))
    except RuntimeError:  # gradcheck's GradcheckError is a RuntimeError
        return False
""",
    ),
    Right(
        "07",
        "ex4_mul",
        "setup_context style, needs_input_grad unpacked by name",
        """
class Mul(torch.autograd.Function):
    @staticmethod
    def forward(a, b):
        return a * b

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, grad_out):
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        return (grad_out * b if need_a else None), (grad_out * a if need_b else None)


def mul(a, b):
    return Mul.apply(a, b)
""",
    ),
    Right(
        "07",
        "ex5_soft_clip",
        "tanh, an intermediate of forward, kept as a ctx attribute; x saved for show",
        """
class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, limit):
        t = torch.tanh(x / limit)
        ctx.t = t
        ctx.save_for_backward(x)
        return limit * t

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out * (1 - ctx.t ** 2), None


def soft_clip(x, limit):
    return SoftClip.apply(x, limit)
""",
    ),
    Right(
        "07",
        "ex6_softplus",
        "backward as grad_out / (1 + exp(-x))",
        """
class Softplus(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return torch.nn.functional.softplus(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out / (1 + torch.exp(-x))


def softplus(x):
    return Softplus.apply(x)
""",
    ),
    Right(
        "08",
        "ex1_train_epoch",
        "optimizer.step(closure), the loss the closure returns read with .item()",
        """
import torch.nn.functional as F


def train_epoch(model, optimizer, batches):
    losses = []
    for x, y in batches:
        def closure():
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            return loss
        losses.append(optimizer.step(closure).item())
    return losses
""",
    ),
    Right(
        "08",
        "ex2_validate",
        "torch.inference_mode as a decorator on a helper, statistics.fmean",
        """
import statistics

import torch.nn.functional as F


@torch.inference_mode()
def _batch_losses(model, batches):
    return [F.cross_entropy(model(x), y).item() for x, y in batches]


def validate(model, batches):
    was_training = model.training
    model.eval()
    try:
        return statistics.fmean(_batch_losses(model, batches))
    finally:
        model.train(was_training)
""",
    ),
    Right(
        "08",
        "ex3_accuracy",
        "a deep copy in evaluation mode, torch.eq and sum",
        """
import copy


def accuracy(model, images, labels):
    frozen = copy.deepcopy(model).eval()
    with torch.no_grad():
        hits = torch.eq(frozen(images).argmax(dim=-1), labels).sum().item()
    return hits / labels.numel()
""",
    ),
    Right(
        "08",
        "ex5_log_features",
        "a global forward hook filtered by module identity, removed in finally",
        """
def log_features(model, layer, batches):
    features = []

    def hook(module, inputs, output):
        if module is layer:
            features.append(output.detach())

    handle = torch.nn.modules.module.register_module_forward_hook(hook)
    try:
        for x, _ in batches:
            model(x)
    finally:
        handle.remove()
    return features
""",
    ),
    Right(
        "09",
        "ex1_checkpointed_forward",
        "torch.utils.checkpoint through the module path, over named_children()",
        """
import torch.utils.checkpoint as cp


def checkpointed_forward(blocks, x):
    out = x
    for _, block in blocks.named_children():
        out = cp.checkpoint(block, out, use_reentrant=False, preserve_rng_state=True)
    return out
""",
    ),
    Right(
        "09",
        "ex2_bf16_train_step",
        "optimizer.step(closure): the closure zeroes, runs autocast and backward",
        """
def bf16_train_step(model, loss_fn, x, target, optimizer):
    def closure():
        optimizer.zero_grad()
        with torch.autocast(device_type=x.device.type, dtype=torch.bfloat16):
            loss = loss_fn(model(x), target)
        loss.backward()
        return loss

    return float(optimizer.step(closure))
""",
    ),
    Right(
        "09",
        "ex3_autocast_predict",
        "modes by name restored with train(mode), to(torch.float32) after inference_mode",
        """
def autocast_predict(model, x):
    kind = x.device.type
    half = torch.bfloat16 if kind == "cpu" else torch.float16
    before = {name: m.training for name, m in model.named_modules()}
    model.eval()
    try:
        with torch.inference_mode(), torch.autocast(kind, dtype=half):
            y = model(x)
    finally:
        for name, m in model.named_modules():
            m.train(before[name])
    return y.to(torch.float32)
""",
    ),
    # Red team r3 (lessons 01-03, second round)
    Right(
        "01",
        "ex1_product_grads",
        "clone() alone: a copy of a tensor that needs no grad is already a leaf",
        """
def product_grads(a, b):
    a, b = a.clone().requires_grad_(True), b.clone().requires_grad_(True)
    c = torch.mul(a, b)
    c.retain_grad()
    y = c.pow(2).sum()
    y.backward()
    return a.grad, b.grad, c.grad
""",
    ),
    Right(
        "01",
        "ex2_output_requires_grad",
        "bool of a sum of flags",
        """
def output_requires_grad(*inputs):
    return bool(sum(t.requires_grad for t in inputs))
""",
    ),
    Right(
        "01",
        "ex3_make_trainable",
        "torch.Tensor(values) (float32 from integers), moved, then a leaf again by detach()",
        """
def make_trainable(values, device):
    weights = torch.Tensor(values).to(device)
    return weights.detach().requires_grad_()
""",
    ),
    Right(
        "01",
        "ex5_backward_seed",
        "loss.new_tensor(1): the loss's dtype and device, 0-dimensional",
        """
def backward_seed(loss):
    return loss.new_tensor(1)
""",
    ),
    Right(
        "01",
        "ex6_finetune_last_layer",
        "everything frozen, then the last layer unfrozen",
        """
import torch.nn.functional as F


def finetune_last_layer(model, x, target, lr):
    model.requires_grad_(False)
    last = model[len(model) - 1]
    last.requires_grad_(True)
    opt = torch.optim.SGD(last.parameters(), lr)
    opt.zero_grad(set_to_none=True)
    loss = F.mse_loss(model(x), target)
    loss.backward()
    opt.step()
    return float(loss)
""",
    ),
    Right(
        "02",
        "ex1_evaluate",
        "nll_loss of log_softmax, max(1) indices, set_grad_enabled(False)",
        """
import torch.nn.functional as F


def evaluate(model, batches):
    losses, accs = [], []
    with torch.set_grad_enabled(False):
        for inputs, labels in batches:
            out = model(inputs)
            losses.append(float(F.nll_loss(F.log_softmax(out, dim=1), labels)))
            accs.append(float((out.max(1).indices == labels).to(out.dtype).mean()))
    return sum(losses) / len(losses), sum(accs) / len(accs)
""",
    ),
    Right(
        "02",
        "ex2_count_saved_bytes",
        "numel() * itemsize, pack returns a detached clone",
        """
def count_saved_bytes(fn, *args):
    counted = [0]

    def pack(t):
        counted[0] += t.numel() * t.itemsize
        return t.detach().clone()

    def unpack(t):
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        result = fn(*args)
    return result, int(counted[0])
""",
    ),
    Right(
        "02",
        "ex3_run_step",
        "backward and step after the set_grad_enabled block, model.zero_grad()",
        """
def run_step(model, inputs, labels, optimizer, train):
    with torch.set_grad_enabled(train):
        loss = torch.nn.functional.cross_entropy(model(inputs), labels)
    if train:
        model.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()
""",
    ),
    Right(
        "02",
        "ex5_input_saliency",
        "inference_mode(False) alone (it turns grad mode on), torch.func.grad of a clone",
        """
def input_saliency(model, x):
    with torch.inference_mode(False):
        return torch.func.grad(lambda inp: model(inp).sum())(x.clone())
""",
    ),
    Right(
        "03",
        "ex1_dropout_by_hand",
        "masked_fill, then divide by the keep probability",
        """
def dropout_by_hand(x, p, u, training):
    if training:
        return x.masked_fill(u < p, 0) / (1 - p)
    return x
""",
    ),
    Right(
        "03",
        "ex2_eval_grads",
        "autograd.grad: the stale .grad is never read nor touched",
        """
def eval_grads(model, x, target):
    was_training = model.training
    model.eval()
    try:
        names, params = zip(*model.named_parameters())
        loss = torch.nn.functional.mse_loss(model(x), target)
        grads = torch.autograd.grad(loss, params)
    finally:
        model.train(was_training)
    return dict(zip(names, grads))
""",
    ),
    Right(
        "03",
        "ex4_finetune_head",
        "backbone.train(False), features detached afterwards, head[-1] trained",
        """
def finetune_head(backbone, head, x, target, lr):
    backbone.train(False)
    head.train(True)
    features = backbone(x).detach()
    opt = torch.optim.SGD(head[-1].parameters(), lr=lr)
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(head(features), target)
    loss.backward()
    opt.step()
    return loss.item()
""",
    ),
    Right(
        "03",
        "ex5_mc_dropout_predict",
        "every module's mode set from its type, inference_mode, modes put back",
        """
from torch import nn


def mc_dropout_predict(model, x, samples):
    saved = {m: m.training for m in model.modules()}
    for m in model.modules():
        m.train(isinstance(m, nn.Dropout))
    try:
        with torch.inference_mode():
            preds = torch.stack([model(x) for _ in range(samples)])
    finally:
        for m, mode in saved.items():
            m.training = mode
    return preds.mean(0), preds.std(0)
""",
    ),
    Right(
        "03",
        "ex3_validate",
        "train(False), a tensor of losses, mean as float",
        """
def validate(model, batches):
    previous = model.training
    model.train(False)
    try:
        with torch.no_grad():
            losses = torch.stack(
                [torch.nn.functional.mse_loss(model(x), y).double() for x, y in batches]
            )
    finally:
        model.train(previous)
    return float(losses.mean())
""",
    ),
    Right(
        "01",
        "ex7_to_device",
        "chained .to(device).to(dtype) for the model, .type(dtype) for the batch",
        """
def to_device(batch, model, device, dtype):
    model = model.to(device).to(dtype)
    return batch.to(device).type(dtype), model
""",
    ),
    # Lessons 01-04, red team r4
    Right(
        "01",
        "ex1_product_grads",
        "detach() alone, no clone: the new tensor's flag is its own, the caller's untouched",
        """
def product_grads(a, b):
    a = a.detach().requires_grad_()
    b = b.detach().requires_grad_()
    c = a * b
    c.retain_grad()
    (c**2).sum().backward()
    return a.grad, b.grad, c.grad
""",
    ),
    Right(
        "01",
        "ex1_product_grads",
        "torch.autograd.backward with the leaves and c named as inputs",
        """
def product_grads(a, b):
    la = a.detach().clone().requires_grad_(True)
    lb = b.detach().clone().requires_grad_(True)
    c = torch.mul(la, lb)
    c.retain_grad()
    torch.autograd.backward(c.square().sum(), inputs=[la, lb, c])
    return (la.grad, lb.grad, c.grad)
""",
    ),
    Right(
        "01",
        "ex2_output_requires_grad",
        "not all(not ...): De Morgan's form of any",
        """
def output_requires_grad(*inputs):
    return not all(not t.requires_grad for t in inputs)
""",
    ),
    Right(
        "01",
        "ex3_make_trainable",
        "as_tensor, converted with .to (no history yet), then requires_grad_",
        """
def make_trainable(values, device):
    t = torch.as_tensor(values, device=device).to(torch.float32)
    return t.requires_grad_()
""",
    ),
    Right(
        "01",
        "ex3_make_trainable",
        "torch.autograd.Variable with requires_grad=True (it returns a plain leaf tensor)",
        """
from torch.autograd import Variable


def make_trainable(values, device):
    return Variable(torch.tensor(values, dtype=torch.float, device=device), requires_grad=True)
""",
    ),
    Right(
        "01",
        "ex4_per_batch_grads",
        "torch.func.grad of the loss for each batch, w.grad left as it came",
        """
from torch.func import grad


def _loss(w, x):
    return ((x @ w) ** 2).mean()


def per_batch_grads(w, batches):
    return [grad(_loss)(w.detach(), x) for x in batches]
""",
    ),
    Right(
        "01",
        "ex4_per_batch_grads",
        "the arriving .grad saved and put back, a zeros .grad before each batch",
        """
def per_batch_grads(w, batches):
    saved = w.grad
    out = []
    for x in batches:
        w.grad = torch.zeros_like(w)
        loss = ((x @ w) ** 2).mean()
        loss.backward()
        out.append(w.grad.detach().clone())
    w.grad = saved
    return out
""",
    ),
    Right(
        "01",
        "ex5_backward_seed",
        "loss.detach() ** 0: one even for an inf or nan loss",
        """
def backward_seed(loss):
    return loss.detach() ** 0
""",
    ),
    Right(
        "01",
        "ex5_backward_seed",
        "a one-element float32 tensor summed to 0-dim, in the loss's dtype",
        """
def backward_seed(loss):
    return torch.ones(1, dtype=loss.dtype, device=loss.device).sum()
""",
    ),
    Right(
        "01",
        "ex6_finetune_last_layer",
        "the step by torch.autograd.grad and torch._foreach_add_ style in a loop, others frozen",
        """
def finetune_last_layer(model, x, target, lr):
    for layer in list(model)[:-1]:
        for p in layer.parameters():
            p.requires_grad = False
    params = list(model[-1].parameters())
    loss = torch.nn.functional.mse_loss(model(x), target)
    grads = torch.autograd.grad(loss, params)
    with torch.no_grad():
        for p, g in zip(params, grads):
            p.sub_(lr * g)
    return float(loss)
""",
    ),
    Right(
        "01",
        "ex6_finetune_last_layer",
        "SGD with plain momentum: one step from a fresh optimizer is a plain SGD step",
        """
def finetune_last_layer(model, x, target, lr):
    model[:-1].requires_grad_(False)
    optimizer = torch.optim.SGD(model[-1].parameters(), lr=lr, momentum=0.9)
    optimizer.zero_grad(set_to_none=True)
    loss = torch.nn.functional.mse_loss(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    ),
    Right(
        "01",
        "ex7_to_device",
        "model.apply moving each submodule's own tensors",
        """
def to_device(batch, model, device, dtype):
    model.apply(lambda m: m.to(device=device, dtype=dtype))
    return batch.to(device=device, dtype=dtype, copy=False), model
""",
    ),
    Right(
        "02",
        "ex1_evaluate",
        "a module-level no_grad instance reused as a context, sums with math.fsum",
        """
import math

_NO_GRAD = torch.no_grad()


def evaluate(model, batches):
    losses, accs = [], []
    with _NO_GRAD:
        for inputs, labels in batches:
            logits = model(inputs)
            losses.append(float(torch.nn.functional.cross_entropy(logits, labels)))
            accs.append(float((logits.max(dim=1).indices == labels).sum()) / len(labels))
    return math.fsum(losses) / len(batches), math.fsum(accs) / len(batches)
""",
    ),
    Right(
        "02",
        "ex1_evaluate",
        "summed cross-entropy divided by the batch size, accuracy by eq().sum()",
        """
def evaluate(model, batches):
    total_loss = total_acc = 0.0
    with torch.inference_mode():
        for inputs, labels in batches:
            logits = model(inputs)
            n = labels.shape[0]
            summed = torch.nn.functional.cross_entropy(logits, labels, reduction="sum")
            total_loss += summed.item() / n
            total_acc += logits.argmax(-1).eq(labels).sum().item() / n
    return total_loss / len(batches), total_acc / len(batches)
""",
    ),
    Right(
        "02",
        "ex2_count_saved_bytes",
        "shape.numel() * dtype.itemsize, sizes in a list",
        """
def count_saved_bytes(fn, *args):
    sizes = []

    def pack(saved):
        sizes.append(saved.shape.numel() * saved.dtype.itemsize)
        return saved

    def unpack(saved):
        return saved

    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        result = fn(*args)
    return result, sum(sizes)
""",
    ),
    Right(
        "02",
        "ex2_count_saved_bytes",
        "pack stores each tensor in a dict under a counter key, unpack looks it up",
        """
def count_saved_bytes(fn, *args):
    store = {}

    def pack(saved):
        key = len(store)
        store[key] = saved.detach()
        return key

    with torch.autograd.graph.saved_tensors_hooks(pack, store.__getitem__):
        result = fn(*args)
    return result, sum(t.nelement() * t.element_size() for t in store.values())
""",
    ),
    Right(
        "02",
        "ex3_run_step",
        "optimizer.step(closure): the closure zeroes, computes and backpropagates the loss",
        """
def run_step(model, inputs, labels, optimizer, train):
    def closure():
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(inputs), labels)
        loss.backward()
        return loss

    with torch.set_grad_enabled(train):
        if train:
            loss = optimizer.step(closure)
        else:
            loss = torch.nn.functional.cross_entropy(model(inputs), labels)
    return loss.item()
""",
    ),
    Right(
        "02",
        "ex3_run_step",
        "the previous grad mode saved with is_grad_enabled and put back in finally",
        """
def run_step(model, inputs, labels, optimizer, train):
    previous = torch.is_grad_enabled()
    torch.set_grad_enabled(train)
    try:
        loss = torch.nn.functional.cross_entropy(model(inputs), labels)
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        value = float(loss)
    finally:
        torch.set_grad_enabled(previous)
    return value
""",
    ),
    Right(
        "02",
        "ex4_frozen_features",
        "a module-level no_grad instance reused as a context, the features cloned",
        """
NO_GRAD = torch.no_grad()


def frozen_features(backbone, x):
    with NO_GRAD:
        features = backbone(x).clone()
    return features
""",
    ),
    Right(
        "02",
        "ex4_frozen_features",
        "functional_call with detached parameters and a detached input: nothing requires grad",
        """
from torch.func import functional_call


def frozen_features(backbone, x):
    params = {name: p.detach() for name, p in backbone.named_parameters()}
    return functional_call(backbone, params, (x.detach(),))
""",
    ),
    Right(
        "02",
        "ex5_input_saliency",
        "create_graph=True: the gradient's values, with a history the check allows",
        """
def input_saliency(model, x):
    with torch.inference_mode(False), torch.enable_grad():
        xc = x.clone().requires_grad_()
        (saliency,) = torch.autograd.grad(model(xc).sum(), xc, create_graph=True)
    return saliency
""",
    ),
    Right(
        "02",
        "ex5_input_saliency",
        "backward(inputs=[x_copy]): only the copy gets a .grad",
        """
def input_saliency(model, x):
    with torch.inference_mode(mode=False):
        with torch.enable_grad():
            x_copy = x.clone().requires_grad_(True)
            model(x_copy).sum().backward(inputs=[x_copy])
    return x_copy.grad
""",
    ),
    Right(
        "02",
        "ex5_input_saliency",
        "torch.func.vjp with a ones cotangent",
        """
from torch.func import vjp


def input_saliency(model, x):
    with torch.inference_mode(False):
        x_copy = x.clone()
        out, pullback = vjp(lambda t: model(t).sum(), x_copy)
        (g,) = pullback(torch.ones_like(out))
    return g
""",
    ),
    Right(
        "03",
        "ex1_dropout_by_hand",
        "a clone, its dropped elements set by boolean indexing, then divided",
        """
def dropout_by_hand(x, p, u, training):
    if training:
        out = x.clone()
        out[u < p] = 0
        return out / (1 - p)
    return x
""",
    ),
    Right(
        "03",
        "ex1_dropout_by_hand",
        "method chain: mul by the mask, div by the keep probability",
        """
def dropout_by_hand(x, p, u, training):
    return x.mul(u.ge(p)).div(1 - p) if training else x
""",
    ),
    Right(
        "03",
        "ex2_eval_grads",
        "autograd.grad under enable_grad, modes restored by model.apply from a list",
        """
def eval_grads(model, x, target):
    modes = [m.training for m in model.modules()]
    model.eval()
    try:
        with torch.enable_grad():
            names, params = zip(*model.named_parameters())
            grads = torch.autograd.grad(torch.nn.functional.mse_loss(model(x), target), params)
    finally:
        for m, mode in zip(model.modules(), modes):
            m.training = mode
    return dict(zip(names, grads))
""",
    ),
    Right(
        "03",
        "ex3_validate",
        "modes as (module, flag) pairs, set_grad_enabled(False), math.fsum",
        """
import math


def validate(model, batches):
    saved = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        with torch.set_grad_enabled(False):
            losses = [float(torch.nn.functional.mse_loss(model(x), y)) for x, y in batches]
    finally:
        for m, flag in saved:
            m.train(flag)
    return math.fsum(losses) / len(losses)
""",
    ),
    Right(
        "03",
        "ex4_finetune_head",
        "the head's Dropout applied with F.dropout(training=True), then its Linear",
        """
import torch.nn.functional as F


def finetune_head(backbone, head, x, target, lr):
    backbone.eval()
    with torch.no_grad():
        features = backbone(x)
    drop, linear = head[0], head[1]
    head.train()
    out = linear(F.dropout(features, p=drop.p, training=True))
    loss = F.mse_loss(out, target)
    optimizer = torch.optim.SGD(head.parameters(), lr=lr)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    ),
    Right(
        "03",
        "ex4_finetune_head",
        "optimizer.step(closure) over the head",
        """
def finetune_head(backbone, head, x, target, lr):
    backbone.eval()
    head.train()
    with torch.no_grad():
        features = backbone(x)
    optimizer = torch.optim.SGD(head.parameters(), lr=lr)

    def closure():
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(head(features), target)
        loss.backward()
        return loss

    return optimizer.step(closure).item()
""",
    ),
    Right(
        "03",
        "ex5_mc_dropout_predict",
        "std_mean with correction=1, modes kept as (module, flag) pairs",
        """
def mc_dropout_predict(model, x, samples):
    saved = [(m, m.training) for m in model.modules()]
    for m, _ in saved:
        m.train(isinstance(m, torch.nn.Dropout))
    try:
        with torch.no_grad():
            preds = torch.stack([model(x) for _ in range(samples)])
    finally:
        for m, flag in saved:
            m.train(flag)
    std, mean = torch.std_mean(preds, dim=0, correction=1)
    return mean, std
""",
    ),
    Right(
        "03",
        "ex6_finetune_mode",
        "filter() over modules(), train(False) on each BatchNorm",
        """
BATCH_NORMS = (torch.nn.BatchNorm1d, torch.nn.BatchNorm2d, torch.nn.BatchNorm3d)


def finetune_mode(model):
    model.train(True)
    for bn in filter(lambda m: isinstance(m, BATCH_NORMS), model.modules()):
        bn.train(False)
""",
    ),
    Right(
        "03",
        "ex6_finetune_mode",
        "a recursive walk over children, each module set before its children",
        """
def _walk(module):
    module.train(not isinstance(module, torch.nn.BatchNorm1d))
    for child in module.children():
        _walk(child)


def finetune_mode(model):
    _walk(model)
""",
    ),
    Right(
        "04",
        "ex1_frozen_copy",
        "an independent copy by a round trip through float64 (exact for every float dtype)",
        """
def frozen_copy(t, share):
    if share:
        return t.detach()
    return t.detach().double().to(t.dtype) if t.dtype != torch.float64 else t.detach().clone()
""",
    ),
    Right(
        "04",
        "ex1_frozen_copy",
        "copy.deepcopy of the detached tensor",
        """
import copy


def frozen_copy(t, share):
    detached = t.detach()
    return detached if share else copy.deepcopy(detached)
""",
    ),
    Right(
        "04",
        "ex1_frozen_copy",
        "t.new_tensor(t) for the copy, detach() to share",
        """
def frozen_copy(t, share):
    if share:
        return t.detach()
    with torch.no_grad():
        return t.detach().mul(1)
""",
    ),
    Right(
        "04",
        "ex2_detach_all",
        "the RuntimeError inspected: re-raised unless it is the view error",
        """
def detach_all(tensors):
    out = []
    for t in tensors:
        try:
            t.detach_()
            out.append(t)
        except RuntimeError as err:
            if "view" not in str(err):
                raise
            out.append(t.detach())
    return out
""",
    ),
    Right(
        "04",
        "ex2_detach_all",
        "contextlib.suppress for the in-place try, detach() when it did not take",
        """
import contextlib


def detach_all(tensors):
    out = []
    for t in tensors:
        with contextlib.suppress(RuntimeError):
            t.detach_()
        out.append(t if not t.requires_grad else t.detach())
    return out
""",
    ),
    Right(
        "04",
        "ex3_normalised_and_grad",
        "torch.func.grad for the gradient, p from exp of a detached product",
        """
from torch.func import grad


def normalised_and_grad(w, x):
    g = grad(lambda v: torch.exp(x @ v).sum())(w.detach())
    e = torch.exp(x @ w.detach())
    return e / e.sum(), g
""",
    ),
    Right(
        "04",
        "ex3_normalised_and_grad",
        "out.detach() divided out of place, backward with retain_graph",
        """
def normalised_and_grad(w, x):
    out = (x @ w).exp()
    values = out.detach()
    p = values / values.sum()
    out.sum().backward(retain_graph=True)
    return p, w.grad
""",
    ),
    Right(
        "04",
        "ex4_d_step",
        "float32 targets from torch.ones(n, 1): the loss promotes them, 0 and 1 are exact",
        """
import torch.nn.functional as F


def d_step(G, D, opt_d, real, z):
    opt_d.zero_grad()
    fake = G(z).detach()
    n = real.shape[0]
    ones = torch.ones(n, 1, device=real.device)
    zeros = torch.zeros(n, 1, device=real.device)
    loss_d = F.binary_cross_entropy_with_logits(D(real), ones) + F.binary_cross_entropy_with_logits(
        D(fake), zeros
    )
    loss_d.backward()
    opt_d.step()
    return loss_d.item()
""",
    ),
    Right(
        "04",
        "ex4_d_step",
        "opt_d.step(closure): the closure zeroes, computes and backpropagates loss_d",
        """
import torch.nn.functional as F


def d_step(G, D, opt_d, real, z):
    fake = G(z).detach()

    def closure():
        opt_d.zero_grad()
        real_logits, fake_logits = D(real), D(fake)
        loss = F.binary_cross_entropy_with_logits(
            real_logits, torch.ones_like(real_logits)
        ) + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
        loss.backward()
        return loss

    return opt_d.step(closure).item()
""",
    ),
    Right(
        "04",
        "ex4_d_step",
        "softplus written out: softplus(-real logits) + softplus(fake logits), means",
        """
import torch.nn.functional as F


def d_step(G, D, opt_d, real, z):
    with torch.no_grad():
        fake = G(z)
    opt_d.zero_grad()
    loss_d = F.softplus(-D(real)).mean() + F.softplus(D(fake)).mean()
    loss_d.backward()
    opt_d.step()
    return float(loss_d)
""",
    ),
    Right(
        "04",
        "ex5_g_step",
        "float32 targets from torch.ones(n, 1): the loss promotes them, 0 and 1 are exact",
        """
import torch.nn.functional as F


def g_step(G, D, opt_g, z):
    opt_g.zero_grad()
    logits = D(G(z))
    loss_g = F.binary_cross_entropy_with_logits(logits, torch.ones(z.shape[0], 1, device=z.device))
    loss_g.backward()
    opt_g.step()
    return loss_g.item()
""",
    ),
    Right(
        "04",
        "ex5_g_step",
        "opt_g.step(closure)",
        """
import torch.nn.functional as F


def g_step(G, D, opt_g, z):
    def closure():
        opt_g.zero_grad()
        logits = D(G(z))
        loss = F.binary_cross_entropy_with_logits(logits, torch.ones_like(logits))
        loss.backward()
        return loss

    return opt_g.step(closure).item()
""",
    ),
    Right(
        "04",
        "ex5_g_step",
        "G's gradients cleared again after the step (set to None)",
        """
import torch.nn.functional as F


def g_step(G, D, opt_g, z):
    opt_g.zero_grad()
    logits = D(G(z))
    loss_g = F.binary_cross_entropy_with_logits(logits, torch.ones_like(logits))
    loss_g.backward()
    opt_g.step()
    opt_g.zero_grad(set_to_none=True)
    return loss_g.item()
""",
    ),
    Right(
        "06",
        "ex4_load_batch",
        "a tuple batch unpacked, a list returned, as the prompt allows (held-back set)",
        """
def load_batch(batch, device):
    inputs, targets = batch
    return [inputs.to(device, non_blocking=True), targets.to(device, non_blocking=True)]
""",
    ),
    Right(
        "09",
        "ex4_per_sample_grads",
        "the result returned as a collections.OrderedDict (a dict subclass) in parameter "
        "order (held-back set, 2026-12-06)",
        """
from collections import OrderedDict

from torch.func import functional_call, grad, vmap


def per_sample_grads(model, loss_fn, x, y):
    params = OrderedDict((name, p.detach()) for name, p in model.named_parameters())

    def loss_of_one(params, xi, yi):
        return loss_fn(functional_call(model, params, (xi.unsqueeze(0),)), yi.unsqueeze(0))

    rows = vmap(grad(loss_of_one), in_dims=(None, 0, 0))(params, x, y)
    return OrderedDict((name, rows[name]) for name in params)
""",
    ),
    Right(
        "09",
        "ex2_bf16_train_step",
        "backward and step inside the autocast block, cache_enabled=False, the .grad set to "
        "None by a loop: its backward runs in its own bfloat16 block, so the check sets "
        "autocast's default dtype rather than calling from a float16 autocast region (held-"
        "back set, 2026-12-06)",
        """
def bf16_train_step(model, loss_fn, x, target, optimizer):
    for group in optimizer.param_groups:
        for p in group["params"]:
            p.grad = None
    with torch.autocast(device_type=x.device.type, dtype=torch.bfloat16, cache_enabled=False):
        loss = loss_fn(model(x), target)
        loss.backward()
        optimizer.step()
    return float(loss.detach())
""",
    ),
    Right(
        "04",
        "ex2_detach_all",
        "asks Tensor._is_view() first: detach() for views, detach_() for the rest (fourth "
        "held-back set; allowed by the policy since 2026-12-06)",
        """
def detach_all(tensors):
    return [t.detach() if t._is_view() else t.detach_() for t in tensors]
""",
    ),
    Right(
        "06",
        "ex1_benchmark",
        "chained intervals: one synchronize+clock before the loop, then each end time is the "
        "next start; median via heapq.nsmallest (fourth held-back set; allowed by the policy "
        "since 2026-12-06)",
        """
import heapq


def benchmark(work, synchronize, clock, warmup, repeats):
    for _ in range(warmup):
        work()
    synchronize()
    previous = clock()
    durations = []
    for _ in range(repeats):
        work()
        synchronize()
        now = clock()
        durations.append(now - previous)
        previous = now
    return heapq.nsmallest(repeats // 2 + 1, durations)[-1]
""",
    ),
    Right(
        "09",
        "ex2_bf16_train_step",
        "torch.autocast used as a decorator on an inner compute_loss(); backward and step "
        "outside it (fourth held-back set; allowed by the policy since 2026-12-06)",
        """
import torch


def bf16_train_step(model, loss_fn, x, target, optimizer):
    @torch.autocast(device_type=x.device.type, dtype=torch.bfloat16)
    def compute_loss():
        return loss_fn(model(x), target)

    optimizer.zero_grad()
    loss = compute_loss()
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    ),
    Right(
        "08",
        "ex3_accuracy",
        "classifies the images one at a time in a loop, modes and grad mode restored in "
        "finally (ninth held-back set; the raising case's message holds the batch size, "
        "compared without its numbers since 2026-12-06)",
        """
import torch


def accuracy(model, images, labels):
    was_training = model.training
    model.train(False)
    correct = 0
    try:
        with torch.set_grad_enabled(False):
            for img, lab in zip(images, labels):
                correct += int(model(img.unsqueeze(0))[0].argmax() == lab)
    finally:
        model.train(was_training)
    return correct / len(labels)
""",
    ),
    Right(
        "07",
        "ex5_soft_clip",
        "an lru_cache'd factory makes one Function per limit (tenth held-back set; "
        "functools.lru_cache allowed by the policy since 2026-12-06)",
        """
import functools
import torch


@functools.lru_cache(maxsize=None)
def _soft_clip_fn(limit):
    '''One stateless Function class per limit, with the limit baked in.'''

    class _SoftClip(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = limit * torch.tanh(x / limit)
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad_out):
            (y,) = ctx.saved_tensors
            r = y / limit
            return grad_out * (1 - r * r)

    return _SoftClip


class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, limit):
        return _soft_clip_fn(limit).forward(ctx, x)

    @staticmethod
    def backward(ctx, grad_out):
        return _SoftClip_backward(ctx, grad_out), None


def _SoftClip_backward(ctx, grad_out):
    (y,) = ctx.saved_tensors
    return grad_out * (1 - (y / ctx.limit) ** 2)


def soft_clip(x, limit):
    return _soft_clip_fn(float(limit)).apply(x)
""",
    ),
    Right(
        "06",
        "ex6_overlap_copy",
        "makes the side stream wait for the current one before the copy, as §10's cell "
        "does: the copy still overlaps the computation (eleventh held-back set, "
        "2026-12-06)",
        """
def overlap_copy(compute, batch, side, cuda, device):
    main = cuda.current_stream()
    side.wait_stream(main)  # as in §10: the side stream starts after what was queued before
    with cuda.stream(side):
        moved = batch.to(device, non_blocking=True)
    result = compute()  # queued on main: runs while the copy runs
    main.wait_stream(side)
    moved.record_stream(main)
    return result, moved
""",
    ),
    Right(
        "06",
        "ex6_overlap_copy",
        "waits through an event the side stream records itself (side.record_event()), "
        "then asks the event whether it is done: the model's record_event once gave an "
        "event of the CPU device, which query() could not read",
        """
def overlap_copy(compute, batch, side, cuda, device):
    main = cuda.current_stream()
    with cuda.stream(side):
        moved = batch.to(device, non_blocking=True)
        done = side.record_event()
    result = compute()
    done.wait(main)
    if not done.query():
        pass  # still copying: main waits for it on the device, the host does not
    moved.record_stream(main)
    return result, moved
""",
    ),
    Right(
        "02",
        "ex2_count_saved_bytes",
        "subclasses saved_tensors_hooks and packs with its own private method self._pack, "
        "allowed since the class is only called (eleventh held-back set, 2026-12-06)",
        """
import torch


class _SavedBytesCounter(torch.autograd.graph.saved_tensors_hooks):
    def __init__(self):
        self.nbytes = 0
        super().__init__(self._pack, self._unpack)

    def _pack(self, saved):
        self.nbytes += saved.element_size() * saved.nelement()
        return saved.detach()

    @staticmethod
    def _unpack(saved):
        return saved


def count_saved_bytes(fn, *args):
    counter = _SavedBytesCounter()
    with counter:
        result = fn(*args)
    return result, int(counter.nbytes)
""",
    ),
    Right(
        "05",
        "ex4_train_and_log",
        "removes its hook in an except BaseException clause and re-raises, then once more "
        "after the loop (thirteenth held-back set, 2026-12-06)",
        """
import torch


def train_and_log(model, layer_name, batches, lr):
    for name, module in model.named_modules():
        if name == layer_name:
            break
    else:
        raise KeyError(layer_name)
    means = []

    def log_mean(module, args, output):
        means.append(output.detach().mean().item())

    handle = module.register_forward_hook(log_mean)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    try:
        for x, y in batches:
            optimizer.zero_grad(set_to_none=True)
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
    except BaseException:
        handle.remove()
        raise
    handle.remove()
    return means
""",
    ),
    Right(
        "06",
        "ex1_benchmark",
        "keeps the laps sorted with bisect.insort and takes the middle one (thirteenth "
        "held-back set, 2026-12-06)",
        """
import bisect


def benchmark(work, synchronize, clock, warmup, repeats):
    for _ in range(warmup):
        work()
    ordered = []
    for _ in range(repeats):
        synchronize()
        begin = clock()
        work()
        synchronize()
        bisect.insort(ordered, clock() - begin)
    return ordered[len(ordered) // 2]
""",
    ),
    Right(
        "01",
        "ex1_product_grads",
        "detached clones; autograd.grad for a, b and c at once (fourteenth held-back set's "
        "kinds, rewritten 2026-12-07)",
        """
import torch

def product_grads(a, b):
    a2 = a.detach().clone().requires_grad_(True)
    b2 = b.detach().clone().requires_grad_(True)
    c = a2 * b2
    y = (c * c).sum()
    return torch.autograd.grad(y, (a2, b2, c))
""",
    ),
    Right(
        "01",
        "ex5_backward_seed",
        "a full_like seed of one (fourteenth held-back set's kinds, rewritten 2026-12-07)",
        """
import torch


def backward_seed(loss):
    return torch.full_like(loss, 1.0)
""",
    ),
    Right(
        "01",
        "ex7_to_device",
        "two calls of .to, device first, then dtype (fourteenth held-back set's kinds, "
        "rewritten 2026-12-07)",
        """
def to_device(batch, model, device, dtype):
    batch = batch.to(device).to(dtype)
    model.to(device)
    model.to(dtype)
    return batch, model
""",
    ),
    Right(
        "08",
        "ex1_train_epoch",
        "model.zero_grad() at the top of each batch (fourteenth held-back set's kinds, "
        "rewritten 2026-12-07)",
        '''
import torch.nn.functional as F


def train_epoch(model, optimizer, batches):
    """One pass over the training batches; returns the loss of each batch."""
    losses = []
    for x, y in batches:
        model.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
''',
    ),
    Right(
        "07",
        "ex2_quantise",
        "the detach trick written with torch.add and a sub (fourteenth held-back set's kinds,"
        " rewritten 2026-12-07)",
        """
import torch


def quantise(x, step):
    q = torch.round(x / step) * step
    return torch.add(x, (q - x).detach())
""",
    ),
    Right(
        "02",
        "ex1_evaluate",
        "inference_mode, a running sum, the mode put back with train(was) (fourteenth held-"
        "back set's kinds, rewritten 2026-12-07)",
        """
import torch
import torch.nn.functional as F


def evaluate(model, batches):
    was = model.training
    model.eval()
    total_loss = total_acc = 0.0
    try:
        with torch.inference_mode():
            for x, y in batches:
                logits = model(x)
                total_loss += float(F.cross_entropy(logits, y))
                total_acc += float((logits.argmax(dim=1) == y).double().mean())
    finally:
        model.train(was)
    return total_loss / len(batches), total_acc / len(batches)
""",
    ),
    Right(
        "06",
        "ex5_epoch_mean_loss",
        "a running sum on the device, one float() at the end (fourteenth held-back set's "
        "kinds, rewritten 2026-12-07)",
        """
def epoch_mean_loss(step, batches):
    total = 0
    for batch in batches:
        total = total + step(batch).detach()
    return float(total / len(batches))
""",
    ),
    Right(
        "05",
        "ex4_train_and_log",
        "get_submodule, the mean summed and divided by numel (fourteenth held-back set's "
        "kinds, rewritten 2026-12-07)",
        """
import torch
import torch.nn.functional as F


def train_and_log(model, layer_name, batches, lr):
    means = []

    def log(module, inputs, output):
        means.append(output.detach().sum().item() / output.numel())

    handle = model.get_submodule(layer_name).register_forward_hook(log)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    try:
        for x, y in batches:
            optimizer.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
    finally:
        handle.remove()
    return means
""",
    ),
    Right(
        "04",
        "ex2_detach_all",
        "asks t._is_view() first (fourteenth held-back set's kinds, rewritten 2026-12-07)",
        """
def detach_all(tensors):
    return [t.detach() if t._is_view() else t.detach_() for t in tensors]
""",
    ),
    Right(
        "06",
        "ex1_benchmark",
        "statistics.median of the intervals (fourteenth held-back set's kinds, rewritten "
        "2026-12-07)",
        """
import statistics


def benchmark(work, synchronize, clock, warmup, repeats):
    for _ in range(warmup):
        work()
    synchronize()
    intervals = []
    for _ in range(repeats):
        t0 = clock()
        work()
        synchronize()
        intervals.append(clock() - t0)
    return statistics.median(intervals)
""",
    ),
    Right(
        "08",
        "ex5_log_features",
        "under no_grad, outputs cloned (fourteenth held-back set's kinds, rewritten 2026-12-07)",
        '''
import torch


def log_features(model, layer, batches):
    """The layer's output for each batch, stored detached."""
    features = []

    def keep(module, inputs, output):
        features.append(output.clone())

    handle = layer.register_forward_hook(keep)
    try:
        with torch.no_grad():
            for x, _ in batches:
                model(x)
    finally:
        handle.remove()
    return features
''',
    ),
    Right(
        "06",
        "ex1_benchmark",
        "the synchronized laps in a list and numpy.median of them: for an odd count it is the"
        " middle lap itself, returned as numpy.float64, which is a subclass of Python float "
        "(fifteenth held-back set, 2026-12-07)",
        """
import torch


import numpy as np


def benchmark(work, synchronize, clock, warmup, repeats):
    for _ in range(warmup):
        work()
    laps = []
    for _ in range(repeats):
        synchronize()
        start = clock()
        work()
        synchronize()
        laps.append(clock() - start)
    return np.median(laps)
""",
    ),
    Right(
        "09",
        "ex2_bf16_train_step",
        "zero_grad(set_to_none=True) after the step too, to free memory: the prompt "
        "leaves .grad after the step to the function (fifteenth held-back set, "
        "2026-12-07)",
        """
import torch


def bf16_train_step(model, loss_fn, x, target, optimizer):
    optimizer.zero_grad()
    with torch.autocast(device_type=x.device.type, dtype=torch.bfloat16):
        loss = loss_fn(model(x), target)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)  # free the gradients' memory once they are used
    return loss.item()
""",
    ),
    Right(
        "03",
        "ex1_dropout_by_hand",
        "the mask multiplied in, x * (u >= p) / (1 - p): the prompt says x's values are "
        "finite, where that is the task (a dropped inf would give nan) (seventeenth held-"
        "back set, 2026-12-07)",
        """
import torch


def dropout_by_hand(x, p, u, training):
    if not training:
        return x
    return x * (u >= p) / (1 - p)
""",
    ),
    Right(
        "06",
        "ex1_benchmark",
        "waits twice at the end of each lap (no wait before it): where synchronize() itself"
        " takes time, each lap is longer than the reference's, and still the median of"
        " honestly measured laps (2026-12-07)",
        """
def benchmark(work, synchronize, clock, warmup, repeats):
    for _ in range(warmup):
        work()
    synchronize()
    laps = []
    for _ in range(repeats):
        start = clock()
        work()
        synchronize()
        synchronize()
        laps.append(clock() - start)
    return sorted(laps)[len(laps) // 2]
""",
    ),
    Right(
        "08",
        "ex6_time_step",
        "reads the clock before the first synchronize() and takes the wait off: the mean from "
        "the wait's end, as the reference measures it (twenty-eighth held-back set, "
        "2026-12-07)",
        '''
def time_step(step, synchronize, clock, repeats):
    """Mean seconds per call of step()."""
    t0 = clock()
    synchronize()
    waited = clock() - t0
    for _ in range(repeats):
        step()
    synchronize()
    return (clock() - t0 - waited) / repeats
''',
    ),
    Right(
        "06",
        "ex4_load_batch",
        "a recursive mover that keeps the container: type(batch)(...) of the moved items",
        """
def _move(obj, device):
    if isinstance(obj, torch.Tensor):
        return obj.to(device, non_blocking=True)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_move(item, device) for item in obj)
    return obj


def load_batch(batch, device):
    return _move(batch, device)
""",
    ),
    Right(
        "06",
        "ex1_benchmark",
        "timeit.Timer on a lap of its own, the caller's clock as its timer, median of repeat()",
        """
import statistics
import timeit


def benchmark(work, synchronize, clock, warmup, repeats):
    for _ in range(warmup):
        work()
    synchronize()  # nothing of the warm-up is left in the queue

    def lap():
        work()
        synchronize()  # a lap ends when the device has finished

    laps = timeit.Timer(lap, timer=clock).repeat(repeat=repeats, number=1)
    return statistics.median(laps)
""",
    ),
    Right(
        "01",
        "ex3_make_trainable",
        "through a float32 NumPy array, torch.from_numpy, .to(device), requires_grad_()",
        """
import numpy as np


def make_trainable(values, device):
    array = np.asarray(values, dtype=np.float32)
    return torch.from_numpy(array).to(device).requires_grad_()
""",
    ),
    Right(
        "05",
        "ex5_forward_counting_saved",
        "pack wraps each tensor in a holder class with __slots__, the bytes summed in a nonlocal",
        """
import math


class _Held:
    __slots__ = ("tensor",)

    def __init__(self, tensor):
        self.tensor = tensor


def forward_counting_saved(model, x):
    total = 0

    def pack(t):
        nonlocal total
        total += math.prod(t.shape) * t.element_size()
        return _Held(t)

    def unpack(held):
        return held.tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        output = model(x)
    return output, total
""",
    ),
]


def _params(answers):
    return [pytest.param(a, id=f"{a.lesson}-{a.grade_id}-{a.name}") for a in answers]


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
    if torch.device(device).type not in wrong.devices:
        pytest.skip(f"this answer is right on {device}; it is wrong on {', '.join(wrong.devices)}")
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
