"""The grading tools every assignment notebook imports in its locked `grading_tools` cell.

    from autograder.tools import *  # noqa: F403 - probe, check, examples, mismatch, ...

A test cell calls your code only through its `@probe` functions; `check(what, probe, *args,
expect=...)` compares what the probe returns with the expected value and, when they differ,
tells you the input, the expected value and yours. In your own kernel (JupyterLab) these are
plain Python and run every check right there.

When grading, nothing here is trusted in your process: the grader runs the checks in the
instructor's reference run (where `check` records each case instead of running it) and
compares the results with `mismatch` in its own process, from its own copy of this module.
A student file or cell named like this module, a changed ``sys.path`` or ``sys.modules``,
or a patched `mismatch` changes what your own kernel says, never a grade
(tests/test_grading_tools_module.py). One module for every notebook: a fix is one edit here.
"""
from __future__ import annotations

import contextlib
import math
import os
import sys
import tempfile

try:
    import torch
except ModuleNotFoundError:  # some exercises are graded without torch
    torch = None
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

if not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
    # Hypothesis caches what it reads of local modules (this one) under .hypothesis/ in the
    # working folder: the assignment's own folder, which a release copies. Elsewhere, then.
    from hypothesis.configuration import set_hypothesis_home_dir
    set_hypothesis_home_dir(os.path.join(tempfile.gettempdir(), f"course-hypothesis-{os.getuid()}"))

