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
    ],
    "ex2_detach_all": [
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
    ],
    "ex4_d_step": [
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
    ],
    "ex5_g_step": [
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
            "G frozen during the D step, then unfrozen",
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
        Right(
            "gradients by autograd.grad, one batch of real and fake",
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
    ],
    "ex5_g_step": [
        Right(
            "D frozen during the G step, then unfrozen",
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
        Right(
            "gradients for G only, by autograd.grad",
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
    ],
}
