"""Helpers for the engine property tests: run one program on torch and on reftorch, compare.

A test builds NumPy inputs from Hypothesis draws, turns them into tensors of the same
layout in both libraries (contiguous, permuted, sliced with a step, or expanded), runs the
same function with ``lib`` bound to ``torch`` or ``reftorch``, and compares what comes out:
values (with a tolerance for floats), dtype, shape, and for views the geometry too.

Whole programs (lesson snippets, tutorial flows) run through ``run_program``: every
``import torch...`` in them resolves to reftorch's module of the same path, or fails.
"""
from __future__ import annotations

import builtins
import contextlib
import functools
import importlib
import importlib.abc
import io
import math
import os
import pkgutil
import re
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import torch
from hypothesis import settings
from hypothesis import strategies as st

import reftorch

ENGINE = settings.get_profile("reftorch-engine")
LIBS = (torch, reftorch)
DTYPE_NAMES = ("bool", "int32", "int64", "float32", "float64")
FLOAT_NAMES = ("float32", "float64")
LAYOUTS = ("contiguous", "permuted", "stepped", "expanded")

# How far torch's and reftorch's results may be apart, from the error bounds of what the generated
# programs compute (from the operation, not from one machine): a few element-wise ops, each
# within 2 ulp in both libraries (SLEEF's vectorised functions against libm/NumPy), and sums or dot
# products of at most N = 64 terms (shapes up to 4x4x4) that the two libraries add in different orders
# (BLAS blocking, AVX2/AVX-512 vector width, NumPy's pairwise sum). Each order errs by at most
# (N-1)·u·Σ|a_i| (Higham, Accuracy and Stability of Numerical Algorithms, §4.2), so two orders differ
# by at most 2(N-1)·u·Σ|a_i|, and |a_i| <= 9 (products of two inputs in [-3, 3]) gives Σ|a_i| <= 576:
#     atol = 2·63·u·576            float32 4.3e-3, float64 8.1e-12
# Away from cancellation the error is relative: 2(N-1)·u for the sum and 2 ulp per element-wise op,
# times its condition number |x f'(x) / f(x)| (<= 3 for exp, tanh, sigmoid, log near 1 on these
# inputs), for programs of up to 8 ops:
#     rtol = (2·63 + 8·2·3)·u      float32 1.0e-5, float64 1.9e-14
UNIT_ROUNDOFF = {"float32": 2.0 ** -24, "float64": 2.0 ** -53}
TOLERANCE = {name: dict(rtol=(2 * 63 + 8 * 2 * 3) * u, atol=2 * 63 * u * 576) for name, u in UNIT_ROUNDOFF.items()}


def sum_bound(dtype_name, terms, abs_sum):
    """How far two summation orders of ``terms`` numbers, whose magnitudes add up to ``abs_sum``,
    can be apart: each is within (terms - 1)·u·abs_sum of the exact sum (Higham §4.2)."""
    return 2 * builtins.max(terms - 1, 1) * UNIT_ROUNDOFF[dtype_name] * abs_sum


# .item() loses which dtype the number came from: the float32 bounds above, the looser of the two
_FLOAT_TOLERANCE = dict(rel_tol=TOLERANCE["float32"]["rtol"], abs_tol=TOLERANCE["float32"]["atol"])


# -- strategies -------------------------------------------------------------------------
def shapes(min_dims=0, max_dims=3, min_side=1, max_side=4):
    return st.lists(st.integers(min_side, max_side), min_size=min_dims, max_size=max_dims).map(tuple)


seeds = st.integers(0, 2**32 - 1)
layouts = st.sampled_from(LAYOUTS)
dtype_names = st.sampled_from(DTYPE_NAMES)
float_names = st.sampled_from(FLOAT_NAMES)


def make_array(seed, shape, dtype_name, low=-3.0, high=3.0, away_from_zero=False):
    """Reproducible values of one dtype; integers stay small so products do not overflow."""
    rng = np.random.default_rng(seed)
    if dtype_name == "bool":
        return np.asarray(rng.random(shape) < 0.5)
    if dtype_name in ("int32", "int64"):
        values = np.asarray(rng.integers(int(low), int(high) + 1, size=shape))
        if away_from_zero:
            values[values == 0] = 1
        return values.astype(dtype_name)
    values = np.asarray(rng.uniform(low, high, size=shape))
    if away_from_zero:
        values = np.where(np.abs(values) < 0.25, 0.25 + np.abs(values), values)
    return values.astype(dtype_name)


