"""Every operator reftorch declares, run against torch on the samples of tests/opinfo.py
(what torch's OpInfo tests do for torch).

For each entry of reftorch/functions/native_functions.py and each of its samples: the result
(values, dtype, shape, strides, view or not), the node recorded (torch's name and its
``_saved_*`` names), the gradients, the second derivatives where torch has them, the
forward-mode tangent, the ``out=`` and in-place variants when the op declares them, and
torch's error, word for word, for each input torch refuses. An op declared without samples
fails ``test_every_declared_op_has_samples``.

Seen failing: with sigmoid's samples removed, ``test_every_declared_op_has_samples`` reports
``['sigmoid']``; with tanh's formula broken (``grad * (1 - result)``), ``[tanh]`` reports its
gradient wrong in 11 of 12 elements. It runs in about 15 s on two cores (``-n 2``).
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest
import torch

import reftorch
from reftorch.functions import GENERATED
from reftorch.functions import ops as ref_ops

from engine_support import LIBS, assert_close_values, assert_same, assert_same_error
from opinfo import OPS, T

DECLARED = {d.schema.full_name: d for d in GENERATED.declarations}

# of a call no signature takes, errors are compared by their first line: torch then lists its Python
# signatures, reftorch its schemas
SIGNATURES = "received an invalid combination of arguments"


def test_every_declared_op_has_samples():
    """A new entry in native_functions.py needs its samples in tests/opinfo.py (and back)."""
    assert sorted(set(DECLARED) - set(OPS)) == []
    assert sorted(set(OPS) - set(DECLARED)) == []


# -- making the arguments -------------------------------------------------------------------
def _tensors_of(value):
    if isinstance(value, T):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _tensors_of(v)


def _arrays(sample, seed):
    rng = np.random.default_rng(seed)
    return {id(t): t.array(rng) for value in (*sample.args, *sample.kwargs.values()) for t in _tensors_of(value)}


def _build(value, lib, arrays, leaves, primals=None):
    if isinstance(value, T):
        if primals is not None and id(value) in primals:
            return primals[id(value)]
        tensor, leaf = value.make(lib, arrays[id(value)])
        if leaf is not None:
            leaves.append((value, leaf))
        return tensor
    if isinstance(value, (list, tuple)):
        return type(value)(_build(v, lib, arrays, leaves, primals) for v in value)
    return value


def _arguments(sample, lib, arrays, primals=None):
    """(args, kwargs, [(T, leaf)]) for ``lib``: the dtype names become the library's dtypes."""
    leaves = []
    args = [_build(a, lib, arrays, leaves, primals) for a in sample.args]
    kwargs = {k: getattr(lib, v) if k == "dtype" and isinstance(v, str) else _build(v, lib, arrays, leaves, primals)
              for k, v in sample.kwargs.items()}
    return args, kwargs, leaves


def _callables(name, info):
    declaration = DECLARED[name]
    python = declaration.python_name or declaration.name
    call = info.call or ("function" if "function" in declaration.variants else
                         "method" if "method" in declaration.variants else
                         "special" if python.startswith(("special_", "linalg_")) else "aten")
    if call == "function":
        return getattr(torch, python), getattr(reftorch, python)
    if call == "special":  # torch.special.entr is the op special_entr, torch.linalg.det linalg_det
        namespace, _, short = python.partition("_")
        return getattr(getattr(torch, namespace), short), getattr(getattr(reftorch, namespace), short)
    if call == "nn":
        return getattr(torch.nn.functional, python), getattr(reftorch.nn.functional, python)
    if call == "method":
        method = declaration.method_name or python
        position = [a.name for a in declaration.schema.arguments].index("self")

        def on(args, kwargs):  # x.where(c, y): the method's tensor is the schema's self
            return getattr(args[position], method)(*args[:position], *args[position + 1:], **kwargs)
        return (lambda *a, **k: on(a, k)), (lambda *a, **k: on(a, k))
    overload = declaration.schema.overload or "default"
    aten = getattr(getattr(torch.ops.aten, declaration.schema.name), overload)
    if call == "aten_inplace_view":  # torch's in-place view, on a fresh result as matmul makes it
        return (lambda x, *a, **k: aten(x * 1, *a, **k)), (lambda x, *a, **k: getattr(ref_ops, python)(x * 1, *a, **k))
    return aten, getattr(ref_ops, python)


