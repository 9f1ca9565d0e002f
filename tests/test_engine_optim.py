"""Optimizers and the learning-rate schedules, against torch: the same parameter trajectories,
state_dicts, defaults, errors, and the rates (and warnings) schedulers give; an optimizer's
state_dict saved and loaded into a fresh one continues as the uninterrupted run (SGD, Adam)."""
from __future__ import annotations

import copy
import importlib

import numpy as np
import pytest
import torch

import reftorch
from reftorch import dispatch
from engine_support import (
    LIBS, MLP_INPUT, assert_close_values, assert_same, same_error, same_program, same_warnings, seeded_mlp,
)

# name -> keyword sets that switch each branch of its update on
OPTIMIZERS = {
    "RMSprop": [{}, {"momentum": 0.9, "centered": True, "weight_decay": 0.1}, {"maximize": True, "alpha": 0.9}],
    "Adagrad": [{}, {"lr_decay": 0.1, "weight_decay": 0.05, "initial_accumulator_value": 0.5}],
    "Adadelta": [{}, {"rho": 0.5, "weight_decay": 0.1, "lr": 0.5}],
    "Adamax": [{}, {"weight_decay": 0.1, "maximize": True}],
    "NAdam": [{}, {"weight_decay": 0.1}, {"weight_decay": 0.1, "decoupled_weight_decay": True}],
    "RAdam": [{}, {"weight_decay": 0.1, "decoupled_weight_decay": True}],
    "ASGD": [{}, {"t0": 2, "lambd": 0.01, "weight_decay": 0.1}],
    "Rprop": [{}, {"etas": (0.3, 1.5), "step_sizes": (1e-3, 0.05), "maximize": True}],
}
CASES = [(name, kwargs) for name, options in OPTIMIZERS.items() for kwargs in options]


def _train(lib, name, kwargs, dtype, steps=8):
    """A small regression trained for a few steps: the parameters and losses after each step, the
    optimizer's state_dict, and the optimizer."""
    gen = lib.Generator().manual_seed(3)
    w = lib.randn(3, 2, generator=gen, dtype=dtype).requires_grad_()
    b = lib.zeros(2, dtype=dtype, requires_grad=True)
    x = lib.randn(5, 3, generator=gen, dtype=dtype)
    y = lib.randn(5, 2, generator=gen, dtype=dtype)
    optimizer = getattr(lib.optim, name)([{"params": [w]}, {"params": [b], "lr": 0.05}], **kwargs)
    trace = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = ((x @ w + b - y) ** 2).mean()
        loss.backward()
        optimizer.step()
        trace.append((loss.item(), w.detach().clone(), b.detach().clone()))
    return trace, optimizer


