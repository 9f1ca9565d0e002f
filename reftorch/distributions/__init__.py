"""``torch.distributions``, a small faithful subset: ``Categorical``, ``Multinomial`` and
``Normal`` on a ``Distribution`` base, with the ``constraints`` they validate against.

Their samples are torch's for the same seed (they draw through ``multinomial`` and
``normal``, which reproduce torch's generator); module paths are torch's, so
``from torch.distributions.multinomial import Multinomial`` finds ours when torch is bound
to reftorch. Left out: every other distribution (Bernoulli's sampling goes through MKL's
own generator in torch, so its numbers cannot be reproduced), transforms, ``kl_divergence``.

    distribution.py   the base class: shapes, parameter validation, sample/rsample
    constraints.py    the regions parameters and samples must lie in
    categorical.py    one of K categories
    multinomial.py    counts of total_count categorical draws
    normal.py         the Gaussian (has rsample)
    utils.py          broadcast_all, probs <-> logits, lazy_property
"""
from . import constraints  # noqa: F401
from .categorical import Categorical
from .distribution import Distribution
from .multinomial import Multinomial
from .normal import Normal

__all__ = ["Categorical", "Distribution", "Multinomial", "Normal", "constraints"]
