"""Recurrent layers: RNN, LSTM, GRU and their one-step cells.

Each step is the cell's formula on a batch (``LSTMCell``: four gates from the input and the
previous hidden state); a layer runs its cell along the sequence, a stack of layers feeds each
layer's outputs to the next, and a bidirectional layer also runs one backwards and joins the two.
The arithmetic follows torch's CPU path step by step (the input projection of the whole sequence
first, then per step ``hidden projection + projected input``), so the numbers match torch's.
"""
from __future__ import annotations

import math
import numbers
import warnings

from .. import functions as F
from . import init
from .functional import dropout, linear
from .module import Module
from .parameter import Parameter
from .utils.rnn import PackedSequence


# -- one step of each cell (``x_proj`` is the input already projected: W_ih x + b_ih) ---------
def _rnn_tanh_step(x_proj, h, w_hh, b_hh):
    return F.tanh(linear(h, w_hh, b_hh) + x_proj)


def _rnn_relu_step(x_proj, h, w_hh, b_hh):
    return F.relu(linear(h, w_hh, b_hh) + x_proj)


def _lstm_step(x_proj, state, w_hh, b_hh, w_hr=None):
    h, c = state
    gates = linear(h, w_hh, b_hh) + x_proj
    i, f, g, o = gates.chunk(4, 1)
    i, f, g, o = F.sigmoid(i), F.sigmoid(f), F.tanh(g), F.sigmoid(o)
    c_next = f * c + i * g
    h_next = o * F.tanh(c_next)
    if w_hr is not None:  # LSTM with projections: the hidden state is projected down
        h_next = F.matmul(h_next, w_hr.t())
    return h_next, c_next


def _gru_step(x_proj, h, w_hh, b_hh):
    x_r, x_z, x_n = x_proj.chunk(3, 1)
    h_r, h_z, h_n = linear(h, w_hh, b_hh).chunk(3, 1)
    reset = F.sigmoid(h_r + x_r)
    update = F.sigmoid(h_z + x_z)
    new = F.tanh(x_n + h_n * reset)
    return (h - new) * update + new


_STEPS = {"RNN_TANH": _rnn_tanh_step, "RNN_RELU": _rnn_relu_step, "LSTM": _lstm_step, "GRU": _gru_step}


def _output_of(state):
    return state[0] if isinstance(state, tuple) else state


def _slice_state(state, start, stop):
    if isinstance(state, tuple):
        return tuple(s[start:stop] for s in state)
    return state[start:stop]


def _cat_states(states):
    if isinstance(states[0], tuple):
        return tuple(F.cat([s[k] for s in states], 0) for k in range(len(states[0])))
    return F.cat(states, 0)


def _run_direction(step, x_proj, state, weights, reverse):
    """One layer in one direction over a padded sequence (L, N, gates): (outputs, last state)."""
    outputs = []
    for t in (reversed(range(x_proj.shape[0])) if reverse else range(x_proj.shape[0])):
        state = step(x_proj[t], state, *weights)
        outputs.append(_output_of(state))
    if reverse:
        outputs.reverse()
    return F.stack(outputs, 0), state


def _run_direction_packed(step, x_proj, state, weights, batch_sizes, reverse):
    """The same over packed data: the batch shrinks as sequences end (their states are kept)."""
    sizes = [int(n) for n in batch_sizes.tolist()]
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    outputs = []
    if not reverse:
        finished, last = [], sizes[0]
        for start, size in zip(starts, sizes):
            if size < last:
                finished.append(_slice_state(state, size, last))
                state = _slice_state(state, 0, size)
            last = size
            state = step(x_proj[start:start + size], state, *weights)
            outputs.append(_output_of(state))
        finished.append(state)
        finished.reverse()
        return F.cat(outputs, 0), _cat_states(finished)
    initial, last = state, sizes[-1]
    state = _slice_state(initial, 0, last)
    for start, size in zip(reversed(starts), reversed(sizes)):
        if size > last:
            state = _cat_states([state, _slice_state(initial, last, size)])
        last = size
        state = step(x_proj[start:start + size], state, *weights)
        outputs.append(_output_of(state))
    outputs.reverse()
    return F.cat(outputs, 0), state


