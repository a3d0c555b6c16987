"""Catalogued wrong answers for lesson 03: one per exercise and misconception ID.

Each entry replaces the whole solution cell, as a learner's submission would.
The tests require every one of them to lose the exercise's points and to be
named by its ID in the feedback.
"""

WRONG_ANSWERS: dict[str, dict[str, str]] = {
    "ex1_dropout_by_hand": {
        # EV-3: reads p as the keep probability (keeps where u < p, scales by 1/p).
        "EV-3": """
def dropout_by_hand(x, p, u, training):
    if not training:
        return x
    keep = u < p
    return torch.where(keep, x / p, torch.zeros_like(x))
""",
    },
    "ex2_eval_grads": {
        # EV-1: believes eval() switches gradients off, so goes back to train() for backward.
        "EV-1": """
def eval_grads(model, x, target):
    model.train()
    model.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), target)
    loss.backward()
    model.eval()
    return {name: p.grad.clone() for name, p in model.named_parameters()}
""",
    },
    "ex3_validate": {
        # EV-4: switches to eval() and never goes back to the previous mode.
        "EV-4": """
def validate(model, batches):
    model.eval()
    with torch.no_grad():
        losses = [torch.nn.functional.mse_loss(model(x), y).item() for x, y in batches]
    return sum(losses) / len(losses)
""",
        # EV-5: calls eval() after the loop: the loop ran with Dropout on and BatchNorm updating.
        "EV-5": """
def validate(model, batches):
    with torch.no_grad():
        losses = [torch.nn.functional.mse_loss(model(x), y).item() for x, y in batches]
    model.eval()
    return sum(losses) / len(losses)
""",
        # EV-6: eval() without no_grad: right values, but every batch records a graph.
        "EV-6": """
def validate(model, batches):
    was_training = model.training
    model.eval()
    losses = [torch.nn.functional.mse_loss(model(x), y).item() for x, y in batches]
    model.train(was_training)
    return sum(losses) / len(losses)
""",
        # EV-2: no_grad only, trusting it to switch Dropout and BatchNorm to inference.
        "EV-2": """
def validate(model, batches):
    with torch.no_grad():
        losses = [torch.nn.functional.mse_loss(model(x), y).item() for x, y in batches]
    return sum(losses) / len(losses)
""",
    },
    "ex4_finetune_head": {
        # EV-2: "freezes" the backbone with no_grad alone; its BatchNorm stays in training mode.
        "EV-2": """
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
    },
    "ex5_mc_dropout_predict": {
        # EV-2: train() to turn Dropout on, trusting no_grad to keep BatchNorm in inference.
        "EV-2": """
def mc_dropout_predict(model, x, samples):
    modes = [m.training for m in model.modules()]
    model.train()
    with torch.no_grad():
        preds = torch.stack([model(x) for _ in range(samples)])
    for m, mode in zip(model.modules(), modes):
        m.train(mode)
    return preds.mean(dim=0), preds.std(dim=0)
""",
        # EV-6: the right modes, but no no_grad: every sample records a graph.
        "EV-6": """
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
    },
}
