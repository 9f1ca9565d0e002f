"""Turn an nbgrader test cell into check sites: what runs in the sandbox, what the host judges.

Every ``assert`` (and every call to a known assertion function such as
``torch.testing.assert_close``) in a test cell becomes a *site*. In the sandbox the
expression still runs with Python's own semantics, but each sub-expression the host can
recompute is *tapped*: its value is recorded as plain data. The host keeps the original
expression tree and recomputes the verdict itself with trusted functions, so a patched
``torch.allclose``, a tensor subclass with a lying ``__eq__`` or a doctored ``bool`` in the
student's interpreter changes nothing: only the recorded leaf values (what the student's
code actually produced) reach the verdict.

Node classes:
- *const*: a literal, or a dotted name the host knows (``torch.float32``, ``math.pi``).
- *eval*: an operator, comparison, container, subscript, or a call of a known pure
  function/method; recomputed on the host from its children.
- *leaf*: anything else (names, calls of student functions, unknown attributes); its
  value comes from the run.
"""
from __future__ import annotations

import ast
import copy
import re
from dataclasses import dataclass, field

TAP = "__course_tap__"
CHECK = "__course_check__"

# Conventional aliases, as the course's notebooks import them.
ALIASES = {"np": "numpy", "F": "torch.nn.functional", "nn": "torch.nn"}

_TORCH_PURE = (
    "allclose equal isclose is_tensor is_floating_point tensor as_tensor ones zeros full arange "
    "linspace eye ones_like zeros_like full_like relu sigmoid tanh exp log log1p sqrt abs sum mean "
    "max min maximum minimum clamp where matmul mm bmm mv dot outer softmax log_softmax cat stack "
    "transpose reshape flatten einsum all any argmax argmin numel isfinite isnan sign square pow "
    "norm var std prod cumsum tril triu diag sin cos erf floor ceil round"
)
_F_PURE = (
    "relu sigmoid tanh softmax log_softmax cross_entropy mse_loss nll_loss linear gelu l1_loss "
    "binary_cross_entropy one_hot conv1d conv2d max_pool2d avg_pool2d silu leaky_relu"
)
_NUMPY_PURE = (
    "allclose array_equal isclose array asarray all any abs sum mean max min exp log sqrt zeros "
    "ones arange dot matmul maximum minimum isfinite isnan"
)
SAFE_FUNCS = (
    {f"torch.{n}" for n in _TORCH_PURE.split()}
    | {f"torch.nn.functional.{n}" for n in _F_PURE.split()}
    | {f"numpy.{n}" for n in _NUMPY_PURE.split()}
    | {f"math.{n}" for n in "isclose sqrt exp log isfinite isnan fabs floor ceil".split()}
    | set("abs len min max sum round float int bool str list tuple set dict sorted all any "
          "isinstance zip range enumerate divmod pow repr".split())
)
# Functions that signal failure by raising instead of returning False.
ASSERT_FUNCS = {
    "torch.testing.assert_close", "numpy.testing.assert_allclose",
    "numpy.testing.assert_array_equal", "numpy.testing.assert_equal",
    "numpy.testing.assert_array_almost_equal", "numpy.testing.assert_almost_equal",
}
SAFE_CONSTS = (
    {f"torch.{n}" for n in (
        "float16 bfloat16 float32 float64 float half double int8 int16 int32 int64 long int "
        "uint8 bool complex64 complex128 Tensor Size dtype device").split()}
    | {"math.pi", "math.e", "math.inf", "math.nan", "numpy.pi", "numpy.inf", "numpy.nan",
       "numpy.ndarray", "numpy.float32", "numpy.float64", "numpy.int64"}
)
SAFE_METHODS = set(
    "all any item sum mean abs max min tolist size dim numel float double long int detach reshape "
    "view flatten t allclose equal isclose eq ne lt le gt ge argmax argmin squeeze unsqueeze "
    "norm exp log sqrt pow clone cpu numpy astype count keys values items startswith endswith "
    "lower upper strip split prod std var round".split()
)
SAFE_ATTRS = {"shape", "dtype", "ndim", "T", "mT", "real", "imag", "requires_grad"}

HIDDEN_BEGIN = re.compile(r"^\s*###\s*BEGIN HIDDEN TESTS")
HIDDEN_END = re.compile(r"^\s*###\s*END HIDDEN TESTS")


