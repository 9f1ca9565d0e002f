"""`course collect`: from nbgrader's exchange (nbgrader's own collector) and from an LMS folder."""
from __future__ import annotations

import shutil
import subprocess
import sys

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
        (folder / "timestamp.txt").write_text(stamp)
    (inbound / "stray-file.txt").write_text("?")
    result = _cli(course_root, "collect", ASSIGNMENT)
    assert result.returncode == 0, result.stdout + result.stderr
    for student in ("ada", "bo"):
        assert (course_root / "course" / "submitted" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").is_file()
    assert "collected 2 submission(s)" in result.stdout
    assert "stray-file.txt" in result.stdout


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
