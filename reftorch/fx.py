"""A program as a graph, recorded through reftorch's dispatcher (what torch's ``make_fx`` does).

``torch.fx.symbolic_trace`` records Python: a Proxy flows through ``forward`` and each
operation on it adds a node. ``make_fx`` records one level lower: it runs the program under a
``__torch_dispatch__`` mode, which the dispatcher hands every ATen op before its kernel runs.
This file is the second, in miniature:

    DispatchMode   while one is active (``with mode:``), ``dispatch.kernel`` hands out the
                   mode's wrapper instead of the kernel: the mode sees every kernel call
    Tracer         the mode that turns each kernel call into a node of a ``Graph``
    trace          run a function once under a Tracer; the graph becomes a ``GraphModule``
    GraphModule    the graph written back as Python code (``code``), run on reftorch tensors

A tracer at the dispatcher sees kernels and their NumPy arrays, nothing above them. So
Python control flow ran once and the branch it took is the graph (``torch.jit.trace`` does
the same; make_fx refuses to read a value out of a traced tensor, and Dynamo breaks the
graph there), and the graph holds only the program's float32/float64 arithmetic. An array that a kernel
receives is named by where it came from: an input (``placeholder``), a module's parameter or
buffer (``get_attr``), an earlier kernel's result, or a view of one of those (a view costs no
kernel in reftorch, so it is recorded as ``as_strided``). Any other array (one made by a
factory such as ``zeros`` inside the function, or cast outside a kernel) is refused with an
error: baking it in as a constant could silently give wrong numbers on other inputs.

    >>> import reftorch
    >>> gm = trace(lambda x: (x * 2).exp(), reftorch.ones(3))
    >>> [node.target for node in gm.graph.nodes if node.op == "call_function"]
    ['mul', 'exp']
"""
from __future__ import annotations

import inspect
import itertools
import re

import numpy as np

from . import dispatch
from .dtypes import _FROM_NUMPY
from .tensor import Tensor

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


class DispatchMode:
    """reftorch's ``TorchDispatchMode``: subclass it and define ``__reftorch_dispatch__``.

    ``__reftorch_dispatch__(op, kernel, args, kwargs)`` is called instead of each kernel while
    the mode is active; it usually calls ``kernel(*args, **kwargs)`` and returns its result.
    As in torch, the mode is switched off while its own handler runs, so the kernels it calls
    reach the next mode down (or run plainly)."""

    def __reftorch_dispatch__(self, op, kernel, args, kwargs):
        return kernel(*args, **kwargs)

    def intercept(self, op, kernel):
        """What ``dispatch.kernel`` hands out for ``op`` while this mode is innermost."""
        def through_mode(*args, **kwargs):
            dispatch._modes.remove(self)
            try:
                return self.__reftorch_dispatch__(op, kernel, args, kwargs)
            finally:
                dispatch._modes.append(self)
        return through_mode

    def __enter__(self):
        dispatch._modes.append(self)
        return self

    def __exit__(self, *exc):
        dispatch._modes.remove(self)
        return False


# -- the graph --------------------------------------------------------------------------------

class Node:
    """One step of a graph: ``op`` is its kind (torch.fx's words), ``target`` what it runs.

    op              target                       args
    placeholder     the input's name             ()
    get_attr        the constant's name          ()
    call_function   a kernel name, or a function  Nodes and plain values
    output          'output'                     (the Node or tuple of Nodes returned)
    """

    __slots__ = ("graph", "name", "op", "target", "args", "kwargs", "meta", "users")

    def __init__(self, graph, name, op, target, args, kwargs, meta):
        self.graph, self.name, self.op, self.target = graph, name, op, target
        self.args, self.kwargs = args, kwargs
        self.meta = meta  # 'shape', 'dtype' (and 'contiguous' for placeholders)
        self.users: dict[Node, None] = {}  # ordered set of the nodes that read this one

    def __repr__(self) -> str:
        return self.name

    @property
    def all_input_nodes(self) -> list:
        return list(dict.fromkeys(_nodes_in((self.args, tuple(self.kwargs.values())))))

    def replace_all_uses_with(self, other: "Node") -> None:
        for user in list(self.users):
            user.args = _map_nodes(user.args, lambda n: other if n is self else n)
            user.kwargs = {k: _map_nodes(v, lambda n: other if n is self else n) for k, v in user.kwargs.items()}
            other.users[user] = None
        self.users.clear()


def _nodes_in(value):
    if isinstance(value, Node):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _nodes_in(item)


