"""Each student's own hidden cases (issue 31): drawn in the reference run from a seed of
their own (an HMAC of the assignment and the student id under a course secret kept on the
host), with torch as the oracle there; the same again on a re-grade; the feedback's reveal
policy per test (never / after the due date) from the course's configuration."""
from __future__ import annotations

import json
import stat
from datetime import datetime, timedelta, timezone

import pytest

from attacks import inject, same_judgement

ASSIGNMENT = "04_autograd_advanced"
STUDENTS = ("ada", "bob", "cyd")


def _hidden_arguments(root, student: str) -> dict[int, list]:
    """cell -> the hidden arguments drawn for ``student`` (from the kept reference run)."""
    saved = json.loads((root / "var" / "autograded" / f".reference-{ASSIGNMENT}.json").read_text())
    found: dict[int, list] = {}
    for message in saved["messages"]:
        if message.get("t") == "call" and message.get("seed") == student:
            found.setdefault(message["cell"], []).append(message["args"])
    return found


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    from coursebase.model import Course
    from autograder.grade import Grader

    root = inject.make_course(tmp_path_factory.mktemp("own_cases") / "course", ASSIGNMENT)
    honest = inject.honest(root, ASSIGNMENT)
    for student in STUDENTS:
        inject.submit(root, ASSIGNMENT, student, honest)
    first = {row.student: row for row in Grader(Course.load(root), ASSIGNMENT, workers=2).run()}
    drawn = {student: _hidden_arguments(root, student) for student in STUDENTS}
    again = {row.student: row for row in Grader(Course.load(root), ASSIGNMENT, workers=2, force=True).run()}
    return {"root": root, "first": first, "again": again, "drawn": drawn}


@pytest.mark.slow
def test_each_student_meets_hidden_cases_of_their_own(course):
    drawn = course["drawn"]
    assert all(drawn[student] for student in STUDENTS), {s: len(d) for s, d in drawn.items()}
    cells = set.intersection(*(set(drawn[student]) for student in STUDENTS))
    assert cells
    for cell in cells:
        arguments = [json.dumps(drawn[student][cell], sort_keys=True) for student in STUDENTS]
        assert len(set(arguments)) == len(STUDENTS), f"cell {cell}: students share hidden cases"
    assert all(row.score == row.max_score for row in course["first"].values()), \
        [(row.student, [(t.grade_id, t.message) for t in row.tests if not t.passed]) for row in course["first"].values()]


@pytest.mark.slow
def test_a_regrade_draws_the_same_cases_and_gives_the_same_scores(course):
    root = course["root"]
    assert {s: _hidden_arguments(root, s) for s in STUDENTS} == course["drawn"]
    assert {s: r.score for s, r in course["again"].items()} == {s: r.score for s, r in course["first"].items()}
    secret = root / "var" / "autograded" / ".hidden-cases-secret"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600


@pytest.mark.slow
def test_validate_still_gives_the_graders_verdict(course):
    assert same_judgement.differences(course["first"], course["root"], ASSIGNMENT) == []


def test_seeds_are_the_students_own_and_stable():
    from autograder.student_seeds import student_seed
    secret = bytes(range(32))
    seeds = {student_seed(secret, ASSIGNMENT, student) for student in STUDENTS}
    assert len(seeds) == len(STUDENTS)
    assert student_seed(secret, ASSIGNMENT, "ada") == student_seed(secret, ASSIGNMENT, "ada")
    assert student_seed(secret, ASSIGNMENT, "ada") != student_seed(bytes(32), ASSIGNMENT, "ada")
    assert student_seed(secret, ASSIGNMENT, "ada") != student_seed(secret, "03_autograd", "ada")


@pytest.mark.parametrize("policy, due, shown", [
    ({"*": "after_due_date"}, -1, {"t1", "t2"}),
    ({"*": "after_due_date"}, +1, set()),                # before the due date: never
    ({"t1": "after_due_date"}, -1, {"t1"}),
    ({"*": "after_due_date", "t2": "never"}, -1, {"t1"}),
    ({"*": "after_due_date"}, None, set()),              # no due date: never
    ({}, -1, set()),                                     # the default: never
])
def test_the_reveal_policy_comes_from_the_course_configuration(tmp_path, policy, due, shown):
    from traitlets.config import Config

    from autograder.student_seeds import revealed_tests
    from coursebase.model import Course

    config = Config()
    config.CourseGrading.reveal_hidden = {ASSIGNMENT: policy}
    if due is not None:
        when = datetime.now(timezone.utc) + timedelta(days=due)
        config.CourseDeadlines.due = {ASSIGNMENT: when.strftime("%Y-%m-%d %H:%M") + " UTC"}
    course = Course(tmp_path, config)
    assert revealed_tests(course, ASSIGNMENT, ["t1", "t2"]) == frozenset(shown)
    config.CourseGrading.per_student_hidden = False   # shared hidden cases are never shown
    assert revealed_tests(course, ASSIGNMENT, ["t1", "t2"]) == frozenset()


def test_a_revealed_hidden_failure_names_the_case_and_an_unrevealed_one_does_not():
    from autograder.judge import HIDDEN_FAILED, RunView, judge_cell
    from autograder.observe import Converter

    convert = Converter()
    reference = RunView(ended={5: (True, "")}, calls={5: [
        {"n": 0, "what": "f(1)", "how": {}, "expected": convert(2), "ref_error": ""},
        {"n": 1, "what": "f(7)", "how": {}, "expected": convert(14), "ref_error": "", "hidden": True}]})
    student = RunView(started={2}, ended={2: (True, "")}, outs={2: {0: {"n": 0, "value": convert(2)}}},
                      hidden_outs={2: {1: {"n": 1, "value": convert(13)}}})
    mismatch = {"mismatch": lambda got, expected, **_: None if got == expected else f"expected {expected}, got {got}"}
    assert judge_cell(2, student, 5, reference, mismatch, "ok").message == HIDDEN_FAILED
    shown = judge_cell(2, student, 5, reference, mismatch, "ok", reveal=True).message
    assert shown.endswith("f(7): expected 14, got 13") and "due date has passed" in shown, shown
