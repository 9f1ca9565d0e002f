"""float16, bfloat16 and CPU autocast against torch.

Promotion is compared for every pair of dtypes, as tensors, zero-dim tensors and Python
numbers. Values are compared bit for bit wherever torch's CPU result is one rounding of a
float32 computation (conversions, + - * / with tensors and numbers, sqrt, relu, neg, abs...).
Where torch's float32 result itself comes from code NumPy does not share -- its own
vectorised exp/log/tanh (SLEEF), or a sum or matrix product accumulated in another order --
we allow one unit in the last place of the 16-bit result: the float32 values agree to about
2**-23, so only a value within that of a 16-bit rounding boundary can round the other way.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import reftorch
from engine_support import ENGINE

LIBS = (torch, reftorch)
ALL_DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64",
              "float16", "bfloat16", "float32", "float64")
LOW = ("float16", "bfloat16")


def to_lib(lib, array: np.ndarray, dtype: str):
    """The float32 array's values as a ``dtype`` tensor (rounded by the library itself)."""
    return lib.tensor(array.astype(np.float32)).to(getattr(lib, dtype))


def bits(t) -> np.ndarray:
    """The stored 16-bit patterns (or the values for other dtypes), for exact comparison."""
    t = t.detach().contiguous()
    if isinstance(t, torch.Tensor):
        return t.view(torch.int16).numpy() if t.dtype in (torch.float16, torch.bfloat16) else t.numpy()
    a = np.ascontiguousarray(t._np)
    return a.view(np.int16) if a.itemsize == 2 and a.dtype.kind in "fV" else a


def as_float(t) -> np.ndarray:
    return t.detach().float().contiguous().numpy() if isinstance(t, torch.Tensor) else \
        np.asarray(t.detach().float()._np)


def assert_bitwise(ours, theirs):
    assert str(ours.dtype) == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(bits(ours), bits(theirs))


def assert_within_one_ulp(ours, theirs):
    """At most one step apart in the 16-bit grid (same sign: patterns are monotonic)."""
    assert str(ours.dtype) == str(theirs.dtype)
    a, b = bits(ours).astype(np.int32), bits(theirs).astype(np.int32)
    assert np.all(np.abs(a - b) <= 1), (as_float(ours), as_float(theirs))


# -- promotion -----------------------------------------------------------------------------
def operand(lib, form, dtype):
    if form == "tensor":
        return lib.ones(2, dtype=getattr(lib, dtype))
    if form == "zero-dim":
        return lib.ones((), dtype=getattr(lib, dtype))
    return {"bool": True, "int64": 2, "float32": 2.5}[dtype]  # a Python number


@pytest.mark.parametrize("a", ALL_DTYPES)
def test_promote_types_matches_torch_for_every_pair(a):
    for b in ALL_DTYPES:
        ours = reftorch.promote_types(getattr(reftorch, a), getattr(reftorch, b))
        theirs = torch.promote_types(getattr(torch, a), getattr(torch, b))
        assert str(ours) == str(theirs), (a, b)


FORMS = [("tensor", d) for d in ALL_DTYPES] + [("zero-dim", d) for d in ALL_DTYPES] + \
    [("number", d) for d in ("bool", "int64", "float32")]


@pytest.mark.parametrize("first", [f for f in FORMS if f[0] == "tensor"], ids=str)
def test_result_type_matches_torch_with_zero_dim_tensors_and_numbers(first):
    for second in FORMS:
        got = [lib.result_type(operand(lib, *first), operand(lib, *second)) for lib in LIBS]
        assert str(got[1]) == str(got[0]), (first, second)
        if "bool" not in (first[1], second[1]):  # and the op itself lands there
            products = [operand(lib, *first) * operand(lib, *second) for lib in LIBS]
            assert str(products[1].dtype) == str(products[0].dtype), (first, second)


def test_default_dtype_can_be_half():
    try:
        for lib in LIBS:
            lib.set_default_dtype(lib.float16)
        assert str(reftorch.tensor([1.5]).dtype) == str(torch.tensor([1.5]).dtype) == "torch.float16"
        assert str((reftorch.tensor([1, 2]) * 0.5).dtype) == str((torch.tensor([1, 2]) * 0.5).dtype)
    finally:
        for lib in LIBS:
            lib.set_default_dtype(lib.float32)


