"""Embedding: a lookup table of rows, one per token id (torch's Embedding.cpp).

``embedding(weight, indices)`` is row ``i`` of ``weight`` for each id ``i``. Its backward,
``embedding_dense_backward``, adds each incoming gradient row into the row of the table it
came from, one id at a time in order (an id seen twice gets two additions; ``padding_idx``'s
row gets none). nn.functional.embedding (nn/sparse.py) normalises ``padding_idx`` and applies
``max_norm`` before calling the op, as torch's Python does.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..tensor import _scalar_type_name as _scalar_name
from ._support import _wrap
from .codegen import ops


def check_indices(indices, op, position=1):
    if indices.dtype not in (dtypes.int64, dtypes.int32):
        raise RuntimeError(
            f"Expected tensor for argument #{position} 'indices' to have one of the following scalar types: Long, Int; but "
            f"got torch.{_scalar_name(indices.dtype)}Tensor instead (while checking arguments for {op})")


def check_in_range(ids, num_rows):
    if ids.size and (ids.min() < 0 or ids.max() >= num_rows):
        raise IndexError("index out of range in self")


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """Row ``indices[...]`` of ``weight`` for every id: shape ``indices.shape + (weight.size(1),)``."""
    check_indices(indices, "embedding")
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    ids = indices._np.reshape(-1)
    check_in_range(ids, weight._shape[0])
    values = weight._np[ids].reshape(tuple(indices._shape) + (weight._shape[1],))
    return _wrap(np.ascontiguousarray(values), weight._device)


def embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    """grad_weight[i] = the sum of the gradient rows whose id was i (none for padding_idx;
    each divided by how often i appeared, with scale_grad_by_freq)."""
    check_indices(indices, "embedding_backward", 2)
    ids = indices._np.reshape(-1)
    rows = grad_output._np.reshape(-1, grad_output._shape[-1])
    keep = (ids >= 0) & (ids < num_weights) & (ids != padding_idx)  # (torch's kernel skips ids out of range)
    ids, rows = ids[keep], rows[keep]
    if scale_grad_by_freq:
        counts = np.bincount(ids, minlength=num_weights)
        rows = rows / counts[ids][:, None].astype(rows.dtype)
    out = np.zeros((num_weights, rows.shape[-1]), dtype=grad_output._np.dtype)
    np.add.at(out, ids, rows)  # in order, one row at a time, as torch's CPU kernel adds them
    return _wrap(out, grad_output._device)


def embedding_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq, sparse):
    """The weight's gradient: dense (reftorch has no sparse tensors)."""
    if sparse:
        raise NotImplementedError("reftorch has no sparse tensors: use sparse=False")
    return ops.embedding_dense_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq)


def embedding_dense_double_backward(grad, indices, padding_idx):
    """The gradient of embedding_dense_backward for its grad_output: the rows looked up again
    (padding_idx's zero), as torch's embedding_dense_double_backward."""
    rows = ops.index_select(grad, 0, indices.reshape(-1))
    if padding_idx >= 0:
        rows = rows.masked_fill((indices == padding_idx).reshape(-1, 1), 0)
    return rows.view(tuple(indices.shape) + (grad.shape[-1],))
