"""A throw-away course and LMS downloads for the collect, roster and export tests."""
from __future__ import annotations

import json
import shutil
import zipfile
from dataclasses import asdict
from datetime import timezone
from pathlib import Path

from attacks import inject

ASSIGNMENT = "03_autograd"
OTHER = "02_devices"
ROSTER = """id,first_name,last_name,email,lms_id
ada,Ada,Lovelace,ada@example.org,123
jo_ann,Jo Ann,Miller,,
jo,Jo,Miller,,
hugo,Hugo,Smith,,
aiden,Aiden,Rodriguez,,640693
bo-7,Bo,Li,,
eve,Eve,Adams,eve@example.org,777
"""


def make_course(root: Path, roster: str | None = ROSTER) -> Path:
    for assignment in (ASSIGNMENT, OTHER):
        for step in ("solutions", "assignments"):
            shutil.copytree(inject.REPO / step / assignment, root / step / assignment)
    (root / "course").mkdir(parents=True)
    shutil.copy(inject.REPO / "course" / "nbgrader_config.py", root / "course" / "nbgrader_config.py")
    if roster is not None:
        (root / "course" / "roster.csv").write_text(roster)
    return root


def add_config(root: Path, text: str) -> None:
    config = root / "course" / "nbgrader_config.py"
    config.write_text(config.read_text() + "\n" + text + "\n")


def release(assignment: str = ASSIGNMENT, marker: str = "") -> bytes:
    """The student release as handed in; `marker` makes versions differ."""
    notebook = json.loads((inject.REPO / "assignments" / assignment / f"{assignment}.ipynb").read_text())
    notebook["cells"][0]["source"] = "".join(notebook["cells"][0]["source"]) + marker
    return json.dumps(notebook).encode()


def make_zip(path: Path, entries: dict) -> Path:
    """``entries``: name -> bytes/str, or name -> (bytes/str, zip date tuple)."""
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in entries.items():
            if isinstance(data, tuple):
                archive.writestr(zipfile.ZipInfo(name, data[1]), data[0])
            else:
                archive.writestr(name, data)
    return path


def collect(root: Path, download: Path, **options):
    from autograder.collect import collect_files
    from course.model import Course
    return collect_files(Course.load(root), ASSIGNMENT, download, **options)


def submitted(root: Path, student: str) -> Path:
    return root / "course" / "submitted" / student / ASSIGNMENT


def stamp(root: Path, student: str):
    from nbgrader.utils import parse_utc
    path = submitted(root, student) / "timestamp.txt"
    return parse_utc(path.read_text()).replace(tzinfo=timezone.utc) if path.exists() else None


def mark_graded(root: Path, student: str, score: float = 17.0) -> None:
    """The state `course grade` leaves after grading a submission."""
    from autograder.results import SubmissionRow
    folder = root / "course" / "autograded" / student / ASSIGNMENT
    folder.mkdir(parents=True, exist_ok=True)
    row = SubmissionRow(student, score, 17.0, "ok", "ok", [], digest="x")
    (folder / "grading.json").write_text(json.dumps({k: v for k, v in asdict(row).items() if k != "autograded"}))
