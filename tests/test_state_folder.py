"""A course's runtime state is in var/; a course that kept it in course/ (before var/) is refused
by every command until `course migrate-state` has moved it, which loses nothing."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from course import cli
from coursebase.model import Course, CourseError
from coursebase.paths import CONFIG_RELATIVE_PATH, REPO

ROSTER = "id,first_name,last_name\nada,Ada,Lovelace\n"


def _old_course(root: Path) -> Path:
    """A course as an instructor had it mid-term before var/: gradebook, roster, a submission."""
    (root / "course").mkdir(parents=True)
    shutil.copy(REPO / CONFIG_RELATIVE_PATH, root / CONFIG_RELATIVE_PATH)
    shutil.copytree(REPO / "solutions" / "01_tensors", root / "solutions" / "01_tensors")
    (root / "course" / "gradebook.db").write_bytes(b"SQLite format 3\0 (a stand-in)")
    (root / "course" / "roster.csv").write_text(ROSTER)
    submission = root / "course" / "submitted" / "ada" / "01_tensors"
    submission.mkdir(parents=True)
    (submission / "01_tensors.ipynb").write_text("{}")
    return root


def _run(capsys, *argv) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_old_state_is_refused_then_moved_whole(tmp_path, capsys):
    root = _old_course(tmp_path / "course copy")
    code, _, err = _run(capsys, "collect", "01_tensors", "--root", str(root), "--from", str(tmp_path))
    assert code == 2
    assert f"{root / 'course'} holds the course's runtime state from before it moved to var/ " \
           "(gradebook.db, roster.csv, submitted)" in err
    assert f"run `course migrate-state --root {root}` once" in err
    with pytest.raises(CourseError, match="course migrate-state"):
        Course.load(root)

    code, out, _ = _run(capsys, "migrate-state", "--root", str(root))
    assert code == 0, out
    assert f"moved {root / 'course' / 'roster.csv'} -> {root / 'var' / 'roster.csv'}" in out
    assert (root / "var" / "roster.csv").read_text() == ROSTER
    assert (root / "var" / "gradebook.db").read_bytes().startswith(b"SQLite format 3")
    assert (root / "var" / "submitted" / "ada" / "01_tensors" / "01_tensors.ipynb").read_text() == "{}"
    assert sorted(p.name for p in (root / "course").iterdir()) == ["nbgrader_config.py"]
    assert Course.load(root).roster_path == root / "var" / "roster.csv"
    code, out, _ = _run(capsys, "migrate-state", "--root", str(root))
    assert code == 0 and "nothing to move" in out


def test_nothing_moves_when_var_has_one_of_them_already(tmp_path, capsys):
    root = _old_course(tmp_path / "course")
    (root / "var").mkdir()
    (root / "var" / "roster.csv").write_text("id\nbo\n")
    code, _, err = _run(capsys, "migrate-state", "--root", str(root))
    assert code == 1
    assert f"nothing was moved: {root / 'var' / 'roster.csv'} exist(s) already" in err
    assert (root / "course" / "roster.csv").read_text() == ROSTER and (root / "course" / "gradebook.db").exists()
    assert not (root / "var" / "gradebook.db").exists()


def test_a_command_that_only_reads_creates_no_state_folder(tmp_path, capsys):
    """var/ appears when something is written there, not when the configuration is read."""
    root = tmp_path / "course"
    (root / "course").mkdir(parents=True)
    shutil.copy(REPO / CONFIG_RELATIVE_PATH, root / CONFIG_RELATIVE_PATH)
    shutil.copytree(REPO / "solutions" / "01_tensors", root / "solutions" / "01_tensors")
    code, _, err = _run(capsys, "grade", "01_tensors", "--root", str(root))
    assert code == 1 and "no submissions of 01_tensors" in err
    assert not (root / "var").exists()