def _run(fn, lib, info, seed, args, kwargs):
    if info.seeded:
        lib.manual_seed(seed)
    return fn(*args, **kwargs)


def _dtype_args(lib, args):
    return [getattr(lib, a) if isinstance(a, str) and a in ("float64", "float32", "int32", "int64", "float16") else a
            for a in args]


# -- the checks ------------------------------------------------------------------------------
def _outputs(result):
    return list(result) if isinstance(result, (tuple, list)) else [result]


def _saved_names(node):
    return sorted(a for a in dir(node) if a.startswith("_saved_"))


def _node_names(theirs, mine, where):
    for t, m in zip(_outputs(theirs), _outputs(mine)):
        if not isinstance(t, torch.Tensor):
            continue
        t_node, m_node = t.grad_fn, m.grad_fn
        assert (t_node is None) == (m_node is None), f"{where}: grad_fn {m_node} but torch {t_node}"
        if t_node is not None:
            assert m_node.name() == t_node.name(), f"{where}: grad_fn {m_node.name()} but torch {t_node.name()}"
            assert _saved_names(m_node) == _saved_names(t_node), (
                f"{where}: {m_node.name()} saves {_saved_names(m_node)}, torch {_saved_names(t_node)}")


def _dense(t):
    """torch's ZeroTensor (what it gives for a derivative that is zero) as ordinary zeros."""
    return torch.zeros(t.shape, dtype=t.dtype) if t._is_zerotensor() else t


def _differentiable(result):
    return [o for o in _outputs(result) if isinstance(o, (torch.Tensor, reftorch.Tensor)) and o.requires_grad]


def _check_gradients(info, results, seed, where):
    """Gradients of every differentiable output (with a random weighting) at every leaf, then,
    where torch can, the gradients of those gradients."""
    (theirs, t_leaves), (mine, m_leaves) = results
    t_outs, m_outs = _differentiable(theirs), _differentiable(mine)
    assert len(t_outs) == len(m_outs), f"{where}: {len(m_outs)} differentiable outputs, torch {len(t_outs)}"
    if not t_outs or not t_leaves:
        return
    rng = np.random.default_rng(seed + 1)
    weights = [rng.uniform(-1, 1, tuple(o.shape)).astype(str(o.dtype).split(".")[-1]) for o in t_outs]
    twice = info.gradgrad is True
    grads = []
    for lib, outs, leaves in ((torch, t_outs, t_leaves), (reftorch, m_outs, m_leaves)):
        try:
            grads.append(lib.autograd.grad(outs, [leaf for _, leaf in leaves], [lib.tensor(w) for w in weights],
                                           allow_unused=True, create_graph=twice))
        except Exception as error:  # no derivative (floor_divide): reftorch must refuse with torch's words
            grads.append(error)
    t_grads, m_grads = grads
    if isinstance(t_grads, Exception) or isinstance(m_grads, Exception):
        assert_same_error(m_grads, t_grads, name=f"{where}: backward", first_line=SIGNATURES in str(t_grads))
        return
    for i, (t, m) in enumerate(zip(t_grads, m_grads)):
        assert (t is None) == (m is None), f"{where}: gradient {i} is {m} but torch {t}"
        if t is not None:
            assert_close_values(m, _dense(t), f"{where}: gradient {i}")
    if not twice:
        return
    t_live = [(i, g) for i, g in enumerate(t_grads) if g is not None and g.requires_grad]
    if not t_live:
        return
    vectors = [rng.uniform(-1, 1, tuple(g.shape)).astype(str(g.dtype).split(".")[-1]) for _, g in t_live]
    t_total = sum((g * torch.tensor(v)).sum() for (_, g), v in zip(t_live, vectors))
    try:
        t_second = torch.autograd.grad(t_total, [leaf for _, leaf in t_leaves], allow_unused=True)
    except RuntimeError:
        return  # torch has no second derivative here either
    m_total = sum((m_grads[i] * reftorch.tensor(v)).sum() for (i, _), v in zip(t_live, vectors))
    m_second = reftorch.autograd.grad(m_total, [leaf for _, leaf in m_leaves], allow_unused=True)
    for i, (t, m) in enumerate(zip(t_second, m_second)):
        if t is None:
            continue  # (reftorch may give zeros where torch gives nothing)
        assert m is not None, f"{where}: second derivative {i} missing"
        assert_close_values(m, _dense(t), f"{where}: second derivative {i}")


