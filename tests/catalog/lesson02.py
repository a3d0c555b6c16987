"""Catalogued answers for lesson 02 (see catalog/__init__.py)."""

from catalog import Right, Wrong

WRONG: dict[str, list[Wrong]] = {
    "ex1_evaluate": [
        Wrong(
            "volatile Variable instead of no_grad",
            "NG-1",
            """
from torch.autograd import Variable

def evaluate(model, batches):
    total_loss, total_accuracy = 0.0, 0.0
    for inputs, labels in batches:
        logits = model(Variable(inputs, volatile=True))
        total_loss += torch.nn.functional.cross_entropy(logits, labels).item()
        total_accuracy += (logits.argmax(dim=1) == labels).float().mean().item()
    return total_loss / len(batches), total_accuracy / len(batches)
""",
        ),
        Wrong(
            "accumulates the loss tensors (total += loss)",
            "NG-3",
            """
def evaluate(model, batches):
    total_loss, total_accuracy = 0, 0
    for inputs, labels in batches:
        logits = model(inputs)
        total_loss += torch.nn.functional.cross_entropy(logits, labels)
        total_accuracy += (logits.argmax(dim=1) == labels).float().mean()
    return total_loss / len(batches), total_accuracy / len(batches)
""",
        ),
        Wrong(
            "calls backward() to free each batch's graph",
            "NG-3",
            """
def evaluate(model, batches):
    total_loss, total_accuracy = 0.0, 0.0
    for inputs, labels in batches:
        logits = model(inputs)
        loss = torch.nn.functional.cross_entropy(logits, labels)
        loss.backward()  # free the graph
        total_loss += loss.item()
        total_accuracy += (logits.argmax(dim=1) == labels).float().mean().item()
    return total_loss / len(batches), total_accuracy / len(batches)
""",
        ),
        Wrong(
            ".item() without no_grad still records every batch",
            None,
            """
def evaluate(model, batches):
    losses, accuracies = [], []
    for inputs, labels in batches:
        logits = model(inputs)
        losses.append(torch.nn.functional.cross_entropy(logits, labels).item())
        accuracies.append((logits.argmax(dim=1) == labels).float().mean().item())
    return sum(losses) / len(losses), sum(accuracies) / len(accuracies)
""",
        ),
        Wrong(
            "model.eval() alone",
            None,
            """
def evaluate(model, batches):
    model.eval()
    total_loss, total_accuracy = 0.0, 0.0
    for inputs, labels in batches:
        logits = model(inputs)
        total_loss += torch.nn.functional.cross_entropy(logits, labels).item()
        total_accuracy += (logits.argmax(dim=1) == labels).float().mean().item()
    return total_loss / len(batches), total_accuracy / len(batches)
""",
        ),
        Wrong(
            "grad mode switched off and never restored",
            None,
            """
def evaluate(model, batches):
    torch.set_grad_enabled(False)
    total_loss, total_accuracy = 0.0, 0.0
    for inputs, labels in batches:
        logits = model(inputs)
        total_loss += torch.nn.functional.cross_entropy(logits, labels).item()
        total_accuracy += (logits.argmax(dim=1) == labels).float().mean().item()
    return total_loss / len(batches), total_accuracy / len(batches)
""",
        ),
        Wrong(
            "eval() then train(): a model that arrived in eval mode leaves in train mode",
            None,
            """
@torch.no_grad()
def evaluate(model, batches):
    model.eval()
    total_loss, total_accuracy = 0.0, 0.0
    for inputs, labels in batches:
        logits = model(inputs)
        total_loss += torch.nn.functional.cross_entropy(logits, labels).item()
        total_accuracy += (logits.argmax(dim=1) == labels).float().mean().item()
    model.train()
    return total_loss / len(batches), total_accuracy / len(batches)
""",
        ),
        Wrong(
            "hard-coded float32 inputs",
            None,
            """
def evaluate(model, batches):
    total_loss, total_accuracy = 0.0, 0.0
    with torch.no_grad():
        for inputs, labels in batches:
            logits = model(inputs.float())
            total_loss += torch.nn.functional.cross_entropy(logits, labels).item()
            total_accuracy += (logits.argmax(dim=1) == labels).float().mean().item()
    return total_loss / len(batches), total_accuracy / len(batches)
""",
        ),
        Wrong(
            "all batches concatenated: a mean over samples, not over batches",
            None,
            """
@torch.no_grad()
def evaluate(model, batches):
    inputs = torch.cat([x for x, _ in batches])
    labels = torch.cat([y for _, y in batches])
    logits = model(inputs)
    loss = torch.nn.functional.cross_entropy(logits, labels)
    return loss.item(), (logits.argmax(dim=1) == labels).float().mean().item()
""",
        ),
        Wrong(
            "accumulates into a tensor made on the CPU (only shows on a GPU)",
            None,
            """
@torch.no_grad()
def evaluate(model, batches):
    totals = torch.zeros(2)
    for inputs, labels in batches:
        logits = model(inputs)
        loss = torch.nn.functional.cross_entropy(logits, labels)
        accuracy = (logits.argmax(dim=1) == labels).to(loss.dtype).mean()
        totals += torch.stack([loss, accuracy])
    mean_loss, accuracy = (totals / len(batches)).tolist()
    return mean_loss, accuracy
""",
            devices=("cuda",),
        ),
        Wrong(
            "returns 0-dim tensors instead of floats",
            None,
            """
def evaluate(model, batches):
    with torch.no_grad():
        losses = [torch.nn.functional.cross_entropy(model(x), y) for x, y in batches]
        hits = [(model(x).argmax(dim=1) == y).float().mean() for x, y in batches]
    return torch.stack(losses).mean(), torch.stack(hits).mean()
""",
        ),
    ],
    "ex2_count_saved_bytes": [
        Wrong(
            "counts the result's size, as if gradients were stored",
            "NG-2",
            """
def count_saved_bytes(fn, *args):
    result = fn(*args)
    if getattr(result, "requires_grad", False):
        return result, result.element_size() * result.nelement()
    return result, 0
""",
        ),
        Wrong(
            "counts the inputs that require grad (their future gradients)",
            "NG-2",
            """
def count_saved_bytes(fn, *args):
    result = fn(*args)
    nbytes = 0
    for a in args:
        if isinstance(a, torch.Tensor) and a.requires_grad:
            nbytes += a.element_size() * a.nelement()
    return result, nbytes
""",
        ),
        Wrong(
            "counts whole storages (untyped_storage().nbytes())",
            None,
            """
def count_saved_bytes(fn, *args):
    total = 0

    def pack(saved):
        nonlocal total
        total += saved.untyped_storage().nbytes()
        return saved.detach()

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda saved: saved):
        result = fn(*args)
    return result, total
""",
        ),
        Wrong(
            "the pack hook returns None, so backward breaks",
            None,
            """
def count_saved_bytes(fn, *args):
    total = 0

    def pack(saved):
        nonlocal total
        total += saved.element_size() * saved.nelement()

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda packed: packed):
        result = fn(*args)
    return result, total
""",
        ),
        Wrong(
            "calls fn twice: once for the result, once to count",
            None,
            """
def count_saved_bytes(fn, *args):
    result = fn(*args)
    sizes = []

    def pack(saved):
        sizes.append(saved.element_size() * saved.nelement())
        return saved.detach()

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda saved: saved):
        fn(*args)
    return result, sum(sizes)
""",
        ),
        Wrong(
            "hard-coded 4 bytes per element",
            None,
            """
def count_saved_bytes(fn, *args):
    total = 0

    def pack(saved):
        nonlocal total
        total += 4 * saved.nelement()
        return saved.detach()

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda saved: saved):
        result = fn(*args)
    return result, total
""",
        ),
        Wrong(
            "counts a tensor saved twice only once",
            None,
            """
def count_saved_bytes(fn, *args):
    seen = {}

    def pack(saved):
        seen[saved.data_ptr()] = saved.element_size() * saved.nelement()
        return saved.detach()

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda saved: saved):
        result = fn(*args)
    return result, sum(seen.values())
""",
        ),
        Wrong(
            "offloads saved tensors to the CPU and never brings them back (only shows on a GPU)",
            None,
            """
def count_saved_bytes(fn, *args):
    total = 0

    def pack(saved):
        nonlocal total
        total += saved.element_size() * saved.nelement()
        return saved.detach().cpu()

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda saved: saved):
        result = fn(*args)
    return result, total
""",
            devices=("cuda",),
        ),
        Wrong(
            "turns grad mode on to have something to count",
            None,
            """
def count_saved_bytes(fn, *args):
    total = 0

    def pack(saved):
        nonlocal total
        total += saved.element_size() * saved.nelement()
        return saved.detach()

    with torch.enable_grad(), torch.autograd.graph.saved_tensors_hooks(pack, lambda s: s):
        result = fn(*args)
    return result, total
""",
        ),
    ],
    "ex3_run_step": [
        Wrong(
            "records the eval loss, only skips backward",
            "NG-2",
            """
def run_step(model, inputs, labels, optimizer, train):
    loss = torch.nn.functional.cross_entropy(model(inputs), labels)
    if train:
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()
""",
        ),
        Wrong(
            "forgets zero_grad (stale .grad is added)",
            "RG-4",
            """
def run_step(model, inputs, labels, optimizer, train):
    with torch.set_grad_enabled(train):
        loss = torch.nn.functional.cross_entropy(model(inputs), labels)
        if train:
            loss.backward()
            optimizer.step()
    return loss.item()
""",
        ),
        Wrong(
            "zero_grad after the step instead of before",
            "RG-4",
            """
def run_step(model, inputs, labels, optimizer, train):
    with torch.set_grad_enabled(train):
        loss = torch.nn.functional.cross_entropy(model(inputs), labels)
    if train:
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    return loss.item()
""",
        ),
        Wrong(
            "decides by model.training instead of train",
            None,
            """
def run_step(model, inputs, labels, optimizer, train):
    with torch.set_grad_enabled(model.training):
        loss = torch.nn.functional.cross_entropy(model(inputs), labels)
        if model.training:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return loss.item()
""",
        ),
        Wrong(
            "set_grad_enabled called as a function, never restored",
            None,
            """
def run_step(model, inputs, labels, optimizer, train):
    torch.set_grad_enabled(train)
    loss = torch.nn.functional.cross_entropy(model(inputs), labels)
    if train:
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()
""",
        ),
        Wrong(
            "no_grad for eval, but the caller's no_grad still applies to training",
            None,
            """
def run_step(model, inputs, labels, optimizer, train):
    if not train:
        with torch.no_grad():
            return torch.nn.functional.cross_entropy(model(inputs), labels).item()
    loss = torch.nn.functional.cross_entropy(model(inputs), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
""",
        ),
        Wrong(
            "hard-coded float32 inputs",
            None,
            """
def run_step(model, inputs, labels, optimizer, train):
    with torch.set_grad_enabled(train):
        loss = torch.nn.functional.cross_entropy(model(inputs.float()), labels)
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return loss.item()
""",
        ),
        Wrong(
            "its own optimizer with a fixed learning rate",
            None,
            """
def run_step(model, inputs, labels, optimizer, train):
    sgd = torch.optim.SGD(model.parameters(), lr=0.1)
    with torch.set_grad_enabled(train):
        loss = torch.nn.functional.cross_entropy(model(inputs), labels)
        if train:
            sgd.zero_grad()
            loss.backward()
            sgd.step()
    return loss.item()
""",
        ),
        Wrong(
            "returns the loss tensor",
            None,
            """
def run_step(model, inputs, labels, optimizer, train):
    with torch.set_grad_enabled(train):
        loss = torch.nn.functional.cross_entropy(model(inputs), labels)
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return loss.detach()
""",
        ),
    ],
    "ex4_frozen_features": [
        Wrong(
            "inference_mode features",
            "NG-4",
            """
def frozen_features(backbone, x):
    with torch.inference_mode():
        return backbone(x)
""",
        ),
        Wrong(
            "inference_mode, then .detach()",
            "NG-4",
            """
def frozen_features(backbone, x):
    with torch.inference_mode():
        features = backbone(x)
    return features.detach()
""",
        ),
        Wrong(
            ".detach() instead of no_grad: the graph is recorded first",
            None,
            """
def frozen_features(backbone, x):
    return backbone(x).detach()
""",
        ),
        Wrong(
            "freezes the caller's backbone parameters",
            None,
            """
def frozen_features(backbone, x):
    for p in backbone.parameters():
        p.requires_grad_(False)
    return backbone(x)
""",
        ),
        Wrong(
            "model.eval() alone",
            None,
            """
def frozen_features(backbone, x):
    backbone.eval()
    return backbone(x)
""",
        ),
        Wrong(
            "grad mode switched off and never restored",
            None,
            """
def frozen_features(backbone, x):
    torch.set_grad_enabled(False)
    return backbone(x)
""",
        ),
        Wrong(
            "features moved to the CPU to save GPU memory (only shows on a GPU)",
            None,
            """
def frozen_features(backbone, x):
    with torch.no_grad():
        return backbone(x).cpu()
""",
            devices=("cuda",),
        ),
        Wrong(
            "hard-coded first two layers",
            None,
            """
def frozen_features(backbone, x):
    with torch.no_grad():
        return backbone[1](backbone[0](x))
""",
        ),
    ],
    "ex5_input_saliency": [
        Wrong(
            "enable_grad inside inference_mode",
            "NG-5",
            """
def input_saliency(model, x):
    with torch.enable_grad():
        x = x.clone().requires_grad_()
        (saliency,) = torch.autograd.grad(model(x).sum(), x)
    return saliency
""",
        ),
        Wrong(
            "set_grad_enabled(True) inside inference_mode",
            "NG-5",
            """
def input_saliency(model, x):
    with torch.set_grad_enabled(True):
        leaf = x.detach().clone().requires_grad_(True)
        out = model(leaf).sum()
    return torch.autograd.grad(out, leaf)[0]
""",
        ),
        Wrong(
            "leaves inference mode but makes the inference tensor itself a leaf",
            "NG-4",
            """
def input_saliency(model, x):
    with torch.inference_mode(False), torch.enable_grad():
        x = x.detach().requires_grad_()
        (saliency,) = torch.autograd.grad(model(x).sum(), x)
    return saliency
""",
        ),
        Wrong(
            "requires_grad_ on the caller's x, then x.grad",
            "NG-4",
            """
def input_saliency(model, x):
    with torch.inference_mode(False), torch.enable_grad():
        x.requires_grad_()
        model(x).sum().backward()
    return x.grad
""",
        ),
        Wrong(
            "backward() leaves gradients on the model's parameters",
            None,
            """
def input_saliency(model, x):
    with torch.inference_mode(False), torch.enable_grad():
        leaf = x.clone().requires_grad_()
        model(leaf).sum().backward()
    return leaf.grad
""",
        ),
        Wrong(
            "absolute value of the gradient",
            None,
            """
def input_saliency(model, x):
    with torch.inference_mode(False), torch.enable_grad():
        x = x.clone().requires_grad_()
        (saliency,) = torch.autograd.grad(model(x).sum(), x)
    return saliency.abs()
""",
        ),
        Wrong(
            "saliency returned on the CPU, ready for plotting (only shows on a GPU)",
            None,
            """
def input_saliency(model, x):
    with torch.inference_mode(False), torch.enable_grad():
        leaf = x.clone().requires_grad_()
        (saliency,) = torch.autograd.grad(model(leaf).sum(), leaf)
    return saliency.cpu()
""",
            devices=("cuda",),
        ),
        Wrong(
            "puts the model in eval mode for the saliency",
            None,
            """
def input_saliency(model, x):
    model.eval()
    with torch.inference_mode(False), torch.enable_grad():
        x = x.clone().requires_grad_()
        (saliency,) = torch.autograd.grad(model(x).sum(), x)
    return saliency
""",
        ),
    ],
}

