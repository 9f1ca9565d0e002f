"""Making tensors, against torch 2.13: torch.Tensor and the legacy typed constructors
(FloatTensor, LongTensor...), a tensor's new_* factories, factories given size= as a keyword,
and the dtype of an empty list."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import reftorch
from engine_support import dtype_name, same_error, same_program, same_warnings


# -- constructors and factories: torch.Tensor and the legacy types, new_*, size= -----------
@pytest.mark.parametrize("call", [
    lambda lib: lib.Tensor([1, 2]), lambda lib: lib.Tensor(2, 3).shape, lambda lib: lib.Tensor(),
    lambda lib: lib.Tensor(np.arange(3)), lambda lib: lib.Tensor([[1, 2], [3, 4]]).dtype,
    lambda lib: lib.Tensor([True, False]), lambda lib: lib.FloatTensor([1]), lambda lib: lib.LongTensor([1.7]),
    lambda lib: lib.DoubleTensor(2).shape, lambda lib: lib.IntTensor([1, 2]), lambda lib: lib.BoolTensor([1, 0]),
    lambda lib: lib.ByteTensor([3]), lambda lib: isinstance(lib.ones(2), lib.FloatTensor),
    lambda lib: isinstance(lib.ones(2, dtype=lib.int64), lib.FloatTensor),
    lambda lib: isinstance(lib.ones(2, dtype=lib.int64), lib.LongTensor),
    lambda lib: lib.Tensor(lib.Size([2, 3])).shape, lambda lib: lib.Tensor([1.0]).requires_grad,
])
def test_the_legacy_tensor_constructors(call):
    same_program(lambda lib: str(call(lib)) if not isinstance(call(lib), (lib.Tensor, bool)) else call(lib))


def test_torch_tensor_of_a_tensor_shares_its_memory_and_refuses_bad_data():
    def program(lib):
        t = lib.ones(2)
        u = lib.Tensor(t)
        u[0] = 5
        return t, u is t, u.data_ptr() == t.data_ptr()
    same_program(program)
    same_error(lambda lib: lib.Tensor(2.5))
    same_error(lambda lib: lib.Tensor(-1))


@pytest.mark.parametrize("method", ["new_zeros", "new_ones", "new_empty"])
def test_new_factories_take_the_tensors_dtype_and_device(method):
    def program(lib):
        x = lib.ones(2, dtype=lib.float64)
        a = getattr(x, method)(3, 2)
        b = getattr(x, method)((2,), dtype=lib.int32)
        c = getattr(x, method)(size=(1, 2), requires_grad=True)
        return ((a.shape, str(a.dtype)) if method == "new_empty" else a, b.shape, str(b.dtype), c.requires_grad,
                str(c.dtype))
    same_program(program)


def test_new_full_and_new_tensor():
    def program(lib):
        x = lib.ones(2, dtype=lib.int32)
        return x.new_full((2, 2), 7), x.new_tensor([1.5, 2.5]), x.new_tensor([1, 2], dtype=lib.float64)
    same_program(program)
    same_warnings(lambda lib: lib.ones(2).new_tensor(lib.ones(2)))


@pytest.mark.parametrize("factory", ["zeros", "ones", "empty", "rand", "randn"])
def test_factories_take_size_as_a_keyword(factory):
    def program(lib):
        lib.manual_seed(0)
        out = [getattr(lib, factory)(size=shape) for shape in [(), (2,), (2, 3)]]
        return [o.shape for o in out] if factory == "empty" else out
    same_program(program)
    same_error(lambda lib: getattr(lib, factory)(2, size=(2,)), prefix=True)


def test_tensor_of_empty_list_is_float32():
    assert dtype_name(reftorch.tensor([])) == dtype_name(torch.tensor([])) == "float32"
