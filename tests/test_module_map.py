"""The module map's rules, read from the source (no imports run).

- Imports go one way: ``autograder/`` builds on ``course/`` (the course model, the roster,
  nbgrader's markers). No module of ``course/`` imports ``autograder/`` at its top; only
  `course validate` and `course release` reach for the grader, inside the function that
  uses it, because the student kit may not ship it.
- The grader's modules that run inside the sandbox import nothing of ``course/`` (it is not
  mounted there).
- The repository's root is defined once, in course/model.py.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

from course.model import REPO

# Where a course command calls the grader, inside a function, when the grader is installed.
# (course/schedule.py: release times are read as due dates are, by autograder/late.py)
REACHES_FOR_THE_GRADER = {"course/self_check.py", "course/release.py", "course/schedule.py"}
# Run in the sandbox, where only autograder/ (and reftorch/) is mounted.
SANDBOX_MODULES = ("zygote.py", "harness.py", "observe.py", "structure.py", "forbidden.py")
# Configuration files that Jupyter and nbgrader execute by path: they find their own folder.
CONFIG_FILES = {"course/nbgrader_config.py", "course/jupyter_server_config.py", "course/kit/jupyter_server_config.py"}


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(top-level package imported, at the module's top level) for each absolute import."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name.split(".")[0], id(node) in top) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module.split(".")[0], id(node) in top))
    return found


def _python_files(folder: str) -> list[Path]:
    return sorted(p for p in (REPO / folder).rglob("*.py") if "node_modules" not in p.parts)


def wrong_way_imports(root: Path = REPO) -> list[str]:
    problems = []
    for path in sorted((root / "course").rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        for package, at_top in _imports(path):
            if package != "autograder":
                continue
            if at_top:
                problems.append(f"{relative}: imports autograder at its top (course/ must import without it)")
            elif relative not in REACHES_FOR_THE_GRADER:
                problems.append(f"{relative}: imports autograder (only {sorted(REACHES_FOR_THE_GRADER)} may, "
                                "inside the function that needs the grader)")
    for name in SANDBOX_MODULES:
        if any(package == "course" for package, _ in _imports(root / "autograder" / name)):
            problems.append(f"autograder/{name}: runs in the sandbox, where course/ is not mounted")
    return problems


def test_imports_go_from_autograder_to_course_only():
    assert wrong_way_imports() == []


def test_a_wrong_way_import_is_caught(tmp_path):
    """The rule above can fail: a copy of the two packages with one import turned around."""
    for folder in ("course", "autograder"):
        for path in _python_files(folder):
            target = tmp_path / path.relative_to(REPO)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(path.read_text(encoding="utf-8"))
    roster = tmp_path / "course" / "roster.py"
    roster.write_text("from autograder.results import read_results\n" + roster.read_text())
    zygote = tmp_path / "autograder" / "zygote.py"
    zygote.write_text(zygote.read_text() + "\n\ndef _late():\n    from course.model import REPO\n")
    assert wrong_way_imports(tmp_path) == [
        "course/roster.py: imports autograder at its top (course/ must import without it)",
        "autograder/zygote.py: runs in the sandbox, where course/ is not mounted"]


def test_the_repository_root_is_defined_once():
    defining = re.compile(r"^\s*\w+\s*=.*Path\(__file__\)\.resolve\(\)\.(parent\.parent|parents\[)", re.M)
    places = [path.relative_to(REPO).as_posix() for folder in ("course", "autograder")
              for path in _python_files(folder) if defining.search(path.read_text(encoding="utf-8"))]
    # the kit's `make update` runs course/update.py by path with the system's Python, before
    # anything (traitlets for course.model) is installed: it finds the kit from its own place
    assert [place for place in places if place not in CONFIG_FILES | {"course/kit/update.py"}] == ["course/model.py"]


# -- reftorch's layers ---------------------------------------------------------------------------
# Each module imports (at its top) only modules of its own layer or of the layers below. The
# Tensor's methods are attached from the functions layer, not imported by tensor.py.
REFTORCH_LAYERS = (
    # 0: memory, dtypes, kernels and the dispatcher's table; the global modes; the default
    # device and what a CPU-only torch reports (backends, accelerator)
    ("storage", "dtypes", "dispatch", "kernels", "_cpu_float", "sim", "_modes", "_formatting", "cuda",
     "default_device", "backends", "accelerator"),
    # 1: the tensor, its storage seen typed (tensor.storage()), a tensor rebuilt over a storage
    ("tensor", "typed_storage", "_utils"),
    # 2: the autograd graph (nodes, saved tensors, grad mode) and the random generator
    ("autograd.graph", "autograd.grad_mode", "autograd.anomaly_mode", "generator"),
    # 3: the operators: their tables, the code generated from them, their implementations
    ("functions",),
    # 4: the engine that runs the graph (the rest of autograd/: engine, forward_ad, function,
    # functional, gradcheck), and func's transforms
    ("autograd", "func"),
    # 5: what is built on the ops and the engine
    ("nn", "optim", "random", "distributions", "amp", "fx", "fusion", "viz", "utils", "serialization"),
)
# Imports inside a function reach up a layer: few, each with its reason on its line.
MOST_DEFERRED_IMPORTS = 15
PACKAGE = "reftorch"


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[1:-1] if parts[-1] == "__init__" else parts[1:])


def reftorch_layer(module: str) -> int | None:
    """The layer of a module of reftorch (``functions.views`` is in ``functions``'s, the first
    layer that names it or its package); None for reftorch's own __init__, which gathers all."""
    for number, members in enumerate(REFTORCH_LAYERS):
        if any(module == m or module.startswith(m + ".") for m in members):
            return number
    return None


