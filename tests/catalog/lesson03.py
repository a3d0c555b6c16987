"""Catalogued answers for lesson 03 (see catalog/__init__.py).

Wrong answers are written the way learners write them; each names the
misconception its feedback must show, or None where no misconception explains
it. Correct alternatives use other styles than the official solutions.
"""

from catalog import Right, Wrong

WRONG: dict[str, list[Wrong]] = {
    "ex1_dropout_by_hand": [
        Wrong(
            "evaluation mode returns x.clone().detach(): the graph to x is cut",
            None,
            """
def dropout_by_hand(x, p, u, training):
    if training:
        return torch.where(u < p, torch.zeros_like(x), x / (1 - p))
    return x.clone().detach()
""",
        ),
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
        Wrong(
            "scales the survivors by 1/p",
            "EV-3",
            """
def dropout_by_hand(x, p, u, training):
    if not training:
        return x
    return x * (u >= p) / p
""",
        ),
        Wrong(
            "keeps where u < p, with the right scale",
            "EV-3",
            """
def dropout_by_hand(x, p, u, training):
    if not training:
        return x
    return torch.where(u < p, x / (1 - p), torch.zeros_like(x))
""",
        ),
        Wrong(
            "no rescaling of the survivors",
            None,
            """
def dropout_by_hand(x, p, u, training):
    if not training:
        return x
    return x * (u >= p)
""",
        ),
        Wrong(
            "zeroes the caller's x in place",
            None,
            """
def dropout_by_hand(x, p, u, training):
    if not training:
        return x
    x[u < p] = 0
    return x / (1 - p)
""",
        ),
        Wrong(
            "scales by 1-p in evaluation mode",
            None,
            """
def dropout_by_hand(x, p, u, training):
    if not training:
        return x * (1 - p)
    return torch.where(u < p, torch.zeros_like(x), x / (1 - p))
""",
        ),
        Wrong(
            "draws its own random numbers instead of u",
            None,
            """
def dropout_by_hand(x, p, u, training):
    if not training:
        return x
    keep = torch.rand_like(x) >= p
    return x * keep / (1 - p)
""",
        ),
        Wrong(
            "hard-codes the example's shape",
            None,
            """
def dropout_by_hand(x, p, u, training):
    if not training:
        return x
    out = torch.zeros(40, 50, dtype=x.dtype, device=x.device)
    keep = u >= p
    out[keep] = x[keep] / (1 - p)
    return out
""",
        ),
        Wrong(
            "computes in float32 whatever x's dtype",
            None,
            """
def dropout_by_hand(x, p, u, training):
    if not training:
        return x
    mask = (u >= p).float()
    return x.float() * mask / (1 - p)
""",
        ),
        Wrong(
            "drops where u <= p: ties dropped",
            None,
            """
def dropout_by_hand(x, p, u, training):
    if not training:
        return x
    return torch.where(u <= p, torch.zeros_like(x), x / (1 - p))
""",
        ),
        Wrong(
            "hard-codes p = 0.2",
            None,
            """
def dropout_by_hand(x, p, u, training):
    if not training:
        return x
    return torch.where(u < 0.2, torch.zeros_like(x), x / 0.8)
""",
        ),
        Wrong(
            "flattens with view(-1), which needs a contiguous x",
            None,
            """
def dropout_by_hand(x, p, u, training):
    if not training:
        return x
    flat = x.view(-1)
    keep = u.reshape(-1) >= p
    return (flat * keep / (1 - p)).view(x.shape)
""",
        ),
        Wrong(
            "divides the caller's x in place",
            None,
            """
def dropout_by_hand(x, p, u, training):
    if not training:
        return x
    x /= 1 - p
    return x * (u >= p)
""",
        ),
        Wrong(
            "squeezes the result, so a single row loses its dimension",
            None,
            """
def dropout_by_hand(x, p, u, training):
    if not training:
        return x
    keep = (u >= p).to(x.dtype)
    return (x * keep / (1 - p)).squeeze()
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
        Wrong(
            "switches to training mode to get gradients, then restores",
            "EV-1",
            """
def eval_grads(model, x, target):
    was_training = model.training
    model.train()  # evaluation mode gives no gradients
    model.zero_grad()
    torch.nn.functional.mse_loss(model(x), target).backward()
    model.train(was_training)
    return {name: p.grad.clone() for name, p in model.named_parameters()}
""",
        ),
        Wrong(
            "forgets zero_grad while .grad holds an earlier step",
            None,
            """
def eval_grads(model, x, target):
    was_training = model.training
    model.eval()
    torch.nn.functional.mse_loss(model(x), target).backward()
    model.train(was_training)
    return {name: p.grad.clone() for name, p in model.named_parameters()}
""",
        ),
        Wrong(
            "computes in whatever mode the model arrives in",
            None,
            """
def eval_grads(model, x, target):
    model.zero_grad()
    torch.nn.functional.mse_loss(model(x), target).backward()
    return {name: p.grad.clone() for name, p in model.named_parameters()}
""",
        ),
        Wrong(
            "leaves the model in evaluation mode",
            None,
            """
def eval_grads(model, x, target):
    model.eval()
    model.zero_grad()
    torch.nn.functional.mse_loss(model(x), target).backward()
    return {name: p.grad.clone() for name, p in model.named_parameters()}
""",
        ),
        Wrong(
            "sets model.training = False on the top module only",
            None,
            """
def eval_grads(model, x, target):
    was_training = model.training
    model.training = False
    model.zero_grad()
    torch.nn.functional.mse_loss(model(x), target).backward()
    model.training = was_training
    return {name: p.grad.clone() for name, p in model.named_parameters()}
""",
        ),
        Wrong(
            "copy.copy shares the submodules with the caller's model",
            None,
            """
import copy


def eval_grads(model, x, target):
    evaluated = copy.copy(model)
    evaluated.eval()
    evaluated.zero_grad()
    torch.nn.functional.mse_loss(evaluated(x), target).backward()
    return {name: p.grad.clone() for name, p in evaluated.named_parameters()}
""",
        ),
        Wrong(
            "switches only the Dropout layers to evaluation mode",
            None,
            """
def eval_grads(model, x, target):
    drops = [m for m in model.modules() if isinstance(m, torch.nn.Dropout)]
    modes = [m.training for m in drops]
    for m in drops:
        m.eval()
    model.zero_grad()
    torch.nn.functional.mse_loss(model(x), target).backward()
    for m, mode in zip(drops, modes):
        m.train(mode)
    return {name: p.grad.clone() for name, p in model.named_parameters()}
""",
        ),
        Wrong(
            "sums the squared errors instead of taking their mean",
            None,
            """
def eval_grads(model, x, target):
    was_training = model.training
    model.eval()
    model.zero_grad()
    torch.nn.functional.mse_loss(model(x), target, reduction="sum").backward()
    model.train(was_training)
    return {name: p.grad.clone() for name, p in model.named_parameters()}
""",
        ),
        Wrong(
            "restores with model.train(model.training) after eval()",
            None,
            """
def eval_grads(model, x, target):
    model.eval()
    model.zero_grad()
    torch.nn.functional.mse_loss(model(x), target).backward()
    grads = {name: p.grad.clone() for name, p in model.named_parameters()}
    model.train(model.training)
    return grads
""",
        ),
        Wrong(
            "sets requires_grad on the caller's x",
            None,
            """
def eval_grads(model, x, target):
    was = model.training
    model.eval()
    x.requires_grad_(True)
    model.zero_grad()
    torch.nn.functional.mse_loss(model(x), target).backward()
    model.train(was)
    return {n: p.grad.clone() for n, p in model.named_parameters()}
""",
        ),
    ],
    "ex3_validate": [
        Wrong(
            "the mode put back after the loop, not in finally: a batch that raises leaves a "
            "training model in evaluation mode",
            "EV-4",
            """
def validate(model, batches):
    was_training = model.training
    model.train(False)
    total = 0.0
    with torch.set_grad_enabled(False):
        for x, y in batches:
            total += torch.nn.functional.mse_loss(model(x), y).item()
    model.train(was_training)
    return total / len(batches)
""",
        ),
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
        Wrong(
            "always calls model.train() afterwards",
            None,
            """
def validate(model, batches):
    model.eval()
    try:
        with torch.no_grad():
            losses = [torch.nn.functional.mse_loss(model(x), y).item() for x, y in batches]
    finally:
        model.train()
    return sum(losses) / len(losses)
""",
        ),
        Wrong(
            "sets model.training = False on the top module only",
            None,
            """
def validate(model, batches):
    was_training = model.training
    model.training = False
    with torch.no_grad():
        losses = [torch.nn.functional.mse_loss(model(x), y).item() for x, y in batches]
    model.training = was_training
    return sum(losses) / len(losses)
""",
        ),
        Wrong(
            "weights the batches by their sizes",
            None,
            """
def validate(model, batches):
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            xs = torch.cat([x for x, _ in batches])
            ys = torch.cat([y for _, y in batches])
            loss = torch.nn.functional.mse_loss(model(xs), ys).item()
    finally:
        model.train(was_training)
    return loss
""",
        ),
        Wrong(
            "returns a tensor, not a float",
            None,
            """
def validate(model, batches):
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            losses = [torch.nn.functional.mse_loss(model(x), y) for x, y in batches]
    finally:
        model.train(was_training)
    return torch.stack(losses).mean()
""",
        ),
        Wrong(
            "copy.copy, whose eval() reaches the caller's layers",
            None,
            """
import copy


def validate(model, batches):
    evaluated = copy.copy(model)
    evaluated.eval()
    with torch.no_grad():
        losses = [torch.nn.functional.mse_loss(evaluated(x), y).item() for x, y in batches]
    return sum(losses) / len(losses)
""",
        ),
        Wrong(
            "freezes the parameters, then sets requires_grad back to True",
            None,
            """
def validate(model, batches):
    was_training = model.training
    model.eval()
    model.requires_grad_(False)
    try:
        losses = [torch.nn.functional.mse_loss(model(x), y).item() for x, y in batches]
    finally:
        model.requires_grad_(True)
        model.train(was_training)
    return sum(losses) / len(losses)
""",
        ),
        Wrong(
            "clears the caller's gradients with zero_grad",
            None,
            """
def validate(model, batches):
    was_training = model.training
    model.eval()
    model.zero_grad()
    try:
        with torch.no_grad():
            losses = [torch.nn.functional.mse_loss(model(x), y).item() for x, y in batches]
    finally:
        model.train(was_training)
    return sum(losses) / len(losses)
""",
        ),
    ],
    "ex4_finetune_head": [
        Wrong(
            "the same call again (the very same objects) returns the first loss, untrained",
            None,
            """
_done = []


def finetune_head(backbone, head, x, target, lr):
    called = (backbone, head, x, target, lr)
    for seen, loss in _done:
        if all(a is b for a, b in zip(seen, called)):
            return loss
    backbone.eval()
    head.train()
    with torch.no_grad():
        features = backbone(x)
    optimizer = torch.optim.SGD(head.parameters(), lr=lr)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(head(features), target)
    loss.backward()
    optimizer.step()
    _done.append((called, loss.item()))
    return loss.item()
""",
        ),
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
        Wrong(
            "never puts the head back in training mode",
            None,
            """
def finetune_head(backbone, head, x, target, lr):
    backbone.eval()
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
        Wrong(
            "forgets zero_grad while .grad holds an earlier step",
            None,
            """
def finetune_head(backbone, head, x, target, lr):
    backbone.eval()
    head.train()
    with torch.no_grad():
        features = backbone(x)
    optimizer = torch.optim.SGD(head.parameters(), lr=lr)
    loss = torch.nn.functional.mse_loss(head(features), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
        ),
        Wrong(
            "freezes the backbone with requires_grad_(False) instead of eval()",
            None,
            """
def finetune_head(backbone, head, x, target, lr):
    backbone.requires_grad_(False)
    head.train()
    optimizer = torch.optim.SGD(head.parameters(), lr=lr)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(head(backbone(x)), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
        ),
        Wrong(
            "trains a deep copy of the head",
            None,
            """
import copy


def finetune_head(backbone, head, x, target, lr):
    backbone.eval()
    head = copy.deepcopy(head).train()
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
        Wrong(
            "returns the loss after the step",
            None,
            """
def finetune_head(backbone, head, x, target, lr):
    backbone.eval()
    head.train()
    with torch.no_grad():
        features = backbone(x)
    optimizer = torch.optim.SGD(head.parameters(), lr=lr)
    optimizer.zero_grad()
    torch.nn.functional.mse_loss(head(features), target).backward()
    optimizer.step()
    with torch.no_grad():
        return torch.nn.functional.mse_loss(head(features), target).item()
""",
        ),
        Wrong(
            "uses Adam instead of one SGD step",
            None,
            """
def finetune_head(backbone, head, x, target, lr):
    backbone.eval()
    head.train()
    with torch.no_grad():
        features = backbone(x)
    optimizer = torch.optim.Adam(head.parameters(), lr=lr)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(head(features), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
        ),
        Wrong(
            "hard-codes the learning rate 0.1",
            None,
            """
def finetune_head(backbone, head, x, target, lr):
    backbone.eval()
    head.train()
    with torch.no_grad():
        features = backbone(x)
    optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(head(features), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
        ),
        Wrong(
            "freezes the backbone with requires_grad_(False) and leaves it frozen",
            None,
            """
def finetune_head(backbone, head, x, target, lr):
    backbone.eval()
    backbone.requires_grad_(False)
    head.train()
    optimizer = torch.optim.SGD(head.parameters(), lr=lr)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(head(backbone(x)), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
        ),
        Wrong(
            "freezes the backbone, then sets requires_grad back to True",
            None,
            """
def finetune_head(backbone, head, x, target, lr):
    backbone.eval()
    backbone.requires_grad_(False)
    head.train()
    optimizer = torch.optim.SGD(head.parameters(), lr=lr)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(head(backbone(x)), target)
    loss.backward()
    optimizer.step()
    backbone.requires_grad_(True)
    return loss.item()
""",
        ),
        Wrong(
            "zeroes each .grad in place, which fails where .grad is None",
            None,
            """
def finetune_head(backbone, head, x, target, lr):
    backbone.eval()
    head.train()
    with torch.no_grad():
        features = backbone(x)
    for p in head.parameters():
        p.grad.zero_()
    loss = torch.nn.functional.mse_loss(head(features), target)
    loss.backward()
    with torch.no_grad():
        for p in head.parameters():
            p -= lr * p.grad
    return loss.item()
""",
        ),
        Wrong(
            "SGD with weight decay",
            None,
            """
def finetune_head(backbone, head, x, target, lr):
    backbone.eval()
    head.train()
    with torch.no_grad():
        features = backbone(x)
    optimizer = torch.optim.SGD(head.parameters(), lr=lr, weight_decay=0.01)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(head(features), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
        ),
        Wrong(
            "the backbone's parameters in the optimizer too, features with history",
            None,
            """
def finetune_head(backbone, head, x, target, lr):
    backbone.eval()
    head.train()
    features = backbone(x)
    opt = torch.optim.SGD(list(backbone.parameters()) + list(head.parameters()), lr=lr)
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(head(features), target)
    loss.backward()
    opt.step()
    return loss.item()
""",
        ),
    ],
    "ex5_mc_dropout_predict": [
        Wrong(
            "seeds the global RNG with the number of samples, so the caller's stream restarts",
            None,
            """
def mc_dropout_predict(model, x, samples):
    modes = [m.training for m in model.modules()]
    model.eval()
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.train()
    torch.manual_seed(samples)
    with torch.no_grad():
        preds = torch.stack([model(x) for _ in range(samples)])
    for m, mode in zip(model.modules(), modes):
        m.train(mode)
    return preds.mean(dim=0), preds.std(dim=0)
""",
        ),
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
        Wrong(
            "restores only the top module's mode",
            None,
            """
def mc_dropout_predict(model, x, samples):
    was_training = model.training
    model.eval()
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.train()
    with torch.no_grad():
        preds = torch.stack([model(x) for _ in range(samples)])
    model.train(was_training)
    return preds.mean(dim=0), preds.std(dim=0)
""",
        ),
        Wrong(
            "switches only the Dropout layers directly inside the model",
            None,
            """
def mc_dropout_predict(model, x, samples):
    modes = [m.training for m in model.modules()]
    model.eval()
    for layer in model:
        if isinstance(layer, torch.nn.Dropout):
            layer.train()
    with torch.no_grad():
        preds = torch.stack([model(x) for _ in range(samples)])
    for m, mode in zip(model.modules(), modes):
        m.train(mode)
    return preds.mean(dim=0), preds.std(dim=0)
""",
        ),
        Wrong(
            "hard-codes the Dropout's index in the lesson's model",
            None,
            """
def mc_dropout_predict(model, x, samples):
    modes = [m.training for m in model.modules()]
    model.eval()
    model[3].train()
    with torch.no_grad():
        preds = torch.stack([model(x) for _ in range(samples)])
    for m, mode in zip(model.modules(), modes):
        m.train(mode)
    return preds.mean(dim=0), preds.std(dim=0)
""",
        ),
        Wrong(
            "never restores the modes",
            None,
            """
def mc_dropout_predict(model, x, samples):
    model.eval()
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.train()
    with torch.no_grad():
        preds = torch.stack([model(x) for _ in range(samples)])
    return preds.mean(dim=0), preds.std(dim=0)
""",
        ),
        Wrong(
            "population standard deviation",
            None,
            """
def mc_dropout_predict(model, x, samples):
    modes = [m.training for m in model.modules()]
    model.eval()
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.train()
    with torch.no_grad():
        preds = torch.stack([model(x) for _ in range(samples)])
    for m, mode in zip(model.modules(), modes):
        m.train(mode)
    return preds.mean(dim=0), preds.std(dim=0, unbiased=False)
""",
        ),
        Wrong(
            "hard-codes 20 samples",
            None,
            """
def mc_dropout_predict(model, x, samples):
    modes = [m.training for m in model.modules()]
    model.eval()
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.train()
    with torch.no_grad():
        preds = torch.stack([model(x) for _ in range(20)])
    for m, mode in zip(model.modules(), modes):
        m.train(mode)
    return preds.mean(dim=0), preds.std(dim=0)
""",
        ),
        Wrong(
            "detaches each output instead of no_grad",
            "EV-6",
            """
def mc_dropout_predict(model, x, samples):
    modes = [m.training for m in model.modules()]
    model.eval()
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.train()
    preds = torch.stack([model(x).detach() for _ in range(samples)])
    for m, mode in zip(model.modules(), modes):
        m.train(mode)
    return preds.mean(dim=0), preds.std(dim=0)
""",
        ),
        Wrong(
            "puts the whole model in evaluation mode at the end",
            None,
            """
def mc_dropout_predict(model, x, samples):
    model.eval()
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.train()
    try:
        with torch.no_grad():
            preds = torch.stack([model(x) for _ in range(samples)])
    finally:
        model.eval()
    return preds.mean(dim=0), preds.std(dim=0)
""",
        ),
    ],
    "ex6_finetune_mode": [
        Wrong(
            "freezes BatchNorm but forgets model.train(): after validation Dropout stays off",
            "EV-4",
            """
def finetune_mode(model):
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm1d):
            m.eval()
""",
        ),
        Wrong(
            "model.eval() for the whole model: statistics frozen, but Dropout off too",
            "EV-4",
            """
def finetune_mode(model):
    model.eval()
""",
        ),
        Wrong(
            "freezes BatchNorm's weights instead of its statistics",
            "EV-2",
            """
def finetune_mode(model):
    model.train()
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm1d):
            m.requires_grad_(False)
""",
        ),
        Wrong(
            "switches autograd off, believing it stops the running statistics",
            "EV-2",
            """
def finetune_mode(model):
    model.train()
    torch.set_grad_enabled(False)
""",
        ),
        Wrong(
            "BatchNorm switched to eval before model.train(), which switches it back",
            None,
            """
def finetune_mode(model):
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm1d):
            m.eval()
    model.train()
""",
        ),
        Wrong(
            "looks only at the direct children: BatchNorm in a nested block stays in training",
            None,
            """
def finetune_mode(model):
    model.train()
    for m in model.children():
        if isinstance(m, torch.nn.BatchNorm1d):
            m.eval()
""",
        ),
        Wrong(
            "freezes BatchNorm's statistics and its affine weight and bias too",
            None,
            """
def finetune_mode(model):
    model.train()
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm1d):
            m.eval()
            m.weight.requires_grad = False
            m.bias.requires_grad = False
""",
        ),
        Wrong(
            "momentum 0 instead of evaluation mode: statistics kept, but batch statistics used",
            None,
            """
def finetune_mode(model):
    model.train()
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm1d):
            m.momentum = 0.0
""",
        ),
        Wrong(
            "does the work once per model (a list of the models done), not after each validation",
            "EV-4",
            """
prepared = []


def finetune_mode(model):
    if any(m is model for m in prepared):
        return
    model.train()
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm1d):
            m.eval()
    prepared.append(model)
""",
        ),
        Wrong(
            "resets the running statistics as it freezes them",
            None,
            """
def finetune_mode(model):
    model.train()
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm1d):
            m.reset_running_stats()
            m.eval()