@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{i}" for n, opts in OPTIMIZERS.items() for i in range(len(opts))])
def test_optimizer_steps_match_torch_in_float64(name, kwargs):
    theirs, mine = (_train(lib, name, kwargs, lib.float64)[0] for lib in LIBS)
    for step, (t, m) in enumerate(zip(theirs, mine)):
        assert abs(m[0] - t[0]) <= 1e-12 * max(1.0, abs(t[0])), f"loss at step {step}"
        for a, e in zip(m[1:], t[1:]):
            assert torch.allclose(torch.from_numpy(a.numpy()), e, rtol=1e-12, atol=1e-13), f"step {step}"


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_steps_match_torch_in_float32(name):
    theirs, mine = (_train(lib, name, {}, lib.float32)[0] for lib in LIBS)
    for (_, tw, tb), (_, mw, mb) in zip(theirs, mine):
        assert_same(mw, tw)
        assert_same(mb, tb)


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_state_dict_defaults_and_repr_are_torchs(name):
    results = []
    for lib in LIBS:
        _, optimizer = _train(lib, name, {}, lib.float32, steps=2)
        sd = optimizer.state_dict()
        results.append((sd["param_groups"], {k: sorted(v) for k, v in sd["state"].items()},
                        {k: {n: (type(v).__name__, v.dtype if hasattr(v, "dtype") else None, tuple(getattr(v, "shape", ())))
                             for n, v in s.items()} for k, s in sd["state"].items()},
                        repr(optimizer), type(optimizer.state).__name__, optimizer.defaults))
    (tg, tk, tt, tr, ts, td), (mg, mk, mt, mr, ms, md) = results
    assert (mg, mk, mr, ms, md) == (tg, tk, tr, ts, td)
    assert {k: {n: (c, str(d), s) for n, (c, d, s) in v.items()} for k, v in mt.items()} == \
        {k: {n: (c, str(d), s) for n, (c, d, s) in v.items()} for k, v in tt.items()}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_load_state_dict_resumes_the_same_trajectory(name):
    def program(lib):
        trace, optimizer = _train(lib, name, {}, lib.float64, steps=3)
        saved = copy.deepcopy(optimizer.state_dict())
        w = lib.nn.Parameter(trace[-1][1].clone())
        b = lib.nn.Parameter(trace[-1][2].clone())
        resumed = getattr(lib.optim, name)([{"params": [w]}, {"params": [b], "lr": 0.05}])
        resumed.load_state_dict(saved)
        (w.sum() * 2 + b.pow(2).sum()).backward()
        resumed.step()
        return w.detach(), b.detach(), resumed.param_groups[1]["lr"]
    theirs, mine = (program(lib) for lib in LIBS)
    assert_same(mine, theirs)


@pytest.mark.parametrize("name,bad", [("RMSprop", {"alpha": -1}), ("RMSprop", {"momentum": -0.1}),
                                      ("Adagrad", {"lr_decay": -1}), ("Adagrad", {"initial_accumulator_value": -1}),
                                      ("Adadelta", {"rho": 1.5}), ("Adamax", {"betas": (1.0, 0.9)}),
                                      ("NAdam", {"momentum_decay": -1}), ("RAdam", {"eps": -1}),
                                      ("ASGD", {"lr": -1}), ("RMSprop", {"verbose": True}),
                                      ("Rprop", {"etas": (0.5, 1.0)}), ("Rprop", {"lr": -1})])
def test_invalid_hyperparameters_raise_torchs_errors(name, bad):
    same_error(lambda lib: getattr(lib.optim, name)([lib.ones(1, requires_grad=True)], **bad))



def _steps_from_given_gradients(lib, name, kwargs, dtype_name, steps=20):
    """Steps from the same gradients in both libraries (no forward pass, whose float32 sums may be
    added in another order): the parameters after each step, as NumPy arrays."""
    w = lib.from_numpy(np.linspace(-1, 1, 35).reshape(7, 5).astype(dtype_name)).requires_grad_()
    b = lib.zeros(5, dtype=getattr(lib, dtype_name), requires_grad=True)
    optimizer = getattr(lib.optim, name)([{"params": [w]}, {"params": [b], "lr": 0.05}], foreach=False,
                                         **{"lr": 0.1, **kwargs} if name == "SGD" else kwargs)
    trace = []
    for step in range(steps):
        rng = np.random.default_rng(step)
        optimizer.zero_grad()
        w.grad = lib.from_numpy(rng.standard_normal((7, 5)).astype(dtype_name))
        b.grad = lib.from_numpy(rng.standard_normal(5).astype(dtype_name))
        optimizer.step()
        trace.append((w.detach().numpy().copy(), b.detach().numpy().copy()))
    return trace


def _assert_same_trajectory_bits(name, kwargs, dtype_name):
    theirs, mine = (_steps_from_given_gradients(lib, name, kwargs, dtype_name) for lib in LIBS)
    for step, (t, m) in enumerate(zip(theirs, mine)):
        for a, e in zip(m, t):
            assert a.tobytes() == e.tobytes(), f"step {step}: {int((a != e).sum())} values differ"


