"""``torch.return_types``: the named tuples of the ops that give values and indices together
(``torch.max(x, 0)`` is a ``torch.return_types.max``, its ``out=`` call a ``max_out``)."""
from .functions._support import _out_return_type
from .functions.reductions import return_types_max as max  # noqa: A001  (torch's names)
from .functions.reductions import return_types_min as min  # noqa: A001
from .functions.reductions import return_types_sort as sort
from .functions.reductions import return_types_topk as topk
from .functions.selection import return_types_kthvalue as kthvalue
from .functions.selection import return_types_median as median
from .functions.selection import return_types_mode as mode
from .functions.selection import return_types_nanmedian as nanmedian

for _plain in (max, min, sort, topk, kthvalue, median, mode, nanmedian):
    globals()[_plain.__name__ + "_out"] = _out_return_type(_plain)
del _plain
