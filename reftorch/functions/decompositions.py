"""torch.linalg's factorizations and what is computed from them: inv, det, slogdet, solve,
cholesky, qr, eigh, svd, pinv, cross.

Like torch, det, slogdet and solve go through an LU factorization (LAPACK's getrf: partial
pivoting, L and U packed in one matrix, 1-based pivots) and keep it for their backward
(``_saved_LU``, ``_saved_pivots``); the others are NumPy's LAPACK. Values agree with torch's
within rounding; the signs of eigenvectors and singular vectors are LAPACK's choice and may
differ between two LAPACKs (what is unique: U diag(S) Vh, V diag(L) V^T, Q R, agrees).
The ``*_backward`` helpers at the end are derivatives.py's formulas.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from .. import dtypes
from ..dispatch import kernel
from ..tensor import _scalar_type_name
from ._support import _with_strides, _wrap
from .codegen import ops


class _LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError (torch._C._LinAlgError): a matrix the factorization cannot
    handle (singular, not positive-definite)."""


def _return_type(name, fields):
    """A named tuple that prints like torch.return_types.<name>."""
    base = namedtuple(name, fields)

    def __repr__(self):
        shown = ",\n".join(f"{f}={getattr(self, f)!r}" for f in fields)
        return f"torch.return_types.{name}(\n{shown})"
    return type(name, (base,), {"__repr__": __repr__, "__slots__": ()})


return_types_linalg_slogdet = _return_type("linalg_slogdet", ["sign", "logabsdet"])
return_types_slogdet = _return_type("slogdet", ["sign", "logabsdet"])
return_types_svd = _return_type("svd", ["U", "S", "V"])
return_types_linalg_qr = _return_type("linalg_qr", ["Q", "R"])
return_types_linalg_eigh = _return_type("linalg_eigh", ["eigenvalues", "eigenvectors"])
return_types_linalg_svd = _return_type("linalg_svd", ["U", "S", "Vh"])
return_types_linalg_inv_ex = _return_type("linalg_inv_ex", ["inverse", "info"])
return_types_linalg_cholesky_ex = _return_type("linalg_cholesky_ex", ["L", "info"])


def _check_matrices(A, name, square=True, argument="A"):
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor {argument} must have at least 2 dimensions.")
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {_scalar_type_name(A.dtype)}")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def _array(A):
    return A._np.astype(np.float32) if dtypes.is_reduced_float(A._np.dtype) else A._np


def _tensor(values, like):
    return _wrap(np.array(values, dtype=like.dtype.numpy, order="C"), like._device)


def _matrices(values, like):
    """A batch of matrices laid out as LAPACK returns them: each column-major (strides
    (..., 1, rows)), as torch's results are."""
    values = np.asarray(values, dtype=like.dtype.numpy)
    if values.ndim < 2:
        return _tensor(values, like)
    rows, cols = values.shape[-2:]
    strides, step = [1, rows], rows * cols
    for n in reversed(values.shape[:-2]):
        strides.insert(0, step)
        step *= n
    return _with_strides(values, tuple(strides), like._device)


def _lu_of_memory(A):
    """torch factors what LAPACK reads in A's memory: a row-major A is read as A^T, whose
    determinant is A's (and solve transposes back), so no copy is made."""
    return _lu(A.mT) if A.is_contiguous() and A.numel() > 1 else _lu(A)


def _singular(name, lu):
    """torch's words for the first zero on U's diagonal (LAPACK's info)."""
    if name == "torch.linalg.solve":
        if (np.diagonal(lu, axis1=-2, axis2=-1) == 0).any():
            raise _LinAlgError("torch.linalg.solve: The solver failed because the input matrix is singular.")
        return
    zeros = np.flatnonzero(np.diagonal(lu.reshape((-1,) + lu.shape[-2:]), axis1=-2, axis2=-1) == 0)
    if zeros.size:
        n = lu.shape[-1]
        batch, element = divmod(int(zeros[0]), n)
        where = f"(Batch element {batch}): " if lu.ndim > 2 else ""
        raise _LinAlgError(f"{name}: {where}The diagonal element {element + 1} is zero, the inversion could not be "
                          "completed because the input matrix is singular.")