def build(lib, array, layout="contiguous", requires_grad=False):
    """A tensor in ``lib`` with ``array``'s values and shape, laid out as ``layout`` asks.

    permuted: a contiguous tensor of reversed shape, permuted back (strides reversed);
    stepped: every other element of a tensor twice as long in its last dim;
    expanded: dims of the array that hold one value along them are stride 0.
    The leaf that requires grad is the one built from NumPy; the returned tensor may be a
    view of it, so gradients flow through the layout change as well.
    Returns (leaf, tensor).
    """
    shape = array.shape
    ndim = len(shape)
    if layout == "permuted" and ndim >= 2:
        order = tuple(range(ndim - 1, -1, -1))
        leaf = lib.tensor(np.ascontiguousarray(array.transpose(order)), requires_grad=requires_grad)
        return leaf, leaf.permute(order)
    if layout == "stepped" and ndim >= 1:
        wide = np.repeat(array, 2, axis=-1)
        leaf = lib.tensor(wide, requires_grad=requires_grad)
        return leaf, leaf[..., ::2]
    if layout == "expanded" and ndim >= 1:
        # keep the first slice along dim 0 and expand it: values then repeat along dim 0
        leaf = lib.tensor(np.ascontiguousarray(array[:1]), requires_grad=requires_grad)
        return leaf, leaf.expand(*shape)
    leaf = lib.tensor(array, requires_grad=requires_grad)
    return leaf, leaf


def pair(array, layout="contiguous", requires_grad=False):
    """(torch leaf, torch tensor), (reftorch leaf, reftorch tensor) for the same input."""
    return tuple(build(lib, array, layout, requires_grad) for lib in LIBS)


# -- comparisons ------------------------------------------------------------------------
def to_numpy(t):
    if isinstance(t, reftorch.Tensor):
        return np.array(t.detach().cpu()._np)
    return t.detach().cpu().numpy().copy()


def dtype_name(t) -> str:
    return str(t.dtype).replace("torch.", "")


@functools.cache
def capabilities_this_cpu_allows() -> list[str]:
    """"default" always (ATEN_CPU_CAPABILITY can ask for it anywhere), then each x86 build up
    to the best one torch itself picks here."""
    best = subprocess.run([sys.executable, "-c", "import torch; print(torch.backends.cpu."
                           "get_cpu_capability().lower())"], capture_output=True, text=True,
                          check=True, env={k: v for k, v in os.environ.items()
                                           if k != "ATEN_CPU_CAPABILITY"}).stdout.strip()
    order = ["default", "avx2", "avx512"]
    return order[:order.index(best) + 1] if best in order else ["default", best]


def raw_bits(t) -> tuple:
    """dtype name, shape and the exact bytes of a tensor of either library (bfloat16 via its
    bit pattern): what "the same numbers" means for random streams."""
    t = t.detach().contiguous()
    if isinstance(t, torch.Tensor):
        array = (t.view(torch.int16) if t.dtype is torch.bfloat16 else t).numpy()
    else:
        array = np.ascontiguousarray(t._np)
    return str(t.dtype).removeprefix("torch."), tuple(t.shape), array.tobytes()


def assert_same_bits(ours, theirs):
    """reftorch's tensor holds torch's bits exactly; on failure, how many differ and the first."""
    a, b = raw_bits(ours), raw_bits(theirs)
    assert a[:2] == b[:2], f"reftorch {a[:2]}, torch {b[:2]}"
    if a[2] != b[2]:
        dtype = {"bfloat16": np.int16}.get(a[0], a[0])
        x, y = np.frombuffer(a[2], dtype), np.frombuffer(b[2], dtype)
        first = int(np.flatnonzero(x != y)[0])
        raise AssertionError(f"{int((x != y).sum())} of {x.size} values differ; first at {first}: "
                             f"reftorch {x[first]!r}, torch {y[first]!r}")