RIGHT: dict[str, list[Right]] = {
    "ex1_evaluate": [
        Right(
            "decorator, loss and hits summed as tensors, .item() at the end",
            """
@torch.no_grad()
def evaluate(model, batches):
    total_loss = 0
    total_accuracy = 0
    for inputs, labels in batches:
        logits = model(inputs)
        total_loss = total_loss + torch.nn.functional.cross_entropy(logits, labels)
        total_accuracy = total_accuracy + (logits.argmax(dim=1) == labels).double().mean()
    return (total_loss / len(batches)).item(), (total_accuracy / len(batches)).item()
""",
        ),
        Right(
            "inference_mode, vectorised with torch.stack",
            """
def evaluate(model, batches):
    with torch.inference_mode():
        losses = torch.stack(
            [torch.nn.functional.cross_entropy(model(x), y) for x, y in batches]
        )
        hits = torch.stack([(model(x).argmax(dim=1) == y).float().mean() for x, y in batches])
    return float(losses.mean()), float(hits.mean())
""",
        ),
        Right(
            "set_grad_enabled(False), eval() and the caller's mode put back",
            """
def evaluate(model, batches):
    was_training = model.training
    model.eval()
    losses, accuracies = [], []
    with torch.set_grad_enabled(False):
        for inputs, labels in batches:
            logits = model(inputs)
            losses.append(torch.nn.functional.cross_entropy(logits, labels).item())
            correct = (logits.argmax(dim=1) == labels).sum().item()
            accuracies.append(correct / len(labels))
    model.train(was_training)
    return sum(losses) / len(losses), sum(accuracies) / len(accuracies)
""",
        ),
    ],
    "ex2_count_saved_bytes": [
        Right(
            "a counter class; Tensor.nbytes; pack returns the tensor itself",
            """
class SavedCounter:
    def __init__(self):
        self.total = 0

    def pack(self, saved):
        self.total += saved.nbytes
        return saved

    def unpack(self, saved):
        return saved


def count_saved_bytes(fn, *args):
    counter = SavedCounter()
    with torch.autograd.graph.saved_tensors_hooks(counter.pack, counter.unpack):
        result = fn(*args)
    return result, counter.total
""",
        ),
        Right(
            "sizes in a list, imported hooks, numel() * element_size()",
            """
from torch.autograd.graph import saved_tensors_hooks


def count_saved_bytes(fn, *args):
    sizes = []

    def pack(saved):
        sizes.append(saved.numel() * saved.element_size())
        return saved.detach()

    with saved_tensors_hooks(pack, lambda saved: saved):
        result = fn(*args)
    return result, int(sum(sizes))
""",
        ),
        Right(
            "pack returns a tuple that unpack opens",
            """
def count_saved_bytes(fn, *args):
    count = {"bytes": 0}

    def pack(saved):
        count["bytes"] += saved.element_size() * saved.nelement()
        return (saved.detach(),)

    def unpack(packed):
        return packed[0]

    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        result = fn(*args)
    return result, count["bytes"]
""",
        ),
    ],
    "ex3_run_step": [
        Right(
            "enable_grad or no_grad chosen by the flag",
            """
def run_step(model, inputs, labels, optimizer, train):
    mode = torch.enable_grad() if train else torch.no_grad()
    with mode:
        loss = torch.nn.functional.cross_entropy(model(inputs), labels)
    if train:
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()
""",
        ),
        Right(
            "model.train(train) as well, zero_grad(set_to_none=False)",
            """
def run_step(model, inputs, labels, optimizer, train):
    model.train(train)
    with torch.set_grad_enabled(train):
        logits = model(inputs)
        loss = torch.nn.functional.cross_entropy(logits, labels)
        if train:
            optimizer.zero_grad(set_to_none=False)
            loss.backward()
            optimizer.step()
    return float(loss.detach())
""",
        ),
        Right(
            "zero_grad first on both paths, the step outside the block",
            """
def run_step(model, inputs, labels, optimizer, train):
    optimizer.zero_grad()
    with torch.set_grad_enabled(train):
        loss = torch.nn.functional.cross_entropy(model(inputs), labels)
    if train:
        loss.backward()
        optimizer.step()
    return loss.detach().item()
""",
        ),
    ],
    "ex4_frozen_features": [
        Right(
            "decorator",
            """
@torch.no_grad()
def frozen_features(backbone, x):
    return backbone(x)
""",
        ),
        Right(
            "set_grad_enabled(False), layer by layer",
            """
def frozen_features(backbone, x):
    with torch.set_grad_enabled(False):
        features = x
        for layer in backbone:
            features = layer(features)
    return features
""",
        ),
        Right(
            "inference_mode, then clone() outside it",
            """
def frozen_features(backbone, x):
    with torch.inference_mode():
        features = backbone(x)
    return features.clone()
""",
        ),
    ],
    "ex5_input_saliency": [
        Right(
            "torch.func.grad",
            """
def input_saliency(model, x):
    return torch.func.grad(lambda inputs: model(inputs).sum())(x)
""",
        ),
        Right(
            "decorators; inference_mode(False) alone turns grad mode on",
            """
@torch.inference_mode(False)
def input_saliency(model, x):
    leaf = x.clone().requires_grad_(True)
    total = model(leaf).sum()
    total.backward(inputs=[leaf])
    return leaf.grad
""",
        ),
        Right(
            "backward on a deep copy of the model",
            """
import copy


def input_saliency(model, x):
    with torch.inference_mode(False), torch.set_grad_enabled(True):
        twin = copy.deepcopy(model)
        leaf = x.clone().requires_grad_()
        twin(leaf).sum().backward()
        return leaf.grad.detach()
""",
        ),
    ],
}
