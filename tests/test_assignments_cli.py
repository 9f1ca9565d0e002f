"""`course release` and `course validate` as a user runs them."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from course import cli, release_audit
from coursebase import model
from coursebase.paths import CONFIG_RELATIVE_PATH, REPO

pytestmark = pytest.mark.database   # release, grade: an nbgrader gradebook

ASSIGNMENT = "02_devices"  # the quickest notebook to run
RELEASED = REPO / "assignments" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
SOURCE = REPO / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
GRADE_CELLS = ["test_parse_device", "test_dispatcher", "test_common_device", "test_to_device", "test_returns_self",
               "test_evaluate_batches"]


def course(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "course.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_validate_fails_on_the_blank_release_and_reports_every_test(tmp_path):
    # A student who "fixes" a test by editing it is told the autograder runs the original.
    notebook = json.loads(RELEASED.read_text())
    for cell in notebook["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("grade_id") == "test_returns_self":
            cell["source"] = "pass  # edited by the student"
    copy = tmp_path / RELEASED.name
    copy.write_text(json.dumps(notebook))
    result = course("validate", str(copy))
    assert result.returncode == 1, result.stdout + result.stderr
    for grade_id in GRADE_CELLS:
        verdict = "EDIT" if grade_id == "test_returns_self" else "FAIL"
        assert f"{verdict}  {grade_id}" in result.stdout, result.stdout
    assert "parse_device('cpu'): not answered yet (your code raised NotImplementedError)" in result.stdout
    assert "0 of 6 tests passed, 0 of 16 points." in result.stdout


@pytest.mark.parametrize("where", ["lessons", "elsewhere"])
def test_validate_on_a_lesson_says_it_is_not_the_assignment_and_grades_nothing(where, tmp_path):
    """Lesson 02 shares assignment 02's name; it is not a submission of it. Wherever it is
    (in lessons/, or copied beside an assignment), Validate says so and runs nothing."""
    from course.self_check import EXIT_UNUSABLE, judge_as_graded
    from course.validate_button import lab_answer

    lesson = REPO / "lessons" / f"{ASSIGNMENT}.ipynb"
    if where == "elsewhere":
        lesson = shutil.copy(lesson, tmp_path / lesson.name)
    result = course("validate", str(lesson))
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"is not a notebook of assignment {ASSIGNMENT}: it has none of its answer or test cells" in result.stderr
    assert f"assignments/{ASSIGNMENT}/{ASSIGNMENT}.ipynb" in result.stderr
    assert ("it is a lesson" in result.stderr) == (where == "lessons"), result.stderr
    assert "tests passed" not in result.stdout and "restored" not in result.stdout + result.stderr
    report = judge_as_graded(Path(lesson), "the lesson", sys.stderr)   # the Validate button's judgement
    assert report.status == EXIT_UNUSABLE and not report.lines
    assert "is not a notebook of assignment" in lab_answer(report)["value"]


def test_validate_passes_the_solution(tmp_path):
    result = course("validate", str(SOURCE))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "6 of 6 tests passed, 16 of 16 points." in result.stdout
    assert "FAIL" not in result.stdout


def test_validate_fails_when_one_answer_is_wrong(tmp_path):
    notebook = json.loads(SOURCE.read_text())
    for cell in notebook["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("grade_id") == "to_device":
            cell["source"] = cell["source"].replace("tensor.data.clone()", "tensor.data")
    broken = tmp_path / f"{ASSIGNMENT}.ipynb"
    broken.write_text(json.dumps(notebook))
    result = course("validate", str(broken))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FAIL  test_to_device" in result.stdout
    assert "shares memory with the original" in result.stdout
    assert "5 of 6 tests passed, 13 of 16 points." in result.stdout


def test_validate_refuses_what_is_not_a_notebook(tmp_path, capsys):
    assert cli.main(["validate", str(tmp_path / "nope.ipynb")]) == 2
    assert "no such notebook" in capsys.readouterr().err
    garbage = tmp_path / "garbage.ipynb"
    garbage.write_text("{not json")
    assert cli.main(["validate", str(garbage)]) == 2
    assert "is not a notebook (invalid JSON" in capsys.readouterr().err


def test_release_names_unknown_assignments(capsys):
    assert cli.main(["release", "99_nothing"]) == 2
    error = capsys.readouterr().err
    assert "No assignment named '99_nothing'" in error and "01_tensors" in error
    assert cli.main(["release"]) == 2
    assert cli.main(["release", "--all", "01_tensors"]) == 2


def test_release_regenerates_and_check_spots_a_stale_release(tmp_path, monkeypatch, capsys):
    # A scratch copy of the course, so the real assignments/ is never rewritten by tests.
    (tmp_path / "course").mkdir()
    shutil.copy(REPO / CONFIG_RELATIVE_PATH, tmp_path / CONFIG_RELATIVE_PATH)
    shutil.copytree(REPO / "solutions" / ASSIGNMENT, tmp_path / "solutions" / ASSIGNMENT)
    monkeypatch.setattr(model, "REPO", tmp_path)

    assert cli.main(["release", ASSIGNMENT]) == 0
    assert "released" in capsys.readouterr().out
    assert release_audit.release_differences(REPO / "assignments" / ASSIGNMENT,
                                             tmp_path / "assignments" / ASSIGNMENT) == []
    assert cli.main(["release", "--check", ASSIGNMENT]) == 0

    released = tmp_path / "assignments" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    notebook = json.loads(released.read_text())
    notebook["cells"][0]["source"] += "\nEdited by hand."
    released.write_text(json.dumps(notebook))
    assert cli.main(["release", "--check", ASSIGNMENT]) == 1
    assert "cell 0 differs from a fresh release in source" in capsys.readouterr().out


def test_release_publishes_to_the_exchange(tmp_path, monkeypatch, capsys):
    (tmp_path / "course").mkdir()
    shutil.copy(REPO / CONFIG_RELATIVE_PATH, tmp_path / CONFIG_RELATIVE_PATH)
    shutil.copytree(REPO / "solutions" / ASSIGNMENT, tmp_path / "solutions" / ASSIGNMENT)
    monkeypatch.setattr(model, "REPO", tmp_path)

    assert cli.main(["release", "--check", "--exchange", ASSIGNMENT]) == 2
    assert cli.main(["release", "--exchange", ASSIGNMENT]) == 0
    assert "published to the exchange" in capsys.readouterr().out
    outbound = next((tmp_path / "var" / "exchange").glob(f"*/outbound/{ASSIGNMENT}/{ASSIGNMENT}.ipynb"))
    assert json.loads(outbound.read_text()) == json.loads(
        (tmp_path / "assignments" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text())


def test_release_check_ignores_what_jupyterlab_writes(tmp_path, capsys):
    """An instructor opens the committed release in JupyterLab, runs it and saves it: outputs,
    execution counts, timings and kernel metadata change, the assignment does not."""
    import nbclient
    import nbformat
    from jupyter_server.services.contents.filemanager import FileContentsManager

    root = tmp_path / "course"
    (root / "course").mkdir(parents=True)
    shutil.copy(REPO / CONFIG_RELATIVE_PATH, root / CONFIG_RELATIVE_PATH)
    shutil.copytree(REPO / "solutions" / ASSIGNMENT, root / "solutions" / ASSIGNMENT)
    assert cli.main(["release", ASSIGNMENT, "--root", str(root)]) == 0   # --root: no monkeypatching
    released = root / "assignments" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"

    notebook = nbformat.read(str(released), as_version=4)
    nbclient.NotebookClient(notebook, timeout=120, allow_errors=True, record_timing=True,
                            resources={"metadata": {"path": str(released.parent)}}).execute()
    notebook.metadata.kernelspec["display_name"] = "Python 3 (course venv)"
    notebook.cells[0].metadata["collapsed"] = True
    manager = FileContentsManager(root_dir=str(root))
    manager.save({"type": "notebook", "format": "json", "content": notebook},
                 f"assignments/{ASSIGNMENT}/{ASSIGNMENT}.ipynb")
    saved = json.loads(released.read_text())
    assert any(cell.get("outputs") for cell in saved["cells"]), "the run wrote no outputs"
    assert any(cell.get("execution_count") for cell in saved["cells"])
    capsys.readouterr()
    assert cli.main(["release", "--check", ASSIGNMENT, "--root", str(root)]) == 0, capsys.readouterr().out
    assert "holds outputs saved by JupyterLab (not compared)" in capsys.readouterr().out

    # What a student gets still counts: a test cell's text, or its points.
    for cell in saved["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("grade_id") == "test_returns_self":
            cell["metadata"]["nbgrader"]["points"] = 3
    released.write_text(json.dumps(saved))
    assert cli.main(["release", "--check", ASSIGNMENT, "--root", str(root)]) == 1
    assert "differs from a fresh release in metadata" in capsys.readouterr().out