def assert_close_values(mine, theirs, name="", tolerance=None):
    """Values equal (floats within ``tolerance``: by default the dtype's TOLERANCE); tensors of
    either library or NumPy arrays."""
    a, b = (np.asarray(x) if isinstance(x, np.ndarray) else to_numpy(x) for x in (mine, theirs))
    assert a.shape == b.shape, f"{name}: shape {a.shape} != torch {b.shape}"
    kind = b.dtype.name
    if kind in TOLERANCE or (tolerance is not None and b.dtype.kind in "fc"):
        np.testing.assert_allclose(a, b, equal_nan=True, err_msg=name, **(tolerance or TOLERANCE[kind]))
    else:
        np.testing.assert_array_equal(a, b, err_msg=name)


def assert_same_tensor(mine, theirs, *, geometry=False, name="", tolerance=None):
    """Same shape, dtype and values; with ``geometry`` also strides, offset and view-ness."""
    assert isinstance(mine, reftorch.Tensor), f"{name}: got {type(mine).__name__}, not a reftorch Tensor"
    assert tuple(mine.shape) == tuple(theirs.shape), f"{name}: shape {tuple(mine.shape)} != torch {tuple(theirs.shape)}"
    assert dtype_name(mine) == dtype_name(theirs), f"{name}: dtype {mine.dtype} != torch {theirs.dtype}"
    assert str(mine.device).split(":")[0] == str(theirs.device).split(":")[0] or str(mine.device).startswith("sim")
    assert mine.requires_grad == theirs.requires_grad, f"{name}: requires_grad differs"
    if theirs.dtype is torch.bfloat16:   # NumPy has no bfloat16: the bits themselves
        assert_same_bits(mine, theirs)
    else:
        assert_close_values(mine, theirs, name, tolerance)
    if geometry:
        assert mine.stride() == theirs.stride(), f"{name}: stride {mine.stride()} != torch {theirs.stride()}"
        assert mine.storage_offset() == theirs.storage_offset(), f"{name}: storage_offset differs"
        assert mine.is_contiguous() == theirs.is_contiguous(), f"{name}: is_contiguous differs"
        assert mine._is_view() == theirs._is_view(), f"{name}: _is_view {mine._is_view()} != torch {theirs._is_view()}"


def assert_same(mine, theirs, *, geometry=False, name="result", tolerance=None):
    """The one comparison of what reftorch gave (``mine``) with what torch gave: tensors
    (shape, dtype, values within the dtype's tolerance or ``tolerance``, which then holds for
    Python floats too; and with ``geometry``
    strides, offset and view-ness), NumPy arrays, numbers, bools, strings, torch's dtypes,
    sizes and devices, and sequences and dicts of them (a state dict's keys in order, and
    its ``_metadata``)."""
    if isinstance(theirs, torch.Tensor):
        assert_same_tensor(mine, theirs, geometry=geometry, name=name, tolerance=tolerance)
    elif isinstance(theirs, np.ndarray):
        assert_close_values(mine, theirs, name, tolerance)
    elif isinstance(theirs, dict):
        assert type(mine).__name__ == type(theirs).__name__, f"{name}: {type(mine).__name__} != torch {type(theirs).__name__}"
        assert list(mine) == list(theirs), f"{name}: keys {list(mine)} != torch {list(theirs)}"
        for key in theirs:
            assert_same(mine[key], theirs[key], geometry=geometry, name=f"{name}[{key!r}]", tolerance=tolerance)
        assert getattr(mine, "_metadata", None) == getattr(theirs, "_metadata", None), f"{name}._metadata"
    elif isinstance(theirs, (torch.dtype, torch.Size, torch.device)):
        assert repr(mine) == repr(theirs), f"{name}: {mine!r} != torch {theirs!r}"
    elif isinstance(theirs, (tuple, list)):
        assert isinstance(mine, (tuple, list)), f"{name}: {type(mine).__name__} is not a sequence"
        assert len(mine) == len(theirs), f"{name}: length {len(mine)} != torch {len(theirs)}"
        for i, (m, t) in enumerate(zip(mine, theirs)):
            assert_same(m, t, geometry=geometry, name=f"{name}[{i}]", tolerance=tolerance)
    elif isinstance(theirs, float):  # a Python float out of .item() of a float32 or float64 result
        close = _FLOAT_TOLERANCE if tolerance is None else dict(rel_tol=tolerance["rtol"], abs_tol=tolerance["atol"])
        assert isinstance(mine, float) and math.isclose(mine, theirs, **close) or (
            math.isnan(theirs) and math.isnan(mine)), f"{name}: {mine!r} != torch {theirs!r}"
    else:
        assert type(mine) is type(theirs) and mine == theirs, f"{name}: {mine!r} != torch {theirs!r}"


