"""Matrix products: mm, mv, dot, bmm, addmm, and matmul, which picks one of them by the dims.

Each side of a product is saved only for the other side's gradient (as torch saves):
d(A @ B) = dA @ B + A @ dB. The gradient helpers are after the products.
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from .. import dtypes
from ..dispatch import kernel
from ..storage import broadcast_shapes
from ..tensor import Tensor, _cpp_type_name
from ..tensor import _scalar_type_name as _scalar_name
from ._support import _devices, _view_of, _wrap
from .codegen import ops


def _check_matmul_dtypes(a, b, what):
    if a.dtype is not b.dtype:
        if what == "dot":
            raise RuntimeError(
                "dot : expected both vectors to have same dtype, but found "
                f"{_scalar_name(a.dtype)} and {_scalar_name(b.dtype)}"
            )
        raise RuntimeError(
            "expected m1 and m2 to have the same dtype, but got: "
            f"{_cpp_type_name(a.dtype)} != {_cpp_type_name(b.dtype)}"
        )


# the CPU kernel that refuses a bool product in torch (after the shape checks)
_PRODUCT_KERNEL_NAMES = {"mm": "addmm_impl_cpu_", "mv": "addmv_impl_cpu", "bmm": "bmm", "dot": "dot",
                         "addmm": "addmm_impl_cpu_"}


def _check_not_bool_product(op, a):
    if a.dtype is dtypes.bool:
        raise NotImplementedError(f"\"{_PRODUCT_KERNEL_NAMES[op]}\" not implemented for 'Bool'")


def _matrix_product(op, a, b):
    """The product in one kernel."""
    _check_not_bool_product(op, a)
    dev = _devices(a, b)
    return _wrap(kernel("matmul", dev)(a._np, b._np), dev)


def mm(input, mat2):
    if input.dim() != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.dim() != 2:
        raise RuntimeError("mat2 must be a matrix")
    _check_matmul_dtypes(input, mat2, "mm")
    if input._shape[1] != mat2._shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({input._shape[0]}x{input._shape[1]} "
            f"and {mat2._shape[0]}x{mat2._shape[1]})"
        )
    return _matrix_product("mm", input, mat2)


def mv(input, vec):
    if input.dim() != 2 or vec.dim() != 1:
        raise RuntimeError("vector + matrix @ vector expected, got "
                           f"1, {input.dim()}, {vec.dim()}")
    if input.dtype is not vec.dtype:
        n = _scalar_name
        raise RuntimeError(
            f"addmv input tensors must have the same dtype, but got {n(vec.dtype)}, "
            f"{n(input.dtype)}, and {n(vec.dtype)}"
        )
    if input._shape[1] != vec._shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({input._shape[0]}), mat ({input._shape[0]}x{input._shape[1]}), "
            f"vec ({vec._shape[0]})"
        )
    return _matrix_product("mv", input, vec)


def dot(input, tensor):
    other = tensor
    if input.dim() != 1 or other.dim() != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input.dim()}D and {other.dim()}D tensors"
        )
    _check_matmul_dtypes(input, other, "dot")
    if input._shape != other._shape:
        raise RuntimeError(
            "inconsistent tensor size, expected tensor [%d] and src [%d] to have the same "
            "number of elements, but got %d and %d elements respectively"
            % (input._shape[0], other._shape[0], input._shape[0], other._shape[0])
        )
    _check_not_bool_product("dot", input)
    dev = _devices(input, other)
    return _wrap(kernel("matmul", dev)(input._np, other._np), dev)


def bmm(input, mat2):
    if input.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if input.dtype is not mat2.dtype:  # torch words bmm's check its own way
        raise RuntimeError(
            f"expected scalar type {_scalar_name(input.dtype)} but found {_scalar_name(mat2.dtype)}")
    if input._shape[0] != mat2._shape[0] or input._shape[2] != mat2._shape[1]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{input._shape[0]}, {input._shape[2]}] but got: [{mat2._shape[0]}, {mat2._shape[1]}]."
        )
    return _matrix_product("bmm", input, mat2)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)``: what a Linear layer computes, in one op."""
    if mat1.dim() != 2 or mat2.dim() != 2:
        raise RuntimeError("mat1 must be a matrix, got %d-D tensor" % mat1.dim())
    if mat1.dtype is not mat2.dtype:  # torch words addmm's checks its own way
        raise RuntimeError(
            f"mat1 and mat2 must have the same dtype, but got {_scalar_name(mat1.dtype)} and "
            f"{_scalar_name(mat2.dtype)}")
    if isinstance(input, Tensor) and input.dtype is not mat2.dtype:
        raise RuntimeError(
            f"self and mat2 must have the same dtype, but got {_scalar_name(input.dtype)} and "
            f"{_scalar_name(mat2.dtype)}")
    if mat1._shape[1] != mat2._shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({mat1._shape[0]}x{mat1._shape[1]} "
            f"and {mat2._shape[0]}x{mat2._shape[1]})"
        )
    _check_not_bool_product("addmm", mat1)
    dev = _devices(input, mat1, mat2)
    try:
        return _wrap(kernel("addmm", dev)(input._np, mat1._np, mat2._np, beta, alpha), dev)
    except ValueError:
        raise RuntimeError(
            f"The expanded size of the tensor ({mat2._shape[1]}) must match the existing size "
            f"({input._shape[-1]}) at non-singleton dimension 1.  Target sizes: "
            f"[{mat1._shape[0]}, {mat2._shape[1]}].  Tensor sizes: {list(input._shape)}"
        ) from None


