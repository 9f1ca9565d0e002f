"""The Tensor's math methods and operators: ``x.sum()``, ``x + y``, ``x[0] = 1`` call the
functions of this package (the tensor class itself only holds metadata)."""
from __future__ import annotations

import builtins

import numpy as np

from .. import dtypes
from ..tensor import Tensor
from ._support import forward_mode
from .arithmetic import (
    add, div, floor_divide, maximum, minimum, mul, pow, remainder, rsub, square, sub,
)
from .comparison import (
    bitwise_and, bitwise_not, bitwise_or, bitwise_xor, eq, ge, gt, isfinite, isinf, isnan, isneginf,
    isposinf, le, logical_and, logical_not, logical_or, logical_xor, lt, ne, where,
)
from .creation import legacy_new, new_empty, new_full, new_ones, new_tensor, new_zeros
from .copies import _converter, _flip_method, clone, contiguous, detach, detach_, to
from .indexing import (
    gather, getitem, index_add, index_add_, index_fill, index_fill_, index_put_, index_select,
    masked_fill, masked_fill_, masked_select, scatter, scatter_, scatter_add, scatter_add_,
    scatter_reduce, scatter_reduce_, setitem,
)
from .inplace import (
    abs_, add_, clamp_, copy_, div_, exp_, fill_, floor_divide_, log_, mul_, neg_, pow_, relu_,
    remainder_, sigmoid_, sqrt_, sub_, tanh_, zero_,
)
from .joining import repeat, tile
from .linalg import addmm, bmm, dot, matmul, mm, mv, outer, tril, triu
from .reductions import (
    all, allclose, amax, amin, any, argmax, argmin, argsort, count_nonzero, cumprod, cumsum, equal, isclose,
    logsumexp, max, mean, min, nonzero, norm, prod, sort, std, sum, topk, var,
)
from .activations import log_softmax, softmax
from .unary import (
    abs, acos, asin, atan, ceil, clamp, cos, cosh, digamma, erf, exp, expm1, floor, frac, lgamma, log, log1p,
    log2, log10, neg, reciprocal, relu, round, rsqrt, sigmoid, sign, sin, sinh, sqrt, tan, tanh, trunc,
)
from .views import (
    _H, _T, _matrix_transpose, as_strided, broadcast_to, chunk, expand, expand_as, flatten, movedim,
    narrow, permute, ravel, reshape, reshape_as, select, split, squeeze, t, transpose, unbind,
    unflatten, unfold, unsqueeze, view, view_as,
)


def _reverse(fn):
    """``2 ** x`` calls ``x.__rpow__(2)``: the op with the operands the other way round."""
    def reversed_op(self, other):
        return fn(other, self)
    reversed_op.__name__ = fn.__name__
    reversed_op.jvp = lambda t, out, self, other: fn.jvp(t, out, other, self)
    return reversed_op


def _commuted(fn):
    """``2 * x`` calls ``x.__rmul__(2)``: torch records mul(x, 2), the tensor first (and so for +)."""
    def commuted_op(self, other):
        return fn(self, other)
    commuted_op.__name__ = fn.__name__
    commuted_op.jvp = fn.jvp
    return commuted_op


def _rdiv(self, other):
    return mul(reciprocal(self), other)


_rdiv.jvp = lambda t, out, self, other: -t(self) * out / self  # d(c / x) = -(c / x) dx / x


def _where_method(self, condition, other):
    return where(condition, self, other)


_where_method.jvp = lambda t, out, self, condition, other: where.jvp(t, out, condition, self, other)


def _invert(input):  # ~x: Python's operator has its own check (and TypeError) in torch
    if input.dtype.is_floating_point:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return bitwise_not(input)


def _comparison_operator(compare):
    """``t == None`` is False and ``t < [1, 2]`` a TypeError, as for torch: for an operand it
    cannot compare with, the operator hands over to Python (NotImplemented)."""
    def operator(self, other):
        if not isinstance(other, (Tensor, builtins.int, builtins.float, np.generic)):
            return NotImplemented
        return compare(self, other)
    operator.__name__ = compare.__name__
    return operator


def _type_as(self, other):
    """``x.type_as(y)``: x in y's dtype (x itself when it already has it)."""
    return to(self, other.dtype)


def _new(self, *args):
    """``x.new(...)``: the legacy constructor, in x's dtype and on x's device."""
    return legacy_new(Tensor, self.dtype, args, self._device)


_new.jvp = lambda t, out, self, *args: None


