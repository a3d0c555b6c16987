"""The caller's models that lessons 03 and 08 build: blocks with BatchNorm and Dropout;
lesson 09's, made by the lesson, seeded here (:func:`seeded_model`); lessons 01's and 02's
MLPs (:func:`tanh_mlp`, :func:`relu_mlp`).

Weights and "trained" running statistics come from a seed, and PyTorch's own
initialisation runs with the global random state forked, so that building a case's
model changes none of the learner's random numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from autograder.common import trusted

# Taken at import, before any learner code runs (see trusted.py).
_fork_rng = torch.random.fork_rng
_BATCHNORM = torch.nn.modules.batchnorm._BatchNorm


@dataclass(frozen=True)
class Net:
    """The shape of a model: blocks of Linear → BatchNorm1d → ReLU → Dropout(p), then Linear
    (BatchNorm2d between Unflatten and Flatten where ``planes``)."""

    n_in: int
    hidden: int
    n_out: int
    blocks: int = 1
    p: float = 0.5
    nested: bool = False  # each block in its own Sequential, as real models group layers
    planes: bool = False  # BatchNorm2d, on the features seen as (n, width, 1, 1) planes


def _fill(module: torch.nn.Module, g: torch.Generator) -> None:
    """Fixed weights and "trained" running statistics, far from a fresh batch's statistics."""
    with trusted.no_grad():
        if trusted.isinstance_(module, torch.nn.Linear):
            scale = module.in_features**-0.5
            module.weight.copy_((trusted.rand(module.weight.shape, generator=g) * 2 - 1) * scale)
            module.bias.copy_((trusted.rand(module.bias.shape, generator=g) * 2 - 1) * scale)
        elif trusted.isinstance_(module, _BATCHNORM):
            width = module.num_features
            module.weight.copy_(1 + 0.3 * (trusted.rand(width, generator=g) - 0.5))
            module.bias.copy_(0.3 * (trusted.rand(width, generator=g) - 0.5))
            module.running_mean.copy_(0.8 * (trusted.rand(width, generator=g) * 2 - 1))
            module.running_var.copy_(1.5 + 0.5 * trusted.rand(width, generator=g))
            module.num_batches_tracked.fill_(50)


def _block(n_in: int, width: int, p: float | None, planes: bool = False) -> list[torch.nn.Module]:
    norm = [torch.nn.BatchNorm1d(width)]
    if planes:  # the same statistics, from another BatchNorm class than the lessons show
        flat = [torch.nn.Unflatten(1, (width, 1, 1)), torch.nn.BatchNorm2d(width)]
        norm = [*flat, torch.nn.Flatten()]
    layers = [torch.nn.Linear(n_in, width), *norm, torch.nn.ReLU()]
    return layers if p is None else [*layers, torch.nn.Dropout(p)]


def _seeded(seed: int, dtype: str, device, *models: torch.nn.Module) -> list[torch.nn.Module]:
    g = trusted.generator().manual_seed(seed)
    for model in models:
        for module in model.modules():
            _fill(module, g)
    return [m.to(device=device, dtype=getattr(torch, dtype)) for m in models]


def make_net(seed: int, net: Net, dtype: str = "float32", device="cpu") -> torch.nn.Sequential:
    """A model of the given shape with weights fixed by ``seed``; the global RNG is left alone."""
    with _fork_rng(devices=[]):
        widths = [net.n_in] + [net.hidden] * net.blocks
        pairs = zip(widths, widths[1:], strict=False)
        blocks = [_block(a, b, net.p, net.planes) for a, b in pairs]
        last = torch.nn.Linear(net.hidden, net.n_out)
    if net.nested:
        model = torch.nn.Sequential(*(torch.nn.Sequential(*b) for b in blocks), last)
    else:
        model = torch.nn.Sequential(*(layer for b in blocks for layer in b), last)
    return _seeded(seed, dtype, device, model)[0]


def make_backbone_head(seed: int, net: Net, dtype: str = "float32", device="cpu"):
    """A backbone (``net``'s blocks without Dropout) and a head Dropout(p) → Linear."""
    with _fork_rng(devices=[]):
        widths = [net.n_in] + [net.hidden] * net.blocks
        backbone = torch.nn.Sequential(
            *(
                layer
                for a, b in zip(widths, widths[1:], strict=False)
                for layer in _block(a, b, None)
            )
        )
        head = torch.nn.Sequential(torch.nn.Dropout(net.p), torch.nn.Linear(net.hidden, net.n_out))
    return _seeded(seed, dtype, device, backbone, head)


