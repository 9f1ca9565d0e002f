"""torch's order for adding up float32 and float64 numbers on the CPU (``sum``; ``mean`` is
that sum divided by the count).

Float addition is not associative: the order of a sum decides its last bits, and a loss
printed to its last digit, or a long training run, shows them. NumPy adds in its own pairwise
order; torch follows ATen's ``cascade_sum`` (aten/src/ATen/native/cpu/SumKernel.cpp) over
TensorIterator's loops. This file does what they do, one step each:

1. **Layout** (``_iterator``): TensorIterator puts the reduced dims first (innermost) and the
   kept ones after, each group sorted by stride, drops dims of size 1 and merges neighbours
   that are contiguous in memory. A full sum of a contiguous tensor is one dim.
2. **Loop**: the two innermost dims go to the kernel in one call (``_kernel_call``); each
   call *adds* its sums into the output, so outer reduced dims accumulate left to right.
3. **Kernel**: one of four loops, by layout. With L the vector's lanes (8 float32, 4 float64:
   256 bits in every build torch picks: an AVX512 CPU runs the sum's AVX2 build):
   - reduced dim contiguous, at least L long: each row in vectors of L, with 4 vector
     accumulators taking turns (``_row_sum``), then from 0 the leftover elements and the
     accumulated lanes, one by one (``_inner_vectorised``);
   - kept dim contiguous, at least L long: 4L columns at a time, each column its own
     cascade; the columns left over with ``_row_sum``'s 4 turns (``_outer``);
   - otherwise scalar loops: ``_row_sum`` along the reduced dim, or 4 columns at a time.
4. **Cascade** (``_cascade``): an accumulator adds rows in blocks of 16 (more for huge sizes),
   block sums in groups of 16, those in groups of 16, and the rest on top, so that only
   numbers of similar size meet. Every accumulator starts at +0.
5. **Threads**: with 32768 elements or more and several threads, a sum to one number is split
   in contiguous chunks, one per thread, whose sums are added up at the end; other sums
   split their outer kept dim, which moves where the column loops start (``_two_pass``,
   ``_parallel_split``). reftorch keeps torch's thread count for this (_parallel.py).

Everything is lane-wise: NumPy computes all the lanes, rows and outputs of one step at once,
so the cost is a few dozen array operations per sum, whatever its size.
"""
from __future__ import annotations

import numpy as np

from ._parallel import GRAIN_SIZE, get_num_threads

# Vectorized<T> of the sum loops: 256 bits whatever ATEN_CPU_CAPABILITY picks. The default and
# AVX2 builds have 256-bit vectors, and SumKernel.cpp registers its kernel with REGISTER_DISPATCH,
# not ALSO_REGISTER_AVX512_DISPATCH: an AVX512 CPU runs the AVX2 build of it (measured)
VECTOR_BYTES = 32
ILP = 4  # accumulators taking turns in row_sum, and columns at a time in the scalar loop


def lanes(dtype) -> int:
    """Vectorized<T>::size() in the sum's loops."""
    return VECTOR_BYTES // np.dtype(dtype).itemsize


# -- the accumulators: every function adds along axis 0, all other axes are lanes ---------------
def _sequential(terms):
    """0 + terms[0] + terms[1] + ..., left to right, each lane on its own."""
    rows, lanes = terms.shape[0], terms.shape[1:]
    if rows == 0:
        return np.zeros(lanes, terms.dtype)
    flat = np.ascontiguousarray(terms.reshape(rows, -1))
    if flat.shape[1] == 1:  # one lane: a running sum (accumulate never reorders)
        return np.add.accumulate(flat[:, 0])[-1].reshape(lanes)
    # NumPy reduces axis 0 of a C-contiguous (rows, lanes) array row after row, all lanes at
    # once (its pairwise summation is only for a reduced axis that is the innermost)
    return np.add.reduce(flat, axis=0).reshape(lanes)


