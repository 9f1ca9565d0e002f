"""reftorch's ``derivatives.yaml``: how each differentiable op's backward is computed.

One entry per op of native_functions.py that records a node (an op without one is composite:
its gradient flows through the ops it calls). A keyword per differentiable input gives its
formula, a function whose parameter names say what it reads, as torch's codegen reads the
names in a formula:

    grad        the gradient of the output (``grads``: of each output)
    self, other, dim, alpha ...   the op's arguments
    result      the output (``result1``..., or the return's name, for several)
    self_sym_sizes, self_sym_strides, self_sym_numel    what a formula needs of an argument
    weight_sym_argsize_0    (also: the size of one of its dims, as ``weight.sym_size(0)``)
    grad_input_mask    which inputs need a gradient

Whatever a formula reads is saved on the node as ``_saved_<name>`` (tensors with the version
they had), and only when an input that needs it requires grad. ``result=`` is the
forward-mode formula (``self_t``: the tangent of self), or ``"auto_element_wise"`` (the
backward formula applied to the tangent) or ``"auto_linear"`` (the op applied to the
tangents). The node is named as torch names it: ``mul.Tensor`` -> ``MulBackward0``.
"""
from __future__ import annotations

import math

from . import (
    activations, arithmetic, convolution, decompositions, embeddings, indexing, joining, linalg, loss, normalization, reductions, special,
    unary, views,
)
from ._support import no_derivative, not_implemented
from .arithmetic import maybe_multiply
from .codegen import ops
from .schema import derivative
from .unary import clamp_mask

_SQRT_PI = 2 / math.sqrt(math.pi)


def _zeros(grad):
    return ops.zeros_like(grad)


