"""CI gates for the graded assignments: the tests must test the student.

Per assignment, in a temporary course (a copy of solutions/ and course/nbgrader_config.py):
nbgrader generates the release, then autogrades three submissions in one run -- the blank
release, the release with every answer written (the solution's code), and the same with one
answer left blank -- and writes feedback for all three.

  gate 1  the solution runs clean: no cell of its autograded notebook raised (the source's
          answers and every test, hidden ones included: the source notebook, as gate 3 runs it)
  gate 2  the blank release scores 0, every test cell fails on it
  gate 3  the solution scores full marks
  gate 4  no solution code or hidden-test text in the release or in feedback
  gate 5  the committed release equals what nbgrader generates now
  partial the half-done submission scores strictly between 0 and the maximum

COURSE_GATES_ROOT=<a copy of the repository> runs the gates on that copy instead (how the
gates were shown to fail on broken inputs).
"""
from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
from pathlib import Path

import pytest
from sqlalchemy.exc import SAWarning

from course import nbgrader_course, release_audit
from course.lessons import assignment_of, lesson_paths
from coursebase.markers import course_markers
from coursebase.model import MIN_POINTS
from coursebase.paths import CONFIG_RELATIVE_PATH, REPO

# nbgrader's gradebook queries warn about its own session handling; not ours to fix.
pytestmark = [pytest.mark.filterwarnings("ignore", category=SAWarning), pytest.mark.database]

ROOT = Path(os.environ.get("COURSE_GATES_ROOT") or REPO).resolve()
ASSIGNMENTS = nbgrader_course.assignment_ids(ROOT)

# The answer cell left blank in an assignment's partial submission: by default its last
# answer cell (the earlier ones keep earning points); a source notebook can name another in
# its metadata, {"course": {"partial_blank": "<grade_id>"}}. An assignment with a single
# answer cell cannot show partial work and fails the partial gate, saying so.


def partial_blank_cell(notebook: dict) -> str | None:
    chosen = notebook.get("metadata", {}).get("course", {}).get("partial_blank")
    answers = [grade_id for grade_id, cell in _cells_by_id(notebook).items()
               if cell["metadata"]["nbgrader"].get("solution")]
    if chosen:
        return chosen
    return answers[-1] if len(answers) >= 2 else None


def test_course_has_one_assignment_per_lesson():
    assert ASSIGNMENTS, "no assignments found in solutions/"
    assert all(re.fullmatch(r"\d{2}_[a-z][a-z0-9_]*", name) for name in ASSIGNMENTS), ASSIGNMENTS
    # lesson N (and a lesson split off it, Nb) leads into assignment N, whose id gradebooks
    # keep; an assignment without a lesson is allowed
    missing = sorted(p.stem for p in lesson_paths() if assignment_of(p.stem, ASSIGNMENTS) is None)
    assert not missing, f"lessons without the assignment of their number in solutions/: {missing}"


def _cells_by_id(notebook: dict) -> dict[str, dict]:
    return {cell["metadata"]["nbgrader"]["grade_id"]: cell
            for cell in notebook["cells"] if "nbgrader" in cell.get("metadata", {})}


def _source(cell: dict) -> str:
    source = cell["source"]
    return "".join(source) if isinstance(source, list) else source


def _answered(release: dict, solution: dict, leave_blank: str | None = None) -> dict:
    """The release as a student hands it in: every answer cell written (the solution's code,
    without nbgrader's markers), except `leave_blank`, kept as released."""
    answered = json.loads(json.dumps(release))
    solution_cells = _cells_by_id(solution)
    for grade_id, cell in _cells_by_id(answered).items():
        if not cell["metadata"]["nbgrader"].get("solution") or grade_id == leave_blank:
            continue
        lines = _source(solution_cells[grade_id]).splitlines(keepends=True)
        cell["source"] = "".join(line for line in lines
                                 if not course_markers().marker_lines(line))
    if leave_blank is not None:
        assert leave_blank in _cells_by_id(answered), f"no answer cell {leave_blank}"
        assert _cells_by_id(answered)[leave_blank]["metadata"]["nbgrader"]["solution"]
    return answered