BITWISE = [("SGD", {}), ("SGD", {"momentum": 0.9, "nesterov": True, "weight_decay": 0.1}),
           ("SGD", {"momentum": 0.9, "dampening": 0.3, "maximize": True}), ("Adamax", {}),
           ("Adamax", {"weight_decay": 0.1, "maximize": True}), ("ASGD", {"t0": 2, "lambd": 0.01, "weight_decay": 0.1}),
           ("Rprop", {}), ("Rprop", {"etas": (0.3, 1.5), "step_sizes": (1e-3, 0.05), "maximize": True})]


@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
@pytest.mark.parametrize("name,kwargs", BITWISE, ids=[f"{n}-{i}" for i, (n, _) in enumerate(BITWISE)])
def test_optimizers_without_a_square_root_give_torchs_bits(name, kwargs, dtype_name):
    """torch's single-tensor updates, rounding for rounding: its add(alpha=), addcmul and lerp kernels
    fuse a product and a sum where the CPU build has FMA, and so does reftorch."""
    _assert_same_trajectory_bits(name, kwargs, dtype_name)


@pytest.fixture
def torchs_square_root(monkeypatch):
    """torch's CPU sqrt is MKL's vectorised one, not correctly rounded (float32: 18% of values 1 ulp
    off NumPy's): reftorch keeps the exact root, so to compare the rest of an update bit for bit the
    square roots are taken from torch for the test."""
    def sqrt(array, out=None):
        values = torch.from_numpy(np.ascontiguousarray(array)).sqrt().numpy()
        if out is None:
            return values
        out[...] = values
        return out
    monkeypatch.setitem(dispatch._kernels["cpu"], "sqrt", sqrt)


@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
@pytest.mark.parametrize("name,kwargs", CASES + [("Adam", {}), ("Adam", {"amsgrad": True, "weight_decay": 0.1}),
                                                 ("AdamW", {})], ids=lambda v: str(v))
def test_square_root_optimizers_round_as_torch_around_the_root(name, kwargs, dtype_name, torchs_square_root):
    _assert_same_trajectory_bits(name, kwargs, dtype_name)



def test_step_hooks_run_around_every_step_as_torch():
    def program(lib):
        w = lib.nn.Parameter(lib.ones(2))
        optimizer = lib.optim.Adagrad([w], lr=0.5)
        module = importlib.import_module(f"{lib.__name__}.optim.optimizer")
        seen = []

        def pre(opt, args, kwargs):
            seen.append(("pre", type(opt).__name__, len(args), sorted(kwargs)))

        def halve_closure(opt, args, kwargs):  # a pre-hook may hand step() other arguments
            return args, {"closure": lambda: seen.append("closure") or 2.0}
        handles = [optimizer.register_step_pre_hook(pre), optimizer.register_step_pre_hook(halve_closure),
                   optimizer.register_step_post_hook(lambda opt, args, kwargs: seen.append(("post", sorted(kwargs)))),
                   module.register_optimizer_step_pre_hook(lambda opt, args, kwargs: seen.append("global pre")),
                   module.register_optimizer_step_post_hook(lambda opt, args, kwargs: seen.append("global post"))]
        try:
            w.grad = lib.ones(2)
            loss = optimizer.step()
            handles[0].remove()
            optimizer.step()
        finally:
            for handle in handles:
                handle.remove()
        optimizer.step()
        return seen, loss, w.detach()
    theirs, mine = (program(lib) for lib in LIBS)
    assert_same(mine, theirs)


def test_a_set_of_parameters_is_refused_as_torch():
    same_error(lambda lib: lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=0.1).add_param_group(
        {"params": {lib.nn.Parameter(lib.ones(1))}}))


