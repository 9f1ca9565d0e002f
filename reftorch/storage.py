"""Storage and strides: where a tensor's numbers live and how an index finds them.

A Storage is a flat, one-dimensional buffer on one device. A tensor is a *view* of a
storage: ``size`` (shape), ``stride`` (elements to skip per step along each dim) and
``storage_offset``. Element ``t[i, j]`` lives at ``offset + i * stride[0] + j * stride[1]``.
The helpers below are small pure functions over tuples, so they can be read (and tested)
on their own.
"""
from __future__ import annotations

import functools
import math
import weakref

import numpy as np


class UntypedStorage:
    """A flat buffer (a 1-D NumPy array) that lives on one device: ``tensor.untyped_storage()``.

    Seen from a program it is bytes, as torch's (``size()``, ``[i]``, ``tolist()`` and its
    printout count and show bytes); reftorch's own code keeps the array in the tensor's dtype,
    and ``len()`` counts those elements."""

    __slots__ = ("data", "device", "__weakref__")

    def __init__(self, data: np.ndarray, device):
        self.data = data
        self.device = device
        on_alloc = device._backend_allocator
        if on_alloc is not None:  # accelerator memory is counted, and given back on free
            on_alloc.allocate(data.nbytes)
            weakref.finalize(self, on_alloc.free, data.nbytes)

    def __len__(self) -> int:
        return self.data.shape[0]

    def nbytes(self) -> int:
        return self.data.nbytes

    def data_ptr(self) -> int:
        return self.data.__array_interface__["data"][0]

    def _bytes(self) -> np.ndarray:
        return self.data.view(np.uint8)

    def size(self) -> int:
        return self.data.nbytes

    def element_size(self) -> int:
        return 1

    def tolist(self) -> list:
        return self._bytes().tolist()

    def __getitem__(self, index):
        if type(index) is slice:  # a storage over the same bytes, as torch's
            return UntypedStorage(self._bytes()[index], self.device)
        return int(self._bytes()[index])

    def __repr__(self) -> str:
        values = "".join(f"\n {byte}" for byte in self.tolist()) if self.data.nbytes else "\n "
        return (f"{values[1:]}\n[torch.storage.UntypedStorage(device={self.device}) of size "
                f"{self.data.nbytes}]")

    __str__ = __repr__


Storage = UntypedStorage  # the name reftorch's own modules use


@functools.lru_cache(maxsize=4096)  # (every new tensor asks: the shapes of a program repeat)
def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides: the last dim moves fastest. (2, 3, 4) -> (12, 4, 1)."""
    strides = []
    step = 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def is_contiguous(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """torch's rule: row-major, except that dims of size 1 may have any stride."""
    if 0 in shape:
        return True
    expected = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n == 1:
            continue
        if s != expected:
            return False
        expected *= n
    return True


def storage_index(index: tuple[int, ...], strides: tuple[int, ...], offset: int = 0) -> int:
    """Logical index -> position in the flat storage."""
    return offset + sum(i * s for i, s in zip(index, strides))


def numel(shape: tuple[int, ...]) -> int:
    return math.prod(shape)


def view_strides(old_shape, old_strides, new_shape):
    """Strides that let ``new_shape`` view the same memory, or None if no such strides exist.

    Dims of the old shape are grouped into runs that are contiguous with each other; a
    view may regroup elements only inside one such run. This is the test torch applies
    before ``view`` (which then raises) or ``reshape`` (which then copies).
    """
    if len(old_shape) == 0:  # a 0-dim tensor views as any shape of ones
        return (1,) * len(new_shape)
    if numel(old_shape) == 0:
        return contiguous_strides(new_shape)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = old_strides[-1] if old_strides else 1
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        # end of a run of memory-contiguous dims: the new dims must tile exactly this run
        if tensor_d == 0 or (
            old_shape[tensor_d - 1] != 1
            and old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride
        ):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_strides)


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """Align shapes on the right; each dim must match or be 1."""
    result: tuple[int, ...] = ()
    for shape in shapes:
        result = _broadcast_pair(result, tuple(shape))
    return result


def _broadcast_pair(a, b):
    # torch checks from the last dim backwards and reports the first clash it meets
    ndim = max(len(a), len(b))
    out = [1] * ndim
    for d in range(ndim - 1, -1, -1):
        size_a = a[d - ndim + len(a)] if d - ndim + len(a) >= 0 else 1
        size_b = b[d - ndim + len(b)] if d - ndim + len(b) >= 0 else 1
        if size_a != size_b and size_a != 1 and size_b != 1:
            raise RuntimeError(
                f"The size of tensor a ({size_a}) must match the size of tensor b ({size_b}) "
                f"at non-singleton dimension {d}"
            )
        out[d] = size_b if size_a == 1 else size_a
    return tuple(out)


