"""Pictures: the autograd graph, and a tensor laid over its storage.

``draw_graph`` shows what torchviz's ``make_dot`` shows (operation nodes, leaves with their
names and shapes) and also each node's saved tensors with the version they were saved at,
marking in red the ones modified in place since: the picture of the error backward would
raise. ``storage_diagram`` shows the flat storage and which cells a view reaches, with the
logical index of each.
"""
from __future__ import annotations

import html

import graphviz

from .tensor import Tensor


def _shape(t) -> str:
    return "(" + ", ".join(str(n) for n in t.shape) + ")"


def draw_graph(output, params=None, show_saved=True):
    """A graphviz.Digraph of the graph that ends in ``output`` (a tensor or tuple of tensors)."""
    names = {id(p): name for name, p in (params or {}).items()}
    dot = graphviz.Digraph(
        node_attr=dict(style="filled", shape="box", align="left", fontsize="10", ranksep="0.1", height="0.2"),
        graph_attr=dict(size="12,12"),
    )
    seen = set()
    outputs = output if isinstance(output, tuple) else (output,)

    def tensor_node(t, color, label=None):
        dot.node(str(id(t)), f"{label or names.get(id(t), '')}\n{_shape(t)}".strip(), fillcolor=color)

    stack = []
    for out in outputs:
        tensor_node(out, "darkolivegreen1", "output")
        if out.grad_fn is not None:
            dot.edge(str(id(out.grad_fn)), str(id(out)))
            stack.append(out.grad_fn)
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if hasattr(node, "variable"):
            var = node.variable
            tensor_node(var, "lightblue")
            dot.edge(str(id(var)), str(id(node)))
        dot.node(str(id(node)), node.name().replace("torch::autograd::", ""))
        if show_saved and getattr(node, "_saved", None):
            for i, saved in enumerate(node._saved):
                if not hasattr(saved, "version"):
                    continue
                now = saved.tensor._version
                stale = now != saved.version
                label = f"saved[{i}] {_shape(saved.tensor)}\nsaved at v{saved.version}, now v{now}"
                key = f"{id(node)}-saved-{i}"
                dot.node(key, label, fillcolor="tomato" if stale else "orange")
                dot.edge(key, str(id(node)), dir="none", style="dashed")
        for child, _ in node.next_functions:
            if child is not None:
                dot.edge(str(id(child)), str(id(node)))
                stack.append(child)
    return dot


def storage_diagram(tensor: Tensor, label: str = "t", max_cells: int = 48):
    """The storage as a row of cells; the cells ``tensor`` reaches are coloured and carry
    their logical index, so strides and offsets can be read off the picture."""
    storage = tensor.untyped_storage()
    values = storage.data
    reached = {}
    import itertools
    for index in itertools.product(*(range(n) for n in tensor.shape)):
        position = tensor.storage_offset() + sum(i * s for i, s in zip(index, tensor.stride()))
        reached.setdefault(position, []).append(index)
    cells = []
    for position in range(min(len(values), max_cells)):
        value = values[position]
        text = f"{value:.3g}" if values.dtype.kind == "f" else str(value)
        where = reached.get(position)
        colour = "#9fd3a8" if where else "#eeeeee"
        index = "<br/>".join(html.escape(str(list(i))) for i in where[:2]) + ("<br/>…" if where and len(where) > 2 else "") if where else "&nbsp;"
        cells.append(
            f'<td bgcolor="{colour}"><font point-size="9">{position}</font><br/><b>{html.escape(text)}</b>'
            f'<br/><font point-size="8">{index}</font></td>'
        )
    more = "<td>…</td>" if len(values) > max_cells else ""
    caption = (f"{label}: size={list(tensor.shape)} stride={list(tensor.stride())} "
               f"offset={tensor.storage_offset()} contiguous={tensor.is_contiguous()}")
    table = (f'<<table border="0" cellborder="1" cellspacing="0" cellpadding="4">'
             f'<tr><td colspan="{len(cells) + (1 if more else 0)}" border="0">{html.escape(caption)}</td></tr>'
             f'<tr>{"".join(cells)}{more}</tr></table>>')
    dot = graphviz.Digraph(graph_attr=dict(rankdir="LR"))
    dot.node("storage", table, shape="plaintext")
    return dot
