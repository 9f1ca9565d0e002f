# place: after_tools
# honest: warns on stderr, and every answer function prints a warning when called.
import sys
import warnings

warnings.warn("this notebook prints warnings", UserWarning)
print("warning: loud but correct", file=sys.stderr)
_ip = get_ipython()  # noqa: F821


def _loud(*args, **kwargs):
    print("warning: a cell ran", file=sys.stderr)
    warnings.warn("still correct", RuntimeWarning)


_ip.events.register("post_run_cell", _loud)
