"""reftorch's autograd machinery against torch: composed graphs, retain_grad, accumulation,
freed graphs, inputs=, higher-order gradients, autograd.grad, jacobian/hessian, gradcheck,
grad modes, custom Functions, and a very long chain."""
from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import reftorch
from engine_support import (
    ENGINE, LIBS, assert_close_values, build, float_names, layouts, make_array, node_chain, same_error, seeds,
    shapes,
)

# steps of a random program over a running value ``v`` and a second input ``w`` (same shape)
STEPS = {
    "add_w": lambda lib, v, w: v + w, "mul_w": lambda lib, v, w: v * w, "sub_w": lambda lib, v, w: w - v,
    "div_w": lambda lib, v, w: v / (w * w + 1), "exp": lambda lib, v, w: lib.exp(v * 0.1),
    "tanh": lambda lib, v, w: lib.tanh(v), "sigmoid": lambda lib, v, w: lib.sigmoid(v),
    "square": lambda lib, v, w: v ** 2, "neg": lambda lib, v, w: -v, "scale": lambda lib, v, w: 0.5 * v,
    "sin": lambda lib, v, w: lib.sin(v), "relu_shift": lambda lib, v, w: lib.relu(v + 0.01),
    "clone": lambda lib, v, w: v.clone(), "T": lambda lib, v, w: v.t().t() if v.dim() == 2 else v,
    "view_roundtrip": lambda lib, v, w: v.reshape(-1).reshape(v.shape),
    "where": lambda lib, v, w: lib.where(w > 0, v, w), "maximum": lambda lib, v, w: lib.maximum(v, w),
}


def run_program(lib, steps, arrays, layout):
    built = [build(lib, a, layout, requires_grad=True) for a in arrays]
    (x_leaf, x), (w_leaf, w) = built
    v = x
    for step in steps:
        v = STEPS[step](lib, v, w)
    return x_leaf, w_leaf, v


@ENGINE
@given(steps=st.lists(st.sampled_from(sorted(STEPS)), min_size=1, max_size=8), shape=shapes(1, 2),
       seed=seeds, name=float_names, layout=layouts)
def test_composed_programs_build_torchs_graph_and_gradients(steps, shape, seed, name, layout):
    arrays = [make_array(seed, shape, name, away_from_zero=True), make_array(seed + 1, shape, name)]
    results = []
    for lib in LIBS:
        x, w, out = run_program(lib, steps, arrays, layout)
        loss = out.sum()
        loss.backward()
        results.append((out, node_chain(loss.grad_fn), x.grad, w.grad))
    (t_out, t_graph, t_gx, t_gw), (r_out, r_graph, r_gx, r_gw) = results
    assert_close_values(r_out, t_out)
    assert r_graph == t_graph
    for r, t in ((r_gx, t_gx), (r_gw, t_gw)):
        assert (r is None) == (t is None)
        if t is not None:
            assert_close_values(r, t)


def _accumulate_grad_of(lib, t):
    """The AccumulateGrad node of a leaf, reached through a graph that uses it."""
    return (t * 1).grad_fn.next_functions[0][0]


def test_accumulate_grad_nodes_expose_their_variable_like_torch():
    for lib in LIBS:
        x = lib.ones(2, requires_grad=True)
        node = _accumulate_grad_of(lib, x)
        assert type(node).__name__ == "AccumulateGrad"
        assert node.variable is x
        assert node.next_functions == ()
        y = x * 2
        assert y.grad_fn.next_functions[0][1] == 0 and y.grad_fn.next_functions[1] == (None, 0)
        assert x.is_leaf and not y.is_leaf and y.requires_grad


@ENGINE
@given(shape=shapes(1, 2), seed=seeds, name=float_names)
def test_retain_grad_and_the_non_leaf_warning(shape, seed, name):
    array = make_array(seed, shape, name)
    found = []
    for lib in LIBS:
        x = lib.tensor(array, requires_grad=True)
        y = x * 3
        z = y.exp()
        y.retain_grad()
        z.sum().backward()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert z.grad is None
        messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
        assert messages and messages[0].startswith(
            "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed"), lib.__name__
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a retained non-leaf does not warn
            found.append((y.grad, x.grad, y.retains_grad, z.retains_grad))
    (ty, tx, t_r, t_z), (ry, rx, r_r, r_z) = found
    assert_close_values(ry, ty)
    assert_close_values(rx, tx)
    assert (r_r, r_z) == (t_r, t_z) == (True, False)


