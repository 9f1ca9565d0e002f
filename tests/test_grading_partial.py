"""Partial credit inside a test cell: `check(..., partial=True)` and `credit(points)`.

A tiny assignment built here (so the test does not depend on any one course notebook) with a
prediction cell of three items: the sandboxed grader and the student's own Validate both give
a submission with two right answers two thirds of the points, and nothing more.
"""
from __future__ import annotations

import io
import json
import shutil

import nbformat
import pytest

from attacks import inject

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("grading_partial")]

ASSIGNMENT = "00_partial"
PREDICTION = '''predictions = {
    ### BEGIN SOLUTION
    "a": 1, "b": 2, "c": 3,
    ### END SOLUTION
}'''
TEST = '''@probe(torch=False)
def _predicted(key):
    return answer("predictions").get(key)

for _key, _value in {"a": 1, "b": 2, "c": 3}.items():
    check(f"prediction {_key}", _predicted, _key, expect=_value, partial=True)
credit(3)'''
WHOLE = '''@probe(torch=False)
def _all(keys):
    return [answer("predictions").get(key) for key in keys]

check("all predictions", _all, ["a", "b", "c"], expect=[1, 2, 3])'''


def _cell(source, grade_id, **flags):
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = {"grade_id": grade_id, "schema_version": 3, "task": False,
                                 "solution": False, "grade": False, "locked": True, **flags}
    return cell


def _tools_cell():
    source = nbformat.read(str(inject.REPO / "solutions" / "02_devices" / "02_devices.ipynb"), as_version=4)
    tools = next(c for c in source.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "grading_tools")
    return _cell(tools.source, "grading_tools")


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    from course.nbgrader_course import generate_release

    root = tmp_path_factory.mktemp("partial") / "course"
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python",
                                       "name": "python3"}
    notebook.cells = [
        nbformat.v4.new_markdown_cell("# Partial credit"),
        _tools_cell(),
        _cell(PREDICTION, "predictions", solution=True, locked=False),
        _cell(TEST, "test_predictions", grade=True, points=3),
        _cell(WHOLE, "test_whole", grade=True, points=1),
    ]
    (root / "solutions" / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(notebook, str(root / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"))
    (root / "course").mkdir()
    shutil.copy(inject.REPO / "course" / "nbgrader_config.py", root / "course" / "nbgrader_config.py")
    generate_release([ASSIGNMENT], root)
    return root


def _submission(root, answers: str):
    notebook = inject.released(root, ASSIGNMENT)
    cell = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "predictions")
    cell.source = f"predictions = {answers}"
    return notebook


def test_grader_gives_each_right_item_its_share(course):
    from coursebase.model import Course
    from autograder.grade import Grader

    for student, answers in (("two_right", '{"a": 1, "b": 2, "c": 0}'), ("all_right", '{"a": 1, "b": 2, "c": 3}'),
                             ("none_right", '{"a": 0}'), ("blank", None)):
        notebook = inject.released(course, ASSIGNMENT) if answers is None else _submission(course, answers)
        inject.submit(course, ASSIGNMENT, student, notebook)
    rows = {row.student: row for row in Grader(Course.load(course), ASSIGNMENT, workers=2).run()}
    tests = {s: {t.grade_id: t for t in rows[s].tests} for s in rows}
    assert tests["two_right"]["test_predictions"].points == 2.0
    assert tests["two_right"]["test_predictions"].message.startswith("2 of 3 right; prediction c: expected 3, got 0")
    assert tests["two_right"]["test_whole"].points == 0          # without partial=True: all or nothing
    assert rows["two_right"].score == 2.0
    assert rows["all_right"].score == 4.0
    assert rows["none_right"].score == 0.0 and rows["blank"].score == 0.0


def test_validate_shows_the_same_partial_score(course, tmp_path):
    from course.self_check import validate_notebook

    path = tmp_path / f"{ASSIGNMENT}.ipynb"
    nbformat.write(_submission(course, '{"a": 1, "b": 2, "c": 0}'), str(path))
    out = io.StringIO()
    assert validate_notebook(path, out=out) == 1
    report = out.getvalue()
    assert "test_predictions  2/3" in report, report
    assert "2 of 2 tests" not in report and "2 of 4 points" in report, report


def test_partial_cells_end_with_credit_of_their_own_points(course):
    from course.release_audit import credit_problems

    notebook = nbformat.read(str(course / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"), as_version=4)
    assert credit_problems(notebook) == []
    cell = next(c for c in notebook["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "test_predictions")
    cell["source"] = cell["source"].replace("credit(3)", "credit(2)")
    assert credit_problems(notebook) == ["test_predictions: a partial-credit cell must end with credit(3), "
                                         "its points"]
    cell["source"] = cell["source"].replace("credit(2)", "")
    assert credit_problems(notebook)

