"""reftorch: a small, readable engine that behaves like torch for everything it covers.

``import reftorch as torch`` runs covered torch code unchanged. Where to find things:

    storage.py    storage, sizes, strides, offsets, and the pure helpers over them
    dtypes.py     dtypes and type promotion
    dispatch.py   devices, and the per-device kernel tables (the dispatcher)
    kernels.py    the CPU kernels, on NumPy arrays
    _modes.py     the switches every op reads: grad mode, inference mode, autocast, ...
    sim.py        a second device, plugged in the way PyTorch's PrivateUse1 backends are
    tensor.py     the Tensor: metadata over a storage, no arithmetic
    generator.py  the random number generator (torch's numbers for a seed)
    autograd/     the graph (graph.py), the backward engine, grad modes, custom Functions,
                  forward-mode AD, saved-tensor hooks, anomaly mode
    functions/    every operation: declared once (native_functions.py, derivatives.py),
                  implemented one family per file; codegen.py builds the rest
    func.py       function transforms: grad, vjp, jvp, vmap
    nn/           Module, Parameter, containers, layers, nn.functional; embeddings (sparse.py), recurrent
                  layers (rnn.py, utils/rnn.py), lazy layers (lazy.py), adaptive pooling (pooling.py)
    optim/        SGD, Adam(W), RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam, ASGD (a file
                  each) and lr_scheduler
    random.py     torch.random: seeding and the generator's state
    special.py    torch.special: erfinv, ndtr, logit, xlogy, i0... (ops named special_*)
    linalg.py     torch.linalg: norms, inv, det, solve, cholesky, qr, eigh, svd... (ops named linalg_*)
    distributions/  Distribution, constraints, Bernoulli, Categorical, Multinomial, Normal, Uniform: a small
                  torch.distributions whose samples are torch's for a seed
    amp.py        autocast: which op runs in which precision
    fx.py         dispatch modes, and a tracer that records a program as a graph (make_fx's idea)
    fusion.py     a pass that fuses chains of element-wise kernels into one generated kernel
    viz.py        draw a graph (with saved tensors and their versions), or a traced one
    serialization.py  torch.save / torch.load in torch's zip format (rebuild functions in _utils.py)
    typed_storage.py  tensor.storage() and the legacy storage classes checkpoints name
    backends/, accelerator.py, default_device.py  what a CPU-only torch reports and switches

Each layer imports only the ones above it in this list (tests/test_module_map.py checks).
"""
import warnings as _warnings

from . import dtypes as _dtypes
from .dtypes import (  # noqa: F401
    bfloat16, bool, double, dtype, finfo, float, float16, float32, float64, get_default_dtype, half,
    iinfo, int, int8, int16, int32, int64, long, promote_types, result_type, set_default_dtype, short,
    uint8, uint16, uint32, uint64,
)
from .dispatch import device  # noqa: F401
from . import kernels as _kernels  # noqa: F401  (registers the CPU kernel table)
from . import meta as _meta  # noqa: F401  (the meta device's kernels)
from ._formatting import get_printoptions, set_printoptions  # noqa: F401
from ._parallel import get_num_threads, set_num_threads  # noqa: F401
from .tensor import Size, Tensor, is_tensor  # noqa: F401
from .generator import Generator, default_generator_for as _default_generator_for  # noqa: F401
# the autograd package: its graph half first, then (importing the ops) its engine half
from . import autograd  # noqa: F401
from . import functions as _functions

# torch.<op>: every op declared with the function variant (functions/native_functions.py)
globals().update({_name: getattr(_functions, _name) for _name in _functions.PUBLIC})
from .functions import ops as _ops  # noqa: E402
from .functions.activations import selu_  # noqa: E402,F401  (torch.selu_: elu_ with SELU's constants)
celu_, threshold_ = _ops.celu_, _ops.threshold_
from .random import get_rng_state, initial_seed, manual_seed, seed, set_rng_state  # noqa: E402,F401
from .autograd import enable_grad, inference_mode, no_grad, set_grad_enabled  # noqa: E402,F401
from .autograd.grad_mode import is_grad_enabled, is_inference_mode_enabled  # noqa: E402,F401
from .autograd.anomaly_mode import (  # noqa: E402,F401
    is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled,
)
from . import cuda  # noqa: E402,F401
from . import sim as _sim  # noqa: E402

# torch returns inf/nan silently where NumPy would warn (overflow in exp, 0/0, ...): silence
# NumPy's RuntimeWarnings raised from reftorch's own code, and only those.
_warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"reftorch(\.|$)")
default_generator = _default_generator_for("cpu")
from .storage import contiguous_format, preserve_format  # noqa: E402,F401
__version__ = "0.1.0"

# The second device arrives through the same public route any backend would use.
_sim._register()

from . import nn  # noqa: E402,F401
from . import optim  # noqa: E402,F401
from . import utils  # noqa: E402,F401
from . import func  # noqa: E402,F401
from . import distributions  # noqa: E402,F401
from . import special  # noqa: E402,F401
from . import fx  # noqa: E402,F401  (torch.fx is an attribute after `import torch` too)
from . import linalg  # noqa: E402,F401
from . import accelerator, backends  # noqa: E402,F401
from .default_device import get_default_device, set_default_device  # noqa: E402,F401
from . import serialization  # noqa: E402,F401
from . import return_types  # noqa: E402,F401
from .serialization import load, save  # noqa: E402,F401
from . import typed_storage as _typed_storage  # noqa: E402
from .typed_storage import TypedStorage  # noqa: E402,F401
from .storage import UntypedStorage  # noqa: E402,F401

_typed_storage._install()
for _name, _cls in _typed_storage.LEGACY_CLASSES.items():  # torch.FloatStorage, torch.LongStorage, ...
    globals()[_name] = _cls
from . import amp  # noqa: E402,F401
from .amp import autocast, get_autocast_dtype, is_autocast_available, is_autocast_enabled  # noqa: E402,F401
