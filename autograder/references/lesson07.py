"""The references of lesson 07's checks: held only by the judge (see ``autograder.references``).

The reference Functions are here, not in ``autograder.lessons.lesson07``, which runs beside
learner code and only builds, calls and compares.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

import autograder.common.trusted as trusted
from autograder.lessons import lesson07 as checks
from autograder.lessons.lesson07 import World
from autograder.references import answers


class _Reference(torch.autograd.Function):
    """``f(*tensors)`` whose backward is autograd's own gradient of ``f``.

    It keeps its tensor inputs with save_for_backward, so backward raises when one was
    changed in place after the forward pass.
    """

    @staticmethod
    def forward(ctx, f, *tensors):
        ctx.f = f
        ctx.save_for_backward(*tensors)
        return f(*tensors)

    @staticmethod
    def backward(ctx, grad_out):
        with torch.enable_grad():
            leaves = [t.detach().requires_grad_() for t in ctx.saved_tensors]
            return (None, *trusted.autograd_grad(ctx.f(*leaves), leaves, grad_out))


class _StraightThrough(torch.autograd.Function):
    """Rounding to multiples of ``step`` forward, the identity backward."""

    @staticmethod
    def forward(ctx, x, step):
        return torch.round(x / step) * step

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, None


class _SoftplusReference(torch.autograd.Function):
    """softplus(x) in the setup_context style, so that torch.func may transform it."""

    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return F.softplus(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(x)


@answers(checks.SiluFunction)
def silu_function(spec, world: World, case: dict):
    return _Reference.apply(F.silu, *world.args)


@answers(checks.QuantiseSTE)
def quantise_s_t_e(spec, world: World, case: dict):
    return _StraightThrough.apply(*world.args)


@answers(checks.BackwardIsCorrect)
def backward_is_correct(spec, world: World, case: dict):
    fn, x = world.args
    x64 = x.detach().double().requires_grad_()
    return trusted.gradcheck(fn, (x64,), raise_exception=False)


@answers(checks.MulFunction)
def mul_function(spec, world: World, case: dict):
    return _Reference.apply(torch.mul, *world.args)


@answers(checks.SoftClip)
def soft_clip(spec, world: World, case: dict):
    x, limit = world.args
    return _Reference.apply(lambda t: limit * torch.tanh(t / limit), x)


@answers(checks.SoftplusTransformable)
def softplus_transformable(spec, world: World, case: dict):
    return spec.transformed(_SoftplusReference.apply, case)(*world.args)