def run_both(program, *inputs, may_raise=(), seed=None):
    """``program(lib, *inputs_for_lib)`` on torch and reftorch; returns (torch, reftorch) results.
    When torch raises, reftorch must raise the same class, and the test must expect it:
    ``may_raise`` names the error classes the program may raise on some inputs (then None is
    returned); both raising anything else fails, since nothing was compared.
    With ``seed``, each library's global generator is seeded with it first, and the two must end
    in the same state (a sampler that draws one number too many shows up)."""
    results, errors = [], []
    for lib in LIBS:
        if seed is not None:
            lib.manual_seed(seed)
        try:
            results.append(program(lib, *inputs))
            errors.append(None)
        except Exception as error:  # noqa: BLE001  (compared below)
            results.append(None)
            errors.append(error)
    if seed is not None:
        assert_same_bits(reftorch.get_rng_state(), torch.get_rng_state())
    torch_error, ref_error = errors
    if torch_error is not None or ref_error is not None:
        assert torch_error is not None, f"reftorch raised {ref_error!r}; torch did not"
        assert ref_error is not None, f"torch raised {torch_error!r}; reftorch did not"
        assert isinstance(ref_error, type(torch_error)), (
            f"reftorch raised {type(ref_error).__name__}: {ref_error}; torch raised "
            f"{type(torch_error).__name__}: {torch_error}"
        )
        assert isinstance(torch_error, may_raise), (
            f"both raised {type(torch_error).__name__} ({torch_error}), so nothing was compared; where that "
            "error is expected on some inputs, say so: may_raise=" + type(torch_error).__name__)
        return None
    return tuple(results)


def same_program(program, *inputs, geometry=False, may_raise=(), tolerance=None):
    """Run on both and assert the same results (assert_same, with ``geometry`` and
    ``tolerance``); both raising the same class passes only when the test expects that class
    (``may_raise``, see run_both)."""
    results = run_both(program, *inputs, may_raise=may_raise)
    if results is not None:
        theirs, mine = results
        assert_same(mine, theirs, geometry=geometry, tolerance=tolerance)
    return results


def same_outcome(program, *inputs, geometry=False):
    """For a program meant to fail on some inputs (a generated shape that does not broadcast, a
    dtype an op refuses): both give the same results, or both raise the same class with the
    same words (same_error). Returns the (torch, reftorch) results, or None when both raised."""
    results = run_both(program, *inputs, may_raise=Exception)
    if results is None:
        same_error(lambda lib: program(lib, *inputs))
        return None
    theirs, mine = results
    assert_same(mine, theirs, geometry=geometry)
    return results


def node_chain(grad_fn):
    """The graph below ``grad_fn`` as nested (type name, [children]) in next_functions order."""
    # iterative to stay safe on deep graphs; graphs compared here are small
    def describe(node):
        if node is None:
            return None
        return (type(node).__name__, [describe(child) for child, _ in node.next_functions])
    return describe(grad_fn)


# -- running a whole program on reftorch: every torch import is reftorch's ----------------
class _NoRealTorch(importlib.abc.MetaPathFinder):
    """While a program runs on reftorch, a ``torch.<sub>`` that reftorch lacks must fail the
    import loudly: falling through to real torch would let torch do the work unnoticed."""

    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(
                f"No module named 'ref{name}': the program imports {name}, and reftorch has no "
                f"such module", name=name)
        return None


