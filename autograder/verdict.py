"""On the host: recompute one check site's verdict from the values the runs recorded.

The site's expression tree (see :mod:`autograder.checks`) is walked here with the host's
own torch, numpy and builtins. Leaves take their values from the runs: the student's run
("s") and the instructor's reference run ("r", same secret seed). The check passes only
if the expression holds for every mix of student and reference leaves that includes at
least one student leaf, so "expected" values that the student's process computed (and
could have doctored) are cross-checked against the reference's.

A node whose operands are not data (an instance of a student class) is not recomputed:
its recorded value from the run is used, and only when all its leaves come from one run.
"""
from __future__ import annotations

import ast
import builtins
import itertools
import math
import operator

import numpy
import torch

from .checks import ASSERT_FUNCS, SAFE_CONSTS, dotted_name
from .values import Opaque, TypeRef, is_data, mro_of

MAX_FULL_COMBOS_LEAVES = 8


class Mixed(Exception):
    """This mix of runs has no recorded value for a node: skip the combination."""


class Missing(Exception):
    """A tapped value the expression needs was not recorded by the run."""


def _isinstance(value, classes) -> bool:
    if isinstance(classes, tuple):
        return any(_isinstance(value, c) for c in classes)
    if isinstance(classes, TypeRef):
        return classes.qualname in mro_of(value)
    if isinstance(value, Opaque):
        from .values import qualname_of
        return qualname_of(classes) in value.mro
    return builtins.isinstance(value, classes)


def _promote_pair(a, b):
    """torch refuses to compare float32 with float64; honest float64 answers still count."""
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.dtype != b.dtype:
        common = torch.promote_types(a.dtype, b.dtype)
        return a.to(common), b.to(common)
    return a, b


def _allclose(a, b, *args, **kwargs):
    a, b = _promote_pair(torch.as_tensor(a), torch.as_tensor(b))
    return torch.allclose(a, b, *args, **kwargs)


def _isclose(a, b, *args, **kwargs):
    a, b = _promote_pair(torch.as_tensor(a), torch.as_tensor(b))
    return torch.isclose(a, b, *args, **kwargs)


def _equal(a, b):
    a, b = _promote_pair(a, b)
    return torch.equal(a, b)


def _assert_close(actual, expected, *args, **kwargs):
    kwargs.setdefault("check_dtype", False)
    torch.testing.assert_close(actual, expected, *args, **kwargs)


def _resolve(name: str):
    overrides = {
        "isinstance": _isinstance, "torch.allclose": _allclose, "torch.isclose": _isclose,
        "torch.equal": _equal, "torch.testing.assert_close": _assert_close,
        "range": _range, "pow": _pow,
    }
    if name in overrides:
        return overrides[name]
    head, _, rest = name.partition(".")
    if not rest:
        return getattr(builtins, head)
    obj = {"torch": torch, "numpy": numpy, "math": math}[head]
    for part in rest.split("."):
        obj = getattr(obj, part)
    return obj


MAX_SEQUENCE = 10**6


class TooLarge(ArithmeticError):
    """A value the student's run sent would make the host compute for too long or too big."""


def _pow(base, exponent):
    if isinstance(base, int) and isinstance(exponent, int) and abs(base) > 1 and abs(exponent) > 4096:
        raise TooLarge("power too large to judge")
    return operator.pow(base, exponent)


def _mul(a, b):
    for sequence, count in ((a, b), (b, a)):
        if isinstance(sequence, (str, bytes, list, tuple)) and isinstance(count, int) \
                and len(sequence) * count > MAX_SEQUENCE:
            raise TooLarge("repetition too large to judge")
    return operator.mul(a, b)


def _lshift(a, b):
    if isinstance(b, int) and b > 65536:
        raise TooLarge("shift too large to judge")
    return operator.lshift(a, b)


def _range(*args):
    result = range(*args)
    if len(result) > MAX_SEQUENCE:
        raise TooLarge("range too large to judge")
    return result


_BINOPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: _mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: _pow,
    ast.MatMult: operator.matmul, ast.BitAnd: operator.and_, ast.BitOr: operator.or_,
    ast.BitXor: operator.xor, ast.LShift: _lshift, ast.RShift: operator.rshift,
}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert, ast.Not: operator.not_}
_COMPARE = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}
_SINGLETONS = (type(None), bool)
# Builtins whose result on an object is decided by that object's own methods.
PROTOCOL_BUILTINS = set("len list tuple set dict sorted str repr bool int float abs round sum min max "
                        "all any enumerate zip range divmod pow".split())


