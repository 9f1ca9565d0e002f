"""A minimal TensorDataset and DataLoader: enough to batch a small data set."""
from __future__ import annotations


class TensorDataset:
    def __init__(self, *tensors):
        n = tensors[0].shape[0]
        if any(t.shape[0] != n for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __len__(self):
        return self.tensors[0].shape[0]

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)


class DataLoader:
    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False):
        self.dataset, self.batch_size, self.shuffle, self.drop_last = dataset, batch_size, shuffle, drop_last

    def __len__(self):
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def __iter__(self):
        from .. import dtypes
        from ..functions import arange, empty
        from ..random import Generator, randperm
        n = len(self.dataset)
        # as torch's DataLoader: every epoch draws a base seed (for workers) from the default
        # generator, then a shuffling one draws its own seed and permutes with a fresh Generator
        empty((), dtype=dtypes.int64).random_()
        if self.shuffle:
            seed = int(empty((), dtype=dtypes.int64).random_().item())
            order = randperm(n, generator=Generator().manual_seed(seed))
        else:
            order = arange(n)
        for start in range(0, n, self.batch_size):
            index = order[start:start + self.batch_size]
            if self.drop_last and index.numel() < self.batch_size:
                return
            yield self.dataset[index]
