"""`course export <a>`: one CSV row per submission, from the gradebook plus each run's status."""
from __future__ import annotations

import csv
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from .course import Course
from .grade import STATE_FILE, load_row

COLUMNS = ["student", "score", "max_score", "status", "message"]


def rows_for(course: Course, assignment: str) -> list[dict]:
    """Scores as the gradebook holds them (manual grades included), status from the grader."""
    rows = []
    with Gradebook(course.db_url, course.course_id) as gradebook:
        try:
            submissions = gradebook.assignment_submissions(assignment)
        except MissingEntry:
            submissions = []
        for submission in sorted(submissions, key=lambda s: s.student_id):
            state = course.autograded_root / submission.student_id / assignment / STATE_FILE
            if state.is_file():
                graded = load_row(course, assignment, submission.student_id)
                status, message = graded.status, graded.message
            else:
                status, message = "not graded", "not graded by `course grade`"
            rows.append({"student": submission.student_id, "score": submission.score,
                         "max_score": submission.max_score, "status": status, "message": message})
    return rows


def export_csv(course: Course, assignment: str, output: str | None = None) -> Path:
    path = Path(output) if output else course.reports_root() / assignment / "grades.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        for row in rows_for(course, assignment):
            writer.writerow({**row, "score": f"{row['score']:g}", "max_score": f"{row['max_score']:g}"})
    return path
