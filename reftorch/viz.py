"""Pictures: the autograd graph, a tensor laid over its storage, and a traced program's graph.

``draw_graph`` shows what torchviz's ``make_dot`` shows (operation nodes, leaves with their
names and shapes) and also each node's saved tensors with the version they were saved at,
marking in red the ones modified in place since: the picture of the error backward would
raise. ``storage_diagram`` shows a tensor as its logical grid above its flat storage, with an
arrow from each element to the storage cell it reads, so strides and offsets can be seen.
"""
from __future__ import annotations

import html
import itertools
import math

import graphviz

from .storage import storage_index
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


# The storage picture: readable on GitHub at the width a notebook shows, so no cell text
# is smaller than 12 points, and the picture is never scaled down (no graph "size").
_INDEX_PT, _VALUE_PT, _CAPTION_PT = 12, 14, 14
_REACHED, _UNREACHED = "#9fd3a8", "#eeeeee"
# one colour per logical row, so the arrows of one row can be followed into storage
_ROW_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")


def _storage_values(tensor) -> list:
    """Every number in the tensor's storage, in storage order (a reftorch or a torch tensor)."""
    if isinstance(tensor, Tensor):
        return tensor.untyped_storage().data.tolist()
    # a torch tensor: a 1-d tensor over its whole storage (reftorch never imports torch)
    whole = tensor.new_empty(0).set_(tensor.untyped_storage())
    return whole.tolist()


def _text(value) -> str:
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def _port(index) -> str:
    # graphviz port names allow letters, digits and underscores only
    return "i" + "_".join(str(i) for i in index)


def _cell(top: str, value, colour: str, port: str) -> str:
    return (f'<td port="{port}" bgcolor="{colour}"><font point-size="{_INDEX_PT}">{html.escape(top)}</font>'
            f'<br/><font point-size="{_VALUE_PT}"><b>{html.escape(_text(value))}</b></font></td>')


def _rows(shape) -> tuple[list, int, int]:
    """The leading indices (one grid each), and the rows and columns of each grid."""
    if len(shape) == 3:
        return [(i,) for i in range(shape[0])], shape[1], shape[2]
    if len(shape) == 2:
        return [()], shape[0], shape[1]
    return [()], 1, (shape[0] if shape else 1)


def _logical_index(lead: tuple, r: int, c: int, ndim: int) -> tuple:
    return lead + ((r, c) if ndim >= 2 else (c,) if ndim == 1 else ())