# Fixed seed and no deadline: every run of the tests checks the very same examples.
settings.register_profile(
    "grading", derandomize=True, deadline=None, max_examples=25, database=None,
    report_multiple_bugs=False, print_blob=False, phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("grading")


class TestFailure(AssertionError):
    """A test found a wrong answer; the message says for which input."""


def probe(function=None, *, torch=True):
    """Mark a function of a test cell that calls your code. When grading, probes are the only
    test code that runs with your code; `torch=False` probes run where torch is not installed."""
    if function is None:
        return lambda function: probe(function, torch=torch)
    function.torch_allowed = torch
    return function


def examples(strategy, count=25):
    """`count` inputs drawn by Hypothesis from `strategy`, the same ones on every run (when
    grading, each student's hidden checks are drawn from a seed of their own: `_seed`)."""
    found = []

    @settings(max_examples=count, derandomize=_seed is None)
    @given(strategy)
    def collect(value):
        found.append(value)

    if _seed is not None:
        from hypothesis import seed
        collect = seed(_seed)(collect)
    collect()
    return found


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def mismatch(got, expected, close=False, rtol=1e-4, atol=1e-5, agree=None):
    """Why `got` is not `expected` (None when it is). With `close`, numbers and tensors may
    differ by the tolerances and any float dtype is accepted; with `agree`, that share of a
    tensor's entries must be equal (the expected entries are not shown)."""
    if torch is not None and isinstance(expected, torch.Tensor):
        if not isinstance(got, torch.Tensor):
            return f"expected a tensor, got {got!r}"[:400]
        if tuple(got.shape) != tuple(expected.shape):
            return f"expected shape {tuple(expected.shape)}, got shape {tuple(got.shape)}"
        if agree is not None:
            share = (got.detach() == expected.detach()).double().mean().item() if got.numel() else 1.0
            return None if share >= agree else f"expected at least {agree:.0%} right, got {share:.1%}"
        if close:
            same = torch.allclose(got.detach().to(torch.float64), expected.detach().to(torch.float64),
                                  rtol=rtol, atol=atol, equal_nan=True)
        else:
            same = got.dtype == expected.dtype and torch.equal(got, expected)
        return None if same else f"expected {expected!r}, got {got!r}"[:600]
    if close and _is_number(expected):
        if not _is_number(got) or not math.isclose(got, expected, rel_tol=rtol, abs_tol=atol):
            return f"expected {expected!r}, got {got!r}"[:400]
        return None
    if isinstance(expected, dict):
        if not isinstance(got, dict):
            return f"expected a dict, got {type(got).__name__}"
        missing = [key for key in expected if key not in got]
        if missing:
            return f"missing keys {missing}"[:400]
        extra = [key for key in got if key not in expected]
        if extra:
            return f"unexpected keys {extra}"[:400]
        wrong = [key for key in expected if mismatch(got[key], expected[key], close, rtol, atol, agree)]
        if not wrong:
            return None
        if torch is not None and isinstance(expected[wrong[0]], torch.Tensor):  # say how it differs
            return f"{wrong[0]}: {mismatch(got[wrong[0]], expected[wrong[0]], close, rtol, atol, agree)}"[:600]
        return f"wrong value for {wrong}"[:400]
    if isinstance(expected, (list, tuple)) and close:
        if type(got) is not type(expected) or len(got) != len(expected):
            return f"expected {expected!r}, got {got!r}"[:400]
        for item, wanted in zip(got, expected):
            if mismatch(item, wanted, close, rtol, atol, agree):
                return f"expected {expected!r}, got {got!r}"[:400]
        return None
    if type(got) is type(expected) and got == expected:
        return None
    return f"expected {expected!r}, got {got!r}"[:400]


_NOTHING = object()
# The grader's reference run sets these (autograder/harness.py): `check` then records, and
# `examples` draws a student's own hidden cases from their seed.
_recorder = None
_seed = None


def check(what, probe_function, *args, expect=_NOTHING, close=False, rtol=1e-4, atol=1e-5, agree=None,
          partial=False):
    """Call `probe_function(*args)` and compare its result with `expect`.

    When grading, the case is recorded instead: your code gets the arguments, and the expected
    value is never where your code runs. With `partial=True` a wrong case does not stop the
    cell: each case earns its share of the cell's points (see `credit`)."""
    if _recorder is not None:   # the grader's trusted reference run: record the case
        _recorder(what, probe_function, args, None if expect is _NOTHING else expect,
                  expect is not _NOTHING, {"close": close, "rtol": rtol, "atol": atol, "agree": agree, "partial": partial})
        return
    try:
        got = _run_answer(what, probe_function, args)
        if expect is not _NOTHING:
            reason = mismatch(got, expect, close, rtol, atol, agree)
            if reason:
                raise TestFailure(f"{what}: {reason}")
    except TestFailure as failure:
        if not partial:
            raise
        _partial_cases.append(False)
        print(f"wrong: {failure}")
    else:
        if partial:
            _partial_cases.append(True)


_partial_cases = []


def _run_answer(what, probe_function, args):
    """What the probe returns from your code; your code's own error as a failure of `what`
    (NotImplementedError, the blank answer's, as "not answered yet")."""
    try:
        return probe_function(*args)
    except TestFailure:
        raise
    except NotImplementedError:
        raise TestFailure(f"{what}: not answered yet (your code raised NotImplementedError)") from None
    except Exception as error:
        raise TestFailure(f"{what}: your code raised {type(error).__name__}: {error}") from None


def credit(points):
    """The points earned by this cell's `partial=True` checks: each right case earns an equal
    share. A partial-credit test cell ends with `credit(<its points>)`."""
    if _recorder is not None or not _partial_cases:
        return None
    right, total = sum(_partial_cases), len(_partial_cases)
    _partial_cases.clear()
    print(f"{right} of {total} right")
    return round(points * right / total, 2)


def answer(name):
    """The value you gave `name` in an answer cell (the caller's globals: the notebook's)."""
    scope = sys._getframe(1).f_globals
    if name not in scope:
        raise TestFailure(f"`{name}` is not defined: write it in its answer cell and run that cell")
    return scope[name]


# Facts about your objects that some probes report. When grading, the grader puts in its own
# versions, which read the interpreter itself (the real class chain, every autograd node,
# what an object really holds) rather than what your objects say about themselves.
def class_chain(cls):
    """The classes `cls` is built on, its own first, as 'module.qualname'."""
    cls = cls if isinstance(cls, type) else type(cls)
    return [f"{klass.__module__}.{klass.__qualname__}" for klass in cls.__mro__]


def graph_nodes(tensor):
    """The class names of every autograd node behind `tensor` (its grad_fn first)."""
    found, seen, stack = [], set(), [getattr(tensor, "grad_fn", None)]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        found.append(type(node).__name__)
        stack.extend(next_node for next_node, _ in node.next_functions)
    return found


def reachable(root, kind):
    """Whether an instance of `kind` (or a class built on it, other than `root`'s own) can be
    reached from `root`: attributes, containers, closures, bound methods, the globals its
    functions use."""
    import gc
    import types
    stack, seen = [(root, 0)], set()
    while stack and len(seen) < 100_000:
        item, depth = stack.pop()
        if id(item) in seen or depth > 24 or isinstance(item, (str, bytes, int, float, types.ModuleType)):
            continue
        seen.add(id(item))
        if isinstance(item, kind) or (isinstance(item, type) and item is not type(root) and issubclass(item, kind)):
            return True
        if isinstance(item, type) and item.__module__ != "__main__":
            continue   # a library's class
        if isinstance(item, types.FunctionType):
            if item.__module__ != "__main__":
                continue
            names = set(item.__code__.co_names)
            stack.extend((item.__globals__[name], depth + 1) for name in names if name in item.__globals__)
            # not its globals (only the names it uses, above), nor its builtins (IPython puts its shell there)
            children = [child for child in gc.get_referents(item)
                        if child is not item.__globals__ and child is not item.__builtins__]
        else:
            children = gc.get_referents(item)
        stack.extend((child, depth + 1) for child in children)
    return False


def code_of(obj):
    """What `obj` is made of, for a code check: its class chain, and a fingerprint of the code of
    each of its functions (see `check_code`). When grading, the grader's own reader is used."""
    from autograder import structure
    if structure._names is None:
        structure.capture([_kernel_namespace()])
    return structure.code_of(obj)


def check_code(what, probe_function, *args, only=None, forbid=(), forbid_classes=(), loops=True, nested=True,
               defaults=True, reflection=True, name=None):
    """Check what an answer is made of: `probe_function(*args)` returns `code_of(answer)`.

    Its functions must be code written in the notebook's cells (not run from another source),
    and, with the options: use `only` these names, none of `forbid` (directly or through the
    notebook's other definitions), no class whose name starts with one of `forbid_classes`,
    no loops, no nested functions, no default values (False), no reflection such as
    `globals()` or `getattr` (False); `name` names the rule in messages. When grading, the
    grader checks this on its own compilation of the notebook's cells, never in your process."""
    rule = {"only": None if only is None else list(only), "forbid": list(forbid), "forbid_classes": list(forbid_classes),
            "loops": loops, "nested": nested, "defaults": defaults, "reflection": reflection, "name": name}
    if _recorder is not None:   # the grader's trusted reference run: record the case
        _recorder(what, probe_function, args, None, False,
                  {"close": False, "rtol": 0.0, "atol": 0.0, "agree": None, "partial": False, "code": rule})
        return
    got = _run_answer(what, probe_function, args)
    reason = _kernel_code_check(got, rule)
    if reason:
        raise TestFailure(f"{what}: {reason}")


def _kernel_namespace():
    try:
        from IPython import get_ipython
    except ImportError:
        return {}
    shell = get_ipython()
    return shell.user_ns if shell is not None else {}


def _kernel_code_check(got, rule):
    """In your own kernel: the same check on the cells this kernel ran (its input history)."""
    from autograder.written import NotebookCode, rule_of
    namespace = _kernel_namespace()
    history = namespace.get("In")
    if not isinstance(history, list):
        return None   # not in IPython: nothing to compare with
    cells = [{"kind": "code", "source": source} for source in history if isinstance(source, str)]
    code = NotebookCode(cells, [f"your cell {n}" for n in range(len(cells))], tampering=False)
    code.add_functions_of(namespace)   # your kernel is yours: what it defined counts as written here
    return code.check(got, rule_of(rule)) or None


def _show_test_failure(shell, etype, value, tb, tb_offset=None):
    # Show the message alone: no test source lines.
    shell.showtraceback((etype, etype(*value.args), None))


def _show_test_failures_plainly():
    try:
        from IPython import get_ipython
    except ImportError:   # not in IPython: ordinary tracebacks
        return
    shell = get_ipython()
    if shell is not None:
        shell.set_custom_exc((TestFailure,), _show_test_failure)


_show_test_failures_plainly()


__all__ = ["contextlib", "math", "torch", "HealthCheck", "Phase", "given", "settings", "st", "TestFailure",
           "probe", "examples", "mismatch", "check", "check_code", "credit", "answer", "class_chain", "graph_nodes",
           "reachable", "code_of"]
