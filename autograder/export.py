"""`course export <a>`: the grades as CSV, for the course or for an LMS to import.

Each format is an nbgrader ``ExportPlugin`` (the plugin point of ``nbgrader export``):

- ``course`` (default): one row per graded submission: score after any late penalty,
  max_score, the grader's status and message, then raw score, penalty, due date, submission
  time, how late, and Canvas's own LATE mark where the download had one.
- ``canvas``: Canvas's gradebook import (Grades > Import): ``Student`` ("Last, First"),
  ``ID`` (Canvas user id: the roster's ``lms_id``), ``SIS User ID``, ``SIS Login ID`` (the
  roster id), ``Section``, then one column for the assignment. Canvas matches a row by any of
  its ids; name the column as the Canvas assignment is named (``--column "Autograd (1234)"``,
  as Canvas's own export writes it) to fill that assignment, or a new column is created.
- ``moodle``: Moodle's "Import grades from CSV file": ``Username``, ``Email address``,
  ``First name``, ``Last name``, the grade column and ``Feedback`` (every row's: the score,
  any late penalty and each test's points and message, as on the feedback page); at import,
  map ``Username`` (or ``Email address``) to the user, the grade column to the grade item and
  ``Feedback`` to its feedback.

Scores are the gradebook's (manual grades from Formgrader included) less the late penalty.
Times are shown in the course's time zone (``c.CourseDeadlines.timezone``). Every cell goes
through ``csvsafe`` (no cell is a live spreadsheet formula). An LMS export leaves out a
student the LMS could not match (Canvas: no ``lms_id`` on the roster), names them, and the
command exits 1: nothing is left out silently.
"""
from __future__ import annotations

from pathlib import Path

from nbgrader.plugins import ExportPlugin

from coursebase.model import Course
from coursebase.roster import roster_index

from .csvsafe import writer as csv_writer
from .results import graded_students, read_results

COLUMNS = ["student", "score", "max_score", "status", "message", "raw_score", "late_penalty",
           "due", "submitted", "late_by", "lms_late"]


class NothingGraded(Exception):
    """No graded submission of the assignment: nothing to export, report or send back."""


class ExportIncomplete(Exception):
    """The file was written, but some students are not in it; the message names them."""


def nothing_graded(assignment: str) -> NothingGraded:
    return NothingGraded(f"nothing graded for {assignment} yet: run `course collect {assignment}` "
                         f"and `course grade {assignment}` first")


def check_graded(course: Course, assignment: str) -> None:
    """NothingGraded unless `course grade` has graded at least one submission."""
    if not graded_students(course, assignment):
        raise nothing_graded(assignment)


def rows_for(course: Course, assignment: str) -> list[dict]:
    """One dict per submission in the gradebook: its score there (manual grades included)
    less the late penalty, status from the grader, names from the gradebook or the roster."""
    from .collect import load_records
    from .feedback import feedback_text
    from .late import shown_time

    records = load_records(course, assignment)
    roster = roster_index(course)  # names and LMS ids the gradebook may lack
    listed = roster.students if roster else {}
    rows = []
    for result in read_results(course, assignment):
        late = result.lateness
        known = listed.get(result.student)
        rows.append({
            "student": result.student, "score": result.final_score,
            "max_score": result.max_score, "status": result.status, "message": result.message,
            "raw_score": result.score, "late_penalty": late.penalty,
            "due": shown_time(late.due, late.zone), "submitted": shown_time(result.timestamp, late.zone),
            "late_by": late.late_by,
            "lms_late": "LATE" if records.get(result.student, {}).get("late") else "",
            "first_name": result.first_name or (known.first_name if known else ""),
            "last_name": result.last_name or (known.last_name if known else ""),
            "email": result.email or (known.email if known else ""),
            "lms_id": result.lms_id or (known.lms_id if known else ""),
            "feedback": feedback_text(result) if result.graded else ""})
    return rows


class CourseExport(ExportPlugin):
    """Subclasses set ``course`` and ``assignment_id`` before nbgrader-style ``export``."""
    course: Course
    assignment_id: str
    column = ""
    skips_ungraded = False

    def header(self) -> list[str]:
        return COLUMNS

    def line(self, row: dict) -> list:
        values = {**row, "score": f"{row['score']:g}", "max_score": f"{row['max_score']:g}",
                  "raw_score": f"{row['raw_score']:g}", "late_penalty": f"{row['late_penalty']:g}"}
        return [values[name] for name in COLUMNS]

    def unmatched(self, row: dict) -> str:
        """Why the LMS could not match this row to a student ("" when it can)."""
        return ""

    def export(self, gradebook=None) -> None:
        check_graded(self.course, self.assignment_id)
        rows = rows_for(self.course, self.assignment_id)
        if not any(r["status"] != "not graded" for r in rows):
            raise nothing_graded(self.assignment_id)
        if self.skips_ungraded:
            rows = [r for r in rows if r["status"] != "not graded"]
        left_out = {r["student"]: self.unmatched(r) for r in rows if self.unmatched(r)}
        rows = [r for r in rows if r["student"] not in left_out]
        path = Path(self.to)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv_writer(handle)
            writer.writerow(self.header())
            for row in rows:
                writer.writerow(self.line(row))
        if left_out:
            reasons = sorted(set(left_out.values()))
            raise ExportIncomplete(
                f"wrote {path} with {len(rows)} row(s), leaving out {len(left_out)} graded student(s) "
                f"({', '.join(sorted(left_out))}): {'; '.join(reasons)}")


class CanvasExport(CourseExport):
    skips_ungraded = True  # a blank cell would not clear a Canvas grade; leave the row out

    def header(self) -> list[str]:
        return ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", self.column or self.assignment_id]

    def unmatched(self, row: dict) -> str:
        if not row["lms_id"]:
            return ("no Canvas user id (the roster's lms_id) for them, and Canvas matches rows by it: add "
                    "lms_id to the roster (`course roster import` merges) and export again")
        return ""

    def line(self, row: dict) -> list:
        name = ", ".join(part for part in (row["last_name"], row["first_name"]) if part) or row["student"]
        return [name, row["lms_id"], "", row["student"], "", f"{row['score']:g}"]


class MoodleExport(CourseExport):
    skips_ungraded = True

    def header(self) -> list[str]:
        return ["Username", "Email address", "First name", "Last name", self.column or self.assignment_id,
                "Feedback"]

    def line(self, row: dict) -> list:
        return [row["student"], row["email"], row["first_name"], row["last_name"], f"{row['score']:g}",
                row["feedback"]]


FORMATS = {"course": CourseExport, "canvas": CanvasExport, "moodle": MoodleExport}


def export_csv(course: Course, assignment: str, output: str | None = None, form: str = "course",
               column: str = "") -> Path:
    default = "grades.csv" if form == "course" else f"grades-{form}.csv"
    path = Path(output) if output else course.reports_root / assignment / default
    exporter = FORMATS[form](to=str(path), assignment=[assignment])
    exporter.course, exporter.assignment_id, exporter.column = course, assignment, column
    exporter.export()
    return path