def dotted_name(node: ast.AST) -> str | None:
    """``torch.nn.functional.relu`` for that attribute chain, aliases resolved."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(ALIASES.get(node.id, node.id))
    return ".".join(reversed(parts))


@dataclass
class Site:
    """One assert (or assertion call) in a test cell."""
    number: int
    line: int                 # 1-based line within the cell
    hidden: bool
    mode: str                 # "truth": the value must be truthy; "call": the call must not raise
    expr: ast.expr            # annotated original expression (host side only)
    leaves: list[int] = field(default_factory=list)
    message: str | None = None   # a constant assert message, if the author gave one
    source: str = ""             # the visible source line ("" for hidden sites)
    weak: bool = False           # the whole expression is one leaf: only the run's word for it


@dataclass
class TestCellChecks:
    grade_id: str
    sandbox_source: str        # instrumented source to run in the sandbox
    sites: list[Site]
    hidden_lines: list[str]    # stripped hidden source lines, for redacting messages


def hidden_line_numbers(source: str) -> set[int]:
    hidden, inside = set(), False
    for number, line in enumerate(source.splitlines(), start=1):
        if HIDDEN_BEGIN.match(line):
            inside = True
        if inside:
            hidden.add(number)
        if HIDDEN_END.match(line):
            inside = False
    return hidden


class _Annotator:
    """Classifies nodes of one site's expression and numbers the tapped ones."""

    def __init__(self, site: Site, counter: list[int], check_functions: frozenset[str]):
        self.site = site
        self.counter = counter
        self.check_functions = check_functions

    def _tap(self, node, kind):
        node._course_kind = kind
        node._course_tap = self.counter[0]
        self.counter[0] += 1
        if kind == "leaf":
            self.site.leaves.append(node._course_tap)

    def visit(self, node: ast.expr) -> None:
        name = dotted_name(node) if isinstance(node, ast.Attribute) else None
        if isinstance(node, ast.Constant) or (name in SAFE_CONSTS):
            node._course_kind = "const"
            return
        children = self.evaluable_children(node)
        if children is None:
            self._tap(node, "leaf")
            return
        self._tap(node, "eval")
        for child in children:
            self.visit(child)

    def evaluable_children(self, node):
        """Children to visit when the host can recompute ``node``; None makes it a leaf."""
        if isinstance(node, ast.BinOp):
            return [node.left, node.right]
        if isinstance(node, ast.UnaryOp):
            return [node.operand]
        if isinstance(node, ast.BoolOp):
            return list(node.values)
        if isinstance(node, ast.Compare):
            return [node.left, *node.comparators]
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            if any(isinstance(e, ast.Starred) for e in node.elts):
                return None
            return list(node.elts)
        if isinstance(node, ast.Dict):
            if any(k is None for k in node.keys):
                return None
            return [*node.keys, *node.values]
        if isinstance(node, ast.Subscript):
            if isinstance(node.slice, ast.Slice):
                parts = [p for p in (node.slice.lower, node.slice.upper, node.slice.step) if p]
                return [node.value, *parts]
            return [node.value, node.slice]
        if isinstance(node, ast.Attribute) and node.attr in SAFE_ATTRS:
            return [node.value]
        if isinstance(node, ast.Call):
            args = [*node.args, *(k.value for k in node.keywords)]
            if any(isinstance(a, (ast.Starred, ast.GeneratorExp, ast.Lambda)) for a in args):
                return None
            if any(k.arg is None for k in node.keywords):
                return None
            name = dotted_name(node.func) if isinstance(node.func, (ast.Name, ast.Attribute)) else None
            if name in SAFE_FUNCS or name in ASSERT_FUNCS or name in self.check_functions:
                return args
            if isinstance(node.func, ast.Attribute) and node.func.attr in SAFE_METHODS and name is None:
                return [node.func.value, *args]
            if isinstance(node.func, ast.Attribute) and node.func.attr in SAFE_METHODS \
                    and name is not None and name.split(".")[0] not in ("torch", "numpy", "math"):
                return [node.func.value, *args]
            return None
        return None