def _reftorch_modules():
    """Every module of the reftorch package, imported, by its name."""
    for info in pkgutil.walk_packages(reftorch.__path__, "reftorch."):
        importlib.import_module(info.name)
    return {name: module for name, module in sys.modules.items()
            if name == "reftorch" or name.startswith("reftorch.")}


@contextlib.contextmanager
def torch_bound_to(lib):
    """Within the block, ``import torch``, ``import torch.nn.functional as F``, ``from
    torch.utils.data import DataLoader``, ... give ``lib``'s modules.

    For reftorch, every ``torch`` and ``torch.<sub>`` entry of ``sys.modules`` is swapped for
    reftorch's module of the same path, and a submodule reftorch lacks raises
    ModuleNotFoundError; real torch's entries come back afterwards. (Binding only the name
    ``torch`` is not enough: ``from torch.utils.checkpoint import checkpoint`` would still
    find real torch's code, which then runs on reftorch's tensors.)"""
    if lib is torch:
        yield
        return
    real = {name: module for name, module in sys.modules.items()
            if name == "torch" or name.startswith("torch.")}
    for name in real:
        del sys.modules[name]
    for name, module in _reftorch_modules().items():
        sys.modules["torch" + name[len("reftorch"):]] = module
    finder = _NoRealTorch()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
            del sys.modules[name]
        sys.modules.update(real)


def run_program(source: str, lib, *, namespace=None):
    """Run ``source`` (which says ``import torch`` itself) with every torch import bound to
    ``lib``; returns (what it printed, None) or (what it printed, (error class, first line))."""
    out = io.StringIO()
    scope = {"__name__": "program"} if namespace is None else namespace
    try:
        with torch_bound_to(lib), contextlib.redirect_stdout(out), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(textwrap.dedent(source), "<program>", "exec"), scope)
    except Exception as error:  # noqa: BLE001  (the class and words are what we compare)
        return out.getvalue(), (type(error).__name__, str(error).split("\n")[0][:70])
    return out.getvalue(), None


# -- errors and whole outcomes ------------------------------------------------------------
def torch_text(error) -> str:
    """What a student reads of torch's message: some end with the C++ stack ("Exception raised
    from ...") or name where in torch's sources they were raised ("(Triggered internally at
    ...)"), which is left out."""
    return re.sub(r" \(Triggered internally at [^)]*\)", "", str(error).split("\nException raised from")[0])


def same_error(program, *, prefix=False, name=""):
    """``program(lib)`` raises in torch; reftorch raises the same class (or, for torch's own
    classes such as LinAlgError, one of that name) with the same words (with ``prefix``:
    reftorch's message starts with torch's first line). Warnings are not errors here."""
    caught = []
    for lib in LIBS:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                program(lib)
        except Exception as error:  # noqa: BLE001  (compared below)
            caught.append(error)
        else:
            caught.append(None)
    theirs, mine = caught
    assert theirs is not None, f"{name}: torch did not raise (the case is wrong)"
    assert_same_error(mine, theirs, prefix=prefix, name=name)


def assert_same_error(mine, theirs, *, prefix=False, first_line=False, name=""):
    """Two errors already caught (where a library did not raise, None or what it returned):
    reftorch's (``mine``) has torch's class (for torch's own classes such as LinAlgError, one of
    that name) and torch's words, without the C++ location torch appends. With ``prefix``
    reftorch's message starts with torch's first line; with ``first_line`` the two first lines
    are equal (where torch then lists its Python signatures and reftorch its schemas)."""
    assert isinstance(theirs, Exception), f"{name}: reftorch raised {mine!r}, torch did not"
    assert isinstance(mine, Exception), (
        f"{name}: reftorch did not raise; torch raised {type(theirs).__name__}: {theirs}")
    assert type(mine) is type(theirs) or (type(theirs).__module__.split(".")[0] == "torch"
                                          and type(mine).__name__ == type(theirs).__name__), (
        f"{name}: reftorch raised {type(mine).__name__}: {mine}; torch {type(theirs).__name__}: {theirs}")
    if prefix:
        assert str(mine).startswith(torch_text(theirs).split("\n")[0]), f"{name}\n reftorch: {mine}\n torch:    {theirs}"
    elif first_line:
        assert str(mine).split("\n")[0] == torch_text(theirs).split("\n")[0], (
            f"{name}\n reftorch: {mine}\n torch:    {theirs}")
    else:
        assert str(mine) == torch_text(theirs), f"{name}\n reftorch: {mine}\n torch:    {torch_text(theirs)}"