def _check_forward_mode(info, fns, sample, arrays, seed, where):
    """The op's tangent along a random direction of every floating input, by each library's
    func.jvp."""
    inputs = [t for value in (*sample.args, *sample.kwargs.values()) for t in _tensors_of(value) if t.grad]
    if not inputs:
        return
    rng = np.random.default_rng(seed + 2)
    directions = {id(t): rng.uniform(-1, 1, arrays[id(t)].shape).astype(arrays[id(t)].dtype) for t in inputs}
    outcomes = []
    for lib, fn in zip(LIBS, fns):
        primals = tuple(lib.tensor(arrays[id(t)]) for t in inputs)
        tangents = tuple(lib.tensor(directions[id(t)]) for t in inputs)

        def f(*xs, lib=lib, fn=fn):
            values = {}
            for t, x in zip(inputs, xs):
                if t.layout == "transposed":
                    x = x.t() if x.dim() == 2 else x.permute(*reversed(range(x.dim())))
                elif t.layout == "expanded":
                    x = x.expand(*t.shape)
                values[id(t)] = x
            args, kwargs, _ = _arguments(sample, lib, arrays, primals=values)
            out = _run(fn, lib, info, seed, _dtype_args(lib, args), kwargs)
            return tuple(o for o in _outputs(out) if isinstance(o, (torch.Tensor, reftorch.Tensor))
                         and o.dtype.is_floating_point)
        try:
            outcomes.append(lib.func.jvp(f, primals, tangents))
        except NotImplementedError as error:
            outcomes.append(error)
    theirs, mine = outcomes
    if isinstance(theirs, NotImplementedError):
        assert isinstance(mine, NotImplementedError), f"{where}: torch has no tangent rule, reftorch gave one"
        return
    assert not isinstance(mine, Exception), f"{where}: forward mode raised {mine!r}"
    for i, (t, m) in enumerate(zip(theirs[1], mine[1])):
        assert_close_values(m, _dense(t), f"{where}: tangent {i}")


def _check_out(fns, info, sample, arrays, seed, results, where):
    (theirs, _), _ = results
    outs = []
    for lib, fn in zip(LIBS, fns):
        args, kwargs, _ = _arguments(sample, lib, arrays)
        template = _outputs(theirs)
        out = tuple(lib.empty(tuple(o.shape), dtype=getattr(lib, str(o.dtype).split(".")[-1])) for o in template)
        with lib.no_grad():
            try:
                returned = _run(fn, lib, info, seed, _dtype_args(lib, args), {**kwargs, "out": out if len(out) > 1 else out[0]})
            except TypeError:
                if lib is torch:  # torch's parser has no out= signature for these types (where(c, x, 0.5))
                    return
                raise
        assert returned is out[0] or tuple(returned) == out, f"{where}: out= did not return the out tensor"
        outs.append(out)
    assert_same(list(outs[1]), list(outs[0]), name=f"{where} out=")


