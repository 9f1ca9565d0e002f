"""Split a test cell into its probes (run in the student's process) and the rest (reference run).

A test cell in the probe form defines functions decorated ``@probe`` (or
``@probe(torch=False)``) that call the student's code, and calls
``check(what, probe, *args, expect=...)`` for each case. Only the probe definitions are
sent to the student's process; they are the only instructor code that runs there.

>>> cell = split_test_cell("@probe(torch=False)\\ndef p(n):\\n    return f(n)\\ncheck('f(1)', p, 1, expect=2)")
>>> cell.names, cell.torch
(['p'], False)
"""
from __future__ import annotations

import ast
import threading
from dataclasses import dataclass

# CPython 3.11 before 3.11.8 keeps the AST constructor's recursion depth in state shared by
# threads, so two ast.parse calls at once in the grader's worker threads can fail with
# "SystemError: AST constructor recursion depth mismatch" (python/cpython#106905): one at a time,
# here and wherever the host turns source into an AST or an AST into code (written.py).
AST_LOCK = threading.Lock()


def _parse(source: str) -> ast.Module:
    with AST_LOCK:
        return ast.parse(source)


PROBE = "probe"


class ProbeFormError(ValueError):
    """A test cell mixes probe styles in a way the grader cannot split."""


class OldFormTestCell(ProbeFormError):
    """A test cell without any ``@probe`` function: the old assert form.

    That form ran the test's own code (and a secret seed) in the student's process; the
    grader has one path, the probe form, and refuses such a cell rather than guess."""

    def __init__(self, grade_id: str):
        super().__init__(
            f"test cell {grade_id!r} is in the old assert form (it defines no @probe function); "
            "the grader no longer grades that form: rewrite the cell with @probe functions and "
            "check(...) calls (see solutions/README.md)")
        self.grade_id = grade_id


def strip_magics(source: str) -> str:
    """Test cells are plain Python; IPython magics (rare there) are commented out."""
    return "\n".join(("# " + line) if line.lstrip().startswith(("%", "!")) else line
                     for line in source.splitlines())


@dataclass
class ProbeCell:
    source: str            # the visible probes' definitions: what the student's run gets at first
    names: list[str]       # probe function names, in order
    torch: bool            # whether the student's process for these probes has torch
    all_source: str = ""   # every probe, those written among the hidden tests too: sent with the hidden cases


def _probe_decorator(node: ast.AST):
    """(is a probe, torch allowed) for one decorator expression."""
    if isinstance(node, ast.Name) and node.id == PROBE:
        return True, True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == PROBE:
        allowed = True
        for keyword in node.keywords:
            if keyword.arg == "torch" and isinstance(keyword.value, ast.Constant):
                allowed = bool(keyword.value.value)
        return True, allowed
    return False, True


def _defines_probes(tree: ast.Module) -> bool:
    return any(isinstance(node, ast.FunctionDef) and any(_probe_decorator(d)[0] for d in node.decorator_list)
               for node in tree.body)


def require_probe_form(grade_id: str, source: str) -> None:
    """Raise :class:`OldFormTestCell` for a test cell the grader refuses (no ``@probe``)."""
    try:
        tree = _parse(strip_magics(source))
    except SyntaxError as error:
        raise ProbeFormError(f"test cell {grade_id!r} is not valid Python "
                             f"({error.msg}, line {error.lineno})") from None
    if not _defines_probes(tree):
        raise OldFormTestCell(grade_id)


def old_form_test_cells(notebook) -> list[str]:
    """grade_ids of the notebook's test cells (graded, not answer) that are in the old form."""
    found = []
    for cell in notebook.get("cells", []):
        metadata = cell.get("metadata") if isinstance(cell, dict) else None
        meta = metadata.get("nbgrader") if isinstance(metadata, dict) else None
        if not isinstance(meta, dict):
            continue
        if cell.get("cell_type") == "code" and meta.get("grade") and not meta.get("solution"):
            source = cell.get("source", "")
            source = "".join(source) if isinstance(source, list) else source
            try:
                tree = _parse(strip_magics(source))
            except SyntaxError:
                continue  # not a form question: running the cell reports it
            if not _defines_probes(tree):
                found.append(meta.get("grade_id") or cell.get("id", "?"))
    return found


def split_test_cell(source: str, hidden_lines: set[int] = frozenset()) -> ProbeCell:
    """``hidden_lines``: the cell's hidden-tests region (line numbers); a probe defined there
    is sent to the student's process only with the hidden cases."""
    tree = _parse(strip_magics(source))
    probes, names, kinds, visible = [], [], set(), []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        marks = [_probe_decorator(d) for d in node.decorator_list]
        if not any(is_probe for is_probe, _ in marks):
            continue
        if len(node.decorator_list) != 1:
            raise ProbeFormError(f"probe {node.name}: @probe must be its only decorator")
        kinds.add(marks[0][1])
        node.decorator_list = []  # the student's process needs the plain function
        probes.append(node)
        names.append(node.name)
        if node.lineno not in hidden_lines:
            visible.append(node)
    if len(kinds) > 1:
        raise ProbeFormError("a test cell's probes must all allow torch or all forbid it")
    if len(set(names)) != len(names):
        raise ProbeFormError("two probes with the same name in one test cell")
    return ProbeCell(source="\n\n".join(ast.unparse(p) for p in visible), names=[p.name for p in visible],
                     torch=kinds != {False}, all_source="\n\n".join(ast.unparse(p) for p in probes))