# -- LU and what comes from it ------------------------------------------------------------
def _lu(A):
    return kernel("lu_factor", A._device)(_array(A))


def _lu_det(lu, pivots):
    """(sign, log|det|, det) from an LU factorization: the product of U's diagonal, negated once
    per row swap."""
    diagonal = np.diagonal(lu, axis1=-2, axis2=-1)
    swaps = np.sum(pivots != np.arange(1, pivots.shape[-1] + 1, dtype=np.int32), axis=-1)
    permutation_sign = np.where(swaps % 2 == 1, -1.0, 1.0).astype(lu.dtype)
    with np.errstate(divide="ignore"):
        sign = np.prod(np.sign(diagonal), axis=-1) * permutation_sign
        logabsdet = np.sum(np.log(np.abs(diagonal)), axis=-1)
    return sign, logabsdet, np.prod(diagonal, axis=-1) * permutation_sign


def _linalg_det(A):
    _check_matrices(A, "linalg.det")
    lu, pivots = _lu_of_memory(A)
    return _tensor(_lu_det(lu, pivots)[2], A), _matrices(lu, A), _wrap(pivots, A._device)


def linalg_det(A):
    return ops._linalg_det(A)[0]


def _linalg_slogdet(A):
    _check_matrices(A, "linalg.slogdet")
    lu, pivots = _lu_of_memory(A)
    sign, logabsdet, _ = _lu_det(lu, pivots)
    return _tensor(sign, A), _tensor(logabsdet, A), _matrices(lu, A), _wrap(pivots, A._device)


def linalg_slogdet(A):
    sign, logabsdet, _, _ = ops._linalg_slogdet(A)
    return return_types_linalg_slogdet(sign, logabsdet)


def linalg_inv_ex(A, *, check_errors=False):
    _check_matrices(A, "linalg.inv")
    lu, _ = _lu(A)
    diagonal = np.diagonal(lu, axis1=-2, axis2=-1)
    info = np.where((diagonal == 0).any(axis=-1), np.argmax(diagonal == 0, axis=-1) + 1, 0).astype(np.int32)
    if check_errors:
        _singular("linalg.inv", lu)
    with np.errstate(all="ignore"):
        inverse = kernel("linalg_inv", A._device)(_array(A)) if not info.any() else np.full(A.shape, np.nan)
    return return_types_linalg_inv_ex(_matrices(inverse, A), _wrap(info, A._device))


def linalg_inv(A):
    return ops.linalg_inv_ex(A, check_errors=True)[0]


def _vector_case(A, B):
    """B is a batch of vectors (not of matrices): torch's linalg_solve_is_vector_rhs."""
    return B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


def _linalg_solve_ex(A, B, *, left=True, check_errors=False):
    _check_matrices(A, "linalg.solve")
    lu, pivots = _lu(A)
    _singular("torch.linalg.solve", lu)
    a, b = _array(A), _array(B).astype(_array(A).dtype)
    vector = _vector_case(A, B)
    if vector:
        b = b[..., None]
    if not left:  # X A = B is A^T X^T = B^T
        a, b = np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)
    x = kernel("linalg_solve", A._device)(a, b)
    if not left:
        x = np.swapaxes(x, -1, -2)
    if vector:
        x = x[..., 0]
    info = np.zeros(A.shape[:-2], np.int32)
    result = _tensor(x, A) if vector else _matrices(x, A) if left else _tensor(x, A)
    return result, _matrices(lu, A), _wrap(pivots, A._device), _wrap(info, A._device)


def linalg_solve(A, B, *, left=True):
    return ops._linalg_solve_ex(A, B, left=left)[0]


