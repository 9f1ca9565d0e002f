"""On the host: what a notebook's own cells compile to, and the code checks made on it.

Some exercises must not be handed to torch while torch is there (the puzzles use only
indexing; RMSprop is not torch.optim's; Module is the student's own code). Asked in the
student's process, such a check is the student's to bend: a rebound helper, a patched
library name, the grader's own structure readers wrapped. So the verdict is made here:

- the student's run reports, for the object under test, the fingerprints of its functions'
  code (``structure.code_of``: the class chain and every method, a decorated one through
  ``__wrapped__``); the host compiles the notebook's code cells itself, as IPython runs
  them, and each fingerprint must be one of those code objects: code executed from any
  other source (torch's own files, a string) is not the notebook's;
- the rule of the check is applied to the host's own code objects and to what they reach by
  name among the notebook's top-level definitions: only some names, none of others, no
  loops, no nested functions, no default values, no reflection (``globals()``, ``getattr``...);
- a student's cell that reaches into the grader's process (the ``autograder`` package,
  ``sys.modules``, a function's globals, closure or code, the garbage collector, ``ctypes``)
  makes every code check of the notebook fail: the reported fingerprints could be forged.

What this cannot see is in autograder/README.md ("Structural checks").
"""
from __future__ import annotations

import __future__
import ast
import dis
import types
from dataclasses import dataclass, field

from .probes import AST_LOCK
from .structure import fingerprint

REFLECTION = frozenset({"globals", "vars", "locals", "eval", "exec", "compile", "__import__", "importlib",
                        "import_module", "getattr", "setattr", "delattr", "__dict__", "__getattribute__"})
# A student's cell that names one of these reaches into the grader's own process.
_INTO_THE_GRADER_NAMES = frozenset({"autograder", "harness", "zygote", "_STRUCTURE", "_BUILTINS", "__closure__",
                                    "__globals__", "__code__", "__defaults__", "__kwdefaults__", "cell_contents",
                                    "__subclasses__", "_getframe", "get_referrers", "get_referents", "get_objects",
                                    "ctypes", "meta_path"})
