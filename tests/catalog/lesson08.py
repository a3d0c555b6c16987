"""Catalogued answers for lesson 08, the capstone (see catalog/__init__.py).

Each part's WRONG list starts with the starter code itself (the planted bug), then
partial repairs and repairs that break something else; RIGHT holds repairs in other
styles than the official solution.
"""

from catalog import Right, Wrong

WRONG: dict[str, list[Wrong]] = {
    "ex1_train_epoch": [
        Wrong(
            "the starter: gradients never zeroed",
            "RG-4",
            """
import torch.nn.functional as F

def train_epoch(model, optimizer, batches):
    losses = []
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
""",
        ),
        Wrong(
            "zeroes after the step only: the first step uses the stale .grad",
            "RG-4",
            """
import torch.nn.functional as F

def train_epoch(model, optimizer, batches):
    losses = []
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.item())
    return losses
""",
        ),
        Wrong(
            "zeroes once before the loop: later batches accumulate",
            "RG-4",
            """
import torch.nn.functional as F

def train_epoch(model, optimizer, batches):
    losses = []
    optimizer.zero_grad()
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
""",
        ),
        Wrong(
            "zeroes between backward and step: every step is empty",
            None,
            """
import torch.nn.functional as F

def train_epoch(model, optimizer, batches):
    losses = []
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.zero_grad()
        optimizer.step()
        losses.append(loss.item())
    return losses
""",
        ),
        Wrong(
            "returns the loss tensors, not floats",
            None,
            """
import torch.nn.functional as F

def train_epoch(model, optimizer, batches):
    losses = []
    for x, y in batches:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss)
    return losses
""",
        ),
        Wrong(
            "puts the model in evaluation mode 'to be safe'",
            None,
            """
import torch.nn.functional as F

def train_epoch(model, optimizer, batches):
    model.eval()
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
            "ignores the optimizer: a hand-written step with a hard-coded lr",
            None,
            """
import torch
import torch.nn.functional as F

def train_epoch(model, optimizer, batches):
    losses = []
    for x, y in batches:
        model.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                if p.grad is not None:
                    p -= 0.1 * p.grad
        losses.append(loss.item())
    return losses
""",
        ),
        Wrong(
            "zeroes every other batch only",
            "RG-4",
            """
import torch.nn.functional as F

def train_epoch(model, optimizer, batches):
    losses = []
    for i, (x, y) in enumerate(batches):
        if i % 2 == 0:
            optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
""",
        ),
        Wrong(
            "unfreezes every parameter 'so that all of them train'",
            None,
            """
import torch.nn.functional as F

def train_epoch(model, optimizer, batches):
    for p in model.parameters():
        p.requires_grad_(True)
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
            "torch.autograd.grad, written into .grad",
            None,
            """
import torch.nn.functional as F

def train_epoch(model, optimizer, batches):
    params = list(model.parameters())
    losses = []
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        for p, g in zip(params, torch.autograd.grad(loss, params)):
            p.grad = g
        optimizer.step()
        losses.append(loss.item())
    return losses
""",
        ),
    ],
    "ex2_validate": [
        Wrong(
            "the starter: total += loss keeps every graph",
            "NG-3",
            """
import torch.nn.functional as F

def validate(model, batches):
    was_training = model.training
    model.eval()
    total = 0.0
    for x, y in batches:
        total += F.cross_entropy(model(x), y)
    model.train(was_training)
    return float(total) / len(batches)
""",
        ),
        Wrong(
            "keeps the outputs and computes the loss at the end",
            "NG-3",
            """
import torch.nn.functional as F

def validate(model, batches):
    was_training = model.training
    model.eval()
    outputs, targets = [], []
    for x, y in batches:
        outputs.append(model(x))
        targets.append(y)
    model.train(was_training)
    return F.cross_entropy(torch.cat(outputs), torch.cat(targets)).item()
""",
        ),
        Wrong(
            "stacks the loss tensors at the end",
            "NG-3",
            """
import torch.nn.functional as F

def validate(model, batches):
    was_training = model.training
    model.eval()
    losses = [F.cross_entropy(model(x), y) for x, y in batches]
    model.train(was_training)
    return torch.stack(losses).mean().item()
""",
        ),
        Wrong(
            "no_grad, but evaluation mode dropped",
            "EV-2",
            """
import torch.nn.functional as F

def validate(model, batches):
    total = 0.0
    with torch.no_grad():
        for x, y in batches:
            total += F.cross_entropy(model(x), y).item()
    return total / len(batches)
""",
        ),
        Wrong(
            "no_grad, but the mode is not restored",
            "EV-4",
            """
import torch.nn.functional as F

def validate(model, batches):
    model.eval()
    total = 0.0
    with torch.no_grad():
        for x, y in batches:
            total += F.cross_entropy(model(x), y).item()
    return total / len(batches)
""",
        ),
        Wrong(
            "returns a tensor",
            None,
            """
import torch.nn.functional as F

def validate(model, batches):
    was_training = model.training
    model.eval()
    total = 0.0
    with torch.no_grad():
        for x, y in batches:
            total = total + F.cross_entropy(model(x), y)
    model.train(was_training)
    return total / len(batches)
""",
        ),
        Wrong(
            "restores with model.train() whatever the mode was",
            "EV-4",
            """
import torch
import torch.nn.functional as F

def validate(model, batches):
    model.eval()
    total = 0.0
    with torch.no_grad():
        for x, y in batches:
            total += F.cross_entropy(model(x), y).item()
    model.train()
    return total / len(batches)
""",
        ),
        Wrong(
            "a hard-coded number of batches",
            None,
            """
import torch
import torch.nn.functional as F

def validate(model, batches):
    was_training = model.training
    model.eval()
    total = 0.0
    with torch.no_grad():
        for x, y in batches:
            total += F.cross_entropy(model(x), y).item()
    model.train(was_training)
    return total / 4
""",
        ),
    ],
    "ex3_accuracy": [
        Wrong(
            "the starter: no_grad without eval()",
            "EV-2",
            """
def accuracy(model, images, labels):
    with torch.no_grad():
        predicted = model(images).argmax(dim=1)
    return (predicted == labels).float().mean().item()
""",
        ),
        Wrong(
            "eval() but the mode is never restored",
            "EV-4",
            """
def accuracy(model, images, labels):
    model.eval()
    with torch.no_grad():
        predicted = model(images).argmax(dim=1)
    return (predicted == labels).float().mean().item()
""",
        ),
        Wrong(
            "always back to train(), whatever the mode was",
            "EV-4",
            """
def accuracy(model, images, labels):
    model.eval()
    with torch.no_grad():
        predicted = model(images).argmax(dim=1)
    model.train()
    return (predicted == labels).float().mean().item()
""",
        ),
        Wrong(
            "eval() after the forward pass",
            "EV-2",
            """
def accuracy(model, images, labels):
    was_training = model.training
    with torch.no_grad():
        predicted = model(images).argmax(dim=1)
    model.eval()
    model.train(was_training)
    return (predicted == labels).float().mean().item()
""",
        ),
        Wrong(
            "a percentage instead of a fraction",
            None,
            """
def accuracy(model, images, labels):
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            predicted = model(images).argmax(dim=1)
    finally:
        model.train(was_training)
    return 100.0 * (predicted == labels).float().mean().item()
""",
        ),
        Wrong(
            "counts the correct images",
            None,
            """
def accuracy(model, images, labels):
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            predicted = model(images).argmax(dim=1)
    finally:
        model.train(was_training)
    return float((predicted == labels).sum().item())
""",
        ),
        Wrong(
            "restores with model.train() whatever the mode was",
            "EV-4",
            """
import torch

def accuracy(model, images, labels):
    model.eval()
    with torch.no_grad():
        predicted = model(images).argmax(dim=1)
    model.train()
    return (predicted == labels).float().mean().item()
""",
        ),
        Wrong(
            "returns a tensor, not a float",
            None,
            """
import torch

def accuracy(model, images, labels):
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            predicted = model(images).argmax(dim=1)
    finally:
        model.train(was_training)
    return (predicted == labels).float().mean()
""",
        ),
    ],
    "ex4_discriminator_step": [
        Wrong(
            "G's output detached in place with detach_(): it raises where G ends in a view",
            "DT-3",
            """
import torch.nn.functional as F

def discriminator_step(G, D, opt_d, real, noise):
    fake = G(noise)
    fake.detach_()
    D.zero_grad()
    real_logits, fake_logits = D(real), D(fake)
    loss = F.binary_cross_entropy_with_logits(
        real_logits, torch.ones_like(real_logits)
    ) + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
    loss.backward()
    opt_d.step()
    return float(loss)
""",
        ),
        Wrong(
            "one batch through D: real and fake concatenated (BatchNorm in D mixes their "
            "statistics)",
            None,
            """
import torch
import torch.nn.functional as F

def discriminator_step(G, D, opt_d, real, noise):
    opt_d.zero_grad()
    fake = G(noise).detach()
    logits = D(torch.cat([real, fake]))
    n = len(real)
    loss = F.binary_cross_entropy_with_logits(
        logits[:n], torch.ones_like(logits[:n])
    ) + F.binary_cross_entropy_with_logits(logits[n:], torch.zeros_like(logits[n:]))
    loss.backward()
    opt_d.step()
    return loss.item()
""",
        ),
        Wrong(
            "the starter: no detach on the fake samples",
            "DT-4",
            """
import torch.nn.functional as F

def discriminator_step(G, D, opt_d, real, noise):
    opt_d.zero_grad()
    fake = G(noise)
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
            "detaches D's output instead of the fake samples",
            None,
            """
import torch.nn.functional as F

def discriminator_step(G, D, opt_d, real, noise):
    opt_d.zero_grad()
    real_logits, fake_logits = D(real), D(G(noise)).detach()
    loss = F.binary_cross_entropy_with_logits(
        real_logits, torch.ones_like(real_logits)
    ) + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
    loss.backward()
    opt_d.step()
    return loss.item()
""",
        ),
        Wrong(
            "detaches, but D's stale gradients are never zeroed",
            "DT-6",
            """
import torch.nn.functional as F

def discriminator_step(G, D, opt_d, real, noise):
    fake = G(noise).detach()
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
            "freezes G and leaves it frozen",
            None,
            """
import torch.nn.functional as F

def discriminator_step(G, D, opt_d, real, noise):
    G.requires_grad_(False)
    opt_d.zero_grad()
    fake = G(noise)
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
            "the whole step under no_grad",
            None,
            """
import torch.nn.functional as F

def discriminator_step(G, D, opt_d, real, noise):
    with torch.no_grad():
        opt_d.zero_grad()
        fake = G(noise)
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
            "freezes G for the step and never unfreezes it",
            None,
            """
import torch
import torch.nn.functional as F

def discriminator_step(G, D, opt_d, real, noise):
    opt_d.zero_grad()
    for p in G.parameters():
        p.requires_grad_(False)
    fake = G(noise)
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
            "detaches, but D's .grad is never zeroed",
            "DT-6",
            """
import torch
import torch.nn.functional as F

def discriminator_step(G, D, opt_d, real, noise):
    fake = G(noise).detach()
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
            "G frozen for the step, then unfrozen",
            None,
            """
import torch.nn.functional as F

def discriminator_step(G, D, opt_d, real, noise):
    G.requires_grad_(False)
    try:
        opt_d.zero_grad(set_to_none=True)
        real_logits, fake_logits = D(real), D(G(noise))
        loss = F.binary_cross_entropy_with_logits(
            real_logits, torch.ones_like(real_logits)
        ) + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
        loss.backward()
        opt_d.step()
    finally:
        G.requires_grad_(True)
    return loss.item()
""",
        ),
        Wrong(
            "torch.autograd.grad with respect to D's parameters only",
            None,
            """
def discriminator_step(G, D, opt_d, real, noise):
    bce = torch.nn.BCEWithLogitsLoss()
    real_logits, fake_logits = D(real), D(G(noise))
    loss = bce(real_logits, torch.ones_like(real_logits)) + bce(
        fake_logits, torch.zeros_like(fake_logits)
    )
    params = list(D.parameters())
    for p, g in zip(params, torch.autograd.grad(loss, params)):
        p.grad = g
    opt_d.step()
    return loss.item()
""",
        ),
        Wrong(
            "no detach, then G's .grad emptied: the values the caller still needed are lost",
            None,
            """
import torch.nn.functional as F

def discriminator_step(G, D, opt_d, real, noise):
    opt_d.zero_grad()
    fake = G(noise)
    real_logits, fake_logits = D(real), D(fake)
    loss = F.binary_cross_entropy_with_logits(
        real_logits, torch.ones_like(real_logits)
    ) + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
    loss.backward()
    opt_d.step()
    G.zero_grad()
    return loss.item()
""",
        ),
    ],
    "ex5_log_features": [
        Wrong(
            "the starter: a hook registered in the loop, never removed",
            "HK-3",
            """
def log_features(model, layer, batches):
    features = []
    for x, _ in batches:
        layer.register_forward_hook(
            lambda module, inputs, output: features.append(output.detach())
        )
        model(x)
    return features
""",
        ),
        Wrong(
            "registered once, never removed",
            "HK-3",
            """
def log_features(model, layer, batches):
    features = []
    layer.register_forward_hook(lambda module, inputs, output: features.append(output.detach()))
    for x, _ in batches:
        model(x)
    return features
""",
        ),
        Wrong(
            "registered in the loop, only the last handle removed",
            "HK-3",
            """
def log_features(model, layer, batches):
    features = []
    for x, _ in batches:
        handle = layer.register_forward_hook(
            lambda module, inputs, output: features.append(output.detach())
        )
        model(x)
    handle.remove()
    return features
""",
        ),
        Wrong(
            "stores the outputs without detach",
            "HK-1",
            """
def log_features(model, layer, batches):
    features = []
    handle = layer.register_forward_hook(lambda module, inputs, output: features.append(output))
    for x, _ in batches:
        model(x)
    handle.remove()
    return features
""",
        ),
        Wrong(
            "hooks model[1] instead of the layer it was given",
            "HK-3",
            """
def log_features(model, layer, batches):
    features = []
    handle = model[1].register_forward_hook(
        lambda module, inputs, output: features.append(output.detach())
    )
    for x, _ in batches:
        model(x)
    handle.remove()
    return features
""",
        ),
        Wrong(
            "a pre-hook: logs the layer's input, not its output",
            "HK-3",
            """
def log_features(model, layer, batches):
    features = []
    handle = layer.register_forward_pre_hook(
        lambda module, inputs: features.append(inputs[0].detach())
    )
    for x, _ in batches:
        model(x)
    handle.remove()
    return features
""",
        ),
        Wrong(
            "removes the hook only when the loop succeeds (no try/finally)",
            "HK-3",
            """
def log_features(model, layer, batches):
    features = []
    handle = layer.register_forward_hook(
        lambda module, inputs, output: features.append(output.detach())
    )
    for x, _ in batches:
        model(x)
    handle.remove()
    return features
""",
        ),
        Wrong(
            "clones the output instead of detaching it",
            "HK-1",
            """
def log_features(model, layer, batches):
    features = []
    handle = layer.register_forward_hook(
        lambda module, inputs, output: features.append(output.clone())
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
            "one hook, removed after the loop",
            "HK-3",
            """
def log_features(model, layer, batches):
    features = []

    def keep(module, inputs, output):
        features.append(output.detach().clone())

    handle = layer.register_forward_hook(keep)
    for inputs, _ in batches:
        model(inputs)
    handle.remove()
    return features
""",
        ),
    ],
    "ex6_time_step": [
        Wrong(
            "the starter: no synchronize at all",
            "CS-2",
            """
def time_step(step, synchronize, clock, repeats):
    start = clock()
    for _ in range(repeats):
        step()
    return (clock() - start) / repeats
""",
        ),
        Wrong(
            "synchronizes at the end only: earlier work is counted",
            "CS-1",
            """
def time_step(step, synchronize, clock, repeats):
    start = clock()
    for _ in range(repeats):
        step()
    synchronize()
    return (clock() - start) / repeats
""",
        ),
        Wrong(
            "synchronizes at the start only",
            "CS-2",
            """
def time_step(step, synchronize, clock, repeats):
    synchronize()
    start = clock()
    for _ in range(repeats):
        step()
    return (clock() - start) / repeats
""",
        ),
        Wrong(
            "synchronizes after reading the clock",
            "CS-2",
            """
def time_step(step, synchronize, clock, repeats):
    synchronize()
    start = clock()
    for _ in range(repeats):
        step()
    stop = clock()
    synchronize()
    return (stop - start) / repeats
""",
        ),
        Wrong(
            "returns the total, not the mean",
            None,
            """
def time_step(step, synchronize, clock, repeats):
    synchronize()
    start = clock()
    for _ in range(repeats):
        step()
    synchronize()
    return clock() - start
""",
        ),
        Wrong(
            "times one step more than asked",
            None,
            """
def time_step(step, synchronize, clock, repeats):
    synchronize()
    start = clock()
    for _ in range(repeats + 1):
        step()
    synchronize()
    return (clock() - start) / repeats
""",
        ),
        Wrong(
            "a hard-coded number of steps",
            None,
            """
def time_step(step, synchronize, clock, repeats):
    synchronize()
    start = clock()
    for _ in range(5):
        step()
    synchronize()
    return (clock() - start) / repeats
""",
        ),
        Wrong(
            "divides by repeats + 1",
            None,
            """
def time_step(step, synchronize, clock, repeats):
    synchronize()
    start = clock()
    for _ in range(repeats):
        step()
    synchronize()
    return (clock() - start) / (repeats + 1)
""",
        ),
    ],
    "ex7_swish": [
        Wrong(
            "the starter: backward returns one gradient for two inputs",
            "CF-2",
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
        return grad_output * (s + ctx.beta * x * s * (1 - s))


def swish(x, beta):
    return Swish.apply(x, beta)
""",
        ),
        Wrong(
            "a one-element tuple is still one gradient",
            "CF-2",
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
        return (grad_output * (s + ctx.beta * x * s * (1 - s)),)


def swish(x, beta):
    return Swish.apply(x, beta)
""",
        ),
        Wrong(
            "keeps x as an attribute of ctx",
            "CF-4",
            """
class Swish(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, beta):
        ctx.x = x
        ctx.beta = beta
        return x * torch.sigmoid(beta * x)

    @staticmethod
    def backward(ctx, grad_output):
        s = torch.sigmoid(ctx.beta * ctx.x)
        return grad_output * (s + ctx.beta * ctx.x * s * (1 - s)), None


def swish(x, beta):
    return Swish.apply(x, beta)
""",
        ),
        Wrong(
            "the legacy style: an instance with a non-static forward",
            "CF-1",
            """
class Swish(torch.autograd.Function):
    def __init__(self, beta):
        self.beta = beta

    def forward(self, x):
        s = torch.sigmoid(self.beta * x)
        self.save_for_backward(x, s)
        return x * s

    def backward(self, grad_output):
        x, s = self.saved_tensors
        return grad_output * (s + self.beta * x * s * (1 - s))


def swish(x, beta):
    return Swish(beta)(x)
""",
        ),
        Wrong(
            "forgets the factor beta in the derivative",
            None,
            """
class Swish(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, beta):
        s = torch.sigmoid(beta * x)
        ctx.save_for_backward(x, s)
        return x * s

    @staticmethod
    def backward(ctx, grad_output):
        x, s = ctx.saved_tensors
        return grad_output * (s + x * s * (1 - s)), None


def swish(x, beta):
    return Swish.apply(x, beta)
""",
        ),
        Wrong(
            "returns a zero tensor as beta's gradient",
            None,
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
        return grad_output * (s + ctx.beta * x * s * (1 - s)), torch.zeros(())


def swish(x, beta):
    return Swish.apply(x, beta)
""",
        ),
        Wrong(
            "backward forgets the beta * x * s * (1 - s) term",
            None,
            """
import torch

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
        return grad_output * s, None


def swish(x, beta):
    return Swish.apply(x, beta)
""",
        ),
        Wrong(
            "keeps x on ctx instead of save_for_backward",
            "CF-4",
            """
import torch

class Swish(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, beta):
        ctx.x = x
        ctx.beta = beta
        return x * torch.sigmoid(beta * x)

    @staticmethod
    def backward(ctx, grad_output):
        x, beta = ctx.x, ctx.beta
        s = torch.sigmoid(beta * x)
        return grad_output * (s + beta * x * s * (1 - s)), None


def swish(x, beta):
    return Swish.apply(x, beta)
""",
        ),
    ],
}

