"""Catalogued answers for lesson 07 (see catalog/__init__.py)."""

from catalog import Right, Wrong

WRONG: dict[str, list[Wrong]] = {
    "ex1_silu": [
        Wrong(
            "the legacy style: an instance with __init__ and a non-static forward",
            "CF-1",
            """
class SiLU(torch.autograd.Function):
    def __init__(self):
        super().__init__()
        self.x = None

    def forward(self, x):
        self.x = x
        return x * torch.sigmoid(x)

    def backward(self, grad_out):
        s = torch.sigmoid(self.x)
        return grad_out * s * (1 + self.x * (1 - s))


def silu(x):
    return SiLU()(x)
""",
        ),
        Wrong(
            "backward forgets the product rule",
            None,
            """
class SiLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(x)


def silu(x):
    return SiLU.apply(x)
""",
        ),
        Wrong(
            "backward ignores grad_out",
            None,
            """
class SiLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        return s * (1 + x * (1 - s))


def silu(x):
    return SiLU.apply(x)
""",
        ),
        Wrong(
            "no Function at all: autograd's own SiLU",
            None,
            """
def silu(x):
    return x * torch.sigmoid(x)
""",
        ),
        Wrong(
            "computed in float32 whatever the input's dtype",
            None,
            """
class SiLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x = x.float()
        ctx.save_for_backward(x)
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        return grad_out.float() * s * (1 + x * (1 - s))


def silu(x):
    return SiLU.apply(x)
""",
        ),
        Wrong(
            "backward returns a gradient for a second, non-existent input",
            None,
            """
class SiLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        return grad_out * s * (1 + x * (1 - s)), grad_out


def silu(x):
    return SiLU.apply(x)
""",
        ),
        Wrong(
            "a CPU tensor of ones in backward: wrong on a GPU",
            None,
            """
class SiLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        return grad_out * s * (torch.ones(x.shape) + x * (1 - s))


def silu(x):
    return SiLU.apply(x)
""",
            devices=("cuda",),
        ),
        Wrong(
            "the derivative written with exp: (1 + e) ** 2 overflows to NaN for large negative x",
            None,
            """
class SwishFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, inp):
        ctx.save_for_backward(inp)
        return inp / (1 + torch.exp(-inp))

    @staticmethod
    def backward(ctx, grad_output):
        (inp,) = ctx.saved_tensors
        e = torch.exp(-inp)
        derivative = (1 + e + inp * e) / (1 + e) ** 2
        return derivative * grad_output


def silu(x):
    y = SwishFunction.apply(x)
    return y
""",
        ),
        Wrong(
            "backward multiplies the incoming gradient in place",
            None,
            """
class SiLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        return grad_out.mul_(s * (1 + x * (1 - s)))


def silu(x):
    return SiLU.apply(x)
""",
        ),
        Wrong(
            "requires_grad switched on for the caller's x",
            None,
            """
class SiLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        return grad_out * s * (1 + x * (1 - s))


def silu(x):
    if x.is_leaf:
        x.requires_grad_()
    return SiLU.apply(x)
""",
        ),
        Wrong(
            "view(-1) in forward: a non-contiguous x raises",
            None,
            """
class SiLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        flat = x.view(-1)
        ctx.save_for_backward(x)
        return (flat * torch.sigmoid(flat)).view(x.shape)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        return grad_out * s * (1 + x * (1 - s))


def silu(x):
    return SiLU.apply(x)
""",
        ),
        Wrong(
            "the caller's stale .grad cleared",
            None,
            """
class SiLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        return grad_out * s * (1 + x * (1 - s))


def silu(x):
    if x.is_leaf:
        x.grad = None
    return SiLU.apply(x)
""",
        ),
    ],
    "ex2_quantise": [
        Wrong(
            "backward returns one gradient, for the one output",
            "CF-2",
            """
class Quantise(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, step):
        return torch.round(x / step) * step

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out


def quantise(x, step):
    return Quantise.apply(x, step)
""",
        ),
        Wrong(
            "the legacy style: the step kept on an instance",
            "CF-1",
            """
class Quantise(torch.autograd.Function):
    def __init__(self, step):
        super().__init__()
        self.step = step

    def forward(self, x):
        return torch.round(x / self.step) * self.step

    def backward(self, grad_out):
        return grad_out


def quantise(x, step):
    return Quantise(step)(x)
""",
        ),
        Wrong(
            "plain rounding: autograd's gradient of round is zero",
            None,
            """
def quantise(x, step):
    return torch.round(x / step) * step
""",
        ),
        Wrong(
            "a zero tensor as the gradient of the float step",
            None,
            """
class Quantise(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, step):
        return torch.round(x / step) * step

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, torch.zeros(())


def quantise(x, step):
    return Quantise.apply(x, step)
""",
        ),
        Wrong(
            "the step of the example hard-coded",
            None,
            """
class Quantise(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, step):
        return torch.round(x * 2) / 2

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, None


def quantise(x, step):
    return Quantise.apply(x, step)
""",
        ),
        Wrong(
            "backward scales the gradient by the step",
            None,
            """
class Quantise(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, step):
        ctx.step = step
        return torch.round(x / step) * step

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out * ctx.step, None


def quantise(x, step):
    return Quantise.apply(x, step)
""",
        ),
        Wrong(
            "floor(x / step + 0.5): ties round up, not to even",
            None,
            """
class Quantise(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, step):
        return torch.floor(x / step + 0.5) * step

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, None


def quantise(x, step):
    return Quantise.apply(x, step)
""",
        ),
        Wrong(
            "requires_grad switched on for the caller's x",
            None,
            """
def quantise(x, step):
    x.requires_grad_(True)
    q = torch.round(x / step) * step
    return x + (q - x).detach()
""",
        ),
        Wrong(
            "the result rebuilt as a new leaf: nothing reaches x",
            None,
            """
def quantise(x, step):
    q = torch.round(x / step) * step
    return q.detach().requires_grad_(x.requires_grad)
""",
        ),
    ],
    "ex3_backward_is_correct": [
        Wrong(
            "the Jacobians compared by hand on a flattened float64 copy: a function of the last"
            " dimension is checked at another input",
            None,
            """
def backward_is_correct(fn, x):
    x64 = x.detach().double().reshape(-1)
    eps = 1e-6
    rows_analytic, rows_numeric = [], []
    for i in range(x64.numel()):
        e = torch.zeros_like(x64)
        e[i] = 1.0
        xi = x64.clone().requires_grad_()
        (row,) = torch.autograd.grad(fn(xi), xi, e)
        rows_analytic.append(row)
        rows_numeric.append((fn(x64 + eps * e) - fn(x64 - eps * e)) / (2 * eps))
    analytic = torch.stack(rows_analytic)
    numeric = torch.stack(rows_numeric).detach().t()
    return bool(torch.allclose(analytic, numeric, rtol=1e-3, atol=1e-5))
""",
        ),
        Wrong(
            "gradcheck on the float32 input as it comes",
            "CF-3",
            """
def backward_is_correct(fn, x):
    return torch.autograd.gradcheck(fn, (x,), raise_exception=False)
""",
        ),
        Wrong(
            "gradcheck in float32, raising",
            "CF-3",
            """
def backward_is_correct(fn, x):
    return torch.autograd.gradcheck(fn, (x,))
""",
        ),
        Wrong(
            "a hand-made finite difference in float32",
            "CF-3",
            """
def backward_is_correct(fn, x):
    x = x.detach().clone().requires_grad_()
    (analytic,) = torch.autograd.grad(fn(x).sum(), x)
    eps = 1e-6
    with torch.no_grad():
        numeric = (fn(x + eps) - fn(x - eps)) / (2 * eps)
    return torch.allclose(analytic, numeric, rtol=1e-3, atol=1e-5)
""",
        ),
        Wrong(
            "float64, but gradcheck left to raise",
            None,
            """
def backward_is_correct(fn, x):
    return torch.autograd.gradcheck(fn, (x.detach().double().requires_grad_(),))
""",
        ),
        Wrong(
            "a float64 copy that does not require grad",
            None,
            """
def backward_is_correct(fn, x):
    return torch.autograd.gradcheck(fn, (x.detach().double(),), raise_exception=False)
""",
        ),
        Wrong(
            "the caller's tensor turned into float64",
            None,
            """
def backward_is_correct(fn, x):
    x.data = x.data.double()
    return torch.autograd.gradcheck(fn, (x,), raise_exception=False)
""",
        ),
        Wrong(
            "the default dtype switched to float64 and left there",
            None,
            """
def backward_is_correct(fn, x):
    torch.set_default_dtype(torch.float64)
    x64 = x.detach().to(torch.get_default_dtype()).requires_grad_()
    return torch.autograd.gradcheck(fn, (x64,), raise_exception=False)
""",
        ),
        Wrong(
            "trusts every backward",
            None,
            """
def backward_is_correct(fn, x):
    return True
""",
        ),
        Wrong(
            "gradcheck's fast mode: a backward that transposes the Jacobian goes unseen",
            None,
            """
def backward_is_correct(fn, x):
    return torch.autograd.gradcheck(fn, x.double(), fast_mode=True, raise_exception=False)
""",
        ),
        Wrong(
            "finite differences of all entries at once: J·1 compared with 1ᵀJ",
            None,
            """
def backward_is_correct(fn, x):
    x64 = x.detach().double().requires_grad_()
    (analytic,) = torch.autograd.grad(fn(x64).sum(), x64)
    eps = 1e-6
    with torch.no_grad():
        numeric = (fn(x64 + eps) - fn(x64 - eps)) / (2 * eps)
    return torch.allclose(analytic, numeric, rtol=1e-3, atol=1e-5)
""",
        ),
        Wrong(
            "detach_ instead of detach: the caller's x loses requires_grad",
            None,
            """
def backward_is_correct(fn, x):
    x64 = x.detach_().double().requires_grad_()
    return torch.autograd.gradcheck(fn, (x64,), raise_exception=False)
""",
        ),
        Wrong(
            "the verdict remembered per fn (by its id): a backward fixed later is never checked",
            None,
            """
_verdicts = {}


def backward_is_correct(fn, x):
    if id(fn) not in _verdicts:
        x64 = x.detach().double().requires_grad_()
        _verdicts[id(fn)] = torch.autograd.gradcheck(fn, (x64,), raise_exception=False)
    return _verdicts[id(fn)]
""",
        ),
        Wrong(
            "verdicts kept with their fn and x: the same fn, its backward fixed, gets the old one",
            None,
            """
_checked = []


def backward_is_correct(fn, x):
    for seen_fn, seen_x, verdict in _checked:
        if seen_fn is fn and seen_x is x:
            return verdict
    x64 = x.detach().double().requires_grad_()
    verdict = torch.autograd.gradcheck(fn, (x64,), raise_exception=False)
    _checked.append((fn, x, verdict))
    return verdict
""",
        ),
        Wrong(
            "x.type(torch.float64) is x itself for a float64 x: the caller's flag flips",
            None,
            """
def backward_is_correct(fn, x):
    x64 = x.type(torch.float64).requires_grad_()
    return torch.autograd.gradcheck(fn, (x64,), raise_exception=False)
""",
        ),
    ],
    "ex4_mul": [
        Wrong(
            "the inputs kept as ctx attributes",
            "CF-4",
            """
class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.a = a
        ctx.b = b
        return a * b

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out * ctx.b, grad_out * ctx.a


def mul(a, b):
    return Mul.apply(a, b)
""",
        ),
        Wrong(
            "copies kept as ctx attributes: safe, but not save_for_backward",
            "CF-4",
            """
class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.a = a.detach().clone()
        ctx.b = b.detach().clone()
        return a * b

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out * ctx.b, grad_out * ctx.a


def mul(a, b):
    return Mul.apply(a, b)
""",
        ),
        Wrong(
            "one gradient for the one output",
            "CF-2",
            """
class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad_out):
        a, b = ctx.saved_tensors
        return grad_out * a * b


def mul(a, b):
    return Mul.apply(a, b)
""",
        ),
        Wrong(
            "the legacy style",
            "CF-1",
            """
class Mul(torch.autograd.Function):
    def forward(self, a, b):
        self.save_for_backward(a, b)
        return a * b

    def backward(self, grad_out):
        a, b = self.saved_tensors
        return grad_out * b, grad_out * a


def mul(a, b):
    return Mul()(a, b)
""",
        ),
        Wrong(
            "the gradients swapped",
            None,
            """
class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad_out):
        a, b = ctx.saved_tensors
        return grad_out * a, grad_out * b


def mul(a, b):
    return Mul.apply(a, b)
""",
        ),
        Wrong(
            "no Function: autograd's own product",
            None,
            """
def mul(a, b):
    return a * b
""",
        ),
        Wrong(
            "backward ignores grad_out",
            None,
            """
class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad_out):
        a, b = ctx.saved_tensors
        return b, a


def mul(a, b):
    return Mul.apply(a, b)
""",
        ),
        Wrong(
            "clones saved with save_for_backward: a change goes unnoticed",
            "CF-4",
            """
class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a.clone(), b.clone())
        return a * b

    @staticmethod
    def backward(ctx, grad_out):
        a, b = ctx.saved_tensors
        return grad_out * b, grad_out * a


def mul(a, b):
    return Mul.apply(a, b)
""",
        ),
        Wrong(
            "needs_input_grad read at the wrong index",
            None,
            """
class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad_out):
        a, b = ctx.saved_tensors
        grad_a = grad_out * b if ctx.needs_input_grad[1] else None
        grad_b = grad_out * a if ctx.needs_input_grad[0] else None
        return grad_a, grad_b


def mul(a, b):
    return Mul.apply(a, b)
""",
        ),
        Wrong(
            "view(-1) in backward: non-contiguous inputs raise",
            None,
            """
class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad_out):
        a, b = ctx.saved_tensors
        g = grad_out.reshape(-1)
        return (g * b.view(-1)).view(a.shape), (g * a.view(-1)).view(b.shape)


def mul(a, b):
    return Mul.apply(a, b)
""",
        ),
    ],
    "ex5_soft_clip": [
        Wrong(
            "one gradient for the one output",
            "CF-2",
            """
class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, limit):
        y = limit * torch.tanh(x / limit)
        ctx.save_for_backward(y)
        ctx.limit = limit
        return y

    @staticmethod
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        return grad_out * (1 - (y / ctx.limit) ** 2)


def soft_clip(x, limit):
    return SoftClip.apply(x, limit)
""",
        ),
        Wrong(
            "the output kept as a ctx attribute",
            "CF-4",
            """
class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, limit):
        y = limit * torch.tanh(x / limit)
        ctx.y = y
        ctx.limit = limit
        return y

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out * (1 - (ctx.y / ctx.limit) ** 2), None


def soft_clip(x, limit):
    return SoftClip.apply(x, limit)
""",
        ),
        Wrong(
            "the input kept as a ctx attribute",
            "CF-4",
            """
class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, limit):
        ctx.x = x
        ctx.limit = limit
        return limit * torch.tanh(x / limit)

    @staticmethod
    def backward(ctx, grad_out):
        t = torch.tanh(ctx.x / ctx.limit)
        return grad_out * (1 - t * t), None


def soft_clip(x, limit):
    return SoftClip.apply(x, limit)
""",
        ),
        Wrong(
            "a zero tensor as the gradient of the float limit",
            None,
            """
class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, limit):
        t = torch.tanh(x / limit)
        ctx.save_for_backward(t)
        return limit * t

    @staticmethod
    def backward(ctx, grad_out):
        (t,) = ctx.saved_tensors
        return grad_out * (1 - t * t), torch.zeros(())


def soft_clip(x, limit):
    return SoftClip.apply(x, limit)
""",
        ),
        Wrong(
            "the chain rule applied twice: the limit left in the derivative",
            None,
            """
class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, limit):
        t = torch.tanh(x / limit)
        ctx.save_for_backward(t)
        ctx.limit = limit
        return limit * t

    @staticmethod
    def backward(ctx, grad_out):
        (t,) = ctx.saved_tensors
        return grad_out * ctx.limit * (1 - t * t), None


def soft_clip(x, limit):
    return SoftClip.apply(x, limit)
""",
        ),
        Wrong(
            "the limit of the example hard-coded",
            None,
            """
class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, limit):
        t = torch.tanh(x / 2.0)
        ctx.save_for_backward(t)
        return 2.0 * t

    @staticmethod
    def backward(ctx, grad_out):
        (t,) = ctx.saved_tensors
        return grad_out * (1 - t * t), None


def soft_clip(x, limit):
    return SoftClip.apply(x, limit)
""",
        ),
        Wrong(
            "the legacy style",
            "CF-1",
            """
class SoftClip(torch.autograd.Function):
    def __init__(self, limit):
        super().__init__()
        self.limit = limit

    def forward(self, x):
        y = self.limit * torch.tanh(x / self.limit)
        self.save_for_backward(y)
        return y

    def backward(self, grad_out):
        (y,) = self.saved_tensors
        return grad_out * (1 - (y / self.limit) ** 2)


def soft_clip(x, limit):
    return SoftClip(limit)(x)
""",
        ),
        Wrong(
            "tanh written with exp: NaN for large magnitudes",
            None,
            """
class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, limit):
        e = torch.exp(2 * x / limit)
        t = (e - 1) / (e + 1)
        ctx.save_for_backward(t)
        return limit * t

    @staticmethod
    def backward(ctx, grad_out):
        (t,) = ctx.saved_tensors
        return grad_out * (1 - t * t), None


def soft_clip(x, limit):
    return SoftClip.apply(x, limit)
""",
        ),
        Wrong(
            "requires_grad switched on for the caller's x",
            None,
            """
class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, limit):
        t = torch.tanh(x / limit)
        ctx.save_for_backward(t)
        return limit * t

    @staticmethod
    def backward(ctx, grad_out):
        (t,) = ctx.saved_tensors
        return grad_out * (1 - t * t), None


def soft_clip(x, limit):
    if x.is_leaf:
        x.requires_grad_()
    return SoftClip.apply(x, limit)
""",
        ),
    ],
    "ex6_softplus": [
        Wrong(
            "torch.where keeps x above 20 as it is, log1p(exp(x)) below: in float16 exp(x)"
            " overflows for 11 < x <= 20 (any dtype is allowed; large entries must not overflow)",
            None,
            """
class Softplus(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return torch.where(x > 20, x, torch.log1p(torch.exp(torch.clamp(x, max=20))))

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out / (1 + torch.exp(-x))


softplus = Softplus.apply
""",
        ),
        Wrong(
            "the ctx style: forward(ctx, x), no setup_context",
            "CF-5",
            """
class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.nn.functional.softplus(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(x)


def softplus(x):
    return Softplus.apply(x)
""",
        ),
        Wrong(
            "setup_context without generate_vmap_rule: vmap refuses",
            "CF-5",
            """
class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return torch.nn.functional.softplus(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(x)


def softplus(x):
    return Softplus.apply(x)
""",
        ),
        Wrong(
            "x kept as an attribute in setup_context",
            "CF-4",
            """
class Softplus(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return torch.nn.functional.softplus(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.x = inputs[0]

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out * torch.sigmoid(ctx.x)


def softplus(x):
    return Softplus.apply(x)
""",
        ),
        Wrong(
            "backward ignores grad_out",
            None,
            """
class Softplus(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return torch.nn.functional.softplus(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return torch.sigmoid(x) + 0 * grad_out


def softplus(x):
    return Softplus.apply(x)
""",
        ),
        Wrong(
            "backward uses the derivative of the sigmoid, not the sigmoid",
            None,
            """
class Softplus(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return torch.nn.functional.softplus(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        return grad_out * s * (1 - s)


def softplus(x):
    return Softplus.apply(x)
""",
        ),
        Wrong(
            "no Function at all: autograd's own softplus",
            None,
            """
def softplus(x):
    return torch.nn.functional.softplus(x)
""",
        ),
        Wrong(
            "log(1 + exp(x)) overflows to inf for large x in float32",
            None,
            """
class Softplus(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return torch.log(1 + torch.exp(x))

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(x)


def softplus(x):
    return Softplus.apply(x)
""",
        ),
        Wrong(
            "computed and returned in float32 whatever the input's dtype",
            None,
            """
class Softplus(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return torch.nn.functional.softplus(x.float())

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return (grad_out * torch.sigmoid(x.float())).to(x.dtype)


def softplus(x):
    return Softplus.apply(x)
""",
        ),
        Wrong(
            "ctx style with a hand-written vmap staticmethod: grad still refuses",
            "CF-5",
            """
class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.nn.functional.softplus(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(x)

    @staticmethod
    def vmap(info, in_dims, x):
        return Softplus.apply(x), in_dims[0]


def softplus(x):
    return Softplus.apply(x)
""",
        ),
        Wrong(
            "backward returns a tensor for a second, non-existent input",
            None,
            """
class Softplus(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return torch.nn.functional.softplus(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(x), grad_out


def softplus(x):
    return Softplus.apply(x)
""",
        ),
    ],
}