""",
        ),
        Wrong(
            "clears every .grad while it is at it",
            None,
            """
def finetune_mode(model):
    model.zero_grad()
    model.train()
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm1d):
            m.eval()
""",
        ),
    ],
}

RIGHT: dict[str, list[Right]] = {
    "ex1_dropout_by_hand": [
        Right(
            "x[...] in evaluation mode: a view of x, its graph kept",
            """
def dropout_by_hand(x, p, u, training):
    if not training:
        return x[...]
    return x * (u >= p) / (1 - p)
""",
        ),
        Right(
            "multiplies by a mask cast to x's dtype",
            """
def dropout_by_hand(x, p, u, training):
    if not training:
        return x
    mask = (u >= p).to(x.dtype)
    return x * mask / (1 - p)
""",
        ),
        Right(
            "masked_fill, and a copy in evaluation mode",
            """
def dropout_by_hand(x, p, u, training):
    if training:
        return x.masked_fill(u < p, 0.0) / (1 - p)
    return x.clone()
""",
        ),
        Right(
            "torch.where with a Python scalar and a precomputed scale",
            """
def dropout_by_hand(x, p, u, training):
    scale = 1.0 / (1.0 - p)
    return torch.where(u < p, 0.0, x * scale) if training else x
""",
        ),
        Right(
            "in place on a copy",
            """
