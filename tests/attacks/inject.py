"""Build a throw-away course from a released assignment and inject attacks into submissions.

Each attack in this folder is a code cell (``<name>.py``); its first line says where it
goes: ``after_tools`` (right after the locked grading-tools cell, before any answer),
``before_tools`` (right before it),
``middle`` (after the first half of the test cells), ``end``, or ``before_each_test`` (a copy
right before every test cell, so it takes effect whatever cell a test calls). Honest variants
also change one answer cell: ``into:<grade_id>`` (put at its top), ``replace:<grade_id>``,
``before:<grade_id>`` and ``after:<grade_id>`` (a new cell next to it).
"""
from __future__ import annotations

import copy
import re
import shutil
from pathlib import Path

import nbformat

from coursebase.paths import REPO
ATTACKS = Path(__file__).resolve().parent


def make_course(root: Path, assignment: str) -> Path:
    """A course rooted at ``root`` holding one assignment, released with nbgrader."""
    from course.nbgrader_course import generate_release

    for step in ("solutions", "assignments"):
        shutil.copytree(REPO / step / assignment, root / step / assignment)
    (root / "course").mkdir(parents=True)
    shutil.copy(REPO / "course" / "nbgrader_config.py", root / "course" / "nbgrader_config.py")
    generate_release([assignment], root)
    return root


def _grade_id(cell) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def _is_test(cell) -> bool:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return bool(meta.get("grade")) and not meta.get("solution")


def released(root: Path, assignment: str) -> nbformat.NotebookNode:
    return nbformat.read(str(root / "assignments" / assignment / f"{assignment}.ipynb"), as_version=4)


def answers(root: Path, assignment: str) -> dict[str, str]:
    source = nbformat.read(str(root / "solutions" / assignment / f"{assignment}.ipynb"), as_version=4)
    strip = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*\n", re.M)
    return {_grade_id(c): strip.sub("", c.source) for c in source.cells
            if c.get("metadata", {}).get("nbgrader", {}).get("solution")}


def honest(root: Path, assignment: str, keep: float = 1.0) -> nbformat.NotebookNode:
    """The release with the instructor's answers filled in (only the first ``keep`` share)."""
    notebook = released(root, assignment)
    solutions = answers(root, assignment)
    answer_ids = [_grade_id(c) for c in notebook.cells if _grade_id(c) in solutions]
    filled = set(answer_ids[: round(len(answer_ids) * keep)])
    for cell in notebook.cells:
        if _grade_id(cell) in filled:
            cell.source = solutions[_grade_id(cell)]
    return notebook


def blank(notebook: nbformat.NotebookNode, root: Path, assignment: str, *grade_ids: str) -> nbformat.NotebookNode:
    """The notebook with these answer cells back as the release has them (unanswered)."""
    notebook = copy.deepcopy(notebook)
    stubs = {_grade_id(c): c.source for c in released(root, assignment).cells if _grade_id(c) in grade_ids}
    for cell in notebook.cells:
        if _grade_id(cell) in stubs:
            cell.source = stubs[_grade_id(cell)]
    return notebook


def wrong(root: Path, assignment: str) -> nbformat.NotebookNode:
    """Half the answers right; the other half return wrong values instead of raising
    (stubs' ``raise NotImplementedError()`` become ``pass``): checks fail on values."""
    notebook = honest(root, assignment, keep=0.5)
    for cell in notebook.cells:
        if cell.cell_type == "code" and "raise NotImplementedError()" in cell.source:
            cell.source = cell.source.replace("raise NotImplementedError()", "pass")
    return notebook


def test_points(root: Path, assignment: str) -> list[tuple[str, float]]:
    notebook = released(root, assignment)
    return [(_grade_id(c), float(c.metadata.nbgrader.get("points", 0))) for c in notebook.cells if _is_test(c)]


def attack_source(name: str) -> tuple[str, str]:
    text = (ATTACKS / f"{name}.py").read_text()
    place = re.match(r"# place: ([\w:]+)", text).group(1)
    return text, place


def insert(notebook: nbformat.NotebookNode, source: str, place: str) -> nbformat.NotebookNode:
    notebook = copy.deepcopy(notebook)
    cells = notebook.cells
    if ":" in place:
        how, grade_id = place.split(":", 1)
        position = next(i for i, c in enumerate(cells) if _grade_id(c) == grade_id)
        if how == "into":
            cells[position].source = source + "\n" + cells[position].source
        elif how == "replace":
            cells[position].source = source
        else:
            cells.insert(position + (how == "after"), nbformat.v4.new_code_cell(source))
        return notebook
    if place == "before_each_test":
        for position in reversed([i for i, c in enumerate(cells) if _is_test(c)]):
            cells.insert(position, nbformat.v4.new_code_cell(source))
        return notebook
    if place in ("after_tools", "before_tools"):
        position = next(i for i, c in enumerate(cells) if _grade_id(c) == "grading_tools") + (place == "after_tools")
    elif place == "middle":
        tests = [i for i, c in enumerate(cells) if _is_test(c)]
        position = tests[(len(tests) - 1) // 2] + 1
    else:
        position = len(cells)
    cells.insert(position, nbformat.v4.new_code_cell(source))
    return notebook


def tests_before(notebook: nbformat.NotebookNode, marker: str) -> list[str]:
    """grade_ids of the test cells that come before the cell containing ``marker``."""
    found = []
    for cell in notebook.cells:
        if marker in cell.get("source", ""):
            return found
        if _is_test(cell):
            found.append(_grade_id(cell))
    return found


def submit(root: Path, assignment: str, student: str, notebook=None, raw: bytes | None = None,
           files: dict[str, bytes] | None = None) -> Path:
    folder = root / "var" / "submitted" / student / assignment
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{assignment}.ipynb"
    if raw is not None:
        path.write_bytes(raw)
    else:
        nbformat.write(notebook, str(path))
    for name, data in (files or {}).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    return path


def duplicated_tests(notebook):
    """Each test cell twice, both copies gutted to `pass` (metadata kept)."""
    notebook = copy.deepcopy(notebook)
    out = []
    for cell in notebook.cells:
        if _is_test(cell):
            cell.source = "pass"
            out += [cell, copy.deepcopy(cell)]
        else:
            out.append(cell)
    notebook.cells = out
    return notebook


def deleted_tests(notebook):
    notebook = copy.deepcopy(notebook)
    notebook.cells = [c for c in notebook.cells if not _is_test(c)]
    return notebook


def edited_tests(notebook):
    """Test cells replaced by `pass`, and their metadata claiming 1000 points each."""
    notebook = copy.deepcopy(notebook)
    for cell in notebook.cells:
        if _is_test(cell):
            cell.source = "pass"
            cell.metadata.nbgrader["points"] = 1000
    return notebook


def stripped_metadata_tests(notebook):
    """Test cells turned into ordinary cells (nbgrader metadata removed) and emptied."""
    notebook = copy.deepcopy(notebook)
    for cell in notebook.cells:
        if _is_test(cell):
            cell.source = "pass"
            cell.metadata = {}
    return notebook
