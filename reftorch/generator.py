"""The random number generator: torch's CPU generator and samplers, so that one seed gives
torch's numbers (the ops that draw from it, ``rand``, ``normal_``..., are in
functions/sampling.py).

The engine is mt19937 (NumPy's ``MT19937`` is the same engine; we seed its state the way
torch does, from the seed's low 32 bits). Each sampler turns its 32-bit draws into values
exactly as torch's CPU kernels do:

    rand       float32/16/bf16: the low 24 bits of one draw * 2**-24;
               float64: the low 53 bits of two draws (high word first) * 2**-53
    uniform_   that value * (to - from) + from, one fused multiply-add
    randn      16 or more contiguous values: uniforms first, then Box-Muller on blocks of 16
               (u1 = first 8, u2 = next 8); a ragged end takes 16 fresh uniforms and rewrites
               the last 16 values. Fewer values, or a strided tensor: Box-Muller one pair at
               a time in float64, the pair's second value kept in the generator for later
    randint    draw % (high - low) + low, with two draws when the range is 2**28 or more
    randperm   i = 0 .. n-2: swap element i with i + draw % (n - i)
    exponential_  one float64 uniform u per value, -log1p(-u) / lambd in float64 (libm's
               log1p), then rounded to the tensor's dtype
    multinomial   without replacement (or one sample): argmax / topk of p / Exp(1) noise;
               with replacement: per row a cumulative sum, then per sample one float64
               uniform and the first category whose cumulative share reaches it

Which kernels torch runs depends on the CPU (ATen picks AVX512, AVX2 or its default build
at start-up, see ``CPU_CAPABILITY``): the AVX2 and AVX512 builds share the vectorised float32
Box-Muller (both are compiled with AVX2 available; measured bit for bit), the default build
calls libm's logf/cosf/sinf; every build but the default one fuses multiply-adds.

A default generator per device, seeded from the operating system until ``manual_seed`` (as
torch's is); a new ``Generator()`` starts from torch's default seed.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import math
import os
import struct

import numpy as np

from . import _cpu_float, _modes, dtypes
from .dispatch import canonical
from .tensor import Tensor

DEFAULT_SEED = 67280421310721  # torch's default_rng_seed_val, where a new Generator starts
_STATE_SIZE = 5056  # bytes in torch's get_rng_state(): the legacy THGeneratorState layout
_MT_N = 624


CPU_CAPABILITY = _cpu_float.CPU_CAPABILITY
_FUSED = CPU_CAPABILITY != "default"  # GCC contracts x * w + a into one FMA where FMA exists


def _multiply_add32(a, b, c):
    return _cpu_float.fma32(a, b, c) if _FUSED else np.float32(a) * np.float32(b) + np.float32(c)


def _multiply_add64(a, b, c):
    return _cpu_float.fma64(a, b, c) if _FUSED else np.float64(a) * b + c


def _seeded_key(seed: int) -> np.ndarray:
    """mt19937's init_genrand on the low 32 bits of the seed."""
    word = seed & 0xFFFFFFFF
    key = [word]
    for i in range(1, _MT_N):
        word = (1812433253 * (word ^ (word >> 30)) + i) & 0xFFFFFFFF
        key.append(word)
    return np.array(key, dtype=np.uint32)


def _check_seed(seed) -> int:
    seed = int(seed)
    if not -(2 ** 63) <= seed < 2 ** 64:
        raise ValueError("Overflow when unpacking long long")
    return seed % 2 ** 64  # a negative seed is taken as its two's complement, as torch does


