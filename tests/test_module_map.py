"""The module map's rules, read from the source (no imports run, but the CLI's own list).

- Three layers, each a folder, lowest first: ``coursebase/`` (the course model, nbgrader's
  markers, the roster, the paths), ``autograder/`` (grading, on the base), ``course/`` (the
  applications: the `course` command, validate, the student kit, the hub, the site). A
  module imports its own layer and the layers below, never one above: not at its top, not
  inside a function, not by a string naming the module.
- The base has no import cycle (the course model does not reach for its markers or roster).
- The grader's modules that run inside the sandbox import nothing of ``coursebase/`` or
  ``course/`` (only autograder/ and reftorch/ are mounted there).
- The `course` command's subcommands are declared in one place, course/cli.py's COMMANDS:
  every module of course/ with ``register(subparsers)`` is in it, as a module (never a
  string), and the student kit's own `course` (course/kit/cli.py) offers some of them.
- The repository's root is defined once, in coursebase/paths.py, in whatever spelling
  (``Path(__file__).parents[...]``, ``.parent.parent``, ``os.path.dirname(os.path.dirname(...))``),
  across the packages, tests/ and bench/.
- Every import of the three packages, in them, tests/ and bench/, names a module that exists:
  a spelling from before the layers (``course.model``, ``course.markers``) fails here, by name,
  rather than in whichever test happens to import it.
- reftorch's own modules import only their layer or those below (REFTORCH_LAYERS, below).
"""
from __future__ import annotations

import ast
import re
import types
from pathlib import Path

from coursebase.paths import REPO

LAYERS = ("coursebase", "autograder", "course")
# Run in the sandbox, where only autograder/ (and reftorch/) is mounted.
SANDBOX_MODULES = ("zygote.py", "harness.py", "observe.py", "structure.py", "forbidden.py")
# Files that are run by path, before or without the course's packages: each finds its own folder.
RUN_BY_PATH = {
    "course/nbgrader_config.py", "course/jupyter_server_config.py",   # Jupyter and nbgrader run them
    "course/kit/nbgrader_config.py", "course/kit/jupyter_server_config.py",
    "course/deploy/tljh/instructor_nbgrader_config.py",
    # the kit's `make update` runs it with the system's Python before anything is installed
    "course/kit/update.py",
    # a reftorch test the student kit ships, which runs itself again under another CPU build
    "tests/test_engine_tensor.py",
}
ROOT_SPELLINGS = re.compile(r"Path\(__file__\)(\.resolve\(\))?\.(parent\.parent|parents\[\d+\])"
                            r"|dirname\(\s*(os\.path\.)?dirname\([^\n]*__file__")
MODULE_NAME = re.compile(r"^(coursebase|autograder|course)(\.\w+)+$")


def _python_files(folder: str, root: Path = REPO) -> list[Path]:
    return sorted(p for p in (root / folder).rglob("*.py") if "node_modules" not in p.parts)


