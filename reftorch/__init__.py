"""reftorch: a small, readable engine that behaves like torch for everything it covers.

``import reftorch as torch`` runs covered torch code unchanged. Where to find things:

    storage.py    storage, sizes, strides, offsets, and the pure helpers over them
    dtypes.py     dtypes and type promotion
    tensor.py     the Tensor: metadata over a storage, no arithmetic
    dispatch.py   devices, and the per-device kernel tables (the dispatcher)
    kernels.py    the CPU kernels, on NumPy arrays
    sim.py        a second device, plugged in the way PyTorch's PrivateUse1 backends are
    functions/    every operation with its backward formula beside it, one file per family
    autograd/     the graph, the backward engine, grad modes, custom Functions, saved-tensor
                  hooks, anomaly mode
    func.py       function transforms: grad, vjp, jvp, vmap
    nn/           Module, Parameter, containers, layers, losses; embeddings (sparse.py), recurrent
                  layers (rnn.py, utils/rnn.py), lazy layers (lazy.py), adaptive pooling (pooling.py)
    optim/        SGD, Adam(W), RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam, ASGD (a file
                  each) and lr_scheduler
    serialization.py  torch.save / torch.load in torch's zip format (rebuild functions in _utils.py)
    typed_storage.py  tensor.storage() and the legacy storage classes checkpoints name
    backends/, accelerator.py, default_device.py  what a CPU-only torch reports and switches
    viz.py        draw a graph (with saved tensors and their versions), or a traced one
    fx.py         dispatch modes, and a tracer that records a program as a graph (make_fx's idea)
    fusion.py     a pass that fuses chains of element-wise kernels into one generated kernel
    random.py     the generator and its samplers (torch's numbers for a seed), multinomial
    distributions/  Distribution, constraints, Categorical, Multinomial, Normal: a small
                  torch.distributions whose samples are torch's for a seed
    amp.py        autocast: which op runs in which precision
"""
import warnings as _warnings

from . import dtypes as _dtypes
from .dtypes import (  # noqa: F401
    bfloat16, bool, double, dtype, finfo, float, float16, float32, float64, get_default_dtype, half,
    iinfo, int, int8, int16, int32, int64, long, promote_types, result_type, set_default_dtype, short,
    uint8, uint16, uint32, uint64,
)
from .dispatch import device  # noqa: F401
from ._formatting import get_printoptions, set_printoptions  # noqa: F401
from .tensor import Size, Tensor, is_tensor  # noqa: F401
from . import functions as _functions
from .functions import (  # noqa: F401
    abs, add, addmm, all, allclose, amax, amin, any, arange, argmax, argmin, as_strided,
    as_tensor, bmm, broadcast_tensors, broadcast_to, cat, chunk, clamp, clip, clone, concat,
    concatenate, contiguous, cos, count_nonzero, detach, div, dot, empty, empty_like, eq, equal,
    exp, expand, eye, flatten, floor, ceil, floor_divide, from_numpy, full, full_like, gather, ge, gt,
    hstack, inner, isclose, isnan, le, linspace, log, log_softmax, logical_and, logical_not,
    logical_or, lt, masked_fill, matmul, max, maximum, mean, min, minimum, mm, mul, mv, narrow,
    ne, neg, nonzero, norm, ones, ones_like, outer, permute, pow, prod, ravel, reciprocal, relu,
    remainder, repeat, reshape, rsub, select, sigmoid, sign, sin, softmax, sort, split, sqrt,
    square, squeeze, stack, std, sub, sum, t, tanh, tensor, tile, topk, transpose, true_divide,
    unbind, unflatten, unsqueeze, var, vstack, where, zeros, zeros_like,
)
from .functions import (  # noqa: F401
    _broadcast_shapes_api as broadcast_shapes, flip, moveaxis, movedim,
)
from .functions import (  # noqa: F401  (round 3: what tutorials and students reach for)
    BFloat16Tensor, BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, HalfTensor, IntTensor,
    LongTensor, ShortTensor, acos, argsort, asin, atan, cosh, cumprod, cumsum, einsum, erf, expm1, frac,
    index_add, index_fill, index_select, isfinite, isinf, isneginf, isposinf, log1p, log2, log10,
    logical_xor, logsumexp, masked_select, rsqrt, scatter, scatter_add, scatter_reduce, sinh, tan, tril,
    triu, trunc, round, swapaxes, swapdims,
)
from .functions import digamma, lgamma  # noqa: F401  (round 4: what torch.distributions needs)
from .random import (  # noqa: F401
    Generator, get_rng_state, initial_seed, manual_seed, multinomial, normal, rand, rand_like, randint,
    randn, randn_like, randperm, seed, set_rng_state,
)
from .random import default_generator_for as _default_generator_for
from . import autograd  # noqa: F401
from .autograd import enable_grad, inference_mode, no_grad, set_grad_enabled  # noqa: F401
from .autograd.grad_mode import is_grad_enabled, is_inference_mode_enabled  # noqa: F401
from .autograd.anomaly_mode import (  # noqa: F401
    is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled,
)
from . import cuda  # noqa: F401
from . import kernels as _kernels  # noqa: F401  (registers the CPU kernel table)
from . import sim as _sim

# torch returns inf/nan silently where NumPy would warn (overflow in exp, 0/0, ...): silence
# NumPy's RuntimeWarnings raised from reftorch's own code, and only those.
_warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"reftorch(\.|$)")
default_generator = _default_generator_for("cpu")
contiguous_format = "contiguous"
preserve_format = None
__version__ = "0.1.0"

# The second device arrives through the same public route any backend would use.
_sim._register()

from . import nn  # noqa: E402,F401
from . import optim  # noqa: E402,F401
from . import utils  # noqa: E402,F401
from . import func  # noqa: E402,F401
from . import distributions  # noqa: E402,F401
from . import accelerator, backends  # noqa: E402,F401
from .default_device import get_default_device, set_default_device  # noqa: E402,F401
from . import serialization  # noqa: E402,F401
from .serialization import load, save  # noqa: E402,F401
from . import typed_storage as _typed_storage  # noqa: E402
from .typed_storage import TypedStorage  # noqa: E402,F401

_typed_storage._install()
for _name, _cls in _typed_storage.LEGACY_CLASSES.items():  # torch.FloatStorage, torch.LongStorage, ...
    globals()[_name] = _cls

# autocast goes in front of the ops it lists, as torch's Autocast dispatch key does
from . import amp  # noqa: E402
from .amp import autocast, get_autocast_dtype, is_autocast_available, is_autocast_enabled  # noqa: E402,F401

amp._install()
