"""RNN, LSTM, GRU, their cells and nn.utils.rnn against torch: parameters (names, shapes, torch's
initial numbers for a seed), outputs, final states and gradients, padded and packed, batched and
not, and torch's errors."""
from __future__ import annotations

import pytest

from engine_support import LIBS, assert_same, same_error

# float32 recurrences of a few steps: each step's matmuls and gates round as torch's do except for
# BLAS's and oneDNN's summation order, a few ulp per step
TOL = dict(rtol=1e-5, atol=2e-6)


def _state(h):
    return h[0] if isinstance(h, tuple) else h


CONFIGS = [
    ("RNN", {}), ("RNN", {"nonlinearity": "relu", "num_layers": 2}), ("RNN", {"bias": False, "batch_first": True}),
    ("LSTM", {}), ("LSTM", {"num_layers": 2, "bidirectional": True}), ("LSTM", {"proj_size": 2, "batch_first": True}),
    ("GRU", {}), ("GRU", {"bidirectional": True, "batch_first": True}), ("GRU", {"num_layers": 3}),
]


@pytest.mark.parametrize("cls,kwargs", CONFIGS, ids=[f"{c}-{i}" for i, (c, _) in enumerate(CONFIGS)])
def test_recurrent_layers_match_torch(cls, kwargs):
    def program(lib):
        lib.manual_seed(0)
        layer = getattr(lib.nn, cls)(3, 4, **kwargs)
        x = lib.randn(2, 5, 3) if kwargs.get("batch_first") else lib.randn(5, 2, 3)
        out, h = layer(x)
        (out.pow(2).sum() + _state(h).sum()).backward()
        names = [(n, tuple(p.shape)) for n, p in layer.named_parameters()]
        return (out, h, [p.grad for p in layer.parameters()], names, repr(layer), dict(layer.state_dict()),
                [[tuple(w.shape) for w in ws] for ws in layer.all_weights])
    theirs, mine = (program(lib) for lib in LIBS)
    assert_same(mine[0], theirs[0], tolerance=TOL)
    assert_same(mine[1], theirs[1], tolerance=TOL)
    assert_same(mine[2], theirs[2], tolerance=TOL)
    assert mine[3:5] == theirs[3:5] and mine[6] == theirs[6]
    assert list(mine[5]) == list(theirs[5])
    for key in theirs[5]:  # initial weights: torch's numbers for the seed
        assert_same(mine[5][key], theirs[5][key])


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_unbatched_input_and_given_initial_state(cls):
    def program(lib):
        lib.manual_seed(1)
        layer = getattr(lib.nn, cls)(3, 4, num_layers=2)
        h0 = lib.randn(2, 4)
        state = (h0, lib.randn(2, 4)) if cls == "LSTM" else h0
        out, h = layer(lib.randn(6, 3), state)
        return out, h, type(out.grad_fn).__name__
    theirs, mine = (program(lib) for lib in LIBS)
    assert_same(mine[:2], theirs[:2], tolerance=TOL)
    assert mine[2] == theirs[2] == "SqueezeBackward1"


