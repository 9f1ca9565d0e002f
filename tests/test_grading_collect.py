"""`course collect`: from nbgrader's exchange (nbgrader's own collector) and from an LMS folder."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from datetime import timezone

import nbformat
import pytest

from attacks import inject

ASSIGNMENT = "02_devices"


def _cli(root, *args):
    return subprocess.run([sys.executable, "-m", "course.cli", *args, "--root", str(root)], cwd=inject.REPO,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture()
def course_root(tmp_path):
    root = tmp_path / "course"
    for step in ("solutions", "assignments"):
        shutil.copytree(inject.REPO / step / ASSIGNMENT, root / step / ASSIGNMENT)
    (root / "course").mkdir(parents=True)
    shutil.copy(inject.REPO / "course" / "nbgrader_config.py", root / "course" / "nbgrader_config.py")
    return root


def test_collect_from_the_exchange_then_grade(course_root):
    notebook = nbformat.writes(nbformat.v4.new_notebook())
    inbound = course_root / "course" / "exchange" / "reftorch-course" / "inbound"
    for student, stamp in (("ada", "2026-11-20 10:00:00.000000 UTC"), ("bo", "2026-11-20 11:00:00.000000 UTC")):
        folder = inbound / f"{student}+{ASSIGNMENT}+{stamp}+abc123"
        folder.mkdir(parents=True)
        (folder / f"{ASSIGNMENT}.ipynb").write_text(notebook)
        # bo rewrote the timestamp.txt inside the inbound folder: the folder's name wins
        (folder / "timestamp.txt").write_text(stamp if student == "ada" else "2026-11-01 00:00:00.000000 UTC")
    (inbound / "stray-file.txt").write_text("?")
    result = _cli(course_root, "collect", ASSIGNMENT)
    assert result.returncode == 0, result.stdout + result.stderr
    for student in ("ada", "bo"):
        assert (course_root / "course" / "submitted" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").is_file()
    assert "collected 2 submission(s)" in result.stdout
    assert "stray-file.txt" in result.stdout
    stamp = course_root / "course" / "submitted" / "bo" / ASSIGNMENT / "timestamp.txt"
    assert stamp.read_text() == "2026-11-20 11:00:00.000000 UTC"


def test_collect_from_an_lms_folder_lists_what_it_cannot_place(course_root, tmp_path):
    download = tmp_path / "download"
    (download / "carl").mkdir(parents=True)
    notebook = nbformat.writes(nbformat.v4.new_notebook())
    (download / "carl" / f"{ASSIGNMENT}.ipynb").write_text(notebook)
    (download / f"dana_551_{ASSIGNMENT}.ipynb").write_text(notebook)
    (download / "grades_template.xlsx").write_text("not a notebook")
    result = _cli(course_root, "collect", ASSIGNMENT, "--from", str(download))
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (course_root / "course" / "submitted").iterdir()) == ["carl", "dana"]
    assert "could not place 1 file(s)" in result.stdout
    assert "grades_template.xlsx: not a notebook and not inside a student's folder" in result.stdout


def _report(course_root, download):
    from autograder.collect import collect_files
    from autograder.course import Course
    return collect_files(Course.load(course_root), ASSIGNMENT, download)


def test_links_in_an_lms_folder_are_listed_not_followed(course_root, tmp_path):
    download = tmp_path / "download"
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / f"{ASSIGNMENT}.ipynb").write_text(nbformat.writes(nbformat.v4.new_notebook()))
    (download / "eve").mkdir(parents=True)
    (download / "eve" / f"{ASSIGNMENT}.ipynb").symlink_to(outside / f"{ASSIGNMENT}.ipynb")
    (download / f"fay_{ASSIGNMENT}.ipynb").symlink_to(outside / f"{ASSIGNMENT}.ipynb")
    (download / "gus").symlink_to(outside)
    report = _report(course_root, download)
    unplaced = dict(report.unplaceable)
    assert set(unplaced) == {f"eve/{ASSIGNMENT}.ipynb", f"fay_{ASSIGNMENT}.ipynb", "gus"}, report.text()
    assert all(reason.startswith("symbolic link (to ") and reason.endswith("not followed")
               for reason in unplaced.values())
    assert report.placed == {}
    assert "could not place 3 file(s)" in report.text()


def test_a_students_timestamp_never_replaces_the_lms_time(course_root, tmp_path):
    from nbgrader.utils import parse_utc

    download = tmp_path / "download"
    (download / "carl").mkdir(parents=True)
    notebook = download / "carl" / f"{ASSIGNMENT}.ipynb"
    notebook.write_text(nbformat.writes(nbformat.v4.new_notebook()))
    (download / "carl" / "timestamp.txt").write_text("2000-01-01 00:00:00.000000 UTC")
    (download / "carl" / "submission_secret.txt").write_text("someone else's")
    lms_time = 1_790_000_000   # 2026-09-21 UTC: when the LMS received the notebook
    os.utime(notebook, (lms_time, lms_time))
    report = _report(course_root, download)
    assert report.placed == {"carl": f"carl/{ASSIGNMENT}.ipynb"}
    unplaced = dict(report.unplaceable)
    assert unplaced["carl/timestamp.txt"].startswith("reserved name: the submission time comes from the LMS")
    assert "carl/submission_secret.txt" in unplaced
    folder = course_root / "course" / "submitted" / "carl" / ASSIGNMENT
    recorded = parse_utc(folder.joinpath("timestamp.txt").read_text())   # naive, in UTC
    assert recorded.replace(tzinfo=timezone.utc).timestamp() == lms_time
    assert not folder.joinpath("submission_secret.txt").exists()
