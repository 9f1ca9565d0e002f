"""RemovableHandle: what every ``register_*hook`` returns, so the hook can be taken off again.

Hooks live in an ordered dict keyed by a number unique in the process. The handle keeps
only a weak link to that dict: a handle kept by the user must not keep a freed tensor's or
module's hooks alive.
"""
from __future__ import annotations

import itertools
import weakref
from ..autograd.function import BackwardHookFunction
from ..tensor import Tensor

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


class BackwardHook:
    """What a module's full backward hooks hang on: the inputs and outputs of one call pass
    through an identity Function (``BackwardHookFunction``), whose backward sees the
    gradients arriving at the outputs (``grad_output``) and, later, those leaving for the
    inputs (``grad_input``). ``hook(module, grad_input, grad_output)`` may return new
    ``grad_input``; a pre-hook ``hook(module, grad_output)`` may return new ``grad_output``."""

    def __init__(self, module, hooks, pre_hooks):
        self.module, self.hooks, self.pre_hooks = module, hooks, pre_hooks
        self.grad_outputs = None
        self.input_count = 0

    def setup_input_hook(self, args):
        self.input_count = sum(1 for a in args if isinstance(a, Tensor))
        return self._wrap(args, self._on_input_grads)

    def setup_output_hook(self, result):
        single = not isinstance(result, tuple)
        wrapped = self._wrap((result,) if single else result, self._on_output_grads)
        return wrapped[0] if single else wrapped

    def _wrap(self, values, on_grads):
        positions = [i for i, v in enumerate(values) if isinstance(v, Tensor) and v.requires_grad]
        if not positions:
            return values
        passed = BackwardHookFunction.apply(on_grads, *[values[i] for i in positions])
        passed = passed if isinstance(passed, tuple) else (passed,)
        values = list(values)
        for i, value in zip(positions, passed):
            values[i] = value
        return tuple(values)

    def _on_output_grads(self, grads):
        for hook in tuple(self.pre_hooks.values()):
            result = hook(self.module, grads)
            if result is not None:
                grads = tuple(result) if isinstance(result, (tuple, list)) else (result,)
        self.grad_outputs = grads
        if self.input_count == 0 or not self._inputs_need_grad:
            import warnings
            warnings.warn(
                "Full backward hook is firing when gradients are computed with respect to module "
                "outputs since no inputs require gradients. See https://docs.pytorch.org/docs/main/"
                "generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more "
                "details.", stacklevel=5)
            self._call_hooks((None,) * max(self.input_count, 1))
        return grads

    def _on_input_grads(self, grads):
        return self._call_hooks(grads)

    def _call_hooks(self, grad_input):
        for hook in tuple(self.hooks.values()):
            result = hook(self.module, grad_input, self.grad_outputs)
            if result is not None:
                result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
                if len(result) != len(grad_input):
                    raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got "
                                       f"{len(result)}, but expected {len(grad_input)}")
                grad_input = result
        return grad_input