_METHODS = dict(
    add=add, sub=sub, mul=mul, div=div, true_divide=div, pow=pow, maximum=maximum,
    minimum=minimum, eq=eq, ne=ne, lt=lt, le=le, gt=gt, ge=ge, floor_divide=floor_divide,
    remainder=remainder, logical_and=logical_and, logical_or=logical_or, logical_not=logical_not,
    neg=neg, negative=neg, exp=exp, log=log, sqrt=sqrt, abs=abs, sin=sin, cos=cos, tanh=tanh,
    sigmoid=sigmoid, relu=relu, reciprocal=reciprocal, sign=sign, square=square, floor=floor,
    ceil=ceil, isnan=isnan, clamp=clamp, clip=clamp, where=_where_method,
    view=view, view_as=view_as, reshape=reshape, reshape_as=reshape_as, flatten=flatten,
    ravel=ravel, unflatten=unflatten, t=t, transpose=transpose, swapaxes=transpose,
    swapdims=transpose, permute=permute, unsqueeze=unsqueeze, squeeze=squeeze, expand=expand,
    expand_as=expand_as, broadcast_to=broadcast_to, select=select, narrow=narrow, split=split,
    chunk=chunk, unbind=unbind, as_strided=as_strided, clone=clone, contiguous=contiguous,
    detach=detach, detach_=detach_, to=to, sum=sum, mean=mean, prod=prod, max=max, min=min,
    amax=amax, amin=amin, argmax=argmax, argmin=argmin, topk=topk, sort=sort, all=all, any=any,
    allclose=allclose, isclose=isclose, equal=equal, nonzero=nonzero, count_nonzero=count_nonzero,
    var=var, std=std, norm=norm, mm=mm, mv=mv, dot=dot, bmm=bmm, matmul=matmul, outer=outer,
    addmm=addmm, repeat=repeat, tile=tile, index_put_=index_put_, masked_fill=masked_fill,
    gather=gather, scatter=scatter, scatter_=scatter_, scatter_add=scatter_add, scatter_add_=scatter_add_,
    scatter_reduce=scatter_reduce, scatter_reduce_=scatter_reduce_, index_select=index_select,
    masked_select=masked_select, index_add=index_add, index_add_=index_add_, index_fill=index_fill,
    index_fill_=index_fill_, add_=add_, sub_=sub_, mul_=mul_, div_=div_, pow_=pow_, exp_=exp_, log_=log_,
    sqrt_=sqrt_, neg_=neg_, relu_=relu_, sigmoid_=sigmoid_, tanh_=tanh_, abs_=abs_,
    clamp_=clamp_, clip_=clamp_, zero_=zero_, fill_=fill_, copy_=copy_,
    floor_divide_=floor_divide_, remainder_=remainder_,
    log_softmax=log_softmax, softmax=softmax, cumsum=cumsum, cumprod=cumprod, logsumexp=logsumexp,
    argsort=argsort, tril=tril, triu=triu, isinf=isinf, isfinite=isfinite, isposinf=isposinf,
    isneginf=isneginf, logical_xor=logical_xor, log1p=log1p, expm1=expm1, log2=log2, log10=log10,
    rsqrt=rsqrt, lgamma=lgamma, digamma=digamma, type_as=_type_as, new=_new, tan=tan, atan=atan, asin=asin, acos=acos, sinh=sinh, cosh=cosh, erf=erf, round=round,
    trunc=trunc, frac=frac, new_zeros=new_zeros, new_ones=new_ones, new_empty=new_empty,
    new_full=new_full, new_tensor=new_tensor,
    masked_fill_=masked_fill_, unfold=unfold, movedim=movedim, moveaxis=movedim, flip=_flip_method,
    float=_converter(dtypes.float32), double=_converter(dtypes.float64),
    long=_converter(dtypes.int64), int=_converter(dtypes.int32), bool=_converter(dtypes.bool),
    half=_converter(dtypes.float16), bfloat16=_converter(dtypes.bfloat16), short=_converter(dtypes.int16), byte=_converter(dtypes.uint8), char=_converter(dtypes.int8),
    __add__=add, __radd__=_commuted(add), __sub__=sub, __rsub__=rsub, __mul__=mul,
    __rmul__=_commuted(mul), __truediv__=div, __rtruediv__=_rdiv, __floordiv__=floor_divide,
    __rfloordiv__=_reverse(floor_divide), __mod__=remainder, __pow__=pow, __rpow__=_reverse(pow),
    __matmul__=matmul, __rmatmul__=_reverse(matmul), __neg__=neg, __abs__=abs,
    __eq__=_comparison_operator(eq), __ne__=_comparison_operator(ne), __lt__=_comparison_operator(lt),
    __le__=_comparison_operator(le), __gt__=_comparison_operator(gt), __ge__=_comparison_operator(ge),
    __and__=bitwise_and, __or__=bitwise_or, __xor__=bitwise_xor, __invert__=_invert,
    # x += y, x //= y, ... write into x, as torch's do (without these Python would rebind x)
    __iadd__=add_, __isub__=sub_, __imul__=mul_, __itruediv__=div_, __ifloordiv__=floor_divide_,
    __imod__=remainder_, __ipow__=pow_,
    __getitem__=getitem, __setitem__=setitem,
    T=property(_T), H=property(_H),
    mT=property(_matrix_transpose("mT", "This function is the identity in these cases.")),
    mH=property(_matrix_transpose("mH", "Consider using x.conj().")),
)


_INPLACE_OPERATORS = ("__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__", "__imod__",
                      "__ipow__", "__setitem__")


def install():
    """Put the methods on Tensor, each passing forward-mode tangents on (see _support.forward_mode)."""
    for name, fn in _METHODS.items():
        inplace = (name.endswith("_") and not name.startswith("__")) or name in _INPLACE_OPERATORS
        if isinstance(fn, property):
            fn = property(forward_mode(fn.fget))
        elif not isinstance(fn, type):
            fn = forward_mode(fn, inplace=inplace)
        setattr(Tensor, name, fn)
