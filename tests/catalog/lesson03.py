"""Catalogued wrong answers for lesson 03: one per exercise and misconception ID.

Each entry replaces the whole solution cell, as a learner's submission would.
The tests require every one of them to lose the exercise's points and to be
named by its ID in the feedback.
"""

from catalog import Right, Wrong

WRONG: dict[str, list[Wrong]] = {
    "ex1_dropout_by_hand": [
        Wrong(
            "ev-3 catalogue answer",
            "EV-3",
            """
def dropout_by_hand(x, p, u, training):
    if not training:
        return x
    keep = u < p
    return torch.where(keep, x / p, torch.zeros_like(x))
""",
        ),
    ],
    "ex2_eval_grads": [
        Wrong(
            "ev-1 catalogue answer",
            "EV-1",
            """
def eval_grads(model, x, target):
    model.train()
    model.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), target)
    loss.backward()
    model.eval()
    return {name: p.grad.clone() for name, p in model.named_parameters()}
""",
        ),
    ],
    "ex3_validate": [
        Wrong(
            "ev-4 catalogue answer",
            "EV-4",
            """
def validate(model, batches):
    model.eval()
    with torch.no_grad():
        losses = [torch.nn.functional.mse_loss(model(x), y).item() for x, y in batches]
    return sum(losses) / len(losses)
""",
        ),
        Wrong(
            "ev-5 catalogue answer",
            "EV-5",
            """
def validate(model, batches):
    with torch.no_grad():
        losses = [torch.nn.functional.mse_loss(model(x), y).item() for x, y in batches]
    model.eval()
    return sum(losses) / len(losses)
""",
        ),
        Wrong(
            "ev-6 catalogue answer",
            "EV-6",
            """
def validate(model, batches):
    was_training = model.training
    model.eval()
    losses = [torch.nn.functional.mse_loss(model(x), y).item() for x, y in batches]
    model.train(was_training)
    return sum(losses) / len(losses)
""",
        ),
        Wrong(
            "ev-2 catalogue answer",
            "EV-2",
            """
def validate(model, batches):
    with torch.no_grad():
        losses = [torch.nn.functional.mse_loss(model(x), y).item() for x, y in batches]
    return sum(losses) / len(losses)
""",
        ),
    ],
    "ex4_finetune_head": [
        Wrong(
            "ev-2 catalogue answer",
            "EV-2",
            """
def finetune_head(backbone, head, x, target, lr):
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
    ],
    "ex5_mc_dropout_predict": [
        Wrong(
            "ev-2 catalogue answer",
            "EV-2",
            """
def mc_dropout_predict(model, x, samples):
    modes = [m.training for m in model.modules()]
    model.train()
    with torch.no_grad():
        preds = torch.stack([model(x) for _ in range(samples)])
    for m, mode in zip(model.modules(), modes):
        m.train(mode)
    return preds.mean(dim=0), preds.std(dim=0)
""",
        ),
        Wrong(
            "ev-6 catalogue answer",
            "EV-6",
            """
def mc_dropout_predict(model, x, samples):
    modes = [m.training for m in model.modules()]
    model.eval()
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.train()
    preds = torch.stack([model(x) for _ in range(samples)])
    for m, mode in zip(model.modules(), modes):
        m.train(mode)
    return preds.mean(dim=0), preds.std(dim=0)
""",
        ),
    ],
}

RIGHT: dict[str, list[Right]] = {}