# -- the other factorizations ---------------------------------------------------------------
def linalg_cholesky_ex(A, *, upper=False, check_errors=False):
    _check_matrices(A, "linalg.cholesky")
    L, info = kernel("cholesky", A._device)(_array(A))
    if check_errors and info.any():
        order = int(info.reshape(-1)[np.flatnonzero(info.reshape(-1))[0]])
        raise _LinAlgError(f"linalg.cholesky: The factorization could not be completed because the input is not "
                          f"positive-definite (the leading minor of order {order} is not positive-definite).")
    if upper:
        L = np.swapaxes(L, -1, -2)
    return return_types_linalg_cholesky_ex(_matrices(L, A), _wrap(info, A._device))


def linalg_cholesky(A, *, upper=False):
    return ops.linalg_cholesky_ex(A, upper=upper, check_errors=True)[0]


def linalg_qr(A, mode="reduced"):
    _check_matrices(A, "linalg.qr", square=False)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
                           "'r', or 'complete'")
    Q, R = kernel("qr", A._device)(_array(A), "complete" if mode == "complete" else "reduced")
    if mode == "r":
        Q = np.zeros((0,), Q.dtype)
    return return_types_linalg_qr(_matrices(Q, A), _matrices(R, A))


def _linalg_eigh(A, UPLO="L", compute_v=True):
    _check_matrices(A, "linalg.eigh")
    values, vectors = kernel("eigh", A._device)(_array(A), UPLO)
    return _tensor(values, A), _matrices(vectors if compute_v else np.zeros((0,), values.dtype), A)


def linalg_eigh(A, UPLO="L"):
    return return_types_linalg_eigh(*ops._linalg_eigh(A, UPLO))


def _linalg_svd(A, full_matrices=False, compute_uv=True, *, driver=None):
    _check_matrices(A, "linalg.svd", square=False)
    U, S, Vh = kernel("svd", A._device)(_array(A), full_matrices)
    if not compute_uv:
        U = Vh = np.zeros((0,), S.dtype)
    return _matrices(U, A), _tensor(S, A), _matrices(Vh, A)


def linalg_svd(A, full_matrices=True, *, driver=None):
    return return_types_linalg_svd(*ops._linalg_svd(A, full_matrices, True, driver=driver))


def linalg_svdvals(A, *, driver=None):
    # U and V are kept when a gradient may be asked for: the backward needs them (as torch)
    return ops._linalg_svd(A, False, A.requires_grad, driver=driver)[1]


def linalg_pinv(self, *, atol=None, rtol=None, hermitian=False):
    """The Moore-Penrose inverse from the SVD: singular values below max(atol, rtol * largest)
    count as zero (rtol, when neither is given, eps * max(m, n))."""
    if self.dim() < 2 or not self.dtype.is_floating_point:
        raise RuntimeError(f"linalg.pinv({_scalar_type_name(self.dtype)}{{{list(self.shape)}}}): expected a tensor with 2 "
                           "or more dimensions of float, double, cfloat or cdouble types")
    U, S, Vh = kernel("svd", self._device)(_array(self), False)
    threshold = _rank_threshold(S, self, atol, rtol)
    with np.errstate(divide="ignore"):
        inverse_s = np.where(S > threshold, 1 / S, 0).astype(S.dtype)
    values = np.swapaxes(Vh, -1, -2) @ (inverse_s[..., :, None] * np.swapaxes(U, -1, -2))
    return _tensor(values, self)


def _rank_threshold(S, A, atol, rtol):
    largest = S.max(axis=-1, keepdims=True, initial=0)
    atol = 0.0 if atol is None else (atol._np[..., None] if hasattr(atol, "_np") else atol)
    if rtol is None:
        rtol = 0.0 if atol is not None and not np.all(np.asarray(atol) == 0) else \
            np.finfo(S.dtype).eps * max(A.shape[-2:])
    elif hasattr(rtol, "_np"):
        rtol = rtol._np[..., None]
    return np.maximum(atol, rtol * largest)