def expand_strides(shape, strides, target_shape):
    """Broadcasting as stride 0: a dim of size 1 (or a missing leading dim) repeats for free."""
    extra = len(target_shape) - len(shape)
    if extra < 0:
        raise RuntimeError(
            f"expand: the number of sizes provided ({len(target_shape)}) must be greater or "
            f"equal to the number of dimensions in the tensor ({len(shape)})"
        )
    new_strides = []
    for d, n in enumerate(target_shape):
        if d < extra:
            if n < 0:
                raise RuntimeError(
                    f"The expanded size of the tensor ({n}) isn't allowed in a leading, "
                    "non-existing dimension 0"
                )
            new_strides.append(0)
            continue
        old_n, old_s = shape[d - extra], strides[d - extra]
        if n == -1 or n == old_n:
            new_strides.append(old_s)
        elif old_n == 1:
            new_strides.append(0)
        else:
            raise RuntimeError(
                f"The expanded size of the tensor ({n}) must match the existing size ({old_n}) "
                f"at non-singleton dimension {d}.  Target sizes: {list(target_shape)}.  "
                f"Tensor sizes: {list(shape)}"
            )
    resolved = tuple(shape[d - extra] if n == -1 else n for d, n in enumerate(target_shape))
    return resolved, tuple(new_strides)


def dense_layout(array: np.ndarray):
    """(flat buffer, strides in elements) for an array whose memory is dense.

    NumPy results keep the memory order of their inputs (as torch's do), so a result can be
    transposed in memory; we recover its flat buffer without copying. Returns None when the
    array is not dense (then the caller copies).
    """
    itemsize = array.itemsize
    if array.flags.c_contiguous:
        # torch's row-major strides (NumPy gives an empty array stride 0, torch 1)
        return array.reshape(-1), contiguous_strides(array.shape)
    order = sorted(range(array.ndim), key=lambda d: -array.strides[d])
    in_memory_order = array.transpose(order)
    if not in_memory_order.flags.c_contiguous:
        return None
    return in_memory_order.reshape(-1), tuple(s // itemsize for s in array.strides)


def elementwise_strides(shape, operand_strides) -> tuple[int, ...]:
    """The strides torch gives an element-wise result (TensorIterator's rule).

    Dims are ordered from fastest to slowest by the operands' strides: the first operand
    whose strides differ for two dims decides (broadcast dims, stride 0, have no say; equal
    strides put the smaller dim first). The result is dense in that order, so a permuted
    input gives a permuted result. ``operand_strides`` are already broadcast to ``shape``.
    """
    return _dense_in_operand_order(shape, operand_strides, empty_dims_count_as_one=False)


def _dense_in_operand_order(shape, operand_strides, empty_dims_count_as_one) -> tuple[int, ...]:
    """Dense strides with the dims ordered as TensorIterator orders them (see above)."""
    ndim = len(shape)
    order = list(range(ndim - 1, -1, -1))  # fastest first

    def should_swap(d0, d1):
        for strides in operand_strides:
            s0, s1 = strides[d0], strides[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    for i in range(1, ndim):  # insertion sort that stops at the first "keep"
        d1 = i
        for d0 in range(i - 1, -1, -1):
            decision = should_swap(order[d0], order[d1])
            if decision > 0:
                order[d0], order[d1] = order[d1], order[d0]
                d1 = d0
            elif decision < 0:
                break
    strides = [0] * ndim
    step = 1
    for d in order:
        strides[d] = step
        step *= shape[d] if shape[d] or not empty_dims_count_as_one else 1
    return tuple(strides)


def is_non_overlapping_and_dense(shape, strides) -> bool:
    """torch's test: sorted by stride, the dims tile one block of memory exactly.

    Dims of size 0 or 1 sort last and end the test (they can take no room of their own)."""
    if len(shape) == 1:
        return shape[0] < 2 or strides[0] == 1
    order = sorted(range(len(shape)), key=lambda d: (shape[d] < 2, strides[d] if shape[d] >= 2 else 0))
    required = 1
    for d in order:
        if shape[d] < 2:
            return True
        if strides[d] != required:
            return False
        required *= shape[d]
    return True


def preserve_format_strides(shape, strides) -> tuple[int, ...]:
    """The strides of a copy made with torch's ``memory_format=torch.preserve_format``
    (``clone``, ``empty_like``, ``.to(dtype)``, ...).

    A dense, non-overlapping source keeps its strides exactly (a transposed tensor copies
    as a transposed tensor). Otherwise the copy is dense, with dims in the source's stride
    order (torch's ``infer_dense_strides``): a sliced transpose stays column-major, an
    expanded dim (stride 0) keeps its row-major place.
    """
    shape, strides = tuple(shape), tuple(strides)
    if is_non_overlapping_and_dense(shape, strides):
        return strides
    # a dim of size 0 counts as 1 here (no element lives there)
    return _dense_in_operand_order(shape, (strides,), empty_dims_count_as_one=True)


def broadcast_strides(shape, strides, target_shape) -> tuple[int, ...]:
    """An operand's strides seen from the broadcast result: 0 where it repeats."""
    extra = len(target_shape) - len(shape)
    return (0,) * extra + tuple(
        0 if n == 1 and target_shape[extra + d] != 1 else st
        for d, (n, st) in enumerate(zip(shape, strides)))


# torch's memory formats, as the values reftorch's copies take (``clone(memory_format=...)``)
contiguous_format = "contiguous"   # row-major
preserve_format = None             # the source's own layout, where it is dense
