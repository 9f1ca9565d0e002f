"""``torch.random``: seeding and the state of the default generator.

The generator itself is in generator.py, below the tensor ops that draw from it; the ops
(``rand``, ``normal_``, ``multinomial``...) are declared in functions/native_functions.py.
"""
from __future__ import annotations

from .generator import (  # noqa: F401
    CPU_CAPABILITY, Generator, default_generator_for, get_rng_state, initial_seed, manual_seed, seed, set_rng_state,
)
from .functions.sampling import bernoulli_mask  # noqa: F401  (nn.functional.dropout's mask)
