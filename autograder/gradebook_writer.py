"""Grades into nbgrader's gradebook (SQLite or PostgreSQL), through nbgrader's own API.

Only the coordinating thread writes. Each submission is one transaction: the student and
the submission rows are created if missing (``update_or_create_*``, so re-running never
duplicates them), then every autograded cell's ``auto_score`` is set. Manual grades and
comments that an instructor entered in formgrader are left alone.
"""
from __future__ import annotations

import time
import warnings

import nbformat

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.utils import parse_utc
from sqlalchemy.exc import OperationalError

from .course import Course
from .plan import AssignmentSpec


class GradebookWriter:
    def __init__(self, course: Course, assignment: str, spec: AssignmentSpec):
        self.course, self.assignment, self.spec = course, assignment, spec
        self.gradebook = Gradebook(course.db_url, course.course_id)
        try:
            self.gradebook.find_notebook(spec.notebook, assignment)
        except MissingEntry:
            self.gradebook.close()
            raise RuntimeError(
                f"assignment {assignment!r} (notebook {spec.notebook!r}) is not in the gradebook "
                f"{course.db_url}: run `course release {assignment}` first") from None

    def record(self, row, notebook, attempts: int = 20) -> None:
        """Write one submission's grades, then the autograded ``notebook`` that formgrader
        shows (built beforehand, so nothing about the submission can fail after the commit).
        A locked SQLite file (formgrader open) is retried."""
        for attempt in range(attempts):
            try:
                with warnings.catch_warnings():
                    # nbgrader's add_submission trips SQLAlchemy autoflush warnings; harmless.
                    warnings.simplefilter("ignore")
                    self._record(self.gradebook, row)
                break
            except OperationalError as error:
                if "locked" not in str(error) or attempt == attempts - 1:
                    raise
                time.sleep(0.1 * (attempt + 1))
        target = self.course.autograded_root / row.student / self.assignment / f"{self.spec.notebook}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, str(target))

    def has_submission(self, student: str) -> bool:
        try:
            self.gradebook.find_submission(self.assignment, student)
        except MissingEntry:
            return False
        return True

    def _record(self, gradebook, row) -> None:
        try:
            gradebook.update_or_create_student(row.student)
            timestamp = self._timestamp(row.student)
            if timestamp:
                gradebook.update_or_create_submission(self.assignment, row.student, timestamp=timestamp)
            else:
                gradebook.update_or_create_submission(self.assignment, row.student)
            for test in row.tests:
                try:
                    grade = gradebook.find_grade(test["grade_id"], self.spec.notebook, self.assignment, row.student)
                except MissingEntry:
                    continue  # a cell the gradebook does not know: nothing to record
                grade.auto_score = float(test["points"])
                grade.needs_manual_grade = False
            autograded = {test["grade_id"] for test in row.tests}
            notebook = gradebook.find_submission_notebook(self.spec.notebook, self.assignment, row.student)
            for grade in notebook.grades:
                # Written answers and other manually graded cells: flag them for formgrader.
                if grade.name not in autograded and grade.manual_score is None:
                    grade.needs_manual_grade = True
            gradebook.db.commit()
        except Exception:
            gradebook.db.rollback()
            raise

    def _timestamp(self, student: str):
        path = self.course.submitted_root / student / self.assignment / "timestamp.txt"
        try:
            text = path.read_text()[:100].strip()
            return parse_utc(text) if text else None
        except (OSError, ValueError, TypeError, OverflowError):
            return None  # an unreadable timestamp must not block the grade

    def close(self) -> None:
        self.gradebook.close()