def linalg_matrix_rank(A, *, atol=None, rtol=None, hermitian=False):
    """How many singular values lie above max(atol, rtol * largest)."""
    _check_matrices(A, "torch.linalg.matrix_rank", square=False, argument="input")
    S = ops.linalg_svdvals(A)._np
    count = np.sum(S > _rank_threshold(S, A, atol, rtol), axis=-1).astype(np.int64)
    return _wrap(np.asarray(count), A._device)


def linalg_cross(input, other, *, dim=-1):
    if input.dim() != other.dim():
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions.")
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[dim]} and "
                           f"{other.shape[dim]}")
    rt = dtypes.result_type(input, other)
    a, b = np.broadcast_arrays(input._np.astype(rt.numpy), other._np.astype(rt.numpy))
    return _wrap(np.array(np.cross(a, b, axis=dim), order="C"), input._device)


# -- the older torch.* spellings -------------------------------------------------------------
def slogdet(input):
    sign, logabsdet = ops.linalg_slogdet(input)
    return return_types_slogdet(sign, logabsdet)


def logdet(input):
    """log det(A): nan where the determinant is negative."""
    _check_matrices(input, "logdet")
    sign, logabsdet = ops.linalg_slogdet(input)
    return ops.where(sign == -1.0, input.new_full((), float("nan")), logabsdet)


def svd(input, some=True, compute_uv=True):
    """(U, S, V) with V = Vh^T (torch.linalg.svd gives Vh); without compute_uv, U and V are
    zeros of the full sizes."""
    if input.dim() < 2:
        raise RuntimeError(f"linalg.svd: input should have at least 2 dimensions, but has {input.dim()} dimensions "
                           "instead")
    if compute_uv:
        U, S, Vh = ops.linalg_svd(input, not some)
        return return_types_svd(U, S, Vh.mT)
    S = ops.linalg_svdvals(input)
    m, n = input.shape[-2:]
    U = ops.zeros(tuple(input.shape[:-1]) + (m,), dtype=input.dtype)
    V = ops.zeros(tuple(input.shape[:-2]) + (n, n), dtype=input.dtype).mT  # (laid out as V^T, as torch)
    return return_types_svd(U, S, V)