def dropout_by_hand(x, p, u, training):
    out = x.clone()
    if training:
        out[u < p] = 0
        out /= 1 - p
    return out
""",
        ),
        Right(
            "a class with __call__, its instance bound to the name",
            """
class HandDropout:
    def __call__(self, x, p, u, training):
        if not training:
            return x
        return x * (u >= p).to(x.dtype) / (1 - p)


dropout_by_hand = HandDropout()
""",
        ),
        Right(
            "an alias of a helper, a precomputed scale",
            """
def inverted_dropout(x, p, u, training):
    keep = (u >= p).to(x.dtype)
    return x * keep * (1.0 / (1.0 - p)) if training else x


dropout_by_hand = inverted_dropout
""",
        ),
        Right(
            "a float32 mask from .float(), kept in x's dtype by type promotion",
            """
def dropout_by_hand(x, p, u, training):
    if not training:
        return x
    mask = (u >= p).float()
    return mask * x / (1 - p)
""",
        ),
        Right(
            "compares in float64 and writes into zeros_like",
            """
def dropout_by_hand(x, p, u, training):
    if not training:
        return x
    out = torch.zeros_like(x)
    keep = u.double() >= p
    out[keep] = x[keep] / (1 - p)
    return out
""",
        ),
    ],
    "ex2_eval_grads": [
        Right(
            "works on a deep copy of the model",
            """
