"""RemovableHandle: what every ``register_*hook`` returns, so the hook can be taken off again.

Hooks live in an ordered dict keyed by a number unique in the process. The handle keeps
only a weak link to that dict: a handle kept by the user must not keep a freed tensor's or
module's hooks alive.
"""
from __future__ import annotations

import itertools
import weakref

_ids = itertools.count()


class RemovableHandle:
    """``handle.remove()`` deletes the hook; ``with handle:`` removes it on leaving the block."""

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(_ids)
        # flags kept beside the hook (with_kwargs, always_call) go when the hook goes
        extras = [extra_dict] if isinstance(extra_dict, dict) else list(extra_dict or ())
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extras)

    def remove(self) -> None:
        for ref in (self.hooks_dict_ref,) + self.extra_dict_ref:
            hooks = ref()
            if hooks is not None:
                hooks.pop(self.id, None)  # removing twice is allowed, as in torch

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc_info) -> None:
        self.remove()
