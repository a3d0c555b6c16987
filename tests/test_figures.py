"""Figures: the autograd graph walk, and Chinese labels that render without missing glyphs."""

from __future__ import annotations

import warnings

import matplotlib
import pytest
import torch

from autograder.common.i18n import set_language
from autograder.kernel import graph
from autograder.kernel.fonts import CJK_FAMILY, cjk_font_path, use_cjk_font

matplotlib.use("Agg")


def test_walk_reaches_the_named_leaves(device):
    a = torch.ones(2, device=device, requires_grad=True)
    b = torch.ones(2, device=device, requires_grad=True)
    nodes, edges = graph.walk((a * b + a.sin()).sum(), {"a": a, "b": b})
    leaves = sorted(n.label.split("\n")[0] for n in nodes if n.kind == "leaf")
    assert leaves == ["a", "b"]
    assert len(edges) >= 4


def test_walk_explains_a_tensor_without_a_graph():
    with pytest.raises(ValueError, match="no grad_fn"):
        graph.walk(torch.ones(2))


def test_the_chinese_font_ships_with_the_environment():
    assert cjk_font_path().is_file()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_figures_render_chinese_without_missing_glyphs(lang, tmp_path):
    import matplotlib.pyplot as plt

    set_language(lang)
    use_cjk_font()
    a = torch.ones(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ax = graph.draw((a * 2).sum(), {"a": a})
        ax.set_xlabel("批量大小 batch size — 为反向传播保存的字节数")
        ax.figure.savefig(tmp_path / "graph.png")
        plt.close(ax.figure)
    missing = [str(w.message) for w in caught if "missing from font" in str(w.message)]
    assert missing == []
    assert CJK_FAMILY in matplotlib.rcParams["font.family"]
