"""The random ops: fills (uniform_, normal_, random_, exponential_, bernoulli_), factories (rand,
randn, randint, randperm, normal, bernoulli) and multinomial. Each draws from a Generator (generator.py) and
writes its numbers in the order torch's CPU kernels do, so a seed gives torch's numbers.

The fills exist only in place: each implementation returns the new values (laid out as the
tensor, filled in its memory order) and codegen writes them in. Their gradient is zero: the
new values do not depend on the old ones.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..dispatch import kernel
from ..generator import Generator, check_vmap_randomness, default_generator_for, pick
from ..storage import contiguous_format
from ..tensor import Tensor
from ._support import _wrap
from .codegen import ops
from .creation import _device_arg, _finish, _shape_arg


def _in_memory_order(array: np.ndarray) -> np.ndarray:
    """A view that walks `array`'s memory front to back (the order torch's serial kernels fill)."""
    order = sorted(range(array.ndim), key=lambda d: -abs(array.strides[d]))
    return array.transpose(order)


def _sampled(tensor, sample):
    """New values for ``tensor``: ``sample(count, dtype, contiguous)`` drawn in its memory order."""
    values = np.empty_like(tensor._np)
    target = _in_memory_order(values)
    target[...] = sample(target.size, target.dtype, tensor.is_contiguous()).reshape(target.shape)
    return _wrap(values, tensor._device)


def _check_floating(tensor, op):
    if not tensor.dtype.is_floating_point:
        raise NotImplementedError(f'"{op}" not implemented for \'{_c10_name(tensor.dtype)}\'')


def _c10_name(d) -> str:
    return {"bool": "Bool", "uint8": "Byte", "int32": "Int", "int64": "Long"}.get(d.name, d.name)


def uniform_(input, from_=0.0, to=1.0, *, generator=None):
    """Values uniform on [from, to)."""
    _check_floating(input, "check_uniform_bounds")
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={from_:g} > to={to:g}")
    g = pick(generator, input._device)
    return _sampled(input, lambda n, dt, contiguous: g.uniform(n, dt, from_, to))


def normal_(input, mean=0.0, std=1.0, *, generator=None):
    """Normal values (Box-Muller, as torch's CPU kernel)."""
    _check_floating(input, "normal_kernel_cpu")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    g = pick(generator, input._device)
    return _sampled(input, lambda n, dt, contiguous: g.normal(n, dt, mean, std, contiguous))


def random_(input, from_=None, to=None, *, generator=None):
    """Integers: uniform on [from, to), [0, to) with one bound, or with none every integer the
    dtype holds exactly."""
    g = pick(generator, input._device)
    if from_ is None:
        return _sampled(input, lambda n, dt, contiguous: g.random_integers(n, dt))
    low, high = (0, from_) if to is None else (from_, to)
    low, high = int(low), int(high)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    return _sampled(input, lambda n, dt, contiguous: g.randint(n, low, high).astype(dt))


def exponential_(input, lambd=1.0, *, generator=None):
    """Values from the exponential distribution of rate ``lambd``."""
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")  # as C++ prints a double
    if not input.dtype.is_floating_point:
        raise RuntimeError("Exponential distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {_c10_name(input.dtype)}")
    g = pick(generator, input._device)
    return _sampled(input, lambda n, dt, contiguous: g.exponential(n, dt, lambd))


def _bernoulli_check(probs):
    if not ((probs >= 0) & (probs <= 1)).all():  # (nan too)
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message "
                           "be improved?  If so, please report an enhancement request to PyTorch.)")


def bernoulli_float_(input, p=0.5, *, generator=None):
    """1 with probability ``p``, else 0: a float64 uniform per element below p, in memory order.

    That is torch's own kernel, which torch runs on every CPU but Intel's: there it draws
    through MKL's stream instead (seeded from the generator), whose numbers reftorch does not
    make. Dropout's masks come from here."""
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    g = pick(generator, input._device)
    return _sampled(input, lambda n, dt, contiguous: (g.unit_uniform(n, np.float64) < p).astype(dt))