def _drawn(model: torch.nn.Module, seed: int, dtype: torch.dtype, device) -> torch.nn.Module:
    """The model's parameters and BatchNorm statistics drawn from ``seed``, on ``device``."""
    g = trusted.generator().manual_seed(seed)
    with trusted.no_grad():
        for p in model.parameters():
            p.copy_((trusted.rand(p.shape, generator=g, dtype=torch.float64) - 0.5) * 1.5)
        for m in model.modules():
            if trusted.isinstance_(m, _BATCHNORM):
                m.running_mean.copy_(trusted.rand(m.num_features, generator=g) - 0.5)
                m.running_var.copy_(0.5 + trusted.rand(m.num_features, generator=g))
    return model.to(device=device, dtype=dtype)


def seeded_model(make, seed: int, dtype: torch.dtype, device) -> torch.nn.Module:
    """A model made by ``make()``, seeded, without touching the global random state."""
    with _fork_rng(devices=[]):
        return _drawn(make(), seed, dtype, device)


def tanh_mlp(
    seed: int,
    depth: int,
    dtype,
    device="cpu",
    width: int = 6,
    last_tanh: bool = True,
    last_bias: bool = True,
) -> torch.nn.Sequential:
    """Lesson 01's models: Linear → BatchNorm1d → Tanh blocks, then a Linear (4 inputs, 3
    outputs), seeded.

    ``last_tanh`` False: the last block has no Tanh, so a layer with parameters (the
    BatchNorm) stands right before the last Linear. ``last_bias`` False: the last Linear
    has no bias.

    Built without touching the global random generator (``skip_init``), so that a
    check does not change the learner's random numbers.
    """
    g = trusted.generator().manual_seed(seed)
    sizes = [4, *[width] * (depth - 1), 3]
    layers: list[torch.nn.Module] = []
    for k, (n_in, n_out) in enumerate(zip(sizes, sizes[1:], strict=False)):
        bias = last_bias or k < depth - 1
        layers.append(
            torch.nn.utils.skip_init(torch.nn.Linear, n_in, n_out, bias=bias, dtype=dtype)
        )
        if k < depth - 1:
            layers.append(torch.nn.BatchNorm1d(n_out, dtype=dtype))
            layers += [torch.nn.Tanh()] if last_tanh or k < depth - 2 else []
    model = torch.nn.Sequential(*layers)
    with trusted.no_grad():
        for p in model.parameters():
            p.copy_(trusted.rand(p.shape, generator=g, dtype=dtype) - 0.5)
        for m in model.modules():
            if trusted.isinstance_(m, torch.nn.BatchNorm1d):
                m.running_mean.copy_(trusted.rand(m.num_features, generator=g) - 0.5)
                m.running_var.copy_(0.5 + trusted.rand(m.num_features, generator=g))
                m.num_batches_tracked.fill_(3)
    return model.to(device)


def relu_mlp(
    seed: int,
    sizes: list[int],
    dtype: str = "float32",
    device="cpu",
    batchnorm: bool = False,
    dropout: bool = False,
):
    """Lesson 02's models: Linear layers of ``sizes``, ReLU between them, after BatchNorm1d
    and Dropout where asked."""
    g = trusted.generator().manual_seed(seed)
    layers: list[torch.nn.Module] = []
    for k, (n_in, n_out) in enumerate(zip(sizes, sizes[1:], strict=False)):
        layers.append(torch.nn.Linear(n_in, n_out))
        if k < len(sizes) - 2:
            layers += [torch.nn.BatchNorm1d(n_out)] if batchnorm else []
            layers += [torch.nn.Dropout(0.5)] if dropout else []
            layers.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*layers)
    with trusted.no_grad():
        for p in model.parameters():
            p.copy_((trusted.rand(p.shape, generator=g) * 2 - 1) / p.shape[-1] ** 0.5)
        for m in model.modules():
            if trusted.isinstance_(m, torch.nn.BatchNorm1d):
                m.running_mean.copy_(trusted.rand(m.num_features, generator=g) - 0.5)
                m.running_var.copy_(0.5 + trusted.rand(m.num_features, generator=g))
                m.weight.add_(1)
    return model.to(device=device, dtype=getattr(torch, dtype))