DERIVATIVES = [
    # -- pointwise, one input --------------------------------------------------------------------
    derivative("abs", self=lambda grad, self: grad * self.sign(),
               result=lambda self_t, self: self_t * self.sign()),
    derivative("neg", self=lambda grad: -grad, result="auto_linear"),
    derivative("sign", self=lambda grad: _zeros(grad), result="auto_element_wise"),
    derivative("floor", self=lambda grad: _zeros(grad), result="auto_element_wise"),
    derivative("ceil", self=lambda grad: _zeros(grad), result="auto_element_wise"),
    derivative("round", self=lambda grad: _zeros(grad), result="auto_element_wise"),
    derivative("trunc", self=lambda grad: _zeros(grad), result="auto_element_wise"),
    derivative("frac", self=lambda grad: grad, result="auto_element_wise"),
    derivative("relu", self=lambda grad, result: ops.threshold_backward(grad, result, 0), result="auto_element_wise"),
    derivative("threshold_backward", grad_output=lambda grad, self, threshold: ops.threshold_backward(grad, self, threshold),
               self=lambda grad: _zeros(grad),
               result=lambda grad_output_t, self, threshold: ops.threshold_backward(grad_output_t, self, threshold)),
    derivative("exp", self=lambda grad, result: grad * result, result="auto_element_wise"),
    derivative("expm1", self=lambda grad, result: grad * (result + 1), result="auto_element_wise"),
    derivative("log", self=lambda grad, self: grad / self, result="auto_element_wise"),
    derivative("log1p", self=lambda grad, self: grad / (self + 1), result="auto_element_wise"),
    derivative("log2", self=lambda grad, self: grad / (self * math.log(2)), result="auto_element_wise"),
    derivative("log10", self=lambda grad, self: grad / (self * math.log(10)), result="auto_element_wise"),
    derivative("sqrt", self=lambda grad, result: grad / (2 * result), result="auto_element_wise"),
    derivative("rsqrt", self=lambda grad, result: -0.5 * grad * result * result * result,
               result="auto_element_wise"),
    derivative("reciprocal", self=lambda grad, result: -grad * result * result, result="auto_element_wise"),
    derivative("sin", self=lambda grad, self: grad * self.cos(), result="auto_element_wise"),
    derivative("cos", self=lambda grad, self: -grad * self.sin(), result="auto_element_wise"),
    derivative("tan", self=lambda grad, result: grad * (1 + result * result), result="auto_element_wise"),
    derivative("asin", self=lambda grad, self: grad / (1 - self * self).sqrt(), result="auto_element_wise"),
    derivative("acos", self=lambda grad, self: -grad / (1 - self * self).sqrt(), result="auto_element_wise"),
    derivative("atan", self=lambda grad, self: grad / (self * self + 1), result="auto_element_wise"),
    derivative("sinh", self=lambda grad, self: grad * self.cosh(), result="auto_element_wise"),
    derivative("asinh", self=lambda grad, self: grad * (self.pow(2) + 1).rsqrt(), result="auto_element_wise"),
    derivative("asinh_", self=not_implemented("inplace version of asinh")),
    derivative("cosh", self=lambda grad, self: grad * self.sinh(), result="auto_element_wise"),
    derivative("tanh", self=lambda grad, result: grad * (1 - result * result), result="auto_element_wise"),
    derivative("sigmoid", self=lambda grad, result: grad * result * (1 - result), result="auto_element_wise"),
    derivative("erf", self=lambda grad, self: grad * _SQRT_PI * (-self * self).exp(), result="auto_element_wise"),
    derivative("lgamma", self=lambda grad, self: grad * self.digamma(), result="auto_element_wise"),
    derivative("digamma", self=lambda grad, self: grad * ops.polygamma(1, self), result="auto_element_wise"),
    derivative("polygamma", self=lambda grad, n, self: grad * ops.polygamma(n + 1, self),
               result="auto_element_wise"),
    derivative("clamp", self=lambda grad, self, min, max: grad * clamp_mask(self, min, max),
               result="auto_element_wise", number=1),

    # -- special functions -------------------------------------------------------------------------
    derivative("erfc", self=lambda grad, self: -2.0 / math.sqrt(math.pi) * (-(self.pow(2))).exp() * grad,
               result="auto_element_wise"),
    derivative("erfinv", self=lambda grad, self: 0.5 * math.sqrt(math.pi) * self.erfinv().pow(2).exp() * grad,
               result="auto_element_wise"),
    derivative("exp2", self=lambda grad, result: grad * result * math.log(2.0), result="auto_element_wise"),
    derivative("logit", self=lambda grad, self, eps: special.logit_backward(grad, self, eps),
               result="auto_element_wise"),
    derivative("xlogy.Tensor",
               self=lambda grad, self, other: ops.xlogy(grad, other).masked_fill((self == 0.0) & (other <= 0.0), 0.0),
               other=lambda grad, self, other: grad * self / other,
               result=lambda self_t, other_t, self, other:
                   ops.xlogy(self_t, other).masked_fill((self == 0.0) & (other <= 0.0), 0.0)
                   + other_t * self / other),
    derivative("xlogy.Scalar_Self", other=lambda grad, self, other: grad * self / other, result="auto_element_wise"),
    derivative("xlogy.Scalar_Other",
               self=lambda grad, self, other: ops.xlogy(grad, other) if other > 0.0
               else ops.xlogy(grad, other).masked_fill(self == 0.0, 0.0),
               result="auto_element_wise"),
    derivative("i0", self=lambda grad, self: grad * ops.special_i1(self), result="auto_element_wise"),
    derivative("sinc", self=lambda grad, self: special.sinc_backward(grad, self), result="auto_element_wise"),
    derivative("special_entr", self=lambda grad, self: grad * (-(1 + self.log())), result="auto_element_wise"),
    derivative("special_ndtri", self=lambda grad, result: grad * math.sqrt(2 * math.pi) * (result.square() / 2).exp(),
               result="auto_element_wise"),
    derivative("special_log_ndtr",
               self=lambda grad, self, result: grad / math.sqrt(2 * math.pi) * (result + self.pow(2) / 2).neg().exp(),
               result="auto_element_wise"),
    derivative("special_i0e", self=lambda grad, self, result: grad * (ops.special_i1e(self) - self.sign() * result),
               result="auto_element_wise"),
    derivative("special_i1", self=lambda grad, self, result: special.i1_backward(grad, self, result),
               result="auto_element_wise"),
    derivative("special_i1e", self=lambda grad, self, result: special.i1e_backward(grad, self, result),
               result="auto_element_wise"),

    # -- pointwise, two inputs -------------------------------------------------------------------
    derivative("add.Tensor", self=lambda grad: grad, other=lambda grad, alpha: maybe_multiply(grad, alpha),
               result=lambda self_t, other_t, alpha: self_t + maybe_multiply(other_t, alpha)),
    derivative("add.Scalar", self=lambda grad: grad, result="auto_element_wise"),
    derivative("sub.Tensor", self=lambda grad: grad, other=lambda grad, alpha: maybe_multiply(-grad, alpha),
               result=lambda self_t, other_t, alpha: self_t - maybe_multiply(other_t, alpha)),
    derivative("rsub.Tensor", self=lambda grad, alpha: maybe_multiply(-grad, alpha), other=lambda grad: grad,
               result=lambda self_t, other_t, alpha: other_t - maybe_multiply(self_t, alpha)),
    derivative("rsub.Scalar", self=lambda grad, alpha: maybe_multiply(-grad, alpha), result="auto_element_wise"),
    derivative("mul.Tensor", self=lambda grad, other: grad * other, other=lambda grad, self: grad * self,
               result=lambda self_t, other_t, self, other: self_t * other + self * other_t),
    derivative("mul.Scalar", self=lambda grad, other: grad * other, result="auto_element_wise"),
    derivative("div.Tensor", self=lambda grad, other: grad / other,
               other=lambda grad, self, other: -grad * self / (other * other),
               result=lambda self_t, other_t, result, other: (self_t - result * other_t) / other),
    derivative("div.Scalar", self=lambda grad, other: grad / other, result="auto_element_wise"),
    derivative("div.Tensor_mode",
               self=lambda grad, other, rounding_mode: _zeros(grad) if rounding_mode else grad / other,
               other=lambda grad, self, other, rounding_mode:
                   _zeros(grad) if rounding_mode else -grad * self / (other * other),
               result=lambda self_t, other_t, result, other, rounding_mode:
                   ops.zeros_like(result) if rounding_mode else (self_t - result * other_t) / other),
    derivative("floor_divide", node="torch::autograd::NotImplemented",
               self=no_derivative("floor_divide"), other=no_derivative("floor_divide")),
    derivative("remainder.Scalar", self=lambda grad: grad, result="auto_element_wise"),
    derivative("remainder.Tensor", self=lambda grad: grad,
               other=lambda grad, self, other: -grad * self.div(other, rounding_mode="floor"),
               result=lambda self_t, other_t, self, other: self_t - other_t * self.div(other, rounding_mode="floor")),
    derivative("remainder.Scalar_Tensor", node="torch::autograd::NotImplemented", other=no_derivative("remainder")),
    derivative("fmod.Scalar", self=lambda grad: grad, result="auto_element_wise"),
    derivative("fmod.Tensor", self=lambda grad: grad,
               other=lambda grad, self, other: -grad * self.div(other, rounding_mode="trunc"),
               result=lambda self_t, other_t, self, other: self_t - other_t * self.div(other, rounding_mode="trunc")),
    derivative("pow.Tensor_Scalar", self=lambda grad, self, exponent: arithmetic.pow_backward(grad, self, exponent),
               result="auto_element_wise"),
    derivative("pow.Tensor_Tensor",
               self=lambda grad, self, exponent: arithmetic.pow_backward_self(grad, self, exponent),
               exponent=lambda grad, self, exponent, result: arithmetic.pow_backward_exponent(grad, self, exponent, result),
               result=lambda self_t, exponent_t, self, exponent, result:
                   arithmetic.pow_backward_self(self_t, self, exponent)
                   + arithmetic.pow_backward_exponent(exponent_t, self, exponent, result)),
    derivative("pow.Scalar",
               exponent=lambda grad, self, exponent, result: arithmetic.pow_backward_exponent(grad, self, exponent, result),
               result="auto_element_wise"),
    derivative("maximum", **{"self, other": lambda grad, self, other: arithmetic.extreme_backward(grad, self, other, self > other)},
               result=lambda self_t, other_t, self, other: arithmetic.extreme_jvp(self_t, other_t, self, other, self > other)),
    derivative("minimum", **{"self, other": lambda grad, self, other: arithmetic.extreme_backward(grad, self, other, self < other)},
               result=lambda self_t, other_t, self, other: arithmetic.extreme_jvp(self_t, other_t, self, other, self < other)),
    derivative("where.self", condition="non_differentiable",
               self=lambda grad, condition: ops.where(condition, grad, _zeros(grad)),
               other=lambda grad, condition: ops.where(condition, _zeros(grad), grad),
               result=lambda condition, self_t, other_t: ops.where(condition, self_t, other_t)),

    # -- reductions ------------------------------------------------------------------------------
    derivative("sum", self=lambda grad, self_sym_sizes: grad.expand(self_sym_sizes), result="auto_linear"),
    derivative("sum.dim_IntList",
               self=lambda grad, self_sym_sizes, dim, keepdim: reductions.sum_backward(grad, self_sym_sizes, dim, keepdim),
               result="auto_linear"),
    derivative("mean", self=lambda grad, self_sym_sizes, self_sym_numel: grad.expand(self_sym_sizes) / self_sym_numel,
               result="auto_linear"),
    derivative("mean.dim", self=lambda grad, self_sym_sizes, dim, self_sym_numel, keepdim:
               reductions.mean_backward(grad, self_sym_sizes, dim, self_sym_numel, keepdim), result="auto_linear"),
    derivative("prod", self=lambda grad, self, result: reductions.prod_backward(grad, self),
               result=lambda self_t, self: reductions.prod_jvp(self_t, self)),
    derivative("prod.dim_int", self=lambda grad, self, result, dim, keepdim: reductions.prod_backward(grad, self, dim, keepdim),
               result=lambda self_t, self, dim, keepdim: reductions.prod_jvp(self_t, self, dim, keepdim)),
    derivative("max.dim", self=lambda grad, dim, indices, self_sym_sizes, keepdim:
               reductions.value_selecting_reduction_backward(grad, dim, indices, self_sym_sizes, keepdim),
               result=lambda self_t, dim, indices, keepdim: (reductions.gather_with_keepdimed_indices(self_t, dim, indices, keepdim), None),
               output_differentiability=[True, False]),
    derivative("max", self=lambda grad, self, result: reductions.evenly_distribute_backward(grad, self, result),
               result=lambda self_t, self, result: reductions.evenly_read_jvp(self_t, self, result)),
    derivative("min.dim", self=lambda grad, dim, indices, self_sym_sizes, keepdim:
               reductions.value_selecting_reduction_backward(grad, dim, indices, self_sym_sizes, keepdim),
               result=lambda self_t, dim, indices, keepdim: (reductions.gather_with_keepdimed_indices(self_t, dim, indices, keepdim), None),
               output_differentiability=[True, False]),
    derivative("min", self=lambda grad, self, result: reductions.evenly_distribute_backward(grad, self, result),
               result=lambda self_t, self, result: reductions.evenly_read_jvp(self_t, self, result)),
    derivative("amax", self=lambda grad, self, result, dim, keepdim: reductions.amaxamin_backward(grad, self, result, dim, keepdim),
               result=lambda self_t, self, result, dim, keepdim: reductions.amaxamin_jvp(self_t, self, result, dim, keepdim)),
    derivative("amin", self=lambda grad, self, result, dim, keepdim: reductions.amaxamin_backward(grad, self, result, dim, keepdim),
               result=lambda self_t, self, result, dim, keepdim: reductions.amaxamin_jvp(self_t, self, result, dim, keepdim)),
    derivative("topk", self=lambda grad, dim, indices, self_sym_sizes:
               reductions.value_selecting_reduction_backward(grad, dim, indices, self_sym_sizes, True),
               result=lambda self_t, dim, indices: (reductions.gather_with_keepdimed_indices(self_t, dim, indices, True), None),
               output_differentiability=[True, False]),
    derivative("sort", self=lambda grad, dim, indices, self_sym_sizes:
               reductions.value_selecting_reduction_backward(grad, dim, indices, self_sym_sizes, True),
               result=lambda self_t, dim, indices: (reductions.gather_with_keepdimed_indices(self_t, dim, indices, True), None),
               output_differentiability=[True, False]),
    derivative("sort.stable", self=lambda grad, dim, indices, self_sym_sizes:
               reductions.value_selecting_reduction_backward(grad, dim, indices, self_sym_sizes, True),
               result=lambda self_t, dim, indices: (reductions.gather_with_keepdimed_indices(self_t, dim, indices, True), None),
               output_differentiability=[True, False]),
    derivative("bincount", node="torch::autograd::NotImplemented", self="non_differentiable",
               weights=no_derivative("bincount")),
    derivative("_unique2", self=not_implemented("_unique2"), output_differentiability=[True, False, False]),
    derivative("unique_dim", self=not_implemented("unique_dim"), output_differentiability=[True, False, False]),
    derivative("unique_consecutive", self=not_implemented("unique_consecutive"),
               output_differentiability=[True, False, False]),
    derivative("median", self=lambda grad, self, result: reductions.evenly_distribute_backward(grad, self, result),
               result=lambda self_t, self, result: reductions.evenly_read_jvp(self_t, self, result)),
    derivative("median.dim", self=lambda grad, dim, indices, self_sym_sizes, keepdim:
               reductions.value_selecting_reduction_backward(grad, dim, indices, self_sym_sizes, keepdim),
               result=lambda self_t, dim, indices, keepdim: (reductions.gather_with_keepdimed_indices(self_t, dim, indices, keepdim), None),
               output_differentiability=[True, False]),
    derivative("nanmedian", self=lambda grad, self, result: reductions.evenly_distribute_backward(grad, self, result),
               result=lambda self_t, self, result: reductions.evenly_read_jvp(self_t, self, result)),
    derivative("nanmedian.dim", self=lambda grad, dim, indices, self_sym_sizes, keepdim:
               reductions.value_selecting_reduction_backward(grad, dim, indices, self_sym_sizes, keepdim),
               result=lambda self_t, dim, indices, keepdim: (reductions.gather_with_keepdimed_indices(self_t, dim, indices, keepdim), None),
               output_differentiability=[True, False]),
    derivative("kthvalue", self=lambda grad, dim, indices, self_sym_sizes, keepdim:
               reductions.value_selecting_reduction_backward(grad, dim, indices, self_sym_sizes, keepdim),
               result=lambda self_t, dim, indices, keepdim: (reductions.gather_with_keepdimed_indices(self_t, dim, indices, keepdim), None),
               output_differentiability=[True, False]),
    derivative("mode", self=lambda grad, dim, indices, self_sym_sizes, keepdim:
               reductions.value_selecting_reduction_backward(grad, dim, indices, self_sym_sizes, keepdim),
               result=lambda self_t, dim, indices, keepdim: (reductions.gather_with_keepdimed_indices(self_t, dim, indices, keepdim), None),
               output_differentiability=[True, False]),
    derivative("var.correction", self=lambda grad, self, dim, correction, keepdim:
               reductions.var_backward(grad, self, dim, correction, keepdim),
               result=lambda self_t, self, dim, correction, keepdim: reductions.var_jvp(self_t, self, dim, correction, keepdim)),
    derivative("std.correction", self=lambda result, grad, self, dim, correction, keepdim:
               reductions.std_backward(result, grad, self, dim, correction, keepdim),
               result=lambda self_t, self, dim, correction, keepdim, result:
                   reductions.var_jvp(self_t, self, dim, correction, keepdim, result)),
    derivative("linalg_vector_norm", self=lambda grad, self, ord, result, dim, keepdim:
               reductions.linalg_vector_norm_backward(grad, self, ord, result, dim, keepdim),
               result=lambda self_t, self, ord, result, dim, keepdim:
                   reductions.linalg_vector_norm_jvp(self_t, self, ord, result, dim, keepdim)),
    derivative("logsumexp", self=lambda grad, self, result, dim, keepdim: reductions.logsumexp_backward(grad, self, result, dim, keepdim),
               result=lambda self_t, self, result, dim, keepdim: reductions.logsumexp_jvp(self_t, self, result, dim, keepdim)),
    derivative("cumsum", self=lambda grad, dim: reductions.cumsum_backward(grad, dim), result="auto_linear"),
    derivative("cumprod", self=lambda grad, self, dim, result: reductions.cumprod_backward(grad, self, dim, result)),

    # -- views -----------------------------------------------------------------------------------
    derivative("view", self=lambda grad, self_sym_sizes: grad.reshape(self_sym_sizes), result="auto_linear"),
    derivative("_unsafe_view", self=lambda grad, self_sym_sizes: grad.reshape(self_sym_sizes), result="auto_linear"),
    derivative("_reshape_alias", self=lambda grad, self_sym_sizes: grad.reshape(self_sym_sizes), result="auto_linear"),
    derivative("alias", self=lambda grad: grad, result="auto_linear"),
    derivative("t", self=lambda grad: grad.t(), result="auto_linear"),
    derivative("transpose.int", self=lambda grad, dim0, dim1: grad.transpose(dim0, dim1), result="auto_linear"),
    derivative("permute", self=lambda grad, dims: views.permute_backwards(grad, dims), result="auto_linear"),
    derivative("unsqueeze", self=lambda grad, dim: grad.squeeze(dim), result="auto_linear"),
    derivative("squeeze", self=lambda grad, self_sym_sizes: views.unsqueeze_to(grad, self_sym_sizes),
               result="auto_linear"),
    derivative("squeeze.dim", self=lambda grad, dim, self_sym_sizes: views.unsqueeze_to(grad, dim, self_sym_sizes),
               result="auto_linear"),
    derivative("squeeze.dims", self=lambda grad, dim, self_sym_sizes: views.unsqueeze_to(grad, dim, self_sym_sizes),
               result="auto_linear"),
    derivative("squeeze_.dim", self=lambda grad, dim, self_sym_sizes: views.unsqueeze_to(grad, dim, self_sym_sizes),
               result="auto_linear", number=4),
    derivative("expand", self=lambda grad, self_sym_sizes: views.sum_to(grad, self_sym_sizes), result="auto_linear"),
    derivative("select.int", self=lambda grad, self_sym_sizes, dim, index:
               ops.select_backward(grad, self_sym_sizes, dim, index), result="auto_linear"),
    derivative("select_backward", grad_output=lambda grad, dim, index: grad.select(dim, index), result="auto_linear"),
    derivative("diagonal", self=lambda grad, self_sym_sizes, offset, dim1, dim2:
               ops.diagonal_backward(grad, self_sym_sizes, offset, dim1, dim2), result="auto_linear"),
    derivative("diagonal_backward", grad_output=lambda grad, offset, dim1, dim2: ops.diagonal(grad, offset, dim1, dim2),
               result="auto_linear"),
    derivative("slice.Tensor", self=lambda grad, self_sym_sizes, dim, start, end, step:
               ops.slice_backward(grad, self_sym_sizes, dim, start, end, step), result="auto_linear"),
    derivative("slice_backward", grad_output=lambda grad, dim, start, end, step: ops.slice(grad, dim, start, end, step),
               result="auto_linear"),
    derivative("split.Tensor", self=lambda grads, split_size, dim, self_sym_sizes:
               views.split_backward(grads, views.split_sizes_of(split_size, dim, self_sym_sizes), dim, self_sym_sizes),
               result="auto_linear"),
    derivative("split_with_sizes", self=lambda grads, split_sizes, dim, self_sym_sizes:
               views.split_backward(grads, split_sizes, dim, self_sym_sizes), result="auto_linear"),
    derivative("unbind.int", self=lambda grads, dim: views.unbind_backward(grads, dim), result="auto_linear"),
    derivative("as_strided", self=lambda grad, self_geometry, size, stride, storage_offset:
               views.as_strided_backward(grad, self_geometry, size, stride, storage_offset), result="auto_linear"),
    derivative("unfold", self=lambda grad, self_sym_sizes, dimension, size, step:
               ops.unfold_backward(grad, self_sym_sizes, dimension, size, step), result="auto_linear"),
    derivative("unfold_backward", grad_in=lambda grad, dim, size, step: grad.unfold(dim, size, step),
               result="auto_linear"),

    # -- copies ----------------------------------------------------------------------------------
    derivative("clone", self=lambda grad: grad, result="auto_linear"),
    derivative("flip", self=lambda grad, dims: ops.flip(grad, dims), result="auto_linear"),
    derivative("_to_copy", self=lambda grad: grad,  # the engine converts it back to self's dtype and device
               result=lambda self_t, result: self_t.to(result.dtype)),
    derivative("copy_", node="torch::autograd::CopyBackwards", self=lambda grad: _zeros(grad),
               src=lambda grad: grad, result=lambda src_t, self: src_t.expand(self.shape)),
    derivative("zero_", self=lambda grad: _zeros(grad), result=lambda self: ops.zeros_like(self)),
    derivative("fill.Scalar", self=lambda grad: _zeros(grad), result=lambda self: ops.zeros_like(self)),
    derivative("fill.Tensor", self=lambda grad: _zeros(grad), value=lambda grad: grad.sum(),
               result=lambda value_t, self: value_t.expand(self.shape)),
    derivative("fill_.Scalar", self=lambda grad: _zeros(grad), result=lambda self: ops.zeros_like(self)),
    derivative("fill_.Tensor", self=lambda grad: _zeros(grad), value=lambda grad: grad.sum(),
               result=lambda value_t, self: value_t.expand(self.shape)),

    # -- joining and repeating -------------------------------------------------------------------
    derivative("cat", tensors=lambda grad, tensors_args_sizes, dim: joining.cat_tensors_backward(grad, tensors_args_sizes, dim),
               result="auto_linear"),
    derivative("stack", tensors=lambda grad, dim: joining.stack_tensors_backward(grad, dim), result="auto_linear"),
    derivative("repeat", self=lambda grad, repeats, self_sym_sizes: joining.repeat_backward(grad, repeats, self_sym_sizes),
               result="auto_linear"),

    # -- linear algebra --------------------------------------------------------------------------
    derivative("_linalg_det", A=lambda grad, result, A, LU, pivots: decompositions.linalg_det_backward(grad, result, A),
               output_differentiability=[True, False, False]),
    derivative("_linalg_slogdet", A=lambda grads, A, sign, LU, pivots: decompositions.slogdet_backward(grads[1], A),
               output_differentiability=[True, True, False, False]),
    derivative("linalg_inv_ex", A=lambda grad, inverse: -(inverse.mT @ (grad @ inverse.mT)),
               result=lambda A_t, inverse: -((inverse @ A_t) @ inverse), output_differentiability=[True, False]),
    derivative("_linalg_solve_ex", **{"A, B": lambda grad, result, A, LU, pivots, left, grad_input_mask:
                                      decompositions.linalg_solve_backward(grad, result, A, left, grad_input_mask)},
               output_differentiability=[True, False, False, False]),
    derivative("linalg_cholesky_ex", self=lambda grad, upper, L: decompositions.cholesky_backward(grad, upper, L),
               output_differentiability=[True, False]),
    derivative("linalg_qr", A=lambda grads, Q, R, mode: decompositions.linalg_qr_backward(grads, Q, R, mode)),
    derivative("_linalg_eigh", A=lambda grads, eigenvalues, eigenvectors:
               decompositions.eigh_backward(grads, eigenvalues, eigenvectors)),
    derivative("_linalg_svd", A=lambda grads, U, S, Vh, full_matrices, S_sym_argsize_minus_1:
               decompositions.svd_backward(grads[0], grads[1], grads[2], U, S, Vh, full_matrices)),
    derivative("linalg_pinv", self=lambda grad, result, self: decompositions.pinv_backward(grad, result, self)),
    derivative("linalg_cross", self=lambda grad, other, dim: ops.linalg_cross(other, grad, dim=dim),
               other=lambda grad, self, dim: ops.linalg_cross(grad, self, dim=dim),
               result=lambda self_t, other_t, self, other, dim:
                   ops.linalg_cross(self_t, other, dim=dim) + ops.linalg_cross(self, other_t, dim=dim)),
    derivative("mm", self=lambda grad, mat2, self_sym_sizes, self_sym_strides:
               linalg.mm_mat1_backward(grad, mat2, self_sym_sizes, self_sym_strides),
               mat2=lambda grad, self, mat2_sym_sizes, mat2_sym_strides:
               linalg.mm_mat2_backward(grad, self, mat2_sym_sizes, mat2_sym_strides),
               result=lambda self_t, mat2_t, self, mat2: ops.mm(self_t, mat2) + ops.mm(self, mat2_t)),
    derivative("mv", self=lambda grad, vec: grad.unsqueeze(1) * vec, vec=lambda grad, self: self.t().mv(grad),
               result=lambda self_t, vec_t, self, vec: ops.mv(self_t, vec) + ops.mv(self, vec_t)),
    derivative("dot", self=lambda grad, tensor: grad * tensor, tensor=lambda grad, self: grad * self,
               result=lambda self_t, tensor_t, self, tensor: ops.dot(self_t, tensor) + ops.dot(self, tensor_t)),
    derivative("bmm", self=lambda grad, mat2: grad.bmm(mat2.transpose(1, 2)),
               mat2=lambda grad, self: self.transpose(1, 2).bmm(grad),
               result=lambda self_t, mat2_t, self, mat2: ops.bmm(self_t, mat2) + ops.bmm(self, mat2_t)),
    derivative("addmm", self=lambda grad, beta: maybe_multiply(grad, beta),
               mat1=lambda grad, mat2, mat1_sym_sizes, mat1_sym_strides, alpha:
               linalg.mm_mat1_backward(grad, mat2, mat1_sym_sizes, mat1_sym_strides, alpha),
               mat2=lambda grad, mat1, mat2_sym_sizes, mat2_sym_strides, alpha:
               linalg.mm_mat2_backward(grad, mat1, mat2_sym_sizes, mat2_sym_strides, alpha),
               result=lambda self_t, mat1_t, mat2_t, mat1, mat2, beta, alpha:
                   self_t * beta + (ops.mm(mat1_t, mat2) + ops.mm(mat1, mat2_t)) * alpha),
    derivative("baddbmm", self=lambda grad, beta: maybe_multiply(grad, beta),
               batch1=lambda grad, batch2, alpha: maybe_multiply(grad.bmm(batch2.transpose(1, 2)), alpha),
               batch2=lambda grad, batch1, alpha: maybe_multiply(batch1.transpose(1, 2).bmm(grad), alpha),
               result=lambda self_t, batch1_t, batch2_t, batch1, batch2, beta, alpha:
                   maybe_multiply(self_t, beta) + maybe_multiply(batch1_t.bmm(batch2), alpha)
                   + maybe_multiply(batch1.bmm(batch2_t), alpha)),
    derivative("addmv", self=lambda grad, beta: maybe_multiply(grad, beta),
               mat=lambda grad, vec, alpha: maybe_multiply(ops.outer(grad, vec), alpha),
               vec=lambda grad, mat, alpha: maybe_multiply(mat.t().mv(grad), alpha),
               result=lambda self_t, mat_t, vec_t, mat, vec, beta, alpha:
                   maybe_multiply(self_t, beta) + maybe_multiply(mat_t.mv(vec), alpha)
                   + maybe_multiply(mat.mv(vec_t), alpha)),
    derivative("addr", self=lambda grad, beta: maybe_multiply(grad, beta),
               vec1=lambda grad, vec2, alpha: maybe_multiply(grad.mv(vec2), alpha),
               vec2=lambda grad, vec1, alpha: maybe_multiply(grad.t().mv(vec1), alpha),
               result=lambda self_t, vec1_t, vec2_t, vec1, vec2, beta, alpha:
                   maybe_multiply(self_t, beta) + maybe_multiply(ops.outer(vec1_t, vec2), alpha)
                   + maybe_multiply(ops.outer(vec1, vec2_t), alpha)),
    derivative("tril", self=lambda grad, diagonal: grad.tril(diagonal), result="auto_linear"),
    derivative("triu", self=lambda grad, diagonal: grad.triu(diagonal), result="auto_linear"),

    # -- indexing --------------------------------------------------------------------------------
    derivative("index.Tensor", self=lambda grad, self_sym_sizes, indices: indexing.index_backward(grad, self_sym_sizes, indices),
               result="auto_linear"),
    derivative("index_put", self=lambda grad, indices, accumulate: indexing.index_put_backward(grad, indices, accumulate),
               values=lambda grad, indices: ops.index(grad, indexing._Key(indices)),
               result=lambda self_t, values_t, indices, accumulate: ops.index_put(self_t, indices, values_t, accumulate)),
    derivative("masked_fill.Scalar", self=lambda grad, mask: ops.where(mask, _zeros(grad), grad),
               mask="non_differentiable", result=lambda self_t, mask: ops.masked_fill(self_t, mask, 0)),
    derivative("masked_fill.Tensor", self=lambda grad, mask: ops.where(mask, _zeros(grad), grad),
               value=lambda grad, mask: ops.where(mask, grad, _zeros(grad)).sum(), mask="non_differentiable",
               result=lambda self_t, value_t, mask: ops.masked_fill(self_t, mask, value_t)),
    derivative("masked_select", self=lambda grad, self, mask: indexing.masked_select_backward(grad, self, mask),
               mask="non_differentiable",
               result=lambda self_t, self, mask: ops.masked_select(self_t.expand_as(self), mask)),
    derivative("gather", self=lambda grad, self, dim, index, sparse_grad:
               ops.zeros_like(self).scatter_add(dim, index, grad),
               index="non_differentiable", result="auto_linear"),
    derivative("scatter.src", self=lambda grad, dim, index: grad.scatter(dim, index, 0), index="non_differentiable",
               src=lambda grad, dim, index: grad.gather(dim, index),
               result=lambda self_t, src_t, dim, index: self_t.scatter(dim, index, src_t)),
    derivative("scatter.value", self=lambda grad, dim, index: grad.scatter(dim, index, 0), index="non_differentiable",
               result=lambda self_t, dim, index: self_t.scatter(dim, index, 0)),
    derivative("scatter.reduce", node="torch::autograd::NotImplemented", self=no_derivative("scatter_reduce"),
               src=no_derivative("scatter_reduce"), index="non_differentiable"),
    derivative("scatter.value_reduce", node="torch::autograd::NotImplemented", self=no_derivative("scatter_reduce"),
               index="non_differentiable"),
    derivative("scatter_add", self=lambda grad: grad, index="non_differentiable",
               src=lambda grad, dim, index: grad.gather(dim, index),
               result=lambda self_t, src_t, dim, index: self_t.scatter_add(dim, index, src_t)),
    derivative("scatter_reduce.two", index="non_differentiable", **{
        "self, src": lambda grad, self, dim, index, src, reduce, include_self, result:
            indexing.scatter_reduce_backward(grad, self, dim, index, src, reduce, include_self, result)}),
    derivative("index_select", self=lambda grad, self_sym_sizes, dim, index:
               ops.zeros(self_sym_sizes, dtype=grad.dtype, device=grad.device).index_add(dim, index, grad),
               index="non_differentiable", result="auto_linear"),
    derivative("index_add", self=lambda grad: grad, index="non_differentiable",
               source=lambda grad, dim, index, source, source_dim, alpha:
               indexing.index_add_source_backward(grad, dim, index, source, source_dim, alpha),
               result=lambda self_t, source_t, dim, index, alpha: self_t.index_add(dim, index, source_t, alpha=alpha)),
    derivative("index_fill.int_Scalar", self=lambda grad, dim, index: grad.index_fill(dim, index, 0),
               index="non_differentiable", result=lambda self_t, dim, index: self_t.index_fill(dim, index, 0)),
    derivative("index_fill.int_Tensor", self=lambda grad, dim, index: grad.index_fill(dim, index, 0),
               index="non_differentiable",
               value=lambda grad, dim, index: grad.index_select(dim, index).sum(),
               result=lambda self_t, value_t, dim, index: self_t.index_fill(dim, index, value_t)),

    # -- embedding -------------------------------------------------------------------------------
    derivative("embedding", indices="non_differentiable",
               weight=lambda grad, indices, weight_sym_argsize_0, padding_idx, scale_grad_by_freq, sparse:
               embeddings.embedding_backward(grad, indices, weight_sym_argsize_0, padding_idx, scale_grad_by_freq, sparse),
               result="auto_linear"),
    derivative("embedding_dense_backward", indices="non_differentiable",
               grad_output=lambda grad, indices, padding_idx:
               embeddings.embedding_dense_double_backward(grad, indices, padding_idx),
               result="auto_linear"),

    # -- activations -----------------------------------------------------------------------------
    derivative("_softmax", self=lambda grad, result, dim: activations.softmax_backward(grad, result, dim),
               result=lambda self_t, result, dim: activations.softmax_jvp(self_t, result, dim)),
    derivative("_log_softmax", self=lambda grad, result, dim: activations.log_softmax_backward(grad, result, dim),
               result=lambda self_t, result, dim: activations.log_softmax_jvp(self_t, result, dim)),
    derivative("leaky_relu", self=lambda grad, self, negative_slope: ops.leaky_relu_backward(grad, self, negative_slope, False),
               result="auto_element_wise"),
    derivative("gelu", self=lambda grad, self, approximate: grad * activations.gelu_slope(self, approximate),
               result="auto_element_wise"),
    derivative("silu", self=lambda grad, self: grad * activations.silu_slope(self), result="auto_element_wise"),
    derivative("elu", self=lambda grad, alpha, scale, input_scale, self: grad * activations.elu_slope(self, alpha, scale, input_scale),
               result="auto_element_wise"),
    derivative("elu_", self=lambda grad, alpha, scale, input_scale, result:
               grad * activations.elu_slope_from_result(result, alpha, scale, input_scale),
               result=lambda self_t, alpha, scale, input_scale, result:
               self_t * activations.elu_slope_from_result(result, alpha, scale, input_scale)),
    derivative("celu", self=lambda grad, alpha, self: grad * activations.elu_slope(self, alpha, 1.0, 1.0 / alpha),
               result="auto_element_wise"),
    derivative("celu_", self=lambda grad, alpha, result: grad * activations.elu_slope_from_result(result, alpha, 1.0, 1.0 / alpha),
               result=lambda self_t, alpha, result: self_t * activations.elu_slope_from_result(result, alpha, 1.0, 1.0 / alpha)),
    derivative("hardsigmoid", self=lambda grad, self: ops.hardsigmoid_backward(grad, self), result="auto_element_wise"),
    derivative("hardsigmoid_backward", node="torch::autograd::NotImplemented",
               grad_output=no_derivative("hardsigmoid_backward"), self=no_derivative("hardsigmoid_backward")),
    derivative("hardswish", self=lambda grad, self: ops.hardswish_backward(grad, self), result="auto_element_wise"),
    derivative("hardswish_backward", grad_output=lambda grad, self: ops.hardswish_backward(grad, self),
               self=lambda grad, grad_output, self: activations.hardswish_double_backward(grad, grad_output, self),
               result=lambda grad_output_t, self_t, grad_output, self: ops.hardswish_backward(grad_output_t, self)
               + activations.hardswish_double_backward(self_t, grad_output, self)),
    derivative("_prelu_kernel", **{"self, weight": lambda grad, self, weight, grad_input_mask:
                                    activations.prelu_backward(grad, self, weight, grad_input_mask)},
               result=lambda self_t, weight_t, self, weight: ops.where(self >= 0, self_t, weight * self_t + weight_t * self)),
    derivative("glu", self=lambda grad, self, dim: activations.glu_backward(grad, self, dim),
               result=lambda self_t, self, dim: activations.glu_jvp(self_t, self, dim)),
    derivative("threshold", self=lambda grad, self, threshold: ops.threshold_backward(grad, self, threshold),
               result="auto_element_wise"),
    derivative("threshold_", self=lambda grad, self, threshold: ops.threshold_backward(grad, self, threshold),
               result=lambda self_t, self, threshold: ops.threshold_backward(self_t, self, threshold)),
    derivative("hardshrink", self=lambda grad, self, lambd: ops.hardshrink_backward(grad, self, lambd), result="auto_element_wise"),
    derivative("hardshrink_backward", grad_out=lambda grad, self, lambd: ops.hardshrink_backward(grad, self, lambd),
               self=lambda grad: _zeros(grad),
               result=lambda grad_out_t, self, lambd: ops.hardshrink_backward(grad_out_t, self, lambd)),
    derivative("softshrink", self=lambda grad, self, lambd: ops.softshrink_backward(grad, self, lambd), result="auto_element_wise"),
    derivative("softshrink_backward", grad_output=lambda grad, self, lambd: ops.softshrink_backward(grad, self, lambd),
               self=lambda grad: _zeros(grad),
               result=lambda grad_output_t, self, lambd: ops.softshrink_backward(grad_output_t, self, lambd)),
    derivative("mish", self=lambda grad, self: grad * activations.mish_slope(self), result="auto_element_wise"),
    derivative("softplus", self=lambda grad, self, beta, threshold: grad * activations.softplus_slope(self, beta, threshold),
               result="auto_element_wise"),
    derivative("hardtanh", self=lambda grad, self, min_val, max_val: ops.hardtanh_backward(grad, self, min_val, max_val),
               result="auto_element_wise"),
    derivative("hardtanh_backward", grad_output=lambda grad, self, min_val, max_val:
               ops.hardtanh_backward(grad, self, min_val, max_val), self=lambda grad: _zeros(grad),
               result=lambda grad_output_t, self, min_val, max_val: ops.hardtanh_backward(grad_output_t, self, min_val, max_val)),
    derivative("leaky_relu_backward", grad_output=lambda grad, self, negative_slope:
               ops.leaky_relu_backward(grad, self, negative_slope, False), self=lambda grad: _zeros(grad),
               result=lambda grad_output_t, self, negative_slope: ops.leaky_relu_backward(grad_output_t, self, negative_slope, False)),
    derivative("log_sigmoid_forward", self=lambda grad, self, buffer: grad * activations.log_sigmoid_slope(self),
               result=lambda self_t, self: (self_t * activations.log_sigmoid_slope(self), None),
               output_differentiability=[True, False]),

    # -- convolution, pooling, padding -----------------------------------------------------------
    derivative("convolution", **{"input, weight, bias": lambda grad, input, weight, bias_sym_sizes_opt, stride, padding,
                                 dilation, transposed, output_padding, groups, grad_input_mask:
                                 convolution.convolution_backward(grad, input, weight, bias_sym_sizes_opt, stride,
                                                                  padding, dilation, groups, grad_input_mask)},
               result=lambda input_t, weight_t, bias_t, input, weight, stride, padding, dilation, groups:
                   convolution.convolution_jvp(input_t, weight_t, bias_t, input, weight, stride, padding, dilation, groups)),
    derivative("max_pool2d_with_indices", self=lambda grad, self, kernel_size, stride, padding, dilation, ceil_mode, result1:
               convolution.max_pool2d_with_indices_backward(grad, self, result1),
               result=lambda self_t, result1: (convolution.max_pool2d_jvp(self_t, result1), None),
               output_differentiability=[True, False]),
    derivative("avg_pool2d", self=lambda grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override:
               convolution.avg_pool2d_backward(grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                               divisor_override),
               result="auto_linear"),
    derivative("constant_pad_nd", self=lambda grad, pad: convolution.constant_pad_backward(grad, pad),
               result=lambda self_t, pad: ops.constant_pad_nd(self_t, pad, 0)),
    derivative("reflection_pad1d", self=lambda grad, self, padding: convolution.folded_pad_backward("reflect")(grad, self, padding),
               result="auto_linear"),
    derivative("reflection_pad2d", self=lambda grad, self, padding: convolution.folded_pad_backward("reflect")(grad, self, padding),
               result="auto_linear"),
    derivative("reflection_pad3d", self=lambda grad, self, padding: convolution.folded_pad_backward("reflect")(grad, self, padding),
               result="auto_linear"),
    derivative("replication_pad1d", self=lambda grad, self, padding: convolution.folded_pad_backward("edge")(grad, self, padding),
               result="auto_linear"),
    derivative("replication_pad2d", self=lambda grad, self, padding: convolution.folded_pad_backward("edge")(grad, self, padding),
               result="auto_linear"),
    derivative("replication_pad3d", self=lambda grad, self, padding: convolution.folded_pad_backward("edge")(grad, self, padding),
               result="auto_linear"),

    # -- losses and normalization ----------------------------------------------------------------
    derivative("mse_loss", self=lambda grad, self, target, reduction: loss.mse_loss_backward(grad, self, target, reduction),
               target=lambda grad, self, target, reduction: -loss.mse_loss_backward(grad, self, target, reduction),
               result=lambda self_t, target_t, self, target, reduction: loss.mse_loss_jvp(self_t, target_t, self, target, reduction)),
    derivative("nll_loss_forward", self=lambda grad, self, target, weight, reduction, ignore_index, total_weight:
               loss.nll_loss_backward(grad, self, target, weight, reduction, ignore_index, total_weight),
               target="non_differentiable",
               result=lambda self_t, target, weight, reduction, ignore_index:
                   (ops.nll_loss_forward(self_t, target, weight, reduction, ignore_index)[0], None),
               output_differentiability=[True, False]),
    derivative("nll_loss2d_forward", self=lambda grad, self, target, weight, reduction, ignore_index, total_weight:
               loss.nll_loss_backward(grad, self, target, weight, reduction, ignore_index, total_weight),
               target="non_differentiable",
               result=lambda self_t, target, weight, reduction, ignore_index:
                   (ops.nll_loss2d_forward(self_t, target, weight, reduction, ignore_index)[0], None),
               output_differentiability=[True, False]),
    derivative("binary_cross_entropy", **{"self, target": lambda grad, self, target, weight, reduction:
                                          loss.binary_cross_entropy_backward(grad, self, target, weight, reduction)}),
    derivative("binary_cross_entropy_with_logits", **{
        "self, target": lambda grad, self, target, weight, pos_weight, reduction:
            loss.binary_cross_entropy_with_logits_backward(grad, self, target, weight, pos_weight, reduction)}),
    derivative("native_batch_norm", **{
        "input, weight, bias": lambda grad, input, weight, running_mean, running_var, training, eps, result1, result2,
        grad_input_mask: normalization.batch_norm_backward(grad, input, weight, running_mean, running_var, training,
                                                           eps, result1, result2, grad_input_mask)},
        output_differentiability=[True, False, False]),
    derivative("native_layer_norm", **{
        "input, weight, bias": lambda grad, input, normalized_shape, result1, result2, weight, bias, grad_input_mask:
            normalization.layer_norm_backward(grad, input, normalized_shape, result1, result2, weight, grad_input_mask)},
        result=lambda input_t, weight_t, bias_t, input, normalized_shape, weight, bias, eps:
            (normalization.layer_norm_jvp(input_t, weight_t, bias_t, input, normalized_shape, weight, bias, eps), None, None),
        output_differentiability=[True, False, False]),

    # -- random numbers: the new values do not depend on the old ones ----------------------------
    derivative("uniform_", self=lambda grad: _zeros(grad), result=lambda self: ops.zeros_like(self)),
    derivative("normal_", self=lambda grad: _zeros(grad), result=lambda self: ops.zeros_like(self)),
    derivative("normal.Tensor_float", mean=lambda grad, mean_sym_sizes: ops.zeros(mean_sym_sizes, dtype=grad.dtype),
               result="auto_element_wise"),
    derivative("normal.float_Tensor", std=lambda grad, std_sym_sizes: ops.zeros(std_sym_sizes, dtype=grad.dtype),
               result="auto_element_wise"),
    derivative("normal.Tensor_Tensor", mean=lambda grad, mean_sym_sizes: ops.zeros(mean_sym_sizes, dtype=grad.dtype),
               std=lambda grad, std_sym_sizes: ops.zeros(std_sym_sizes, dtype=grad.dtype),
               result=lambda mean_t: ops.zeros_like(mean_t)),
    derivative("bernoulli", self=lambda grad: _zeros(grad), result="auto_element_wise"),
    derivative("bernoulli_.Tensor", self=lambda grad: _zeros(grad), p=lambda grad, p: ops.zeros_like(p),
               result=lambda self: ops.zeros_like(self)),
    derivative("bernoulli_.float", self=lambda grad: _zeros(grad), result=lambda self: ops.zeros_like(self)),
    derivative("bernoulli.p", node="torch::autograd::NotImplemented", self=no_derivative("bernoulli")),
    derivative("random_", self=lambda grad: _zeros(grad), result=lambda self: ops.zeros_like(self)),
    derivative("exponential_", self=lambda grad: _zeros(grad), result=lambda self: ops.zeros_like(self)),
]

