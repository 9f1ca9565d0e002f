"""BatchNorm1d, functional.batch_norm and torch.utils.data, against real torch.

Each test runs the same code with ``lib`` bound to torch and to reftorch and compares what
comes out: module layout (state_dict keys, dtypes, repr), outputs and gradients (float64
to 1e-12), running statistics after several batches, error texts, and the exact order in
which a shuffling DataLoader visits a dataset for a given seed.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import reftorch
from engine_support import ENGINE, LIBS, UNIT_ROUNDOFF, run_both, same_error, same_program, sum_bound

# Batch statistics and the weight/bias gradients are sums over the M <= 24 values of a channel (N x L),
# which torch and reftorch add in other orders, both in double. Inputs are normal(2, 3) draws (|x| <= 14
# at 4 sigma), the upstream gradient normal(0, 1) and the normalised input |x̂| <= 4: the largest of
# these sums, Σ g·x̂, has Σ|g x̂| <= 24·4·4, so two orders differ by at most sum_bound(float64, 24, 384)
# ≈ 2.0e-12; the outputs and input gradients, scaled by 1/M and invstd, stay far below that.
TIGHT = dict(rtol=0, atol=sum_bound("float64", 24, 24 * 4 * 4))


def numpy_of(t):
    return np.asarray(t.detach().tolist())


# -- BatchNorm1d: layout --------------------------------------------------------------------
OPTIONS = [dict(), dict(affine=False), dict(track_running_stats=False), dict(momentum=None),
           dict(bias=False), dict(eps=1e-3, momentum=0.3)]


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_batchnorm1d_has_torchs_parameters_buffers_and_repr(options):
    def layout(lib):
        bn = lib.nn.BatchNorm1d(4, **options)
        return (repr(bn), [n for n, _ in bn.named_parameters()], [n for n, _ in bn.named_buffers()],
                [(k, str(v.dtype).replace("reftorch", "torch"), numpy_of(v).tolist())
                 for k, v in bn.state_dict().items()])
    torch_layout, ref_layout = run_both(layout)
    assert ref_layout == torch_layout


def test_batchnorm1d_buffers_move_with_to_and_load_from_torch():
    torch.manual_seed(0)
    torch_bn = torch.nn.BatchNorm1d(3)
    torch_bn(torch.randn(8, 3))
    ref_bn = reftorch.nn.BatchNorm1d(3)
    ref_bn.load_state_dict({k: reftorch.from_numpy(v.numpy()) for k, v in torch_bn.state_dict().items()})
    for name, value in torch_bn.state_dict().items():
        assert np.array_equal(numpy_of(ref_bn.state_dict()[name]), value.numpy()), name
    ref_bn.to(reftorch.float64)
    dtypes = {name: str(b.dtype) for name, b in ref_bn.named_buffers()}
    assert dtypes == {"running_mean": "torch.float64", "running_var": "torch.float64",
                      "num_batches_tracked": "torch.int64"}  # an integer buffer keeps its dtype


# -- BatchNorm1d: numbers ---------------------------------------------------------------------
def run_batches(lib, options, shape, seed, dtype_name="float64", num_batches=3):
    """Train mode on a few batches (outputs, grads, running stats), then eval on the last."""
    dtype = getattr(lib, dtype_name)
    rng = np.random.default_rng(seed)
    bn = lib.nn.BatchNorm1d(shape[1], dtype=dtype, **options)
    if bn.weight is not None:  # start away from 1 and 0, so that weight and bias matter
        with lib.no_grad():
            bn.weight.copy_(lib.tensor(rng.uniform(0.5, 2, shape[1]), dtype=dtype))
            if bn.bias is not None:
                bn.bias.copy_(lib.tensor(rng.uniform(-1, 1, shape[1]), dtype=dtype))
    seen = {}
    for step in range(num_batches):
        x = lib.tensor(rng.normal(2.0, 3.0, shape), dtype=dtype, requires_grad=True)
        y = bn(x)
        (y * lib.tensor(rng.normal(size=shape), dtype=dtype)).sum().backward()
        seen[f"out{step}"], seen[f"grad_x{step}"] = numpy_of(y), numpy_of(x.grad)
        for name, t in bn.named_buffers():
            seen[f"{name}{step}"] = numpy_of(t)
    for name, p in bn.named_parameters():
        seen[f"{name}.grad"] = numpy_of(p.grad)
    seen["grad_fn"] = type(y.grad_fn).__name__
    seen["next"] = [type(n).__name__ if n is not None else None for n, _ in y.grad_fn.next_functions]
    bn.eval()
    x = lib.tensor(rng.normal(size=shape), dtype=dtype, requires_grad=True)
    y = bn(x)
    y.sum().backward()
    seen["eval_out"], seen["eval_grad_x"] = numpy_of(y), numpy_of(x.grad)
    seen["eval_grad_fn"] = type(y.grad_fn).__name__
    return seen


@pytest.mark.parametrize("options", OPTIONS, ids=str)
@pytest.mark.parametrize("shape", [(5, 3), (4, 3, 6)], ids=["NC", "NCL"])
def test_batchnorm1d_train_then_eval_matches_torch_in_float64(options, shape):
    torch_seen, _ = same_program(lambda lib: run_batches(lib, options, shape, seed=1), tolerance=TIGHT)
    assert torch_seen["grad_fn"] == "NativeBatchNormBackward0"


@given(seed=st.integers(0, 2**32 - 1), shape=st.sampled_from([(2, 1), (3, 4), (2, 2, 1), (3, 2, 5)]),
       momentum=st.sampled_from([0.1, 0.5, None]))
@ENGINE
def test_batchnorm1d_matches_torch_for_generated_batches(seed, shape, momentum):
    same_program(lambda lib: run_batches(lib, dict(momentum=momentum), shape, seed, num_batches=2), tolerance=TIGHT)


def test_batchnorm1d_float32_matches_torch_closely():
    # float32 sums over M = 48 values per channel with |x| <= 14: sum_bound(float32, 48, 48·14) ≈ 3.8e-3
    # for a channel's sum, 8e-5 for its mean (1/48); times invstd (about 1/3) and weight (<= 2) the
    # outputs may be 5e-5 apart; the gradient sums Σ g·x̂ (|g x̂| <= 16) differ by at most 4.3e-3
    same_program(lambda lib: run_batches(lib, {}, (16, 5, 3), seed=2, dtype_name="float32"),
                 tolerance=dict(rtol=0, atol=sum_bound("float32", 48, 48 * 16)))


def test_running_var_moves_towards_the_unbiased_variance_and_normalising_uses_the_biased_one():
    # the one batch-norm fact most often got wrong, checked on numbers worked out by hand
    x = [[1.0], [3.0]]  # mean 2, biased variance 1, unbiased variance 2
    for lib in LIBS:
        bn = lib.nn.BatchNorm1d(1, momentum=1.0, dtype=lib.float64)
        out = bn(lib.tensor(x, dtype=lib.float64))
        assert numpy_of(bn.running_var).tolist() == [2.0]
        np.testing.assert_allclose(numpy_of(out).ravel(), [-1 / np.sqrt(1 + 1e-5), 1 / np.sqrt(1 + 1e-5)])


def test_versions_move_as_in_torch():
    # the kernel writes the running statistics without bumping their version; add_ bumps the count
    def versions(lib):
        bn = lib.nn.BatchNorm1d(2)
        before = [b._version for _, b in bn.named_buffers()]
        bn(lib.ones(3, 2))
        return before, [b._version for _, b in bn.named_buffers()]
    torch_versions, ref_versions = run_both(versions)
    assert ref_versions == torch_versions


def test_functional_batch_norm_takes_any_number_of_trailing_dims():
    def run(lib):
        rng = np.random.default_rng(3)
        x = lib.tensor(rng.normal(size=(2, 3, 2, 2)), requires_grad=True)
        weight = lib.tensor(rng.normal(size=3), requires_grad=True)
        out = lib.nn.functional.batch_norm(x, None, None, weight, None, training=True)
        (out ** 3).sum().backward()
        return numpy_of(out), numpy_of(x.grad), numpy_of(weight.grad)
    same_program(run, tolerance=TIGHT)


# -- BatchNorm1d: errors --------------------------------------------------------------------
ERROR_CASES = {
    "batch of one in training": lambda lib: lib.nn.BatchNorm1d(3)(lib.ones(1, 3)),
    "one position in training": lambda lib: lib.nn.BatchNorm1d(3)(lib.ones(1, 3, 1)),
    "1-d input": lambda lib: lib.nn.BatchNorm1d(3)(lib.ones(3)),
    "4-d input": lambda lib: lib.nn.BatchNorm1d(3)(lib.ones(2, 3, 2, 2)),
    "wrong channel count": lambda lib: lib.nn.BatchNorm1d(3)(lib.ones(4, 5)),
    "float64 input, float32 module": lambda lib: lib.nn.BatchNorm1d(3)(lib.ones(4, 3, dtype=lib.float64)),
    "integer input": lambda lib: lib.nn.functional.batch_norm(lib.ones(4, 3, dtype=lib.int32), None, None,
                                                              training=True),
    "eval without running stats": lambda lib: lib.nn.functional.batch_norm(lib.ones(4, 3), None, None),
    "only one running stat": lambda lib: lib.nn.functional.batch_norm(lib.ones(4, 3), lib.zeros(3), None,
                                                                     training=True),
    "zero eps in training": lambda lib: lib.nn.functional.batch_norm(lib.ones(4, 3), None, None,
                                                                    training=True, eps=0.0),
    "negative eps in eval": lambda lib: lib.nn.functional.batch_norm(lib.ones(4, 3), lib.zeros(3), lib.ones(3),
                                                                    eps=-1.0),
    "weight of the wrong size": lambda lib: lib.nn.functional.batch_norm(lib.ones(4, 3), None, None,
                                                                        lib.ones(4), training=True),
}


@pytest.mark.parametrize("case", ERROR_CASES)
def test_batch_norm_errors_are_torchs(case):
    same_error(ERROR_CASES[case], name=case)


def test_a_batch_of_one_is_fine_in_eval():
    def run(lib):
        bn = lib.nn.BatchNorm1d(3).eval()
        return numpy_of(bn(lib.tensor([[1.0, 2.0, 3.0]])))
    # eval: (x - running_mean) * invstd, a few float32 roundings per element, no sum: within 4 ulp
    same_program(run, tolerance=dict(rtol=4 * UNIT_ROUNDOFF["float32"], atol=0))


# -- Dataset, DataLoader, random_split --------------------------------------------------------
def loader_run(lib, seed, n, batch_size, shuffle, drop_last, generator_seed=None):
    lib.manual_seed(seed)
    data = lib.utils.data.TensorDataset(lib.arange(n), lib.arange(n) * 10.0)
    generator = None if generator_seed is None else lib.Generator().manual_seed(generator_seed)
    loader = lib.utils.data.DataLoader(data, batch_size=batch_size, shuffle=shuffle, drop_last=drop_last,
                                       generator=generator)
    epochs = [[(type(batch).__name__, batch[0].tolist(), batch[1].tolist()) for batch in loader]
              for _ in range(2)]
    # the loader draws from the global generator: what comes next must agree too
    return len(loader), epochs, lib.rand(2).tolist()


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 40), batch_size=st.integers(1, 9),
       shuffle=st.booleans(), drop_last=st.booleans(),
       generator_seed=st.one_of(st.none(), st.integers(0, 2**32 - 1)))
@ENGINE
def test_dataloader_batches_in_torchs_order(seed, n, batch_size, shuffle, drop_last, generator_seed):
    torch_run, ref_run = run_both(lambda lib: loader_run(lib, seed, n, batch_size, shuffle, drop_last, generator_seed))
    assert ref_run == torch_run


def test_dataloader_collates_a_map_style_dataset_like_torch():
    def run(lib):
        class Squares(lib.utils.data.Dataset):
            # a sample is (x, x**2, {'x': int, 'half': float}, 'label')
            def __len__(self):
                return 5

            def __getitem__(self, i):
                x = lib.tensor([float(i), -float(i)])
                return x, x ** 2, {"x": i, "half": i / 2}, f"item{i}"

        lib.manual_seed(0)
        batches = []
        for x, x2, info, labels in lib.utils.data.DataLoader(Squares(), batch_size=2, shuffle=True):
            batches.append((x.tolist(), x2.tolist(), info["x"].tolist(), str(info["x"].dtype).split(".")[-1],
                            info["half"].tolist(), str(info["half"].dtype).split(".")[-1], list(labels)))
        return batches
    torch_batches, ref_batches = run_both(run)
    assert ref_batches == torch_batches


def test_dataloader_fetches_a_batch_through_getitems_when_the_dataset_has_it():
    def run(lib):
        class Batched(lib.utils.data.Dataset):
            # fetches whole batches; says which indices each call was given
            def __init__(self):
                self.calls = []

            def __len__(self):
                return 7

            def __getitems__(self, indices):
                self.calls.append(list(indices))
                return [(lib.tensor(float(i)), i) for i in indices]

        dataset = Batched()
        lib.manual_seed(2)
        batches = [(x.tolist(), y.tolist()) for x, y in lib.utils.data.DataLoader(dataset, batch_size=3, shuffle=True)]
        return batches, dataset.calls
    torch_run, ref_run = run_both(run)
    assert ref_run == torch_run


def test_dataset_base_and_collate_errors_are_torchs():
    cases = [
        lambda lib: lib.utils.data.Dataset()[0],
        lambda lib: list(lib.utils.data.DataLoader([(1, 2.0), (1,)], batch_size=2)),
        lambda lib: list(lib.utils.data.DataLoader([object()] * 2, batch_size=2)),
        lambda lib: lib.utils.data.DataLoader(list(range(4)), batch_size=0),
        lambda lib: lib.utils.data.DataLoader(list(range(4)), shuffle=True,
                                              sampler=lib.utils.data.SequentialSampler(range(4))),
        lambda lib: lib.utils.data.TensorDataset(lib.ones(3), lib.ones(4)),
    ]
    for i, case in enumerate(cases):
        same_error(case, name=f"case {i}")


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.3, 0.4], [0.5, 0.5], [10, 0]], ids=str)
def test_random_split_gives_torchs_subsets(lengths):
    def run(lib):
        lib.manual_seed(5)
        with_default = [list(s.indices) for s in lib.utils.data.random_split(range(10), lengths)]
        generator = lib.Generator().manual_seed(42)
        parts = lib.utils.data.random_split(lib.utils.data.TensorDataset(lib.arange(10) * 2), lengths,
                                            generator=generator)
        return with_default, [[part[i][0].item() for i in range(len(part))] for part in parts]
    torch_split, ref_split = run_both(run)
    assert ref_split == torch_split
