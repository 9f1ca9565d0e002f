"""Devices and backends as a CPU-only torch reports them: a CPU index is dropped, torch.backends'
switches exist (and say nothing is available), torch.accelerator finds none, the default device
for factories; tensor.storage() and the small dtype conversions."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from engine_support import LIBS, same_error, same_program


def test_a_cpu_index_is_dropped_from_tensors():
    def program(lib):
        d = lib.device("cpu", 0)
        t = lib.ones(2, device=d)
        return str(d), repr(d), str(t.device), repr(t.device), str(lib.zeros(1, device="cpu:0").device), \
            t.to(d).device == lib.device("cpu"), t.get_device()
    theirs, mine = (program(lib) for lib in LIBS)
    assert mine == theirs


def test_backend_switches_and_availability():
    def program(lib):
        b = lib.backends
        before = (b.cudnn.enabled, b.cudnn.benchmark, b.cudnn.deterministic, b.cudnn.allow_tf32,
                  b.cudnn.is_available(), b.cudnn.version(), b.mps.is_available(), b.mps.is_built(),
                  b.cuda.matmul.allow_tf32, b.cuda.is_built())
        b.cudnn.benchmark, b.cudnn.deterministic = True, True
        after = (b.cudnn.benchmark, b.cudnn.deterministic)
        b.cudnn.benchmark, b.cudnn.deterministic = False, False
        return before, after
    theirs, mine = (program(lib) for lib in LIBS)
    assert mine == theirs



def test_cudnn_flags_block_sets_and_restores_the_switches():
    def program(lib):
        c = lib.backends.cudnn
        with c.flags(deterministic=True, benchmark=True) as given:
            inside = (given, c.enabled, c.deterministic, c.benchmark, c.allow_tf32)
        return inside, (c.enabled, c.deterministic, c.benchmark, c.benchmark_limit, c.fp32_precision)
    theirs, mine = (program(lib) for lib in LIBS)
    assert mine == theirs


def test_untyped_storage_is_bytes_as_torchs():
    def program(lib):
        t = lib.tensor([1.5, -2.0])
        s = t.untyped_storage()
        view = t.view(2)
        return (type(s).__name__, repr(s), str(lib.tensor([], dtype=lib.uint8).untyped_storage()), s.size(),
                s.nbytes(), s.element_size(), s.tolist(), s[3], repr(s[1:3]), s[1:3].data_ptr() - s.data_ptr(),
                s.data_ptr() == t.data_ptr(),
                view.is_set_to(t), t[1:].is_set_to(t), t.t().is_set_to(t), t.clone().is_set_to(t))
    theirs, mine = (program(lib) for lib in LIBS)
    assert mine == theirs

def test_accelerator_reports_none_and_tutorial_device_choice_is_cpu():
    def program(lib):
        device = lib.accelerator.current_accelerator().type if lib.accelerator.is_available() else "cpu"
        return (device, lib.accelerator.is_available(), lib.accelerator.current_accelerator(),
                lib.accelerator.device_count(), str(lib.ones(1, device=device).device))
    theirs, mine = (program(lib) for lib in LIBS)
    assert mine == theirs
    same_error(lambda lib: lib.accelerator.current_device_index())


def test_set_default_device_moves_factories_only():
    def program(lib):
        lib.set_default_device("cpu")
        try:
            made = [str(f().device) for f in (lambda: lib.ones(2), lambda: lib.tensor([1.0]), lambda: lib.arange(3),
                                              lambda: lib.randn(2), lambda: lib.zeros(1, 2))]
            return made, str(lib.get_default_device())
        finally:
            lib.set_default_device(None)
    theirs, mine = (program(lib) for lib in LIBS)
    assert mine == theirs


def test_the_default_device_reaches_every_factory():
    import reftorch
    reftorch.set_default_device("sim")
    try:
        devices = {str(t.device) for t in (reftorch.ones(2), reftorch.tensor([1.0]), reftorch.arange(3),
                                           reftorch.randn(2), reftorch.full((2,), 3.0), reftorch.empty(1))}
        assert devices == {"sim:0"} and str(reftorch.get_default_device()) == "sim:0"
        assert str(reftorch.ones(1, device="cpu").device) == "cpu"
    finally:
        reftorch.set_default_device(None)
    assert str(reftorch.ones(1).device) == "cpu"


def test_set_default_device_cuda_fails_at_the_first_factory():
    def program(lib):
        lib.set_default_device("cuda")
        try:
            lib.ones(1)
        finally:
            lib.set_default_device(None)
    same_error(program)


def test_storage_shows_sharing_values_and_prints_as_torch():
    def program(lib):
        base = lib.arange(6.0).reshape(2, 3)
        row, copy = base[1], base.clone()
        s = base.storage()
        s[0] = 9.0
        return (row.storage().data_ptr() == s.data_ptr(), copy.storage().data_ptr() == s.data_ptr(), len(s),
                s.size(), s.tolist(), s[4], str(s.dtype), str(s.device), s.nbytes(), s.element_size(),
                repr(s), repr(lib.tensor([], dtype=lib.int64).storage()), repr(lib.tensor([True]).storage()),
                base.tolist(), type(s).__name__, lib.FloatStorage.dtype == lib.float32)
    theirs, mine = (program(lib) for lib in LIBS)
    assert mine == theirs


def test_storage_warns_once_per_process_as_torch():
    script = textwrap.dedent("""
        import sys, warnings
        import {lib} as torch
        warnings.simplefilter("always")
        with warnings.catch_warnings(record=True) as caught:
            torch.ones(2).storage(); torch.ones(3).storage()
        print([(w.category.__name__, str(w.message)) for w in caught])
    """)
    said = [subprocess.run([sys.executable, "-c", script.format(lib=lib.__name__)], capture_output=True, text=True,
                           check=True).stdout for lib in LIBS]
    assert said[1] == said[0] and said[0].count("TypedStorage is deprecated") == 1


@pytest.mark.parametrize("method", ["short", "byte", "char", "half", "bool"])
def test_small_dtype_conversions(method):
    same_program(lambda lib: getattr(lib.tensor([[-2.5, 0.0, 7.9]]), method)())


def test_a_device_is_a_context_manager_for_factories():
    def program(lib):
        with lib.device("cpu") as entered:
            inside = (str(lib.ones(1).device), str(lib.get_default_device()), str(entered))
        return inside, str(lib.get_default_device())
    theirs, mine = (program(lib) for lib in LIBS)
    assert mine == theirs
    import reftorch
    with reftorch.device("sim"):
        assert str(reftorch.zeros(2).device) == "sim:0"
    assert str(reftorch.zeros(2).device) == "cpu"


def test_entering_cuda_fails_at_the_first_factory_and_restores_the_default():
    def program(lib):
        try:
            with lib.device("cuda"):
                lib.ones(1)
        finally:
            assert str(lib.get_default_device()) == "cpu"
    same_error(program)


# -- the meta device: shapes and dtypes, no values ----------------------------------------------
def test_meta_tensors_carry_shapes_dtypes_and_nodes_through_ops_and_layers():
    """Factories, .to('meta'), pointwise ops, matmul, reductions, softmax, nn.Linear(device='meta'),
    printed as torch prints them (``tensor(..., device='meta', size=...)``); a meta model's
    to_empty(device='cpu') gives it memory."""
    def program(lib):
        x = lib.randn(2, 3, device="meta")
        layer = lib.nn.Linear(3, 4, device="meta")
        w = lib.ones(3, requires_grad=True).to("meta")
        results = [x + 1, x @ x.T, x.sum(0), x.mean(1, keepdim=True), x.t(), x.to(lib.float64), x.softmax(-1),
                   lib.zeros(2, 3, device="meta", dtype=lib.int64), lib.arange(3, device="meta"), lib.empty(0, device="meta"),
                   lib.tensor(2.0, device="meta"), layer(x), w * 2, lib.ones(2, device="meta") + lib.tensor(1.0),
                   x.max(dim=1), lib.ones(3).to("meta")]
        return ([repr(r) for r in results], [tuple(r.shape) if hasattr(r, "shape") else None for r in results],
                [str(r.dtype) if hasattr(r, "dtype") else None for r in results], [r.stride() for r in results[:7]],
                repr(layer.weight), str(x.device), x.is_meta, lib.ones(2).is_meta, x.t().is_contiguous(),
                repr(lib.nn.Linear(3, 4).to("meta").bias), layer.to_empty(device="cpu").weight.shape,
                str(layer.weight.device))
    same_program(program)


@pytest.mark.parametrize("program", [
    lambda lib: lib.randn(2, 3, device="meta").item(),
    lambda lib: lib.tensor(2.0, device="meta").item(),
    lambda lib: bool(lib.tensor(1.0, device="meta")),
    lambda lib: float(lib.tensor(1.0, device="meta")),
    lambda lib: lib.ones(2, device="meta").tolist(),
    lambda lib: lib.ones(2, device="meta").cpu(),
    lambda lib: lib.ones(2, device="meta").to("cpu"),
    lambda lib: lib.ones(2, device="meta").numpy(),
    lambda lib: lib.ones(2) + lib.ones(2, device="meta"),
    lambda lib: lib.ones(2, device="meta") @ lib.ones(2),
], ids=["item-many", "item", "bool", "float", "tolist", "cpu", "to-cpu", "numpy", "cpu-plus-meta", "meta-matmul-cpu"])
def test_meta_tensors_refuse_to_give_values_in_torchs_words(program):
    same_error(program)
