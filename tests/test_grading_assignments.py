"""Every released assignment, graded in the sandbox: the instructor's answers earn full marks
(also with torch's global settings changed), the blank release earns nothing, and `course
validate` gives those notebooks the grader's verdict, message for message."""
from __future__ import annotations

import pytest

from attacks import inject, same_judgement

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("grading_assignments")]


def _assignments():
    from course.nbgrader_course import assignment_ids
    return assignment_ids()


@pytest.mark.parametrize("assignment", _assignments())
def test_honest_full_marks_blank_none(tmp_path, assignment):
    from coursebase.model import Course
    from autograder.grade import Grader

    root = inject.make_course(tmp_path / "course", assignment)
    honest = inject.honest(root, assignment)
    inject.submit(root, assignment, "honest", honest)
    inject.submit(root, assignment, "blank", inject.released(root, assignment))
    source, place = inject.attack_source("honest_torch_settings")
    inject.submit(root, assignment, "settings", inject.insert(honest, source, place))
    rows = {row.student: row for row in Grader(Course.load(root), assignment, workers=2).run()}
    maximum = sum(points for _, points in inject.test_points(root, assignment))
    assert maximum > 0
    for student in ("honest", "settings"):
        failed = [(t.grade_id, t.message) for t in rows[student].tests if not t.passed]
        assert rows[student].score == maximum, failed
    assert rows["blank"].score == 0
    assert not same_judgement.differences(rows, root, assignment, workers=1)
