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
        Wrong(
            "freezes every parameter, then requires_grad back to True (unfreezes a frozen layer)",
            None,
            """
def evaluate(model, batches):
    for p in model.parameters():
        p.requires_grad_(False)
    total_loss, total_accuracy = 0.0, 0.0
    for inputs, labels in batches:
        logits = model(inputs)
        total_loss += torch.nn.functional.cross_entropy(logits, labels).item()
        total_accuracy += (logits.argmax(dim=1) == labels).float().mean().item()
    for p in model.parameters():
        p.requires_grad_(True)
    return total_loss / len(batches), total_accuracy / len(batches)
""",
        ),
        Wrong(
            "model.zero_grad() at the end to leave nothing behind (erases the caller's .grad)",
            None,
            """
@torch.no_grad()
def evaluate(model, batches):
    total_loss, total_accuracy = 0.0, 0.0
    for inputs, labels in batches:
        logits = model(inputs)
        total_loss += torch.nn.functional.cross_entropy(logits, labels).item()
        total_accuracy += (logits.argmax(dim=1) == labels).float().mean().item()
    model.zero_grad()
    return total_loss / len(batches), total_accuracy / len(batches)
""",
        ),
        Wrong(
            "set_grad_enabled(False), then set_grad_enabled(True) (assumes the caller had grad on)",
            None,
            """
def evaluate(model, batches):
    torch.set_grad_enabled(False)
    total_loss, total_accuracy = 0.0, 0.0
    for inputs, labels in batches:
        logits = model(inputs)
        total_loss += torch.nn.functional.cross_entropy(logits, labels).item()
        total_accuracy += (logits.argmax(dim=1) == labels).float().mean().item()
    torch.set_grad_enabled(True)
    return total_loss / len(batches), total_accuracy / len(batches)
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
    if isinstance(result, torch.Tensor) and result.requires_grad:
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
        Wrong(
            "size as len(saved) * saved[0].numel() (breaks on a 0-d tensor)",
            None,
            """
def count_saved_bytes(fn, *args):
    total = 0

    def pack(saved):
        nonlocal total
        total += len(saved) * saved[0].numel() * saved.element_size()
        return saved.detach()

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda saved: saved):
        result = fn(*args)
    return result, total
""",
        ),
        Wrong(
            "counts only saved tensors that require grad",
            None,
            """
