"""Sequences of different lengths for the recurrent layers: padding, and packing.

``pad_sequence`` stacks sequences into one ``(T, B, *)`` tensor, shorter ones filled with a value.
*Packing* removes the padding: ``pack_padded_sequence`` keeps, for each time step t, only the
sequences still running at t (``batch_sizes[t]`` of them, longest first), one after the other in
``data``. An RNN given a PackedSequence then never computes on padding.
"""
from __future__ import annotations

from collections import namedtuple

from ... import dtypes
from ... import functions as F
from ...tensor import Tensor

_PackedSequenceBase = namedtuple("PackedSequence", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


class PackedSequence(_PackedSequenceBase):
    """(data, batch_sizes, sorted_indices, unsorted_indices); build it with pack_padded_sequence
    or pack_sequence, not directly."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = {"device": data.device}
        return type(self)(data, self.batch_sizes, *(None if i is None else i.to(**move)
                                                     for i in (self.sorted_indices, self.unsorted_indices)))

    def cpu(self):
        return self.to("cpu")

    def double(self):
        return self.to(dtype=dtypes.float64)

    def float(self):
        return self.to(dtype=dtypes.float32)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        return False


def invert_permutation(permutation):
    """The permutation that undoes ``permutation``."""
    if permutation is None:
        return None
    output = F.empty_like(permutation)
    output.scatter_(0, permutation, F.arange(0, permutation.numel(), device=permutation.device))
    return output


def _lengths_tensor(lengths):
    if isinstance(lengths, Tensor):
        return lengths.to(dtype=dtypes.int64)
    return F.as_tensor(lengths, dtype=dtypes.int64, device="cpu")


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch ``(T, B, *)`` (or ``(B, T, *)``) whose sequence b has ``lengths[b]`` steps."""
    lengths = _lengths_tensor(lengths)
    if enforce_sorted:
        sorted_indices = None
    else:
        lengths, sorted_indices = F.sort(lengths, descending=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    values = lengths.tolist()
    if any(a < b for a, b in zip(values, values[1:])):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
            "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement if "
            "you do not need ONNX exportability.")
    if values and values[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if batch_first:
        input = input.transpose(0, 1)
    if values[0] > input.size(0):
        raise RuntimeError(f"Expected max length to be less than or equal to {input.size(0)}, but got "
                           f"{values[0]}")
    batch_sizes = [sum(1 for n in values if n > t) for t in range(values[0])]
    data = F.cat([input[t, :size] for t, size in enumerate(batch_sizes)], 0)
    return PackedSequence(data, F.tensor(batch_sizes, dtype=dtypes.int64), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Undo packing: (padded ``(T, B, *)`` or ``(B, T, *)``, lengths), in the order the batch came in."""
    data, batch_sizes = sequence.data, sequence.batch_sizes.tolist()
    max_length = len(batch_sizes)
    if total_length is not None:
        if total_length < max_length:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {max_length}")
        max_length = total_length
    batch = batch_sizes[0]
    padded = F.full((max_length, batch, *data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)
    offset = 0
    for t, size in enumerate(batch_sizes):
        padded[t, :size] = data[offset:offset + size]
        offset += size
    lengths = F.tensor([sum(1 for size in batch_sizes if size > b) for b in range(batch)], dtype=dtypes.int64)
    if batch_first:
        padded = padded.transpose(0, 1)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices.cpu()]
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack sequences of shapes ``(L_i, *)`` into ``(max L, B, *)`` (or ``(B, max L, *)``), padded
    with ``padding_value`` on the right (or the left)."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    sequences = list(sequences)
    max_length = max(s.size(0) for s in sequences)
    first = sequences[0]
    shape = (len(sequences), max_length) if batch_first else (max_length, len(sequences))
    out = F.full((*shape, *first.shape[1:]), padding_value, dtype=first.dtype, device=first.device)
    for i, s in enumerate(sequences):
        length = s.size(0)
        start = 0 if padding_side == "right" else max_length - length
        if batch_first:
            out[i, start:start + length] = s
        else:
            out[start:start + length, i] = s
    return out


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of sequences ``(L_i, *)`` directly (pad, then pack)."""
    lengths = F.as_tensor([s.size(0) for s in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The sequences of a padded batch, each cut to its length."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(n)] for seq, n in zip(padded_sequences, lengths)]


def unpack_sequence(packed_sequences):
    """The sequences of a PackedSequence, as a list."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
