"""CI gates for the graded assignments: the tests must test the student.

Per assignment, in a temporary course (a copy of solutions/ and course/nbgrader_config.py):
nbgrader generates the release, then the course's own grader (`course grade`'s, in its
sandboxes: what grades the students) grades four submissions in one batch -- the blank
release, the release with every answer written (the solution's code), the same with one
answer left blank, and the answers with torch's global settings changed -- and writes their
feedback. `course validate` then judges the same notebooks.

  gate 1  the solution runs clean: no cell of its autograded notebook raised (the source's
          answers and every test, hidden ones included: the source notebook, as gate 3 runs it)
  gate 2  the blank release scores 0, every test cell fails on it
  gate 3  the solution scores full marks
  gate 4  no solution code or hidden-test text in the release or in feedback
  gate 5  the committed release equals what nbgrader generates now
  partial the half-done submission scores strictly between 0 and the maximum
  habits  the answers with torch's settings changed keep full marks, and Validate gives every
          one of these notebooks the grader's verdict, message for message

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

import nbformat
import pytest
from sqlalchemy.exc import SAWarning

from course import nbgrader_course, release_audit
from course.lessons import assignment_of, lesson_paths
from coursebase.markers import course_markers
from coursebase.model import MIN_POINTS
from coursebase.paths import CONFIG_RELATIVE_PATH, REPO

# nbgrader's gradebook queries warn about its own session handling; not ours to fix.
pytestmark = [pytest.mark.filterwarnings("ignore", category=SAWarning), pytest.mark.database,
              pytest.mark.sandbox, pytest.mark.slow]

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
        self.students = ("blank", "full", "settings") + (("partial",) if self.partial_blank else ())
        done = course / "graded.json"
        if not done.exists():
            done.write_text(json.dumps({"assignment": assignment, **self._grade()}))
        saved = json.loads(done.read_text())
        # per student: the grader's status and message, and per test (grade_id, passed, message)
        self.rows = saved["rows"]
        # what Validate said differently from grading (student, grading's, Validate's)
        self.judgement = saved["judgement"]
        self.scores = nbgrader_course.scores(assignment, course)
        self.max_points = nbgrader_course.max_points(assignment, course)

    def _grade(self) -> dict:
        from attacks import inject, same_judgement
        from autograder.feedback import write_feedback
        from autograder.grade import Grader
        from coursebase.model import Course

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
        # an honest habit: default dtype, print options, seed and threads changed up front
        source, place = inject.attack_source("honest_torch_settings")
        submissions["settings"] = inject.insert(nbformat.from_dict(submissions["full"]), source, place)
        for student, notebook in submissions.items():
            folder = _mkdir(course / "var" / "submitted" / student / assignment)
            (folder / self.notebook_name).write_text(json.dumps(notebook))
        model = Course.load(course)
        rows = {row.student: row for row in Grader(model, assignment, workers=2).run()}
        write_feedback(model, assignment, release=False)
        differences = same_judgement.differences(rows, course, assignment, workers=1)
        return {"rows": {student: {"status": row.status, "message": row.message,
                                   "tests": [[t.grade_id, t.passed, t.message] for t in row.tests]}
                         for student, row in rows.items()},
                "judgement": [[str(part) for part in difference] for difference in differences]}

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
    """The full submission (the source's answers, graded with every test, hidden ones
    included) ran clean: the grader's status is "ok" and its message names no cell that
    raised or stopped, and every test passed."""
    full = graded.rows["full"]
    assert full["tests"], "the grader judged no test"
    assert (full["status"], full["message"]) == ("ok", "ok"), f"the solution of {assignment}: {full['message']}"
    failed = [(grade_id, message) for grade_id, passed, message in full["tests"] if not passed]
    assert not failed, f"tests of {assignment} that fail on its solution: {failed}"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_gate2_blank_release_scores_zero_and_every_test_cell_fails(assignment, graded):
    scores = graded.scores["blank"]
    assert set(scores) == set(graded.max_points) and graded.max_points, "no graded cells were recorded"
    scored = {cell: points for cell, points in scores.items() if points != 0}
    assert not scored, f"the blank release of {assignment} earns points in {scored}"
    tests = {grade_id: (passed, message) for grade_id, passed, message in graded.rows["blank"]["tests"]}
    assert set(tests) == set(graded.max_points), (sorted(tests), sorted(graded.max_points))
    unexplained = [grade_id for grade_id, (passed, message) in tests.items() if passed or not message.strip()]
    assert not unexplained, f"test cells of {assignment} that do not fail, saying why, on the blank release: {unexplained}"


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
def test_torch_settings_keep_full_marks_and_validate_gives_the_graders_verdict(assignment, graded):
    assert graded.scores["settings"] == graded.scores["full"], (graded.scores["settings"], graded.scores["full"])
    assert not graded.judgement, f"Validate and grading differ on {assignment} (student, grading, Validate): {graded.judgement}"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_gate4_nothing_secret_in_release_or_feedback(assignment, graded):
    secrets = release_audit.secret_lines(graded.source)
    assert secrets["solution"] and secrets["hidden tests"], "found no solution or hidden-test lines to look for"
    places = {graded.committed_release / graded.notebook_name: secrets,
              graded.fresh_release / graded.notebook_name: secrets}
    for student in graded.students:
        files = graded.feedback_files(student)
        assert files, f"the grader wrote no feedback for {student}"
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