def _add_product(input, first, second, a, b, beta, alpha, target_shape):
    """``beta * input + alpha * (a @ b)`` in one kernel (addmm's), ``a`` and ``b`` the arrays of
    the tensors ``first`` and ``second``, ``input`` broadcast to the product's shape (torch's
    expand, with its words when it cannot)."""
    if input.dtype is not first.dtype or first.dtype is not second.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_name(first.dtype)} but found "
                           f"{_scalar_name(input.dtype if input.dtype is not first.dtype else second.dtype)}")
    if broadcast_shapes_or_none(input._shape, target_shape) != tuple(target_shape):
        raise RuntimeError(
            f"The expanded size of the tensor ({target_shape[-1]}) must match the existing size "
            f"({input._shape[-1]}) at non-singleton dimension {len(target_shape) - 1}.  Target sizes: "
            f"{list(target_shape)}.  Tensor sizes: {list(input._shape)}")
    dev = _devices(input, first, second)
    return _wrap(kernel("addmm", dev)(input._np, a, b, beta, alpha), dev)


def broadcast_shapes_or_none(shape, target):
    try:
        return tuple(np.broadcast_shapes(tuple(shape), tuple(target)))
    except ValueError:
        return None


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * (batch1 @ batch2)``, matrix by matrix."""
    if batch1.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if batch1._shape[0] != batch2._shape[0] or batch1._shape[2] != batch2._shape[1]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{batch1._shape[0]}, {batch1._shape[2]}] but got: [{batch2._shape[0]}, {batch2._shape[1]}].")
    shape = (batch1._shape[0], batch1._shape[1], batch2._shape[2])
    return _add_product(input, batch1, batch2, batch1._np, batch2._np, beta, alpha, shape)


def addmv(input, mat, vec, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat @ vec)``."""
    if not (mat.dim() == 2 and vec.dim() == 1 and input.dim() <= 1):
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.dim()}, {mat.dim()}, {vec.dim()}")
    if mat._shape[1] != vec._shape[0] or (input.numel() != mat._shape[0] and input.numel() != 1):
        raise RuntimeError(f"size mismatch, got input ({input._shape[0] if input.dim() else 1}), mat "
                           f"({mat._shape[0]}x{mat._shape[1]}), vec ({vec._shape[0]})")
    return _add_product(input, mat, vec, mat._np, vec._np, beta, alpha, (mat._shape[0],))


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """``beta * input + alpha * outer(vec1, vec2)``."""
    if vec1.dim() != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.dim()}-D")
    if vec2.dim() != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec2, but got {vec2.dim()}-D")
    shape = (vec1._shape[0], vec2._shape[0])
    return _add_product(input, vec1, vec2, vec1._np[:, None], vec2._np[None, :], beta, alpha, shape)


def _check_inplace_size(input, shape):
    if tuple(input._shape) != tuple(shape):
        raise RuntimeError(f"Bad in-place call: input tensor size {list(input._shape)} and output tensor size "
                           f"{list(shape)} should match")


