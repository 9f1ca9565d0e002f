"""Every operation: declared in two tables, implemented one family per file.

    native_functions.py  every op's schema, its Python forms and its implementation
    derivatives.py       every differentiable op's backward formulas (and forward-mode rule)
    codegen.py           builds the functions, methods, variants and backward nodes from both,
                         with nodes.py (the backward nodes) and arguments.py (torch's Python
                         argument parser: overloads, argument types, messages)
    schema.py            what an entry of either table is

    creation.py     tensor, zeros, ones, full, arange, linspace, eye, from_numpy, *_like
    copies.py       clone, contiguous, detach, flip, to (dtype and device)
    comparison.py   eq, lt, ..., logical and bitwise ops, where, isnan
    unary.py        exp, log, sqrt, sin, cos, tanh, sigmoid, relu, abs, sign, clamp, lgamma, ...
    arithmetic.py   add, sub, mul, div, pow, remainder, floor_divide, maximum, minimum
    views.py        view, reshape, transpose, permute, squeeze, expand, select, slices,
                    split, as_strided, unfold: new geometry over the same storage
    joining.py      cat, stack, repeat, tile
    reductions.py   sum, mean, prod, max, min, argmax, topk, sort, var, std, norm
    selection.py    median, nanmedian, kthvalue, mode: which element torch's CPU kernels pick
    counting.py     bincount, histc, unique, unique_consecutive
    linalg.py       mm, mv, dot, bmm, addmm, matmul, linear
    inplace.py      add_, mul_, copy_, fill_, ...: writing into a tensor, and its autograd
    indexing.py     t[key], t[key] = v, index_put_, masked_fill, gather, scatter
    embeddings.py   embedding (rows of a table looked up by id) and its backward
    activations.py  softmax, log_softmax, and nn.functional's element-wise activations
    convolution.py  conv2d, max/avg_pool2d (and 1d), pad: windows as strided views (im2col)
    loss.py         mse, nll, cross-entropy, binary cross-entropy
    normalization.py  batch norm, layer norm
    sampling.py     rand, randn, normal_, uniform_, multinomial, ...: drawing from a Generator
    autocast.py     the casts autocast puts in front of an op
    _support.py     what every op shares: reading operands, result layout, recording a node
    methods.py      Python's own Tensor methods: operators, x.float(), x.T

An implementation checks its arguments the way torch does and runs its device's kernel
(dispatch.py) on NumPy arrays; it never touches the graph. When an input requires grad,
codegen records the node derivatives.py describes (``MulBackward0``, ...), whose formulas
are tensor operations, so with ``create_graph=True`` they are recorded too, and gradients
of gradients come for free. ``reftorch.functions.<name>`` finds any op or helper.
"""
import types as _types

from . import _support, autocast, schema, arguments, nodes, codegen  # noqa: I001  (the machinery first)
from . import creation, copies, comparison, unary, arithmetic, joining, views, reductions, linalg  # noqa: I001
from . import inplace, indexing, embeddings, activations, convolution, loss, normalization, sampling, selection
from . import counting  # noqa: I001
from . import native_functions, derivatives
from . import methods as _methods
from .codegen import ops  # noqa: F401
from .nodes import GeneratedNode  # noqa: F401

FAMILIES = (_support, copies, creation, comparison, unary, arithmetic, joining, views, reductions,
            linalg, inplace, indexing, embeddings, activations, convolution, loss, normalization, sampling, selection,
            counting, _methods)

GENERATED = codegen.generate(native_functions.NATIVE_FUNCTIONS, derivatives.DERIVATIVES,
                             inplace.inplace_variant, inplace.run_inplace)

# reftorch.functions.<name>: every op as built (what user code calls), every backward node,
# then every helper of the families (lessons print them with inspect.getsource)
_FAMILY_NAMES = {family.__name__.rsplit(".", 1)[1] for family in FAMILIES}
globals().update({name: value for name, value in vars(ops).items()
                  if not name.startswith("__") and name not in _FAMILY_NAMES})  # (convolution is a file)
globals().update(GENERATED.nodes)
for _family in FAMILIES:
    for _name, _value in vars(_family).items():
        if not _name.startswith("__") and _name != "annotations" and not isinstance(_value, _types.ModuleType):
            globals().setdefault(_name, _value)
del _family, _name, _value

# the Python functions that are not ops (torch writes them in Python too)
from .creation import (  # noqa: E402,F401
    BFloat16Tensor, BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, HalfTensor, IntTensor,
    LongTensor, ShortTensor, as_tensor, from_numpy, tensor,
)
from .views import _broadcast_shapes_api as broadcast_shapes  # noqa: E402,F401
from .views import _meshgrid_api as meshgrid  # noqa: E402,F401
from .counting import unique_api as unique, unique_consecutive_api as unique_consecutive  # noqa: E402,F401

ops.broadcast_shapes = broadcast_shapes

# torch.<name>: the ops declared with the function variant, and the Python functions above
PUBLIC = tuple(dict.fromkeys(GENERATED.public + [
    "tensor", "as_tensor", "from_numpy", "broadcast_shapes", "meshgrid", "unique", "unique_consecutive", "FloatTensor", "DoubleTensor", "HalfTensor",
    "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"]))
POINTWISE_KERNELS = codegen.pointwise_kernels(GENERATED.declarations)    # what fusion may fuse
AUTOCAST_LISTS = codegen.autocast_lists(GENERATED.declarations)          # what amp casts
explain = GENERATED.explain                                              # an op's entries, and what they made

_methods.install(GENERATED.methods)