@ENGINE
@given(shape=shapes(0, 2), seed=seeds, times=st.integers(2, 3))
def test_gradients_accumulate_and_freed_graphs_raise(shape, seed, times):
    array = make_array(seed, shape, "float64")
    grads, errors = [], []
    for lib in LIBS:
        x = lib.tensor(array, requires_grad=True)
        y = (x.exp() * x).sum()
        for _ in range(times - 1):
            y.backward(retain_graph=True)
        y.backward()  # frees the graph
        grads.append(x.grad)
        with pytest.raises(RuntimeError) as caught:
            y.backward()
        errors.append(str(caught.value))
        # a second, separate graph accumulates into the same .grad
        (x * 2).sum().backward()
        grads.append(x.grad)
    assert_close_values(grads[2], grads[0])
    assert_close_values(grads[3], grads[1])
    assert errors[0].startswith("Trying to backward through the graph a second time")
    assert errors[1] == errors[0]


@ENGINE
@given(shape=shapes(1, 2), seed=seeds, which=st.sampled_from(["x", "w", "both", "nonleaf"]))
def test_backward_inputs_fill_only_those(shape, seed, which):
    arrays = [make_array(seed, shape, "float64"), make_array(seed + 1, shape, "float64")]
    found = []
    for lib in LIBS:
        x, w = (lib.tensor(a, requires_grad=True) for a in arrays)
        h = x * w
        out = (h.tanh() * x).sum()
        inputs = {"x": [x], "w": [w], "both": [x, w], "nonleaf": [h]}[which]
        out.backward(inputs=inputs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found.append((x.grad, w.grad, h.grad))
    for r, t in zip(found[1], found[0]):
        assert (r is None) == (t is None)
        if t is not None:
            assert_close_values(r, t)


HIGHER = {
    "cube": lambda lib, x: (x ** 3).sum(), "exp_mul": lambda lib, x: (lib.exp(x) * x).sum(),
    "tanh": lambda lib, x: lib.tanh(x).sum(), "sigmoid": lambda lib, x: (lib.sigmoid(x) * x).sum(),
    "div": lambda lib, x: (1 / (x * x + 1)).sum(), "sin": lambda lib, x: (lib.sin(x) * lib.cos(x)).sum(),
    "matmul": lambda lib, x: (x.reshape(-1, 1) @ x.reshape(1, -1)).sum() if x.dim() else x * x,
    "mean_sq": lambda lib, x: (x - x.mean()).pow(2).mean(), "log": lambda lib, x: lib.log(x * x + 1).sum(),
    "sqrt": lambda lib, x: lib.sqrt(x * x + 1).sum(), "softmax": lambda lib, x: (lib.softmax(x.reshape(-1), 0) * x.reshape(-1)).sum(),
}


@ENGINE
@given(fn=st.sampled_from(sorted(HIGHER)), shape=shapes(0, 2), seed=seeds)
def test_higher_order_gradients_with_create_graph(fn, shape, seed):
    array = make_array(seed, shape, "float64")
    found = []
    for lib in LIBS:
        x = lib.tensor(array, requires_grad=True)
        y = HIGHER[fn](lib, x)
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        assert g.requires_grad
        (gg,) = lib.autograd.grad(g.sum(), x, create_graph=True)
        # and backward through create_graph fills .grad with a differentiable gradient
        z = HIGHER[fn](lib, x)
        z.backward(create_graph=True)
        first = x.grad
        found.append((g, gg, first, first.requires_grad))
    for r, t in zip(found[1][:3], found[0][:3]):
        assert_close_values(r, t)
    assert found[1][3] == found[0][3]


@ENGINE
@given(shape=shapes(1, 2), seed=seeds, batched=st.booleans())
def test_autograd_grad_with_grad_outputs_allow_unused_and_batches(shape, seed, batched):
    arrays = [make_array(seed + i, shape, "float64") for i in range(3)]
    found, messages = [], []
    for lib in LIBS:
        x, w, unused = (lib.tensor(a, requires_grad=True) for a in arrays)
        y = x * w + x.exp()
        v = lib.tensor(arrays[2])
        gx, gw, gu = lib.autograd.grad(y, (x, w, unused), grad_outputs=v, retain_graph=True, allow_unused=True)
        with pytest.raises(RuntimeError) as caught:
            lib.autograd.grad(y, (x, unused), grad_outputs=v, retain_graph=True)
        assert "appears to not have been used in the graph" in str(caught.value)
        assert x.grad is None  # autograd.grad never writes .grad
        result = [gx, gw, gu]
        messages.append(str(caught.value))
        if batched:
            eye = lib.eye(y.numel(), dtype=lib.float64).reshape(-1, *shape)
            (rows,) = lib.autograd.grad(y, x, grad_outputs=eye, is_grads_batched=True, retain_graph=True)
            result.append(rows)
        found.append(result)
    assert messages[1] == messages[0]
    for r, t in zip(found[1], found[0]):
        assert (r is None) == (t is None)
        if t is not None:
            assert_close_values(r, t)


FUNCTIONAL = {
    "square": lambda lib: lambda x: x ** 2, "exp_sum": lambda lib: lambda x: lib.exp(x).sum(),
    "outer": lambda lib: lambda x: lib.outer(x.reshape(-1), x.reshape(-1)),
    "tanh_mm": lambda lib: lambda x: lib.tanh(x.reshape(-1, 1) * x.reshape(1, -1)).sum(0),
    "pair": lambda lib: lambda x, y: x * y.sum(),
}


@ENGINE
@given(fn=st.sampled_from(sorted(FUNCTIONAL)), shape=shapes(1, 2, 1, 3), seed=seeds)
def test_functional_jacobian_and_hessian_match_torch(fn, shape, seed):
    arrays = [make_array(seed, shape, "float64"), make_array(seed + 1, shape, "float64")]
    found = []
    for lib in LIBS:
        f = FUNCTIONAL[fn](lib)
        if fn == "pair":
            inputs = tuple(lib.tensor(a) for a in arrays)
            jac = lib.autograd.functional.jacobian(f, inputs)
            hess = lib.autograd.functional.hessian(lambda x, y: f(x, y).sum(), inputs)
            found.append([*jac, *(h for row in hess for h in row)])
        else:
            x = lib.tensor(arrays[0])
            result = [lib.autograd.functional.jacobian(f, x)]
            if fn == "exp_sum":
                result.append(lib.autograd.functional.hessian(f, x))
            found.append(result)
    assert len(found[1]) == len(found[0])
    for r, t in zip(found[1], found[0]):
        assert tuple(r.shape) == tuple(t.shape)
        assert_close_values(r, t)


# -- gradcheck and custom Functions ----------------------------------------------------------
def custom_functions(lib, wrong=False):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale):
            ctx.save_for_backward(x)
            ctx.scale = scale
            return x ** 3 * scale

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            factor = 2 if wrong else 3  # the deliberate mistake: d(x^3)/dx is 3x^2
            return grad * factor * x ** 2 * ctx.scale, None

    class MulAdd(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            ctx.flags = ctx.needs_input_grad
            return a * b + a

        @staticmethod
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            return grad * (b + 1) if ctx.needs_input_grad[0] else None, \
                grad * a if ctx.needs_input_grad[1] else None

    return Cube, MulAdd


@ENGINE
@given(shape=shapes(1, 2, 1, 3), seed=seeds, needs=st.sampled_from([(True, True), (True, False), (False, True)]))
def test_custom_functions_match_torch(shape, seed, needs):
    arrays = [make_array(seed, shape, "float64"), make_array(seed + 1, shape, "float64")]
    found = []
    for lib in LIBS:
        Cube, MulAdd = custom_functions(lib)
        a, b = (lib.tensor(x, requires_grad=r) for x, r in zip(arrays, needs))
        out = MulAdd.apply(Cube.apply(a, 2.0), b)
        assert type(out.grad_fn).__name__ == "MulAddBackward"
        flags = out.grad_fn.flags
        out.sum().backward()
        found.append((out, a.grad, b.grad, node_chain(out.grad_fn), tuple(flags)))
    (t_out, t_a, t_b, t_graph, t_flags), (r_out, r_a, r_b, r_graph, r_flags) = found
    assert_close_values(r_out, t_out)
    assert r_graph == t_graph and r_flags == t_flags
    for r, t in ((r_a, t_a), (r_b, t_b)):
        assert (r is None) == (t is None)
        if t is not None:
            assert_close_values(r, t)


@ENGINE
@given(shape=shapes(1, 2, 1, 3), seed=seeds)
def test_gradcheck_accepts_right_and_rejects_wrong_backward(shape, seed):
    array = make_array(seed, shape, "float64", away_from_zero=True)
    for lib in LIBS:
        right, _ = custom_functions(lib)
        wrong, _ = custom_functions(lib, wrong=True)
        x = lib.tensor(array, requires_grad=True)
        assert lib.autograd.gradcheck(lambda t: right.apply(t, 1.5), (x,))
        assert lib.autograd.gradcheck(lambda t: wrong.apply(t, 1.5), (x,), raise_exception=False) is False
        with pytest.raises(RuntimeError, match="Jacobian mismatch for output 0 with respect to input 0"):
            lib.autograd.gradcheck(lambda t: wrong.apply(t, 1.5), (x,))


# -- grad modes ----------------------------------------------------------------------------
def test_grad_modes_match_torch():
    for lib in LIBS:
        x = lib.ones(3, requires_grad=True)
        with lib.no_grad():
            y = x * 2
            assert not lib.is_grad_enabled()
            with lib.enable_grad():
                z = x * 2
        assert not y.requires_grad and y.grad_fn is None and z.requires_grad

        @lib.no_grad()
        def doubled(t):
            return t * 2

        assert not doubled(x).requires_grad and lib.is_grad_enabled()
        with lib.set_grad_enabled(False):
            assert (x * 2).grad_fn is None
        assert lib.is_grad_enabled()
        lib.set_grad_enabled(False)
        assert not (x * 2).requires_grad
        lib.set_grad_enabled(True)
        assert (x * 2).requires_grad

        with lib.inference_mode():
            inf = x * 2
            assert lib.is_inference_mode_enabled() and not inf.requires_grad
        assert inf.is_inference() and not x.is_inference()
        with pytest.raises(RuntimeError) as caught:
            inf.add_(1)
        assert str(caught.value).startswith("Inplace update to inference tensor outside InferenceMode")
        with pytest.raises(RuntimeError) as caught:
            (inf * x).sum().backward()
        assert str(caught.value).startswith("Inference tensors cannot be saved for backward")
        with lib.inference_mode(False):
            assert (x * 2).requires_grad



def test_set_grad_enabled_as_a_decorator_leaves_the_mode_alone():
    """``@torch.set_grad_enabled(False)`` switches the mode when it is built (it is also a plain
    call): as a decorator it switches it back at once, and only the function runs without grad."""
    def program(lib):
        x = lib.ones(2, requires_grad=True)

        @lib.set_grad_enabled(False)
        def doubled(t):
            return t * 2, lib.is_grad_enabled()

        after_decorating = lib.is_grad_enabled()
        y, inside = doubled(x)
        built = lib.set_grad_enabled(False)  # switched off now...
        lib.set_grad_enabled(True)
        with built:  # ...and off again on entering, whatever happened between
            in_block = lib.is_grad_enabled()
        return after_decorating, inside, y.requires_grad, lib.is_grad_enabled(), in_block
    theirs, mine = (program(lib) for lib in LIBS)
    assert mine == theirs


def test_float_of_a_tensor_that_requires_grad_warns_once_per_process():
    """torch gives this warning once per process (TORCH_WARN_ONCE): an L-BFGS closure calls float()
    on the loss at every evaluation, and a training loop prints float(loss) every step."""
    program = textwrap.dedent("""
        import warnings, {lib} as torch
        x = torch.ones(2, requires_grad=True).sum()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            float(x); float(x * 2); x.item()
        print([str(w.message).split(" (Triggered")[0] for w in caught])
        """)
    said = [subprocess.run([sys.executable, "-c", program.format(lib=lib.__name__)], capture_output=True,
                           text=True, check=True).stdout for lib in LIBS]
    assert said[1] == said[0] and "Converting" in said[0]

# -- a long chain ------------------------------------------------------------------------------
def test_backward_through_a_ten_thousand_op_chain():
    results = []
    for lib in LIBS:
        x = lib.tensor([0.5], dtype=lib.float64, requires_grad=True)
        y = x
        for _ in range(10_000):
            y = y * 1.0001
        y.sum().backward()
        results.append(x.grad)
    assert_close_values(results[1], results[0])


# -- saved tensors after backward ----------------------------------------------------------
def test_a_saved_tensor_read_after_backward_raises_torchs_error():
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * x
        y.sum().backward()
        return y.grad_fn._saved_self
    same_error(program)