class _Instrument(ast.NodeTransformer):
    """Wraps tapped nodes in ``__course_tap__(k, ...)`` for the sandbox copy."""

    def generic_visit(self, node):
        node = super().generic_visit(node)
        tap = getattr(node, "_course_tap", None)
        if tap is None:
            return node
        if isinstance(node, ast.Attribute) and isinstance(getattr(node, "ctx", None), ast.Store):
            return node
        return ast.Call(func=ast.Name(TAP, ast.Load()), args=[ast.Constant(tap), node], keywords=[])


class _SiteFinder(ast.NodeTransformer):
    def __init__(self, hidden: set[int], lines: list[str], check_functions: frozenset[str]):
        self.sites: list[Site] = []
        self.hidden = hidden
        self.lines = lines
        self.check_functions = check_functions

    def _site(self, node: ast.stmt, expr: ast.expr, mode: str, message) -> ast.stmt:
        number = len(self.sites)
        line = node.lineno
        hidden = line in self.hidden
        site = Site(number=number, line=line, hidden=hidden, mode=mode, expr=expr,
                    message=message, source="" if hidden else self.lines[line - 1].strip())
        _Annotator(site, [0], self.check_functions).visit(expr)
        site.weak = getattr(expr, "_course_kind", "") == "leaf"
        self.sites.append(site)
        sandbox_expr = _Instrument().visit(copy.deepcopy(expr))
        call = ast.Call(
            func=ast.Name(CHECK, ast.Load()),
            args=[ast.Constant(number), ast.Constant(mode),
                  ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[],
                                                kw_defaults=[], defaults=[]), body=sandbox_expr)],
            keywords=[])
        return ast.copy_location(ast.Expr(call), node)

    def visit_Assert(self, node: ast.Assert):
        message = node.msg.value if isinstance(node.msg, ast.Constant) else None
        if isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.And):
            # `assert a and b` is `assert a; assert b`: one site each, as Python stops at the first.
            return [self._site(node, value, "truth", message) for value in node.test.values]
        return self._site(node, node.test, "truth", message)

    def visit_Expr(self, node: ast.Expr):
        name = dotted_name(node.value.func) if isinstance(node.value, ast.Call) else None
        if name in ASSERT_FUNCS or name in self.check_functions:
            return self._site(node, node.value, "call", None)
        return self.generic_visit(node)


def checks_for_test_cell(grade_id: str, source: str,
                         check_functions: frozenset[str] = frozenset()) -> TestCellChecks:
    """Parse a (trusted) test cell and split it into the sandbox part and the host part.

    ``check_functions`` are helpers from the instructor's locked cells (``expect``,
    ``expect_close``...): a statement calling one is a site judged by the host's own copy.

    >>> c = checks_for_test_cell("t1", "assert f(2) == 4")
    >>> len(c.sites), c.sites[0].leaves
    (1, [1])
    """
    code = strip_magics(source)
    tree = ast.parse(code)
    lines = code.splitlines()
    hidden = hidden_line_numbers(code)
    finder = _SiteFinder(hidden, lines, check_functions)
    tree = finder.visit(tree)
    ast.fix_missing_locations(tree)
    hidden_lines = [lines[n - 1].strip() for n in sorted(hidden)
                    if n - 1 < len(lines) and len(lines[n - 1].strip()) >= 6
                    and not HIDDEN_BEGIN.match(lines[n - 1]) and not HIDDEN_END.match(lines[n - 1])]
    # The sandbox gets the instrumented form: redact its lines too.
    for statement in tree.body:
        if statement.lineno in hidden:
            hidden_lines += [line.strip() for line in ast.unparse(statement).splitlines()
                             if len(line.strip()) >= 12]
    return TestCellChecks(grade_id=grade_id, sandbox_source=ast.unparse(tree),
                          sites=finder.sites, hidden_lines=hidden_lines)


def strip_magics(source: str) -> str:
    """Test cells are plain Python; IPython magics (rare there) are commented out."""
    return "\n".join(("# " + line) if line.lstrip().startswith(("%", "!")) else line
                     for line in source.splitlines())


def check_functions_defined_in(source: str) -> frozenset[str]:
    """Names of ``expect*``/``assert*`` functions a trusted helper cell defines."""
    tree = ast.parse(strip_magics(source))
    return frozenset(node.name for node in tree.body
                     if isinstance(node, ast.FunctionDef) and node.name.startswith(("expect", "assert")))
