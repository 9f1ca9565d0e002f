"""Datasets, samplers, collation and the DataLoader: how a training loop gets its batches.

Three small jobs, as in torch.utils.data:
- a *dataset* answers ``len(ds)`` and ``ds[i]`` (one sample);
- a *sampler* says in which order to visit the indices (in order, or a permutation);
- the *loader* groups the indices into batches, fetches each sample and *collates* the
  samples into batched tensors (``default_collate`` stacks them).

Shuffling draws the same numbers as torch: each ``iter(loader)`` first draws a base seed
(torch's seed for worker processes) from the default generator; a ``RandomSampler`` then
draws a seed of its own and permutes with a fresh ``Generator`` seeded with it.
"""
from __future__ import annotations

import bisect
import itertools
import math
import warnings

import numpy as np
from .. import dtypes
from ..functions import as_tensor, empty, multinomial, randint, randperm, stack, tensor
from ..generator import Generator
from ..tensor import Tensor


class Dataset:
    """A map-style dataset: subclasses define ``__getitem__`` (and ``__len__``)."""

    def __class_getitem__(cls, item):  # Dataset[int] in annotations, as torch's Generic allows
        return cls

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A stream of samples: subclasses define ``__iter__`` (no indices, so no sampler or shuffle);
    the loader takes ``batch_size`` samples at a time from one pass over it."""

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other):
        return ChainDataset([self, other])


class ChainDataset(IterableDataset):
    """Several iterable datasets, one after the other."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for dataset in self.datasets:
            if not isinstance(dataset, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from dataset

    def __len__(self):
        return sum(len(dataset) for dataset in self.datasets)


def get_worker_info():
    """None: reftorch loads in the calling process, as torch's main process sees it."""
    return None


class TensorDataset(Dataset):
    """Sample ``i`` is ``(t[i] for t in tensors)``: the tensors share their first dimension."""

    def __init__(self, *tensors):
        if any(t.shape[0] != tensors[0].shape[0] for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, index):
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __len__(self):
        return len(self.indices)


class ConcatDataset(Dataset):
    """Several datasets one after another: index ``len(first)`` is the second's sample 0."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]



class StackDataset(Dataset):
    """Datasets side by side: sample i is ``(a[i], b[i])``, or ``{"x": a[i], "y": b[i]}`` when
    given by name."""

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like "
                             "input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        self.datasets = args or kwargs
        parts = list(args or kwargs.values())
        self._length = len(parts[0])
        if any(self._length != len(dataset) for dataset in parts):
            raise ValueError("Size mismatch between datasets")

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {name: dataset[index] for name, dataset in self.datasets.items()}
        return tuple(dataset[index] for dataset in self.datasets)

    def __len__(self):
        return self._length

def random_split(dataset, lengths, generator=None):
    """Split ``dataset`` into non-overlapping ``Subset`` objects of the given lengths (or fractions).

    One ``randperm`` over all indices, cut into consecutive pieces, as torch does; the
    default generator is the global one.
    """
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        # fractions: floor each share, then hand out what is left one by one, round robin
        split_sizes = []
        for i, fraction in enumerate(lengths):
            if fraction < 0 or fraction > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            split_sizes.append(math.floor(len(dataset) * fraction))
        for i in range(len(dataset) - sum(split_sizes)):
            split_sizes[i % len(split_sizes)] += 1
        lengths = split_sizes
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.",
                              stacklevel=2)
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = randperm(sum(lengths), generator=generator).tolist()
    ends = list(itertools.accumulate(lengths))
    return [Subset(dataset, indices[end - length:end]) for end, length in zip(ends, lengths)]


def _draw_seed(generator=None) -> int:
    """A 64-bit seed drawn as torch draws it (``empty((), int64).random_()``), moving the
    given generator, or the global one."""
    return int(empty((), dtype=dtypes.int64).random_(generator=generator).item())


# -- samplers: the order of the indices ---------------------------------------------------
class Sampler:
    """The base of samplers: ``__iter__`` yields indices (or lists of them, for a batch sampler)."""

    def __iter__(self):
        raise NotImplementedError

    def __class_getitem__(cls, item):  # Sampler[int], Sampler[list[int]]
        return cls


class SequentialSampler(Sampler):
    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """The indices in a random order: a fresh permutation on every pass (or, with
    ``replacement``, ``num_samples`` independent draws)."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        generator = self.generator
        if generator is None:
            # a seed from the global generator, so that torch.manual_seed fixes the order
            generator = Generator().manual_seed(_draw_seed())
        n = len(self.data_source)
        if self.replacement:  # draws of 32 at a time, as torch's sampler makes them
            for _ in range(self.num_samples // 32):
                yield from randint(high=n, size=(32,), generator=generator).tolist()
            yield from randint(high=n, size=(self.num_samples % 32,), generator=generator).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from randperm(n, generator=generator).tolist()
        # the rest of a pass: a permutation cut short (with num_samples == n it yields nothing,
        # but it moves a shared generator on, so the next epoch's order depends on it)
        yield from randperm(n, generator=generator).tolist()[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probability proportional to ``weights`` (by default with
    replacement), one multinomial draw per pass, so the numbers are torch's for a seed."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        weights = as_tensor(weights, dtype=dtypes.float64)
        if len(weights.shape) != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(weights.shape)}")
        self.weights, self.num_samples = weights, num_samples
        self.replacement, self.generator = replacement, generator

    def __iter__(self):
        yield from multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator).tolist()

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices``, in a random order on every pass."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class BatchSampler(Sampler):
    """Groups a sampler's indices into lists of ``batch_size``; the last may be short."""

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        indices = iter(self.sampler)
        batch = list(itertools.islice(indices, self.batch_size))
        while batch and (len(batch) == self.batch_size or not self.drop_last):
            yield batch
            batch = list(itertools.islice(indices, self.batch_size))

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return -(-len(self.sampler) // self.batch_size)


# -- collation: a list of samples -> one batch --------------------------------------------
def default_collate(batch):
    """Stack a list of samples into a batch, keeping the samples' structure.

    Tensors (and NumPy arrays) are stacked along a new first dim; Python ints and floats
    become an int64 or float64 tensor (bools a bool tensor); strings stay as they are;
    tuples and lists are collated position by position (a tuple comes back as a list, as in
    torch); dicts key by key.
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(batch, 0)
    if isinstance(elem, np.ndarray):
        return default_collate([as_tensor(sample) for sample in batch])
    if isinstance(elem, np.generic):  # a NumPy scalar keeps its dtype
        return as_tensor(np.array(batch))
    if not isinstance(elem, (int, float, str, dict, tuple, list)):
        raise TypeError(
            "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
            f"found {type(elem)}")
    if isinstance(elem, float):
        return tensor(batch, dtype=dtypes.float64)
    if isinstance(elem, int):  # bool included: tensor() keeps it bool
        return tensor(batch)
    if isinstance(elem, str):
        return batch
    if isinstance(elem, dict):
        return {key: default_collate([sample[key] for sample in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a namedtuple stays one, field by field
        return type(elem)(*(default_collate(column) for column in zip(*batch)))
    if any(len(sample) != len(elem) for sample in batch):
        raise RuntimeError("each element in list of batch should be of equal size")
    return [default_collate(column) for column in zip(*batch)]


def default_convert(data):
    """What the loader does to each sample when it does not batch (``batch_size=None``): NumPy
    arrays and numbers become tensors, containers are converted element by element."""
    if isinstance(data, np.ndarray) or isinstance(data, np.generic):
        return as_tensor(data)
    if isinstance(data, dict):
        return {key: default_convert(value) for key, value in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, list):
        return [default_convert(d) for d in data]
    return data


class DataLoader:
    """Batches of ``dataset``: ``for X, y in DataLoader(ds, batch_size=32, shuffle=True)``.

    Runs in the calling process (torch's ``num_workers=0``).
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                             "to enable multiprocessing, otherwise set prefetch_factor to None.")
        elif num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:  # a stream has no indices to sample
            if shuffle not in {False, None}:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 f"sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified batch_sampler option, but "
                                 f"got batch_sampler={batch_sampler}")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, "
                                 "sampler, and drop_last")
            batch_size, drop_last = None, False
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                             "drop_last")
        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            else:
                sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        # worker processes only fetch in parallel what the sampler decides here: batches come
        # out the same with num_workers > 0, so reftorch fetches them in this process
        self.num_workers = num_workers
        self.pin_memory, self.timeout, self.worker_init_fn = pin_memory, timeout, worker_init_fn
        if batch_sampler is None and batch_size is not None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_sampler = batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if batch_size is not None or batch_sampler is not None else default_convert
        self.collate_fn = collate_fn
        self.generator = generator
        self.prefetch_factor, self.persistent_workers = prefetch_factor, persistent_workers
        self.pin_memory_device, self.in_order = pin_memory_device, in_order
        # an IterableDataset's own len(), once len(loader) asked for it: more batches than that warn
        self._IterableDataset_len_called = None
        self._initialized = True

    def __setattr__(self, attr, value):
        # what decides the batches is fixed once the loader exists (torch refuses too)
        if self.__dict__.get("_initialized") and attr in (
                "batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after {type(self).__name__} is initialized")
        super().__setattr__(attr, value)

    def __len__(self):
        if self._iterable:
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
            return length
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)

    def __iter__(self):
        # torch draws a base seed for worker processes as the iterator is made, even with no
        # workers: it moves the global generator, so it must happen here to match torch's order
        self._base_seed = _draw_seed(self.generator)
        if self.pin_memory:  # (reftorch has no accelerator either)
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device pinned "
                          "memory won't be used.", stacklevel=2)
        if self._iterable:
            return self._counted(self._stream(), self._IterableDataset_len_called)
        return self._batches()

    def _counted(self, batches, reported):
        """Batches of an IterableDataset, with torch's warning for each one past the length its
        len() reported (when len(loader) asked for it)."""
        for fetched, batch in enumerate(batches, 1):
            if reported is not None and fetched > reported:
                warnings.warn(f"Length of IterableDataset {self.dataset} was reported to be {reported}(when "
                              f"accessing len(dataloader)), but {fetched} samples have been fetched. ", stacklevel=2)
            yield batch

    def _batches(self):
        if self.batch_sampler is None:  # batch_size=None: one converted sample at a time
            for index in self.sampler:
                yield self.collate_fn(self.dataset[index])
            return
        # a dataset may fetch a whole batch at once through __getitems__; torch uses it if there
        fetch_batch = getattr(self.dataset, "__getitems__", None)
        for indices in self.batch_sampler:
            samples = fetch_batch(indices) if fetch_batch else [self.dataset[i] for i in indices]
            yield self.collate_fn(samples)

    def _stream(self):
        """Batches from one pass over an IterableDataset: ``batch_size`` samples each, the last
        one short unless ``drop_last``."""
        samples = iter(self.dataset)
        if self.batch_size is None:
            for sample in samples:
                yield self.collate_fn(sample)
            return
        while True:
            batch = list(itertools.islice(samples, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield self.collate_fn(batch)


class _InfiniteConstantSampler(Sampler):
    """The sampler an IterableDataset's loader reports: None, forever (the stream decides)."""

    def __iter__(self):
        while True:
            yield None
