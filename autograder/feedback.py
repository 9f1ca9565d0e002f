"""`course feedback <a>`: one HTML page per submission: points, message and hint per test.

Built from the results (autograder/results.py: the gradebook's scores, so a manual grade
from Formgrader shows, with the grader's messages), never from the notebook: hidden test
source cannot appear, not even in a traceback, because no test source or traceback is ever
copied in. The page is a Jinja2 template (templates/feedback.html.j2) with autoescape on.
The pages go where nbgrader keeps feedback (``feedback/<student>/<a>/<nb>.html``) and,
when the submission came through the exchange, are released there with nbgrader's own
``ExchangeReleaseFeedback`` so students can fetch them from JupyterLab.

Back through the LMS (``course feedback <a> --lms canvas|moodle``), the same pages are also
bundled the way each LMS takes files back, named from the LMS's own name for each student's
upload as `course collect` recorded it (``var/collected/<a>/records.json``):

- Moodle, "Upload multiple feedback files in a zip" (``assignfeedback_file``'s importer: a
  path part ``<name>_<participant id>_<plugin type>_<plugin>[_...]`` names the participant):
  ``moodle-feedback.zip`` holds ``<Full Name>_<participant id>_assignsubmission_file/<a>-feedback.html``
  per student, the download's own folder names; and ``moodle-grading-worksheet.csv`` is the
  assignment's offline grading worksheet (``assignfeedback_offline``: ``Identifier``
  "Participant <id>", ``Grade``, ``Last modified (grade)`` and ``Feedback comments``, which
  it imports when feedback comments are on).
- Canvas, "Re-Upload Submissions" (``Assignment#generate_comments_from_files``: the first
  two all-digit ``_``-separated parts of a file's name are the user id and the id of the
  submitted file, which must be the student's current submission's): ``canvas-feedback.zip``
  holds ``<canvas name>[_LATE]_<user id>_<file id>_<a>-feedback.html`` per student, attached
  as a comment to their submission.

A student the LMS would not match (not collected from that LMS's download) gets their page
in the same zip under ``<student id>/`` to hand back another way, is named, and the command
exits 1.
"""
from __future__ import annotations

import functools
import shutil
import zipfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from coursebase.model import Course

from .csvsafe import writer as csv_writer
from .results import GradedSubmission, read_results


@functools.cache
def _template():
    import jinja2

    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
                                     autoescape=True, undefined=jinja2.StrictUndefined)
    environment.filters["points"] = lambda value: f"{value:g}"
    return environment.get_template("feedback.html.j2")


def render(result: GradedSubmission, assignment: str) -> str:
    """One student's page; everything from the submission is escaped (autoescape)."""
    return _template().render(result=result, assignment=assignment, lateness=getattr(result, "lateness", None))


def feedback_text(result: GradedSubmission, limit: int = 2000) -> str:
    """The page in a few plain lines, for an LMS's feedback column: the score (after any
    late penalty), then each test's points, with the message of each test not passed."""
    lateness = getattr(result, "lateness", None)
    score = lateness.score if lateness is not None and lateness.penalty else result.score
    parts = [f"{score:g} of {result.max_score:g} points"]
    if lateness is not None and lateness.penalty:
        parts[0] += (f" ({result.score:g} before the late penalty of {lateness.penalty:g}: "
                     f"late by {lateness.late_by})")
    if result.status not in ("ok", "ok, errors raised") and result.message:
        parts.append(f"Run: {result.message}")
    for test in result.tests:
        line = f"{test.grade_id}: {test.points:g}/{test.max_points:g}"
        if not test.passed and test.message:
            line += f" - {test.message}"
        parts.append(line)
    text = ". ".join(part.rstrip(".") for part in parts) + "."
    return text if len(text) <= limit else text[: limit - 40].rstrip() + " ... (the full page is in the feedback file)"