def check_baddbmm_(input, batch1, batch2, *, beta=1, alpha=1):
    if batch1.dim() == 3 and batch2.dim() == 3:
        _check_inplace_size(input, (batch1._shape[0], batch1._shape[1], batch2._shape[2]))


def check_addmv_(input, mat, vec, *, beta=1, alpha=1):
    if mat.dim() == 2:
        _check_inplace_size(input, (mat._shape[0],))


def check_addr_(input, vec1, vec2, *, beta=1, alpha=1):
    if input.dim() != 2:
        raise RuntimeError(f"2D tensor expected, got {input.dim()}D tensor for input")
    if vec1.dim() == 1 and vec2.dim() == 1:
        _check_inplace_size(input, (vec1._shape[0], vec2._shape[0]))


def _should_fold(tensor1, tensor2):
    """torch's rule for computing a batched product as one mm/mv on a folded matrix."""
    larger_first = tensor1.dim() >= tensor2.dim()
    t1 = tensor1 if larger_first else ops.transpose(tensor2, -2, -1)
    dim_t2 = tensor2.dim() if larger_first else tensor1.dim()
    if not (t1.dim() >= 3 and dim_t2 <= 2):
        return False
    # folding keeps the small operand's gradient small (no batch of copies of it)
    if (tensor2 if larger_first else tensor1)._requires_grad:
        return True
    if tensor1.dim() == 2:
        return False
    if t1.numel() == 0:
        return True
    shape, stride = t1._shape, t1._stride
    return builtins.all(stride[i] == stride[i + 1] * shape[i + 1] for i in range(t1.dim() - 2))


def squeeze_result(input, dim):
    """torch squeezes a fresh result in place (``squeeze_``): its own node, not a view."""
    dim = dim % builtins.max(input.dim(), 1)
    out = _view_of(input, input._shape[:dim] + input._shape[dim + 1:],
                   input._stride[:dim] + input._stride[dim + 1:], input._offset)
    out._base = None
    out._bump_version()
    return out


def matmul(input, other):
    """Picks dot, mv, mm, a folded mm/mv, or bmm by the dims, following torch's matmul
    step by step, so that the recorded graph is the same as torch's."""
    da, db = input.dim(), other.dim()
    if da == 0 or db == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D"
        )
    if da == 1 and db == 1:
        return ops.dot(input, other)
    if da == 2 and db == 1:
        return ops.mv(input, other)
    if da == 1 and db == 2:
        return ops._squeeze_result(ops.mm(ops.unsqueeze(input, 0), other), 0)
    if da == 2 and db == 2:
        return ops.mm(input, other)
    if _should_fold(input, other):
        flip = db > da  # fold the larger one: (A @ B) = (B^T @ A^T)^T
        t1 = ops.transpose(other, -2, -1) if flip else input
        t2 = (ops.t(input) if da == 2 else input) if flip else other
        _check_matmul_dtypes(t1, t2, "mm")
        output_shape = t1._shape[:-1]
        folded = ops.reshape(t1, math.prod(output_shape), t1._shape[-1])
        if t2.dim() == 2:
            output = ops._unsafe_view(ops.mm(folded, t2), output_shape + (t2._shape[1],))
            return ops.contiguous(ops.transpose(output, -2, -1)) if flip else output
        return ops._unsafe_view(ops.mv(folded, t2), output_shape)
    # batched on both sides: broadcast the batch dims, then one bmm (worded as bmm's check)
    if input.dtype is not other.dtype:
        raise RuntimeError(
            f"expected scalar type {_scalar_name(input.dtype)} but found {_scalar_name(other.dtype)}")
    n = input._shape[-2] if da > 1 else 1
    m1 = input._shape[-1]
    batch1 = input._shape[:builtins.max(da - 2, 0)]
    m2 = other._shape[-2] if db > 1 else other._shape[0]
    p = other._shape[-1] if db > 1 else 1
    batch2 = other._shape[:builtins.max(db - 2, 0)]
    if da == 3 and db == 3 and batch1[0] != batch2[0]:
        if batch1[0] == 1 and input._requires_grad:
            return ops.matmul(ops.squeeze(input, 0), other)
        if batch2[0] == 1 and other._requires_grad:
            return ops.matmul(input, ops.squeeze(other, 0))
    batch = broadcast_shapes(batch1, batch2)
    n_batch = math.prod(batch)
    a3 = ops.reshape(ops.expand(input, batch + (n, m1)), n_batch, n, m1)
    vector_rhs = db == 1
    b3 = ops.expand(other, batch + ((m2,) if vector_rhs else (m2, p)))
    b3 = ops.unsqueeze(ops.reshape(b3, n_batch, m2), 2) if vector_rhs else ops.reshape(b3, n_batch, m2, p)
    output_shape = batch + ((n,) if da > 1 else ()) + ((p,) if db > 1 else ())
    product = ops.bmm(a3, b3)
    if vector_rhs:
        product = ops.squeeze(product, -1)
    return ops._unsafe_view(product, output_shape)


