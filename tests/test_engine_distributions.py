"""Sampling from distributions: exponential_, multinomial, bernoulli and reftorch.distributions against torch.

Samples are compared as raw bytes for the same seed (exponential_ draws float64 uniforms and
takes libm's log1p; multinomial races exponentials, or walks a cumulative sum per row), and the
generator state after them too, so a sampler that draws one number too many shows up. Values that
are computed, not drawn (log_prob, entropy, cdf, lgamma), are compared within the tolerance of
engine_support. d2l's probability chapter runs as a program on both and prints the same.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import reftorch
from engine_support import (
    ENGINE, LIBS, assert_close_values, assert_same_bits, capabilities_this_cpu_allows, run_both, run_program,
    same_error,
)
FLOATS = ("float32", "float64", "float16", "bfloat16")


def weights(seed, shape, dtype_name, zeros=False):
    """Positive weights (not normalised); with ``zeros`` about a third of them 0."""
    rng = np.random.default_rng(seed)
    values = rng.uniform(0.05, 3.0, size=shape)
    if zeros:
        values[rng.random(shape) < 0.33] = 0.0
        values[..., 0] = np.maximum(values[..., 0], 0.5)  # every row keeps some weight
    return values


def as_tensor(lib, values, dtype_name, layout):
    """``values`` in ``lib`` as ``dtype_name``: contiguous, transposed (a 2-d tensor whose
    rows are columns in memory) or stepped (every other element of a wider tensor)."""
    dtype = getattr(lib, dtype_name)
    if layout == "transposed" and values.ndim == 2:
        return lib.tensor(np.ascontiguousarray(values.T)).to(dtype).t()
    if layout == "stepped":
        return lib.tensor(np.repeat(values, 2, axis=-1)).to(dtype)[..., ::2]
    return lib.tensor(values).to(dtype)


# -- exponential_ -------------------------------------------------------------------------
@ENGINE
@given(seed=st.integers(0, 2**64 - 1), size=st.lists(st.integers(1, 30), min_size=1, max_size=3).map(tuple),
       dtype=st.sampled_from(FLOATS), lambd=st.sampled_from([1.0, 0.5, 3.0, 1e-3, 250.0]),
       transposed=st.booleans())
def test_exponential_fill_matches_torch_bit_for_bit(seed, size, dtype, lambd, transposed):
    def fill(lib):
        t = lib.empty(size, dtype=getattr(lib, dtype))
        if transposed and len(size) >= 2:  # filled in memory order, not index order
            t = lib.empty(size[::-1], dtype=getattr(lib, dtype)).permute(*reversed(range(len(size))))
        return t.exponential_(lambd)
    theirs, ours = run_both(fill, seed=seed)
    assert_same_bits(ours, theirs)


def test_exponential_fill_of_many_values_and_with_a_generator():
    theirs, ours = run_both(lambda lib: lib.empty(5000, dtype=lib.float64).exponential_(), seed=0)
    assert_same_bits(ours, theirs)  # ~4% of these differ if log1p is NumPy's and not libm's
    theirs, ours = run_both(lambda lib: lib.empty(100_003).exponential_(), seed=0)
    assert_same_bits(ours, theirs)
    generators = [lib.Generator().manual_seed(7) for lib in LIBS]
    assert_same_bits(reftorch.empty(40).exponential_(2.0, generator=generators[1]),
                     torch.empty(40).exponential_(2.0, generator=generators[0]))


@pytest.mark.parametrize("lambd", [-1, 0, -0.5, -1.5, 0.0])
def test_exponential_refuses_a_rate_that_is_not_positive(lambd):
    same_error(lambda lib: lib.empty(3).exponential_(lambd))


def test_exponential_refuses_integer_tensors_after_checking_the_rate():
    same_error(lambda lib: lib.empty(3, dtype=lib.int64).exponential_())
    same_error(lambda lib: lib.empty(3, dtype=lib.int32).exponential_(0.5))
    same_error(lambda lib: lib.empty(3, dtype=lib.int64).exponential_(-1))  # the rate is checked first


def test_exponential_in_place_on_a_graph_records_a_zero_gradient():
    grads = []
    for lib in LIBS:
        leaf = lib.ones(4, requires_grad=True)
        out = leaf.clone().exponential_()
        assert type(out.grad_fn).__name__ == "ExponentialBackward0"
        out.sum().backward()
        grads.append(leaf.grad)
    assert_same_bits(grads[1], grads[0])


# -- multinomial --------------------------------------------------------------------------
@ENGINE
@given(seed=st.integers(0, 2**64 - 1), value_seed=st.integers(0, 2**32 - 1), rows=st.sampled_from([None, 1, 3]),
       categories=st.integers(1, 12), num_samples=st.integers(1, 40), replacement=st.booleans(),
       dtype=st.sampled_from(FLOATS), layout=st.sampled_from(["contiguous", "transposed", "stepped"]),
       zeros=st.booleans())
def test_multinomial_matches_torch_bit_for_bit(seed, value_seed, rows, categories, num_samples, replacement,
                                               dtype, layout, zeros):
    if not replacement:
        num_samples = min(num_samples, categories)
        # two zero weights tie in the race, and topk's order among equal values is torch's
        # std::nth_element's (not reproduced): zeros only where at most one index is chosen
        zeros = zeros and num_samples == 1
    shape = (categories,) if rows is None else (rows, categories)
    values = weights(value_seed, shape, dtype, zeros)

    def draw(lib):
        return lib.multinomial(as_tensor(lib, values, dtype, layout), num_samples, replacement)
    theirs, ours = run_both(draw, seed=seed)
    assert_same_bits(ours, theirs)


def test_multinomial_without_replacement_can_pick_a_zero_weight_last():
    theirs, ours = run_both(lambda lib: lib.multinomial(lib.tensor([1., 0., 3.]), 3), seed=3)
    assert_same_bits(ours, theirs)
    assert ours.tolist()[-1] == 1
    theirs, ours = run_both(lambda lib: lib.multinomial(lib.tensor([[1., 0., 3.], [0., 2., 2.]]), 2,
                                                        generator=lib.Generator().manual_seed(11)), seed=3)
    assert_same_bits(ours, theirs)


def test_multinomial_race_noise_is_drawn_in_the_inputs_memory_order():
    values = np.random.default_rng(0).uniform(0.1, 3, (3, 5))
    for k in (1, 3):
        # a transposed input: its exponential noise fills an empty_like of the same strides
        theirs, ours = run_both(lambda lib: lib.multinomial(as_tensor(lib, values, "float32", "transposed"), k), seed=0)
        assert_same_bits(ours, theirs)
        contiguous = run_both(lambda lib: lib.multinomial(lib.tensor(values).float(), k), seed=0)[0]
        assert contiguous.tolist() != theirs.tolist()  # the layout does change the samples


def test_multinomial_with_replacement_sums_in_the_inputs_dtype():
    # seed 0's first float64 uniform is 0.97005300..., and 0.6732655 / (0.6732655 + 0.020784711)
    # is just below it in float32 but just above it in float64: the float32 sum picks category 1
    theirs, ours = run_both(lambda lib: lib.multinomial(lib.tensor([0.6732655, 0.020784711]), 2, True), seed=0)
    assert_same_bits(ours, theirs)
    assert ours.tolist()[0] == 1


def test_multinomial_of_many_samples_and_categories():
    rng = np.random.default_rng(1)
    values = rng.uniform(0, 1, size=(4, 1000))
    for k, replacement in ((1000, False), (1, True), (5000, True)):
        theirs, ours = run_both(lambda lib: lib.multinomial(lib.tensor(values), k, replacement), seed=9)
        assert_same_bits(ours, theirs)


@pytest.mark.parametrize("program", [
    lambda lib: lib.multinomial(lib.tensor([1, 2]), 1),  # integer weights
    lambda lib: lib.multinomial(lib.tensor(1.0), 1),  # 0-dim
    lambda lib: lib.multinomial(lib.ones(2, 2, 2), 1),
    lambda lib: lib.multinomial(lib.ones(3), 0),
    lambda lib: lib.multinomial(lib.ones(3), 4),  # more than there are, without replacement
    lambda lib: lib.multinomial(lib.tensor([1.0, -1.0]), 1),
    lambda lib: lib.multinomial(lib.tensor([1.0, float("nan")]), 2),
    lambda lib: lib.multinomial(lib.tensor([float("inf"), 1.0]), 1),
    lambda lib: lib.multinomial(lib.tensor([[1.0, 1.0], [0.0, 0.0]]), 1),
    lambda lib: lib.multinomial(lib.tensor([1.0, -1.0]), 4, True),
    lambda lib: lib.multinomial(lib.tensor([float("nan"), 1.0]), 4, True),  # nan fails `>= 0` first
    lambda lib: lib.multinomial(lib.tensor([float("inf"), 1.0]), 4, True),
    lambda lib: lib.multinomial(lib.tensor([[1.0, 2.0], [0.0, 0.0]]), 4, True),
], ids=["long", "0-dim", "3-dim", "zero-samples", "too-many", "negative", "nan", "inf", "zero-row",
        "negative-replacement", "nan-replacement", "inf-replacement", "zero-row-replacement"])
def test_multinomial_refuses_what_torch_refuses_with_its_words(program):
    same_error(program)


def test_multinomial_with_replacement_draws_for_the_rows_before_a_bad_one():
    for lib in LIBS:
        lib.manual_seed(4)
        with pytest.raises(RuntimeError):
            lib.multinomial(lib.tensor([[1.0, 2.0], [1.0, -2.0]]), 5, True)
    assert_same_bits(reftorch.get_rng_state(), torch.get_rng_state())


# -- torch.normal with tensor arguments ---------------------------------------------------
@ENGINE
@given(seed=st.integers(0, 2**64 - 1), n=st.sampled_from([1, 7, 16, 33, 500]), dtype=st.sampled_from(FLOATS[:2]),
       which=st.sampled_from(["tensor-tensor", "tensor-float", "float-tensor"]))
def test_normal_of_tensors_matches_torch_bit_for_bit(seed, n, dtype, which):
    rng = np.random.default_rng(n)
    mean, std = rng.uniform(-3, 3, n), rng.uniform(0, 2, n)

    def draw(lib):
        m, s = lib.tensor(mean, dtype=getattr(lib, dtype)), lib.tensor(std, dtype=getattr(lib, dtype))
        return {"tensor-tensor": lambda: lib.normal(m, s), "tensor-float": lambda: lib.normal(m, 0.75),
                "float-tensor": lambda: lib.normal(-1.25, s)}[which]()
    theirs, ours = run_both(draw, seed=seed)
    assert_same_bits(ours, theirs)


def test_normal_of_tensors_broadcasts_records_a_zero_gradient_and_checks_std():
    theirs, ours = run_both(lambda lib: lib.normal(lib.arange(4.0).reshape(4, 1), lib.ones(5) * 0.7), seed=2)
    assert_same_bits(ours, theirs)
    names = []
    for lib in LIBS:
        mean, std = lib.zeros(3, requires_grad=True), lib.ones(3, requires_grad=True)
        outs = (lib.normal(mean, std), lib.normal(mean, 1.0), lib.normal(0.0, std))
        names.append([type(o.grad_fn).__name__ for o in outs])
        outs[0].sum().backward()
        assert mean.grad.tolist() == std.grad.tolist() == [0.0, 0.0, 0.0]
    assert names[1] == names[0]
    same_error(lambda lib: lib.normal(lib.zeros(2), -lib.ones(2)))
    same_error(lambda lib: lib.normal(lib.zeros(2), -1.0))


# -- lgamma, digamma, type_as, new ----------------------------------------------------------
@ENGINE
@given(seed=st.integers(0, 2**32 - 1), dtype=st.sampled_from(["float32", "float64"]),
       low=st.sampled_from([-6.0, 0.01, 1.0, 20.0]))
def test_lgamma_and_its_gradient_digamma_match_torch(seed, dtype, low):
    values = np.random.default_rng(seed).uniform(low, low + 12.0, size=(3, 5))
    near_pole = (values < 0.5) & (np.abs(values - np.round(values)) < 0.1)
    values = np.where(near_pole, np.round(values) + 0.5, values).astype(dtype)  # 0.1 or more from 0, -1, -2, ...
    outs = []
    for lib in LIBS:
        x = lib.tensor(values, requires_grad=True)
        y = lib.lgamma(x)
        y.sum().backward()
        outs.append((y, x.grad, lib.digamma(x.detach()), x.detach().lgamma(), type(y.grad_fn).__name__))
    theirs, ours = outs
    # 0.1 from a pole, digamma's condition number |x psi'(x) / psi(x)| is up to ~70, and torch's
    # float32 series runs in float32 (ours in float64, rounded once): a few ulp per step, times that
    u = {"float32": 2.0 ** -24, "float64": 2.0 ** -53}[dtype]
    for mine, expected, name in zip(ours[:4], theirs[:4], ["lgamma", "grad", "digamma", "method"]):
        np.testing.assert_allclose(mine.detach()._np, expected.detach().numpy(), rtol=70 * 8 * u, atol=70 * 8 * u,
                                   err_msg=name)
    assert ours[4] == theirs[4] == "LgammaBackward0"


def test_lgamma_and_digamma_at_their_poles_and_of_integers():
    for op in ("lgamma", "digamma"):
        values = [0.0, -0.0, -1.0, -2.0, 1.0, 2.0, 1e-8]
        theirs = getattr(torch, op)(torch.tensor(values, dtype=torch.float64))
        ours = getattr(reftorch, op)(reftorch.tensor(values, dtype=reftorch.float64))
        assert_close_values(ours, theirs, op)
    assert reftorch.lgamma(reftorch.tensor([1, 4])).dtype is reftorch.float32  # integers -> float


def test_type_as_and_new_follow_the_other_tensor():
    for lib in LIBS:
        counts = lib.zeros(3, dtype=lib.int64)
        assert counts.type_as(lib.ones(1, dtype=lib.float64)).dtype is lib.float64
        probs = lib.ones(2)
        assert probs.type_as(probs) is probs
        fresh = counts.new(lib.Size([2, 3]))
        assert (fresh.dtype, tuple(fresh.shape)) == (lib.int64, (2, 3))
        assert counts.new([1, 2]).tolist() == [1, 2]


# -- reftorch.distributions -------------------------------------------------------------------
def _categorical(lib, values, by):
    tensor = lib.tensor(values)
    return lib.distributions.Categorical(**{by: tensor})


@ENGINE
@given(seed=st.integers(0, 2**64 - 1), value_seed=st.integers(0, 2**32 - 1),
       batch=st.sampled_from([(), (2,), (2, 3)]), categories=st.integers(1, 6),
       sample_shape=st.sampled_from([(), (1,), (5,), (2, 3)]), by=st.sampled_from(["probs", "logits"]))
def test_categorical_samples_and_scores_like_torch(seed, value_seed, batch, categories, sample_shape, by):
    values = weights(value_seed, batch + (categories,), "float32").astype(np.float32)
    if by == "logits":
        values = np.log(values)

    def run(lib):
        d = _categorical(lib, values, by)
        sample = d.sample(sample_shape)
        return d, sample
    (theirs, their_sample), (ours, our_sample) = run_both(run, seed=seed)
    assert_same_bits(our_sample, their_sample)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape) and repr(ours) == repr(theirs)
    their_value = their_sample
    our_value = reftorch.tensor(their_value.numpy())
    assert_close_values(ours.log_prob(our_value), theirs.log_prob(their_value), "log_prob")
    for name in ("probs", "logits", "mean", "variance", "mode"):
        assert_close_values(getattr(ours, name), getattr(theirs, name), name)
    assert_close_values(ours.entropy(), theirs.entropy(), "entropy")
    assert_same_bits(ours.enumerate_support(), theirs.enumerate_support())
    assert_same_bits(ours.enumerate_support(expand=False), theirs.enumerate_support(expand=False))


@ENGINE
@given(seed=st.integers(0, 2**64 - 1), value_seed=st.integers(0, 2**32 - 1),
       batch=st.sampled_from([(), (3,)]), categories=st.integers(1, 5), total_count=st.sampled_from([1, 7, 100]),
       sample_shape=st.sampled_from([(), (4,), (2, 2)]), dtype=st.sampled_from(["float32", "float64"]))
def test_multinomial_distribution_samples_and_scores_like_torch(seed, value_seed, batch, categories, total_count,
                                                               sample_shape, dtype):
    values = weights(value_seed, batch + (categories,), dtype, zeros=True)

    def run(lib):
        d = lib.distributions.Multinomial(total_count, lib.tensor(values, dtype=getattr(lib, dtype)))
        return d, d.sample(sample_shape)
    (theirs, their_sample), (ours, our_sample) = run_both(run, seed=seed)
    assert_same_bits(our_sample, their_sample)
    assert (tuple(ours.batch_shape), tuple(ours.event_shape)) == (tuple(theirs.batch_shape), tuple(theirs.event_shape))
    assert_close_values(ours.log_prob(reftorch.tensor(their_sample.numpy())), theirs.log_prob(their_sample), "log_prob")
    for name in ("probs", "logits", "mean", "variance"):
        assert_close_values(getattr(ours, name), getattr(theirs, name), name)


@ENGINE
@given(seed=st.integers(0, 2**64 - 1), batch=st.sampled_from([(), (1,), (3,), (2, 17)]),
       sample_shape=st.sampled_from([(), (5,), (4, 4)]), numbers=st.booleans())
def test_normal_samples_reparameterises_and_scores_like_torch(seed, batch, sample_shape, numbers):
    rng = np.random.default_rng(seed % 2**32)
    loc, scale = rng.uniform(-2, 2, batch).astype(np.float32), rng.uniform(0.1, 3, batch).astype(np.float32)

    def run(lib):
        if numbers:
            d = lib.distributions.Normal(0.5, 2.0)
        else:
            leaves = lib.tensor(loc, requires_grad=True), lib.tensor(scale, requires_grad=True)
            d = lib.distributions.Normal(*leaves)
        sample, rsample = d.sample(sample_shape), d.rsample(sample_shape)
        grads = None
        if not numbers:
            rsample.sum().backward()
            grads = tuple(leaf.grad for leaf in leaves)
        return d, sample, rsample, grads
    (theirs, their_sample, their_rsample, their_grads), (ours, our_sample, our_rsample, our_grads) = \
        run_both(run, seed=seed)
    assert_same_bits(our_sample, their_sample)
    assert not our_sample.requires_grad
    assert_same_bits(our_rsample, their_rsample)
    if not numbers:
        for mine, expected, name in zip(our_grads, their_grads, ("loc.grad", "scale.grad")):
            assert_close_values(mine, expected, name)
    assert repr(ours) == repr(theirs)
    value = np.linspace(-3, 3, 5, dtype=np.float32).reshape((5,) + (1,) * len(batch))
    ours_at, theirs_at = reftorch.tensor(value), torch.tensor(value)
    for name in ("log_prob", "cdf"):
        assert_close_values(getattr(ours, name)(ours_at), getattr(theirs, name)(theirs_at), name)
    assert_close_values(ours.entropy(), theirs.entropy(), "entropy")
    for name in ("mean", "mode", "stddev", "variance"):
        assert_close_values(getattr(ours, name), getattr(theirs, name), name)


@pytest.mark.parametrize("program", [
    lambda lib: lib.distributions.Categorical(lib.tensor([-1.0, 2.0])),
    lambda lib: lib.distributions.Categorical(),
    lambda lib: lib.distributions.Categorical(lib.tensor([0.5]), lib.tensor([0.0])),
    lambda lib: lib.distributions.Categorical(lib.tensor(1.0)),
    lambda lib: lib.distributions.Categorical(logits=lib.tensor(1.0)),
    lambda lib: lib.distributions.Categorical(lib.tensor([0.5, 0.5])).log_prob(lib.tensor([2])),
    lambda lib: lib.distributions.Normal(0.0, -1.0),
    lambda lib: lib.distributions.Normal(lib.zeros(2), lib.tensor([1.0, 0.0])),
    lambda lib: lib.distributions.Normal(lib.tensor(float("nan")), 1.0),
    lambda lib: lib.distributions.Normal(0.0, 1.0).log_prob(0.5),
    lambda lib: lib.distributions.Normal(lib.zeros(2), 1.0).log_prob(lib.zeros(3)),
    lambda lib: lib.distributions.Normal(0.0, "1"),
    lambda lib: lib.distributions.Multinomial(2.5, lib.tensor([0.5, 0.5])),
    lambda lib: lib.distributions.Multinomial(3, lib.tensor([0.5, 0.5])).log_prob(lib.tensor([5.0, 1.0])),
    lambda lib: lib.distributions.Multinomial(3, lib.tensor([0.5, 0.5])).log_prob(lib.tensor([1.0])),
], ids=["simplex", "neither", "both", "0-dim-probs", "0-dim-logits", "outside-support", "scale", "scale-tensor",
        "nan-loc", "not-a-tensor", "not-broadcastable", "string", "total-count", "multinomial-support",
        "event-shape"])
def test_distributions_refuse_what_torch_refuses_with_its_words(program):
    same_error(program)


def test_a_distribution_without_a_mode_says_so_in_torchs_words():
    for lib in LIBS:
        with pytest.warns(UserWarning, match="does not define `arg_constraints`"):
            bare = lib.distributions.Distribution()
        with pytest.raises(NotImplementedError) as info:
            bare.mode
        # torch names its own class there, we ours
        assert str(info.value) == f"<class '{lib.__name__}.distributions.distribution.Distribution'> does not implement mode"


def test_validation_follows_validate_args_and_the_default():
    for lib in LIBS:
        bad = lib.tensor([-1.0, 2.0])
        lib.distributions.Categorical(bad, validate_args=False)  # not checked
        assert lib.distributions.Distribution._validate_args is True
        lib.distributions.Distribution.set_default_validate_args(False)
        try:
            lib.distributions.Normal(0.0, -1.0)
        finally:
            lib.distributions.Distribution.set_default_validate_args(True)
        with pytest.raises(ValueError):
            lib.distributions.Distribution.set_default_validate_args(1.5)


def test_distribution_shapes_expand_and_sample_n_are_torchs():
    outs = []
    for lib in LIBS:
        lib.manual_seed(1)
        d = lib.distributions.Normal(lib.zeros(3), 1.0).expand((2, 3))
        m = lib.distributions.Multinomial(4, lib.tensor([0.2, 0.8])).expand((5,))
        with pytest.warns(FutureWarning):
            n = d.sample_n(2)
        outs.append((tuple(d.batch_shape), tuple(d._extended_shape((4,))), n, m.sample(), tuple(m.batch_shape),
                     d.has_rsample, m.has_rsample, lib.distributions.Categorical.has_enumerate_support,
                     repr(lib.distributions.constraints.real_vector), repr(lib.distributions.constraints.positive)))
    theirs, ours = outs
    assert_same_bits(ours[2], theirs[2])
    assert_same_bits(ours[3], theirs[3])
    assert ours[:2] + ours[4:] == theirs[:2] + theirs[4:]


# -- d2l's probability chapter, as a program --------------------------------------------------
COIN_TOSSES = """
import torch
from torch.distributions.multinomial import Multinomial

