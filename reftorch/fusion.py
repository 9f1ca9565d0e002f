"""Fusion: a chain of element-wise kernels becomes one kernel that passes over the data once.

Run eagerly, each element-wise op reads its whole input from memory and writes a whole new
tensor, which the next op reads again: a chain of seven ops moves every value through
memory seven times and allocates six temporaries. Inductor instead writes one loop whose
body does all seven ops on a few values held in registers (lesson 09b shows its C++).

NumPy cannot run a Python loop over single values at any useful speed, so the kernel this
pass writes goes block by block: for each block of ``BLOCK`` values it runs the chain's
kernels with ``out=`` into scratch buffers small enough to stay in the CPU's cache, and
writes only the chain's result to memory. The kernels and their order are those of the
eager run, so the numbers are the same, bit for bit.

    >>> import reftorch
    >>> from reftorch import fx
    >>> gm = fuse_elementwise(fx.trace(lambda x: (x * 2 + 1).relu(), reftorch.ones(3)))
    >>> [n.target.__name__ for n in gm.graph.nodes if n.op == "call_function"]
    ['fused_mul_add_relu']
"""
from __future__ import annotations

import numpy as np

from .functions import POINTWISE_KERNELS
from .fx import Graph, GraphModule, Node, _map_nodes, _text
from .kernels import CPU_KERNELS

# Kernels that compute each output value from the values at the same position of their
# inputs (and numbers): they can run on any block of positions. The ops tagged pointwise in
# functions/native_functions.py name them.
ELEMENTWISE = POINTWISE_KERNELS
BLOCK = 32768  # values per block: 128 KiB of float32 per scratch buffer, well inside a core's L2 cache


def _fusible(node: Node) -> bool:
    """An element-wise kernel whose tensor operands all have its own shape and dtype (no
    broadcasting, no in-place ``out=``), on contiguous float data."""
    if node.op != "call_function" or node.target not in ELEMENTWISE or node.kwargs:
        return False
    shape, dtype = node.meta["shape"], node.meta["dtype"]
    if dtype.kind != "f":
        return False
    for arg in node.args:
        if isinstance(arg, Node):
            if arg.meta.get("shape") != shape or arg.meta.get("dtype") != dtype:
                return False
            if arg.op == "placeholder" and not arg.meta.get("contiguous"):
                return False
            if arg.op == "call_function" and not isinstance(arg.target, str):
                return False  # a view (as_strided) may not be laid out as the block loop reads it
        elif isinstance(arg, (list, tuple, np.ndarray)):
            return False
    return True


def fusion_groups(graph: Graph) -> list[list[Node]]:
    """Groups of two or more fusible nodes, each in graph order, that can become one kernel.

    Walking the graph backwards, a fusible node joins the group of its users when all of
    them are in one group (so only a group's last node is read outside it): each group has
    one output, and no path leaves a group and comes back into it."""
    group_of: dict[Node, list] = {}
    for node in reversed(graph.nodes):
        if not _fusible(node):
            continue
        user_groups = {id(group_of.get(user)): group_of.get(user) for user in node.users}
        group = next(iter(user_groups.values())) if len(user_groups) == 1 else None
        if group is None or node.meta["shape"] != group[0].meta["shape"]:
            group = []
        group.insert(0, node)
        group_of[node] = group
    groups = {id(g): g for g in group_of.values()}.values()
    return [g for g in groups if len(g) >= 2]


def fused_kernel_source(group: list[Node], name: str) -> tuple[str, list[Node]]:
    """Python source of one kernel doing ``group`` block by block, and its input nodes.

    A block's intermediate values live in scratch buffers, and a buffer is reused as soon as
    the value in it has been read for the last time (an element-wise kernel may write over
    its own input), so a chain needs one or two buffers however long it is."""
    inputs = list(dict.fromkeys(a for n in group for a in n.args if isinstance(a, Node) and a not in group))
    local = {node: f"in{i}" for i, node in enumerate(inputs)}
    last_read = {a: n for n in group for a in n.args if isinstance(a, Node)}
    buffer_of, free, count = {}, [], 0
    steps = []
    for node in group:
        arguments = ", ".join(f"{local[a]}_block" if a in local else f"t{group.index(a)}" if isinstance(a, Node)
                              else _text(a) for a in node.args)
        free += [buffer_of[a] for a in dict.fromkeys(node.args) if a in buffer_of and last_read[a] is node]
        if node is group[-1]:
            target = "flat_out[start:stop]"
        else:
            if not free:
                free.append(f"buffer{count}")
                count += 1
            buffer_of[node] = free.pop()
            target = f"{buffer_of[node]}[:stop - start]"
        steps.append(f"        t{group.index(node)} = {node.target}({arguments}, out={target})")
    lines = [f"def {name}({', '.join(local[n] for n in inputs)}):",
             f"    # {' -> '.join(n.target for n in group)}: one pass over the data, {BLOCK} values at a time",
             f"    out = empty({local[inputs[0]]}.shape, {local[inputs[0]]}.dtype)",
             "    flat_out = out.reshape(-1)"]
    lines += [f"    flat_{local[n]} = {local[n]}.reshape(-1)" for n in inputs]
    lines += [f"    buffer{i} = empty(BLOCK, out.dtype)" for i in range(count)]
    lines += ["    for start in range(0, flat_out.size, BLOCK):",
              "        stop = min(start + BLOCK, flat_out.size)"]
    lines += [f"        {local[n]}_block = flat_{local[n]}[start:stop]" for n in inputs]
    lines += steps + ["    return out"]
    return "\n".join(lines) + "\n", inputs


def fuse_elementwise(gm: GraphModule) -> GraphModule:
    """A new GraphModule in which each fusion group of ``gm``'s graph is one ``call_function``
    node, whose target is a kernel generated for it (its source is the target's
    ``__source__``)."""
    graph = _copy(gm.graph)
    for group in fusion_groups(graph):
        name = "fused_" + "_".join(dict.fromkeys(n.target for n in group))
        source, inputs = fused_kernel_source(group, name)
        namespace = {"empty": np.empty, "BLOCK": BLOCK, "np": np}
        # the kernels themselves, without the per-call np.errstate each has in the table:
        # the fused kernel sets it once, around the whole loop
        namespace.update({op: getattr(CPU_KERNELS[op], "__wrapped__", CPU_KERNELS[op]) for op in {n.target for n in group}})
        exec(compile(source, f"<reftorch.fusion {name}>", "exec"), namespace)
        kernel = np.errstate(all="ignore")(namespace[name])
        kernel.__source__ = source
        last = group[-1]
        fused = graph.create_node("call_function", kernel, tuple(inputs), last.meta, name="fused")
        graph.nodes.remove(fused)  # the fused node runs where the group's last node ran
        graph.nodes.insert(graph.nodes.index(last), fused)
        last.replace_all_uses_with(fused)
        for node in reversed(group):
            graph.erase_node(node)
    return GraphModule(graph, gm.constants)


def _copy(graph: Graph) -> Graph:
    """A copy of ``graph`` (the pass leaves its input as it was, as fx passes on a copy do)."""
    new, mapping = Graph(), {}
    for node in graph.nodes:
        args = _map_nodes(node.args, mapping.__getitem__)
        kwargs = {k: _map_nodes(v, mapping.__getitem__) for k, v in node.kwargs.items()}
        mapping[node] = new.create_node(node.op, node.target, args, node.meta, name=node.name, kwargs=kwargs)
    return new

