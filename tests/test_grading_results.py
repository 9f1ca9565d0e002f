"""One record of a grade: what a student's feedback page shows is the gradebook's score.

An instructor who corrects a grade in Formgrader (a manual score on an autograded cell)
changes the gradebook; `course feedback`, `course export` and `course report` must all show
that score, not the one `course grade` first wrote beside the submission. A tiny assignment
is recorded in a real nbgrader gradebook here, one submission's grades are committed the way
`course grade` commits them, and the manual grade is entered with nbgrader's own API, as
Formgrader does.
"""
from __future__ import annotations

import csv
import re
import shutil

import nbformat
import pytest

from attacks import inject

pytestmark = pytest.mark.database   # release, grade: an nbgrader gradebook

ASSIGNMENT = "00_results"
ANSWER = '''def double(x):
    ### BEGIN SOLUTION
    return 2 * x
    ### END SOLUTION'''
TEST = '''@probe(torch=False)
def _double(x):
    return answer("double")(x)

check("double(2)", _double, 2, expect=4)'''


def _cell(source, grade_id, **flags):
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = {"grade_id": grade_id, "schema_version": 3, "task": False,
                                 "solution": False, "grade": False, "locked": True, **flags}
    return cell


@pytest.fixture
def graded(tmp_path):
    """A course whose one submission `course grade` recorded as 1 of 4 points."""
    from autograder import autograded_notebook
    from autograder.grade import Grader
    from autograder.judge import TestResult
    from autograder.results import GradebookWriter, SubmissionRow
    from course.model import Course
    from course.nbgrader_course import generate_release

    root = tmp_path / "course"
    source = nbformat.read(str(inject.REPO / "solutions" / "02_devices" / "02_devices.ipynb"), as_version=4)
    tools = next(c for c in source.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "grading_tools")
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    notebook.cells = [_cell(tools.source, "grading_tools"), _cell(ANSWER, "double", solution=True, locked=False),
                      _cell(TEST, "test_one", grade=True, points=1), _cell(TEST, "test_three", grade=True, points=3)]
    (root / "solutions" / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(notebook, str(root / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"))
    (root / "course").mkdir()
    shutil.copy(inject.REPO / "course" / "nbgrader_config.py", root / "course" / "nbgrader_config.py")
    generate_release([ASSIGNMENT], root)
    inject.submit(root, ASSIGNMENT, "ada", inject.released(root, ASSIGNMENT))

    course = Course.load(root)
    grader = Grader(course, ASSIGNMENT)
    row = SubmissionRow("ada", 1.0, 4.0, "ok", "ok", [
        TestResult("test_one", 1.0, 1.0, True, "ok"),
        TestResult("test_three", 0.0, 3.0, False, "double(2): expected 4, got 5", "Compare your result")])
    row.autograded, _ = autograded_notebook.build(grader.spec, inject.released(root, ASSIGNMENT))
    writer = GradebookWriter(course, ASSIGNMENT, grader.spec)
    try:
        writer.commit(row)
    finally:
        writer.close()
    return course


def _enter_manual_grade(course, cell: str, points: float) -> None:
    """What Formgrader does when the instructor types a score into a graded cell."""
    from nbgrader.api import Gradebook

    with Gradebook(course.db_url, course.course_id) as gradebook:
        gradebook.find_grade(cell, ASSIGNMENT, ASSIGNMENT, "ada").manual_score = points
        gradebook.db.commit()


def test_a_manual_grade_reaches_the_feedback_page_export_and_report(graded):
    from autograder.export import export_csv
    from autograder.feedback import write_feedback
    from autograder.report import write_report

    [page] = write_feedback(graded, ASSIGNMENT, release=False)
    assert "1 / 4 points" in page.read_text()

    _enter_manual_grade(graded, "test_three", 2.0)   # the instructor gives 2 of 3 for the attempt
    [page] = write_feedback(graded, ASSIGNMENT, release=False)
    text = page.read_text()
    assert "3 / 4 points" in text, text
    row = re.search(r"<tr><td>test_three</td>.*?</tr>", text, re.S).group(0)
    assert "2 / 3" in row and "expected 4, got 5" in row   # the score of record, the grader's message
    exported = next(csv.DictReader(export_csv(graded, ASSIGNMENT).open()))
    assert (exported["student"], exported["score"]) == ("ada", "3")
    write_report(graded, ASSIGNMENT)
    questions = next(csv.DictReader((graded.reports_root() / ASSIGNMENT / "questions.csv").open()))
    assert (questions["test_three"], questions["score"]) == ("2", "3")