# -- values --------------------------------------------------------------------------------
values = st.lists(st.floats(-300, 300, width=32, allow_subnormal=False), min_size=1, max_size=24)
positive = st.lists(st.floats(1e-3, 300, width=32), min_size=1, max_size=24)
numbers = st.one_of(st.floats(-10, 10), st.integers(-10, 10))
low_dtypes = st.sampled_from(LOW)


@ENGINE
@given(x=values, dtype=low_dtypes)
def test_conversions_round_like_torch(x, dtype):
    # float64 -> 16 bits goes through float32 in torch (rounding twice): so must we
    doubles = np.array(x, np.float64) * (1 + 2.0 ** -30)
    assert_bitwise(reftorch.tensor(doubles.tolist(), dtype=getattr(reftorch, dtype)),
                   torch.tensor(doubles.tolist(), dtype=getattr(torch, dtype)))
    assert_bitwise(reftorch.tensor(doubles, dtype=reftorch.float64).to(getattr(reftorch, dtype)),
                   torch.tensor(doubles, dtype=torch.float64).to(getattr(torch, dtype)))
    assert_bitwise(getattr(reftorch.tensor(x), "half" if dtype == "float16" else "bfloat16")(),
                   getattr(torch.tensor(x), "half" if dtype == "float16" else "bfloat16")())
    assert_bitwise(reftorch.full((3,), float(doubles[0]), dtype=getattr(reftorch, dtype)),
                   torch.full((3,), float(doubles[0]), dtype=getattr(torch, dtype)))
    back = [to_lib(lib, np.array(x), dtype).float() for lib in LIBS]
    assert_bitwise(back[1], back[0])


def test_conversions_round_twice_like_torch_at_16_bit_midpoints():
    # a double just above the midpoint of two 16-bit values: float32 drops the "just above",
    # leaving a tie that goes to the even neighbour; rounding the double once would go up
    for dtype, mantissa_bits in (("float16", 10), ("bfloat16", 7)):
        steps = np.arange(1, 200, dtype=np.float64)
        midpoints = 1 + (2 * steps + 1) * 2.0 ** -(mantissa_bits + 1)
        doubles = (midpoints * (1 + 2.0 ** -40)).tolist()
        for make in (lambda lib: lib.tensor(doubles, dtype=getattr(lib, dtype)),
                     lambda lib: lib.tensor(doubles, dtype=lib.float64).to(getattr(lib, dtype)),
                     lambda lib: lib.full((2,), doubles[0], dtype=getattr(lib, dtype)),
                     lambda lib: lib.zeros(2, dtype=getattr(lib, dtype)).fill_(doubles[2])):
            assert_bitwise(make(reftorch), make(torch))


def test_add_sub_and_comparisons_round_a_number_to_16_bits_first_mul_and_div_do_not():
    # torch's add kernel (and comparisons) convert the number to the tensor's dtype first;
    # its mul and div kernels keep the number in float32
    for dtype, below in (("float16", 2.0 ** -11 + 2.0 ** -22), ("bfloat16", 2.0 ** -8 + 2.0 ** -19)):
        for fn in (lambda t: t + below, lambda t: t - (-below), lambda t: below + t,
                   lambda t: t * (1 + below), lambda t: t / (1 / (1 + below)),
                   lambda t: (t - 1) - 1e-38, lambda t: t + reftorch_or_torch(t).tensor(below),
                   lambda t: (t / 7) == 1 / 7, lambda t: (t / 7) < 1 / 7, lambda t: (t / 7) >= 1 / 7):
            assert_bitwise(fn(reftorch.ones(3, dtype=getattr(reftorch, dtype))),
                           fn(torch.ones(3, dtype=getattr(torch, dtype))))


def reftorch_or_torch(t):
    return reftorch if isinstance(t, reftorch.Tensor) else torch


BINARY = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
          "div": lambda a, b: a / b}


