"""torch.save / torch.load in torch's own format, both ways: what torch writes, reftorch reads, and
the reverse, with views still sharing one storage after loading; weights_only as torch 2.13
defaults it; copy.deepcopy of tensors and models."""
from __future__ import annotations

import copy
import io
import pickle
import zipfile

import pytest
import torch

import reftorch
from engine_support import LIBS, assert_same, same_error


def _model(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.BatchNorm1d(4), lib.nn.Linear(4, 2))


def _trained(lib):
    """A model and an Adam optimizer after two steps (state: step, exp_avg, exp_avg_sq)."""
    model = _model(lib)
    optimizer = lib.optim.Adam(model.parameters(), lr=0.01)
    x = lib.arange(15.0).reshape(5, 3) / 10
    for _ in range(2):
        optimizer.zero_grad()
        model(x).pow(2).mean().backward()
        optimizer.step()
    return model, optimizer


def _checkpoints(lib):
    """The structures programs save: state_dicts, views of one tensor, nested containers."""
    model, optimizer = _trained(lib)
    base = lib.arange(12.0).reshape(3, 4)
    return {
        "state_dict": model.state_dict(),
        "checkpoint": {"epoch": 5, "model_state_dict": model.state_dict(),
                       "optimizer_state_dict": optimizer.state_dict(), "loss": 0.25, "note": None},
        "views": {"base": base, "row": base[1], "column": base[:, 2], "t": base.t(), "tail": base.view(-1)[5:]},
        "nested": [lib.tensor(3), (lib.tensor([True, False]), lib.tensor([1, 2], dtype=lib.int64)),
                   {"half": lib.tensor([1.5, -2.0], dtype=lib.float16), "bf": lib.tensor([0.5], dtype=lib.bfloat16),
                    "empty": lib.zeros(0, 3), "double": lib.tensor([[1.0, 2.0]], dtype=lib.float64),
                    "leaf": lib.ones(2, requires_grad=True)}, "text", 7, 2.5],
        "dtypes": {"dtype": lib.float64, "shape": lib.Size([2, 3]), "device": lib.device("cpu")},
    }


def _saved(lib, obj, **kwargs) -> bytes:
    buffer = io.BytesIO()
    lib.save(obj, buffer, **kwargs)
    return buffer.getvalue()


@pytest.mark.parametrize("what", ["state_dict", "checkpoint", "views", "nested", "dtypes"])
def test_a_file_torch_writes_loads_on_reftorch_and_the_reverse(what):
    theirs, mine = _checkpoints(torch)[what], _checkpoints(reftorch)[what]
    torch_file, reftorch_file = _saved(torch, theirs), _saved(reftorch, mine)
    expected = torch.load(io.BytesIO(torch_file))
    assert_same(reftorch.load(io.BytesIO(torch_file)), expected, geometry=True, name="torch's file on reftorch")
    assert_same(reftorch.load(io.BytesIO(reftorch_file)), torch.load(io.BytesIO(reftorch_file)), geometry=True, name="reftorch's file")
    assert_same(reftorch.load(io.BytesIO(reftorch_file)), expected, geometry=True, name="reftorch's file against torch's")


@pytest.mark.parametrize("writer", LIBS, ids=["written by torch", "written by reftorch"])
def test_views_share_one_storage_after_loading(writer):
    base = writer.arange(6.0).reshape(2, 3)
    data = _saved(writer, {"base": base, "row": base[1], "t": base.t()})
    for lib in LIBS:
        loaded = lib.load(io.BytesIO(data))
        loaded["row"].add_(100)
        loaded["t"][0, 0] = -1
        assert loaded["base"].tolist() == [[-1.0, 1.0, 2.0], [103.0, 104.0, 105.0]], lib.__name__
        assert loaded["row"]._base is None and not loaded["row"]._is_view()  # shared, but not a view
        assert loaded["base"].storage_offset() == 0 and loaded["row"].storage_offset() == 3


def test_the_archive_has_torchs_records_and_alignment(tmp_path):
    names = []
    for lib in LIBS:
        path = tmp_path / f"{lib.__name__}_model.pt"
        lib.save(_checkpoints(lib)["state_dict"], path)
        with zipfile.ZipFile(path) as archive:
            names.append(archive.namelist())
            for info in archive.infolist():
                assert info.compress_type == zipfile.ZIP_STORED
                if "/data/" in info.filename:  # storages start at a multiple of 64, for mmap
                    with open(path, "rb") as f:
                        f.seek(info.header_offset + 26)
                        name_length, extra_length = int.from_bytes(f.read(2), "little"), int.from_bytes(f.read(2), "little")
                    assert (info.header_offset + 30 + name_length + extra_length) % 64 == 0
            version, byteorder = archive.read(names[-1][0].split("/")[0] + "/version"), archive.read(
                names[-1][0].split("/")[0] + "/byteorder")
        assert (version, byteorder) == (b"3\n", b"little")
    assert names[1] == [n.replace("torch_model", "reftorch_model") for n in names[0]]


def test_a_saved_pickle_names_torchs_globals():
    import pickletools
    texts = []
    for lib in LIBS:
        with zipfile.ZipFile(io.BytesIO(_saved(lib, {"w": lib.ones(2), "p": lib.nn.Parameter(lib.zeros(1))}))) as z:
            out = io.StringIO()
            pickletools.dis(z.read("archive/data.pkl"), out)
            texts.append([line.split(maxsplit=2)[-1] for line in out.getvalue().splitlines() if "GLOBAL" in line])
    assert texts[1] == texts[0]