class Graded:
    """One assignment taken through nbgrader in a temporary course."""

    def __init__(self, assignment: str, course: Path):
        self.assignment = assignment
        self.course = course
        self.source = nbgrader_course.source_notebook(assignment, ROOT)
        self.committed_release = ROOT / "assignments" / assignment
        self.fresh_release = course / "assignments" / assignment
        self.notebook_name = f"{assignment}.ipynb"
        self.partial_blank = partial_blank_cell(json.loads(self.source.read_text()))
        self.students = ("blank", "full", "partial") if self.partial_blank else ("blank", "full")
        done = course / "graded.json"
        if not done.exists():
            self._grade()
            done.write_text(json.dumps({"assignment": assignment}))
        self.scores = nbgrader_course.scores(assignment, course)
        self.max_points = nbgrader_course.max_points(assignment, course)

    def _grade(self) -> None:
        course, assignment = self.course, self.assignment
        shutil.rmtree(course, ignore_errors=True)  # a run interrupted half-way starts over
        shutil.copytree(ROOT / "solutions" / assignment, course / "solutions" / assignment)
        shutil.copy(ROOT / CONFIG_RELATIVE_PATH, _mkdir(course / "course") / "nbgrader_config.py")
        nbgrader_course.generate_release([assignment], course)

        release = json.loads((self.fresh_release / self.notebook_name).read_text())
        solution = json.loads(self.source.read_text())
        submissions = {"blank": release, "full": _answered(release, solution)}
        if self.partial_blank:
            submissions["partial"] = _answered(release, solution, leave_blank=self.partial_blank)
        for student, notebook in submissions.items():
            folder = _mkdir(course / "var" / "submitted" / student / assignment)
            (folder / self.notebook_name).write_text(json.dumps(notebook))
        nbgrader_course.autograde(assignment, course)  # all three students in one nbgrader run
        nbgrader_course.generate_feedback(assignment, course)

    def autograded(self, student: str) -> dict:
        path = self.course / "var" / "autograded" / student / self.assignment / self.notebook_name
        return json.loads(path.read_text())

    def feedback_files(self, student: str) -> list[Path]:
        return sorted((self.course / "var" / "feedback" / student / self.assignment).glob("*.html"))


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def graded(assignment, tmp_path_factory) -> Graded:
    """Each assignment is graded once per test run, whichever xdist worker needs it first;
    a worker that needs it meanwhile waits on a lock instead of grading it again."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the run's base folder, common to all workers
    with open(shared / f"graded-{assignment}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            return Graded(assignment, shared / f"graded-{assignment}")
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _points(scores: dict[str, float]) -> float:
    return sum(scores.values())


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_gate1_the_solution_runs_without_an_error(assignment, graded):
    """What running the source notebook shows (it was a separate nbval run of it): the full
    submission holds its answers, and nbgrader's autograde restored its tests, hidden ones
    included; no cell raised, but those tagged ``raises-exception`` (as nbval allows)."""
    raised = [(cell["metadata"].get("nbgrader", {}).get("grade_id") or f"cell {index}", output.get("ename"))
              for index, cell in enumerate(graded.autograded("full")["cells"]) if cell["cell_type"] == "code"
              and "raises-exception" not in cell["metadata"].get("tags", [])
              for output in cell.get("outputs", []) if output["output_type"] == "error"]
    assert graded.autograded("full")["cells"], "no autograded notebook"
    assert not raised, f"the solution of {assignment} raises in {raised}"


def _none_right(cell: dict) -> bool:
    """A partial-credit cell (check(..., partial=True)) does not raise on a wrong case: it fails
    by printing that none of its cases was right, and earning nothing."""
    text = "".join("".join(o.get("text", "")) for o in cell.get("outputs", []) if o["output_type"] == "stream")
    return "partial=True" in _source(cell) and re.search(r"^0 of \d+ right$", text, re.M) is not None


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_gate2_blank_release_scores_zero_and_every_test_cell_fails(assignment, graded):
    scores = graded.scores["blank"]
    assert set(scores) == set(graded.max_points) and graded.max_points, "no graded cells were recorded"
    scored = {cell: points for cell, points in scores.items() if points != 0}
    assert not scored, f"the blank release of {assignment} earns points in {scored}"
    cells = _cells_by_id(graded.autograded("blank"))
    without_error = [grade_id for grade_id in graded.max_points
                     if not any(o["output_type"] == "error" for o in cells[grade_id].get("outputs", []))
                     and not _none_right(cells[grade_id])]
    assert not without_error, f"test cells of {assignment} that do not fail on the blank release: {without_error}"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_gate3_solution_scores_full_marks(assignment, graded):
    lost = {cell: (graded.scores["full"].get(cell), maximum)
            for cell, maximum in graded.max_points.items() if graded.scores["full"].get(cell) != maximum}
    assert not lost, f"the solution of {assignment} loses points (got, max): {lost}"
    assert _points(graded.max_points) >= MIN_POINTS, (
        f"{assignment} is worth {_points(graded.max_points):g} points; every assignment is worth at least "
        f"{MIN_POINTS} (coursebase.model.MIN_POINTS, docs/instructors.md)")


def test_course_new_scaffolds_an_assignment_the_gates_accept():
    """`course new`'s sample questions are worth the minimum gate 3 asks of every assignment."""
    from course.scaffold import new_notebook
    notebook = new_notebook("99_sample", REPO)
    points = [cell["metadata"]["nbgrader"]["points"] for cell in notebook["cells"]
              if cell["metadata"].get("nbgrader", {}).get("grade")]
    assert len(points) >= 2 and sum(points) >= MIN_POINTS, points
    assert f"| {points[0]:g} |" in "".join(notebook["cells"][0]["source"])   # the intro's table says so


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_partial_submission_scores_strictly_between(assignment, graded):
    assert graded.partial_blank, (
        f"{assignment} has a single answer cell, so no submission can show partial work: give it at "
        "least two answer cells (partial credit is what the gate checks)")
    total, maximum = _points(graded.scores["partial"]), _points(graded.max_points)
    assert 0 < total < maximum, (
        f"{assignment} with answer cell {graded.partial_blank!r} blanked scores {total} of {maximum}; "
        'name another cell in the source metadata: {"course": {"partial_blank": "<grade_id>"}}')


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_gate4_nothing_secret_in_release_or_feedback(assignment, graded):
    secrets = release_audit.secret_lines(graded.source)
    assert secrets["solution"] and secrets["hidden tests"], "found no solution or hidden-test lines to look for"
    places = {graded.committed_release / graded.notebook_name: secrets,
              graded.fresh_release / graded.notebook_name: secrets}
    for student in graded.students:
        files = graded.feedback_files(student)
        assert files, f"nbgrader wrote no feedback for {student}"
        # Feedback shows a student's own code: only the blank submission has no solution code.
        visible_secrets = secrets if student == "blank" else {
            "hidden tests": secrets["hidden tests"] - secrets["solution"]}
        places.update({path: visible_secrets for path in files})
    leaked = {str(path): found for path, kinds in places.items()
              if (found := release_audit.leaks(release_audit.visible_text(path), kinds))}
    assert not leaked, f"secret text reached students: {leaked}"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_gate5_committed_release_equals_fresh_generation(assignment, graded):
    differences = release_audit.release_differences(graded.committed_release, graded.fresh_release)
    assert not differences, "assignments/ is stale; run `course release --all`:\n" + "\n".join(differences)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_tests_never_exercise_reftorch(assignment):
    notebook = json.loads(nbgrader_course.source_notebook(assignment, ROOT).read_text())
    importing = [cell["metadata"].get("nbgrader", {}).get("grade_id", cell.get("id"))
                 for cell in notebook["cells"] if cell["cell_type"] == "code" and "reftorch" in _source(cell)]
    assert not importing, f"cells of {assignment} that use reftorch: {importing}"


def test_grading_tools_cell_is_the_same_in_every_assignment():
    # One import of autograder/tools.py (the module every notebook and the grader use), the same cell everywhere.
    tools = {}
    for assignment in ASSIGNMENTS:
        notebook = json.loads(nbgrader_course.source_notebook(assignment, ROOT).read_text())
        cells = _cells_by_id(notebook)
        assert "grading_tools" in cells, f"{assignment} has no grading_tools cell"
        assert cells["grading_tools"]["metadata"]["nbgrader"]["locked"], f"{assignment}: grading_tools is not locked"
        tools[assignment] = _source(cells["grading_tools"])
    different = [a for a in ASSIGNMENTS if tools[a] != tools[ASSIGNMENTS[0]]]
    assert not different, f"grading_tools differs from {ASSIGNMENTS[0]}'s in {different}"