def same_warnings(program):
    """The warnings ``program(lib)`` gives, class and words, are torch's (torch's C++ warnings
    end with where they were triggered in its sources: that part is left out)."""
    said = []
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            program(lib)
        said.append([(w.category.__name__, str(w.message).split(" (Triggered internally at")[0])
                     for w in caught])
    assert said[1] == said[0], f"\n reftorch: {said[1]}\n torch:    {said[0]}"
    return said[0]


# -- helpers several engine test files share ------------------------------------------------
def grads_and_chain(program, *arrays, layout="contiguous"):
    """``program(lib, *tensors)`` on leaves built from ``arrays`` (the floating ones require
    grad); compares the output (the first of a tuple, such as max_pool2d's values), the grad_fn
    chain and the leaves' gradients (upstream gradient fixed, in the output's dtype) with torch's."""
    results = []
    for lib in LIBS:
        built = [build(lib, a, layout, requires_grad=a.dtype.kind == "f") for a in arrays]
        out = program(lib, *[t for _, t in built])
        out = out[0] if isinstance(out, tuple) else out
        upstream = np.random.default_rng(5).uniform(-1, 1, size=tuple(out.shape)).astype(dtype_name(out))
        out.backward(lib.tensor(upstream))
        results.append((out, node_chain(out.grad_fn), [leaf.grad for leaf, _ in built if leaf.requires_grad]))
    (t_out, t_chain, t_grads), (r_out, r_chain, r_grads) = results
    assert_same(r_out.detach(), t_out.detach(), name="out")
    assert r_chain == t_chain, f"\n reftorch: {r_chain}\n torch:    {t_chain}"
    for i, (mine, theirs) in enumerate(zip(r_grads, t_grads)):
        assert (mine is None) == (theirs is None), f"grad {i}: {mine} vs torch {theirs}"
        if theirs is not None:
            assert_close_values(mine, theirs, f"grad {i}")


def same_write_through(make, make_view):
    """``make(lib)`` gives (base, tensor); a write through ``make_view(tensor)`` shows in the base,
    in both libraries, at the same places (nothing to check for an empty view, a broadcast, or
    a copy)."""
    seen = []
    for lib in LIBS:
        leaf, t = make(lib)
        v = make_view(t)
        if v.numel() == 0 or v.stride() and 0 in v.stride() or not v._is_view():
            return
        before = leaf.clone()
        v.fill_(True if v.dtype == lib.bool else 42)
        assert v._version == leaf._version and leaf._version >= 1, (
            f"{lib.__name__}: the write did not reach the base's version counter (a copy, not a view?)")
        seen.append(leaf.ne(before).reshape(-1).tolist())
    assert seen[1] == seen[0], f"written in the base: reftorch {seen[1]}, torch {seen[0]}"


def seeded_mlp(lib):
    """Linear(3, 4), ReLU, Linear(4, 2), with the same weights in both libraries (for hooks and
    optimizer state on a model a student would build); MLP_INPUT is a batch for it."""
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
    with lib.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(lib.tensor(make_array(i, tuple(p.shape), "float32", -1, 1)))
    return model


MLP_INPUT = make_array(99, (5, 3), "float32")


def raised(program, lib):
    """The exception ``program(lib)`` raises (None if it returns)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            program(lib)
    except Exception as error:  # noqa: BLE001  (compared by the caller)
        return error
    return None


def backward_twice(make):
    """A program that calls backward twice on ``make(lib, x)`` (torch frees the graph after the first)."""
    def program(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = make(lib, x)
        y.backward()
        y.backward()
    return program


def both_or_same_error(program):
    """Run on both; if torch raises, reftorch must raise the same class and words."""
    theirs_error = raised(program, torch)
    if theirs_error is not None:
        same_error(program)
        return None
    return program(torch), program(reftorch)