class Generator:
    """``torch.Generator``: an mt19937 engine plus the normal sample Box-Muller left over."""

    def __init__(self, device="cpu"):
        self.device = canonical(device)
        self.manual_seed(DEFAULT_SEED)

    def manual_seed(self, seed) -> "Generator":
        self._initial_seed = _check_seed(seed)
        self._engine = np.random.MT19937()
        self._engine.state = {"bit_generator": "MT19937",
                              "state": {"key": _seeded_key(self._initial_seed), "pos": _MT_N}}
        self._drawn = False  # torch reports next=0 until the first twist
        self._next_normal = None
        return self

    def seed(self) -> int:
        """Reseed from the operating system's entropy and return the new seed."""
        new_seed = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(new_seed)
        return new_seed

    def initial_seed(self) -> int:
        return self._initial_seed

    def get_state(self):
        """The state as torch lays it out: a uint8 tensor of 5056 bytes."""
        state = self._engine.state["state"]
        pos = int(state["pos"])
        left, next_index = (_MT_N - pos + 1, pos if self._drawn else 0)
        raw = bytearray(_STATE_SIZE)
        struct.pack_into("<QiiQ", raw, 0, self._initial_seed, left, 1, next_index)
        raw[24:24 + 8 * _MT_N] = state["key"].astype("<u8").tobytes()
        if self._next_normal is not None:
            struct.pack_into("<d", raw, 5024, self._next_normal)  # the legacy normal_y
            struct.pack_into("<i", raw, 5040, 1)  # ... and normal_is_valid
        return Tensor._wrap(np.frombuffer(bytes(raw), dtype=np.uint8).copy())

    def set_state(self, new_state) -> "Generator":
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        if new_state.dtype is not dtypes.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        if new_state.numel() != _STATE_SIZE:
            raise RuntimeError("Expected a CPUGeneratorImplState of size 5056 but found the input "
                               f"RNG state size to be {new_state.numel()}")
        raw = new_state._np.tobytes()
        seed, left, _, next_index = struct.unpack_from("<QiiQ", raw, 0)
        key = np.frombuffer(raw, dtype="<u8", count=_MT_N, offset=24).astype(np.uint32)
        self._initial_seed = seed
        self._engine = np.random.MT19937()
        self._engine.state = {"bit_generator": "MT19937",
                              "state": {"key": key, "pos": _MT_N - left + 1}}
        self._drawn = next_index != 0
        (normal_y,), (valid,) = struct.unpack_from("<d", raw, 5024), struct.unpack_from("<i", raw, 5040)
        self._next_normal = normal_y if valid else None
        return self

    # -- the engine -----------------------------------------------------------------
    def random32(self, n: int) -> np.ndarray:
        """n 32-bit draws (as uint64)."""
        if n:
            self._drawn = True
        return self._engine.random_raw(n)

    def random64(self, n: int) -> np.ndarray:
        """n 64-bit draws, each from two 32-bit ones, the first the high word."""
        words = self.random32(2 * n)
        return (words[0::2] << np.uint64(32)) | words[1::2]

    # -- samplers: NumPy arrays of n values -----------------------------------------
    def unit_uniform(self, n: int, np_dtype) -> np.ndarray:
        """Uniform on [0, 1): float64 from 53 bits, every other float type from 24 (float32)."""
        if np_dtype == np.float64:
            return self._low_bits(self.random64(n), 53).astype(np.float64) * 2.0 ** -53
        return self._low_bits(self.random32(n), 24).astype(np.float32) * np.float32(2.0 ** -24)

    @staticmethod
    def _low_bits(draws, bits) -> np.ndarray:
        draws &= np.uint64((1 << bits) - 1)
        return draws

    def uniform(self, n: int, np_dtype, low: float, high: float) -> np.ndarray:
        np_dtype = np.dtype(np_dtype)
        if np_dtype == np.float64:
            values = _multiply_add64(self.unit_uniform(n, np_dtype), high - low, low)
        else:  # computed in float32, then rounded to the storage type
            low32, high32 = np.float32(low), np.float32(high)
            # (k * 2**-24) * width == k * (width * 2**-24) exactly: scaling the width spares a pass
            k = self._low_bits(self.random32(n), 24)  # integers below 2**24: float32 values
            values = _multiply_add32(k, (high32 - low32) * np.float32(2.0 ** -24), low32)
            values = values.astype(np_dtype, copy=False)
        # a value that rounded up to `high` becomes `low`, so the range stays [low, high)
        values[values == np_dtype.type(high)] = np_dtype.type(low)
        return values

    def normal(self, n: int, np_dtype, mean: float, std: float, contiguous: bool = True) -> np.ndarray:
        np_dtype = np.dtype(np_dtype)
        if n < 16 or not contiguous:
            return np.array([self._one_normal(mean, std) for _ in range(n)]).astype(np_dtype)
        ragged = n % 16 != 0
        if np_dtype == np.float64:
            uniforms = self.unit_uniform(n, np_dtype)
            tail = self.unit_uniform(16, np_dtype) if ragged else None
            return _blocks_of_16(uniforms, tail, lambda u: _box_muller_16_float64(u, mean, std))
        if np_dtype == np.float32:
            # a uniform for every value first (the ragged end's ones are drawn, then replaced)
            uniforms = self.unit_uniform(n, np.float32)
        else:
            # float16/bfloat16 go through a float32 buffer 16 at a time: no draws for the end
            uniforms = np.zeros(n, np.float32)
            uniforms[:n - n % 16] = self.unit_uniform(n - n % 16, np.float32)
        tail = self.unit_uniform(16, np.float32) if ragged else None
        box_muller = _box_muller_16_libm_float32 if CPU_CAPABILITY == "default" else _box_muller_16_float32
        values = _blocks_of_16(uniforms, tail, lambda u: box_muller(u, mean, std))
        return values.astype(np_dtype)

    def _one_normal(self, mean: float, std: float) -> float:
        """torch's at::normal_distribution<double>: a pair from Box-Muller, one kept for later."""
        if self._next_normal is not None:
            value, self._next_normal = self._next_normal, None
        else:
            u1, u2 = self.unit_uniform(2, np.float64)
            radius = math.sqrt(-2.0 * math.log1p(-float(u2)))
            theta = 2.0 * math.pi * float(u1)
            self._next_normal = radius * math.sin(theta)
            value = radius * math.cos(theta)
        return float(_multiply_add64(value, std, mean))

    def randint(self, n: int, low: int, high: int) -> np.ndarray:
        span = high - low
        draws = self.random64(n) if span >= 1 << 28 else self.random32(n)
        return ((draws % np.uint64(span)).astype(np.int64) + low) if n else np.zeros(0, np.int64)

    def random_integers(self, n: int, np_dtype) -> np.ndarray:
        """``random_()`` with no range: every value the dtype holds exactly, from 0 up
        (a float type: 0 .. 2**mantissa_bits; bool: the draw's lowest bit)."""
        np_dtype = np.dtype(np_dtype)
        if np_dtype == np.bool_:
            return (self.random32(n) & np.uint64(1)).astype(np.bool_)
        if np_dtype in (np.int64, np.float64):
            draws = self.random64(n)
        else:
            draws = self.random32(n)
        if np_dtype.kind in "iu":
            modulus = int(np.iinfo(np_dtype).max) + 1
        else:
            modulus = (1 << {np.float64: 53, np.float32: 24, np.float16: 11}.get(np_dtype.type, 8)) + 1
        return (draws % np.uint64(modulus)).astype(np.int64).astype(np_dtype)

    def randperm(self, n: int) -> np.ndarray:
        perm = list(range(n))
        remaining = np.arange(n, 1, -1, dtype=np.uint64)  # n - i for i = 0 .. n-2
        partners = (self.random32(max(n - 1, 0)) % remaining).astype(np.int64) + np.arange(n - 1)
        for i, j in enumerate(partners.tolist()):  # each swap sees the ones before: a loop
            perm[i], perm[j] = perm[j], perm[i]
        return np.array(perm, dtype=np.int64)

    def exponential(self, n: int, np_dtype, lambd: float) -> np.ndarray:
        """Exponential with rate ``lambd``, always from float64 uniforms (also for float32)."""
        uniforms = self.unit_uniform(n, np.float64)
        # libm's log1p: NumPy's differs from it in the last bit for a few percent of values
        values = _libm(math.log1p, -uniforms) * (-1.0 / lambd)
        if dtypes.is_reduced_float(np.dtype(np_dtype)):  # c10::Half and BFloat16 are built from a float
            values = values.astype(np.float32)
        return values.astype(np_dtype)


