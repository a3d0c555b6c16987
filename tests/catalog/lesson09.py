"""Catalogued answers for lesson 09 (see catalog/__init__.py)."""

from catalog import Right, Wrong

WRONG: dict[str, list[Wrong]] = {
    "ex1_checkpointed_forward": [
        Wrong(
            "use_reentrant=True: no parameter gradients when x needs none",
            "SC-1",
            """
from torch.utils.checkpoint import checkpoint


def checkpointed_forward(blocks, x):
    h = x
    for block in blocks:
        h = checkpoint(block, h, use_reentrant=True)
    return h
""",
        ),
        Wrong(
            "preserve_rng_state=False: Dropout draws another mask when recomputed",
            "SC-1",
            """
from torch.utils.checkpoint import checkpoint


def checkpointed_forward(blocks, x):
    h = x
    for block in blocks:
        h = checkpoint(block, h, use_reentrant=False, preserve_rng_state=False)
    return h
""",
        ),
        Wrong(
            "no checkpoint at all: every activation saved, nothing recomputed",
            None,
            """
def checkpointed_forward(blocks, x):
    return blocks(x)
""",
        ),
        Wrong(
            "checkpoint_sequential: its last segment runs without checkpointing",
            None,
            """
from torch.utils.checkpoint import checkpoint_sequential


def checkpointed_forward(blocks, x):
    return checkpoint_sequential(blocks, len(blocks), x, use_reentrant=False)
""",
        ),
        Wrong(
            "the whole Sequential as one checkpoint: recomputed, but not block by block",
            None,
            """
import torch.utils.checkpoint


def checkpointed_forward(blocks, x):
    return torch.utils.checkpoint.checkpoint(blocks, x, use_reentrant=False)
""",
        ),
        Wrong(
            "x made to require grad in place so that the reentrant variant builds a graph",
            None,
            """
from torch.utils.checkpoint import checkpoint


def checkpointed_forward(blocks, x):
    x.requires_grad_()
    h = x
    for block in blocks:
        h = checkpoint(block, h, use_reentrant=True)
    return h
""",
        ),
        Wrong(
            "blocks.train() to make Dropout run: the caller's modes changed",
            None,
            """
from torch.utils.checkpoint import checkpoint


def checkpointed_forward(blocks, x):
    blocks.train()
    h = x
    for block in blocks:
        h = checkpoint(block, h, use_reentrant=False)
    return h
""",
        ),
        Wrong(
            "stale .grad cleared first: the caller's .grad lost",
            None,
            """
from torch.utils.checkpoint import checkpoint


def checkpointed_forward(blocks, x):
    blocks.zero_grad()
    h = x
    for block in blocks:
        h = checkpoint(block, h, use_reentrant=False)
    return h
""",
        ),
        Wrong(
            "the global generator seeded for reproducible Dropout",
            None,
            """
from torch.utils.checkpoint import checkpoint


def checkpointed_forward(blocks, x):
    torch.manual_seed(0)
    h = x
    for block in blocks:
        h = checkpoint(block, h, use_reentrant=False)
    return h
""",
        ),
        Wrong(
            "only the first block checkpointed: assumes the prompt's depth",
            None,
            """
from torch.utils.checkpoint import checkpoint


def checkpointed_forward(blocks, x):
    h = checkpoint(blocks[0], x, use_reentrant=False)
    for block in list(blocks)[1:]:
        h = block(h)
    return h
""",
        ),
        Wrong(
            "x.squeeze() first: a batch of one loses its batch dimension",
            None,
            """
from torch.utils.checkpoint import checkpoint


def checkpointed_forward(blocks, x):
    h = x.squeeze()
    for block in blocks:
        h = checkpoint(block, h, use_reentrant=False)
    return h
""",
        ),
    ],
    "ex2_bf16_train_step": [
        Wrong(
            "model.to(torch.bfloat16): parameters and .grad become bfloat16",
            "SC-2",
            """
def bf16_train_step(model, loss_fn, x, target, optimizer):
    model.to(torch.bfloat16)
    optimizer.zero_grad()
    out = model(x.to(torch.bfloat16)).float()
    loss = loss_fn(out, target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
        ),
        Wrong(
            ".grad cast to bfloat16 before the step, 'as autocast would'",
            "SC-2",
            """
def bf16_train_step(model, loss_fn, x, target, optimizer):
    optimizer.zero_grad()
    with torch.autocast(device_type=x.device.type, dtype=torch.bfloat16):
        loss = loss_fn(model(x), target)
    loss.backward()
    for p in model.parameters():
        if p.grad is not None:
            p.grad = p.grad.to(torch.bfloat16)
    optimizer.step()
    return loss.item()
""",
        ),
        Wrong(
            "GradScaler's scaled loss, then optimizer.step(): the gradients never unscaled",
            "SC-3",
            """
def bf16_train_step(model, loss_fn, x, target, optimizer):
    scaler = torch.amp.GradScaler(x.device.type)
    optimizer.zero_grad()
    with torch.autocast(device_type=x.device.type, dtype=torch.bfloat16):
        loss = loss_fn(model(x), target)
    scaler.scale(loss).backward()
    optimizer.step()
    return loss.item()
""",
        ),
        Wrong(
            "the loss scaled by hand by 1024 against underflow, never unscaled",
            "SC-3",
            """
SCALE = 1024.0


def bf16_train_step(model, loss_fn, x, target, optimizer):
    optimizer.zero_grad()
    with torch.autocast(device_type=x.device.type, dtype=torch.bfloat16):
        loss = loss_fn(model(x), target)
    (loss * SCALE).backward()
    optimizer.step()
    return loss.item()
""",
        ),
        Wrong(
            "no autocast: the step runs in float32",
            None,
            """
def bf16_train_step(model, loss_fn, x, target, optimizer):
    optimizer.zero_grad()
    loss = loss_fn(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
        ),
        Wrong(
            "stale .grad never cleared: added to this step's gradient",
            "RG-4",
            """
def bf16_train_step(model, loss_fn, x, target, optimizer):
    with torch.autocast(device_type=x.device.type, dtype=torch.bfloat16):
        loss = loss_fn(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
        ),
        Wrong(
            "model.train() first: a model that arrives in evaluation mode trains its BatchNorm",
            None,
            """
def bf16_train_step(model, loss_fn, x, target, optimizer):
    model.train()
    optimizer.zero_grad()
    with torch.autocast(device_type=x.device.type, dtype=torch.bfloat16):
        loss = loss_fn(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
        ),
        Wrong(
            "a fresh SGD with the prompt's lr instead of the caller's optimizer",
            None,
            """
def bf16_train_step(model, loss_fn, x, target, optimizer):
    sgd = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    sgd.zero_grad()
    with torch.autocast(device_type=x.device.type, dtype=torch.bfloat16):
        loss = loss_fn(model(x), target)
    loss.backward()
    sgd.step()
    return loss.item()
""",
        ),
        Wrong(
            "float16 autocast on the CPU too",
            None,
            """
def bf16_train_step(model, loss_fn, x, target, optimizer):
    optimizer.zero_grad()
    with torch.autocast(device_type=x.device.type, dtype=torch.float16):
        loss = loss_fn(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
        ),
        Wrong(
            "autocast for the CPU whatever the inputs' device",
            None,
            """
def bf16_train_step(model, loss_fn, x, target, optimizer):
    optimizer.zero_grad()
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        loss = loss_fn(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
            devices=("cuda",),
        ),
        Wrong(
            "every parameter unfrozen so that all of them train",
            None,
            """
def bf16_train_step(model, loss_fn, x, target, optimizer):
    model.requires_grad_(True)
    optimizer.zero_grad()
    with torch.autocast(device_type=x.device.type, dtype=torch.bfloat16):
        loss = loss_fn(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
        ),
    ],
    "ex3_autocast_predict": [
        Wrong(
            "model.to(torch.bfloat16) instead of autocast: the caller's parameters converted",
            "SC-2",
            """
def autocast_predict(model, x):
    modes = [m.training for m in model.modules()]
    model.eval()
    model.to(torch.bfloat16)
    with torch.inference_mode():
        out = model(x.to(torch.bfloat16)).float()
    for m, training in zip(model.modules(), modes):
        m.train(training)
    return out
""",
        ),
        Wrong(
            "inference_mode without eval(): trusted to switch Dropout and BatchNorm",
            "EV-2",
            """
def autocast_predict(model, x):
    with torch.inference_mode(), torch.autocast(x.device.type, dtype=torch.bfloat16):
        return model(x).float()
""",
        ),
        Wrong(
            "left in evaluation mode after the call",
            "EV-4",
            """
def autocast_predict(model, x):
    model.eval()
    dtype = torch.bfloat16 if x.device.type == "cpu" else torch.float16
    with torch.inference_mode(), torch.autocast(x.device.type, dtype=dtype):
        return model(x).float()
""",
        ),
        Wrong(
            "model.train() afterwards: assumes the model arrived in training mode",
            None,
            """
def autocast_predict(model, x):
    model.eval()
    dtype = torch.bfloat16 if x.device.type == "cpu" else torch.float16
    try:
        with torch.inference_mode(), torch.autocast(x.device.type, dtype=dtype):
            out = model(x).float()
    finally:
        model.train()
    return out
""",
        ),
        Wrong(
            "no autocast: the predictions are computed in float32",
            None,
            """
def autocast_predict(model, x):
    modes = {m: m.training for m in model.modules()}
    model.eval()
    with torch.inference_mode():
        out = model(x)
    for m, training in modes.items():
        m.training = training
    return out
""",
        ),
        Wrong(
            "the autocast dtype returned as it is (bfloat16), not float32",
            None,
            """
def autocast_predict(model, x):
    modes = {m: m.training for m in model.modules()}
    model.eval()
    dtype = torch.bfloat16 if x.device.type == "cpu" else torch.float16
    try:
        with torch.inference_mode(), torch.autocast(x.device.type, dtype=dtype):
            out = model(x)
    finally:
        for m, training in modes.items():
            m.training = training
    return out
""",
        ),
        Wrong(
            "no inference_mode nor no_grad: the predictions carry a graph",
            None,
            """
def autocast_predict(model, x):
    modes = {m: m.training for m in model.modules()}
    model.eval()
    dtype = torch.bfloat16 if x.device.type == "cpu" else torch.float16
    try:
        with torch.autocast(x.device.type, dtype=dtype):
            out = model(x).float()
    finally:
        for m, training in modes.items():
            m.training = training
    return out
""",
        ),
        Wrong(
            "the top module's mode restored, its children left in evaluation mode",
            "EV-4",
            """
def autocast_predict(model, x):
    was_training = model.training
    model.eval()
    dtype = torch.bfloat16 if x.device.type == "cpu" else torch.float16
    with torch.inference_mode(), torch.autocast(x.device.type, dtype=dtype):
        out = model(x).float()
    model.training = was_training
    return out
""",
        ),
        Wrong(
            "float16 autocast on the CPU as on CUDA",
            None,
            """
def autocast_predict(model, x):
    modes = {m: m.training for m in model.modules()}
    model.eval()
    try:
        with torch.inference_mode(), torch.autocast(x.device.type, dtype=torch.float16):
            out = model(x).float()
    finally:
        for m, training in modes.items():
            m.training = training
    return out
""",
            devices=("cpu",),
        ),
        Wrong(
            "x.squeeze() first: a batch of one loses its batch dimension",
            None,
            """
def autocast_predict(model, x):
    modes = {m: m.training for m in model.modules()}
    model.eval()
    dtype = torch.bfloat16 if x.device.type == "cpu" else torch.float16
    with torch.inference_mode(), torch.autocast(x.device.type, dtype=dtype):
        out = model(x.squeeze()).float()
    for m, training in modes.items():
        m.training = training
    return out
""",
        ),
    ],
    "ex4_per_sample_grads": [
        Wrong(
            "the same model, loss_fn, x and y again: the first gradients returned",
            None,
            """
from torch.func import functional_call, grad, vmap

_done = []


def per_sample_grads(model, loss_fn, x, y):
    called = (model, loss_fn, x, y)
    for seen, grads in _done:
        if all(a is b for a, b in zip(seen, called)):
            return grads
    params = {name: p.detach() for name, p in model.named_parameters()}

    def loss_of_one(params, xi, yi):
        out = functional_call(model, params, (xi.unsqueeze(0),))
        return loss_fn(out, yi.unsqueeze(0))

    grads = vmap(grad(loss_of_one), in_dims=(None, 0, 0))(params, x, y)
    _done.append((called, grads))
    return grads
""",
        ),
        Wrong(
            "a loop with backward(): the caller's .grad overwritten",
            "SC-5",
            """
def per_sample_grads(model, loss_fn, x, y):
    params = dict(model.named_parameters())
    flags = {n: p.requires_grad for n, p in params.items()}
    model.requires_grad_(True)
    rows = {n: [] for n in params}
    with torch.enable_grad():
        for i in range(x.shape[0]):
            model.zero_grad()
            loss_fn(model(x[i : i + 1]), y[i : i + 1]).backward()
            for n, p in params.items():
                rows[n].append(p.grad.clone())
    for n, p in params.items():
        p.requires_grad_(flags[n])
    return {n: torch.stack(r) for n, r in rows.items()}
""",
        ),
        Wrong(
            "a loop with backward() and .grad never cleared: every row holds the ones before",
            "SC-5",
            """
def per_sample_grads(model, loss_fn, x, y):
    params = dict(model.named_parameters())
    saved = {n: (p.grad, p.requires_grad) for n, p in params.items()}
    model.requires_grad_(True)
    model.zero_grad(set_to_none=True)
    rows = {n: [] for n in params}
    with torch.enable_grad():
        for i in range(x.shape[0]):
            loss_fn(model(x[i : i + 1]), y[i : i + 1]).backward()
            for n, p in params.items():
                rows[n].append(p.grad.clone())
    for n, p in params.items():
        p.grad, flag = saved[n]
        p.requires_grad_(flag)
    return {n: torch.stack(r) for n, r in rows.items()}
""",
        ),
        Wrong(
            "the batch's gradient repeated for every sample",
            None,
            """
from torch.func import functional_call, grad


def per_sample_grads(model, loss_fn, x, y):
    params = {k: v.detach() for k, v in model.named_parameters()}
    g = grad(lambda p: loss_fn(functional_call(model, p, (x,)), y))(params)
    return {k: v.expand(x.shape[0], *v.shape).clone() for k, v in g.items()}
""",
        ),
        Wrong(
            "grads only for parameters that require grad: frozen ones missing",
            None,
            """
from torch.func import functional_call, grad, vmap


def per_sample_grads(model, loss_fn, x, y):
    params = {k: v.detach() for k, v in model.named_parameters() if v.requires_grad}

    def loss_of(p, xi, yi):
        return loss_fn(functional_call(model, p, (xi[None],)), yi[None])

    return vmap(grad(loss_of), in_dims=(None, 0, 0))(params, x, y)
""",
        ),
        Wrong(
            "autograd.grad with create_graph=True: the rows still require grad",
            None,
            """
from torch.func import functional_call


def per_sample_grads(model, loss_fn, x, y):
    params = {k: v.detach().requires_grad_() for k, v in model.named_parameters()}
    rows = {k: [] for k in params}
    with torch.enable_grad():
        for i in range(x.shape[0]):
            loss = loss_fn(functional_call(model, params, (x[i : i + 1],)), y[i : i + 1])
            gs = torch.autograd.grad(loss, list(params.values()), create_graph=True)
            for k, g in zip(params, gs):
                rows[k].append(g)
    return {k: torch.stack(v) for k, v in rows.items()}
""",
        ),
        Wrong(
            "model.train() for the gradients: BatchNorm trains on one sample",
            None,
            """
from torch.func import functional_call, grad, vmap


def per_sample_grads(model, loss_fn, x, y):
    model.train()
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss_of(p, xi, yi):
        return loss_fn(functional_call(model, p, (xi[None],)), yi[None])

    return vmap(grad(loss_of), in_dims=(None, 0, 0))(params, x, y)
""",
        ),
        Wrong(
            "each sample without its batch dimension: BatchNorm1d refuses a 1-d input",
            None,
            """
from torch.func import functional_call, grad, vmap


def per_sample_grads(model, loss_fn, x, y):
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss_of(p, xi, yi):
        return loss_fn(functional_call(model, p, (xi,)), yi)

    return vmap(grad(loss_of), in_dims=(None, 0, 0))(params, x, y)
""",
        ),
        Wrong(
            "mse_loss hard-coded instead of loss_fn",
            None,
            """
from torch.func import functional_call, grad, vmap
import torch.nn.functional as F


def per_sample_grads(model, loss_fn, x, y):
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss_of(p, xi, yi):
        out = functional_call(model, p, (xi[None],))
        return F.mse_loss(out, yi[None].to(out.dtype).expand_as(out))

    return vmap(grad(loss_of), in_dims=(None, 0, 0))(params, x, y)
""",
        ),
        Wrong(
            "a loop without enable_grad: under an outer no_grad there is no graph",
            None,
            """
def per_sample_grads(model, loss_fn, x, y):
    names = [n for n, _ in model.named_parameters()]
    params = [p.detach().requires_grad_() for _, p in model.named_parameters()]
    rows = {n: [] for n in names}
    for i in range(x.shape[0]):
        out = torch.func.functional_call(model, dict(zip(names, params)), (x[i : i + 1],))
        gs = torch.autograd.grad(loss_fn(out, y[i : i + 1]), params)
        for n, g in zip(names, gs):
            rows[n].append(g)
    return {n: torch.stack(r) for n, r in rows.items()}
""",
        ),
    ],
}

RIGHT: dict[str, list[Right]] = {
    "ex1_checkpointed_forward": [
        Right(
            "functools.reduce over the blocks",
            """
import functools
from torch.utils.checkpoint import checkpoint


def checkpointed_forward(blocks, x):
    return functools.reduce(lambda h, b: checkpoint(b, h, use_reentrant=False), blocks, x)
""",
        ),
        Right(
            "a module-level partial of checkpoint",
            """
import functools
import torch.utils.checkpoint as cp

CKPT = functools.partial(cp.checkpoint, use_reentrant=False)


def checkpointed_forward(blocks, x):
    h = x
    for k in range(len(blocks)):
        h = CKPT(blocks[k], h)
    return h
""",
        ),
        Right(
            "children(), a lambda per block, preserve_rng_state spelled out",
            """
from torch.utils.checkpoint import checkpoint


def checkpointed_forward(blocks, x):
    h = x
    for block in blocks.children():
        h = checkpoint(lambda t, b=block: b(t), h, use_reentrant=False, preserve_rng_state=True)
    return h
""",
        ),
        Right(
            "checkpoint_sequential one segment at a time (as its docs write segments)",
            """
from torch.utils.checkpoint import checkpoint


def _run(module):
    def forward(t):
        return module(t)

    return forward


def checkpointed_forward(blocks, x):
    out = x
    for module in blocks:
        out = checkpoint(_run(module), out, use_reentrant=False)
    return out
""",
        ),
        Right(
            "a class with __call__, checkpoint aliased at module level",
            """
import torch.utils.checkpoint

checkpoint = torch.utils.checkpoint.checkpoint


class _Checkpointed:
    def __call__(self, blocks, x):
        h = x
        for block in blocks:
            h = checkpoint(block, h, use_reentrant=False, determinism_check="default")
        return h


checkpointed_forward = _Checkpointed()
""",
        ),
    ],
    "ex2_bf16_train_step": [
        Right(
            "torch.amp.autocast with the device type positional",
            """
def bf16_train_step(model, loss_fn, x, target, optimizer):
    optimizer.zero_grad(set_to_none=True)
    with torch.amp.autocast(x.device.type, dtype=torch.bfloat16):
        prediction = model(x)
        loss = loss_fn(prediction, target)
    loss.backward()
    optimizer.step()
    return float(loss)
""",
        ),
        Right(
            ".grad zeroed by hand, autocast as a module-level partial",
            """
import functools

BF16 = functools.partial(torch.autocast, dtype=torch.bfloat16)


def bf16_train_step(model, loss_fn, x, target, optimizer):
    for p in model.parameters():
        p.grad = None
    with BF16(device_type=x.device.type):
        loss = loss_fn(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
        ),
        Right(
            "GradScaler used in full: unnecessary for bfloat16, but harmless",
            """
def bf16_train_step(model, loss_fn, x, target, optimizer):
    scaler = torch.amp.GradScaler(x.device.type)
    optimizer.zero_grad()
    with torch.autocast(device_type=x.device.type, dtype=torch.bfloat16):
        loss = loss_fn(model(x), target)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    return loss.item()
""",
        ),
        Right(
            "the loss as a float32 tensor detached first, autocast as a decorator-free context",
            """
def _loss_under_autocast(model, loss_fn, x, target):
    with torch.autocast(device_type=x.device.type, dtype=torch.bfloat16):
        return loss_fn(model(x), target)


def bf16_train_step(model, loss_fn, x, target, optimizer):
    optimizer.zero_grad()
    loss = _loss_under_autocast(model, loss_fn, x, target)
    loss.backward()
    optimizer.step()
    return loss.detach().float().cpu().item()
""",
        ),
        Right(
            "a class with __call__, zero_grad aliased at module level",
            """
ZERO_GRAD = torch.optim.Optimizer.zero_grad


class _Step:
    dtype = torch.bfloat16

    def __call__(self, model, loss_fn, x, target, optimizer):
        ZERO_GRAD(optimizer)
        with torch.autocast(x.device.type, self.dtype):
            loss = loss_fn(model(x), target)
        loss.backward()
        optimizer.step()
        return loss.item()


bf16_train_step = _Step()
""",
        ),
    ],
    "ex3_autocast_predict": [
        Right(
            "modes by name, restored with train(mode) per module; no_grad instead of inference",
            """
def autocast_predict(model, x):
    modes = {name: m.training for name, m in model.named_modules()}
    model.eval()
    dtype = torch.bfloat16 if x.device.type == "cpu" else torch.float16
    try:
        with torch.no_grad(), torch.autocast(device_type=x.device.type, dtype=dtype):
            out = model(x)
    finally:
        for name, m in model.named_modules():
            m.train(modes[name])
    return out.float()
""",
        ),
        Right(
            "a context manager that restores the modes, even after an exception",
            """
import contextlib


@contextlib.contextmanager
def _evaluating(model):
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        yield model
    finally:
        for m, training in modes:
            m.training = training


def autocast_predict(model, x):
    low = torch.bfloat16 if x.device.type == "cpu" else torch.float16
    with _evaluating(model), torch.inference_mode():
        with torch.amp.autocast(x.device.type, dtype=low):
            return model(x).to(torch.float32)
""",
        ),
        Right(
            "a module-level table of autocast dtypes, torch.inference_mode as a decorator",
            """
AUTOCAST_DTYPE = {"cpu": torch.bfloat16, "cuda": torch.float16}


@torch.inference_mode()
def _predict(model, x):
    with torch.autocast(x.device.type, dtype=AUTOCAST_DTYPE[x.device.type]):
        return model(x).float()


def autocast_predict(model, x):
    modes = [m.training for m in model.modules()]
    model.eval()
    try:
        out = _predict(model, x)
    finally:
        for m, training in zip(model.modules(), modes):
            m.train(training)
    return out
""",
        ),
        Right(
            "a deep copy in evaluation mode: the caller's model untouched",
            """
import copy


def autocast_predict(model, x):
    twin = copy.deepcopy(model).eval()
    dtype = torch.bfloat16 if x.device.type == "cpu" else torch.float16
    with torch.inference_mode(), torch.autocast(x.device.type, dtype=dtype):
        return twin(x).float()
""",
        ),
        Right(
            "a class with __call__, the result cloned out of inference mode",
            """
class _Predictor:
    def __call__(self, model, x):
        modes = {m: m.training for m in model.modules()}
        model.eval()
        dtype = torch.bfloat16 if x.device.type == "cpu" else torch.float16
        try:
            with torch.inference_mode():
                with torch.autocast(x.device.type, dtype=dtype):
                    out = model(x)
        finally:
            for m, training in modes.items():
                m.train(training)
        return out.float().clone()


autocast_predict = _Predictor()
""",
        ),
    ],
    "ex4_per_sample_grads": [
        Right(
            "a loop over detached copies with autograd.grad: the caller's .grad untouched",
            """
def per_sample_grads(model, loss_fn, x, y):
    names = [n for n, _ in model.named_parameters()]
    rows = {n: [] for n in names}
    with torch.enable_grad():
        for i in range(x.shape[0]):
            params = {n: p.detach().requires_grad_() for n, p in model.named_parameters()}
            out = torch.func.functional_call(model, params, (x[i : i + 1],))
            gs = torch.autograd.grad(loss_fn(out, y[i : i + 1]), list(params.values()))
            for n, g in zip(names, gs):
                rows[n].append(g)
    return {n: torch.stack(r) for n, r in rows.items()}
""",
        ),
        Right(
            "a loop with backward() that saves and restores .grad and requires_grad",
            """
def per_sample_grads(model, loss_fn, x, y):
    params = dict(model.named_parameters())
    saved = {n: (p.grad, p.requires_grad) for n, p in params.items()}
    rows = {n: [] for n in params}
    try:
        model.requires_grad_(True)
        with torch.enable_grad():
            for i in range(x.shape[0]):
                for p in params.values():
                    p.grad = None
                loss_fn(model(x[i : i + 1]), y[i : i + 1]).backward()
                for n, p in params.items():
                    rows[n].append(p.grad.detach().clone())
    finally:
        for n, p in params.items():
            p.grad, flag = saved[n]
            p.requires_grad_(flag)
    return {n: torch.stack(r) for n, r in rows.items()}
""",
        ),
        Right(
            "vmap(grad) with module-level aliases, the sample's batch dimension by unsqueeze",
            """
from torch.func import functional_call as fcall
from torch.func import grad as fgrad
from torch.func import vmap as fvmap


def per_sample_grads(model, loss_fn, x, y):
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def sample_loss(p, b, xi, yi):
        return loss_fn(fcall(model, (p, b), (xi.unsqueeze(0),)), yi.unsqueeze(0))

    return fvmap(fgrad(sample_loss), in_dims=(None, None, 0, 0))(params, buffers, x, y)
""",
        ),
        Right(
            "jacrev of the per-sample losses (vmap over samples inside)",
            """
from torch.func import functional_call, jacrev, vmap


def per_sample_grads(model, loss_fn, x, y):
    params = {k: v.detach() for k, v in model.named_parameters()}

    def losses(p):
        def one(xi, yi):
            return loss_fn(functional_call(model, p, (xi[None],)), yi[None])

        return vmap(one)(x, y)

    return jacrev(losses)(params)
""",
        ),
        Right(
            "grad_and_value under vmap, the values dropped",
            """
import torch.func


def per_sample_grads(model, loss_fn, x, y):
    params = {k: v.detach() for k, v in model.named_parameters()}

    def sample_loss(p, xi, yi):
        return loss_fn(torch.func.functional_call(model, p, (xi[None],)), yi[None])

    grads, _ = torch.func.vmap(torch.func.grad_and_value(sample_loss), in_dims=(None, 0, 0))(
        params, x, y
    )
    return grads
""",
        ),
    ],
}