@ENGINE
@given(x=values, y=values, number=numbers, dtype=low_dtypes, op=st.sampled_from(sorted(BINARY)))
def test_arithmetic_is_one_rounding_of_float32_like_torch(x, y, number, dtype, op):
    n = min(len(x), len(y))
    a = [to_lib(lib, np.array(x[:n]), dtype) for lib in LIBS]
    b = [to_lib(lib, np.array(y[:n]), dtype) for lib in LIBS]
    fn = BINARY[op]
    assert_bitwise(fn(a[1], b[1]), fn(a[0], b[0]))
    assert_bitwise(fn(a[1], number), fn(a[0], number))  # the number is not rounded to 16 bits
    assert_bitwise(fn(number, a[1]) if op in ("add", "mul") else fn(a[1], number),
                   fn(number, a[0]) if op in ("add", "mul") else fn(a[0], number))
    mixed = [fn(a[i], to_lib(lib, np.array(y[:n]), "float32")) for i, lib in enumerate(LIBS)]
    assert_bitwise(mixed[1], mixed[0])  # promoted to float32


EXACT_UNARY = {"neg": lambda t: -t, "abs": lambda t: t.abs(), "relu": lambda t: t.relu(),
               "sqrt": lambda t: t.abs().sqrt(), "square": lambda t: t * t,
               "floor": lambda t: t.floor(), "clamp": lambda t: t.clamp(-1, 2)}
SLEEF_UNARY = {"exp": lambda t: (t / 64).exp(), "log": lambda t: t.abs().log(),
               "tanh": lambda t: t.tanh(), "sigmoid": lambda t: t.sigmoid(),
               "sin": lambda t: t.sin(), "cos": lambda t: t.cos()}


@ENGINE
@given(x=values, dtype=low_dtypes)
def test_unary_ops_match_torch(x, dtype):
    a = [to_lib(lib, np.array(x), dtype) for lib in LIBS]
    for name, fn in EXACT_UNARY.items():
        assert_bitwise(fn(a[1]), fn(a[0]))
    for name, fn in SLEEF_UNARY.items():
        assert_within_one_ulp(fn(a[1]), fn(a[0]))


@ENGINE
@given(x=st.lists(st.floats(-4, 4, width=32), min_size=6, max_size=60), dtype=low_dtypes,
       inner=st.integers(1, 3))
def test_reductions_and_matmul_accumulate_in_float32_like_torch(x, dtype, inner):
    n = len(x) - len(x) % (2 * inner)
    a = [to_lib(lib, np.array(x[:n]), dtype).reshape(-1, inner) for lib in LIBS]
    for fn in (lambda t: t.sum(), lambda t: t.mean(), lambda t: t.sum(0), lambda t: t.softmax(0),
               lambda t: t.log_softmax(0), lambda t: t @ t.t(), lambda t: t.t() @ t):
        assert_within_one_ulp(fn(a[1]), fn(a[0]))
    # a long sum in 16-bit accumulators would be far off: both accumulate in float32
    ones = [lib.ones(4096, dtype=getattr(lib, dtype)) for lib in LIBS]
    assert_bitwise(ones[1].sum(), ones[0].sum())


def test_gradients_of_half_tensors_are_half():
    grads = []
    for lib in LIBS:
        x = lib.tensor([0.5, -1.25, 3.0], dtype=lib.float16, requires_grad=True)
        ((x * 3 + 1).relu() * x).sum().backward()
        grads.append(x.grad)
    assert_bitwise(grads[1], grads[0])


REPRS = [lambda lib, d: lib.tensor([1.5, 0.1, 3, -2.25], dtype=d),
         lambda lib, d: lib.tensor([1e-5, 1e4, 0.0], dtype=d),
         lambda lib, d: lib.tensor(2.5, dtype=d),
         lambda lib, d: lib.tensor([], dtype=d),
         lambda lib, d: lib.zeros(2, 3, dtype=d),
         lambda lib, d: lib.tensor([[1.0, float("inf")], [float("nan"), -7.0]], dtype=d),
         lambda lib, d: lib.tensor([1.0, 2.0], dtype=d, requires_grad=True) * 2,
         lambda lib, d: lib.arange(2000).to(d)]


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("make", range(len(REPRS)))
def test_repr_matches_torch(dtype, make):
    texts = [repr(REPRS[make](lib, getattr(lib, dtype))) for lib in LIBS]
    assert texts[1] == texts[0]