class RNNBase(Module):
    """Parameters ``weight_ih_l{k}``, ``weight_hh_l{k}``, ``bias_ih_l{k}``, ``bias_hh_l{k}`` per layer
    k (``_reverse`` for the backward direction), all uniform in ±1/sqrt(hidden_size)."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        num_directions = 2 if bidirectional else 1
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}", stacklevel=2)
        for name, value in (("bias", bias), ("batch_first", batch_first)):
            if not isinstance(value, bool):
                raise TypeError(f"{name} should be of type bool, got: {type(value).__name__}")
        for name, value in (("input_size", input_size), ("hidden_size", hidden_size)):
            if not isinstance(value, int):
                raise TypeError(f"{name} should be of type int, got: {type(value).__name__}")
            if value <= 0:
                raise ValueError(f"{name} must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        gate_size = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}[mode] * hidden_size
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names, self._all_weights = [], []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                suffix = "_reverse" if direction == 1 else ""
                shapes = {"weight_ih": (gate_size, layer_input_size), "weight_hh": (gate_size, real_hidden_size)}
                if bias:
                    shapes.update(bias_ih=(gate_size,), bias_hh=(gate_size,))
                if proj_size > 0:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                names = []
                for kind, shape in shapes.items():
                    name = f"{kind}_l{layer}{suffix}"
                    setattr(self, name, Parameter(F.empty(shape, device=device, dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def _flat_weights(self):
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self):
        """Nothing to do: cuDNN's packed weight buffer has no counterpart here."""

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # -- checks, in torch's words ------------------------------------------------------------
    def check_input(self, input, batch_sizes):
        weight = self._flat_weights[0]
        if input.dtype != weight.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight.dtype}). Convert "
                             f"input: input.to({weight.dtype}), or convert model: model.to({input.dtype})")
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(self, hx, expected, msg="Expected hidden size {}, got {}"):
        if hx.size() != expected:
            raise RuntimeError(msg.format(expected, list(hx.size())))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        if isinstance(hx, tuple):
            return tuple(h.index_select(1, permutation) for h in hx)
        return hx.index_select(1, permutation)

    # -- the stack of layers ----------------------------------------------------------------
    def _run(self, input, hx, batch_sizes):
        """Every layer, each direction; input (L, N, H) padded, or packed data with batch_sizes.
        Returns the last layer's output and the final states stacked as (layers·directions, N, H)."""
        step = _STEPS[self.mode]
        num_directions = 2 if self.bidirectional else 1
        finals = []
        layer_input = input
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(num_directions):
                index = layer * num_directions + direction
                names = self._all_weights[index]
                w_ih = getattr(self, names[0])
                b_ih = getattr(self, names[2]) if self.bias else None
                weights = [getattr(self, names[1]), getattr(self, names[3]) if self.bias else None]
                if self.proj_size > 0:
                    weights.append(getattr(self, names[-1]))
                state = tuple(h[index] for h in hx) if isinstance(hx, tuple) else hx[index]
                x_proj = linear(layer_input, w_ih, b_ih)  # the whole sequence at once, as torch's CPU path
                if batch_sizes is None:
                    out, final = _run_direction(step, x_proj, state, weights, reverse=direction == 1)
                else:
                    out, final = _run_direction_packed(step, x_proj, state, weights, batch_sizes,
                                                       reverse=direction == 1)
                outputs.append(out)
                finals.append(final)
            layer_output = outputs[0] if num_directions == 1 else F.cat(outputs, outputs[0].dim() - 1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_output = dropout(layer_output, self.dropout, True)
            layer_input = layer_output
        if isinstance(finals[0], tuple):
            return layer_input, tuple(F.stack([f[k] for f in finals], 0) for k in range(len(finals[0])))
        return layer_input, F.stack(finals, 0)

    def forward(self, input, hx=None):
        is_lstm = self.mode == "LSTM"
        num_directions = 2 if self.bidirectional else 1
        packed = isinstance(input, PackedSequence)
        is_batched = True
        if packed:
            input, batch_sizes, sorted_indices, unsorted_indices = input
            max_batch = int(batch_sizes[0])
        else:
            batch_sizes = sorted_indices = unsorted_indices = None
            if input.dim() not in (2, 3):
                name = {"RNN_TANH": "RNN", "RNN_RELU": "RNN"}.get(self.mode, self.mode)
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D instead")
            is_batched = input.dim() == 3
            if not is_batched:
                input = input.unsqueeze(0 if self.batch_first else 1)
            max_batch = input.size(0) if self.batch_first else input.size(1)
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        if hx is None:
            hx = zeros = F.zeros(self.num_layers * num_directions, max_batch, real_hidden, dtype=input.dtype,
                                 device=input.device)
            if is_lstm:
                hx = (zeros, F.zeros(self.num_layers * num_directions, max_batch, self.hidden_size,
                                     dtype=input.dtype, device=input.device))
        elif packed:
            hx = self.permute_hidden(hx, sorted_indices)
        elif is_lstm:
            want = 3 if is_batched else 2
            if hx[0].dim() != want or hx[1].dim() != want:
                kind = "batched 3-D" if is_batched else "unbatched 2-D"
                raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got "
                                   f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
            if not is_batched:
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        else:
            want = 3 if is_batched else 2
            if hx.dim() != want:
                kind = "batched 3-D" if is_batched else "unbatched 2-D"
                raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got {hx.dim()}-D tensor")
            if not is_batched:
                hx = hx.unsqueeze(1)
        self.check_input(input, batch_sizes)
        expected = self.get_expected_hidden_size(input, batch_sizes)
        if is_lstm:
            self.check_hidden_size(hx[0], expected, "Expected hidden[0] size {}, got {}")
            self.check_hidden_size(hx[1], (expected[0], expected[1], self.hidden_size),
                                   "Expected hidden[1] size {}, got {}")
        else:
            self.check_hidden_size(hx, expected)
        if self.batch_first and not packed:
            input = input.transpose(0, 1)
        output, hidden = self._run(input, hx, batch_sizes)
        if packed:
            return PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices), \
                self.permute_hidden(hidden, unsorted_indices)
        if self.batch_first:
            output = output.transpose(0, 1)
        if not is_batched:
            output = output.squeeze(0 if self.batch_first else 1)
            hidden = tuple(h.squeeze(1) for h in hidden) if is_lstm else hidden.squeeze(1)
        return output, hidden


