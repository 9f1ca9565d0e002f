"""torch.utils.data beyond map-style datasets: IterableDataset streams, WeightedRandomSampler's
draws for a seed, namedtuple samples, batch_size=None, a Sampler subclass, and the loader refusing
changes to what decides its batches."""
from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest

from engine_support import LIBS, assert_same, same_error, same_program, same_warnings

Pair = namedtuple("Pair", ["x", "y"])


def _stream(lib, n):
    class Counting(lib.utils.data.IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            for i in range(self.n):
                yield lib.tensor([float(i), 2.0 * i]), i % 3

        def __len__(self):
            return self.n
    return Counting(n)


@pytest.mark.parametrize("batch_size,drop_last", [(4, False), (4, True), (3, False), (None, False)])
def test_iterable_dataset_batches_and_length_are_torchs(batch_size, drop_last):
    def program(lib):
        lib.manual_seed(0)
        loader = lib.utils.data.DataLoader(_stream(lib, 10), batch_size=batch_size, drop_last=drop_last)
        batches = [batch for batch in loader]
        chained = list(lib.utils.data.DataLoader(_stream(lib, 2) + _stream(lib, 3), batch_size=2))
        return len(loader), batches, chained, lib.randn(2), lib.utils.data.get_worker_info()
    same_program(program)


@pytest.mark.parametrize("option", [{"shuffle": True}, {"sampler": [0, 1]}, {"batch_sampler": [[0]]}])
def test_iterable_dataset_refuses_sampling_options(option):
    same_error(lambda lib: lib.utils.data.DataLoader(_stream(lib, 3), **option))


@pytest.mark.parametrize("replacement", [True, False])
def test_weighted_random_sampler_draws_torchs_indices_for_a_seed(replacement):
    def program(lib):
        lib.manual_seed(7)
        weights = [0.1, 0.9, 0.4, 0.0, 2.5, 1.0]
        sampler = lib.utils.data.WeightedRandomSampler(weights, 5, replacement=replacement)
        first, second = list(sampler), list(sampler)
        seeded = lib.utils.data.WeightedRandomSampler(lib.tensor(weights), 4,
                                                      generator=lib.Generator().manual_seed(1))
        data = lib.utils.data.TensorDataset(lib.arange(6.0))
        loader = lib.utils.data.DataLoader(data, batch_size=2, sampler=sampler)
        return first, second, list(seeded), len(sampler), str(sampler.weights.dtype), [b for b in loader]
    same_program(program)


@pytest.mark.parametrize("bad", [dict(weights=[1.0, 2.0], num_samples=0), dict(weights=[1.0], num_samples=True),
                                 dict(weights=[[1.0, 2.0]], num_samples=2),
                                 dict(weights=[1.0], num_samples=1, replacement=1)])
def test_weighted_random_sampler_errors_are_torchs(bad):
    same_error(lambda lib: lib.utils.data.WeightedRandomSampler(**bad))


def test_namedtuple_samples_collate_into_a_namedtuple():
    def program(lib):
        samples = [Pair(lib.tensor([float(i)]), i) for i in range(5)]
        batches = list(lib.utils.data.DataLoader(samples, batch_size=2))
        return [type(b).__name__ for b in batches], [(b.x, b.y) for b in batches]
    same_program(program)


def test_batch_size_none_converts_each_sample():
    def program(lib):
        samples = [(np.array([i, i + 1]), {"label": np.float64(i)}) for i in range(3)]
        return list(lib.utils.data.DataLoader(samples, batch_size=None))
    theirs, mine = (program(lib) for lib in LIBS)
    for t, m in zip(theirs, mine):
        assert type(m) is type(t)
        assert_same(m[0], t[0])
        assert_same(m[1]["label"], t[1]["label"])


def test_a_sampler_subclass_drives_the_loader():
    def program(lib):
        class Reversed(lib.utils.data.Sampler[int]):
            def __init__(self, n):
                self.n = n

            def __iter__(self):
                return iter(range(self.n - 1, -1, -1))

            def __len__(self):
                return self.n
        data = lib.utils.data.TensorDataset(lib.arange(5.0))
        return list(lib.utils.data.DataLoader(data, batch_size=2, sampler=Reversed(5)))
    same_program(program)


@pytest.mark.parametrize("attribute", ["batch_size", "sampler", "drop_last", "dataset", "batch_sampler"])
def test_changing_what_decides_the_batches_after_init_raises(attribute):
    def program(lib):
        loader = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(lib.arange(4.0)), batch_size=2)
        loader.num_workers = 0  # other attributes may change
        setattr(loader, attribute, 1)
    same_error(program)