def _lbfgs_fit(lib, line_search_fn, steps=3, **options):
    """A small tanh network fitted by L-BFGS in float64: the losses step() returns, the weights, and
    what L-BFGS counted (closure calls, iterations, pairs kept) and keeps in its state."""
    rng = np.random.default_rng(0)
    x = lib.from_numpy(rng.standard_normal((30, 4)))
    y = lib.sin(x @ lib.from_numpy(rng.standard_normal((4, 1))))
    gen = lib.Generator().manual_seed(0)
    w1 = lib.randn(4, 8, generator=gen, dtype=lib.float64).requires_grad_()
    w2 = lib.randn(8, 1, generator=gen, dtype=lib.float64).requires_grad_()
    optimizer = lib.optim.LBFGS([w1, w2], line_search_fn=line_search_fn, **options)

    def closure():
        optimizer.zero_grad()
        loss = ((lib.tanh(x @ w1) @ w2 - y) ** 2).mean()
        loss.backward()
        return loss
    losses = [optimizer.step(closure).item() for _ in range(steps)]
    state = optimizer.state[w1]
    return losses, w1.detach().numpy(), (state["func_evals"], state["n_iter"], len(state["old_dirs"]), sorted(state),
                                          optimizer.param_groups[0]["max_eval"])


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
@pytest.mark.parametrize("options", [{}, {"history_size": 3, "max_iter": 7}], ids=["defaults", "short history"])
def test_lbfgs_fits_as_torch(line_search_fn, options):
    """The same iterations, closure calls and line-search steps as torch's, and the same weights up to
    the rounding of its dot products (float64; float32 L-BFGS amplifies a 1-ulp difference)."""
    (t_losses, t_w, t_counts), (m_losses, m_w, m_counts) = (_lbfgs_fit(lib, line_search_fn, **options) for lib in LIBS)
    assert m_counts == t_counts
    np.testing.assert_allclose(m_losses, t_losses, rtol=1e-9)
    np.testing.assert_allclose(m_w, t_w, atol=1e-7)


def test_lbfgs_refuses_what_torch_refuses():
    def weights(lib):
        return [lib.nn.Parameter(lib.ones(2))]
    same_error(lambda lib: lib.optim.LBFGS([{"params": weights(lib)}, {"params": weights(lib)}]))
    same_error(lambda lib: lib.optim.LBFGS(weights(lib), lr=-1))

    def unknown_line_search(lib):
        w = weights(lib)
        optimizer = lib.optim.LBFGS(w, line_search_fn="backtracking")
        optimizer.step(lambda: (w[0] ** 2).sum().backward() or (w[0] ** 2).sum())
    same_error(unknown_line_search)

# -- schedulers -----------------------------------------------------------------------------
def _opt(lib, lr=0.1, **kwargs):
    return lib.optim.SGD([lib.nn.Parameter(lib.zeros(1)), ], lr=lr, momentum=0.9, **kwargs)


