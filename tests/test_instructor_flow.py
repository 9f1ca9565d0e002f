"""An instructor's term on a new assignment, end to end with the real parts, once.

`course new` scaffolds 09_sample; `course release` makes its student release; `course
validate` passes the source and fails the release. Then the course is as a fresh clone has
it (assignments/ committed, no gradebook): an LMS download is collected, `course grade` runs
with its output redirected (one progress line per submission), records the assignment in
the gradebook itself, and its summary tells the runs apart; a due date and a late penalty
show in `course export` (course, Canvas and Moodle formats) and in the feedback pages.
"""
from __future__ import annotations

import csv
import json
import shutil
import zipfile
from dataclasses import dataclass

import pytest

from attacks import inject
from course import cli

pytestmark = pytest.mark.slow

NAME = "09_sample"


@dataclass
class Done:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def course(capfd):
    """`course ...` in this process (what a subprocess would print, without its start-up time)."""
    def run(*args, check=True):
        capfd.readouterr()
        code = cli.main(list(args))
        out, err = capfd.readouterr()
        if check:
            assert code == 0, f"course {' '.join(args)}:\n{out}\n{err}"
        return Done(code, out, err)
    return run


def _answered(release: dict, source: dict, keep: int) -> dict:
    """The release with the first ``keep`` answer cells written as the solution has them."""
    notebook = json.loads(json.dumps(release))
    solutions = {c["metadata"]["nbgrader"]["grade_id"]: "".join(c["source"]) for c in source["cells"]
                 if c["metadata"].get("nbgrader", {}).get("solution")}
    for cell in [c for c in notebook["cells"] if c["metadata"].get("nbgrader", {}).get("solution")][:keep]:
        lines = solutions[cell["metadata"]["nbgrader"]["grade_id"]].splitlines(keepends=True)
        cell["source"] = "".join(line for line in lines if "### " not in line)
    return notebook


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    root = tmp_path_factory.mktemp("term") / "course"
    shutil.copytree(inject.REPO / "solutions" / "02_devices", root / "solutions" / "02_devices")
    (root / "course").mkdir(parents=True)
    shutil.copy(inject.REPO / "course" / "nbgrader_config.py", root / "course" / "nbgrader_config.py")
    return root


def test_new_assignment_releases_validates_and_grades(term, tmp_path, course):
    root = str(term)
    created = course("new", NAME, "--root", root)
    assert f"course release {NAME} --root {root}" in created.stdout
    course("release", NAME, "--root", root)
    source = term / "solutions" / NAME / f"{NAME}.ipynb"
    release = term / "assignments" / NAME / f"{NAME}.ipynb"
    assert "2 of 2 tests passed, 10 of 10 points." in course("validate", str(source)).stdout
    blank = course("validate", str(release), check=False)
    assert blank.returncode == 1 and "0 of 2 tests passed" in blank.stdout

    # As a fresh clone: the committed release, and no gradebook at all.
    (term / "var" / "gradebook.db").unlink()
    (term / "var").mkdir(exist_ok=True)
    (term / "var" / "roster.csv").write_text("id,first_name,last_name,email,lms_id\n"
                                                "ada,Ada,Lovelace,ada@example.org,123\n"
                                                "bo,Bo,Li,bo@example.org,456\n"
                                                "cy,Cy,Young,,789\n")
    config = term / "course" / "nbgrader_config.py"
    config.write_text(config.read_text() + (
        f'\nc.CourseDeadlines.due = {{"{NAME}": "2026-11-20 23:59 UTC"}}\n'
        f'c.PercentPerDay.percent_per_day = {{"{NAME}": 25}}\n'))
    released, solution = json.loads(release.read_text()), json.loads(source.read_text())
    crash = _answered(released, solution, 2)
    crash["cells"].append({"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                           "source": "import os\nos._exit(3)"})
    download = tmp_path / "blackboard.zip"
    with zipfile.ZipFile(download, "w") as archive:  # Blackboard's names: the attempt time is UTC here
        archive.writestr(f"Sample_ada_attempt_2026-11-20-22-00-00_{NAME}.ipynb",
                         json.dumps(_answered(released, solution, 2)))
        archive.writestr(f"Sample_bo_attempt_2026-11-22-09-00-00_{NAME}.ipynb",
                         json.dumps(_answered(released, solution, 1)))
        archive.writestr(f"Sample_cy_attempt_2026-11-20-12-00-00_{NAME}.ipynb", json.dumps(crash))
    collected = course("collect", NAME, "--root", root, "--from", str(download), "--timezone", "UTC")
    assert "collected 3 submission(s)" in collected.stdout

    graded = course("grade", NAME, "--root", root, "--workers", "2")
    assert f"recorded {NAME} in the gradebook" in graded.stderr, graded.stderr  # no `course release` needed
    progress = [line for line in graded.stderr.splitlines() if line.startswith(f"grading {NAME}: ") and "/3 " in line]
    assert len(progress) == 3, graded.stderr  # one line per finished submission, output not a terminal
    assert {line.split()[3].rstrip(":") for line in progress} == {"ada", "bo", "cy"}
    summary = {line.split()[0]: line for line in graded.stdout.splitlines()[1:4]}
    assert "10/10" in summary["ada"] and summary["ada"].split()[2] == "ok"
    assert "5/10" in summary["bo"] and "ok, errors raised" in summary["bo"]
    assert "crashed" in summary["cy"] and "notebook exited" in summary["cy"]
    assert "3 submission(s): 1 ok, 1 ok, errors raised, 1 crashed" in graded.stdout

    course("export", NAME, "--root", root)
    rows = {r["student"]: r for r in csv.DictReader(open(term / "var" / "reports" / NAME / "grades.csv"))}
    assert rows["ada"]["score"] == "10" and rows["ada"]["late_by"] == "" and rows["ada"]["due"] == "2026-11-20 23:59 UTC"
    # bo: 1 day 9 h late, two started days at 25 %: half of 5 points
    assert (rows["bo"]["raw_score"], rows["bo"]["late_penalty"], rows["bo"]["score"]) == ("5", "2.5", "2.5")
    assert rows["bo"]["late_by"] == "1d 9h 01m" and rows["bo"]["submitted"] == "2026-11-22 09:00 UTC"

    course("export", NAME, "--root", root, "--format", "canvas", "--column", "Sample (4711)")
    canvas = list(csv.reader(open(term / "var" / "reports" / NAME / "grades-canvas.csv")))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Sample (4711)"]
    assert ["Li, Bo", "456", "", "bo", "", "2.5"] in canvas
    course("export", NAME, "--root", root, "--format", "moodle")
    moodle = list(csv.DictReader(open(term / "var" / "reports" / NAME / "grades-moodle.csv")))
    bo = next(r for r in moodle if r["Username"] == "bo")
    assert bo["Email address"] == "bo@example.org" and bo[NAME] == "2.5"
    assert bo["Feedback"].startswith("2.5 of 10 points (5 before the late penalty of 2.5: late by 1d 9h 01m)")

    course("feedback", NAME, "--root", root)
    page = (term / "var" / "feedback" / "bo" / NAME / f"{NAME}.html").read_text()
    assert "late by 1d 9h 01m: 2.5 point(s) off (25% of the score per started day late" in page
    assert "score after the penalty: 2.5 / 10" in page
    assert "on time" in (term / "var" / "feedback" / "ada" / NAME / f"{NAME}.html").read_text()
