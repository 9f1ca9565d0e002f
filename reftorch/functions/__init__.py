"""Every operation, with its backward formula beside it, one file per family of operations
(as ``tools/autograd/derivatives.yaml`` groups torch's formulas):

    creation.py     tensor, zeros, ones, full, arange, linspace, eye, from_numpy, *_like
    copies.py       clone, contiguous, detach, flip, to (dtype and device)
    comparison.py   eq, lt, ..., logical and bitwise ops, where, isnan
    unary.py        exp, log, sqrt, sin, cos, tanh, sigmoid, relu, abs, sign, clamp, lgamma, ...
    arithmetic.py   add, sub, mul, div, pow, remainder, floor_divide, maximum, minimum
    views.py        view, reshape, transpose, permute, squeeze, expand, select, slices,
                    split, as_strided, unfold: new geometry over the same storage
    joining.py      cat, stack, repeat, tile
    reductions.py   sum, mean, prod, max, min, argmax, topk, sort, var, std, norm
    linalg.py       mm, mv, dot, bmm, addmm, matmul
    inplace.py      add_, mul_, copy_, fill_, ...: writing into a tensor, and its autograd
    indexing.py     t[key], t[key] = v, index_put_, masked_fill, gather
    activations.py  softmax, log_softmax
    convolution.py  conv2d, max_pool2d, avg_pool2d, pad: windows as strided views (im2col)
    _support.py     what every op shares: recording its node, reading operands, result layout
    methods.py      the Tensor methods and operators (``x.sum()``, ``x + y``) that call these

An operation checks its arguments the way torch does, runs its device's kernel (dispatch.py)
on NumPy arrays, and, if an input requires grad, records a Node (``MulBackward0``, ...)
whose ``backward`` turns the output's gradient into the inputs' gradients. Backward formulas
are written with tensor operations, so with ``create_graph=True`` they are recorded too, and
gradients of gradients come for free. ``reftorch.functions.<name>`` finds any of them.
"""
import types as _types

from . import _support, copies, creation, comparison, unary, arithmetic  # noqa: I001  (dependency order)
from . import joining, views, reductions, linalg, inplace, indexing, activations, convolution
from . import methods as _methods

FAMILIES = (_support, copies, creation, comparison, unary, arithmetic, joining, views, reductions,
            linalg, inplace, indexing, activations, convolution, _methods)

# reftorch.functions.<name> reaches every op and helper of every family (lessons print them with
# inspect.getsource, and the rest of reftorch imports them from here)
for _family in FAMILIES:
    for _name, _value in vars(_family).items():
        if not _name.startswith("__") and _name != "annotations" and not isinstance(_value, _types.ModuleType):
            globals().setdefault(_name, _value)
del _family, _name, _value

# every public op passes forward-mode tangents on, by the rule written beside it (``op.jvp``)
for _name, _value in list(globals().items()):
    if isinstance(_value, _types.FunctionType) and not _name.startswith("_") and _name not in (
            "forward_mode", "same_op_on_tangent", "no_tangent", "legacy_new", "with_out"):
        globals()[_name] = forward_mode(_value, inplace=_name.endswith("_"))
del _name, _value

# out=: the functions torch's tutorials and users call with an out tensor
for _name in ("add", "sub", "mul", "div", "true_divide", "pow", "remainder", "floor_divide", "maximum",
              "minimum", "eq", "ne", "lt", "le", "gt", "ge", "where", "exp", "log", "sqrt", "abs", "neg",
              "sin", "cos", "tanh", "sigmoid", "clamp", "clip", "sum", "mean", "prod", "amax", "amin", "max",
              "min", "argmax", "argmin", "cumsum", "logsumexp", "matmul", "mm", "bmm", "mv", "dot", "addmm",
              "cat", "concat", "concatenate", "stack", "zeros", "ones", "full", "empty", "arange", "linspace",
              "eye", "tril", "triu", "einsum", "gather", "index_select", "masked_select", "sort", "topk"):
    globals()[_name] = with_out(globals()[_name])
del _name

_methods.install()