def _map_nodes(value, fn):
    if isinstance(value, Node):
        return fn(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_map_nodes(item, fn) for item in value)
    return value


class Graph:
    """Nodes in the order they run (a topological order, as in torch.fx)."""

    def __init__(self):
        self.nodes: list[Node] = []
        self._used_names: set[str] = set()

    def create_node(self, op, target, args=(), meta=None, name=None, kwargs=None) -> Node:
        if not isinstance(target, str):  # the generated code calls it by this name: no node may take it
            self._used_names.add(_target_name(target))
        node = Node(self, self._unique(name or _base_name(target)), op, target, tuple(args), dict(kwargs or {}),
                    dict(meta or {}))
        for arg in node.all_input_nodes:
            arg.users[node] = None
        output = next((n for n in self.nodes if n.op == "output"), None)
        if output is None:
            self.nodes.append(node)
        else:  # new nodes go before the output
            self.nodes.insert(self.nodes.index(output), node)
        return node

    def placeholder(self, name, meta=None) -> Node:
        return self.create_node("placeholder", name, meta=meta, name=name)

    def get_attr(self, target, meta=None) -> Node:
        return self.create_node("get_attr", target, meta=meta, name=target)

    def call_function(self, target, args, meta=None) -> Node:
        return self.create_node("call_function", target, args, meta)

    def output(self, result) -> Node:
        return self.create_node("output", "output", (result,), name="output")

    def erase_node(self, node: Node) -> None:
        if node.users:
            raise RuntimeError(f"Tried to erase Node {node} but it still had {len(node.users)} users in the graph: "
                               f"{dict(node.users)}!")
        for arg in node.all_input_nodes:
            arg.users.pop(node, None)
        self.nodes.remove(node)

    def _unique(self, name: str) -> str:
        name = re.sub(r"\W", "_", name) or "_"
        if name[0].isdigit():
            name = "_" + name
        candidate = name
        for i in itertools.count(1):
            if candidate not in self._used_names:
                break
            candidate = f"{name}_{i}"
        self._used_names.add(candidate)
        return candidate

    def __str__(self) -> str:
        """The graph in torch.fx's printed form, one line per node."""
        inputs = ", ".join(n.name for n in self.nodes if n.op == "placeholder")
        lines = [f"graph({inputs}):"]
        for node in self.nodes:
            if node.op == "output":
                lines.append(f"    return {_text(node.args[0])}")
                continue
            target = _target_name(node.target)
            call = ""
            if node.op == "call_function":
                keywords = f", kwargs = {{{', '.join(f'{k!r}: {_text(v, chr(37))}' for k, v in node.kwargs.items())}}}"
                call = f"(args = {_text(node.args, '%')}{keywords if node.kwargs else ''})"
            lines.append(f"    %{node.name} : {_type_text(node.meta)} = {node.op}[target={target}]{call}")
        return "\n".join(lines)

    def python_code(self) -> str:
        """``def forward(...)``: one line per node, each value freed after its last use (the
        way torch.fx writes a GraphModule's code)."""
        last_use = {}
        for node in self.nodes:
            for arg in node.all_input_nodes:
                last_use[arg] = node
        inputs = ", ".join(n.name for n in self.nodes if n.op == "placeholder")
        lines = [f"def forward({inputs}):"]
        for node in self.nodes:
            if node.op == "placeholder":
                continue
            if node.op == "output":
                lines.append(f"    return {_text(node.args[0])}")
                continue
            arguments = ", ".join([_text(a) for a in node.args] + [f"{k}={_text(v)}" for k, v in node.kwargs.items()])
            if node.op == "get_attr":
                code = f"constants[{node.target!r}]"
            elif isinstance(node.target, str):
                code = f"kernel({node.target!r})({arguments})"
            else:
                code = f"{_target_name(node.target)}({arguments})"
            freed = [arg.name for arg in node.all_input_nodes if last_use.get(arg) is node]
            free = ";  " + " = ".join(freed) + " = None" if freed else ""
            lines.append(f'    {node.name}: "{_type_text(node.meta)}" = {code}{free}')
        return "\n".join(lines) + "\n"


def _base_name(target) -> str:
    return target if isinstance(target, str) else getattr(target, "__name__", "fn")


def _target_name(target) -> str:
    return target if isinstance(target, str) else getattr(target, "__name__", repr(target))


