"""reftorch.fx (a program recorded through the dispatcher) and reftorch.fusion, against torch.

The tracer must record the kernels torch's make_fx records as ATen ops (same names, same
order) for element-wise programs and a Sequential; a traced graph, run again, must give the eager program's
numbers bit for bit, and the fused graph too; the guards must refuse what torch.export's
refuse, with its words; what the tracer cannot name (an array cast outside a kernel) must
be refused, not baked in.
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch.fx.experimental.proxy_tensor import make_fx

import reftorch
from engine_support import ENGINE, TOLERANCE, shapes
from reftorch import fusion, fx


def chain(x):
    return (x * 2 + 1).relu().exp() * x.sigmoid() - 0.5


def two_inputs(x, y):
    return ((x - y).tanh() * y + x.abs()).neg()


def aten_names(fn, *inputs):
    graph = make_fx(fn)(*inputs).graph
    return [n.target.overloadpacket.__name__ for n in graph.nodes if n.op == "call_function"]


def kernel_names(gm):
    return [n.target for n in gm.graph.nodes if n.op == "call_function"]


def pair(seed, shape, dtype="float32"):
    array = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return torch.from_numpy(array.copy()), reftorch.tensor(array)


@pytest.mark.parametrize("fn", [chain, two_inputs])
def test_tracer_records_the_kernels_make_fx_records_as_aten_ops(fn):
    inputs = [pair(seed, (3, 4)) for seed in range(fn.__code__.co_argcount)]
    torch_names = aten_names(fn, *(t for t, _ in inputs))
    gm = fx.trace(fn, *(r for _, r in inputs))
    assert kernel_names(gm) == torch_names
    assert [n.name for n in gm.graph.nodes if n.op == "placeholder"] == list(fn.__code__.co_varnames[:len(inputs)])


@ENGINE
@given(seed=st.integers(0, 2**32 - 1), shape=shapes(1, 3), dtype=st.sampled_from(["float32", "float64"]))
def test_traced_and_fused_graphs_give_the_eager_numbers(seed, shape, dtype):
    (tx, x), (ty, y) = pair(seed, shape, dtype), pair(seed + 1, shape, dtype)
    for fn, args, targs in ((chain, (x,), (tx,)), (two_inputs, (x, y), (tx, ty))):
        eager = fn(*args)
        gm = fx.trace(fn, *args)
        fused = fusion.fuse_elementwise(gm)
        assert np.array_equal(gm(*args).numpy(), eager.numpy())
        assert np.array_equal(fused(*args).numpy(), eager.numpy())  # same kernels on the same values
        np.testing.assert_allclose(fused(*args).numpy(), fn(*targs).numpy(), **TOLERANCE[dtype])
        assert len(kernel_names(fused)) == 1 and gm.graph is not fused.graph


def test_fused_kernel_passes_over_the_data_once_in_blocks():
    x = reftorch.randn(3 * fusion.BLOCK + 5)  # several blocks and a short last one
    fused = fusion.fuse_elementwise(fx.trace(chain, x))
    (node,) = [n for n in fused.graph.nodes if n.op == "call_function"]
    source = node.target.__source__
    assert node.target.__name__ == "fused_mul_add_relu_exp_sigmoid_sub"
    assert source.count("for start in range") == 1
    assert source.count("= empty(BLOCK") == 2  # buffers reused: two for a chain of seven
    assert np.array_equal(fused(x).numpy(), chain(x).numpy())


def test_fusion_stops_where_a_value_is_read_outside_the_group_or_broadcast():
    x, row = reftorch.randn(4, 3), reftorch.randn(3)

    def shared(x):
        h = (x * 3).exp()          # read by the output as well: materialised
        return (h + 1).relu(), h

    def broadcast(x, row):
        return ((x + row) * 2).tanh()  # x + row broadcasts: not fused; * 2 and tanh are

    gm = fusion.fuse_elementwise(fx.trace(shared, x))
    names = [getattr(t, "__name__", t) for t in kernel_names(gm)]
    assert names == ["fused_mul_exp", "fused_add_relu"]
    assert all(np.array_equal(a.numpy(), b.numpy()) for a, b in zip(gm(x), shared(x)))
    gm = fusion.fuse_elementwise(fx.trace(broadcast, x, row))
    assert [getattr(t, "__name__", t) for t in kernel_names(gm)] == ["add", "fused_mul_tanh"]
    assert np.array_equal(gm(x, row).numpy(), broadcast(x, row).numpy())


def test_a_module_is_traced_with_its_parameters_as_get_attr_and_views_as_as_strided():
    reftorch.manual_seed(0)
    model = reftorch.nn.Sequential(reftorch.nn.Linear(3, 5), reftorch.nn.ReLU(), reftorch.nn.Linear(5, 2))
    x = reftorch.randn(4, 3)
    gm = fx.trace(model, x)
    assert [n.target for n in gm.graph.nodes if n.op == "get_attr"] == list(model.state_dict())
    assert [getattr(t, "__name__", t) for t in kernel_names(gm)] == ["as_strided", "addmm", "relu", "as_strided", "addmm"]
    assert np.array_equal(gm(x).numpy(), model(x).detach().numpy())
    # torch's make_fx records the same ATen ops for torch's Sequential (t is torch's view;
    # without no_grad it also records the detach autograd makes of relu's output)
    torch_model = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.ReLU(), torch.nn.Linear(5, 2))
    with torch.no_grad():
        assert aten_names(torch_model, torch.randn(4, 3)) == ["t", "addmm", "relu", "t", "addmm"]


def test_data_dependent_control_flow_is_baked_in_where_make_fx_refuses():
    def branchy(x):
        return x * 2 if x.sum().item() > 0 else x - 2

    x = reftorch.ones(3)
    gm = fx.trace(branchy, x)  # the dispatcher never sees the `if`: the branch taken is the graph
    assert kernel_names(gm) == ["sum", "mul"]
    assert np.array_equal(gm(-x).numpy(), (-x * 2).numpy())  # on any input
    with pytest.raises(RuntimeError, match="data-dependent control flow"):
        make_fx(branchy)(torch.ones(3))  # torch's tracer refuses to read a value out of a traced tensor


def test_guards_refuse_other_inputs_with_torch_exports_words():
    class Double(torch.nn.Module):
        def forward(self, x):
            return x * 2

    exported = torch.export.export(Double(), (torch.ones(4, 3),)).module()
    with pytest.raises(AssertionError) as torch_error:
        exported(torch.ones(5, 3))
    gm = fx.trace(lambda x: x * 2, reftorch.ones(4, 3))
    with pytest.raises(AssertionError) as ours:
        gm(reftorch.ones(5, 3))
    assert str(ours.value) == str(torch_error.value) == "Guard failed: x.size()[0] == 4"
    for bad, words in ((reftorch.ones(4, 3, dtype=reftorch.float64), "x.dtype == torch.float32"),
                       (reftorch.ones(3, 4).t(), "x.is_contiguous()"), (reftorch.ones(12), "x.dim() == 2")):
        with pytest.raises(AssertionError, match=words.replace("(", r"\(").replace(")", r"\)")):
            gm(bad)


def test_tracer_refuses_an_array_it_cannot_name_and_non_float_inputs():
    with pytest.raises(RuntimeError, match="made or cast outside the dispatcher"):
        fx.trace(lambda x: x.half() * 2, reftorch.ones(3))  # float16 arithmetic casts outside the kernels
    with pytest.raises(TypeError, match="float32 and float64"):
        fx.trace(lambda x: x + 1, reftorch.ones(3, dtype=reftorch.int64))


def test_dispatch_mode_sees_every_kernel_and_is_off_inside_its_handler():
    seen, nested = [], []

    class Counting(fx.DispatchMode):
        def __reftorch_dispatch__(self, op, kernel, args, kwargs):
            seen.append(op)
            nested.append(bool(reftorch.dispatch._modes))  # this mode is popped while it runs
            return kernel(*args, **kwargs)

    x = reftorch.ones(3)
    with Counting():
        chain(x)
    assert seen == ["mul", "add", "relu", "exp", "sigmoid", "mul", "sub"] and not any(nested)
    assert reftorch.dispatch._modes == []
    seen.clear()
    chain(x)  # outside the mode: nothing recorded
    assert seen == []


def test_graph_code_frees_each_value_after_its_last_use_and_retraces():
    x = reftorch.randn(5)
    gm = fx.trace(chain, x)
    lines = gm.code.splitlines()
    sigmoid_line = next(line for line in lines if "kernel('sigmoid')" in line)
    assert sigmoid_line.endswith("x = None")  # x is read last by sigmoid
    again = fx.trace(gm, x)  # a GraphModule's kernels go through the dispatcher too
    assert kernel_names(again) == kernel_names(gm)


def test_fx_is_an_attribute_after_a_plain_import_as_in_torch():
    # a fresh process: in this one some other test may have imported reftorch.fx already
    for lib, name in (("torch", "torch.fx"), ("reftorch", "reftorch.fx")):
        done = subprocess.run([sys.executable, "-c", f"import {lib}; print({lib}.fx.__name__)"],
                              capture_output=True, text=True)
        assert done.returncode == 0 and done.stdout.strip() == name, done.stderr