def _sequential_groups(terms, size):
    """The left-to-right sums of consecutive groups of ``size`` rows."""
    groups = terms.reshape((terms.shape[0] // size, size) + terms.shape[1:])
    return _sequential(groups.swapaxes(0, 1))


def _ceil_log2(n: int) -> int:
    return 1 if n <= 2 else (n - 1).bit_length()


def _cascade(terms):
    """multi_row_sum: blocks of ``step`` rows from 0, block sums in groups of ``step``, those
    in groups of ``step`` again, all complete groups of groups together; at the end the rows
    after the last block, then each level's incomplete group."""
    step = 1 << max(4, _ceil_log2(terms.shape[0]) // 4)
    blocks = terms.shape[0] // step
    total = _sequential(terms[blocks * step:])
    if blocks == 0:
        return total
    sums = _sequential_groups(terms[:blocks * step], step)
    levels = []
    for _ in range(2):
        complete = sums.shape[0] // step
        levels.append(_sequential(sums[complete * step:]))
        sums = _sequential_groups(sums[:complete * step], step)
    levels.append(_sequential(sums))
    for level in levels:
        total = total + level
    return total


def _row_sum(terms):
    """row_sum: rows dealt in turn to 4 cascades; the rows left over go to the first, which
    then takes the other three."""
    quads = terms.shape[0] // ILP
    partials = _cascade(terms[:quads * ILP].reshape((quads, ILP) + terms.shape[1:]))
    total = partials[0]
    for term in terms[quads * ILP:]:
        total = total + term
    for partial in partials[1:]:
        total = total + partial
    return total


def _inner_vectorised(terms, width):
    """vectorized_inner_sum: the reduced dim (axis 0) contiguous. Vectors of ``width`` lanes
    through _row_sum; then from 0 the elements after the last vector and the lanes."""
    vectors = terms.shape[0] // width
    lane_sums = _row_sum(terms[:vectors * width].reshape((vectors, width) + terms.shape[1:]))
    return _sequential(np.concatenate([terms[vectors * width:], lane_sums]))


def _outer(terms, block):
    """vectorized_outer_sum (``block`` = 4 vectors) and scalar_outer_sum (``block`` = 4): the
    kept dim is the last axis; whole blocks of columns each cascade, the rest take _row_sum."""
    columns = terms.shape[-1] // block * block
    if columns == terms.shape[-1]:
        return _cascade(terms)
    if columns == 0:
        return _row_sum(terms)
    return np.concatenate([_cascade(terms[..., :columns]), _row_sum(terms[..., columns:])], axis=-1)


def _kernel_call(terms, in_strides):
    """One call of cascade_sum's loop on a (size0, size1) block: ``terms`` has the reduced dim
    first and dim 1 last (other axes between are more calls). The loop is chosen from the
    input's strides (in elements) and the block's sizes."""
    width = lanes(terms.dtype)
    if in_strides[0] == 1 and terms.shape[0] >= width:
        return _inner_vectorised(terms, width)
    if in_strides[1] == 1 and terms.shape[-1] >= width:
        return _outer(terms, ILP * width)
    if in_strides[0] < in_strides[1]:
        return _row_sum(terms)
    return _outer(terms, ILP)


# -- TensorIterator's layout ------------------------------------------------------------------
def _iterator(shape, in_strides, out_strides):
    """The iterator's dims, innermost first, as (size, input stride, output stride) triples:
    reorder_dimensions (an insertion sort; reduced dims, whose output stride is 0, go first),
    then coalesce_dimensions. Dims of size 1 are dropped (they would be coalesced away)."""
    dims = [d for d in reversed(range(len(shape))) if shape[d] != 1]

    def should_swap(d0, d1):  # 1: d0 goes after d1; -1: stays before; 0: undecided
        for strides, is_output in ((out_strides, True), (in_strides, False)):
            s0, s1 = strides[d0], strides[d1]
            if is_output and (s0 == 0) != (s1 == 0):
                return 1 if s1 == 0 else -1
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    for i in range(1, len(dims)):
        moving = i
        for before in range(i - 1, -1, -1):
            comparison = should_swap(dims[before], dims[moving])
            if comparison > 0:
                dims[before], dims[moving] = dims[moving], dims[before]
                moving = before
            elif comparison < 0:
                break
    merged = []
    for d in dims:
        size, i_stride, o_stride = shape[d], in_strides[d], out_strides[d]
        if merged:
            last = merged[-1]
            if last[0] * last[1] == i_stride and last[0] * last[2] == o_stride:
                merged[-1] = (last[0] * size, last[1], last[2])
                continue
        merged.append((size, i_stride, o_stride))
    return merged


def _serial_sum(base, offset, dims):
    """The loop over the iterator (``dims``, dim 0 reduced) run on one thread: the sums, one per
    kept position, in loop order (the outer kept dims, then dim 1's when kept)."""
    itemsize = base.itemsize
    if len(dims) == 1:  # a 1-d loop is called as (size, 1), dim 1's strides 0
        dims = dims + [(1, 0, 0)]
    order = [dims[0]] + dims[:0:-1]
    terms = _view(base, offset, [d[0] for d in order], [d[1] for d in order])
    sums = _kernel_call(terms, (dims[0][1], dims[1][1]))
    # outer reduced dims (output stride 0) are the last axes of ``sums``: each call added into
    # the same outputs, in loop order
    outer_reduced = sum(1 for d in dims[1:] if d[2] == 0)
    kept = sums.shape[:sums.ndim - outer_reduced]
    if outer_reduced:
        flat = sums.reshape(kept + (-1,))
        sums = _sequential(flat.transpose((flat.ndim - 1,) + tuple(range(flat.ndim - 1))))
    return sums


def _flat_base(a):
    """``a``'s memory as a contiguous 1-d array from its first element to its last (strides
    are >= 0)."""
    if a.flags.c_contiguous:
        return a.reshape(-1)
    span = 1 + sum((n - 1) * s // a.itemsize for n, s in zip(a.shape, a.strides))
    return np.lib.stride_tricks.as_strided(a, shape=(span,), strides=(a.itemsize,), writeable=False)


def _view(flat, start, shape, strides):
    """The elements of contiguous 1-d ``flat`` from ``start`` on, at ``strides`` (in elements):
    as_strided, without its cost per call."""
    itemsize = flat.itemsize
    return np.ndarray(shape, flat.dtype, buffer=flat, offset=start * itemsize,
                      strides=[s * itemsize for s in strides])


# -- threads -----------------------------------------------------------------------------------
def _unravel(index, sizes):
    position = []
    for size in sizes:
        position.append(index % size)
        index //= size
    return position


def _two_pass(base, dims, threads):
    """two_pass_reduction: a sum to one number split in contiguous chunks of the loop's range,
    one per thread, each summed into its own slot of a buffer of ``threads`` zeros (serial_for_each
    calls the kernel on each 2-d block of the chunk); then the buffer summed like a tensor."""
    numel = int(np.prod([d[0] for d in dims]))
    sizes = [d[0] for d in dims]
    strides = [d[1] for d in dims] + [0]  # a 1-d loop's dim 1 has stride 0
    used = min(threads, -(-numel // GRAIN_SIZE)) if numel > GRAIN_SIZE else 1
    chunk = -(-numel // used)
    buffer = np.zeros(threads, base.dtype)
    for thread in range(used):
        begin, end = thread * chunk, min(numel, (thread + 1) * chunk)
        contributions = []
        offset = begin
        while offset < end:
            position = _unravel(offset, sizes)
            step0 = min(sizes[0] - position[0], end - offset)
            step1 = 1
            if step0 == sizes[0] and len(sizes) > 1:
                step1 = min(sizes[1] - position[1], (end - offset) // sizes[0])
            start = sum(p * s for p, s in zip(position, strides))
            terms = _view(base, start, (step0, step1), strides[:2])
            contributions.extend(_kernel_call(terms, strides[:2]))
            offset += step0 * step1
        buffer[thread] = _sequential(np.array(contributions, base.dtype))
    return _kernel_call(buffer[:, None], (1, 0))[0]


def _parallel_split(dims, threads, itemsize):
    """parallel_dim_reduction's split: the outermost kept dim with at least one column per
    thread (else the largest), cut in ``threads`` ranges; ranges of a dim contiguous in the
    input are rounded to 128 bytes. Returns (dim, [(begin, end), ...])."""
    best = len(dims) - 1
    for d in range(len(dims) - 1, -1, -1):
        if dims[d][2] == 0:
            break
        if dims[d][0] >= threads:
            best = d
            break
        if dims[d][0] > dims[best][0]:
            best = d
    columns = dims[best][0]
    if columns <= 1:
        return best, [(0, columns)]
    used = min(threads, columns)
    chunk = -(-columns // used)
    multiple = 128 // itemsize
    ranges = []
    for thread in range(used):
        begin, end = thread * chunk, min(columns, (thread + 1) * chunk)
        if begin >= end:
            continue
        if dims[best][1] == 1:
            begin -= begin % multiple
            if end != columns:
                end -= end % multiple
        if begin != end:
            ranges.append((begin, end))
    return best, ranges


def to_dtype(a, dtype):
    """``Tensor.to(dtype)`` as torch converts a sum's input: the same strides when the tensor is
    dense and non-overlapping (the sum's order follows them), otherwise contiguous."""
    if a.dtype == dtype:
        return a
    dims = sorted((stride, size) for size, stride in zip(a.shape, a.strides) if size != 1)
    expected = a.itemsize
    for stride, size in dims:
        if stride != expected:
            return np.ascontiguousarray(a, dtype)
        expected *= size
    return a.astype(dtype, order="K")


def torch_sum(a, dims, keepdim):
    """``a.sum(dims, keepdim)`` for a float32 or float64 array of any strides, added in the
    order torch's CPU kernel adds (``dims`` None: every dim)."""
    ndim = a.ndim
    reduced = set(range(ndim)) if dims is None else {d % max(ndim, 1) for d in dims}
    out_shape = tuple(1 if d in reduced else n for d, n in enumerate(a.shape))
    final_shape = out_shape if keepdim else tuple(n for d, n in enumerate(a.shape) if d not in reduced)
    if a.size == 0:
        return np.zeros(final_shape, a.dtype)
    itemsize = a.itemsize
    if any(n > 1 and (s < 0 or s % itemsize) for n, s in zip(a.shape, a.strides)):
        a = np.ascontiguousarray(a)  # no torch tensor has such strides; NumPy's views may
    out_strides, step = [0] * ndim, 1
    for d in reversed(range(ndim)):
        out_strides[d] = 0 if d in reduced else step
        step *= out_shape[d]
    iterator = _iterator(a.shape, [s // itemsize for s in a.strides], out_strides)
    zero = a.dtype.type(0)
    if not iterator or iterator[0][2] != 0:  # nothing is really reduced: out = 0 + x
        return (a + zero).reshape(final_shape)
    base = _flat_base(a)
    threads = get_num_threads()
    numel = a.size
    if numel >= GRAIN_SIZE and threads > 1:
        if all(d[2] == 0 for d in iterator):
            return np.asarray(_two_pass(base, iterator, threads) + zero).reshape(final_shape)
        split, ranges = _parallel_split(iterator, threads, itemsize)
        if split == 1 and len(ranges) > 1:  # the column loop restarts at each thread's first column
            pieces = []
            for begin, end in ranges:
                narrowed = list(iterator)
                narrowed[1] = (end - begin, iterator[1][1], iterator[1][2])
                pieces.append(_serial_sum(base, begin * iterator[1][1], narrowed))
            sums = np.concatenate(pieces, axis=-1)
        else:  # each thread's outputs are computed as on one thread
            sums = _serial_sum(base, 0, iterator)
    else:
        sums = _serial_sum(base, 0, iterator)
    out = np.empty(out_shape, a.dtype)
    kept = [d for d in iterator if d[2] != 0][::-1]  # loop order: the outermost first
    _view(out.reshape(-1), 0, [d[0] for d in kept], [d[2] for d in kept])[...] = sums + zero
    return out.reshape(final_shape)
