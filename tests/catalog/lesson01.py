"""Catalogued answers for lesson 01 (see catalog/__init__.py)."""

from catalog import Right, Wrong

# The notebook's setup cell defines DEVICE like this; answers that use it define it too.
_DEVICE = 'DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'

WRONG: dict[str, list[Wrong]] = {
    "ex1_product_grads": [
        Wrong(
            "the chain rule written out with torch.mul: values right, backward never called",
            None,
            """
def product_grads(a, b):
    c = torch.mul(a, b)
    grad_c = torch.mul(c, 2)
    return torch.mul(grad_c, b), torch.mul(grad_c, a), grad_c
""",
        ),
        Wrong(
            "forgets retain_grad on the non-leaf c",
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
        Wrong(
            "calls retain_grad after backward",
            "RG-1",
            """
def product_grads(a, b):
    a = a.clone().requires_grad_()
    b = b.clone().requires_grad_()
    c = a * b
    y = (c ** 2).sum()
    y.backward()
    c.retain_grad()  # keep c's gradient too
    return a.grad, b.grad, c.grad
""",
        ),
        Wrong(
            "mean instead of sum",
            None,
            """
def product_grads(a, b):
    a = a.detach().clone().requires_grad_(True)
    b = b.detach().clone().requires_grad_(True)
    c = a * b
    c.retain_grad()
    y = (c ** 2).mean()
    y.backward()
    return a.grad, b.grad, c.grad
""",
        ),
        Wrong(
            "turns on requires_grad of the caller's tensors",
            None,
            """
def product_grads(a, b):
    a.requires_grad_()
    b.requires_grad_()
    c = a * b
    c.retain_grad()
    y = (c ** 2).sum()
    y.backward()
    return a.grad, b.grad, c.grad
""",
        ),
        Wrong(
            "copies with a hard-coded float32 dtype",
            None,
            """
def product_grads(a, b):
    a = torch.tensor(a, dtype=torch.float32, device=a.device, requires_grad=True)
    b = torch.tensor(b, dtype=torch.float32, device=b.device, requires_grad=True)
    c = a * b
    c.retain_grad()
    y = (c ** 2).sum()
    y.backward()
    return a.grad, b.grad, c.grad
""",
        ),
        Wrong(
            "copies through a Python list",
            None,
            """
def product_grads(a, b):
    a = torch.tensor(a.tolist(), requires_grad=True)
    b = torch.tensor(b.tolist(), requires_grad=True)
    c = a * b
    c.retain_grad()
    (c ** 2).sum().backward()
    return a.grad, b.grad, c.grad
""",
        ),
        Wrong(
            "copies through a Python list, keeping the dtype but not the device",
            None,
            """
def product_grads(a, b):
    a = torch.tensor(a.tolist(), dtype=a.dtype, requires_grad=True)
    b = torch.tensor(b.tolist(), dtype=b.dtype, requires_grad=True)
    c = a * b
    c.retain_grad()
    (c ** 2).sum().backward()
    return a.grad, b.grad, c.grad
""",
            devices=("cuda",),
        ),
        Wrong(
            "turns requires_grad on the caller's tensors and off again, their .grad left filled",
            None,
            """
def product_grads(a, b):
    a.requires_grad_(True)
    b.requires_grad_(True)
    c = a * b
    c.retain_grad()
    (c ** 2).sum().backward()
    a.requires_grad_(False)
    b.requires_grad_(False)
    return a.grad, b.grad, c.grad
""",
        ),
        Wrong(
            "requires_grad_() on the non-leaf c instead of retain_grad",
            "RG-1",
            """
def product_grads(a, b):
    a = a.detach().clone().requires_grad_()
    b = b.detach().clone().requires_grad_()
    c = a * b
    c.requires_grad_()
    (c ** 2).sum().backward()
    return a.grad, b.grad, c.grad
""",
        ),
        Wrong(
            "copies through NumPy (no bfloat16, no GPU)",
            None,
            """
def product_grads(a, b):
    a = torch.from_numpy(a.numpy().copy()).requires_grad_()
    b = torch.from_numpy(b.numpy().copy()).requires_grad_()
    c = a * b
    c.retain_grad()
    (c ** 2).sum().backward()
    return a.grad, b.grad, c.grad
""",
        ),
        Wrong(
            "squeezes the gradients (a single element loses its dimension)",
            None,
            """
def product_grads(a, b):
    a = a.detach().clone().requires_grad_()
    b = b.detach().clone().requires_grad_()
    c = a * b
    c.retain_grad()
    (c ** 2).sum().backward()
    return a.grad.squeeze(), b.grad.squeeze(), c.grad.squeeze()
""",
        ),
    ],
    "ex2_output_requires_grad": [
        Wrong(
            "the first input decides",
            "RG-2",
            """
def output_requires_grad(*inputs):
    return inputs[0].requires_grad
""",
        ),
        Wrong(
            "every input must require grad",
            "RG-2",
            """
def output_requires_grad(*inputs):
    return all(t.requires_grad for t in inputs)
""",
        ),
        Wrong(
            "runs the addition it was asked to predict",
            None,
            """
def output_requires_grad(*inputs):
    out = sum(inputs)
    return out.requires_grad
""",
        ),
        Wrong(
            "concatenates the inputs and looks at the result",
            None,
            """
def output_requires_grad(*inputs):
    out = torch.cat([t.flatten().float() for t in inputs])
    return out.requires_grad
""",
        ),
        Wrong(
            "hard-codes two inputs",
            None,
            """
def output_requires_grad(*inputs):
    return inputs[0].requires_grad or inputs[1].requires_grad
""",
        ),
        Wrong(
            "asks whether the inputs are leaves",
            None,
            """
def output_requires_grad(*inputs):
    return any(t.is_leaf for t in inputs)
""",
        ),
        Wrong(
            "returns a tensor instead of a bool",
            None,
            """
def output_requires_grad(*inputs):
    flags = torch.tensor([t.requires_grad for t in inputs])
    return flags.any()
""",
        ),
        Wrong(
            "only leaves that require grad count",
            None,
            """
def output_requires_grad(*inputs):
    return any(t.requires_grad and t.is_leaf for t in inputs)
""",
        ),
        Wrong(
            "a Parameter among the inputs decides",
            None,
            """
def output_requires_grad(*inputs):
    return any(isinstance(t, torch.nn.Parameter) for t in inputs)
""",
        ),
        Wrong(
            "floating-point inputs decide",
            None,
            """
def output_requires_grad(*inputs):
    return any(t.is_floating_point() for t in inputs)
""",
        ),
    ],
    "ex3_make_trainable": [
        Wrong(
            "asks integer data to require grad",
            "RG-3",
            """
def make_trainable(values, device):
    return torch.tensor(values, device=device, requires_grad=True)
""",
        ),
        Wrong(
            "requires grad first, converts to float after",
            "RG-3",
            """
def make_trainable(values, device):
    t = torch.tensor(values, device=device)
    t.requires_grad_()
    return t.float()
""",
        ),
        Wrong(
            "float64 where float32 is asked",
            None,
            """
def make_trainable(values, device):
    return torch.tensor(values, dtype=torch.float64, device=device, requires_grad=True)
""",
        ),
        Wrong(
            "integer tensor, no requires_grad",
            None,
            """
def make_trainable(values, device):
    return torch.tensor(values, device=device)
""",
        ),
        Wrong(
            "assumes a 2-D list",
            None,
            """
def make_trainable(values, device):
    rows, cols = len(values), len(values[0])
    t = torch.zeros(rows, cols, device=device)
    for i in range(rows):
        for j in range(cols):
            t[i, j] = values[i][j]
    return t.requires_grad_()
""",
        ),
        Wrong(
            "flattens the values",
            None,
            """
def make_trainable(values, device):
    t = torch.tensor(values, dtype=torch.float32, device=device)
    return t.flatten().requires_grad_()
""",
        ),
        Wrong(
            "moves to the device after requiring grad (not a leaf any more)",
            None,
            """
def make_trainable(values, device):
    t = torch.tensor(values, dtype=torch.float32, requires_grad=True)
    return t.to(device)
""",
            devices=("cuda",),
        ),
        Wrong(
            "uses the global DEVICE instead of the argument",
            None,
            _DEVICE
            + """
def make_trainable(values, device):
    return torch.tensor(values, dtype=torch.float32, device=DEVICE, requires_grad=True)
""",
            devices=("cuda",),
        ),
        Wrong(
            "squeezes away dimensions of size 1",
            None,
            """
def make_trainable(values, device):
    t = torch.tensor(values, dtype=torch.float32, device=device).squeeze()
    return t.requires_grad_()
""",
        ),
        Wrong(
            "stores the integers as int8 first",
            None,
            """
def make_trainable(values, device):
    small = torch.tensor(values, dtype=torch.int8, device=device)
    return small.float().requires_grad_()
""",
        ),
        Wrong(
            "goes through float16",
            None,
            """
def make_trainable(values, device):
    half = torch.tensor(values, dtype=torch.float16, device=device)
    return half.float().requires_grad_()
""",
        ),
    ],
    "ex4_per_batch_grads": [
        Wrong(
            "gradients remembered per w and batches (their ids and shapes, in order)",
            None,
            """
_computed = {}


def per_batch_grads(w, batches):
    key = (id(w), tuple((id(x), tuple(x.shape)) for x in batches))
    if key not in _computed:
        grads = []
        for x in batches:
            w.grad = None
            ((x @ w) ** 2).mean().backward()
            grads.append(w.grad.clone())
        _computed[key] = grads
    return [g.clone() for g in _computed[key]]
""",
        ),
        Wrong(
            "never resets w.grad",
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
        Wrong(
            "resets w.grad only after storing it",
            "RG-4",
            """
def per_batch_grads(w, batches):
    grads = []
    for x in batches:
        loss = ((x @ w) ** 2).mean()
        loss.backward()
        grads.append(w.grad.clone())
        w.grad.zero_()
    return grads
""",
        ),
        Wrong(
            "zero_() on a gradient that may be None",
            None,
            """
def per_batch_grads(w, batches):
    grads = []
    for x in batches:
        w.grad.zero_()
        loss = ((x @ w) ** 2).mean()
        loss.backward()
        grads.append(w.grad.clone())
    return grads
""",
        ),
        Wrong(
            "stores w.grad itself, then zeroes it in place",
            None,
            """
def per_batch_grads(w, batches):
    grads = []
    for x in batches:
        if w.grad is not None:
            w.grad.zero_()
        loss = ((x @ w) ** 2).mean()
        loss.backward()
        grads.append(w.grad)
    return grads
""",
        ),
        Wrong(
            "sum instead of mean",
            None,
            """
def per_batch_grads(w, batches):
    grads = []
    for x in batches:
        w.grad = None
        loss = ((x @ w) ** 2).sum()
        loss.backward()
        grads.append(w.grad.clone())
    return grads
""",
        ),
        Wrong(
            "hard-coded zeros of length 4",
            None,
            """
def per_batch_grads(w, batches):
    grads = []
    for x in batches:
        w.grad = torch.zeros(4)
        loss = ((x @ w) ** 2).mean()
        loss.backward()
        grads.append(w.grad.clone())
    return grads
""",
        ),
        Wrong(
            "a hook on w captures each gradient and is never removed",
            None,
            """
def per_batch_grads(w, batches):
    grads = []
    w.register_hook(lambda g: grads.append(g.clone()))
    for x in batches:
        ((x @ w) ** 2).mean().backward()
    return grads
""",
        ),
        Wrong(
            "backward(create_graph=True): the copies carry a graph",
            None,
            """
def per_batch_grads(w, batches):
    grads = []
    for x in batches:
        w.grad = None
        ((x @ w) ** 2).mean().backward(create_graph=True)
        grads.append(w.grad.clone())
    return grads
""",
        ),
        Wrong(
            "zeroes w.grad once, before the loop",
            "RG-4",
            """
def per_batch_grads(w, batches):
    w.grad = torch.zeros_like(w)
    grads = []
    for x in batches:
        ((x @ w) ** 2).mean().backward()
        grads.append(w.grad.clone())
    return grads
""",
        ),
        Wrong(
            "divides by the width d instead of the number of rows",
            None,
            """
def per_batch_grads(w, batches):
    grads = []
    for x in batches:
        w.grad = None
        loss = ((x @ w) ** 2).sum() / len(w)
        loss.backward()
        grads.append(w.grad.clone())
    return grads
""",
        ),
    ],
    "ex5_backward_seed": [
        Wrong(
            "a FloatTensor([1.0]) seed",
            "RG-5",
            """
def backward_seed(loss):
    return torch.FloatTensor([1.0])
""",
        ),
        Wrong(
            "a one-element vector in the loss's dtype and device",
            "RG-5",
            """
def backward_seed(loss):
    return torch.ones(1, dtype=loss.dtype, device=loss.device)
""",
        ),
        Wrong(
            "the loss itself as the seed",
            None,
            """
def backward_seed(loss):
    return loss.detach().clone()
""",
        ),
        Wrong(
            "zeros instead of ones",
            None,
            """
def backward_seed(loss):
    return torch.zeros_like(loss)
""",
        ),
        Wrong(
            "runs backward to try the seed",
            None,
            """
def backward_seed(loss):
    seed = torch.ones_like(loss)
    loss.backward(gradient=seed, retain_graph=True)
    return seed
""",
        ),
        Wrong(
            "sets the default dtype to the loss's",
            None,
            """
def backward_seed(loss):
    torch.set_default_dtype(loss.dtype)
    return torch.ones(())
""",
        ),
        Wrong(
            "loss / loss (not a number when the loss is 0)",
            None,
            """
def backward_seed(loss):
    return loss.detach() / loss.detach()
""",
        ),
        Wrong(
            "fills the caller's loss with ones (detach shares its storage)",
            None,
            """
def backward_seed(loss):
    return loss.detach().fill_(1.0)
""",
        ),
        Wrong(
            "loss.new_ones(1)",
            "RG-5",
            """
def backward_seed(loss):
    return loss.new_ones(1)
""",
        ),
        Wrong(
            "a 1x1 identity matrix",
            "RG-5",
            """
def backward_seed(loss):
    return torch.eye(1, dtype=loss.dtype, device=loss.device)
""",
        ),
        Wrong(
            "the Python float 1.0",
            None,
            """
def backward_seed(loss):
    return 1.0
""",
        ),
    ],
    "ex6_finetune_last_layer": [
        Wrong(
            "turns off requires_grad on the input batch",
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
        Wrong(
            "eval() to freeze the first layers",
            "RG-6",
            """
def finetune_last_layer(model, x, target, lr):
    model[:-1].eval()
    optimizer = torch.optim.SGD(model[-1].parameters(), lr=lr)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
        ),
        Wrong(
            "freezes model[0] only",
            None,
            """
def finetune_last_layer(model, x, target, lr):
    model[0].requires_grad_(False)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(params, lr=lr)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
        ),
        Wrong(
            "trains model[2], taken for the last layer",
            None,
            """
def finetune_last_layer(model, x, target, lr):
    model.requires_grad_(False)
    model[2].requires_grad_(True)
    optimizer = torch.optim.SGD(model[2].parameters(), lr=lr)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
        ),
        Wrong(
            "no zero_grad, optimizer over every parameter",
            None,
            """
def finetune_last_layer(model, x, target, lr):
    for p in model[:-1].parameters():
        p.requires_grad = False
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    loss = torch.nn.functional.mse_loss(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
        ),
        Wrong(
            "puts the model in train mode",
            None,
            """
def finetune_last_layer(model, x, target, lr):
    model.train()
    model[:-1].requires_grad_(False)
    optimizer = torch.optim.SGD(model[-1].parameters(), lr=lr)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
        ),
        Wrong(
            "returns the loss tensor",
            None,
            """
def finetune_last_layer(model, x, target, lr):
    model[:-1].requires_grad_(False)
    optimizer = torch.optim.SGD(model[-1].parameters(), lr=lr)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), target)
    loss.backward()
    optimizer.step()
    return loss
""",
        ),
        Wrong(
            "hard-codes the learning rate 0.1",
            None,
            """
def finetune_last_layer(model, x, target, lr):
    model[:-1].requires_grad_(False)
    optimizer = torch.optim.SGD(model[-1].parameters(), lr=0.1)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
        ),
        Wrong(
            "unfreezes the other layers after the step",
            None,
            """
def finetune_last_layer(model, x, target, lr):
    model[:-1].requires_grad_(False)
    optimizer = torch.optim.SGD(model[-1].parameters(), lr=lr)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), target)
    loss.backward()
    optimizer.step()
    model.requires_grad_(True)
    return loss.item()
""",
        ),
        Wrong(
            "train() for the step, then model.train(was): submodules' own modes lost",
            None,
            """
def finetune_last_layer(model, x, target, lr):
    was_training = model.training
    model.train()
    model[:-1].requires_grad_(False)
    optimizer = torch.optim.SGD(model[-1].parameters(), lr=lr)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), target)
    loss.backward()
    optimizer.step()
    model.train(was_training)
    return loss.item()
""",
        ),
        Wrong(
            "a second forward pass to print the new loss",
            None,
            """
def finetune_last_layer(model, x, target, lr):
    model[:-1].requires_grad_(False)
    optimizer = torch.optim.SGD(model[-1].parameters(), lr=lr)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), target)
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        after = torch.nn.functional.mse_loss(model(x), target)
    print(f"loss {loss.item():.4f} -> {after.item():.4f}")
    return loss.item()
""",
        ),
    ],
    "ex7_to_device": [
        Wrong(
            "drops the results of .to",
            "RG-7",
            """
def to_device(batch, model, device, dtype):
    batch.to(device=device, dtype=dtype)
    model.to(device=device, dtype=dtype)
    return batch, model
""",
        ),
        Wrong(
            "drops the batch's .to result only",
            "RG-7",
            """
def to_device(batch, model, device, dtype):
    batch.to(device, dtype)
    model = model.to(device, dtype)
    return batch, model
""",
        ),
        Wrong(
            "forgets the batch's dtype",
            None,
            """
def to_device(batch, model, device, dtype):
    batch = batch.to(device)
    model.to(device=device, dtype=dtype)
    return batch, model
""",
        ),
        Wrong(
            "forgets the model's dtype",
            None,
            """
def to_device(batch, model, device, dtype):
    batch = batch.to(device=device, dtype=dtype)
    model = model.to(device)
    return batch, model
""",
        ),
        Wrong(
            "hard-coded float64",
            None,
            """
def to_device(batch, model, device, dtype):
    batch = batch.double().to(device)
    model = model.double().to(device)
    return batch, model
""",
        ),
        Wrong(
            "leaves grad mode off",
            None,
            """
def to_device(batch, model, device, dtype):
    torch.set_grad_enabled(False)  # moving data needs no graph
    batch = batch.to(device=device, dtype=dtype)
    model.to(device=device, dtype=dtype)
    return batch, model
""",
        ),
        Wrong(
            "ignores the device argument",
            None,
            """
def to_device(batch, model, device, dtype):
    return batch.to(dtype), model.to(dtype)
""",
            devices=("cuda",),
        ),
        Wrong(
            "uses the global DEVICE instead of the argument",
            None,
            _DEVICE
            + """
def to_device(batch, model, device, dtype):
    batch = batch.to(DEVICE, dtype)
    model.to(DEVICE, dtype)
    return batch, model
""",
            devices=("cuda",),
        ),
        Wrong(
            "moves parameters through .data (buffers stay behind)",
            None,
            """
def to_device(batch, model, device, dtype):
    for p in model.parameters():
        p.data = p.data.to(device, dtype)
    return batch.to(device, dtype), model
""",
        ),
        Wrong(
            "moves every parameter and buffer through .data (integer buffers too)",
            None,
            """
def to_device(batch, model, device, dtype):
    for t in list(model.parameters()) + list(model.buffers()):
        t.data = t.data.to(device, dtype)
    return batch.to(device, dtype), model
""",
        ),
        Wrong(
            "puts the model in eval mode while moving it",
            None,
            """
def to_device(batch, model, device, dtype):
    model = model.eval().to(device=device, dtype=dtype)
    return batch.to(device=device, dtype=dtype), model
""",
        ),
    ],
}

RIGHT: dict[str, list[Right]] = {
    "ex1_product_grads": [
        Right(
            "torch.autograd.backward, copies made with empty_like(...).copy_",
            """
def product_grads(a, b):
    a2 = torch.empty_like(a).copy_(a).requires_grad_()
    b2 = torch.empty_like(b).copy_(b).requires_grad_()
    c = a2 * b2
    c.retain_grad()
    torch.autograd.backward(c.square().sum())
    return a2.grad, b2.grad, c.grad
""",
        ),
        Right(
            "torch.autograd.grad with respect to a, b and c",
            """
def product_grads(a, b):
    a = a.clone().requires_grad_(True)
    b = b.clone().requires_grad_(True)
    c = a * b
    y = (c ** 2).sum()
    return torch.autograd.grad(y, (a, b, c))
""",
        ),
        Right(
            "a hook on c captures its gradient",
            """
def product_grads(a, b):
    a = a.detach().requires_grad_()
    b = b.detach().requires_grad_()
    c = a * b
    captured = []
    c.register_hook(lambda grad: captured.append(grad))
    (c ** 2).sum().backward()
    return a.grad, b.grad, captured[0]
""",
        ),
        Right(
            "nn.Parameter copies and functional ops",
            """
def product_grads(a, b):
    a_leaf = torch.nn.Parameter(a.clone())
    b_leaf = torch.nn.Parameter(b.clone())
    c = torch.mul(a_leaf, b_leaf)
    c.retain_grad()
    y = torch.sum(torch.pow(c, 2))
    y.backward()
    return (a_leaf.grad, b_leaf.grad, c.grad)
""",
        ),
        Right(
            "a class with __call__, an instance as the function",
            """
class ProductGrads:
    def __call__(self, a, b):
        a = a.detach().clone().requires_grad_()
        b = b.detach().clone().requires_grad_()
        c = a * b
        c.retain_grad()
        torch.dot(c, c).backward()
        return a.grad, b.grad, c.grad


product_grads = ProductGrads()
""",
        ),
        Right(
            "a helper under another name, aliased",
            """
def grads_of_product(a, b):
    a2 = torch.tensor(a.tolist(), dtype=a.dtype, device=a.device, requires_grad=True)
    b2 = torch.tensor(b.tolist(), dtype=b.dtype, device=b.device, requires_grad=True)
    c = a2 * b2
    c.retain_grad()
    y = (c * c).sum()
    y.backward()
    return a2.grad, b2.grad, c.grad


product_grads = grads_of_product
""",
        ),
    ],
    "ex2_output_requires_grad": [
        Right(
            "a loop with an early return",
            """
def output_requires_grad(*inputs):
    for t in inputs:
        if t.requires_grad:
            return True
    return False
""",
        ),
        Right(
            "membership test on a list of flags",
            """
def output_requires_grad(*inputs):
    return True in [t.requires_grad for t in inputs]
""",
        ),
        Right(
            "any over map",
            """
def output_requires_grad(*inputs):
    return any(map(lambda t: t.requires_grad, inputs))
""",
        ),
        Right(
            "prints each input while deciding",
            """
def output_requires_grad(*inputs):
    result = False
    for t in inputs:
        print(t)
        result = result or t.requires_grad
    return result
""",
        ),
        Right(
            "counts the inputs that require grad",
            """
def output_requires_grad(*inputs):
    count = sum(1 for t in inputs if t.requires_grad)
    return count > 0
""",
        ),
        Right(
            "a lambda bound at module level",
            """
output_requires_grad = lambda *inputs: any(t.requires_grad for t in inputs)  # noqa: E731
""",
        ),
    ],
    "ex3_make_trainable": [
        Right(
            "float() then requires_grad_()",
            """
def make_trainable(values, device):
    return torch.tensor(values, device=device).float().requires_grad_()
""",
        ),
        Right(
            "as_tensor with the default dtype",
            """
def make_trainable(values, device):
    t = torch.as_tensor(values, dtype=torch.get_default_dtype(), device=device)
    t.requires_grad = True
    return t
""",
        ),
        Right(
            "an nn.Parameter",
            """
def make_trainable(values, device):
    data = torch.tensor(values, dtype=torch.float, device=device)
    return torch.nn.Parameter(data)
""",
        ),
        Right(
            "to(device, float32) before requires_grad_",
            """
def make_trainable(values, device):
    t = torch.tensor(values).to(device, torch.float32)
    return t.requires_grad_(True)
""",
        ),
        Right(
            "a module-level dtype constant, nn.Parameter(..., requires_grad=True)",
            """
FLOAT = torch.float32


def make_trainable(values, device):
    return torch.nn.Parameter(torch.tensor(values, device=device).to(FLOAT), requires_grad=True)
""",
        ),
        Right(
            "torch.FloatTensor, moved before requires_grad_",
            """
def make_trainable(values, device):
    t = torch.FloatTensor(values).to(device)
    t.requires_grad_(True)
    return t
""",
        ),
    ],
    "ex4_per_batch_grads": [
        Right(
            "torch.autograd.grad, .grad untouched",
            """
def per_batch_grads(w, batches):
    return [torch.autograd.grad(((x @ w) ** 2).mean(), w)[0] for x in batches]
""",
        ),
        Right(
            "zero_() when there is a gradient",
            """
def per_batch_grads(w, batches):
    grads = []
    for x in batches:
        if w.grad is not None:
            w.grad.zero_()
        loss = ((x @ w) ** 2).mean()
        loss.backward()
        grads.append(w.grad.detach().clone())
    return grads
""",
        ),
        Right(
            "an optimizer used only for zero_grad",
            """
def per_batch_grads(w, batches):
    optimizer = torch.optim.SGD([w], lr=0.1)
    grads = []
    for x in batches:
        optimizer.zero_grad()
        loss = ((x @ w) ** 2).mean()
        loss.backward()
        grads.append(w.grad.clone())
    return grads
""",
        ),
        Right(
            "a fresh zeros_like gradient before each backward",
            """
def per_batch_grads(w, batches):
    grads = []
    for x in batches:
        w.grad = torch.zeros_like(w)
        ((x @ w) ** 2).mean().backward()
        grads.append(w.grad.clone())
    return grads
""",
        ),
        Right(
            "a hook captures each gradient, removed in finally",
            """
def per_batch_grads(w, batches):
    grads = []
    handle = w.register_hook(lambda g: grads.append(g.detach().clone()))
    try:
        for x in batches:
            ((x @ w) ** 2).mean().backward()
    finally:
        handle.remove()
    return grads
""",
        ),
        Right(
            "a while loop over indices, w.grad = None",
            """
def per_batch_grads(w, batches):
    grads = []
    i = 0
    while i < len(batches):
        w.grad = None
        x = batches[i]
        torch.mean(torch.square(torch.matmul(x, w))).backward()
        grads.append(torch.clone(w.grad))
        i += 1
    return grads
""",
        ),
    ],
    "ex5_backward_seed": [
        Right(
            "torch.tensor(1.0)",
            """
def backward_seed(loss):
    return torch.tensor(1.0)
""",
        ),
        Right(
            "torch.ones(())",
            """
def backward_seed(loss):
    return torch.ones(())
""",
        ),
        Right(
            "ones of shape () in the loss's dtype and device",
            """
def backward_seed(loss):
    return torch.ones((), dtype=loss.dtype, device=loss.device)
""",
        ),
        Right(
            "loss.new_tensor(1.0)",
            """
def backward_seed(loss):
    return loss.new_tensor(1.0)
""",
        ),
        Right(
            "torch.ones(loss.shape)",
            """
def backward_seed(loss):
    return torch.ones(loss.shape)
""",
        ),
        Right(
            "ones_like that requires grad",
            """
def backward_seed(loss):
    return torch.ones_like(loss, requires_grad=True)
""",
        ),
        Right(
            "an integer 0-dim tensor, bound at module level",
            """
ONE = torch.tensor(1)


def backward_seed(loss):
    return ONE
""",
        ),
    ],
    "ex6_finetune_last_layer": [
        Right(
            "requires_grad loops, optimizer over model[-1].parameters()",
            """
def finetune_last_layer(model, x, target, lr):
    for p in model.parameters():
        p.requires_grad = False
    for p in model[-1].parameters():
        p.requires_grad = True
    optimizer = torch.optim.SGD(model[-1].parameters(), lr=lr)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
        ),
        Right(
            "parameter names decide, float(loss)",
            """
def finetune_last_layer(model, x, target, lr):
    last = str(len(model) - 1)
    for name, p in model.named_parameters():
        p.requires_grad_(name.split(".")[0] == last)
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=lr)
    optimizer.zero_grad(set_to_none=True)
    loss = torch.nn.functional.mse_loss(model(x), target)
    loss.backward()
    optimizer.step()
    return float(loss)
""",
        ),
        Right(
            "model.zero_grad(), optimizer over every parameter",
            """
import torch.nn.functional as F

def finetune_last_layer(model, x, target, lr):
    model.requires_grad_(False)
    model[-1].requires_grad_(True)
    model.zero_grad()
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    loss = F.mse_loss(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
        ),
        Right(
            "children() list, frozen layer by layer",
            """
def finetune_last_layer(model, x, target, lr):
    layers = list(model.children())
    for layer in layers[:-1]:
        for p in layer.parameters():
            p.requires_grad_(False)
    head = layers[-1]
    optimizer = torch.optim.SGD(head.parameters(), lr=lr)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.detach().item()
""",
        ),
        Right(
            "criterion = nn.MSELoss() at module level, a for loop over the first layers",
            """
criterion = torch.nn.MSELoss()


def finetune_last_layer(model, x, target, lr):
    for layer in model[:-1]:
        layer.requires_grad_(False)
    optimizer = torch.optim.SGD(model[-1].parameters(), lr)
    optimizer.zero_grad()
    loss = criterion(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()
""",
        ),
        Right(
            "a class with __call__, the step by hand under no_grad",
            """
class LastLayerStep:
    def __call__(self, model, x, target, lr):
        model[:-1].requires_grad_(False)
        head = list(model[-1].parameters())
        loss = torch.nn.functional.mse_loss(model(x), target)
        grads = torch.autograd.grad(loss, head)
        with torch.no_grad():
            for p, g in zip(head, grads):
                p -= lr * g
        return loss.item()


finetune_last_layer = LastLayerStep()
""",
        ),
    ],
    "ex7_to_device": [
        Right(
            "returns the results of .to directly",
            """
def to_device(batch, model, device, dtype):
    return batch.to(device, dtype), model.to(device, dtype)
""",
        ),
        Right(
            "device first, dtype second",
            """
def to_device(batch, model, device, dtype):
    batch = batch.to(device).to(dtype)
    model = model.to(device).to(dtype)
    return batch, model
""",
        ),
        Right(
            "moves a deep copy of the model",
            """
import copy

def to_device(batch, model, device, dtype):
    moved_model = copy.deepcopy(model).to(device=device, dtype=dtype)
    moved_batch = torch.as_tensor(batch, device=device, dtype=dtype)
    return moved_batch, moved_model
""",
        ),
        Right(
            "keyword arguments, the model moved before the batch",
            """
def to_device(batch, model, device, dtype):
    model.to(device=torch.device(device), dtype=dtype)
    batch = batch.to(device=torch.device(device), dtype=dtype)
    return (batch, model)
""",
        ),
        Right(
            "a helper aliased, dtype before device",
            """
def move(batch, model, device, dtype):
    return batch.to(dtype=dtype).to(device), model.to(dtype=dtype).to(device)


to_device = move
""",
        ),
        Right(
            "model.to then batch via torch.as_tensor",
            """
def to_device(batch, model, device, dtype):
    model.to(device, dtype)
    return torch.as_tensor(batch, dtype=dtype, device=device), model
""",
        ),
    ],
}
