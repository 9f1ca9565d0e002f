"""The results of grading: the one reader and writer of the gradebook's scores and the grader's state files.

Two records, each with its own job:

- nbgrader's gradebook (SQLite or PostgreSQL) holds the scores: each graded cell's
  ``auto_score``, written here by `course grade`, and any manual score an instructor enters
  in Formgrader, which nbgrader counts instead. It is the score of record: the feedback
  pages, `course export` and `course report` show it (:func:`read_results`).
- A state file beside each autograded submission (``autograded/<student>/<a>/grading.json``)
  holds what the gradebook has no place for: how the run ended, each test's message and
  hint, and the digest of what was graded, so that a re-run skips an unchanged submission.

Only the coordinating thread writes. Each submission is one transaction: the student and the
submission rows are created if missing (``update_or_create_*``, so re-running never
duplicates them), then every autograded cell's ``auto_score`` is set; manual grades and
comments are left alone. The state file is written only after that commit.
"""
from __future__ import annotations

import json
import os
import time
import warnings
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime
from pathlib import Path

from course.model import Course

from .judge import TestResult
from .plan import AssignmentSpec

from .notebook_runs import STATE_FILE  # noqa: E402 - defined where the runs leave it out of a job


@dataclass
class SubmissionRow:
    """What `course grade` decided for one submission."""
    student: str
    score: float
    max_score: float
    status: str
    message: str
    tests: list[TestResult]
    digest: str = ""
    final: bool = True
    # Why this result may be the grader's trouble rather than the notebook's (sandbox died or
    # could not be prepared, grader exception, gradebook write failed); "" when it is not.
    # Such a result is tried once more on a fresh sandbox, and is never final: the next
    # `course grade` grades it again.
    grader_fault: str = ""
    # The notebook formgrader will show, built in the worker; not part of the saved state.
    autograded: object = field(default=None, repr=False, compare=False, metadata={"state": False})


@dataclass
class GradedSubmission:
    """One submission as students and exports see it: the gradebook's scores (manual grades
    included, before any late penalty) with the grader's status, messages and hints."""
    student: str
    score: float
    max_score: float
    tests: list[TestResult]   # points from the gradebook, messages from the grader
    status: str
    message: str
    graded: bool              # `course grade` graded it (else only the gradebook knows it)
    timestamp: datetime | None = None
    first_name: str = ""
    last_name: str = ""
    email: str = ""
    lms_id: str = ""


# -- the state files --------------------------------------------------------------------------

def state_path(course: Course, assignment: str, student: str) -> Path:
    return course.autograded_root / student / assignment / STATE_FILE


def save_row(course: Course, assignment: str, row: SubmissionRow) -> None:
    path = state_path(course, assignment, row.student)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {f.name: getattr(row, f.name) for f in fields(row) if f.metadata.get("state", True)}
    state["tests"] = [asdict(test) for test in row.tests]
    temporary = path.with_name(STATE_FILE + ".tmp")
    temporary.write_text(json.dumps(state, indent=1))
    os.replace(temporary, path)


def load_row(course: Course, assignment: str, student: str) -> SubmissionRow:
    saved = json.loads(state_path(course, assignment, student).read_text())
    return SubmissionRow(**{**saved, "tests": [TestResult(**test) for test in saved["tests"]]})


def graded_students(course: Course, assignment: str) -> list[str]:
    """Students whose submission `course grade` recorded, in order."""
    return sorted(path.parent.parent.name for path in course.autograded_root.glob(f"*/{assignment}/{STATE_FILE}"))


def final_digest(course: Course, assignment: str, student: str) -> str | None:
    """The digest of what was graded, when that result is final (None: grade it again)."""
    try:
        saved = json.loads(state_path(course, assignment, student).read_text())
    except (OSError, ValueError):
        return None
    return saved.get("digest") if isinstance(saved, dict) and saved.get("final", True) else None


def graded_score(course: Course, assignment: str, student: str) -> str:
    """"graded 17/17" when `course grade` recorded this student's submission, else ""."""
    try:
        saved = json.loads(state_path(course, assignment, student).read_text())
        return f"graded {saved['score']:g}/{saved['max_score']:g}"
    except (OSError, ValueError, KeyError, TypeError):
        return ""


# -- the gradebook ----------------------------------------------------------------------------

def open_gradebook(course: Course):
    """nbgrader's Gradebook of ``course`` (imported here: seconds, while sandboxes start)."""
    from nbgrader.api import Gradebook

    course.put_scripts_on_path()
    return Gradebook(course.db_url, course.course_id)


