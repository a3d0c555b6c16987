"""Catalogued answers for lesson 04 (see catalog/__init__.py)."""

from catalog import Right, Wrong

WRONG: dict[str, list[Wrong]] = {
    "ex1_frozen_copy": [
        Wrong(
            "detach for both: believes detach copies",
            "DT-1",
            """
def frozen_copy(t, share):
    return t.detach()
""",
        ),
        Wrong(
            ".data to share, .data.clone() to copy",
            "DT-2",
            """
def frozen_copy(t, share):
    if share:
        return t.data
    return t.data.clone()
""",
        ),
        Wrong(
            ".data for both: believes .data copies",
            "DT-1",
            """
def frozen_copy(t, share):
    return t.data
""",
        ),
        Wrong(
            "clone keeps the history",
            None,
            """
def frozen_copy(t, share):
    if share:
        return t.detach()
    return t.clone()
""",
        ),
        Wrong(
            "a copy through a Python list: float32 on the CPU",
            None,
            """
def frozen_copy(t, share):
    if share:
        return t.detach()
    return torch.tensor(t.tolist())
""",
        ),
        Wrong(
            "detach_ on the caller's tensor",
            None,
            """
def frozen_copy(t, share):
    if share:
        return t.detach_()
    return t.detach().clone()
""",
        ),
        Wrong(
            "a copy when sharing was asked",
            None,
            """
def frozen_copy(t, share):
    return t.detach().clone()
""",
        ),
        Wrong(
            "contiguous() to share: a non-contiguous t is copied",
            None,
            """
def frozen_copy(t, share):
    frozen = t.detach().contiguous()
    return frozen if share else frozen.clone()
""",
        ),
        Wrong(
            "flattened: the shape changes for a 2-d or 0-d t",
            None,
            """
def frozen_copy(t, share):
    frozen = t.detach().reshape(-1)
    return frozen if share else frozen.clone()
""",
        ),
        Wrong(
            "a copy through NumPy: no bfloat16",
            None,
            """
def frozen_copy(t, share):
    if share:
        return t.detach()
    return torch.from_numpy(t.detach().cpu().numpy().copy()).to(t.device)
""",
        ),
    ],
    "ex2_detach_all": [
        Wrong(
            "the detached list remembered per id of the list: a second call hands out the "
            "first call's tensors",
            None,
            """
_done = {}


def detach_all(tensors):
    if id(tensors) not in _done:
        out = []
        for t in tensors:
            try:
                out.append(t.detach_())
            except RuntimeError:
                out.append(t.detach())
        _done[id(tensors)] = out
    return _done[id(tensors)]
""",
        ),
        Wrong(
            "detach_ everywhere",
            "DT-3",
            """
def detach_all(tensors):
    return [t.detach_() for t in tensors]
""",
        ),
        Wrong(
            "detach everywhere: nothing detached in place",
            None,
            """
def detach_all(tensors):
    return [t.detach() for t in tensors]
""",
        ),
        Wrong(
            ".data for the views",
            "DT-2",
            """
def detach_all(tensors):
    result = []
    for t in tensors:
        try:
            result.append(t.detach_())
        except RuntimeError:
            result.append(t.data)
    return result
""",
        ),
        Wrong(
            "a copy for the views",
            None,
            """
def detach_all(tensors):
    result = []
    for t in tensors:
        try:
            result.append(t.detach_())
        except RuntimeError:
            result.append(t.detach().clone())
    return result
""",
        ),
        Wrong(
            "requires_grad_(False) instead of detaching",
            None,
            """
def detach_all(tensors):
    return [t.requires_grad_(False) for t in tensors]
""",
        ),
        Wrong(
            "views dropped from the result",
            None,
            """
def detach_all(tensors):
    result = []
    for t in tensors:
        try:
            result.append(t.detach_())
        except RuntimeError:
            pass
    return result
""",
        ),
        Wrong(
            "views told apart by grad_fn's name: permute, chunk, diagonal missed",
            "DT-3",
            """
VIEW_OPS = ("View", "Slice", "Select", "Transpose", "Unsqueeze")


def detach_all(tensors):
    result = []
    for t in tensors:
        name = t.grad_fn.name() if t.grad_fn is not None else ""
        if any(op in name for op in VIEW_OPS):
            result.append(t.detach())
        else:
            result.append(t.detach_())
    return result
""",
        ),
        Wrong(
            "views told apart by is_leaf",
            "DT-3",  # a leaf that is a view: detach_() refuses it
            """
def detach_all(tensors):
    return [t.detach_() if t.is_leaf else t.detach() for t in tensors]
""",
        ),
        Wrong(
            "views told apart by is_contiguous",
            "DT-3",
            """
def detach_all(tensors):
    return [t.detach_() if t.is_contiguous() else t.detach() for t in tensors]
""",
        ),
    ],
    "ex3_normalised_and_grad": [
        Wrong(
            "the teammate's .data version",
            "DT-2",
            """
def normalised_and_grad(w, x):
    out = torch.exp(x @ w)
    p = out.data
    p.div_(p.sum())
    out.sum().backward()
    return p, w.grad
""",
        ),
        Wrong(
            ".data with torch.autograd.grad",
            "DT-2",
            """
def normalised_and_grad(w, x):
    out = torch.exp(x @ w)
    p = out.data
    p /= p.sum()
    (grad,) = torch.autograd.grad(out.sum(), w)
    return p, grad
""",
        ),
        Wrong(
            "detach() changed in place before backward: autograd raises",
            None,
            """
def normalised_and_grad(w, x):
    out = torch.exp(x @ w)
    p = out.detach()
    p.div_(p.sum())
    out.sum().backward()
    return p, w.grad
""",
        ),
        Wrong(
            "p keeps its history",
            None,
            """
def normalised_and_grad(w, x):
    out = torch.exp(x @ w)
    p = out / out.sum()
    out.sum().backward()
    return p, w.grad
""",
        ),
        Wrong(
            "the gradient of p.sum() instead of out.sum()",
            None,
            """
def normalised_and_grad(w, x):
    out = torch.exp(x @ w)
    p = out / out.sum()
    (grad,) = torch.autograd.grad(p.sum(), w)
    return p.detach(), grad
""",
        ),
        Wrong(
            "float32 results",
            None,
            """
def normalised_and_grad(w, x):
    out = torch.exp(x.float() @ w.float())
    p = (out / out.sum()).detach()
    out.sum().backward()
    return p, w.grad.float()
""",
        ),
        Wrong(
            "squeeze(): a single row gives p of shape ()",
            None,
            """
def normalised_and_grad(w, x):
    out = torch.exp(x @ w.unsqueeze(1)).squeeze()
    p = out.detach() / out.detach().sum()
    out.sum().backward()
    return p, w.grad
""",
        ),
        Wrong(
            "the gradient of the mean, not the sum",
            None,
            """
def normalised_and_grad(w, x):
    out = torch.exp(x @ w)
    p = out.detach() / out.detach().sum()
    (grad,) = torch.autograd.grad(out.mean(), w)
    return p, grad
""",
        ),
        Wrong(
            "backward twice: w.grad accumulates",
            None,
            """
def normalised_and_grad(w, x):
    out = torch.exp(x @ w)
    out.sum().backward(retain_graph=True)
    p = out.detach().clone()
    p /= p.sum()
    out.sum().backward()
    return p, w.grad
""",
        ),
    ],
    "ex4_d_step": [
        Wrong(
            "G's output detached in place with detach_(): it raises where G ends in a view",
            "DT-3",
            """
import torch.nn.functional as F

def d_step(G, D, opt_d, real, z):
    opt_d.zero_grad()
    fake = G(z)
    fake.detach_()
    real_logits, fake_logits = D(real), D(fake)
    loss = F.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits))
    loss = loss + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
    loss.backward()
    opt_d.step()
    return loss.item()
""",
        ),
        Wrong(
            "no detach: G's .grad fills",
            "DT-4",
            """
import torch.nn.functional as F

def d_step(G, D, opt_d, real, z):
    opt_d.zero_grad()
    fake = G(z)
    real_logits, fake_logits = D(real), D(fake)
    loss = F.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits))
    loss = loss + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
    loss.backward()
    opt_d.step()
    return loss.item()
""",
        ),
        Wrong(
            "no zero_grad: the G step's gradient reaches D's update",
            "DT-6",
            """
import torch.nn.functional as F

def d_step(G, D, opt_d, real, z):
    fake = G(z).detach()
    real_logits, fake_logits = D(real), D(fake)
    loss = F.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits))
    loss = loss + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
    loss.backward()
    opt_d.step()
    return loss.item()
""",
        ),
        Wrong(
            "neither detach nor zero_grad",
            "DT-4",
            """
import torch.nn.functional as F

def d_step(G, D, opt_d, real, z):
    real_logits, fake_logits = D(real), D(G(z))
    loss = F.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits))
    loss = loss + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
    loss.backward()
    opt_d.step()
    return loss.item()
""",
        ),
        Wrong(
            "zero_grad after backward: the step sees no gradient",
            None,
            """
import torch.nn.functional as F

def d_step(G, D, opt_d, real, z):
    fake = G(z).detach()
    real_logits, fake_logits = D(real), D(fake)
    loss = F.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits))
    loss = loss + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
    loss.backward()
    opt_d.zero_grad()
    opt_d.step()
    return loss.item()
""",
        ),
        Wrong(
            "the two losses averaged",
            None,
            """
import torch.nn.functional as F

def d_step(G, D, opt_d, real, z):
    opt_d.zero_grad()
    fake = G(z).detach()
    real_logits, fake_logits = D(real), D(fake)
    loss = F.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits))
    loss = loss + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
    loss = loss / 2
    loss.backward()
    opt_d.step()
    return loss.item()
""",
        ),
        Wrong(
            "the loss returned as a tensor",
            None,
            """
import torch.nn.functional as F

def d_step(G, D, opt_d, real, z):
    opt_d.zero_grad()
    fake = G(z).detach()
    real_logits, fake_logits = D(real), D(fake)
    loss = F.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits))
    loss = loss + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
    loss.backward()
    opt_d.step()
    return loss
""",
        ),
        Wrong(
            "G frozen and never unfrozen",
            None,
            """
import torch.nn.functional as F

def d_step(G, D, opt_d, real, z):
    G.requires_grad_(False)
    opt_d.zero_grad()
    real_logits, fake_logits = D(real), D(G(z))
    loss = F.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits))
    loss = loss + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
    loss.backward()
    opt_d.step()
    return loss.item()
""",
        ),
        Wrong(
            "G frozen during the D step, then every parameter unfrozen",
            None,
            """
import torch.nn.functional as F

def d_step(G, D, opt_d, real, z):
    G.requires_grad_(False)
    try:
        fake = G(z)
    finally:
        G.requires_grad_(True)
    D.zero_grad()
    real_logits, fake_logits = D(real), D(fake)
    loss = F.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits))
    loss = loss + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
    loss.backward()
    opt_d.step()
    return float(loss.detach())
""",
        ),
        Wrong(
            "autograd.grad over all of D's parameters: a frozen layer raises",
            None,
            """
import torch.nn.functional as F

def d_step(G, D, opt_d, real, z):
    fake = G(z).detach()
    logits_real = D(real)
    logits_fake = D(fake)
    loss = F.binary_cross_entropy_with_logits(
        logits_real, torch.ones_like(logits_real)
    ) + F.binary_cross_entropy_with_logits(logits_fake, torch.zeros_like(logits_fake))
    params = list(D.parameters())
    grads = torch.autograd.grad(loss, params)
    for p, g in zip(params, grads):
        p.grad = g
    opt_d.step()
    return loss.item()
""",
        ),
        Wrong(
            "G put in eval mode for the fakes, then train(): its mode on arrival is lost",
            None,
            """
import torch.nn.functional as F

def d_step(G, D, opt_d, real, z):
    opt_d.zero_grad()
    G.eval()
    with torch.no_grad():
        fake = G(z)
    G.train()
    real_logits, fake_logits = D(real), D(fake)
    loss = F.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits))
    loss = loss + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
    loss.backward()
    opt_d.step()
    return loss.item()
""",
        ),
    ],
    "ex5_g_step": [
        Wrong(
            "nn.BCELoss on torch.sigmoid(logits): saturates where D is sure the fakes are fake",
            None,
            """
bce = torch.nn.BCELoss()


def g_step(G, D, opt_g, z):
    opt_g.zero_grad()
    probs = torch.sigmoid(D(G(z)))
    loss_g = bce(probs, torch.ones_like(probs))
    loss_g.backward()
    opt_g.step()
    return loss_g.item()
""",
        ),
        Wrong(
            "fake detached in the G step",
            "DT-5",
            """
import torch.nn.functional as F

def g_step(G, D, opt_g, z):
    opt_g.zero_grad()
    logits = D(G(z).detach())
    loss = F.binary_cross_entropy_with_logits(logits, torch.ones_like(logits))
    loss.backward()
    opt_g.step()
    return loss.item()
""",
        ),
        Wrong(
            "fake made under no_grad in the G step",
            "DT-5",
            """
import torch.nn.functional as F

def g_step(G, D, opt_g, z):
    opt_g.zero_grad()
    with torch.no_grad():
        fake = G(z)
    logits = D(fake)
    loss = F.binary_cross_entropy_with_logits(logits, torch.ones_like(logits))
    loss.backward()
    opt_g.step()
    return loss.item()
""",
        ),
        Wrong(
            "no zero_grad: the stale G gradient is added",
            None,
            """
import torch.nn.functional as F

def g_step(G, D, opt_g, z):
    logits = D(G(z))
    loss = F.binary_cross_entropy_with_logits(logits, torch.ones_like(logits))
    loss.backward()
    opt_g.step()
    return loss.item()
""",
        ),
        Wrong(
            "D frozen and never unfrozen",
            None,
            """
import torch.nn.functional as F

def g_step(G, D, opt_g, z):
    D.requires_grad_(False)
    opt_g.zero_grad()
    logits = D(G(z))
    loss = F.binary_cross_entropy_with_logits(logits, torch.ones_like(logits))
    loss.backward()
    opt_g.step()
    return loss.item()
""",
        ),
        Wrong(
            "the saturating loss: minus D's loss on fakes",
            None,
            """
import torch.nn.functional as F

def g_step(G, D, opt_g, z):
    opt_g.zero_grad()
    logits = D(G(z))
    loss = -F.binary_cross_entropy_with_logits(logits, torch.zeros_like(logits))
    loss.backward()
    opt_g.step()
    return loss.item()
""",
        ),
        Wrong(
            "D put in evaluation mode and left there",
            None,
            """
import torch.nn.functional as F

def g_step(G, D, opt_g, z):
    D.eval()
    opt_g.zero_grad()
    logits = D(G(z))
    loss = F.binary_cross_entropy_with_logits(logits, torch.ones_like(logits))
    loss.backward()
    opt_g.step()
    return loss.item()
""",
        ),
        Wrong(
            "D frozen during the G step, then every parameter unfrozen",
            None,
            """
import torch.nn.functional as F

def g_step(G, D, opt_g, z):
    D.requires_grad_(False)
    try:
        opt_g.zero_grad()
        logits = D(G(z))
        loss = F.binary_cross_entropy_with_logits(logits, torch.ones_like(logits))
        loss.backward()
        opt_g.step()
    finally:
        D.requires_grad_(True)
    return loss.item()
""",
        ),
        Wrong(
            "autograd.grad over all of G's parameters: a frozen layer raises",
            None,
            """
import torch.nn.functional as F

def g_step(G, D, opt_g, z):
    logits = D(G(z))
    loss = F.binary_cross_entropy_with_logits(logits, torch.ones_like(logits))
    params = list(G.parameters())
    for p, g in zip(params, torch.autograd.grad(loss, params)):
        p.grad = g
    opt_g.step()
    return loss.item()
""",
        ),
        Wrong(
            "G put in training mode: its mode on arrival is lost",
            None,
            """
import torch.nn.functional as F

def g_step(G, D, opt_g, z):
    G.train()
    opt_g.zero_grad()
    logits = D(G(z))
    loss = F.binary_cross_entropy_with_logits(logits, torch.ones_like(logits))
    loss.backward()
    opt_g.step()
    return loss.item()
""",
        ),
    ],
}