torch.manual_seed(0)
fair_probs = torch.tensor([0.5, 0.5])
print(Multinomial(100, fair_probs).sample())
print(Multinomial(100, fair_probs).sample() / 100)
counts = Multinomial(10000, fair_probs).sample()
print(counts / 10000)

counts = Multinomial(1, fair_probs).sample((10000,))
cum_counts = counts.cumsum(dim=0)
estimates = cum_counts / cum_counts.sum(dim=1, keepdims=True)
estimates = estimates.numpy()
print(estimates.shape, estimates.dtype)
print(estimates[[0, 1, 9, 99, 999, 9999]].tolist())
print(int((estimates[:, 0] > 0.5).sum()))

loaded = Multinomial(60, torch.tensor([1.0, 1, 1, 1, 1, 3]))
rolls = loaded.sample((3,))
print(rolls, loaded.log_prob(rolls))
"""


def test_d2l_probability_flow_prints_torchs_numbers():
    expected = run_program(COIN_TOSSES, torch)
    got = run_program(COIN_TOSSES, reftorch)
    assert expected[1] is None, expected
    assert got == expected


# -- every CPU build torch can run here -------------------------------------------------------
CAPABILITY_PROGRAM = """
import hashlib, sys
lib = __import__(sys.argv[1])
lib.manual_seed(5)
probs = lib.rand(3, 9)
values = [lib.empty(3000).exponential_(), lib.empty(77, dtype=lib.float64).exponential_(0.25),
          lib.multinomial(probs, 9), lib.multinomial(probs, 1), lib.multinomial(probs, 500, True),
          lib.distributions.Normal(lib.zeros(40), lib.ones(40)).sample((3,)),
          lib.distributions.Normal(lib.zeros(40), lib.ones(40)).rsample(),
          lib.distributions.Multinomial(30, probs).sample((2,))]