import copy


def eval_grads(model, x, target):
    evaluated = copy.deepcopy(model).eval()
    evaluated.zero_grad()
    torch.nn.functional.mse_loss(evaluated(x), target).backward()
    return {name: p.grad for name, p in evaluated.named_parameters()}
""",
        ),
        Right(
            "torch.autograd.grad, each submodule's mode restored",
            """
def eval_grads(model, x, target):
    modes = [m.training for m in model.modules()]
    model.eval()
    try:
        names, params = zip(*model.named_parameters())
        loss = torch.nn.functional.mse_loss(model(x), target)
        grads = torch.autograd.grad(loss, params)
    finally:
        for m, mode in zip(model.modules(), modes):
            m.train(mode)
    return dict(zip(names, grads))
""",
        ),
        Right(
            "torch.func.grad of a functional_call",
            """
from torch.func import functional_call, grad


def eval_grads(model, x, target):
    was_training = model.training
    model.eval()
    params = {name: p.detach() for name, p in model.named_parameters()}

    def loss(params):
        return torch.nn.functional.mse_loss(functional_call(model, params, (x,)), target)

    try:
        grads = grad(loss)(params)
    finally:
        model.train(was_training)
    return grads
""",
        ),
        Right(
            "set_grad_enabled(True) and .grad set to None first",
            """
