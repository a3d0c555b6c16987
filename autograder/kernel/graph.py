"""Walk and draw the autograd graph behind a tensor.

``grad_fn.next_functions`` links each node to the nodes that produced its
inputs; leaves appear as ``AccumulateGrad`` nodes holding the leaf tensor.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from autograder.common.i18n import Text

LEAF_LABEL = Text("leaf", "叶子张量")
OUTPUT_LABEL = Text("output", "输出")


@dataclass(frozen=True)
class Node:
    """One node of the backward graph: its label, depth from the output, and kind."""

    key: int
    label: str
    depth: int
    kind: str  # "output", "op" or "leaf"


def walk(output: torch.Tensor, names: dict[str, torch.Tensor] | None = None):
    """Return (nodes, edges) of the graph that backward() would traverse from ``output``.

    ``names`` maps a display name to a leaf tensor, so leaves show the learner's names.
    Edges point from a node to the node it sends gradients to.
    """
    if output.grad_fn is None:
        raise ValueError(
            "This tensor has no grad_fn: it is a leaf or was made without recording a graph, "
            "so there is no graph to draw."
        )
    by_id = {id(t): name for name, t in (names or {}).items()}
    nodes: dict[int, Node] = {}
    edges: list[tuple[int, int]] = []
    stack = [(output.grad_fn, 0)]
    while stack:
        fn, depth = stack.pop()
        key = id(fn)
        if key in nodes and nodes[key].depth >= depth:
            continue
        leaf = getattr(fn, "variable", None)
        if leaf is not None:
            name = by_id.get(id(leaf), f"{tuple(leaf.shape)}")
            label, kind = f"{name}\n({LEAF_LABEL()})", "leaf"
        else:
            label = type(fn).__name__.removesuffix("Backward0").removesuffix("Backward1")
            kind = "output" if depth == 0 else "op"
        nodes[key] = Node(key, label, depth, kind)
        for child, _ in fn.next_functions:
            if child is not None:
                edges.append((key, id(child)))
                stack.append((child, depth + 1))
    return list(nodes.values()), sorted(set(edges))


def draw(output: torch.Tensor, names: dict[str, torch.Tensor] | None = None, ax=None):
    """Draw the backward graph of ``output``, the output at the top and leaves below."""
    import matplotlib.pyplot as plt

    nodes, edges = walk(output, names)
    levels: dict[int, list[Node]] = {}
    for node in sorted(nodes, key=lambda n: n.key):
        levels.setdefault(node.depth, []).append(node)
    place = {}
    for depth, row in levels.items():
        for i, node in enumerate(row):
            place[node.key] = ((i + 1) / (len(row) + 1), -depth)
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 1.3 * (len(levels) + 1)))
    colours = {"output": "#ffd8a8", "op": "#d0ebff", "leaf": "#d3f9d8"}
    for parent, child in edges:
        (x0, y0), (x1, y1) = place[parent], place[child]
        ax.annotate(
            "",
            xy=(x1, y1 + 0.25),
            xytext=(x0, y0 - 0.25),
            arrowprops={"arrowstyle": "->", "color": "#495057"},
        )
    for node in nodes:
        x, y = place[node.key]
        ax.text(
            x,
            y,
            node.label,
            ha="center",
            va="center",
            fontsize=10,
            bbox={"boxstyle": "round", "facecolor": colours[node.kind]},
        )
    ax.set_xlim(0, 1)
    ax.set_ylim(-max(levels) - 0.6, 0.6)
    ax.axis("off")
    ax.set_title(
        Text("Backward graph (gradients flow downwards)", "反向传播图（梯度自上而下流动）")()
    )
    return ax