# -- ConcatDataset and the samplers' options -----------------------------------------------
def test_concat_dataset_and_the_samplers_options():
    def program(lib):
        lib.manual_seed(3)
        data = lib.utils.data
        ds = data.TensorDataset(lib.arange(10))
        both = data.ConcatDataset([ds, data.TensorDataset(lib.arange(5) * 10)])
        return (len(both), [both[i][0] for i in (0, 9, 10, 14, -1, -15)], both.cumulative_sizes,
                list(data.RandomSampler(ds, replacement=True, num_samples=40)),
                list(data.RandomSampler(ds, num_samples=13)), list(data.SubsetRandomSampler([3, 5, 7, 9])),
                [b[0] for b in data.DataLoader(ds + ds, batch_size=4, shuffle=True, num_workers=2)],
                [b[0] for b in data.DataLoader(ds, batch_sampler=data.BatchSampler(data.SequentialSampler(ds), 3, False))])
    same_program(program)
    same_error(lambda lib: lib.utils.data.ConcatDataset([lib.utils.data.TensorDataset(lib.arange(3))])[-4])
    same_error(lambda lib: lib.utils.data.RandomSampler(range(3), num_samples=0))
    same_error(lambda lib: lib.utils.data.RandomSampler(range(3), replacement=1))
    same_error(lambda lib: lib.utils.data.DataLoader(range(3), batch_size=2, batch_sampler=[[0]]))


@pytest.mark.parametrize("batch_size", [None, 2])
def test_iterable_dataset_longer_than_its_len_warns_for_each_extra_batch(batch_size):
    """torch compares the batches fetched with the dataset's len() (once len(loader) asked for it)."""
    def program(lib):
        class Undercounted(lib.utils.data.IterableDataset):
            def __iter__(self):
                return iter(range(7))

            def __len__(self):
                return 3

            def __repr__(self):  # (the warning names the dataset)
                return "Undercounted()"
        loader = lib.utils.data.DataLoader(Undercounted(), batch_size=batch_size)
        unasked = len(list(loader))  # len(loader) not asked yet: nothing to compare with
        return len(loader), unasked, [b.tolist() if hasattr(b, "tolist") else b for b in loader]
    said = same_warnings(program)
    assert len(said) == (4 if batch_size is None else 1)


def test_loader_options_that_need_worker_processes_and_pinned_memory_as_torch():
    def loader(lib, **options):
        return lib.utils.data.DataLoader(lib.utils.data.TensorDataset(lib.arange(4)), batch_size=2, **options)
    same_error(lambda lib: loader(lib, persistent_workers=True))
    same_error(lambda lib: loader(lib, prefetch_factor=2))
    assert len(same_warnings(lambda lib: [b[0].tolist() for b in loader(lib, pin_memory=True)])) == 1
    theirs, mine = ((d.prefetch_factor, d.persistent_workers, d.pin_memory_device)
                    for d in (loader(lib, num_workers=2) for lib in LIBS))
    assert mine == theirs


def test_stack_dataset_pairs_samples_by_position_or_name():
    def program(lib):
        data = lib.utils.data
        a, b = data.TensorDataset(lib.arange(3)), data.TensorDataset(lib.arange(3) * 10)
        by_name = data.StackDataset(x=a, y=b)
        return (data.StackDataset(a, b)[1], by_name[2], len(by_name),
                [batch for batch in data.DataLoader(by_name, batch_size=2)])
    same_program(program)
    same_error(lambda lib: lib.utils.data.StackDataset(range(2), range(3)))
    same_error(lambda lib: lib.utils.data.StackDataset(range(2), y=range(2)))
    same_error(lambda lib: lib.utils.data.StackDataset())
