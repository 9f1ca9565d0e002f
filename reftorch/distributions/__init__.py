"""``torch.distributions``, a small faithful subset: ``Bernoulli``, ``Categorical``,
``Multinomial``, ``Normal`` and ``Uniform`` on a ``Distribution`` base, with the
``constraints`` they validate against.

Their samples are torch's for the same seed (they draw through ``bernoulli``, ``multinomial``,
``normal`` and ``rand``, which reproduce torch's generator); module paths are torch's, so
``from torch.distributions.multinomial import Multinomial`` finds ours when torch is bound
to reftorch. Left out: every other distribution, transforms, ``kl_divergence``.

    distribution.py   the base class: shapes, parameter validation, sample/rsample
    constraints.py    the regions parameters and samples must lie in
    bernoulli.py      0 or 1
    categorical.py    one of K categories
    multinomial.py    counts of total_count categorical draws
    normal.py         the Gaussian (has rsample)
    uniform.py        uniform on [low, high) (has rsample)
    utils.py          broadcast_all, probs <-> logits, lazy_property
"""
from . import constraints  # noqa: F401
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .multinomial import Multinomial
from .normal import Normal
from .uniform import Uniform

__all__ = ["Bernoulli", "Categorical", "Distribution", "Multinomial", "Normal", "Uniform", "constraints"]
