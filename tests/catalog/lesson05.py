"""Catalogued answers for lesson 05 (see catalog/__init__.py)."""

from catalog import Right, Wrong

WRONG: dict[str, list[Wrong]] = {
    "ex1_extract_features": [
        Wrong(
            "stores the live output: keeps its graph",
            "HK-1",
            """
def extract_features(model, names, x):
    modules = dict(model.named_modules())
    features = {}
    handles = []
    for name in names:
        def hook(module, inputs, output, name=name):
            features[name] = output
        handles.append(modules[name].register_forward_hook(hook))
    try:
        model(x)
    finally:
        for h in handles:
            h.remove()
    return features
""",
        ),
        Wrong(
            "detach().cpu() in the hook: on the CPU that is the live tensor",
            "HK-2",
            """
def extract_features(model, names, x):
    modules = dict(model.named_modules())
    features = {}
    handles = []
    for name in names:
        def hook(module, inputs, output, name=name):
            features[name] = output.detach().cpu()
        handles.append(modules[name].register_forward_hook(hook))
    try:
        with torch.no_grad():
            model(x)
    finally:
        for h in handles:
            h.remove()
    return features
""",
            devices=("cpu",),
        ),
        Wrong(
            "keeps detached aliases and moves them with .cpu() after the forward pass",
            "HK-2",
            """
def extract_features(model, names, x):
    modules = dict(model.named_modules())
    kept = {}
    handles = [
        modules[n].register_forward_hook(lambda m, i, o, n=n: kept.update({n: o.detach()}))
        for n in names
    ]
    try:
        model(x)
    finally:
        for h in handles:
            h.remove()
    return {n: t.cpu() for n, t in kept.items()}
""",
        ),
        Wrong(
            "never removes its hooks",
            "HK-3",
            """
def extract_features(model, names, x):
    modules = dict(model.named_modules())
    features = {}
    for name in names:
        def hook(module, inputs, output, name=name):
            features[name] = output.detach().clone().cpu()
        modules[name].register_forward_hook(hook)
    with torch.no_grad():
        model(x)
    return features
""",
        ),
        Wrong(
            "removes its hooks only when the forward pass succeeds",
            "HK-3",
            """
def extract_features(model, names, x):
    modules = dict(model.named_modules())
    features = {}
    handles = []
    for name in names:
        def hook(module, inputs, output, name=name):
            features[name] = output.detach().clone().cpu()
        handles.append(modules[name].register_forward_hook(hook))
    with torch.no_grad():
        model(x)
    for h in handles:
        h.remove()
    return features
""",
        ),
        Wrong(
            "copies taken under inference_mode: inference tensors no head can train on",
            "NG-4",
            """
def extract_features(model, names, x):
    modules = dict(model.named_modules())
    features = {}
    handles = []
    for name in names:
        def hook(module, inputs, output, name=name):
            features[name] = output.to("cpu", copy=True)
        handles.append(modules[name].register_forward_hook(hook))
    try:
        with torch.inference_mode():
            model(x)
    finally:
        for h in handles:
            h.remove()
    return features
""",
        ),
        Wrong(
            "swallows the model's exception",
            None,
            """
def extract_features(model, names, x):
    modules = dict(model.named_modules())
    features = {}
    handles = []
    for name in names:
        def hook(module, inputs, output, name=name):
            features[name] = output.detach().clone().cpu()
        handles.append(modules[name].register_forward_hook(hook))
    try:
        with torch.no_grad():
            model(x)
    except RuntimeError:
        pass
    finally:
        for h in handles:
            h.remove()
    return features
""",
        ),
        Wrong(
            # where a model has no layer at a hard-coded index, the hooks registered before
            # the IndexError are never removed (they are registered outside the try)
            "hard-codes the layers of the example model",
            "HK-3",
            """
def extract_features(model, names, x):
    features = {}
    handles = []
    for name, index in zip(names, [0, 2, 4]):
        def hook(module, inputs, output, name=name):
            features[name] = output.detach().clone().cpu()
        handles.append(model[index].register_forward_hook(hook))
    try:
        with torch.no_grad():
            model(x)
    finally:
        for h in handles:
            h.remove()
    return features
""",
        ),
        Wrong(
            "converts to float32",
            None,
            """
def extract_features(model, names, x):
    modules = dict(model.named_modules())
    features = {}
    handles = []
    for name in names:
        def hook(module, inputs, output, name=name):
            features[name] = output.detach().float().cpu().clone()
        handles.append(modules[name].register_forward_hook(hook))
    try:
        with torch.no_grad():
            model(x)
    finally:
        for h in handles:
            h.remove()
    return features
""",
        ),
        Wrong(
            "puts the model in eval mode and leaves it there",
            None,
            """
def extract_features(model, names, x):
    modules = dict(model.named_modules())
    features = {}
    handles = [
        modules[n].register_forward_hook(
            lambda m, i, o, n=n: features.update({n: o.detach().clone().cpu()})
        )
        for n in names
    ]
    model.eval()
    try:
        with torch.no_grad():
            model(x)
    finally:
        for h in handles:
            h.remove()
    return features
""",
        ),
        Wrong(
            "keeps every raw output in a module-level list (their graphs stay alive)",
            "HK-1",
            """
RAW_OUTPUTS = []

def extract_features(model, names, x):
    modules = dict(model.named_modules())
    features = {}
    def keep(name):
        def hook(module, inputs, output):
            RAW_OUTPUTS.append(output)
            features[name] = output.detach().clone().cpu()
        return hook
    handles = [modules[n].register_forward_hook(keep(n)) for n in names]
    try:
        model(x)
    finally:
        for h in handles:
            h.remove()
    return features
""",
        ),
        Wrong(
            "empties the caller's list of names with pop()",
            None,
            """
def extract_features(model, names, x):
    modules = dict(model.named_modules())
    features = {}
    handles = []
    while names:
        name = names.pop()
        handles.append(modules[name].register_forward_hook(
            lambda m, i, o, name=name: features.update({name: o.detach().clone().cpu()})
        ))
    try:
        with torch.no_grad():
            model(x)
    finally:
        for h in handles:
            h.remove()
    return features
""",
        ),
        Wrong(
            "runs the model once per name (BatchNorm statistics updated several times)",
            None,
            """
def extract_features(model, names, x):
    modules = dict(model.named_modules())
    features = {}
    for name in names:
        handle = modules[name].register_forward_hook(
            lambda m, i, o: features.update({name: o.detach().clone().cpu()})
        )
        try:
            with torch.no_grad():
                model(x)
        finally:
            handle.remove()
    return features
""",
        ),
        Wrong(
            "a NumPy round trip without a copy: on the CPU it aliases the live output",
            "HK-2",
            """
def extract_features(model, names, x):
    modules = dict(model.named_modules())
    features = {}
    handles = [
        modules[n].register_forward_hook(
            lambda m, i, o, n=n: features.update({n: torch.from_numpy(o.detach().cpu().numpy())})
        )
        for n in names
    ]
    try:
        with torch.no_grad():
            model(x)
    finally:
        for h in handles:
            h.remove()
    return features
""",
            devices=("cpu",),
        ),
        Wrong(
            "freezes the parameters to avoid a graph, then sets requires_grad back to True",
            None,
            """
def extract_features(model, names, x):
    modules = dict(model.named_modules())
    features = {}
    for p in model.parameters():
        p.requires_grad_(False)
    handles = [
        modules[n].register_forward_hook(lambda m, i, o, n=n: features.update({n: o.clone().cpu()}))
        for n in names
    ]
    try:
        model(x)
    finally:
        for h in handles:
            h.remove()
        for p in model.parameters():
            p.requires_grad_(True)
    return features
""",
        ),
        Wrong(
            "switches grad mode off and never back on",
            None,
            """
def extract_features(model, names, x):
    torch.set_grad_enabled(False)
    modules = dict(model.named_modules())
    features = {}
    handles = [
        modules[n].register_forward_hook(lambda m, i, o, n=n: features.update({n: o.clone().cpu()}))
        for n in names
    ]
    try:
        model(x)
    finally:
        for h in handles:
            h.remove()
    return features
""",
        ),
    ],
    "ex2_clip_gradients": [
        Wrong(
            "one module-level hook reading a limit each call overwrites: a second model "
            "clipped with another limit changes the first model's",
            None,
            """
LIMIT = None


def _clip(grad):
    return grad.clamp(-LIMIT, LIMIT)


def clip_gradients(model, max_abs):
    global LIMIT
    LIMIT = max_abs
    return [p.register_hook(_clip) for p in model.parameters()]
""",
        ),
        Wrong(
            "rebinds the gradient inside the hook and returns nothing",
            "HK-4",
            """
def clip_gradients(model, max_abs):
    def clip(grad):
        grad = grad.clamp(-max_abs, max_abs)
    return [p.register_hook(clip) for p in model.parameters()]
""",
        ),
        Wrong(
            "records the clipped gradient but returns nothing",
            "HK-4",
            """
def clip_gradients(model, max_abs):
    clipped = []
    def clip(grad):
        clipped.append(torch.clamp(grad, -max_abs, max_abs))
    return [p.register_hook(clip) for p in model.parameters()]
""",
        ),
        Wrong(
            "clips at 0 and max_abs",
            None,
            """
def clip_gradients(model, max_abs):
    return [p.register_hook(lambda g: g.clamp(0, max_abs)) for p in model.parameters()]
""",
        ),
        Wrong(
            "scales the whole gradient (norm clipping)",
            None,
            """
def clip_gradients(model, max_abs):
    def clip(grad):
        norm = grad.norm()
        return grad * (max_abs / norm) if norm > max_abs else grad
    return [p.register_hook(clip) for p in model.parameters()]
""",
        ),
        Wrong(
            "clips the weights only",
            None,
            """
def clip_gradients(model, max_abs):
    return [
        p.register_hook(lambda g: g.clamp(-max_abs, max_abs))
        for name, p in model.named_parameters()
        if name.endswith("weight")
    ]
""",
        ),
        Wrong(
            "returns no handles",
            None,
            """
def clip_gradients(model, max_abs):
    for p in model.parameters():
        p.register_hook(lambda g: g.clamp(-max_abs, max_abs))
""",
        ),
        Wrong(
            "hard-codes the first layer of the example",
            None,
            """
def clip_gradients(model, max_abs):
    return [p.register_hook(lambda g: g.clamp(-max_abs, max_abs)) for p in model[0].parameters()]
""",
        ),
        Wrong(
            "hard-codes the example's limit 0.05",
            None,
            """
def clip_gradients(model, max_abs):
    return [p.register_hook(lambda g: g.clamp(-0.05, 0.05)) for p in model.parameters()]
""",
        ),
        Wrong(
            "returns a generator: no hook is registered until someone iterates it",
            None,
            """
def clip_gradients(model, max_abs):
    return (p.register_hook(lambda g: g.clamp(-max_abs, max_abs)) for p in model.parameters())
""",
        ),
        Wrong(
            "zeroes the caller's gradients while registering",
            None,
            """
def clip_gradients(model, max_abs):
    model.zero_grad()
    return [p.register_hook(lambda g: g.clamp(-max_abs, max_abs)) for p in model.parameters()]
""",
        ),
        Wrong(
            "clips what flows out of each module (full backward hooks), not parameters' gradients",
            None,
            """
def clip_gradients(model, max_abs):
    def clip(module, grad_input, grad_output):
        return tuple(None if g is None else g.clamp(-max_abs, max_abs) for g in grad_input)
    leaves = [m for m in model.modules() if len(list(m.children())) == 0]
    return [m.register_full_backward_hook(clip) for m in leaves]
""",
        ),
    ],
    "ex3_mask_output": [
        Wrong(
            "mutates the output in place (the layer saved it for backward)",
            "HK-5",
            """
def mask_output(module, mask):
    def hook(module, inputs, output):
        output.mul_(mask)
    return module.register_forward_hook(hook)
""",
        ),
        Wrong(
            "mutates output.data in place: silently wrong gradients",
            "HK-5",
            """
def mask_output(module, mask):
    def hook(module, inputs, output):
        output.data *= mask
    return module.register_forward_hook(hook)
""",
        ),
        Wrong(
            "computes the masked output but does not return it",
            "HK-5",
            """
def mask_output(module, mask):
    def hook(module, inputs, output):
        output = output * mask
    return module.register_forward_hook(hook)
""",
        ),
        Wrong(
            "masks the layer's input with a pre-hook",
            None,
            """
def mask_output(module, mask):
    return module.register_forward_pre_hook(lambda m, inputs: (inputs[0] * mask,))
""",
        ),
        Wrong(
            "adds the mask",
            None,
            """
def mask_output(module, mask):
    return module.register_forward_hook(lambda m, i, output: output + mask)
""",
        ),
        Wrong(
            "returns the hook function instead of the handle",
            None,
            """
def mask_output(module, mask):
    def hook(module, inputs, output):
        return output * mask
    module.register_forward_hook(hook)
    return hook
""",
        ),
        Wrong(
            "registers the hook twice and returns one handle",
            "HK-3",
            """
def mask_output(module, mask):
    def hook(module, inputs, output):
        return output * mask
    module.register_forward_hook(hook)
    return module.register_forward_hook(hook)
""",
        ),
        Wrong(
            "makes the mask broadcast with unsqueeze_ (changes the caller's mask)",
            None,
            """
def mask_output(module, mask):
    if mask.dim() == 1:
        mask.unsqueeze_(0)
    return module.register_forward_hook(lambda m, i, output: output * mask)
""",
        ),
        Wrong(
            "masked_fill_ on the output, returned (the layer saved that output)",
            "HK-5",
            """
def mask_output(module, mask):
    def hook(module, inputs, output):
        return output.masked_fill_(mask == 0, 0.0)
    return module.register_forward_hook(hook)
""",
        ),
        Wrong(
            "returns a detached masked output: no gradient flows back through the layer",
            None,
            """
def mask_output(module, mask):
    return module.register_forward_hook(lambda m, i, output: (output * mask).detach())
""",
        ),
    ],
    "ex4_train_and_log": [
        Wrong(
            "the same call again (the very same objects) returns the first log, untrained",
            None,
            """
_done = []


def train_and_log(model, layer_name, batches, lr):
    called = (model, layer_name, batches, lr)
    for seen, log in _done:
        if all(a is b for a, b in zip(seen, called)):
            return log
    layer = dict(model.named_modules())[layer_name]
    log = []
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    handle = layer.register_forward_hook(
        lambda module, args, output: log.append(output.mean().item())
    )
    try:
        for x, y in batches:
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
    finally:
        handle.remove()
    _done.append((called, log))
    return log
""",
        ),
        Wrong(
            "registers the hook inside the loop and never removes it",
            "HK-3",
            """
def train_and_log(model, layer_name, batches, lr):
    layer = dict(model.named_modules())[layer_name]
    log = []
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for x, y in batches:
        layer.register_forward_hook(lambda m, i, o: log.append(o.mean().item()))
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    return log
""",
        ),
        Wrong(
            "registers inside the loop and removes all handles at the end",
            "HK-3",
            """
def train_and_log(model, layer_name, batches, lr):
    layer = dict(model.named_modules())[layer_name]
    log, handles = [], []
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for x, y in batches:
        handles.append(layer.register_forward_hook(lambda m, i, o: log.append(o.mean().item())))
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    for h in handles:
        h.remove()
    return log
""",
        ),
        Wrong(
            "registers once but leaves the hook on the model",
            "HK-3",
            """
def train_and_log(model, layer_name, batches, lr):
    layer = dict(model.named_modules())[layer_name]
    log = []
    layer.register_forward_hook(lambda m, i, o: log.append(o.mean().item()))
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for x, y in batches:
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    return log
""",
        ),
        Wrong(
            "forgets zero_grad: stale gradients in every step",
            None,
            """
def train_and_log(model, layer_name, batches, lr):
    layer = dict(model.named_modules())[layer_name]
    log = []
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    handle = layer.register_forward_hook(lambda m, i, o: log.append(o.mean().item()))
    try:
        for x, y in batches:
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
    finally:
        handle.remove()
    return log
""",
        ),
        Wrong(
            "logs tensors instead of floats",
            None,
            """
def train_and_log(model, layer_name, batches, lr):
    layer = dict(model.named_modules())[layer_name]
    log = []
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    handle = layer.register_forward_hook(lambda m, i, o: log.append(o.mean()))
    try:
        for x, y in batches:
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
    finally:
        handle.remove()
    return log
""",
        ),
        Wrong(
            "hooks the layer of the example model",
            None,
            """
def train_and_log(model, layer_name, batches, lr):
    log = []
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    handle = model[3].register_forward_hook(lambda m, i, o: log.append(o.mean().item()))
    try:
        for x, y in batches:
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
    finally:
        handle.remove()
    return log
""",
        ),
        Wrong(
            "hard-codes the learning rate 0.1",
            None,
            """
def train_and_log(model, layer_name, batches, lr):
    layer = dict(model.named_modules())[layer_name]
    log = []
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    handle = layer.register_forward_hook(lambda m, i, o: log.append(o.mean().item()))
    try:
        for x, y in batches:
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
    finally:
        handle.remove()
    return log
""",
        ),
        Wrong(
            "removes the hook only when training succeeds (no try/finally)",
            "HK-3",
            """
def train_and_log(model, layer_name, batches, lr):
    layer = dict(model.named_modules())[layer_name]
    log = []
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    handle = layer.register_forward_hook(lambda m, i, o: log.append(o.mean().item()))
    for x, y in batches:
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    handle.remove()
    return log
""",
        ),
        Wrong(
            "switches the model to training mode",
            None,
            """
def train_and_log(model, layer_name, batches, lr):
    model.train()
    layer = dict(model.named_modules())[layer_name]
    log = []
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    handle = layer.register_forward_hook(lambda m, i, o: log.append(o.mean().item()))
    try:
        for x, y in batches:
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
    finally:
        handle.remove()
    return log
""",
        ),
        Wrong(
            "makes every parameter trainable (unfreezes the caller's frozen ones)",
            None,
            """
def train_and_log(model, layer_name, batches, lr):
    for p in model.parameters():
        p.requires_grad_(True)
    layer = dict(model.named_modules())[layer_name]
    log = []
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    handle = layer.register_forward_hook(lambda m, i, o: log.append(o.mean().item()))
    try:
        for x, y in batches:
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
    finally:
        handle.remove()
    return log
""",
        ),
        Wrong(
            "logs the mean of the layer's input",
            None,
            """
def train_and_log(model, layer_name, batches, lr):
    layer = dict(model.named_modules())[layer_name]
    log = []
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    handle = layer.register_forward_hook(lambda m, args, o: log.append(args[0].mean().item()))
    try:
        for x, y in batches:
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
    finally:
        handle.remove()
    return log
""",
        ),
        Wrong(
            "manual SGD over every parameter: a frozen one has no .grad",
            None,
            """
def train_and_log(model, layer_name, batches, lr):
    log = []
    handle = model.get_submodule(layer_name).register_forward_hook(
        lambda m, i, o: log.append(o.detach().mean().item())
    )
    try:
        for x, y in batches:
            for p in model.parameters():
                p.grad = None
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            with torch.no_grad():
                for p in model.parameters():
                    p -= lr * p.grad
    finally:
        handle.remove()
    return log
""",
        ),
        Wrong(
            "torch.autograd.grad over every parameter: a frozen one cannot be differentiated",
            None,
            """
from contextlib import contextmanager

@contextmanager
def forward_hook(module, hook):
    handle = module.register_forward_hook(hook)
    try:
        yield
    finally:
        handle.remove()

def train_and_log(model, layer_name, batches, lr):
    log = []
    params = list(model.parameters())
    layer = dict(model.named_modules())[layer_name]
    with forward_hook(layer, lambda m, i, o: log.append(o.mean().item())):
        for x, y in batches:
            loss = torch.nn.functional.mse_loss(model(x), y)
            grads = torch.autograd.grad(loss, params)
            with torch.no_grad():
                for p, g in zip(params, grads):
                    p.sub_(lr * g)
    return log
""",
        ),
    ],
    "ex5_forward_counting_saved": [
        Wrong(
            "counts elements, not bytes",
            None,
            """
def forward_counting_saved(model, x):
    count = 0
    def pack(t):
        nonlocal count
        count += t.numel()
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    return out, count
""",
        ),
        Wrong(
            "assumes 4 bytes per element",
            None,
            """
def forward_counting_saved(model, x):
    count = 0
    def pack(t):
        nonlocal count
        count += 4 * t.numel()
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    return out, count
""",
        ),
        Wrong(
            "pack keeps only the size: backward cannot unpack",
            None,
            """
def forward_counting_saved(model, x):
    sizes = []
    def pack(t):
        sizes.append(t.numel() * t.element_size())
        return len(sizes) - 1
    def unpack(i):
        return None
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        out = model(x)
    return out, sum(sizes)
""",
        ),
        Wrong(
            "runs the forward pass under no_grad",
            None,
            """
def forward_counting_saved(model, x):
    count = 0
    def pack(t):
        nonlocal count
        count += t.numel() * t.element_size()
        return t
    with torch.no_grad(), torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    return out, count
""",
        ),
        Wrong(
            "counts the parameters, not what is saved",
            None,
            """
def forward_counting_saved(model, x):
    out = model(x)
    return out, sum(p.numel() * p.element_size() for p in model.parameters())
""",
        ),
        Wrong(
            "counts each storage once",
            None,
            """
def forward_counting_saved(model, x):
    seen = {}
    def pack(t):
        seen[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    return out, sum(seen.values())
""",
        ),
        Wrong(
            "counts in unpack, which runs only during backward",
            None,
            """
def forward_counting_saved(model, x):
    total = 0
    def unpack(t):
        nonlocal total
        total += t.numel() * t.element_size()
        return t
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
        out = model(x)
    return out, total
""",
        ),
        Wrong(
            "returns a detached output: nothing left to train",
            None,
            """
def forward_counting_saved(model, x):
    total = 0
    def pack(t):
        nonlocal total
        total += t.numel() * t.element_size()
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    return out.detach(), total
""",
        ),
        Wrong(
            "counts the whole storage behind each saved tensor (views count too much)",
            None,
            """
def forward_counting_saved(model, x):
    total = 0
    def pack(t):
        nonlocal total
        total += t.untyped_storage().nbytes()
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    return out, total
""",
        ),
        Wrong(
            "counts in kilobytes, a float",
            None,
            """
def forward_counting_saved(model, x):
    total = 0
    def pack(t):
        nonlocal total
        total += t.numel() * t.element_size() / 1024
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    return out, total
""",
        ),
        Wrong(
            "sets requires_grad on the caller's input to be sure something is saved",
            None,
            """
def forward_counting_saved(model, x):
    x.requires_grad_(True)
    total = 0
    def pack(t):
        nonlocal total
        total += t.numel() * t.element_size()
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    return out, total
""",
        ),
    ],
}