def eval_grads(model, x, target):
    was_training = model.training
    model.eval()
    for p in model.parameters():
        p.grad = None
    try:
        with torch.set_grad_enabled(True):
            torch.nn.functional.mse_loss(model(x), target).backward()
    finally:
        model.train(was_training)
    grads = {name: p.grad.detach().clone() for name, p in model.named_parameters()}
    return grads
""",
        ),
        Right(
            "a module-level MSELoss, try/finally restoring each submodule",
            """
criterion = torch.nn.MSELoss()


def eval_grads(model, x, target):
    modes = {m: m.training for m in model.modules()}
    model.eval()
    try:
        model.zero_grad(set_to_none=True)
        criterion(model(x), target).backward()
        return {name: p.grad.detach().clone() for name, p in model.named_parameters()}
    finally:
        for m, mode in modes.items():
            m.train(mode)
""",
        ),
        Right(
            "enable_grad, autograd.grad, a dict filled in a loop",
            """
def eval_grads(model, x, target):
    was_training = model.training
    model.train(False)
    try:
        with torch.enable_grad():
            loss = torch.nn.functional.mse_loss(model(x), target)
            grads = torch.autograd.grad(loss, [p for _, p in model.named_parameters()])
    finally:
        model.train(was_training)
    result = {}
    for (name, _), g in zip(model.named_parameters(), grads):
        result[name] = g
    return result
