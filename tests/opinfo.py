"""Sample inputs for every operator reftorch declares (its common_methods_invocations.py).

One ``OpInfo`` per entry of reftorch/functions/native_functions.py, keyed by the entry's
``name.overload``: the samples it runs on (``Sample(T(2, 3), 2.0, alpha=3)``: ``T`` is a
tensor with the same numbers in torch and in reftorch), the inputs torch refuses (``errors``:
reftorch must refuse them with torch's words), and the checks that do not apply, each with
its reason. tests/test_engine_opinfo.py runs every check on every sample. Adding an op to
reftorch means adding its samples here (reftorch/README.md).

The op is called the way its declaration says Python reaches it: ``torch.<name>`` for the
function variant, ``x.<name>`` for a method-only op, and otherwise torch's
``torch.ops.aten.<name>.<overload>`` against reftorch's ``functions.ops.<name>``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


class T:
    """A tensor argument, made from the same numbers for both libraries.

    ``dtype`` a name (float32, int64, bool); ``low``/``high`` the range of the values
    (integers: [low, high)); ``values`` fixed numbers instead; ``grad`` whether it requires
    grad (by default: a floating tensor does); ``layout`` contiguous, transposed (the same
    shape through a .t() of the other shape: strides not row-major) or expanded."""

    def __init__(self, *shape, dtype="float32", low=-2.0, high=2.0, values=None, grad=None, layout="contiguous"):
        self.shape, self.dtype, self.low, self.high = tuple(shape), dtype, low, high
        self.values, self.layout = values, layout
        self.grad = dtype.startswith("float") if grad is None else grad

    def array(self, rng):
        if self.values is not None:
            return np.array(self.values, dtype=self.dtype)
        shape = self.shape[::-1] if self.layout == "transposed" else self.shape
        if self.layout == "expanded":
            shape = (1,) + self.shape[1:]
        if self.dtype == "bool":
            return rng.random(shape) < 0.5
        if self.dtype.startswith("int") or self.dtype == "uint8":
            return rng.integers(int(self.low), int(self.high), shape).astype(self.dtype)
        return rng.uniform(self.low, self.high, shape).astype(self.dtype)

    def make(self, lib, array):
        """(the tensor to pass, the leaf that requires grad or None)."""
        leaf = lib.tensor(array, requires_grad=bool(self.grad))
        t = leaf
        if self.layout == "transposed":
            t = leaf.t() if leaf.dim() == 2 else leaf.permute(*reversed(range(leaf.dim())))
        elif self.layout == "expanded":
            t = leaf.expand(*self.shape)
        return t, (leaf if self.grad else None)


class Sample:
    """The arguments of one call: tensors as ``T``, anything else as it is."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs

    def __repr__(self):
        return f"Sample({', '.join(map(_short, self.args))}{', ' if self.kwargs else ''}" \
               f"{', '.join(f'{k}={_short(v)}' for k, v in self.kwargs.items())})"


def _short(value):
    if isinstance(value, T):
        return f"T{value.shape}:{value.dtype}" + (f":{value.layout}" if value.layout != "contiguous" else "")
    if isinstance(value, (list, tuple)):
        return type(value)(_short(v) for v in value).__repr__()
    return repr(value)


@dataclass
class OpInfo:
    samples: list
    errors: list = field(default_factory=list)   # samples torch refuses
    no_error_because: str = ""                    # why no input is refused (none for most ops)
    call: str = ""                                # "function", "method", "special" or "aten"; by default from the variants
    gradgrad: bool | str = True                   # str: why reftorch does not take it a second time
    jvp: bool | str = True                        # str: why the forward-mode check is left out
    seeded: bool = False                          # a random op: both generators seeded before each call
    inplace: bool = True                          # False: the in-place variant needs its own samples
    values: bool = True                           # False: only shape, strides and dtype (empty)


# -- shorthands for the families of ops -------------------------------------------------------
def unary(low=-2.0, high=2.0, ints=True, **extra):
    """A pointwise op of one tensor: a matrix, a transposed one (torch's layout of the result),
    a scalar, and an integer tensor (promoted to float, or kept)."""
    samples = [Sample(T(3, 4, low=low, high=high)), Sample(T(4, 3, low=low, high=high, layout="transposed")),
               Sample(T(low=low, high=high))]
    if ints:
        samples.append(Sample(T(5, dtype="int64", low=max(low, -5), high=max(high, 1) + 3)))
    return OpInfo(samples, errors=[Sample([1.0, 2.0])], **extra)


def binary(low=-2.0, high=2.0, number=True, other_low=None, other_high=None, **extra):
    """A pointwise op of two tensors: same shape, broadcast, a number, mixed dtypes."""
    olow = low if other_low is None else other_low
    ohigh = high if other_high is None else other_high
    samples = [Sample(T(3, 4, low=low, high=high), T(3, 4, low=olow, high=ohigh)),
               Sample(T(2, 3, 4, low=low, high=high), T(4, low=olow, high=ohigh)),
               Sample(T(4, 3, low=low, high=high, layout="transposed"), T(4, 3, low=olow, high=ohigh)),
               Sample(T(3, low=low, high=high), T(3, dtype="float64", low=olow, high=ohigh))]
    if number:
        samples.append(Sample(T(3, 2, low=low, high=high), 1.5 if olow > 0 or ohigh > 1.5 else ohigh / 2))
    return OpInfo(samples, errors=[Sample(T(2, 3), T(4))], **extra)


def comparison(**extra):
    return OpInfo([Sample(T(3, 4), T(3, 4)), Sample(T(2, 3), T(3)), Sample(T(3, 2), 0.5),
                   Sample(T(4, dtype="int64", low=-3, high=3), T(4, dtype="int64", low=-3, high=3))],
                  errors=[Sample(T(2, 3), T(4))], **extra)


def logical(**extra):
    return OpInfo([Sample(T(3, 4, dtype="bool"), T(3, 4, dtype="bool")), Sample(T(4, dtype="int64"), T(4, dtype="bool"))],
                  errors=[Sample(T(2, 3, dtype="bool"), T(4, dtype="bool"))], **extra)


def bitwise(**extra):
    return OpInfo([Sample(T(3, 4, dtype="int64", low=0, high=16), T(3, 4, dtype="int64", low=0, high=16)),
                   Sample(T(4, dtype="bool"), T(4, dtype="bool"))],
                  errors=[Sample(T(2), T(2))], **extra)  # floats: no bitwise kernel


def predicate(**extra):
    values = [1.0, -np.inf, np.inf, np.nan, 0.0]
    return OpInfo([Sample(T(5, values=values)), Sample(T(3, dtype="int64"))], errors=[Sample([1.0])], **extra)


def reduction_all(**extra):
    return OpInfo([Sample(T(3, 4)), Sample(T(4, 3, layout="transposed")), Sample(T(5))],
                  errors=[Sample([1.0, 2.0])], **extra)


def reduction_dim(**extra):
    return OpInfo([Sample(T(3, 4), 1), Sample(T(3, 4), 0, keepdim=True), Sample(T(2, 3, 4), -1),
                   Sample(T(4, 3, layout="transposed"), 0)],
                  errors=[Sample(T(3, 4), 5)], **extra)


def factory(*samples, errors=None, **extra):
    """A function making a tensor from sizes: by default, a negative size is refused."""
    return OpInfo(list(samples), errors=errors or [Sample(-1)], call="function", gradgrad=False, jvp=False,
                  inplace=False, **extra)


def like(**extra):
    return OpInfo([Sample(T(3, 4)), Sample(T(4, 3, layout="transposed")), Sample(T(2, dtype="int64"))],
                  no_error_because="every tensor has a shape to copy", jvp=False, **extra)


def view_op(*samples, errors=(), **extra):
    return OpInfo(list(samples), errors=list(errors), **extra)


_NO_TORCH_SECOND = "torch raises for this one too"
_RAW = "reftorch computes this backward on arrays (not recorded ops): it refuses a second derivative"


_WELL_CONDITIONED = [[2.0, 0.5, -0.3], [0.4, 1.5, 0.2], [-0.6, 0.1, 1.8]]
_POSITIVE_DEFINITE = [[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]]
_NO_JVP = "reftorch has no forward-mode rule for this linalg op"