_INTO_THE_GRADER_MODULES = ("autograder", "gc", "ctypes", "importlib")
_GLOBAL_LOADS = {"LOAD_GLOBAL", "LOAD_NAME", "STORE_GLOBAL", "STORE_NAME", "DELETE_GLOBAL", "DELETE_NAME"}
_LOOPS = {"FOR_ITER", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT"}


def rule_of(data) -> dict:
    """A code check's rule, as recorded by the reference run (plain data, checked)."""
    data = data if isinstance(data, dict) else {}

    def names(key):
        value = data.get(key)
        return sorted({item for item in value if isinstance(item, str)}) if isinstance(value, (list, tuple)) else []

    only = data.get("only")
    name = data.get("name")
    return {"only": names("only") if isinstance(only, (list, tuple)) else None, "forbid": names("forbid"),
            "name": name[:40] if isinstance(name, str) else "",
            "forbid_classes": names("forbid_classes"),
            **{flag: data.get(flag) is not False for flag in ("loops", "nested", "defaults", "reflection")}}


@dataclass
class _Cell:
    name: str
    codes: list = field(default_factory=list)


class NotebookCode:
    """The code objects a plan's code cells compile to, compiled here once per notebook."""

    def __init__(self, cells: list[dict], names: list[str], tampering: bool = True):
        """``cells``: the plan's cells (only kind "code" is compiled, in order); ``names``:
        how to call each cell in messages, by the same index; ``tampering``: look in the
        student's cells for code reaching into the grader (not in a student's own kernel)."""
        from IPython.core.inputtransformer2 import TransformerManager

        self.codes: dict[str, types.CodeType] = {}
        self.defaults: dict[str, bool] = {}          # fingerprint -> the def takes default values
        self.top: dict[str, list] = {}               # top-level name -> code objects or names it is made of
        self.into_the_grader: list[str] = []
        transform = TransformerManager().transform_cell
        flags = 0   # __future__ imports hold from cell to cell, as in IPython
        for cell, name in zip(cells, names):
            if cell.get("kind") != "code":
                continue
            try:
                with AST_LOCK:   # python/cpython#106905: the grader's threads parse and compile at once
                    tree, modules, flags = self._compile_cell(transform(cell.get("source") or ""), flags)
            except (SyntaxError, ValueError, TypeError, OverflowError, RecursionError, MemoryError):
                continue
            if tampering and not cell.get("locked"):
                self._look_for_the_grader(tree, name)
            self._collect(modules, tree)

    @staticmethod
    def _compile_cell(source: str, flags: int) -> tuple[ast.Module, list[types.CodeType], int]:
        tree = ast.parse(source)
        # IPython compiles each top-level statement on its own (the last expression
        # interactively), and that changes the bytecode: an attribute of a module
        # imported in the same unit is loaded with LOAD_ATTR, otherwise LOAD_METHOD.
        modules = []
        for position, node in enumerate(tree.body):
            if isinstance(node, ast.ImportFrom) and node.module == "__future__":
                for alias in node.names:
                    feature = getattr(__future__, alias.name, None)
                    flags |= getattr(feature, "compiler_flag", 0)
            last_expression = position == len(tree.body) - 1 and isinstance(node, ast.Expr)
            unit = ast.Interactive([node]) if last_expression else ast.Module([node], type_ignores=[])
            modules.append(compile(unit, "<cell>", "single" if last_expression else "exec", flags,
                                   dont_inherit=True))
        return tree, modules, flags

    @classmethod
    def of_plan(cls, plan) -> "NotebookCode":
        from .judge import cell_name
        return cls(plan.cells, [cell_name(plan, cell["index"]) for cell in plan.cells])

    def add_functions_of(self, namespace: dict) -> None:
        """The code of every function and class method a namespace holds, as if compiled from
        the notebook's cells (a student's own kernel, whose input history may be incomplete)."""
        for value in list(namespace.values()):
            members = list(vars(value).values()) if isinstance(value, type) else [value]
            for member in members:
                member = getattr(member, "__func__", member)
                for function in (getattr(member, part, None) for part in ("fget", "fset", "fdel")) \
                        if isinstance(member, property) else [member]:
                    while isinstance(getattr(function, "__wrapped__", None), types.FunctionType):
                        function = function.__wrapped__
                    if isinstance(function, types.FunctionType):
                        self._collect([function.__code__], ast.Module([], type_ignores=[]))

    def _collect(self, modules: list[types.CodeType], tree: ast.Module) -> None:
        by_place: dict[tuple[str, int], types.CodeType] = {}
        stack = list(modules)
        while stack:
            code = stack.pop()
            self.codes.setdefault(fingerprint(code), code)
            by_place.setdefault((code.co_name, code.co_firstlineno), code)
            stack.extend(const for const in code.co_consts if isinstance(const, types.CodeType))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
                code = by_place.get((getattr(node, "name", "<lambda>"), first))
                if code is not None:
                    arguments = node.args
                    self.defaults[fingerprint(code)] = bool(arguments.defaults) or any(
                        d is not None for d in arguments.kw_defaults)
        for statement in tree.body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                first = min([statement.lineno] + [d.lineno for d in statement.decorator_list])
                code = by_place.get((statement.name, first))
                made = [code] if code is not None else []
                made += [_names_in(d) for d in statement.decorator_list]
                if isinstance(statement, ast.ClassDef):
                    made += [_names_in(base) for base in statement.bases]
                self.top.setdefault(statement.name, []).extend(made)
            elif isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                for target in targets:
                    for name in ast.walk(target):
                        if isinstance(name, ast.Name) and statement.value is not None:
                            self.top.setdefault(name.id, []).append(_names_in(statement.value))
            elif isinstance(statement, (ast.Import, ast.ImportFrom)):
                for alias in statement.names:
                    parts = set((getattr(statement, "module", None) or "").split(".")) | set(alias.name.split("."))
                    self.top.setdefault((alias.asname or alias.name).split(".")[0], []).append(parts - {""})

    def _look_for_the_grader(self, tree: ast.Module, cell: str) -> None:
        for node in ast.walk(tree):
            found = None
            if isinstance(node, ast.Name) and node.id in _INTO_THE_GRADER_NAMES:
                found = node.id
            elif isinstance(node, ast.Attribute) and node.attr in _INTO_THE_GRADER_NAMES:
                found = node.attr
            elif isinstance(node, ast.Attribute) and node.attr == "modules" and \
                    isinstance(node.value, ast.Name) and node.value.id == "sys":
                found = "sys.modules"
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "autograder" in node.value:
                found = repr(node.value)[:40]
            elif isinstance(node, ast.Import):
                found = next((a.name for a in node.names if a.name.split(".")[0] in _INTO_THE_GRADER_MODULES), None)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in _INTO_THE_GRADER_MODULES \
                    and node.module != "autograder.tools":   # the grading-tools cell's own import
                found = node.module
            if found and len(self.into_the_grader) < 5:
                self.into_the_grader.append(f"{cell}, line {getattr(node, 'lineno', '?')}: `{found}`")

    def check(self, got, rule: dict) -> str:
        """Why the reported ``got`` (``structure.code_of``'s data) breaks ``rule``; "" when
        it does not."""
        if self.into_the_grader:
            return ("cannot be checked: your notebook reaches into the grader's own code ("
                    + "; ".join(self.into_the_grader[:2]) + ")")
        if not (isinstance(got, dict) and isinstance(got.get("classes"), list) and isinstance(got.get("functions"), list)):
            return "the grader could not read what your answer is made of"
        classes = [name for name in got["classes"] if isinstance(name, str)]
        for name in classes:
            for prefix in rule["forbid_classes"]:
                if name.startswith(prefix):
                    return f"it is built on {name}, which the exercise asks you to write yourself"
        own_names = {name.rsplit(".", 1)[-1] for name in classes}
        start: list[types.CodeType] = []
        for entry in got["functions"]:
            if not (isinstance(entry, list) and len(entry) == 2 and all(isinstance(part, str) for part in entry)):
                return "the grader could not read what your answer is made of"
            label, mark = entry
            if mark.startswith("library:"):
                return f"{label} is the library's {mark[len('library:'):]}, not your code"
            code = self.codes.get(mark)
            if code is None:
                return f"{label} is not code written in your notebook's cells"
            start.append((label, code))
        for label, code in start:
            why = self._breaks(label, code, rule, own_names)
            if why:
                return why
        return ""

    def _breaks(self, label: str, code: types.CodeType, rule: dict, own_names: set) -> str:
        name = label.rsplit(".", 1)[-1]
        broken = f"breaks the {rule['name']} rule" if rule.get("name") else "breaks the rule"
        if rule["only"] is not None:
            used = _used(code)
            outside = sorted((used["globals"] | used["attributes"]) - set(rule["only"]))
            if outside:
                return f"{name} {broken}: uses " + ", ".join(f"`{n}`" for n in outside[:5])
        if not rule["nested"] and any(isinstance(c, types.CodeType) for c in code.co_consts):
            return f"{name} {broken}: defines a function, lambda or comprehension"
        if not rule["defaults"] and (self.defaults.get(fingerprint(code)) or code.co_freevars):
            return f"{name} {broken}: takes default values or names from an enclosing function"
        if not rule["loops"] and any(step.opname in _LOOPS for step in dis.get_instructions(code)):
            return f"{name} {broken}: loops"
        if rule["forbid"] or not rule["reflection"]:
            reached = self._reach(code) - own_names
            forbidden = sorted(reached & set(rule["forbid"]))
            if forbidden:
                return f"{name} uses `{forbidden[0]}` (directly or through your other definitions), which the exercise rules out"
            if not rule["reflection"]:
                reflective = sorted(reached & REFLECTION)
                if reflective:
                    return (f"{name} uses `{reflective[0]}`: look names up directly here, so the grader can "
                            "see what your code uses")
        return ""

    def _reach(self, start: types.CodeType) -> set[str]:
        """Every name the code uses, and the names used by the notebook's top-level
        definitions it names, transitively (what the host can see statically)."""
        names: set[str] = set()
        pending, seen_codes, seen_names = [start], set(), set()
        while pending:
            item = pending.pop()
            if isinstance(item, types.CodeType):
                if id(item) in seen_codes:
                    continue
                seen_codes.add(id(item))
                used = _used(item)
                names |= used["globals"] | used["attributes"]
                pending.extend(c for c in item.co_consts if isinstance(c, types.CodeType))
                for global_name in used["globals"]:
                    if global_name not in seen_names:
                        seen_names.add(global_name)
                        pending.extend(self.top.get(global_name, []))
            else:   # the names an assignment, import, decorator or base class is made of
                for name in item:
                    names.add(name)
                    if name not in seen_names:
                        seen_names.add(name)
                        pending.extend(self.top.get(name, []))
        return names


def _used(code: types.CodeType) -> dict[str, set[str]]:
    found = {"globals": set(), "attributes": set()}
    for step in dis.get_instructions(code):
        if step.opname in _GLOBAL_LOADS and isinstance(step.argval, str):
            found["globals"].add(step.argval)
        elif step.opname in ("LOAD_ATTR", "LOAD_METHOD", "STORE_ATTR", "DELETE_ATTR") and isinstance(step.argval, str):
            found["attributes"].add(step.argval)
        elif step.opname == "IMPORT_NAME" and isinstance(step.argval, str):
            found["globals"].update(step.argval.split("."))
    return found


def _names_in(node: ast.AST) -> set[str]:
    found = set()
    for item in ast.walk(node):
        if isinstance(item, ast.Name):
            found.add(item.id)
        elif isinstance(item, ast.Attribute):
            found.add(item.attr)
    return found
