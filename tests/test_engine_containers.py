"""Module containers keep torch's order: replacing a child keeps its place, ParameterDict
orders keys as torch does, ModuleDict.pop. Each program runs on torch and on reftorch
(engine_support)."""
from __future__ import annotations

from collections import OrderedDict

import pytest

from engine_support import same_error, same_program


def _child_names(module):
    return [name for name, _ in module.named_children()]


def test_replacing_a_sequential_layer_keeps_its_place_and_the_forward_order():
    def program(lib):
        lib.manual_seed(0)
        seq = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.ReLU(), lib.nn.Linear(2, 1))
        seq[1] = lib.nn.LeakyReLU(0.5)
        seq[-1] = lib.nn.Linear(2, 3)
        out = seq(lib.tensor([[-1.0, 2.0]]))
        return out, _child_names(seq), [type(m).__name__ for m in seq], repr(seq)
    same_program(program)


def test_modulelist_setitem_and_replacing_an_attribute_keep_the_children_order():
    def program(lib):
        nn = lib.nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Linear(2, 2)
                self.fc = nn.Linear(2, 2)
                self.blocks = nn.ModuleList([nn.ReLU(), nn.Tanh(), nn.Sigmoid()])
                self.scale = nn.Parameter(lib.ones(1))
                self.shift = nn.Parameter(lib.zeros(1))

        net = Net()
        net.fc = nn.Linear(2, 5)       # transfer learning's "replace the head"
        net.blocks[1] = nn.ELU()
        net.blocks[-1] = nn.GELU()
        net.scale = nn.Parameter(lib.full((1,), 2.0))
        return (_child_names(net), [type(m).__name__ for m in net.blocks], list(net.state_dict()),
                [n for n, _ in net.named_parameters()], repr(net))
    same_program(program)


@pytest.mark.parametrize("how", ["dict", "ordered", "pairs", "setitem", "update"])
def test_parameterdict_key_order_is_torchs(how):
    def program(lib):
        values = {"zeta": lib.nn.Parameter(lib.ones(1)), "alpha": lib.nn.Parameter(lib.zeros(2)),
                  "mid": lib.nn.Parameter(lib.ones(3))}
        if how == "dict":
            pd = lib.nn.ParameterDict(values)
        elif how == "ordered":
            pd = lib.nn.ParameterDict(OrderedDict(values))
        elif how == "pairs":
            pd = lib.nn.ParameterDict(list(values.items()))
        elif how == "setitem":
            pd = lib.nn.ParameterDict()
            for key, value in values.items():
                pd[key] = value
        else:
            pd = lib.nn.ParameterDict({"mid": lib.nn.Parameter(lib.zeros(1))})
            pd.update(values)
        return list(pd.keys()), [n for n, _ in pd.named_parameters()], list(pd.state_dict())
    same_program(program)


def test_moduledict_keeps_a_plain_dicts_order():
    def program(lib):
        md = lib.nn.ModuleDict({"zeta": lib.nn.ReLU(), "alpha": lib.nn.Tanh()})
        md["zeta"] = lib.nn.Sigmoid()
        return list(md.keys()), [type(m).__name__ for m in md.values()]
    same_program(program)


# -- deleting from Sequential --------------------------------------------------------------
def test_deleting_from_sequential_numbers_the_rest_again():
    def program(lib):
        nn = lib.nn
        seq = nn.Sequential(nn.ReLU(), nn.Tanh(), nn.Sigmoid(), nn.Identity())
        del seq[0]
        first = [name for name, _ in seq.named_children()]
        del seq[-1]
        del seq[0:1]
        return first, [name for name, _ in seq.named_children()], type(seq[0]).__name__, repr(seq)
    same_program(program)


# -- ModuleDict.pop ------------------------------------------------------------------------
def test_module_dict_pop_like_torch():
    def program(lib):
        d = lib.nn.ModuleDict({"act": lib.nn.ReLU(), "out": lib.nn.Linear(2, 1)})
        popped = d.pop("act")
        return repr(popped), list(d.keys()), len(list(d.parameters()))
    same_program(program)
    same_error(lambda lib: lib.nn.ModuleDict({"a": lib.nn.ReLU()}).pop("b"))
