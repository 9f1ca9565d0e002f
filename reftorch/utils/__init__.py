"""``reftorch.utils``: the backend-registration entry points, named as in torch.utils."""
from ..dispatch import rename_privateuse1_backend  # noqa: F401
from . import checkpoint, data, hooks  # noqa: F401
