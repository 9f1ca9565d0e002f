"""Embeddings: a lookup table of learned vectors, one row per token id.

``embedding(input, weight)`` is ``weight[input]``: row i of the table for each id i. Its backward
adds each incoming gradient row into the row of the table it came from (ids seen twice get two
additions; ``padding_idx``'s row gets none). ``embedding_bag`` looks up a *bag* of ids at a time
and reduces the rows (sum, mean or max) without making the (bags, ids, dim) tensor in between.
"""
from __future__ import annotations

import numpy as np

from .. import functions as F
from ..autograd.graph import Node
from ..autograd.grad_mode import no_grad
from ..functions import _needs_grad, _record, _wrap, check_not_double, ops
from ..functions.embeddings import check_in_range, check_indices
from . import init
from .module import Module
from .parameter import Parameter


def _renorm_rows(weight, indices, max_norm, norm_type):
    """Rows looked up whose norm exceeds max_norm are scaled down to it, in place (torch's
    embedding_renorm_, outside the graph)."""
    with no_grad():
        for i in np.unique(indices._np.reshape(-1)).tolist():
            row = weight[i]
            norm = row.norm(norm_type).item()
            if norm > max_norm:
                row.mul_(max_norm / (norm + 1e-7))


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """Row ``input[...]`` of ``weight`` for every id: shape ``input.shape + (embedding_dim,)``; the
    op is ``torch.embedding`` (functions/embeddings.py), its node EmbeddingBackward0."""
    if padding_idx is not None:
        if padding_idx > 0 and padding_idx >= weight.size(0) or padding_idx < -weight.size(0):
            raise AssertionError("Padding_idx must be within num_embeddings")
        if padding_idx < 0:
            padding_idx = weight.size(0) + padding_idx
    else:
        padding_idx = -1
    if sparse:
        raise NotImplementedError("reftorch has no sparse tensors: use sparse=False")
    if max_norm is not None:
        check_indices(input, "embedding")
        _renorm_rows(weight, input, max_norm, norm_type)
    return ops.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


class EmbeddingBagBackward0(Node):
    """Each bag's gradient row goes back to the rows of its ids: all of them (sum, times the
    sample's weight), shared (mean), or to the id that held each maximum (max).

    Written by hand, not declared: torch's op (``_embedding_bag``) returns three bookkeeping
    tensors (offset2bag, bag_size, max_indices) this implementation does not make."""

    def backward(self, grad):
        check_not_double(grad, self.name())
        g = grad._np
        out = np.zeros((self._num_weights, g.shape[-1]), dtype=g.dtype)
        ids, bag_of, scale, argmax = self._ids, self._bag_of, self._scale, self._argmax
        if argmax is not None:
            for bag in range(g.shape[0]):
                for d in range(g.shape[1]):
                    if argmax[bag, d] >= 0:
                        out[argmax[bag, d], d] += g[bag, d]
            grads = [out]
        else:
            rows = g[bag_of] * scale[:, None].astype(g.dtype)
            np.add.at(out, ids, rows)
            grads = [out]
        result = [_wrap(grads[0], grad._device)]
        if self._weights is not None:
            w = self._weight_rows
            sample_grad = np.einsum("ij,ij->i", g[bag_of], w).astype(self._weights.dtype)
            result.append(_wrap(sample_grad, grad._device))
        return tuple(result) if self._weights is not None else (result[0],)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """One row per bag: the sum, mean or max of the rows of the bag's ids. A 2-D input is one bag
    per row; a 1-D input is cut into bags at ``offsets``."""
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it "
                         f"must have the same shape as the input ({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        offsets_list = list(range(0, input.numel(), input.size(1)))
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        offsets_list = offsets.tolist()
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if max_norm is not None:
        _renorm_rows(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            f"embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for mode='sum' "
            f"(got mode='{mode}'). Please open a feature request on GitHub.")
    check_indices(input, "embedding_bag")
    if padding_idx is not None and padding_idx < 0:
        padding_idx = weight.size(0) + padding_idx
    ids_all = input._np.reshape(-1).astype(np.int64)
    check_in_range(ids_all, weight.size(0))
    ends = offsets_list[1:] + ([] if include_last_offset else [len(ids_all)])
    starts = offsets_list[:len(ends)]
    table, dim = weight._np, weight.size(1)
    out = np.zeros((len(starts), dim), dtype=table.dtype)
    argmax = np.full((len(starts), dim), -1, dtype=np.int64) if mode == "max" else None
    kept_ids, bag_of, scale = [], [], []
    samples = None if per_sample_weights is None else per_sample_weights._np.reshape(-1)
    for bag, (start, end) in enumerate(zip(starts, ends)):
        members = [(k, int(ids_all[k])) for k in range(start, end) if ids_all[k] != padding_idx]
        for position, (k, i) in enumerate(members):  # one row at a time, in order, as torch adds them
            row = table[i] if samples is None else table[i] * samples[k]
            if mode == "max":
                better = (row > out[bag]) | (position == 0)
                out[bag] = np.where(better, row, out[bag])
                argmax[bag] = np.where(better, i, argmax[bag])
            else:
                out[bag] += row
            kept_ids.append(i)
            bag_of.append(bag)
        if mode == "mean" and members:
            out[bag] /= table.dtype.type(len(members))
        if members:
            scale += [1.0 / len(members) if mode == "mean" else 1.0] * len(members)
    result = _wrap(out, weight._device)
    if _needs_grad(weight, per_sample_weights):
        node = EmbeddingBagBackward0()
        node._num_weights = weight.size(0)
        node._ids = np.asarray(kept_ids, dtype=np.int64)
        node._bag_of = np.asarray(bag_of, dtype=np.int64)
        node._argmax = argmax
        node._weights = samples
        if samples is not None:  # d out / d row = the sample's weight; d out / d weight_k = the row
            kept = [k for start, end in zip(starts, ends) for k in range(start, end) if ids_all[k] != padding_idx]
            node._scale = samples[kept].astype(np.float64)
            node._weight_rows = table[node._ids]
        else:
            node._scale = np.asarray(scale, dtype=np.float64)
        inputs = (weight,) if per_sample_weights is None else (weight, per_sample_weights)
        _record(node, inputs, result)
    return result


