"""reftorch.nn.utils: gradient clipping, and padding/packing sequences for recurrent layers (rnn)."""
from . import rnn  # noqa: F401
from .clip_grad import clip_grad_norm_, clip_grad_value_  # noqa: F401