def count_saved_bytes(fn, *args):
    total = 0

    def pack(saved):
        nonlocal total
        if saved.requires_grad:
            total += saved.element_size() * saved.nelement()
        return saved.detach()

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda saved: saved):
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
        Wrong(
            "requires_grad off for eval, back on for every parameter (unfreezes a frozen layer)",
            None,
            """
def run_step(model, inputs, labels, optimizer, train):
    for p in model.parameters():
        p.requires_grad_(train)
    with torch.set_grad_enabled(train):
        loss = torch.nn.functional.cross_entropy(model(inputs), labels)
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    for p in model.parameters():
        p.requires_grad_(True)
    return loss.item()
""",
        ),
        Wrong(
            "a new SGD with the optimizer's learning rate (ignores momentum, Adam and its state)",
            None,
            """
def run_step(model, inputs, labels, optimizer, train):
    lr = optimizer.param_groups[0]["lr"]
    sgd = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=lr)
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
            "manual update with a hard-coded learning rate",
            None,
            """
def run_step(model, inputs, labels, optimizer, train):
    with torch.set_grad_enabled(train):
        loss = torch.nn.functional.cross_entropy(model(inputs), labels)
        if train:
            optimizer.zero_grad()
            loss.backward()
            with torch.no_grad():
                for p in model.parameters():
                    if p.grad is not None:
                        p -= 0.1 * p.grad
    return loss.item()
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
        Wrong(
            "backbone.zero_grad() before extracting (erases the caller's .grad)",
            None,
            """
def frozen_features(backbone, x):
    backbone.zero_grad()
    with torch.no_grad():
        return backbone(x)
""",
        ),
        Wrong(
            "freezes the backbone, then sets requires_grad back to True (unfreezes a frozen layer)",
            None,
            """
def frozen_features(backbone, x):
    for p in backbone.parameters():
        p.requires_grad_(False)
    features = backbone(x)
    for p in backbone.parameters():
        p.requires_grad_(True)
    return features
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
            "backward on a deep copy of the model, x.clone() as the leaf: where x requires grad"
            " the clone is not a leaf, so x gets the .grad and the clone none",
            None,
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
        Wrong(
            "backward(), then model.zero_grad() to clean up (erases the caller's .grad)",
            None,
            """
def input_saliency(model, x):
    with torch.inference_mode(False), torch.enable_grad():
        leaf = x.clone().requires_grad_()
        model(leaf).sum().backward()
    model.zero_grad()
    return leaf.grad
""",
        ),
        Wrong(
            "freezes the model for the saliency, then unfreezes every parameter",
            None,
            """
def input_saliency(model, x):
    for p in model.parameters():
        p.requires_grad_(False)
    with torch.inference_mode(False), torch.enable_grad():
        leaf = x.clone().requires_grad_()
        (saliency,) = torch.autograd.grad(model(leaf).sum(), leaf)
    for p in model.parameters():
        p.requires_grad_(True)
    return saliency
""",
        ),
        Wrong(
            "clones x inside the caller's inference mode, then leaves it",
            "NG-4",
            """
def input_saliency(model, x):
    leaf = x.clone()
    with torch.inference_mode(False), torch.enable_grad():
        leaf.requires_grad_()
        (saliency,) = torch.autograd.grad(model(leaf).sum(), leaf)
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
    try:
        with torch.set_grad_enabled(False):
            for inputs, labels in batches:
                logits = model(inputs)
                losses.append(torch.nn.functional.cross_entropy(logits, labels).item())
                correct = (logits.argmax(dim=1) == labels).sum().item()
                accuracies.append(correct / len(labels))
    finally:
        model.train(was_training)
    return sum(losses) / len(losses), sum(accuracies) / len(accuracies)
""",
        ),
        Right(
            "a module-level criterion, inference_mode as a decorator, statistics.fmean",
            """
import statistics

criterion = torch.nn.CrossEntropyLoss()


@torch.inference_mode()
def evaluate(model, batches):
    losses = [criterion(model(x), y).item() for x, y in batches]
    hits = [(model(x).argmax(1) == y).float().mean().item() for x, y in batches]
    return statistics.fmean(losses), statistics.fmean(hits)
""",
        ),
        Right(
            "a class with __call__, a while loop and an index",
            """
class Evaluator:
    def __call__(self, model, batches):
        loss_sum, acc_sum, k = 0.0, 0.0, 0
        with torch.no_grad():
            while k < len(batches):
                inputs, labels = batches[k]
                logits = model(inputs)
                loss_sum += float(torch.nn.functional.cross_entropy(logits, labels))
                acc_sum += float((logits.argmax(-1) == labels).sum()) / labels.numel()
                k += 1
        return loss_sum / k, acc_sum / k


evaluate = Evaluator()
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
        Right(
            "a class with __call__; offloads saved tensors to the CPU and brings them back",
            """
class SavedBytes:
    def __call__(self, fn, *args):
        total = 0

        def pack(saved):
            nonlocal total
            total += saved.element_size() * saved.numel()
            return saved.device, saved.detach().cpu()

        def unpack(packed):
            device, tensor = packed
            return tensor.to(device)

        with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
            result = fn(*args)
        return result, total


count_saved_bytes = SavedBytes()
""",
        ),
        Right(
            "an alias of the hooks, sizes summed by a generator",
            """
from torch.autograd import graph

hooks = graph.saved_tensors_hooks


def count_saved_bytes(fn, *args):
    saved_list = []
    with hooks(lambda t: saved_list.append(t.detach()) or t.detach(), lambda t: t):
        result = fn(*args)
    nbytes = sum(t.element_size() * t.numel() for t in saved_list)
    return result, nbytes
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
        Right(
            "a module-level criterion, two branches: enable_grad to train, no_grad to evaluate",
            """
criterion = torch.nn.CrossEntropyLoss()


def run_step(model, inputs, labels, optimizer, train):
    if train:
        with torch.enable_grad():
            optimizer.zero_grad()
            loss = criterion(model(inputs), labels)
            loss.backward()
            optimizer.step()
        return loss.item()
    with torch.no_grad():
        return criterion(model(inputs), labels).item()
""",
        ),
        Right(
            "a class with __call__, model.zero_grad(), the value read before the step",
            """
class Stepper:
    def __call__(self, model, inputs, labels, optimizer, train):
        with torch.set_grad_enabled(train):
            loss = torch.nn.functional.cross_entropy(model(inputs), labels)
            value = loss.item()
            if train:
                model.zero_grad()
                loss.backward()
                optimizer.step()
        return value


run_step = Stepper()
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
            "set_grad_enabled(False) as a context manager",
            """
def frozen_features(backbone, x):
    with torch.set_grad_enabled(False):
        features = backbone(x)
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
        Right(
            "torch.no_grad() applied to a module-level function",
            """
def run_backbone(backbone, x):
    return backbone(x)


frozen_features = torch.no_grad()(run_backbone)
""",
        ),
        Right(
            "a class with __call__, set_grad_enabled(False) as a context",
            """
class FeatureExtractor:
    def __call__(self, backbone, x):
        with torch.set_grad_enabled(False):
            return backbone(x)


frozen_features = FeatureExtractor()
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
            "backward on a deep copy of the model, a detached copy of x as the leaf",
            """
import copy


def input_saliency(model, x):
    with torch.inference_mode(False), torch.set_grad_enabled(True):
        twin = copy.deepcopy(model)
        leaf = x.detach().clone().requires_grad_()
        twin(leaf).sum().backward()
        return leaf.grad.detach()
""",
        ),
        Right(
            "nested with blocks, detach().clone(), the mode keyword",
            """
def input_saliency(model, x):
    with torch.inference_mode(mode=False):
        with torch.enable_grad():
            leaf = x.detach().clone().requires_grad_(True)
            out = model(leaf)
            grads = torch.autograd.grad(out.sum(), [leaf])
    return grads[0]
""",
        ),
        Right(
            "a class with __call__; set_grad_enabled(True) outside inference mode",
            """
class Saliency:
    def __call__(self, model, x):
        with torch.inference_mode(False), torch.set_grad_enabled(True):
            inputs = x.clone().requires_grad_()
            total = model(inputs).sum()
        return torch.autograd.grad(total, inputs)[0]


input_saliency = Saliency()
""",
        ),
    ],
}