class Embedding(Module):
    """A table of ``num_embeddings`` vectors of size ``embedding_dim``, N(0, 1) at first (the
    ``padding_idx`` row zero, and never trained)."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = _padding_index(padding_idx, num_embeddings, "Padding_idx must be within num_embeddings")
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        if _weight is None:
            self.weight = Parameter(F.empty((num_embeddings, embedding_dim), device=device, dtype=dtype),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not _freeze)
        self.sparse = sparse

    def reset_parameters(self):
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self):
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input):
        return embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                         self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        s = "{num_embeddings}, {embedding_dim}"
        if self.padding_idx is not None:
            s += ", padding_idx={padding_idx}"
        if self.max_norm is not None:
            s += ", max_norm={max_norm}"
        if self.norm_type != 2:
            s += ", norm_type={norm_type}"
        if self.scale_grad_by_freq is not False:
            s += ", scale_grad_by_freq={scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s.format(**self.__dict__)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, sparse=False):
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, _freeze=freeze,
                   padding_idx=padding_idx, max_norm=max_norm, norm_type=norm_type,
                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


class EmbeddingBag(Module):
    """An Embedding followed by a sum, mean or max over each bag of ids."""

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                 mode="mean", sparse=False, _weight=None, include_last_offset=False, padding_idx=None, device=None,
                 dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        self.padding_idx = _padding_index(padding_idx, num_embeddings, "padding_idx must be within num_embeddings")
        if _weight is None:
            self.weight = Parameter(F.empty((num_embeddings, embedding_dim), device=device, dtype=dtype))
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight)
        self.mode, self.sparse, self.include_last_offset = mode, sparse, include_last_offset

    reset_parameters = Embedding.reset_parameters
    _fill_padding_idx_with_zero = Embedding._fill_padding_idx_with_zero

    def forward(self, input, offsets=None, per_sample_weights=None):
        return embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                             self.mode, self.sparse, per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        s = "{num_embeddings}, {embedding_dim}"
        if self.max_norm is not None:
            s += ", max_norm={max_norm}"
        if self.norm_type != 2:
            s += ", norm_type={norm_type}"
        if self.scale_grad_by_freq is not False:
            s += ", scale_grad_by_freq={scale_grad_by_freq}"
        s += ", mode={mode}"
        if self.padding_idx is not None:
            s += ", padding_idx={padding_idx}"
        return s.format(**{k: repr(v) for k, v in self.__dict__.items()})

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                        mode="mean", sparse=False, include_last_offset=False, padding_idx=None):
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, max_norm=max_norm,
                  norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
                  include_last_offset=include_last_offset, padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag


def _padding_index(padding_idx, num_embeddings, message):
    if padding_idx is None:
        return None
    if padding_idx > 0 and padding_idx >= num_embeddings or padding_idx < -num_embeddings:
        raise AssertionError(message)
    return num_embeddings + padding_idx if padding_idx < 0 else padding_idx