def _reftorch_imports(path: Path, root: Path):
    """(module imported, line, at the top, the line's text) for each import of reftorch's own."""
    module = _module_name(path, root)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    tree = ast.parse(source)
    deferred = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                for n in ast.walk(f)}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.split(".") if package else []
            base = base[:len(base) - node.level + 1]
            prefix = ".".join(base + ([node.module] if node.module else []))
            # ``from . import views`` imports the module views; ``from .tensor import Tensor`` tensor
            folder = root / PACKAGE / prefix.replace(".", "/")
            names = [f"{prefix}.{a.name}".lstrip(".") if (folder / f"{a.name}.py").exists() or
                     (folder / a.name).is_dir() else prefix for a in node.names]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == PACKAGE:
            names = [node.module.partition(".")[2]]
        elif isinstance(node, ast.Import):
            names = [a.name.partition(".")[2] for a in node.names if a.name.split(".")[0] == PACKAGE]
        else:
            continue
        for name in names:
            yield name, node.lineno, id(node) not in deferred, lines[node.lineno - 1]


def layer_problems(root: Path = REPO) -> tuple[list[str], list[str]]:
    """(imports that go up a layer at a module's top, deferred imports) of reftorch."""
    upward, deferred = [], []
    for path in sorted((root / PACKAGE).rglob("*.py")):
        module = _module_name(path, root)
        layer = reftorch_layer(module)
        where = path.relative_to(root).as_posix()
        for imported, line, at_top, text in _reftorch_imports(path, root):
            if not at_top:
                deferred.append(f"{where}:{line}: {text.strip()}")
                continue
            target = reftorch_layer(imported)
            if layer is not None and target is not None and target > layer:
                upward.append(f"{where}:{line}: {module} (layer {layer}) imports {imported} (layer {target})")
    return upward, deferred


def test_reftorch_imports_go_down_the_layers():
    upward, deferred = layer_problems()
    assert upward == []
    assert len(deferred) <= MOST_DEFERRED_IMPORTS, "\n".join(deferred)
    assert [d for d in deferred if "#" not in d] == [], "each deferred import says why, on its line"


def test_every_reftorch_module_has_a_layer():
    modules = {_module_name(p, REPO) for p in (REPO / PACKAGE).rglob("*.py") if p.name != "__init__.py"}
    assert sorted(m for m in modules if reftorch_layer(m) is None) == []


def test_an_upward_import_is_caught(tmp_path):
    """The rule can fail: tensor.py importing the functions at its top, and an import in a
    function without its reason."""
    copy = tmp_path / PACKAGE
    for path in (REPO / PACKAGE).rglob("*.py"):
        target = copy / path.relative_to(REPO / PACKAGE)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(path.read_text(encoding="utf-8"))
    tensor = copy / "tensor.py"
    tensor.write_text(tensor.read_text() + "\nfrom .functions import views\n\n\ndef _late():\n"
                                            "    from .nn import Linear\n")
    upward, deferred = layer_problems(tmp_path)
    assert upward == [f"{PACKAGE}/tensor.py:{len(tensor.read_text().splitlines()) - 4}: tensor (layer 1) imports "
                      "functions.views (layer 3)"]
    assert [d for d in deferred if "#" not in d] == [f"{PACKAGE}/tensor.py:{len(tensor.read_text().splitlines())}: "
                                                     "from .nn import Linear"]