def _check_inplace(name, info, sample, arrays, seed, where):
    declaration = DECLARED[name]
    method = (declaration.python_name or declaration.name) + "_"
    results = []
    for lib in LIBS:
        args, kwargs, leaves = _arguments(sample, lib, arrays)
        target = args[0] * 1 if args[0].dtype.is_floating_point else args[0].clone()
        if info.seeded:
            lib.manual_seed(seed)
        try:
            out = getattr(target, method)(*_dtype_args(lib, args[1:]), **kwargs)
        except Exception as error:  # torch refuses some (an int tensor cannot hold exp's floats)
            results.append(error)
            continue
        assert out is target, f"{where}: {method} did not return self"
        results.append(target)
    theirs, mine = results
    if isinstance(theirs, Exception) or isinstance(mine, Exception):
        assert_same_error(mine, theirs, name=f"{where} {method}", first_line=SIGNATURES in str(theirs))
        return
    assert_same(mine, theirs, name=f"{where} {method}")
    _node_names(theirs, mine, f"{where} {method}")


def _check_error(fns, info, sample, seed, where):
    arrays = _arrays(sample, seed)
    caught = []
    for lib, fn in zip(LIBS, fns):
        args, kwargs, _ = _arguments(sample, lib, arrays)
        with pytest.raises(Exception) as info_:
            _run(fn, lib, info, seed, _dtype_args(lib, args), kwargs)
        caught.append(info_.value)
    theirs, mine = caught
    assert_same_error(mine, theirs, name=where, first_line=SIGNATURES in str(theirs))


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_matches_torch(name):
    info, declaration = OPS[name], DECLARED[name]
    fns = _callables(name, info)
    base_seed = zlib.crc32(name.encode())
    for i, sample in enumerate(info.samples):
        where, seed = f"{name} {sample!r}", base_seed + 10 * i
        arrays = _arrays(sample, seed)
        results = []
        for lib, fn in zip(LIBS, fns):
            args, kwargs, leaves = _arguments(sample, lib, arrays)
            try:
                results.append((_run(fn, lib, info, seed, _dtype_args(lib, args), kwargs), leaves))
            except Exception as error:  # torch refuses this sample (frac of an int tensor): so must reftorch
                results.append((error, leaves))
        (theirs, t_leaves), (mine, m_leaves) = results
        if isinstance(theirs, Exception) or isinstance(mine, Exception):
            assert_same_error(mine, theirs, name=where, first_line=SIGNATURES in str(theirs))
            continue
        if info.values:
            assert_same(mine, theirs, geometry=True, name=where)
        else:  # (empty's values are whatever the memory held)
            for t, m in zip(_outputs(theirs), _outputs(mine)):
                assert (tuple(m.shape), tuple(m.stride()), str(m.dtype)[-7:]) == (
                    tuple(t.shape), tuple(t.stride()), str(t.dtype)[-7:]), where
        _node_names(theirs, mine, where)
        _check_gradients(info, [(theirs, t_leaves), (mine, m_leaves)], seed, where)
        floating = any(isinstance(o, torch.Tensor) and o.dtype.is_floating_point for o in _outputs(theirs))
        if info.jvp is True and not info.seeded and floating:
            _check_forward_mode(info, fns, sample, arrays, seed, where)
        if "out" in declaration.variants and (info.call or "function") == "function" and info.values:
            _check_out(fns, info, sample, arrays, seed, results, where)
        if "inplace" in declaration.variants and info.inplace and isinstance(sample.args[0], T):
            _check_inplace(name, info, sample, arrays, seed, where)
    assert info.errors or info.no_error_because, f"{name}: give an input torch refuses, or say why there is none"
    for i, sample in enumerate(info.errors):
        _check_error(fns, info, sample, base_seed + 1000 + i, f"{name} error {sample!r}")