SCHEDULES = {
    "MultiStepLR": lambda s, o: s.MultiStepLR(o, milestones=[2, 5, 5, 8], gamma=0.5),
    "LinearLR": lambda s, o: s.LinearLR(o, start_factor=0.25, total_iters=4),
    "ConstantLR": lambda s, o: s.ConstantLR(o, factor=0.5, total_iters=3),
    "PolynomialLR": lambda s, o: s.PolynomialLR(o, total_iters=6, power=2.0),
    "MultiplicativeLR": lambda s, o: s.MultiplicativeLR(o, lambda epoch: 0.9),
    "ExponentialLR": lambda s, o: s.ExponentialLR(o, gamma=0.8),
    "LambdaLR": lambda s, o: s.LambdaLR(o, lambda epoch: 1 / (epoch + 1)),
    "CosineAnnealingWarmRestarts": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.001),
    "SequentialLR": lambda s, o: s.SequentialLR(o, [s.LinearLR(o, start_factor=0.1, total_iters=3),
                                                    s.ExponentialLR(o, gamma=0.9)], milestones=[3]),
    "ChainedScheduler": lambda s, o: s.ChainedScheduler([s.ExponentialLR(o, gamma=0.9),
                                                         s.MultiStepLR(o, milestones=[3], gamma=0.1)]),
    "OneCycleLR": lambda s, o: s.OneCycleLR(o, max_lr=1.0, total_steps=12),
    "CosineAnnealingLR": lambda s, o: s.CosineAnnealingLR(o, T_max=4),
    "CyclicLR": lambda s, o: s.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3, mode="triangular2"),
}


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_schedule_rates_and_state_dict_match_torch(name):
    def program(lib):
        optimizer = _opt(lib)
        scheduler = SCHEDULES[name](lib.optim.lr_scheduler, optimizer)
        rates = [scheduler.get_last_lr()]
        for _ in range(11):
            optimizer.step()
            scheduler.step()
            rates.append(scheduler.get_last_lr() + [optimizer.param_groups[0]["momentum"]])
        state = scheduler.state_dict()
        return rates, sorted(state), isinstance(scheduler, lib.optim.lr_scheduler.LRScheduler)
    theirs, mine = (program(lib) for lib in LIBS)
    assert mine == theirs



class _Decay:
    """A scale function that is an object: CyclicLR's state_dict keeps its attributes."""

    def __init__(self, rate):
        self.rate = rate

    def __call__(self, step):
        return self.rate ** step


@pytest.mark.parametrize("case", ["exp_range with Adam's beta1", "a scale function object", "uneven cycle, no momentum"])
def test_cyclic_lr_moves_rate_and_momentum_as_torch(case):
    def program(lib):
        p = lib.nn.Parameter(lib.zeros(1))
        s = lib.optim.lr_scheduler
        if case == "exp_range with Adam's beta1":
            optimizer = lib.optim.Adam([p], lr=0.1)
            scheduler = s.CyclicLR(optimizer, base_lr=[0.01], max_lr=0.1, step_size_up=2, mode="exp_range", gamma=0.9)
        elif case == "a scale function object":
            optimizer = lib.optim.SGD([p], lr=0.1, momentum=0.9)
            scheduler = s.CyclicLR(optimizer, 0.01, 0.1, step_size_up=2, scale_fn=_Decay(0.5), scale_mode="iterations")
        else:
            optimizer = lib.optim.SGD([p], lr=0.1)
            scheduler = s.CyclicLR(optimizer, 0.01, 0.1, step_size_up=1, step_size_down=4, cycle_momentum=False)
        seen = [(scheduler.get_last_lr(), dict((k, v) for k, v in optimizer.param_groups[0].items() if k != "params"))]
        for _ in range(9):
            optimizer.step()
            scheduler.step()
            group = optimizer.param_groups[0]
            seen.append((scheduler.get_last_lr(), group["betas"] if "betas" in group else group["momentum"]))
        state = scheduler.state_dict()
        saved = sorted(state), state["_scale_fn_custom"]
        scheduler.load_state_dict(state)  # (takes the scale function's entry out of the dict, as torch's)
        scheduler.step()
        return seen, saved, sorted(state), scheduler.get_last_lr()
    theirs, mine = (program(lib) for lib in LIBS)
    assert mine == theirs


def test_cyclic_lr_refuses_what_torch_refuses():
    same_error(lambda lib: lib.optim.lr_scheduler.CyclicLR(_opt(lib), 0.01, 0.1, mode="sawtooth"))
    same_error(lambda lib: lib.optim.lr_scheduler.CyclicLR(
        lib.optim.Adagrad([lib.nn.Parameter(lib.zeros(1))]), 0.01, 0.1))
    same_error(lambda lib: lib.optim.lr_scheduler.CyclicLR(_opt(lib), [0.01, 0.02], 0.1))