print(hashlib.sha256(repr([v.tolist() for v in values]).encode()).hexdigest())
"""


@pytest.mark.parametrize("capability", capabilities_this_cpu_allows())
def test_every_cpu_build_torch_can_run_here_gives_the_same_samples(capability):
    env = dict(os.environ, ATEN_CPU_CAPABILITY=capability)
    outputs = [subprocess.run([sys.executable, "-c", CAPABILITY_PROGRAM, name], env=env, check=True,
                              capture_output=True, text=True).stdout for name in ("torch", "reftorch")]
    assert outputs[1] == outputs[0]
    assert len(outputs[0].strip()) == len(hashlib.sha256().hexdigest())


# -- bernoulli: torch's two CPU paths -------------------------------------------------------
# bernoulli(p tensor) and bernoulli_(p tensor) draw one uniform per element from the generator
# (float32 from 24 bits, float64 from 53 bits for a float64 p), bernoulli_(float) and
# bernoulli(x, p) a float64 uniform per element in the tensor's memory order. (On Intel CPUs
# torch's bernoulli_(float) goes through MKL instead: not this machine's path, not reproduced.)
def _intel_cpu() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            return "GenuineIntel" in info.read(4096)
    except OSError:
        return False


TORCH_BERNOULLI_FLOAT_BY_MKL = _intel_cpu()  # (torch asks cpuinfo for the first core's vendor)


@ENGINE
@given(seed=st.integers(0, 2**64 - 1), shape=st.sampled_from([(1,), (7,), (3, 5), (2, 3, 4), (40,)]),
       p_dtype=st.sampled_from(FLOATS), out_dtype=st.sampled_from(["float32", "float64", "int64", "bool"]),
       layout=st.sampled_from(["contiguous", "transposed", "stepped"]))
def test_bernoulli_draws_torchs_numbers(seed, shape, p_dtype, out_dtype, layout):
    probs = np.random.default_rng(seed % 2**32).uniform(0, 1, shape)

    def run(lib):
        p = as_tensor(lib, probs, p_dtype, layout)
        target = as_tensor(lib, np.zeros(shape), out_dtype, layout)
        drawn = [lib.bernoulli(p), target.clone().bernoulli_(p)]
        if not TORCH_BERNOULLI_FLOAT_BY_MKL:
            drawn += [target.clone().bernoulli_(0.3), lib.bernoulli(p, 0.7), p.bernoulli(0.2), target.bernoulli_()]
        return drawn
    for ours, theirs in zip(*reversed(run_both(run, seed=seed))):
        assert_same_bits(ours, theirs)


def test_bernoulli_nodes_and_errors_are_torchs():
    def nodes(lib):
        p = lib.full((3,), 0.5, requires_grad=True)
        x = lib.zeros(3, requires_grad=True).clone()
        return [type(y.grad_fn).__name__ for y in (lib.bernoulli(p), x.clone().bernoulli_(0.5),
                                                     x.clone().bernoulli_(p), lib.bernoulli(p, 0.3))]
    assert nodes(reftorch) == nodes(torch) == ["BernoulliBackward0", "BernoulliBackward2", "BernoulliBackward1",
                                               "NotImplemented"]
    same_error(lambda lib: lib.bernoulli(lib.tensor([1.5])))
    same_error(lambda lib: lib.zeros(2).bernoulli_(1.5))
    same_error(lambda lib: lib.zeros(2).bernoulli_(lib.tensor([0.5, float("nan")])))
    same_error(lambda lib: lib.bernoulli(lib.tensor([1, 0])))
    same_error(lambda lib: lib.bernoulli(lib.full((3,), 0.5, requires_grad=True), 0.3).sum().backward())


@ENGINE
@given(seed=st.integers(0, 2**64 - 1), batch=st.sampled_from([(), (1,), (3,), (2, 17)]),
       sample_shape=st.sampled_from([(), (5,), (4, 4)]), by=st.sampled_from(["probs", "logits", "number"]))
def test_bernoulli_distribution_samples_and_scores_like_torch(seed, batch, sample_shape, by):
    rng = np.random.default_rng(seed % 2**32)
    probs = rng.uniform(0.02, 0.98, batch).astype(np.float32)

    def run(lib):
        leaf = lib.tensor(probs if by != "logits" else np.log(probs / (1 - probs)), requires_grad=True)
        d = (lib.distributions.Bernoulli(0.3) if by == "number" else
             lib.distributions.Bernoulli(**{by: leaf}))
        d.printed = repr(d)  # (before the other parameter is computed: within an ulp of torch's, not its digits)
        sample = d.sample(sample_shape)
        score = d.log_prob(sample)
        grad = lib.autograd.grad(score.sum(), leaf)[0] if by != "number" else None
        return d, sample, score, grad
    (theirs, their_sample, their_score, their_grad), (ours, our_sample, our_score, our_grad) = \
        run_both(run, seed=seed)
    assert_same_bits(our_sample, their_sample)
    assert ours.printed == theirs.printed
    assert_close_values(our_score, their_score, "log_prob")
    if by != "number":
        assert_close_values(our_grad, their_grad, "grad")
    for name in ("mean", "mode", "variance", "probs", "logits", "entropy", "enumerate_support", "param_shape"):
        mine, expected = getattr(ours, name), getattr(theirs, name)
        mine, expected = (mine(), expected()) if callable(expected) else (mine, expected)
        if isinstance(expected, torch.Size):
            assert tuple(mine) == tuple(expected), name
        else:
            assert_close_values(mine, expected, name)
    assert_close_values(ours.expand((2,) + batch).sample(), theirs.expand((2,) + batch).sample(), "expand")


@ENGINE
@given(seed=st.integers(0, 2**64 - 1), batch=st.sampled_from([(), (3,), (2, 5)]),
       sample_shape=st.sampled_from([(), (4,)]))
def test_uniform_and_the_normal_quantile_like_torch(seed, batch, sample_shape):
    rng = np.random.default_rng(seed % 2**32)
    low = rng.uniform(-2, 0, batch).astype(np.float32)
    high = low + rng.uniform(0.5, 3, batch).astype(np.float32)

    def run(lib):
        leaves = lib.tensor(low, requires_grad=True), lib.tensor(high, requires_grad=True)
        d = lib.distributions.Uniform(*leaves)
        sample, rsample = d.sample(sample_shape), d.rsample(sample_shape)
        grads = lib.autograd.grad(rsample.sum(), leaves)
        at = lib.linspace(-2.5, 3.5, 7).reshape((7,) + (1,) * len(batch))
        quantiles = lib.linspace(0.01, 0.99, 7).reshape((7,) + (1,) * len(batch))
        normal = lib.distributions.Normal(leaves[0], leaves[1] - leaves[0])
        with lib.no_grad():
            d_loose = lib.distributions.Uniform(*leaves, validate_args=False)
            values = (d_loose.log_prob(at), d_loose.cdf(at), d.icdf(quantiles), d.entropy(), d.mean, d.stddev,
                      d.variance, d.mode, normal.icdf(quantiles), normal.cdf(normal.icdf(quantiles)))
        return d, sample, rsample, grads, values
    (theirs, *their_rest), (ours, *our_rest) = run_both(run, seed=seed)
    assert_same_bits(our_rest[0], their_rest[0])
    assert_same_bits(our_rest[1], their_rest[1])
    assert repr(ours) == repr(theirs)
    for name, mine, expected in zip(("low.grad", "high.grad"), our_rest[2], their_rest[2]):
        assert_close_values(mine, expected, name)
    for i, (mine, expected) in enumerate(zip(our_rest[3], their_rest[3])):
        assert_close_values(mine, expected, f"value {i}")


@pytest.mark.parametrize("program", [
    lambda lib: lib.distributions.Bernoulli(lib.tensor([1.5])),
    lambda lib: lib.distributions.Bernoulli(),
    lambda lib: lib.distributions.Bernoulli(0.5, 0.0),
    lambda lib: lib.distributions.Bernoulli(0.5).log_prob(lib.tensor(0.5)),
    lambda lib: lib.distributions.Uniform(1.0, 0.0),
    lambda lib: lib.distributions.Uniform(0.0, 1.0).log_prob(lib.tensor(2.0)),
], ids=["probs", "neither", "both", "support", "low-high", "uniform-support"])
def test_bernoulli_and_uniform_refuse_what_torch_refuses_with_its_words(program):
    same_error(program)
