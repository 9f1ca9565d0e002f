"""nn and optim: the same architecture and training code on torch and on reftorch."""
from __future__ import annotations

import re
from collections import OrderedDict

import numpy as np
import pytest
import torch

import reftorch
from engine_support import UNIT_ROUNDOFF, sum_bound

LIBS = [torch, reftorch]


def build(lib, kind):
    nn = lib.nn
    if kind == "mlp":
        return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    if kind == "nested":
        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(nn.Linear(3, 3), nn.Tanh())
                self.heads = nn.ModuleList([nn.Linear(3, 2), nn.Linear(3, 1, bias=False)])
                self.table = nn.ModuleDict({"b": nn.Sigmoid(), "a": nn.Linear(2, 2)})
                self.scales = nn.ParameterList([nn.Parameter(lib.ones(2)), nn.Parameter(lib.zeros(1))])
                self.extra = nn.ParameterDict({"z": nn.Parameter(lib.ones(3))})
                self.register_buffer("running", lib.zeros(3))
                self.register_buffer("scratch", lib.zeros(1), persistent=False)
                self.plain = lib.ones(2)  # a plain tensor attribute is not registered

            def forward(self, x):
                return self.heads[0](self.body(x))
        return nn.Sequential(OrderedDict(first=Block(), drop=nn.Dropout(0.25), flat=nn.Flatten()))
    raise ValueError(kind)


@pytest.mark.parametrize("kind", ["mlp", "nested"])
def test_module_trees_match(kind):
    t, r = build(torch, kind), build(reftorch, kind)
    assert [n for n, _ in t.named_parameters()] == [n for n, _ in r.named_parameters()]
    assert [tuple(p.shape) for p in t.parameters()] == [tuple(p.shape) for p in r.parameters()]
    assert list(t.state_dict()) == list(r.state_dict())
    assert [n for n, _ in t.named_buffers()] == [n for n, _ in r.named_buffers()]
    assert [n for n, _ in t.named_modules()] == [n for n, _ in r.named_modules()]
    assert [type(m).__name__ for m in t.children()] == [type(m).__name__ for m in r.children()]
    assert sum(p.numel() for p in t.parameters()) == sum(p.numel() for p in r.parameters())
    assert repr(t) == repr(r)


def test_unknown_attribute_raises_attribute_error_like_torch():
    for lib in LIBS:
        with pytest.raises(AttributeError, match="'Linear' object has no attribute 'wieght'"):
            lib.nn.Linear(2, 2).wieght


@pytest.mark.parametrize("lib", LIBS, ids=["torch", "reftorch"])
def test_registration_errors(lib):
    nn = lib.nn

    class Forgot(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(lib.ones(1))
    with pytest.raises(AttributeError, match="cannot assign parameters before Module.__init__"):
        Forgot()
    m = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="cannot assign .* as parameter 'weight'"):
        m.weight = lib.ones(2, 2)
    with pytest.raises(KeyError, match="attribute 'training' already exists"):
        m.register_parameter("training", nn.Parameter(lib.ones(1)))
    with pytest.raises(NotImplementedError, match='missing the required "forward" function'):
        nn.Module()(lib.ones(1))