def write_feedback(course: Course, assignment: str, release: bool = True) -> list[Path]:
    written = []
    notebook = assignment
    for result in read_results(course, assignment):
        if not result.graded:
            continue
        folder = course.feedback_root / result.student / assignment
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{notebook}.html"
        path.write_text(render(result, assignment), encoding="utf-8")
        submitted = course.submitted_root / result.student / assignment
        for name in ("timestamp.txt", "submission_secret.txt"):
            if (submitted / name).is_file():
                shutil.copy(submitted / name, folder / name)
        written.append(path)
    if release and written:
        release_to_exchange(course, assignment)
    return written


def release_to_exchange(course: Course, assignment: str) -> int:
    """Hand the pages to nbgrader's exchange; only submissions it collected can be matched."""
    from nbgrader.auth import Authenticator
    from nbgrader.exchange.default import ExchangeReleaseFeedback

    ready = [p for p in course.feedback_root.glob(f"*/{assignment}")
             if (p / "submission_secret.txt").is_file() and (p / "timestamp.txt").is_file()]
    if not ready or not course.exchange_root.is_dir():
        return 0
    released = 0
    for folder in ready:
        coursedir = course.new_coursedir(assignment_id=assignment, student_id=folder.parent.name)
        releaser = ExchangeReleaseFeedback(coursedir=coursedir, authenticator=Authenticator(config=coursedir.config),
                                           config=coursedir.config)
        releaser.start()
        released += 1
    return released


# -- back through the LMS ---------------------------------------------------------------------

@dataclass
class LmsBundle:
    """What `course feedback --lms` wrote, and who the LMS will not match."""
    written: list[Path] = field(default_factory=list)
    matched: list[str] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)


LMS_NAMES = {"canvas": "Canvas", "moodle": "Moodle"}


def _lms_path(lms: str, prefix: str, file_name: str) -> str:
    if lms == "moodle":  # the download's folder name; a flat download's prefix ends with "_"
        return f"{prefix}{file_name}" if prefix.endswith("_") else f"{prefix}/{file_name}"
    return f"{prefix}{file_name}"  # Canvas: "<name>[_LATE]_<user id>_<file id>_" + the file


def write_lms_bundle(course: Course, assignment: str, lms: str) -> LmsBundle:
    """The feedback pages (written by :func:`write_feedback` first) bundled for ``lms``."""
    from .collect import load_records

    records = load_records(course, assignment)
    folder = course.reports_root / assignment
    folder.mkdir(parents=True, exist_ok=True)
    bundle = LmsBundle()
    file_name = f"{assignment}-feedback.html"
    worksheet = []
    archive_path = folder / f"{lms}-feedback.zip"
    with zipfile.ZipFile(archive_path, "w", zipfile.ZIP_DEFLATED) as archive:
        for result in read_results(course, assignment):
            if not result.graded:
                continue
            page = course.feedback_root / result.student / assignment / f"{assignment}.html"
            html = page.read_bytes() if page.is_file() else render(result, assignment).encode()
            record = records.get(result.student, {})
            prefix = record.get("lms_prefix") or ""
            if record.get("lms") == LMS_NAMES[lms] and prefix:
                archive.writestr(_lms_path(lms, prefix, file_name), html)
                bundle.matched.append(result.student)
                if lms == "moodle":
                    worksheet.append((prefix, result))
            else:
                archive.writestr(f"{result.student}/{file_name}", html)
                bundle.unmatched.append(result.student)
    bundle.written.append(archive_path)
    if lms == "moodle":
        bundle.written.append(_moodle_worksheet(folder, assignment, worksheet))
    return bundle


def _moodle_worksheet(folder: Path, assignment: str, rows) -> Path:
    """Moodle's offline grading worksheet, with the feedback comments filled."""
    path = folder / "moodle-grading-worksheet.csv"
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv_writer(handle)
        writer.writerow(["Identifier", "Full name", "Email address", "Grade", "Maximum Grade",
                         "Last modified (grade)", "Feedback comments"])
        for prefix, result in rows:
            name, participant = prefix.split("_")[:2]
            writer.writerow([f"Participant {participant}", name, result.email, f"{result.final_score:g}",
                             f"{result.max_score:g}", now, feedback_text(result)])
    return path