def bernoulli_tensor_(input, p, *, generator=None):
    """1 with probability ``p[i]`` at each element (p broadcast to ``input``): one uniform per
    element, float64 for a float64 p and float32 (24 bits) otherwise, in memory order."""
    if not p.dtype.is_floating_point:
        raise NotImplementedError(f'"bernoulli_tensor_cpu_p_" not implemented for \'{_c10_name(p.dtype)}\'')
    g = pick(generator, input._device)
    values = np.empty_like(input._np)
    order = sorted(range(values.ndim), key=lambda d: -abs(values.strides[d]))
    target = values.transpose(order)
    probs = np.broadcast_to(p._np, values.shape).transpose(order).reshape(-1)
    uniform_dtype = np.float64 if p.dtype is dtypes.float64 else np.float32
    probs = probs.astype(uniform_dtype)
    _bernoulli_check(probs)
    target[...] = (g.unit_uniform(probs.size, uniform_dtype) < probs).reshape(target.shape)
    return _wrap(values, input._device)


def bernoulli(input, *, generator=None):
    """A new tensor of 0s and 1s, 1 with the probability ``input`` holds."""
    return bernoulli_tensor_(ops.empty_like(input, memory_format=contiguous_format), input, generator=generator)


def bernoulli_p(input, p, *, generator=None):
    """A new tensor shaped as ``input``, 1 with probability ``p`` everywhere."""
    return bernoulli_float_(ops.empty_like(input, memory_format=contiguous_format), p, generator=generator)


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Indices drawn from each row of ``input`` (weights, not necessarily normalised)."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {_c10_name(input.dtype)}")
    if input.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > input.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    g = pick(generator, input._device)
    weights = input.detach()
    if not replacement or num_samples == 1:
        return _multinomial_by_exponential_race(weights, num_samples, generator)
    rows = weights._np.reshape(-1, weights.shape[-1])
    drawn = np.stack([_draw_with_replacement(row, num_samples, g) for row in rows])
    return _wrap(kernel("copy", input._device)(drawn.reshape(input.shape[:-1] + (num_samples,))), input._device)


def _multinomial_by_exponential_race(weights, num_samples, generator):
    """Category i wins with probability p_i when each gets the time E_i / p_i (E_i ~ Exp(1)):
    the k smallest times (the k largest p_i / E_i) are k draws without replacement."""
    values = weights._np
    if not (values.max() < math.inf and values.min() >= 0):  # NaN fails both
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (values.sum(axis=-1) == 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    race = weights / ops.exponential_(ops.empty_like(weights), 1.0, generator=generator)
    if num_samples == 1:
        return race.argmax(-1, keepdim=True)
    return race.topk(num_samples).indices


def _draw_with_replacement(row: np.ndarray, num_samples: int, g: Generator) -> np.ndarray:
    """One row: its cumulative distribution (summed one entry at a time, in the row's dtype, or
    float32 for half precision), then the first category whose cumulative share reaches each
    uniform."""
    accumulate = np.float32 if dtypes.is_reduced_float(row.dtype) else row.dtype.type
    total = accumulate(0)
    cumulative = np.empty(row.size, accumulate)
    for j, value in enumerate(row.tolist()):
        if not value >= 0:  # NaN fails here first
            raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
        if not math.isfinite(value):
            raise RuntimeError("invalid multinomial distribution (encountering probability entry = infinity or NaN)")
        total = accumulate(total + accumulate(value))
        cumulative[j] = total
    if not total > 0:
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    cumulative /= total
    cumulative[-1] = 1  # the last share reaches every uniform, whatever the rounding did
    uniforms = g.unit_uniform(num_samples, np.float64)
    # first j with cumulative[j] >= u: a binary search over the nondecreasing shares
    return np.searchsorted(cumulative, uniforms, side="left").astype(np.int64)


def _new(sizes, dtype, device, name, size=None):
    if sizes and size is not None:
        got = ", ".join([type(s).__name__ for s in sizes] + ["size=" + type(size).__name__])
        raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but "
                        "expected one of:")
    if not sizes and size is None:  # torch.rand() needs a size; torch.rand(()) is 0-dim
        raise TypeError(f"{name}() received an invalid combination of arguments - got (), but "
                        "expected a size (tuple of ints)")
    return ops.empty(_shape_arg(sizes, name, size), dtype=dtype or dtypes.get_default_dtype(),
                     device=_device_arg(device))