def test_load_state_dict_round_trip_and_errors():
    for lib in LIBS:
        a, b = build(lib, "mlp"), build(lib, "mlp")
        b.load_state_dict(a.state_dict())
        assert all(lib.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
        state = a.state_dict()
        state["extra.weight"] = state.pop("0.weight")
        with pytest.raises(RuntimeError, match=re.escape('Missing key(s) in state_dict: "0.weight"')):
            b.load_state_dict(state)
        result = b.load_state_dict(state, strict=False)
        assert result.missing_keys == ["0.weight"] and result.unexpected_keys == ["extra.weight"]


def test_state_dict_values_are_detached_and_share_memory():
    for lib in LIBS:
        m = lib.nn.Linear(2, 2)
        w = m.state_dict()["weight"]
        assert not w.requires_grad and w.data_ptr() == m.weight.data_ptr()


def test_train_eval_requires_grad_and_zero_grad():
    for lib in LIBS:
        m = build(lib, "nested")
        m.eval()
        assert not any(sub.training for sub in m.modules())
        m.train()
        m.requires_grad_(False)
        assert sum(p.numel() for p in m.parameters() if p.requires_grad) == 0
        m.requires_grad_(True)
        m[0](lib.ones(5, 3)).sum().backward()
        m.zero_grad()
        assert all(p.grad is None for p in m.parameters())


def test_linear_records_addmm_with_transposed_weight_like_torch():
    names = []
    for lib in LIBS:
        layer = lib.nn.Linear(3, 2)
        out = layer(lib.ones(4, 3))
        fn = out.grad_fn
        names.append((type(fn).__name__, sorted(type(n).__name__ for n, _ in fn.next_functions if n)))
    assert names[0] == names[1] == ("AddmmBackward0", ["AccumulateGrad", "TBackward0"])


def copy_params(src, dst):
    with reftorch.no_grad():
        for p, q in zip(src.parameters(), dst.parameters()):
            q.copy_(reftorch.tensor(p.detach().numpy()))


@pytest.mark.parametrize("optimizer", ["sgd", "sgd_momentum_wd", "adam"])
def test_training_steps_match_torch(optimizer):
    """Same weights, same data, same optimizer: the same parameters after 5 steps."""
    torch.manual_seed(0)
    t_model = build(torch, "mlp")
    r_model = build(reftorch, "mlp")
    copy_params(t_model, r_model)
    x = np.random.default_rng(0).standard_normal((16, 4)).astype(np.float32)
    y = np.random.default_rng(1).integers(0, 3, 16)

    def make(lib, model):
        if optimizer == "sgd":
            return lib.optim.SGD(model.parameters(), lr=0.1)
        if optimizer == "sgd_momentum_wd":
            return lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=True)
        return lib.optim.Adam(model.parameters(), lr=0.01)

    for lib, model in ((torch, t_model), (reftorch, r_model)):
        model.double()  # (float64: see the bound below)
        opt = make(lib, model)
        data, target = lib.tensor(x, dtype=lib.float64), lib.tensor(y)
        for _ in range(5):
            opt.zero_grad()
            loss = lib.nn.CrossEntropyLoss()(model(data), target)
            loss.backward()
            opt.step()
    # A weight's gradient is a sum over the 16 rows (|x| <= 4, |dloss/dout| <= 1/16 each), so the two
    # libraries' orders differ by at most sum_bound(float64, 16, 16·4/16) = 1.3e-14 per step. Adam
    # divides by sqrt(v) + eps and so may amplify that by lr / eps = 1e6 where a gradient is near 0:
    # 1.3e-8 per step, 6.7e-8 over the 5 steps (float32 would give 0.4 there: no useful bound)
    bound = 5 * 0.01 / 1e-8 * sum_bound("float64", 16, 4)
    for p, q in zip(t_model.parameters(), r_model.parameters()):
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=0, atol=bound)


def test_losses_and_their_gradients_match_torch():
    rng = np.random.default_rng(3)
    logits = rng.standard_normal((6, 4)).astype(np.float32)
    target = rng.integers(0, 4, 6)
    goal = rng.standard_normal((6, 4)).astype(np.float32)
    results = []
    for lib in LIBS:
        z = lib.tensor(logits, requires_grad=True)
        ce = lib.nn.functional.cross_entropy(z, lib.tensor(target))
        mse = lib.nn.functional.mse_loss(z, lib.tensor(goal))
        (ce + mse).backward()
        results.append((ce.item(), mse.item(), z.grad.numpy().copy(), type(ce.grad_fn).__name__,
                        type(mse.grad_fn).__name__))
    assert results[0][3:] == results[1][3:] == ("NllLossBackward0", "MseLossBackward0")
    # float32: cross-entropy is a log-sum-exp over 4 classes (a few ulp, condition <= 3) and a mean over
    # 6 rows, mse a mean over 24 squares: relative error within (2·23 + 8·2·3)·u of each other; each
    # gradient element is a softmax minus one-hot over 6 plus 2·diff/24, a handful of roundings of
    # numbers below 1: within 16·u absolutely
    u = UNIT_ROUNDOFF["float32"]
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=(2 * 23 + 8 * 2 * 3) * u)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=(2 * 23 + 8 * 2 * 3) * u)
    np.testing.assert_allclose(results[1][2], results[0][2], rtol=0, atol=16 * u)


def test_default_initialisation_bounds_match_torch():
    for lib in LIBS:
        lib.manual_seed(0)
        w = lib.nn.Linear(100, 50).weight
        assert w.abs().max().item() <= 0.1 + 1e-6
        assert w.abs().max().item() > 0.09  # uses the whole ±1/sqrt(fan_in) range


def test_to_dtype_and_sim_device_keep_parameter_objects():
    m = build(reftorch, "mlp")
    params = list(m.parameters())
    m.to(reftorch.float64)
    assert all(p.dtype == reftorch.float64 for p in m.parameters())
    m.to("sim")
    assert [id(p) for p in m.parameters()] == [id(p) for p in params]
    assert all(p.device.type == "sim" for p in m.parameters())
    out = m(reftorch.ones(2, 4, dtype=reftorch.float64, device="sim"))
    assert out.device == reftorch.device("sim:0")


def test_printouts_match_torch_for_lists_and_load_results():
    outputs = []
    for lib in LIBS:
        nn = lib.nn
        m = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 2)])
        a = nn.Linear(2, 2)
        outputs.append((repr(m), repr(nn.ModuleList()), repr(a.load_state_dict(a.state_dict())),
                        repr(a.load_state_dict({"weight": a.weight}, strict=False))))
    assert outputs[0] == outputs[1]


def test_forgetting_super_init_fails_on_call_like_torch():
    for lib in LIBS:
        class M(lib.nn.Module):
            def __init__(self):
                self.k = 1

            def forward(self, x):
                return x
        with pytest.raises(AttributeError, match="'M' object has no attribute '_backward_hooks'"):
            M()(lib.ones(1))