RIGHT: dict[str, list[Right]] = {
    "ex1_train_epoch": [
        Right(
            "model.zero_grad() at the top of each iteration",
            """
def train_epoch(model, optimizer, batches):
    losses = []
    for inputs, targets in batches:
        model.zero_grad()
        loss = torch.nn.CrossEntropyLoss()(model(inputs), targets)
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    return losses
""",
        ),
        Right(
            "sets every .grad to None by hand",
            """
import torch.nn.functional as F

def train_epoch(model, optimizer, batches):
    losses = []
    for x, y in batches:
        for p in model.parameters():
            p.grad = None
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
""",
        ),
        Right(
            "zeroes before the loop and after each step",
            """
import torch.nn.functional as F

def train_epoch(model, optimizer, batches):
    optimizer.zero_grad(set_to_none=False)
    losses = []
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=False)
        losses.append(loss.item())
    return losses
""",
        ),
        Right(
            "a module-level criterion, an index loop and model.zero_grad()",
            """
import torch.nn as nn

criterion = nn.CrossEntropyLoss()

def train_epoch(model, optimizer, batches):
    losses = []
    for i in range(len(batches)):
        x, y = batches[i]
        model.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
""",
        ),
        Right(
            "zero_grad(set_to_none=False), losses read with float()",
            """
import torch.nn.functional as F

def train_epoch(model, optimizer, batches):
    losses = []
    for x, y in batches:
        optimizer.zero_grad(set_to_none=False)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(float(loss))
    return losses
""",
        ),
    ],
    "ex2_validate": [
        Right(
            "inference_mode",
            """
import torch.nn.functional as F

def validate(model, batches):
    was_training = model.training
    model.eval()
    with torch.inference_mode():
        losses = [F.cross_entropy(model(x), y).item() for x, y in batches]
    model.train(was_training)
    return sum(losses) / len(losses)
""",
        ),
        Right(
            ".item() per batch frees each graph before the next",
            """
import torch.nn.functional as F

def validate(model, batches):
    was_training = model.training
    model.eval()
    total = 0.0
    for x, y in batches:
        total += F.cross_entropy(model(x), y).item()
    model.train(was_training)
    return total / len(batches)
""",
        ),
        Right(
            "a no_grad-decorated helper, every module's mode restored",
            """
import torch.nn.functional as F


@torch.no_grad()
def _batch_loss(model, x, y):
    return F.cross_entropy(model(x), y)


def validate(model, batches):
    modes = [m.training for m in model.modules()]
    model.eval()
    total = torch.zeros(())
    for x, y in batches:
        total = total + _batch_loss(model, x, y).cpu()
    for m, mode in zip(model.modules(), modes):
        m.train(mode)
    return total.item() / len(batches)
""",
        ),
        Right(
            "detached losses summed as a tensor",
            """
import torch.nn.functional as F

def validate(model, batches):
    was_training = model.training
    model.eval()
    try:
        total = sum(F.cross_entropy(model(x), y).detach() for x, y in batches)
    finally:
        model.train(was_training)
    return float(total) / len(batches)
""",
        ),
        Right(
            "a module-level criterion, inference_mode, a list of losses",
            """
import torch
import torch.nn as nn

criterion = nn.CrossEntropyLoss()

def validate(model, batches):
    was_training = model.training
    model.eval()
    with torch.inference_mode():
        losses = [criterion(model(x), y).item() for x, y in batches]
    model.train(was_training)
    return sum(losses) / len(losses)
""",
        ),
        Right(
            "try/finally around the loop, .item() without no_grad",
            """
import torch.nn.functional as F

def validate(model, batches):
    was_training = model.training
    model.eval()
    try:
        total = 0.0
        for x, y in batches:
            total = total + F.cross_entropy(model(x), y).item()
    finally:
        model.train(was_training)
    return total / len(batches)
""",
        ),
    ],
    "ex3_accuracy": [
        Right(
            "on a deep copy in evaluation mode",
            """
import copy

def accuracy(model, images, labels):
    frozen = copy.deepcopy(model).eval()
    with torch.no_grad():
        predicted = frozen(images).argmax(dim=1)
    return (predicted == labels).sum().item() / len(labels)
""",
        ),
        Right(
            "every module's mode saved and restored, inference_mode",
            """
def accuracy(model, images, labels):
    modes = [m.training for m in model.modules()]
    model.eval()
    try:
        with torch.inference_mode():
            correct = (model(images).argmax(1) == labels).double().mean().item()
    finally:
        for m, mode in zip(model.modules(), modes):
            m.train(mode)
    return correct
""",
        ),
        Right(
            "eval/train(was) without no_grad",
            """
def accuracy(model, images, labels):
    was_training = model.training
    model.eval()
    try:
        predicted = model(images).argmax(dim=1)
    finally:
        model.train(was_training)
    return torch.eq(predicted, labels).float().mean().item()
""",
        ),
        Right(
            "inference_mode, sum over len, train(mode=...)",
            """
import torch

def accuracy(model, images, labels):
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            logits = model(images)
    finally:
        model.train(mode=was_training)
    return (logits.argmax(-1) == labels).sum().item() / len(labels)
""",
        ),
        Right(
            "a class with __call__ that measures it",
            """
import torch

class Scorer:
    def __call__(self, model, images, labels):
        was_training = model.training
        model.eval()
        try:
            with torch.no_grad():
                hits = model(images).argmax(1).eq(labels)
        finally:
            model.train(was_training)
        return hits.double().mean().item()

accuracy = Scorer()
""",
        ),
    ],
    "ex4_discriminator_step": [
        Right(
            "fake samples generated under no_grad",
            """
import torch.nn.functional as F

def discriminator_step(G, D, opt_d, real, noise):
    with torch.no_grad():
        fake = G(noise)
    opt_d.zero_grad()
    real_logits, fake_logits = D(real), D(fake)
    loss = F.binary_cross_entropy_with_logits(
        real_logits, torch.ones_like(real_logits)
    ) + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
    loss.backward()
    opt_d.step()
    return loss.item()
""",
        ),
        Right(
            "G under no_grad, a module-level criterion",
            """
import torch
import torch.nn as nn

bce = nn.BCEWithLogitsLoss()

def discriminator_step(G, D, opt_d, real, noise):
    opt_d.zero_grad()
    with torch.no_grad():
        fake = G(noise)
    real_logits = D(real)
    fake_logits = D(fake)
    loss = bce(real_logits, torch.ones_like(real_logits)) + bce(
        fake_logits, torch.zeros_like(fake_logits)
    )
    loss.backward()
    opt_d.step()
    return loss.item()
""",
        ),
        Right(
            "D(G(noise).detach()) inline, zero_grad(set_to_none=False)",
            """
import torch
import torch.nn.functional as F

def discriminator_step(G, D, opt_d, real, noise):
    opt_d.zero_grad(set_to_none=False)
    real_logits = D(real)
    fake_logits = D(G(noise).detach())
    loss = F.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits))
    loss = loss + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
    loss.backward()
    opt_d.step()
    return loss.item()
""",
        ),
        Right(
            "one backward per term: the gradients add up in D's .grad",
            """
import torch.nn.functional as F

def discriminator_step(G, D, opt_d, real, noise):
    opt_d.zero_grad()
    real_logits = D(real)
    loss_real = F.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits))
    loss_real.backward()
    fake_logits = D(G(noise).detach())
    loss_fake = F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
    loss_fake.backward()
    opt_d.step()
    return loss_real.item() + loss_fake.item()
""",
        ),
        Right(
            "G's flags saved, G frozen, each flag restored in a finally",
            """
import torch.nn.functional as F

def discriminator_step(G, D, opt_d, real, noise):
    flags = [p.requires_grad for p in G.parameters()]
    G.requires_grad_(False)
    try:
        opt_d.zero_grad()
        real_logits, fake_logits = D(real), D(G(noise))
        loss = F.binary_cross_entropy_with_logits(
            real_logits, torch.ones_like(real_logits)
        ) + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
        loss.backward()
        opt_d.step()
    finally:
        for p, flag in zip(G.parameters(), flags):
            p.requires_grad_(flag)
    return loss.item()
""",
        ),
        Right(
            "the same loss written with logsigmoid",
            """
import torch.nn.functional as F

def discriminator_step(G, D, opt_d, real, noise):
    opt_d.zero_grad()
    with torch.no_grad():
        fake = G(noise)
    real_logits, fake_logits = D(real), D(fake)
    loss = -F.logsigmoid(real_logits).mean() - F.logsigmoid(-fake_logits).mean()
    loss.backward()
    opt_d.step()
    return loss.item()
""",
        ),
    ],
    "ex5_log_features": [
        Right(
            "a hook per batch, each removed at once",
            """
def log_features(model, layer, batches):
    features = []
    for x, _ in batches:
        handle = layer.register_forward_hook(
            lambda module, inputs, output: features.append(output.detach())
        )
        try:
            model(x)
        finally:
            handle.remove()
    return features
""",
        ),
        Right(
            "a small collector class and no_grad",
            """
class Collector:
    def __init__(self):
        self.features = []

    def __call__(self, module, inputs, output):
        self.features.append(output)


def log_features(model, layer, batches):
    collector = Collector()
    handle = layer.register_forward_hook(collector)
    try:
        with torch.no_grad():
            for x, _ in batches:
                model(x)
    finally:
        handle.remove()
    return collector.features
""",
        ),
        Right(
            "a class with __call__ as the hook",
            """
class Recorder:
    def __init__(self):
        self.outputs = []

    def __call__(self, module, inputs, output):
        self.outputs.append(output.detach())


def log_features(model, layer, batches):
    recorder = Recorder()
    handle = layer.register_forward_hook(recorder)
    try:
        for x, _ in batches:
            model(x)
    finally:
        handle.remove()
    return recorder.outputs
""",
        ),
        Right(
            "a named hook function, an index loop",
            """
def log_features(model, layer, batches):
    features = []

    def keep(module, inputs, output):
        features.append(output.detach())

    handle = layer.register_forward_hook(keep)
    try:
        for i in range(len(batches)):
            model(batches[i][0])
    finally:
        handle.remove()
    return features
""",
        ),
        Right(
            "the loop under no_grad, try/finally",
            """
import torch

def log_features(model, layer, batches):
    features = []
    handle = layer.register_forward_hook(lambda m, i, o: features.append(o))
    try:
        with torch.no_grad():
            for x, _ in batches:
                model(x)
    finally:
        handle.remove()
    return features
""",
        ),
    ],
    "ex6_time_step": [
        Right(
            "each step timed between two synchronizations",
            """
def time_step(step, synchronize, clock, repeats):
    total = 0.0
    for _ in range(repeats):
        synchronize()
        start = clock()
        step()
        synchronize()
        total += clock() - start
    return total / repeats
""",
        ),
        Right(
            "statistics.fmean of per-step intervals",
            """
import statistics

def time_step(step, synchronize, clock, repeats):
    synchronize()
    times = []
    for _ in range(repeats):
        start = clock()
        step()
        synchronize()
        times.append(clock() - start)
    return statistics.fmean(times)
""",
        ),
        Right(
            "a while loop, float() on the result",
            """
def time_step(step, synchronize, clock, repeats):
    synchronize()
    begin = clock()
    done = 0
    while done < repeats:
        step()
        done += 1
    synchronize()
    end = clock()
    return float(end - begin) / done
""",
        ),
        Right(
            "a while loop, the end time in its own variable",
            """
def time_step(step, synchronize, clock, repeats):
    synchronize()
    start = clock()
    done = 0
    while done < repeats:
        step()
        done += 1
    synchronize()
    end = clock()
    return (end - start) / repeats
""",
        ),
        Right(
            "a class with __call__",
            """
class Timer:
    def __call__(self, step, synchronize, clock, repeats):
        synchronize()
        t0 = clock()
        for _ in range(repeats):
            step()
        synchronize()
        return (clock() - t0) / repeats

time_step = Timer()
""",
        ),
        Right(
            "itertools.repeat as the loop, laps summed with sum()",
            """
import itertools


def time_step(step, synchronize, clock, repeats):
    def lap():
        synchronize()
        start = clock()
        step()
        synchronize()
        return clock() - start

    return sum(lap() for _ in itertools.repeat(None, repeats)) / repeats
""",
        ),
    ],
    "ex7_swish": [
        Right(
            "saves the output and the sigmoid, not x",
            """
class Swish(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, beta):
        s = torch.sigmoid(beta * x)
        y = x * s
        ctx.save_for_backward(y, s)
        ctx.beta = beta
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, s = ctx.saved_tensors
        return grad_output * (s + ctx.beta * y * (1 - s)), None


def swish(x, beta):
    return Swish.apply(x, beta)
""",
        ),
        Right(
            "recomputes the sigmoid in backward, honours needs_input_grad",
            """
class Swish(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, beta):
        ctx.save_for_backward(x)
        ctx.beta = beta
        return x * torch.sigmoid(beta * x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        grad_x = None
        if ctx.needs_input_grad[0]:
            s = torch.sigmoid(ctx.beta * x)
            grad_x = grad_output * s * (1 + ctx.beta * x * (1 - s))
        return grad_x, None


def swish(x, beta):
    return Swish.apply(x, beta)
""",
        ),
        Right(
            "setup_context style with a separate forward",
            """
class Swish(torch.autograd.Function):
    @staticmethod
    def forward(x, beta):
        return x * torch.sigmoid(beta * x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, beta = inputs
        ctx.save_for_backward(x)
        ctx.beta = beta

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(ctx.beta * x)
        return grad_output * (s + ctx.beta * x * s * (1 - s)), None


def swish(x, beta):
    return Swish.apply(x, beta)
""",
        ),
        Right(
            "saves x only, swish = Swish.apply (the docs' alias)",
            """
import torch

class Swish(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, beta):
        ctx.save_for_backward(x)
        ctx.beta = beta
        return x * torch.sigmoid(beta * x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(ctx.beta * x)
        return grad_output * s * (1 + ctx.beta * x * (1 - s)), None


swish = Swish.apply
""",
        ),
        Right(
            "setup_context and the output saved",
            """
import torch

class Swish(torch.autograd.Function):
    @staticmethod
    def forward(x, beta):
        return x * torch.sigmoid(beta * x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, beta = inputs
        ctx.save_for_backward(x, output)
        ctx.beta = beta

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        s = torch.sigmoid(ctx.beta * x)
        return grad_output * (s + ctx.beta * y * (1 - s)), None


def swish(x, beta):
    return Swish.apply(x, beta)
""",
        ),
    ],
}
