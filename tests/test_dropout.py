"""Dropout masks from the case's seed: the same on every device, module or functional form."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from autograder.common.dropout import SeededDropout


def _model(device) -> torch.nn.Sequential:
    torch.manual_seed(3)
    return torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Dropout(0.4)).to(device)


def _x(device) -> torch.Tensor:
    return torch.linspace(-1, 1, 5 * 6).reshape(5, 6).to(device)


def test_a_gpu_call_meets_the_cpu_reference(device):
    """The reason for it: the reference runs on the CPU, the answer on the course device."""
    with SeededDropout(7):
        on_cpu = _model("cpu")(_x("cpu"))
    with SeededDropout(7):
        on_device = _model(device)(_x(device))
    torch.testing.assert_close(on_device.cpu(), on_cpu)


def test_the_module_and_the_functional_form_draw_the_same_masks():
    model = _model("cpu")
    with SeededDropout(7):
        by_module = model(_x("cpu"))
    with SeededDropout(7):
        by_function = F.dropout(model[0](_x("cpu")), 0.4, training=True)
    torch.testing.assert_close(by_function, by_module)


def test_masks_follow_each_other_and_the_seed():
    h = _model("cpu")[0](_x("cpu")).detach()
    with SeededDropout(7):
        first, second = F.dropout(h, 0.4), F.dropout(h, 0.4)
    with SeededDropout(8):
        other = F.dropout(h, 0.4)
    assert not torch.equal(first, second) and not torch.equal(first, other)
    kept = first != 0
    torch.testing.assert_close(first[kept], h[kept] / 0.6)


def test_the_random_state_moves_as_dropout_moves_it_and_eval_is_left_alone():
    model = _model("cpu")
    torch.manual_seed(11)
    plain = model(_x("cpu"))
    after_plain = torch.random.get_rng_state()
    torch.manual_seed(11)
    with SeededDropout(7):
        seeded = model(_x("cpu"))
    assert torch.equal(torch.random.get_rng_state(), after_plain)
    assert not torch.equal(seeded, plain)
    model.eval()
    with SeededDropout(7):
        torch.testing.assert_close(model(_x("cpu")), model[0](_x("cpu")))


def test_gradients_flow_through_the_kept_entries():
    model = _model("cpu")
    with SeededDropout(7):
        out = model(_x("cpu"))
    out.sum().backward()
    assert model[0].weight.grad is not None and model[0].weight.grad.abs().sum() > 0


def test_nothing_stays_installed():
    before = torch._C._len_torch_function_stack()
    hooks = dict(torch.nn.modules.module._global_forward_hooks)
    with SeededDropout(7):
        pass
    assert torch._C._len_torch_function_stack() == before
    assert dict(torch.nn.modules.module._global_forward_hooks) == hooks
