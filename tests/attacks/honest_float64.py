# place: end
# honest: every answer function computes in float64 and returns float64 tensors.
import functools
import types

import torch


def _in_float64(function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        args = [a.double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args]
        out = function(*args, **kwargs)
        return out.double() if isinstance(out, torch.Tensor) and out.is_floating_point() else out
    return wrapper


for _name, _obj in list(globals().items()):
    if isinstance(_obj, types.FunctionType) and _obj.__module__ == "__main__" \
            and not _name.startswith(("_", "expect", "checking", "answer")):
        globals()[_name] = _in_float64(_obj)
