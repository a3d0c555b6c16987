"""Catalogued wrong answers for lesson 02: one per exercise and misconception ID."""

from catalog import Right, Wrong

WRONG: dict[str, list[Wrong]] = {
    "ex1_evaluate": [
        Wrong(
            "ng-1 catalogue answer",
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
            "ng-3 catalogue answer",
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
    ],
    "ex2_count_saved_bytes": [
        Wrong(
            "ng-2 catalogue answer",
            "NG-2",
            """
def count_saved_bytes(fn, *args):
    result = fn(*args)
    if getattr(result, "requires_grad", False):
        return result, result.element_size() * result.nelement()
    return result, 0
""",
        ),
    ],
    "ex3_run_step": [
        Wrong(
            "ng-2 catalogue answer",
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
    ],
    "ex4_frozen_features": [
        Wrong(
            "ng-4 catalogue answer",
            "NG-4",
            """
def frozen_features(backbone, x):
    with torch.inference_mode():
        return backbone(x)
""",
        ),
    ],
    "ex5_input_saliency": [
        Wrong(
            "ng-5 catalogue answer",
            "NG-5",
            """
def input_saliency(model, x):
    with torch.enable_grad():
        x = x.clone().requires_grad_()
        (saliency,) = torch.autograd.grad(model(x).sum(), x)
    return saliency
""",
        ),
    ],
}

RIGHT: dict[str, list[Right]] = {}
