"""The references of lesson 07's checks: held only by the judge (see ``autograder.references``)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

import autograder.common.trusted as trusted
from autograder.lessons import lesson07 as checks
from autograder.lessons.lesson07 import (  # noqa: F401
    _TRANSFORMS,
    World,
    _Reference,
    _SoftplusReference,
    _StraightThrough,
)
from autograder.references import answers


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
    transform = _TRANSFORMS.get(case.get("transform"), (None, lambda f: f))[1]
    return transform(_SoftplusReference.apply)(*world.args)