# -- norms built on the above ----------------------------------------------------------------
def linalg_matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """'fro': the vector 2-norm of the entries; 'nuc': the sum of singular values; 2 / -2 the
    largest / smallest singular value; 1 / -1 (inf / -inf) the largest / smallest column
    (row) sum of ``abs(A)``, as torch composes them."""
    _check_matrices(A, "linalg.matrix_norm", square=False)
    if dtype is not None:
        A = ops.to(A, dtype)
    d0, d1 = (d % A.dim() for d in dim)
    if ord == "fro":
        return ops.linalg_vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        moved = ops.movedim(A, (d0, d1), (-2, -1))
        values = ops.linalg_svdvals(moved)
        result = values.sum(-1) if ord == "nuc" else values.amax(-1) if ord == 2 else values.amin(-1)
        if keepdim:
            for d in sorted((d0, d1)):
                result = result.unsqueeze(d)
        return result
    if ord in (1, -1, float("inf"), float("-inf")):
        summed, kept = (d0, d1) if ord in (1, -1) else (d1, d0)
        if not keepdim and kept > summed:
            kept -= 1
        sums = A.abs().sum(summed, keepdim)
        return sums.amax(kept, keepdim) if ord > 0 else sums.amin(kept, keepdim)
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def linalg_norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A matrix norm when ``ord`` is a string, or names a matrix norm of a 2-D input or a
    pair of dims; the vector norm (2 by default) otherwise."""
    if dim is not None and not isinstance(dim, (tuple, list)):
        dim = (dim,)
    if dim is None and ord is not None and A.dim() not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                           f"Got {A.dim()}D.")
    if isinstance(ord, str) or (ord is not None and ((dim is not None and len(dim) == 2) or
                                                       (dim is None and A.dim() == 2))):
        return ops.linalg_matrix_norm(A, "fro" if ord is None else ord, tuple(dim or (-2, -1)), keepdim, dtype=dtype)
    if ord is None and dim is not None and len(dim) == 2:
        return ops.linalg_matrix_norm(A, "fro", tuple(dim), keepdim, dtype=dtype)
    return ops.linalg_vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


# -- backward formulas (derivatives.py) -----------------------------------------------------
def linalg_det_backward(grad, result, A):
    """d det(A) / dA = det(A) A^{-T} (A invertible; torch switches to an SVD for singular A,
    which reftorch does not)."""
    return (grad * result).unsqueeze(-1).unsqueeze(-2) * ops.linalg_inv(A).mT


def slogdet_backward(grad_logabsdet, A):
    if grad_logabsdet is None:  # only the sign was used: it has no gradient
        return ops.zeros_like(A)
    return grad_logabsdet.unsqueeze(-1).unsqueeze(-2) * ops.linalg_inv(A).mT


def linalg_solve_backward(grad, result, A, left, grad_input_mask):
    """X = A^{-1} B: gB = A^{-T} g, gA = -gB X^T (the right-hand side's transposes for left=False)."""
    vector = grad.dim() == A.dim() - 1
    gB = ops.linalg_solve(A.mT, grad, left=left)
    if vector:
        gA = -(gB.unsqueeze(-1) @ result.unsqueeze(-2))
    elif left:
        gA = -(gB @ result.mT)
    else:
        gA = -(result.mT @ gB)
    return gA if grad_input_mask[0] else None, gB if grad_input_mask[1] else None


def cholesky_backward(grad, upper, L):
    """Murray's formula (arXiv 1602.07527), as torch: with phi = tril(L^T gL), its diagonal
    halved, gA = L^{-T} phi L^{-1}, symmetrised."""
    if upper:
        L, grad = L.mT, grad.mT
    n = L.shape[-1]
    L_inverse = ops.linalg_inv(L)
    halve_diagonal = 1 - 0.5 * ops.eye(n, dtype=L.dtype)
    phi = (L.mT @ grad).tril() * halve_diagonal
    grad_input = (L_inverse.mT @ phi) @ L_inverse
    return (grad_input + grad_input.mT) * 0.5


def eigh_backward(grads, eigenvalues, eigenvectors):
    """gA = V (diag(gL) + skew(V^T gV) / (L_j - L_i) off the diagonal) V^T, as torch's
    linalg_eig_backward for a symmetric matrix."""
    grad_values, grad_vectors = grads
    V, L = eigenvectors, eigenvalues
    if grad_vectors is None:
        return (V * grad_values.unsqueeze(-2)) @ V.mT
    n = L.shape[-1]
    identity = ops.eye(n, dtype=L.dtype)
    gaps = L.unsqueeze(-2) - L.unsqueeze(-1) + identity  # L_j - L_i, 1 on the diagonal
    projected = V.mT @ grad_vectors
    inner = (projected - projected.mT) * 0.5 / gaps  # its skew-symmetric part: V^T dV is skew
    diagonal = grad_values.unsqueeze(-1) * identity if grad_values is not None else 0
    inner = inner * (1 - identity) + diagonal
    return V @ (inner @ V.mT)


def linalg_qr_backward(grads, Q, R, mode):
    """For m >= n, with M = R gR^T - gQ^T Q: gA = (gQ + Q copyltu(M)) R^{-T}, copyltu(M) the
    lower triangle of M mirrored up. A wide A = Q [R1 R2] is its square part X = Q R1 plus
    Y = Q R2: gY = Q gR2, and X's gradient takes gQ + Y gR2^T."""
    grad_Q, grad_R = grads
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
                           "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
    m, n = Q.shape[-2], R.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    grad_Q = ops.zeros_like(Q) if grad_Q is None else grad_Q
    grad_R = ops.zeros_like(R) if grad_R is None else grad_R
    if m < n:
        R1, grad_R1, grad_R2 = R[..., :, :m], grad_R[..., :, :m], grad_R[..., :, m:]
        Y = Q @ R[..., :, m:]
        grad_X = _qr_square_backward(grad_Q + Y @ grad_R2.mT, grad_R1, Q, R1)
        return ops.cat([grad_X, Q @ grad_R2], -1)
    return _qr_square_backward(grad_Q, grad_R, Q, R)


def _qr_square_backward(grad_Q, grad_R, Q, R):
    M = R @ grad_R.mT - grad_Q.mT @ Q
    copyltu = M.tril() + M.tril(-1).mT
    return ops.linalg_solve(R, (grad_Q + Q @ copyltu).mT).mT


def pinv_backward(grad, result, self):
    """The pseudo-inverse's derivative (Golub and Pereyra), grouped as torch groups it so the
    products stay the smaller of m x m and n x n."""
    A, pinv_A = self, result
    m, n = A.shape[-2], A.shape[-1]
    pinv_At, grad_t = pinv_A.mT, grad.mT
    if m <= n:
        K = grad_t @ pinv_A
        K_pinv_At = K @ pinv_At
        return -(pinv_A @ K).mT + K_pinv_At - (A @ pinv_A) @ K_pinv_At + (pinv_At @ pinv_A) @ (grad_t - K @ A)
    K = pinv_A @ grad_t
    pinv_At_K = pinv_At @ K
    return -(K @ pinv_A).mT + ((grad_t - A @ K) @ pinv_A) @ pinv_At + pinv_At_K - (pinv_At_K @ pinv_A) @ A


def linalg_cross_backward_self(grad, other, dim):
    return ops.linalg_cross(other, grad, dim=dim)


def svd_backward(grad_U, grad_S, grad_Vh, U, S, Vh, full_matrices):
    """gA from the gradients of U, S and Vh (any may be None), as torch's svd_backward: with
    skew(X) = X - X^T and E_ij = S_j^2 - S_i^2,
    gA = U [(skew(U^T gU) S + S skew(V^T gV)) / E + diag(gS)] Vh, plus the parts of gU and
    gV outside U's and V's columns when A is not square."""
    k = S.shape[-1]
    if full_matrices:  # only the first k columns of U (rows of Vh) depend on A
        U, Vh = U[..., :k], Vh[..., :k, :]
        grad_U = None if grad_U is None else grad_U[..., :k]
        grad_Vh = None if grad_Vh is None else grad_Vh[..., :k, :]
    m, n = U.shape[-2], Vh.shape[-1]
    identity = ops.eye(k, dtype=S.dtype)
    diagonal = 0 if grad_S is None else grad_S.unsqueeze(-1) * identity
    if grad_U is None and grad_Vh is None:
        return U @ ((S.new_zeros(()) + diagonal) @ Vh) if grad_S is not None else ops.zeros_like(U @ Vh)
    grad_U = ops.zeros_like(U) if grad_U is None else grad_U
    grad_V = ops.zeros_like(Vh.mT) if grad_Vh is None else grad_Vh.mT
    V = Vh.mT
    UtgU, VtgV = U.mT @ grad_U, V.mT @ grad_V
    squares = S * S
    gaps = squares.unsqueeze(-2) - squares.unsqueeze(-1) + identity  # 1 on the diagonal
    inner = ((UtgU - UtgU.mT) * S.unsqueeze(-2) + S.unsqueeze(-1) * (VtgV - VtgV.mT)) / gaps + diagonal
    if m > n:
        gU_over_S = grad_U / S.unsqueeze(-2)
        return (U @ inner + gU_over_S - U @ (U.mT @ gU_over_S)) @ Vh
    if m < n:
        gV_over_S = grad_V / S.unsqueeze(-2)
        return U @ (inner @ Vh + gV_over_S.mT - (gV_over_S.mT @ V) @ Vh)
    return U @ (inner @ Vh)