def test_reduce_lr_on_plateau_follows_the_metric():
    def program(lib):
        optimizer = _opt(lib, lr=1.0)
        scheduler = lib.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=1, factor=0.5, cooldown=1,
                                                            min_lr=0.1)
        rates = []
        for metric in [5, 4, 4, 4, 4, 3, 3, 3, 3, 3, 3, 3]:
            scheduler.step(metric)
            rates.append((scheduler.get_last_lr(), scheduler.num_bad_epochs, scheduler.best))
        scheduler.load_state_dict(scheduler.state_dict())
        return rates, scheduler.in_cooldown
    theirs, mine = (program(lib) for lib in LIBS)
    assert mine == theirs


def test_resuming_with_an_epoch_and_calling_get_lr_warn_as_torch():
    def program(lib):
        optimizer = _opt(lib)
        scheduler = lib.optim.lr_scheduler.StepLR(optimizer, step_size=2)
        optimizer.step()
        scheduler.step(5)                     # the deprecated epoch argument
        scheduler.get_lr()                    # not the way to read the current rate
        plateau = lib.optim.lr_scheduler.ReduceLROnPlateau(optimizer)
        plateau.step(1.0, epoch=3)
        return scheduler.get_last_lr()
    said = same_warnings(program)
    assert len(said) == 3


def test_scheduler_step_before_optimizer_step_warns_as_torch():
    def program(lib):
        optimizer = _opt(lib)
        lib.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[1]).step()
    assert len(same_warnings(program)) == 1


def test_scheduler_warns_when_optimizer_step_was_replaced_after_it():
    def program(lib):
        optimizer = _opt(lib)
        scheduler = lib.optim.lr_scheduler.StepLR(optimizer, step_size=2)
        optimizer.step = lambda *args, **kwargs: None  # nothing counts this one's calls
        optimizer.step()
        scheduler.step()
    assert len(same_warnings(program)) == 1


def test_a_scheduler_written_on_the_old_base_class_runs():
    def program(lib):
        class Halving(lib.optim.lr_scheduler._LRScheduler):
            def get_lr(self):
                return [group["lr"] / 2 for group in self.optimizer.param_groups]
        optimizer = _opt(lib)
        scheduler = Halving(optimizer)
        rates = []
        for _ in range(3):
            optimizer.step()
            scheduler.step()
            rates.append(scheduler.get_last_lr())
        return rates, isinstance(scheduler, lib.optim.lr_scheduler.LRScheduler)
    theirs, mine = (program(lib) for lib in LIBS)
    assert mine == theirs


@pytest.mark.parametrize("case", ["sequential milestones", "chained plateau", "linear factor", "verbose"])
def test_scheduler_errors_are_torchs(case):
    def program(lib):
        s, optimizer = lib.optim.lr_scheduler, _opt(lib)
        if case == "sequential milestones":
            s.SequentialLR(optimizer, [s.ExponentialLR(optimizer, 0.9)], milestones=[2])
        elif case == "chained plateau":
            s.ChainedScheduler([s.ReduceLROnPlateau(optimizer)])
        elif case == "linear factor":
            s.LinearLR(optimizer, start_factor=0)
        else:
            s.StepLR(optimizer, step_size=2, verbose=True)
    same_error(program)


# -- AdamW, closures, param groups ---------------------------------------------------------
def test_adamw_decays_the_weights_themselves():
    def program(lib):
        lib.manual_seed(0)
        model = lib.nn.Linear(3, 2)
        optimizer = lib.optim.AdamW(model.parameters(), lr=0.1, weight_decay=0.5, amsgrad=True)
        for _ in range(3):
            optimizer.zero_grad()
            model(lib.randn(4, 3)).pow(2).sum().backward()
            optimizer.step()
        state = optimizer.state_dict()
        return model.weight, model.bias, repr(optimizer), sorted(state["param_groups"][0])
    same_program(program)


