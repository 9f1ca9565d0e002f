"""The results of grading: the one writer of grades, and their one reader.

Two records, each with its own job:

- nbgrader's gradebook (SQLite or PostgreSQL) holds the scores: each graded cell's
  ``auto_score`` and each submission's late penalty, written here by `course grade` when it
  makes the grade, and any manual score an instructor enters in Formgrader, which nbgrader
  counts instead. It is the score of record: the feedback pages, `course export` and
  `course report` read it (:func:`read_results`) and write nothing to it.
- A state file beside each autograded submission (``autograded/<student>/<a>/grading.json``)
  holds what the gradebook has no place for, and no score: how the run ended, each test's
  verdict, message and hint, and the digest of what was graded, so that a re-run skips an
  unchanged submission.

Only the coordinating thread writes. Each submission is one transaction: the student and the
submission rows are created if missing (``update_or_create_*``, so re-running never
duplicates them), every autograded cell's ``auto_score`` is set and the late penalty is
decided (nbgrader's plugin, autograder/late.py) from the scores just written; manual grades
and comments are left alone. The state file is written only after that commit. When a batch
opens the gradebook, the configured due date is written and every submission's penalty is
decided again (a changed due date, an extension or a manual grade counts from the next
`course grade`, which does not run unchanged work again).
"""
from __future__ import annotations

import json
import os
import time
import warnings
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from coursebase.model import Course

from .judge import TestResult
from .late import Lateness, configured_due, course_timezone, late_penalty, penalty_plugin, shown_time
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
    autograded: object = field(default=None, repr=False, compare=False)


@dataclass
class GradedSubmission:
    """One submission as students and exports see it: the gradebook's scores (manual grades
    included, before any late penalty) with the grader's status, messages and hints, and the
    late penalty `course grade` decided."""
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
    lateness: Lateness | None = None

    @property
    def final_score(self) -> float:
        """The score after the late penalty: what the student gets."""
        return self.lateness.score if self.lateness is not None else self.score


class StaleGrades(Exception):
    """The gradebook's late penalties were not decided under the course's configuration as it
    is now; the message says to run `course grade` (which makes them)."""


# -- the state files: no scores -----------------------------------------------------------

# What a state file keeps of a row and of each test: never points (the gradebook's alone).
STATE_FIELDS = ("student", "status", "message", "digest", "final", "grader_fault")
TEST_STATE_FIELDS = ("grade_id", "max_points", "passed", "message", "hint", "hidden")


def state_path(course: Course, assignment: str, student: str) -> Path:
    return course.autograded_root / student / assignment / STATE_FILE


def save_state(course: Course, assignment: str, row: SubmissionRow) -> None:
    path = state_path(course, assignment, row.student)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {name: getattr(row, name) for name in STATE_FIELDS}
    state["tests"] = [{name: asdict(test)[name] for name in TEST_STATE_FIELDS} for test in row.tests]
    temporary = path.with_name(STATE_FILE + ".tmp")
    temporary.write_text(json.dumps(state, indent=1))
    os.replace(temporary, path)


def load_state(course: Course, assignment: str, student: str) -> dict:
    """A state file as saved (OSError, ValueError when there is none or it is damaged)."""
    saved = json.loads(state_path(course, assignment, student).read_text())
    if not isinstance(saved, dict):
        raise ValueError(f"{state_path(course, assignment, student)}: not a grading state")
    return saved


def _tests(saved: dict, scores: dict[str, tuple[float, float]]) -> list[TestResult]:
    """The saved tests with their points from the gradebook (a cell it has no grade for, which
    the writer skips, has no score of record: 0)."""
    return [TestResult(test["grade_id"], *scores.get(test["grade_id"], (0.0, test.get("max_points", 0.0))),
                       test["passed"], test["message"], test.get("hint", ""), test.get("hidden", False))
            for test in saved.get("tests", [])]


def graded_students(course: Course, assignment: str) -> list[str]:
    """Students whose submission `course grade` recorded, in order."""
    return sorted(path.parent.parent.name for path in course.autograded_root.glob(f"*/{assignment}/{STATE_FILE}"))


def is_graded(course: Course, assignment: str, student: str) -> bool:
    return state_path(course, assignment, student).is_file()


def final_digest(course: Course, assignment: str, student: str) -> str | None:
    """The digest of what was graded, when that result is final (None: grade it again)."""
    try:
        saved = load_state(course, assignment, student)
    except (OSError, ValueError):
        return None
    return saved.get("digest") if saved.get("final", True) else None


# -- the gradebook ----------------------------------------------------------------------------

