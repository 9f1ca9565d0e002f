"""Random numbers: one seeded generator per device type, as torch keeps one per device."""
from __future__ import annotations

import numpy as np

from . import dtypes
from .dispatch import kernel

_generators: dict[str, np.random.Generator] = {}
_seed = [0]


def _generator(device_type: str) -> np.random.Generator:
    g = _generators.get(device_type)
    if g is None:
        g = _generators[device_type] = np.random.default_rng(_seed[0])
    return g


def manual_seed(seed: int):
    """Seed every device's generator: the same seed gives the same numbers."""
    _seed[0] = int(seed)
    for name in list(_generators):
        _generators[name] = np.random.default_rng(int(seed))
    return _seed[0]


def seed() -> int:
    return _seed[0]


def initial_seed() -> int:
    return _seed[0]


def _random(kind, size, dtype, device, requires_grad, *args):
    from .functions import _device_arg, _finish, _shape_arg
    if not size:  # torch.rand() needs a size; torch.rand(()) is 0-dim
        name = {"uniform": "rand", "normal": "randn"}.get(kind, kind)
        raise TypeError(f"{name}() received an invalid combination of arguments - got (), but "
                        "expected a size (tuple of ints)")
    from .tensor import Tensor
    d = _device_arg(device)
    dtype = dtype or dtypes.get_default_dtype()
    out = Tensor._wrap(kernel(kind, d)(_generator(d.type), *args, _shape_arg(size), dtype.numpy), d) \
        if kind == "randint" else \
        Tensor._wrap(kernel(kind, d)(_generator(d.type), _shape_arg(size), dtype.numpy), d)
    return _finish(out, requires_grad)


def rand(*size, dtype=None, device=None, requires_grad=False, generator=None):
    """Uniform on [0, 1)."""
    return _random("uniform", size, dtype, device, requires_grad)


def randn(*size, dtype=None, device=None, requires_grad=False, generator=None):
    """Standard normal."""
    return _random("normal", size, dtype, device, requires_grad)


def randint(low, high=None, size=None, *, dtype=None, device=None, requires_grad=False):
    if high is None:
        low, high = 0, low
    return _random("randint", (tuple(size),), dtype or dtypes.int64, device, requires_grad, low, high)


def randperm(n, *, dtype=None, device=None):
    from .functions import tensor
    return tensor(_generator("cpu").permutation(n), dtype=dtype or dtypes.int64, device=device)


def rand_like(input, *, dtype=None, device=None, requires_grad=False):
    return rand(input._shape, dtype=dtype or input.dtype, device=device or input._device,
                requires_grad=requires_grad)


def randn_like(input, *, dtype=None, device=None, requires_grad=False):
    return randn(input._shape, dtype=dtype or input.dtype, device=device or input._device,
                 requires_grad=requires_grad)


def bernoulli_mask(shape, p, dtype, device):
    """1 with probability p, else 0 (the mask Dropout multiplies by)."""
    from .tensor import Tensor
    return Tensor._wrap(kernel("bernoulli", device)(_generator(device.type), shape, p, dtype.numpy), device)