def rand(*sizes, size=None, generator=None, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Uniform on [0, 1)."""
    out = ops.uniform_(_new(sizes, dtype, device, "rand", size), generator=generator)
    return out.requires_grad_(requires_grad) if requires_grad else out


def randn(*sizes, size=None, generator=None, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Standard normal."""
    out = ops.normal_(_new(sizes, dtype, device, "randn", size), generator=generator)
    return out.requires_grad_(requires_grad) if requires_grad else out


def normal_float_float(mean, std, size, *, generator=None, dtype=None, device=None, requires_grad=False):
    """``torch.normal(mean, std, size)`` for float mean and std."""
    out = ops.normal_(_new((size,), dtype, device, "normal"), mean, std, generator=generator)
    return out.requires_grad_(requires_grad) if requires_grad else out


def normal_of_tensors(mean, std=1.0, *, generator=None):
    """``normal(mean, std)`` with a tensor for either (or both): standard normals in the
    broadcast shape, times std, plus mean."""
    mean_is_tensor, std_is_tensor = isinstance(mean, Tensor), isinstance(std, Tensor)
    if std_is_tensor:
        if (std < 0).any():
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    like = mean if mean_is_tensor else std
    shape = ops.broadcast_shapes(*(t.shape for t in (mean, std) if isinstance(t, Tensor)))
    out = ops.empty(shape, dtype=like.dtype, device=like._device)
    if std_is_tensor:  # normal_(0, 1), then scaled and shifted in two steps (two roundings)
        return ops.normal_(out, generator=generator) * std + mean
    return ops.normal_(out, 0.0, std, generator=generator) + mean


def rand_like(input, *, dtype=None, device=None, requires_grad=False):
    return rand(input._shape, dtype=dtype or input.dtype, device=device or input._device,
                requires_grad=requires_grad)


def randn_like(input, *, dtype=None, device=None, requires_grad=False):
    return randn(input._shape, dtype=dtype or input.dtype, device=device or input._device,
                 requires_grad=requires_grad)


def randint(low=0, high=None, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    """Integers uniform on [low, high): ``randint(low, high, size)``, ``randint(high, size)`` or
    ``randint(high=n, size=...)``."""
    if size is None:  # randint(high, size)
        if high is None:
            raise TypeError("randint() missing required argument: 'size'")
        low, high, size = 0, low, high
    elif high is None:  # randint(high, size=...)
        low, high = 0, low
    low, high = int(low), int(high)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    shape = _shape_arg((size,))
    d = _device_arg(device)
    dtype = dtype or dtypes.int64
    n = math.prod(shape)
    values = pick(generator, d).randint(n, low, high).astype(dtype.numpy).reshape(shape)
    return _finish(_wrap(kernel("copy", d)(values), d), requires_grad)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    """A random permutation of 0 .. n-1."""
    n = int(n)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    d = _device_arg(device)
    values = pick(generator, d).randperm(n).astype((dtype or dtypes.int64).numpy)
    return _finish(_wrap(kernel("copy", d)(values), d), requires_grad)


def bernoulli_mask(shape, p, dtype, device):
    """1 with probability p, else 0 (the mask Dropout multiplies by): ``bernoulli_(p)`` of a new
    row-major tensor, so torch's numbers (except on Intel CPUs, see bernoulli_float_)."""
    check_vmap_randomness()
    g = default_generator_for(device.type)
    keep = g.unit_uniform(math.prod(shape), np.float64).reshape(shape) < p
    return _wrap(kernel("copy", device)(keep.astype(dtype.numpy)), device)
