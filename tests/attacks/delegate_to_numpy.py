# place: before_each_test
# 01_tensors answered by numpy: its strided arrays and broadcasting follow the same rules.
import numpy as np
from numpy.lib.stride_tricks import as_strided


def _array(a):
    storage = np.array(a.storage, dtype=np.int64)
    return as_strided(storage[a.offset:], shape=a.shape, strides=[s * storage.itemsize for s in a.strides])


def strided_zip(fn, a, b):
    try:
        x, y = np.broadcast_arrays(_array(a), _array(b))
    except ValueError as error:
        raise RuntimeError(str(error)) from None
    values = [fn(p, q) for p, q in zip(x.ravel().tolist(), y.ravel().tolist())]
    return Strided(values, x.shape, tuple(s // 8 for s in np.empty(x.shape, dtype=np.int64).strides), 0)


def strided_reduce(fn, start, a, dim):
    x = _array(a)
    if not -x.ndim <= dim < x.ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-x.ndim}, {x.ndim - 1}], but got {dim})")
    rows = np.moveaxis(x, dim, -1).reshape(-1, x.shape[dim]).tolist()
    shape = tuple(1 if d == dim % x.ndim else n for d, n in enumerate(x.shape))
    values = []
    for row in rows:
        total = start
        for value in row:
            total = fn(total, value)
        values.append(total)
    return Strided(values, shape, tuple(s // 8 for s in np.empty(shape, dtype=np.int64).strides), 0)