# -- every declared op --------------------------------------------------------------------------
OPS = {
    # pointwise, one input
    "abs": unary(), "neg": unary(), "sign": unary(), "floor": unary(), "ceil": unary(), "round": unary(),
    "trunc": unary(), "frac": unary(), "relu": unary(),
    "exp": unary(), "expm1": unary(), "log": unary(0.1, 4.0), "log1p": unary(-0.9, 3.0), "log2": unary(0.1, 4.0),
    "log10": unary(0.1, 4.0), "sqrt": unary(0.1, 4.0), "rsqrt": unary(0.1, 4.0), "reciprocal": unary(0.5, 3.0),
    "sin": unary(), "cos": unary(), "tan": unary(-1.2, 1.2), "asin": unary(-0.9, 0.9, ints=False),
    "acos": unary(-0.9, 0.9, ints=False), "atan": unary(), "sinh": unary(), "cosh": unary(), "tanh": unary(),
    "asinh": unary(), "sigmoid": unary(), "erf": unary(),
    "lgamma": unary(0.5, 4.0), "digamma": unary(0.5, 4.0),
    # special functions, and torch.special's names for ops (special_erf runs erf)
    "erfc": unary(), "erfinv": unary(-0.95, 0.95), "exp2": unary(), "i0": unary(), "sinc": unary(),
    "logit": OpInfo([Sample(T(3, 4, low=0.05, high=0.95)), Sample(T(4, 3, low=-0.2, high=1.2), eps=0.1),
                     Sample(T(5, low=0.1, high=0.9), 0.25), Sample(T(4, dtype="int64", low=0, high=2))],
                    errors=[Sample([0.5])]),
    "xlogy.Tensor": binary(other_low=0.1, other_high=3.0),
    "xlogy.Scalar_Self": OpInfo([Sample(2.0, T(3, 4, low=0.1, high=3.0)), Sample(0, T(4, low=0.1, high=3.0))],
                                errors=[Sample(2.0, [1.0])]),
    "xlogy.Scalar_Other": OpInfo([Sample(T(3, 4), 2.5), Sample(T(3, values=[0.0, 1.0, 2.0]), 0.0),
                                  Sample(T(4, dtype="int64", low=0, high=4), 3)],
                                 errors=[Sample([1.0], 2.0)]),
    "special_entr": unary(0.1, 3.0), "special_ndtri": unary(0.05, 0.95, ints=False),
    "special_log_ndtr": unary(-4.0, 3.0), "special_ndtr": unary(),
    "special_i0e": unary(), "special_i1": unary(), "special_i1e": unary(),
    **{f"special_{name}": unary(*bounds) for name, bounds in {
        "erf": (), "erfc": (), "erfinv": (-0.95, 0.95), "expit": (), "log1p": (-0.9, 3.0), "expm1": (), "exp2": (),
        "i0": (), "sinc": (), "gammaln": (0.5, 4.0), "digamma": (0.5, 4.0), "psi": (0.5, 4.0)}.items()},
    "special_logit": OpInfo([Sample(T(3, 4, low=0.05, high=0.95)), Sample(T(5, low=-0.2, high=1.2), eps=0.1)],
                            errors=[Sample([0.5])]),
    "special_xlogy": binary(other_low=0.1, other_high=3.0),
    "special_xlogy.self_scalar": OpInfo([Sample(2.0, T(3, 4, low=0.1, high=3.0))], errors=[Sample(2.0, [1.0])]),
    "special_xlogy.other_scalar": OpInfo([Sample(T(3, 4), 2.5)], errors=[Sample([1.0], 2.0)]),
    "special_polygamma": OpInfo([Sample(1, T(3, 4, low=0.5, high=4.0))], errors=[Sample(-1, T(3))]),
    "special_logsumexp": OpInfo([Sample(T(3, 4), 1), Sample(T(3, 4), (0, 1), True)], errors=[Sample(T(3, 4), 5)]),
    "special_softmax": OpInfo([Sample(T(3, 4), 1), Sample(T(3, 4), 0, dtype="float64")], errors=[Sample(T(3, 4), 5)]),
    "special_log_softmax": OpInfo([Sample(T(3, 4), 1), Sample(T(3, 4), -1, dtype="float64")],
                                  errors=[Sample(T(3, 4), 5)]),
    "polygamma": OpInfo([Sample(1, T(3, 4, low=0.5, high=4.0)), Sample(2, T(5, low=1.0, high=6.0)),
                         Sample(3, T(4, dtype="int64", low=1, high=5)), Sample(0, T(3, low=0.5, high=3.0))],
                        errors=[Sample(1, [1.0]), Sample(-1, T(3))]),
    "clamp": OpInfo([Sample(T(3, 4), -0.5, 0.5), Sample(T(3, 4), min=0.0), Sample(T(3, 4), max=0.3),
                     Sample(T(4, 3, layout="transposed"), -1, 1), Sample(T(4, dtype="int64", low=-5, high=5), 0.5)],
                    errors=[Sample(T(3))]),
    "square": unary(),

    # pointwise, two inputs
    "add.Tensor": OpInfo(
        binary().samples + [Sample(T(3, 4), T(3, 4), alpha=2.5), Sample(T(3, dtype="int64"), T(3, dtype="int64"), alpha=2)],
        errors=[Sample(T(2, 3), T(4)), Sample(T(3, dtype="int64"), T(3, dtype="int64"), alpha=0.5)]),
    "add.Scalar": OpInfo([Sample(T(3, 4), 2.5), Sample(T(3), -1, 2), Sample(T(3, dtype="int64"), 2.5)],
                         errors=[Sample(T(3, dtype="int64"), 2, 0.5)]),
    "sub.Tensor": OpInfo(binary().samples + [Sample(T(3, 4), T(4), alpha=0.5)],
                         errors=[Sample(T(2, 3), T(4)), Sample(T(2, dtype="bool"), T(2, dtype="bool"))]),
    "rsub.Tensor": OpInfo([Sample(T(3, 4), T(3, 4)), Sample(T(3, 4), T(4), alpha=2)], errors=[Sample(T(2, 3), T(4))]),
    "rsub.Scalar": OpInfo([Sample(T(3, 4), 2.0), Sample(T(3), 1.5, alpha=3)], errors=[Sample(T(2, dtype="bool"), True)]),
    "mul.Tensor": binary(),
    "mul.Scalar": OpInfo([Sample(T(3, 4), 2.5), Sample(T(3), -1), Sample(T(3, dtype="int64"), 2),
                          Sample(T(3, dtype="bool"), 2)], no_error_because="any tensor multiplies by a number"),
    "div.Tensor": binary(other_low=0.5, other_high=3.0),
    "div.Scalar": OpInfo([Sample(T(3, 4), 2.5), Sample(T(3), -4), Sample(T(3, dtype="int64"), 2)],
                         no_error_because="any tensor divides by a number"),
    "div.Tensor_mode": OpInfo([Sample(T(3, 4), T(3, 4, low=0.5, high=3.0), rounding_mode="floor"),
                               Sample(T(3, 4), T(4, low=0.5, high=3.0), rounding_mode="trunc"),
                               Sample(T(3, 4), 1.5, rounding_mode=None),
                               Sample(T(4, dtype="int64", low=-9, high=9), T(4, dtype="int64", low=1, high=4),
                                      rounding_mode="floor")],
                              errors=[Sample(T(3), T(3), rounding_mode="up"),
                                      Sample(T(3, dtype="int64"), T(3, dtype="int64", low=0, high=1), rounding_mode="floor")],
                              gradgrad=True),
    "floor_divide": OpInfo([Sample(T(3, 4, grad=False), T(3, 4, low=0.5, high=3.0, grad=False)),
                            Sample(T(4, dtype="int64", low=-9, high=9), T(4, dtype="int64", low=1, high=4)),
                            Sample(T(3), T(3, low=0.5, high=2.0, grad=False))],
                           errors=[Sample(T(3, dtype="int64"), T(3, dtype="int64", low=0, high=1))]),
    "remainder.Scalar": OpInfo([Sample(T(3, 4), 1.5), Sample(T(4, dtype="int64", low=-9, high=9), 4)],
                               errors=[Sample(T(3, dtype="int64"), 0)]),
    "remainder.Tensor": OpInfo([Sample(T(3, 4), T(3, 4, low=0.5, high=3.0)), Sample(T(3, 4), T(4, low=0.5, high=2.0))],
                               errors=[Sample(T(2, 3), T(4))]),
    "remainder.Scalar_Tensor": OpInfo([Sample(3, T(3, 4, low=0.5, high=3.0)), Sample(-7, T(4, dtype="int64", low=1, high=5)),
                                       Sample(2.5, T(4, dtype="int64", low=-5, high=-1))],
                                      errors=[Sample(3, T(3, dtype="int64", low=0, high=1))]),
    "fmod.Scalar": OpInfo([Sample(T(3, 4), 1.5), Sample(T(4, dtype="int64", low=-9, high=9), 4), Sample(T(3), -0.7),
                           Sample(T(4, dtype="int64", low=-9, high=9), 2.5)],
                          errors=[Sample(T(3, dtype="int64"), 0)]),
    "fmod.Tensor": OpInfo([Sample(T(3, 4), T(3, 4, low=0.5, high=3.0)), Sample(T(3, 4), T(4, low=-2.0, high=-0.5)),
                           Sample(T(4, 3, layout="transposed"), T(4, 3, low=0.5, high=2.0)),
                           Sample(T(4, dtype="int64", low=-9, high=9), T(4, dtype="int64", low=1, high=4))],
                          errors=[Sample(T(2, 3), T(4)), Sample(T(3, dtype="int64"), T(3, dtype="int64", low=0, high=1))]),
    "pow.Tensor_Tensor": OpInfo([Sample(T(3, 4, low=0.5, high=2.0), T(3, 4, low=-1.0, high=2.0)),
                                 Sample(T(3, 4, low=0.5, high=2.0), T(4, low=0.0, high=2.0))],
                                errors=[Sample(T(2, 3), T(4))]),
    "pow.Tensor_Scalar": OpInfo([Sample(T(3, 4), 2), Sample(T(3, 4, low=0.5, high=2.0), -1.5), Sample(T(3), 0),
                                 Sample(T(4, dtype="int64", low=-3, high=4), 3)],
                                errors=[Sample(T(3, dtype="int64"), -1)]),
    "pow.Scalar": OpInfo([Sample(2.0, T(3, 4)), Sample(0.5, T(4))], errors=[Sample(2.0, [1.0])]),
    "maximum": binary(number=False), "minimum": binary(number=False),
    "eq.Tensor": comparison(), "ne.Tensor": comparison(), "lt.Tensor": comparison(), "le.Tensor": comparison(),
    "gt.Tensor": comparison(), "ge.Tensor": comparison(),
    "logical_and": logical(), "logical_or": logical(), "logical_xor": logical(),
    "logical_not": OpInfo([Sample(T(3, 4, dtype="bool")), Sample(T(4))], no_error_because="any tensor has a truth value"),
    "bitwise_and.Tensor": bitwise(), "bitwise_or.Tensor": bitwise(), "bitwise_xor.Tensor": bitwise(),
    # shift counts past the width and negative ones included (torch gives 0, or -1 right of a negative)
    "bitwise_left_shift.Tensor": OpInfo([Sample(T(3, 4, dtype="int64", low=-20, high=20), T(3, 4, dtype="int64", low=-2, high=70)),
                                         Sample(T(2, 5, dtype="int8", low=-100, high=100), T(5, dtype="int8", low=-1, high=10)),
                                         Sample(T(4, dtype="int32", low=0, high=9), 3)],
                                        errors=[Sample(T(2), 1), Sample(T(2, dtype="bool"), T(2, dtype="bool"))]),
    "bitwise_right_shift.Tensor": OpInfo([Sample(T(3, 4, dtype="int64", low=-300, high=300), T(3, 4, dtype="int64", low=-2, high=70)),
                                          Sample(T(2, 5, dtype="uint8", low=0, high=255), T(5, dtype="uint8", low=0, high=10)),
                                          Sample(T(4, dtype="int16", low=-50, high=50), 17)],
                                         errors=[Sample(T(2), 1), Sample(T(2, dtype="bool"), T(2, dtype="bool"))]),
    "bitwise_not": OpInfo([Sample(T(3, 4, dtype="int64", low=0, high=16)), Sample(T(4, dtype="bool"))],
                          errors=[Sample(T(3))]),
    "isnan": predicate(), "isinf": predicate(), "isfinite": predicate(), "isposinf": predicate(),
    "isneginf": predicate(),
    "where.self": OpInfo([Sample(T(3, 4, dtype="bool"), T(3, 4), T(3, 4)), Sample(T(3, 4, dtype="bool"), T(4), 0.5),
                          Sample(T(2, 1, dtype="bool"), T(1, 3), T(2, 3))],
                         errors=[Sample(T(3, dtype="int64"), T(3), T(3))]),
    "where": OpInfo([Sample(T(3, 4, dtype="bool")), Sample(T(5, dtype="int64", low=-1, high=2))],
                    no_error_because="any tensor has nonzero elements or not"),
    "isclose": OpInfo([Sample(T(3, 4), T(3, 4)), Sample(T(3), T(3), rtol=0.5, atol=1.0)],
                      errors=[Sample(T(2, 3), T(4))]),
    "allclose": OpInfo([Sample(T(3, 4), T(3, 4)), Sample(T(3), T(3), rtol=10.0, atol=10.0)],
                       errors=[Sample(T(2, 3), T(4))]),
    "equal": OpInfo([Sample(T(3, 4), T(3, 4)), Sample(T(3), T(2))], no_error_because="any two tensors compare"),

    # reductions
    "sum": reduction_all(), "sum.dim_IntList": OpInfo(reduction_dim().samples + [Sample(T(2, 3, 4), (0, 2)),
                                                                                  Sample(T(3, 4), None)],
                                                      errors=[Sample(T(3, 4), 5)]),
    "mean": reduction_all(), "mean.dim": reduction_dim(),
    "prod": OpInfo([Sample(T(3, 4, low=0.5, high=1.5)), Sample(T(5, low=-2.0, high=2.0))], errors=[Sample([1.0])]),
    "prod.dim_int": OpInfo([Sample(T(3, 4, low=0.5, high=1.5), 1), Sample(T(3, 4), 0, keepdim=True)],
                           errors=[Sample(T(3, 4), 5)]),
    "max": reduction_all(), "min": reduction_all(),
    "max.dim": reduction_dim(), "min.dim": reduction_dim(),
    "max.other": binary(number=False), "min.other": binary(number=False),
    "amax": OpInfo([Sample(T(3, 4), 1), Sample(T(3, 4), (0, 1), keepdim=True), Sample(T(3, 4))],
                   errors=[Sample(T(3, 4), 5)]),
    "amin": OpInfo([Sample(T(3, 4), 1), Sample(T(3, 4), (0, 1), keepdim=True), Sample(T(3, 4))],
                   errors=[Sample(T(3, 4), 5)]),
    "argmax": OpInfo([Sample(T(3, 4)), Sample(T(3, 4), 1), Sample(T(3, 4), 0, keepdim=True)],
                     errors=[Sample(T(3, 4), 5)]),
    "argmin": OpInfo([Sample(T(3, 4)), Sample(T(3, 4), 1), Sample(T(3, 4), 0, keepdim=True)],
                     errors=[Sample(T(3, 4), 5)]),
    "topk": OpInfo([Sample(T(3, 5), 2), Sample(T(3, 5), 3, dim=0, largest=False)], errors=[Sample(T(3, 4), 9)]),
    "sort": OpInfo([Sample(T(3, 5)), Sample(T(3, 5), 0, descending=True)], errors=[Sample(T(3, 4), 5)]),
    "sort.stable": OpInfo([Sample(T(3, 5), stable=True), Sample(T(3, 5), stable=True, dim=0, descending=True),
                           Sample(T(6, dtype="int64", low=0, high=3), stable=None)],
                          errors=[Sample(T(3, 4), stable=True, dim=5)]),
    "bincount": OpInfo([Sample(T(6, dtype="int64", low=0, high=4)), Sample(T(5, dtype="int64", low=0, high=3), minlength=6),
                        Sample(T(5, dtype="int32", low=0, high=3), T(5)), Sample(T(4, dtype="uint8", low=0, high=3), T(4, dtype="float64")),
                        Sample(T(3, dtype="int64", low=0, high=3), T(3, dtype="int64", low=0, high=5))],
                       errors=[Sample(T(3, dtype="int64", low=-2, high=0)), Sample(T(3)), Sample(T(2, 2, dtype="int64", low=0, high=2)),
                               Sample(T(3, dtype="int64", low=0, high=3), T(2)), Sample(T(3, dtype="int64", low=0, high=3), minlength=-1)],
                       gradgrad="torch's node refuses backward", jvp="torch has no forward-mode rule for bincount"),
    "histc": OpInfo([Sample(T(20)), Sample(T(4, 5), 7, -1.0, 1.5), Sample(T(6, dtype="float64"), 3), Sample(T(3, values=[1.0, 1.0, 1.0]), 3)],
                    errors=[Sample(T(5), 0), Sample(T(5), 4, 2.0, 1.0), Sample(T(4, dtype="int64"), 3),
                            Sample(T(3, values=[1.0, np.inf, 2.0]), 3)]),
    "_unique2": OpInfo([Sample(T(8, dtype="int64", low=0, high=4)), Sample(T(3, 4, dtype="int64", low=0, high=3), True, True, True),
                        Sample(T(5, values=[3.0, np.nan, 1.0, np.nan, 1.0]), return_counts=True), Sample(T(4, dtype="bool"))],
                       no_error_because="any tensor has distinct values", gradgrad="torch's node refuses backward", call="aten",
                       jvp="torch has no forward-mode rule for _unique2"),
    "unique_dim": OpInfo([Sample(T(4, 2, values=[[1, 2], [1, 2], [0, 5], [0, 1]], dtype="int64"), 0, True, True, True),
                          Sample(T(2, 3, values=[[1, 1, 0], [2, 2, 5]], dtype="int64"), 1)],
                         errors=[Sample(T(2, 3, dtype="int64"), 2)], gradgrad="torch's node refuses backward", call="aten",
                         jvp="torch has no forward-mode rule for unique_dim"),
    "unique_consecutive": OpInfo([Sample(T(7, values=[1, 1, 2, 2, 3, 1, 1], dtype="int64"), True, True),
                                  Sample(T(3, 2, values=[[1, 1], [1, 1], [2, 3]], dtype="int64"), dim=0), Sample(T(4))],
                                 errors=[Sample(T(2, 3), dim=3)], gradgrad="torch's node refuses backward",
                                 jvp="torch has no forward-mode rule for unique_consecutive"),
    "median": OpInfo([Sample(T(3, 4)), Sample(T(5, dtype="int64", low=0, high=3)), Sample(T())],
                     errors=[Sample(T(3, dtype="bool"))]),
    "median.dim": OpInfo([Sample(T(3, 4), 1), Sample(T(3, 4), 0, keepdim=True), Sample(T(4, 6, dtype="int64", low=0, high=3), 1),
                          Sample(T(4, 3, layout="transposed"), -1)],
                         errors=[Sample(T(3, 4), 5), Sample(T(3, 0), 1)]),
    "nanmedian": OpInfo([Sample(T(3, 4)), Sample(T(5, values=[1.0, np.nan, 3.0, np.nan, 0.5]))],
                        errors=[Sample(T(3, dtype="bool"))]),
    "nanmedian.dim": OpInfo([Sample(T(3, 4), 1), Sample(T(2, 3, values=[[np.nan, 2.0, 1.0], [np.nan, np.nan, np.nan]]), 1)],
                            errors=[Sample(T(3, 4), 5)]),
    "kthvalue": OpInfo([Sample(T(3, 5), 2), Sample(T(3, 5), 3, 0, keepdim=True), Sample(T(9, dtype="int64", low=0, high=3), 4)],
                       errors=[Sample(T(3, 4), 5), Sample(T(3, 4), 0)]),
    "mode": OpInfo([Sample(T(3, 5, dtype="int64", low=0, high=3)), Sample(T(20, 3, dtype="int64", low=0, high=4), 0, keepdim=True),
                    Sample(T(3, 4))],
                   errors=[Sample(T(3, 0))]),
    "argsort": OpInfo([Sample(T(3, 5)), Sample(T(3, 5), 0, descending=True)], errors=[Sample(T(3, 4), 5)]),
    "all.dims": OpInfo([Sample(T(3, 4, dtype="bool")), Sample(T(3, 4, dtype="bool"), 1), Sample(T(3, 4), (0, 1), True)], errors=[Sample(T(3, 4), 5)]),
    "any.dims": OpInfo([Sample(T(3, 4, dtype="bool")), Sample(T(3, 4, dtype="bool"), 0)], errors=[Sample(T(3, 4), 5)]),
    "nonzero": OpInfo([Sample(T(3, 4, dtype="int64", low=-1, high=2)), Sample(T(4, dtype="bool"), as_tuple=True)],
                      no_error_because="any tensor has nonzero elements or not"),
    "count_nonzero": OpInfo([Sample(T(3, 4, dtype="int64", low=-1, high=2)), Sample(T(3, 4, dtype="int64", low=-1, high=2), 1)],
                            errors=[Sample(T(3, 4), 5)]),
    "var.correction": OpInfo([Sample(T(3, 4)), Sample(T(3, 4), 1), Sample(T(3, 4), 0, keepdim=True, correction=0)],
                             errors=[Sample(T(3, dtype="int64"))]),
    "std.correction": OpInfo([Sample(T(3, 4)), Sample(T(3, 4), 1), Sample(T(3, 4), 0, keepdim=True, correction=0)],
                             errors=[Sample(T(3, dtype="int64"))]),
    "linalg_vector_norm": OpInfo([Sample(T(3, 4)), Sample(T(3, 4), 1, (1,)), Sample(T(3, 4), 3.0, (0,), True),
                                  Sample(T(3, 4), float("inf"))], errors=[Sample(T(3, dtype="int64"))]),
    "norm": OpInfo([Sample(T(3, 4)), Sample(T(3, 4), 1, 1), Sample(T(3, 4), 2, 0, True)],
                   errors=[Sample(T(3, dtype="int64"))]),
    "logsumexp": OpInfo([Sample(T(3, 4), 1), Sample(T(3, 4), (0, 1), True)], errors=[Sample(T(3, 4), 5)]),
    "cumsum": OpInfo([Sample(T(3, 4), 1), Sample(T(3, 4), 0), Sample(T(4, dtype="int64"), 0)],
                     errors=[Sample(T(3, 4), 5)]),
    "cumprod": OpInfo([Sample(T(3, 4, low=0.5, high=1.5), 1), Sample(T(4, low=0.5, high=2.0), 0)],
                      errors=[Sample(T(3, 4), 5)], jvp="reftorch has no tangent rule for cumprod (as torch 2.0 had none)"),

    # views
    "view": view_op(Sample(T(3, 4), 12), Sample(T(3, 4), 2, -1), Sample(T(2, 3, 4), (6, 4)),
                    errors=[Sample(T(3, 4), 5), Sample(T(4, 3, layout="transposed"), 12)]),
    "view.dtype": view_op(Sample(T(3, 4), dtype="int32"), Sample(T(3, 4), dtype="uint8"), Sample(T(3, 4), dtype="float64"),
                          Sample(T(2, 4, dtype="int64"), dtype="int16"), Sample(T(4, dtype="uint8", low=0, high=2), dtype="bool"),
                          errors=[Sample(T(3, 3), dtype="float64"), Sample(T(4, 3, layout="transposed"), dtype="int16"),
                                  Sample(T(), dtype="int16")]),
    "_reshape_alias": view_op(Sample(T(3, 4), (12,), (1,)), Sample(T(3, 4), (2, 6), (6, 1)),
                              no_error_because="(internal: reshape checks the sizes first)"),
    "_unsafe_view": view_op(Sample(T(3, 4), (12,)), Sample(T(3, 4), (2, 6)), errors=[Sample(T(3, 4), (5,))]),
    "reshape": view_op(Sample(T(3, 4), (12,)), Sample(T(4, 3, layout="transposed"), (-1,)), Sample(T(3, 4), (2, 6)),
                       errors=[Sample(T(3, 4), (5,))]),
    "view_as": view_op(Sample(T(3, 4), T(12, grad=False)), errors=[Sample(T(3, 4), T(5, grad=False))]),
    "reshape_as": view_op(Sample(T(4, 3, layout="transposed"), T(12, grad=False)),
                          errors=[Sample(T(3, 4), T(5, grad=False))]),
    "flatten.using_ints": view_op(Sample(T(2, 3, 4)), Sample(T(2, 3, 4), 1), Sample(T(2, 3, 4), 0, 1), Sample(T()),
                                  errors=[Sample(T(2, 3, 4), 2, 1)]),
    "unflatten.int": view_op(Sample(T(2, 12), 1, (3, 4)), Sample(T(2, 12), -1, (2, -1)),
                             errors=[Sample(T(2, 12), 1, (5, 5))]),
    "ravel": view_op(Sample(T(3, 4)), Sample(T(4, 3, layout="transposed")), no_error_because="any tensor flattens"),
    "alias": view_op(Sample(T(3, 4)), no_error_because="any tensor has an alias"),
    "t": view_op(Sample(T(3, 4)), Sample(T(4)), errors=[Sample(T(2, 3, 4))]),
    "transpose.int": view_op(Sample(T(2, 3, 4), 0, 2), Sample(T(3, 4), -1, 0), errors=[Sample(T(3, 4), 0, 2)]),
    "permute": view_op(Sample(T(2, 3, 4), (2, 0, 1)), Sample(T(3, 4), (1, 0)),
                       errors=[Sample(T(3, 4), (0,)), Sample(T(3, 4), (0, 0))]),
    "movedim.intlist": view_op(Sample(T(2, 3, 4), 0, 2), Sample(T(2, 3, 4), (0, 1), (2, 0)),
                               errors=[Sample(T(2, 3), (0, 1), (1,))]),
    "unsqueeze": view_op(Sample(T(3, 4), 0), Sample(T(3, 4), -1), errors=[Sample(T(3, 4), 4)]),
    "squeeze": view_op(Sample(T(3, 1, 4)), Sample(T(1, 1)), no_error_because="any tensor squeezes"),
    "squeeze.dim": view_op(Sample(T(3, 1, 4), 1), Sample(T(3, 1, 4), 0), errors=[Sample(T(3, 4), 3)]),
    "squeeze.dims": view_op(Sample(T(3, 1, 1), (1, 2)), Sample(T(1, 3, 1), (0,)), errors=[Sample(T(3, 4), (3,))]),
    "squeeze_.dim": view_op(Sample(T(3, 1, 4), 1), no_error_because="(internal: matmul's squeeze of its own result)",
                            call="aten_inplace_view"),
    "expand": view_op(Sample(T(3, 1), 3, 4), Sample(T(4), (2, 4)), Sample(T(3, 1), -1, 5),
                      errors=[Sample(T(3, 2), 3, 4), Sample(T(2, 3), 3)]),
    "expand_as": view_op(Sample(T(3, 1), T(3, 4, grad=False)), errors=[Sample(T(3, 2), T(3, 4, grad=False))]),
    "broadcast_to": view_op(Sample(T(3, 1), (3, 4)), errors=[Sample(T(3, 2), (3, 4))]),
    "meshgrid": view_op(Sample([T(3), T(2)]), Sample([T(4)]), errors=[Sample([T(3), T(2, dtype="float64")])]),
    "meshgrid.indexing": view_op(Sample([T(3), T(2)], indexing="ij"), Sample([T(3), T(), T(2)], indexing="xy"),
                                 Sample([T(2)], indexing="xy"),
                                 errors=[Sample([T(2, 2)], indexing="ij"), Sample([T(3)], indexing="yx")]),
    "broadcast_tensors": view_op(Sample(T(3, 1), T(4)), Sample(T(2, 3), T(2, 3)), errors=[Sample(T(3), T(4))]),
    "select.int": view_op(Sample(T(3, 4), 0, 1), Sample(T(3, 4), 1, -1), errors=[Sample(T(3, 4), 0, 5)]),
    "slice.Tensor": view_op(Sample(T(5, 4), 0, 1, 4), Sample(T(5, 4), 1, 0, 4, 2),
                            Sample(T(5, 4), 0, 2, 9223372036854775807), no_error_because="(internal: indexing checks first)"),
    "narrow": view_op(Sample(T(5, 4), 0, 1, 3), Sample(T(5, 4), 1, -2, 2), errors=[Sample(T(5, 4), 0, 4, 3)]),
    "split.Tensor": view_op(Sample(T(5, 4), 2), Sample(T(5, 4), 3, 1), no_error_because="(internal: split checks first)"),
    "split_with_sizes": view_op(Sample(T(5, 4), [2, 3]), Sample(T(5, 4), [1, 3], 1), errors=[Sample(T(5, 4), [2, 2])]),
    "split": view_op(Sample(T(5, 4), 2), Sample(T(5, 4), [1, 4]), errors=[Sample(T(5, 4), [2, 2])]),
    "chunk": view_op(Sample(T(5, 4), 2), Sample(T(5, 4), 3, 1), errors=[Sample(T(5, 4), 2, 3)]),
    "tensor_split.sections": view_op(Sample(T(7), 3), Sample(T(3, 4), 3, 1), Sample(T(3), 5),
                                     errors=[Sample(T(3), 0), Sample(T(), 1)]),
    "tensor_split.indices": view_op(Sample(T(7), [1, 5]), Sample(T(7), (1, 9, 3)), Sample(T(3, 4), [1, 2], -1), Sample(T(3), []),
                                    errors=[Sample(T(), [1]), Sample(T(3), [1], 2)]),
    "tensor_split.tensor_indices_or_sections": view_op(
        Sample(T(7), T(values=3, dtype="int64")), Sample(T(7), T(2, values=[1, 4], dtype="int64")),
        errors=[Sample(T(7), T(1, 1, values=[[1]], dtype="int64")), Sample(T(7), T(1, values=[1.0]))],
        jvp="torch's functorch jvp cannot read the sections tensor's values (no data pointer)"),
    "unbind.int": view_op(Sample(T(3, 4)), Sample(T(3, 4), 1), errors=[Sample(T(3, 4), 2)]),
    "as_strided": view_op(Sample(T(3, 4), (2, 2), (1, 2)), Sample(T(3, 4), (3,), (4,), 1),
                          errors=[Sample(T(3, 4), (5, 5), (4, 1))]),
    "unfold": view_op(Sample(T(3, 6), 1, 2, 2), Sample(T(6), 0, 3, 1), errors=[Sample(T(3, 4), 1, 9, 1)]),
    "diagonal": view_op(Sample(T(3, 4)), Sample(T(3, 4), 1), Sample(T(2, 3, 4), -1, 0, 2), Sample(T(3, 4), 5),
                        errors=[Sample(T(3, 4), 0, 1, 1)]),
    "diagonal_backward": view_op(Sample(T(3), (3, 4), 0, 0, 1), Sample(T(2, 3), (2, 3, 4), -1, 2, 1),
                                 no_error_because="(internal: diagonal's backward)"),
    "select_backward": view_op(Sample(T(4), (3, 4), 0, 1), no_error_because="(internal: select's backward)"),
    "slice_backward": view_op(Sample(T(2, 4), (5, 4), 0, 1, 3, 1), no_error_because="(internal: slice's backward)"),
    "unfold_backward": view_op(Sample(T(3, 3, 2), (3, 6), 1, 2, 2), Sample(T(2, 3, 2), (4, 3), 0, 2, 2), no_error_because="(internal: unfold's backward)"),

    # copies
    "clone": OpInfo([Sample(T(3, 4)), Sample(T(4, 3, layout="transposed"))], no_error_because="any tensor copies"),
    "contiguous": OpInfo([Sample(T(3, 4)), Sample(T(4, 3, layout="transposed"))], no_error_because="any tensor copies"),
    "detach": OpInfo([Sample(T(3, 4))], no_error_because="any tensor detaches", jvp="detach drops the tangent"),
    "flip": OpInfo([Sample(T(3, 4), (0,)), Sample(T(3, 4), [0, 1]), Sample(T(4, 3, layout="transposed"), (1,))],
                   errors=[Sample(T(3, 4), (0, 0))]),
    "_to_copy": OpInfo([Sample(T(3, 4), dtype="float64"), Sample(T(3, 4), dtype="int64"),
                        Sample(T(4, 3, layout="transposed"), dtype="float64")],
                       no_error_because="(internal: to checks first)"),
    "to": OpInfo([Sample(T(3, 4), "float64"), Sample(T(3, 4), dtype="int32"), Sample(T(3, 4), "float32")],
                 errors=[Sample(T(3, 4), "cuda")]),
    "type_as": OpInfo([Sample(T(3, 4), T(2, dtype="float64", grad=False)), Sample(T(3, 4), T(2, dtype="int64"))],
                      no_error_because="any tensor has a dtype to copy"),
    "copy_": OpInfo([Sample(T(3, 4, grad=False), T(3, 4)), Sample(T(3, 4, grad=False), T(4)),
                     Sample(T(3, 4, grad=False), T(3, 4, dtype="float64", grad=False))],
                    errors=[Sample(T(3, 4, grad=False), T(5))], call="method"),
    "zero_": OpInfo([Sample(T(3, 4, grad=False)), Sample(T(4, 3, layout="transposed", grad=False))],
                    no_error_because="any tensor can be zeroed", call="method"),
    "fill.Scalar": OpInfo([Sample(T(3, 4, grad=False), 2.5), Sample(T(3, dtype="int64"), 4)],
                          no_error_because="any number fills", inplace=True),
    "fill.Tensor": OpInfo([Sample(T(3, 4, grad=False), T(values=1.5))], errors=[Sample(T(3, 4), T(2))]),

    # making tensors
    "zeros": factory(Sample(2, 3), Sample((4,), dtype="int64"), Sample(size=(2, 2))),
    "ones": factory(Sample(2, 3), Sample((4,), dtype="int64")),
    "empty": factory(Sample(2, 3), values=False),
    "full": factory(Sample((2, 3), 1.5), Sample((4,), 7), Sample((2,), True), errors=[Sample((2, -1), 1.0)]),
    "arange": factory(Sample(5), Sample(1, 4), Sample(0.5, 3.0, 0.5), Sample(10, 0, -3), errors=[Sample(-1)]),
    "linspace": factory(Sample(0, 1, 5), Sample(-2.0, 2.0, 4, dtype="float64"), errors=[Sample(0, 1, -1)]),
    "eye": factory(Sample(3), Sample(2, 4)),
    "zeros_like": like(), "ones_like": like(), "empty_like": like(values=False),
    "full_like": OpInfo([Sample(T(3, 4), 2.5), Sample(T(4, 3, layout="transposed"), 1)],
                        no_error_because="every tensor has a shape to copy", jvp=False),
    "new_zeros": OpInfo([Sample(T(3, 4), (2, 2)), Sample(T(3, dtype="int64"), 4)], no_error_because="a size makes a tensor",
                        jvp=False),
    "new_ones": OpInfo([Sample(T(3, 4), (2, 2))], no_error_because="a size makes a tensor", jvp=False),
    "new_empty": OpInfo([Sample(T(3, 4), (2, 2))], no_error_because="a size makes a tensor", jvp=False, values=False),
    "new_full": OpInfo([Sample(T(3, 4), (2, 2), 1.5)], no_error_because="a size makes a tensor", jvp=False),
    "new_tensor": OpInfo([Sample(T(3, 4), [1.0, 2.0]), Sample(T(3, dtype="int64"), [[1, 2]])],
                         errors=[Sample(T(3), [[1.0], [2.0, 3.0]])], jvp=False),

    # joining
    "cat": OpInfo([Sample([T(2, 3), T(4, 3)]), Sample([T(2, 3), T(2, 1)], 1), Sample([T(2, 3), T(0)], 0),
                   Sample([T(3, dtype="int64"), T(2)])], errors=[Sample([T(2, 3), T(2, 4)])]),
    "repeat_interleave.Tensor": OpInfo([Sample(T(4, dtype="int64", low=0, high=3)), Sample(T(3, dtype="int32", low=0, high=3)),
                                        Sample(T(3, values=[1, 0, 2], dtype="int64"), output_size=3)],
                                       errors=[Sample(T(2, 2, dtype="int64", low=0, high=3)), Sample(T(2, dtype="int64", low=-3, high=-1))],
                                       call="function"),
    "repeat_interleave.self_Tensor": OpInfo([Sample(T(3, 2), T(3, dtype="int64", low=0, high=3), 0),
                                             Sample(T(2, 3), T(dtype="int64", low=1, high=3)),
                                             Sample(T(2, 3), T(1, dtype="int64", low=1, high=3), dim=1, output_size=None)],
                                            errors=[Sample(T(3, 2), T(2, dtype="int64", low=0, high=3), 0),
                                                    Sample(T(3, 2), T(1, 1, dtype="int64", low=0, high=3), 0)]),
    "repeat_interleave.self_int": OpInfo([Sample(T(2, 3), 2), Sample(T(2, 3), 3, 1), Sample(T(4, 3, layout="transposed"), 2, 0),
                                          Sample(T(), 2), Sample(T(3), 2, output_size=6)],
                                         errors=[Sample(T(3), -1), Sample(T(3), 2, output_size=5)]),
    "diff": OpInfo([Sample(T(5)), Sample(T(3, 4), 2, 0), Sample(T(3, 4), prepend=T(3, 1), append=T(3, 2)),
                    Sample(T(4, 3, layout="transposed"), 1, 0), Sample(T(4, dtype="bool")), Sample(T(3), 0),
                    Sample(T(3), 5)],
                   errors=[Sample(T()), Sample(T(3), -1), Sample(T(3, 4), prepend=T(4, 1)), Sample(T(3, 4), prepend=T(4))]),
    "stack": OpInfo([Sample([T(2, 3), T(2, 3)]), Sample([T(2, 3), T(2, 3)], 2)], errors=[Sample([T(2, 3), T(3, 2)])]),
    "hstack": OpInfo([Sample([T(2, 3), T(2, 1)]), Sample([T(3), T(2)])], errors=[Sample([T(2, 3), T(3, 3)])]),
    "vstack": OpInfo([Sample([T(2, 3), T(1, 3)]), Sample([T(3), T(3)])], errors=[Sample([T(2, 3), T(2, 4)])]),
    "repeat": OpInfo([Sample(T(2, 3), 2, 1), Sample(T(3), (2, 2))], errors=[Sample(T(2, 3), 2)]),
    "tile": OpInfo([Sample(T(2, 3), (2,)), Sample(T(3), (2, 2))], no_error_because="any dims tile"),

    # linear algebra
    "mm": OpInfo([Sample(T(3, 4), T(4, 2)), Sample(T(3, 4, layout="transposed"), T(4, 2)),
                  Sample(T(3, 4), T(4, 2, layout="transposed"))], errors=[Sample(T(3, 4), T(3, 2))]),
    "mv": OpInfo([Sample(T(3, 4), T(4)), Sample(T(3, 4, layout="transposed"), T(4))], errors=[Sample(T(3, 4), T(3))]),
    "dot": OpInfo([Sample(T(4), T(4))], errors=[Sample(T(4), T(3))]),
    "bmm": OpInfo([Sample(T(2, 3, 4), T(2, 4, 2))], errors=[Sample(T(2, 3, 4), T(2, 3, 2))]),
    "addmm": OpInfo([Sample(T(2), T(3, 4), T(4, 2)), Sample(T(3, 2), T(3, 4), T(4, 2), beta=0.5, alpha=2.0),
                     Sample(T(2), T(3, 4), T(4, 2, layout="transposed"))], errors=[Sample(T(2), T(3, 4), T(3, 2))]),
    "baddbmm": OpInfo([Sample(T(2, 3, 2), T(2, 3, 4), T(2, 4, 2)), Sample(T(2), T(2, 3, 4), T(2, 4, 2), beta=0.5, alpha=2.0),
                       Sample(T(3, 1), T(2, 3, 4), T(2, 4, 1), beta=0)],
                      errors=[Sample(T(2), T(2, 3, 4), T(2, 3, 2)), Sample(T(3), T(2, 3, 4), T(2, 4, 2))]),
    "addmv": OpInfo([Sample(T(3), T(3, 4), T(4)), Sample(T(1), T(3, 4, layout="transposed"), T(4), beta=2.0, alpha=0.5)],
                    errors=[Sample(T(3), T(3, 4), T(3)), Sample(T(3, 1), T(3, 4), T(4))]),
    "addr": OpInfo([Sample(T(3, 4), T(3), T(4)), Sample(T(4), T(3), T(4), beta=0.5, alpha=-1.0)],
                   errors=[Sample(T(3, 4), T(3, 1), T(4)), Sample(T(5), T(3), T(4))]),
    "matmul": OpInfo([Sample(T(4), T(4)), Sample(T(3, 4), T(4)), Sample(T(4), T(4, 2)), Sample(T(3, 4), T(4, 2)),
                      Sample(T(2, 3, 4), T(4, 2)), Sample(T(2, 3, 4), T(2, 4, 2)), Sample(T(2, 3, 4), T(4))],
                     errors=[Sample(T(3, 4), T(3, 2))]),
    "outer": OpInfo([Sample(T(3), T(4))], no_error_because="any two vectors have an outer product"),
    "tril": OpInfo([Sample(T(4, 4)), Sample(T(3, 5), 1), Sample(T(2, 3, 3), -1)], errors=[Sample(T(3))]),
    "triu": OpInfo([Sample(T(4, 4)), Sample(T(3, 5), 1), Sample(T(2, 3, 3), -1)], errors=[Sample(T(3))]),
    "einsum": OpInfo([Sample("ij,jk->ik", [T(3, 4), T(4, 2)]), Sample("ii->i", [T(3, 3)]),
                      Sample("bij,bjk->bik", [T(2, 3, 4), T(2, 4, 2)]), Sample("i,j->ij", [T(3), T(2)])],
                     errors=[Sample("ij,jk->ik", [T(3, 4)])]),

    # indexing
    "index.Tensor": OpInfo([Sample(T(4, 3), [T(2, dtype="int64", low=0, high=4)]),
                            Sample(T(4, 3), [T(2, dtype="int64", low=0, high=4), T(2, dtype="int64", low=0, high=3)])],
                           errors=[Sample(T(4, 3), [T(2, dtype="int64", low=5, high=6)])]),
    "index_put": OpInfo([Sample(T(4, 3), [T(2, dtype="int64", values=[0, 2])], T(2, 3)),
                         Sample(T(4, 3), [T(3, dtype="int64", values=[0, 2, 0])], T(3), True)],
                        errors=[Sample(T(4, 3), [T(2, dtype="int64", values=[0, 2])], T(2, 3, dtype="float64"))]),
    "masked_fill.Scalar": OpInfo([Sample(T(3, 4), T(3, 4, dtype="bool"), 0.5), Sample(T(3, 4), T(4, dtype="bool"), -1)],
                                 errors=[Sample(T(3, 4), T(3, 4, dtype="int64"), 1.0)]),
    "masked_fill.Tensor": OpInfo([Sample(T(3, 4), T(3, 4, dtype="bool"), T(values=0.5))],
                                 errors=[Sample(T(3, 4), T(3, 4, dtype="bool"), T(2))]),
    "masked_select": OpInfo([Sample(T(3, 4), T(3, 4, dtype="bool")), Sample(T(3, 4), T(4, dtype="bool"))],
                            errors=[Sample(T(3, 4), T(3, 4, dtype="int64"))]),
    "gather": OpInfo([Sample(T(3, 4), 1, T(3, 2, dtype="int64", low=0, high=4)),
                      Sample(T(3, 4), 0, T(2, 4, dtype="int64", low=0, high=3))],
                     errors=[Sample(T(3, 4), 1, T(3, 2, dtype="int64", low=4, high=6))]),
    "scatter.src": OpInfo([Sample(T(3, 4), 1, T(3, 2, dtype="int64", values=[[0, 1], [2, 3], [1, 0]]), T(3, 2))],
                          errors=[Sample(T(3, 4), 1, T(3, 2, dtype="int64", low=5, high=6), T(3, 2))]),
    "scatter.value": OpInfo([Sample(T(3, 4), 1, T(3, 2, dtype="int64", values=[[0, 1], [2, 3], [1, 0]]), 1.5)],
                            errors=[Sample(T(3, 4), 1, T(3, 2, dtype="float32"), 1.5)]),
    "scatter.reduce": OpInfo([Sample(T(3, 4, grad=False), 1, T(3, 2, dtype="int64", values=[[0, 1], [2, 3], [1, 0]]),
                                     T(3, 2, grad=False), reduce="add")],
                             errors=[Sample(T(3, 4), 1, T(3, 2, dtype="int64", low=0, high=4), T(3, 2), reduce="max")],
                             jvp="torch has no tangent rule for the old reduce= spelling"),
    "scatter.value_reduce": OpInfo([Sample(T(3, 4, grad=False), 1, T(3, 2, dtype="int64", values=[[0, 1], [2, 3], [1, 0]]),
                                           2.0, reduce="multiply")],
                                   errors=[Sample(T(3, 4), 1, T(3, 2, dtype="int64", low=0, high=4), 2.0, reduce="max")],
                                   jvp="torch has no tangent rule for the old reduce= spelling"),
    "scatter_add": OpInfo([Sample(T(3, 4), 1, T(3, 2, dtype="int64", low=0, high=4), T(3, 2))],
                          errors=[Sample(T(3, 4), 1, T(3, 2, dtype="int64", low=5, high=6), T(3, 2))]),
    "scatter_reduce.two": OpInfo([Sample(T(3, 4), 1, T(3, 2, dtype="int64", low=0, high=4), T(3, 2), "sum"),
                                  Sample(T(3, 4), 1, T(3, 2, dtype="int64", low=0, high=4), T(3, 2), "amax",
                                         include_self=False),
                                  Sample(T(3, 4, low=0.5, high=2), 1, T(3, 2, dtype="int64", low=0, high=4),
                                         T(3, 2, low=0.5, high=2), "prod")],
                                 errors=[Sample(T(3, 4), 1, T(3, 2, dtype="int64", low=0, high=4), T(3, 2), "maximum")],
                                 gradgrad="reftorch's scatter_reduce backward reads the saved result as a constant",
                                 jvp="reftorch has no tangent rule for scatter_reduce"),
    "index_select": OpInfo([Sample(T(4, 3), 0, T(2, dtype="int64", low=0, high=4)),
                            Sample(T(4, 3), 1, T(3, dtype="int64", low=0, high=3))],
                           errors=[Sample(T(4, 3), 0, T(2, dtype="int64", low=5, high=6))]),
    "index_add": OpInfo([Sample(T(4, 3), 0, T(2, dtype="int64", values=[0, 2]), T(2, 3)),
                         Sample(T(4, 3), 1, T(2, dtype="int64", values=[1, 1]), T(4, 2), alpha=2.0)],
                        errors=[Sample(T(4, 3), 0, T(2, dtype="int64", values=[0, 2]), T(3, 3))]),
    "index_fill.int_Scalar": OpInfo([Sample(T(4, 3), 0, T(2, dtype="int64", values=[0, 2]), 1.5)],
                                    no_error_because="reftorch does not check the index (torch's kernel does)"),
    "index_fill.int_Tensor": OpInfo([Sample(T(4, 3), 1, T(2, dtype="int64", values=[0, 2]), T(values=1.5))],
                                    no_error_because="reftorch does not check the index (torch's kernel does)"),
    "one_hot": OpInfo([Sample(T(4, dtype="int64", low=0, high=3)), Sample(T(2, 2, dtype="int64", low=0, high=2), 4)],
                      no_error_because="reftorch does not check the classes (torch does)", call="nn"),

    # embedding
    "embedding": OpInfo([Sample(T(5, 3), T(2, 4, dtype="int64", low=0, high=5)),
                         Sample(T(6, 2), T(7, dtype="int64", low=0, high=6), 2, True),
                         Sample(T(4, 3, dtype="float64"), T(3, dtype="int32", low=0, high=4), -1, False)],
                        errors=[Sample(T(5, 3), T(4, grad=False)), Sample(T(5, 3), T(2, dtype="int64", values=[1, 7])),
                                Sample(T(5), T(2, dtype="int64", low=0, high=5))]),
    "embedding_dense_backward": OpInfo([Sample(T(2, 4, 3), T(2, 4, dtype="int64", low=0, high=5), 5, -1, False),
                                        Sample(T(6, 2), T(6, dtype="int64", low=0, high=4), 4, 1, True)],
                                       errors=[Sample(T(2, 3), T(2, grad=False), 5, -1, False)]),
    # activations
    "softmax.int": OpInfo([Sample(T(3, 4), 1), Sample(T(3, 4), 0), Sample(T(3, 4), -1, dtype="float64")],
                          errors=[Sample(T(3, dtype="int64"), 0)]),
    "_softmax": OpInfo([Sample(T(3, 4), 1, False)], errors=[Sample(T(3, dtype="int64"), 0, False)]),
    "log_softmax.int": OpInfo([Sample(T(3, 4), 1), Sample(T(3, 4), 0)], errors=[Sample(T(3, dtype="int64"), 0)]),
    "_log_softmax": OpInfo([Sample(T(3, 4), 1, False)], errors=[Sample(T(3, dtype="int64"), 0, False)]),
    "leaky_relu": OpInfo([Sample(T(3, 4)), Sample(T(3, 4), 0.2)], no_error_because="any float tensor", call="nn"),
    "gelu": OpInfo([Sample(T(3, 4)), Sample(T(3, 4), approximate="tanh")], errors=[Sample(T(3), approximate="x")],
                   call="nn"),
    "silu": OpInfo([Sample(T(3, 4))], no_error_because="any float tensor", call="nn"),
    "elu": OpInfo([Sample(T(3, 4)), Sample(T(3, 4), 0.5)], errors=[Sample(T(3, dtype="int64"))], call="nn",
                  inplace=False),  # elu_ is no Tensor method (test_engine_nn_modules checks it)
    "selu": OpInfo([Sample(T(3, 4, low=-3, high=3))], errors=[Sample(T(3, dtype="int64"))]),
    "celu": OpInfo([Sample(T(3, 4, low=-3, high=3)), Sample(T(3, 4, low=-3, high=3), 2.0)],
                   errors=[Sample(T(3, dtype="int64")), Sample(T(3), 0.0)], inplace=False),
    "hardsigmoid": OpInfo([Sample(T(3, 4, low=-5, high=5))], errors=[Sample(T(3, dtype="int64"))], call="nn", inplace=False),
    "hardsigmoid_backward": OpInfo([Sample(T(3, 4, grad=False), T(3, 4, low=-5, high=5, grad=False))],
                                   no_error_because="any float tensor"),
    "hardswish": OpInfo([Sample(T(3, 4, low=-5, high=5))], errors=[Sample(T(3, dtype="int64"))], call="nn", inplace=False),
    "hardswish_backward": OpInfo([Sample(T(3, 4), T(3, 4, low=-5, high=5))], no_error_because="any float tensor"),
    "prelu": OpInfo([Sample(T(2, 3, 4), T(3)), Sample(T(2, 3), T(1)), Sample(T(5), T(1)), Sample(T(2, 3, 2, 2), T(3))],
                    errors=[Sample(T(2, 3), T(2)), Sample(T(2, 3), T(3, dtype="float64")), Sample(T(), T(2))]),
    "_prelu_kernel": OpInfo([Sample(T(2, 3, 4), T(1, 3, 1)), Sample(T(5), T(1))], no_error_because="tested through prelu"),
    "glu": OpInfo([Sample(T(3, 4)), Sample(T(4, 3), 0), Sample(T(2, 6, 2), -2)],
                  errors=[Sample(T(3, 3)), Sample(T()), Sample(T(2, dtype="int64")), Sample(T(2, 4), 2)], call="nn"),
    "threshold": OpInfo([Sample(T(3, 4), 0.5, -1.0), Sample(T(5, dtype="int64", low=-5, high=5), 1, 0)],
                        no_error_because="any real tensor", inplace=False),  # threshold_ is no Tensor method
    "hardshrink": OpInfo([Sample(T(3, 4)), Sample(T(3, 4), 1.0)], errors=[Sample(T(3, dtype="int64"))]),
    "hardshrink_backward": OpInfo([Sample(T(3, 4), T(3, 4), 0.5)], no_error_because="any float tensors"),
    "softshrink": OpInfo([Sample(T(3, 4)), Sample(T(3, 4), 1.0)], errors=[Sample(T(3), -1.0), Sample(T(3, dtype="int64"))],
                         call="nn"),
    "softshrink_backward": OpInfo([Sample(T(3, 4), T(3, 4), 0.5)], no_error_because="any float tensors"),
    "mish": OpInfo([Sample(T(3, 4, low=-3, high=3))], errors=[Sample(T(3, dtype="int64"))], call="nn", inplace=False),
    "softplus": OpInfo([Sample(T(3, 4)), Sample(T(3, 4), 2.0, 1.0)], no_error_because="any float tensor", call="nn"),
    "hardtanh": OpInfo([Sample(T(3, 4)), Sample(T(3, 4), -0.5, 0.5)], no_error_because="any float tensor", call="nn"),
    "relu6": OpInfo([Sample(T(3, 4, low=-2, high=8))], no_error_because="any float tensor", call="nn"),
    "threshold_backward": OpInfo([Sample(T(3, 4), T(3, 4), 0), Sample(T(3, 4), T(3, 4), 0.5)],
                                 no_error_because="(internal: relu's backward)"),
    "leaky_relu_backward": OpInfo([Sample(T(3, 4), T(3, 4), 0.01, False)], no_error_because="(internal: a backward)"),
    "hardtanh_backward": OpInfo([Sample(T(3, 4), T(3, 4), -1.0, 1.0)], no_error_because="(internal: a backward)"),
    "log_sigmoid_forward": OpInfo([Sample(T(3, 4))], no_error_because="any float tensor"),

    # convolution, pooling, padding
    "conv2d": OpInfo([Sample(T(2, 3, 5, 5), T(4, 3, 3, 3)), Sample(T(1, 2, 6, 6), T(2, 1, 3, 3), T(2), 2, 1, 1, 2),
                      Sample(T(3, 5, 5), T(2, 3, 2, 2), padding="same")],
                     errors=[Sample(T(2, 3, 5, 5), T(4, 2, 3, 3))], gradgrad=_RAW),
    "convolution": OpInfo([Sample(T(2, 3, 5, 5), T(4, 3, 3, 3), T(4), (1, 1), (0, 0), (1, 1), False, (0, 0), 1)],
                          errors=[Sample(T(2, 3, 5, 5), T(4, 2, 3, 3), None, (1, 1), (0, 0), (1, 1), False, (0, 0), 1)],
                          gradgrad=_RAW),
    "max_pool2d": OpInfo([Sample(T(2, 3, 6, 6), 2), Sample(T(1, 4, 5, 5), 3, 2, 1)], errors=[Sample(T(6), 2)],
                         gradgrad=_RAW),
    "max_pool2d_with_indices": OpInfo([Sample(T(2, 3, 6, 6), (2, 2))], errors=[Sample(T(6), (2, 2))], gradgrad=_RAW),
    "max_pool1d": OpInfo([Sample(T(2, 3, 9), 3), Sample(T(3, 10), 3, 2, 1, 2, True)],
                         errors=[Sample(T(9), 3), Sample(T(1, 2, 9), 3, 1, 2)], gradgrad=_RAW),
    "max_pool1d_with_indices": OpInfo([Sample(T(2, 3, 9), (3,), (2,), (1,))], errors=[Sample(T(1, 2, 2), 3)],
                                      gradgrad=_RAW),
    "avg_pool1d": OpInfo([Sample(T(2, 3, 9), 3), Sample(T(3, 10), (3,), (2,), (1,), True, False)],
                         errors=[Sample(T(9), 3), Sample(T(1, 2, 2), 3)], gradgrad=_RAW),
    "avg_pool2d": OpInfo([Sample(T(2, 3, 6, 6), (2, 2)), Sample(T(1, 4, 5, 5), (3, 3), (2, 2), (1, 1), False, False)],
                         errors=[Sample(T(1, 3, 2, 2), (3, 3))], gradgrad=_RAW, call="nn"),
    "pad": OpInfo([Sample(T(2, 3, 4), (1, 2)), Sample(T(2, 3, 4), (1, 1, 2, 0), "reflect"),
                   Sample(T(2, 3, 4), (1, 1), "replicate"), Sample(T(2, 3, 4), (1, 2), "circular")],
                  errors=[Sample(T(2, 3, 4), (1,))], gradgrad=_RAW, call="nn"),
    "constant_pad_nd": OpInfo([Sample(T(2, 3, 4), (1, 2)), Sample(T(2, 3, 4), (1, -1, 2, 0), 1.5)],
                              errors=[Sample(T(2, 3, 4), (1,))]),
    "reflection_pad1d": OpInfo([Sample(T(2, 3, 4), (1, 2))], errors=[Sample(T(2, 3, 4), (5, 5))], gradgrad=_RAW),
    "reflection_pad2d": OpInfo([Sample(T(2, 3, 4), (1, 2, 0, 1))], errors=[Sample(T(2, 3, 4), (5, 5, 5, 5))],
                               gradgrad=_RAW),
    "reflection_pad3d": OpInfo([Sample(T(1, 2, 3, 4), (1, 1, 1, 1, 1, 1))], errors=[Sample(T(1, 2, 3, 4), (5,) * 6)],
                               gradgrad=_RAW),
    "replication_pad1d": OpInfo([Sample(T(2, 3, 4), (1, 2))], no_error_because="any padding replicates",
                                gradgrad=_RAW),
    "replication_pad2d": OpInfo([Sample(T(2, 3, 4), (1, 2, 0, 1))], no_error_because="any padding replicates",
                                gradgrad=_RAW),
    "replication_pad3d": OpInfo([Sample(T(1, 2, 3, 4), (1, 1, 1, 1, 1, 1))], no_error_because="any padding replicates",
                                gradgrad=_RAW),

    # losses and normalization
    "linear": OpInfo([Sample(T(3, 4), T(2, 4), T(2)), Sample(T(2, 3, 4), T(2, 4)), Sample(T(2, 3, 4), T(2, 4), T(2))],
                     errors=[Sample(T(3, 4), T(2, 3))], call="nn"),
    "mse_loss": OpInfo([Sample(T(3, 4), T(3, 4)), Sample(T(3, 4), T(3, 4), 0), Sample(T(3, 4), T(3, 4), 2)],
                       errors=[Sample(T(3, dtype="int64"), T(3, dtype="int64"))]),
    "l1_loss": OpInfo([Sample(T(3, 4), T(3, 4)), Sample(T(3, 4), T(3, 4), 0)], errors=[Sample(T(3, 4), T(5))]),
    "nll_loss_nd": OpInfo([Sample(T(4, 3), T(4, dtype="int64", low=0, high=3)),
                        Sample(T(4, 3), T(4, dtype="int64", low=0, high=3), T(3, grad=False), 2),
                        Sample(T(2, 3, 4), T(2, 4, dtype="int64", low=0, high=3)),
                        Sample(T(2, 3, 2, 2), T(2, 2, 2, dtype="int64", low=0, high=3), None, 0)],
                       errors=[Sample(T(4, 3), T(4, dtype="int64", low=3, high=4))], gradgrad=_RAW),
    "nll_loss_forward": OpInfo([Sample(T(4, 3), T(4, dtype="int64", low=0, high=3), None, 1, -100)],
                               errors=[Sample(T(4, 3), T(4, dtype="int64", low=3, high=4), None, 1, -100)], gradgrad=_RAW),
    "nll_loss2d_forward": OpInfo([Sample(T(2, 3, 2, 2), T(2, 2, 2, dtype="int64", low=0, high=3), None, 1, -100)],
                                 errors=[Sample(T(2, 3, 2, 2), T(2, 2, 2, dtype="int64", low=3, high=4), None, 1, -100)],
                                 gradgrad=_RAW),
    "cross_entropy_loss": OpInfo([Sample(T(4, 3), T(4, dtype="int64", low=0, high=3)),
                                  Sample(T(4, 3), T(4, 3, low=0.0, high=1.0)),
                                  Sample(T(4, 3), T(4, dtype="int64", low=0, high=3), None, 1, -100, 0.1)],
                                 errors=[Sample(T(4, 3), T(4, dtype="int64", low=0, high=3), None, 1, -100, 2.0)],
                                 gradgrad=_RAW),
    "binary_cross_entropy": OpInfo([Sample(T(3, 4, low=0.05, high=0.95), T(3, 4, low=0.0, high=1.0)),
                                    Sample(T(3, 4, low=0.05, high=0.95), T(3, 4, low=0.0, high=1.0), T(4, grad=False), 2)],
                                   errors=[Sample(T(3, low=1.5, high=2.0), T(3, low=0.0, high=1.0)),
                                           Sample(T(3, low=0.1, high=0.9), T(3, values=[0.5, 2.0, 1.0])),
                                           Sample(T(3, values=[0.5, 0.5, 1.5]), T(3, values=[0.5, 2.0, 1.0]))],
                                   gradgrad=_RAW,
                                   jvp="reftorch has no tangent rule for binary_cross_entropy"),
    "binary_cross_entropy_with_logits": OpInfo(
        [Sample(T(3, 4), T(3, 4, low=0.0, high=1.0)),
         Sample(T(3, 4), T(3, 4, low=0.0, high=1.0), T(4, grad=False), T(4, low=0.5, high=2.0, grad=False), 0)],
        errors=[Sample(T(3, 4), T(3, 4, low=0.0, high=1.0), T(4))], gradgrad=_RAW,
        jvp="reftorch has no tangent rule for binary_cross_entropy_with_logits"),
    "batch_norm": OpInfo([Sample(T(4, 3), T(3), T(3), T(3, grad=False), T(3, low=0.5, high=2.0, grad=False), True, 0.1,
                                 1e-5, False),
                          Sample(T(4, 3, 2), None, None, T(3, grad=False), T(3, low=0.5, high=2.0, grad=False), False,
                                 0.1, 1e-5, False)],
                         errors=[Sample(T(4, 3), T(2), T(3), None, None, True, 0.1, 1e-5, False)], gradgrad=_RAW,
                         jvp="reftorch has no tangent rule for batch norm"),
    "native_batch_norm": OpInfo([Sample(T(4, 3), T(3), T(3), None, None, True, 0.1, 1e-5)],
                                no_error_because="(internal: batch_norm checks first)", gradgrad=_RAW,
                                jvp="reftorch has no tangent rule for batch norm"),
    "layer_norm": OpInfo([Sample(T(3, 4), (4,), T(4), T(4)), Sample(T(2, 3, 4), (3, 4))],
                         errors=[Sample(T(3, 4), (3,))], gradgrad=_RAW),
    "native_layer_norm": OpInfo([Sample(T(3, 4), (4,), T(4), T(4), 1e-5)],
                                errors=[Sample(T(3, 4), (3,), None, None, 1e-5)], gradgrad=_RAW),

    # torch.linalg: well-conditioned matrices (a diagonal added); the factorizations whose vectors'
    # signs are LAPACK's choice are compared on values only where the two LAPACKs agree
    "_linalg_det": OpInfo([Sample(T(3, 3, values=_WELL_CONDITIONED))], errors=[Sample(T(2, 3))], jvp=_NO_JVP),
    "linalg_det": OpInfo([Sample(T(3, 3, values=_WELL_CONDITIONED)), Sample(T(2, 3, 3))], errors=[Sample(T(2, 3))],
                         jvp=_NO_JVP),
    "det": OpInfo([Sample(T(3, 3, values=_WELL_CONDITIONED))], errors=[Sample(T(3))], jvp=_NO_JVP),
    "_linalg_slogdet": OpInfo([Sample(T(3, 3, values=_WELL_CONDITIONED))], errors=[Sample(T(2, 3))], jvp=_NO_JVP),
    "linalg_slogdet": OpInfo([Sample(T(3, 3, values=_WELL_CONDITIONED)), Sample(T(2, 3, 3))],
                             errors=[Sample(T(2, 3))], jvp=_NO_JVP),
    "linalg_inv_ex": OpInfo([Sample(T(3, 3, values=_WELL_CONDITIONED))], errors=[Sample(T(2, 3))]),
    "linalg_inv": OpInfo([Sample(T(3, 3, values=_WELL_CONDITIONED)), Sample(T(2, 3, 3))], errors=[Sample(T(2, 3))]),
    "inverse": OpInfo([Sample(T(3, 3, values=_WELL_CONDITIONED))], errors=[Sample(T(2, 3))]),
    "_linalg_solve_ex": OpInfo([Sample(T(3, 3, values=_WELL_CONDITIONED), T(3))], errors=[Sample(T(2, 3), T(2))],
                               jvp=_NO_JVP),
    "linalg_solve": OpInfo([Sample(T(3, 3, values=_WELL_CONDITIONED), T(3)),
                            Sample(T(3, 3, values=_WELL_CONDITIONED), T(3, 2)),
                            Sample(T(3, 3, values=_WELL_CONDITIONED), T(2, 3), left=False)],
                           errors=[Sample(T(2, 3), T(2))], jvp=_NO_JVP),
    "slogdet": OpInfo([Sample(T(3, 3, values=_WELL_CONDITIONED))], errors=[Sample(T(2, 3))], jvp=_NO_JVP),
    "logdet": OpInfo([Sample(T(3, 3, values=_POSITIVE_DEFINITE)), Sample(T(3, 3, values=_WELL_CONDITIONED))],
                     errors=[Sample(T(2, 3))], jvp=_NO_JVP),
    "svd": OpInfo([Sample(T(4, 3, grad=False)), Sample(T(4, 3, grad=False), False),
                   Sample(T(4, 3, grad=False), True, False)], errors=[Sample(T(3))], jvp=_NO_JVP, values=False),
    "linalg_cholesky_ex": OpInfo([Sample(T(3, 3, values=_POSITIVE_DEFINITE))], errors=[Sample(T(2, 3))],
                                 jvp=_NO_JVP),
    "linalg_cholesky": OpInfo([Sample(T(3, 3, values=_POSITIVE_DEFINITE)),
                               Sample(T(3, 3, values=_POSITIVE_DEFINITE), upper=True)],
                              errors=[Sample(T(2, 3))], jvp=_NO_JVP),
    "linalg_qr": OpInfo([Sample(T(4, 3)), Sample(T(3, 5))], errors=[Sample(T(3))], jvp=_NO_JVP),
    "_linalg_eigh": OpInfo([Sample(T(3, 3, values=_POSITIVE_DEFINITE, grad=False))], errors=[Sample(T(2, 3))],
                           jvp=_NO_JVP, values=False),
    "linalg_eigh": OpInfo([Sample(T(3, 3, values=_POSITIVE_DEFINITE, grad=False))], errors=[Sample(T(2, 3))],
                          jvp=_NO_JVP, values=False),
    "_linalg_svd": OpInfo([Sample(T(4, 3, grad=False))], errors=[Sample(T(3))], jvp=_NO_JVP, values=False),
    "linalg_svd": OpInfo([Sample(T(4, 3, grad=False))], errors=[Sample(T(3))], jvp=_NO_JVP, values=False),
    "linalg_svdvals": OpInfo([Sample(T(4, 3)), Sample(T(2, 3, 3))], errors=[Sample(T(3))], jvp=_NO_JVP),
    "linalg_pinv": OpInfo([Sample(T(4, 3)), Sample(T(3, 5))], errors=[Sample(T(3))], jvp=_NO_JVP),
    "linalg_matrix_rank": OpInfo([Sample(T(4, 3, grad=False)), Sample(T(3, 3, values=np.ones((3, 3)), grad=False))],
                                 errors=[Sample(T(3))], jvp=_NO_JVP),
    "linalg_cross": OpInfo([Sample(T(4, 3), T(4, 3)), Sample(T(3, 2), T(3, 2), dim=0)],
                           errors=[Sample(T(4, 2), T(4, 2))]),
    "linalg_matrix_norm": OpInfo([Sample(T(3, 4)), Sample(T(3, 4), "nuc"), Sample(T(2, 3, 3), 1),
                                  Sample(T(3, 4), float("inf"), keepdim=True)],
                                 errors=[Sample(T(3))], jvp=_NO_JVP),
    "linalg_norm": OpInfo([Sample(T(3, 4)), Sample(T(4), 3), Sample(T(2, 3, 4), dim=(0, 2)), Sample(T(3, 4), "fro")],
                          errors=[Sample(T(2, 3, 4), "fro")], jvp=_NO_JVP),

    # random numbers: torch's numbers for a seed
    "uniform_": OpInfo([Sample(T(3, 4, grad=False)), Sample(T(5, grad=False), -1.0, 2.0)],
                       errors=[Sample(T(3, grad=False), 2.0, 1.0)], seeded=True, call="method"),
    "normal_": OpInfo([Sample(T(3, 4, grad=False)), Sample(T(20, grad=False), 1.0, 2.0)],
                      errors=[Sample(T(3, grad=False), 0.0, -1.0)], seeded=True, call="method"),
    "random_": OpInfo([Sample(T(3, 4, dtype="int64"), 0, 10), Sample(T(5, dtype="int64"), 5)],
                      errors=[Sample(T(3, dtype="int64"), 5, 2)], seeded=True, call="method"),
    "exponential_": OpInfo([Sample(T(3, 4, grad=False)), Sample(T(5, grad=False), 2.0)],
                           errors=[Sample(T(3, grad=False), -1.0)], seeded=True, call="method"),
    "bernoulli": OpInfo([Sample(T(3, 4, low=0.0, high=1.0, grad=False)), Sample(T(4, 3, low=0.0, high=1.0, grad=False,
                                                                                layout="transposed"))],
                        errors=[Sample(T(3, values=[1.5, 0.2, 0.3], grad=False))], seeded=True),
    "bernoulli_.Tensor": OpInfo([Sample(T(3, 4, grad=False), T(3, 4, low=0.0, high=1.0, grad=False)),
                                 Sample(T(3, 4, dtype="int64"), T(4, low=0.0, high=1.0, grad=False))],
                                errors=[Sample(T(3, grad=False), T(3, dtype="int64", low=0, high=2))],
                                seeded=True, call="method"),
    "bernoulli_.float": OpInfo([Sample(T(3, 4, grad=False)), Sample(T(5, dtype="bool"), 0.3)],
                               errors=[Sample(T(3, grad=False), 1.5)], seeded=True, call="method"),
    "bernoulli.p": OpInfo([Sample(T(3, 4, grad=False), 0.3), Sample(T(4, 3, grad=False, layout="transposed"), 0.6)],
                          errors=[Sample(T(3, grad=False), -0.5)], seeded=True),
    "normal.float_float": OpInfo([Sample(0.0, 1.0, (3, 4)), Sample(2.0, 0.5, (5,))],
                                 errors=[Sample(0.0, -1.0, (3,))], seeded=True),
    "normal.Tensor_float": OpInfo([Sample(T(3, 4)), Sample(T(5), 2.0)], errors=[Sample(T(3), -1.0)], seeded=True),
    "normal.float_Tensor": OpInfo([Sample(1.0, T(3, 4, low=0.1, high=1.0))],
                                  errors=[Sample(1.0, T(3, low=-2.0, high=-1.0))], seeded=True),
    "normal.Tensor_Tensor": OpInfo([Sample(T(3, 4), T(3, 4, low=0.1, high=1.0))],
                                   errors=[Sample(T(3), T(3, low=-2.0, high=-1.0))], seeded=True),
    "rand": factory(Sample(3, 4), Sample((20,), dtype="float64"), seeded=True),
    "randn": factory(Sample(3, 4), Sample((20,), dtype="float64"), seeded=True),
    "rand_like": OpInfo([Sample(T(3, 4))], no_error_because="every tensor has a shape to copy", seeded=True, jvp=False),
    "randn_like": OpInfo([Sample(T(3, 4))], no_error_because="every tensor has a shape to copy", seeded=True, jvp=False),
    "randint": factory(Sample(0, 10, (3, 4)), Sample(5, (6,)), errors=[Sample(5, 2, (3,))]),
    "randperm": factory(Sample(5), Sample(1), seeded=True),
    "multinomial": OpInfo([Sample(T(2, 5, low=0.1, high=1.0, grad=False), 3),
                           Sample(T(5, low=0.1, high=1.0, grad=False), 8, True)],
                          errors=[Sample(T(5, low=0.1, high=1.0, grad=False), 8)], seeded=True),
}
OPS["randint"].seeded = True