def _blocks_of_16(uniforms, tail, transform):
    """torch's normal_fill: transform whole blocks of 16 uniforms in place; a ragged end takes
    16 fresh uniforms and overwrites the last 16 values with them."""
    n = uniforms.size
    whole = n - n % 16
    values = uniforms.copy()
    values[:whole] = transform(uniforms[:whole].reshape(-1, 16)).reshape(-1)
    if tail is not None:
        values[n - 16:] = transform(tail.reshape(1, 16)).reshape(-1)
    return values


def _box_muller_16_float32(u, mean, std):
    """float32 blocks of 16 through the vectorised log and sincos of torch's AVX2 kernel
    (which its AVX512 build runs too)."""
    u1 = np.float32(1) - u[:, :8]
    radius = np.sqrt(np.float32(-2) * _cpu_float.log256_ps(u1))
    sin, cos = _cpu_float.sincos256_ps(np.float32(2.0 * math.pi) * u[:, 8:])
    mean32, std32 = np.float32(mean), np.float32(std)
    return np.concatenate([_cpu_float.fma32(radius * cos, std32, mean32),
                           _cpu_float.fma32(radius * sin, std32, mean32)], axis=1)


def _box_muller_16_libm_float32(u, mean, std):
    """float32 blocks of 16 through libm's logf, cosf and sinf (torch's default build)."""
    logf, cosf, sinf = (_libm_float(name) for name in ("logf", "cosf", "sinf"))
    u1 = np.float32(1) - u[:, :8]
    radius = np.sqrt(np.float32(-2) * _libm(logf, u1, np.float32))
    theta = (2.0 * math.pi * u[:, 8:].astype(np.float64)).astype(np.float32)  # in double, then float
    mean32, std32 = np.float32(mean), np.float32(std)
    return np.concatenate([_cpu_float.fma32(radius * _libm(cosf, theta, np.float32), std32, mean32),
                           _cpu_float.fma32(radius * _libm(sinf, theta, np.float32), std32, mean32)],
                          axis=1)