def storage_diagram(tensor, label: str = "t", max_cells: int = 40, max_elements: int = 48):
    """A graphviz.Digraph: the tensor as a logical grid above its flat storage, with an arrow
    from each logical element to the storage cell it reads.

    Each grid cell shows its index and value; each storage cell its position and value.
    Stride jumps become visible: a transposed view's arrows cross, an expanded (stride 0)
    dim sends many arrows into one cell, a step slice skips cells, an offset starts the
    arrows further right. A 3-d tensor is drawn as one grid per leading index. Each row of a
    grid is its own node, so arrows from upper rows are routed around the rows below them.
    Works on reftorch and torch tensors of 0 to 3 dims.
    """
    shape, strides, offset = tuple(tensor.shape), tuple(tensor.stride()), tensor.storage_offset()
    if len(shape) > 3:
        raise ValueError(f"storage_diagram draws tensors of 0 to 3 dims, got {len(shape)} dims")
    numel = math.prod(shape)
    if numel > max_elements:
        raise ValueError(f"storage_diagram draws at most max_elements={max_elements} elements "
                         f"(one arrow each), got {numel}")
    values = _storage_values(tensor)
    if len(values) > max_cells:
        raise ValueError(f"storage_diagram draws at most max_cells={max_cells} storage cells, "
                         f"got a storage of {len(values)}")

    def position(index):
        return storage_index(index, strides, offset)

    caption = (f"{label}: size={list(shape)} stride={list(strides)} "
               f"offset={offset} contiguous={tensor.is_contiguous()}")
    dot = graphviz.Digraph(graph_attr=dict(rankdir="TB", label=caption, labelloc="t",
                                           fontsize=str(_CAPTION_PT), nodesep="0.25", ranksep="0.35"),
                           node_attr=dict(shape="plaintext", fontsize=str(_VALUE_PT)),
                           edge_attr=dict(arrowsize="0.6", penwidth="1.2"))
    leads, rows, cols = _rows(shape)
    table = '<<table border="0" cellborder="1" cellspacing="0" cellpadding="5">'
    for r in range(rows):
        with dot.subgraph() as same_rank:  # row r of every grid side by side
            same_rank.attr(rank="same")
            for lead in leads:
                title = ""
                if r == 0 and lead:  # a 3-d tensor: name each grid by its leading index
                    name = f"{label}[{lead[0]}]"
                    title = (f'<tr><td border="0" colspan="{cols}"><font point-size="{_INDEX_PT}">'
                             f'{html.escape(name)}</font></td></tr>')
                cells = "".join(
                    _cell(str(list(index)), values[position(index)], "white", _port(index))
                    for index in (_logical_index(lead, r, c, len(shape)) for c in range(cols)))
                same_rank.node(_row_node(lead, r), f"{table}{title}<tr>{cells}</tr></table>>")
    for lead in leads:  # keep each grid's rows stacked in order
        for r in range(rows - 1):
            dot.edge(_row_node(lead, r), _row_node(lead, r + 1), style="invis", weight="20")

    reached = {position(index) for index in itertools.product(*(range(n) for n in shape))}
    storage_cells = "".join(
        _cell(str(p), v, _REACHED if p in reached else _UNREACHED, f"p{p}") for p, v in enumerate(values))
    # the row's name sits to its left, where no arrow arrives
    dot.node("storage", f'{table}<tr><td border="0"><font point-size="{_INDEX_PT}">storage<br/>position'
                        f'<br/>value</font></td>{storage_cells}</tr></table>>')
    for lead in leads:
        for r in range(rows):
            for c in range(cols):
                index = _logical_index(lead, r, c, len(shape))
                dot.edge(f"{_row_node(lead, r)}:{_port(index)}:s", f"storage:p{position(index)}:n",
                         color=_ROW_COLOURS[r % len(_ROW_COLOURS)])
    return dot


def _row_node(lead: tuple, r: int) -> str:
    return "row" + "".join(f"_{i}" for i in lead) + f"_{r}"


# -- a traced program's graph (torch.fx's or reftorch.fx's) -----------------------------------
_OP_COLOURS = {"placeholder": "lightblue", "get_attr": "wheat", "call_function": "white",
               "call_method": "lavender", "call_module": "lightpink", "output": "darkolivegreen1"}


def _node_type(node) -> str:
    meta = node.meta
    if "shape" in meta:  # reftorch.fx
        return f"({', '.join(map(str, meta['shape']))})"
    value = meta.get("val", meta.get("tensor_meta"))  # torch.fx after make_fx / ShapeProp
    shape = getattr(value, "shape", None)
    return "" if shape is None else f"({', '.join(map(str, shape))})"


def draw_fx_graph(graph, title=None):
    """A graphviz.Digraph of a ``torch.fx.Graph`` or a ``reftorch.fx.Graph``: one box per
    node, coloured by its kind (placeholder, get_attr, call_function, call_method,
    call_module, output), with its name, its target and (when recorded) its shape; an arrow
    from each node to every node that reads it."""
    dot = graphviz.Digraph(node_attr=dict(style="filled", shape="box", fontsize="10", height="0.2"),
                           graph_attr=dict(rankdir="TB", ranksep="0.25", label=title or "", labelloc="t"))
    for node in graph.nodes:
        target = node.target if isinstance(node.target, str) else getattr(node.target, "__name__", str(node.target))
        label = node.name if node.op == "output" else f"{node.name}\n{node.op}: {target} {_node_type(node)}".strip()
        dot.node(node.name, label, fillcolor=_OP_COLOURS.get(node.op, "white"))
        for source in node.all_input_nodes:
            dot.edge(source.name, node.name)
    return dot
