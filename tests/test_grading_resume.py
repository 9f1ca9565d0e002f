"""`course grade` killed with SIGKILL mid-batch, then run again: complete, nothing twice.

Also: the CLI front door (grade, export, report, feedback) on the resulting course, and a
re-run that has nothing left to do changes nothing.
"""
from __future__ import annotations

import csv
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from attacks import inject

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("grading_resume")]

ASSIGNMENT = "01_tensors"
STUDENTS = 8
REPO = inject.REPO


def _course(root, *args):
    return [sys.executable, "-m", "course.cli", *args, "--root", str(root)]


def _graded(root):
    return sorted(p.parent.parent.name for p in (root / "var" / "autograded").glob(f"*/{ASSIGNMENT}/grading.json"))


@pytest.fixture(scope="module")
def course_root(tmp_path_factory):
    root = inject.make_course(tmp_path_factory.mktemp("resume") / "course", ASSIGNMENT)
    honest = inject.honest(root, ASSIGNMENT)
    partial = inject.honest(root, ASSIGNMENT, keep=0.5)
    # A short pause in each notebook makes the batch slow enough to be killed in the middle.
    pause = "import time\ntime.sleep(0.6)"
    for number in range(STUDENTS):
        base = honest if number % 2 == 0 else partial
        inject.submit(root, ASSIGNMENT, f"s{number:02d}", inject.insert(base, pause, "end"))
    return root


def test_kill_mid_batch_then_resume(course_root):
    process = subprocess.Popen(_course(course_root, "grade", ASSIGNMENT, "--workers", "2"), cwd=REPO,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 120
    while len(_graded(course_root)) < 3 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    first = _graded(course_root)
    assert 0 < len(first) < STUDENTS, f"not killed mid-batch: {len(first)} graded"

    rerun = subprocess.run(_course(course_root, "grade", ASSIGNMENT, "--workers", "2"), cwd=REPO,
                           capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert _graded(course_root) == [f"s{n:02d}" for n in range(STUDENTS)]
    assert f"{STUDENTS} submission(s)" in rerun.stdout

    with sqlite3.connect(course_root / "var" / "gradebook.db") as connection:
        rows = connection.execute("select student_id, count(*) from submitted_assignment "
                                  "group by student_id").fetchall()
        grades = connection.execute("select count(*) from grade").fetchone()[0]
        cells = connection.execute("select count(*) from grade_cells").fetchone()[0]
    assert len(rows) == STUDENTS and all(count == 1 for _, count in rows)
    assert grades == STUDENTS * cells

    # A forced re-grade of everything updates the same rows: still one per student.
    forced = subprocess.run(_course(course_root, "grade", ASSIGNMENT, "--workers", "2", "--force"), cwd=REPO,
                            capture_output=True, text=True, timeout=300)
    assert forced.returncode == 0, forced.stderr
    assert "gradebook write failed" not in forced.stdout
    with sqlite3.connect(course_root / "var" / "gradebook.db") as connection:
        again_rows = connection.execute("select student_id, count(*) from submitted_assignment "
                                        "group by student_id").fetchall()
        assert connection.execute("select count(*) from grade").fetchone()[0] == grades
    assert sorted(again_rows) == sorted(rows)

    # Nothing left to do: a third run changes no score and grades nobody again.
    before = {p: p.stat().st_mtime_ns for p in (course_root / "var" / "autograded").rglob("grading.json")}
    again = subprocess.run(_course(course_root, "grade", ASSIGNMENT), cwd=REPO,
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    after = {p: p.stat().st_mtime_ns for p in (course_root / "var" / "autograded").rglob("grading.json")}
    assert before == after


def test_export_report_feedback_after_resume(course_root):
    maximum = sum(points for _, points in inject.test_points(course_root, ASSIGNMENT))
    export = subprocess.run(_course(course_root, "export", ASSIGNMENT), cwd=REPO,
                            capture_output=True, text=True, timeout=120)
    assert export.returncode == 0, export.stderr
    with open(course_root / "var" / "reports" / ASSIGNMENT / "grades.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["student"] for r in rows] == [f"s{n:02d}" for n in range(STUDENTS)]
    assert list(rows[0])[:5] == ["student", "score", "max_score", "status", "message"]
    for number, row in enumerate(rows):
        assert float(row["max_score"]) == maximum
        assert row["status"] == "ok"
        if number % 2 == 0:
            assert float(row["score"]) == maximum
        else:
            assert 0 < float(row["score"]) < maximum

    report = subprocess.run(_course(course_root, "report", ASSIGNMENT), cwd=REPO,
                            capture_output=True, text=True, timeout=120)
    assert report.returncode == 0, report.stderr
    folder = course_root / "var" / "reports" / ASSIGNMENT
    assert (folder / "distribution.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"{STUDENTS} submission(s)" in report.stdout and "mean" in report.stdout
    with open(folder / "questions.csv") as handle:
        assert len(list(csv.reader(handle))) == STUDENTS + 1

    feedback = subprocess.run(_course(course_root, "feedback", ASSIGNMENT), cwd=REPO,
                              capture_output=True, text=True, timeout=120)
    assert feedback.returncode == 0, feedback.stderr
    source = (course_root / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text()
    hidden = [line.strip() for block in source.split("### BEGIN HIDDEN TESTS")[1:]
              for line in block.split("### END HIDDEN TESTS")[0].split("\\n") if len(line.strip()) > 12]
    assert hidden, "the assignment has hidden tests to protect"
    pages = list((course_root / "var" / "feedback").glob(f"*/{ASSIGNMENT}/{ASSIGNMENT}.html"))
    assert len(pages) == STUDENTS
    for page in pages:
        text = page.read_text()
        assert "points" in text
        leaked = [line for line in hidden if line in text]
        assert not leaked, f"{page}: hidden test source in feedback: {leaked[:2]}"
