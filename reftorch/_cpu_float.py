"""The floating-point arithmetic of torch's CPU kernels, operation for operation, and the
build (``CPU_CAPABILITY``) whose arithmetic that is.

torch's x86 wheels compile those kernels for AVX2 with FMA contraction on, so ``x * w + a``
is one fused multiply-add (rounded once), and ``torch.randn`` on 16 or more float32 values
uses a vectorised log and sincos (Cephes polynomials, ``ATen/native/cpu/avx_mathfun.h``)
instead of libm. Reproducing their numbers bit for bit means reproducing each rounding:
NumPy has no FMA, so ``fma32`` and ``fma64`` compute one exactly.
"""
from __future__ import annotations

import os
from fractions import Fraction

import numpy as np

f32 = np.float32


def _cpu_capability() -> str:
    """The kernel build torch picks on this CPU, as ATen's compute_cpu_capability does:
    "avx512", "avx2" or "default" (ATEN_CPU_CAPABILITY may ask for a lower one)."""
    flags: set = set()
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            flags = next((set(line.split(":", 1)[1].split()) for line in cpuinfo
                          if line.startswith("flags")), set())
    except OSError:
        pass
    order = ["default", "avx2", "avx512"]
    best = "avx512" if {"avx512vl", "avx512bw", "avx512dq", "fma"} <= flags else \
        "avx2" if {"avx2", "fma"} <= flags else "default"
    requested = os.environ.get("ATEN_CPU_CAPABILITY", "").lower()
    return requested if requested in order and order.index(requested) < order.index(best) else best


CPU_CAPABILITY = _cpu_capability()
# GCC contracts x * w + a into one FMA where the build has FMA (AVX2 and AVX512), and
# Vectorized's fmadd is one instruction there; the default build rounds twice
FUSED = CPU_CAPABILITY != "default"


def _round_to_odd(high, low):
    """``high + low`` (``high`` its float64 rounding) rounded to odd: truncated toward zero, last
    bit set when inexact. Rounding that to fewer bits is then the correct single rounding."""
    bits = high.view(np.int64).copy()
    inexact = low != 0
    bits -= (inexact & ((low > 0) != (high > 0))).astype(np.int64)  # the exact value is nearer 0
    bits |= inexact.astype(np.int64)
    return bits.view(np.float64)


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def fma32(a, b, c):
    """float32 ``a * b + c`` with one rounding (``_mm256_fmadd_ps``, ``std::fma``).

    ``a`` and ``b`` hold float32 values (``a`` may be an integer array of them)."""
    total = np.multiply(a, b, dtype=np.float64)  # exact: 24 + 24 bits < 53
    total += c
    result = total.astype(np.float32)
    # Rounding twice (to float64, then float32) only goes wrong when the float64 lands exactly
    # halfway between two float32s: its 29 extra bits are 1000...0. Redo those exactly.
    low_bits = total.view(np.int64)
    low_bits &= 0x1FFFFFFF  # (total is not needed any more: reuse its memory)
    halfway = low_bits == 0x10000000
    if halfway.any():
        a, b, c = (np.broadcast_to(np.asarray(x, np.float64), result.shape)[halfway] for x in (a, b, c))
        high, low = _two_sum(a * b, c)
        result[halfway] = _round_to_odd(high, low).astype(np.float32)
    return result


def _split(a):
    """Veltkamp split: a == hi + lo, each half of the 53 bits, so their products are exact."""
    t = a * 134217729.0  # 2**27 + 1
    hi = t - (t - a)
    return hi, a - hi