""",
        ),
    ],
    "ex3_validate": [
        Right(
            "works on a deep copy of the model",
            """
import copy


def validate(model, batches):
    evaluated = copy.deepcopy(model).eval()
    with torch.no_grad():
        losses = [torch.nn.functional.mse_loss(evaluated(x), y).item() for x, y in batches]
    return sum(losses) / len(losses)
""",
        ),
        Right(
            "inference_mode as a decorator, each submodule's mode restored",
            """
@torch.inference_mode()
def batch_losses(model, batches):
    return [torch.nn.functional.mse_loss(model(x), y) for x, y in batches]


def validate(model, batches):
    modes = {m: m.training for m in model.modules()}
    model.eval()
    try:
        losses = batch_losses(model, batches)
    finally:
        for m, mode in modes.items():
            m.train(mode)
    return torch.stack(losses).mean().item()
""",
        ),
        Right(
            "set_grad_enabled(False), a running total, the mode put back in finally",
            """
def validate(model, batches):
    was_training = model.training
    model.train(False)
    total = 0.0
    try:
        with torch.set_grad_enabled(False):
            for x, y in batches:
                total += torch.nn.functional.mse_loss(model(x), y).item()
    finally:
        model.train(was_training)
    return total / len(batches)
""",
        ),
        Right(
            "no_grad as a decorator of validate itself",
            """
@torch.no_grad()
def validate(model, batches):
    was_training = model.training
    model.eval()
    try:
        losses = torch.tensor(
            [torch.nn.functional.mse_loss(model(x), y).item() for x, y in batches]
        )
    finally:
        model.train(was_training)
    return float(losses.mean())
""",
        ),
        Right(
            "an MSELoss module applied after the no_grad block",
            """