def _module(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, root: Path = REPO) -> list[tuple[str, int, bool]]:
    """(module imported, line, at the module's top) for each import, relative ones resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(node) for node in tree.body}
    package = _module(path, root) if path.name == "__init__.py" else _module(path, root).rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno, id(node) in top) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            # `from x import y` may import the module x.y
            found += [(f"{name}.{alias.name}", node.lineno, id(node) in top) for alias in node.names]
    return found


def _layer(module: str) -> int | None:
    first = module.split(".")[0]
    return LAYERS.index(first) if first in LAYERS else None


def course_layer_problems(root: Path = REPO) -> list[str]:
    problems = []
    for package in LAYERS:
        mine = LAYERS.index(package)
        for path in _python_files(package, root):
            where = path.relative_to(root).as_posix()
            for name, line, _ in imports(path, root):
                if (_layer(name) or 0) > mine:
                    problems.append(f"{where}:{line}: imports {name.rsplit('.', 1)[0]}, a layer above {package}/")
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and MODULE_NAME.match(node.value) \
                        and (_layer(node.value) or 0) > mine:
                    problems.append(f"{where}:{node.lineno}: names {node.value!r}, a module a layer above "
                                    f"{package}/, by string")
            problems = list(dict.fromkeys(problems))   # `from x import a, b`: one line
    for name in SANDBOX_MODULES:
        path = root / "autograder" / name
        for imported, line, _ in imports(path, root):
            if imported.split(".")[0] in ("coursebase", "course"):
                problems.append(f"autograder/{name}:{line}: runs in the sandbox, where {imported.split('.')[0]}/ "
                                "is not mounted")
    return problems


def cycles(package: str, root: Path = REPO) -> list[list[str]]:
    """The import cycles among ``package``'s own modules (deferred imports included)."""
    modules = {_module(p, root): p for p in _python_files(package, root)}
    edges = {name: sorted({m for imported, _, _ in imports(path, root) for m in (imported, imported.rpartition(".")[0])
                           if m in modules and m != name and m != package})
             for name, path in modules.items()}
    found, state = [], {}

    def visit(node, trail):
        state[node] = "open"
        for nxt in edges[node]:
            if state.get(nxt) == "open":
                found.append(trail[trail.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, trail + [nxt])
        state[node] = "done"

    for name in sorted(modules):
        if name not in state:
            visit(name, [name])
    return found


def root_definitions(root: Path = REPO) -> list[str]:
    """Files outside RUN_BY_PATH that find the repository's root from their own place."""
    found = []
    for folder in (*LAYERS, "tests", "bench"):
        for path in _python_files(folder, root):
            where = path.relative_to(root).as_posix()
            if where not in RUN_BY_PATH | {"tests/test_module_map.py"} \
                    and ROOT_SPELLINGS.search(path.read_text(encoding="utf-8")):   # (this file: the examples)
                found.append(where)
    return found


def _is_module(name: str, root: Path) -> bool:
    path = root.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def missing_modules(root: Path = REPO) -> list[str]:
    """Imports of coursebase/, autograder/ or course/ (in them, tests/ and bench/) that name no
    module: ``import a.b`` needs the module a.b, ``from a.b import c`` the module a.b (c may be
    a module or a name in it)."""
    found = []
    for folder in (*LAYERS, "tests", "bench"):
        for path in _python_files(folder, root):
            where = path.relative_to(root).as_posix()
            package = _module(path, root) if path.name == "__init__.py" else _module(path, root).rpartition(".")[0]
            try:
                tree = ast.parse(path.read_text(encoding="utf-8"))
            except SyntaxError:   # a student's cells kept as a fixture (IPython magics), not our code
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom):
                    if node.level:
                        base = package.split(".")[:len(package.split(".")) - node.level + 1]
                        names = [".".join(base + ([node.module] if node.module else []))]
                    else:
                        names = [node.module or ""]
                else:
                    continue
                found += [f"{where}:{node.lineno}: imports {name}, which is no module"
                          for name in names if _layer(name) is not None and not _is_module(name, root)]
    return found


def test_imports_name_modules_that_exist():
    assert missing_modules() == []


def test_an_old_spelling_is_caught(tmp_path):
    """The rule can fail: the spellings from before coursebase/, in a package, a test and a bench."""
    for folder in (*LAYERS, "tests", "bench"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "coursebase" / "paths.py").write_text("REPO = None\n")
    (tmp_path / "coursebase" / "model.py").write_text("from .paths import REPO\nfrom .markers import x\n")
    (tmp_path / "tests" / "test_a.py").write_text("from coursebase.paths import REPO\nfrom course.model import REPO\n")
    (tmp_path / "bench" / "b.py").write_text("import coursebase.paths\nimport course.markers\n")
    assert missing_modules(tmp_path) == ["coursebase/model.py:2: imports coursebase.markers, which is no module",
                                         "tests/test_a.py:2: imports course.model, which is no module",
                                         "bench/b.py:2: imports course.markers, which is no module"]


def test_imports_go_down_the_layers():
    assert course_layer_problems() == []


def test_the_base_has_no_import_cycle():
    assert cycles("coursebase") == []