RIGHT: dict[str, list[Right]] = {
    "ex1_frozen_copy": [
        Right(
            "clone first, then detach",
            """
def frozen_copy(t, share):
    return t.detach() if share else t.clone().detach()
""",
        ),
        Right(
            "clone under no_grad",
            """
def frozen_copy(t, share):
    if share:
        return t.detach()
    with torch.no_grad():
        return t.clone()
""",
        ),
        Right(
            "an empty tensor filled with copy_",
            """
def frozen_copy(t, share):
    frozen = t.detach()
    if share:
        return frozen
    return torch.empty_like(frozen).copy_(frozen)
""",
        ),
        Right(
            "a detached view of the whole tensor, or a new tensor from its values",
            """
def frozen_copy(t, share):
    if share:
        return t.detach().view_as(t)
    return torch.tensor(t.tolist(), dtype=t.dtype, device=t.device)
""",
        ),
        Right(
            ".data.clone() for the copy",
            """
def frozen_copy(t, share):
    return t.detach() if share else t.data.clone()
""",
        ),
        Right(
            "a class with __call__, bound to the name",
            """
class FrozenCopier:
    def __call__(self, t, share):
        frozen = t.detach()
        return frozen if share else frozen.clone()


frozen_copy = FrozenCopier()
""",
        ),
    ],
    "ex2_detach_all": [
        Right(
            "a helper and a list comprehension",
            """
def detach_one(t):
    try:
        return t.detach_()
    except RuntimeError:
        return t.detach()


def detach_all(tensors):
    return [detach_one(t) for t in tensors]
""",
        ),
        Right(
            "result filled by index",
            """
def detach_all(tensors):
    result = [None] * len(tensors)
    for i, t in enumerate(tensors):
        try:
            t.detach_()
            result[i] = t
        except RuntimeError as error:
            if "view" not in str(error):
                raise
            result[i] = t.detach()
    return result
""",
        ),
        Right(
            "map over a helper",
            """
def detach_all(tensors):
    def detached(t):
        try:
            return t.detach_()
        except RuntimeError:
            return t.detach()

    return list(map(detached, tensors))
""",
        ),
        Right(
            "a while loop over indices, try/except/else",
            """
def detach_all(tensors):
    result = []
    i = 0
    while i < len(tensors):
        t = tensors[i]
        try:
            t.detach_()
        except RuntimeError:
            result.append(t.detach())
        else:
            result.append(t)
        i += 1
    return result
""",
        ),
        Right(
            "a class with __call__, bound to the name",
            """
class Detacher:
    def __call__(self, tensors):
        out = []
        for t in tensors:
            try:
                out.append(t.detach_())
            except RuntimeError:
                out.append(t.detach())
        return out


detach_all = Detacher()
""",
        ),
    ],
    "ex3_normalised_and_grad": [
        Right(
            "no in-place change: a new tensor from detached values",
            """
def normalised_and_grad(w, x):
    out = torch.exp(x @ w)
    frozen = out.detach()
    p = frozen / frozen.sum()
    (grad,) = torch.autograd.grad(out.sum(), w)
    return p, grad
""",
        ),
        Right(
            "backward first, then the in-place change",
            """
def normalised_and_grad(w, x):
    out = torch.exp(x @ w)
    out.sum().backward()
    p = out.detach()
    p.div_(p.sum())
    return p, w.grad
""",
        ),
        Right(
            "softmax under no_grad",
            """
def normalised_and_grad(w, x):
    out = torch.exp(x @ w)
    with torch.no_grad():
        p = torch.softmax(x @ w, dim=0)
    out.sum().backward()
    return p, w.grad.clone()
""",
        ),
        Right(
            "a clone divided in place, gradient by autograd.grad",
            """
def normalised_and_grad(w, x):
    out = torch.exp(x @ w)
    p = out.clone().detach_()
    p /= p.sum()
    grad = torch.autograd.grad(out.sum(), [w])[0]
    return p, grad
""",
        ),
        Right(
            "backward first, then .data divided in place",
            """
def normalised_and_grad(w, x):
    out = torch.exp(x @ w)
    out.sum().backward()
    p = out.data
    p.div_(p.sum())
    return p, w.grad
""",
        ),
        Right(
            "the gradient worked out by hand: x.T @ out",
            """
def normalised_and_grad(w, x):
    out = torch.exp(x @ w).detach()
    return out / out.sum(), x.T @ out
""",
        ),
    ],
    "ex4_d_step": [
        Right(
            "fake made under no_grad",
            """
import torch.nn.functional as F

def d_step(G, D, opt_d, real, z):
    with torch.no_grad():
        fake = G(z)
    opt_d.zero_grad()
    real_logits, fake_logits = D(real), D(fake)
    loss = F.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits))
    loss = loss + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
    loss.backward()
    opt_d.step()
    return loss.item()
""",
        ),
        Right(
            "zero_grad(set_to_none=False) and nn.BCEWithLogitsLoss",
            """
def d_step(G, D, opt_d, real, z):
    criterion = torch.nn.BCEWithLogitsLoss()
    opt_d.zero_grad(set_to_none=False)
    fake = G(z).detach()
    out_real = D(real)
    out_fake = D(fake)
    loss = criterion(out_real, torch.ones_like(out_real)) + criterion(
        out_fake, torch.zeros_like(out_fake)
    )
    loss.backward()
    opt_d.step()
    return loss.item()
""",
        ),
        Right(
            "G frozen during the D step, each flag restored as it was",
            """
import torch.nn.functional as F

def d_step(G, D, opt_d, real, z):
    flags = [p.requires_grad for p in G.parameters()]
    G.requires_grad_(False)
    try:
        fake = G(z)
    finally:
        for p, flag in zip(G.parameters(), flags):
            p.requires_grad_(flag)
    D.zero_grad()
    real_logits, fake_logits = D(real), D(fake)
    loss = F.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits))
    loss = loss + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
    loss.backward()
    opt_d.step()
    return float(loss.detach())
""",
        ),
        Right(
            "autograd.grad over the optimizer's parameters",
            """
import torch.nn.functional as F

def d_step(G, D, opt_d, real, z):
    fake = G(z).detach()
    logits_real = D(real)
    logits_fake = D(fake)
    loss = F.binary_cross_entropy_with_logits(
        logits_real, torch.ones_like(logits_real)
    ) + F.binary_cross_entropy_with_logits(logits_fake, torch.zeros_like(logits_fake))
    params = [p for group in opt_d.param_groups for p in group["params"]]
    for p, g in zip(params, torch.autograd.grad(loss, params)):
        p.grad = g
    opt_d.step()
    return loss.item()
""",
        ),
        Right(
            "a module-level criterion and logsigmoid written out",
            """
import torch.nn.functional as F

criterion = torch.nn.BCEWithLogitsLoss()


def d_step(G, D, opt_d, real, z):
    opt_d.zero_grad()
    with torch.no_grad():
        fake = G(z)
    real_logits = D(real)
    loss = criterion(real_logits, torch.ones_like(real_logits)) - F.logsigmoid(-D(fake)).mean()
    loss.backward()
    opt_d.step()
    return loss.item()
""",
        ),
        Right(
            "D(fake) before D(real), the fake term first (BatchNorm's running stats differ)",
            """
import torch.nn.functional as F

def d_step(G, D, opt_d, real, z):
    opt_d.zero_grad()
    fake_out = D(G(z).detach())
    real_out = D(real)
    loss = F.binary_cross_entropy_with_logits(fake_out, torch.zeros_like(fake_out))
    loss += F.binary_cross_entropy_with_logits(real_out, torch.ones_like(real_out))
    loss.backward()
    opt_d.step()
    return loss.item()
""",
        ),
    ],
    "ex5_g_step": [
        Right(
            "-logsigmoid(logits).mean(), a method chain: stable for a confident D",
            """
import torch.nn.functional as F


def g_step(G, D, opt_g, z):
    opt_g.zero_grad()
    loss_g = F.logsigmoid(D(G(z))).mean().neg()
    loss_g.backward()
    opt_g.step()
    return loss_g.item()
""",
        ),
        Right(
            "nn.BCEWithLogitsLoss with full_like targets, G.zero_grad()",
            """
def g_step(G, D, opt_g, z):
    G.zero_grad()
    fake = G(z)
    scores = D(fake)
    loss = torch.nn.BCEWithLogitsLoss()(scores, torch.full_like(scores, 1.0))
    loss.backward()
    opt_g.step()
    return float(loss.detach())
""",
        ),
        Right(
            "the loss written out: mean of softplus(-logits)",
            """
import torch.nn.functional as F

def g_step(G, D, opt_g, z):
    opt_g.zero_grad()
    loss = F.softplus(-D(G(z))).mean()
    loss.backward()
    opt_g.step()
    return loss.item()
""",
        ),
        Right(
            "D frozen during the G step, each flag restored as it was",
            """
import torch.nn.functional as F

def g_step(G, D, opt_g, z):
    flags = [p.requires_grad for p in D.parameters()]
    D.requires_grad_(False)
    try:
        opt_g.zero_grad()
        logits = D(G(z))
        loss = F.binary_cross_entropy_with_logits(logits, torch.ones_like(logits))
        loss.backward()
        opt_g.step()
    finally:
        for p, flag in zip(D.parameters(), flags):
            p.requires_grad_(flag)
    return loss.item()
""",
        ),
        Right(
            "autograd.grad over the optimizer's parameters",
            """
import torch.nn.functional as F

def g_step(G, D, opt_g, z):
    logits = D(G(z))
    loss = F.binary_cross_entropy_with_logits(logits, torch.ones_like(logits))
    params = [p for group in opt_g.param_groups for p in group["params"]]
    for p, g in zip(params, torch.autograd.grad(loss, params)):
        p.grad = g
    opt_g.step()
    return loss.item()
""",
        ),
        Right(
            "a class with __call__ holding the criterion",
            """
class GeneratorStep:
    def __init__(self):
        self.criterion = torch.nn.BCEWithLogitsLoss()

    def __call__(self, G, D, opt_g, z):
        opt_g.zero_grad()
        scores = D(G(z))
        loss = self.criterion(scores, torch.ones_like(scores))
        loss.backward()
        opt_g.step()
        return loss.item()


g_step = GeneratorStep()
""",
        ),
    ],
}