@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells_match_torch_step_by_step(cls):
    def program(lib):
        lib.manual_seed(2)
        cell = getattr(lib.nn, cls)(3, 5)
        x = lib.randn(4, 2, 3)
        state = None
        outputs = []
        for t in range(4):
            state = cell(x[t], state)
            outputs.append(_state(state))
        lib.stack(outputs).sum().backward()
        single = cell(lib.randn(3))
        names = [type(_state(state).grad_fn).__name__, type(_state(single).grad_fn).__name__]
        return outputs, [p.grad for p in cell.parameters()], single, repr(cell), names
    theirs, mine = (program(lib) for lib in LIBS)
    assert_same(mine[:3], theirs[:3], tolerance=TOL)
    assert mine[3:] == theirs[3:]


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_packed_sequences_through_a_layer(cls, bidirectional):
    def program(lib):
        rnn = lib.nn.utils.rnn
        lib.manual_seed(3)
        layer = getattr(lib.nn, cls)(3, 4, num_layers=2, bidirectional=bidirectional)
        seqs = [lib.randn(n, 3) for n in (2, 5, 3)]
        padded = rnn.pad_sequence(seqs, batch_first=True)
        packed = rnn.pack_padded_sequence(padded, [2, 5, 3], batch_first=True, enforce_sorted=False)
        out, h = layer(packed)
        unpacked, lengths = rnn.pad_packed_sequence(out, batch_first=True)
        (unpacked.sum() + _state(h).sum()).backward()
        return (packed.data, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices, out.data,
                unpacked, lengths, h, [p.grad for p in layer.parameters()], type(out).__name__)
    theirs, mine = (program(lib) for lib in LIBS)
    for i in (1, 2, 3, 6):
        assert_same(mine[i], theirs[i])
    assert_same([mine[0], mine[4], mine[5], mine[7], mine[8]], [theirs[0], theirs[4], theirs[5], theirs[7], theirs[8]], tolerance=TOL)
    assert mine[9] == theirs[9] == "PackedSequence"


def test_padding_and_packing_helpers():
    def program(lib):
        rnn = lib.nn.utils.rnn
        seqs = [lib.tensor([1.0, 2.0, 3.0]), lib.tensor([4.0]), lib.tensor([5.0, 6.0])]
        right = rnn.pad_sequence(seqs, padding_value=-1.0)
        left = rnn.pad_sequence(seqs, batch_first=True, padding_side="left")
        packed = rnn.pack_sequence(seqs, enforce_sorted=False)
        unpacked = rnn.unpack_sequence(packed)
        again, lengths = rnn.pad_packed_sequence(packed, total_length=4)
        return (right, right.stride(), left, left.stride(), packed.data, packed.batch_sizes, unpacked, again,
                lengths, rnn.unpad_sequence(left.flip(1), lengths, batch_first=True), repr(packed))
    theirs, mine = (program(lib) for lib in LIBS)
    assert_same(mine[:-1], theirs[:-1])
    assert mine[-1] == theirs[-1]


@pytest.mark.parametrize("case", ["unsorted lengths", "zero length", "wrong input size", "wrong hidden size",
                                  "4-D input", "dtype", "lstm hidden dims", "proj on gru", "bad nonlinearity",
                                  "dropout range", "cell 3-D"])
def test_recurrent_errors_are_torchs(case):
    def program(lib):
        nn = lib.nn
        if case == "unsorted lengths":
            nn.utils.rnn.pack_padded_sequence(lib.zeros(3, 2, 1), [1, 3])
        elif case == "zero length":
            nn.utils.rnn.pack_padded_sequence(lib.zeros(3, 2, 1), [3, 0])
        elif case == "wrong input size":
            nn.GRU(3, 4)(lib.zeros(2, 1, 5))
        elif case == "wrong hidden size":
            nn.RNN(3, 4)(lib.zeros(2, 1, 3), lib.zeros(1, 2, 4))
        elif case == "4-D input":
            nn.LSTM(3, 4)(lib.zeros(2, 1, 1, 3))
        elif case == "dtype":
            nn.GRU(3, 4)(lib.zeros(2, 1, 3, dtype=lib.float64))
        elif case == "lstm hidden dims":
            nn.LSTM(3, 4)(lib.zeros(2, 1, 3), (lib.zeros(1, 4), lib.zeros(1, 4)))
        elif case == "proj on gru":
            nn.GRU(3, 4, proj_size=2)
        elif case == "bad nonlinearity":
            nn.RNN(3, 4, nonlinearity="sigmoid")
        elif case == "dropout range":
            nn.LSTM(3, 4, dropout=1.5)
        else:
            nn.GRUCell(3, 4)(lib.zeros(1, 2, 3))
    same_error(program)