def test_a_wrong_way_import_is_caught(tmp_path):
    """The rules can fail: a copy of the packages with an import turned around at a module's
    top, one inside a function, one by string, one in a sandbox module, and a cycle in the base."""
    for folder in LAYERS:
        for path in _python_files(folder):
            target = tmp_path / path.relative_to(REPO)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(path.read_text(encoding="utf-8"))
    roster = tmp_path / "coursebase" / "roster.py"
    roster.write_text("from autograder.results import read_results\n" + roster.read_text())
    results = tmp_path / "autograder" / "results.py"
    results.write_text(results.read_text() + "\n\ndef _late():\n    from course.grading import Refused\n"
                       "    return importlib.import_module('course.release')\n")
    zygote = tmp_path / "autograder" / "zygote.py"
    zygote.write_text(zygote.read_text() + "\n\ndef _late():\n    from coursebase.paths import REPO\n")
    model = tmp_path / "coursebase" / "model.py"
    model.write_text(model.read_text() + "\n\ndef _markers():\n    from .markers import course_markers\n")
    lines = len(results.read_text().splitlines())
    assert course_layer_problems(tmp_path) == [
        "coursebase/roster.py:1: imports autograder.results, a layer above coursebase/",
        f"autograder/results.py:{lines - 1}: imports course.grading, a layer above autograder/",
        f"autograder/results.py:{lines}: names 'course.release', a module a layer above autograder/, by string",
        f"autograder/zygote.py:{len(zygote.read_text().splitlines())}: runs in the sandbox, where coursebase/ is "
        "not mounted"]
    assert ["coursebase.markers", "coursebase.model", "coursebase.markers"] in cycles("coursebase", tmp_path)


def test_the_commands_are_declared_once():
    from course import cli

    assert all(isinstance(module, types.ModuleType) for module in cli.COMMANDS)
    declared = {module.__name__ for module in cli.COMMANDS}
    registering = set()
    for path in _python_files("course"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if path.relative_to(REPO).parts[:2] != ("course", "kit") and any(
                isinstance(node, ast.FunctionDef) and node.name == "register" for node in tree.body):
            registering.add(_module(path, REPO))
    # course.site registers through its package (course/site/__init__.py re-exports build's)
    assert registering - {"course.site.build"} == declared - {"course.site"}
    kit = ast.parse((REPO / "course" / "kit" / "cli.py").read_text())
    kit_commands = next(node.value for node in kit.body if isinstance(node, ast.Assign)
                        and getattr(node.targets[0], "id", "") == "COMMANDS")
    assert {f"course.{element.id}" for element in kit_commands.elts} <= declared
    assert "importlib" not in (REPO / "course" / "cli.py").read_text()


def test_the_repository_root_is_defined_once():
    assert root_definitions() == ["coursebase/paths.py"]


def test_a_second_root_is_caught(tmp_path):
    """The rule can fail: the spellings a file might use to find the root from its own place."""
    for folder in (*LAYERS, "tests", "bench"):
        (tmp_path / folder).mkdir()
    (tmp_path / "coursebase" / "paths.py").write_text("REPO = Path(__file__).resolve().parent.parent\n")
    (tmp_path / "tests" / "test_a.py").write_text("ROOT = Path(__file__).parents[1]\n")
    (tmp_path / "bench" / "b.py").write_text("root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))\n")
    (tmp_path / "course" / "c.py").write_text("HERE = Path(__file__).parent  # its own folder: fine\n")
    assert root_definitions(tmp_path) == ["coursebase/paths.py", "tests/test_a.py", "bench/b.py"]


# -- reftorch's layers ---------------------------------------------------------------------------
# Each module imports (at its top) only modules of its own layer or of the layers below. The
# Tensor's methods are attached from the functions layer, not imported by tensor.py.
REFTORCH_LAYERS = (
    # 0: memory, dtypes, kernels and the dispatcher's table, torch's CPU arithmetic they follow
    # (_cpu_float, _cpu_sum, _parallel); the global modes; the default device and what a
    # CPU-only torch reports (backends, accelerator)
    ("storage", "dtypes", "dispatch", "kernels", "_cpu_float", "_cpu_sum", "_parallel", "sim", "meta", "_modes", "_formatting", "cuda",
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
    ("nn", "optim", "random", "distributions", "special", "linalg", "amp", "fx", "fusion", "viz", "utils", "serialization",
     "return_types"),
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


def reftorch_layer_problems(root: Path = REPO) -> tuple[list[str], list[str]]:
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
    upward, deferred = reftorch_layer_problems()
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
    upward, deferred = reftorch_layer_problems(tmp_path)
    assert upward == [f"{PACKAGE}/tensor.py:{len(tensor.read_text().splitlines()) - 4}: tensor (layer 1) imports "
                      "functions.views (layer 3)"]
    assert [d for d in deferred if "#" not in d] == [f"{PACKAGE}/tensor.py:{len(tensor.read_text().splitlines())}: "
                                                     "from .nn import Linear"]