class _Evaluator:
    """Evaluates one annotated expression for one assignment of leaves to runs."""

    def __init__(self, values: dict[str, dict[int, object]], choice: dict[int, str],
                 tools: dict, top=None, strict_top: bool = False):
        self.values = values      # run -> tap number -> rebuilt value
        self.choice = choice      # leaf tap number -> run
        self.tools = tools        # the instructor's helper functions, defined on the host
        self.top = top
        self.strict_top = strict_top

    def recorded(self, node, runs: set[str]):
        if self.strict_top and node is self.top:
            raise Missing()  # a check call's outcome is never taken from the run
        if len(runs) != 1:
            raise Mixed()
        run = next(iter(runs))
        tap = node._course_tap
        if tap not in self.values[run]:
            raise Missing()
        return self.values[run][tap]

    def eval(self, node) -> tuple[object, set[str]]:
        kind = getattr(node, "_course_kind", None)
        if kind == "const":
            if isinstance(node, ast.Constant):
                return node.value, set()
            return _resolve(dotted_name(node)), set()
        if kind == "leaf":
            run = self.choice[node._course_tap]
            if node._course_tap not in self.values[run]:
                raise Missing()
            return self.values[run][node._course_tap], {run}
        return self.eval_node(node)

    def eval_all(self, nodes):
        values, runs = [], set()
        for child in nodes:
            value, child_runs = self.eval(child)
            values.append(value)
            runs |= child_runs
        return values, runs

    def eval_node(self, node):
        if isinstance(node, ast.BoolOp):
            runs: set[str] = set()
            value = None
            for child in node.values:
                value, child_runs = self.eval(child)
                runs |= child_runs
                if not is_data(value):
                    return self.recorded(node, runs), runs
                if isinstance(node.op, ast.And) and not value:
                    break
                if isinstance(node.op, ast.Or) and value:
                    break
            return value, runs
        if isinstance(node, ast.Compare):
            left, runs = self.eval(node.left)
            result = True
            for op, right_node in zip(node.ops, node.comparators):
                right, right_runs = self.eval(right_node)
                runs |= right_runs
                if isinstance(op, (ast.Is, ast.IsNot)):
                    if isinstance(left, TypeRef) or isinstance(right, TypeRef):
                        same = left == right
                    elif isinstance(left, _SINGLETONS) or isinstance(right, _SINGLETONS):
                        same = left is right
                    else:
                        return self.recorded(node, runs), runs
                    result = same if isinstance(op, ast.Is) else not same
                else:
                    if not is_data(left) and not is_data(right):
                        return self.recorded(node, runs), runs  # the student's own classes decide
                    if isinstance(op, (ast.In, ast.NotIn)) and not is_data(right):
                        return self.recorded(node, runs), runs  # a student container's __contains__
                    # A plain value compared with a student object: Python's rules on the host
                    # (an object that claims to equal anything does not).
                    result = _COMPARE[type(op)](left, right)
                if len(node.ops) == 1:
                    return result, runs  # a tensor comparison stays a tensor
                if not result:
                    return result, runs
                left = right
            return result, runs
        if isinstance(node, ast.BinOp):
            (left, right), runs = self.eval_all([node.left, node.right])
            if not is_data(left) and not is_data(right):
                return self.recorded(node, runs), runs
            if not (is_data(left) and is_data(right)):
                raise Missing()  # arithmetic between a student object and a plain value
            return _BINOPS[type(node.op)](left, right), runs
        if isinstance(node, ast.UnaryOp):
            operand, runs = self.eval(node.operand)
            if not is_data(operand):
                return self.recorded(node, runs), runs
            return _UNARY[type(node.op)](operand), runs
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            values, runs = self.eval_all(node.elts)
            maker = {ast.Tuple: tuple, ast.List: list, ast.Set: set}[type(node)]
            return maker(values), runs
        if isinstance(node, ast.Dict):
            values, runs = self.eval_all([*node.keys, *node.values])
            half = len(node.keys)
            return dict(zip(values[:half], values[half:])), runs
        if isinstance(node, ast.Subscript):
            if isinstance(node.slice, ast.Slice):
                parts = [node.slice.lower, node.slice.upper, node.slice.step]
                present = [p for p in parts if p is not None]
                (base, *given), runs = self.eval_all([node.value, *present])
                it = iter(given)
                index = slice(*[next(it) if p is not None else None for p in parts])
            else:
                (base, index), runs = self.eval_all([node.value, node.slice])
            if not (is_data(base) and is_data(index)):
                return self.recorded(node, runs), runs
            return base[index], runs
        if isinstance(node, ast.Attribute):
            base, runs = self.eval(node.value)
            if not is_data(base):
                return self.recorded(node, runs), runs
            return getattr(base, node.attr), runs
        if isinstance(node, ast.Call):
            name = dotted_name(node.func)
            n_args = len(node.args)
            keywords = [k.arg for k in node.keywords]
            is_function = name is not None and (
                name in ASSERT_FUNCS or _is_safe_function(name) or name in self.tools)
            receiver = [] if is_function else [node.func.value]
            values, runs = self.eval_all([*receiver, *node.args, *(k.value for k in node.keywords)])
            if not all(is_data(v) for v in values):
                if is_function and name in PROTOCOL_BUILTINS:
                    return self.recorded(node, runs), runs  # len(obj), list(obj): the object's protocol
                if not is_function and not is_data(values[0]) and all(is_data(v) for v in values[1:]):
                    return self.recorded(node, runs), runs  # a method of the student's object
                if name == "isinstance":
                    return _isinstance(*values), runs
                raise Missing()  # library/instructor code is never trusted on a student object
            if is_function:
                function = self.tools[name] if name in self.tools else _resolve(name)
            else:
                function = getattr(values[0], node.func.attr)
                values = values[1:]
            args, kwargs = values[:n_args], dict(zip(keywords, values[n_args:]))
            return function(*args, **kwargs), runs
        raise TypeError(f"cannot evaluate {type(node).__name__} on the host")


