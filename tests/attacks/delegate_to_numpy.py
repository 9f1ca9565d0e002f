# place: before_each_test
# 01_tensors answered by numpy: its no-copy reshape and broadcasting follow the same rules.
import numpy as np
from numpy.lib.stride_tricks import as_strided


def _array(shape, strides):
    size = 1 + sum((n - 1) * s for n, s in zip(shape, strides))
    return as_strided(np.empty(size, dtype=np.int8), shape=shape, strides=strides)


def can_view(shape, strides, new_shape):
    try:
        _array(shape, strides).view().shape = new_shape
    except AttributeError:
        return False
    return True


def expanded_strides(shape, strides, target_shape):
    try:
        return np.broadcast_to(_array(shape, strides), target_shape).strides
    except ValueError as error:
        raise RuntimeError(str(error)) from None
