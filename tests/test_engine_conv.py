"""Convolution, pooling, padding, layer norm and activations against torch 2.13: values, shapes,
grad_fn names, gradients of every input, module reprs and torch's initial weights for a seed, the
errors, and a small LeNet trained the same on both. (The losses are in test_engine_losses.py.)"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from engine_support import (
    ENGINE, grads_and_chain, make_array, node_chain, same_error, same_program, seeds, sum_bound,
)

# float64 throughout the value checks: torch's oneDNN convolution sums in another order than NumPy's
# BLAS, so each output, a K-term dot product (K = C·kH·kW <= 4·3·3 = 36 here), may differ by
# sum_bound(float64, K, Σ|x w|): within TOLERANCE's atol, which allows 64 terms of 9 (|x|, |w| <= 3)


conv_cases = st.fixed_dictionaries({
    "n": st.integers(1, 2), "groups": st.sampled_from([1, 2]), "c": st.integers(1, 2), "o": st.integers(1, 2),
    "h": st.integers(4, 7), "w": st.integers(4, 7), "kh": st.integers(1, 3), "kw": st.integers(1, 3),
    "stride": st.sampled_from([1, 2, (1, 2)]), "padding": st.sampled_from([0, 1, (1, 0)]),
    "dilation": st.sampled_from([1, 2]), "bias": st.booleans(), "batched": st.booleans()})


@ENGINE
@given(case=conv_cases, seed=seeds)
def test_conv2d_values_and_gradients(case, seed):
    g = case["groups"]
    in_channels, out_channels = case["c"] * g, case["o"] * g
    assume((case["h"] + 2) >= case["dilation"] * (case["kh"] - 1) + 1)
    assume((case["w"] + 2) >= case["dilation"] * (case["kw"] - 1) + 1)
    x = make_array(seed, (case["n"], in_channels, case["h"], case["w"]), "float64")
    if not case["batched"]:
        x = x[0]
    weight = make_array(seed + 1, (out_channels, case["c"], case["kh"], case["kw"]), "float64")
    bias = make_array(seed + 2, (out_channels,), "float64")
    kwargs = dict(stride=case["stride"], padding=case["padding"], dilation=case["dilation"], groups=g)

    def program(lib, x, w, *b):
        return lib.nn.functional.conv2d(x, w, b[0] if b else None, **kwargs)
    try:
        grads_and_chain(program, x, weight, *([bias] if case["bias"] else []))
    except RuntimeError as error:  # a kernel larger than the padded input: both must refuse alike
        assert "Kernel size can't be greater" in str(error) or "Output size is too small" in str(error)
        same_error(lambda lib: program(lib, lib.tensor(x), lib.tensor(weight)))


def test_conv2d_padding_same_and_valid_and_errors():
    x, w = make_array(1, (1, 2, 6, 5), "float64"), make_array(2, (3, 2, 3, 2), "float64")
    for padding in ("same", "valid"):
        grads_and_chain(lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding=padding, dilation=(1, 2)), x, w)
    for bad in (lambda lib: lib.nn.functional.conv2d(lib.ones(1, 3, 5, 5), lib.ones(2, 2, 3, 3)),
                lambda lib: lib.nn.functional.conv2d(lib.ones(1, 2, 2, 2), lib.ones(2, 2, 3, 3)),
                lambda lib: lib.nn.functional.conv2d(lib.ones(2, 5, 5), lib.ones(2, 2, 3, 3, dtype=lib.float64)),
                lambda lib: lib.nn.functional.conv2d(lib.ones(5, 5), lib.ones(1, 1, 3, 3)),
                lambda lib: lib.nn.functional.conv2d(lib.ones(1, 1, 5, 5), lib.ones(1, 1, 3, 3), stride=2, padding="same")):
        same_error(bad, prefix=True)


pool_cases = st.fixed_dictionaries({
    "kernel": st.sampled_from([2, 3, (2, 3)]), "stride": st.sampled_from([None, 1, 2, (2, 1)]),
    "padding": st.sampled_from([0, 1]), "dilation": st.sampled_from([1, 2]), "ceil_mode": st.booleans(),
    "count_include_pad": st.booleans(), "h": st.integers(4, 8), "w": st.integers(4, 8), "batched": st.booleans()})


@ENGINE
@given(case=pool_cases, seed=seeds)
def test_max_and_avg_pool2d_values_indices_and_gradients(case, seed):
    x = make_array(seed, (2, 2, case["h"], case["w"]), "float64")
    if not case["batched"]:
        x = x[0]
    common = dict(kernel_size=case["kernel"], stride=case["stride"], padding=case["padding"], ceil_mode=case["ceil_mode"])

    def max_pool(lib, t):
        return lib.nn.functional.max_pool2d(t, dilation=case["dilation"], return_indices=True, **common)

    def avg_pool(lib, t):
        return lib.nn.functional.avg_pool2d(t, count_include_pad=case["count_include_pad"], **common)
    for program in (max_pool, avg_pool):
        try:
            grads_and_chain(program, x)
        except RuntimeError:
            same_error(lambda lib: program(lib, lib.tensor(x)))
            continue
    outcome = same_program(lambda lib: max_pool(lib, lib.tensor(x))[1] if _pools(lib, max_pool, x) else None)
    assert outcome is None or outcome[0] is None or outcome[0].dtype.is_floating_point is False


def _pools(lib, program, x):
    try:
        program(lib, lib.tensor(x))
        return True
    except RuntimeError:
        return False


def test_pooling_errors():
    for bad in (lambda lib: lib.nn.functional.max_pool2d(lib.ones(1, 1, 2, 2), 3),
                lambda lib: lib.nn.functional.max_pool2d(lib.ones(1, 1, 4, 4), 2, padding=2),
                lambda lib: lib.nn.functional.avg_pool2d(lib.ones(1, 1, 4, 4), 2, padding=2),
                lambda lib: lib.nn.functional.max_pool2d(lib.ones(4), 2)):
        same_error(bad, prefix=True)


@pytest.mark.parametrize("pad,mode", [((1, 2), "constant"), ((1, 1, 2, 0), "constant"), ((-1, 2), "constant"),
                                      ((1, 1, 2, 0), "reflect"), ((2, 1), "reflect"), ((2, 1, 1, 1), "replicate"),
                                      ((0, 0, 1, 1, 1, 0), "constant"), ((1, 1), "replicate")])
def test_pad_values_gradients_and_node_names(pad, mode):
    # reflect and replicate pad the last len(pad) // 2 dims of a batch of channels
    shape = (2, 3, 4, 5) if mode == "constant" or len(pad) == 4 else (3, 4, 5)
    x = make_array(4, shape, "float64")
    grads_and_chain(lambda lib, t: lib.nn.functional.pad(t, pad, mode=mode), x)
    same_program(lambda lib: lib.nn.functional.pad(lib.arange(6.0).view(2, 3), (1, 1), value=-7.0))


def test_pad_errors():
    for bad in (lambda lib: lib.nn.functional.pad(lib.ones(2, 3), (1,)),
                lambda lib: lib.nn.functional.pad(lib.ones(3), (1, 1, 1, 1)),
                lambda lib: lib.nn.functional.pad(lib.ones(1, 2, 3), (3, 0), mode="reflect"),
                lambda lib: lib.nn.functional.pad(lib.ones(1, 2, 3, 4), (1, 1), mode="reflect")):
        same_error(bad, prefix=True)


@ENGINE
@given(seed=seeds, shape=st.sampled_from([(3, 4), (2, 3, 4), (2, 2, 3)]), normalized=st.integers(1, 2),
       affine=st.booleans(), name=st.sampled_from(["float32", "float64"]))
def test_layer_norm_values_and_gradients(seed, shape, normalized, affine, name):
    normalized_shape = shape[-normalized:]
    x = make_array(seed, shape, name)
    w, b = make_array(seed + 1, normalized_shape, name), make_array(seed + 2, normalized_shape, name)
    if affine:
        grads_and_chain(lambda lib, x, w, b: lib.nn.functional.layer_norm(x, normalized_shape, w, b), x, w, b)
    else:
        grads_and_chain(lambda lib, x: lib.nn.functional.layer_norm(x, normalized_shape, eps=1e-3), x)
    same_error(lambda lib: lib.nn.functional.layer_norm(lib.ones(3, 4), (3,)))


@pytest.mark.parametrize("name,args", [("leaky_relu", dict(negative_slope=0.2)), ("gelu", {}),
                                       ("gelu", dict(approximate="tanh")), ("silu", {}), ("elu", dict(alpha=0.7)),
                                       ("softplus", dict(beta=2.0, threshold=3.0)), ("hardtanh", dict(min_val=-0.5, max_val=0.5)),
                                       ("relu6", {}), ("logsigmoid", {})])
def test_activations_values_and_gradients(name, args):
    x = np.array([[-3.0, -0.5, 0.0], [0.25, 1.5, 7.0]])
    grads_and_chain(lambda lib, t: getattr(lib.nn.functional, name)(t, **args), x)
    grads_and_chain(lambda lib, t: getattr(lib.nn.functional, name)(t, **args), x.astype("float32"))


@pytest.mark.parametrize("make", [
    lambda nn: nn.Conv2d(1, 6, 5), lambda nn: nn.Conv2d(3, 6, (3, 2), stride=2, padding=1, groups=3, bias=False),
    lambda nn: nn.Conv2d(2, 2, 3, padding="same", dilation=2, padding_mode="reflect"),
    lambda nn: nn.Conv2d(2, 4, 3, padding=1, padding_mode="replicate"),
    lambda nn: nn.MaxPool2d(2, 2), lambda nn: nn.MaxPool2d(3, ceil_mode=True), lambda nn: nn.AvgPool2d(2),
    lambda nn: nn.AvgPool2d(3, 1, 1, ceil_mode=True, count_include_pad=False), lambda nn: nn.LayerNorm(4),
    lambda nn: nn.LayerNorm((2, 4), elementwise_affine=False), lambda nn: nn.BatchNorm2d(2),
    lambda nn: nn.LeakyReLU(0.2, True), lambda nn: nn.GELU(), lambda nn: nn.SiLU(), lambda nn: nn.ELU(),
    lambda nn: nn.Softplus(), lambda nn: nn.Hardtanh(), lambda nn: nn.ReLU6(), lambda nn: nn.LogSigmoid(),
])
def test_modules_print_initialise_and_run_like_torch(make):
    def program(lib):
        lib.manual_seed(0)
        module = make(lib.nn)
        x = lib.randn(2, 2, 6, 4) if "Conv" in type(module).__name__ or "Pool" in type(module).__name__ \
            or "BatchNorm2d" in type(module).__name__ else lib.randn(2, 2, 4)
        if type(module).__name__ == "Conv2d" and module.in_channels != 2:
            x = lib.randn(2, module.in_channels, 7, 6)
        y = module(x)
        return (repr(module), [(n, p.clone()) for n, p in module.named_parameters()],
                [n for n, _ in module.named_buffers()], y, node_chain(y.grad_fn)[0] if y.grad_fn else None)
    same_program(program)


def test_conv_modules_refuse_what_torch_refuses():
    for bad in (lambda lib: lib.nn.Conv2d(3, 4, 3, groups=2), lambda lib: lib.nn.Conv2d(4, 3, 3, groups=2),
                lambda lib: lib.nn.Conv2d(2, 2, 3, stride=2, padding="same"),
                lambda lib: lib.nn.BatchNorm2d(2)(lib.ones(2, 2, 3))):
        same_error(bad)
    # (torch lists the modes from a set, in an order that changes from run to run)
    assert same_program(lambda lib: lib.nn.Conv2d(2, 2, 3, padding_mode="mirror"), may_raise=ValueError) is None


def test_lenet_trains_the_same_on_both():
    # the 60-minute blitz's network: conv, pool, conv, pool, three linear layers; SGD with momentum
    def program(lib):
        lib.manual_seed(0)
        nn, F = lib.nn, lib.nn.functional

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1, self.pool, self.conv2 = nn.Conv2d(3, 6, 5), nn.MaxPool2d(2, 2), nn.Conv2d(6, 16, 5)
                self.fc1, self.fc2, self.fc3 = nn.Linear(16 * 5 * 5, 120), nn.Linear(120, 84), nn.Linear(84, 10)

            def forward(self, x):
                x = self.pool(F.relu(self.conv1(x)))
                x = self.pool(F.relu(self.conv2(x)))
                x = lib.flatten(x, 1)
                return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))
        net = Net().double()
        optimizer = lib.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
        images, labels = lib.randn(8, 3, 32, 32, dtype=lib.float64), lib.randint(0, 10, (8,))
        losses = []
        for _ in range(3):
            optimizer.zero_grad()
            loss = nn.CrossEntropyLoss()(net(images), labels)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        return losses, net.conv1.weight.grad, net.fc3.bias
    # fc1 sums 400 terms (more than TOLERANCE's 64): compared at its own bound, in float64, |x| <= 4,
    # |w| <= 1/sqrt(fan_in) = 0.2, through 3 steps of SGD with momentum (at most 10x a step)
    same_program(program, tolerance=dict(rtol=0, atol=3 * 10 * sum_bound("float64", 400, 400 * 4 * 0.2)))