def test_optimizer_step_runs_its_closure_with_grad_mode_on():
    def program(lib):
        w = lib.nn.Parameter(lib.tensor([1.0, -2.0]))
        results = []
        for optimizer in (lib.optim.SGD([w], lr=0.1, momentum=0.9), lib.optim.Adam([w], lr=0.1),
                          lib.optim.AdamW([w], lr=0.1)):
            def closure():
                optimizer.zero_grad()
                loss = (w ** 2).sum()
                loss.backward()
                return loss
            results.append((optimizer.step(closure), w.detach().clone()))
        return results
    same_program(program)


def test_add_param_group_refuses_a_parameter_already_in_a_group():
    def program(lib):
        w = lib.nn.Parameter(lib.ones(2))
        lib.optim.SGD([w], lr=0.1).add_param_group({"params": [w]})
    same_error(program)
    same_warnings(lambda lib: lib.optim.SGD([lib.nn.Parameter(lib.ones(1))] * 2, lr=0.1))


# -- schedules stepped with SGD and Adam ---------------------------------------------------
SCHEDULES_WITH_OPTIONS = [("StepLR", dict(step_size=3, gamma=0.5)), ("ExponentialLR", dict(gamma=0.9)),
             ("CosineAnnealingLR", dict(T_max=4, eta_min=0.01)), ("LambdaLR", dict(lr_lambda=lambda e: 1 / (e + 1))),
             ("OneCycleLR", dict(max_lr=0.5, total_steps=12)),
             ("OneCycleLR", dict(max_lr=[0.5], epochs=3, steps_per_epoch=4, anneal_strategy="linear", three_phase=True))]


@pytest.mark.parametrize("name,options", SCHEDULES_WITH_OPTIONS, ids=[f"{n}{i}" for i, (n, _) in enumerate(SCHEDULES_WITH_OPTIONS)])
@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
def test_lr_schedules_give_torchs_rates(name, options, optimizer):
    def program(lib):
        p = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([p], lr=0.1, momentum=0.9) if optimizer == "SGD" else lib.optim.Adam([p], lr=0.1)
        schedule = getattr(lib.optim.lr_scheduler, name)(opt, **options)
        rates = [schedule.get_last_lr()]
        for _ in range(12):
            opt.step()
            schedule.step()
            group = opt.param_groups[0]
            rates.append((schedule.get_last_lr(), group["momentum"] if "momentum" in group else group["betas"]))
        return rates, schedule.last_epoch, sorted(k for k in schedule.state_dict() if not k.startswith("_"))
    same_program(program)


def test_lr_schedule_warns_when_stepped_before_the_optimizer():
    same_warnings(lambda lib: lib.optim.lr_scheduler.StepLR(
        lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=0.1), 2).step())
    same_error(lambda lib: lib.optim.lr_scheduler.OneCycleLR(lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=0.1), 1.0))
    same_error(lambda lib: lib.optim.lr_scheduler.StepLR(object(), 2))


# -- gradient clipping ---------------------------------------------------------------------
@pytest.mark.parametrize("norm_type", [2.0, 1, float("inf")])
def test_clip_grad_norm_and_value(norm_type):
    def program(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.Linear(3, 1))
        model(lib.randn(5, 4)).pow(2).sum().backward()
        total = lib.nn.utils.clip_grad_norm_(model.parameters(), 0.5, norm_type=norm_type)
        grads = [p.grad.clone() for p in model.parameters()]
        lib.nn.utils.clip_grad_value_(model.parameters(), 0.01)
        return total, grads, [p.grad for p in model.parameters()], lib.nn.utils.clip_grad_norm_([], 1.0)
    same_program(program)
    same_error(lambda lib: _non_finite_clip(lib))


def _non_finite_clip(lib):
    p = lib.nn.Parameter(lib.ones(2))
    p.grad = lib.tensor([float("inf"), 1.0])
    lib.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)