def validate(model, batches):
    criterion = torch.nn.MSELoss()
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            outputs = [model(x) for x, _ in batches]
    finally:
        model.train(was_training)
    losses = [criterion(out, y).item() for out, (_, y) in zip(outputs, batches)]
    return sum(losses) / len(losses)
""",
        ),
        Right(
            "each parameter frozen and its flag restored, instead of no_grad",
            """
def validate(model, batches):
    flags = [(p, p.requires_grad) for p in model.parameters()]
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    for p, _ in flags:
        p.requires_grad_(False)
    total = 0.0
    try:
        for x, y in batches:
            total += torch.nn.functional.mse_loss(model(x), y).item()
    finally:
        for p, flag in flags:
            p.requires_grad_(flag)
        for m, mode in modes:
            m.train(mode)
    return total / len(batches)
""",
        ),
        Right(
            "inference_mode, a generator summed, float() of a tensor",
            """
def validate(model, batches):
    was = model.training
    model.eval()
    try:
        with torch.inference_mode():
            total = sum(torch.nn.functional.mse_loss(model(x), y) for x, y in batches)
    finally:
        model.train(was)
    return float(total / len(batches))
""",
        ),
    ],
    "ex4_finetune_head": [
        Right(
            "a manual SGD update under no_grad",
            """
def finetune_head(backbone, head, x, target, lr):
    backbone.eval()
    head.train()
    with torch.no_grad():
        features = backbone(x)
    head.zero_grad()
    loss = torch.nn.functional.mse_loss(head(features), target)
    loss.backward()
    with torch.no_grad():
        for p in head.parameters():
            p -= lr * p.grad
    return loss.item()
""",
        ),
        Right(
            "torch.autograd.grad, .grad left alone",
            """
def finetune_head(backbone, head, x, target, lr):
    backbone.eval()
    head.train()
    with torch.no_grad():
        features = backbone(x)
    params = list(head.parameters())
    loss = torch.nn.functional.mse_loss(head(features), target)
    grads = torch.autograd.grad(loss, params)
    with torch.no_grad():
        for p, g in zip(params, grads):
            p.sub_(lr * g)
    return float(loss.detach())
""",
        ),
        Right(
            "BatchNorm layers switched one by one, features detached",
            """