class Settings:
    """A class of the program's own: weights_only refuses it unless allow-listed."""

    def __init__(self, rate):
        self.rate = rate


def test_weights_only_is_the_default_and_refuses_a_class_with_torchs_message():
    def program(lib):
        lib.load(io.BytesIO(_saved(lib, {"settings": Settings(0.1), "w": lib.ones(1)})))
    same_error(program)


def test_weights_only_refuses_a_builtin_function_with_torchs_message():
    same_error(lambda lib: lib.load(io.BytesIO(_saved(lib, {"f": print}))))


def test_weights_only_false_and_safe_globals_load_a_class():
    for lib in LIBS:
        data = _saved(lib, {"settings": Settings(0.1), "w": lib.ones(1)})
        assert lib.load(io.BytesIO(data), weights_only=False)["settings"].rate == 0.1
        with lib.serialization.safe_globals([Settings]):
            assert lib.load(io.BytesIO(data))["settings"].rate == 0.1
        with pytest.raises(pickle.UnpicklingError):
            lib.load(io.BytesIO(data))
        with pytest.raises(RuntimeError, match="Can not safely load weights when explicit pickle_module"):
            lib.load(io.BytesIO(data), pickle_module=pickle, weights_only=True)


def test_a_whole_model_saved_by_reftorch_loads_with_weights_only_false(tmp_path):
    model = _model(reftorch)
    reftorch.save(model, tmp_path / "model.pth")
    loaded = reftorch.load(tmp_path / "model.pth", weights_only=False)
    assert repr(loaded) == repr(model)
    x = reftorch.ones(2, 3)
    assert loaded.eval()(x).tolist() == model.eval()(x).tolist()
    assert type(loaded[0].weight).__name__ == "Parameter" and loaded[0].weight.requires_grad


@pytest.mark.parametrize("map_location", ["cpu", "device", "dict", "callable"])
def test_map_location_forms_load_on_the_cpu(map_location):
    where = {"cpu": "cpu", "device": reftorch.device("cpu"), "dict": {"cpu": "cpu"},
             "callable": lambda storage, location: storage}[map_location]
    loaded = reftorch.load(io.BytesIO(_saved(torch, {"x": torch.arange(3.0)})), map_location=where)
    assert loaded["x"].device.type == "cpu" and loaded["x"].tolist() == [0.0, 1.0, 2.0]


# -- copy.deepcopy ------------------------------------------------------------------------------
def test_deepcopy_of_a_model_is_independent_and_keeps_tied_weights():
    def program(lib):
        model = _model(lib)
        tied = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Linear(2, 2))
        tied[1].weight = tied[0].weight
        twin, tied_twin = copy.deepcopy(model), copy.deepcopy(tied)
        with lib.no_grad():
            twin[0].weight.add_(1)
        return (twin[0].weight is model[0].weight, (twin[0].weight - model[0].weight).sum().item(),
                tied_twin[1].weight is tied_twin[0].weight, tied_twin[1].weight is tied[0].weight,
                type(twin[0].weight).__name__, twin[0].weight.requires_grad, list(twin.state_dict()), repr(twin))
    theirs, mine = (program(lib) for lib in LIBS)
    assert mine == theirs


def test_deepcopy_of_tensors_keeps_sharing_grad_and_attributes():
    def program(lib):
        base = lib.arange(6.0).reshape(2, 3).requires_grad_()
        base.grad = lib.ones(2, 3)
        base.note = "kept"
        row = base.detach()[1]
        a, b, c = copy.deepcopy([base, row, base])
        b.add_(10)
        return (a.tolist(), a.grad.tolist(), a.note, a.requires_grad, c is a, b._is_view(),
                a.storage_offset(), b.storage_offset(), base.tolist())
    theirs, mine = (program(lib) for lib in LIBS)
    assert mine == theirs


def test_deepcopy_of_a_non_leaf_raises_torchs_error():
    same_error(lambda lib: copy.deepcopy(lib.ones(2, requires_grad=True) * 2))


def test_state_dict_metadata_records_module_versions():
    for lib in LIBS:
        assert dict(_model(lib).state_dict()._metadata) == {"": {"version": 1}, "0": {"version": 1},
                                                           "1": {"version": 1}, "2": {"version": 2},
                                                           "3": {"version": 1}}


@pytest.mark.parametrize("where", ["missing folder", "missing file"])
def test_saving_into_a_missing_folder_or_loading_a_missing_file_raises_as_torch(where, tmp_path):
    def program(lib):
        if where == "missing folder":
            lib.save({"w": lib.ones(1)}, str(tmp_path / "no-such-folder" / "model.pt"))
        else:
            lib.load(str(tmp_path / "model.pt"))
    same_error(program, prefix=where == "missing file")


def test_a_class_pickle_cannot_find_fails_in_the_c_picklers_words():
    class Hidden:  # a local class: pickle cannot look it up by name
        pass

    def program(lib):
        lib.save({"x": Hidden()}, io.BytesIO())
    same_error(program)


def test_a_tensor_with_a_hook_and_an_attribute_saves_its_attribute_only():
    def program(lib):
        x = lib.ones(2, requires_grad=True)
        x.register_hook(lambda grad: grad * 2)
        x.note = "kept"
        loaded = lib.load(io.BytesIO(_saved(lib, x)))
        twin = copy.deepcopy(x)
        return loaded.note, loaded.requires_grad, twin.note, loaded.tolist()
    theirs, mine = (program(lib) for lib in LIBS)
    assert mine == theirs