# ======================================================================================
# Optimizer.state_dict / load_state_dict
# ======================================================================================
STATE_DICT_OPTIMIZERS = {
    "sgd": lambda lib, ps: lib.optim.SGD(ps, lr=0.1),
    "sgd_momentum": lambda lib, ps: lib.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
    "sgd_two_groups": lambda lib, ps: lib.optim.SGD([{"params": ps[:2], "lr": 0.05}, {"params": ps[2:]}],
                                                    lr=0.1, momentum=0.5),
    "adam": lambda lib, ps: lib.optim.Adam(ps, lr=0.01, weight_decay=0.1),
    "adamw_amsgrad": lambda lib, ps: lib.optim.Adam(ps, lr=0.01, weight_decay=0.1, amsgrad=True,
                                                    decoupled_weight_decay=True),
}


def _train_mlp(lib, model, optimizer, steps):
    for _ in range(steps):
        optimizer.zero_grad()
        (model(lib.tensor(MLP_INPUT)) ** 2).mean().backward()
        optimizer.step()


def _structure(state_dict):
    """The state dict with tensors replaced by (dtype, shape, values) for comparing."""
    def describe(v):
        if isinstance(v, (torch.Tensor, reftorch.Tensor)):
            return str(v.dtype), tuple(v.shape)
        return v
    return ({k: {n: describe(v) for n, v in s.items()} for k, s in state_dict["state"].items()},
            state_dict["param_groups"])


@pytest.mark.parametrize("kind", sorted(STATE_DICT_OPTIMIZERS))
def test_optimizer_state_dict_round_trip_continues_like_torch(kind):
    results = []
    for lib in LIBS:
        model = seeded_mlp(lib)
        optimizer = STATE_DICT_OPTIMIZERS[kind](lib, list(model.parameters()))
        _train_mlp(lib, model, optimizer, 3)
        saved = copy.deepcopy(optimizer.state_dict())  # what torch.save / torch.load would give
        structure = _structure(optimizer.state_dict())
        _train_mlp(lib, model, optimizer, 2)  # the uninterrupted run
        # a second model reaches the same weights (3 steps), then a fresh optimizer takes over
        again = seeded_mlp(lib)
        _train_mlp(lib, again, STATE_DICT_OPTIMIZERS[kind](lib, list(again.parameters())), 3)
        fresh = STATE_DICT_OPTIMIZERS[kind](lib, list(again.parameters()))
        fresh.load_state_dict(saved)
        _train_mlp(lib, again, fresh, 2)
        for a, b in zip(model.parameters(), again.parameters()):  # continued identically
            assert a.tolist() == b.tolist(), f"{lib.__name__}: {kind} did not continue identically"
        results.append((structure, _structure(fresh.state_dict()), [p.detach() for p in again.parameters()]))
    (t_structure, t_loaded, t_params), (r_structure, r_loaded, r_params) = results
    assert r_structure == t_structure
    assert r_loaded == t_loaded
    for mine, theirs in zip(r_params, t_params):
        assert_close_values(mine, theirs, kind)


def test_optimizer_state_dict_keeps_the_optimizers_own_tensors_like_torch():
    def program(lib):
        model = seeded_mlp(lib)
        optimizer = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        _train_mlp(lib, model, optimizer, 1)
        state = optimizer.state_dict()
        weight = model[0].weight
        return (state["state"][0] is optimizer.state[weight],
                state["state"][0]["momentum_buffer"] is optimizer.state[weight]["momentum_buffer"],
                sorted(state["state"]), state["param_groups"])
    same_program(program)


@pytest.mark.parametrize("bad", [{"state": {}, "param_groups": []},
                                 {"state": {}, "param_groups": [{"params": [0]}]},
                                 {"state": {}}])
def test_optimizer_load_state_dict_errors_match_torch(bad):
    same_error(lambda lib: lib.optim.SGD(seeded_mlp(lib).parameters(), lr=0.1).load_state_dict(bad))