def finetune_head(backbone, head, x, target, lr):
    for m in backbone.modules():
        if isinstance(m, torch.nn.BatchNorm1d):
            m.eval()
    head.train()
    features = backbone(x).detach()
    optimizer = torch.optim.SGD(head.parameters(), lr=lr)
    optimizer.zero_grad(set_to_none=False)
    loss = torch.nn.functional.mse_loss(head(features), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
        ),
        Right(
            "inference_mode for the backbone, features cloned outside it",
            """
def finetune_head(backbone, head, x, target, lr):
    backbone.eval()
    with torch.inference_mode():
        features = backbone(x)
    features = features.clone()
    head.train()
    optimizer = torch.optim.SGD(head.parameters(), lr=lr)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(head(features), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
        ),
        Right(
            "a module-level MSELoss; momentum (one step from a fresh SGD is plain SGD)",
            """
criterion = torch.nn.MSELoss()


def finetune_head(backbone, head, x, target, lr):
    backbone.eval()
    head.train()
    with torch.no_grad():
        features = backbone(x)
    optimizer = torch.optim.SGD(head.parameters(), lr=lr, momentum=0.9)
    optimizer.zero_grad()
    loss = criterion(head(features), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
        ),
        Right(
            "the backbone's parameters frozen and each flag restored",
            """
def finetune_head(backbone, head, x, target, lr):
    flags = [p.requires_grad for p in backbone.parameters()]
    backbone.requires_grad_(False)
    backbone.eval()
    head.train()
    optimizer = torch.optim.SGD(head.parameters(), lr=lr)
    optimizer.zero_grad()
    try:
        loss = torch.nn.functional.mse_loss(head(backbone(x)), target)
        loss.backward()
        optimizer.step()
    finally:
        for p, flag in zip(backbone.parameters(), flags):
            p.requires_grad_(flag)
    return loss.item()
""",
        ),
        Right(
            "features from a deep copy of the backbone, both modes restored afterwards",
            """
import copy


def finetune_head(backbone, head, x, target, lr):
    was_b, was_h = backbone.training, head.training
    frozen = copy.deepcopy(backbone).eval()
    with torch.no_grad():
        features = frozen(x)
    head.train()
    opt = torch.optim.SGD([p for p in head.parameters() if p.requires_grad], lr=lr)
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(head(features), target)
    loss.backward()
    opt.step()
    backbone.train(was_b)
    head.train(was_h)
    return loss.item()
""",
        ),
    ],
    "ex5_mc_dropout_predict": [
        Right(
            "works on a deep copy of the model",
            """
import copy


def mc_dropout_predict(model, x, samples):
    sampler = copy.deepcopy(model).eval()
    for m in sampler.modules():
        if isinstance(m, torch.nn.Dropout):
            m.train()
    with torch.no_grad():
        preds = torch.stack([sampler(x) for _ in range(samples)])
    return preds.mean(dim=0), preds.std(dim=0)
""",
        ),
        Right(
            "model.apply setting each flag, a dict of modes, inference_mode, std_mean",
            """
def mc_dropout_predict(model, x, samples):
    modes = {m: m.training for m in model.modules()}

    def mc_mode(m):
        m.training = isinstance(m, torch.nn.Dropout)  # m.train() would recurse

    model.apply(mc_mode)
    try:
        with torch.inference_mode():
            std, mean = torch.std_mean(torch.stack([model(x) for _ in range(samples)]), dim=0)
    finally:
        for m, mode in modes.items():
            m.train(mode)
    return mean, std
""",
        ),
        Right(
            "BatchNorm layers switched one by one, a loop that fills a tensor",
            """
def mc_dropout_predict(model, x, samples):
    norms = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm1d)]
    drops = [m for m in model.modules() if isinstance(m, torch.nn.Dropout)]
    before = [(m, m.training) for m in norms + drops]
    for m in norms:
        m.eval()
    for m in drops:
        m.train()
    try:
        with torch.set_grad_enabled(False):
            first = model(x)
            preds = torch.empty((samples, *first.shape), dtype=first.dtype, device=first.device)
            preds[0] = first
            for k in range(1, samples):
                preds[k] = model(x)
    finally:
        for m, mode in before:
            m.train(mode)
    return preds.mean(dim=0), preds.std(dim=0)
""",
        ),
        Right(
            "a sampler class with __call__",
            """
class MCSampler:
    def __init__(self, model):
        self.model = model

    def __call__(self, x, samples):
        with torch.no_grad():
            return torch.stack([self.model(x) for _ in range(samples)])


def mc_dropout_predict(model, x, samples):
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.train()
    try:
        preds = MCSampler(model)(x, samples)
    finally:
        for m, mode in modes:
            m.train(mode)
    return preds.mean(dim=0), preds.std(dim=0)
""",
        ),
        Right(
            "modes by name from named_modules, a list of unsqueezed outputs and cat",
            """
def mc_dropout_predict(model, x, samples):
    before = dict(model.named_modules())
    modes = {name: m.training for name, m in before.items()}
    model.eval()
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.train(True)
    preds = []
    try:
        with torch.no_grad():
            for _ in range(samples):
                preds.append(model(x).unsqueeze(0))
    finally:
        for name, m in before.items():
            m.train(modes[name])
    preds = torch.cat(preds)
    return preds.mean(dim=0), preds.std(dim=0)
""",
        ),
        Right(
            "no_grad as a decorator, model.apply with a lambda, the std as var().sqrt()",
            """
@torch.no_grad()
def mc_dropout_predict(model, x, samples):
    saved = [(m, m.training) for m in model.modules()]
    model.eval()
    model.apply(lambda m: m.train() if isinstance(m, torch.nn.Dropout) else None)
    try:
        preds = torch.stack([model(x) for _ in range(samples)])
    finally:
        for m, t in saved:
            m.training = t
    return preds.mean(0), preds.var(0).sqrt()
""",
        ),
    ],
    "ex6_finetune_mode": [
        Right(
            "one train(flag) per module, the flag from isinstance",
            """
def finetune_mode(model):
    for m in model.modules():
        m.train(not isinstance(m, torch.nn.BatchNorm1d))
""",
        ),
        Right(
            "model.train() then model.apply with a named helper",
            """
def _freeze_statistics(module):
    if isinstance(module, (torch.nn.BatchNorm1d, torch.nn.BatchNorm2d, torch.nn.BatchNorm3d)):
        module.eval()


def finetune_mode(model):
    model.train()
    model.apply(_freeze_statistics)
""",
        ),
        Right(
            "named_modules, the training attribute set directly, a module-level tuple",
            """
NORMS = (torch.nn.BatchNorm1d,)


def finetune_mode(model):
    for _, m in model.named_modules():
        m.training = not isinstance(m, NORMS)
""",
        ),
        Right(
            "model.train(True), then a list of the BatchNorm layers switched with train(False)",
            """
def finetune_mode(model):
    model.train(True)
    norms = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm1d)]
    for m in norms:
        m.train(False)
""",
        ),
        Right(
            "an explicit else branch: train() for everything else, eval() for BatchNorm",
            """
import torch.nn as nn


def finetune_mode(model):
    for m in model.modules():
        if isinstance(m, nn.BatchNorm1d):
            m.eval()
        else:
            m.train()
    return None
""",
        ),
    ],
}