RIGHT: dict[str, list[Right]] = {
    "ex1_silu": [
        Right(
            "saves the input and the output, backward s + y·(1 - s)",
            """
class SiLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.nn.functional.silu(x)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad_out):
        x, y = ctx.saved_tensors
        s = torch.sigmoid(x)
        return grad_out * (s + y * (1 - s))


def silu(x):
    return SiLU.apply(x)
""",
        ),
        Right(
            "saves the sigmoid, an intermediate",
            """
class SiLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        s = x.sigmoid()
        ctx.save_for_backward(x, s)
        return x * s

    @staticmethod
    def backward(ctx, grad_out):
        x, s = ctx.saved_tensors
        return grad_out * (s + x * s * (1 - s))


def silu(x):
    return SiLU.apply(x)
""",
        ),
        Right(
            "the Function wrapped in a module, as a model would use it",
            """
class SiLUFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        return grad_out * s * (1 + x * (1 - s))


class SiLULayer(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return SiLUFunction.apply(x)


def silu(x):
    return SiLULayer()(x)
""",
        ),
        Right(
            "forward without ctx and setup_context, the style PyTorch recommends now",
            """
class SiLU(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x * torch.sigmoid(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        return grad_out * s * (1 + x * (1 - s))


def silu(x):
    return SiLU.apply(x)
""",
        ),
        Right(
            "silu = SiLU.apply, the alias PyTorch's documentation uses",
            """
class SiLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        return grad_out * s * (1 + x * (1 - s))


silu = SiLU.apply
""",
        ),
        Right(
            "once_differentiable, and a callable object as silu",
            """
from torch.autograd.function import once_differentiable


class SiLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.nn.functional.silu(x)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        return grad_out * (s + x * s * (1 - s))


class Activation:
    def __call__(self, x):
        return SiLU.apply(x)


silu = Activation()
""",
        ),
    ],
    "ex2_quantise": [
        Right(
            "the detach trick instead of a Function",
            """
def quantise(x, step):
    q = torch.round(x / step) * step
    return x + (q - x).detach()
""",
        ),
        Right(
            "a clone of grad_out and the step on ctx",
            """
class RoundToStep(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, step):
        ctx.step = step
        return torch.div(x, step).round().mul(step)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.clone(), None


def quantise(x, step):
    return RoundToStep.apply(x, step)
""",
        ),
        Right(
            "needs_input_grad respected",
            """
class Quantise(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, step):
        return (x / step).round() * step

    @staticmethod
    def backward(ctx, grad_out):
        grad_x = grad_out if ctx.needs_input_grad[0] else None
        return grad_x, None


def quantise(x, step):
    return Quantise.apply(x, step)
""",
        ),
        Right(
            "a clone rounded in place under no_grad: the gradient of clone passes through",
            """
def quantise(x, step):
    y = x.clone()
    with torch.no_grad():
        y.div_(step).round_().mul_(step)
    return y
""",
        ),
        Right(
            "quantise = Quantise.apply, with setup_context",
            """
class Quantise(torch.autograd.Function):
    @staticmethod
    def forward(x, step):
        return torch.round(x / step) * step

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, None


quantise = Quantise.apply
""",
        ),
    ],
    "ex3_backward_is_correct": [
        Right(
            "GradcheckError caught",
            """
def backward_is_correct(fn, x):
    x64 = x.detach().to(torch.float64).requires_grad_(True)
    try:
        return torch.autograd.gradcheck(fn, (x64,))
    except RuntimeError:  # GradcheckError is a RuntimeError
        return False
""",
        ),
        Right(
            "the Jacobians compared by hand in float64, at x's own shape",
            """
def backward_is_correct(fn, x):
    x64 = x.detach().double()
    eps = 1e-6
    rows_analytic, rows_numeric = [], []
    for i in range(x64.numel()):
        e = torch.zeros(x64.numel(), dtype=x64.dtype, device=x64.device)
        e[i] = 1.0
        e = e.reshape(x64.shape)
        xi = x64.clone().requires_grad_()
        (row,) = torch.autograd.grad(fn(xi), xi, e)
        rows_analytic.append(row.reshape(-1))
        step = (fn(x64 + eps * e) - fn(x64 - eps * e)) / (2 * eps)
        rows_numeric.append(step.reshape(-1))
    analytic = torch.stack(rows_analytic)
    numeric = torch.stack(rows_numeric).detach().t()
    return bool(torch.allclose(analytic, numeric, rtol=1e-3, atol=1e-5))
""",
        ),
        Right(
            "the default dtype switched to float64 and restored in finally",
            """
def backward_is_correct(fn, x):
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        x64 = x.detach().to(torch.get_default_dtype()).requires_grad_()
        return torch.autograd.gradcheck(fn, (x64,), raise_exception=False)
    finally:
        torch.set_default_dtype(previous)
""",
        ),
        Right(
            "gradcheck imported, its tolerances spelt out as keywords",
            """
from torch.autograd import gradcheck


def backward_is_correct(fn, x):
    inputs = (x.detach().to(dtype=torch.float64).requires_grad_(True),)
    return gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=False)
""",
        ),
        Right(
            "a checker object with __call__",
            """
class GradChecker:
    def __init__(self, dtype):
        self.dtype = dtype

    def __call__(self, fn, x):
        probe = x.detach().clone().to(self.dtype).requires_grad_()
        return bool(torch.autograd.gradcheck(fn, (probe,), raise_exception=False))


backward_is_correct = GradChecker(torch.float64)
""",
        ),
        Right(
            "a new float64 tensor from the values (tolist), requiring grad",
            """
def backward_is_correct(fn, x):
    probe = torch.tensor(x.tolist(), dtype=torch.float64, requires_grad=True)
    return torch.autograd.gradcheck(fn, (probe,), raise_exception=False)
""",
        ),
    ],
    "ex4_mul": [
        Right(
            "both gradients always, torch.mul",
            """
class Product(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return torch.mul(a, b)

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        return torch.mul(grad_output, b), torch.mul(grad_output, a)


def mul(a, b):
    return Product.apply(a, b)
""",
        ),
        Right(
            "the documentation's pattern: None unless needed",
            """
class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad_out):
        a, b = ctx.saved_tensors
        grad_a = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_a = b * grad_out
        if ctx.needs_input_grad[1]:
            grad_b = a * grad_out
        return grad_a, grad_b


def mul(a, b):
    return Mul.apply(a, b)
""",
        ),
        Right(
            "each input saved in its own call order, returned as a tuple",
            """
class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, left, right):
        ctx.save_for_backward(right, left)
        return left.mul(right)

    @staticmethod
    def backward(ctx, g):
        right, left = ctx.saved_tensors
        return (g.mul(right), g.mul(left))


def mul(a, b):
    out = Mul.apply(a, b)
    return out
""",
        ),
        Right(
            "detached inputs saved: they share the version counter, so a change still raises",
            """
class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a.detach(), b.detach())
        return a * b

    @staticmethod
    def backward(ctx, grad_out):
        a, b = ctx.saved_tensors
        return grad_out * b, grad_out * a


def mul(a, b):
    return Mul.apply(a, b)
""",
        ),
        Right(
            "mul = Mul.apply, with setup_context",
            """
class Mul(torch.autograd.Function):
    @staticmethod
    def forward(a, b):
        return a * b

    @staticmethod
    def setup_context(ctx, inputs, output):
        a, b = inputs
        ctx.save_for_backward(a, b)

    @staticmethod
    def backward(ctx, grad_out):
        a, b = ctx.saved_tensors
        return grad_out * b, grad_out * a


mul = Mul.apply
""",
        ),
    ],
    "ex5_soft_clip": [
        Right(
            "saves the input, recomputes tanh",
            """
class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, limit):
        ctx.save_for_backward(x)
        ctx.limit = limit
        return limit * torch.tanh(x / limit)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        t = torch.tanh(x / ctx.limit)
        return grad_out * (1 - t * t), None


def soft_clip(x, limit):
    return SoftClip.apply(x, limit)
""",
        ),
        Right(
            "saves tanh, an intermediate",
            """
class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, limit):
        t = torch.tanh(x / limit)
        ctx.save_for_backward(t)
        return limit * t

    @staticmethod
    def backward(ctx, grad_out):
        (t,) = ctx.saved_tensors
        return grad_out * (1 - t.pow(2)), None


def soft_clip(x, limit):
    return SoftClip.apply(x, limit)
""",
        ),
        Right(
            "1 / cosh² from the saved input",
            """
class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, limit):
        ctx.save_for_backward(x)
        ctx.limit = limit
        return torch.tanh(x / limit) * limit

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out / torch.cosh(x / ctx.limit) ** 2, None


def soft_clip(x, limit):
    return SoftClip.apply(x, limit)
""",
        ),
        Right(
            "a clone of the result saved: backward keeps forward's values",
            """
class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, limit):
        y = limit * torch.tanh(x / limit)
        ctx.save_for_backward(y.clone())
        ctx.limit = limit
        return y

    @staticmethod
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        return grad_out * (1 - (y / ctx.limit) ** 2), None


def soft_clip(x, limit):
    return SoftClip.apply(x, limit)
""",
        ),
        Right(
            "soft_clip = SoftClip.apply, setup_context and once_differentiable",
            """
from torch.autograd.function import once_differentiable


class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(x, limit):
        return limit * torch.tanh(x / limit)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)
        ctx.limit = inputs[1]

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        t = y / ctx.limit
        return grad_out * (1 - t * t), None


soft_clip = SoftClip.apply
""",
        ),
    ],
    "ex6_softplus": [
        Right(
            "the stable formula written out: relu(x) + log1p(exp(-|x|))",
            """
class Softplus(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return torch.clamp(x, min=0) + torch.log1p(torch.exp(-x.abs()))

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(x)


def softplus(x):
    return Softplus.apply(x)
""",
        ),
        Right(
            "saves the output: the derivative is 1 - exp(-y)",
            """
class Softplus(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return torch.nn.functional.softplus(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        return grad_out * -torch.expm1(-y)


def softplus(x):
    return Softplus.apply(x)
""",
        ),
        Right(
            "needs_input_grad checked, None when no gradient is needed",
            """
class Softplus(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return torch.nn.functional.softplus(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad_out):
        if not ctx.needs_input_grad[0]:
            return None
        (x,) = ctx.saved_tensors
        return grad_out * torch.special.expit(x)


def softplus(x):
    return Softplus.apply(x)
""",
        ),
        Right(
            "a hand-written vmap staticmethod instead of generate_vmap_rule",
            """
class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return torch.nn.functional.softplus(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(x)

    @staticmethod
    def vmap(info, in_dims, x):
        return Softplus.apply(x), in_dims[0]


def softplus(x):
    return Softplus.apply(x)
""",
        ),
        Right(
            "the stable form max(x, 0) + log1p(exp(-|x|)), in forward and in no other place",
            """
class Softplus(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(x)


softplus = Softplus.apply
""",
        ),
        Right(
            "once_differentiable backward",
            """
from torch.autograd.function import once_differentiable


class Softplus(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return torch.nn.functional.softplus(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(x)


def softplus(x):
    return Softplus.apply(x)
""",
        ),
    ],
}