def test_numpy_refuses_bfloat16_as_torch_does():
    messages = []
    for lib in LIBS:
        with pytest.raises(TypeError) as info:
            lib.ones(2, dtype=lib.bfloat16).numpy()
        messages.append(str(info.value))
    assert messages[1] == messages[0]
    assert reftorch.ones(2, dtype=reftorch.bfloat16).tolist() == [1.0, 1.0]


# -- autocast ------------------------------------------------------------------------------
def autocast_program(lib, dtype_name=None):
    """What a student might run under autocast: the dtypes of everything that comes out."""
    F = lib.nn.functional
    lib.manual_seed(0)
    x = lib.randn(4, 3, requires_grad=True)
    layer = lib.nn.Linear(3, 5)
    target = lib.tensor([0, 1, 2, 3])
    seen = {}
    kwargs = {} if dtype_name is None else {"dtype": getattr(lib, dtype_name)}
    with lib.autocast(device_type="cpu", **kwargs):
        seen["enabled"] = (lib.is_autocast_enabled(), lib.is_autocast_enabled("cpu"))
        y = layer(x)
        seen["linear"] = (y.dtype, y.grad_fn.name(),
                          tuple(n.name() for n, _ in y.grad_fn.next_functions if n is not None))
        w = layer.weight
        seen["matmul"] = ((x @ w.t()).dtype, lib.mm(x, w.t()).dtype, x.mm(w.t()).dtype,
                          lib.addmm(layer.bias, x, w.t()).dtype, lib.bmm(x[None], w.t()[None]).dtype,
                          lib.mv(x, w[0]).dtype, lib.mm(x.double(), w.double().t()).dtype)
        seen["unlisted"] = (y.sum().dtype, y.mean().dtype, y.softmax(1).dtype, y.exp().dtype,
                            y.relu().dtype, (y + 1).dtype, (y + x.sum()).dtype, y.sigmoid().dtype)
        seen["float32"] = (y.prod().dtype, F.mse_loss(y, lib.zeros(4, 5)).dtype,
                           F.cross_entropy(y, target).dtype, F.nll_loss(y, target).dtype)
        seen["promote"] = (lib.cat([y, x.sum(1, keepdim=True)], 1).dtype,
                           lib.stack([y, y]).dtype, lib.cat([y, y]).dtype)
        loss = F.cross_entropy(y, target)
        with lib.autocast("cpu", enabled=False):
            seen["disabled"] = (lib.is_autocast_enabled("cpu"), lib.mm(x, w.t()).dtype)
    seen["after"] = lib.is_autocast_enabled("cpu")
    loss.backward()
    seen["grads"] = (x.grad.dtype, layer.weight.grad.dtype, layer.bias.grad.dtype)
    seen["loss"] = round(loss.item(), 2)

    @lib.autocast("cpu", **kwargs)
    def decorated(a, b):
        return a @ b
    seen["decorator"] = decorated(x, w.t()).dtype
    return {key: str(value) for key, value in seen.items()}


@pytest.mark.parametrize("dtype_name", [None, "bfloat16", "float16"])
def test_autocast_dtypes_and_gradients_match_torch(dtype_name):
    assert autocast_program(reftorch, dtype_name) == autocast_program(torch, dtype_name)


def test_autocast_refuses_unsupported_dtypes_as_torch_does():
    outcomes = []
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with lib.autocast("cpu", dtype=lib.float64):
                product = lib.mm(lib.ones(2, 2), lib.ones(2, 2))
        outcomes.append((str(product.dtype), [str(w.message) for w in caught], lib.get_autocast_dtype("cpu")))
    assert str(outcomes[1]) == str(outcomes[0])
    for lib in LIBS:
        assert lib.amp.autocast is lib.autocast