def _box_muller_16_float64(u, mean, std):
    """float64 blocks of 16 through libm's log, cos and sin (what std::log etc. call)."""
    u1 = 1.0 - u[:, :8]
    theta = 2.0 * math.pi * u[:, 8:]
    radius = np.sqrt(-2.0 * _libm(math.log, u1))
    return np.concatenate([_cpu_float.fma64(radius * _libm(math.cos, theta), std, mean),
                           _cpu_float.fma64(radius * _libm(math.sin, theta), std, mean)], axis=1)


def _libm(fn, a, np_dtype=np.float64):
    # NumPy's log/sin/cos may be its own SIMD code; Python's math (and ctypes) call the C library
    return np.array([fn(v) for v in a.reshape(-1).tolist()], dtype=np_dtype).reshape(a.shape)


@functools.cache
def _libm_float(name: str):
    """libm's float32 function ``name`` (what std::log(float) and friends call)."""
    fn = getattr(ctypes.CDLL(ctypes.util.find_library("m")), name)
    fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float]
    return fn


# -- the default generators ------------------------------------------------------------
_default_generators: dict[str, Generator] = {}


def default_generator_for(device_type: str) -> Generator:
    g = _default_generators.get(device_type)
    if g is None:
        # as in torch, a process that never seeds gets fresh numbers each run
        g = _default_generators[device_type] = Generator(device_type)
        g.seed()
    return g


def manual_seed(seed) -> Generator:
    """Seed every device's default generator: the same seed gives the same numbers."""
    seed = _check_seed(seed)
    default_generator_for("cpu")
    for g in _default_generators.values():
        g.manual_seed(seed)
    return _default_generators["cpu"]


def seed() -> int:
    new_seed = default_generator_for("cpu").seed()
    for name, g in _default_generators.items():
        if name != "cpu":
            g.manual_seed(new_seed)
    return new_seed


def initial_seed() -> int:
    return default_generator_for("cpu").initial_seed()


def get_rng_state():
    return default_generator_for("cpu").get_state()


def set_rng_state(new_state) -> None:
    default_generator_for("cpu").set_state(new_state)




def check_vmap_randomness():
    """Inside ``vmap(randomness='error')`` (the default) a random operation is refused: each
    slice would silently get different numbers, or the same ones, and torch makes you choose."""
    if _modes.vmap.randomness == "error":
        raise RuntimeError(
            "vmap: called random operation while in randomness error mode. Please either use the "
            "'same' or 'different' randomness flags on vmap or perform the randomness operation out "
            "of vmap")


def pick(generator, device) -> Generator:
    """The generator an op draws from: the one given, or the device's default."""
    check_vmap_randomness()
    if generator is None:
        return default_generator_for(device.type)
    if not isinstance(generator, Generator):
        raise TypeError(f"expected a torch.Generator, but got {type(generator).__name__}")
    if generator.device.type != device.type:
        raise RuntimeError(f"Expected a '{device.type}' device type for generator but found "
                           f"'{generator.device.type}'")
    return generator