def outer(input, vec2):
    return ops.reshape(input, input._shape[0], 1) * vec2


# -- triangular parts -------------------------------------------------------------------------
def _triangle(input, diagonal, lower):
    if input.dim() < 2:
        raise RuntimeError(f"{'tril' if lower else 'triu'}: input tensor must have at least 2 dimensions")
    values = (np.tril if lower else np.triu)(input._np, diagonal)
    return _wrap(np.ascontiguousarray(values), input._device)


def tril(input, diagonal=0):
    """The lower triangle of the last two dims (on and below ``diagonal``), zeros above."""
    return _triangle(input, diagonal, lower=True)


def triu(input, diagonal=0):
    """The upper triangle of the last two dims (on and above ``diagonal``), zeros below."""
    return _triangle(input, diagonal, lower=False)


# -- einsum -----------------------------------------------------------------------------------
def _einsum_terms(equation, operands):
    """Each operand's letters (an ellipsis becomes capital letters for the dims it covers), and
    the output's; an implicit output is the letters used once, in alphabetical order."""
    equation = equation.replace(" ", "")
    inputs, arrow, output = equation.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation"
                           if len(operands) > len(terms) else
                           "einsum(): fewer operands were provided than specified in the equation")
    spare = iter("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    ellipsis_letters = ""
    expanded = []
    for term, operand in zip(terms, operands):
        if "..." in term:
            covered = operand.dim() - (len(term) - 3)
            while len(ellipsis_letters) < covered:
                ellipsis_letters = next(spare) + ellipsis_letters
            term = term.replace("...", ellipsis_letters[len(ellipsis_letters) - covered:])
        if len(term) != operand.dim():
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(term)}) does not "
                               f"match the number of dimensions ({operand.dim()}) for operand "
                               f"{len(expanded)} and no ellipsis was given")
        expanded.append(term)
    if arrow:
        output = output.replace("...", ellipsis_letters)
    else:
        counts = {}
        for term in expanded:
            for letter in term:
                counts[letter] = counts.get(letter, 0) + 1
        output = ellipsis_letters + "".join(sorted(c for c, n in counts.items() if n == 1 and c.islower()))
    return expanded, output


def _diagonal_out(operand, term):
    """A letter repeated in one operand (``'ii->i'``) reads the diagonal (a view), put back
    where the letter first stood, as torch's einsum does."""
    while len(set(term)) != len(term):
        letter = next(c for c in term if term.count(c) > 1)
        first, second = term.index(letter), term.index(letter, term.index(letter) + 1)
        operand = ops.movedim(ops.diagonal(operand, 0, first, second), -1, first)
        term = term[:second] + term[second + 1:]
    return operand, term


