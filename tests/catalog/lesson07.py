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
    ],
    "ex3_backward_is_correct": [
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
            "the derivative written with exp",
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
            "x.double() keeps requires_grad, fast mode",
            """
def backward_is_correct(fn, x):
    return torch.autograd.gradcheck(fn, x.double(), fast_mode=True, raise_exception=False)
""",
        ),
        Right(
            "the Jacobians compared by hand in float64",
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
    ],
}
