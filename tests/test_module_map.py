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
