"""Catalogued wrong answers for lesson 01: one per exercise and misconception ID.

Each entry replaces the whole solution cell, as a learner's submission would.
The tests require every one of them to lose the exercise's points and to be
named by its ID in the feedback.
"""

WRONG_ANSWERS: dict[str, dict[str, str]] = {
    "ex1_product_grads": {
        # RG-1: expects c.grad to be filled in without retain_grad().
        "RG-1": """
def product_grads(a, b):
    a = a.detach().clone().requires_grad_()
    b = b.detach().clone().requires_grad_()
    c = a * b
    y = (c**2).sum()
    y.backward()
    return a.grad, b.grad, c.grad
""",
    },
    "ex2_output_requires_grad": {
        # RG-2: only the data input (the first one) is thought to matter.
        "RG-2": """
def output_requires_grad(*inputs):
    return inputs[0].requires_grad
""",
    },
    "ex3_make_trainable": {
        # RG-3: asks an integer tensor to require grad.
        "RG-3": """
def make_trainable(values, device):
    return torch.tensor(values, device=device, requires_grad=True)
""",
    },
    "ex4_per_batch_grads": {
        # RG-4: never resets .grad, so the stored gradients are running sums.
        "RG-4": """
def per_batch_grads(w, batches):
    grads = []
    for x in batches:
        loss = ((x @ w) ** 2).mean()
        loss.backward()
        grads.append(w.grad.clone())
    return grads
""",
    },
    "ex5_backward_seed": {
        # RG-5: the one-element FloatTensor of old tutorials.
        "RG-5": """
def backward_seed(loss):
    return torch.FloatTensor([1.0])
""",
    },
    "ex6_finetune_last_layer": {
        # RG-6: "freezes" the input batch instead of the parameters.
        "RG-6": """
def finetune_last_layer(model, x, target, lr):
    x.requires_grad_(False)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
    },
    "ex7_to_device": {
        # RG-7: calls .to() on the tensor and drops the result.
        "RG-7": """
def to_device(batch, model, device, dtype):
    batch.to(device=device, dtype=dtype)
    model.to(device=device, dtype=dtype)
    return batch, model
""",
    },
}