def _contract_pair(a, la, b, lb, keep):
    """Sum over the letters a and b share but ``keep`` does not, with one batched matmul:
    a -> (batch, a's own, shared), b -> (batch, shared, b's own), as torch's einsum does."""
    batch = [c for c in la if c in lb and c in keep]
    shared = [c for c in la if c in lb and c not in keep]
    own_a = [c for c in la if c not in lb]
    own_b = [c for c in lb if c not in la]
    sizes = {**{c: a.shape[la.index(c)] for c in la}, **{c: b.shape[lb.index(c)] for c in lb}}
    for c in batch:  # a batch letter of size 1 on one side broadcasts
        sizes[c] = builtins.max(a.shape[la.index(c)], b.shape[lb.index(c)])
    if not shared:  # nothing to sum: a broadcast product (torch's einsum multiplies then, no bmm)
        a_full = a.permute([la.index(c) for c in batch + own_a]).reshape(
            [a.shape[la.index(c)] for c in batch + own_a] + [1] * len(own_b))
        b_full = b.permute([lb.index(c) for c in batch + own_b]).reshape(
            [b.shape[lb.index(c)] for c in batch] + [1] * len(own_a) + [sizes[c] for c in own_b])
        return a_full * b_full, "".join(batch + own_a + own_b)
    prod = lambda letters: math.prod(sizes[c] for c in letters)  # noqa: E731
    a3 = a.permute([la.index(c) for c in batch + own_a + shared]).expand(
        [sizes[c] for c in batch] + [sizes[c] for c in own_a + shared]).reshape(prod(batch), prod(own_a), prod(shared))
    b3 = b.permute([lb.index(c) for c in batch + shared + own_b]).expand(
        [sizes[c] for c in batch] + [sizes[c] for c in shared + own_b]).reshape(prod(batch), prod(shared), prod(own_b))
    result = ops.bmm(a3, b3).reshape([sizes[c] for c in batch + own_a + own_b])
    return result, "".join(batch + own_a + own_b)


def einsum(*args):
    """``einsum('ij,jk->ik', a, b)``: products of the operands' elements, summed over every
    letter that is not in the output. Two operands at a time, each pair one bmm."""
    equation, operands = args[0], args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    terms, output = _einsum_terms(equation, operands)
    current, letters = _diagonal_out(operands[0], terms[0])
    for i, (operand, term) in enumerate(zip(operands[1:], terms[1:]), 1):
        operand, term = _diagonal_out(operand, term)
        later = "".join(terms[i + 1:]) + output
        # letters only one side has and nobody needs later are summed out first
        for side in (0, 1):
            t_letters = letters if side == 0 else term
            drop = [c for c in t_letters if c not in later and c not in (term if side == 0 else letters)]
            if drop:
                tensor_ = (current if side == 0 else operand).sum([t_letters.index(c) for c in drop])
                kept = "".join(c for c in t_letters if c not in drop)
                current, letters = (tensor_, kept) if side == 0 else (current, letters)
                operand, term = (operand, term) if side == 0 else (tensor_, kept)
        current, letters = _contract_pair(current, letters, operand, term, later)
    drop = [letters.index(c) for c in letters if c not in output]
    if drop:
        current = current.sum(drop)
        letters = "".join(c for c in letters if c in output)
    order = [letters.index(c) for c in output]
    return current.permute(order) if order != list(range(len(order))) else current


# -- backward formulas (derivatives.py) ---------------------------------------------------------
def _column_major(sizes, strides):
    """A matrix laid out column by column, such as ``weight.t()`` in a Linear layer."""
    return strides[0] == 1 and strides[1] == sizes[0]


def mm_mat1_backward(grad, mat2, mat1_sizes, mat1_strides, alpha=1):
    # torch gives a column-major mat1 a column-major gradient (the same product, transposed)
    if _column_major(mat1_sizes, mat1_strides):
        out = mat2.mm(grad.t()).t()
    else:
        out = grad.mm(mat2.t())
    return out if alpha == 1 else out * alpha


def mm_mat2_backward(grad, mat1, mat2_sizes, mat2_strides, alpha=1):
    # so ``weight.t()`` gets a column-major gradient, and TBackward0 hands the weight a
    # contiguous one: no transposed copy on the way into .grad
    if _column_major(mat2_sizes, mat2_strides):
        out = grad.t().mm(mat1).t()
    else:
        out = mat1.t().mm(grad)
    return out if alpha == 1 else out * alpha


def linear(input, weight, bias=None):
    """``input @ weight.t() + bias``: one addmm for a 2-D input, as torch computes it."""
    if input.dim() == 2 and bias is not None:
        return ops.addmm(bias, input, ops.t(weight))
    if bias is None:
        return ops.matmul(input, ops.t(weight))
    # fold the leading dims into rows, one addmm, then unfold (torch does the same)
    rows = ops.reshape(input, -1, input.shape[-1])
    out = ops.addmm(bias, rows, ops.t(weight))
    return ops.view(out, *input.shape[:-1], weight.shape[0])