class GradebookWriter:
    """Writes grades through nbgrader's own API, one transaction per submission; the one
    writer of scores and late penalties."""

    def __init__(self, course: Course, assignment: str, spec: AssignmentSpec):
        from nbgrader.api import MissingEntry

        self.course, self.assignment, self.spec = course, assignment, spec
        self.plugin = penalty_plugin(course, assignment)   # a DeadlineError before anything is written
        self.due = configured_due(course, assignment)
        self.gradebook = course.open_gradebook()
        try:
            self.gradebook.find_notebook(spec.notebook, assignment)
            self._decide_all_penalties()
        except MissingEntry:
            self.gradebook.close()
            raise RuntimeError(
                f"assignment {assignment!r} (notebook {spec.notebook!r}) is not in the gradebook "
                f"{course.db_url}: run `course release {assignment}` first") from None
        except BaseException:
            self.gradebook.close()
            raise

    # -- late penalties ----------------------------------------------------------------------

    def _decide_all_penalties(self) -> None:
        """The configured due date, and every submission's penalty from the gradebook's scores
        as they are now (a manual grade, an extension or a new due date counts from here)."""
        record = self.gradebook.find_assignment(self.assignment)
        try:
            if self.due is not None:
                record.duedate = self.due.astimezone(timezone.utc).replace(tzinfo=None)
            self.gradebook.db.flush()
            for submission in record.submissions:
                self._decide_penalty(submission)
            self.gradebook.db.commit()
        except Exception:
            self.gradebook.db.rollback()
            raise

    def _decide_penalty(self, submission) -> None:
        """Each notebook's penalty (nbgrader keeps one per notebook), from its score as written
        in this transaction: 0 when on time."""
        self.gradebook.db.expire(submission)   # total_seconds_late and scores are computed by the database
        seconds = submission.total_seconds_late
        for notebook in submission.notebooks:
            self.gradebook.db.expire(notebook)
            notebook.late_submission_penalty = late_penalty(self.plugin, submission.student_id, notebook.score, seconds)

    # -- one submission -----------------------------------------------------------------------

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
            save_state(self.course, self.assignment, row)

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

    def kept_row(self, student: str) -> SubmissionRow:
        """The row of a submission graded before and unchanged since: its state file, and its
        scores from the gradebook."""
        saved = load_state(self.course, self.assignment, student)
        submission = self.gradebook.find_submission(self.assignment, student)
        scores = {grade.name: (float(grade.score), float(grade.max_score))
                  for notebook in submission.notebooks for grade in notebook.grades}
        tests = _tests(saved, scores)
        return SubmissionRow(student, sum(t.points for t in tests), sum(t.max_points for t in tests),
                             saved["status"], saved["message"], tests, saved.get("digest", ""),
                             saved.get("final", True), saved.get("grader_fault", ""))

    def _record(self, row: SubmissionRow) -> None:
        from nbgrader.api import MissingEntry

        gradebook = self.gradebook
        try:
            gradebook.update_or_create_student(row.student)
            timestamp = self._timestamp(row.student)
            if timestamp:
                submission = gradebook.update_or_create_submission(self.assignment, row.student, timestamp=timestamp)
            else:
                submission = gradebook.update_or_create_submission(self.assignment, row.student)
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
            gradebook.db.flush()
            self._decide_penalty(submission)
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


# -- reading ---------------------------------------------------------------------------------

def read_results(course: Course, assignment: str) -> list[GradedSubmission]:
    """Every submission the gradebook holds, by student: its scores there (a manual grade
    from Formgrader counts instead of the grader's) and the late penalty `course grade`
    decided, with the grader's status and messages where `course grade` graded it, and the
    student's names from the gradebook. Reads only; StaleGrades when the penalties were not
    decided under the configuration as it is (a due date changed since, or grades made
    before `course grade` decided penalties)."""
    from nbgrader.api import MissingEntry

    due = configured_due(course, assignment)
    zone = course_timezone(course, assignment)
    plugin = penalty_plugin(course, assignment)
    rule = plugin.describe() if hasattr(plugin, "describe") else type(plugin).__name__
    results = []
    with course.open_gradebook() as gradebook:
        try:
            record = gradebook.find_assignment(assignment)
        except MissingEntry:
            return []
        if due is not None and record.duedate != due.astimezone(timezone.utc).replace(tzinfo=None):
            raise StaleGrades(
                f"the due date of {assignment} in the course's configuration is {shown_time(due, zone)}, but its "
                f"grades were made with {shown_time(record.duedate, zone) or 'none'}: run `course grade {assignment}` "
                "to decide the late penalties again (unchanged submissions are not run again)")
        for submission in sorted(record.submissions, key=lambda s: s.student_id):
            scores = {grade.name: (float(grade.score), float(grade.max_score))
                      for notebook in submission.notebooks for grade in notebook.grades}
            student = submission.student
            graded = is_graded(course, assignment, submission.student_id)
            if graded:
                saved = load_state(course, assignment, submission.student_id)
                status, message, tests = saved["status"], saved["message"], _tests(saved, scores)
            else:
                status, message, tests = "not graded", "not graded by `course grade`", []
            seconds = float(submission.total_seconds_late or 0.0)
            undecided = [n for n in submission.notebooks if n.late_submission_penalty is None]
            if graded and seconds > 0 and undecided:
                raise StaleGrades(
                    f"{submission.student_id}'s submission of {assignment} is late and has no late penalty in the "
                    f"gradebook (graded by an older version of the course): run `course grade {assignment}` to "
                    "decide it (unchanged submissions are not run again)")
            score = float(submission.score)
            penalty = min(score, float(submission.late_submission_penalty or 0.0))
            lateness = Lateness(submission.duedate, submission.timestamp, seconds, penalty, score,
                                max(0.0, score - penalty), rule, zone)
            results.append(GradedSubmission(
                submission.student_id, score, float(submission.max_score), tests, status,
                message, graded, submission.timestamp, student.first_name or "", student.last_name or "",
                student.email or "", student.lms_user_id or "", lateness))
    return results