class GradebookWriter:
    """Writes grades through nbgrader's own API, one transaction per submission."""

    def __init__(self, course: Course, assignment: str, spec: AssignmentSpec):
        from nbgrader.api import MissingEntry

        self.course, self.assignment, self.spec = course, assignment, spec
        self.gradebook = open_gradebook(course)
        try:
            self.gradebook.find_notebook(spec.notebook, assignment)
        except MissingEntry:
            self.gradebook.close()
            raise RuntimeError(
                f"assignment {assignment!r} (notebook {spec.notebook!r}) is not in the gradebook "
                f"{course.db_url}: run `course release {assignment}` first") from None

    def commit(self, row: SubmissionRow) -> None:
        """One submission's grades into the gradebook (one transaction), then its state file.
        A write that fails marks the row not final (and writes no state file): a re-run retries."""
        try:
            if row.autograded is not None:  # None: a grader error, nothing to record
                self.record(row, row.autograded)
        except Exception as error:  # noqa: BLE001 - reported; no state file, so a re-run retries
            row.status = row.message = f"gradebook write failed: {type(error).__name__}: {error}"[:300]
            row.grader_fault, row.final = row.status, False
        else:
            # Trouble that may be the grader's own is recorded but tried again next run.
            row.final = not row.grader_fault
            save_row(self.course, self.assignment, row)

    def record(self, row: SubmissionRow, notebook, attempts: int = 20) -> None:
        """Write one submission's grades, then the autograded ``notebook`` that formgrader
        shows (built beforehand, so nothing about the submission can fail after the commit).
        A locked SQLite file (formgrader open) is retried."""
        import nbformat
        from sqlalchemy.exc import OperationalError

        for attempt in range(attempts):
            try:
                with warnings.catch_warnings():
                    # nbgrader's add_submission trips SQLAlchemy autoflush warnings; harmless.
                    warnings.simplefilter("ignore")
                    self._record(row)
                break
            except OperationalError as error:
                if "locked" not in str(error) or attempt == attempts - 1:
                    raise
                time.sleep(0.1 * (attempt + 1))
        target = self.course.autograded_root / row.student / self.assignment / f"{self.spec.notebook}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, str(target))

    def has_submission(self, student: str) -> bool:
        from nbgrader.api import MissingEntry

        try:
            self.gradebook.find_submission(self.assignment, student)
        except MissingEntry:
            return False
        return True

    def _record(self, row: SubmissionRow) -> None:
        from nbgrader.api import MissingEntry

        gradebook = self.gradebook
        try:
            gradebook.update_or_create_student(row.student)
            timestamp = self._timestamp(row.student)
            if timestamp:
                gradebook.update_or_create_submission(self.assignment, row.student, timestamp=timestamp)
            else:
                gradebook.update_or_create_submission(self.assignment, row.student)
            for test in row.tests:
                try:
                    grade = gradebook.find_grade(test.grade_id, self.spec.notebook, self.assignment, row.student)
                except MissingEntry:
                    continue  # a cell the gradebook does not know: nothing to record
                grade.auto_score = float(test.points)
                grade.needs_manual_grade = False
            autograded = {test.grade_id for test in row.tests}
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
        from nbgrader.utils import parse_utc

        path = self.course.submitted_root / student / self.assignment / "timestamp.txt"
        try:
            text = path.read_text()[:100].strip()
            return parse_utc(text) if text else None
        except (OSError, ValueError, TypeError, OverflowError):
            return None  # an unreadable timestamp must not block the grade

    def close(self) -> None:
        self.gradebook.close()


def read_results(course: Course, assignment: str) -> list[GradedSubmission]:
    """Every submission the gradebook holds, by student: its scores there (a manual grade
    from Formgrader counts instead of the grader's), with the grader's status and messages
    where `course grade` graded it, and the student's names from the gradebook."""
    from nbgrader.api import MissingEntry

    results = []
    with open_gradebook(course) as gradebook:
        try:
            submissions = gradebook.assignment_submissions(assignment)
        except MissingEntry:
            submissions = []
        for submission in sorted(submissions, key=lambda s: s.student_id):
            scores = {grade.name: (float(grade.score), float(grade.max_score))
                      for notebook in submission.notebooks for grade in notebook.grades}
            student = submission.student
            graded = state_path(course, assignment, submission.student_id).is_file()
            if graded:
                row = load_row(course, assignment, submission.student_id)
                status, message, tests = row.status, row.message, row.tests
            else:
                status, message, tests = "not graded", "not graded by `course grade`", []
            # A test cell the gradebook has no grade for (the writer skips those) keeps the grader's points.
            tests = [TestResult(test.grade_id, *scores.get(test.grade_id, (test.points, test.max_points)),
                                test.passed, test.message, test.hint, test.hidden) for test in tests]
            results.append(GradedSubmission(
                submission.student_id, float(submission.score), float(submission.max_score), tests, status,
                message, graded, submission.timestamp, student.first_name or "", student.last_name or "",
                student.email or "", student.lms_user_id or ""))
    return results
