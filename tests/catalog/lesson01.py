"""Catalogued answers for lesson 01 (see catalog/__init__.py)."""

from catalog import Right, Wrong

WRONG: dict[str, list[Wrong]] = {
    "ex1_product_grads": [
        Wrong(
            "rg-1 catalogue answer",
            "RG-1",
            """
def product_grads(a, b):
    a = a.detach().clone().requires_grad_()
    b = b.detach().clone().requires_grad_()
    c = a * b
    y = (c**2).sum()
    y.backward()
    return a.grad, b.grad, c.grad
""",
        ),
    ],
    "ex2_output_requires_grad": [
        Wrong(
            "rg-2 catalogue answer",
            "RG-2",
            """
def output_requires_grad(*inputs):
    return inputs[0].requires_grad
""",
        ),
    ],
    "ex3_make_trainable": [
        Wrong(
            "rg-3 catalogue answer",
            "RG-3",
            """
def make_trainable(values, device):
    return torch.tensor(values, device=device, requires_grad=True)
""",
        ),
    ],
    "ex4_per_batch_grads": [
        Wrong(
            "rg-4 catalogue answer",
            "RG-4",
            """
def per_batch_grads(w, batches):
    grads = []
    for x in batches:
        loss = ((x @ w) ** 2).mean()
        loss.backward()
        grads.append(w.grad.clone())
    return grads
""",
        ),
    ],
    "ex5_backward_seed": [
        Wrong(
            "rg-5 catalogue answer",
            "RG-5",
            """
def backward_seed(loss):
    return torch.FloatTensor([1.0])
""",
        ),
    ],
    "ex6_finetune_last_layer": [
        Wrong(
            "rg-6 catalogue answer",
            "RG-6",
            """
def finetune_last_layer(model, x, target, lr):
    x.requires_grad_(False)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
        ),
    ],
    "ex7_to_device": [
        Wrong(
            "rg-7 catalogue answer",
            "RG-7",
            """
def to_device(batch, model, device, dtype):
    batch.to(device=device, dtype=dtype)
    model.to(device=device, dtype=dtype)
    return batch, model
""",
        ),
    ],
}

RIGHT: dict[str, list[Right]] = {}