def fma64(a, b, c):
    """float64 ``a * b + c`` with one rounding (Boldo and Melquiond's emulation by rounding to odd)."""
    a, b, c = (np.asarray(x, np.float64) for x in (a, b, c))
    product = a * b
    a_hi, a_lo = _split(a)
    b_hi, b_lo = _split(b)
    product_err = ((a_hi * b_hi - product) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    high, low = _two_sum(c, product)
    middle, middle_err = _two_sum(low, product_err)
    odd = _round_to_odd(middle, middle_err)
    result = high + odd
    # The emulation needs its error terms representable: near the subnormal range they
    # underflow (a normal_ fill with std 1.7e-307 was 1 ulp off). Those rare values are
    # computed exactly, as fractions, and rounded once.
    tiny = np.abs(product) < 2.0 ** -960
    if tiny.any():
        tiny = np.broadcast_to(tiny & (a != 0) & (b != 0), np.shape(result))
    if tiny.any():
        result = np.array(result, np.float64)  # a 0-d result becomes writable
        a, b, c = (np.broadcast_to(x, result.shape)[tiny] for x in (a, b, c))
        result[tiny] = [float(Fraction(x) * Fraction(y) + Fraction(z)) for x, y, z in zip(a, b, c)]
    return result


# -- avx_mathfun.h, with the multiply-adds GCC fuses --------------------------------------
_MIN_NORMAL = np.array(0x00800000, np.int32).view(np.float32)
_LOG_POLY = (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1,
             1.4249322787E-1, -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1,
             3.3333331174E-1)


def log256_ps(x):
    """Natural log of float32 values: mantissa in [sqrt(1/2), sqrt(2)) times 2**e, then a
    polynomial in the mantissa (NaN for x <= 0)."""
    invalid = x <= 0
    bits = np.maximum(x, _MIN_NORMAL).view(np.int32)
    e = ((bits >> 23) - 0x7f).astype(np.float32) + f32(1)
    x = ((bits & ~0x7f800000) | 0x3f000000).view(np.float32)  # mantissa in [0.5, 1)
    small = x < f32(0.707106781186547524)
    e -= small.astype(np.float32)
    x = (x - f32(1)) + np.where(small, x, f32(0))
    z = x * x
    y = np.full_like(x, _LOG_POLY[0])
    for p in _LOG_POLY[1:]:
        y = fma32(y, x, f32(p))
    y = fma32(y * x, z, e * f32(-2.12194440e-4))
    y = y - z * f32(0.5)
    x = fma32(e, f32(0.693359375), x + y)
    return np.where(invalid, f32(np.nan), x)


def sincos256_ps(x):
    """sin and cos of float32 values: reduce by multiples of pi/4 (in three exact parts),
    then one of two polynomials per octant."""
    sin_negative = x < 0
    x = np.abs(x)
    octant = (x * f32(1.27323954473516)).astype(np.int32)  # truncates, as cvttps does
    octant = (octant + 1) & ~1
    y = octant.astype(np.float32)
    sin_negative ^= (octant & 4) != 0
    cos_negative = (~(octant - 2) & 4) != 0
    use_sin_poly_for_sin = (octant & 2) == 0
    x = fma32(y, f32(-0.78515625), x)
    x = fma32(y, f32(-2.4187564849853515625e-4), x)
    x = fma32(y, f32(-3.77489497744594108e-8), x)
    z = x * x
    cos_poly = fma32(f32(2.443315711809948E-005), z, f32(-1.388731625493765E-003))
    cos_poly = fma32(cos_poly, z, f32(4.166664568298827E-002))
    cos_poly = fma32(cos_poly * z, z, -(z * f32(0.5))) + f32(1)
    sin_poly = fma32(f32(-1.9515295891E-4), z, f32(8.3321608736E-3))
    sin_poly = fma32(sin_poly, z, f32(-1.6666654611E-1))
    sin_poly = fma32(sin_poly * z, x, x)
    s = np.where(use_sin_poly_for_sin, sin_poly, cos_poly)
    c = np.where(use_sin_poly_for_sin, cos_poly, sin_poly)
    return np.where(sin_negative, -s, s), np.where(cos_negative, -c, c)


def multiply_add(a, b, c, dtype):
    """``a * b + c`` in ``dtype`` (float32 or float64) as torch's kernels on this CPU compute it:
    one fused multiply-add in its AVX2 and AVX-512 builds, a product then a sum in "default"."""
    a, b, c = (np.asarray(x, dtype) for x in (a, b, c))
    if not FUSED:
        return a * b + c
    if dtype == np.float32:  # (its sum is written into a * b: that has to have the result's shape)
        return fma32(np.broadcast_to(a, np.broadcast_shapes(a.shape, b.shape, c.shape)), b, c)
    return fma64(a, b, c)  # a number stays a number: its split is then one number, not an array