def _text(value, mark="") -> str:
    """Python text for an argument; ``mark`` goes before node names (fx prints ``%x``)."""
    if isinstance(value, Node):
        return mark + value.name
    if isinstance(value, tuple):
        inner = ", ".join(_text(v, mark) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(_text(v, mark) for v in value) + "]"
    if isinstance(value, np.dtype):
        return f"np.dtype({value.name!r})"
    return repr(value)


_SHORT = {"float32": "f32", "float64": "f64", "int64": "i64", "int32": "i32", "bool": "b8",
          "float16": "f16", "bfloat16": "bf16"}


def _type_text(meta) -> str:
    if "shape" not in meta:
        return ""
    return f"{_SHORT.get(meta['dtype'].name, meta['dtype'].name)}[{', '.join(map(str, meta['shape']))}]"


def _meta(array, contiguous=False) -> dict:
    meta = {"shape": tuple(array.shape), "dtype": array.dtype}
    if contiguous:
        meta["contiguous"] = bool(array.flags.c_contiguous)
    return meta


def as_strided(base, shape, strides, offset):
    """The view a traced program read: ``base``'s memory at (element) strides from an offset."""
    size = base.dtype.itemsize
    return np.ndarray(shape, base.dtype, buffer=base, offset=offset * size, strides=tuple(s * size for s in strides))


# -- recording -------------------------------------------------------------------------------

class Tracer(DispatchMode):
    """A dispatch mode that records each kernel call as a ``call_function`` node."""

    def __init__(self):
        self.graph = Graph()
        self.constants: dict[str, np.ndarray] = {}
        self._known: dict[int, tuple] = {}  # id(array) -> (array, node); holding the array keeps its id unique

    def input(self, name: str, tensor: Tensor) -> Node:
        array = tensor._np
        if array.dtype not in _FLOATS:
            raise TypeError(f"trace() records float32 and float64 programs, got an input of dtype "
                            f"{_FROM_NUMPY[array.dtype]}")
        return self._name(array, self.graph.placeholder(name, _meta(array, contiguous=True)))

    def constant(self, name: str, tensor: Tensor) -> Node:
        array = tensor._np
        self.constants[name] = array
        return self._name(array, self.graph.get_attr(name, _meta(array)))

    def _name(self, array, node):
        self._known[id(array)] = (array, node)
        return node

    def __reftorch_dispatch__(self, op, kernel, args, kwargs):
        node_args = _map_arrays(args, self._node_for)
        node_kwargs = _map_arrays(kwargs, self._node_for)  # out= of an in-place op
        result = kernel(*args, **kwargs)
        if isinstance(result, tuple):  # (values, indices) and the like
            node = self.graph.create_node("call_function", op, node_args, {}, kwargs=node_kwargs)
            for i, item in enumerate(result):
                self._name(item, self.graph.create_node("call_function", _getitem, (node, i), _meta(item), name="getitem"))
            return result
        if not isinstance(result, np.ndarray):  # a NumPy scalar: keep one array, the one the tensor will hold
            result = np.asarray(result)
        self._name(result, self.graph.create_node("call_function", op, node_args, _meta(result), kwargs=node_kwargs))
        return result

    def _node_for(self, array) -> Node:
        known = self._known.get(id(array))
        if known is not None and known[0] is array:
            return known[1]
        for base, node in list(self._known.values()):  # a view of a value we know?
            offset = _offset_within(array, base)
            if offset is not None:
                strides = tuple(s // array.itemsize for s in array.strides)
                view = self.graph.create_node("call_function", as_strided, (node, tuple(array.shape), strides, offset),
                                              _meta(array), name="view")
                return self._name(array, view)
        raise RuntimeError(
            f"trace(): a kernel received an array of shape {tuple(array.shape)} that is not an input, a "
            "constant, a traced kernel's result or a view of one (a tensor made or cast outside the "
            "dispatcher); pass it as an input instead")

    def output(self, result) -> None:
        outputs = result if isinstance(result, tuple) else (result,)
        nodes = tuple(self._node_for(t._np) for t in outputs)
        self.graph.output(nodes if isinstance(result, tuple) else nodes[0])


def _getitem(value, index):
    return value[index]


def _map_arrays(value, fn):
    if isinstance(value, np.ndarray):
        return fn(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_map_arrays(item, fn) for item in value)
    if isinstance(value, dict):
        return {key: _map_arrays(item, fn) for key, item in value.items()}
    return value


def _offset_within(view, base):
    """The element offset of ``view`` inside contiguous ``base`` (same dtype), or None."""
    if view.dtype != base.dtype or not base.flags.c_contiguous or view.size == 0:
        return None
    start = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    low = start + sum(s * (n - 1) for s, n in zip(view.strides, view.shape) if s < 0)
    high = start + sum(s * (n - 1) for s, n in zip(view.strides, view.shape) if s > 0) + view.itemsize
    if low < 0 or high > base.nbytes or start % view.itemsize:
        return None
    return start // view.itemsize


def trace(fn, *example_inputs) -> "GraphModule":
    """Run ``fn(*example_inputs)`` once and record every kernel the dispatcher runs.

    ``fn`` may be a reftorch ``nn.Module``: its parameters and buffers become ``get_attr``
    constants named by their dotted names. The inputs must be float32 or float64 tensors."""
    tracer = Tracer()
    names = _argument_names(fn, len(example_inputs))
    for i, (name, tensor) in enumerate(zip(names, example_inputs)):
        if not isinstance(tensor, Tensor):
            raise TypeError(f"trace(): example input {i} must be a Tensor, not {type(tensor).__name__}")
        tracer.input(name, tensor)
    for name, tensor in _named_state(fn):
        tracer.constant(name, tensor)
    with tracer:
        result = fn(*example_inputs)
    tracer.output(result)
    return GraphModule(tracer.graph, tracer.constants)


def _argument_names(fn, count) -> list[str]:
    """The names of ``fn``'s (or a module's ``forward``'s) positional parameters, as fx names
    placeholders; ``arg0``, ``arg1``, ... where there are none to read."""
    try:
        parameters = list(inspect.signature(getattr(fn, "forward", fn)).parameters.values())
    except (TypeError, ValueError):
        parameters = []
    names = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return names[:count] if len(names) >= count else [f"arg{i}" for i in range(count)]


def _named_state(fn):
    if hasattr(fn, "named_parameters") and hasattr(fn, "named_buffers"):
        yield from fn.named_parameters()
        yield from fn.named_buffers()


# -- running a graph -----------------------------------------------------------------------------

class GraphModule:
    """A graph and its constants, written back as Python (``code``) and callable on tensors.

    Like an ExportedProgram it checks its inputs against the example it was traced with: the
    graph holds no control flow, so it is right only for inputs of the same shapes and dtypes."""

    def __init__(self, graph: Graph, constants: dict):
        self.graph = graph
        self.constants = constants
        self.recompile()

    def recompile(self) -> None:
        """Write ``code`` from the graph again and compile it (after a pass changed the graph)."""
        self.code = self.graph.python_code()
        namespace = {"kernel": _cpu_kernel, "constants": self.constants, "np": np}
        for node in self.graph.nodes:
            if node.op == "call_function" and not isinstance(node.target, str):
                namespace[_target_name(node.target)] = node.target
        exec(compile(self.code, "<reftorch.fx generated code>", "exec"), namespace)
        self.forward = namespace["forward"]

    def __call__(self, *inputs):
        placeholders = [n for n in self.graph.nodes if n.op == "placeholder"]
        if len(inputs) != len(placeholders):
            raise TypeError(f"forward() takes {len(placeholders)} positional arguments but {len(inputs)} were given")
        for i, (tensor, node) in enumerate(zip(inputs, placeholders)):
            _guard(i, tensor, node)
        arrays = [t._np for t in inputs]
        result = self.forward(*arrays)
        held = arrays + list(self.constants.values())

        def fresh(array):  # a result never aliases an input or a constant (copied by a kernel)
            return Tensor._wrap(_cpu_kernel("copy")(array) if any(np.may_share_memory(array, h) for h in held)
                                else array)
        return tuple(fresh(r) for r in result) if isinstance(result, tuple) else fresh(result)

    def __repr__(self) -> str:
        return f"GraphModule({sum(n.op == 'call_function' for n in self.graph.nodes)} calls)\n{self.code}"


def _cpu_kernel(op):
    return dispatch.kernel(op, dispatch.cpu)


def _guard(i, tensor, node) -> None:
    """The example's shape, dtype and layout, checked with torch.export's words."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"input {i} must be a Tensor, not {type(tensor).__name__}")
    array, name, meta = tensor._np, node.name, node.meta
    if array.ndim != len(meta["shape"]):
        raise AssertionError(f"Guard failed: {name}.dim() == {len(meta['shape'])}")
    for d, (got, expected) in enumerate(zip(array.shape, meta["shape"])):
        if got != expected:
            raise AssertionError(f"Guard failed: {name}.size()[{d}] == {expected}")
    if array.dtype != meta["dtype"]:
        raise AssertionError(f"Guard failed: {name}.dtype == {_FROM_NUMPY[meta['dtype']]}")
    if meta.get("contiguous") and not array.flags.c_contiguous:
        raise AssertionError(f"Guard failed: {name}.is_contiguous()")