RIGHT: dict[str, list[Right]] = {
    "ex1_extract_features": [
        Right(
            "detach().cpu() in the hook: on CUDA, .cpu() copies (the same code is wrong on CPU)",
            """
def extract_features(model, names, x):
    modules = dict(model.named_modules())
    features = {}
    handles = []
    for name in names:
        def hook(module, inputs, output, name=name):
            features[name] = output.detach().cpu()
        handles.append(modules[name].register_forward_hook(hook))
    try:
        with torch.no_grad():
            model(x)
    finally:
        for h in handles:
            h.remove()
    return features
""",
            devices=("cuda",),
        ),
        Right(
            "a context manager that removes the hooks, clone() then cpu()",
            """
from contextlib import contextmanager

@contextmanager
def hooked(modules, hook_for):
    handles = [m.register_forward_hook(hook_for(name)) for name, m in modules.items()]
    try:
        yield
    finally:
        for h in handles:
            h.remove()

def extract_features(model, names, x):
    wanted = {n: m for n, m in model.named_modules() if n in names}
    features = {}
    def hook_for(name):
        return lambda module, inputs, output: features.update({name: output.detach().clone().cpu()})
    with hooked(wanted, hook_for):
        model(x)
    return features
""",
        ),
        Right(
            "a copy through NumPy, hooks removed in a finally block",
            """
def extract_features(model, names, x):
    modules = dict(model.named_modules())
    arrays = {}
    handles = []
    for name in names:
        def hook(module, inputs, output, name=name):
            arrays[name] = output.detach().cpu().numpy().copy()
        handles.append(modules[name].register_forward_hook(hook))
    try:
        with torch.inference_mode():
            model(x)
    finally:
        for h in handles:
            h.remove()
    return {name: torch.from_numpy(a) for name, a in arrays.items()}
""",
        ),
        Right(
            "a class holding the handles, torch.empty_like + copy_",
            """
class Recorder:
    def __init__(self, model, names):
        modules = dict(model.named_modules())
        self.features = {}
        self.handles = [modules[n].register_forward_hook(self.keep(n)) for n in names]

    def keep(self, name):
        def hook(module, inputs, output):
            copy = torch.empty(output.shape, dtype=output.dtype, device="cpu")
            copy.copy_(output.detach())
            self.features[name] = copy
        return hook

    def close(self):
        for h in self.handles:
            h.remove()

def extract_features(model, names, x):
    recorder = Recorder(model, names)
    try:
        model(x)
    finally:
        recorder.close()
    return recorder.features
""",
        ),
        Right(
            "an ExitStack, get_submodule, clone().detach() to a module-level CPU device",
            """
from contextlib import ExitStack

CPU = torch.device("cpu")

def extract_features(model, names, x):
    features = {}
    with ExitStack() as stack:
        for name in names:
            handle = model.get_submodule(name).register_forward_hook(
                lambda module, args, output, name=name: features.update(
                    {name: output.clone().detach().to(CPU)}
                )
            )
            stack.callback(handle.remove)
        model(x)
    return features
""",
        ),
        Right(
            "a callable class as the hook, copy_ into new CPU tensors",
            """
class Keep:
    def __init__(self, store, name):
        self.store, self.name = store, name

    def __call__(self, module, args, output):
        self.store[self.name] = torch.zeros_like(output, device="cpu").copy_(output.detach())

def extract_features(model, names, x):
    features = {}
    modules = dict(model.named_modules())
    handles = []
    try:
        for name in names:
            handles.append(modules[name].register_forward_hook(Keep(features, name)))
        with torch.no_grad():
            model(x)
    finally:
        for handle in handles:
            handle.remove()
    return features
""",
        ),
    ],
    "ex2_clip_gradients": [
        Right(
            "torch.clamp in a lambda",
            """
def clip_gradients(model, max_abs):
    handles = []
    for p in model.parameters():
        handles.append(p.register_hook(lambda g: torch.clamp(g, min=-max_abs, max=max_abs)))
    return handles
""",
        ),
        Right(
            "torch.where, returned as a tuple",
            """
def clip_gradients(model, max_abs):
    def clip(grad):
        return torch.where(grad.abs() > max_abs, grad.sign() * max_abs, grad)
    return tuple(p.register_hook(clip) for _, p in model.named_parameters())
""",
        ),
        Right(
            "post-accumulate-grad hooks that clip .grad in place",
            """
def clip_gradients(model, max_abs):
    def clip(param):
        param.grad.clamp_(-max_abs, max_abs)
    return [p.register_post_accumulate_grad_hook(clip) for p in model.parameters()]
""",
        ),
        Right(
            "functools.partial of a module-level function",
            """
from functools import partial

def clip_to(grad, limit):
    return grad.clamp(-limit, limit)

def clip_gradients(model, max_abs):
    return [p.register_hook(partial(clip_to, limit=max_abs)) for p in model.parameters()]
""",
        ),
        Right(
            "a callable class, Tensor.clip, a for loop",
            """
class Clip:
    def __init__(self, limit):
        self.limit = limit

    def __call__(self, grad):
        return grad.clip(min=-self.limit, max=self.limit)

def clip_gradients(model, max_abs):
    clip = Clip(max_abs)
    handles = []
    for name, parameter in model.named_parameters():
        handles.append(parameter.register_hook(clip))
    return handles
""",
        ),
    ],
    "ex3_mask_output": [
        Right(
            "a lambda and torch.mul",
            """
def mask_output(module, mask):
    return module.register_forward_hook(lambda m, inputs, output: torch.mul(output, mask))
""",
        ),
        Right(
            "a callable class",
            """
class Mask:
    def __init__(self, mask):
        self.mask = mask

    def __call__(self, module, inputs, output):
        return output * self.mask

def mask_output(module, mask):
    return module.register_forward_hook(Mask(mask))
""",
        ),
        Right(
            "torch.where, with_kwargs hook",
            """
def mask_output(module, mask):
    def hook(module, args, kwargs, output):
        return torch.where(mask.bool(), output, torch.zeros_like(output))
    return module.register_forward_hook(hook, with_kwargs=True)
""",
        ),
        Right(
            "functools.partial, a keyword-only mask",
            """
from functools import partial

def apply_mask(module, args, output, *, mask):
    return output * mask

def mask_output(module, mask):
    return module.register_forward_hook(partial(apply_mask, mask=mask))
""",
        ),
        Right(
            "an in-place multiply on a clone, returned",
            """
def mask_output(module, mask):
    def hook(module, args, output):
        return output.clone().mul_(mask)
    handle = module.register_forward_hook(hook)
    return handle
""",
        ),
    ],
    "ex4_train_and_log": [
        Right(
            "registers inside the loop and removes the handle each step",
            """
def train_and_log(model, layer_name, batches, lr):
    layer = dict(model.named_modules())[layer_name]
    log = []
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for x, y in batches:
        handle = layer.register_forward_hook(lambda m, i, o: log.append(float(o.detach().mean())))
        try:
            optimizer.zero_grad(set_to_none=False)
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
        finally:
            handle.remove()
    return log
""",
        ),
        Right(
            "nn.MSELoss as a module-level object, get_submodule, an ExitStack",
            """
from contextlib import ExitStack

from torch import nn

criterion = nn.MSELoss()

def train_and_log(model, layer_name, batches, lr):
    log = []
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    with ExitStack() as stack:
        handle = model.get_submodule(layer_name).register_forward_hook(
            lambda module, args, output: log.append(float(output.mean()))
        )
        stack.callback(handle.remove)
        for x, y in batches:
            optimizer.zero_grad(set_to_none=True)
            criterion(model(x), y).backward()
            optimizer.step()
    return log
""",
        ),
        Right(
            "a logger class with __call__, a while loop over an iterator",
            """
class MeanLogger:
    def __init__(self):
        self.means = []

    def __call__(self, module, args, output):
        self.means.append(output.detach().mean().item())

def train_and_log(model, layer_name, batches, lr):
    logger = MeanLogger()
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    handle = dict(model.named_modules())[layer_name].register_forward_hook(logger)
    try:
        remaining = iter(batches)
        batch = next(remaining, None)
        while batch is not None:
            x, y = batch
            model.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            batch = next(remaining, None)
    finally:
        handle.remove()
    return logger.means
""",
        ),
        Right(
            "manual SGD that skips parameters without a gradient",
            """
def train_and_log(model, layer_name, batches, lr):
    log = []
    handle = model.get_submodule(layer_name).register_forward_hook(
        lambda m, i, o: log.append(o.mean().item())
    )
    try:
        for x, y in batches:
            model.zero_grad(set_to_none=True)
            torch.nn.functional.mse_loss(model(x), y).backward()
            with torch.no_grad():
                for p in model.parameters():
                    if p.grad is not None:
                        p.add_(p.grad, alpha=-lr)
    finally:
        handle.remove()
    return log
""",
        ),
        Right(
            "an optimizer over the trainable parameters only, enumerate",
            """
def train_and_log(model, layer_name, batches, lr):
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(trainable, lr=lr)
    log = [None] * len(batches)
    step = [0]
    def hook(module, args, output):
        log[step[0]] = output.mean().item()
    handle = dict(model.named_modules())[layer_name].register_forward_hook(hook)
    try:
        for k, (x, y) in enumerate(batches):
            step[0] = k
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
    finally:
        handle.remove()
    return log
""",
        ),
    ],
    "ex5_forward_counting_saved": [
        Right(
            "a counting class",
            """
class Counter:
    def __init__(self):
        self.total = 0

    def pack(self, t):
        self.total += t.nbytes
        return t

    def unpack(self, t):
        return t

def forward_counting_saved(model, x):
    counter = Counter()
    with torch.autograd.graph.saved_tensors_hooks(counter.pack, counter.unpack):
        out = model(x)
    return out, counter.total
""",
        ),
        Right(
            "a list of sizes, pack stores a detached alias",
            """
def forward_counting_saved(model, x):
    sizes = []
    def pack(t):
        sizes.append(t.numel() * t.element_size())
        return t.detach()
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    return out, int(sum(sizes))
""",
        ),
        Right(
            "pack keeps a CPU copy, unpack moves it back",
            """
def forward_counting_saved(model, x):
    total = [0]
    def pack(t):
        total[0] += t.element_size() * t.nelement()
        return (t.device, t.detach().to("cpu", copy=True))
    def unpack(packed):
        device, t = packed
        return t.to(device)
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        out = model(x)
    return out, total[0]
""",
        ),
        Right(
            "an alias of saved_tensors_hooks, a pack class with __call__, Tensor.nbytes",
            """
from torch.autograd.graph import saved_tensors_hooks as saving

class Pack:
    def __init__(self):
        self.n_bytes = 0

    def __call__(self, t):
        self.n_bytes += t.nbytes
        return t

def forward_counting_saved(model, x):
    pack = Pack()
    with saving(pack, lambda t: t):
        output = model(x)
    return output, pack.n_bytes
""",
        ),
        Right(
            "sizes in a list, summed with functools.reduce",
            """
from functools import reduce

def forward_counting_saved(model, x):
    sizes = []

    def pack(t):
        sizes.append(t.element_size() * t.numel())
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        output = model(x)
    return (output, reduce(lambda a, b: a + b, sizes, 0))
""",
        ),
    ],
}