class RNN(RNNBase):
    """h_t = tanh(W_ih x_t + b_ih + W_hh h_(t-1) + b_hh)  (or relu)."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)


class LSTM(RNNBase):
    """Input, forget, cell and output gates; the cell state c carries memory along the sequence."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    """Reset and update gates decide how much of the previous hidden state to keep."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


# -- cells: one step, on a batch (N, H) or a single sample (H,) --------------------------------
class RNNCellBase(Module):
    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = Parameter(F.empty((num_chunks * hidden_size, input_size), device=device, dtype=dtype))
        self.weight_hh = Parameter(F.empty((num_chunks * hidden_size, hidden_size), device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(F.empty(num_chunks * hidden_size, device=device, dtype=dtype))
            self.bias_hh = Parameter(F.empty(num_chunks * hidden_size, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _batched(self, input, name):
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        return input.dim() == 2

    def _zeros(self, input):
        return F.zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        batched = self._batched(input, "RNNCell")
        if not batched:
            input = input.unsqueeze(0)
        hx = self._zeros(input) if hx is None else hx if batched else hx.unsqueeze(0)
        if self.nonlinearity == "tanh":
            step = _rnn_tanh_step
        elif self.nonlinearity == "relu":
            step = _rnn_relu_step
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        ret = step(linear(input, self.weight_ih, self.bias_ih), hx, self.weight_hh, self.bias_hh)
        return ret if batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        batched = self._batched(input, "LSTMCell")
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = self._zeros(input)
            hx = (zeros, zeros)
        elif not batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        h, c = _lstm_step(linear(input, self.weight_ih, self.bias_ih), hx, self.weight_hh, self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        batched = self._batched(input, "GRUCell")
        if not batched:
            input = input.unsqueeze(0)
        hx = self._zeros(input) if hx is None else hx if batched else hx.unsqueeze(0)
        ret = _gru_step(linear(input, self.weight_ih, self.bias_ih), hx, self.weight_hh, self.bias_hh)
        return ret if batched else ret.squeeze(0)