def _is_safe_function(name: str) -> bool:
    from .checks import SAFE_FUNCS
    return name in SAFE_FUNCS and name not in SAFE_CONSTS


def _combinations(leaves: list[int]):
    """Every mix with at least one student leaf; a linear subset when there are many leaves."""
    if not leaves:
        yield {}
        return
    if len(leaves) <= MAX_FULL_COMBOS_LEAVES:
        for picks in itertools.product("sr", repeat=len(leaves)):
            if "s" in picks:
                yield dict(zip(leaves, picks))
        return
    yield {leaf: "s" for leaf in leaves}
    for leaf in leaves:
        yield {other: ("s" if other == leaf else "r") for other in leaves}
        yield {other: ("r" if other == leaf else "s") for other in leaves}


def holds(site, values: dict[str, dict[int, object]], choice: dict[int, str], tools: dict) -> bool:
    """Whether the site's expression holds for one mix; raises Mixed/Missing/any error."""
    evaluator = _Evaluator(values, choice, tools, top=site.expr, strict_top=site.mode == "call")
    value, _ = evaluator.eval(site.expr)
    if site.mode == "call":
        return True  # the call returned instead of raising
    if isinstance(value, Opaque):
        raise Missing()  # truthiness of a student object is the run's word, never ours
    return bool(value)


def judge_site(site, student: dict[int, object], reference: dict[int, object],
               tools: dict | None = None) -> tuple[bool, str]:
    """(passed, reason) for one occurrence of a site."""
    values = {"s": student, "r": reference}
    tools = tools or {}
    try:
        if not holds(site, values, {leaf: "r" for leaf in site.leaves}, tools):
            return False, "the reference solution fails this check"
    except (Mixed, Missing):
        pass
    except Exception as error:  # noqa: BLE001 - an instructor-side error is reported, not raised
        return False, f"the reference solution fails this check ({type(error).__name__})"
    checked = 0
    for choice in _combinations(site.leaves):
        verdict = _try(site, values, choice, tools)
        if verdict is None:
            if all(run == "s" for run in choice.values()):
                return False, "the check could not be evaluated from the recorded values"
            continue
        passed, why = verdict
        if not passed:
            if site.hidden:
                why = _message_for_hidden(site, values, choice, tools)
            return False, why
        checked += 1
    if checked == 0:
        return False, "the check could not be evaluated from the recorded values"
    return True, "passed"


def _try(site, values, choice, tools) -> tuple[bool, str] | None:
    """(passed, why) for one mix of runs; None when the mix cannot be evaluated."""
    try:
        ok = holds(site, values, choice, tools)
    except (Mixed, Missing):
        return None
    except AssertionError as error:
        return False, _first_line(str(error)) or "assertion failed"
    except Exception as error:  # noqa: BLE001 - any error while checking means "failed"
        return False, f"{type(error).__name__}: {_first_line(str(error))}"
    return (True, "passed") if ok else (False, "assertion failed")


def _message_for_hidden(site, values, choice, tools) -> str:
    """A hidden check's failure message with every text leaf taken from the reference run,
    so the student's process cannot smuggle text (say, the hidden source) into feedback."""
    text_leaves = {leaf for leaf in site.leaves
                   if isinstance(values["s"].get(leaf), str) or isinstance(values["r"].get(leaf), str)}
    safe = {leaf: ("r" if leaf in text_leaves else run) for leaf, run in choice.items()}
    verdict = _try(site, values, safe, tools)
    if verdict is not None and not verdict[0]:
        return verdict[1]
    return "assertion failed"


def _first_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[0][:300] if lines else ""
